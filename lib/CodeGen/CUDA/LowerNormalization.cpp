//===- LowerNormalization.cpp - Normalizations and LRN --------------------===//
//
// BatchNormalization as a per-channel epilogue (EpilogueParams), training
// BatchNormalization's statistics, Instance and LayerNormalization and LRN
// on the backend's own kernels, over the tensors' physical orders.
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

#include <cmath>

using namespace strider;
using namespace strider::cuda;

llvm::Error cuda::planBatchNorm(PlanContext &C, const Node &N,
                                const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = T.Result;
  const TensorType &XT = X->getType();
  const bool Training = N.getIntAttr("training_mode", 0) != 0;
  if (T.Residual || N.getNumOperands() != 5 ||
      !codegen::haveSameElementOrder(XT, Y->getType()))
    return unsupported(N, "BatchNormalization in this form (a layout "
                          "change)");
  if ((!Training && (N.hasResult(1) || N.hasResult(2))) || N.hasResult(3) ||
      N.hasResult(4))
    return unsupported(N, "BatchNormalization with these results");
  auto Shape = XT.getStaticShape();
  if (Shape.size() < 2)
    return unsupported(N, "BatchNormalization of rank < 2");
  const int64_t Ch = Shape[1];
  const float Eps = N.getFloatAttr("epsilon", 1e-5f);
  const ChannelOrder O = codegen::getChannelOrder(XT);
  if (Shape.size() > 2 && O == ChannelOrder::Other)
    return unsupported(N, "BatchNormalization in layout " + XT.str());
  // Inference: the statistics folded into a scale and shift per channel
  // here. Training: a step computes them from the batch first.
  Arg SArg, BArg;
  if (Training) {
    BatchStatsParams B;
    B.N = Shape[0];
    B.C = Ch;
    B.Pixels = getPixels(Shape);
    B.ChannelsLast = Shape.size() > 2 && O == ChannelOrder::Last;
    B.Type = dtypeOf(X);
    B.Epsilon = Eps;
    B.Momentum = N.getFloatAttr("momentum", 0.9f);
    auto XB = C.getBuffer(X, N);
    if (!XB)
      return XB.takeError();
    std::vector<Arg> StatsArgs{{*XB, 0}};
    for (unsigned I = 1; I < 5; ++I) {
      const Value *V = N.getOperand(I);
      if (V->getType().getElementType() != ElementType::F32 ||
          V->getType().getNumElements().getValueOr(-1) != Ch)
        return unsupported(N, "BatchNormalization in training mode with "
                              "statistics of type " +
                                  V->getType().str() + " (f32 [C] only)");
      auto VB = C.getBuffer(V, N);
      if (!VB)
        return VB.takeError();
      StatsArgs.push_back({*VB, 0});
    }
    SArg = {C.addScratch(Ch * 4), 0};
    BArg = {C.addScratch(Ch * 4), 0};
    StatsArgs.push_back(SArg);
    StatsArgs.push_back(BArg);
    for (unsigned I = 1; I < 3; ++I) {
      const Value *R = N.hasResult(I) ? N.getResult(I) : nullptr;
      if (!R) {
        StatsArgs.push_back(Arg());
        continue;
      }
      if (R->getType().getElementType() != ElementType::F32)
        return unsupported(N, "BatchNormalization running statistics of "
                              "type " +
                                  R->getType().str());
      auto RB = C.defineBuffer(R, N);
      if (!RB)
        return RB.takeError();
      StatsArgs.push_back({*RB, 0});
    }
    C.addStep({getStepNodes(N, T),
               std::string("batchnorm.statistics ") +
                   getOrderName(B.ChannelsLast) + " " + getDTypeName(B.Type),
               false, 0},
              B, StatsArgs);
  } else {
    std::vector<float> Scale = getConstantFloats(N.getOperand(1)),
                       Bias = getConstantFloats(N.getOperand(2)),
                       Mean = getConstantFloats(N.getOperand(3)),
                       Var = getConstantFloats(N.getOperand(4));
    for (const std::vector<float> *V : {&Scale, &Bias, &Mean, &Var})
      if (int64_t(V->size()) != Ch)
        return unsupported(N, "BatchNormalization with non-constant or "
                              "mis-sized statistics");
    for (int64_t I = 0; I < Ch; ++I) {
      const float S = Scale[size_t(I)] / std::sqrt(Var[size_t(I)] + Eps);
      Scale[size_t(I)] = S;
      Bias[size_t(I)] -= Mean[size_t(I)] * S;
    }
    SArg = {C.addConstantFloats(Scale), 0};
    BArg = {C.addConstantFloats(Bias), 0};
  }
  EpilogueParams P;
  P.Count = XT.getNumElements().getValueOr(0);
  P.Channels = Ch;
  P.ChannelStride =
      Shape.size() == 2 || O == ChannelOrder::Last ? 1 : getPixels(Shape);
  P.Act = T.Act;
  P.XType = dtypeOf(X);
  P.YType = dtypeOf(Y);
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  C.addStep({getStepNodes(N, T),
             std::string("epilogue.batchnorm ") +
                 getOrderName(P.ChannelStride == 1 && Shape.size() > 2) +
                 (P.Act.isNone() ? "" : std::string("+") + P.Act.getName()),
             false, 0},
            P, {{XB, 0}, SArg, BArg, Arg(), {YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planNorm(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType();
  if (T.Residual || !T.Act.isNone() || T.Result != Y ||
      !codegen::haveSameElementOrder(XT, Y->getType()))
    return unsupported(N, N.getOpType() + " in this form (a layout change)");
  // LayerNormalization's Mean and InvStdDev: f32, one per line, dense in
  // the order X stores its lines (the dims of more than one element in
  // the same physical order).
  const Value *Stats[2] = {N.getNumResults() > 1 ? N.getResult(1) : nullptr,
                           N.getNumResults() > 2 ? N.getResult(2) : nullptr};
  auto LineOrder = [](const TensorType &VT) {
    llvm::SmallVector<unsigned, 6> Order;
    auto Shape = VT.getStaticShape();
    for (unsigned D : VT.getLayout().getPermutation(VT.getRank()))
      if (Shape[D] > 1)
        Order.push_back(D);
    return Order;
  };
  for (const Value *V : Stats) {
    if (!V)
      continue;
    const TensorType &VT = V->getType();
    llvm::SmallVector<unsigned, 6> XLines;
    for (unsigned D : LineOrder(XT))
      if (VT.getRank() == XT.getRank() && VT.getStaticShape()[D] > 1)
        XLines.push_back(D);
    if (VT.getElementType() != ElementType::F32 ||
        VT.getRank() != XT.getRank() || LineOrder(VT) != XLines)
      return unsupported(N, N.getOpType() + " with statistics results " +
                                VT.str() + " of " + XT.str());
  }
  auto Shape = XT.getStaticShape();
  const int64_t R = int64_t(Shape.size());
  NormParams P;
  int64_t NormAxis = R; // LayerNormalization: the first normalized dim.
  P.Epsilon = N.getFloatAttr("epsilon", 1e-5f);
  P.XType = dtypeOf(X);
  P.YType = dtypeOf(Y);
  if (N.getOpId() == OpId::InstanceNormalization) {
    const ChannelOrder O = codegen::getChannelOrder(XT);
    if (R < 3 || O == ChannelOrder::Other)
      return unsupported(N, "InstanceNormalization in layout " + XT.str());
    P.Reduced = getPixels(Shape);
    P.Channels = Shape[1];
    if (O == ChannelOrder::First) {
      P.Outer = Shape[0] * Shape[1];
      P.Affine = NormParams::ByOuterChannel;
    } else {
      P.Outer = Shape[0];
      P.Inner = Shape[1];
      P.Affine = NormParams::ByInner;
    }
  } else {
    int64_t Axis = N.getIntAttr("axis", -1);
    if (Axis < 0)
      Axis += R;
    if (Axis < 0 || Axis >= R)
      return unsupported(N,
                         "LayerNormalization over axis " + llvm::Twine(Axis));
    NormAxis = Axis;
    std::vector<bool> Middle(size_t(R), false);
    for (int64_t I = Axis; I < R; ++I)
      Middle[size_t(I)] = true;
    // The normalized dims must be one block of X's physical dims; lines
    // are rows (innermost block) or columns (a block with dims after it).
    if (!codegen::splitAround(XT, Middle, P.Outer, P.Reduced, P.Inner))
      return unsupported(N, "LayerNormalization whose normalized dims are "
                            "apart in layout " +
                                XT.str());
    P.Affine = NormParams::ByReduced;
  }
  const int64_t Affine =
      P.Affine == NormParams::ByReduced
          ? P.Reduced
          : (P.Affine == NormParams::ByInner ? P.Inner : P.Channels);
  std::vector<float> Scale = getConstantFloats(N.getOperand(1));
  std::vector<float> Bias = N.hasOperand(2) ? getConstantFloats(N.getOperand(2))
                                            : std::vector<float>();
  if (int64_t(Scale.size()) != Affine ||
      (N.hasOperand(2) && int64_t(Bias.size()) != Affine))
    return unsupported(N, N.getOpType() +
                              " with non-constant or broadcast scale/bias");
  // For LayerNormalization the affine index runs over the normalized dims
  // in physical order, the constants in logical order: arrange the
  // constants in physical order here.
  if (P.Affine == NormParams::ByReduced) {
    llvm::SmallVector<int64_t, 6> Phys; // Normalized dims, physical order.
    for (unsigned D : XT.getLayout().getPermutation(XT.getRank()))
      if (int64_t(D) >= NormAxis)
        Phys.push_back(D);
    auto Arrange = [&](std::vector<float> &V) {
      if (V.empty())
        return;
      std::vector<float> Out(V.size());
      for (int64_t K = 0; K < int64_t(V.size()); ++K) {
        // K's index per normalized dim (physical order), then its
        // logical row-major position.
        llvm::SmallVector<int64_t, 6> Idx(size_t(R), 0);
        int64_t Rest = K;
        for (size_t J = Phys.size(); J-- > 0;) {
          Idx[size_t(Phys[J])] = Rest % Shape[size_t(Phys[J])];
          Rest /= Shape[size_t(Phys[J])];
        }
        int64_t L = 0;
        for (int64_t D = NormAxis; D < R; ++D)
          L = L * Shape[size_t(D)] + Idx[size_t(D)];
        Out[size_t(K)] = V[size_t(L)];
      }
      V = std::move(Out);
    };
    Arrange(Scale);
    Arrange(Bias);
  }
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  Arg SArg{C.addConstantFloats(Scale), 0}, BArg;
  if (!Bias.empty())
    BArg.Buffer = C.addConstantFloats(Bias);
  std::vector<Arg> Args{{XB, 0}, SArg, BArg, {YB, 0}};
  for (const Value *V : Stats) {
    Args.emplace_back();
    if (V) {
      auto B = C.defineBuffer(V, N);
      if (!B)
        return B.takeError();
      Args.back().Buffer = *B;
    }
  }
  C.addStep({getStepNodes(N, T),
             std::string("norm.") + N.getOpType().lower() +
                 (P.Inner == 1 ? ".rows" : ".strided") + " " +
                 getDTypeName(P.XType) +
                 (Stats[0] || Stats[1] ? "+statistics" : ""),
             false, 0},
            P, std::move(Args));
  return llvm::Error::success();
}

llvm::Error cuda::planLrn(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = T.Result;
  const TensorType &XT = X->getType();
  const int64_t R = XT.getRank();
  if (T.Residual || !T.Act.isNone() || R < 3 ||
      !codegen::haveSameElementOrder(XT, Y->getType()) ||
      dtypeOf(X) != dtypeOf(Y))
    return unsupported(N, "LRN in this form");
  std::vector<bool> Channels(size_t(R), false);
  Channels[1] = true;
  LrnParams P;
  if (!codegen::splitAround(XT, Channels, P.Outer, P.Len, P.Inner))
    return unsupported(N, "LRN in layout " + XT.str());
  P.Size = N.getIntAttr("size", 0);
  P.Alpha = N.getFloatAttr("alpha", 1e-4f);
  P.Beta = N.getFloatAttr("beta", 0.75f);
  P.Bias = N.getFloatAttr("bias", 1.0f);
  P.Type = dtypeOf(X);
  if (P.Size < 1)
    return unsupported(N, "LRN of size " + llvm::Twine(P.Size));
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  C.addStep({getStepNodes(N, T),
             std::string("lrn") + (P.Inner == 1 ? ".rows " : ".strided ") +
                 getDTypeName(P.Type),
             false, 0},
            P, {{XB, 0}, {YB, 0}});
  return llvm::Error::success();
}
