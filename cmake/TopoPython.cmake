# The Python 3 interpreter of the test drivers and checks (Python3_EXECUTABLE,
# Python3_Interpreter_FOUND), found once for the whole tree.
#
# A version manager's shim first on PATH (pyenv's python3 is a bash script
# that runs `pyenv exec`) costs about 0.6 s of CPU per start, against 0.1 s
# for the interpreter itself: with some 200 drivers started per test run and
# a dozen more at configure time, that was about a minute of the suite on 2
# cores. So the interpreter the shim chooses now (its sys.executable) is the
# one configured: reconfigure (or pass -DPython3_EXECUTABLE=...) after
# switching versions.
if(NOT Python3_EXECUTABLE)
  find_program(TOPO_PYTHON3_ON_PATH NAMES python3)
  mark_as_advanced(TOPO_PYTHON3_ON_PATH)
  if(TOPO_PYTHON3_ON_PATH)
    execute_process(COMMAND ${TOPO_PYTHON3_ON_PATH} -c "import sys; print(sys.executable)"
                    OUTPUT_VARIABLE _topo_python OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE _topo_python_rc ERROR_QUIET)
    if(_topo_python_rc EQUAL 0 AND EXISTS "${_topo_python}")
      set(Python3_EXECUTABLE "${_topo_python}" CACHE FILEPATH "Python 3 of the test drivers")
    endif()
  endif()
endif()
find_package(Python3 COMPONENTS Interpreter)
