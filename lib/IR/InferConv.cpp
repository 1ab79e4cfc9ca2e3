//===- InferConv.cpp - Shape functions of spatial ops ---------------------===//
//
// Conv, ConvTranspose, pooling, BatchNormalization, InstanceNormalization,
// LRN, Resize, GridSample, DepthToSpace and SpaceToDepth: ops on N x C x
// spatial... tensors; and LayerNormalization, the normalization over trailing
// dims.
//
//===----------------------------------------------------------------------===//

#include "InferFunctions.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace strider;
using namespace strider::detail;

static std::string dimText(const Dim &D) {
  if (D.isStatic())
    return std::to_string(D.getSize());
  if (D.isSymbol())
    return D.getSymbol().str();
  return "?";
}

/// Dim \p I of \p T, unknown when \p T is unranked.
static Dim getDimOrUnknown(const TensorType &T, unsigned I) {
  return T.hasRank() ? T.getDim(I) : Dim::getUnknown();
}

/// Check that the 1-D per-channel operand \p I (bias, scale, mean, ...) has
/// \p Size entries, refining \p Size with it.
static llvm::Error checkPerChannel(const Node &N, unsigned I,
                                   llvm::StringRef Name, Dim &Size) {
  const TensorType *T = getOperandType(N, I);
  if (!T || !T->hasRank())
    return llvm::Error::success();
  if (llvm::Error E = checkRank(N, *T, Name, 1))
    return E;
  if (!mergeDims(Size, T->getDim(0), Size))
    return makeNodeError(N, "input '" + Name + "' has size " +
                                dimText(T->getDim(0)) + ", expected " +
                                dimText(Size));
  return llvm::Error::success();
}

/// Read the positive int attribute 'group' (default 1).
static llvm::Expected<int64_t> readGroup(const Node &N) {
  int64_t Group = N.getIntAttr("group", 1);
  if (Group < 1)
    return makeNodeError(N,
                         "group must be positive, got " + llvm::Twine(Group));
  return Group;
}

/// Rank of a convolution from X, W or kernel_shape; None if none says.
static llvm::Optional<unsigned> getConvRank(const Node &N, const TensorType &X,
                                            const TensorType &W) {
  if (X.hasRank())
    return X.getRank();
  if (W.hasRank())
    return W.getRank();
  const Attribute *K = N.getAttr("kernel_shape");
  if (K && K->getKind() == AttrKind::Ints)
    return K->getInts().size() + 2;
  return llvm::None;
}

/// Whether \p T is u8 or i8 (or not known yet).
static bool isQuantizedType(ElementType T) {
  return T == ElementType::U8 || T == ElementType::I8 ||
         T == ElementType::Unknown;
}

/// QLinearConv's element types: x and w 8-bit, the scales (1, 4, 6)
/// float, the zero points (2, 5, 7) of their tensor's type, the bias i32.
/// \p Elt is the result's (y_zero_point's).
static llvm::Error checkQuantizedConvTypes(const Node &N, const TensorType &X,
                                           const TensorType &W,
                                           ElementType &Elt) {
  const TensorType *XS, *XZ, *WS, *WZ, *YS, *YZ;
  if (llvm::Error E = getRequiredOperands(N, {{1, "x_scale", &XS},
                                              {2, "x_zero_point", &XZ},
                                              {4, "w_scale", &WS},
                                              {5, "w_zero_point", &WZ},
                                              {6, "y_scale", &YS},
                                              {7, "y_zero_point", &YZ}}))
    return E;
  struct Check {
    unsigned I;
    const char *Name;
    ElementType Want; ///< Unknown: an 8-bit type.
  };
  const Check Checks[] = {
      {0, "x", ElementType::Unknown},
      {2, "x_zero_point", X.getElementType()},
      {3, "w", ElementType::Unknown},
      {5, "w_zero_point", W.getElementType()},
      {7, "y_zero_point", ElementType::Unknown},
      {8, "B", ElementType::I32},
  };
  for (const Check &C : Checks) {
    const TensorType *T = getOperandType(N, C.I);
    if (!T)
      continue;
    ElementType Got = T->getElementType();
    bool Ok = C.Want == ElementType::Unknown
                  ? isQuantizedType(Got)
                  : Got == C.Want || Got == ElementType::Unknown ||
                        C.Want == ElementType::Unknown;
    if (!Ok)
      return makeNodeError(N, llvm::Twine("input '") + C.Name +
                                  "' has element type " +
                                  getElementTypeName(Got) + ", expected " +
                                  (C.Want == ElementType::Unknown
                                       ? std::string("u8 or i8")
                                       : getElementTypeName(C.Want).str()));
  }
  for (auto [T, Name] :
       {std::pair<const TensorType *, const char *>{XS, "x_scale"},
        {WS, "w_scale"},
        {YS, "y_scale"}})
    if (llvm::Error E =
            checkElementType(N, T->getElementType(), Name, EltClass::Float))
      return E;
  Elt = YZ->getElementType();
  return llvm::Error::success();
}

