//===- Lowering.cpp - The lowering driver every backend shares ------------===//

#include "strider/CodeGen/Lowering.h"
#include "strider/CodeGen/MemoryPlan.h"
#include "strider/CodeGen/TensorGeometry.h"
#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/TensorData.h"
#include "strider/Support/Memory.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstring>

using namespace strider;
using namespace strider::codegen;

int64_t codegen::getByteSize(const TensorType &T) {
  return T.getNumElements().getValueOr(0) *
         int64_t(getElementByteSize(T.getElementType()));
}

/// The node of \p G with the largest result (static types), that result's
/// index and its bytes; null when none has a static size.
static const Node *findLargestResult(const Graph &G, unsigned &Result,
                                     int64_t &Bytes) {
  const Node *Largest = nullptr;
  Bytes = 0;
  for (const Node *N : G.nodes())
    for (unsigned R = 0, E = N->getNumResults(); R != E; ++R)
      if (N->hasResult(R)) {
        int64_t B = getByteSize(N->getResult(R)->getType());
        if (B > Bytes) {
          Bytes = B;
          Largest = N;
          Result = R;
        }
      }
  return Largest;
}

/// \p Why located at \p Largest (null: at \p G), naming its result \p R.
static llvm::Error locateTooBig(const Graph &G, const Node *Largest,
                                unsigned R, const std::string &Why) {
  if (!Largest)
    return makeGraphError(G, Why);
  return makeNodeError(*Largest,
                       Why + "; the largest tensor is this node's result '" +
                           Largest->getResult(R)->getName() + "', " +
                           Largest->getResult(R)->getType().str());
}

llvm::Error codegen::checkLargestTensor(const Graph &G, uint64_t MaxMemory,
                                        llvm::StringRef What) {
  unsigned Result = 0;
  int64_t Most = 0;
  const Node *Largest = findLargestResult(G, Result, Most);
  if (!Largest)
    return llvm::Error::success();
  std::string TooBig = checkMemoryBudget(uint64_t(Most), What, MaxMemory);
  if (TooBig.empty())
    return llvm::Error::success();
  return locateTooBig(G, Largest, Result, TooBig);
}

llvm::Error codegen::makeTooBigError(const Graph &G, const std::string &Why) {
  unsigned Result = 0;
  int64_t Most = 0;
  const Node *Largest = findLargestResult(G, Result, Most);
  return locateTooBig(G, Largest, Result, Why);
}

std::vector<int64_t> codegen::getConstantInts(const Node &N, unsigned I) {
  if (!N.hasOperand(I))
    return {};
  const TensorData *D = N.getOperand(I)->getConstantData();
  return D ? D->toInt64Vector() : std::vector<int64_t>();
}

bool codegen::getSliceView(const Node &N, int64_t &Offset,
                           llvm::SmallVectorImpl<int64_t> &Strides) {
  const TensorType &XT = N.getOperand(0)->getType();
  const int64_t R = XT.getRank();
  std::vector<int64_t> Starts = getConstantInts(N, 1),
                       Ends = getConstantInts(N, 2);
  std::vector<int64_t> Axes = getConstantInts(N, 3),
                       Steps = getConstantInts(N, 4);
  if (!XT.hasStaticShape() || Starts.empty() || Starts.size() != Ends.size() ||
      (N.hasOperand(3) && Axes.size() != Starts.size()) ||
      (N.hasOperand(4) && Steps.size() != Starts.size()))
    return false;
  auto XShape = XT.getStaticShape();
  auto XS = getStrides(XT);
  Strides.assign(XS.begin(), XS.end());
  Offset = 0;
  for (size_t I = 0; I < Starts.size(); ++I) {
    int64_t A = Axes.empty() ? int64_t(I) : Axes[I];
    if (A < 0)
      A += R;
    const int64_t Step = Steps.empty() ? 1 : Steps[I];
    if (A < 0 || A >= R || Step == 0)
      return false;
    const int64_t Dim = XShape[size_t(A)];
    int64_t S = Starts[I];
    if (S < 0)
      S += Dim;
    S = Step > 0 ? std::min(std::max<int64_t>(S, 0), Dim)
                 : std::min(std::max<int64_t>(S, 0), Dim - 1);
    Offset += S * XS[size_t(A)];
    Strides[size_t(A)] = Step * XS[size_t(A)];
  }
  return true;
}

