# ctest's install.find_package (cmake -P): installs the C++ component of BUILD into WORK/prefix,
# configures and builds a project of its own around examples/cpp/quickstart.cpp that finds stoker
# with find_package, and runs it (exit 77, skipped, without the shared photos).
file(REMOVE_RECURSE ${WORK})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix --component cpp)
file(WRITE ${WORK}/project/CMakeLists.txt
"cmake_minimum_required(VERSION 3.25)
project(uses_stoker CXX)
find_package(stoker 0.1 REQUIRED)
add_executable(quickstart ${SOURCE}/examples/cpp/quickstart.cpp)
target_link_libraries(quickstart PRIVATE stoker::stoker)
")
run(${CMAKE_COMMAND} -S ${WORK}/project -B ${WORK}/build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK}/build)
set(photos ${DATA}/photos/dali-imagenet-classes)
if(NOT IS_DIRECTORY ${photos})
  message("no shared photos at ${photos}: built against the installed stoker, not run")
  cmake_language(EXIT 77)
endif()
run(${WORK}/build/quickstart ${photos} 2)
message("quickstart built with find_package(stoker) ran on ${photos}")
