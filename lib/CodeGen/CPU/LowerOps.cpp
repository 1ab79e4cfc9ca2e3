//===- LowerOps.cpp - Lowering of the non-convolution ops -----------------===//
//
// Gemm/MatMul (constant weights packed at compile time with alpha folded
// in, or two activations), activations, broadcasting binaries, batch
// normalization and pooling. Each function declines (returns false) outside the
// cases its kernel covers, and the node then runs its reference kernel.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ProgramImpl.h"

#include "strider/IR/LayoutAlgebra.h"
#include "strider/IR/WindowGeometry.h"
#include "strider/Runtime/ResizeSampling.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <iterator>
#include <limits>

using namespace strider;
using namespace strider::cpu;

namespace {

bool isF32(const Value *V) {
  return V && V->getType().getElementType() == ElementType::F32;
}

std::string withTail(std::string Name, const FusedTail &T) {
  if (T.Residual)
    Name += "+add";
  if (!T.Act.isNone())
    Name += std::string("+") + T.Act.getName();
  return Name;
}

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
  ProgramImpl *P = &L.getProgram();
  BufferId AB = L.getBuffer(A);
  BufferId YB = L.defineBuffer(Tail.Result);
  const int64_t NCols = Plan->B.Extent;
  const int Threads = L.getThreads();
  L.own(Plan);
  L.addStep({Tail.Result->getName(), withTail(Name, Tail), false,
             2 * Batch * M * NCols * K},
            {AB}, {YB}, [=]() {
              const float *Ap = P->f32(AB);
              float *Yp = P->f32(YB);
              for (int64_t B = 0; B < Batch; ++B) {
                StridedAPacker AP(Ap + B * ABatch, ARow, ACol);
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
  ProgramImpl *P = &L.getProgram();
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
            Reads, {YB}, [=]() {
              if (CB >= 0)
                for (int64_t J = 0; J < NC; ++J)
                  (*Bias)[size_t(J)] = Beta * P->f32(CB)[J];
              Epilogue Epi;
              Epi.Bias = Bias ? Bias->get() : nullptr;
              Epi.Residual = RB >= 0 ? P->f32(RB) : nullptr;
              Epi.Act = Act;
              runGemmOfActivations(P->f32(AB), ARow, ACol, P->f32(BB), BRow,
                                   BCol, M, NC, K, P->f32(YB), NC, 1, Epi,
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
    Plan->B = L.packConstantB("gemm/" + N.getResult(0)->getName(), BP, NC, K);
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
  ProgramImpl *P = &L.getProgram();
  BufferId AB = L.getBuffer(A), BB = L.getBuffer(B);
  BufferId YB = L.defineBuffer(Tail.Result);
  const Activation Act = Tail.Act;
  const int Threads = L.getThreads();
  L.addStep({Tail.Result->getName(), withTail("matmul.dynamic", Tail), false,
             2 * Batch * M * NC * K},
            {AB, BB}, {YB}, [=]() {
              Epilogue Epi;
              Epi.Act = Act;
              for (int64_t I = 0; I < Batch; ++I)
                runGemmOfActivations(P->f32(AB) + I * ABatch, ARow, ACol,
                                     P->f32(BB) + I * BBatch, BRow, BCol, M, NC,
                                     K, P->f32(YB) + I * M * NC, NC, 1, Epi,
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
    Plan->B = L.packConstantB("matmul/" + N.getResult(0)->getName(), BP, NC,
                              K);
  }
  return addMatmulStep(L, N, Tail, A, Batch, M, K, AStr[R - 2], AStr[R - 1],
                       ABatch, Plan, M * NC, "matmul");
}

bool cpu::lowerUnary(LoweringContext &L, const Node &N, const FusedTail &Tail) {
  Activation Act;
  const TensorType &XT = N.getOperand(0)->getType();
  const TensorType &YT = N.getResult(0)->getType();
  // Over the flat buffer: both layouts must hold the same bytes.
  if (!getFusableActivation(N, Act) || !isF32(N.getOperand(0)) ||
      XT.getShape() != YT.getShape() ||
      !layout::areLayoutsEquivalent(XT.getShape(), XT.getLayout(),
                                    YT.getLayout(), layout::DimBindings()))
    return false;
  ProgramImpl *P = &L.getProgram();
  const Value *X = N.getOperand(0);
  BufferId XB = L.getBuffer(X);
  BufferId YB;
  if (XT == YT && L.canOverwrite(X, L.getNodeIndex(&N))) {
    L.alias(Tail.Result, X);
    YB = XB;
  } else {
    YB = L.defineBuffer(Tail.Result);
  }
  const int64_t Count = *X->getType().getNumElements();
  const int Threads = L.getThreads();
  L.addStep(
      {Tail.Result->getName(), std::string("unary.") + Act.getName(), false},
      {XB}, {YB},
      [=]() { runUnary(Act, P->f32(XB), P->f32(YB), Count, Threads); });
  return true;
}

/// The kernel operation of each binary or variadic op.
static const std::pair<OpId, BinaryOp> BinaryOps[] = {
    {OpId::Add, BinaryOp::Add}, {OpId::Sub, BinaryOp::Sub},
    {OpId::Mul, BinaryOp::Mul}, {OpId::Div, BinaryOp::Div},
    {OpId::Max, BinaryOp::Max}, {OpId::Min, BinaryOp::Min},
    {OpId::Sum, BinaryOp::Add}, {OpId::PRelu, BinaryOp::PRelu},
    {OpId::Pow, BinaryOp::Pow},
};

/// A variadic op of one operand: a copy (with the fused activation) over
/// the flat buffers, when both layouts hold the same bytes.
static bool lowerSingleOperand(LoweringContext &L, const Node &N,
                               const FusedTail &Tail) {
  const Value *X = N.getOperand(0);
  const TensorType &XT = X->getType(), &YT = Tail.Result->getType();
  if (!isF32(X) || XT.getShape() != YT.getShape() ||
      !layout::areLayoutsEquivalent(XT.getShape(), XT.getLayout(),
                                    YT.getLayout(), layout::DimBindings()))
    return false;
  ProgramImpl *P = &L.getProgram();
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Tail.Result);
  const int64_t Count = *XT.getNumElements();
  const Activation Act = Tail.Act;
  const int Threads = L.getThreads();
  L.addStep({Tail.Result->getName(),
             withTail(std::string("copy.") + N.getOpType().lower(), Tail),
             false},
            {XB}, {YB},
            [=]() { runUnary(Act, P->f32(XB), P->f32(YB), Count, Threads); });
  return true;
}

bool cpu::lowerBinary(LoweringContext &L, const Node &N,
                      const FusedTail &Tail) {
  const Value *Y = N.getResult(0);
  const unsigned NumOps = N.getNumOperands();
  if (NumOps == 0 || Tail.Residual)
    return false;
  if (!isF32(Y))
    return lowerArith(L, N, Tail);
  if (NumOps == 1)
    return N.getOpId() != OpId::PRelu && N.getOpId() != OpId::Pow &&
           lowerSingleOperand(L, N, Tail);
  for (unsigned I = 0; I < NumOps; ++I)
    if (!isF32(N.getOperand(I)))
      return false;
  const TensorType &YT = Y->getType();
  if (YT.getRank() > 6)
    return false;
  const auto *OpIt = llvm::find_if(
      BinaryOps, [&](const auto &E) { return E.first == N.getOpId(); });
  if (OpIt == std::end(BinaryOps))
    return false;
  // A variadic op folds its operands left to right: Y = Op0 op Op1, then
  // Y = Y op Op_k (Y read with its own dense strides), the activation in
  // the last pass only.
  BinaryParams First;
  First.Op = OpIt->second;
  First.Rank = int(YT.getRank());
  getPhysicalShape(YT, First.Shape);
  getBroadcastStrides(N.getOperand(0)->getType(), YT, First.SA);
  int64_t DenseY[6];
  int64_t Stride = 1;
  for (int I = First.Rank; I-- > 0;) {
    DenseY[I] = Stride;
    Stride *= First.Shape[I];
  }
  std::vector<BinaryParams> Passes;
  for (unsigned K = 1; K < NumOps; ++K) {
    BinaryParams BP = First;
    if (K > 1)
      std::copy(DenseY, DenseY + BP.Rank, BP.SA);
    getBroadcastStrides(N.getOperand(K)->getType(), YT, BP.SB);
    if (K + 1 == NumOps)
      BP.Act = Tail.Act;
    Passes.push_back(BP);
  }

  ProgramImpl *P = &L.getProgram();
  std::vector<BufferId> Reads;
  for (unsigned I = 0; I < NumOps; ++I)
    Reads.push_back(L.getBuffer(N.getOperand(I)));
  const Value *A = N.getOperand(0), *B = N.getOperand(1);
  // Pow(x, 2) (variance in decomposed normalizations) is x * x: exact, and
  // no exp/log.
  std::string Kernel = std::string("binary.") + N.getOpType().lower();
  const TensorData *Exponent = B->getConstantData();
  if (N.getOpId() == OpId::Pow && Exponent && Exponent->getNumElements() == 1 &&
      Exponent->getDouble(0) == 2.0) {
    Kernel += ".square";
    Passes[0].Op = BinaryOp::Mul;
    std::copy(Passes[0].SA, Passes[0].SA + Passes[0].Rank, Passes[0].SB);
    Reads[1] = Reads[0];
  }
  BufferId YB;
  size_t Index = L.getNodeIndex(Tail.Last);
  if (NumOps == 2 && A->getType() == YT && L.canOverwrite(A, Index)) {
    L.alias(Tail.Result, A);
    YB = Reads[0];
  } else if (NumOps == 2 && B->getType() == YT && B != A &&
             L.canOverwrite(B, Index)) {
    L.alias(Tail.Result, B);
    YB = Reads[1];
  } else {
    YB = L.defineBuffer(Tail.Result);
  }
  const int Threads = L.getThreads();
  L.addStep({Tail.Result->getName(), withTail(Kernel, Tail), false}, Reads,
            {YB}, [=]() {
              float *Yp = P->f32(YB);
              for (size_t K = 0; K < Passes.size(); ++K)
                runBinary(Passes[K], K ? Yp : P->f32(Reads[0]),
                          P->f32(Reads[K + 1]), Yp, Threads);
            });
  return true;
}

bool cpu::lowerBatchNorm(LoweringContext &L, const Node &N,
                         const FusedTail &Tail) {
  const Value *X = N.getOperand(0);
  if (!isF32(X) || Tail.Residual || N.getIntAttr("training_mode", 0) != 0)
    return false;
  for (unsigned I = 1; I < N.getNumResults(); ++I)
    if (N.hasResult(I))
      return false;
  std::vector<float> Sc = getConstantFloats(N.getOperand(1)),
                     Bi = getConstantFloats(N.getOperand(2)),
                     Mean = getConstantFloats(N.getOperand(3)),
                     Var = getConstantFloats(N.getOperand(4));
  const TensorType &XT = X->getType(), &YT = Tail.Result->getType();
  if (Sc.empty() || Bi.empty() || Mean.empty() || Var.empty() ||
      XT.getRank() < 2 || XT.getShape() != YT.getShape() ||
      !layout::areLayoutsEquivalent(XT.getShape(), XT.getLayout(),
                                    YT.getLayout(), layout::DimBindings()))
    return false;
  auto Shape = XT.getStaticShape();
  const int64_t Batch = Shape[0], C = Shape[1];
  int64_t Pixels = 1;
  for (unsigned I = 2; I < Shape.size(); ++I)
    Pixels *= Shape[I];
  const ChannelOrder Order = getChannelOrder(XT);
  if (Order == ChannelOrder::Other)
    return false;
  const bool ChannelsLast = Order == ChannelOrder::Last;
  const float Eps = N.getFloatAttr("epsilon", 1e-5f);
  std::vector<float> ScaleV(static_cast<size_t>(C)), ShiftV(ScaleV.size());
  for (int64_t I = 0; I < C; ++I) {
    double A = double(Sc[size_t(I)]) / std::sqrt(double(Var[size_t(I)]) + Eps);
    ScaleV[size_t(I)] = float(A);
    ShiftV[size_t(I)] =
        float(double(Bi[size_t(I)]) - double(Mean[size_t(I)]) * A);
  }
  auto Scale = makePaddedFloats(ScaleV, C), Shift = makePaddedFloats(ShiftV, C);
  L.own(Scale);
  L.own(Shift);
  ProgramImpl *P = &L.getProgram();
  BufferId XB = L.getBuffer(X);
  BufferId YB;
  if (XT == YT && L.canOverwrite(X, L.getNodeIndex(Tail.Last))) {
    L.alias(Tail.Result, X);
    YB = XB;
  } else {
    YB = L.defineBuffer(Tail.Result);
  }
  const Activation Act = Tail.Act;
  const int Threads = L.getThreads();
  L.addStep({Tail.Result->getName(),
             withTail(ChannelsLast ? "batchnorm.nhwc" : "batchnorm.nchw", Tail),
             false},
            {XB}, {YB}, [=]() {
              runChannelAffine(ChannelsLast, Batch, C, Pixels, P->f32(XB),
                               Scale->get(), Shift->get(), Act, P->f32(YB),
                               Threads);
            });
  return true;
}

bool cpu::lowerResize(LoweringContext &L, const Node &N,
                      const FusedTail &Tail) {
  const Value *X = N.getOperand(0), *Y = Tail.Result;
  if (!isF32(X) || Tail.Residual || !Tail.Act.isNone())
    return false;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const unsigned Rank = XT.getRank();
  if (Rank < 3 || Rank > 5)
    return false;
  // The roi, scales and sizes operands must be constants (or absent).
  std::vector<runtime::Tensor> Ops(4);
  const runtime::Tensor *Ptrs[4] = {nullptr, nullptr, nullptr, nullptr};
  for (unsigned I = 1; I < 4 && I < N.getNumOperands(); ++I) {
    if (!N.hasOperand(I))
      continue;
    const TensorData *D = N.getOperand(I)->getConstantData();
    if (!D)
      return false;
    if (D->getNumElements() == 0)
      continue;
    Ops[I] = runtime::Tensor::fromData(*D);
    Ptrs[I] = &Ops[I];
  }
  auto XShape = XT.getStaticShape(), YShape = YT.getStaticShape();
  auto Sampling = runtime::computeResizeSampling(N, XShape, YShape, Ptrs[1],
                                                 Ptrs[2], Ptrs[3]);
  if (!Sampling) {
    llvm::consumeError(Sampling.takeError()); // The reference reports it.
    return false;
  }
  // Batch and channels must be copied through (one tap of weight 1 at the
  // same index), nothing extrapolated.
  for (unsigned D = 0; D < Rank; ++D) {
    const runtime::ResizeAxis &A = Sampling->Axes[D];
    for (size_t O = 0; O < A.Taps.size(); ++O) {
      if (A.Extrapolated[O])
        return false;
      if (D < 2 && (A.Taps[O].size() != 1 || A.Taps[O][0].Index != int64_t(O) ||
                    A.Taps[O][0].Weight != 1.0))
        return false;
    }
  }
  auto XS = getStrides(XT), YS = getStrides(YT);
  // Written straight into the Concat that reads the result (a UNet's
  // upsampling), at its offset and with its strides.
  auto Slot = L.findConcatSlot(Y);
  int64_t YOffset = 0;
  if (Slot) {
    YS.assign(Slot->Strides.begin(), Slot->Strides.end());
    YOffset = Slot->Offset;
  }
  // Channels-last: each output pixel is a weighted sum of channel vectors.
  // Any other layout: each channel is an image of one channel, sampled
  // through the same pixel offsets.
  const bool ChannelsLast = XS[1] == 1 && YS[1] == 1;
  auto Params = std::make_shared<ResampleParams>();
  Params->Channels = ChannelsLast ? XShape[1] : 1;
  const unsigned Off = 3 - (Rank - 2);
  for (unsigned I = 0; I < 3; ++I) {
    ResampleAxis &A = Params->Axes[I];
    if (I < Off) {
      A.Begin = {0, 1};
      A.Offset = {0};
      A.Weight = {1.0f};
      continue;
    }
    const unsigned D = 2 + I - Off;
    Params->Out[I] = YShape[D];
    Params->YS[I] = YS[D];
    A.Begin.push_back(0);
    for (const auto &Taps : Sampling->Axes[D].Taps) {
      for (const runtime::ResizeTap &T : Taps) {
        A.Offset.push_back(T.Index * XS[D]);
        A.Weight.push_back(float(T.Weight));
      }
      A.Begin.push_back(int64_t(A.Offset.size()));
    }
  }
  L.own(Params);
  ProgramImpl *P = &L.getProgram();
  BufferId XB = L.getBuffer(X);
  BufferId YB = Slot ? L.useConcatSlot(Y, *Slot) : L.defineBuffer(Y);
  const int64_t Batch = XShape[0], XBS = XS[0], YBS = YS[0];
  const int64_t Planes = ChannelsLast ? 1 : XShape[1];
  const int64_t XCS = XS[1], YCS = YS[1];
  const int Threads = L.getThreads();
  L.addStep(
      {Y->getName(), ChannelsLast ? "resize.nhwc" : "resize.planes", false},
      {XB}, {YB}, [=]() {
        for (int64_t B = 0; B < Batch; ++B)
          for (int64_t C = 0; C < Planes; ++C)
            runResampleChannelsLast(*Params, P->f32(XB) + B * XBS + C * XCS,
                                    P->f32(YB) + YOffset + B * YBS + C * YCS,
                                    Threads);
      });
  return true;
}

bool cpu::lowerGridSample(LoweringContext &L, const Node &N,
                          const FusedTail &Tail) {
  const Value *X = N.getOperand(0), *G = N.getOperand(1), *Y = Tail.Result;
  if (!isF32(X) || !isF32(G) || Tail.Residual || !Tail.Act.isNone())
    return false;
  const TensorType &XT = X->getType(), &GT = G->getType(), &YT = Y->getType();
  if (XT.getRank() != 4 || !GT.getLayout().isIdentity() ||
      !XT.hasStaticShape() || !YT.hasStaticShape())
    return false;
  auto Opts = runtime::getGridSampleOptions(N);
  if (!Opts) {
    llvm::consumeError(Opts.takeError()); // The reference reports it.
    return false;
  }
  auto P = std::make_shared<GridSampleParams>();
  P->Opts = *Opts;
  auto XShape = XT.getStaticShape(), YShape = YT.getStaticShape();
  P->N = XShape[0];
  P->C = XShape[1];
  P->H = XShape[2];
  P->W = XShape[3];
  P->OH = YShape[2];
  P->OW = YShape[3];
  // Any layouts of X and Y: their strides in logical dim order.
  auto XS = getStrides(XT), YS = getStrides(YT);
  std::copy(XS.begin(), XS.end(), P->XS);
  std::copy(YS.begin(), YS.end(), P->YS);
  L.own(P);
  ProgramImpl *Prog = &L.getProgram();
  BufferId XB = L.getBuffer(X), GB = L.getBuffer(G), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(), "grid_sample", false}, {XB, GB}, {YB}, [=]() {
    runGridSample(*P, Prog->f32(XB), Prog->f32(GB), Prog->f32(YB), Threads);
  });
  return true;
}

bool cpu::lowerSoftmax(LoweringContext &L, const Node &N,
                       const FusedTail &Tail) {
  const Value *X = N.getOperand(0), *Y = Tail.Result;
  if (!isF32(X) || Tail.Residual || !Tail.Act.isNone())
    return false;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const int64_t R = XT.getRank();
  int64_t Axis = N.getIntAttr("axis", -1);
  if (R == 0 || Axis < -R || Axis >= R || XT.getShape() != YT.getShape() ||
      !layout::areLayoutsEquivalent(XT.getShape(), XT.getLayout(),
                                    YT.getLayout(), layout::DimBindings()))
    return false;
  if (Axis < 0)
    Axis += R;
  std::vector<bool> Middle(size_t(R), false);
  Middle[size_t(Axis)] = true;
  int64_t Outer, Len, Inner;
  if (!splitAround(XT, Middle, Outer, Len, Inner))
    return false;
  const bool Log = N.getOpId() == OpId::LogSoftmax;
  ProgramImpl *P = &L.getProgram();
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(),
             std::string(Log ? "log_softmax" : "softmax") +
                 (Inner == 1 ? ".rows" : ".strided"),
             false},
            {XB}, {YB}, [=]() {
              runSoftmax(Outer, Len, Inner, Log, P->f32(XB), P->f32(YB),
                         Threads);
            });
  return true;
}

bool cpu::lowerLRN(LoweringContext &L, const Node &N, const FusedTail &Tail) {
  const Value *X = N.getOperand(0), *Y = Tail.Result;
  if (!isF32(X) || Tail.Residual || !Tail.Act.isNone())
    return false;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const int64_t R = XT.getRank();
  if (R < 3 || XT.getShape() != YT.getShape() ||
      !layout::areLayoutsEquivalent(XT.getShape(), XT.getLayout(),
                                    YT.getLayout(), layout::DimBindings()))
    return false;
  std::vector<bool> Middle(size_t(R), false);
  Middle[1] = true;
  LRNParams LP;
  if (!splitAround(XT, Middle, LP.Outer, LP.Len, LP.Inner))
    return false;
  LP.Size = N.getIntAttr("size", 0);
  LP.Alpha = N.getFloatAttr("alpha", 1e-4f);
  LP.Beta = N.getFloatAttr("beta", 0.75f);
  LP.Bias = N.getFloatAttr("bias", 1.0f);
  if (LP.Size < 1)
    return false;
  ProgramImpl *P = &L.getProgram();
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(), LP.Inner == 1 ? "lrn.rows" : "lrn.strided", false},
            {XB}, {YB}, [=]() { runLRN(LP, P->f32(XB), P->f32(YB), Threads); });
  return true;
}

