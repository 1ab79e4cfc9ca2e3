//===- PoolingKernels.cu - Max and average pooling ------------------------===//
//
// MaxPool / AveragePool over 1-3 spatial dims (normalized to 3), NCHW or
// NHWC: one thread per output element, visiting only the window taps
// inside the input (DeviceMath.h's evalPool, which the host model runs
// too). In NHWC consecutive threads take consecutive channels, so every
// tap is a coalesced load. MaxPool also of i8 and u8, and with its
// Indices result.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"
#include "DeviceTypes.cuh"

namespace strider {
namespace cuda {
STRIDER_KERNELS_NAMESPACE_BEGIN
namespace {

constexpr int Threads = 256;

/// Element access of the float storage types.
template <DType T> struct FloatElements {
  static __device__ __forceinline__ float load(const void *X, int64_t I) {
    return loadAs<T>(X, I);
  }
  static __device__ __forceinline__ void store(void *Y, int64_t I, float V) {
    storeAs<T>(Y, I, V);
  }
};

/// Element access of i8 and u8 (MaxPool): exact as floats; an empty
/// window's -inf (outside every byte's range) stores 0.
template <typename Int> struct ByteElements {
  static __device__ __forceinline__ float load(const void *X, int64_t I) {
    return float(static_cast<const Int *>(X)[I]);
  }
  static __device__ __forceinline__ void store(void *Y, int64_t I, float V) {
    static_cast<Int *>(Y)[I] = V >= -128.0f && V <= 255.0f ? Int(V) : Int(0);
  }
};

/// \p P is normalized to 3 spatial dims. One thread per output element;
/// in NHWC consecutive threads take consecutive channels.
template <typename Elements>
__global__ void __launch_bounds__(Threads)
    poolKernel(PoolParams P, int64_t Count, const void *X, void *Y,
               int64_t *Indices) {
  const int64_t Step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t I = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; I < Count;
       I += Step) {
    const PoolResult R =
        evalPool(P, I, [&](int64_t Off) { return Elements::load(X, Off); });
    Elements::store(Y, I, R.Value);
    if (Indices)
      Indices[I] = R.Index;
  }
}

} // namespace

cudaError_t launchPool(const PoolParams &P, const void *X, void *Y,
                       int64_t *Indices, cudaStream_t Stream) {
  if (P.Spatial < 1 || P.Spatial > 3 || (Indices && !P.Max))
    return cudaErrorInvalidValue;
  const PoolParams Q = normalizePool(P);
  for (int D = 0; D < 3; ++D)
    if (Q.Kernel[D] < 1 || Q.Stride[D] < 1 || Q.Dilation[D] < 1)
      return cudaErrorInvalidValue;
  const int64_t Count = Q.N * Q.C * Q.Out[0] * Q.Out[1] * Q.Out[2];
  if (Count <= 0)
    return cudaSuccess;
  const unsigned Blocks = getBlocks(Count, Threads);
  auto Launch = [&](auto Kernel) {
    return launchKernel(Kernel, Blocks, Threads, 0, Stream, Q, Count, X, Y,
                        Indices);
  };
  switch (Q.Type) {
  case ScalarType::F32:
    return Launch(poolKernel<FloatElements<DType::F32>>);
  case ScalarType::F16:
    return Launch(poolKernel<FloatElements<DType::F16>>);
  case ScalarType::BF16:
    return Launch(poolKernel<FloatElements<DType::BF16>>);
  case ScalarType::I8:
    return Q.Max ? Launch(poolKernel<ByteElements<int8_t>>)
                 : cudaErrorInvalidValue;
  case ScalarType::U8:
    return Q.Max ? Launch(poolKernel<ByteElements<uint8_t>>)
                 : cudaErrorInvalidValue;
  default:
    return cudaErrorInvalidValue;
  }
}

STRIDER_KERNELS_NAMESPACE_END
} // namespace cuda
} // namespace strider
