//===- Tuning.h - Timing CUDA kernels for layout choice ---------*- C++ -*-===//
//
// `strider-compile --tune` on a cuda-* target: fills a layout::TuningTable
// with times measured on a GPU, each as a one-op program of the CUDA
// backend (codegen::tuneConvsAndRelayouts says what is measured) in the
// table's precision, with cuDNN's find choosing each conv's algorithm.
// The winners go into the table too, so that programs built with it run
// the measured algorithms (CUDAOptions::Algorithms).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_CUDA_TUNING_H
#define STRIDER_CODEGEN_CUDA_TUNING_H

#include "strider/CodeGen/CUDA/CUDABackend.h"
#include "strider/CodeGen/Tuning.h"

#include "llvm/Support/Error.h"

namespace strider {
namespace cuda {

struct TuneOptions {
  int Device = 0;
  /// What the convs compute in: FP16/BF16 time half data (the
  /// assign-precision pass puts convs in half), FP32/TF32 f32 data.
  Precision Math = Precision::FP32;
  /// Samples, their length and the log (Timing.Type follows Math).
  codegen::TuneDriverOptions Timing;
};

/// Measures what \p Table lacks for \p G (shape-inferred, \p Dims bound)
/// on device Opts.Device and adds it, with the algorithm each timed conv
/// ran. Errors: no device (checkDevice's message), or the conv whose
/// program failed.
llvm::Error tuneGraph(const Graph &G, const layout::DimBindings &Dims,
                      const TuneOptions &Opts, layout::TuningTable &Table,
                      codegen::TuneStats *Stats = nullptr);

/// The algorithms of \p Table (cuda-* tables) as CUDAOptions::Algorithms
/// takes them.
std::map<std::string, std::string>
getTunedAlgorithms(const layout::TuningTable &Table);

} // namespace cuda
} // namespace strider

#endif // STRIDER_CODEGEN_CUDA_TUNING_H