bool cpu::lowerReduce(LoweringContext &L, const Node &N,
                      const FusedTail &Tail) {
  const Value *X = N.getOperand(0), *Y = Tail.Result;
  if (!isF32(X) || Tail.Residual || !Tail.Act.isNone())
    return false;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const int64_t R = XT.getRank();
  std::vector<bool> Reduced(size_t(R), false);
  if (N.hasOperand(1)) {
    const TensorData *D = N.getOperand(1)->getConstantData();
    if (!D)
      return false;
    for (int64_t A : D->toInt64Vector()) {
      if (A < -R || A >= R)
        return false;
      Reduced[size_t(A < 0 ? A + R : A)] = true;
    }
  }
  if (std::find(Reduced.begin(), Reduced.end(), true) == Reduced.end()) {
    if (N.getIntAttr("noop_with_empty_axes", 0) != 0)
      return false;
    Reduced.assign(size_t(R), true);
  }
  int64_t Outer, Len, Inner;
  if (!splitReduction(XT, YT, Reduced, N.getIntAttr("keepdims", 1) != 0, Outer,
                     Len, Inner))
    return false;
  static const std::pair<OpId, ReduceKind> Kinds[] = {
      {OpId::ReduceSum, ReduceKind::Sum},
      {OpId::ReduceMax, ReduceKind::Max},
      {OpId::ReduceMean, ReduceKind::Mean},
      {OpId::ReduceMin, ReduceKind::Min},
      {OpId::ReduceProd, ReduceKind::Prod},
      {OpId::ReduceSumSquare, ReduceKind::SumSquare},
      {OpId::ReduceL2, ReduceKind::L2}};
  const auto *It =
      std::find_if(std::begin(Kinds), std::end(Kinds),
                   [&](const auto &K) { return K.first == N.getOpId(); });
  assert(It != std::end(Kinds) && "lowerReduce on another op");
  const ReduceKind Kind = It->second;
  ProgramImpl *P = &L.getProgram();
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  L.addStep(
      {Y->getName(),
       "reduce." + N.getOpType().lower() + (Inner == 1 ? ".rows" : ".strided"),
       false},
      {XB}, {YB}, [=]() {
        runReduce(Kind, Outer, Len, Inner, P->f32(XB), P->f32(YB), Threads);
      });
  return true;
}

