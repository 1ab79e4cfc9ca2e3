//===- ElementwiseKernels.cpp - Pointwise reference kernels ---------------===//
//
// Unary activations and math functions, broadcasting binary and variadic
// arithmetic, comparisons, logic, Where, Clip, Cast, PRelu, Identity,
// Dropout (inference) and relayout. Every kernel
// walks the logical index space of its result and reads each operand
// through its own layout's strides (broadcast dims read index 0). Floats
// compute in double, integers in int64 (wrapping on overflow).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace strider;
using namespace strider::runtime;

namespace {

using Operands = llvm::ArrayRef<const Tensor *>;
using Results = llvm::MutableArrayRef<Tensor>;

/// Calls \p F(OutOffset, OperandOffsets) for every logical index of
/// \p Out, with the offset of that index in each (broadcast) operand.
template <typename Fn>
void forEachBroadcast(const Tensor &Out, llvm::ArrayRef<const Tensor *> Ins,
                      Fn F) {
  llvm::ArrayRef<int64_t> Shape = Out.getShape();
  llvm::SmallVector<llvm::SmallVector<int64_t, 6>, 4> Strides;
  for (const Tensor *In : Ins)
    Strides.push_back(getBroadcastStrides(*In, Shape));
  llvm::SmallVector<int64_t, 4> Offs(Ins.size());
  forEachIndex(Shape, [&](llvm::ArrayRef<int64_t> Index) {
    for (unsigned K = 0, E = Ins.size(); K != E; ++K) {
      int64_t Off = 0;
      for (unsigned D = 0, DE = Index.size(); D != DE; ++D)
        Off += Index[D] * Strides[K][D];
      Offs[K] = Off;
    }
    F(Out.getOffset(Index), llvm::ArrayRef<int64_t>(Offs));
  });
}

/// Wrapping int64 arithmetic (no undefined behaviour on overflow).
int64_t wrapAdd(int64_t A, int64_t B) {
  return int64_t(uint64_t(A) + uint64_t(B));
}
int64_t wrapSub(int64_t A, int64_t B) {
  return int64_t(uint64_t(A) - uint64_t(B));
}
int64_t wrapMul(int64_t A, int64_t B) {
  return int64_t(uint64_t(A) * uint64_t(B));
}
/// C-style division truncating toward zero; x / 0 is defined as 0 here.
int64_t truncDiv(int64_t A, int64_t B) {
  if (B == 0)
    return 0;
  if (B == -1)
    return wrapSub(0, A);
  return A / B;
}
int64_t intPow(int64_t Base, int64_t Exp) {
  if (Exp < 0) // Only 1 and -1 have integer reciprocals.
    return Base == 1 ? 1 : Base == -1 ? (Exp % 2 ? -1 : 1) : 0;
  int64_t R = 1;
  while (Exp) {
    if (Exp & 1)
      R = wrapMul(R, Base);
    Base = wrapMul(Base, Base);
    Exp >>= 1;
  }
  return R;
}

//===----------------------------------------------------------------------===//
// Unary ops.
//===----------------------------------------------------------------------===//

/// Result 0 = F(operand 0) per element, computed in double.
template <typename Fn>
llvm::Error unaryFloat(Operands Ins, Results Outs, Fn F) {
  forEachBroadcast(Outs[0], {Ins[0]},
                   [&](int64_t O, llvm::ArrayRef<int64_t> I) {
                     Outs[0].setDouble(O, F(Ins[0]->getDouble(I[0])));
                   });
  return llvm::Error::success();
}

llvm::Error reluKernel(const Node &, Operands Ins, Results Outs) {
  if (isInteger(Outs[0].getElementType())) {
    forEachBroadcast(
        Outs[0], {Ins[0]}, [&](int64_t O, llvm::ArrayRef<int64_t> I) {
          Outs[0].setInt(O, std::max<int64_t>(0, Ins[0]->getInt(I[0])));
        });
    return llvm::Error::success();
  }
  return unaryFloat(Ins, Outs, [](double X) { return X < 0 ? 0.0 : X; });
}

llvm::Error leakyReluKernel(const Node &N, Operands Ins, Results Outs) {
  double Alpha = N.getFloatAttr("alpha", 0.01f);
  return unaryFloat(Ins, Outs,
                    [Alpha](double X) { return X < 0 ? Alpha * X : X; });
}

llvm::Error sigmoidKernel(const Node &, Operands Ins, Results Outs) {
  return unaryFloat(Ins, Outs,
                    [](double X) { return 1.0 / (1.0 + std::exp(-X)); });
}

llvm::Error hardSigmoidKernel(const Node &N, Operands Ins, Results Outs) {
  double Alpha = N.getFloatAttr("alpha", 0.2f);
  double Beta = N.getFloatAttr("beta", 0.5f);
  return unaryFloat(Ins, Outs, [=](double X) {
    return std::max(0.0, std::min(1.0, Alpha * X + Beta));
  });
}

llvm::Error hardSwishKernel(const Node &, Operands Ins, Results Outs) {
  return unaryFloat(Ins, Outs, [](double X) {
    return X * std::max(0.0, std::min(1.0, X / 6.0 + 0.5));
  });
}

llvm::Error tanhKernel(const Node &, Operands Ins, Results Outs) {
  return unaryFloat(Ins, Outs, [](double X) { return std::tanh(X); });
}

llvm::Error eluKernel(const Node &N, Operands Ins, Results Outs) {
  double Alpha = N.getFloatAttr("alpha", 1.0f);
  return unaryFloat(Ins, Outs, [Alpha](double X) {
    return X < 0 ? Alpha * (std::exp(X) - 1.0) : X;
  });
}

llvm::Error celuKernel(const Node &N, Operands Ins, Results Outs) {
  double Alpha = N.getFloatAttr("alpha", 1.0f);
  return unaryFloat(Ins, Outs, [Alpha](double X) {
    return X < 0 ? Alpha * std::expm1(X / Alpha) : X;
  });
}

llvm::Error seluKernel(const Node &N, Operands Ins, Results Outs) {
  double Alpha = N.getFloatAttr("alpha", 1.67326319217681884765625f);
  double Gamma = N.getFloatAttr("gamma", 1.05070102214813232421875f);
  return unaryFloat(Ins, Outs, [=](double X) {
    return Gamma * (X <= 0 ? Alpha * (std::exp(X) - 1.0) : X);
  });
}

llvm::Error softplusKernel(const Node &, Operands Ins, Results Outs) {
  // log(1 + exp(x)) without overflowing exp for large x.
  return unaryFloat(Ins, Outs, [](double X) {
    return X > 0 ? X + std::log1p(std::exp(-X)) : std::log1p(std::exp(X));
  });
}

llvm::Error softsignKernel(const Node &, Operands Ins, Results Outs) {
  return unaryFloat(Ins, Outs,
                    [](double X) { return X / (1.0 + std::fabs(X)); });
}

llvm::Error erfKernel(const Node &, Operands Ins, Results Outs) {
  return unaryFloat(Ins, Outs, [](double X) { return std::erf(X); });
}

llvm::Error geluKernel(const Node &N, Operands Ins, Results Outs) {
  if (N.getStringAttr("approximate", "none") == "tanh")
    return unaryFloat(Ins, Outs, [](double X) {
      const double Scale = std::sqrt(2.0 / M_PI);
      return 0.5 * X * (1.0 + std::tanh(Scale * (X + 0.044715 * X * X * X)));
    });
  return unaryFloat(Ins, Outs, [](double X) {
    return 0.5 * X * (1.0 + std::erf(X * M_SQRT1_2));
  });
}

llvm::Error expKernel(const Node &, Operands Ins, Results Outs) {
  return unaryFloat(Ins, Outs, [](double X) { return std::exp(X); });
}

llvm::Error sqrtKernel(const Node &, Operands Ins, Results Outs) {
  return unaryFloat(Ins, Outs, [](double X) { return std::sqrt(X); });
}

/// Neg and Abs keep integers exact (wrapping: -INT64_MIN is INT64_MIN);
/// unsigned Abs is the identity.
llvm::Error negKernel(const Node &, Operands Ins, Results Outs) {
  if (!isFloatingPoint(Outs[0].getElementType())) {
    forEachBroadcast(Outs[0], {Ins[0]},
                     [&](int64_t O, llvm::ArrayRef<int64_t> I) {
                       Outs[0].setInt(O, wrapSub(0, Ins[0]->getInt(I[0])));
                     });
    return llvm::Error::success();
  }
  return unaryFloat(Ins, Outs, [](double X) { return -X; });
}

llvm::Error absKernel(const Node &, Operands Ins, Results Outs) {
  ElementType Elt = Outs[0].getElementType();
  if (!isFloatingPoint(Elt)) {
    bool Unsigned = isUnsignedInteger(Elt);
    forEachBroadcast(
        Outs[0], {Ins[0]}, [&](int64_t O, llvm::ArrayRef<int64_t> I) {
          int64_t X = Ins[0]->getInt(I[0]);
          Outs[0].setInt(O, Unsigned || X >= 0 ? X : wrapSub(0, X));
        });
    return llvm::Error::success();
  }
  return unaryFloat(Ins, Outs, [](double X) { return std::fabs(X); });
}

llvm::Error reciprocalKernel(const Node &, Operands Ins, Results Outs) {
  return unaryFloat(Ins, Outs, [](double X) { return 1.0 / X; });
}

llvm::Error floorKernel(const Node &, Operands Ins, Results Outs) {
  return unaryFloat(Ins, Outs, [](double X) { return std::floor(X); });
}

llvm::Error ceilKernel(const Node &, Operands Ins, Results Outs) {
  return unaryFloat(Ins, Outs, [](double X) { return std::ceil(X); });
}

llvm::Error logKernel(const Node &, Operands Ins, Results Outs) {
  return unaryFloat(Ins, Outs, [](double X) { return std::log(X); });
}

llvm::Error sinKernel(const Node &, Operands Ins, Results Outs) {
  return unaryFloat(Ins, Outs, [](double X) { return std::sin(X); });
}

llvm::Error cosKernel(const Node &, Operands Ins, Results Outs) {
  return unaryFloat(Ins, Outs, [](double X) { return std::cos(X); });
}

/// The element of quantization parameter \p P (a scalar, one element or
/// 1-D along \p Axis; absent: \p Default) for x's element at \p I.
double getQuantParam(const Tensor *P, llvm::ArrayRef<int64_t> I, int64_t Axis,
                     double Default) {
  if (!P)
    return Default;
  if (P->getRank() == 0)
    return P->getDouble(0);
  const int64_t At = P->getNumElements() == 1 ? 0 : I[size_t(Axis)];
  return P->getDouble(P->getOffset({At}));
}

/// The axis of a quantization node over x of rank \p Rank, checked.
llvm::Expected<int64_t> getQuantAxis(const Node &N, const Tensor &X,
                                     Operands Ins) {
  const int64_t Rank = X.getRank();
  int64_t Axis = N.getIntAttr("axis", 1);
  if (Axis < 0)
    Axis += Rank;
  for (unsigned K = 1; K < Ins.size(); ++K) {
    const Tensor *P = Ins[K];
    if (!P || P->getRank() == 0 || P->getNumElements() == 1)
      continue;
    if (P->getRank() != 1 || Axis < 0 || Axis >= Rank ||
        P->getShape()[0] != X.getShape()[size_t(Axis)])
      return makeNodeError(N, "quantization parameter " + P->getType().str() +
                                  " for x " + X.getType().str() +
                                  " along axis " +
                                  llvm::Twine(N.getIntAttr("axis", 1)));
  }
  return Axis;
}

/// \p X quantized: round(x / scale) (divided in float, as ONNX Runtime
/// does; halves to even) + zero point \p Z, saturated to [Lo, Hi], NaN to
/// the zero point.
int64_t quantizeValue(float X, double Scale, double Z, double Lo, double Hi) {
  const double Q = std::nearbyint(double(X / float(Scale))) + Z;
  return int64_t(std::isnan(Q) ? Z : std::clamp(Q, Lo, Hi));
}

/// (\p V - zero point \p Z) * \p Scale, multiplied in float as ONNX
/// Runtime does.
float dequantizeValue(double V, double Z, double Scale) {
  return float(V - Z) * float(Scale);
}

/// QuantizeLinear: round(x / scale) (halves to even) + zero point,
/// saturated to the result type's range.
llvm::Error quantizeLinearKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &X = *Ins[0];
  auto Axis = getQuantAxis(N, X, Ins);
  if (!Axis)
    return Axis.takeError();
  const Tensor *Zero = Ins.size() > 2 ? Ins[2] : nullptr;
  const bool Signed = Outs[0].getElementType() == ElementType::I8;
  const double Lo = Signed ? -128 : 0, Hi = Signed ? 127 : 255;
  forEachIndex(X.getShape(), [&](llvm::ArrayRef<int64_t> I) {
    const double Scale = getQuantParam(Ins[1], I, *Axis, 1.0);
    const double Z = getQuantParam(Zero, I, *Axis, 0.0);
    Outs[0].setInt(
        Outs[0].getOffset(I),
        quantizeValue(float(X.getDouble(X.getOffset(I))), Scale, Z, Lo, Hi));
  });
  return llvm::Error::success();
}

