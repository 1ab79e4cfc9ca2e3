//===- LayoutProblem.h - Labelling problem and its solvers ------*- C++ -*-===//
//
// Layout assignment as a discrete labelling problem: every variable (a node
// or value whose physical layout is to be chosen) takes one label out of a
// small set (today two: 0 = channels-first, 1 = channels-last), and the cost
// of a labelling is a sum of unary, pairwise and "not all equal" terms. The
// solvers behind LayoutSolver find a labelling of minimum total cost.
//
// Costs are integers (the cost model's unit, e.g. picoseconds) so that
// solvers and tests compare them exactly.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LAYOUT_LAYOUTPROBLEM_H
#define STRIDER_LAYOUT_LAYOUTPROBLEM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace strider {
namespace layout {

using Cost = int64_t;

/// A cost too large for any labelling to pay: labels with this unary cost
/// are forbidden. Solvers never add it up into overflow.
constexpr Cost InfiniteCost = INT64_C(1) << 60;
/// The largest finite cost a single term gets (10 s): estimates and
/// measurements saturate there, so that sums over any graph stay far below
/// InfiniteCost.
constexpr Cost MaxFiniteCost = INT64_C(10000000000000);

/// A binary-or-wider labelling problem. Variables are numbered densely from
/// 0 in creation order.
class LayoutProblem {
public:
  /// A pairwise term over (label of A, label of B): Table[a * NumLabels + b].
  struct Pairwise {
    unsigned A, B;
    std::vector<Cost> Table;
  };
  /// \p Weight is paid once if the labels of \p Vars are not all equal (the
  /// shared relayout of one value read by several consumers).
  struct Disagreement {
    std::vector<unsigned> Vars;
    Cost Weight;
  };

  explicit LayoutProblem(unsigned NumLabels = 2) : NumLabels(NumLabels) {}

  unsigned getNumLabels() const { return NumLabels; }
  unsigned getNumVariables() const { return Unary.size() / NumLabels; }

  /// Add a variable with unary costs \p Costs (one per label, each in
  /// [0, InfiniteCost]; InfiniteCost forbids a label; at least one label
  /// must be finite). Returns its index.
  unsigned addVariable(llvm::ArrayRef<Cost> Costs);
  /// Add \p Costs (same rules as addVariable) to the unary costs of \p Var;
  /// a label forbidden on either side stays forbidden.
  void addUnary(unsigned Var, llvm::ArrayRef<Cost> Costs);
  /// Forbid every label of \p Var but \p Label, which must not be forbidden.
  void fix(unsigned Var, unsigned Label);
  /// Add a pairwise term; \p Table has NumLabels^2 finite, non-negative
  /// entries, row-major over (label of A, label of B). A != B.
  void addPairwise(unsigned A, unsigned B, llvm::ArrayRef<Cost> Table);
  /// Add a "not all equal" term over two or more distinct variables;
  /// \p Weight >= 0.
  void addDisagreement(llvm::ArrayRef<unsigned> Vars, Cost Weight);

  Cost getUnary(unsigned Var, unsigned Label) const {
    return Unary[Var * NumLabels + Label];
  }
  llvm::ArrayRef<Pairwise> getPairwiseTerms() const { return PairTerms; }
  llvm::ArrayRef<Disagreement> getDisagreements() const { return Groups; }

  /// Total cost of \p Labels (one per variable); InfiniteCost if a forbidden
  /// label is used. The sum saturates: it never exceeds InfiniteCost.
  Cost evaluate(llvm::ArrayRef<uint8_t> Labels) const;

  /// The sum of every finite cost in the problem (allowed unary costs,
  /// pairwise entries, weights), saturated at InfiniteCost: an upper bound on
  /// the cost of any allowed labelling. Solvers that add costs up exactly
  /// reject problems where it reaches InfiniteCost.
  Cost getFiniteCostBound() const;

  /// Whether every pairwise term is submodular for two labels
  /// (T00 + T11 <= T01 + T10), the condition for an exact minimum cut. With
  /// more labels, whether every term is submodular over the label order
  /// (T[a][b] + T[a+1][b+1] <= T[a+1][b] + T[a][b+1] for all a, b).
  bool isSubmodular() const;

private:
  unsigned NumLabels;
  std::vector<Cost> Unary;
  std::vector<Pairwise> PairTerms;
  std::vector<Disagreement> Groups;
};

/// A labelling and its cost.
struct LayoutSolution {
  std::vector<uint8_t> Labels;
  Cost TotalCost = 0;
};

/// Finds a minimum-cost labelling. Implementations say which problems they
/// accept and fail with an error (not an assert) on others.
class LayoutSolver {
public:
  virtual ~LayoutSolver();
  virtual llvm::StringRef getName() const = 0;
  virtual llvm::Expected<LayoutSolution> solve(const LayoutProblem &P) = 0;
};

/// Exact solver for two labels with submodular pairwise terms: an s-t
/// minimum cut (label 0 = source side). Ties are broken towards label 0: the
/// result is the optimal labelling with the fewest label-1 variables (the
/// same one the brute-force solver picks). Fails on other problems and when
/// the finite costs add up to InfiniteCost or more.
std::unique_ptr<LayoutSolver> createMinCutSolver();
/// Enumerates every labelling (tests only; at most 24 variables,
/// NumLabels^N <= 2^24 and getFiniteCostBound() < InfiniteCost). Ties go to
/// the lexicographically smallest labelling.
std::unique_ptr<LayoutSolver> createBruteForceSolver();

} // namespace layout
} // namespace strider

#endif // STRIDER_LAYOUT_LAYOUTPROBLEM_H
