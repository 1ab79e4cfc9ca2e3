//===- LayoutAssignment.cpp - Global layout choice ------------------------===//
//
// Builds the labelling problem of a graph (one variable per node that has a
// layout decision, one "not all equal" term per value whose relayout is not
// free, view terms between a Reshape/Transpose and its operand's producer),
// solves it with the minimum-cut solver and materializes the result. The
// model is described in docs/Layouts.md.
//
//===----------------------------------------------------------------------===//

#include "strider/Layout/LayoutAssignment.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/TensorData.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace strider;
using namespace strider::layout;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

static llvm::Optional<LayoutLabel> parseLabel(llvm::StringRef T) {
  if (T == "nchw" || T == "ncdhw" || T == "ncw" || T == "channels-first")
    return ChannelsFirst;
  if (T == "nhwc" || T == "ndhwc" || T == "nwc" || T == "channels-last")
    return ChannelsLast;
  return llvm::None;
}

llvm::Expected<LayoutMode> layout::parseLayoutMode(llvm::StringRef Text) {
  if (Text == "auto")
    return LayoutMode::Auto;
  if (auto L = parseLabel(Text))
    return *L == ChannelsLast ? LayoutMode::ChannelsLast
                              : LayoutMode::ChannelsFirst;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "unknown layout mode '" + Text +
                                     "' (expected auto, nchw or nhwc)");
}

llvm::Expected<IOLayout> layout::parseIOLayout(llvm::StringRef Text) {
  if (Text == "model")
    return IOLayout::AsModel;
  if (auto L = parseLabel(Text))
    return *L == ChannelsLast ? IOLayout::ChannelsLast : IOLayout::ChannelsFirst;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "unknown io layout '" + Text +
                                     "' (expected model, nchw or nhwc)");
}

llvm::Error layout::parseDimBinding(llvm::StringRef Text, DimBindings &Dims) {
  auto [Name, Size] = Text.split('=');
  int64_t N;
  if (Name.empty() || Size.getAsInteger(10, N) || N < 1)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "bad dim binding '" + Text +
                                       "' (expected NAME=SIZE, SIZE >= 1)");
  Dims.bind(Name, N);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Building the problem
//===----------------------------------------------------------------------===//

namespace {

bool isActivationRank(const TensorType &T) {
  return T.hasRank() && T.getRank() >= 3 && T.getRank() <= 5;
}

/// Whether \p V takes part in layout assignment: a rank-3..5 tensor that is
/// not a compile-time constant (constants are laid out for free).
bool isRelevant(const Value *V) {
  if (!V || !isActivationRank(V->getType()))
    return false;
  const Node *Def = V->getDefiningNode();
  return !(Def && Def->getOpId() == OpId::Constant);
}

std::string formatUs(Cost Ps) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << llvm::format("%.3f us", double(Ps) / 1e6);
  return OS.str();
}

std::string nodeLabel(const Node &N) {
  std::string Name = N.getLoc().Name;
  if (Name.empty() && N.getNumResults() && N.getResult(0))
    Name = N.getResult(0)->getName();
  return "'" + Name + "' (" + N.getOpType().str() + ")";
}

class Assigner {
public:
  Assigner(Graph &G, const LayoutOptions &Opts)
      : G(G), Opts(Opts), Model(*Opts.Target, this->Opts.Dims) {}

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
  llvm::Error collectOutputs();
  void dropRelayouts();
  llvm::Error buildVariables();
  void buildValueTerms();
  void buildViewTerms();
  void buildMixedConvTerms();
  void applyMode();
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
  /// Inside chains of view ops (the reshape-transpose-reshape of a channel
  /// shuffle), label channels-last stands for the layout that keeps each
  /// view a bitcast of its operand's channels-last bytes rather than for
  /// the rank's own channels-last: then only one op of the chain copies.
  void deriveViewChainLayouts();
  /// \p V in layout \p L for \p Consumer (null: a graph output), through
  /// a relayout (or a constant laid out anew) made once per value and
  /// layout and placed before the first consumer that needs it.
  Value *getInLayout(Value *V, const Layout &L, Node *Consumer);
  void permuteFlattenWeights(Node *View);
  void fillReport(LayoutReport &R);

