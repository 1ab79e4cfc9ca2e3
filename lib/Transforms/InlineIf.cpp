//===- InlineIf.cpp - Replace an If whose condition is known by its branch ===//
//
// An If whose condition is a constant becomes a copy of the branch it
// takes: the branch's nodes are cloned before it (their results renamed
// where the graph already uses a name), the branch's inputs read the If's
// operands, and the If's results are replaced by the branch's outputs. A
// result that is a graph output keeps its name through an Identity (which
// remove-identity forwards where it can). Ifs inside the branch come along
// as nodes of the graph, to be inlined in turn once their conditions fold:
// shape specialization runs this with inference and folding until nothing
// changes, so Ifs on shapes and on inputs bound to values disappear.
//
//===----------------------------------------------------------------------===//

#include "ConstantTensor.h"
#include "GraphRewrite.h"

#include "strider/IR/Graph.h"
#include "strider/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"

using namespace strider;

/// The branch \p If takes, when its condition is a one-element constant.
static const Graph *getTakenBranch(const Node &If) {
  TensorDataRef Cond = folding::getConstantDataRef(If.getOperand(0));
  if (!Cond || Cond->getNumElements() != 1)
    return nullptr;
  const char *Name = Cond->getInt(0) != 0 ? "then_branch" : "else_branch";
  const Attribute *A = If.getAttr(Name);
  if (!A || A->getKind() != AttrKind::Graph || !A->getGraph())
    return nullptr;
  const Graph &Branch = *A->getGraph();
  if (Branch.getInputs().size() != If.getNumOperands() - 1 ||
      Branch.getOutputs().size() != If.getNumResults())
    return nullptr; // Malformed; the verifier says how.
  return &Branch;
}

static void inlineBranch(Graph &G, Node &If, const Graph &Branch) {
  llvm::DenseMap<const Value *, Value *> Map;
  for (unsigned I = 0; I < Branch.getInputs().size(); ++I)
    Map[Branch.getInputs()[I]] = If.getOperand(I + 1);
  for (const Node *N : Branch.nodes()) {
    std::vector<Value *> Operands;
    for (Value *Op : N->getOperands())
      Operands.push_back(Op ? Map.lookup(Op) : nullptr);
    std::vector<std::string> Names;
    std::vector<TensorType> Types;
    for (unsigned I = 0; I < N->getNumResults(); ++I) {
      const Value *R = N->getResult(I);
      Names.push_back(R ? G.makeUniqueName(R->getName()) : std::string());
      Types.push_back(R ? R->getType() : TensorType());
    }
    Node *Copy = N->isOpaque()
                     ? G.createOpaqueNode(N->getDomain(), N->getOpType(),
                                          Operands, Names, Types, &If)
                     : G.createNode(N->getOpId(), Operands, Names, Types, &If);
    for (const NamedAttribute &A : N->getAttrs())
      Copy->setAttr(A.Name, A.Value);
    Copy->setLoc(N->getLoc());
    Copy->setDocString(N->getDocString());
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (const Value *R = N->getResult(I))
        Map[R] = Copy->getResult(I);
  }

  std::vector<std::pair<Value *, std::string>> Renames;
  for (unsigned I = 0; I < If.getNumResults(); ++I) {
    Value *R = If.getResult(I);
    if (!R)
      continue;
    Value *Taken = Map.lookup(Branch.getOutputs()[I]);
    if (G.isGraphOutput(R)) {
      Node *Id = G.createNode(OpId::Identity, {Taken},
                              {G.makeUniqueName(R->getName() + "_taken")},
                              {Taken->getType()}, &If);
      Id->setLoc(If.getLoc());
      Taken = Id->getResult(0);
      Renames.push_back({Taken, R->getName()});
    }
    rewrite::replaceAllUsesAndOutputs(G, R, Taken);
  }
  G.eraseNode(&If);
  for (auto &[V, Name] : Renames)
    G.renameValue(V, Name);
}

namespace {
llvm::Error inlineIf(Graph &G) {
  // Inlined branches may hold Ifs whose conditions are constants already
  // (a branch's own constant): repeat over the new nodes.
  for (bool Changed = true; Changed;) {
    Changed = false;
    for (Node *N : G.getNodeList()) {
      if (N->getOpId() != OpId::If)
        continue;
      if (const Graph *Branch = getTakenBranch(*N)) {
        inlineBranch(G, *N, *Branch);
        Changed = true;
      }
    }
  }
  return llvm::Error::success();
}
} // namespace

std::unique_ptr<Pass> strider::createInlineIfPass() {
  return createFunctionPass("inline-if", inlineIf);
}
