//===- PlanLogic.cpp - Integers, bools and masks on the CUDA backend ------===//
//
// Comparisons, logic, Where, Cast involving an integer or bool side, and
// integer arithmetic: one typed step each (LogicKernels.cu), the operands
// read through broadcast strides in the result's physical order. This is
// how models mask by sequence length (Less(Range, lengths) -> Where) and
// compute frame counts from lengths; the float kernels never see an
// integer or bool tensor (planNode refuses them elsewhere).
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"
#include "PlanImpl.h"

#include "strider/CodeGen/TensorGeometry.h"
#include "strider/Runtime/ResizeSampling.h"

using namespace strider;
using namespace strider::cuda;
using codegen::FusedTail;

namespace {

/// The op of \p N in the typed kernel.
llvm::Optional<TypedOp> getTypedOp(const Node &N) {
  static const std::pair<OpId, TypedOp> Ops[] = {
      {OpId::Cast, TypedOp::Cast},
      {OpId::Expand, TypedOp::Cast}, // Of integers and bools: a copy.
      {OpId::Add, TypedOp::Add},
      {OpId::Sub, TypedOp::Sub},
      {OpId::Mul, TypedOp::Mul},
      {OpId::Div, TypedOp::Div},
      {OpId::Max, TypedOp::Max},
      {OpId::Min, TypedOp::Min},
      {OpId::Clip, TypedOp::Max}, // Of integers: Max, then Min.
      {OpId::Pow, TypedOp::Pow},
      {OpId::Equal, TypedOp::Equal},
      {OpId::Less, TypedOp::Less},
      {OpId::LessOrEqual, TypedOp::LessEqual},
      {OpId::Greater, TypedOp::Greater},
      {OpId::GreaterOrEqual, TypedOp::GreaterEqual},
      {OpId::And, TypedOp::And},
      {OpId::Or, TypedOp::Or},
      {OpId::Not, TypedOp::Not},
      {OpId::Where, TypedOp::Where},
      {OpId::Neg, TypedOp::Neg},
      {OpId::Abs, TypedOp::Abs},
      {OpId::Sign, TypedOp::Sign},
      {OpId::Mod, TypedOp::Mod},            // FMod with fmod = 1.
      {OpId::BitShift, TypedOp::ShiftLeft}, // ShiftRight for RIGHT.
      {OpId::Xor, TypedOp::Xor},
      {OpId::IsNaN, TypedOp::IsNaN},
      {OpId::IsInf, TypedOp::IsInf},
      {OpId::ReduceSum, TypedOp::Reduce},
      {OpId::ReduceProd, TypedOp::Reduce},
      {OpId::ReduceMax, TypedOp::Reduce},
      {OpId::ReduceMin, TypedOp::Reduce},
  };
  for (const auto &O : Ops)
    if (O.first == N.getOpId())
      return O.second;
  // The other unary math: f64 in double.
  codegen::Activation Act;
  if (N.getNumOperands() >= 1 && codegen::getActivation(N, Act))
    return TypedOp::Math;
  return llvm::None;
}

/// The typed kernel's storage types: the IR's type and the name steps
/// report.
struct ScalarTypeInfo {
  ElementType Elt;
  ScalarType Type;
  const char *Name;
};
constexpr ScalarTypeInfo ScalarTypes[] = {
    {ElementType::F32, ScalarType::F32, "f32"},
    {ElementType::F16, ScalarType::F16, "f16"},
    {ElementType::BF16, ScalarType::BF16, "bf16"},
    {ElementType::F64, ScalarType::F64, "f64"},
    {ElementType::I32, ScalarType::I32, "i32"},
    {ElementType::I64, ScalarType::I64, "i64"},
    {ElementType::I8, ScalarType::I8, "i8"},
    {ElementType::U8, ScalarType::U8, "u8"},
    {ElementType::I16, ScalarType::I16, "i16"},
    {ElementType::U16, ScalarType::U16, "u16"},
    {ElementType::U32, ScalarType::U32, "u32"},
    {ElementType::U64, ScalarType::U64, "u64"},
    {ElementType::Bool, ScalarType::Bool, "bool"},
};

} // namespace

const char *cuda::getScalarTypeName(ScalarType T) {
  for (const ScalarTypeInfo &I : ScalarTypes)
    if (I.Type == T)
      return I.Name;
  return "?";
}

llvm::Optional<ScalarType> cuda::getScalarType(ElementType E) {
  for (const ScalarTypeInfo &I : ScalarTypes)
    if (I.Elt == E)
      return I.Type;
  return llvm::None;
}

bool cuda::isTypedStep(const Node &N) {
  if (N.isOpaque() || !getTypedOp(N))
    return false;
  if (getTypedOp(N) == TypedOp::Math) // The float kernel's, unless f64.
    return N.hasResult(0) &&
           N.getResult(0)->getType().getElementType() == ElementType::F64;
  switch (N.getOpId()) {
  case OpId::Expand:
  case OpId::Cast:
  case OpId::Add:
  case OpId::Sub:
  case OpId::Mul:
  case OpId::Div:
  case OpId::Max:
  case OpId::Min:
  case OpId::Clip:
  case OpId::Neg:
  case OpId::Abs:
  case OpId::Sign:
    // The float kernels take arithmetic, clamps, casts, negations and
    // signs of the types they hold (f32, f16, bf16).
    for (unsigned I = 0; I < N.getNumOperands(); ++I)
      if (N.hasOperand(I) &&
          !getDType(N.getOperand(I)->getType().getElementType()))
        return true;
    return N.hasResult(0) &&
           !getDType(N.getResult(0)->getType().getElementType());
  case OpId::ReduceSum:
  case OpId::ReduceProd:
  case OpId::ReduceMax:
  case OpId::ReduceMin:
    // Of floats (whatever type the axes have), the reduction kernels.
    return !getDType(N.getOperand(0)->getType().getElementType());
  case OpId::Pow:
    // Of a float base, the float kernel (an integer exponent as floats).
    return N.hasResult(0) &&
           !isFloatingPoint(N.getResult(0)->getType().getElementType());
  default:
    return true;
  }
}

