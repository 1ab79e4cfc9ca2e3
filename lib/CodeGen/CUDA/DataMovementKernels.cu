//===- DataMovementKernels.cu - Copies, Pad and Resize on the GPU ---------===//
//
// The kernels behind launchCopy (flat copies and casts, batched transposes
// through shared-memory tiles, generic strided walks), launchPad and
// launchResize. Index arithmetic lives in DataMovementIndexing.h, where
// the host tests reach it.
//
//===----------------------------------------------------------------------===//

#include "DataMovementIndexing.h"
#include "DeviceTypes.cuh"
#include "Kernels.h"

#include <cstdint>
#include <type_traits>

namespace strider {
namespace cuda {
STRIDER_KERNELS_NAMESPACE_BEGIN
namespace {

constexpr int Threads = 256;
/// Blocks of the transpose kernel resident on one multiprocessor: caps its
/// registers so that enough tiles are in flight to cover memory latency.
constexpr int TransposeBlocksPerSM = 6;
/// Most blocks of a grid-stride launch.
constexpr int64_t MaxBlocks = int64_t(1) << 20;

template <DType T> using Elem = typename Storage<T>::Type;

/// \p V of storage type \p XT in storage type \p YT (bits unchanged when
/// the types match).
template <DType XT, DType YT>
__device__ __forceinline__ Elem<YT> convertElement(Elem<XT> V) {
  if constexpr (XT == YT) {
    return V;
  } else {
    Elem<YT> R;
    Storage<YT>::store(&R, Storage<XT>::load(&V));
    return R;
  }
}

__device__ __forceinline__ int64_t getThreadIndex() {
  return int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t getThreadCount() {
  return int64_t(gridDim.x) * blockDim.x;
}

/// Whether \p P is aligned for 16-byte accesses.
bool isVectorAligned(const void *P) {
  return reinterpret_cast<uintptr_t>(P) % 16 == 0;
}

/// Whether linear indices below \p Count and the extents \p Shape fit in
/// 32-bit index arithmetic.
bool fitsIndex32(int64_t Count, const int64_t *Shape, int Rank) {
  if (Count > int64_t(UINT32_MAX))
    return false;
  for (int D = 0; D < Rank; ++D)
    if (Shape[D] > int64_t(UINT32_MAX))
      return false;
  return true;
}

int64_t getElementCount(const int64_t *Shape, int Rank) {
  int64_t N = 1;
  for (int D = 0; D < Rank; ++D)
    N *= Shape[D];
  return N;
}

//===----------------------------------------------------------------------===//
// Copies
//===----------------------------------------------------------------------===//

/// Y[i] = X[i] for i < Count, in units of \p Unit (an element's bits, or
/// 16 bytes).
template <typename Unit>
__global__ void __launch_bounds__(Threads)
    copyFlatKernel(const Unit *X, Unit *Y, int64_t Count) {
  for (int64_t I = getThreadIndex(); I < Count; I += getThreadCount())
    Y[I] = X[I];
}

/// Y[i] = convert(X[i]) for i < Count.
template <DType XT, DType YT>
__global__ void __launch_bounds__(Threads)
    convertFlatKernel(const Elem<XT> *X, Elem<YT> *Y, int64_t Count) {
  for (int64_t I = getThreadIndex(); I < Count; I += getThreadCount())
    Y[I] = convertElement<XT, YT>(X[I]);
}

/// Y[y(i)] = convert(X[x(i)]) over every index i of P.Shape.
template <DType XT, DType YT, typename IndexT>
__global__ void __launch_bounds__(Threads)
    copyStridedKernel(const Elem<XT> *X, Elem<YT> *Y, CopyParams P,
                      int64_t Count) {
  for (int64_t I = getThreadIndex(); I < Count; I += getThreadCount()) {
    int64_t XOff, YOff;
    getStridedOffsets<IndexT>(I, P.Rank, P.Shape, P.XStrides, P.YStrides, XOff,
                              YOff);
    Y[YOff] = convertElement<XT, YT>(X[XOff]);
  }
}

/// A batched transpose as the kernel walks it: tiles of Tile x Tile
/// elements, numbered with the column tile fastest, then the row tile,
/// then the batch.
struct TransposeShape {
  int64_t Rows = 0, Cols = 0;
  int64_t XRowStride = 0, YRowStride = 0;
  int64_t TilesR = 0, TilesC = 0, Tiles = 0;
  int BatchRank = 0;
  int64_t BatchShape[MaxRank] = {};
  int64_t XBatchStrides[MaxRank] = {}, YBatchStrides[MaxRank] = {};
};

/// The bits of storage type \p E.
template <typename E>
using BitsOf = std::conditional_t<sizeof(E) == 4, uint32_t, uint16_t>;

/// Element \p K of a 16-byte vector of \p Bits.
template <typename Bits>
__device__ __forceinline__ Bits getVectorPart(const uint4 &U, int K) {
  const uint32_t Words[4] = {U.x, U.y, U.z, U.w};
  if constexpr (sizeof(Bits) == 4)
    return Words[K];
  else
    return Bits(Words[K / 2] >> (16 * (K % 2)));
}

/// The 16-byte vector of the elements \p Parts of \p Bits.
template <typename Bits, int V>
__device__ __forceinline__ uint4 makeVector(const Bits (&Parts)[V]) {
  uint32_t Words[4];
#pragma unroll
  for (int J = 0; J < 4; ++J) {
    if constexpr (sizeof(Bits) == 4)
      Words[J] = Parts[J];
    else
      Words[J] = uint32_t(Parts[2 * J]) | uint32_t(Parts[2 * J + 1]) << 16;
  }
  return make_uint4(Words[0], Words[1], Words[2], Words[3]);
}

/// Y[b][c][r] = convert(X[b][r][c]): a Tile x Tile tile of X is read
/// along c (X's contiguous dim) into shared memory and written along r
/// (Y's contiguous dim). With V > 1 (only when the types match and every
/// row and batch offset is a multiple of V) each global access moves V
/// elements (16 bytes) and shared memory holds the elements' bits.
template <DType XT, DType YT, int V, int Tile>
__global__ void __launch_bounds__(Threads, TransposeBlocksPerSM)
    transposeKernel(const Elem<XT> *X, Elem<YT> *Y, TransposeShape S) {
  using XE = Elem<XT>;
  using YE = Elem<YT>;
  static_assert(V == 1 || (XT == YT && V * sizeof(XE) == 16),
                "vector transposes move 16 bytes of one type");
  using Chunk = std::conditional_t<V == 1, XE, uint4>;
  using Cell = std::conditional_t<V == 1, XE, BitsOf<XE>>;
  constexpr int VectorsPerRow = Tile / V;
  constexpr int RowsPerPass = Threads / VectorsPerRow;
  constexpr int Passes = Tile / RowsPerPass;
  static_assert(Threads % VectorsPerRow == 0 && Tile % RowsPerPass == 0,
                "threads must cover the tile in whole passes");
  // Rows padded by one 4-byte word so that neither a tile row nor a tile
  // column falls into a few banks.
  constexpr int Stride = Tile + int(4 / sizeof(Cell));
  __shared__ __align__(16) unsigned char Raw[Tile * Stride * sizeof(Cell)];
  Cell *Buf = reinterpret_cast<Cell *>(Raw);

  const int Lane = int(threadIdx.x) % VectorsPerRow;
  const int Row0 = int(threadIdx.x) / VectorsPerRow;
  for (int64_t T = blockIdx.x; T < S.Tiles; T += gridDim.x) {
    int64_t TR, TC, XOff, YOff;
    if (S.Tiles <= int64_t(UINT32_MAX))
      locateTransposeTile<uint32_t>(T, S.TilesR, S.TilesC, S.BatchRank,
                                    S.BatchShape, S.XBatchStrides,
                                    S.YBatchStrides, TR, TC, XOff, YOff);
    else
      locateTransposeTile<uint64_t>(T, S.TilesR, S.TilesC, S.BatchRank,
                                    S.BatchShape, S.XBatchStrides,
                                    S.YBatchStrides, TR, TC, XOff, YOff);
    const int64_t R0 = TR * Tile, C0 = TC * Tile;

    // Read X rows R0.. along c; every load of the tile is issued before
    // any lands in shared memory.
    Chunk Loaded[Passes];
#pragma unroll
    for (int P = 0; P < Passes; ++P) {
      const int64_t R = R0 + Row0 + P * RowsPerPass, C = C0 + Lane * V;
      if (R < S.Rows && C < S.Cols)
        Loaded[P] =
            *reinterpret_cast<const Chunk *>(X + XOff + R * S.XRowStride + C);
    }
#pragma unroll
    for (int P = 0; P < Passes; ++P) {
      const int LR = Row0 + P * RowsPerPass, LC = Lane * V;
      if (R0 + LR >= S.Rows || C0 + LC >= S.Cols)
        continue;
      if constexpr (V == 1) {
        Buf[LR * Stride + LC] = Loaded[P];
      } else {
#pragma unroll
        for (int K = 0; K < V; ++K)
          Buf[LR * Stride + LC + K] = getVectorPart<Cell>(Loaded[P], K);
      }
    }
    __syncthreads();

    // Write Y rows C0.. along r.
#pragma unroll
    for (int P = 0; P < Passes; ++P) {
      const int LC = Row0 + P * RowsPerPass, LR = Lane * V;
      const int64_t C = C0 + LC, R = R0 + LR;
      if (C >= S.Cols || R >= S.Rows)
        continue;
      YE *Dst = Y + YOff + C * S.YRowStride + R;
      if constexpr (V == 1) {
        *Dst = convertElement<XT, YT>(Buf[LR * Stride + LC]);
      } else {
        Cell Parts[V];
#pragma unroll
        for (int K = 0; K < V; ++K)
          Parts[K] = Buf[(LR + K) * Stride + LC];
        __stwb(reinterpret_cast<uint4 *>(Dst), makeVector(Parts));
      }
    }
    __syncthreads();
  }
}

/// Elements of storage type \p T in one 16-byte access.
template <DType T> constexpr int VectorElements = int(16 / sizeof(Elem<T>));

cudaError_t launchContiguous(const CopyPlan &P, const void *X, void *Y,
                             int64_t Count, cudaStream_t S) {
  const CopyParams &C = P.Params;
  if (C.XType == C.YType) {
    const size_t Bytes = getDTypeBytes(C.XType);
    if (P.Vector > 1 && isVectorAligned(X) && isVectorAligned(Y)) {
      const int64_t Units = Count * int64_t(Bytes) / 16;
      return launchKernel(copyFlatKernel<uint4>, getBlocks(Units, Threads),
                          Threads, 0, S, static_cast<const uint4 *>(X),
                          static_cast<uint4 *>(Y), Units);
    }
    if (Bytes == 4)
      return launchKernel(copyFlatKernel<uint32_t>, getBlocks(Count, Threads),
                          Threads, 0, S, static_cast<const uint32_t *>(X),
                          static_cast<uint32_t *>(Y), Count);
    return launchKernel(copyFlatKernel<uint16_t>, getBlocks(Count, Threads),
                        Threads, 0, S, static_cast<const uint16_t *>(X),
                        static_cast<uint16_t *>(Y), Count);
  }
  return dispatchType(C.XType, [&](auto XTag) {
    return dispatchType(C.YType, [&](auto YTag) {
      constexpr DType XT = decltype(XTag)::value, YT = decltype(YTag)::value;
      if constexpr (XT == YT) {
        return cudaErrorInvalidValue; // Copied above.
      } else {
        return launchKernel(convertFlatKernel<XT, YT>,
                            getBlocks(Count, Threads), Threads, 0, S,
                            static_cast<const Elem<XT> *>(X),
                            static_cast<Elem<YT> *>(Y), Count);
      }
    });
  });
}

template <DType XT, DType YT, int V, int Tile>
cudaError_t launchTransposeTiles(TransposeShape Shape, const void *X, void *Y,
                                 cudaStream_t S) {
  Shape.TilesR = (Shape.Rows + Tile - 1) / Tile;
  Shape.TilesC = (Shape.Cols + Tile - 1) / Tile;
  Shape.Tiles = Shape.TilesR * Shape.TilesC;
  for (int D = 0; D < Shape.BatchRank; ++D)
    Shape.Tiles *= Shape.BatchShape[D];
  const unsigned Blocks =
      unsigned(Shape.Tiles < MaxBlocks ? Shape.Tiles : MaxBlocks);
  return launchKernel(transposeKernel<XT, YT, V, Tile>, Blocks, Threads, 0, S,
                      static_cast<const Elem<XT> *>(X),
                      static_cast<Elem<YT> *>(Y), Shape);
}

cudaError_t launchTranspose(const CopyPlan &P, const void *X, void *Y,
                            cudaStream_t S) {
  const CopyParams &C = P.Params;
  TransposeShape Shape;
  Shape.Rows = P.Rows;
  Shape.Cols = P.Cols;
  Shape.XRowStride = P.XRowStride;
  Shape.YRowStride = P.YRowStride;
  Shape.BatchRank = C.Rank - 2 > 0 ? C.Rank - 2 : 0;
  for (int D = 0; D < Shape.BatchRank; ++D) {
    Shape.BatchShape[D] = C.Shape[D];
    Shape.XBatchStrides[D] = C.XStrides[D];
    Shape.YBatchStrides[D] = C.YStrides[D];
  }
  const bool Vectorized =
      P.Vector > 1 && isVectorAligned(X) && isVectorAligned(Y);
  return dispatchType(C.XType, [&](auto XTag) {
    return dispatchType(C.YType, [&](auto YTag) {
      constexpr DType XT = decltype(XTag)::value, YT = decltype(YTag)::value;
      if constexpr (XT == YT) {
        constexpr int V = VectorElements<XT>;
        if (Vectorized && P.Vector == V)
          return launchTransposeTiles<XT, YT, V, 64>(Shape, X, Y, S);
      }
      return launchTransposeTiles<XT, YT, 1, 32>(Shape, X, Y, S);
    });
  });
}

cudaError_t launchStrided(const CopyPlan &P, const void *X, void *Y,
                          int64_t Count, cudaStream_t S) {
  const CopyParams &C = P.Params;
  const bool Narrow = fitsIndex32(Count, C.Shape, C.Rank);
  return dispatchType(C.XType, [&](auto XTag) {
    return dispatchType(C.YType, [&](auto YTag) {
      constexpr DType XT = decltype(XTag)::value, YT = decltype(YTag)::value;
      const unsigned Blocks = getBlocks(Count, Threads);
      const auto *XP = static_cast<const Elem<XT> *>(X);
      auto *YP = static_cast<Elem<YT> *>(Y);
      if (Narrow)
        return launchKernel(copyStridedKernel<XT, YT, uint32_t>, Blocks,
                            Threads, 0, S, XP, YP, C, Count);
      return launchKernel(copyStridedKernel<XT, YT, uint64_t>, Blocks, Threads,
                          0, S, XP, YP, C, Count);
    });
  });
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

/// PadParams with X's dense strides.
struct PadShape {
  PadParams P;
  int64_t XStrides[MaxRank] = {};
};

template <DType T>
__global__ void __launch_bounds__(Threads)
    padKernel(const Elem<T> *X, Elem<T> *Y, PadShape S, int64_t Count) {
  const PadParams &P = S.P;
  for (int64_t I = getThreadIndex(); I < Count; I += getThreadCount()) {
    int64_t Rest = I, XOff = 0;
    bool Inside = true;
#pragma unroll
    for (int D = MaxRank - 1; D >= 0; --D) {
      if (D >= P.Rank)
        continue;
      const int64_t YI = Rest % P.YShape[D];
      Rest /= P.YShape[D];
      const int64_t XI =
          getPadSourceIndex(YI, P.Begin[D], P.XShape[D], P.PadMode);
      Inside &= XI >= 0;
      XOff += XI * S.XStrides[D];
    }
    if (Inside)
      Y[I] = X[XOff];
    else
      Storage<T>::store(Y + I, P.Value);
  }
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

/// One tap of output position \p O along spatial axis \p A: weight and
/// input position (axes past P.Spatial have the single tap 1 at 0).
__device__ __forceinline__ void getTap(const ResizeParams &P, int A, int64_t O,
                                       int K, float &W, int64_t &I) {
  if (A >= P.Spatial) {
    W = 1.0f;
    I = 0;
    return;
  }
  const int64_t E = O * P.Taps[A] + K;
  W = P.Weight[A][E];
  I = P.Index[A][E];
}

template <DType T>
__global__ void __launch_bounds__(Threads)
    resizeKernel(const Elem<T> *X, Elem<T> *Y, ResizeParams P,
                 ResizeInputStrides XS, int64_t Count) {
  int Taps[3];
#pragma unroll
  for (int A = 0; A < 3; ++A)
    Taps[A] = A < P.Spatial ? P.Taps[A] : 1;
  for (int64_t I = getThreadIndex(); I < Count; I += getThreadCount()) {
    int64_t N, C, O[3];
    getResizeOutputIndex(P, I, N, C, O);
    if (isResizeExtrapolated(P, O)) {
      Storage<T>::store(Y + I, P.Extrapolation);
      continue;
    }
    const int64_t Base = N * XS.Batch + C * XS.Channel;
    float Acc = 0.0f;
    for (int K0 = 0; K0 < Taps[0]; ++K0) {
      float W0;
      int64_t I0;
      getTap(P, 0, O[0], K0, W0, I0);
      if (W0 == 0.0f)
        continue;
      for (int K1 = 0; K1 < Taps[1]; ++K1) {
        float W1;
        int64_t I1;
        getTap(P, 1, O[1], K1, W1, I1);
        if (W1 == 0.0f)
          continue;
        for (int K2 = 0; K2 < Taps[2]; ++K2) {
          float W2;
          int64_t I2;
          getTap(P, 2, O[2], K2, W2, I2);
          if (W2 == 0.0f)
            continue;
          const int64_t Off = Base + I0 * XS.Spatial[0] + I1 * XS.Spatial[1] +
                              I2 * XS.Spatial[2];
          Acc += W0 * W1 * W2 * Storage<T>::load(X + Off);
        }
      }
    }
    Storage<T>::store(Y + I, Acc);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Launchers
//===----------------------------------------------------------------------===//

cudaError_t launchCopy(const CopyPlan &P, const void *X, void *Y,
                       cudaStream_t S) {
  const CopyParams &C = P.Params;
  const int64_t Count = getElementCount(C.Shape, C.Rank);
  if (Count == 0)
    return cudaSuccess;
  switch (P.Strategy) {
  case CopyStrategy::Contiguous:
    return launchContiguous(P, X, Y, Count, S);
  case CopyStrategy::Transpose2D:
    return launchTranspose(P, X, Y, S);
  case CopyStrategy::Generic:
    return launchStrided(P, X, Y, Count, S);
  }
  return cudaErrorInvalidValue;
}

cudaError_t launchPad(const PadParams &P, const void *X, void *Y,
                      cudaStream_t S) {
  const int64_t Count = getElementCount(P.YShape, P.Rank);
  if (Count == 0)
    return cudaSuccess;
  PadShape Shape;
  Shape.P = P;
  int64_t Stride = 1;
  for (int D = P.Rank - 1; D >= 0; --D) {
    Shape.XStrides[D] = Stride;
    Stride *= P.XShape[D];
  }
  return dispatchType(P.Type, [&](auto Tag) {
    constexpr DType T = decltype(Tag)::value;
    return launchKernel(padKernel<T>, getBlocks(Count, Threads), Threads, 0, S,
                        static_cast<const Elem<T> *>(X),
                        static_cast<Elem<T> *>(Y), Shape, Count);
  });
}

cudaError_t launchResize(const ResizeParams &P, const void *X, void *Y,
                         cudaStream_t S) {
  if (P.Spatial < 1 || P.Spatial > 3)
    return cudaErrorInvalidValue;
  int64_t Count = P.N * P.C;
  for (int A = 0; A < P.Spatial; ++A)
    Count *= P.Out[A];
  if (Count == 0)
    return cudaSuccess;
  const ResizeInputStrides XS = getResizeInputStrides(P);
  return dispatchType(P.Type, [&](auto Tag) {
    constexpr DType T = decltype(Tag)::value;
    return launchKernel(resizeKernel<T>, getBlocks(Count, Threads), Threads, 0,
                        S, static_cast<const Elem<T> *>(X),
                        static_cast<Elem<T> *>(Y), P, XS, Count);
  });
}

STRIDER_KERNELS_NAMESPACE_END
} // namespace cuda
} // namespace strider
