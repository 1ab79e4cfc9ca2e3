//===- DepthwiseKernels.cpp - Channels-last depthwise convolution ---------===//
//
// The sum over the taps that fall inside the input (padding taps are
// skipped, not multiplied by zero), then bias, residual and activation,
// then one store. Pixels whose window lies inside the row go four at a
// time, two vectors of channels at a time: each weight vector loaded for a
// tap serves four pixels (five loads per four multiply-adds instead of
// two per one). Border pixels go one at a time, four vectors of channels
// at a time. Rows of output pixels are spread over threads.
//
// Windows 3, 5 or 7 wide at stride 1 or 2 along w (dilation 1) take a
// faster path for their inside pixels: P of them (8 with 32 vector
// registers, 4 or 6 with 16) one vector of channels at a time, and per row
// of taps the (P - 1) * S + K input columns that P windows cover are
// loaded once, each serving up to K multiply-adds (a 7-wide row at stride
// 1: 21 loads per 56 multiply-adds, against 70 above).
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "DepthwiseKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"
#include "Parallel.h"
#include "SimdActivation-inl.h"
#include "SimdTail-inl.h"

#include "hwy/highway.h"

#include <vector>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Output pixel \p Y (channels [0, C)) from the taps listed in \p Offsets
/// (input element offsets from \p X, weight rows \p Taps): four vectors of
/// channels at a time, then one, then a masked tail.
HWY_INLINE void depthwisePixel(const float *HWY_RESTRICT X,
                               const int64_t *Offsets, const int64_t *Taps,
                               int64_t NumTaps, const float *HWY_RESTRICT W,
                               int64_t WS, const float *HWY_RESTRICT Bias,
                               const float *Residual, const Activation &Act,
                               float *HWY_RESTRICT Y, int64_t C) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  int64_t C0 = 0;
  for (; C0 + 4 * L <= C; C0 += 4 * L) {
    auto A0 = hn::LoadU(d, Bias + C0), A1 = hn::LoadU(d, Bias + C0 + L),
         A2 = hn::LoadU(d, Bias + C0 + 2 * L),
         A3 = hn::LoadU(d, Bias + C0 + 3 * L);
    for (int64_t T = 0; T < NumTaps; ++T) {
      const float *Src = X + Offsets[T] + C0;
      const float *Wt = W + Taps[T] * WS + C0;
      A0 = hn::MulAdd(hn::LoadU(d, Src), hn::LoadU(d, Wt), A0);
      A1 = hn::MulAdd(hn::LoadU(d, Src + L), hn::LoadU(d, Wt + L), A1);
      A2 = hn::MulAdd(hn::LoadU(d, Src + 2 * L), hn::LoadU(d, Wt + 2 * L), A2);
      A3 = hn::MulAdd(hn::LoadU(d, Src + 3 * L), hn::LoadU(d, Wt + 3 * L), A3);
    }
    if (Residual) {
      A0 = hn::Add(A0, hn::LoadU(d, Residual + C0));
      A1 = hn::Add(A1, hn::LoadU(d, Residual + C0 + L));
      A2 = hn::Add(A2, hn::LoadU(d, Residual + C0 + 2 * L));
      A3 = hn::Add(A3, hn::LoadU(d, Residual + C0 + 3 * L));
    }
    hn::StoreU(applyActivation(d, Act, A0), d, Y + C0);
    hn::StoreU(applyActivation(d, Act, A1), d, Y + C0 + L);
    hn::StoreU(applyActivation(d, Act, A2), d, Y + C0 + 2 * L);
    hn::StoreU(applyActivation(d, Act, A3), d, Y + C0 + 3 * L);
  }
  for (; C0 < C; C0 += L) {
    const size_t Valid = size_t(std::min<int64_t>(L, C - C0));
    auto Acc = hn::LoadU(d, Bias + C0);
    for (int64_t T = 0; T < NumTaps; ++T) {
      const float *Src = X + Offsets[T] + C0;
      const auto XV = loadTail(d, Src, Valid);
      Acc = hn::MulAdd(XV, hn::LoadU(d, W + Taps[T] * WS + C0), Acc);
    }
    if (Residual)
      Acc = hn::Add(Acc, loadTail(d, Residual + C0, Valid));
    Acc = applyActivation(d, Act, Acc);
    storeTail(d, Acc, Y + C0, Valid);
  }
}

