//===- ReductionKernels.cpp - Softmax, LRN and reductions along dims ------===//
//
// All see a tensor as [Outer][Len][Inner] in physical order, the reduced
// dims in the middle: one for Softmax and ArgMax/ArgMin, the channels for
// LRN, any run of physically adjacent ones for ReduceSum/Mean/Max/Min/Prod/
// SumSquare/L2. With Inner > 1 (e.g. Softmax over the channels of NCHW,
// ReduceMean over H, W of NHWC) vectors run along Inner and the loop over
// Len is strided; with Inner == 1 a row of Len contiguous elements is
// reduced across lanes.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ReductionKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"
#include "Parallel.h"
#include "SimdTail-inl.h"

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

/// Softmax (or LogSoftmax) of one outer slice: Len x Inner elements.
void SoftmaxSliceImpl(const float *X, float *Y, int64_t Len, int64_t Inner,
                      bool Log) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  if (Inner == 1) {
    // One contiguous row.
    auto MaxV = hn::Set(d, -std::numeric_limits<float>::infinity());
    int64_t I = 0;
    for (; I + L <= Len; I += L)
      MaxV = hn::Max(MaxV, hn::LoadU(d, X + I));
    float Max = hn::GetLane(hn::MaxOfLanes(d, MaxV));
    for (; I < Len; ++I)
      Max = std::max(Max, X[I]);
    const auto MV = hn::Set(d, Max);
    auto SumV = hn::Zero(d);
    I = 0;
    for (; I + L <= Len; I += L) {
      auto E = hn::Exp(d, hn::Sub(hn::LoadU(d, X + I), MV));
      if (!Log)
        hn::StoreU(E, d, Y + I);
      SumV = hn::Add(SumV, E);
    }
    float Sum = hn::GetLane(hn::SumOfLanes(d, SumV));
    for (; I < Len; ++I) {
      float E = std::exp(X[I] - Max);
      if (!Log)
        Y[I] = E;
      Sum += E;
    }
    if (Log) {
      const float Shift = Max + std::log(Sum);
      const auto SV = hn::Set(d, Shift);
      I = 0;
      for (; I + L <= Len; I += L)
        hn::StoreU(hn::Sub(hn::LoadU(d, X + I), SV), d, Y + I);
      for (; I < Len; ++I)
        Y[I] = X[I] - Shift;
      return;
    }
    const auto Inv = hn::Set(d, 1.0f / Sum);
    I = 0;
    for (; I + L <= Len; I += L)
      hn::StoreU(hn::Mul(hn::LoadU(d, Y + I), Inv), d, Y + I);
    for (; I < Len; ++I)
      Y[I] *= 1.0f / Sum;
    return;
  }
  // Vectors along Inner, strided over Len.
  for (int64_t J = 0; J < Inner; J += L) {
    const size_t Valid = size_t(std::min<int64_t>(L, Inner - J));
    auto Load = [&](const float *P) { return loadTail(d, P, Valid); };
    auto Store = [&](hn::Vec<decltype(d)> V, float *P) {
      storeTail(d, V, P, Valid);
    };
    auto MaxV = hn::Set(d, -std::numeric_limits<float>::infinity());
    for (int64_t I = 0; I < Len; ++I)
      MaxV = hn::Max(MaxV, Load(X + I * Inner + J));
    auto SumV = hn::Zero(d);
    for (int64_t I = 0; I < Len; ++I)
      SumV = hn::Add(SumV, hn::Exp(d, hn::Sub(Load(X + I * Inner + J), MaxV)));
    if (Log) {
      // log(sum) lane by lane: log of the masked-out lanes is never stored.
      const auto Shift = hn::Add(MaxV, hn::Log(d, SumV));
      for (int64_t I = 0; I < Len; ++I)
        Store(hn::Sub(Load(X + I * Inner + J), Shift), Y + I * Inner + J);
    } else {
      const auto Inv = hn::Div(hn::Set(d, 1.0f), SumV);
      for (int64_t I = 0; I < Len; ++I)
        Store(hn::Mul(hn::Exp(d, hn::Sub(Load(X + I * Inner + J), MaxV)), Inv),
              Y + I * Inner + J);
    }
  }
}

