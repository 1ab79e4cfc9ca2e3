//===- Explain.cpp - Why each value got its layout ------------------------===//
//
// Reasons for the report: which op decided a value's layout and by how much
// its kernel differs, what flipping the decision alone would cost, or what
// fixed it; then the report's lists and totals.
//
//===----------------------------------------------------------------------===//

#include "Assigner.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/TensorData.h"

#include "llvm/ADT/STLExtras.h"

#include <map>

using namespace strider;
using namespace strider::layout;
using namespace strider::layout::detail;

Cost Assigner::getFlipDelta(unsigned Var) const {
  auto Sat = [](Cost A, Cost B) { return std::min(InfiniteCost, A + B); };
  unsigned Old = Labels[Var], New = 1 - Old;
  if (Problem.getUnary(Var, New) >= InfiniteCost)
    return InfiniteCost;
  Cost Before = Problem.getUnary(Var, Old), After = Problem.getUnary(Var, New);
  for (unsigned T : VarPairs[Var]) {
    const auto &P = Problem.getPairwiseTerms()[T];
    unsigned A = Labels[P.A], B = Labels[P.B];
    Before = Sat(Before, P.Table[A * 2 + B]);
    if (P.A == Var)
      A = New;
    else
      B = New;
    After = Sat(After, P.Table[A * 2 + B]);
  }
  for (unsigned T : VarGroups[Var]) {
    const auto &D = Problem.getDisagreements()[T];
    auto Split = [&](unsigned Flipped) {
      for (unsigned V : D.Vars)
        if ((V == Var ? Flipped : Labels[V]) !=
            (D.Vars[0] == Var ? Flipped : Labels[D.Vars[0]]))
          return true;
      return false;
    };
    if (Split(Old))
      Before = Sat(Before, D.Weight);
    if (Split(New))
      After = Sat(After, D.Weight);
  }
  return After - Before;
}

void Assigner::explain() {
  VarPairs.assign(Problem.getNumVariables(), {});
  VarGroups.assign(Problem.getNumVariables(), {});
  for (unsigned I = 0; I < Problem.getPairwiseTerms().size(); ++I) {
    VarPairs[Problem.getPairwiseTerms()[I].A].push_back(I);
    VarPairs[Problem.getPairwiseTerms()[I].B].push_back(I);
  }
  for (unsigned I = 0; I < Problem.getDisagreements().size(); ++I)
    for (unsigned V : Problem.getDisagreements()[I].Vars)
      VarGroups[V].push_back(I);

  llvm::StringRef IOName = Opts.IO == IOLayout::AsModel        ? "model"
                           : Opts.IO == IOLayout::ChannelsLast ? "nhwc"
                                                               : "nchw";
  for (Value *In : G.getInputs()) {
    if (isActivationInput(In))
      Reasons[In->getName()] =
          ("graph input (--io-layout=" + IOName + ")").str();
  }
  for (Node *N : G.nodes()) {
    for (unsigned I = 0; I < N->getNumResults(); ++I) {
      Value *R = N->getResult(I);
      if (!isRelevant(R))
        continue;
      unsigned Var = getProducerVar(R);
      std::string &Reason = Reasons[R->getName()];
      if (VarFixed[Var]) {
        Reason = "written channels-first by " + nodeLabel(*N) +
                 " (layout-fixed or of another rank)";
        continue;
      }
      unsigned Rank = R->getType().getRank();
      std::string Mine = getValueLayout(R, Labels[Var]).getName(Rank);
      std::string Other = getValueLayout(R, 1 - Labels[Var]).getName(Rank);
      if (Opts.Mode != LayoutMode::Auto &&
          Problem.getUnary(Var, 1 - Labels[Var]) >= InfiniteCost) {
        Reason = "forced by --layout=" + Mine;
        continue;
      }
      Cost Own = Problem.getUnary(Var, Labels[Var]);
      Cost Alt = Problem.getUnary(Var, 1 - Labels[Var]);
      std::string Reads;
      auto Mixed = MixedKernels.find(N);
      if (Mixed != MixedKernels.end()) {
        // Kernel costs live in the pairwise term of the read and written
        // layouts.
        const MixedKernelCosts &K = Mixed->second;
        unsigned In = Labels[InputVar[N]];
        Cost Table[2][2] = {{K.First, K.ReadFirstWriteLast},
                            {K.ReadLastWriteFirst, K.Last}};
        Own = Table[In][Labels[Var]];
        Alt = Labels[Var] == ChannelsLast ? K.First : K.Last;
        if (In != Labels[Var]) {
          ++Report.NumMixedKernels;
          Reads = getLabelName(LayoutLabel(In), Rank);
        }
      }
      Cost Delta = getFlipDelta(Var);
      std::string Flip = Delta >= InfiniteCost
                             ? Other + " is not possible here"
                             : Other + " would cost " +
                                   (Delta >= 0 ? "+" : "") + formatUs(Delta) +
                                   " overall";
      if (!Reads.empty())
        Reason = nodeLabel(*N) + " reads " + Reads + " and writes " + Mine +
                 " in one kernel: " + formatUs(Own) + " vs " + formatUs(Alt) +
                 " all " + Other + "; " + Flip;
      else if (Alt >= InfiniteCost)
        Reason = nodeLabel(*N) + " has no " + Other + " kernel";
      else if (Own != Alt)
        Reason = nodeLabel(*N) + " runs " + Mine + ": kernel " + formatUs(Own) +
                 " vs " + formatUs(Alt) + " in " + Other + "; " + Flip;
      else
        Reason = nodeLabel(*N) + " follows its neighbours; " + Flip;
    }
  }
}

