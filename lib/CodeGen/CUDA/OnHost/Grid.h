//===- Grid.h - CUDA device code compiled for the host ----------*- C++ -*-===//
//
// Private to lib/CodeGen/CUDA/OnHost. Included first by the wrappers that
// compile the backend's .cu files as plain C++ (STRIDER_KERNELS_ON_HOST):
// it gives the device code what it uses of CUDA (thread and block
// indices, __syncthreads, warp shuffles, __shared__ memory, the storage
// qualifiers), and runGrid runs a launch's blocks one after another, the
// threads of a block as cooperative fibers that switch at barriers. So
// the kernels' own indexing, tiling, vectorized accesses and
// synchronization run, and are tested, on a machine without a GPU.
//
// Semantics kept from the device: a barrier releases when every thread
// of the block that has not returned reaches it; a warp shuffle exchanges
// values among the warp's 32 consecutive threads (linear thread index
// x + y * blockDim.x + z * blockDim.x * blockDim.y); __shared__ variables
// are one per block (blocks run one at a time); launch configurations the
// device refuses (a block of more than 1024 threads, a grid's y or z past
// 65535) are refused. What is not kept: concurrency between threads
// (threads run in index order or last first, OnHost.h's
// setReversedOrder: a race shows where the two orders differ), atomics'
// contention, and memory spaces (every pointer is host memory).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_ONHOST_GRID_H
#define STRIDER_LIB_CODEGEN_CUDA_ONHOST_GRID_H

#ifndef STRIDER_KERNELS_ON_HOST
#error "Grid.h is for the device code compiled for the host"
#endif

#include "OnHost.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace strider {
namespace cuda {
namespace onhost {

/// The running thread's indices and the launch's dimensions.
const uint3 &getThreadIdx();
const uint3 &getBlockIdx();
const dim3 &getBlockDim();
const dim3 &getGridDim();

/// __syncthreads: suspends the thread until the block's other live threads
/// reach a barrier too.
void syncThreads();
/// A warp exchange: publishes \p Bits, waits for the warp's other live
/// threads, and returns what lane \p SrcLane published (its own \p Bits
/// when that lane has returned or does not exist).
uint64_t exchangeInWarp(uint64_t Bits, unsigned SrcLane);
/// The lane of the running thread in its warp.
unsigned getLane();

/// Runs \p Thread for every thread of every block of a Grid x Block
/// launch. Errors as the device gives them (cudaErrorInvalidConfiguration),
/// or cudaErrorLaunchFailure where the device code misuses a barrier (a
/// barrier the block's threads cannot all reach); getLaunchError
/// (OnHost.h) says what happened.
cudaError_t runGrid(dim3 Grid, dim3 Block, size_t SharedBytes,
                    llvm::function_ref<void()> Thread);

} // namespace onhost
} // namespace cuda
} // namespace strider

// The storage and function qualifiers: plain C++. A __shared__ variable
// is static (one per block, as blocks run one at a time) and thread_local
// (two host threads may run launches at once).
#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __launch_bounds__
#undef __shared__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static thread_local

#define threadIdx (::strider::cuda::onhost::getThreadIdx())
#define blockIdx (::strider::cuda::onhost::getBlockIdx())
#define blockDim (::strider::cuda::onhost::getBlockDim())
#define gridDim (::strider::cuda::onhost::getGridDim())

inline void __syncthreads() { ::strider::cuda::onhost::syncThreads(); }

template <typename T>
T __shfl_xor_sync(unsigned /*Mask*/, T Value, int LaneMask) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "a shuffle moves 8 bytes");
  uint64_t Bits = 0;
  std::memcpy(&Bits, &Value, sizeof(T));
  const unsigned Src = ::strider::cuda::onhost::getLane() ^ unsigned(LaneMask);
  Bits = ::strider::cuda::onhost::exchangeInWarp(Bits, Src);
  std::memcpy(&Value, &Bits, sizeof(T));
  return Value;
}

/// A store that bypasses no cache here.
template <typename T> void __stwb(T *P, T Value) { *P = Value; }

#endif // STRIDER_LIB_CODEGEN_CUDA_ONHOST_GRID_H
