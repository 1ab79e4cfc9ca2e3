//===- ShapeInference.cpp - Result types of ops ---------------------------===//
//
// Dispatch of the per-op shape functions through the op table, type
// compatibility and refinement, and the whole-graph driver.
//
//===----------------------------------------------------------------------===//

#include "InferFunctions.h"

#include "strider/IR/Graph.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

using namespace strider;

namespace {
using InferFn = llvm::Error (*)(const Node &, detail::ResultTypes &);
constexpr InferFn InferTable[] = {
#define STRIDER_OP(Id, Name, MinIn, MaxIn, MinOut, MaxOut, Layout, Attrs)      \
  &detail::infer##Id,
#include "strider/IR/Ops.def"
};
} // namespace

llvm::Error strider::inferResultTypes(const Node &N,
                                      llvm::SmallVectorImpl<TensorType> &R) {
  R.clear();
  if (N.isOpaque()) {
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      R.push_back(N.hasResult(I) ? N.getResult(I)->getType() : TensorType());
    return llvm::Error::success();
  }
  if (llvm::Error E = InferTable[static_cast<unsigned>(N.getOpId())](N, R))
    return E;
  // A view whose shape is read at run time (Reshape's shape, Unsqueeze's
  // axes) keeps its declared result type: that type must still hold the
  // input's elements, which every backend copies by the static types
  // (found by the lowering fuzzer: reads past the input).
  if (hasOpTrait(N.getOpId(), optrait::View) && !R.empty() &&
      !R[0].hasStaticShape() && N.hasResult(0) && N.hasOperand(0)) {
    const TensorType &X = N.getOperand(0)->getType();
    const TensorType &Declared = N.getResult(0)->getType();
    // Counted only within the size limit (beyond it the product wraps).
    if (X.isWithinSizeLimit() && Declared.isWithinSizeLimit()) {
      auto In = X.getNumElements(), Out = Declared.getNumElements();
      if (In && Out && *In != *Out)
        return makeNodeError(N, "result is declared " + Declared.str() + " (" +
                                    llvm::Twine(*Out) +
                                    " elements) but the input " + X.str() +
                                    " has " + llvm::Twine(*In));
    }
  }
  for (size_t I = 0; I < R.size(); ++I)
    if (!R[I].isWithinSizeLimit())
      return makeNodeError(N, "result " + llvm::Twine(I) + " would be " +
                                  R[I].str() + ", " +
                                  R[I].getSizeLimitProblem());
  // Shape functions may compute fewer results than slots (optional outputs
  // they do not model); pad so callers can index every slot.
  while (R.size() < N.getNumResults())
    R.push_back(TensorType());
  return llvm::Error::success();
}

static bool dimsCompatible(const Dim &A, const Dim &B) {
  return !(A.isStatic() && B.isStatic() && A.getSize() != B.getSize());
}

bool strider::isCompatibleType(const TensorType &Declared,
                               const TensorType &Inferred) {
  if (Declared.getElementType() != ElementType::Unknown &&
      Inferred.getElementType() != ElementType::Unknown &&
      Declared.getElementType() != Inferred.getElementType())
    return false;
  if (!Declared.hasRank() || !Inferred.hasRank())
    return true;
  if (Declared.getRank() != Inferred.getRank())
    return false;
  for (unsigned I = 0; I < Declared.getRank(); ++I)
    if (!dimsCompatible(Declared.getDim(I), Inferred.getDim(I)))
      return false;
  return true;
}

TensorType strider::refineType(const TensorType &Declared,
                               const TensorType &Inferred) {
  ElementType Elt = Declared.getElementType() != ElementType::Unknown
                        ? Declared.getElementType()
                        : Inferred.getElementType();
  if (!Inferred.hasRank())
    return Declared.withElementType(Elt);
  if (!Declared.hasRank()) {
    TensorType T = Inferred.withElementType(Elt);
    return T;
  }
  llvm::SmallVector<Dim, 6> Dims;
  for (unsigned I = 0; I < Declared.getRank(); ++I) {
    const Dim &A = Declared.getDim(I), &B = Inferred.getDim(I);
    if (A.isStatic() || (A.isSymbol() && !B.isStatic()) || B.isUnknown())
      Dims.push_back(A);
    else
      Dims.push_back(B);
  }
  Layout L = Inferred.getLayout().isIdentity() ? Declared.getLayout()
                                               : Inferred.getLayout();
  return TensorType(Elt, Dims, L);
}

llvm::Error strider::inferShapes(Graph &G, std::vector<std::string> *Conflicts,
                                 InferenceMemo *Memo) {
  llvm::SmallVector<TensorType, 4> Inferred;
  const bool Incremental = Memo && !Memo->Seen.empty();
  // Incremental: results (and graph inputs) whose consumers must be
  // inferred again.
  llvm::DenseSet<const Value *> Dirty;
  if (Incremental)
    for (const Value *In : G.getInputs()) {
      auto It = llvm::find_if(Memo->Inputs,
                              [&](const auto &P) { return P.first == In; });
      if (It == Memo->Inputs.end() || It->second != In->getType())
        Dirty.insert(In);
    }
  for (Node *N : G.nodes()) {
    if (N->isOpaque())
      continue;
    bool Changed = false;
    if (Incremental) {
      auto It = Memo->Seen.find(N->getSerial());
      Changed = It == Memo->Seen.end() || It->second != N->getVersion();
      if (!Changed && llvm::none_of(N->getOperands(), [&](const Value *V) {
            return V && Dirty.count(V);
          }))
        continue;
    }
    if (llvm::Error E = inferResultTypes(*N, Inferred))
      return E;
    for (unsigned I = 0; I < N->getNumResults(); ++I) {
      Value *R = N->getResult(I);
      if (!R)
        continue;
      if (isCompatibleType(R->getType(), Inferred[I])) {
        TensorType Refined = refineType(R->getType(), Inferred[I]);
        if (Incremental && (Changed || Refined != R->getType()))
          Dirty.insert(R);
        R->setType(std::move(Refined));
        continue;
      }
      if (Incremental)
        Dirty.insert(R);
      std::string Msg = "result '" + R->getName() + "' declared as " +
                        R->getType().str() + " but inferred as " +
                        Inferred[I].str();
      if (!Conflicts)
        return makeNodeError(*N, Msg);
      Conflicts->push_back(
          llvm::toString(makeNodeError(*N, Msg + "; using the inferred type")));
      const Layout &L = R->getType().getLayout();
      R->setType(Inferred[I].hasRank() &&
                         L.isValidForRank(Inferred[I].getRank())
                     ? Inferred[I].withLayout(L)
                     : Inferred[I]);
    }
  }
  if (Memo) {
    Memo->Seen.clear();
    for (const Node *N : G.nodes())
      Memo->Seen[N->getSerial()] = N->getVersion();
    Memo->Inputs.clear();
    for (const Value *In : G.getInputs())
      Memo->Inputs.emplace_back(In, In->getType());
  }
  return llvm::Error::success();
}
