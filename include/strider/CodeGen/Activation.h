//===- Activation.h - Activations fused into kernel epilogues ---*- C++ -*-===//
//
// The pointwise activations a producer kernel (conv, GEMM, elementwise)
// applies before its store, so that a conv block is one pass over memory.
// Shared by every backend: the CPU backend's SIMD forms and the CUDA
// backend's device forms live next to their kernels; the scalar form here
// is the definition both are tested against.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_ACTIVATION_H
#define STRIDER_CODEGEN_ACTIVATION_H

#include <algorithm>
#include <cmath>

namespace strider {
namespace codegen {

enum class ActKind : unsigned char {
  None,
  Relu,
  Clip,      ///< min(max(x, Alpha), Beta)
  LeakyRelu, ///< x < 0 ? Alpha * x : x
  Sigmoid,
  HardSigmoid, ///< clamp(Alpha * x + Beta, 0, 1)
  HardSwish,   ///< x * clamp(x / 6 + 1 / 2, 0, 1)
  SiLU,        ///< x * sigmoid(x) (Mul(x, Sigmoid(x)) fused)
  Tanh,
  Elu,      ///< x < 0 ? Alpha * (exp(x) - 1) : x
  Selu,     ///< Beta * (x <= 0 ? Alpha * (exp(x) - 1) : x)
  Softplus, ///< ln(1 + exp(x))
  Softsign, ///< x / (1 + |x|)
  Exp,
  Log,
  Sqrt,
  Reciprocal,
  Neg,
  Abs,
  Floor,
  Ceil,
  Sin,
  Cos,
  Tan,
  Asin,
  Acos,
  Atan,
  Sinh,
  Cosh,
  Asinh,
  Acosh,
  Atanh,
  Sign,            ///< -1 or 1; zeros and NaN kept
  Round,           ///< to the nearest integer, halves to even
  ThresholdedRelu, ///< x > Alpha ? x : 0
  Shrink,          ///< x < -Alpha ? x + Beta : x > Alpha ? x - Beta : 0
  Erf,
  Gelu,     ///< x / 2 * (1 + erf(x / sqrt(2)))
  GeluTanh, ///< x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))
};

struct Activation {
  ActKind Kind = ActKind::None;
  float Alpha = 0.0f;
  float Beta = 0.0f;

  bool isNone() const { return Kind == ActKind::None; }
  /// The activation's name for reports ("relu", "clip[0,6]", ...).
  const char *getName() const;
};

/// sqrt(2 / pi), the tanh approximation's scale of GELU.
constexpr float GeluTanhScale = 0.7978845608f;

inline float applyScalar(const Activation &A, float X) {
  switch (A.Kind) {
  case ActKind::None:
    return X;
  case ActKind::Relu:
    return X > 0.0f ? X : 0.0f;
  case ActKind::Clip:
    return std::min(std::max(X, A.Alpha), A.Beta);
  case ActKind::LeakyRelu:
    return X < 0.0f ? A.Alpha * X : X;
  case ActKind::Sigmoid:
    return 1.0f / (1.0f + std::exp(-X));
  case ActKind::HardSigmoid:
    return std::min(std::max(A.Alpha * X + A.Beta, 0.0f), 1.0f);
  case ActKind::HardSwish:
    return X * std::min(std::max(X / 6.0f + 0.5f, 0.0f), 1.0f);
  case ActKind::SiLU:
    return X / (1.0f + std::exp(-X));
  case ActKind::Tanh:
    return std::tanh(X);
  case ActKind::Elu:
    return X < 0.0f ? A.Alpha * std::expm1(X) : X;
  case ActKind::Selu:
    return A.Beta * (X <= 0.0f ? A.Alpha * std::expm1(X) : X);
  case ActKind::Softplus:
    // max(x, 0) + ln(1 + e^-|x|): e^x never overflows.
    return std::max(X, 0.0f) + std::log1p(std::exp(-std::fabs(X)));
  case ActKind::Softsign:
    return X / (1.0f + std::fabs(X));
  case ActKind::Exp:
    return std::exp(X);
  case ActKind::Log:
    return std::log(X);
  case ActKind::Sqrt:
    return std::sqrt(X);
  case ActKind::Reciprocal:
    return 1.0f / X;
  case ActKind::Neg:
    return -X;
  case ActKind::Abs:
    return std::fabs(X);
  case ActKind::Floor:
    return std::floor(X);
  case ActKind::Ceil:
    return std::ceil(X);
  case ActKind::Sin:
    return std::sin(X);
  case ActKind::Cos:
    return std::cos(X);
  case ActKind::Tan:
    return std::tan(X);
  case ActKind::Asin:
    return std::asin(X);
  case ActKind::Acos:
    return std::acos(X);
  case ActKind::Atan:
    return std::atan(X);
  case ActKind::Sinh:
    return std::sinh(X);
  case ActKind::Cosh:
    return std::cosh(X);
  case ActKind::Asinh:
    return std::asinh(X);
  case ActKind::Acosh:
    return std::acosh(X);
  case ActKind::Atanh:
    return std::atanh(X);
  case ActKind::Sign:
    return X > 0.0f ? 1.0f : X < 0.0f ? -1.0f : X;
  case ActKind::Round:
    return std::nearbyint(X);
  case ActKind::ThresholdedRelu:
    return X > A.Alpha ? X : 0.0f;
  case ActKind::Shrink:
    return X < -A.Alpha ? X + A.Beta : X > A.Alpha ? X - A.Beta : 0.0f;
  case ActKind::Erf:
    return std::erf(X);
  case ActKind::Gelu:
    return 0.5f * X * (1.0f + std::erf(X * float(M_SQRT1_2)));
  case ActKind::GeluTanh:
    return 0.5f * X *
           (1.0f + std::tanh(GeluTanhScale * (X + 0.044715f * X * X * X)));
  }
  return X;
}

} // namespace codegen
} // namespace strider

#endif // STRIDER_CODEGEN_ACTIVATION_H
