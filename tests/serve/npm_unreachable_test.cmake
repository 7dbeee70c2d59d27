# The build's `npm ci` step (web/npm_ci.cmake) with the registry out of
# reach and an empty npm cache must fail, with the one message that says
# what is missing and how to get it. Run by CTest:
#   cmake -DNPM=npm -DSRC=web -DWORK=dir -P npm_unreachable_test.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env npm_config_registry=http://127.0.0.1:9/
          npm_config_cache=${WORK}/empty-cache npm_config_fetch_retries=0
          npm_config_offline=false
          ${CMAKE_COMMAND} -DNPM=${NPM} -DSRC=${SRC} -DDEST=${WORK}/out
          -P ${SRC}/npm_ci.cmake
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out
  TIMEOUT 120)
if(rc EQUAL 0)
  message(FATAL_ERROR "npm ci against an unreachable registry succeeded:\n${out}")
endif()
string(REGEX REPLACE "[ \n]+" " " flat "${out}")
foreach(expected "cannot install the web dashboard's packages"
                 "web/package-lock.json" "make the registry reachable")
  string(FIND "${flat}" "${expected}" at)
  if(at LESS 0)
    message(FATAL_ERROR "the failure does not say '${expected}':\n${out}")
  endif()
endforeach()
message(STATUS "npm unreachable: the build stops with the expected message")
