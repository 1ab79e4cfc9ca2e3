//===- WindowGeometry.h - Sliding-window geometry ---------------*- C++ -*-===//
//
// The one place that turns the window attributes of Conv, ConvTranspose,
// MaxPool and AveragePool (kernel_shape, strides, dilations, pads,
// auto_pad, ceil_mode, output_padding, output_shape) into output sizes and
// per-axis padding. Shape inference, the reference kernels and the CPU
// lowerings all read their geometry from here.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_WINDOWGEOMETRY_H
#define STRIDER_IR_WINDOWGEOMETRY_H

#include "strider/IR/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

namespace strider {

class Node;

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

/// Attributes of a sliding window over \p NumSpatial dims, as written on
/// the node. Kernel sizes are None where unknown (taken from a weight dim
/// that is not static).
struct WindowAttrs {
  AutoPad Pad = AutoPad::NotSet;
  llvm::SmallVector<llvm::Optional<int64_t>, 3> Kernel;
  llvm::SmallVector<int64_t, 3> Strides, Dilations;
  /// Begin pads then end pads (2 * NumSpatial entries); zero under auto_pad.
  llvm::SmallVector<int64_t, 6> Pads;
  /// ConvTranspose only.
  llvm::SmallVector<int64_t, 3> OutputPadding;
  bool CeilMode = false;

  bool isSame() const {
    return Pad == AutoPad::SameUpper || Pad == AutoPad::SameLower;
  }
};

/// Parses the auto_pad attribute (default NOTSET).
llvm::Expected<AutoPad> readAutoPad(const Node &N);

/// Reads auto_pad, strides, dilations, pads, output_padding and ceil_mode
/// for \p NumSpatial spatial dims, plus kernel_shape: from the attribute
/// when present (it must then agree with \p WeightSpatial when given), from
/// \p WeightSpatial otherwise. Errors are located at \p N.
llvm::Error readWindowAttrs(const Node &N, unsigned NumSpatial,
                            llvm::Optional<llvm::ArrayRef<Dim>> WeightSpatial,
                            WindowAttrs &W);

/// One spatial axis of a window resolved over a static input: the input
/// position read by output o through tap k is
/// o * Stride - PadBegin + k * Dilation; positions in [-PadBegin,
/// In + PadEnd) lie inside the padded input (a ceil_mode window may reach
/// past it).
struct WindowAxis {
  int64_t In = 1, Out = 1, Kernel = 1, Stride = 1, Dilation = 1;
  int64_t PadBegin = 0, PadEnd = 0;

  int64_t dilatedKernel() const { return (Kernel - 1) * Dilation + 1; }
};

/// Resolves axis \p I of a forward window (Conv, MaxPool, AveragePool) over
/// an input of size \p In (kernel size known): the output size is
/// floor((In + pads - dilated kernel) / stride) + 1, or the ceiling under
/// ceil_mode (a last window starting past the input and its begin padding
/// is dropped), ceil(In / stride) under SAME_* (the total padding
/// (Out - 1) * stride + dilated kernel - In split evenly, the odd one at
/// the end for SAME_UPPER, at the beginning for SAME_LOWER), and pads 0
/// under VALID.
llvm::Expected<WindowAxis> resolveWindowAxis(const Node &N, int64_t In,
                                             unsigned I, const WindowAttrs &W);

/// Resolves axis \p I of a transposed convolution over an input of size
/// \p In: with \p Requested (output_shape) or under SAME_* (In * stride),
/// the pads follow from that output size (the odd one at the beginning
/// except under SAME_UPPER; a negative total puts the extra zeros at the
/// end); otherwise stride * (In - 1) + output_padding + dilated kernel -
/// pads.
llvm::Expected<WindowAxis>
resolveTransposedWindowAxis(const Node &N, int64_t In, unsigned I,
                            const WindowAttrs &W,
                            llvm::Optional<int64_t> Requested = llvm::None);

using WindowAxes = llvm::SmallVector<WindowAxis, 3>;

/// Every spatial axis of \p N over the static spatial input sizes
/// \p InSpatial: attributes read as by readWindowAttrs (kernel from
/// \p WeightSpatial when given, else kernel_shape), each axis resolved by
/// resolveWindowAxis, or by resolveTransposedWindowAxis (with output_shape)
/// when \p Transposed.
llvm::Expected<WindowAxes>
resolveWindow(const Node &N, llvm::ArrayRef<int64_t> InSpatial,
              llvm::Optional<llvm::ArrayRef<int64_t>> WeightSpatial,
              bool Transposed = false);

} // namespace strider

#endif // STRIDER_IR_WINDOWGEOMETRY_H