namespace {
struct CostedDimInfo {
  int64_t Size;
  bool Bound;
};
} // namespace

void Assigner::fillReport(LayoutReport &R) {
  R.Target = Opts.Target->Name.str();
  R.Mode = Opts.Mode == LayoutMode::Auto           ? "auto"
           : Opts.Mode == LayoutMode::ChannelsLast ? "nhwc"
                                                   : "nchw";
  R.NumVariables = Problem.getNumVariables();
  auto AddValue = [&](Value *V) {
    auto It = Reasons.find(V->getName());
    if (It == Reasons.end())
      return;
    const TensorType &T = V->getType();
    std::string Shape;
    llvm::raw_string_ostream OS(Shape);
    T.withLayout(Layout()).print(OS);
    R.Values.push_back({V->getName(), OS.str(),
                        T.getLayout().getName(T.getRank()), It->second});
  };
  for (Value *In : G.getInputs())
    AddValue(In);
  for (Node *N : G.nodes()) {
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (Value *V = N->getResult(I))
        if (N->getOpId() != OpId::Relayout)
          AddValue(V);
    if (getOpLayoutRule(*N).Kind != CostKind::View || !N->hasOperand(0) ||
        !N->hasResult(0))
      continue;
    const TensorType &X = N->getOperand(0)->getType();
    const TensorType &Y = N->getResult(0)->getType();
    if (X.hasRank() && Y.hasRank() &&
        Model.getViewCost(*N, X.getLayout(), Y.getLayout()) > 0)
      R.Copies.push_back({N->getLoc().Name, N->getOpType().str(),
                          N->getResult(0)->getName(), Model.getNumBytes(Y),
                          !Y.hasStaticShape()});
  }
  // Inputs as specialized (or not), and what every dynamic dim cost as.
  std::map<std::string, CostedDimInfo> Dynamic;
  auto NoteDims = [&](const TensorType &T) {
    if (!T.hasRank())
      return;
    for (const Dim &D : T.getShape())
      if (!D.isStatic()) {
        int64_t Known = Model.getDims().getKnownSize(D);
        Dynamic[D.isSymbol() ? D.getSymbol().str() : "?"] = {
            Model.getDims().getCostSize(D), Known >= 0};
      }
  };
  for (Value *In : G.getInputs()) {
    R.Inputs.push_back({In->getName(), In->getType().str()});
    NoteDims(In->getType());
  }
  for (Node *N : G.nodes())
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (Value *V = N->getResult(I))
        NoteDims(V->getType());
  for (const auto &[Symbol, Info] : Dynamic)
    R.CostedDims.push_back({Symbol, Info.Size, Info.Bound});
  for (const auto &E : R.Relayouts)
    R.RelayoutBytes += E.Bytes;
  for (const auto &E : R.Copies)
    R.CopyBytes += E.Bytes;
}
