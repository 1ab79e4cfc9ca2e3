//===- ResampleKernels.cpp - Channels-last Resize -------------------------===//
//
// Resize over the spatial dims of a channels-last tensor: the per-axis
// sampling (runtime::computeResizeSampling, the definition the reference
// interpreter executes too) is tabulated at compile time as element offsets
// and weights; each output pixel sums its taps' channel vectors, its taps
// (offset, weight product) listed once for all its channels. A pixel of
// one tap of weight 1 (nearest, or an integer scale's aligned sample) is
// a copy of its source's channels.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ResampleKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"
#include "Parallel.h"
#include "SimdTail-inl.h"

#include "hwy/highway.h"
#include "llvm/ADT/SmallVector.h"

#include <cstring>

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
  // The row's taps along d and h, combined: the same for every pixel.
  llvm::SmallVector<int64_t, 16> RowOff;
  llvm::SmallVector<float, 16> RowW;
  for (int64_t I = AD.Begin[OD]; I < AD.Begin[OD + 1]; ++I)
    for (int64_t J = AH.Begin[OH]; J < AH.Begin[OH + 1]; ++J) {
      RowOff.push_back(AD.Offset[I] + AH.Offset[J]);
      RowW.push_back(AD.Weight[I] * AH.Weight[J]);
    }
  llvm::SmallVector<int64_t, 64> Off;
  llvm::SmallVector<float, 64> Wt;
  float *Row = Y + OD * P.YS[0] + OH * P.YS[1];
  for (int64_t OW = 0; OW < P.Out[2]; ++OW) {
    float *Out = Row + OW * P.YS[2];
    Off.clear();
    Wt.clear();
    for (size_t R = 0; R < RowOff.size(); ++R)
      for (int64_t K = AW.Begin[OW]; K < AW.Begin[OW + 1]; ++K) {
        Off.push_back(RowOff[R] + AW.Offset[K]);
        Wt.push_back(RowW[R] * AW.Weight[K]);
      }
    if (Off.size() == 1 && Wt[0] == 1.0f) {
      std::memcpy(Out, X + Off[0], size_t(P.Channels) * sizeof(float));
      continue;
    }
    for (int64_t C0 = 0; C0 < P.Channels; C0 += L) {
      const size_t Valid = size_t(std::min<int64_t>(L, P.Channels - C0));
      auto Acc = hn::Zero(d);
      for (size_t T = 0; T < Off.size(); ++T)
        Acc = hn::MulAdd(loadTail(d, X + Off[T] + C0, Valid), hn::Set(d, Wt[T]),
                         Acc);
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

void runResampleCopy(const ResampleParams &P, const uint8_t *X, uint8_t *Y,
                     unsigned Bytes, int Threads) {
  const ResampleAxis &AD = P.Axes[0], &AH = P.Axes[1], &AW = P.Axes[2];
  const size_t PixelBytes = size_t(P.Channels) * Bytes;
  parallelFor(P.Out[0] * P.Out[1], Threads, [&](int64_t R) {
    const int64_t OD = R / P.Out[1], OH = R % P.Out[1];
    const int64_t Row =
        AD.Offset[size_t(AD.Begin[OD])] + AH.Offset[size_t(AH.Begin[OH])];
    uint8_t *Out = Y + (OD * P.YS[0] + OH * P.YS[1]) * Bytes;
    for (int64_t OW = 0; OW < P.Out[2]; ++OW)
      std::memcpy(Out + OW * P.YS[2] * Bytes,
                  X + (Row + AW.Offset[size_t(AW.Begin[OW])]) * Bytes,
                  PixelBytes);
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
