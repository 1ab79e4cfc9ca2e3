//===- InferFunctions.h - Per-op shape functions (internal) -----*- C++ -*-===//
//
// Declarations of the `infer<Id>` shape function of every op in Ops.def and
// the helpers they share (InferUtils.cpp). Private to lib/IR.
//
// Conventions of every shape function: it computes logical types (identity
// layout; operand layouts are ignored), one entry per result slot it models;
// an operand of Unknown element type propagates Unknown; every inconsistency
// is a located error made with makeNodeError, never a crash or an assert.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_IR_INFERFUNCTIONS_H
#define STRIDER_LIB_IR_INFERFUNCTIONS_H

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/IR/WindowGeometry.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"

namespace strider {
namespace detail {

using ResultTypes = llvm::SmallVectorImpl<TensorType>;

#define STRIDER_OP(Id, Name, MinIn, MaxIn, MinOut, MaxOut, Layout, Attrs)      \
  llvm::Error infer##Id(const Node &N, ResultTypes &Results);
#include "strider/IR/Ops.def"

//===----------------------------------------------------------------------===//
// Shared helpers (InferUtils.cpp)
//===----------------------------------------------------------------------===//

/// Largest static dim (and element count) inference produces: 2^62. Larger
/// computed sizes are reported as errors instead of overflowing.
constexpr int64_t MaxDimSize = int64_t(1) << 62;

/// Most entries a 1-D list operand (shape, axes, pads, ...) may have; its
/// length can become a rank.
constexpr int64_t MaxListLength = int64_t(1) << 16;

using DimList = llvm::SmallVector<Dim, 6>;

/// \p T with the identity layout (operand layouts never affect semantics).
TensorType getLogicalType(const TensorType &T);

/// A ranked type of element type \p Elt with identity layout.
inline TensorType makeType(ElementType Elt, llvm::ArrayRef<Dim> Shape) {
  return TensorType(Elt, Shape);
}

/// Logical type of operand \p I, or null when the operand is absent.
const TensorType *getOperandType(const Node &N, unsigned I);

/// Error `missing required operand '<Name>'` unless operand \p I exists.
llvm::Error checkOperandPresent(const Node &N, unsigned I,
                                llvm::StringRef Name);

/// Operand \p Index of a node, required, named \p Name in errors; its
/// logical type is stored through \p Type.
struct RequiredOperand {
  unsigned Index;
  llvm::StringRef Name;
  const TensorType **Type;
};
/// The types of the operands in \p Ops, or the first one's
/// checkOperandPresent error.
llvm::Error getRequiredOperands(const Node &N,
                                llvm::ArrayRef<RequiredOperand> Ops);

/// Error `input '<Name>' has rank R, expected Rank` if \p T is ranked with
/// another rank.
llvm::Error checkRank(const Node &N, const TensorType &T, llvm::StringRef Name,
                      unsigned Rank);
/// Error `input '<Name>' has rank R, expected at least MinRank`.
llvm::Error checkMinRank(const Node &N, const TensorType &T,
                         llvm::StringRef Name, unsigned MinRank);

/// Classes of element types an operand may be restricted to.
enum class EltClass {
  Any,     ///< any element type
  Numeric, ///< anything but bool
  Float,   ///< f16, bf16, f32, f64
  Index,   ///< i32 or i64
  I64,     ///< i64 only
  Bool,    ///< bool only
};

/// Error `input '<Name>' has element type X, expected <class>` unless \p Ty
/// is Unknown or in \p Class.
llvm::Error checkElementType(const Node &N, ElementType Ty,
                             llvm::StringRef Name, EltClass Class);

/// The common element type of two operands that must agree: Unknown yields
/// the other one; two different known types are an error
/// `element type mismatch: f32 vs f16`.
llvm::Error unifyElementTypes(const Node &N, ElementType &Acc,
                              ElementType Next);

/// Merge two dims that must be equal at run time: a static dim beats a
/// symbol, a symbol beats unknown. False if both are static and differ.
bool mergeDims(const Dim &A, const Dim &B, Dim &Result);

/// Multidirectional (numpy) broadcast of two dims. Rules, chosen to be
/// exact: equal dims give themselves; a static 1 gives the other dim; a
/// static size other than 1 wins over any non-static dim (the other must
/// be 1 or equal to it); two different symbols, or a symbol and an unknown
/// dim, give unknown (either could be 1). False if both are static,
/// different and neither is 1.
bool broadcastDim(const Dim &A, const Dim &B, Dim &Result);

/// Multidirectional broadcast of two shapes, right-aligned. The error names
/// the op and the result dim: `operands of Add are not broadcastable: 3 vs
/// 4 at dim 1`.
llvm::Error broadcastShapes(const Node &N, llvm::ArrayRef<Dim> A,
                            llvm::ArrayRef<Dim> B, DimList &Result);

/// Unidirectional broadcast of \p From (e.g. PRelu's slope, Gemm's C) to
/// \p To: returns \p To refined by the static dims of \p From that must
/// equal it. Error `input '<Name>' is not broadcastable to ...` otherwise.
llvm::Error broadcastTo(const Node &N, llvm::ArrayRef<Dim> From,
                        llvm::StringRef Name, DimList &To);

/// Product of dims: static when all are static (error past MaxDimSize),
/// static 0 when any is 0, the only non-static dim when the static ones
/// multiply to 1, unknown otherwise.
llvm::Expected<Dim> multiplyDims(const Node &N, llvm::ArrayRef<Dim> Dims);

/// A static dim of size \p Size, or an error `<What> is negative` /
/// `<What> exceeds 2^62` when it is out of range.
llvm::Expected<Dim> makeStaticDim(const Node &N, int64_t Size,
                                  const llvm::Twine &What);

/// Normalize \p Axis (negative counts from the end) into [0, Rank); error
/// `<What> A is out of range for rank R` otherwise.
llvm::Expected<unsigned> normalizeAxis(const Node &N, int64_t Axis,
                                       unsigned Rank,
                                       llvm::StringRef What = "axis");

/// Normalize a list of axes; duplicates are an error unless
/// \p AllowDuplicates (then they are dropped).
llvm::Error normalizeAxes(const Node &N, llvm::ArrayRef<int64_t> Axes,
                          unsigned Rank, bool AllowDuplicates,
                          llvm::SmallVectorImpl<unsigned> &Result,
                          llvm::StringRef What = "axis");

/// A 1-D operand holding integers (shape, axes, pads, starts, sizes, ...)
/// or floats (scales): whether it is present, its length when static and
/// its values when it is a constant.
struct ListOperand {
  bool Present = false;
  llvm::Optional<int64_t> Length;
  llvm::Optional<llvm::SmallVector<int64_t, 8>> Ints;
  llvm::Optional<llvm::SmallVector<double, 8>> Floats;