/// ConvInteger's element types: x and w 8-bit, each zero point of its
/// tensor's type; the result i32.
static llvm::Error checkIntegerConvTypes(const Node &N, const TensorType &X,
                                         const TensorType &W,
                                         ElementType &Elt) {
  const struct {
    unsigned I;
    const char *Name;
    const TensorType &Of; ///< The tensor whose type a zero point has.
  } Checks[] = {
      {0, "x", X}, {1, "w", W}, {2, "x_zero_point", X}, {3, "w_zero_point", W}};
  for (const auto &C : Checks) {
    const TensorType *T = getOperandType(N, C.I);
    if (!T)
      continue;
    const ElementType Got = T->getElementType(), Want = C.Of.getElementType();
    const bool Ok = C.I < 2 ? isQuantizedType(Got)
                            : Got == Want || Got == ElementType::Unknown ||
                                  Want == ElementType::Unknown;
    if (!Ok)
      return makeNodeError(N, llvm::Twine("input '") + C.Name +
                                  "' has element type " +
                                  getElementTypeName(Got) + ", expected " +
                                  (C.I < 2 ? std::string("u8 or i8")
                                           : getElementTypeName(Want).str()));
  }
  Elt = ElementType::I32;
  return llvm::Error::success();
}

/// The operand index of a conv's weight: QLinearConv's is its fourth.
static unsigned getWeightOperand(const Node &N) {
  return N.getOpId() == OpId::QLinearConv ? 3 : 1;
}

/// Common operand checks of Conv, ConvTranspose, QLinearConv and
/// ConvInteger: element types, ranks. Sets \p Rank (None when unknown).
static llvm::Error checkConvOperands(const Node &N, ElementType &Elt,
                                     llvm::Optional<unsigned> &Rank) {
  const bool Quantized = N.getOpId() == OpId::QLinearConv;
  const bool Integer = N.getOpId() == OpId::ConvInteger;
  const TensorType *X, *W;
  if (llvm::Error E = getRequiredOperands(
          N, {{0, Quantized || Integer ? "x" : "X", &X},
              {getWeightOperand(N), Quantized || Integer ? "w" : "W", &W}}))
    return E;
  if (Quantized) {
    if (llvm::Error E = checkQuantizedConvTypes(N, *X, *W, Elt))
      return E;
  } else if (Integer) {
    if (llvm::Error E = checkIntegerConvTypes(N, *X, *W, Elt))
      return E;
  } else {
    Elt = X->getElementType();
    if (llvm::Error E = checkElementType(N, Elt, "X", EltClass::Float))
      return E;
    if (llvm::Error E = unifyElementTypes(N, Elt, W->getElementType()))
      return E;
    if (const TensorType *B = getOperandType(N, 2))
      if (llvm::Error E = unifyElementTypes(N, Elt, B->getElementType()))
        return E;
  }
  if (llvm::Error E = checkMinRank(N, *X, "X", 3))
    return E;
  if (llvm::Error E = checkMinRank(N, *W, "W", 3))
    return E;
  Rank = getConvRank(N, *X, *W);
  if (Rank && *Rank < 3)
    return makeNodeError(N, "attribute 'kernel_shape' must have at least 1 "
                            "entry");
  if (Rank)
    if (llvm::Error E = checkRank(N, *W, "W", *Rank))
      return E;
  return llvm::Error::success();
}

/// What Conv and ConvTranspose read before their own checks: operands, group
/// and window attributes.
struct ConvSetup {
  ElementType Elt;
  /// Null when the rank is unknown (the result is then unranked).
  const TensorType *X = nullptr, *W = nullptr;
  int64_t Group = 1;
  unsigned NumSpatial = 0;
  WindowAttrs Window;
};

/// Check the operands and read the attributes shared by Conv and
/// ConvTranspose. Pushes an unranked result and leaves \p S.X null when the
/// rank is unknown.
static llvm::Error prepareConv(const Node &N, ResultTypes &Results,
                               ConvSetup &S) {
  llvm::Optional<unsigned> Rank;
  if (llvm::Error E = checkConvOperands(N, S.Elt, Rank))
    return E;
  if (!Rank) {
    Results.push_back(TensorType::getUnranked(S.Elt));
    return llvm::Error::success();
  }
  const TensorType *X = getOperandType(N, 0),
                   *W = getOperandType(N, getWeightOperand(N));
  auto Group = readGroup(N);
  if (!Group)
    return Group.takeError();
  S.Group = *Group;
  S.NumSpatial = *Rank - 2;
  DimList WeightSpatial;
  for (unsigned I = 0; I < S.NumSpatial; ++I)
    WeightSpatial.push_back(getDimOrUnknown(*W, I + 2));
  if (llvm::Error E = readWindowAttrs(
          N, S.NumSpatial, llvm::ArrayRef<Dim>(WeightSpatial), S.Window))
    return E;
  S.X = X;
  S.W = W;
  return llvm::Error::success();
}

