//===- LogicKernels.cpp - Comparisons, logic, Where, Cast, Expand ---------===//
//
// Kernels on any element type: comparisons (f32, i32, i64 and bool
// operands), And/Or/Xor/Not, IsNaN/IsInf, Where and Expand (any element
// size), integer and f64 arithmetic, remainders and shifts, linear
// (de)quantization, and Cast
// between f32, f64, i8, u8, i32, i64 and bool. Like the binary arithmetic
// kernel they walk the output in its physical order with each operand
// read through strides (0 where broadcast); rows are plain loops that the
// compiler vectorizes where the strides are unit.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "Parallel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

using namespace strider;
using namespace strider::cpu;

namespace {

/// Adds to \p Offs the operand offsets of row \p Row (the dims but the
/// innermost of \p Shape, row-major).
template <unsigned NumOps>
void rowOffsets(int64_t Row, int Rank, const int64_t *Shape,
                const int64_t (*S)[6], int64_t *Offs) {
  for (int I = Rank - 2; I >= 0; --I) {
    int64_t Idx = Row % Shape[I];
    Row /= Shape[I];
    for (unsigned K = 0; K < NumOps; ++K)
      Offs[K] += Idx * S[K][I];
  }
}

/// Merges dims that nest in the output and every operand, drops unit dims
/// and calls \p Row(OutOffset, OperandOffsets, InnerStrides, Inner) for
/// every innermost row (rows grouped into work items of about 4096
/// elements).
template <unsigned NumOps, typename RowFn>
void forEachRow(const BroadcastParams &P, int Threads, RowFn Row) {
  int Rank = 0;
  int64_t Shape[6], S[NumOps][6];
  for (int I = 0; I < P.Rank; ++I) {
    if (P.Shape[I] == 0)
      return; // Nothing to compute (and nothing to read).
    if (P.Shape[I] == 1)
      continue;
    bool Nests = Rank > 0;
    for (unsigned K = 0; K < NumOps && Nests; ++K)
      Nests = S[K][Rank - 1] == P.Strides[K][I] * P.Shape[I];
    if (Nests) {
      Shape[Rank - 1] *= P.Shape[I];
      for (unsigned K = 0; K < NumOps; ++K)
        S[K][Rank - 1] = P.Strides[K][I];
      continue;
    }
    Shape[Rank] = P.Shape[I];
    for (unsigned K = 0; K < NumOps; ++K)
      S[K][Rank] = P.Strides[K][I];
    ++Rank;
  }
  if (Rank == 0) {
    Shape[0] = 1;
    for (unsigned K = 0; K < NumOps; ++K)
      S[K][0] = 0;
    Rank = 1;
  }
  const int64_t Inner = Shape[Rank - 1];
  int64_t Rows = 1;
  for (int I = 0; I + 1 < Rank; ++I)
    Rows *= Shape[I];
  int64_t InnerStrides[NumOps];
  for (unsigned K = 0; K < NumOps; ++K)
    InnerStrides[K] = S[K][Rank - 1];
  // Short rows are grouped into items of about 4096 elements, long ones
  // split into pieces of at most 16384 (so that one merged row still
  // spreads over the threads).
  const int64_t Piece = 16384;
  if (Inner > Piece) {
    const int64_t Pieces = (Inner + Piece - 1) / Piece;
    parallelFor(Rows * Pieces, Threads, [&](int64_t Item) {
      const int64_t R0 = Item / Pieces, Begin = Item % Pieces * Piece;
      int64_t Offs[NumOps] = {};
      rowOffsets<NumOps>(R0, Rank, Shape, S, Offs);
      for (unsigned K = 0; K < NumOps; ++K)
        Offs[K] += Begin * InnerStrides[K];
      Row(R0 * Inner + Begin, Offs, InnerStrides,
          std::min(Piece, Inner - Begin));
    });
    return;
  }
  const int64_t Per = std::max<int64_t>(1, 4096 / std::max<int64_t>(Inner, 1));
  parallelFor((Rows + Per - 1) / Per, Threads, [&](int64_t Item) {
    for (int64_t R0 = Item * Per; R0 < std::min(Rows, (Item + 1) * Per); ++R0) {
      int64_t Offs[NumOps] = {};
      rowOffsets<NumOps>(R0, Rank, Shape, S, Offs);
      Row(R0 * Inner, Offs, InnerStrides, Inner);
    }
  });
}

template <typename T, typename Pred>
void compareRow(const T *A, int64_t SA, const T *B, int64_t SB, uint8_t *Y,
                int64_t N, Pred P) {
  if (SA == 1 && SB == 1) {
    for (int64_t I = 0; I < N; ++I)
      Y[I] = P(A[I], B[I]);
    return;
  }
  for (int64_t I = 0; I < N; ++I)
    Y[I] = P(A[I * SA], B[I * SB]);
}

template <typename T>
void compareTyped(CompareOp Op, const BroadcastParams &P, const T *A,
                  const T *B, uint8_t *Y, int Threads) {
  forEachRow<2>(
      P, Threads,
      [&](int64_t YOff, const int64_t *Offs, const int64_t *S, int64_t N) {
        const T *AR = A + Offs[0], *BR = B + Offs[1];
        uint8_t *YR = Y + YOff;
        switch (Op) {
        case CompareOp::Equal:
          return compareRow(AR, S[0], BR, S[1], YR, N,
                            [](T X, T Z) { return X == Z; });
        case CompareOp::Less:
          return compareRow(AR, S[0], BR, S[1], YR, N,
                            [](T X, T Z) { return X < Z; });
        case CompareOp::LessOrEqual:
          return compareRow(AR, S[0], BR, S[1], YR, N,
                            [](T X, T Z) { return X <= Z; });
        case CompareOp::Greater:
          return compareRow(AR, S[0], BR, S[1], YR, N,
                            [](T X, T Z) { return X > Z; });
        case CompareOp::GreaterOrEqual:
          return compareRow(AR, S[0], BR, S[1], YR, N,
                            [](T X, T Z) { return X >= Z; });
        case CompareOp::And:
          return compareRow(AR, S[0], BR, S[1], YR, N,
                            [](T X, T Z) { return X != 0 && Z != 0; });
        case CompareOp::Or:
          return compareRow(AR, S[0], BR, S[1], YR, N,
                            [](T X, T Z) { return X != 0 || Z != 0; });
        case CompareOp::Xor:
          return compareRow(AR, S[0], BR, S[1], YR, N,
                            [](T X, T Z) { return (X != 0) != (Z != 0); });
        }
      });
}

/// One element of an integer operation, wrapping through int64 as the
/// reference does; \p U64: both hold u64 bits.
int64_t applyInt(ArithOp Op, int64_t A, int64_t B, bool U64) {
  const uint64_t UA = uint64_t(A), UB = uint64_t(B);
  switch (Op) {
  case ArithOp::Add:
    return int64_t(UA + UB);
  case ArithOp::Sub:
    return int64_t(UA - UB);
  case ArithOp::Mul:
    return int64_t(UA * UB);
  case ArithOp::Div:
    if (B == 0)
      return 0;
    if (U64)
      return int64_t(UA / UB);
    if (B == -1)
      return int64_t(uint64_t(0) - UA);
    return A / B;
  case ArithOp::Mod:
  case ArithOp::FMod: {
    if (B == 0)
      return 0;
    if (U64)
      return int64_t(UA % UB);
    if (B == -1)
      return 0;
    const int64_t R = A % B;
    return Op == ArithOp::Mod && R != 0 && (R < 0) != (B < 0) ? R + B : R;
  }
  case ArithOp::ShiftLeft:
    return UB >= 64 ? 0 : int64_t(UA << UB);
  case ArithOp::ShiftRight:
    return UB >= 64 ? 0 : int64_t(UA >> UB);
  case ArithOp::Max:
    return (U64 ? UA > UB : A > B) ? A : B;
  case ArithOp::Min:
    return (U64 ? UA < UB : A < B) ? A : B;
  }
  return 0;
}

/// Floating-point remainders are C's fmod (ONNX requires fmod = 1 for
/// them); shifts do not apply.
double applyFloat(ArithOp Op, double A, double B) {
  switch (Op) {
  case ArithOp::Add:
    return A + B;
  case ArithOp::Sub:
    return A - B;
  case ArithOp::Mul:
    return A * B;
  case ArithOp::Div:
    return A / B;
  case ArithOp::Mod:
  case ArithOp::FMod:
    return std::fmod(A, B);
  case ArithOp::ShiftLeft:
  case ArithOp::ShiftRight:
  case ArithOp::Max: // Of integers only (lowerArith).
  case ArithOp::Min:
    break;
  }
  return 0;
}

template <typename T>
void arithTyped(ArithOp Op, const BroadcastParams &P, const T *A, const T *B,
                T *Y, int Threads) {
  forEachRow<2>(
      P, Threads,
      [&](int64_t YOff, const int64_t *Offs, const int64_t *S, int64_t N) {
        const T *AR = A + Offs[0], *BR = B + Offs[1];
        T *YR = Y + YOff;
        for (int64_t I = 0; I < N; ++I) {
          if constexpr (std::is_floating_point_v<T>)
            YR[I] = T(applyFloat(Op, AR[I * S[0]], BR[I * S[1]]));
          else
            YR[I] = T(applyInt(Op, int64_t(AR[I * S[0]]), int64_t(BR[I * S[1]]),
                               std::is_same_v<T, uint64_t>));
        }
      });
}

template <typename T>
void whereTyped(const BroadcastParams &P, const uint8_t *C, const T *X,
                const T *Z, T *Y, int Threads) {
  forEachRow<3>(
      P, Threads,
      [&](int64_t YOff, const int64_t *Offs, const int64_t *S, int64_t N) {
        const uint8_t *CR = C + Offs[0];
        const T *XR = X + Offs[1], *ZR = Z + Offs[2];
        T *YR = Y + YOff;
        // Both sides loaded: a select, not a branch on random conditions
        // (and a vector loop for unit strides).
        if (S[0] == 1 && S[1] == 1 && S[2] == 1) {
          for (int64_t I = 0; I < N; ++I) {
            const T XV = XR[I], ZV = ZR[I];
            YR[I] = CR[I] ? XV : ZV;
          }
          return;
        }
        for (int64_t I = 0; I < N; ++I) {
          const T XV = XR[I * S[1]], ZV = ZR[I * S[2]];
          YR[I] = CR[I * S[0]] ? XV : ZV;
        }
      });
}

template <typename T>
void expandTyped(const BroadcastParams &P, const T *X, T *Y, int Threads) {
  forEachRow<1>(
      P, Threads,
      [&](int64_t YOff, const int64_t *Offs, const int64_t *S, int64_t N) {
        const T *XR = X + Offs[0];
        T *YR = Y + YOff;
        if (S[0] == 0)
          std::fill(YR, YR + N, XR[0]);
        else
          for (int64_t I = 0; I < N; ++I)
            YR[I] = XR[I * S[0]];
      });
}

/// One element converted as the reference interpreter's Cast does: floats
/// to integers truncate (NaN to 0, saturating at the int64 range) and then
/// wrap to the destination's width; integers to floats go through double;
/// anything to bool is "not zero".
template <typename D, typename S> D convertElement(S X) {
  if constexpr (std::is_same_v<D, bool>) {
    return X != 0;
  } else if constexpr (std::is_floating_point_v<D>) {
    return D(double(X));
  } else if constexpr (std::is_floating_point_v<S>) {
    double V = double(X);
    int64_t I = std::isnan(V)                 ? 0
                : V >= 9223372036854775807.0  ? INT64_MAX
                : V <= -9223372036854775808.0 ? INT64_MIN
                                              : int64_t(V);
    return D(I);
  } else {
    return D(int64_t(X));
  }
}

template <typename D, typename S>
void castTyped(const void *X, void *Y, int64_t Count, int Threads) {
  const S *XP = static_cast<const S *>(X);
  D *YP = static_cast<D *>(Y);
  const int64_t Chunk = 1 << 16;
  parallelFor((Count + Chunk - 1) / Chunk, Threads, [&](int64_t Item) {
    const int64_t End = std::min(Count, (Item + 1) * Chunk);
    for (int64_t I = Item * Chunk; I < End; ++I)
      YP[I] = convertElement<D>(XP[I]);
  });
}

/// Calls \p F with a value of the C++ type of \p Type (bool for Bool).
template <typename Fn> void withCastType(CastType Type, Fn F) {
  switch (Type) {
  case CastType::F32:
    return F(float());
  case CastType::F64:
    return F(double());
  case CastType::I8:
    return F(int8_t());
  case CastType::U8:
    return F(uint8_t());
  case CastType::I32:
    return F(int32_t());
  case CastType::I64:
    return F(int64_t());
  case CastType::Bool:
    return F(bool());
  }
}

} // namespace

