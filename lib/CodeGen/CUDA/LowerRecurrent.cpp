//===- LowerRecurrent.cpp - LSTM and GRU as GEMMs and gate steps ----------===//
//
// A recurrence becomes one cuBLASLt GEMM projecting the input of every
// step and direction (W, with the biases in its epilogue) into a scratch
// buffer, then for each direction, step by step: the recurrent product of
// the hidden state by R (a GEMM; none on a first step without an initial
// state) and the gate step (RecurrentKernels.cu), which updates the states
// in place and writes Y's slice of the step. GRU without
// linear_before_reset first computes the reset hidden state (a kernel) and
// its product by R's h rows (a GEMM). The states are copied into Y_h and
// Y_c at the end. Steps are launched in the
// program's order on one stream, so each reads what the one before it
// wrote; the whole loop is part of the captured graph. A direction whose
// R is small enough (useRecurrenceLoop: the silero and piper models'
// 56 to 128 units) runs all its steps in one launch instead
// (RecurrenceLoopParams): products, reset stage and gates by one block.
//
// Runs what the CPU backend's kernels run with constant weights: the
// default activations, clip, input_forget, peepholes, linear_before_reset,
// either layout, and sequence_lens, constant or computed at run time: the
// gate steps read the lengths and pick each batch entry's time themselves
// (RecurrentStep), so the plan stays one fixed list of launches. A
// constant full sequence_lens (every entry the sequence's length) is
// dropped.
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

#include "strider/CodeGen/TensorGeometry.h"
#include "strider/IR/Recurrence.h"

using namespace strider;
using namespace strider::cuda;

namespace {

/// A cuBLASLt step Y = A * B^T (+ Bias) with A, Y row-major M x K,
/// M x N and B row-major N x K: the runner's own constant \p B (uploaded
/// with it), or else the buffer \p BArg (R, read by every step of a
/// direction, is uploaded once).
void addProduct(PlanContext &C, const std::string &Nodes, const char *What,
                int64_t M, int64_t N, int64_t K, std::vector<float> B, Arg BArg,
                std::vector<float> Bias, Arg A, Arg Y) {
  GemmDesc D;
  D.M = M;
  D.N = N;
  D.K = K;
  D.TransB = true;
  D.Type = DType::F32;
  D.Math = C.getMathMode(DType::F32);
  D.Epilogue.Bias = !Bias.empty();
  const Arg BiasArg = C.getOptionalConstant(Bias);
  StepInfo Info;
  Info.Nodes = Nodes;
  Info.Kernel = std::string("cublaslt.gemm nt f32") +
                (D.Math == MathMode::TF32 ? " tf32" : "") +
                getEpilogueSuffix(D.Epilogue) + " (" + What + ")";
  Info.Flops = 2 * M * N * K;
  C.addRunnerConstantBytes(int64_t(B.size() * sizeof(float)));
  const bool OwnB = !B.empty();
  GemmStep S{D,
             OwnB ? std::make_shared<const std::vector<float>>(std::move(B))
                  : nullptr,
             std::make_shared<const std::vector<float>>(std::move(Bias))};
  C.addStep(Info, std::move(S), {A, OwnB ? Arg() : BArg, Y, BiasArg});
}

/// Whether result \p I of \p N exists and is read.
bool isResultUsed(const Graph &G, const Node &N, unsigned I) {
  return N.hasResult(I) &&
         (N.getResult(I)->hasUses() || G.isGraphOutput(N.getResult(I)));
}

} // namespace

