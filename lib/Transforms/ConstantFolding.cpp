//===- ConstantFolding.cpp - Evaluate shape computations at compile time --===//
//
// Replaces nodes whose operands are Constant nodes (graph inputs with
// default data are not constants: callers may override them) by Constant
// nodes holding their results, and Shape nodes whose operand's dims are
// static. Every op is evaluated by its reference-interpreter kernel (so an
// op is written once), except Shape (it reads only a type) and Cast and
// the four arithmetic ops, whose evaluators here decline what the runtime
// would define differently (integer division by zero, overflow).
//
//===----------------------------------------------------------------------===//

#include "ConstantTensor.h"
#include "GraphRewrite.h"

#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/Runtime/Reference.h"
#include "strider/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>
#include <cstring>

using namespace strider;
using namespace strider::folding;

/// By default a fold may not create a constant of more elements than this
/// unless one of its operands already is that large (Expand and
/// ConstantOfShape would otherwise blow small shapes up into large
/// initializers).
static constexpr int64_t DefaultMaxGrownElements = int64_t(1) << 20;

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

/// Size: the element count, once the operand's shape is static.
static TensorDataRef foldSize(const FoldInput &In) {
  llvm::Optional<int64_t> Count =
      In.N.getOperand(0)->getType().getNumElements();
  if (!Count)
    return nullptr;
  return TensorData::fromInt64(ElementType::I64, {}, {*Count});
}

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
    return makeData(In.Result, std::vector<uint8_t>(X.getBytes().begin(),
                                                    X.getBytes().end()));
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
  return Op == BinaryOp::Add   ? A + B
         : Op == BinaryOp::Sub ? A - B
         : Op == BinaryOp::Mul ? A * B
                               : A / B;
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

/// The evaluators, one per foldable op.
static const FoldRule FoldRules[] = {
    {OpId::Shape, false, foldShape},
    {OpId::Size, false, foldSize},
    {OpId::Cast, true, foldCast},
    {OpId::Add, true, foldBinary<BinaryOp::Add>},
    {OpId::Sub, true, foldBinary<BinaryOp::Sub>},
    {OpId::Mul, true, foldBinary<BinaryOp::Mul>},
    {OpId::Div, true, foldBinary<BinaryOp::Div>},
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

/// The result types of \p N from inference, refined by the declared ones;
/// false unless every present result has a static shape and a known
/// element type.
static bool getStaticResultTypes(const Node &N,
                                 llvm::SmallVectorImpl<TensorType> &Types) {
  llvm::SmallVector<TensorType, 2> Inferred;
  if (llvm::Error E = inferResultTypes(N, Inferred)) {
    llvm::consumeError(std::move(E));
    return false;
  }
  Types.clear();
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    if (!N.hasResult(I)) {
      Types.push_back(TensorType());
      continue;
    }
    const TensorType &Declared = N.getResult(I)->getType();
    if (!isCompatibleType(Declared, Inferred[I]))
      return false;
    Types.push_back(refineType(Declared, Inferred[I]));
    if (!Types.back().hasStaticShape() ||
        Types.back().getElementType() == ElementType::Unknown)
      return false;
  }
  return true;
}

/// Whether results of \p Types may become constants when the largest
/// constant operand has \p LargestOperand elements.
static bool isSmallEnough(llvm::ArrayRef<TensorType> Types,
                          int64_t LargestOperand, int64_t MaxGrownElements) {
  for (const TensorType &T : Types)
    if (T.hasRank() && *T.getNumElements() > MaxGrownElements &&
        *T.getNumElements() > LargestOperand)
      return false;
  return true;
}

/// Evaluate \p N with \p Rule (single-result ops). Returns the result in
/// the physical order of \p Types[0], or null when \p N does not fold.
static TensorDataRef evaluateRule(const Node &N, const FoldRule &Rule,
                                  llvm::SmallVectorImpl<TensorType> &Types,
                                  int64_t MaxGrown) {
  if (N.getNumResults() != 1 || !N.hasResult(0))
    return nullptr;
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
  if (!getStaticResultTypes(N, Types) ||
      !isSmallEnough(Types, LargestOperand, MaxGrown))
    return nullptr;

  // Evaluate in logical order; store in the result's layout.
  for (TensorDataRef &D : Operands)
    if (D)
      D = toLogicalOrder(D);
  TensorType Logical = Types[0].withLayout(Layout());
  TensorDataRef Result = Rule.Fold(FoldInput{N, Operands, Logical});
  if (!Result)
    return nullptr;
  assert(Result->getType() == Logical && "evaluator made the wrong type");
  return toPhysicalOrder(Result, Types[0].getLayout());
}

/// Ops whose results are not a function of their operands alone (training
/// Dropout draws a random mask), which must never become constants.
static bool isNondeterministic(const Node &N) {
  return N.getOpId() == OpId::Dropout;
}

