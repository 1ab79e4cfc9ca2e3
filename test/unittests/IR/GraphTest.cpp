//===- GraphTest.cpp - Graph, Node, Value, use lists, verifier ------------===//

#include "strider/IR/Graph.h"
#include "strider/IR/TensorData.h"
#include "strider/IR/Verifier.h"
#include "strider/Transforms/Passes.h"

#include "gtest/gtest.h"

using namespace strider;

namespace {
TensorType f32(llvm::ArrayRef<int64_t> Shape) {
  return TensorType::get(ElementType::F32, Shape);
}

struct SmallGraph {
  Graph G;
  Value *X, *A, *B;
  Node *NA, *NB;
  SmallGraph() {
    X = G.addInput("x", f32({2, 3}));
    NA = G.createNode(OpId::Relu, {X}, {"a"}, {f32({2, 3})});
    A = NA->getResult(0);
    NB = G.createNode(OpId::Add, {A, X}, {"b"}, {f32({2, 3})});
    B = NB->getResult(0);
    G.addOutput(B);
  }
};
} // namespace

TEST(GraphTest, UseLists) {
  SmallGraph S;
  ASSERT_EQ(S.X->getUses().size(), 2u);
  EXPECT_EQ(S.X->getUses()[0].User, S.NA);
  EXPECT_EQ(S.X->getUses()[1].User, S.NB);
  EXPECT_EQ(S.X->getUses()[1].OperandIndex, 1u);
  EXPECT_EQ(S.A->getDefiningNode(), S.NA);
  EXPECT_TRUE(S.X->isGraphInput());
  S.A->replaceAllUsesWith(S.X);
  EXPECT_FALSE(S.A->hasUses());
  EXPECT_EQ(S.X->getUses().size(), 3u);
  EXPECT_EQ(S.NB->getOperand(0), S.X);
}

TEST(GraphTest, EraseAndNames) {
  SmallGraph S;
  EXPECT_EQ(S.G.lookupValue("a"), S.A);
  EXPECT_EQ(S.G.makeUniqueName("a"), "a_1");
  EXPECT_EQ(S.G.makeUniqueName("fresh"), "fresh");
  S.A->replaceAllUsesWith(S.X);
  S.G.eraseNode(S.NA);
  EXPECT_EQ(S.G.lookupValue("a"), nullptr);
  EXPECT_EQ(S.G.getNumNodes(), 1u);
  EXPECT_EQ(S.X->getUses().size(), 2u);
}

TEST(GraphTest, AttributesStaySorted) {
  SmallGraph S;
  S.NA->setAttr("zeta", Attribute::getInt(1));
  S.NA->setAttr("alpha", Attribute::getFloat(0.5f));
  S.NA->setAttr("mid", Attribute::getInts({1, 2}));
  ASSERT_EQ(S.NA->getAttrs().size(), 3u);
  EXPECT_EQ(S.NA->getAttrs()[0].Name, "alpha");
  EXPECT_EQ(S.NA->getAttrs()[2].Name, "zeta");
  S.NA->setAttr("zeta", Attribute::getInt(7));
  EXPECT_EQ(S.NA->getIntAttr("zeta", 0), 7);
  EXPECT_EQ(S.NA->getIntsAttr("mid"), (std::vector<int64_t>{1, 2}));
  S.NA->removeAttr("mid");
  EXPECT_EQ(S.NA->getAttr("mid"), nullptr);
}

TEST(GraphTest, TopologicalSortAndCycles) {
  SmallGraph S;
  S.G.moveBefore(S.NB, S.NA);
  EXPECT_TRUE(S.G.sortTopologically());
  std::vector<Node *> Order = S.G.getNodeList();
  EXPECT_EQ(Order[0], S.NA);
  EXPECT_EQ(Order[1], S.NB);
  // Close a cycle: relu reads add's result.
  S.NA->setOperand(0, S.B);
  EXPECT_FALSE(S.G.sortTopologically());
  S.NA->setOperand(0, S.X);
}

