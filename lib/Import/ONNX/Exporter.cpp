//===- Exporter.cpp - Graph -> ONNX ModelProto ----------------------------===//
//
// Writes a Graph as an ONNX model that ONNX Runtime runs with the same
// results: Constant nodes become initializers, physical layouts and
// relayouts become explicit Transposes and the IR's op forms are written
// in the model's opset (opset 6 raised to 7; both in ExportLowering.cpp),
// and the model's names, doc strings, metadata and opset imports are kept.
//
//===----------------------------------------------------------------------===//

#include "ExportLowering.h"
#include "TensorProto.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/Import/ONNX.h"
#include "strider/Support/FileIO.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

using namespace strider;
using namespace strider::onnxexport;

/// Opset written when the graph has no default-domain opset import: the
/// newest one Debian's libonnx (1.12) knows.
static constexpr int64_t DefaultOpset = 17;
/// Oldest opset written: ONNX Runtime runs opset 7 and newer (it lacks
/// kernels such as AveragePool-1), so opset 6 imports are written at 7.
static constexpr int64_t MinExportOpset = 7;

static void writeTensorType(const TensorType &T, onnx::TypeProto &TP) {
  assert(T.getLayout().isIdentity() && "ONNX types have no layout");
  onnx::TypeProto::Tensor *TT = TP.mutable_tensor_type();
  TT->set_elem_type(toOnnxDataType(T.getElementType()));
  if (!T.hasRank())
    return;
  onnx::TensorShapeProto *Shape = TT->mutable_shape();
  for (const Dim &D : T.getShape()) {
    onnx::TensorShapeProto::Dimension *OD = Shape->add_dim();
    if (D.isStatic())
      OD->set_dim_value(D.getSize());
    else if (D.isSymbol())
      OD->set_dim_param(D.getSymbol().str());
  }
}

static void writeValueInfo(llvm::StringRef Name, const TensorType &T,
                           onnx::ValueInfoProto &VI) {
  VI.set_name(Name.str());
  writeTensorType(T, *VI.mutable_type());
}

static void writeAttribute(const NamedAttribute &NA, onnx::AttributeProto &AP) {
  AP.set_name(NA.Name);
  const Attribute &A = NA.Value;
  switch (A.getKind()) {
  case AttrKind::Int:
    AP.set_type(onnx::AttributeProto::INT);
    AP.set_i(A.getInt());
    return;
  case AttrKind::Float:
    AP.set_type(onnx::AttributeProto::FLOAT);
    AP.set_f(A.getFloat());
    return;
  case AttrKind::String:
    AP.set_type(onnx::AttributeProto::STRING);
    AP.set_s(A.getString());
    return;
  case AttrKind::Ints:
    AP.set_type(onnx::AttributeProto::INTS);
    for (int64_t V : A.getInts())
      AP.add_ints(V);
    return;
  case AttrKind::Floats:
    AP.set_type(onnx::AttributeProto::FLOATS);
    for (float V : A.getFloats())
      AP.add_floats(V);
    return;
  case AttrKind::Strings:
    AP.set_type(onnx::AttributeProto::STRINGS);
    for (const std::string &V : A.getStrings())
      AP.add_strings(V);
    return;
  case AttrKind::Tensor:
    AP.set_type(onnx::AttributeProto::TENSOR);
    onnximport::encodeTensor(*A.getTensor(), "", *AP.mutable_t());
    return;
  case AttrKind::Graph:
    break; // Written by ModelWriter::writeIf.
  }
  llvm_unreachable("unknown attribute kind");
}

template <typename RepeatedStrings>
static void trimTrailingEmpty(RepeatedStrings &Names) {
  while (!Names.empty() && Names.Get(Names.size() - 1).empty())
    Names.RemoveLast();
}

namespace {
/// Builds one ModelProto from a graph; used once.
class ModelWriter final : public ExportSink {
public:
  explicit ModelWriter(const Graph &G)
      : G(G), Layouts(*this), TensorNames(&OwnTensorNames),
        NodeNames(&OwnNodeNames) {}

  llvm::Error write(onnx::ModelProto &MP);

