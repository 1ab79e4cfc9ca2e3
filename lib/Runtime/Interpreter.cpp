//===- Interpreter.cpp - The reference interpreter ------------------------===//
//
// Checks that a graph is executable (static shapes, known element types,
// a kernel for every op), binds the caller's inputs, and runs the nodes in
// order through the kernel table, freeing each tensor after its last use.
//
//===----------------------------------------------------------------------===//

#include "strider/Runtime/Reference.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/Support/Memory.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <vector>

using namespace strider;
using namespace strider::runtime;

namespace {

const char *const BindDimsHint =
    "bind symbolic dims (--dim) and infer shapes first";

/// The type as seen by callers: logical shape and element type only.
TensorType logicalType(ElementType Elt, llvm::ArrayRef<int64_t> Shape) {
  return TensorType::get(Elt, Shape);
}

std::string qualifiedOpName(const Node &N) {
  std::string Name = N.getOpType().str();
  if (!N.getDomain().empty())
    Name = N.getDomain().str() + "." + Name;
  return Name;
}

/// Why a value of type \p T cannot be executed, or an empty string.
std::string checkExecutableType(const TensorType &T) {
  if (!T.hasStaticShape())
    return std::string("has a non-static shape ") + T.str() + ": " +
           BindDimsHint;
  if (T.getElementType() == ElementType::Unknown)
    return "has an unknown element type";
  return "";
}

llvm::Error checkGraph(const Graph &G) {
  for (const Value *In : G.getInputs()) {
    std::string Why = checkExecutableType(In->getType());
    if (!Why.empty())
      return makeGraphError(G, "input '" + In->getName() + "' " + Why);
  }
  for (const Node *N : G.nodes()) {
    for (unsigned I = 0, E = N->getNumResults(); I != E; ++I) {
      if (!N->hasResult(I))
        continue;
      const Value *R = N->getResult(I);
      std::string Why = checkExecutableType(R->getType());
      if (!Why.empty())
        return makeNodeError(*N, "result '" + R->getName() + "' " + Why);
    }
    if (N->isOpaque() || !lookupReferenceKernel(N->getOpId()))
      return makeNodeError(*N, "no reference kernel for op '" +
                                   qualifiedOpName(*N) + "'");
  }
  return llvm::Error::success();
}

/// The tensor bound to graph input \p In: the caller's (relaid into the
/// declared layout) or the input's default data.
llvm::Expected<Tensor> bindInput(const Graph &G, const Value &In,
                                 const TensorMap &Inputs) {
  const TensorType &T = In.getType();
  TensorType Expected = logicalType(T.getElementType(), T.getStaticShape());
  auto It = Inputs.find(In.getName());
  if (It == Inputs.end()) {
    if (!In.getDefaultData())
      return makeGraphError(G, "missing input '" + In.getName() + "' of type " +
                                   Expected.str());
    Tensor D = Tensor::fromData(*In.getDefaultData());
    if (D.getElementType() != T.getElementType() ||
        D.getShape() != llvm::makeArrayRef(Expected.getStaticShape()))
      return makeGraphError(G, "default data of input '" + In.getName() +
                                   "' has type " + D.getType().str() +
                                   ", expected " + Expected.str());
    return D.withLayout(T.getLayout());
  }
  const Tensor &Given = It->second;
  llvm::SmallVector<int64_t, 6> Shape = T.getStaticShape();
  if (Given.getElementType() != T.getElementType() ||
      Given.getShape() != llvm::makeArrayRef(Shape))
    return makeGraphError(
        G, "input '" + In.getName() + "' has type " +
               (Given.getElementType() == ElementType::Unknown
                    ? std::string("<empty>")
                    : logicalType(Given.getElementType(), Given.getShape())
                          .str()) +
               ", expected " + Expected.str());
  return Given.withLayout(T.getLayout());
}

/// Position in \p Order of the last node reading each value.
llvm::DenseMap<const Value *, size_t>
getLastUses(llvm::ArrayRef<const Node *> Order) {
  llvm::DenseMap<const Value *, size_t> LastUse;
  for (size_t I = 0, E = Order.size(); I != E; ++I)
    for (const Value *Op : Order[I]->getOperands())
      if (Op)
        LastUse[Op] = I;
  return LastUse;
}

/// Whether runReference keeps \p V once made: it is read later or is a
/// graph output.
bool isKept(const Value &V, const llvm::DenseSet<const Value *> &Outputs) {
  return V.hasUses() || Outputs.count(&V);
}

} // namespace

