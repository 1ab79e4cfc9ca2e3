//===- CommonSubexpressionElimination.cpp - Merge equal nodes -------------===//
//
// Two nodes with the same op, operands, attributes (tensors compared by
// value) and result types compute the same values: the later one's users
// move to the earlier one. Constant nodes with equal data merge the same
// way. Opaque nodes (unknown effects) and Dropout (random in training mode)
// are never merged.
//
//===----------------------------------------------------------------------===//

#include "GraphRewrite.h"

#include "strider/IR/Graph.h"
#include "strider/Transforms/Passes.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallVector.h"

#include <cstring>
#include <unordered_map>

using namespace strider;

static llvm::hash_code hashType(const TensorType &T) {
  llvm::hash_code H = llvm::hash_combine(T.getElementType(), T.hasRank());
  if (!T.hasRank())
    return H;
  for (const Dim &D : T.getShape())
    H = llvm::hash_combine(H, D.isStatic() ? D.getSize() : -1, D.getSymbol());
  llvm::ArrayRef<unsigned> Perm = T.getLayout().getStoredPermutation();
  return llvm::hash_combine(H,
                            llvm::hash_combine_range(Perm.begin(), Perm.end()));
}

static llvm::hash_code hashFloatBits(float F) {
  uint32_t Bits;
  std::memcpy(&Bits, &F, sizeof(Bits));
  return llvm::hash_value(Bits);
}

static llvm::hash_code hashAttribute(const Attribute &A) {
  llvm::hash_code H = llvm::hash_value(static_cast<unsigned>(A.getKind()));
  switch (A.getKind()) {
  case AttrKind::Int:
    return llvm::hash_combine(H, A.getInt());
  case AttrKind::Float:
    return llvm::hash_combine(H, hashFloatBits(A.getFloat()));
  case AttrKind::String:
    return llvm::hash_combine(H, A.getString());
  case AttrKind::Ints:
    return llvm::hash_combine(
        H, llvm::hash_combine_range(A.getInts().begin(), A.getInts().end()));
  case AttrKind::Floats:
    for (float F : A.getFloats())
      H = llvm::hash_combine(H, hashFloatBits(F));
    return H;
  case AttrKind::Strings:
    return llvm::hash_combine(
        H,
        llvm::hash_combine_range(A.getStrings().begin(), A.getStrings().end()));
  case AttrKind::Tensor: {
    const TensorDataRef &D = A.getTensor();
    if (!D)
      return H;
    return llvm::hash_combine(H, hashType(D->getType()), D->getBytesHash());
  }
  case AttrKind::Graph:
    // By size only: equal graphs print alike, which costs a print; Ifs
    // are few.
    return llvm::hash_combine(H, A.getGraph() ? A.getGraph()->getNumNodes()
                                              : size_t(0));
  }
  return H;
}

/// Hash of everything nodeEquivalent compares.
static size_t hashNode(const Node &N) {
  llvm::hash_code H = llvm::hash_combine(static_cast<unsigned>(N.getOpId()),
                                         N.getNumOperands(), N.getNumResults());
  for (Value *Op : N.getOperands())
    H = llvm::hash_combine(H, Op);
  for (const NamedAttribute &A : N.getAttrs())
    H = llvm::hash_combine(H, A.Name, hashAttribute(A.Value));
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    Value *R = N.getResult(I);
    H = llvm::hash_combine(H, R != nullptr,
                           R ? hashType(R->getType()) : llvm::hash_code(0));
  }
  return H;
}

/// Whether \p A and \p B compute the same results: same op, operands,
/// attributes, result slots and result types.
static bool nodeEquivalent(const Node &A, const Node &B) {
  if (A.getOpId() != B.getOpId() || A.getOperands() != B.getOperands() ||
      A.getNumResults() != B.getNumResults() ||
      A.getAttrs().size() != B.getAttrs().size())
    return false;
  for (unsigned I = 0; I < A.getAttrs().size(); ++I)
    if (A.getAttrs()[I].Name != B.getAttrs()[I].Name ||
        A.getAttrs()[I].Value != B.getAttrs()[I].Value)
      return false;
  for (unsigned I = 0; I < A.getNumResults(); ++I) {
    Value *RA = A.getResult(I), *RB = B.getResult(I);
    if (!RA != !RB || (RA && RA->getType() != RB->getType()))
      return false;
  }
  return true;
}

/// Whether \p N may take part in CSE at all.
static bool isCandidate(const Node &N) {
  return !N.isOpaque() && N.getOpId() != OpId::Dropout && N.getNumResults() > 0;
}

namespace {
bool canReplace(const Graph &G, const Node &N) {
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (Value *R = N.getResult(I))
      if (G.isGraphOutput(R))
        return false;
  return true;
}

llvm::Error commonSubexpressionElimination(Graph &G) {
  // Earlier nodes by hash; only looked up, never iterated, so the result
  // depends on node order alone. Merging a node redirects its users
  // before they are visited, so chains of equal nodes merge in one sweep.
  std::unordered_map<size_t, llvm::SmallVector<Node *, 1>> Seen;
  for (Node *N : G.getNodeList()) {
    if (!isCandidate(*N))
      continue;
    llvm::SmallVector<Node *, 1> &Bucket = Seen[hashNode(*N)];
    Node *Earlier = nullptr;
    for (Node *E : Bucket)
      if (nodeEquivalent(*E, *N)) {
        Earlier = E;
        break;
      }
    // A graph output keeps its producer (and so its name); it can still
    // stand in for later nodes.
    if (!Earlier || !canReplace(G, *N)) {
      Bucket.push_back(N);
      continue;
    }
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (Value *R = N->getResult(I))
        R->replaceAllUsesWith(Earlier->getResult(I));
    G.eraseNode(N);
  }
  return llvm::Error::success();
}
} // namespace

std::unique_ptr<Pass> strider::createCommonSubexpressionEliminationPass() {
  return createFunctionPass("cse", commonSubexpressionElimination);
}
