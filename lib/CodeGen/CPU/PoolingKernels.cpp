//===- PoolingKernels.cpp - Windowed and global pooling -------------------===//
//
// Windowed pooling (every MaxPool/AveragePool geometry: pads, auto_pad,
// ceil_mode, dilations, count_include_pad) visits only the taps inside the
// input. With contiguous channels it vectorizes over channels, one output
// pixel at a time (at stride 1 along w over a row's inside pixels as one
// flat array, whatever the channel count); otherwise over output positions
// along the last spatial axis, one channel row at a time. Global pooling
// reduces over pixels with a vector of channels when channels are contiguous,
// and along each contiguous channel plane otherwise.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "PoolingKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"
#include "Parallel.h"
#include "SimdTail-inl.h"

#include "hwy/highway.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <limits>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Taps [Lo, Hi) of one axis inside the input for output position \p O,
/// and how many of the window's taps an average counts.
struct TapRange {
  int64_t Lo = 0, Hi = 0, Counted = 0;
};

HWY_INLINE TapRange tapRange(const PoolParams &P, int Dm, int64_t O) {
  const int64_t Base = O * P.Stride[Dm] - P.PadBegin[Dm];
  const int64_t K = P.Kernel[Dm], Dil = P.Dilation[Dm];
  TapRange R;
  R.Hi = K;
  while (R.Lo < K && Base + R.Lo * Dil < 0)
    ++R.Lo;
  while (R.Hi > R.Lo && Base + (R.Hi - 1) * Dil >= P.In[Dm])
    --R.Hi;
  if (!P.CountPad) {
    R.Counted = R.Hi - R.Lo;
    return R;
  }
  // Every tap starts inside the begin padding (Base >= -PadBegin); a
  // ceil_mode window may end past the end padding.
  int64_t End = K;
  while (End > 0 && Base + (End - 1) * Dil >= P.In[Dm] + P.PadEnd[Dm])
    --End;
  R.Counted = End;
  return R;
}

/// The average's scale for \p Count counted taps (NaN for none).
HWY_INLINE float averageScale(int64_t Count) {
  return Count ? 1.0f / float(Count) : std::numeric_limits<float>::quiet_NaN();
}

/// One vector (\p Valid lanes) of a channels-last pool: the max or
/// average over the window rows \p RD x \p RH and the taps [KWLo, KWHi)
/// along w, \p KWStep elements apart, from \p Origin (the window's origin
/// with the lanes' offset).
template <class D>
HWY_INLINE hn::Vec<D> poolVector(D d, const PoolParams &P, const TapRange &RD,
                                 const TapRange &RH, const float *Origin,
                                 int64_t KWLo, int64_t KWHi, int64_t KWStep,
                                 size_t Valid, hn::Vec<D> Scale) {
  auto Acc =
      P.Max ? hn::Set(d, -std::numeric_limits<float>::infinity()) : hn::Zero(d);
  for (int64_t KD = RD.Lo; KD < RD.Hi; ++KD)
    for (int64_t KH = RH.Lo; KH < RH.Hi; ++KH) {
      const float *Row =
          Origin + KD * P.Dilation[0] * P.XS[0] + KH * P.Dilation[1] * P.XS[1];
      for (int64_t KW = KWLo; KW < KWHi; ++KW) {
        const auto V = loadTail(d, Row + KW * KWStep, Valid);
        Acc = P.Max ? hn::Max(Acc, V) : hn::Add(Acc, V);
      }
    }
  return P.Max ? Acc : hn::Mul(Acc, Scale);
}