/// ReduceSum/Prod/Max/Min of integers or f64 whose reduced dims are one
/// block of X's storage (codegen::splitReduction): Outer x Len x Inner,
/// one thread per (outer, inner) row along Len.
static llvm::Error planTypedReduce(PlanContext &C, const Node &N,
                                   const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  const int64_t R = XT.getRank();
  if (!XS || *XS == ScalarType::Bool ||
      XT.getElementType() != YT.getElementType() || !XT.hasStaticShape() ||
      !YT.hasStaticShape() || !T.Act.isNone() || T.Residual)
    return unsupported(N,
                       N.getOpType() + " of " + XT.str() + " to " + YT.str());
  auto ReducedOr = getReducedDims(N);
  if (!ReducedOr)
    return ReducedOr.takeError();
  std::vector<bool> &Reduced = *ReducedOr;
  if (llvm::find(Reduced, true) == Reduced.end()) {
    if (N.getIntAttr("noop_with_empty_axes", 0) != 0)
      return unsupported(N, N.getOpType() + " over no axis");
    Reduced.assign(size_t(R), true);
  }
  int64_t Outer = 1, Len = 1, Inner = 1;
  if (!codegen::splitReduction(XT, YT, Reduced,
                               N.getIntAttr("keepdims", 1) != 0, Outer, Len,
                               Inner) ||
      Len == 0)
    return unsupported(N, N.getOpType() + " of " + XT.str() +
                              " over dims not adjacent in its storage");
  TypedParams P;
  P.Op = TypedOp::Reduce;
  P.Reduction = N.getOpId() == OpId::ReduceSum    ? ScatterReduction::Add
                : N.getOpId() == OpId::ReduceProd ? ScatterReduction::Mul
                : N.getOpId() == OpId::ReduceMax  ? ScatterReduction::Max
                                                  : ScatterReduction::Min;
  P.Rank = 3;
  P.In[0] = P.Y = *XS;
  P.Axis = 1;
  const int64_t Shape[3] = {Outer, Len, Inner};
  const int64_t XStr[3] = {Len * Inner, Inner, 1}, YStr[3] = {Inner, 0, 1};
  for (int D = 0; D < 3; ++D) {
    P.Shape[D] = Shape[D];
    P.Strides[0][D] = XStr[D];
    P.Strides[2][D] = YStr[D];
  }
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  C.addStep({getStepNodes(N, T),
             "typed." + N.getOpType().lower() + " " + getScalarTypeName(*XS),
             false, 0},
            P, {{XB, 0}, Arg(), Arg(), {YB, 0}});
  return llvm::Error::success();
}

/// Clip of integers or f64: Max by the lower bound, then Min by the upper
/// one (either absent: one step; both: a copy), through a scratch buffer
/// dense in the result's physical order; min(max(x, lo), hi), as the
/// reference computes it.
static llvm::Error planTypedClip(PlanContext &C, const Node &N,
                                 const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &YT = Y->getType();
  auto YS = getScalarType(YT.getElementType());
  if (!YS || *YS == ScalarType::Bool || !YT.hasStaticShape() ||
      YT.getRank() > MaxRank || !T.Act.isNone() || T.Residual ||
      X->getType().getElementType() != YT.getElementType())
    return unsupported(N, "Clip of " + X->getType().str() + " to " + YT.str());
  std::vector<std::pair<TypedOp, const Value *>> Bounds;
  for (unsigned I : {1u, 2u})
    if (N.hasOperand(I)) {
      const TensorType &BT = N.getOperand(I)->getType();
      if (BT.getElementType() != YT.getElementType() ||
          BT.getNumElements().getValueOr(0) != 1)
        return unsupported(N, "Clip by a bound of type " + BT.str());
      Bounds.push_back({I == 1 ? TypedOp::Max : TypedOp::Min, N.getOperand(I)});
    }
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  const std::string Nodes = getStepNodes(N, T);
  const std::string Type = getScalarTypeName(*YS);
  TypedParams P;
  P.Y = *YS;
  P.Rank = int(YT.getRank());
  codegen::getPhysicalShape(YT, P.Shape);
  int64_t XStrides[MaxRank], Dense[MaxRank];
  codegen::getBroadcastStrides(X->getType(), YT, XStrides);
  codegen::getBroadcastStrides(YT, YT, Dense);
  if (Bounds.empty()) {
    P.Op = TypedOp::Cast;
    P.In[0] = *YS;
    std::copy(XStrides, XStrides + MaxRank, P.Strides[0]);
    C.addStep({Nodes, "typed.clip " + Type, false, 0}, P,
              {{XB, 0}, Arg(), Arg(), {YB, 0}});
    return llvm::Error::success();
  }
  Arg From = {XB, 0};
  const int64_t Bytes = *YT.getNumElements() * getScalarBytes(*YS);
  for (size_t K = 0; K < Bounds.size(); ++K) {
    auto BB = C.getBuffer(Bounds[K].second, N);
    if (!BB)
      return BB.takeError();
    const Arg To =
        K + 1 == Bounds.size() ? Arg{YB, 0} : Arg{C.addScratch(Bytes), 0};
    P.Op = Bounds[K].first;
    P.NumOperands = 2;
    P.In[0] = P.In[1] = *YS;
    std::copy(K == 0 ? XStrides : Dense, (K == 0 ? XStrides : Dense) + MaxRank,
              P.Strides[0]);
    std::fill(P.Strides[1], P.Strides[1] + MaxRank, 0); // One value.
    C.addStep({Nodes,
               std::string("typed.clip.") +
                   (P.Op == TypedOp::Max ? "max " : "min ") + Type,
               false, 0},
              P, {From, {*BB, 0}, Arg(), To});
    From = To;
  }
  return llvm::Error::success();
}

