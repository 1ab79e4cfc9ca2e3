//===- LowerRecurrent.cpp - Lowering of LSTM ------------------------------===//
//
// LSTM: W, R and the biases are packed at compile time when they are
// constants (as in exported models), else by every run. A run projects the
// input of every step and direction with one GEMM (bias in its epilogue); then
// each direction walks its steps: the recurrent product of all batch entries
// (one GEMM of the hidden states by the packed R), then the gate step of each
// batch entry still inside its sequence (RecurrentKernels.cpp). Declines
// non-default activations and operands the kernels cannot read in place.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "Kernels.h"
#include "ProgramImpl.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Recurrence.h"

#include <cstring>

using namespace strider;
using namespace strider::cpu;

namespace {

/// W, R, B and P in the form the kernels read.
struct LstmWeights {
  /// W of every direction: B operand [In x Dirs * 4H].
  PackedOperand W;
  /// R of each direction: B operand [H x 4H].
  std::vector<PackedOperand> R;
  std::shared_ptr<AlignedFloats> Bias; ///< Wb + Rb, Dirs * 4H entries.
  std::vector<float> Peep;             ///< Dirs * 3H entries, or empty.
};

/// Packs the row-major operands \p W, \p R, \p B and \p P (the last two may
/// be null) of an LSTM with \p Dirs directions, \p H hidden units and
/// \p In inputs.
LstmWeights packLstmWeights(const float *W, const float *R, const float *B,
                            const float *P, int64_t Dirs, int64_t H,
                            int64_t In) {
  LstmWeights Out;
  const int64_t G4 = 4 * H;
  auto WF = [&](int64_t Col, int64_t K) {
    return W[Col * In + K]; // Col = d * 4H + gate row.
  };
  WeightPacker<decltype(WF)> WP(WF);
  Out.W = packB(WP, Dirs * G4, In);
  for (int64_t D = 0; D < Dirs; ++D) {
    auto RF = [&](int64_t Col, int64_t K) { return R[(D * G4 + Col) * H + K]; };
    WeightPacker<decltype(RF)> RP(RF);
    Out.R.push_back(packB(RP, G4, H));
  }
  std::vector<float> Bias(size_t(Dirs * G4), 0.0f);
  if (B)
    for (int64_t D = 0; D < Dirs; ++D)
      for (int64_t J = 0; J < G4; ++J)
        Bias[size_t(D * G4 + J)] = B[D * 2 * G4 + J] + B[D * 2 * G4 + G4 + J];
  Out.Bias = makePaddedFloats(Bias, Dirs * G4);
  if (P)
    Out.Peep.assign(P, P + Dirs * 3 * H);
  return Out;
}

/// Everything a run needs, fixed at compile time.
struct LstmPlan {
  int64_t Seq = 0, Batch = 0, In = 0, H = 0, Dirs = 1;
  bool BatchMajor = false, ForwardFirst = true;
  float Clip = 0;
  bool InputForget = false;
  /// X's rows (one per step and batch entry, in X's order) are XRow apart.
  int64_t XRow = 0;
  /// The weights when all are constants (else packed by every run).
  LstmWeights Weights;
  /// initial_h / initial_c element (d, b, j) at offset
  /// d * S[0] + b * S[1] + j * S[2].
  int64_t H0Str[3] = {0, 0, 0}, C0Str[3] = {0, 0, 0};
  ElementType LensType = ElementType::I32;
  std::string Where; ///< describeNode, for run-time errors.