bool cpu::lowerCumSum(LoweringContext &L, const Node &N,
                      const FusedTail &Tail) {
  static const std::pair<ElementType, CumSumType> Types[] = {
      {ElementType::F32, CumSumType::F32},
      {ElementType::F64, CumSumType::F64},
      {ElementType::I32, CumSumType::I32},
      {ElementType::I64, CumSumType::I64}};
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const TensorData *AxisData = N.getOperand(1)->getConstantData();
  const auto *TypeIt = llvm::find_if(
      Types, [&](const auto &E) { return E.first == XT.getElementType(); });
  const int64_t R = XT.getRank();
  if (Tail.Residual || !Tail.Act.isNone() || TypeIt == std::end(Types) ||
      !AxisData || AxisData->getNumElements() != 1 || R == 0 ||
      !XT.hasStaticShape() || XT.getShape() != YT.getShape() ||
      XT.getElementType() != YT.getElementType() ||
      XT.getLayout().getPermutation(unsigned(R)) !=
          YT.getLayout().getPermutation(unsigned(R)))
    return false;
  int64_t Axis = AxisData->getInt(0);
  if (Axis < -R || Axis >= R)
    return false;
  if (Axis < 0)
    Axis += R;
  // The axis's place in the physical order splits it into Outer x Len x
  // Inner (both tensors share the order).
  int64_t Outer = 1, Len = 1, Inner = 1;
  bool Seen = false;
  for (unsigned D : XT.getLayout().getPermutation(unsigned(R))) {
    const int64_t Size = XT.getShape()[D].getSize();
    if (int64_t(D) == Axis) {
      Len = Size;
      Seen = true;
    } else {
      (Seen ? Inner : Outer) *= Size;
    }
  }
  const CumSumType Type = TypeIt->second;
  const bool Exclusive = N.getIntAttr("exclusive", 0) != 0;
  const bool Reverse = N.getIntAttr("reverse", 0) != 0;
  ProgramImpl *P = &L.getProgram();
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(),
             "scan.cumsum." + getElementTypeName(XT.getElementType()).str(),
             false},
            {XB}, {YB}, [=]() {
              runCumSum(Type, Outer, Len, Inner, Exclusive, Reverse,
                        P->bytes(XB), P->bytes(YB), Threads);
            });
  return true;
}

