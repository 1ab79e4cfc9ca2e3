//===- CostModel.cpp - Estimated kernel and relayout times ----------------===//
//
// The op layout table (the STRIDER_OP_LAYOUT entries of IR/Ops.def) and
// the analytic time estimates of kernels and relayouts on a target (when a
// layout change is free is IR/LayoutAlgebra.h's).
//
//===----------------------------------------------------------------------===//

#include "strider/Layout/CostModel.h"

#include "strider/IR/Graph.h"
#include "strider/Layout/Tuning.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>

using namespace strider;
using namespace strider::layout;

//===----------------------------------------------------------------------===//
// The op layout table
//===----------------------------------------------------------------------===//

namespace {
struct OpLayoutEntry {
  OpId Id;
  OpLayoutRule Rule;
};

constexpr OpLayoutEntry OpLayoutTable[] = {
#define STRIDER_OP_LAYOUT(Id, Operands, Results, Kernels, Cost)                \
  {OpId::Id,                                                                   \
   {OperandRule::Operands, ResultRule::Results, KernelRule::Kernels,           \
    CostKind::Cost}},
#include "strider/IR/Ops.def"
};

constexpr bool isTableInOpOrder() {
  for (unsigned I = 0; I < std::size(OpLayoutTable); ++I)
    if (static_cast<unsigned>(OpLayoutTable[I].Id) != I)
      return false;
  return true;
}
static_assert(std::size(OpLayoutTable) == static_cast<size_t>(OpId::Opaque),
              "Ops.def needs one STRIDER_OP_LAYOUT entry per op");
static_assert(isTableInOpOrder(), "Ops.def's STRIDER_OP_LAYOUT entries must follow its op order");

constexpr OpLayoutRule OpaqueRule = {OperandRule::All, ResultRule::None,
                                     KernelRule::ChannelsFirst,
                                     CostKind::Memory};
} // namespace

const OpLayoutRule &layout::getOpLayoutRule(const Node &N) {
  if (N.isOpaque())
    return OpaqueRule;
  return OpLayoutTable[static_cast<unsigned>(N.getOpId())].Rule;
}

Layout layout::getLabelLayout(LayoutLabel L, unsigned Rank) {
  return L == ChannelsLast ? Layout::getChannelsLast(Rank) : Layout();
}

std::string layout::getLabelName(LayoutLabel L, unsigned Rank) {
  return getLabelLayout(L, Rank).getName(Rank);
}

//===----------------------------------------------------------------------===//
// Times
//===----------------------------------------------------------------------===//

int64_t CostModel::getNumBytes(const TensorType &T) const {
  if (!T.hasRank())
    return 0;
  int64_t N = getElementByteSize(T.getElementType());
  if (N == 0)
    N = 4;
  // Costed sizes are not bound by the size limit (a symbol may be costed
  // at any size): saturate rather than wrap.
  for (const Dim &D : T.getShape())
    if (llvm::MulOverflow(N, Dims.getCostSize(D), N))
      return INT64_MAX;
  return N;
}

/// \p Ps as a Cost, saturated at MaxFiniteCost (a measured or calibrated
/// figure can be absurd; the solver needs finite, non-negative costs whose
/// sums over a graph stay below InfiniteCost).
static Cost toCost(double Ps) {
  if (!(Ps > 0))
    return 0;
  if (Ps >= double(MaxFiniteCost))
    return MaxFiniteCost;
  return static_cast<Cost>(std::llround(Ps));
}

Cost CostModel::timeForBytes(double Bytes, double GBs) const {
  // bytes / (GB/s) = nanoseconds; the unit is picoseconds.
  return toCost(Bytes * 1000.0 / GBs);
}

Cost CostModel::getRelayoutCost(const TensorType &T) const {
  if (!T.hasRank() || T.getRank() < 3 || T.getRank() > 5)
    return 0;
  unsigned R = T.getRank();
  if (areLayoutsEquivalent(T.getShape(), getLabelLayout(ChannelsFirst, R),
                           getLabelLayout(ChannelsLast, R), Dims))
    return 0;
  if (Tuning) {
    double Ns = Tuning->lookupRelayout(TuningTable::getRelayoutKey(T, Dims));
    if (Ns >= 0)
      return toCost(Ns * 1000.0);
  }
  return getMoveCost(T);
}

