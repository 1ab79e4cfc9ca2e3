//===- SimdTail-inl.h - Partial vectors at the end of a run -----*- C++ -*-===//
//
// Private to lib/CodeGen/CPU; per-target code (Highway), hence the toggling
// include guard. Loads and stores of the first N lanes that never touch
// memory past them: AVX2 and AVX-512 mask them in hardware, but Highway
// 1.0.3's MaskedLoad is an aligned full load on SSE4 (and its BlendedStore
// a full read-modify-write), so there the lanes go through an aligned
// stack buffer.
//
//===----------------------------------------------------------------------===//

#if defined(STRIDER_CPU_SIMD_TAIL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef STRIDER_CPU_SIMD_TAIL_INL_H_
#undef STRIDER_CPU_SIMD_TAIL_INL_H_
#else
#define STRIDER_CPU_SIMD_TAIL_INL_H_
#endif

#include "hwy/highway.h"

#include <cstring>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Lanes [0, N) from \p P, the others zero.
template <class D>
HWY_INLINE hn::Vec<D> loadTail(D d, const float *P, size_t N) {
  if (N == hn::Lanes(d))
    return hn::LoadU(d, P);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  return hn::MaskedLoad(hn::FirstN(d, N), d, P);
#endif
  HWY_ALIGN float Buf[HWY_MAX_BYTES / sizeof(float)] = {};
  std::memcpy(Buf, P, N * sizeof(float));
  return hn::Load(d, Buf);
}

/// Lanes [0, N) of \p V to \p P.
template <class D>
HWY_INLINE void storeTail(D d, hn::Vec<D> V, float *P, size_t N) {
  if (N == hn::Lanes(d)) {
    hn::StoreU(V, d, P);
    return;
  }
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  hn::BlendedStore(V, hn::FirstN(d, N), d, P);
  return;
#endif
  HWY_ALIGN float Buf[HWY_MAX_BYTES / sizeof(float)];
  hn::Store(V, d, Buf);
  std::memcpy(P, Buf, N * sizeof(float));
}

} // namespace HWY_NAMESPACE
} // namespace cpu
} // namespace strider
HWY_AFTER_NAMESPACE();

#endif // include guard