  bool isConstant() const { return Ints || Floats; }
};

/// Read optional operand \p I as a 1-D list of integers whose element type
/// is in \p Class (I64 or Index). Errors on a wrong rank or element type,
/// or more than MaxListLength entries.
llvm::Error readIntList(const Node &N, unsigned I, llvm::StringRef Name,
                        EltClass Class, ListOperand &Out);

/// Read optional operand \p I as a 1-D list of floating-point values.
llvm::Error readFloatList(const Node &N, unsigned I, llvm::StringRef Name,
                          ListOperand &Out);

/// Error unless optional operand \p I is absent or a scalar (rank 0, or a
/// single-element tensor when \p AllowSingleElement) of element class
/// \p Class.
llvm::Error checkScalarOperand(const Node &N, unsigned I, llvm::StringRef Name,
                               EltClass Class, bool AllowSingleElement);

/// Read an ints attribute that must have \p Count entries (or be absent:
/// then \p Default is used for every entry). \p MinValue bounds every entry
/// from below (error `<Name> must be positive` / `non-negative`).
llvm::Error readIntsAttr(const Node &N, llvm::StringRef Name, unsigned Count,
                         int64_t Default, int64_t MinValue,
                         llvm::SmallVectorImpl<int64_t> &Result);

//===----------------------------------------------------------------------===//
// Sliding windows (convolution and pooling; WindowGeometry.cpp)
//===----------------------------------------------------------------------===//

// The window attributes and their static resolution are public
// (strider/IR/WindowGeometry.h); these add symbolic dims.

/// Output size of spatial dim \p I of a convolution or pooling window over
/// an input dim \p In: resolveWindowAxis's when both are known, ceil(In /
/// stride) under SAME_* whatever the kernel; a non-static input gives
/// itself when the op preserves sizes (stride 1 and "same" padding),
/// unknown otherwise.
llvm::Expected<Dim> computeWindowOutputDim(const Node &N, const Dim &In,
                                           unsigned I, const WindowAttrs &W);

/// Output size of spatial dim \p I of a transposed convolution without
/// output_shape, as computeWindowOutputDim for
/// resolveTransposedWindowAxis.
llvm::Expected<Dim> computeTransposedOutputDim(const Node &N, const Dim &In,
                                               unsigned I,
                                               const WindowAttrs &W);

/// Shared body of the unary elementwise ops: the result has the operand's
/// logical type; its element type must be in \p Class.
llvm::Error inferUnaryElementwise(const Node &N, ResultTypes &Results,
                                  EltClass Class);

} // namespace detail
} // namespace strider

#endif // STRIDER_LIB_IR_INFERFUNCTIONS_H
