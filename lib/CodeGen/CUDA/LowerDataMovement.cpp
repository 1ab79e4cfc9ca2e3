//===- LowerDataMovement.cpp - Copies, views, relayouts -------------------===//
//
// Every op here is a strided copy (CopyParams, planned by planCopy into a
// flat copy, a tiled transpose or a generic walk), a view of its operand's
// buffer or a Pad: relayouts, Transposes that are not views, Cast between
// float types, Expand and Tile (zero strides), Concat (one copy per
// operand into its slice of the result), Split and Slice (copies of
// slices, any steps), DepthToSpace and SpaceToDepth (a block split of the
// spatial dims against one of the channels), Gather.
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

#include "strider/IR/LayoutAlgebra.h"

#include <algorithm>
#include <iterator>

using namespace strider;
using namespace strider::cuda;

namespace {

const char *getStrategyName(CopyStrategy S) {
  static const char *const Names[] = {"contiguous", "transpose2d", "generic"};
  return size_t(S) < std::size(Names) ? Names[size_t(S)] : "?";
}

llvm::Error checkRank(const Node &N, const TensorType &T) {
  if (T.getRank() > unsigned(MaxRank) || !T.hasStaticShape())
    return unsupported(N, N.getOpType() + " of " + T.str() + " (rank " +
                              llvm::Twine(MaxRank) + " at most)");
  return llvm::Error::success();
}

/// Whether \p N keeps the logical tensor and only changes its layout or
/// float type (relayout, Cast between held types).
bool isIdentityCopy(const Node &N) {
  if (N.getOpId() != OpId::Relayout && N.getOpId() != OpId::Cast)
    return false;
  if (!N.hasOperand(0) || !N.hasResult(0))
    return false;
  const TensorType &XT = N.getOperand(0)->getType();
  const TensorType &YT = N.getResult(0)->getType();
  return XT.getShape() == YT.getShape() && getDType(XT.getElementType()) &&
         getDType(YT.getElementType());
}

/// The only reader of \p N's result if \p N is a relayout or Cast, that
/// reader is another one, and one copy from N's operand with the reader's
/// result type gives the same values (N keeps its operand's type, already
/// has the reader's, or is f32, which kernels convert through anyway:
/// f32 -> f16 -> f32 keeps its rounding); else null.
const Node *getFoldableReader(const Graph &G, const Node &N) {
  if (!isIdentityCopy(N))
    return nullptr;
  const Value *Y = N.getResult(0);
  if (Y->getUses().size() != 1 || G.isGraphOutput(Y) ||
      Y->getUses().front().OperandIndex != 0)
    return nullptr;
  const Node &Reader = *Y->getUses().front().User;
  if (!isIdentityCopy(Reader))
    return nullptr;
  const ElementType Mid = Y->getType().getElementType();
  const bool SameValues =
      Mid == N.getOperand(0)->getType().getElementType() ||
      Mid == Reader.getResult(0)->getType().getElementType() ||
      Mid == ElementType::F32;
  return SameValues ? &Reader : nullptr;
}

/// Whether \p N plans no step of its own: its reader copies from N's
/// operand in one pass (a cast and a relayout cost one read and one
/// write, not two of each). Pairs only: a reader that folds into its own
/// reader takes nothing, so no chain skips an intermediate rounding.
bool isFoldedIntoReader(const Graph &G, const Node &N) {
  const Node *Reader = getFoldableReader(G, N);
  return Reader && !getFoldableReader(G, *Reader);
}

} // namespace

void cuda::addCopy(PlanContext &C, const std::string &Nodes, const char *What,
                   const CopyParams &P, Arg X, Arg Y) {
  CopyPlan Plan = planCopy(P);
  std::string Kernel = std::string("copy.") + What + " " +
                       getStrategyName(Plan.Strategy) + " " +
                       getDTypeName(P.XType);
  if (P.YType != P.XType)
    Kernel += std::string(">") + getDTypeName(P.YType);
  C.addStep({Nodes, Kernel, false, 0}, Plan, {X, Y});
}

namespace {

/// The index space of a copy of more dims than the kernels take, its unit
/// dims dropped and nested ones merged (the planners check with
/// copyFits that few enough remain).
struct MergedCopy {
  llvm::SmallVector<int64_t, 12> Shape;
  DimStrides Strides[2];

