//===- AsmParserTest.cpp - Textual IR printer and parser ------------------===//
//
// Round trips (graph -> text -> graph -> text) of every op and every printed
// form, located parse errors, and robustness against garbage input.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/AsmParser.h"
#include "strider/IR/AsmPrinter.h"
#include "strider/IR/Graph.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace strider;

namespace {

std::string print(const Graph &G) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  printGraph(G, OS);
  return OS.str();
}

std::string printAttr(const Attribute &A) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  printAttribute(A, OS);
  return OS.str();
}

std::string printData(const TensorData &D) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  printTensorData(D, OS);
  return OS.str();
}

/// Parse \p Text, failing the test on an error.
std::unique_ptr<Graph> parseOk(llvm::StringRef Text) {
  auto G = parseGraph(Text, "test.lir");
  if (!G) {
    ADD_FAILURE() << llvm::toString(G.takeError()) << "\nin:\n" << Text.str();
    return nullptr;
  }
  return std::move(*G);
}

/// The error message of parsing \p Text ("" if it parses).
std::string parseError(llvm::StringRef Text) {
  auto G = parseGraph(Text, "test.lir");
  if (G)
    return "";
  return llvm::toString(G.takeError());
}

/// Print \p G, parse it back, print again: both texts must be identical.
/// Returns the parsed graph.
std::unique_ptr<Graph> roundTrip(const Graph &G) {
  std::string First = print(G);
  std::unique_ptr<Graph> Back = parseOk(First);
  if (!Back)
    return nullptr;
  EXPECT_EQ(First, print(*Back));
  return Back;
}

TensorType f32(llvm::ArrayRef<int64_t> Shape) {
  return TensorType::get(ElementType::F32, Shape);
}

TensorDataRef makeData(ElementType Elt, llvm::ArrayRef<int64_t> Shape,
                       std::vector<uint8_t> Bytes) {
  auto D = TensorData::create(TensorType::get(Elt, Shape), std::move(Bytes));
  EXPECT_TRUE(bool(D));
  return D ? *D : nullptr;
}

/// A plausible attribute value of kind \p K.
Attribute sampleAttr(AttrKind K) {
  switch (K) {
  case AttrKind::Int:
    return Attribute::getInt(-3);
  case AttrKind::Float:
    return Attribute::getFloat(0.125f);
  case AttrKind::String:
    return Attribute::getString("NOTSET");
  case AttrKind::Ints:
    return Attribute::getInts({1, 2, 3});
  case AttrKind::Floats:
    return Attribute::getFloats({1.0f, 2.5f});
  case AttrKind::Strings:
    return Attribute::getStrings({"a", "b"});
  case AttrKind::Tensor:
    return Attribute::getTensor(TensorData::fromFloat({2}, {1.0f, 2.0f}));
  case AttrKind::Graph: {
    auto B = std::make_shared<Graph>("branch");
    Value *In = B->addInput("a", TensorType::get(ElementType::F32, {2}));
    Node *N = B->createNode(OpId::Relu, {In}, {"r"}, {In->getType()});
    B->addOutput(N->getResult(0));
    return Attribute::getGraph(std::move(B));
  }
  }
  return Attribute();
}

} // namespace

TEST(AsmParserTest, RoundTripEveryOp) {
  for (const OpInfo &Info : getAllOps()) {
    SCOPED_TRACE(Info.Name.str());
    Graph G;
    int NumOperands = std::max(Info.MinOperands, 1);
    if (Info.MaxOperands < 0)
      NumOperands = Info.MinOperands + 2;
    std::vector<Value *> Operands;
    for (int I = 0; I < NumOperands; ++I)
      Operands.push_back(G.addInput("in" + std::to_string(I), f32({2, 3})));
    if (NumOperands > 2)
      Operands[1] = nullptr; // A missing optional operand.
    if (Info.MinOperands == 0)
      Operands.clear();
    int NumResults = Info.MaxResults < 0 ? 3 : Info.MaxResults;
    std::vector<std::string> Names;
    std::vector<TensorType> Types;
    for (int I = 0; I < NumResults; ++I) {
      // Missing optional results in the middle.
      bool Missing = I > 0 && I + 1 < NumResults;
      Names.push_back(Missing ? "" : "r" + std::to_string(I));
      Types.push_back(Missing ? TensorType() : f32({2, 3}));
    }
    Node *N = G.createNode(Info.Id, Operands, Names, Types);
    for (const AttrSpec &Spec : Info.Attrs)
      N->setAttr(Spec.Name, sampleAttr(Spec.Kind));
    N->setLoc({"", Info.Name.str() + "_1"});
    G.addOutput(N->getResult(0));

    std::unique_ptr<Graph> Back = roundTrip(G);
    ASSERT_TRUE(Back);
    ASSERT_EQ(Back->getNumNodes(), 1u);
    Node *M = *Back->nodes().begin();
    EXPECT_EQ(M->getOpId(), Info.Id);
    EXPECT_FALSE(M->isOpaque());
    ASSERT_EQ(M->getNumOperands(), N->getNumOperands());
    for (unsigned I = 0; I < N->getNumOperands(); ++I)
      EXPECT_EQ(M->hasOperand(I), N->hasOperand(I));
    ASSERT_EQ(M->getNumResults(), N->getNumResults());
    for (unsigned I = 0; I < N->getNumResults(); ++I) {
      ASSERT_EQ(M->hasResult(I), N->hasResult(I));
      if (N->hasResult(I)) {
        EXPECT_EQ(M->getResult(I)->getType(), N->getResult(I)->getType());
      }
    }
    ASSERT_EQ(M->getAttrs().size(), N->getAttrs().size());
    for (unsigned I = 0; I < N->getAttrs().size(); ++I) {
      EXPECT_EQ(M->getAttrs()[I].Name, N->getAttrs()[I].Name);
      EXPECT_EQ(M->getAttrs()[I].Value, N->getAttrs()[I].Value);
    }
    EXPECT_EQ(M->getLoc(), N->getLoc());
  }
}

