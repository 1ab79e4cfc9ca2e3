//===- RecurrentKernels.cpp - Reference LSTM and GRU ----------------------===//
//
// The recurrences over logical indices in double, one direction, batch entry
// and step at a time; operands and results may be stored in any layout.
// Steps past a batch entry's sequence length leave Y zero, and Y_h / Y_c
// hold the state after its last step.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/Recurrence.h"

#include <algorithm>
#include <vector>

using namespace strider;
using namespace strider::runtime;

namespace {

/// Element (I0, I1, I2) of a rank-3 tensor.
double at3(const Tensor &T, int64_t I0, int64_t I1, int64_t I2) {
  auto S = T.getStrides();
  return T.getDouble(I0 * S[0] + I1 * S[1] + I2 * S[2]);
}

/// Element (I0, I1) of a rank-2 tensor.
double at2(const Tensor &T, int64_t I0, int64_t I1) {
  auto S = T.getStrides();
  return T.getDouble(I0 * S[0] + I1 * S[1]);
}

/// What the LSTM and GRU kernels share: operands, sizes, where the state and
/// Y entries live, clipping, and the per-entry prologue and epilogue.
struct RecurrenceRun {
  const RecurrenceAttrs &A;
  const Tensor &X, &W, &R;
  const Tensor *B, *Lens, *H0;
  Tensor *Y, *YH;
  int64_t Seq, Batch, In, H, Dirs;