llvm::Error cuda::planTyped(PlanContext &C, const Node &N, const FusedTail &T) {
  if (N.getOpId() == OpId::Clip)
    return planTypedClip(C, N, T);
  if (getTypedOp(N) == TypedOp::Reduce)
    return planTypedReduce(C, N, T);
  const Value *Y = N.getResult(0);
  const TensorType &YT = Y->getType();
  auto Op = getTypedOp(N);
  auto YS = getScalarType(YT.getElementType());
  if (!Op || !YS || YT.getRank() > MaxRank || !YT.hasStaticShape() ||
      !T.Act.isNone() || T.Residual || N.getNumResults() != 1)
    return unsupported(N, "op '" + N.getOpType() + "' to " + YT.str());
  // Expand's shape operand was read at compile time (the result's type).
  const unsigned Operands =
      N.getOpId() == OpId::Expand ? 1u : N.getNumOperands();
  const bool Binary =
      *Op != TypedOp::Cast && *Op != TypedOp::Not && *Op != TypedOp::Neg &&
      *Op != TypedOp::Abs && *Op != TypedOp::Sign && *Op != TypedOp::IsNaN &&
      *Op != TypedOp::IsInf && *Op != TypedOp::Math && *Op != TypedOp::Where;
  if (Operands != (*Op == TypedOp::Where ? 3u : Binary ? 2u : 1u))
    return unsupported(N, "op '" + N.getOpType() + "' of " +
                              llvm::Twine(Operands) + " operands");
  TypedParams P;
  P.Op = *Op;
  if (*Op == TypedOp::Mod && N.getIntAttr("fmod", 0) != 0)
    P.Op = TypedOp::FMod;
  if (*Op == TypedOp::ShiftLeft && N.getStringAttr("direction", "") == "RIGHT")
    P.Op = TypedOp::ShiftRight;
  if (*Op == TypedOp::Math)
    codegen::getActivation(N, P.Act);
  P.DetectNegative = N.getIntAttr("detect_negative", 1) != 0;
  P.DetectPositive = N.getIntAttr("detect_positive", 1) != 0;
  P.Y = *YS;
  P.Rank = int(YT.getRank());
  P.NumOperands = int(Operands);
  codegen::getPhysicalShape(YT, P.Shape);
  std::vector<Arg> Args;
  for (unsigned I = 0; I < Operands; ++I) {
    const Value *V = N.getOperand(I);
    const TensorType &VT = V->getType();
    auto VS = getScalarType(VT.getElementType());
    if (!VS || VT.getRank() > YT.getRank() || !VT.hasStaticShape())
      return unsupported(N, "op '" + N.getOpType() + "' reading " + VT.str());
    P.In[I] = *VS;
    codegen::getBroadcastStrides(VT, YT, P.Strides[I]);
    auto B = C.getBuffer(V, N);
    if (!B)
      return B.takeError();
    Args.push_back({*B, 0});
  }
  // The kernel's type rules: arithmetic of integers of one type; compared
  // operands of one type; Where's values of the result's type; logic of
  // bools.
  bool Fits = true;
  switch (*Op) {
  case TypedOp::Cast:
    break;
  case TypedOp::Add:
  case TypedOp::Sub:
  case TypedOp::Mul:
  case TypedOp::Div:
  case TypedOp::Max:
  case TypedOp::Min:
    Fits = P.In[0] == P.Y && P.In[1] == P.Y &&
           ((isIntegerType(P.Y) && P.Y != ScalarType::Bool) ||
            P.Y == ScalarType::F64);
    break;
  case TypedOp::Neg:
  case TypedOp::Abs:
  case TypedOp::Sign:
    Fits = P.In[0] == P.Y && ((isIntegerType(P.Y) && P.Y != ScalarType::Bool) ||
                              P.Y == ScalarType::F64);
    break;
  case TypedOp::Mod:
  case TypedOp::FMod:
    Fits = P.In[0] == P.Y && P.In[1] == P.Y && P.Y != ScalarType::Bool &&
           (P.Op == TypedOp::FMod || isIntegerType(P.Y));
    break;
  case TypedOp::ShiftLeft:
  case TypedOp::ShiftRight:
    Fits = P.In[0] == P.Y && P.In[1] == P.Y &&
           (P.Y == ScalarType::U8 || P.Y == ScalarType::U16 ||
            P.Y == ScalarType::U32 || P.Y == ScalarType::U64);
    break;
  case TypedOp::IsNaN:
  case TypedOp::IsInf:
    Fits = !isIntegerType(P.In[0]) && P.Y == ScalarType::Bool;
    break;
  case TypedOp::Math:
    Fits = P.In[0] == ScalarType::F64 && P.Y == ScalarType::F64;
    break;
  case TypedOp::Pow: // The result has the base's type.
    Fits = P.In[0] == P.Y && isIntegerType(P.Y) && P.Y != ScalarType::Bool &&
           P.In[1] != ScalarType::Bool;
    break;
  case TypedOp::And:
  case TypedOp::Or:
  case TypedOp::Xor:
  case TypedOp::Not:
    Fits = P.In[0] == ScalarType::Bool &&
           (Operands == 1 || P.In[1] == ScalarType::Bool) &&
           P.Y == ScalarType::Bool;
    break;
  case TypedOp::Where:
    Fits = P.In[0] == ScalarType::Bool && P.In[1] == P.Y && P.In[2] == P.Y;
    break;
  default: // Comparisons.
    Fits = P.In[0] == P.In[1] && P.Y == ScalarType::Bool;
    break;
  }
  if (!Fits)
    return unsupported(N, "op '" + N.getOpType() + "' of these types (" +
                              YT.str() + ")");
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  while (Args.size() < 3)
    Args.push_back({-1, 0});
  Args.push_back({*YB, 0});
  std::string Kernel = "typed." +
                       (N.getOpId() == OpId::Expand ? std::string("expand")
                                                    : N.getOpType().lower()) +
                       " ";
  Kernel += getScalarTypeName(P.In[Operands == 3 ? 1 : 0]);
  if ((*Op == TypedOp::Cast && N.getOpId() == OpId::Cast) ||
      P.Y != P.In[Operands == 3 ? 1 : 0])
    Kernel += std::string(">") + getScalarTypeName(P.Y);
  C.addStep({getStepNodes(N, T), Kernel, false, 0}, P, std::move(Args));
  return llvm::Error::success();
}

