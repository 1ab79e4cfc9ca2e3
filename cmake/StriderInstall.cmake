# `cmake --install build --prefix P` installs the C and C++ API headers,
# libstrider, the tools, and a CMake package, so that an outside project
# does find_package(Strider CONFIG REQUIRED) and links Strider::strider.
include(CMakePackageConfigHelpers)

set(STRIDER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Strider)

install(TARGETS strider EXPORT StriderTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES
  ${PROJECT_SOURCE_DIR}/include/strider/strider.h
  ${PROJECT_SOURCE_DIR}/include/strider/strider.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/strider)
install(TARGETS strider-compile strider-run strider-opt strider-translate
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT StriderTargets
  NAMESPACE Strider::
  DESTINATION ${STRIDER_CMAKE_DIR})

configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/StriderConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/StriderConfig.cmake
  INSTALL_DESTINATION ${STRIDER_CMAKE_DIR})
# The C API is versioned by minor release until 1.0.
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/StriderConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${CMAKE_CURRENT_BINARY_DIR}/StriderConfig.cmake
  ${CMAKE_CURRENT_BINARY_DIR}/StriderConfigVersion.cmake
  DESTINATION ${STRIDER_CMAKE_DIR})
