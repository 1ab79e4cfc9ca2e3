//===- Device.h - CUDA device discovery and smoke test ----------*- C++ -*-===//
//
// The entry point of the optional CUDA backend (built when nvcc is found and
// STRIDER_ENABLE_CUDA is on). Machines without a GPU or driver report that
// as an error value, never as a crash.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CUDA_DEVICE_H
#define STRIDER_CUDA_DEVICE_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace strider {
namespace cuda {

struct DeviceInfo {
  int Ordinal;
  std::string Name;
  int ComputeMajor, ComputeMinor;
  size_t GlobalMemoryBytes;
  int MultiProcessors;
};

/// All visible devices; empty when the machine has no driver or no GPU.
llvm::Expected<std::vector<DeviceInfo>> listDevices();

/// Launch a small kernel on device \p Ordinal that writes a known pattern
/// and check the result on the host: proves that the toolchain's device
/// code runs on this GPU.
llvm::Error runSmokeTest(int Ordinal);

} // namespace cuda
} // namespace strider

#endif // STRIDER_CUDA_DEVICE_H
