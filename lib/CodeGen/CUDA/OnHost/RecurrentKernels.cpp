//===- RecurrentKernels.cpp - ../RecurrentKernels.cu for the host ---------===//
//
// The device code and launchers of ../RecurrentKernels.cu as plain C++ in
// namespace cuda::onhost (Grid.h gives them CUDA's built-ins).
//
//===----------------------------------------------------------------------===//

#include "Grid.h"

#include "../RecurrentKernels.cu"

void strider::cuda::onhost::addRecurrentLaunchers(KernelLaunchers &L) {
  L.LstmCell = &onhost::launchLstmCell;
  L.GruCell = &onhost::launchGruCell;
  L.RecurrenceLoop = &onhost::launchRecurrenceLoop;
}
