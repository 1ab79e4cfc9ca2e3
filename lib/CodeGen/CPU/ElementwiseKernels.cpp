//===- ElementwiseKernels.cpp - Activations and broadcasting binaries -----===//
//
// Unary activations and math functions run over flat buffers (layout does
// not matter). Binary ops (arithmetic, Max/Min, PRelu, Pow) walk the output
// in its physical order; the innermost dim is a vector loop when each
// operand is contiguous or broadcast along it, and the activation that
// follows is applied before the store.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ElementwiseKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"
#include "Parallel.h"
#include "SimdActivation-inl.h"
#include "SimdTail-inl.h"

#include "hwy/highway.h"

#include <algorithm>
#include <cmath>
#include <limits>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void UnaryImpl(const Activation &Act, const float *X, float *Y, int64_t Count) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  int64_t I = 0;
  for (; I + L <= Count; I += L)
    hn::StoreU(applyActivation(d, Act, hn::LoadU(d, X + I)), d, Y + I);
  for (; I < Count; ++I)
    Y[I] = applyScalar(Act, X[I]);
}

/// A^B as std::pow: e^(B ln|A|), negated for a negative A and an odd
/// integer B, NaN for a negative A and a non-integer B; A^0 = 1.
template <class D, class V> HWY_INLINE V powVec(D d, V A, V B) {
  V R = expVec(d, hn::Mul(B, logVec(d, hn::Abs(A))));
  const V FloorB = hn::Floor(B);
  const auto Integral = hn::Eq(FloorB, B);
  const auto Odd =
      hn::And(Integral, hn::Ne(hn::Floor(hn::Mul(B, hn::Set(d, 0.5f))),
                               hn::Mul(B, hn::Set(d, 0.5f))));
  const auto Negative = hn::Lt(A, hn::Zero(d));
  R = hn::IfThenElse(hn::And(Negative, Odd), hn::Neg(R), R);
  R = hn::IfThenElse(hn::AndNot(Integral, Negative), hn::Set(d, NAN), R);
  return hn::IfThenElse(hn::Eq(B, hn::Zero(d)), hn::Set(d, 1.0f), R);
}

template <class D, class V> HWY_INLINE V binaryVec(D d, BinaryOp Op, V A, V B) {
  switch (Op) {
  case BinaryOp::None:
    return A;
  case BinaryOp::Add:
    return hn::Add(A, B);
  case BinaryOp::Sub:
    return hn::Sub(A, B);
  case BinaryOp::Mul:
    return hn::Mul(A, B);
  case BinaryOp::Div:
    return hn::Div(A, B);
  case BinaryOp::Max: // NaN in either operand gives NaN.
    return hn::IfThenElse(hn::Or(hn::Gt(B, A), hn::IsNaN(B)), B, A);
  case BinaryOp::Min:
    return hn::IfThenElse(hn::Or(hn::Lt(B, A), hn::IsNaN(B)), B, A);
  case BinaryOp::PRelu:
    return hn::IfThenElse(hn::Lt(A, hn::Zero(d)), hn::Mul(A, B), A);
  case BinaryOp::Pow:
    return powVec(d, A, B);
  }
  return A;
}

/// One innermost row: \p SA / \p SB are 0 (broadcast) or 1 for the vector
/// loop, anything else for the scalar one.
void BinaryRowImpl(BinaryOp Op, const Activation &Act, const float *A,
                   int64_t SA, const float *B, int64_t SB, float *Y,
                   int64_t Count) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  int64_t I = 0;
  if ((SA == 0 || SA == 1) && (SB == 0 || SB == 1)) {
    const auto AS = hn::Set(d, A[0]), BS = hn::Set(d, B[0]);
    for (; I + L <= Count; I += L) {
      const auto AV = SA ? hn::LoadU(d, A + I) : AS;
      const auto BV = SB ? hn::LoadU(d, B + I) : BS;
      hn::StoreU(applyActivation(d, Act, binaryVec(d, Op, AV, BV)), d, Y + I);
    }
    // The tail as one partial vector (a channels-last row of 24 channels
    // is a vector and a tail); lanes past it are computed, not stored.
    if (I < Count) {
      const size_t N = size_t(Count - I);
      const auto AV = SA ? loadTail(d, A + I, N) : AS;
      const auto BV = SB ? loadTail(d, B + I, N) : BS;
      storeTail(d, applyActivation(d, Act, binaryVec(d, Op, AV, BV)), Y + I,
                N);
      return;
    }
  }
  for (; I < Count; ++I)
    Y[I] = applyScalar(Act, codegen::applyBinary(Op, A[I * SA], B[I * SB]));
}

