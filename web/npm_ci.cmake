# `npm ci` of web/package.json + package-lock.json into DEST (the build
# directory): exact versions and integrity hashes from the lock file, no
# install scripts. Cached packages are used first (--prefer-offline), so a
# filled npm cache builds without the registry. Fails the build with one
# clear message when npm cannot get the packages.
file(MAKE_DIRECTORY ${DEST})
configure_file(${SRC}/package.json ${DEST}/package.json COPYONLY)
configure_file(${SRC}/package-lock.json ${DEST}/package-lock.json COPYONLY)
execute_process(
  COMMAND ${NPM} ci --ignore-scripts --no-audit --no-fund --prefer-offline
          --loglevel=error
  WORKING_DIRECTORY ${DEST}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out
  TIMEOUT 600)
if(NOT rc EQUAL 0)
  string(REGEX REPLACE "\n+$" "" out "${out}")
  message(FATAL_ERROR
    "gpudoctor: cannot install the web dashboard's packages: `npm ci` in "
    "${DEST} failed (${rc}). The charting library (uPlot, pinned in "
    "web/package-lock.json) comes from the npm registry at build time and is "
    "not kept in the repository: make the registry reachable (or its npm "
    "cache filled, e.g. by one online build) and build again.\n"
    "npm said:\n${out}")
endif()
# npm ci leaves the files' old mtimes: touch so the build sees them as new.
file(TOUCH ${DEST}/node_modules/uplot/dist/uPlot.iife.min.js
     ${DEST}/node_modules/uplot/dist/uPlot.min.css)
