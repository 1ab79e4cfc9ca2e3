//===- InferElementwise.cpp - Shape functions of pointwise ops ------------===//
//
// Unary ops, Cast, Identity, Dropout, Clip, PRelu, the broadcasting binary
// and variadic ops, comparisons, logic, Where and Expand.
//
//===----------------------------------------------------------------------===//

#include "InferFunctions.h"

#include "strider/IR/TensorData.h"

using namespace strider;
using namespace strider::detail;

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

// The shape functions of Ops.def's STRIDER_OP_UNARY entries.
#define STRIDER_OP_UNARY(Id, Class)                                            \
  llvm::Error detail::infer##Id(const Node &N, ResultTypes &Results) {         \
    return inferUnaryElementwise(N, Results, EltClass::Class);                 \
  }
#include "strider/IR/Ops.def"

/// Relu and Neg: floats and signed integers.
static llvm::Error inferSignedUnary(const Node &N, ResultTypes &Results) {
  if (const TensorType *X = getOperandType(N, 0)) {
    ElementType Elt = X->getElementType();
    if (isUnsignedInteger(Elt))
      return makeNodeError(N, "input 'X' has element type " +
                                  getElementTypeName(Elt) +
                                  ", expected a signed or floating-point type");
  }
  return inferUnaryElementwise(N, Results, EltClass::Numeric);
}

llvm::Error detail::inferRelu(const Node &N, ResultTypes &Results) {
  return inferSignedUnary(N, Results);
}

llvm::Error detail::inferGelu(const Node &N, ResultTypes &Results) {
  std::string Approx = N.getStringAttr("approximate", "none");
  if (Approx != "none" && Approx != "tanh")
    return makeNodeError(N, "approximate is '" + Approx +
                                "', expected 'none' or 'tanh'");
  return inferUnaryElementwise(N, Results, EltClass::Float);
}

llvm::Error detail::inferNeg(const Node &N, ResultTypes &Results) {
  return inferSignedUnary(N, Results);
}

llvm::Error detail::inferCast(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "input");
  const Attribute *To = N.getAttr("to");
  if (!To || To->getKind() != AttrKind::Int)
    return makeNodeError(N, "missing int attribute 'to'");
  int64_t Code = To->getInt();
  llvm::Optional<ElementType> Elt;
  if (Code >= INT32_MIN && Code <= INT32_MAX)
    Elt = fromOnnxDataType(static_cast<int32_t>(Code));
  if (!Elt)
    return makeNodeError(N,
                         "unsupported target data type " + llvm::Twine(Code));
  Results.push_back(getLogicalType(*X).withElementType(*Elt));
  return llvm::Error::success();
}

llvm::Error detail::inferDropout(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "data");
  if (llvm::Error E =
          checkElementType(N, X->getElementType(), "data", EltClass::Float))
    return E;
  if (llvm::Error E = checkScalarOperand(N, 1, "ratio", EltClass::Float,
                                         /*AllowSingleElement=*/false))
    return E;
  if (llvm::Error E = checkScalarOperand(N, 2, "training_mode", EltClass::Bool,
                                         /*AllowSingleElement=*/false))
    return E;
  TensorType Out = getLogicalType(*X);
  Results.push_back(Out);
  // The optional mask has the data's shape.
  Results.push_back(Out.withElementType(ElementType::Bool));
  return llvm::Error::success();
}

llvm::Error detail::inferClip(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "input");
  if (llvm::Error E =
          checkElementType(N, X->getElementType(), "input", EltClass::Numeric))
    return E;
  ElementType Elt = X->getElementType();
  static const char *const BoundNames[] = {"min", "max"};
  for (unsigned I = 1; I <= 2; ++I) {
    // Bounds are scalars; tolerate [1]-shaped ones that older exporters
    // write.
    if (llvm::Error E =
            checkScalarOperand(N, I, BoundNames[I - 1], EltClass::Numeric,
                               /*AllowSingleElement=*/true))
      return E;
    if (const TensorType *B = getOperandType(N, I))
      if (llvm::Error E = unifyElementTypes(N, Elt, B->getElementType()))
        return E;
  }
  Results.push_back(getLogicalType(*X).withElementType(Elt));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Broadcasting
//===----------------------------------------------------------------------===//

