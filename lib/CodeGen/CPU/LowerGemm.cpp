//===- LowerGemm.cpp - Gemm and MatMul ------------------------------------===//
//
// Gemm and MatMul on the blocked GEMM (Gemm.h): constant weights packed
// at compile time with alpha folded in, or two activations read through
// their strides (a channels-last rank-3 operand is a batch of transposed
// matrices). Bias, residual and activation go in the GEMM's epilogue.
//
//===----------------------------------------------------------------------===//

#include "ProgramImpl.h"

#include <memory>

using namespace strider;
using namespace strider::cpu;

namespace {

/// Element function over a row-major matrix, as a GEMM operand packer.
/// Packs a constant matrix, read (row-major) on the first pack() call.
class LazyMatrixPacker final : public BPacker {
public:
  LazyMatrixPacker(const Value *V, int64_t RowStride, int64_t ColStride,
                   float Scale)
      : V(V), RowStride(RowStride), ColStride(ColStride), Scale(Scale) {}
  void pack(int64_t N0, int Cols, int64_t K0, int64_t KC, int NR,
            float *Dst) const override {
    if (M.empty())
      M = getConstantFloats(V);
    for (int64_t K = 0; K < KC; ++K)
      for (int C = 0; C < NR; ++C)
        Dst[K * NR + C] =
            C < Cols
                ? Scale * M[size_t((K0 + K) * RowStride + (N0 + C) * ColStride)]
                : 0.0f;
  }

private:
  const Value *V;
  mutable std::vector<float> M;
  int64_t RowStride, ColStride;
  float Scale;
};

struct MatmulPlan {
  PackedOperand B;
  std::shared_ptr<AlignedFloats> Bias;
  Activation Act;
};

/// Y[M x N] = A * B + bias, A an activation read through strides, one GEMM
/// per batch entry.
bool addMatmulStep(LoweringContext &L, const Node &N, const FusedTail &Tail,
                   const Value *A, int64_t Batch, int64_t M, int64_t K,
                   int64_t ARow, int64_t ACol, int64_t ABatch,
                   std::shared_ptr<MatmulPlan> Plan, int64_t YBatch,
                   const std::string &Name) {
  BufferId AB = L.getBuffer(A);
  BufferId YB = L.defineBuffer(Tail.Result);
  const int64_t NCols = Plan->B.Extent;
  const int Threads = L.getThreads();
  L.own(Plan);
  L.addStep({Tail.Result->getName(), withTail(Name, Tail), false,
             2 * Batch * M * NCols * K},
            {AB}, {YB}, [=](Frame &Fr) {
              const float *Ap = Fr.f32(AB);
              float *Yp = Fr.f32(YB);
              for (int64_t B = 0; B < Batch; ++B) {
                auto AP = makeStridedAPacker(Ap + B * ABatch, ARow, ACol);
                GemmProblem G;
                G.M = M;
                G.N = NCols;
                G.K = K;
                // Rows with contiguous elements are read in place.
                DirectA D = DirectA::matrix(Ap + B * ABatch, M, K, ARow);
                if (ACol == 1)
                  G.Direct = &D;
                else
                  G.A = &AP;
                G.PackedB = &Plan->B;
                G.C = Yp + B * YBatch;
                G.LdM = NCols;
                G.LdN = 1;
                G.Epi.Bias = Plan->Bias ? Plan->Bias->get() : nullptr;
                G.Epi.Act = Plan->Act;
                runGemm(G, Threads);
              }
            });
  (void)N;
  return true;
}

bool isRowMajor(const TensorType &T) { return T.getLayout().isIdentity(); }

} // namespace

