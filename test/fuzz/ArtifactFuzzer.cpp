//===- ArtifactFuzzer.cpp - libFuzzer target on the artifact loader ------===//
//
// Feeds arbitrary bytes to readArtifactBytes, the whole validating path
// of model.strider (header, section table, checksums, meta, derived index,
// graph parser and verifier). Anything but a clean result or a clean error
// (a crash, a sanitizer report, a leak) is a finding. Derived formats are
// not compared, so seeds from any machine reach the graph parser.
//
// The loader is built for it with checksum mismatches ignored
// (STRIDER_FUZZING_IGNORE_CHECKSUMS), so that mutations reach the section
// table, the derived index and the graph parser instead of stopping at the
// first checksum; the main build's tests cover the checksums. Seeds in
// test/fuzz/corpus are artifacts of three small models (a conv with packed
// weights, a MatMul with a symbolic batch, a Gemm with 19 KB of weights).
//
//===----------------------------------------------------------------------===//

#include "strider/Engine/Artifact.h"
#include "strider/IR/Graph.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  auto A = strider::engine::readArtifactBytes(
      llvm::ArrayRef<uint8_t>(Data, Size), nullptr, "fuzz.strider", "");
  if (!A) {
    llvm::consumeError(A.takeError());
    return 0;
  }
  // A graph that loads must be whole: walk it.
  size_t Nodes = 0;
  for (const strider::Node *N : A->G->nodes())
    Nodes += N->getNumOperands() + 1;
  return Nodes ? 0 : 0;
}
