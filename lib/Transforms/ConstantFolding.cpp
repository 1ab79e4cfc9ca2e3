//===- ConstantFolding.cpp - Evaluate shape computations at compile time --===//
//
// Replaces nodes whose operands are Constant nodes (graph inputs with
// default data are not constants: callers may override them) by Constant
// nodes holding their result, and Shape nodes whose operand's dims are
// static. One evaluator per op, in a table keyed by OpId; they cover the
// shape-computation chains exporters write (Shape -> Gather -> Unsqueeze ->
// Concat -> Reshape) plus Transpose and Cast of any constant.
//
//===----------------------------------------------------------------------===//

#include "ConstantTensor.h"
#include "GraphRewrite.h"

#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>
#include <cstring>

using namespace strider;
using namespace strider::folding;

/// A fold may not create a constant of more elements than this unless one
/// of its operands already is that large (Expand and ConstantOfShape would
/// otherwise blow small shapes up into large initializers).
static constexpr int64_t MaxGrownElements = int64_t(1) << 20;

namespace {

/// What an evaluator sees: the node, its operands' data in logical order
/// (null where an operand is absent or not a constant) and the result type
/// (static shape, known element type, identity layout).
struct FoldInput {
  const Node &N;
  llvm::ArrayRef<TensorDataRef> Operands;
  const TensorType &Result;

  const TensorData &operand(unsigned I) const { return *Operands[I]; }
  unsigned eltSize() const {
    return getElementByteSize(Result.getElementType());
  }
};

/// Evaluates one op; returns data of type In.Result, or null when the op
/// cannot be evaluated here (unsupported case, or an error the runtime
/// would report, such as an index out of range).
using FoldFn = TensorDataRef (*)(const FoldInput &In);

struct FoldRule {
  OpId Op;
  /// Whether every present operand must be a constant (Shape only reads
  /// its operand's type).
  bool NeedsConstantOperands;
  FoldFn Fold;
};

} // namespace

static TensorDataRef makeData(const TensorType &T, std::vector<uint8_t> Bytes) {
  auto D = TensorData::create(T, std::move(Bytes));
  if (!D) {
    llvm::consumeError(D.takeError());
    return nullptr;
  }
  return *D;
}

static int64_t product(llvm::ArrayRef<int64_t> Dims) {
  int64_t P = 1;
  for (int64_t D : Dims)
    P *= D;
  return P;
}

/// For each element of a tensor of \p OutShape, the index of the element
/// of a tensor of \p InShape that numpy broadcasting maps to it; None if
/// \p InShape does not broadcast to \p OutShape.
static llvm::Optional<std::vector<int64_t>>
broadcastIndices(llvm::ArrayRef<int64_t> InShape,
                 llvm::ArrayRef<int64_t> OutShape) {
  if (InShape.size() > OutShape.size())
    return llvm::None;
  unsigned Rank = OutShape.size(), Lead = Rank - InShape.size();
  // Stride of each output dim in the input; 0 where the input broadcasts.
  llvm::SmallVector<int64_t, 6> Step(Rank, 0);
  int64_t Stride = 1;
  for (unsigned I = Rank; I > Lead; --I) {
    int64_t In = InShape[I - 1 - Lead];
    if (In != OutShape[I - 1] && In != 1)
      return llvm::None;
    Step[I - 1] = In == 1 ? 0 : Stride;
    Stride *= In;
  }
  int64_t NumElts = product(OutShape);
  std::vector<int64_t> Indices;
  Indices.reserve(NumElts);
  llvm::SmallVector<int64_t, 6> Coord(Rank, 0);
  int64_t Offset = 0;
  for (int64_t E = 0; E < NumElts; ++E) {
    Indices.push_back(Offset);
    for (unsigned D = Rank; D > 0; --D) {
      unsigned I = D - 1;
      Offset += Step[I];
      if (++Coord[I] < OutShape[I])
        break;
      Offset -= Step[I] * OutShape[I];
      Coord[I] = 0;
    }
  }
  return Indices;
}

//===----------------------------------------------------------------------===//
// Evaluators
//===----------------------------------------------------------------------===//