  std::string makeUniqueTensorName(llvm::StringRef Base) override;
  std::string makeUniqueNodeName(llvm::StringRef Base) override;
  void addNode(onnx::NodeProto NP) override { *GP->add_node() = std::move(NP); }
  void recordValueInfo(llvm::StringRef Name, const TensorType &T) override {
    ValueTypes.emplace_back(Name.str(), T);
  }
  std::string addInitializer(const TensorData &D,
                             llvm::StringRef Base) override;

private:
  llvm::Error checkExportable() const;
  int64_t chooseOpset() const;
  llvm::Error writeInputs();
  llvm::Error writeConstant(const Node &N);
  void writeNode(const Node &N);
  /// The graph outputs, physical (a model's: its interface keeps its
  /// layouts) or \p Logical (an If branch's, which the If returns).
  void writeOutputs(bool Logical = false);
  void pruneConstantInitializers();
  void writeIntermediateValueInfo();
  void writeModelInfo(onnx::ModelProto &MP) const;
  /// An If: its condition as the one input, its branches as subgraphs
  /// reading the captured operands by their names in this graph.
  void writeIf(const Node &N, onnx::NodeProto &NP);
  /// Writes branch \p B of an If into \p Out; \p Outer names the tensors
  /// of this graph its inputs stand for.
  void writeBranch(const Graph &B, llvm::ArrayRef<std::string> Outer,
                   onnx::GraphProto &Out);

  const Graph &G;
  onnx::GraphProto *GP = nullptr;
  LayoutLowering Layouts;
  int64_t Opset = DefaultOpset;
  /// Names claimed in the model: a branch's writer shares its parent's
  /// (ONNX names are unique across a model's graphs).
  llvm::StringSet<> OwnTensorNames, OwnNodeNames;
  llvm::StringSet<> *TensorNames, *NodeNames;
  /// Types of intermediate tensors, in the order they were produced.
  std::vector<std::pair<std::string, TensorType>> ValueTypes;
  /// Initializers made from Constant nodes or by the lowering (dropped
  /// when nothing reads them), as opposed to graph-input defaults.
  llvm::StringSet<> PrunableInitializers;
};
} // namespace

/// \p Base if \p Used lacks it, else the first free `Base_N`; claims it.
static std::string claimUniqueName(llvm::StringSet<> &Used,
                                   llvm::StringRef Base) {
  std::string Name = Base.str();
  for (unsigned I = 1; !Used.insert(Name).second; ++I)
    Name = (Base + "_" + llvm::Twine(I)).str();
  return Name;
}

std::string ModelWriter::makeUniqueTensorName(llvm::StringRef Base) {
  return claimUniqueName(*TensorNames, Base);
}

std::string ModelWriter::makeUniqueNodeName(llvm::StringRef Base) {
  if (Base.empty())
    return "";
  return claimUniqueName(*NodeNames, Base);
}

std::string ModelWriter::addInitializer(const TensorData &D,
                                        llvm::StringRef Base) {
  std::string Name = makeUniqueTensorName(Base);
  onnximport::encodeTensor(D, Name, *GP->add_initializer());
  PrunableInitializers.insert(Name);
  return Name;
}

/// The error for a value ONNX cannot describe, located at its producer.
static llvm::Error valueError(const Graph &G, const Value &V,
                              const llvm::Twine &Msg) {
  if (Node *Def = V.getDefiningNode())
    return makeNodeError(*Def,
                         "cannot export result '" + V.getName() + "': " + Msg);
  return makeGraphError(G, "cannot export input '" + V.getName() + "': " + Msg);
}