/// One channels-last pixel row: Y[c] = Act(X[c] * S[c] + T[c]).
void AffineRowImpl(const float *X, const float *S, const float *T,
                   const Activation &Act, float *Y, int64_t C) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  int64_t I = 0;
  for (; I + L <= C; I += L)
    hn::StoreU(
        applyActivation(d, Act,
                        hn::MulAdd(hn::LoadU(d, X + I), hn::LoadU(d, S + I),
                                   hn::LoadU(d, T + I))),
        d, Y + I);
  for (; I < C; ++I)
    Y[I] = applyScalar(Act, X[I] * S[I] + T[I]);
}

/// One channels-first plane: Y[p] = Act(X[p] * S + T).
void AffinePlaneImpl(const float *X, float S, float T, const Activation &Act,
                     float *Y, int64_t N) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const auto SV = hn::Set(d, S), TV = hn::Set(d, T);
  int64_t I = 0;
  for (; I + L <= N; I += L)
    hn::StoreU(applyActivation(d, Act, hn::MulAdd(hn::LoadU(d, X + I), SV, TV)),
               d, Y + I);
  for (; I < N; ++I)
    Y[I] = applyScalar(Act, X[I] * S + T);
}

/// Y = saturate(round(X / Scale) + Zero) over \p N elements (halves to
/// even; NaN gives the zero point), 8-bit Y of type T.
template <typename T>
void quantizeRow(const float *X, T *Y, int64_t N, float Scale, float Zero) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<T, decltype(df)> d8;
  const int64_t L = int64_t(hn::Lanes(df));
  const float Lo = float(std::numeric_limits<T>::min()),
              Hi = float(std::numeric_limits<T>::max());
  // Clamped before rounding (to integers, so the result is the same).
  const auto QLo = hn::Set(df, Lo - Zero), QHi = hn::Set(df, Hi - Zero);
  const auto S = hn::Set(df, Scale), Z = hn::Set(df, Zero);
  int64_t I = 0;
  for (; I + L <= N; I += L) {
    const auto V = hn::Div(hn::LoadU(df, X + I), S);
    const auto C = hn::Min(hn::Max(V, QLo), QHi);
    const auto Q = hn::IfThenElse(hn::Eq(V, V), hn::Add(hn::Round(C), Z), Z);
    hn::StoreU(hn::DemoteTo(d8, hn::ConvertTo(di, Q)), d8, Y + I);
  }
  for (; I < N; ++I) {
    const float V = X[I] / Scale;
    const float C = std::min(std::max(V, Lo - Zero), Hi - Zero);
    Y[I] = V != V ? T(Zero) : T(int32_t(std::nearbyint(C) + Zero));
  }
}

/// \p X as it is, not contracted into a fused multiply-add with what
/// follows: a dequantized value is rounded to f32 before the Add, as the
/// DequantizeLinear kernel's store rounds it.
template <class V> HWY_INLINE V keepRounded(V X) {
#if HWY_ARCH_X86 && HWY_TARGET != HWY_EMU128 && HWY_TARGET != HWY_SCALAR
  asm("" : "+x"(X.raw));
#endif
  return X;
}
HWY_INLINE float keepRoundedScalar(float X) {
#if HWY_ARCH_X86
  asm("" : "+x"(X));
#endif
  return X;
}

