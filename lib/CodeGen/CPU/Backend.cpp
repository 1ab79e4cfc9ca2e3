//===- Backend.cpp - The CPU backend as the registry lists it -------------===//
//
// The "cpu" entry of the backend registry: f32 programs of SIMD kernels on
// this machine's best target, and their --verbose report.
//
//===----------------------------------------------------------------------===//

#include "ProgramImpl.h"

#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/CodeGen/CPU/Tuning.h"
#include "strider/IR/Diagnostics.h"
#include "strider/Layout/Tuning.h"

#include "llvm/Support/raw_ostream.h"

using namespace strider;
using namespace strider::cpu;

void Program::print(llvm::raw_ostream &OS) const {
  OS << "cpu program (" << getSimdTarget() << "), " << getSteps().size()
     << " kernel calls:\n";
  for (const StepInfo &S : getSteps())
    OS << "  " << (S.Fallback ? "[reference] " : "") << S.Kernel << " -> "
       << S.Nodes << "\n";
  OS << "fallbacks to reference kernels: " << getNumFallbacks() << "\n";
  OS << "activation arena: " << getArenaBytes() << " bytes (sum of "
     << "activations without reuse: " << getUnplannedBytes()
     << " bytes); constants: " << getConstantBytes() << " bytes\n";
}

namespace {

/// Ops the CPU backend has no kernel for: they run their reference
/// kernels inside its programs (strider-run warns). Each is a gap.
constexpr OpId ReferenceOps[] = {OpId::Trilu};

class CPUBackend final : public codegen::Backend {
public:
  llvm::StringRef getName() const override { return "cpu"; }
  llvm::StringRef getDescription() const override {
    return "the CPU SIMD backend (f32; reference kernels where it has none)";
  }
  llvm::Error checkOptions(const codegen::BackendOptions &Opts) const override {
    if (Opts.Precision != "fp32")
      return makeError("precision '" + Opts.Precision +
                       "' needs the CUDA backend: the CPU backends compute "
                       "in f32");
    return llvm::Error::success();
  }
  std::string getDefaultTarget(const codegen::BackendOptions &) const override {
    return llvm::StringRef(Program::getSimdTarget()).contains("AVX3")
               ? "cpu-avx512"
               : "cpu-avx2";
  }
  bool servesTarget(llvm::StringRef Target) const override {
    return Target.startswith("cpu-");
  }
  codegen::OpSupport getOpSupport(OpId Id) const override {
    if (hasLowering(Id))
      return codegen::OpSupport::Kernel;
    if (hasOpTrait(Id, optrait::CompileTime))
      return codegen::OpSupport::CompileTime;
    if (llvm::is_contained(ReferenceOps, Id))
      return codegen::OpSupport::Reference;
    return codegen::OpSupport::Unlisted;
  }
  bool canTune() const override { return true; }
  llvm::Error
  prepareTuningTable(layout::TuningTable &Table,
                     const codegen::BackendOptions &Opts) const override {
    const std::string Simd = Program::getSimdTarget();
    auto Describe = [](const std::string &Simd, int Threads) {
      return (Simd.empty() ? std::string("unknown") : Simd) + " kernels on " +
             std::to_string(Threads) + " thread(s)";
    };
    return codegen::matchTuningMachine(Table,
                                       Describe(Table.Simd, Table.Threads),
                                       Describe(Simd, Opts.Threads), [&] {
                                         Table.Simd = Simd;
                                         Table.Threads = Opts.Threads;
                                       });
  }
  llvm::Error tune(const Graph &G, const layout::DimBindings &Dims,
                   const codegen::BackendOptions &Opts,
                   const codegen::TuneDriverOptions &Timing,
                   layout::TuningTable &Table,
                   codegen::TuneStats *Stats) const override {
    TuneOptions TO;
    TO.Threads = Opts.Threads;
    TO.Timing = Timing;
    return tuneGraph(G, Dims, TO, Table, Stats);
  }
  llvm::Expected<std::unique_ptr<codegen::Executable>>
  compile(const Graph &G, const codegen::BackendOptions &Opts) const override {
    CPUOptions CO;
    CO.Threads = Opts.Threads;
    CO.Derived = Opts.Derived;
    CO.Arena = Opts.Arena;
    CO.MaxMemory = Opts.MaxMemory;
    auto P = compileForCPU(G, CO);
    if (!P)
      return P.takeError();
    return std::unique_ptr<codegen::Executable>(std::move(*P));
  }
};

} // namespace

const codegen::Backend &cpu::getBackend() {
  static const CPUBackend B;
  return B;
}
