//===- LayoutAlgebra.h - When layouts hold the same bytes -------*- C++ -*-===//
//
// Facts about physical layouts that need no cost model: when two layouts
// of a shape are the same bytes (they differ only in where unit dims go),
// when a reshape is a bitcast of the physical order, which layout makes a
// transpose a view. Layout assignment, the cost model and every backend's
// lowering ask these questions; symbolic dims count through DimBindings.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_LAYOUTALGEBRA_H
#define STRIDER_IR_LAYOUTALGEBRA_H

#include "strider/IR/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringMap.h"

#include <vector>

namespace strider {

class Node;

namespace layout {

/// Concrete sizes for symbolic dims: a bound symbol has its binding; any
/// other non-static dim counts as 1 for costs and as "not 1, unknown" for
/// the structural checks (equivalence, bitcasts).
class DimBindings {
public:
  void bind(llvm::StringRef Symbol, int64_t Size) { Sizes[Symbol] = Size; }
  /// Size of \p D for cost estimates.
  int64_t getCostSize(const Dim &D) const;
  /// Size of \p D if known (static or bound), -1 otherwise.
  int64_t getKnownSize(const Dim &D) const;
  bool empty() const { return Sizes.empty(); }

private:
  llvm::StringMap<int64_t> Sizes;
};

/// Whether the bytes of a tensor of logical shape \p Shape are the same in
/// layouts \p A and \p B (they differ only in where unit dims go).
bool areLayoutsEquivalent(llvm::ArrayRef<Dim> Shape, const Layout &A,
                          const Layout &B, const DimBindings &Dims);

/// Whether reshaping \p From (row-major logical semantics, as Reshape,
/// Flatten, Squeeze and Unsqueeze have) into \p To is a bitcast of their
/// physical orders given their layouts.
bool isReshapeBitcast(const TensorType &From, const TensorType &To,
                      const DimBindings &Dims);

/// A layout for a tensor of shape \p To that makes reshaping \p From (in
/// its layout) into it a bitcast, if one exists.
llvm::Optional<Layout> getReshapeBitcastLayout(const TensorType &From,
                                               llvm::ArrayRef<Dim> To,
                                               const DimBindings &Dims);

/// The permutation of Transpose node \p N (its default reverses the dims).
std::vector<int64_t> getTransposePerm(const Node &N);

/// The layout of Transpose(\p From, \p Perm) that is a view of \p From's
/// bytes.
Layout getTransposeViewLayout(const TensorType &From,
                              llvm::ArrayRef<int64_t> Perm);

/// Whether Transpose(\p From, \p Perm) stored as \p To is a view of
/// \p From's bytes.
bool isTransposeView(const TensorType &From, llvm::ArrayRef<int64_t> Perm,
                     const TensorType &To, const DimBindings &Dims);

} // namespace layout
} // namespace strider

#endif // STRIDER_IR_LAYOUTALGEBRA_H
