//===- LowerSelection.cpp - TopK, gathers and scatters by indices ---------===//
//
// TopK of f32, f64, i32 or i64 along one axis in any layout: each row is
// read through its
// stride, its K largest (or smallest) positions chosen with ties going to
// the lower index (as ONNX asks and the reference does), and values and
// i64 positions written through the results' strides; rows in parallel.
//
// GatherElements and ScatterElements of any element type: one walk over
// the indices (i64 or i32) in row-major order, each element's data offset
// its position's with the axis entry replaced by the index read when the
// step runs; an index out of range stops the run with a located error.
// ScatterElements first copies the data, then stores each update (the
// last of repeated indices wins) or combines it (add, mul, max, min of
// f32, f64, i32 and i64 data).
//
// GatherND and ScatterND of row-major tensors of any element type with i64
// index tuples: one slice copy (or combination) per tuple, in row-major
// order of the tuples; an index out of range stops the run the same way.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "Parallel.h"
#include "ProgramImpl.h"

#include "strider/IR/Diagnostics.h"

#include <algorithm>
#include <cstring>
#include <numeric>

using namespace strider;
using namespace strider::cpu;

bool cpu::lowerTopK(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0), *Values = N.getResult(0);
  const Value *Indices = N.getNumResults() > 1 ? N.getResult(1) : nullptr;
  const TensorData *KD = N.getOperand(1)->getConstantData();
  const TensorType &XT = X->getType();
  const ElementType Elt = XT.getElementType();
  if (!KD || KD->getNumElements() != 1 ||
      (Elt != ElementType::F32 && Elt != ElementType::F64 &&
       Elt != ElementType::I32 && Elt != ElementType::I64) ||
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
  const int Threads = L.getThreads();
  std::string Names = Values->getName();
  if (Indices)
    Names += "," + Indices->getName();
  auto Select = [=](auto Zero) {
    using T = decltype(Zero);
    return [=](Frame &Fr) {
      const T *XP = reinterpret_cast<const T *>(Fr.bytes(XB));
      T *VP = reinterpret_cast<T *>(Fr.bytes(VB));
      int64_t *IP =
          IB >= 0 ? reinterpret_cast<int64_t *>(Fr.bytes(IB)) : nullptr;
      parallelFor(int64_t(XRow.size()), Threads, [&](int64_t R) {
        const T *Row = XP + XRow[size_t(R)];
        std::vector<int64_t> Order(static_cast<size_t>(Len));
        std::iota(Order.begin(), Order.end(), int64_t(0));
        // NaN above every number, equal values by position: a total
        // order, as the reference and the CUDA backend have it.
        auto Before = [&](int64_t A, int64_t B) {
          const T VA = Row[A * XA], VB = Row[B * XA];
          const bool NanA = VA != VA, NanB = VB != VB;
          if (NanA || NanB)
            return NanA && NanB ? A < B : Largest ? NanA : NanB;
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
    };
  };
  std::function<void(Frame &)> Run;
  switch (Elt) {
  case ElementType::F64:
    Run = Select(double());
    break;
  case ElementType::I32:
    Run = Select(int32_t());
    break;
  case ElementType::I64:
    Run = Select(int64_t());
    break;
  default:
    Run = Select(float());
    break;
  }
  L.addStep({Names, Largest ? "topk.largest" : "topk.smallest", false}, {XB},
            Writes, std::move(Run));
  return true;
}

namespace {

/// The walk of GatherElements and ScatterElements: for each index position
/// in row-major order, the offset (in elements) of that position in the
/// indices' own tensor and in the tensor walked alongside (the result, or
/// the updates), and the data offset with the axis entry at 0.
struct ElementsWalk {
  std::vector<int64_t> IndexOffsets, SideOffsets, DataOffsets;
  int64_t AxisSize = 0, AxisStride = 0;
  ElementType IndexType = ElementType::Unknown;
  std::string Where;

  /// The data offset of position \p K, or -1 after failing \p Fr.
  int64_t dataOffset(Frame &Fr, const uint8_t *Indices, size_t K) const {
    int64_t I;
    if (IndexType == ElementType::I64) {
      std::memcpy(&I, Indices + IndexOffsets[K] * 8, 8);
    } else {
      int32_t I32;
      std::memcpy(&I32, Indices + IndexOffsets[K] * 4, 4);
      I = I32;
    }
    if (I < -AxisSize || I >= AxisSize) {
      Fr.fail(Where + ": index " + std::to_string(I) +
              " is out of range for an axis of size " +
              std::to_string(AxisSize));
      return -1;
    }
    return DataOffsets[K] + (I < 0 ? I + AxisSize : I) * AxisStride;
  }
};

/// The walk of \p N (data operand 0, indices operand 1) alongside \p Side;
/// false if the kernel does not apply.
bool planElementsWalk(const Node &N, const TensorType &Side, ElementsWalk &W) {
  const TensorType &XT = N.getOperand(0)->getType(),
                   &IT = N.getOperand(1)->getType();
  W.IndexType = IT.getElementType();
  if ((W.IndexType != ElementType::I64 && W.IndexType != ElementType::I32) ||
      !XT.hasStaticShape() || !IT.hasStaticShape() ||
      IT.getRank() != XT.getRank() || Side.getShape() != IT.getShape())
    return false;
  const int64_t Rank = XT.getRank();
  int64_t Axis = N.getIntAttr("axis", 0);
  if (Axis < 0)
    Axis += Rank;
  auto XShape = XT.getStaticShape(), IShape = IT.getStaticShape();
  if (Axis < 0 || Axis >= Rank)
    return false;
  for (int64_t D = 0; D < Rank; ++D)
    if (D != Axis && IShape[size_t(D)] > XShape[size_t(D)])
      return false;
  auto XS = getStrides(XT), IS = getStrides(IT), SS = getStrides(Side);
  W.AxisSize = XShape[size_t(Axis)];
  W.AxisStride = XS[size_t(Axis)];
  W.Where = describeNode(N);
  const int64_t Count = *IT.getNumElements();
  llvm::SmallVector<int64_t, 6> At(size_t(Rank), 0);
  for (int64_t K = 0; K < Count; ++K) {
    int64_t IO = 0, SO = 0, XO = 0;
    for (int64_t D = 0; D < Rank; ++D) {
      IO += At[size_t(D)] * IS[size_t(D)];
      SO += At[size_t(D)] * SS[size_t(D)];
      if (D != Axis)
        XO += At[size_t(D)] * XS[size_t(D)];
    }
    W.IndexOffsets.push_back(IO);
    W.SideOffsets.push_back(SO);
    W.DataOffsets.push_back(XO);
    for (int64_t D = Rank; D-- > 0;) {
      if (++At[size_t(D)] < IShape[size_t(D)])
        break;
      At[size_t(D)] = 0;
    }
  }
  return true;
}

/// *To = *To op From for the reduction \p R of ScatterElements, elements
/// of type \p T; sums and products in \p Arith (integers: their unsigned
/// type, so that they wrap as the reference's do).
template <typename T, typename Arith = T>
void combine(uint8_t *To, const uint8_t *From, char R) {
  T A, B;
  std::memcpy(&A, To, sizeof(T));
  std::memcpy(&B, From, sizeof(T));
  const T V = R == '+'   ? T(Arith(A) + Arith(B))
              : R == '*' ? T(Arith(A) * Arith(B))
              : R == '>' ? std::max(A, B)
                         : std::min(A, B);
  std::memcpy(To, &V, sizeof(T));
}

/// Combines an update into what a scatter's result holds (see combine).
using CombineFn = void (*)(uint8_t *, const uint8_t *, char);

/// The combination of reduction \p Reduction for elements of \p Elt: \p R
/// its operator ('=' stores) and \p F the function (null for '='); false
/// for an unknown reduction or a type only the reference combines.
bool getScatterCombine(llvm::StringRef Reduction, ElementType Elt, char &R,
                       CombineFn &F) {
  static const std::pair<const char *, char> Ops[] = {
      {"none", '='}, {"add", '+'}, {"mul", '*'}, {"max", '>'}, {"min", '<'}};
  const auto *Op =
      llvm::find_if(Ops, [&](const auto &O) { return Reduction == O.first; });
  if (Op == std::end(Ops))
    return false;
  R = Op->second;
  F = nullptr;
  if (R == '=')
    return true;
  switch (Elt) {
  case ElementType::F32:
    F = combine<float>;
    return true;
  case ElementType::F64:
    F = combine<double>;
    return true;
  case ElementType::I32:
    F = combine<int32_t, uint32_t>;
    return true;
  case ElementType::I64:
    F = combine<int64_t, uint64_t>;
    return true;
  default:
    return false; // The reference kernel combines other types.
  }
}

/// The index tuples of a GatherND or ScatterND (i64, the indices' last
/// dim) into row-major data: tuple T names, in batch T / TuplesPerBatch,
/// the slice of SliceElems elements at the sum of its indices times
/// Strides.
struct TupleWalk {
  int64_t K = 0, Tuples = 0, TuplesPerBatch = 1, BatchStride = 0,
          SliceElems = 1;
  std::vector<int64_t> Dims, Strides; ///< Of the K indexed data dims.
  std::string Where;

  /// The data offset of tuple \p T's slice, or -1 after failing \p Fr.
  int64_t sliceOffset(Frame &Fr, const int64_t *Indices, int64_t T) const {
    int64_t Off = T / TuplesPerBatch * BatchStride;
    for (int64_t J = 0; J < K; ++J) {
      const int64_t I = Indices[T * K + J], Size = Dims[size_t(J)];
      if (I < -Size || I >= Size) {
        Fr.fail(Where + ": index " + std::to_string(I) +
                " is out of range for an axis of size " + std::to_string(Size));
        return -1;
      }
      Off += (I < 0 ? I + Size : I) * Strides[size_t(J)];
    }
    return Off;
  }
};

/// The walk of \p N's tuples into \p Data (row-major, static, as the
/// indices) after \p Batch shared dims; false if the kernel does not
/// apply.
bool planTupleWalk(const Node &N, const TensorType &Data,
                   const TensorType &Indices, int64_t Batch, TupleWalk &W) {
  if (!Data.hasStaticShape() || !Indices.hasStaticShape() ||
      !Data.getLayout().isIdentity() || !Indices.getLayout().isIdentity() ||
      Indices.getElementType() != ElementType::I64 || Indices.getRank() < 1)
    return false;
  auto DShape = Data.getStaticShape(), IShape = Indices.getStaticShape();
  const int64_t R = int64_t(DShape.size());
  W.K = IShape.back();
  if (Batch < 0 || W.K < 1 || Batch + W.K > R ||
      int64_t(IShape.size()) < Batch + 1)
    return false;
  W.Tuples = 1;
  for (size_t I = 0; I + 1 < IShape.size(); ++I)
    W.Tuples *= IShape[I];
  W.TuplesPerBatch = 1;
  for (size_t I = size_t(Batch); I + 1 < IShape.size(); ++I)
    W.TuplesPerBatch *= IShape[I];
  std::vector<int64_t> Strides(size_t(R), 1);
  for (int64_t D = R - 1; D > 0; --D)
    Strides[size_t(D - 1)] = Strides[size_t(D)] * DShape[size_t(D)];
  W.BatchStride = Batch > 0 ? Strides[size_t(Batch - 1)] : 0;
  for (int64_t J = 0; J < W.K; ++J) {
    W.Dims.push_back(DShape[size_t(Batch + J)]);
    W.Strides.push_back(Strides[size_t(Batch + J)]);
  }
  W.SliceElems = Strides[size_t(Batch + W.K - 1)];
  W.Where = describeNode(N);
  return true;
}

} // namespace

bool cpu::lowerGatherND(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0), *Indices = N.getOperand(1),
              *Y = N.getResult(0);
  auto W = std::make_shared<TupleWalk>();
  if (!Y->getType().getLayout().isIdentity() ||
      !planTupleWalk(N, X->getType(), Indices->getType(),
                     N.getIntAttr("batch_dims", 0), *W))
    return false;
  BufferId XB = L.getBuffer(X), IB = L.getBuffer(Indices),
           YB = L.defineBuffer(Y);
  const size_t ElemBytes = getElementByteSize(X->getType().getElementType());
  // An empty slice (a 0 dim after the tuple's) copies nothing.
  const size_t Bytes = ElemBytes * size_t(W->SliceElems);
  L.addStep({Y->getName(), "gather_nd", false}, {XB, IB}, {YB}, [=](Frame &Fr) {
    const uint8_t *XP = Fr.bytes(XB);
    const auto *IP = reinterpret_cast<const int64_t *>(Fr.bytes(IB));
    uint8_t *YP = Fr.bytes(YB);
    for (int64_t T = 0; T < W->Tuples; ++T) {
      const int64_t From = W->sliceOffset(Fr, IP, T);
      if (From < 0)
        return;
      std::memcpy(YP + size_t(T) * Bytes,
                  XP + size_t(From) * ElemBytes, Bytes);
    }
  });
  return true;
}

bool cpu::lowerScatterND(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0), *Indices = N.getOperand(1),
              *Updates = N.getOperand(2), *Y = N.getResult(0);
  const TensorType &XT = X->getType();
  const ElementType Elt = XT.getElementType();
  const std::string Reduction = N.getStringAttr("reduction", "none");
  char R = '=';
  CombineFn Combine = nullptr;
  auto W = std::make_shared<TupleWalk>();
  if (!getScatterCombine(Reduction, Elt, R, Combine) ||
      Updates->getType().getElementType() != Elt ||
      !Updates->getType().getLayout().isIdentity() ||
      Y->getType() != XT.withLayout(Layout()) ||
      !planTupleWalk(N, XT, Indices->getType(), 0, *W))
    return false;
  BufferId XB = L.getBuffer(X), IB = L.getBuffer(Indices),
           UB = L.getBuffer(Updates), YB = L.defineBuffer(Y);
  const size_t Size = getElementByteSize(Elt);
  const size_t Total = size_t(*XT.getNumElements()) * Size;
  L.addStep({Y->getName(),
             std::string("scatter_nd") + (R == '=' ? "" : ".") +
                 (R == '=' ? "" : Reduction),
             false},
            {XB, IB, UB}, {YB}, [=](Frame &Fr) {
              uint8_t *YP = Fr.bytes(YB);
              if (YP != Fr.bytes(XB))
                std::memcpy(YP, Fr.bytes(XB), Total);
              const auto *IP = reinterpret_cast<const int64_t *>(Fr.bytes(IB));
              const uint8_t *UP = Fr.bytes(UB);
              const int64_t S = W->SliceElems;
              for (int64_t T = 0; T < W->Tuples; ++T) {
                const int64_t To = W->sliceOffset(Fr, IP, T);
                if (To < 0)
                  return;
                uint8_t *Dst = YP + size_t(To) * Size;
                const uint8_t *Src = UP + size_t(T * S) * Size;
                if (!Combine) {
                  std::memcpy(Dst, Src, size_t(S) * Size);
                  continue;
                }
                for (int64_t E = 0; E < S; ++E)
                  Combine(Dst + size_t(E) * Size, Src + size_t(E) * Size, R);
              }
            });
  return true;
}

bool cpu::lowerGatherElements(LoweringContext &L, const Node &N,
                              const FusedTail &) {
  const Value *X = N.getOperand(0), *Indices = N.getOperand(1),
              *Y = N.getResult(0);
  auto W = std::make_shared<ElementsWalk>();
  if (!planElementsWalk(N, Y->getType(), *W))
    return false;
  BufferId XB = L.getBuffer(X), IB = L.getBuffer(Indices),
           YB = L.defineBuffer(Y);
  const size_t Elt = getElementByteSize(X->getType().getElementType());
  L.addStep({Y->getName(), "gather_elements", false}, {XB, IB}, {YB},
            [=](Frame &Fr) {
              const uint8_t *XP = Fr.bytes(XB), *IP = Fr.bytes(IB);
              uint8_t *YP = Fr.bytes(YB);
              for (size_t K = 0; K < W->SideOffsets.size(); ++K) {
                const int64_t From = W->dataOffset(Fr, IP, K);
                if (From < 0)
                  return;
                std::memcpy(YP + W->SideOffsets[K] * Elt, XP + From * Elt, Elt);
              }
            });
  return true;
}

bool cpu::lowerScatterElements(LoweringContext &L, const Node &N,
                               const FusedTail &) {
  const Value *X = N.getOperand(0), *Indices = N.getOperand(1),
              *Updates = N.getOperand(2), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const ElementType Elt = XT.getElementType();
  const std::string Reduction = N.getStringAttr("reduction", "none");
  char R = '=';
  CombineFn Combine = nullptr;
  if (!getScatterCombine(Reduction, Elt, R, Combine) ||
      Updates->getType().getElementType() != Elt ||
      YT.getShape() != XT.getShape())
    return false;
  // The walk's side offsets are the updates'; the result is written at the
  // data offsets through its own strides (the same ones when both are
  // dense in one layout, else through the walk of the result).
  auto W = std::make_shared<ElementsWalk>();
  if (!planElementsWalk(N, Updates->getType(), *W) ||
      getStrides(YT) != getStrides(XT))
    return false;
  auto XShape = XT.getStaticShape();
  auto XS = getStrides(XT);
  std::vector<int64_t> Shape(XShape.begin(), XShape.end()),
      Strides(XS.begin(), XS.end());
  BufferId XB = L.getBuffer(X), IB = L.getBuffer(Indices),
           UB = L.getBuffer(Updates), YB = L.defineBuffer(Y);
  const size_t Size = getElementByteSize(Elt);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(),
             std::string("scatter_elements") + (R == '=' ? "" : ".") +
                 (R == '=' ? "" : Reduction),
             false},
            {XB, IB, UB}, {YB}, [=](Frame &Fr) {
              uint8_t *YP = Fr.bytes(YB);
              copyStrided(int(Shape.size()), Shape.data(), Fr.bytes(XB),
                          Strides.data(), YP, Strides.data(), Size, Threads);
              const uint8_t *IP = Fr.bytes(IB), *UP = Fr.bytes(UB);
              for (size_t K = 0; K < W->SideOffsets.size(); ++K) {
                const int64_t To = W->dataOffset(Fr, IP, K);
                if (To < 0)
                  return;
                const uint8_t *From = UP + W->SideOffsets[K] * Size;
                if (Combine)
                  Combine(YP + To * Size, From, R);
                else
                  std::memcpy(YP + To * Size, From, Size);
              }
            });
  return true;
}
