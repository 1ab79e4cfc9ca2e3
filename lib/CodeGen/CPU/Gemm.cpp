//===- Gemm.cpp - The shared register-blocked GEMM ------------------------===//
//
// The micro-kernel keeps an MR x NR tile of C in registers (NR = two
// vectors; MR = 14 with 32 vector registers, 6 with 16) and, per k,
// loads two vectors of the B micro-panel and broadcasts MR scalars of the
// A micro-panel. Blocking (BLIS order): K in blocks of KC, M in blocks of
// MC rows whose A panels stay in L2, and for each NR panel of B (in L1)
// every MR tile of the block. Work items (row block x group of B panels)
// are spread over threads; each item owns its tiles of C.
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

#include "hwy/highway.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

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

HWY_NOINLINE void microTile(const float *HWY_RESTRICT A,
                            const float *HWY_RESTRICT B, int64_t KC,
                            const TileTarget &T) {
  const DF d;
  const size_t L = hn::Lanes(d);
  const int NR = int(2 * L);
  VF C0[kMR], C1[kMR];
  STRIDER_UNROLL for (int R = 0; R < kMR; ++R) {
    C0[R] = hn::Zero(d);
    C1[R] = hn::Zero(d);
  }
  for (int64_t K = 0; K < KC; ++K) {
    const VF B0 = hn::LoadU(d, B);
    const VF B1 = hn::LoadU(d, B + L);
    STRIDER_UNROLL for (int R = 0; R < kMR; ++R) {
      const VF AV = hn::Set(d, A[R]);
      C0[R] = hn::MulAdd(AV, B0, C0[R]);
      C1[R] = hn::MulAdd(AV, B1, C1[R]);
    }
    A += kMR;
    B += 2 * L;
  }

  // A full tile with contiguous rows is read and written in place; any
  // other goes through a dense buffer.
  const bool Direct = T.Rows == kMR && T.Cols == NR && T.LdN == 1;
  HWY_ALIGN float Buf[kMR * kMaxNR];
  float *Out = Direct ? T.C : Buf;
  const int64_t OutLd = Direct ? T.LdM : NR;
  if (!T.First) {
    if (!Direct)
      gatherTile(T.C, T.LdM, T.LdN, T.Rows, T.Cols, NR, Buf);
    STRIDER_UNROLL for (int R = 0; R < kMR; ++R) {
      C0[R] = hn::Add(C0[R], hn::LoadU(d, Out + R * OutLd));
      C1[R] = hn::Add(C1[R], hn::LoadU(d, Out + R * OutLd + L));
    }
  } else {
    if (T.BiasCols) {
      const VF BB0 = hn::LoadU(d, T.BiasCols);
      const VF BB1 = hn::LoadU(d, T.BiasCols + L);
      STRIDER_UNROLL for (int R = 0; R < kMR; ++R) {
        C0[R] = hn::Add(C0[R], BB0);
        C1[R] = hn::Add(C1[R], BB1);
      }
    }
    if (T.BiasRows) {
      for (int R = 0; R < T.Rows; ++R) {
        const VF BR = hn::Set(d, T.BiasRows[R]);
        C0[R] = hn::Add(C0[R], BR);
        C1[R] = hn::Add(C1[R], BR);
      }
    }
    if (T.Residual) {
      HWY_ALIGN float ResBuf[kMR * kMaxNR];
      const float *Res = T.Residual;
      int64_t ResLd = T.LdM;
      if (!Direct) {
        std::memset(ResBuf, 0, sizeof(ResBuf));
        gatherTile(T.Residual, T.LdM, T.LdN, T.Rows, T.Cols, NR, ResBuf);
        Res = ResBuf;
        ResLd = NR;
      }
      STRIDER_UNROLL for (int R = 0; R < kMR; ++R) {
        C0[R] = hn::Add(C0[R], hn::LoadU(d, Res + R * ResLd));
        C1[R] = hn::Add(C1[R], hn::LoadU(d, Res + R * ResLd + L));
      }
    }
  }
  if (T.Last && !T.Epi->Act.isNone()) {
    STRIDER_UNROLL for (int R = 0; R < kMR; ++R) {
      C0[R] = applyActivation(d, T.Epi->Act, C0[R]);
      C1[R] = applyActivation(d, T.Epi->Act, C1[R]);
    }
  }
  STRIDER_UNROLL for (int R = 0; R < kMR; ++R) {
    hn::StoreU(C0[R], d, Out + R * OutLd);
    hn::StoreU(C1[R], d, Out + R * OutLd + L);
  }
  if (!Direct)
    for (int R = 0; R < T.Rows; ++R)
      for (int C = 0; C < T.Cols; ++C)
        T.C[R * T.LdM + C * T.LdN] = Buf[R * NR + C];
}