namespace {

/// \p Logical (one entry per logical dim of \p YT) in \p YT's physical
/// order, into \p Out.
void toPhysical(const TensorType &YT, llvm::ArrayRef<int64_t> Logical,
                int64_t *Out) {
  unsigned P = 0;
  for (unsigned D : YT.getLayout().getPermutation(YT.getRank()))
    Out[P++] = Logical[D];
}

/// The axis attribute of \p N normalized for rank \p R, or -1.
int64_t getAxis(const Node &N, int64_t R) {
  int64_t Axis = N.getIntAttr("axis", 0);
  if (Axis < 0)
    Axis += R;
  return Axis >= 0 && Axis < R ? Axis : -1;
}

} // namespace

llvm::Error cuda::planIndexedGather(PlanContext &C, const Node &N,
                                    const FusedTail &T) {
  const Value *X = N.getOperand(0), *I = N.getOperand(1), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &IT = I->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  auto IS = getScalarType(IT.getElementType());
  const bool Elements = N.getOpId() == OpId::GatherElements;
  const int64_t R = XT.getRank(), Q = IT.getRank();
  const int64_t Axis = getAxis(N, R);
  if (!XS || !IS || (*IS != ScalarType::I32 && *IS != ScalarType::I64) ||
      Axis < 0 || !XT.hasStaticShape() || !IT.hasStaticShape() ||
      !YT.hasStaticShape() || !T.Act.isNone() || (Elements && Q != R))
    return unsupported(N,
                       N.getOpType() + " of " + XT.str() + " by " + IT.str());
  auto XStr = codegen::getStrides(XT), IStr = codegen::getStrides(IT);
  // Per logical dim of Y: its stride in X (0 along the index dims) and in
  // the indices (0 elsewhere).
  std::vector<int64_t> DataStr, IdxStr;
  for (int64_t D = 0; D < int64_t(YT.getRank()); ++D) {
    if (Elements) {
      DataStr.push_back(D == Axis ? 0 : XStr[size_t(D)]);
      IdxStr.push_back(IStr[size_t(D)]);
    } else if (D < Axis) {
      DataStr.push_back(XStr[size_t(D)]);
      IdxStr.push_back(0);
    } else if (D < Axis + Q) {
      DataStr.push_back(0);
      IdxStr.push_back(IStr[size_t(D - Axis)]);
    } else {
      DataStr.push_back(XStr[size_t(D - Q + 1)]);
      IdxStr.push_back(0);
    }
  }
  // Y's physical dims, those that nest in Y, X and the indices merged (a
  // rank-7 GatherElements along one axis walks 3 dims).
  const unsigned YR = YT.getRank();
  llvm::SmallVector<int64_t, 12> Shape(YR);
  codegen::getPhysicalShape(YT, Shape.data());
  DimStrides Str[3] = {DimStrides(YR), DimStrides(YR), DimStrides(YR)};
  toPhysical(YT, DataStr, Str[0].data());
  toPhysical(YT, IdxStr, Str[1].data());
  auto YStr = codegen::getStrides(YT);
  toPhysical(YT, YStr, Str[2].data());
  collapseDims(Shape, Str);
  if (Shape.size() > size_t(MaxRank))
    return unsupported(N, N.getOpType() + " of " + XT.str() + " by " +
                              IT.str() + " (more than " + llvm::Twine(MaxRank) +
                              " dims after merging)");
  TypedParams P;
  P.Op = TypedOp::Gather;
  P.Rank = int(Shape.size());
  P.NumOperands = 2;
  P.In[0] = P.Y = *XS;
  P.In[1] = *IS;
  P.AxisSize = XT.getStaticShape()[size_t(Axis)];
  P.AxisStride = XStr[size_t(Axis)];
  for (size_t D = 0; D < Shape.size(); ++D) {
    P.Shape[D] = Shape[D];
    P.Strides[0][D] = Str[0][D];
    P.Strides[1][D] = Str[1][D];
  }
  auto XB = C.getBuffer(X, N);
  if (!XB)
    return XB.takeError();
  auto IB = C.getBuffer(I, N);
  if (!IB)
    return IB.takeError();
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  C.addStep({getStepNodes(N, T),
             std::string("typed.") +
                 (Elements ? "gather_elements " : "gather ") +
                 getScalarTypeName(P.Y) + " by " + getScalarTypeName(P.In[1]),
             false, 0},
            P, {{*XB, 0}, {*IB, 0}, Arg(), {*YB, 0}});
  return llvm::Error::success();
}

/// A scatter's first step: Y = the data X (of storage type \p XS), in Y's
/// physical order (one flat run when both are row-major; else rank <=
/// MaxRank).
static void addScatterDataCopy(PlanContext &C, const std::string &Nodes,
                               const TensorType &XT, const TensorType &YT,
                               ScalarType XS, BufferId XB, BufferId YB) {
  TypedParams Copy;
  Copy.Op = TypedOp::Cast;
  Copy.In[0] = Copy.Y = XS;
  if (XT.getLayout().isIdentity() && YT.getLayout().isIdentity()) {
    Copy.Rank = 1;
    Copy.Shape[0] = *YT.getNumElements();
    Copy.Strides[0][0] = 1;
  } else {
    assert(YT.getRank() <= unsigned(MaxRank) && "rank checked by the caller");
    Copy.Rank = int(YT.getRank());
    codegen::getPhysicalShape(YT, Copy.Shape);
    toPhysical(YT, codegen::getStrides(XT), Copy.Strides[0]);
  }
  C.addStep(
      {Nodes, std::string("typed.copy ") + getScalarTypeName(XS), false, 0},
      Copy, {{XB, 0}, Arg(), Arg(), {YB, 0}});
}