/// Four output pixels \p PixStep input elements (\p YStep output elements)
/// apart, all with the same taps: as depthwisePixel for each.
HWY_INLINE void depthwisePixels4(const float *HWY_RESTRICT X, int64_t PixStep,
                                 const int64_t *Offsets, const int64_t *Taps,
                                 int64_t NumTaps, const float *HWY_RESTRICT W,
                                 int64_t WS, const float *HWY_RESTRICT Bias,
                                 const float *Residual, int64_t ResStep,
                                 const Activation &Act, float *HWY_RESTRICT Y,
                                 int64_t YStep, int64_t C) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  int64_t C0 = 0;
  auto Finish = [&](int P, int64_t At, decltype(hn::Zero(d)) Acc) {
    if (Residual)
      Acc = hn::Add(Acc, hn::LoadU(d, Residual + P * ResStep + At));
    hn::StoreU(applyActivation(d, Act, Acc), d, Y + P * YStep + At);
  };
  for (; C0 + 2 * L <= C; C0 += 2 * L) {
    const auto B0 = hn::LoadU(d, Bias + C0), B1 = hn::LoadU(d, Bias + C0 + L);
    auto A0 = B0, A1 = B1, A2 = B0, A3 = B1, A4 = B0, A5 = B1, A6 = B0, A7 = B1;
    for (int64_t T = 0; T < NumTaps; ++T) {
      const float *Src = X + Offsets[T] + C0;
      const float *Wt = W + Taps[T] * WS + C0;
      const auto W0 = hn::LoadU(d, Wt), W1 = hn::LoadU(d, Wt + L);
      A0 = hn::MulAdd(hn::LoadU(d, Src), W0, A0);
      A1 = hn::MulAdd(hn::LoadU(d, Src + L), W1, A1);
      A2 = hn::MulAdd(hn::LoadU(d, Src + PixStep), W0, A2);
      A3 = hn::MulAdd(hn::LoadU(d, Src + PixStep + L), W1, A3);
      A4 = hn::MulAdd(hn::LoadU(d, Src + 2 * PixStep), W0, A4);
      A5 = hn::MulAdd(hn::LoadU(d, Src + 2 * PixStep + L), W1, A5);
      A6 = hn::MulAdd(hn::LoadU(d, Src + 3 * PixStep), W0, A6);
      A7 = hn::MulAdd(hn::LoadU(d, Src + 3 * PixStep + L), W1, A7);
    }
    Finish(0, C0, A0);
    Finish(0, C0 + L, A1);
    Finish(1, C0, A2);
    Finish(1, C0 + L, A3);
    Finish(2, C0, A4);
    Finish(2, C0 + L, A5);
    Finish(3, C0, A6);
    Finish(3, C0 + L, A7);
  }
  for (; C0 + L <= C; C0 += L) {
    const auto B0 = hn::LoadU(d, Bias + C0);
    auto A0 = B0, A1 = B0, A2 = B0, A3 = B0;
    for (int64_t T = 0; T < NumTaps; ++T) {
      const float *Src = X + Offsets[T] + C0;
      const auto W0 = hn::LoadU(d, W + Taps[T] * WS + C0);
      A0 = hn::MulAdd(hn::LoadU(d, Src), W0, A0);
      A1 = hn::MulAdd(hn::LoadU(d, Src + PixStep), W0, A1);
      A2 = hn::MulAdd(hn::LoadU(d, Src + 2 * PixStep), W0, A2);
      A3 = hn::MulAdd(hn::LoadU(d, Src + 3 * PixStep), W0, A3);
    }
    Finish(0, C0, A0);
    Finish(1, C0, A1);
    Finish(2, C0, A2);
    Finish(3, C0, A3);
  }
  if (C0 < C)
    for (int P = 0; P < 4; ++P)
      depthwisePixel(X + P * PixStep + C0, Offsets, Taps, NumTaps, W + C0, WS,
                     Bias + C0,
                     Residual ? Residual + P * ResStep + C0 : nullptr, Act,
                     Y + P * YStep + C0, C - C0);
}

