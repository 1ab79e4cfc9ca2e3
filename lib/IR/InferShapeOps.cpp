//===- InferShapeOps.cpp - Shape functions of shape manipulation ----------===//
//
// Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Shape, ConstantOfShape,
// Range, Constant, Gather and the internal relayout op.
//
//===----------------------------------------------------------------------===//

#include "InferFunctions.h"

#include "strider/IR/TensorData.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace strider;
using namespace strider::detail;

/// Result for ops whose target comes from a non-constant list operand: the
/// rank is the list's length when static, the dims are unknown.
static TensorType getUnknownDimsType(ElementType Elt,
                                     llvm::Optional<int64_t> Rank) {
  if (!Rank)
    return TensorType::getUnranked(Elt);
  return makeType(Elt, DimList(*Rank, Dim::getUnknown()));
}

/// `[1, 2, 3]`
static std::string listText(llvm::ArrayRef<int64_t> V) {
  std::string S = "[";
  for (unsigned I = 0; I < V.size(); ++I)
    S += (I ? ", " : "") + std::to_string(V[I]);
  return S + "]";
}

//===----------------------------------------------------------------------===//
// Reshape
//===----------------------------------------------------------------------===//

namespace {
/// The factors of a dim product: a static part, symbols and unknowns.
struct DimFactors {
  int64_t Static = 1;
  llvm::SmallVector<std::string, 4> Symbols;
  unsigned NumUnknown = 0;
};
} // namespace

static llvm::Error addFactor(const Node &N, const Dim &D, DimFactors &F) {
  if (D.isSymbol()) {
    F.Symbols.push_back(D.getSymbol().str());
  } else if (D.isUnknown()) {
    ++F.NumUnknown;
  } else if (llvm::MulOverflow(F.Static, D.getSize(), F.Static) ||
             F.Static > MaxDimSize) {
    return makeNodeError(N, "element count exceeds 2^62");
  }
  return llvm::Error::success();
}

llvm::Error detail::inferReshape(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "data");
  if (!N.hasOperand(1))
    return checkOperandPresent(N, 1, "shape");
  ListOperand Target;
  if (llvm::Error E = readIntList(N, 1, "shape", EltClass::I64, Target))
    return E;
  ElementType Elt = X->getElementType();
  if (!Target.Ints) {
    Results.push_back(getUnknownDimsType(Elt, Target.Length));
    return llvm::Error::success();
  }
  llvm::ArrayRef<int64_t> V = *Target.Ints;
  bool AllowZero = N.getIntAttr("allowzero", 0) != 0;
  if (llvm::count(V, -1) > 1)
    return makeNodeError(N, "target shape has more than one -1");
  if (AllowZero && llvm::is_contained(V, 0) && llvm::is_contained(V, -1))
    return makeNodeError(N, "target shape has both 0 and -1 with allowzero");

  DimList Out(V.size());
  llvm::SmallVector<bool, 6> Copied(V.size(), false);
  int InferredIndex = -1;
  for (unsigned I = 0; I < V.size(); ++I) {
    if (V[I] == -1) {
      InferredIndex = I;
      continue;
    }
    if (V[I] < -1)
      return makeNodeError(N,
                           "invalid target shape entry " + llvm::Twine(V[I]));
    if (V[I] == 0 && !AllowZero) {
      // 0 copies the input dim at the same index.
      if (X->hasRank() && I >= X->getRank())
        return makeNodeError(N, "target shape entry 0 at index " +
                                    llvm::Twine(I) +
                                    " copies a dim beyond the input rank " +
                                    llvm::Twine(X->getRank()));
      Out[I] = X->hasRank() ? X->getDim(I) : Dim::getUnknown();
      Copied[I] = true;
      continue;
    }
    if (V[I] > MaxDimSize)
      return makeNodeError(N, "target shape entry " + llvm::Twine(V[I]) +
                                  " exceeds 2^62");
    Out[I] = Dim::getStatic(V[I]);
  }

  if (X->hasRank()) {
    // Copied dims appear on both sides and cancel; compare the rest.
    DimFactors In, Known;
    for (unsigned I = 0; I < X->getRank(); ++I)
      if (I >= Copied.size() || !Copied[I])
        if (llvm::Error E = addFactor(N, X->getDim(I), In))
          return E;
    for (unsigned I = 0; I < Out.size(); ++I)
      if (!Copied[I] && static_cast<int>(I) != InferredIndex)
        if (llvm::Error E = addFactor(N, Out[I], Known))
          return E;
    bool InStatic = In.Symbols.empty() && In.NumUnknown == 0;
    if (InferredIndex < 0) {
      if (InStatic && In.Static != Known.Static)
        return makeNodeError(N, "cannot reshape " + X->str() + " to " +
                                    listText(V));
    } else if (InStatic) {
      // Known.Static > 0: its entries are positive (a 0 is a copy, or with
      // allowzero excludes -1).
      if (In.Static % Known.Static != 0)
        return makeNodeError(N, "cannot reshape " + X->str() + " to " +
                                    listText(V));
      Out[InferredIndex] = Dim::getStatic(In.Static / Known.Static);
    } else if (In.Symbols.size() == 1 && In.NumUnknown == 0 &&
               In.Static == Known.Static) {
      // [N, 3, 4] -> [-1, 12]: the -1 is N.
      Out[InferredIndex] = Dim::getSymbol(In.Symbols.front());
    }
  }
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Flatten, Squeeze, Unsqueeze, Transpose
//===----------------------------------------------------------------------===//

