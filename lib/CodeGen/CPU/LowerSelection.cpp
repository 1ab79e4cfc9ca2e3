//===- LowerSelection.cpp - TopK on the CPU backend -----------------------===//
//
// TopK of f32 along one axis in any layout: each row is read through its
// stride, its K largest (or smallest) positions chosen with ties going to
// the lower index (as ONNX asks and the reference does), and values and
// i64 positions written through the results' strides; rows in parallel.
//
//===----------------------------------------------------------------------===//

#include "Parallel.h"
#include "ProgramImpl.h"

#include <algorithm>
#include <numeric>

using namespace strider;
using namespace strider::cpu;

bool cpu::lowerTopK(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0), *Values = N.getResult(0);
  const Value *Indices = N.getNumResults() > 1 ? N.getResult(1) : nullptr;
  const TensorData *KD = N.getOperand(1)->getConstantData();
  const TensorType &XT = X->getType();
  if (!KD || KD->getNumElements() != 1 ||
      XT.getElementType() != ElementType::F32 ||
      (Indices && Indices->getType().getElementType() != ElementType::I64))
    return false;
  const int64_t Rank = XT.getRank();
  int64_t Axis = N.getIntAttr("axis", -1);
  if (Axis < 0)
    Axis += Rank;
  const int64_t K = KD->getInt(0);
  auto XShape = XT.getStaticShape();
  if (Axis < 0 || Axis >= Rank || K < 0 || K > XShape[size_t(Axis)])
    return false;
  // Row starts: every index with the axis at 0, in each tensor.
  auto XS = getStrides(XT), VS = getStrides(Values->getType());
  llvm::SmallVector<int64_t, 6> IS(size_t(Rank), 0);
  if (Indices)
    IS = getStrides(Indices->getType());
  std::vector<int64_t> XRow, VRow, IRow;
  llvm::SmallVector<int64_t, 6> At(size_t(Rank), 0);
  int64_t Rows = 1;
  for (int64_t D = 0; D < Rank; ++D)
    if (D != Axis)
      Rows *= XShape[size_t(D)];
  for (int64_t R = 0; R < Rows; ++R) {
    int64_t XO = 0, VO = 0, IO = 0;
    for (int64_t D = 0; D < Rank; ++D) {
      XO += At[size_t(D)] * XS[size_t(D)];
      VO += At[size_t(D)] * VS[size_t(D)];
      IO += At[size_t(D)] * IS[size_t(D)];
    }
    XRow.push_back(XO);
    VRow.push_back(VO);
    IRow.push_back(IO);
    for (int64_t D = Rank; D-- > 0;) {
      if (D == Axis)
        continue;
      if (++At[size_t(D)] < XShape[size_t(D)])
        break;
      At[size_t(D)] = 0;
    }
  }
  const int64_t Len = XShape[size_t(Axis)], XA = XS[size_t(Axis)],
                VA = VS[size_t(Axis)], IA = IS[size_t(Axis)];
  const bool Largest = N.getIntAttr("largest", 1) != 0;
  BufferId XB = L.getBuffer(X), VB = L.defineBuffer(Values);
  std::vector<BufferId> Writes = {VB};
  BufferId IB = -1;
  if (Indices) {
    IB = L.defineBuffer(Indices);
    Writes.push_back(IB);
  }
  ProgramImpl *P = &L.getProgram();
  const int Threads = L.getThreads();
  std::string Names = Values->getName();
  if (Indices)
    Names += "," + Indices->getName();
  L.addStep({Names, Largest ? "topk.largest" : "topk.smallest", false}, {XB},
            Writes, [=]() {
              const float *XP = P->f32(XB);
              float *VP = P->f32(VB);
              int64_t *IP =
                  IB >= 0 ? reinterpret_cast<int64_t *>(P->bytes(IB)) : nullptr;
              parallelFor(int64_t(XRow.size()), Threads, [&](int64_t R) {
                const float *Row = XP + XRow[size_t(R)];
                std::vector<int64_t> Order(static_cast<size_t>(Len));
                std::iota(Order.begin(), Order.end(), int64_t(0));
                auto Before = [&](int64_t A, int64_t B) {
                  const float VA = Row[A * XA], VB = Row[B * XA];
                  if (VA != VB)
                    return Largest ? VA > VB : VA < VB;
                  return A < B;
                };
                std::partial_sort(Order.begin(), Order.begin() + K, Order.end(),
                                  Before);
                for (int64_t J = 0; J < K; ++J) {
                  VP[VRow[size_t(R)] + J * VA] = Row[Order[size_t(J)] * XA];
                  if (IP)
                    IP[IRow[size_t(R)] + J * IA] = Order[size_t(J)];
                }
              });
            });
  return true;
}
