//===- LowerDataMovement.cpp - Copies, views, relayouts -------------------===//
//
// Every op here is one or more strided copies (Kernels.h: copyStrided) or
// no kernel at all: Concat copies each operand into its slice of the
// result; Split and Slice read slices (any steps) of the operand;
// DepthToSpace and SpaceToDepth are 6-dim strided copies; Pad copies the
// interior and fills (constant) or copies (edge, reflect) its borders; a
// relayout and a Transpose that is not a view copy through permuted
// strides; bitcast reshapes and view transposes share their operand's
// buffer; Expand copies with zero strides (any element size) and Cast
// converts between the common element types.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ProgramImpl.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/LayoutAlgebra.h"

#include <algorithm>
#include <cstring>
#include <iterator>

using namespace strider;
using namespace strider::cpu;

namespace {

/// One strided copy of a step: \p Rank dims of \p Shape from the source
/// buffer at element offset \p SrcOff through \p Src strides to the
/// destination at \p DstOff through \p Dst strides.
struct CopyPlan {
  int Rank = 0;
  std::vector<int64_t> Shape, Src, Dst;
  int64_t SrcOff = 0, DstOff = 0;
};

void runCopy(const CopyPlan &C, const uint8_t *Src, uint8_t *Dst, int64_t Elt,
             int Threads) {
  copyStrided(C.Rank, C.Shape.data(), Src + C.SrcOff * Elt, C.Src.data(),
              Dst + C.DstOff * Elt, C.Dst.data(), Elt, Threads);
}

/// A row-major reshape of \p X into \p Y as one strided copy (see
/// codegen::getReshapeCopy).
bool planReshapeCopy(const TensorType &X, const TensorType &Y, CopyPlan &Out) {
  if (!codegen::getReshapeCopy(X, Y, Out.Shape, Out.Src, Out.Dst))
    return false;
  Out.Rank = int(Out.Shape.size());
  return true;
}

std::vector<int64_t> toVector(llvm::ArrayRef<int64_t> A) {
  return std::vector<int64_t>(A.begin(), A.end());
}

} // namespace

bool cpu::lowerSplit(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0);
  const TensorType &XT = X->getType();
  const int64_t R = XT.getRank();
  int64_t Axis = N.getIntAttr("axis", 0);
  if (Axis < 0)
    Axis += R;
  if (Axis < 0 || Axis >= R)
    return false;
  auto XS = getStrides(XT);
  const int64_t Elt = int64_t(getElementByteSize(XT.getElementType()));
  std::vector<CopyPlan> Copies;
  std::vector<BufferId> Writes;
  std::vector<std::string> Names;
  int64_t Offset = 0;
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    const Value *Y = N.getResult(I);
    if (!Y)
      return false;
    const TensorType &YT = Y->getType();
    CopyPlan C;
    C.Rank = int(R);
    C.Shape = toVector(YT.getStaticShape());
    C.Src = toVector(XS);
    C.Dst = toVector(getStrides(YT));
    C.SrcOff = Offset * XS[size_t(Axis)];
    Offset += C.Shape[size_t(Axis)];
    Copies.push_back(C);
    Names.push_back(Y->getName());
  }
  if (Offset != XT.getStaticShape()[size_t(Axis)])
    return false;
  BufferId XB = L.getBuffer(X);
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    Writes.push_back(L.defineBuffer(N.getResult(I)));
  const int Threads = L.getThreads();
  std::string All;
  for (const std::string &S : Names)
    All += (All.empty() ? "" : ",") + S;
  L.addStep({All, "split", false}, {XB}, Writes, [=](Frame &Fr) {
    for (size_t I = 0; I < Copies.size(); ++I)
      runCopy(Copies[I], Fr.bytes(XB), Fr.bytes(Writes[I]), Elt, Threads);
  });
  return true;
}

bool cpu::lowerSlice(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  CopyPlan C;
  llvm::SmallVector<int64_t, 6> Src;
  if (!codegen::getSliceView(N, C.SrcOff, Src))
    return false;
  C.Rank = int(XT.getRank());
  C.Shape = toVector(YT.getStaticShape());
  C.Src = toVector(Src);
  C.Dst = toVector(getStrides(YT));
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int64_t Elt = int64_t(getElementByteSize(XT.getElementType()));
  const int Threads = L.getThreads();
  L.addStep({Y->getName(), "slice", false}, {XB}, {YB}, [=](Frame &Fr) {
    runCopy(C, Fr.bytes(XB), Fr.bytes(YB), Elt, Threads);
  });
  return true;
}