/// Channels-last: output row (OD, OH), a vector of channels per tap.
void PoolRowChannelsLastImpl(const PoolParams &P, const float *X, float *Y,
                             int64_t OD, int64_t OH) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const TapRange RD = tapRange(P, 0, OD), RH = tapRange(P, 1, OH);
  const int64_t ID = OD * P.Stride[0] - P.PadBegin[0];
  const int64_t IH = OH * P.Stride[1] - P.PadBegin[1];
  // Dense pixels at stride 1 along w: the output pixels whose windows lie
  // inside along w are one run whose channels are contiguous, as are
  // their inputs', so the run is pooled as one flat array (vectors
  // straddling pixels), whatever the channel count.
  int64_t FlatLo = 0, FlatHi = 0;
  if (P.Stride[2] == 1 && P.Dilation[2] == 1 && P.XS[2] == P.Channels &&
      P.YS[2] == P.Channels) {
    FlatLo = std::min(P.Out[2], std::max<int64_t>(0, P.PadBegin[2]));
    FlatHi = std::max(
        FlatLo, std::min(P.Out[2], P.In[2] - P.Kernel[2] + 1 + P.PadBegin[2]));
  }
  if (FlatLo < FlatHi) {
    const int64_t N = (FlatHi - FlatLo) * P.Channels;
    const float *Src = X + (FlatLo - P.PadBegin[2]) * P.XS[2];
    float *Out = Y + OD * P.YS[0] + OH * P.YS[1] + FlatLo * P.YS[2];
    const auto Scale =
        hn::Set(d, averageScale(RD.Counted * RH.Counted * P.Kernel[2]));
    const float *Origin = Src + ID * P.XS[0] + IH * P.XS[1];
    for (int64_t J = 0; J < N; J += L) {
      const size_t Valid = size_t(std::min<int64_t>(L, N - J));
      storeTail(d,
                poolVector(d, P, RD, RH, Origin + J, 0, P.Kernel[2], P.Channels,
                           Valid, Scale),
                Out + J, Valid);
    }
  }
  for (int64_t OW = 0; OW < P.Out[2]; ++OW) {
    if (OW == FlatLo && FlatLo < FlatHi) {
      OW = FlatHi - 1;
      continue;
    }
    const TapRange RW = tapRange(P, 2, OW);
    const int64_t IW = OW * P.Stride[2] - P.PadBegin[2];
    const auto Scale =
        hn::Set(d, averageScale(RD.Counted * RH.Counted * RW.Counted));
    float *Out = Y + OD * P.YS[0] + OH * P.YS[1] + OW * P.YS[2];
    const float *Origin = X + ID * P.XS[0] + IH * P.XS[1] + IW * P.XS[2];
    for (int64_t C0 = 0; C0 < P.Channels; C0 += L) {
      const size_t Valid = size_t(std::min<int64_t>(L, P.Channels - C0));
      storeTail(d,
                poolVector(d, P, RD, RH, Origin + C0, RW.Lo, RW.Hi,
                           P.Dilation[2] * P.XS[2], Valid, Scale),
                Out + C0, Valid);
    }
  }
}

/// One output element of channel plane \p X (the edges of a plane row).
HWY_INLINE float poolOne(const PoolParams &P, const float *X,
                         const TapRange &RD, const TapRange &RH, int64_t ID,
                         int64_t IH, int64_t OW) {
  const TapRange RW = tapRange(P, 2, OW);
  const int64_t IW = OW * P.Stride[2] - P.PadBegin[2];
  float Acc = P.Max ? -std::numeric_limits<float>::infinity() : 0.0f;
  for (int64_t KD = RD.Lo; KD < RD.Hi; ++KD)
    for (int64_t KH = RH.Lo; KH < RH.Hi; ++KH)
      for (int64_t KW = RW.Lo; KW < RW.Hi; ++KW) {
        const float V = X[(ID + KD * P.Dilation[0]) * P.XS[0] +
                          (IH + KH * P.Dilation[1]) * P.XS[1] +
                          (IW + KW * P.Dilation[2]) * P.XS[2]];
        Acc = P.Max ? std::max(Acc, V) : Acc + V;
      }
  return P.Max ? Acc : Acc * averageScale(RD.Counted * RH.Counted * RW.Counted);
}

/// Elements 0, 2, 4, ... from \p P: the even lanes of two loads (the odd
/// element after the last one may lie past the input: it is not read).
template <class D> HWY_INLINE hn::Vec<D> loadEven(D d, const float *P) {
#if HWY_TARGET == HWY_SCALAR
  return hn::LoadU(d, P);
#else
  const size_t L = hn::Lanes(d);
  return hn::ConcatEven(d, loadTail(d, P + L, L - 1), hn::LoadU(d, P));
#endif
}

