//===- LayoutAssignment.cpp - Global layout choice ------------------------===//
//
// Builds the labelling problem of a graph (one variable per node that has a
// layout decision, one "not all equal" term per value whose relayout is not
// free, view terms between a Reshape/Transpose and its operand's producer)
// and solves it with the minimum-cut solver; Materialize.cpp applies the
// result and Explain.cpp writes the report. The model is described in
// docs/Layouts.md.
//
//===----------------------------------------------------------------------===//

#include "Assigner.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/TensorData.h"

#include "llvm/ADT/STLExtras.h"

using namespace strider;
using namespace strider::layout;
using namespace strider::layout::detail;

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
    return *L == ChannelsLast ? IOLayout::ChannelsLast
                              : IOLayout::ChannelsFirst;
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

llvm::Expected<LayoutOptions>
layout::parseLayoutOptions(llvm::StringRef Target, llvm::StringRef Mode,
                           llvm::StringRef IO,
                           llvm::ArrayRef<std::string> Dims) {
  LayoutOptions Opts;
  Opts.Target = lookupTarget(Target);
  if (!Opts.Target) {
    std::string Known;
    for (const TargetDescription &T : getTargets())
      Known += (Known.empty() ? "" : ", ") + T.Name.str();
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown target '" + Target +
                                       "' (known: " + Known + ")");
  }
  llvm::Expected<LayoutMode> M = parseLayoutMode(Mode);
  if (!M)
    return M.takeError();
  Opts.Mode = *M;
  llvm::Expected<IOLayout> L = parseIOLayout(IO);
  if (!L)
    return L.takeError();
  Opts.IO = *L;
  for (const std::string &D : Dims)
    if (llvm::Error E = parseDimBinding(D, Opts.Dims))
      return E;
  return Opts;
}

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

void Assigner::collectOutputs() {
  // --io-layout applies to activations (written by an op with a layout
  // decision, or graph inputs read as activations); outputs already in the
  // caller's order, such as a final NCHW->NHWC Transpose, keep theirs.
  for (unsigned I = 0; I < G.getOutputs().size(); ++I) {
    Value *Out = G.getOutputs()[I];
    const TensorType &T = Out->getType();
    Layout L = OutputLayouts[I];
    if (Opts.IO != IOLayout::AsModel && isActivationOutput(Out))
      L = getLabelLayout(Opts.IO == IOLayout::ChannelsLast ? ChannelsLast
                                                           : ChannelsFirst,
                         T.getRank());
    OutputLayouts[I] = L;
  }
}

bool Assigner::isActivationOutput(const Value *V) const {
  if (V->isGraphInput())
    return isActivationInput(V);
  const Node *Def = V->getDefiningNode();
  if (!isRelevant(V) || !NodeVar.count(Def) ||
      getOpLayoutRule(*Def).Kind == CostKind::View)
    return false;
  llvm::SmallVector<unsigned, 4> Ops, Res;
  getBoundValues(*Def, Ops, Res);
  return llvm::is_contained(Res, V->getResultIndex());
}