/// Run \p Copies of one step from \p XB to \p YB.
static void addCopiesStep(LoweringContext &L, const Node &N, const char *Kernel,
                          std::vector<CopyPlan> Copies) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int64_t Elt =
      int64_t(getElementByteSize(X->getType().getElementType()));
  const int Threads = L.getThreads();
  L.addStep({Y->getName(), Kernel, false}, {XB}, {YB}, [=](Frame &Fr) {
    for (const CopyPlan &C : Copies)
      runCopy(C, Fr.bytes(XB), Fr.bytes(YB), Elt, Threads);
  });
}

/// Tile with constant repeats: one strided copy of the whole operand per
/// tile (the product of the repeats), each at its offset in the result.
bool cpu::lowerTile(LoweringContext &L, const Node &N, const FusedTail &) {
  const TensorType &XT = N.getOperand(0)->getType();
  const TensorType &YT = N.getResult(0)->getType();
  std::vector<int64_t> Repeats = codegen::getConstantInts(N, 1);
  const size_t R = XT.getRank();
  if (Repeats.size() != R || XT.getNumElements().getValueOr(0) == 0)
    return false;
  auto XShape = XT.getStaticShape();
  auto YS = getStrides(YT);
  int64_t Tiles = 1;
  for (int64_t Rep : Repeats)
    Tiles *= Rep;
  if (Tiles == 0 || Tiles > (int64_t(1) << 16))
    return false;
  std::vector<CopyPlan> Copies;
  std::vector<int64_t> Tile(R, 0);
  for (int64_t T = 0; T < Tiles; ++T) {
    CopyPlan C;
    C.Rank = int(R);
    C.Shape = toVector(XShape);
    C.Src = toVector(getStrides(XT));
    C.Dst = toVector(YS);
    for (size_t D = 0; D < R; ++D)
      C.DstOff += Tile[D] * XShape[D] * YS[D];
    Copies.push_back(std::move(C));
    for (size_t D = R; D-- > 0;) {
      if (++Tile[D] < Repeats[D])
        break;
      Tile[D] = 0;
    }
  }
  addCopiesStep(L, N, "tile", std::move(Copies));
  return true;
}

/// Gather by indices computed at run time (an embedding lookup): the
/// copies of lowerGather, their offsets from the index buffer (i64 or i32,
/// row-major) when the step runs; an index out of range stops the run with
/// a located error.
static bool lowerGatherDynamic(LoweringContext &L, const Node &N,
                               int64_t Axis) {
  const Value *X = N.getOperand(0), *Indices = N.getOperand(1),
              *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &IT = Indices->getType(),
                   &YT = Y->getType();
  const ElementType IElt = IT.getElementType();
  if ((IElt != ElementType::I64 && IElt != ElementType::I32) ||
      !IT.getLayout().isIdentity())
    return false;
  const int64_t R = XT.getRank(), Q = IT.getRank();
  auto XShape = XT.getStaticShape();
  auto XS = getStrides(XT), YS = getStrides(YT);
  CopyPlan Slice;
  Slice.Rank = int(R);
  Slice.Shape = toVector(XShape);
  Slice.Shape[size_t(Axis)] = 1;
  Slice.Src = toVector(XS);
  for (int64_t D = 0; D < R; ++D)
    Slice.Dst.push_back(D < Axis    ? YS[size_t(D)]
                        : D == Axis ? 0
                                    : YS[size_t(D + Q - 1)]);
  // Result offset of each index position, in the indices' row-major order.
  std::vector<int64_t> DstOffsets;
  auto IShape = IT.getStaticShape();
  std::vector<int64_t> At(size_t(Q), 0);
  for (int64_t K = 0, E = *IT.getNumElements(); K < E; ++K) {
    int64_t Off = 0;
    for (int64_t D = 0; D < Q; ++D)
      Off += At[size_t(D)] * YS[size_t(Axis + D)];
    DstOffsets.push_back(Off);
    for (int64_t D = Q; D-- > 0;) {
      if (++At[size_t(D)] < IShape[size_t(D)])
        break;
      At[size_t(D)] = 0;
    }
  }
  BufferId XB = L.getBuffer(X), IB = L.getBuffer(Indices),
           YB = L.defineBuffer(Y);
  const int64_t Elt = int64_t(getElementByteSize(XT.getElementType()));
  const int64_t AxisSize = XShape[size_t(Axis)], AxisStride = XS[size_t(Axis)];
  const int Threads = L.getThreads();
  const std::string Where = describeNode(N);
  L.addStep({Y->getName(), "gather.dynamic", false}, {XB, IB}, {YB},
            [=](Frame &Fr) {
              const uint8_t *IBytes = Fr.bytes(IB);
              CopyPlan C = Slice;
              for (size_t K = 0; K < DstOffsets.size(); ++K) {
                int64_t Index;
                if (IElt == ElementType::I64) {
                  std::memcpy(&Index, IBytes + K * 8, 8);
                } else {
                  int32_t I32;
                  std::memcpy(&I32, IBytes + K * 4, 4);
                  Index = I32;
                }
                if (Index < -AxisSize || Index >= AxisSize) {
                  Fr.fail(Where + ": index " + std::to_string(Index) +
                          " is out of range for an axis of size " +
                          std::to_string(AxisSize));
                  return;
                }
                if (Index < 0)
                  Index += AxisSize;
                C.SrcOff = Index * AxisStride;
                C.DstOff = DstOffsets[K];
                runCopy(C, Fr.bytes(XB), Fr.bytes(YB), Elt, Threads);
              }
            });
  return true;
}

