//===- Assigner.h - Layout assignment's internal state ----------*- C++ -*-===//
//
// Private to lib/Layout: the object that builds the labelling problem of a
// graph (LayoutAssignment.cpp), materializes the solution (Materialize.cpp)
// and explains it (Explain.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_LAYOUT_ASSIGNER_H
#define STRIDER_LIB_LAYOUT_ASSIGNER_H

#include "strider/IR/Graph.h"
#include "strider/Layout/LayoutAssignment.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace strider {
namespace layout {
namespace detail {

inline bool isActivationRank(const TensorType &T) {
  return T.hasRank() && T.getRank() >= 3 && T.getRank() <= 5;
}

/// Whether \p V takes part in layout assignment: a rank-3..5 tensor that is
/// not a compile-time constant (constants are laid out for free).
inline bool isRelevant(const Value *V) {
  if (!V || !isActivationRank(V->getType()))
    return false;
  const Node *Def = V->getDefiningNode();
  return !(Def && Def->getOpId() == OpId::Constant);
}

inline std::string formatUs(Cost Ps) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << llvm::format("%.3f us", double(Ps) / 1e6);
  return OS.str();
}

inline std::string nodeLabel(const Node &N) {
  std::string Name = N.getLoc().Name;
  if (Name.empty() && N.getNumResults() && N.getResult(0))
    Name = N.getResult(0)->getName();
  return "'" + Name + "' (" + N.getOpType().str() + ")";
}

class Assigner {
public:
  Assigner(Graph &G, const LayoutOptions &Opts)
      : G(G), Opts(Opts),
        Target(Opts.Tuning ? Opts.Tuning->calibrateTarget(*Opts.Target)
                           : *Opts.Target),
        Model(Target, this->Opts.Dims, Opts.Tuning.get()) {}

  llvm::Expected<LayoutReport> run();

private:
  // Problem construction.
  /// Make the two variables fixed to a label (first thing in the problem).
  void addFixedVars();
  /// The variable fixed to label \p L.
  unsigned getFixedVar(LayoutLabel L) const {
    assert(FixedVars[L] >= 0 && "fixed variables are made first");
    return FixedVars[L];
  }
  unsigned newVar(Cost C0, Cost C1);
  /// Apply --io-layout to OutputLayouts (after buildVariables).
  void collectOutputs();
  /// Whether graph output \p V is an activation that --io-layout applies to.
  bool isActivationOutput(const Value *V) const;
  void dropRelayouts();
  llvm::Error buildVariables();
  void buildValueTerms();
  /// Terms of a value whose channels-last label stands for a derived layout.
  void addDerivedValueTerms(Value *V);
  /// Add a pairwise term, bounding it from above if it is not submodular.
  void addBoundedPairwise(unsigned A, unsigned B, Cost (&T)[2][2]);
  void buildViewTerms();
  void buildMixedConvTerms();
  /// Terms that keep a TakesRescale producer and the elementwise chain its
  /// epilogue computes in one layout.
  void buildRescaleTerms();
  void applyMode();
  /// Fix the variables LayoutOptions::Keep names (after applyMode).
  void applyKept();
  /// Fill Report.NodeLabels from the solution.
  void recordLabels();
  /// The name a node's labels are kept under: its first result's.
  static llvm::StringRef getLabelKey(const Node &N) {
    return N.getNumResults() && N.getResult(0)
               ? llvm::StringRef(N.getResult(0)->getName())
               : llvm::StringRef();
  }
  /// The operands \p N reads in its layout, and the results it writes in it.
  void getBoundValues(const Node &N, llvm::SmallVectorImpl<unsigned> &Operands,
                      llvm::SmallVectorImpl<unsigned> &Results) const;
  /// Whether graph input \p V is an activation: a rank-3..5 input that some
  /// node reads in its layout or that is a graph output (not only weights
  /// or shapes).
  bool isActivationInput(const Value *V) const {
    if (!isRelevant(V))
      return false;
    if (G.isGraphOutput(V))
      return true;
    return llvm::any_of(V->getUses(), [&](const Use &U) {
      return getConsumerVar(*U.User, U.OperandIndex) >= 0;
    });
  }
  /// Whether rank-3 \p V keeps its batch dim outermost in both of its
  /// layouts, so that a GEMM reads either as a batch of (transposed)
  /// matrices.
  bool isMatrixBatchLayout(const Value *V) const;
  /// Variable whose label is the layout \p V is written in.
  unsigned getProducerVar(const Value *V) const;
  /// Variable whose label is the layout \p N reads operand \p I in, or -1
  /// if \p N reads it as it is.
  int getConsumerVar(const Node &N, unsigned I) const;