  Graph &G;
  LayoutOptions Opts;
  CostModel Model;
  LayoutProblem Problem;
  std::vector<uint8_t> Labels;

  std::vector<bool> VarFixed;
  int FixedVars[2] = {-1, -1};
  llvm::DenseMap<const Node *, unsigned> NodeVar;
  /// Conv nodes that may read channels-first and write channels-last: the
  /// variable of the layout they read their input in.
  llvm::DenseMap<const Node *, unsigned> InputVar;
  llvm::DenseMap<const Value *, unsigned> InputValueVar;
  /// Values whose channels-last label means another layout (see
  /// deriveViewChainLayouts).
  llvm::DenseMap<const Value *, Layout> DerivedLayouts;
  /// Layout each graph output must have (by output slot).
  std::vector<Layout> OutputLayouts;

  /// Relayouts made during materialization, keyed by (value, layout name).
  std::map<std::pair<Value *, std::string>, Value *> Relayouts;
  std::map<std::string, std::string> Reasons;
  /// Terms touching each variable (indices into the problem's lists).
  std::vector<std::vector<unsigned>> VarPairs, VarGroups;
  LayoutReport Report;
};

unsigned Assigner::newVar(Cost C0, Cost C1) {
  unsigned V = Problem.addVariable({C0, C1});
  VarFixed.push_back(false);
  return V;
}

void Assigner::addFixedVars() {
  for (LayoutLabel L : {ChannelsFirst, ChannelsLast}) {
    FixedVars[L] = newVar(0, 0);
    Problem.fix(FixedVars[L], L);
    VarFixed[FixedVars[L]] = true;
  }
}

llvm::Error Assigner::collectOutputs() {
  for (Value *Out : G.getOutputs()) {
    const TensorType &T = Out->getType();
    Layout L = T.getLayout();
    if (isActivationRank(T) && Opts.IO != IOLayout::AsModel)
      L = getLabelLayout(Opts.IO == IOLayout::ChannelsLast ? ChannelsLast
                                                           : ChannelsFirst,
                         T.getRank());
    OutputLayouts.push_back(L);
  }
  return llvm::Error::success();
}

void Assigner::dropRelayouts() {
  // Relayouts are logical identities: the assignment decides anew. One that
  // defines a graph output hands its name to its operand when it can.
  for (Node *N : G.getNodeList()) {
    if (N->getOpId() != OpId::Relayout)
      continue;
    Value *In = N->getOperand(0), *Out = N->getResult(0);
    bool IsOutput = G.isGraphOutput(Out);
    if (IsOutput && (In->isGraphInput() || G.isGraphOutput(In)))
      continue;
    std::string Name = Out->getName();
    Out->replaceAllUsesWith(In);
    for (unsigned I = 0; I < G.getOutputs().size(); ++I)
      if (G.getOutputs()[I] == Out)
        G.setOutput(I, In);
    G.eraseNode(N);
    if (IsOutput)
      G.renameValue(In, Name);
  }
}

