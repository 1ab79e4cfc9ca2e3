//===- DeviceTypes.cuh - Loads and stores of device storage types -*- CUDA
//-*-===//
//
// Private to lib/CodeGen/CUDA, device code only. Kernels compute in f32
// and read and write f32, f16 or bf16 storage through these, chosen by a
// template parameter (one instantiation per DType combination).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_DEVICETYPES_CUH
#define STRIDER_LIB_CODEGEN_CUDA_DEVICETYPES_CUH

#include "Kernels.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>

// The .cu files are compiled twice: by nvcc for the device, and in
// OnHost/ as plain C++ for the host emulation's device-code mode
// (STRIDER_KERNELS_ON_HOST), where their launchers and kernels live in
// namespace cuda::onhost so that both builds link into one program.
#ifdef STRIDER_KERNELS_ON_HOST
#define STRIDER_KERNELS_NAMESPACE_BEGIN namespace onhost {
#define STRIDER_KERNELS_NAMESPACE_END } // namespace onhost
#else
#define STRIDER_KERNELS_NAMESPACE_BEGIN
#define STRIDER_KERNELS_NAMESPACE_END
#endif

namespace strider {
namespace cuda {

template <DType T> struct Storage;
template <> struct Storage<DType::F32> {
  using Type = float;
  static __device__ __forceinline__ float load(const float *P) { return *P; }
  static __device__ __forceinline__ void store(float *P, float V) { *P = V; }
};
template <> struct Storage<DType::F16> {
  using Type = __half;
  static __device__ __forceinline__ float load(const __half *P) {
    return __half2float(*P);
  }
  static __device__ __forceinline__ void store(__half *P, float V) {
    *P = __float2half_rn(V);
  }
};
template <> struct Storage<DType::BF16> {
  using Type = __nv_bfloat16;
  static __device__ __forceinline__ float load(const __nv_bfloat16 *P) {
    return __bfloat162float(*P);
  }
  static __device__ __forceinline__ void store(__nv_bfloat16 *P, float V) {
    *P = __float2bfloat16_rn(V);
  }
};

/// Element \p I of \p Base (storage type \p T) as f32.
template <DType T>
__device__ __forceinline__ float loadAs(const void *Base, int64_t I) {
  return Storage<T>::load(static_cast<const typename Storage<T>::Type *>(Base) +
                          I);
}
template <DType T>
__device__ __forceinline__ void storeAs(void *Base, int64_t I, float V) {
  Storage<T>::store(static_cast<typename Storage<T>::Type *>(Base) + I, V);
}

/// Calls \p F with the DType \p T as a template argument:
/// dispatchType(T, [&](auto Tag) { launch<decltype(Tag)::value>(...); }).
template <DType T> struct DTypeTag { static constexpr DType value = T; };
template <typename Fn> cudaError_t dispatchType(DType T, Fn &&F) {
  switch (T) {
  case DType::F32:
    return F(DTypeTag<DType::F32>());
  case DType::F16:
    return F(DTypeTag<DType::F16>());
  case DType::BF16:
    return F(DTypeTag<DType::BF16>());
  }
  return cudaErrorInvalidValue;
}

STRIDER_KERNELS_NAMESPACE_BEGIN
/// Launches \p Kernel on \p Grid x \p Block threads and returns the
/// launch's status: `Kernel<<<Grid, Block, Shared, S>>>(Args...)` on the
/// device; in the host build, the grid run by OnHost/Grid.cpp (\p S is
/// ignored: host launches complete in order). In namespace onhost there:
/// the two builds' instantiations have different bodies, so they must not
/// share a name (the linker would keep one of them).
template <typename... Params, typename... Args>
cudaError_t launchKernel(void (*Kernel)(Params...), dim3 Grid, dim3 Block,
                         size_t Shared, cudaStream_t S, const Args &...A) {
#ifdef STRIDER_KERNELS_ON_HOST
  (void)S;
  return onhost::runGrid(Grid, Block, Shared, [&] { Kernel(A...); });
#else
  Kernel<<<Grid, Block, Shared, S>>>(A...);
  return cudaGetLastError();
#endif
}
STRIDER_KERNELS_NAMESPACE_END

/// Blocks of \p Threads threads covering \p Count items, capped for
/// grid-stride loops.
inline unsigned getBlocks(int64_t Count, int Threads) {
  int64_t B = (Count + Threads - 1) / Threads;
  if (B < 1)
    B = 1;
  return unsigned(B > (1 << 20) ? (1 << 20) : B);
}

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_DEVICETYPES_CUH
