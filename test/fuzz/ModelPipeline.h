//===- ModelPipeline.h - What the model fuzzers share -----------*- C++ -*-===//
//
// An ONNX model's way to a runnable graph, as a session takes it: import,
// the once-per-model preparation, specialization (every graph input at its
// declared shape, each dynamic dim bound to 0, 1, 2, 3 or 7 by a hash of
// the input's bytes and the dim's place: a mutation rebinds the shapes),
// the shape pipeline (canonicalize,
// layout assignment for cpu-avx512) and the verifier. A clean error at any
// step ends the input; an imported or optimized graph that fails the
// verifier is a finding (abort).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_TEST_FUZZ_MODELPIPELINE_H
#define STRIDER_TEST_FUZZ_MODELPIPELINE_H

#include "strider/IR/Graph.h"
#include "strider/IR/Verifier.h"
#include "strider/Import/ONNX.h"
#include "strider/Layout/LayoutAssignment.h"
#include "strider/Runtime/Reference.h"
#include "strider/Transforms/Pass.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"
#include "strider/Transforms/Specialize.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace strider {
namespace fuzz {

/// Stops on an error (fine) or a graph a pass left invalid (a finding).
inline bool runPipeline(Graph &G, llvm::StringRef Pipeline) {
  auto Layout = layout::parseLayoutOptions("cpu-avx512", "auto", "model", {});
  if (!Layout) {
    llvm::consumeError(Layout.takeError());
    return false;
  }
  PipelineOptions Opts;
  Opts.Layout = std::move(*Layout);
  Opts.Layout.Explain = false;
  PassManager PM;
  if (llvm::Error E = parsePassPipeline(Pipeline, PM)) {
    std::fprintf(stderr, "pipeline '%s': %s\n", Pipeline.str().c_str(),
                 llvm::toString(std::move(E)).c_str());
    std::abort();
  }
  PM.configure(Opts);
  PM.setVerifyEach(false);
  if (llvm::Error E = PM.run(G)) {
    llvm::consumeError(std::move(E));
    return false;
  }
  if (llvm::Error E = verifyGraph(G)) {
    std::fprintf(stderr, "'%s' succeeded and left an invalid graph: %s\n",
                 Pipeline.str().c_str(), llvm::toString(std::move(E)).c_str());
    std::abort();
  }
  return true;
}

/// A bound on the reference interpreter's work: per node, its result's
/// elements times its largest operand's or its kernel window's (a conv's
/// or matmul's FLOPs, a reduction's reads, a pool's visits are below it).
/// Saturates.
inline uint64_t workBound(const Graph &G) {
  uint64_t Work = 0;
  for (const Node *N : G.nodes()) {
    uint64_t Out = 0, In = 1;
    for (unsigned R = 0; R < N->getNumResults(); ++R)
      if (N->hasResult(R))
        Out += uint64_t(N->getResult(R)->getType().getNumElements().getValueOr(
            int64_t(1) << 40));
    for (const Value *Op : N->getOperands())
      if (Op)
        In = std::max(In, uint64_t(Op->getType().getNumElements().getValueOr(
                              int64_t(1) << 40)));
    // A pooling window visits every position of its kernel, padding
    // included (a 3 x 33554431 window over a 5 x 5 input is 10^8 visits
    // per output): the window's size counts too.
    uint64_t Window = 1;
    for (int64_t K : N->getIntsAttr("kernel_shape"))
      Window = K <= 0 || K > (int64_t(1) << 40) || Window > (uint64_t(1) << 40)
                   ? UINT64_MAX
                   : Window * uint64_t(K);
    if (Out > (uint64_t(1) << 40) || In > (uint64_t(1) << 40) ||
        Window > (uint64_t(1) << 40))
      return UINT64_MAX;
    Work += Out * std::max(In, Window);
    if (Work > (uint64_t(1) << 60))
      return UINT64_MAX;
  }
  return Work;
}

/// The graph a session would run for \p Bytes at the shapes above, or
/// null when a step refuses it.
inline std::unique_ptr<Graph> prepareModel(const uint8_t *Data, size_t Size) {
  llvm::StringRef Bytes(reinterpret_cast<const char *>(Data), Size);
  // External data resolves against a directory that does not exist: a
  // mutated location reads nothing of the machine.
  auto G = importONNXBytes(Bytes, "fuzz.onnx", "/nonexistent/strider-fuzz");
  if (!G) {
    llvm::consumeError(G.takeError());
    return nullptr;
  }
  if (llvm::Error E = verifyGraph(**G)) {
    std::fprintf(stderr, "an imported graph fails verification: %s\n",
                 llvm::toString(std::move(E)).c_str());
    std::abort();
  }
  // The session's once-per-model preparation.
  if (!runPipeline(**G, getPreparePipeline()))
    return nullptr;
  // FNV-1a over the bytes, then over a symbol's name (one size per
  // symbol) or an anonymous dim's place.
  auto Step = [](uint64_t H, uint8_t Byte) {
    return (H ^ Byte) * 1099511628211ull;
  };
  uint64_t Hash = 14695981039346656037ull;
  for (size_t I = 0; I < Size; ++I)
    Hash = Step(Hash, Data[I]);
  static const int64_t Sizes[] = {2, 1, 3, 0, 7};
  ShapeBindings B;
  // Folds of at most 2^22 elements (16 MiB of f32): the default's 2^28
  // fits the fuzzer's 2 GiB once, not beside its copies.
  B.MaxFoldedElements = int64_t(1) << 22;
  uint8_t Place = 0;
  for (const Value *In : (*G)->getInputs()) {
    const TensorType &T = In->getType();
    if (!T.hasRank() || In->getDefaultData())
      continue;
    llvm::SmallVector<int64_t, 6> Shape;
    for (const Dim &D : T.getShape()) {
      uint64_t H = Step(Hash, ++Place);
      if (D.isSymbol()) {
        H = Hash;
        for (char C : D.getSymbol())
          H = Step(H, uint8_t(C));
      }
      Shape.push_back(D.isStatic() ? D.getSize() : Sizes[(H >> 32) % 5]);
    }
    B.InputShapes[In->getName()] = Shape;
  }
  if (llvm::Error E = specializeShapes(**G, B)) {
    llvm::consumeError(std::move(E));
    return nullptr;
  }
  if (llvm::Error E = checkIfsFolded(**G)) {
    llvm::consumeError(std::move(E));
    return nullptr;
  }
  if (!runPipeline(**G, "canonicalize,infer-shapes,layout-assignment"))
    return nullptr;
  return std::move(*G);
}

/// Whether \p G runs in a few milliseconds: 16 MiB of tensors and 2^24
/// element-operations at most.
inline bool isSmallRun(const Graph &G) {
  auto Peak = runtime::getReferencePeakBytes(G);
  return Peak && *Peak <= (uint64_t(16) << 20) && workBound(G) <= (1u << 24);
}

/// Zero tensors for \p G's inputs without default data, up to 16 MiB each
/// (an unused input is not in the run's peak; a bigger one is left out and
/// the run refuses the missing input).
inline runtime::TensorMap zeroInputs(const Graph &G) {
  runtime::TensorMap Inputs;
  for (const Value *In : G.getInputs()) {
    const TensorType &T = In->getType();
    if (In->getDefaultData() || !T.hasStaticShape() ||
        !T.isWithinSizeLimit() ||
        uint64_t(*T.getNumElements()) *
                std::max<uint64_t>(1, getElementByteSize(T.getElementType())) >
            (uint64_t(16) << 20))
      continue;
    Inputs[In->getName()] =
        runtime::Tensor(T.getElementType(), T.getStaticShape());
  }
  return Inputs;
}

} // namespace fuzz
} // namespace strider

#endif // STRIDER_TEST_FUZZ_MODELPIPELINE_H
