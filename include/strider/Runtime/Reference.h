//===- Reference.h - The reference interpreter ------------------*- C++ -*-===//
//
// Executes a verified IR graph on tensors in any physical layout with
// plain, obviously correct loops (accumulating in double): the oracle every
// optimization and backend is checked against, not a fast path. Kernels are
// entries of a table keyed by op; each reads its operands and writes its
// results through their layouts' strides.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_RUNTIME_REFERENCE_H
#define STRIDER_RUNTIME_REFERENCE_H

#include "strider/IR/OpInfo.h"
#include "strider/Runtime/Tensor.h"

#include "llvm/Support/Error.h"

#include <optional>

#include <map>
#include <string>

namespace strider {

class Graph;
class Node;

namespace runtime {

/// Tensors by value name (graph inputs, graph outputs).
using TensorMap = std::map<std::string, Tensor>;

/// Checks that \p Outputs holds a tensor named \p Name of element type
/// \p Elt and logical shape \p Shape (what a run writes into it), with
/// the error runInto gives otherwise.
llvm::Error checkOutput(const TensorMap &Outputs, const std::string &Name,
                        ElementType Elt, llvm::ArrayRef<int64_t> Shape);

/// A reference kernel: computes the results of \p N from its operands (null
/// for a missing optional operand). \p Results are allocated by the
/// interpreter from the result types (static shapes, layouts; a null
/// result slot is an empty Tensor) and zero-filled. Errors are located at
/// \p N (makeNodeError) and say what is unsupported or wrong.
using ReferenceKernel = llvm::Error (*)(const Node &N,
                                        llvm::ArrayRef<const Tensor *> Operands,
                                        llvm::MutableArrayRef<Tensor> Results);

/// The kernel of op \p Id, or null if the reference interpreter has none.
ReferenceKernel lookupReferenceKernel(OpId Id);

/// Runs \p G. \p Inputs gives every graph input by name (an input with
/// default data may be left out), with the input's element type and
/// logical shape; it is relaid into the input's declared layout. Every
/// value must have a static shape (bind symbolic dims and infer shapes
/// first). Returns the graph outputs by name, in their declared layouts.
llvm::Expected<TensorMap> runReference(const Graph &G, const TensorMap &Inputs);

/// The most bytes of tensors runReference(\p G) holds at once (its
/// inputs, the results of the node running and every value still to be
/// read), and in \p PeakNode the node at which it holds them (null when
/// the peak is the inputs alone); none when a value's shape is not static.
/// Kernels' own scratch is not counted.
std::optional<uint64_t> getReferencePeakBytes(const Graph &G,
                                              const Node **PeakNode = nullptr);

} // namespace runtime
} // namespace strider

#endif // STRIDER_RUNTIME_REFERENCE_H
