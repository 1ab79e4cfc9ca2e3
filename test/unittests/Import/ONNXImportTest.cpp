//===- ONNXImportTest.cpp - ONNX importer through the API -----------------===//
//
// Models are built with the protobuf API here; the lit tests in
// test/Import/ONNX cover the same ground through strider-translate.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Graph.h"
#include "strider/Import/ONNX.h"

#include <set>

#include "onnx/onnx_pb.h"

#include "gtest/gtest.h"

using namespace strider;

namespace {

struct ModelBuilder {
  onnx::ModelProto M;
  onnx::GraphProto *G;

  explicit ModelBuilder(int64_t Opset = 17) {
    M.set_ir_version(8);
    M.set_producer_name("unittest");
    onnx::OperatorSetIdProto *Op = M.add_opset_import();
    Op->set_domain("");
    Op->set_version(Opset);
    G = M.mutable_graph();
    G->set_name("test_graph");
  }

  static void setType(onnx::ValueInfoProto *VI, const char *Name,
                      std::vector<int64_t> Shape) {
    VI->set_name(Name);
    auto *TT = VI->mutable_type()->mutable_tensor_type();
    TT->set_elem_type(onnx::TensorProto::FLOAT);
    auto *S = TT->mutable_shape();
    for (int64_t D : Shape) {
      if (D < 0)
        S->add_dim()->set_dim_param("N");
      else
        S->add_dim()->set_dim_value(D);
    }
  }
  void input(const char *Name, std::vector<int64_t> Shape) {
    setType(G->add_input(), Name, Shape);
  }
  void output(const char *Name, std::vector<int64_t> Shape) {
    setType(G->add_output(), Name, Shape);
  }
  onnx::NodeProto *node(const char *Op, std::vector<const char *> Ins,
                        std::vector<const char *> Outs, const char *Name = "") {
    onnx::NodeProto *N = G->add_node();
    N->set_op_type(Op);
    N->set_name(Name);
    for (const char *I : Ins)
      N->add_input(I);
    for (const char *O : Outs)
      N->add_output(O);
    return N;
  }
  static void floatAttr(onnx::NodeProto *N, const char *Name, float V) {
    onnx::AttributeProto *A = N->add_attribute();
    A->set_name(Name);
    A->set_type(onnx::AttributeProto::FLOAT);
    A->set_f(V);
  }

