//===- SpecializeTest.cpp - Dim expressions and shape specialization ------===//
//
// The evaluator of symbolic dim expressions (the spellings exporters put in
// value_info) and specializeShapes on graphs built through the Graph API:
// unfed default inputs become constants, bound sizes reach every value.
//
//===----------------------------------------------------------------------===//

#include "strider/Transforms/Specialize.h"
#include "strider/IR/Graph.h"
#include "strider/IR/TensorData.h"
#include "strider/IR/Verifier.h"

#include "gtest/gtest.h"

using namespace strider;

namespace {

const std::map<std::string, int64_t> Sizes = {
    {"height", 640}, {"width", 479}, {"N", 2}, {"x:2", 48}, {"p2o.Dim.1", 7}};

TEST(DimExpressionTest, EvaluatesExporterSpellings) {
  EXPECT_EQ(evaluateDimExpression("height", Sizes),
            llvm::Optional<int64_t>(640));
  EXPECT_EQ(evaluateDimExpression("x:2", Sizes), llvm::Optional<int64_t>(48));
  EXPECT_EQ(evaluateDimExpression("p2o.Dim.1", Sizes),
            llvm::Optional<int64_t>(7));
  EXPECT_EQ(evaluateDimExpression("floor(height/2 - 1/2) + 1", Sizes),
            llvm::Optional<int64_t>(320));
  EXPECT_EQ(evaluateDimExpression("floor(width/2 - 1/2) + 1", Sizes),
            llvm::Optional<int64_t>(240));
  EXPECT_EQ(evaluateDimExpression("ceil(width / 4)", Sizes),
            llvm::Optional<int64_t>(120));
  EXPECT_EQ(evaluateDimExpression("2*N*(height - 600)", Sizes),
            llvm::Optional<int64_t>(160));
  EXPECT_EQ(evaluateDimExpression("max(N, 3) + min(N, 3)", Sizes),
            llvm::Optional<int64_t>(5));
  EXPECT_EQ(evaluateDimExpression(" -N + 10 ", Sizes),
            llvm::Optional<int64_t>(8));
}

TEST(DimExpressionTest, RefusesWhatItCannotEvaluate) {
  EXPECT_FALSE(evaluateDimExpression("unbound + 1", Sizes));
  EXPECT_FALSE(evaluateDimExpression("width / 2", Sizes)); // 239.5
  EXPECT_FALSE(evaluateDimExpression("N - 3", Sizes));     // negative
  EXPECT_FALSE(evaluateDimExpression("N / 0", Sizes));
  EXPECT_FALSE(evaluateDimExpression("floor(N", Sizes));
  EXPECT_FALSE(evaluateDimExpression("sqrt(N)", Sizes));
  EXPECT_FALSE(evaluateDimExpression("N N", Sizes));
  EXPECT_FALSE(evaluateDimExpression("", Sizes));
  // Nesting is bounded: the text comes from the model.
  std::string Deep = std::string(10000, '(') + "N" + std::string(10000, ')');
  EXPECT_FALSE(evaluateDimExpression(Deep, Sizes));
  std::string Ok = std::string(20, '(') + "N" + std::string(20, ')');
  EXPECT_EQ(evaluateDimExpression(Ok, Sizes), llvm::Optional<int64_t>(2));
}

TEST(SpecializeShapesTest, FoldsUnfedDefaultsAndBindsEveryValue) {
  Graph G;
  Value *X = G.addInput("x", TensorType(ElementType::F32, {Dim::getSymbol("N"),
                                                           Dim::getStatic(4)}));
  Value *Bias = G.addInput("bias", TensorType::get(ElementType::F32, {4}));
  Bias->setDefaultData(TensorData::fromFloat({4}, {1, 2, 3, 4}));
  Node *Add = G.createNode(
      OpId::Add, {X, Bias}, {"y"},
      {TensorType(ElementType::F32, {Dim::getSymbol("N"), Dim::getStatic(4)})});
  G.addOutput(Add->getResult(0));

  ShapeBindings B;
  B.InputShapes["x"] = {3, 4};
  SpecializeResult R;
  ASSERT_FALSE(bool(specializeShapes(G, B, &R)));
  ASSERT_FALSE(bool(verifyGraph(G)));
  EXPECT_EQ(R.BoundDims, (std::map<std::string, int64_t>{{"N", 3}}));
  EXPECT_EQ(R.FoldedInputs, std::vector<std::string>{"bias"});
  ASSERT_EQ(G.getInputs().size(), 1u);
  Value *FoldedBias = G.lookupValue("bias");
  ASSERT_TRUE(FoldedBias && FoldedBias->getConstantData());
  EXPECT_EQ(G.getOutputs()[0]->getType(),
            TensorType::get(ElementType::F32, {3, 4}));
  EXPECT_GE(R.Rounds, 1u);
}

TEST(SpecializeShapesTest, ReportsConflictsAndUnknownNames) {
  Graph G;
  G.addInput("a", TensorType(ElementType::F32, {Dim::getSymbol("N")}));
  G.addInput("b", TensorType(ElementType::F32, {Dim::getSymbol("N")}));
  ShapeBindings B;
  B.InputShapes["a"] = {2};
  B.InputShapes["b"] = {5};
  llvm::Error E = specializeShapes(G, B);
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(llvm::toString(std::move(E)),
            "input 'b' binds dim 'N' to 5, input 'a' to 2");

  ShapeBindings Unknown;
  Unknown.InputShapes["c"] = {1};
  llvm::Error E2 = specializeShapes(G, Unknown);
  ASSERT_TRUE(bool(E2));
  EXPECT_EQ(llvm::toString(std::move(E2)), "the model has no input 'c'");
}

TEST(SpecializeShapesTest, RefusesBindingsPastTheSizeLimit) {
  // A declared 2^62 dim is within the limit until the dim beside it is
  // bound to 7 (found by the lowering fuzzer); bound to 0, the tensor is
  // empty but its strides still overflow.
  for (int64_t H : {7, 0}) {
    Graph G;
    G.addInput("x", TensorType(ElementType::F32,
                               {Dim::getStatic(3), Dim::getSymbol("H"),
                                Dim::getStatic(int64_t(1) << 62)}));
    ShapeBindings B;
    B.Dims["H"] = H;
    llvm::Error E = specializeShapes(G, B);
    ASSERT_TRUE(bool(E));
    EXPECT_EQ(llvm::toString(std::move(E)),
              "input 'x' is tensor<3 x " + std::to_string(H) +
                  " x 4611686018427387904 x f32>: " +
                  (H ? "more than 2^62 bytes"
                     : "empty, but its other dims span more than 2^62 bytes"));
  }
}

} // namespace
