//===- RecurrentMath.h - LSTM and GRU cells ---------------------*- C++ -*-===//
//
// Private to lib/CodeGen/CUDA. One unit of an LSTM or GRU step, sequence
// lengths, and the recurrence loop's per-thread work.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_RECURRENTMATH_H
#define STRIDER_LIB_CODEGEN_CUDA_RECURRENTMATH_H

#include "TypedMath.h"

namespace strider {
namespace cuda {

/// One LSTM unit's new cell and hidden state (ONNX's equations with the
/// default activations): gate pre-activations \p PI, \p PO, \p PF, \p PC
/// (projection plus recurrent product), the previous cell state and the
/// peephole weights (0 without peepholes).
struct LstmUnit {
  float Cell, Hidden;
};
STRIDER_HOST_DEVICE float sigmoidOf(float X) { return 1.0f / (1.0f + expf(-X)); }
STRIDER_HOST_DEVICE LstmUnit lstmUnit(float PI, float PO, float PF, float PC,
                                      float CPrev, float PeepI, float PeepO,
                                      float PeepF, float Clip,
                                      bool InputForget) {
  auto Clamp = [Clip](float X) {
    return Clip > 0 ? fminf(fmaxf(X, -Clip), Clip) : X;
  };
  const float I = sigmoidOf(Clamp(PI + PeepI * CPrev));
  const float F = InputForget ? 1.0f - I : sigmoidOf(Clamp(PF + PeepF * CPrev));
  const float G = tanhf(Clamp(PC));
  const float C = F * CPrev + I * G;
  const float O = sigmoidOf(Clamp(PO + PeepO * C));
  return {C, O * tanhf(C)};
}

/// A GRU pre-activation clipped to [-Clip, Clip] when Clip > 0.
STRIDER_HOST_DEVICE float clipGate(float X, float Clip) {
  return Clip > 0 ? fminf(fmaxf(X, -Clip), Clip) : X;
}
/// One GRU unit's new hidden state from its z pre-activation, its
/// candidate's pre-activation \p PH (reset already applied) and the
/// previous state: (1 - z) * h~ + z * prev.
STRIDER_HOST_DEVICE float gruUnit(float PZ, float PH, float Prev, float Clip) {
  const float Z = sigmoidOf(clipGate(PZ, Clip));
  const float Cand = tanhf(clipGate(PH, Clip));
  return Cand + Z * (Prev - Cand);
}

/// The time batch entry \p B of a recurrence step runs at (RecurrentStep),
/// or -1 when the step is past its sequence length; a length outside [0,
/// Seq] goes to \p Err.
STRIDER_HOST_DEVICE int64_t getStepTime(const RecurrentStep &T,
                                        const void *Lens, int64_t B,
                                        RunError *Err) {
  if (!Lens)
    return T.Backward ? T.Seq - 1 - T.Step : T.Step;
  int64_t Len = loadInt(T.LensType, Lens, B);
  if (Len < 0 || Len > T.Seq) {
    reportRunError(Err, T.PlanStep, RunError::SequenceLength, Len, T.Seq);
    Len = Len < 0 ? 0 : T.Seq;
  }
  if (T.Step >= Len)
    return -1;
  return T.Backward ? Len - 1 - T.Step : T.Step;
}

/// Unit \p I (batch entry I / Hidden, unit I % Hidden) of an LSTM step
/// (LstmCellParams).
STRIDER_HOST_DEVICE void evalLstmCell(const LstmCellParams &P, const float *Pre,
                                      const float *Rec, const float *Peep,
                                      float *Cell, float *Hidden, float *Y,
                                      const void *Lens, RunError *Err,
                                      int64_t I) {
  const int64_t H = P.Hidden, B = I / H, J = I % H;
  const RecurrentStep &T = P.Time;
  const int64_t Time = getStepTime(T, Lens, B, Err);
  if (Time < 0) {
    if (!P.HasCellState) {
      Cell[I] = 0.0f;
      Hidden[I] = 0.0f;
    }
    if (Y)
      Y[T.Step * T.YTimeStride + B * T.YBatchStride + J] = 0.0f;
    return;
  }
  const float *PreRow = Pre + Time * T.PreTimeStride + B * T.PreRowStride + J;
  float G[4];
  for (int K = 0; K < 4; ++K)
    G[K] = PreRow[K * H] + (Rec ? Rec[B * 4 * H + K * H + J] : 0.0f);
  const LstmUnit U =
      lstmUnit(G[0], G[1], G[2], G[3], P.HasCellState ? Cell[I] : 0.0f,
               Peep ? Peep[J] : 0.0f, Peep ? Peep[H + J] : 0.0f,
               Peep ? Peep[2 * H + J] : 0.0f, P.Clip, P.InputForget);
  Cell[I] = U.Cell;
  Hidden[I] = U.Hidden;
  if (Y)
    Y[Time * T.YTimeStride + B * T.YBatchStride + J] = U.Hidden;
}

/// Unit \p I (batch entry I / Hidden, unit I % Hidden) of a GRU step's
/// stage (GruCellParams).
STRIDER_HOST_DEVICE void evalGruCell(const GruCellParams &P, const float *Pre,
                                     const float *Rec, const float *RecH,
                                     const float *RecBias, float *Hidden,
                                     float *Out, const void *Lens,
                                     RunError *Err, int64_t I) {
  const int64_t H = P.Hidden, B = I / H, J = I % H;
  const RecurrentStep &T = P.Time;
  const int64_t Time = getStepTime(T, Lens, B, Err);
  if (P.Stage == GruCellParams::Reset && Time < 0) {
    Out[I] = 0.0f; // Read only by this entry's own (skipped) gates.
    return;
  }
  if (Time < 0) {
    if (!P.HasState)
      Hidden[I] = 0.0f;
    if (Out)
      Out[T.Step * T.YTimeStride + B * T.YBatchStride + J] = 0.0f;
    return;
  }
  const float *PreRow = Pre + Time * T.PreTimeStride + B * T.PreRowStride + J;
  const float *RecRow = Rec ? Rec + B * P.RecRowStride + J : nullptr;
  const float Prev = P.HasState ? Hidden[I] : 0.0f;
  auto ResetGate = [&] {
    return sigmoidOf(clipGate(PreRow[H] + (RecRow ? RecRow[H] : 0.0f), P.Clip));
  };
  if (P.Stage == GruCellParams::Reset) {
    Out[I] = ResetGate() * Prev;
    return;
  }
  float RH = 0.0f;
  if (RecH)
    RH = RecH[(P.LinearBeforeReset ? B * P.RecRowStride : B * H) + J];
  if (P.LinearBeforeReset)
    RH = ResetGate() * (RH + RecBias[J]);
  const float Hn = gruUnit(PreRow[0] + (RecRow ? RecRow[0] : 0.0f),
                           PreRow[2 * H] + RH, Prev, P.Clip);
  Hidden[I] = Hn;
  if (Out)
    Out[Time * T.YTimeStride + B * T.YBatchStride + J] = Hn;
}

/// Rows \p I, \p I + \p Step, ... of the product Y = X x M^T of X (dense
/// \p Batch x \p K) and M (row-major \p Cols x \p K) into Y (dense Batch x
/// Cols): one thread's share of a RecurrenceLoop step's recurrent
/// product, summed in order of k.
STRIDER_HOST_DEVICE void evalRowProducts(const float *X, const float *M,
                                         float *Y, int64_t Batch, int64_t Cols,
                                         int64_t K, int64_t I, int64_t Step) {
  for (; I < Batch * Cols; I += Step) {
    const float *XRow = X + (I / Cols) * K, *MRow = M + (I % Cols) * K;
    float Sum = 0.0f;
    for (int64_t J = 0; J < K; ++J)
      Sum = fmaf(XRow[J], MRow[J], Sum);
    Y[I] = Sum;
  }
}

/// What thread \p T of the \p N of a RecurrenceLoop block computes, \p Sync
/// its block's barrier (the host model: T = 0, N = 1 and no barrier).
template <typename SyncFn>
STRIDER_HOST_DEVICE void
evalRecurrenceLoop(const RecurrenceLoopParams &P, const float *Pre,
                   const float *R, const float *RH, const float *Peep,
                   const float *RecBias, float *Rec, float *RecH, float *Reset,
                   float *Cell, float *Hidden, float *Y, const void *Lens,
                   RunError *Err, int64_t T, int64_t N, SyncFn Sync) {
  const int64_t Batch = P.IsGru ? P.Gru.Batch : P.Lstm.Batch;
  const int64_t H = P.IsGru ? P.Gru.Hidden : P.Lstm.Hidden;
  const int64_t Seq = P.IsGru ? P.Gru.Time.Seq : P.Lstm.Time.Seq;
  for (int64_t S = 0; S < Seq; ++S) {
    const bool HasState = S != 0 || P.FirstHasState;
    if (HasState) {
      evalRowProducts(Hidden, R, Rec, Batch, P.RecCols, H, T, N);
      Sync();
    }
    if (!P.IsGru) {
      LstmCellParams Q = P.Lstm;
      Q.Time.Step = S;
      Q.HasCellState = S != 0 || P.Lstm.HasCellState;
      for (int64_t I = T; I < Batch * H; I += N)
        evalLstmCell(Q, Pre, HasState ? Rec : nullptr, Peep, Cell, Hidden, Y,
                     Lens, Err, I);
    } else {
      GruCellParams Q = P.Gru;
      Q.Time.Step = S;
      Q.HasState = HasState;
      if (!Q.LinearBeforeReset && HasState) {
        GruCellParams Z = Q;
        Z.Stage = GruCellParams::Reset;
        for (int64_t I = T; I < Batch * H; I += N)
          evalGruCell(Z, Pre, Rec, nullptr, nullptr, Hidden, Reset, Lens, Err,
                      I);
        Sync();
        evalRowProducts(Reset, RH, RecH, Batch, H, H, T, N);
        Sync();
      }
      const float *RecHS = Q.LinearBeforeReset ? Rec + 2 * H : RecH;
      for (int64_t I = T; I < Batch * H; I += N)
        evalGruCell(Q, Pre, HasState ? Rec : nullptr,
                    HasState ? RecHS : nullptr, RecBias, Hidden, Y, Lens, Err,
                    I);
    }
    Sync(); // The states are read whole by the next product.
  }
}

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_RECURRENTMATH_H