/// Check that a static channel count \p D divides by \p Group.
static llvm::Error checkDividesByGroup(const Node &N, const Dim &D,
                                       llvm::StringRef What, int64_t Group) {
  if (D.isStatic() && D.getSize() % Group != 0)
    return makeNodeError(N, What + " " + llvm::Twine(D.getSize()) +
                                " not divisible by group " +
                                llvm::Twine(Group));
  return llvm::Error::success();
}

/// QLinearConv's scales and zero points: x's and y's scalars (or one
/// element), w's scalars or one per output channel (\p M), the bias one
/// per output channel.
static llvm::Error checkQuantizedConvParams(const Node &N, Dim &M) {
  static const struct {
    unsigned I;
    const char *Name;
    bool PerChannel;
  } Params[] = {{1, "x_scale", false}, {2, "x_zero_point", false},
                {4, "w_scale", true},  {5, "w_zero_point", true},
                {6, "y_scale", false}, {7, "y_zero_point", false}};
  for (const auto &P : Params) {
    const TensorType *T = getOperandType(N, P.I);
    if (!T || !T->hasRank() || T->getRank() == 0)
      continue;
    if (T->getRank() > 1)
      return makeNodeError(N, llvm::Twine("input '") + P.Name + "' has type " +
                                  T->str() + ", expected a scalar or 1-D");
    const Dim &D = T->getDim(0);
    if (D.isStatic() && D.getSize() == 1)
      continue;
    if (!P.PerChannel)
      return makeNodeError(N, llvm::Twine("input '") + P.Name + "' has type " +
                                  T->str() + ", expected one element");
    Dim Size = M;
    if (llvm::Error E = checkPerChannel(N, P.I, P.Name, Size))
      return E;
  }
  return checkPerChannel(N, 8, "B", M);
}

/// ConvInteger's zero points: x's one element, w's one or one per output
/// channel (\p M).
static llvm::Error checkIntegerConvParams(const Node &N, Dim &M) {
  if (const TensorType *T = getOperandType(N, 2))
    if (T->hasRank() && T->getRank() > 0 &&
        !(T->getRank() == 1 && T->getDim(0).isStatic() &&
          T->getDim(0).getSize() == 1))
      return makeNodeError(N, "input 'x_zero_point' has type " + T->str() +
                                  ", expected one element");
  const TensorType *T = getOperandType(N, 3);
  if (!T || !T->hasRank() || T->getRank() == 0)
    return llvm::Error::success();
  if (T->getRank() > 1)
    return makeNodeError(N, "input 'w_zero_point' has type " + T->str() +
                                ", expected a scalar or 1-D");
  if (T->getDim(0).isStatic() && T->getDim(0).getSize() == 1)
    return llvm::Error::success();
  return checkPerChannel(N, 3, "w_zero_point", M);
}

llvm::Error detail::inferConv(const Node &N, ResultTypes &Results) {
  ConvSetup S;
  if (llvm::Error E = prepareConv(N, Results, S))
    return E;
  if (!S.X)
    return llvm::Error::success();
  const TensorType &X = *S.X, &W = *S.W;
  // X: [N, C, D...], W: [M, C / group, K...], B: [M].
  Dim C = getDimOrUnknown(X, 1), M = getDimOrUnknown(W, 0);
  Dim CPerGroup = getDimOrUnknown(W, 1);
  if (llvm::Error E = checkDividesByGroup(N, C, "channels", S.Group))
    return E;
  if (C.isStatic() && CPerGroup.isStatic() &&
      C.getSize() / S.Group != CPerGroup.getSize())
    return makeNodeError(N, "input 'W' has " +
                                llvm::Twine(CPerGroup.getSize()) +
                                " channels per group, expected " +
                                llvm::Twine(C.getSize() / S.Group));
  if (llvm::Error E = checkDividesByGroup(N, M, "output channels", S.Group))
    return E;
  if (N.getOpId() == OpId::QLinearConv) {
    if (llvm::Error E = checkQuantizedConvParams(N, M))
      return E;
  } else if (N.getOpId() == OpId::ConvInteger) {
    if (llvm::Error E = checkIntegerConvParams(N, M))
      return E;
  } else if (llvm::Error E = checkPerChannel(N, 2, "B", M)) {
    return E;
  }

  unsigned NumSpatial = S.NumSpatial;
  const WindowAttrs &Window = S.Window;
  DimList Out = {getDimOrUnknown(X, 0), M};
  for (unsigned I = 0; I < NumSpatial; ++I) {
    auto D = computeWindowOutputDim(N, getDimOrUnknown(X, I + 2), I, Window);
    if (!D)
      return D.takeError();
    Out.push_back(*D);
  }
  Results.push_back(makeType(S.Elt, Out));
  return llvm::Error::success();
}

