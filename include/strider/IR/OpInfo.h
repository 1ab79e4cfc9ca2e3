//===- OpInfo.h - Op identifiers and the op table ---------------*- C++ -*-===//
//
// The static description of every op, generated from Ops.def: name, arity,
// layout class and attribute schema. Shape functions live in
// ShapeInference.h.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_OPINFO_H
#define STRIDER_IR_OPINFO_H

#include "strider/IR/Attribute.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace strider {

enum class OpId : uint16_t {
#define STRIDER_OP(Id, Name, MinIn, MaxIn, MinOut, MaxOut, Layout, Attrs) Id,
#include "strider/IR/Ops.def"
  /// An op outside the table, kept as is and treated as layout-fixed.
  Opaque,
};

/// How an op relates to physical layouts (refined by layout assignment).
enum class LayoutClass : uint8_t {
  /// Must see its operands in the canonical (identity) layout.
  Fixed,
  /// Pointwise (with broadcasting): runs in any layout.
  Elementwise,
  /// Spatial ops with an N, C, spatial... logical shape (conv, pooling,
  /// normalization, resize): channels-first or channels-last kernels.
  Spatial,
  /// Ops with logical axis attributes (concat, slice, softmax, reduce):
  /// any layout, the attributes keep their logical meaning.
  AxisAware,
  /// Reshape-like: a view when it is a bitcast of the physical order.
  View,
  /// Reads only the logical shape of its operand.
  ShapeOnly,
  /// The internal relayout op.
  Relayout,
};

struct AttrSpec {
  llvm::StringRef Name;
  AttrKind Kind;
  bool Required;
};

struct OpInfo {
  OpId Id;
  llvm::StringRef Name;
  int MinOperands, MaxOperands; ///< MaxOperands == -1: variadic.
  int MinResults, MaxResults;   ///< MaxResults == -1: variadic.
  LayoutClass Layout;
  llvm::ArrayRef<AttrSpec> Attrs; ///< Sorted by name.

  /// Schema entry for attribute \p Name, or null if the op has none.
  const AttrSpec *findAttr(llvm::StringRef Name) const;
};

/// Table entry of a known op; asserts Id != Opaque.
const OpInfo &getOpInfo(OpId Id);
/// Look up an op by its name in the default domain; null if not in the table.
const OpInfo *lookupOp(llvm::StringRef Name);
/// All table entries in Ops.def order.
llvm::ArrayRef<OpInfo> getAllOps();

} // namespace strider

#endif // STRIDER_IR_OPINFO_H