/// The kernel's form of a scatter's reduction attribute \p R.
static llvm::Optional<ScatterReduction> getScatterReduction(llvm::StringRef R) {
  static const std::pair<llvm::StringRef, ScatterReduction> Reductions[] = {
      {"none", ScatterReduction::None},
      {"add", ScatterReduction::Add},
      {"mul", ScatterReduction::Mul},
      {"max", ScatterReduction::Max},
      {"min", ScatterReduction::Min}};
  for (const auto &E : Reductions)
    if (E.first == R)
      return E.second;
  return llvm::None;
}

llvm::Error cuda::planScatterElements(PlanContext &C, const Node &N,
                                      const FusedTail &T) {
  const Value *X = N.getOperand(0), *I = N.getOperand(1), *U = N.getOperand(2),
              *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &IT = I->getType(), &UT = U->getType(),
                   &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  auto IS = getScalarType(IT.getElementType());
  const int64_t R = XT.getRank();
  const int64_t Axis = getAxis(N, R);
  const std::string Reduce = N.getStringAttr("reduction", "none");
  const llvm::Optional<ScatterReduction> Reduction =
      getScatterReduction(Reduce);
  if (!Reduction)
    return unsupported(N, "ScatterElements with reduction '" + Reduce + "'");
  if (!XS || !IS || (*IS != ScalarType::I32 && *IS != ScalarType::I64) ||
      Axis < 0 || R > MaxRank || !XT.hasStaticShape() || !IT.hasStaticShape() ||
      IT.getShape() != UT.getShape() ||
      UT.getElementType() != XT.getElementType() || IT.getRank() != R ||
      !T.Act.isNone())
    return unsupported(N, "ScatterElements of " + XT.str() + " by " + IT.str());
  auto XB = C.getBuffer(X, N);
  if (!XB)
    return XB.takeError();
  auto IB = C.getBuffer(I, N);
  if (!IB)
    return IB.takeError();
  auto UB = C.getBuffer(U, N);
  if (!UB)
    return UB.takeError();
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  const std::string Nodes = getStepNodes(N, T);
  addScatterDataCopy(C, Nodes, XT, YT, *XS, *XB, *YB);
  // Then the updates, row by row, in Y's own strides.
  TypedParams S;
  S.Op = TypedOp::Scatter;
  S.Rank = int(R);
  S.NumOperands = 2;
  S.In[0] = *IS;
  S.In[1] = S.Y = *XS;
  S.Axis = int(Axis);
  S.Reduction = *Reduction;
  S.AxisSize = XT.getStaticShape()[size_t(Axis)];
  auto IStr = codegen::getStrides(IT), UStr = codegen::getStrides(UT),
       YStr = codegen::getStrides(YT);
  S.AxisStride = YStr[size_t(Axis)];
  auto IShape = IT.getStaticShape();
  for (int64_t D = 0; D < R; ++D) {
    S.Shape[D] = IShape[size_t(D)];
    S.Strides[0][D] = IStr[size_t(D)];
    S.Strides[1][D] = UStr[size_t(D)];
    S.Strides[2][D] = YStr[size_t(D)];
  }
  C.addStep({Nodes,
             std::string("typed.scatter") +
                 (*Reduction == ScatterReduction::None ? std::string()
                                                       : "_" + Reduce) +
                 " " + getScalarTypeName(*XS) + " by " + getScalarTypeName(*IS),
             false, 0},
            S, {{*IB, 0}, {*UB, 0}, Arg(), {*YB, 0}});
  return llvm::Error::success();
}

namespace {

/// Element strides of \p V per logical dim.
std::vector<int64_t> getLogicalStrides(const Value *V) {
  auto S = codegen::getStrides(V->getType());
  return std::vector<int64_t>(S.begin(), S.end());
}

} // namespace

