//===- LowerLogic.cpp - Integers, bools and masks -------------------------===//
//
// Comparisons, logic, Where, integer arithmetic and quantization: one
// typed step each (LogicKernels.cu), the operands read through broadcast
// strides in the result's physical order. This is how models mask by
// sequence length (Less(Range, lengths) -> Where) and compute frame counts
// from lengths; the float kernels never see an integer or bool tensor
// (planNode refuses them elsewhere).
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"
#include "PlanImpl.h"

#include <algorithm>

using namespace strider;
using namespace strider::cuda;

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
