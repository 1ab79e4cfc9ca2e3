//===- Tuning.cpp - Timing the CPU backend's kernels for layout choice ----===//
//
// The CPU backend's side of codegen::tuneConvsAndRelayouts: a one-op graph
// compiled by compileForCPU and run with profiling on, so that the time
// counted is the sum of its kernel steps (copying inputs into and outputs
// out of the arena is not). A graph with a step that would fall back to a
// reference kernel is no variant of the backend's.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/CPU/Tuning.h"

#include "strider/CodeGen/CPU/CPUBackend.h"

using namespace strider;
using namespace strider::cpu;

llvm::Error cpu::tuneGraph(const Graph &G, const layout::DimBindings &Dims,
                           const TuneOptions &Opts, layout::TuningTable &Table,
                           codegen::TuneStats *Stats) {
  codegen::TuneDriverOptions DO = Opts.Timing;
  DO.Type = ElementType::F32;
  auto Compile = [&](const Graph &One)
      -> llvm::Expected<std::unique_ptr<codegen::TimedProgram>> {
    CPUOptions CO;
    CO.Threads = Opts.Threads;
    auto Prog = compileForCPU(One, CO);
    if (!Prog)
      return Prog.takeError();
    for (const StepInfo &S : (*Prog)->getSteps())
      if (S.Fallback)
        return nullptr;
    return std::unique_ptr<codegen::TimedProgram>(
        std::make_unique<codegen::ProfiledProgram<Program>>(std::move(*Prog)));
  };
  return codegen::tuneConvsAndRelayouts(G, Dims, DO, Compile, Table, Stats);
}