/// LayerNormalization of one contiguous row of Len elements.
void LayerNormRowImpl(const float *X, float *Y, int64_t Len, const float *Gamma,
                      const float *Beta, float Eps) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  auto SumV = hn::Zero(d);
  int64_t I = 0;
  for (; I + L <= Len; I += L)
    SumV = hn::Add(SumV, hn::LoadU(d, X + I));
  double Sum = hn::GetLane(hn::SumOfLanes(d, SumV));
  for (; I < Len; ++I)
    Sum += X[I];
  const float Mean = float(Sum / double(Len));
  const auto MeanV = hn::Set(d, Mean);
  auto SqV = hn::Zero(d);
  I = 0;
  for (; I + L <= Len; I += L) {
    const auto D = hn::Sub(hn::LoadU(d, X + I), MeanV);
    SqV = hn::MulAdd(D, D, SqV);
  }
  double Sq = hn::GetLane(hn::SumOfLanes(d, SqV));
  for (; I < Len; ++I)
    Sq += double(X[I] - Mean) * double(X[I] - Mean);
  const float InvStd = float(1.0 / std::sqrt(Sq / double(Len) + double(Eps)));
  const auto InvV = hn::Set(d, InvStd);
  I = 0;
  for (; I + L <= Len; I += L) {
    const auto N = hn::Mul(hn::Sub(hn::LoadU(d, X + I), MeanV), InvV);
    hn::StoreU(hn::MulAdd(N, hn::LoadU(d, Gamma + I), hn::LoadU(d, Beta + I)),
               d, Y + I);
  }
  for (; I < Len; ++I)
    Y[I] = (X[I] - Mean) * InvStd * Gamma[I] + Beta[I];
}

/// \p Acc with one more element \p V, in vector lanes or in a float.
template <class V> HWY_INLINE V reduceStep(ReduceKind K, V Acc, V X) {
  switch (K) {
  case ReduceKind::Max:
    return hn::Max(Acc, X);
  case ReduceKind::Min:
    return hn::Min(Acc, X);
  case ReduceKind::Prod:
    return hn::Mul(Acc, X);
  case ReduceKind::SumSquare:
  case ReduceKind::L2:
    return hn::MulAdd(X, X, Acc);
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    break;
  }
  return hn::Add(Acc, X);
}
HWY_INLINE float reduceStep(ReduceKind K, float Acc, float X) {
  switch (K) {
  case ReduceKind::Max:
    return std::max(Acc, X);
  case ReduceKind::Min:
    return std::min(Acc, X);
  case ReduceKind::Prod:
    return Acc * X;
  case ReduceKind::SumSquare:
  case ReduceKind::L2:
    return Acc + X * X;
  case ReduceKind::Sum:
  case ReduceKind::Mean:
    break;
  }
  return Acc + X;
}

/// The reduction of nothing.
HWY_INLINE float reduceInit(ReduceKind K) {
  return K == ReduceKind::Max    ? -std::numeric_limits<float>::infinity()
         : K == ReduceKind::Min  ? std::numeric_limits<float>::infinity()
         : K == ReduceKind::Prod ? 1.0f
                                 : 0.0f;
}

/// The result from the reduction \p R of \p Len elements.
HWY_INLINE float reduceFinish(ReduceKind K, float R, int64_t Len) {
  return K == ReduceKind::Mean ? R * (1.0f / float(Len))
         : K == ReduceKind::L2 ? std::sqrt(R)
                               : R;
}

/// Reduction of one outer slice over Len: Inner results.
void ReduceSliceImpl(const float *X, float *Y, int64_t Len, int64_t Inner,
                     ReduceKind K) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const float Init = reduceInit(K);
  if (Inner == 1) {
    auto Acc = hn::Set(d, Init);
    int64_t I = 0;
    for (; I + L <= Len; I += L)
      Acc = reduceStep(K, Acc, hn::LoadU(d, X + I));
    // Across lanes (in lane order), then the tail.
    HWY_ALIGN float Lanes[HWY_MAX_BYTES / sizeof(float)];
    hn::Store(Acc, d, Lanes);
    const ReduceKind Across =
        K == ReduceKind::SumSquare || K == ReduceKind::L2 ? ReduceKind::Sum : K;
    float R = Lanes[0];
    for (int64_t J = 1; J < L; ++J)
      R = reduceStep(Across, R, Lanes[J]);
    for (; I < Len; ++I)
      R = reduceStep(K, R, X[I]);
    Y[0] = reduceFinish(K, R, Len);
    return;
  }
  for (int64_t J = 0; J < Inner; J += L) {
    const size_t Valid = size_t(std::min<int64_t>(L, Inner - J));
    auto Acc = hn::Set(d, Init);
    for (int64_t I = 0; I < Len; ++I)
      Acc = reduceStep(K, Acc, loadTail(d, X + I * Inner + J, Valid));
    if (K == ReduceKind::Mean)
      Acc = hn::Mul(Acc, hn::Set(d, 1.0f / float(Len)));
    else if (K == ReduceKind::L2)
      Acc = hn::Sqrt(Acc);
    storeTail(d, Acc, Y + J, Valid);
  }
}