/// Gather with constant indices: one strided copy of the operand's slice
/// at each index to the result's slice at the index's position.
bool cpu::lowerGather(LoweringContext &L, const Node &N, const FusedTail &) {
  const TensorType &XT = N.getOperand(0)->getType();
  const TensorType &YT = N.getResult(0)->getType();
  const Value *Indices = N.getOperand(1);
  const TensorData *ID = Indices->getConstantData();
  const int64_t R = XT.getRank();
  int64_t Axis = N.getIntAttr("axis", 0);
  if (Axis < 0)
    Axis += R;
  if (Axis < 0 || Axis >= R ||
      Indices->getType().getNumElements().getValueOr(0) > (1 << 16))
    return false;
  if (!ID)
    return lowerGatherDynamic(L, N, Axis);
  const int64_t Q = ID->getType().getRank();
  auto XShape = XT.getStaticShape();
  auto IShape = ID->getType().getStaticShape();
  auto XS = getStrides(XT), YS = getStrides(YT);
  // The result is X[:Axis] + Indices.shape + X[Axis+1:].
  std::vector<CopyPlan> Copies;
  std::vector<int64_t> At(size_t(Q), 0);
  for (int64_t K = 0, E = ID->getNumElements(); K < E; ++K) {
    int64_t Index = ID->getInt(K);
    if (Index < 0)
      Index += XShape[size_t(Axis)];
    if (Index < 0 || Index >= XShape[size_t(Axis)])
      return false; // The reference kernel reports it.
    CopyPlan C;
    C.Rank = int(R);
    C.Shape = toVector(XShape);
    C.Shape[size_t(Axis)] = 1;
    C.Src = toVector(XS);
    C.SrcOff = Index * XS[size_t(Axis)];
    for (int64_t D = 0; D < R; ++D)
      C.Dst.push_back(D < Axis    ? YS[size_t(D)]
                      : D == Axis ? 0
                                  : YS[size_t(D + Q - 1)]);
    for (int64_t D = 0; D < Q; ++D)
      C.DstOff += At[size_t(D)] * YS[size_t(Axis + D)];
    Copies.push_back(std::move(C));
    for (int64_t D = Q; D-- > 0;) {
      if (++At[size_t(D)] < IShape[size_t(D)])
        break;
      At[size_t(D)] = 0;
    }
  }
  addCopiesStep(L, N, "gather", std::move(Copies));
  return true;
}