llvm::Error detail::inferFlatten(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "input");
  ElementType Elt = X->getElementType();
  if (!X->hasRank()) {
    Results.push_back(makeType(Elt, {Dim(), Dim()}));
    return llvm::Error::success();
  }
  // The axis may equal the rank: [d0 * ... * dn-1, 1].
  int64_t Rank = X->getRank();
  int64_t Axis = N.getIntAttr("axis", 1);
  if (Axis < -Rank || Axis > Rank)
    return makeNodeError(N, "axis " + llvm::Twine(Axis) +
                                " is out of range for rank " +
                                llvm::Twine(Rank));
  if (Axis < 0)
    Axis += Rank;
  llvm::ArrayRef<Dim> Shape = X->getShape();
  auto Outer = multiplyDims(N, Shape.take_front(Axis));
  if (!Outer)
    return Outer.takeError();
  auto Inner = multiplyDims(N, Shape.drop_front(Axis));
  if (!Inner)
    return Inner.takeError();
  Results.push_back(makeType(Elt, {*Outer, *Inner}));
  return llvm::Error::success();
}

llvm::Error detail::inferSqueeze(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "data");
  ListOperand Axes;
  if (llvm::Error E = readIntList(N, 1, "axes", EltClass::I64, Axes))
    return E;
  ElementType Elt = X->getElementType();
  bool HasAxes = Axes.Present && !(Axes.Length && *Axes.Length == 0);
  if (!X->hasRank() || (HasAxes && !Axes.Ints)) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  DimList Out;
  if (!HasAxes) {
    // Without axes every dim of size 1 goes; a non-static dim might be 1.
    for (const Dim &D : X->getShape()) {
      if (!D.isStatic()) {
        Results.push_back(TensorType::getUnranked(Elt));
        return llvm::Error::success();
      }
      if (D.getSize() != 1)
        Out.push_back(D);
    }
    Results.push_back(makeType(Elt, Out));
    return llvm::Error::success();
  }
  llvm::SmallVector<unsigned, 6> Norm;
  if (llvm::Error E = normalizeAxes(N, *Axes.Ints, X->getRank(),
                                    /*AllowDuplicates=*/true, Norm))
    return E;
  for (unsigned I = 0; I < X->getRank(); ++I) {
    const Dim &D = X->getDim(I);
    if (!llvm::is_contained(Norm, I)) {
      Out.push_back(D);
      continue;
    }
    if (D.isStatic() && D.getSize() != 1)
      return makeNodeError(N, "cannot squeeze dim " + llvm::Twine(I) +
                                  " of size " + llvm::Twine(D.getSize()));
  }
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

