//===- ConstantTensor.h - Constant data for folding passes ------*- C++ -*-===//
//
// Private to lib/Transforms. Helpers for the passes that compute new
// constants (constant-fold, fold-batchnorm): finding the data of a Constant
// node, moving data between its physical order (the layout of its
// TensorData type) and logical order, and encoding single elements.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_TRANSFORMS_CONSTANTTENSOR_H
#define STRIDER_LIB_TRANSFORMS_CONSTANTTENSOR_H

#include "strider/IR/TensorData.h"

#include "llvm/ADT/Optional.h"

#include <cstdint>
#include <vector>

namespace strider {

class Value;

namespace folding {

/// The data of \p V if it is the result of a Constant node; null otherwise
/// (graph inputs with default data are not constants: callers may override
/// them).
TensorDataRef getConstantDataRef(const Value *V);

/// \p D in logical order: the same elements under the identity layout.
/// Returns \p D itself when its layout already is the identity.
TensorDataRef toLogicalOrder(const TensorDataRef &D);

/// Logical-order data \p D (identity layout) stored in layout \p L.
/// Returns \p D itself when \p L is the identity.
TensorDataRef toPhysicalOrder(const TensorDataRef &D, const Layout &L);

/// Write \p V as one element of floating-point type \p Elt (f32, f64, f16,
/// bf16; rounded to nearest even) at \p Out.
void storeFloat(ElementType Elt, double V, uint8_t *Out);

/// The values of a floating-point constant \p V that broadcasts over a
/// rank-\p Rank tensor of \p Size channels (dim 1) without growing it: one
/// value, or one per channel with every other dim 1 (`[C, 1, 1]`, `[1, C,
/// 1, 1]`). Per channel, in order; None for anything else.
llvm::Optional<std::vector<double>>
readBroadcastPerChannel(const Value *V, unsigned Rank, int64_t Size);

/// Write \p V as one element of integer or bool type \p Elt at \p Out:
/// integers wrap modulo 2^bits, bool is `V != 0`.
void storeInt(ElementType Elt, int64_t V, uint8_t *Out);

} // namespace folding
} // namespace strider

#endif // STRIDER_LIB_TRANSFORMS_CONSTANTTENSOR_H
