//===- ReductionKernels.cpp - ../ReductionKernels.cu for the host ---------===//
//
// The device code and launchers of ../ReductionKernels.cu as plain C++ in
// namespace cuda::onhost (Grid.h gives them CUDA's built-ins).
//
//===----------------------------------------------------------------------===//

#include "Grid.h"

#include "../ReductionKernels.cu"

void strider::cuda::onhost::addReductionLaunchers(KernelLaunchers &L) {
  L.Reduce = &onhost::launchReduce;
  L.Softmax = &onhost::launchSoftmax;
  L.Norm = &onhost::launchNorm;
  L.BatchStats = &onhost::launchBatchStats;
  L.Lrn = &onhost::launchLrn;
}
