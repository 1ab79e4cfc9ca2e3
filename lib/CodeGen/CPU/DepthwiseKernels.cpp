//===- DepthwiseKernels.cpp - Channels-last depthwise convolution ---------===//
//
// One output pixel at a time, one vector of channels at a time: the sum
// over the taps that fall inside the input (padding taps are skipped, not
// multiplied by zero), then bias, residual and activation, then one store.
// Rows of output pixels are spread over threads.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "DepthwiseKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"
#include "Parallel.h"
#include "SimdActivation-inl.h"

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void DepthwiseRowImpl(const DepthwiseParams &P, const float *X, const float *W,
                      const float *Bias, const float *Residual,
                      const Activation &Act, float *Y, int64_t OD, int64_t OH) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const int64_t C = P.Channels;
  for (int64_t OW = 0; OW < P.Out[2]; ++OW) {
    const int64_t Pos[3] = {OD, OH, OW};
    // The taps inside the input, per dim.
    int64_t Lo[3], Hi[3];
    for (int Dm = 0; Dm < 3; ++Dm) {
      const int64_t Base = Pos[Dm] * P.Stride[Dm] - P.Pad[Dm];
      Lo[Dm] = 0;
      while (Lo[Dm] < P.Kernel[Dm] && Base + Lo[Dm] * P.Dilation[Dm] < 0)
        ++Lo[Dm];
      Hi[Dm] = P.Kernel[Dm];
      while (Hi[Dm] > Lo[Dm] &&
             Base + (Hi[Dm] - 1) * P.Dilation[Dm] >= P.In[Dm])
        --Hi[Dm];
    }
    const int64_t YOff = OD * P.YS[0] + OH * P.YS[1] + OW * P.YS[2];
    for (int64_t C0 = 0; C0 < C; C0 += L) {
      const size_t Valid = size_t(std::min<int64_t>(L, C - C0));
      const auto Mask = hn::FirstN(d, Valid);
      auto Acc = hn::LoadU(d, Bias + C0);
      for (int64_t KD = Lo[0]; KD < Hi[0]; ++KD) {
        const int64_t ID = Pos[0] * P.Stride[0] - P.Pad[0] + KD * P.Dilation[0];
        for (int64_t KH = Lo[1]; KH < Hi[1]; ++KH) {
          const int64_t IH =
              Pos[1] * P.Stride[1] - P.Pad[1] + KH * P.Dilation[1];
          for (int64_t KW = Lo[2]; KW < Hi[2]; ++KW) {
            const int64_t IW =
                Pos[2] * P.Stride[2] - P.Pad[2] + KW * P.Dilation[2];
            const float *Src =
                X + ID * P.XS[0] + IH * P.XS[1] + IW * P.XS[2] + C0;
            const int64_t Tap = (KD * P.Kernel[1] + KH) * P.Kernel[2] + KW;
            const auto XV = Valid == size_t(L) ? hn::LoadU(d, Src)
                                               : hn::MaskedLoad(Mask, d, Src);
            Acc = hn::MulAdd(XV, hn::LoadU(d, W + Tap * P.WeightStride + C0),
                             Acc);
          }
        }
      }
      if (Residual) {
        const float *R = Residual + YOff + C0;
        Acc = hn::Add(Acc, Valid == size_t(L) ? hn::LoadU(d, R)
                                              : hn::MaskedLoad(Mask, d, R));
      }
      Acc = applyActivation(d, Act, Acc);
      if (Valid == size_t(L))
        hn::StoreU(Acc, d, Y + YOff + C0);
      else
        hn::BlendedStore(Acc, Mask, d, Y + YOff + C0);
    }
  }
}

} // namespace HWY_NAMESPACE
} // namespace cpu
} // namespace strider
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strider {
namespace cpu {

HWY_EXPORT(DepthwiseRowImpl);

void runDepthwise(const DepthwiseParams &P, const float *X, const float *W,
                  const float *Bias, const float *Residual,
                  const Activation &Act, float *Y, int Threads) {
  const int64_t Rows = P.Out[0] * P.Out[1];
  parallelFor(Rows, Threads, [&](int64_t R) {
    HWY_DYNAMIC_DISPATCH(DepthwiseRowImpl)
    (P, X, W, Bias, Residual, Act, Y, R / P.Out[1], R % P.Out[1]);
  });
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
