//===- SimdActivation-inl.h - Activations on SIMD vectors -------*- C++ -*-===//
//
// Private to lib/CodeGen/CPU. Per-target code (Highway): included from the
// kernels' foreach_target sections, once per target, hence the toggling
// include guard. Matches applyScalar of Activation.h.
//
//===----------------------------------------------------------------------===//

#if defined(STRIDER_CPU_SIMD_ACTIVATION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef STRIDER_CPU_SIMD_ACTIVATION_INL_H_
#undef STRIDER_CPU_SIMD_ACTIVATION_INL_H_
#else
#define STRIDER_CPU_SIMD_ACTIVATION_INL_H_
#endif

#include "Activation.h"

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

#include <cmath>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// 1 / (1 + exp(-X)), saturating cleanly at both ends.
template <class D, class V> HWY_INLINE V sigmoidVec(D d, V X) {
  const V One = hn::Set(d, 1.0f);
  // Highway's Exp is defined up to about 104: below -88 (where float
  // sigmoid is 0 anyway) the result is set to 0 instead of trusting it.
  const V S = hn::Div(One, hn::Add(One, hn::Exp(d, hn::Neg(X))));
  return hn::IfThenZeroElse(hn::Lt(X, hn::Set(d, -88.0f)), S);
}

/// e^X, infinite past float's range (Highway's Exp is defined up to 104).
template <class D, class V> HWY_INLINE V expVec(D d, V X) {
  return hn::IfThenElse(hn::Gt(X, hn::Set(d, 88.72283935546875f)),
                        hn::Set(d, INFINITY), hn::Exp(d, X));
}

/// ln(X) with std::log's special values: Highway's Log is defined on
/// (0, FLT_MAX] only.
template <class D, class V> HWY_INLINE V logVec(D d, V X) {
  const V Zero = hn::Zero(d);
  V Y = hn::Log(d, hn::Max(X, hn::Set(d, 1e-45f)));
  Y = hn::IfThenElse(hn::Eq(X, Zero), hn::Set(d, -INFINITY), Y);
  Y = hn::IfThenElse(hn::Eq(X, hn::Set(d, INFINITY)), X, Y);
  // Negative inputs and NaN give NaN.
  return hn::IfThenElse(hn::Not(hn::Ge(X, Zero)), hn::Set(d, NAN), Y);
}

/// Horner's scheme: C[0] + Z * (C[1] + Z * (...)).
template <class D, class V, size_t N>
HWY_INLINE V evalPolynomial(D d, V Z, const float (&C)[N]) {
  V P = hn::Set(d, C[N - 1]);
  for (size_t I = N - 1; I-- > 0;)
    P = hn::MulAdd(P, Z, hn::Set(d, C[I]));
  return P;
}

/// erf(X) within about 1e-7 absolute of std::erf. Two least-squares fits
/// (made for this kernel on Chebyshev nodes): erf(x) = x * P(x^2) for
/// |x| < 0.875, else 1 - exp(-x^2) * Q(1 / (1 + |x| / 2)) with the sign of
/// x; |x| is clamped to 4, where float erf is 1.
template <class D, class V> HWY_INLINE V erfVec(D d, V X) {
  static constexpr float Near[] = {
      1.1283791065216064f,    -0.3761243224143982f,  0.11281611770391464f,
      -0.026766614988446236f, 0.005000067409127951f, -0.00060520030092448f};
  static constexpr float Far[] = {
      -0.0004659087862819433f, 0.28955352306365967f, 0.22961366176605225f,
      0.4585787355899811f,     -0.3572743237018585f, 0.9330118894577026f,
      -0.8062149882316589f,    0.29186490178108215f, -0.03865642473101616f};
  const V One = hn::Set(d, 1.0f);
  const V Small = hn::Mul(X, evalPolynomial(d, hn::Mul(X, X), Near));
  const V A = hn::Min(hn::Abs(X), hn::Set(d, 4.0f));
  const V T = hn::Div(One, hn::MulAdd(A, hn::Set(d, 0.5f), One));
  const V E = hn::Exp(d, hn::Neg(hn::Mul(A, A)));
  const V Large =
      hn::CopySignToAbs(hn::NegMulAdd(E, evalPolynomial(d, T, Far), One), X);
  const V R =
      hn::IfThenElse(hn::Lt(hn::Abs(X), hn::Set(d, 0.875f)), Small, Large);
  return hn::IfThenElse(hn::IsNaN(X), X, R);
}

/// ln(1 + e^X) as max(X, 0) + ln(1 + e^-|X|), exact at both ends (X at
/// +infinity, 0 at -infinity) and NaN for NaN.
template <class D, class V> HWY_INLINE V softplusVec(D d, V X) {
  const V Tail = hn::Log1p(d, hn::Exp(d, hn::Neg(hn::Abs(X))));
  return hn::IfThenElse(hn::IsNaN(X), X,
                        hn::Add(hn::Max(X, hn::Zero(d)), Tail));
}