void Assigner::getBoundValues(const Node &N,
                              llvm::SmallVectorImpl<unsigned> &Operands,
                              llvm::SmallVectorImpl<unsigned> &Results) const {
  const OpLayoutRule &Rule = getOpLayoutRule(N);
  int Rank = -1;
  switch (Rule.Operands) {
  case OperandRule::First:
    if (N.hasOperand(0) && N.getOperand(0)->getType().hasRank()) {
      Rank = N.getOperand(0)->getType().getRank();
      if (isActivationRank(N.getOperand(0)->getType()))
        Operands.push_back(0); // Constants too: laid out for free.
    }
    break;
  case OperandRule::SameRank:
    if (N.getNumResults() && N.getResult(0) &&
        N.getResult(0)->getType().hasRank())
      Rank = N.getResult(0)->getType().getRank();
    for (unsigned I = 0; I < N.getNumOperands(); ++I)
      if (N.hasOperand(I) && N.getOperand(I)->getType().hasRank() &&
          int(N.getOperand(I)->getType().getRank()) == Rank &&
          isActivationRank(N.getOperand(I)->getType()))
        Operands.push_back(I); // Constants too: laid out for free.
    break;
  case OperandRule::All:
    for (unsigned I = 0; I < N.getNumOperands(); ++I)
      if (isRelevant(N.getOperand(I)))
        Operands.push_back(I);
    break;
  case OperandRule::None:
    if (Rule.Kind == CostKind::View && N.getNumResults() && N.getResult(0) &&
        N.getResult(0)->getType().hasRank())
      Rank = N.getResult(0)->getType().getRank();
    break;
  }
  if (Rule.Results != ResultRule::Same || Rule.Kernels != KernelRule::Both)
    return;
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    Value *R = N.getResult(I);
    if (isRelevant(R) && int(R->getType().getRank()) == Rank)
      Results.push_back(I);
  }
}

llvm::Error Assigner::buildVariables() {
  // The two fixed variables exist up front: materialization and the report
  // look them up after the problem is solved.
  addFixedVars();
  // Graph inputs: fixed to the caller's layout.
  for (Value *In : G.getInputs()) {
    if (!isRelevant(In))
      continue;
    const TensorType &T = In->getType();
    LayoutLabel L = T.getLayout().isChannelsLast(T.getRank()) ? ChannelsLast
                                                                : ChannelsFirst;
    if (Opts.IO != IOLayout::AsModel)
      L = Opts.IO == IOLayout::ChannelsLast ? ChannelsLast : ChannelsFirst;
    InputValueVar[In] = getFixedVar(L);
  }
  for (Node *N : G.nodes()) {
    llvm::SmallVector<unsigned, 4> Ops, Res;
    getBoundValues(*N, Ops, Res);
    const OpLayoutRule &Rule = getOpLayoutRule(*N);
    bool HasDecision = Rule.Kernels == KernelRule::Both &&
                       (!Res.empty() ||
                        (Rule.Operands != OperandRule::All && !Ops.empty()));
    if (!HasDecision)
      continue;
    for (unsigned I : Ops)
      if (!N->getOperand(I)->getType().hasRank())
        return makeNodeError(*N, "operand '" + N->getOperand(I)->getName() +
                                     "' has no known rank: run shape "
                                     "inference before layout assignment");
    unsigned V = newVar(Model.getNodeCost(*N, ChannelsFirst),
                        Model.getNodeCost(*N, ChannelsLast));
    NodeVar[N] = V;
    if (Model.getMixedConvCost(*N) < InfiniteCost && !Ops.empty()) {
      unsigned In = newVar(0, 0);
      InputVar[N] = In;
    }
  }
  return llvm::Error::success();
}

unsigned Assigner::getProducerVar(const Value *V) const {
  if (V->isGraphInput()) {
    auto It = InputValueVar.find(V);
    return It->second;
  }
  const Node *Def = V->getDefiningNode();
  auto It = NodeVar.find(Def);
  if (It != NodeVar.end()) {
    llvm::SmallVector<unsigned, 4> Ops, Res;
    getBoundValues(*Def, Ops, Res);
    if (llvm::is_contained(Res, V->getResultIndex()))
      return It->second;
  }
  // Written channels-first: layout-fixed ops, results of another rank.
  return getFixedVar(ChannelsFirst);
}

