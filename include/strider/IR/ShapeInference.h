//===- ShapeInference.h - Result types of ops -------------------*- C++ -*-===//
//
// Strider's own shape and type inference for every op of the table, with
// symbolic dims. Inference reads operand types and the contents of constant
// operands (Reshape targets, Slice bounds, Resize scales, ...), and reports
// inconsistent models as located errors. It computes logical types; result
// layouts are kept as they are (relayout's result layout is its meaning).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_SHAPEINFERENCE_H
#define STRIDER_IR_SHAPEINFERENCE_H

#include "strider/IR/Types.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace strider {

class Graph;
class Node;
class Value;

/// Compute the result types of \p N (one entry per result slot, including
/// missing ones) from its operands. For opaque nodes the current result
/// types are returned unchanged.
llvm::Error inferResultTypes(const Node &N,
                             llvm::SmallVectorImpl<TensorType> &Results);

/// Whether a value declared with \p Declared may hold what inference
/// computed as \p Inferred: same element type (unless either is Unknown),
/// same rank (unless either is unranked), equal static dims.
bool isCompatibleType(const TensorType &Declared, const TensorType &Inferred);

/// The more specific of two compatible types, dim by dim: a static dim
/// beats a symbol, a symbol beats unknown. The layout of \p Declared is kept
/// when \p Inferred has the identity layout.
TensorType refineType(const TensorType &Declared, const TensorType &Inferred);

/// Element count of Range(\p Start, \p Limit, \p Delta):
/// max(ceil((Limit - Start) / Delta), 0). None when Delta is 0, a value is
/// not finite, or the count exceeds 2^62. Integer ranges use exact
/// integer arithmetic.
llvm::Optional<int64_t> getRangeLength(double Start, double Limit,
                                       double Delta);
llvm::Optional<int64_t> getRangeLength(int64_t Start, int64_t Limit,
                                       int64_t Delta);

/// Infer and refine the result types of every node, in order. Fails on the
/// first node whose operands are inconsistent. A declared result type that
/// contradicts inference is an error too, unless \p Conflicts is given:
/// then inference wins (the declared layout is kept) and a located note per
/// overridden value is appended to \p Conflicts (how ONNX Runtime treats a
/// wrong value_info).
///
/// With \p Memo, what this call saw of each node (Node::getSerial and
/// getVersion after inference) is recorded there, and a call given the
/// memo of an earlier call on the same graph infers only the nodes made
/// or changed since, and those downstream of a result whose type changed
/// (a round of shape folding re-infers what it folded, not the graph);
/// a graph input whose type changed counts as a changed result.
struct InferenceMemo {
  llvm::DenseMap<uint64_t, uint64_t> Seen;
  std::vector<std::pair<const Value *, TensorType>> Inputs;
};
llvm::Error inferShapes(Graph &G, std::vector<std::string> *Conflicts = nullptr,
                        InferenceMemo *Memo = nullptr);

} // namespace strider

#endif // STRIDER_IR_SHAPEINFERENCE_H
