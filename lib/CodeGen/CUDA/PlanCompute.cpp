//===- PlanCompute.cpp - Elementwise, normalization, pooling, reductions --===//
//
// The ops the backend's own kernels compute: elementwise chains (with the
// activation of their fusion group), BatchNormalization as a per-channel
// epilogue, Instance/LayerNormalization, LRN, pooling, reductions and
// softmax.
// Each is described by its kernel's parameter struct (Kernels.h) over the
// tensors' physical orders, so channels-last runs without relayouts.
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

#include "strider/CodeGen/TensorGeometry.h"
#include "strider/IR/LayoutAlgebra.h"
#include "strider/IR/WindowGeometry.h"

#include <cmath>

using namespace strider;
using namespace strider::cuda;
using codegen::ChannelOrder;
using codegen::FusedTail;

namespace {

const std::pair<OpId, BinaryOp> BinaryOps[] = {
    {OpId::Add, BinaryOp::Add}, {OpId::Sub, BinaryOp::Sub},
    {OpId::Mul, BinaryOp::Mul}, {OpId::Div, BinaryOp::Div},
    {OpId::Pow, BinaryOp::Pow}, {OpId::Max, BinaryOp::Max},
    {OpId::Min, BinaryOp::Min}, {OpId::PRelu, BinaryOp::PRelu},
    {OpId::Sum, BinaryOp::Add},
};

const std::pair<OpId, ReduceParams::Kind> ReduceKinds[] = {
    {OpId::ReduceSum, ReduceParams::Sum},
    {OpId::ReduceMean, ReduceParams::Mean},
    {OpId::ReduceMax, ReduceParams::Max},
    {OpId::ReduceMin, ReduceParams::Min},
    {OpId::ReduceProd, ReduceParams::Prod},
    {OpId::ReduceL2, ReduceParams::L2},
    {OpId::ReduceSumSquare, ReduceParams::SumSquare},
};

bool sameLayoutBytes(const TensorType &A, const TensorType &B) {
  return A.getShape() == B.getShape() &&
         layout::areLayoutsEquivalent(A.getShape(), A.getLayout(),
                                      B.getLayout(), layout::DimBindings());
}

/// Pixels of a (N, C, spatial...) shape.
int64_t getPixels(llvm::ArrayRef<int64_t> Shape) {
  int64_t P = 1;
  for (size_t I = 2; I < Shape.size(); ++I)
    P *= Shape[I];
  return P;
}

DType dtypeOf(const Value *V) {
  return getDType(V->getType().getElementType()).getValueOr(DType::F32);
}

/// The buffer of float operand \p V, or for an integer constant (Pow's
/// exponent, an offset) its values as f32: what dtypeOf says it is.
llvm::Expected<BufferId> getFloatOperand(PlanContext &C, const Value *V,
                                         const Node &N) {
  const TensorData *D = V->getConstantData();
  if (!D || isFloatingPoint(V->getType().getElementType()))
    return C.getBuffer(V, N);
  const runtime::Tensor Ints = runtime::Tensor::fromData(*D);
  runtime::Tensor F = runtime::Tensor::zeros(
      TensorType::get(ElementType::F32, Ints.getShape()));
  for (int64_t I = 0; I < F.getNumElements(); ++I)
    F.setDouble(I, double(Ints.getInt(I)));
  F = F.withLayout(V->getType().getLayout());
  llvm::ArrayRef<uint8_t> Bytes = F.getBytes();
  return C.addConstant(std::vector<uint8_t>(Bytes.begin(), Bytes.end()));
}

} // namespace

