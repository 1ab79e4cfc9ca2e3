//===- Fusion.h - Fusion groups shared by the backends ----------*- C++ -*-===//
//
// Every backend lowers a graph the same way: producers that take an
// epilogue (a conv, a GEMM, a binary elementwise op) absorb the residual
// Add and the activation after them, and the group is emitted at its last
// node; an integer producer may first absorb its conversion back to float
// (Cast, Mul by a scale, Add of a constant). Which producers take which
// epilogue is an op trait (Ops.def's TakesActivation, TakesResidual,
// TakesRescale); finding the groups is done here once.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_FUSION_H
#define STRIDER_CODEGEN_FUSION_H

#include "strider/CodeGen/Activation.h"
#include "strider/IR/Graph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace strider {
namespace codegen {

/// A fusion group: a producer with an optional rescale, an optional
/// residual Add and an optional activation after it, computed by one
/// kernel whose epilogue does the rest.
struct FusedTail {
  /// TakesRescale producers: the Mul's other operand after the Cast to
  /// f32 (null: no rescale), and the constant the Add after it adds (null:
  /// none). Their shapes broadcast against the result; the backend checks
  /// it can read them.
  const Value *Scale = nullptr, *Shift = nullptr;
  const Value *Residual = nullptr; ///< The Add's other operand.
  Activation Act;
  const Value *Result = nullptr; ///< The value the group defines.
  const Node *Last = nullptr;    ///< The group's last node.
  /// The group's nodes after the producer, in order.
  llvm::SmallVector<const Node *, 2> Followers;
};

/// The activation node \p N computes, if it is one the epilogues fuse
/// (f32 or a half type; Clip needs constant bounds).
bool getFusableActivation(const Node &N, Activation &Out);
/// The same for any result type (the CUDA typed kernel's f64 math).
bool getActivation(const Node &N, Activation &Out);
/// Every op getActivation maps to an ActKind: the unary ops both backends
/// run on their activation kernels.
llvm::ArrayRef<OpId> getActivationOps();

/// Whether tensors of types \p A and \p B hold the same bytes (same
/// element type and shape, layouts equal or differing only in unit dims).
bool haveSameBytes(const TensorType &A, const TensorType &B);

/// The fusion groups of a graph.
struct FusionGroups {
  /// Member after a producer -> that producer.
  llvm::DenseMap<const Node *, const Node *> GroupOf;
  /// Producer -> its group (a group of one node when nothing fused).
  llvm::DenseMap<const Node *, FusedTail> Tails;
};

/// Groups the nodes of \p Order (the graph's nodes in program order):
/// every node for which \p IsLowerable holds gets a group, greedily in
/// order.
FusionGroups
findFusionGroups(const Graph &G, llvm::ArrayRef<const Node *> Order,
                 llvm::function_ref<bool(const Node &)> IsLowerable);

} // namespace codegen
} // namespace strider

#endif // STRIDER_CODEGEN_FUSION_H