bool cpu::lowerArgReduce(LoweringContext &L, const Node &N,
                         const FusedTail &Tail) {
  const Value *X = N.getOperand(0), *Y = Tail.Result;
  if (!isF32(X) || Tail.Residual || !Tail.Act.isNone() ||
      Y->getType().getElementType() != ElementType::I64)
    return false;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const int64_t R = XT.getRank();
  int64_t Axis = N.getIntAttr("axis", 0);
  if (Axis < -R || Axis >= R)
    return false;
  std::vector<bool> Reduced(size_t(R), false);
  Reduced[size_t(Axis < 0 ? Axis + R : Axis)] = true;
  int64_t Outer, Len, Inner;
  if (!splitReduction(XT, YT, Reduced, N.getIntAttr("keepdims", 1) != 0, Outer,
                     Len, Inner) ||
      Len < 1 || Len > std::numeric_limits<int32_t>::max())
    return false;
  const bool Max = N.getOpId() == OpId::ArgMax;
  const bool Last = N.getIntAttr("select_last_index", 0) != 0;
  ProgramImpl *P = &L.getProgram();
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(),
             std::string(Max ? "argmax" : "argmin") +
                 (Inner == 1 ? ".rows" : ".strided"),
             false},
            {XB}, {YB}, [=]() {
              runArgReduce(Max, Last, Outer, Len, Inner, P->f32(XB),
                           reinterpret_cast<int64_t *>(P->bytes(YB)), Threads);
            });
  return true;
}