void cpu::runCompare(CompareOp Op, CompareType Type, const BroadcastParams &P,
                     const void *A, const void *B, uint8_t *Y, int Threads) {
  switch (Type) {
  case CompareType::F32:
    return compareTyped(Op, P, static_cast<const float *>(A),
                        static_cast<const float *>(B), Y, Threads);
  case CompareType::I32:
    return compareTyped(Op, P, static_cast<const int32_t *>(A),
                        static_cast<const int32_t *>(B), Y, Threads);
  case CompareType::I64:
    return compareTyped(Op, P, static_cast<const int64_t *>(A),
                        static_cast<const int64_t *>(B), Y, Threads);
  case CompareType::Bool:
    return compareTyped(Op, P, static_cast<const uint8_t *>(A),
                        static_cast<const uint8_t *>(B), Y, Threads);
  }
}

void cpu::runArith(ArithOp Op, ArithType Type, const BroadcastParams &P,
                   const void *A, const void *B, void *Y, int Threads) {
  switch (Type) {
  case ArithType::F32:
    return arithTyped(Op, P, static_cast<const float *>(A),
                      static_cast<const float *>(B), static_cast<float *>(Y),
                      Threads);
  case ArithType::U8:
    return arithTyped(Op, P, static_cast<const uint8_t *>(A),
                      static_cast<const uint8_t *>(B),
                      static_cast<uint8_t *>(Y), Threads);
  case ArithType::U16:
    return arithTyped(Op, P, static_cast<const uint16_t *>(A),
                      static_cast<const uint16_t *>(B),
                      static_cast<uint16_t *>(Y), Threads);
  case ArithType::U32:
    return arithTyped(Op, P, static_cast<const uint32_t *>(A),
                      static_cast<const uint32_t *>(B),
                      static_cast<uint32_t *>(Y), Threads);
  case ArithType::U64:
    return arithTyped(Op, P, static_cast<const uint64_t *>(A),
                      static_cast<const uint64_t *>(B),
                      static_cast<uint64_t *>(Y), Threads);
  case ArithType::F64:
    return arithTyped(Op, P, static_cast<const double *>(A),
                      static_cast<const double *>(B), static_cast<double *>(Y),
                      Threads);
  case ArithType::I32:
    return arithTyped(Op, P, static_cast<const int32_t *>(A),
                      static_cast<const int32_t *>(B),
                      static_cast<int32_t *>(Y), Threads);
  case ArithType::I64:
    return arithTyped(Op, P, static_cast<const int64_t *>(A),
                      static_cast<const int64_t *>(B),
                      static_cast<int64_t *>(Y), Threads);
  }
}

