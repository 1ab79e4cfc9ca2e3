//===- LowerElementwise.cpp - Activations and binaries --------------------===//
//
// The unary activations over the flat buffer and the broadcasting binaries
// (Add, Sub, Mul, Div, PRelu, Pow, Max, Min, Sum) with the activation of
// their fusion group, in any layouts (operands read through broadcast
// strides in the result's physical order).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ProgramImpl.h"

#include "strider/IR/LayoutAlgebra.h"

#include <algorithm>
#include <iterator>

using namespace strider;
using namespace strider::cpu;

bool cpu::lowerUnary(LoweringContext &L, const Node &N, const FusedTail &Tail) {
  Activation Act;
  const TensorType &XT = N.getOperand(0)->getType();
  const TensorType &YT = N.getResult(0)->getType();
  // Over the flat buffer: both layouts must hold the same bytes.
  if (!getFusableActivation(N, Act) || !isF32(N.getOperand(0)) ||
      !haveSameElementOrder(XT, YT))
    return false;
  const Value *X = N.getOperand(0);
  BufferId XB = L.getBuffer(X);
  const BufferId YB = L.defineOver(Tail.Result, {X}, N);
  const int64_t Count = *X->getType().getNumElements();
  const int Threads = L.getThreads();
  L.addStep(
      {Tail.Result->getName(), std::string("unary.") + Act.getName(), false},
      {XB}, {YB}, [=](Frame &Fr) {
        runUnary(Act, Fr.f32(XB), Fr.f32(YB), Count, Threads);
      });
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
  if (!isF32(X) || !haveSameElementOrder(XT, YT))
    return false;
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Tail.Result);
  const int64_t Count = *XT.getNumElements();
  const Activation Act = Tail.Act;
  const int Threads = L.getThreads();
  L.addStep({Tail.Result->getName(),
             withTail(std::string("copy.") + N.getOpType().lower(), Tail),
             false},
            {XB}, {YB}, [=](Frame &Fr) {
              runUnary(Act, Fr.f32(XB), Fr.f32(YB), Count, Threads);
            });
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
  const BufferId YB = NumOps == 2
                          ? L.defineOver(Tail.Result, {A, B}, *Tail.Last)
                          : L.defineBuffer(Tail.Result);
  const int Threads = L.getThreads();
  L.addStep({Tail.Result->getName(), withTail(Kernel, Tail), false}, Reads,
            {YB}, [=](Frame &Fr) {
              float *Yp = Fr.f32(YB);
              for (size_t K = 0; K < Passes.size(); ++K)
                runBinary(Passes[K], K ? Yp : Fr.f32(Reads[0]),
                          Fr.f32(Reads[K + 1]), Yp, Threads);
            });
  return true;
}