bool cpu::lowerPool(LoweringContext &L, const Node &N, const FusedTail &Tail) {
  const Value *X = N.getOperand(0);
  // MaxPool's Indices result has no kernel.
  if (!isF32(X) || N.hasResult(1) || Tail.Residual || !Tail.Act.isNone())
    return false;
  const TensorType &XT = X->getType(), &YT = N.getResult(0)->getType();
  const unsigned Rank = XT.getRank();
  if (Rank < 3 || Rank > 5 || YT.getRank() != Rank)
    return false;
  auto XShape = XT.getStaticShape(), YShape = YT.getStaticShape();
  auto Axes =
      resolveWindow(N, llvm::makeArrayRef(XShape).drop_front(2), llvm::None);
  if (!Axes) {
    llvm::consumeError(Axes.takeError());
    return false;
  }
  auto XS = getStrides(XT), YS = getStrides(YT);
  PoolParams PP;
  PP.Max = N.getOpId() == OpId::MaxPool;
  PP.CountPad = !PP.Max && N.getIntAttr("count_include_pad", 0) != 0;
  PP.Channels = XShape[1];
  PP.XC = XS[1];
  PP.YC = YS[1];
  const unsigned Sp = Rank - 2, Off = 3 - Sp;
  for (unsigned I = 0; I < Sp; ++I) {
    const WindowAxis &A = (*Axes)[I];
    const unsigned D = Off + I;
    if (A.Out != YShape[2 + I])
      return false;
    PP.In[D] = A.In;
    PP.Out[D] = A.Out;
    PP.Kernel[D] = A.Kernel;
    PP.Stride[D] = A.Stride;
    PP.Dilation[D] = A.Dilation;
    PP.PadBegin[D] = A.PadBegin;
    PP.PadEnd[D] = A.PadEnd;
    PP.XS[D] = XS[2 + I];
    PP.YS[D] = YS[2 + I];
  }
  ProgramImpl *P = &L.getProgram();
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Tail.Result);
  const int64_t Batch = XShape[0], XBS = XS[0], YBS = YS[0];
  const int Threads = L.getThreads();
  L.addStep({Tail.Result->getName(),
             std::string(PP.Max ? "pool.max" : "pool.average") +
                 (PP.channelsLast() ? ".nhwc" : ".nchw"),
             false},
            {XB}, {YB}, [=]() {
              for (int64_t B = 0; B < Batch; ++B)
                runPool(PP, P->f32(XB) + B * XBS, P->f32(YB) + B * YBS,
                        Threads);
            });
  return true;
}

