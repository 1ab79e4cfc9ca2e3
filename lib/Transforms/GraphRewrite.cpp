//===- GraphRewrite.cpp - Rewriting helpers shared by passes --------------===//
//
// Value replacement keeping output names, pass-through forwarding, Constant
// creation.
//
//===----------------------------------------------------------------------===//

#include "GraphRewrite.h"

#include "strider/IR/ShapeInference.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>

using namespace strider;
using namespace strider::rewrite;

void rewrite::replaceAllUsesAndOutputs(Graph &G, Value *From, Value *To) {
  From->replaceAllUsesWith(To);
  llvm::ArrayRef<Value *> Outputs = G.getOutputs();
  for (unsigned I = 0; I < Outputs.size(); ++I)
    if (Outputs[I] == From)
      G.setOutput(I, To);
}

std::vector<Node *> rewrite::collectNodes(Graph &G,
                                          std::initializer_list<OpId> Ops) {
  std::vector<Node *> Nodes;
  for (Node *N : G.nodes())
    if (!N->isOpaque() && llvm::is_contained(Ops, N->getOpId()))
      Nodes.push_back(N);
  return Nodes;
}

bool rewrite::hasNoLiveResults(const Graph &G, const Node &N) {
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (Value *R = N.getResult(I))
      if (R->hasUses() || G.isGraphOutput(R))
        return false;
  return true;
}

void rewrite::replaceAndTakeName(Graph &G, Value *Old, Value *New) {
  assert(New->getDefiningNode() && !G.isGraphOutput(New) &&
         "renaming would change a graph input or another output");
  std::string Name = Old->getName();
  Node *OldNode = Old->getDefiningNode();
  replaceAllUsesAndOutputs(G, Old, New);
  assert(hasNoLiveResults(G, *OldNode) && "the replaced node is still used");
  G.eraseNode(OldNode);
  G.renameValue(New, Name);
}

bool rewrite::forwardPassThrough(Graph &G, Node &N, Value *Input,
                                 Value *Result) {
  if (Input->getType().getLayout() != Result->getType().getLayout())
    return false;
  if (!G.isGraphOutput(Result)) {
    Result->replaceAllUsesWith(Input);
    if (hasNoLiveResults(G, N))
      G.eraseNode(&N);
    return true;
  }
  if (Input->getDefiningNode() && !G.isGraphOutput(Input) &&
      Input->getType() == Result->getType()) {
    replaceAndTakeName(G, Result, Input);
    return true;
  }
  // The node stays for the outputs; its other users need not wait for it.
  if (!Result->hasUses())
    return false;
  Result->replaceAllUsesWith(Input);
  return true;
}

Value *rewrite::createConstant(Graph &G, TensorDataRef Data,
                               const TensorType &Type, llvm::StringRef BaseName,
                               const Location &Loc, Node *InsertBefore) {
  Node *C = G.createNode(OpId::Constant, {}, {G.makeUniqueName(BaseName)},
                         {Type}, InsertBefore);
  C->setAttr("value", Attribute::getTensor(std::move(Data)));
  C->setLoc(Loc);
  return C->getResult(0);
}

llvm::Expected<Value *>
rewrite::createInferred(Graph &G, OpId Op, llvm::ArrayRef<Value *> Operands,
                        llvm::ArrayRef<NamedAttribute> Attrs,
                        const std::string &Base, Node &At) {
  Node *N =
      G.createNode(Op, Operands, {G.makeUniqueName(Base)}, {TensorType()}, &At);
  N->setLoc(At.getLoc());
  for (const NamedAttribute &A : Attrs)
    N->setAttr(A.Name, A.Value);
  llvm::SmallVector<TensorType, 1> Types;
  if (llvm::Error E = inferResultTypes(*N, Types))
    return std::move(E);
  N->getResult(0)->setType(Types[0]);
  return N->getResult(0);
}
