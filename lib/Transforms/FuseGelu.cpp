//===- FuseGelu.cpp - One Gelu node for GELU's exported spellings ---------===//
//
// Exporters write GELU out as arithmetic. This pass recognizes
//   x * 0.5 * (1 + Erf(x / sqrt(2)))                       (Gelu)
//   x * 0.5 * (1 + Tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))  (approximate =
//                                                            "tanh")
// with x / sqrt(2) as a Div by 1.4142135 or a Mul by 0.70710678,
// 0.044715 x^3 as any product of the constant and Pow(x, 3) or three x's
// (JAX writes x * (x * (0.044715 * x))), either operand order of every Add
// and Mul, and the halving applied to x, to the sum, or to the product. Each
// match becomes one Gelu node that takes the last node's name and location.
// Every intermediate value must have exactly one reader and not be a graph
// output (x itself may have any number); constants match to a relative 1e-4.
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

/// A matched spelling: the input, the value it computes and the nodes to
/// remove, producers before their readers.
struct GeluMatch {
  Value *X = nullptr;
  Value *Y = nullptr;
  llvm::SmallVector<Node *, 10> Nodes;
};

/// Given \p X and \p Inner = Erf(...) or Tanh(...) of it: matches
/// 0.5 * x * (1 + Inner) in its three groupings and completes \p M.
bool matchHalfXTimesOnePlus(const Graph &G, Value *X, Value *Inner,
                            GeluMatch &M) {
  Node *Add = getSoleUserOp(G, Inner, OpId::Add);
  if (!Add || getOperandBesideConstant(*Add, 1.0) != Inner)
    return false;
  Value *Sum = Add->getResult(0);
  Node *Mul = getSoleUserOp(G, Sum, OpId::Mul);
  if (!Mul)
    return false;
  M.Nodes.push_back(Add);
  Value *Other = getOtherOperand(*Mul, Sum);
  Value *Product = Mul->getResult(0);
  if (Other == X) {
    // (x * (1 + inner)) * 0.5
    Node *Half = getSoleUserOp(G, Product, OpId::Mul);
    if (!Half || getOperandBesideConstant(*Half, 0.5) != Product)
      return false;
    M.Nodes.push_back(Mul);
    M.Y = Half->getResult(0);
    M.Nodes.push_back(Half);
  } else if (Node *HalfX = getDefiningOp(Other, OpId::Mul);
             HalfX && isAbsorbable(G, Other) &&
             getOperandBesideConstant(*HalfX, 0.5) == X) {
    // (x * 0.5) * (1 + inner)
    M.Nodes.insert(M.Nodes.begin(), HalfX);
    M.Y = Product;
    M.Nodes.push_back(Mul);
  } else if (isScalarConstant(Other, 0.5)) {
    // x * ((1 + inner) * 0.5)
    Node *Outer = getSoleUserOp(G, Product, OpId::Mul);
    if (!Outer || getOtherOperand(*Outer, Product) != X)
      return false;
    M.Nodes.push_back(Mul);
    M.Y = Outer->getResult(0);
    M.Nodes.push_back(Outer);
  } else {
    return false;
  }
  M.X = X;
  return true;
}

/// Erf(x / sqrt(2)) or Erf(x * (1 / sqrt(2))), then the halved product.
bool matchErfForm(const Graph &G, Node &Erf, GeluMatch &M) {
  Value *Scaled = Erf.getOperand(0);
  if (!isAbsorbable(G, Scaled))
    return false;
  Value *X = nullptr;
  Node *ScaleNode = nullptr;
  if (Node *Div = getDefiningOp(Scaled, OpId::Div);
      Div && isScalarConstant(Div->getOperand(1), M_SQRT2)) {
    ScaleNode = Div;
    X = Div->getOperand(0);
  } else if (Node *Mul = getDefiningOp(Scaled, OpId::Mul)) {
    ScaleNode = Mul;
    X = getOperandBesideConstant(*Mul, M_SQRT1_2);
  }
  if (!X)
    return false;
  M.Nodes = {ScaleNode, &Erf};
  return matchHalfXTimesOnePlus(G, X, Erf.getResult(0), M);
}