int Assigner::getConsumerVar(const Node &N, unsigned I) const {
  llvm::SmallVector<unsigned, 4> Ops, Res;
  getBoundValues(N, Ops, Res);
  if (!llvm::is_contained(Ops, I))
    return -1;
  auto In = InputVar.find(&N);
  if (In != InputVar.end() && I == 0)
    return In->second;
  auto It = NodeVar.find(&N);
  if (It != NodeVar.end())
    return It->second;
  return getFixedVar(ChannelsFirst);
}

void Assigner::deriveViewChainLayouts() {
  for (Node *N : G.nodes()) {
    if (getOpLayoutRule(*N).Kind != CostKind::View || !N->hasOperand(0) ||
        !N->hasResult(0) || !NodeVar.count(N))
      continue;
    Value *X = N->getOperand(0), *Y = N->getResult(0);
    if (!isRelevant(X) || G.isGraphOutput(Y) || !Y->hasUses() ||
        !llvm::all_of(Y->getUses(), [](const Use &U) {
          return getOpLayoutRule(*U.User).Kind == CostKind::View;
        }))
      continue;
    TensorType XL = X->getType().withLayout(getValueLayout(X, ChannelsLast));
    llvm::Optional<Layout> L;
    if (N->getOpId() == OpId::Transpose)
      L = getTransposeViewLayout(XL, getTransposePerm(*N));
    else
      L = getReshapeBitcastLayout(XL, Y->getType().getShape(), Opts.Dims);
    if (L && *L != getLabelLayout(ChannelsLast, Y->getType().getRank()))
      DerivedLayouts[Y] = *L;
  }
}

void Assigner::buildValueTerms() {
  // One "not all equal" term per value over its producer and the layouts
  // its consumers read it in: a relayout is paid once however many
  // consumers need it.
  auto AddValue = [&](Value *V) {
    if (!isRelevant(V))
      return;
    Cost R = Model.getRelayoutCost(V->getType());
    if (R == 0)
      return;
    llvm::SmallVector<unsigned, 8> Vars{getProducerVar(V)};
    for (const Use &U : V->getUses()) {
      int C = getConsumerVar(*U.User, U.OperandIndex);
      if (C >= 0 && !llvm::is_contained(Vars, unsigned(C)))
        Vars.push_back(C);
    }
    for (unsigned I = 0; I < G.getOutputs().size(); ++I) {
      if (G.getOutputs()[I] != V)
        continue;
      unsigned Rank = V->getType().getRank();
      const Layout &L = OutputLayouts[I];
      unsigned C;
      if (L.isIdentity())
        C = getFixedVar(ChannelsFirst);
      else if (L.isChannelsLast(Rank))
        C = getFixedVar(ChannelsLast);
      else
        continue; // Another permutation: a relayout either way.
      if (!llvm::is_contained(Vars, C))
        Vars.push_back(C);
    }
    if (Vars.size() >= 2)
      Problem.addDisagreement(Vars, R);
  };
  for (Value *In : G.getInputs())
    AddValue(In);
  for (Node *N : G.nodes())
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      AddValue(N->getResult(I));
}

