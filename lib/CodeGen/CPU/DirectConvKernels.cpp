//===- DirectConvKernels.cpp - Convs with few taps times input channels ---===//
//
// A conv whose input channels times taps are few (a first layer reading an
// RGB or gray image: 3 x 3 x 3 = 27) and whose output channels are
// contiguous is not worth a GEMM: its K is too short to amortize packing.
// Here each output pixel's channels are a few vectors (up to four at a
// time), and each tap multiplies one input element, broadcast, by a vector
// of the tap's weights: NP pixels at a time share each weight vector
// loaded (NP broadcasts and CV weight loads per NP x CV multiply-adds).
// The input is read in place through its strides (channels-first or
// -last). Pixels whose window lies inside along w go NP at a time with
// the row's tap list; border pixels one at a time with theirs. Then bias,
// residual and activation, and one store. Rows of output pixels are spread
// over threads.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "DirectConvKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"
#include "Parallel.h"
#include "SimdActivation-inl.h"
#include "SimdTail-inl.h"

#include "hwy/highway.h"
#include "llvm/ADT/SmallVector.h"

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// \p NP output pixels \p PixStep input elements apart, output channels
/// [C0, C0 + CV vectors) (the last vector \p Valid lanes): the sum over
/// the \p NumTaps taps (input offset Offsets[T] from \p X, weight row
/// Rows[T] of \p W, \p WS floats apart).
template <int CV, int NP>
HWY_INLINE void directBlock(const float *HWY_RESTRICT X, int64_t PixStep,
                            const int64_t *Offsets, const int64_t *Rows,
                            int64_t NumTaps, const float *HWY_RESTRICT W,
                            int64_t WS, const float *HWY_RESTRICT Bias,
                            const float *Residual, int64_t ResStep,
                            const Activation &Act, float *HWY_RESTRICT Y,
                            int64_t YStep, size_t Valid) {
  const hn::ScalableTag<float> d;
  using V = decltype(hn::Zero(d));
  const int64_t L = int64_t(hn::Lanes(d));
  V Acc[NP][CV];
  for (int C = 0; C < CV; ++C) {
    const V B = hn::LoadU(d, Bias + C * L);
    for (int P = 0; P < NP; ++P)
      Acc[P][C] = B;
  }
  for (int64_t T = 0; T < NumTaps; ++T) {
    const float *Wt = W + Rows[T] * WS;
    V Wv[CV];
    for (int C = 0; C < CV; ++C)
      Wv[C] = hn::LoadU(d, Wt + C * L);
    const float *Src = X + Offsets[T];
    for (int P = 0; P < NP; ++P, Src += PixStep) {
      const V Xv = hn::Set(d, *Src);
      for (int C = 0; C < CV; ++C)
        Acc[P][C] = hn::MulAdd(Xv, Wv[C], Acc[P][C]);
    }
  }
  for (int P = 0; P < NP; ++P)
    for (int C = 0; C < CV; ++C) {
      const size_t N = C + 1 == CV ? Valid : size_t(L);
      V A = Acc[P][C];
      if (Residual)
        A = hn::Add(A, loadTail(d, Residual + P * ResStep + C * L, N));
      storeTail(d, applyActivation(d, Act, A), Y + P * YStep + C * L, N);
    }
}

/// Pixels per directBlock step for CV vectors of channels: what the vector
/// registers hold (NP x CV accumulators, CV weight vectors, a broadcast),
/// at most 8.
template <int CV> constexpr int directPixelsPerStep() {
  constexpr int Regs = HWY_MAX_BYTES >= 64 ? 32 : 16;
  return (Regs - CV - 1) / CV < 8 ? (Regs - CV - 1) / CV : 8;
}

/// Output pixels [\p Begin, \p End) of a row, all with the taps listed,
/// channels [C0, C0 + CV vectors): NP at a time, then one by one.
template <int CV>
void directRun(const DirectConvParams &P, const float *Row,
               const int64_t *Offsets, const int64_t *Rows, int64_t NumTaps,
               const float *W, const float *Bias, const float *Res,
               const Activation &Act, float *Out, int64_t Begin, int64_t End,
               int64_t C0, size_t Valid) {
  constexpr int NP = directPixelsPerStep<CV>();
  const int64_t PixStep = P.Stride[2] * P.XS[2];
  auto At = [&](int64_t OW) {
    return Row + (OW * P.Stride[2] - P.Pad[2]) * P.XS[2];
  };
  int64_t OW = Begin;
  for (; OW + NP <= End; OW += NP)
    directBlock<CV, NP>(At(OW), PixStep, Offsets, Rows, NumTaps, W + C0,
                        P.WeightStride, Bias + C0,
                        Res ? Res + OW * P.YS[2] + C0 : nullptr, P.YS[2], Act,
                        Out + OW * P.YS[2] + C0, P.YS[2], Valid);
  for (; OW < End; ++OW)
    directBlock<CV, 1>(At(OW), PixStep, Offsets, Rows, NumTaps, W + C0,
                       P.WeightStride, Bias + C0,
                       Res ? Res + OW * P.YS[2] + C0 : nullptr, P.YS[2], Act,
                       Out + OW * P.YS[2] + C0, P.YS[2], Valid);
}

