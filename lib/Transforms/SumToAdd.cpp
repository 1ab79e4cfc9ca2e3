//===- SumToAdd.cpp - Sum of one or two operands as Identity or Add ------===//
//
// ONNX's variadic Sum with two operands is an Add (both broadcast the
// numpy way), and with one a copy. Exporters write it where others write
// Add (Caffe2's ResNets add their residuals with Sum); as an Add the
// residual fuses into the conv before it and a per-channel constant folds
// into it. A two-operand Sum becomes an Add that takes its name and
// location; a one-operand Sum is forwarded like an Identity. Sums of three
// or more stay (the backends run them as one kernel).
//
//===----------------------------------------------------------------------===//

#include "GraphRewrite.h"

#include "strider/IR/Graph.h"
#include "strider/Transforms/Passes.h"

using namespace strider;

namespace {
llvm::Error sumToAdd(Graph &G) {
  for (Node *N : rewrite::collectNodes(G, {OpId::Sum})) {
    if (!N->hasResult(0) || N->getNumOperands() < 1 ||
        N->getNumOperands() > 2 || !N->hasOperand(0) ||
        !N->hasOperand(N->getNumOperands() - 1))
      continue;
    Value *Y = N->getResult(0);
    if (N->getNumOperands() == 1) {
      if (N->getOperand(0)->getType() == Y->getType())
        rewrite::forwardPassThrough(G, *N, N->getOperand(0), Y);
      continue;
    }
    Node *Add = G.createNode(OpId::Add, {N->getOperand(0), N->getOperand(1)},
                             {G.makeUniqueName(Y->getName() + "_add")},
                             {Y->getType()}, N);
    Add->setLoc(N->getLoc());
    rewrite::replaceAndTakeName(G, Y, Add->getResult(0));
  }
  return llvm::Error::success();
}
} // namespace

std::unique_ptr<Pass> strider::createSumToAddPass() {
  return createFunctionPass("sum-to-add", sumToAdd);
}