static TensorDataRef foldShape(const FoldInput &In) {
  const TensorType &X = In.N.getOperand(0)->getType();
  if (!X.hasRank())
    return nullptr;
  int64_t Rank = X.getRank();
  auto Clamp = [Rank](int64_t V) {
    if (V < 0)
      V += Rank;
    return std::min(std::max(V, int64_t(0)), Rank);
  };
  int64_t Start = Clamp(In.N.getIntAttr("start", 0));
  int64_t End = Clamp(In.N.getIntAttr("end", Rank));
  std::vector<int64_t> Dims;
  for (int64_t I = Start; I < End; ++I) {
    if (!X.getDim(I).isStatic())
      return nullptr;
    Dims.push_back(X.getDim(I).getSize());
  }
  return TensorData::fromInt64(ElementType::I64, {int64_t(Dims.size())}, Dims);
}

/// Reshape, Flatten, Squeeze, Unsqueeze, Identity: the elements stay in
/// logical order, only the shape changes.
static TensorDataRef foldReshapeLike(const FoldInput &In) {
  std::vector<uint8_t> Bytes(In.operand(0).getBytes().begin(),
                             In.operand(0).getBytes().end());
  return makeData(In.Result, std::move(Bytes));
}

static TensorDataRef foldGather(const FoldInput &In) {
  const TensorData &Data = In.operand(0), &Indices = In.operand(1);
  llvm::SmallVector<int64_t, 6> Shape = Data.getType().getStaticShape();
  int64_t Rank = Shape.size();
  int64_t Axis = In.N.getIntAttr("axis", 0);
  if (Axis < 0)
    Axis += Rank;
  if (Axis < 0 || Axis >= Rank)
    return nullptr;
  int64_t Outer = product(llvm::makeArrayRef(Shape).take_front(Axis));
  int64_t AxisSize = Shape[Axis];
  int64_t Inner = product(llvm::makeArrayRef(Shape).drop_front(Axis + 1));
  unsigned EltSize = In.eltSize();
  int64_t Chunk = Inner * EltSize;
  int64_t NumIndices = Indices.getNumElements();
  std::vector<uint8_t> Bytes(Outer * NumIndices * Chunk);
  llvm::ArrayRef<uint8_t> Src = Data.getBytes();
  for (int64_t K = 0; K < NumIndices; ++K) {
    int64_t Index = Indices.getInt(K);
    if (Index < 0)
      Index += AxisSize;
    if (Index < 0 || Index >= AxisSize)
      return nullptr;
    for (int64_t O = 0; O < Outer; ++O)
      std::memcpy(&Bytes[(O * NumIndices + K) * Chunk],
                  &Src[(O * AxisSize + Index) * Chunk], Chunk);
  }
  return makeData(In.Result, std::move(Bytes));
}

static TensorDataRef foldConcat(const FoldInput &In) {
  llvm::SmallVector<int64_t, 6> Shape = In.Result.getStaticShape();
  int64_t Rank = Shape.size();
  int64_t Axis = In.N.getIntAttr("axis", 0);
  if (Axis < 0)
    Axis += Rank;
  if (Axis < 0 || Axis >= Rank)
    return nullptr;
  int64_t Outer = product(llvm::makeArrayRef(Shape).take_front(Axis));
  int64_t Inner = product(llvm::makeArrayRef(Shape).drop_front(Axis + 1));
  unsigned EltSize = In.eltSize();
  std::vector<uint8_t> Bytes;
  Bytes.reserve(product(Shape) * EltSize);
  for (int64_t O = 0; O < Outer; ++O) {
    for (const TensorDataRef &Op : In.Operands) {
      int64_t Chunk = Op->getType().getStaticShape()[Axis] * Inner * EltSize;
      llvm::ArrayRef<uint8_t> Src = Op->getBytes();
      Bytes.insert(Bytes.end(), Src.begin() + O * Chunk,
                   Src.begin() + (O + 1) * Chunk);
    }
  }
  return makeData(In.Result, std::move(Bytes));
}

