# stoker_add_layer(<layer> SOURCES ... DEPS ...): one static library per layer, stoker_<layer>.
#
# A layer's headers are reachable only as "stoker/<layer>/x.hpp" and only through a link to
# that layer: each layer gets its own include root (a link build/layers/<layer>/stoker/<layer>
# to src/<layer>), made public to its dependents. A lower layer that includes a header of a
# higher one therefore fails to compile, which keeps the layer rule of DESIGN.md honest.
function(stoker_add_layer layer)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  set(root ${CMAKE_BINARY_DIR}/layers/${layer})
  file(MAKE_DIRECTORY ${root}/stoker)
  if(NOT EXISTS ${root}/stoker/${layer})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${layer} ${root}/stoker/${layer} SYMBOLIC)
  endif()
  add_library(stoker_${layer} STATIC ${ARG_SOURCES})
  target_include_directories(stoker_${layer} PUBLIC ${root})
  target_link_libraries(stoker_${layer} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  stoker_target_options(stoker_${layer})
endfunction()

# Warnings and sanitizers for a stoker target (never added to global flags).
function(stoker_target_options target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-missing-field-initializers>)
  if(STOKER_SANITIZE)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${STOKER_SANITIZE} -fno-omit-frame-pointer
      -fno-sanitize-recover=all>)
    target_link_options(${target} PUBLIC -fsanitize=${STOKER_SANITIZE})
  endif()
endfunction()

# stoker_add_test(<name> SOURCES ... DEPS ...): a gtest binary registered with ctest; every
# test gets a timeout so a hang fails instead of stalling CI.
function(stoker_add_test name)
  if(NOT STOKER_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  stoker_target_options(${name})
  # The tests find the shared data themselves (testing::shared_data_dir): $STOKER_SHARED_DATA
  # when the test runs, else the folder CMake was configured with (STOKER_SHARED_DATA).
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 120 PROPERTIES TIMEOUT 300)
endfunction()

# nlohmann-json (nlohmann-json3-dev, header only) for `target`: its CMake package, else the
# bare header where a machine has only that (Pipeline::from_json).
function(stoker_use_nlohmann_json target)
  find_package(nlohmann_json 3.2 QUIET)
  if(nlohmann_json_FOUND)
    target_link_libraries(${target} PRIVATE nlohmann_json::nlohmann_json)
    return()
  endif()
  find_path(STOKER_NLOHMANN_JSON_INCLUDE nlohmann/json.hpp)
  if(NOT STOKER_NLOHMANN_JSON_INCLUDE)
    message(FATAL_ERROR "nlohmann/json.hpp not found: install nlohmann-json3-dev "
                        "(scripts/setup does)")
  endif()
  target_include_directories(${target} PRIVATE ${STOKER_NLOHMANN_JSON_INCLUDE})
endfunction()
