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

/// What passes and backends read of an op besides its schema (Ops.def's
/// STRIDER_OP_TRAITS entries): bits of OpInfo::Traits, named in their own
/// namespace (optrait::View, ...).
namespace optrait {
enum OpTrait : uint32_t {
  /// The result holds the operand's bytes when the layouts allow: the
  /// backends give it the operand's buffer (Reshape, Transpose, ...).
  View = 1u << 0,
  /// Its kernels take a fused activation epilogue (conv + relu, add +
  /// sigmoid).
  TakesActivation = 1u << 1,
  /// Its kernels take a fused residual add (conv + add).
  TakesResidual = 1u << 2,
  /// Runs faster in half precision (tensor cores): assign-precision puts
  /// it in f16/bf16.
  HalfCompute = 1u << 3,
  /// Runs in either precision at the cost of its memory traffic:
  /// assign-precision lets it follow its neighbours.
  HalfFollow = 1u << 4,
  /// With HalfCompute or HalfFollow: only operand 0 carries data of the
  /// node's type (the others keep theirs).
  HalfFirstOperand = 1u << 5,
  /// Computed before any backend sees it once shapes are static (Shape,
  /// Size, Range and ConstantOfShape fold into constants) or its condition
  /// folds (If is inlined): no backend lowers it.
  CompileTime = 1u << 6,
  /// Its integer result may be scaled back to float in its epilogue: a
  /// Cast to f32, a Mul by a scale, an Add of a constant, then the
  /// residual and activation of TakesResidual and TakesActivation
  /// (ConvInteger followed by what ONNX Runtime's dynamic quantizer
  /// writes after it).
  TakesRescale = 1u << 7,
};
} // namespace optrait
using optrait::OpTrait;

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
  uint32_t Traits = 0;            ///< OpTrait bits.

  bool hasTrait(OpTrait T) const { return (Traits & T) != 0; }

  /// Schema entry for attribute \p Name, or null if the op has none.
  const AttrSpec *findAttr(llvm::StringRef Name) const;
};

/// Table entry of a known op; asserts Id != Opaque.
const OpInfo &getOpInfo(OpId Id);
/// Whether op \p Id has trait \p T (never for OpId::Opaque).
bool hasOpTrait(OpId Id, OpTrait T);
/// Look up an op by its name in the default domain; null if not in the table.
const OpInfo *lookupOp(llvm::StringRef Name);
/// All table entries in Ops.def order.
llvm::ArrayRef<OpInfo> getAllOps();

} // namespace strider

#endif // STRIDER_IR_OPINFO_H