/// qbinary: QuantizeLinear(DequantizeLinear(a) op DequantizeLinear(b)),
/// the op in f32.
llvm::Error qbinaryKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &A = *Ins[0], &B = *Ins[3];
  if (A.getShape() != B.getShape())
    return makeNodeError(N, "inputs 'a' and 'b' differ in shape");
  for (unsigned I : {1u, 2u, 4u, 5u, 6u, 7u})
    if (Ins[I]->getNumElements() != 1)
      return makeNodeError(N, "quantization parameters must have one "
                              "element each");
  const bool Mul = N.getStringAttr("op", "") == "Mul";
  const bool Signed = Outs[0].getElementType() == ElementType::I8;
  const double Lo = Signed ? -128 : 0, Hi = Signed ? 127 : 255;
  const double SA = Ins[1]->getDouble(0), ZA = Ins[2]->getDouble(0);
  const double SB = Ins[4]->getDouble(0), ZB = Ins[5]->getDouble(0);
  const double SY = Ins[6]->getDouble(0), ZY = Ins[7]->getDouble(0);
  forEachIndex(A.getShape(), [&](llvm::ArrayRef<int64_t> I) {
    const float FA = dequantizeValue(double(A.getInt(A.getOffset(I))), ZA, SA);
    const float FB = dequantizeValue(double(B.getInt(B.getOffset(I))), ZB, SB);
    const float F = Mul ? FA * FB : FA + FB;
    Outs[0].setInt(Outs[0].getOffset(I), quantizeValue(F, SY, ZY, Lo, Hi));
  });
  return llvm::Error::success();
}

