//===- Fusion.cpp - Fusion groups shared by the backends -----------------===//
//
// See Fusion.h.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/Fusion.h"

#include "strider/CodeGen/TensorGeometry.h"

#include "strider/IR/LayoutAlgebra.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace strider;
using namespace strider::codegen;

#define STRIDER_ACTIVATION_OP(Kind, Name, Op) STRIDER_ACTIVATION_OP_##Op(Kind)
#define STRIDER_ACTIVATION_OP_NoOp(Kind)

// The ops of STRIDER_ACTIVATIONS' Plain entries, each its activation.
#define STRIDER_ACTIVATION_OP_Plain(Kind) {OpId::Kind, ActKind::Kind},
#define STRIDER_ACTIVATION_OP_Attrs(Kind)
static const std::pair<OpId, ActKind> PlainActivations[] = {
    STRIDER_ACTIVATIONS(STRIDER_ACTIVATION_OP)};
#undef STRIDER_ACTIVATION_OP_Plain
#undef STRIDER_ACTIVATION_OP_Attrs

// Every op that is an activation: the Plain and Attrs entries.
#define STRIDER_ACTIVATION_OP_Plain(Kind) OpId::Kind,
#define STRIDER_ACTIVATION_OP_Attrs(Kind) OpId::Kind,
static const OpId ActivationOps[] = {
    STRIDER_ACTIVATIONS(STRIDER_ACTIVATION_OP)};
#undef STRIDER_ACTIVATION_OP_Plain
#undef STRIDER_ACTIVATION_OP_Attrs
#undef STRIDER_ACTIVATION_OP_NoOp
#undef STRIDER_ACTIVATION_OP

llvm::ArrayRef<OpId> codegen::getActivationOps() { return ActivationOps; }

bool codegen::getActivation(const Node &N, Activation &Out) {
  Activation A;
  switch (N.getOpId()) {
#define STRIDER_ACTIVATION_ATTR(K, AlphaAttr, AlphaDefault, BetaAttr,          \
                                BetaDefault)                                   \
  case OpId::K:                                                                \
    A.Kind = ActKind::K;                                                       \
    A.Alpha = N.getFloatAttr(AlphaAttr, AlphaDefault);                         \
    A.Beta = N.getFloatAttr(BetaAttr, BetaDefault);                            \
    break;
    STRIDER_ACTIVATION_ATTRS(STRIDER_ACTIVATION_ATTR)
#undef STRIDER_ACTIVATION_ATTR
  case OpId::Gelu:
    A.Kind = N.getStringAttr("approximate", "none") == "tanh"
                 ? ActKind::GeluTanh
                 : ActKind::Gelu;
    break;
  case OpId::Clip: {
    A.Kind = ActKind::Clip;
    A.Alpha = -INFINITY;
    A.Beta = INFINITY;
    for (unsigned I = 1; I < 3; ++I) {
      if (!N.hasOperand(I))
        continue;
      const TensorData *D = N.getOperand(I)->getConstantData();
      if (!D || D->getNumElements() != 1)
        return false;
      (I == 1 ? A.Alpha : A.Beta) = float(D->getDouble(0));
    }
    break;
  }
  default: {
    const auto *It = llvm::find_if(PlainActivations, [&](const auto &P) {
      return P.first == N.getOpId();
    });
    if (It == std::end(PlainActivations))
      return false;
    A.Kind = It->second;
    break;
  }
  }
  Out = A;
  return true;
}

bool codegen::getFusableActivation(const Node &N, Activation &Out) {
  const ElementType E = N.getResult(0)->getType().getElementType();
  if (E != ElementType::F32 && E != ElementType::F16 && E != ElementType::BF16)
    return false;
  return getActivation(N, Out);
}

/// The single non-output consumer of \p V, if \p V has exactly one use.
static const Node *getSoleUser(const Graph &G, const Value *V) {
  if (!V || G.isGraphOutput(V) || V->getUses().size() != 1)
    return nullptr;
  return V->getUses()[0].User;
}

