//===- CPUConvTransposeTest.cpp - ConvTranspose/InstanceNorm vs reference -===//
//
// The CPU backend's ConvTranspose (GEMM + col2im) and InstanceNormalization
// kernels against the reference interpreter on single-op graphs:
// parameterized sweeps of transposed-conv geometries (1-3 spatial dims,
// strides, asymmetric pads, dilations, groups, output_padding,
// output_shape, auto_pad, with and without bias) in every input/output
// layout pair, and of instance-norm shapes in both layouts. Each case
// asserts that the fast kernel ran (no fallback), and the threaded cases
// that the result is bit-identical to the single-threaded one.
//
//===----------------------------------------------------------------------===//

#include "CPUTestGraph.h"

#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/Runtime/Reference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>

using namespace strider;
using namespace strider::runtime;

namespace {

using cputest::F32;
using cputest::layoutFor;
using cputest::product;
using OpGraph = cputest::TestGraph;

//===----------------------------------------------------------------------===//
// ConvTranspose sweep
//===----------------------------------------------------------------------===//

struct ConvTransposeGeom {
  const char *Name;
  int64_t Batch, Cin, Cout, Group;
  std::vector<int64_t> Spatial, Kernel, Strides, Dilations, Pads;
  std::vector<int64_t> OutputPadding = {}, OutputShape = {};
  const char *AutoPad = nullptr;
};

const ConvTransposeGeom Geometries[] = {
    {"1d", 1, 4, 6, 1, {9}, {3}, {1}, {1}, {0, 0}},
    {"1d_stride3_asym", 1, 3, 5, 1, {7}, {4}, {3}, {1}, {1, 2}},
    {"1d_dilated_outpad", 2, 5, 3, 1, {6}, {3}, {2}, {2}, {1, 0}, {1}},
    {"3x3", 1, 8, 6, 1, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    {"upsample2x", 1, 16, 8, 1, {7, 7}, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
    {"4x4_s2_p1", 1, 8, 12, 1, {6, 5}, {4, 4}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
    {"asym_pads", 1, 5, 7, 1, {5, 7}, {3, 2}, {2, 1}, {1, 1}, {0, 1, 2, 0}},
    {"dilated", 1, 4, 6, 1, {6, 6}, {3, 3}, {1, 1}, {2, 2}, {1, 1, 1, 1}},
    {"stride3_dil2", 1, 4, 5, 1, {4, 5}, {3, 3}, {3, 2}, {2, 1}, {1, 0, 0, 1}},
    {"pointwise_stride2",
     1,
     4,
     4,
     1,
     {5, 5},
     {1, 1},
     {2, 2},
     {1, 1},
     {0, 0, 0, 0}},
    {"big_pads", 1, 3, 4, 1, {6, 6}, {5, 5}, {2, 1}, {1, 1}, {3, 2, 4, 3}},
    {"grouped", 1, 8, 12, 2, {5, 5}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
    {"grouped3", 1, 6, 12, 3, {4, 6}, {2, 3}, {1, 2}, {1, 1}, {0, 1, 0, 1}},
    {"depthwise", 1, 12, 12, 12, {6, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
    {"depthwise_mult2",
     1,
     5,
     10,
     5,
     {5, 4},
     {4, 4},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1}},
    {"output_padding",
     1,
     4,
     6,
     1,
     {5, 5},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1},
     {1, 1}},
    {"output_padding_stride3",
     1,
     3,
     4,
     1,
     {4, 5},
     {3, 2},
     {3, 2},
     {1, 1},
     {0, 0, 1, 0},
     {2, 1}},
    {"output_shape",
     1,
     4,
     5,
     1,
     {5, 5},
     {3, 3},
     {2, 2},
     {1, 1},
     {0, 0, 0, 0},
     {},
     {10, 9}},
    {"output_shape_beyond_full",
     1,
     3,
     4,
     1,
     {4, 4},
     {3, 3},
     {2, 2},
     {1, 1},
     {0, 0, 0, 0},
     {},
     {10, 10}},
    {"same_upper",
     1,
     4,
     6,
     1,
     {5, 6},
     {3, 3},
     {2, 2},
     {1, 1},
     {0, 0, 0, 0},
     {},
     {},
     "SAME_UPPER"},
    {"same_lower",
     1,
     4,
     3,
     1,
     {5, 5},
     {4, 4},
     {2, 2},
     {1, 1},
     {0, 0, 0, 0},
     {},
     {},
     "SAME_LOWER"},
    {"valid",
     1,
     3,
     5,
     1,
     {4, 6},
     {3, 2},
     {2, 3},
     {1, 1},
     {0, 0, 0, 0},
     {},
     {},
     "VALID"},
    // More output channels x taps than a register tile, deep K, batch 2.
    {"wide_batch2",
     2,
     16,
     40,
     1,
     {4, 20},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1}},
    {"deep", 1, 64, 33, 1, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    {"3d",
     1,
     3,
     4,
     1,
     {3, 4, 5},
     {3, 3, 3},
     {2, 2, 2},
     {1, 1, 1},
     {1, 1, 1, 1, 1, 1}},
    {"3d_grouped_outpad",
     1,
     4,
     6,
     2,
     {3, 3, 4},
     {2, 3, 2},
     {2, 1, 2},
     {1, 2, 1},
     {0, 1, 0, 0, 0, 1},
     {1, 0, 1}},
    {"3d_same_upper",
     2,
     2,
     3,
     1,
     {2, 3, 3},
     {2, 2, 3},
     {2, 2, 2},
     {1, 1, 1},
     {0, 0, 0, 0, 0, 0},
     {},
     {},
     "SAME_UPPER"},
};

struct ConvTransposeParam {
  const ConvTransposeGeom *Geom;
  bool InCL, OutCL, Bias;
  std::vector<int> Threads;
};

std::string
convTransposeParamName(const testing::TestParamInfo<ConvTransposeParam> &I) {
  const ConvTransposeParam &P = I.param;
  std::string Name = std::string(P.Geom->Name) + (P.InCL ? "_nhwc" : "_nchw") +
                     "_to" + (P.OutCL ? "_nhwc" : "_nchw") +
                     (P.Bias ? "_bias" : "_nobias");
  for (int T : P.Threads)
    Name += "_t" + std::to_string(T);
  return Name;
}

class ConvTransposeKernelTest
    : public testing::TestWithParam<ConvTransposeParam> {};

TEST_P(ConvTransposeKernelTest, MatchesReference) {
  const ConvTransposeParam &P = GetParam();
  const ConvTransposeGeom &C = *P.Geom;
  OpGraph B{unsigned(C.Cin * 131 + C.Cout * 7 + C.Spatial.size())};
  std::vector<int64_t> XShape{C.Batch, C.Cin};
  XShape.insert(XShape.end(), C.Spatial.begin(), C.Spatial.end());
  const unsigned Rank = unsigned(XShape.size());
  Value *X = B.input(XShape, layoutFor(P.InCL, Rank));
  // W is [Cin, Cout / group, kernel...].
  std::vector<int64_t> WShape{C.Cin, C.Cout / C.Group};
  WShape.insert(WShape.end(), C.Kernel.begin(), C.Kernel.end());
  std::vector<Value *> Ops{X, B.constant(WShape)};
  if (P.Bias)
    Ops.push_back(B.constant({C.Cout}));
  std::vector<std::pair<std::string, Attribute>> Attrs{
      {"group", Attribute::getInt(C.Group)},
      {"kernel_shape", Attribute::getInts(C.Kernel)},
      {"strides", Attribute::getInts(C.Strides)},
      {"dilations", Attribute::getInts(C.Dilations)}};
  if (C.AutoPad)
    Attrs.push_back({"auto_pad", Attribute::getString(C.AutoPad)});
  else
    Attrs.push_back({"pads", Attribute::getInts(C.Pads)});
  if (!C.OutputPadding.empty())
    Attrs.push_back({"output_padding", Attribute::getInts(C.OutputPadding)});
  if (!C.OutputShape.empty())
    Attrs.push_back({"output_shape", Attribute::getInts(C.OutputShape)});
  Value *Y = B.op(OpId::ConvTranspose, Ops, Attrs, layoutFor(P.OutCL, Rank));
  B.checkThreads(Y, "convtranspose.", P.Threads);
}

std::vector<ConvTransposeParam> convTransposeParams() {
  std::vector<ConvTransposeParam> Ps;
  for (const ConvTransposeGeom &G : Geometries)
    for (bool InCL : {false, true})
      for (bool OutCL : {false, true})
        for (bool Bias : {true, false})
          Ps.push_back({&G, InCL, OutCL, Bias, {1}});
  // Threads: results must not depend on them (bit for bit).
  for (const ConvTransposeGeom &G : Geometries) {
    Ps.push_back({&G, true, true, true, {1, 2, 3}});
    Ps.push_back({&G, false, false, true, {1, 2, 3}});
  }
  return Ps;
}

INSTANTIATE_TEST_SUITE_P(Sweep, ConvTransposeKernelTest,
                         testing::ValuesIn(convTransposeParams()),
                         convTransposeParamName);

TEST(ConvTransposeLoweringTest, ActivationWeightsFallBack) {
  // Weights that are not constants are not packed: the reference runs.
  OpGraph B(5);
  Value *X = B.input({1, 4, 5, 5});
  Value *W = B.input({4, 3, 3, 3});
  Value *Y = B.op(OpId::ConvTranspose, {X, W}, {}, Layout());
  B.G.addOutput(Y);
  auto Prog = cpu::compileForCPU(B.G, cpu::CPUOptions());
  ASSERT_TRUE(bool(Prog)) << llvm::toString(Prog.takeError());
  unsigned Fallbacks = 0;
  for (const cpu::StepInfo &S : (*Prog)->getSteps())
    Fallbacks += S.Fallback;
  EXPECT_EQ(Fallbacks, 1u);
}

//===----------------------------------------------------------------------===//
// InstanceNormalization sweep
//===----------------------------------------------------------------------===//

struct InstanceNormCase {
  const char *Name;
  std::vector<int64_t> Shape;
  float Epsilon = 1e-5f;
  float Offset = 0.0f;           ///< Added to the input (a large mean).
  bool ActivationParams = false; ///< Scale and bias as graph inputs.
};

const InstanceNormCase InstanceNormCases[] = {
    {"1d", {1, 3, 5}},
    {"1d_one_pixel", {2, 3, 1}},
    {"2d_odd", {2, 5, 7, 3}},
    {"2d_16", {1, 16, 4, 4}},
    {"2d_17_channels", {2, 17, 5, 3}, 1e-3f},
    {"2d_one_pixel", {1, 33, 1, 1}},
    {"2d_many_pixels", {1, 3, 130, 151}},
    {"2d_many_channels", {1, 70, 40, 41}},
    {"2d_large_mean", {2, 6, 9, 11}, 1e-5f, 50.0f},
    {"2d_activation_params", {1, 7, 6, 5}, 1e-5f, 0.0f, true},
    {"3d", {2, 7, 3, 4, 5}},
    {"3d_one_pixel", {1, 4, 1, 1, 1}},
};

struct InstanceNormParam {
  const InstanceNormCase *Case;
  bool ChannelsLast;
  std::vector<int> Threads;
};

std::string
instanceNormParamName(const testing::TestParamInfo<InstanceNormParam> &I) {
  std::string Name = std::string(I.param.Case->Name) +
                     (I.param.ChannelsLast ? "_nhwc" : "_nchw");
  for (int T : I.param.Threads)
    Name += "_t" + std::to_string(T);
  return Name;
}

class InstanceNormKernelTest
    : public testing::TestWithParam<InstanceNormParam> {};

TEST_P(InstanceNormKernelTest, MatchesReference) {
  const InstanceNormParam &P = GetParam();
  const InstanceNormCase &C = *P.Case;
  OpGraph B{unsigned(product(C.Shape) + P.ChannelsLast)};
  const unsigned Rank = unsigned(C.Shape.size());
  const Layout L = layoutFor(P.ChannelsLast, Rank);
  Value *X = B.input(C.Shape, L, C.Offset);
  const int64_t Ch = C.Shape[1];
  Value *Scale = C.ActivationParams ? B.input({Ch}) : B.constant({Ch});
  Value *Bias = C.ActivationParams ? B.input({Ch}) : B.constant({Ch});
  Value *Y = B.op(OpId::InstanceNormalization, {X, Scale, Bias},
                  {{"epsilon", Attribute::getFloat(C.Epsilon)}}, L);
  B.checkThreads(Y, P.ChannelsLast ? "instancenorm.nhwc" : "instancenorm.nchw",
                 P.Threads);
}

std::vector<InstanceNormParam> instanceNormParams() {
  std::vector<InstanceNormParam> Ps;
  for (const InstanceNormCase &C : InstanceNormCases)
    for (bool CL : {false, true}) {
      Ps.push_back({&C, CL, {1}});
      Ps.push_back({&C, CL, {1, 2, 3}});
    }
  return Ps;
}

INSTANTIATE_TEST_SUITE_P(Sweep, InstanceNormKernelTest,
                         testing::ValuesIn(instanceNormParams()),
                         instanceNormParamName);

TEST(InstanceNormLoweringTest, WritesInPlaceOfItsOperand) {
  // An intermediate operand read only by the norm is overwritten.
  OpGraph B(9);
  const Layout L = Layout::getChannelsLast(4);
  Value *X = B.input({1, 8, 6, 7}, L);
  Value *R = B.op(OpId::Relu, {X}, {}, L);
  Value *Y = B.op(OpId::InstanceNormalization,
                  {R, B.constant({8}), B.constant({8})}, {}, L);
  B.checkThreads(Y, "instancenorm.nhwc", {1, 2});
}

} // namespace
