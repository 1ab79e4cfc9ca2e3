//===- ElementwiseKernels.cu - Broadcasting binaries and epilogues --------===//
//
// Y = Act(A op B) over Y's dense physical shape with broadcast strides
// (after merging the dims all sides walk alike: vector accesses when one
// dim is left and each operand is dense or a scalar, a flat strided walk
// for any other single dim, an index decomposition otherwise), and the
// per-channel epilogue Y = Act(X * Scale[c] + Bias[c] + Residual). Grid-
// stride loops; arithmetic in f32 (DeviceMath.h).
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"
#include "DeviceTypes.cuh"

namespace strider {
namespace cuda {
STRIDER_KERNELS_NAMESPACE_BEGIN
namespace {

constexpr int Threads = 256;

/// One dim: Y[i] = Act(A[i * SA] op B[i * SB]).
template <DType YT, DType BT>
__global__ void __launch_bounds__(Threads)
    elementwiseFlatKernel(BinaryOp Op, codegen::Activation Act, int64_t Count,
                          const void *A, int64_t SA, const void *B, int64_t SB,
                          void *Y) {
  const int64_t Step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t I = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; I < Count;
       I += Step) {
    float V = loadAs<YT>(A, I * SA);
    if (Op != BinaryOp::None)
      V = applyBinary(Op, V, loadAs<BT>(B, I * SB));
    storeAs<YT>(Y, I, applyActivation(Act, V));
  }
}

/// Elements per vector access of the packed walk.
constexpr int PackLen = 4;

/// PackLen elements of storage type \p T, loaded and stored as one access.
template <DType T>
struct alignas(PackLen * sizeof(typename Storage<T>::Type)) Pack {
  typename Storage<T>::Type E[PackLen];
};

/// One dim with A and B each dense or a scalar, and aligned: PackLen
/// elements per access, the last Count % PackLen elements one by one.
template <DType YT, DType BT>
__global__ void __launch_bounds__(Threads)
    elementwisePackedKernel(BinaryOp Op, codegen::Activation Act, int64_t Count,
                            const void *A, bool ADense, const void *B,
                            bool BDense, void *Y) {
  const bool HasB = Op != BinaryOp::None;
  const float AScalar = ADense ? 0.0f : loadAs<YT>(A, 0);
  const float BScalar = !HasB || BDense ? 0.0f : loadAs<BT>(B, 0);
  const int64_t Packs = Count / PackLen;
  const int64_t Step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t I = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; I < Packs;
       I += Step) {
    float AV[PackLen], BV[PackLen];
    if (ADense) {
      const Pack<YT> P = static_cast<const Pack<YT> *>(A)[I];
#pragma unroll
      for (int K = 0; K < PackLen; ++K)
        AV[K] = Storage<YT>::load(&P.E[K]);
    } else {
#pragma unroll
      for (int K = 0; K < PackLen; ++K)
        AV[K] = AScalar;
    }
    if (HasB && BDense) {
      const Pack<BT> P = static_cast<const Pack<BT> *>(B)[I];
#pragma unroll
      for (int K = 0; K < PackLen; ++K)
        BV[K] = Storage<BT>::load(&P.E[K]);
    } else {
#pragma unroll
      for (int K = 0; K < PackLen; ++K)
        BV[K] = BScalar;
    }
    Pack<YT> Out;
#pragma unroll
    for (int K = 0; K < PackLen; ++K) {
      const float V = HasB ? applyBinary(Op, AV[K], BV[K]) : AV[K];
      Storage<YT>::store(&Out.E[K], applyActivation(Act, V));
    }
    static_cast<Pack<YT> *>(Y)[I] = Out;
  }
  // The tail: fewer than PackLen elements, for the first threads.
  const int64_t Tail = Packs * PackLen + threadIdx.x;
  if (blockIdx.x == 0 && Tail < Count) {
    const float AV = ADense ? loadAs<YT>(A, Tail) : AScalar;
    const float V =
        HasB ? applyBinary(Op, AV, BDense ? loadAs<BT>(B, Tail) : BScalar) : AV;
    storeAs<YT>(Y, Tail, applyActivation(Act, V));
  }
}

/// Whether \p P is aligned for Pack<T> accesses.
bool isPackAligned(const void *P, DType T) {
  return reinterpret_cast<uintptr_t>(P) % (PackLen * getDTypeBytes(T)) == 0;
}

/// A simplified ElementwiseParams' walk in the kernel's index type.
template <typename IndexT> struct StridedWalk {
  int Rank = 0;
  IndexT Shape[MaxRank] = {}, AStrides[MaxRank] = {}, BStrides[MaxRank] = {};
};

/// Any strides: each Y index decomposed into Shape's dims.
template <DType YT, DType BT, typename IndexT>
__global__ void __launch_bounds__(Threads)
    elementwiseStridedKernel(BinaryOp Op, codegen::Activation Act,
                             StridedWalk<IndexT> W, IndexT Count, const void *A,
                             const void *B, void *Y) {
  const IndexT Step = IndexT(gridDim.x) * blockDim.x;
  for (IndexT I = IndexT(blockIdx.x) * blockDim.x + threadIdx.x; I < Count;
       I += Step) {
    IndexT Rest = I, AOff = 0, BOff = 0;
#pragma unroll
    for (int D = MaxRank - 1; D >= 0; --D) {
      if (D >= W.Rank)
        continue;
      const IndexT Idx = Rest % W.Shape[D];
      Rest /= W.Shape[D];
      AOff += Idx * W.AStrides[D];
      BOff += Idx * W.BStrides[D];
    }
    float V = loadAs<YT>(A, AOff);
    if (Op != BinaryOp::None)
      V = applyBinary(Op, V, loadAs<BT>(B, BOff));
    storeAs<YT>(Y, I, applyActivation(Act, V));
  }
}

template <typename IndexT>
StridedWalk<IndexT> makeWalk(const ElementwiseParams &S) {
  StridedWalk<IndexT> W;
  W.Rank = S.Rank;
  for (int D = 0; D < S.Rank; ++D) {
    W.Shape[D] = IndexT(S.Shape[D]);
    W.AStrides[D] = IndexT(S.AStrides[D]);
    W.BStrides[D] = IndexT(S.BStrides[D]);
  }
  return W;
}

/// \p S is simplified and holds \p Count > 0 elements.
template <DType YT, DType BT>
cudaError_t launchElementwiseAs(const ElementwiseParams &S, int64_t Count,
                                const void *A, const void *B, void *Y,
                                cudaStream_t Stream) {
  const unsigned Blocks = getBlocks(Count, Threads);
  const bool HasB = S.Op != BinaryOp::None;
  const int64_t SA = S.AStrides[0], SB = HasB ? S.BStrides[0] : 0;
  if (S.Rank == 1 && Count >= PackLen && (SA == 0 || SA == 1) &&
      (SB == 0 || SB == 1) && isPackAligned(Y, YT) &&
      (SA == 0 || isPackAligned(A, YT)) && (SB == 0 || isPackAligned(B, BT)))
    return launchKernel(elementwisePackedKernel<YT, BT>,
                        getBlocks(Count / PackLen, Threads), Threads, 0, Stream,
                        S.Op, S.Act, Count, A, SA == 1, B, SB == 1, Y);
  if (S.Rank == 1)
    return launchKernel(elementwiseFlatKernel<YT, BT>, Blocks, Threads, 0,
                        Stream, S.Op, S.Act, Count, A, SA, B, SB, Y);
  if (fitsInt32(S))
    return launchKernel(elementwiseStridedKernel<YT, BT, uint32_t>, Blocks,
                        Threads, 0, Stream, S.Op, S.Act, makeWalk<uint32_t>(S),
                        uint32_t(Count), A, B, Y);
  return launchKernel(elementwiseStridedKernel<YT, BT, uint64_t>, Blocks,
                      Threads, 0, Stream, S.Op, S.Act, makeWalk<uint64_t>(S),
                      uint64_t(Count), A, B, Y);
}

/// Y = Act(X * Scale[c] + Bias[c] + Residual), c = (i / ChannelStride) %
/// Channels; X may be Y.
template <DType T, typename IndexT>
__global__ void __launch_bounds__(Threads)
    epilogueKernel(IndexT Count, IndexT Channels, IndexT ChannelStride,
                   codegen::Activation Act, const void *X, const float *Scale,
                   const float *Bias, const void *Residual, void *Y) {
  const IndexT Step = IndexT(gridDim.x) * blockDim.x;
  for (IndexT I = IndexT(blockIdx.x) * blockDim.x + threadIdx.x; I < Count;
       I += Step) {
    float V = loadAs<T>(X, I);
    if (Scale || Bias) {
      const IndexT C = (I / ChannelStride) % Channels;
      if (Scale)
        V *= Scale[C];
      if (Bias)
        V += Bias[C];
    }
    if (Residual)
      V += loadAs<T>(Residual, I);
    storeAs<T>(Y, I, applyActivation(Act, V));
  }
}

} // namespace

