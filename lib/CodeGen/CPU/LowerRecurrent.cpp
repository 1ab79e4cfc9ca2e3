//===- LowerRecurrent.cpp - Lowering of LSTM and GRU ----------------------===//
//
// W, R and the biases are packed at compile time when they are constants
// (as in exported models), else by every run. A run projects the input of
// every step and direction with one GEMM (biases in its epilogue); then
// each direction walks its steps: the recurrent product of all batch
// entries (a GEMM of the hidden states by the packed R; GRU without
// linear_before_reset needs a second one, of the reset hidden states by
// R's h rows), then the gate step of each batch entry still inside its
// sequence (RecurrentKernels.cpp). Declines non-default activations and
// operands the kernels cannot read in place.
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

/// What distinguishes the two recurrences.
struct CellInfo {
  OpId Op;
  const char *Name;
  unsigned Gates;        ///< Gate rows of W and R per hidden unit.
  unsigned NumActs;      ///< Activations per direction.
  bool HasCell;          ///< LSTM: initial_c, Y_c, peepholes.
  RnnActivation Acts[3]; ///< The defaults, the only ones the kernels run.
};

constexpr CellInfo LstmCell = {
    OpId::LSTM,
    "lstm",
    4,
    3,
    true,
    {RnnActivation::Sigmoid, RnnActivation::Tanh, RnnActivation::Tanh}};
constexpr CellInfo GruCell = {
    OpId::GRU,
    "gru",
    3,
    2,
    false,
    {RnnActivation::Sigmoid, RnnActivation::Tanh, RnnActivation::Tanh}};

/// W, R, B and P in the form the kernels read.
struct RecurrentWeights {
  /// W of every direction: B operand [In x Dirs * Gates * H].
  PackedOperand W;
  /// Per direction, R as B operands: one [H x Gates * H], or for GRU
  /// without linear_before_reset [H x 2H] (gates z, r) and [H x H] (h).
  std::vector<std::vector<PackedOperand>> R;
  /// Projection bias, Dirs * Gates * H: Wb + Rb, except GRU's h gate with
  /// linear_before_reset (Wb only; its Rb is RecBias).
  std::shared_ptr<AlignedFloats> Bias;
  std::vector<float> RecBias; ///< GRU with linear_before_reset: Dirs * H.
  std::vector<float> Peep;    ///< LSTM: Dirs * 3H entries, or empty.
};

/// The projection bias (and GRU's recurrent bias) from row-major \p B and
/// the peepholes \p P (either may be null) into \p Out.
void packBiases(const CellInfo &Cell, bool LinearBeforeReset, const float *B,
                const float *P, int64_t Dirs, int64_t H,
                RecurrentWeights &Out) {
  const int64_t GH = Cell.Gates * H;
  std::vector<float> Bias(size_t(Dirs * GH), 0.0f);
  const bool HasRecBias = Cell.Op == OpId::GRU && LinearBeforeReset;
  if (HasRecBias)
    Out.RecBias.assign(size_t(Dirs * H), 0.0f);
  if (B)
    for (int64_t D = 0; D < Dirs; ++D)
      for (int64_t J = 0; J < GH; ++J) {
        const float Wb = B[D * 2 * GH + J], Rb = B[D * 2 * GH + GH + J];
        if (HasRecBias && J >= 2 * H) {
          Bias[size_t(D * GH + J)] = Wb;
          Out.RecBias[size_t(D * H + J - 2 * H)] = Rb;
        } else {
          Bias[size_t(D * GH + J)] = Wb + Rb;
        }
      }
  Out.Bias = makePaddedFloats(Bias, Dirs * GH);
  if (P)
    Out.Peep.assign(P, P + Dirs * 3 * H);
}

/// Packs columns of a row-major matrix (rows \p RowLen floats apart, from
/// \p Offset) whose floats are fetched on first use: not at all when the
/// derived store already holds the panels.
class LazyRowsPacker final : public BPacker {
public:
  LazyRowsPacker(llvm::function_ref<const float *()> Get, int64_t Offset,
                 int64_t RowLen)
      : Get(Get), Offset(Offset), RowLen(RowLen) {}
  void pack(int64_t N0, int Cols, int64_t K0, int64_t KC, int NR,
            float *Dst) const override {
    if (!Base)
      Base = Get() + Offset;
    for (int64_t K = 0; K < KC; ++K)
      for (int R = 0; R < NR; ++R)
        Dst[K * NR + R] = R < Cols ? Base[(N0 + R) * RowLen + K0 + K] : 0.0f;
  }

private:
  llvm::function_ref<const float *()> Get;
  int64_t Offset, RowLen;
  mutable const float *Base = nullptr;
};

