//===- FuseQuantizedLookup.cpp - Quantized elementwise ops as tables ------===//
//
// QuantizeLinear(f(DequantizeLinear(x), c...)), for an elementwise f of
// ElementwiseOps below whose other operands c are constants of one
// element (or their dequantization), and scales and zero points that are
// constants of one element, is a function of one byte: it becomes one
// lookup op whose table (256 entries) is that chain evaluated by the
// reference interpreter on every value of x. A QOperator file's
// QLinearSigmoid, QLinearLeakyRelu, QLinearAdd or QLinearMul of a
// constant (which the importer writes in that form) and a QDQ file's Add,
// Mul, Div, HardSigmoid... of a constant between their quantization steps
// then read and write bytes once, instead of three passes over f32
// tensors. A lookup of a lookup's result that has no other reader
// composes with it.
//
// Functions of two quantized tensors (a residual Add, an SE block's Mul)
// keep their float form: as a table of 65536 entries indexed per element
// their lookups ran at about 1 ns an element on an AVX-512 EPYC, slower
// than the dequantize, f32 op and quantize passes (PP-OCRv4's detector:
// 16.4 against 11.1 ms).
//
// The f's result must have no other reader and not be a graph output.
// Like fuse-quantized-conv it runs for targets with int8 kernels
// (TargetDescription::HasInt8), after it in canonicalize; for the others
// it spells each lookup with standard ops (Cast, Add, Gather), which
// their kernels run: a model is prepared once for every target (the
// engine's prepared graph), with the default target's fusions.
//
//===----------------------------------------------------------------------===//

#include "ConstantTensor.h"
#include "GraphRewrite.h"

#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/Runtime/Reference.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>
#include <cstring>
#include <functional>

using namespace strider;