llvm::Error detail::inferUnsqueeze(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "data");
  if (!N.hasOperand(1))
    return checkOperandPresent(N, 1, "axes");
  ListOperand Axes;
  if (llvm::Error E = readIntList(N, 1, "axes", EltClass::I64, Axes))
    return E;
  ElementType Elt = X->getElementType();
  if (!X->hasRank()) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  if (!Axes.Ints) {
    llvm::Optional<int64_t> Rank;
    if (Axes.Length)
      Rank = X->getRank() + *Axes.Length;
    Results.push_back(getUnknownDimsType(Elt, Rank));
    return llvm::Error::success();
  }
  unsigned Rank = X->getRank() + Axes.Ints->size();
  llvm::SmallVector<unsigned, 6> Norm;
  if (llvm::Error E = normalizeAxes(N, *Axes.Ints, Rank,
                                    /*AllowDuplicates=*/false, Norm))
    return E;
  DimList Out;
  unsigned Next = 0;
  for (unsigned I = 0; I < Rank; ++I)
    Out.push_back(llvm::is_contained(Norm, I) ? Dim::getStatic(1)
                                              : X->getDim(Next++));
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

llvm::Error detail::inferTranspose(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "data");
  ElementType Elt = X->getElementType();
  const Attribute *PermAttr = N.getAttr("perm");
  if (PermAttr && PermAttr->getKind() != AttrKind::Ints)
    return makeNodeError(N, "attribute 'perm' must be of kind ints");
  if (!X->hasRank() && !PermAttr) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  std::vector<int64_t> Perm;
  if (PermAttr) {
    Perm = PermAttr->getInts();
  } else {
    // Default: reverse the dims.
    for (unsigned I = X->getRank(); I > 0; --I)
      Perm.push_back(I - 1);
  }
  if (X->hasRank() && Perm.size() != X->getRank())
    return makeNodeError(
        N, "perm " + listText(Perm) + " has " + llvm::Twine(Perm.size()) +
               " entries, expected " + llvm::Twine(X->getRank()));
  if (!Layout::isPermutation(Perm))
    return makeNodeError(N, "perm " + listText(Perm) + " is not a permutation");
  DimList Out;
  for (int64_t P : Perm)
    Out.push_back(X->hasRank() ? X->getDim(P) : Dim::getUnknown());
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Shape, Size, ConstantOfShape, Constant
//===----------------------------------------------------------------------===//

llvm::Error detail::inferShape(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "data");
  if (!X->hasRank()) {
    Results.push_back(makeType(ElementType::I64, {Dim()}));
    return llvm::Error::success();
  }
  // start/end are clamped to [0, rank] after adding the rank to negatives.
  int64_t Rank = X->getRank();
  auto Clamp = [Rank](int64_t V) {
    if (V < 0)
      V += Rank;
    return std::min(std::max(V, int64_t(0)), Rank);
  };
  int64_t Start = Clamp(N.getIntAttr("start", 0));
  int64_t End = Clamp(N.getIntAttr("end", Rank));
  Results.push_back(makeType(
      ElementType::I64, {Dim::getStatic(std::max(End - Start, int64_t(0)))}));
  return llvm::Error::success();
}

llvm::Error detail::inferSize(const Node &N, ResultTypes &Results) {
  if (!getOperandType(N, 0))
    return checkOperandPresent(N, 0, "data");
  Results.push_back(makeType(ElementType::I64, {}));
  return llvm::Error::success();
}

