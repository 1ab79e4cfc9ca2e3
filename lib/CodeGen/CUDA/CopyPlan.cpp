//===- CopyPlan.cpp - How a strided copy runs on the GPU ------------------===//
//
// planCopy: reduces a strided copy to its simplest equivalent (unit dims
// dropped, dims in the output's order, dims dense on both sides merged)
// and picks the kernel launchCopy runs for it. Host code, tested without
// a GPU.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>

using namespace strider;
using namespace strider::cuda;

namespace {

/// One dim of a copy: its extent and its element strides on both sides.
struct CopyDim {
  int64_t Size;
  int64_t XStride, YStride;
};

/// Rows and Cols below this make the tiles of a transpose mostly empty;
/// such copies take the generic kernel, whose accesses stay coalesced on
/// the written side and close to it on the read side.
constexpr int64_t MinTransposeExtent = 8;

/// Elements of \p T in one 16-byte access.
int64_t getVectorElements(DType T) { return 16 / int64_t(getDTypeBytes(T)); }

CopyPlan makeEmptyPlan(const CopyParams &P) {
  CopyPlan Plan;
  Plan.Strategy = CopyStrategy::Contiguous;
  Plan.Params.XType = P.XType;
  Plan.Params.YType = P.YType;
  Plan.Params.Rank = 1;
  Plan.Params.Shape[0] = 0;
  Plan.Params.XStrides[0] = 1;
  Plan.Params.YStrides[0] = 1;
  return Plan;
}

} // namespace

/// Dims are first put in the order of decreasing output stride (ties:
/// decreasing input stride), so that the innermost dim is the one written
/// contiguously, then merged wherever an outer dim's stride is the inner
/// one's times its size on both sides.
///
/// - Contiguous: what remains is one dim of unit stride on both sides, or
///   nothing (a single element). Vector is 16 bytes' worth of elements
///   when the types match and divide the element count.
/// - Transpose2D: at least two dims remain, none with a zero stride; the
///   innermost (Rows elements) has unit output stride and input stride
///   XRowStride, the next (Cols elements) has unit input stride and
///   output stride YRowStride, and both are at least MinTransposeExtent
///   long. Every outer dim, however many and whatever their strides, is a
///   batch dim (Batch is the product of their sizes; launchCopy reads
///   their strides from Params). This takes N,C,HW <-> N,HW,C relayouts of
///   4D and 5D tensors of any batch, also into or out of a slice of a
///   larger tensor (Concat, Split). Vector is 16 bytes' worth of elements
///   when the types match and it divides Rows, Cols, both row strides and
///   every batch stride.
/// - Generic: anything else (broadcasts, general permutations, strided
///   slices, narrow transposes).
CopyPlan cuda::planCopy(const CopyParams &P) {
  assert(P.Rank >= 0 && P.Rank <= MaxRank && "copy rank out of range");
  CopyDim Dims[MaxRank];
  int Rank = 0;
  for (int I = 0; I < P.Rank; ++I) {
    assert(P.Shape[I] >= 0 && "negative extent");
    if (P.Shape[I] == 0)
      return makeEmptyPlan(P);
    if (P.Shape[I] != 1)
      Dims[Rank++] = {P.Shape[I], P.XStrides[I], P.YStrides[I]};
  }
  std::stable_sort(Dims, Dims + Rank, [](const CopyDim &A, const CopyDim &B) {
    if (std::llabs(A.YStride) != std::llabs(B.YStride))
      return std::llabs(A.YStride) > std::llabs(B.YStride);
    return std::llabs(A.XStride) > std::llabs(B.XStride);
  });
  int Merged = 0;
  for (int I = 0; I < Rank; ++I) {
    const CopyDim &Inner = Dims[I];
    if (Merged > 0) {
      CopyDim &Outer = Dims[Merged - 1];
      if (Outer.XStride == Inner.XStride * Inner.Size &&
          Outer.YStride == Inner.YStride * Inner.Size) {
        Outer = {Outer.Size * Inner.Size, Inner.XStride, Inner.YStride};
        continue;
      }
    }
    Dims[Merged++] = Inner;
  }
  Rank = Merged;

  CopyPlan Plan;
  CopyParams &S = Plan.Params;
  S.Rank = Rank;
  S.XType = P.XType;
  S.YType = P.YType;
  bool AnyZeroStride = false;
  for (int I = 0; I < Rank; ++I) {
    S.Shape[I] = Dims[I].Size;
    S.XStrides[I] = Dims[I].XStride;
    S.YStrides[I] = Dims[I].YStride;
    AnyZeroStride |= Dims[I].XStride == 0 || Dims[I].YStride == 0;
  }
  const bool SameType = P.XType == P.YType;
  const int64_t Vec = getVectorElements(P.XType);

  if (Rank == 0 || (Rank == 1 && S.XStrides[0] == 1 && S.YStrides[0] == 1)) {
    Plan.Strategy = CopyStrategy::Contiguous;
    if (Rank == 1 && SameType && S.Shape[0] % Vec == 0)
      Plan.Vector = int(Vec);
    return Plan;
  }

  if (Rank >= 2 && !AnyZeroStride) {
    const CopyDim &RowDim = Dims[Rank - 1], &ColDim = Dims[Rank - 2];
    if (RowDim.YStride == 1 && ColDim.XStride == 1 &&
        RowDim.Size >= MinTransposeExtent &&
        ColDim.Size >= MinTransposeExtent) {
      Plan.Strategy = CopyStrategy::Transpose2D;
      Plan.Rows = RowDim.Size;
      Plan.Cols = ColDim.Size;
      Plan.XRowStride = RowDim.XStride;
      Plan.YRowStride = ColDim.YStride;
      bool Vectorizable = SameType && Plan.Rows % Vec == 0 &&
                          Plan.Cols % Vec == 0 && Plan.XRowStride % Vec == 0 &&
                          Plan.YRowStride % Vec == 0;
      Plan.Batch = 1;
      for (int I = 0; I < Rank - 2; ++I) {
        Plan.Batch *= S.Shape[I];
        Vectorizable &= S.XStrides[I] % Vec == 0 && S.YStrides[I] % Vec == 0;
      }
      if (Vectorizable)
        Plan.Vector = int(Vec);
      return Plan;
    }
  }

  Plan.Strategy = CopyStrategy::Generic;
  return Plan;
}
