//===- GpuTestSupport.h - Shared pieces of the GPU tests --------*- C++ -*-===//
//
// What every test of StriderCudaTests needs: whether a device is there
// (each test skips itself with one line when not), and device storage
// bytes read back as floats (cuda::toStorage writes them).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_TEST_UNITTESTS_CUDA_GPUTESTSUPPORT_H
#define STRIDER_TEST_UNITTESTS_CUDA_GPUTESTSUPPORT_H

#include "Kernels.h"

#include "strider/CodeGen/CUDA/CUDABackend.h"
#include "strider/IR/TensorData.h"

#include <cstring>
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

} // namespace gputest
} // namespace cuda
} // namespace strider

/// Skips the current test, with one line, on a machine without a GPU.
#define STRIDER_SKIP_WITHOUT_DEVICE()                                          \
  do {                                                                         \
    if (!::strider::cuda::gputest::hasDevice())                                \
      GTEST_SKIP() << "no CUDA device on this machine";                        \
  } while (false)

#endif // STRIDER_TEST_UNITTESTS_CUDA_GPUTESTSUPPORT_H
