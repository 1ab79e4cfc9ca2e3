//===- LogicKernels.cu - Integers, bools and masks ------------------------===//
//
// The typed kernel: one thread per element of the result (grid-stride),
// each evaluating DeviceMath.h's evalTyped (the row ops Scatter, ArgMax,
// ArgMin and TopK: one thread per row, evalTypedRow), so that the host
// tests run the very code this kernel runs. TopK over long rows runs by
// ranks instead (topKRankKernel: a block per tile of a row), ArgMax and
// ArgMin over long rows a block per row (argRowsKernel). The storage types
// and the op are read per element (uniform across a launch, so no divergence);
// what goes through here is small (sequence lengths, masks, index arithmetic)
// and memory bound.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"
#include "DeviceTypes.cuh"

namespace strider {
namespace cuda {
STRIDER_KERNELS_NAMESPACE_BEGIN
namespace {

constexpr int Threads = 256;

__global__ void __launch_bounds__(Threads)
    typedKernel(TypedParams P, const void *A, const void *B, const void *C,
                void *Y, void *Y2, RunError *Err, int64_t Count) {
  const void *Ins[3] = {A, B, C};
  const int64_t Step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t I = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; I < Count;
       I += Step) {
    if (isRowOp(P.Op))
      evalTypedRow(P, Ins, Y, Y2, I, Err);
    else
      evalTyped(P, Ins, Y, I, Err);
  }
}

/// ArgMax/ArgMin by blocks (useArgRowBlocks): block B takes row B; each
/// thread keeps the best of the elements it strides over (argTakes), a
/// tree in shared memory combines the threads' (argTakes again), and
/// thread 0 stores getArgRowResult. The host's model runs the same passes.
__global__ void __launch_bounds__(ArgRowThreads)
    argRowsKernel(TypedParams P, const void *X, void *Y, int64_t Rows) {
  __shared__ double Best[ArgRowThreads];
  __shared__ int64_t At[ArgRowThreads];
  const int64_t Len = P.Shape[P.Axis], Stride = P.Strides[0][P.Axis];
  const int T = threadIdx.x;
  for (int64_t Row = blockIdx.x; Row < Rows; Row += gridDim.x) {
    int64_t Off[3];
    getRowOffsets(P, Row, Off);
    double B = 0;
    int64_t A = -1;
    for (int64_t J = T; J < Len; J += ArgRowThreads) {
      const double V = loadDouble(P.In[0], X, Off[0] + J * Stride);
      if (argTakes(P, V, J, B, A)) {
        B = V;
        A = J;
      }
    }
    Best[T] = B;
    At[T] = A;
    __syncthreads();
    for (int Half = ArgRowThreads / 2; Half > 0; Half /= 2) {
      if (T < Half &&
          argTakes(P, Best[T + Half], At[T + Half], Best[T], At[T])) {
        Best[T] = Best[T + Half];
        At[T] = At[T + Half];
      }
      __syncthreads();
    }
    if (T == 0)
      storeScalar(P.Y, Y, Off[2], 0.0,
                  getArgRowResult(loadDouble(P.In[0], X, Off[0]), At[0]), true);
    __syncthreads(); // Slots reused by the block's next row.
  }
}

/// TopK by ranks (useTopKRanks): block B takes TopKRankTile elements of
/// row B / TilesPerRow, one per thread; the block reads the row through
/// shared memory a tile at a time, each thread counting the elements that
/// precede its own (topKPrecedes, the comparisons getTopKRank makes on
/// the host); an element with fewer than K ahead stores itself at its
/// rank. Ranks are distinct (a total order), so each of the K slots has
/// one writer.
__global__ void __launch_bounds__(TopKRankTile)
    topKRankKernel(TypedParams P, const void *X, void *Y, void *Y2,
                   int64_t Blocks, int64_t TilesPerRow) {
  __shared__ double Tile[TopKRankTile];
  const int64_t Len = P.Shape[P.Axis], Stride = P.Strides[0][P.Axis];
  for (int64_t B = blockIdx.x; B < Blocks; B += gridDim.x) {
    int64_t Off[3];
    getRowOffsets(P, B / TilesPerRow, Off);
    const int64_t I = (B % TilesPerRow) * TopKRankTile + threadIdx.x;
    const bool Active = I < Len;
    const double V = Active ? loadDouble(P.In[0], X, Off[0] + I * Stride) : 0;
    int64_t Rank = 0;
    for (int64_t First = 0; First < Len; First += TopKRankTile) {
      const int64_t J = First + threadIdx.x;
      __syncthreads(); // The previous tile is no longer read.
      if (J < Len)
        Tile[threadIdx.x] = loadDouble(P.In[0], X, Off[0] + J * Stride);
      __syncthreads();
      const int64_t Count =
          Len - First < TopKRankTile ? Len - First : TopKRankTile;
      if (Active)
        for (int64_t T = 0; T < Count; ++T)
          Rank += topKPrecedes(P.Largest, Tile[T], First + T, V, I);
    }
    if (Active && Rank < P.K)
      storeTopKSlot(P, X, Y, Y2, Off, Rank, I);
  }
}

} // namespace

cudaError_t launchTyped(const TypedParams &P, const void *A, const void *B,
                        const void *C, void *Y, void *Y2, RunError *Err,
                        cudaStream_t S) {
  if (P.Rank < 0 || P.Rank > MaxRank || P.NumOperands < 1 || P.NumOperands > 3)
    return cudaErrorInvalidValue;
  if (P.Op == TypedOp::Contract &&
      (P.SumRank < 0 || P.SumRank > MaxRank || P.NumOperands > 2))
    return cudaErrorInvalidValue;
  if (isRowOp(P.Op) && (P.Axis < 0 || P.Axis >= P.Rank))
    return cudaErrorInvalidValue;
  if (P.Op == TypedOp::TopK && (!Y2 || P.K < 0 || P.K > P.Shape[P.Axis]))
    return cudaErrorInvalidValue;
  int64_t Count = 1;
  for (int D = 0; D < P.Rank; ++D)
    Count *= P.Shape[D];
  if (isRowOp(P.Op) && Count)
    Count = getRowCount(P);
  if (Count == 0)
    return cudaSuccess;
  if (useArgRowBlocks(P)) {
    const unsigned Grid = unsigned(Count < (1 << 20) ? Count : (1 << 20));
    return launchKernel(argRowsKernel, Grid, ArgRowThreads, 0, S, P, A, Y,
                        Count);
  }
  if (useTopKRanks(P)) {
    const int64_t Len = P.Shape[P.Axis];
    const int64_t TilesPerRow = (Len + TopKRankTile - 1) / TopKRankTile;
    const int64_t Blocks = Count * TilesPerRow;
    const unsigned Grid = unsigned(Blocks < (1 << 20) ? Blocks : (1 << 20));
    return launchKernel(topKRankKernel, Grid, TopKRankTile, 0, S, P, A, Y, Y2,
                        Blocks, TilesPerRow);
  }
  return launchKernel(typedKernel, getBlocks(Count, Threads), Threads, 0, S, P,
                      A, B, C, Y, Y2, Err, Count);
}

STRIDER_KERNELS_NAMESPACE_END
} // namespace cuda
} // namespace strider