namespace {

/// A recurrence's kind: LSTM (4 gates i, o, f, c; a cell state) or GRU (3
/// gates z, r, h).
struct CellKind {
  const char *Name; ///< "LSTM", "GRU".
  const char *Step; ///< Kernel names: "lstm", "gru".
  int64_t Gates;
  unsigned NumActs;
  bool HasCell;
};
constexpr CellKind Lstm = {"LSTM", "lstm", 4, 3, true};
constexpr CellKind Gru = {"GRU", "gru", 3, 2, false};

llvm::Error planRecurrence(PlanContext &C, const Node &N, const FusedTail &T,
                           const CellKind &K) {
  auto AttrsOr = readRecurrenceAttrs(N, K.NumActs);
  if (!AttrsOr)
    return AttrsOr.takeError();
  const RecurrenceAttrs &A = *AttrsOr;
  for (unsigned I = 0; I < A.Activations.size(); ++I)
    if (A.Activations[I] !=
        (I % K.NumActs == 0 ? RnnActivation::Sigmoid : RnnActivation::Tanh))
      return unsupported(N, std::string("an ") + K.Name +
                                " with other than its default activations");
  if (T.Residual || !T.Act.isNone())
    return unsupported(N, std::string("a fused epilogue on an ") + K.Name);
  auto Operand = [&](unsigned I) -> const Value * {
    return N.hasOperand(I) ? N.getOperand(I) : nullptr;
  };
  const Value *X = Operand(0), *Lens = Operand(4), *H0 = Operand(5),
              *C0 = K.HasCell ? Operand(6) : nullptr,
              *PeepV = K.HasCell ? Operand(7) : nullptr;
  for (const Value *V : {X, Operand(1), Operand(2), Operand(3), H0, C0, PeepV})
    if (V && V->getType().getElementType() != ElementType::F32)
      return unsupported(N, std::string("an ") + K.Name + " of " +
                                V->getType().str() + " (f32 only)");
  std::vector<float> W = getConstantFloats(Operand(1)),
                     R = getConstantFloats(Operand(2));
  std::vector<float> Bs =
      Operand(3) ? getConstantFloats(Operand(3)) : std::vector<float>();
  std::vector<float> Peep =
      PeepV ? getConstantFloats(PeepV) : std::vector<float>();
  if (W.empty() || R.empty() || (Operand(3) && Bs.empty()) ||
      (PeepV && Peep.empty()))
    return unsupported(N, std::string("an ") + K.Name +
                              " whose weights are not constants");
  for (const Value *V : {X, H0, C0})
    if (V && (!V->getType().hasRank() || V->getType().getRank() != 3 ||
              !V->getType().hasStaticShape()))
      return unsupported(N, std::string("an ") + K.Name + " with operand " +
                                V->getType().str() + " (static rank 3)");
  if (!X->getType().getLayout().isIdentity())
    return unsupported(N, std::string("an ") + K.Name + " reading " +
                              X->getType().str());

  auto XS = X->getType().getStaticShape();
  const int64_t Seq = XS[A.BatchMajor ? 1 : 0],
                Batch = XS[A.BatchMajor ? 0 : 1], In = XS[2];
  const int64_t Dirs = A.NumDirections;
  const int64_t H = Operand(2)->getType().getStaticShape()[2];
  const int64_t GH = K.Gates * H;
  if (int64_t(W.size()) != Dirs * GH * In ||
      int64_t(R.size()) != Dirs * GH * H ||
      (!Bs.empty() && int64_t(Bs.size()) != Dirs * 2 * GH) ||
      (!Peep.empty() && int64_t(Peep.size()) != Dirs * 3 * H))
    return unsupported(N, std::string("an ") + K.Name +
                              " with weights of unexpected sizes");
  llvm::Optional<ScalarType> LensType;
  if (Lens) {
    const TensorData *D = Lens->getConstantData();
    if (D &&
        llvm::all_of(D->toInt64Vector(), [&](int64_t L) { return L == Seq; }))
      Lens = nullptr; // Full: every step runs for every entry.
    else if (!(LensType = getScalarType(Lens->getType().getElementType())) ||
             (*LensType != ScalarType::I32 && *LensType != ScalarType::I64) ||
             !Lens->getType().hasStaticShape() ||
             Lens->getType().getNumElements() != Batch)
      return unsupported(N, std::string("an ") + K.Name +
                                " with sequence_lens " + Lens->getType().str());
  }
  const Graph &G = *N.getGraph();
  const unsigned NumResults = K.HasCell ? 3 : 2;
  for (unsigned I = 0; I < NumResults; ++I)
    if (isResultUsed(G, N, I) &&
        !N.getResult(I)->getType().getLayout().isIdentity())
      return unsupported(N, std::string("an ") + K.Name + " writing " +
                                N.getResult(I)->getType().str());
  if (Seq * Batch == 0)
    return unsupported(N, std::string("an ") + K.Name +
                              " of an empty sequence or batch");

  const std::string Nodes = getStepNodes(N, T);
  const std::string Step = K.Step;
  auto XB = C.getBuffer(X, N);
  if (!XB)
    return XB.takeError();
  Arg LensArg;
  if (Lens) {
    auto B = C.getBuffer(Lens, N);
    if (!B)
      return B.takeError();
    LensArg.Buffer = *B;
  }
  Arg H0Arg, C0Arg;
  for (auto [V, Out] : {std::pair(H0, &H0Arg), std::pair(C0, &C0Arg)})
    if (V) {
      auto B = C.getBuffer(V, N);
      if (!B)
        return B.takeError();
      Out->Buffer = *B;
    }
  Arg PeepArg;
  if (!Peep.empty())
    PeepArg.Buffer = C.addConstantFloats(Peep);
  Arg Out[3];
  for (unsigned I = 0; I < NumResults; ++I)
    if (isResultUsed(G, N, I)) {
      auto B = C.defineBuffer(N.getResult(I), N);
      if (!B)
        return B.takeError();
      Out[I].Buffer = *B;
    }

  // The input projection of every (step, batch entry) row of X and every
  // direction: rows in X's order (step-major, or batch-major for
  // layout = 1), Dirs * Gates * H columns. Its bias is Wb + Rb, except for
  // GRU's h gate with linear_before_reset, whose Rb the reset scales (the
  // gate step adds it).
  const bool Lbr = !K.HasCell && A.LinearBeforeReset;
  std::vector<float> Bias, RecBias;
  if (!Bs.empty()) {
    Bias.resize(size_t(Dirs * GH));
    for (int64_t D = 0; D < Dirs; ++D)
      for (int64_t J = 0; J < GH; ++J) {
        const bool Kept = Lbr && J >= 2 * H;
        const float Rb = Bs[size_t(D * 2 * GH + GH + J)];
        Bias[size_t(D * GH + J)] = Bs[size_t(D * 2 * GH + J)] + (Kept ? 0 : Rb);
        if (Kept)
          RecBias.push_back(Rb);
      }
  }
  if (Lbr && RecBias.empty())
    RecBias.assign(size_t(Dirs * H), 0.0f);
  const Arg Pre{C.addScratch(Seq * Batch * Dirs * GH * 4), 0};
  addProduct(C, Nodes, (Step + " input projection").c_str(), Seq * Batch,
             Dirs * GH, In, std::move(W), Arg(), std::move(Bias), {*XB, 0},
             Pre);
  // The recurrent product: every gate (LSTM, GRU with linear_before_
  // reset), or GRU's z and r gates then, apart, the reset state's h gate.
  const int64_t RecCols = Lbr || K.HasCell ? GH : 2 * H;
  const Arg Rec{C.addScratch(Batch * RecCols * 4), 0};
  Arg RecH, Reset;
  if (!K.HasCell && !Lbr) {
    RecH.Buffer = C.addScratch(Batch * H * 4);
    Reset.Buffer = C.addScratch(Batch * H * 4);
  }
  Arg RecBiasArg;
  if (Lbr)
    RecBiasArg.Buffer = C.addConstantFloats(RecBias);

  // Element strides of a state operand or result ([Dirs, Batch, H], or
  // [Batch, Dirs, H] for layout = 1; any layout) by direction, batch entry
  // and hidden unit.
  struct StateStrides {
    int64_t Dir = 0, Batch = 0, Unit = 0;
  };
  auto getStateStrides = [&](const Value *V) {
    auto Str = codegen::getStrides(V->getType());
    return StateStrides{Str[A.BatchMajor ? 1 : 0], Str[A.BatchMajor ? 0 : 1],
                        Str[2]};
  };
  auto CopyState = [&](Arg From, Arg To, bool Into, StateStrides S,
                       const std::string &What) {
    // The [Batch, H] state of one direction, dense on the state side.
    llvm::SmallVector<int64_t, 2> Shape{Batch, H}, Dense{H, 1},
        Strided{S.Batch, S.Unit};
    addCopy(C, Nodes, (Step + " " + What).c_str(),
            makeCopy(Shape, Into ? Strided : Dense, Into ? Dense : Strided,
                     DType::F32, DType::F32),
            From, To);
  };
  for (int64_t D = 0; D < Dirs; ++D) {
    const bool Backward = D == 1 || !A.Forward;
    const char *Dir = Backward ? " reverse" : " forward";
    // The states of this direction, dense [Batch, H].
    const Arg HState{C.addScratch(Batch * H * 4), 0};
    Arg CState;
    if (K.HasCell)
      CState.Buffer = C.addScratch(Batch * H * 4);
    if (H0Arg.Buffer >= 0) {
      const StateStrides S = getStateStrides(H0);
      CopyState({H0Arg.Buffer, D * S.Dir * 4}, HState, true, S, "initial_h");
    }
    if (C0Arg.Buffer >= 0) {
      const StateStrides S = getStateStrides(C0);
      CopyState({C0Arg.Buffer, D * S.Dir * 4}, CState, true, S, "initial_c");
    }
    // R of this direction, uploaded once: all its gates, or for GRU
    // without linear_before_reset z and r, and h apart.
    llvm::ArrayRef<float> RAll(R);
    RAll = RAll.slice(size_t(D * GH * H), size_t(GH * H));
    const Arg RD{C.addConstantFloats(RAll.take_front(size_t(RecCols * H))), 0};
    Arg RDh;
    if (RecH.Buffer >= 0)
      RDh.Buffer = C.addConstantFloats(RAll.drop_front(size_t(2 * H * H)));
    Arg PeepD = PeepArg, RecBiasD = RecBiasArg;
    if (PeepD.Buffer >= 0)
      PeepD.Offset = D * 3 * H * 4;
    if (RecBiasD.Buffer >= 0)
      RecBiasD.Offset = D * H * 4;
    // Projection row of (t, b): t * Batch + b, or b * Seq + t; this
    // direction's gates start at D * GH.
    RecurrentStep Time;
    Time.Seq = Seq;
    Time.Backward = Backward;
    Time.LensType = LensType.getValueOr(ScalarType::I32);
    Time.PreTimeStride = (A.BatchMajor ? 1 : Batch) * Dirs * GH;
    Time.PreRowStride = (A.BatchMajor ? Seq : 1) * Dirs * GH;
    const Arg PreArg{Pre.Buffer, D * GH * 4};
    // Y is [Seq, Dirs, Batch, H], or [Batch, Seq, Dirs, H].
    Arg YArg;
    if (Out[0].Buffer >= 0) {
      YArg.Buffer = Out[0].Buffer;
      YArg.Offset = (A.BatchMajor ? D * H : D * Batch * H) * 4;
      Time.YTimeStride = A.BatchMajor ? Dirs * H : Dirs * Batch * H;
      Time.YBatchStride = A.BatchMajor ? Seq * Dirs * H : H;
    }
    const int64_t RBytes = (RecCols + (RDh.Buffer >= 0 ? H : 0)) * H * 4;
    const bool Loop =
        C.getOptions().RecurrenceLoop && useRecurrenceLoop(Batch, RBytes);
    if (Loop) {
      RecurrenceLoopParams P;
      P.IsGru = !K.HasCell;
      P.RecCols = RecCols;
      P.FirstHasState = H0Arg.Buffer >= 0;
      Time.Step = 0;
      if (K.HasCell) {
        P.Lstm.Batch = Batch;
        P.Lstm.Hidden = H;
        P.Lstm.Time = Time;
        P.Lstm.HasCellState = C0Arg.Buffer >= 0;
        P.Lstm.InputForget = A.InputForget;
        P.Lstm.Clip = A.Clip;
      } else {
        P.Gru.Batch = Batch;
        P.Gru.Hidden = H;
        P.Gru.Time = Time;
        P.Gru.RecRowStride = RecCols;
        P.Gru.HasState = P.FirstHasState;
        P.Gru.LinearBeforeReset = Lbr;
        P.Gru.Clip = A.Clip;
      }
      const std::string What = std::string(K.Step) + ".loop f32" + Dir + " (" +
                               std::to_string(Seq) + " steps" +
                               (Lens ? " by sequence_lens)" : ")");
      C.addStep(
          {Nodes, What, false,
           Seq * (2 * Batch * RecCols * H +
                  (RDh.Buffer >= 0 ? 2 * Batch * H * H : 0) + 10 * Batch * H)},
          P,
          {PreArg, RD, RDh, PeepD, RecBiasD, Rec, RecH, Reset, CState, HState,
           YArg, LensArg});
    }
    // Else a GEMM and the gate steps per step.
    for (int64_t S = 0; !Loop && S < Seq; ++S) {
      Time.Step = S;
      const bool HasState = S != 0 || H0Arg.Buffer >= 0;
      // The time of the step, or its number when the lengths pick times.
      const std::string Where =
          std::string(Dir) + " step " +
          (Lens ? std::to_string(S) + " by sequence_lens"
                : std::to_string(Backward ? Seq - 1 - S : S));
      if (HasState)
        addProduct(C, Nodes, (Step + " recurrent product").c_str(), Batch,
                   RecCols, H, {}, RD, {}, HState, Rec);
      if (K.HasCell) {
        LstmCellParams P;
        P.Batch = Batch;
        P.Hidden = H;
        P.Time = Time;
        P.HasCellState = S != 0 || C0Arg.Buffer >= 0;
        P.InputForget = A.InputForget;
        P.Clip = A.Clip;
        C.addStep({Nodes, "lstm.cell f32" + Where, false, 10 * Batch * H}, P,
                  {PreArg, HasState ? Rec : Arg(), PeepD, CState, HState, YArg,
                   LensArg});
        continue;
      }
      GruCellParams P;
      P.Batch = Batch;
      P.Hidden = H;
      P.Time = Time;
      P.RecRowStride = RecCols;
      P.HasState = HasState;
      P.LinearBeforeReset = Lbr;
      P.Clip = A.Clip;
      Arg RecHArg = Lbr ? Arg{Rec.Buffer, 2 * H * 4} : RecH;
      if (!Lbr && HasState) {
        // The reset hidden state, then its product by R's h rows.
        GruCellParams Q = P;
        Q.Stage = GruCellParams::Reset;
        C.addStep({Nodes, "gru.reset f32" + Where, false, 4 * Batch * H}, Q,
                  {PreArg, Rec, Arg(), Arg(), HState, Reset, LensArg});
        addProduct(C, Nodes, "gru reset product", Batch, H, H, {}, RDh, {},
                   Reset, RecH);
      }
      C.addStep({Nodes, "gru.cell f32" + Where, false, 8 * Batch * H}, P,
                {PreArg, HasState ? Rec : Arg(), HasState ? RecHArg : Arg(),
                 RecBiasD, HState, YArg, LensArg});
    }
    for (unsigned I : {1u, 2u})
      if (Out[I].Buffer >= 0) {
        const StateStrides S = getStateStrides(N.getResult(I));
        CopyState(I == 1 ? HState : CState, {Out[I].Buffer, D * S.Dir * 4},
                  false, S, I == 1 ? "Y_h" : "Y_c");
      }
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error cuda::planLstm(PlanContext &C, const Node &N, const FusedTail &T) {
  return planRecurrence(C, N, T, Lstm);
}

llvm::Error cuda::planGru(PlanContext &C, const Node &N, const FusedTail &T) {
  return planRecurrence(C, N, T, Gru);
}