/// Multidirectional broadcast of every operand. \p SameElementType: all
/// operands share one element type (Pow's exponent may differ); each must
/// be in \p Class. The result has the operands' element type, or
/// \p ResultElt when that is known (comparisons: bool).
static llvm::Error
inferBroadcasting(const Node &N, ResultTypes &Results, bool SameElementType,
                  EltClass Class = EltClass::Numeric,
                  ElementType ResultElt = ElementType::Unknown) {
  if (N.getNumOperands() == 0)
    return checkOperandPresent(N, 0, "A");
  ElementType Elt = ElementType::Unknown;
  bool Ranked = true;
  DimList Shape;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const TensorType *T = getOperandType(N, I);
    if (!T)
      return makeNodeError(N, "missing required operand " + llvm::Twine(I));
    if (llvm::Error E = checkElementType(N, T->getElementType(),
                                         "operand " + std::to_string(I), Class))
      return E;
    if (I == 0 || SameElementType) {
      if (llvm::Error E = unifyElementTypes(N, Elt, T->getElementType()))
        return E;
    }
    if (!T->hasRank()) {
      Ranked = false;
      continue;
    }
    if (llvm::Error E = broadcastShapes(N, Shape, T->getShape(), Shape))
      return E;
  }
  if (ResultElt != ElementType::Unknown)
    Elt = ResultElt;
  Results.push_back(Ranked ? makeType(Elt, Shape)
                           : TensorType::getUnranked(Elt));
  return llvm::Error::success();
}

/// Lookup: an 8-bit operand and a 1-D table of 256 8-bit entries; the
/// result has the operand's shape and the table's type.
/// QBinary: a and b 8-bit of one shape, every scale an f32 and every zero
/// point an 8-bit value of one element; y has y_zero_point's type.
llvm::Error detail::inferQBinary(const Node &N, ResultTypes &Results) {
  const std::string Op = N.getStringAttr("op", "");
  if (Op != "Add" && Op != "Mul")
    return makeNodeError(N, "attribute 'op' is '" + Op +
                                "', expected 'Add' or 'Mul'");
  static const char *const Names[] = {"a",       "a_scale",     "a_zero_point",
                                      "b",       "b_scale",     "b_zero_point",
                                      "y_scale", "y_zero_point"};
  const TensorType *T[8];
  for (unsigned I = 0; I < 8; ++I) {
    T[I] = getOperandType(N, I);
    if (!T[I])
      return checkOperandPresent(N, I, Names[I]);
    const ElementType E = T[I]->getElementType();
    const bool Scale = I == 1 || I == 4 || I == 6;
    const bool Ok = E == ElementType::Unknown ||
                    (Scale ? E == ElementType::F32
                           : E == ElementType::U8 || E == ElementType::I8);
    if (!Ok)
      return makeNodeError(N, llvm::Twine("input '") + Names[I] +
                                  "' has element type " +
                                  getElementTypeName(E) + ", expected " +
                                  (Scale ? "f32" : "u8 or i8"));
    if (I != 0 && I != 3 && T[I]->hasStaticShape() &&
        T[I]->getNumElements() != int64_t(1))
      return makeNodeError(N, llvm::Twine("input '") + Names[I] +
                                  "' has type " + T[I]->str() +
                                  ", expected one element");
  }
  if (T[0]->hasRank() && T[3]->hasRank() &&
      T[0]->getShape() != T[3]->getShape())
    return makeNodeError(N, "inputs 'a' " + T[0]->str() + " and 'b' " +
                                T[3]->str() + " differ in shape");
  Results.push_back(
      getLogicalType(*T[0]).withElementType(T[7]->getElementType()));
  return llvm::Error::success();
}

llvm::Error detail::inferLookup(const Node &N, ResultTypes &Results) {
  auto Is8Bit = [](ElementType T) {
    return T == ElementType::U8 || T == ElementType::I8 ||
           T == ElementType::Unknown;
  };
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "x");
  if (!Is8Bit(X->getElementType()))
    return makeNodeError(N, "input 'x' has element type " +
                                getElementTypeName(X->getElementType()) +
                                ", expected u8 or i8");
  const TensorType *Table = getOperandType(N, 1);
  if (!Table)
    return checkOperandPresent(N, 1, "table");
  if (!Is8Bit(Table->getElementType()) ||
      (Table->hasRank() &&
       (Table->getRank() != 1 ||
        (Table->getDim(0).isStatic() && Table->getDim(0).getSize() != 256))))
    return makeNodeError(N, "table has type " + Table->str() +
                                ", expected 256 u8 or i8 entries");
  Results.push_back(
      getLogicalType(*X).withElementType(Table->getElementType()));
  return llvm::Error::success();
}

