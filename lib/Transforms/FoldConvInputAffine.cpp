//===- FoldConvInputAffine.cpp - Fold x * s + b into the conv reading it --===//
//
// A Conv whose input is x * s + b (a Mul and an Add, or either alone, by
// constants that are one value or one per input channel) reads x instead:
// its weights scaled by s along the input channels and its bias plus the
// sum of every output channel's weights times b. Exact only where no tap
// reads padding (padding would read 0, not b), so the conv must have no
// pads (explicit zeros, VALID or no auto_pad). This folds the affine
// blocks PP-LCNetV3 (PaddleOCR v4-v6) places after its activations in
// front of pointwise convs; the ones before padded depthwise convs stay.
// The affine values must have no other reader and not be graph outputs;
// the weights and bias must be constants.
//
//===----------------------------------------------------------------------===//

#include "ConstantTensor.h"
#include "GraphRewrite.h"
#include "PatternMatch.h"

#include "strider/IR/Graph.h"
#include "strider/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>

using namespace strider;
using namespace strider::folding;

namespace {

/// The affine map in front of a conv: the conv reads x * Scale[c] +
/// Shift[c]; Nodes are its Mul and Add (producers first).
struct InputAffine {
  Value *X = nullptr;
  std::vector<double> Scale, Shift;
  llvm::SmallVector<Node *, 2> Nodes;
};

/// The constant operand of two-operand \p N and its other operand, if one
/// of them reads as per-channel values of \p Channels channels.
llvm::Optional<std::pair<std::vector<double>, Value *>>
splitConstant(const Node &N, unsigned Rank, int64_t Channels) {
  if (N.getNumOperands() != 2 || !N.getOperand(0) || !N.getOperand(1))
    return llvm::None;
  for (unsigned I = 0; I < 2; ++I)
    if (auto V = readBroadcastPerChannel(N.getOperand(I), Rank, Channels))
      if (!getConstantDataRef(N.getOperand(1 - I)))
        return std::make_pair(std::move(*V), N.getOperand(1 - I));
  return llvm::None;
}

/// x * s + b, x * s or x + b ending at \p V (rank \p Rank, \p Channels).
bool matchAffine(const Graph &G, Value *V, unsigned Rank, int64_t Channels,
                 InputAffine &A) {
  A.Scale.assign(size_t(Channels), 1.0);
  A.Shift.assign(size_t(Channels), 0.0);
  A.X = V;
  if (Node *Add = pattern::getDefiningOp(A.X, OpId::Add);
      Add && pattern::isAbsorbable(G, A.X)) {
    if (auto C = splitConstant(*Add, Rank, Channels)) {
      A.Shift = std::move(C->first);
      A.X = C->second;
      A.Nodes.push_back(Add);
    }
  }
  if (Node *Mul = pattern::getDefiningOp(A.X, OpId::Mul);
      Mul && pattern::isAbsorbable(G, A.X)) {
    if (auto C = splitConstant(*Mul, Rank, Channels)) {
      A.Scale = std::move(C->first);
      A.X = C->second;
      A.Nodes.insert(A.Nodes.begin(), Mul);
    }
  }
  if (A.Nodes.empty() || A.X->getType() != V->getType())
    return false;
  for (size_t C = 0; C < size_t(Channels); ++C)
    if (!std::isfinite(A.Scale[C]) || !std::isfinite(A.Shift[C]))
      return false;
  return true;
}

/// Whether no tap of conv \p N reads padding.
bool hasNoPadding(const Node &N) {
  const std::string AutoPad = N.getStringAttr("auto_pad", "NOTSET");
  if (AutoPad != "NOTSET" && AutoPad != "VALID")
    return false;
  const Attribute *Pads = N.getAttr("pads");
  return !Pads || llvm::all_of(Pads->getInts(),
                               [](int64_t P) { return P == 0; });
}

class FoldConvInputAffinePass : public Pass {
public:
  llvm::StringRef getArgument() const override {
    return "fold-conv-input-affine";
  }

