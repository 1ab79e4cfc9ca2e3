//===- layout-solver-bench.cpp - Min-cut layout solver timings ------------===//
//
// Times the min-cut layout solver on random problems shaped like CNN graphs
// (chains of convolutions with residual skips, branches and concatenations)
// of 1k, 10k and 100k variables, and prints the median per size.
//
//===----------------------------------------------------------------------===//

#include "strider/Layout/LayoutProblem.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <random>

using namespace strider::layout;

namespace {

/// Builds a random CNN-like problem: every variable is the output of one op,
/// label 0 is channels-first, label 1 channels-last.
class CnnProblemBuilder {
public:
  explicit CnnProblemBuilder(uint32_t Seed) : Rng(Seed) {}

  /// Grow a network until it has about \p NumVars variables.
  LayoutProblem build(unsigned NumVars) {
    // The model's input and output keep the ONNX layout.
    unsigned Current = P.addVariable({0, 0});
    P.fix(Current, 0);
    while (P.getNumVariables() + 12 < NumVars) {
      switch (uniform(0, 5)) {
      case 0:
      case 1:
      case 2:
        Current = residualBlock(Current);
        break;
      case 3:
        Current = branchAndConcat(Current);
        break;
      default:
        Current = chain(Current, uniform(1, 4));
        break;
      }
    }
    while (P.getNumVariables() + 1 < NumVars)
      Current = chain(Current, 1);
    unsigned Output = P.addVariable({0, 0});
    P.fix(Output, 0);
    connect(Current, {Output});
    return std::move(P);
  }

private:
  int uniform(int Lo, int Hi) {
    return std::uniform_int_distribution<int>(Lo, Hi)(Rng);
  }

  /// A convolution: usually cheaper channels-last, sometimes not.
  unsigned conv() {
    Cost First = uniform(60, 400);
    Cost Last = First * uniform(40, 120) / 100;
    return P.addVariable({First, Last});
  }
  /// An elementwise op or pooling: the same cost in both layouts.
  unsigned elementwise() {
    Cost C = uniform(5, 30);
    return P.addVariable({C, C});
  }

  /// Make \p Producer's value feed \p Consumers: one relayout per edge for a
  /// single consumer, one shared relayout for several.
  void connect(unsigned Producer, std::initializer_list<unsigned> Consumers) {
    Cost Relayout = uniform(20, 150);
    if (Consumers.size() == 1) {
      P.addPairwise(Producer, *Consumers.begin(), {0, Relayout, Relayout, 0});
      return;
    }
    std::vector<unsigned> Group{Producer};
    Group.insert(Group.end(), Consumers.begin(), Consumers.end());
    P.addDisagreement(Group, Relayout);
  }

  unsigned chain(unsigned Input, int Length) {
    for (int I = 0; I != Length; ++I) {
      unsigned Next = uniform(0, 2) == 0 ? elementwise() : conv();
      connect(Input, {Next});
      Input = Next;
    }
    return Input;
  }

  /// conv -> conv -> add, with a skip from the input to the add.
  unsigned residualBlock(unsigned Input) {
    unsigned A = conv(), B = conv(), Add = elementwise();
    connect(Input, {A, Add});
    connect(A, {B});
    connect(B, {Add});
    return Add;
  }

  /// Three branches of one to three convolutions joined by a concat, which
  /// needs all its inputs in its own layout.
  unsigned branchAndConcat(unsigned Input) {
    unsigned Heads[3], Tails[3];
    for (int I = 0; I != 3; ++I) {
      Heads[I] = Tails[I] = conv();
      Tails[I] = chain(Tails[I], uniform(0, 2));
    }
    connect(Input, {Heads[0], Heads[1], Heads[2]});
    unsigned Concat = elementwise();
    P.addDisagreement({Tails[0], Tails[1], Tails[2], Concat}, uniform(40, 200));
    return Concat;
  }

  std::mt19937 Rng;
  LayoutProblem P;
};

} // namespace

int main() {
  struct Size {
    unsigned NumVars;
    int Repetitions;
  };
  const Size Sizes[] = {{1000, 21}, {10000, 11}, {100000, 5}};
  std::unique_ptr<LayoutSolver> Solver = createMinCutSolver();

  llvm::outs() << "min-cut layout solver on CNN-shaped problems "
                  "(median wall time)\n";
  llvm::outs() << " variables    pairs   groups           cost    median-ms\n";
  for (const Size &S : Sizes) {
    LayoutProblem P = CnnProblemBuilder(/*Seed=*/S.NumVars).build(S.NumVars);
    std::vector<double> Millis;
    Cost TotalCost = 0;
    for (int R = 0; R != S.Repetitions; ++R) {
      auto Start = std::chrono::steady_clock::now();
      llvm::Expected<LayoutSolution> Solution = Solver->solve(P);
      auto End = std::chrono::steady_clock::now();
      if (!Solution) {
        llvm::errs() << "strider-bench-solver: " << S.NumVars
                     << " variables: " << llvm::toString(Solution.takeError())
                     << "\n";
        return 1;
      }
      TotalCost = Solution->TotalCost;
      Millis.push_back(
          std::chrono::duration<double, std::milli>(End - Start).count());
    }
    std::sort(Millis.begin(), Millis.end());
    llvm::outs() << llvm::format(
        "%10u %8zu %8zu %14lld %12.2f\n", P.getNumVariables(),
        P.getPairwiseTerms().size(), P.getDisagreements().size(),
        static_cast<long long>(TotalCost), Millis[Millis.size() / 2]);
  }
  return 0;
}