/// Evaluate \p N, whose present operands are all constants, with the
/// reference interpreter's kernel of its op. Returns one entry per result
/// slot (null for missing results) in the layouts of \p Types, or nothing
/// when \p N does not fold (no kernel, not static, too large, or an error
/// the runtime would report, such as an index out of range).
static llvm::SmallVector<TensorDataRef, 2>
evaluateWithKernel(const Node &N, llvm::SmallVectorImpl<TensorType> &Types,
                   int64_t MaxGrown) {
  runtime::ReferenceKernel Kernel = runtime::lookupReferenceKernel(N.getOpId());
  if (!Kernel || N.getOpId() == OpId::Constant || isNondeterministic(N) ||
      N.getNumResults() == 0)
    return {};
  std::vector<runtime::Tensor> Operands;
  Operands.reserve(N.getNumOperands());
  int64_t LargestOperand = 0;
  for (Value *Op : N.getOperands()) {
    if (!Op) {
      Operands.emplace_back();
      continue;
    }
    const TensorData *D = getConstantDataRef(Op).get();
    if (!D)
      return {};
    LargestOperand = std::max(LargestOperand, D->getNumElements());
    Operands.push_back(runtime::Tensor::fromData(*D));
  }
  if (!getStaticResultTypes(N, Types) ||
      !isSmallEnough(Types, LargestOperand, MaxGrown))
    return {};
  std::vector<const runtime::Tensor *> OperandPtrs;
  for (unsigned I = 0; I < N.getNumOperands(); ++I)
    OperandPtrs.push_back(N.getOperand(I) ? &Operands[I] : nullptr);
  std::vector<runtime::Tensor> Results;
  for (const TensorType &T : Types)
    Results.push_back(T.hasRank() ? runtime::Tensor::zeros(T)
                                  : runtime::Tensor());
  if (llvm::Error E = Kernel(N, OperandPtrs, Results)) {
    llvm::consumeError(std::move(E));
    return {};
  }
  llvm::SmallVector<TensorDataRef, 2> Data;
  for (unsigned I = 0; I < Results.size(); ++I)
    Data.push_back(N.hasResult(I) ? Results[I].toData() : nullptr);
  return Data;
}

namespace {
class ConstantFoldingPass : public Pass {
public:
  explicit ConstantFoldingPass(int64_t MaxGrown) : MaxGrown(MaxGrown) {}
  llvm::StringRef getArgument() const override { return "constant-fold"; }

  llvm::Error run(Graph &G) override {
    // Walk a snapshot in order: a folded node's Constants are visible to
    // the nodes after it, so chains fold in one sweep. Only the node being
    // folded is erased during the walk; constants it leaves unused go at
    // the end.
    llvm::SmallVector<Node *, 16> MaybeDead;
    llvm::SmallPtrSet<Node *, 16> Noted;
    for (Node *N : G.getNodeList()) {
      if (N->isOpaque() || N->getOpId() == OpId::Constant)
        continue;
      llvm::SmallVector<TensorType, 2> Types;
      llvm::SmallVector<TensorDataRef, 2> Data;
      if (const FoldRule *Rule = lookupFoldRule(N->getOpId())) {
        if (TensorDataRef D = evaluateRule(*N, *Rule, Types, MaxGrown))
          Data.push_back(std::move(D));
      } else {
        Data = evaluateWithKernel(*N, Types, MaxGrown);
      }
      if (Data.empty())
        continue;
      for (Value *Op : N->getOperands())
        if (Node *Def = Op ? Op->getDefiningNode() : nullptr)
          if (Def->getOpId() == OpId::Constant && Noted.insert(Def).second)
            MaybeDead.push_back(Def);
      // Each Constant takes over its folded value's name (graph outputs
      // keep theirs) and the node's location.
      llvm::SmallVector<std::pair<Value *, std::string>, 2> Renames;
      for (unsigned I = 0; I < Data.size(); ++I) {
        if (!Data[I])
          continue;
        Value *Old = N->getResult(I);
        Value *C = rewrite::createConstant(G, std::move(Data[I]), Types[I],
                                           Old->getName(), N->getLoc(), N);
        rewrite::replaceAllUsesAndOutputs(G, Old, C);
        Renames.push_back({C, Old->getName()});
      }
      G.eraseNode(N);
      for (auto &[C, Name] : Renames)
        G.renameValue(C, Name);
    }
    for (Node *N : llvm::reverse(MaybeDead))
      if (rewrite::hasNoLiveResults(G, *N))
        G.eraseNode(N);
    return llvm::Error::success();
  }

private:
  int64_t MaxGrown;
};
} // namespace

std::unique_ptr<Pass> strider::createConstantFoldingPass() {
  return std::make_unique<ConstantFoldingPass>(DefaultMaxGrownElements);
}

std::unique_ptr<Pass>
strider::createConstantFoldingPass(int64_t MaxGrownElements) {
  return std::make_unique<ConstantFoldingPass>(MaxGrownElements);
}
