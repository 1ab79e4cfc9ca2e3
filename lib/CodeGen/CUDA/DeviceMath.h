//===- DeviceMath.h - Scalar math of the compute kernels --------*- C++ -*-===//
//
// Private to lib/CodeGen/CUDA. What the elementwise, pooling and reduction
// kernels compute per element, as __host__ __device__ functions, and the
// host-side choices of how those kernels walk their data: one include for
// the kernels, their host models and the tests, over the headers that
// hold each part. Plain C++ outside nvcc, so host unit tests check it
// against the CPU backend's scalar definitions without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_DEVICEMATH_H
#define STRIDER_LIB_CODEGEN_CUDA_DEVICEMATH_H

#include "ElementMath.h"   // Fused activations, binary ops.
#include "TypedMath.h"     // The typed kernel's elements (evalTyped).
#include "TypedRowMath.h"  // Its row ops (scatters, ArgMax, TopK, ...).
#include "WindowMath.h"    // Pooling, batch statistics, reductions, LRN.
#include "RecurrentMath.h" // LSTM and GRU units, the recurrence loop.
#include "LaunchShapes.h"  // Host-side choices: dim merging, threads.

#endif // STRIDER_LIB_CODEGEN_CUDA_DEVICEMATH_H
