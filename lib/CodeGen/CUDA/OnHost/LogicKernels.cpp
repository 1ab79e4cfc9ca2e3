//===- LogicKernels.cpp - ../LogicKernels.cu for the host -----------------===//
//
// The device code and launchers of ../LogicKernels.cu as plain C++ in
// namespace cuda::onhost (Grid.h gives them CUDA's built-ins).
//
//===----------------------------------------------------------------------===//

#include "Grid.h"

#include "../LogicKernels.cu"

void strider::cuda::onhost::addLogicLaunchers(KernelLaunchers &L) {
  L.Typed = &onhost::launchTyped;
}
