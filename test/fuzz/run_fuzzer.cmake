# cmake -DCORPUS=dir -DFIXTURES=dir[|dir...] -DFUZZER=exe -DSECONDS=n -DARTIFACTS=dir/ -P run_fuzzer.cmake
# Seeds a fresh corpus with FIXTURES/<case>/request.json (and the files of
# flat seed directories) from every directory listed, and fuzzes for
# SECONDS; any crash, leak, sanitizer report or slow input fails the test and
# leaves the input under ARTIFACTS (printed by libFuzzer).
if(NOT SECONDS)
  set(SECONDS 10)
endif()
file(REMOVE_RECURSE ${CORPUS})
file(MAKE_DIRECTORY ${CORPUS} ${ARTIFACTS})
string(REPLACE "|" ";" _dirs "${FIXTURES}")
set(_cases)
foreach(_d ${_dirs})
  file(GLOB _more ${_d}/*)
  list(APPEND _cases ${_more})
endforeach()
set(_seeds 0)
foreach(_dir ${_cases})
  get_filename_component(_name ${_dir} NAME)
  if(EXISTS ${_dir}/request.json)
    configure_file(${_dir}/request.json ${CORPUS}/${_name}.json COPYONLY)
    math(EXPR _seeds "${_seeds} + 1")
  elseif(NOT IS_DIRECTORY ${_dir})
    # a flat directory of inputs (fixtures/webhook/*.yaml)
    configure_file(${_dir} ${CORPUS}/${_name} COPYONLY)
    math(EXPR _seeds "${_seeds} + 1")
  endif()
endforeach()
if(_seeds EQUAL 0)
  message(FATAL_ERROR "no seed under ${FIXTURES}: nothing to seed the fuzzer with")
endif()
# -max_len: the seeds are 1-3 KB; 16 KB leaves room to grow them without
# spending the run on huge inputs. -timeout: one input taking 10 s is a hang.
execute_process(COMMAND ${FUZZER} -max_total_time=${SECONDS} -max_len=16384 -timeout=10
                        -artifact_prefix=${ARTIFACTS} -print_final_stats=1 ${CORPUS}
                RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "fuzzer failed (${_rc}); the input is under ${ARTIFACTS}")
endif()