/// GELU, exact (erf) or with the tanh approximation.
template <class D, class V> HWY_INLINE V geluVec(D d, V X, bool TanhForm) {
  const V HalfX = hn::Mul(X, hn::Set(d, 0.5f));
  V Inner;
  if (TanhForm) {
    const V Cube = hn::Mul(hn::Mul(X, X), X);
    Inner = hn::Tanh(d, hn::Mul(hn::MulAdd(Cube, hn::Set(d, 0.044715f), X),
                                hn::Set(d, GeluTanhScale)));
  } else {
    Inner = erfVec(d, hn::Mul(X, hn::Set(d, float(M_SQRT1_2))));
  }
  return hn::MulAdd(HalfX, Inner, HalfX);
}

/// sinh(X) and cosh(X) from e^(|X| - ln 2) = e^|X| / 2, which stays
/// finite up to float's own limit of both (Highway's Sinh is defined to
/// |X| = 88.7 only).
template <class D, class V> HWY_INLINE V sinhVec(D d, V X) {
  const V A = hn::Abs(X);
  // Past 9, e^-|X| / 2 is below half an ulp of e^|X| / 2.
  const V Big =
      hn::CopySignToAbs(expVec(d, hn::Sub(A, hn::Set(d, float(M_LN2)))), X);
  const V Small = hn::Sinh(d, hn::Min(A, hn::Set(d, 9.0f)));
  return hn::IfThenElse(hn::Gt(A, hn::Set(d, 9.0f)), Big,
                        hn::CopySignToAbs(Small, X));
}

template <class D, class V> HWY_INLINE V coshVec(D d, V X) {
  const V E = expVec(d, hn::Sub(hn::Abs(X), hn::Set(d, float(M_LN2))));
  return hn::Add(E, hn::Div(hn::Set(d, 0.25f), E));
}

/// The inverse trigonometric and hyperbolic functions with std::'s
/// values outside Highway's domains: NaN outside the functions' own,
/// infinities at the poles and for infinite inputs.
template <class D, class V> HWY_INLINE V asinVec(D d, V X, bool Cosine) {
  const V R = Cosine ? hn::Acos(d, X) : hn::Asin(d, X);
  return hn::IfThenElse(hn::Le(hn::Abs(X), hn::Set(d, 1.0f)), R,
                        hn::Set(d, NAN));
}

template <class D, class V> HWY_INLINE V asinhVec(D d, V X) {
  const V A = hn::Abs(X);
  const V Finite = hn::Min(A, hn::Set(d, 1e30f));
  const V R = hn::CopySignToAbs(hn::Asinh(d, Finite), X);
  return hn::IfThenElse(hn::Lt(A, hn::Set(d, INFINITY)), R, X);
}

template <class D, class V> HWY_INLINE V acoshVec(D d, V X) {
  const V One = hn::Set(d, 1.0f);
  const V R = hn::Acosh(d, hn::Min(hn::Max(X, One), hn::Set(d, 1e30f)));
  const V Y = hn::IfThenElse(hn::Eq(X, hn::Set(d, INFINITY)), X, R);
  return hn::IfThenElse(hn::Ge(X, One), Y, hn::Set(d, NAN));
}

template <class D, class V> HWY_INLINE V atanhVec(D d, V X) {
  const V A = hn::Abs(X);
  const V One = hn::Set(d, 1.0f);
  const V R = hn::Atanh(d, hn::Min(A, hn::Set(d, 0.99999994f)));
  const V Y = hn::IfThenElse(hn::Eq(A, One), hn::Set(d, INFINITY), R);
  return hn::IfThenElse(hn::Le(A, One), hn::CopySignToAbs(Y, X),
                        hn::Set(d, NAN));
}

