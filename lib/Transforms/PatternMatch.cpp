//===- PatternMatch.cpp - Matching decomposed op spellings ----------------===//

#include "PatternMatch.h"

#include "ConstantTensor.h"
#include "GraphRewrite.h"

#include "strider/IR/OpInfo.h"

#include <cmath>

using namespace strider;

Node *pattern::getDefiningOp(const Value *V, OpId Id) {
  Node *N = V ? V->getDefiningNode() : nullptr;
  return N && !N->isOpaque() && N->getOpId() == Id ? N : nullptr;
}

bool pattern::isAbsorbable(const Graph &G, const Value *V) {
  return V && V->getUses().size() == 1 && !G.isGraphOutput(V);
}

Node *pattern::getSoleUserOp(const Graph &G, const Value *V, OpId Id) {
  if (!isAbsorbable(G, V))
    return nullptr;
  Node *U = V->getUses().front().User;
  return !U->isOpaque() && U->getOpId() == Id ? U : nullptr;
}

bool pattern::isScalarConstant(const Value *V, double Want) {
  TensorDataRef D = V ? folding::getConstantDataRef(V) : TensorDataRef();
  if (!D || D->getNumElements() != 1 || !isFloatingPoint(D->getElementType()))
    return false;
  return std::fabs(D->getDouble(0) - Want) <= 1e-4 * std::fabs(Want);
}

Value *pattern::getOperandBesideConstant(const Node &N, double Want) {
  if (N.getNumOperands() != 2 || !N.getOperand(0) || !N.getOperand(1))
    return nullptr;
  for (unsigned I = 0; I < 2; ++I)
    if (isScalarConstant(N.getOperand(I), Want))
      return N.getOperand(1 - I);
  return nullptr;
}

Value *pattern::getOtherOperand(const Node &N, const Value *V) {
  if (N.getNumOperands() != 2)
    return nullptr;
  if (N.getOperand(0) == V)
    return N.getOperand(1);
  if (N.getOperand(1) == V)
    return N.getOperand(0);
  return nullptr;
}

Node *pattern::replaceWithOneNode(Graph &G, llvm::ArrayRef<Node *> Nodes,
                                  Value *X, Value *Y, OpId Op) {
  const TensorType &XT = X->getType(), &YT = Y->getType();
  if (!XT.hasRank() || XT.getShape() != YT.getShape() ||
      !isFloatingPoint(XT.getElementType()) ||
      XT.getElementType() != YT.getElementType())
    return nullptr;
  Node *Last = Y->getDefiningNode();
  Node *New = G.createNode(
      Op, {X},
      {G.makeUniqueName(Y->getName() + "_" +
                        llvm::StringRef(getOpInfo(Op).Name).lower())},
      {YT}, Last);
  New->setLoc(Last->getLoc());
  rewrite::replaceAndTakeName(G, Y, New->getResult(0));
  // Readers first; the last node went with the replacement.
  for (auto It = Nodes.rbegin(); It != Nodes.rend(); ++It)
    if (*It != Last)
      G.eraseNode(*It);
  return New;
}
