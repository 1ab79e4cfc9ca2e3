//===- LowerSelection.cpp - Gathers, scatters, TopK, Trilu ----------------===//
//
// GatherElements, ScatterElements, GatherND, ScatterND, TopK and Trilu:
// typed steps (LogicKernels.cu) over data of any held type, indices i32
// or i64 (i64 tuples for the ND forms), through strides in the result's
// physical order.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"
#include "PlanImpl.h"

using namespace strider;
using namespace strider::cuda;

llvm::Error cuda::planIndexedGather(PlanContext &C, const Node &N,
                                    const FusedTail &T) {
  const Value *X = N.getOperand(0), *I = N.getOperand(1), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &IT = I->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  auto IS = getScalarType(IT.getElementType());
  const bool Elements = N.getOpId() == OpId::GatherElements;
  const int64_t R = XT.getRank(), Q = IT.getRank();
  const int64_t Axis = codegen::getAxisAttr(N, R);
  if (!XS || !IS || (*IS != ScalarType::I32 && *IS != ScalarType::I64) ||
      Axis < 0 || !XT.hasStaticShape() || !IT.hasStaticShape() ||
      !YT.hasStaticShape() || !T.Act.isNone() || (Elements && Q != R))
    return unsupported(N,
                       N.getOpType() + " of " + XT.str() + " by " + IT.str());
  auto XStr = codegen::getStrides(XT), IStr = codegen::getStrides(IT);
  // Per logical dim of Y: its stride in X (0 along the index dims) and in
  // the indices (0 elsewhere).
  std::vector<int64_t> DataStr, IdxStr;
  for (int64_t D = 0; D < int64_t(YT.getRank()); ++D) {
    if (Elements) {
      DataStr.push_back(D == Axis ? 0 : XStr[size_t(D)]);
      IdxStr.push_back(IStr[size_t(D)]);
    } else if (D < Axis) {
      DataStr.push_back(XStr[size_t(D)]);
      IdxStr.push_back(0);
    } else if (D < Axis + Q) {
      DataStr.push_back(0);
      IdxStr.push_back(IStr[size_t(D - Axis)]);
    } else {
      DataStr.push_back(XStr[size_t(D - Q + 1)]);
      IdxStr.push_back(0);
    }
  }
  // Y's physical dims, those that nest in Y, X and the indices merged (a
  // rank-7 GatherElements along one axis walks 3 dims).
  const unsigned YR = YT.getRank();
  llvm::SmallVector<int64_t, 12> Shape(YR);
  codegen::getPhysicalShape(YT, Shape.data());
  DimStrides Str[3] = {DimStrides(YR), DimStrides(YR), DimStrides(YR)};
  toPhysical(YT, DataStr, Str[0].data());
  toPhysical(YT, IdxStr, Str[1].data());
  auto YStr = codegen::getStrides(YT);
  toPhysical(YT, YStr, Str[2].data());
  collapseDims(Shape, Str);
  if (Shape.size() > size_t(MaxRank))
    return unsupported(N, N.getOpType() + " of " + XT.str() + " by " +
                              IT.str() + " (more than " + llvm::Twine(MaxRank) +
                              " dims after merging)");
  TypedParams P;
  P.Op = TypedOp::Gather;
  P.Rank = int(Shape.size());
  P.NumOperands = 2;
  P.In[0] = P.Y = *XS;
  P.In[1] = *IS;
  P.AxisSize = XT.getStaticShape()[size_t(Axis)];
  P.AxisStride = XStr[size_t(Axis)];
  for (size_t D = 0; D < Shape.size(); ++D) {
    P.Shape[D] = Shape[D];
    P.Strides[0][D] = Str[0][D];
    P.Strides[1][D] = Str[1][D];
  }
  BufferId XB, IB, YB;
  if (llvm::Error E = C.bindBuffers(N, {{X, &XB}, {I, &IB}}, {{Y, &YB}}))
    return E;
  C.addStep({getStepNodes(N, T),
             std::string("typed.") +
                 (Elements ? "gather_elements " : "gather ") +
                 getScalarTypeName(P.Y) + " by " + getScalarTypeName(P.In[1]),
             false, 0},
            P, {{XB, 0}, {IB, 0}, Arg(), {YB, 0}});
  return llvm::Error::success();
}