/// qbinary over \p N elements of a (TA), b (TB) into y (TY): the
/// operations of dequantizeRow, the f32 op, those of quantizeRow.
template <typename TA, typename TB, typename TY>
void qbinaryRow(const QBinaryParams &P, const TA *A, const TB *B, TY *Y,
                int64_t N) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<TA, decltype(df)> da;
  const hn::Rebind<TB, decltype(df)> db;
  const hn::Rebind<TY, decltype(df)> dy;
  const int64_t L = int64_t(hn::Lanes(df));
  const float Lo = float(std::numeric_limits<TY>::min()),
              Hi = float(std::numeric_limits<TY>::max());
  const auto SA = hn::Set(df, P.AScale), ZA = hn::Set(df, P.AZero);
  const auto SB = hn::Set(df, P.BScale), ZB = hn::Set(df, P.BZero);
  const auto SY = hn::Set(df, P.YScale), ZY = hn::Set(df, P.YZero);
  const auto QLo = hn::Set(df, Lo - P.YZero), QHi = hn::Set(df, Hi - P.YZero);
  int64_t I = 0;
  for (; I + L <= N; I += L) {
    const auto FA = keepRounded(hn::Mul(
        hn::Sub(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(da, A + I))), ZA),
        SA));
    const auto FB = keepRounded(hn::Mul(
        hn::Sub(hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(db, B + I))), ZB),
        SB));
    const auto V = hn::Div(P.Mul ? hn::Mul(FA, FB) : hn::Add(FA, FB), SY);
    const auto C = hn::Min(hn::Max(V, QLo), QHi);
    const auto Q = hn::IfThenElse(hn::Eq(V, V), hn::Add(hn::Round(C), ZY), ZY);
    hn::StoreU(hn::DemoteTo(dy, hn::ConvertTo(di, Q)), dy, Y + I);
  }
  for (; I < N; ++I) {
    const float FA = keepRoundedScalar((float(A[I]) - P.AZero) * P.AScale);
    const float FB = keepRoundedScalar((float(B[I]) - P.BZero) * P.BScale);
    const float V = (P.Mul ? FA * FB : FA + FB) / P.YScale;
    const float C = std::min(std::max(V, Lo - P.YZero), Hi - P.YZero);
    Y[I] = V != V ? TY(P.YZero) : TY(int32_t(std::nearbyint(C) + P.YZero));
  }
}

void QBinaryImpl(const QBinaryParams &P, const uint8_t *A, const uint8_t *B,
                 uint8_t *Y, int64_t N) {
  auto WithY = [&](auto *AP, auto *BP) {
    if (P.YSigned)
      qbinaryRow(P, AP, BP, reinterpret_cast<int8_t *>(Y), N);
    else
      qbinaryRow(P, AP, BP, Y, N);
  };
  auto WithB = [&](auto *AP) {
    if (P.BSigned)
      WithY(AP, reinterpret_cast<const int8_t *>(B));
    else
      WithY(AP, B);
  };
  if (P.ASigned)
    WithB(reinterpret_cast<const int8_t *>(A));
  else
    WithB(A);
}

void QuantizeU8Impl(const float *X, uint8_t *Y, int64_t N, float Scale,
                    float Zero) {
  quantizeRow(X, Y, N, Scale, Zero);
}
void QuantizeI8Impl(const float *X, int8_t *Y, int64_t N, float Scale,
                    float Zero) {
  quantizeRow(X, Y, N, Scale, Zero);
}

/// Y = (X - Zero) * Scale over \p N 8-bit elements of type T.
template <typename T>
void dequantizeRow(const T *X, float *Y, int64_t N, float Scale, float Zero) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<T, decltype(df)> d8;
  const int64_t L = int64_t(hn::Lanes(df));
  const auto S = hn::Set(df, Scale), Z = hn::Set(df, Zero);
  int64_t I = 0;
  for (; I + L <= N; I += L) {
    const auto V = hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(d8, X + I)));
    hn::StoreU(hn::Mul(hn::Sub(V, Z), S), df, Y + I);
  }
  for (; I < N; ++I)
    Y[I] = (float(X[I]) - Zero) * Scale;
}

