//===- FoldBatchNorm.cpp - Fold inference BatchNormalization into convs ---===//
//
// An inference BatchNormalization whose input is the only use of a Conv or
// ConvTranspose result, where the convolution's weight and bias and the
// normalization's parameters are Constant nodes, becomes a new convolution
// with per-output-channel scaled weights and an adjusted (or new) bias.
//
//===----------------------------------------------------------------------===//

#include "ConstantTensor.h"
#include "GraphRewrite.h"

#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace strider;
using namespace strider::folding;

namespace {

/// A foldable BatchNormalization: y = Scale[c] * conv(x)[c] + Shift[c],
/// with Scale = gamma / sqrt(var + eps) and Shift = beta - Scale * mean.
struct BatchNormFold {
  Node *BN = nullptr;
  Node *Conv = nullptr;
  TensorDataRef Weight; ///< Logical order.
  TensorDataRef Bias;   ///< Null when the convolution has no bias.
  int64_t NumChannels = 0;
  std::vector<double> Scale, Shift;
};

bool isFoldableFloat(ElementType Elt) {
  return Elt == ElementType::F32 || Elt == ElementType::F16 ||
         Elt == ElementType::BF16 || Elt == ElementType::F64;
}

/// The values of a constant per-channel operand with \p Size entries.
llvm::Optional<std::vector<double>> readPerChannel(const Value *V,
                                                   int64_t Size) {
  TensorDataRef D = getConstantDataRef(V);
  if (!D || !isFoldableFloat(D->getElementType()) ||
      D->getType().getRank() != 1 || D->getNumElements() != Size)
    return llvm::None;
  return D->toDoubleVector();
}

class FoldBatchNormPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "fold-batchnorm"; }

  llvm::Error run(Graph &G) override {
    std::vector<Node *> Candidates;
    for (Node *N : G.nodes())
      if (N->getOpId() == OpId::BatchNormalization)
        Candidates.push_back(N);
    // Each fold erases only its own BatchNormalization, convolution and
    // constants that no one else uses, so later candidates stay valid.
    for (Node *BN : Candidates)
      if (llvm::Optional<BatchNormFold> F = match(G, *BN))
        rewrite(G, *F);
    return llvm::Error::success();
  }

private:
  static llvm::Optional<BatchNormFold> match(const Graph &G, Node &BN);
  static void rewrite(Graph &G, const BatchNormFold &F);
};

} // namespace

llvm::Optional<BatchNormFold> FoldBatchNormPass::match(const Graph &G,
                                                       Node &BN) {
  if (BN.getIntAttr("training_mode", 0) != 0 || !BN.hasResult(0) ||
      BN.getNumOperands() != 5)
    return llvm::None;
  // Inference form: the running statistics, if present at all, are dead.
  for (unsigned I = 1; I < BN.getNumResults(); ++I)
    if (Value *R = BN.getResult(I))
      if (R->hasUses() || G.isGraphOutput(R))
        return llvm::None;
  Value *X = BN.getOperand(0);
  Node *Conv = X->getDefiningNode();
  if (!Conv ||
      (Conv->getOpId() != OpId::Conv && Conv->getOpId() != OpId::ConvTranspose))
    return llvm::None;
  if (X->getUses().size() != 1 || G.isGraphOutput(X))
    return llvm::None;

  BatchNormFold F;
  F.BN = &BN;
  F.Conv = Conv;
  TensorDataRef W = getConstantDataRef(Conv->getOperand(1));
  if (!W || !isFoldableFloat(W->getElementType()) || W->getType().getRank() < 3)
    return llvm::None;
  F.Weight = toLogicalOrder(W);
  llvm::SmallVector<int64_t, 6> WShape = F.Weight->getType().getStaticShape();
  if (Conv->getOpId() == OpId::Conv) {
    // W: [M, C / group, k...].
    F.NumChannels = WShape[0];
  } else {
    // W: [C, M / group, k...].
    int64_t Group = Conv->getIntAttr("group", 1);
    if (Group < 1 || WShape[0] % Group != 0)
      return llvm::None;
    F.NumChannels = WShape[1] * Group;
  }
  if (Conv->hasOperand(2)) {
    F.Bias = getConstantDataRef(Conv->getOperand(2));
    if (!F.Bias || F.Bias->getElementType() != W->getElementType() ||
        F.Bias->getType().getRank() != 1 ||
        F.Bias->getNumElements() != F.NumChannels)
      return llvm::None;
  }

  auto Gamma = readPerChannel(BN.getOperand(1), F.NumChannels);
  auto Beta = readPerChannel(BN.getOperand(2), F.NumChannels);
  auto Mean = readPerChannel(BN.getOperand(3), F.NumChannels);
  auto Var = readPerChannel(BN.getOperand(4), F.NumChannels);
  if (!Gamma || !Beta || !Mean || !Var)
    return llvm::None;
  double Epsilon = BN.getFloatAttr("epsilon", 1e-5f);
  for (int64_t C = 0; C < F.NumChannels; ++C) {
    double S = (*Gamma)[C] / std::sqrt((*Var)[C] + Epsilon);
    double T = (*Beta)[C] - S * (*Mean)[C];
    // A non-finite factor would turn finite weights into inf or NaN where
    // the unfolded graph might still produce finite values.
    if (!std::isfinite(S) || !std::isfinite(T))
      return llvm::None;
    F.Scale.push_back(S);
    F.Shift.push_back(T);
  }

  // The folded convolution computes the convolution's type; the value it
  // replaces must be able to hold it.
  llvm::SmallVector<TensorType, 1> Inferred;
  if (llvm::Error E = inferResultTypes(*Conv, Inferred)) {
    llvm::consumeError(std::move(E));
    return llvm::None;
  }
  if (!isCompatibleType(BN.getResult(0)->getType(), Inferred[0]))
    return llvm::None;
  return F;
}

