//===- RecurrentKernels.cpp - LSTM and GRU gate steps ---------------------===//
//
// The elementwise half of one LSTM or GRU step for one batch entry: the
// gate pre-activations (input projection plus recurrent product) go
// through their nonlinearities, with peepholes and clipping, and update the
// states, a vector of hidden units at a time.
//
//===----------------------------------------------------------------------===//

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "RecurrentKernels.cpp"
#include "hwy/foreach_target.h" // IWYU pragma: keep

#include "Kernels.h"
#include "SimdActivation-inl.h"
#include "SimdTail-inl.h"

#include "hwy/highway.h"

#include <algorithm>
#include <cmath>

HWY_BEFORE_NAMESPACE();
namespace strider {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

void LstmGatesImpl(const LstmGates &A) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t H = A.Hidden, L = int64_t(hn::Lanes(d));
  const bool DoClip = A.Clip > 0;
  const V Lo = hn::Set(d, -A.Clip), Hi = hn::Set(d, A.Clip);
  const V One = hn::Set(d, 1.0f);
  auto Clip = [&](V X) { return DoClip ? hn::Min(hn::Max(X, Lo), Hi) : X; };
  // Gate order i, o, f, c; peepholes i, o, f.
  auto Step = [&](int64_t J, auto Load, auto Store) {
    const V CPrev = Load(A.Cell + J);
    V PI = hn::Add(Load(A.Pre + J), Load(A.Rec + J));
    V PO = hn::Add(Load(A.Pre + H + J), Load(A.Rec + H + J));
    V PF = hn::Add(Load(A.Pre + 2 * H + J), Load(A.Rec + 2 * H + J));
    V PC = hn::Add(Load(A.Pre + 3 * H + J), Load(A.Rec + 3 * H + J));
    if (A.Peep) {
      PI = hn::MulAdd(Load(A.Peep + J), CPrev, PI);
      PF = hn::MulAdd(Load(A.Peep + 2 * H + J), CPrev, PF);
    }
    const V I = sigmoidVec(d, Clip(PI));
    const V F = A.InputForget ? hn::Sub(One, I) : sigmoidVec(d, Clip(PF));
    const V G = hn::Tanh(d, Clip(PC));
    const V C = hn::MulAdd(F, CPrev, hn::Mul(I, G));
    if (A.Peep)
      PO = hn::MulAdd(Load(A.Peep + H + J), C, PO);
    const V O = sigmoidVec(d, Clip(PO));
    const V Hn = hn::Mul(O, hn::Tanh(d, C));
    Store(C, A.Cell + J);
    Store(Hn, A.HiddenOut + J);
    if (A.Y)
      Store(Hn, A.Y + J);
  };
  int64_t J = 0;
  for (; J + L <= H; J += L)
    Step(
        J, [&](const float *P) { return hn::LoadU(d, P); },
        [&](V X, float *P) { hn::StoreU(X, d, P); });
  if (J < H) {
    const size_t Rest = size_t(H - J);
    Step(
        J, [&](const float *P) { return loadTail(d, P, Rest); },
        [&](V X, float *P) { storeTail(d, X, P, Rest); });
  }
}

/// Runs \p Step(J, Load, Store) over [0, N) a vector at a time, the tail
/// through partial loads and stores.
template <class D, class StepFn>
HWY_INLINE void forEachVector(D d, int64_t N, StepFn Step) {
  using V = hn::Vec<D>;
  const int64_t L = int64_t(hn::Lanes(d));
  int64_t J = 0;
  for (; J + L <= N; J += L)
    Step(
        J, [&](const float *P) { return hn::LoadU(d, P); },
        [&](V X, float *P) { hn::StoreU(X, d, P); });
  if (J < N) {
    const size_t Rest = size_t(N - J);
    Step(
        J, [&](const float *P) { return loadTail(d, P, Rest); },
        [&](V X, float *P) { storeTail(d, X, P, Rest); });
  }
}

void GruGatesImpl(const GruGates &A) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t H = A.Hidden;
  const bool DoClip = A.Clip > 0;
  const V Lo = hn::Set(d, -A.Clip), Hi = hn::Set(d, A.Clip);
  auto Clip = [&](V X) { return DoClip ? hn::Min(hn::Max(X, Lo), Hi) : X; };
  // Gate order z, r, h.
  forEachVector(d, H, [&](int64_t J, auto Load, auto Store) {
    const V Z = sigmoidVec(d, Clip(hn::Add(Load(A.Pre + J), Load(A.Rec + J))));
    V RecH = Load(A.Rec + 2 * H + J);
    if (A.RecBias) {
      const V R = sigmoidVec(
          d, Clip(hn::Add(Load(A.Pre + H + J), Load(A.Rec + H + J))));
      RecH = hn::Mul(R, hn::Add(RecH, Load(A.RecBias + J)));
    }
    const V Cand = hn::Tanh(d, Clip(hn::Add(Load(A.Pre + 2 * H + J), RecH)));
    const V Prev = Load(A.State + J);
    // (1 - z) * h + z * prev = h + z * (prev - h).
    const V Hn = hn::MulAdd(Z, hn::Sub(Prev, Cand), Cand);
    Store(Hn, A.State + J);
    if (A.Y)
      Store(Hn, A.Y + J);
  });
}

void GruResetImpl(const float *PreR, const float *RecR, const float *State,
                  float *Out, int64_t H, float ClipValue) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const bool DoClip = ClipValue > 0;
  const V Lo = hn::Set(d, -ClipValue), Hi = hn::Set(d, ClipValue);
  forEachVector(d, H, [&](int64_t J, auto Load, auto Store) {
    V X = hn::Add(Load(PreR + J), Load(RecR + J));
    if (DoClip)
      X = hn::Min(hn::Max(X, Lo), Hi);
    Store(hn::Mul(sigmoidVec(d, X), Load(State + J)), Out + J);
  });
}

} // namespace HWY_NAMESPACE
} // namespace cpu
} // namespace strider
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strider {
namespace cpu {

HWY_EXPORT(LstmGatesImpl);
HWY_EXPORT(GruGatesImpl);
HWY_EXPORT(GruResetImpl);

void runLstmGates(const LstmGates &A) {
  HWY_DYNAMIC_DISPATCH(LstmGatesImpl)(A);
}

void runGruGates(const GruGates &A) { HWY_DYNAMIC_DISPATCH(GruGatesImpl)(A); }

void runGruReset(const float *PreR, const float *RecR, const float *State,
                 float *Out, int64_t Hidden, float Clip) {
  HWY_DYNAMIC_DISPATCH(GruResetImpl)(PreR, RecR, State, Out, Hidden, Clip);
}

} // namespace cpu
} // namespace strider
#endif // HWY_ONCE