llvm::Error cuda::planArgReduce(PlanContext &C, const Node &N,
                                const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  const int64_t R = XT.getRank();
  const int64_t Axis = getAxis(N, R);
  const bool KeepDims = N.getIntAttr("keepdims", 1) != 0;
  if (!XS || Axis < 0 || R > MaxRank || !XT.hasStaticShape() ||
      !YT.hasStaticShape() || YT.getElementType() != ElementType::I64 ||
      int64_t(YT.getRank()) != (KeepDims ? R : R - 1) ||
      XT.getStaticShape()[size_t(Axis)] == 0 || !T.Act.isNone())
    return unsupported(N,
                       N.getOpType() + " of " + XT.str() + " to " + YT.str());
  TypedParams P;
  P.Op = N.getOpId() == OpId::ArgMax ? TypedOp::ArgMax : TypedOp::ArgMin;
  P.Rank = int(R);
  P.In[0] = *XS;
  P.Y = ScalarType::I64;
  P.Axis = int(Axis);
  P.SelectLast = N.getIntAttr("select_last_index", 0) != 0;
  auto XShape = XT.getStaticShape();
  const std::vector<int64_t> XStr = getLogicalStrides(X),
                             YStr = getLogicalStrides(Y);
  for (int64_t D = 0; D < R; ++D) {
    P.Shape[D] = XShape[size_t(D)];
    P.Strides[0][D] = XStr[size_t(D)];
    // Y's dim of X's dim D (none for the axis without keepdims).
    P.Strides[2][D] =
        D == Axis ? 0 : YStr[size_t(KeepDims || D < Axis ? D : D - 1)];
  }
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  C.addStep({getStepNodes(N, T),
             std::string("typed.") + N.getOpType().lower() +
                 (useArgRowBlocks(P) ? ".blocks " : " ") +
                 getScalarTypeName(*XS),
             false, 0},
            P, {{XB, 0}, Arg(), Arg(), {YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planTrilu(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const Value *K = N.hasOperand(1) ? N.getOperand(1) : nullptr;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  const unsigned R = XT.getRank();
  // Y dense row-major, so that each element's row and column follow from
  // its index; the batch dims merged into one.
  if (!XS || R < 2 || !XT.hasStaticShape() || YT != XT ||
      !XT.getLayout().isIdentity() || !T.Act.isNone() ||
      (K && K->getType().getElementType() != ElementType::I64))
    return unsupported(N, "Trilu of " + XT.str() + " to " + YT.str());
  auto Shape = XT.getStaticShape();
  TypedParams P;
  P.Op = TypedOp::Trilu;
  P.Rank = 3;
  P.Shape[2] = Shape[R - 1];
  P.Shape[1] = Shape[R - 2];
  P.Shape[0] = 1;
  for (unsigned D = 0; D + 2 < R; ++D)
    P.Shape[0] *= Shape[D];
  P.Strides[0][0] = P.Shape[1] * P.Shape[2];
  P.Strides[0][1] = P.Shape[2];
  P.Strides[0][2] = 1;
  P.In[0] = P.Y = *XS;
  P.In[1] = ScalarType::I64;
  P.Upper = N.getIntAttr("upper", 1) != 0;
  BufferId XB, YB;
  Arg KArg;
  if (K) {
    P.NumOperands = 2; // Strides[1] stay 0: k's one element.
    auto KB = C.getBuffer(K, N);
    if (!KB)
      return KB.takeError();
    KArg = {*KB, 0};
  }
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  C.addStep({getStepNodes(N, T),
             std::string("typed.trilu.") + (P.Upper ? "upper " : "lower ") +
                 getScalarTypeName(*XS),
             false, 0},
            P, {{XB, 0}, KArg, Arg(), {YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planQuantize(PlanContext &C, const Node &N,
                               const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const bool Quantize = N.getOpId() == OpId::QuantizeLinear;
  auto XS = getScalarType(XT.getElementType());
  auto YS = getScalarType(YT.getElementType());
  const int64_t R = XT.getRank();
  int64_t Axis = N.getIntAttr("axis", 1);
  if (Axis < 0)
    Axis += R;
  if (!XS || !YS || R > MaxRank || !XT.hasStaticShape() ||
      XT.getShape() != YT.getShape() || !T.Act.isNone() || T.Residual)
    return unsupported(N,
                       N.getOpType() + " of " + XT.str() + " to " + YT.str());
  TypedParams P;
  P.Op = Quantize ? TypedOp::Quantize : TypedOp::Dequantize;
  P.Rank = int(R);
  P.In[0] = *XS;
  P.Y = *YS;
  codegen::getPhysicalShape(YT, P.Shape);
  toPhysical(YT, codegen::getStrides(XT), P.Strides[0]);
  std::vector<Arg> Args = {Arg(), Arg(), Arg(), Arg()};
  auto XB = C.getBuffer(X, N);
  if (!XB)
    return XB.takeError();
  Args[0] = {*XB, 0};
  P.NumOperands = 2;
  for (unsigned K = 1; K < 3; ++K) {
    if (!N.hasOperand(K))
      continue;
    const Value *V = N.getOperand(K);
    auto VS = getScalarType(V->getType().getElementType());
    const auto Count = V->getType().getNumElements();
    if (!VS || !Count || V->getType().getRank() > 1 ||
        (*Count != 1 && (Axis < 0 || Axis >= R ||
                         XT.getShape()[size_t(Axis)].getSize() != *Count)))
      return unsupported(N, N.getOpType() + " with a parameter of type " +
                                V->getType().str());
    P.In[K] = *VS;
    // A parameter per axis entry: stride 1 along the axis, 0 elsewhere.
    std::vector<int64_t> Logical(size_t(R), 0);
    if (*Count != 1)
      Logical[size_t(Axis)] = 1;
    toPhysical(YT, Logical, P.Strides[K]);
    auto B = C.getBuffer(V, N);
    if (!B)
      return B.takeError();
    Args[K] = {*B, 0};
    P.NumOperands = int(K) + 1;
  }
  const bool QuantizedOk =
      Quantize ? (P.Y == ScalarType::U8 || P.Y == ScalarType::I8)
               : (P.In[0] == ScalarType::U8 || P.In[0] == ScalarType::I8 ||
                  P.In[0] == ScalarType::I32);
  if (!QuantizedOk || isIntegerType(Quantize ? P.In[0] : P.Y) ||
      isIntegerType(P.In[1]))
    return unsupported(N,
                       N.getOpType() + " of " + XT.str() + " to " + YT.str());
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  Args[3] = {*YB, 0};
  C.addStep({getStepNodes(N, T),
             std::string(Quantize ? "typed.quantize " : "typed.dequantize ") +
                 getScalarTypeName(*XS) + ">" + getScalarTypeName(*YS),
             false, 0},
            P, std::move(Args));
  return llvm::Error::success();
}

/// The Nd* fields of \p P for \p N's index tuples into \p Data after
/// \p Batch shared dims (both row-major and static, the indices i64);
/// false where the kernel does not apply.
static bool setTupleParams(const TensorType &Data, const TensorType &Indices,
                           int64_t Batch, TypedParams &P) {
  if (!Data.hasStaticShape() || !Indices.hasStaticShape() ||
      !Data.getLayout().isIdentity() || !Indices.getLayout().isIdentity() ||
      Indices.getElementType() != ElementType::I64 || Indices.getRank() < 1)
    return false;
  auto DShape = Data.getStaticShape(), IShape = Indices.getStaticShape();
  const int64_t R = int64_t(DShape.size()), K = IShape.back();
  if (Batch < 0 || K < 1 || K > MaxRank || Batch + K > R ||
      int64_t(IShape.size()) < Batch + 1)
    return false;
  std::vector<int64_t> Strides(size_t(R), 1);
  for (int64_t D = R - 1; D > 0; --D)
    Strides[size_t(D - 1)] = Strides[size_t(D)] * DShape[size_t(D)];
  P.NdRank = int(K);
  for (int64_t J = 0; J < K; ++J) {
    P.NdDims[J] = DShape[size_t(Batch + J)];
    P.NdStrides[J] = Strides[size_t(Batch + J)];
  }
  P.NdSlice = Strides[size_t(Batch + K - 1)];
  P.NdBatchStride = Batch > 0 ? Strides[size_t(Batch - 1)] : 0;
  P.NdTuplesPerBatch = 1;
  for (size_t I = size_t(Batch); I + 1 < IShape.size(); ++I)
    P.NdTuplesPerBatch *= IShape[I];
  return true;
}

llvm::Error cuda::planGridSample(PlanContext &C, const Node &N,
                                 const FusedTail &T) {
  const Value *X = N.getOperand(0), *G = N.getOperand(1), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &GT = G->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  auto GS = getScalarType(GT.getElementType());
  if (!XS || !GS || XT.getRank() != 4 || !XT.hasStaticShape() ||
      !YT.hasStaticShape() || !YT.getLayout().isIdentity() ||
      !GT.getLayout().isIdentity() || !T.Act.isNone() || T.Residual)
    return unsupported(N, "GridSample of " + XT.str() + " by " + GT.str());
  auto Opts = runtime::getGridSampleOptions(N);
  if (!Opts)
    return Opts.takeError();
  TypedParams P;
  P.Op = TypedOp::GridSample;
  P.Rank = 4;
  auto YShape = YT.getStaticShape(), XShape = XT.getStaticShape();
  std::copy(YShape.begin(), YShape.end(), P.Shape);
  P.NumOperands = 2;
  P.In[0] = P.Y = *XS;
  P.In[1] = *GS;
  P.Grid = *Opts;
  P.GridH = XShape[2];
  P.GridW = XShape[3];
  auto XStrides = codegen::getStrides(XT);
  std::copy(XStrides.begin(), XStrides.end(), P.GridXStrides);
  auto XB = C.getBuffer(X, N);
  if (!XB)
    return XB.takeError();
  auto GB = C.getBuffer(G, N);
  if (!GB)
    return GB.takeError();
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  C.addStep({getStepNodes(N, T),
             "typed.grid_sample." + N.getStringAttr("mode", "linear") + " " +
                 getScalarTypeName(*XS),
             false, 0},
            P, {{*XB, 0}, {*GB, 0}, Arg(), {*YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planGatherND(PlanContext &C, const Node &N,
                               const FusedTail &T) {
  const Value *X = N.getOperand(0), *I = N.getOperand(1), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  TypedParams P;
  if (!XS || !YT.hasStaticShape() || !YT.getLayout().isIdentity() ||
      !T.Act.isNone() || T.Residual ||
      !setTupleParams(XT, I->getType(), N.getIntAttr("batch_dims", 0), P))
    return unsupported(N,
                       "GatherND of " + XT.str() + " by " + I->getType().str());
  P.Op = TypedOp::GatherND;
  P.Rank = 1;
  P.Shape[0] = *YT.getNumElements();
  P.NumOperands = 2;
  P.In[0] = P.Y = *XS;
  P.In[1] = ScalarType::I64;
  auto XB = C.getBuffer(X, N);
  if (!XB)
    return XB.takeError();
  auto IB = C.getBuffer(I, N);
  if (!IB)
    return IB.takeError();
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  C.addStep({getStepNodes(N, T),
             std::string("typed.gather_nd ") + getScalarTypeName(*XS), false,
             0},
            P, {{*XB, 0}, {*IB, 0}, Arg(), {*YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planScatterND(PlanContext &C, const Node &N,
                                const FusedTail &T) {
  const Value *X = N.getOperand(0), *I = N.getOperand(1), *U = N.getOperand(2),
              *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &UT = U->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  const std::string Reduce = N.getStringAttr("reduction", "none");
  const llvm::Optional<ScatterReduction> Reduction =
      getScatterReduction(Reduce);
  TypedParams S;
  if (!XS || !Reduction || UT.getElementType() != XT.getElementType() ||
      !UT.getLayout().isIdentity() || YT != XT || !T.Act.isNone() ||
      T.Residual || !setTupleParams(XT, I->getType(), 0, S))
    return unsupported(N, "ScatterND of " + XT.str() + " by " +
                              I->getType().str());
  auto XB = C.getBuffer(X, N);
  if (!XB)
    return XB.takeError();
  auto IB = C.getBuffer(I, N);
  if (!IB)
    return IB.takeError();
  auto UB = C.getBuffer(U, N);
  if (!UB)
    return UB.takeError();
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  const std::string Nodes = getStepNodes(N, T);
  // Y = the data, then the slices.
  addScatterDataCopy(C, Nodes, XT, YT, *XS, *XB, *YB);
  S.Op = TypedOp::ScatterND;
  S.Rank = 2;
  S.Axis = 0;
  S.Shape[0] = 1; // The tuples, walked by each row.
  for (int64_t D = 0; D + 1 < int64_t(I->getType().getRank()); ++D)
    S.Shape[0] *= I->getType().getStaticShape()[size_t(D)];
  S.Shape[1] = S.NdSlice; // The rows: one per slice element.
  S.NumOperands = 2;
  S.In[0] = ScalarType::I64;
  S.In[1] = S.Y = *XS;
  S.Reduction = *Reduction;
  C.addStep({Nodes,
             std::string("typed.scatter_nd") +
                 (*Reduction == ScatterReduction::None ? std::string()
                                                       : "_" + Reduce) +
                 " " + getScalarTypeName(*XS),
             false, 0},
            S, {{*IB, 0}, {*UB, 0}, Arg(), {*YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planCumSum(PlanContext &C, const Node &N,
                             const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  auto XS = getScalarType(XT.getElementType());
  const TensorData *AxisData = N.getOperand(1)->getConstantData();
  const unsigned R = XT.getRank();
  if (!XS || *XS == ScalarType::Bool || !AxisData ||
      AxisData->getNumElements() != 1 || R == 0 || R > unsigned(MaxRank) ||
      !XT.hasStaticShape() || XT.getElementType() != YT.getElementType() ||
      XT.getShape() != YT.getShape() ||
      XT.getLayout().getPermutation(R) != YT.getLayout().getPermutation(R) ||
      !T.Act.isNone() || T.Residual)
    return unsupported(N, "CumSum of " + XT.str() + " to " + YT.str() +
                              " (the axis must be a constant)");
  int64_t Axis = AxisData->getInt(0);
  if (Axis < 0)
    Axis += int64_t(R);
  if (Axis < 0 || Axis >= int64_t(R))
    return unsupported(N, "CumSum along an axis out of range");
  // Both tensors dense in one physical order: the axis at its place there.
  TypedParams P;
  P.Op = TypedOp::CumSum;
  P.Rank = int(R);
  P.In[0] = P.Y = *XS;
  P.Exclusive = N.getIntAttr("exclusive", 0) != 0;
  P.Reverse = N.getIntAttr("reverse", 0) != 0;
  codegen::getPhysicalShape(XT, P.Shape);
  const auto Perm = XT.getLayout().getPermutation(R);
  int64_t Stride = 1;
  for (int D = int(R) - 1; D >= 0; --D) {
    if (int64_t(Perm[unsigned(D)]) == Axis)
      P.Axis = D;
    P.Strides[0][D] = P.Strides[2][D] = Stride;
    Stride *= P.Shape[D];
  }
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  C.addStep({getStepNodes(N, T),
             std::string("typed.cumsum ") + getScalarTypeName(*XS), false, 0},
            P, {{XB, 0}, Arg(), Arg(), {YB, 0}});
  return llvm::Error::success();
}

llvm::Error cuda::planTopK(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *X = N.getOperand(0), *KV = N.getOperand(1);
  const TensorType &XT = X->getType();
  auto XS = getScalarType(XT.getElementType());
  const int64_t R = XT.getRank();
  int64_t Axis = N.getIntAttr("axis", -1);
  Axis = Axis < 0 ? Axis + R : Axis;
  const TensorData *KD = KV->getConstantData();
  const std::vector<int64_t> Ks =
      KD ? KD->toInt64Vector() : std::vector<int64_t>();
  if (!XS || Axis < 0 || Axis >= R || R > MaxRank || !XT.hasStaticShape() ||
      !T.Act.isNone() || N.getNumResults() != 2)
    return unsupported(N, "TopK of " + XT.str());
  if (Ks.size() != 1)
    return unsupported(N, "TopK whose K is computed at run time");
  const int64_t K = Ks[0], Len = XT.getStaticShape()[size_t(Axis)];
  if (K < 0 || K > Len)
    return unsupported(N, "TopK with K = " + llvm::Twine(K) +
                              " along an axis of " + llvm::Twine(Len));
  const Value *Values = N.getResult(0), *Indices = N.getResult(1);
  for (const Value *V : {Values, Indices})
    if (!V->getType().hasStaticShape() ||
        V->getType().getShape() != N.getResult(0)->getType().getShape())
      return unsupported(N, "TopK to " + V->getType().str());
  if (Values->getType().getElementType() != XT.getElementType() ||
      Indices->getType().getElementType() != ElementType::I64)
    return unsupported(N, "TopK of " + XT.str() + " to " +
                              Values->getType().str() + " and " +
                              Indices->getType().str());
  TypedParams P;
  P.Op = TypedOp::TopK;
  P.Rank = int(R);
  P.In[0] = P.Y = *XS;
  P.Axis = int(Axis);
  P.K = K;
  P.Largest = N.getIntAttr("largest", 1) != 0;
  auto XShape = XT.getStaticShape();
  const Graph &G = *N.getGraph();
  // The values row is also the insertion's working space: an unread
  // result gets a scratch buffer, dense in logical order.
  auto Dense = [&](const Value *V) {
    auto Shape = V->getType().getStaticShape();
    std::vector<int64_t> S(Shape.size(), 1);
    for (size_t D = Shape.size(); D-- > 1;)
      S[D - 1] = S[D] * Shape[D];
    return S;
  };
  auto Target = [&](const Value *V,
                    std::vector<int64_t> &Str) -> llvm::Expected<BufferId> {
    if (V->hasUses() || G.isGraphOutput(V)) {
      Str = getLogicalStrides(V);
      return C.defineBuffer(V, N);
    }
    Str = Dense(V);
    return C.addScratch(
        *V->getType().getNumElements() *
        int64_t(getElementByteSize(V->getType().getElementType())));
  };
  auto XB = C.getBuffer(X, N);
  if (!XB)
    return XB.takeError();
  std::vector<int64_t> VStr, IStr;
  auto VB = Target(Values, VStr);
  if (!VB)
    return VB.takeError();
  auto IB = Target(Indices, IStr);
  if (!IB)
    return IB.takeError();
  const std::vector<int64_t> XStr = getLogicalStrides(X);
  for (int64_t D = 0; D < R; ++D) {
    P.Shape[D] = XShape[size_t(D)];
    P.Strides[0][D] = XStr[size_t(D)];
    P.Strides[1][D] = IStr[size_t(D)];
    P.Strides[2][D] = VStr[size_t(D)];
  }
  C.addStep(
      {getStepNodes(N, T),
       std::string(useTopKRanks(P) ? "typed.topk.ranks " : "typed.topk ") +
           getScalarTypeName(*XS) + (P.Largest ? " largest" : " smallest"),
       false, 0},
      P, {{*XB, 0}, Arg(), Arg(), {*VB, 0}, {*IB, 0}});
  return llvm::Error::success();
}