void DequantizeU8Impl(const uint8_t *X, float *Y, int64_t N, float Scale,
                      float Zero) {
  dequantizeRow(X, Y, N, Scale, Zero);
}
void DequantizeI8Impl(const int8_t *X, float *Y, int64_t N, float Scale,
                      float Zero) {
  dequantizeRow(X, Y, N, Scale, Zero);
}

} // namespace HWY_NAMESPACE
} // namespace cpu
} // namespace strider
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strider {
namespace cpu {

HWY_EXPORT(UnaryImpl);
HWY_EXPORT(QuantizeU8Impl);
HWY_EXPORT(QuantizeI8Impl);
HWY_EXPORT(DequantizeU8Impl);
HWY_EXPORT(DequantizeI8Impl);
HWY_EXPORT(QBinaryImpl);

void runQBinary(const QBinaryParams &P, const uint8_t *A, const uint8_t *B,
                uint8_t *Y, int64_t Count, int Threads) {
  const int64_t Chunk = 1 << 14;
  parallelFor((Count + Chunk - 1) / Chunk, Threads, [&](int64_t I) {
    const int64_t Begin = I * Chunk, N = std::min(Chunk, Count - Begin);
    HWY_DYNAMIC_DISPATCH(QBinaryImpl)(P, A + Begin, B + Begin, Y + Begin, N);
  });
}

void quantizeRow(const float *X, uint8_t *Y, int64_t N, float Scale,
                 float Zero) {
  HWY_DYNAMIC_DISPATCH(QuantizeU8Impl)(X, Y, N, Scale, Zero);
}
void quantizeRow(const float *X, int8_t *Y, int64_t N, float Scale,
                 float Zero) {
  HWY_DYNAMIC_DISPATCH(QuantizeI8Impl)(X, Y, N, Scale, Zero);
}
void dequantizeRow(const uint8_t *X, float *Y, int64_t N, float Scale,
                   float Zero) {
  HWY_DYNAMIC_DISPATCH(DequantizeU8Impl)(X, Y, N, Scale, Zero);
}
void dequantizeRow(const int8_t *X, float *Y, int64_t N, float Scale,
                   float Zero) {
  HWY_DYNAMIC_DISPATCH(DequantizeI8Impl)(X, Y, N, Scale, Zero);
}

/// Rows of \p Len elements per work item: short rows (a channels-last
/// tensor of few channels) are grouped to about 4096 elements, so that
/// claiming an item costs little next to the item's work.
static int64_t rowsPerItem(int64_t Len) {
  return std::max<int64_t>(1, 4096 / std::max<int64_t>(Len, 1));
}
HWY_EXPORT(AffineRowImpl);
HWY_EXPORT(AffinePlaneImpl);
HWY_EXPORT(BinaryRowImpl);

void runUnary(const Activation &Act, const float *X, float *Y, int64_t Count,
              int Threads) {
  const int64_t Chunk = 1 << 16;
  const int64_t Chunks = (Count + Chunk - 1) / Chunk;
  parallelFor(Chunks, Threads, [&](int64_t I) {
    int64_t Begin = I * Chunk, N = std::min(Chunk, Count - Begin);
    HWY_DYNAMIC_DISPATCH(UnaryImpl)(Act, X + Begin, Y + Begin, N);
  });
}

void runChannelAffine(bool ChannelsLast, int64_t Batch, int64_t Channels,
                      int64_t Pixels, const float *X, const float *Scale,
                      const float *Shift, const Activation &Act, float *Y,
                      int Threads) {
  if (ChannelsLast) {
    const int64_t Rows = Batch * Pixels;
    const int64_t Per = rowsPerItem(Channels);
    parallelFor((Rows + Per - 1) / Per, Threads, [&](int64_t I) {
      for (int64_t R = I * Per; R < std::min(Rows, (I + 1) * Per); ++R)
        HWY_DYNAMIC_DISPATCH(AffineRowImpl)
      (X + R * Channels, Scale, Shift, Act, Y + R * Channels, Channels);
    });
    return;
  }
  parallelFor(Batch * Channels, Threads, [&](int64_t R) {
    const int64_t C = R % Channels;
    HWY_DYNAMIC_DISPATCH(AffinePlaneImpl)
    (X + R * Pixels, Scale[C], Shift[C], Act, Y + R * Pixels, Pixels);
  });
}

void runBinary(const BinaryParams &P, const float *A, const float *B, float *Y,
               int Threads) {
  for (int I = 0; I < P.Rank; ++I)
    if (P.Shape[I] == 0)
      return; // Nothing to compute (and nothing to read).
  // Merge dims that nest in all three tensors.
  int Rank = 0;
  int64_t Shape[6], SA[6], SB[6];
  for (int I = 0; I < P.Rank; ++I) {
    if (P.Shape[I] == 1)
      continue;
    if (Rank > 0 && SA[Rank - 1] == P.SA[I] * P.Shape[I] &&
        SB[Rank - 1] == P.SB[I] * P.Shape[I]) {
      Shape[Rank - 1] *= P.Shape[I];
      SA[Rank - 1] = P.SA[I];
      SB[Rank - 1] = P.SB[I];
      continue;
    }
    Shape[Rank] = P.Shape[I];
    SA[Rank] = P.SA[I];
    SB[Rank] = P.SB[I];
    ++Rank;
  }
  if (Rank == 0) {
    Shape[0] = 1;
    SA[0] = SB[0] = 0;
    Rank = 1;
  }
  const int64_t Inner = Shape[Rank - 1];
  int64_t Rows = 1;
  for (int I = 0; I + 1 < Rank; ++I)
    Rows *= Shape[I];
  auto RowOffsets = [&](int64_t Row, int64_t &OffA, int64_t &OffB) {
    OffA = OffB = 0;
    for (int I = Rank - 2; I >= 0; --I) {
      int64_t Idx = Row % Shape[I];
      Row /= Shape[I];
      OffA += Idx * SA[I];
      OffB += Idx * SB[I];
    }
  };
  const int64_t ISA = SA[Rank - 1], ISB = SB[Rank - 1];
  // A long row (a whole tensor once its dims merge) is split into pieces
  // so that it spreads over the threads.
  const int64_t Piece = 16384;
  if (Inner > Piece) {
    const int64_t Pieces = (Inner + Piece - 1) / Piece;
    parallelFor(Rows * Pieces, Threads, [&](int64_t Item) {
      const int64_t Row = Item / Pieces, Begin = Item % Pieces * Piece;
      int64_t OffA, OffB;
      RowOffsets(Row, OffA, OffB);
      HWY_DYNAMIC_DISPATCH(BinaryRowImpl)
      (P.Op, P.Act, A + OffA + Begin * ISA, ISA, B + OffB + Begin * ISB, ISB,
       Y + Row * Inner + Begin, std::min(Piece, Inner - Begin));
    });
    return;
  }
  const int64_t Per = rowsPerItem(Inner);
  parallelFor((Rows + Per - 1) / Per, Threads, [&](int64_t Item) {
    for (int64_t Row = Item * Per; Row < std::min(Rows, (Item + 1) * Per);
         ++Row) {
      int64_t OffA, OffB;
      RowOffsets(Row, OffA, OffB);
      HWY_DYNAMIC_DISPATCH(BinaryRowImpl)
      (P.Op, P.Act, A + OffA, ISA, B + OffB, ISB, Y + Row * Inner, Inner);
    }
  });
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
