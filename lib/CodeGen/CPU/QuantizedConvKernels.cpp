//===- QuantizedConvKernels.cpp - Convs on 8-bit integers -----------------===//
//
// A QLinearConv or ConvInteger as one integer GEMM per group: rows are
// output pixels,
// columns output channels, k = tap * CinG + c. A block of pixel rows is
// gathered (u8, the padding filled with x's zero point, k padded to a
// multiple of 4 with zeros) and multiplied by the weight, packed at
// compile time in quads: for each vector of L output channels and each
// k / 4, L lanes of 4 signed bytes. One step of the inner loop broadcasts
// 4 bytes of a row and adds, per lane, the dot product of the two quads
// to an int32 sum:
//   - AVX-512 VNNI (Highway's AVX3_DL target): vpdpbusd, u8 x s8;
//   - other x86 targets: the quads split into their even and odd bytes
//     widened to 16 bits, two vpmaddwd (exact: no 16-bit saturation, as
//     vpmaddubsw's would be);
//   - elsewhere: each byte shifted out and multiplied in 32 bits.
// An i8 input is shifted into u8 (x ^ 0x80, its zero point + 128) and a u8
// weight into s8 (w - 128, likewise) at packing, so that
//   sum((x - xz)(w - wz)) = sum(x w) - wz sum(x) - xz sum(w) + K xz wz,
// whose last two terms are folded into a per-channel bias at compile time
// and whose second (a row's sum of x) is computed only when some weight
// zero point is not 0. QLinearConv's epilogue requantizes as Requantize.h
// does (float multiply, clamp, round half to even) and stores 8 bits;
// ConvInteger's stores the int32 sums, or with the rescale fused after it
// (Fusion.h) their f32 value times a scale plus a constant and a residual,
// clamped by the activation, in the order the unfused ops compute them.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "QuantizedConvKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"
#include "Parallel.h"

#include "hwy/highway.h"

#include <algorithm>
#include <cstring>
#include <vector>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DI = hn::ScalableTag<int32_t>;
using VI = hn::Vec<DI>;

#if HWY_TARGET == HWY_AVX3_DL
/// A quad vector as the dot product reads it (VNNI: as it is).
struct Quads {
  VI V;
};
HWY_INLINE Quads prepare(VI V) { return {V}; }
/// Acc + per lane the dot product of A's u8 and B's s8 quads. Written as
/// assembly: Highway 1.0.3 compiles this target without the avx512vnni
/// flag (it names avxvnni instead), so the intrinsic does not inline; its
/// runtime check does ask for AVX512-VNNI.
HWY_INLINE VI dot(VI Acc, const Quads &A, const Quads &B) {
  __m512i R = Acc.raw;
  asm("vpdpbusd %2, %1, %0" : "+v"(R) : "v"(A.V.raw), "v"(B.V.raw));
  return VI{R};
}
constexpr bool SignedSecond = true;
#elif HWY_ARCH_X86 && HWY_TARGET <= HWY_SSE4
using D16 = hn::Repartition<int16_t, DI>;
using DU16 = hn::Repartition<uint16_t, DI>;
/// Even and odd bytes widened to 16 bits.
struct Quads {
  hn::Vec<D16> Even, Odd;
};
/// \p Signed: the bytes are s8 (sign-extended), else u8.
template <bool Signed> HWY_INLINE Quads prepareAs(VI V) {
  const D16 D;
  const DU16 DU;
  if (Signed)
    return {hn::ShiftRight<8>(hn::ShiftLeft<8>(hn::BitCast(D, V))),
            hn::ShiftRight<8>(hn::BitCast(D, V))};
  return {hn::BitCast(D, hn::And(hn::BitCast(DU, V), hn::Set(DU, 0x00FF))),
          hn::BitCast(D, hn::ShiftRight<8>(hn::BitCast(DU, V)))};
}
HWY_INLINE VI dot(VI Acc, const Quads &A, const Quads &B) {
  const DI D;
  VI Unused = hn::Zero(D);
  Acc = hn::ReorderWidenMulAccumulate(D, A.Even, B.Even, Acc, Unused);
  return hn::ReorderWidenMulAccumulate(D, A.Odd, B.Odd, Acc, Unused);
}
#define STRIDER_QUADS_WIDENED 1
#else
struct Quads {
  VI V;
};
HWY_INLINE Quads prepare(VI V) { return {V}; }
HWY_INLINE VI dot(VI Acc, const Quads &A, const Quads &B) {
  const DI D;
  const VI Byte = hn::Set(D, 0xFF);
  Acc = hn::Add(Acc, hn::Mul(hn::And(A.V, Byte),
                             hn::ShiftRight<24>(hn::ShiftLeft<24>(B.V))));
  Acc = hn::Add(Acc, hn::Mul(hn::And(hn::ShiftRight<8>(A.V), Byte),
                             hn::ShiftRight<24>(hn::ShiftLeft<16>(B.V))));
  Acc = hn::Add(Acc, hn::Mul(hn::And(hn::ShiftRight<16>(A.V), Byte),
                             hn::ShiftRight<24>(hn::ShiftLeft<8>(B.V))));
  return hn::Add(Acc, hn::Mul(hn::And(hn::ShiftRight<24>(A.V), Byte),
                              hn::ShiftRight<24>(B.V)));
}
#endif