/// Lookup: the table's entry at x less its type's minimum.
llvm::Error lookupKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &X = *Ins[0], &Table = *Ins[1];
  if (Table.getNumElements() != 256)
    return makeNodeError(N, "table has " + llvm::Twine(Table.getNumElements()) +
                                " entries, expected 256");
  const int64_t Min = X.getElementType() == ElementType::I8 ? -128 : 0;
  forEachIndex(X.getShape(), [&](llvm::ArrayRef<int64_t> I) {
    Outs[0].setInt(Outs[0].getOffset(I),
                   Table.getInt(X.getInt(X.getOffset(I)) - Min));
  });
  return llvm::Error::success();
}

/// DequantizeLinear: (x - zero point) * scale.
llvm::Error dequantizeLinearKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &X = *Ins[0];
  auto Axis = getQuantAxis(N, X, Ins);
  if (!Axis)
    return Axis.takeError();
  const Tensor *Zero = Ins.size() > 2 ? Ins[2] : nullptr;
  forEachIndex(X.getShape(), [&](llvm::ArrayRef<int64_t> I) {
    const double Scale = getQuantParam(Ins[1], I, *Axis, 1.0);
    const double Z = getQuantParam(Zero, I, *Axis, 0.0);
    Outs[0].setDouble(
        Outs[0].getOffset(I),
        double(dequantizeValue(double(X.getInt(X.getOffset(I))), Z, Scale)));
  });
  return llvm::Error::success();
}

