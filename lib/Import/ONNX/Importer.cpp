//===- Importer.cpp - ONNX ModelProto to Graph ----------------------------===//
//
// Reads a serialized ModelProto into a Graph: validates opsets, decodes
// initializers (which become Constant nodes or input defaults), converts
// value types, orders the nodes topologically, rewrites older op forms
// through OpsetUpgrade, and finally infers shapes and verifies the result.
// Every problem of the model is a located error; nothing here trusts the
// input.
//
//===----------------------------------------------------------------------===//

#include "FunctionBodies.h"
#include "OpsetUpgrade.h"
#include "TensorProto.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/IR/Verifier.h"
#include "strider/Import/ONNX.h"
#include "strider/Support/FileIO.h"

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

#include <climits>
#include <map>
#include <queue>
#include <set>

using namespace strider;
using namespace strider::onnximport;

namespace {

/// "ai.onnx" and "" both name the default domain; the IR uses "".
std::string normalizeDomain(llvm::StringRef Domain) {
  if (Domain == "ai.onnx")
    return "";
  return Domain.str();
}

/// decodeTensor's messages name their subject `tensor '<name>'`; say what
/// the tensor is instead (`initializer 'w'`, `attribute 'value'`).
std::string relabelTensorError(llvm::Error E, llvm::StringRef TensorName,
                               llvm::StringRef Subject) {
  std::string Msg = llvm::toString(std::move(E));
  std::string Old = TensorName.empty() ? std::string("tensor")
                                       : "tensor '" + TensorName.str() + "'";
  std::string New = Subject.str();
  if (Subject == "initializer")
    New += " '" + TensorName.str() + "'";
  if (llvm::StringRef(Msg).startswith(Old))
    return New + Msg.substr(Old.size());
  return New + ": " + Msg;
}

/// Free the storage of a decoded tensor (keeping its name) so that big
/// models are not held twice while importing.
void releaseTensorData(onnx::TensorProto &T) {
  std::string().swap(*T.mutable_raw_data());
  google::protobuf::RepeatedField<float>().Swap(T.mutable_float_data());
  google::protobuf::RepeatedField<int32_t>().Swap(T.mutable_int32_data());
  google::protobuf::RepeatedField<int64_t>().Swap(T.mutable_int64_data());
  google::protobuf::RepeatedField<double>().Swap(T.mutable_double_data());
  google::protobuf::RepeatedField<uint64_t>().Swap(T.mutable_uint64_data());
}

/// Builds one Graph from one ModelProto; consumes the initializers' data.
class ModelImporter final : public UpgradeBuilder {
public:
  ModelImporter(onnx::ModelProto &Model, llvm::StringRef DisplayName,
                llvm::StringRef ModelDir, const ImportOptions &Opts)
      : Model(Model), File(DisplayName.str()), Opts(Opts) {
    Policy.ModelDir = ModelDir.str();
  }

  llvm::Expected<std::unique_ptr<Graph>> run();

  int64_t getOpsetVersion() const override { return Opset; }
  llvm::Expected<Value *> createHelperNode(const PendingNode &Origin, OpId Id,
                                           llvm::ArrayRef<Value *> Operands,
                                           llvm::ArrayRef<NamedAttribute> Attrs,
                                           llvm::StringRef NameHint) override;

private:
  llvm::Error fileError(const llvm::Twine &Msg) const {
    return makeError(File + ": " + Msg);
  }
  /// A note for the caller (ImportOptions::Warnings); dropped without one.
  void warn(const llvm::Twine &Msg) const {
    if (Opts.Warnings)
      Opts.Warnings->push_back(Msg.str());
  }
  /// \p Type with each unknown dim replaced by a symbol of its own,
  /// `<Input>:<axis>` (unique in the model), so that every dynamic dim of
  /// a graph input can be bound by name.
  TensorType nameAnonymousDims(const TensorType &Type, llvm::StringRef Input);
  std::string describeProtoNode(const onnx::NodeProto &NP) const;

  llvm::Error readModelInfo();
  llvm::Error readInputsAndInitializers();
  llvm::Error collectDeclaredTypes();
  llvm::Error orderNodes(const onnx::GraphProto &GP, std::vector<int> &Order);
  llvm::Error importNode(const onnx::NodeProto &NP);
  /// The value \p Name names in the graph being imported, or in an
  /// enclosing one: then it is captured, becoming an input of each branch
  /// between (and an operand of each If owning one); null if none has it.
  Value *lookupOrCapture(llvm::StringRef Name);
  Value *resolveAt(unsigned Level, llvm::StringRef Name);
  /// An If node: both branches imported as graphs of their own, the outer
  /// values they read passed as operands after the condition.
  llvm::Error importIf(const onnx::NodeProto &NP, PendingNode &PN);
  /// One branch of an If (\p What: the attribute name), with an input for
  /// each of \p Captures first; values it reads from enclosing graphs are
  /// appended to Captures (and become inputs) as they are met.
  llvm::Expected<std::unique_ptr<Graph>>
  importBranch(const onnx::GraphProto &GP, const PendingNode &PN,
               llvm::StringRef What, std::vector<Value *> &Captures);
  /// The body of the function \p F that node \p NP (pending as \p PN)
  /// calls, imported in its place: formal inputs and outputs renamed to
  /// the node's, other values to fresh names, attribute references bound
  /// to the node's attributes (or \p Defaults, a schema's; else left
  /// out), the body's nodes read at \p BodyOpset.
  llvm::Error inlineFunction(
      const onnx::NodeProto &NP, const PendingNode &PN,
      const onnx::FunctionProto &F, int64_t BodyOpset,
      const std::map<std::string, onnx::OpSchema::Attribute> *Defaults);
  /// Expands \p NP, an op of the default domain the IR lacks, through its
  /// ONNX schema's function body (CastLike, Celu, Mish, the losses...):
  /// false when the schema has none.
  llvm::Expected<bool> expandSchemaFunction(const onnx::NodeProto &NP,
                                            const PendingNode &PN);
  /// Infers the type of \p V (imported without shape inference) and of
  /// the values it is computed from, as far as they need, best effort.
  void inferTypeOf(const Value &V, unsigned Depth);
  llvm::Error readOutputs();

  /// Convert a declared type; errors read `<Where>: <What> has ...`.
  llvm::Expected<TensorType> convertType(const onnx::TypeProto &T,
                                         const std::string &Where,
                                         const llvm::Twine &What) const;
  llvm::Expected<Attribute> convertAttribute(const onnx::AttributeProto &A,
                                             const PendingNode &N) const;
  /// Schema check, then (with shape inference on) refine result types so
  /// that later upgrades see ranks.
  llvm::Error finishNode(Node &N);
  std::string makeFreshName(llvm::StringRef Base);