static TensorDataRef foldSlice(const FoldInput &In) {
  const TensorData &Data = In.operand(0);
  llvm::SmallVector<int64_t, 6> Shape = Data.getType().getStaticShape();
  int64_t Rank = Shape.size();
  std::vector<int64_t> Starts = In.operand(1).toInt64Vector();
  std::vector<int64_t> Ends = In.operand(2).toInt64Vector();
  std::vector<int64_t> Axes, Steps;
  if (In.Operands.size() > 3 && In.Operands[3])
    Axes = In.Operands[3]->toInt64Vector();
  else
    for (int64_t I = 0; I < int64_t(Starts.size()); ++I)
      Axes.push_back(I);
  if (In.Operands.size() > 4 && In.Operands[4])
    Steps = In.Operands[4]->toInt64Vector();
  else
    Steps.assign(Starts.size(), 1);
  if (Ends.size() != Starts.size() || Axes.size() != Starts.size() ||
      Steps.size() != Starts.size())
    return nullptr;

  // Per dim: first element, step and length (ONNX clamping rules).
  llvm::SmallVector<int64_t, 6> First(Rank, 0), Step(Rank, 1);
  llvm::SmallVector<int64_t, 6> Length(Shape.begin(), Shape.end());
  for (unsigned K = 0; K < Starts.size(); ++K) {
    int64_t A = Axes[K] < 0 ? Axes[K] + Rank : Axes[K];
    if (A < 0 || A >= Rank || Steps[K] == 0)
      return nullptr;
    int64_t Size = Shape[A], S = Starts[K], E = Ends[K], St = Steps[K];
    if (S < 0)
      S += Size;
    if (E < 0)
      E += Size;
    int64_t Len;
    if (St > 0) {
      S = std::min(std::max(S, int64_t(0)), Size);
      E = std::min(std::max(E, int64_t(0)), Size);
      Len = E <= S ? 0 : (E - S - 1) / St + 1;
    } else {
      S = std::min(std::max(S, int64_t(0)), Size - 1);
      E = std::min(std::max(E, int64_t(-1)), Size - 1);
      uint64_t AbsStep = uint64_t(0) - uint64_t(St);
      Len = S <= E ? 0 : int64_t(uint64_t(S - E - 1) / AbsStep + 1);
    }
    First[A] = S;
    Step[A] = St;
    Length[A] = Len;
  }
  if (llvm::makeArrayRef(Length) !=
      llvm::makeArrayRef(In.Result.getStaticShape()))
    return nullptr;

  // Walk the result in order, tracking the source element.
  llvm::SmallVector<int64_t, 6> Stride(Rank, 1);
  for (int64_t I = Rank - 1; I > 0; --I)
    Stride[I - 1] = Stride[I] * Shape[I];
  unsigned EltSize = In.eltSize();
  int64_t NumElts = product(Length);
  std::vector<uint8_t> Bytes(NumElts * EltSize);
  llvm::ArrayRef<uint8_t> Src = Data.getBytes();
  llvm::SmallVector<int64_t, 6> Coord(Rank, 0);
  int64_t Offset = 0;
  for (int64_t I = 0; I < Rank; ++I)
    Offset += First[I] * Stride[I];
  for (int64_t E = 0; E < NumElts; ++E) {
    std::memcpy(&Bytes[E * EltSize], &Src[Offset * EltSize], EltSize);
    for (int64_t D = Rank - 1; D >= 0; --D) {
      Offset += Step[D] * Stride[D];
      if (++Coord[D] < Length[D])
        break;
      Offset -= Step[D] * Stride[D] * Length[D];
      Coord[D] = 0;
    }
  }
  return makeData(In.Result, std::move(Bytes));
}

static TensorDataRef foldTranspose(const FoldInput &In) {
  const TensorData &Data = In.operand(0);
  unsigned Rank = Data.getType().getRank();
  std::vector<int64_t> Perm;
  if (const Attribute *A = In.N.getAttr("perm"))
    Perm = A->getInts();
  else
    for (unsigned I = Rank; I > 0; --I)
      Perm.push_back(I - 1);
  if (Perm.size() != Rank || !Layout::isPermutation(Perm))
    return nullptr;
  // Stored in layout Perm, the data's physical order is the transposed
  // tensor's logical order.
  llvm::SmallVector<unsigned, 6> P(Perm.begin(), Perm.end());
  TensorDataRef Moved = Data.withLayout(Layout(P));
  std::vector<uint8_t> Bytes(Moved->getBytes().begin(),
                             Moved->getBytes().end());
  return makeData(In.Result, std::move(Bytes));
}

