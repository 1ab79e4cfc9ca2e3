//===- Tuning.h - Timing CPU kernels for layout choice ---------*- C++ -*-===//
//
// Fills a layout::TuningTable with times measured on this machine: every
// convolution of a graph in each of its four layout variants (NCHW or NHWC
// in, NCHW or NHWC out), and a relayout of each conv's input and output
// shape, each as a one-op program of the CPU backend. Like
// cudnn.benchmark, but ahead of time and cached in a file: entries the
// table already holds are not measured again.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_CPU_TUNING_H
#define STRIDER_CODEGEN_CPU_TUNING_H

#include "strider/Layout/Tuning.h"

#include "llvm/Support/Error.h"

namespace llvm {
class raw_ostream;
}

namespace strider {

class Graph;

namespace layout {
class DimBindings;
}

namespace cpu {

struct TuneOptions {
  /// Threads each timed kernel runs on.
  int Threads = 1;
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
/// and adds it. Errors name the conv whose program failed.
llvm::Error tuneGraph(const Graph &G, const layout::DimBindings &Dims,
                      const TuneOptions &Opts, layout::TuningTable &Table,
                      TuneStats *Stats = nullptr);

} // namespace cpu
} // namespace strider

#endif // STRIDER_CODEGEN_CPU_TUNING_H
