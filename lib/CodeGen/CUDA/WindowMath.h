//===- WindowMath.h - Pooling, normalization and reduction steps *- C++ -*-===//
//
// Private to lib/CodeGen/CUDA. Per-output math of the windowed and
// reducing kernels: pooling windows, batch statistics, reduction steps,
// LRN.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_WINDOWMATH_H
#define STRIDER_LIB_CODEGEN_CUDA_WINDOWMATH_H

#include "ElementMath.h"

namespace strider {
namespace cuda {

/// The taps of one axis of a pooling window: taps [Lo, Hi) read the
/// input, and an average counts Counted of them (see PoolParams).
struct PoolTaps {
  int64_t Lo = 0, Hi = 0, Counted = 0;
};

/// ceil(\p A / \p B) for \p B > 0 and any sign of \p A.
STRIDER_HOST_DEVICE int64_t ceilDivSigned(int64_t A, int64_t B) {
  return A >= 0 ? (A + B - 1) / B : -((-A) / B);
}

/// The taps of output position \p O along an axis of input size \p In.
STRIDER_HOST_DEVICE PoolTaps getPoolTaps(int64_t O, int64_t In, int64_t Kernel,
                                         int64_t Stride, int64_t Dilation,
                                         int64_t PadBegin, int64_t PadEnd,
                                         bool CountPad) {
  const int64_t Base = O * Stride - PadBegin;
  // The first tap at a position >= 0, the first at a position >= In, and
  // the first at a position >= In + PadEnd, each clamped to [0, Kernel].
  auto FirstAtOrAbove = [&](int64_t Pos) {
    const int64_t K = ceilDivSigned(Pos - Base, Dilation);
    return K < 0 ? int64_t(0) : (K > Kernel ? Kernel : K);
  };
  PoolTaps T;
  T.Lo = FirstAtOrAbove(0);
  T.Hi = FirstAtOrAbove(In);
  if (T.Hi < T.Lo)
    T.Hi = T.Lo;
  T.Counted = CountPad ? FirstAtOrAbove(In + PadEnd) : T.Hi - T.Lo;
  return T;
}

/// The average of \p Sum over \p Count elements; NaN when there are none.
STRIDER_HOST_DEVICE float getAverage(float Sum, int64_t Count) {
  return Count ? Sum / float(Count) : nanf("");
}

/// One output element of a pooling: its value and, for MaxPool, ONNX's
/// index of the maximum (-1 for a window with nothing to read).
struct PoolResult {
  float Value = 0.0f;
  int64_t Index = -1;
};

/// Output element \p I (Y dense in \p Q's channel order) of the pooling
/// \p Q, normalized to 3 spatial dims; \p Load(Off) reads X's element at
/// offset Off as a float. MaxPool keeps the first tap in window order and
/// then only greater values (a NaN in first place stays, later ones are
/// passed over, as in the reference); its index counts in the logical
/// NCHW input, the spatial dims row-major or with \p Q.IndicesColumnMajor
/// column-major (ONNX storage_order 1).
template <typename LoadFn>
STRIDER_HOST_DEVICE PoolResult evalPool(const PoolParams &Q, int64_t I,
                                        LoadFn Load) {
  int64_t Rest = I, C = 0, O[3];
  if (Q.ChannelsLast) {
    C = Rest % Q.C;
    Rest /= Q.C;
  }
  for (int A = 2; A >= 0; --A) {
    O[A] = Rest % Q.Out[A];
    Rest /= Q.Out[A];
  }
  if (!Q.ChannelsLast) {
    C = Rest % Q.C;
    Rest /= Q.C;
  }
  const int64_t N = Rest;
  // Element strides of X's spatial dims and the offset of (n, c).
  const int64_t Pixels = Q.In[0] * Q.In[1] * Q.In[2];
  const int64_t Unit = Q.ChannelsLast ? Q.C : 1;
  const int64_t Str[3] = {Q.In[1] * Q.In[2] * Unit, Q.In[2] * Unit, Unit};
  const int64_t Base =
      Q.ChannelsLast ? N * Pixels * Q.C + C : (N * Q.C + C) * Pixels;
  PoolTaps T[3];
  int64_t First[3];
  for (int A = 0; A < 3; ++A) {
    T[A] = getPoolTaps(O[A], Q.In[A], Q.Kernel[A], Q.Stride[A], Q.Dilation[A],
                       Q.PadBegin[A], Q.PadEnd[A], Q.CountIncludePad);
    First[A] = O[A] * Q.Stride[A] - Q.PadBegin[A];
  }
  PoolResult R;
  float Acc = Q.Max ? -INFINITY : 0.0f;
  bool Any = false;
  int64_t Best[3] = {0, 0, 0};
  for (int64_t K0 = T[0].Lo; K0 < T[0].Hi; ++K0) {
    const int64_t P0 = First[0] + K0 * Q.Dilation[0];
    for (int64_t K1 = T[1].Lo; K1 < T[1].Hi; ++K1) {
      const int64_t P1 = First[1] + K1 * Q.Dilation[1];
      for (int64_t K2 = T[2].Lo; K2 < T[2].Hi; ++K2) {
        const int64_t P2 = First[2] + K2 * Q.Dilation[2];
        const float V = Load(Base + P0 * Str[0] + P1 * Str[1] + P2 * Str[2]);
        if (!Q.Max) {
          Acc += V;
        } else if (!Any || V > Acc) {
          Acc = V;
          Best[0] = P0;
          Best[1] = P1;
          Best[2] = P2;
        }
        Any = true;
      }
    }
  }
  if (!Q.Max) {
    R.Value = getAverage(Acc, T[0].Counted * T[1].Counted * T[2].Counted);
    return R;
  }
  R.Value = Acc;
  if (Any) {
    const int64_t Spatial =
        Q.IndicesColumnMajor
            ? Best[0] + Q.In[0] * (Best[1] + Q.In[1] * Best[2])
            : (Best[0] * Q.In[1] + Best[1]) * Q.In[2] + Best[2];
    R.Index = (N * Q.C + C) * Pixels + Spatial;
  }
  return R;
}

/// Where element \p K (of N x Pixels, pixels inner) of channel \p C lies
/// in X of a BatchStats step.
STRIDER_HOST_DEVICE int64_t getBatchStatsOffset(const BatchStatsParams &P,
                                                int64_t C, int64_t K) {
  const int64_t N = K / P.Pixels, Px = K % P.Pixels;
  return P.ChannelsLast ? (N * P.Pixels + Px) * P.C + C
                        : (N * P.C + C) * P.Pixels + Px;
}

/// Channel \p C's results of a BatchStats step (see BatchStatsParams),
/// given the batch's \p Mean and biased \p Var.
STRIDER_HOST_DEVICE void
finishBatchStats(const BatchStatsParams &P, int64_t C, double Mean, double Var,
                 const float *Gamma, const float *Beta, const float *InMean,
                 const float *InVar, float *Scale, float *Shift, float *RunMean,
                 float *RunVar) {
  const double S = double(Gamma[C]) / sqrt(Var + double(P.Epsilon));
  Scale[C] = float(S);
  Shift[C] = float(double(Beta[C]) - Mean * S);
  const double M = P.Momentum;
  if (RunMean)
    RunMean[C] = float(double(InMean[C]) * M + Mean * (1 - M));
  if (RunVar)
    RunVar[C] = float(double(InVar[C]) * M + Var * (1 - M));
}

/// What a reduction of nothing gives, before finishReduce.
STRIDER_HOST_DEVICE float getReduceInit(ReduceParams::Kind K) {
  return K == ReduceParams::Max    ? -INFINITY
         : K == ReduceParams::Min  ? INFINITY
         : K == ReduceParams::Prod ? 1.0f
                                   : 0.0f;
}
/// An element as it enters the reduction (squared for L2 and SumSquare).
STRIDER_HOST_DEVICE float mapReduce(ReduceParams::Kind K, float V) {
  return K == ReduceParams::L2 || K == ReduceParams::SumSquare ? V * V : V;
}
/// Two partial reductions (or one and a mapped element) combined.
STRIDER_HOST_DEVICE float combineReduce(ReduceParams::Kind K, float A,
                                        float B) {
  switch (K) {
  case ReduceParams::Max:
    return fmaxf(A, B);
  case ReduceParams::Min:
    return fminf(A, B);
  case ReduceParams::Prod:
    return A * B;
  default:
    return A + B;
  }
}
/// The result from the combined value of \p Count elements.
STRIDER_HOST_DEVICE float finishReduce(ReduceParams::Kind K, float Acc,
                                       int64_t Count) {
  if (K == ReduceParams::Mean)
    return getAverage(Acc, Count);
  if (K == ReduceParams::L2)
    return sqrtf(Acc);
  return Acc;
}

/// The channels [Lo, Hi) an LRN window around channel \p C sums.
struct LrnWindow {
  int64_t Lo, Hi;
};
STRIDER_HOST_DEVICE LrnWindow getLrnWindow(const LrnParams &P, int64_t C) {
  const int64_t Lo = C - (P.Size - 1) / 2, Hi = Lo + P.Size;
  return {Lo < 0 ? 0 : Lo, Hi > P.Len ? P.Len : Hi};
}
/// LRN's output for input \p X whose window's squares sum to \p SqSum.
STRIDER_HOST_DEVICE float lrnScale(const LrnParams &P, float X, float SqSum) {
  return X * powf(P.Bias + P.Alpha / float(P.Size) * SqSum, -P.Beta);
}

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_WINDOWMATH_H