bool cpu::lowerDepthToSpace(LoweringContext &L, const Node &N,
                            const FusedTail &) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  if (XT.getRank() != 4)
    return false;
  const int64_t B = N.getIntAttr("blocksize", 0);
  if (B < 1)
    return false;
  auto XS = getStrides(XT), YS = getStrides(YT);
  CopyPlan C;
  C.Rank = 6;
  if (N.getOpId() == OpId::DepthToSpace) {
    // Y[n, c, h*B + i, w*B + j] = X[n, ch(c, i, j), h, w] over
    // (n, c, h, i, w, j).
    auto YShape = YT.getStaticShape();
    const int64_t CO = YShape[1], H = YShape[2] / B, W = YShape[3] / B;
    const bool CRD = N.getStringAttr("mode", "DCR") == "CRD";
    C.Shape = {YShape[0], CO, H, B, W, B};
    C.Dst = {YS[0], YS[1], B * YS[2], YS[2], B * YS[3], YS[3]};
    C.Src = {XS[0], CRD ? B * B * XS[1] : XS[1],
             XS[2], CRD ? B * XS[1] : B * CO * XS[1],
             XS[3], CRD ? XS[1] : CO * XS[1]};
  } else {
    // Y[n, (i*B + j)*C + c, h, w] = X[n, c, h*B + i, w*B + j] over
    // (n, c, h, i, w, j).
    auto XShape = XT.getStaticShape();
    const int64_t CI = XShape[1], H = XShape[2] / B, W = XShape[3] / B;
    C.Shape = {XShape[0], CI, H, B, W, B};
    C.Src = {XS[0], XS[1], B * XS[2], XS[2], B * XS[3], XS[3]};
    C.Dst = {YS[0], YS[1], YS[2], B * CI * YS[1], YS[3], CI * YS[1]};
  }
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int64_t Elt = int64_t(getElementByteSize(XT.getElementType()));
  const int Threads = L.getThreads();
  L.addStep(
      {Y->getName(),
       N.getOpId() == OpId::DepthToSpace ? "depth_to_space" : "space_to_depth",
       false},
      {XB}, {YB},
      [=](Frame &Fr) { runCopy(C, Fr.bytes(XB), Fr.bytes(YB), Elt, Threads); });
  return true;
}

/// Pad's begin and end pads per dim (2 * rank entries) from its constant
/// 'pads' and optional constant 'axes' operands; empty when either is not
/// constant or they do not fit the rank.
static std::vector<int64_t> padsPerDim(const Node &N, int64_t R) {
  std::vector<int64_t> Pads = codegen::getConstantInts(N, 1);
  std::vector<int64_t> Axes;
  if (N.hasOperand(3)) {
    Axes = codegen::getConstantInts(N, 3);
    if (Axes.empty())
      return {};
  } else {
    for (int64_t I = 0; I < R; ++I)
      Axes.push_back(I);
  }
  const size_t E = Axes.size();
  if (Pads.size() != 2 * E)
    return {};
  std::vector<int64_t> All(size_t(2 * R), 0);
  for (size_t K = 0; K < E; ++K) {
    int64_t A = Axes[K] < 0 ? Axes[K] + R : Axes[K];
    if (A < 0 || A >= R)
      return {};
    All[size_t(A)] = Pads[K];
    All[size_t(A + R)] = Pads[K + E];
  }
  return All;
}