void cpu::runNot(const uint8_t *X, uint8_t *Y, int64_t Count) {
  for (int64_t I = 0; I < Count; ++I)
    Y[I] = !X[I];
}

namespace {

/// Runs \p F(Begin, End, Channel) over runs of elements sharing a channel,
/// in pieces of about 16384 elements over the threads.
template <typename Fn>
void forEachChannelRun(const QuantParams &Q, int64_t Count, int Threads, Fn F) {
  constexpr int64_t Piece = 16384;
  parallelFor((Count + Piece - 1) / Piece, Threads, [&](int64_t P) {
    const int64_t End = std::min(Count, (P + 1) * Piece);
    for (int64_t I = P * Piece; I < End;) {
      const int64_t RunEnd =
          Q.Channels == 1 ? End : std::min(End, (I / Q.Stride + 1) * Q.Stride);
      F(I, RunEnd, Q.Channels == 1 ? 0 : (I / Q.Stride) % Q.Channels);
      I = RunEnd;
    }
  });
}

template <typename T>
void quantizeTyped(const QuantParams &Q, const float *X, T *Y, int64_t Count,
                   int Threads) {
  forEachChannelRun(Q, Count, Threads, [&](int64_t B, int64_t E, int64_t C) {
    quantizeRow(X + B, Y + B, E - B, Q.Scales[size_t(C)],
                float(Q.Zeros[size_t(C)]));
  });
}

template <typename T>
void dequantizeTyped(const QuantParams &Q, const T *X, float *Y, int64_t Count,
                     int Threads) {
  forEachChannelRun(Q, Count, Threads, [&](int64_t B, int64_t E, int64_t C) {
    const float Scale = Q.Scales[size_t(C)];
    if constexpr (sizeof(T) == 1) {
      dequantizeRow(X + B, Y + B, E - B, Scale, float(Q.Zeros[size_t(C)]));
    } else {
      const int64_t Zero = Q.Zeros[size_t(C)];
      for (int64_t I = B; I < E; ++I)
        Y[I] = float(int64_t(X[I]) - Zero) * Scale;
    }
  });
}

} // namespace

