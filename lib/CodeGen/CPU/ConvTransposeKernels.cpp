//===- ConvTransposeKernels.cpp - col2im of transposed convolutions -------===//
//
// A transposed convolution is a GEMM over the input pixels into a column
// buffer (every product of an input pixel with every tap and output
// channel) and this gather: each output element is its bias plus the
// columns of the taps that reach it, added in tap order. The work is split
// over output rows, so no two threads write one element and the sum order
// is fixed.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ConvTransposeKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"
#include "Parallel.h"
#include "SimdTail-inl.h"

#include "hwy/highway.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cassert>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Y[c] = Bias[c] + Srcs[0][c] + ... + Srcs[NSrc - 1][c] for c < C, summed
/// in registers four vectors at a time.
void SumRowsImpl(const float *Bias, const float *const *Srcs, int64_t NSrc,
                 int64_t C, float *Y) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  int64_t J = 0;
  for (; J + 4 * L <= C; J += 4 * L) {
    auto A0 = hn::LoadU(d, Bias + J), A1 = hn::LoadU(d, Bias + J + L);
    auto A2 = hn::LoadU(d, Bias + J + 2 * L),
         A3 = hn::LoadU(d, Bias + J + 3 * L);
    for (int64_t S = 0; S < NSrc; ++S) {
      const float *P = Srcs[S] + J;
      A0 = hn::Add(A0, hn::LoadU(d, P));
      A1 = hn::Add(A1, hn::LoadU(d, P + L));
      A2 = hn::Add(A2, hn::LoadU(d, P + 2 * L));
      A3 = hn::Add(A3, hn::LoadU(d, P + 3 * L));
    }
    hn::StoreU(A0, d, Y + J);
    hn::StoreU(A1, d, Y + J + L);
    hn::StoreU(A2, d, Y + J + 2 * L);
    hn::StoreU(A3, d, Y + J + 3 * L);
  }
  for (; J < C; J += L) {
    const size_t N = size_t(std::min(L, C - J));
    auto A = loadTail(d, Bias + J, N);
    for (int64_t S = 0; S < NSrc; ++S)
      A = hn::Add(A, loadTail(d, Srcs[S] + J, N));
    storeTail(d, A, Y + J, N);
  }
}