/// The tensor of attribute 'value', or null when absent; an error when it
/// is not a tensor.
static llvm::Error getValueAttr(const Node &N, const TensorData *&Data) {
  Data = nullptr;
  const Attribute *A = N.getAttr("value");
  if (!A)
    return llvm::Error::success();
  if (A->getKind() != AttrKind::Tensor || !A->getTensor())
    return makeNodeError(N, "attribute 'value' must be a tensor");
  Data = A->getTensor().get();
  return llvm::Error::success();
}

llvm::Error detail::inferConstantOfShape(const Node &N, ResultTypes &Results) {
  if (!N.hasOperand(0))
    return checkOperandPresent(N, 0, "input");
  const TensorData *Value;
  if (llvm::Error E = getValueAttr(N, Value))
    return E;
  ElementType Elt = ElementType::F32;
  if (Value) {
    if (Value->getNumElements() != 1)
      return makeNodeError(N, "attribute 'value' must hold one element, got " +
                                  Value->getType().str());
    Elt = Value->getElementType();
  }
  ListOperand Shape;
  if (llvm::Error E = readIntList(N, 0, "input", EltClass::I64, Shape))
    return E;
  if (!Shape.Ints) {
    Results.push_back(getUnknownDimsType(Elt, Shape.Length));
    return llvm::Error::success();
  }
  DimList Out;
  for (unsigned I = 0; I < Shape.Ints->size(); ++I) {
    auto DOrErr =
        makeStaticDim(N, (*Shape.Ints)[I], "shape entry " + llvm::Twine(I));
    if (!DOrErr)
      return DOrErr.takeError();
    Out.push_back(*DOrErr);
  }
  if (auto Count = multiplyDims(N, Out); !Count)
    return Count.takeError();
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

llvm::Optional<int64_t> strider::getRangeLength(double Start, double Limit,
                                                double Delta) {
  if (Delta == 0 || !std::isfinite(Start) || !std::isfinite(Limit) ||
      !std::isfinite(Delta))
    return llvm::None;
  double Count = std::ceil((Limit - Start) / Delta);
  if (!(Count <= double(MaxDimSize)))
    return llvm::None;
  return Count > 0 ? int64_t(Count) : 0;
}

llvm::Optional<int64_t> strider::getRangeLength(int64_t Start, int64_t Limit,
                                                int64_t Delta) {
  if (Delta == 0)
    return llvm::None;
  __int128 Span = __int128(Limit) - Start, D = Delta;
  if ((Span > 0) != (D > 0) || Span == 0)
    return 0;
  if (Span < 0) {
    Span = -Span;
    D = -D;
  }
  __int128 Count = (Span + D - 1) / D;
  if (Count > MaxDimSize)
    return llvm::None;
  return int64_t(Count);
}

llvm::Error detail::inferRange(const Node &N, ResultTypes &Results) {
  static const char *const Names[] = {"start", "limit", "delta"};
  ElementType Elt = ElementType::Unknown;
  const TensorData *Data[3];
  for (unsigned I = 0; I < 3; ++I) {
    if (llvm::Error E = checkOperandPresent(N, I, Names[I]))
      return E;
    if (llvm::Error E = checkScalarOperand(N, I, Names[I], EltClass::Numeric,
                                           /*AllowSingleElement=*/true))
      return E;
    if (llvm::Error E = unifyElementTypes(
            N, Elt, N.getOperand(I)->getType().getElementType()))
      return E;
    Data[I] = N.getOperand(I)->getConstantData();
    if (Data[I] && Data[I]->getNumElements() != 1)
      return makeNodeError(N, "input '" + llvm::Twine(Names[I]) +
                                  "' must hold one element");
  }
  if (Elt == ElementType::Bool)
    return makeNodeError(N, "Range of bool is not defined");
  if (!Data[0] || !Data[1] || !Data[2]) {
    Results.push_back(makeType(Elt, {Dim::getUnknown()}));
    return llvm::Error::success();
  }
  llvm::Optional<int64_t> Length =
      isFloatingPoint(Elt)
          ? getRangeLength(Data[0]->getDouble(0), Data[1]->getDouble(0),
                           Data[2]->getDouble(0))
          : getRangeLength(Data[0]->getInt(0), Data[1]->getInt(0),
                           Data[2]->getInt(0));
  if (!Length)
    return makeNodeError(N, "delta is 0, a bound is not finite, or the range "
                            "has more than 2^62 elements");
  Results.push_back(makeType(Elt, {Dim::getStatic(*Length)}));
  return llvm::Error::success();
}

llvm::Error detail::inferConstant(const Node &N, ResultTypes &Results) {
  const TensorData *Value;
  if (llvm::Error E = getValueAttr(N, Value))
    return E;
  if (!Value)
    return makeNodeError(N, "missing tensor attribute 'value'");
  Results.push_back(getLogicalType(Value->getType()));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Gather, relayout
//===----------------------------------------------------------------------===//

llvm::Error detail::inferGather(const Node &N, ResultTypes &Results) {
  const TensorType *Data, *Indices;
  if (llvm::Error E = getRequiredOperands(
          N, {{0, "data", &Data}, {1, "indices", &Indices}}))
    return E;
  if (llvm::Error E = checkElementType(N, Indices->getElementType(), "indices",
                                       EltClass::Index))
    return E;
  if (llvm::Error E = checkMinRank(N, *Data, "data", 1))
    return E;
  ElementType Elt = Data->getElementType();
  if (!Data->hasRank() || !Indices->hasRank()) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  auto Axis = normalizeAxis(N, N.getIntAttr("axis", 0), Data->getRank());
  if (!Axis)
    return Axis.takeError();
  // data[:axis] + indices.shape + data[axis+1:]
  llvm::ArrayRef<Dim> D = Data->getShape();
  DimList Out(D.begin(), D.begin() + *Axis);
  Out.append(Indices->getShape().begin(), Indices->getShape().end());
  Out.append(D.begin() + *Axis + 1, D.end());
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

/// GatherElements' indices, or ScatterElements' indices and updates: of the
/// data's rank, each dim within the data's except along the axis (checked
/// where static), the axis a valid one.
static llvm::Error checkElementsOperands(const Node &N, const TensorType &Data,
                                         const TensorType &Indices) {
  if (llvm::Error E = checkElementType(N, Indices.getElementType(), "indices",
                                       EltClass::Index))
    return E;
  if (llvm::Error E = checkMinRank(N, Data, "data", 1))
    return E;
  if (!Data.hasRank() || !Indices.hasRank())
    return llvm::Error::success();
  if (Indices.getRank() != Data.getRank())
    return makeNodeError(
        N, "indices of rank " + llvm::Twine(Indices.getRank()) +
               " for data of rank " + llvm::Twine(Data.getRank()) +
               " (they must be equal)");
  auto Axis = normalizeAxis(N, N.getIntAttr("axis", 0), Data.getRank());
  if (!Axis)
    return Axis.takeError();
  for (unsigned I = 0; I < Data.getRank(); ++I) {
    const Dim &D = Data.getDim(I), &X = Indices.getDim(I);
    if (I != *Axis && D.isStatic() && X.isStatic() && X.getSize() > D.getSize())
      return makeNodeError(
          N, "indices dim " + llvm::Twine(I) + " (" + llvm::Twine(X.getSize()) +
                 ") exceeds the data's (" + llvm::Twine(D.getSize()) + ")");
  }
  return llvm::Error::success();
}

llvm::Error detail::inferGatherElements(const Node &N, ResultTypes &Results) {
  const TensorType *Data, *Indices;
  if (llvm::Error E = getRequiredOperands(
          N, {{0, "data", &Data}, {1, "indices", &Indices}}))
    return E;
  if (llvm::Error E = checkElementsOperands(N, *Data, *Indices))
    return E;
  // The result has the indices' shape.
  if (!Indices->hasRank()) {
    Results.push_back(TensorType::getUnranked(Data->getElementType()));
    return llvm::Error::success();
  }
  Results.push_back(
      makeType(Data->getElementType(), DimList(Indices->getShape().begin(),
                                               Indices->getShape().end())));
  return llvm::Error::success();
}

/// A scatter's reduction: none, add, mul, max or min.
static llvm::Error checkScatterReduction(const Node &N) {
  const std::string Reduction = N.getStringAttr("reduction", "none");
  static const llvm::StringRef Reductions[] = {"none", "add", "mul", "max",
                                               "min"};
  if (!llvm::is_contained(Reductions, Reduction))
    return makeNodeError(N, "unknown reduction '" + Reduction +
                                "' (none, add, mul, max or min)");
  return llvm::Error::success();
}

llvm::Error detail::inferScatterElements(const Node &N, ResultTypes &Results) {
  const TensorType *Data, *Indices, *Updates;
  if (llvm::Error E = getRequiredOperands(N, {{0, "data", &Data},
                                              {1, "indices", &Indices},
                                              {2, "updates", &Updates}}))
    return E;
  if (llvm::Error E = checkElementsOperands(N, *Data, *Indices))
    return E;
  ElementType Elt = Data->getElementType();
  if (llvm::Error E = unifyElementTypes(N, Elt, Updates->getElementType()))
    return E;
  if (llvm::Error E = checkScatterReduction(N))
    return E;
  if (Indices->hasRank() && Updates->hasRank()) {
    if (Updates->getRank() != Indices->getRank())
      return makeNodeError(
          N, "updates of rank " + llvm::Twine(Updates->getRank()) +
                 " for indices of rank " + llvm::Twine(Indices->getRank()));
    for (unsigned I = 0; I < Indices->getRank(); ++I) {
      Dim Merged;
      if (!mergeDims(Indices->getDim(I), Updates->getDim(I), Merged))
        return makeNodeError(N, "updates " + Updates->str() +
                                    " do not have the shape of indices " +
                                    Indices->str());
    }
  }
  // The result is the data, updated.
  Results.push_back(Data->hasRank()
                        ? makeType(Elt, DimList(Data->getShape().begin(),
                                                Data->getShape().end()))
                        : TensorType::getUnranked(Elt));
  return llvm::Error::success();
}

/// The static length of index tuples (the indices' last dim) of a
/// GatherND or ScatterND into data of rank \p DataRank after \p Batch
/// shared dims; 0 while it is not known.
static llvm::Expected<int64_t> getTupleLength(const Node &N,
                                              const TensorType &Indices,
                                              unsigned DataRank,
                                              int64_t Batch) {
  if (!Indices.hasRank())
    return 0;
  if (Indices.getRank() < 1 + uint64_t(Batch))
    return makeNodeError(N, "indices " + Indices.str() + " need rank " +
                                llvm::Twine(Batch + 1) + " or more");
  const Dim &Last = Indices.getDim(Indices.getRank() - 1);
  if (!Last.isStatic())
    return 0;
  const int64_t K = Last.getSize();
  if (K < 1 || K > int64_t(DataRank) - Batch)
    return makeNodeError(
        N, "index tuples of length " + llvm::Twine(K) + " for data of rank " +
               llvm::Twine(DataRank) +
               (Batch ? " after " + llvm::Twine(Batch) + " batch dims"
                      : llvm::Twine("")));
  return K;
}

llvm::Error detail::inferGatherND(const Node &N, ResultTypes &Results) {
  const TensorType *Data, *Indices;
  if (llvm::Error E = getRequiredOperands(
          N, {{0, "data", &Data}, {1, "indices", &Indices}}))
    return E;
  if (llvm::Error E = checkElementType(N, Indices->getElementType(), "indices",
                                       EltClass::I64))
    return E;
  if (llvm::Error E = checkMinRank(N, *Data, "data", 1))
    return E;
  const int64_t Batch = N.getIntAttr("batch_dims", 0);
  if (Batch < 0)
    return makeNodeError(N, "batch_dims is negative");
  const ElementType Elt = Data->getElementType();
  if (!Data->hasRank() || !Indices->hasRank()) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  if (Batch >= int64_t(Data->getRank()))
    return makeNodeError(N, "batch_dims " + llvm::Twine(Batch) +
                                " for data of rank " +
                                llvm::Twine(Data->getRank()));
  auto K = getTupleLength(N, *Indices, Data->getRank(), Batch);
  if (!K)
    return K.takeError();
  DimList Out;
  for (unsigned I = 0; I < unsigned(Batch); ++I) {
    Dim Merged;
    if (!mergeDims(Data->getDim(I), Indices->getDim(I), Merged))
      return makeNodeError(N, "batch dim " + llvm::Twine(I) + " of data " +
                                  Data->str() + " and indices " +
                                  Indices->str() + " differ");
    Out.push_back(Merged);
  }
  Out.append(Indices->getShape().begin() + Batch,
             Indices->getShape().end() - 1);
  if (*K == 0) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  Out.append(Data->getShape().begin() + Batch + *K, Data->getShape().end());
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

llvm::Error detail::inferScatterND(const Node &N, ResultTypes &Results) {
  const TensorType *Data, *Indices, *Updates;
  if (llvm::Error E = getRequiredOperands(N, {{0, "data", &Data},
                                              {1, "indices", &Indices},
                                              {2, "updates", &Updates}}))
    return E;
  if (llvm::Error E = checkElementType(N, Indices->getElementType(), "indices",
                                       EltClass::I64))
    return E;
  if (llvm::Error E = checkMinRank(N, *Data, "data", 1))
    return E;
  ElementType Elt = Data->getElementType();
  if (llvm::Error E = unifyElementTypes(N, Elt, Updates->getElementType()))
    return E;
  if (llvm::Error E = checkScatterReduction(N))
    return E;
  if (Data->hasRank() && Indices->hasRank()) {
    auto K = getTupleLength(N, *Indices, Data->getRank(), 0);
    if (!K)
      return K.takeError();
    // updates: the indices' shape without its last dim, then the data's
    // dims after the tuple's.
    if (*K && Updates->hasRank()) {
      DimList Want(Indices->getShape().begin(), Indices->getShape().end() - 1);
      Want.append(Data->getShape().begin() + *K, Data->getShape().end());
      bool Fits = Updates->getRank() == Want.size();
      for (unsigned I = 0; Fits && I < Want.size(); ++I) {
        Dim Merged;
        Fits = mergeDims(Want[I], Updates->getDim(I), Merged);
      }
      if (!Fits)
        return makeNodeError(N, "updates " + Updates->str() + " for data " +
                                    Data->str() + " and indices " +
                                    Indices->str() + " (expected " +
                                    makeType(Elt, Want).str() + ")");
    }
  }
  Results.push_back(Data->hasRank()
                        ? makeType(Elt, DimList(Data->getShape().begin(),
                                                Data->getShape().end()))
                        : TensorType::getUnranked(Elt));
  return llvm::Error::success();
}

llvm::Error detail::inferRelayout(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "input");
  if (!X->hasRank()) {
    Results.push_back(*X);
    return llvm::Error::success();
  }
  // The result's layout is the op's meaning; its logical type is X's.
  Layout L;
  if (N.hasResult(0))
    L = N.getResult(0)->getType().getLayout();
  if (!L.isValidForRank(X->getRank())) {
    unsigned LRank = L.getStoredPermutation().size();
    return makeNodeError(N, "result layout " + L.getName(LRank) +
                                " does not fit the operand's rank " +
                                llvm::Twine(X->getRank()));
  }
  Results.push_back(TensorType(X->getElementType(), X->getShape(), L));
  return llvm::Error::success();
}
