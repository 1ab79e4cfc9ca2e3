//===- FoldOneHotMatMul.cpp - A one-hot times a matrix is a row gather ----===//
//
// MatMul(Cast(Equal(I, iota)), W), where iota is a constant counting 0 to
// K - 1 along its last dim (its other dims 1), I an integer tensor whose
// last dim is 1, and W a constant K x D matrix, is an embedding lookup
// written as a one-hot encoding and a dense layer (JAX's nn.one_hot and a
// Dense layer, as in Google's magika). It becomes
//
//   Gather(W', Min(Max(Squeeze(I, -1), -1), K))
//
// with W' = W over a row of zeros: an index outside [0, K) reads the zero
// row (-1 wraps to it), as its all-zero one-hot row would have. The
// Equal's and Cast's results must have no other reader and not be graph
// outputs; every value keeps the identity layout (the pass runs before
// layout assignment). Sums of one product each, so results are exact.
//
//===----------------------------------------------------------------------===//

#include "ConstantTensor.h"
#include "GraphRewrite.h"
#include "PatternMatch.h"

#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/Transforms/Passes.h"

#include <cstring>

using namespace strider;
using namespace strider::pattern;

namespace {

/// Whether \p D counts 0, 1, ..., K - 1 along its last dim, every other
/// dim being 1; sets \p K.
bool isIota(const TensorData &D, int64_t &K) {
  const TensorType &T = D.getType();
  if (!T.hasStaticShape() || T.getRank() == 0 || !isInteger(T.getElementType()))
    return false;
  auto Shape = T.getStaticShape();
  for (unsigned I = 0; I + 1 < Shape.size(); ++I)
    if (Shape[I] != 1)
      return false;
  K = Shape.back();
  for (int64_t I = 0; I < K; ++I)
    if (D.getInt(I) != I)
      return false;
  return K > 0;
}

bool hasIdentityLayout(const Value *V) {
  return V->getType().getLayout().isIdentity();
}

/// A node of \p Id before \p Before whose result type is inferred; null
/// (and nothing left behind) if inference fails.
Value *createInferred(Graph &G, OpId Id, llvm::ArrayRef<Value *> Operands,
                      llvm::StringRef Name, const Location &Loc, Node *Before) {
  Node *N = G.createNode(Id, Operands, {G.makeUniqueName(Name)}, {TensorType()},
                         Before);
  N->setLoc(Loc);
  llvm::SmallVector<TensorType, 1> Types;
  if (llvm::Error E = inferResultTypes(*N, Types)) {
    llvm::consumeError(std::move(E));
    G.eraseNode(N);
    return nullptr;
  }
  N->getResult(0)->setType(Types[0]);
  return N->getResult(0);
}

void fold(Graph &G, Node &MM) {
  Value *F = MM.getOperand(0), *W = MM.getOperand(1);
  TensorDataRef WData = folding::getConstantDataRef(W);
  Node *Cast = getDefiningOp(F, OpId::Cast);
  if (!WData || !Cast || !isAbsorbable(G, F) || !hasIdentityLayout(W) ||
      !hasIdentityLayout(F) || !hasIdentityLayout(MM.getResult(0)))
    return;
  const TensorType &WT = WData->getType();
  if (!WT.hasStaticShape() || WT.getRank() != 2 ||
      WT.getElementType() != F->getType().getElementType() ||
      !isFloatingPoint(WT.getElementType()))
    return;
  Value *E = Cast->getOperand(0);
  Node *Eq = getDefiningOp(E, OpId::Equal);
  if (!Eq || !isAbsorbable(G, E) || !hasIdentityLayout(E))
    return;
  // One operand the iota, the other the indices.
  int64_t K = 0;
  Value *I = nullptr;
  for (unsigned Side = 0; Side < 2 && !I; ++Side) {
    TensorDataRef C = folding::getConstantDataRef(Eq->getOperand(Side));
    if (C && isIota(*C, K))
      I = Eq->getOperand(1 - Side);
  }
  const TensorType &ET = E->getType();
  if (!I || !hasIdentityLayout(I) || K != WT.getStaticShape()[0] ||
      !isInteger(I->getType().getElementType()) || !I->getType().hasRank() ||
      !ET.hasRank() || I->getType().getRank() != ET.getRank() ||
      ET.getRank() < 1)
    return;
  // I's leading dims are the one-hot's, its last is 1 (no broadcasting
  // by the iota's leading ones).
  const unsigned R = ET.getRank();
  const Dim &Last = I->getType().getDim(R - 1);
  if (!Last.isStatic() || Last.getSize() != 1 || !ET.getDim(R - 1).isStatic() ||
      ET.getDim(R - 1).getSize() != K)
    return;
  for (unsigned D = 0; D + 1 < R; ++D)
    if (!(I->getType().getDim(D) == ET.getDim(D)))
      return;

  // W over a row of zeros.
  const int64_t D = WT.getStaticShape()[1];
  const size_t RowBytes = WData->getBytes().size() / size_t(K);
  std::vector<uint8_t> Bytes(WData->getBytes().begin(),
                             WData->getBytes().end());
  Bytes.resize(Bytes.size() + RowBytes, 0);
  auto Padded = TensorData::create(
      TensorType::get(WT.getElementType(), {K + 1, D}), std::move(Bytes));
  if (!Padded) {
    llvm::consumeError(Padded.takeError());
    return;
  }
  const Location &Loc = MM.getLoc();
  const ElementType IT = I->getType().getElementType();
  Value *Table = rewrite::createConstant(G, *Padded, (*Padded)->getType(),
                                         W->getName() + "_rows", Loc, &MM);
  Value *Axes = rewrite::createConstant(
      G, TensorData::fromInt64(ElementType::I64, {1}, {-1}),
      TensorType::get(ElementType::I64, {1}), "one_hot_axes", Loc, &MM);
  Value *Lo = rewrite::createConstant(G, TensorData::fromInt64(IT, {}, {-1}),
                                      TensorType::get(IT, {}), "one_hot_below",
                                      Loc, &MM);
  Value *Hi = rewrite::createConstant(G, TensorData::fromInt64(IT, {}, {K}),
                                      TensorType::get(IT, {}), "one_hot_beyond",
                                      Loc, &MM);
  Value *Index = createInferred(G, OpId::Squeeze, {I, Axes},
                                I->getName() + "_index", Loc, &MM);
  Value *Low = Index ? createInferred(G, OpId::Max, {Index, Lo},
                                      I->getName() + "_clamped", Loc, &MM)
                     : nullptr;
  Value *Row = Low ? createInferred(G, OpId::Min, {Low, Hi},
                                    I->getName() + "_row", Loc, &MM)
                   : nullptr;
  Value *Rows =
      Row ? createInferred(G, OpId::Gather, {Table, Row},
                           MM.getResult(0)->getName() + "_rows", Loc, &MM)
          : nullptr;
  if (!Rows ||
      Rows->getType().getShape() != MM.getResult(0)->getType().getShape())
    return; // Left for DCE: the constants and helpers nothing reads.
  rewrite::replaceAndTakeName(G, MM.getResult(0), Rows);
}

llvm::Error foldOneHotMatMul(Graph &G) {
  for (Node *MM : rewrite::collectNodes(G, {OpId::MatMul}))
    if (MM->getNumOperands() == 2 && MM->hasResult(0))
      fold(G, *MM);
  return llvm::Error::success();
}

} // namespace

std::unique_ptr<Pass> strider::createFoldOneHotMatMulPass() {
  return createFunctionPass("fold-one-hot-matmul", foldOneHotMatMul);
}
