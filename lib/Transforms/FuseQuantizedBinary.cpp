//===- FuseQuantizedBinary.cpp - Add/Mul of two quantized tensors ---------===//
//
// QuantizeLinear(f(DequantizeLinear(a), DequantizeLinear(b))), f an Add or
// a Mul of two 8-bit tensors of one static shape (a residual Add of a QDQ
// or QOperator ResNet, the x * Sigmoid(x) of a quantized YOLO's SiLU),
// every scale and zero point a constant of one element, becomes one
// qbinary op: the same chain in f32, but the backends read the two byte
// tensors and write one, instead of three passes over f32 tensors.
// (fuse-quantized-lookup takes an f of one quantized tensor and
// constants; it runs first.)
//
// f's result must have no other reader and not be a graph output; the
// DequantizeLinear nodes stay for their other readers (dead code
// elimination removes them otherwise). Like the other quantized fusions it
// runs for targets with int8 kernels (TargetDescription::HasInt8); for the
// others it spells each qbinary as the chain again.
//
//===----------------------------------------------------------------------===//

#include "GraphRewrite.h"

#include "strider/IR/Graph.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"

#include "llvm/ADT/STLExtras.h"

using namespace strider;

namespace {

bool is8Bit(ElementType T) {
  return T == ElementType::U8 || T == ElementType::I8;
}

/// Whether \p V is a constant of one element of type \p T (Unknown: any
/// 8-bit type).
bool isScalarConstant(const Value *V, ElementType T) {
  const TensorData *D = V ? V->getConstantData() : nullptr;
  if (!D || D->getNumElements() != 1)
    return false;
  const ElementType E = D->getElementType();
  return T == ElementType::Unknown ? is8Bit(E) : E == T;
}

/// The DequantizeLinear defining \p V when it reads an 8-bit tensor of a
/// static shape with an f32 scale and a zero point of one element each,
/// constants; else null.
Node *getDequantize(Value *V) {
  Node *DQ = V->getDefiningNode();
  if (!DQ || DQ->isOpaque() || DQ->getOpId() != OpId::DequantizeLinear ||
      DQ->getNumOperands() != 3 || !DQ->getOperand(0) ||
      !DQ->getOperand(0)->getType().hasStaticShape() ||
      !is8Bit(DQ->getOperand(0)->getType().getElementType()) ||
      !isScalarConstant(DQ->getOperand(1), ElementType::F32) ||
      !isScalarConstant(DQ->getOperand(2), ElementType::Unknown))
    return nullptr;
  return DQ;
}

/// Q(f(DQ(a), DQ(b))) into one qbinary when Q is such a chain.
llvm::Error fuse(Graph &G, Node &Q) {
  if (Q.isOpaque() || Q.getNumOperands() != 3 || !Q.hasResult(0) ||
      !isScalarConstant(Q.getOperand(1), ElementType::F32) ||
      !isScalarConstant(Q.getOperand(2), ElementType::Unknown))
    return llvm::Error::success();
  Value *FV = Q.getOperand(0);
  Node *F = FV ? FV->getDefiningNode() : nullptr;
  if (!F || F->isOpaque() ||
      (F->getOpId() != OpId::Add && F->getOpId() != OpId::Mul) ||
      F->getNumOperands() != 2 || G.isGraphOutput(FV) ||
      FV->getUses().size() != 1 ||
      FV->getType().getElementType() != ElementType::F32)
    return llvm::Error::success();
  Node *DA = getDequantize(F->getOperand(0));
  Node *DB = getDequantize(F->getOperand(1));
  if (!DA || !DB ||
      DA->getOperand(0)->getType().getShape() !=
          DB->getOperand(0)->getType().getShape())
    return llvm::Error::success();
  auto Y = rewrite::createInferred(
      G, OpId::QBinary,
      {DA->getOperand(0), DA->getOperand(1), DA->getOperand(2),
       DB->getOperand(0), DB->getOperand(1), DB->getOperand(2), Q.getOperand(1),
       Q.getOperand(2)},
      {NamedAttribute{"op", Attribute::getString(
                                F->getOpId() == OpId::Add ? "Add" : "Mul")}},
      Q.getResult(0)->getName(), Q);
  if (!Y)
    return Y.takeError();
  (*Y)->getDefiningNode()->setLoc(Q.getLoc());
  if ((*Y)->getType().getShape() != Q.getResult(0)->getType().getShape()) {
    G.eraseNode((*Y)->getDefiningNode());
    return llvm::Error::success();
  }
  (*Y)->setType(Q.getResult(0)->getType());
  rewrite::replaceAndTakeName(G, Q.getResult(0), *Y);
  return llvm::Error::success();
}

/// qbinary \p QB as the chain it stands for, for targets without int8
/// kernels.
llvm::Error expand(Graph &G, Node &QB) {
  if (QB.getNumOperands() != 8 || !QB.hasResult(0))
    return llvm::Error::success();
  const std::string Base = QB.getResult(0)->getName();
  Value *F[2];
  for (unsigned I = 0; I < 2; ++I) {
    auto DQ =
        rewrite::createInferred(G, OpId::DequantizeLinear,
                                {QB.getOperand(3 * I), QB.getOperand(3 * I + 1),
                                 QB.getOperand(3 * I + 2)},
                                {}, Base + (I ? "_bf" : "_af"), QB);
    if (!DQ)
      return DQ.takeError();
    F[I] = *DQ;
  }
  auto R = rewrite::createInferred(
      G, QB.getStringAttr("op", "Add") == "Mul" ? OpId::Mul : OpId::Add,
      {F[0], F[1]}, {}, Base + "_f", QB);
  if (!R)
    return R.takeError();
  auto Y = rewrite::createInferred(G, OpId::QuantizeLinear,
                                   {*R, QB.getOperand(6), QB.getOperand(7)}, {},
                                   Base + "_q", QB);
  if (!Y)
    return Y.takeError();
  (*Y)->setType(QB.getResult(0)->getType());
  rewrite::replaceAndTakeName(G, QB.getResult(0), *Y);
  return llvm::Error::success();
}

class FuseQuantizedBinaryPass final : public Pass {
public:
  llvm::StringRef getArgument() const override {
    return "fuse-quantized-binary";
  }
  void configure(const PipelineOptions &Opts) override {
    Enabled = Opts.Layout.Target && Opts.Layout.Target->HasInt8;
  }
  llvm::Error run(Graph &G) override {
    if (!Enabled) {
      for (Node *QB : rewrite::collectNodes(G, {OpId::QBinary}))
        if (llvm::Error E = expand(G, *QB))
          return E;
      return llvm::Error::success();
    }
    for (Node *Q : rewrite::collectNodes(G, {OpId::QuantizeLinear}))
      if (llvm::Error E = fuse(G, *Q))
        return E;
    return llvm::Error::success();
  }

private:
  /// The default target (cpu-avx512) has int8 kernels.
  bool Enabled = true;
};

} // namespace

std::unique_ptr<Pass> strider::createFuseQuantizedBinaryPass() {
  return std::make_unique<FuseQuantizedBinaryPass>();
}
