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

#include "PlanImpl.h"

#include "strider/CodeGen/TensorGeometry.h"

using namespace strider;
using namespace strider::cuda;
using codegen::FusedTail;

namespace {

/// The op of \p N in the typed kernel.
llvm::Optional<TypedOp> getTypedOp(const Node &N) {
  static const std::pair<OpId, TypedOp> Ops[] = {
      {OpId::Cast, TypedOp::Cast},
      {OpId::Add, TypedOp::Add},
      {OpId::Sub, TypedOp::Sub},
      {OpId::Mul, TypedOp::Mul},
      {OpId::Div, TypedOp::Div},
      {OpId::Max, TypedOp::Max},
      {OpId::Min, TypedOp::Min},
      {OpId::Equal, TypedOp::Equal},
      {OpId::Less, TypedOp::Less},
      {OpId::LessOrEqual, TypedOp::LessEqual},
      {OpId::Greater, TypedOp::Greater},
      {OpId::GreaterOrEqual, TypedOp::GreaterEqual},
      {OpId::And, TypedOp::And},
      {OpId::Or, TypedOp::Or},
      {OpId::Not, TypedOp::Not},
      {OpId::Where, TypedOp::Where},
  };
  for (const auto &O : Ops)
    if (O.first == N.getOpId())
      return O.second;
  return llvm::None;
}

const char *getScalarTypeName(ScalarType T) {
  switch (T) {
  case ScalarType::F32:
    return "f32";
  case ScalarType::F16:
    return "f16";
  case ScalarType::BF16:
    return "bf16";
  case ScalarType::I32:
    return "i32";
  case ScalarType::I64:
    return "i64";
  case ScalarType::Bool:
    return "bool";
  }
  return "?";
}

} // namespace

llvm::Optional<ScalarType> cuda::getScalarType(ElementType E) {
  switch (E) {
  case ElementType::F32:
    return ScalarType::F32;
  case ElementType::F16:
    return ScalarType::F16;
  case ElementType::BF16:
    return ScalarType::BF16;
  case ElementType::I32:
    return ScalarType::I32;
  case ElementType::I64:
    return ScalarType::I64;
  case ElementType::Bool:
    return ScalarType::Bool;
  default:
    return llvm::None;
  }
}

bool cuda::isTypedStep(const Node &N) {
  if (N.isOpaque() || !getTypedOp(N))
    return false;
  switch (N.getOpId()) {
  case OpId::Cast:
  case OpId::Add:
  case OpId::Sub:
  case OpId::Mul:
  case OpId::Div:
  case OpId::Max:
  case OpId::Min:
    // The float kernels take float arithmetic and float-to-float casts.
    for (unsigned I = 0; I < N.getNumOperands(); ++I)
      if (N.hasOperand(I) &&
          !isFloatingPoint(N.getOperand(I)->getType().getElementType()))
        return true;
    return N.hasResult(0) &&
           !isFloatingPoint(N.getResult(0)->getType().getElementType());
  default:
    return true;
  }
}

llvm::Error cuda::planTyped(PlanContext &C, const Node &N,
                            const FusedTail &T) {
  const Value *Y = N.getResult(0);
  const TensorType &YT = Y->getType();
  auto Op = getTypedOp(N);
  auto YS = getScalarType(YT.getElementType());
  if (!Op || !YS || YT.getRank() > MaxRank || !YT.hasStaticShape() ||
      !T.Act.isNone() || T.Residual || N.getNumResults() != 1)
    return unsupported(N, "op '" + N.getOpType() + "' to " + YT.str());
  const unsigned Operands = N.getNumOperands();
  const bool Binary = *Op != TypedOp::Cast && *Op != TypedOp::Not &&
                      *Op != TypedOp::Where;
  if (Operands != (*Op == TypedOp::Where ? 3u : Binary ? 2u : 1u))
    return unsupported(N, "op '" + N.getOpType() + "' of " +
                              llvm::Twine(Operands) + " operands");
  TypedParams P;
  P.Op = *Op;
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
           (P.Y == ScalarType::I32 || P.Y == ScalarType::I64);
    break;
  case TypedOp::And:
  case TypedOp::Or:
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
  std::string Kernel = "typed." + N.getOpType().lower() + " ";
  Kernel += getScalarTypeName(P.In[Operands == 3 ? 1 : 0]);
  if (*Op == TypedOp::Cast || P.Y != P.In[Operands == 3 ? 1 : 0])
    Kernel += std::string(">") + getScalarTypeName(P.Y);
  C.addStep({getStepNodes(N, T), Kernel, 0}, P, std::move(Args));
  return llvm::Error::success();
}
