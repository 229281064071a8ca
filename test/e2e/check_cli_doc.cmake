# cmake -DBIN=program -DPAGE=docs/cli/<program>.md -P check_cli_doc.cmake:
# fails when the committed reference page differs from `BIN --help-markdown`.
execute_process(COMMAND ${BIN} --help-markdown OUTPUT_VARIABLE _generated RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "${BIN} --help-markdown failed (${_rc})")
endif()
file(READ ${PAGE} _committed)
if(NOT _generated STREQUAL _committed)
  message(FATAL_ERROR "${PAGE} differs from `${BIN} --help-markdown`: regenerate it with "
                      "`${BIN} --help-markdown > ${PAGE}`")
endif()