/// Computes the tiles of rows [M0, M0 + MRows) and B panels [P0, P1) for
/// K block [K0, K0 + KC). \p APack and \p BPack are scratch for the
/// packed panels of this block.
void GemmBlockImpl(const GemmProblem &P, int64_t M0, int64_t MRows, int64_t P0,
                   int64_t P1, int64_t K0, int64_t KC, float *APack,
                   float *BPack) {
  const int NR = GemmNRImpl();
  const int64_t Tiles = (MRows + kMR - 1) / kMR;
  const float *APanels = nullptr;
  if (P.PackedA) {
    APanels = nullptr; // Read per tile below.
  } else {
    for (int64_t T = 0; T < Tiles; ++T) {
      int Rows = int(std::min<int64_t>(kMR, MRows - T * kMR));
      P.A->pack(M0 + T * kMR, Rows, K0, KC, kMR, APack + T * kMR * KC);
    }
    APanels = APack;
  }
  const bool First = K0 == 0;
  const bool Last = K0 + KC == P.K;
  const Epilogue &E = P.Epi;
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
    for (int64_t T = 0; T < Tiles; ++T) {
      const int64_t Row = M0 + T * kMR;
      const float *AP =
          P.PackedA ? P.PackedA->panel(Row / kMR, K0) : APanels + T * kMR * KC;
      TileTarget Tgt;
      const int64_t Off = Row * P.LdM + N0 * P.LdN;
      Tgt.C = P.C + Off;
      Tgt.LdM = P.LdM;
      Tgt.LdN = P.LdN;
      Tgt.Rows = int(std::min<int64_t>(kMR, P.M - Row));
      Tgt.Cols = Cols;
      Tgt.First = First;
      Tgt.Last = Last;
      Tgt.Epi = &E;
      Tgt.Residual = E.Residual ? E.Residual + Off : nullptr;
      Tgt.BiasCols = E.Bias && !E.BiasPerRow ? E.Bias + N0 : nullptr;
      Tgt.BiasRows = E.Bias && E.BiasPerRow ? E.Bias + Row : nullptr;
      microTile(AP, BP, KC, Tgt);
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

PackedOperand packA(const APacker &P, int64_t M, int64_t K) {
  const int MR = getGemmBlocking().MR;
  const int64_t Panels = (M + MR - 1) / MR;
  PackedOperand Out;
  Out.K = K;
  Out.Extent = M;
  Out.Width = MR;
  Out.Data = allocateFloats(size_t(Panels * K * MR));
  for (int64_t I = 0; I < Panels; ++I)
    P.pack(I * MR, int(std::min<int64_t>(MR, M - I * MR)), 0, K, MR,
           Out.Data.get() + I * K * MR);
  return Out;
}

PackedOperand packB(const BPacker &P, int64_t N, int64_t K) {
  const int NR = getGemmBlocking().NR;
  const int64_t Panels = (N + NR - 1) / NR;
  PackedOperand Out;
  Out.K = K;
  Out.Extent = N;
  Out.Width = NR;
  Out.Data = allocateFloats(size_t(Panels * K * NR));
  for (int64_t I = 0; I < Panels; ++I)
    P.pack(I * NR, int(std::min<int64_t>(NR, N - I * NR)), 0, K, NR,
           Out.Data.get() + I * K * NR);
  return Out;
}

namespace {

/// Per-thread scratch for packed panels, grown on demand and kept.
float *threadScratch(int Slot, size_t Count) {
  thread_local AlignedFloats Buf[2];
  thread_local size_t Cap[2] = {0, 0};
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
  // Row blocks of 8 tiles: their A panels (MC x KC) stay in L2.
  const int64_t MC = int64_t(MR) * 8;
  const int64_t MBlocks = (P.M + MC - 1) / MC;
  const int64_t Panels = (P.N + NR - 1) / NR;
  // With few row blocks, split the B panels too, so every thread has work.
  int64_t Groups = 1;
  if (Threads > 1 && MBlocks < 4 * Threads)
    Groups = std::min<int64_t>(Panels, (4 * Threads + MBlocks - 1) / MBlocks);
  const int64_t Items = MBlocks * Groups;

  auto RunItem = [&](int64_t Item) {
    const int64_t MB = Item / Groups, G = Item % Groups;
    const int64_t P0 = Panels * G / Groups, P1 = Panels * (G + 1) / Groups;
    const int64_t M0 = MB * MC;
    const int64_t MRows = std::min<int64_t>(MC, P.M - M0);
    float *APack = P.PackedA ? nullptr : threadScratch(0, size_t(MC * KC));
    float *BPack = P.PackedB ? nullptr : threadScratch(1, size_t(KC * NR));
    if (P.K == 0) {
      // No sum: the tiles are the epilogue of zero.
      HWY_DYNAMIC_DISPATCH(GemmBlockImpl)
      (P, M0, MRows, P0, P1, 0, 0, APack, BPack);
      return;
    }
    for (int64_t K0 = 0; K0 < P.K; K0 += KC)
      HWY_DYNAMIC_DISPATCH(GemmBlockImpl)
      (P, M0, MRows, P0, P1, K0, std::min(KC, P.K - K0), APack, BPack);
  };
  parallelFor(Items, Threads, RunItem);
}

void StridedAPacker::pack(int64_t M0, int Rows, int64_t K0, int64_t KC, int MR,
                          float *Dst) const {
  for (int64_t K = 0; K < KC; ++K) {
    const float *Src = Base + M0 * RowStride + (K0 + K) * ColStride;
    float *D = Dst + K * MR;
    int R = 0;
    for (; R < Rows; ++R)
      D[R] = Src[R * RowStride];
    for (; R < MR; ++R)
      D[R] = 0.0f;
  }
}

void StridedBPacker::pack(int64_t N0, int Cols, int64_t K0, int64_t KC, int NR,
                          float *Dst) const {
  for (int64_t K = 0; K < KC; ++K) {
    const float *Src = Base + (K0 + K) * RowStride + N0 * ColStride;
    float *D = Dst + K * NR;
    int C = 0;
    if (ColStride == 1) {
      std::memcpy(D, Src, size_t(Cols) * sizeof(float));
      C = Cols;
    }
    for (; C < Cols; ++C)
      D[C] = Src[C * ColStride];
    for (; C < NR; ++C)
      D[C] = 0.0f;
  }
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
