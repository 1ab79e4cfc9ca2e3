//===- TransposeKernels.cpp - Cache-blocked SIMD float transposition ------===//
//
// D = S^T for float matrices with contiguous rows: the inner loop of every
// relayout between channels-first and channels-last. Square tiles as wide
// as a vector (16 x 16 on AVX-512, 8 x 8 on AVX2, 4 x 4 elsewhere) are
// transposed in registers, walked so that one side of the matrix streams:
// down strips of tile columns (D written row after row), or along strips
// of tile rows where S's rows are short. Edges take narrower strips, then
// tiles that overlap the last full one; matrices with two or three rows or
// columns are interleaved.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "TransposeKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The widest tile of this target: one vector per tile row. Non-x86 targets
// keep to 128-bit vectors (FixedTag wider than that is not portable).
#if HWY_TARGET == HWY_SCALAR
constexpr int64_t MaxTile = 1;
#elif HWY_ARCH_X86
constexpr int64_t MaxTile = HWY_MIN(16, HWY_MAX_BYTES / 4);
#else
constexpr int64_t MaxTile = 4;
#endif

#if HWY_TARGET != HWY_SCALAR
/// A vector of N floats whose 128-bit block L holds P[4 L Ld .. 4 L Ld + 3]:
/// four elements of each of the tile rows 0, 4, ..., N - 4.
template <int64_t N>
HWY_INLINE hn::Vec<hn::FixedTag<float, N>> loadBlocks(const float *P,
                                                      int64_t Ld) {
  const hn::FixedTag<float, 4> D4;
  if constexpr (N == 4) {
    return hn::LoadU(D4, P);
  } else if constexpr (N == 8) {
    const hn::FixedTag<float, N> D8;
    return hn::Combine(D8, hn::LoadU(D4, P + 4 * Ld), hn::LoadU(D4, P));
  } else {
    // Tags dependent on N: only targets with 512-bit vectors see them.
    const hn::FixedTag<float, N / 2> D8;
    const hn::FixedTag<float, N> D16;
    return hn::Combine(
        D16,
        hn::Combine(D8, hn::LoadU(D4, P + 12 * Ld), hn::LoadU(D4, P + 8 * Ld)),
        hn::Combine(D8, hn::LoadU(D4, P + 4 * Ld), hn::LoadU(D4, P)));
  }
}

#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
/// loadBlocks<16> spelled in intrinsics: GCC builds Highway's Combine of
/// Combines through 256-bit halves (two more shuffles per vector); here
/// each 128-bit piece is one insert from memory.
HWY_INLINE __m512 loadBlocks16(const float *P, int64_t Ld) {
  __m512 V = _mm512_castps128_ps512(_mm_loadu_ps(P));
  V = _mm512_insertf32x4(V, _mm_loadu_ps(P + 4 * Ld), 1);
  V = _mm512_insertf32x4(V, _mm_loadu_ps(P + 8 * Ld), 2);
  return _mm512_insertf32x4(V, _mm_loadu_ps(P + 12 * Ld), 3);
}

/// transposeTile<16> on AVX-512 (see there).
HWY_INLINE void transposeTile16(const float *HWY_RESTRICT S, int64_t SLd,
                                float *HWY_RESTRICT D, int64_t DLd,
                                int64_t FirstCol) {
  for (int64_t C = FirstCol / 4 * 4; C < 16; C += 4) {
    const __m512 R0 = loadBlocks16(S + C, SLd);
    const __m512 R1 = loadBlocks16(S + SLd + C, SLd);
    const __m512 R2 = loadBlocks16(S + 2 * SLd + C, SLd);
    const __m512 R3 = loadBlocks16(S + 3 * SLd + C, SLd);
    const __m512d T0 = _mm512_castps_pd(_mm512_unpacklo_ps(R0, R1));
    const __m512d T1 = _mm512_castps_pd(_mm512_unpackhi_ps(R0, R1));
    const __m512d T2 = _mm512_castps_pd(_mm512_unpacklo_ps(R2, R3));
    const __m512d T3 = _mm512_castps_pd(_mm512_unpackhi_ps(R2, R3));
    float *Out = D + C * DLd;
    if (C >= FirstCol)
      _mm512_storeu_ps(Out, _mm512_castpd_ps(_mm512_unpacklo_pd(T0, T2)));
    if (C + 1 >= FirstCol)
      _mm512_storeu_ps(Out + DLd, _mm512_castpd_ps(_mm512_unpackhi_pd(T0, T2)));
    if (C + 2 >= FirstCol)
      _mm512_storeu_ps(Out + 2 * DLd,
                       _mm512_castpd_ps(_mm512_unpacklo_pd(T1, T3)));
    _mm512_storeu_ps(Out + 3 * DLd,
                     _mm512_castpd_ps(_mm512_unpackhi_pd(T1, T3)));
  }
}
#define STRIDER_HAVE_TILE16_X86 1
#else
#define STRIDER_HAVE_TILE16_X86 0
#endif

