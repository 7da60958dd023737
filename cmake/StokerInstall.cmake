# The C++ library for `cmake --install` and find_package(stoker): one shared libstoker made of
# every layer's objects (the static layers stay internal: their own dependencies — libjpeg,
# libpng, zlib, FFmpeg, liblmdb, the CUDA runtime — are linked into it, so a user's project
# needs none of their CMake packages), the public headers (include/stoker/) with the layer
# headers they include, and a package config exporting stoker::stoker.
#   cmake --install build --prefix /opt/stoker --component cpp
#   find_package(stoker REQUIRED)  ...  target_link_libraries(app PRIVATE stoker::stoker)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

add_library(stoker SHARED ${PROJECT_SOURCE_DIR}/cmake/stoker_library.cpp)
target_link_libraries(stoker PRIVATE
  "$<LINK_LIBRARY:WHOLE_ARCHIVE,stoker_pipeline,stoker_ops,stoker_readers,stoker_codecs,stoker_kernels,stoker_core>")
target_include_directories(stoker INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
  $<BUILD_INTERFACE:${CMAKE_BINARY_DIR}/layers/core>
  $<BUILD_INTERFACE:${CMAKE_BINARY_DIR}/layers/ops>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(stoker INTERFACE cxx_std_20)
# Installed, it finds the libraries it links from non-system places (an FFmpeg built into a
# prefix) through its RPATH.
set_target_properties(stoker PROPERTIES VERSION ${PROJECT_VERSION} SOVERSION 0
                                        EXPORT_NAME stoker INSTALL_RPATH_USE_LINK_PATH TRUE)
stoker_target_options(stoker)

install(TARGETS stoker EXPORT stokerTargets COMPONENT cpp
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# What the public headers include (include/stoker/*.hpp -> core, ops/schema.hpp).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/stoker/ COMPONENT cpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/stoker)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/core/ COMPONENT cpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/stoker/core
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*_test*" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/src/ops/schema.hpp COMPONENT cpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/stoker/ops)
install(EXPORT stokerTargets COMPONENT cpp NAMESPACE stoker::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/stoker)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/stokerConfig.cmake.in
  ${CMAKE_BINARY_DIR}/stokerConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/stoker)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/stokerConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/stokerConfig.cmake ${CMAKE_BINARY_DIR}/stokerConfigVersion.cmake
        COMPONENT cpp DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/stoker)

# The test a user's project is: install into a scratch prefix, build examples/cpp/quickstart.cpp
# against it with find_package, run it on the shared photos (skipped without them).
if(STOKER_TESTS)
  add_test(NAME install.find_package
           COMMAND ${CMAKE_COMMAND} -DBUILD=${CMAKE_BINARY_DIR} -DSOURCE=${PROJECT_SOURCE_DIR}
                   -DWORK=${CMAKE_BINARY_DIR}/install_test -DDATA=${STOKER_SHARED_DATA}
                   -DGENERATOR=${CMAKE_GENERATOR}
                   -P ${PROJECT_SOURCE_DIR}/cmake/install_test.cmake)
  set_tests_properties(install.find_package PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77)
endif()