  llvm::Error run(Graph &G) override {
    for (Node *N : rewrite::collectNodes(G, {OpId::Conv}))
      fold(G, *N);
    return llvm::Error::success();
  }

private:
  void fold(Graph &G, Node &Conv);
};

void FoldConvInputAffinePass::fold(Graph &G, Node &Conv) {
  if (Conv.getNumOperands() < 2 || !hasNoPadding(Conv))
    return;
  Value *In = Conv.getOperand(0);
  TensorDataRef W = getConstantDataRef(Conv.getOperand(1));
  const TensorType &XT = In->getType();
  if (!W || !isFloatingPoint(W->getElementType()) || !XT.hasRank() ||
      XT.getRank() < 3 || !XT.getDim(1).isStatic())
    return;
  W = toLogicalOrder(W);
  auto WShape = W->getType().getStaticShape();
  const int64_t Channels = XT.getDim(1).getSize();
  const int64_t Group = Conv.getIntAttr("group", 1);
  if (WShape.size() != XT.getRank() || Group < 1 || Channels % Group ||
      WShape[1] != Channels / Group || WShape[0] % Group)
    return;
  TensorDataRef B;
  if (Conv.hasOperand(2)) {
    B = getConstantDataRef(Conv.getOperand(2));
    if (!B || B->getElementType() != W->getElementType() ||
        B->getNumElements() != WShape[0])
      return;
  }
  InputAffine A;
  if (!matchAffine(G, In, XT.getRank(), Channels, A))
    return;

  // W'[o][c][t] = W[o][c][t] * s[g * Cg + c];
  // B'[o] = B[o] + sum_{c, t} W[o][c][t] * b[g * Cg + c].
  const ElementType Elt = W->getElementType();
  const size_t EltSize = getElementByteSize(Elt);
  const int64_t Out = WShape[0], Cg = WShape[1], PerGroup = Out / Group;
  int64_t Taps = 1;
  for (size_t I = 2; I < WShape.size(); ++I)
    Taps *= WShape[I];
  std::vector<uint8_t> WBytes(size_t(W->getNumElements()) * EltSize);
  std::vector<uint8_t> BBytes(size_t(Out) * EltSize);
  for (int64_t O = 0; O < Out; ++O) {
    double Sum = B ? B->getDouble(O) : 0.0;
    const int64_t G0 = O / PerGroup * Cg;
    for (int64_t C = 0; C < Cg; ++C)
      for (int64_t T = 0; T < Taps; ++T) {
        const int64_t E = (O * Cg + C) * Taps + T;
        const double Wv = W->getDouble(E);
        Sum += Wv * A.Shift[size_t(G0 + C)];
        storeFloat(Elt, Wv * A.Scale[size_t(G0 + C)], &WBytes[size_t(E) * EltSize]);
      }
    storeFloat(Elt, Sum, &BBytes[size_t(O) * EltSize]);
  }
  Value *OldW = Conv.getOperand(1);
  const TensorType WType = W->getType().withLayout(OldW->getType().getLayout());
  Value *NewW = rewrite::createConstant(
      G,
      toPhysicalOrder(llvm::cantFail(TensorData::create(W->getType(),
                                                        std::move(WBytes))),
                      WType.getLayout()),
      WType, OldW->getName() + "_affine", OldW->getDefiningNode()->getLoc(),
      &Conv);
  const TensorType BType = TensorType::get(Elt, {Out});
  Value *BiasSource = B ? Conv.getOperand(2) : OldW;
  Value *NewB = rewrite::createConstant(
      G, llvm::cantFail(TensorData::create(BType, std::move(BBytes))), BType,
      BiasSource->getName() + (B ? "_affine" : "_affine_bias"),
      BiasSource->getDefiningNode()->getLoc(), &Conv);
  llvm::SmallVector<Node *, 4> MaybeDead;
  for (unsigned I = 1; I < Conv.getNumOperands(); ++I)
    if (Value *V = Conv.getOperand(I))
      MaybeDead.push_back(V->getDefiningNode());
  Conv.setOperand(0, A.X);
  Conv.setOperand(1, NewW);
  if (Conv.hasOperand(2))
    Conv.setOperand(2, NewB);
  else
    Conv.addOperand(NewB);
  // The affine nodes (readers first), then constants left unread.
  for (auto It = A.Nodes.rbegin(); It != A.Nodes.rend(); ++It)
    if (rewrite::hasNoLiveResults(G, **It)) {
      for (Value *V : (*It)->getOperands())
        if (V && V->getDefiningNode() &&
            V->getDefiningNode()->getOpId() == OpId::Constant)
          MaybeDead.push_back(V->getDefiningNode());
      G.eraseNode(*It);
    }
  // Each erased once (a constant may be listed twice).
  for (Node *N : MaybeDead)
    if (N && N->getOpId() == OpId::Constant &&
        rewrite::hasNoLiveResults(G, *N)) {
      G.eraseNode(N);
      std::replace(MaybeDead.begin(), MaybeDead.end(), N,
                   static_cast<Node *>(nullptr));
    }
}

} // namespace

std::unique_ptr<Pass> strider::createFoldConvInputAffinePass() {
  return std::make_unique<FoldConvInputAffinePass>();
}