#ifdef STRIDER_QUADS_WIDENED
HWY_INLINE Quads prepareA(VI V) { return prepareAs<false>(V); }
HWY_INLINE Quads prepareB(VI V) { return prepareAs<true>(V); }
#undef STRIDER_QUADS_WIDENED
#else
HWY_INLINE Quads prepareA(VI V) { return prepare(V); }
HWY_INLINE Quads prepareB(VI V) { return prepare(V); }
#endif

/// 512-bit targets have 32 vector registers, the others 16.
constexpr bool WideRegisters = HWY_TARGET <= HWY_AVX3 && HWY_ARCH_X86;
/// Most column vectors per tile.
constexpr int MaxTileVectors = WideRegisters ? 4 : 2;
/// Rows of a tile NV vectors wide: enough sums in flight to hide the
/// dot product's latency, few enough to stay in registers.
template <int NV> constexpr int tileRows() {
  if (WideRegisters)
    return NV == 1 ? 12 : NV == 2 ? 8 : 6;
  return NV == 1 ? 6 : 4;
}

int64_t QuantizedConvLanesImpl() { return int64_t(hn::Lanes(DI())); }

/// Requantizes the sums \p S of output channels [C, C + Cols) (Cols at
/// most a vector) and stores them at \p Y, P.YC bytes apart.
HWY_INLINE void storeRequantized(const QuantizedConvParams &P, VI S, int64_t C,
                                 int64_t Cols, uint8_t *Y) {
  const DI D;
  const hn::Rebind<float, DI> DF;
  const hn::Rebind<uint8_t, DI> DU8;
  auto F = hn::Mul(hn::ConvertTo(DF, S), hn::LoadU(DF, P.Scale + C));
  F = hn::Min(hn::Max(F, hn::Set(DF, float(P.Lo - P.YZero))),
              hn::Set(DF, float(P.Hi - P.YZero)));
#if HWY_TARGET <= HWY_AVX3 && HWY_ARCH_X86
  // Clamped, the value plus y's zero point lies in [Lo, Hi]: its low byte
  // is the u8 or i8 result (one vpmovdb, no saturating packs and flip).
  const __m128i Low =
      _mm512_cvtepi32_epi8(hn::Add(hn::NearestInt(F), hn::Set(D, P.YZero)).raw);
  if (P.YC == 1 && Cols == int64_t(hn::Lanes(D))) {
    _mm_storeu_si128(reinterpret_cast<__m128i *>(Y), Low);
    return;
  }
  alignas(16) uint8_t Low16[16];
  _mm_store_si128(reinterpret_cast<__m128i *>(Low16), Low);
  for (int64_t J = 0; J < Cols; ++J)
    Y[J * P.YC] = Low16[J];
  (void)DU8;
#else
  const auto Q = hn::Xor(
      hn::DemoteTo(DU8, hn::Add(hn::NearestInt(F), hn::Set(D, P.YZeroShifted))),
      hn::Set(DU8, uint8_t(P.YSigned ? 0x80 : 0)));
  if (P.YC == 1 && Cols == int64_t(hn::Lanes(D))) {
    hn::StoreU(Q, DU8, Y);
    return;
  }
  alignas(64) uint8_t Bytes[64];
  hn::Store(Q, DU8, Bytes);
  for (int64_t J = 0; J < Cols; ++J)
    Y[J * P.YC] = Bytes[J];
#endif
}