Cost CostModel::getMoveCost(const TensorType &T) const {
  return toCost(double(timeForBytes(getNumBytes(T), Target.RelayoutGBs)) +
                Target.KernelLaunchNs * 1000.0);
}

ConvShapeEstimate
layout::estimateConvShape(llvm::ArrayRef<int64_t> X, llvm::ArrayRef<int64_t> W,
                          llvm::ArrayRef<int64_t> Y, int64_t Group,
                          llvm::ArrayRef<int64_t> Strides, bool Transposed,
                          unsigned VectorWidth) {
  auto Product = [](llvm::ArrayRef<int64_t> S) {
    double P = 1;
    for (int64_t D : S)
      P *= double(D);
    return P;
  };
  Group = std::max<int64_t>(1, Group);
  double Batch = double(Y[0]), Cin = double(X[1]), Cout = double(Y[1]);
  double Kernel = Product(W.drop_front(2));
  double OutSpatial = Product(Y.drop_front(2));
  double InSpatial = Product(X.drop_front(2));
  double Width = double(Y.back());
  ConvShapeEstimate E;
  // Multiply-adds: every output (input, for ConvTranspose) point of every
  // channel meets Cin/group (Cout/group) channels of a kernel window.
  E.Macs = Transposed
               ? Batch * Cin * InSpatial * double(Y[1] / Group) * Kernel
               : Batch * Cout * OutSpatial * double(X[1] / Group) * Kernel;
  bool Depthwise = Group > 1 && Group == X[1] && Group == Y[1];
  bool UnitStride = llvm::all_of(Strides, [](int64_t S) { return S == 1; });
  double VW = VectorWidth;
  double LastLanes, FirstLanes;
  if (Depthwise) {
    E.Kind = ConvShapeEstimate::Depthwise;
    LastLanes = Cout;
    FirstLanes = Width;
  } else if (!Transposed && Group == 1 && Kernel == 1 && UnitStride) {
    E.Kind = ConvShapeEstimate::Pointwise;
    LastLanes = Cout;
    FirstLanes = OutSpatial;
  } else {
    E.Kind = ConvShapeEstimate::Dense;
    LastLanes = double(Y[1] / Group);
    FirstLanes = Width;
  }
  E.VectorFill[ChannelsLast] = std::max(1e-3, std::min(1.0, LastLanes / VW));
  E.VectorFill[ChannelsFirst] = std::max(1e-3, std::min(1.0, FirstLanes / VW));
  return E;
}

const double *layout::getConvEfficiencies(const ConvEfficiency &E,
                                          ConvShapeEstimate::KindTy Kind) {
  switch (Kind) {
  case ConvShapeEstimate::Depthwise:
    return E.Depthwise;
  case ConvShapeEstimate::Pointwise:
    return E.Pointwise;
  case ConvShapeEstimate::Dense:
    break;
  }
  return E.Dense;
}

/// The weight operand of a conv: QLinearConv's is its fourth.
static unsigned getConvWeightOperand(const Node &N) {
  return N.getOpId() == OpId::QLinearConv ? 3 : 1;
}