/// A unary kernel of floating-point types computing \p Fn in double.
#define STRIDER_FLOAT_UNARY_KERNEL(Name, Fn)                                   \
  llvm::Error Name(const Node &, Operands Ins, Results Outs) {                 \
    return unaryFloat(Ins, Outs, [](double X) { return Fn(X); });              \
  }
STRIDER_FLOAT_UNARY_KERNEL(tanKernel, std::tan)
STRIDER_FLOAT_UNARY_KERNEL(asinKernel, std::asin)
STRIDER_FLOAT_UNARY_KERNEL(acosKernel, std::acos)
STRIDER_FLOAT_UNARY_KERNEL(atanKernel, std::atan)
STRIDER_FLOAT_UNARY_KERNEL(sinhKernel, std::sinh)
STRIDER_FLOAT_UNARY_KERNEL(coshKernel, std::cosh)
STRIDER_FLOAT_UNARY_KERNEL(asinhKernel, std::asinh)
STRIDER_FLOAT_UNARY_KERNEL(acoshKernel, std::acosh)
STRIDER_FLOAT_UNARY_KERNEL(atanhKernel, std::atanh)
// Halves round to even (the default rounding mode), as ONNX asks.
STRIDER_FLOAT_UNARY_KERNEL(roundKernel, std::nearbyint)
#undef STRIDER_FLOAT_UNARY_KERNEL

/// -1, 0 or 1 (NaN for NaN); integers stay exact.
llvm::Error signKernel(const Node &, Operands Ins, Results Outs) {
  if (!isFloatingPoint(Outs[0].getElementType())) {
    const bool Unsigned = isUnsignedInteger(Outs[0].getElementType());
    forEachBroadcast(
        Outs[0], {Ins[0]}, [&](int64_t O, llvm::ArrayRef<int64_t> I) {
          int64_t X = Ins[0]->getInt(I[0]);
          Outs[0].setInt(O, X == 0 ? 0 : Unsigned || X > 0 ? 1 : -1);
        });
    return llvm::Error::success();
  }
  return unaryFloat(Ins, Outs, [](double X) {
    return X > 0 ? 1.0 : X < 0 ? -1.0 : X == 0 ? 0.0 : X;
  });
}

llvm::Error thresholdedReluKernel(const Node &N, Operands Ins, Results Outs) {
  double Alpha = N.getFloatAttr("alpha", 1.0f);
  return unaryFloat(Ins, Outs,
                    [Alpha](double X) { return X > Alpha ? X : 0.0; });
}

/// x + bias below -lambd, x - bias above lambd, 0 between.
llvm::Error shrinkKernel(const Node &N, Operands Ins, Results Outs) {
  double Bias = N.getFloatAttr("bias", 0.0f);
  double Lambd = N.getFloatAttr("lambd", 0.5f);
  return unaryFloat(Ins, Outs, [=](double X) {
    return X < -Lambd ? X + Bias : X > Lambd ? X - Bias : 0.0;
  });
}

llvm::Error notKernel(const Node &, Operands Ins, Results Outs) {
  forEachBroadcast(Outs[0], {Ins[0]},
                   [&](int64_t O, llvm::ArrayRef<int64_t> I) {
                     Outs[0].setInt(O, Ins[0]->getInt(I[0]) == 0);
                   });
  return llvm::Error::success();
}

/// Bit-exact copy of operand 0 into result 0 (any layouts).
void copyLogical(const Tensor &In, Tensor &Out) {
  forEachBroadcast(Out, {&In}, [&](int64_t O, llvm::ArrayRef<int64_t> I) {
    Out.copyElement(O, In, I[0]);
  });
}

llvm::Error identityKernel(const Node &, Operands Ins, Results Outs) {
  copyLogical(*Ins[0], Outs[0]);
  return llvm::Error::success();
}

llvm::Error dropoutKernel(const Node &N, Operands Ins, Results Outs) {
  // Training mode drops a random subset unless the ratio (default 0.5) is
  // 0, where it is the identity with an all-true mask, as in inference.
  bool Training = Ins.size() > 2 && Ins[2] && Ins[2]->getNumElements() > 0 &&
                  Ins[2]->getInt(0) != 0;
  double Ratio = Ins.size() > 1 && Ins[1] && Ins[1]->getNumElements() > 0
                     ? Ins[1]->getDouble(0)
                     : 0.5;
  if (Training && Ratio != 0)
    return makeNodeError(N, "training mode is not supported by the "
                            "reference interpreter for a nonzero ratio (the "
                            "mask is random)");
  copyLogical(*Ins[0], Outs[0]);
  if (Outs.size() > 1 && Outs[1].getElementType() != ElementType::Unknown)
    for (int64_t I = 0, E = Outs[1].getNumElements(); I != E; ++I)
      Outs[1].setInt(I, 1);
  return llvm::Error::success();
}