  MergedCopy(llvm::ArrayRef<int64_t> S, llvm::ArrayRef<int64_t> XS,
             llvm::ArrayRef<int64_t> YS)
      : Shape(S.begin(), S.end()), Strides{DimStrides(XS.begin(), XS.end()),
                                           DimStrides(YS.begin(), YS.end())} {
    collapseDims(Shape, Strides);
  }
};

/// Whether a copy over \p Shape through strides \p XS and \p YS fits the
/// copy kernels' MaxRank dims once merged.
bool copyFits(llvm::ArrayRef<int64_t> Shape, llvm::ArrayRef<int64_t> XS,
              llvm::ArrayRef<int64_t> YS) {
  return Shape.size() <= size_t(MaxRank) ||
         MergedCopy(Shape, XS, YS).Shape.size() <= size_t(MaxRank);
}

} // namespace

CopyParams cuda::makeCopy(llvm::ArrayRef<int64_t> Shape,
                          llvm::ArrayRef<int64_t> XStrides,
                          llvm::ArrayRef<int64_t> YStrides, DType XT,
                          DType YT) {
  if (Shape.size() > size_t(MaxRank)) {
    const MergedCopy M(Shape, XStrides, YStrides);
    assert(M.Shape.size() <= size_t(MaxRank) && "copy rank out of range");
    return makeCopy(M.Shape, M.Strides[0], M.Strides[1], XT, YT);
  }
  CopyParams P;
  P.Rank = int(Shape.size());
  for (size_t I = 0; I < Shape.size(); ++I) {
    P.Shape[I] = Shape[I];
    P.XStrides[I] = XStrides[I];
    P.YStrides[I] = YStrides[I];
  }
  P.XType = XT;
  P.YType = YT;
  return P;
}

/// A copy of \p Shape's elements of type \p Type from X through strides
/// \p XS to Y through \p YS. Float types go through the copy kernels;
/// integers, bools and f64 through the typed kernel, its dims sorted by
/// \p YS: Y written dense where \p YS are those of a dense tensor with the
/// dims in that order, else through \p YS (a part of a Concat's result).
static void addAnyCopy(PlanContext &C, const std::string &Nodes,
                       const char *What, llvm::ArrayRef<int64_t> Shape,
                       llvm::ArrayRef<int64_t> XS, llvm::ArrayRef<int64_t> YS,
                       ElementType Type, Arg X, Arg Y) {
  if (llvm::Optional<DType> D = getDType(Type)) {
    addCopy(C, Nodes, What, makeCopy(Shape, XS, YS, *D, *D), X, Y);
    return;
  }
  if (Shape.size() > size_t(MaxRank)) {
    const MergedCopy M(Shape, XS, YS);
    assert(M.Shape.size() <= size_t(MaxRank) && "copy rank out of range");
    addAnyCopy(C, Nodes, What, M.Shape, M.Strides[0], M.Strides[1], Type, X, Y);
    return;
  }
  std::vector<size_t> Order(Shape.size());
  for (size_t D = 0; D < Order.size(); ++D)
    Order[D] = D;
  std::stable_sort(Order.begin(), Order.end(),
                   [&](size_t A, size_t B) { return YS[A] > YS[B]; });
  TypedParams P;
  P.Op = TypedOp::Cast;
  P.Rank = int(Shape.size());
  P.In[0] = P.Y = *getScalarType(Type);
  int64_t Dense = 1;
  for (size_t K = Order.size(); K-- > 0;) {
    const size_t D = Order[K];
    P.Shape[K] = Shape[D];
    P.Strides[0][K] = XS[D];
    P.Strides[2][K] = YS[D];
    P.StridedY |= Shape[D] != 1 && YS[D] != Dense;
    Dense *= Shape[D];
  }
  C.addStep(
      {Nodes,
       std::string("typed.") + What + " " + getElementTypeName(Type).str(),
       false, 0},
      P, {X, Arg(), Arg(), Y});
}