TEST(AsmParserTest, OpaqueOps) {
  Graph G;
  Value *X = G.addInput("x", f32({4}));
  struct Case {
    const char *Domain, *Type, *Spelling;
  } Cases[] = {
      {"", "MyOp", "MyOp("},
      {"com.microsoft", "FusedConv", "\"com.microsoft\".FusedConv("},
      // Names that would read as something else are spelled with a domain.
      {"", "Conv", "\"\".Conv("},
      {"", "relayout", "\"\".relayout("},
      {"", "return", "\"\".return("},
      {"", "loc", "\"\".loc("},
      {"", "doc", "\"\".doc("},
      {"", "_", "\"\"._("},
      {"", "my-op", "\"\".\"my-op\"("},
      {"ai.onnx.ml", "2D", "\"ai.onnx.ml\".\"2D\"("},
  };
  for (const Case &C : Cases) {
    // Zero results: the op name starts the statement.
    G.createOpaqueNode(C.Domain, C.Type, {X}, {}, {});
    G.createOpaqueNode(C.Domain, C.Type, {X, nullptr},
                       {G.makeUniqueName("r"), ""},
                       {TensorType(), TensorType()});
  }
  std::string Text = print(G);
  for (const Case &C : Cases)
    EXPECT_NE(Text.find(std::string("  ") + C.Spelling), std::string::npos)
        << C.Spelling << "\n"
        << Text;
  std::unique_ptr<Graph> Back = roundTrip(G);
  ASSERT_TRUE(Back);
  std::vector<Node *> Nodes = Back->getNodeList();
  ASSERT_EQ(Nodes.size(), 2 * std::size(Cases));
  for (unsigned I = 0; I < Nodes.size(); ++I) {
    const Case &C = Cases[I / 2];
    EXPECT_TRUE(Nodes[I]->isOpaque());
    EXPECT_EQ(Nodes[I]->getDomain(), C.Domain);
    EXPECT_EQ(Nodes[I]->getOpType(), C.Type);
  }
  EXPECT_EQ(Nodes[1]->getNumResults(), 2u);
  EXPECT_FALSE(Nodes[1]->hasResult(1));
  EXPECT_FALSE(Nodes[1]->hasOperand(1));
  EXPECT_EQ(Nodes[1]->getResult(0)->getType(), TensorType());
}

TEST(AsmParserTest, PrintedForms) {
  std::unique_ptr<Graph> G = parseOk(R"(
// A comment.
graph @g(%x: tensor<N x 3 x f32>) {   // trailing comment
  %a, _ = Dropout(%x, none) {seed = 7} : tensor<N x 3 x f32> loc("d1")
  return %a
}
)");
  ASSERT_TRUE(G);
  EXPECT_EQ(print(*G), "graph @g(%x: tensor<N x 3 x f32>) {\n"
                       "  %a, _ = Dropout(%x, none) {seed = 7} : "
                       "tensor<N x 3 x f32> loc(\"d1\")\n"
                       "  return %a\n"
                       "}\n");
}

TEST(AsmParserTest, AttributeForms) {
  EXPECT_EQ(printAttr(Attribute::getInt(3)), "3");
  EXPECT_EQ(printAttr(Attribute::getInt(-1)), "-1");
  EXPECT_EQ(printAttr(Attribute::getFloat(1.0f)), "1.0");
  EXPECT_EQ(printAttr(Attribute::getFloat(0.1f)), "0.1");
  EXPECT_EQ(printAttr(Attribute::getFloat(-2.5f)), "-2.5");
  EXPECT_EQ(printAttr(Attribute::getFloat(1e-5f)), "1e-05");
  EXPECT_EQ(printAttr(Attribute::getFloat(100.0f)), "100.0");
  EXPECT_EQ(printAttr(Attribute::getFloat(-0.0f)), "-0.0");
  EXPECT_EQ(printAttr(Attribute::getFloat(INFINITY)), "inf");
  EXPECT_EQ(printAttr(Attribute::getFloat(-INFINITY)), "-inf");
  EXPECT_EQ(printAttr(Attribute::getFloat(NAN)), "nan");
  EXPECT_EQ(printAttr(Attribute::getString("a\"b\\c\n")), "\"a\\\"b\\\\c\\n\"");
  EXPECT_EQ(printAttr(Attribute::getInts({1, 2})), "[1, 2]");
  EXPECT_EQ(printAttr(Attribute::getInts({})), "[]");
  EXPECT_EQ(printAttr(Attribute::getFloats({1.0f, 2.5f})), "[1.0, 2.5]");
  EXPECT_EQ(printAttr(Attribute::getFloats({})), "floats[]");
  EXPECT_EQ(printAttr(Attribute::getStrings({"a", "b"})), "[\"a\", \"b\"]");
  EXPECT_EQ(printAttr(Attribute::getStrings({})), "strings[]");
  EXPECT_EQ(printAttr(Attribute::getTensor(
                TensorData::fromInt64(ElementType::I64, {2}, {1, 2}))),
            "dense<[1, 2]> : tensor<2 x i64>");

  // Every value reads back bit for bit.
  std::vector<float> Floats = {0.1f,
                               1.0f / 3.0f,
                               16777216.0f,
                               std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::min(),
                               std::numeric_limits<float>::denorm_min(),
                               -0.0f,
                               1e30f,
                               INFINITY,
                               -INFINITY,
                               NAN};
  std::vector<int64_t> Ints = {0, std::numeric_limits<int64_t>::min(),
                               std::numeric_limits<int64_t>::max()};
  Graph G;
  Node *N = G.createOpaqueNode("", "Attrs", {}, {}, {});
  for (unsigned I = 0; I < Floats.size(); ++I)
    N->setAttr("f" + std::to_string(I), Attribute::getFloat(Floats[I]));
  for (unsigned I = 0; I < Ints.size(); ++I)
    N->setAttr("i" + std::to_string(I), Attribute::getInt(Ints[I]));
  N->setAttr("fs", Attribute::getFloats(Floats));
  N->setAttr("is", Attribute::getInts(Ints));
  N->setAttr("empty_floats", Attribute::getFloats({}));
  N->setAttr("empty_strings", Attribute::getStrings({}));
  N->setAttr("empty_ints", Attribute::getInts({}));
  N->setAttr("has space", Attribute::getStrings({"", "\x01\xff"}));
  std::unique_ptr<Graph> Back = roundTrip(G);
  ASSERT_TRUE(Back);
  Node *M = *Back->nodes().begin();
  ASSERT_EQ(M->getAttrs().size(), N->getAttrs().size());
  for (unsigned I = 0; I < N->getAttrs().size(); ++I) {
    EXPECT_EQ(M->getAttrs()[I].Name, N->getAttrs()[I].Name);
    EXPECT_EQ(M->getAttrs()[I].Value, N->getAttrs()[I].Value)
        << N->getAttrs()[I].Name;
  }
}

