//===- Libraries.h - Convolutions and GEMMs through cuDNN, cuBLASLt -*- C++
//-*-===//
//
// Private to lib/CodeGen/CUDA. cuDNN 9 and cuBLASLt are loaded at run time
// (dlopen of libcudnn.so.9 and libcublasLt.so.13 / .12, each only for a
// program that calls it), so that the backend's binaries start, and report
// a clear error, on machines without them, and use whichever copy the
// machine has (a PyTorch environment's).
//
// A runner is made once per conv or GEMM when a program is loaded: it
// uploads the weights in the form its library wants (layout, type), picks
// an algorithm (a tuned one if given, else the library's heuristic) and
// says which part of the wanted epilogue it fuses; running it enqueues
// work on a stream without allocating or synchronizing.
//
// The descriptors (ConvDesc, GemmDesc) are plain data filled by the
// host-side lowering; describeConv/describeGemm and the checks are host
// code tested without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_LIBRARIES_H
#define STRIDER_LIB_CODEGEN_CUDA_LIBRARIES_H

#include "Kernels.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace strider {
namespace cuda {

/// How a library accumulates and which units it may use.
enum class MathMode : uint8_t {
  FP32, ///< Plain fp32 (tensor cores off).
  TF32, ///< fp32 storage, TF32 tensor cores.
  Half, ///< f16/bf16 storage (the DType of the operands), fp32 accumulation.
};

/// What an epilogue adds after a conv or GEMM, and what the runner fused.
struct EpilogueSpec {
  bool Bias = false;
  bool Residual = false;
  codegen::Activation Act;
};

/// A convolution (forward, or ConvTranspose as the backward-data conv)
/// of 1-3 spatial dims. Logical sizes; the layout flags say how X, W and
/// Y are stored (channels-last: N, spatial..., C; W as K, spatial..., C/G).
struct ConvDesc {
  bool Transposed = false;
  int Spatial = 2;
  int64_t N = 1, C = 1, K = 1, Groups = 1;
  int64_t In[3] = {1, 1, 1}, Out[3] = {1, 1, 1}, Filter[3] = {1, 1, 1};
  int64_t Stride[3] = {1, 1, 1}, Dilation[3] = {1, 1, 1};
  int64_t PadBegin[3] = {0, 0, 0}, PadEnd[3] = {0, 0, 0};
  bool XChannelsLast = false, YChannelsLast = false;
  DType Type = DType::F32; ///< X, W and Y.
  MathMode Math = MathMode::FP32;
  EpilogueSpec Epilogue; ///< Residual has Y's layout and type.
};
/// The key of a conv in tuning files and reports:
/// "x=1x64x56x56 w=64x64x3x3 s=1x1 p=1x1x1x1 d=1x1 g=1 xl=nhwc yl=nhwc f16".
/// Dims are logical (N, C, spatial...; w as ONNX's weight), pads begin
/// then end; " tf32" follows the type under MathMode::TF32. ConvTranspose:
/// "transposed x=... w=... y=1x32x56x56 s=..." (y: the output size, which
/// output_padding leaves open).
std::string getConvKey(const ConvDesc &D);
/// Why cuDNN cannot run \p D as described (asymmetric padding, ...), or
/// empty.
std::string checkConv(const ConvDesc &D);

/// Y[b] = A[b] (M x K) * B[b] (K x N) (+ Bias[n]) with row-major operands;
/// either operand may be transposed and batched with a stride (0: shared).
/// B may be a constant (uploaded once).
struct GemmDesc {
  int64_t Batch = 1, M = 1, N = 1, K = 1;
  bool TransA = false, TransB = false;
  int64_t BatchStrideA = 0, BatchStrideB = 0, BatchStrideY = 0;
  float Alpha = 1.0f;
  DType Type = DType::F32; ///< A, B and Y.
  MathMode Math = MathMode::FP32;
  EpilogueSpec Epilogue; ///< Bias indexed by n; no residual.
};
/// The key of a GEMM in tuning files and reports:
/// "b=1 m=64 n=128 k=256 ta=0 tb=1 f16", then " tf32" under
/// MathMode::TF32, " sa=.. sb=.. sy=.." (batch strides) when b > 1, and the
/// epilogue cuBLASLt fuses: " bias", " relu" / " gelu" (tanh form).
std::string getGemmKey(const GemmDesc &D);

/// The error of a conv or GEMM its library has no algorithm for as
/// described (a layout mix, a type, a padding it does not take): the
/// description is the problem, not the device or the libraries. `--tune`
/// counts such a variant as one the backend does not offer.
class NoAlgorithmError : public llvm::ErrorInfo<NoAlgorithmError> {
public:
  static char ID;
  explicit NoAlgorithmError(std::string Message) : Message(std::move(Message)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Message; }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }

private:
  std::string Message;
};
llvm::Error makeNoAlgorithmError(const llvm::Twine &What);

