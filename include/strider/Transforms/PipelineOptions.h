//===- PipelineOptions.h - Options tools hand to passes ---------*- C++ -*-===//
//
// The settings of a pass pipeline that come from a tool's command line
// (strider-opt, strider-compile) rather than from the pass list itself.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_TRANSFORMS_PIPELINEOPTIONS_H
#define STRIDER_TRANSFORMS_PIPELINEOPTIONS_H

#include "strider/Layout/LayoutAssignment.h"
#include "strider/Transforms/Precision.h"
#include "strider/Transforms/Specialize.h"

#include <vector>

namespace strider {

struct PipelineOptions {
  /// Target, --layout, --io-layout and dim bindings of layout assignment.
  layout::LayoutOptions Layout;
  /// Where layout-assignment appends the report of each run; null: the
  /// report is dropped.
  std::vector<layout::LayoutReport> *LayoutReports = nullptr;
  /// Input shapes and dim sizes of specialize-shapes.
  ShapeBindings Shapes;
  /// The half type of assign-precision (--precision).
  PrecisionOptions Precision;
  /// Where assign-precision appends its report; null: dropped.
  std::vector<PrecisionReport> *PrecisionReports = nullptr;
};

} // namespace strider

#endif // STRIDER_TRANSFORMS_PIPELINEOPTIONS_H
