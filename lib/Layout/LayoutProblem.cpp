//===- LayoutProblem.cpp - Labelling problem construction and costs -------===//
//
// Building a LayoutProblem (with its invariants asserted) and the exact cost
// of a labelling, which every solver and test measures against.
//
//===----------------------------------------------------------------------===//

#include "strider/Layout/LayoutProblem.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>

using namespace strider;
using namespace strider::layout;

/// Whether \p C is a valid unary cost: non-negative and at most InfiniteCost.
[[maybe_unused]] static bool isValidUnaryCost(Cost C) {
  return C >= 0 && C <= InfiniteCost;
}

/// Whether \p C is a valid finite term cost (pairwise entry or weight).
[[maybe_unused]] static bool isValidFiniteCost(Cost C) {
  return C >= 0 && C < InfiniteCost;
}

/// \p A + \p B for costs in [0, InfiniteCost], saturated at InfiniteCost.
/// Both operands are at most 2^60, so the sum itself cannot overflow.
static Cost addSaturated(Cost A, Cost B) {
  return std::min(A + B, InfiniteCost);
}

unsigned LayoutProblem::addVariable(llvm::ArrayRef<Cost> Costs) {
  assert(NumLabels >= 1 && NumLabels <= 256 &&
         "labels are stored as uint8_t: 1 to 256 labels");
  assert(Costs.size() == NumLabels && "one unary cost per label expected");
  assert(llvm::all_of(Costs, isValidUnaryCost) &&
         "unary costs must lie in [0, InfiniteCost]");
  assert(llvm::any_of(Costs, [](Cost C) { return C < InfiniteCost; }) &&
         "a variable needs at least one allowed label");
  unsigned Var = getNumVariables();
  Unary.insert(Unary.end(), Costs.begin(), Costs.end());
  return Var;
}

void LayoutProblem::addUnary(unsigned Var, llvm::ArrayRef<Cost> Costs) {
  assert(Var < getNumVariables() && "unknown variable");
  assert(Costs.size() == NumLabels && "one unary cost per label expected");
  assert(llvm::all_of(Costs, isValidUnaryCost) &&
         "unary costs must lie in [0, InfiniteCost]");
  bool AnyFinite = false;
  for (unsigned L = 0; L != NumLabels; ++L) {
    Cost &Slot = Unary[Var * NumLabels + L];
    bool Forbidden = Slot == InfiniteCost || Costs[L] == InfiniteCost;
    assert((Forbidden || Slot + Costs[L] < InfiniteCost) &&
           "finite unary costs add up to InfiniteCost");
    Slot = Forbidden ? InfiniteCost : Slot + Costs[L];
    AnyFinite |= !Forbidden;
  }
  (void)AnyFinite;
  assert(AnyFinite && "a variable needs at least one allowed label");
}

void LayoutProblem::fix(unsigned Var, unsigned Label) {
  assert(Var < getNumVariables() && "unknown variable");
  assert(Label < NumLabels && "label out of range");
  assert(getUnary(Var, Label) < InfiniteCost &&
         "cannot fix a variable to a forbidden label");
  for (unsigned L = 0; L != NumLabels; ++L)
    if (L != Label)
      Unary[Var * NumLabels + L] = InfiniteCost;
}

void LayoutProblem::addPairwise(unsigned A, unsigned B,
                                llvm::ArrayRef<Cost> Table) {
  assert(A < getNumVariables() && B < getNumVariables() && "unknown variable");
  assert(A != B && "a pairwise term needs two distinct variables");
  assert(Table.size() == NumLabels * NumLabels &&
         "pairwise table must have NumLabels^2 entries");
  assert(llvm::all_of(Table, isValidFiniteCost) &&
         "pairwise costs must be finite and non-negative");
  PairTerms.push_back(
      Pairwise{A, B, std::vector<Cost>(Table.begin(), Table.end())});
}

void LayoutProblem::addDisagreement(llvm::ArrayRef<unsigned> Vars,
                                    Cost Weight) {
  assert(Vars.size() >= 2 && "a disagreement term needs two variables");
  assert(isValidFiniteCost(Weight) &&
         "disagreement weight must be finite and non-negative");
#ifndef NDEBUG
  std::vector<unsigned> Sorted(Vars.begin(), Vars.end());
  std::sort(Sorted.begin(), Sorted.end());
  assert(std::adjacent_find(Sorted.begin(), Sorted.end()) == Sorted.end() &&
         "disagreement variables must be distinct");
  assert(Sorted.back() < getNumVariables() && "unknown variable");
#endif
  Groups.push_back(
      Disagreement{std::vector<unsigned>(Vars.begin(), Vars.end()), Weight});
}

Cost LayoutProblem::evaluate(llvm::ArrayRef<uint8_t> Labels) const {
  unsigned NumVars = getNumVariables();
  assert(Labels.size() == NumVars && "one label per variable expected");
  Cost Total = 0;
  for (unsigned V = 0; V != NumVars; ++V) {
    assert(Labels[V] < NumLabels && "label out of range");
    Cost C = getUnary(V, Labels[V]);
    if (C == InfiniteCost)
      return InfiniteCost;
    Total = addSaturated(Total, C);
  }
  for (const Pairwise &T : PairTerms)
    Total = addSaturated(Total, T.Table[Labels[T.A] * NumLabels + Labels[T.B]]);
  for (const Disagreement &G : Groups) {
    uint8_t First = Labels[G.Vars.front()];
    bool AllEqual =
        llvm::all_of(G.Vars, [&](unsigned V) { return Labels[V] == First; });
    if (!AllEqual)
      Total = addSaturated(Total, G.Weight);
  }
  return Total;
}

Cost LayoutProblem::getFiniteCostBound() const {
  Cost Bound = 0;
  for (Cost C : Unary)
    if (C != InfiniteCost)
      Bound = addSaturated(Bound, C);
  for (const Pairwise &T : PairTerms)
    for (Cost C : T.Table)
      Bound = addSaturated(Bound, C);
  for (const Disagreement &G : Groups)
    Bound = addSaturated(Bound, G.Weight);
  return Bound;
}

bool LayoutProblem::isSubmodular() const {
  // Every term: T[a][b] + T[a+1][b+1] <= T[a+1][b] + T[a][b+1]. Entries are
  // below 2^60, so the sums of two cannot overflow.
  return llvm::all_of(PairTerms, [&](const Pairwise &T) {
    auto At = [&](unsigned A, unsigned B) {
      return T.Table[A * NumLabels + B];
    };
    for (unsigned A = 0; A + 1 < NumLabels; ++A)
      for (unsigned B = 0; B + 1 < NumLabels; ++B)
        if (At(A, B) + At(A + 1, B + 1) > At(A + 1, B) + At(A, B + 1))
          return false;
    return true;
  });
}

LayoutSolver::~LayoutSolver() = default;