/// Store integer \p V (of a signed, or with \p FromUnsigned an unsigned,
/// type) as an element of floating-point type \p Elt.
static void storeIntAsFloat(ElementType Elt, int64_t V, bool FromUnsigned,
                            uint8_t *Out) {
  // Convert straight to the narrowest float that holds the target, so that
  // large integers round once.
  float F = FromUnsigned ? float(uint64_t(V)) : float(V);
  if (Elt == ElementType::F64) {
    double D = FromUnsigned ? double(uint64_t(V)) : double(V);
    std::memcpy(Out, &D, sizeof(D));
    return;
  }
  if (Elt == ElementType::F32) {
    std::memcpy(Out, &F, sizeof(F));
    return;
  }
  storeFloat(Elt, F, Out);
}

/// Bounds of integer type \p Elt as doubles: [Lo, Hi).
static void getIntegerRange(ElementType Elt, double &Lo, double &Hi) {
  unsigned Bits = getElementByteSize(Elt) * 8;
  if (isUnsignedInteger(Elt)) {
    Lo = 0;
    Hi = std::ldexp(1.0, Bits);
  } else {
    Lo = -std::ldexp(1.0, Bits - 1);
    Hi = std::ldexp(1.0, Bits - 1);
  }
}

static TensorDataRef foldCast(const FoldInput &In) {
  const TensorData &X = In.operand(0);
  ElementType From = X.getElementType(), To = In.Result.getElementType();
  if (From == To)
    return foldReshapeLike(In);
  unsigned EltSize = In.eltSize();
  int64_t NumElts = X.getNumElements();
  std::vector<uint8_t> Bytes(NumElts * EltSize);
  for (int64_t I = 0; I < NumElts; ++I) {
    uint8_t *Out = &Bytes[I * EltSize];
    if (isFloatingPoint(From)) {
      double V = X.getDouble(I);
      if (isFloatingPoint(To)) {
        storeFloat(To, V, Out);
      } else if (To == ElementType::Bool) {
        storeInt(To, V != 0, Out);
      } else {
        // Out-of-range conversions are undefined in ONNX: leave them to
        // the runtime.
        double T = std::trunc(V), Lo, Hi;
        getIntegerRange(To, Lo, Hi);
        if (!(T >= Lo && T < Hi))
          return nullptr;
        storeInt(To, isUnsignedInteger(To) ? int64_t(uint64_t(T)) : int64_t(T),
                 Out);
      }
    } else {
      int64_t V = X.getInt(I);
      if (isFloatingPoint(To))
        storeIntAsFloat(To, V, isUnsignedInteger(From), Out);
      else
        storeInt(To, V, Out);
    }
  }
  return makeData(In.Result, std::move(Bytes));
}

namespace {
enum class BinaryOp { Add, Sub, Mul, Div };
} // namespace

/// Integer arithmetic wraps like the runtime's; division truncates toward
/// zero and is not folded by zero or when it overflows.
static bool applyInt(BinaryOp Op, bool Unsigned, int64_t A, int64_t B,
                     int64_t &R) {
  uint64_t UA = A, UB = B;
  switch (Op) {
  case BinaryOp::Add:
    R = int64_t(UA + UB);
    return true;
  case BinaryOp::Sub:
    R = int64_t(UA - UB);
    return true;
  case BinaryOp::Mul:
    R = int64_t(UA * UB);
    return true;
  case BinaryOp::Div:
    if (B == 0)
      return false;
    if (Unsigned) {
      R = int64_t(UA / UB);
      return true;
    }
    if (A == INT64_MIN && B == -1)
      return false;
    R = A / B;
    return true;
  }
  return false;
}

static double applyFloat(BinaryOp Op, double A, double B) {
  switch (Op) {
  case BinaryOp::Add:
    return A + B;
  case BinaryOp::Sub:
    return A - B;
  case BinaryOp::Mul:
    return A * B;
  case BinaryOp::Div:
    return A / B;
  }
  return 0;
}