  int64_t xRowOf(int64_t T, int64_t B) const {
    return BatchMajor ? B * Seq + T : T * Batch + B;
  }
  /// Offset of Y(t, d, b, 0) and of a state (d, b, 0).
  int64_t yOffset(int64_t T, int64_t D, int64_t B) const {
    return (BatchMajor ? (B * Seq + T) * Dirs + D
                       : (T * Dirs + D) * Batch + B) *
           H;
  }
  int64_t stateOffset(int64_t D, int64_t B) const {
    return (BatchMajor ? B * Dirs + D : D * Batch + B) * H;
  }
};

/// Whether the kernel reads \p V: a constant (read at compile time) or a
/// row-major activation, of f32.
bool isReadableWeight(const Value *V) {
  return V && V->getType().getElementType() == ElementType::F32 &&
         (V->getConstantData() || V->getType().getLayout().isIdentity());
}

/// Whether result \p I exists and someone reads it.
bool isResultUsed(const Graph &G, const Node &N, unsigned I) {
  return N.hasResult(I) &&
         (N.getResult(I)->hasUses() || G.isGraphOutput(N.getResult(I)));
}

} // namespace

bool cpu::lowerLSTM(LoweringContext &L, const Node &N, const FusedTail &) {
  auto AttrsOr = readRecurrenceAttrs(N, 3);
  if (!AttrsOr) {
    llvm::consumeError(AttrsOr.takeError());
    return false;
  }
  const RecurrenceAttrs &A = *AttrsOr;
  for (unsigned D = 0; D < A.NumDirections; ++D)
    if (A.Activations[3 * D] != RnnActivation::Sigmoid ||
        A.Activations[3 * D + 1] != RnnActivation::Tanh ||
        A.Activations[3 * D + 2] != RnnActivation::Tanh)
      return false;
  auto Operand = [&](unsigned I) -> const Value * {
    return N.hasOperand(I) ? N.getOperand(I) : nullptr;
  };
  const Value *X = Operand(0), *Lens = Operand(4), *H0 = Operand(5),
              *C0 = Operand(6);
  if (!X || X->getType().getElementType() != ElementType::F32 ||
      !isReadableWeight(Operand(1)) || !isReadableWeight(Operand(2)) ||
      (Operand(3) && !isReadableWeight(Operand(3))) ||
      (Operand(7) && !isReadableWeight(Operand(7))))
    return false;
  const Graph &G = *N.getGraph();
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (isResultUsed(G, N, I) &&
        !N.getResult(I)->getType().getLayout().isIdentity())
      return false;

  auto Plan = std::make_shared<LstmPlan>();
  LstmPlan &S = *Plan;
  auto XS = X->getType().getStaticShape();
  auto XStr = getStrides(X->getType());
  S.BatchMajor = A.BatchMajor;
  S.Seq = XS[A.BatchMajor ? 1 : 0];
  S.Batch = XS[A.BatchMajor ? 0 : 1];
  S.In = XS[2];
  S.H = Operand(2)->getType().getStaticShape()[2];
  S.Dirs = A.NumDirections;
  S.ForwardFirst = A.Forward;
  S.Clip = A.Clip;
  S.InputForget = A.InputForget;
  // The step and batch dims must nest into one row index over rows of
  // contiguous elements.
  if (XStr[2] != 1 || (XS[1] != 1 && XStr[0] != XS[1] * XStr[1]) ||
      S.Seq * S.Batch == 0)
    return false;
  S.XRow = XS[1] == 1 ? XStr[0] : XStr[1];
  if (Lens) {
    S.LensType = Lens->getType().getElementType();
    if (S.LensType != ElementType::I32 && S.LensType != ElementType::I64)
      return false;
  }
  for (const Value *V : {H0, C0})
    if (V && V->getType().getElementType() != ElementType::F32)
      return false;
  auto StateStrides = [&](const Value *V, int64_t *Out) {
    if (!V)
      return;
    auto Str = getStrides(V->getType());
    Out[0] = Str[A.BatchMajor ? 1 : 0];
    Out[1] = Str[A.BatchMajor ? 0 : 1];
    Out[2] = Str[2];
  };
  StateStrides(H0, S.H0Str);
  StateStrides(C0, S.C0Str);

  const int64_t H = S.H, G4 = 4 * H, In = S.In, Dirs = S.Dirs;
  // Weights that are all constants are packed now, others by every run.
  const unsigned WeightOperands[] = {1, 2, 3, 7};
  bool AllConstant = true;
  for (unsigned I : WeightOperands)
    AllConstant &= !Operand(I) || Operand(I)->getConstantData();
  if (AllConstant) {
    std::vector<float> Vals[4];
    const float *Ptr[4] = {nullptr, nullptr, nullptr, nullptr};
    for (unsigned K = 0; K < 4; ++K)
      if (const Value *V = Operand(WeightOperands[K])) {
        Vals[K] = getConstantFloats(V);
        Ptr[K] = Vals[K].data();
      }
    S.Weights = packLstmWeights(Ptr[0], Ptr[1], Ptr[2], Ptr[3], Dirs, H, In);
  }
  S.Where = describeNode(N);
  L.own(Plan);

  ProgramImpl *P = &L.getProgram();
  std::vector<BufferId> Reads{L.getBuffer(X)};
  const BufferId XB = Reads[0];
  const BufferId LensB = Lens ? L.getBuffer(Lens) : -1;
  const BufferId H0B = H0 ? L.getBuffer(H0) : -1;
  const BufferId C0B = C0 ? L.getBuffer(C0) : -1;
  BufferId WeightB[4] = {-1, -1, -1, -1};
  if (!AllConstant)
    for (unsigned K = 0; K < 4; ++K)
      if (const Value *V = Operand(WeightOperands[K]))
        WeightB[K] = L.getBuffer(V);
  for (BufferId B :
       {LensB, H0B, C0B, WeightB[0], WeightB[1], WeightB[2], WeightB[3]})
    if (B >= 0)
      Reads.push_back(B);
  BufferId Out[3] = {-1, -1, -1};
  std::vector<BufferId> Writes;
  for (unsigned I = 0; I < N.getNumResults() && I < 3; ++I)
    if (isResultUsed(G, N, I)) {
      Out[I] = L.defineBuffer(N.getResult(I));
      Writes.push_back(Out[I]);
    }
  // Scratch: the input projection, then per batch entry the recurrent
  // product, the hidden state and the cell state.
  const int64_t ProjFloats = S.Seq * S.Batch * Dirs * G4;
  const int64_t ScratchFloats = ProjFloats + S.Batch * (G4 + 2 * H);
  const BufferId ScratchB = L.defineScratch(ScratchFloats * 4);
  Writes.push_back(ScratchB);
  const int Threads = L.getThreads();
  const int64_t Flops =
      2 * S.Seq * S.Batch * Dirs * G4 * (In + H) + 10 * S.Seq * S.Batch * H;
  std::string Name = std::string("lstm.") + (Dirs == 2   ? "bidirectional"
                                             : A.Forward ? "forward"
                                                         : "reverse");
  const BufferId YB = Out[0], YHB = Out[1], YCB = Out[2];
  L.addStep(
      {N.hasResult(0) ? N.getResult(0)->getName() : "", Name, false, Flops},
      Reads, Writes, [=]() {
        const LstmPlan &S = *Plan;
        const int64_t H = S.H, G4 = 4 * H, Dirs = S.Dirs;
        float *Proj = P->f32(ScratchB);
        float *Rec = Proj + S.Seq * S.Batch * Dirs * G4;
        float *Hs = Rec + S.Batch * G4;
        float *Cs = Hs + S.Batch * H;
        float *Y = YB >= 0 ? P->f32(YB) : nullptr;
        // Sequence lengths, checked.
        std::vector<int64_t> Len(size_t(S.Batch), S.Seq);
        if (LensB >= 0) {
          const uint8_t *LP = P->bytes(LensB);
          for (int64_t B = 0; B < S.Batch; ++B) {
            int64_t V;
            if (S.LensType == ElementType::I32) {
              int32_t V32;
              std::memcpy(&V32, LP + 4 * B, 4);
              V = V32;
            } else {
              std::memcpy(&V, LP + 8 * B, 8);
            }
            if (V < 0 || V > S.Seq) {
              P->StepError = S.Where + ": sequence_lens entry " +
                             std::to_string(B) + " is " + std::to_string(V) +
                             ", expected 0 to " + std::to_string(S.Seq);
              return;
            }
            Len[size_t(B)] = V;
          }
          if (Y)
            std::memset(Y, 0, size_t(S.Seq * Dirs * S.Batch * H) * 4);
        }
        LstmWeights RunWeights;
        if (WeightB[0] >= 0) {
          const float *Ptr[4];
          for (unsigned K = 0; K < 4; ++K)
            Ptr[K] = WeightB[K] >= 0 ? P->f32(WeightB[K]) : nullptr;
          RunWeights =
              packLstmWeights(Ptr[0], Ptr[1], Ptr[2], Ptr[3], Dirs, H, S.In);
        }
        const LstmWeights &Wt = WeightB[0] >= 0 ? RunWeights : S.Weights;
        // Input projection of every step and direction, biases added.
        GemmProblem Proj0;
        Proj0.M = S.Seq * S.Batch;
        Proj0.N = Dirs * G4;
        Proj0.K = S.In;
        DirectA XA = DirectA::matrix(P->f32(XB), Proj0.M, S.In, S.XRow);
        Proj0.Direct = &XA;
        Proj0.PackedB = &Wt.W;
        Proj0.C = Proj;
        Proj0.LdM = Dirs * G4;
        Proj0.Epi.Bias = Wt.Bias->get();
        runGemm(Proj0, Threads);

        const float *H0 = H0B >= 0 ? P->f32(H0B) : nullptr;
        const float *C0 = C0B >= 0 ? P->f32(C0B) : nullptr;
        for (int64_t D = 0; D < Dirs; ++D) {
          const bool Backward = D == 1 || !S.ForwardFirst;
          for (int64_t B = 0; B < S.Batch; ++B)
            for (int64_t J = 0; J < H; ++J) {
              Hs[B * H + J] =
                  H0 ? H0[D * S.H0Str[0] + B * S.H0Str[1] + J * S.H0Str[2]]
                     : 0.0f;
              Cs[B * H + J] =
                  C0 ? C0[D * S.C0Str[0] + B * S.C0Str[1] + J * S.C0Str[2]]
                     : 0.0f;
            }
          DirectA HA = DirectA::matrix(Hs, S.Batch, H, H);
          GemmProblem RecG;
          RecG.M = S.Batch;
          RecG.N = G4;
          RecG.K = H;
          RecG.Direct = &HA;
          RecG.PackedB = &Wt.R[size_t(D)];
          RecG.C = Rec;
          RecG.LdM = G4;
          for (int64_t Step = 0; Step < S.Seq; ++Step) {
            runGemm(RecG, Threads);
            for (int64_t B = 0; B < S.Batch; ++B) {
              const int64_t BL = Len[size_t(B)];
              if (Step >= BL)
                continue;
              const int64_t T = Backward ? BL - 1 - Step : Step;
              LstmGates A;
              A.Pre = Proj + S.xRowOf(T, B) * Dirs * G4 + D * G4;
              A.Rec = Rec + B * G4;
              A.Peep = Wt.Peep.empty() ? nullptr : Wt.Peep.data() + D * 3 * H;
              A.Cell = Cs + B * H;
              A.HiddenOut = Hs + B * H;
              A.Y = Y ? Y + S.yOffset(T, D, B) : nullptr;
              A.Hidden = H;
              A.Clip = S.Clip;
              A.InputForget = S.InputForget;
              runLstmGates(A);
            }
          }
          for (int64_t B = 0; B < S.Batch; ++B) {
            if (YHB >= 0)
              std::memcpy(P->f32(YHB) + S.stateOffset(D, B), Hs + B * H,
                          size_t(H) * 4);
            if (YCB >= 0)
              std::memcpy(P->f32(YCB) + S.stateOffset(D, B), Cs + B * H,
                          size_t(H) * 4);
          }
        }
      });
  return true;
}
