# The dashboard of `gpudoctor serve` (web/): uPlot from npm, installed at
# build time from web/package-lock.json with `npm ci`, and the page's own
# HTML/JS/CSS, embedded in the binary as generated C++ (gzip and identity
# bytes, content hashes for ETags and cache-busting URLs), so serve stays one
# file and the page works offline. Included by src/serve/CMakeLists.txt; sets
# GD_WEB_ASSETS_CC to the generated source.
set(GD_WEB_DIR ${CMAKE_SOURCE_DIR}/web)
set(GD_WEB_BUILD ${CMAKE_BINARY_DIR}/web)

find_program(GD_NPM npm)
if(NOT GD_NPM)
  message(FATAL_ERROR
    "npm not found: the serve dashboard's charting library is installed from "
    "npm at build time (web/package-lock.json). Install Node.js and npm "
    "(scripts/install-deps.sh does), or name it with -DGD_NPM=/path/to/npm.")
endif()

set(GD_UPLOT_JS ${GD_WEB_BUILD}/node_modules/uplot/dist/uPlot.iife.min.js)
set(GD_UPLOT_CSS ${GD_WEB_BUILD}/node_modules/uplot/dist/uPlot.min.css)
add_custom_command(
  OUTPUT ${GD_UPLOT_JS} ${GD_UPLOT_CSS}
  COMMAND ${CMAKE_COMMAND} -DNPM=${GD_NPM} -DSRC=${GD_WEB_DIR}
          -DDEST=${GD_WEB_BUILD} -P ${GD_WEB_DIR}/npm_ci.cmake
  DEPENDS ${GD_WEB_DIR}/package.json ${GD_WEB_DIR}/package-lock.json
          ${GD_WEB_DIR}/npm_ci.cmake
  COMMENT "npm ci: the dashboard's pinned packages (web/package-lock.json)"
  VERBATIM)

# name|source (the content type follows the name's extension);
# index.html names these by {{asset:NAME}}.
set(GD_WEB_FILES
  "uPlot.min.js|${GD_UPLOT_JS}"
  "uPlot.min.css|${GD_UPLOT_CSS}"
  "app.css|${GD_WEB_DIR}/src/app.css"
  "app.js|${GD_WEB_DIR}/src/app.js"
  "favicon.svg|${GD_WEB_DIR}/src/favicon.svg")
set(GD_WEB_DEPS ${GD_UPLOT_JS} ${GD_UPLOT_CSS} ${GD_WEB_DIR}/src/index.html)
foreach(entry ${GD_WEB_FILES})
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 1 src)
  list(APPEND GD_WEB_DEPS ${src})
endforeach()

set(GD_WEB_ASSETS_CC ${GD_WEB_BUILD}/web_assets_data.cc)
string(REPLACE ";" "@" GD_WEB_FILES_ARG "${GD_WEB_FILES}")
add_custom_command(
  OUTPUT ${GD_WEB_ASSETS_CC}
  COMMAND ${CMAKE_COMMAND} "-DFILES=${GD_WEB_FILES_ARG}"
          -DINDEX=${GD_WEB_DIR}/src/index.html -DOUT=${GD_WEB_ASSETS_CC}
          -DWORK=${GD_WEB_BUILD}/gz -P ${GD_WEB_DIR}/embed_assets.cmake
  DEPENDS ${GD_WEB_DEPS} ${GD_WEB_DIR}/embed_assets.cmake
  COMMENT "Embedding the dashboard (web/src + uPlot) in serve"
  VERBATIM)