std::optional<uint64_t> runtime::getReferencePeakBytes(const Graph &G,
                                                       const Node **PeakNode) {
  auto BytesOf = [](const Value &V) -> std::optional<uint64_t> {
    const TensorType &T = V.getType();
    if (!T.hasStaticShape() || !T.isWithinSizeLimit())
      return std::nullopt;
    return uint64_t(*T.getNumElements()) *
           getElementByteSize(T.getElementType());
  };
  std::vector<const Node *> Order(G.nodes().begin(), G.nodes().end());
  llvm::DenseMap<const Value *, size_t> LastUse = getLastUses(Order);
  llvm::DenseSet<const Value *> Outputs(G.getOutputs().begin(),
                                        G.getOutputs().end());
  // Each size is at most 2^62 bytes (isWithinSizeLimit); a sum that
  // reaches MaxRunBytes ends the walk (that run is refused whatever it
  // frees later), so nothing wraps.
  uint64_t Live = 0;
  for (const Value *In : G.getInputs()) {
    auto B = BytesOf(*In);
    if (!B)
      return std::nullopt;
    if (isKept(*In, Outputs))
      Live = addSaturated(Live, *B);
  }
  uint64_t Peak = Live;
  if (PeakNode)
    *PeakNode = nullptr;
  if (Peak == MaxRunBytes)
    return Peak;
  for (size_t I = 0, E = Order.size(); I != E; ++I) {
    const Node &N = *Order[I];
    uint64_t Made = 0, Kept = 0;
    for (unsigned R = 0, RE = N.getNumResults(); R != RE; ++R) {
      if (!N.hasResult(R))
        continue;
      const Value &V = *N.getResult(R);
      auto B = BytesOf(V);
      if (!B)
        return std::nullopt;
      Made = addSaturated(Made, *B);
      if (isKept(V, Outputs))
        Kept = addSaturated(Kept, *B);
    }
    if (addSaturated(Live, Made) > Peak) {
      Peak = addSaturated(Live, Made);
      if (PeakNode)
        *PeakNode = &N;
    }
    if (Peak == MaxRunBytes)
      return Peak;
    llvm::DenseSet<const Value *> Freed;
    for (const Value *Op : N.getOperands())
      if (Op && LastUse.lookup(Op) == I && !Outputs.count(Op) &&
          Freed.insert(Op).second)
        Live -= *BytesOf(*Op);
    Live += Kept;
  }
  return Peak;
}

llvm::Expected<TensorMap> runtime::runReference(const Graph &G,
                                                const TensorMap &Inputs) {
  if (llvm::Error E = checkGraph(G))
    return E;

  for (const auto &KV : Inputs) {
    const Value *V = G.lookupValue(KV.first);
    if (!V || !V->isGraphInput())
      return makeGraphError(G, "unknown input '" + KV.first + "'");
  }

  std::vector<const Node *> Order(G.nodes().begin(), G.nodes().end());
  llvm::DenseMap<const Value *, size_t> LastUse = getLastUses(Order);
  llvm::DenseSet<const Value *> Outputs(G.getOutputs().begin(),
                                        G.getOutputs().end());

  llvm::DenseMap<const Value *, Tensor> Live;
  for (const Value *In : G.getInputs()) {
    llvm::Expected<Tensor> T = bindInput(G, *In, Inputs);
    if (!T)
      return T.takeError();
    if (In->hasUses() || Outputs.count(In))
      Live[In] = std::move(*T);
  }

  for (size_t I = 0, E = Order.size(); I != E; ++I) {
    const Node &N = *Order[I];
    llvm::SmallVector<const Tensor *, 4> Operands;
    for (const Value *Op : N.getOperands()) {
      if (!Op) {
        Operands.push_back(nullptr);
        continue;
      }
      auto It = Live.find(Op);
      assert(It != Live.end() && "operand used before its definition");
      Operands.push_back(&It->second);
    }
    std::vector<Tensor> Results(N.getNumResults());
    for (unsigned R = 0, RE = N.getNumResults(); R != RE; ++R)
      if (N.hasResult(R))
        Results[R] = Tensor::zeros(N.getResult(R)->getType());

    ReferenceKernel Kernel = lookupReferenceKernel(N.getOpId());
    assert(Kernel && "checked by checkGraph");
    if (llvm::Error Err = Kernel(N, Operands, Results))
      return Err;

    for (const Value *Op : N.getOperands())
      if (Op && LastUse.lookup(Op) == I && !Outputs.count(Op))
        Live.erase(Op);
    for (unsigned R = 0, RE = N.getNumResults(); R != RE; ++R) {
      const Value *V = N.getResult(R);
      if (!V || !isKept(*V, Outputs))
        continue;
      assert(Results[R].getType() == V->getType() &&
             "kernel changed its result's type");
      Live[V] = std::move(Results[R]);
    }
  }

  TensorMap Out;
  for (const Value *V : G.getOutputs()) {
    auto It = Live.find(V);
    assert(It != Live.end() && "graph output was never computed");
    Out[V->getName()] = It->second;
  }
  return Out;
}
