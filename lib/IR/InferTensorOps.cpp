//===- InferTensorOps.cpp - Shape functions of axis-aware ops -------------===//
//
// Concat, Split, Slice, Pad, Softmax, LogSoftmax, the reductions, Gemm,
// MatMul and Einsum.
//
//===----------------------------------------------------------------------===//

#include "InferFunctions.h"

#include "strider/IR/Einsum.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace strider;
using namespace strider::detail;

static std::string dimText(const Dim &D) {
  if (D.isStatic())
    return std::to_string(D.getSize());
  if (D.isSymbol())
    return D.getSymbol().str();
  return "?";
}

//===----------------------------------------------------------------------===//
// Concat, Split
//===----------------------------------------------------------------------===//

llvm::Error detail::inferConcat(const Node &N, ResultTypes &Results) {
  if (N.getNumOperands() == 0)
    return checkOperandPresent(N, 0, "inputs");
  const Attribute *AxisAttr = N.getAttr("axis");
  if (!AxisAttr || AxisAttr->getKind() != AttrKind::Int)
    return makeNodeError(N, "missing int attribute 'axis'");
  ElementType Elt = ElementType::Unknown;
  const TensorType *First = nullptr;
  bool AllRanked = true;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const TensorType *T = getOperandType(N, I);
    if (!T)
      return makeNodeError(N, "missing required operand " + llvm::Twine(I));
    if (llvm::Error E = unifyElementTypes(N, Elt, T->getElementType()))
      return E;
    if (!T->hasRank()) {
      AllRanked = false;
      continue;
    }
    if (!First)
      First = T;
    else if (T->getRank() != First->getRank())
      return makeNodeError(N, "operand " + llvm::Twine(I) + " has rank " +
                                  llvm::Twine(T->getRank()) + ", expected " +
                                  llvm::Twine(First->getRank()));
  }
  if (!First) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  unsigned Rank = First->getRank();
  auto Axis = normalizeAxis(N, AxisAttr->getInt(), Rank);
  if (!Axis)
    return Axis.takeError();
  DimList Out(First->getShape().begin(), First->getShape().end());
  // The concatenated dim: a sum of static sizes, or the only non-static
  // size when the others are 0.
  int64_t StaticSum = 0;
  const Dim *NonStatic = nullptr;
  unsigned NumNonStatic = AllRanked ? 0 : 1;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const TensorType &T = *getOperandType(N, I);
    if (!T.hasRank())
      continue;
    for (unsigned D = 0; D < Rank; ++D) {
      if (D == *Axis)
        continue;
      if (!mergeDims(Out[D], T.getDim(D), Out[D]))
        return makeNodeError(N, "dim " + llvm::Twine(D) + " of operand " +
                                    llvm::Twine(I) + " is " +
                                    dimText(T.getDim(D)) + ", expected " +
                                    dimText(Out[D]));
    }
    const Dim &A = T.getDim(*Axis);
    if (!A.isStatic()) {
      NonStatic = &A;
      ++NumNonStatic;
    } else if (llvm::AddOverflow(StaticSum, A.getSize(), StaticSum) ||
               StaticSum > MaxDimSize) {
      return makeNodeError(N, "concatenated size exceeds 2^62");
    }
  }
  if (NumNonStatic == 0)
    Out[*Axis] = Dim::getStatic(StaticSum);
  else if (NumNonStatic == 1 && NonStatic && StaticSum == 0)
    Out[*Axis] = *NonStatic;
  else
    Out[*Axis] = Dim::getUnknown();
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