/// Whether \p X replaces \p Best as the ArgMax (\p Max) or ArgMin: strictly
/// better keeps the first of equal values, better or equal the last.
template <class V> HWY_INLINE auto argBetter(bool Max, bool Last, V X, V Best) {
  return Max ? (Last ? hn::Ge(X, Best) : hn::Gt(X, Best))
             : (Last ? hn::Le(X, Best) : hn::Lt(X, Best));
}
HWY_INLINE bool argBetter(bool Max, bool Last, float X, float Best) {
  return Max ? (Last ? X >= Best : X > Best) : (Last ? X <= Best : X < Best);
}

/// ArgMax/ArgMin of one outer slice over Len: Inner indices.
void ArgReduceSliceImpl(const float *X, int64_t *Y, int64_t Len, int64_t Inner,
                        bool Max, bool Last) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t L = int64_t(hn::Lanes(d));
  HWY_ALIGN float Vals[HWY_MAX_BYTES / sizeof(float)];
  HWY_ALIGN int32_t Idx[HWY_MAX_BYTES / sizeof(float)];
  if (Inner == 1) {
    // Lane j keeps the best of elements j, j + L, ...; then the lanes
    // (equal values: the lower index, or the higher with Last), then the
    // tail.
    float Best = X[0];
    int64_t BestI = 0, I = 1;
    if (Len >= L) {
      auto BestV = hn::LoadU(d, X);
      auto BestIV = hn::Iota(di, 0);
      for (I = L; I + L <= Len; I += L) {
        const auto V = hn::LoadU(d, X + I);
        const auto M = argBetter(Max, Last, V, BestV);
        BestV = hn::IfThenElse(M, V, BestV);
        BestIV = hn::IfThenElse(hn::RebindMask(di, M), hn::Iota(di, int32_t(I)),
                                BestIV);
      }
      hn::Store(BestV, d, Vals);
      hn::Store(BestIV, di, Idx);
      Best = Vals[0];
      BestI = Idx[0];
      for (int64_t J = 1; J < L; ++J) {
        const bool Equal = Vals[J] == Best;
        if ((!Equal && argBetter(Max, false, Vals[J], Best)) ||
            (Equal && (Last ? Idx[J] > BestI : Idx[J] < BestI))) {
          Best = Vals[J];
          BestI = Idx[J];
        }
      }
    }
    for (; I < Len; ++I)
      if (argBetter(Max, Last, X[I], Best)) {
        Best = X[I];
        BestI = I;
      }
    Y[0] = BestI;
    return;
  }
  for (int64_t J = 0; J < Inner; J += L) {
    const size_t Valid = size_t(std::min<int64_t>(L, Inner - J));
    auto BestV = loadTail(d, X + J, Valid);
    auto BestIV = hn::Zero(di);
    for (int64_t I = 1; I < Len; ++I) {
      const auto V = loadTail(d, X + I * Inner + J, Valid);
      const auto M = argBetter(Max, Last, V, BestV);
      BestV = hn::IfThenElse(M, V, BestV);
      BestIV = hn::IfThenElse(hn::RebindMask(di, M), hn::Set(di, int32_t(I)),
                              BestIV);
    }
    hn::Store(BestIV, di, Idx);
    for (size_t K = 0; K < Valid; ++K)
      Y[J + int64_t(K)] = Idx[K];
  }
}

/// Y = X * (Bias + Alpha / Size * SqSum)^-Beta, lane by lane.
template <class D>
HWY_INLINE hn::Vec<D> lrnScale(D d, const LRNParams &P, hn::Vec<D> X,
                               hn::Vec<D> SqSum) {
  const auto Den = hn::MulAdd(hn::Set(d, P.Alpha / float(P.Size)), SqSum,
                              hn::Set(d, P.Bias));
  return hn::Mul(X, hn::Exp(d, hn::Mul(hn::Set(d, -P.Beta), hn::Log(d, Den))));
}