/// Whether tensors of types \p A and \p B hold the same bytes (same
/// element type and shape, layouts equal or differing only in unit dims).
bool codegen::haveSameBytes(const TensorType &A, const TensorType &B) {
  return A.getElementType() == B.getElementType() &&
         haveSameElementOrder(A, B);
}

/// The fusion group starting at producer \p N; nodes in \p Claimed belong
/// to other groups already.
static FusedTail
findTail(const Graph &G, const Node &N,
         const llvm::DenseMap<const Node *, const Node *> &Claimed) {
  FusedTail T;
  T.Result = N.getResult(0);
  T.Last = &N;
  if (N.getNumResults() != 1 ||
      !hasOpTrait(N.getOpId(), optrait::TakesActivation))
    return T;
  const Node *U = getSoleUser(G, T.Result);
  if (U && Claimed.count(U))
    U = nullptr;
  if (U && hasOpTrait(N.getOpId(), optrait::TakesResidual) &&
      U->getOpId() == OpId::Add && U->getNumOperands() == 2) {
    const Value *Other =
        U->getOperand(0) == T.Result ? U->getOperand(1) : U->getOperand(0);
    if (Other != T.Result &&
        haveSameBytes(Other->getType(), T.Result->getType()) &&
        haveSameBytes(U->getResult(0)->getType(), T.Result->getType())) {
      T.Residual = Other;
      T.Result = U->getResult(0);
      T.Last = U;
      T.Followers.push_back(U);
      U = getSoleUser(G, T.Result);
      if (U && Claimed.count(U))
        U = nullptr;
    }
  }
  // x * Sigmoid(x) (SiLU as exporters write it): x has exactly those two
  // users, and the Sigmoid only the Mul.
  if (!U && !G.isGraphOutput(T.Result) && T.Result->getUses().size() == 2) {
    const Node *Sig = nullptr, *Mul = nullptr;
    for (const Use &Us : T.Result->getUses()) {
      if (Us.User->getOpId() == OpId::Sigmoid)
        Sig = Us.User;
      else if (Us.User->getOpId() == OpId::Mul)
        Mul = Us.User;
    }
    if (Sig && Mul && !Claimed.count(Sig) && !Claimed.count(Mul) &&
        getSoleUser(G, Sig->getResult(0)) == Mul &&
        haveSameBytes(Sig->getResult(0)->getType(), T.Result->getType()) &&
        haveSameBytes(Mul->getResult(0)->getType(), T.Result->getType()) &&
        Mul->getNumOperands() == 2 &&
        ((Mul->getOperand(0) == T.Result &&
          Mul->getOperand(1) == Sig->getResult(0)) ||
         (Mul->getOperand(1) == T.Result &&
          Mul->getOperand(0) == Sig->getResult(0)))) {
      T.Act.Kind = ActKind::SiLU;
      T.Result = Mul->getResult(0);
      T.Last = Mul;
      T.Followers.push_back(Sig);
      T.Followers.push_back(Mul);
      return T;
    }
  }
  Activation A;
  if (U && getFusableActivation(*U, A) &&
      haveSameBytes(U->getResult(0)->getType(), T.Result->getType())) {
    T.Act = A;
    T.Result = U->getResult(0);
    T.Last = U;
    T.Followers.push_back(U);
  }
  return T;
}

FusionGroups
codegen::findFusionGroups(const Graph &G, llvm::ArrayRef<const Node *> Order,
                          llvm::function_ref<bool(const Node &)> IsLowerable) {
  FusionGroups Out;
  for (const Node *N : Order) {
    if (Out.GroupOf.count(N) || N->isOpaque() || !IsLowerable(*N))
      continue;
    FusedTail T = findTail(G, *N, Out.GroupOf);
    for (const Node *M : T.Followers)
      Out.GroupOf[M] = N;
    Out.Tails[N] = std::move(T);
  }
  return Out;
}