/// Y[j] += X[j] for j < N.
void AddRowImpl(const float *X, int64_t N, float *Y) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  int64_t J = 0;
  for (; J + L <= N; J += L)
    hn::StoreU(hn::Add(hn::LoadU(d, Y + J), hn::LoadU(d, X + J)), d, Y + J);
  for (; J < N; ++J)
    Y[J] += X[J];
}

} // namespace HWY_NAMESPACE
} // namespace cpu
} // namespace strider
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strider {
namespace cpu {

HWY_EXPORT(SumRowsImpl);
HWY_EXPORT(AddRowImpl);

namespace {

int64_t tapCount(const Col2ImParams &P) {
  return P.Kernel[0] * P.Kernel[1] * P.Kernel[2];
}

int64_t inPixels(const Col2ImParams &P) { return P.In[0] * P.In[1] * P.In[2]; }

/// Along the last axis, the outputs one tap reaches: output OutFirst +
/// J * OutStep reads input InFirst + J, J < Count.
struct TapRun {
  int64_t OutFirst = 0, OutStep = 1, InFirst = 0, Count = 0;
};

std::vector<TapRun> tapRuns(const Col2ImParams &P) {
  const Col2ImAxis &A = P.Axes[2];
  std::vector<TapRun> Runs(size_t(P.Kernel[2]));
  for (int64_t O = 0; O < P.Out[2]; ++O)
    for (int32_t E = A.Begin[size_t(O)]; E < A.Begin[size_t(O) + 1]; ++E) {
      TapRun &R = Runs[size_t(A.Tap[size_t(E)])];
      if (R.Count == 0) {
        R.OutFirst = O;
        R.InFirst = A.In[size_t(E)];
      } else if (R.Count == 1) {
        R.OutStep = O - R.OutFirst;
      }
      assert(O == R.OutFirst + R.Count * R.OutStep &&
             A.In[size_t(E)] == R.InFirst + R.Count && "not a progression");
      ++R.Count;
    }
  return Runs;
}

} // namespace

void runCol2ImChannelsLast(const Col2ImParams &P, const float *Col,
                           const float *Bias, float *Y, int Threads) {
  assert(P.YC == 1 && "channels must be contiguous");
  const int64_t Ch = P.Channels, Taps = tapCount(P);
  const int64_t RowLen = Taps * Ch; // One input pixel's columns.
  const Col2ImAxis &AD = P.Axes[0], &AH = P.Axes[1], &AW = P.Axes[2];
  parallelFor(P.Out[0] * P.Out[1], Threads, [&](int64_t Item) {
    const int64_t OD = Item / P.Out[1], OH = Item % P.Out[1];
    // The (input row, tap row) pairs reaching this output row.
    llvm::SmallVector<std::pair<int64_t, int64_t>, 16> Rows;
    for (int32_t ED = AD.Begin[size_t(OD)]; ED < AD.Begin[size_t(OD) + 1]; ++ED)
      for (int32_t EH = AH.Begin[size_t(OH)]; EH < AH.Begin[size_t(OH) + 1];
           ++EH)
        Rows.push_back(
            {(int64_t(AD.In[size_t(ED)]) * P.In[1] + AH.In[size_t(EH)]) *
                 P.In[2],
             (int64_t(AD.Tap[size_t(ED)]) * P.Kernel[1] + AH.Tap[size_t(EH)]) *
                 P.Kernel[2]});
    llvm::SmallVector<const float *, 32> Srcs;
    float *YRow = Y + OD * P.YS[0] + OH * P.YS[1];
    for (int64_t OW = 0; OW < P.Out[2]; ++OW) {
      Srcs.clear();
      for (const auto &R : Rows)
        for (int32_t EW = AW.Begin[size_t(OW)]; EW < AW.Begin[size_t(OW) + 1];
             ++EW)
          Srcs.push_back(Col + (R.first + AW.In[size_t(EW)]) * RowLen +
                         (R.second + AW.Tap[size_t(EW)]) * Ch);
      HWY_DYNAMIC_DISPATCH(SumRowsImpl)
      (Bias, Srcs.data(), int64_t(Srcs.size()), Ch, YRow + OW * P.YS[2]);
    }
  });
}

void runCol2ImChannelsFirst(const Col2ImParams &P, const float *Col,
                            const float *Bias, float *Y, int Threads) {
  assert(P.YS[2] == 1 && "output rows must be contiguous");
  const int64_t Taps = tapCount(P), InPix = inPixels(P);
  const Col2ImAxis &AD = P.Axes[0], &AH = P.Axes[1];
  const std::vector<TapRun> Runs = tapRuns(P);
  const int64_t Rows = P.Out[0] * P.Out[1];
  parallelFor(P.Channels * Rows, Threads, [&](int64_t Item) {
    const int64_t M = Item / Rows, R = Item % Rows;
    const int64_t OD = R / P.Out[1], OH = R % P.Out[1];
    float *YRow = Y + M * P.YC + OD * P.YS[0] + OH * P.YS[1];
    std::fill(YRow, YRow + P.Out[2], Bias[M]);
    const float *ColM = Col + M * Taps * InPix;
    for (int32_t ED = AD.Begin[size_t(OD)]; ED < AD.Begin[size_t(OD) + 1]; ++ED)
      for (int32_t EH = AH.Begin[size_t(OH)]; EH < AH.Begin[size_t(OH) + 1];
           ++EH) {
        const int64_t InRow =
            (int64_t(AD.In[size_t(ED)]) * P.In[1] + AH.In[size_t(EH)]) *
            P.In[2];
        const int64_t TapRow =
            (int64_t(AD.Tap[size_t(ED)]) * P.Kernel[1] + AH.Tap[size_t(EH)]) *
            P.Kernel[2];
        for (int64_t KW = 0; KW < P.Kernel[2]; ++KW) {
          const TapRun &Run = Runs[size_t(KW)];
          if (Run.Count == 0)
            continue;
          const float *Src = ColM + (TapRow + KW) * InPix + InRow + Run.InFirst;
          float *Dst = YRow + Run.OutFirst;
          if (Run.OutStep == 1 || Run.Count == 1) {
            HWY_DYNAMIC_DISPATCH(AddRowImpl)(Src, Run.Count, Dst);
            continue;
          }
          for (int64_t J = 0; J < Run.Count; ++J)
            Dst[J * Run.OutStep] += Src[J];
        }
      }
  });
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
