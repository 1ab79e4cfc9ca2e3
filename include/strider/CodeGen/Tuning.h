//===- Tuning.h - Timing a backend's kernels for layout choice --*- C++ -*-===//
//
// What `strider-compile --tune` does for every backend: each convolution of
// a graph is built as a one-op program in its four layout variants (NCHW or
// channels-last in, NCHW or channels-last out, with the residual Add the
// backends fuse when the model has one), and a relayout of each conv's
// input and output shape likewise; a backend compiles and times them, and
// the medians go into a layout::TuningTable. Entries the table already
// holds are not measured again (cudnn.benchmark, ahead of time and kept in
// a file).
//
// The backends (cpu::tuneGraph, cuda::tuneGraph) supply how a one-op graph
// becomes a timed program; the rest is shared here.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_TUNING_H
#define STRIDER_CODEGEN_TUNING_H

#include "strider/IR/Types.h"
#include "strider/Layout/Tuning.h"
#include "strider/Runtime/Reference.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <memory>

namespace llvm {
class raw_ostream;
}

namespace strider {

class Graph;

namespace layout {
class DimBindings;
}

namespace codegen {

/// A one-op program compiled for timing.
class TimedProgram {
public:
  virtual ~TimedProgram() = default;
  /// Runs the program \p Reps times on \p Inputs and returns the time of
  /// its kernels per run in nanoseconds (copying inputs in and outputs out
  /// is not counted).
  virtual llvm::Expected<double> run(const runtime::TensorMap &Inputs,
                                     unsigned Reps) = 0;
};

/// A TimedProgram over a backend's program whose profiling (setProfiling,
/// getStepSeconds, getProfiledRuns) times each step: the time counted is
/// the sum of its steps.
template <typename ProgramT> class ProfiledProgram final : public TimedProgram {
public:
  explicit ProfiledProgram(std::unique_ptr<ProgramT> P) : P(std::move(P)) {}

  llvm::Expected<double> run(const runtime::TensorMap &Inputs,
                             unsigned Reps) override {
    P->setProfiling(true);
    for (unsigned I = 0; I < Reps; ++I)
      if (auto R = P->run(Inputs); !R)
        return R.takeError();
    double Sum = 0;
    for (double Sec : P->getStepSeconds())
      Sum += Sec;
    return Sum / double(std::max(1u, P->getProfiledRuns())) * 1e9;
  }

private:
  std::unique_ptr<ProgramT> P;
};

/// Compiles a one-op graph for timing. A null program (no error) when the
/// backend has no kernel of its own for it: that variant is not offered.
using CompileForTiming =
    llvm::function_ref<llvm::Expected<std::unique_ptr<TimedProgram>>(
        const Graph &)>;

struct TuneDriverOptions {
  /// Element type of the convs' and relayouts' data (f32; f16 or bf16 when
  /// a GPU table is measured for mixed precision).
  ElementType Type = ElementType::F32;
  /// Timed samples per kernel, in rounds over the variants being compared;
  /// the median counts.
  unsigned Samples = 7;
  /// Each sample repeats the kernel for at least this long.
  double SampleSeconds = 0.002;
  /// One line per measured conv, if set.
  llvm::raw_ostream *Log = nullptr;
};

struct TuneStats {
  /// Convs of the graph with known shapes and f32 data, and how many of
  /// them this call measured (the rest were in the table).
  unsigned Convs = 0;
  unsigned MeasuredConvs = 0;
  unsigned MeasuredRelayouts = 0;
  /// Convs left to the estimates: a dim not bound (see --dim), or not
  /// f32.
  unsigned SkippedConvs = 0;
  double Seconds = 0;
};

/// Measures what \p Table lacks for \p G (shape-inferred, \p Dims bound)
/// with programs from \p Compile and adds it. Errors name the conv whose
/// program failed.
llvm::Error tuneConvsAndRelayouts(const Graph &G,
                                  const layout::DimBindings &Dims,
                                  const TuneDriverOptions &Opts,
                                  CompileForTiming Compile,
                                  layout::TuningTable &Table,
                                  TuneStats *Stats = nullptr);

} // namespace codegen
} // namespace strider

#endif // STRIDER_CODEGEN_TUNING_H
