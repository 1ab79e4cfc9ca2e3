//===- Graph.h - Graph, Node and Value --------------------------*- C++ -*-===//
//
// The IR core. A Graph owns Nodes (kept in topological order) and its input
// Values; each Node owns its result Values. Values know their users.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_GRAPH_H
#define STRIDER_IR_GRAPH_H

#include "strider/IR/Attribute.h"
#include "strider/IR/OpInfo.h"
#include "strider/IR/Types.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/iterator_range.h"

#include <list>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace strider {

class Graph;
class Node;

/// Where a node came from: the model file and the ONNX node name.
struct Location {
  std::string File;
  std::string Name;
  bool operator==(const Location &O) const {
    return File == O.File && Name == O.Name;
  }
};

/// One use of a value: operand \p OperandIndex of \p User.
struct Use {
  Node *User;
  unsigned OperandIndex;
  bool operator==(const Use &O) const {
    return User == O.User && OperandIndex == O.OperandIndex;
  }
};

/// An SSA value: a graph input or a node result. Names are unique in their
/// graph (they are the ONNX value names).
class Value {
public:
  const std::string &getName() const { return Name; }
  const TensorType &getType() const { return Type; }
  /// Replace the type. Shape inference and the parser use this; passes that
  /// change a value's layout build a new node instead.
  /// Sets the type (and counts a change of its defining node, see
  /// Node::getVersion).
  void setType(TensorType T);

  /// The node producing this value; null for graph inputs.
  Node *getDefiningNode() const { return Def; }
  unsigned getResultIndex() const { return ResultIndex; }
  bool isGraphInput() const { return Def == nullptr; }

  /// Default data of a graph input that is also an initializer (callers
  /// may override it); null otherwise.
  const TensorDataRef &getDefaultData() const { return Default; }
  void setDefaultData(TensorDataRef D) { Default = std::move(D); }

  /// Constant contents if this value is the result of a Constant node.
  const TensorData *getConstantData() const;
  /// The same data as a shared reference (null when not a constant), for
  /// callers that keep it.
  TensorDataRef getConstantDataRef() const;

  llvm::ArrayRef<Use> getUses() const { return Uses; }
  bool hasUses() const { return !Uses.empty(); }
  /// Redirect every use of this value to \p New.
  void replaceAllUsesWith(Value *New);

  Graph *getGraph() const { return Parent; }

private:
  friend class Graph;
  friend class Node;
  Value(Graph *Parent, std::string Name, TensorType Type)
      : Parent(Parent), Name(std::move(Name)), Type(std::move(Type)) {}
  void addUse(Node *User, unsigned Idx);
  void removeUse(Node *User, unsigned Idx);

  Graph *Parent;
  std::string Name;
  TensorType Type;
  Node *Def = nullptr;
  unsigned ResultIndex = 0;
  TensorDataRef Default;
  std::vector<Use> Uses;
};

/// An operation. Operands may be null (ONNX's empty name for a missing
/// optional input); results may be null (a missing optional output).
class Node {
public:
  ~Node();
  Node(const Node &) = delete;
  Node &operator=(const Node &) = delete;

  OpId getOpId() const { return Id; }
  bool isOpaque() const { return Id == OpId::Opaque; }
  /// Table entry; null for opaque nodes.
  const OpInfo *getInfo() const;
  /// Op type name (`Conv`, `relayout`, or an opaque op's type).
  llvm::StringRef getOpType() const;
  /// Domain of an opaque op ("" = ONNX default domain).
  llvm::StringRef getDomain() const { return Domain; }

  unsigned getNumOperands() const { return Operands.size(); }
  Value *getOperand(unsigned I) const { return Operands[I]; }
  llvm::ArrayRef<Value *> getOperands() const { return Operands; }
  /// Whether operand \p I exists and is non-null.
  bool hasOperand(unsigned I) const {
    return I < Operands.size() && Operands[I];
  }
  void setOperand(unsigned I, Value *V);
  /// Append an operand (may be null).
  void addOperand(Value *V);
  /// Drop trailing null operands.
  void trimTrailingNullOperands();

  unsigned getNumResults() const { return Results.size(); }
  Value *getResult(unsigned I) const { return Results[I].get(); }
  bool hasResult(unsigned I) const {
    return I < Results.size() && Results[I];
  }

  llvm::ArrayRef<NamedAttribute> getAttrs() const { return Attrs; }
  const Attribute *getAttr(llvm::StringRef Name) const;
  /// Set (or replace) an attribute; attributes stay sorted by name.
  void setAttr(llvm::StringRef Name, Attribute A);
  void removeAttr(llvm::StringRef Name);
  int64_t getIntAttr(llvm::StringRef Name, int64_t Default) const;
  float getFloatAttr(llvm::StringRef Name, float Default) const;
  std::string getStringAttr(llvm::StringRef Name,
                            llvm::StringRef Default) const;
  /// Ints attribute, or \p Default when absent.
  std::vector<int64_t> getIntsAttr(llvm::StringRef Name,
                                   std::vector<int64_t> Default = {}) const;

  const Location &getLoc() const { return Loc; }
  void setLoc(Location L) { Loc = std::move(L); }
  const std::string &getDocString() const { return DocString; }
  void setDocString(std::string S) { DocString = std::move(S); }

  Graph *getGraph() const { return Parent; }

  /// Unique among the nodes its graph ever held (a node made after an
  /// erased one may take its address, never its serial).
  uint64_t getSerial() const { return Serial; }
  /// Counts the changes made to this node since it was created: to its
  /// operands, its attributes or its results' types. What inference read
  /// of a node is unchanged while its serial and version are.
  uint64_t getVersion() const { return Version; }