/// Appends to \p Leaves the factors of the product \p V: through Mul
/// nodes (\p V's own, and those of absorbable operands; at most 6 deep),
/// which go to \p Muls, readers before their producers.
void collectFactors(const Graph &G, Value *V, bool IsRoot,
                    llvm::SmallVectorImpl<Value *> &Leaves,
                    llvm::SmallVectorImpl<Node *> &Muls, unsigned Depth) {
  Node *Mul = getDefiningOp(V, OpId::Mul);
  if (!Mul || Depth > 6 || (!IsRoot && !isAbsorbable(G, V))) {
    Leaves.push_back(V);
    return;
  }
  Muls.push_back(Mul);
  for (Value *Op : Mul->getOperands())
    collectFactors(G, Op, false, Leaves, Muls, Depth + 1);
}

/// Whether \p Term is 0.044715 * x^3 of \p X: a product, in any grouping,
/// of the constant and three x's or Pow(x, 3) (absorbable intermediates;
/// PyTorch writes 0.044715 * Pow(x, 3) or x * x * x, JAX x * (x * (0.044715
/// * x))); appends its nodes to \p Nodes, producers first.
bool matchCubicTerm(const Graph &G, Value *Term, Value *X,
                    llvm::SmallVectorImpl<Node *> &Nodes) {
  llvm::SmallVector<Value *, 8> Leaves;
  llvm::SmallVector<Node *, 8> Muls;
  collectFactors(G, Term, true, Leaves, Muls, 0);
  unsigned Xs = 0, Constants = 0;
  Node *Pow = nullptr;
  for (Value *L : Leaves) {
    if (L == X) {
      ++Xs;
    } else if (isScalarConstant(L, 0.044715)) {
      ++Constants;
    } else if (Node *P = getDefiningOp(L, OpId::Pow);
               P && !Pow && isAbsorbable(G, L) && P->getOperand(0) == X &&
               isScalarConstant(P->getOperand(1), 3.0)) {
      Pow = P;
      Xs += 3;
    } else {
      return false;
    }
  }
  if (Xs != 3 || Constants != 1)
    return false;
  if (Pow)
    Nodes.push_back(Pow);
  Nodes.append(Muls.rbegin(), Muls.rend());
  return true;
}

/// Tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)), then the halved product.
bool matchTanhForm(const Graph &G, Node &Tanh, GeluMatch &M) {
  Value *Arg = Tanh.getOperand(0);
  Node *ScaleMul = getDefiningOp(Arg, OpId::Mul);
  if (!ScaleMul || !isAbsorbable(G, Arg))
    return false;
  Value *Poly = getOperandBesideConstant(*ScaleMul, std::sqrt(2.0 / M_PI));
  Node *Add = getDefiningOp(Poly, OpId::Add);
  if (!Add || !isAbsorbable(G, Poly))
    return false;
  for (unsigned I = 0; I < 2; ++I) {
    Value *X = Add->getOperand(I), *Term = Add->getOperand(1 - I);
    if (!isAbsorbable(G, Term))
      continue;
    M.Nodes.clear();
    if (!matchCubicTerm(G, Term, X, M.Nodes))
      continue;
    M.Nodes.append({Add, ScaleMul, &Tanh});
    return matchHalfXTimesOnePlus(G, X, Tanh.getResult(0), M);
  }
  return false;
}

void replaceWithGelu(Graph &G, const GeluMatch &M, bool Tanh) {
  Node *Gelu = replaceWithOneNode(G, M.Nodes, M.X, M.Y, OpId::Gelu);
  if (Gelu && Tanh)
    Gelu->setAttr("approximate", Attribute::getString("tanh"));
}

llvm::Error fuseGelu(Graph &G) {
  std::vector<Node *> Roots = rewrite::collectNodes(G, {OpId::Erf, OpId::Tanh});
  // A match removes only nodes of its own chain: no other root.
  for (Node *Root : Roots) {
    GeluMatch M;
    bool Tanh = Root->getOpId() == OpId::Tanh;
    if (Tanh ? matchTanhForm(G, *Root, M) : matchErfForm(G, *Root, M))
      replaceWithGelu(G, M, Tanh);
  }
  return llvm::Error::success();
}

} // namespace

std::unique_ptr<Pass> strider::createFuseGeluPass() {
  return createFunctionPass("fuse-gelu", fuseGelu);
}
