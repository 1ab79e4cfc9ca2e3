//===- InferRecurrent.cpp - Shape functions of the recurrences ------------===//
//
// LSTM and GRU: the attribute reader shared with the kernels
// (Recurrence.h) and the shape function, which checks every operand against
// the hidden size and the number of directions.
//
//===----------------------------------------------------------------------===//

#include "InferFunctions.h"

#include "strider/IR/Recurrence.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace strider;
using namespace strider::detail;

namespace {

const std::pair<const char *, RnnActivation> ActivationNames[] = {
    {"Sigmoid", RnnActivation::Sigmoid},
    {"Tanh", RnnActivation::Tanh},
    {"Relu", RnnActivation::Relu},
    {"Softsign", RnnActivation::Softsign},
    {"Softplus", RnnActivation::Softplus},
};

/// The default activation \p Index of one direction (LSTM: f = Sigmoid,
/// g = h = Tanh; GRU: f = Sigmoid, g = Tanh).
RnnActivation getDefaultActivation(unsigned Index) {
  return Index == 0 ? RnnActivation::Sigmoid : RnnActivation::Tanh;
}

} // namespace

llvm::Expected<RecurrenceAttrs>
strider::readRecurrenceAttrs(const Node &N, unsigned NumActivations) {
  RecurrenceAttrs A;
  std::string Dir = N.getStringAttr("direction", "forward");
  if (Dir == "reverse") {
    A.Forward = false;
    A.Reverse = true;
  } else if (Dir == "bidirectional") {
    A.Reverse = true;
    A.NumDirections = 2;
  } else if (Dir != "forward") {
    return makeNodeError(N, "direction '" + Dir +
                                "' is not one of forward, reverse, "
                                "bidirectional");
  }
  if (const Attribute *H = N.getAttr("hidden_size")) {
    A.HiddenSize = H->getInt();
    if (A.HiddenSize <= 0)
      return makeNodeError(N, "hidden_size is " + llvm::Twine(A.HiddenSize) +
                                  ", expected > 0");
  }
  int64_t Layout = N.getIntAttr("layout", 0);
  if (Layout != 0 && Layout != 1)
    return makeNodeError(N, "layout is " + llvm::Twine(Layout) +
                                ", expected 0 or 1");
  A.BatchMajor = Layout == 1;
  A.Clip = N.getFloatAttr("clip", 0.0f);
  if (N.getAttr("clip") && !(A.Clip > 0))
    return makeNodeError(N, "clip must be positive");
  A.InputForget = N.getIntAttr("input_forget", 0) != 0;
  A.LinearBeforeReset = N.getIntAttr("linear_before_reset", 0) != 0;
  if (N.getAttr("activation_alpha") || N.getAttr("activation_beta"))
    return makeNodeError(N, "activation_alpha and activation_beta are not "
                            "supported");
  const unsigned Count = NumActivations * A.NumDirections;
  if (const Attribute *Acts = N.getAttr("activations")) {
    const std::vector<std::string> &Names = Acts->getStrings();
    if (Names.size() != Count)
      return makeNodeError(N, "activations has " + llvm::Twine(Names.size()) +
                                  " entries, expected " + llvm::Twine(Count));
    for (const std::string &Name : Names) {
      const auto *It = llvm::find_if(ActivationNames, [&](const auto &P) {
        return llvm::StringRef(P.first).equals_insensitive(Name);
      });
      if (It == std::end(ActivationNames))
        return makeNodeError(N, "activation '" + Name + "' is not supported");
      A.Activations.push_back(It->second);
    }
  } else {
    for (unsigned I = 0; I < Count; ++I)
      A.Activations.push_back(getDefaultActivation(I % NumActivations));
  }
  return A;
}

double strider::applyRnnActivation(RnnActivation A, double X) {
  switch (A) {
  case RnnActivation::Sigmoid:
    return 1.0 / (1.0 + std::exp(-X));
  case RnnActivation::Tanh:
    return std::tanh(X);
  case RnnActivation::Relu:
    return X > 0 ? X : 0.0;
  case RnnActivation::Softsign:
    return X / (1.0 + std::fabs(X));
  case RnnActivation::Softplus:
    return std::log1p(std::exp(X));
  }
  llvm_unreachable("unknown activation");
}

