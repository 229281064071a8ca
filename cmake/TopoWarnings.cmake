# All compiler strictness in one place (docs/style.md "Build").
include(CheckCCompilerFlag)
option(TOPO_WERROR "Treat warnings as errors" ON)

set(_topo_candidate_flags
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wmissing-prototypes
  -Wstrict-prototypes -Wwrite-strings -Wundef -Wformat=2
  -Werror=implicit-function-declaration
  # Error texts live in fixed-size buffers (topo_err) by design: cutting a
  # long message short is intended, so snprintf truncation is not a defect.
  -Wno-format-truncation)
set(TOPO_WARNING_FLAGS "")
# All of them in one test compile first (each check is a try_compile, about
# a second of a fresh tree's configure); one by one only when the compiler
# refuses some (clang: -Wno-format-truncation).
check_c_compiler_flag("${_topo_candidate_flags}" HAVE_TOPO_ALL_WARNING_FLAGS)
if(HAVE_TOPO_ALL_WARNING_FLAGS)
  set(TOPO_WARNING_FLAGS ${_topo_candidate_flags})
else()
  foreach(flag ${_topo_candidate_flags})
    string(MAKE_C_IDENTIFIER "HAVE${flag}" _var)
    check_c_compiler_flag(${flag} ${_var})
    if(${_var})
      list(APPEND TOPO_WARNING_FLAGS ${flag})
    endif()
  endforeach()
endif()
if(TOPO_WERROR)
  list(APPEND TOPO_WARNING_FLAGS -Werror)
endif()

function(topo_target_warnings target)
  target_compile_options(${target} PRIVATE ${TOPO_WARNING_FLAGS})
endfunction()