void Assigner::dropRelayouts() {
  // The outputs' layouts as declared, which the caller asked for.
  for (Value *Out : G.getOutputs())
    OutputLayouts.push_back(Out->getType().getLayout());
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

bool Assigner::isMatrixBatchLayout(const Value *V) const {
  const TensorType &T = V->getType();
  if (!T.hasRank() || T.getRank() != 3)
    return false;
  for (unsigned L = 0; L < 2; ++L)
    if (getValueLayout(V, L).getPermutation(3)[0] != 0 &&
        Opts.Dims.getKnownSize(T.getDim(0)) != 1)
      return false;
  return true;
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
  case OperandRule::Matrix:
    for (unsigned I = 0; I < N.getNumOperands(); ++I)
      if (isRelevant(N.getOperand(I)) &&
          !(Rule.Operands == OperandRule::Matrix &&
            isMatrixBatchLayout(N.getOperand(I))))
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
  for (Node *N : G.nodes()) {
    llvm::SmallVector<unsigned, 4> Ops, Res;
    getBoundValues(*N, Ops, Res);
    const OpLayoutRule &Rule = getOpLayoutRule(*N);
    bool HasDecision = Rule.Kernels == KernelRule::Both &&
                       (!Res.empty() ||
                        (Rule.Operands != OperandRule::All &&
                         Rule.Operands != OperandRule::Matrix && !Ops.empty()));
    if (!HasDecision)
      continue;
    for (unsigned I : Ops)
      if (!N->getOperand(I)->getType().hasRank())
        return makeNodeError(*N, "operand '" + N->getOperand(I)->getName() +
                                     "' has no known rank: run shape "
                                     "inference before layout assignment");
    MixedKernelCosts K = {Model.getNodeCost(*N, ChannelsFirst),
                          Model.getMixedConvCost(*N, ChannelsFirst),
                          Model.getMixedConvCost(*N, ChannelsLast),
                          Model.getNodeCost(*N, ChannelsLast)};
    bool Mixed = !Ops.empty() && (K.ReadFirstWriteLast < InfiniteCost ||
                                  K.ReadLastWriteFirst < InfiniteCost);
    if (!Mixed) {
      NodeVar[N] = newVar(K.First, K.Last);
      continue;
    }
    // Two variables: the layout the conv writes (its node variable) and the
    // one it reads; their pairwise term holds the four kernels' costs.
    NodeVar[N] = newVar(0, 0);
    InputVar[N] = newVar(0, 0);
    MixedKernels[N] = K;
  }
  // Graph inputs: fixed to their declared layout, or for activations the
  // caller's (--io-layout).
  for (Value *In : G.getInputs()) {
    if (!isRelevant(In))
      continue;
    const TensorType &T = In->getType();
    LayoutLabel L = T.getLayout().isChannelsLast(T.getRank()) ? ChannelsLast
                                                              : ChannelsFirst;
    if (Opts.IO != IOLayout::AsModel && isActivationInput(In))
      L = Opts.IO == IOLayout::ChannelsLast ? ChannelsLast : ChannelsFirst;
    InputValueVar[In] = getFixedVar(L);
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
    if (!isRelevant(X))
      continue;
    // The operand's channels-last layout, or the only layout a fixed
    // producer writes.
    unsigned PX = getProducerVar(X);
    unsigned Label = !VarFixed[PX]                        ? ChannelsLast
                     : FixedVars[ChannelsLast] == int(PX) ? ChannelsLast
                                                          : ChannelsFirst;
    TensorType XL = X->getType().withLayout(getValueLayout(X, Label));
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
    if (DerivedLayouts.count(V))
      return addDerivedValueTerms(V);
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

void Assigner::addDerivedValueTerms(Value *V) {
  // The producer's labels stand for its two layouts, consumers' labels for
  // the rank's channels-first/last: compare layouts, not labels. A layout
  // required by fixed consumers or graph outputs is a unary term on the
  // producer (one relayout per layout); each free consumer a pairwise one.
  const TensorType &T = V->getType();
  Cost R = Model.getMoveCost(T);
  unsigned P = getProducerVar(V);
  Layout Written[2] = {getValueLayout(V, 0), getValueLayout(V, 1)};
  auto Moves = [&](const Layout &From, const Layout &To) {
    return areLayoutsEquivalent(T.getShape(), From, To, Opts.Dims) ? 0 : R;
  };
  std::vector<Layout> Required;
  llvm::SmallVector<unsigned, 4> Readers;
  for (const Use &U : V->getUses()) {
    int C = getConsumerVar(*U.User, U.OperandIndex);
    if (C < 0)
      continue;
    if (VarFixed[C]) {
      LayoutLabel L =
          FixedVars[ChannelsLast] == C ? ChannelsLast : ChannelsFirst;
      Required.push_back(getLabelLayout(L, T.getRank()));
    } else if (!llvm::is_contained(Readers, unsigned(C))) {
      Readers.push_back(C);
    }
  }
  for (unsigned I = 0; I < G.getOutputs().size(); ++I)
    if (G.getOutputs()[I] == V)
      Required.push_back(OutputLayouts[I]);
  std::vector<Layout> Distinct;
  for (const Layout &L : Required)
    if (!llvm::is_contained(Distinct, L))
      Distinct.push_back(L);
  for (const Layout &L : Distinct)
    Problem.addUnary(P, {Moves(Written[0], L), Moves(Written[1], L)});
  for (unsigned C : Readers) {
    Cost Table[2][2];
    for (unsigned A = 0; A < 2; ++A)
      for (unsigned B = 0; B < 2; ++B)
        Table[A][B] =
            Moves(Written[A], getLabelLayout(LayoutLabel(B), T.getRank()));
    addBoundedPairwise(P, C, Table);
  }
}

void Assigner::addBoundedPairwise(unsigned A, unsigned B, Cost (&T)[2][2]) {
  // A term that is not submodular (cheap only across labels) is bounded from
  // above by raising its off-diagonal entries; counted in the report.
  Cost Excess = T[0][0] + T[1][1] - T[0][1] - T[1][0];
  if (Excess > 0) {
    T[0][1] += Excess / 2;
    T[1][0] += Excess - Excess / 2;
    ++Report.NumApproximatedTerms;
  }
  Problem.addPairwise(A, B, {T[0][0], T[0][1], T[1][0], T[1][1]});
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
    addBoundedPairwise(VX, VY, T);
  }
}

void Assigner::buildMixedConvTerms() {
  if (InputVar.empty())
    return;
  // A direction without a kernel is priced above any feasible labelling:
  // every op has a channels-first kernel, so the all-channels-first
  // labelling's cost, bounded by the sum of every term's largest finite
  // entry, is always cheaper.
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
  for (const auto &[N, K] : MixedKernels) {
    (void)N;
    for (Cost C : {K.First, K.ReadFirstWriteLast, K.ReadLastWriteFirst, K.Last})
      if (C < InfiniteCost)
        Bound += C;
  }
  for (Node *N : G.nodes()) {
    auto It = MixedKernels.find(N);
    if (It == MixedKernels.end())
      continue;
    const MixedKernelCosts &K = It->second;
    auto Offered = [&](Cost C) { return C < InfiniteCost ? C : Bound; };
    // Rows: the layout read (input variable); columns: the layout written.
    Problem.addPairwise(InputVar[N], NodeVar[N],
                        {K.First, Offered(K.ReadFirstWriteLast),
                         Offered(K.ReadLastWriteFirst), K.Last});
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
  // Channels-first means channels-first kernels; channels-last still lets a
  // first conv read the NCHW image.
  if (Want == ChannelsFirst)
    for (auto &[N, V] : InputVar) {
      (void)N;
      Problem.fix(V, ChannelsFirst);
    }
}

void Assigner::applyKept() {
  if (!Opts.Keep)
    return;
  auto Fix = [&](unsigned Var, const std::string &Key) {
    auto It = Opts.Keep->find(Key);
    if (It == Opts.Keep->end() || It->second > 1 || VarFixed[Var] ||
        Problem.getUnary(Var, It->second) >= InfiniteCost)
      return;
    Problem.fix(Var, It->second);
    ++Report.NumKeptLabels;
  };
  for (const auto &[N, V] : NodeVar)
    if (!getLabelKey(*N).empty())
      Fix(V, getLabelKey(*N).str());
  for (const auto &[N, V] : InputVar)
    if (!getLabelKey(*N).empty())
      Fix(V, getLabelKey(*N).str() + "#input");
}

void Assigner::recordLabels() {
  for (const auto &[N, V] : NodeVar)
    if (!getLabelKey(*N).empty())
      Report.NodeLabels[getLabelKey(*N).str()] = Labels[V];
  for (const auto &[N, V] : InputVar)
    if (!getLabelKey(*N).empty())
      Report.NodeLabels[getLabelKey(*N).str() + "#input"] = Labels[V];
}

void Assigner::buildRescaleTerms() {
  // A TakesRescale producer (ConvInteger) computes the elementwise chain
  // after it (Cast to f32, Mul by a scale, Add of a constant, a residual,
  // an activation: codegen::FusedTail) in its store, when the chain is in
  // its layout. Elementwise ops cost the same in either layout, so without
  // these terms a relayout could land anywhere in the chain, and every op
  // after it would run on its own: splitting the chain at a value costs the
  // memory passes of the ops after it.
  constexpr unsigned MaxChain = 5;
  for (Node *N : G.nodes()) {
    if (N->isOpaque() || N->getNumResults() != 1 || !NodeVar.count(N) ||
        !hasOpTrait(N->getOpId(), optrait::TakesRescale))
      continue;
    llvm::SmallVector<const Use *, MaxChain> Chain;
    const Value *V = N->getResult(0);
    while (Chain.size() < MaxChain && V && isRelevant(V) &&
           !G.isGraphOutput(V) && V->getUses().size() == 1) {
      const Use &U = V->getUses()[0];
      if (U.User->isOpaque() || U.User->getNumResults() != 1 ||
          U.User->getInfo()->Layout != LayoutClass::Elementwise ||
          getConsumerVar(*U.User, U.OperandIndex) < 0)
        break;
      Chain.push_back(&U);
      V = U.User->getResult(0);
    }
    // After Chain[I]'s operand, the ops Chain[I..] run unfused.
    Cost After = 0;
    for (size_t I = Chain.size(); I-- > 0;) {
      const Use &U = *Chain[I];
      After = std::min(After + Model.getNodeCost(*U.User, ChannelsLast),
                       InfiniteCost - 1);
      const Value *Operand = U.User->getOperand(U.OperandIndex);
      unsigned P = getProducerVar(Operand);
      unsigned C = unsigned(getConsumerVar(*U.User, U.OperandIndex));
      if (P != C)
        Problem.addDisagreement({P, C}, After);
    }
  }
}

llvm::Expected<LayoutReport> Assigner::run() {
  dropRelayouts();
  // Tuning sees the graph as it is costed (no relayout between a conv and
  // its residual Add); the target is then calibrated from what it found.
  if (Opts.Tune) {
    if (llvm::Error E = Opts.Tune(G, Opts.Dims, *Opts.Tuning))
      return E;
    Target = Opts.Tuning->calibrateTarget(*Opts.Target);
  }
  if (llvm::Error E = buildVariables())
    return E;
  collectOutputs();
  deriveViewChainLayouts();
  buildValueTerms();
  buildViewTerms();
  buildMixedConvTerms();
  buildRescaleTerms();

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
  applyKept();

  std::unique_ptr<LayoutSolver> Solver = createMinCutSolver();
  llvm::Expected<LayoutSolution> Sol = Solver->solve(Problem);
  if (!Sol)
    return makeGraphError(G, "layout assignment failed: " +
                                 llvm::toString(Sol.takeError()));
  Labels = std::move(Sol->Labels);
  Report.EstimatedCost = Sol->TotalCost;
  if (Opts.RecordLabels)
    recordLabels();
  // Measured convs are counted before materialization puts relayouts
  // between convs and their readers (which changes their tuning keys).
  if (Opts.Tuning) {
    Report.Tuned = true;
    for (Node *N : G.nodes())
      if (!N->isOpaque() && N->getOpId() == OpId::Conv) {
        ++Report.NumConvs;
        Report.NumMeasuredConvs += Model.isMeasured(*N);
      }
  }
  if (Opts.Explain)
    explain();
  materialize();
  if (Opts.Explain)
    fillReport(Report);
  return std::move(Report);
}

llvm::Expected<LayoutReport> layout::assignLayouts(Graph &G,
                                                   const LayoutOptions &Opts) {
  if (Opts.Tune && !Opts.Tuning)
    return makeGraphError(G, "tuning needs a tuning table to fill");
  Assigner A(G, Opts);
  return A.run();
}