Cost CostModel::getConvCost(const Node &N, LayoutLabel L,
                            bool Transposed) const {
  const TensorType &X = N.getOperand(0)->getType();
  const TensorType &W = N.getOperand(getConvWeightOperand(N))->getType();
  const TensorType &Y = N.getResult(0)->getType();
  if (!X.hasRank() || !W.hasRank() || !Y.hasRank() || X.getRank() < 3 ||
      W.getRank() != X.getRank() || Y.getRank() != X.getRank())
    return getMemoryCost(N, L); // Unranked: shape inference did not run.
  if (!Transposed) {
    Cost Measured = getMeasuredConvCost(
        N, L == ChannelsLast ? ReadLastWriteLast : ReadFirstWriteFirst);
    if (Measured >= 0)
      return Measured;
  }
  auto Sizes = [&](const TensorType &T) {
    llvm::SmallVector<int64_t, 5> S;
    for (const Dim &D : T.getShape())
      S.push_back(Dims.getCostSize(D));
    return S;
  };
  ConvShapeEstimate S = estimateConvShape(
      Sizes(X), Sizes(W), Sizes(Y), N.getIntAttr("group", 1),
      N.getIntsAttr("strides"), Transposed, Target.VectorWidth);
  double Eff = std::max(
      getConvEfficiencies(Target.Conv, S.Kind)[L] * S.VectorFill[L], 0.01);
  double ComputePs = 2.0 * S.Macs / (Target.PeakGFlops * Eff) * 1000.0;
  // 8-bit operands: four multiply-adds per 32-bit lane and step (VNNI's
  // vpdpbusd) where an f32 FMA does one. A depthwise one has its direct
  // kernel only channels-last; otherwise it runs a GEMM per channel with
  // one output column, one lane of each vector used (0.3 GFLOP/s against
  // 10-20 on PP-OCRv4's detector).
  if (getElementByteSize(X.getElementType()) == 1) {
    ComputePs /= 4.0;
    if (S.Kind == ConvShapeEstimate::Depthwise && L != ChannelsLast)
      ComputePs *= 4.0 * Target.VectorWidth;
  }
  double Bytes = getNumBytes(X) + getNumBytes(Y) + getNumBytes(W);
  double MemoryPs = Bytes * 1000.0 / Target.MemoryGBs;
  return toCost(std::max(ComputePs, MemoryPs) + Target.KernelLaunchNs * 1000.0);
}

int CostModel::getOfferedMixedVariant(const Node &N) const {
  if (N.getOpId() != OpId::Conv || !N.hasOperand(0) || !N.hasOperand(1) ||
      !N.hasResult(0))
    return -1;
  const TensorType &X = N.getOperand(0)->getType();
  if (!X.hasRank() || X.getRank() < 3)
    return -1;
  int64_t Cin = Dims.getKnownSize(X.getDim(1));
  bool FirstLayer = Target.HasMixedFirstConv && N.getIntAttr("group", 1) == 1 &&
                    Cin >= 1 && Cin <= 4;
  if (FirstLayer)
    return ReadFirstWriteLast;
  return Target.HasMixedLastConv ? ReadLastWriteFirst : -1;
}

const ConvTiming *CostModel::lookupConvTiming(const Node &N) const {
  if (!Tuning)
    return nullptr;
  ConvConfig C;
  if (!ConvConfig::fromNode(N, Dims, C))
    return nullptr;
  const ConvTiming *T = Tuning->lookupConv(C.getKey());
  if (!T || llvm::none_of(T->Ns, [](double Ns) { return Ns >= 0; }))
    return nullptr;
  return T;
}

Cost CostModel::getMeasuredConvCost(const Node &N, unsigned V) const {
  const ConvTiming *T = lookupConvTiming(N);
  if (!T)
    return -1;
  // `-`: the backend has no kernel for this variant (it would run the
  // reference kernel).
  if (T->Ns[V] < 0)
    return InfiniteCost;
  // Variants within the table's margin of the fastest one offered cost the
  // same: their difference is not significant, so the rest of the graph
  // (relayouts, neighbours) decides between them.
  double Best = T->Ns[V];
  int Mixed = getOfferedMixedVariant(N);
  for (int W : {int(ReadFirstWriteFirst), int(ReadLastWriteLast), Mixed})
    if (W >= 0 && T->Ns[W] >= 0)
      Best = std::min(Best, T->Ns[W]);
  double Ns = T->Ns[V] <= Best * (1.0 + Tuning->Margin) ? Best : T->Ns[V];
  return toCost(Ns * 1000.0);
}

bool CostModel::isMeasured(const Node &N) const {
  return lookupConvTiming(N) != nullptr;
}

Cost CostModel::getNodeCost(const Node &N, LayoutLabel L) const {
  const OpLayoutRule &Rule = getOpLayoutRule(N);
  if (L == ChannelsLast && Rule.Kernels == KernelRule::ChannelsFirst)
    return InfiniteCost;
  switch (Rule.Kind) {
  case CostKind::Conv:
  case CostKind::ConvTranspose:
    if (N.getNumOperands() > getConvWeightOperand(N) && N.getOperand(0) &&
        N.getOperand(getConvWeightOperand(N)) && N.getResult(0))
      return getConvCost(N, L, Rule.Kind == CostKind::ConvTranspose);
    break;
  case CostKind::View:
  case CostKind::Free:
    return 0;
  case CostKind::Memory:
    break;
  }
  return getMemoryCost(N, L);
}

