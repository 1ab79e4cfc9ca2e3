//===- OnnxFuzzer.cpp - libFuzzer target on import and specialization ----===//
//
// Feeds arbitrary bytes to importONNXBytes (protobuf parsing, opset
// upgrades, function expansion, subgraphs, initializers, shape inference)
// and takes a model that imports the way a session does (ModelPipeline.h:
// preparation, specialization, optimization, verification), then, when
// it is small, runs it on the reference interpreter with zero inputs. A
// clean error anywhere is fine; a graph that a pass left invalid, a
// crash, a sanitizer report or a leak is a finding. Seeds in
// test/fuzz/corpus/onnx are the small models of the importer's tests.
//
//===----------------------------------------------------------------------===//

#include "ModelPipeline.h"

using namespace strider;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::unique_ptr<Graph> G = fuzz::prepareModel(Data, Size);
  if (!G || !fuzz::isSmallRun(*G))
    return 0;
  auto Out = runtime::runReference(*G, fuzz::zeroInputs(*G));
  if (!Out)
    llvm::consumeError(Out.takeError());
  return 0;
}
