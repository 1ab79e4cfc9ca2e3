//===- DataMovementIndexing.h - Index math of data movement -----*- C++ -*-===//
//
// Private to lib/CodeGen/CUDA. The index arithmetic of the copy, pad and
// resize kernels, written once for the device and the host so that the
// host unit tests exercise exactly what the kernels compute. Compiles as
// plain C++ (g++) and as CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_DATAMOVEMENTINDEXING_H
#define STRIDER_LIB_CODEGEN_CUDA_DATAMOVEMENTINDEXING_H

#include "Kernels.h"

#include <cstdint>

#ifdef __CUDACC__
#define STRIDER_DM_HOST_DEVICE __host__ __device__
#else
#define STRIDER_DM_HOST_DEVICE
#endif

namespace strider {
namespace cuda {

/// The X and Y element offsets of element \p Linear (row-major over the
/// first \p Rank dims of \p Shape, last dim fastest) of a strided copy.
/// \p IndexT is the unsigned type the divisions run in: uint32_t when
/// \p Linear and every dim fit in it, uint64_t otherwise.
template <typename IndexT>
STRIDER_DM_HOST_DEVICE inline void
getStridedOffsets(int64_t Linear, int Rank, const int64_t *Shape,
                  const int64_t *XStrides, const int64_t *YStrides,
                  int64_t &XOff, int64_t &YOff) {
  IndexT Rest = IndexT(Linear);
  XOff = 0;
  YOff = 0;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int D = MaxRank - 1; D >= 0; --D) {
    if (D >= Rank)
      continue;
    const IndexT Size = IndexT(Shape[D]);
    const IndexT I = Rest % Size;
    Rest /= Size;
    XOff += int64_t(I) * XStrides[D];
    YOff += int64_t(I) * YStrides[D];
  }
}

/// Where tile \p Tile of a batched transpose lies: its row tile \p TR, its
/// column tile \p TC and the element offsets of its batch in X and Y.
/// Tiles are numbered with the column tile fastest, then the row tile,
/// then the batch index over the \p BatchRank dims \p BatchShape (last
/// fastest). \p IndexT as for getStridedOffsets.
template <typename IndexT>
STRIDER_DM_HOST_DEVICE inline void
locateTransposeTile(int64_t Tile, int64_t TilesR, int64_t TilesC, int BatchRank,
                    const int64_t *BatchShape, const int64_t *XBatchStrides,
                    const int64_t *YBatchStrides, int64_t &TR, int64_t &TC,
                    int64_t &XOff, int64_t &YOff) {
  IndexT Rest = IndexT(Tile);
  TC = int64_t(Rest % IndexT(TilesC));
  Rest /= IndexT(TilesC);
  TR = int64_t(Rest % IndexT(TilesR));
  Rest /= IndexT(TilesR);
  XOff = 0;
  YOff = 0;
  for (int D = BatchRank - 1; D >= 0; --D) {
    const IndexT Size = IndexT(BatchShape[D]);
    const IndexT I = Rest % Size;
    Rest /= Size;
    XOff += int64_t(I) * XBatchStrides[D];
    YOff += int64_t(I) * YBatchStrides[D];
  }
}

/// The index of X that index \p I of Y reads along a dim of X size \p Size
/// padded by \p Begin in front (negative: cropped), or -1 where the
/// constant value is written instead. Reflect mirrors about the first and
/// last elements without repeating them, periodically for pads beyond the
/// size (as numpy.pad); Edge repeats the border element. An empty dim
/// reads nothing.
STRIDER_DM_HOST_DEVICE inline int64_t
getPadSourceIndex(int64_t I, int64_t Begin, int64_t Size, PadParams::Mode M) {
  const int64_t S = I - Begin;
  if (S >= 0 && S < Size)
    return S;
  if (Size <= 0 || M == PadParams::Constant)
    return -1;
  if (M == PadParams::Edge)
    return S < 0 ? 0 : Size - 1;
  if (Size == 1)
    return 0;
  const int64_t Period = 2 * (Size - 1);
  int64_t R = S % Period;
  if (R < 0)
    R += Period;
  return R < Size ? R : Period - R;
}

/// The offset in X (through \p XStrides) that element \p Index of a
/// padded result (row-major over \p YShape, \p Rank dims) reads, or -1
/// where a Constant pad leaves X (getPadSourceIndex per dim).
STRIDER_DM_HOST_DEVICE inline int64_t
getPadSourceOffset(int Rank, const int64_t *YShape, const int64_t *Begin,
                   const int64_t *XShape, const int64_t *XStrides,
                   PadParams::Mode M, int64_t Index) {
  int64_t Rest = Index, Off = 0;
  for (int D = Rank - 1; D >= 0; --D) {
    const int64_t From =
        getPadSourceIndex(Rest % YShape[D], Begin[D], XShape[D], M);
    Rest /= YShape[D];
    if (From < 0)
      return -1;
    Off += From * XStrides[D];
  }
  return Off;
}

/// Where output element \p Linear of a Resize lies: its batch \p N,
/// channel \p C and spatial position \p Out (unused axes 0), given the
/// layout (ChannelsLast: N, spatial..., C; else N, C, spatial...).
STRIDER_DM_HOST_DEVICE inline void getResizeOutputIndex(const ResizeParams &P,
                                                        int64_t Linear,
                                                        int64_t &N, int64_t &C,
                                                        int64_t Out[3]) {
  int64_t Rest = Linear;
  Out[0] = Out[1] = Out[2] = 0;
  if (P.ChannelsLast) {
    C = Rest % P.C;
    Rest /= P.C;
  }
  for (int A = 2; A >= 0; --A) {
    if (A >= P.Spatial)
      continue;
    Out[A] = Rest % P.Out[A];
    Rest /= P.Out[A];
  }
  if (!P.ChannelsLast) {
    C = Rest % P.C;
    Rest /= P.C;
  }
  N = Rest;
}

/// Whether the output position \p Out of a Resize lies outside its input
/// along some axis (tf_crop_and_resize: the first tap's index is -1).
STRIDER_DM_HOST_DEVICE inline bool isResizeExtrapolated(const ResizeParams &P,
                                                        const int64_t Out[3]) {
  for (int A = 0; A < P.Spatial; ++A)
    if (P.Index[A][Out[A] * P.Taps[A]] < 0)
      return true;
  return false;
}

/// Element strides of X's batch, channel and spatial axes (unused axes 0)
/// in the layout of \p P.
struct ResizeInputStrides {
  int64_t Batch = 0, Channel = 0;
  int64_t Spatial[3] = {0, 0, 0};
};
STRIDER_DM_HOST_DEVICE inline ResizeInputStrides
getResizeInputStrides(const ResizeParams &P) {
  ResizeInputStrides S;
  int64_t Inner = P.ChannelsLast ? P.C : 1;
  for (int A = 2; A >= 0; --A) {
    if (A >= P.Spatial)
      continue;
    S.Spatial[A] = Inner;
    Inner *= P.In[A];
  }
  if (P.ChannelsLast) {
    S.Channel = 1;
    S.Batch = Inner;
  } else {
    S.Channel = Inner;
    S.Batch = Inner * P.C;
  }
  return S;
}

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_DATAMOVEMENTINDEXING_H