void FoldBatchNormPass::rewrite(Graph &G, const BatchNormFold &F) {
  Node &BN = *F.BN, &Conv = *F.Conv;
  ElementType Elt = F.Weight->getElementType();
  unsigned EltSize = getElementByteSize(Elt);

  // Scaled weights, in logical order: find each element's output channel.
  llvm::SmallVector<int64_t, 6> WShape = F.Weight->getType().getStaticShape();
  int64_t Kernel = 1;
  for (unsigned I = 2; I < WShape.size(); ++I)
    Kernel *= WShape[I];
  int64_t NumElts = F.Weight->getNumElements();
  std::vector<uint8_t> WBytes(NumElts * EltSize);
  bool Transposed = Conv.getOpId() == OpId::ConvTranspose;
  int64_t Group = Conv.getIntAttr("group", 1);
  for (int64_t E = 0; E < NumElts; ++E) {
    int64_t OutChannel;
    if (!Transposed) {
      OutChannel = E / (WShape[1] * Kernel);
    } else {
      // Input channel In is in group g = In / (C / group); its slice J
      // along dim 1 feeds output channel g * (M / group) + J.
      int64_t In = E / (WShape[1] * Kernel), J = (E / Kernel) % WShape[1];
      OutChannel = In / (WShape[0] / Group) * WShape[1] + J;
    }
    storeFloat(Elt, F.Scale[OutChannel] * F.Weight->getDouble(E),
               &WBytes[E * EltSize]);
  }
  Value *OldW = Conv.getOperand(1);
  TensorType WType =
      F.Weight->getType().withLayout(OldW->getType().getLayout());
  TensorDataRef NewWData =
      toPhysicalOrder(llvm::cantFail(TensorData::create(F.Weight->getType(),
                                                        std::move(WBytes))),
                      WType.getLayout());

  std::vector<uint8_t> BBytes(F.NumChannels * EltSize);
  for (int64_t C = 0; C < F.NumChannels; ++C) {
    double B = F.Bias ? F.Bias->getDouble(C) : 0.0;
    storeFloat(Elt, F.Scale[C] * B + F.Shift[C], &BBytes[C * EltSize]);
  }
  TensorType BType = TensorType::get(Elt, {F.NumChannels});
  TensorDataRef NewBData =
      llvm::cantFail(TensorData::create(BType, std::move(BBytes)));

  // The new constants go just before the normalization, named after and
  // located like the constants they replace.
  Value *BiasSource = F.Bias ? Conv.getOperand(2) : BN.getOperand(2);
  Value *NewW =
      rewrite::createConstant(G, NewWData, WType, OldW->getName() + "_bn",
                              OldW->getDefiningNode()->getLoc(), &BN);
  Value *NewB =
      rewrite::createConstant(G, NewBData, BType, BiasSource->getName() + "_bn",
                              BiasSource->getDefiningNode()->getLoc(), &BN);

  Value *BNResult = BN.getResult(0);
  Node *NewConv = G.createNode(Conv.getOpId(), {Conv.getOperand(0), NewW, NewB},
                               {G.makeUniqueName(BNResult->getName())},
                               {BNResult->getType()}, &BN);
  for (const NamedAttribute &A : Conv.getAttrs())
    NewConv->setAttr(A.Name, A.Value);
  NewConv->setLoc(Conv.getLoc());
  NewConv->setDocString(Conv.getDocString());

  // Constants that may die with the old nodes.
  llvm::SmallVector<Node *, 6> MaybeDead;
  auto Note = [&](Value *V) {
    Node *Def = V ? V->getDefiningNode() : nullptr;
    if (Def && !llvm::is_contained(MaybeDead, Def))
      MaybeDead.push_back(Def);
  };
  for (unsigned I = 1; I < Conv.getNumOperands(); ++I)
    Note(Conv.getOperand(I));
  for (unsigned I = 1; I < BN.getNumOperands(); ++I)
    Note(BN.getOperand(I));

  // The new convolution takes over the normalization's result and name.
  rewrite::replaceAndTakeName(G, BNResult, NewConv->getResult(0));
  G.eraseNode(&Conv);
  for (Node *N : MaybeDead)
    if (N->getOpId() == OpId::Constant && rewrite::hasNoLiveResults(G, *N))
      G.eraseNode(N);
}

std::unique_ptr<Pass> strider::createFoldBatchNormPass() {
  return std::make_unique<FoldBatchNormPass>();
}