  std::string bytes() const { return M.SerializeAsString(); }
};

ImportOptions noInference() {
  ImportOptions O;
  O.InferShapes = false;
  return O;
}

std::string importError(const std::string &Bytes,
                        const ImportOptions &Opts = noInference()) {
  auto G = importONNXBytes(Bytes, "m.onnx", "", Opts);
  if (G) {
    ADD_FAILURE() << "expected an import error";
    return "";
  }
  return llvm::toString(G.takeError());
}

TEST(ONNXImportTest, ParseFailures) {
  EXPECT_EQ(importError(std::string("\x0f\xff\xfe", 3)),
            "m.onnx: not a valid ONNX model (protobuf parse failed)");
  ModelBuilder B;
  B.input("x", {2});
  B.node("Relu", {"x"}, {"y"});
  B.output("y", {2});
  std::string Bytes = B.bytes();
  EXPECT_EQ(importError(Bytes.substr(0, Bytes.size() - 3)),
            "m.onnx: not a valid ONNX model (protobuf parse failed)");
  EXPECT_EQ(importError(""), "m.onnx: not a valid ONNX model (empty file)");
}

TEST(ONNXImportTest, OpsetChecks) {
  // Below opset 6, ops in their opset-6 form import; older forms do not.
  ModelBuilder Old(5);
  Old.input("x", {2});
  Old.node("Relu", {"x"}, {"y"}, "r");
  Old.output("y", {2});
  EXPECT_EQ(importError(Old.bytes()),
            "m.onnx: node 'r' (Relu): opset 5 has an older form of Relu than "
            "opset 6's, which is not supported");
  ModelBuilder First(1);
  First.input("x", {2});
  First.node("Softplus", {"x"}, {"y"}, "s");
  First.output("y", {2});
  auto G = importONNXBytes(First.bytes(), "m.onnx", "");
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  EXPECT_EQ((*G)->getNumNodes(), 1u);
  ModelBuilder Future(99);
  EXPECT_EQ(importError(Future.bytes()),
            "m.onnx: default-domain opset 99 is not supported (supported: 1 "
            "to 28)");
  ModelBuilder Twice;
  onnx::OperatorSetIdProto *Op = Twice.M.add_opset_import();
  Op->set_domain("ai.onnx");
  Op->set_version(13);
  EXPECT_EQ(importError(Twice.bytes()),
            "m.onnx: domain 'ai.onnx' is imported twice");
}

TEST(ONNXImportTest, StructuralErrors) {
  {
    ModelBuilder B;
    B.input("x", {2});
    B.node("Relu", {"x"}, {"a"}, "one");
    B.node("Add", {"a", "c"}, {"b"}, "two");
    B.node("Relu", {"b"}, {"c"}, "three");
    B.output("c", {2});
    EXPECT_EQ(importError(B.bytes()),
              "m.onnx: node 'two' (Add): is part of a cycle");
  }
  {
    ModelBuilder B;
    B.input("x", {2});
    B.node("Relu", {"nope"}, {"y"});
    B.output("y", {2});
    EXPECT_EQ(importError(B.bytes()),
              "m.onnx: node (Relu) producing 'y': input 'nope' is not defined");
  }
  {
    ModelBuilder B;
    B.input("x", {2});
    B.node("Relu", {"x"}, {"y"}, "a");
    B.node("Relu", {"x"}, {"y"}, "b");
    B.output("y", {2});
    EXPECT_EQ(importError(B.bytes()),
              "m.onnx: node 'b' (Relu): output 'y' is already defined by node "
              "'a' (Relu)");
  }
  {
    ModelBuilder B;
    B.input("x", {2});
    onnx::NodeProto *N = B.node("Loop", {"", "", "x"}, {"y"}, "loop");
    onnx::AttributeProto *A = N->add_attribute();
    A->set_name("body");
    A->set_type(onnx::AttributeProto::GRAPH);
    A->mutable_g()->set_name("body");
    B.output("y", {2});
    EXPECT_EQ(importError(B.bytes()),
              "m.onnx: node 'loop' (Loop): attribute 'body' is a "
              "subgraph (unsupported)");
  }
}

TEST(ONNXImportTest, ExternalDataNeedsModelDirectory) {
  ModelBuilder B;
  onnx::TensorProto *T = B.G->add_initializer();
  T->set_name("w");
  T->set_data_type(onnx::TensorProto::FLOAT);
  T->add_dims(2);
  T->set_data_location(onnx::TensorProto::EXTERNAL);
  onnx::StringStringEntryProto *E = T->add_external_data();
  E->set_key("location");
  E->set_value("w.bin");
  B.node("Relu", {"w"}, {"y"});
  B.output("y", {2});
  EXPECT_EQ(importError(B.bytes()),
            "m.onnx: initializer 'w': external data 'w.bin' cannot be read (no "
            "model directory)");
}

// The tests below build complete graphs; they need the verifier, which runs
// the per-op shape functions.

TEST(ONNXImportTest, BuildsGraph) {
  ModelBuilder B;
  B.M.set_doc_string("doc");
  onnx::StringStringEntryProto *P = B.M.add_metadata_props();
  P->set_key("k");
  P->set_value("v");
  B.input("x", {-1, 3});
  // Out of order on purpose.
  B.node("Relu", {"a"}, {"y"}, "second");
  onnx::NodeProto *First = B.node("Sigmoid", {"x"}, {"a"}, "first");
  First->set_doc_string("first node");
  B.output("y", {-1, 3});
  auto GOrErr = importONNXBytes(B.bytes(), "m.onnx", "", noInference());
  ASSERT_TRUE(bool(GOrErr)) << llvm::toString(GOrErr.takeError());
  Graph &G = **GOrErr;
  EXPECT_EQ(G.getName(), "test_graph");
  EXPECT_EQ(G.getSourceFile(), "m.onnx");
  EXPECT_EQ(G.getModelInfo().ProducerName, "unittest");
  EXPECT_EQ(G.getModelInfo().DocString, "doc");
  ASSERT_EQ(G.getModelInfo().Metadata.size(), 1u);
  EXPECT_EQ(G.getModelInfo().OpsetImports.at(""), 17);
  std::vector<Node *> Nodes = G.getNodeList();
  ASSERT_EQ(Nodes.size(), 2u);
  EXPECT_EQ(Nodes[0]->getOpId(), OpId::Sigmoid);
  EXPECT_EQ(Nodes[0]->getLoc(), (Location{"m.onnx", "first"}));
  EXPECT_EQ(Nodes[0]->getDocString(), "first node");
  EXPECT_EQ(Nodes[1]->getOpId(), OpId::Relu);
  ASSERT_EQ(G.getInputs().size(), 1u);
  EXPECT_TRUE(G.getInputs()[0]->getType().getDim(0).isSymbol());
  ASSERT_EQ(G.getOutputs().size(), 1u);
  EXPECT_EQ(G.getOutputs()[0]->getName(), "y");
}

TEST(ONNXImportTest, UpgradeHelpersGetFreshNames) {
  ModelBuilder B(10);
  B.input("x", {2});
  onnx::NodeProto *Clip = B.node("Clip", {"x"}, {"y"}, "clip");
  ModelBuilder::floatAttr(Clip, "min", 0.0f);
  // A later value already uses the name a helper would take.
  B.node("Relu", {"y"}, {"y_min"}, "relu");
  B.output("y_min", {2});
  auto GOrErr = importONNXBytes(B.bytes(), "m.onnx", "", noInference());
  ASSERT_TRUE(bool(GOrErr)) << llvm::toString(GOrErr.takeError());
  std::vector<Node *> Nodes = (*GOrErr)->getNodeList();
  ASSERT_EQ(Nodes.size(), 3u);
  EXPECT_EQ(Nodes[0]->getOpId(), OpId::Constant);
  EXPECT_EQ(Nodes[0]->getResult(0)->getName(), "y_min_1");
  EXPECT_EQ(Nodes[1]->getOpId(), OpId::Clip);
  EXPECT_EQ(Nodes[1]->getOperand(1), Nodes[0]->getResult(0));
}

TEST(ONNXImportTest, OpaqueNodesKeepDomainAndAttributes) {
  ModelBuilder B;
  onnx::OperatorSetIdProto *Op = B.M.add_opset_import();
  Op->set_domain("com.example");
  Op->set_version(1);
  B.input("x", {2});
  onnx::NodeProto *N = B.node("MyOp", {"x", ""}, {"y", "", ""}, "custom");
  N->set_domain("com.example");
  ModelBuilder::floatAttr(N, "alpha", 0.5f);
  B.output("y", {2});
  auto GOrErr = importONNXBytes(B.bytes(), "m.onnx", "", noInference());
  ASSERT_TRUE(bool(GOrErr)) << llvm::toString(GOrErr.takeError());
  Node *Custom = (*GOrErr)->getNodeList()[0];
  EXPECT_TRUE(Custom->isOpaque());
  EXPECT_EQ(Custom->getDomain(), "com.example");
  EXPECT_EQ(Custom->getOpType(), "MyOp");
  EXPECT_EQ(Custom->getFloatAttr("alpha", 0), 0.5f);
  // Trailing missing outputs are dropped.
  EXPECT_EQ(Custom->getNumResults(), 1u);
  EXPECT_EQ(Custom->getResult(0)->getType(),
            TensorType::get(ElementType::F32, {2}));
}

/// Adds model-local function \p Name of domain "local" to \p B: inputs
/// \p Ins, outputs \p Outs, body nodes added by the caller.
onnx::FunctionProto *addFunction(ModelBuilder &B, const char *Name,
                                 std::vector<const char *> Ins,
                                 std::vector<const char *> Outs,
                                 std::vector<const char *> Attrs = {}) {
  onnx::FunctionProto *F = B.M.add_functions();
  F->set_name(Name);
  F->set_domain("local");
  onnx::OperatorSetIdProto *Op = F->add_opset_import();
  Op->set_domain("");
  Op->set_version(17);
  for (const char *I : Ins)
    F->add_input(I);
  for (const char *O : Outs)
    F->add_output(O);
  for (const char *A : Attrs)
    F->add_attribute(A);
  return F;
}

onnx::NodeProto *bodyNode(onnx::FunctionProto *F, const char *Op,
                          std::vector<const char *> Ins,
                          std::vector<const char *> Outs) {
  onnx::NodeProto *N = F->add_node();
  N->set_op_type(Op);
  for (const char *I : Ins)
    N->add_input(I);
  for (const char *O : Outs)
    N->add_output(O);
  return N;
}

void addLocalDomain(ModelBuilder &B) {
  onnx::OperatorSetIdProto *Op = B.M.add_opset_import();
  Op->set_domain("local");
  Op->set_version(1);
}

TEST(ONNXImportTest, LocalFunctionsAreInlined) {
  // Block(x; alpha) = LeakyRelu(Inner(x), alpha), Inner(x) = (t = Neg(x),
  // Abs(t)); its second output ("spare") the call leaves out, and the
  // body's own names ("t") must not clash with the graph's.
  ModelBuilder B;
  addLocalDomain(B);
  onnx::FunctionProto *Inner = addFunction(B, "Inner", {"a"}, {"b"});
  bodyNode(Inner, "Neg", {"a"}, {"t"});
  bodyNode(Inner, "Abs", {"t"}, {"b"});
  onnx::FunctionProto *Block =
      addFunction(B, "Block", {"x"}, {"y", "spare"}, {"alpha"});
  onnx::NodeProto *Call = bodyNode(Block, "Inner", {"x"}, {"u"});
  Call->set_domain("local");
  onnx::NodeProto *Leaky = bodyNode(Block, "LeakyRelu", {"u"}, {"y"});
  onnx::AttributeProto *Ref = Leaky->add_attribute();
  Ref->set_name("alpha");
  Ref->set_type(onnx::AttributeProto::FLOAT);
  Ref->set_ref_attr_name("alpha");
  bodyNode(Block, "Relu", {"u"}, {"spare"});
  B.input("t", {2});
  onnx::NodeProto *N = B.node("Block", {"t"}, {"out"}, "blk");
  N->set_domain("local");
  ModelBuilder::floatAttr(N, "alpha", 0.25f);
  B.output("out", {2});
  auto GOrErr = importONNXBytes(B.bytes(), "m.onnx", "");
  ASSERT_TRUE(bool(GOrErr)) << llvm::toString(GOrErr.takeError());
  std::vector<Node *> Nodes = (*GOrErr)->getNodeList();
  ASSERT_EQ(Nodes.size(), 4u);
  EXPECT_EQ(Nodes[0]->getOpId(), OpId::Neg);
  EXPECT_EQ(Nodes[0]->getOperand(0)->getName(), "t");
  EXPECT_NE(Nodes[0]->getResult(0)->getName(), "t");
  EXPECT_EQ(Nodes[0]->getLoc(), (Location{"m.onnx", "blk/Inner0/Neg0"}));
  EXPECT_EQ(Nodes[1]->getOpId(), OpId::Abs);
  EXPECT_EQ(Nodes[2]->getOpId(), OpId::LeakyRelu);
  EXPECT_EQ(Nodes[2]->getFloatAttr("alpha", 0), 0.25f);
  EXPECT_EQ(Nodes[2]->getResult(0)->getName(), "out");
  EXPECT_EQ(Nodes[2]->getResult(0)->getType(),
            TensorType::get(ElementType::F32, {2}));
  EXPECT_EQ(Nodes[3]->getOpId(), OpId::Relu);
}

TEST(ONNXImportTest, FunctionCallErrors) {
  // A function that calls itself, and a call with more inputs than the
  // function has.
  ModelBuilder B;
  addLocalDomain(B);
  onnx::FunctionProto *Loop = addFunction(B, "Again", {"a"}, {"b"});
  bodyNode(Loop, "Again", {"a"}, {"b"})->set_domain("local");
  B.input("x", {2});
  B.node("Again", {"x"}, {"y"}, "again")->set_domain("local");
  B.output("y", {2});
  EXPECT_NE(importError(B.bytes()).find("expands functions more than 16 "
                                        "deep (recursive?)"),
            std::string::npos);
  // Calls that multiply at every level: 32^5 leaves, refused before any
  // is imported (at most 2^20 nodes).
  ModelBuilder Wide;
  addLocalDomain(Wide);
  bodyNode(addFunction(Wide, "L0", {"a"}, {"b"}), "Relu", {"a"}, {"b"});
  static const char *Names[] = {"L0", "L1", "L2", "L3", "L4", "L5"};
  static const std::string Outs[32] = {
      "o0",  "o1",  "o2",  "o3",  "o4",  "o5",  "o6",  "o7",
      "o8",  "o9",  "o10", "o11", "o12", "o13", "o14", "o15",
      "o16", "o17", "o18", "o19", "o20", "o21", "o22", "o23",
      "o24", "o25", "o26", "o27", "o28", "o29", "o30", "b"};
  for (int L = 1; L <= 5; ++L) {
    onnx::FunctionProto *F = addFunction(Wide, Names[L], {"a"}, {"b"});
    for (const std::string &O : Outs)
      bodyNode(F, Names[L - 1], {"a"}, {O.c_str()})->set_domain("local");
  }
  Wide.input("x", {2});
  Wide.node("L5", {"x"}, {"y"}, "wide")->set_domain("local");
  Wide.output("y", {2});
  EXPECT_NE(importError(Wide.bytes())
                .find("function calls expand to more "
                      "than 1048576 nodes"),
            std::string::npos);
  // A function defined twice.
  ModelBuilder Twice;
  addLocalDomain(Twice);
  addFunction(Twice, "Dup", {"a"}, {"b"});
  addFunction(Twice, "Dup", {"a"}, {"b"});
  Twice.input("x", {2});
  Twice.node("Relu", {"x"}, {"y"});
  Twice.output("y", {2});
  EXPECT_EQ(importError(Twice.bytes()),
            "m.onnx: model-local function 'Dup' is defined twice");
  ModelBuilder C;
  addLocalDomain(C);
  bodyNode(addFunction(C, "One", {"a"}, {"b"}), "Relu", {"a"}, {"b"});
  C.input("x", {2});
  C.node("One", {"x", "x"}, {"y"}, "one")->set_domain("local");
  C.output("y", {2});
  EXPECT_EQ(importError(C.bytes()),
            "m.onnx: node 'one' (local.One): has 2 inputs and 1 outputs; "
            "function 'One' takes 1 and 1");
}

TEST(ONNXImportTest, OnnxFunctionOpsExpand) {
  // Ops the IR lacks but ONNX defines by a function body:
  // MeanVarianceNormalization (its axes from the schema's default when the
  // node has none) and CastLike (a body built from the operands' types).
  // Celu had a body too and is an op of the IR now: it stays one node.
  ModelBuilder B;
  B.input("x", {2, 3, 4, 5});
  onnx::ValueInfoProto *Like = B.G->add_input();
  Like->set_name("like");
  Like->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::DOUBLE);
  Like->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->add_dim()
      ->set_dim_value(1);
  B.node("MeanVarianceNormalization", {"x"}, {"m"}, "mvn");
  B.node("Celu", {"m"}, {"c"}, "celu");
  B.node("CastLike", {"c", "like"}, {"y"}, "cast");
  onnx::ValueInfoProto *Out = B.G->add_output();
  *Out = *Like;
  Out->set_name("y");
  onnx::TensorShapeProto *Shape =
      Out->mutable_type()->mutable_tensor_type()->mutable_shape();
  Shape->clear_dim();
  for (int64_t D : {2, 3, 4, 5})
    Shape->add_dim()->set_dim_value(D);
  EXPECT_TRUE(isExpandedOnnxFunction("MeanVarianceNormalization", 17));
  EXPECT_TRUE(isExpandedOnnxFunction("CastLike", 17));
  EXPECT_FALSE(isExpandedOnnxFunction("Celu", 17));
  EXPECT_FALSE(isExpandedOnnxFunction("Relu", 17));
  EXPECT_FALSE(isExpandedOnnxFunction("CastLike", 14)); // Not yet an op.
  auto GOrErr = importONNXBytes(B.bytes(), "m.onnx", "");
  ASSERT_TRUE(bool(GOrErr)) << llvm::toString(GOrErr.takeError());
  std::vector<Node *> Nodes = (*GOrErr)->getNodeList();
  for (Node *N : Nodes)
    EXPECT_FALSE(N->isOpaque()) << N->getOpType().str();
  ASSERT_GE(Nodes.size(), 3u);
  unsigned Means = 0, Celus = 0;
  for (Node *N : Nodes) {
    if (N->getOpId() == OpId::Celu)
      ++Celus;
    if (N->getOpId() != OpId::ReduceMean)
      continue;
    ++Means;
    ASSERT_TRUE(N->hasOperand(1));
    const TensorData *Axes = N->getOperand(1)->getConstantData();
    ASSERT_NE(Axes, nullptr);
    EXPECT_EQ(Axes->toInt64Vector(), (std::vector<int64_t>{0, 2, 3}));
  }
  EXPECT_GE(Means, 1u);
  EXPECT_EQ(Celus, 1u);
  Node *Last = Nodes.back();
  EXPECT_EQ(Last->getOpId(), OpId::Cast);
  EXPECT_EQ(Last->getResult(0)->getName(), "y");
  EXPECT_EQ(Last->getResult(0)->getType(),
            TensorType::get(ElementType::F64, {2, 3, 4, 5}));
}

