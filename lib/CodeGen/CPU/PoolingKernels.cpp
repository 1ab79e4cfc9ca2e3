//===- PoolingKernels.cpp - Channels-last and global pooling --------------===//
//
// Windowed pooling vectorizes over contiguous channels, one output pixel
// at a time, visiting only the taps inside the input (averages divide by
// their count: count_include_pad = 0). Global pooling reduces over pixels
// with a vector of channels when channels are contiguous, and along each
// contiguous channel plane otherwise.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "PoolingKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"
#include "Parallel.h"
#include "SimdTail-inl.h"

#include "hwy/highway.h"

#include <limits>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void PoolRowImpl(const PoolParams &P, const float *X, float *Y, int64_t OD,
                 int64_t OH) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  for (int64_t OW = 0; OW < P.Out[2]; ++OW) {
    const int64_t Pos[3] = {OD, OH, OW};
    int64_t Lo[3], Hi[3], Count = 1;
    for (int Dm = 0; Dm < 3; ++Dm) {
      const int64_t Base = Pos[Dm] * P.Stride[Dm] - P.Pad[Dm];
      Lo[Dm] = 0;
      while (Lo[Dm] < P.Kernel[Dm] && Base + Lo[Dm] * P.Dilation[Dm] < 0)
        ++Lo[Dm];
      Hi[Dm] = P.Kernel[Dm];
      while (Hi[Dm] > Lo[Dm] &&
             Base + (Hi[Dm] - 1) * P.Dilation[Dm] >= P.In[Dm])
        --Hi[Dm];
      Count *= Hi[Dm] - Lo[Dm];
    }
    float *Out = Y + OD * P.YS[0] + OH * P.YS[1] + OW * P.YS[2];
    for (int64_t C0 = 0; C0 < P.Channels; C0 += L) {
      const size_t Valid = size_t(std::min<int64_t>(L, P.Channels - C0));
      auto Acc = P.Max ? hn::Set(d, -std::numeric_limits<float>::infinity())
                       : hn::Zero(d);
      for (int64_t KD = Lo[0]; KD < Hi[0]; ++KD)
        for (int64_t KH = Lo[1]; KH < Hi[1]; ++KH)
          for (int64_t KW = Lo[2]; KW < Hi[2]; ++KW) {
            const float *Src =
                X +
                (Pos[0] * P.Stride[0] - P.Pad[0] + KD * P.Dilation[0]) *
                    P.XS[0] +
                (Pos[1] * P.Stride[1] - P.Pad[1] + KH * P.Dilation[1]) *
                    P.XS[1] +
                (Pos[2] * P.Stride[2] - P.Pad[2] + KW * P.Dilation[2]) *
                    P.XS[2] +
                C0;
            const auto V = loadTail(d, Src, Valid);
            Acc = P.Max ? hn::Max(Acc, V) : hn::Add(Acc, V);
          }
      if (!P.Max)
        Acc = hn::Mul(Acc, hn::Set(d, Count ? 1.0f / float(Count) : 0.0f));
      storeTail(d, Acc, Out + C0, Valid);
    }
  }
}

/// Channels [C0, C1) of a global pool with contiguous channels.
void GlobalPoolVecImpl(bool Max, int64_t Pixels, int64_t C0, int64_t C1,
                       int64_t PixelStride, const float *X, float *Y) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  for (; C0 < C1; C0 += L) {
    const size_t Valid = size_t(std::min<int64_t>(L, C1 - C0));
    auto Acc =
        Max ? hn::Set(d, -std::numeric_limits<float>::infinity()) : hn::Zero(d);
    for (int64_t P = 0; P < Pixels; ++P) {
      const float *Src = X + P * PixelStride + C0;
      const auto V = loadTail(d, Src, Valid);
      Acc = Max ? hn::Max(Acc, V) : hn::Add(Acc, V);
    }
    if (!Max)
      Acc = hn::Mul(Acc, hn::Set(d, 1.0f / float(Pixels)));
    storeTail(d, Acc, Y + C0, Valid);
  }
}

} // namespace HWY_NAMESPACE
} // namespace cpu
} // namespace strider
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strider {
namespace cpu {

HWY_EXPORT(PoolRowImpl);
HWY_EXPORT(GlobalPoolVecImpl);

void runPoolChannelsLast(const PoolParams &P, const float *X, float *Y,
                         int Threads) {
  parallelFor(P.Out[0] * P.Out[1], Threads, [&](int64_t R) {
    HWY_DYNAMIC_DISPATCH(PoolRowImpl)(P, X, Y, R / P.Out[1], R % P.Out[1]);
  });
}

void runGlobalPool(bool Max, int64_t Pixels, int64_t Channels,
                   int64_t PixelStride, int64_t ChannelStride, const float *X,
                   float *Y, int64_t YStride, int Threads) {
  if (ChannelStride == 1 && YStride == 1) {
    const int64_t L = 16;
    parallelFor((Channels + L - 1) / L, Threads, [&](int64_t I) {
      HWY_DYNAMIC_DISPATCH(GlobalPoolVecImpl)
      (Max, Pixels, I * L, std::min(Channels, (I + 1) * L), PixelStride, X, Y);
    });
    return;
  }
  parallelFor(Channels, Threads, [&](int64_t C) {
    const float *Src = X + C * ChannelStride;
    double Acc = Max ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t P = 0; P < Pixels; ++P) {
      float V = Src[P * PixelStride];
      Acc = Max ? std::max<double>(Acc, V) : Acc + V;
    }
    Y[C * YStride] = float(Max ? Acc : Acc / double(Pixels));
  });
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