llvm::Error detail::inferQLinearConv(const Node &N, ResultTypes &Results) {
  return inferConv(N, Results);
}

llvm::Error detail::inferConvInteger(const Node &N, ResultTypes &Results) {
  return inferConv(N, Results);
}

llvm::Error detail::inferConvTranspose(const Node &N, ResultTypes &Results) {
  ConvSetup S;
  if (llvm::Error E = prepareConv(N, Results, S))
    return E;
  if (!S.X)
    return llvm::Error::success();
  const TensorType &X = *S.X, &W = *S.W;
  // X: [N, C, D...], W: [C, M / group, K...], B: [M].
  Dim C = getDimOrUnknown(X, 1), WC = getDimOrUnknown(W, 0);
  if (!mergeDims(C, WC, C))
    return makeNodeError(N, "input 'W' has " + dimText(WC) +
                                " input channels, expected " + dimText(C));
  if (llvm::Error E = checkDividesByGroup(N, C, "channels", S.Group))
    return E;
  auto M = multiplyDims(N, {getDimOrUnknown(W, 1), Dim::getStatic(S.Group)});
  if (!M)
    return M.takeError();
  if (llvm::Error E = checkPerChannel(N, 2, "B", *M))
    return E;

  unsigned NumSpatial = S.NumSpatial;
  const WindowAttrs &Window = S.Window;
  DimList Out = {getDimOrUnknown(X, 0), *M};
  if (N.getAttr("output_shape")) {
    // An explicit output shape fixes the spatial sizes (pads follow).
    llvm::SmallVector<int64_t, 3> Shape;
    if (llvm::Error E =
            readIntsAttr(N, "output_shape", NumSpatial, 0, 0, Shape))
      return E;
    for (int64_t Size : Shape)
      Out.push_back(Dim::getStatic(Size));
  } else {
    for (unsigned I = 0; I < NumSpatial; ++I) {
      auto D =
          computeTransposedOutputDim(N, getDimOrUnknown(X, I + 2), I, Window);
      if (!D)
        return D.takeError();
      Out.push_back(*D);
    }
  }
  Results.push_back(makeType(S.Elt, Out));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// Shared body of MaxPool and AveragePool; returns the output type.
static llvm::Error inferPool(const Node &N, EltClass Class, TensorType &Out) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "X");
  ElementType Elt = X->getElementType();
  if (llvm::Error E = checkElementType(N, Elt, "X", Class))
    return E;
  if (llvm::Error E = checkMinRank(N, *X, "X", 3))
    return E;
  unsigned NumSpatial;
  if (X->hasRank()) {
    NumSpatial = X->getRank() - 2;
  } else {
    const Attribute *K = N.getAttr("kernel_shape");
    if (!K || K->getKind() != AttrKind::Ints)
      return makeNodeError(N, "missing attribute 'kernel_shape'");
    NumSpatial = K->getInts().size();
  }
  WindowAttrs Window;
  if (llvm::Error E = readWindowAttrs(N, NumSpatial, llvm::None, Window))
    return E;
  DimList Shape = {getDimOrUnknown(*X, 0), getDimOrUnknown(*X, 1)};
  for (unsigned I = 0; I < NumSpatial; ++I) {
    auto D = computeWindowOutputDim(N, getDimOrUnknown(*X, I + 2), I, Window);
    if (!D)
      return D.takeError();
    Shape.push_back(*D);
  }
  Out = makeType(Elt, Shape);
  return llvm::Error::success();
}

llvm::Error detail::inferMaxPool(const Node &N, ResultTypes &Results) {
  TensorType Out;
  if (llvm::Error E = inferPool(N, EltClass::Numeric, Out))
    return E;
  Results.push_back(Out);
  // The optional Indices result: flat i64 indices of the maxima.
  Results.push_back(Out.withElementType(ElementType::I64));
  return llvm::Error::success();
}

llvm::Error detail::inferAveragePool(const Node &N, ResultTypes &Results) {
  TensorType Out;
  if (llvm::Error E = inferPool(N, EltClass::Float, Out))
    return E;
  Results.push_back(Out);
  return llvm::Error::success();
}