/// Rows [R0, R1) of contiguous channels (Inner == 1): the squares go into
/// a zero-padded row, so that each vector of channels sums Size shifted
/// loads of it.
void LRNRowsImpl(const LRNParams &P, const float *X, float *Y, int64_t R0,
                 int64_t R1) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const int64_t Before = (P.Size - 1) / 2;
  std::vector<float> Sq(size_t(P.Len + P.Size - 1 + L), 0.0f);
  float *SqRow = Sq.data() + Before;
  for (int64_t R = R0; R < R1; ++R) {
    const float *XR = X + R * P.Len;
    float *YR = Y + R * P.Len;
    for (int64_t C0 = 0; C0 < P.Len; C0 += L) {
      const size_t Valid = size_t(std::min<int64_t>(L, P.Len - C0));
      const auto V = loadTail(d, XR + C0, Valid);
      storeTail(d, hn::Mul(V, V), SqRow + C0, Valid);
    }
    for (int64_t C0 = 0; C0 < P.Len; C0 += L) {
      const size_t Valid = size_t(std::min<int64_t>(L, P.Len - C0));
      auto Sum = hn::Zero(d);
      for (int64_t O = 0; O < P.Size; ++O)
        Sum = hn::Add(Sum, hn::LoadU(d, Sq.data() + C0 + O));
      storeTail(d, lrnScale(d, P, loadTail(d, XR + C0, Valid), Sum), YR + C0,
                Valid);
    }
  }
}