llvm::Error relayoutKernel(const Node &N, Operands Ins, Results Outs) {
  if (Ins[0]->getShape() != Outs[0].getShape() ||
      Ins[0]->getElementType() != Outs[0].getElementType())
    return makeNodeError(N, "operand type " + Ins[0]->getType().str() +
                                " and result type " + Outs[0].getType().str() +
                                " differ in more than their layouts");
  Outs[0] = Ins[0]->withLayout(Outs[0].getLayout());
  return llvm::Error::success();
}

llvm::Error clipKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor *Lo = Ins.size() > 1 ? Ins[1] : nullptr;
  const Tensor *Hi = Ins.size() > 2 ? Ins[2] : nullptr;
  if ((Lo && Lo->getNumElements() != 1) || (Hi && Hi->getNumElements() != 1))
    return makeNodeError(N, "min and max must be one-element tensors");
  if (isInteger(Outs[0].getElementType())) {
    int64_t L = Lo ? Lo->getInt(0) : std::numeric_limits<int64_t>::min();
    int64_t H = Hi ? Hi->getInt(0) : std::numeric_limits<int64_t>::max();
    forEachBroadcast(
        Outs[0], {Ins[0]}, [&](int64_t O, llvm::ArrayRef<int64_t> I) {
          Outs[0].setInt(O, std::min(H, std::max(L, Ins[0]->getInt(I[0]))));
        });
    return llvm::Error::success();
  }
  double L = Lo ? Lo->getDouble(0) : -HUGE_VAL;
  double H = Hi ? Hi->getDouble(0) : HUGE_VAL;
  // ONNX: min(max(x, min), max); NaN stays NaN.
  return unaryFloat(Ins, Outs, [=](double X) {
    if (std::isnan(X))
      return X;
    return std::min(H, std::max(L, X));
  });
}