/// \p NP output pixels, \p S input columns apart, whose windows of \p K
/// columns lie inside the input along w, one vector of channels (at
/// \p X, \p W, \p Bias, \p Y already offset to it): the sum over \p Rows
/// rows of taps (row R's input offset Offsets[R * K], its first weight row
/// Taps[R * K]), each row's input columns loaded once.
template <int K, int S, int NP>
HWY_INLINE void
depthwiseSlide(const float *HWY_RESTRICT X, int64_t XS, const int64_t *Offsets,
               const int64_t *Taps, int64_t Rows, const float *HWY_RESTRICT W,
               int64_t WS, const float *HWY_RESTRICT Bias,
               const float *Residual, int64_t ResStep, const Activation &Act,
               float *HWY_RESTRICT Y, int64_t YStep) {
  const hn::ScalableTag<float> d;
  using V = decltype(hn::Zero(d));
  constexpr int Cols = (NP - 1) * S + K;
  V Acc[NP];
  const V B = hn::LoadU(d, Bias);
  for (int Px = 0; Px < NP; ++Px)
    Acc[Px] = B;
  for (int64_t R = 0; R < Rows; ++R) {
    // Pointers stepped, not indexed: Cols offsets would not stay in
    // registers.
    const float *Src = X + Offsets[R * K];
    const float *Wt = W + Taps[R * K] * WS;
    V In[Cols];
    for (int J = 0; J < Cols; ++J, Src += XS)
      In[J] = hn::LoadU(d, Src);
    for (int KW = 0; KW < K; ++KW, Wt += WS) {
      const V Wv = hn::LoadU(d, Wt);
      for (int Px = 0; Px < NP; ++Px)
        Acc[Px] = hn::MulAdd(In[Px * S + KW], Wv, Acc[Px]);
    }
  }
  for (int Px = 0; Px < NP; ++Px) {
    V A = Acc[Px];
    if (Residual)
      A = hn::Add(A, hn::LoadU(d, Residual + Px * ResStep));
    hn::StoreU(applyActivation(d, Act, A), d, Y + Px * YStep);
  }
}

/// Pixels per depthwiseSlide call for a window \p K wide at stride \p S:
/// what the vector registers hold (accumulators, input columns, a weight).
template <int K, int S> constexpr int slidePixels() {
  return HWY_MAX_BYTES >= 64 ? 8 : (K == 3 && S == 1 ? 6 : 4);
}

/// The inside pixels [\p OW, \p OW + NP) of one output row through
/// depthwiseSlide, full vectors of channels; the channels past the last
/// full vector pixel by pixel.
template <int K, int S>
void depthwiseSlideRun(const DepthwiseParams &P, const float *Origin,
                       const int64_t *Offsets, const int64_t *Taps,
                       int64_t Rows, const float *W, const float *Bias,
                       const float *Res, const Activation &Act, float *Out) {
  constexpr int NP = slidePixels<K, S>();
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  int64_t C0 = 0;
  for (; C0 + L <= P.Channels; C0 += L)
    depthwiseSlide<K, S, NP>(
        Origin + C0, P.XS[2], Offsets, Taps, Rows, W + C0, P.WeightStride,
        Bias + C0, Res ? Res + C0 : nullptr, P.YS[2], Act, Out + C0, P.YS[2]);
  if (C0 < P.Channels)
    for (int Px = 0; Px < NP; ++Px)
      depthwisePixel(Origin + Px * S * P.XS[2] + C0, Offsets, Taps, Rows * K,
                     W + C0, P.WeightStride, Bias + C0,
                     Res ? Res + Px * P.YS[2] + C0 : nullptr, Act,
                     Out + Px * P.YS[2] + C0, P.Channels - C0);
}

using SlideFn = void (*)(const DepthwiseParams &, const float *,
                         const int64_t *, const int64_t *, int64_t,
                         const float *, const float *, const float *,
                         const Activation &, float *);

/// The sliding path for \p P's window along w, or null (another width,
/// stride or a dilation), and its pixels per call in \p NP.
SlideFn getSlide(const DepthwiseParams &P, int &NP) {
  if (P.Dilation[2] != 1 || (P.Stride[2] != 1 && P.Stride[2] != 2))
    return nullptr;
  const bool S1 = P.Stride[2] == 1;
  switch (P.Kernel[2]) {
  case 3:
    NP = S1 ? slidePixels<3, 1>() : slidePixels<3, 2>();
    return S1 ? depthwiseSlideRun<3, 1> : depthwiseSlideRun<3, 2>;
  case 5:
    NP = S1 ? slidePixels<5, 1>() : slidePixels<5, 2>();
    return S1 ? depthwiseSlideRun<5, 1> : depthwiseSlideRun<5, 2>;
  case 7:
    NP = S1 ? slidePixels<7, 1>() : slidePixels<7, 2>();
    return S1 ? depthwiseSlideRun<7, 1> : depthwiseSlideRun<7, 2>;
  default:
    return nullptr;
  }
}

