//===- GpuTestSupport.h - Shared pieces of the GPU tests --------*- C++ -*-===//
//
// Pieces the CUDA tests share: whether a device is there (each GPU test
// skips itself with one line when not), device storage bytes read back as
// floats (cuda::toStorage writes them), and dense strides of a physical
// order.
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

#endif // STRIDER_TEST_UNITTESTS_CUDA_GPUTESTSUPPORT_H
