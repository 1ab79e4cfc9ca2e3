//===- BinaryOp.h - The backends' binary elementwise ops -------*- C++ -*-===//
//
// The binary ops the CPU and CUDA elementwise kernels compute, and their
// scalar definition, which both backends' kernels (and the CUDA backend's
// device code) use: one definition of what Max of a NaN or PRelu is.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_BINARYOP_H
#define STRIDER_CODEGEN_BINARYOP_H

#include <math.h>

#include <cstdint>

#ifdef __CUDACC__
#define STRIDER_BINARY_OP_FN __host__ __device__ __forceinline__
#else
#define STRIDER_BINARY_OP_FN inline
#endif

namespace strider {
namespace codegen {

enum class BinaryOp : uint8_t {
  None,  ///< A (no second operand)
  Add,   ///< A + B
  Sub,   ///< A - B
  Mul,   ///< A * B
  Div,   ///< A / B
  Pow,   ///< C's powf(A, B)
  Max,   ///< NaN in either operand gives NaN (numpy.maximum)
  Min,   ///< NaN in either operand gives NaN (numpy.minimum)
  PRelu, ///< A < 0 ? A * B : A
};

/// A op B in f32.
STRIDER_BINARY_OP_FN float applyBinary(BinaryOp Op, float A, float B) {
  switch (Op) {
  case BinaryOp::None:
    return A;
  case BinaryOp::Add:
    return A + B;
  case BinaryOp::Sub:
    return A - B;
  case BinaryOp::Mul:
    return A * B;
  case BinaryOp::Div:
    return A / B;
  case BinaryOp::Pow:
    return powf(A, B);
  case BinaryOp::Max:
    return B != B || B > A ? B : A;
  case BinaryOp::Min:
    return B != B || B < A ? B : A;
  case BinaryOp::PRelu:
    return A < 0.0f ? A * B : A;
  }
  return A;
}

} // namespace codegen
} // namespace strider

#undef STRIDER_BINARY_OP_FN

#endif // STRIDER_CODEGEN_BINARYOP_H