/// Gemm whose B is an activation (alpha 1): A' and B' read through their
/// strides (transA/transB swap them); C a column bias (scaled by beta)
/// taken from a constant at compile time or from its buffer at run time,
/// or a full row-major M x N matrix (beta 1) added as the residual.
static bool lowerGemmOfActivations(LoweringContext &L, const Node &N,
                                   const FusedTail &Tail) {
  const Value *A = N.getOperand(0), *B = N.getOperand(1);
  const Value *C = N.getNumOperands() > 2 ? N.getOperand(2) : nullptr;
  const float Beta = N.getFloatAttr("beta", 1.0f);
  if (!isF32(B) || N.getFloatAttr("alpha", 1.0f) != 1.0f)
    return false;
  const bool TA = N.getIntAttr("transA", 0), TB = N.getIntAttr("transB", 0);
  auto AS = A->getType().getStaticShape(), BS = B->getType().getStaticShape();
  auto AStr = getStrides(A->getType()), BStr = getStrides(B->getType());
  const int64_t M = TA ? AS[1] : AS[0], K = TA ? AS[0] : AS[1];
  const int64_t NC = TB ? BS[0] : BS[1];
  const int64_t ARow = TA ? AStr[1] : AStr[0], ACol = TA ? AStr[0] : AStr[1];
  const int64_t BRow = TB ? BStr[1] : BStr[0], BCol = TB ? BStr[0] : BStr[1];
  // The bias: none, constant (scaled now) or an activation (scaled per run).
  std::shared_ptr<AlignedFloats> Bias;
  BufferId CB = -1, RB = -1;
  if (C && Beta != 0.0f) {
    auto CS = C->getType().getStaticShape();
    int64_t Count = 1;
    for (int64_t D : CS)
      Count *= D;
    if (!isF32(C))
      return false;
    if (CS.size() == 2 && CS[0] == M && CS[1] == NC && M > 1 && Beta == 1.0f &&
        isRowMajor(C->getType())) {
      RB = L.getBuffer(C);
    } else if (Count != NC || (CS.size() == 2 && CS[0] != 1)) {
      return false;
    }
  }
  if (C && Beta != 0.0f && RB < 0) {
    std::vector<float> Values = getConstantFloats(C);
    if (Values.empty()) {
      CB = L.getBuffer(C);
      Values.assign(size_t(NC), 0.0f);
    }
    for (float &V : Values)
      V *= Beta;
    Bias = makePaddedFloats(Values, NC);
  }
  BufferId AB = L.getBuffer(A), BB = L.getBuffer(B);
  BufferId YB = L.defineBuffer(Tail.Result);
  const Activation Act = Tail.Act;
  const int Threads = L.getThreads();
  std::vector<BufferId> Reads = {AB, BB};
  if (CB >= 0)
    Reads.push_back(CB);
  if (RB >= 0)
    Reads.push_back(RB);
  L.addStep({Tail.Result->getName(), withTail("gemm.dynamic", Tail), false,
             2 * M * NC * K},
            Reads, {YB}, [=](Frame &Fr) {
              if (CB >= 0)
                for (int64_t J = 0; J < NC; ++J)
                  (*Bias)[size_t(J)] = Beta * Fr.f32(CB)[J];
              Epilogue Epi;
              Epi.Bias = Bias ? Bias->get() : nullptr;
              Epi.Residual = RB >= 0 ? Fr.f32(RB) : nullptr;
              Epi.Act = Act;
              runGemmOfActivations(Fr.f32(AB), ARow, ACol, Fr.f32(BB), BRow,
                                   BCol, M, NC, K, Fr.f32(YB), NC, 1, Epi,
                                   Threads);
            });
  return true;
}

bool cpu::lowerGemm(LoweringContext &L, const Node &N, const FusedTail &Tail) {
  const Value *A = N.getOperand(0);
  if (!isF32(A) || Tail.Residual || !isRowMajor(Tail.Result->getType()))
    return false;
  if (!N.getOperand(1)->getConstantData())
    return lowerGemmOfActivations(L, N, Tail);
  if (!isConstantF32(N.getOperand(1)))
    return false;
  const float Alpha = N.getFloatAttr("alpha", 1.0f);
  const float Beta = N.getFloatAttr("beta", 1.0f);
  const bool TA = N.getIntAttr("transA", 0), TB = N.getIntAttr("transB", 0);
  auto AS = A->getType().getStaticShape();
  auto BS = N.getOperand(1)->getType().getStaticShape();
  auto AStr = getStrides(A->getType());
  const int64_t M = TA ? AS[1] : AS[0], K = TA ? AS[0] : AS[1];
  const int64_t NC = TB ? BS[0] : BS[1];
  auto Plan = std::make_shared<MatmulPlan>();
  Plan->Act = Tail.Act;
  {
    // B is read only when a DerivedStore does not hold it packed.
    LazyMatrixPacker BP(N.getOperand(1), TB ? 1 : NC, TB ? K : 1, Alpha);
    Plan->B = L.packConstantB("gemm/" + N.getResult(0)->getName(), BP, NC, K,
                              N.getOperand(1));
  }
  if (N.hasOperand(2)) {
    std::vector<float> C = getConstantFloats(N.getOperand(2));
    auto CS = N.getOperand(2)->getType().getStaticShape();
    int64_t Count = 1;
    for (int64_t D : CS)
      Count *= D;
    // Only a bias along the columns ([N] or [1, N]) folds into the
    // epilogue.
    if (C.empty() || Count != NC || (CS.size() == 2 && CS[0] != 1))
      return false;
    for (float &V : C)
      V *= Beta;
    Plan->Bias = makePaddedFloats(C, NC);
  }
  return addMatmulStep(L, N, Tail, A, 1, M, K, TA ? AStr[1] : AStr[0],
                       TA ? AStr[0] : AStr[1], 0, Plan, 0, "gemm");
}

