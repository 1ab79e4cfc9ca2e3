//===- Graph.cpp - Graph, Node and Value ----------------------------------===//
//
// Ownership, use lists and node ordering of the IR core.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Graph.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <algorithm>
#include <cassert>

using namespace strider;

//===----------------------------------------------------------------------===//
// Value
//===----------------------------------------------------------------------===//

const TensorData *Value::getConstantData() const {
  return getConstantDataRef().get();
}

TensorDataRef Value::getConstantDataRef() const {
  if (!Def || Def->getOpId() != OpId::Constant)
    return nullptr;
  const Attribute *A = Def->getAttr("value");
  if (!A || A->getKind() != AttrKind::Tensor)
    return nullptr;
  return A->getTensor();
}

void Value::setType(TensorType T) {
  Type = std::move(T);
  if (Def)
    ++Def->Version;
}

void Value::addUse(Node *User, unsigned Idx) { Uses.push_back({User, Idx}); }

void Value::removeUse(Node *User, unsigned Idx) {
  auto It = std::find(Uses.begin(), Uses.end(), Use{User, Idx});
  assert(It != Uses.end() && "use list out of sync");
  Uses.erase(It);
}

void Value::replaceAllUsesWith(Value *New) {
  assert(New != this && "replacing a value with itself");
  // Copy: setOperand edits this use list.
  std::vector<Use> Old = Uses;
  for (const Use &U : Old)
    U.User->setOperand(U.OperandIndex, New);
}

//===----------------------------------------------------------------------===//
// Node
//===----------------------------------------------------------------------===//

Node::~Node() {
  for (unsigned I = 0; I < Operands.size(); ++I)
    if (Operands[I])
      Operands[I]->removeUse(this, I);
}

const OpInfo *Node::getInfo() const {
  return Id == OpId::Opaque ? nullptr : &getOpInfo(Id);
}

llvm::StringRef Node::getOpType() const {
  return Id == OpId::Opaque ? llvm::StringRef(OpaqueType) : getOpInfo(Id).Name;
}

void Node::setOperand(unsigned I, Value *V) {
  assert(I < Operands.size() && "operand index out of range");
  if (Operands[I])
    Operands[I]->removeUse(this, I);
  Operands[I] = V;
  if (V)
    V->addUse(this, I);
  ++Version;
}

void Node::addOperand(Value *V) {
  ++Version;
  Operands.push_back(V);
  if (V)
    V->addUse(this, Operands.size() - 1);
}

void Node::trimTrailingNullOperands() {
  while (!Operands.empty() && !Operands.back()) {
    Operands.pop_back();
    ++Version;
  }
}

void Node::dropAllOperands() {
  for (unsigned I = 0; I < Operands.size(); ++I)
    setOperand(I, nullptr);
}

const Attribute *Node::getAttr(llvm::StringRef Name) const {
  auto It = llvm::lower_bound(
      Attrs, Name, [](const NamedAttribute &A, llvm::StringRef N) {
        return llvm::StringRef(A.Name) < N;
      });
  if (It == Attrs.end() || It->Name != Name)
    return nullptr;
  return &It->Value;
}

void Node::setAttr(llvm::StringRef Name, Attribute A) {
  auto It = llvm::lower_bound(
      Attrs, Name, [](const NamedAttribute &X, llvm::StringRef N) {
        return llvm::StringRef(X.Name) < N;
      });
  if (It != Attrs.end() && It->Name == Name)
    It->Value = std::move(A);
  else
    Attrs.insert(It, NamedAttribute{Name.str(), std::move(A)});
  ++Version;
}

void Node::removeAttr(llvm::StringRef Name) {
  llvm::erase_if(Attrs, [&](const NamedAttribute &A) { return A.Name == Name; });
  ++Version;
}

int64_t Node::getIntAttr(llvm::StringRef Name, int64_t Default) const {
  const Attribute *A = getAttr(Name);
  return A && A->getKind() == AttrKind::Int ? A->getInt() : Default;
}

