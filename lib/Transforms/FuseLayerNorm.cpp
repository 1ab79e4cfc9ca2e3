//===- FuseLayerNorm.cpp - One LayerNormalization for its decomposition ---===//
//
// Exporters targeting opsets before 17 write layer normalization out as
//   m = ReduceMean(x, axes)          d = Sub(x, m)
//   v = ReduceMean(Pow(d, 2) or Mul(d, d), axes)
//   y = Add(Mul(Div(d, Sqrt(Add(v, eps))), gamma), beta)
// with both reductions over the same trailing dims of x (keepdims = 1),
// eps a one-element constant, either operand order of the Add and Mul
// nodes that allow it, and the final Add optional. This pass replaces each
// such chain by LayerNormalization(x, gamma[, beta]) with axis = the first
// reduced dim and epsilon = eps; the node takes the last node's name and
// location. Every intermediate must have exactly its readers in the chain
// and not be a graph output; gamma and beta must broadcast to the reduced
// dims alone (their rank at most the number of reduced dims).
//
//===----------------------------------------------------------------------===//

#include "ConstantTensor.h"
#include "GraphRewrite.h"
#include "PatternMatch.h"

#include "strider/IR/Graph.h"
#include "strider/Transforms/Passes.h"

#include "llvm/ADT/SmallPtrSet.h"

using namespace strider;
using namespace strider::pattern;