  // Materialization.
  void materialize();
  /// Why each value got its layout, keyed by value name.
  void explain();
  /// Cost change of flipping variable \p Var alone.
  Cost getFlipDelta(unsigned Var) const;
  Layout getVarLayout(unsigned Var, unsigned Rank) const {
    return getLabelLayout(LayoutLabel(Labels[Var]), Rank);
  }
  /// The layout value \p V is written in under label \p L.
  Layout getValueLayout(const Value *V, unsigned L) const {
    if (L == ChannelsLast) {
      auto It = DerivedLayouts.find(V);
      if (It != DerivedLayouts.end())
        return It->second;
    }
    return getLabelLayout(LayoutLabel(L), V->getType().getRank());
  }
  /// For the result of a view op (Reshape, Flatten, Transpose...), label
  /// channels-last stands for the layout that keeps the view a bitcast of
  /// its operand's channels-last bytes rather than for the rank's own
  /// channels-last: a channel shuffle's reshape-transpose-reshape then
  /// copies once, and an attention block's transposes become views.
  void deriveViewChainLayouts();
  /// \p V in layout \p L for \p Consumer (null: a graph output), through
  /// a relayout (or a constant laid out anew) made once per value and
  /// layout and placed before the first consumer that needs it.
  Value *getInLayout(Value *V, const Layout &L, Node *Consumer);
  void permuteFlattenWeights(Node *View);
  void fillReport(LayoutReport &R);

  Graph &G;
  LayoutOptions Opts;
  /// The target, calibrated from the tuning table if there is one.
  TargetDescription Target;
  CostModel Model;
  LayoutProblem Problem;
  std::vector<uint8_t> Labels;

  std::vector<bool> VarFixed;
  int FixedVars[2] = {-1, -1};
  llvm::DenseMap<const Node *, unsigned> NodeVar;
  /// Convs with a mixed-layout kernel (reading one layout, writing the
  /// other): the variable of the layout they read their input in.
  llvm::DenseMap<const Node *, unsigned> InputVar;
  /// The four kernels of each such conv (InfiniteCost: not offered).
  struct MixedKernelCosts {
    Cost First, ReadFirstWriteLast, ReadLastWriteFirst, Last;
  };
  llvm::DenseMap<const Node *, MixedKernelCosts> MixedKernels;
  llvm::DenseMap<const Value *, unsigned> InputValueVar;
  /// Values whose channels-last label means another layout (see
  /// deriveViewChainLayouts).
  llvm::DenseMap<const Value *, Layout> DerivedLayouts;
  /// Layout each graph output must have (by output slot).
  std::vector<Layout> OutputLayouts;

  /// Relayouts made during materialization, keyed by (value, layout name).
  std::map<std::pair<Value *, std::string>, Value *> Relayouts;
  std::map<std::string, std::string> Reasons;
  /// Weight constants that permuteFlattenWeights replaced (erased once
  /// materialization has walked the graph).
  std::vector<Node *> ReplacedWeights;
  /// Terms touching each variable (indices into the problem's lists).
  std::vector<std::vector<unsigned>> VarPairs, VarGroups;
  LayoutReport Report;
};

} // namespace detail
} // namespace layout
} // namespace strider

#endif // STRIDER_LIB_LAYOUT_ASSIGNER_H