template <BinaryOp Op> static TensorDataRef foldBinary(const FoldInput &In) {
  const TensorData &A = In.operand(0), &B = In.operand(1);
  ElementType Elt = In.Result.getElementType();
  if (A.getElementType() != Elt || B.getElementType() != Elt ||
      Elt == ElementType::Bool)
    return nullptr;
  llvm::SmallVector<int64_t, 6> Shape = In.Result.getStaticShape();
  auto IA = broadcastIndices(A.getType().getStaticShape(), Shape);
  auto IB = broadcastIndices(B.getType().getStaticShape(), Shape);
  if (!IA || !IB)
    return nullptr;
  unsigned EltSize = In.eltSize();
  int64_t NumElts = IA->size();
  std::vector<uint8_t> Bytes(NumElts * EltSize);
  bool Float = isFloatingPoint(Elt), Unsigned = isUnsignedInteger(Elt);
  for (int64_t E = 0; E < NumElts; ++E) {
    int64_t I = (*IA)[E], J = (*IB)[E];
    if (Float) {
      // Exact enough: double rounding through f64 is innocuous for the four
      // basic operations on f32, f16 and bf16.
      storeFloat(Elt, applyFloat(Op, A.getDouble(I), B.getDouble(J)),
                 &Bytes[E * EltSize]);
      continue;
    }
    int64_t R;
    if (!applyInt(Op, Unsigned, A.getInt(I), B.getInt(J), R))
      return nullptr;
    storeInt(Elt, R, &Bytes[E * EltSize]);
  }
  return makeData(In.Result, std::move(Bytes));
}

/// Repeat the single element \p Value to fill \p Result.
static TensorDataRef splat(const TensorType &Result,
                           llvm::ArrayRef<uint8_t> Value) {
  int64_t NumElts = *Result.getNumElements();
  std::vector<uint8_t> Bytes;
  Bytes.reserve(NumElts * Value.size());
  for (int64_t E = 0; E < NumElts; ++E)
    Bytes.insert(Bytes.end(), Value.begin(), Value.end());
  return makeData(Result, std::move(Bytes));
}

static TensorDataRef foldConstantOfShape(const FoldInput &In) {
  const Attribute *A = In.N.getAttr("value");
  if (!A)
    return splat(In.Result,
                 std::vector<uint8_t>(getElementByteSize(ElementType::F32), 0));
  if (A->getKind() != AttrKind::Tensor || !A->getTensor() ||
      A->getTensor()->getNumElements() != 1 ||
      A->getTensor()->getElementType() != In.Result.getElementType())
    return nullptr;
  return splat(In.Result, A->getTensor()->getBytes());
}

static TensorDataRef foldExpand(const FoldInput &In) {
  const TensorData &X = In.operand(0);
  auto Indices = broadcastIndices(X.getType().getStaticShape(),
                                  In.Result.getStaticShape());
  if (!Indices)
    return nullptr;
  unsigned EltSize = In.eltSize();
  std::vector<uint8_t> Bytes(Indices->size() * EltSize);
  llvm::ArrayRef<uint8_t> Src = X.getBytes();
  for (size_t E = 0; E < Indices->size(); ++E)
    std::memcpy(&Bytes[E * EltSize], &Src[(*Indices)[E] * EltSize], EltSize);
  return makeData(In.Result, std::move(Bytes));
}

/// The evaluators, one per foldable op.
static const FoldRule FoldRules[] = {
    {OpId::Shape, false, foldShape},
    {OpId::Gather, true, foldGather},
    {OpId::Concat, true, foldConcat},
    {OpId::Unsqueeze, true, foldReshapeLike},
    {OpId::Squeeze, true, foldReshapeLike},
    {OpId::Reshape, true, foldReshapeLike},
    {OpId::Flatten, true, foldReshapeLike},
    {OpId::Identity, true, foldReshapeLike},
    {OpId::Slice, true, foldSlice},
    {OpId::Cast, true, foldCast},
    {OpId::Transpose, true, foldTranspose},
    {OpId::Add, true, foldBinary<BinaryOp::Add>},
    {OpId::Sub, true, foldBinary<BinaryOp::Sub>},
    {OpId::Mul, true, foldBinary<BinaryOp::Mul>},
    {OpId::Div, true, foldBinary<BinaryOp::Div>},
    {OpId::ConstantOfShape, true, foldConstantOfShape},
    {OpId::Expand, true, foldExpand},
};

