//===- LibraryDescriptors.h - Library call descriptors ----------*- C++ -*-===//
//
// Private to lib/CodeGen/CUDA. The host-side decisions of the cuDNN and
// cuBLASLt runners, as plain functions tested without a GPU: the dims and
// strides of cuDNN's descriptors (1-D convs as 2-D with H = 1, the filter
// in the order of its format), the part of an epilogue each library call
// fuses, the names of algorithms in tuning files, and the column-major
// GEMM that computes a row-major one.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_LIBRARYDESCRIPTORS_H
#define STRIDER_LIB_CODEGEN_CUDA_LIBRARYDESCRIPTORS_H

#include "Libraries.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"

#include <cublasLt.h>
#include <cudnn.h>

#include <cstdint>
#include <string>
#include <vector>

namespace strider {
namespace cuda {

/// The most workspace a heuristic's choice may ask for; larger ones are
/// skipped (a tuned algorithm is taken whatever it needs).
constexpr size_t ConvWorkspaceLimit = size_t(256) << 20;
constexpr size_t GemmWorkspaceLimit = size_t(32) << 20;

//===----------------------------------------------------------------------===//
// Convolutions (cuDNN)
//===----------------------------------------------------------------------===//

/// Dims and element strides of a cuDNN tensor descriptor in cuDNN's
/// logical order (N, C, spatial...): 4 or 5 entries.
struct CudnnTensorDims {
  int Rank = 4;
  int Dims[5] = {};
  int Strides[5] = {};
};

/// A ConvDesc as cuDNN's legacy API takes it. cuDNN describes every conv
/// as a forward one: for ConvTranspose (cudnnConvolutionBackwardData) the
/// forward conv is the one from our Y (its dx) to our X (its dy), whose
/// filter is ONNX's ConvTranspose weight (C, K / G, spatial...) as it is.
struct CudnnConvGeometry {
  /// Tensor rank: 4 for 1-D (as H = 1) and 2-D convs, 5 for 3-D ones.
  int Rank = 4;
  /// Our X and Y in their stored layouts (NCHW or NHWC strides).
  CudnnTensorDims X, Y;
  /// The fused call's bias: 1 x K x 1 x 1 (x 1), packed, with the strides
  /// of Y's layout (the same bytes either way; cuDNN then sees one format
  /// for y, z and the bias, as in PyTorch's calls of the fused function).
  CudnnTensorDims Bias;
  /// Filter dims for cudnnSetFilterNdDescriptor: the forward conv's
  /// (out channels, in channels / groups, spatial...).
  int Filter[5] = {};
  /// The filter format: CUDNN_TENSOR_NHWC (stored out, spatial..., in)
  /// when set, else CUDNN_TENSOR_NCHW (out, in, spatial...). The
  /// preferred one is channels-last when X and Y both are.
  bool FilterChannelsLast = false;
  /// Rank - 2 entries each: one pad per dim (both sides).
  int Pad[3] = {}, Stride[3] = {}, Dilation[3] = {};
  int Groups = 1;
};

/// The pad cuDNN applies on both sides of spatial dim \p I of \p D:
/// PadBegin, when it gives the same result as ONNX's PadBegin/PadEnd
/// (the output size cuDNN derives from it is D's, so a larger or smaller
/// end pad is never read); -1 when no single pad does.
int64_t getSymmetricPad(const ConvDesc &D, int I);

/// \p D as cuDNN's descriptors take it. Precondition: checkConv(D) is
/// empty.
CudnnConvGeometry getCudnnConvGeometry(const ConvDesc &D);

/// \p Weights (the logical (out, in / groups, spatial...) f32 filter of
/// the forward conv cuDNN runs) in the memory order of a filter of format
/// channels-last (\p ChannelsLast) or not.
std::vector<float> packConvFilter(const ConvDesc &D, const float *Weights,
                                  bool ChannelsLast);

/// \p Values converted to storage type \p T (round to nearest even).
std::vector<uint8_t> toStorage(llvm::ArrayRef<float> Values, DType T);

/// What a conv runner's library call does of \p D's epilogue.
struct ConvFusion {
  /// Through cudnnConvolutionBiasActivationForward (else the plain
  /// forward or backward-data call, which fuses nothing).
  bool BiasActivation = false;
  /// Its activation: RELU when set, else IDENTITY.
  bool Relu = false;
  EpilogueSpec Fused;
};

/// The split of \p D's epilogue for a forward conv run with \p Algo.
/// cudnnConvolutionBiasActivationForward computes act(conv + z + bias)
/// with act RELU, or IDENTITY only under IMPLICIT_PRECOMP_GEMM:
/// - a Relu activation: everything wanted is fused (a zero bias stands in
///   for a missing one);
/// - no activation, a bias or residual, and IMPLICIT_PRECOMP_GEMM: both
///   are fused under IDENTITY;
/// - otherwise nothing: the caller's epilogue kernel does bias, residual
///   and activation in one pass anyway.
/// ConvTranspose fuses nothing.
ConvFusion splitConvEpilogue(const ConvDesc &D, cudnnConvolutionFwdAlgo_t Algo);

/// The stable name of a cuDNN algorithm in tuning files and reports:
/// forward ("implicit_gemm", "implicit_precomp_gemm", "gemm", "direct",
/// "fft", "fft_tiling", "winograd", "winograd_nonfused") or, when
/// \p Transposed, backward-data ("algo_0", "algo_1", "fft", "fft_tiling",
/// "winograd", "winograd_nonfused"); null for a value without a name.
const char *getConvAlgoName(bool Transposed, int Algo);
/// The algorithm named \p Name, or -1.
int parseConvAlgo(bool Transposed, llvm::StringRef Name);

//===----------------------------------------------------------------------===//
// GEMMs (cuBLASLt)
//===----------------------------------------------------------------------===//

/// The column-major GEMM cuBLASLt runs for a row-major GemmDesc:
/// C (M x N, leading dim Ldc) = op(A) (M x K) * op(B) (K x N) for each
/// of Batch matrices. A row-major matrix read column-major is its
/// transpose, so Y^T = B^T A^T: cuBLASLt's A is our B, its B our A, and
/// its C our Y.
struct LtGemmShape {
  int64_t M = 1, N = 1, K = 1;
  bool TransA = false, TransB = false;
  /// The stored matrices as column-major layouts (before op).
  int64_t ARows = 1, ACols = 1, Lda = 1;
  int64_t BRows = 1, BCols = 1, Ldb = 1;
  int64_t CRows = 1, CCols = 1, Ldc = 1;
  int64_t Batch = 1;
  int64_t StrideA = 0, StrideB = 0, StrideC = 0; ///< 0: shared.
};
LtGemmShape getLtGemmShape(const GemmDesc &D);

/// Why cuBLASLt cannot run \p D as described, or empty.
std::string checkGemm(const GemmDesc &D);

/// What a GEMM runner's cuBLASLt epilogue does of \p Wanted: BIAS, RELU
/// and GELU (cuBLASLt's GELU is the tanh approximation: it fuses
/// ActKind::GeluTanh only) with or without bias; other activations are
/// left to the caller, after the fused bias.
struct GemmFusion {
  cublasLtEpilogue_t Epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  EpilogueSpec Fused;
};
GemmFusion splitGemmEpilogue(const EpilogueSpec &Wanted);

/// A cuBLASLt algorithm by its configuration attributes, the stable form
/// of a GEMM algorithm in tuning files:
/// "id=21 tile=20 stages=8 splitk=1 reduction=0 swizzle=0 custom=0
/// inner=0 cluster=0" (cublasLtMatmulAlgoConfigAttributes_t values; valid
/// for the cuBLASLt version that produced them).
struct GemmAlgoConfig {
  int32_t Id = 0;
  uint32_t Tile = 0, Stages = 0;
  int32_t SplitK = 1;
  uint32_t Reduction = 0, Swizzle = 0, Custom = 0;
  uint16_t InnerShape = 0, ClusterShape = 0;
};
std::string formatGemmAlgo(const GemmAlgoConfig &C);
/// The configuration \p Name describes (every field, in any order), or
/// None.
llvm::Optional<GemmAlgoConfig> parseGemmAlgo(llvm::StringRef Name);

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_LIBRARYDESCRIPTORS_H
