//===- Target.h - Target descriptions for the layout cost model -*- C++ -*-===//
//
// What layout assignment knows about a machine: peak compute, memory and
// relayout bandwidth, and how efficient its convolution kernels are in
// each layout. The figures are analytic estimates (see docs/Layouts.md);
// the CPU backend's tuning step is meant to replace them by measurements.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LAYOUT_TARGET_H
#define STRIDER_LAYOUT_TARGET_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace strider {
namespace layout {

/// The two layout labels of today's assignment.
enum LayoutLabel : uint8_t { ChannelsFirst = 0, ChannelsLast = 1 };

/// Fractions of peak a target's convolution kernels reach, per layout
/// (index: LayoutLabel).
struct ConvEfficiency {
  /// Dense convolutions (group 1, any kernel size), before vector-width
  /// scaling.
  double Dense[2];
  /// 1x1 convolutions with stride 1 (a GEMM in either layout).
  double Pointwise[2];
  /// Depthwise convolutions (group == input channels == output channels).
  double Depthwise[2];
};

struct TargetDescription {
  llvm::StringRef Name;
  llvm::StringRef Description;
  /// Dense FP32 multiply-add throughput in GFLOP/s.
  double PeakGFlops;
  /// Streaming bandwidth of memory-bound kernels in GB/s (bytes read plus
  /// written per second).
  double MemoryGBs;
  /// How fast a relayout moves a tensor, in GB/s of tensor size.
  double RelayoutGBs;
  /// Fixed cost of launching any kernel, in nanoseconds.
  double KernelLaunchNs;
  /// Elements per vector register (FP32): channels-last kernels vectorize
  /// over (output) channels per group, channels-first ones over width.
  unsigned VectorWidth;
  ConvEfficiency Conv;
  /// Multiplier on the time of channels-first memory-bound spatial ops
  /// (pooling, normalization, resize): > 1 where such kernels are slower
  /// than their channels-last versions.
  double SpatialChannelsFirstPenalty;
  /// Whether first-layer convolutions may read channels-first and write
  /// channels-last (a kernel variant for few input channels).
  bool HasMixedFirstConv;
  /// Whether convolutions may read channels-last and write channels-first
  /// (the relayout fused into the conv's store).
  bool HasMixedLastConv;
  /// Whether the backend runs 8-bit kernels: canonicalize then fuses
  /// DequantizeLinear -> Conv -> QuantizeLinear into one QLinearConv
  /// (fuse-quantized-conv) and quantized elementwise ops into lookup
  /// tables (fuse-quantized-lookup); elsewhere a QLinearConv becomes that
  /// float form.
  bool HasInt8;
};

/// All built-in targets, in a fixed order.
llvm::ArrayRef<TargetDescription> getTargets();
/// Target by name, or null.
const TargetDescription *lookupTarget(llvm::StringRef Name);
/// The default target (`cpu-avx512`).
const TargetDescription &getDefaultTarget();

} // namespace layout
} // namespace strider

#endif // STRIDER_LAYOUT_TARGET_H
