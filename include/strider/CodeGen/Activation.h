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

/// Every activation once: X(Kind, Name, Op), the ActKind enumerator, its
/// name in reports, and which op it is: Plain, the op of the same name
/// with no attribute to read; Attrs, the op of the same name, whose
/// attributes become Alpha and Beta (STRIDER_ACTIVATION_ATTRS, or by hand
/// in getActivation, Fusion.cpp, for Clip's operands and Gelu's form);
/// NoOp, no op of its own (a fusion, or a form of another op). The scalar
/// definition of each is applyScalar below.
#define STRIDER_ACTIVATIONS(X)                                                 \
  X(None, "none", NoOp)                                                        \
  X(Relu, "relu", Plain)                                                       \
  X(Clip, "clip", Attrs)                                                       \
  X(LeakyRelu, "leaky_relu", Attrs)                                            \
  X(Sigmoid, "sigmoid", Plain)                                                 \
  X(HardSigmoid, "hard_sigmoid", Attrs)                                        \
  X(HardSwish, "hard_swish", Plain)                                            \
  X(SiLU, "silu", NoOp) /* Mul(x, Sigmoid(x)) */                               \
  X(Tanh, "tanh", Plain)                                                       \
  X(Elu, "elu", Attrs)                                                         \
  X(Selu, "selu", Attrs)                                                       \
  X(Softplus, "softplus", Plain)                                               \
  X(Softsign, "softsign", Plain)                                               \
  X(Celu, "celu", Attrs)                                                       \
  X(Exp, "exp", Plain)                                                         \
  X(Log, "log", Plain)                                                         \
  X(Sqrt, "sqrt", Plain)                                                       \
  X(Reciprocal, "reciprocal", Plain)                                           \
  X(Neg, "neg", Plain)                                                         \
  X(Abs, "abs", Plain)                                                         \
  X(Floor, "floor", Plain)                                                     \
  X(Ceil, "ceil", Plain)                                                       \
  X(Sin, "sin", Plain)                                                         \
  X(Cos, "cos", Plain)                                                         \
  X(Tan, "tan", Plain)                                                         \
  X(Asin, "asin", Plain)                                                       \
  X(Acos, "acos", Plain)                                                       \
  X(Atan, "atan", Plain)                                                       \
  X(Sinh, "sinh", Plain)                                                       \
  X(Cosh, "cosh", Plain)                                                       \
  X(Asinh, "asinh", Plain)                                                     \
  X(Acosh, "acosh", Plain)                                                     \
  X(Atanh, "atanh", Plain)                                                     \
  X(Sign, "sign", Plain)                                                       \
  X(Round, "round", Plain)                                                     \
  X(ThresholdedRelu, "thresholded_relu", Attrs)                                \
  X(Shrink, "shrink", Attrs)                                                   \
  X(Erf, "erf", Plain)                                                         \
  X(Gelu, "gelu", Attrs)                                                       \
  X(GeluTanh, "gelu_tanh", NoOp) /* Gelu, approximate=tanh */

/// The float attributes Alpha and Beta hold, for the Attrs entries that
/// read only such: X(Kind, AlphaAttr, AlphaDefault, BetaAttr, BetaDefault),
/// an attribute name "" when unused.
#define STRIDER_ACTIVATION_ATTRS(X)                                            \
  X(LeakyRelu, "alpha", 0.01f, "", 0.0f)                                       \
  X(HardSigmoid, "alpha", 0.2f, "beta", 0.5f)                                  \
  X(Elu, "alpha", 1.0f, "", 0.0f)                                              \
  X(Celu, "alpha", 1.0f, "", 0.0f)                                             \
  X(Selu, "alpha", 1.67326319217681884765625f, "gamma",                        \
    1.05070102214813232421875f)                                                \
  X(ThresholdedRelu, "alpha", 1.0f, "", 0.0f)                                  \
  X(Shrink, "lambd", 0.5f, "bias", 0.0f)

enum class ActKind : unsigned char {
#define STRIDER_ACTIVATION_KIND(Kind, Name, Op) Kind,
  STRIDER_ACTIVATIONS(STRIDER_ACTIVATION_KIND)
#undef STRIDER_ACTIVATION_KIND
};

/// How many ActKinds there are (they number 0 to NumActKinds - 1).
constexpr unsigned NumActKinds =
#define STRIDER_ACTIVATION_COUNT(Kind, Name, Op) +1
    0 STRIDER_ACTIVATIONS(STRIDER_ACTIVATION_COUNT);
#undef STRIDER_ACTIVATION_COUNT

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
  case ActKind::Celu:
    return X < 0.0f ? A.Alpha * std::expm1(X / A.Alpha) : X;
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