llvm::Error castKernel(const Node &N, Operands Ins, Results Outs) {
  int64_t To = N.getIntAttr("to", 0);
  llvm::Optional<ElementType> Elt = fromOnnxDataType(int32_t(To));
  if (!Elt)
    return makeNodeError(N, "Cast to unsupported ONNX data type " +
                                llvm::Twine(To));
  if (*Elt != Outs[0].getElementType())
    return makeNodeError(N, "Cast 'to' attribute (" + getElementTypeName(*Elt) +
                                ") does not match the result type " +
                                Outs[0].getType().str());
  const Tensor &In = *Ins[0];
  Tensor &Out = Outs[0];
  bool IntSource = !isFloatingPoint(In.getElementType());
  bool IntDest = !isFloatingPoint(Out.getElementType());
  forEachBroadcast(Out, {&In}, [&](int64_t O, llvm::ArrayRef<int64_t> I) {
    if (In.getElementType() == Out.getElementType())
      Out.copyElement(O, In, I[0]);
    else if (IntSource && IntDest)
      Out.setInt(O, In.getInt(I[0])); // Wraps, as numpy's astype does.
    else if (In.getElementType() == ElementType::U64 && !IntDest)
      Out.setDouble(O, double(uint64_t(In.getInt(I[0]))));
    else
      Out.setDouble(O, In.getDouble(I[0])); // Float -> int truncates.
  });
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Broadcasting binary and variadic ops.
//===----------------------------------------------------------------------===//

/// Folds the operands left to right with \p FF (doubles) or \p IF (int64)
/// depending on the result's element type.
template <typename FloatFn, typename IntFn>
llvm::Error foldOperands(Operands Ins, Results Outs, FloatFn FF, IntFn IF) {
  Tensor &Out = Outs[0];
  bool Int = !isFloatingPoint(Out.getElementType());
  forEachBroadcast(Out, Ins, [&](int64_t O, llvm::ArrayRef<int64_t> I) {
    if (Int) {
      int64_t Acc = Ins[0]->getInt(I[0]);
      for (unsigned K = 1, E = Ins.size(); K != E; ++K)
        Acc = IF(Acc, Ins[K]->getInt(I[K]));
      Out.setInt(O, Acc);
      return;
    }
    double Acc = Ins[0]->getDouble(I[0]);
    for (unsigned K = 1, E = Ins.size(); K != E; ++K)
      Acc = FF(Acc, Ins[K]->getDouble(I[K]));
    Out.setDouble(O, Acc);
  });
  return llvm::Error::success();
}

llvm::Error addKernel(const Node &, Operands Ins, Results Outs) {
  return foldOperands(
      Ins, Outs, [](double A, double B) { return A + B; }, wrapAdd);
}
llvm::Error subKernel(const Node &, Operands Ins, Results Outs) {
  return foldOperands(
      Ins, Outs, [](double A, double B) { return A - B; }, wrapSub);
}
llvm::Error mulKernel(const Node &, Operands Ins, Results Outs) {
  return foldOperands(
      Ins, Outs, [](double A, double B) { return A * B; }, wrapMul);
}
llvm::Error divKernel(const Node &, Operands Ins, Results Outs) {
  if (Outs[0].getElementType() == ElementType::U64) // Past 2^63 too.
    return foldOperands(
        Ins, Outs, [](double A, double B) { return A / B; },
        [](int64_t A, int64_t B) {
          return B == 0 ? int64_t(0) : int64_t(uint64_t(A) / uint64_t(B));
        });
  return foldOperands(
      Ins, Outs, [](double A, double B) { return A / B; }, truncDiv);
}
/// The remainder of integers: truncated (C's %) or, with \p Floored, with
/// the divisor's sign (Python's %); x mod 0 is 0 here, as x / 0 is.
/// \p Unsigned: both hold u64 bits.
int64_t intMod(int64_t A, int64_t B, bool Floored, bool Unsigned) {
  if (B == 0)
    return 0;
  if (Unsigned)
    return int64_t(uint64_t(A) % uint64_t(B));
  if (B == -1)
    return 0;
  int64_t R = A % B;
  if (Floored && R != 0 && (R < 0) != (B < 0))
    R += B;
  return R;
}

llvm::Error modKernel(const Node &N, Operands Ins, Results Outs) {
  const bool Floored = N.getIntAttr("fmod", 0) == 0;
  const bool Unsigned = Outs[0].getElementType() == ElementType::U64;
  return foldOperands(
      Ins, Outs, [](double A, double B) { return std::fmod(A, B); },
      [=](int64_t A, int64_t B) { return intMod(A, B, Floored, Unsigned); });
}

/// Unsigned shifts; a shift by the type's width or more gives 0 (the
/// result is truncated to the type when stored).
llvm::Error bitShiftKernel(const Node &N, Operands Ins, Results Outs) {
  const bool Left = N.getStringAttr("direction", "") == "LEFT";
  return foldOperands(
      Ins, Outs, [](double A, double) { return A; },
      [=](int64_t A, int64_t B) {
        const uint64_t S = uint64_t(B);
        if (S >= 64)
          return int64_t(0);
        return int64_t(Left ? uint64_t(A) << S : uint64_t(A) >> S);
      });
}

llvm::Error sumKernel(const Node &N, Operands Ins, Results Outs) {
  return addKernel(N, Ins, Outs);
}

/// numpy.maximum / numpy.minimum: NaN in any operand gives NaN; u64
/// values order as unsigned.
llvm::Error maxKernel(const Node &, Operands Ins, Results Outs) {
  const bool Unsigned = Outs[0].getElementType() == ElementType::U64;
  return foldOperands(
      Ins, Outs,
      [](double A, double B) { return std::isnan(B) || B > A ? B : A; },
      [Unsigned](int64_t A, int64_t B) {
        return Unsigned ? int64_t(std::max(uint64_t(A), uint64_t(B)))
                        : std::max(A, B);
      });
}
llvm::Error minKernel(const Node &, Operands Ins, Results Outs) {
  const bool Unsigned = Outs[0].getElementType() == ElementType::U64;
  return foldOperands(
      Ins, Outs,
      [](double A, double B) { return std::isnan(B) || B < A ? B : A; },
      [Unsigned](int64_t A, int64_t B) {
        return Unsigned ? int64_t(std::min(uint64_t(A), uint64_t(B)))
                        : std::min(A, B);
      });
}

llvm::Error preluKernel(const Node &, Operands Ins, Results Outs) {
  return foldOperands(
      Ins, Outs, [](double X, double S) { return X < 0 ? S * X : X; },
      [](int64_t X, int64_t S) { return X < 0 ? wrapMul(S, X) : X; });
}

/// The result has the base's element type; the exponent may be of any
/// numeric type. Integer powers of integers are exact.
llvm::Error powKernel(const Node &, Operands Ins, Results Outs) {
  const Tensor &Base = *Ins[0], &Exp = *Ins[1];
  Tensor &Out = Outs[0];
  bool IntBase = !isFloatingPoint(Base.getElementType());
  bool IntExp = !isFloatingPoint(Exp.getElementType());
  forEachBroadcast(Out, Ins, [&](int64_t O, llvm::ArrayRef<int64_t> I) {
    if (IntBase && IntExp)
      Out.setInt(O, intPow(Base.getInt(I[0]), Exp.getInt(I[1])));
    else
      Out.setDouble(O, std::pow(Base.getDouble(I[0]), Exp.getDouble(I[1])));
  });
  return llvm::Error::success();
}

/// Result (bool) = Pred(A, B) per element: floats compared as doubles
/// (NaN compares false but for !=), integers and bools as int64, u64 as
/// uint64 (\p IP takes either).
template <typename FloatPred, typename IntPred>
llvm::Error compareOperands(Operands Ins, Results Outs, FloatPred FP,
                            IntPred IP) {
  const Tensor &A = *Ins[0], &B = *Ins[1];
  bool Float = isFloatingPoint(A.getElementType());
  bool Unsigned = A.getElementType() == ElementType::U64;
  forEachBroadcast(Outs[0], Ins, [&](int64_t O, llvm::ArrayRef<int64_t> I) {
    if (Float)
      Outs[0].setInt(O, FP(A.getDouble(I[0]), B.getDouble(I[1])));
    else if (Unsigned)
      Outs[0].setInt(O, IP(uint64_t(A.getInt(I[0])), uint64_t(B.getInt(I[1]))));
    else
      Outs[0].setInt(O, IP(A.getInt(I[0]), B.getInt(I[1])));
  });
  return llvm::Error::success();
}

llvm::Error equalKernel(const Node &, Operands Ins, Results Outs) {
  return compareOperands(
      Ins, Outs, [](double A, double B) { return A == B; },
      [](auto A, auto B) { return A == B; });
}
llvm::Error lessKernel(const Node &, Operands Ins, Results Outs) {
  return compareOperands(
      Ins, Outs, [](double A, double B) { return A < B; },
      [](auto A, auto B) { return A < B; });
}
llvm::Error lessOrEqualKernel(const Node &, Operands Ins, Results Outs) {
  return compareOperands(
      Ins, Outs, [](double A, double B) { return A <= B; },
      [](auto A, auto B) { return A <= B; });
}
llvm::Error greaterKernel(const Node &, Operands Ins, Results Outs) {
  return compareOperands(
      Ins, Outs, [](double A, double B) { return A > B; },
      [](auto A, auto B) { return A > B; });
}
llvm::Error greaterOrEqualKernel(const Node &, Operands Ins, Results Outs) {
  return compareOperands(
      Ins, Outs, [](double A, double B) { return A >= B; },
      [](auto A, auto B) { return A >= B; });
}
llvm::Error andKernel(const Node &, Operands Ins, Results Outs) {
  return compareOperands(
      Ins, Outs, [](double A, double B) { return A != 0 && B != 0; },
      [](auto A, auto B) { return A != 0 && B != 0; });
}
llvm::Error orKernel(const Node &, Operands Ins, Results Outs) {
  return compareOperands(
      Ins, Outs, [](double A, double B) { return A != 0 || B != 0; },
      [](auto A, auto B) { return A != 0 || B != 0; });
}

llvm::Error xorKernel(const Node &, Operands Ins, Results Outs) {
  return compareOperands(
      Ins, Outs, [](double A, double B) { return (A != 0) != (B != 0); },
      [](auto A, auto B) { return (A != 0) != (B != 0); });
}

/// IsNaN and IsInf (of the signs its attributes select).
llvm::Error isNaNKernel(const Node &, Operands Ins, Results Outs) {
  forEachBroadcast(Outs[0], {Ins[0]},
                   [&](int64_t O, llvm::ArrayRef<int64_t> I) {
                     Outs[0].setInt(O, std::isnan(Ins[0]->getDouble(I[0])));
                   });
  return llvm::Error::success();
}

llvm::Error isInfKernel(const Node &N, Operands Ins, Results Outs) {
  const bool Negative = N.getIntAttr("detect_negative", 1) != 0;
  const bool Positive = N.getIntAttr("detect_positive", 1) != 0;
  forEachBroadcast(
      Outs[0], {Ins[0]}, [&](int64_t O, llvm::ArrayRef<int64_t> I) {
        double X = Ins[0]->getDouble(I[0]);
        Outs[0].setInt(O, std::isinf(X) && (X > 0 ? Positive : Negative));
      });
  return llvm::Error::success();
}

/// Where(condition, X, Y): X's element where the condition holds, else
/// Y's, copied bit for bit.
llvm::Error whereKernel(const Node &, Operands Ins, Results Outs) {
  const Tensor &C = *Ins[0], &X = *Ins[1], &Y = *Ins[2];
  forEachBroadcast(Outs[0], Ins, [&](int64_t O, llvm::ArrayRef<int64_t> I) {
    if (C.getInt(I[0]) != 0)
      Outs[0].copyElement(O, X, I[1]);
    else
      Outs[0].copyElement(O, Y, I[2]);
  });
  return llvm::Error::success();
}

/// Error unless operands 0..NumChecked-1 (all if -1) broadcast to the
/// result's shape (the result types come from static shape inference, but
/// a shape computed from non-constant operands may still be wrong).
llvm::Error checkBroadcast(const Node &N, Operands Ins, const Tensor &Out,
                           int NumChecked) {
  llvm::ArrayRef<int64_t> Shape = Out.getShape();
  for (size_t K = 0, E = NumChecked < 0 ? Ins.size() : size_t(NumChecked);
       K != E && K != Ins.size(); ++K) {
    if (!Ins[K])
      continue;
    llvm::ArrayRef<int64_t> S = Ins[K]->getShape();
    bool OK = S.size() <= Shape.size();
    for (size_t I = 0; OK && I != S.size(); ++I) {
      int64_t O = Shape[Shape.size() - S.size() + I];
      OK = S[I] == O || S[I] == 1;
    }
    if (!OK)
      return makeNodeError(N, "operand " + llvm::Twine(K) + " of type " +
                                  Ins[K]->getType().str() +
                                  " does not broadcast to the result type " +
                                  Out.getType().str());
  }
  return llvm::Error::success();
}

/// \p K after checking that its first \p NumChecked operands (all if -1)
/// broadcast to its result.
template <ReferenceKernel K, int NumChecked>
llvm::Error checked(const Node &N, Operands Ins, Results Outs) {
  if (llvm::Error E = checkBroadcast(N, Ins, Outs[0], NumChecked))
    return E;
  return K(N, Ins, Outs);
}

} // namespace