/// What a runner's run() reports (no allocation on this path): CUDA's
/// code for the outcome, and when the library call failed, the library's
/// own status name ("CUDNN_STATUS_EXECUTION_FAILED"; a static string).
struct LibraryStatus {
  cudaError_t Code = cudaSuccess;
  const char *Detail = nullptr;
};

/// One algorithm's measured time, from a tuning run.
struct AlgoTiming {
  std::string Algo; ///< Library-specific name, stable across runs.
  double Nanoseconds = 0;
  size_t WorkspaceBytes = 0;
};

/// Which libraries a program calls: a model without convs runs where
/// cuDNN is not installed, one without GEMMs where cuBLASLt is not.
struct LibrarySet {
  bool Cudnn = true;
  bool CublasLt = true;
};

/// The loaded libraries and their handles for one device and stream.
class Libraries {
public:
  /// Loads the libraries of \p Needed and makes handles bound to
  /// \p Stream on the current device. Errors name the library that is
  /// missing.
  static llvm::Expected<std::unique_ptr<Libraries>>
  create(cudaStream_t Stream, LibrarySet Needed = LibrarySet());
  ~Libraries();
  bool hasCudnn() const;
  bool hasCublasLt() const;
  /// What is loaded, for reports: "libcudnn.so.9 (cuDNN 9.10.0)",
  /// "libcublasLt.so.13 (cuBLASLt 13.0.0)".
  std::vector<std::string> describe() const;
  /// cuDNN's message for its last failure on this thread, or empty.
  std::string getLastCudnnError() const;
  Libraries(const Libraries &) = delete;
  Libraries &operator=(const Libraries &) = delete;
  struct Impl;
  Impl &getImpl() { return *I; }

private:
  explicit Libraries(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> I;
};

class ConvRunner {
public:
  /// \p Weights (ONNX's logical f32 weight: K, C/G, spatial... or,
  /// transposed, C, K/G, spatial...) and \p Bias (K, or null) are host
  /// data converted and uploaded here. \p Algo: a tuned algorithm name, or
  /// empty for the heuristic's choice.
  static llvm::Expected<std::unique_ptr<ConvRunner>>
  create(Libraries &L, const ConvDesc &D, const float *Weights,
         const float *Bias, const std::string &Algo);
  virtual ~ConvRunner() = default;
  virtual size_t getWorkspaceBytes() const = 0;
  /// The part of D.Epilogue done by run(); the rest is the caller's.
  virtual EpilogueSpec getFused() const = 0;
  virtual std::string getAlgo() const = 0;
  virtual LibraryStatus run(const void *X, const void *Residual, void *Y,
                            void *Workspace, cudaStream_t S) const = 0;
};

class GemmRunner {
public:
  /// \p ConstantB: B as host f32 (row-major K x N, or N x K when
  /// TransB), or null when B is an activation passed to run().
  static llvm::Expected<std::unique_ptr<GemmRunner>>
  create(Libraries &L, const GemmDesc &D, const float *ConstantB,
         const float *Bias, const std::string &Algo);
  virtual ~GemmRunner() = default;
  virtual size_t getWorkspaceBytes() const = 0;
  virtual EpilogueSpec getFused() const = 0;
  virtual std::string getAlgo() const = 0;
  virtual LibraryStatus run(const void *A, const void *B, void *Y,
                            void *Workspace, cudaStream_t S) const = 0;
};

/// Times every algorithm the library offers for \p D on random data
/// (those cuDNN's find can run, each timed in a replayed CUDA graph of
/// back-to-back calls, as programs run it), fastest first.
llvm::Expected<std::vector<AlgoTiming>> findConvAlgorithms(Libraries &L,
                                                           const ConvDesc &D);

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_LIBRARIES_H
