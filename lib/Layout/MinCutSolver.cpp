//===- MinCutSolver.cpp - Exact two-label solver by s-t minimum cut -------===//
//
// Reduces a two-label problem with submodular pairwise terms and "not all
// equal" groups to an s-t minimum cut (label 0 = source side) and solves it
// with Dinic's maximum-flow algorithm, without recursion.
//
//===----------------------------------------------------------------------===//

#include "strider/Layout/LayoutProblem.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>
#include <limits>

using namespace strider;
using namespace strider::layout;

namespace {

/// A flow network built once (arcs first, then finalize) and solved once.
/// Arcs are stored per tail node in compressed rows, each paired with its
/// reverse arc, so residual capacities live in one array.
class FlowNetwork {
public:
  explicit FlowNetwork(unsigned NumNodes) : NumNodes(NumNodes) {}

  /// Add an arc \p From -> \p To of finite capacity \p Capacity > 0.
  void addArc(unsigned From, unsigned To, Cost Capacity) {
    assert(Capacity > 0 && "zero-capacity arcs are never added");
    assert(FiniteTotal <= std::numeric_limits<Cost>::max() - Capacity &&
           "finite capacities overflow");
    FiniteTotal += Capacity;
    Arcs.push_back({From, To, Capacity});
  }
  /// Add an arc \p From -> \p To that no minimum cut may cross.
  void addInfiniteArc(unsigned From, unsigned To) {
    Arcs.push_back({From, To, /*Capacity=*/-1});
  }

  /// Fix the infinite capacity (1 + the sum of all finite ones, so a cut
  /// crossing an infinite arc always costs more than any cut that does not)
  /// and build the residual graph.
  void finalize();

  /// The capacity used for infinite arcs; valid after finalize().
  Cost getInfinity() const { return Infinity; }

  /// Push a maximum flow from \p Source to \p Sink (Dinic's algorithm) and
  /// return its value.
  Cost maxFlow(unsigned Source, unsigned Sink);

  /// After maxFlow: whether each node can still reach \p Sink in the residual
  /// graph. The nodes that cannot form the largest source side of a minimum
  /// cut.
  std::vector<bool> reachesSink(unsigned Sink) const;

  /// The capacity of the cut whose sink side is \p SinkSide.
  Cost cutCapacity(const std::vector<bool> &SinkSide) const;

private:
  struct ArcSpec {
    unsigned From, To;
    Cost Capacity; // -1 for an infinite arc until finalize().
  };

  bool buildLevels(unsigned Source, unsigned Sink);
  Cost blockingFlow(unsigned Source, unsigned Sink);
  unsigned tailOf(unsigned Arc) const { return Head[Reverse[Arc]]; }

  unsigned NumNodes;
  std::vector<ArcSpec> Arcs;
  Cost FiniteTotal = 0;
  Cost Infinity = 0;

  // Residual graph: the arcs leaving node N are RowStart[N] .. RowStart[N+1].
  std::vector<unsigned> RowStart;
  std::vector<unsigned> Head;
  std::vector<unsigned> Reverse;
  std::vector<Cost> Residual;

  // Scratch space of the flow phases.
  std::vector<int> Level;
  std::vector<unsigned> CurrentArc;
  std::vector<unsigned> Queue;
  std::vector<unsigned> Path;
};

} // namespace

void FlowNetwork::finalize() {
  assert(FiniteTotal < std::numeric_limits<Cost>::max() &&
         "no room for an infinite capacity");
  Infinity = FiniteTotal + 1;

  RowStart.assign(NumNodes + 1, 0);
  for (const ArcSpec &A : Arcs) {
    assert(A.From < NumNodes && A.To < NumNodes && "arc to unknown node");
    ++RowStart[A.From + 1];
    ++RowStart[A.To + 1];
  }
  for (unsigned N = 0; N != NumNodes; ++N)
    RowStart[N + 1] += RowStart[N];

  unsigned NumResidualArcs = RowStart[NumNodes];
  Head.resize(NumResidualArcs);
  Reverse.resize(NumResidualArcs);
  Residual.resize(NumResidualArcs);
  std::vector<unsigned> Fill(RowStart.begin(), RowStart.end() - 1);
  for (ArcSpec &A : Arcs) {
    if (A.Capacity < 0)
      A.Capacity = Infinity;
    unsigned Fwd = Fill[A.From]++;
    unsigned Bwd = Fill[A.To]++;
    Head[Fwd] = A.To;
    Head[Bwd] = A.From;
    Reverse[Fwd] = Bwd;
    Reverse[Bwd] = Fwd;
    Residual[Fwd] = A.Capacity;
    Residual[Bwd] = 0;
  }
}

