//===- LaunchShapes.h - Host-side choices of the compute kernels *- C++ -*-===//
//
// Private to lib/CodeGen/CUDA. How the compute kernels walk their data,
// chosen on the host: dim merging, 32-bit index checks, thread shapes of
// row and column reductions, pooling normalized to 3 spatial dims.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_LAUNCHSHAPES_H
#define STRIDER_LIB_CODEGEN_CUDA_LAUNCHSHAPES_H

#include "WindowMath.h"

namespace strider {
namespace cuda {

//===----------------------------------------------------------------------===//
// Host-side choices
//===----------------------------------------------------------------------===//

/// \p P with unit dims dropped and adjacent dims merged where A, B and Y
/// all step through them as through one dim (B's strides are ignored, and
/// zero in the result, for Op None). The result has Rank >= 1; a single
/// element is Shape {1} with zero strides. Precondition: no zero dim.
inline ElementwiseParams simplifyElementwise(const ElementwiseParams &P) {
  const bool HasB = P.Op != BinaryOp::None;
  ElementwiseParams S = P;
  S.Rank = 0;
  for (int D = 0; D < MaxRank; ++D) {
    S.Shape[D] = 1;
    S.AStrides[D] = S.BStrides[D] = 0;
  }
  for (int D = 0; D < P.Rank; ++D) {
    if (P.Shape[D] == 1)
      continue;
    const int64_t AS = P.AStrides[D], BS = HasB ? P.BStrides[D] : 0;
    const int L = S.Rank - 1;
    if (L >= 0 && S.AStrides[L] == AS * P.Shape[D] &&
        S.BStrides[L] == BS * P.Shape[D]) {
      S.Shape[L] *= P.Shape[D];
      S.AStrides[L] = AS;
      S.BStrides[L] = BS;
      continue;
    }
    S.Shape[S.Rank] = P.Shape[D];
    S.AStrides[S.Rank] = AS;
    S.BStrides[S.Rank] = BS;
    ++S.Rank;
  }
  if (S.Rank == 0)
    S.Rank = 1;
  return S;
}

/// Whether every element index and operand offset of \p P (simplified or
/// not) fits 32-bit arithmetic.
inline bool fitsInt32(const ElementwiseParams &P) {
  int64_t Count = 1, MaxA = 0, MaxB = 0;
  for (int D = 0; D < P.Rank; ++D) {
    Count *= P.Shape[D];
    MaxA += (P.Shape[D] - 1) * P.AStrides[D];
    MaxB += (P.Shape[D] - 1) * P.BStrides[D];
  }
  const int64_t Limit = INT32_MAX;
  return Count <= Limit && MaxA <= Limit && MaxB <= Limit;
}

/// How a kernel over Outer x Reduced x Inner (reduction, softmax,
/// normalization) spreads its work over threads.
struct ReduceLaunch {
  enum Strategy : uint8_t {
    /// Inner == 1: ThreadsX threads (a multiple of 32) cooperate on a row
    /// of Reduced contiguous elements; a block holds ThreadsY rows.
    Rows,
    /// A block of 32 x ThreadsY threads takes 32 consecutive output columns
    /// (o, i), flattened; the ThreadsY threads of a column split Reduced.
    Columns,
  };
  Strategy How = Columns;
  int ThreadsX = 32, ThreadsY = 1;
};

/// The launch shape for a kernel over \p Outer x \p Reduced x \p Inner:
/// rows when they are long and contiguous, columns otherwise, with more
/// threads per row or column when there are few of them.
inline ReduceLaunch chooseReduceLaunch(int64_t Outer, int64_t Reduced,
                                       int64_t Inner) {
  ReduceLaunch L;
  if (Inner == 1 && Reduced > 32) {
    L.How = ReduceLaunch::Rows;
    if (Reduced > 1024 || (Outer < 128 && Reduced > 256))
      L.ThreadsX = Reduced > 8192 ? 512 : 256;
    else
      L.ThreadsX = 32;
    L.ThreadsY = L.ThreadsX < 256 ? 256 / L.ThreadsX : 1;
    return L;
  }
  L.How = ReduceLaunch::Columns;
  L.ThreadsX = 32;
  const int64_t Tiles = (Outer * Inner + 31) / 32;
  if (Reduced < 16)
    L.ThreadsY = 1;
  else if (Tiles >= 1024)
    L.ThreadsY = 4;
  else if (Tiles >= 128)
    L.ThreadsY = 8;
  else
    L.ThreadsY = 16;
  return L;
}

/// The most threads a block of chooseReduceLaunch has.
constexpr int MaxReduceThreads = 512;

/// The index into NormParams' Scale and Bias of element (\p O, \p R, \p I).
STRIDER_HOST_DEVICE int64_t getAffineIndex(NormParams::AffineIndex Affine,
                                           int64_t Channels, int64_t O,
                                           int64_t R, int64_t I) {
  return Affine == NormParams::ByReduced ? R
         : Affine == NormParams::ByInner ? I
                                         : O % Channels;
}

/// \p P over exactly 3 spatial dims: fewer are padded with unit dims in
/// front (a 1D pool becomes 1 x 1 x W).
inline PoolParams normalizePool(const PoolParams &P) {
  PoolParams Q = P;
  const int Shift = 3 - P.Spatial;
  for (int D = 0; D < 3; ++D) {
    const int S = D - Shift;
    const bool Real = S >= 0;
    Q.In[D] = Real ? P.In[S] : 1;
    Q.Out[D] = Real ? P.Out[S] : 1;
    Q.Kernel[D] = Real ? P.Kernel[S] : 1;
    Q.Stride[D] = Real ? P.Stride[S] : 1;
    Q.Dilation[D] = Real ? P.Dilation[S] : 1;
    Q.PadBegin[D] = Real ? P.PadBegin[S] : 0;
    Q.PadEnd[D] = Real ? P.PadEnd[S] : 0;
  }
  Q.Spatial = 3;
  return Q;
}

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_LAUNCHSHAPES_H