/// A scatter's buffers (data, indices, updates; Y) and its first step:
/// Y = the data X (of storage type \p XS), in Y's physical order (one flat
/// run when both are row-major; else rank <= MaxRank).
static llvm::Error beginScatter(PlanContext &C, const Node &N,
                                const FusedTail &T, ScalarType XS,
                                BufferId (&Buffers)[4]) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  if (llvm::Error E = C.bindBuffers(N,
                                    {{X, &Buffers[0]},
                                     {N.getOperand(1), &Buffers[1]},
                                     {N.getOperand(2), &Buffers[2]}},
                                    {{Y, &Buffers[3]}}))
    return E;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  TypedParams Copy;
  Copy.Op = TypedOp::Cast;
  Copy.In[0] = Copy.Y = XS;
  if (XT.getLayout().isIdentity() && YT.getLayout().isIdentity()) {
    Copy.Rank = 1;
    Copy.Shape[0] = *YT.getNumElements();
    Copy.Strides[0][0] = 1;
  } else {
    assert(YT.getRank() <= unsigned(MaxRank) && "rank checked by the caller");
    Copy.Rank = int(YT.getRank());
    codegen::getPhysicalShape(YT, Copy.Shape);
    toPhysical(YT, codegen::getStrides(XT), Copy.Strides[0]);
  }
  C.addStep({getStepNodes(N, T),
             std::string("typed.copy ") + getScalarTypeName(XS), false, 0},
            Copy, {{Buffers[0], 0}, Arg(), Arg(), {Buffers[3], 0}});
  return llvm::Error::success();
}

/// The kernel's form of a scatter's reduction attribute \p R.
static llvm::Optional<ScatterReduction> getScatterReduction(llvm::StringRef R) {
  static const std::pair<llvm::StringRef, ScatterReduction> Reductions[] = {
      {"none", ScatterReduction::None},
      {"add", ScatterReduction::Add},
      {"mul", ScatterReduction::Mul},
      {"max", ScatterReduction::Max},
      {"min", ScatterReduction::Min}};
  for (const auto &E : Reductions)
    if (E.first == R)
      return E.second;
  return llvm::None;
}

