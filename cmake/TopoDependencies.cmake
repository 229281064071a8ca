# The seven dependencies of the design card, all found with pkg-config. A
# missing one stops configuration naming the Debian package that provides it.
find_package(PkgConfig)
if(NOT PKG_CONFIG_FOUND)
  message(FATAL_ERROR "pkg-config not found: install the Debian package 'pkg-config'")
endif()

function(topo_require var module debian_package)
  pkg_check_modules(${var} QUIET IMPORTED_TARGET ${module})
  if(NOT ${var}_FOUND)
    message(FATAL_ERROR
      "${module} not found: install the Debian package '${debian_package}' "
      "(scripts/quickstart.sh installs every missing one)")
  endif()
  message(STATUS "found ${module} ${${var}_VERSION}")
endfunction()

topo_require(CURL libcurl libcurl4-openssl-dev)
topo_require(JANSSON jansson libjansson-dev)
topo_require(YAML yaml-0.1 libyaml-dev)
topo_require(OPENSSL openssl libssl-dev)
topo_require(MHD libmicrohttpd libmicrohttpd-dev)
topo_require(SQLITE sqlite3 libsqlite3-dev)
topo_require(CMOCKA cmocka libcmocka-dev)