/// directRun over every group of up to four vectors of output channels.
void directChannels(const DirectConvParams &P, const float *Row,
                    const int64_t *Offsets, const int64_t *Rows,
                    int64_t NumTaps, const float *W, const float *Bias,
                    const float *Res, const Activation &Act, float *Out,
                    int64_t Begin, int64_t End) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  for (int64_t C0 = 0; C0 < P.Cout; C0 += 4 * L) {
    const int64_t Left = P.Cout - C0;
    const int CV = int(std::min<int64_t>(4, (Left + L - 1) / L));
    const size_t Valid = size_t(std::min<int64_t>(L, Left - (CV - 1) * L));
    switch (CV) {
#define STRIDER_DIRECT_CASE(N)                                                 \
  case N:                                                                      \
    directRun<N>(P, Row, Offsets, Rows, NumTaps, W, Bias, Res, Act, Out,       \
                 Begin, End, C0, Valid);                                       \
    break;
      STRIDER_DIRECT_CASE(1)
      STRIDER_DIRECT_CASE(2)
      STRIDER_DIRECT_CASE(3)
      STRIDER_DIRECT_CASE(4)
#undef STRIDER_DIRECT_CASE
    }
  }
}

void DirectConvRowImpl(const DirectConvParams &P, const float *X,
                       const float *W, const float *Bias, const float *Residual,
                       const Activation &Act, float *Y, int64_t OD,
                       int64_t OH) {
  // Taps inside the input along d and h are the same for the whole row.
  const RowTaps RT = getRowTaps(P, OD, OH);
  const int64_t *Lo = RT.Lo, *Hi = RT.Hi, *Base = RT.Base;
  // Input offsets (from the pixel at the window's origin) and weight rows
  // of the taps inside along d and h, and along w over [KWLo, KWHi).
  llvm::SmallVector<int64_t, 64> Off, Rows;
  auto ListTaps = [&](int64_t KWLo, int64_t KWHi) {
    Off.clear();
    Rows.clear();
    for (int64_t C = 0; C < P.Cin; ++C)
      for (int64_t KD = Lo[0]; KD < Hi[0]; ++KD)
        for (int64_t KH = Lo[1]; KH < Hi[1]; ++KH)
          for (int64_t KW = KWLo; KW < KWHi; ++KW) {
            Off.push_back(C * P.XC + KD * P.Dilation[0] * P.XS[0] +
                          KH * P.Dilation[1] * P.XS[1] +
                          KW * P.Dilation[2] * P.XS[2]);
            Rows.push_back(
                ((C * P.Kernel[0] + KD) * P.Kernel[1] + KH) * P.Kernel[2] + KW);
          }
  };
  const float *Row = X + Base[0] * P.XS[0] + Base[1] * P.XS[1];
  const float *Res =
      Residual ? Residual + OD * P.YS[0] + OH * P.YS[1] : nullptr;
  float *Out = Y + OD * P.YS[0] + OH * P.YS[1];
  // The output columns whose windows lie inside along w: [WLo, WHi).
  int64_t WLo = 0, WHi = P.Out[2];
  auto Inside = [&](int64_t OW) {
    const int64_t BW = OW * P.Stride[2] - P.Pad[2];
    return BW >= 0 && BW + (P.Kernel[2] - 1) * P.Dilation[2] < P.In[2];
  };
  while (WLo < WHi && !Inside(WLo))
    ++WLo;
  while (WHi > WLo && !Inside(WHi - 1))
    --WHi;
  ListTaps(0, P.Kernel[2]);
  directChannels(P, Row, Off.data(), Rows.data(), int64_t(Off.size()), W, Bias,
                 Res, Act, Out, WLo, WHi);
  for (int64_t OW = 0; OW < P.Out[2]; ++OW) {
    if (OW == WLo && WLo < WHi) {
      OW = WHi - 1;
      continue;
    }
    const int64_t BW = OW * P.Stride[2] - P.Pad[2];
    int64_t KWLo = 0, KWHi = P.Kernel[2];
    while (KWLo < KWHi && BW + KWLo * P.Dilation[2] < 0)
      ++KWLo;
    while (KWHi > KWLo && BW + (KWHi - 1) * P.Dilation[2] >= P.In[2])
      --KWHi;
    ListTaps(KWLo, KWHi);
    // The taps listed are relative to the window's origin, as inside.
    directChannels(P, Row, Off.data(), Rows.data(), int64_t(Off.size()), W,
                   Bias, Res, Act, Out, OW, OW + 1);
  }
}

} // namespace HWY_NAMESPACE
} // namespace cpu
} // namespace strider
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strider {
namespace cpu {

HWY_EXPORT(DirectConvRowImpl);

void runDirectConv(const DirectConvParams &P, const float *X, const float *W,
                   const float *Bias, const float *Residual,
                   const Activation &Act, float *Y, int Threads) {
  parallelFor(P.Out[0] * P.Out[1], Threads, [&](int64_t R) {
    HWY_DYNAMIC_DISPATCH(DirectConvRowImpl)
    (P, X, W, Bias, Residual, Act, Y, R / P.Out[1], R % P.Out[1]);
  });
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