// The shape functions of Ops.def's STRIDER_OP_BROADCAST entries.
#define STRIDER_OP_BROADCAST(Id, SameElementType)                              \
  llvm::Error detail::infer##Id(const Node &N, ResultTypes &Results) {         \
    return inferBroadcasting(N, Results, SameElementType);                     \
  }
#include "strider/IR/Ops.def"

// Comparisons: operands of one element type (Equal also bool), a bool
// result. And/Or: bool operands.
llvm::Error detail::inferMod(const Node &N, ResultTypes &Results) {
  int64_t Fmod = N.getIntAttr("fmod", 0);
  if (Fmod != 0 && Fmod != 1)
    return makeNodeError(N,
                         "fmod is " + llvm::Twine(Fmod) + ", expected 0 or 1");
  if (const TensorType *A = getOperandType(N, 0))
    if (Fmod == 0 && isFloatingPoint(A->getElementType()))
      return makeNodeError(N, "fmod is 0 for element type " +
                                  getElementTypeName(A->getElementType()) +
                                  ", expected 1 for floating-point types");
  return inferBroadcasting(N, Results, /*SameElementType=*/true,
                           EltClass::Numeric);
}

llvm::Error detail::inferBitShift(const Node &N, ResultTypes &Results) {
  std::string Dir = N.getStringAttr("direction", "");
  if (Dir != "LEFT" && Dir != "RIGHT")
    return makeNodeError(N, "direction is '" + Dir +
                                "', expected 'LEFT' or 'RIGHT'");
  if (const TensorType *A = getOperandType(N, 0))
    if (!isUnsignedInteger(A->getElementType()))
      return makeNodeError(N, "input 'X' has element type " +
                                  getElementTypeName(A->getElementType()) +
                                  ", expected an unsigned integer type");
  return inferBroadcasting(N, Results, /*SameElementType=*/true,
                           EltClass::Numeric);
}

llvm::Error detail::inferEqual(const Node &N, ResultTypes &Results) {
  return inferBroadcasting(N, Results, /*SameElementType=*/true, EltClass::Any,
                           ElementType::Bool);
}

llvm::Error detail::inferLess(const Node &N, ResultTypes &Results) {
  return inferBroadcasting(N, Results, /*SameElementType=*/true,
                           EltClass::Numeric, ElementType::Bool);
}

llvm::Error detail::inferLessOrEqual(const Node &N, ResultTypes &Results) {
  return inferBroadcasting(N, Results, /*SameElementType=*/true,
                           EltClass::Numeric, ElementType::Bool);
}

llvm::Error detail::inferGreater(const Node &N, ResultTypes &Results) {
  return inferBroadcasting(N, Results, /*SameElementType=*/true,
                           EltClass::Numeric, ElementType::Bool);
}

llvm::Error detail::inferGreaterOrEqual(const Node &N, ResultTypes &Results) {
  return inferBroadcasting(N, Results, /*SameElementType=*/true,
                           EltClass::Numeric, ElementType::Bool);
}

llvm::Error detail::inferAnd(const Node &N, ResultTypes &Results) {
  return inferBroadcasting(N, Results, /*SameElementType=*/true,
                           EltClass::Bool);
}

llvm::Error detail::inferOr(const Node &N, ResultTypes &Results) {
  return inferBroadcasting(N, Results, /*SameElementType=*/true,
                           EltClass::Bool);
}

llvm::Error detail::inferXor(const Node &N, ResultTypes &Results) {
  return inferBroadcasting(N, Results, /*SameElementType=*/true,
                           EltClass::Bool);
}

/// IsNaN and IsInf: a bool per element of a floating-point tensor.
llvm::Error detail::inferIsNaN(const Node &N, ResultTypes &Results) {
  if (llvm::Error E = inferUnaryElementwise(N, Results, EltClass::Float))
    return E;
  Results.back() = Results.back().withElementType(ElementType::Bool);
  return llvm::Error::success();
}

llvm::Error detail::inferIsInf(const Node &N, ResultTypes &Results) {
  return inferIsNaN(N, Results);
}