/// Stores the sums \p S of output channels [C, C + Cols) (Cols at most a
/// vector) at \p Y, P.YC elements apart, as P.Store says.
HWY_INLINE void storeSums(const QuantizedConvParams &P, VI S, int64_t C,
                          int64_t Cols, uint8_t *Y) {
  if (P.Store == QuantizedConvStore::Requantized) {
    storeRequantized(P, S, C, Cols, Y);
    return;
  }
  const DI D;
  const hn::Rebind<float, DI> DF;
  const bool Dense = P.YC == 1 && Cols == int64_t(hn::Lanes(D));
  const int64_t Step = P.YC * 4;
  if (P.Store == QuantizedConvStore::Int32) {
    if (Dense) {
      hn::StoreU(S, D, reinterpret_cast<int32_t *>(Y));
      return;
    }
    alignas(64) int32_t Sums[16];
    hn::Store(S, D, Sums);
    for (int64_t J = 0; J < Cols; ++J)
      std::memcpy(Y + J * Step, &Sums[J], 4);
    return;
  }
  auto F = hn::Mul(hn::ConvertTo(DF, S), hn::LoadU(DF, P.Scale + C));
  if (P.Shift)
    F = hn::Add(F, hn::LoadU(DF, P.Shift + C));
  alignas(64) float Lane[16];
  if (P.HasResidual) {
    // Integer arithmetic: the residual may be another allocation.
    const uint8_t *R = reinterpret_cast<const uint8_t *>(
        reinterpret_cast<std::uintptr_t>(Y) + std::uintptr_t(P.ResidualOffset));
    if (Dense) {
      F = hn::Add(F, hn::LoadU(DF, reinterpret_cast<const float *>(R)));
    } else {
      for (int64_t J = 0; J < Cols; ++J)
        std::memcpy(&Lane[J], R + J * Step, 4);
      F = hn::Add(F, hn::Load(DF, Lane));
    }
  }
  if (P.FLo > -INFINITY)
    F = hn::Max(F, hn::Set(DF, P.FLo));
  if (P.FHi < INFINITY)
    F = hn::Min(F, hn::Set(DF, P.FHi));
  if (Dense) {
    hn::StoreU(F, DF, reinterpret_cast<float *>(Y));
    return;
  }
  hn::Store(F, DF, Lane);
  for (int64_t J = 0; J < Cols; ++J)
    std::memcpy(Y + J * Step, &Lane[J], 4);
}

/// One pixel's channels [C0, C0 + NV vectors) of a depthwise conv:
/// the taps at \p Offsets from x (-1: in the padding, read from \p Pad,
/// bytes that are x's zero point once flipped: one loop without branches,
/// whose sums stay in registers).
template <int NV>
HWY_INLINE void depthwisePixel(const QuantizedConvParams &P, const uint8_t *X,
                               const uint8_t *Pad, const int64_t *Offsets,
                               int64_t Taps, int64_t C0, int64_t L,
                               uint8_t *Out) {
  const DI D;
  const hn::Rebind<uint8_t, DI> DU8;
  const auto Flip = hn::Set(DU8, P.XFlip);
  // The sums as separate variables (an array of them went through the
  // stack at every tap).
  VI A0 = hn::Zero(D), A1 = A0, A2 = A0, A3 = A0;
  for (int64_t Tp = 0; Tp < Taps; ++Tp) {
    const int32_t *W = P.TapWeights + Tp * P.WeightStride + C0;
    const int64_t Off = Offsets[Tp];
    const uint8_t *Src = (Off < 0 ? Pad : X + Off) + C0;
    auto Term = [&](int V) {
      return hn::Mul(
          hn::PromoteTo(D, hn::Xor(hn::LoadU(DU8, Src + V * L), Flip)),
          hn::LoadU(D, W + V * L));
    };
    A0 = hn::Add(A0, Term(0));
    if constexpr (NV > 1)
      A1 = hn::Add(A1, Term(1));
    if constexpr (NV > 2)
      A2 = hn::Add(A2, Term(2));
    if constexpr (NV > 3)
      A3 = hn::Add(A3, Term(3));
  }
  const VI Acc[4] = {A0, A1, A2, A3};
  for (int V = 0; V < NV; ++V) {
    const int64_t C = C0 + V * L;
    storeSums(P, hn::Add(Acc[V], hn::LoadU(D, P.ColBias + C)), C, L,
              Out + C * P.YBytes);
  }
}

