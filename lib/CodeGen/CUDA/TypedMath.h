//===- TypedMath.h - Elements of the typed kernel ---------------*- C++ -*-===//
//
// Private to lib/CodeGen/CUDA. The typed kernel's elements (TypedParams):
// storage conversions (half, bfloat16), loads and stores of any element
// type, index checks, and evalTyped, one element of every elementwise
// TypedOp.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_TYPEDMATH_H
#define STRIDER_LIB_CODEGEN_CUDA_TYPEDMATH_H

#include "ElementMath.h"

namespace strider {
namespace cuda {

//===----------------------------------------------------------------------===//
// Typed elements (TypedParams)
//===----------------------------------------------------------------------===//

/// IEEE half bits to float, exactly (subnormals, infinities, NaN).
STRIDER_HOST_DEVICE float halfBitsToFloat(uint16_t H) {
  const uint32_t Sign = uint32_t(H & 0x8000u) << 16;
  uint32_t Exp = (H >> 10) & 0x1fu, Man = H & 0x3ffu, Bits;
  if (Exp == 0x1fu) {
    Bits = Sign | 0x7f800000u | (Man << 13);
  } else if (Exp != 0) {
    Bits = Sign | ((Exp + 112u) << 23) | (Man << 13);
  } else if (Man == 0) {
    Bits = Sign;
  } else {
    // A subnormal: shift the mantissa up to its leading one.
    uint32_t E = 113;
    while (!(Man & 0x400u)) {
      Man <<= 1;
      --E;
    }
    Bits = Sign | (E << 23) | ((Man & 0x3ffu) << 13);
  }
  float F;
  memcpy(&F, &Bits, 4);
  return F;
}

/// Float to IEEE half bits, rounding to nearest even (as __float2half_rn):
/// 65520 and more become infinity, NaN stays NaN.
STRIDER_HOST_DEVICE uint16_t floatToHalfBits(float F) {
  uint32_t X;
  memcpy(&X, &F, 4);
  const uint32_t Sign = (X >> 16) & 0x8000u, Abs = X & 0x7fffffffu;
  if (Abs >= 0x7f800000u)
    return uint16_t(Sign | 0x7c00u | (Abs > 0x7f800000u ? 0x200u : 0u));
  if (Abs >= 0x477ff000u)
    return uint16_t(Sign | 0x7c00u);
  if (Abs >= 0x38800000u) {
    const uint32_t R = Abs + 0xfffu + ((Abs >> 13) & 1u);
    return uint16_t(Sign | ((R - 0x38000000u) >> 13));
  }
  // Below the smallest normal: a multiple of 2^-24, rounded to even.
  const uint32_t E = Abs >> 23;
  if (E < 102)
    return uint16_t(Sign);
  const uint32_t Man = (Abs & 0x7fffffu) | 0x800000u, Shift = 126 - E;
  uint32_t Q = Man >> Shift;
  const uint32_t Rest = Man & ((1u << Shift) - 1u), Half = 1u << (Shift - 1);
  if (Rest > Half || (Rest == Half && (Q & 1u)))
    ++Q;
  return uint16_t(Sign | Q);
}

/// bfloat16 bits to float and back (rounding to nearest even, NaN kept).
STRIDER_HOST_DEVICE float bf16BitsToFloat(uint16_t H) {
  const uint32_t Bits = uint32_t(H) << 16;
  float F;
  memcpy(&F, &Bits, 4);
  return F;
}
STRIDER_HOST_DEVICE uint16_t floatToBf16Bits(float F) {
  uint32_t X;
  memcpy(&X, &F, 4);
  if ((X & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((X >> 16) | 0x40u);
  return uint16_t((X + 0x7fffu + ((X >> 16) & 1u)) >> 16);
}

STRIDER_HOST_DEVICE bool isIntegerType(ScalarType T) {
  switch (T) {
  case ScalarType::F32:
  case ScalarType::F16:
  case ScalarType::BF16:
  case ScalarType::F64:
    return false;
  default:
    return true;
  }
}

STRIDER_HOST_DEVICE int getScalarBytes(ScalarType T) {
  switch (T) {
  case ScalarType::F32:
  case ScalarType::I32:
  case ScalarType::U32:
    return 4;
  case ScalarType::F16:
  case ScalarType::BF16:
  case ScalarType::I16:
  case ScalarType::U16:
    return 2;
  case ScalarType::I64:
  case ScalarType::U64:
  case ScalarType::F64:
    return 8;
  case ScalarType::Bool:
  case ScalarType::I8:
  case ScalarType::U8:
    return 1;
  }
  return 1;
}

/// Whether \p A orders before \p B, integers of type \p T as the kernel
/// holds them (u64 by its bits, compared as unsigned).
STRIDER_HOST_DEVICE bool intLess(ScalarType T, int64_t A, int64_t B) {
  return T == ScalarType::U64 ? uint64_t(A) < uint64_t(B) : A < B;
}

/// Element \p I of \p Base as a double (exact for every float type and
/// every integer below 2^53).
STRIDER_HOST_DEVICE int64_t loadInt(ScalarType T, const void *Base, int64_t I);
STRIDER_HOST_DEVICE double loadDouble(ScalarType T, const void *Base,
                                      int64_t I) {
  if (T == ScalarType::U64)
    return double(uint64_t(loadInt(T, Base, I)));
  if (isIntegerType(T))
    return double(loadInt(T, Base, I));
  const char *P = static_cast<const char *>(Base) + I * getScalarBytes(T);
  if (T == ScalarType::F32) {
    float V;
    memcpy(&V, P, 4);
    return V;
  }
  if (T == ScalarType::F64) {
    double V;
    memcpy(&V, P, 8);
    return V;
  }
  uint16_t H;
  memcpy(&H, P, 2);
  return T == ScalarType::F16 ? halfBitsToFloat(H) : bf16BitsToFloat(H);
}

/// Element \p I of \p Base as an integer (floats truncated toward zero,
/// NaN and values out of range as 0).
STRIDER_HOST_DEVICE int64_t loadInt(ScalarType T, const void *Base, int64_t I) {
  const char *P = static_cast<const char *>(Base) + I * getScalarBytes(T);
  switch (T) {
  case ScalarType::I32: {
    int32_t V;
    memcpy(&V, P, 4);
    return V;
  }
  case ScalarType::I64:
  case ScalarType::U64: { // u64: its bits.
    int64_t V;
    memcpy(&V, P, 8);
    return V;
  }
  case ScalarType::Bool:
    return *P ? 1 : 0;
  case ScalarType::I8:
    return int8_t(*P);
  case ScalarType::U8:
    return uint8_t(*P);
  case ScalarType::I16: {
    int16_t V;
    memcpy(&V, P, 2);
    return V;
  }
  case ScalarType::U16: {
    uint16_t V;
    memcpy(&V, P, 2);
    return V;
  }
  case ScalarType::U32: {
    uint32_t V;
    memcpy(&V, P, 4);
    return V;
  }
  default: {
    const double V = loadDouble(T, Base, I);
    return V > -9.2233720368547758e18 && V < 9.2233720368547758e18 ? int64_t(V)
                                                                   : 0;
  }
  }
}

/// Stores \p V (a double, or the integer \p IV when \p IsInt) as element
/// \p I of \p Base: floats round to nearest, integers from a double
/// truncate (NaN and values out of range as 0) and from an integer keep
/// their low bits, bool is != 0.
STRIDER_HOST_DEVICE void storeScalar(ScalarType T, void *Base, int64_t I,
                                     double V, int64_t IV, bool IsInt) {
  char *P = static_cast<char *>(Base) + I * getScalarBytes(T);
  if (T == ScalarType::Bool) {
    *P = IsInt ? IV != 0 : V != 0.0;
    return;
  }
  if (isIntegerType(T)) {
    int64_t X = IV;
    if (!IsInt && T == ScalarType::U64 && V >= 9.2233720368547758e18 &&
        V < 1.8446744073709552e19)
      X = int64_t(uint64_t(V)); // Past INT64_MAX, still a u64.
    else if (!IsInt)
      X = V > -9.2233720368547758e18 && V < 9.2233720368547758e18 ? int64_t(V)
                                                                  : 0;
    // The low bits, whatever the signedness.
    const uint64_t Bits = uint64_t(X);
    switch (getScalarBytes(T)) {
    case 1:
      *P = char(uint8_t(Bits));
      break;
    case 2: {
      const uint16_t X16 = uint16_t(Bits);
      memcpy(P, &X16, 2);
      break;
    }
    case 4: {
      const uint32_t X32 = uint32_t(Bits);
      memcpy(P, &X32, 4);
      break;
    }
    default:
      memcpy(P, &X, 8);
      break;
    }
    return;
  }
  if (T == ScalarType::F64) {
    const double D = IsInt ? double(IV) : V;
    memcpy(P, &D, 8);
    return;
  }
  const float F = float(IsInt ? double(IV) : V);
  if (T == ScalarType::F32) {
    memcpy(P, &F, 4);
    return;
  }
  const uint16_t H =
      T == ScalarType::F16 ? floatToHalfBits(F) : floatToBf16Bits(F);
  memcpy(P, &H, 2);
}

/// Reports \p Value (outside its \p Bound) found by plan step \p Step to
/// \p Err, unless something was reported before: the first report of a run
/// wins, whole (atomically claimed on the device).
STRIDER_HOST_DEVICE void reportRunError(RunError *Err, int32_t Step,
                                        RunError::Kind What, int64_t Value,
                                        int64_t Bound) {
  if (!Err)
    return;
#ifdef __CUDA_ARCH__
  if (atomicCAS(&Err->Step, -1, -2) != -1)
    return;
#else
  if (Err->Step != -1)
    return;
#endif
  Err->What = What;
  Err->Value = Value;
  Err->Bound = Bound;
#ifdef __CUDA_ARCH__
  __threadfence();
  atomicExch(&Err->Step, Step);
#else
  Err->Step = Step;
#endif
}

/// \p Base to the power \p Exp in wrapping integers (negative powers: 0
/// but for bases 1 and -1), as the reference interpreter computes it.
STRIDER_HOST_DEVICE int64_t powInt(int64_t Base, int64_t Exp) {
  if (Exp < 0)
    return Base == 1 ? 1 : Base == -1 ? (Exp % 2 ? -1 : 1) : 0;
  uint64_t R = 1, B = uint64_t(Base);
  while (Exp) {
    if (Exp & 1)
      R *= B;
    B *= B;
    Exp >>= 1;
  }
  return int64_t(R);
}

/// Element \p Index of a typed Pad (see TypedOp).
STRIDER_HOST_DEVICE void evalTypedPad(const TypedParams &P, const void *X,
                                      void *Y, int64_t Index) {
  const int64_t From = getPadSourceOffset(
      P.Rank, P.Shape, P.PadBegin, P.PadXShape, P.Strides[0], P.PadMode, Index);
  const int Bytes = getScalarBytes(P.Y);
  if (From >= 0)
    memcpy(static_cast<char *>(Y) + Index * Bytes,
           static_cast<const char *>(X) + From * Bytes, size_t(Bytes));
  else
    storeScalar(P.Y, Y, Index, P.PadFill, P.PadFillInt, isIntegerType(P.Y));
}

/// The data offset of GatherND/ScatterND tuple \p T (indices \p Indices
/// of type \p IT), or -1 after reporting an index out of range to
/// \p Err.
STRIDER_HOST_DEVICE int64_t getNdSliceOffset(const TypedParams &P,
                                             ScalarType IT, const void *Indices,
                                             int64_t T, RunError *Err) {
  int64_t Off = T / P.NdTuplesPerBatch * P.NdBatchStride;
  for (int J = 0; J < P.NdRank; ++J) {
    const int64_t Size = P.NdDims[J];
    int64_t I = loadInt(IT, Indices, T * P.NdRank + J);
    if (I < -Size || I >= Size) {
      reportRunError(Err, P.PlanStep, RunError::Index, I, Size);
      return -1;
    }
    Off += (I < 0 ? I + Size : I) * P.NdStrides[J];
  }
  return Off;
}

/// Element \p Index (row-major over P.Shape) of Y = P.Op(operands); a
/// gather index out of range goes to \p Err.
STRIDER_HOST_DEVICE void evalTyped(const TypedParams &P, const void *const *Ins,
                                   void *Y, int64_t Index, RunError *Err) {
  if (P.Op == TypedOp::Pad) {
    evalTypedPad(P, Ins[0], Y, Index);
    return;
  }
  int64_t Off[3] = {0, 0, 0};
  int64_t Rest = Index;
  for (int D = P.Rank - 1; D >= 0; --D) {
    const int64_t At = Rest % P.Shape[D];
    Rest /= P.Shape[D];
    for (int K = 0; K < 3; ++K)
      Off[K] += At * P.Strides[K][D];
  }
  const ScalarType A = P.In[0];
  switch (P.Op) {
  case TypedOp::Cast: {
    const int64_t At = P.StridedY ? Off[2] : Index;
    // u64 to a float type converts its unsigned value.
    if (isIntegerType(A) && (A != ScalarType::U64 || isIntegerType(P.Y)))
      storeScalar(P.Y, Y, At, 0.0, loadInt(A, Ins[0], Off[0]), true);
    else
      storeScalar(P.Y, Y, At, loadDouble(A, Ins[0], Off[0]), 0, false);
    return;
  }
  case TypedOp::Add:
  case TypedOp::Sub:
  case TypedOp::Mul:
  case TypedOp::Div:
  case TypedOp::Max:
  case TypedOp::Min: {
    if (!isIntegerType(P.Y)) { // f64: in double.
      const double X = loadDouble(A, Ins[0], Off[0]),
                   W = loadDouble(P.In[1], Ins[1], Off[1]);
      double R = P.Op == TypedOp::Add   ? X + W
                 : P.Op == TypedOp::Sub ? X - W
                 : P.Op == TypedOp::Mul ? X * W
                 : P.Op == TypedOp::Div ? X / W
                 : P.Op == TypedOp::Max ? (X < W ? W : X)
                                        : (W < X ? W : X);
      storeScalar(P.Y, Y, Index, R, 0, false);
      return;
    }
    const int64_t X = loadInt(A, Ins[0], Off[0]),
                  W = loadInt(P.In[1], Ins[1], Off[1]);
    const uint64_t UX = uint64_t(X), UW = uint64_t(W);
    int64_t R = 0;
    switch (P.Op) {
    case TypedOp::Add:
      R = int64_t(UX + UW);
      break;
    case TypedOp::Sub:
      R = int64_t(UX - UW);
      break;
    case TypedOp::Mul:
      R = int64_t(UX * UW);
      break;
    case TypedOp::Div:
      if (P.Y == ScalarType::U64)
        R = W == 0 ? 0 : int64_t(UX / UW);
      else
        R = W == 0 ? 0 : (W == -1 ? int64_t(0 - UX) : X / W);
      break;
    case TypedOp::Max:
      R = intLess(P.Y, X, W) ? W : X;
      break;
    default:
      R = intLess(P.Y, W, X) ? W : X;
      break;
    }
    storeScalar(P.Y, Y, Index, 0.0, R, true);
    return;
  }
  case TypedOp::Neg:
  case TypedOp::Abs:
    if (isIntegerType(A)) {
      const int64_t X = loadInt(A, Ins[0], Off[0]);
      const int64_t Negated = int64_t(0 - uint64_t(X));
      const bool Negative = X < 0 && A != ScalarType::U64;
      storeScalar(P.Y, Y, Index, 0.0,
                  P.Op == TypedOp::Neg || Negative ? Negated : X, true);
    } else {
      const double X = loadDouble(A, Ins[0], Off[0]);
      storeScalar(P.Y, Y, Index, P.Op == TypedOp::Neg ? -X : fabs(X), 0, false);
    }
    return;
  case TypedOp::Sign:
    if (isIntegerType(A)) {
      const int64_t X = loadInt(A, Ins[0], Off[0]);
      storeScalar(P.Y, Y, Index, 0.0,
                  X == 0                          ? 0
                  : X > 0 || A == ScalarType::U64 ? 1
                                                  : -1,
                  true);
    } else {
      const double X = loadDouble(A, Ins[0], Off[0]);
      storeScalar(P.Y, Y, Index, X > 0 ? 1.0 : X < 0 ? -1.0 : X, 0, false);
    }
    return;
  case TypedOp::Pow:
    if (isIntegerType(A) && isIntegerType(P.In[1]))
      storeScalar(
          P.Y, Y, Index, 0.0,
          powInt(loadInt(A, Ins[0], Off[0]), loadInt(P.In[1], Ins[1], Off[1])),
          true);
    else
      storeScalar(P.Y, Y, Index,
                  pow(loadDouble(A, Ins[0], Off[0]),
                      loadDouble(P.In[1], Ins[1], Off[1])),
                  0, false);
    return;
  case TypedOp::Equal:
  case TypedOp::Less:
  case TypedOp::LessEqual:
  case TypedOp::Greater:
  case TypedOp::GreaterEqual: {
    int Cmp; // -1, 0, 1, or 2 when unordered (NaN).
    if (isIntegerType(A)) {
      const int64_t X = loadInt(A, Ins[0], Off[0]),
                    W = loadInt(P.In[1], Ins[1], Off[1]);
      Cmp = intLess(A, X, W) ? -1 : intLess(A, W, X) ? 1 : 0;
    } else {
      const double X = loadDouble(A, Ins[0], Off[0]),
                   W = loadDouble(P.In[1], Ins[1], Off[1]);
      Cmp = X < W ? -1 : X > W ? 1 : X == W ? 0 : 2;
    }
    bool R = false;
    switch (P.Op) {
    case TypedOp::Equal:
      R = Cmp == 0;
      break;
    case TypedOp::Less:
      R = Cmp == -1;
      break;
    case TypedOp::LessEqual:
      R = Cmp == -1 || Cmp == 0;
      break;
    case TypedOp::Greater:
      R = Cmp == 1;
      break;
    default:
      R = Cmp == 1 || Cmp == 0;
      break;
    }
    storeScalar(P.Y, Y, Index, 0.0, R, true);
    return;
  }
  case TypedOp::And:
  case TypedOp::Or:
  case TypedOp::Xor: {
    const bool X = loadInt(A, Ins[0], Off[0]) != 0,
               W = loadInt(P.In[1], Ins[1], Off[1]) != 0;
    const bool R = P.Op == TypedOp::And  ? X && W
                   : P.Op == TypedOp::Or ? X || W
                                         : X != W;
    storeScalar(P.Y, Y, Index, 0.0, R, true);
    return;
  }
  case TypedOp::Not:
    storeScalar(P.Y, Y, Index, 0.0, loadInt(A, Ins[0], Off[0]) == 0, true);
    return;
  case TypedOp::Quantize: {
    // round(x / scale) in float, halves to even, + zero point, saturated.
    const double Z =
        P.NumOperands > 2 ? double(loadInt(P.In[2], Ins[2], Off[2])) : 0.0;
    const float X = float(loadDouble(A, Ins[0], Off[0])),
                S = float(loadDouble(P.In[1], Ins[1], Off[1]));
    const double Q = double(rintf(X / S)) + Z;
    const double Lo = P.Y == ScalarType::I8 ? -128.0 : 0.0,
                 Hi = P.Y == ScalarType::I8 ? 127.0 : 255.0;
    storeScalar(P.Y, Y, Index, 0.0,
                int64_t(Q != Q   ? Z
                        : Q < Lo ? Lo
                        : Q > Hi ? Hi
                                 : Q),
                true);
    return;
  }
  case TypedOp::Dequantize: {
    const int64_t Z = P.NumOperands > 2 ? loadInt(P.In[2], Ins[2], Off[2]) : 0;
    const float S = float(loadDouble(P.In[1], Ins[1], Off[1]));
    storeScalar(P.Y, Y, Index,
                double(float(loadInt(A, Ins[0], Off[0]) - Z) * S), 0, false);
    return;
  }
  case TypedOp::GatherND: {
    const int64_t From =
        getNdSliceOffset(P, P.In[1], Ins[1], Index / P.NdSlice, Err);
    const int Bytes = getScalarBytes(P.Y);
    if (From < 0)
      memset(static_cast<char *>(Y) + Index * Bytes, 0, size_t(Bytes));
    else
      memcpy(static_cast<char *>(Y) + Index * Bytes,
             static_cast<const char *>(Ins[0]) +
                 (From + Index % P.NdSlice) * Bytes,
             size_t(Bytes));
    return;
  }
  case TypedOp::GridSample: {
    const int64_t OW = P.Shape[3], OH = P.Shape[2], C = P.Shape[1];
    const int64_t OX = Index % OW, OY = Index / OW % OH,
                  Ch = Index / (OW * OH) % C, B = Index / (OW * OH * C);
    const int64_t G = ((B * OH + OY) * OW + OX) * 2;
    const int64_t Base = B * P.GridXStrides[0] + Ch * P.GridXStrides[1];
    const double V = gridsample::sample2D(
        P.Grid, P.GridH, P.GridW, loadDouble(P.In[1], Ins[1], G),
        loadDouble(P.In[1], Ins[1], G + 1), [&](int64_t YI, int64_t XI) {
          return loadDouble(A, Ins[0],
                            Base + YI * P.GridXStrides[2] +
                                XI * P.GridXStrides[3]);
        });
    storeScalar(P.Y, Y, Index, V, 0, false);
    return;
  }
  case TypedOp::Math:
    storeScalar(P.Y, Y, Index,
                applyActivationF64(P.Act, loadDouble(A, Ins[0], Off[0])), 0,
                false);
    return;
  case TypedOp::IsNaN:
  case TypedOp::IsInf: {
    const double X = loadDouble(A, Ins[0], Off[0]);
    const bool R = P.Op == TypedOp::IsNaN
                       ? X != X
                       : (X == INFINITY && P.DetectPositive) ||
                             (X == -INFINITY && P.DetectNegative);
    storeScalar(P.Y, Y, Index, 0.0, R, true);
    return;
  }
  case TypedOp::Mod:
  case TypedOp::FMod:
    if (!isIntegerType(A)) { // FMod of floats: C's fmod, exact.
      storeScalar(P.Y, Y, Index,
                  fmod(loadDouble(A, Ins[0], Off[0]),
                       loadDouble(P.In[1], Ins[1], Off[1])),
                  0, false);
    } else {
      const int64_t X = loadInt(A, Ins[0], Off[0]),
                    W = loadInt(P.In[1], Ins[1], Off[1]);
      int64_t R = 0; // x mod 0 is 0, as x / 0 is.
      if (W != 0 && P.Y == ScalarType::U64) {
        R = int64_t(uint64_t(X) % uint64_t(W));
      } else if (W != 0 && W != -1) {
        R = X % W;
        if (P.Op == TypedOp::Mod && R != 0 && (R < 0) != (W < 0))
          R += W;
      }
      storeScalar(P.Y, Y, Index, 0.0, R, true);
    }
    return;
  case TypedOp::ShiftLeft:
  case TypedOp::ShiftRight: {
    const uint64_t X = uint64_t(loadInt(A, Ins[0], Off[0])),
                   W = uint64_t(loadInt(P.In[1], Ins[1], Off[1]));
    const uint64_t R = W >= 64                      ? 0
                       : P.Op == TypedOp::ShiftLeft ? X << W
                                                    : X >> W;
    storeScalar(P.Y, Y, Index, 0.0, int64_t(R), true);
    return;
  }
  case TypedOp::Where: {
    const int K = loadInt(A, Ins[0], Off[0]) != 0 ? 1 : 2;
    const int Bytes = getScalarBytes(P.Y);
    memcpy(static_cast<char *>(Y) + Index * Bytes,
           static_cast<const char *>(Ins[K]) + Off[K] * Bytes, size_t(Bytes));
    return;
  }
  case TypedOp::Gather: {
    int64_t I = loadInt(P.In[1], Ins[1], Off[1]);
    const int Bytes = getScalarBytes(P.Y);
    char *To = static_cast<char *>(Y) + Index * Bytes;
    if (I < -P.AxisSize || I >= P.AxisSize) {
      memset(To, 0, size_t(Bytes));
      reportRunError(Err, P.PlanStep, RunError::Index, I, P.AxisSize);
      return;
    }
    if (I < 0)
      I += P.AxisSize;
    memcpy(To,
           static_cast<const char *>(Ins[0]) +
               (Off[0] + I * P.AxisStride) * Bytes,
           size_t(Bytes));
    return;
  }
  case TypedOp::Trilu: {
    const int64_t Cols = P.Shape[P.Rank - 1], Rows = P.Shape[P.Rank - 2];
    const int64_t Col = Index % Cols, Row = (Index / Cols) % Rows;
    const int64_t K =
        P.NumOperands == 2 ? loadInt(P.In[1], Ins[1], Off[1]) : P.K;
    const bool Keep = P.Upper ? Col - Row >= K : Col - Row <= K;
    const int Bytes = getScalarBytes(P.Y);
    char *To = static_cast<char *>(Y) + Index * Bytes;
    if (Keep)
      memcpy(To, static_cast<const char *>(Ins[0]) + Off[0] * Bytes,
             size_t(Bytes));
    else
      memset(To, 0, size_t(Bytes)); // Zero in every type.
    return;
  }
  case TypedOp::Contract: {
    int64_t Count = 1;
    for (int D = 0; D < P.SumRank; ++D)
      Count *= P.SumShape[D];
    const bool Int = isIntegerType(P.Y);
    const bool Two = P.NumOperands == 2;
    uint64_t IAcc = 0;
    double Acc = 0.0;
    for (int64_t S = 0; S < Count; ++S) {
      int64_t At[2] = {Off[0], Off[1]}, R = S;
      for (int D = P.SumRank - 1; D >= 0; --D) {
        const int64_t K = R % P.SumShape[D];
        R /= P.SumShape[D];
        At[0] += K * P.SumStrides[0][D];
        At[1] += K * P.SumStrides[1][D];
      }
      if (Int) {
        uint64_t V = uint64_t(loadInt(A, Ins[0], At[0]));
        if (Two)
          V *= uint64_t(loadInt(P.In[1], Ins[1], At[1]));
        IAcc += V;
      } else {
        double V = loadDouble(A, Ins[0], At[0]);
        if (Two)
          V *= loadDouble(P.In[1], Ins[1], At[1]);
        Acc += V;
      }
    }
    storeScalar(P.Y, Y, Index, Acc, int64_t(IAcc), Int);
    return;
  }
  case TypedOp::Scatter:
  case TypedOp::ArgMax:
  case TypedOp::ArgMin:
  case TypedOp::TopK:
  case TypedOp::Reduce:
  case TypedOp::CumSum:
  case TypedOp::ScatterND:
    return; // Rows: evalTypedRow.
  case TypedOp::Pad:
    return; // evalTypedPad, above.
  }
}

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_TYPEDMATH_H
