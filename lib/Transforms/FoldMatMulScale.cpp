//===- FoldMatMulScale.cpp - Scale a MatMul's smaller operand -------------===//
//
// Mul(MatMul(A, B), c) with c a constant of one element becomes
// MatMul(Mul(A, c), B), or MatMul(A, Mul(B, c)) when B is the smaller
// operand: attention's QK^T / sqrt(d) then scales a tokens x d operand
// instead of the tokens x tokens scores, one pass over the largest tensor
// of the block fewer. The MatMul's result must have no other reader and
// not be a graph output; c's rank must not exceed the scaled operand's
// (so that the product keeps that operand's shape). Results may differ in
// the last bit (the scale is applied before the sums, not after).
//
//===----------------------------------------------------------------------===//

#include "ConstantTensor.h"
#include "GraphRewrite.h"

#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/Transforms/Passes.h"

using namespace strider;

namespace {

/// The one-element constant among \p Mul's operands and the other operand,
/// or nulls.
std::pair<Value *, Value *> splitScalarOperand(const Node &Mul) {
  if (Mul.getNumOperands() != 2 || !Mul.getOperand(0) || !Mul.getOperand(1))
    return {nullptr, nullptr};
  for (unsigned I = 0; I < 2; ++I) {
    TensorDataRef D = folding::getConstantDataRef(Mul.getOperand(I));
    if (D && D->getNumElements() == 1)
      return {Mul.getOperand(I), Mul.getOperand(1 - I)};
  }
  return {nullptr, nullptr};
}

int64_t numElements(const Value *V) {
  auto N = V->getType().getNumElements();
  return N ? *N : -1;
}

llvm::Error fold(Graph &G, Node &Mul) {
  auto [Scale, Product] = splitScalarOperand(Mul);
  if (!Scale || !Mul.hasResult(0))
    return llvm::Error::success();
  Node *MM = Product->getDefiningNode();
  if (!MM || MM->isOpaque() || MM->getOpId() != OpId::MatMul ||
      MM->getNumOperands() != 2 || Product->getUses().size() != 1 ||
      G.isGraphOutput(Product))
    return llvm::Error::success();
  const TensorType &ST = Scale->getType(), &MT = Product->getType();
  if (!ST.hasRank() || !MT.hasRank() ||
      ST.getElementType() != MT.getElementType() ||
      Mul.getResult(0)->getType().getShape() != MT.getShape())
    return llvm::Error::success();
  // Scale the operand with fewer elements (both must be known).
  int64_t NA = numElements(MM->getOperand(0));
  int64_t NB = numElements(MM->getOperand(1));
  if (NA < 0 || NB < 0)
    return llvm::Error::success();
  unsigned Side = NB < NA ? 1 : 0;
  Value *Operand = MM->getOperand(Side);
  if (!Operand->getType().hasRank() ||
      ST.getRank() > Operand->getType().getRank())
    return llvm::Error::success();

  Node *Scaled = G.createNode(
      OpId::Mul, {Operand, Scale},
      {G.makeUniqueName(Operand->getName() + "_scaled")}, {TensorType()}, MM);
  Scaled->setLoc(Mul.getLoc());
  llvm::SmallVector<TensorType, 1> Types;
  if (llvm::Error E = inferResultTypes(*Scaled, Types))
    return E;
  if (Types[0].getShape() != Operand->getType().getShape()) {
    G.eraseNode(Scaled);
    return llvm::Error::success();
  }
  Scaled->getResult(0)->setType(Types[0]);
  MM->setOperand(Side, Scaled->getResult(0));
  // The MatMul now computes the Mul's result: it takes the Mul's name (a
  // graph output keeps its name) and the Mul goes.
  rewrite::replaceAndTakeName(G, Mul.getResult(0), Product);
  return llvm::Error::success();
}

llvm::Error foldMatMulScale(Graph &G) {
  for (Node *Mul : rewrite::collectNodes(G, {OpId::Mul}))
    if (llvm::Error E = fold(G, *Mul))
      return E;
  return llvm::Error::success();
}

} // namespace

std::unique_ptr<Pass> strider::createFoldMatMulScalePass() {
  return createFunctionPass("fold-matmul-scale", foldMatMulScale);
}