/// MatMul of two activations: A [..., M, K] and B [..., K, N] with the same
/// batch dims (or B of rank 2), both read through their strides.
static bool lowerMatMulOfActivations(LoweringContext &L, const Node &N,
                                     const FusedTail &Tail) {
  const Value *A = N.getOperand(0), *B = N.getOperand(1);
  const TensorType &AT = A->getType(), &BT = B->getType();
  if (!isF32(B))
    return false;
  auto AS = AT.getStaticShape(), BS = BT.getStaticShape();
  auto AStr = getStrides(AT), BStr = getStrides(BT);
  unsigned R = AS.size(), RB = BS.size();
  if (RB != 2 && RB != R)
    return false;
  if (RB == R)
    for (unsigned I = 0; I + 2 < R; ++I)
      if (AS[I] != BS[I])
        return false;
  // Batch dims of each operand must nest (one stride for all of them).
  int64_t Batch = 1;
  for (unsigned I = 0; I + 2 < R; ++I)
    Batch *= AS[I];
  for (unsigned I = 0; I + 3 < R; ++I)
    if (AStr[I] != AStr[I + 1] * AS[I + 1] ||
        (RB == R && BStr[I] != BStr[I + 1] * BS[I + 1]))
      return false;
  const int64_t M = AS[R - 2], K = AS[R - 1], NC = BS[RB - 1];
  const int64_t ABatch = R > 2 ? AStr[R - 3] : 0;
  const int64_t BBatch = RB > 2 ? BStr[RB - 3] : 0;
  const int64_t ARow = AStr[R - 2], ACol = AStr[R - 1];
  const int64_t BRow = BStr[RB - 2], BCol = BStr[RB - 1];
  BufferId AB = L.getBuffer(A), BB = L.getBuffer(B);
  BufferId YB = L.defineBuffer(Tail.Result);
  const Activation Act = Tail.Act;
  const int Threads = L.getThreads();
  L.addStep({Tail.Result->getName(), withTail("matmul.dynamic", Tail), false,
             2 * Batch * M * NC * K},
            {AB, BB}, {YB}, [=](Frame &Fr) {
              Epilogue Epi;
              Epi.Act = Act;
              for (int64_t I = 0; I < Batch; ++I)
                runGemmOfActivations(Fr.f32(AB) + I * ABatch, ARow, ACol,
                                     Fr.f32(BB) + I * BBatch, BRow, BCol, M, NC,
                                     K, Fr.f32(YB) + I * M * NC, NC, 1, Epi,
                                     Threads);
            });
  return true;
}

bool cpu::lowerMatMul(LoweringContext &L, const Node &N,
                      const FusedTail &Tail) {
  const Value *A = N.getOperand(0);
  const TensorType &BT = N.getOperand(1)->getType();
  if (!isF32(A) || Tail.Residual || A->getType().getRank() < 2 ||
      BT.getRank() < 2 || !isRowMajor(Tail.Result->getType()))
    return false;
  if (!N.getOperand(1)->getConstantData())
    return lowerMatMulOfActivations(L, N, Tail);
  if (BT.getRank() != 2)
    return false;
  if (!isConstantF32(N.getOperand(1)))
    return false;
  auto AS = A->getType().getStaticShape();
  auto AStr = getStrides(A->getType());
  unsigned R = AS.size();
  auto BS = BT.getStaticShape();
  const int64_t M = AS[R - 2], K = AS[R - 1], NC = BS[1];
  // Batch dims must nest (one stride for all of them).
  int64_t Batch = 1;
  for (unsigned I = 0; I + 2 < R; ++I)
    Batch *= AS[I];
  int64_t ABatch = R > 2 ? AStr[R - 3] : 0;
  for (unsigned I = 0; I + 3 < R; ++I)
    if (AStr[I] != AStr[I + 1] * AS[I + 1])
      return false;
  auto Plan = std::make_shared<MatmulPlan>();
  Plan->Act = Tail.Act;
  {
    LazyMatrixPacker BP(N.getOperand(1), NC, 1, 1.0f);
    Plan->B = L.packConstantB("matmul/" + N.getResult(0)->getName(), BP, NC, K,
                              N.getOperand(1));
  }
  return addMatmulStep(L, N, Tail, A, Batch, M, K, AStr[R - 2], AStr[R - 1],
                       ABatch, Plan, M * NC, "matmul");
}