namespace {

/// Merges dim \p Axis of \p T (an operand named \p Name) into \p Acc, which
/// it must equal; \p What names the expected size in the error.
llvm::Error unifyDim(const Node &N, const TensorType &T, unsigned Axis,
                     llvm::StringRef Name, Dim &Acc, llvm::StringRef What) {
  if (!T.hasRank())
    return llvm::Error::success();
  const Dim &D = T.getDim(Axis);
  if (mergeDims(Acc, D, Acc))
    return llvm::Error::success();
  return makeNodeError(N, "input '" + Name + "' has dim " + llvm::Twine(Axis) +
                              " = " + llvm::Twine(D.getSize()) + ", expected " +
                              llvm::Twine(Acc.getSize()) + " (" + What + ")");
}

/// A static dim \p Factor * \p D, or unknown.
Dim scaleDim(const Dim &D, int64_t Factor) {
  return D.isStatic() ? Dim::getStatic(D.getSize() * Factor) : Dim();
}

/// Shape function of a recurrence with \p Gates gates (LSTM: 4), whether
/// it has a cell state and peepholes, and \p NumResults results.
llvm::Error inferRecurrence(const Node &N, ResultTypes &Results, unsigned Gates,
                            unsigned NumActivations, bool HasCell) {
  auto AttrsOr = readRecurrenceAttrs(N, NumActivations);
  if (!AttrsOr)
    return AttrsOr.takeError();
  const RecurrenceAttrs &A = *AttrsOr;
  static const char *const Names[] = {
      "X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
  for (unsigned I = 0; I < 3; ++I)
    if (!getOperandType(N, I))
      return checkOperandPresent(N, I, Names[I]);
  const TensorType &X = *getOperandType(N, 0);
  ElementType Elt = X.getElementType();
  if (llvm::Error E = checkElementType(N, Elt, "X", EltClass::Float))
    return E;
  // Ranks and element types of every operand present.
  static const unsigned Ranks[] = {3, 3, 3, 2, 1, 3, 3, 2};
  const unsigned NumOperands = HasCell ? 8 : 6;
  if (N.getNumOperands() > NumOperands)
    return makeNodeError(N, "has " + llvm::Twine(N.getNumOperands()) +
                                " operands, expected at most " +
                                llvm::Twine(NumOperands));
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    const TensorType *T = getOperandType(N, I);
    if (!T)
      continue;
    if (llvm::Error E = checkRank(N, *T, Names[I], Ranks[I]))
      return E;
    if (I == 4) {
      if (llvm::Error E = checkElementType(N, T->getElementType(), Names[I],
                                           EltClass::Index))
        return E;
    } else if (llvm::Error E = unifyElementTypes(N, Elt, T->getElementType())) {
      return E;
    }
  }
  // Sizes: directions, hidden, input, batch, sequence.
  Dim Dirs = Dim::getStatic(A.NumDirections);
  Dim Hidden = A.HiddenSize > 0 ? Dim::getStatic(A.HiddenSize) : Dim();
  const TensorType &W = *getOperandType(N, 1), &R = *getOperandType(N, 2);
  if (llvm::Error E = unifyDim(N, R, 2, "R", Hidden, "hidden_size"))
    return E;
  Dim GateRows = scaleDim(Hidden, Gates);
  const std::string GateWhat = std::to_string(Gates) + " * hidden_size";
  Dim Input = X.hasRank() ? X.getDim(2) : Dim();
  Dim Batch = X.hasRank() ? X.getDim(A.BatchMajor ? 0 : 1) : Dim();
  Dim Seq = X.hasRank() ? X.getDim(A.BatchMajor ? 1 : 0) : Dim();
  for (const TensorType *T : {&W, &R})
    if (llvm::Error E = unifyDim(N, *T, 0, T == &W ? "W" : "R", Dirs,
                                 "number of directions"))
      return E;
  for (const TensorType *T : {&W, &R})
    if (llvm::Error E =
            unifyDim(N, *T, 1, T == &W ? "W" : "R", GateRows, GateWhat))
      return E;
  if (llvm::Error E = unifyDim(N, W, 2, "W", Input, "input size of X"))
    return E;
  if (const TensorType *B = getOperandType(N, 3)) {
    Dim BiasCols = scaleDim(Hidden, 2 * Gates);
    if (llvm::Error E = unifyDim(N, *B, 0, "B", Dirs, "number of directions"))
      return E;
    if (llvm::Error E = unifyDim(N, *B, 1, "B", BiasCols,
                                 std::to_string(2 * Gates) + " * hidden_size"))
      return E;
  }
  if (const TensorType *L = getOperandType(N, 4))
    if (llvm::Error E = unifyDim(N, *L, 0, "sequence_lens", Batch, "batch"))
      return E;
  for (unsigned I : {5u, 6u}) {
    const TensorType *T = getOperandType(N, I);
    if (!T || (I == 6 && !HasCell))
      continue;
    if (llvm::Error E = unifyDim(N, *T, A.BatchMajor ? 1 : 0, Names[I], Dirs,
                                 "number of directions"))
      return E;
    if (llvm::Error E =
            unifyDim(N, *T, A.BatchMajor ? 0 : 1, Names[I], Batch, "batch"))
      return E;
    if (llvm::Error E = unifyDim(N, *T, 2, Names[I], Hidden, "hidden_size"))
      return E;
  }
  if (const TensorType *P = HasCell ? getOperandType(N, 7) : nullptr) {
    if (llvm::Error E = unifyDim(N, *P, 0, "P", Dirs, "number of directions"))
      return E;
    Dim PeepCols = scaleDim(Hidden, 3);
    if (llvm::Error E = unifyDim(N, *P, 1, "P", PeepCols, "3 * hidden_size"))
      return E;
  }
  if (N.getNumResults() > (HasCell ? 3u : 2u))
    return makeNodeError(N, "has " + llvm::Twine(N.getNumResults()) +
                                " results, expected at most " +
                                llvm::Twine(HasCell ? 3 : 2));
  DimList Y = A.BatchMajor ? DimList{Batch, Seq, Dirs, Hidden}
                           : DimList{Seq, Dirs, Batch, Hidden};
  DimList State = A.BatchMajor ? DimList{Batch, Dirs, Hidden}
                               : DimList{Dirs, Batch, Hidden};
  Results.push_back(makeType(Elt, Y));
  Results.push_back(makeType(Elt, State));
  if (HasCell)
    Results.push_back(makeType(Elt, State));
  return llvm::Error::success();
}

} // namespace

llvm::Error detail::inferLSTM(const Node &N, ResultTypes &Results) {
  return inferRecurrence(N, Results, 4, 3, /*HasCell=*/true);
}

llvm::Error detail::inferGRU(const Node &N, ResultTypes &Results) {
  return inferRecurrence(N, Results, 3, 2, /*HasCell=*/false);
}
