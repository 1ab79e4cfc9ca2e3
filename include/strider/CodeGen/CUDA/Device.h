//===- Device.h - CUDA device discovery and smoke test ----------*- C++ -*-===//
//
// The CUDA backend's queries of the machine's GPUs (built when nvcc is
// found and STRIDER_ENABLE_CUDA is on). Machines without a GPU or driver
// report that as an error value, never as a crash.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_CUDA_DEVICE_H
#define STRIDER_CODEGEN_CUDA_DEVICE_H

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

/// Whether device \p Ordinal can run programs: an error saying why not
/// ("no CUDA device on this machine", "device 3 does not exist (2
/// devices)") otherwise.
llvm::Error checkDevice(int Ordinal);
/// "NVIDIA H100 80GB HBM3 (sm_90)" for device \p Ordinal; checkDevice's
/// errors.
llvm::Expected<std::string> getDeviceName(int Ordinal);
/// The layout-assignment target of device \p Ordinal's architecture:
/// cuda-sm90 from sm_90 on, cuda-sm80 below; checkDevice's errors.
llvm::Expected<std::string> getDeviceTarget(int Ordinal);

} // namespace cuda
} // namespace strider

#endif // STRIDER_CODEGEN_CUDA_DEVICE_H
