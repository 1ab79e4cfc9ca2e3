//===- ReductionKernels.cu - Reductions, softmax, normalization -----------===//
//
// Kernels over Outer x Reduced x Inner (dense): reductions (global pools,
// ReduceX), softmax along the middle dim, and Instance/LayerNormalization.
// Each walks its data one of two ways (chooseReduceLaunch): rows, when
// Inner is 1, with a warp or a block per row combining partial results by
// warp shuffles and shared memory; columns otherwise, 32 output columns per
// block with the threads of a column splitting the reduced dim. LRN (a
// window of a few channels) is one thread per element. Arithmetic and
// accumulation are f32 whatever the storage type, but for the batch
// statistics of BatchNormalization in training mode (a block per
// channel, in double).
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"
#include "DeviceTypes.cuh"

namespace strider {
namespace cuda {
STRIDER_KERNELS_NAMESPACE_BEGIN
namespace {

/// Shared memory of a block's partial results: one slot per warp of a row
/// (rows) or per thread (columns), at most 32 x 32.
constexpr int SharedSlots = 32 * 32;

struct AddOp {
  __device__ float operator()(float A, float B) const { return A + B; }
};
struct MaxOp {
  __device__ float operator()(float A, float B) const { return fmaxf(A, B); }
};
struct ReduceOp {
  ReduceParams::Kind Kind;
  __device__ float operator()(float A, float B) const {
    return combineReduce(Kind, A, B);
  }
};

/// \p V combined over the 32 lanes of a warp; every lane gets the result.
template <typename Fn>
__device__ __forceinline__ float reduceWarp(float V, Fn Combine) {
#pragma unroll
  for (int Offset = 16; Offset > 0; Offset /= 2)
    V = Combine(V, __shfl_xor_sync(0xffffffffu, V, Offset));
  return V;
}

/// Rows: \p V combined over the blockDim.x threads of row threadIdx.y;
/// every thread of the row gets the result. Every thread of the block
/// calls it (it synchronizes when a row spans several warps).
template <typename Fn>
__device__ float reduceAcrossRow(float V, Fn Combine, float *Shared) {
  V = reduceWarp(V, Combine);
  if (blockDim.x == 32)
    return V;
  float *Row = Shared + threadIdx.y * (blockDim.x / 32);
  if (threadIdx.x % 32 == 0)
    Row[threadIdx.x / 32] = V;
  __syncthreads();
  V = Row[0];
  for (unsigned W = 1; W < blockDim.x / 32; ++W)
    V = Combine(V, Row[W]);
  __syncthreads(); // Shared is free again.
  return V;
}

/// Columns: \p V combined over the blockDim.y threads of column
/// threadIdx.x; every thread of the column gets the result. Every thread
/// of the block calls it.
template <typename Fn>
__device__ float reduceAcrossColumn(float V, Fn Combine, float *Shared) {
  if (blockDim.y == 1)
    return V;
  Shared[threadIdx.y * 32 + threadIdx.x] = V;
  __syncthreads();
  V = Shared[threadIdx.x];
  for (unsigned Y = 1; Y < blockDim.y; ++Y)
    V = Combine(V, Shared[Y * 32 + threadIdx.x]);
  __syncthreads(); // Shared is free again.
  return V;
}

/// The rows of a Rows launch: calls \p F(Row, Active) for the row of
/// each thread, the same number of times in every thread of the block.
template <typename Fn>
__device__ __forceinline__ void forEachRow(int64_t Outer, Fn F) {
  const int64_t Step = int64_t(gridDim.x) * blockDim.y;
  for (int64_t Row0 = int64_t(blockIdx.x) * blockDim.y; Row0 < Outer;
       Row0 += Step) {
    const int64_t Row = Row0 + threadIdx.y;
    F(Row, Row < Outer);
  }
}

/// The columns of a Columns launch: calls \p F(Column, Active) for the
/// column of each thread, the same number of times in every thread of the
/// block.
template <typename Fn>
__device__ __forceinline__ void forEachColumn(int64_t Columns, Fn F) {
  const int64_t Step = int64_t(gridDim.x) * 32;
  for (int64_t Col0 = int64_t(blockIdx.x) * 32; Col0 < Columns; Col0 += Step) {
    const int64_t Col = Col0 + threadIdx.x;
    F(Col, Col < Columns);
  }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <DType T>
__global__ void __launch_bounds__(MaxReduceThreads)
    reduceRowsKernel(ReduceParams P, const void *X, void *Y) {
  __shared__ float Shared[SharedSlots];
  const ReduceOp Op{P.Op};
  forEachRow(P.Outer, [&](int64_t Row, bool Active) {
    const int64_t Len = Active ? P.Reduced : 0;
    const int64_t Base = Row * P.Reduced;
    float Acc = getReduceInit(P.Op);
    for (int64_t R = threadIdx.x; R < Len; R += blockDim.x)
      Acc = Op(Acc, mapReduce(P.Op, loadAs<T>(X, Base + R)));
    Acc = reduceAcrossRow(Acc, Op, Shared);
    if (Active && threadIdx.x == 0)
      storeAs<T>(Y, Row, finishReduce(P.Op, Acc, P.Reduced));
  });
}

template <DType T>
__global__ void __launch_bounds__(MaxReduceThreads)
    reduceColumnsKernel(ReduceParams P, const void *X, void *Y) {
  __shared__ float Shared[SharedSlots];
  const ReduceOp Op{P.Op};
  forEachColumn(P.Outer * P.Inner, [&](int64_t Col, bool Active) {
    const int64_t Len = Active ? P.Reduced : 0;
    const int64_t Base = (Col / P.Inner) * P.Reduced * P.Inner + Col % P.Inner;
    float Acc = getReduceInit(P.Op);
    for (int64_t R = threadIdx.y; R < Len; R += blockDim.y)
      Acc = Op(Acc, mapReduce(P.Op, loadAs<T>(X, Base + R * P.Inner)));
    Acc = reduceAcrossColumn(Acc, Op, Shared);
    if (Active && threadIdx.y == 0)
      storeAs<T>(Y, Col, finishReduce(P.Op, Acc, P.Reduced));
  });
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// Softmax of one row or column of \p Len elements at \p Base + r *
/// \p Stride, split over \p Threads threads (this one is \p Lane):
/// max, sum of exponentials, then the normalized store. \p Combine
/// combines a value over the threads of the row or column.
template <DType T, typename CombineFn>
__device__ __forceinline__ void
softmaxLine(bool Log, int64_t Len, int64_t Base, int64_t Stride, unsigned Lane,
            unsigned Threads, const void *X, void *Y, CombineFn Combine) {
  float Max = -INFINITY;
  for (int64_t R = Lane; R < Len; R += Threads)
    Max = fmaxf(Max, loadAs<T>(X, Base + R * Stride));
  Max = Combine(Max, MaxOp());
  float Sum = 0.0f;
  for (int64_t R = Lane; R < Len; R += Threads)
    Sum += expf(loadAs<T>(X, Base + R * Stride) - Max);
  Sum = Combine(Sum, AddOp());
  const float LogSum = logf(Sum);
  for (int64_t R = Lane; R < Len; R += Threads) {
    const float D = loadAs<T>(X, Base + R * Stride) - Max;
    storeAs<T>(Y, Base + R * Stride, Log ? D - LogSum : expf(D) / Sum);
  }
}

template <DType T>
__global__ void __launch_bounds__(MaxReduceThreads)
    softmaxRowsKernel(SoftmaxParams P, const void *X, void *Y) {
  __shared__ float Shared[SharedSlots];
  forEachRow(P.Outer, [&](int64_t Row, bool Active) {
    softmaxLine<T>(
        P.Log, Active ? P.Axis : 0, Row * P.Axis, 1, threadIdx.x, blockDim.x, X,
        Y, [&](float V, auto Op) { return reduceAcrossRow(V, Op, Shared); });
  });
}

template <DType T>
__global__ void __launch_bounds__(MaxReduceThreads)
    softmaxColumnsKernel(SoftmaxParams P, const void *X, void *Y) {
  __shared__ float Shared[SharedSlots];
  forEachColumn(P.Outer * P.Inner, [&](int64_t Col, bool Active) {
    const int64_t Base = (Col / P.Inner) * P.Axis * P.Inner + Col % P.Inner;
    softmaxLine<T>(
        P.Log, Active ? P.Axis : 0, Base, P.Inner, threadIdx.y, blockDim.y, X,
        Y, [&](float V, auto Op) { return reduceAcrossColumn(V, Op, Shared); });
  });
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

/// Normalizes one row or column of \p Len elements at \p Base + r *
/// \p Stride, (o, i) = (\p O, \p I), split over \p Threads threads (this
/// one is \p Lane): mean, variance (two passes), then the scaled store;
/// lane 0 stores the mean and inverse deviation where asked.
template <DType T, typename CombineFn>
__device__ __forceinline__ void
normLine(const NormParams &P, int64_t Len, int64_t Base, int64_t Stride,
         int64_t O, int64_t I, unsigned Lane, unsigned Threads, const void *X,
         const float *Scale, const float *Bias, void *Y, float *MeanOut,
         float *InvStdOut, CombineFn Combine) {
  float Sum = 0.0f;
  for (int64_t R = Lane; R < Len; R += Threads)
    Sum += loadAs<T>(X, Base + R * Stride);
  const float Mean = Combine(Sum, AddOp()) / float(P.Reduced);
  float Squares = 0.0f;
  for (int64_t R = Lane; R < Len; R += Threads) {
    const float D = loadAs<T>(X, Base + R * Stride) - Mean;
    Squares += D * D;
  }
  const float Var = Combine(Squares, AddOp()) / float(P.Reduced);
  const float InvStd = 1.0f / sqrtf(Var + P.Epsilon);
  if (Lane == 0 && Len > 0) {
    if (MeanOut)
      MeanOut[O * P.Inner + I] = Mean;
    if (InvStdOut)
      InvStdOut[O * P.Inner + I] = InvStd;
  }
  for (int64_t R = Lane; R < Len; R += Threads) {
    float V = (loadAs<T>(X, Base + R * Stride) - Mean) * InvStd;
    const int64_t K = getAffineIndex(P.Affine, P.Channels, O, R, I);
    if (Scale)
      V *= Scale[K];
    if (Bias)
      V += Bias[K];
    storeAs<T>(Y, Base + R * Stride, applyActivation(P.Act, V));
  }
}

template <DType T>
__global__ void __launch_bounds__(MaxReduceThreads)
    normRowsKernel(NormParams P, const void *X, const float *Scale,
                   const float *Bias, void *Y, float *Mean, float *InvStd) {
  __shared__ float Shared[SharedSlots];
  forEachRow(P.Outer, [&](int64_t Row, bool Active) {
    normLine<T>(
        P, Active ? P.Reduced : 0, Row * P.Reduced, 1, Row, 0, threadIdx.x,
        blockDim.x, X, Scale, Bias, Y, Mean, InvStd,
        [&](float V, auto Op) { return reduceAcrossRow(V, Op, Shared); });
  });
}

template <DType T>
__global__ void __launch_bounds__(MaxReduceThreads)
    normColumnsKernel(NormParams P, const void *X, const float *Scale,
                      const float *Bias, void *Y, float *Mean, float *InvStd) {
  __shared__ float Shared[SharedSlots];
  forEachColumn(P.Outer * P.Inner, [&](int64_t Col, bool Active) {
    const int64_t O = Col / P.Inner, I = Col % P.Inner;
    normLine<T>(
        P, Active ? P.Reduced : 0, O * P.Reduced * P.Inner + I, P.Inner, O, I,
        threadIdx.y, blockDim.y, X, Scale, Bias, Y, Mean, InvStd,
        [&](float V, auto Op) { return reduceAcrossColumn(V, Op, Shared); });
  });
}

//===----------------------------------------------------------------------===//
// Launching
//===----------------------------------------------------------------------===//

/// Launches \p Rows or \p Columns, instantiated for the storage type
/// \p Type, with the launch shape chooseReduceLaunch picks.
template <typename LaunchFn>
cudaError_t launchShaped(DType Type, int64_t Outer, int64_t Reduced,
                         int64_t Inner, LaunchFn Launch) {
  const ReduceLaunch L = chooseReduceLaunch(Outer, Reduced, Inner);
  const dim3 Block(unsigned(L.ThreadsX), unsigned(L.ThreadsY));
  const unsigned Blocks = L.How == ReduceLaunch::Rows
                              ? getBlocks(Outer, L.ThreadsY)
                              : getBlocks(Outer * Inner, 32);
  return dispatchType(Type, [&](auto Tag) -> cudaError_t {
    return Launch(Tag, L.How == ReduceLaunch::Rows, Blocks, Block);
  });
}

bool validShape(int64_t Outer, int64_t Reduced, int64_t Inner) {
  return Outer >= 0 && Reduced >= 0 && Inner >= 0;
}

} // namespace

cudaError_t launchReduce(const ReduceParams &P, const void *X, void *Y,
                         cudaStream_t Stream) {
  if (P.XType != P.YType || !validShape(P.Outer, P.Reduced, P.Inner))
    return cudaErrorInvalidValue;
  if (P.Outer * P.Inner == 0)
    return cudaSuccess;
  return launchShaped(
      P.XType, P.Outer, P.Reduced, P.Inner,
      [&](auto Tag, bool Rows, unsigned Blocks, dim3 Block) -> cudaError_t {
        constexpr DType T = decltype(Tag)::value;
        if (Rows)
          return launchKernel(reduceRowsKernel<T>, Blocks, Block, 0, Stream, P,
                              X, Y);
        else
          return launchKernel(reduceColumnsKernel<T>, Blocks, Block, 0, Stream,
                              P, X, Y);
      });
}

cudaError_t launchSoftmax(const SoftmaxParams &P, const void *X, void *Y,
                          cudaStream_t Stream) {
  if (P.XType != P.YType || !validShape(P.Outer, P.Axis, P.Inner))
    return cudaErrorInvalidValue;
  if (P.Outer * P.Axis * P.Inner == 0)
    return cudaSuccess;
  return launchShaped(
      P.XType, P.Outer, P.Axis, P.Inner,
      [&](auto Tag, bool Rows, unsigned Blocks, dim3 Block) -> cudaError_t {
        constexpr DType T = decltype(Tag)::value;
        if (Rows)
          return launchKernel(softmaxRowsKernel<T>, Blocks, Block, 0, Stream, P,
                              X, Y);
        else
          return launchKernel(softmaxColumnsKernel<T>, Blocks, Block, 0, Stream,
                              P, X, Y);
      });
}

cudaError_t launchNorm(const NormParams &P, const void *X, const float *Scale,
                       const float *Bias, void *Y, float *Mean, float *InvStd,
                       cudaStream_t Stream) {
  if (P.XType != P.YType || !validShape(P.Outer, P.Reduced, P.Inner) ||
      (P.Affine == NormParams::ByOuterChannel && P.Channels < 1))
    return cudaErrorInvalidValue;
  if (P.Outer * P.Reduced * P.Inner == 0)
    return cudaSuccess;
  return launchShaped(
      P.XType, P.Outer, P.Reduced, P.Inner,
      [&](auto Tag, bool Rows, unsigned Blocks, dim3 Block) -> cudaError_t {
        constexpr DType T = decltype(Tag)::value;
        if (Rows)
          return launchKernel(normRowsKernel<T>, Blocks, Block, 0, Stream, P, X,
                              Scale, Bias, Y, Mean, InvStd);
        else
          return launchKernel(normColumnsKernel<T>, Blocks, Block, 0, Stream, P,
                              X, Scale, Bias, Y, Mean, InvStd);
      });
}

namespace {

/// \p V summed over the block's threads (BatchStatsThreads); every thread
/// gets the sum.
__device__ double sumAcrossBlock(double V, double *Partial) {
  Partial[threadIdx.x] = V;
  __syncthreads();
  for (int Half = BatchStatsThreads / 2; Half > 0; Half /= 2) {
    if (int(threadIdx.x) < Half)
      Partial[threadIdx.x] += Partial[threadIdx.x + Half];
    __syncthreads();
  }
  const double Sum = Partial[0];
  __syncthreads(); // Partial is reused.
  return Sum;
}

/// Block c: channel c's mean, then its variance about the mean (two
/// passes, in double), then its results.
template <DType T>
__global__ void __launch_bounds__(BatchStatsThreads)
    batchStatsKernel(BatchStatsParams P, const void *X, const float *Gamma,
                     const float *Beta, const float *InMean, const float *InVar,
                     float *Scale, float *Shift, float *RunMean,
                     float *RunVar) {
  __shared__ double Partial[BatchStatsThreads];
  const int64_t C = blockIdx.x, Count = P.N * P.Pixels;
  double Sum = 0.0;
  for (int64_t K = threadIdx.x; K < Count; K += BatchStatsThreads)
    Sum += loadAs<T>(X, getBatchStatsOffset(P, C, K));
  const double Mean = sumAcrossBlock(Sum, Partial) / double(Count);
  double Squares = 0.0;
  for (int64_t K = threadIdx.x; K < Count; K += BatchStatsThreads) {
    const double D = loadAs<T>(X, getBatchStatsOffset(P, C, K)) - Mean;
    Squares += D * D;
  }
  const double Var = sumAcrossBlock(Squares, Partial) / double(Count);
  if (threadIdx.x == 0)
    finishBatchStats(P, C, Mean, Var, Gamma, Beta, InMean, InVar, Scale, Shift,
                     RunMean, RunVar);
}

} // namespace

cudaError_t launchBatchStats(const BatchStatsParams &P, const void *X,
                             const float *Gamma, const float *Beta,
                             const float *InMean, const float *InVar,
                             float *Scale, float *Shift, float *RunMean,
                             float *RunVar, cudaStream_t Stream) {
  if (P.N < 0 || P.C < 0 || P.Pixels < 1 || P.C > (int64_t(1) << 31) - 1 ||
      (RunMean && !InMean) || (RunVar && !InVar))
    return cudaErrorInvalidValue;
  if (P.C == 0)
    return cudaSuccess;
  return dispatchType(P.Type, [&](auto Tag) {
    return launchKernel(batchStatsKernel<decltype(Tag)::value>, unsigned(P.C),
                        BatchStatsThreads, 0, Stream, P, X, Gamma, Beta, InMean,
                        InVar, Scale, Shift, RunMean, RunVar);
  });
}

namespace {

/// One thread per element; consecutive threads take consecutive Inner
/// positions (NCHW) or channels (NHWC), so the window's loads coalesce.
template <DType T>
__global__ void __launch_bounds__(256)
    lrnKernel(LrnParams P, int64_t Count, const void *X, void *Y) {
  const int64_t Step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t I = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; I < Count;
       I += Step) {
    const int64_t C = I / P.Inner % P.Len;
    const int64_t Base = I - C * P.Inner;
    const LrnWindow W = getLrnWindow(P, C);
    float Sum = 0.0f;
    for (int64_t K = W.Lo; K < W.Hi; ++K) {
      const float V = loadAs<T>(X, Base + K * P.Inner);
      Sum += V * V;
    }
    storeAs<T>(Y, I, lrnScale(P, loadAs<T>(X, I), Sum));
  }
}

} // namespace

cudaError_t launchLrn(const LrnParams &P, const void *X, void *Y,
                      cudaStream_t Stream) {
  if (P.Size < 1 || !validShape(P.Outer, P.Len, P.Inner))
    return cudaErrorInvalidValue;
  const int64_t Count = P.Outer * P.Len * P.Inner;
  if (Count == 0)
    return cudaSuccess;
  const unsigned Blocks = getBlocks(Count, 256);
  return dispatchType(P.Type, [&](auto Tag) -> cudaError_t {
    return launchKernel(lrnKernel<decltype(Tag)::value>, Blocks, 256, 0, Stream,
                        P, Count, X, Y);
  });
}

STRIDER_KERNELS_NAMESPACE_END
} // namespace cuda
} // namespace strider