void runtime::addElementwiseKernels(KernelTable &T) {
  auto Set = [&T](OpId Id, ReferenceKernel K) {
    T[static_cast<size_t>(Id)] = K;
  };
  Set(OpId::Relu, checked<reluKernel, 1>);
  Set(OpId::LeakyRelu, checked<leakyReluKernel, 1>);
  Set(OpId::Clip, checked<clipKernel, 1>);
  Set(OpId::Sigmoid, checked<sigmoidKernel, 1>);
  Set(OpId::HardSigmoid, checked<hardSigmoidKernel, 1>);
  Set(OpId::HardSwish, checked<hardSwishKernel, 1>);
  Set(OpId::Tanh, checked<tanhKernel, 1>);
  Set(OpId::Elu, checked<eluKernel, 1>);
  Set(OpId::Selu, checked<seluKernel, 1>);
  Set(OpId::Celu, checked<celuKernel, 1>);
  Set(OpId::Softplus, checked<softplusKernel, 1>);
  Set(OpId::Softsign, checked<softsignKernel, 1>);
  Set(OpId::Erf, checked<erfKernel, 1>);
  Set(OpId::Gelu, checked<geluKernel, 1>);
  Set(OpId::Exp, checked<expKernel, 1>);
  Set(OpId::Sqrt, checked<sqrtKernel, 1>);
  Set(OpId::Cast, checked<castKernel, 1>);
  Set(OpId::Identity, checked<identityKernel, 1>);
  Set(OpId::Dropout, checked<dropoutKernel, 1>);
  Set(OpId::QuantizeLinear, checked<quantizeLinearKernel, 1>);
  Set(OpId::DequantizeLinear, checked<dequantizeLinearKernel, 1>);
  Set(OpId::Lookup, lookupKernel);
  Set(OpId::QBinary, qbinaryKernel);
  Set(OpId::PRelu, checked<preluKernel, -1>);
  Set(OpId::Add, checked<addKernel, -1>);
  Set(OpId::Sub, checked<subKernel, -1>);
  Set(OpId::Mul, checked<mulKernel, -1>);
  Set(OpId::Div, checked<divKernel, -1>);
  Set(OpId::Pow, checked<powKernel, -1>);
  Set(OpId::Max, checked<maxKernel, -1>);
  Set(OpId::Min, checked<minKernel, -1>);
  Set(OpId::Sum, checked<sumKernel, -1>);
  Set(OpId::Mod, checked<modKernel, -1>);
  Set(OpId::BitShift, checked<bitShiftKernel, -1>);
  Set(OpId::Neg, checked<negKernel, 1>);
  Set(OpId::Abs, checked<absKernel, 1>);
  Set(OpId::Reciprocal, checked<reciprocalKernel, 1>);
  Set(OpId::Floor, checked<floorKernel, 1>);
  Set(OpId::Ceil, checked<ceilKernel, 1>);
  Set(OpId::Log, checked<logKernel, 1>);
  Set(OpId::Sin, checked<sinKernel, 1>);
  Set(OpId::Cos, checked<cosKernel, 1>);
  Set(OpId::Tan, checked<tanKernel, 1>);
  Set(OpId::Asin, checked<asinKernel, 1>);
  Set(OpId::Acos, checked<acosKernel, 1>);
  Set(OpId::Atan, checked<atanKernel, 1>);
  Set(OpId::Sinh, checked<sinhKernel, 1>);
  Set(OpId::Cosh, checked<coshKernel, 1>);
  Set(OpId::Asinh, checked<asinhKernel, 1>);
  Set(OpId::Acosh, checked<acoshKernel, 1>);
  Set(OpId::Atanh, checked<atanhKernel, 1>);
  Set(OpId::Sign, checked<signKernel, 1>);
  Set(OpId::Round, checked<roundKernel, 1>);
  Set(OpId::ThresholdedRelu, checked<thresholdedReluKernel, 1>);
  Set(OpId::Shrink, checked<shrinkKernel, 1>);
  Set(OpId::Equal, checked<equalKernel, -1>);
  Set(OpId::Less, checked<lessKernel, -1>);
  Set(OpId::LessOrEqual, checked<lessOrEqualKernel, -1>);
  Set(OpId::Greater, checked<greaterKernel, -1>);
  Set(OpId::GreaterOrEqual, checked<greaterOrEqualKernel, -1>);
  Set(OpId::Not, checked<notKernel, 1>);
  Set(OpId::And, checked<andKernel, -1>);
  Set(OpId::Or, checked<orKernel, -1>);
  Set(OpId::Xor, checked<xorKernel, -1>);
  Set(OpId::IsNaN, checked<isNaNKernel, 1>);
  Set(OpId::IsInf, checked<isInfKernel, 1>);
  Set(OpId::Where, checked<whereKernel, -1>);
  Set(OpId::Relayout, checked<relayoutKernel, 1>);
}
