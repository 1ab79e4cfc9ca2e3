//===- Tuning.cpp - Timing the CUDA backend's kernels for layout choice ---===//
//
// The CUDA backend's side of codegen::tuneConvsAndRelayouts: a one-op
// graph planned and loaded with its convs' algorithms chosen by timing
// (findConvAlgorithms), run once to put its inputs on the device, then
// timed as its CUDA graph replayed back to back (Program::timeReplays), so
// that the time counted is the device time of its kernels and library
// calls as a program's replay runs them; copying inputs in and outputs
// out is not. A graph the backend cannot plan is no variant it offers.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/CUDA/Tuning.h"

#include "Libraries.h"

#include "llvm/Support/raw_ostream.h"

using namespace strider;
using namespace strider::cuda;

namespace {

/// A one-op program timed as programs run: its CUDA graph replayed back to
/// back (Program::timeReplays), the inputs copied in by the first run
/// only. Timing each launch between events instead counts a launch
/// latency of several microseconds into every kernel, which is most of a
/// small conv's or relayout's time at batch 1 and hides the differences
/// between layouts and algorithms.
class ReplayedProgram final : public codegen::TimedProgram {
public:
  explicit ReplayedProgram(std::unique_ptr<Program> P) : P(std::move(P)) {}

  llvm::Expected<double> run(const runtime::TensorMap &Inputs,
                             unsigned Reps) override {
    if (!Uploaded) {
      if (auto R = P->run(Inputs); !R)
        return R.takeError();
      Uploaded = true;
    }
    return P->timeReplays(Reps);
  }

private:
  std::unique_ptr<Program> P;
  bool Uploaded = false;
};

ElementType getDataType(Precision P) {
  switch (P) {
  case Precision::FP16:
    return ElementType::F16;
  case Precision::BF16:
    return ElementType::BF16;
  case Precision::FP32:
  case Precision::TF32:
    break;
  }
  return ElementType::F32;
}

} // namespace

llvm::Error cuda::tuneGraph(const Graph &G, const layout::DimBindings &Dims,
                            const TuneOptions &Opts,
                            layout::TuningTable &Table,
                            codegen::TuneStats *Stats) {
  if (llvm::Error E = checkDevice(Opts.Device))
    return E;
  codegen::TuneDriverOptions DO = Opts.Timing;
  DO.Type = getDataType(Opts.Math);
  CUDAOptions CO;
  CO.Device = Opts.Device;
  CO.Math = Opts.Math;
  CO.UseGraph = true; // Timed as replays of the program's graph.
  CO.FindAlgorithms = true;
  CO.Algorithms = getTunedAlgorithms(Table);
  auto Compile = [&](const Graph &One)
      -> llvm::Expected<std::unique_ptr<codegen::TimedProgram>> {
    auto P = planForCUDA(One, CO);
    if (!P) {
      // No kernel for this variant (a layout mix or type the backend does
      // not plan): the layout costs keep their estimate for it.
      if (DO.Log)
        *DO.Log << "tune: not offered: " << llvm::toString(P.takeError())
                  << "\n";
      else
        llvm::consumeError(P.takeError());
      return nullptr;
    }
    auto Prog = Program::load(std::move(*P), CO);
    if (!Prog) {
      // cuDNN has no algorithm for this variant (a layout mix it does not
      // take): not offered either. Other failures stop tuning.
      llvm::Error E = Prog.takeError();
      if (!E.isA<NoAlgorithmError>())
        return E;
      if (DO.Log)
        *DO.Log << "tune: not offered: " << llvm::toString(std::move(E))
                << "\n";
      else
        llvm::consumeError(std::move(E));
      return nullptr;
    }
    // The algorithms cuDNN's find chose, kept for the programs built with
    // this table (and for the next variants of the same conv).
    for (const LibraryAlgorithm &A : (*Prog)->getConvAlgorithms()) {
      if (A.FoundNs <= 0 || Table.getAlgorithms().count(A.Key))
        continue;
      layout::TunedAlgorithm TA;
      TA.Name = A.Algo;
      TA.Ns = A.FoundNs;
      TA.WorkspaceBytes = A.WorkspaceBytes;
      Table.setAlgorithm(A.Key, TA);
      CO.Algorithms[A.Key] = A.Algo;
    }
    return std::unique_ptr<codegen::TimedProgram>(
        std::make_unique<ReplayedProgram>(std::move(*Prog)));
  };
  return codegen::tuneConvsAndRelayouts(G, Dims, DO, Compile, Table, Stats);
}

std::map<std::string, std::string>
cuda::getTunedAlgorithms(const layout::TuningTable &Table) {
  std::map<std::string, std::string> Out;
  for (const auto &KV : Table.getAlgorithms())
    Out[KV.first] = KV.second.Name;
  return Out;
}
