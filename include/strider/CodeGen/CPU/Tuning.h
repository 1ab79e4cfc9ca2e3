//===- Tuning.h - Timing CPU kernels for layout choice ---------*- C++ -*-===//
//
// Fills a layout::TuningTable with times measured on this machine, each
// as a one-op program of the CPU backend (codegen::tuneConvsAndRelayouts
// says what is measured).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_CPU_TUNING_H
#define STRIDER_CODEGEN_CPU_TUNING_H

#include "strider/CodeGen/Tuning.h"

namespace strider {
namespace cpu {

struct TuneOptions {
  /// Threads each timed kernel runs on.
  int Threads = 1;
  /// Samples, their length and the log (Timing.Type: always f32 here).
  codegen::TuneDriverOptions Timing;
};

/// Measures what \p Table lacks for \p G (shape-inferred, \p Dims bound)
/// and adds it. Errors name the conv whose program failed.
llvm::Error tuneGraph(const Graph &G, const layout::DimBindings &Dims,
                      const TuneOptions &Opts, layout::TuningTable &Table,
                      codegen::TuneStats *Stats = nullptr);

} // namespace cpu
} // namespace strider

#endif // STRIDER_CODEGEN_CPU_TUNING_H