/// Pad in every mode as strided copies: the operand's part that survives
/// (negative pads crop) is copied into the result's interior; constant
/// mode fills the result first, edge and reflect fill the borders dim by
/// dim by copying from the result itself. A border of dim D spans the
/// full extent of dims before D (their borders are filled already) and the
/// interior of dims after it; its source is the interior slice it mirrors
/// (reflect: a negative stride along D) or repeats (edge: stride 0 along
/// D). Reflect borders that reach beyond the surviving interior (pads of a
/// dim's size or more, or reflecting into a cropped part) are left to the
/// reference kernel.
bool cpu::lowerPad(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const std::string Mode = N.getStringAttr("mode", "constant");
  const bool Constant = Mode == "constant", Edge = Mode == "edge";
  if (!Constant && !Edge && Mode != "reflect")
    return false;
  const int64_t R = XT.getRank();
  std::vector<int64_t> Pads = padsPerDim(N, R);
  if (R == 0 || Pads.empty() || YT.getNumElements().getValueOr(0) == 0)
    return false;
  const int64_t Elt = int64_t(getElementByteSize(XT.getElementType()));
  // Constant mode: the fill value's bytes (zero without one).
  std::vector<uint8_t> Fill(size_t(Elt), 0);
  if (Constant && N.hasOperand(2)) {
    const TensorData *D = N.getOperand(2)->getConstantData();
    if (!D || D->getElementType() != XT.getElementType())
      return false;
    if (D->getNumElements() == 1)
      Fill.assign(D->getBytes().begin(), D->getBytes().end());
    else if (D->getNumElements() != 0)
      return false;
  }
  auto XShape = XT.getStaticShape(), YShape = YT.getStaticShape();
  auto XS = getStrides(XT), YS = getStrides(YT);
  // The interior: output positions [Lo, Lo + Len) of each dim, read from
  // input position Lo - Begin on.
  std::vector<int64_t> Lo(size_t(R), 0), Len(size_t(R), 0);
  CopyPlan Interior;
  Interior.Rank = int(R);
  Interior.Src = toVector(XS);
  Interior.Dst = toVector(YS);
  for (int64_t D = 0; D < R; ++D) {
    const int64_t Begin = Pads[size_t(D)], End = Pads[size_t(D + R)];
    const int64_t Dim = XShape[size_t(D)];
    Lo[size_t(D)] = std::max<int64_t>(Begin, 0);
    Len[size_t(D)] =
        Dim + std::min<int64_t>(Begin, 0) + std::min<int64_t>(End, 0);
    if (Len[size_t(D)] <= 0)
      return false; // Nothing survives: the reference fills or reports.
    Interior.Shape.push_back(Len[size_t(D)]);
    Interior.SrcOff += std::max<int64_t>(-Begin, 0) * XS[size_t(D)];
    Interior.DstOff += Lo[size_t(D)] * YS[size_t(D)];
  }
  // The border copies, dim by dim, within the result.
  std::vector<CopyPlan> Borders;
  for (int64_t D = 0; !Constant && D < R; ++D) {
    const int64_t Begin = std::max<int64_t>(Pads[size_t(D)], 0);
    const int64_t End = std::max<int64_t>(Pads[size_t(D + R)], 0);
    const int64_t First = Lo[size_t(D)], Last = First + Len[size_t(D)] - 1;
    const bool Repeat = Edge || XShape[size_t(D)] == 1;
    if (!Repeat && (Begin > Len[size_t(D)] - 1 || End > Len[size_t(D)] - 1))
      return false;
    CopyPlan C;
    C.Rank = int(R);
    C.Src = toVector(YS);
    C.Dst = toVector(YS);
    for (int64_t E = 0; E < R; ++E) {
      C.Shape.push_back(E < D ? YShape[size_t(E)] : Len[size_t(E)]);
      if (E > D)
        C.DstOff += Lo[size_t(E)] * YS[size_t(E)];
    }
    C.SrcOff = C.DstOff;
    const int64_t S = YS[size_t(D)];
    C.Src[size_t(D)] = Repeat ? 0 : -S;
    if (Begin > 0) {
      // Output positions [0, Begin) read First (edge) or 2 * First - p.
      CopyPlan B = C;
      B.Shape[size_t(D)] = Begin;
      B.SrcOff += (Repeat ? First : 2 * First) * S;
      Borders.push_back(std::move(B));
    }
    if (End > 0) {
      // Output positions Last + 1 + k read Last (edge) or Last - 1 - k.
      CopyPlan B = C;
      B.Shape[size_t(D)] = End;
      B.DstOff += (Last + 1) * S;
      B.SrcOff += (Repeat ? Last : Last - 1) * S;
      Borders.push_back(std::move(B));
    }
  }
  const int64_t Count = *YT.getNumElements();
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  std::string Kernel = "pad." + Mode;
  L.addStep({Y->getName(), Kernel, false}, {XB}, {YB}, [=](Frame &Fr) {
    uint8_t *Out = Fr.bytes(YB);
    if (Constant) {
      bool Zero = std::all_of(Fill.begin(), Fill.end(),
                              [](uint8_t B) { return B == 0; });
      if (Zero)
        std::memset(Out, 0, size_t(Count * Elt));
      else
        for (int64_t I = 0; I < Count; ++I)
          std::memcpy(Out + I * Elt, Fill.data(), size_t(Elt));
    }
    runCopy(Interior, Fr.bytes(XB), Out, Elt, Threads);
    for (const CopyPlan &B : Borders)
      runCopy(B, Out, Out, Elt, Threads);
  });
  return true;
}

