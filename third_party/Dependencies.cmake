# Every external dependency of the build, found in one place (included by
# the top-level CMakeLists.txt). What each is for, the version expected,
# its license and how it is installed: third_party/README.md.

# Protocol Buffers 3.21 (Debian libprotobuf-dev): the ONNX file format.
# ONNX's CMake package refers to protobuf::libprotobuf without looking for
# it, so this comes first.
find_package(Protobuf REQUIRED)

# ONNX 1.12 (Debian libonnx-dev): onnx_proto, the generated ModelProto
# classes the importer and exporter read and write, and onnx, the op
# schemas whose function bodies the importer inlines.
find_package(ONNX CONFIG REQUIRED)

# LLVM 14 Support (Debian llvm-14-dev): ADT, Error/Expected, command-line
# parsing, file I/O. Static libLLVMSupport; its headers are system headers
# (their warnings are not ours).
find_package(LLVM 14 REQUIRED CONFIG)
message(STATUS "Using LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")
llvm_map_components_to_libnames(STRIDER_LLVM_LIBS support)
include_directories(SYSTEM ${LLVM_INCLUDE_DIRS})
add_definitions(${LLVM_DEFINITIONS})

# Highway 1.0 (Debian libhwy-dev): the CPU backend's SIMD kernels, with
# run-time dispatch to the machine's best instruction set.
find_package(hwy CONFIG REQUIRED)
find_package(Threads REQUIRED)

# DLPack 0.6 (Debian libdlpack-dev, header only): the tensor struct of the
# C API (include/strider/strider.h).
find_package(dlpack CONFIG REQUIRED)

# CUDA 13 with cuDNN 9 and cuBLAS (/usr/local/cuda), optional: the CUDA
# backend. Without nvcc everything else still builds.
set(STRIDER_HAS_CUDA OFF)
if(STRIDER_ENABLE_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80;90")
    endif()
    set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(STRIDER_HAS_CUDA ON)
  else()
    message(STATUS "nvcc not found: building without CUDA")
  endif()
endif()
message(STATUS "Strider CUDA support: ${STRIDER_HAS_CUDA}")

# Test-only dependencies: GoogleTest 1.12 (Debian libgtest-dev,
# libgmock-dev), and lit, FileCheck, ONNX Runtime, onnx and numpy from the
# project venv (scripts/requirements.txt) and llvm-14-tools.
if(STRIDER_BUILD_TESTS)
  find_package(GTest REQUIRED)
  # Prefer the project venv's interpreter when the configure names none,
  # so that a plain `cmake -S . -B build` runs the tests with it.
  if(NOT Python3_EXECUTABLE AND EXISTS ${PROJECT_SOURCE_DIR}/.venv/bin/python)
    set(Python3_EXECUTABLE ${PROJECT_SOURCE_DIR}/.venv/bin/python)
  endif()
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  # The suites that make or check models with Python (lit, real-models,
  # install-consumers, python-package) need the venv's packages; without
  # them they are registered as skipped tests that say what to run.
  execute_process(
    COMMAND ${Python3_EXECUTABLE} -c "import onnx, onnxruntime, numpy"
    RESULT_VARIABLE _strider_py_rc OUTPUT_QUIET ERROR_QUIET)
  if(_strider_py_rc EQUAL 0)
    set(STRIDER_HAVE_PYTHON_TOOLS ON)
  else()
    set(STRIDER_HAVE_PYTHON_TOOLS OFF)
    message(WARNING "${Python3_EXECUTABLE} has no onnx, onnxruntime or "
      "numpy: the lit, real-models, install-consumers and python-package "
      "tests will report as skipped. scripts/setup.sh installs them into "
      ".venv; configure again afterwards to enable those tests.")
  endif()
  set(STRIDER_LLVM_TOOLS_DIR "${LLVM_TOOLS_BINARY_DIR}" CACHE PATH
      "Directory with FileCheck, not and count")
  find_program(STRIDER_LIT NAMES lit
    HINTS ${PROJECT_SOURCE_DIR}/.venv/bin
    PATHS /usr/lib/llvm-14/build/utils/lit NO_DEFAULT_PATH)
  if(NOT STRIDER_LIT)
    find_program(STRIDER_LIT NAMES lit lit.py
      PATHS /usr/lib/llvm-14/build/utils/lit)
  endif()
  if(NOT STRIDER_LIT)
    message(FATAL_ERROR "lit not found: run scripts/setup.sh")
  endif()
endif()
