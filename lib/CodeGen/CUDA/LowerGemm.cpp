//===- LowerGemm.cpp - Gemm and MatMul on cuBLASLt ------------------------===//
//
// Gemm and MatMul become cuBLASLt steps (GemmDesc) with the epilogue of
// their fusion group, operands read in either order (a transposed
// row-major operand is a column-major one). A constant B stays host floats
// in the plan, converted by the runner at load.
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

#include <algorithm>

using namespace strider;
using namespace strider::cuda;

namespace {

/// Whether \p T is stored row-major (its layout is the identity on every
/// dim that is not 1).
bool isRowMajor(const TensorType &T) {
  auto Shape = T.getStaticShape();
  auto Str = codegen::getStrides(T);
  int64_t Expect = 1;
  for (size_t I = Shape.size(); I-- > 0;) {
    if (Shape[I] != 1 && Str[I] != Expect)
      return false;
    Expect *= Shape[I];
  }
  return true;
}

/// Whether \p T (rank >= 2) is stored as the row-major tensor of its shape
/// with the last two dims swapped: a batch of transposed matrices (a
/// channels-last rank-3 tensor).
bool isTransposedRowMajor(const TensorType &T) {
  auto Shape = T.getStaticShape();
  const size_t R = Shape.size();
  if (R < 2)
    return false;
  auto Str = codegen::getStrides(T);
  const int64_t Rows = Shape[R - 2], Cols = Shape[R - 1];
  if ((Rows != 1 && Str[R - 2] != 1) || (Cols != 1 && Str[R - 1] != Rows))
    return false;
  int64_t Expect = Rows * Cols;
  for (size_t I = R - 2; I-- > 0;) {
    if (Shape[I] != 1 && Str[I] != Expect)
      return false;
    Expect *= Shape[I];
  }
  return true;
}

} // namespace

/// Whether \p T stores a (batch of) matrices transposed: channels-last
/// rank 3, or a rank-2 tensor with its dims swapped.
static bool isStoredTransposed(const TensorType &T) {
  return !isRowMajor(T) && isTransposedRowMajor(T);
}

/// A GEMM step computing \p Y from \p A and \p B (either constant). \p D's
/// TransA / TransB say how the product reads each operand's storage; \p
/// LogicalTransA / \p LogicalTransB how it reads the logical operand
/// (Gemm's transA / transB): an operand whose two differ must be stored
/// transposed.
static llvm::Error addGemm(PlanContext &C, const Node &N, const FusedTail &T,
                           GemmDesc D, const Value *A, const Value *B,
                           std::vector<float> Bias, bool LogicalTransA = false,
                           bool LogicalTransB = false) {
  const Value *Y = T.Result;
  auto AD = getDType(A->getType().getElementType());
  auto BD = getDType(B->getType().getElementType());
  auto YD = getDType(Y->getType().getElementType());
  if (!AD || !BD || !YD || *AD != *BD || *AD != *YD)
    return unsupported(N, "a matrix product of " + A->getType().str() +
                              " and " + B->getType().str() + " to " +
                              Y->getType().str() + " (one float type)");
  // A constant B goes to the runner as logical floats; everything else is
  // read in its stored layout (a constant A as getBuffer uploads it): row
  // major, or transposed where the description says so.
  for (const Value *V : {A, B, Y}) {
    const bool Transposed = (V == A && D.TransA != LogicalTransA) ||
                            (V == B && D.TransB != LogicalTransB);
    if (!(V == B && V->getConstantData()) &&
        !(Transposed ? isTransposedRowMajor(V->getType())
                     : isRowMajor(V->getType())))
      return unsupported(N, "a matrix product with operand '" + V->getName() +
                                "' in layout " + V->getType().str());
  }
  D.Type = *AD;
  D.Math = C.getMathMode(D.Type);
  D.Epilogue.Bias = !Bias.empty();
  D.Epilogue.Act = T.Act;
  std::vector<float> ConstB = getConstantFloats(B);
  auto AB = C.getBuffer(A, N);
  if (!AB)
    return AB.takeError();
  llvm::Expected<Arg> BArg = C.getOptionalArg(ConstB.empty() ? B : nullptr, N);
  if (!BArg)
    return BArg.takeError();
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  const Arg BiasArg = C.getOptionalConstant(Bias);
  StepInfo Info;
  Info.Nodes = getStepNodes(N, T);
  Info.Kernel = std::string("cublaslt.gemm ") + (D.TransA ? "t" : "n") +
                (D.TransB ? "t" : "n") + " " + getDTypeName(D.Type) +
                (D.Math == MathMode::TF32 ? " tf32" : "") +
                (D.Batch > 1 ? " batch" + std::to_string(D.Batch) : "") +
                getEpilogueSuffix(D.Epilogue);
  Info.Flops = 2 * D.Batch * D.M * D.N * D.K;
  if (!ConstB.empty())
    C.addRunnerConstantBytes(int64_t(ConstB.size() * getDTypeBytes(D.Type)));
  GemmStep S{D,
             ConstB.empty() ? nullptr
                            : std::make_shared<const std::vector<float>>(
                                  std::move(ConstB)),
             share(std::move(Bias))};
  C.addStep(Info, std::move(S), {{*AB, 0}, *BArg, {*YB, 0}, BiasArg});
  return llvm::Error::success();
}

