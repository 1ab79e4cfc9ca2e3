//===- ReferenceBackend.cpp - The reference interpreter as a backend ------===//
//
// The "reference" entry of the backend registry: runtime::runReference on
// the graph itself (plain loops in any layout; the oracle the other
// backends are checked against).
//
//===----------------------------------------------------------------------===//

#include "ReferenceBackend.h"

#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/IR/Diagnostics.h"
#include "strider/Support/Memory.h"

using namespace strider;
using namespace strider::codegen;

namespace {

/// Ops without a reference kernel. None today.
const std::initializer_list<OpId> UnsupportedOps = {};

class ReferenceProgram final : public Executable {
public:
  explicit ReferenceProgram(const Graph &G) : G(G) {}
  llvm::Expected<runtime::TensorMap>
  run(const runtime::TensorMap &Inputs) override {
    return runtime::runReference(G, Inputs);
  }
  /// The interpreter keeps a run's tensors on the run's own stack.
  bool isReentrant() const override { return true; }

private:
  const Graph &G;
};

class ReferenceBackend final : public Backend {
public:
  llvm::StringRef getName() const override { return "reference"; }
  llvm::StringRef getDescription() const override {
    return "the reference interpreter (plain loops, any layout; the oracle)";
  }
  llvm::Error checkOptions(const BackendOptions &Opts) const override {
    if (Opts.Threads != 1)
      return makeError("the reference backend runs on one thread (got " +
                       llvm::Twine(Opts.Threads) + ")");
    return cpu::getBackend().checkOptions(Opts);
  }
  /// The CPU backend's: a graph optimized for the interpreter is the one
  /// the CPU backend would run.
  std::string getDefaultTarget(const BackendOptions &Opts) const override {
    return cpu::getBackend().getDefaultTarget(Opts);
  }
  codegen::OpSupport getOpSupport(OpId Id) const override {
    if (runtime::lookupReferenceKernel(Id))
      return OpSupport::Kernel;
    if (hasOpTrait(Id, optrait::CompileTime))
      return OpSupport::CompileTime;
    if (llvm::is_contained(UnsupportedOps, Id))
      return OpSupport::Unsupported;
    return OpSupport::Unlisted;
  }
  /// Any: the interpreter runs every layout.
  bool servesTarget(llvm::StringRef) const override { return true; }
  llvm::Expected<std::unique_ptr<Executable>>
  compile(const Graph &G, const BackendOptions &Opts) const override {
    // A graph whose shapes are not all static is refused at run.
    const Node *At = nullptr;
    if (std::optional<uint64_t> Peak = runtime::getReferencePeakBytes(G, &At)) {
      std::string TooBig = checkMemoryBudget(*Peak, "tensors", Opts.MaxMemory);
      if (!TooBig.empty())
        return At ? makeNodeError(*At, TooBig) : makeGraphError(G, TooBig);
    }
    return std::unique_ptr<Executable>(new ReferenceProgram(G));
  }
};

} // namespace

const Backend &codegen::getReferenceBackend() {
  static const ReferenceBackend B;
  return B;
}
