//===- GraphRewrite.h - Rewriting helpers shared by passes ------*- C++ -*-===//
//
// Private to lib/Transforms. Replacing values (uses and graph output slots
// alike) so that a graph output keeps its ONNX name when a pass replaces its
// producer, forwarding pass-through nodes, creating Constant nodes and
// checking whether a node is dead.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_TRANSFORMS_GRAPHREWRITE_H
#define STRIDER_LIB_TRANSFORMS_GRAPHREWRITE_H

#include "strider/IR/Graph.h"
#include "strider/IR/TensorData.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <initializer_list>
#include <string>
#include <vector>

namespace strider {
namespace rewrite {

/// Redirect every use of \p From, and every graph output slot holding it, to
/// \p To.
void replaceAllUsesAndOutputs(Graph &G, Value *From, Value *To);

/// Replace \p Old by \p New everywhere (uses and graph output slots), erase
/// Old's defining node, which must have no other live result, and give
/// \p New Old's name, so that graph outputs keep their names. \p New must
/// be a node result that is not a graph output (renaming a graph input or
/// another output would change the graph's interface).
void replaceAndTakeName(Graph &G, Value *Old, Value *New);

/// For a node \p N that passes its operand \p Input through unchanged as
/// \p Result (Identity, an identity Transpose, inference Dropout): make
/// Result's users use Input. Nothing changes when the two differ in layout
/// (the node then moves data). Graph outputs keep their names: when Result
/// is one, Input's producer takes over Result's name if Input is a node
/// result, not a graph output, of exactly Result's type; otherwise N stays
/// to feed the outputs (a graph output must not become a graph input or a
/// second copy of another output). \p N must have no other live result. N
/// is erased when it ends up dead. Returns whether anything changed.
bool forwardPassThrough(Graph &G, Node &N, Value *Input, Value *Result);

/// The nodes of \p G whose op is one of \p Ops, in graph order: a
/// snapshot a pass can walk while it erases nodes (each rewrite must then
/// erase only nodes it has already visited or its own).
std::vector<Node *> collectNodes(Graph &G, std::initializer_list<OpId> Ops);

/// Whether no result of \p N is used or is a graph output.
bool hasNoLiveResults(const Graph &G, const Node &N);

/// Create a Constant node holding \p Data (in the physical order of its own
/// type's layout) whose result has type \p Type and a fresh name made from
/// \p BaseName, located at \p Loc, before \p InsertBefore.
Value *createConstant(Graph &G, TensorDataRef Data, const TensorType &Type,
                      llvm::StringRef BaseName, const Location &Loc,
                      Node *InsertBefore);

/// A node of \p Op before \p At (named from \p Base, located at At) with
/// its inferred result type, or an error.
llvm::Expected<Value *> createInferred(Graph &G, OpId Op,
                                       llvm::ArrayRef<Value *> Operands,
                                       llvm::ArrayRef<NamedAttribute> Attrs,
                                       const std::string &Base, Node &At);

} // namespace rewrite
} // namespace strider

#endif // STRIDER_LIB_TRANSFORMS_GRAPHREWRITE_H
