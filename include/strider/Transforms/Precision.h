//===- Precision.h - Mixed-precision assignment -----------------*- C++ -*-===//
//
// Automatic mixed precision for the GPU backend, as users know it from
// AMP: convolutions and matmuls compute in f16 or bf16, normalizations,
// softmax, reductions and the graph's inputs and outputs stay f32, and the
// ops in between (activations, elementwise arithmetic, pooling, data
// movement) run in whichever type costs least. The choice is global: every
// node that may change type is a variable of the same two-label problem
// layout assignment solves (lib/Layout's min-cut), with the op's estimated
// time in each type as its unary cost and one Cast per value whose
// producer and readers disagree as the shared cost of that value.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_TRANSFORMS_PRECISION_H
#define STRIDER_TRANSFORMS_PRECISION_H

#include "strider/IR/Types.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace strider {

class Graph;

namespace layout {
struct TargetDescription;
}

struct PrecisionOptions {
  /// The half type convolutions and matmuls compute in: F16 or BF16.
  /// Unknown (the default) leaves the graph as it is.
  ElementType Half = ElementType::Unknown;
  /// Where the costs come from; null: the default cuda target (cuda-sm90).
  const layout::TargetDescription *Target = nullptr;
};

/// One Cast the assignment inserted.
struct CastRecord {
  std::string Value;   ///< The value converted.
  std::string Readers; ///< Names of the nodes reading the converted value.
  ElementType From = ElementType::Unknown, To = ElementType::Unknown;
  int64_t Elements = 0; ///< 0 when the shape is not static.
};

/// What the assignment did, for reports.
struct PrecisionReport {
  ElementType Half = ElementType::Unknown;
  unsigned HalfNodes = 0;    ///< Nodes that now compute in the half type.
  unsigned ComputeNodes = 0; ///< Of them, convolutions and matmuls.
  unsigned FloatNodes = 0;   ///< Nodes that could have, kept in f32.
  /// Nodes kept in f32 before costing: a Log reads their results through
  /// arithmetic, data movement and convs/matmuls by constant weights
  /// (log-domain features: half rounding ruins a spectrum's quiet bins).
  unsigned LogFeeders = 0;
  std::vector<CastRecord> Casts;
  /// "precision f16: 53 nodes in f16 (20 convs/matmuls), 4 kept f32 (and
  /// 6 feeding a Log), 3 casts (1200000 bytes written)"; the part in
  /// parentheses only where some are.
  std::string summary() const;
  /// The summary, then one line per cast.
  void print(llvm::raw_ostream &OS) const;
};

/// Assigns precisions in \p G as the file comment says. Run after layout
/// assignment (casts keep the layouts of the values they convert); shapes
/// need not be static (unknown dims count as 1 in the costs). Nodes of
/// types other than f32 are left alone.
llvm::Expected<PrecisionReport> assignPrecision(Graph &G,
                                                const PrecisionOptions &Opts);

/// "fp16" -> F16, "bf16" -> BF16, "fp32" -> Unknown (no change); None
/// for other names.
llvm::Optional<ElementType> parseHalfPrecision(llvm::StringRef Name);

} // namespace strider

#endif // STRIDER_TRANSFORMS_PRECISION_H