/// The GEMM operands of row-major \p GetW() (the input projection:
/// Dirs * Gates * H columns of In) and of each direction's R into \p Out,
/// each packed by \p PackB(Name, Packer, Columns, K); Name ("W", "R0c0",
/// ...) tells the operands apart.
template <typename PackFn>
void packPanels(const CellInfo &Cell, bool LinearBeforeReset,
                llvm::function_ref<const float *()> GetW,
                llvm::function_ref<const float *()> GetR, int64_t Dirs,
                int64_t H, int64_t In, RecurrentWeights &Out, PackFn PackB) {
  const int64_t GH = Cell.Gates * H;
  LazyRowsPacker WP(GetW, 0, In); // Column = d * Gates * H + gate row.
  Out.W = PackB("W", WP, Dirs * GH, In);
  const bool SplitR = Cell.Op == OpId::GRU && !LinearBeforeReset;
  for (int64_t D = 0; D < Dirs; ++D) {
    Out.R.emplace_back();
    // Columns [Col0, Col0 + Cols) of R[d]^T.
    auto Pack = [&](int64_t Col0, int64_t Cols) {
      LazyRowsPacker RP(GetR, (D * GH + Col0) * H, H);
      Out.R.back().push_back(PackB(
          "R" + std::to_string(D) + "c" + std::to_string(Col0), RP, Cols, H));
    };
    if (SplitR) {
      Pack(0, 2 * H);
      Pack(2 * H, H);
    } else {
      Pack(0, GH);
    }
  }
}

/// Packs the row-major operands \p W, \p R, \p B and \p P (the last two may
/// be null).
RecurrentWeights packWeights(const CellInfo &Cell, bool LinearBeforeReset,
                             const float *W, const float *R, const float *B,
                             const float *P, int64_t Dirs, int64_t H,
                             int64_t In) {
  RecurrentWeights Out;
  packPanels(
      Cell, LinearBeforeReset, [W] { return W; }, [R] { return R; }, Dirs, H,
      In, Out,
      [](const std::string &, const BPacker &Packer, int64_t N, int64_t K) {
        return packB(Packer, N, K);
      });
  packBiases(Cell, LinearBeforeReset, B, P, Dirs, H, Out);
  return Out;
}

/// packWeights for constant operands \p Vals (W, R, B, P; the last two may
/// be null), the GEMM panels through the lowering's derived store under
/// \p Key, so that every specialization of a model shares one packing and
/// W and R are read only when the store lacks it.
RecurrentWeights packConstantWeights(LoweringContext &L, const std::string &Key,
                                     const CellInfo &Cell,
                                     bool LinearBeforeReset,
                                     const Value *const (&Vals)[4],
                                     int64_t Dirs, int64_t H, int64_t In) {
  std::vector<float> Floats[4];
  auto Get = [&](unsigned K) -> const float * {
    if (!Vals[K])
      return nullptr;
    if (Floats[K].empty())
      Floats[K] = getConstantFloats(Vals[K]);
    return Floats[K].data();
  };
  RecurrentWeights Out;
  packPanels(
      Cell, LinearBeforeReset, [&] { return Get(0); }, [&] { return Get(1); },
      Dirs, H, In, Out,
      [&](const std::string &Name, const BPacker &Packer, int64_t N,
          int64_t K) {
        return L.packConstantB(Key + "/" + Name, Packer, N, K,
                               Name == "W" ? Vals[0] : Vals[1]);
      });
  packBiases(Cell, LinearBeforeReset, Get(2), Get(3), Dirs, H, Out);
  return Out;
}

