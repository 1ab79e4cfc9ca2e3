//===- InferFunctions.h - Per-op shape functions (internal) -----*- C++ -*-===//
//
// Declarations of the `infer<Id>` shape function of every op in Ops.def and
// the helpers they share. Private to lib/IR.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_IR_INFERFUNCTIONS_H
#define STRIDER_LIB_IR_INFERFUNCTIONS_H

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"

namespace strider {
namespace detail {

using ResultTypes = llvm::SmallVectorImpl<TensorType>;

#define STRIDER_OP(Id, Name, MinIn, MaxIn, MinOut, MaxOut, Layout, Attrs)      \
  llvm::Error infer##Id(const Node &N, ResultTypes &Results);
#include "strider/IR/Ops.def"

} // namespace detail
} // namespace strider

#endif // STRIDER_LIB_IR_INFERFUNCTIONS_H