bool cpu::lowerConcat(LoweringContext &L, const Node &N,
                      const FusedTail &Tail) {
  const TensorType &YT = N.getResult(0)->getType();
  unsigned R = YT.getRank();
  if (R == 0 || R > 6)
    return false;
  int64_t Axis = N.getIntAttr("axis", 0);
  if (Axis < 0)
    Axis += R;
  for (const Value *Op : N.getOperands())
    if (!Op || Op->getType().getElementType() != YT.getElementType())
      return false;
  // Operands their producers wrote in place (LoweringContext::
  // findConcatSlot) are not copied; the buffer exists already then.
  std::vector<BufferId> Reads;
  std::vector<int64_t> Offsets;
  std::vector<TensorType> Types;
  int64_t Off = 0;
  for (const Value *Op : N.getOperands()) {
    if (!L.isInConcatSlot(Op)) {
      Reads.push_back(L.getBuffer(Op));
      Offsets.push_back(Off);
      Types.push_back(Op->getType());
    }
    Off += Op->getType().getStaticShape()[size_t(Axis)];
  }
  BufferId YB = L.hasBuffer(Tail.Result) ? L.getBuffer(Tail.Result)
                                         : L.defineBuffer(Tail.Result);
  if (Reads.empty())
    return true; // Every operand is in place.
  auto YStr = getStrides(YT);
  const int64_t Elt = int64_t(getElementByteSize(YT.getElementType()));
  const int Threads = L.getThreads();
  L.addStep(
      {Tail.Result->getName(), "concat", false}, Reads, {YB}, [=](Frame &Fr) {
        for (size_t I = 0; I < Reads.size(); ++I) {
          auto Shape = Types[I].getStaticShape();
          auto SStr = getStrides(Types[I]);
          copyStrided(int(R), Shape.data(), Fr.bytes(Reads[I]), SStr.data(),
                      Fr.bytes(YB) + Offsets[I] * YStr[size_t(Axis)] * Elt,
                      YStr.data(), Elt, Threads);
        }
      });
  return true;
}

bool cpu::lowerRelayout(LoweringContext &L, const Node &N,
                        const FusedTail &Tail) {
  const Value *X = N.getOperand(0);
  const TensorType &XT = X->getType(), &YT = N.getResult(0)->getType();
  if (XT.getRank() > 6)
    return false;
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Tail.Result);
  auto Shape = XT.getStaticShape();
  auto XS = getStrides(XT), YS = getStrides(YT);
  const int64_t Elt = int64_t(getElementByteSize(XT.getElementType()));
  const int Threads = L.getThreads();
  const int R = int(XT.getRank());
  L.addStep({Tail.Result->getName(), "relayout", false}, {XB}, {YB},
            [=](Frame &Fr) {
              copyStrided(R, Shape.data(), Fr.bytes(XB), XS.data(),
                          Fr.bytes(YB), YS.data(), Elt, Threads);
            });
  return true;
}