llvm::Error ModelWriter::checkExportable() const {
  auto CheckLayout = [&](const Value &V) -> llvm::Error {
    const TensorType &T = V.getType();
    if (T.getLayout().isIdentity())
      return llvm::Error::success();
    if (!T.hasRank())
      return valueError(G, V, "it has a layout but no rank");
    if (!T.getLayout().isValidForRank(T.getRank()))
      return valueError(G, V, "its layout does not match its rank");
    return llvm::Error::success();
  };
  for (const Value *In : G.getInputs()) {
    if (In->getType().getElementType() == ElementType::Unknown)
      return valueError(G, *In, "its element type is unknown");
    if (llvm::Error E = CheckLayout(*In))
      return E;
  }
  for (const Node *N : G.nodes()) {
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (const Value *R = N->getResult(I))
        if (llvm::Error E = CheckLayout(*R))
          return E;
    if (N->getOpId() == OpId::Relayout) {
      const TensorType &From = N->getOperand(0)->getType();
      const TensorType &To = N->getResult(0)->getType();
      if (From.getLayout() != To.getLayout() &&
          (!From.hasRank() || !To.hasRank() || From.getRank() != To.getRank()))
        return makeNodeError(*N, "cannot export: operand and result ranks "
                                 "differ");
    }
    if (N->getOpId() == OpId::Constant) {
      const Attribute *A = N->getAttr("value");
      if (!A || A->getKind() != AttrKind::Tensor || !A->getTensor())
        return makeNodeError(*N, "cannot export: no 'value' tensor");
    }
    for (const NamedAttribute &A : N->getAttrs())
      if (A.Value.getKind() == AttrKind::Graph) {
        if (!A.Value.getGraph())
          return makeNodeError(*N, "cannot export: attribute '" + A.Name +
                                       "' has no graph");
        if (llvm::Error E = ModelWriter(*A.Value.getGraph()).checkExportable())
          return makeNodeError(*N, "cannot export attribute '" + A.Name +
                                       "': " + llvm::toString(std::move(E)));
      }
  }
  for (const Value *Out : G.getOutputs())
    if (Out->getType().getElementType() == ElementType::Unknown) {
      if (Out->isGraphInput())
        return valueError(G, *Out, "its element type is unknown");
      return makeNodeError(*Out->getDefiningNode(),
                           "cannot export graph output '" + Out->getName() +
                               "': its element type is unknown");
    }
  return llvm::Error::success();
}

int64_t ModelWriter::chooseOpset() const {
  const std::map<std::string, int64_t> &Imports = G.getModelInfo().OpsetImports;
  int64_t V = DefaultOpset;
  auto It = Imports.find("");
  if (It == Imports.end())
    It = Imports.find("ai.onnx");
  if (It != Imports.end())
    V = std::max(It->second, MinExportOpset);
  std::function<void(const Graph &)> Visit = [&](const Graph &Body) {
    for (const Node *N : Body.nodes()) {
      if (!N->isOpaque() && N->getOpId() != OpId::Constant &&
          N->getOpId() != OpId::Relayout)
        V = std::max(V, getMinimumOpset(*N));
      for (const NamedAttribute &A : N->getAttrs())
        if (A.Value.getKind() == AttrKind::Graph)
          Visit(*A.Value.getGraph());
    }
  };
  Visit(G);
  return V;
}

llvm::Error ModelWriter::writeInputs() {
  for (const Value *In : G.getInputs()) {
    TensorType Phys = getPhysicalType(In->getType());
    writeValueInfo(In->getName(), Phys, *GP->add_input());
    if (const TensorDataRef &D = In->getDefaultData()) {
      auto PhysData = getPhysicalTensor(*D, In->getType().getLayout());
      if (!PhysData)
        return makeGraphError(
            G, "cannot export default data of input '" + In->getName() +
                   "': " + llvm::toString(PhysData.takeError()));
      onnximport::encodeTensor(**PhysData, In->getName(),
                               *GP->add_initializer());
    }
    Layouts.definePhysical(*In);
  }
  return llvm::Error::success();
}

llvm::Error ModelWriter::writeConstant(const Node &N) {
  const Value *V = N.getResult(0);
  if (!V)
    return llvm::Error::success();
  const TensorData &D = *N.getAttr("value")->getTensor();
  auto PhysData = getPhysicalTensor(D, V->getType().getLayout());
  if (!PhysData)
    return makeNodeError(N, "cannot export: " +
                                llvm::toString(PhysData.takeError()));
  onnximport::encodeTensor(**PhysData, V->getName(), *GP->add_initializer());
  PrunableInitializers.insert(V->getName());
  Layouts.definePhysical(*V);
  return llvm::Error::success();
}

