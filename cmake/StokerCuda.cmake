# Decides whether CUDA code is built (STOKER_CUDA = AUTO | ON | OFF) and sets STOKER_HAVE_CUDA.
include(CheckLanguage)
set(STOKER_HAVE_CUDA OFF)
set(STOKER_CUDA_SUMMARY "")
if(NOT STOKER_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER)
    find_program(_stoker_nvcc nvcc HINTS /usr/local/cuda/bin ENV CUDA_HOME PATH_SUFFIXES bin)
    if(_stoker_nvcc)
      set(CMAKE_CUDA_COMPILER ${_stoker_nvcc})
    endif()
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES ${STOKER_CUDA_ARCHITECTURES})
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(STOKER_HAVE_CUDA ON)
    set(STOKER_CUDA_SUMMARY "(nvcc ${CMAKE_CUDA_COMPILER_VERSION}, arch ${CMAKE_CUDA_ARCHITECTURES})")
  elseif(STOKER_CUDA STREQUAL "ON")
    message(FATAL_ERROR "STOKER_CUDA=ON but no CUDA compiler (nvcc) was found")
  else()
    set(STOKER_CUDA_SUMMARY "(nvcc not found)")
  endif()
endif()

# nvJPEG: only its header is needed at build time; the library is loaded at run time
# (codecs/nvjpeg), so one build serves machines with and without it. The header comes with the
# CUDA toolkit on the GPU machine, or from PyPI's nvidia-nvjpeg package (scripts/setup).
set(STOKER_HAVE_NVJPEG OFF)
if(STOKER_HAVE_CUDA)
  set(_stoker_nvjpeg_hints ${CUDAToolkit_INCLUDE_DIRS})
  find_program(_stoker_python NAMES python3 python)
  if(Python_EXECUTABLE)
    set(_stoker_python ${Python_EXECUTABLE})
  endif()
  if(_stoker_python)
    execute_process(
      COMMAND ${_stoker_python} -c
              "import nvidia, os; print(';'.join(os.path.join(p, d, 'include') for p in nvidia.__path__ for d in ('cu13', 'cu12', 'nvjpeg')))"
      OUTPUT_VARIABLE _stoker_py_nvjpeg OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    list(APPEND _stoker_nvjpeg_hints ${_stoker_py_nvjpeg})
  endif()
  find_path(STOKER_NVJPEG_INCLUDE_DIR nvjpeg.h HINTS ${_stoker_nvjpeg_hints})
  if(STOKER_NVJPEG_INCLUDE_DIR)
    set(STOKER_HAVE_NVJPEG ON)
    string(APPEND STOKER_CUDA_SUMMARY ", nvjpeg.h in ${STOKER_NVJPEG_INCLUDE_DIR}")
  else()
    string(APPEND STOKER_CUDA_SUMMARY ", no nvjpeg.h (mixed decoders use the CPU)")
  endif()
endif()

# nvJPEG2000 and nvTIFF likewise: their headers (PyPI's nvidia-nvjpeg2k-cu13 and
# nvidia-nvtiff-cu13, scripts/setup) at build time, the libraries at run time; without a
# header, the mixed decoders decode that format on the CPU.
foreach(_lib NVJPEG2K NVTIFF)
  string(TOLOWER ${_lib} _dir)
  set(STOKER_HAVE_${_lib} OFF)
  if(STOKER_HAVE_CUDA)
    if(_stoker_python)
      execute_process(
        COMMAND ${_stoker_python} -c
                "import nvidia, os; print(';'.join(os.path.join(p, '${_dir}', 'include') for p in nvidia.__path__))"
        OUTPUT_VARIABLE _stoker_py_${_dir} OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
    find_path(STOKER_${_lib}_INCLUDE_DIR ${_dir}.h
              HINTS ${_stoker_py_${_dir}} ${CUDAToolkit_INCLUDE_DIRS})
    if(STOKER_${_lib}_INCLUDE_DIR)
      set(STOKER_HAVE_${_lib} ON)
      string(APPEND STOKER_CUDA_SUMMARY ", ${_dir}.h in ${STOKER_${_lib}_INCLUDE_DIR}")
    endif()
  endif()
endforeach()