  /// Element (T, Bt, K) of X in its logical order.
  double x(int64_t T, int64_t Bt, int64_t K) const {
    return A.BatchMajor ? at3(X, Bt, T, K) : at3(X, T, Bt, K);
  }
  /// Offset of (dir, batch, J) in a state tensor.
  int64_t stateOffset(const Tensor &S, int64_t D, int64_t Bt, int64_t J) const {
    return A.BatchMajor ? S.getOffset({Bt, D, J}) : S.getOffset({D, Bt, J});
  }
  double clip(double V) const {
    return A.Clip > 0 ? std::min<double>(A.Clip, std::max<double>(-A.Clip, V))
                      : V;
  }
  /// The sequence length of batch entry \p Bt.
  llvm::Expected<int64_t> getLength(const Node &N, int64_t Bt) const {
    if (!Lens)
      return Seq;
    int64_t Len = Lens->getInt(Lens->getOffset({Bt}));
    if (Len < 0 || Len > Seq)
      return makeNodeError(N, "sequence_lens entry " + llvm::Twine(Bt) +
                                  " is " + llvm::Twine(Len) +
                                  ", expected 0 to " + llvm::Twine(Seq));
    return Len;
  }
  /// Read the initial state \p Init (zero when absent) of (D, Bt).
  void loadState(const Tensor *Init, int64_t D, int64_t Bt,
                 std::vector<double> &State) const {
    for (int64_t J = 0; J < H; ++J)
      State[J] = Init ? Init->getDouble(stateOffset(*Init, D, Bt, J)) : 0.0;
  }
  /// Write the hidden state after step \p T to Y.
  void storeStep(int64_t T, int64_t D, int64_t Bt,
                 const std::vector<double> &Hs) const {
    if (Y)
      for (int64_t J = 0; J < H; ++J)
        Y->setDouble(yOffset(T, D, Bt, J), Hs[J]);
  }
  /// Zero Y past the entry's length \p Len and write its last state.
  void finishEntry(int64_t D, int64_t Bt, int64_t Len,
                   const std::vector<double> &Hs) const {
    if (Y)
      for (int64_t T = Len; T < Seq; ++T)
        for (int64_t J = 0; J < H; ++J)
          Y->setDouble(yOffset(T, D, Bt, J), 0.0);
    if (YH)
      for (int64_t J = 0; J < H; ++J)
        YH->setDouble(stateOffset(*YH, D, Bt, J), Hs[J]);
  }

private:
  int64_t yOffset(int64_t T, int64_t D, int64_t Bt, int64_t J) const {
    return A.BatchMajor ? Y->getOffset({Bt, T, D, J})
                        : Y->getOffset({T, D, Bt, J});
  }
};

/// Result \p I when the node has it (not omitted), else null.
Tensor *getResult(llvm::MutableArrayRef<Tensor> Results, unsigned I) {
  return Results.size() > I && Results[I].getRank() ? &Results[I] : nullptr;
}

/// Operand \p I when given, else null.
const Tensor *getOperand(llvm::ArrayRef<const Tensor *> Operands, unsigned I) {
  return I < Operands.size() ? Operands[I] : nullptr;
}

/// Check the operand shapes of a recurrence of \p Gates gates per hidden
/// unit and read its sizes.
llvm::Expected<RecurrenceRun>
prepareRun(const Node &N, const RecurrenceAttrs &A,
           llvm::ArrayRef<const Tensor *> Operands,
           llvm::MutableArrayRef<Tensor> Results, int64_t Gates) {
  const Tensor &X = *Operands[0], &W = *Operands[1], &R = *Operands[2];
  const Tensor *B = getOperand(Operands, 3);
  if (X.getRank() != 3 || W.getRank() != 3 || R.getRank() != 3)
    return makeNodeError(N, "X, W and R must have rank 3");
  RecurrenceRun Run{A,
                    X,
                    W,
                    R,
                    B,
                    getOperand(Operands, 4),
                    getOperand(Operands, 5),
                    getResult(Results, 0),
                    getResult(Results, 1),
                    X.getDim(A.BatchMajor ? 1 : 0),
                    X.getDim(A.BatchMajor ? 0 : 1),
                    X.getDim(2),
                    R.getDim(2),
                    A.NumDirections};
  const int64_t H = Run.H;
  if (W.getDim(0) != Run.Dirs || W.getDim(1) != Gates * H ||
      W.getDim(2) != Run.In || R.getDim(0) != Run.Dirs ||
      R.getDim(1) != Gates * H ||
      (B && (B->getRank() != 2 || B->getDim(1) != 2 * Gates * H)))
    return makeNodeError(N, "operand shapes do not match hidden_size " +
                                llvm::Twine(H));
  return Run;
}

llvm::Error lstmKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                       llvm::MutableArrayRef<Tensor> Results) {
  auto AttrsOr = readRecurrenceAttrs(N, 3);
  if (!AttrsOr)
    return AttrsOr.takeError();
  const RecurrenceAttrs &A = *AttrsOr;
  auto RunOr = prepareRun(N, A, Operands, Results, 4);
  if (!RunOr)
    return RunOr.takeError();
  const RecurrenceRun &Run = *RunOr;
  const Tensor &W = Run.W, &R = Run.R, *B = Run.B;
  const Tensor *C0 = getOperand(Operands, 6), *P = getOperand(Operands, 7);
  const int64_t H = Run.H, In = Run.In;
  if (P && (P->getRank() != 2 || P->getDim(1) != 3 * H))
    return makeNodeError(N, "operand shapes do not match hidden_size " +
                                llvm::Twine(H));
  Tensor *YC = getResult(Results, 2);
  std::vector<double> Hs(H), Cs(H), Gates(4 * H), NewH(H);
  for (int64_t D = 0; D < Run.Dirs; ++D) {
    const bool Backward = D == 1 || !A.Forward;
    const RnnActivation F = A.Activations[3 * D], G = A.Activations[3 * D + 1],
                        Hf = A.Activations[3 * D + 2];
    for (int64_t Bt = 0; Bt < Run.Batch; ++Bt) {
      auto Len = Run.getLength(N, Bt);
      if (!Len)
        return Len.takeError();
      Run.loadState(Run.H0, D, Bt, Hs);
      Run.loadState(C0, D, Bt, Cs);
      for (int64_t S = 0; S < *Len; ++S) {
        const int64_t T = Backward ? *Len - 1 - S : S;
        for (int64_t Row = 0; Row < 4 * H; ++Row) {
          double Acc = B ? at2(*B, D, Row) + at2(*B, D, 4 * H + Row) : 0.0;
          for (int64_t K = 0; K < In; ++K)
            Acc += Run.x(T, Bt, K) * at3(W, D, Row, K);
          for (int64_t K = 0; K < H; ++K)
            Acc += Hs[K] * at3(R, D, Row, K);
          Gates[Row] = Acc;
        }
        // Gate order i, o, f, c; peepholes i, o, f.
        for (int64_t J = 0; J < H; ++J) {
          auto Peep = [&](int64_t Gate) {
            return P ? at2(*P, D, Gate * H + J) : 0.0;
          };
          double I =
              applyRnnActivation(F, Run.clip(Gates[J] + Peep(0) * Cs[J]));
          double Fg = A.InputForget
                          ? 1.0 - I
                          : applyRnnActivation(F, Run.clip(Gates[2 * H + J] +
                                                           Peep(2) * Cs[J]));
          double Cand = applyRnnActivation(G, Run.clip(Gates[3 * H + J]));
          Cs[J] = Fg * Cs[J] + I * Cand;
          double O =
              applyRnnActivation(F, Run.clip(Gates[H + J] + Peep(1) * Cs[J]));
          NewH[J] = O * applyRnnActivation(Hf, Cs[J]);
        }
        Hs = NewH;
        Run.storeStep(T, D, Bt, Hs);
      }
      Run.finishEntry(D, Bt, *Len, Hs);
      if (YC)
        for (int64_t J = 0; J < H; ++J)
          YC->setDouble(Run.stateOffset(*YC, D, Bt, J), Cs[J]);
    }
  }
  return llvm::Error::success();
}

