//===- DataMovementKernels.cpp - ../DataMovementKernels.cu for the host ---===//
//
// The device code and launchers of ../DataMovementKernels.cu as plain C++ in
// namespace cuda::onhost (Grid.h gives them CUDA's built-ins).
//
//===----------------------------------------------------------------------===//

#include "Grid.h"

#include "../DataMovementKernels.cu"

void strider::cuda::onhost::addDataMovementLaunchers(KernelLaunchers &L) {
  L.Copy = &onhost::launchCopy;
  L.Pad = &onhost::launchPad;
  L.Resize = &onhost::launchResize;
}