void ModelWriter::writeNode(const Node &N) {
  onnx::NodeProto NP;
  NP.set_op_type(N.getOpType().str());
  if (N.isOpaque() && !N.getDomain().empty())
    NP.set_domain(N.getDomain().str());
  std::string Name = makeUniqueNodeName(N.getLoc().Name);
  if (!Name.empty())
    NP.set_name(Name);
  if (!N.getDocString().empty())
    NP.set_doc_string(N.getDocString());
  if (N.getOpId() == OpId::If) {
    writeIf(N, NP);
  } else {
    // Operand transposes are emitted (by the layout lowering) before NP.
    for (Value *Op : N.getOperands())
      NP.add_input(Op ? Layouts.getLogicalName(*Op) : std::string());
    for (const NamedAttribute &NA : N.getAttrs())
      writeAttribute(NA, *NP.add_attribute());
  }
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    const Value *R = N.getResult(I);
    NP.add_output(R ? Layouts.defineLogicalResult(*R) : std::string());
  }
  if (!N.isOpaque())
    lowerToOpset(N, Opset, NP, *this);
  trimTrailingEmpty(*NP.mutable_input());
  trimTrailingEmpty(*NP.mutable_output());
  addNode(std::move(NP));
}

void ModelWriter::writeOutputs(bool Logical) {
  for (const Value *Out : G.getOutputs()) {
    if (Logical) {
      std::string Name = Layouts.getLogicalName(*Out);
      writeValueInfo(Name, Out->getType().withLayout(Layout()),
                     *GP->add_output());
      continue;
    }
    std::string Name = Layouts.getPhysicalName(*Out);
    writeValueInfo(Name, getPhysicalType(Out->getType()), *GP->add_output());
  }
}

/// Every tensor name the nodes of \p GP and of its subgraphs read.
static void collectReadNames(const onnx::GraphProto &GP,
                             llvm::StringSet<> &Read) {
  for (const onnx::NodeProto &NP : GP.node()) {
    for (const std::string &In : NP.input())
      Read.insert(In);
    for (const onnx::AttributeProto &A : NP.attribute())
      if (A.has_g()) {
        collectReadNames(A.g(), Read);
        for (const onnx::ValueInfoProto &Out : A.g().output())
          Read.insert(Out.name());
      }
  }
}

void ModelWriter::pruneConstantInitializers() {
  llvm::StringSet<> Read;
  collectReadNames(*GP, Read);
  for (const onnx::ValueInfoProto &Out : GP->output())
    Read.insert(Out.name());
  auto *Inits = GP->mutable_initializer();
  for (int I = Inits->size() - 1; I >= 0; --I) {
    const std::string &Name = Inits->Get(I).name();
    if (PrunableInitializers.count(Name) && !Read.count(Name))
      Inits->DeleteSubrange(I, 1);
  }
}

void ModelWriter::writeIntermediateValueInfo() {
  llvm::StringSet<> Declared;
  for (const onnx::ValueInfoProto &VI : GP->input())
    Declared.insert(VI.name());
  for (const onnx::ValueInfoProto &VI : GP->output())
    Declared.insert(VI.name());
  for (const onnx::TensorProto &T : GP->initializer())
    Declared.insert(T.name());
  for (const auto &[Name, Type] : ValueTypes) {
    if (Type.getElementType() == ElementType::Unknown ||
        !Declared.insert(Name).second)
      continue;
    writeValueInfo(Name, Type, *GP->add_value_info());
  }
}

void ModelWriter::writeModelInfo(onnx::ModelProto &MP) const {
  const ModelInfo &Info = G.getModelInfo();
  int64_t IRVersion = std::max(Info.IRVersion, getMinimumIRVersion(Opset));
  MP.set_ir_version(IRVersion);
  if (!Info.ProducerName.empty())
    MP.set_producer_name(Info.ProducerName);
  if (!Info.ProducerVersion.empty())
    MP.set_producer_version(Info.ProducerVersion);
  if (!Info.Domain.empty())
    MP.set_domain(Info.Domain);
  if (Info.ModelVersion != 0)
    MP.set_model_version(Info.ModelVersion);
  if (!Info.DocString.empty())
    MP.set_doc_string(Info.DocString);
  for (const auto &[Key, Value] : Info.Metadata) {
    onnx::StringStringEntryProto *E = MP.add_metadata_props();
    E->set_key(Key);
    E->set_value(Value);
  }

  onnx::OperatorSetIdProto *Default = MP.add_opset_import();
  Default->set_domain("");
  Default->set_version(Opset);
  std::map<std::string, int64_t> Others;
  for (const auto &[Domain, Version] : Info.OpsetImports)
    if (!Domain.empty() && Domain != "ai.onnx")
      Others[Domain] = Version;
  // Domains of opaque nodes that the model never imported.
  for (const Node *N : G.nodes())
    if (N->isOpaque() && !N->getDomain().empty() && N->getDomain() != "ai.onnx")
      Others.emplace(N->getDomain().str(), 1);
  for (const auto &[Domain, Version] : Others) {
    onnx::OperatorSetIdProto *O = MP.add_opset_import();
    O->set_domain(Domain);
    O->set_version(Version);
  }
}