TEST(GraphTest, OpTable) {
  const OpInfo *Conv = lookupOp("Conv");
  ASSERT_NE(Conv, nullptr);
  EXPECT_EQ(Conv->Id, OpId::Conv);
  EXPECT_EQ(Conv->MinOperands, 2);
  EXPECT_EQ(Conv->MaxOperands, 3);
  ASSERT_NE(Conv->findAttr("group"), nullptr);
  EXPECT_EQ(Conv->findAttr("group")->Kind, AttrKind::Int);
  EXPECT_EQ(lookupOp("NoSuchOp"), nullptr);
  EXPECT_NE(lookupOp("relayout"), nullptr);
  for (const OpInfo &I : getAllOps())
    EXPECT_EQ(&getOpInfo(I.Id), &I);
}

TEST(GraphTest, SchemaVerification) {
  SmallGraph S;
  S.NA->setAttr("bogus", Attribute::getInt(1));
  llvm::Error E = verifyNodeSchema(*S.NA);
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(llvm::toString(std::move(E)),
            "node (Relu) producing 'a': has unknown attribute 'bogus'");
  S.NA->removeAttr("bogus");
  S.NA->setLoc({"m.onnx", "relu1"});
  S.NA->addOperand(S.X);
  llvm::Error E2 = verifyNodeSchema(*S.NA);
  ASSERT_TRUE(bool(E2));
  EXPECT_EQ(llvm::toString(std::move(E2)),
            "m.onnx: node 'relu1' (Relu): has 2 operands, expected 1");
}

TEST(GraphTest, DeadCodeElimination) {
  SmallGraph S;
  Node *Dead = S.G.createNode(OpId::Relu, {S.B}, {"dead"}, {f32({2, 3})});
  S.G.createNode(OpId::Relu, {Dead->getResult(0)}, {"dead2"}, {f32({2, 3})});
  PassManager PM;
  PM.setVerifyEach(false);
  PM.addPass(createDeadCodeEliminationPass());
  ASSERT_FALSE(bool(PM.run(S.G)));
  EXPECT_EQ(S.G.getNumNodes(), 2u);
  EXPECT_EQ(S.G.lookupValue("dead"), nullptr);
}

TEST(GraphTest, RebuildNodeKeepsNamesUsesAndOutputs) {
  SmallGraph S;
  Node *New = S.G.rebuildNode(S.NB, {f32({2, 3}).withLayout(Layout({1, 0}))});
  Value *B = New->getResult(0);
  EXPECT_EQ(B->getName(), "b");
  EXPECT_EQ(S.G.lookupValue("b"), B);
  EXPECT_EQ(S.G.getOutputs()[0], B);
  EXPECT_EQ(B->getType().getLayout(), Layout({1, 0}));
  EXPECT_EQ(New->getOperand(0), S.A);
  EXPECT_EQ(S.A->getUses().size(), 1u);
  EXPECT_EQ(S.G.getNumNodes(), 2u);

  S.G.renameValue(S.A, "relu");
  EXPECT_EQ(S.G.lookupValue("relu"), S.A);
  EXPECT_EQ(S.G.lookupValue("a"), nullptr);
}

TEST(TensorDataTest, WithLayoutPermutesAndRoundTrips) {
  // A 2x3x2 tensor holding 0..11 in logical (row-major) order.
  std::vector<float> Values(12);
  for (unsigned I = 0; I < 12; ++I)
    Values[I] = float(I);
  TensorDataRef D = TensorData::fromFloat({2, 3, 2}, Values);
  TensorDataRef Last = D->withLayout(Layout::getChannelsLast(3));
  EXPECT_EQ(Last->getType().getLayout(), Layout::getChannelsLast(3));
  // Physical order [0, 2, 1]: index (n, w, c) holds logical (n, c, w).
  std::vector<double> Got = Last->toDoubleVector();
  std::vector<double> Want = {0, 2, 4, 1, 3, 5, 6, 8, 10, 7, 9, 11};
  EXPECT_EQ(Got, Want);
  TensorDataRef Back = Last->withLayout(Layout());
  EXPECT_EQ(*Back, *D);
}