/// Two neighbouring pixels' channels [C0, C0 + NV vectors) of a depthwise
/// conv, both windows inside x (the taps at \p Offsets for the first, \p
/// Delta bytes further for the second): each weight vector is loaded once
/// for both.
template <int NV>
HWY_INLINE void depthwisePair(const QuantizedConvParams &P, const uint8_t *X,
                              const int64_t *Offsets, int64_t Delta,
                              int64_t Taps, int64_t C0, int64_t L,
                              uint8_t *Out0, uint8_t *Out1) {
  const DI D;
  const hn::Rebind<uint8_t, DI> DU8;
  const auto Flip = hn::Set(DU8, P.XFlip);
  VI A0 = hn::Zero(D), A1 = A0, A2 = A0, A3 = A0;
  VI B0 = A0, B1 = A0, B2 = A0, B3 = A0;
  for (int64_t Tp = 0; Tp < Taps; ++Tp) {
    const int32_t *W = P.TapWeights + Tp * P.WeightStride + C0;
    const uint8_t *S0 = X + Offsets[Tp] + C0, *S1 = S0 + Delta;
    auto XV = [&](const uint8_t *Src, int V) {
      return hn::PromoteTo(D, hn::Xor(hn::LoadU(DU8, Src + V * L), Flip));
    };
    {
      const VI WV = hn::LoadU(D, W);
      A0 = hn::Add(A0, hn::Mul(XV(S0, 0), WV));
      B0 = hn::Add(B0, hn::Mul(XV(S1, 0), WV));
    }
    if constexpr (NV > 1) {
      const VI WV = hn::LoadU(D, W + L);
      A1 = hn::Add(A1, hn::Mul(XV(S0, 1), WV));
      B1 = hn::Add(B1, hn::Mul(XV(S1, 1), WV));
    }
    if constexpr (NV > 2) {
      const VI WV = hn::LoadU(D, W + 2 * L);
      A2 = hn::Add(A2, hn::Mul(XV(S0, 2), WV));
      B2 = hn::Add(B2, hn::Mul(XV(S1, 2), WV));
    }
    if constexpr (NV > 3) {
      const VI WV = hn::LoadU(D, W + 3 * L);
      A3 = hn::Add(A3, hn::Mul(XV(S0, 3), WV));
      B3 = hn::Add(B3, hn::Mul(XV(S1, 3), WV));
    }
  }
  const VI SA[4] = {A0, A1, A2, A3}, SB[4] = {B0, B1, B2, B3};
  for (int V = 0; V < NV; ++V) {
    const int64_t C = C0 + V * L;
    const VI Bias = hn::LoadU(D, P.ColBias + C);
    storeSums(P, hn::Add(SA[V], Bias), C, L, Out0 + C * P.YBytes);
    storeSums(P, hn::Add(SB[V], Bias), C, L, Out1 + C * P.YBytes);
  }
}