llvm::Error cuda::planElementwise(PlanContext &C, const Node &N,
                                  const FusedTail &T) {
  const Value *Y = T.Result;
  const TensorType &YT = Y->getType();
  if (!YT.hasStaticShape())
    return unsupported(N, "an elementwise op to " + YT.str());
  if (T.Residual)
    return unsupported(N, "a residual Add after an elementwise op");
  ElementwiseParams P;
  P.YType = dtypeOf(Y);
  const Value *A = N.getOperand(0), *B = nullptr;
  const auto *Bin = llvm::find_if(
      BinaryOps, [&](const auto &E) { return E.first == N.getOpId(); });
  // Variadic Sum, Max and Min of more than two operands: the first two
  // into Y, then each further one into Y in place; of one operand, a copy
  // (with the group's activation).
  const unsigned Operands = N.getNumOperands();
  if (Bin != std::end(BinaryOps) && Operands != 1) {
    if (Operands < 2 || (Operands > 2 && N.getOpId() != OpId::Sum &&
                         N.getOpId() != OpId::Max && N.getOpId() != OpId::Min))
      return unsupported(N, "op '" + N.getOpType() + "' of " +
                                llvm::Twine(Operands) + " operands");
    P.Op = Bin->second;
    P.Act = T.Act;
    B = N.getOperand(1);
  } else if (N.getOpId() == OpId::Sum || N.getOpId() == OpId::Max ||
             N.getOpId() == OpId::Min) {
    P.Act = T.Act; // One operand: a copy.
  } else {
    if (!codegen::getFusableActivation(N, P.Act))
      return unsupported(N,
                         "op '" + N.getOpType() + "' on " + A->getType().str());
    if (!T.Act.isNone())
      return unsupported(N, "an activation after an activation");
  }
  // Unary ops read operand 0 only (Clip's bounds are attributes of the
  // fused activation).
  for (unsigned I = 0; I < (B ? Operands : 1u); ++I) {
    const TensorType &VT = N.getOperand(I)->getType();
    if (VT.getRank() > YT.getRank())
      return unsupported(N, "broadcasting " + VT.str() + " to " + YT.str());
    // The kernel reads A in the result's type, B in it or in f32.
    const DType VD = dtypeOf(N.getOperand(I));
    if (VD != P.YType && !(I > 0 && B && VD == DType::F32))
      return unsupported(N, "op '" + N.getOpType() + "' from " + VT.str() +
                                " to " + YT.str() +
                                " (operands of the result's type; the "
                                "second may be f32)");
  }
  // Per physical dim of Y, the strides of every operand read and Y's own
  // (dense); past MaxRank dims, those that nest in all of them merge (a
  // rank-7 loss expanded into elementwise ops).
  const unsigned R = YT.getRank();
  const unsigned Reads = B ? Operands : 1u;
  llvm::SmallVector<int64_t, 12> Shape(R);
  codegen::getPhysicalShape(YT, Shape.data());
  std::vector<DimStrides> Str(Reads + 1, DimStrides(R));
  for (unsigned I = 0; I < Reads; ++I)
    codegen::getBroadcastStrides(N.getOperand(I)->getType(), YT, Str[I].data());
  codegen::getBroadcastStrides(YT, YT, Str[Reads].data());
  if (R > unsigned(MaxRank))
    collapseDims(Shape, Str);
  if (Shape.size() > size_t(MaxRank))
    return unsupported(N, "an elementwise op to " + YT.str() + " (more than " +
                              llvm::Twine(MaxRank) + " dims after merging)");
  P.Rank = int(Shape.size());
  std::copy(Shape.begin(), Shape.end(), P.Shape);
  std::copy(Str[0].begin(), Str[0].end(), P.AStrides);
  P.AType = dtypeOf(A);
  if (B) {
    std::copy(Str[1].begin(), Str[1].end(), P.BStrides);
    P.BType = dtypeOf(B);
  }
  auto AB = getFloatOperand(C, A, N);
  if (!AB)
    return AB.takeError();
  Arg BArg;
  if (B) {
    auto BB = getFloatOperand(C, B, N);
    if (!BB)
      return BB.takeError();
    BArg.Buffer = *BB;
  }
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  std::string Kernel = "elementwise.";
  Kernel += B ? N.getOpType().lower() : std::string(P.Act.getName());
  if (B && !P.Act.isNone())
    Kernel += std::string("+") + P.Act.getName();
  Kernel += std::string(" ") + getDTypeName(P.YType);
  if (!B || Operands == 2) {
    C.addStep({getStepNodes(N, T), Kernel, false, 0}, P,
              {{*AB, 0}, BArg, {*YB, 0}});
    return llvm::Error::success();
  }
  // The activation goes with the last operand; the partial results are
  // Y read in place, through its own strides. Every buffer first: a
  // refused group is planned again node by node.
  std::vector<BufferId> More;
  for (unsigned I = 2; I < Operands; ++I) {
    auto VB = getFloatOperand(C, N.getOperand(I), N);
    if (!VB)
      return VB.takeError();
    More.push_back(*VB);
  }
  ElementwiseParams First = P;
  First.Act = codegen::Activation();
  C.addStep({getStepNodes(N, T),
             Kernel + " (operands 1-2 of " + std::to_string(Operands) + ")",
             false, 0},
            First, {{*AB, 0}, BArg, {*YB, 0}});
  for (unsigned I = 2; I < Operands; ++I) {
    const Value *V = N.getOperand(I);
    ElementwiseParams Next = P;
    if (I + 1 < Operands)
      Next.Act = codegen::Activation();
    std::copy(Str[Reads].begin(), Str[Reads].end(), Next.AStrides);
    Next.AType = P.YType;
    std::copy(Str[I].begin(), Str[I].end(), Next.BStrides);
    Next.BType = dtypeOf(V);
    const BufferId VB = More[I - 2];
    C.addStep({getStepNodes(N, T),
               Kernel + " (operand " + std::to_string(I + 1) + " of " +
                   std::to_string(Operands) + ")",
               false, 0},
              Next, {{*YB, 0}, {VB, 0}, {*YB, 0}});
  }
  return llvm::Error::success();
}

llvm::Error cuda::planBatchNorm(PlanContext &C, const Node &N,
                                const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = T.Result;
  const TensorType &XT = X->getType();
  const bool Training = N.getIntAttr("training_mode", 0) != 0;
  if (T.Residual || N.getNumOperands() != 5 ||
      !sameLayoutBytes(XT, Y->getType()))
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
      !sameLayoutBytes(XT, Y->getType()))
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
  for (int I = 0; I < P.Spatial; ++I) {
    const WindowAxis &A = (*Axes)[size_t(I)];
    P.In[I] = XS[size_t(I) + 2];
    P.Out[I] = YS[size_t(I) + 2];
    P.Kernel[I] = A.Kernel;
    P.Stride[I] = A.Stride;
    P.Dilation[I] = A.Dilation;
    P.PadBegin[I] = A.PadBegin;
    P.PadEnd[I] = A.PadEnd;
  }
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
      !sameLayoutBytes(XT, Y->getType()))
    return unsupported(N, N.getOpType() + " in this form");
  if (Axis < 0)
    Axis += R;
  std::vector<bool> Middle(size_t(R), false);
  Middle[size_t(Axis)] = true;
  SoftmaxParams P;
  if (!codegen::splitAround(XT, Middle, P.Outer, P.Axis, P.Inner))
    return unsupported(N, N.getOpType() + " in layout " + XT.str());
  P.Log = N.getOpId() == OpId::LogSoftmax;
  P.XType = dtypeOf(X);
  P.YType = dtypeOf(Y);
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

llvm::Error cuda::planLrn(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = T.Result;
  const TensorType &XT = X->getType();
  const int64_t R = XT.getRank();
  if (T.Residual || !T.Act.isNone() || R < 3 ||
      !sameLayoutBytes(XT, Y->getType()) || dtypeOf(X) != dtypeOf(Y))
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
