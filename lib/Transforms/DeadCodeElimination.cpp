//===- DeadCodeElimination.cpp - Remove unused nodes ----------------------===//
//
// Erases nodes none of whose results is used or is a graph output. Opaque
// nodes are kept: they may have effects Strider does not know about.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Graph.h"
#include "strider/Transforms/Passes.h"

using namespace strider;

namespace {
bool isDead(const Graph &G, const Node &N) {
  if (N.isOpaque())
    return false;
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (Value *R = N.getResult(I))
      if (R->hasUses() || G.isGraphOutput(R))
        return false;
  return true;
}

llvm::Error deadCodeElimination(Graph &G) {
  // Walk backwards over a snapshot: erasing a node can only make earlier
  // nodes dead, so one reverse sweep reaches the fixed point.
  std::vector<Node *> Order = G.getNodeList();
  for (auto It = Order.rbegin(); It != Order.rend(); ++It)
    if (isDead(G, **It))
      G.eraseNode(*It);
  return llvm::Error::success();
}
} // namespace

std::unique_ptr<Pass> strider::createDeadCodeEliminationPass() {
  return createFunctionPass("dce", deadCodeElimination);
}
