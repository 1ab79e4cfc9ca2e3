//===- GpuTestSupport.h - Shared pieces of the GPU tests --------*- C++ -*-===//
//
// Pieces the CUDA tests share: whether a device is there (each GPU test
// skips itself with one line when not), device storage bytes read back as
// floats (cuda::toStorage writes them), and dense strides of a physical
// order.
//
// The kernel tests (DataMovementGpuTest.cpp, ComputeGpuTest.cpp) run on
// one of two targets: the GPU (StriderCudaTests), or, compiled with
// STRIDER_KERNEL_TESTS_ON_HOST into StriderCudaHostTests, the kernels'
// device code compiled for the host (lib/CodeGen/CUDA/OnHost) on host
// memory, which runs everywhere. They reach the target only through
// launchers(), the target* memory functions and
// STRIDER_SKIP_WITHOUT_TARGET.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_TEST_UNITTESTS_CUDA_GPUTESTSUPPORT_H
#define STRIDER_TEST_UNITTESTS_CUDA_GPUTESTSUPPORT_H

#include "Kernels.h"
#ifdef STRIDER_KERNEL_TESTS_ON_HOST
#include "OnHost/OnHost.h"
#endif

#include "strider/CodeGen/CUDA/CUDABackend.h"
#include "strider/IR/TensorData.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace strider {
namespace cuda {
namespace gputest {

/// Whether CUDA device 0 can run programs here.
inline bool hasDevice() {
  llvm::Error E = checkDevice(0);
  if (!E)
    return true;
  llvm::consumeError(std::move(E));
  return false;
}

/// The kernel launchers of the target the tests run on.
inline const KernelLaunchers &launchers() {
#ifdef STRIDER_KERNEL_TESTS_ON_HOST
  return onhost::getLaunchers();
#else
  return getDeviceLaunchers();
#endif
}

/// The target's memory, and waiting for its launches: host memory
/// aligned as cudaMalloc aligns (256 bytes) for the device code run on the
/// host, whose launches have finished when they return; else the device's.
#ifdef STRIDER_KERNEL_TESTS_ON_HOST
inline cudaError_t targetMalloc(void **Ptr, size_t Bytes) {
  *Ptr = std::aligned_alloc(256, (Bytes + 255) / 256 * 256);
  return *Ptr ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline void targetFree(void *Ptr) { std::free(Ptr); }
inline cudaError_t targetUpload(void *Dst, const void *Src, size_t Bytes) {
  std::memcpy(Dst, Src, Bytes);
  return cudaSuccess;
}
inline cudaError_t targetDownload(void *Dst, const void *Src, size_t Bytes) {
  std::memcpy(Dst, Src, Bytes);
  return cudaSuccess;
}
inline cudaError_t targetMemset(void *Ptr, int Byte, size_t Bytes) {
  std::memset(Ptr, Byte, Bytes);
  return cudaSuccess;
}
inline cudaError_t targetSynchronize() { return cudaSuccess; }
#else
inline cudaError_t targetMalloc(void **Ptr, size_t Bytes) {
  return cudaMalloc(Ptr, Bytes);
}
inline void targetFree(void *Ptr) { (void)cudaFree(Ptr); }
inline cudaError_t targetUpload(void *Dst, const void *Src, size_t Bytes) {
  return cudaMemcpy(Dst, Src, Bytes, cudaMemcpyHostToDevice);
}
inline cudaError_t targetDownload(void *Dst, const void *Src, size_t Bytes) {
  return cudaMemcpy(Dst, Src, Bytes, cudaMemcpyDeviceToHost);
}
inline cudaError_t targetMemset(void *Ptr, int Byte, size_t Bytes) {
  return cudaMemset(Ptr, Byte, Bytes);
}
inline cudaError_t targetSynchronize() { return cudaDeviceSynchronize(); }
#endif
/// A launch status, with why the host's launch failed where it did.
inline std::string describeLaunch(cudaError_t E) {
  std::string S = cudaGetErrorName(E);
#ifdef STRIDER_KERNEL_TESTS_ON_HOST
  if (E != cudaSuccess && !onhost::getLaunchError().empty())
    S += ": " + onhost::getLaunchError();
#endif
  return S;
}

/// \p Bytes of storage type \p T as floats (the inverse of toStorage).
inline std::vector<float> fromStorage(const std::vector<uint8_t> &Bytes,
                                      DType T) {
  std::vector<float> V(Bytes.size() / getDTypeBytes(T));
  for (size_t I = 0; I < V.size(); ++I) {
    if (T == DType::F32) {
      std::memcpy(&V[I], Bytes.data() + 4 * I, 4);
      continue;
    }
    uint16_t H;
    std::memcpy(&H, Bytes.data() + 2 * I, 2);
    V[I] = T == DType::F16 ? halfToFloat(H) : bfloat16ToFloat(H);
  }
  return V;
}

/// Strides per logical dim of a dense tensor of logical shape \p Shape
/// stored in the physical order \p Order (logical dims, outermost first).
inline std::vector<int64_t> getDenseStrides(const std::vector<int64_t> &Shape,
                                            const std::vector<int64_t> &Order) {
  std::vector<int64_t> Strides(Shape.size(), 0);
  int64_t Stride = 1;
  for (size_t I = Order.size(); I-- > 0;) {
    Strides[size_t(Order[I])] = Stride;
    Stride *= Shape[size_t(Order[I])];
  }
  return Strides;
}

} // namespace gputest
} // namespace cuda
} // namespace strider

/// Skips the current test, with one line, on a machine without a GPU.
#define STRIDER_SKIP_WITHOUT_DEVICE()                                          \
  do {                                                                         \
    if (!::strider::cuda::gputest::hasDevice())                                \
      GTEST_SKIP() << "no CUDA device on this machine";                        \
  } while (false)

/// Skips the current kernel test, with one line, where its target is not
/// there: the GPU build on a machine without one (the host target is
/// always there).
#ifdef STRIDER_KERNEL_TESTS_ON_HOST
#define STRIDER_SKIP_WITHOUT_TARGET()                                          \
  do {                                                                         \
  } while (false)
#else
#define STRIDER_SKIP_WITHOUT_TARGET() STRIDER_SKIP_WITHOUT_DEVICE()
#endif

#endif // STRIDER_TEST_UNITTESTS_CUDA_GPUTESTSUPPORT_H
