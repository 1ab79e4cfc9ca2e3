//===- LowerElementwise.cpp - Activations and binaries --------------------===//
//
// Elementwise chains on the backend's own kernel: the unary activations
// and the broadcasting binaries (with the activation of their fusion
// group), each described by ElementwiseParams over the tensors' physical
// orders, so channels-last runs without relayouts.
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

#include <algorithm>

using namespace strider;
using namespace strider::cuda;

namespace {

const std::pair<OpId, BinaryOp> BinaryOps[] = {
    {OpId::Add, BinaryOp::Add}, {OpId::Sub, BinaryOp::Sub},
    {OpId::Mul, BinaryOp::Mul}, {OpId::Div, BinaryOp::Div},
    {OpId::Pow, BinaryOp::Pow}, {OpId::Max, BinaryOp::Max},
    {OpId::Min, BinaryOp::Min}, {OpId::PRelu, BinaryOp::PRelu},
    {OpId::Sum, BinaryOp::Add},
};

/// The buffer of float operand \p V, or for an integer constant (Pow's
/// exponent, an offset) its values as f32: what dtypeOf says it is.
llvm::Expected<BufferId> getFloatOperand(PlanContext &C, const Value *V,
                                         const Node &N) {
  const TensorData *D = V->getConstantData();
  if (!D || isFloatingPoint(V->getType().getElementType()))
    return C.getBuffer(V, N);
  const runtime::Tensor Ints = runtime::Tensor::fromData(*D);
  runtime::Tensor F = runtime::Tensor::zeros(
      TensorType::get(ElementType::F32, Ints.getShape()));
  for (int64_t I = 0; I < F.getNumElements(); ++I)
    F.setDouble(I, double(Ints.getInt(I)));
  F = F.withLayout(V->getType().getLayout());
  llvm::ArrayRef<uint8_t> Bytes = F.getBytes();
  return C.addConstant(std::vector<uint8_t>(Bytes.begin(), Bytes.end()));
}

} // namespace

