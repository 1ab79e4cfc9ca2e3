//===- ResizeSampling.h - Where Resize reads its inputs ---------*- C++ -*-===//
//
// ONNX Resize (opset 19 semantics: modes, coordinate transformations,
// nearest modes, cubic coefficients, exclude_outside, aspect-ratio
// policies) reduced to per-axis sampling: for every output position along
// each axis, the input positions it reads and their weights. The reference
// interpreter and the CPU backend's Resize kernel both execute this one
// definition. Also GridSample's attributes, read once for every backend.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_RUNTIME_RESIZESAMPLING_H
#define STRIDER_RUNTIME_RESIZESAMPLING_H

#include "strider/Runtime/GridSampling.h"
#include "strider/Runtime/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace strider {

class Node;

namespace runtime {

/// One input position contributing to an output position along one axis.
struct ResizeTap {
  int64_t Index;
  double Weight;
};

/// Per-axis sampling of every output position.
struct ResizeAxis {
  std::vector<std::vector<ResizeTap>> Taps;
  /// tf_crop_and_resize: the output position lies outside the input.
  std::vector<bool> Extrapolated;
};

struct ResizeSampling {
  std::vector<ResizeAxis> Axes; ///< One per dim.
  double ExtrapolationValue = 0;
};

/// The sampling of Resize node \p N from \p InShape to \p OutShape, given
/// its roi, scales and sizes operands (null where absent or empty). Errors
/// are located at \p N (unsupported modes, antialias, inconsistent sizes).
llvm::Expected<ResizeSampling>
computeResizeSampling(const Node &N, llvm::ArrayRef<int64_t> InShape,
                      llvm::ArrayRef<int64_t> OutShape, const Tensor *Roi,
                      const Tensor *Scales, const Tensor *Sizes);

/// GridSample node \p N's mode, padding and corner alignment (the point
/// sampling every backend runs: GridSampling.h); errors located at \p N.
llvm::Expected<gridsample::Options> getGridSampleOptions(const Node &N);

} // namespace runtime
} // namespace strider

#endif // STRIDER_RUNTIME_RESIZESAMPLING_H
