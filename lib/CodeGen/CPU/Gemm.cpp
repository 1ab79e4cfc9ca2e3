//===- Gemm.cpp - The shared register-blocked GEMM ------------------------===//
//
// The micro-kernel keeps an MR x NR tile of C in registers (NR = two
// vectors; MR = 14 with 32 vector registers, 6 with 16) and, per k,
// loads two vectors of the B micro-panel and broadcasts MR scalars of the
// A micro-panel; a panel of at most one vector of columns (the last of
// N, or all of a 16-channel conv's on AVX-512) runs a one-vector kernel.
// Blocking (BLIS order): K in blocks of KC, M in blocks of MC rows whose A
// panels stay in L2, and for each NR panel of B (in L1) every MR tile of the
// block. Work items (row block x group of B panels) are spread over threads;
// each item owns its tiles of C.
//
// Compiled once per SIMD target by Highway; the dispatcher picks the best
// target of the machine at run time.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "Gemm.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Gemm.h"
#include "Parallel.h"
#include "SimdActivation-inl.h"

#include "hwy/cache_control.h"
#include "hwy/highway.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The tile's loops must be unrolled fully for the accumulators to live in
// registers.
#if defined(__clang__)
#define STRIDER_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define STRIDER_UNROLL _Pragma("GCC unroll 16")
#else
#define STRIDER_UNROLL
#endif

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
constexpr int kMR = 4;
#elif HWY_ARCH_X86 && HWY_TARGET > HWY_AVX3
constexpr int kMR = 6; // 16 vector registers: 12 accumulators.
#else
constexpr int kMR = 14; // 32 vector registers: 28 accumulators.
#endif

int GemmMRImpl() { return kMR; }
int GemmNRImpl() { return int(2 * hn::Lanes(DF())); }

/// Where a tile goes: the valid Rows x Cols corner of an MR x NR tile at
/// C (row stride LdM, column stride LdN), whether this K block is the
/// first (bias and residual are added) and the last (activation).
struct TileTarget {
  float *C;
  int64_t LdM, LdN;
  int Rows, Cols;
  bool First, Last;
  const Epilogue *Epi;
  const float *Residual; ///< The tile's corner in the residual, or null.
  const float *BiasCols; ///< Bias at the tile's first column, or null.
  const float *BiasRows; ///< Bias at the tile's first row, or null.
};

constexpr int kMaxNR = 2 * int(HWY_MAX_BYTES / sizeof(float));

/// Copies the valid corner of a strided tile into a dense MR x NR buffer.
HWY_INLINE void gatherTile(const float *Src, int64_t LdM, int64_t LdN, int Rows,
                           int Cols, int NR, float *Dst) {
  for (int R = 0; R < Rows; ++R)
    for (int C = 0; C < Cols; ++C)
      Dst[R * NR + C] = Src[R * LdM + C * LdN];
}

/// Where the A operand of a tile comes from: a packed micro-panel (k-major,
/// kMR floats per k) or rows read in place (see DirectA).
struct TileA {
  const float *Panel = nullptr;
  const float *Row0 = nullptr; ///< Direct: the tile's first row.
  /// Direct, for a tile whose rows span segments: each row's start.
  const float *const *RowPtrs = nullptr;
  /// Streamed ahead of use, one B row (NR floats) per k: the next panel's
  /// B rows during a panel's first tile (B comes from memory then); null
  /// for the other tiles, whose B is in L1.
  const float *PrefetchB = nullptr;
  int64_t RowStride = 0, Width = 0, K0 = 0;
  const int64_t *TapOffsets = nullptr;
};

/// Prefetches the B row at \p PB (with \p Fetch): NR floats, or the first
/// vector's.
template <bool Two, bool Fetch>
HWY_INLINE void prefetchB(const float *PB, size_t L) {
  if constexpr (Fetch) {
    hwy::Prefetch(PB);
    if constexpr (Two)
      hwy::Prefetch(PB + L);
  }
}

