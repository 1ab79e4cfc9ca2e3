//===- DeviceTest.cpp - CUDA device discovery and smoke kernel ------------===//
//
// Skips itself on machines without a GPU; runs the smoke kernel on every
// device otherwise.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/CUDA/Device.h"

#include "gtest/gtest.h"

using namespace strider;

TEST(CudaDeviceTest, SmokeKernelOnEveryDevice) {
  auto Devices = cuda::listDevices();
  ASSERT_TRUE(bool(Devices)) << llvm::toString(Devices.takeError());
  if (Devices->empty())
    GTEST_SKIP() << "no CUDA device on this machine";
  for (const cuda::DeviceInfo &D : *Devices) {
    EXPECT_GE(D.ComputeMajor, 5) << D.Name;
    llvm::Error E = cuda::runSmokeTest(D.Ordinal);
    EXPECT_FALSE(bool(E)) << D.Name << ": " << llvm::toString(std::move(E));
  }
}