  /// Drop all operands (removing this node from their use lists).
  void dropAllOperands();

private:
  friend class Graph;
  friend class Value; // Value::setType counts a change of its node.
  Node(Graph *Parent, OpId Id, std::string OpaqueType, std::string Domain)
      : Parent(Parent), Id(Id), OpaqueType(std::move(OpaqueType)),
        Domain(std::move(Domain)) {}

  Graph *Parent;
  OpId Id;
  std::string OpaqueType;
  std::string Domain;
  std::vector<Value *> Operands;
  std::vector<std::unique_ptr<Value>> Results;
  std::vector<NamedAttribute> Attrs;
  Location Loc;
  std::string DocString;
  std::list<std::unique_ptr<Node>>::iterator Self;
  uint64_t Serial = 0, Version = 0;
};

/// Model-level information kept for faithful export.
struct ModelInfo {
  int64_t IRVersion = 8;
  std::string ProducerName;
  std::string ProducerVersion;
  std::string Domain;
  int64_t ModelVersion = 0;
  std::string DocString;
  std::string GraphDocString;
  /// Opset imports: domain ("" = ai.onnx) -> version; ordered for
  /// deterministic output.
  std::map<std::string, int64_t> OpsetImports;
  /// metadata_props in file order.
  std::vector<std::pair<std::string, std::string>> Metadata;
};

/// A dataflow graph: inputs, nodes in topological order, outputs.
class Graph {
public:
  explicit Graph(std::string Name = "main");
  ~Graph();
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  const std::string &getName() const { return Name; }
  void setName(std::string N) { Name = std::move(N); }
  /// Model file this graph was read from (locations default to it).
  const std::string &getSourceFile() const { return SourceFile; }
  void setSourceFile(std::string F) { SourceFile = std::move(F); }
  ModelInfo &getModelInfo() { return Info; }
  const ModelInfo &getModelInfo() const { return Info; }

  /// Add a graph input. \p Name must be unused (see makeUniqueName).
  Value *addInput(llvm::StringRef Name, TensorType Type);
  llvm::ArrayRef<Value *> getInputs() const { return InputRefs; }
  /// Remove an unused graph input.
  void eraseInput(Value *V);

  void addOutput(Value *V) { Outputs.push_back(V); }
  llvm::ArrayRef<Value *> getOutputs() const { return Outputs; }
  void setOutput(unsigned I, Value *V) { Outputs[I] = V; }
  bool isGraphOutput(const Value *V) const;

  /// Create a node at the end of the graph (or before \p InsertBefore).
  /// \p ResultNames gives one entry per result; an empty name creates a
  /// missing (null) result. Names must be unused.
  Node *createNode(OpId Id, llvm::ArrayRef<Value *> Operands,
                   llvm::ArrayRef<std::string> ResultNames,
                   llvm::ArrayRef<TensorType> ResultTypes,
                   Node *InsertBefore = nullptr);
  /// Create an opaque node of op \p OpType in \p Domain.
  Node *createOpaqueNode(llvm::StringRef Domain, llvm::StringRef OpType,
                         llvm::ArrayRef<Value *> Operands,
                         llvm::ArrayRef<std::string> ResultNames,
                         llvm::ArrayRef<TensorType> ResultTypes,
                         Node *InsertBefore = nullptr);
  /// Erase a node whose results have no uses (asserted) and are not graph
  /// outputs.
  void eraseNode(Node *N);
  /// Move \p N to just before \p Before.
  void moveBefore(Node *N, Node *Before);
  /// Replace \p Old by a new node of the same op, operands, attributes,
  /// location and result names whose results have \p ResultTypes (one per
  /// result slot; ignored for missing results). Uses and graph outputs move
  /// to the new results; \p Old is erased. This is how passes change the
  /// layout a node writes its results in.
  Node *rebuildNode(Node *Old, llvm::ArrayRef<TensorType> ResultTypes);

  /// Nodes in order.
  auto nodes() const {
    return llvm::map_range(Nodes, [](const std::unique_ptr<Node> &N) {
      return N.get();
    });
  }
  size_t getNumNodes() const { return Nodes.size(); }
  /// Snapshot of the node order, safe to mutate the graph while walking it.
  std::vector<Node *> getNodeList() const;

  /// Give \p V the unused name \p NewName.
  void renameValue(Value *V, llvm::StringRef NewName);
  /// Value by name, or null.
  Value *lookupValue(llvm::StringRef Name) const;
  /// \p Base if unused, else Base_1, Base_2, ...
  std::string makeUniqueName(llvm::StringRef Base) const;

  /// A copy of this graph: same names, types, attributes, locations and
  /// order. Constant data is shared (it is immutable), so a copy costs
  /// no weight memory.
  std::unique_ptr<Graph> clone() const;

  /// Re-sort nodes topologically (stable for already-ordered graphs).
  /// Returns false if the graph has a cycle (order unchanged).
  bool sortTopologically();

private:
  friend class Value;
  friend class Node;
  Node *insertNode(std::unique_ptr<Node> N, llvm::ArrayRef<Value *> Operands,
                   llvm::ArrayRef<std::string> ResultNames,
                   llvm::ArrayRef<TensorType> ResultTypes, Node *InsertBefore);

  std::string Name;
  std::string SourceFile;
  ModelInfo Info;
  std::vector<std::unique_ptr<Value>> InputStorage;
  std::vector<Value *> InputRefs;
  std::vector<Value *> Outputs;
  std::list<std::unique_ptr<Node>> Nodes;
  llvm::StringMap<Value *> ValueNames;
  /// The serial of the last node inserted (Node::getSerial).
  uint64_t LastSerial = 0;
};

} // namespace strider

#endif // STRIDER_IR_GRAPH_H