  onnx::ModelProto &Model;
  std::string File;
  ExternalDataPolicy Policy;
  ImportOptions Opts;
  std::unique_ptr<Graph> G;
  /// While a branch is imported into G: the graphs around it, outermost
  /// (the model's) first, and for each the capture list of the branch one
  /// level in (the operands of the If that owns it).
  std::vector<Graph *> EnclosingGraphs;
  std::vector<std::vector<Value *> *> CaptureLists;
  int64_t Opset = 0;
  /// Declared types from value_info and graph outputs.
  llvm::StringMap<const onnx::TypeProto *> DeclaredTypes;
  /// Every value name the model uses, so helper names never clash.
  llvm::StringSet<> ReservedNames;
  /// Model-local functions by (domain, name).
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto *>
      LocalFunctions;
  /// Function bodies being inlined, innermost last (a recursion guard).
  unsigned InlineDepth = 0;
  /// Nodes imported from function bodies so far (a guard against calls
  /// that multiply at every level).
  int64_t InlinedNodes = 0;
  /// Nodes a call of model-local function \p F imports (its calls of
  /// other local functions expanded), at most \p Limit + 1; -1 when the
  /// calls nest more than \p Depth deep.
  int64_t getExpandedSize(const onnx::FunctionProto &F, int64_t Limit,
                          unsigned Depth);
  std::map<const onnx::FunctionProto *, int64_t> ExpandedSizes;
};

} // namespace

std::string ModelImporter::describeProtoNode(const onnx::NodeProto &NP) const {
  std::string Op = NP.op_type();
  std::string Domain = normalizeDomain(NP.domain());
  if (!Domain.empty())
    Op = Domain + "." + Op;
  if (!NP.name().empty())
    return File + ": node '" + NP.name() + "' (" + Op + ")";
  for (const std::string &Out : NP.output())
    if (!Out.empty())
      return File + ": node (" + Op + ") producing '" + Out + "'";
  return File + ": node (" + Op + ")";
}

std::string ModelImporter::makeFreshName(llvm::StringRef Base) {
  std::string Name = Base.str();
  for (unsigned Suffix = 1; ReservedNames.count(Name) || G->lookupValue(Name);
       ++Suffix)
    Name = (Base + "_" + llvm::Twine(Suffix)).str();
  ReservedNames.insert(Name);
  return Name;
}

//===----------------------------------------------------------------------===//
// Types and attributes
//===----------------------------------------------------------------------===//

llvm::Expected<TensorType>
ModelImporter::convertType(const onnx::TypeProto &T, const std::string &Where,
                           const llvm::Twine &What) const {
  auto Fail = [&](const llvm::Twine &Msg) {
    return makeError(Where + ": " + What + Msg);
  };
  if (T.value_case() == onnx::TypeProto::VALUE_NOT_SET)
    return TensorType();
  if (T.value_case() != onnx::TypeProto::kTensorType)
    return Fail(" has a non-tensor type (unsupported)");
  const onnx::TypeProto::Tensor &TT = T.tensor_type();
  ElementType Elt = ElementType::Unknown;
  if (TT.elem_type() != onnx::TensorProto::UNDEFINED) {
    llvm::Optional<ElementType> E = fromOnnxDataType(TT.elem_type());
    if (!E)
      return Fail(" has unsupported element type " +
                  describeOnnxDataType(TT.elem_type()));
    Elt = *E;
  }
  if (!TT.has_shape())
    return TensorType::getUnranked(Elt);
  llvm::SmallVector<Dim, 6> Dims;
  for (const onnx::TensorShapeProto::Dimension &D : TT.shape().dim()) {
    if (D.has_dim_value()) {
      if (D.dim_value() < 0) {
        // Some exporters write -1 for a dynamic dim; ONNX Runtime reads it
        // as one.
        if (Opts.Strict)
          return Fail(" has negative dimension " + llvm::Twine(D.dim_value()));
        warn(Where + ": " + What + " has dimension " +
             llvm::Twine(D.dim_value()) + " at axis " +
             llvm::Twine(Dims.size()) + "; read as a dynamic dim");
        Dims.push_back(Dim::getUnknown());
        continue;
      }
      Dims.push_back(Dim::getStatic(D.dim_value()));
    } else if (D.has_dim_param() && D.dim_param() != "?") {
      // Some exporters spell an anonymous dim "?": it names no symbol
      // shared with other dims.
      Dims.push_back(Dim::getSymbol(D.dim_param()));
    } else {
      Dims.push_back(Dim::getUnknown());
    }
  }
  return TensorType(Elt, Dims);
}

llvm::Expected<Attribute>
ModelImporter::convertAttribute(const onnx::AttributeProto &A,
                                const PendingNode &N) const {
  std::string What = "attribute '" + A.name() + "'";
  if (!A.ref_attr_name().empty())
    return N.error(What + " refers to a function attribute (unsupported)");
  onnx::AttributeProto::AttributeType Type = A.type();
  if (Type == onnx::AttributeProto::UNDEFINED) {
    // Very old models leave the type out; infer it from the field set.
    if (A.has_f())
      Type = onnx::AttributeProto::FLOAT;
    else if (A.has_i())
      Type = onnx::AttributeProto::INT;
    else if (A.has_s())
      Type = onnx::AttributeProto::STRING;
    else if (A.has_t())
      Type = onnx::AttributeProto::TENSOR;
    else if (A.has_g() || A.graphs_size())
      Type = onnx::AttributeProto::GRAPH;
    else if (A.floats_size())
      Type = onnx::AttributeProto::FLOATS;
    else if (A.ints_size())
      Type = onnx::AttributeProto::INTS;
    else if (A.strings_size())
      Type = onnx::AttributeProto::STRINGS;
    else
      return N.error(What + " has no type and no value");
  }
  switch (Type) {
  case onnx::AttributeProto::FLOAT:
    return Attribute::getFloat(A.f());
  case onnx::AttributeProto::INT:
    return Attribute::getInt(A.i());
  case onnx::AttributeProto::STRING:
    return Attribute::getString(A.s());
  case onnx::AttributeProto::TENSOR: {
    auto D = decodeTensor(A.t(), Policy);
    if (!D)
      return N.error(relabelTensorError(D.takeError(), A.t().name(), What));
    return Attribute::getTensor(*D);
  }
  case onnx::AttributeProto::FLOATS:
    return Attribute::getFloats(
        std::vector<float>(A.floats().begin(), A.floats().end()));
  case onnx::AttributeProto::INTS:
    return Attribute::getInts(
        std::vector<int64_t>(A.ints().begin(), A.ints().end()));
  case onnx::AttributeProto::STRINGS:
    return Attribute::getStrings(
        std::vector<std::string>(A.strings().begin(), A.strings().end()));
  case onnx::AttributeProto::GRAPH:
  case onnx::AttributeProto::GRAPHS:
    return N.error(What + " is a subgraph (unsupported)");
  case onnx::AttributeProto::SPARSE_TENSOR:
  case onnx::AttributeProto::SPARSE_TENSORS:
    return N.error(What + " is a sparse tensor (unsupported)");
  case onnx::AttributeProto::TENSORS:
    return N.error(What + " is a list of tensors (unsupported)");
  case onnx::AttributeProto::TYPE_PROTO:
  case onnx::AttributeProto::TYPE_PROTOS:
    return N.error(What + " is a type (unsupported)");
  default:
    break;
  }
  return N.error(What + " has unknown attribute type " +
                 llvm::Twine(int(Type)));
}