llvm::Error cuda::planElementwise(PlanContext &C, const Node &N,
                                  const FusedTail &T) {
  const Value *Y = T.Result;
  const TensorType &YT = Y->getType();
  if (!YT.hasStaticShape())
    return unsupported(N, "an elementwise op to " + YT.str());
  if (T.Residual)
    return unsupported(N, "a residual Add after an elementwise op");
  ElementwiseParams P;
  P.YType = dtypeOf(Y);
  const Value *A = N.getOperand(0), *B = nullptr;
  const auto *Bin = llvm::find_if(
      BinaryOps, [&](const auto &E) { return E.first == N.getOpId(); });
  // Variadic Sum, Max and Min of more than two operands: the first two
  // into Y, then each further one into Y in place; of one operand, a copy
  // (with the group's activation).
  const unsigned Operands = N.getNumOperands();
  if (Bin != std::end(BinaryOps) && Operands != 1) {
    if (Operands < 2 || (Operands > 2 && N.getOpId() != OpId::Sum &&
                         N.getOpId() != OpId::Max && N.getOpId() != OpId::Min))
      return unsupported(N, "op '" + N.getOpType() + "' of " +
                                llvm::Twine(Operands) + " operands");
    P.Op = Bin->second;
    P.Act = T.Act;
    B = N.getOperand(1);
  } else if (N.getOpId() == OpId::Sum || N.getOpId() == OpId::Max ||
             N.getOpId() == OpId::Min) {
    P.Act = T.Act; // One operand: a copy.
  } else {
    if (!codegen::getFusableActivation(N, P.Act))
      return unsupported(N,
                         "op '" + N.getOpType() + "' on " + A->getType().str());
    if (!T.Act.isNone())
      return unsupported(N, "an activation after an activation");
  }
  // Unary ops read operand 0 only (Clip's bounds are attributes of the
  // fused activation).
  for (unsigned I = 0; I < (B ? Operands : 1u); ++I) {
    const TensorType &VT = N.getOperand(I)->getType();
    if (VT.getRank() > YT.getRank())
      return unsupported(N, "broadcasting " + VT.str() + " to " + YT.str());
    // The kernel reads A in the result's type, B in it or in f32.
    const DType VD = dtypeOf(N.getOperand(I));
    if (VD != P.YType && !(I > 0 && B && VD == DType::F32))
      return unsupported(N, "op '" + N.getOpType() + "' from " + VT.str() +
                                " to " + YT.str() +
                                " (operands of the result's type; the "
                                "second may be f32)");
  }
  // Per physical dim of Y, the strides of every operand read and Y's own
  // (dense); past MaxRank dims, those that nest in all of them merge (a
  // rank-7 loss expanded into elementwise ops).
  const unsigned R = YT.getRank();
  const unsigned Reads = B ? Operands : 1u;
  llvm::SmallVector<int64_t, 12> Shape(R);
  codegen::getPhysicalShape(YT, Shape.data());
  std::vector<DimStrides> Str(Reads + 1, DimStrides(R));
  for (unsigned I = 0; I < Reads; ++I)
    codegen::getBroadcastStrides(N.getOperand(I)->getType(), YT, Str[I].data());
  codegen::getBroadcastStrides(YT, YT, Str[Reads].data());
  if (R > unsigned(MaxRank))
    collapseDims(Shape, Str);
  if (Shape.size() > size_t(MaxRank))
    return unsupported(N, "an elementwise op to " + YT.str() + " (more than " +
                              llvm::Twine(MaxRank) + " dims after merging)");
  P.Rank = int(Shape.size());
  std::copy(Shape.begin(), Shape.end(), P.Shape);
  std::copy(Str[0].begin(), Str[0].end(), P.AStrides);
  P.AType = dtypeOf(A);
  if (B) {
    std::copy(Str[1].begin(), Str[1].end(), P.BStrides);
    P.BType = dtypeOf(B);
  }
  auto AB = getFloatOperand(C, A, N);
  if (!AB)
    return AB.takeError();
  Arg BArg;
  if (B) {
    auto BB = getFloatOperand(C, B, N);
    if (!BB)
      return BB.takeError();
    BArg.Buffer = *BB;
  }
  // Every buffer first, a variadic op's further operands too: a refused
  // group is planned again node by node.
  std::vector<BufferId> More;
  for (unsigned I = 2; B && I < Operands; ++I) {
    auto VB = getFloatOperand(C, N.getOperand(I), N);
    if (!VB)
      return VB.takeError();
    More.push_back(*VB);
  }
  // Y over an operand of its own type that nothing reads later (each
  // element is read before it is written, by the same thread); not for
  // three operands or more, whose later steps read the operands again.
  const Value *Over = nullptr;
  for (const Value *V : {A, B})
    if (!Over && V && Reads <= 2 && V->getType() == YT &&
        !V->getConstantData() && C.canOverwrite(V, *T.Last))
      Over = V;
  if (Over)
    C.alias(Y, Over);
  auto YB = Over ? C.getBuffer(Y, N) : C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  std::string Kernel = "elementwise.";
  Kernel += B ? N.getOpType().lower() : std::string(P.Act.getName());
  if (B && !P.Act.isNone())
    Kernel += std::string("+") + P.Act.getName();
  Kernel += std::string(" ") + getDTypeName(P.YType);
  if (!B || Operands == 2) {
    C.addStep({getStepNodes(N, T), Kernel, false, 0}, P,
              {{*AB, 0}, BArg, {*YB, 0}});
    return llvm::Error::success();
  }
  // The activation goes with the last operand; the partial results are
  // Y read in place, through its own strides.
  ElementwiseParams First = P;
  First.Act = codegen::Activation();
  C.addStep({getStepNodes(N, T),
             Kernel + " (operands 1-2 of " + std::to_string(Operands) + ")",
             false, 0},
            First, {{*AB, 0}, BArg, {*YB, 0}});
  for (unsigned I = 2; I < Operands; ++I) {
    const Value *V = N.getOperand(I);
    ElementwiseParams Next = P;
    if (I + 1 < Operands)
      Next.Act = codegen::Activation();
    std::copy(Str[Reads].begin(), Str[Reads].end(), Next.AStrides);
    Next.AType = P.YType;
    std::copy(Str[I].begin(), Str[I].end(), Next.BStrides);
    Next.BType = dtypeOf(V);
    const BufferId VB = More[I - 2];
    C.addStep({getStepNodes(N, T),
               Kernel + " (operand " + std::to_string(I + 1) + " of " +
                   std::to_string(Operands) + ")",
               false, 0},
              Next, {{*YB, 0}, {VB, 0}, {*YB, 0}});
  }
  return llvm::Error::success();
}
