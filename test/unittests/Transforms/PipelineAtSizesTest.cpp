//===- PipelineAtSizesTest.cpp - Layouts of a symbolic graph at sizes -----===//
//
// Layout assignment keeps the labels another solution chose
// (LayoutOptions::Keep), and runPipelineAtSizes costs a symbolic graph on
// a copy specialized to representative sizes.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/AsmParser.h"
#include "strider/IR/Graph.h"
#include "strider/Layout/LayoutAssignment.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"
#include "strider/Transforms/Specialize.h"

#include "gtest/gtest.h"

using namespace strider;

namespace {

// A strided conv, a depthwise conv, a pointwise conv and a pool on an
// input of symbolic height and width. Shape inference cannot size what
// follows the strided conv; costed as 1 x 1 images the convs prefer
// channels-last, at 224 x 224 (cpu-avx512) channels-first throughout.
constexpr const char *Text = R"(
graph @g(%x: tensor<1 x 16 x H x W x f32>,
         %w1: tensor<32 x 16 x 3 x 3 x f32>,
         %w2: tensor<32 x 1 x 3 x 3 x f32>,
         %w3: tensor<8 x 32 x 1 x 1 x f32>) {
  %c1 = Conv(%x, %w1) {pads = [1, 1, 1, 1], strides = [2, 2]} : tensor<1 x 32 x ? x ? x f32> loc("conv1")
  %r1 = Relu(%c1) : tensor<1 x 32 x ? x ? x f32> loc("relu1")
  %c2 = Conv(%r1, %w2) {pads = [1, 1, 1, 1], group = 32} : tensor<1 x 32 x ? x ? x f32> loc("dw")
  %c3 = Conv(%c2, %w3) : tensor<1 x 8 x ? x ? x f32> loc("pw")
  %p = MaxPool(%c3) {kernel_shape = [2, 2], strides = [2, 2]} : tensor<1 x 8 x ? x ? x f32> loc("pool")
  return %p
}
)";

std::unique_ptr<Graph> parse() {
  auto G = parseGraph(Text, "g.lir");
  EXPECT_TRUE(bool(G)) << llvm::toString(G.takeError());
  return std::move(*G);
}

bool isChannelsLast(const Graph &G, llvm::StringRef Name) {
  const Value *V = G.lookupValue(Name);
  EXPECT_NE(V, nullptr) << Name.str();
  return V && !V->getType().getLayout().isIdentity();
}

PipelineOptions options(std::vector<layout::LayoutReport> &Reports) {
  PipelineOptions Opts;
  Opts.Layout.Target = layout::lookupTarget("cpu-avx512");
  Opts.LayoutReports = &Reports;
  return Opts;
}

TEST(PipelineAtSizes, SymbolicCostsDifferFromRealSizes) {
  // The premise of the tests below.
  auto G = parse();
  std::vector<layout::LayoutReport> Reports;
  PassManager PM;
  ASSERT_FALSE(bool(parsePassPipeline("infer-shapes,layout-assignment", PM)));
  PM.configure(options(Reports));
  ASSERT_FALSE(bool(PM.run(*G)));
  EXPECT_TRUE(isChannelsLast(*G, "c1"));
}

TEST(PipelineAtSizes, KeptLabelsFixTheirNodes) {
  auto G = parse();
  layout::LayoutOptions Opts;
  Opts.Target = layout::lookupTarget("cpu-avx512");
  Opts.RecordLabels = true;
  auto R = layout::assignLayouts(*G, Opts);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  ASSERT_EQ(R->NodeLabels.count("c1"), 1u);
  EXPECT_EQ(R->NodeLabels.at("c1"), 1);
  EXPECT_EQ(R->NumKeptLabels, 0u);
  // Keeping channels-first for every node the first solution labelled.
  auto Keep = std::make_shared<std::map<std::string, uint8_t>>();
  for (const auto &[Name, L] : R->NodeLabels)
    (*Keep)[Name] = 0;
  auto H = parse();
  layout::LayoutOptions KeepOpts;
  KeepOpts.Target = Opts.Target;
  KeepOpts.Keep = Keep;
  auto K = layout::assignLayouts(*H, KeepOpts);
  ASSERT_TRUE(bool(K)) << llvm::toString(K.takeError());
  EXPECT_GT(K->NumKeptLabels, 0u);
  EXPECT_TRUE(K->NodeLabels.empty()) << "recorded without RecordLabels";
  for (const char *Name : {"c1", "r1", "c2", "c3", "p"})
    EXPECT_FALSE(isChannelsLast(*H, Name)) << Name;
}

TEST(PipelineAtSizes, SymbolicGraphTakesTheLayoutsOfItsSpecialization) {
  // What the graph specialized to 224 x 224 chooses...
  auto Static = parse();
  ShapeBindings Sizes;
  Sizes.InputShapes["x"] = {1, 16, 224, 224};
  ASSERT_FALSE(bool(specializeShapes(*Static, Sizes)));
  std::vector<layout::LayoutReport> StaticReports;
  PassManager PM;
  ASSERT_FALSE(bool(parsePassPipeline("infer-shapes,layout-assignment", PM)));
  PM.configure(options(StaticReports));
  ASSERT_FALSE(bool(PM.run(*Static)));
  // ... the symbolic graph takes, its dims left symbolic.
  auto G = parse();
  std::vector<layout::LayoutReport> Reports;
  ASSERT_FALSE(bool(runPipelineAtSizes(
      *G, Sizes, "infer-shapes,layout-assignment", options(Reports))));
  ASSERT_EQ(Reports.size(), 2u) << "the copy's report, then the graph's";
  EXPECT_GT(Reports.back().NumKeptLabels, 0u);
  EXPECT_TRUE(Reports.front().NodeLabels.empty());
  for (const char *Name : {"c1", "r1", "c2", "c3", "p"})
    EXPECT_EQ(isChannelsLast(*G, Name), isChannelsLast(*Static, Name)) << Name;
  EXPECT_FALSE(G->lookupValue("x")->getType().hasStaticShape());
}

TEST(PipelineAtSizes, SizesTheGraphCannotTakeAreAnError) {
  auto G = parse();
  ShapeBindings Sizes;
  Sizes.InputShapes["x"] = {1, 3, 224, 224};
  std::vector<layout::LayoutReport> Reports;
  llvm::Error E = runPipelineAtSizes(
      *G, Sizes, "infer-shapes,layout-assignment", options(Reports));
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("representative sizes"),
            std::string::npos);
}

} // namespace