static llvm::Error inferGlobalPool(const Node &N, ResultTypes &Results,
                                   EltClass Class) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "X");
  if (llvm::Error E = checkElementType(N, X->getElementType(), "X", Class))
    return E;
  if (llvm::Error E = checkMinRank(N, *X, "X", 3))
    return E;
  if (!X->hasRank()) {
    Results.push_back(*X);
    return llvm::Error::success();
  }
  // [N, C, 1, ..., 1]
  DimList Out = {X->getDim(0), X->getDim(1)};
  Out.append(X->getRank() - 2, Dim::getStatic(1));
  Results.push_back(makeType(X->getElementType(), Out));
  return llvm::Error::success();
}

llvm::Error detail::inferGlobalAveragePool(const Node &N,
                                           ResultTypes &Results) {
  return inferGlobalPool(N, Results, EltClass::Float);
}

llvm::Error detail::inferGlobalMaxPool(const Node &N, ResultTypes &Results) {
  return inferGlobalPool(N, Results, EltClass::Numeric);
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

llvm::Error detail::inferBatchNormalization(const Node &N,
                                            ResultTypes &Results) {
  static const char *const Names[] = {"X", "scale", "B", "input_mean",
                                      "input_var"};
  for (unsigned I = 0; I < 5; ++I)
    if (llvm::Error E = checkOperandPresent(N, I, Names[I]))
      return E;
  const TensorType &X = *getOperandType(N, 0);
  ElementType Elt = X.getElementType();
  if (llvm::Error E = checkElementType(N, Elt, "X", EltClass::Float))
    return E;
  // scale and B share one type, mean and var another.
  ElementType ScaleElt = ElementType::Unknown, StatElt = ElementType::Unknown;
  for (unsigned I = 1; I < 5; ++I) {
    ElementType T = getOperandType(N, I)->getElementType();
    if (llvm::Error E = checkElementType(N, T, Names[I], EltClass::Float))
      return E;
    if (llvm::Error E = unifyElementTypes(N, I < 3 ? ScaleElt : StatElt, T))
      return E;
  }
  if (llvm::Error E = checkMinRank(N, X, "X", 2))
    return E;
  Dim C = getDimOrUnknown(X, 1);
  for (unsigned I = 1; I < 5; ++I)
    if (llvm::Error E = checkPerChannel(N, I, Names[I], C))
      return E;
  if (N.getIntAttr("training_mode", 0) == 0 &&
      (N.hasResult(1) || N.hasResult(2)))
    return makeNodeError(N, "running_mean and running_var results require "
                            "training_mode = 1");
  Results.push_back(getLogicalType(X));
  Results.push_back(makeType(StatElt, {C}));
  Results.push_back(makeType(StatElt, {C}));
  return llvm::Error::success();
}

llvm::Error detail::inferInstanceNormalization(const Node &N,
                                               ResultTypes &Results) {
  static const char *const Names[] = {"input", "scale", "B"};
  for (unsigned I = 0; I < 3; ++I)
    if (llvm::Error E = checkOperandPresent(N, I, Names[I]))
      return E;
  const TensorType &X = *getOperandType(N, 0);
  ElementType Elt = X.getElementType();
  if (llvm::Error E = checkElementType(N, Elt, "input", EltClass::Float))
    return E;
  for (unsigned I = 1; I < 3; ++I)
    if (llvm::Error E =
            unifyElementTypes(N, Elt, getOperandType(N, I)->getElementType()))
      return E;
  if (llvm::Error E = checkMinRank(N, X, "input", 3))
    return E;
  Dim C = getDimOrUnknown(X, 1);
  for (unsigned I = 1; I < 3; ++I)
    if (llvm::Error E = checkPerChannel(N, I, Names[I], C))
      return E;
  Results.push_back(getLogicalType(X).withElementType(Elt));
  return llvm::Error::success();
}

/// Y has X's type; Mean and InvStdDev keep X's dims before the axis and
/// are 1 from it on, in stash_type (only 1, float, is known).
llvm::Error detail::inferLayerNormalization(const Node &N,
                                            ResultTypes &Results) {
  static const char *const Names[] = {"X", "Scale", "B"};
  for (unsigned I = 0; I < 2; ++I)
    if (llvm::Error E = checkOperandPresent(N, I, Names[I]))
      return E;
  const TensorType &X = *getOperandType(N, 0);
  ElementType Elt = X.getElementType();
  if (llvm::Error E = checkElementType(N, Elt, "X", EltClass::Float))
    return E;
  for (unsigned I = 1; I < 3; ++I)
    if (const TensorType *T = getOperandType(N, I))
      if (llvm::Error E = unifyElementTypes(N, Elt, T->getElementType()))
        return E;
  int64_t Stash = N.getIntAttr("stash_type", 1);
  if (Stash != 1)
    return makeNodeError(N, "stash_type " + llvm::Twine(Stash) +
                                " is not supported (only 1, float)");
  if (!X.hasRank()) {
    Results.push_back(TensorType::getUnranked(Elt));
    Results.push_back(TensorType::getUnranked(ElementType::F32));
    Results.push_back(TensorType::getUnranked(ElementType::F32));
    return llvm::Error::success();
  }
  auto Axis = normalizeAxis(N, N.getIntAttr("axis", -1), X.getRank());
  if (!Axis)
    return Axis.takeError();
  // Scale and B broadcast to the normalized dims.
  for (unsigned I = 1; I < 3; ++I) {
    const TensorType *T = getOperandType(N, I);
    if (!T || !T->hasRank())
      continue;
    DimList Normalized(X.getShape().begin() + *Axis, X.getShape().end());
    if (llvm::Error E = broadcastTo(N, T->getShape(), Names[I], Normalized))
      return E;
  }
  DimList StatShape(X.getShape().begin(), X.getShape().end());
  for (unsigned I = *Axis; I < StatShape.size(); ++I)
    StatShape[I] = Dim::getStatic(1);
  Results.push_back(getLogicalType(X).withElementType(Elt));
  Results.push_back(makeType(ElementType::F32, StatShape));
  Results.push_back(makeType(ElementType::F32, StatShape));
  return llvm::Error::success();
}

llvm::Error detail::inferLRN(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "X");
  if (llvm::Error E =
          checkElementType(N, X->getElementType(), "X", EltClass::Float))
    return E;
  if (llvm::Error E = checkMinRank(N, *X, "X", 3))
    return E;
  int64_t Size = N.getIntAttr("size", 0);
  if (Size < 1)
    return makeNodeError(N, "attribute 'size' must be positive, got " +
                                llvm::Twine(Size));
  Results.push_back(getLogicalType(*X));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// GridSample
//===----------------------------------------------------------------------===//

llvm::Error detail::inferGridSample(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0), *G = getOperandType(N, 1);
  if (!X)
    return checkOperandPresent(N, 0, "X");
  if (!G)
    return checkOperandPresent(N, 1, "grid");
  if (llvm::Error E =
          checkElementType(N, G->getElementType(), "grid", EltClass::Float))
    return E;
  const std::string Mode = N.getStringAttr("mode", "linear");
  if (Mode != "linear" && Mode != "nearest" && Mode != "cubic")
    return makeNodeError(N, "unknown mode '" + Mode +
                                "' (expected linear, nearest or cubic)");
  const std::string Padding = N.getStringAttr("padding_mode", "zeros");
  if (Padding != "zeros" && Padding != "border" && Padding != "reflection")
    return makeNodeError(N, "unknown padding_mode '" + Padding +
                                "' (expected zeros, border or reflection)");
  const ElementType Elt = X->getElementType();
  if (X->hasRank())
    if (llvm::Error E = checkMinRank(N, *X, "X", 3))
      return E;
  if (!X->hasRank() || !G->hasRank()) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  const unsigned Rank = X->getRank();
  if (llvm::Error E = checkRank(N, *G, "grid", Rank))
    return E;
  const Dim &Last = G->getDim(Rank - 1);
  if (Last.isStatic() && Last.getSize() != int64_t(Rank - 2))
    return makeNodeError(N, "input 'grid' has " + llvm::Twine(Last.getSize()) +
                                " coordinates per point, expected " +
                                llvm::Twine(Rank - 2));
  DimList Out;
  Dim Batch;
  if (!mergeDims(X->getDim(0), G->getDim(0), Batch))
    return makeNodeError(N, "inputs 'X' and 'grid' have different batch "
                            "sizes (" +
                                llvm::Twine(X->getDim(0).getSize()) + " vs " +
                                llvm::Twine(G->getDim(0).getSize()) + ")");
  // Points sampled from an empty spatial extent have no value: refused
  // (backends would read outside X; found by the onnx fuzzer).
  auto Positive = [](const Dim &D) { return D.isStatic() && D.getSize() > 0; };
  bool SamplesSomething = Positive(X->getDim(1));
  for (unsigned J = 0; J + 1 < Rank; ++J)
    SamplesSomething &= Positive(G->getDim(J));
  for (unsigned I = 2; I < Rank && SamplesSomething; ++I)
    if (X->getDim(I).isStatic() && X->getDim(I).getSize() == 0)
      return makeNodeError(N, "input 'X' has an empty spatial dim " +
                                  llvm::Twine(I) +
                                  " to sample the grid's points from");
  Out.push_back(Batch);
  Out.push_back(X->getDim(1));
  for (unsigned I = 1; I + 1 < Rank; ++I)
    Out.push_back(G->getDim(I));
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

static std::string formatDouble(double V) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << llvm::format("%g", V);
  return OS.str();
}

