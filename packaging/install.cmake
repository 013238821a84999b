# Install layout and the Debian package (included by the top CMakeLists.txt).
#
# The package is meant to be configured with -DCMAKE_INSTALL_PREFIX=/usr:
# GNUInstallDirs then maps the configuration to /etc (not /usr/etc), and the
# systemd unit goes where Debian 12 keeps packaged units, /lib/systemd/system.
# The staging tree is built with DESTDIR (CPACK_SET_DESTDIR), because /etc
# and /lib are absolute destinations that a relocated prefix would not move.
#
#   cmake -S . -B build-pkg -DCMAKE_INSTALL_PREFIX=/usr
#   cmake --build build-pkg --target perfship
#   (cd build-pkg && cpack -G DEB)
#
# Folders that other parts of the project fill (dashboards/, docs/, config/)
# are installed with whatever they hold at configure time.

set(PERFSHIP_PKG_DIR ${CMAKE_CURRENT_LIST_DIR})

if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(_unit_default "/lib/systemd/system")
else()
  set(_unit_default "${CMAKE_INSTALL_PREFIX}/lib/systemd/system")
endif()
set(PERFSHIP_SYSTEMD_UNIT_DIR "${_unit_default}" CACHE PATH
    "Where the systemd unit is installed")

set(PERFSHIP_CONF_DIR "${CMAKE_INSTALL_FULL_SYSCONFDIR}/perfship")
set(PERFSHIP_DATA_DIR "${CMAKE_INSTALL_FULL_DATADIR}/perfship")
set(PERFSHIP_DOC_DIR "${CMAKE_INSTALL_FULL_DATADIR}/doc/perfship")
set(PERFSHIP_MAN_DIR "${CMAKE_INSTALL_FULL_MANDIR}")