void DepthwiseRowImpl(const DepthwiseParams &P, const float *X, const float *W,
                      const float *Bias, const float *Residual,
                      const Activation &Act, float *Y, int64_t OD, int64_t OH) {
  // Taps inside the input along d and h are the same for the whole row.
  const RowTaps RT = getRowTaps(P, OD, OH);
  const int64_t *Lo = RT.Lo, *Hi = RT.Hi, *Base = RT.Base;
  const int64_t MaxTaps = P.Kernel[0] * P.Kernel[1] * P.Kernel[2];
  // Offsets (from the pixel at the window's origin) and weight rows of
  // the taps inside the input, for pixels whose window lies inside along
  // w; border pixels list theirs anew.
  std::vector<int64_t> Offsets(size_t(2 * MaxTaps)), Taps(size_t(2 * MaxTaps));
  auto ListTaps = [&](int64_t KWLo, int64_t KWHi, int64_t *Off, int64_t *Tp) {
    int64_t N = 0;
    for (int64_t KD = Lo[0]; KD < Hi[0]; ++KD)
      for (int64_t KH = Lo[1]; KH < Hi[1]; ++KH)
        for (int64_t KW = KWLo; KW < KWHi; ++KW) {
          Off[N] = KD * P.Dilation[0] * P.XS[0] + KH * P.Dilation[1] * P.XS[1] +
                   KW * P.Dilation[2] * P.XS[2];
          Tp[N] = (KD * P.Kernel[1] + KH) * P.Kernel[2] + KW;
          ++N;
        }
    return N;
  };
  const int64_t InnerTaps =
      ListTaps(0, P.Kernel[2], Offsets.data(), Taps.data());
  int64_t *BOff = Offsets.data() + MaxTaps, *BTaps = Taps.data() + MaxTaps;
  const float *Row = X + Base[0] * P.XS[0] + Base[1] * P.XS[1];
  const float *Res =
      Residual ? Residual + OD * P.YS[0] + OH * P.YS[1] : nullptr;
  float *Out = Y + OD * P.YS[0] + OH * P.YS[1];
  // Whether output column OW's window lies inside the input along w.
  auto Inside = [&](int64_t OW) {
    const int64_t BW = OW * P.Stride[2] - P.Pad[2];
    return BW >= 0 && BW + (P.Kernel[2] - 1) * P.Dilation[2] < P.In[2];
  };
  int SlideNP = 0;
  const SlideFn Slide = getSlide(P, SlideNP);
  for (int64_t OW = 0; OW < P.Out[2]; ++OW) {
    // The inside columns are one run: SlideNP at a time where the window
    // allows, then four at a time while they last.
    if (Slide && OW + SlideNP - 1 < P.Out[2] && Inside(OW) &&
        Inside(OW + SlideNP - 1)) {
      const int64_t BW = OW * P.Stride[2] - P.Pad[2];
      Slide(P, Row + BW * P.XS[2], Offsets.data(), Taps.data(),
            InnerTaps / P.Kernel[2], W, Bias,
            Res ? Res + OW * P.YS[2] : nullptr, Act, Out + OW * P.YS[2]);
      OW += SlideNP - 1;
      continue;
    }
    if (OW + 3 < P.Out[2] && Inside(OW) && Inside(OW + 3)) {
      const int64_t BW = OW * P.Stride[2] - P.Pad[2];
      depthwisePixels4(Row + BW * P.XS[2], P.Stride[2] * P.XS[2],
                       Offsets.data(), Taps.data(), InnerTaps, W,
                       P.WeightStride, Bias, Res ? Res + OW * P.YS[2] : nullptr,
                       P.YS[2], Act, Out + OW * P.YS[2], P.YS[2], P.Channels);
      OW += 3;
      continue;
    }
    const int64_t BW = OW * P.Stride[2] - P.Pad[2];
    int64_t KWLo = 0, KWHi = P.Kernel[2];
    while (KWLo < KWHi && BW + KWLo * P.Dilation[2] < 0)
      ++KWLo;
    while (KWHi > KWLo && BW + (KWHi - 1) * P.Dilation[2] >= P.In[2])
      --KWHi;
    const float *Origin = Row + BW * P.XS[2];
    const float *R = Res ? Res + OW * P.YS[2] : nullptr;
    if (KWLo == 0 && KWHi == P.Kernel[2]) {
      depthwisePixel(Origin, Offsets.data(), Taps.data(), InnerTaps, W,
                     P.WeightStride, Bias, R, Act, Out + OW * P.YS[2],
                     P.Channels);
    } else {
      int64_t N = ListTaps(KWLo, KWHi, BOff, BTaps);
      depthwisePixel(Origin, BOff, BTaps, N, W, P.WeightStride, Bias, R, Act,
                     Out + OW * P.YS[2], P.Channels);
    }
  }
}