void Assigner::buildViewTerms() {
  // A view op reads its operand in the layout it was written in; it costs
  // nothing when that is a bitcast (or transpose view) of its result's
  // layout, else a copy.
  for (Node *N : G.nodes()) {
    if (getOpLayoutRule(*N).Kind != CostKind::View || !N->hasOperand(0) ||
        !N->hasResult(0))
      continue;
    Value *X = N->getOperand(0);
    Value *Y = N->getResult(0);
    if (!X->getType().hasRank() || !Y->getType().hasRank())
      continue;
    bool XVar = isRelevant(X);
    auto YIt = NodeVar.find(N);
    bool YVar = YIt != NodeVar.end();
    if (!XVar && !YVar)
      continue;
    auto InLayout = [&](unsigned A) {
      return XVar ? getValueLayout(X, A) : X->getType().getLayout();
    };
    auto OutLayout = [&](unsigned B) {
      return YVar ? getValueLayout(Y, B) : Layout();
    };
    bool Permutable =
        !DerivedLayouts.count(X) && Model.canPermuteConsumerWeights(*N);
    Cost T[2][2];
    for (unsigned A = 0; A < 2; ++A)
      for (unsigned B = 0; B < 2; ++B)
        T[A][B] = (Permutable && A == ChannelsLast && XVar)
                      ? 0
                      : Model.getViewCost(*N, InLayout(A), OutLayout(B));
    if (!YVar) {
      Problem.addUnary(getProducerVar(X), {T[0][0], T[1][0]});
      continue;
    }
    unsigned VY = YIt->second;
    if (!XVar) {
      Problem.addUnary(VY, {T[0][0], T[0][1]});
      continue;
    }
    unsigned VX = getProducerVar(X);
    if (VarFixed[VX]) {
      unsigned A = FixedVars[ChannelsLast] == int(VX) ? 1 : 0;
      Problem.addUnary(VY, {T[A][0], T[A][1]});
      continue;
    }
    // Not submodular (a view only across labels): bound it from above by
    // raising the off-diagonal entries; counted in the report.
    Cost Excess = T[0][0] + T[1][1] - T[0][1] - T[1][0];
    if (Excess > 0) {
      T[0][1] += Excess / 2;
      T[1][0] += Excess - Excess / 2;
      ++Report.NumApproximatedTerms;
    }
    Problem.addPairwise(VX, VY, {T[0][0], T[0][1], T[1][0], T[1][1]});
  }
}

void Assigner::buildMixedConvTerms() {
  if (InputVar.empty())
    return;
  // Reading channels-last and writing channels-first has no kernel: price
  // it above any feasible labelling (every op has a channels-first kernel,
  // so the all-channels-first labelling bounds the optimum).
  Cost Bound = 1;
  for (unsigned V = 0; V < Problem.getNumVariables(); ++V) {
    Cost M = 0;
    for (unsigned L = 0; L < 2; ++L)
      if (Problem.getUnary(V, L) < InfiniteCost)
        M = std::max(M, Problem.getUnary(V, L));
    Bound += M;
  }
  for (const auto &T : Problem.getPairwiseTerms())
    Bound += *std::max_element(T.Table.begin(), T.Table.end());
  for (const auto &D : Problem.getDisagreements())
    Bound += D.Weight;
  for (Node *N : G.nodes()) {
    auto It = InputVar.find(N);
    if (It == InputVar.end())
      continue;
    unsigned Out = NodeVar[N];
    // The node variable holds the plain kernels' costs; the pairwise term
    // turns (read CF, write CL) into the mixed kernel.
    Cost CL = Problem.getUnary(Out, ChannelsLast);
    Cost Mixed = Model.getMixedConvCost(*N);
    Problem.addPairwise(It->second, Out, {0, Mixed - CL, Bound, 0});
  }
}

void Assigner::applyMode() {
  if (Opts.Mode == LayoutMode::Auto)
    return;
  LayoutLabel Want =
      Opts.Mode == LayoutMode::ChannelsLast ? ChannelsLast : ChannelsFirst;
  for (auto &[N, V] : NodeVar) {
    (void)N;
    if (Problem.getUnary(V, Want) < InfiniteCost)
      Problem.fix(V, Want);
  }
}

//===----------------------------------------------------------------------===//
// Materialization
//===----------------------------------------------------------------------===//

