# topo_script_cases(PREFIX LABEL SCRIPT ARGS...): one ctest PREFIX.<case>
# (label LABEL, timeout 120 s) for every case the script lists with --list,
# each running SCRIPT ARGS... --case <case>. The test drivers (cli_tests.py,
# the e2e scripts) all list their cases this way; CMake reconfigures when a
# script changes.
function(topo_script_cases prefix label script)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${script})
  execute_process(COMMAND ${Python3_EXECUTABLE} ${script} --list
                  OUTPUT_VARIABLE _cases OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${script} --list failed")
  endif()
  string(REPLACE "\n" ";" _cases "${_cases}")
  foreach(_case ${_cases})
    add_test(NAME ${prefix}.${_case}
             COMMAND ${Python3_EXECUTABLE} ${script} ${ARGN} --case ${_case})
    set_tests_properties(${prefix}.${_case} PROPERTIES LABELS ${label} TIMEOUT 120)
  endforeach()
endfunction()