llvm::Error cuda::planGemm(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *A = N.getOperand(0), *B = N.getOperand(1);
  auto AS = A->getType().getStaticShape(), BS = B->getType().getStaticShape();
  if (AS.size() != 2 || BS.size() != 2)
    return unsupported(N, "a Gemm of rank other than 2");
  GemmDesc D;
  const bool TA = N.getIntAttr("transA", 0) != 0,
             TB = N.getIntAttr("transB", 0) != 0;
  D.M = TA ? AS[1] : AS[0];
  D.K = TA ? AS[0] : AS[1];
  D.N = TB ? BS[0] : BS[1];
  // The product reads each operand's storage: transposed by the attribute,
  // and again where the operand is stored transposed (a constant B goes
  // to the runner in logical order).
  D.TransA = TA != isStoredTransposed(A->getType());
  D.TransB = TB != (!B->getConstantData() && isStoredTransposed(B->getType()));
  D.Alpha = N.getFloatAttr("alpha", 1.0f);
  const float Beta = N.getFloatAttr("beta", 1.0f);
  std::vector<float> Bias;
  if (!N.hasOperand(2) || Beta == 0.0f)
    return addGemm(C, N, T, D, A, B, std::move(Bias), TA, TB);
  const Value *CV = N.getOperand(2);
  Bias = getConstantFloats(CV);
  auto CS = CV->getType().getStaticShape();
  int64_t Count = 1;
  for (int64_t S : CS)
    Count *= S;
  // A bias along N: shape (N), (1, N) or a scalar broadcast to it.
  const bool AlongN = (CS.size() == 1 && (CS[0] == D.N || CS[0] == 1)) ||
                      (CS.size() == 2 && CS[0] == 1) || CS.empty();
  if (!Bias.empty() && AlongN) {
    if (Count == 1)
      Bias.assign(size_t(D.N), Bias[0]);
    for (float &V : Bias)
      V *= Beta;
    return addGemm(C, N, T, D, A, B, std::move(Bias), TA, TB);
  }
  // Any other C (a matrix, an activation): the product into Y, then
  // Y += beta * C in place, broadcast, with the group's activation.
  const Value *Y = T.Result;
  const TensorType &YT = Y->getType();
  if (Bias.empty() && Beta != 1.0f)
    return unsupported(N, "a Gemm whose C operand is computed at run time "
                          "and scaled (beta != 1)");
  if (CV->getType().getRank() > YT.getRank())
    return unsupported(N, "a Gemm whose C operand does not broadcast to " +
                              YT.str());
  // Everything checked and C's buffer taken before the first step: a
  // refused group is planned again node by node.
  auto YD = getDType(YT.getElementType());
  Arg CArg;
  DType CType = DType::F32;
  if (Bias.empty()) {
    auto CD = getDType(CV->getType().getElementType());
    if (!YD || !CD || (*CD != *YD && *CD != DType::F32))
      return unsupported(N, "a Gemm whose C operand is " + CV->getType().str());
    CType = *CD;
    auto CB = C.getBuffer(CV, N);
    if (!CB)
      return CB.takeError();
    CArg.Buffer = *CB;
  }
  FusedTail Product = T;
  Product.Act = codegen::Activation();
  if (llvm::Error E = addGemm(C, N, Product, D, A, B, {}, TA, TB))
    return E;
  ElementwiseParams P;
  P.Op = BinaryOp::Add;
  P.Act = T.Act;
  P.Rank = int(YT.getRank());
  codegen::getPhysicalShape(YT, P.Shape);
  P.YType = P.AType = *YD; // addGemm checked it.
  codegen::getBroadcastStrides(YT, YT, P.AStrides);
  codegen::getBroadcastStrides(CV->getType(), YT, P.BStrides);
  if (!Bias.empty()) {
    for (float &V : Bias)
      V *= Beta;
    // A constant of C's logical shape, row-major, in f32.
    codegen::getBroadcastStrides(
        TensorType::get(CV->getType().getElementType(), CS), YT, P.BStrides);
    P.BType = DType::F32;
    CArg.Buffer = C.addConstantFloats(Bias);
  } else {
    P.BType = CType;
  }
  auto YB = C.getBuffer(Y, N);
  if (!YB)
    return YB.takeError();
  const Arg YArg{*YB, 0};
  C.addStep({getStepNodes(N, T),
             std::string("elementwise.add") +
                 (P.Act.isNone() ? "" : std::string("+") + P.Act.getName()) +
                 " " + getDTypeName(P.YType) + " (gemm's C)",
             false, 0},
            P, {YArg, CArg, YArg});
  return llvm::Error::success();
}

