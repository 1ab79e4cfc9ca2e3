//===- FuseHardSwish.cpp - One node for hard-swish's exported spellings ---===//
//
// PaddlePaddle, TensorFlow and older PyTorch exports write MobileNetV3's
// activations out as arithmetic. This pass recognizes
//   x * Clip(x + 3, 0, 6) / 6        HardSwish(x)
//   x * (Clip(x + 3, 0, 6) / 6)      HardSwish(x)
//   Clip(x + 3, 0, 6) / 6            HardSigmoid(x, alpha = 1/6, beta = 0.5)
//   x * HardSigmoid(x, 1/6, 0.5)     HardSwish(x)
// with the division as a Div by 6 or a Mul by 1/6 and either operand order
// of every Add and Mul. The new node takes the last node's name and
// location, so a conv before it fuses the whole activation into its
// epilogue. Every intermediate value must have exactly one reader and not
// be a graph output (x itself may have any number); constants match to a
// relative 1e-4. The spelled-out and fused forms differ by rounding only.
//
//===----------------------------------------------------------------------===//

#include "GraphRewrite.h"
#include "PatternMatch.h"

#include "strider/IR/Graph.h"
#include "strider/Transforms/Passes.h"

#include <cmath>

using namespace strider;
using namespace strider::pattern;

namespace {

constexpr double Sixth = 1.0 / 6.0;

/// For a node dividing by 6 (Div by 6, Mul by 1/6): the divided operand.
Value *getSixthOf(const Node &N) {
  if (N.getOpId() == OpId::Div && N.getNumOperands() == 2 &&
      isScalarConstant(N.getOperand(1), 6.0))
    return N.getOperand(0);
  if (N.getOpId() == OpId::Mul)
    return getOperandBesideConstant(N, Sixth);
  return nullptr;
}

/// The only reader of \p V if that reader divides \p V by 6.
Node *getSoleSixthUser(const Graph &G, const Value *V) {
  if (!isAbsorbable(G, V))
    return nullptr;
  Node *U = V->getUses()[0].User;
  if (U->isOpaque() || getSixthOf(*U) != V)
    return nullptr;
  return U;
}

/// The only reader of \p V if it is a Mul of \p V by \p X.
Node *getSoleMulBy(const Graph &G, const Value *V, const Value *X) {
  Node *Mul = getSoleUserOp(G, V, OpId::Mul);
  return Mul && getOtherOperand(*Mul, V) == X && X != V ? Mul : nullptr;
}

/// A matched spelling: x, the value computed, what it is, and the nodes to
/// remove, producers before their readers.
struct Match {
  Value *X = nullptr;
  Value *Y = nullptr;
  bool Swish = false; ///< HardSwish; else HardSigmoid(x, 1/6, 0.5).
  llvm::SmallVector<Node *, 5> Nodes;
};

/// Clip(x + 3, 0, 6) and what follows it.
bool matchClipForm(const Graph &G, Node &Clip, Match &M) {
  if (Clip.getNumOperands() != 3 || !Clip.getOperand(1) ||
      !Clip.getOperand(2) || !isScalarConstant(Clip.getOperand(1), 0.0) ||
      !isScalarConstant(Clip.getOperand(2), 6.0))
    return false;
  Value *Shifted = Clip.getOperand(0);
  Node *Add = getDefiningOp(Shifted, OpId::Add);
  if (!Add || !isAbsorbable(G, Shifted))
    return false;
  Value *X = getOperandBesideConstant(*Add, 3.0);
  if (!X)
    return false;
  Value *Clipped = Clip.getResult(0);
  M.X = X;
  M.Nodes = {Add, &Clip};
  if (Node *Div = getSoleSixthUser(G, Clipped)) {
    // Clip(x + 3, 0, 6) / 6, maybe times x.
    M.Nodes.push_back(Div);
    M.Y = Div->getResult(0);
    if (Node *Mul = getSoleMulBy(G, M.Y, X)) {
      M.Nodes.push_back(Mul);
      M.Y = Mul->getResult(0);
      M.Swish = true;
    }
    return true;
  }
  // x * Clip(x + 3, 0, 6), then / 6.
  Node *Mul = getSoleMulBy(G, Clipped, X);
  if (!Mul)
    return false;
  Node *Div = getSoleSixthUser(G, Mul->getResult(0));
  if (!Div)
    return false;
  M.Nodes.append({Mul, Div});
  M.Y = Div->getResult(0);
  M.Swish = true;
  return true;
}

/// x * HardSigmoid(x, 1/6, 0.5).
bool matchHardSigmoidForm(const Graph &G, Node &HS, Match &M) {
  if (std::fabs(HS.getFloatAttr("alpha", 0.2f) - Sixth) > 1e-4 * Sixth ||
      std::fabs(HS.getFloatAttr("beta", 0.5f) - 0.5) > 1e-4 * 0.5)
    return false;
  Value *X = HS.getOperand(0);
  Node *Mul = getSoleMulBy(G, HS.getResult(0), X);
  if (!Mul)
    return false;
  M.X = X;
  M.Y = Mul->getResult(0);
  M.Swish = true;
  M.Nodes = {&HS, Mul};
  return true;
}

void replace(Graph &G, const Match &M) {
  Node *New = replaceWithOneNode(G, M.Nodes, M.X, M.Y,
                                 M.Swish ? OpId::HardSwish : OpId::HardSigmoid);
  if (New && !M.Swish) {
    New->setAttr("alpha", Attribute::getFloat(float(Sixth)));
    New->setAttr("beta", Attribute::getFloat(0.5f));
  }
}

llvm::Error fuseHardSwish(Graph &G) {
  // Clips first: their HardSigmoid spelling is final (it has no Mul by
  // x), so HardSigmoid roots are only the graph's own.
  std::vector<Node *> Clips = rewrite::collectNodes(G, {OpId::Clip});
  std::vector<Node *> Sigmoids = rewrite::collectNodes(G, {OpId::HardSigmoid});
  // A match removes only nodes of its own chain: no other root.
  for (Node *Root : Clips) {
    Match M;
    if (matchClipForm(G, *Root, M))
      replace(G, M);
  }
  for (Node *Root : Sigmoids) {
    Match M;
    if (matchHardSigmoidForm(G, *Root, M))
      replace(G, M);
  }
  return llvm::Error::success();
}

} // namespace

std::unique_ptr<Pass> strider::createFuseHardSwishPass() {
  return createFunctionPass("fuse-hardswish", fuseHardSwish);
}
