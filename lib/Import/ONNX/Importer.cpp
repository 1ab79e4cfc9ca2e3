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
#include "ModelImporter.h"
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

std::string onnximport::normalizeDomain(llvm::StringRef Domain) {
  if (Domain == "ai.onnx")
    return "";
  return Domain.str();
}

std::string onnximport::relabelTensorError(llvm::Error E,
                                           llvm::StringRef TensorName,
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

namespace {

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
  TensorType Result(Elt, Dims);
  if (!Result.isWithinSizeLimit())
    return Fail(" is declared " + Result.str() + ", " +
                Result.getSizeLimitProblem());
  return Result;
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
  // The internal ops (relayout, lookup) are not ONNX ops.
  if (Info && (Info->Id == OpId::Relayout || Info->Id == OpId::Lookup))
    Info = nullptr;
  if (!Info && PN.Domain.empty()) {
    auto Expanded = expandSchemaFunction(NP, PN);
    if (!Expanded)
      return Expanded.takeError();
    if (*Expanded)
      return llvm::Error::success();
  }
  // Else Strider's own body for it, if any (ops of the default domain and
  // ONNX Runtime's quantized com.microsoft ones).
  if (!Info)
    if (FunctionBody SB = getStriderFunctionBody(NP, Opset); SB.Body) {
      // Attributes the call leaves out take the op's schema defaults
      // (Hardmax's axis = -1), else the body ops' own.
      const onnx::OpSchema *S =
          PN.Domain.empty()
              ? onnx::OpSchemaRegistry::Schema(NP.op_type(), int(Opset), "")
              : nullptr;
      return inlineFunction(NP, PN, *SB.Body, SB.BodyOpset,
                            S ? &S->attributes() : nullptr);
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
