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

llvm::Error lstmKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                       llvm::MutableArrayRef<Tensor> Results) {
  auto AttrsOr = readRecurrenceAttrs(N, 3);
  if (!AttrsOr)
    return AttrsOr.takeError();
  const RecurrenceAttrs &A = *AttrsOr;
  auto Get = [&](unsigned I) -> const Tensor * {
    return I < Operands.size() ? Operands[I] : nullptr;
  };
  const Tensor &X = *Get(0), &W = *Get(1), &R = *Get(2);
  const Tensor *B = Get(3), *Lens = Get(4), *H0 = Get(5), *C0 = Get(6),
               *P = Get(7);
  if (X.getRank() != 3 || W.getRank() != 3 || R.getRank() != 3)
    return makeNodeError(N, "X, W and R must have rank 3");
  const int64_t Seq = X.getDim(A.BatchMajor ? 1 : 0);
  const int64_t Batch = X.getDim(A.BatchMajor ? 0 : 1);
  const int64_t In = X.getDim(2), H = R.getDim(2);
  const int64_t Dirs = A.NumDirections;
  if (W.getDim(0) != Dirs || W.getDim(1) != 4 * H || W.getDim(2) != In ||
      R.getDim(0) != Dirs || R.getDim(1) != 4 * H ||
      (B && (B->getRank() != 2 || B->getDim(1) != 8 * H)) ||
      (P && (P->getRank() != 2 || P->getDim(1) != 3 * H)))
    return makeNodeError(N, "operand shapes do not match hidden_size " +
                                llvm::Twine(H));
  Tensor *Y =
      Results.size() > 0 && Results[0].getRank() ? &Results[0] : nullptr;
  Tensor *YH =
      Results.size() > 1 && Results[1].getRank() ? &Results[1] : nullptr;
  Tensor *YC =
      Results.size() > 2 && Results[2].getRank() ? &Results[2] : nullptr;
  // Index of (dir, batch) in a state tensor and of (t, dir, batch) in Y.
  auto StateOffset = [&](const Tensor &T, int64_t D, int64_t Bt, int64_t J) {
    return A.BatchMajor ? T.getOffset({Bt, D, J}) : T.getOffset({D, Bt, J});
  };
  auto YOffset = [&](int64_t T, int64_t D, int64_t Bt, int64_t J) {
    return A.BatchMajor ? Y->getOffset({Bt, T, D, J})
                        : Y->getOffset({T, D, Bt, J});
  };
  auto Clip = [&](double V) {
    return A.Clip > 0 ? std::min<double>(A.Clip, std::max<double>(-A.Clip, V))
                      : V;
  };
  std::vector<double> Hs(H), Cs(H), Gates(4 * H), NewH(H);
  for (int64_t D = 0; D < Dirs; ++D) {
    const bool Backward = D == 1 || !A.Forward;
    const RnnActivation F = A.Activations[3 * D], G = A.Activations[3 * D + 1],
                        Hf = A.Activations[3 * D + 2];
    for (int64_t Bt = 0; Bt < Batch; ++Bt) {
      int64_t Len = Seq;
      if (Lens) {
        Len = Lens->getInt(Lens->getOffset({Bt}));
        if (Len < 0 || Len > Seq)
          return makeNodeError(N, "sequence_lens entry " + llvm::Twine(Bt) +
                                      " is " + llvm::Twine(Len) +
                                      ", expected 0 to " + llvm::Twine(Seq));
      }
      for (int64_t J = 0; J < H; ++J) {
        Hs[J] = H0 ? H0->getDouble(StateOffset(*H0, D, Bt, J)) : 0.0;
        Cs[J] = C0 ? C0->getDouble(StateOffset(*C0, D, Bt, J)) : 0.0;
      }
      for (int64_t S = 0; S < Len; ++S) {
        const int64_t T = Backward ? Len - 1 - S : S;
        for (int64_t Row = 0; Row < 4 * H; ++Row) {
          double Acc = B ? at2(*B, D, Row) + at2(*B, D, 4 * H + Row) : 0.0;
          for (int64_t K = 0; K < In; ++K)
            Acc += (A.BatchMajor ? at3(X, Bt, T, K) : at3(X, T, Bt, K)) *
                   at3(W, D, Row, K);
          for (int64_t K = 0; K < H; ++K)
            Acc += Hs[K] * at3(R, D, Row, K);
          Gates[Row] = Acc;
        }
        // Gate order i, o, f, c; peepholes i, o, f.
        for (int64_t J = 0; J < H; ++J) {
          auto Peep = [&](int64_t Gate) {
            return P ? at2(*P, D, Gate * H + J) : 0.0;
          };
          double I = applyRnnActivation(F, Clip(Gates[J] + Peep(0) * Cs[J]));
          double Fg = A.InputForget
                          ? 1.0 - I
                          : applyRnnActivation(
                                F, Clip(Gates[2 * H + J] + Peep(2) * Cs[J]));
          double Cand = applyRnnActivation(G, Clip(Gates[3 * H + J]));
          Cs[J] = Fg * Cs[J] + I * Cand;
          double O =
              applyRnnActivation(F, Clip(Gates[H + J] + Peep(1) * Cs[J]));
          NewH[J] = O * applyRnnActivation(Hf, Cs[J]);
        }
        Hs = NewH;
        if (Y)
          for (int64_t J = 0; J < H; ++J)
            Y->setDouble(YOffset(T, D, Bt, J), Hs[J]);
      }
      if (Y)
        for (int64_t T = Len; T < Seq; ++T)
          for (int64_t J = 0; J < H; ++J)
            Y->setDouble(YOffset(T, D, Bt, J), 0.0);
      for (int64_t J = 0; J < H; ++J) {
        if (YH)
          YH->setDouble(StateOffset(*YH, D, Bt, J), Hs[J]);
        if (YC)
          YC->setDouble(StateOffset(*YC, D, Bt, J), Cs[J]);
      }
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
  auto Get = [&](unsigned I) -> const Tensor * {
    return I < Operands.size() ? Operands[I] : nullptr;
  };
  const Tensor &X = *Get(0), &W = *Get(1), &R = *Get(2);
  const Tensor *B = Get(3), *Lens = Get(4), *H0 = Get(5);
  if (X.getRank() != 3 || W.getRank() != 3 || R.getRank() != 3)
    return makeNodeError(N, "X, W and R must have rank 3");
  const int64_t Seq = X.getDim(A.BatchMajor ? 1 : 0);
  const int64_t Batch = X.getDim(A.BatchMajor ? 0 : 1);
  const int64_t In = X.getDim(2), H = R.getDim(2);
  const int64_t Dirs = A.NumDirections;
  if (W.getDim(0) != Dirs || W.getDim(1) != 3 * H || W.getDim(2) != In ||
      R.getDim(0) != Dirs || R.getDim(1) != 3 * H ||
      (B && (B->getRank() != 2 || B->getDim(1) != 6 * H)))
    return makeNodeError(N, "operand shapes do not match hidden_size " +
                                llvm::Twine(H));
  Tensor *Y =
      Results.size() > 0 && Results[0].getRank() ? &Results[0] : nullptr;
  Tensor *YH =
      Results.size() > 1 && Results[1].getRank() ? &Results[1] : nullptr;
  auto StateOffset = [&](const Tensor &T, int64_t D, int64_t Bt, int64_t J) {
    return A.BatchMajor ? T.getOffset({Bt, D, J}) : T.getOffset({D, Bt, J});
  };
  auto YOffset = [&](int64_t T, int64_t D, int64_t Bt, int64_t J) {
    return A.BatchMajor ? Y->getOffset({Bt, T, D, J})
                        : Y->getOffset({T, D, Bt, J});
  };
  auto Clip = [&](double V) {
    return A.Clip > 0 ? std::min<double>(A.Clip, std::max<double>(-A.Clip, V))
                      : V;
  };
  auto Bias = [&](int64_t D, int64_t Col) { return B ? at2(*B, D, Col) : 0.0; };
  // XW: the input part of gates z, r, h; HR: the recurrent part.
  std::vector<double> Hs(H), XW(3 * H), HR(3 * H), Reset(H), NewH(H);
  for (int64_t D = 0; D < Dirs; ++D) {
    const bool Backward = D == 1 || !A.Forward;
    const RnnActivation F = A.Activations[2 * D], G = A.Activations[2 * D + 1];
    for (int64_t Bt = 0; Bt < Batch; ++Bt) {
      int64_t Len = Seq;
      if (Lens) {
        Len = Lens->getInt(Lens->getOffset({Bt}));
        if (Len < 0 || Len > Seq)
          return makeNodeError(N, "sequence_lens entry " + llvm::Twine(Bt) +
                                      " is " + llvm::Twine(Len) +
                                      ", expected 0 to " + llvm::Twine(Seq));
      }
      for (int64_t J = 0; J < H; ++J)
        Hs[J] = H0 ? H0->getDouble(StateOffset(*H0, D, Bt, J)) : 0.0;
      for (int64_t S = 0; S < Len; ++S) {
        const int64_t T = Backward ? Len - 1 - S : S;
        for (int64_t Row = 0; Row < 3 * H; ++Row) {
          double Acc = Bias(D, Row);
          for (int64_t K = 0; K < In; ++K)
            Acc += (A.BatchMajor ? at3(X, Bt, T, K) : at3(X, T, Bt, K)) *
                   at3(W, D, Row, K);
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
          Reset[J] = applyRnnActivation(F, Clip(XW[H + J] + HR[H + J]));
        if (!A.LinearBeforeReset)
          // Gate h from (r . H_{t-1}) instead.
          for (int64_t J = 0; J < H; ++J) {
            double Acc = Bias(D, 5 * H + J);
            for (int64_t K = 0; K < H; ++K)
              Acc += Reset[K] * Hs[K] * at3(R, D, 2 * H + J, K);
            HR[2 * H + J] = Acc;
          }
        for (int64_t J = 0; J < H; ++J) {
          double Z = applyRnnActivation(F, Clip(XW[J] + HR[J]));
          double Cand = applyRnnActivation(
              G, Clip(XW[2 * H + J] + (A.LinearBeforeReset
                                           ? Reset[J] * HR[2 * H + J]
                                           : HR[2 * H + J])));
          NewH[J] = (1.0 - Z) * Cand + Z * Hs[J];
        }
        Hs = NewH;
        if (Y)
          for (int64_t J = 0; J < H; ++J)
            Y->setDouble(YOffset(T, D, Bt, J), Hs[J]);
      }
      if (Y)
        for (int64_t T = Len; T < Seq; ++T)
          for (int64_t J = 0; J < H; ++J)
            Y->setDouble(YOffset(T, D, Bt, J), 0.0);
      if (YH)
        for (int64_t J = 0; J < H; ++J)
          YH->setDouble(StateOffset(*YH, D, Bt, J), Hs[J]);
    }
  }
  return llvm::Error::success();
}

} // namespace

void runtime::addRecurrentKernels(KernelTable &T) {
  T[static_cast<size_t>(OpId::LSTM)] = lstmKernel;
  T[static_cast<size_t>(OpId::GRU)] = gruKernel;
}