bool FlowNetwork::buildLevels(unsigned Source, unsigned Sink) {
  Level.assign(NumNodes, -1);
  Queue.clear();
  Level[Source] = 0;
  Queue.push_back(Source);
  for (size_t QI = 0; QI != Queue.size(); ++QI) {
    unsigned U = Queue[QI];
    for (unsigned A = RowStart[U], E = RowStart[U + 1]; A != E; ++A) {
      unsigned V = Head[A];
      if (Residual[A] == 0 || Level[V] >= 0)
        continue;
      Level[V] = Level[U] + 1;
      // Nodes at the sink's distance or beyond lie on no shortest path.
      if (V == Sink)
        return true;
      Queue.push_back(V);
    }
  }
  return false;
}

Cost FlowNetwork::blockingFlow(unsigned Source, unsigned Sink) {
  CurrentArc.assign(RowStart.begin(), RowStart.end() - 1);
  Path.clear();
  Cost Pushed = 0;
  unsigned U = Source;
  while (true) {
    if (U == Sink) {
      // Augment along the path by its bottleneck, then resume the search
      // from the tail of the first arc it saturated.
      Cost Bottleneck = Residual[Path.front()];
      for (unsigned A : Path)
        Bottleneck = std::min(Bottleneck, Residual[A]);
      size_t FirstSaturated = Path.size();
      for (size_t I = 0, E = Path.size(); I != E; ++I) {
        unsigned A = Path[I];
        Residual[A] -= Bottleneck;
        Residual[Reverse[A]] += Bottleneck;
        if (Residual[A] == 0 && FirstSaturated == Path.size())
          FirstSaturated = I;
      }
      Pushed += Bottleneck;
      U = tailOf(Path[FirstSaturated]);
      Path.resize(FirstSaturated);
      continue;
    }

    // Advance along the current arc of U if it is admissible.
    unsigned &It = CurrentArc[U];
    unsigned End = RowStart[U + 1];
    while (It != End && (Residual[It] == 0 || Level[Head[It]] != Level[U] + 1))
      ++It;
    if (It != End) {
      Path.push_back(It);
      U = Head[It];
      continue;
    }

    // Dead end: retreat and skip the arc that led here.
    if (U == Source)
      return Pushed;
    Level[U] = -1;
    unsigned Back = Path.back();
    Path.pop_back();
    U = tailOf(Back);
    ++CurrentArc[U];
  }
}

Cost FlowNetwork::maxFlow(unsigned Source, unsigned Sink) {
  assert(Source != Sink && "source and sink must differ");
  Cost Flow = 0;
  while (buildLevels(Source, Sink)) {
    Cost Pushed = blockingFlow(Source, Sink);
    assert(Pushed > 0 && "a phase with a sink path pushes flow");
    Flow += Pushed;
    assert(Flow < Infinity && "a finite cut bounds the flow");
  }
  return Flow;
}

std::vector<bool> FlowNetwork::reachesSink(unsigned Sink) const {
  std::vector<bool> Reaches(NumNodes, false);
  std::vector<unsigned> Work{Sink};
  Reaches[Sink] = true;
  while (!Work.empty()) {
    unsigned V = Work.back();
    Work.pop_back();
    // U reaches V if the arc U -> V, the reverse of V -> U, has residual.
    for (unsigned A = RowStart[V], E = RowStart[V + 1]; A != E; ++A) {
      unsigned U = Head[A];
      if (Reaches[U] || Residual[Reverse[A]] == 0)
        continue;
      Reaches[U] = true;
      Work.push_back(U);
    }
  }
  return Reaches;
}

Cost FlowNetwork::cutCapacity(const std::vector<bool> &SinkSide) const {
  Cost Total = 0;
  for (const ArcSpec &A : Arcs)
    if (!SinkSide[A.From] && SinkSide[A.To])
      Total += A.Capacity;
  return Total;
}

namespace {

class MinCutSolver final : public LayoutSolver {
public:
  llvm::StringRef getName() const override { return "min-cut"; }
  llvm::Expected<LayoutSolution> solve(const LayoutProblem &P) override;
};

} // namespace