/// Sums an R x NR tile over KC steps of k into C0/C1 (R <= kMR rows);
/// without \p Two only the first vector of columns, into C0 (a tile of at
/// most one vector of valid columns: the FMAs of the second would all be
/// wasted, half of a 16-channel conv's on AVX-512).
template <int R, bool Two, bool Fetch>
HWY_INLINE void accumulate(const TileA &A, const float *HWY_RESTRICT B,
                           int64_t KC, VF (&C0)[kMR], VF (&C1)[kMR]) {
  const DF d;
  const size_t L = hn::Lanes(d);
  const float *PB = A.PrefetchB;
  if (A.Panel) {
    const float *HWY_RESTRICT AP = A.Panel;
    for (int64_t K = 0; K < KC; ++K) {
      const VF B0 = hn::LoadU(d, B);
      const VF B1 = Two ? hn::LoadU(d, B + L) : B0;
      prefetchB<Two, Fetch>(PB, L);
      if constexpr (Fetch)
        PB += 2 * L;
      STRIDER_UNROLL for (int Rr = 0; Rr < R; ++Rr) {
        const VF AV = hn::Set(d, AP[Rr]);
        C0[Rr] = hn::MulAdd(AV, B0, C0[Rr]);
        if constexpr (Two)
          C1[Rr] = hn::MulAdd(AV, B1, C1[Rr]);
      }
      AP += kMR;
      B += 2 * L;
    }
    return;
  }
  // Direct rows: runs of contiguous k inside one tap group.
  const int64_t Ld = A.RowStride;
  int64_t K = A.K0;
  const int64_t KEnd = A.K0 + KC;
  while (K < KEnd) {
    const int64_t Tap = K / A.Width, C = K % A.Width;
    const int64_t Run = std::min(A.Width - C, KEnd - K);
    if (A.RowPtrs) {
      const int64_t Off = A.TapOffsets[Tap] + C;
      const float *Rows[kMR];
      STRIDER_UNROLL for (int Rr = 0; Rr < R; ++Rr) Rows[Rr] =
          A.RowPtrs[Rr] + Off;
      for (int64_t J = 0; J < Run; ++J) {
        const VF B0 = hn::LoadU(d, B);
        const VF B1 = Two ? hn::LoadU(d, B + L) : B0;
        prefetchB<Two, Fetch>(PB, L);
        if constexpr (Fetch)
          PB += 2 * L;
        STRIDER_UNROLL for (int Rr = 0; Rr < R; ++Rr) {
          const VF AV = hn::Set(d, Rows[Rr][J]);
          C0[Rr] = hn::MulAdd(AV, B0, C0[Rr]);
          if constexpr (Two)
            C1[Rr] = hn::MulAdd(AV, B1, C1[Rr]);
        }
        B += 2 * L;
      }
      K += Run;
      continue;
    }
    const float *HWY_RESTRICT AP = A.Row0 + A.TapOffsets[Tap] + C;
    for (int64_t J = 0; J < Run; ++J) {
      const VF B0 = hn::LoadU(d, B);
      const VF B1 = Two ? hn::LoadU(d, B + L) : B0;
      prefetchB<Two, Fetch>(PB, L);
      if constexpr (Fetch)
        PB += 2 * L;
      STRIDER_UNROLL for (int Rr = 0; Rr < R; ++Rr) {
        const VF AV = hn::Set(d, AP[Rr * Ld]);
        C0[Rr] = hn::MulAdd(AV, B0, C0[Rr]);
        if constexpr (Two)
          C1[Rr] = hn::MulAdd(AV, B1, C1[Rr]);
      }
      ++AP;
      B += 2 * L;
    }
    K += Run;
  }
}