TEST(AsmParserTest, ParsedAttributeKinds) {
  std::unique_ptr<Graph> G = parseOk(R"(graph @g() {
  Op() {a = 1, b = 1.5, c = [1, 2.5], d = ints[], e = floats[1, 2],
        f = strings["x"], g = [], h = 2e3, i = inf, j = -inf}
  return
})");
  ASSERT_TRUE(G);
  Node *N = *G->nodes().begin();
  EXPECT_EQ(N->getAttr("a")->getKind(), AttrKind::Int);
  EXPECT_EQ(N->getAttr("b")->getKind(), AttrKind::Float);
  EXPECT_EQ(N->getAttr("c")->getFloats(), (std::vector<float>{1.0f, 2.5f}));
  EXPECT_EQ(N->getAttr("d")->getKind(), AttrKind::Ints);
  EXPECT_EQ(N->getAttr("e")->getFloats(), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(N->getAttr("f")->getStrings(), (std::vector<std::string>{"x"}));
  EXPECT_EQ(N->getAttr("g")->getKind(), AttrKind::Ints);
  EXPECT_EQ(N->getAttr("h")->getFloat(), 2000.0f);
  EXPECT_EQ(N->getAttr("i")->getFloat(), INFINITY);
  EXPECT_EQ(N->getAttr("j")->getFloat(), -INFINITY);
}

TEST(AsmParserTest, DenseForms) {
  // Splat, list, hex and empty.
  EXPECT_EQ(printData(*TensorData::fromFloat({2, 2}, {1, 1, 1, 1})),
            "dense<1.0> : tensor<2 x 2 x f32>");
  EXPECT_EQ(printData(*TensorData::fromFloat({1}, {0.5f})),
            "dense<0.5> : tensor<1 x f32>");
  EXPECT_EQ(printData(*TensorData::fromFloat({3}, {1, 2, 3})),
            "dense<[1.0, 2.0, 3.0]> : tensor<3 x f32>");
  EXPECT_EQ(printData(*TensorData::fromFloat({0, 3}, {})),
            "dense<[]> : tensor<0 x 3 x f32>");
  std::vector<float> Seventeen(17);
  for (unsigned I = 0; I < 17; ++I)
    Seventeen[I] = float(I);
  std::string Hex = printData(*TensorData::fromFloat({17}, Seventeen));
  EXPECT_EQ(Hex.substr(0, 25), "dense<\"0x000000000000803F");
  EXPECT_EQ(
      printData(*TensorData::fromInt64(ElementType::Bool, {3}, {1, 0, 1})),
      "dense<[true, false, true]> : tensor<3 x bool>");
  EXPECT_EQ(printData(*makeData(ElementType::U64, {2},
                                {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                 5, 0, 0, 0, 0, 0, 0, 0})),
            "dense<[18446744073709551615, 5]> : tensor<2 x u64>");
  EXPECT_EQ(
      printData(*TensorData::fromInt64(ElementType::I8, {2}, {-128, 127})),
      "dense<[-128, 127]> : tensor<2 x i8>");
  // f16/bf16: splats print the value, anything else is hex.
  EXPECT_EQ(
      printData(*makeData(ElementType::F16, {2}, {0x00, 0x3C, 0x00, 0x3C})),
      "dense<1.0> : tensor<2 x f16>");
  EXPECT_EQ(
      printData(*makeData(ElementType::F16, {2}, {0x00, 0x3C, 0x00, 0x40})),
      "dense<\"0x003C0040\"> : tensor<2 x f16>");
  EXPECT_EQ(printData(*makeData(ElementType::BF16, {1}, {0x80, 0x3F})),
            "dense<1.0> : tensor<1 x bf16>");
  // Values that would not read back exactly go to hex: a NaN payload, a
  // bool byte other than 0 or 1.
  EXPECT_EQ(printData(*makeData(ElementType::F32, {1}, {1, 0, 0xC0, 0x7F})),
            "dense<\"0x0100C07F\"> : tensor<1 x f32>");
  EXPECT_EQ(printData(*makeData(ElementType::F32, {1}, {0, 0, 0xC0, 0x7F})),
            "dense<nan> : tensor<1 x f32>");
  EXPECT_EQ(printData(*makeData(ElementType::Bool, {2}, {2, 0})),
            "dense<\"0x0200\"> : tensor<2 x bool>");
  EXPECT_EQ(printData(*makeData(ElementType::F64, {2},
                                {0x9A, 0x99, 0x99, 0x99, 0x99, 0x99, 0xB9, 0x3F,
                                 0, 0, 0, 0, 0, 0, 0xF0, 0xBF})),
            "dense<[0.1, -1.0]> : tensor<2 x f64>");
}

