//===- Verifier.h - IR invariants --------------------------------*- C++ -*-===//
//
// Checks a graph: use-def integrity, acyclicity and order, unique names,
// operand/result counts, attribute schemas and per-op type rules (through
// shape inference). Run after every pass by the pass manager.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_VERIFIER_H
#define STRIDER_IR_VERIFIER_H

#include "llvm/Support/Error.h"

namespace strider {

class Graph;
class Node;

/// Verify the whole graph; the first problem is returned as a located error.
llvm::Error verifyGraph(const Graph &G);

/// Check one node's operand/result counts and attributes against its table
/// entry (no type rules). Opaque nodes always pass.
llvm::Error verifyNodeSchema(const Node &N);

} // namespace strider

#endif // STRIDER_IR_VERIFIER_H