bool cpu::lowerView(LoweringContext &L, const Node &N, const FusedTail &Tail) {
  const Value *X = N.getOperand(0);
  const Value *Y = N.getResult(0);
  for (unsigned I = 1; I < N.getNumResults(); ++I)
    if (N.hasResult(I))
      return false; // Dropout's mask.
  layout::DimBindings NoDims;
  switch (N.getOpId()) {
  case OpId::Identity:
  case OpId::Dropout:
    if (X->getType() != Y->getType())
      return false;
    break;
  case OpId::Transpose: {
    std::vector<int64_t> Perm = layout::getTransposePerm(N);
    if (!layout::isTransposeView(X->getType(), Perm, Y->getType(), NoDims)) {
      // A copy: output dim J reads input dim Perm[J].
      auto YShape = Y->getType().getStaticShape();
      auto XS = getStrides(X->getType()), YS = getStrides(Y->getType());
      std::vector<int64_t> SrcStrides;
      for (int64_t Pd : Perm)
        SrcStrides.push_back(XS[size_t(Pd)]);
      BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Tail.Result);
      const int64_t Elt =
          int64_t(getElementByteSize(X->getType().getElementType()));
      const int Threads = L.getThreads();
      const int R = int(YShape.size());
      L.addStep({Y->getName(), "transpose", false}, {XB}, {YB}, [=](Frame &Fr) {
        copyStrided(R, YShape.data(), Fr.bytes(XB), SrcStrides.data(),
                    Fr.bytes(YB), YS.data(), Elt, Threads);
      });
      return true;
    }
    break;
  }
  default:
    if (!layout::isReshapeBitcast(X->getType(), Y->getType(), NoDims)) {
      const TensorType &XT = X->getType(), &YT = Y->getType();
      const int64_t Elt = int64_t(getElementByteSize(XT.getElementType()));
      const int Threads = L.getThreads();
      CopyPlan Direct;
      if (planReshapeCopy(XT, YT, Direct)) {
        // Elements move in one strided pass (a channel shuffle of a
        // channels-last tensor: a small transposition per pixel).
        BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
        L.addStep({Y->getName(), "reshape.copy", false}, {XB}, {YB},
                  [=](Frame &Fr) {
                    runCopy(Direct, Fr.bytes(XB), Fr.bytes(YB), Elt, Threads);
                  });
        return true;
      }
      // Else through a row-major scratch copy (row-major reshapes are
      // bitcasts), then into the result's layout.
      CopyPlan In, Out;
      In.Rank = int(XT.getRank());
      In.Shape = toVector(XT.getStaticShape());
      In.Src = toVector(getStrides(XT));
      In.Dst = toVector(getStrides(XT.withLayout(Layout())));
      Out.Rank = int(YT.getRank());
      Out.Shape = toVector(YT.getStaticShape());
      Out.Src = toVector(getStrides(YT.withLayout(Layout())));
      Out.Dst = toVector(getStrides(YT));
      BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
      BufferId SB = L.defineScratch(*XT.getNumElements() * Elt);
      L.addStep({Y->getName(), "reshape.copy.staged", false}, {XB}, {YB, SB},
                [=](Frame &Fr) {
                  runCopy(In, Fr.bytes(XB), Fr.bytes(SB), Elt, Threads);
                  runCopy(Out, Fr.bytes(SB), Fr.bytes(YB), Elt, Threads);
                });
      return true;
    }
    break;
  }
  (void)Tail;
  L.alias(Y, X);
  return true;
}

namespace {

const std::pair<ElementType, CastType> CastTypes[] = {
    {ElementType::F32, CastType::F32},   {ElementType::F64, CastType::F64},
    {ElementType::I8, CastType::I8},     {ElementType::U8, CastType::U8},
    {ElementType::I32, CastType::I32},   {ElementType::I64, CastType::I64},
    {ElementType::Bool, CastType::Bool},
};

llvm::Optional<CastType> getCastType(ElementType Elt) {
  const auto *It =
      llvm::find_if(CastTypes, [&](const auto &E) { return E.first == Elt; });
  if (It == std::end(CastTypes))
    return llvm::None;
  return It->second;
}

} // namespace

bool cpu::lowerExpand(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const ElementType Elt = Y->getType().getElementType();
  const unsigned Bytes = getElementByteSize(Elt);
  if (X->getType().getElementType() != Elt || !isCopyableSize(Bytes) ||
      Y->getType().getRank() > 6)
    return false;
  // Only the data operand is read; the shape is in the result's type.
  BroadcastParams BP;
  BP.Rank = int(Y->getType().getRank());
  getPhysicalShape(Y->getType(), BP.Shape);
  getBroadcastStrides(X->getType(), Y->getType(), BP.Strides[0]);
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(), "expand." + getElementTypeName(Elt).str(), false},
            {XB}, {YB}, [=](Frame &Fr) {
              runExpand(Bytes, BP, Fr.bytes(XB), Fr.bytes(YB), Threads);
            });
  return true;
}

bool cpu::lowerCast(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  llvm::Optional<ElementType> To =
      fromOnnxDataType(int32_t(N.getIntAttr("to", 0)));
  llvm::Optional<CastType> From = getCastType(XT.getElementType());
  llvm::Optional<CastType> Dst = getCastType(YT.getElementType());
  // Over the flat buffers: both layouts must order the elements alike.
  if (!To || *To != YT.getElementType() || !From || !Dst ||
      !haveSameElementOrder(XT, YT))
    return false;
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int64_t Count = *XT.getNumElements();
  const int Threads = L.getThreads();
  const CastType S = *From, D = *Dst;
  L.addStep({Y->getName(),
             "cast." + getElementTypeName(XT.getElementType()).str() + "." +
                 getElementTypeName(YT.getElementType()).str(),
             false},
            {XB}, {YB}, [=](Frame &Fr) {
              runCast(S, D, Fr.bytes(XB), Fr.bytes(YB), Count, Threads);
            });
  return true;
}