Value *Assigner::getInLayout(Value *V, const Layout &L, Node *Consumer) {
  const TensorType &T = V->getType();
  if (T.getLayout() == L ||
      areLayoutsEquivalent(T.getShape(), T.getLayout(), L, Opts.Dims))
    return V;
  std::string LName = L.getName(T.getRank());
  auto Key = std::make_pair(V, LName);
  auto It = Relayouts.find(Key);
  if (It != Relayouts.end())
    return It->second;
  Value *R;
  if (const TensorData *D = V->getConstantData()) {
    // Constants are laid out at compile time.
    TensorDataRef Data = D->withLayout(L);
    Node *C = G.createNode(OpId::Constant, {},
                           {G.makeUniqueName(V->getName() + "_" + LName)},
                           {T.withLayout(L)}, Consumer);
    C->setAttr("value", Attribute::getTensor(Data));
    C->setLoc(V->getDefiningNode()->getLoc());
    R = C->getResult(0);
    ++Report.NumConstantsRelaid;
  } else {
    Node *N = G.createNode(OpId::Relayout, {V},
                           {G.makeUniqueName(V->getName() + "_" + LName)},
                           {T.withLayout(L)}, Consumer);
    N->setLoc({G.getSourceFile(), N->getResult(0)->getName()});
    R = N->getResult(0);
    Report.Relayouts.push_back(
        {V->getName(), T.getLayout().getName(T.getRank()), LName,
         Consumer ? "read by " + nodeLabel(*Consumer) : "graph output",
         Model.getNumBytes(T)});
  }
  Relayouts[Key] = R;
  return R;
}

void Assigner::permuteFlattenWeights(Node *View) {
  // View(X) with X channels-last becomes View(Transpose(X, nhwc perm)): the
  // transpose is a view of X's bytes and the flatten a bitcast of it; the
  // weight rows of every Gemm/MatMul consumer follow the new order.
  Value *X = View->getOperand(0);
  const TensorType &XT = X->getType();
  unsigned Rank = XT.getRank();
  llvm::SmallVector<unsigned, 6> Perm = Layout::getChannelsLast(Rank)
                                            .getPermutation(Rank);
  llvm::SmallVector<Dim, 6> Shape;
  std::vector<int64_t> PermAttr;
  for (unsigned P : Perm) {
    Shape.push_back(XT.getDim(P));
    PermAttr.push_back(P);
  }
  Node *T = G.createNode(OpId::Transpose, {X},
                         {G.makeUniqueName(X->getName() + "_hwc")},
                         {TensorType(XT.getElementType(), Shape)}, View);
  T->setAttr("perm", Attribute::getInts(PermAttr));
  T->setLoc(View->getLoc());
  View->setOperand(0, T->getResult(0));

  int64_t C = XT.getDim(1).getSize();
  llvm::SmallVector<int64_t, 6> SpatialDims;
  for (unsigned I = 2; I < Rank; ++I)
    SpatialDims.push_back(XT.getDim(I).getSize());
  std::vector<Use> Uses(View->getResult(0)->getUses().begin(),
                        View->getResult(0)->getUses().end());
  for (const Use &U : Uses) {
    Node *Consumer = U.User;
    Value *B = Consumer->getOperand(1);
    const TensorData *D = B->getConstantData();
    bool RowsAreK = !(Consumer->getOpId() == OpId::Gemm &&
                      Consumer->getIntAttr("transB", 0) == 1);
    llvm::SmallVector<int64_t, 6> Split;
    llvm::SmallVector<unsigned, 6> Order;
    int64_t M = B->getType().getDim(RowsAreK ? 1 : 0).getSize();
    // Weight dims as (C, spatial..., M) or (M, C, spatial...), reordered
    // so that channels come after the spatial dims.
    if (RowsAreK) {
      Split.push_back(C);
      Split.append(SpatialDims.begin(), SpatialDims.end());
      Split.push_back(M);
      for (unsigned I = 1; I < Rank - 1; ++I)
        Order.push_back(I);
      Order.push_back(0);
      Order.push_back(Rank - 1);
    } else {
      Split.push_back(M);
      Split.push_back(C);
      Split.append(SpatialDims.begin(), SpatialDims.end());
      Order.push_back(0);
      for (unsigned I = 2; I < Rank; ++I)
        Order.push_back(I);
      Order.push_back(1);
    }
    std::vector<uint8_t> Bytes(D->getBytes().begin(), D->getBytes().end());
    TensorDataRef Staged = llvm::cantFail(TensorData::create(
        TensorType::get(D->getElementType(), Split), std::move(Bytes)));
    TensorDataRef Moved = Staged->withLayout(Layout(Order));
    std::vector<uint8_t> Out(Moved->getBytes().begin(), Moved->getBytes().end());
    TensorDataRef NewData = llvm::cantFail(
        TensorData::create(D->getType().withLayout(Layout()), std::move(Out)));
    Node *NewB = G.createNode(OpId::Constant, {},
                              {G.makeUniqueName(B->getName() + "_hwc")},
                              {B->getType().withLayout(Layout())}, Consumer);
    NewB->setAttr("value", Attribute::getTensor(NewData));
    NewB->setLoc(B->getDefiningNode()->getLoc());
    Consumer->setOperand(1, NewB->getResult(0));
    if (!B->hasUses() && !G.isGraphOutput(B))
      G.eraseNode(B->getDefiningNode());
    ++Report.NumWeightsPermuted;
  }
}

