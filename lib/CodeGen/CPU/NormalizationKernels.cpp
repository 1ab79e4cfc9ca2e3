//===- NormalizationKernels.cpp - InstanceNormalization -------------------===//
//
// Mean and variance per image and channel in two passes (the variance
// around the mean, never E[x^2] - E[x]^2), then one affine pass
// (x - mean) * a + b. Sums run in float vector lanes over short runs that
// are flushed into double totals; the pixels are cut into blocks of a
// fixed size (not a per-thread share), each block's partial sums are
// stored and added in block order, so the result is the same for every
// thread count.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "NormalizationKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Gemm.h"
#include "Kernels.h"
#include "Parallel.h"
#include "SimdTail-inl.h"

#include "hwy/highway.h"

#include <cmath>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Sum over X[0, N) of X[i] - Shift, or of its square (\p Square), in
/// float lanes flushed into a double every 256 vectors.
template <bool Square> double planeSum(const float *X, int64_t N, float Shift) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const auto S = hn::Set(d, Shift);
  auto Term = [&](hn::Vec<decltype(d)> V, hn::Vec<decltype(d)> Acc) {
    V = hn::Sub(V, S);
    return Square ? hn::MulAdd(V, V, Acc) : hn::Add(Acc, V);
  };
  HWY_ALIGN float Lanes[HWY_MAX_BYTES / sizeof(float)];
  double Total = 0;
  const int64_t Block = 256 * L;
  for (int64_t B0 = 0; B0 < N; B0 += Block) {
    const float *P = X + B0;
    const int64_t Count = std::min(Block, N - B0);
    auto A0 = hn::Zero(d), A1 = hn::Zero(d);
    int64_t I = 0;
    for (; I + 2 * L <= Count; I += 2 * L) {
      A0 = Term(hn::LoadU(d, P + I), A0);
      A1 = Term(hn::LoadU(d, P + I + L), A1);
    }
    for (; I + L <= Count; I += L)
      A0 = Term(hn::LoadU(d, P + I), A0);
    if (I < Count) {
      // Lanes past the end would contribute -Shift: keep them out.
      const size_t Rest = size_t(Count - I);
      const auto V = Term(loadTail(d, P + I, Rest), hn::Zero(d));
      A1 = hn::Add(A1, hn::IfThenElseZero(hn::FirstN(d, Rest), V));
    }
    hn::Store(hn::Add(A0, A1), d, Lanes);
    for (int64_t J = 0; J < L; ++J)
      Total += double(Lanes[J]);
  }
  return Total;
}

double PlaneSumImpl(const float *X, int64_t N, float Shift, bool Square) {
  return Square ? planeSum<true>(X, N, Shift) : planeSum<false>(X, N, Shift);
}

/// Acc[c] += sum over \p Rows pixel rows of C channels of X[r][c] -
/// Shift[c], or of its square. \p Tmp holds C floats rounded up to a
/// vector; \p Shift is padded likewise. Rows are summed in float in runs
/// of 32, then flushed into Acc.
template <bool Square>
void rowsSum(const float *X, int64_t Rows, int64_t C, const float *Shift,
             float *Tmp, double *Acc) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const int64_t Full = C / L * L;
  for (int64_t R0 = 0; R0 < Rows; R0 += 32) {
    const int64_t R1 = std::min(Rows, R0 + 32);
    for (int64_t J = 0; J < C; J += L)
      hn::Store(hn::Zero(d), d, Tmp + J);
    for (int64_t R = R0; R < R1; ++R) {
      const float *Row = X + R * C;
      int64_t J = 0;
      for (; J < Full; J += L) {
        auto V = hn::Sub(hn::LoadU(d, Row + J), hn::LoadU(d, Shift + J));
        auto A = hn::Load(d, Tmp + J);
        hn::Store(Square ? hn::MulAdd(V, V, A) : hn::Add(A, V), d, Tmp + J);
      }
      if (J < C) {
        // Lanes past C land in Tmp's padding, which is never read.
        auto V = hn::Sub(loadTail(d, Row + J, size_t(C - J)),
                         hn::LoadU(d, Shift + J));
        auto A = hn::Load(d, Tmp + J);
        hn::Store(Square ? hn::MulAdd(V, V, A) : hn::Add(A, V), d, Tmp + J);
      }
    }
    for (int64_t J = 0; J < C; ++J)
      Acc[J] += double(Tmp[J]);
  }
}

