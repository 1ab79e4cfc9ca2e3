//===- Verifier.cpp - IR invariants ---------------------------------------===//
//
// Structural checks (ownership, use lists, order, names), schema checks
// against the op table, and type rules through shape inference.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Verifier.h"
#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace strider;

static std::string arityText(int Min, int Max) {
  if (Max < 0)
    return "at least " + std::to_string(Min);
  if (Min == Max)
    return std::to_string(Min);
  return std::to_string(Min) + " to " + std::to_string(Max);
}

llvm::Error strider::verifyNodeSchema(const Node &N) {
  const OpInfo *Info = N.getInfo();
  if (!Info)
    return llvm::Error::success();
  int NumOps = N.getNumOperands(), NumRes = N.getNumResults();
  if (NumOps < Info->MinOperands ||
      (Info->MaxOperands >= 0 && NumOps > Info->MaxOperands))
    return makeNodeError(N, "has " + llvm::Twine(NumOps) +
                                " operands, expected " +
                                arityText(Info->MinOperands,
                                          Info->MaxOperands));
  if (NumRes < Info->MinResults ||
      (Info->MaxResults >= 0 && NumRes > Info->MaxResults))
    return makeNodeError(N, "has " + llvm::Twine(NumRes) +
                                " results, expected " +
                                arityText(Info->MinResults, Info->MaxResults));
  // Leading operands up to MinOperands are required, except that the op
  // may document optional inputs in the middle; the shape functions check
  // those. The first operand of every op with operands is always required.
  if (NumOps > 0 && !N.getOperand(0))
    return makeNodeError(N, "is missing its first operand");
  if (NumRes > 0 && !N.getResult(0))
    return makeNodeError(N, "is missing its first result");
  for (const NamedAttribute &A : N.getAttrs()) {
    const AttrSpec *Spec = Info->findAttr(A.Name);
    if (!Spec)
      return makeNodeError(N, "has unknown attribute '" + A.Name + "'");
    if (Spec->Kind != A.Value.getKind())
      return makeNodeError(N, "attribute '" + A.Name + "' must be of kind " +
                                  getAttrKindName(Spec->Kind) + ", got " +
                                  getAttrKindName(A.Value.getKind()));
    // A branch is a graph of its own, checked by the same rules.
    if (A.Value.getKind() == AttrKind::Graph) {
      if (!A.Value.getGraph())
        return makeNodeError(N, "attribute '" + A.Name + "' has no graph");
      if (llvm::Error E = verifyGraph(*A.Value.getGraph()))
        return makeNodeError(N, "attribute '" + A.Name +
                                    "': " + llvm::toString(std::move(E)));
    }
  }
  for (const AttrSpec &Spec : Info->Attrs)
    if (Spec.Required && !N.getAttr(Spec.Name))
      return makeNodeError(N, "is missing required attribute '" + Spec.Name +
                                  "'");
  return llvm::Error::success();
}

static llvm::Error verifyType(const Graph &G, const Value &V,
                              const Node *Def) {
  const TensorType &T = V.getType();
  if (T.hasRank() && !T.getLayout().isValidForRank(T.getRank())) {
    std::string Msg = "value '" + V.getName() + "' has a layout of the wrong rank";
    return Def ? makeNodeError(*Def, Msg) : makeGraphError(G, Msg);
  }
  return llvm::Error::success();
}

llvm::Error strider::verifyGraph(const Graph &G) {
  // Values defined so far, in order: graph inputs, then each node's results.
  llvm::DenseSet<const Value *> Defined;
  llvm::StringSet<> Names;
  for (Value *In : G.getInputs()) {
    if (In->getGraph() != &G || !In->isGraphInput())
      return makeGraphError(G, "input '" + In->getName() +
                                   "' does not belong to the graph");
    if (!Names.insert(In->getName()).second)
      return makeGraphError(G, "duplicate value name '" + In->getName() + "'");
    if (G.lookupValue(In->getName()) != In)
      return makeGraphError(G, "value name table out of sync for '" +
                                   In->getName() + "'");
    if (llvm::Error E = verifyType(G, *In, nullptr))
      return E;
    if (const TensorDataRef &D = In->getDefaultData())
      if (!isCompatibleType(In->getType(), D->getType().withLayout(Layout())))
        return makeGraphError(G, "default data of input '" + In->getName() +
                                     "' has type " + D->getType().str() +
                                     ", expected " + In->getType().str());
    Defined.insert(In);
  }

  llvm::SmallVector<TensorType, 4> Inferred;
  for (const Node *N : G.nodes()) {
    if (N->getGraph() != &G)
      return makeNodeError(*N, "belongs to another graph");
    for (unsigned I = 0; I < N->getNumOperands(); ++I) {
      Value *Op = N->getOperand(I);
      if (!Op)
        continue;
      if (Op->getGraph() != &G)
        return makeNodeError(*N, "operand " + llvm::Twine(I) +
                                     " is a value of another graph");
      if (!Defined.count(Op))
        return makeNodeError(*N, "operand '" + Op->getName() +
                                     "' is used before it is defined "
                                     "(the graph is not in topological "
                                     "order or has a cycle)");
      if (!llvm::is_contained(Op->getUses(), Use{const_cast<Node *>(N), I}))
        return makeNodeError(*N, "use list of '" + Op->getName() +
                                     "' is missing this node");
    }
    for (unsigned I = 0; I < N->getNumResults(); ++I) {
      Value *R = N->getResult(I);
      if (!R)
        continue;
      if (R->getDefiningNode() != N || R->getResultIndex() != I)
        return makeNodeError(*N, "result '" + R->getName() +
                                     "' does not point back to its node");
      if (!Names.insert(R->getName()).second)
        return makeNodeError(*N, "duplicate value name '" + R->getName() +
                                     "'");
      if (G.lookupValue(R->getName()) != R)
        return makeNodeError(*N, "value name table out of sync for '" +
                                     R->getName() + "'");
      for (const Use &U : R->getUses())
        if (U.OperandIndex >= U.User->getNumOperands() ||
            U.User->getOperand(U.OperandIndex) != R)
          return makeNodeError(*N, "use list of '" + R->getName() +
                                       "' has a stale entry");
      if (llvm::Error E = verifyType(G, *R, N))
        return E;
    }
    if (llvm::Error E = verifyNodeSchema(*N))
      return E;
    if (!N->isOpaque()) {
      if (llvm::Error E = inferResultTypes(*N, Inferred))
        return E;
      for (unsigned I = 0; I < N->getNumResults(); ++I) {
        Value *R = N->getResult(I);
        if (R && !isCompatibleType(R->getType(), Inferred[I]))
          return makeNodeError(*N, "result '" + R->getName() + "' has type " +
                                       R->getType().str() +
                                       " but the op produces " +
                                       Inferred[I].str());
        if (R && !Inferred[I].getLayout().isIdentity() &&
            R->getType().getLayout() != Inferred[I].getLayout())
          return makeNodeError(*N, "result '" + R->getName() +
                                       "' has the wrong layout");
      }
    }
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (Value *R = N->getResult(I))
        Defined.insert(R);
  }

  for (Value *Out : G.getOutputs()) {
    if (!Out || Out->getGraph() != &G || !Defined.count(Out))
      return makeGraphError(G, "output '" +
                                   (Out ? Out->getName() : std::string("?")) +
                                   "' is not a value of the graph");
  }
  return llvm::Error::success();
}