/// Acc[OW] += Src[OW * SW] * Wt for OW in [Lo, Hi): vectors of output
/// positions, their inputs loaded (SW 1), the even lanes of two loads (SW
/// 2) or one by one.
HWY_INLINE void accumulatePlaneRow(const float *Src, int64_t SW, float Wt,
                                   float *Acc, int64_t Lo, int64_t Hi) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const auto WV = hn::Set(d, Wt);
  int64_t OW = Lo;
  if (SW == 1)
    for (; OW + L <= Hi; OW += L)
      hn::StoreU(hn::MulAdd(hn::LoadU(d, Src + OW), WV, hn::LoadU(d, Acc + OW)),
                 d, Acc + OW);
#if HWY_TARGET != HWY_SCALAR
  else if (SW == 2)
    // The odd element after the last even one is inside the row while
    // OW + L < Hi: the last vector's second load reads Src + 2 * OW + 2L - 1.
    for (; OW + L < Hi; OW += L) {
      const float *At = Src + 2 * OW;
      const auto XV = hn::ConcatEven(d, hn::LoadU(d, At + L), hn::LoadU(d, At));
      hn::StoreU(hn::MulAdd(XV, WV, hn::LoadU(d, Acc + OW)), d, Acc + OW);
    }
#endif
  for (; OW < Hi; ++OW)
    Acc[OW] += Src[OW * SW] * Wt;
}