/// A reshape between layouts that is not a view: one strided copy where
/// the two shapes share a refinement of at most MaxRank dims (a channel
/// shuffle of a channels-last tensor), else two, through a row-major
/// scratch copy of the operand (row-major reshapes are views).
static llvm::Error planMovingReshape(PlanContext &C, const Node &N,
                                     const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  if (!XT.hasStaticShape() || !YT.hasStaticShape() ||
      XT.getElementType() != YT.getElementType())
    return unsupported(N,
                       N.getOpType() + " from " + XT.str() + " to " + YT.str());
  std::vector<int64_t> Shape, XS, YS;
  const bool Direct =
      codegen::getReshapeCopy(XT, YT, Shape, XS, YS) && copyFits(Shape, XS, YS);
  // The row-major bytes of X are those of Y: a side stored row-major
  // needs no copy of its own.
  const TensorType XRowMajor = XT.withLayout(Layout());
  const TensorType YRowMajor = YT.withLayout(Layout());
  if (!Direct && (!copyFits(XT.getStaticShape(), codegen::getStrides(XT),
                            codegen::getStrides(XRowMajor)) ||
                  !copyFits(YT.getStaticShape(), codegen::getStrides(YRowMajor),
                            codegen::getStrides(YT))))
    return unsupported(N, N.getOpType() + " from " + XT.str() + " to " +
                              YT.str() + " (more than " + llvm::Twine(MaxRank) +
                              " dims after merging)");
  const std::string Nodes = getStepNodes(N, T);
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  if (Direct) {
    if (Shape.empty()) // One element.
      Shape = XS = YS = {1};
    addAnyCopy(C, Nodes, "reshape", Shape, XS, YS, XT.getElementType(), {XB, 0},
               {YB, 0});
    return llvm::Error::success();
  }
  const layout::DimBindings NoDims;
  const bool XIsRowMajor = layout::isReshapeBitcast(XT, XRowMajor, NoDims);
  const bool YIsRowMajor = layout::isReshapeBitcast(YRowMajor, YT, NoDims);
  Arg Staged = {XB, 0};
  if (!XIsRowMajor) {
    Staged = YIsRowMajor
                 ? Arg{YB, 0}
                 : Arg{C.addScratch(
                           *XT.getNumElements() *
                           int64_t(getElementByteSize(XT.getElementType()))),
                       0};
    addAnyCopy(C, Nodes, YIsRowMajor ? "reshape" : "reshape.stage",
               XT.getStaticShape(), codegen::getStrides(XT),
               codegen::getStrides(XRowMajor), XT.getElementType(), {XB, 0},
               Staged);
  }
  if (Staged.Buffer != YB)
    addAnyCopy(C, Nodes, "reshape", YT.getStaticShape(),
               codegen::getStrides(YRowMajor), codegen::getStrides(YT),
               YT.getElementType(), Staged, {YB, 0});
  return llvm::Error::success();
}

llvm::Error cuda::planView(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  // Dropout in inference: Y is X, and its mask (if read) all true.
  const Value *Mask = N.getOpId() == OpId::Dropout && N.getNumResults() > 1
                          ? N.getResult(1)
                          : nullptr;
  // (Training with a ratio of 0 is the same.)
  if (N.getOpId() == OpId::Dropout && N.hasOperand(2)) {
    const TensorData *Train = N.getOperand(2)->getConstantData();
    const TensorData *Ratio =
        N.hasOperand(1) ? N.getOperand(1)->getConstantData() : nullptr;
    const bool Inference =
        Train && Train->toInt64Vector() == std::vector<int64_t>{0};
    const bool NoDrop = Ratio && Ratio->getNumElements() == 1 &&
                        runtime::Tensor::fromData(*Ratio).getDouble(0) == 0.0;
    if (!Inference && !NoDrop)
      return unsupported(N, "Dropout in training mode");
  }
  if (Mask && (Mask->getType().getElementType() != ElementType::Bool ||
               Mask->getType().getRank() > MaxRank))
    return unsupported(N, "Dropout's mask " + Mask->getType().str());
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const bool View =
      N.getOpId() == OpId::Identity || N.getOpId() == OpId::Dropout
          ? XT == YT
          : layout::isReshapeBitcast(XT, YT, layout::DimBindings());
  if (!View && N.getOpId() == OpId::Identity &&
      XT.getElementType() == YT.getElementType() &&
      XT.getShape() == YT.getShape())
    return planCopyLike(C, N, T); // Stored in another layout: a relayout.
  if (!View)
    return planMovingReshape(C, N, T);
  // The view shares the operand's buffer (an activation, or a constant
  // uploaded once).
  auto XB = C.getBuffer(X, N);
  if (!XB)
    return XB.takeError();
  C.alias(Y, X);
  if (Mask) {
    auto MB = C.defineBuffer(Mask, N);
    if (!MB)
      return MB.takeError();
    TypedParams P; // A copy of one true, broadcast.
    P.Op = TypedOp::Cast;
    P.In[0] = P.Y = ScalarType::Bool;
    P.Rank = int(Mask->getType().getRank());
    codegen::getPhysicalShape(Mask->getType(), P.Shape);
    C.addStep({getStepNodes(N, T), "typed.fill bool", false, 0}, P,
              {{C.addConstant({1}), 0}, Arg(), Arg(), {*MB, 0}});
  }
  return llvm::Error::success();
}

