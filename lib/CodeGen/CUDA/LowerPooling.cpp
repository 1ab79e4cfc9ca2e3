//===- LowerPooling.cpp - Max, average and global pooling -----------------===//
//
// MaxPool (with its indices), AveragePool and the global pools, as
// PoolParams windows over the physical order of either layout.
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

#include "strider/IR/WindowGeometry.h"

using namespace strider;
using namespace strider::cuda;

llvm::Error cuda::planPool(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const Value *Indices = N.hasResult(1) ? N.getResult(1) : nullptr;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const unsigned R = XT.getRank();
  if (T.Residual || !T.Act.isNone() || R < 3 || R > 5)
    return unsupported(N, N.getOpType() + " of rank " + llvm::Twine(R));
  const ChannelOrder XO = getSharedChannelOrder(XT, YT);
  if (XO == ChannelOrder::Other)
    return unsupported(N, N.getOpType() + " from layout " + XT.str() + " to " +
                              YT.str());
  // The indices are written where the kernel writes Y's elements.
  if (Indices && (Indices->getType().getElementType() != ElementType::I64 ||
                  getSharedChannelOrder(YT, Indices->getType()) != XO))
    return unsupported(N, "MaxPool indices of type " +
                              Indices->getType().str() + " beside " + YT.str());
  const bool Max = N.getOpId() == OpId::MaxPool;
  auto Type = getScalarType(XT.getElementType());
  const bool Float =
      Type && (*Type == ScalarType::F32 || *Type == ScalarType::F16 ||
               *Type == ScalarType::BF16);
  const bool Byte =
      Type && (*Type == ScalarType::I8 || *Type == ScalarType::U8);
  if (!(Float || (Max && Byte)) || YT.getElementType() != XT.getElementType())
    return unsupported(N,
                       N.getOpType() + " of " + XT.str() + " to " + YT.str());
  auto XS = XT.getStaticShape(), YS = YT.getStaticShape();
  llvm::SmallVector<int64_t, 3> InSpatial(XS.begin() + 2, XS.end());
  auto Axes = resolveWindow(N, InSpatial, llvm::None);
  if (!Axes)
    return Axes.takeError();
  PoolParams P;
  P.Max = Max;
  P.CountIncludePad = N.getIntAttr("count_include_pad", 0) != 0;
  P.IndicesColumnMajor = N.getIntAttr("storage_order", 0) == 1;
  P.Spatial = int(R - 2);
  P.N = XS[0];
  P.C = XS[1];
  setWindowAxes(P, P.Kernel, XS, YS, *Axes);
  P.ChannelsLast = XO == ChannelOrder::Last;
  P.Type = *Type;
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  std::vector<Arg> Args{{XB, 0}, {YB, 0}};
  if (Indices) {
    auto IB = C.defineBuffer(Indices, N);
    if (!IB)
      return IB.takeError();
    Args.push_back({*IB, 0});
  }
  C.addStep({getStepNodes(N, T),
             std::string("pool.") + (P.Max ? "max" : "average") +
                 (Indices ? "+indices " : " ") + getOrderName(P.ChannelsLast) +
                 " " + getScalarTypeName(P.Type),
             false, 0},
            P, std::move(Args));
  return llvm::Error::success();
}

llvm::Error cuda::planGlobalPool(PlanContext &C, const Node &N,
                                 const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType();
  const ChannelOrder O = codegen::getChannelOrder(XT);
  if (T.Residual || !T.Act.isNone() || XT.getRank() < 3 ||
      O == ChannelOrder::Other)
    return unsupported(N, N.getOpType() + " of " + XT.str());
  auto S = XT.getStaticShape();
  // The kernel writes Y[n][c] dense: n outside c, whatever the unit
  // spatial dims (NCHW and NHWC both are).
  auto YStrides = codegen::getStrides(Y->getType());
  if ((S[1] != 1 && YStrides[1] != 1) || (S[0] != 1 && YStrides[0] != S[1]))
    return unsupported(N, N.getOpType() + " to " + Y->getType().str());
  ReduceParams P;
  P.Op = N.getOpId() == OpId::GlobalMaxPool ? ReduceParams::Max
                                            : ReduceParams::Mean;
  P.Reduced = getPixels(S);
  if (O == ChannelOrder::First) {
    P.Outer = S[0] * S[1];
  } else {
    P.Outer = S[0];
    P.Inner = S[1];
  }
  P.XType = dtypeOf(X);
  P.YType = dtypeOf(Y);
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  C.addStep(
      {getStepNodes(N, T),
       std::string("reduce.") + (P.Op == ReduceParams::Max ? "max" : "mean") +
           (P.Inner == 1 ? ".rows " : ".strided ") + getDTypeName(P.XType),
       false, 0},
      P, {{XB, 0}, {YB, 0}});
  return llvm::Error::success();
}