int64_t codegen::getAxisAttr(const Node &N, int64_t R, int64_t Default) {
  int64_t Axis = N.getIntAttr("axis", Default);
  if (Axis < 0)
    Axis += R;
  return Axis >= 0 && Axis < R ? Axis : -1;
}

std::vector<float> codegen::getConstantFloats(const Value *V, bool WidenHalf) {
  const TensorData *D = V ? V->getConstantData() : nullptr;
  if (!D)
    return {};
  const ElementType E = D->getElementType();
  const bool Half = E == ElementType::F16 || E == ElementType::BF16;
  if (E != ElementType::F32 && !(WidenHalf && Half))
    return {};
  // A row-major f32 constant is copied once, straight from its data: the
  // tensor detour makes two more copies of what may be many megabytes of
  // fresh pages (a 512 x 8210 classifier weight spent most of a model's
  // first build there).
  if (E == ElementType::F32 && D->getType().getLayout() == Layout()) {
    const auto Bytes = D->getBytes();
    std::vector<float> Out(Bytes.size() / sizeof(float));
    if (!Out.empty())
      std::memcpy(Out.data(), Bytes.data(), Out.size() * sizeof(float));
    return Out;
  }
  runtime::Tensor T = runtime::Tensor::fromData(*D).withLayout(Layout());
  std::vector<float> Out(size_t(T.getNumElements()));
  if (E == ElementType::F32 && !Out.empty())
    std::memcpy(Out.data(), T.getBytes().data(), Out.size() * sizeof(float));
  else
    for (size_t I = 0; I < Out.size(); ++I)
      Out[I] = float(T.getDouble(int64_t(I)));
  return Out;
}

ProgramOrder::ProgramOrder(const Graph &G, llvm::ArrayRef<const Node *> Order,
                           const FusionGroups &Groups)
    : G(G) {
  for (size_t I = 0; I < Order.size(); ++I)
    NodeIndex[Order[I]] = I;
  for (const auto &KV : Groups.Tails) {
    if (KV.second.Followers.empty())
      continue;
    const size_t Run = getNodeIndex(KV.second.Last);
    RunIndex[KV.first] = Run;
    for (const Node *M : KV.second.Followers)
      RunIndex[M] = Run;
  }
}

bool ProgramOrder::canOverwrite(const Value *V, size_t Index) const {
  if (!V || V->isGraphInput() || G.isGraphOutput(V) || V->getConstantData())
    return false;
  const Node *Def = V->getDefiningNode();
  // A value sharing its buffer with another (views) may be read through
  // that other name later.
  if (hasOpTrait(Def->getOpId(), optrait::View))
    return false;
  for (const Use &U : V->getUses()) {
    if (hasOpTrait(U.User->getOpId(), optrait::View))
      return false;
    if (getRunIndex(U.User) > Index)
      return false;
  }
  return true;
}

llvm::Error codegen::lowerNodes(llvm::ArrayRef<const Node *> Order,
                                const FusionGroups &Groups, LowerNodeFn Lower,
                                DeclinedFn Declined) {
  auto Alone = [&](const Node &N) {
    FusedTail Plain;
    Plain.Result = N.getNumResults() ? N.getResult(0) : nullptr;
    Plain.Last = &N;
    llvm::Error E = Lower(N, Plain);
    return E ? Declined(N, std::move(E)) : llvm::Error::success();
  };
  for (const Node *N : Order) {
    const Node *Producer = Groups.GroupOf.lookup(N);
    if (!Producer)
      Producer = N;
    auto It = Groups.Tails.find(Producer);
    if (It == Groups.Tails.end()) {
      if (llvm::Error E = Alone(*N))
        return E;
      continue;
    }
    const FusedTail &T = It->second;
    if (T.Last != N)
      continue; // Lowered at its last node.
    llvm::Error Fused = Lower(*Producer, T);
    if (!Fused)
      continue;
    if (T.Followers.empty()) {
      if (llvm::Error E = Declined(*N, std::move(Fused)))
        return E;
      continue;
    }
    // The fused form was declined (nothing added): the members one by one.
    llvm::consumeError(std::move(Fused));
    llvm::SmallVector<const Node *, 3> Members{Producer};
    Members.append(T.Followers.begin(), T.Followers.end());
    for (const Node *M : Members)
      if (llvm::Error E = Alone(*M))
        return E;
  }
  return llvm::Error::success();
}

