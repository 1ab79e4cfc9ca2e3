//===- FuseQuantizedConv.cpp - QDQ convolutions into QLinearConv ----------===//
//
// QuantizeLinear(Conv(DequantizeLinear(x), DequantizeLinear(w), bias))
// becomes one QLinearConv of x and w, which the CPU backend runs on
// integer kernels: a QDQ file and a QOperator one (whose QLinearConv the
// importer writes in that QDQ form) then compile to the same program.
// It fuses when
//   - x is u8 or i8 with a constant one-element scale and zero point;
//   - w is a constant u8 or i8 with a constant scale and zero point of
//     one element or one per output channel (axis 0);
//   - the bias, if any, is an i32 constant dequantized by x_scale *
//     w_scale (that Mul, or a constant equal to it within 2^-20
//     relatively), whose zero point is absent or 0, or an f32 constant,
//     then rounded to x_scale * w_scale steps (as ONNX Runtime's
//     quantizer does);
//   - the QuantizeLinear has a constant one-element scale and zero point,
//     and the Conv's result has no other reader and is not a graph output.
// The result differs from the float form by at most one step of y_scale
// where the float sum of the float form rounds differently.
//
// It runs first in canonicalize (before constant folding turns the
// weights' DequantizeLinear into f32 constants), for targets with int8
// convolutions (TargetDescription::HasInt8). For the others it does
// the reverse: a QLinearConv (as a QOperator file imports) becomes that
// float form, which their float kernels run, and a ConvInteger (as
// dynamic quantization writes) the Cast to i32 of its float conv.
//
//===----------------------------------------------------------------------===//

#include "ConstantTensor.h"
#include "GraphRewrite.h"

#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"

#include <cmath>
#include <limits>

using namespace strider;

