//===- ReductionKernels.cpp - Softmax and reductions along dims -----------===//
//
// Both see a tensor as [Outer][Len][Inner] in physical order, the reduced
// dims (one for Softmax, any run of physically adjacent ones for Reduce*)
// in the middle. With Inner > 1 (e.g. Softmax over the channels of NCHW,
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

#include <cmath>
#include <limits>

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

/// Reduction of one outer slice over Len: Inner results.
void ReduceSliceImpl(const float *X, float *Y, int64_t Len, int64_t Inner,
                     int Kind) {
  const hn::ScalableTag<float> d;
  const int64_t L = int64_t(hn::Lanes(d));
  const bool Max = Kind == 1;
  const float Scale = Kind == 2 ? 1.0f / float(Len) : 1.0f;
  const float Init = Max ? -std::numeric_limits<float>::infinity() : 0.0f;
  if (Inner == 1) {
    auto Acc = hn::Set(d, Init);
    int64_t I = 0;
    for (; I + L <= Len; I += L)
      Acc = Max ? hn::Max(Acc, hn::LoadU(d, X + I))
                : hn::Add(Acc, hn::LoadU(d, X + I));
    float R =
        hn::GetLane(Max ? hn::MaxOfLanes(d, Acc) : hn::SumOfLanes(d, Acc));
    for (; I < Len; ++I)
      R = Max ? std::max(R, X[I]) : R + X[I];
    Y[0] = R * Scale;
    return;
  }
  for (int64_t J = 0; J < Inner; J += L) {
    const size_t Valid = size_t(std::min<int64_t>(L, Inner - J));
    auto Acc = hn::Set(d, Init);
    for (int64_t I = 0; I < Len; ++I) {
      const float *P = X + I * Inner + J;
      const auto V = loadTail(d, P, Valid);
      Acc = Max ? hn::Max(Acc, V) : hn::Add(Acc, V);
    }
    Acc = hn::Mul(Acc, hn::Set(d, Scale));
    storeTail(d, Acc, Y + J, Valid);
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
    (X + O * Len * Inner, Y + O * Inner, Len, Inner, int(Kind));
  });
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