llvm::Error detail::inferSplit(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "input");
  ListOperand Split;
  if (llvm::Error E = readIntList(N, 1, "split", EltClass::I64, Split))
    return E;
  unsigned NumResults = N.getNumResults();
  const Attribute *NumOutputs = N.getAttr("num_outputs");
  if (NumOutputs) {
    if (NumOutputs->getKind() != AttrKind::Int)
      return makeNodeError(N, "attribute 'num_outputs' must be of kind int");
    if (Split.Present)
      return makeNodeError(N, "input 'split' and attribute 'num_outputs' "
                              "cannot both be given");
    if (NumOutputs->getInt() != NumResults)
      return makeNodeError(
          N, "attribute 'num_outputs' is " + llvm::Twine(NumOutputs->getInt()) +
                 " but the op has " + llvm::Twine(NumResults) + " results");
  }
  if (NumResults == 0)
    return llvm::Error::success();
  ElementType Elt = X->getElementType();
  if (!X->hasRank()) {
    Results.append(NumResults, TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  auto Axis = normalizeAxis(N, N.getIntAttr("axis", 0), X->getRank());
  if (!Axis)
    return Axis.takeError();
  const Dim &In = X->getDim(*Axis);
  DimList Sizes(NumResults, Dim::getUnknown());
  if (Split.Present) {
    if (Split.Length && *Split.Length != NumResults)
      return makeNodeError(N, "input 'split' has " +
                                  llvm::Twine(*Split.Length) + " entries for " +
                                  llvm::Twine(NumResults) + " results");
    if (Split.Ints) {
      int64_t Sum = 0;
      for (unsigned I = 0; I < NumResults; ++I) {
        auto D =
            makeStaticDim(N, (*Split.Ints)[I], "split entry " + llvm::Twine(I));
        if (!D)
          return D.takeError();
        Sizes[I] = *D;
        Sum += D->getSize(); // At most 2^62 each: no overflow.
        if (Sum > MaxDimSize)
          return makeNodeError(N, "split sizes exceed 2^62");
      }
      if (In.isStatic() && In.getSize() != Sum)
        return makeNodeError(N, "split sizes sum to " + llvm::Twine(Sum) +
                                    ", expected " + llvm::Twine(In.getSize()));
    }
  } else if (NumResults == 1) {
    Sizes[0] = In;
  } else if (In.isStatic()) {
    int64_t Size = In.getSize();
    int64_t Chunk = Size / NumResults;
    if (Size % NumResults != 0) {
      // Without num_outputs the split must be even; with it the last chunk
      // is smaller.
      if (!NumOutputs)
        return makeNodeError(N, "cannot split dim of size " +
                                    llvm::Twine(Size) + " evenly into " +
                                    llvm::Twine(NumResults) + " outputs");
      ++Chunk;
    }
    int64_t Last;
    if (llvm::MulOverflow(Chunk, int64_t(NumResults - 1), Last) ||
        (Last = Size - Last) < 0)
      return makeNodeError(N, "cannot split dim of size " + llvm::Twine(Size) +
                                  " into " + llvm::Twine(NumResults) +
                                  " outputs");
    Sizes.assign(NumResults, Dim::getStatic(Chunk));
    Sizes.back() = Dim::getStatic(Last);
  }
  for (unsigned I = 0; I < NumResults; ++I) {
    DimList Shape(X->getShape().begin(), X->getShape().end());
    Shape[*Axis] = Sizes[I];
    Results.push_back(makeType(Elt, Shape));
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Slice, Pad
//===----------------------------------------------------------------------===//

/// Length of a slice [Start, End) with step \p Step (non-zero) over a dim
/// of static size \p Size, with ONNX's clamping of out-of-range bounds.
static int64_t getSliceLength(int64_t Size, int64_t Start, int64_t End,
                              int64_t Step) {
  // Negative bounds count from the end (no overflow: Size >= 0).
  if (Start < 0)
    Start += Size;
  if (End < 0)
    End += Size;
  if (Step > 0) {
    Start = std::min(std::max(Start, int64_t(0)), Size);
    End = std::min(std::max(End, int64_t(0)), Size);
    if (End <= Start)
      return 0;
    return (End - Start - 1) / Step + 1;
  }
  Start = std::min(std::max(Start, int64_t(0)), Size - 1);
  End = std::min(std::max(End, int64_t(-1)), Size - 1);
  if (Start <= End)
    return 0;
  // |Step| may not fit in int64 (INT64_MIN).
  uint64_t AbsStep = uint64_t(0) - uint64_t(Step);
  return int64_t(uint64_t(Start - End - 1) / AbsStep + 1);
}

/// Whether a slice keeps the whole dim whatever its size: [0, >= 2^62)
/// with step 1, or a full reversal with step -1.
static bool isFullSlice(int64_t Start, int64_t End, int64_t Step) {
  if (Step == 1)
    return Start == 0 && End >= MaxDimSize;
  if (Step == -1)
    return (Start == -1 || Start >= MaxDimSize) && End <= -MaxDimSize - 1;
  return false;
}

llvm::Error detail::inferSlice(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "data");
  if (llvm::Error E = checkOperandPresent(N, 1, "starts"))
    return E;
  if (llvm::Error E = checkOperandPresent(N, 2, "ends"))
    return E;
  ListOperand Starts, Ends, Axes, Steps;
  if (llvm::Error E = readIntList(N, 1, "starts", EltClass::Index, Starts))
    return E;
  if (llvm::Error E = readIntList(N, 2, "ends", EltClass::Index, Ends))
    return E;
  if (llvm::Error E = readIntList(N, 3, "axes", EltClass::Index, Axes))
    return E;
  if (llvm::Error E = readIntList(N, 4, "steps", EltClass::Index, Steps))
    return E;
  // Every list has one entry per sliced axis.
  llvm::Optional<int64_t> Count;
  for (auto [L, Name] :
       {std::make_pair(&Starts, "starts"), std::make_pair(&Ends, "ends"),
        std::make_pair(&Axes, "axes"), std::make_pair(&Steps, "steps")}) {
    if (!L->Present || !L->Length)
      continue;
    if (Count && *Count != *L->Length)
      return makeNodeError(N, "input '" + llvm::Twine(Name) + "' has " +
                                  llvm::Twine(*L->Length) +
                                  " entries, expected " + llvm::Twine(*Count));
    Count = *L->Length;
  }
  if (Steps.Ints && llvm::is_contained(*Steps.Ints, 0))
    return makeNodeError(N, "slice step cannot be 0");
  ElementType Elt = X->getElementType();
  if (!X->hasRank()) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  unsigned Rank = X->getRank();
  DimList Out(X->getShape().begin(), X->getShape().end());
  // Which axes are sliced: unknown when the axes (or, by default, their
  // count) are not known; then every dim may change.
  llvm::SmallVector<unsigned, 6> SlicedAxes;
  if (Axes.Present && !Axes.Ints) {
    Out.assign(Rank, Dim::getUnknown());
  } else if (Axes.Ints) {
    if (llvm::Error E = normalizeAxes(N, *Axes.Ints, Rank,
                                      /*AllowDuplicates=*/false, SlicedAxes))
      return E;
  } else if (Count) {
    if (*Count > Rank)
      return makeNodeError(N, "slices " + llvm::Twine(*Count) +
                                  " axes of a rank-" + llvm::Twine(Rank) +
                                  " input");
    for (unsigned I = 0; I < *Count; ++I)
      SlicedAxes.push_back(I);
  } else {
    Out.assign(Rank, Dim::getUnknown());
  }
  bool Known = Starts.Ints && Ends.Ints && (!Steps.Present || Steps.Ints);
  for (unsigned K = 0; K < SlicedAxes.size(); ++K) {
    unsigned A = SlicedAxes[K];
    if (!Known) {
      Out[A] = Dim::getUnknown();
      continue;
    }
    int64_t Start = (*Starts.Ints)[K], End = (*Ends.Ints)[K];
    int64_t Step = Steps.Ints ? (*Steps.Ints)[K] : 1;
    const Dim &D = X->getDim(A);
    if (D.isStatic())
      Out[A] = Dim::getStatic(getSliceLength(D.getSize(), Start, End, Step));
    else if (!isFullSlice(Start, End, Step))
      Out[A] = Dim::getUnknown();
  }
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

llvm::Error detail::inferPad(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "data");
  if (llvm::Error E = checkOperandPresent(N, 1, "pads"))
    return E;
  std::string Mode = N.getStringAttr("mode", "constant");
  if (Mode != "constant" && Mode != "reflect" && Mode != "edge" &&
      Mode != "wrap")
    return makeNodeError(N, "unknown mode '" + Mode + "'");
  ListOperand Pads, Axes;
  if (llvm::Error E = readIntList(N, 1, "pads", EltClass::I64, Pads))
    return E;
  if (llvm::Error E = readIntList(N, 3, "axes", EltClass::Index, Axes))
    return E;
  if (llvm::Error E = checkScalarOperand(N, 2, "constant_value", EltClass::Any,
                                         /*AllowSingleElement=*/true))
    return E;
  ElementType Elt = X->getElementType();
  if (const TensorType *CV = getOperandType(N, 2))
    if (llvm::Error E = unifyElementTypes(N, Elt, CV->getElementType()))
      return E;
  if (Pads.Length && Axes.Length && *Pads.Length != 2 * *Axes.Length)
    return makeNodeError(N, "input 'pads' has " + llvm::Twine(*Pads.Length) +
                                " entries, expected " +
                                llvm::Twine(2 * *Axes.Length));
  if (!X->hasRank()) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  unsigned Rank = X->getRank();
  DimList Out(X->getShape().begin(), X->getShape().end());
  if (Axes.Present && !Axes.Ints) {
    Results.push_back(makeType(Elt, DimList(Rank, Dim::getUnknown())));
    return llvm::Error::success();
  }
  llvm::SmallVector<unsigned, 6> PadAxes;
  if (Axes.Ints) {
    if (llvm::Error E = normalizeAxes(N, *Axes.Ints, Rank,
                                      /*AllowDuplicates=*/false, PadAxes))
      return E;
  } else {
    for (unsigned I = 0; I < Rank; ++I)
      PadAxes.push_back(I);
  }
  unsigned NumAxes = PadAxes.size();
  if (Pads.Length && *Pads.Length != 2 * NumAxes)
    return makeNodeError(N, "input 'pads' has " + llvm::Twine(*Pads.Length) +
                                " entries, expected " +
                                llvm::Twine(2 * NumAxes));
  for (unsigned K = 0; K < NumAxes; ++K) {
    unsigned A = PadAxes[K];
    if (!Pads.Ints) {
      Out[A] = Dim::getUnknown();
      continue;
    }
    int64_t Begin = (*Pads.Ints)[K], End = (*Pads.Ints)[K + NumAxes];
    int64_t Total;
    if (llvm::AddOverflow(Begin, End, Total))
      return makeNodeError(N, "pads of dim " + llvm::Twine(A) + " overflow");
    const Dim &D = X->getDim(A);
    if (!D.isStatic()) {
      if (Total != 0)
        Out[A] = Dim::getUnknown();
      continue;
    }
    int64_t Size;
    if (llvm::AddOverflow(D.getSize(), Total, Size))
      return makeNodeError(N, "output size of dim " + llvm::Twine(A) +
                                  " exceeds 2^62");
    auto DOrErr =
        makeStaticDim(N, Size, "output size of dim " + llvm::Twine(A));
    if (!DOrErr)
      return DOrErr.takeError();
    Out[A] = *DOrErr;
  }
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Softmax, reductions
//===----------------------------------------------------------------------===//

static llvm::Error inferSoftmaxLike(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "input");
  if (llvm::Error E =
          checkElementType(N, X->getElementType(), "input", EltClass::Float))
    return E;
  if (X->hasRank())
    if (auto Axis = normalizeAxis(N, N.getIntAttr("axis", -1), X->getRank());
        !Axis)
      return Axis.takeError();
  Results.push_back(getLogicalType(*X));
  return llvm::Error::success();
}

/// Values keep X's type with the axis dim K (when K is a constant), the
/// indices the same shape in i64.
llvm::Error detail::inferTopK(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "X");
  if (llvm::Error E = checkOperandPresent(N, 1, "K"))
    return E;
  if (llvm::Error E =
          checkElementType(N, X->getElementType(), "X", EltClass::Numeric))
    return E;
  ListOperand K;
  if (llvm::Error E = readIntList(N, 1, "K", EltClass::I64, K))
    return E;
  if (K.Length && *K.Length != 1)
    return makeNodeError(N, "input 'K' must hold one element, got " +
                                llvm::Twine(*K.Length));
  if (!X->hasRank()) {
    Results.push_back(TensorType::getUnranked(X->getElementType()));
    Results.push_back(TensorType::getUnranked(ElementType::I64));
    return llvm::Error::success();
  }
  auto Axis = normalizeAxis(N, N.getIntAttr("axis", -1), X->getRank());
  if (!Axis)
    return Axis.takeError();
  DimList Shape(X->getShape().begin(), X->getShape().end());
  Shape[*Axis] = Dim::getUnknown();
  if (K.Ints) {
    int64_t KV = (*K.Ints)[0];
    const Dim &D = X->getDim(*Axis);
    if (KV < 0 || (D.isStatic() && KV > D.getSize()))
      return makeNodeError(
          N,
          "K = " + llvm::Twine(KV) + " is out of range for an axis of size " +
              (D.isStatic() ? std::to_string(D.getSize()) : std::string("?")));
    Shape[*Axis] = Dim::getStatic(KV);
  }
  Results.push_back(makeType(X->getElementType(), Shape));
  Results.push_back(makeType(ElementType::I64, Shape));
  return llvm::Error::success();
}

llvm::Error detail::inferSTFT(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "signal");
  if (llvm::Error E = checkOperandPresent(N, 1, "frame_step"))
    return E;
  if (llvm::Error E =
          checkElementType(N, X->getElementType(), "signal", EltClass::Float))
    return E;
  for (unsigned I : {1u, 3u})
    if (llvm::Error E =
            checkScalarOperand(N, I, I == 1 ? "frame_step" : "frame_length",
                               EltClass::Index, /*AllowSingleElement=*/true))
      return E;
  const ElementType Elt = X->getElementType();
  // [batch, length] is a real signal too (ONNX Runtime reads it so, and
  // exporters rely on it).
  if (X->hasRank() && X->getRank() != 3 && X->getRank() != 2)
    return makeNodeError(N, "signal " + X->str() +
                                " must be [batch, length, 1 or 2]");
  if (X->hasRank() && X->getRank() == 3 && X->getDim(2).isStatic() &&
      X->getDim(2).getSize() != 1 && X->getDim(2).getSize() != 2)
    return makeNodeError(N, "signal " + X->str() +
                                " must be real ([..., 1]) or complex "
                                "([..., 2])");
  // The frame length: frame_length's value, else the window's length.
  Dim Length = Dim::getUnknown();
  if (const TensorType *W = getOperandType(N, 2)) {
    if (llvm::Error E =
            checkElementType(N, W->getElementType(), "window", EltClass::Float))
      return E;
    if (W->hasRank() && W->getRank() != 1)
      return makeNodeError(N, "window " + W->str() + " must be 1-D");
    if (W->hasRank())
      Length = W->getDim(0);
  }
  if (N.hasOperand(3)) {
    if (const TensorData *D = N.getOperand(3)->getConstantData()) {
      const int64_t L = D->getInt(0);
      if (L < 1)
        return makeNodeError(N, "frame_length " + llvm::Twine(L) +
                                    " must be positive");
      if (Length.isStatic() && Length.getSize() != L)
        return makeNodeError(N, "frame_length " + llvm::Twine(L) +
                                    " differs from the window's length " +
                                    llvm::Twine(Length.getSize()));
      Length = Dim::getStatic(L);
    } else {
      Length = Dim::getUnknown();
    }
  } else if (!N.hasOperand(2)) {
    return makeNodeError(N, "neither a window nor a frame_length gives the "
                            "frame length");
  }
  if (!X->hasRank()) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  Dim Frames = Dim::getUnknown(), Bins = Dim::getUnknown();
  const TensorData *Step = N.getOperand(1)->getConstantData();
  if (Step && Step->getInt(0) < 1)
    return makeNodeError(N, "frame_step " + llvm::Twine(Step->getInt(0)) +
                                " must be positive");
  if (Length.isStatic()) {
    const int64_t L = Length.getSize();
    const bool OneSided = N.getIntAttr("onesided", 1) != 0;
    Bins = Dim::getStatic(OneSided ? L / 2 + 1 : L);
    const Dim &S = X->getDim(1);
    if (Step && S.isStatic()) {
      if (S.getSize() < L)
        return makeNodeError(N, "signal of length " + llvm::Twine(S.getSize()) +
                                    " is shorter than a frame (" +
                                    llvm::Twine(L) + ")");
      Frames = Dim::getStatic((S.getSize() - L) / Step->getInt(0) + 1);
    }
  }
  Results.push_back(
      makeType(Elt, {X->getDim(0), Frames, Bins, Dim::getStatic(2)}));
  return llvm::Error::success();
}