/// One tile: of two vectors of columns, or (without \p Two, a tile of at
/// most one vector of valid columns) of one, the second vector's
/// registers then holding copies of the first's that nothing stores.
template <int R, bool Two>
HWY_NOINLINE void microTile(const TileA &A, const float *HWY_RESTRICT B,
                            int64_t KC, const TileTarget &T) {
  const DF d;
  const size_t L = hn::Lanes(d);
  const int NR = int(2 * L);
  VF C0[kMR], C1[kMR];
  STRIDER_UNROLL for (int Rr = 0; Rr < R; ++Rr) {
    C0[Rr] = hn::Zero(d);
    C1[Rr] = hn::Zero(d);
  }
  if (A.PrefetchB)
    accumulate<R, Two, true>(A, B, KC, C0, C1);
  else
    accumulate<R, Two, false>(A, B, KC, C0, C1);

  // A full tile with contiguous rows is read and written in place; any
  // other goes through a dense buffer.
  const bool Direct = T.Cols == (Two ? NR : int(L)) && T.LdN == 1;
  HWY_ALIGN float Buf[kMR * kMaxNR];
  float *Out = Direct ? T.C : Buf;
  const int64_t OutLd = Direct ? T.LdM : NR;
  if (!T.First) {
    if (!Direct)
      gatherTile(T.C, T.LdM, T.LdN, R, T.Cols, NR, Buf);
    STRIDER_UNROLL for (int Rr = 0; Rr < R; ++Rr) {
      C0[Rr] = hn::Add(C0[Rr], hn::LoadU(d, Out + Rr * OutLd));
      if constexpr (Two)
        C1[Rr] = hn::Add(C1[Rr], hn::LoadU(d, Out + Rr * OutLd + L));
    }
  } else {
    if (T.BiasCols) {
      const VF BB0 = hn::LoadU(d, T.BiasCols);
      const VF BB1 = Two ? hn::LoadU(d, T.BiasCols + L) : BB0;
      STRIDER_UNROLL for (int Rr = 0; Rr < R; ++Rr) {
        C0[Rr] = hn::Add(C0[Rr], BB0);
        if constexpr (Two)
          C1[Rr] = hn::Add(C1[Rr], BB1);
      }
    }
    if (T.BiasRows) {
      STRIDER_UNROLL for (int Rr = 0; Rr < R; ++Rr) {
        const VF BR = hn::Set(d, T.BiasRows[Rr]);
        C0[Rr] = hn::Add(C0[Rr], BR);
        if constexpr (Two)
          C1[Rr] = hn::Add(C1[Rr], BR);
      }
    }
    if (T.Residual) {
      HWY_ALIGN float ResBuf[kMR * kMaxNR];
      const float *Res = T.Residual;
      int64_t ResLd = T.LdM;
      if (!Direct) {
        gatherTile(T.Residual, T.LdM, T.LdN, R, T.Cols, NR, ResBuf);
        Res = ResBuf;
        ResLd = NR;
      }
      STRIDER_UNROLL for (int Rr = 0; Rr < R; ++Rr) {
        C0[Rr] = hn::Add(C0[Rr], hn::LoadU(d, Res + Rr * ResLd));
        if constexpr (Two)
          C1[Rr] = hn::Add(C1[Rr], hn::LoadU(d, Res + Rr * ResLd + L));
      }
    }
  }
  if (T.Last && !T.Epi->Act.isNone()) {
    STRIDER_UNROLL for (int Rr = 0; Rr < R; ++Rr) {
      C0[Rr] = applyActivation(d, T.Epi->Act, C0[Rr]);
      if constexpr (Two)
        C1[Rr] = applyActivation(d, T.Epi->Act, C1[Rr]);
    }
  }
  STRIDER_UNROLL for (int Rr = 0; Rr < R; ++Rr) {
    hn::StoreU(C0[Rr], d, Out + Rr * OutLd);
    if constexpr (Two)
      hn::StoreU(C1[Rr], d, Out + Rr * OutLd + L);
  }
  if (!Direct)
    for (int Rr = 0; Rr < R; ++Rr)
      for (int C = 0; C < T.Cols; ++C)
        T.C[Rr * T.LdM + C * T.LdN] = Buf[Rr * NR + C];
}

using TileFn = void (*)(const TileA &, const float *, int64_t,
                        const TileTarget &);

template <bool Two, int... Rs>
constexpr std::array<TileFn, sizeof...(Rs)>
makeTileTable(std::integer_sequence<int, Rs...>) {
  return {&microTile<Rs + 1, Two>...};
}

/// The tile kernel for \p Rows rows (1..kMR) and \p Cols valid columns
/// (one vector's kernel up to a vector of them).
TileFn getTile(int Rows, int Cols) {
  static constexpr auto Two =
      makeTileTable<true>(std::make_integer_sequence<int, kMR>());
  static constexpr auto One =
      makeTileTable<false>(std::make_integer_sequence<int, kMR>());
  return (size_t(Cols) <= hn::Lanes(DF()) ? One : Two)[size_t(Rows - 1)];
}