/// Output row (\p OD, \p OH) of a depthwise conv, channels-last on
/// both sides: per pixel and vector of channels, the sum over the taps of
/// x (x's zero point where a tap falls in the padding) times the weight
/// less its zero point, 4 vectors of channels at a time.
void QuantizedDepthwiseRowImpl(const QuantizedConvParams &P, const uint8_t *X,
                               uint8_t *Y, int64_t OD, int64_t OH) {
  const DI D;
  const hn::Rebind<uint8_t, DI> DU8;
  const int64_t L = int64_t(hn::Lanes(D));
  const int64_t Channels = P.CoutG * P.Group;
  const int64_t Taps = P.Kernel[0] * P.Kernel[1] * P.Kernel[2];
  // Per tap, the input offset from the pixel's window origin, or -1.
  std::vector<int64_t> Offsets(static_cast<size_t>(Taps));
  const auto XZero = hn::Set(DU8, P.XZero);
  const auto Flip = hn::Set(DU8, P.XFlip);
  alignas(64) uint8_t Tail[64] = {};
  // A row of padding bytes: x's zero point once flipped.
  std::vector<uint8_t> Pad(size_t(Channels + 4 * L),
                           uint8_t(P.XZero ^ P.XFlip));
  auto LoadX = [&](const uint8_t *Src, int64_t Cols) {
    if (Cols == L)
      return hn::PromoteTo(D, hn::Xor(hn::LoadU(DU8, Src), Flip));
    std::memcpy(Tail, Src, size_t(Cols));
    return hn::PromoteTo(D, hn::Xor(hn::LoadU(DU8, Tail), Flip));
  };
  // The taps' offsets from a window's origin, for windows inside the
  // input.
  std::vector<int64_t> Inner(static_cast<size_t>(Taps));
  bool RowInside = true;
  for (int Dm = 0; Dm < 2; ++Dm) {
    const int64_t First = (Dm ? OH : OD) * P.Stride[Dm] - P.Pad[Dm];
    RowInside &=
        First >= 0 && First + (P.Kernel[Dm] - 1) * P.Dilation[Dm] < P.In[Dm];
  }
  {
    int64_t T = 0;
    for (int64_t KD = 0; KD < P.Kernel[0]; ++KD)
      for (int64_t KH = 0; KH < P.Kernel[1]; ++KH)
        for (int64_t KW = 0; KW < P.Kernel[2]; ++KW, ++T)
          Inner[size_t(T)] = KD * P.Dilation[0] * P.XS[0] +
                             KH * P.Dilation[1] * P.XS[1] +
                             KW * P.Dilation[2] * P.XS[2];
  }
  auto WindowInside = [&](int64_t OW) {
    const int64_t FirstW = OW * P.Stride[2] - P.Pad[2];
    return RowInside && FirstW >= 0 &&
           FirstW + (P.Kernel[2] - 1) * P.Dilation[2] < P.In[2];
  };
  const int64_t Full = Channels / L * L;
  for (int64_t OW = 0; OW < P.Out[2]; ++OW) {
    const int64_t O[3] = {OD, OH, OW};
    const int64_t FirstW = OW * P.Stride[2] - P.Pad[2];
    // Two pixels at a time inside the input (whole vectors of channels).
    if (Full == Channels && OW + 1 < P.Out[2] && WindowInside(OW) &&
        WindowInside(OW + 1)) {
      const int64_t Origin = (OD * P.Stride[0] - P.Pad[0]) * P.XS[0] +
                             (OH * P.Stride[1] - P.Pad[1]) * P.XS[1] +
                             FirstW * P.XS[2];
      for (int64_t T = 0; T < Taps; ++T)
        Offsets[size_t(T)] = Origin + Inner[size_t(T)];
      const int64_t Delta = P.Stride[2] * P.XS[2];
      uint8_t *Out0 =
          Y + (OD * P.YS[0] + OH * P.YS[1] + OW * P.YS[2]) * P.YBytes;
      uint8_t *Out1 = Out0 + P.YS[2] * P.YBytes;
      int64_t C0 = 0;
      for (; C0 + 4 * L <= Full; C0 += 4 * L)
        depthwisePair<4>(P, X, Offsets.data(), Delta, Taps, C0, L, Out0, Out1);
      switch ((Full - C0) / L) {
      case 3:
        depthwisePair<3>(P, X, Offsets.data(), Delta, Taps, C0, L, Out0, Out1);
        break;
      case 2:
        depthwisePair<2>(P, X, Offsets.data(), Delta, Taps, C0, L, Out0, Out1);
        break;
      case 1:
        depthwisePair<1>(P, X, Offsets.data(), Delta, Taps, C0, L, Out0, Out1);
        break;
      default:
        break;
      }
      ++OW;
      continue;
    }
    if (RowInside && FirstW >= 0 &&
        FirstW + (P.Kernel[2] - 1) * P.Dilation[2] < P.In[2]) {
      const int64_t Origin = (OD * P.Stride[0] - P.Pad[0]) * P.XS[0] +
                             (OH * P.Stride[1] - P.Pad[1]) * P.XS[1] +
                             FirstW * P.XS[2];
      for (int64_t T = 0; T < Taps; ++T)
        Offsets[size_t(T)] = Origin + Inner[size_t(T)];
    } else {
      int64_t T = 0;
      for (int64_t KD = 0; KD < P.Kernel[0]; ++KD)
        for (int64_t KH = 0; KH < P.Kernel[1]; ++KH)
          for (int64_t KW = 0; KW < P.Kernel[2]; ++KW, ++T) {
            const int64_t K[3] = {KD, KH, KW};
            int64_t Off = 0;
            for (int Dm = 0; Dm < 3 && Off >= 0; ++Dm) {
              const int64_t I =
                  O[Dm] * P.Stride[Dm] - P.Pad[Dm] + K[Dm] * P.Dilation[Dm];
              Off = I < 0 || I >= P.In[Dm] ? -1 : Off + I * P.XS[Dm];
            }
            Offsets[size_t(T)] = Off;
          }
    }
    uint8_t *Out = Y + (OD * P.YS[0] + OH * P.YS[1] + OW * P.YS[2]) * P.YBytes;
    int64_t C0 = 0;
    for (; C0 + 4 * L <= Full; C0 += 4 * L)
      depthwisePixel<4>(P, X, Pad.data(), Offsets.data(), Taps, C0, L, Out);
    switch ((Full - C0) / L) {
    case 3:
      depthwisePixel<3>(P, X, Pad.data(), Offsets.data(), Taps, C0, L, Out);
      break;
    case 2:
      depthwisePixel<2>(P, X, Pad.data(), Offsets.data(), Taps, C0, L, Out);
      break;
    case 1:
      depthwisePixel<1>(P, X, Pad.data(), Offsets.data(), Taps, C0, L, Out);
      break;
    default:
      break;
    }
    if (Full < Channels) {
      // The last channels, fewer than a vector: copied out of the pixel
      // (a full load could run past the tensor's end).
      VI Acc = hn::Zero(D);
      const int64_t Cols = Channels - Full;
      for (int64_t Tp = 0; Tp < Taps; ++Tp) {
        const int64_t Off = Offsets[size_t(Tp)];
        const VI XV =
            Off < 0 ? hn::PromoteTo(D, XZero) : LoadX(X + Off + Full, Cols);
        Acc = hn::Add(
            Acc, hn::Mul(XV, hn::LoadU(D, P.TapWeights + Tp * P.WeightStride +
                                              Full)));
      }
      storeSums(P, hn::Add(Acc, hn::LoadU(D, P.ColBias + Full)), Full, Cols,
                Out + Full * P.YBytes);
    }
  }
}