/// Whether a list operand certainly holds at least one entry (present and
/// not known to be empty: an empty scales tensor means "use sizes").
static bool isNonEmpty(const ListOperand &L) {
  return L.Present && L.Length && *L.Length > 0;
}
static bool mayBeNonEmpty(const ListOperand &L) {
  return L.Present && !(L.Length && *L.Length == 0);
}

llvm::Error detail::inferResize(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "X");
  ElementType Elt = X->getElementType();
  ListOperand Roi, Scales, Sizes;
  if (llvm::Error E = readFloatList(N, 1, "roi", Roi))
    return E;
  if (llvm::Error E = readFloatList(N, 2, "scales", Scales))
    return E;
  if (llvm::Error E = readIntList(N, 3, "sizes", EltClass::I64, Sizes))
    return E;
  if (isNonEmpty(Scales) && isNonEmpty(Sizes))
    return makeNodeError(N, "only one of 'scales' and 'sizes' may be given");
  if (!mayBeNonEmpty(Scales) && !mayBeNonEmpty(Sizes))
    return makeNodeError(N, "one of 'scales' and 'sizes' must be given");
  std::string Policy = N.getStringAttr("keep_aspect_ratio_policy", "stretch");
  if (Policy != "stretch" && Policy != "not_larger" && Policy != "not_smaller")
    return makeNodeError(N,
                         "unknown keep_aspect_ratio_policy '" + Policy + "'");
  bool UseSizes = mayBeNonEmpty(Sizes);
  // With a scales operand of unknown length, either list may be the one.
  bool Ambiguous = UseSizes && mayBeNonEmpty(Scales);
  const ListOperand &Target = UseSizes ? Sizes : Scales;

  const Attribute *AxesAttr = N.getAttr("axes");
  if (AxesAttr && AxesAttr->getKind() != AttrKind::Ints)
    return makeNodeError(N, "attribute 'axes' must be of kind ints");
  if (!X->hasRank()) {
    if (!AxesAttr && !Ambiguous && Target.Length)
      Results.push_back(
          makeType(Elt, DimList(*Target.Length, Dim::getUnknown())));
    else
      Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  unsigned Rank = X->getRank();
  llvm::SmallVector<unsigned, 6> Axes;
  if (AxesAttr) {
    if (llvm::Error E = normalizeAxes(N, AxesAttr->getInts(), Rank,
                                      /*AllowDuplicates=*/false, Axes))
      return E;
  } else {
    for (unsigned I = 0; I < Rank; ++I)
      Axes.push_back(I);
  }
  if (!Ambiguous && Target.Length &&
      *Target.Length != static_cast<int64_t>(Axes.size()))
    return makeNodeError(
        N, "input '" + llvm::Twine(UseSizes ? "sizes" : "scales") + "' has " +
               llvm::Twine(*Target.Length) + " entries, expected " +
               llvm::Twine(Axes.size()));
  DimList Out(X->getShape().begin(), X->getShape().end());
  if (Ambiguous || !Target.isConstant()) {
    for (unsigned A : Axes)
      Out[A] = Dim::getUnknown();
    Results.push_back(makeType(Elt, Out));
    return llvm::Error::success();
  }

  if (UseSizes) {
    llvm::ArrayRef<int64_t> V = *Sizes.Ints;
    for (unsigned K = 0; K < Axes.size(); ++K)
      if (V[K] < 0 || V[K] > MaxDimSize)
        return makeNodeError(N, "sizes entry " + llvm::Twine(V[K]) +
                                    " is out of range");
    if (Policy == "stretch") {
      for (unsigned K = 0; K < Axes.size(); ++K)
        Out[Axes[K]] = Dim::getStatic(V[K]);
    } else {
      // One scale for all axes: the smallest (not_larger) or largest
      // (not_smaller) ratio; sizes are then round-half-up(scale * in).
      bool AllStatic = llvm::all_of(Axes, [&](unsigned A) {
        return X->getDim(A).isStatic() && X->getDim(A).getSize() > 0;
      });
      if (!AllStatic) {
        for (unsigned A : Axes)
          Out[A] = Dim::getUnknown();
      } else {
        double Scale = 0;
        for (unsigned K = 0; K < Axes.size(); ++K) {
          double R = double(V[K]) / double(X->getDim(Axes[K]).getSize());
          if (K == 0 || (Policy == "not_larger" ? R < Scale : R > Scale))
            Scale = R;
        }
        for (unsigned A : Axes) {
          double S = std::floor(Scale * double(X->getDim(A).getSize()) + 0.5);
          if (!(S <= double(MaxDimSize)))
            return makeNodeError(N, "output size of dim " + llvm::Twine(A) +
                                        " exceeds 2^62");
          Out[A] = Dim::getStatic(int64_t(S));
        }
      }
    }
  } else {
    llvm::ArrayRef<double> V = *Scales.Floats;
    for (unsigned K = 0; K < Axes.size(); ++K) {
      double Scale = V[K];
      if (!(Scale > 0))
        return makeNodeError(N, "scale must be positive, got " +
                                    formatDouble(Scale));
      const Dim &D = X->getDim(Axes[K]);
      if (!D.isStatic()) {
        if (Scale != 1.0)
          Out[Axes[K]] = Dim::getUnknown();
        continue;
      }
      double S = std::floor(double(D.getSize()) * Scale);
      if (!(S <= double(MaxDimSize)))
        return makeNodeError(N, "output size of dim " + llvm::Twine(Axes[K]) +
                                    " exceeds 2^62");
      Out[Axes[K]] = Dim::getStatic(int64_t(S));
    }
  }
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// DepthToSpace, SpaceToDepth
//===----------------------------------------------------------------------===//

/// Read the positive blocksize and its square.
static llvm::Error readBlockSize(const Node &N, int64_t &Block,
                                 int64_t &Square) {
  const Attribute *A = N.getAttr("blocksize");
  if (!A || A->getKind() != AttrKind::Int)
    return makeNodeError(N, "missing int attribute 'blocksize'");
  Block = A->getInt();
  if (Block < 1)
    return makeNodeError(N, "blocksize must be positive, got " +
                                llvm::Twine(Block));
  if (llvm::MulOverflow(Block, Block, Square) || Square > MaxDimSize)
    return makeNodeError(N,
                         "blocksize " + llvm::Twine(Block) + " is too large");
  return llvm::Error::success();
}

llvm::Error detail::inferDepthToSpace(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "input");
  int64_t Block = 0, Square = 0;
  if (llvm::Error E = readBlockSize(N, Block, Square))
    return E;
  std::string Mode = N.getStringAttr("mode", "DCR");
  if (Mode != "DCR" && Mode != "CRD")
    return makeNodeError(N, "unknown mode '" + Mode + "'");
  if (llvm::Error E = checkRank(N, *X, "input", 4))
    return E;
  ElementType Elt = X->getElementType();
  if (!X->hasRank()) {
    Results.push_back(makeType(Elt, DimList(4, Dim::getUnknown())));
    return llvm::Error::success();
  }
  // [N, C, H, W] -> [N, C / b^2, H * b, W * b]
  Dim C = X->getDim(1);
  if (C.isStatic()) {
    if (C.getSize() % Square != 0)
      return makeNodeError(
          N, "channels " + llvm::Twine(C.getSize()) +
                 " not divisible by blocksize^2 = " + llvm::Twine(Square));
    C = Dim::getStatic(C.getSize() / Square);
  } else if (Square != 1) {
    C = Dim::getUnknown();
  }
  DimList Out = {X->getDim(0), C};
  for (unsigned I = 2; I < 4; ++I) {
    auto D = multiplyDims(N, {X->getDim(I), Dim::getStatic(Block)});
    if (!D)
      return D.takeError();
    Out.push_back(*D);
  }
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

llvm::Error detail::inferSpaceToDepth(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "input");
  int64_t Block = 0, Square = 0;
  if (llvm::Error E = readBlockSize(N, Block, Square))
    return E;
  if (llvm::Error E = checkRank(N, *X, "input", 4))
    return E;
  ElementType Elt = X->getElementType();
  if (!X->hasRank()) {
    Results.push_back(makeType(Elt, DimList(4, Dim::getUnknown())));
    return llvm::Error::success();
  }
  // [N, C, H, W] -> [N, C * b^2, H / b, W / b]
  auto C = multiplyDims(N, {X->getDim(1), Dim::getStatic(Square)});
  if (!C)
    return C.takeError();
  DimList Out = {X->getDim(0), *C};
  for (unsigned I = 2; I < 4; ++I) {
    const Dim &D = X->getDim(I);
    if (!D.isStatic()) {
      Out.push_back(Block == 1 ? D : Dim::getUnknown());
      continue;
    }
    if (D.getSize() % Block != 0)
      return makeNodeError(
          N, "dim " + llvm::Twine(I) + " of size " + llvm::Twine(D.getSize()) +
                 " not divisible by blocksize " + llvm::Twine(Block));
    Out.push_back(Dim::getStatic(D.getSize() / Block));
  }
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}
