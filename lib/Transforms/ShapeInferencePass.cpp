//===- ShapeInferencePass.cpp - The infer-shapes pass ---------------------===//
//
// Wraps strider::inferShapes as a pass.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/ShapeInference.h"
#include "strider/Transforms/Passes.h"

using namespace strider;

namespace {
llvm::Error shapeInference(Graph &G) { return inferShapes(G); }
} // namespace

std::unique_ptr<Pass> strider::createShapeInferencePass() {
  return createFunctionPass("infer-shapes", shapeInference);
}