void RowsSumImpl(const float *X, int64_t Rows, int64_t C, const float *Shift,
                 bool Square, float *Tmp, double *Acc) {
  if (Square)
    rowsSum<true>(X, Rows, C, Shift, Tmp, Acc);
  else
    rowsSum<false>(X, Rows, C, Shift, Tmp, Acc);
}

/// Y[i] = (X[i] - M) * A + B over \p N elements.
void NormPlaneImpl(const float *X, int64_t N, float M, float A, float B,
                   float *Y) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const auto MV = hn::Set(d, M), AV = hn::Set(d, A), BV = hn::Set(d, B);
  int64_t I = 0;
  for (; I + L <= N; I += L)
    hn::StoreU(hn::MulAdd(hn::Sub(hn::LoadU(d, X + I), MV), AV, BV), d, Y + I);
  for (; I < N; ++I)
    Y[I] = (X[I] - M) * A + B;
}

/// Pixel rows of C channels: Y[r][c] = (X[r][c] - M[c]) * A[c] + B[c].
void NormRowsImpl(const float *X, int64_t Rows, int64_t C, const float *M,
                  const float *A, const float *B, float *Y) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  for (int64_t R = 0; R < Rows; ++R) {
    const float *XR = X + R * C;
    float *YR = Y + R * C;
    int64_t J = 0;
    for (; J + L <= C; J += L)
      hn::StoreU(hn::MulAdd(hn::Sub(hn::LoadU(d, XR + J), hn::LoadU(d, M + J)),
                            hn::LoadU(d, A + J), hn::LoadU(d, B + J)),
                 d, YR + J);
    for (; J < C; ++J)
      YR[J] = (XR[J] - M[J]) * A[J] + B[J];
  }
}

} // namespace HWY_NAMESPACE
} // namespace cpu
} // namespace strider
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strider {
namespace cpu {

HWY_EXPORT(PlaneSumImpl);
HWY_EXPORT(RowsSumImpl);
HWY_EXPORT(NormPlaneImpl);
HWY_EXPORT(NormRowsImpl);

void runInstanceNorm(bool ChannelsLast, int64_t Batch, int64_t Channels,
                     int64_t Pixels, const float *X, const float *Scale,
                     const float *Bias, float Eps, float *Y, int Threads) {
  const int64_t C = Channels, Planes = Batch * Channels;
  if (Planes == 0 || Pixels == 0)
    return;
  std::vector<double> Mean(static_cast<size_t>(Planes)),
      Var(static_cast<size_t>(Planes));
  if (ChannelsLast) {
    // Blocks of about 16K elements; partial sums per (image, block, channel).
    const int64_t PB = std::max<int64_t>(32, (16384 + C - 1) / C);
    const int64_t NB = (Pixels + PB - 1) / PB;
    const int64_t CP = (C + 63) / 64 * 64;
    std::vector<double> Partial(size_t(Batch * NB * C));
    std::vector<float> Zeros(size_t(CP), 0.0f);
    std::vector<float> Shifts(size_t(Batch * CP), 0.0f);
    auto Pass = [&](bool Square) {
      parallelFor(Batch * NB, Threads, [&](int64_t Item) {
        const int64_t N = Item / NB, B = Item % NB;
        const int64_t P0 = B * PB, Rows = std::min(PB, Pixels - P0);
        double *Acc = Partial.data() + Item * C;
        std::fill(Acc, Acc + C, 0.0);
        AlignedFloats Tmp = allocateFloats(size_t(CP));
        HWY_DYNAMIC_DISPATCH(RowsSumImpl)
        (X + (N * Pixels + P0) * C, Rows, C,
         Square ? Shifts.data() + N * CP : Zeros.data(), Square, Tmp.get(),
         Acc);
      });
    };
    auto Reduce = [&](std::vector<double> &Out) {
      for (int64_t N = 0; N < Batch; ++N)
        for (int64_t Ch = 0; Ch < C; ++Ch) {
          double S = 0;
          for (int64_t B = 0; B < NB; ++B)
            S += Partial[size_t((N * NB + B) * C + Ch)];
          Out[size_t(N * C + Ch)] = S / double(Pixels);
        }
    };
    Pass(false);
    Reduce(Mean);
    for (int64_t N = 0; N < Batch; ++N)
      for (int64_t Ch = 0; Ch < C; ++Ch)
        Shifts[size_t(N * CP + Ch)] = float(Mean[size_t(N * C + Ch)]);
    Pass(true);
    Reduce(Var);
    // Per image: the mean, a = scale / std, b = bias, padded rows.
    std::vector<float> MeanF(size_t(Batch * CP)), AF(MeanF.size()),
        BF(MeanF.size());
    for (int64_t N = 0; N < Batch; ++N)
      for (int64_t Ch = 0; Ch < CP; ++Ch) {
        const size_t I = size_t(N * CP + Ch);
        if (Ch >= C) {
          MeanF[I] = AF[I] = BF[I] = 0.0f;
          continue;
        }
        const size_t S = size_t(N * C + Ch);
        MeanF[I] = Shifts[I];
        AF[I] = float(double(Scale[Ch]) / std::sqrt(Var[S] + double(Eps)));
        BF[I] = Bias[Ch];
      }
    parallelFor(Batch * NB, Threads, [&](int64_t Item) {
      const int64_t N = Item / NB, B = Item % NB;
      const int64_t P0 = B * PB, Rows = std::min(PB, Pixels - P0);
      const int64_t Off = (N * Pixels + P0) * C;
      HWY_DYNAMIC_DISPATCH(NormRowsImpl)
      (X + Off, Rows, C, MeanF.data() + N * CP, AF.data() + N * CP,
       BF.data() + N * CP, Y + Off);
    });
    return;
  }

  // Channels-first: contiguous planes cut into blocks.
  const int64_t PB = 16384, NB = (Pixels + PB - 1) / PB;
  std::vector<double> Partial(size_t(Planes * NB));
  std::vector<float> MeanF(static_cast<size_t>(Planes));
  auto Pass = [&](bool Square) {
    parallelFor(Planes * NB, Threads, [&](int64_t Item) {
      const int64_t Plane = Item / NB, B = Item % NB;
      const int64_t P0 = B * PB;
      Partial[size_t(Item)] = HWY_DYNAMIC_DISPATCH(PlaneSumImpl)(
          X + Plane * Pixels + P0, std::min(PB, Pixels - P0),
          Square ? MeanF[size_t(Plane)] : 0.0f, Square);
    });
  };
  auto Reduce = [&](std::vector<double> &Out) {
    for (int64_t Plane = 0; Plane < Planes; ++Plane) {
      double S = 0;
      for (int64_t B = 0; B < NB; ++B)
        S += Partial[size_t(Plane * NB + B)];
      Out[size_t(Plane)] = S / double(Pixels);
    }
  };
  Pass(false);
  Reduce(Mean);
  for (int64_t Plane = 0; Plane < Planes; ++Plane)
    MeanF[size_t(Plane)] = float(Mean[size_t(Plane)]);
  Pass(true);
  Reduce(Var);
  std::vector<float> AF(static_cast<size_t>(Planes));
  for (int64_t Plane = 0; Plane < Planes; ++Plane)
    AF[size_t(Plane)] = float(double(Scale[Plane % C]) /
                              std::sqrt(Var[size_t(Plane)] + double(Eps)));
  parallelFor(Planes * NB, Threads, [&](int64_t Item) {
    const int64_t Plane = Item / NB, B = Item % NB;
    const int64_t Off = Plane * Pixels + B * PB;
    HWY_DYNAMIC_DISPATCH(NormPlaneImpl)
    (X + Off, std::min(PB, Pixels - B * PB), MeanF[size_t(Plane)],
     AF[size_t(Plane)], Bias[Plane % C], Y + Off);
  });
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