llvm::Error cuda::planCopyLike(PlanContext &C, const Node &N,
                               const FusedTail &T) {
  if (isFoldedIntoReader(C.getGraph(), N))
    return llvm::Error::success();
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  std::string Nodes = getStepNodes(N, T);
  // A relayout or Cast folded into this one: copy from its operand.
  if (const Node *D = X->getDefiningNode();
      D && isIdentityCopy(N) && isFoldedIntoReader(C.getGraph(), *D)) {
    Nodes = D->getResult(0)->getName() + "," + Nodes;
    X = D->getOperand(0);
  }
  const TensorType &XT = X->getType(), &YT = Y->getType();
  if (llvm::Error E = checkRank(N, YT))
    return E;
  if (llvm::Error E = checkRank(N, XT))
    return E;
  auto YShape = YT.getStaticShape();
  auto XS = codegen::getStrides(XT), YS = codegen::getStrides(YT);
  llvm::SmallVector<int64_t, 6> Src(YShape.size(), 0);
  const char *What = "relayout";
  switch (N.getOpId()) {
  case OpId::Transpose: {
    std::vector<int64_t> Perm = layout::getTransposePerm(N);
    if (layout::isTransposeView(XT, Perm, YT, layout::DimBindings())) {
      auto XB = C.getBuffer(X, N);
      if (!XB)
        return XB.takeError();
      C.alias(Y, X);
      return llvm::Error::success();
    }
    // Output dim J reads input dim Perm[J].
    for (size_t J = 0; J < Perm.size(); ++J)
      Src[J] = XS[size_t(Perm[J])];
    What = "transpose";
    break;
  }
  case OpId::Expand: {
    int64_t Bc[MaxRank];
    // Broadcast strides come in Y's physical order; the copy runs over
    // Y's logical dims, so undo the permutation.
    codegen::getBroadcastStrides(XT, YT, Bc);
    auto Perm = YT.getLayout().getPermutation(YT.getRank());
    for (size_t P = 0; P < Perm.size(); ++P)
      Src[Perm[P]] = Bc[P];
    What = "expand";
    break;
  }
  case OpId::Cast:
    if (XT.getShape() != YT.getShape())
      return unsupported(N, "Cast changing the shape");
    What = "cast";
    LLVM_FALLTHROUGH;
  default:
    // Relayout, Cast: same logical shape.
    for (size_t J = 0; J < YShape.size(); ++J)
      Src[J] = XS[J];
    break;
  }
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  if (!getDType(XT.getElementType()) || !getDType(YT.getElementType())) {
    // Integers and bools (a mask stored channels-last, transposed
    // indices): the typed kernel's copy, Y dense in its physical order.
    if (XT.getElementType() != YT.getElementType())
      return unsupported(N, N.getOpType() + " from " + XT.str() + " to " +
                                YT.str());
    addAnyCopy(C, Nodes, What, YShape, Src, YS, YT.getElementType(), {XB, 0},
               {YB, 0});
    return llvm::Error::success();
  }
  if (isIdentityCopy(N)) {
    const bool Casts = dtypeOf(X) != dtypeOf(Y);
    const bool Moves = XT.getLayout() != YT.getLayout();
    What = Casts && Moves ? "relayout+cast" : Casts ? "cast" : "relayout";
  }
  addCopy(C, Nodes, What, makeCopy(YShape, Src, YS, dtypeOf(X), dtypeOf(Y)),
          {XB, 0}, {YB, 0});
  return llvm::Error::success();
}

llvm::Error cuda::planConcat(PlanContext &C, const Node &N,
                             const FusedTail &T) {
  const Value *Y = N.getResult(0);
  const TensorType &YT = Y->getType();
  if (llvm::Error E = checkRank(N, YT))
    return E;
  const int64_t R = YT.getRank();
  int64_t Axis = N.getIntAttr("axis", 0);
  if (Axis < 0)
    Axis += R;
  if (Axis < 0 || Axis >= R)
    return unsupported(N, "Concat along axis " + llvm::Twine(Axis));
  auto YS = codegen::getStrides(YT);
  const ElementType Type = YT.getElementType();
  const int64_t Elt = getElementByteSize(Type);
  std::vector<std::pair<BufferId, const Value *>> Parts;
  for (const Value *X : N.getOperands()) {
    if (X->getType().getElementType() != Type)
      return unsupported(N, "Concat of mixed element types");
    auto XB = C.getBuffer(X, N);
    if (!XB)
      return XB.takeError();
    Parts.push_back({*XB, X});
  }
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  int64_t Offset = 0;
  for (const auto &Part : Parts) {
    const TensorType &XT = Part.second->getType();
    auto XShape = XT.getStaticShape();
    addAnyCopy(C, getStepNodes(N, T), "concat", XShape, codegen::getStrides(XT),
               YS, Type, {Part.first, 0},
               {*YB, Offset * YS[size_t(Axis)] * Elt});
    Offset += XShape[size_t(Axis)];
  }
  return llvm::Error::success();
}