/// Everything a run needs, fixed at compile time.
struct RecurrentPlan {
  CellInfo Cell;
  int64_t Seq = 0, Batch = 0, In = 0, H = 0, Dirs = 1;
  bool BatchMajor = false, ForwardFirst = true;
  float Clip = 0;
  bool InputForget = false, LinearBeforeReset = false;
  /// X's rows (one per step and batch entry, in X's order) are XRow apart.
  int64_t XRow = 0;
  /// The weights when all are constants (else packed by every run).
  RecurrentWeights Weights;
  /// initial_h / initial_c element (d, b, j) at offset
  /// d * S[0] + b * S[1] + j * S[2].
  int64_t H0Str[3] = {0, 0, 0}, C0Str[3] = {0, 0, 0};
  ElementType LensType = ElementType::I32;
  std::string Where; ///< describeNode, for run-time errors.

  int64_t gateWidth() const { return Cell.Gates * H; }
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

/// Reads and checks sequence_lens into \p Len; false (with \p Fr failed)
/// on an entry outside [0, Seq].
bool readLengths(Frame &Fr, const RecurrentPlan &S, BufferId LensB,
                 std::vector<int64_t> &Len) {
  Len.assign(size_t(S.Batch), S.Seq);
  if (LensB < 0)
    return true;
  const uint8_t *LP = Fr.bytes(LensB);
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
      Fr.fail(S.Where + ": sequence_lens entry " + std::to_string(B) + " is " +
              std::to_string(V) + ", expected 0 to " + std::to_string(S.Seq));
      return false;
    }
    Len[size_t(B)] = V;
  }
  return true;
}

/// A GEMM C[M x N] (rows LdM apart) = A * B, A's rows H apart.
void runRowsTimesPacked(const float *A, int64_t M, int64_t K,
                        const PackedOperand &B, float *C, int64_t LdM,
                        int Threads) {
  DirectA DA = DirectA::matrix(A, M, K, K);
  GemmProblem G;
  G.M = M;
  G.N = B.Extent;
  G.K = K;
  G.Direct = &DA;
  G.PackedB = &B;
  G.C = C;
  G.LdM = LdM;
  runGemm(G, Threads);
}

