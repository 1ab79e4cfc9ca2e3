//===- Diagnostics.h - Located error messages -------------------*- C++ -*-===//
//
// Helpers that build llvm::Error values whose message says what and where:
// `model.onnx: node 'conv1' (Conv): input 'W' has rank 3, expected 4`.
// Libraries return these; tools print them.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_DIAGNOSTICS_H
#define STRIDER_IR_DIAGNOSTICS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>

namespace strider {

class Graph;
class Node;
class Value;

/// A plain error with message \p Msg (already located by the caller).
llvm::Error makeError(const llvm::Twine &Msg);

/// `<file>: node '<name>' (<OpType>)`; when the node has no name, the name
/// of its first result is used instead (`node producing 'x'`).
std::string describeNode(const Node &N);

/// Error located at node \p N: `<describeNode(N)>: <Msg>`.
llvm::Error makeNodeError(const Node &N, const llvm::Twine &Msg);

/// Error located at a graph (`<file>: graph '<name>': <Msg>`).
llvm::Error makeGraphError(const Graph &G, const llvm::Twine &Msg);

} // namespace strider

#endif // STRIDER_IR_DIAGNOSTICS_H