ArenaPlan codegen::planArena(llvm::ArrayRef<int64_t> Bytes,
                             llvm::ArrayRef<uint8_t> Planned,
                             llvm::ArrayRef<StepBuffers> Steps,
                             llvm::ArrayRef<int> Inputs,
                             llvm::ArrayRef<int> Outputs, int64_t Alignment) {
  const int NumSteps = int(Steps.size());
  std::vector<int> Begin(Bytes.size(), NumSteps + 1), End(Bytes.size(), -1);
  for (int B : Inputs)
    Begin[size_t(B)] = -1;
  for (int S = 0; S < NumSteps; ++S) {
    for (int B : Steps[size_t(S)].Writes) {
      Begin[size_t(B)] = std::min(Begin[size_t(B)], S);
      End[size_t(B)] = std::max(End[size_t(B)], S);
    }
    for (int B : Steps[size_t(S)].Reads)
      End[size_t(B)] = std::max(End[size_t(B)], S);
  }
  for (int B : Outputs)
    End[size_t(B)] = NumSteps;
  std::vector<BufferRequest> Requests;
  std::vector<size_t> Ids;
  for (size_t B = 0; B < Bytes.size(); ++B) {
    if (!Planned[B])
      continue;
    BufferRequest R;
    R.Bytes = Bytes[B];
    // A buffer never written (an input nobody reads) lives where it ends.
    R.Begin = Begin[B] > NumSteps ? End[B] : Begin[B];
    R.End = std::max(End[B], R.Begin);
    Requests.push_back(R);
    Ids.push_back(B);
  }
  MemoryPlan Plan = planMemory(Requests, Alignment);
  ArenaPlan Out;
  Out.Offsets.assign(Bytes.size(), 0);
  for (size_t I = 0; I < Ids.size(); ++I)
    Out.Offsets[Ids[I]] = Plan.Offsets[I];
  Out.ArenaBytes = Plan.ArenaBytes;
  return Out;
}

ArenaPlan codegen::planArena(llvm::ArrayRef<int64_t> Bytes,
                             llvm::ArrayRef<uint8_t> Planned,
                             llvm::ArrayRef<StepBuffers> Steps,
                             llvm::ArrayRef<IOBinding> Inputs,
                             llvm::ArrayRef<IOBinding> Outputs,
                             int64_t Alignment) {
  std::vector<int> InIds, OutIds;
  for (const IOBinding &B : Inputs)
    InIds.push_back(B.Buffer);
  for (const IOBinding &B : Outputs)
    OutIds.push_back(B.Buffer);
  return planArena(Bytes, Planned, Steps, InIds, OutIds, Alignment);
}

llvm::Expected<std::vector<const runtime::Tensor *>>
codegen::bindInputs(llvm::ArrayRef<IOBinding> Bindings,
                    const std::map<std::string, runtime::Tensor> &Inputs,
                    std::vector<runtime::Tensor> &Made) {
  for (const auto &KV : Inputs)
    if (llvm::none_of(Bindings,
                      [&](const IOBinding &B) { return B.Name == KV.first; }))
      return makeError("unknown input '" + KV.first + "'");
  Made.assign(Bindings.size(), runtime::Tensor());
  std::vector<const runtime::Tensor *> Bound(Bindings.size(), nullptr);
  for (size_t K = 0; K < Bindings.size(); ++K) {
    const IOBinding &B = Bindings[K];
    TensorType Logical =
        TensorType::get(B.Type.getElementType(), B.Type.getStaticShape());
    auto It = Inputs.find(B.Name);
    const runtime::Tensor *T = nullptr;
    if (It == Inputs.end()) {
      if (!B.Default)
        return makeError("missing input '" + B.Name + "' of type " +
                         Logical.str());
      Made[K] = runtime::Tensor::fromData(*B.Default);
      T = &Made[K];
    } else {
      T = &It->second;
    }
    if (T->getElementType() != B.Type.getElementType() ||
        T->getShape() != llvm::makeArrayRef(B.Type.getStaticShape()))
      return makeError(
          "input '" + B.Name + "' has type " +
          (T->getElementType() == ElementType::Unknown
               ? std::string("<empty>")
               : TensorType::get(T->getElementType(), T->getShape()).str()) +
          ", expected " + Logical.str());
    if (!(T->getLayout() == B.Type.getLayout())) {
      Made[K] = T->withLayout(B.Type.getLayout());
      T = &Made[K];
    }
    Bound[K] = T;
  }
  return Bound;
}