bool lowerRecurrence(LoweringContext &L, const Node &N, const CellInfo &Cell) {
  auto AttrsOr = readRecurrenceAttrs(N, Cell.NumActs);
  if (!AttrsOr) {
    llvm::consumeError(AttrsOr.takeError());
    return false;
  }
  const RecurrenceAttrs &A = *AttrsOr;
  for (unsigned I = 0; I < A.Activations.size(); ++I)
    if (A.Activations[I] != Cell.Acts[I % Cell.NumActs])
      return false;
  auto Operand = [&](unsigned I) -> const Value * {
    return N.hasOperand(I) ? N.getOperand(I) : nullptr;
  };
  const Value *X = Operand(0), *Lens = Operand(4), *H0 = Operand(5),
              *C0 = Cell.HasCell ? Operand(6) : nullptr;
  const unsigned WeightOperands[] = {1, 2, 3, 7};
  const unsigned NumWeights = Cell.HasCell ? 4 : 3;
  if (!X || X->getType().getElementType() != ElementType::F32 ||
      !isReadableWeight(Operand(1)) || !isReadableWeight(Operand(2)))
    return false;
  for (unsigned K = 2; K < NumWeights; ++K)
    if (Operand(WeightOperands[K]) &&
        !isReadableWeight(Operand(WeightOperands[K])))
      return false;
  const Graph &G = *N.getGraph();
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (isResultUsed(G, N, I) &&
        !N.getResult(I)->getType().getLayout().isIdentity())
      return false;

  auto Plan = std::make_shared<RecurrentPlan>();
  RecurrentPlan &S = *Plan;
  auto XS = X->getType().getStaticShape();
  auto XStr = getStrides(X->getType());
  S.Cell = Cell;
  S.BatchMajor = A.BatchMajor;
  S.Seq = XS[A.BatchMajor ? 1 : 0];
  S.Batch = XS[A.BatchMajor ? 0 : 1];
  S.In = XS[2];
  S.H = Operand(2)->getType().getStaticShape()[2];
  S.Dirs = A.NumDirections;
  S.ForwardFirst = A.Forward;
  S.Clip = A.Clip;
  S.InputForget = A.InputForget;
  S.LinearBeforeReset = A.LinearBeforeReset;
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

  const int64_t H = S.H, GH = S.gateWidth(), Dirs = S.Dirs;
  // Weights that are all constants are packed now, others by every run.
  bool AllConstant = true;
  for (unsigned K = 0; K < NumWeights; ++K)
    AllConstant &= !Operand(WeightOperands[K]) ||
                   Operand(WeightOperands[K])->getConstantData();
  if (AllConstant) {
    const Value *Vals[4] = {nullptr, nullptr, nullptr, nullptr};
    for (unsigned K = 0; K < NumWeights; ++K)
      Vals[K] = Operand(WeightOperands[K]);
    // Keyed by the node's first result (Y, Y_h or Y_c: whichever it has).
    std::string Key = "rnn";
    for (unsigned I = 0; I < N.getNumResults() && Key == "rnn"; ++I)
      if (N.hasResult(I))
        Key += "/" + N.getResult(I)->getName();
    S.Weights = packConstantWeights(L, Key, Cell, S.LinearBeforeReset, Vals,
                                    Dirs, H, S.In);
  }
  S.Where = describeNode(N);
  L.own(Plan);

  std::vector<BufferId> Reads{L.getBuffer(X)};
  const BufferId XB = Reads[0];
  const BufferId LensB = Lens ? L.getBuffer(Lens) : -1;
  const BufferId H0B = H0 ? L.getBuffer(H0) : -1;
  const BufferId C0B = C0 ? L.getBuffer(C0) : -1;
  BufferId WeightB[4] = {-1, -1, -1, -1};
  if (!AllConstant)
    for (unsigned K = 0; K < NumWeights; ++K)
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
  // product, the hidden state, the cell state (LSTM) or the reset hidden
  // state (GRU).
  const int64_t ProjFloats = S.Seq * S.Batch * Dirs * GH;
  const int64_t ScratchFloats = ProjFloats + S.Batch * (GH + 2 * H);
  const BufferId ScratchB = L.defineScratch(ScratchFloats * 4);
  Writes.push_back(ScratchB);
  const int Threads = L.getThreads();
  const int64_t Flops =
      2 * S.Seq * S.Batch * Dirs * GH * (S.In + H) + 10 * S.Seq * S.Batch * H;
  std::string Name = std::string(Cell.Name) + "." +
                     (Dirs == 2   ? "bidirectional"
                      : A.Forward ? "forward"
                                  : "reverse");
  const BufferId YB = Out[0], YHB = Out[1], YCB = Out[2];
  L.addStep(
      {N.getResult(0)->getName(), Name, false, Flops}, Reads, Writes,
      [=](Frame &Fr) {
        const RecurrentPlan &S = *Plan;
        const int64_t H = S.H, GH = S.gateWidth(), Dirs = S.Dirs;
        const bool IsLstm = S.Cell.HasCell;
        float *Proj = Fr.f32(ScratchB);
        float *Rec = Proj + S.Seq * S.Batch * Dirs * GH;
        float *Hs = Rec + S.Batch * GH;
        float *Cs = Hs + S.Batch * H; // LSTM: cells; GRU: reset states.
        float *Y = YB >= 0 ? Fr.f32(YB) : nullptr;
        std::vector<int64_t> Len;
        if (!readLengths(Fr, S, LensB, Len))
          return;
        if (Y && LensB >= 0)
          std::memset(Y, 0, size_t(S.Seq * Dirs * S.Batch * H) * 4);
        RecurrentWeights RunWeights;
        if (WeightB[0] >= 0) {
          const float *Ptr[4];
          for (unsigned K = 0; K < 4; ++K)
            Ptr[K] = WeightB[K] >= 0 ? Fr.f32(WeightB[K]) : nullptr;
          RunWeights = packWeights(S.Cell, S.LinearBeforeReset, Ptr[0], Ptr[1],
                                   Ptr[2], Ptr[3], Dirs, H, S.In);
        }
        const RecurrentWeights &Wt = WeightB[0] >= 0 ? RunWeights : S.Weights;
        // Input projection of every step and direction, biases added.
        GemmProblem Proj0;
        Proj0.M = S.Seq * S.Batch;
        Proj0.N = Dirs * GH;
        Proj0.K = S.In;
        DirectA XA = DirectA::matrix(Fr.f32(XB), Proj0.M, S.In, S.XRow);
        Proj0.Direct = &XA;
        Proj0.PackedB = &Wt.W;
        Proj0.C = Proj;
        Proj0.LdM = Dirs * GH;
        Proj0.Epi.Bias = Wt.Bias->get();
        runGemm(Proj0, Threads);

        const float *H0 = H0B >= 0 ? Fr.f32(H0B) : nullptr;
        const float *C0 = C0B >= 0 ? Fr.f32(C0B) : nullptr;
        for (int64_t D = 0; D < Dirs; ++D) {
          const bool Backward = D == 1 || !S.ForwardFirst;
          for (int64_t B = 0; B < S.Batch; ++B)
            for (int64_t J = 0; J < H; ++J) {
              Hs[B * H + J] =
                  H0 ? H0[D * S.H0Str[0] + B * S.H0Str[1] + J * S.H0Str[2]]
                     : 0.0f;
              if (IsLstm)
                Cs[B * H + J] =
                    C0 ? C0[D * S.C0Str[0] + B * S.C0Str[1] + J * S.C0Str[2]]
                       : 0.0f;
            }
          const std::vector<PackedOperand> &R = Wt.R[size_t(D)];
          for (int64_t Step = 0; Step < S.Seq; ++Step) {
            runRowsTimesPacked(Hs, S.Batch, H, R[0], Rec, GH, Threads);
            auto Active = [&](int64_t B, int64_t &T) {
              const int64_t BL = Len[size_t(B)];
              T = Backward ? BL - 1 - Step : Step;
              return Step < BL;
            };
            const float *ProjD = Proj + D * GH;
            int64_t T;
            if (R.size() == 2) {
              // GRU: the reset hidden states, then their product by R's h
              // rows.
              for (int64_t B = 0; B < S.Batch; ++B)
                if (Active(B, T))
                  runGruReset(ProjD + S.xRowOf(T, B) * Dirs * GH + H,
                              Rec + B * GH + H, Hs + B * H, Cs + B * H, H,
                              S.Clip);
              runRowsTimesPacked(Cs, S.Batch, H, R[1], Rec + 2 * H, GH,
                                 Threads);
            }
            for (int64_t B = 0; B < S.Batch; ++B) {
              if (!Active(B, T))
                continue;
              const float *Pre = ProjD + S.xRowOf(T, B) * Dirs * GH;
              float *YRow = Y ? Y + S.yOffset(T, D, B) : nullptr;
              if (IsLstm) {
                LstmGates G;
                G.Pre = Pre;
                G.Rec = Rec + B * GH;
                G.Peep = Wt.Peep.empty() ? nullptr : Wt.Peep.data() + D * 3 * H;
                G.Cell = Cs + B * H;
                G.HiddenOut = Hs + B * H;
                G.Y = YRow;
                G.Hidden = H;
                G.Clip = S.Clip;
                G.InputForget = S.InputForget;
                runLstmGates(G);
              } else {
                GruGates G;
                G.Pre = Pre;
                G.Rec = Rec + B * GH;
                G.RecBias =
                    Wt.RecBias.empty() ? nullptr : Wt.RecBias.data() + D * H;
                G.State = Hs + B * H;
                G.Y = YRow;
                G.Hidden = H;
                G.Clip = S.Clip;
                runGruGates(G);
              }
            }
          }
          for (int64_t B = 0; B < S.Batch; ++B) {
            if (YHB >= 0)
              std::memcpy(Fr.f32(YHB) + S.stateOffset(D, B), Hs + B * H,
                          size_t(H) * 4);
            if (YCB >= 0)
              std::memcpy(Fr.f32(YCB) + S.stateOffset(D, B), Cs + B * H,
                          size_t(H) * 4);
          }
        }
      });
  return true;
}

} // namespace

bool cpu::lowerLSTM(LoweringContext &L, const Node &N, const FusedTail &) {
  return lowerRecurrence(L, N, LstmCell);
}

bool cpu::lowerGRU(LoweringContext &L, const Node &N, const FusedTail &) {
  return lowerRecurrence(L, N, GruCell);
}
