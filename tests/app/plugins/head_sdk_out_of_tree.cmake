# head_sdk_out_of_tree: what a head author outside this tree does, end to end. Installs the
# HeadSDK component of BUILD_DIR to a temporary prefix, copies examples/head_sdk to a temporary
# folder outside the source tree, configures and builds it against the installed SDK alone, then
# has clausewright-cli (CLI) list the head and review EXAMPLE's contract with it.
#   -DBUILD_DIR= -DSOURCE_DIR= -DCLI= -DGENERATOR= -DCXX_COMPILER= -P head_sdk_out_of_tree.cmake
foreach(var BUILD_DIR SOURCE_DIR CLI GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "head_sdk_out_of_tree.cmake: ${var} is not set")
  endif()
endforeach()

# A failed run leaves nothing behind in /tmp: the message carries what went wrong.
function(fail message)
  file(REMOVE_RECURSE ${work})
  message(FATAL_ERROR "${message}")
endfunction()

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(run_output "${out}${err}" PARENT_SCOPE)
  if(NOT rc EQUAL 0)
    fail("${what} failed (${rc}):\n${out}${err}")
  endif()
endfunction()

execute_process(COMMAND mktemp -d /tmp/cw-head-sdk-XXXXXX OUTPUT_VARIABLE work
                OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
cmake_path(IS_PREFIX SOURCE_DIR "${work}" inside)
if(inside)
  fail("${work} is inside the source tree ${SOURCE_DIR}")
endif()

run("installing the HeadSDK component" ${CMAKE_COMMAND} --install ${BUILD_DIR} --component HeadSDK
    --prefix ${work}/sdk)
file(COPY ${SOURCE_DIR}/examples/head_sdk/ DESTINATION ${work}/src)
run("configuring the example head" ${CMAKE_COMMAND} -S ${work}/src -B ${work}/build
    -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${work}/sdk)
# Found in the installed prefix, not in this tree.
file(READ ${work}/build/CMakeCache.txt cache)
if(NOT cache MATCHES "Clausewright_DIR:PATH=${work}/sdk/lib/cmake/Clausewright")
  fail("the example did not find the SDK in ${work}/sdk")
endif()
run("building the example head" ${CMAKE_COMMAND} --build ${work}/build)

run("listing heads" ${CLI} heads --plugins ${work}/build)
if(NOT run_output MATCHES "\"id\": \"keyword_head\"")
  fail("clausewright-cli heads does not list keyword_head:\n${run_output}")
endif()
# --no-save: the test must not write into the user's own history.
run("reviewing with the example head" ${CLI} review ${work}/src/contract.txt --text-only
    --plugins ${work}/build --format json --no-save)
if(NOT run_output MATCHES "\"id\": *\"keyword_head\"")
  fail("the review did not run keyword_head:\n${run_output}")
endif()
if(NOT run_output MATCHES "\"category\": *\"Confidentiality\"" OR
   NOT run_output MATCHES "the clause says [\\]\"confidential information")
  fail("the review has no Confidentiality finding from keyword_head:\n${run_output}")
endif()
file(REMOVE_RECURSE ${work})
message(STATUS "keyword_head built outside the tree against the installed SDK and loaded")