namespace {

/// The elementwise ops a table may stand for: functions of their operands'
/// values alone.
const OpId ElementwiseOps[] = {
    OpId::Add,   OpId::Sub,         OpId::Mul,       OpId::Div,
    OpId::Max,   OpId::Min,         OpId::Pow,       OpId::PRelu,
    OpId::Relu,  OpId::LeakyRelu,   OpId::Clip,      OpId::Sigmoid,
    OpId::Tanh,  OpId::HardSigmoid, OpId::HardSwish, OpId::Elu,
    OpId::Selu,  OpId::Celu,        OpId::Softplus,  OpId::Softsign,
    OpId::Erf,   OpId::Gelu,        OpId::Exp,       OpId::Log,
    OpId::Sqrt,  OpId::Neg,         OpId::Abs,       OpId::Reciprocal,
    OpId::Floor, OpId::Ceil,        OpId::Round,     OpId::Sign,
};

bool is8Bit(ElementType T) {
  return T == ElementType::U8 || T == ElementType::I8;
}

/// Constant data of \p V with one element, else null.
TensorDataRef getScalar(const Value *V) {
  TensorDataRef D = V ? folding::getConstantDataRef(V) : nullptr;
  return D && D->getNumElements() == 1 ? D : nullptr;
}

/// The DequantizeLinear defining \p V when it reads an 8-bit value with
/// a scale and zero point (if any) of one element, constants; else null.
Node *getScalarDequantize(Value *V) {
  Node *DQ = V->getDefiningNode();
  if (!DQ || DQ->isOpaque() || DQ->getOpId() != OpId::DequantizeLinear ||
      DQ->getNumOperands() < 2 || !DQ->getOperand(0) ||
      !is8Bit(DQ->getOperand(0)->getType().getElementType()) ||
      !DQ->getOperand(0)->getType().hasStaticShape())
    return nullptr;
  TensorDataRef S = getScalar(DQ->getOperand(1));
  if (!S || S->getElementType() != ElementType::F32)
    return nullptr;
  if (DQ->hasOperand(2) && !getScalar(DQ->getOperand(2)))
    return nullptr;
  return DQ;
}

/// Whether \p V is a constant of one element or the dequantization of
/// one (a QOperator file's quantized scalar operand).
bool isScalarOperand(const Value *V) {
  if (getScalar(V))
    return true;
  Node *DQ = V->getDefiningNode();
  return DQ && getScalarDequantize(const_cast<Value *>(V)) &&
         getScalar(DQ->getOperand(0));
}

/// A Constant node of \p D in \p G, named \p Name.
Value *addConstant(Graph &G, TensorDataRef D, const std::string &Name) {
  Node *N = G.createNode(OpId::Constant, {}, {Name}, {D->getType()});
  N->setAttr("value", Attribute::getTensor(D));
  return N->getResult(0);
}

/// Every value of type \p T (u8 or i8) in index order, shaped \p Shape.
runtime::Tensor allValues(ElementType T, llvm::ArrayRef<int64_t> Shape) {
  runtime::Tensor R(T, Shape);
  assert(R.getNumElements() == 256);
  for (int64_t I = 0; I < 256; ++I)
    R.setInt(I, T == ElementType::I8 ? I - 128 : I);
  return R;
}

/// Copies \p N (its op and attributes) into \p Into with \p Operands, its
/// result named \p Name and typed by inference.
llvm::Expected<Value *> copyNode(Graph &Into, const Node &N,
                                 llvm::ArrayRef<Value *> Operands,
                                 const std::string &Name) {
  Node *C = Into.createNode(N.getOpId(), Operands, {Name}, {TensorType()});
  for (const NamedAttribute &A : N.getAttrs())
    C->setAttr(A.Name, A.Value);
  llvm::SmallVector<TensorType, 1> Types;
  if (llvm::Error E = inferResultTypes(*C, Types))
    return std::move(E);
  C->getResult(0)->setType(Types[0]);
  return C->getResult(0);
}

/// The table of QuantizeLinear \p Q of \p F of the dequantization \p DQ,
/// evaluated on every value of its input; null when the reference
/// interpreter cannot evaluate it.
TensorDataRef evaluateTable(const Node &Q, const Node &F, const Node &DQ) {
  Graph T;
  runtime::TensorMap Inputs;
  llvm::DenseMap<const Value *, Value *> Map;
  // Constants, and dequantized constants with their DequantizeLinear.
  std::function<Value *(const Value *)> Clone = [&](const Value *V) -> Value * {
    if (Value *M = Map.lookup(V))
      return M;
    Value *C;
    if (TensorDataRef D = folding::getConstantDataRef(V)) {
      C = addConstant(T, D, "c" + std::to_string(Map.size()));
    } else {
      const Node *DQ = V->getDefiningNode();
      std::vector<Value *> Ops;
      for (unsigned I = 0; I < DQ->getNumOperands(); ++I)
        Ops.push_back(DQ->hasOperand(I) ? Clone(DQ->getOperand(I)) : nullptr);
      auto Copy = copyNode(T, *DQ, Ops, "cdq" + std::to_string(Map.size()));
      if (!Copy) {
        llvm::consumeError(Copy.takeError());
        return nullptr;
      }
      C = *Copy;
    }
    Map[V] = C;
    return C;
  };
  {
    const Value *X = DQ.getOperand(0);
    const ElementType Elt = X->getType().getElementType();
    Value *In = T.addInput("x", TensorType::get(Elt, {256}));
    Inputs["x"] = allValues(Elt, {256});
    std::vector<Value *> Ops = {In};
    for (unsigned I = 1; I < DQ.getNumOperands(); ++I)
      Ops.push_back(DQ.hasOperand(I) ? Clone(DQ.getOperand(I)) : nullptr);
    auto D = copyNode(T, DQ, Ops, "dq");
    if (!D) {
      llvm::consumeError(D.takeError());
      return nullptr;
    }
    Map[DQ.getResult(0)] = *D;
  }
  std::vector<Value *> FOps;
  for (unsigned I = 0; I < F.getNumOperands(); ++I) {
    FOps.push_back(F.hasOperand(I) ? Clone(F.getOperand(I)) : nullptr);
    if (F.hasOperand(I) && !FOps.back())
      return nullptr;
  }
  auto FV = copyNode(T, F, FOps, "f");
  if (!FV) {
    llvm::consumeError(FV.takeError());
    return nullptr;
  }
  std::vector<Value *> QOps = {*FV};
  for (unsigned I = 1; I < Q.getNumOperands(); ++I)
    QOps.push_back(Q.hasOperand(I) ? Clone(Q.getOperand(I)) : nullptr);
  auto QV = copyNode(T, Q, QOps, "y");
  if (!QV) {
    llvm::consumeError(QV.takeError());
    return nullptr;
  }
  T.addOutput(*QV);
  auto Out = runtime::runReference(T, Inputs);
  if (!Out) {
    llvm::consumeError(Out.takeError());
    return nullptr;
  }
  const runtime::Tensor &Y = Out->at("y");
  if (Y.getNumElements() != 256)
    return nullptr;
  auto Bytes = Y.getBytes();
  auto D = TensorData::create(TensorType::get(Y.getElementType(), {256}),
                              std::vector<uint8_t>(Bytes.begin(), Bytes.end()));
  if (!D) {
    llvm::consumeError(D.takeError());
    return nullptr;
  }
  return *D;
}

/// Lookup(Lookup(x, T1), T2) with T1's result read only here:
/// Lookup(x, T2[T1[i]]).
void composeWithInner(Graph &G, Node &Outer) {
  Value *Mid = Outer.getOperand(0);
  Node *Inner = Mid->getDefiningNode();
  if (Outer.getNumOperands() != 2 || !Inner || Inner->isOpaque() ||
      Inner->getOpId() != OpId::Lookup || Inner->getNumOperands() != 2 ||
      Mid->getUses().size() != 1 || G.isGraphOutput(Mid))
    return;
  TensorDataRef T1 = folding::getConstantDataRef(Inner->getOperand(1));
  TensorDataRef T2 = folding::getConstantDataRef(Outer.getOperand(1));
  if (!T1 || !T2)
    return;
  const uint8_t Flip =
      Mid->getType().getElementType() == ElementType::I8 ? 0x80 : 0;
  std::vector<uint8_t> Bytes(256);
  for (size_t I = 0; I < 256; ++I)
    Bytes[I] = T2->getBytes()[T1->getBytes()[I] ^ Flip];
  auto D = TensorData::create(T2->getType(), std::move(Bytes));
  if (!D) {
    llvm::consumeError(D.takeError());
    return;
  }
  Value *Table = rewrite::createConstant(
      G, *D, (*D)->getType(), Outer.getResult(0)->getName() + "_table",
      Outer.getLoc(), &Outer);
  Outer.setOperand(0, Inner->getOperand(0));
  Outer.setOperand(1, Table);
}

llvm::Error fuse(Graph &G, Node &Q) {
  if (Q.getNumOperands() < 2 || !Q.hasResult(0) ||
      !is8Bit(Q.getResult(0)->getType().getElementType()) ||
      !Q.getResult(0)->getType().hasStaticShape())
    return llvm::Error::success();
  Value *FV = Q.getOperand(0);
  Node *F = FV->getDefiningNode();
  TensorDataRef S = getScalar(Q.getOperand(1));
  if (!F || F->isOpaque() ||
      !llvm::is_contained(ElementwiseOps, F->getOpId()) ||
      F->getNumResults() != 1 || FV->getUses().size() != 1 ||
      G.isGraphOutput(FV) || !S || S->getElementType() != ElementType::F32 ||
      (Q.hasOperand(2) && !getScalar(Q.getOperand(2))))
    return llvm::Error::success();
  // One quantized operand (it may appear more than once: x * x), the
  // others scalars.
  Node *DQ = nullptr;
  for (unsigned I = 0; I < F->getNumOperands(); ++I) {
    if (!F->hasOperand(I) || isScalarOperand(F->getOperand(I)))
      continue;
    Node *D = getScalarDequantize(F->getOperand(I));
    if (!D || (DQ && D != DQ))
      return llvm::Error::success();
    DQ = D;
  }
  if (!DQ)
    return llvm::Error::success();
  TensorDataRef Table = evaluateTable(Q, *F, *DQ);
  if (!Table)
    return llvm::Error::success();
  std::vector<Value *> Operands = {
      DQ->getOperand(0),
      rewrite::createConstant(G, Table, Table->getType(),
                              Q.getResult(0)->getName() + "_table", F->getLoc(),
                              &Q)};
  Node *L = G.createNode(OpId::Lookup, Operands,
                         {G.makeUniqueName(Q.getResult(0)->getName())},
                         {TensorType()}, &Q);
  L->setLoc(F->getLoc());
  llvm::SmallVector<TensorType, 1> Types;
  if (llvm::Error E = inferResultTypes(*L, Types)) {
    llvm::consumeError(std::move(E));
    G.eraseNode(L);
    return llvm::Error::success();
  }
  const TensorType &Want = Q.getResult(0)->getType();
  if (Types[0].getShape() != Want.getShape() ||
      Types[0].getElementType() != Want.getElementType()) {
    G.eraseNode(L);
    return llvm::Error::success();
  }
  L->getResult(0)->setType(Want);
  rewrite::replaceAndTakeName(G, Q.getResult(0), L->getResult(0));
  // The float chain, now dead, goes at once: the dequantization's readers
  // are then counted right when a later lookup composes with this one.
  for (Node *Dead : {F, DQ})
    if (rewrite::hasNoLiveResults(G, *Dead))
      G.eraseNode(Dead);
  composeWithInner(G, *L);
  return llvm::Error::success();
}

/// Lookup \p L as standard ops for targets without int8 kernels (a model
/// prepared once for every target has its lookups already): a Gather of
/// the table by x as int32 (an i8 x shifted by 128).
llvm::Error expand(Graph &G, Node &L) {
  if (L.getNumOperands() != 2 || !L.hasResult(0))
    return llvm::Error::success();
  Value *X = L.getOperand(0);
  const std::string Base = L.getResult(0)->getName();
  auto Make = [&](OpId Op, llvm::ArrayRef<Value *> Operands,
                  llvm::ArrayRef<NamedAttribute> Attrs,
                  const std::string &Name) {
    return rewrite::createInferred(G, Op, Operands, Attrs, Name, L);
  };
  auto Index = Make(OpId::Cast, {X},
                    {{"to", Attribute::getInt(6)}}, // TensorProto::INT32
                    Base + "_index");
  if (!Index)
    return Index.takeError();
  if (X->getType().getElementType() == ElementType::I8) {
    TensorDataRef C = TensorData::fromInt64(ElementType::I32, {}, {128});
    Value *Offset = rewrite::createConstant(G, C, C->getType(),
                                            Base + "_offset", L.getLoc(), &L);
    Index = Make(OpId::Add, {*Index, Offset}, {}, Base + "_index");
    if (!Index)
      return Index.takeError();
  }
  auto Y = Make(OpId::Gather, {L.getOperand(1), *Index},
                {{"axis", Attribute::getInt(0)}}, Base + "_gather");
  if (!Y)
    return Y.takeError();
  (*Y)->setType(L.getResult(0)->getType());
  rewrite::replaceAndTakeName(G, L.getResult(0), *Y);
  return llvm::Error::success();
}

class FuseQuantizedLookupPass final : public Pass {
public:
  llvm::StringRef getArgument() const override {
    return "fuse-quantized-lookup";
  }
  void configure(const PipelineOptions &Opts) override {
    Enabled = Opts.Layout.Target && Opts.Layout.Target->HasInt8;
  }
  llvm::Error run(Graph &G) override {
    if (!Enabled) {
      for (Node *L : rewrite::collectNodes(G, {OpId::Lookup}))
        if (llvm::Error E = expand(G, *L))
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

std::unique_ptr<Pass> strider::createFuseQuantizedLookupPass() {
  return std::make_unique<FuseQuantizedLookupPass>();
}