TEST(ONNXImportTest, StriderBodiesExpandReductionsOnnxLeavesBare) {
  // ReduceL1 (opset 13: axes an attribute) and ReduceLogSumExp (opset 18:
  // axes an input), which libonnx's schemas give no body for, become
  // reductions and elementwise ops the IR has, keepdims bound.
  EXPECT_TRUE(isExpandedOnnxFunction("ReduceL1", 13));
  EXPECT_TRUE(isExpandedOnnxFunction("ReduceLogSumExp", 18));
  EXPECT_TRUE(isExpandedOnnxFunction("ReduceLogSum", 11));
  EXPECT_FALSE(isExpandedOnnxFunction("ReduceSum", 13));
  for (int64_t Opset : {13, 18}) {
    ModelBuilder B(Opset);
    B.input("x", {2, 3, 4});
    onnx::NodeProto *L1 = B.node("ReduceL1", {"x"}, {"l1"}, "l1");
    onnx::NodeProto *LSE = B.node("ReduceLogSumExp", {"x"}, {"y"}, "lse");
    for (onnx::NodeProto *N : {L1, LSE}) {
      onnx::AttributeProto *K = N->add_attribute();
      K->set_name("keepdims");
      K->set_type(onnx::AttributeProto::INT);
      K->set_i(0);
      if (Opset < 18) {
        onnx::AttributeProto *A = N->add_attribute();
        A->set_name("axes");
        A->set_type(onnx::AttributeProto::INTS);
        A->add_ints(1);
      }
    }
    if (Opset >= 18) {
      onnx::TensorProto *Axes = B.G->add_initializer();
      Axes->set_name("axes");
      Axes->set_data_type(onnx::TensorProto::INT64);
      Axes->add_dims(1);
      Axes->add_int64_data(1);
      L1->add_input("axes");
      LSE->add_input("axes");
    }
    B.output("l1", {2, 4});
    B.output("y", {2, 4});
    auto GOrErr = importONNXBytes(B.bytes(), "m.onnx", "");
    ASSERT_TRUE(bool(GOrErr)) << llvm::toString(GOrErr.takeError());
    std::multiset<OpId> Ops;
    for (Node *N : (*GOrErr)->getNodeList()) {
      EXPECT_FALSE(N->isOpaque()) << N->getOpType().str();
      Ops.insert(N->getOpId());
    }
    EXPECT_EQ(Ops.count(OpId::Abs), 1u);
    EXPECT_EQ(Ops.count(OpId::ReduceSum), 2u);
    EXPECT_EQ(Ops.count(OpId::ReduceMax), 2u);
    EXPECT_EQ(Ops.count(OpId::Exp), 1u);
    EXPECT_EQ(Ops.count(OpId::Log), 1u);
    for (const char *Name : {"l1", "y"})
      EXPECT_EQ((*GOrErr)->lookupValue(Name)->getType(),
                TensorType::get(ElementType::F32, {2, 4}))
          << Name;
  }
}

} // namespace