/// Any layout: output row (OD, OH) of channel \p C. Output positions whose
/// taps along the last axis all lie inside the input go in vectors (input
/// lanes Stride * XS apart: loaded, deinterleaved from two loads, or
/// gathered), the others one by one.
void PoolRowPlaneImpl(const PoolParams &P, const float *X, float *Y, int64_t C,
                      int64_t OD, int64_t OH) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t L = int64_t(hn::Lanes(d));
  X += C * P.XC;
  float *Out = Y + C * P.YC + OD * P.YS[0] + OH * P.YS[1];
  const TapRange RD = tapRange(P, 0, OD), RH = tapRange(P, 1, OH);
  const int64_t ID = OD * P.Stride[0] - P.PadBegin[0];
  const int64_t IH = OH * P.Stride[1] - P.PadBegin[1];
  // Interior outputs [WLo, WHi): first tap >= 0, last tap < In.
  const int64_t S = P.Stride[2], PB = P.PadBegin[2];
  const int64_t Reach = (P.Kernel[2] - 1) * P.Dilation[2];
  const int64_t WLo = std::min(P.Out[2], (PB + S - 1) / S);
  const int64_t LastIn = P.In[2] - 1 - Reach + PB;
  const int64_t WHi =
      LastIn < 0 ? WLo : std::max(WLo, std::min(P.Out[2], LastIn / S + 1));
  for (int64_t OW = 0; OW < WLo; ++OW)
    Out[OW * P.YS[2]] = poolOne(P, X, RD, RH, ID, IH, OW);
  const int64_t LaneIn = S * P.XS[2];
  const auto InIdx = hn::Mul(hn::Iota(di, 0), hn::Set(di, int32_t(LaneIn)));
  const auto OutIdx = hn::Mul(hn::Iota(di, 0), hn::Set(di, int32_t(P.YS[2])));
  const auto Scale =
      hn::Set(d, averageScale(RD.Counted * RH.Counted * P.Kernel[2]));
  int64_t OW = WLo;
  for (; OW + L <= WHi; OW += L) {
    auto Acc = P.Max ? hn::Set(d, -std::numeric_limits<float>::infinity())
                     : hn::Zero(d);
    for (int64_t KD = RD.Lo; KD < RD.Hi; ++KD)
      for (int64_t KH = RH.Lo; KH < RH.Hi; ++KH) {
        const float *Row = X + (ID + KD * P.Dilation[0]) * P.XS[0] +
                           (IH + KH * P.Dilation[1]) * P.XS[1] +
                           (OW * S - PB) * P.XS[2];
        for (int64_t KW = 0; KW < P.Kernel[2]; ++KW) {
          const float *Src = Row + KW * P.Dilation[2] * P.XS[2];
          const auto V = LaneIn == 1   ? hn::LoadU(d, Src)
                         : LaneIn == 2 ? loadEven(d, Src)
                                       : hn::GatherIndex(d, Src, InIdx);
          Acc = P.Max ? hn::Max(Acc, V) : hn::Add(Acc, V);
        }
      }
    if (!P.Max)
      Acc = hn::Mul(Acc, Scale);
    if (P.YS[2] == 1)
      hn::StoreU(Acc, d, Out + OW);
    else
      hn::ScatterIndex(Acc, d, Out + OW * P.YS[2], OutIdx);
  }
  for (; OW < P.Out[2]; ++OW)
    Out[OW * P.YS[2]] = poolOne(P, X, RD, RH, ID, IH, OW);
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

HWY_EXPORT(PoolRowChannelsLastImpl);
HWY_EXPORT(PoolRowPlaneImpl);
HWY_EXPORT(GlobalPoolVecImpl);

void runPool(const PoolParams &P, const float *X, float *Y, int Threads) {
  const int64_t Rows = P.Out[0] * P.Out[1];
  if (P.channelsLast()) {
    parallelFor(Rows, Threads, [&](int64_t R) {
      HWY_DYNAMIC_DISPATCH(PoolRowChannelsLastImpl)
      (P, X, Y, R / P.Out[1], R % P.Out[1]);
    });
    return;
  }
  parallelFor(P.Channels * Rows, Threads, [&](int64_t I) {
    const int64_t R = I % Rows;
    HWY_DYNAMIC_DISPATCH(PoolRowPlaneImpl)
    (P, X, Y, I / Rows, R / P.Out[1], R % P.Out[1]);
  });
}

/// MaxPool of 8-bit elements (a quantized model's activations: the max of
/// quantized values is the quantized max), one output row per work item,
/// each pixel's channels maxed tap by tap.
template <typename T>
static void maxPoolTyped(const PoolParams &P, const T *X, T *Y, int Threads) {
  auto Taps = [&](int D, int64_t O, int64_t *Pos) {
    int Count = 0;
    for (int64_t K = 0; K < P.Kernel[D]; ++K) {
      const int64_t I = O * P.Stride[D] - P.PadBegin[D] + K * P.Dilation[D];
      if (I >= 0 && I < P.In[D])
        Pos[Count++] = I;
    }
    return Count;
  };
  parallelFor(P.Out[0] * P.Out[1], Threads, [&](int64_t R) {
    const int64_t OD = R / P.Out[1], OH = R % P.Out[1];
    llvm::SmallVector<int64_t, 16> Rows;
    int64_t DPos[64], HPos[64], WPos[64];
    const int ND = Taps(0, OD, DPos), NH = Taps(1, OH, HPos);
    for (int I = 0; I < ND; ++I)
      for (int J = 0; J < NH; ++J)
        Rows.push_back(DPos[I] * P.XS[0] + HPos[J] * P.XS[1]);
    for (int64_t OW = 0; OW < P.Out[2]; ++OW) {
      T *Out = Y + OD * P.YS[0] + OH * P.YS[1] + OW * P.YS[2];
      for (int64_t C = 0; C < P.Channels; ++C)
        Out[C * P.YC] = std::numeric_limits<T>::lowest();
      const int NW = Taps(2, OW, WPos);
      for (int64_t Row : Rows)
        for (int K = 0; K < NW; ++K) {
          const T *In = X + Row + WPos[K] * P.XS[2];
          for (int64_t C = 0; C < P.Channels; ++C)
            Out[C * P.YC] = std::max(Out[C * P.YC], In[C * P.XC]);
        }
    }
  });
}

void runMaxPool(const PoolParams &P, const uint8_t *X, uint8_t *Y,
                int Threads) {
  maxPoolTyped(P, X, Y, Threads);
}

void runMaxPool(const PoolParams &P, const int8_t *X, int8_t *Y, int Threads) {
  maxPoolTyped(P, X, Y, Threads);
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
