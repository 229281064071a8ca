# TOPO_SANITIZE="address;undefined" builds everything with those sanitizers;
# CI runs the unit tests in such a build (scripts/test.sh), and the threaded
# tests (ctest label tsan) in a TOPO_SANITIZE=thread one.
set(TOPO_SANITIZE "" CACHE STRING "Sanitizers to enable, e.g. address;undefined")
if(TOPO_SANITIZE)
  string(REPLACE ";" "," _topo_san "${TOPO_SANITIZE}")
  add_compile_options(-fsanitize=${_topo_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_topo_san})
endif()