//===----------------------------------------------------------------------===//
// Model-level information
//===----------------------------------------------------------------------===//

llvm::Error ModelImporter::readModelInfo() {
  ModelInfo &Info = G->getModelInfo();
  Info.IRVersion = Model.ir_version();
  Info.ProducerName = Model.producer_name();
  Info.ProducerVersion = Model.producer_version();
  Info.Domain = Model.domain();
  Info.ModelVersion = Model.model_version();
  Info.DocString = Model.doc_string();
  Info.GraphDocString = Model.graph().doc_string();
  for (const onnx::StringStringEntryProto &P : Model.metadata_props())
    Info.Metadata.emplace_back(P.key(), P.value());

  bool HasDefault = false;
  for (const onnx::OperatorSetIdProto &Op : Model.opset_import()) {
    std::string Domain = normalizeDomain(Op.domain());
    std::string Shown = Domain.empty() ? "ai.onnx" : Domain;
    if (Op.version() <= 0)
      return fileError("opset import of domain '" + Shown +
                       "' has invalid version " + llvm::Twine(Op.version()));
    if (!Info.OpsetImports.emplace(Domain, Op.version()).second)
      return fileError("domain '" + Shown + "' is imported twice");
    if (Domain.empty()) {
      HasDefault = true;
      Opset = Op.version();
    }
  }
  if (!HasDefault)
    return fileError("model imports no opset of the default domain (ai.onnx)");
  if (Opset < MinSupportedOpset || Opset > MaxSupportedOpset)
    return fileError(
        "default-domain opset " + llvm::Twine(Opset) +
        " is not supported (supported: " + llvm::Twine(MinSupportedOpset) +
        " to " + llvm::Twine(MaxSupportedOpset) + ")");

  for (const onnx::FunctionProto &F : Model.functions())
    if (!LocalFunctions
             .emplace(std::make_pair(normalizeDomain(F.domain()), F.name()), &F)
             .second)
      return fileError("model-local function '" + F.name() +
                       "' is defined twice");
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Inputs, initializers, declared types
//===----------------------------------------------------------------------===//

llvm::Error ModelImporter::readInputsAndInitializers() {
  const onnx::GraphProto &GP = Model.graph();
  if (GP.sparse_initializer_size())
    return fileError("sparse initializer '" +
                     GP.sparse_initializer(0).values().name() +
                     "' is not supported");

  // Decode initializers first: inputs may take their defaults from them.
  llvm::StringMap<TensorDataRef> Initializers;
  std::vector<std::string> InitializerOrder;
  for (onnx::TensorProto &T : *Model.mutable_graph()->mutable_initializer()) {
    if (T.name().empty())
      return fileError("initializer has no name");
    if (Initializers.count(T.name()))
      return fileError("initializer '" + T.name() + "' is defined twice");
    auto D = decodeTensor(T, Policy);
    if (!D)
      return fileError(
          relabelTensorError(D.takeError(), T.name(), "initializer"));
    Initializers[T.name()] = *D;
    InitializerOrder.push_back(T.name());
    releaseTensorData(T);
  }

  llvm::StringSet<> InputNames;
  for (const onnx::ValueInfoProto &VI : GP.input()) {
    const std::string &Name = VI.name();
    if (Name.empty())
      return fileError("graph input has no name");
    if (!InputNames.insert(Name).second)
      return fileError("graph input '" + Name + "' is declared twice");
    auto Ty = convertType(VI.type(), File, "graph input '" + Name + "'");
    if (!Ty)
      return Ty.takeError();
    auto It = Initializers.find(Name);
    TensorDataRef Default = It == Initializers.end() ? nullptr : It->second;
    TensorType Type = *Ty;
    if (Default) {
      const TensorType &DataTy = Default->getType();
      if (!isCompatibleType(Type, DataTy))
        return fileError("graph input '" + Name + "' is declared as " +
                         Type.str() + " but its initializer has type " +
                         DataTy.str());
      // The declared type may keep symbolic dims (the default is
      // overridable); fill in what it leaves unknown.
      if (Type.getElementType() == ElementType::Unknown || !Type.hasRank())
        Type = refineType(Type, DataTy);
    }
    if (!Default)
      Type = nameAnonymousDims(Type, Name);
    Value *V = G->addInput(Name, Type);
    if (Default)
      V->setDefaultData(Default);
  }

  // The other initializers become Constant nodes, first in the graph.
  for (const std::string &Name : InitializerOrder) {
    if (InputNames.count(Name))
      continue;
    TensorDataRef Data = Initializers[Name];
    Node *N = G->createNode(OpId::Constant, {}, {Name}, {Data->getType()});
    N->setAttr("value", Attribute::getTensor(Data));
    N->setLoc(Location{File, Name});
  }
  return llvm::Error::success();
}

TensorType ModelImporter::nameAnonymousDims(const TensorType &Type,
                                            llvm::StringRef Input) {
  if (!Type.hasRank())
    return Type;
  llvm::StringSet<> Used;
  for (const onnx::ValueInfoProto &VI : Model.graph().input())
    if (VI.type().has_tensor_type())
      for (const auto &D : VI.type().tensor_type().shape().dim())
        if (D.has_dim_param())
          Used.insert(D.dim_param());
  llvm::SmallVector<Dim, 6> Dims(Type.getShape().begin(),
                                 Type.getShape().end());
  for (unsigned I = 0; I < Dims.size(); ++I) {
    if (!Dims[I].isUnknown())
      continue;
    std::string Symbol = (Input + ":" + llvm::Twine(I)).str();
    while (Used.count(Symbol))
      Symbol += "'";
    Used.insert(Symbol);
    Dims[I] = Dim::getSymbol(Symbol);
  }
  return TensorType(Type.getElementType(), Dims, Type.getLayout());
}

/// Declared types and names of \p GP and of the subgraphs of its nodes.
static void collectGraphNames(const onnx::GraphProto &GP,
                              llvm::StringMap<const onnx::TypeProto *> &Types,
                              llvm::StringSet<> &Names) {
  for (const onnx::ValueInfoProto &VI : GP.value_info())
    if (!VI.name().empty())
      Types[VI.name()] = &VI.type();
  for (const onnx::ValueInfoProto &VI : GP.output())
    if (!VI.name().empty())
      Types[VI.name()] = &VI.type();
  for (const onnx::ValueInfoProto &VI : GP.input())
    Names.insert(VI.name());
  for (const onnx::TensorProto &T : GP.initializer())
    Names.insert(T.name());
  for (const onnx::NodeProto &NP : GP.node()) {
    for (const std::string &S : NP.input())
      Names.insert(S);
    for (const std::string &S : NP.output())
      Names.insert(S);
    for (const onnx::AttributeProto &A : NP.attribute()) {
      if (A.has_g())
        collectGraphNames(A.g(), Types, Names);
      for (const onnx::GraphProto &Sub : A.graphs())
        collectGraphNames(Sub, Types, Names);
    }
  }
  for (const onnx::ValueInfoProto &VI : GP.output())
    Names.insert(VI.name());
}

llvm::Error ModelImporter::collectDeclaredTypes() {
  collectGraphNames(Model.graph(), DeclaredTypes, ReservedNames);
  ReservedNames.erase("");
  return llvm::Error::success();
}

/// Names the nodes of \p GP (and of their subgraphs) read that \p GP does
/// not define: what a subgraph takes from the graphs around it.
static void collectFreeNames(const onnx::GraphProto &GP,
                             std::set<std::string> &Free) {
  std::set<std::string> Defined;
  for (const onnx::ValueInfoProto &VI : GP.input())
    Defined.insert(VI.name());
  for (const onnx::TensorProto &T : GP.initializer())
    Defined.insert(T.name());
  for (const onnx::NodeProto &NP : GP.node())
    for (const std::string &Out : NP.output())
      Defined.insert(Out);
  std::set<std::string> Read;
  for (const onnx::NodeProto &NP : GP.node()) {
    for (const std::string &In : NP.input())
      Read.insert(In);
    for (const onnx::AttributeProto &A : NP.attribute()) {
      if (A.has_g())
        collectFreeNames(A.g(), Read);
      for (const onnx::GraphProto &Sub : A.graphs())
        collectFreeNames(Sub, Read);
    }
  }
  for (const onnx::ValueInfoProto &VI : GP.output())
    Read.insert(VI.name());
  for (const std::string &Name : Read)
    if (!Name.empty() && !Defined.count(Name))
      Free.insert(Name);
}

//===----------------------------------------------------------------------===//
// Node order
//===----------------------------------------------------------------------===//

llvm::Error ModelImporter::orderNodes(const onnx::GraphProto &GP,
                                      std::vector<int> &Order) {
  int NumNodes = GP.node_size();
  // Which node produces each name; -1 for graph inputs and initializers.
  llvm::StringMap<int> Producer;
  for (const onnx::ValueInfoProto &VI : GP.input())
    Producer[VI.name()] = -1;
  for (const onnx::TensorProto &T : GP.initializer())
    Producer[T.name()] = -1;
  for (int I = 0; I < NumNodes; ++I) {
    const onnx::NodeProto &NP = GP.node(I);
    for (const std::string &Out : NP.output()) {
      if (Out.empty())
        continue;
      auto Ins = Producer.try_emplace(Out, I);
      if (Ins.second)
        continue;
      int Prev = Ins.first->second;
      if (Prev == I)
        return makeError(describeProtoNode(NP) + ": output '" + Out +
                         "' is listed twice");
      std::string By = Prev < 0 ? std::string("a graph input or initializer")
                                : describeProtoNode(GP.node(Prev));
      // Strip the file prefix of the other node for readability.
      if (Prev >= 0)
        By = By.substr(File.size() + 2);
      return makeError(describeProtoNode(NP) + ": output '" + Out +
                       "' is already defined by " + By);
    }
  }

  // Dependencies; count distinct producer nodes per node.
  std::vector<std::vector<int>> Users(NumNodes);
  std::vector<int> Pending(NumNodes, 0);
  // A value of an enclosing graph (while a branch is imported).
  auto IsOuter = [&](const std::string &Name) {
    return llvm::any_of(EnclosingGraphs,
                        [&](Graph *E) { return E->lookupValue(Name); });
  };
  for (int I = 0; I < NumNodes; ++I) {
    const onnx::NodeProto &NP = GP.node(I);
    std::set<int> Producers;
    for (const std::string &In : NP.input()) {
      if (In.empty())
        continue;
      auto It = Producer.find(In);
      if (It == Producer.end()) {
        if (IsOuter(In))
          continue;
        return makeError(describeProtoNode(NP) + ": input '" + In +
                         "' is not defined");
      }
      if (It->second >= 0)
        Producers.insert(It->second);
    }
    // What the node's subgraphs read from this graph orders it too
    // (undefined names are reported when the subgraph is imported).
    std::set<std::string> Free;
    for (const onnx::AttributeProto &A : NP.attribute()) {
      if (A.has_g())
        collectFreeNames(A.g(), Free);
      for (const onnx::GraphProto &Sub : A.graphs())
        collectFreeNames(Sub, Free);
    }
    for (const std::string &In : Free) {
      auto It = Producer.find(In);
      if (It != Producer.end() && It->second >= 0 && It->second != I)
        Producers.insert(It->second);
    }
    Pending[I] = int(Producers.size());
    for (int P : Producers)
      Users[P].push_back(I);
  }

  // Kahn's algorithm taking the earliest ready node: a sorted model keeps
  // its order.
  std::priority_queue<int, std::vector<int>, std::greater<int>> Ready;
  for (int I = 0; I < NumNodes; ++I)
    if (Pending[I] == 0)
      Ready.push(I);
  Order.clear();
  while (!Ready.empty()) {
    int I = Ready.top();
    Ready.pop();
    Order.push_back(I);
    for (int U : Users[I])
      if (--Pending[U] == 0)
        Ready.push(U);
  }
  if (int(Order.size()) == NumNodes)
    return llvm::Error::success();

  // Walk producers among the unsorted nodes until one repeats: it lies on
  // a cycle.
  int Start = 0;
  while (Pending[Start] == 0)
    ++Start;
  std::vector<bool> Seen(NumNodes, false);
  int Cur = Start;
  while (!Seen[Cur]) {
    Seen[Cur] = true;
    int Next = -1;
    for (const std::string &In : GP.node(Cur).input()) {
      if (In.empty())
        continue;
      int P = Producer.lookup(In);
      if (P >= 0 && Pending[P] > 0) {
        Next = P;
        break;
      }
    }
    if (Next < 0)
      break; // Cannot happen: an unsorted node has an unsorted producer.
    Cur = Next;
  }
  return makeError(describeProtoNode(GP.node(Cur)) + ": is part of a cycle");
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

llvm::Error ModelImporter::finishNode(Node &N) {
  N.trimTrailingNullOperands();
  if (llvm::Error E = verifyNodeSchema(N))
    return E;
  if (!Opts.InferShapes || N.isOpaque())
    return llvm::Error::success();
  // Best effort: a failure here is reported by the full inference pass.
  llvm::SmallVector<TensorType, 4> Inferred;
  if (llvm::Error E = inferResultTypes(N, Inferred)) {
    llvm::consumeError(std::move(E));
    return llvm::Error::success();
  }
  for (unsigned I = 0; I < N.getNumResults() && I < Inferred.size(); ++I) {
    Value *R = N.getResult(I);
    if (!R)
      continue;
    if (isCompatibleType(R->getType(), Inferred[I])) {
      R->setType(refineType(R->getType(), Inferred[I]));
      continue;
    }
    // A declared type (value_info, graph output) that inference contradicts:
    // inference wins unless the import is strict (then inferShapes reports
    // it).
    if (Opts.Strict)
      continue;
    warn(llvm::toString(
        makeNodeError(N, "result '" + R->getName() + "' declared as " +
                             R->getType().str() + " but inferred as " +
                             Inferred[I].str() + "; using the inferred type")));
    R->setType(Inferred[I]);
  }
  return llvm::Error::success();
}

llvm::Expected<Value *> ModelImporter::createHelperNode(
    const PendingNode &Origin, OpId Id, llvm::ArrayRef<Value *> Operands,
    llvm::ArrayRef<NamedAttribute> Attrs, llvm::StringRef NameHint) {
  std::string Name = makeFreshName(NameHint);
  // Constants know their type; the rest is left to shape inference.
  TensorType Type;
  if (Id == OpId::Constant)
    for (const NamedAttribute &A : Attrs)
      if (A.Name == "value" && A.Value.getKind() == AttrKind::Tensor)
        Type = A.Value.getTensor()->getType();
  Node *N = G->createNode(Id, Operands, {Name}, {Type});
  for (const NamedAttribute &A : Attrs)
    N->setAttr(A.Name, A.Value);
  N->setLoc(Origin.Loc);
  if (llvm::Error E = finishNode(*N))
    return E;
  return N->getResult(0);
}

llvm::Error ModelImporter::importNode(const onnx::NodeProto &NP) {
  PendingNode PN;
  PN.OpType = NP.op_type();
  PN.Domain = normalizeDomain(NP.domain());
  PN.Loc = Location{File, NP.name()};
  PN.DocString = NP.doc_string();
  PN.Description = describeProtoNode(NP);

  if (PN.OpType.empty())
    return PN.error("has no op type");
  if (!G->getModelInfo().OpsetImports.count(PN.Domain))
    return PN.error("domain '" + PN.Domain + "' has no opset import");

  for (const std::string &In : NP.input()) {
    if (In.empty()) {
      PN.Operands.push_back(nullptr);
      continue;
    }
    Value *V = lookupOrCapture(In);
    if (!V)
      return PN.error("input '" + In + "' is not defined");
    PN.Operands.push_back(V);
  }

  int LastResult = NP.output_size() - 1;
  while (LastResult >= 0 && NP.output(LastResult).empty())
    --LastResult;
  llvm::StringSet<> SeenOutputs;
  for (int I = 0; I <= LastResult; ++I) {
    const std::string &Out = NP.output(I);
    TensorType Ty;
    if (!Out.empty()) {
      if (!SeenOutputs.insert(Out).second)
        return PN.error("output '" + Out + "' is listed twice");
      // A branch's value named like one its graph already has (a value
      // the branch reads from outside, redefined).
      if (G->lookupValue(Out))
        return PN.error("output '" + Out + "' is already defined");
      auto It = DeclaredTypes.find(Out);
      if (It != DeclaredTypes.end()) {
        auto T =
            convertType(*It->second, PN.Description, "output '" + Out + "'");
        if (!T)
          return T.takeError();
        Ty = *T;
      }
    }
    // The IR requires a node's first result (ops such as LSTM and GRU list
    // only later ones): an omitted one becomes a fresh value nobody reads.
    PN.ResultNames.push_back(I == 0 && Out.empty()
                                 ? makeFreshName(NP.output(LastResult) + "_0")
                                 : Out);
    PN.ResultTypes.push_back(Ty);
  }

  if (PN.Domain.empty() && PN.OpType == "If")
    return importIf(NP, PN);

  llvm::StringSet<> SeenAttrs;
  for (const onnx::AttributeProto &A : NP.attribute()) {
    if (A.name().empty())
      return PN.error("has an attribute without a name");
    if (!SeenAttrs.insert(A.name()).second)
      return PN.error("attribute '" + A.name() + "' is given twice");
    auto Attr = convertAttribute(A, PN);
    if (!Attr)
      return Attr.takeError();
    PN.Attrs.push_back({A.name(), std::move(*Attr)});
  }

  // A call of a model-local function: its body in its place (the opset
  // its body imports for the default domain, else the model's).
  auto Local = LocalFunctions.find({PN.Domain, PN.OpType});
  if (Local != LocalFunctions.end()) {
    int64_t BodyOpset = Opset;
    for (const onnx::OperatorSetIdProto &O : Local->second->opset_import())
      if (normalizeDomain(O.domain()).empty() && O.version() > 0)
        BodyOpset = O.version();
    return inlineFunction(NP, PN, *Local->second, BodyOpset, nullptr);
  }

  if (llvm::Error E = upgradeNode(*this, PN))
    return E;

  const OpInfo *Info = PN.Domain.empty() ? lookupOp(PN.OpType) : nullptr;
  // The internal relayout op is not an ONNX op.
  if (Info && Info->Id == OpId::Relayout)
    Info = nullptr;
  if (!Info && PN.Domain.empty()) {
    auto Expanded = expandSchemaFunction(NP, PN);
    if (!Expanded)
      return Expanded.takeError();
    if (*Expanded)
      return llvm::Error::success();
    // Else Strider's own body for it, if any.
    if (FunctionBody SB = getStriderFunctionBody(NP, Opset); SB.Body) {
      // Attributes the call leaves out take the op's schema defaults
      // (Hardmax's axis = -1), else the body ops' own.
      const onnx::OpSchema *S =
          onnx::OpSchemaRegistry::Schema(NP.op_type(), int(Opset), "");
      return inlineFunction(NP, PN, *SB.Body, SB.BodyOpset,
                            S ? &S->attributes() : nullptr);
    }
  }
  Node *N = Info ? G->createNode(Info->Id, PN.Operands, PN.ResultNames,
                                 PN.ResultTypes)
                 : G->createOpaqueNode(PN.Domain, PN.OpType, PN.Operands,
                                       PN.ResultNames, PN.ResultTypes);
  for (NamedAttribute &A : PN.Attrs)
    N->setAttr(A.Name, std::move(A.Value));
  N->setLoc(PN.Loc);
  N->setDocString(PN.DocString);
  return finishNode(*N);
}

//===----------------------------------------------------------------------===//
// Subgraphs (If branches)
//===----------------------------------------------------------------------===//

Value *ModelImporter::resolveAt(unsigned Level, llvm::StringRef Name) {
  Graph *At =
      Level == EnclosingGraphs.size() ? G.get() : EnclosingGraphs[Level];
  if (Value *V = At->lookupValue(Name))
    return V;
  if (Level == 0)
    return nullptr;
  Value *Outer = resolveAt(Level - 1, Name);
  if (!Outer)
    return nullptr;
  CaptureLists[Level - 1]->push_back(Outer);
  return At->addInput(Name, Outer->getType());
}

Value *ModelImporter::lookupOrCapture(llvm::StringRef Name) {
  return resolveAt(EnclosingGraphs.size(), Name);
}

llvm::Expected<std::unique_ptr<Graph>>
ModelImporter::importBranch(const onnx::GraphProto &GP, const PendingNode &PN,
                            llvm::StringRef What,
                            std::vector<Value *> &Captures) {
  if (GP.input_size())
    return PN.error("attribute '" + What + "' declares " +
                    llvm::Twine(GP.input_size()) +
                    " inputs; an If branch takes none");
  if (GP.sparse_initializer_size())
    return PN.error("attribute '" + What + "' has a sparse initializer");
  auto Branch =
      std::make_unique<Graph>(GP.name().empty() ? What.str() : GP.name());
  Branch->setSourceFile(File);
  Branch->getModelInfo().OpsetImports = G->getModelInfo().OpsetImports;
  // The values the other branch already reads come first, in its order.
  for (Value *C : Captures)
    Branch->addInput(C->getName(), C->getType());

  // Import into the branch with the enclosing graphs in scope.
  const std::string Where = PN.Description + ": " + What.str();
  EnclosingGraphs.push_back(G.get());
  CaptureLists.push_back(&Captures);
  std::swap(G, Branch);
  llvm::Error Err = [&]() -> llvm::Error {
    for (const onnx::TensorProto &T : GP.initializer()) {
      if (T.name().empty())
        return makeError(Where + ": initializer has no name");
      if (G->lookupValue(T.name()))
        return makeError(Where + ": initializer '" + T.name() +
                         "' is defined twice");
      auto D = decodeTensor(T, Policy);
      if (!D)
        return makeError(
            Where + ": " +
            relabelTensorError(D.takeError(), T.name(), "initializer"));
      Node *N =
          G->createNode(OpId::Constant, {}, {T.name()}, {(*D)->getType()});
      N->setAttr("value", Attribute::getTensor(*D));
      N->setLoc(Location{File, T.name()});
    }
    std::vector<int> Order;
    if (llvm::Error E = orderNodes(GP, Order))
      return E;
    for (int I : Order)
      if (llvm::Error E = importNode(GP.node(I)))
        return E;
    for (const onnx::ValueInfoProto &VI : GP.output()) {
      Value *V = VI.name().empty() ? nullptr : lookupOrCapture(VI.name());
      if (!V)
        return makeError(Where + ": output '" + VI.name() + "' is not defined");
      G->addOutput(V);
    }
    // Best effort, as for the nodes: the taken branch is inferred again,
    // with the operands' types, once inlined.
    std::vector<std::string> Conflicts;
    llvm::consumeError(inferShapes(*G, &Conflicts));
    return llvm::Error::success();
  }();
  std::swap(G, Branch);
  EnclosingGraphs.pop_back();
  CaptureLists.pop_back();
  if (Err)
    return Err;
  // The opsets were for importing its nodes; a branch has no model line
  // (as the parser builds it).
  Branch->getModelInfo().OpsetImports.clear();
  return Branch;
}

llvm::Error ModelImporter::importIf(const onnx::NodeProto &NP,
                                    PendingNode &PN) {
  const onnx::GraphProto *Branches[2] = {nullptr, nullptr};
  const char *Names[2] = {"then_branch", "else_branch"};
  for (const onnx::AttributeProto &A : NP.attribute()) {
    unsigned B = A.name() == Names[0] ? 0 : A.name() == Names[1] ? 1 : 2;
    if (B == 2)
      return PN.error("has unknown attribute '" + A.name() + "'");
    if (Branches[B])
      return PN.error("attribute '" + A.name() + "' is given twice");
    if (!A.has_g())
      return PN.error("attribute '" + A.name() + "' must be a graph");
    Branches[B] = &A.g();
  }
  for (unsigned B = 0; B < 2; ++B)
    if (!Branches[B])
      return PN.error("is missing required attribute '" +
                      llvm::Twine(Names[B]) + "'");
  if (PN.Operands.size() != 1 || !PN.Operands[0])
    return PN.error("takes one input (the condition), got " +
                    llvm::Twine(NP.input_size()));

  std::vector<Value *> Captures;
  auto Then = importBranch(*Branches[0], PN, Names[0], Captures);
  if (!Then)
    return Then.takeError();
  const size_t ThenReads = Captures.size();
  auto Else = importBranch(*Branches[1], PN, Names[1], Captures);
  if (!Else)
    return Else.takeError();
  // What only the else branch reads is passed to the then branch too.
  for (size_t I = ThenReads; I < Captures.size(); ++I)
    (*Then)->addInput((*Then)->makeUniqueName(Captures[I]->getName()),
                      Captures[I]->getType());

  std::vector<Value *> Operands = {PN.Operands[0]};
  Operands.insert(Operands.end(), Captures.begin(), Captures.end());
  Node *N = G->createNode(OpId::If, Operands, PN.ResultNames, PN.ResultTypes);
  N->setAttr("then_branch", Attribute::getGraph(std::move(*Then)));
  N->setAttr("else_branch", Attribute::getGraph(std::move(*Else)));
  N->setLoc(PN.Loc);
  N->setDocString(PN.DocString);
  return finishNode(*N);
}

llvm::Error ModelImporter::inlineFunction(
    const onnx::NodeProto &NP, const PendingNode &PN,
    const onnx::FunctionProto &F, int64_t BodyOpset,
    const std::map<std::string, onnx::OpSchema::Attribute> *Defaults) {
  constexpr unsigned MaxInlineDepth = 16;
  constexpr int64_t MaxInlinedNodes = int64_t(1) << 20;
  if (InlineDepth >= MaxInlineDepth)
    return PN.error("expands functions more than " +
                    llvm::Twine(MaxInlineDepth) + " deep (recursive?)");
  if (InlineDepth == 0) {
    // The whole expansion, counted before any of it is imported.
    const int64_t Size =
        getExpandedSize(F, MaxInlinedNodes - InlinedNodes, MaxInlineDepth);
    if (Size < 0)
      return PN.error("expands functions more than " +
                      llvm::Twine(MaxInlineDepth) + " deep (recursive?)");
    InlinedNodes += Size;
    if (InlinedNodes > MaxInlinedNodes)
      return PN.error("function calls expand to more than " +
                      llvm::Twine(MaxInlinedNodes) + " nodes");
  }
  if (NP.input_size() > F.input_size() || NP.output_size() > F.output_size())
    return PN.error("has " + llvm::Twine(NP.input_size()) + " inputs and " +
                    llvm::Twine(NP.output_size()) + " outputs; function '" +
                    F.name() + "' takes " + llvm::Twine(F.input_size()) +
                    " and " + llvm::Twine(F.output_size()));
  const std::string Prefix = NP.name().empty() ? NP.op_type() : NP.name();
  // Formal names to the call's: inputs the call leaves out stay absent;
  // outputs it leaves out get fresh names (the body may still read them).
  std::map<std::string, std::string> Names;
  for (int I = 0; I < F.input_size(); ++I)
    Names[F.input(I)] = I < NP.input_size() ? NP.input(I) : "";
  for (int I = 0; I < F.output_size(); ++I)
    Names[F.output(I)] = I < NP.output_size() && !NP.output(I).empty()
                             ? NP.output(I)
                             : makeFreshName(Prefix + "/" + F.output(I));
  auto Rename = [&](const std::string &Name) -> std::string {
    if (Name.empty())
      return Name;
    auto It = Names.find(Name);
    if (It != Names.end())
      return It->second;
    return Names[Name] = makeFreshName(Prefix + "/" + Name);
  };
  std::map<std::string, const onnx::AttributeProto *> CallAttrs;
  for (const onnx::AttributeProto &A : NP.attribute())
    CallAttrs[A.name()] = &A;

  const int64_t SavedOpset = Opset;
  Opset = BodyOpset;
  ++InlineDepth;
  llvm::Error Err = llvm::Error::success();
  for (int K = 0; K < F.node_size() && !Err; ++K) {
    const onnx::NodeProto &B = F.node(K);
    onnx::NodeProto C = B;
    C.set_name(Prefix + "/" +
               (B.name().empty() ? B.op_type() + std::to_string(K) : B.name()));
    for (int I = 0; I < C.input_size(); ++I)
      C.set_input(I, Rename(B.input(I)));
    for (int I = 0; I < C.output_size(); ++I)
      C.set_output(I, Rename(B.output(I)));
    C.clear_attribute();
    for (const onnx::AttributeProto &A : B.attribute()) {
      if (A.ref_attr_name().empty()) {
        *C.add_attribute() = A;
        continue;
      }
      const onnx::AttributeProto *Bound = nullptr;
      auto Given = CallAttrs.find(A.ref_attr_name());
      if (Given != CallAttrs.end()) {
        Bound = Given->second;
      } else if (Defaults) {
        auto Default = Defaults->find(A.ref_attr_name());
        if (Default != Defaults->end() &&
            Default->second.default_value.type() !=
                onnx::AttributeProto::UNDEFINED)
          Bound = &Default->second.default_value;
      }
      if (!Bound)
        continue; // The body's op then takes its own default.
      onnx::AttributeProto *To = C.add_attribute();
      *To = *Bound;
      To->set_name(A.name());
    }
    Err = importNode(C);
  }
  --InlineDepth;
  Opset = SavedOpset;
  if (Err)
    return Err;
  // The call's declared result types are the body's results' now.
  return llvm::Error::success();
}

int64_t ModelImporter::getExpandedSize(const onnx::FunctionProto &F,
                                       int64_t Limit, unsigned Depth) {
  auto Known = ExpandedSizes.find(&F);
  if (Known != ExpandedSizes.end())
    return Known->second;
  if (Depth == 0)
    return -1;
  int64_t Size = 0;
  for (const onnx::NodeProto &N : F.node()) {
    auto Callee = LocalFunctions.find(
        std::make_pair(normalizeDomain(N.domain()), N.op_type()));
    int64_t Part = 1;
    if (Callee != LocalFunctions.end()) {
      Part = getExpandedSize(*Callee->second, Limit - Size, Depth - 1);
      if (Part < 0)
        return -1;
    }
    Size += Part;
    if (Size > Limit)
      return Size; // Too many already; not memoized (Limit varies).
  }
  ExpandedSizes[&F] = Size;
  return Size;
}

void ModelImporter::inferTypeOf(const Value &V, unsigned Depth) {
  Node *D = V.getDefiningNode();
  if (V.getType().getElementType() != ElementType::Unknown || !D ||
      D->isOpaque() || Depth > 256)
    return;
  for (const Value *Op : D->getOperands())
    if (Op)
      inferTypeOf(*Op, Depth + 1);
  llvm::SmallVector<TensorType, 4> Inferred;
  if (llvm::Error E = inferResultTypes(*D, Inferred)) {
    llvm::consumeError(std::move(E));
    return;
  }
  for (unsigned I = 0; I < D->getNumResults() && I < Inferred.size(); ++I)
    if (Value *R = D->getResult(I))
      if (isCompatibleType(R->getType(), Inferred[I]))
        R->setType(refineType(R->getType(), Inferred[I]));
}

llvm::Expected<bool>
ModelImporter::expandSchemaFunction(const onnx::NodeProto &NP,
                                    const PendingNode &PN) {
  const onnx::OpSchema *S =
      onnx::OpSchemaRegistry::Schema(NP.op_type(), int(Opset), "");
  if (!S)
    return false;
  onnx::FunctionProto Body;
  if (S->HasFunction()) {
    Body = *S->GetFunction();
  } else if (S->HasContextDependentFunction()) {
    // The builders read the operands' element types (and some, ranks).
    // An import without shape inference infers them here, from the nodes
    // that compute them; failing that, the op stays as it is.
    for (const Value *V : PN.Operands)
      if (V && V->getType().getElementType() == ElementType::Unknown) {
        inferTypeOf(*V, 0);
        if (V->getType().getElementType() == ElementType::Unknown)
          return false;
      }
    std::vector<onnx::TypeProto> Types;
    for (const Value *V : PN.Operands) {
      onnx::TypeProto T;
      if (V) {
        onnx::TypeProto::Tensor *TT = T.mutable_tensor_type();
        TT->set_elem_type(toOnnxDataType(V->getType().getElementType()));
        if (V->getType().hasRank()) {
          onnx::TensorShapeProto *Shape = TT->mutable_shape();
          for (const Dim &D : V->getType().getShape()) {
            onnx::TensorShapeProto::Dimension *To = Shape->add_dim();
            if (D.isStatic())
              To->set_dim_value(D.getSize());
          }
        }
      }
      Types.push_back(std::move(T));
    }
    onnx::FunctionBodyBuildContextImpl Ctx(NP, Types);
    try {
      if (!S->BuildContextDependentFunction(Ctx, Body))
        return false;
    } catch (const std::exception &E) {
      return PN.error(std::string("cannot expand its ONNX function: ") +
                      E.what());
    }
  } else {
    return false;
  }
  int64_t BodyOpset = S->SinceVersion();
  for (const onnx::OperatorSetIdProto &O : Body.opset_import())
    if (normalizeDomain(O.domain()).empty() && O.version() > 0)
      BodyOpset = O.version();
  if (Body.input_size() == 0 && Body.output_size() == 0) {
    // Schema bodies name their formals after the schema's.
    for (const onnx::OpSchema::FormalParameter &In : S->inputs())
      Body.add_input(In.GetName());
    for (const onnx::OpSchema::FormalParameter &Out : S->outputs())
      Body.add_output(Out.GetName());
  }
  Body.set_name(NP.op_type());
  if (llvm::Error E = inlineFunction(NP, PN, Body, BodyOpset, &S->attributes()))
    return E;
  return true;
}

llvm::Error ModelImporter::readOutputs() {
  for (const onnx::ValueInfoProto &VI : Model.graph().output()) {
    if (VI.name().empty())
      return fileError("graph output has no name");
    Value *V = G->lookupValue(VI.name());
    if (!V)
      return fileError("graph output '" + VI.name() + "' is not defined");
    // A graph input or initializer returned directly keeps its own type;
    // node results already took the declared type.
    if (V->isGraphInput() ||
        V->getDefiningNode()->getOpId() == OpId::Constant) {
      auto Ty =
          convertType(VI.type(), File, "graph output '" + VI.name() + "'");
      if (!Ty)
        return Ty.takeError();
      if (!isCompatibleType(*Ty, V->getType()))
        return fileError("graph output '" + VI.name() + "' is declared as " +
                         Ty->str() + " but has type " + V->getType().str());
    }
    G->addOutput(V);
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<Graph>> ModelImporter::run() {
  if (!Model.has_graph())
    return fileError("model has no graph");
  G = std::make_unique<Graph>();
  if (!Model.graph().name().empty())
    G->setName(Model.graph().name());
  G->setSourceFile(File);

  if (llvm::Error E = readModelInfo())
    return E;
  if (llvm::Error E = collectDeclaredTypes())
    return E;
  if (llvm::Error E = readInputsAndInitializers())
    return E;
  std::vector<int> Order;
  if (llvm::Error E = orderNodes(Model.graph(), Order))
    return E;
  for (int I : Order)
    if (llvm::Error E = importNode(Model.graph().node(I)))
      return E;
  if (llvm::Error E = readOutputs())
    return E;

  if (Opts.InferShapes) {
    std::vector<std::string> Conflicts;
    if (llvm::Error E = inferShapes(*G, Opts.Strict ? nullptr : &Conflicts))
      return E;
    for (std::string &C : Conflicts)
      warn(C);
  }
  if (llvm::Error E = verifyGraph(*G))
    return E;
  return std::move(G);
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

llvm::Expected<std::unique_ptr<Graph>>
strider::importONNXBytes(llvm::StringRef Bytes, llvm::StringRef DisplayName,
                         llvm::StringRef ModelDir, const ImportOptions &Opts) {
  auto Invalid = [&](llvm::StringRef Why) {
    return makeError(DisplayName + ": not a valid ONNX model (" + Why + ")");
  };
  if (Bytes.empty())
    return Invalid("empty file");
  if (Bytes.size() > size_t(INT_MAX))
    return Invalid("larger than 2 GiB; store weights as external data");

  onnx::ModelProto Model;
  google::protobuf::io::ArrayInputStream Stream(Bytes.data(),
                                                int(Bytes.size()));
  google::protobuf::io::CodedInputStream Coded(&Stream);
  Coded.SetTotalBytesLimit(INT_MAX);
  if (!Model.ParsePartialFromCodedStream(&Coded) ||
      !Coded.ConsumedEntireMessage())
    return Invalid("protobuf parse failed");

  ModelImporter Importer(Model, DisplayName, ModelDir, Opts);
  return Importer.run();
}

llvm::Expected<std::unique_ptr<Graph>>
strider::importONNXFile(llvm::StringRef Path, const ImportOptions &Opts) {
  auto Buffer = readInputFile(Path);
  if (!Buffer)
    return Buffer.takeError();
  std::string ModelDir;
  if (Path != "-") {
    ModelDir = llvm::sys::path::parent_path(Path).str();
    if (ModelDir.empty())
      ModelDir = ".";
  }
  return importONNXBytes((*Buffer)->getBuffer(), Path, ModelDir, Opts);
}

bool strider::isImportableOnnxOpForm(llvm::StringRef OpType, int64_t Opset) {
  return Opset >= MinSupportedOpset && Opset <= MaxSupportedOpset &&
         Opset >= getOpset6FormVersion(OpType);
}

bool strider::isExpandedOnnxFunction(llvm::StringRef OpType, int64_t Opset) {
  if (lookupOp(OpType) || Opset < MinSupportedOpset ||
      Opset > MaxSupportedOpset)
    return false;
  const onnx::OpSchema *S =
      onnx::OpSchemaRegistry::Schema(OpType.str(), int(Opset), "");
  return (S && (S->HasFunction() || S->HasContextDependentFunction())) ||
         hasStriderFunctionBody(OpType, Opset);
}
