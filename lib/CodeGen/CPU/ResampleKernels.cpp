//===- ResampleKernels.cpp - Channels-last Resize -------------------------===//
//
// Resize over the spatial dims of a channels-last tensor: the per-axis
// sampling (runtime::computeResizeSampling, the definition the reference
// interpreter executes too) is tabulated at compile time as element offsets
// and weights; each output pixel sums its taps' channel vectors.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ResampleKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"
#include "Parallel.h"
#include "SimdTail-inl.h"

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void ResampleRowImpl(const ResampleParams &P, const float *X, float *Y,
                     int64_t OD, int64_t OH) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const ResampleAxis &AD = P.Axes[0], &AH = P.Axes[1], &AW = P.Axes[2];
  for (int64_t OW = 0; OW < P.Out[2]; ++OW) {
    float *Out = Y + OD * P.YS[0] + OH * P.YS[1] + OW * P.YS[2];
    for (int64_t C0 = 0; C0 < P.Channels; C0 += L) {
      const size_t Valid = size_t(std::min<int64_t>(L, P.Channels - C0));
      auto Acc = hn::Zero(d);
      for (int64_t I = AD.Begin[OD]; I < AD.Begin[OD + 1]; ++I)
        for (int64_t J = AH.Begin[OH]; J < AH.Begin[OH + 1]; ++J)
          for (int64_t K = AW.Begin[OW]; K < AW.Begin[OW + 1]; ++K) {
            const float *Src =
                X + AD.Offset[I] + AH.Offset[J] + AW.Offset[K] + C0;
            const auto V = loadTail(d, Src, Valid);
            const float W = AD.Weight[I] * AH.Weight[J] * AW.Weight[K];
            Acc = hn::MulAdd(V, hn::Set(d, W), Acc);
          }
      storeTail(d, Acc, Out + C0, Valid);
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

HWY_EXPORT(ResampleRowImpl);

void runResampleChannelsLast(const ResampleParams &P, const float *X, float *Y,
                             int Threads) {
  parallelFor(P.Out[0] * P.Out[1], Threads, [&](int64_t R) {
    HWY_DYNAMIC_DISPATCH(ResampleRowImpl)(P, X, Y, R / P.Out[1], R % P.Out[1]);
  });
}

void runGridSample(const GridSampleParams &P, const float *X, const float *G,
                   float *Y, int Threads) {
  parallelFor(P.N * P.OH, Threads, [&](int64_t Row) {
    const int64_t B = Row / P.OH, OY = Row % P.OH;
    const float *XB = X + B * P.XS[0];
    for (int64_t OX = 0; OX < P.OW; ++OX) {
      const float *Point = G + ((B * P.OH + OY) * P.OW + OX) * 2;
      int64_t Offset[16];
      float Weight[16];
      int Taps = 0;
      const bool Finite =
          gridsample::forEachTap(P.Opts, P.H, P.W, Point[0], Point[1],
                                 [&](int64_t YI, int64_t XI, double Wt) {
                                   Offset[Taps] = YI * P.XS[2] + XI * P.XS[3];
                                   Weight[Taps++] = float(Wt);
                                 });
      float *Out = Y + B * P.YS[0] + OY * P.YS[2] + OX * P.YS[3];
      for (int64_t C = 0; C < P.C; ++C) {
        const float *Plane = XB + C * P.XS[1];
        float Sum = Finite ? 0.0f : NAN;
        for (int T = 0; T < Taps; ++T)
          Sum += Weight[T] * Plane[Offset[T]];
        Out[C * P.YS[1]] = Sum;
      }
    }
  });
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