Cost CostModel::getMemoryCost(const Node &N, LayoutLabel L) const {
  double Bytes = 0;
  for (Value *V : N.getOperands())
    if (V)
      Bytes += getNumBytes(V->getType());
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (Value *R = N.getResult(I))
      Bytes += getNumBytes(R->getType());
  double Ps = Bytes * 1000.0 / Target.MemoryGBs;
  if (L == ChannelsFirst && !N.isOpaque() &&
      N.getInfo()->Layout == LayoutClass::Spatial)
    Ps *= Target.SpatialChannelsFirstPenalty;
  return toCost(Ps + Target.KernelLaunchNs * 1000.0);
}

Cost CostModel::getMixedConvCost(const Node &N, LayoutLabel Read) const {
  // At most one direction per conv: reading channels-first for few input
  // channels (first layers), else reading channels-last with the relayout
  // fused into the store.
  int Offered = getOfferedMixedVariant(N);
  ConvVariant V =
      Read == ChannelsFirst ? ReadFirstWriteLast : ReadLastWriteFirst;
  if (Offered != int(V))
    return InfiniteCost;
  // A measured variant replaces the estimate: the channels-last kernel plus
  // one more pass over the tensor read or written in the other layout
  // (strided loads of a few input channels, or output tiles transposed in
  // registers before they are stored).
  Cost Measured = getMeasuredConvCost(N, V);
  if (Measured >= 0)
    return Measured;
  const TensorType &Other = Read == ChannelsFirst ? N.getOperand(0)->getType()
                                                  : N.getResult(0)->getType();
  return toCost(double(getConvCost(N, ChannelsLast, /*Transposed=*/false)) +
                double(timeForBytes(getNumBytes(Other), Target.MemoryGBs)));
}

Cost CostModel::getViewCost(const Node &N, const Layout &In,
                            const Layout &Out) const {
  const TensorType &X = N.getOperand(0)->getType();
  const TensorType &Y = N.getResult(0)->getType();
  TensorType XL = X.withLayout(In), YL = Y.withLayout(Out);
  bool Free;
  if (N.getOpId() == OpId::Transpose) {
    Free = isTransposeView(XL, getTransposePerm(N), YL, Dims);
  } else {
    Free = isReshapeBitcast(XL, YL, Dims);
  }
  if (Free)
    return 0;
  return getMoveCost(Y);
}

bool CostModel::canPermuteConsumerWeights(const Node &View) const {
  if (View.getOpId() != OpId::Flatten && View.getOpId() != OpId::Reshape)
    return false;
  const TensorType &X = View.getOperand(0)->getType();
  Value *Y = View.getResult(0);
  const TensorType &YT = Y->getType();
  if (!X.hasRank() || X.getRank() < 3 || X.getRank() > 5 || !YT.hasRank() ||
      YT.getRank() != 2 || Y->getGraph()->isGraphOutput(Y) || !Y->hasUses())
    return false;
  // The result must be [d0, d1 * ... * dn] with static d1..dn.
  int64_t Inner = 1;
  for (const Dim &D : X.getShape().drop_front()) {
    if (!D.isStatic())
      return false;
    Inner *= D.getSize();
  }
  if (!YT.getDim(1).isStatic() || YT.getDim(1).getSize() != Inner ||
      YT.getDim(0) != X.getDim(0))
    return false;
  for (const Use &U : Y->getUses()) {
    const Node *C = U.User;
    if (U.OperandIndex != 0 || !C->hasOperand(1) ||
        !C->getOperand(1)->getConstantData() ||
        C->getOperand(1)->getType().getRank() != 2)
      return false;
    if (C->getOpId() == OpId::Gemm) {
      if (C->getIntAttr("transA", 0) != 0)
        return false;
    } else if (C->getOpId() != OpId::MatMul) {
      return false;
    }
  }
  return true;
}
