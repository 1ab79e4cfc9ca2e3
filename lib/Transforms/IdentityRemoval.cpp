//===- IdentityRemoval.cpp - Forward Identity and inference Dropout -------===//
//
// Identity nodes, and Dropout nodes in inference form whose mask is unused,
// are removed by giving their users the operand. A graph output keeps its
// name: the operand's producer takes it over, or, where that would turn the
// output into a graph input or a second copy of another output, the node
// stays.
//
//===----------------------------------------------------------------------===//

#include "ConstantTensor.h"
#include "GraphRewrite.h"

#include "strider/IR/Graph.h"
#include "strider/Transforms/Passes.h"

using namespace strider;

/// Whether Dropout \p N is an identity on its data: not in training mode
/// (training_mode absent or a constant false) and no mask anyone reads.
static bool isInferenceDropout(const Graph &G, const Node &N) {
  if (N.hasOperand(2)) {
    TensorDataRef Training = folding::getConstantDataRef(N.getOperand(2));
    if (!Training)
      return false;
    for (int64_t I = 0; I < Training->getNumElements(); ++I)
      if (Training->getInt(I) != 0)
        return false;
  }
  for (unsigned I = 1; I < N.getNumResults(); ++I)
    if (Value *Mask = N.getResult(I))
      if (Mask->hasUses() || G.isGraphOutput(Mask))
        return false;
  return true;
}

namespace {
llvm::Error identityRemoval(Graph &G) {
  std::vector<Node *> Candidates =
      rewrite::collectNodes(G, {OpId::Identity, OpId::Dropout});
  // In order, so that a chain collapses onto its first operand; only the
  // current node and nodes before it are erased.
  for (Node *N : Candidates) {
    if (!N->hasResult(0) ||
        (N->getOpId() == OpId::Dropout && !isInferenceDropout(G, *N)))
      continue;
    rewrite::forwardPassThrough(G, *N, N->getOperand(0), N->getResult(0));
  }
  return llvm::Error::success();
}
} // namespace

std::unique_ptr<Pass> strider::createIdentityRemovalPass() {
  return createFunctionPass("remove-identity", identityRemoval);
}