/// QuantizeLinear/DequantizeLinear's scale (operand 1) and zero point
/// (operand 2, optional): scalars or single elements, or 1-D along `axis`
/// with x's extent there. A single element is per-tensor, whatever `axis`
/// says (ONNX Runtime's quantizer writes `axis = 1` on the 1-D biases'
/// one-element scales; the spec ignores it there).
static llvm::Error checkQuantParams(const Node &N, const TensorType &X) {
  const TensorType *Scale = getOperandType(N, 1);
  if (!Scale)
    return checkOperandPresent(N, 1, "scale");
  if (llvm::Error E = checkElementType(N, Scale->getElementType(), "scale",
                                       EltClass::Float))
    return E;
  for (unsigned I : {1u, 2u}) {
    const TensorType *T = getOperandType(N, I);
    if (!T || !T->hasRank())
      continue;
    const char *Name = I == 1 ? "scale" : "zero_point";
    if (T->getRank() > 1)
      return makeNodeError(N, llvm::Twine("input '") + Name + "' has type " +
                                  T->str() + ", expected a scalar or 1-D");
    if (T->getRank() == 0 || !X.hasRank() ||
        (T->getDim(0).isStatic() && T->getDim(0).getSize() == 1))
      continue;
    auto Axis = normalizeAxis(N, N.getIntAttr("axis", 1), X.getRank());
    if (!Axis)
      return Axis.takeError();
    const Dim &D = T->getDim(0), &XD = X.getDim(*Axis);
    if (D.isStatic() && XD.isStatic() && D.getSize() != 1 &&
        D.getSize() != XD.getSize())
      return makeNodeError(N, llvm::Twine("input '") + Name + "' has " +
                                  llvm::Twine(D.getSize()) +
                                  " elements for an axis of size " +
                                  llvm::Twine(XD.getSize()));
  }
  return llvm::Error::success();
}

llvm::Error detail::inferQuantizeLinear(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "x");
  if (llvm::Error E =
          checkElementType(N, X->getElementType(), "x", EltClass::Float))
    return E;
  if (llvm::Error E = checkQuantParams(N, *X))
    return E;
  ElementType Y = ElementType::U8;
  if (const TensorType *Z = getOperandType(N, 2)) {
    Y = Z->getElementType();
    if (Y != ElementType::U8 && Y != ElementType::I8 &&
        Y != ElementType::Unknown)
      return makeNodeError(N, "input 'zero_point' has element type " +
                                  getElementTypeName(Y) +
                                  ", expected u8 or i8");
  }
  Results.push_back(getLogicalType(*X).withElementType(Y));
  return llvm::Error::success();
}

llvm::Error detail::inferDequantizeLinear(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "x");
  const ElementType XE = X->getElementType();
  if (XE != ElementType::U8 && XE != ElementType::I8 &&
      XE != ElementType::I32 && XE != ElementType::Unknown)
    return makeNodeError(N, "input 'x' has element type " +
                                getElementTypeName(XE) +
                                ", expected u8, i8 or i32");
  if (llvm::Error E = checkQuantParams(N, *X))
    return E;
  if (const TensorType *Z = getOperandType(N, 2))
    if (Z->getElementType() != XE &&
        Z->getElementType() != ElementType::Unknown &&
        XE != ElementType::Unknown)
      return makeNodeError(N, "input 'zero_point' has element type " +
                                  getElementTypeName(Z->getElementType()) +
                                  ", expected x's (" + getElementTypeName(XE) +
                                  ")");
  Results.push_back(getLogicalType(*X).withElementType(
      getOperandType(N, 1)->getElementType()));
  return llvm::Error::success();
}

/// Where(condition, X, Y): a bool condition, X and Y of one element type,
/// the three broadcast together.
llvm::Error detail::inferWhere(const Node &N, ResultTypes &Results) {
  static const char *const Names[] = {"condition", "X", "Y"};
  ElementType Elt = ElementType::Unknown;
  bool Ranked = true;
  DimList Shape;
  for (unsigned I = 0; I < 3; ++I) {
    const TensorType *T = getOperandType(N, I);
    if (!T)
      return checkOperandPresent(N, I, Names[I]);
    if (I == 0) {
      if (llvm::Error E = checkElementType(N, T->getElementType(), Names[I],
                                           EltClass::Bool))
        return E;
    } else if (llvm::Error E = unifyElementTypes(N, Elt, T->getElementType())) {
      return E;
    }
    if (!T->hasRank()) {
      Ranked = false;
      continue;
    }
    if (llvm::Error E = broadcastShapes(N, Shape, T->getShape(), Shape))
      return E;
  }
  Results.push_back(Ranked ? makeType(Elt, Shape)
                           : TensorType::getUnranked(Elt));
  return llvm::Error::success();
}