llvm::Error cuda::planScatterElements(PlanContext &C, const Node &N,
                                      const FusedTail &T) {
  const Value *X = N.getOperand(0), *I = N.getOperand(1), *U = N.getOperand(2),
              *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &IT = I->getType(), &UT = U->getType(),
                   &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  auto IS = getScalarType(IT.getElementType());
  const int64_t R = XT.getRank();
  const int64_t Axis = codegen::getAxisAttr(N, R);
  const std::string Reduce = N.getStringAttr("reduction", "none");
  const llvm::Optional<ScatterReduction> Reduction =
      getScatterReduction(Reduce);
  if (!Reduction)
    return unsupported(N, "ScatterElements with reduction '" + Reduce + "'");
  if (!XS || !IS || (*IS != ScalarType::I32 && *IS != ScalarType::I64) ||
      Axis < 0 || R > MaxRank || !XT.hasStaticShape() || !IT.hasStaticShape() ||
      IT.getShape() != UT.getShape() ||
      UT.getElementType() != XT.getElementType() || IT.getRank() != R ||
      !T.Act.isNone())
    return unsupported(N, "ScatterElements of " + XT.str() + " by " + IT.str());
  BufferId Buffers[4];
  if (llvm::Error E = beginScatter(C, N, T, *XS, Buffers))
    return E;
  const auto [XB, IB, UB, YB] = Buffers;
  const std::string Nodes = getStepNodes(N, T);
  // Then the updates, row by row, in Y's own strides.
  TypedParams S;
  S.Op = TypedOp::Scatter;
  S.Rank = int(R);
  S.NumOperands = 2;
  S.In[0] = *IS;
  S.In[1] = S.Y = *XS;
  S.Axis = int(Axis);
  S.Reduction = *Reduction;
  S.AxisSize = XT.getStaticShape()[size_t(Axis)];
  auto IStr = codegen::getStrides(IT), UStr = codegen::getStrides(UT),
       YStr = codegen::getStrides(YT);
  S.AxisStride = YStr[size_t(Axis)];
  auto IShape = IT.getStaticShape();
  for (int64_t D = 0; D < R; ++D) {
    S.Shape[D] = IShape[size_t(D)];
    S.Strides[0][D] = IStr[size_t(D)];
    S.Strides[1][D] = UStr[size_t(D)];
    S.Strides[2][D] = YStr[size_t(D)];
  }
  C.addStep({Nodes,
             std::string("typed.scatter") +
                 (*Reduction == ScatterReduction::None ? std::string()
                                                       : "_" + Reduce) +
                 " " + getScalarTypeName(*XS) + " by " + getScalarTypeName(*IS),
             false, 0},
            S, {{IB, 0}, {UB, 0}, Arg(), {YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planTrilu(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const Value *K = N.hasOperand(1) ? N.getOperand(1) : nullptr;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  const unsigned R = XT.getRank();
  // Y dense row-major, so that each element's row and column follow from
  // its index; the batch dims merged into one.
  if (!XS || R < 2 || !XT.hasStaticShape() || YT != XT ||
      !XT.getLayout().isIdentity() || !T.Act.isNone() ||
      (K && K->getType().getElementType() != ElementType::I64))
    return unsupported(N, "Trilu of " + XT.str() + " to " + YT.str());
  auto Shape = XT.getStaticShape();
  TypedParams P;
  P.Op = TypedOp::Trilu;
  P.Rank = 3;
  P.Shape[2] = Shape[R - 1];
  P.Shape[1] = Shape[R - 2];
  P.Shape[0] = 1;
  for (unsigned D = 0; D + 2 < R; ++D)
    P.Shape[0] *= Shape[D];
  P.Strides[0][0] = P.Shape[1] * P.Shape[2];
  P.Strides[0][1] = P.Shape[2];
  P.Strides[0][2] = 1;
  P.In[0] = P.Y = *XS;
  P.In[1] = ScalarType::I64;
  P.Upper = N.getIntAttr("upper", 1) != 0;
  BufferId XB, YB;
  Arg KArg;
  if (K) {
    P.NumOperands = 2; // Strides[1] stay 0: k's one element.
    auto KB = C.getBuffer(K, N);
    if (!KB)
      return KB.takeError();
    KArg = {*KB, 0};
  }
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  C.addStep({getStepNodes(N, T),
             std::string("typed.trilu.") + (P.Upper ? "upper " : "lower ") +
                 getScalarTypeName(*XS),
             false, 0},
            P, {{XB, 0}, KArg, Arg(), {YB, 0}});
  return llvm::Error::success();
}

/// The Nd* fields of \p P for \p N's index tuples into \p Data after
/// \p Batch shared dims (both row-major and static, the indices i64);
/// false where the kernel does not apply.
static bool setTupleParams(const TensorType &Data, const TensorType &Indices,
                           int64_t Batch, TypedParams &P) {
  if (!Data.hasStaticShape() || !Indices.hasStaticShape() ||
      !Data.getLayout().isIdentity() || !Indices.getLayout().isIdentity() ||
      Indices.getElementType() != ElementType::I64 || Indices.getRank() < 1)
    return false;
  auto DShape = Data.getStaticShape(), IShape = Indices.getStaticShape();
  const int64_t R = int64_t(DShape.size()), K = IShape.back();
  if (Batch < 0 || K < 1 || K > MaxRank || Batch + K > R ||
      int64_t(IShape.size()) < Batch + 1)
    return false;
  std::vector<int64_t> Strides(size_t(R), 1);
  for (int64_t D = R - 1; D > 0; --D)
    Strides[size_t(D - 1)] = Strides[size_t(D)] * DShape[size_t(D)];
  P.NdRank = int(K);
  for (int64_t J = 0; J < K; ++J) {
    P.NdDims[J] = DShape[size_t(Batch + J)];
    P.NdStrides[J] = Strides[size_t(Batch + J)];
  }
  P.NdSlice = Strides[size_t(Batch + K - 1)];
  P.NdBatchStride = Batch > 0 ? Strides[size_t(Batch - 1)] : 0;
  P.NdTuplesPerBatch = 1;
  for (size_t I = size_t(Batch); I + 1 < IShape.size(); ++I)
    P.NdTuplesPerBatch *= IShape[I];
  return true;
}

llvm::Error cuda::planGatherND(PlanContext &C, const Node &N,
                               const FusedTail &T) {
  const Value *X = N.getOperand(0), *I = N.getOperand(1), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  TypedParams P;
  if (!XS || !YT.hasStaticShape() || !YT.getLayout().isIdentity() ||
      !T.Act.isNone() || T.Residual ||
      !setTupleParams(XT, I->getType(), N.getIntAttr("batch_dims", 0), P))
    return unsupported(N,
                       "GatherND of " + XT.str() + " by " + I->getType().str());
  P.Op = TypedOp::GatherND;
  P.Rank = 1;
  P.Shape[0] = *YT.getNumElements();
  P.NumOperands = 2;
  P.In[0] = P.Y = *XS;
  P.In[1] = ScalarType::I64;
  BufferId XB, IB, YB;
  if (llvm::Error E = C.bindBuffers(N, {{X, &XB}, {I, &IB}}, {{Y, &YB}}))
    return E;
  C.addStep({getStepNodes(N, T),
             std::string("typed.gather_nd ") + getScalarTypeName(*XS), false,
             0},
            P, {{XB, 0}, {IB, 0}, Arg(), {YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planScatterND(PlanContext &C, const Node &N,
                                const FusedTail &T) {
  const Value *X = N.getOperand(0), *I = N.getOperand(1), *U = N.getOperand(2),
              *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &UT = U->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  const std::string Reduce = N.getStringAttr("reduction", "none");
  const llvm::Optional<ScatterReduction> Reduction =
      getScatterReduction(Reduce);
  TypedParams S;
  if (!XS || !Reduction || UT.getElementType() != XT.getElementType() ||
      !UT.getLayout().isIdentity() || YT != XT || !T.Act.isNone() ||
      T.Residual || !setTupleParams(XT, I->getType(), 0, S))
    return unsupported(N, "ScatterND of " + XT.str() + " by " +
                              I->getType().str());
  // Y = the data, then the slices.
  BufferId Buffers[4];
  if (llvm::Error E = beginScatter(C, N, T, *XS, Buffers))
    return E;
  const auto [XB, IB, UB, YB] = Buffers;
  const std::string Nodes = getStepNodes(N, T);
  S.Op = TypedOp::ScatterND;
  S.Rank = 2;
  S.Axis = 0;
  S.Shape[0] = 1; // The tuples, walked by each row.
  for (int64_t D = 0; D + 1 < int64_t(I->getType().getRank()); ++D)
    S.Shape[0] *= I->getType().getStaticShape()[size_t(D)];
  S.Shape[1] = S.NdSlice; // The rows: one per slice element.
  S.NumOperands = 2;
  S.In[0] = ScalarType::I64;
  S.In[1] = S.Y = *XS;
  S.Reduction = *Reduction;
  C.addStep({Nodes,
             std::string("typed.scatter_nd") +
                 (*Reduction == ScatterReduction::None ? std::string()
                                                       : "_" + Reduce) +
                 " " + getScalarTypeName(*XS),
             false, 0},
            S, {{IB, 0}, {UB, 0}, Arg(), {YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planTopK(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *X = N.getOperand(0), *KV = N.getOperand(1);
  const TensorType &XT = X->getType();
  auto XS = getScalarType(XT.getElementType());
  const int64_t R = XT.getRank();
  int64_t Axis = N.getIntAttr("axis", -1);
  Axis = Axis < 0 ? Axis + R : Axis;
  const TensorData *KD = KV->getConstantData();
  const std::vector<int64_t> Ks =
      KD ? KD->toInt64Vector() : std::vector<int64_t>();
  if (!XS || Axis < 0 || Axis >= R || R > MaxRank || !XT.hasStaticShape() ||
      !T.Act.isNone() || N.getNumResults() != 2)
    return unsupported(N, "TopK of " + XT.str());
  if (Ks.size() != 1)
    return unsupported(N, "TopK whose K is computed at run time");
  const int64_t K = Ks[0], Len = XT.getStaticShape()[size_t(Axis)];
  if (K < 0 || K > Len)
    return unsupported(N, "TopK with K = " + llvm::Twine(K) +
                              " along an axis of " + llvm::Twine(Len));
  const Value *Values = N.getResult(0), *Indices = N.getResult(1);
  for (const Value *V : {Values, Indices})
    if (!V->getType().hasStaticShape() ||
        V->getType().getShape() != N.getResult(0)->getType().getShape())
      return unsupported(N, "TopK to " + V->getType().str());
  if (Values->getType().getElementType() != XT.getElementType() ||
      Indices->getType().getElementType() != ElementType::I64)
    return unsupported(N, "TopK of " + XT.str() + " to " +
                              Values->getType().str() + " and " +
                              Indices->getType().str());
  TypedParams P;
  P.Op = TypedOp::TopK;
  P.Rank = int(R);
  P.In[0] = P.Y = *XS;
  P.Axis = int(Axis);
  P.K = K;
  P.Largest = N.getIntAttr("largest", 1) != 0;
  auto XShape = XT.getStaticShape();
  const Graph &G = *N.getGraph();
  // The values row is also the insertion's working space: an unread
  // result gets a scratch buffer, dense in logical order.
  auto Dense = [&](const Value *V) {
    auto Shape = V->getType().getStaticShape();
    std::vector<int64_t> S(Shape.size(), 1);
    for (size_t D = Shape.size(); D-- > 1;)
      S[D - 1] = S[D] * Shape[D];
    return S;
  };
  auto Target = [&](const Value *V,
                    std::vector<int64_t> &Str) -> llvm::Expected<BufferId> {
    if (V->hasUses() || G.isGraphOutput(V)) {
      Str = getLogicalStrides(V);
      return C.defineBuffer(V, N);
    }
    Str = Dense(V);
    return C.addScratch(
        *V->getType().getNumElements() *
        int64_t(getElementByteSize(V->getType().getElementType())));
  };
  auto XB = C.getBuffer(X, N);
  if (!XB)
    return XB.takeError();
  std::vector<int64_t> VStr, IStr;
  auto VB = Target(Values, VStr);
  if (!VB)
    return VB.takeError();
  auto IB = Target(Indices, IStr);
  if (!IB)
    return IB.takeError();
  const std::vector<int64_t> XStr = getLogicalStrides(X);
  for (int64_t D = 0; D < R; ++D) {
    P.Shape[D] = XShape[size_t(D)];
    P.Strides[0][D] = XStr[size_t(D)];
    P.Strides[1][D] = IStr[size_t(D)];
    P.Strides[2][D] = VStr[size_t(D)];
  }
  C.addStep(
      {getStepNodes(N, T),
       std::string(useTopKRanks(P) ? "typed.topk.ranks " : "typed.topk ") +
           getScalarTypeName(*XS) + (P.Largest ? " largest" : " smallest"),
       false, 0},
      P, {{*XB, 0}, Arg(), Arg(), {*VB, 0}, {*IB, 0}});
  return llvm::Error::success();
}