void Assigner::materialize() {
  // Graph inputs take the caller's layout.
  if (Opts.IO != IOLayout::AsModel)
    for (Value *In : G.getInputs())
      if (isActivationInput(In)) {
        Layout L = getVarLayout(InputValueVar[In], In->getType().getRank());
        if (In->getType().getLayout() != L)
          In->setType(In->getType().withLayout(L));
      }

  // Results: nodes are rebuilt with the layouts their variables chose.
  for (Node *N : G.getNodeList()) {
    auto It = NodeVar.find(N);
    if (It == NodeVar.end())
      continue;
    unsigned Var = It->second;
    llvm::SmallVector<unsigned, 4> Ops, Res;
    getBoundValues(*N, Ops, Res);
    std::vector<TensorType> Types;
    bool Changed = false;
    for (unsigned I = 0; I < N->getNumResults(); ++I) {
      Value *R = N->getResult(I);
      Types.push_back(R ? R->getType() : TensorType());
      if (!R || !llvm::is_contained(Res, I))
        continue;
      Layout L = getValueLayout(R, Labels[Var]);
      if (L != R->getType().getLayout()) {
        Types.back() = R->getType().withLayout(L);
        Changed = true;
      }
    }
    if (!Changed)
      continue;
    Node *New = G.rebuildNode(N, Types);
    NodeVar.erase(N);
    NodeVar[New] = Var;
    auto In = InputVar.find(N);
    if (In != InputVar.end()) {
      unsigned IV = In->second;
      InputVar.erase(N);
      InputVar[New] = IV;
    }
  }

  // Operands: relayouts where a consumer reads another layout.
  for (Node *N : G.getNodeList()) {
    llvm::SmallVector<unsigned, 4> Ops, Res;
    getBoundValues(*N, Ops, Res);
    for (unsigned I : Ops) {
      int C = getConsumerVar(*N, I);
      if (C < 0)
        continue;
      Value *V = N->getOperand(I);
      Value *NV = getInLayout(V, getVarLayout(C, V->getType().getRank()), N);
      if (NV != V)
        N->setOperand(I, NV);
    }
    if (getOpLayoutRule(*N).Kind != CostKind::View || !N->hasOperand(0))
      continue;
    const TensorType &XT = N->getOperand(0)->getType();
    if (isActivationRank(XT) && XT.getLayout().isChannelsLast(XT.getRank()) &&
        Model.getViewCost(*N, XT.getLayout(), N->getResult(0)->getType()
                                                  .getLayout()) > 0 &&
        Model.canPermuteConsumerWeights(*N))
      permuteFlattenWeights(N);
  }

  // Graph outputs in the caller's layout; the relayout takes the output's
  // name.
  for (unsigned I = 0; I < G.getOutputs().size(); ++I) {
    Value *V = G.getOutputs()[I];
    const TensorType &T = V->getType();
    if (!T.hasRank() || V->isGraphInput() || T.getLayout() == OutputLayouts[I])
      continue;
    if (!OutputLayouts[I].isValidForRank(T.getRank()))
      continue;
    Value *R = getInLayout(V, OutputLayouts[I], nullptr);
    if (R == V)
      continue;
    std::string Name = V->getName();
    G.setOutput(I, R);
    G.renameValue(V, G.makeUniqueName(Name + "_" +
                                      T.getLayout().getName(T.getRank())));
    G.renameValue(R, Name);
    auto Reason = Reasons.find(Name);
    if (Reason != Reasons.end()) {
      Reasons[V->getName()] = Reason->second;
      Reasons.erase(Name);
    }
    for (auto &E : Report.Relayouts)
      if (E.Value == Name && E.Reason == "graph output") {
        E.Value = V->getName();
        E.Reason = "graph output '" + Name + "' in " +
                   OutputLayouts[I].getName(T.getRank());
      }
  }
}