void cpu::runQuantize(const QuantParams &Q, bool Signed, const float *X,
                      void *Y, int64_t Count, int Threads) {
  if (Signed)
    quantizeTyped(Q, X, static_cast<int8_t *>(Y), Count, Threads);
  else
    quantizeTyped(Q, X, static_cast<uint8_t *>(Y), Count, Threads);
}

void cpu::runDequantize(const QuantParams &Q, QuantType XType, const void *X,
                        float *Y, int64_t Count, int Threads) {
  switch (XType) {
  case QuantType::U8:
    return dequantizeTyped(Q, static_cast<const uint8_t *>(X), Y, Count,
                           Threads);
  case QuantType::I8:
    return dequantizeTyped(Q, static_cast<const int8_t *>(X), Y, Count,
                           Threads);
  case QuantType::I32:
    return dequantizeTyped(Q, static_cast<const int32_t *>(X), Y, Count,
                           Threads);
  }
}

void cpu::runClassify(FloatClass Class, const float *X, uint8_t *Y,
                      int64_t Count) {
  switch (Class) {
  case FloatClass::NaN:
    for (int64_t I = 0; I < Count; ++I)
      Y[I] = X[I] != X[I];
    return;
  case FloatClass::Inf:
    for (int64_t I = 0; I < Count; ++I)
      Y[I] = std::fabs(X[I]) == INFINITY;
    return;
  case FloatClass::PosInf:
    for (int64_t I = 0; I < Count; ++I)
      Y[I] = X[I] == INFINITY;
    return;
  case FloatClass::NegInf:
    for (int64_t I = 0; I < Count; ++I)
      Y[I] = X[I] == -INFINITY;
    return;
  }
}