/// The activations without a case in applyActivation: the transcendental
/// ones, whose code is large. One copy per target and vector type, called
/// from every kernel epilogue, instead of a copy inlined at each of them
/// (50 cases at a dozen sites made DepthwiseKernels.cpp take over 30
/// minutes to compile under ASan).
template <class D, class V>
HWY_NOINLINE V applyOtherActivation(D d, const Activation &A, V X) {
  switch (A.Kind) {
  case ActKind::Tanh:
    return hn::Tanh(d, X);
  case ActKind::Elu:
    return hn::IfThenElse(hn::Lt(X, hn::Zero(d)),
                          hn::Mul(hn::Expm1(d, X), hn::Set(d, A.Alpha)), X);
  case ActKind::Selu:
    return hn::Mul(hn::IfThenElse(hn::Le(X, hn::Zero(d)),
                                  hn::Mul(hn::Expm1(d, X), hn::Set(d, A.Alpha)),
                                  X),
                   hn::Set(d, A.Beta));
  case ActKind::Softplus:
    return softplusVec(d, X);
  case ActKind::Softsign:
    return hn::Div(X, hn::Add(hn::Abs(X), hn::Set(d, 1.0f)));
  case ActKind::Celu:
    return hn::IfThenElse(
        hn::Lt(X, hn::Zero(d)),
        hn::Mul(hn::Expm1(d, hn::Div(X, hn::Set(d, A.Alpha))),
                hn::Set(d, A.Alpha)),
        X);
  case ActKind::Exp:
    return expVec(d, X);
  case ActKind::Log:
    return logVec(d, X);
  case ActKind::Sqrt:
    return hn::Sqrt(X);
  case ActKind::Reciprocal:
    return hn::Div(hn::Set(d, 1.0f), X);
  case ActKind::Neg:
    return hn::Neg(X);
  case ActKind::Abs:
    return hn::Abs(X);
  case ActKind::Floor:
    return hn::Floor(X);
  case ActKind::Ceil:
    return hn::Ceil(X);
  case ActKind::Sin:
    return hn::Sin(d, X);
  case ActKind::Cos:
    return hn::Cos(d, X);
  case ActKind::Tan:
    return hn::Div(hn::Sin(d, X), hn::Cos(d, X));
  case ActKind::Asin:
    return asinVec(d, X, /*Cosine=*/false);
  case ActKind::Acos:
    return asinVec(d, X, /*Cosine=*/true);
  case ActKind::Atan:
    return hn::Atan(d, X);
  case ActKind::Sinh:
    return sinhVec(d, X);
  case ActKind::Cosh:
    return coshVec(d, X);
  case ActKind::Asinh:
    return asinhVec(d, X);
  case ActKind::Acosh:
    return acoshVec(d, X);
  case ActKind::Atanh:
    return atanhVec(d, X);
  case ActKind::Sign: {
    const V Zero = hn::Zero(d);
    return hn::IfThenElse(
        hn::Gt(X, Zero), hn::Set(d, 1.0f),
        hn::IfThenElse(hn::Lt(X, Zero), hn::Set(d, -1.0f), X));
  }
  case ActKind::Round:
    return hn::Round(X);
  case ActKind::ThresholdedRelu:
    return hn::IfThenElseZero(hn::Gt(X, hn::Set(d, A.Alpha)), X);
  case ActKind::Shrink: {
    const V Lambd = hn::Set(d, A.Alpha), Bias = hn::Set(d, A.Beta);
    return hn::IfThenElse(
        hn::Lt(X, hn::Neg(Lambd)), hn::Add(X, Bias),
        hn::IfThenElseZero(hn::Gt(X, Lambd), hn::Sub(X, Bias)));
  }
  case ActKind::Erf:
    return erfVec(d, X);
  case ActKind::Gelu:
    return geluVec(d, X, /*TanhForm=*/false);
  case ActKind::GeluTanh:
    return geluVec(d, X, /*TanhForm=*/true);
  default:
    break; // Inline in applyActivation.
  }
  return X;
}

/// \p A applied to \p X: the piecewise-linear activations and the sigmoid
/// family (the usual conv and GEMM epilogues) inline, the others through
/// applyOtherActivation.
template <class D, class V>
HWY_INLINE V applyActivation(D d, const Activation &A, V X) {
  switch (A.Kind) {
  case ActKind::None:
    return X;
  case ActKind::Relu:
    return hn::Max(X, hn::Zero(d));
  case ActKind::Clip:
    return hn::Min(hn::Max(X, hn::Set(d, A.Alpha)), hn::Set(d, A.Beta));
  case ActKind::LeakyRelu:
    return hn::IfThenElse(hn::Lt(X, hn::Zero(d)),
                          hn::Mul(X, hn::Set(d, A.Alpha)), X);
  case ActKind::Sigmoid:
    return sigmoidVec(d, X);
  case ActKind::HardSigmoid:
    return hn::Min(
        hn::Max(hn::MulAdd(X, hn::Set(d, A.Alpha), hn::Set(d, A.Beta)),
                hn::Zero(d)),
        hn::Set(d, 1.0f));
  case ActKind::HardSwish: {
    V G = hn::MulAdd(X, hn::Set(d, 1.0f / 6.0f), hn::Set(d, 0.5f));
    G = hn::Min(hn::Max(G, hn::Zero(d)), hn::Set(d, 1.0f));
    return hn::Mul(X, G);
  }
  case ActKind::SiLU:
    return hn::Mul(X, sigmoidVec(d, X));
  default:
    return applyOtherActivation(d, A, X);
  }
}

} // namespace HWY_NAMESPACE
} // namespace cpu
} // namespace strider
HWY_AFTER_NAMESPACE();

#endif // include guard
