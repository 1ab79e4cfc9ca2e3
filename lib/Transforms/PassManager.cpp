//===- PassManager.cpp - Running a pipeline -------------------------------===//
//
// Runs passes in order and verifies the graph after each one.
//
//===----------------------------------------------------------------------===//

#include "strider/Transforms/Pass.h"
#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/Verifier.h"

using namespace strider;

Pass::~Pass() = default;

namespace {
class FunctionPass final : public Pass {
public:
  FunctionPass(llvm::StringRef Argument, llvm::Error (*Fn)(Graph &))
      : Argument(Argument), Fn(Fn) {}
  llvm::StringRef getArgument() const override { return Argument; }
  llvm::Error run(Graph &G) override { return Fn(G); }

private:
  llvm::StringRef Argument;
  llvm::Error (*Fn)(Graph &);
};
} // namespace

std::unique_ptr<Pass> strider::createFunctionPass(llvm::StringRef Argument,
                                                  llvm::Error (*Run)(Graph &)) {
  return std::make_unique<FunctionPass>(Argument, Run);
}

llvm::Error PassManager::run(Graph &G) {
  for (auto &P : Passes) {
    if (llvm::Error E = P->run(G))
      return E;
    if (!VerifyEach)
      continue;
    if (llvm::Error E = verifyGraph(G))
      return makeError("graph fails verification after pass '" +
                       P->getArgument() + "': " + llvm::toString(std::move(E)));
  }
  return llvm::Error::success();
}
