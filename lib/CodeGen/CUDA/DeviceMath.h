//===- DeviceMath.h - Scalar math of the compute kernels --------*- C++ -*-===//
//
// Private to lib/CodeGen/CUDA. What the elementwise, pooling and reduction
// kernels compute per element (fused activations, binary ops, pooling
// windows, reduction steps) as __host__ __device__ functions, and the
// host-side choices of how those kernels walk their data (dim merging,
// thread shapes). Plain C++ outside nvcc, so host unit tests check it
// against the CPU backend's scalar definitions without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_DEVICEMATH_H
#define STRIDER_LIB_CODEGEN_CUDA_DEVICEMATH_H

#include "DataMovementIndexing.h"
#include "Kernels.h"

#include <math.h>
#include <string.h>

#include <cstdint>
#include <type_traits>

#ifdef __CUDACC__
#define STRIDER_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define STRIDER_HOST_DEVICE inline
#endif

namespace strider {
namespace cuda {

//===----------------------------------------------------------------------===//
// Per-element math
//===----------------------------------------------------------------------===//

/// codegen::applyScalar's formulas (strider/CodeGen/Activation.h) in
/// functions that device code can call.
STRIDER_HOST_DEVICE float applyActivation(const codegen::Activation &A,
                                          float X) {
  using codegen::ActKind;
  switch (A.Kind) {
  case ActKind::None:
    return X;
  case ActKind::Relu:
    return X > 0.0f ? X : 0.0f;
  case ActKind::Clip: {
    // std::min(std::max(X, Alpha), Beta), NaN kept.
    const float Lo = X < A.Alpha ? A.Alpha : X;
    return A.Beta < Lo ? A.Beta : Lo;
  }
  case ActKind::LeakyRelu:
    return X < 0.0f ? A.Alpha * X : X;
  case ActKind::Sigmoid:
    return 1.0f / (1.0f + expf(-X));
  case ActKind::HardSigmoid: {
    const float V = A.Alpha * X + A.Beta;
    const float Lo = V < 0.0f ? 0.0f : V;
    return 1.0f < Lo ? 1.0f : Lo;
  }
  case ActKind::HardSwish: {
    const float V = X / 6.0f + 0.5f;
    const float Lo = V < 0.0f ? 0.0f : V;
    return X * (1.0f < Lo ? 1.0f : Lo);
  }
  case ActKind::SiLU:
    return X / (1.0f + expf(-X));
  case ActKind::Tanh:
    return tanhf(X);
  case ActKind::Elu:
    return X < 0.0f ? A.Alpha * expm1f(X) : X;
  case ActKind::Selu:
    return A.Beta * (X <= 0.0f ? A.Alpha * expm1f(X) : X);
  case ActKind::Softplus:
    // max(x, 0) + ln(1 + e^-|x|): e^x never overflows.
    return (X < 0.0f ? 0.0f : X) + log1pf(expf(-fabsf(X)));
  case ActKind::Softsign:
    return X / (1.0f + fabsf(X));
  case ActKind::Exp:
    return expf(X);
  case ActKind::Log:
    return logf(X);
  case ActKind::Sqrt:
    return sqrtf(X);
  case ActKind::Reciprocal:
    return 1.0f / X;
  case ActKind::Neg:
    return -X;
  case ActKind::Abs:
    return fabsf(X);
  case ActKind::Floor:
    return floorf(X);
  case ActKind::Ceil:
    return ceilf(X);
  case ActKind::Sin:
    return sinf(X);
  case ActKind::Cos:
    return cosf(X);
  case ActKind::Tan:
    return tanf(X);
  case ActKind::Asin:
    return asinf(X);
  case ActKind::Acos:
    return acosf(X);
  case ActKind::Atan:
    return atanf(X);
  case ActKind::Sinh:
    return sinhf(X);
  case ActKind::Cosh:
    return coshf(X);
  case ActKind::Asinh:
    return asinhf(X);
  case ActKind::Acosh:
    return acoshf(X);
  case ActKind::Atanh:
    return atanhf(X);
  case ActKind::Sign:
    return X > 0.0f ? 1.0f : X < 0.0f ? -1.0f : X;
  case ActKind::Round:
    return rintf(X); // Halves to even.
  case ActKind::ThresholdedRelu:
    return X > A.Alpha ? X : 0.0f;
  case ActKind::Shrink:
    return X < -A.Alpha ? X + A.Beta : X > A.Alpha ? X - A.Beta : 0.0f;
  case ActKind::Erf:
    return erff(X);
  case ActKind::Gelu:
    return 0.5f * X * (1.0f + erff(X * 0.70710678118654752440f));
  case ActKind::GeluTanh:
    return 0.5f * X *
           (1.0f + tanhf(codegen::GeluTanhScale * (X + 0.044715f * X * X * X)));
  }
  return X;
}

/// applyActivation in double (f64 tensors on the typed kernel): the same
/// formulas with double functions and constants.
STRIDER_HOST_DEVICE double applyActivationF64(const codegen::Activation &A,
                                              double X) {
  using codegen::ActKind;
  const double Alpha = A.Alpha, Beta = A.Beta;
  switch (A.Kind) {
  case ActKind::None:
    return X;
  case ActKind::Relu:
    return X > 0.0 ? X : 0.0;
  case ActKind::Clip: {
    const double Lo = X < Alpha ? Alpha : X;
    return Beta < Lo ? Beta : Lo;
  }
  case ActKind::LeakyRelu:
    return X < 0.0 ? Alpha * X : X;
  case ActKind::Sigmoid:
    return 1.0 / (1.0 + exp(-X));
  case ActKind::HardSigmoid: {
    const double V = Alpha * X + Beta;
    const double Lo = V < 0.0 ? 0.0 : V;
    return 1.0 < Lo ? 1.0 : Lo;
  }
  case ActKind::HardSwish: {
    const double V = X / 6.0 + 0.5;
    const double Lo = V < 0.0 ? 0.0 : V;
    return X * (1.0 < Lo ? 1.0 : Lo);
  }
  case ActKind::SiLU:
    return X / (1.0 + exp(-X));
  case ActKind::Tanh:
    return tanh(X);
  case ActKind::Elu:
    return X < 0.0 ? Alpha * expm1(X) : X;
  case ActKind::Selu:
    return Beta * (X <= 0.0 ? Alpha * expm1(X) : X);
  case ActKind::Softplus:
    return (X < 0.0 ? 0.0 : X) + log1p(exp(-fabs(X)));
  case ActKind::Softsign:
    return X / (1.0 + fabs(X));
  case ActKind::Exp:
    return exp(X);
  case ActKind::Log:
    return log(X);
  case ActKind::Sqrt:
    return sqrt(X);
  case ActKind::Reciprocal:
    return 1.0 / X;
  case ActKind::Neg:
    return -X;
  case ActKind::Abs:
    return fabs(X);
  case ActKind::Floor:
    return floor(X);
  case ActKind::Ceil:
    return ceil(X);
  case ActKind::Sin:
    return sin(X);
  case ActKind::Cos:
    return cos(X);
  case ActKind::Tan:
    return tan(X);
  case ActKind::Asin:
    return asin(X);
  case ActKind::Acos:
    return acos(X);
  case ActKind::Atan:
    return atan(X);
  case ActKind::Sinh:
    return sinh(X);
  case ActKind::Cosh:
    return cosh(X);
  case ActKind::Asinh:
    return asinh(X);
  case ActKind::Acosh:
    return acosh(X);
  case ActKind::Atanh:
    return atanh(X);
  case ActKind::Sign:
    return X > 0.0 ? 1.0 : X < 0.0 ? -1.0 : X;
  case ActKind::Round:
    return rint(X);
  case ActKind::ThresholdedRelu:
    return X > Alpha ? X : 0.0;
  case ActKind::Shrink:
    return X < -Alpha ? X + Beta : X > Alpha ? X - Beta : 0.0;
  case ActKind::Erf:
    return erf(X);
  case ActKind::Gelu:
    return 0.5 * X * (1.0 + erf(X * 0.70710678118654752440));
  case ActKind::GeluTanh:
    return 0.5 * X *
           (1.0 + tanh(0.79788456080286535588 * (X + 0.044715 * X * X * X)));
  }
  return X;
}

/// A op B for the binary ops of ElementwiseParams, as the CPU backend
/// computes them: Max and Min give NaN when either operand is NaN, PRelu
/// scales negative A by B, Pow is C's powf. None gives A.
STRIDER_HOST_DEVICE float applyBinary(BinaryOp Op, float A, float B) {
  switch (Op) {
  case BinaryOp::None:
    return A;
  case BinaryOp::Add:
    return A + B;
  case BinaryOp::Sub:
    return A - B;
  case BinaryOp::Mul:
    return A * B;
  case BinaryOp::Div:
    return A / B;
  case BinaryOp::Pow:
    return powf(A, B);
  case BinaryOp::Max:
    return B != B || B > A ? B : A;
  case BinaryOp::Min:
    return B != B || B < A ? B : A;
  case BinaryOp::PRelu:
    return A < 0.0f ? A * B : A;
  }
  return A;
}

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

/// Whether \p Op runs one thread per row along Axis (evalTypedRow) rather
/// than one per element of Y (evalTyped).
STRIDER_HOST_DEVICE bool isRowOp(TypedOp Op) {
  return Op == TypedOp::Scatter || Op == TypedOp::ArgMax ||
         Op == TypedOp::ArgMin || Op == TypedOp::TopK ||
         Op == TypedOp::Reduce || Op == TypedOp::CumSum ||
         Op == TypedOp::ScatterND;
}

/// Rows of a row op: Shape's elements with the Axis entry removed.
STRIDER_HOST_DEVICE int64_t getRowCount(const TypedParams &P) {
  int64_t Rows = 1;
  for (int D = 0; D < P.Rank; ++D)
    if (D != P.Axis)
      Rows *= P.Shape[D];
  return Rows;
}

/// Where row \p Row starts in each of the three stride sets.
STRIDER_HOST_DEVICE void getRowOffsets(const TypedParams &P, int64_t Row,
                                       int64_t *Off) {
  Off[0] = Off[1] = Off[2] = 0;
  int64_t Rest = Row;
  for (int D = P.Rank - 1; D >= 0; --D) {
    if (D == P.Axis)
      continue;
    const int64_t At = Rest % P.Shape[D];
    Rest /= P.Shape[D];
    for (int K = 0; K < 3; ++K)
      Off[K] += At * P.Strides[K][D];
  }
}

/// \p A (what Y holds) combined with the update \p B by \p R: as
/// integers that wrap (int64_t), or as doubles.
template <typename T>
STRIDER_HOST_DEVICE T combineScatterValues(ScatterReduction R, T A, T B) {
  switch (R) {
  case ScatterReduction::Add:
    if constexpr (std::is_integral_v<T>)
      return T(uint64_t(A) + uint64_t(B));
    else
      return A + B;
  case ScatterReduction::Mul:
    if constexpr (std::is_integral_v<T>)
      return T(uint64_t(A) * uint64_t(B));
    else
      return A * B;
  case ScatterReduction::Max:
    return A < B ? B : A;
  case ScatterReduction::Min:
    return B < A ? B : A;
  case ScatterReduction::None:
    break;
  }
  return B;
}

/// Element \p I of \p Y combined with the update at \p U's element \p J
/// by \p R (integers wrap; floats in double, rounded once on the store).
STRIDER_HOST_DEVICE void combineScatter(ScatterReduction R, ScalarType T,
                                        void *Y, int64_t I, const void *U,
                                        int64_t J) {
  if (T == ScalarType::U64) // Max and min as unsigned.
    storeScalar(T, Y, I, 0.0,
                int64_t(combineScatterValues(R, uint64_t(loadInt(T, Y, I)),
                                             uint64_t(loadInt(T, U, J)))),
                true);
  else if (isIntegerType(T))
    storeScalar(T, Y, I, 0.0,
                combineScatterValues(R, loadInt(T, Y, I), loadInt(T, U, J)),
                true);
  else
    storeScalar(
        T, Y, I,
        combineScatterValues(R, loadDouble(T, Y, I), loadDouble(T, U, J)), 0,
        false);
}

/// Row \p Row of a Scatter (see TypedOp): its updates stored, or combined,
/// in order.
STRIDER_HOST_DEVICE void evalScatterRow(const TypedParams &P,
                                        const void *const *Ins, void *Y,
                                        const int64_t *Off, RunError *Err) {
  const int Bytes = getScalarBytes(P.Y);
  for (int64_t J = 0; J < P.Shape[P.Axis]; ++J) {
    int64_t I = loadInt(P.In[0], Ins[0], Off[0] + J * P.Strides[0][P.Axis]);
    if (I < -P.AxisSize || I >= P.AxisSize) {
      reportRunError(Err, P.PlanStep, RunError::Index, I, P.AxisSize);
      continue;
    }
    if (I < 0)
      I += P.AxisSize;
    const int64_t To = Off[2] + I * P.AxisStride,
                  From = Off[1] + J * P.Strides[1][P.Axis];
    if (P.Reduction != ScatterReduction::None)
      combineScatter(P.Reduction, P.Y, Y, To, Ins[1], From);
    else
      memcpy(static_cast<char *>(Y) + To * Bytes,
             static_cast<const char *>(Ins[1]) + From * Bytes, size_t(Bytes));
  }
}

/// Whether element \p I of an ArgMax/ArgMin row, of value \p V, beats the
/// best so far, element \p At of value \p Best: the greater (ArgMin: the
/// smaller) value, equal values by position (the first, or the last with
/// SelectLast); NaN neither beats nor is beaten.
STRIDER_HOST_DEVICE bool argBeats(const TypedParams &P, double V, int64_t I,
                                  double Best, int64_t At) {
  if (V != Best)
    return P.Op == TypedOp::ArgMax ? V > Best : V < Best;
  return P.SelectLast ? I > At : I < At;
}

/// Row of an ArgMax/ArgMin (see TypedOp) starting at offsets \p Off,
/// element by element: a NaN in first place stays the answer, any other
/// NaN is passed over (the reference's order).
STRIDER_HOST_DEVICE void evalArgRow(const TypedParams &P,
                                    const void *const *Ins, void *Y,
                                    const int64_t *Off) {
  const int64_t Stride = P.Strides[0][P.Axis];
  double Best = loadDouble(P.In[0], Ins[0], Off[0]);
  int64_t At = 0;
  for (int64_t J = 1; J < P.Shape[P.Axis]; ++J) {
    const double V = loadDouble(P.In[0], Ins[0], Off[0] + J * Stride);
    if (argBeats(P, V, J, Best, At)) {
      Best = V;
      At = J;
    }
  }
  storeScalar(P.Y, Y, Off[2], 0.0, At, true);
}

/// A Reduce row (TypedOp::Reduce) of integers (wrapping) or f64.
STRIDER_HOST_DEVICE void evalReduceRow(const TypedParams &P,
                                       const void *const *Ins, void *Y,
                                       const int64_t *Off) {
  const int64_t Stride = P.Strides[0][P.Axis], Len = P.Shape[P.Axis];
  const ScalarType T = P.In[0];
  if (isIntegerType(T)) {
    int64_t R = loadInt(T, Ins[0], Off[0]);
    for (int64_t J = 1; J < Len; ++J) {
      const int64_t V = loadInt(T, Ins[0], Off[0] + J * Stride);
      switch (P.Reduction) {
      case ScatterReduction::Mul:
        R = int64_t(uint64_t(R) * uint64_t(V));
        break;
      case ScatterReduction::Max:
        R = intLess(T, R, V) ? V : R;
        break;
      case ScatterReduction::Min:
        R = intLess(T, V, R) ? V : R;
        break;
      default:
        R = int64_t(uint64_t(R) + uint64_t(V));
        break;
      }
    }
    storeScalar(P.Y, Y, Off[2], 0.0, R, true);
    return;
  }
  double R = loadDouble(T, Ins[0], Off[0]);
  for (int64_t J = 1; J < Len; ++J) {
    const double V = loadDouble(T, Ins[0], Off[0] + J * Stride);
    R = P.Reduction == ScatterReduction::Mul   ? R * V
        : P.Reduction == ScatterReduction::Max ? (V > R || V != V ? V : R)
        : P.Reduction == ScatterReduction::Min ? (V < R || V != V ? V : R)
                                               : R + V;
  }
  storeScalar(P.Y, Y, Off[2], R, 0, false);
}

/// A CumSum row: integers as wrapping int64 (u64 by its bits), floats in
/// double, rounded once per stored sum.
STRIDER_HOST_DEVICE void evalCumSumRow(const TypedParams &P,
                                       const void *const *Ins, void *Y,
                                       const int64_t *Off) {
  const int64_t Len = P.Shape[P.Axis];
  const int64_t XStride = P.Strides[0][P.Axis], YStride = P.Strides[2][P.Axis];
  const ScalarType T = P.In[0];
  uint64_t IntAcc = 0;
  double Acc = 0;
  for (int64_t K = 0; K < Len; ++K) {
    const int64_t J = P.Reverse ? Len - 1 - K : K;
    const int64_t XO = Off[0] + J * XStride, YO = Off[2] + J * YStride;
    if (isIntegerType(T)) {
      const uint64_t V = uint64_t(loadInt(T, Ins[0], XO));
      IntAcc += P.Exclusive ? 0 : V;
      storeScalar(P.Y, Y, YO, 0.0, int64_t(IntAcc), true);
      IntAcc += P.Exclusive ? V : 0;
    } else {
      const double V = loadDouble(T, Ins[0], XO);
      Acc += P.Exclusive ? 0.0 : V;
      storeScalar(P.Y, Y, YO, Acc, 0, false);
      Acc += P.Exclusive ? V : 0.0;
    }
  }
}

/// Threads of an ArgMax/ArgMin row block (launchTyped's argRowsKernel).
constexpr int ArgRowThreads = 256;

/// Whether an ArgMax/ArgMin runs a block per row (rows from 512 elements:
/// a vocabulary's logits, a long spectrum) instead of a thread per row.
STRIDER_HOST_DEVICE bool useArgRowBlocks(const TypedParams &P) {
  return (P.Op == TypedOp::ArgMax || P.Op == TypedOp::ArgMin) &&
         P.Shape[P.Axis] >= 2 * ArgRowThreads;
}

/// A block's partial result, (Best, At), takes candidate (V, I): the
/// argRowsKernel step, in each thread's strided pass and in the tree that
/// combines the threads'. At < 0: none yet. NaN is never taken, so the
/// order of the passes does not matter: the result is the row's extreme
/// over its numbers, ties by position.
STRIDER_HOST_DEVICE bool argTakes(const TypedParams &P, double V, int64_t I,
                                  double Best, int64_t At) {
  return I >= 0 && V == V && (At < 0 || argBeats(P, V, I, Best, At));
}

/// The position argRowsKernel stores, given the row's first element and
/// the block's combined partial: evalArgRow's answer (0 when the first
/// element is NaN or every element is).
STRIDER_HOST_DEVICE int64_t getArgRowResult(double First, int64_t At) {
  return First != First || At < 0 ? 0 : At;
}

/// Whether element \p IA of a TopK row, of value \p A, comes before element
/// \p IB of value \p B in the result: the larger (smallest: the smaller)
/// value first, NaN above every number (as PyTorch's topk has it), equal
/// values by position. A total order, so every element has one rank.
STRIDER_HOST_DEVICE bool topKPrecedes(bool Largest, double A, int64_t IA,
                                      double B, int64_t IB) {
  const bool NanA = A != A, NanB = B != B;
  if (NanA || NanB) {
    if (NanA && NanB)
      return IA < IB;
    return Largest ? NanA : NanB;
  }
  if (A != B)
    return Largest ? A > B : A < B;
  return IA < IB;
}

/// Slot \p Slot of a TopK row's results (offsets \p Off) set to element
/// \p J of its operand row: the value's bits and the position.
STRIDER_HOST_DEVICE void storeTopKSlot(const TypedParams &P, const void *X,
                                       void *Y, void *Y2, const int64_t *Off,
                                       int64_t Slot, int64_t J) {
  const int Bytes = getScalarBytes(P.Y);
  memcpy(static_cast<char *>(Y) +
             (Off[2] + Slot * P.Strides[2][P.Axis]) * Bytes,
         static_cast<const char *>(X) +
             (Off[0] + J * P.Strides[0][P.Axis]) * Bytes,
         size_t(Bytes));
  storeScalar(ScalarType::I64, Y2, Off[1] + Slot * P.Strides[1][P.Axis], 0.0, J,
              true);
}

/// Row of a TopK (see TypedOp) starting at offsets \p Off: each element in
/// turn is inserted into the sorted output row (topKPrecedes), the last
/// dropped once K are held. O(row length x K): for short rows, one thread
/// each.
STRIDER_HOST_DEVICE void evalTopKRow(const TypedParams &P,
                                     const void *const *Ins, void *Y, void *Y2,
                                     const int64_t *Off) {
  const int Bytes = getScalarBytes(P.Y);
  const int64_t XStride = P.Strides[0][P.Axis], IStride = P.Strides[1][P.Axis],
                VStride = P.Strides[2][P.Axis];
  char *Values = static_cast<char *>(Y);
  // Whether (V, J) goes before the result held in Slot.
  auto Before = [&](double V, int64_t J, int64_t Slot) {
    return topKPrecedes(P.Largest, V, J,
                        loadDouble(P.Y, Y, Off[2] + Slot * VStride),
                        loadInt(ScalarType::I64, Y2, Off[1] + Slot * IStride));
  };
  int64_t Held = 0;
  for (int64_t J = 0; J < P.Shape[P.Axis] && P.K > 0; ++J) {
    const double V = loadDouble(P.In[0], Ins[0], Off[0] + J * XStride);
    int64_t Slot = Held;
    if (Held == P.K) {
      if (!Before(V, J, P.K - 1))
        continue;
      Slot = P.K - 1;
    } else {
      ++Held;
    }
    for (; Slot > 0 && Before(V, J, Slot - 1); --Slot) {
      memcpy(Values + (Off[2] + Slot * VStride) * Bytes,
             Values + (Off[2] + (Slot - 1) * VStride) * Bytes, size_t(Bytes));
      storeScalar(ScalarType::I64, Y2, Off[1] + Slot * IStride, 0.0,
                  loadInt(ScalarType::I64, Y2, Off[1] + (Slot - 1) * IStride),
                  true);
    }
    storeTopKSlot(P, Ins[0], Y, Y2, Off, Slot, J);
  }
}

/// Elements of a TopK rank tile (launchTyped's topKRankKernel: a block of
/// this many threads, one element each, reads the row through shared
/// memory this many at a time).
constexpr int TopKRankTile = 256;

/// Whether a TopK runs by ranks instead of one thread per row: each
/// element counts the elements of its row that precede it (topKPrecedes)
/// and, if fewer than K do, stores itself at that slot. Parallel within a
/// row but O(row length^2) per row, so for rows from TopKRankTile
/// elements (a detector's candidates, a vocabulary) up to a total of
/// 2^33 comparisons; insertion (O(row length x K), one thread per row)
/// otherwise.
STRIDER_HOST_DEVICE bool useTopKRanks(const TypedParams &P) {
  const int64_t Len = P.Shape[P.Axis];
  if (P.Op != TypedOp::TopK || Len < TopKRankTile || P.K == 0)
    return false;
  const int64_t Rows = getRowCount(P);
  const double Comparisons = double(Rows) * double(Len) * double(Len);
  return Comparisons <= double(int64_t(1) << 33);
}

/// The rank of element \p I of a TopK row (offsets \p Off): how many of
/// the row's elements precede it. The host's model of topKRankKernel,
/// which counts the same comparisons tile by tile.
STRIDER_HOST_DEVICE int64_t getTopKRank(const TypedParams &P, const void *X,
                                        const int64_t *Off, int64_t I) {
  const int64_t Stride = P.Strides[0][P.Axis];
  const double V = loadDouble(P.In[0], X, Off[0] + I * Stride);
  int64_t Rank = 0;
  for (int64_t J = 0; J < P.Shape[P.Axis]; ++J)
    Rank += topKPrecedes(P.Largest, loadDouble(P.In[0], X, Off[0] + J * Stride),
                         J, V, I);
  return Rank;
}

/// Row \p Row of a row op (isRowOp); a scatter index out of range goes
/// to \p Err.
STRIDER_HOST_DEVICE void evalTypedRow(const TypedParams &P,
                                      const void *const *Ins, void *Y, void *Y2,
                                      int64_t Row, RunError *Err) {
  int64_t Off[3];
  getRowOffsets(P, Row, Off);
  switch (P.Op) {
  case TypedOp::Scatter:
    evalScatterRow(P, Ins, Y, Off, Err);
    return;
  case TypedOp::ArgMax:
  case TypedOp::ArgMin:
    evalArgRow(P, Ins, Y, Off);
    return;
  case TypedOp::TopK:
    evalTopKRow(P, Ins, Y, Y2, Off);
    return;
  case TypedOp::Reduce:
    evalReduceRow(P, Ins, Y, Off);
    return;
  case TypedOp::CumSum:
    evalCumSumRow(P, Ins, Y, Off);
    return;
  case TypedOp::ScatterND: {
    // Row Row: element Row of every tuple's slice, tuples in order.
    const int Bytes = getScalarBytes(P.Y);
    for (int64_t T = 0; T < P.Shape[0]; ++T) {
      const int64_t To = getNdSliceOffset(P, P.In[0], Ins[0], T, Err);
      if (To < 0)
        continue;
      const int64_t From = T * P.NdSlice + Row;
      if (P.Reduction != ScatterReduction::None)
        combineScatter(P.Reduction, P.Y, Y, To + Row, Ins[1], From);
      else
        memcpy(static_cast<char *>(Y) + (To + Row) * Bytes,
               static_cast<const char *>(Ins[1]) + From * Bytes, size_t(Bytes));
    }
    return;
  }
  default:
    return;
  }
}

/// The taps of one axis of a pooling window: taps [Lo, Hi) read the
/// input, and an average counts Counted of them (see PoolParams).
struct PoolTaps {
  int64_t Lo = 0, Hi = 0, Counted = 0;
};

/// ceil(\p A / \p B) for \p B > 0 and any sign of \p A.
STRIDER_HOST_DEVICE int64_t ceilDivSigned(int64_t A, int64_t B) {
  return A >= 0 ? (A + B - 1) / B : -((-A) / B);
}

/// The taps of output position \p O along an axis of input size \p In.
STRIDER_HOST_DEVICE PoolTaps getPoolTaps(int64_t O, int64_t In, int64_t Kernel,
                                         int64_t Stride, int64_t Dilation,
                                         int64_t PadBegin, int64_t PadEnd,
                                         bool CountPad) {
  const int64_t Base = O * Stride - PadBegin;
  // The first tap at a position >= 0, the first at a position >= In, and
  // the first at a position >= In + PadEnd, each clamped to [0, Kernel].
  auto FirstAtOrAbove = [&](int64_t Pos) {
    const int64_t K = ceilDivSigned(Pos - Base, Dilation);
    return K < 0 ? int64_t(0) : (K > Kernel ? Kernel : K);
  };
  PoolTaps T;
  T.Lo = FirstAtOrAbove(0);
  T.Hi = FirstAtOrAbove(In);
  if (T.Hi < T.Lo)
    T.Hi = T.Lo;
  T.Counted = CountPad ? FirstAtOrAbove(In + PadEnd) : T.Hi - T.Lo;
  return T;
}

/// The average of \p Sum over \p Count elements; NaN when there are none.
STRIDER_HOST_DEVICE float getAverage(float Sum, int64_t Count) {
  return Count ? Sum / float(Count) : nanf("");
}

/// One output element of a pooling: its value and, for MaxPool, ONNX's
/// index of the maximum (-1 for a window with nothing to read).
struct PoolResult {
  float Value = 0.0f;
  int64_t Index = -1;
};

/// Output element \p I (Y dense in \p Q's channel order) of the pooling
/// \p Q, normalized to 3 spatial dims; \p Load(Off) reads X's element at
/// offset Off as a float. MaxPool keeps the first tap in window order and
/// then only greater values (a NaN in first place stays, later ones are
/// passed over, as in the reference); its index counts in the logical
/// NCHW input, the spatial dims row-major or with \p Q.IndicesColumnMajor
/// column-major (ONNX storage_order 1).
template <typename LoadFn>
STRIDER_HOST_DEVICE PoolResult evalPool(const PoolParams &Q, int64_t I,
                                        LoadFn Load) {
  int64_t Rest = I, C = 0, O[3];
  if (Q.ChannelsLast) {
    C = Rest % Q.C;
    Rest /= Q.C;
  }
  for (int A = 2; A >= 0; --A) {
    O[A] = Rest % Q.Out[A];
    Rest /= Q.Out[A];
  }
  if (!Q.ChannelsLast) {
    C = Rest % Q.C;
    Rest /= Q.C;
  }
  const int64_t N = Rest;
  // Element strides of X's spatial dims and the offset of (n, c).
  const int64_t Pixels = Q.In[0] * Q.In[1] * Q.In[2];
  const int64_t Unit = Q.ChannelsLast ? Q.C : 1;
  const int64_t Str[3] = {Q.In[1] * Q.In[2] * Unit, Q.In[2] * Unit, Unit};
  const int64_t Base =
      Q.ChannelsLast ? N * Pixels * Q.C + C : (N * Q.C + C) * Pixels;
  PoolTaps T[3];
  int64_t First[3];
  for (int A = 0; A < 3; ++A) {
    T[A] = getPoolTaps(O[A], Q.In[A], Q.Kernel[A], Q.Stride[A], Q.Dilation[A],
                       Q.PadBegin[A], Q.PadEnd[A], Q.CountIncludePad);
    First[A] = O[A] * Q.Stride[A] - Q.PadBegin[A];
  }
  PoolResult R;
  float Acc = Q.Max ? -INFINITY : 0.0f;
  bool Any = false;
  int64_t Best[3] = {0, 0, 0};
  for (int64_t K0 = T[0].Lo; K0 < T[0].Hi; ++K0) {
    const int64_t P0 = First[0] + K0 * Q.Dilation[0];
    for (int64_t K1 = T[1].Lo; K1 < T[1].Hi; ++K1) {
      const int64_t P1 = First[1] + K1 * Q.Dilation[1];
      for (int64_t K2 = T[2].Lo; K2 < T[2].Hi; ++K2) {
        const int64_t P2 = First[2] + K2 * Q.Dilation[2];
        const float V = Load(Base + P0 * Str[0] + P1 * Str[1] + P2 * Str[2]);
        if (!Q.Max) {
          Acc += V;
        } else if (!Any || V > Acc) {
          Acc = V;
          Best[0] = P0;
          Best[1] = P1;
          Best[2] = P2;
        }
        Any = true;
      }
    }
  }
  if (!Q.Max) {
    R.Value = getAverage(Acc, T[0].Counted * T[1].Counted * T[2].Counted);
    return R;
  }
  R.Value = Acc;
  if (Any) {
    const int64_t Spatial =
        Q.IndicesColumnMajor
            ? Best[0] + Q.In[0] * (Best[1] + Q.In[1] * Best[2])
            : (Best[0] * Q.In[1] + Best[1]) * Q.In[2] + Best[2];
    R.Index = (N * Q.C + C) * Pixels + Spatial;
  }
  return R;
}

/// Where element \p K (of N x Pixels, pixels inner) of channel \p C lies
/// in X of a BatchStats step.
STRIDER_HOST_DEVICE int64_t getBatchStatsOffset(const BatchStatsParams &P,
                                                int64_t C, int64_t K) {
  const int64_t N = K / P.Pixels, Px = K % P.Pixels;
  return P.ChannelsLast ? (N * P.Pixels + Px) * P.C + C
                        : (N * P.C + C) * P.Pixels + Px;
}

/// Channel \p C's results of a BatchStats step (see BatchStatsParams),
/// given the batch's \p Mean and biased \p Var.
STRIDER_HOST_DEVICE void
finishBatchStats(const BatchStatsParams &P, int64_t C, double Mean, double Var,
                 const float *Gamma, const float *Beta, const float *InMean,
                 const float *InVar, float *Scale, float *Shift, float *RunMean,
                 float *RunVar) {
  const double S = double(Gamma[C]) / sqrt(Var + double(P.Epsilon));
  Scale[C] = float(S);
  Shift[C] = float(double(Beta[C]) - Mean * S);
  const double M = P.Momentum;
  if (RunMean)
    RunMean[C] = float(double(InMean[C]) * M + Mean * (1 - M));
  if (RunVar)
    RunVar[C] = float(double(InVar[C]) * M + Var * (1 - M));
}

/// What a reduction of nothing gives, before finishReduce.
STRIDER_HOST_DEVICE float getReduceInit(ReduceParams::Kind K) {
  return K == ReduceParams::Max    ? -INFINITY
         : K == ReduceParams::Min  ? INFINITY
         : K == ReduceParams::Prod ? 1.0f
                                   : 0.0f;
}
/// An element as it enters the reduction (squared for L2 and SumSquare).
STRIDER_HOST_DEVICE float mapReduce(ReduceParams::Kind K, float V) {
  return K == ReduceParams::L2 || K == ReduceParams::SumSquare ? V * V : V;
}
/// Two partial reductions (or one and a mapped element) combined.
STRIDER_HOST_DEVICE float combineReduce(ReduceParams::Kind K, float A,
                                        float B) {
  switch (K) {
  case ReduceParams::Max:
    return fmaxf(A, B);
  case ReduceParams::Min:
    return fminf(A, B);
  case ReduceParams::Prod:
    return A * B;
  default:
    return A + B;
  }
}
/// The result from the combined value of \p Count elements.
STRIDER_HOST_DEVICE float finishReduce(ReduceParams::Kind K, float Acc,
                                       int64_t Count) {
  if (K == ReduceParams::Mean)
    return getAverage(Acc, Count);
  if (K == ReduceParams::L2)
    return sqrtf(Acc);
  return Acc;
}

/// The channels [Lo, Hi) an LRN window around channel \p C sums.
struct LrnWindow {
  int64_t Lo, Hi;
};
STRIDER_HOST_DEVICE LrnWindow getLrnWindow(const LrnParams &P, int64_t C) {
  const int64_t Lo = C - (P.Size - 1) / 2, Hi = Lo + P.Size;
  return {Lo < 0 ? 0 : Lo, Hi > P.Len ? P.Len : Hi};
}
/// LRN's output for input \p X whose window's squares sum to \p SqSum.
STRIDER_HOST_DEVICE float lrnScale(const LrnParams &P, float X, float SqSum) {
  return X * powf(P.Bias + P.Alpha / float(P.Size) * SqSum, -P.Beta);
}

/// One LSTM unit's new cell and hidden state (ONNX's equations with the
/// default activations): gate pre-activations \p PI, \p PO, \p PF, \p PC
/// (projection plus recurrent product), the previous cell state and the
/// peephole weights (0 without peepholes).
struct LstmUnit {
  float Cell, Hidden;
};
STRIDER_HOST_DEVICE float sigmoidOf(float X) { return 1.0f / (1.0f + expf(-X)); }
STRIDER_HOST_DEVICE LstmUnit lstmUnit(float PI, float PO, float PF, float PC,
                                      float CPrev, float PeepI, float PeepO,
                                      float PeepF, float Clip,
                                      bool InputForget) {
  auto Clamp = [Clip](float X) {
    return Clip > 0 ? fminf(fmaxf(X, -Clip), Clip) : X;
  };
  const float I = sigmoidOf(Clamp(PI + PeepI * CPrev));
  const float F = InputForget ? 1.0f - I : sigmoidOf(Clamp(PF + PeepF * CPrev));
  const float G = tanhf(Clamp(PC));
  const float C = F * CPrev + I * G;
  const float O = sigmoidOf(Clamp(PO + PeepO * C));
  return {C, O * tanhf(C)};
}

/// A GRU pre-activation clipped to [-Clip, Clip] when Clip > 0.
STRIDER_HOST_DEVICE float clipGate(float X, float Clip) {
  return Clip > 0 ? fminf(fmaxf(X, -Clip), Clip) : X;
}
/// One GRU unit's new hidden state from its z pre-activation, its
/// candidate's pre-activation \p PH (reset already applied) and the
/// previous state: (1 - z) * h~ + z * prev.
STRIDER_HOST_DEVICE float gruUnit(float PZ, float PH, float Prev, float Clip) {
  const float Z = sigmoidOf(clipGate(PZ, Clip));
  const float Cand = tanhf(clipGate(PH, Clip));
  return Cand + Z * (Prev - Cand);
}

/// The time batch entry \p B of a recurrence step runs at (RecurrentStep),
/// or -1 when the step is past its sequence length; a length outside [0,
/// Seq] goes to \p Err.
STRIDER_HOST_DEVICE int64_t getStepTime(const RecurrentStep &T,
                                        const void *Lens, int64_t B,
                                        RunError *Err) {
  if (!Lens)
    return T.Backward ? T.Seq - 1 - T.Step : T.Step;
  int64_t Len = loadInt(T.LensType, Lens, B);
  if (Len < 0 || Len > T.Seq) {
    reportRunError(Err, T.PlanStep, RunError::SequenceLength, Len, T.Seq);
    Len = Len < 0 ? 0 : T.Seq;
  }
  if (T.Step >= Len)
    return -1;
  return T.Backward ? Len - 1 - T.Step : T.Step;
}

/// Unit \p I (batch entry I / Hidden, unit I % Hidden) of an LSTM step
/// (LstmCellParams).
STRIDER_HOST_DEVICE void evalLstmCell(const LstmCellParams &P, const float *Pre,
                                      const float *Rec, const float *Peep,
                                      float *Cell, float *Hidden, float *Y,
                                      const void *Lens, RunError *Err,
                                      int64_t I) {
  const int64_t H = P.Hidden, B = I / H, J = I % H;
  const RecurrentStep &T = P.Time;
  const int64_t Time = getStepTime(T, Lens, B, Err);
  if (Time < 0) {
    if (!P.HasCellState) {
      Cell[I] = 0.0f;
      Hidden[I] = 0.0f;
    }
    if (Y)
      Y[T.Step * T.YTimeStride + B * T.YBatchStride + J] = 0.0f;
    return;
  }
  const float *PreRow = Pre + Time * T.PreTimeStride + B * T.PreRowStride + J;
  float G[4];
  for (int K = 0; K < 4; ++K)
    G[K] = PreRow[K * H] + (Rec ? Rec[B * 4 * H + K * H + J] : 0.0f);
  const LstmUnit U =
      lstmUnit(G[0], G[1], G[2], G[3], P.HasCellState ? Cell[I] : 0.0f,
               Peep ? Peep[J] : 0.0f, Peep ? Peep[H + J] : 0.0f,
               Peep ? Peep[2 * H + J] : 0.0f, P.Clip, P.InputForget);
  Cell[I] = U.Cell;
  Hidden[I] = U.Hidden;
  if (Y)
    Y[Time * T.YTimeStride + B * T.YBatchStride + J] = U.Hidden;
}

/// Unit \p I (batch entry I / Hidden, unit I % Hidden) of a GRU step's
/// stage (GruCellParams).
STRIDER_HOST_DEVICE void evalGruCell(const GruCellParams &P, const float *Pre,
                                     const float *Rec, const float *RecH,
                                     const float *RecBias, float *Hidden,
                                     float *Out, const void *Lens,
                                     RunError *Err, int64_t I) {
  const int64_t H = P.Hidden, B = I / H, J = I % H;
  const RecurrentStep &T = P.Time;
  const int64_t Time = getStepTime(T, Lens, B, Err);
  if (P.Stage == GruCellParams::Reset && Time < 0) {
    Out[I] = 0.0f; // Read only by this entry's own (skipped) gates.
    return;
  }
  if (Time < 0) {
    if (!P.HasState)
      Hidden[I] = 0.0f;
    if (Out)
      Out[T.Step * T.YTimeStride + B * T.YBatchStride + J] = 0.0f;
    return;
  }
  const float *PreRow = Pre + Time * T.PreTimeStride + B * T.PreRowStride + J;
  const float *RecRow = Rec ? Rec + B * P.RecRowStride + J : nullptr;
  const float Prev = P.HasState ? Hidden[I] : 0.0f;
  auto ResetGate = [&] {
    return sigmoidOf(clipGate(PreRow[H] + (RecRow ? RecRow[H] : 0.0f), P.Clip));
  };
  if (P.Stage == GruCellParams::Reset) {
    Out[I] = ResetGate() * Prev;
    return;
  }
  float RH = 0.0f;
  if (RecH)
    RH = RecH[(P.LinearBeforeReset ? B * P.RecRowStride : B * H) + J];
  if (P.LinearBeforeReset)
    RH = ResetGate() * (RH + RecBias[J]);
  const float Hn = gruUnit(PreRow[0] + (RecRow ? RecRow[0] : 0.0f),
                           PreRow[2 * H] + RH, Prev, P.Clip);
  Hidden[I] = Hn;
  if (Out)
    Out[Time * T.YTimeStride + B * T.YBatchStride + J] = Hn;
}

/// Rows \p I, \p I + \p Step, ... of the product Y = X x M^T of X (dense
/// \p Batch x \p K) and M (row-major \p Cols x \p K) into Y (dense Batch x
/// Cols): one thread's share of a RecurrenceLoop step's recurrent
/// product, summed in order of k.
STRIDER_HOST_DEVICE void evalRowProducts(const float *X, const float *M,
                                         float *Y, int64_t Batch, int64_t Cols,
                                         int64_t K, int64_t I, int64_t Step) {
  for (; I < Batch * Cols; I += Step) {
    const float *XRow = X + (I / Cols) * K, *MRow = M + (I % Cols) * K;
    float Sum = 0.0f;
    for (int64_t J = 0; J < K; ++J)
      Sum = fmaf(XRow[J], MRow[J], Sum);
    Y[I] = Sum;
  }
}

/// What thread \p T of the \p N of a RecurrenceLoop block computes, \p Sync
/// its block's barrier (the host model: T = 0, N = 1 and no barrier).
template <typename SyncFn>
STRIDER_HOST_DEVICE void
evalRecurrenceLoop(const RecurrenceLoopParams &P, const float *Pre,
                   const float *R, const float *RH, const float *Peep,
                   const float *RecBias, float *Rec, float *RecH, float *Reset,
                   float *Cell, float *Hidden, float *Y, const void *Lens,
                   RunError *Err, int64_t T, int64_t N, SyncFn Sync) {
  const int64_t Batch = P.IsGru ? P.Gru.Batch : P.Lstm.Batch;
  const int64_t H = P.IsGru ? P.Gru.Hidden : P.Lstm.Hidden;
  const int64_t Seq = P.IsGru ? P.Gru.Time.Seq : P.Lstm.Time.Seq;
  for (int64_t S = 0; S < Seq; ++S) {
    const bool HasState = S != 0 || P.FirstHasState;
    if (HasState) {
      evalRowProducts(Hidden, R, Rec, Batch, P.RecCols, H, T, N);
      Sync();
    }
    if (!P.IsGru) {
      LstmCellParams Q = P.Lstm;
      Q.Time.Step = S;
      Q.HasCellState = S != 0 || P.Lstm.HasCellState;
      for (int64_t I = T; I < Batch * H; I += N)
        evalLstmCell(Q, Pre, HasState ? Rec : nullptr, Peep, Cell, Hidden, Y,
                     Lens, Err, I);
    } else {
      GruCellParams Q = P.Gru;
      Q.Time.Step = S;
      Q.HasState = HasState;
      if (!Q.LinearBeforeReset && HasState) {
        GruCellParams Z = Q;
        Z.Stage = GruCellParams::Reset;
        for (int64_t I = T; I < Batch * H; I += N)
          evalGruCell(Z, Pre, Rec, nullptr, nullptr, Hidden, Reset, Lens, Err,
                      I);
        Sync();
        evalRowProducts(Reset, RH, RecH, Batch, H, H, T, N);
        Sync();
      }
      const float *RecHS = Q.LinearBeforeReset ? Rec + 2 * H : RecH;
      for (int64_t I = T; I < Batch * H; I += N)
        evalGruCell(Q, Pre, HasState ? Rec : nullptr,
                    HasState ? RecHS : nullptr, RecBias, Hidden, Y, Lens, Err,
                    I);
    }
    Sync(); // The states are read whole by the next product.
  }
}

//===----------------------------------------------------------------------===//
// Host-side choices
//===----------------------------------------------------------------------===//

/// \p P with unit dims dropped and adjacent dims merged where A, B and Y
/// all step through them as through one dim (B's strides are ignored, and
/// zero in the result, for Op None). The result has Rank >= 1; a single
/// element is Shape {1} with zero strides. Precondition: no zero dim.
inline ElementwiseParams simplifyElementwise(const ElementwiseParams &P) {
  const bool HasB = P.Op != BinaryOp::None;
  ElementwiseParams S = P;
  S.Rank = 0;
  for (int D = 0; D < MaxRank; ++D) {
    S.Shape[D] = 1;
    S.AStrides[D] = S.BStrides[D] = 0;
  }
  for (int D = 0; D < P.Rank; ++D) {
    if (P.Shape[D] == 1)
      continue;
    const int64_t AS = P.AStrides[D], BS = HasB ? P.BStrides[D] : 0;
    const int L = S.Rank - 1;
    if (L >= 0 && S.AStrides[L] == AS * P.Shape[D] &&
        S.BStrides[L] == BS * P.Shape[D]) {
      S.Shape[L] *= P.Shape[D];
      S.AStrides[L] = AS;
      S.BStrides[L] = BS;
      continue;
    }
    S.Shape[S.Rank] = P.Shape[D];
    S.AStrides[S.Rank] = AS;
    S.BStrides[S.Rank] = BS;
    ++S.Rank;
  }
  if (S.Rank == 0)
    S.Rank = 1;
  return S;
}

/// Whether every element index and operand offset of \p P (simplified or
/// not) fits 32-bit arithmetic.
inline bool fitsInt32(const ElementwiseParams &P) {
  int64_t Count = 1, MaxA = 0, MaxB = 0;
  for (int D = 0; D < P.Rank; ++D) {
    Count *= P.Shape[D];
    MaxA += (P.Shape[D] - 1) * P.AStrides[D];
    MaxB += (P.Shape[D] - 1) * P.BStrides[D];
  }
  const int64_t Limit = INT32_MAX;
  return Count <= Limit && MaxA <= Limit && MaxB <= Limit;
}

/// How a kernel over Outer x Reduced x Inner (reduction, softmax,
/// normalization) spreads its work over threads.
struct ReduceLaunch {
  enum Strategy : uint8_t {
    /// Inner == 1: ThreadsX threads (a multiple of 32) cooperate on a row
    /// of Reduced contiguous elements; a block holds ThreadsY rows.
    Rows,
    /// A block of 32 x ThreadsY threads takes 32 consecutive output columns
    /// (o, i), flattened; the ThreadsY threads of a column split Reduced.
    Columns,
  };
  Strategy How = Columns;
  int ThreadsX = 32, ThreadsY = 1;
};

/// The launch shape for a kernel over \p Outer x \p Reduced x \p Inner:
/// rows when they are long and contiguous, columns otherwise, with more
/// threads per row or column when there are few of them.
inline ReduceLaunch chooseReduceLaunch(int64_t Outer, int64_t Reduced,
                                       int64_t Inner) {
  ReduceLaunch L;
  if (Inner == 1 && Reduced > 32) {
    L.How = ReduceLaunch::Rows;
    if (Reduced > 1024 || (Outer < 128 && Reduced > 256))
      L.ThreadsX = Reduced > 8192 ? 512 : 256;
    else
      L.ThreadsX = 32;
    L.ThreadsY = L.ThreadsX < 256 ? 256 / L.ThreadsX : 1;
    return L;
  }
  L.How = ReduceLaunch::Columns;
  L.ThreadsX = 32;
  const int64_t Tiles = (Outer * Inner + 31) / 32;
  if (Reduced < 16)
    L.ThreadsY = 1;
  else if (Tiles >= 1024)
    L.ThreadsY = 4;
  else if (Tiles >= 128)
    L.ThreadsY = 8;
  else
    L.ThreadsY = 16;
  return L;
}

/// The most threads a block of chooseReduceLaunch has.
constexpr int MaxReduceThreads = 512;

/// The index into NormParams' Scale and Bias of element (\p O, \p R, \p I).
STRIDER_HOST_DEVICE int64_t getAffineIndex(NormParams::AffineIndex Affine,
                                           int64_t Channels, int64_t O,
                                           int64_t R, int64_t I) {
  return Affine == NormParams::ByReduced ? R
         : Affine == NormParams::ByInner ? I
                                         : O % Channels;
}

/// \p P over exactly 3 spatial dims: fewer are padded with unit dims in
/// front (a 1D pool becomes 1 x 1 x W).
inline PoolParams normalizePool(const PoolParams &P) {
  PoolParams Q = P;
  const int Shift = 3 - P.Spatial;
  for (int D = 0; D < 3; ++D) {
    const int S = D - Shift;
    const bool Real = S >= 0;
    Q.In[D] = Real ? P.In[S] : 1;
    Q.Out[D] = Real ? P.Out[S] : 1;
    Q.Kernel[D] = Real ? P.Kernel[S] : 1;
    Q.Stride[D] = Real ? P.Stride[S] : 1;
    Q.Dilation[D] = Real ? P.Dilation[S] : 1;
    Q.PadBegin[D] = Real ? P.PadBegin[S] : 0;
    Q.PadEnd[D] = Real ? P.PadEnd[S] : 0;
  }
  Q.Spatial = 3;
  return Q;
}

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_DEVICEMATH_H