/// One N x N tile: D[j][i] = S[i][j], for the columns j >= FirstCol only
/// (a tile that overlaps one already done). Registers are assembled from
/// 128-bit row pieces four rows apart, so that a 4 x 4 transposition
/// inside each 128-bit block (8 shuffles per 4 vectors) leaves whole
/// destination rows: 2 N shuffles per tile.
template <int64_t N>
HWY_INLINE void transposeTile(const float *HWY_RESTRICT S, int64_t SLd,
                              float *HWY_RESTRICT D, int64_t DLd,
                              int64_t FirstCol = 0) {
#if STRIDER_HAVE_TILE16_X86
  if constexpr (N == 16) {
    transposeTile16(S, SLd, D, DLd, FirstCol);
    return;
  }
#endif
  const hn::FixedTag<float, N> Df;
  const hn::Repartition<double, decltype(Df)> Dd;
  for (int64_t C = FirstCol / 4 * 4; C < N; C += 4) {
    const auto R0 = loadBlocks<N>(S + C, SLd);
    const auto R1 = loadBlocks<N>(S + SLd + C, SLd);
    const auto R2 = loadBlocks<N>(S + 2 * SLd + C, SLd);
    const auto R3 = loadBlocks<N>(S + 3 * SLd + C, SLd);
    // Per block: T0 = r0[0] r1[0] r0[1] r1[1], T1 = r0[2] r1[2] r0[3] r1[3].
    const auto T0 = hn::BitCast(Dd, hn::InterleaveLower(Df, R0, R1));
    const auto T1 = hn::BitCast(Dd, hn::InterleaveUpper(Df, R0, R1));
    const auto T2 = hn::BitCast(Dd, hn::InterleaveLower(Df, R2, R3));
    const auto T3 = hn::BitCast(Dd, hn::InterleaveUpper(Df, R2, R3));
    float *Out = D + C * DLd;
    if (C >= FirstCol)
      hn::StoreU(hn::BitCast(Df, hn::InterleaveLower(Dd, T0, T2)), Df, Out);
    if (C + 1 >= FirstCol)
      hn::StoreU(hn::BitCast(Df, hn::InterleaveUpper(Dd, T0, T2)), Df,
                 Out + DLd);
    if (C + 2 >= FirstCol)
      hn::StoreU(hn::BitCast(Df, hn::InterleaveLower(Dd, T1, T3)), Df,
                 Out + 2 * DLd);
    hn::StoreU(hn::BitCast(Df, hn::InterleaveUpper(Dd, T1, T3)), Df,
               Out + 3 * DLd);
  }
}

/// N rows of S, columns [J0, J1) (J1 - J0 a multiple of N, or J1 the last
/// column), as N x N tiles; a last partial tile overlaps the one before
/// it. Requires J1 >= N.
template <int64_t N>
HWY_INLINE void transposeStrip(const float *S, int64_t SLd, float *D,
                               int64_t DLd, int64_t J0, int64_t J1) {
  int64_t J = J0;
  for (; J + N <= J1; J += N)
    transposeTile<N>(S + J, SLd, D + J * DLd, DLd);
  if (J < J1)
    transposeTile<N>(S + (J1 - N), SLd, D + (J1 - N) * DLd, DLd, N - (J1 - J));
}

/// Rows x Cols (both >= N) as N x N tiles walked down each strip of N
/// columns of S (N rows of D) before the next, so that D's rows are
/// written front to back. Partial tiles at the bottom and right overlap
/// the ones before them.
template <int64_t N>
HWY_INLINE void transposeByColumnStrips(const float *S, int64_t SLd, float *D,
                                        int64_t DLd, int64_t Rows,
                                        int64_t Cols) {
  auto ColumnStrip = [&](int64_t J, int64_t FirstCol) {
    int64_t I = 0;
    for (; I + N <= Rows; I += N)
      transposeTile<N>(S + I * SLd + J, SLd, D + J * DLd + I, DLd, FirstCol);
    if (I < Rows)
      transposeTile<N>(S + (Rows - N) * SLd + J, SLd, D + J * DLd + (Rows - N),
                       DLd, FirstCol);
  };
  int64_t J = 0;
  for (; J + N <= Cols; J += N)
    ColumnStrip(J, 0);
  if (J < Cols)
    ColumnStrip(Cols - N, N - (Cols - J));
}