void ModelWriter::writeIf(const Node &N, onnx::NodeProto &NP) {
  NP.add_input(Layouts.getLogicalName(*N.getOperand(0)));
  // The captured operands, in logical order (transposes emitted here,
  // before the If), are what the branches read.
  std::vector<std::string> Outer;
  for (unsigned I = 1; I < N.getNumOperands(); ++I)
    Outer.push_back(Layouts.getLogicalName(*N.getOperand(I)));
  for (const char *Name : {"then_branch", "else_branch"}) {
    onnx::AttributeProto *AP = NP.add_attribute();
    AP->set_name(Name);
    AP->set_type(onnx::AttributeProto::GRAPH);
    writeBranch(*N.getAttr(Name)->getGraph(), Outer, *AP->mutable_g());
  }
}

void ModelWriter::writeBranch(const Graph &B, llvm::ArrayRef<std::string> Outer,
                              onnx::GraphProto &Out) {
  // A copy whose inputs take the names of the tensors they stand for (the
  // branch reads them from the enclosing graph) and whose other values
  // take names unique in the model; an output that is an input becomes an
  // Identity's, as a subgraph computes its outputs.
  std::unique_ptr<Graph> C = B.clone();
  // Every value moves to a temporary name first, so that no rename below
  // meets a name the copy still uses.
  std::vector<Value *> Ins(C->getInputs().begin(), C->getInputs().end());
  std::vector<std::pair<Value *, std::string>> Results;
  unsigned Temp = 0;
  auto MoveAside = [&](Value *V) {
    C->renameValue(V, "\x01" + std::to_string(Temp++));
  };
  for (Value *In : Ins)
    MoveAside(In);
  for (Node *N : C->getNodeList())
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (Value *R = N->getResult(I)) {
        Results.push_back({R, R->getName()});
        MoveAside(R);
      }
  for (size_t I = 0; I < Ins.size(); ++I) {
    if (!Ins[I]->getType().getLayout().isIdentity()) {
      // Its physical form is a Transpose of the outer tensor, made in the
      // branch under a name of its own.
      C->renameValue(Ins[I],
                     claimUniqueName(*TensorNames, Outer[I] + ".physical"));
      continue;
    }
    if (Value *Same = C->lookupValue(Outer[I])) {
      // One outer tensor passed twice: one input reads it.
      Ins[I]->replaceAllUsesWith(Same);
      for (unsigned O = 0; O < C->getOutputs().size(); ++O)
        if (C->getOutputs()[O] == Ins[I])
          C->setOutput(O, Same);
      continue;
    }
    C->renameValue(Ins[I], Outer[I]);
  }
  for (unsigned I = 0; I < C->getOutputs().size(); ++I) {
    Value *V = C->getOutputs()[I];
    if (!V->isGraphInput())
      continue;
    std::string Name = "\x01" + std::to_string(Temp++);
    Node *Id = C->createNode(OpId::Identity, {V}, {Name}, {V->getType()});
    C->setOutput(I, Id->getResult(0));
    Results.push_back({Id->getResult(0), B.getName() + ".out"});
  }
  for (auto &[R, Name] : Results)
    C->renameValue(R, claimUniqueName(*TensorNames, Name));

  ModelWriter Sub(*C);
  Sub.TensorNames = TensorNames;
  Sub.NodeNames = NodeNames;
  Sub.Opset = Opset;
  Sub.GP = &Out;
  Out.set_name(B.getName());
  for (unsigned I = 0; I < C->getInputs().size(); ++I) {
    const Value &In = *C->getInputs()[I];
    // (An input replaced by another passing the same tensor is unread.)
    if (In.getName() == Outer[I] || !In.getType().getLayout().isIdentity())
      Sub.Layouts.defineLogical(In, Outer[I]);
  }
  for (const Node *N : C->nodes()) {
    if (N->getOpId() == OpId::Constant)
      llvm::consumeError(Sub.writeConstant(*N)); // Checked exportable.
    else if (N->getOpId() == OpId::Relayout)
      Sub.Layouts.lowerRelayout(*N);
    else
      Sub.writeNode(*N);
  }
  Sub.writeOutputs(/*Logical=*/true);
  Sub.pruneConstantInitializers();
  Sub.writeIntermediateValueInfo();
}