llvm::Error gruKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                      llvm::MutableArrayRef<Tensor> Results) {
  auto AttrsOr = readRecurrenceAttrs(N, 2);
  if (!AttrsOr)
    return AttrsOr.takeError();
  const RecurrenceAttrs &A = *AttrsOr;
  auto RunOr = prepareRun(N, A, Operands, Results, 3);
  if (!RunOr)
    return RunOr.takeError();
  const RecurrenceRun &Run = *RunOr;
  const Tensor &W = Run.W, &R = Run.R, *B = Run.B;
  const int64_t H = Run.H, In = Run.In;
  auto Bias = [&](int64_t D, int64_t Col) { return B ? at2(*B, D, Col) : 0.0; };
  // XW: the input part of gates z, r, h; HR: the recurrent part.
  std::vector<double> Hs(H), XW(3 * H), HR(3 * H), Reset(H), NewH(H);
  for (int64_t D = 0; D < Run.Dirs; ++D) {
    const bool Backward = D == 1 || !A.Forward;
    const RnnActivation F = A.Activations[2 * D], G = A.Activations[2 * D + 1];
    for (int64_t Bt = 0; Bt < Run.Batch; ++Bt) {
      auto Len = Run.getLength(N, Bt);
      if (!Len)
        return Len.takeError();
      Run.loadState(Run.H0, D, Bt, Hs);
      for (int64_t S = 0; S < *Len; ++S) {
        const int64_t T = Backward ? *Len - 1 - S : S;
        for (int64_t Row = 0; Row < 3 * H; ++Row) {
          double Acc = Bias(D, Row);
          for (int64_t K = 0; K < In; ++K)
            Acc += Run.x(T, Bt, K) * at3(W, D, Row, K);
          XW[Row] = Acc;
        }
        // Gates z and r (and h with linear_before_reset) from H_{t-1}.
        for (int64_t Row = 0; Row < 3 * H; ++Row) {
          double Acc = Bias(D, 3 * H + Row);
          for (int64_t K = 0; K < H; ++K)
            Acc += Hs[K] * at3(R, D, Row, K);
          HR[Row] = Acc;
        }
        for (int64_t J = 0; J < H; ++J)
          Reset[J] = applyRnnActivation(F, Run.clip(XW[H + J] + HR[H + J]));
        if (!A.LinearBeforeReset)
          // Gate h from (r . H_{t-1}) instead.
          for (int64_t J = 0; J < H; ++J) {
            double Acc = Bias(D, 5 * H + J);
            for (int64_t K = 0; K < H; ++K)
              Acc += Reset[K] * Hs[K] * at3(R, D, 2 * H + J, K);
            HR[2 * H + J] = Acc;
          }
        for (int64_t J = 0; J < H; ++J) {
          double Z = applyRnnActivation(F, Run.clip(XW[J] + HR[J]));
          double Cand = applyRnnActivation(
              G, Run.clip(XW[2 * H + J] + (A.LinearBeforeReset
                                               ? Reset[J] * HR[2 * H + J]
                                               : HR[2 * H + J])));
          NewH[J] = (1.0 - Z) * Cand + Z * Hs[J];
        }
        Hs = NewH;
        Run.storeStep(T, D, Bt, Hs);
      }
      Run.finishEntry(D, Bt, *Len, Hs);
    }
  }
  return llvm::Error::success();
}

} // namespace

void runtime::addRecurrentKernels(KernelTable &T) {
  T[static_cast<size_t>(OpId::LSTM)] = lstmKernel;
  T[static_cast<size_t>(OpId::GRU)] = gruKernel;
}