llvm::Error detail::inferSoftmax(const Node &N, ResultTypes &Results) {
  return inferSoftmaxLike(N, Results);
}

llvm::Error detail::inferLogSoftmax(const Node &N, ResultTypes &Results) {
  return inferSoftmaxLike(N, Results);
}

static llvm::Error inferReduce(const Node &N, ResultTypes &Results,
                               EltClass Class) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "data");
  if (llvm::Error E = checkElementType(N, X->getElementType(), "data", Class))
    return E;
  ListOperand Axes;
  if (llvm::Error E = readIntList(N, 1, "axes", EltClass::I64, Axes))
    return E;
  bool KeepDims = N.getIntAttr("keepdims", 1) != 0;
  bool NoopWithEmptyAxes = N.getIntAttr("noop_with_empty_axes", 0) != 0;
  ElementType Elt = X->getElementType();
  bool EmptyAxes = !Axes.Present || (Axes.Length && *Axes.Length == 0);
  if (EmptyAxes && NoopWithEmptyAxes) {
    Results.push_back(getLogicalType(*X));
    return llvm::Error::success();
  }
  if (!X->hasRank()) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  unsigned Rank = X->getRank();
  llvm::SmallVector<unsigned, 6> Reduced;
  if (EmptyAxes) {
    for (unsigned I = 0; I < Rank; ++I)
      Reduced.push_back(I);
  } else if (!Axes.Ints) {
    // Unknown axes: a kept dim is 1 if reduced, so only 1s stay known.
    if (!KeepDims) {
      Results.push_back(TensorType::getUnranked(Elt));
      return llvm::Error::success();
    }
    DimList Out;
    for (const Dim &D : X->getShape())
      Out.push_back(D.isStatic() && D.getSize() == 1 ? D : Dim::getUnknown());
    Results.push_back(makeType(Elt, Out));
    return llvm::Error::success();
  } else if (llvm::Error E = normalizeAxes(N, *Axes.Ints, Rank,
                                           /*AllowDuplicates=*/true, Reduced)) {
    return E;
  }
  DimList Out;
  for (unsigned I = 0; I < Rank; ++I) {
    if (!llvm::is_contained(Reduced, I))
      Out.push_back(X->getDim(I));
    else if (KeepDims)
      Out.push_back(Dim::getStatic(1));
  }
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

