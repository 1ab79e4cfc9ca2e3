//===- LookupKernels.cpp - 256-entry table lookups of bytes ---------------===//
//
// The lookup op over a flat buffer: y[i] = table[x[i] ^ flip]. On AVX-512
// with VBMI (Highway's AVX3_DL target) the table is four 64-byte vectors
// and each 64 bytes of x two vpermi2b (the low 7 bits of an index select
// one of 128 bytes) blended by the index's top bit; elsewhere one byte at
// a time (AVX2 has no byte permute across 32 bytes: 16 pshufb and blends
// per vector, no faster than the loads of the plain loop).
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "LookupKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"
#include "Parallel.h"

#include "hwy/highway.h"

#include <algorithm>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {

void LookupRowImpl(const uint8_t *Table, const uint8_t *X, uint8_t Flip,
                   uint8_t *Y, int64_t N) {
  int64_t I = 0;
#if HWY_TARGET == HWY_AVX3_DL
  const __m512i T0 = _mm512_loadu_si512(Table),
                T1 = _mm512_loadu_si512(Table + 64);
  const __m512i T2 = _mm512_loadu_si512(Table + 128),
                T3 = _mm512_loadu_si512(Table + 192);
  const __m512i F = _mm512_set1_epi8(char(Flip));
  auto Step = [&](__m512i Idx) {
    Idx = _mm512_xor_si512(Idx, F);
    const __m512i Lo = _mm512_permutex2var_epi8(T0, Idx, T1);
    const __m512i Hi = _mm512_permutex2var_epi8(T2, Idx, T3);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(Idx), Lo, Hi);
  };
  for (; I + 64 <= N; I += 64)
    _mm512_storeu_si512(Y + I, Step(_mm512_loadu_si512(X + I)));
  if (I < N) {
    const __mmask64 M = (~__mmask64(0)) >> (64 - (N - I));
    _mm512_mask_storeu_epi8(Y + I, M, Step(_mm512_maskz_loadu_epi8(M, X + I)));
  }
  return;
#endif
  for (; I < N; ++I)
    Y[I] = Table[X[I] ^ Flip];
}

} // namespace HWY_NAMESPACE
} // namespace cpu
} // namespace strider
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strider {
namespace cpu {

HWY_EXPORT(LookupRowImpl);

void runLookup(const uint8_t *Table, const uint8_t *X, uint8_t Flip, uint8_t *Y,
               int64_t Count, int Threads) {
  const int64_t Piece = 65536;
  parallelFor((Count + Piece - 1) / Piece, Threads, [&](int64_t Item) {
    const int64_t Begin = Item * Piece;
    HWY_DYNAMIC_DISPATCH(LookupRowImpl)
    (Table, X + Begin, Flip, Y + Begin, std::min(Piece, Count - Begin));
  });
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
