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
  if (N.getNumResults() != 1)
    return T;
  auto NextUser = [&]() -> const Node * {
    const Node *U = getSoleUser(G, T.Result);
    return U && Claimed.count(U) ? nullptr : U;
  };
  const Node *U = NextUser();
  // The rescale: an integer result back to float, then optionally a
  // constant added; the residual and activation may follow it.
  const bool Rescales = hasOpTrait(N.getOpId(), optrait::TakesRescale);
  if (Rescales) {
    const Node *Mul = nullptr;
    if (U && U->getOpId() == OpId::Cast &&
        U->getResult(0)->getType().getElementType() == ElementType::F32 &&
        haveSameElementOrder(U->getResult(0)->getType(), T.Result->getType()))
      Mul = getSoleUser(G, U->getResult(0));
    if (!Mul || Claimed.count(Mul) || Mul->getOpId() != OpId::Mul ||
        Mul->getNumOperands() != 2 ||
        !haveSameBytes(Mul->getResult(0)->getType(),
                       U->getResult(0)->getType()))
      return T;
    const Value *Cast = U->getResult(0);
    const Value *Scale =
        Mul->getOperand(0) == Cast ? Mul->getOperand(1) : Mul->getOperand(0);
    if (Scale == Cast)
      return T;
    T.Scale = Scale;
    T.Result = Mul->getResult(0);
    T.Last = Mul;
    T.Followers.push_back(U);
    T.Followers.push_back(Mul);
    U = NextUser();
    if (U && U->getOpId() == OpId::Add && U->getNumOperands() == 2 &&
        haveSameBytes(U->getResult(0)->getType(), T.Result->getType())) {
      const Value *Other =
          U->getOperand(0) == T.Result ? U->getOperand(1) : U->getOperand(0);
      if (Other != T.Result && Other->getConstantData()) {
        T.Shift = Other;
        T.Result = U->getResult(0);
        T.Last = U;
        T.Followers.push_back(U);
        U = NextUser();
      }
    }
  } else if (!hasOpTrait(N.getOpId(), optrait::TakesActivation)) {
    return T;
  }
  if (U && (Rescales || hasOpTrait(N.getOpId(), optrait::TakesResidual)) &&
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
      U = NextUser();
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