static const FoldRule *lookupFoldRule(OpId Op) {
  for (const FoldRule &R : FoldRules)
    if (R.Op == Op)
      return &R;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Evaluate \p N with \p Rule. Returns the result in the physical order of
/// \p Type, the refined result type, or null when \p N does not fold.
static TensorDataRef evaluate(const Node &N, const FoldRule &Rule,
                              TensorType &Type) {
  llvm::SmallVector<TensorDataRef, 4> Operands;
  int64_t LargestOperand = 0;
  for (Value *Op : N.getOperands()) {
    TensorDataRef D = getConstantDataRef(Op);
    if (Op && !D && Rule.NeedsConstantOperands)
      return nullptr;
    if (D)
      LargestOperand = std::max(LargestOperand, D->getNumElements());
    Operands.push_back(D);
  }

  // The result type from inference, refined by the declared one: it must
  // be fully known.
  llvm::SmallVector<TensorType, 1> Inferred;
  if (llvm::Error E = inferResultTypes(N, Inferred)) {
    llvm::consumeError(std::move(E));
    return nullptr;
  }
  const TensorType &Declared = N.getResult(0)->getType();
  if (!isCompatibleType(Declared, Inferred[0]))
    return nullptr;
  Type = refineType(Declared, Inferred[0]);
  if (!Type.hasStaticShape() || Type.getElementType() == ElementType::Unknown)
    return nullptr;
  int64_t NumElts = *Type.getNumElements();
  if (NumElts > MaxGrownElements && NumElts > LargestOperand)
    return nullptr;

  // Evaluate in logical order; store in the result's layout.
  for (TensorDataRef &D : Operands)
    if (D)
      D = toLogicalOrder(D);
  TensorType Logical = Type.withLayout(Layout());
  TensorDataRef Result = Rule.Fold(FoldInput{N, Operands, Logical});
  if (!Result)
    return nullptr;
  assert(Result->getType() == Logical && "evaluator made the wrong type");
  return toPhysicalOrder(Result, Type.getLayout());
}

namespace {
class ConstantFoldingPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "constant-fold"; }

  llvm::Error run(Graph &G) override {
    // Walk a snapshot in order: a folded node's Constant is visible to the
    // nodes after it, so chains fold in one sweep. Only the node being
    // folded is erased during the walk; constants it leaves unused go at
    // the end.
    llvm::SmallVector<Node *, 16> MaybeDead;
    llvm::SmallPtrSet<Node *, 16> Noted;
    for (Node *N : G.getNodeList()) {
      const FoldRule *Rule = lookupFoldRule(N->getOpId());
      if (!Rule || N->getNumResults() != 1 || !N->hasResult(0))
        continue;
      TensorType Type;
      TensorDataRef Data = evaluate(*N, *Rule, Type);
      if (!Data)
        continue;
      for (Value *Op : N->getOperands())
        if (Node *Def = Op ? Op->getDefiningNode() : nullptr)
          if (Def->getOpId() == OpId::Constant && Noted.insert(Def).second)
            MaybeDead.push_back(Def);
      // The Constant takes over the folded value's name (graph outputs keep
      // theirs) and the node's location.
      Value *Old = N->getResult(0);
      Value *C = rewrite::createConstant(G, std::move(Data), Type,
                                         Old->getName(), N->getLoc(), N);
      rewrite::replaceAndTakeName(G, Old, C);
    }
    for (Node *N : llvm::reverse(MaybeDead))
      if (rewrite::hasNoLiveResults(G, *N))
        G.eraseNode(N);
    return llvm::Error::success();
  }
};
} // namespace

std::unique_ptr<Pass> strider::createConstantFoldingPass() {
  return std::make_unique<ConstantFoldingPass>();
}