llvm::Error detail::inferReduceMean(const Node &N, ResultTypes &Results) {
  return inferReduce(N, Results, EltClass::Numeric);
}

llvm::Error detail::inferReduceMax(const Node &N, ResultTypes &Results) {
  return inferReduce(N, Results, EltClass::Any);
}

llvm::Error detail::inferReduceSum(const Node &N, ResultTypes &Results) {
  return inferReduce(N, Results, EltClass::Numeric);
}

llvm::Error detail::inferReduceMin(const Node &N, ResultTypes &Results) {
  return inferReduce(N, Results, EltClass::Any);
}

llvm::Error detail::inferReduceProd(const Node &N, ResultTypes &Results) {
  return inferReduce(N, Results, EltClass::Numeric);
}

llvm::Error detail::inferReduceL2(const Node &N, ResultTypes &Results) {
  return inferReduce(N, Results, EltClass::Numeric);
}

llvm::Error detail::inferReduceSumSquare(const Node &N, ResultTypes &Results) {
  return inferReduce(N, Results, EltClass::Numeric);
}

/// ArgMax and ArgMin: i64 indices along one axis, kept as 1 under keepdims.
static llvm::Error inferArgReduce(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "data");
  if (llvm::Error E =
          checkElementType(N, X->getElementType(), "data", EltClass::Numeric))
    return E;
  if (!X->hasRank()) {
    Results.push_back(TensorType::getUnranked(ElementType::I64));
    return llvm::Error::success();
  }
  auto Axis = normalizeAxis(N, N.getIntAttr("axis", 0), X->getRank());
  if (!Axis)
    return Axis.takeError();
  bool KeepDims = N.getIntAttr("keepdims", 1) != 0;
  DimList Out;
  for (unsigned I = 0; I < X->getRank(); ++I) {
    if (I != *Axis)
      Out.push_back(X->getDim(I));
    else if (KeepDims)
      Out.push_back(Dim::getStatic(1));
  }
  Results.push_back(makeType(ElementType::I64, Out));
  return llvm::Error::success();
}