/// Computes the tiles \p Tiles and B panels [P0, P1) for K block
/// [K0, K0 + KC). \p APack is scratch for the packed A panels of the
/// block, \p BPack for one packed B panel.
void GemmBlockImpl(const GemmProblem &P, const RowTile *Tiles, int64_t NumTiles,
                   int64_t P0, int64_t P1, int64_t K0, int64_t KC, float *APack,
                   float *BPack) {
  const int NR = GemmNRImpl();
  if (P.A)
    for (int64_t T = 0; T < NumTiles; ++T)
      P.A->pack(Tiles[T].M0, Tiles[T].Rows, K0, KC, kMR, APack + T * kMR * KC);
  const bool First = K0 == 0;
  const bool Last = K0 + KC == P.K;
  const Epilogue &E = P.Epi;
  const float *RowPtrs[kMR];
  for (int64_t Panel = P0; Panel < P1; ++Panel) {
    const int64_t N0 = Panel * NR;
    const int Cols = int(std::min<int64_t>(NR, P.N - N0));
    const float *BP;
    if (P.PackedB) {
      BP = P.PackedB->panel(Panel, K0);
    } else {
      P.B->pack(N0, Cols, K0, KC, NR, BPack);
      BP = BPack;
    }
    for (int64_t T = 0; T < NumTiles; ++T) {
      const int64_t Row = Tiles[T].M0;
      TileA A;
      if (P.A) {
        A.Panel = APack + T * kMR * KC;
      } else if (P.PackedA) {
        A.Panel = P.PackedA->panel(Row / kMR, K0);
      } else {
        const DirectA &D = *P.Direct;
        const int64_t Seg = Row / D.SegRows;
        const int Rows = Tiles[T].Rows;
        A.Row0 = D.row(Row);
        if ((Row + Rows - 1) / D.SegRows != Seg) {
          // The tile spans segments: its rows through a table.
          for (int Rr = 0; Rr < Rows; ++Rr)
            RowPtrs[Rr] = D.row(Row + Rr);
          A.RowPtrs = RowPtrs;
        }
        A.RowStride = D.RowStride;
        A.Width = D.Width;
        A.K0 = K0;
        A.TapOffsets = D.TapOffsets;
      }
      A.PrefetchB = T == 0 && P.PackedB && Panel + 1 < P1
                        ? P.PackedB->panel(Panel + 1, K0)
                        : nullptr;
      TileTarget Tgt;
      const int64_t Off = Row * P.LdM + N0 * P.LdN;
      Tgt.C = P.C + Off;
      Tgt.LdM = P.LdM;
      Tgt.LdN = P.LdN;
      Tgt.Rows = Tiles[T].Rows;
      Tgt.Cols = Cols;
      Tgt.First = First;
      Tgt.Last = Last;
      Tgt.Epi = &E;
      Tgt.Residual = E.Residual ? E.Residual + Off : nullptr;
      Tgt.BiasCols = E.Bias && !E.BiasPerRow ? E.Bias + N0 : nullptr;
      Tgt.BiasRows = E.Bias && E.BiasPerRow ? E.Bias + Row : nullptr;
      getTile(Tiles[T].Rows, Cols)(A, BP, KC, Tgt);
    }
  }
}

} // namespace HWY_NAMESPACE
} // namespace cpu
} // namespace strider
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strider {
namespace cpu {

HWY_EXPORT(GemmMRImpl);
HWY_EXPORT(GemmNRImpl);
HWY_EXPORT(GemmBlockImpl);

APacker::~APacker() = default;
BPacker::~BPacker() = default;

void AlignedFree::operator()(float *P) const { std::free(P); }

AlignedFloats allocateFloats(size_t Count) {
  // Whole cache lines, so that vector loads past a panel's end stay inside.
  size_t Bytes = (std::max<size_t>(Count, 1) * sizeof(float) + 63) / 64 * 64;
  void *P = std::aligned_alloc(64, Bytes);
  if (!P)
    throw std::bad_alloc();
  return AlignedFloats(static_cast<float *>(P));
}

GemmBlocking getGemmBlocking() {
  GemmBlocking B;
  B.MR = HWY_DYNAMIC_DISPATCH(GemmMRImpl)();
  B.NR = HWY_DYNAMIC_DISPATCH(GemmNRImpl)();
  return B;
}

/// All panels of an operand of \p Extent rows (A) or columns (B), \p Width
/// per panel, through \p P (either packer kind: the same signature), into
/// \p Dst.
template <typename Packer>
static void packWhole(const Packer &P, int64_t Extent, int64_t K, int Width,
                      float *Dst) {
  const int64_t Panels = (Extent + Width - 1) / Width;
  for (int64_t I = 0; I < Panels; ++I)
    P.pack(I * Width, int(std::min<int64_t>(Width, Extent - I * Width)), 0, K,
           Width, Dst + I * K * Width);
}

static size_t packedSize(int64_t Extent, int64_t K, int Width) {
  return size_t((Extent + Width - 1) / Width * K * Width);
}

static PackedOperand viewPacked(const float *Data, int64_t Extent, int64_t K,
                                int Width) {
  PackedOperand Out;
  Out.K = K;
  Out.Extent = Extent;
  Out.Width = Width;
  Out.View = Data;
  return Out;
}

size_t getPackedASize(int64_t M, int64_t K) {
  return packedSize(M, K, getGemmBlocking().MR);
}

size_t getPackedBSize(int64_t N, int64_t K) {
  return packedSize(N, K, getGemmBlocking().NR);
}

void packAInto(const APacker &P, int64_t M, int64_t K, float *Dst) {
  packWhole(P, M, K, getGemmBlocking().MR, Dst);
}

void packBInto(const BPacker &P, int64_t N, int64_t K, float *Dst) {
  packWhole(P, N, K, getGemmBlocking().NR, Dst);
}

PackedOperand viewPackedA(const float *Data, int64_t M, int64_t K) {
  return viewPacked(Data, M, K, getGemmBlocking().MR);
}

PackedOperand viewPackedB(const float *Data, int64_t N, int64_t K) {
  return viewPacked(Data, N, K, getGemmBlocking().NR);
}

PackedOperand packA(const APacker &P, int64_t M, int64_t K) {
  PackedOperand Out = viewPacked(nullptr, M, K, getGemmBlocking().MR);
  Out.Data = allocateFloats(getPackedASize(M, K));
  packAInto(P, M, K, Out.Data.get());
  return Out;
}

PackedOperand packB(const BPacker &P, int64_t N, int64_t K) {
  PackedOperand Out = viewPacked(nullptr, N, K, getGemmBlocking().NR);
  Out.Data = allocateFloats(getPackedBSize(N, K));
  packBInto(P, N, K, Out.Data.get());
  return Out;
}

namespace {

/// Per-thread scratch for packed panels, grown on demand and kept.
float *threadScratch(int Slot, size_t Count) {
  thread_local AlignedFloats Buf[3];
  thread_local size_t Cap[3] = {0, 0, 0};
  if (Cap[Slot] < Count) {
    Buf[Slot] = allocateFloats(Count);
    Cap[Slot] = Count;
  }
  return Buf[Slot].get();
}

} // namespace

void runGemm(const GemmProblem &P, int Threads) {
  if (P.M <= 0 || P.N <= 0)
    return;
  const GemmBlocking Blk = getGemmBlocking();
  const int MR = Blk.MR, NR = Blk.NR;
  // K blocks of at most 320 (the B micro-panel, KC x NR floats, stays in
  // L1), of equal size.
  const int64_t K = std::max<int64_t>(P.K, 1);
  const int64_t KBlocks = (K + 319) / 320;
  const int64_t KC = (K + KBlocks - 1) / KBlocks;
  // Row tiles of MR rows (direct rows spanning segments are read through
  // a table of row starts).
  std::vector<RowTile> Tiles;
  Tiles.reserve(size_t(P.M / MR + 1));
  for (int64_t R = 0; R < P.M; R += MR)
    Tiles.push_back({R, int(std::min<int64_t>(MR, P.M - R))});
  // Row blocks of 8 tiles: their A panels (8 MR x KC) stay in L2.
  // With A packed at compile time and B packed per panel (a channels-first
  // conv), one block spans all rows so each B panel is packed once.
  const int64_t TilesPerBlock =
      P.PackedA && P.B ? std::max<int64_t>(1, int64_t(Tiles.size())) : 8;
  const int64_t NumTiles = int64_t(Tiles.size());
  const int64_t MBlocks = (NumTiles + TilesPerBlock - 1) / TilesPerBlock;
  const int64_t Panels = (P.N + NR - 1) / NR;
  // A B packed per panel and read by several row blocks (MatMul of two
  // activations) is packed once, all panels, before the blocks run.
  if (P.B && MBlocks > 1) {
    float *Buf = threadScratch(2, size_t(Panels * P.K * NR));
    parallelFor(Panels, Threads, [&](int64_t Panel) {
      const int64_t N0 = Panel * NR;
      P.B->pack(N0, int(std::min<int64_t>(NR, P.N - N0)), 0, P.K, NR,
                Buf + Panel * P.K * NR);
    });
    PackedOperand Whole;
    Whole.K = P.K;
    Whole.Extent = P.N;
    Whole.Width = NR;
    Whole.View = Buf;
    GemmProblem Q = P;
    Q.B = nullptr;
    Q.PackedB = &Whole;
    runGemm(Q, Threads);
    return;
  }
  // With few row blocks, split the B panels too, so every thread has work.
  int64_t Groups = 1;
  if (Threads > 1 && MBlocks < 4 * Threads)
    Groups = std::min<int64_t>(Panels, (4 * Threads + MBlocks - 1) / MBlocks);
  const int64_t Items = MBlocks * Groups;

  auto RunItem = [&](int64_t Item) {
    const int64_t MB = Item / Groups, G = Item % Groups;
    const int64_t P0 = Panels * G / Groups, P1 = Panels * (G + 1) / Groups;
    const int64_t T0 = MB * TilesPerBlock;
    const int64_t NT = std::min(TilesPerBlock, NumTiles - T0);
    float *APack =
        P.A ? threadScratch(0, size_t(TilesPerBlock * MR * KC)) : nullptr;
    float *BPack = P.PackedB ? nullptr : threadScratch(1, size_t(KC * NR));
    if (P.K == 0) {
      // No sum: the tiles are the epilogue of zero.
      HWY_DYNAMIC_DISPATCH(GemmBlockImpl)
      (P, Tiles.data() + T0, NT, P0, P1, 0, 0, APack, BPack);
      return;
    }
    for (int64_t K0 = 0; K0 < P.K; K0 += KC)
      HWY_DYNAMIC_DISPATCH(GemmBlockImpl)
    (P, Tiles.data() + T0, NT, P0, P1, K0, std::min(KC, P.K - K0), APack,
     BPack);
  };
  parallelFor(Items, Threads, RunItem);
}

void runGemmOfActivations(const float *A, int64_t ARow, int64_t ACol,
                          const float *B, int64_t BRow, int64_t BCol, int64_t M,
                          int64_t N, int64_t K, float *C, int64_t LdM,
                          int64_t LdN, const Epilogue &Epi, int Threads) {
  auto AP = makeStridedAPacker(A, ARow, ACol);
  auto BP = makeStridedBPacker(B, BRow, BCol);
  DirectA D = DirectA::matrix(A, M, K, ARow);
  GemmProblem G;
  G.M = M;
  G.N = N;
  G.K = K;
  if (ACol == 1)
    G.Direct = &D;
  else
    G.A = &AP;
  G.B = &BP;
  G.C = C;
  G.LdM = LdM;
  G.LdN = LdN;
  G.Epi = Epi;
  runGemm(G, Threads);
}

void packStridedPanel(const float *Base, int64_t PanelStride, int64_t KStride,
                      int64_t I0, int Count, int64_t K0, int64_t KC, int Width,
                      float *Dst) {
  for (int64_t K = 0; K < KC; ++K) {
    const float *Src = Base + I0 * PanelStride + (K0 + K) * KStride;
    float *D = Dst + K * Width;
    int I = 0;
    if (PanelStride == 1) {
      std::memcpy(D, Src, size_t(Count) * sizeof(float));
      I = Count;
    }
    for (; I < Count; ++I)
      D[I] = Src[I * PanelStride];
    for (; I < Width; ++I)
      D[I] = 0.0f;
  }
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
