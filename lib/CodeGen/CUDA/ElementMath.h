//===- ElementMath.h - Per-element math of the compute kernels --*- C++ -*-===//
//
// Private to lib/CodeGen/CUDA. The fused activations and binary ops the
// elementwise kernels compute per element, as __host__ __device__
// functions (STRIDER_HOST_DEVICE): plain C++ outside nvcc, so host unit
// tests check them against the CPU backend's scalar definitions.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_ELEMENTMATH_H
#define STRIDER_LIB_CODEGEN_CUDA_ELEMENTMATH_H

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
  case ActKind::Celu:
    return X < 0.0f ? A.Alpha * expm1f(X / A.Alpha) : X;
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
  case ActKind::Celu:
    return X < 0.0 ? Alpha * expm1(X / Alpha) : X;
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

using codegen::applyBinary;

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_ELEMENTMATH_H
