//===- LowerReduction.cpp - Reductions, softmax, CumSum -------------------===//
//
// The reductions over axes, Softmax and LogSoftmax, ArgMax and ArgMin and
// CumSum of f32 tensors (ReductionKernels.cpp), the reduced axes split
// from the kept ones in the operand's physical order.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ProgramImpl.h"

#include "strider/IR/LayoutAlgebra.h"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <limits>

using namespace strider;
using namespace strider::cpu;

bool cpu::lowerSoftmax(LoweringContext &L, const Node &N,
                       const FusedTail &Tail) {
  const Value *X = N.getOperand(0), *Y = Tail.Result;
  if (!isF32(X) || Tail.Residual || !Tail.Act.isNone())
    return false;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const int64_t R = XT.getRank();
  const int64_t Axis = codegen::getAxisAttr(N, R, -1);
  if (Axis < 0 || !haveSameElementOrder(XT, YT))
    return false;
  std::vector<bool> Middle(size_t(R), false);
  Middle[size_t(Axis)] = true;
  int64_t Outer, Len, Inner;
  if (!splitAround(XT, Middle, Outer, Len, Inner))
    return false;
  const bool Log = N.getOpId() == OpId::LogSoftmax;
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(),
             std::string(Log ? "log_softmax" : "softmax") +
                 (Inner == 1 ? ".rows" : ".strided"),
             false},
            {XB}, {YB}, [=](Frame &Fr) {
              runSoftmax(Outer, Len, Inner, Log, Fr.f32(XB), Fr.f32(YB),
                         Threads);
            });
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
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  L.addStep(
      {Y->getName(),
       "reduce." + N.getOpType().lower() + (Inner == 1 ? ".rows" : ".strided"),
       false},
      {XB}, {YB}, [=](Frame &Fr) {
        runReduce(Kind, Outer, Len, Inner, Fr.f32(XB), Fr.f32(YB), Threads);
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
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(),
             "scan.cumsum." + getElementTypeName(XT.getElementType()).str(),
             false},
            {XB}, {YB}, [=](Frame &Fr) {
              runCumSum(Type, Outer, Len, Inner, Exclusive, Reverse,
                        Fr.bytes(XB), Fr.bytes(YB), Threads);
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
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(),
             std::string(Max ? "argmax" : "argmin") +
                 (Inner == 1 ? ".rows" : ".strided"),
             false},
            {XB}, {YB}, [=](Frame &Fr) {
              runArgReduce(Max, Last, Outer, Len, Inner, Fr.f32(XB),
                           reinterpret_cast<int64_t *>(Fr.bytes(YB)), Threads);
            });
  return true;
}