/// One tile: tileRows<NV>() rows (\p Rows: their gathered bytes, \p RowSums:
/// their sums of x, used when \p P.WZero is set) times NV vectors of
/// output channels from \p Col (within group \p G), stored (storeSums)
/// into the \p Valid rows' outputs \p Out and the group's \p ValidCols
/// columns.
template <int NV>
HWY_NOINLINE void tile(const QuantizedConvParams &P, const uint8_t *const *Rows,
                       const int32_t *RowSums, int64_t Valid, int64_t G,
                       int64_t Col, int64_t ValidCols, uint8_t *const *Out) {
  constexpr int TileRows = tileRows<NV>();
  const DI D;
  const int64_t L = int64_t(hn::Lanes(D));
  const int64_t K4 = P.KPad / 4;
  const uint8_t *B = P.Packed + (G * P.ColVectors + Col / L) * K4 * L * 4;
  VI Acc[TileRows][NV];
  for (int R = 0; R < TileRows; ++R)
    for (int V = 0; V < NV; ++V)
      Acc[R][V] = hn::Zero(D);
  for (int64_t K = 0; K < K4; ++K) {
    Quads W[NV];
    for (int V = 0; V < NV; ++V)
      W[V] = prepareB(hn::LoadU(
          D, reinterpret_cast<const int32_t *>(B + (V * K4 + K) * L * 4)));
    for (int R = 0; R < TileRows; ++R) {
      int32_t Word;
      std::memcpy(&Word, Rows[R] + K * 4, 4);
      const Quads A = prepareA(hn::Set(D, Word));
      for (int V = 0; V < NV; ++V)
        Acc[R][V] = dot(Acc[R][V], A, W[V]);
    }
  }
  const int64_t Chan0 = G * P.CoutG + Col;
#if HWY_TARGET <= HWY_AVX3 && HWY_ARCH_X86
  // Requantized bytes, channels contiguous: storeRequantized's arithmetic
  // with its parameters held in registers (a store through a byte pointer
  // may alias P, which the compiler would otherwise read again after each).
  if (P.Store == QuantizedConvStore::Requantized && P.YC == 1) {
    const hn::Rebind<float, DI> DF;
    const auto FLo = hn::Set(DF, float(P.Lo - P.YZero));
    const auto FHi = hn::Set(DF, float(P.Hi - P.YZero));
    const VI YZero = hn::Set(D, P.YZero);
    const int32_t *ColBias = P.ColBias, *WZero = P.WZero;
    const float *Scale = P.Scale;
    for (int V = 0; V < NV; ++V) {
      const int64_t C = Chan0 + V * L;
      const int64_t Cols = std::min<int64_t>(L, ValidCols - V * L);
      if (Cols <= 0)
        break;
      const VI Bias = hn::LoadU(D, ColBias + C);
      const VI WZ = WZero ? hn::LoadU(D, WZero + C) : hn::Zero(D);
      const auto ScaleV = hn::LoadU(DF, Scale + C);
      for (int64_t R = 0; R < Valid; ++R) {
        VI S = hn::Add(Acc[R][V], Bias);
        if (WZero)
          S = hn::Sub(S, hn::Mul(WZ, hn::Set(D, RowSums[R])));
        const auto F =
            hn::Min(hn::Max(hn::Mul(hn::ConvertTo(DF, S), ScaleV), FLo), FHi);
        const __m128i Low =
            _mm512_cvtepi32_epi8(hn::Add(hn::NearestInt(F), YZero).raw);
        uint8_t *Dst = Out[R] + C;
        if (Cols == L) {
          _mm_storeu_si128(reinterpret_cast<__m128i *>(Dst), Low);
        } else {
          alignas(16) uint8_t Low16[16];
          _mm_store_si128(reinterpret_cast<__m128i *>(Low16), Low);
          std::memcpy(Dst, Low16, size_t(Cols));
        }
      }
    }
    return;
  }
#endif
  for (int V = 0; V < NV; ++V) {
    const int64_t C = Chan0 + V * L;
    const int64_t Cols = std::min<int64_t>(L, ValidCols - V * L);
    if (Cols <= 0)
      break;
    const VI Bias = hn::LoadU(D, P.ColBias + C);
    const VI WZ = P.WZero ? hn::LoadU(D, P.WZero + C) : hn::Zero(D);
    for (int64_t R = 0; R < Valid; ++R) {
      VI S = hn::Add(Acc[R][V], Bias);
      if (P.WZero)
        S = hn::Sub(S, hn::Mul(WZ, hn::Set(D, RowSums[R])));
      storeSums(P, S, C, Cols, Out[R] + C * P.YC * P.YBytes);
    }
  }
}

