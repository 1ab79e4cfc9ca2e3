//===- LowerReduction.cpp - Reductions, softmax, CumSum -------------------===//
//
// The reductions over axes (ReduceParams), Softmax and LogSoftmax, ArgMax
// and ArgMin and CumSum: one step each over the operand's physical order.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"
#include "PlanImpl.h"

#include <algorithm>

using namespace strider;
using namespace strider::cuda;

namespace {

const std::pair<OpId, ReduceParams::Kind> ReduceKinds[] = {
    {OpId::ReduceSum, ReduceParams::Sum},
    {OpId::ReduceMean, ReduceParams::Mean},
    {OpId::ReduceMax, ReduceParams::Max},
    {OpId::ReduceMin, ReduceParams::Min},
    {OpId::ReduceProd, ReduceParams::Prod},
    {OpId::ReduceL2, ReduceParams::L2},
    {OpId::ReduceSumSquare, ReduceParams::SumSquare},
};

} // namespace

llvm::Error cuda::planReduce(PlanContext &C, const Node &N,
                             const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = T.Result;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const int64_t R = XT.getRank();
  if (T.Residual || !T.Act.isNone())
    return unsupported(N, "a fused epilogue on a reduction");
  auto ReducedOr = getReducedDims(N);
  if (!ReducedOr)
    return ReducedOr.takeError();
  std::vector<bool> &Reduced = *ReducedOr;
  // No axes: every dim, or with noop_with_empty_axes none (each element
  // reduced alone, as the reference does: ReduceL2 gives |x|).
  if (std::find(Reduced.begin(), Reduced.end(), true) == Reduced.end() &&
      N.getIntAttr("noop_with_empty_axes", 0) == 0)
    Reduced.assign(size_t(R), true);
  ReduceParams P;
  const bool Keep = N.getIntAttr("keepdims", 1) != 0;
  const auto *K = llvm::find_if(
      ReduceKinds, [&](const auto &E) { return E.first == N.getOpId(); });
  assert(K != std::end(ReduceKinds) && "planReduce on another op");
  P.Op = K->second;
  P.XType = dtypeOf(X);
  P.YType = dtypeOf(Y);
  if (!codegen::splitReduction(XT, YT, Reduced, Keep, P.Outer, P.Reduced,
                               P.Inner)) {
    // The reduced dims are not one block of X's storage: a copy first
    // gathers X as [kept dims in Y's physical order, reduced dims], then
    // rows reduce into Y.
    if (R > MaxRank)
      return unsupported(N, N.getOpType() + " of " + XT.str());
    std::vector<int64_t> YToX;
    for (int64_t D = 0; D < R; ++D)
      if (!Reduced[size_t(D)] || Keep)
        YToX.push_back(D);
    if (YToX.size() != YT.getRank())
      return unsupported(N, N.getOpType() + " to " + YT.str());
    std::vector<int64_t> Order;
    for (unsigned D : YT.getLayout().getPermutation(YT.getRank()))
      if (!Reduced[size_t(YToX[D])])
        Order.push_back(YToX[D]);
    P.Outer = 1;
    for (int64_t D : Order)
      P.Outer *= XT.getStaticShape()[size_t(D)];
    P.Reduced = 1;
    for (int64_t D = 0; D < R; ++D)
      if (Reduced[size_t(D)]) {
        Order.push_back(D);
        P.Reduced *= XT.getStaticShape()[size_t(D)];
      }
    P.Inner = 1;
    auto XStr = codegen::getStrides(XT);
    llvm::SmallVector<int64_t, 6> Shape, From, To(Order.size(), 1);
    for (int64_t D : Order) {
      Shape.push_back(XT.getStaticShape()[size_t(D)]);
      From.push_back(XStr[size_t(D)]);
    }
    for (size_t I = Order.size(); I-- > 1;)
      To[I - 1] = To[I] * Shape[I];
    BufferId XB, YB;
    if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
      return E;
    const Arg Gathered{
        C.addScratch(P.Outer * P.Reduced * int64_t(getDTypeBytes(P.XType))), 0};
    addCopy(C, getStepNodes(N, T), "reduce",
            makeCopy(Shape, From, To, P.XType, P.XType), {XB, 0}, Gathered);
    C.addStep(
        {getStepNodes(N, T),
         "reduce." + N.getOpType().lower() + ".rows " + getDTypeName(P.XType),
         false, 0},
        P, {Gathered, {YB, 0}});
    return llvm::Error::success();
  }
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  C.addStep({getStepNodes(N, T),
             "reduce." + N.getOpType().lower() +
                 (P.Inner == 1 ? ".rows " : ".strided ") +
                 getDTypeName(P.XType),
             false, 0},
            P, {{XB, 0}, {YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planSoftmax(PlanContext &C, const Node &N,
                              const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = T.Result;
  const TensorType &XT = X->getType();
  const int64_t R = XT.getRank();
  int64_t Axis = N.getIntAttr("axis", -1);
  if (T.Residual || !T.Act.isNone() || R == 0 || Axis < -R || Axis >= R ||
      !codegen::haveSameElementOrder(XT, Y->getType()))
    return unsupported(N, N.getOpType() + " in this form");
  if (Axis < 0)
    Axis += R;
  std::vector<bool> Middle(size_t(R), false);
  Middle[size_t(Axis)] = true;
  SoftmaxParams P;
  if (!codegen::splitAround(XT, Middle, P.Outer, P.Axis, P.Inner))
    return unsupported(N, N.getOpType() + " in layout " + XT.str());
  P.XType = dtypeOf(X);
  P.YType = dtypeOf(Y);
  P.Log = N.getOpId() == OpId::LogSoftmax;
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  C.addStep({getStepNodes(N, T),
             std::string(P.Log ? "log_softmax" : "softmax") +
                 (P.Inner == 1 ? ".rows " : ".strided ") +
                 getDTypeName(P.XType),
             false, 0},
            P, {{XB, 0}, {YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planArgReduce(PlanContext &C, const Node &N,
                                const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  const int64_t R = XT.getRank();
  const int64_t Axis = codegen::getAxisAttr(N, R);
  const bool KeepDims = N.getIntAttr("keepdims", 1) != 0;
  if (!XS || Axis < 0 || R > MaxRank || !XT.hasStaticShape() ||
      !YT.hasStaticShape() || YT.getElementType() != ElementType::I64 ||
      int64_t(YT.getRank()) != (KeepDims ? R : R - 1) ||
      XT.getStaticShape()[size_t(Axis)] == 0 || !T.Act.isNone())
    return unsupported(N,
                       N.getOpType() + " of " + XT.str() + " to " + YT.str());
  TypedParams P;
  P.Op = N.getOpId() == OpId::ArgMax ? TypedOp::ArgMax : TypedOp::ArgMin;
  P.Rank = int(R);
  P.In[0] = *XS;
  P.Y = ScalarType::I64;
  P.Axis = int(Axis);
  P.SelectLast = N.getIntAttr("select_last_index", 0) != 0;
  auto XShape = XT.getStaticShape();
  const std::vector<int64_t> XStr = getLogicalStrides(X),
                             YStr = getLogicalStrides(Y);
  for (int64_t D = 0; D < R; ++D) {
    P.Shape[D] = XShape[size_t(D)];
    P.Strides[0][D] = XStr[size_t(D)];
    // Y's dim of X's dim D (none for the axis without keepdims).
    P.Strides[2][D] =
        D == Axis ? 0 : YStr[size_t(KeepDims || D < Axis ? D : D - 1)];
  }
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  C.addStep({getStepNodes(N, T),
             std::string("typed.") + N.getOpType().lower() +
                 (useArgRowBlocks(P) ? ".blocks " : " ") +
                 getScalarTypeName(*XS),
             false, 0},
            P, {{XB, 0}, Arg(), Arg(), {YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planCumSum(PlanContext &C, const Node &N,
                             const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  const TensorData *AxisData = N.getOperand(1)->getConstantData();
  const unsigned R = XT.getRank();
  if (!XS || *XS == ScalarType::Bool || !AxisData ||
      AxisData->getNumElements() != 1 || R == 0 || R > unsigned(MaxRank) ||
      !XT.hasStaticShape() || XT.getElementType() != YT.getElementType() ||
      XT.getShape() != YT.getShape() ||
      XT.getLayout().getPermutation(R) != YT.getLayout().getPermutation(R) ||
      !T.Act.isNone() || T.Residual)
    return unsupported(N, "CumSum of " + XT.str() + " to " + YT.str() +
                              " (the axis must be a constant)");
  int64_t Axis = AxisData->getInt(0);
  if (Axis < 0)
    Axis += int64_t(R);
  if (Axis < 0 || Axis >= int64_t(R))
    return unsupported(N, "CumSum along an axis out of range");
  // Both tensors dense in one physical order: the axis at its place there.
  TypedParams P;
  P.Op = TypedOp::CumSum;
  P.Rank = int(R);
  P.In[0] = P.Y = *XS;
  P.Exclusive = N.getIntAttr("exclusive", 0) != 0;
  P.Reverse = N.getIntAttr("reverse", 0) != 0;
  codegen::getPhysicalShape(XT, P.Shape);
  const auto Perm = XT.getLayout().getPermutation(R);
  int64_t Stride = 1;
  for (int D = int(R) - 1; D >= 0; --D) {
    if (int64_t(Perm[unsigned(D)]) == Axis)
      P.Axis = D;
    P.Strides[0][D] = P.Strides[2][D] = Stride;
    Stride *= P.Shape[D];
  }
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  C.addStep({getStepNodes(N, T),
             std::string("typed.cumsum ") + getScalarTypeName(*XS), false, 0},
            P, {{XB, 0}, Arg(), Arg(), {YB, 0}});
  return llvm::Error::success();
}