TEST(AsmParserTest, DenseFormsAgree) {
  // The three forms of the same data, for every element type.
  struct Case {
    const char *Type, *List, *Splat, *Hex;
  } Cases[] = {
      {"f32", "[2.0, 2.0]", "2.0", "0x0000004000000040"},
      {"f16", "[2.0, 2]", "2", "0x00400040"},
      {"bf16", "[2.0, 2.0]", "2.0", "0x00400040"},
      {"f64", "[2.0, 2.0]", "2.0", "0x00000000000000400000000000000040"},
      {"i8", "[-2, -2]", "-2", "0xFEFE"},
      {"u8", "[254, 254]", "254", "0xfefe"},
      {"i16", "[-2, -2]", "-2", "0xFEFFFEFF"},
      {"u16", "[2, 2]", "2", "0x02000200"},
      {"i32", "[-2, -2]", "-2", "0xFEFFFFFFFEFFFFFF"},
      {"u32", "[2, 2]", "2", "0x0200000002000000"},
      {"i64", "[-2, -2]", "-2", "0xFEFFFFFFFFFFFFFFFEFFFFFFFFFFFFFF"},
      {"u64", "[2, 2]", "2", "0x02000000000000000200000000000000"},
      {"bool", "[true, 1]", "true", "0x0101"},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(C.Type);
    std::vector<TensorDataRef> Data;
    for (const char *Form : {C.List, C.Splat, C.Hex}) {
      std::string F = Form;
      if (F.substr(0, 2) == "0x")
        F = "\"" + F + "\"";
      std::string Text = std::string("graph @g(%x: tensor<2 x ") + C.Type +
                         "> = dense<" + F + ">) {\n  return %x\n}\n";
      std::unique_ptr<Graph> G = parseOk(Text);
      ASSERT_TRUE(G);
      Data.push_back(G->getInputs()[0]->getDefaultData());
      ASSERT_TRUE(Data.back());
      std::unique_ptr<Graph> Back = roundTrip(*G);
      ASSERT_TRUE(Back);
      EXPECT_EQ(*Back->getInputs()[0]->getDefaultData(), *Data.back());
    }
    EXPECT_EQ(*Data[0], *Data[1]);
    EXPECT_EQ(*Data[0], *Data[2]);
  }
}