bool cpu::lowerGlobalPool(LoweringContext &L, const Node &N,
                          const FusedTail &Tail) {
  const Value *X = N.getOperand(0);
  if (!isF32(X) || Tail.Residual || !Tail.Act.isNone())
    return false;
  const TensorType &XT = X->getType(), &YT = N.getResult(0)->getType();
  unsigned Rank = XT.getRank();
  if (Rank < 3)
    return false;
  auto XS = getStrides(XT), YS = getStrides(YT);
  auto Shape = XT.getStaticShape();
  // Spatial dims must nest into one pixel stride.
  for (unsigned I = 2; I + 1 < Rank; ++I)
    if (XS[I] != XS[I + 1] * Shape[I + 1])
      return false;
  int64_t Pixels = 1;
  for (unsigned I = 2; I < Rank; ++I)
    Pixels *= Shape[I];
  const bool Max = N.getOpId() == OpId::GlobalMaxPool;
  ProgramImpl *P = &L.getProgram();
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Tail.Result);
  const int64_t Batch = Shape[0], C = Shape[1], PS = XS[Rank - 1], CS = XS[1],
                XBS = XS[0], YBS = YS[0], YCS = YS[1];
  const int Threads = L.getThreads();
  L.addStep({Tail.Result->getName(),
             std::string(Max ? "pool.global_max" : "pool.global_average") +
                 (CS == 1 ? ".nhwc" : ".nchw"),
             false},
            {XB}, {YB}, [=]() {
              for (int64_t B = 0; B < Batch; ++B)
                runGlobalPool(Max, Pixels, C, PS, CS, P->f32(XB) + B * XBS,
                              P->f32(YB) + B * YBS, YCS, Threads);
            });
  return true;
}