/// Channel \p C of a depthwise conv in any layout: its plane row by row,
/// each output row summed in a row of accumulators, tap after tap.
void DepthwisePlaneImpl(const DepthwiseParams &P, int64_t XC, int64_t YC,
                        const float *X, const float *W, const float *Bias,
                        const float *Residual, const Activation &Act, float *Y,
                        int64_t C) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  std::vector<float> Acc(size_t(P.Out[2]));
  const float *XP = X + C * XC;
  // Along w, the same for every row: the output columns whose taps are
  // all inside, [ILo, IHi), of which (at unit stride) the whole vectors
  // [ILo, Done) are summed over a row's taps in a register; and per tap
  // the columns whose input column is inside, [TapLo, TapHi).
  const int64_t SW = P.Stride[2] * P.XS[2];
  int64_t ILo = 0, IHi = P.Out[2];
  while (ILo < IHi && ILo * P.Stride[2] - P.Pad[2] < 0)
    ++ILo;
  while (IHi > ILo && (IHi - 1) * P.Stride[2] - P.Pad[2] +
                              (P.Kernel[2] - 1) * P.Dilation[2] >=
                          P.In[2])
    --IHi;
  const bool InRegisters = SW == 1 && P.Kernel[2] <= 16;
  const int64_t Done = InRegisters ? ILo + (IHi - ILo) / L * L : ILo;
  std::vector<int64_t> TapLo(size_t(P.Kernel[2])), TapHi(size_t(P.Kernel[2]));
  for (int64_t KW = 0; KW < P.Kernel[2]; ++KW) {
    const int64_t Shift = KW * P.Dilation[2] - P.Pad[2];
    int64_t Lo = 0, Hi = P.Out[2];
    while (Lo < Hi && Lo * P.Stride[2] + Shift < 0)
      ++Lo;
    while (Hi > Lo && (Hi - 1) * P.Stride[2] + Shift >= P.In[2])
      --Hi;
    TapLo[size_t(KW)] = Lo;
    TapHi[size_t(KW)] = Hi;
  }
  for (int64_t OD = 0; OD < P.Out[0]; ++OD)
    for (int64_t OH = 0; OH < P.Out[1]; ++OH) {
      std::fill(Acc.begin(), Acc.end(), Bias[C]);
      for (int64_t KD = 0; KD < P.Kernel[0]; ++KD) {
        const int64_t ID = OD * P.Stride[0] - P.Pad[0] + KD * P.Dilation[0];
        if (ID < 0 || ID >= P.In[0])
          continue;
        for (int64_t KH = 0; KH < P.Kernel[1]; ++KH) {
          const int64_t IH = OH * P.Stride[1] - P.Pad[1] + KH * P.Dilation[1];
          if (IH < 0 || IH >= P.In[1])
            continue;
          const float *Row = XP + ID * P.XS[0] + IH * P.XS[1];
          const float *WRow =
              W + (KD * P.Kernel[1] + KH) * P.Kernel[2] * P.WeightStride + C;
          if (InRegisters) {
            float Wts[16];
            for (int64_t KW = 0; KW < P.Kernel[2]; ++KW)
              Wts[KW] = WRow[KW * P.WeightStride];
            const float *Src = Row - P.Pad[2] * P.XS[2];
            for (int64_t OW = ILo; OW < Done; OW += L) {
              auto A = hn::LoadU(d, Acc.data() + OW);
              for (int64_t KW = 0; KW < P.Kernel[2]; ++KW)
                A = hn::MulAdd(
                    hn::LoadU(d, Src + OW + KW * P.Dilation[2] * P.XS[2]),
                    hn::Set(d, Wts[KW]), A);
              hn::StoreU(A, d, Acc.data() + OW);
            }
          }
          // Each tap over its inside columns but those summed above.
          for (int64_t KW = 0; KW < P.Kernel[2]; ++KW) {
            const float Wt = WRow[KW * P.WeightStride];
            const int64_t Lo = TapLo[size_t(KW)], Hi = TapHi[size_t(KW)];
            const float *Src = Row + (KW * P.Dilation[2] - P.Pad[2]) * P.XS[2];
            accumulatePlaneRow(Src, SW, Wt, Acc.data(), Lo,
                               std::min(Hi, std::max(Lo, ILo)));
            accumulatePlaneRow(Src, SW, Wt, Acc.data(),
                               std::max(Lo, std::min(Hi, Done)), Hi);
          }
        }
      }
      const int64_t YOff = C * YC + OD * P.YS[0] + OH * P.YS[1];
      int64_t OW = 0;
      if (P.YS[2] == 1)
        for (; OW + L <= P.Out[2]; OW += L) {
          auto V = hn::LoadU(d, Acc.data() + OW);
          if (Residual)
            V = hn::Add(V, hn::LoadU(d, Residual + YOff + OW));
          hn::StoreU(applyActivation(d, Act, V), d, Y + YOff + OW);
        }
      for (; OW < P.Out[2]; ++OW) {
        float V = Acc[size_t(OW)];
        if (Residual)
          V += Residual[YOff + OW * P.YS[2]];
        Y[YOff + OW * P.YS[2]] = applyScalar(Act, V);
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
HWY_EXPORT(DepthwisePlaneImpl);

void runDepthwise(const DepthwiseParams &P, const float *X, const float *W,
                  const float *Bias, const float *Residual,
                  const Activation &Act, float *Y, int Threads) {
  const int64_t Rows = P.Out[0] * P.Out[1];
  parallelFor(Rows, Threads, [&](int64_t R) {
    HWY_DYNAMIC_DISPATCH(DepthwiseRowImpl)
    (P, X, W, Bias, Residual, Act, Y, R / P.Out[1], R % P.Out[1]);
  });
}

void runDepthwisePlanar(const DepthwiseParams &P, int64_t XC, int64_t YC,
                        const float *X, const float *W, const float *Bias,
                        const float *Residual, const Activation &Act, float *Y,
                        int Threads) {
  parallelFor(P.Channels, Threads, [&](int64_t C) {
    HWY_DYNAMIC_DISPATCH(DepthwisePlaneImpl)
    (P, XC, YC, X, W, Bias, Residual, Act, Y, C);
  });
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