/// Gathers output pixels [P0, P0 + Count) of group \p G into \p A (rows
/// \p P.KPad bytes apart) and their sums of x into \p RowSums.
void gather(const QuantizedConvParams &P, const uint8_t *X, int64_t G,
            int64_t P0, int64_t Count, uint8_t *A, int32_t *RowSums) {
  const int64_t CG = P.CinG;
  const uint8_t Fill = P.XZero, Flip = P.XFlip;
  const bool RowRuns =
      P.Group == 1 && P.XC == 1 && !Flip && P.Dilation[2] == 1 && P.XS[2] == CG;
  for (int64_t I = 0; I < Count; ++I) {
    int64_t Pix = P0 + I, O[3];
    O[2] = Pix % P.Out[2];
    Pix /= P.Out[2];
    O[1] = Pix % P.Out[1];
    O[0] = Pix / P.Out[1];
    uint8_t *Row = A + I * P.KPad;
    uint8_t *Dst = Row;
    for (int64_t KD = 0; KD < P.Kernel[0]; ++KD) {
      const int64_t ID = O[0] * P.Stride[0] - P.Pad[0] + KD * P.Dilation[0];
      for (int64_t KH = 0; KH < P.Kernel[1]; ++KH) {
        const int64_t IH = O[1] * P.Stride[1] - P.Pad[1] + KH * P.Dilation[1];
        // A whole kernel row inside the input, dense and unflipped: one
        // run of Kernel[2] * CinG bytes (taps of one group, unit dilation).
        const int64_t IW0 = O[2] * P.Stride[2] - P.Pad[2];
        if (RowRuns && ID >= 0 && ID < P.In[0] && IH >= 0 && IH < P.In[1] &&
            IW0 >= 0 && IW0 + P.Kernel[2] <= P.In[2]) {
          std::memcpy(Dst, X + ID * P.XS[0] + IH * P.XS[1] + IW0 * P.XS[2],
                      size_t(P.Kernel[2] * CG));
          Dst += P.Kernel[2] * CG;
          continue;
        }
        for (int64_t KW = 0; KW < P.Kernel[2]; ++KW, Dst += CG) {
          const int64_t IW = O[2] * P.Stride[2] - P.Pad[2] + KW * P.Dilation[2];
          if (ID < 0 || ID >= P.In[0] || IH < 0 || IH >= P.In[1] || IW < 0 ||
              IW >= P.In[2]) {
            std::memset(Dst, Fill, size_t(CG));
            continue;
          }
          const uint8_t *Src =
              X + ID * P.XS[0] + IH * P.XS[1] + IW * P.XS[2] + G * CG * P.XC;
          if (P.XC == 1 && !Flip) {
            std::memcpy(Dst, Src, size_t(CG));
          } else {
            for (int64_t C = 0; C < CG; ++C)
              Dst[C] = uint8_t(Src[C * P.XC] ^ Flip);
          }
        }
      }
    }
    std::memset(Dst, 0, size_t(Row + P.KPad - Dst));
    if (P.WZero) {
      int32_t Sum = 0;
      for (int64_t K = 0; K < P.K; ++K)
        Sum += Row[K];
      RowSums[I] = Sum;
    }
  }
}

/// The gathered rows [0, Count) of a block (pixels from \p P0, rows of
/// \p A) times the columns [Col, Col + NV vectors) of group \p G, tile by
/// tile.
template <int NV>
void tiles(const QuantizedConvParams &P, uint8_t *Y, int64_t G, int64_t P0,
           int64_t Count, const uint8_t *A, const uint8_t *ZeroRow,
           const int32_t *Sums, int64_t Col, int64_t ValidCols) {
  constexpr int TileRows = tileRows<NV>();
  for (int64_t R0 = 0; R0 < Count; R0 += TileRows) {
    const int64_t Valid = std::min<int64_t>(TileRows, Count - R0);
    const uint8_t *Rows[TileRows];
    uint8_t *Out[TileRows];
    for (int R = 0; R < TileRows; ++R) {
      Rows[R] = R < Valid ? A + (R0 + R) * P.KPad : ZeroRow;
      int64_t Pix = P0 + R0 + std::min<int64_t>(R, Valid - 1);
      const int64_t OW = Pix % P.Out[2];
      Pix /= P.Out[2];
      Out[R] = Y + ((Pix / P.Out[1]) * P.YS[0] + (Pix % P.Out[1]) * P.YS[1] +
                    OW * P.YS[2]) *
                       P.YBytes;
    }
    tile<NV>(P, Rows, Sums + R0, Valid, G, Col, ValidCols, Out);
  }
}