TEST(AsmParserTest, DefaultDataOfAnotherType) {
  // Data whose type differs from the input's keeps its own type.
  Graph G;
  Value *W =
      G.addInput("w", TensorType(ElementType::F32, {Dim::getSymbol("N")}));
  W->setDefaultData(TensorData::fromFloat({2}, {1.0f, 2.0f}));
  Value *L =
      G.addInput("l", f32({1, 2, 1, 2}).withLayout(Layout::getChannelsLast(4)));
  auto D = TensorData::create(L->getType(), {0, 0, 0x80, 0x3F, 0, 0, 0, 0x40, 0,
                                             0, 0x40, 0x40, 0, 0, 0x80, 0x40});
  ASSERT_TRUE(bool(D));
  L->setDefaultData(*D);
  G.addOutput(W);
  std::string Text = print(G);
  EXPECT_NE(Text.find("%w: tensor<N x f32> = dense<[1.0, 2.0]> : "
                      "tensor<2 x f32>"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("%l: tensor<1 x 2 x 1 x 2 x f32, nhwc> = "
                      "dense<[1.0, 2.0, 3.0, 4.0]>)"),
            std::string::npos)
      << Text;
  std::unique_ptr<Graph> Back = roundTrip(G);
  ASSERT_TRUE(Back);
  EXPECT_EQ(*Back->getInputs()[0]->getDefaultData(), *W->getDefaultData());
  EXPECT_EQ(*Back->getInputs()[1]->getDefaultData(), *L->getDefaultData());
}

/// \p N distinct f32 values starting at \p First.
TensorDataRef rampData(int64_t N, float First) {
  std::vector<float> V;
  for (int64_t I = 0; I < N; ++I)
    V.push_back(First + float(I));
  return TensorData::fromFloat({N}, V);
}

TEST(AsmParserTest, ExternalData) {
  Graph G;
  Value *W = G.addInput("w", f32({300}));
  W->setDefaultData(rampData(300, 1.0f)); // 1200 bytes, padded to 1216.
  Value *S = G.addInput("s", f32({1024}));
  S->setDefaultData(TensorData::fromFloat({1024}, std::vector<float>(1024, 2)));
  Value *Small = G.addInput("small", f32({4}));
  Small->setDefaultData(rampData(4, 0.5f));
  // Two nodes share one TensorData: it is written once.
  TensorDataRef Shared = rampData(256, -7.0f);
  Value *Outs[2];
  for (int I = 0; I < 2; ++I) {
    Node *C = G.createNode(OpId::Constant, {}, {"c" + std::to_string(I)},
                           {f32({256})});
    C->setAttr("value", Attribute::getTensor(Shared));
    Outs[I] = C->getResult(0);
  }
  // Equal bytes in another object are written again.
  Node *Copy = G.createNode(OpId::Constant, {}, {"copy"}, {f32({256})});
  Copy->setAttr("value", Attribute::getTensor(rampData(256, -7.0f)));
  G.addOutput(W);
  G.addOutput(Outs[0]);
  G.addOutput(Outs[1]);
  G.addOutput(Copy->getResult(0));

  ExternalDataBuffer Buffer;
  PrintOptions Opts;
  Opts.External = &Buffer;
  std::string Text;
  {
    llvm::raw_string_ostream OS(Text);
    printGraph(G, OS, Opts);
  }
  EXPECT_NE(Text.find("%w: tensor<300 x f32> = dense_external<0>,"),
            std::string::npos)
      << Text;
  // Splats and small data stay inline.
  EXPECT_NE(Text.find("%s: tensor<1024 x f32> = dense<2.0>,"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("%small: tensor<4 x f32> = dense<[0.5, 1.5, 2.5, "
                      "3.5]>)"),
            std::string::npos)
      << Text;
  std::string SharedRef = "{value = dense_external<1216> : tensor<256 x f32>}";
  size_t First = Text.find(SharedRef);
  ASSERT_NE(First, std::string::npos) << Text;
  EXPECT_NE(Text.find(SharedRef, First + 1), std::string::npos) << Text;
  EXPECT_NE(Text.find("{value = dense_external<2240> : tensor<256 x f32>}"),
            std::string::npos)
      << Text;
  EXPECT_EQ(Buffer.getBytes().size(), 1216u + 1024u + 1024u);

  // Parse against a copy of the blob: the constants view it, keep it alive
  // and read back equal to the originals; printed inline, the graph is the
  // original's inline print.
  auto Blob = std::make_shared<std::vector<uint8_t>>(Buffer.getBytes());
  std::weak_ptr<std::vector<uint8_t>> BlobAlive = Blob;
  ExternalData External{*Blob, Blob, "test.lir.weights"};
  auto Back = parseGraph(Text, "test.lir", &External);
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  External.Owner.reset();
  Blob.reset();
  EXPECT_FALSE(BlobAlive.expired());
  EXPECT_EQ(print(**Back), print(G));
  const TensorData &BackW = *(*Back)->getInputs()[0]->getDefaultData();
  EXPECT_EQ(BackW, *W->getDefaultData());
  EXPECT_EQ(BackW.getBytes().data(), BlobAlive.lock()->data());
  std::vector<Node *> Nodes = (*Back)->getNodeList();
  ASSERT_EQ(Nodes.size(), 3u);
  const TensorData &BackC = *Nodes[1]->getAttr("value")->getTensor();
  EXPECT_EQ(BackC, *Shared);
  EXPECT_EQ(BackC.getBytes().data(), BlobAlive.lock()->data() + 1216);
  Back->reset();
  EXPECT_TRUE(BlobAlive.expired());
}

TEST(AsmParserTest, ExternalDataPadding) {
  ExternalDataBuffer Buffer;
  EXPECT_EQ(Buffer.write({1, 2, 3}), 0u);
  EXPECT_EQ(Buffer.write(std::vector<uint8_t>(64, 4)), 64u);
  EXPECT_EQ(Buffer.write({}), 128u);
  EXPECT_EQ(Buffer.write({5}), 128u);
  ASSERT_EQ(Buffer.getBytes().size(), 192u);
  EXPECT_EQ(Buffer.getBytes()[2], 3);
  EXPECT_EQ(Buffer.getBytes()[3], 0);
  EXPECT_EQ(Buffer.getBytes()[127], 4);
  EXPECT_EQ(Buffer.getBytes()[128], 5);

  // The stream writer writes the same blob.
  std::string Streamed;
  llvm::raw_string_ostream OS(Streamed);
  ExternalDataStream Stream(OS);
  EXPECT_EQ(Stream.write({1, 2, 3}), 0u);
  EXPECT_EQ(Stream.write(std::vector<uint8_t>(64, 4)), 64u);
  EXPECT_EQ(Stream.write({}), 128u);
  EXPECT_EQ(Stream.write({5}), 128u);
  EXPECT_EQ(Stream.getSize(), 192u);
  OS.flush();
  EXPECT_EQ(Streamed,
            std::string(Buffer.getBytes().begin(), Buffer.getBytes().end()));
}

TEST(AsmParserTest, ExternalDataErrors) {
  std::vector<uint8_t> Bytes(128, 0);
  ExternalData External{Bytes, nullptr, "m.lir.weights"};
  auto Error = [&](const char *Text, const ExternalData *E) {
    auto G = parseGraph(Text, "m.lir", E);
    return G ? std::string() : llvm::toString(G.takeError());
  };
  EXPECT_EQ(Error("graph @g(%w: tensor<4 x f32> = dense_external<0>) {\n"
                  "  return %w\n}\n",
                  nullptr),
            "m.lir:1:32: error: dense_external<...> needs the weights file "
            "m.lir.weights, which was not given");
  EXPECT_EQ(Error("graph @g(%w: tensor<4 x f32> = dense_external<0>) {\n"
                  "  return %w\n}\n",
                  &External),
            "");
  EXPECT_EQ(Error("graph @g(%w: tensor<4 x f32> = dense_external<32>) {\n"
                  "  return %w\n}\n",
                  &External),
            "m.lir:1:47: error: dense_external offset 32 is not a multiple "
            "of 64");
  EXPECT_EQ(Error("graph @g(%w: tensor<17 x f32> = dense_external<64>) {\n"
                  "  return %w\n}\n",
                  &External),
            "m.lir:1:33: error: dense_external<64> : tensor<17 x f32> needs "
            "68 bytes at offset 64, but m.lir.weights has 128");
}

TEST(AsmParserTest, Types) {
  std::unique_ptr<Graph> G = parseOk(R"(graph @g(
    %a: tensor<* x f32>, %b: tensor<* x ?>, %c: tensor<f32>,
    %d: tensor<? x "batch size" x N x 0 x i64>, %e: tensor<x x f32 x f32>,
    %f: tensor<1 x 2 x 3 x 4 x f32, nhwc>, %g: tensor<1 x 2 x 3 x 4 x f32, nchw>,
    %h: tensor<2 x 3 x 4 x u8, [2, 0, 1]>, %i: tensor<1 x 2 x 3 x f32, owi>,
    %j: tensor<1 x 2 x 3 x 4 x 5 x bf16, ndhwc>, %k: tensor<2 x 2 x ?, [1, 0]>) {
  return %a
})");
  ASSERT_TRUE(G);
  llvm::ArrayRef<Value *> In = G->getInputs();
  EXPECT_FALSE(In[0]->getType().hasRank());
  EXPECT_EQ(In[1]->getType(), TensorType());
  EXPECT_EQ(In[2]->getType(), f32({}));
  const TensorType &D = In[3]->getType();
  ASSERT_EQ(D.getRank(), 4u);
  EXPECT_TRUE(D.getDim(0).isUnknown());
  EXPECT_EQ(D.getDim(1).getSymbol(), "batch size");
  EXPECT_EQ(D.getDim(2).getSymbol(), "N");
  EXPECT_EQ(D.getDim(3).getSize(), 0);
  EXPECT_EQ(In[4]->getType().str(), "tensor<x x f32 x f32>");
  EXPECT_TRUE(In[5]->getType().getLayout().isChannelsLast(4));
  EXPECT_TRUE(In[6]->getType().getLayout().isIdentity());
  EXPECT_EQ(In[7]->getType().str(), "tensor<2 x 3 x 4 x u8, [2, 0, 1]>");
  EXPECT_EQ(In[8]->getType().str(), "tensor<1 x 2 x 3 x f32, nwc>");
  EXPECT_EQ(In[9]->getType().str(), "tensor<1 x 2 x 3 x 4 x 5 x bf16, ndhwc>");
  EXPECT_EQ(In[10]->getType().str(), "tensor<2 x 2 x ?, [1, 0]>");
  roundTrip(*G);
}

TEST(AsmParserTest, NamesLocationsAndModelInfo) {
  Graph G("my graph");
  G.setSourceFile("model.onnx");
  ModelInfo &Info = G.getModelInfo();
  Info.IRVersion = 7;
  Info.OpsetImports = {{"", 13}, {"com.microsoft", 1}};
  Info.ProducerName = "pytorch";
  Info.ProducerVersion = "2.1";
  Info.Domain = "ai.test";
  Info.ModelVersion = 3;
  Info.DocString = "doc\nstring";
  Info.GraphDocString = "graph doc";
  Info.Metadata = {{"z", "1"}, {"a", "2"}};
  const char *Names[] = {"plain",   "a/b-c.d$e_1", "0",        "with space",
                         "quote\"", "tab\t",       "\xce\xbb", "%"};
  Value *Prev = nullptr;
  std::vector<Location> Locs = {{"", ""},
                                {"", "n1"},
                                {"model.onnx", "n2"},
                                {"other.onnx", "n3"},
                                {"other.onnx", ""},
                                {"", "with \"quotes\""}};
  for (unsigned I = 0; I < std::size(Names); ++I) {
    if (!Prev) {
      Prev = G.addInput(Names[I], f32({1}));
      continue;
    }
    Node *N = G.createNode(OpId::Relu, {Prev}, {Names[I]}, {f32({1})});
    N->setLoc(Locs[I % Locs.size()]);
    if (I == 3)
      N->setDocString("relu \"doc\"");
    Prev = N->getResult(0);
  }
  G.addOutput(Prev);
  std::string Text = print(G);
  EXPECT_EQ(Text.substr(0, Text.find('\n')),
            "model {ir_version = 7, opset_import = {\"\" = 13, "
            "\"com.microsoft\" = 1}, producer_name = \"pytorch\", "
            "producer_version = \"2.1\", domain = \"ai.test\", "
            "model_version = 3, doc_string = \"doc\\nstring\", "
            "graph_doc_string = \"graph doc\", metadata_props = {\"z\" = "
            "\"1\", \"a\" = \"2\"}, source = \"model.onnx\"}");
  EXPECT_NE(Text.find("graph @\"my graph\"(%plain: "), std::string::npos);
  EXPECT_NE(Text.find("%a/b-c.d$e_1 = Relu(%plain) : tensor<1 x f32> "
                      "loc(\"n1\")\n"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("%0 = Relu(%a/b-c.d$e_1) : tensor<1 x f32> "
                      "loc(\"n2\")\n"),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("loc(\"other.onnx\":\"n3\") doc = \"relu \\\"doc\\\"\""),
            std::string::npos)
      << Text;
  EXPECT_NE(Text.find("loc(\"other.onnx\":\"\")"), std::string::npos);
  EXPECT_NE(Text.find("%\"\\CE\\BB\""), std::string::npos) << Text;
  EXPECT_NE(Text.find("return %\"%\""), std::string::npos) << Text;

  std::unique_ptr<Graph> Back = roundTrip(G);
  ASSERT_TRUE(Back);
  const ModelInfo &B = Back->getModelInfo();
  EXPECT_EQ(B.IRVersion, 7);
  EXPECT_EQ(B.OpsetImports, Info.OpsetImports);
  EXPECT_EQ(B.ProducerName, "pytorch");
  EXPECT_EQ(B.ProducerVersion, "2.1");
  EXPECT_EQ(B.Domain, "ai.test");
  EXPECT_EQ(B.ModelVersion, 3);
  EXPECT_EQ(B.DocString, Info.DocString);
  EXPECT_EQ(B.GraphDocString, Info.GraphDocString);
  EXPECT_EQ(B.Metadata, Info.Metadata);
  EXPECT_EQ(Back->getSourceFile(), "model.onnx");
  EXPECT_EQ(Back->getName(), "my graph");
  for (const char *Name : Names)
    EXPECT_NE(Back->lookupValue(Name), nullptr) << Name;

  // Defaults print no model line at all.
  Graph Plain;
  Plain.addOutput(Plain.addInput("x", f32({1})));
  EXPECT_EQ(print(Plain), "graph @main(%x: tensor<1 x f32>) {\n"
                          "  return %x\n"
                          "}\n");
}

TEST(AsmParserTest, Errors) {
  struct Case {
    const char *Text, *Error;
  } Cases[] = {
      {"", "test.lir:1:1: error: expected 'graph'"},
      {"graph main() {}",
       "test.lir:1:7: error: expected the graph name ('@name')"},
      {"graph @g(%x: tensor<2 x f32>, %x: tensor<2 x f32>) {\n return %x\n}",
       "test.lir:1:31: error: duplicate value name '%x'"},
      {"graph @g(%x: tensor<2 x f32>) {\n  %x = Relu(%x) : tensor<2 x f32>\n"
       "  return %x\n}",
       "test.lir:2:3: error: duplicate value name '%x'"},
      {"graph @g(%x: tensor<2 x f32>) {\n  %a, %a = Foo(%x) : tensor<2 x f32>, "
       "tensor<2 x f32>\n  return %x\n}",
       "test.lir:2:7: error: duplicate value name '%a'"},
      {"graph @g(%x: tensor<2 x f32>) {\n  %a = Relu(%y) : tensor<2 x f32>\n"
       "  return %a\n}",
       "test.lir:2:13: error: use of undefined value '%y'"},
      {"graph @g(%x: tensor<2 x f32>) {\n  %a = Relu(%a) : tensor<2 x f32>\n"
       "  return %a\n}",
       "test.lir:2:13: error: use of undefined value '%a'"},
      {"graph @g(%x: tensor<2 x f32>) {\n  return %z\n}",
       "test.lir:2:10: error: use of undefined value '%z'"},
      {"graph @g(%x: tensor<2 x f33>) {\n  return %x\n}",
       "test.lir:1:25: error: unknown element type 'f33'"},
      {"graph @g(%x: tensor<2 x 3 x f32, nhwc>) {\n  return %x\n}",
       "test.lir:1:34: error: invalid layout 'nhwc' for a rank-2 tensor"},
      {"graph @g(%x: tensor<2 x 3 x f32, [0, 0]>) {\n  return %x\n}",
       "test.lir:1:34: error: invalid layout '[0, 0]' for a rank-2 tensor"},
      {"graph @g(%x: tensor<2 x 3 x f32, [1, 0, 2]>) {\n  return %x\n}",
       "test.lir:1:34: error: invalid layout '[1, 0, 2]' for a rank-2 tensor"},
      {"graph @g(%x: tensor<* x f32, nhwc>) {\n  return %x\n}",
       "test.lir:1:30: error: an unranked tensor has no layout"},
      {"graph @g(%x: tensor<99999999999999999999 x f32>) {\n  return %x\n}",
       "test.lir:1:21: error: dim size 99999999999999999999 is too large"},
      {"graph @g(%x: tensor<-1 x f32>) {\n  return %x\n}",
       "test.lir:1:21: error: dim size -1 is negative"},
      {"graph @g(%x: tensor<4294967296 x 4294967296 x f32>) {\n  return %x\n}",
       "test.lir:1:14: error: tensor type has too many elements"},
      {"graph @g(%x: tensor<2 x f32> = dense<\"0x0000\">) {\n  return %x\n}",
       "test.lir:1:38: error: hex data has 2 bytes, but tensor<2 x f32> "
       "needs 8"},
      {"graph @g(%x: tensor<2 x f32> = dense<\"0x000\">) {\n  return %x\n}",
       "test.lir:1:38: error: hex data has an odd number of digits"},
      {"graph @g(%x: tensor<2 x f32> = dense<\"00\">) {\n  return %x\n}",
       "test.lir:1:38: error: hex data must start with '0x'"},
      {"graph @g(%x: tensor<1 x f32> = dense<\"0xGG000000\">) {\n  return "
       "%x\n}",
       "test.lir:1:38: error: hex data has a non-hex digit"},
      {"graph @g(%x: tensor<3 x f32> = dense<[1.0, 2.0]>) {\n  return %x\n}",
       "test.lir:1:32: error: dense list has 2 elements, but tensor<3 x f32> "
       "has 3"},
      {"graph @g(%x: tensor<N x f32> = dense<1.0>) {\n  return %x\n}",
       "test.lir:1:32: error: constant of type tensor<N x f32> must have a "
       "static shape"},
      {"graph @g(%x: tensor<2 x ?> = dense<1.0>) {\n  return %x\n}",
       "test.lir:1:30: error: constant of type tensor<2 x ?> must have a "
       "known element type"},
      {"graph @g(%x: tensor<2 x u8> = dense<[1, 256]>) {\n  return %x\n}",
       "test.lir:1:41: error: value 256 is out of range for u8"},
      {"graph @g(%x: tensor<2 x u8> = dense<[1, -1]>) {\n  return %x\n}",
       "test.lir:1:41: error: value -1 is out of range for u8"},
      {"graph @g(%x: tensor<2 x i8> = dense<-129>) {\n  return %x\n}",
       "test.lir:1:37: error: value -129 is out of range for i8"},
      {"graph @g(%x: tensor<2 x i32> = dense<1.5>) {\n  return %x\n}",
       "test.lir:1:38: error: expected an integer for an i32 element, got "
       "'1.5'"},
      {"graph @g(%x: tensor<2 x f16> = dense<70000.0>) {\n  return %x\n}",
       "test.lir:1:38: error: value 70000.0 is out of range for f16"},
      {"graph @g(%x: tensor<2 x bool> = dense<2>) {\n  return %x\n}",
       "test.lir:1:39: error: expected 'true' or 'false' for a bool element, "
       "got '2'"},
      {"graph @g(%x: tensor<1048576 x 1048576 x f32> = dense<0.0>) {\n"
       "  return %x\n}",
       "test.lir:1:48: error: splat constant of type tensor<1048576 x "
       "1048576 x f32> is too large to expand"},
      {"graph @g() {\n  Foo() {a = 1, a = 2}\n  return\n}",
       "test.lir:2:17: error: duplicate attribute 'a'"},
      {"graph @g() {\n  Foo() {a = 99999999999999999999}\n  return\n}",
       "test.lir:2:14: error: integer 99999999999999999999 is out of range"},
      {"graph @g() {\n  Foo() {a = 1e39}\n  return\n}",
       "test.lir:2:14: error: float 1e39 is out of range for f32"},
      {"graph @g() {\n  Foo() {a = [1, \"s\"]}\n  return\n}",
       "test.lir:2:18: error: expected an integer in an ints list"},
      {"graph @g() {\n  Foo() {a = ints[1.5]}\n  return\n}",
       "test.lir:2:19: error: expected an integer in an ints list"},
      {"graph @g() {\n  Foo() {a = dense<1> : tensor<? x f32>}\n  return\n}",
       "test.lir:2:14: error: constant of type tensor<? x f32> must have a "
       "static shape"},
      {"graph @g() {\n  Foo() {a = dense<1>}\n  return\n}",
       "test.lir:2:22: error: expected ':' and the type of the tensor"},
      {"graph @g(%x: tensor<2 x f32>) {\n  %a, %b = Foo(%x) : tensor<2 x f32>\n"
       "  return %a\n}",
       "test.lir:2:20: error: expected 2 result types, got 1"},
      {"graph @g(%x: tensor<2 x f32>) {\n  %a = Foo(%x)\n  return %a\n}",
       "test.lir:3:3: error: expected ':' and the result types"},
      {"graph @g(%x: tensor<2 x f32>) {\n  Foo(%x) : tensor<2 x f32>\n"
       "  return %x\n}",
       "test.lir:2:11: error: a node without results has no result types"},
      {"graph @g(%x: tensor<2 x f32>) {\n  %a = Relu(%x) : tensor<2 x f32>\n",
       "test.lir:3:1: error: expected 'return' before the end of the graph"},
      {"graph @g() {\n  return\n}\ngraph @h() {\n  return\n}",
       "test.lir:4:1: error: expected the end of the input after the graph"},
      {"graph @g() {\n  Foo() {a = \"abc}\n  return\n}",
       "test.lir:2:14: error: unterminated string"},
      {"graph @g() {\n  Foo() {a = \"a\\qb\"}\n  return\n}",
       "test.lir:2:16: error: invalid escape sequence in string"},
      {"graph @g() {\n  # Foo()\n  return\n}",
       "test.lir:2:3: error: unexpected character '#'"},
      {"graph @g() {\n  \x01\n  return\n}",
       "test.lir:2:3: error: unexpected byte 0x01"},
      {"graph @g() {\n  % = Foo()\n  return\n}",
       "test.lir:2:3: error: expected a name after '%'"},
      {"graph @g() {\n  %\"\" = Foo() : tensor<f32>\n  return\n}",
       "test.lir:2:3: error: value name must not be empty"},
      {"graph @g(%x: tensor<2 x f32>) {\n  %a = \"d\".\"\"(%x) : tensor<f32>\n"
       "  return %a\n}",
       "test.lir:2:12: error: op type must not be empty"},
      {"graph @g(%x: tensor<\"\" x f32>) {\n  return %x\n}",
       "test.lir:1:21: error: dim symbol must not be empty"},
      {"graph @g(%x: tensor<2 3 x f32>) {\n  return %x\n}",
       "test.lir:1:23: error: expected 'x' after a dim"},
      {"graph @g(%x: tensor<* x 2 x f32>) {\n  return %x\n}",
       "test.lir:1:25: error: an unranked tensor has no dims"},
      {"model {ir_version = 7, ir_version = 8}\ngraph @g() {\n  return\n}",
       "test.lir:1:24: error: duplicate model field 'ir_version'"},
      {"model {bogus = 1}\ngraph @g() {\n  return\n}",
       "test.lir:1:8: error: unknown model field 'bogus'"},
      {"model {opset_import = {\"\" = 1, \"\" = 2}}\ngraph @g() {\n  return\n}",
       "test.lir:1:32: error: duplicate opset import for domain ''"},
      {"graph @g(%x: tensor<2 x f32>) {\n  %a = Relu(%x) : tensor<2 x f32> "
       "loc(3)\n  return %a\n}",
       "test.lir:2:39: error: expected a string"},
      {"graph @g() {\n  Foo() {a = -b}\n  return\n}",
       "test.lir:2:14: error: expected a number after '-'"},
  };
  for (const Case &C : Cases)
    EXPECT_EQ(parseError(C.Text), C.Error) << "input:\n" << C.Text;
}

/// Every prefix and many random corruptions of a rich text must give a
/// graph or an error, never a crash.
TEST(AsmParserTest, GarbageNeverCrashes) {
  const std::string Text =
      R"(model {ir_version = 7, opset_import = {"" = 17}, source = "m.onnx", metadata_props = {"k" = "v"}}
graph @"g g"(
    %x: tensor<N x 3 x 4 x 4 x f32, nhwc>,
    %w: tensor<2 x 2 x f16> = dense<"0x003C003C0040003C">,
    %"b b": tensor<2 x i64> = dense<[1, -2]>,
    %e: tensor<2 x 2 x i32> = dense_external<64>) {
  %c = Constant() {value = dense<1.5> : tensor<2 x 3 x f32>} : tensor<2 x 3 x f32> loc("c")
  %y, _ = Dropout(%x, none) {seed = -3} : tensor<N x 3 x 4 x 4 x f32, [0, 2, 3, 1]> loc("f":"d") doc = "x\n\"y\""
  %z = "com.x".Op(%y) {f = [1.0, 2.5], s = strings[], t = ["a"], u = nan, v = -inf, w = ints[]} : tensor<* x ?>
  "".return(%z)
  return %y, %z
}
)";
  // dense_external offsets are checked against this blob.
  std::vector<uint8_t> Blob(192, 1);
  ExternalData External{Blob, nullptr, "fuzz.lir.weights"};
  auto Parse = [&](llvm::StringRef T) {
    return parseGraph(T, "fuzz.lir", &External);
  };
  ASSERT_TRUE(bool(Parse(Text)));
  for (size_t I = 0; I < Text.size(); ++I)
    llvm::consumeError(Parse(llvm::StringRef(Text).take_front(I)).takeError());
  std::mt19937 Rng(12345);
  const char Interesting[] = "%@\"\\<>[](){},:=.x?*-0123456789e_ \nfiaN";
  for (int Iter = 0; Iter < 3000; ++Iter) {
    std::string Mutated = Text;
    int Edits = 1 + Rng() % 4;
    for (int E = 0; E < Edits; ++E) {
      size_t Pos = Rng() % Mutated.size();
      switch (Rng() % 4) {
      case 0:
        Mutated[Pos] = char(Rng() % 256);
        break;
      case 1:
        Mutated[Pos] = Interesting[Rng() % (sizeof(Interesting) - 1)];
        break;
      case 2:
        Mutated.erase(Pos, 1 + Rng() % 8);
        break;
      case 3: {
        size_t From = Rng() % Mutated.size();
        Mutated.insert(Pos, Mutated.substr(From, 1 + Rng() % 16));
        break;
      }
      }
      if (Mutated.empty())
        Mutated = "g";
    }
    auto G = Parse(Mutated);
    if (!G) {
      std::string Msg = llvm::toString(G.takeError());
      EXPECT_EQ(Msg.rfind("fuzz.lir:", 0), 0u) << Msg;
      EXPECT_NE(Msg.find(": error: "), std::string::npos) << Msg;
      continue;
    }
    // Whatever parses prints and parses back identically.
    roundTrip(**G);
  }
}
