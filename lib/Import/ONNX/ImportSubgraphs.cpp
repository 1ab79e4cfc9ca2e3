//===- ImportSubgraphs.cpp - If branches and function bodies --------------===//
//
// The ONNX importer's nested graphs: the branches of an If imported as
// graphs of their own (values of enclosing graphs captured as operands),
// model-local functions and the default domain's function-defined ops
// inlined at their calls.
//
//===----------------------------------------------------------------------===//

#include "ModelImporter.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/ShapeInference.h"

using namespace strider;
using namespace strider::onnximport;

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
