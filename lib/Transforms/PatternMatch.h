//===- PatternMatch.h - Matching decomposed op spellings --------*- C++ -*-===//
//
// Private to lib/Transforms. Small queries the fusion passes (fuse-gelu,
// fuse-hardswish, fuse-layernorm) share while walking an exported op
// decomposition: the defining node of a given op, a binary node's operand
// next to a one-element constant of a given value, and whether an
// intermediate value may be absorbed (exactly one reader, not a graph
// output).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_TRANSFORMS_PATTERNMATCH_H
#define STRIDER_LIB_TRANSFORMS_PATTERNMATCH_H

#include "strider/IR/Graph.h"

namespace strider {
namespace pattern {

/// The node defining \p V if it is a (non-opaque) \p Id node, else null.
Node *getDefiningOp(const Value *V, OpId Id);

/// The only node reading \p V when \p V is absorbable (see isAbsorbable)
/// and that node is a \p Id node; null otherwise.
Node *getSoleUserOp(const Graph &G, const Value *V, OpId Id);

/// Whether \p V has exactly one use and is not a graph output, so that a
/// fusion may remove its producer.
bool isAbsorbable(const Graph &G, const Value *V);

/// Whether \p V is a one-element floating-point constant within a relative
/// 1e-4 of \p Want (exporters round sqrt(2), sqrt(2 / pi), ... to float).
bool isScalarConstant(const Value *V, double Want);

/// For a two-operand node \p N, one of whose operands is a constant
/// isScalarConstant(.., Want): the other operand; null otherwise.
Value *getOperandBesideConstant(const Node &N, double Want);

/// For a two-operand node \p N reading \p V: its other operand (null if
/// \p N does not read \p V).
Value *getOtherOperand(const Node &N, const Value *V);

/// Replaces a matched spelling, \p Nodes (producers first, the last one
/// defining \p Y) computing \p Y from \p X, by one \p Op node reading
/// \p X, which takes \p Y's name and the last node's location, and erases
/// \p Nodes. Returns the new node (for its attributes), or null with the
/// graph unchanged unless \p X and \p Y are float tensors of one shape and
/// type.
Node *replaceWithOneNode(Graph &G, llvm::ArrayRef<Node *> Nodes, Value *X,
                         Value *Y, OpId Op);

} // namespace pattern
} // namespace strider

#endif // STRIDER_LIB_TRANSFORMS_PATTERNMATCH_H