float Node::getFloatAttr(llvm::StringRef Name, float Default) const {
  const Attribute *A = getAttr(Name);
  return A && A->getKind() == AttrKind::Float ? A->getFloat() : Default;
}

std::string Node::getStringAttr(llvm::StringRef Name,
                                llvm::StringRef Default) const {
  const Attribute *A = getAttr(Name);
  return A && A->getKind() == AttrKind::String ? A->getString()
                                               : Default.str();
}

std::vector<int64_t> Node::getIntsAttr(llvm::StringRef Name,
                                       std::vector<int64_t> Default) const {
  const Attribute *A = getAttr(Name);
  return A && A->getKind() == AttrKind::Ints ? A->getInts() : Default;
}

//===----------------------------------------------------------------------===//
// Graph
//===----------------------------------------------------------------------===//

Graph::Graph(std::string Name) : Name(std::move(Name)) {}

Graph::~Graph() {
  // Drop every use first so that node destruction order does not matter.
  for (auto &N : Nodes)
    N->dropAllOperands();
  Nodes.clear();
}

Value *Graph::addInput(llvm::StringRef Name, TensorType Type) {
  assert(!ValueNames.count(Name) && "duplicate value name");
  std::unique_ptr<Value> V(new Value(this, Name.str(), std::move(Type)));
  Value *Raw = V.get();
  InputStorage.push_back(std::move(V));
  InputRefs.push_back(Raw);
  ValueNames[Name] = Raw;
  return Raw;
}

void Graph::eraseInput(Value *V) {
  assert(V->isGraphInput() && !V->hasUses() && !isGraphOutput(V) &&
         "erasing a graph input that is still used");
  ValueNames.erase(V->getName());
  llvm::erase_value(InputRefs, V);
  llvm::erase_if(InputStorage,
                 [&](const std::unique_ptr<Value> &P) { return P.get() == V; });
}

bool Graph::isGraphOutput(const Value *V) const {
  return llvm::is_contained(Outputs, V);
}

Node *Graph::insertNode(std::unique_ptr<Node> N,
                        llvm::ArrayRef<Value *> Operands,
                        llvm::ArrayRef<std::string> ResultNames,
                        llvm::ArrayRef<TensorType> ResultTypes,
                        Node *InsertBefore) {
  assert(ResultNames.size() == ResultTypes.size() &&
         "one type per result name");
  Node *Raw = N.get();
  Raw->Serial = ++LastSerial;
  for (Value *V : Operands)
    Raw->addOperand(V);
  for (unsigned I = 0; I < ResultNames.size(); ++I) {
    if (ResultNames[I].empty()) {
      Raw->Results.emplace_back();
      continue;
    }
    assert(!ValueNames.count(ResultNames[I]) && "duplicate value name");
    std::unique_ptr<Value> V(new Value(this, ResultNames[I], ResultTypes[I]));
    V->Def = Raw;
    V->ResultIndex = I;
    ValueNames[ResultNames[I]] = V.get();
    Raw->Results.push_back(std::move(V));
  }
  auto Pos = InsertBefore ? InsertBefore->Self : Nodes.end();
  Raw->Self = Nodes.insert(Pos, std::move(N));
  return Raw;
}

Node *Graph::createNode(OpId Id, llvm::ArrayRef<Value *> Operands,
                        llvm::ArrayRef<std::string> ResultNames,
                        llvm::ArrayRef<TensorType> ResultTypes,
                        Node *InsertBefore) {
  assert(Id != OpId::Opaque && "use createOpaqueNode");
  std::unique_ptr<Node> N(new Node(this, Id, "", ""));
  return insertNode(std::move(N), Operands, ResultNames, ResultTypes,
                    InsertBefore);
}

