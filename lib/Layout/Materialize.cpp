//===- Materialize.cpp - Apply a layout assignment to the graph -----------===//
//
// Rebuilds nodes with the chosen result layouts, inserts one relayout per
// value and layout that a consumer needs (constants are laid out anew
// instead), puts graph outputs in the caller's layout, and rewrites
// channels-last Flatten -> Gemm heads to read NHWC bytes directly.
//
//===----------------------------------------------------------------------===//

#include "Assigner.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/TensorData.h"

#include "llvm/ADT/STLExtras.h"

using namespace strider;
using namespace strider::layout;
using namespace strider::layout::detail;

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
         Model.getNumBytes(T), !T.hasStaticShape()});
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
  llvm::SmallVector<unsigned, 6> Perm =
      Layout::getChannelsLast(Rank).getPermutation(Rank);
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
    TensorDataRef Logical;
    if (!D->getType().getLayout().isIdentity())
      Logical = D->withLayout(Layout());
    llvm::SmallVector<unsigned, 6> Identity(Split.size());
    for (unsigned I = 0; I < Identity.size(); ++I)
      Identity[I] = I;
    std::vector<uint8_t> Out = permuteTensorBytes(
        (Logical ? *Logical : *D).getBytes(), Split, Identity, Order,
        getElementByteSize(D->getElementType()));
    TensorDataRef NewData = llvm::cantFail(
        TensorData::create(D->getType().withLayout(Layout()), std::move(Out)));
    Node *NewB = G.createNode(OpId::Constant, {},
                              {G.makeUniqueName(B->getName() + "_hwc")},
                              {B->getType().withLayout(Layout())}, Consumer);
    NewB->setAttr("value", Attribute::getTensor(NewData));
    NewB->setLoc(B->getDefiningNode()->getLoc());
    Consumer->setOperand(1, NewB->getResult(0));
    // Erased after the walk over the graph: it may come later in the order.
    if (!llvm::is_contained(ReplacedWeights, B->getDefiningNode()))
      ReplacedWeights.push_back(B->getDefiningNode());
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
        Model.getViewCost(*N, XT.getLayout(),
                          N->getResult(0)->getType().getLayout()) > 0 &&
        Model.canPermuteConsumerWeights(*N))
      permuteFlattenWeights(N);
  }
  for (Node *W : ReplacedWeights)
    if (!W->getResult(0)->hasUses() && !G.isGraphOutput(W->getResult(0)))
      G.eraseNode(W);

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
    G.renameValue(
        V, G.makeUniqueName(Name + "_" + T.getLayout().getName(T.getRank())));
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
