//===- FoldBatchNorm.cpp - Fold per-channel affine maps into convs --------===//
//
// An inference BatchNormalization whose input is the only use of a Conv or
// ConvTranspose result, where the convolution's weight and bias and the
// normalization's parameters are Constant nodes, becomes a new convolution
// with per-output-channel scaled weights and an adjusted (or new) bias.
// So does a Mul, Add, Sub (minus a constant) or Div (by a constant) of such
// a result by a constant that is one value or one per channel (shape [C],
// broadcast over the pixels): PaddlePaddle's learnable affine blocks
// (PP-LCNetV3) and exports that write BatchNormalization out. A chain of
// them folds one node at a time.
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

/// A foldable map y = Scale[c] * conv(x)[c] + Shift[c] (BatchNormalization:
/// Scale = gamma / sqrt(var + eps), Shift = beta - Scale * mean).
struct BatchNormFold {
  Node *BN = nullptr;     ///< The BatchNormalization, Mul, Add, Sub or Div.
  Value *Param = nullptr; ///< A Mul, Add, Sub or Div's constant operand.
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

} // namespace

/// Scale and Shift of y = x * c, x + c, x - c or x / c, c read by
/// readBroadcastPerChannel.
static bool matchMap(Node &BN, BatchNormFold &F, const Value *C) {
  const TensorType &YT = BN.getResult(0)->getType();
  if (!YT.hasRank() || YT.getRank() < 3)
    return false;
  auto Values = readBroadcastPerChannel(C, YT.getRank(), F.NumChannels);
  if (!Values)
    return false;
  for (double V : *Values) {
    switch (BN.getOpId()) {
    case OpId::Mul:
      F.Scale.push_back(V);
      F.Shift.push_back(0.0);
      break;
    case OpId::Div:
      F.Scale.push_back(1.0 / V);
      F.Shift.push_back(0.0);
      break;
    case OpId::Add:
      F.Scale.push_back(1.0);
      F.Shift.push_back(V);
      break;
    case OpId::Sub:
      F.Scale.push_back(1.0);
      F.Shift.push_back(-V);
      break;
    default:
      return false;
    }
  }
  return true;
}

/// The convolution defining \p X, read into \p F, when \p X is its only
/// use and its weights (and bias, if any) are constants.
static bool matchConv(const Graph &G, Value *X, BatchNormFold &F) {
  Node *Conv = X->getDefiningNode();
  if (!Conv ||
      (Conv->getOpId() != OpId::Conv && Conv->getOpId() != OpId::ConvTranspose))
    return false;
  if (X->getUses().size() != 1 || G.isGraphOutput(X))
    return false;
  F.Conv = Conv;
  TensorDataRef W = getConstantDataRef(Conv->getOperand(1));
  if (!W || !isFoldableFloat(W->getElementType()) || W->getType().getRank() < 3)
    return false;
  F.Weight = toLogicalOrder(W);
  llvm::SmallVector<int64_t, 6> WShape = F.Weight->getType().getStaticShape();
  if (Conv->getOpId() == OpId::Conv) {
    // W: [M, C / group, k...].
    F.NumChannels = WShape[0];
  } else {
    // W: [C, M / group, k...].
    int64_t Group = Conv->getIntAttr("group", 1);
    if (Group < 1 || WShape[0] % Group != 0)
      return false;
    F.NumChannels = WShape[1] * Group;
  }
  F.Bias = nullptr;
  if (Conv->hasOperand(2)) {
    F.Bias = getConstantDataRef(Conv->getOperand(2));
    if (!F.Bias || F.Bias->getElementType() != W->getElementType() ||
        F.Bias->getType().getRank() != 1 ||
        F.Bias->getNumElements() != F.NumChannels)
      return false;
  }
  return true;
}

