//===- TensorGeometry.h - Strides and physical orders -----------*- C++ -*-===//
//
// How a dense tensor with static shape and a layout is laid out in memory,
// in the terms kernels take: element strides per logical dim, the dims in
// physical order, broadcast strides, channel order. Shared by the
// backends' lowerings.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_TENSORGEOMETRY_H
#define STRIDER_CODEGEN_TENSORGEOMETRY_H

#include "strider/IR/Types.h"

#include "llvm/ADT/SmallVector.h"

#include <vector>

namespace strider {
namespace codegen {

/// Whether \p A and \p B have one shape and lay its elements out alike
/// (layouts equal, or differing only in dims of 1), so a kernel may walk
/// both flat buffers in one order; their element types may differ.
bool haveSameElementOrder(const TensorType &A, const TensorType &B);

/// Per-dim element strides of a dense tensor of type \p T in its layout.
llvm::SmallVector<int64_t, 6> getStrides(const TensorType &T);

/// The dims of a dense tensor of type \p T in its physical order
/// (outermost first) into \p Out (rank entries).
void getPhysicalShape(const TensorType &T, int64_t *Out);
/// Element strides of an operand of type \p Operand read at every index of
/// a result of type \p Result it broadcasts to (numpy rules: 0 along
/// broadcast dims), in the result's physical dim order, into \p Out.
void getBroadcastStrides(const TensorType &Operand, const TensorType &Result,
                         int64_t *Out);

/// How a dense tensor of logical shape (N, C, spatial...) is stored, for
/// kernels that walk it as Batch x Channels x Pixels.
enum class ChannelOrder {
  Last,  ///< Channels innermost, pixels nested above them (NHWC).
  First, ///< Contiguous channel planes (NCHW).
  Other,
};
/// \p T's order; a tensor that is stored in another dim order with the
/// same bytes (its unit dims elsewhere, e.g. [W, C, N] with N = 1) counts as
/// the order it equals.
ChannelOrder getChannelOrder(const TensorType &T);

/// Splits \p T's physical order into [Outer][Len][Inner] around the dims
/// marked in \p Middle (unit dims go anywhere); false if those are not
/// physically adjacent.
bool splitAround(const TensorType &T, const std::vector<bool> &Middle,
                 int64_t &Outer, int64_t &Len, int64_t &Inner);

/// A reduction of \p XT over the dims marked in \p Reduced into \p YT
/// (which keeps them as 1 when \p Keep) as Outer x Len x Inner (see
/// splitAround); false unless \p YT holds the kept dims in the same
/// physical order.
bool splitReduction(const TensorType &XT, const TensorType &YT,
                    const std::vector<bool> &Reduced, bool Keep,
                    int64_t &Outer, int64_t &Len, int64_t &Inner);

/// A row-major reshape of \p X into \p Y (same element count, both with
/// static shapes, any layouts) as one strided copy, over the coarsest shape
/// that refines both: each of its dims lies inside one dim of X and one of
/// Y, so it has a stride in each layout. Unit dims are dropped. False when
/// the two shapes have no such refinement (6x4 -> 4x6), where elements move
/// across dims in a way strides cannot express, or when \p X is empty.
bool getReshapeCopy(const TensorType &X, const TensorType &Y,
                    std::vector<int64_t> &Shape, std::vector<int64_t> &XStrides,
                    std::vector<int64_t> &YStrides);

} // namespace codegen
} // namespace strider

#endif // STRIDER_CODEGEN_TENSORGEOMETRY_H
