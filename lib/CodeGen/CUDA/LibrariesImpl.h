//===- LibrariesImpl.h - cuDNN and cuBLASLt entry points --------*- C++ -*-===//
//
// Private to the library runners (Libraries.cpp, ConvRunner.cpp,
// GemmRunner.cpp). The functions of cuDNN 9 and cuBLASLt the runners call,
// resolved from the libraries loaded at run time and typed from the real
// headers (a signature that changes fails to compile), and the handles
// bound to the program's stream.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_LIBRARIESIMPL_H
#define STRIDER_LIB_CODEGEN_CUDA_LIBRARIESIMPL_H

#include "Libraries.h"

#include "llvm/ADT/Twine.h"

#include <cublasLt.h>
#include <cudnn.h>

#include <string>
#include <vector>

/// Every cuDNN function a runner calls.
#define STRIDER_CUDNN_FUNCTIONS(X)                                             \
  X(cudnnGetVersion)                                                           \
  X(cudnnGetErrorString)                                                       \
  X(cudnnGetLastErrorString)                                                   \
  X(cudnnCreate)                                                               \
  X(cudnnDestroy)                                                              \
  X(cudnnSetStream)                                                            \
  X(cudnnCreateTensorDescriptor)                                               \
  X(cudnnDestroyTensorDescriptor)                                              \
  X(cudnnSetTensorNdDescriptor)                                                \
  X(cudnnCreateFilterDescriptor)                                               \
  X(cudnnDestroyFilterDescriptor)                                              \
  X(cudnnSetFilterNdDescriptor)                                                \
  X(cudnnCreateConvolutionDescriptor)                                          \
  X(cudnnDestroyConvolutionDescriptor)                                         \
  X(cudnnSetConvolutionNdDescriptor)                                           \
  X(cudnnSetConvolutionGroupCount)                                             \
  X(cudnnSetConvolutionMathType)                                               \
  X(cudnnCreateActivationDescriptor)                                           \
  X(cudnnDestroyActivationDescriptor)                                          \
  X(cudnnSetActivationDescriptor)                                              \
  X(cudnnGetConvolutionForwardAlgorithmMaxCount)                               \
  X(cudnnGetConvolutionForwardAlgorithm_v7)                                    \
  X(cudnnFindConvolutionForwardAlgorithmEx)                                    \
  X(cudnnGetConvolutionForwardWorkspaceSize)                                   \
  X(cudnnConvolutionForward)                                                   \
  X(cudnnConvolutionBiasActivationForward)                                     \
  X(cudnnGetConvolutionBackwardDataAlgorithmMaxCount)                          \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)                               \
  X(cudnnFindConvolutionBackwardDataAlgorithmEx)                               \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize)                              \
  X(cudnnConvolutionBackwardData)

/// Every cuBLASLt function a runner calls.
#define STRIDER_CUBLASLT_FUNCTIONS(X)                                          \
  X(cublasLtGetVersion)                                                        \
  X(cublasLtGetStatusString)                                                   \
  X(cublasLtCreate)                                                            \
  X(cublasLtDestroy)                                                           \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)                                          \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmulAlgoInit)                                                    \
  X(cublasLtMatmulAlgoCheck)                                                   \
  X(cublasLtMatmulAlgoConfigSetAttribute)                                      \
  X(cublasLtMatmulAlgoConfigGetAttribute)                                      \
  X(cublasLtMatmul)

namespace strider {
namespace cuda {

/// cuDNN's entry points, each named as the function it points to.
struct CudnnApi {
#define STRIDER_DECLARE_ENTRY(Fn) decltype(&::Fn) Fn = nullptr;
  STRIDER_CUDNN_FUNCTIONS(STRIDER_DECLARE_ENTRY)
#undef STRIDER_DECLARE_ENTRY
};

/// cuBLASLt's entry points, each named as the function it points to.
struct CublasLtApi {
#define STRIDER_DECLARE_ENTRY(Fn) decltype(&::Fn) Fn = nullptr;
  STRIDER_CUBLASLT_FUNCTIONS(STRIDER_DECLARE_ENTRY)
#undef STRIDER_DECLARE_ENTRY
};

struct Libraries::Impl {
  CudnnApi Dnn;
  CublasLtApi Lt;
  /// The file names the libraries were loaded from ("libcublasLt.so.12").
  std::string DnnName, LtName;
  cudnnHandle_t DnnHandle = nullptr;
  cublasLtHandle_t LtHandle = nullptr;
  /// The stream DnnHandle is bound to (cuBLASLt takes one per call).
  cudaStream_t Stream = nullptr;

  Impl() = default;
  Impl(const Impl &) = delete;
  Impl &operator=(const Impl &) = delete;
  /// Destroys the handles; the libraries stay loaded for the process.
  ~Impl();

  /// Binds the cuDNN handle to \p S if it is bound to another stream (no
  /// allocation, no synchronization).
  cudnnStatus_t bindStream(cudaStream_t S);

  /// "<What>: <status name>" errors.
  llvm::Error dnnError(cudnnStatus_t Status, const llvm::Twine &What) const;
  llvm::Error ltError(cublasStatus_t Status, const llvm::Twine &What) const;
};

/// Load cuDNN 9 (loadCudnnApi) or cuBLASLt (13, else 12; loadCublasLtApi)
/// and resolve every entry point into \p I; need no device. Errors name
/// the library or symbol missing and what to install.
llvm::Error loadCudnnApi(Libraries::Impl &I);
llvm::Error loadCublasLtApi(Libraries::Impl &I);

/// The CUDA status a runner's run() reports for a failed library call.
cudaError_t toCudaError(cudnnStatus_t Status);
cudaError_t toCudaError(cublasStatus_t Status);
/// run()'s report of \p Status: its CUDA code and, on failure, its name.
LibraryStatus toLibraryStatus(const Libraries::Impl &L, cudnnStatus_t Status);
LibraryStatus toLibraryStatus(const Libraries::Impl &L, cublasStatus_t Status);

/// An llvm::Error with message \p What.
llvm::Error makeLibraryError(const llvm::Twine &What);
/// "<What>: <CUDA's message for Code>".
llvm::Error makeCudaError(cudaError_t Code, const llvm::Twine &What);

/// Device memory a runner owns (weights, bias), freed with it.
struct DeviceBuffer {
  void *Ptr = nullptr;

  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer();

  /// cudaMalloc of \p Bytes (at least 1); \p What names it in errors.
  llvm::Error allocate(size_t Bytes, const llvm::Twine &What);
  /// allocate, then a synchronous copy of \p Bytes.
  llvm::Error upload(const std::vector<uint8_t> &Bytes,
                     const llvm::Twine &What);
};

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_LIBRARIESIMPL_H