install(TARGETS perfship RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The configuration: a conffile in the package (packaging/debian/conffiles),
# so dpkg keeps an edited copy on upgrade and asks before replacing it.
install(FILES ${CMAKE_SOURCE_DIR}/config/perfship.cfg
        DESTINATION ${PERFSHIP_CONF_DIR}
        PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# The unit names the installed binary and configuration; a prefix other than
# /usr (a developer's /usr/local install) gets a unit that points there.
file(READ ${PERFSHIP_PKG_DIR}/systemd/perfship.service _unit)
string(REPLACE "/usr/bin/perfship" "${CMAKE_INSTALL_FULL_BINDIR}/perfship"
       _unit "${_unit}")
string(REPLACE "/etc/perfship/" "${PERFSHIP_CONF_DIR}/" _unit "${_unit}")
file(WRITE ${CMAKE_BINARY_DIR}/packaging/perfship.service "${_unit}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${PERFSHIP_PKG_DIR}/systemd/perfship.service)
install(FILES ${CMAKE_BINARY_DIR}/packaging/perfship.service
        DESTINATION ${PERFSHIP_SYSTEMD_UNIT_DIR})

# Dashboards and alert definitions, the whole tree as the project ships it.
install(DIRECTORY DESTINATION ${PERFSHIP_DATA_DIR}/dashboards)
if(EXISTS ${CMAKE_SOURCE_DIR}/dashboards)
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/dashboards/
          DESTINATION ${PERFSHIP_DATA_DIR}/dashboards
          USE_SOURCE_PERMISSIONS
          PATTERN "__pycache__" EXCLUDE
          PATTERN "*.pyc" EXCLUDE)
endif()

# Man pages, compressed as Debian policy asks (man reads .gz directly).
install(FILES ${CMAKE_SOURCE_DIR}/man/perfship.1 DESTINATION ${PERFSHIP_MAN_DIR}/man1)
install(FILES ${CMAKE_SOURCE_DIR}/man/perfship.cfg.5 DESTINATION ${PERFSHIP_MAN_DIR}/man5)
find_program(PERFSHIP_GZIP gzip)
if(PERFSHIP_GZIP)
  install(CODE "
    foreach(page man1/perfship.1 man5/perfship.cfg.5)
      set(f \"\$ENV{DESTDIR}${PERFSHIP_MAN_DIR}/\${page}\")
      execute_process(COMMAND \"${PERFSHIP_GZIP}\" -9nf \"\${f}\"
                      RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR \"gzip \${f} failed\")
      endif()
    endforeach()")
endif()

# What Debian policy asks of every package's doc folder: the copyright file
# and the Debian changelog, compressed without a time stamp (gzip -n) so
# the package is reproducible. The changelog names the package's version.
set(PERFSHIP_DEB_VERSION "${PROJECT_VERSION}-1")
configure_file(${PERFSHIP_PKG_DIR}/debian/changelog.in
               ${CMAKE_BINARY_DIR}/packaging/changelog.Debian @ONLY)
install(FILES ${PERFSHIP_PKG_DIR}/debian/copyright DESTINATION ${PERFSHIP_DOC_DIR}
        PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
# lintian's tags the package knowingly carries, each with its reason.
install(FILES ${PERFSHIP_PKG_DIR}/debian/lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME perfship
        PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
if(PERFSHIP_GZIP)
  install(CODE "
    set(f \"\$ENV{DESTDIR}${PERFSHIP_DOC_DIR}/changelog.Debian\")
    file(COPY_FILE \"${CMAKE_BINARY_DIR}/packaging/changelog.Debian\" \"\${f}\")
    execute_process(COMMAND \"${PERFSHIP_GZIP}\" -9nf \"\${f}\" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR \"gzip \${f} failed\")
    endif()")
endif()

file(GLOB PERFSHIP_DOCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${PERFSHIP_DOCS}
        DESTINATION ${PERFSHIP_DOC_DIR})

# ---------------------------------------------------------------- CPack DEB
set(CPACK_PACKAGE_NAME perfship)
set(CPACK_PACKAGE_VENDOR "perfship")
set(CPACK_PACKAGE_CONTACT "perfship maintainers <perfship@localhost>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "ships benchmark and load-generator results into InfluxDB")
# The summary is the control file's first Description line; this is the
# extended text under it (CPack indents it).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
"perfship is a small daemon installed beside a benchmark or load generator.
It watches result directories, streams every stats point into InfluxDB
(1.x, 2.x, 3.x) as line protocol without losing or doubling any, posts run
start and end markers, and ships Chronograf and Grafana dashboards and
Kapacitor and Flux alert definitions.")
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

# Runtime dependencies: the package of every library the project links by
# design (the pkg-config modules of the top CMakeLists.txt, and libc), with
# the minimum version from that package's shlibs entry. Resolved here with
# dpkg-query rather than by CPack's dpkg-shlibdeps pass, which needs
# dpkg-dev and file(1) on the build machine and drops a library that
# --as-needed left out of the binary. Without dpkg, the Debian 12 names are
# listed by hand.
function(perfship_runtime_package soname out)
  set(${out} "" PARENT_SCOPE)
  execute_process(COMMAND dpkg-query -S "*/${soname}"
                  OUTPUT_VARIABLE owners ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    return()
  endif()
  string(REPLACE "\n" ";" owners "${owners}")
  set(name "")
  foreach(line IN LISTS owners)
    if(line MATCHES "^([^:, ]+)(:[a-z0-9]+)?: (.*/${CMAKE_LIBRARY_ARCHITECTURE}/[^/]+)$")
      set(pkg "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
      set(name "${CMAKE_MATCH_1}")
      get_filename_component(file "${CMAKE_MATCH_3}" NAME)
      if(file STREQUAL soname)
        break()
      endif()
      set(name "")
    endif()
  endforeach()
  if(NOT name)
    return()
  endif()
  set(dep "${name}")
  string(REGEX REPLACE "\\.so\\..*$" "" libname "${soname}")
  string(REGEX REPLACE "^.*\\.so\\." "" major "${soname}")
  execute_process(COMMAND dpkg-query --control-show "${pkg}" shlibs
                  OUTPUT_VARIABLE shlibs ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0)
    string(REPLACE "\n" ";" shlibs "${shlibs}")
    foreach(line IN LISTS shlibs)
      if(line MATCHES "^${libname} ${major} (${name}.*)$")
        set(dep "${CMAKE_MATCH_1}")
        break()
      endif()
    endforeach()
  endif()
  set(${out} "${dep}" PARENT_SCOPE)
endfunction()

# libjs-chart.js: Chart.js, which every report page inlines (report.chart_js).
set(_deps "adduser" "libjs-chart.js")
set(_sonames libc.so.6)
foreach(mod LIBUV LIBCURL CJSON LIBCONFIG ZLIB)
  foreach(lib IN LISTS ${mod}_LINK_LIBRARIES)
    if(lib MATCHES "\\.so$" AND CMAKE_OBJDUMP)
      execute_process(COMMAND ${CMAKE_OBJDUMP} -p "${lib}"
                      OUTPUT_VARIABLE dyn ERROR_QUIET)
      if(dyn MATCHES "SONAME +([^ \n]+)")
        list(APPEND _sonames "${CMAKE_MATCH_1}")
      endif()
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES _sonames)
foreach(so IN LISTS _sonames)
  perfship_runtime_package(${so} dep)
  if(NOT dep)
    set(_deps "")
    break()
  endif()
  list(APPEND _deps "${dep}")
endforeach()
if(_deps)
  list(JOIN _deps ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "adduser, libjs-chart.js, libc6, libuv1, libcurl4, libcjson1, libconfig9, zlib1g")
endif()
message(STATUS "perfship package depends: ${CPACK_DEBIAN_PACKAGE_DEPENDS}")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "influxdb, influxdb-client")

set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PERFSHIP_PKG_DIR}/debian/conffiles
    ${PERFSHIP_PKG_DIR}/debian/postinst
    ${PERFSHIP_PKG_DIR}/debian/prerm
    ${PERFSHIP_PKG_DIR}/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_GENERATOR DEB)
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/")
include(CPack)
