//===- PoolingKernels.cu - Max and average pooling ------------------------===//
//
// MaxPool / AveragePool over 1-3 spatial dims (normalized to 3), NCHW or
// NHWC: one thread per output element, visiting only the window taps
// inside the input (DeviceMath.h's getPoolTaps). In NHWC consecutive
// threads take consecutive channels, so every tap is a coalesced load.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"
#include "DeviceTypes.cuh"

namespace strider {
namespace cuda {
STRIDER_KERNELS_NAMESPACE_BEGIN
namespace {

constexpr int Threads = 256;

/// \p P is normalized to 3 spatial dims.
template <DType T>
__global__ void __launch_bounds__(Threads)
    poolKernel(PoolParams P, int64_t Count, const void *X, void *Y) {
  const int64_t Step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t I = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; I < Count;
       I += Step) {
    // Output coordinates: (n, c, d, h, w) or (n, d, h, w, c), Y dense.
    int64_t Rest = I, C = 0;
    if (P.ChannelsLast) {
      C = Rest % P.C;
      Rest /= P.C;
    }
    const int64_t OW = Rest % P.Out[2];
    Rest /= P.Out[2];
    const int64_t OH = Rest % P.Out[1];
    Rest /= P.Out[1];
    const int64_t OD = Rest % P.Out[0];
    Rest /= P.Out[0];
    if (!P.ChannelsLast) {
      C = Rest % P.C;
      Rest /= P.C;
    }
    const int64_t N = Rest;
    // Element strides of X's spatial dims and the offset of (n, c).
    const int64_t Pixels = P.In[0] * P.In[1] * P.In[2];
    const int64_t Unit = P.ChannelsLast ? P.C : 1;
    const int64_t SW = Unit, SH = P.In[2] * SW, SD = P.In[1] * SH;
    const int64_t Base =
        P.ChannelsLast ? N * Pixels * P.C + C : (N * P.C + C) * Pixels;

    const PoolTaps TD =
        getPoolTaps(OD, P.In[0], P.Kernel[0], P.Stride[0], P.Dilation[0],
                    P.PadBegin[0], P.PadEnd[0], P.CountIncludePad);
    const PoolTaps TH =
        getPoolTaps(OH, P.In[1], P.Kernel[1], P.Stride[1], P.Dilation[1],
                    P.PadBegin[1], P.PadEnd[1], P.CountIncludePad);
    const PoolTaps TW =
        getPoolTaps(OW, P.In[2], P.Kernel[2], P.Stride[2], P.Dilation[2],
                    P.PadBegin[2], P.PadEnd[2], P.CountIncludePad);
    const int64_t ID = OD * P.Stride[0] - P.PadBegin[0];
    const int64_t IH = OH * P.Stride[1] - P.PadBegin[1];
    const int64_t IW = OW * P.Stride[2] - P.PadBegin[2];
    float Acc = P.Max ? -INFINITY : 0.0f;
    for (int64_t KD = TD.Lo; KD < TD.Hi; ++KD) {
      const int64_t OffD = Base + (ID + KD * P.Dilation[0]) * SD;
      for (int64_t KH = TH.Lo; KH < TH.Hi; ++KH) {
        const int64_t OffH = OffD + (IH + KH * P.Dilation[1]) * SH;
        for (int64_t KW = TW.Lo; KW < TW.Hi; ++KW) {
          const float V = loadAs<T>(X, OffH + (IW + KW * P.Dilation[2]) * SW);
          Acc = P.Max ? fmaxf(Acc, V) : Acc + V;
        }
      }
    }
    if (!P.Max)
      Acc = getAverage(Acc, TD.Counted * TH.Counted * TW.Counted);
    storeAs<T>(Y, I, Acc);
  }
}

} // namespace

cudaError_t launchPool(const PoolParams &P, const void *X, void *Y,
                       cudaStream_t Stream) {
  if (P.Spatial < 1 || P.Spatial > 3)
    return cudaErrorInvalidValue;
  const PoolParams Q = normalizePool(P);
  for (int D = 0; D < 3; ++D)
    if (Q.Kernel[D] < 1 || Q.Stride[D] < 1 || Q.Dilation[D] < 1)
      return cudaErrorInvalidValue;
  const int64_t Count = Q.N * Q.C * Q.Out[0] * Q.Out[1] * Q.Out[2];
  if (Count <= 0)
    return cudaSuccess;
  const unsigned Blocks = getBlocks(Count, Threads);
  return dispatchType(Q.Type, [&](auto Tag) -> cudaError_t {
    return launchKernel(poolKernel<decltype(Tag)::value>, Blocks, Threads, 0,
                        Stream, Q, Count, X, Y);
  });
}

STRIDER_KERNELS_NAMESPACE_END
} // namespace cuda
} // namespace strider
