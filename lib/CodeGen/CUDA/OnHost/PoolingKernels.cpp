//===- PoolingKernels.cpp - ../PoolingKernels.cu for the host -------------===//
//
// The device code and launchers of ../PoolingKernels.cu as plain C++ in
// namespace cuda::onhost (Grid.h gives them CUDA's built-ins).
//
//===----------------------------------------------------------------------===//

#include "Grid.h"

#include "../PoolingKernels.cu"

void strider::cuda::onhost::addPoolingLaunchers(KernelLaunchers &L) {
  L.Pool = &onhost::launchPool;
}