namespace {

bool is8Bit(ElementType T) {
  return T == ElementType::U8 || T == ElementType::I8;
}

/// The node defining \p V when it is a \p Op, else null.
Node *definedBy(Value *V, OpId Op) {
  Node *N = V ? V->getDefiningNode() : nullptr;
  return N && !N->isOpaque() && N->getOpId() == Op ? N : nullptr;
}

/// Constant data of \p V with one element, else null.
TensorDataRef getScalar(const Value *V) {
  TensorDataRef D = V ? folding::getConstantDataRef(V) : nullptr;
  return D && D->getNumElements() == 1 ? D : nullptr;
}

/// A quantized operand: the 8-bit value and its parameters' constants.
struct Quantized {
  Value *Q = nullptr;
  Value *Scale = nullptr, *Zero = nullptr; ///< Zero: null when absent.
  TensorDataRef ScaleData, ZeroData;       ///< ZeroData: null when absent.
};

/// The DequantizeLinear \p V of an 8-bit value whose scale and zero point
/// are constants of one element (or, with \p PerChannel, of \p Channels
/// along axis 0).
bool matchDequantized(Value *V, bool PerChannel, int64_t Channels,
                      Quantized &Out) {
  Node *DQ = definedBy(V, OpId::DequantizeLinear);
  if (!DQ || DQ->getNumOperands() < 2 || !DQ->getOperand(0) ||
      !DQ->getOperand(1))
    return false;
  Out.Q = DQ->getOperand(0);
  if (!is8Bit(Out.Q->getType().getElementType()))
    return false;
  Out.Scale = DQ->getOperand(1);
  Out.ScaleData = folding::getConstantDataRef(Out.Scale);
  if (!Out.ScaleData || Out.ScaleData->getElementType() != ElementType::F32)
    return false;
  Out.Zero = DQ->hasOperand(2) ? DQ->getOperand(2) : nullptr;
  if (Out.Zero && !(Out.ZeroData = folding::getConstantDataRef(Out.Zero)))
    return false;
  for (const TensorDataRef &D : {Out.ScaleData, Out.ZeroData}) {
    if (!D || D->getNumElements() == 1)
      continue;
    const TensorType &T = D->getType();
    if (!PerChannel || T.getRank() != 1 || T.getDim(0).getSize() != Channels ||
        DQ->getIntAttr("axis", 1) != 0)
      return false;
  }
  return true;
}

/// Element \p M of a one-element or per-channel parameter.
double at(const TensorData &D, int64_t M) {
  return D.getDouble(D.getNumElements() == 1 ? 0 : M);
}

/// The i32 bias of scale x_scale * w_scale from the Conv's bias \p B: the
/// dequantized i32 value itself, or data rounded from an f32 constant;
/// nulls when it is none of the forms of the file comment.
std::pair<Value *, TensorDataRef>
getIntBias(Value *B, const Quantized &X, const Quantized &W, int64_t Channels) {
  auto StepOf = [&](int64_t M) {
    return double(float(X.ScaleData->getDouble(0)) *
                  float(at(*W.ScaleData, M)));
  };
  std::vector<int64_t> Values(static_cast<size_t>(Channels));
  if (TensorDataRef F = folding::getConstantDataRef(B)) {
    if (F->getElementType() != ElementType::F32 ||
        F->getNumElements() != Channels)
      return {};
    for (int64_t M = 0; M < Channels; ++M) {
      double V = std::nearbyint(F->getDouble(M) / StepOf(M));
      if (!(std::fabs(V) <= double(std::numeric_limits<int32_t>::max())))
        return {};
      Values[size_t(M)] = int64_t(V);
    }
    return {nullptr,
            TensorData::fromInt64(ElementType::I32, {Channels}, Values)};
  }
  Node *DQ = definedBy(B, OpId::DequantizeLinear);
  if (!DQ || DQ->getNumOperands() < 2 || !DQ->getOperand(0))
    return {};
  TensorDataRef Int = folding::getConstantDataRef(DQ->getOperand(0));
  if (!Int || Int->getElementType() != ElementType::I32 ||
      Int->getNumElements() != Channels || Int->getType().getRank() != 1)
    return {};
  if (DQ->hasOperand(2)) {
    TensorDataRef Z = folding::getConstantDataRef(DQ->getOperand(2));
    if (!Z || !Z->isSplat() || Z->getInt(0) != 0)
      return {};
  }
  Value *Scale = DQ->getOperand(1);
  bool Matches = false;
  if (Node *Mul = definedBy(Scale, OpId::Mul)) {
    Value *A = Mul->getOperand(0), *C = Mul->getOperand(1);
    Matches = (A == X.Scale && C == W.Scale) || (A == W.Scale && C == X.Scale);
  } else if (TensorDataRef S = folding::getConstantDataRef(Scale)) {
    Matches = S->getNumElements() == 1 || S->getNumElements() == Channels;
    for (int64_t M = 0; Matches && M < Channels; ++M)
      Matches = std::fabs(at(*S, M) - StepOf(M)) <=
                std::ldexp(std::fabs(StepOf(M)), -20);
  }
  if (!Matches)
    return {};
  return {DQ->getOperand(0), nullptr};
}

/// \p V, or a constant zero of \p Elt when it is null.
Value *orZero(Graph &G, Value *V, ElementType Elt, const Node &At) {
  if (V)
    return V;
  TensorDataRef Z = TensorData::fromInt64(Elt, {}, {0});
  return rewrite::createConstant(G, Z, Z->getType(), "zero_point", At.getLoc(),
                                 const_cast<Node *>(&At));
}

llvm::Error fuse(Graph &G, Node &QN) {
  if (QN.getNumOperands() < 2 || !QN.hasResult(0))
    return llvm::Error::success();
  Value *YF = QN.getOperand(0);
  Node *Conv = definedBy(YF, OpId::Conv);
  if (!Conv || YF->getUses().size() != 1 || G.isGraphOutput(YF) ||
      Conv->getNumOperands() < 2)
    return llvm::Error::success();
  Value *YScale = QN.getOperand(1);
  Value *YZero = QN.hasOperand(2) ? QN.getOperand(2) : nullptr;
  TensorDataRef YS = getScalar(YScale);
  if (!YS || YS->getElementType() != ElementType::F32 ||
      (YZero && !getScalar(YZero)))
    return llvm::Error::success();
  const TensorType &WT = Conv->getOperand(1)->getType();
  if (!WT.hasRank() || WT.getRank() < 3 || !WT.getDim(0).isStatic())
    return llvm::Error::success();
  const int64_t Channels = WT.getDim(0).getSize();
  Quantized X, W;
  if (!matchDequantized(Conv->getOperand(0), false, 1, X) ||
      !matchDequantized(Conv->getOperand(1), true, Channels, W) ||
      !folding::getConstantDataRef(W.Q))
    return llvm::Error::success();
  std::pair<Value *, TensorDataRef> Bias;
  if (Conv->hasOperand(2)) {
    Bias = getIntBias(Conv->getOperand(2), X, W, Channels);
    if (!Bias.first && !Bias.second)
      return llvm::Error::success();
  }

  const ElementType YElt = QN.getResult(0)->getType().getElementType();
  std::vector<Value *> Operands = {
      X.Q,
      X.Scale,
      orZero(G, X.Zero, X.Q->getType().getElementType(), QN),
      W.Q,
      W.Scale,
      orZero(G, W.Zero, W.Q->getType().getElementType(), QN),
      YScale,
      orZero(G, YZero, YElt, QN)};
  if (Bias.first)
    Operands.push_back(Bias.first);
  else if (Bias.second)
    Operands.push_back(rewrite::createConstant(
        G, Bias.second, Bias.second->getType(),
        Conv->getOperand(2)->getName() + "_i32", Conv->getLoc(), &QN));
  Node *Fused =
      G.createNode(OpId::QLinearConv, Operands,
                   {G.makeUniqueName(QN.getResult(0)->getName() + "_qconv")},
                   {TensorType()}, &QN);
  Fused->setLoc(Conv->getLoc());
  for (const NamedAttribute &A : Conv->getAttrs())
    Fused->setAttr(A.Name, A.Value);
  llvm::SmallVector<TensorType, 1> Types;
  if (llvm::Error E = inferResultTypes(*Fused, Types)) {
    // Not a conv this op can express (shape inference says why): keep
    // the float form.
    llvm::consumeError(std::move(E));
    G.eraseNode(Fused);
    return llvm::Error::success();
  }
  const TensorType &Want = QN.getResult(0)->getType();
  if (Types[0].getElementType() != YElt ||
      (Want.hasRank() && Types[0].getShape() != Want.getShape())) {
    G.eraseNode(Fused);
    return llvm::Error::success();
  }
  Fused->getResult(0)->setType(Want.hasRank() ? Want : Types[0]);
  rewrite::replaceAndTakeName(G, QN.getResult(0), Fused->getResult(0));
  return llvm::Error::success();
}

/// The float form of QLinearConv \p QC, for targets without int8 convs:
/// QuantizeLinear(Conv(DequantizeLinear(x), DequantizeLinear(w), bias
/// dequantized by x_scale * w_scale)).
llvm::Error expand(Graph &G, Node &QC) {
  if (!QC.hasResult(0))
    return llvm::Error::success();
  auto V = [&](unsigned I) { return QC.getOperand(I); };
  const NamedAttribute Axis0{"axis", Attribute::getInt(0)};
  const std::string Base = QC.getResult(0)->getName();
  auto XF = rewrite::createInferred(G, OpId::DequantizeLinear,
                                    {V(0), V(1), V(2)}, {}, Base + "_xf", QC);
  if (!XF)
    return XF.takeError();
  auto WF = rewrite::createInferred(
      G, OpId::DequantizeLinear, {V(3), V(4), V(5)}, {Axis0}, Base + "_wf", QC);
  if (!WF)
    return WF.takeError();
  std::vector<Value *> ConvOperands = {*XF, *WF};
  if (QC.hasOperand(8)) {
    auto BS = rewrite::createInferred(G, OpId::Mul, {V(1), V(4)}, {},
                                      Base + "_b_scale", QC);
    if (!BS)
      return BS.takeError();
    auto BF = rewrite::createInferred(G, OpId::DequantizeLinear, {V(8), *BS},
                                      {Axis0}, Base + "_bf", QC);
    if (!BF)
      return BF.takeError();
    ConvOperands.push_back(*BF);
  }
  auto YF = rewrite::createInferred(G, OpId::Conv, ConvOperands, QC.getAttrs(),
                                    Base + "_yf", QC);
  if (!YF)
    return YF.takeError();
  auto Y = rewrite::createInferred(G, OpId::QuantizeLinear, {*YF, V(6), V(7)},
                                   {}, Base + "_q", QC);
  if (!Y)
    return Y.takeError();
  (*Y)->setType(QC.getResult(0)->getType());
  rewrite::replaceAndTakeName(G, QC.getResult(0), *Y);
  return llvm::Error::success();
}

/// The float form of ConvInteger \p CI, for targets without int8 convs:
/// Cast<i32>(Conv(DequantizeLinear(x, 1, x_zero_point),
/// DequantizeLinear(w, 1, w_zero_point))), exact while the f32 partial
/// sums stay below 2^24 in magnitude.
llvm::Error expandInteger(Graph &G, Node &CI) {
  if (!CI.hasResult(0))
    return llvm::Error::success();
  const std::string Base = CI.getResult(0)->getName();
  TensorDataRef OneData = TensorData::fromFloat({}, {1.0f});
  Value *One = rewrite::createConstant(G, OneData, OneData->getType(),
                                       Base + "_one", CI.getLoc(), &CI);
  Value *F[2];
  for (unsigned I = 0; I < 2; ++I) {
    std::vector<Value *> Operands = {CI.getOperand(I), One};
    if (CI.hasOperand(I + 2))
      Operands.push_back(CI.getOperand(I + 2));
    auto DQ = rewrite::createInferred(
        G, OpId::DequantizeLinear, Operands,
        {NamedAttribute{"axis", Attribute::getInt(I == 0 ? 1 : 0)}},
        Base + (I == 0 ? "_xf" : "_wf"), CI);
    if (!DQ)
      return DQ.takeError();
    F[I] = *DQ;
  }
  auto YF = rewrite::createInferred(G, OpId::Conv, {F[0], F[1]}, CI.getAttrs(),
                                    Base + "_yf", CI);
  if (!YF)
    return YF.takeError();
  auto Y = rewrite::createInferred(
      G, OpId::Cast, {*YF},
      {NamedAttribute{"to",
                      Attribute::getInt(toOnnxDataType(ElementType::I32))}},
      Base + "_i32", CI);
  if (!Y)
    return Y.takeError();
  (*Y)->setType(CI.getResult(0)->getType());
  rewrite::replaceAndTakeName(G, CI.getResult(0), *Y);
  return llvm::Error::success();
}

class FuseQuantizedConvPass final : public Pass {
public:
  llvm::StringRef getArgument() const override { return "fuse-quantized-conv"; }
  void configure(const PipelineOptions &Opts) override {
    Enabled = Opts.Layout.Target && Opts.Layout.Target->HasInt8;
  }
  llvm::Error run(Graph &G) override {
    if (!Enabled) {
      for (Node *QC : rewrite::collectNodes(G, {OpId::QLinearConv}))
        if (llvm::Error E = expand(G, *QC))
          return E;
      for (Node *CI : rewrite::collectNodes(G, {OpId::ConvInteger}))
        if (llvm::Error E = expandInteger(G, *CI))
          return E;
      return llvm::Error::success();
    }
    for (Node *Q : rewrite::collectNodes(G, {OpId::QuantizeLinear}))
      if (llvm::Error E = fuse(G, *Q))
        return E;
    return llvm::Error::success();
  }

private:
  /// The default target (cpu-avx512) has int8 convolutions.
  bool Enabled = true;
};

} // namespace

std::unique_ptr<Pass> strider::createFuseQuantizedConvPass() {
  return std::make_unique<FuseQuantizedConvPass>();
}
