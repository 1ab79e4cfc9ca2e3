//===- TransposeKernels.cpp - Cache-blocked SIMD float transposition ------===//
//
// D = S^T for float matrices with contiguous rows: the inner loop of every
// relayout between channels-first and channels-last. Blocks of 64 x 64
// keep both sides in L1; inside them, 8 x 8 tiles are transposed in
// registers on targets with 256-bit vectors, elements one by one elsewhere
// and at the edges.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "TransposeKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"

#include "hwy/highway.h"

#include <algorithm>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#undef STRIDER_HAVE_TILE8
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#define STRIDER_HAVE_TILE8 1
/// One 8 x 8 tile: D[j][i] = S[i][j]. Each 256-bit register is loaded
/// from two rows four apart (their 128-bit halves), so that one 4 x 4
/// transposition inside the 128-bit halves finishes the job: 16 shuffles
/// per tile.
HWY_INLINE void tile8(const float *HWY_RESTRICT S, int64_t SLd,
                      float *HWY_RESTRICT D, int64_t DLd) {
  const hn::FixedTag<float, 8> d;
  const hn::FixedTag<float, 4> d4;
  const hn::Repartition<double, decltype(d)> dd;
  using V = hn::Vec<decltype(d)>;
  auto Rows = [&](int Row, int Col) {
    return hn::Combine(d, hn::LoadU(d4, S + (Row + 4) * SLd + Col),
                       hn::LoadU(d4, S + Row * SLd + Col));
  };
  for (int Col = 0; Col < 8; Col += 4) {
    const V R0 = Rows(0, Col), R1 = Rows(1, Col), R2 = Rows(2, Col),
            R3 = Rows(3, Col);
    const auto T0 = hn::BitCast(dd, hn::InterleaveLower(d, R0, R1));
    const auto T1 = hn::BitCast(dd, hn::InterleaveUpper(d, R0, R1));
    const auto T2 = hn::BitCast(dd, hn::InterleaveLower(d, R2, R3));
    const auto T3 = hn::BitCast(dd, hn::InterleaveUpper(d, R2, R3));
    float *Out = D + Col * DLd;
    hn::StoreU(hn::BitCast(d, hn::InterleaveLower(dd, T0, T2)), d, Out);
    hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(dd, T0, T2)), d, Out + DLd);
    hn::StoreU(hn::BitCast(d, hn::InterleaveLower(dd, T1, T3)), d,
               Out + 2 * DLd);
    hn::StoreU(hn::BitCast(d, hn::InterleaveUpper(dd, T1, T3)), d,
               Out + 3 * DLd);
  }
}
#else
#define STRIDER_HAVE_TILE8 0
#endif

void TransposeImpl(const float *S, int64_t SLd, float *D, int64_t DLd,
                   int64_t Rows, int64_t Cols) {
  constexpr int64_t B = 64;
  for (int64_t I0 = 0; I0 < Rows; I0 += B)
    for (int64_t J0 = 0; J0 < Cols; J0 += B) {
      const int64_t I1 = std::min(Rows, I0 + B), J1 = std::min(Cols, J0 + B);
      int64_t IFull = I0, JFull = J0;
#if STRIDER_HAVE_TILE8
      IFull = I0 + (I1 - I0) / 8 * 8;
      JFull = J0 + (J1 - J0) / 8 * 8;
      for (int64_t I = I0; I < IFull; I += 8)
        for (int64_t J = J0; J < JFull; J += 8)
          tile8(S + I * SLd + J, SLd, D + J * DLd + I, DLd);
#endif
      // Edges (everything without 8 x 8 tiles).
      for (int64_t I = I0; I < I1; ++I)
        for (int64_t J = (I < IFull ? JFull : J0); J < J1; ++J)
          D[J * DLd + I] = S[I * SLd + J];
    }
}

} // namespace HWY_NAMESPACE
} // namespace cpu
} // namespace strider
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strider {
namespace cpu {

HWY_EXPORT(TransposeImpl);

void transposeFloats(const float *S, int64_t SLd, float *D, int64_t DLd,
                     int64_t Rows, int64_t Cols) {
  HWY_DYNAMIC_DISPATCH(TransposeImpl)(S, SLd, D, DLd, Rows, Cols);
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
