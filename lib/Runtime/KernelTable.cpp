//===- KernelTable.cpp - The reference kernel table -----------------------===//
//
// Built once from the kernel groups; lookups index it by op.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

using namespace strider;
using namespace strider::runtime;

static const KernelTable &getKernelTable() {
  static const KernelTable Table = [] {
    KernelTable T{};
    addElementwiseKernels(T);
    addDataMovementKernels(T);
    addConvolutionKernels(T);
    addPoolingKernels(T);
    addNormalizationKernels(T);
    addMatrixKernels(T);
    addResizeKernels(T);
    addRecurrentKernels(T);
    addSignalKernels(T);
    return T;
  }();
  return Table;
}

ReferenceKernel runtime::lookupReferenceKernel(OpId Id) {
  if (Id == OpId::Opaque)
    return nullptr;
  return getKernelTable()[static_cast<size_t>(Id)];
}