namespace {

struct LayerNormMatch {
  Value *X = nullptr, *Gamma = nullptr, *Beta = nullptr, *Y = nullptr;
  int64_t Axis = 0;
  float Epsilon = 0.0f;
  llvm::SmallVector<Node *, 10> Nodes;
};

/// The first reduced dim when \p Mean is a keepdims ReduceMean of a rank-R
/// operand over trailing dims [axis, R) given as a constant axes operand;
/// -1 otherwise.
int64_t getTrailingAxis(const Node &Mean) {
  const TensorType &XT = Mean.getOperand(0)->getType();
  if (!XT.hasRank() || Mean.getIntAttr("keepdims", 1) != 1 ||
      !Mean.hasOperand(1))
    return -1;
  TensorDataRef D = folding::getConstantDataRef(Mean.getOperand(1));
  if (!D || D->getNumElements() == 0)
    return -1;
  const int64_t R = XT.getRank();
  llvm::SmallVector<bool, 6> Reduced(size_t(R), false);
  for (int64_t A : D->toInt64Vector()) {
    if (A < -R || A >= R)
      return -1;
    Reduced[size_t(A < 0 ? A + R : A)] = true;
  }
  int64_t Axis = R;
  while (Axis > 0 && Reduced[size_t(Axis - 1)])
    --Axis;
  for (int64_t I = 0; I < Axis; ++I)
    if (Reduced[size_t(I)])
      return -1;
  return Axis;
}

/// Whether \p V (gamma or beta) broadcasts to the reduced dims alone.
bool fitsReducedDims(const Value *V, const TensorType &XT, int64_t Axis) {
  const TensorType &T = V->getType();
  return T.hasRank() && int64_t(T.getRank()) <= int64_t(XT.getRank()) - Axis &&
         T.getElementType() == XT.getElementType();
}

bool matchLayerNorm(const Graph &G, Node &Mean, LayerNormMatch &M) {
  Value *X = Mean.getOperand(0);
  const int64_t Axis = getTrailingAxis(Mean);
  if (Axis < 0 || Axis == int64_t(X->getType().getRank()))
    return false;
  Value *MeanV = Mean.getResult(0);
  Node *Sub = getSoleUserOp(G, MeanV, OpId::Sub);
  if (!Sub || Sub->getOperand(0) != X || Sub->getOperand(1) != MeanV)
    return false;
  // d feeds the square and the division, nothing else.
  Value *Diff = Sub->getResult(0);
  if (G.isGraphOutput(Diff))
    return false;
  Node *Square = nullptr, *Div = nullptr;
  for (const Use &U : Diff->getUses()) {
    Node *N = U.User;
    if (N->isOpaque())
      return false;
    if (N->getOpId() == OpId::Div && N->getOperand(0) == Diff && !Div)
      Div = N;
    else if (N->getOpId() == OpId::Pow && N->getOperand(0) == Diff &&
             isScalarConstant(N->getOperand(1), 2.0) && !Square)
      Square = N;
    else if (N->getOpId() == OpId::Mul && N->getOperand(0) == Diff &&
             N->getOperand(1) == Diff && (!Square || Square == N))
      Square = N;
    else
      return false;
  }
  if (!Square || !Div)
    return false;
  Node *Var = getSoleUserOp(G, Square->getResult(0), OpId::ReduceMean);
  if (!Var || getTrailingAxis(*Var) != Axis)
    return false;
  Node *AddEps = getSoleUserOp(G, Var->getResult(0), OpId::Add);
  if (!AddEps)
    return false;
  Value *Eps = getOtherOperand(*AddEps, Var->getResult(0));
  TensorDataRef EpsData = folding::getConstantDataRef(Eps);
  if (!EpsData || EpsData->getNumElements() != 1 ||
      !isFloatingPoint(EpsData->getElementType()))
    return false;
  Node *Sqrt = getSoleUserOp(G, AddEps->getResult(0), OpId::Sqrt);
  if (!Sqrt || !isAbsorbable(G, Sqrt->getResult(0)) ||
      Sqrt->getResult(0)->getUses().front().User != Div ||
      Div->getOperand(1) != Sqrt->getResult(0))
    return false;
  Node *Scale = getSoleUserOp(G, Div->getResult(0), OpId::Mul);
  if (!Scale)
    return false;
  M.Gamma = getOtherOperand(*Scale, Div->getResult(0));
  M.Y = Scale->getResult(0);
  M.Nodes = {&Mean, Sub, Square, Var, AddEps, Sqrt, Div, Scale};
  if (Node *Shift = getSoleUserOp(G, M.Y, OpId::Add)) {
    Value *Beta = getOtherOperand(*Shift, M.Y);
    if (fitsReducedDims(Beta, X->getType(), Axis)) {
      M.Beta = Beta;
      M.Y = Shift->getResult(0);
      M.Nodes.push_back(Shift);
    }
  }
  M.X = X;
  M.Axis = Axis;
  M.Epsilon = float(EpsData->getDouble(0));
  return fitsReducedDims(M.Gamma, X->getType(), Axis);
}

void replaceWithLayerNorm(Graph &G, const LayerNormMatch &M) {
  Node *Last = M.Y->getDefiningNode();
  llvm::SmallVector<Value *, 3> Operands{M.X, M.Gamma};
  if (M.Beta)
    Operands.push_back(M.Beta);
  Node *LN = G.createNode(OpId::LayerNormalization, Operands,
                          {G.makeUniqueName(M.Y->getName() + "_ln")},
                          {M.Y->getType()}, Last);
  LN->setLoc(Last->getLoc());
  LN->setAttr("axis", Attribute::getInt(M.Axis));
  LN->setAttr("epsilon", Attribute::getFloat(M.Epsilon));
  rewrite::replaceAndTakeName(G, M.Y, LN->getResult(0));
  for (auto It = M.Nodes.rbegin(); It != M.Nodes.rend(); ++It)
    if (*It != Last)
      G.eraseNode(*It);
}

llvm::Error fuseLayerNorm(Graph &G) {
  std::vector<Node *> Means = rewrite::collectNodes(G, {OpId::ReduceMean});
  // A match removes one ReduceMean besides its root; skip those.
  llvm::SmallPtrSet<Node *, 8> Erased;
  for (Node *Mean : Means) {
    LayerNormMatch M;
    if (Erased.count(Mean) || !matchLayerNorm(G, *Mean, M))
      continue;
    const TensorType &XT = M.X->getType(), &YT = M.Y->getType();
    if (XT.getShape() != YT.getShape() ||
        XT.getElementType() != YT.getElementType() ||
        !isFloatingPoint(XT.getElementType()))
      continue;
    replaceWithLayerNorm(G, M);
    Erased.insert(M.Nodes.begin(), M.Nodes.end());
  }
  return llvm::Error::success();
}

} // namespace

std::unique_ptr<Pass> strider::createFuseLayerNormPass() {
  return createFunctionPass("fuse-layernorm", fuseLayerNorm);
}
