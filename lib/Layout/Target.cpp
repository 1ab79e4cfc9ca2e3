//===- Target.cpp - Built-in target descriptions --------------------------===//
//
// The figures behind each target. cpu-avx512's FMA peak and memory
// bandwidth are those measured on the project's 2-core AVX-512 machine (per
// core); the other CPU rows scale them by vector width. GPU rows are the
// vendors' published peaks derated to what cuDNN/cuBLAS typically reach.
// Relayout bandwidths and kernel efficiencies are estimates, not yet
// measurements: channels-last convolutions vectorize over channels and feed
// GEMMs directly, channels-first ones pay for im2col or a hidden transpose
// (cuDNN's tensor-core paths want NHWC). The CPU backend's tuning step is
// meant to replace them.
//
//===----------------------------------------------------------------------===//

#include "strider/Layout/Target.h"

#include "llvm/ADT/STLExtras.h"

using namespace strider;
using namespace strider::layout;

namespace {
// Columns: Name, Description, PeakGFlops, MemoryGBs, RelayoutGBs,
// KernelLaunchNs, VectorWidth, Conv efficiencies {Dense, Pointwise,
// Depthwise} as {channels-first, channels-last},
// SpatialChannelsFirstPenalty, HasMixedFirstConv, HasMixedLastConv,
// HasInt8.
const TargetDescription Targets[] = {
    {"cpu-avx512",
     "x86-64 with AVX-512, one core (FP32 FMA 250 GFLOP/s)",
     250.0,
     40.0,
     15.0,
     200.0,
     16,
     {{0.65, 0.85}, {0.75, 0.85}, {0.25, 0.50}},
     1.05,
     true,
     true,
     true},
    {"cpu-avx2",
     "x86-64 with AVX2/FMA, one core (FP32 FMA 110 GFLOP/s)",
     110.0,
     30.0,
     12.0,
     200.0,
     8,
     {{0.65, 0.85}, {0.75, 0.85}, {0.25, 0.50}},
     1.05,
     true,
     true,
     true},
    {"cpu-neon",
     "Arm64 with NEON, one core (FP32 FMA 60 GFLOP/s)",
     60.0,
     25.0,
     10.0,
     200.0,
     4,
     {{0.65, 0.85}, {0.75, 0.85}, {0.25, 0.50}},
     1.05,
     true,
     true,
     true},
    {"cuda-sm80",
     "NVIDIA A100 (TF32 tensor cores, 1.5 TB/s)",
     120000.0,
     1500.0,
     700.0,
     4000.0,
     32,
     {{0.40, 0.70}, {0.50, 0.75}, {0.20, 0.30}},
     1.10,
     false,
     false,
     false},
    {"cuda-sm90",
     "NVIDIA H100 (TF32 tensor cores, 3 TB/s)",
     300000.0,
     3000.0,
     1400.0,
     3000.0,
     32,
     {{0.40, 0.70}, {0.50, 0.75}, {0.20, 0.30}},
     1.10,
     false,
     false,
     false},
};
} // namespace

llvm::ArrayRef<TargetDescription> layout::getTargets() { return Targets; }

const TargetDescription *layout::lookupTarget(llvm::StringRef Name) {
  for (const TargetDescription &T : Targets)
    if (T.Name == Name)
      return &T;
  return nullptr;
}

const TargetDescription &layout::getDefaultTarget() { return Targets[0]; }