/// Inner positions [J0, J1) of outer slice \p O (Inner > 1): vectors along
/// Inner, the channel window summed with strided loads.
void LRNStridedImpl(const LRNParams &P, const float *X, float *Y, int64_t O,
                    int64_t J0, int64_t J1) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const int64_t Before = (P.Size - 1) / 2, After = P.Size - 1 - Before;
  X += O * P.Len * P.Inner;
  Y += O * P.Len * P.Inner;
  for (int64_t C = 0; C < P.Len; ++C) {
    const int64_t First = std::max<int64_t>(0, C - Before),
                  Last = std::min(P.Len - 1, C + After);
    for (int64_t J = J0; J < J1; J += L) {
      const size_t Valid = size_t(std::min<int64_t>(L, J1 - J));
      auto Sum = hn::Zero(d);
      for (int64_t I = First; I <= Last; ++I) {
        const auto V = loadTail(d, X + I * P.Inner + J, Valid);
        Sum = hn::MulAdd(V, V, Sum);
      }
      storeTail(d, lrnScale(d, P, loadTail(d, X + C * P.Inner + J, Valid), Sum),
                Y + C * P.Inner + J, Valid);
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

HWY_EXPORT(SoftmaxSliceImpl);
HWY_EXPORT(ReduceSliceImpl);
HWY_EXPORT(LayerNormRowImpl);
HWY_EXPORT(ArgReduceSliceImpl);
HWY_EXPORT(LRNRowsImpl);
HWY_EXPORT(LRNStridedImpl);

void runArgReduce(bool Max, bool Last, int64_t Outer, int64_t Len,
                  int64_t Inner, const float *X, int64_t *Y, int Threads) {
  parallelFor(Outer, Threads, [&](int64_t O) {
    HWY_DYNAMIC_DISPATCH(ArgReduceSliceImpl)
    (X + O * Len * Inner, Y + O * Inner, Len, Inner, Max, Last);
  });
}

void runLRN(const LRNParams &P, const float *X, float *Y, int Threads) {
  if (P.Inner == 1) {
    const int64_t Block = 16;
    parallelFor((P.Outer + Block - 1) / Block, Threads, [&](int64_t B) {
      HWY_DYNAMIC_DISPATCH(LRNRowsImpl)
      (P, X, Y, B * Block, std::min(P.Outer, (B + 1) * Block));
    });
    return;
  }
  const int64_t Block = 64, Blocks = (P.Inner + Block - 1) / Block;
  parallelFor(P.Outer * Blocks, Threads, [&](int64_t I) {
    const int64_t J = (I % Blocks) * Block;
    HWY_DYNAMIC_DISPATCH(LRNStridedImpl)
    (P, X, Y, I / Blocks, J, std::min(P.Inner, J + Block));
  });
}

void runSoftmax(int64_t Outer, int64_t Len, int64_t Inner, bool Log,
                const float *X, float *Y, int Threads) {
  parallelFor(Outer, Threads, [&](int64_t O) {
    HWY_DYNAMIC_DISPATCH(SoftmaxSliceImpl)
    (X + O * Len * Inner, Y + O * Len * Inner, Len, Inner, Log);
  });
}

void runLayerNorm(int64_t Rows, int64_t Len, const float *X, const float *Gamma,
                  const float *Beta, float Eps, float *Y, int Threads) {
  // Items of about 16k elements: short rows go several to an item.
  const int64_t PerItem =
      std::max<int64_t>(1, 16384 / std::max<int64_t>(Len, 1));
  const int64_t Items = (Rows + PerItem - 1) / PerItem;
  parallelFor(Items, Threads, [&](int64_t It) {
    for (int64_t R = It * PerItem, E = std::min(Rows, R + PerItem); R < E; ++R)
      HWY_DYNAMIC_DISPATCH(LayerNormRowImpl)
    (X + R * Len, Y + R * Len, Len, Gamma, Beta, Eps);
  });
}

void runReduce(ReduceKind Kind, int64_t Outer, int64_t Len, int64_t Inner,
               const float *X, float *Y, int Threads) {
  parallelFor(Outer, Threads, [&](int64_t O) {
    HWY_DYNAMIC_DISPATCH(ReduceSliceImpl)
    (X + O * Len * Inner, Y + O * Inner, Len, Inner, Kind);
  });
}

namespace {

/// A + B, wrapping for integers.
template <typename T> T addWrapping(T A, T B) {
  if constexpr (std::is_integral_v<T>)
    return T(std::make_unsigned_t<T>(A) + std::make_unsigned_t<T>(B));
  else
    return A + B;
}

/// The running sums of \p Outer slices of Len x Inner elements along Len.
/// Each Inner-wide row adds the previous row of Y to its own X: a loop the
/// compiler vectorizes along Inner.
template <typename T>
void cumSumTyped(int64_t Outer, int64_t Len, int64_t Inner, bool Exclusive,
                 bool Reverse, const T *X, T *Y, int Threads) {
  parallelFor(Outer, Threads, [&](int64_t O) {
    const T *XS = X + O * Len * Inner;
    T *YS = Y + O * Len * Inner;
    for (int64_t K = 0; K < Len; ++K) {
      const int64_t Row = Reverse ? Len - 1 - K : K;
      const int64_t Prev = Reverse ? Row + 1 : Row - 1;
      T *YR = YS + Row * Inner;
      if (K == 0) {
        for (int64_t I = 0; I < Inner; ++I)
          YR[I] = Exclusive ? T(0) : XS[Row * Inner + I];
        continue;
      }
      // Exclusive: the previous sum plus the previous element.
      const T *XR = XS + (Exclusive ? Prev : Row) * Inner;
      const T *YP = YS + Prev * Inner;
      for (int64_t I = 0; I < Inner; ++I)
        YR[I] = addWrapping(YP[I], XR[I]);
    }
  });
}

} // namespace

void runCumSum(CumSumType Type, int64_t Outer, int64_t Len, int64_t Inner,
               bool Exclusive, bool Reverse, const void *X, void *Y,
               int Threads) {
  switch (Type) {
  case CumSumType::F32:
    return cumSumTyped(Outer, Len, Inner, Exclusive, Reverse,
                       static_cast<const float *>(X), static_cast<float *>(Y),
                       Threads);
  case CumSumType::F64:
    return cumSumTyped(Outer, Len, Inner, Exclusive, Reverse,
                       static_cast<const double *>(X), static_cast<double *>(Y),
                       Threads);
  case CumSumType::I32:
    return cumSumTyped(Outer, Len, Inner, Exclusive, Reverse,
                       static_cast<const int32_t *>(X),
                       static_cast<int32_t *>(Y), Threads);
  case CumSumType::I64:
    return cumSumTyped(Outer, Len, Inner, Exclusive, Reverse,
                       static_cast<const int64_t *>(X),
                       static_cast<int64_t *>(Y), Threads);
  }
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
