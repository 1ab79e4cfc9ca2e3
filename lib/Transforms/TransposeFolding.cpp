//===- TransposeFolding.cpp - Compose and remove Transposes ---------------===//
//
// Transpose(Transpose(x, p1), p2) becomes Transpose(x, p1 o p2), and a
// Transpose whose permutation is the identity forwards its operand. An
// absent perm attribute means reversing the dims.
//
//===----------------------------------------------------------------------===//

#include "GraphRewrite.h"

#include "strider/IR/Graph.h"
#include "strider/Transforms/Passes.h"

#include "llvm/ADT/Optional.h"

using namespace strider;

/// The permutation of Transpose \p T, None when it is absent and the
/// operand's rank unknown, or when it is not a permutation.
static llvm::Optional<std::vector<int64_t>> getPerm(const Node &T) {
  std::vector<int64_t> Perm;
  if (const Attribute *A = T.getAttr("perm")) {
    if (A->getKind() != AttrKind::Ints)
      return llvm::None;
    Perm = A->getInts();
  } else {
    const TensorType &X = T.getOperand(0)->getType();
    if (!X.hasRank())
      return llvm::None;
    for (unsigned I = X.getRank(); I > 0; --I)
      Perm.push_back(I - 1);
  }
  if (!Layout::isPermutation(Perm))
    return llvm::None;
  return Perm;
}

static bool isIdentityPerm(llvm::ArrayRef<int64_t> Perm) {
  for (unsigned I = 0; I < Perm.size(); ++I)
    if (Perm[I] != int64_t(I))
      return false;
  return true;
}

namespace {
/// If \p T transposes a Transpose, make it transpose that one's operand
/// with the composed permutation, in place (its result is unchanged).
void composeWithProducer(Graph &G, Node &T) {
  Node *Inner = T.getOperand(0)->getDefiningNode();
  if (!Inner || Inner->getOpId() != OpId::Transpose)
    return;
  llvm::Optional<std::vector<int64_t>> Outer = getPerm(T),
                                       First = getPerm(*Inner);
  if (!Outer || !First || Outer->size() != First->size())
    return;
  // Result dim I is Inner's dim Outer[I], which is x's dim
  // First[Outer[I]].
  std::vector<int64_t> Composed;
  for (int64_t P : *Outer)
    Composed.push_back((*First)[P]);
  T.setOperand(0, Inner->getOperand(0));
  T.setAttr("perm", Attribute::getInts(std::move(Composed)));
  if (rewrite::hasNoLiveResults(G, *Inner))
    G.eraseNode(Inner);
}

llvm::Error transposeFolding(Graph &G) {
  std::vector<Node *> Transposes = rewrite::collectNodes(G, {OpId::Transpose});
  // In order: an inner Transpose is done before its users, so a chain
  // composes into its last Transpose. Only the current node and nodes
  // before it are erased.
  for (Node *T : Transposes) {
    composeWithProducer(G, *T);
    llvm::Optional<std::vector<int64_t>> Perm = getPerm(*T);
    if (Perm && isIdentityPerm(*Perm))
      rewrite::forwardPassThrough(G, *T, T->getOperand(0), T->getResult(0));
  }
  return llvm::Error::success();
}
} // namespace

std::unique_ptr<Pass> strider::createTransposeFoldingPass() {
  return createFunctionPass("fold-transposes", transposeFolding);
}
