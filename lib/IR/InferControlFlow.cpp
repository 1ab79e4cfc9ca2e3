//===- InferControlFlow.cpp - Shape functions of control-flow ops ---------===//
//
// If: the condition is one bool; each branch graph takes one input per
// value the node passes it and returns one output per result. A result's
// type is what both branches agree on: the shared element type, and the
// shared rank with the dims both give (a dim they differ on is unknown).
// Branch types are those inferred when the branch was built; the taken
// branch is inferred again, with the operands' types, once inlined.
//
//===----------------------------------------------------------------------===//

#include "InferFunctions.h"

using namespace strider;
using namespace strider::detail;

/// The branch graph of attribute \p Name (required by the op table, so
/// present on verified nodes), or an error naming it.
static llvm::Expected<const Graph *> getBranch(const Node &N,
                                               llvm::StringRef Name) {
  const Attribute *A = N.getAttr(Name);
  if (!A || A->getKind() != AttrKind::Graph || !A->getGraph())
    return makeNodeError(N, "attribute '" + Name + "' must be a graph");
  return A->getGraph().get();
}

/// What two branch outputs of the same result agree on.
static TensorType joinBranchTypes(const TensorType &A, const TensorType &B) {
  ElementType Elt = A.getElementType() == B.getElementType()
                        ? A.getElementType()
                        : ElementType::Unknown;
  if (!A.hasRank() || !B.hasRank() || A.getRank() != B.getRank())
    return TensorType::getUnranked(Elt);
  DimList Dims;
  for (unsigned I = 0; I < A.getRank(); ++I)
    Dims.push_back(A.getDim(I) == B.getDim(I) ? A.getDim(I) : Dim());
  return makeType(Elt, Dims);
}

llvm::Error detail::inferIf(const Node &N, ResultTypes &Results) {
  if (llvm::Error E = checkScalarOperand(N, 0, "cond", EltClass::Bool,
                                         /*AllowSingleElement=*/true))
    return E;
  if (!getOperandType(N, 0))
    return checkOperandPresent(N, 0, "cond");
  const Graph *Branches[2];
  const char *Names[2] = {"then_branch", "else_branch"};
  for (unsigned B = 0; B < 2; ++B) {
    auto G = getBranch(N, Names[B]);
    if (!G)
      return G.takeError();
    Branches[B] = *G;
    if ((*G)->getInputs().size() != N.getNumOperands() - 1)
      return makeNodeError(N, llvm::Twine(Names[B]) + " takes " +
                                  llvm::Twine((*G)->getInputs().size()) +
                                  " values, the node passes " +
                                  llvm::Twine(N.getNumOperands() - 1));
    if ((*G)->getOutputs().size() != N.getNumResults())
      return makeNodeError(N, llvm::Twine(Names[B]) + " returns " +
                                  llvm::Twine((*G)->getOutputs().size()) +
                                  " values, the node has " +
                                  llvm::Twine(N.getNumResults()) + " results");
  }
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    Results.push_back(joinBranchTypes(
        getLogicalType(Branches[0]->getOutputs()[I]->getType()),
        getLogicalType(Branches[1]->getOutputs()[I]->getType())));
  return llvm::Error::success();
}