Node *Graph::createOpaqueNode(llvm::StringRef Domain, llvm::StringRef OpType,
                              llvm::ArrayRef<Value *> Operands,
                              llvm::ArrayRef<std::string> ResultNames,
                              llvm::ArrayRef<TensorType> ResultTypes,
                              Node *InsertBefore) {
  std::unique_ptr<Node> N(
      new Node(this, OpId::Opaque, OpType.str(), Domain.str()));
  return insertNode(std::move(N), Operands, ResultNames, ResultTypes,
                    InsertBefore);
}

void Graph::eraseNode(Node *N) {
  assert(N->getGraph() == this && "node of another graph");
  for (auto &R : N->Results) {
    if (!R)
      continue;
    assert(!R->hasUses() && "cannot erase a node whose results have uses");
    assert(!isGraphOutput(R.get()) && "cannot erase a graph output's producer");
    ValueNames.erase(R->getName());
  }
  N->dropAllOperands();
  Nodes.erase(N->Self);
}

void Graph::moveBefore(Node *N, Node *Before) {
  Nodes.splice(Before->Self, Nodes, N->Self);
}

Node *Graph::rebuildNode(Node *Old, llvm::ArrayRef<TensorType> ResultTypes) {
  assert(Old->getGraph() == this && "node of another graph");
  assert(ResultTypes.size() == Old->Results.size() && "one type per result");
  std::unique_ptr<Node> N(new Node(this, Old->Id, Old->OpaqueType, Old->Domain));
  Node *Raw = N.get();
  Raw->Serial = ++LastSerial;
  for (Value *V : Old->Operands)
    Raw->addOperand(V);
  Raw->Attrs = Old->Attrs;
  Raw->Loc = Old->Loc;
  Raw->DocString = Old->DocString;
  for (unsigned I = 0; I < Old->Results.size(); ++I) {
    if (!Old->Results[I]) {
      Raw->Results.emplace_back();
      continue;
    }
    std::unique_ptr<Value> V(
        new Value(this, Old->Results[I]->Name, ResultTypes[I]));
    V->Def = Raw;
    V->ResultIndex = I;
    Raw->Results.push_back(std::move(V));
  }
  Raw->Self = Nodes.insert(Old->Self, std::move(N));
  // The new results take over the old ones' names, uses and output slots.
  for (unsigned I = 0; I < Old->Results.size(); ++I) {
    Value *From = Old->Results[I].get();
    if (!From)
      continue;
    Value *To = Raw->Results[I].get();
    From->replaceAllUsesWith(To);
    for (Value *&Out : Outputs)
      if (Out == From)
        Out = To;
    ValueNames[To->Name] = To;
  }
  Old->dropAllOperands();
  Nodes.erase(Old->Self);
  return Raw;
}

std::vector<Node *> Graph::getNodeList() const {
  std::vector<Node *> R;
  R.reserve(Nodes.size());
  for (const auto &N : Nodes)
    R.push_back(N.get());
  return R;
}

void Graph::renameValue(Value *V, llvm::StringRef NewName) {
  assert(V->getGraph() == this && "value of another graph");
  assert(!ValueNames.count(NewName) && "duplicate value name");
  ValueNames.erase(V->Name);
  V->Name = NewName.str();
  ValueNames[V->Name] = V;
}

Value *Graph::lookupValue(llvm::StringRef Name) const {
  auto It = ValueNames.find(Name);
  return It == ValueNames.end() ? nullptr : It->second;
}

std::string Graph::makeUniqueName(llvm::StringRef Base) const {
  if (!Base.empty() && !ValueNames.count(Base))
    return Base.str();
  for (unsigned I = 1;; ++I) {
    std::string Candidate = (Base + "_" + llvm::Twine(I)).str();
    if (!ValueNames.count(Candidate))
      return Candidate;
  }
}