llvm::Error cuda::planSplit(PlanContext &C, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0);
  const TensorType &XT = X->getType();
  if (llvm::Error E = checkRank(N, XT))
    return E;
  const int64_t R = XT.getRank();
  int64_t Axis = N.getIntAttr("axis", 0);
  if (Axis < 0)
    Axis += R;
  if (Axis < 0 || Axis >= R)
    return unsupported(N, "Split along axis " + llvm::Twine(Axis));
  auto XS = codegen::getStrides(XT);
  const ElementType Type = XT.getElementType();
  const int64_t Elt = getElementByteSize(Type);
  auto XB = C.getBuffer(X, N);
  if (!XB)
    return XB.takeError();
  int64_t Offset = 0;
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    const Value *Y = N.getResult(I);
    if (!Y)
      return unsupported(N, "Split with an unused output");
    auto YB = C.defineBuffer(Y, N);
    if (!YB)
      return YB.takeError();
    const TensorType &YT = Y->getType();
    auto YShape = YT.getStaticShape();
    const Arg From{*XB, Offset * XS[size_t(Axis)] * Elt};
    if (getDType(Type) && getDType(YT.getElementType()))
      addCopy(
          C, Y->getName(), "split",
          makeCopy(YShape, XS, codegen::getStrides(YT), dtypeOf(X), dtypeOf(Y)),
          From, {*YB, 0});
    else if (YT.getElementType() == Type)
      addAnyCopy(C, Y->getName(), "split", YShape, XS, codegen::getStrides(YT),
                 Type, From, {*YB, 0});
    else
      return unsupported(N, "Split to " + YT.str());
    Offset += YShape[size_t(Axis)];
  }
  return llvm::Error::success();
}

llvm::Error cuda::planSlice(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  // One copy over Y's index space: at most MaxRank of its dims may be
  // other than 1 (a loss's rank-7 slice along a dim it keeps as 1).
  if (!XT.hasStaticShape() || !YT.hasStaticShape() ||
      llvm::count_if(YT.getStaticShape(), [](int64_t D) { return D != 1; }) >
          MaxRank)
    return unsupported(N, "Slice to " + YT.str() + " (at most " +
                              llvm::Twine(MaxRank) + " dims other than 1)");
  int64_t Off;
  llvm::SmallVector<int64_t, 12> Src;
  if (!codegen::getSliceView(N, Off, Src))
    return unsupported(N, "Slice with bounds computed at run time or an "
                          "invalid axis or step");
  BufferId XB, YB;
  if (llvm::Error E = C.bindBuffers(N, {{X, &XB}}, {{Y, &YB}}))
    return E;
  const Arg From{XB, Off * getElementByteSize(XT.getElementType())};
  if (getDType(XT.getElementType()) && getDType(YT.getElementType()))
    addCopy(C, getStepNodes(N, T), "slice",
            makeCopy(YT.getStaticShape(), Src, codegen::getStrides(YT),
                     dtypeOf(X), dtypeOf(Y)),
            From, {YB, 0});
  else if (XT.getElementType() == YT.getElementType())
    addAnyCopy(C, getStepNodes(N, T), "slice", YT.getStaticShape(), Src,
               codegen::getStrides(YT), YT.getElementType(), From, {YB, 0});
  else
    return unsupported(N, "Slice from " + XT.str() + " to " + YT.str());
  return llvm::Error::success();
}

