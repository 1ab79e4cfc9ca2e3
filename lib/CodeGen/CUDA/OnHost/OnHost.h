//===- OnHost.h - The backend's device code, run on the host ----*- C++ -*-===//
//
// Private to lib/CodeGen/CUDA. The launchers of the backend's own kernels
// (the .cu files), compiled as plain C++ and run on the host by Grid.cpp:
// the host emulation's device-code mode (cuda::EmulationMode::DeviceCode)
// launches kernel steps through these.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_ONHOST_ONHOST_H
#define STRIDER_LIB_CODEGEN_CUDA_ONHOST_ONHOST_H

#include "../Kernels.h"

#include <string>

namespace strider {
namespace cuda {
namespace onhost {

/// Every launcher, compiled for the host.
const KernelLaunchers &getLaunchers();
/// Why the last launch on this thread failed ("" if it did not): a
/// configuration the device refuses, a barrier some thread cannot reach.
const std::string &getLaunchError();

/// Whether launches run their blocks and threads last first instead of in
/// index order (default: STRIDER_ONHOST_ORDER=reversed in the
/// environment). A kernel whose results differ between the two orders
/// has threads or blocks racing; the device runs them in any order.
void setReversedOrder(bool Reversed);
bool getReversedOrder();

/// Each .cu file's launchers (one wrapper per file fills its share).
void addDataMovementLaunchers(KernelLaunchers &L);
void addElementwiseLaunchers(KernelLaunchers &L);
void addLogicLaunchers(KernelLaunchers &L);
void addPoolingLaunchers(KernelLaunchers &L);
void addRecurrentLaunchers(KernelLaunchers &L);
void addReductionLaunchers(KernelLaunchers &L);

} // namespace onhost
} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_ONHOST_ONHOST_H