std::unique_ptr<Graph> Graph::clone() const {
  auto G = std::make_unique<Graph>(Name);
  G->SourceFile = SourceFile;
  G->Info = Info;
  // Sized once: the name table, the value map, every vector of a node
  // and every use list as the original's (a clone is made per shape).
  G->ValueNames = llvm::StringMap<Value *>(unsigned(ValueNames.size()));
  llvm::DenseMap<const Value *, Value *> Map;
  Map.reserve(unsigned(ValueNames.size() + InputRefs.size()));
  for (const Value *In : InputRefs) {
    Value *V = G->addInput(In->getName(), In->getType());
    V->setDefaultData(In->getDefaultData());
    V->Uses.reserve(In->Uses.size());
    Map[In] = V;
  }
  for (const auto &N : Nodes) {
    std::unique_ptr<Node> Copy(
        new Node(G.get(), N->Id, N->OpaqueType, N->Domain));
    Node *C = Copy.get();
    C->Serial = ++G->LastSerial;
    C->Operands.reserve(N->Operands.size());
    for (Value *V : N->Operands)
      C->addOperand(V ? Map.lookup(V) : nullptr);
    C->Results.reserve(N->Results.size());
    for (unsigned I = 0; I < N->Results.size(); ++I) {
      const Value *R = N->Results[I].get();
      if (!R) {
        C->Results.emplace_back();
        continue;
      }
      std::unique_ptr<Value> V(new Value(G.get(), R->Name, R->Type));
      V->Def = C;
      V->ResultIndex = I;
      V->Uses.reserve(R->Uses.size());
      G->ValueNames.try_emplace(V->Name, V.get());
      Map[R] = V.get();
      C->Results.push_back(std::move(V));
    }
    C->Attrs = N->Attrs;
    C->Loc = N->Loc;
    C->DocString = N->DocString;
    C->Self = G->Nodes.insert(G->Nodes.end(), std::move(Copy));
  }
  for (const Value *Out : Outputs)
    G->addOutput(Map.lookup(Out));
  return G;
}

bool Graph::sortTopologically() {
  // Kahn's algorithm, taking ready nodes in their current order so that an
  // already sorted graph keeps its order.
  std::vector<Node *> Order = getNodeList();
  llvm::DenseMap<Node *, unsigned> Position, Pending;
  for (unsigned I = 0; I < Order.size(); ++I)
    Position[Order[I]] = I;
  for (Node *N : Order) {
    llvm::SmallPtrSet<Node *, 4> Producers;
    for (Value *V : N->getOperands())
      if (V && V->getDefiningNode())
        Producers.insert(V->getDefiningNode());
    Pending[N] = Producers.size();
  }
  // Min-heap on original position.
  auto Later = [&](Node *A, Node *B) { return Position[A] > Position[B]; };
  std::vector<Node *> Ready;
  for (Node *N : Order)
    if (Pending[N] == 0)
      Ready.push_back(N);
  std::make_heap(Ready.begin(), Ready.end(), Later);
  std::vector<Node *> Sorted;
  while (!Ready.empty()) {
    std::pop_heap(Ready.begin(), Ready.end(), Later);
    Node *N = Ready.back();
    Ready.pop_back();
    Sorted.push_back(N);
    llvm::SmallPtrSet<Node *, 8> Consumers;
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (Value *R = N->getResult(I))
        for (const Use &U : R->getUses())
          Consumers.insert(U.User);
    // Visit consumers in position order for determinism.
    std::vector<Node *> C(Consumers.begin(), Consumers.end());
    llvm::sort(C, [&](Node *A, Node *B) { return Position[A] < Position[B]; });
    for (Node *Cons : C)
      if (--Pending[Cons] == 0) {
        Ready.push_back(Cons);
        std::push_heap(Ready.begin(), Ready.end(), Later);
      }
  }
  if (Sorted.size() != Order.size())
    return false;
  for (Node *N : Sorted)
    Nodes.splice(Nodes.end(), Nodes, N->Self);
  return true;
}