llvm::Error ModelWriter::write(onnx::ModelProto &MP) {
  if (llvm::Error E = checkExportable())
    return E;
  Opset = chooseOpset();
  GP = MP.mutable_graph();
  GP->set_name(G.getName());
  if (!G.getModelInfo().GraphDocString.empty())
    GP->set_doc_string(G.getModelInfo().GraphDocString);

  // IR value names are taken as they are; node names are claimed in order
  // (several IR nodes imported from one ONNX node share its name).
  for (const Value *In : G.getInputs())
    TensorNames->insert(In->getName());
  for (const Node *N : G.nodes())
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (const Value *R = N->getResult(I))
        TensorNames->insert(R->getName());

  if (llvm::Error E = writeInputs())
    return E;
  for (const Node *N : G.nodes()) {
    if (N->getOpId() == OpId::Relayout) {
      const TensorType &From = N->getOperand(0)->getType();
      const TensorType &To = N->getResult(0)->getType();
      if (From.getLayout() != To.getLayout() &&
          (!From.hasRank() || !To.hasRank() || From.getRank() != To.getRank()))
        return makeNodeError(*N, "cannot export: operand and result ranks "
                                 "differ");
    }
    if (N->getOpId() == OpId::Constant) {
      if (llvm::Error E = writeConstant(*N))
        return E;
    } else if (N->getOpId() == OpId::Relayout) {
      Layouts.lowerRelayout(*N);
    } else {
      writeNode(*N);
    }
  }
  writeOutputs();
  pruneConstantInitializers();

  // Before IR version 4, every initializer must also be a graph input.
  if (std::max(G.getModelInfo().IRVersion, getMinimumIRVersion(Opset)) < 4) {
    llvm::StringSet<> Inputs;
    for (const onnx::ValueInfoProto &VI : GP->input())
      Inputs.insert(VI.name());
    for (const onnx::TensorProto &T : GP->initializer()) {
      if (Inputs.count(T.name()))
        continue;
      onnx::ValueInfoProto *VI = GP->add_input();
      VI->set_name(T.name());
      onnx::TypeProto::Tensor *TT = VI->mutable_type()->mutable_tensor_type();
      TT->set_elem_type(T.data_type());
      onnx::TensorShapeProto *Shape = TT->mutable_shape();
      for (int64_t D : T.dims())
        Shape->add_dim()->set_dim_value(D);
    }
  }
  writeIntermediateValueInfo();
  writeModelInfo(MP);
  return llvm::Error::success();
}

llvm::Expected<std::string> strider::exportONNXBytes(const Graph &G) {
  onnx::ModelProto MP;
  ModelWriter Writer(G);
  if (llvm::Error E = Writer.write(MP))
    return E;
  if (MP.ByteSizeLong() > size_t(std::numeric_limits<int32_t>::max()))
    return makeGraphError(G, "cannot export: the model is larger than 2 GiB "
                             "(protobuf's limit; external data is not "
                             "supported)");
  std::string Bytes;
  if (!MP.SerializeToString(&Bytes))
    return makeGraphError(G, "cannot export: serialization failed");
  return Bytes;
}

llvm::Error strider::exportONNXFile(const Graph &G, llvm::StringRef Path) {
  // Build the whole model first: a failed export never touches the file.
  llvm::Expected<std::string> Bytes = exportONNXBytes(G);
  if (!Bytes)
    return Bytes.takeError();
  return writeOutputFile(Path, [&](llvm::raw_ostream &OS) {
    OS << *Bytes;
    return llvm::Error::success();
  });
}