/// Work item \p Item: one block of pixel rows of one group. \p Scratch
/// holds BlockRows + 1 rows of KPad bytes and BlockRows sums.
void QuantizedConvItemImpl(const QuantizedConvParams &P, const uint8_t *X,
                           uint8_t *Y, int64_t Item, uint8_t *Scratch) {
  const int64_t Pixels = P.Out[0] * P.Out[1] * P.Out[2];
  const int64_t Blocks = (Pixels + P.BlockRows - 1) / P.BlockRows;
  const int64_t G = Item / Blocks;
  const int64_t P0 = (Item % Blocks) * P.BlockRows;
  const int64_t Count = std::min(P.BlockRows, Pixels - P0);
  uint8_t *Gathered = Scratch;
  uint8_t *ZeroRow = Gathered + P.BlockRows * P.KPad;
  int32_t *Sums = reinterpret_cast<int32_t *>(ZeroRow + P.KPad);
  std::memset(ZeroRow, 0, size_t(P.KPad));
  // A pointwise conv (1x1, stride 1, no padding) over dense channels-last
  // pixels of K bytes, K a multiple of 4, neither flipped nor summed: its
  // rows are x's pixels as they are, not gathered.
  const bool Direct =
      P.Group == 1 && P.XC == 1 && !P.XFlip && !P.WZero && P.K == P.KPad &&
      P.Kernel[0] == 1 && P.Kernel[1] == 1 && P.Kernel[2] == 1 &&
      P.Stride[0] == 1 && P.Stride[1] == 1 && P.Stride[2] == 1 &&
      P.Pad[0] == 0 && P.Pad[1] == 0 && P.Pad[2] == 0 && P.XS[2] == P.K &&
      P.XS[1] == P.In[2] * P.K && P.XS[0] == P.In[1] * P.In[2] * P.K &&
      P.In[1] == P.Out[1] && P.In[2] == P.Out[2];
  const uint8_t *A = Direct ? X + P0 * P.K : Gathered;
  if (!Direct)
    gather(P, X, G, P0, Count, Gathered, Sums);
  const int64_t L = int64_t(hn::Lanes(DI()));
  for (int64_t Col = 0; Col < P.CoutG; Col += MaxTileVectors * L) {
    const int64_t Left = P.CoutG - Col;
    const int64_t NV = std::min<int64_t>(MaxTileVectors, (Left + L - 1) / L);
    switch (NV) {
    case 1:
      tiles<1>(P, Y, G, P0, Count, A, ZeroRow, Sums, Col, Left);
      break;
    case 2:
      tiles<2>(P, Y, G, P0, Count, A, ZeroRow, Sums, Col, Left);
      break;
#if HWY_TARGET <= HWY_AVX3 && HWY_ARCH_X86
    case 3:
      tiles<3>(P, Y, G, P0, Count, A, ZeroRow, Sums, Col, Left);
      break;
    case 4:
      tiles<4>(P, Y, G, P0, Count, A, ZeroRow, Sums, Col, Left);
      break;
#endif
    default:
      break;
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

HWY_EXPORT(QuantizedConvLanesImpl);
HWY_EXPORT(QuantizedConvItemImpl);
HWY_EXPORT(QuantizedDepthwiseRowImpl);

int64_t getQuantizedConvLanes() {
  return HWY_DYNAMIC_DISPATCH(QuantizedConvLanesImpl)();
}

void packQuantizedConvWeights(const QuantizedConvShape &S,
                              llvm::function_ref<int32_t(int64_t, int64_t)> W,
                              int64_t Lanes, uint8_t *Dst) {
  const int64_t K4 = S.KPad / 4, Vectors = (S.CoutG + Lanes - 1) / Lanes;
  for (int64_t G = 0; G < S.Group; ++G)
    for (int64_t V = 0; V < Vectors; ++V)
      for (int64_t K = 0; K < K4; ++K)
        for (int64_t Lane = 0; Lane < Lanes; ++Lane)
          for (int64_t J = 0; J < 4; ++J) {
            const int64_t N = V * Lanes + Lane, Kk = K * 4 + J;
            int32_t Value =
                N < S.CoutG && Kk < S.K ? W(G * S.CoutG + N, Kk) : 0;
            *Dst++ = uint8_t(int8_t(Value));
          }
}

void runQuantizedConv(const QuantizedConvParams &P, const uint8_t *X,
                      uint8_t *Y, int Threads) {
  if (P.TapWeights) {
    parallelFor(P.Out[0] * P.Out[1], Threads, [&](int64_t R) {
      HWY_DYNAMIC_DISPATCH(QuantizedDepthwiseRowImpl)
      (P, X, Y, R / P.Out[1], R % P.Out[1]);
    });
    return;
  }
  const int64_t Pixels = P.Out[0] * P.Out[1] * P.Out[2];
  const int64_t Blocks = (Pixels + P.BlockRows - 1) / P.BlockRows;
  const size_t Bytes = size_t((P.BlockRows + 1) * P.KPad) +
                       size_t(P.BlockRows) * sizeof(int32_t);
  parallelFor(P.Group * Blocks, Threads, [&](int64_t Item) {
    // One scratch per thread, grown as programs need.
    thread_local std::vector<uint8_t> Scratch;
    if (Scratch.size() < Bytes)
      Scratch.resize(Bytes);
    HWY_DYNAMIC_DISPATCH(QuantizedConvItemImpl)(P, X, Y, Item, Scratch.data());
  });
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
