//===- ElementwiseKernels.cpp - ../ElementwiseKernels.cu for the host -----===//
//
// The device code and launchers of ../ElementwiseKernels.cu as plain C++ in
// namespace cuda::onhost (Grid.h gives them CUDA's built-ins).
//
//===----------------------------------------------------------------------===//

#include "Grid.h"

#include "../ElementwiseKernels.cu"

void strider::cuda::onhost::addElementwiseLaunchers(KernelLaunchers &L) {
  L.Elementwise = &onhost::launchElementwise;
  L.Epilogue = &onhost::launchEpilogue;
}