llvm::Error detail::inferArgMax(const Node &N, ResultTypes &Results) {
  return inferArgReduce(N, Results);
}

llvm::Error detail::inferArgMin(const Node &N, ResultTypes &Results) {
  return inferArgReduce(N, Results);
}

//===----------------------------------------------------------------------===//
// Gemm, MatMul, Einsum
//===----------------------------------------------------------------------===//

/// Check that the contracted dims \p KA and \p KB agree.
static llvm::Error checkInnerDims(const Node &N, const Dim &KA, const Dim &KB) {
  Dim Merged;
  if (mergeDims(KA, KB, Merged))
    return llvm::Error::success();
  return makeNodeError(N, "inner dimensions do not match: " + dimText(KA) +
                              " vs " + dimText(KB));
}

llvm::Error detail::inferGemm(const Node &N, ResultTypes &Results) {
  const TensorType *A, *B;
  if (llvm::Error E = getRequiredOperands(N, {{0, "A", &A}, {1, "B", &B}}))
    return E;
  const TensorType *C = getOperandType(N, 2);
  ElementType Elt = A->getElementType();
  if (llvm::Error E = checkElementType(N, Elt, "A", EltClass::Numeric))
    return E;
  if (llvm::Error E = unifyElementTypes(N, Elt, B->getElementType()))
    return E;
  if (C)
    if (llvm::Error E = unifyElementTypes(N, Elt, C->getElementType()))
      return E;
  if (llvm::Error E = checkRank(N, *A, "A", 2))
    return E;
  if (llvm::Error E = checkRank(N, *B, "B", 2))
    return E;
  bool TransA = N.getIntAttr("transA", 0) != 0;
  bool TransB = N.getIntAttr("transB", 0) != 0;
  Dim M, KA, KB, NDim;
  if (A->hasRank()) {
    M = A->getDim(TransA ? 1 : 0);
    KA = A->getDim(TransA ? 0 : 1);
  }
  if (B->hasRank()) {
    KB = B->getDim(TransB ? 1 : 0);
    NDim = B->getDim(TransB ? 0 : 1);
  }
  if (llvm::Error E = checkInnerDims(N, KA, KB))
    return E;
  DimList Out = {M, NDim};
  // C broadcasts to [M, N] (unidirectionally).
  if (C && C->hasRank())
    if (llvm::Error E = broadcastTo(N, C->getShape(), "C", Out))
      return E;
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

llvm::Error detail::inferMatMul(const Node &N, ResultTypes &Results) {
  const TensorType *A, *B;
  if (llvm::Error E = getRequiredOperands(N, {{0, "A", &A}, {1, "B", &B}}))
    return E;
  ElementType Elt = A->getElementType();
  if (llvm::Error E = checkElementType(N, Elt, "A", EltClass::Numeric))
    return E;
  if (llvm::Error E = unifyElementTypes(N, Elt, B->getElementType()))
    return E;
  if (llvm::Error E = checkMinRank(N, *A, "A", 1))
    return E;
  if (llvm::Error E = checkMinRank(N, *B, "B", 1))
    return E;
  if (!A->hasRank() || !B->hasRank()) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  // numpy semantics: a 1-D A is a row [1, K], a 1-D B a column [K, 1]; the
  // added dims are dropped from the result.
  llvm::ArrayRef<Dim> SA = A->getShape(), SB = B->getShape();
  unsigned RA = SA.size(), RB = SB.size();
  const Dim &KA = SA[RA - 1];
  const Dim &KB = RB == 1 ? SB[0] : SB[RB - 2];
  if (llvm::Error E = checkInnerDims(N, KA, KB))
    return E;
  DimList Out;
  llvm::ArrayRef<Dim> BatchA = RA > 2 ? SA.drop_back(2) : llvm::ArrayRef<Dim>();
  llvm::ArrayRef<Dim> BatchB = RB > 2 ? SB.drop_back(2) : llvm::ArrayRef<Dim>();
  if (llvm::Error E = broadcastShapes(N, BatchA, BatchB, Out))
    return E;
  if (RA >= 2)
    Out.push_back(SA[RA - 2]);
  if (RB >= 2)
    Out.push_back(SB[RB - 1]);
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

/// The result has one dim per output label, sized by every operand dim of
/// that label (a static 1 broadcasts); unranked when an operand is.
llvm::Error detail::inferEinsum(const Node &N, ResultTypes &Results) {
  const Attribute *EqAttr = N.getAttr("equation");
  if (!EqAttr || EqAttr->getKind() != AttrKind::String)
    return makeNodeError(N, "missing string attribute 'equation'");
  auto Eq = parseEinsum(EqAttr->getString());
  if (!Eq)
    return makeNodeError(N, llvm::toString(Eq.takeError()));
  ElementType Elt = ElementType::Unknown;
  bool AllRanked = true;
  llvm::SmallVector<unsigned, 2> Ranks;
  llvm::SmallVector<llvm::ArrayRef<Dim>, 2> Shapes;
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const TensorType *T = getOperandType(N, I);
    if (!T)
      return makeNodeError(N, "missing required operand " + llvm::Twine(I));
    if (llvm::Error E = checkElementType(N, T->getElementType(),
                                         "Inputs[" + std::to_string(I) + "]",
                                         EltClass::Numeric))
      return E;
    if (llvm::Error E = unifyElementTypes(N, Elt, T->getElementType()))
      return E;
    AllRanked &= T->hasRank();
    if (T->hasRank()) {
      Ranks.push_back(T->getRank());
      Shapes.push_back(T->getShape());
    }
  }
  if (Eq->Inputs.size() != N.getNumOperands())
    return makeNodeError(N, "equation '" + EqAttr->getString() + "' has " +
                                llvm::Twine(Eq->Inputs.size()) +
                                " input terms, but the node has " +
                                llvm::Twine(N.getNumOperands()) + " inputs");
  if (!AllRanked) {
    Results.push_back(TensorType::getUnranked(Elt));
    return llvm::Error::success();
  }
  auto B = bindEinsum(*Eq, Ranks);
  if (!B)
    return makeNodeError(N, llvm::toString(B.takeError()));
  llvm::SmallVector<Dim, 8> Sizes;
  if (llvm::Error E = resolveEinsumDims(*B, Shapes, Sizes))
    return makeNodeError(N, llvm::toString(std::move(E)));
  DimList Out;
  for (unsigned L : B->Result)
    Out.push_back(Sizes[L]);
  Results.push_back(makeType(Elt, Out));
  return llvm::Error::success();
}

/// Trilu keeps its operand's type; k, if given, is one i64.
llvm::Error detail::inferCumSum(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "x");
  if (llvm::Error E =
          checkElementType(N, X->getElementType(), "x", EltClass::Numeric))
    return E;
  if (X->hasRank() && X->getRank() == 0)
    return makeNodeError(N, "input 'x' is a scalar, expected rank >= 1");
  if (!N.hasOperand(1))
    return checkOperandPresent(N, 1, "axis");
  if (llvm::Error E = checkScalarOperand(N, 1, "axis", EltClass::Index,
                                         /*AllowSingleElement=*/true))
    return E;
  if (const TensorData *A = N.getOperand(1)->getConstantData())
    if (X->hasRank())
      if (auto AxisOrErr = normalizeAxis(N, A->getInt(0), X->getRank(), "axis");
          !AxisOrErr)
        return AxisOrErr.takeError();
  Results.push_back(getLogicalType(*X));
  return llvm::Error::success();
}

llvm::Error detail::inferTrilu(const Node &N, ResultTypes &Results) {
  const TensorType *X = getOperandType(N, 0);
  if (!X)
    return checkOperandPresent(N, 0, "input");
  if (X->hasRank() && X->getRank() < 2)
    return makeNodeError(N, "input must have rank >= 2, got " + X->str());
  if (llvm::Error E = checkScalarOperand(N, 1, "k", EltClass::I64,
                                         /*AllowSingleElement=*/true))
    return E;
  Results.push_back(*X);
  return llvm::Error::success();
}