llvm::Expected<LayoutSolution> MinCutSolver::solve(const LayoutProblem &P) {
  if (P.getNumLabels() != 2)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "min-cut solver needs exactly 2 labels, problem has %u",
        P.getNumLabels());
  for (const LayoutProblem::Pairwise &T : P.getPairwiseTerms()) {
    Cost Same = T.Table[0] + T.Table[3], Mixed = T.Table[1] + T.Table[2];
    if (Same > Mixed)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "pairwise term between variables %u and %u is not submodular "
          "(T00 + T11 = %lld > T01 + T10 = %lld)",
          T.A, T.B, static_cast<long long>(Same),
          static_cast<long long>(Mixed));
  }
  if (P.getFiniteCostBound() >= InfiniteCost)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "finite layout costs add up to InfiniteCost (2^60) or more");

  // Node numbering: variables, then two auxiliary nodes per group of three
  // or more, then the source and the sink.
  unsigned NumVars = P.getNumVariables();
  unsigned NumAux = 0;
  for (const LayoutProblem::Disagreement &G : P.getDisagreements())
    if (G.Vars.size() >= 3 && G.Weight > 0)
      NumAux += 2;
  unsigned Source = NumVars + NumAux, Sink = Source + 1;
  FlowNetwork Net(Sink + 1);

  // Every labelling costs Offset + (capacity of its cut). A cut pays the
  // arcs from the source side (label 0) to the sink side (label 1). The
  // finite cost bound keeps all of these sums below 2^62.
  Cost Offset = 0;
  // Per variable: the extra finite cost of label 1 over label 0.
  std::vector<Cost> Delta(NumVars, 0);
  enum class Forced : uint8_t { None, Label0, Label1 };
  std::vector<Forced> Force(NumVars, Forced::None);
  for (unsigned V = 0; V != NumVars; ++V) {
    Cost C0 = P.getUnary(V, 0), C1 = P.getUnary(V, 1);
    if (C0 == InfiniteCost) {
      Force[V] = Forced::Label1;
      Offset += C1;
    } else if (C1 == InfiniteCost) {
      Force[V] = Forced::Label0;
      Offset += C0;
    } else {
      Offset += C0;
      Delta[V] += C1 - C0;
    }
  }

  // T(a, b) = T00 + (T10 - T00) a + (T11 - T10) b
  //         + (T01 + T10 - T00 - T11) (1 - a) b.
  for (const LayoutProblem::Pairwise &T : P.getPairwiseTerms()) {
    Cost T00 = T.Table[0], T01 = T.Table[1], T10 = T.Table[2], T11 = T.Table[3];
    Offset += T00;
    Delta[T.A] += T10 - T00;
    Delta[T.B] += T11 - T10;
    Cost Coupling = T01 + T10 - T00 - T11;
    if (Coupling > 0)
      Net.addArc(T.A, T.B, Coupling);
  }

  unsigned NextAux = NumVars;
  for (const LayoutProblem::Disagreement &G : P.getDisagreements()) {
    if (G.Weight == 0)
      continue;
    if (G.Vars.size() == 2) {
      Net.addArc(G.Vars[0], G.Vars[1], G.Weight);
      Net.addArc(G.Vars[1], G.Vars[0], G.Weight);
      continue;
    }
    // E1 must join the source side if any member is there, E2 the sink
    // side if any member is there; E1 -> E2 is cut exactly when both hold.
    unsigned E1 = NextAux++, E2 = NextAux++;
    Net.addArc(E1, E2, G.Weight);
    for (unsigned V : G.Vars) {
      Net.addInfiniteArc(V, E1);
      Net.addInfiniteArc(E2, V);
    }
  }

  for (unsigned V = 0; V != NumVars; ++V) {
    switch (Force[V]) {
    case Forced::Label0:
      // Label 0 pays nothing of Delta.
      Net.addInfiniteArc(Source, V);
      break;
    case Forced::Label1:
      Offset += Delta[V];
      Net.addInfiniteArc(V, Sink);
      break;
    case Forced::None:
      if (Delta[V] > 0) {
        Net.addArc(Source, V, Delta[V]);
      } else if (Delta[V] < 0) {
        Offset += Delta[V];
        Net.addArc(V, Sink, -Delta[V]);
      }
      break;
    }
  }

  Net.finalize();
  Cost Flow = Net.maxFlow(Source, Sink);
  // The largest source side: ties go to label 0.
  std::vector<bool> SinkSide = Net.reachesSink(Sink);
  Cost Cut = Net.cutCapacity(SinkSide);
  (void)Flow;
  (void)Cut;
  assert(Cut == Flow && "max-flow min-cut theorem violated");
  assert(Cut < Net.getInfinity() && "minimum cut crosses an infinite arc");

  LayoutSolution Solution;
  Solution.Labels.resize(NumVars);
  for (unsigned V = 0; V != NumVars; ++V)
    Solution.Labels[V] = SinkSide[V] ? 1 : 0;
  Solution.TotalCost = P.evaluate(Solution.Labels);
  assert(Solution.TotalCost == Offset + Cut &&
         "labelling cost differs from the minimum cut");
  return Solution;
}

std::unique_ptr<LayoutSolver> strider::layout::createMinCutSolver() {
  return std::make_unique<MinCutSolver>();
}