/// Rows x Cols (Cols >= 4) as strips of tile rows sweeping column blocks:
/// all strips of a block run before the next block, so that the lines of
/// D two strips share are still in L1. Returns the rows done (all of
/// them where Rows >= 4).
template <int64_t N>
HWY_INLINE int64_t transposeByRowStrips(const float *S, int64_t SLd, float *D,
                                        int64_t DLd, int64_t Rows,
                                        int64_t Cols) {
  constexpr int64_t BlockCols = 64;
  int64_t I = 0;
  for (int64_t J0 = 0; J0 < Cols; J0 += BlockCols) {
    // A short last block joins the one before.
    const int64_t J1 = Cols - J0 < 2 * BlockCols ? Cols : J0 + BlockCols;
    I = 0;
    if constexpr (N >= 16)
      if (Cols >= 16)
        for (; I + 16 <= Rows; I += 16)
          transposeStrip<16>(S + I * SLd, SLd, D + I, DLd, J0, J1);
    if constexpr (N >= 8)
      if (Cols >= 8)
        for (; I + 8 <= Rows; I += 8)
          transposeStrip<8>(S + I * SLd, SLd, D + I, DLd, J0, J1);
    for (; I + 4 <= Rows; I += 4)
      transposeStrip<4>(S + I * SLd, SLd, D + I, DLd, J0, J1);
    // The last 1-3 rows: a strip overlapping the one before.
    if (I < Rows && Rows >= 4) {
      transposeStrip<4>(S + (Rows - 4) * SLd, SLd, D + (Rows - 4), DLd, J0, J1);
      I = Rows;
    }
    if (J1 == Cols)
      break;
  }
  return I;
}

/// Rows x Cols with 2 or 3 rows and D dense (DLd == Rows): D is S's rows
/// interleaved.
bool transposeFewRows(const float *S, int64_t SLd, float *D, int64_t DLd,
                      int64_t Rows, int64_t Cols) {
  if (DLd != Rows || (Rows != 2 && Rows != 3))
    return false;
  const hn::ScalableTag<float> Df;
  const int64_t L = int64_t(hn::Lanes(Df));
  int64_t J = 0;
  if (Rows == 2)
    for (; J + L <= Cols; J += L)
      hn::StoreInterleaved2(hn::LoadU(Df, S + J), hn::LoadU(Df, S + SLd + J),
                            Df, D + 2 * J);
  else
    for (; J + L <= Cols; J += L)
      hn::StoreInterleaved3(hn::LoadU(Df, S + J), hn::LoadU(Df, S + SLd + J),
                            hn::LoadU(Df, S + 2 * SLd + J), Df, D + 3 * J);
  for (; J < Cols; ++J)
    for (int64_t I = 0; I < Rows; ++I)
      D[J * DLd + I] = S[I * SLd + J];
  return true;
}

/// Rows x Cols with 2 or 3 columns and S dense (SLd == Cols): D's rows are
/// S deinterleaved.
bool transposeFewCols(const float *S, int64_t SLd, float *D, int64_t DLd,
                      int64_t Rows, int64_t Cols) {
  if (SLd != Cols || (Cols != 2 && Cols != 3))
    return false;
  const hn::ScalableTag<float> Df;
  const int64_t L = int64_t(hn::Lanes(Df));
  hn::Vec<decltype(Df)> V0, V1, V2;
  int64_t I = 0;
  if (Cols == 2)
    for (; I + L <= Rows; I += L) {
      hn::LoadInterleaved2(Df, S + 2 * I, V0, V1);
      hn::StoreU(V0, Df, D + I);
      hn::StoreU(V1, Df, D + DLd + I);
    }
  else
    for (; I + L <= Rows; I += L) {
      hn::LoadInterleaved3(Df, S + 3 * I, V0, V1, V2);
      hn::StoreU(V0, Df, D + I);
      hn::StoreU(V1, Df, D + DLd + I);
      hn::StoreU(V2, Df, D + 2 * DLd + I);
    }
  for (; I < Rows; ++I)
    for (int64_t J = 0; J < Cols; ++J)
      D[J * DLd + I] = S[I * SLd + J];
  return true;
}
#endif // HWY_TARGET != HWY_SCALAR

void TransposeImpl(const float *S, int64_t SLd, float *D, int64_t DLd,
                   int64_t Rows, int64_t Cols) {
  if (Rows <= 0 || Cols <= 0)
    return;
  int64_t Done = 0; // Rows of S transposed by tiles.
#if HWY_TARGET != HWY_SCALAR
  if (transposeFewRows(S, SLd, D, DLd, Rows, Cols) ||
      transposeFewCols(S, SLd, D, DLd, Rows, Cols))
    return;
  constexpr int64_t N = MaxTile;
  // Column strips where S's rows are long (a row strip would leave D's
  // lines half written for long) or D's rows are a multiple of 1 KiB apart
  // (the N rows of D a row strip writes at once would crowd into a few L1
  // sets); only in cache, as they read S's rows one line at a time, and
  // for at least four tile rows (fewer would be mostly bottom edge).
  constexpr int64_t InCacheFloats = 1 << 18;
  if (Rows >= 4 * N && Cols >= N && Rows * Cols <= InCacheFloats &&
      (Cols > 128 || DLd % 256 == 0)) {
    transposeByColumnStrips<N>(S, SLd, D, DLd, Rows, Cols);
    return;
  }
  if (Cols >= 4)
    Done = transposeByRowStrips<N>(S, SLd, D, DLd, Rows, Cols);
#endif
  // Whatever tiles do not cover: fewer than 4 rows or columns.
  for (int64_t I = Done; I < Rows; ++I)
    for (int64_t J = 0; J < Cols; ++J)
      D[J * DLd + I] = S[I * SLd + J];
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