static llvm::Optional<BatchNormFold> matchFold(const Graph &G, Node &BN) {
  if (!BN.hasResult(0))
    return llvm::None;
  BatchNormFold F;
  F.BN = &BN;
  if (BN.getOpId() != OpId::BatchNormalization) {
    if (BN.getNumOperands() != 2 || !BN.getOperand(0) || !BN.getOperand(1))
      return llvm::None;
    // The convolution's result on the left (either side for Mul and Add).
    const bool Commutes =
        BN.getOpId() == OpId::Mul || BN.getOpId() == OpId::Add;
    for (unsigned I = 0; I < (Commutes ? 2u : 1u); ++I) {
      F.Scale.clear();
      F.Shift.clear();
      F.Param = BN.getOperand(1 - I);
      if (matchConv(G, BN.getOperand(I), F) && matchMap(BN, F, F.Param))
        break;
      F.Conv = nullptr;
    }
    if (!F.Conv)
      return llvm::None;
  } else {
    if (BN.getIntAttr("training_mode", 0) != 0 || BN.getNumOperands() != 5)
      return llvm::None;
    // Inference form: the running statistics, if present at all, are dead.
    for (unsigned I = 1; I < BN.getNumResults(); ++I)
      if (Value *R = BN.getResult(I))
        if (R->hasUses() || G.isGraphOutput(R))
          return llvm::None;
    if (!matchConv(G, BN.getOperand(0), F))
      return llvm::None;
    auto Gamma = readPerChannel(BN.getOperand(1), F.NumChannels);
    auto Beta = readPerChannel(BN.getOperand(2), F.NumChannels);
    auto Mean = readPerChannel(BN.getOperand(3), F.NumChannels);
    auto Var = readPerChannel(BN.getOperand(4), F.NumChannels);
    if (!Gamma || !Beta || !Mean || !Var)
      return llvm::None;
    double Epsilon = BN.getFloatAttr("epsilon", 1e-5f);
    for (int64_t C = 0; C < F.NumChannels; ++C) {
      double S = (*Gamma)[C] / std::sqrt((*Var)[C] + Epsilon);
      F.Scale.push_back(S);
      F.Shift.push_back((*Beta)[C] - S * (*Mean)[C]);
    }
  }
  // A non-finite factor would turn finite weights into inf or NaN where
  // the unfolded graph might still produce finite values.
  for (int64_t C = 0; C < F.NumChannels; ++C)
    if (!std::isfinite(F.Scale[C]) || !std::isfinite(F.Shift[C]))
      return llvm::None;

  // The folded convolution computes the convolution's type; the value it
  // replaces must be able to hold it.
  llvm::SmallVector<TensorType, 1> Inferred;
  if (llvm::Error E = inferResultTypes(*F.Conv, Inferred)) {
    llvm::consumeError(std::move(E));
    return llvm::None;
  }
  if (!isCompatibleType(BN.getResult(0)->getType(), Inferred[0]))
    return llvm::None;
  return F;
}

static void rewriteFold(Graph &G, const BatchNormFold &F) {
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

  // The new constants go just before the folded node, named after and
  // located like the constants they replace.
  const bool IsBN = BN.getOpId() == OpId::BatchNormalization;
  Value *BiasSource = F.Bias ? Conv.getOperand(2)
                      : IsBN ? BN.getOperand(2)
                             : F.Param;
  const std::string Suffix =
      IsBN ? "_bn" : "_" + llvm::StringRef(BN.getOpType()).lower();
  Value *NewW =
      rewrite::createConstant(G, NewWData, WType, OldW->getName() + Suffix,
                              OldW->getDefiningNode()->getLoc(), &BN);
  Value *NewB = rewrite::createConstant(
      G, NewBData, BType, BiasSource->getName() + Suffix,
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
  if (IsBN)
    for (unsigned I = 1; I < BN.getNumOperands(); ++I)
      Note(BN.getOperand(I));
  else
    Note(F.Param);

  // The new convolution takes over the normalization's result and name.
  rewrite::replaceAndTakeName(G, BNResult, NewConv->getResult(0));
  G.eraseNode(&Conv);
  for (Node *N : MaybeDead)
    if (N->getOpId() == OpId::Constant && rewrite::hasNoLiveResults(G, *N))
      G.eraseNode(N);
}

static llvm::Error foldBatchNorm(Graph &G) {
  // The maps whose result may fold into the convolution they read.
  std::vector<Node *> Candidates =
      rewrite::collectNodes(G, {OpId::BatchNormalization, OpId::Mul, OpId::Add,
                                OpId::Sub, OpId::Div});
  // Each fold erases only its own map node, convolution and constants
  // that no one else uses, so later candidates stay valid; a later map
  // of a chain reads the convolution an earlier fold made.
  for (Node *BN : Candidates)
    if (llvm::Optional<BatchNormFold> F = matchFold(G, *BN))
      rewriteFold(G, *F);
  return llvm::Error::success();
}

std::unique_ptr<Pass> strider::createFoldBatchNormPass() {
  return createFunctionPass("fold-batchnorm", foldBatchNorm);
}
