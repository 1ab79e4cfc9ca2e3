//===- LayoutSolverTest.cpp - Layout labelling problem and solvers --------===//
//
// Small problems with known answers, the min-cut solver against the
// brute-force one on random problems, and a large problem for sanity.
//
//===----------------------------------------------------------------------===//

#include "strider/Layout/LayoutProblem.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>

using namespace strider::layout;

namespace {

/// A relayout between two tensors: pay \p C when the labels differ.
std::vector<Cost> potts(Cost C) { return {0, C, C, 0}; }

/// Solve \p P with \p S, reporting a failure (and returning an empty
/// solution) if the solver fails.
LayoutSolution solveOk(LayoutSolver &S, const LayoutProblem &P,
                       const std::string &Context = "") {
  llvm::Expected<LayoutSolution> Result = S.solve(P);
  if (!Result) {
    ADD_FAILURE() << Context << S.getName().str()
                  << " failed: " << llvm::toString(Result.takeError());
    return {};
  }
  return std::move(*Result);
}

/// The message of the error \p S reports on \p P, or "" if it solves it.
std::string solveError(LayoutSolver &S, const LayoutProblem &P) {
  llvm::Expected<LayoutSolution> Result = S.solve(P);
  if (Result)
    return "";
  return llvm::toString(Result.takeError());
}

std::vector<uint8_t> labels(std::initializer_list<uint8_t> L) { return L; }

//===----------------------------------------------------------------------===//
// LayoutProblem
//===----------------------------------------------------------------------===//

TEST(LayoutProblemTest, EvaluateSumsEveryTerm) {
  LayoutProblem P;
  unsigned A = P.addVariable({1, 2});
  unsigned B = P.addVariable({4, 8});
  unsigned C = P.addVariable({16, 32});
  P.addUnary(C, {64, 0});
  P.addPairwise(A, B, {100, 200, 300, 400});
  P.addDisagreement({A, B, C}, 1000);
  EXPECT_EQ(P.getNumVariables(), 3u);
  EXPECT_EQ(P.getUnary(C, 0), 80);
  EXPECT_EQ(P.evaluate(labels({0, 0, 0})), 1 + 4 + 80 + 100);
  EXPECT_EQ(P.evaluate(labels({0, 1, 1})), 1 + 8 + 32 + 200 + 1000);
  EXPECT_EQ(P.evaluate(labels({1, 1, 1})), 2 + 8 + 32 + 400);
  EXPECT_EQ(P.getFiniteCostBound(), 1 + 2 + 4 + 8 + 80 + 32 + 1000 + 1000);
}

TEST(LayoutProblemTest, ForbiddenLabelSaturates) {
  LayoutProblem P;
  unsigned A = P.addVariable({5, InfiniteCost});
  unsigned B = P.addVariable({7, 3});
  P.fix(B, 0);
  P.addPairwise(A, B, potts(10));
  EXPECT_EQ(P.evaluate(labels({0, 0})), 12);
  EXPECT_EQ(P.evaluate(labels({1, 0})), InfiniteCost);
  EXPECT_EQ(P.evaluate(labels({0, 1})), InfiniteCost);
  EXPECT_EQ(P.evaluate(labels({1, 1})), InfiniteCost);
  P.addUnary(A, {1, 1});
  EXPECT_EQ(P.getUnary(A, 1), InfiniteCost);
  EXPECT_EQ(P.getFiniteCostBound(), 6 + 7 + 20);
}

TEST(LayoutProblemTest, Submodularity) {
  LayoutProblem P;
  P.addVariable({0, 0});
  P.addVariable({0, 0});
  P.addPairwise(0, 1, {1, 2, 3, 4}); // 1 + 4 <= 2 + 3
  EXPECT_TRUE(P.isSubmodular());
  P.addPairwise(1, 0, {3, 0, 0, 1}); // 3 + 1 > 0 + 0
  EXPECT_FALSE(P.isSubmodular());

  LayoutProblem Three(3);
  Three.addVariable({0, 0, 0});
  Three.addVariable({0, 0, 0});
  // |a - b| is submodular over the label order; Potts is not.
  Three.addPairwise(0, 1, {0, 1, 2, 1, 0, 1, 2, 1, 0});
  EXPECT_TRUE(Three.isSubmodular());
  Three.addPairwise(0, 1, {0, 1, 1, 1, 0, 1, 1, 1, 0});
  EXPECT_FALSE(Three.isSubmodular());
}

//===----------------------------------------------------------------------===//
// Small cases with known answers, for both solvers
//===----------------------------------------------------------------------===//

class SolverCaseTest : public testing::TestWithParam<bool> {
protected:
  std::unique_ptr<LayoutSolver> makeSolver() const {
    return GetParam() ? createMinCutSolver() : createBruteForceSolver();
  }
};

TEST_P(SolverCaseTest, EmptyProblem) {
  LayoutProblem P;
  LayoutSolution S = solveOk(*makeSolver(), P);
  EXPECT_TRUE(S.Labels.empty());
  EXPECT_EQ(S.TotalCost, 0);
}

/// An input fixed to channels-first feeds a chain of convolutions that each
/// save 5 in channels-last; a relayout costs 8 once, or 30.
TEST_P(SolverCaseTest, ChainPrefersOneLabel) {
  for (Cost Relayout : {8, 30}) {
    LayoutProblem P;
    unsigned Input = P.addVariable({0, 0});
    P.fix(Input, 0);
    unsigned Prev = Input;
    for (int I = 0; I != 4; ++I) {
      unsigned Conv = P.addVariable({5, 0});
      P.addPairwise(Prev, Conv, potts(Relayout));
      Prev = Conv;
    }
    LayoutSolution S = solveOk(*makeSolver(), P);
    if (Relayout == 8) {
      EXPECT_EQ(S.Labels, labels({0, 1, 1, 1, 1}));
      EXPECT_EQ(S.TotalCost, 8);
    } else {
      EXPECT_EQ(S.Labels, labels({0, 0, 0, 0, 0}));
      EXPECT_EQ(S.TotalCost, 20);
    }
  }
}

/// A forbidden label wins over any unary preference.
TEST_P(SolverCaseTest, ForcedLabel) {
  LayoutProblem P;
  unsigned A = P.addVariable({0, 100});
  unsigned B = P.addVariable({InfiniteCost, 7});
  unsigned C = P.addVariable({50, 0});
  P.fix(A, 1);
  P.fix(C, 0);
  P.addPairwise(A, B, potts(3));
  P.addPairwise(B, C, potts(4));
  LayoutSolution S = solveOk(*makeSolver(), P);
  EXPECT_EQ(S.Labels, labels({1, 1, 0}));
  EXPECT_EQ(S.TotalCost, 100 + 7 + 50 + 4);
}

/// One value read by four consumers that each save 3 in label 1: a shared
/// relayout (paid once, 5) pays off, a relayout per consumer (4 x 5) does
/// not.
TEST_P(SolverCaseTest, SharedRelayoutGroup) {
  for (bool Shared : {true, false}) {
    LayoutProblem P;
    unsigned Producer = P.addVariable({0, 0});
    P.fix(Producer, 0);
    std::vector<unsigned> Group{Producer};
    for (int I = 0; I != 4; ++I) {
      unsigned Consumer = P.addVariable({3, 0});
      Group.push_back(Consumer);
      if (!Shared)
        P.addPairwise(Producer, Consumer, potts(5));
    }
    if (Shared)
      P.addDisagreement(Group, 5);
    LayoutSolution S = solveOk(*makeSolver(), P);
    if (Shared) {
      EXPECT_EQ(S.Labels, labels({0, 1, 1, 1, 1}));
      EXPECT_EQ(S.TotalCost, 5);
    } else {
      EXPECT_EQ(S.Labels, labels({0, 0, 0, 0, 0}));
      EXPECT_EQ(S.TotalCost, 12);
    }
  }
}

/// A two-member group is a relayout paid in either direction.
TEST_P(SolverCaseTest, PairGroup) {
  LayoutProblem P;
  unsigned A = P.addVariable({0, 10});
  unsigned B = P.addVariable({10, 0});
  P.addDisagreement({A, B}, 4);
  LayoutSolution S = solveOk(*makeSolver(), P);
  EXPECT_EQ(S.Labels, labels({0, 1}));
  EXPECT_EQ(S.TotalCost, 4);
}

/// Equal costs: label 0 wins.
TEST_P(SolverCaseTest, TiesGoToLabelZero) {
  LayoutProblem P;
  unsigned A = P.addVariable({3, 3});
  unsigned B = P.addVariable({0, 6});
  unsigned C = P.addVariable({6, 0});
  P.addPairwise(A, B, potts(2));
  P.addPairwise(A, C, potts(2));
  LayoutSolution S = solveOk(*makeSolver(), P);
  EXPECT_EQ(S.Labels, labels({0, 0, 1}));
  EXPECT_EQ(S.TotalCost, 3 + 0 + 0 + 2);
}

TEST_P(SolverCaseTest, TooLargeCostsRejected) {
  LayoutProblem P;
  for (int I = 0; I != 4; ++I)
    P.addVariable({InfiniteCost / 3, 0});
  EXPECT_NE(solveError(*makeSolver(), P).find("add up to InfiniteCost"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Solvers, SolverCaseTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool> &Info) {
                           return Info.param ? "MinCut" : "BruteForce";
                         });

TEST(MinCutSolverTest, NonSubmodularRejected) {
  LayoutProblem P;
  unsigned A = P.addVariable({0, 0});
  unsigned B = P.addVariable({0, 0});
  P.addPairwise(A, B, {5, 0, 0, 5});
  EXPECT_EQ(solveError(*createMinCutSolver(), P),
            "pairwise term between variables 0 and 1 is not submodular "
            "(T00 + T11 = 10 > T01 + T10 = 0)");
  LayoutSolution S = solveOk(*createBruteForceSolver(), P);
  EXPECT_EQ(S.Labels, labels({0, 1}));
  EXPECT_EQ(S.TotalCost, 0);
}

TEST(MinCutSolverTest, ThreeLabelsRejected) {
  LayoutProblem P(3);
  unsigned A = P.addVariable({4, 2, 9});
  unsigned B = P.addVariable({2, 5, 0});
  P.addPairwise(A, B, {0, 3, 3, 3, 0, 3, 3, 3, 0});
  EXPECT_EQ(solveError(*createMinCutSolver(), P),
            "min-cut solver needs exactly 2 labels, problem has 3");
  LayoutSolution S = solveOk(*createBruteForceSolver(), P);
  EXPECT_EQ(S.Labels, labels({1, 2}));
  EXPECT_EQ(S.TotalCost, 2 + 0 + 3);
}

TEST(BruteForceSolverTest, TooManyVariablesRejected) {
  LayoutProblem P;
  for (int I = 0; I != 25; ++I)
    P.addVariable({0, 0});
  EXPECT_NE(solveError(*createBruteForceSolver(), P), "");
  LayoutProblem Wide(5);
  for (int I = 0; I != 11; ++I) // 5^11 > 2^24
    Wide.addVariable({0, 0, 0, 0, 0});
  EXPECT_NE(solveError(*createBruteForceSolver(), Wide), "");
}

//===----------------------------------------------------------------------===//
// Min cut against brute force on random problems
//===----------------------------------------------------------------------===//

/// A random two-label problem of 1 to 16 variables with submodular pairwise
/// terms and "not all equal" groups of 2 to 6 variables.
LayoutProblem makeRandomProblem(std::mt19937 &Rng) {
  auto Uniform = [&](int Lo, int Hi) {
    return std::uniform_int_distribution<int>(Lo, Hi)(Rng);
  };
  LayoutProblem P;
  unsigned NumVars = Uniform(1, 16);
  for (unsigned V = 0; V != NumVars; ++V) {
    Cost C0 = Uniform(0, 20), C1 = Uniform(0, 20);
    switch (Uniform(0, 7)) {
    case 0:
      C0 = InfiniteCost;
      break;
    case 1:
      C1 = InfiniteCost;
      break;
    default:
      break;
    }
    P.addVariable({C0, C1});
  }
  if (NumVars < 2)
    return P;

  unsigned NumPairs = Uniform(0, 2 * NumVars);
  for (unsigned I = 0; I != NumPairs; ++I) {
    unsigned A = Uniform(0, NumVars - 1);
    unsigned B = Uniform(0, NumVars - 2);
    B += B >= A; // Any variable but A.
    std::vector<Cost> T(4);
    for (Cost &C : T)
      C = Uniform(0, 15);
    // Raise T01 and T10 until T00 + T11 <= T01 + T10.
    Cost Excess = T[0] + T[3] - T[1] - T[2];
    if (Excess > 0) {
      Cost ToT01 = Uniform(0, Excess);
      T[1] += ToT01;
      T[2] += Excess - ToT01;
    }
    P.addPairwise(A, B, T);
  }

  std::vector<unsigned> Order(NumVars);
  std::iota(Order.begin(), Order.end(), 0);
  unsigned NumGroups = Uniform(0, 3);
  for (unsigned I = 0; I != NumGroups; ++I) {
    unsigned Size = Uniform(2, std::min(6u, NumVars));
    std::shuffle(Order.begin(), Order.end(), Rng);
    P.addDisagreement(llvm::makeArrayRef(Order).take_front(Size),
                      Uniform(0, 25));
  }
  return P;
}

TEST(MinCutSolverTest, MatchesBruteForceOnRandomProblems) {
  std::unique_ptr<LayoutSolver> MinCut = createMinCutSolver();
  std::unique_ptr<LayoutSolver> BruteForce = createBruteForceSolver();
  constexpr unsigned NumProblems = 1200;
  for (unsigned Seed = 1; Seed <= NumProblems; ++Seed) {
    std::mt19937 Rng(Seed);
    LayoutProblem P = makeRandomProblem(Rng);
    std::string Context = "seed " + std::to_string(Seed) + ": ";
    LayoutSolution Cut = solveOk(*MinCut, P, Context);
    LayoutSolution Ref = solveOk(*BruteForce, P, Context);
    ASSERT_EQ(Cut.Labels.size(), P.getNumVariables()) << Context;
    ASSERT_EQ(Cut.TotalCost, Ref.TotalCost) << Context;
    ASSERT_EQ(Cut.TotalCost, P.evaluate(Cut.Labels)) << Context;
    ASSERT_EQ(Ref.TotalCost, P.evaluate(Ref.Labels)) << Context;
    ASSERT_LT(Cut.TotalCost, InfiniteCost) << Context;
    // Both break ties towards label 0, which picks the same labelling.
    ASSERT_EQ(Cut.Labels, Ref.Labels) << Context;
  }
}

//===----------------------------------------------------------------------===//
// A large problem
//===----------------------------------------------------------------------===//

/// Layers of \p Width variables, each variable tied to two in the layer
/// before, with groups across layers; the first layer is fixed to label 0.
LayoutProblem makeLayeredProblem(unsigned NumVars, unsigned Width,
                                 std::mt19937 &Rng) {
  auto Uniform = [&](int Lo, int Hi) {
    return std::uniform_int_distribution<int>(Lo, Hi)(Rng);
  };
  LayoutProblem P;
  for (unsigned V = 0; V != NumVars; ++V) {
    P.addVariable({Uniform(0, 50), Uniform(0, 50)});
    if (V < Width) {
      P.fix(V, 0);
      continue;
    }
    unsigned Layer = V / Width;
    for (int I = 0; I != 2; ++I) {
      unsigned From = (Layer - 1) * Width + Uniform(0, Width - 1);
      P.addPairwise(From, V, potts(Uniform(0, 40)));
    }
    if (Uniform(0, 9) == 0 && Layer >= 2) {
      unsigned Far = (Layer - 2) * Width + Uniform(0, Width - 1);
      unsigned Near = (Layer - 1) * Width + Uniform(0, Width - 1);
      P.addDisagreement({Far, Near, V}, Uniform(0, 60));
    }
  }
  return P;
}

TEST(MinCutSolverTest, LargeLayeredProblem) {
  std::mt19937 Rng(2024);
  LayoutProblem P = makeLayeredProblem(10000, 16, Rng);
  LayoutSolution S = solveOk(*createMinCutSolver(), P);
  ASSERT_EQ(S.Labels.size(), 10000u);
  EXPECT_EQ(S.TotalCost, P.evaluate(S.Labels));
  EXPECT_LE(S.TotalCost, P.evaluate(std::vector<uint8_t>(10000, 0)));
  EXPECT_LE(S.TotalCost, P.evaluate(std::vector<uint8_t>(10000, 1)));
  // Not a degenerate answer: both labels are used.
  EXPECT_NE(std::count(S.Labels.begin(), S.Labels.end(), 1), 0);
  EXPECT_NE(std::count(S.Labels.begin(), S.Labels.end(), 0), 0);
}

} // namespace