llvm::Error detail::inferPRelu(const Node &N, ResultTypes &Results) {
  const TensorType *X, *Slope;
  if (llvm::Error E =
          getRequiredOperands(N, {{0, "X", &X}, {1, "slope", &Slope}}))
    return E;
  if (llvm::Error E =
          checkElementType(N, X->getElementType(), "X", EltClass::Numeric))
    return E;
  ElementType Elt = X->getElementType();
  if (llvm::Error E = unifyElementTypes(N, Elt, Slope->getElementType()))
    return E;
  if (!X->hasRank()) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  // The slope broadcasts to X (unidirectionally): the result has X's shape.
  DimList Shape(X->getShape().begin(), X->getShape().end());
  if (Slope->hasRank())
    if (llvm::Error E = broadcastTo(N, Slope->getShape(), "slope", Shape))
      return E;
  Results.push_back(makeType(Elt, Shape));
  return llvm::Error::success();
}

llvm::Error detail::inferTile(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "input");
  if (!N.hasOperand(1))
    return checkOperandPresent(N, 1, "repeats");
  ListOperand Repeats;
  if (llvm::Error E = readIntList(N, 1, "repeats", EltClass::I64, Repeats))
    return E;
  ElementType Elt = X->getElementType();
  if (!X->hasRank()) {
    Results.push_back(Repeats.Length ? makeType(Elt, DimList(*Repeats.Length,
                                                             Dim::getUnknown()))
                                     : TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  if (Repeats.Length && *Repeats.Length != int64_t(X->getRank()))
    return makeNodeError(
        N, "input 'repeats' has " + llvm::Twine(*Repeats.Length) +
               " entries, the input has rank " + llvm::Twine(X->getRank()));
  DimList Shape;
  for (unsigned I = 0; I < X->getRank(); ++I) {
    const Dim &D = X->getDim(I);
    if (!Repeats.Ints) {
      Shape.push_back(D.isStatic() && D.getSize() == 0 ? D : Dim::getUnknown());
      continue;
    }
    int64_t R = (*Repeats.Ints)[I];
    if (R < 0)
      return makeNodeError(N, "repeats entry " + llvm::Twine(I) + " is " +
                                  llvm::Twine(R) + ", expected >= 0");
    if (R == 1 || (D.isStatic() && D.getSize() == 0)) {
      Shape.push_back(D);
    } else if (D.isStatic()) {
      auto DOrErr = multiplyDims(N, {D, Dim::getStatic(R)});
      if (!DOrErr)
        return DOrErr.takeError();
      Shape.push_back(*DOrErr);
    } else {
      Shape.push_back(R == 0 ? Dim::getStatic(0) : Dim::getUnknown());
    }
  }
  Results.push_back(makeType(Elt, Shape));
  return llvm::Error::success();
}

llvm::Error detail::inferExpand(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "input");
  if (!N.hasOperand(1))
    return checkOperandPresent(N, 1, "shape");
  ListOperand Target;
  if (llvm::Error E = readIntList(N, 1, "shape", EltClass::I64, Target))
    return E;
  ElementType Elt = X->getElementType();
  if (!X->hasRank() || !Target.Length) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  // A non-constant target still fixes the rank; its unknown dims broadcast
  // with static input dims other than 1 to those dims.
  DimList TargetDims(*Target.Length, Dim::getUnknown());
  if (Target.Ints) {
    for (unsigned I = 0; I < Target.Ints->size(); ++I) {
      auto DOrErr =
          makeStaticDim(N, (*Target.Ints)[I], "shape entry " + llvm::Twine(I));
      if (!DOrErr)
        return DOrErr.takeError();
      TargetDims[I] = *DOrErr;
    }
  }
  DimList Shape;
  if (llvm::Error E = broadcastShapes(N, X->getShape(), TargetDims, Shape))
    return E;
  Results.push_back(makeType(Elt, Shape));
  return llvm::Error::success();
}