llvm::Error cuda::planMatMul(PlanContext &C, const Node &N,
                             const FusedTail &T) {
  const Value *A = N.getOperand(0), *B = N.getOperand(1);
  auto AS = A->getType().getStaticShape(), BS = B->getType().getStaticShape();
  if (AS.size() < 2 || BS.size() < 2)
    return unsupported(N, "a MatMul of vectors (rank 1)");
  GemmDesc D;
  D.M = AS[AS.size() - 2];
  D.K = AS.back();
  D.N = BS.back();
  // An operand stored as a batch of transposed matrices (channels-last
  // rank 3) is read transposed.
  D.TransA = isStoredTransposed(A->getType());
  D.TransB = !B->getConstantData() && !isRowMajor(B->getType()) &&
             isTransposedRowMajor(B->getType());
  int64_t ABatch = 1, BBatch = 1;
  for (size_t I = 0; I + 2 < AS.size(); ++I)
    ABatch *= AS[I];
  for (size_t I = 0; I + 2 < BS.size(); ++I)
    BBatch *= BS[I];
  if (BBatch == 1 && !D.TransA) {
    // One B for every batch: the batch folds into M (A is row-major).
    D.M *= ABatch;
  } else if (BBatch == 1) {
    // A batch of transposed matrices by one matrix: batched, B shared.
    D.Batch = ABatch;
    D.BatchStrideA = D.M * D.K;
    D.BatchStrideY = D.M * D.N;
  } else {
    // Batched: the batch dims must match exactly (no broadcast of A).
    auto YS = T.Result->getType().getStaticShape();
    if (ABatch != BBatch || AS.size() != BS.size() ||
        !std::equal(AS.begin(), AS.end() - 2, BS.begin()) ||
        YS.size() != AS.size())
      return unsupported(N, "a MatMul broadcasting " + A->getType().str() +
                                " against " + B->getType().str());
    D.Batch = ABatch;
    D.BatchStrideA = D.M * D.K;
    D.BatchStrideB = D.K * D.N;
    D.BatchStrideY = D.M * D.N;
  }
  return addGemm(C, N, T, D, A, B, {});
}