cudaError_t launchElementwise(const ElementwiseParams &P, const void *A,
                              const void *B, void *Y, cudaStream_t Stream) {
  if (P.Rank < 0 || P.Rank > MaxRank || P.AType != P.YType)
    return cudaErrorInvalidValue;
  int64_t Count = 1;
  for (int D = 0; D < P.Rank; ++D)
    Count *= P.Shape[D];
  if (Count == 0)
    return cudaSuccess;
  const ElementwiseParams S = simplifyElementwise(P);
  // Unary ops read no B: any instantiation does.
  const DType BType = P.Op == BinaryOp::None ? P.YType : P.BType;
  return dispatchType(P.YType, [&](auto Tag) -> cudaError_t {
    constexpr DType YT = decltype(Tag)::value;
    if (BType == YT)
      return launchElementwiseAs<YT, YT>(S, Count, A, B, Y, Stream);
    if (BType == DType::F32)
      return launchElementwiseAs<YT, DType::F32>(S, Count, A, B, Y, Stream);
    return cudaErrorInvalidValue;
  });
}

cudaError_t launchEpilogue(const EpilogueParams &P, const void *X,
                           const float *Scale, const float *Bias,
                           const void *Residual, void *Y, cudaStream_t Stream) {
  if (P.XType != P.YType || (Residual && P.ResidualType != P.YType) ||
      P.Channels < 1 || P.ChannelStride < 1)
    return cudaErrorInvalidValue;
  if (P.Count <= 0)
    return cudaSuccess;
  const unsigned Blocks = getBlocks(P.Count, Threads);
  const bool Small = P.Count <= INT32_MAX;
  return dispatchType(P.YType, [&](auto Tag) -> cudaError_t {
    constexpr DType T = decltype(Tag)::value;
    if (Small)
      return launchKernel(epilogueKernel<T, uint32_t>, Blocks, Threads, 0,
                          Stream, uint32_t(P.Count), uint32_t(P.Channels),
                          uint32_t(P.ChannelStride), P.Act, X, Scale, Bias,
                          Residual, Y);
    return launchKernel(epilogueKernel<T, uint64_t>, Blocks, Threads, 0, Stream,
                        uint64_t(P.Count), uint64_t(P.Channels),
                        uint64_t(P.ChannelStride), P.Act, X, Scale, Bias,
                        Residual, Y);
  });
}

STRIDER_KERNELS_NAMESPACE_END
} // namespace cuda
} // namespace strider
