//===- BruteForceSolver.cpp - Exhaustive reference solver -----------------===//
//
// Tries every labelling of a small problem: the reference that tests hold
// the exact solvers against. Any number of labels, any kind of term.
//
//===----------------------------------------------------------------------===//

#include "strider/Layout/LayoutProblem.h"

#include <cassert>

using namespace strider;
using namespace strider::layout;

namespace {

/// The most variables, and the most labellings, the solver enumerates.
constexpr unsigned MaxVariables = 24;
constexpr uint64_t MaxLabellings = UINT64_C(1) << 24;

class BruteForceSolver final : public LayoutSolver {
public:
  llvm::StringRef getName() const override { return "brute-force"; }
  llvm::Expected<LayoutSolution> solve(const LayoutProblem &P) override;
};

} // namespace

llvm::Expected<LayoutSolution> BruteForceSolver::solve(const LayoutProblem &P) {
  unsigned NumVars = P.getNumVariables();
  unsigned NumLabels = P.getNumLabels();
  if (NumVars > MaxVariables)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "brute-force solver takes at most %u variables, problem has %u",
        MaxVariables, NumVars);
  uint64_t NumLabellings = 1;
  for (unsigned V = 0; V != NumVars; ++V) {
    NumLabellings *= NumLabels;
    if (NumLabellings > MaxLabellings)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "brute-force solver takes at most 2^24 labellings, problem has "
          "%u labels over %u variables",
          NumLabels, NumVars);
  }

  if (P.getFiniteCostBound() >= InfiniteCost)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "finite layout costs add up to InfiniteCost (2^60) or more");

  // The terms each variable takes part in, to update the running cost when
  // it changes label.
  llvm::ArrayRef<LayoutProblem::Pairwise> Pairs = P.getPairwiseTerms();
  llvm::ArrayRef<LayoutProblem::Disagreement> Groups = P.getDisagreements();
  std::vector<std::vector<unsigned>> PairsOf(NumVars), GroupsOf(NumVars);
  for (unsigned I = 0, E = Pairs.size(); I != E; ++I) {
    PairsOf[Pairs[I].A].push_back(I);
    PairsOf[Pairs[I].B].push_back(I);
  }
  for (unsigned I = 0, E = Groups.size(); I != E; ++I)
    for (unsigned V : Groups[I].Vars)
      GroupsOf[V].push_back(I);

  // The running cost of Labels: the number of forbidden labels in use and
  // the exact sum of the finite costs (below InfiniteCost, checked above).
  std::vector<uint8_t> Labels(NumVars, 0);
  int NumForbidden = 0;
  Cost FiniteSum = 0;
  auto PairCost = [&](const LayoutProblem::Pairwise &T) {
    return T.Table[Labels[T.A] * NumLabels + Labels[T.B]];
  };
  auto GroupCost = [&](const LayoutProblem::Disagreement &G) {
    uint8_t First = Labels[G.Vars.front()];
    for (unsigned V : G.Vars)
      if (Labels[V] != First)
        return G.Weight;
    return Cost(0);
  };
  // Add (Sign = 1) or remove (Sign = -1) the terms that involve V.
  auto Account = [&](unsigned V, int Sign) {
    Cost U = P.getUnary(V, Labels[V]);
    if (U == InfiniteCost)
      NumForbidden += Sign;
    else
      FiniteSum += Sign * U;
    for (unsigned I : PairsOf[V])
      FiniteSum += Sign * PairCost(Pairs[I]);
    for (unsigned I : GroupsOf[V])
      FiniteSum += Sign * GroupCost(Groups[I]);
  };
  auto Relabel = [&](unsigned V, uint8_t Label) {
    Account(V, -1);
    Labels[V] = Label;
    Account(V, 1);
  };
  auto CurrentCost = [&] { return NumForbidden ? InfiniteCost : FiniteSum; };

  for (unsigned V = 0; V != NumVars; ++V) {
    Cost U = P.getUnary(V, 0);
    if (U == InfiniteCost)
      ++NumForbidden;
    else
      FiniteSum += U;
  }
  for (const LayoutProblem::Pairwise &T : Pairs)
    FiniteSum += PairCost(T);
  for (const LayoutProblem::Disagreement &G : Groups)
    FiniteSum += GroupCost(G);

  // Count through the labellings in lexicographic order (the last variable
  // changes fastest) and keep the first of the cheapest.
  LayoutSolution Best;
  Best.Labels = Labels;
  Best.TotalCost = CurrentCost();
  for (uint64_t Step = 1; Step != NumLabellings; ++Step) {
    unsigned V = NumVars;
    while (Labels[V - 1] + 1u == NumLabels)
      Relabel(--V, 0);
    Relabel(V - 1, Labels[V - 1] + 1);
    Cost C = CurrentCost();
    if (C < Best.TotalCost) {
      Best.TotalCost = C;
      Best.Labels = Labels;
    }
  }
  assert(Best.TotalCost == P.evaluate(Best.Labels) &&
         "running cost drifted from the labelling's cost");
  return Best;
}

std::unique_ptr<LayoutSolver> strider::layout::createBruteForceSolver() {
  return std::make_unique<BruteForceSolver>();
}
