//===- LowerResample.cpp - Resize and GridSample --------------------------===//
//
// Resize (nearest, linear and cubic, in either layout, with index and
// weight tables per spatial axis computed at compile time) and GridSample
// (X in either layout, the grid and Y row-major).
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

#include "strider/Runtime/ResizeSampling.h"

#include <algorithm>
#include <cstring>

using namespace strider;
using namespace strider::cuda;

llvm::Error cuda::planGridSample(PlanContext &C, const Node &N,
                                 const FusedTail &T) {
  const Value *X = N.getOperand(0), *G = N.getOperand(1), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &GT = G->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  auto GS = getScalarType(GT.getElementType());
  if (!XS || !GS || XT.getRank() != 4 || !XT.hasStaticShape() ||
      !YT.hasStaticShape() || !YT.getLayout().isIdentity() ||
      !GT.getLayout().isIdentity() || !T.Act.isNone() || T.Residual)
    return unsupported(N, "GridSample of " + XT.str() + " by " + GT.str());
  auto Opts = runtime::getGridSampleOptions(N);
  if (!Opts)
    return Opts.takeError();
  TypedParams P;
  P.Op = TypedOp::GridSample;
  P.Rank = 4;
  auto YShape = YT.getStaticShape(), XShape = XT.getStaticShape();
  std::copy(YShape.begin(), YShape.end(), P.Shape);
  P.NumOperands = 2;
  P.In[0] = P.Y = *XS;
  P.In[1] = *GS;
  P.Grid = *Opts;
  P.GridH = XShape[2];
  P.GridW = XShape[3];
  auto XStrides = codegen::getStrides(XT);
  std::copy(XStrides.begin(), XStrides.end(), P.GridXStrides);
  BufferId XB, GB, YB;
  if (llvm::Error E = C.bindBuffers(N, {{X, &XB}, {G, &GB}}, {{Y, &YB}}))
    return E;
  C.addStep({getStepNodes(N, T),
             "typed.grid_sample." + N.getStringAttr("mode", "linear") + " " +
                 getScalarTypeName(*XS),
             false, 0},
            P, {{XB, 0}, {GB, 0}, Arg(), {YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planResize(PlanContext &C, const Node &N,
                             const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const unsigned Rank = XT.getRank();
  const ChannelOrder XO = getSharedChannelOrder(XT, YT);
  if (Rank < 3 || Rank > 5 || XO == ChannelOrder::Other ||
      YT.getNumElements().getValueOr(0) == 0)
    return unsupported(N, "Resize from " + XT.str() + " to " + YT.str());
  std::vector<runtime::Tensor> Ops(4);
  const runtime::Tensor *Ptrs[4] = {nullptr, nullptr, nullptr, nullptr};
  for (unsigned I = 1; I < 4 && I < N.getNumOperands(); ++I) {
    if (!N.hasOperand(I))
      continue;
    const TensorData *D = N.getOperand(I)->getConstantData();
    if (!D)
      return unsupported(N, "Resize with scales or sizes computed at run time");
    if (D->getNumElements() == 0)
      continue;
    Ops[I] = runtime::Tensor::fromData(*D);
    Ptrs[I] = &Ops[I];
  }
  auto XShape = XT.getStaticShape(), YShape = YT.getStaticShape();
  auto Sampling = runtime::computeResizeSampling(N, XShape, YShape, Ptrs[1],
                                                 Ptrs[2], Ptrs[3]);
  if (!Sampling)
    return Sampling.takeError();
  // Batch and channels pass through only at their own sizes (a channel
  // count resized from 65 to 1 has one tap of weight 1: found by the
  // lowering fuzzer on the cpu backend, which wrote all 65).
  if (XShape[0] != YShape[0] || XShape[1] != YShape[1])
    return unsupported(N, "Resize along the batch or channel dim");
  ResizeParams P;
  P.N = XShape[0];
  P.C = XShape[1];
  P.Spatial = int(Rank - 2);
  P.ChannelsLast = XO == ChannelOrder::Last;
  P.Type = dtypeOf(X);
  P.Extrapolation = float(Sampling->ExtrapolationValue);
  // Batch and channels pass through; spatial axes become tap tables.
  std::vector<Arg> Tables;
  for (unsigned D = 0; D < Rank; ++D) {
    const runtime::ResizeAxis &A = Sampling->Axes[D];
    size_t Taps = 1;
    for (size_t O = 0; O < A.Taps.size(); ++O) {
      if (D < 2 && A.Extrapolated[O])
        return unsupported(N, "Resize with extrapolation along the batch or "
                              "channel dim");
      if (D < 2 && (A.Taps[O].size() != 1 || A.Taps[O][0].Index != int64_t(O) ||
                    A.Taps[O][0].Weight != 1.0))
        return unsupported(N, "Resize of the batch or channel dim");
      Taps = std::max(Taps, A.Taps[O].size());
    }
    if (D < 2)
      continue;
    const int S = int(D - 2);
    P.In[S] = XShape[D];
    P.Out[S] = YShape[D];
    P.Taps[S] = int(Taps);
    // Positions with fewer taps read index 0 with weight 0.
    std::vector<int32_t> Index(A.Taps.size() * Taps, 0);
    std::vector<float> Weight(A.Taps.size() * Taps, 0.0f);
    for (size_t O = 0; O < A.Taps.size(); ++O) {
      if (A.Extrapolated[O]) {
        Index[O * Taps] = -1; // Outside the input: the Extrapolation value.
        continue;
      }
      for (size_t K = 0; K < A.Taps[O].size(); ++K) {
        Index[O * Taps + K] = int32_t(A.Taps[O][K].Index);
        Weight[O * Taps + K] = float(A.Taps[O][K].Weight);
      }
    }
    std::vector<uint8_t> IndexBytes(Index.size() * sizeof(int32_t));
    if (!Index.empty())
      std::memcpy(IndexBytes.data(), Index.data(), IndexBytes.size());
    Tables.push_back({C.addConstant(std::move(IndexBytes)), 0});
    Tables.push_back({C.addConstantFloats(Weight), 0});
  }
  BufferId XB, YB;
  if (llvm::Error E = C.bindBuffers(N, {{X, &XB}}, {{Y, &YB}}))
    return E;
  std::vector<Arg> Args{{XB, 0}, {YB, 0}};
  Args.insert(Args.end(), Tables.begin(), Tables.end());
  C.addStep({getStepNodes(N, T),
             "resize." + N.getStringAttr("mode", "nearest") + " " +
                 getOrderName(P.ChannelsLast) + " " + getDTypeName(P.Type),
             false, 0},
            P, std::move(Args));
  return llvm::Error::success();
}