/// Pad of integers, bools or f64: the typed kernel, one thread per element
/// of Y in its physical order, reading X through its strides (any two
/// layouts). \p Begin per logical dim.
static llvm::Error planTypedPad(PlanContext &C, const Node &N,
                                const FusedTail &T, PadParams::Mode Mode,
                                llvm::ArrayRef<int64_t> Begin, double Fill,
                                int64_t FillInt) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  auto S = getScalarType(XT.getElementType());
  if (!S || XT.getElementType() != YT.getElementType() ||
      !YT.hasStaticShape() || !T.Act.isNone())
    return unsupported(N, "Pad of " + XT.str() + " to " + YT.str());
  TypedParams P;
  P.Op = TypedOp::Pad;
  P.In[0] = P.Y = *S;
  P.Rank = int(YT.getRank());
  P.PadMode = Mode;
  P.PadFill = Fill;
  P.PadFillInt = FillInt;
  auto XShape = XT.getStaticShape(), YShape = YT.getStaticShape();
  auto XS = codegen::getStrides(XT);
  auto Perm = YT.getLayout().getPermutation(YT.getRank());
  for (size_t D = 0; D < Perm.size(); ++D) {
    P.Shape[D] = YShape[Perm[D]];
    P.Strides[0][D] = XS[Perm[D]];
    P.PadXShape[D] = XShape[Perm[D]];
    P.PadBegin[D] = Begin[Perm[D]];
  }
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  C.addStep({getStepNodes(N, T),
             "typed.pad." + N.getStringAttr("mode", "constant") + " " +
                 getElementTypeName(XT.getElementType()).str(),
             false, 0},
            P, {{XB, 0}, Arg(), Arg(), {YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planPad(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  if (llvm::Error E = checkRank(N, XT))
    return E;
  const int64_t R = XT.getRank();
  PadParams P;
  const std::string Mode = N.getStringAttr("mode", "constant");
  if (Mode == "constant")
    P.PadMode = PadParams::Constant;
  else if (Mode == "reflect")
    P.PadMode = PadParams::Reflect;
  else if (Mode == "edge")
    P.PadMode = PadParams::Edge;
  else
    return unsupported(N, "Pad mode '" + Mode + "'");
  std::vector<int64_t> Pads = codegen::getConstantInts(N, 1), Axes;
  if (N.hasOperand(3)) {
    Axes = codegen::getConstantInts(N, 3);
  } else {
    for (int64_t I = 0; I < R; ++I)
      Axes.push_back(I);
  }
  if (Pads.size() != 2 * Axes.size() || Axes.empty())
    return unsupported(N, "Pad with pads computed at run time");
  std::vector<int64_t> Begin(size_t(R), 0);
  for (size_t K = 0; K < Axes.size(); ++K) {
    const int64_t A = Axes[K] < 0 ? Axes[K] + R : Axes[K];
    if (A < 0 || A >= R)
      return unsupported(N, "Pad along axis " + llvm::Twine(Axes[K]));
    Begin[size_t(A)] = Pads[K];
  }
  double Fill = 0;
  int64_t FillInt = 0;
  if (N.hasOperand(2) && P.PadMode == PadParams::Constant) {
    const TensorData *D = N.getOperand(2)->getConstantData();
    if (!D || D->getNumElements() > 1)
      return unsupported(N, "Pad with a fill value computed at run time");
    if (D->getNumElements() == 1) {
      Fill = D->getDouble(0);
      if (!isFloatingPoint(D->getType().getElementType()))
        FillInt = D->toInt64Vector()[0];
      P.Value = float(Fill);
    }
  }
  if (!getDType(XT.getElementType()))
    return planTypedPad(C, N, T, P.PadMode, Begin, Fill, FillInt);
  // The kernel pads in X's physical order; a result stored in another
  // layout is padded into a scratch copy in X's, then relaid out.
  const bool Staged = XT.getLayout().getPermutation(unsigned(R)) !=
                      YT.getLayout().getPermutation(unsigned(R));
  const TensorType PaddedT = YT.withLayout(XT.getLayout());
  P.Rank = int(R);
  codegen::getPhysicalShape(XT, P.XShape);
  codegen::getPhysicalShape(PaddedT, P.YShape);
  auto Perm = XT.getLayout().getPermutation(unsigned(R));
  for (int64_t I = 0; I < R; ++I)
    P.Begin[I] = Begin[Perm[size_t(I)]];
  P.Type = dtypeOf(X);
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  const std::string Nodes = getStepNodes(N, T);
  const Arg Padded = Staged ? Arg{C.addScratch(*PaddedT.getNumElements() *
                                               int64_t(getDTypeBytes(P.Type))),
                                  0}
                            : Arg{YB, 0};
  C.addStep({Nodes, "pad." + Mode + " " + getDTypeName(P.Type), false, 0}, P,
            {{XB, 0}, Padded});
  if (Staged)
    addCopy(C, Nodes, "relayout",
            makeCopy(YT.getStaticShape(), codegen::getStrides(PaddedT),
                     codegen::getStrides(YT), P.Type, P.Type),
            Padded, {YB, 0});
  return llvm::Error::success();
}

namespace {

/// A copy over an index space of \p Shape with element strides \p Src in
/// X and \p Dst in Y: unit dims dropped, neighbours that nest in both
/// merged, so that up to MaxRank dims remain; false if more do.
bool addIndexCopy(PlanContext &C, const std::string &Nodes, const char *What,
                  llvm::ArrayRef<int64_t> Shape, llvm::ArrayRef<int64_t> Src,
                  llvm::ArrayRef<int64_t> Dst, ElementType XT, ElementType YT,
                  Arg X, Arg Y) {
  llvm::SmallVector<int64_t, 12> S(Shape.begin(), Shape.end());
  DimStrides Str[2] = {DimStrides(Src.begin(), Src.end()),
                       DimStrides(Dst.begin(), Dst.end())};
  collapseDims(S, Str);
  const DimStrides &XS = Str[0], &YS = Str[1];
  if (S.size() > size_t(MaxRank))
    return false;
  if (getDType(XT) && getDType(YT))
    addCopy(C, Nodes, What, makeCopy(S, XS, YS, *getDType(XT), *getDType(YT)),
            X, Y);
  else if (XT == YT)
    addAnyCopy(C, Nodes, What, S, XS, YS, XT, X, Y);
  else
    return false;
  return true;
}

} // namespace

llvm::Error cuda::planTile(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  if (llvm::Error E = checkRank(N, YT))
    return E;
  const std::vector<int64_t> Reps = codegen::getConstantInts(N, 1);
  auto XShape = XT.getStaticShape(), YShape = YT.getStaticShape();
  if (Reps.size() != XShape.size() || YShape.size() != XShape.size())
    return unsupported(N, "Tile with repeats computed at run time");
  for (size_t K = 0; K < XShape.size(); ++K)
    if (Reps[K] < 0 || YShape[K] != Reps[K] * XShape[K])
      return unsupported(N, "Tile to " + YT.str());
  BufferId XB, YB;
  if (llvm::Error E = C.bindBuffers(N, {{X, &XB}}, {{Y, &YB}}))
    return E;
  if (YT.getNumElements().getValueOr(0) == 0)
    return llvm::Error::success();
  // Output dim k of r * d elements is r copies of input dim k: index it
  // as (r, d), the copies reading the input again (stride 0). Only the
  // dims marked in Tiled repeat (the others copy through as they are).
  const std::string Nodes = getStepNodes(N, T);
  auto TileCopy = [&](const TensorType &From, const TensorType &To,
                      const std::vector<bool> &Tiled, Arg FromArg, Arg ToArg) {
    auto FS = codegen::getStrides(From), TS = codegen::getStrides(To);
    auto FShape = From.getStaticShape();
    llvm::SmallVector<int64_t, 12> Shape, Src, Dst;
    for (size_t K = 0; K < FShape.size(); ++K) {
      const int64_t R = Tiled[K] ? Reps[K] : 1;
      Shape.append({R, FShape[K]});
      Src.append({0, FS[K]});
      Dst.append({FShape[K] * TS[K], TS[K]});
    }
    return addIndexCopy(C, Nodes, "tile", Shape, Src, Dst, XT.getElementType(),
                        YT.getElementType(), FromArg, ToArg);
  };
  const std::vector<bool> All(XShape.size(), true);
  if (TileCopy(XT, YT, All, {XB, 0}, {YB, 0}))
    return llvm::Error::success();
  // Too many dims for one copy: the first half of the repeated dims into
  // a scratch tensor (in Y's layout), then the rest from it into Y.
  std::vector<bool> First(XShape.size(), false), Second(XShape.size(), false);
  size_t Repeated = 0;
  for (int64_t R : Reps)
    Repeated += R != 1;
  llvm::SmallVector<int64_t, 6> Mid(XShape.begin(), XShape.end());
  for (size_t K = 0, Seen = 0; K < XShape.size(); ++K) {
    if (Reps[K] == 1)
      continue;
    if (2 * Seen++ < Repeated) {
      First[K] = true;
      Mid[K] = YShape[K];
    } else {
      Second[K] = true;
    }
  }
  const TensorType MidT =
      TensorType::get(YT.getElementType(), Mid, YT.getLayout());
  const Arg MidArg{
      C.addScratch(*MidT.getNumElements() *
                   int64_t(getElementByteSize(YT.getElementType()))),
      0};
  if (!TileCopy(XT, MidT, First, {XB, 0}, MidArg) ||
      !TileCopy(MidT, YT, Second, MidArg, {YB, 0}))
    return unsupported(N, "Tile of " + XT.str() + " repeating this many dims");
  return llvm::Error::success();
}

llvm::Error cuda::planDepthSpace(PlanContext &C, const Node &N,
                                 const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  if (llvm::Error E = checkRank(N, YT))
    return E;
  const int64_t B = N.getIntAttr("blocksize", 0);
  if (XT.getRank() != 4 || YT.getRank() != 4 || B < 1)
    return unsupported(N, N.getOpType() + " of " + XT.str());
  auto XS = codegen::getStrides(XT), YS = codegen::getStrides(YT);
  auto XShape = XT.getStaticShape(), YShape = YT.getStaticShape();
  // The index space is (n, c, h, i, w, j) with i, j the offsets inside a
  // block: the wide tensor's (h * B + i, w * B + j) and the deep one's
  // channel (i * B + j) * C + c (DCR) or c * B * B + i * B + j (CRD).
  const bool ToSpace = N.getOpId() == OpId::DepthToSpace;
  const bool CRD = ToSpace && N.getStringAttr("mode", "DCR") == "CRD";
  auto Deep = ToSpace ? XS : YS, Wide = ToSpace ? YS : XS;
  auto WideShape = ToSpace ? YShape : XShape;
  const int64_t Ch = WideShape[1];
  if (WideShape[2] % B || WideShape[3] % B)
    return unsupported(N, N.getOpType() + " of " + XT.str());
  const int64_t Shape[6] = {WideShape[0],     Ch, WideShape[2] / B, B,
                            WideShape[3] / B, B};
  const int64_t DeepStrides[6] = {Deep[0], CRD ? B * B * Deep[1] : Deep[1],
                                  Deep[2], CRD ? B * Deep[1] : B * Ch * Deep[1],
                                  Deep[3], CRD ? Deep[1] : Ch * Deep[1]};
  const int64_t WideStrides[6] = {Wide[0], Wide[1],     B * Wide[2],
                                  Wide[2], B * Wide[3], Wide[3]};
  BufferId XB, YB;
  if (llvm::Error E = C.bindBuffers(N, {{X, &XB}}, {{Y, &YB}}))
    return E;
  const std::string What = N.getOpType().lower();
  if (!addIndexCopy(C, getStepNodes(N, T), What.c_str(), Shape,
                    ToSpace ? DeepStrides : WideStrides,
                    ToSpace ? WideStrides : DeepStrides, XT.getElementType(),
                    YT.getElementType(), {XB, 0}, {YB, 0}))
    return unsupported(N, N.getOpType() + " of " + XT.str());
  return llvm::Error::success();
}

llvm::Error cuda::planGather(PlanContext &C, const Node &N,
                             const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  if (llvm::Error E = checkRank(N, XT))
    return E;
  if (llvm::Error E = checkRank(N, YT))
    return E;
  // One copy (one launch) per index: a few constant indices of float
  // data, as a class token's or a channel pick's; an embedding lookup (or
  // any other) runs on the typed kernel.
  const TensorData *ID = N.getOperand(1)->getConstantData();
  constexpr int64_t MaxIndices = 32;
  if (!ID || ID->getNumElements() > MaxIndices ||
      !getDType(XT.getElementType()))
    return planIndexedGather(C, N, T);
  const int64_t R = XT.getRank();
  int64_t Axis = N.getIntAttr("axis", 0);
  if (Axis < 0)
    Axis += R;
  if (Axis < 0 || Axis >= R)
    return unsupported(N, "Gather along axis " +
                              llvm::Twine(N.getIntAttr("axis", 0)));
  const int64_t Q = ID->getType().getRank();
  auto XShape = XT.getStaticShape();
  auto IShape = ID->getType().getStaticShape();
  auto XS = codegen::getStrides(XT), YS = codegen::getStrides(YT);
  const int64_t Dim = XShape[size_t(Axis)];
  auto XB = C.getBuffer(X, N);
  if (!XB)
    return XB.takeError();
  std::vector<int64_t> Indices = ID->toInt64Vector();
  for (int64_t &Index : Indices) {
    if (Index < -Dim || Index >= Dim)
      return unsupported(N, "Gather at index " + llvm::Twine(Index) +
                                " of a dim of " + llvm::Twine(Dim));
    if (Index < 0)
      Index += Dim;
  }
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  // The result is X[:Axis] + indices' shape + X[Axis+1:]: the copy of
  // index k reads X's slice at it and writes Y's at k's position.
  llvm::SmallVector<int64_t, 6> Shape(XShape.begin(), XShape.end());
  Shape[size_t(Axis)] = 1;
  llvm::SmallVector<int64_t, 6> Dst;
  for (int64_t D = 0; D < R; ++D)
    Dst.push_back(D < Axis    ? YS[size_t(D)]
                  : D == Axis ? 0
                              : YS[size_t(D + Q - 1)]);
  const int64_t Elt = int64_t(getDTypeBytes(dtypeOf(X)));
  std::vector<int64_t> At(size_t(Q), 0);
  for (int64_t Index : Indices) {
    int64_t DstOff = 0;
    for (int64_t D = 0; D < Q; ++D)
      DstOff += At[size_t(D)] * YS[size_t(Axis + D)];
    addCopy(C, getStepNodes(N, T), "gather",
            makeCopy(Shape, XS, Dst, dtypeOf(X), dtypeOf(Y)),
            {*XB, Index * XS[size_t(Axis)] * Elt}, {*YB, DstOff * Elt});
    for (int64_t D = Q; D-- > 0;) {
      if (++At[size_t(D)] < IShape[size_t(D)])
        break;
      At[size_t(D)] = 0;
    }
  }
  return llvm::Error::success();
}