void cpu::runWhere(unsigned ElementBytes, const BroadcastParams &P,
                   const uint8_t *C, const void *X, const void *Z, void *Y,
                   int Threads) {
  switch (ElementBytes) {
  case 1:
    return whereTyped(P, C, static_cast<const uint8_t *>(X),
                      static_cast<const uint8_t *>(Z),
                      static_cast<uint8_t *>(Y), Threads);
  case 2:
    return whereTyped(P, C, static_cast<const uint16_t *>(X),
                      static_cast<const uint16_t *>(Z),
                      static_cast<uint16_t *>(Y), Threads);
  case 4:
    return whereTyped(P, C, static_cast<const uint32_t *>(X),
                      static_cast<const uint32_t *>(Z),
                      static_cast<uint32_t *>(Y), Threads);
  case 8:
    return whereTyped(P, C, static_cast<const uint64_t *>(X),
                      static_cast<const uint64_t *>(Z),
                      static_cast<uint64_t *>(Y), Threads);
  }
}

void cpu::runExpand(unsigned ElementBytes, const BroadcastParams &P,
                    const void *X, void *Y, int Threads) {
  switch (ElementBytes) {
  case 1:
    return expandTyped(P, static_cast<const uint8_t *>(X),
                       static_cast<uint8_t *>(Y), Threads);
  case 2:
    return expandTyped(P, static_cast<const uint16_t *>(X),
                       static_cast<uint16_t *>(Y), Threads);
  case 4:
    return expandTyped(P, static_cast<const uint32_t *>(X),
                       static_cast<uint32_t *>(Y), Threads);
  case 8:
    return expandTyped(P, static_cast<const uint64_t *>(X),
                       static_cast<uint64_t *>(Y), Threads);
  }
}

void cpu::runCast(CastType From, CastType To, const void *X, void *Y,
                  int64_t Count, int Threads) {
  withCastType(From, [&](auto S) {
    withCastType(To, [&](auto D) {
      castTyped<decltype(D), decltype(S)>(X, Y, Count, Threads);
    });
  });
}
