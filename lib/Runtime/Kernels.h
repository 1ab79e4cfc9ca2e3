//===- Kernels.h - Reference kernel groups (internal) -----------*- C++ -*-===//
//
// Private to lib/Runtime. Each kernel file registers its ops' kernels in
// the table through one function; KernelTable.cpp calls them all once.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_RUNTIME_KERNELS_H
#define STRIDER_LIB_RUNTIME_KERNELS_H

#include "strider/Runtime/Reference.h"

#include <array>

namespace strider {
namespace runtime {

/// One kernel slot per op of Ops.def (null: no kernel).
using KernelTable =
    std::array<ReferenceKernel, static_cast<size_t>(OpId::Opaque)>;

/// ElementwiseKernels.cpp: unary and broadcasting binary/variadic ops,
/// Clip, Cast, PRelu, Identity, Dropout (inference), QuantizeLinear,
/// DequantizeLinear, relayout.
void addElementwiseKernels(KernelTable &T);
/// DataMovementKernels.cpp: Concat, Split, Slice, Pad, Transpose, Reshape,
/// Flatten, Squeeze, Unsqueeze, Expand, Gather, GatherElements,
/// ScatterElements, GatherND, ScatterND, Shape, Constant, ConstantOfShape,
/// DepthToSpace, SpaceToDepth.
void addDataMovementKernels(KernelTable &T);
/// Normalizes axis \p Axis of a rank-\p Rank tensor into [0, Rank); an
/// error naming \p N when it is out of range.
llvm::Error normalizeAxis(const Node &N, int64_t &Axis, int64_t Rank);
/// ConvolutionKernels.cpp: Conv, ConvTranspose, QLinearConv, ConvInteger.
void addConvolutionKernels(KernelTable &T);
/// PoolingKernels.cpp: MaxPool, AveragePool, GlobalAveragePool,
/// GlobalMaxPool.
void addPoolingKernels(KernelTable &T);
/// NormalizationKernels.cpp: BatchNormalization, InstanceNormalization,
/// LayerNormalization, LRN, Softmax, LogSoftmax, ReduceMean, ReduceMax,
/// ReduceSum, ReduceMin, ReduceProd, ReduceL2, ReduceSumSquare, ArgMax,
/// ArgMin, TopK, CumSum.
void addNormalizationKernels(KernelTable &T);
/// MatrixKernels.cpp: Gemm, MatMul, Einsum.
void addMatrixKernels(KernelTable &T);
/// ResizeKernels.cpp: Resize.
void addResizeKernels(KernelTable &T);
/// RecurrentKernels.cpp: LSTM, GRU.
void addRecurrentKernels(KernelTable &T);
/// SignalKernels.cpp: STFT.
void addSignalKernels(KernelTable &T);

} // namespace runtime
} // namespace strider

#endif // STRIDER_LIB_RUNTIME_KERNELS_H