//===----------------------------------------------------------------------===//
// Explanations and the report
//===----------------------------------------------------------------------===//

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

  llvm::StringRef IOName = Opts.IO == IOLayout::AsModel       ? "model"
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
      Cost Delta = getFlipDelta(Var);
      std::string Flip = Delta >= InfiniteCost
                             ? Other + " is not possible here"
                             : Other + " would cost " +
                                   (Delta >= 0 ? "+" : "") + formatUs(Delta) +
                                   " overall";
      if (Alt >= InfiniteCost)
        Reason = nodeLabel(*N) + " has no " + Other + " kernel";
      else if (Own != Alt)
        Reason = nodeLabel(*N) + " runs " + Mine + ": kernel " +
                 formatUs(Own) + " vs " + formatUs(Alt) + " in " + Other +
                 "; " + Flip;
      else
        Reason = nodeLabel(*N) + " follows its neighbours; " + Flip;
    }
  }
}

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
                          N->getResult(0)->getName(), Model.getNumBytes(Y)});
  }
  for (const auto &E : R.Relayouts)
    R.RelayoutBytes += E.Bytes;
  for (const auto &E : R.Copies)
    R.CopyBytes += E.Bytes;
}

llvm::Expected<LayoutReport> Assigner::run() {
  dropRelayouts();
  if (llvm::Error E = collectOutputs())
    return E;
  if (llvm::Error E = buildVariables())
    return E;
  deriveViewChainLayouts();
  buildValueTerms();
  buildViewTerms();
  buildMixedConvTerms();

  // The two uniform labellings, before --layout narrows the choice.
  for (unsigned Uniform = 0; Uniform < 2; ++Uniform) {
    std::vector<uint8_t> L(Problem.getNumVariables(), Uniform);
    for (unsigned V = 0; V < L.size(); ++V)
      if (Problem.getUnary(V, L[V]) >= InfiniteCost)
        L[V] = 1 - L[V];
    Cost C = Problem.evaluate(L);
    (Uniform ? Report.AllChannelsLastCost : Report.AllChannelsFirstCost) = C;
  }
  applyMode();

  std::unique_ptr<LayoutSolver> Solver = createMinCutSolver();
  llvm::Expected<LayoutSolution> Sol = Solver->solve(Problem);
  if (!Sol)
    return makeGraphError(G, "layout assignment failed: " +
                                 llvm::toString(Sol.takeError()));
  Labels = std::move(Sol->Labels);
  Report.EstimatedCost = Sol->TotalCost;
  explain();
  materialize();
  fillReport(Report);
  return std::move(Report);
}

} // namespace

llvm::Expected<LayoutReport> layout::assignLayouts(Graph &G,
                                                  const LayoutOptions &Opts) {
  Assigner A(G, Opts);
  return A.run();
}
