//===- ShapeInferencePass.cpp - The infer-shapes pass ---------------------===//
//
// Wraps strider::inferShapes as a pass.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/ShapeInference.h"
#include "strider/Transforms/Passes.h"

using namespace strider;

namespace {
class ShapeInferencePass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "infer-shapes"; }
  llvm::Error run(Graph &G) override { return inferShapes(G); }
};
} // namespace

std::unique_ptr<Pass> strider::createShapeInferencePass() {
  return std::make_unique<ShapeInferencePass>();
}
