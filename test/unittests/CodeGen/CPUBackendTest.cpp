//===- CPUBackendTest.cpp - CPU backend kernels vs the reference ----------===//
//
// Every fast kernel of the CPU backend against the reference interpreter
// on the same graph: parameterized sweeps of convolution geometries
// (kernel sizes, strides, pads, dilations, groups, 1-3 spatial dims, batch)
// in every input/output layout pair with each fused epilogue, and of the
// pooling, elementwise, matrix and data-movement kernels. Each case also
// checks that the fast kernel ran (no fallback), so a lowering that starts
// declining is caught, not silently covered by the reference.
//
//===----------------------------------------------------------------------===//

#include "CPUTestGraph.h"

#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/Runtime/Reference.h"
#include "strider/Transforms/Passes.h"

#include "hwy/targets.h"
#include "llvm/ADT/StringRef.h"
#include "gtest/gtest.h"

#include <array>
#include <cmath>
#include <random>
#include <string>

using namespace strider;
using namespace strider::runtime;

namespace {

using cputest::F32;
using cputest::layoutFor;
using cputest::product;
using GraphBuilder = cputest::TestGraph;

//===----------------------------------------------------------------------===//
// Convolution sweep
//===----------------------------------------------------------------------===//

struct ConvGeom {
  const char *Name;
  int64_t Batch, Cin, Cout, Group;
  std::vector<int64_t> Spatial, Kernel, Strides, Dilations, Pads;
  const char *AutoPad = nullptr;
};

const ConvGeom Geometries[] = {
    {"pointwise", 1, 8, 16, 1, {7, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
    {"pointwise_many_pixels",
     1,
     16,
     16,
     1,
     {15, 15},
     {1, 1},
     {1, 1},
     {1, 1},
     {0, 0, 0, 0}},
    {"pointwise_stride2",
     1,
     12,
     20,
     1,
     {9, 8},
     {1, 1},
     {2, 2},
     {1, 1},
     {0, 0, 0, 0}},
    {"3x3_pad1", 1, 5, 7, 1, {8, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    {"3x3_stride2_wide",
     1,
     16,
     40,
     1,
     {11, 10},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1}},
    {"3x3_deep_k", 1, 64, 33, 1, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    {"5x5_dilated", 1, 3, 8, 1, {13, 12}, {5, 5}, {1, 1}, {2, 2}, {2, 2, 2, 2}},
    {"asymmetric_pads",
     1,
     4,
     6,
     1,
     {7, 9},
     {3, 2},
     {2, 1},
     {1, 1},
     {0, 1, 2, 0}},
    {"stem_7x7", 1, 3, 64, 1, {32, 32}, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}},
    {"grouped", 1, 8, 12, 2, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    {"depthwise", 1, 20, 20, 20, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    {"depthwise_stride2",
     1,
     24,
     24,
     24,
     {10, 11},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1}},
    {"depthwise_5x5_dilated",
     1,
     17,
     17,
     17,
     {12, 12},
     {5, 5},
     {1, 1},
     {2, 2},
     {4, 4, 4, 4}},
    // Four inside pixels at a time: channels in pairs of vectors (48: two
    // pairs at 8 lanes, one pair and a vector at 16) and a tail (50).
    {"depthwise_7x7_wide",
     1,
     48,
     48,
     48,
     {11, 14},
     {7, 7},
     {1, 1},
     {1, 1},
     {3, 3, 3, 3}},
    // Windows 3, 5 and 7 wide at stride 1 and 2 slide over rows of
    // inside pixels (8 at a time at 16 lanes, 4 or 6 at 8), one vector of
    // channels at a time, the channels past the last full vector (40, 20
    // and 33 at 16 lanes) pixel by pixel.
    {"depthwise_slide_3x3",
     2,
     40,
     40,
     40,
     {5, 37},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1}},
    {"depthwise_slide_3x3_stride2",
     1,
     20,
     20,
     20,
     {7, 45},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1}},
    {"depthwise_slide_5x5",
     1,
     16,
     16,
     16,
     {6, 29},
     {5, 5},
     {1, 1},
     {1, 1},
     {2, 2, 2, 2}},
    {"depthwise_slide_7x7_stride2",
     1,
     33,
     33,
     33,
     {9, 50},
     {7, 7},
     {2, 2},
     {1, 1},
     {3, 3, 3, 3}},
    // First layers (at most 4 input channels, 64 of them times taps) run
    // the direct kernel when the output is channels-last: channel groups
    // of up to four vectors (70 at 16 lanes: 64 and 6), tails, dilation,
    // a 3-D window.
    {"first_3x3_stride2",
     2,
     3,
     16,
     1,
     {13, 21},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1}},
    {"first_gray_3x3",
     1,
     1,
     40,
     1,
     {9, 30},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1}},
    {"first_wide_out",
     1,
     3,
     70,
     1,
     {7, 19},
     {3, 3},
     {1, 1},
     {2, 2},
     {2, 2, 2, 2}},
    {"first_3d",
     1,
     1,
     20,
     1,
     {5, 6, 11},
     {3, 3, 3},
     {1, 1, 1},
     {1, 1, 1},
     {1, 1, 1, 1, 1, 1}},
    {"depthwise_stride2_tail",
     2,
     50,
     50,
     50,
     {9, 17},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1}},
    {"batch2", 2, 4, 6, 1, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    // Several images as one GEMM: pointwise rows uniform over an image,
    // unpadded taps read in place, a framed 1-channel signal (silero-vad's
    // STFT conv), and a 3D conv whose depth keeps the images apart.
    {"batch3_pointwise",
     3,
     8,
     16,
     1,
     {5, 5},
     {1, 1},
     {1, 1},
     {1, 1},
     {0, 0, 0, 0}},
    {"batch3_valid", 3, 3, 8, 1, {7, 6}, {3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
    {"batch4_framed_1d", 4, 1, 10, 1, {40}, {16}, {8}, {1}, {0, 0}},
    {"batch2_3d",
     2,
     2,
     4,
     1,
     {3, 4, 5},
     {2, 2, 2},
     {1, 1, 1},
     {1, 1, 1},
     {0, 1, 0, 0, 1, 0}},
    {"same_upper",
     1,
     4,
     4,
     1,
     {10, 10},
     {3, 3},
     {2, 2},
     {1, 1},
     {},
     "SAME_UPPER"},
    {"same_lower",
     1,
     4,
     5,
     1,
     {9, 10},
     {4, 4},
     {2, 2},
     {1, 1},
     {},
     "SAME_LOWER"},
    // Output rows at least one register tile wide: A read in place (from
    // a zero-padded copy where taps reach the padding).
    {"wide_3x3_pad1",
     1,
     6,
     10,
     1,
     {5, 30},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1, 1, 1}},
    {"wide_3x3_stride2",
     1,
     8,
     36,
     1,
     {6, 33},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1, 1, 1}},
    {"wide_dilated", 1, 5, 7, 1, {9, 34}, {3, 3}, {1, 1}, {2, 2}, {2, 2, 2, 2}},
    {"wide_grouped", 1, 8, 8, 4, {4, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
    {"wide_valid", 1, 4, 6, 1, {5, 20}, {2, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}},
    {"wide_pointwise_stride2",
     1,
     12,
     20,
     1,
     {4, 31},
     {1, 1},
     {2, 2},
     {1, 1},
     {0, 0, 0, 0}},
    {"wide_batch2_stem",
     2,
     3,
     16,
     1,
     {6, 40},
     {5, 5},
     {2, 2},
     {1, 1},
     {2, 2, 2, 2}},
    {"conv1d", 1, 4, 6, 1, {17}, {3}, {1}, {1}, {1, 1}},
    {"conv1d_wide", 1, 4, 6, 1, {40}, {3}, {1}, {1}, {1, 1}},
    {"conv1d_stride", 1, 6, 3, 3, {20}, {5}, {3}, {1}, {2, 1}},
    {"conv3d",
     1,
     3,
     5,
     1,
     {5, 6, 7},
     {3, 3, 3},
     {1, 1, 1},
     {1, 1, 1},
     {1, 1, 1, 1, 1, 1}},
    {"conv3d_stride2_wide",
     1,
     4,
     8,
     1,
     {6, 7, 31},
     {3, 3, 3},
     {2, 2, 2},
     {1, 1, 1},
     {1, 1, 1, 1, 1, 1}},
    {"conv3d_pointwise",
     1,
     8,
     12,
     1,
     {3, 4, 5},
     {1, 1, 1},
     {1, 1, 1},
     {1, 1, 1},
     {0, 0, 0, 0, 0, 0}},
    {"conv3d_depthwise",
     1,
     6,
     6,
     6,
     {4, 5, 6},
     {3, 3, 3},
     {2, 1, 1},
     {1, 1, 1},
     {1, 1, 1, 1, 1, 1}},
};

enum class Epi { Bias, BiasRelu, ResidualRelu, NoBiasClip, BiasHardSwish };
const Epi Epilogues[] = {Epi::Bias, Epi::BiasRelu, Epi::ResidualRelu,
                         Epi::NoBiasClip, Epi::BiasHardSwish};

struct ConvParam {
  const ConvGeom *Geom;
  bool InCL, OutCL;
  Epi E;
  int Threads;
};

std::string convParamName(const testing::TestParamInfo<ConvParam> &I) {
  const ConvParam &P = I.param;
  static const char *EpiNames[] = {"bias", "bias_relu", "residual_relu", "clip",
                                   "bias_hardswish"};
  return std::string(P.Geom->Name) + (P.InCL ? "_nhwc" : "_nchw") + "_to" +
         (P.OutCL ? "_nhwc_" : "_nchw_") + EpiNames[int(P.E)] + "_t" +
         std::to_string(P.Threads);
}

/// The CPU backend's conv of \p P against the reference interpreter.
void checkConv(const ConvParam &P) {
  const ConvGeom &C = *P.Geom;
  GraphBuilder B{unsigned(C.Cin * 131 + C.Cout * 7 + int(P.E))};
  std::vector<int64_t> XShape{C.Batch, C.Cin};
  XShape.insert(XShape.end(), C.Spatial.begin(), C.Spatial.end());
  unsigned Rank = unsigned(XShape.size());
  Value *X = B.input(XShape, layoutFor(P.InCL, Rank));
  std::vector<int64_t> WShape{C.Cout, C.Cin / C.Group};
  WShape.insert(WShape.end(), C.Kernel.begin(), C.Kernel.end());
  std::vector<Value *> Ops{X, B.constant(WShape)};
  bool HasBias = P.E != Epi::NoBiasClip;
  if (HasBias)
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
  Value *Y = B.op(OpId::Conv, Ops, Attrs);
  Layout OutL = layoutFor(P.OutCL, Rank);
  B.setLayout(Y, OutL);
  switch (P.E) {
  case Epi::Bias:
    break;
  case Epi::BiasRelu:
    Y = B.op(OpId::Relu, {Y});
    B.setLayout(Y, OutL);
    break;
  case Epi::ResidualRelu: {
    Value *R = B.input(Y->getType().getStaticShape(), OutL);
    Y = B.op(OpId::Add, {Y, R});
    B.setLayout(Y, OutL);
    Y = B.op(OpId::Relu, {Y});
    B.setLayout(Y, OutL);
    break;
  }
  case Epi::NoBiasClip:
    Y = B.op(OpId::Clip, {Y, B.constant({}, {-0.5f}), B.constant({}, {0.75f})});
    B.setLayout(Y, OutL);
    break;
  case Epi::BiasHardSwish:
    Y = B.op(OpId::HardSwish, {Y});
    B.setLayout(Y, OutL);
    break;
  }
  B.check(Y, 0, P.Threads);
}

class ConvKernelTest : public testing::TestWithParam<ConvParam> {};

TEST_P(ConvKernelTest, MatchesReference) { checkConv(GetParam()); }

/// Runs \p F once on each SIMD target this machine runs (each compiling
/// and running its programs for that target), then restores dispatch.
template <typename Fn> void forEachSimdTarget(Fn F) {
  for (int64_t Left = hwy::SupportedTargets(); Left != 0; Left &= Left - 1) {
    const int64_t Target = Left & -Left;
    SCOPED_TRACE(hwy::TargetName(Target));
    hwy::SetSupportedTargetsForTest(Target);
    F();
  }
  hwy::SetSupportedTargetsForTest(0);
}

// The sliding depthwise and the direct first-layer kernels hold a
// different number of pixels per step for each vector width: every SIMD
// target this machine runs, each compiling and running the program for
// itself.
TEST(CPUKernelTest, SmallConvKernelsOnEverySimdTarget) {
  forEachSimdTarget([] {
    for (const ConvGeom &G : Geometries)
      if (llvm::StringRef(G.Name).startswith("depthwise_slide") ||
          llvm::StringRef(G.Name).startswith("first_"))
        for (bool InCL : {false, true})
          for (Epi E : {Epi::ResidualRelu, Epi::NoBiasClip})
            checkConv({&G, InCL, true, E, 1});
  });
}

// The GEMM's tiles are one or two vectors of output channels wide (a
// panel of at most one vector's columns runs the one-vector kernel): 7,
// 16 and 40 output channels, in both formulations, on every SIMD target.
TEST(CPUKernelTest, GemmConvTilesOnEverySimdTarget) {
  forEachSimdTarget([] {
    for (const ConvGeom &G : Geometries)
      if (llvm::StringRef(G.Name) == "pointwise" ||
          llvm::StringRef(G.Name) == "3x3_pad1" ||
          llvm::StringRef(G.Name) == "3x3_stride2_wide")
        for (bool InCL : {false, true})
          for (bool OutCL : {false, true})
            checkConv({&G, InCL, OutCL, Epi::ResidualRelu, 1});
  });
}

std::vector<ConvParam> convParams() {
  std::vector<ConvParam> Ps;
  for (const ConvGeom &G : Geometries)
    for (bool InCL : {false, true})
      for (bool OutCL : {false, true})
        for (Epi E : Epilogues)
          Ps.push_back({&G, InCL, OutCL, E, 1});
  // Threads: results must not depend on them (one sweep at 2 and 3).
  for (const ConvGeom &G : Geometries)
    Ps.push_back({&G, true, true, Epi::ResidualRelu, 2});
  Ps.push_back({&Geometries[5], false, false, Epi::BiasRelu, 3});
  return Ps;
}

INSTANTIATE_TEST_SUITE_P(Sweep, ConvKernelTest, testing::ValuesIn(convParams()),
                         convParamName);

//===----------------------------------------------------------------------===//
// Pooling, elementwise, matrix and data movement
//===----------------------------------------------------------------------===//

TEST(CPUKernelTest, FusesSiLUWrittenAsMulOfSigmoid) {
  for (bool CL : {false, true}) {
    GraphBuilder B(70 + CL);
    Layout L4 = layoutFor(CL, 4);
    Value *X = B.input({1, 6, 5, 16}, L4);
    Value *Y = B.op(OpId::Conv, {X, B.constant({8, 6, 3, 3}), B.constant({8})},
                    {{"pads", Attribute::getInts({1, 1, 1, 1})}});
    B.setLayout(Y, L4);
    Value *S = B.op(OpId::Sigmoid, {Y});
    B.setLayout(S, L4);
    Value *M = B.op(OpId::Mul, {S, Y});
    B.setLayout(M, L4);
    B.check(M, 0, 1, "+silu");
  }
}

TEST(CPUKernelTest, FusesAcrossLayoutsThatHoldTheSameBytes) {
  // A 1x1 spatial map: channels-first and channels-last are the same
  // bytes, so the residual Add and the Sigmoid still fuse into the conv.
  GraphBuilder B(80);
  Value *X = B.input({1, 16, 1, 1}, Layout::getChannelsLast(4));
  Value *Y =
      B.op(OpId::Conv, {X, B.constant({16, 16, 1, 1}), B.constant({16})});
  B.setLayout(Y, Layout::getChannelsLast(4));
  Value *R = B.input({1, 16, 1, 1});
  Value *A = B.op(OpId::Add, {Y, R});
  Value *S = B.op(OpId::Sigmoid, {A});
  B.setLayout(S, Layout::getChannelsLast(4));
  B.check(S, 0, 1, "conv.nhwc+bias+add+sigmoid");
}

TEST(CPUKernelTest, InPlaceWritesWaitForFusedReaders) {
  // The Conv+Relu group runs at its Relu, after Relu(x): that Relu must
  // not overwrite x, which the conv still reads.
  for (bool CL : {false, true}) {
    GraphBuilder B(110 + CL);
    Layout L4 = layoutFor(CL, 4);
    Value *In = B.input({1, 8, 6, 20}, L4);
    Value *X = B.op(OpId::Add, {In, In});
    B.setLayout(X, L4);
    Value *C = B.op(OpId::Conv, {X, B.constant({8, 8, 1, 1})});
    B.setLayout(C, L4);
    Value *E = B.op(OpId::Relu, {X});
    B.setLayout(E, L4);
    Value *Y = B.op(OpId::Relu, {C});
    B.setLayout(Y, L4);
    B.G.addOutput(E);
    B.check(Y);
  }
}

TEST(CPUKernelTest, ResidualOfTheConvInputIsNotOverwritten) {
  // Add(conv(X), X): the output may not take X's buffer while the conv
  // still reads X (depthwise and pointwise, channels-last).
  for (int64_t Group : {1, 64}) {
    GraphBuilder B{unsigned(120 + Group)};
    Layout L4 = Layout::getChannelsLast(4);
    Value *In = B.input({1, 64, 6, 30}, L4);
    Value *X = B.op(OpId::Relu, {In});
    B.setLayout(X, L4);
    std::vector<int64_t> K =
        Group == 1 ? std::vector<int64_t>{1, 1} : std::vector<int64_t>{3, 3};
    Value *C = B.op(
        OpId::Conv,
        {X, B.constant({64, 64 / Group, K[0], K[1]}), B.constant({64})},
        {{"group", Attribute::getInt(Group)},
         {"pads",
          Attribute::getInts(Group == 1 ? std::vector<int64_t>{0, 0, 0, 0}
                                        : std::vector<int64_t>{1, 1, 1, 1})}});
    B.setLayout(C, L4);
    Value *Y = B.op(OpId::Add, {C, X});
    B.setLayout(Y, L4);
    B.check(Y, 0, 1, "+add");
  }
}

TEST(CPUKernelTest, SigmoidSaturatesForLargeInputs) {
  GraphBuilder B(130);
  Value *X = B.input({1, 4, 8, 9});
  // Inputs in [-300, 300]: exp(-x) leaves Highway's defined range.
  Value *S = B.op(OpId::Mul, {X, B.constant({}, {300.0f})});
  Value *Y = B.op(OpId::Sigmoid, {S});
  Value *Z = B.op(OpId::Mul, {S, Y}); // SiLU, fused into the Mul's producer
  B.G.addOutput(Y);
  B.check(Z);
}

TEST(CPUKernelTest, MaxAndAveragePoolChannelsLast) {
  struct PoolCase {
    OpId Op;
    std::vector<int64_t> Kernel, Strides, Pads, Dilations;
  } Cases[] = {
      {OpId::MaxPool, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}},
      {OpId::MaxPool, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}},
      {OpId::MaxPool, {3, 2}, {1, 2}, {1, 0, 1, 1}, {2, 1}},
      {OpId::AveragePool, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {OpId::AveragePool, {2, 3}, {2, 1}, {0, 1, 1, 1}, {1, 1}},
      // Stride 1 along w: a row's inside pixels pooled as one flat array.
      {OpId::MaxPool, {2, 2}, {1, 1}, {0, 0, 1, 1}, {1, 1}},
      {OpId::MaxPool, {3, 3}, {2, 1}, {1, 1, 1, 1}, {1, 1}},
      {OpId::AveragePool, {1, 4}, {1, 1}, {0, 2, 0, 1}, {1, 1}},
  };
  for (const PoolCase &C : Cases)
    for (int64_t Channels : {5, 16, 37}) {
      GraphBuilder B{unsigned(Channels)};
      Value *X = B.input({1, Channels, 9, 10}, Layout::getChannelsLast(4));
      std::vector<std::pair<std::string, Attribute>> Attrs{
          {"kernel_shape", Attribute::getInts(C.Kernel)},
          {"strides", Attribute::getInts(C.Strides)},
          {"pads", Attribute::getInts(C.Pads)}};
      if (C.Op == OpId::MaxPool)
        Attrs.push_back({"dilations", Attribute::getInts(C.Dilations)});
      Value *Y = B.op(C.Op, {X}, Attrs);
      B.setLayout(Y, Layout::getChannelsLast(4));
      B.check(Y);
    }
}

TEST(CPUKernelTest, GlobalPoolsBothLayouts) {
  for (OpId Op : {OpId::GlobalAveragePool, OpId::GlobalMaxPool})
    for (bool CL : {false, true})
      for (int64_t C : {3, 16, 50}) {
        GraphBuilder B{unsigned(C)};
        Value *X = B.input({2, C, 7, 6}, layoutFor(CL, 4));
        Value *Y = B.op(Op, {X});
        B.setLayout(Y, layoutFor(CL, 4));
        B.check(Y);
      }
}

TEST(CPUKernelTest, BroadcastingBinaries) {
  struct Case {
    OpId Op;
    std::vector<int64_t> A, B;
    bool CL;
  } Cases[] = {
      {OpId::Add, {1, 8, 5, 6}, {1, 8, 5, 6}, true},
      {OpId::Mul, {1, 24, 5, 6}, {1, 24, 1, 1}, true}, // SE scale
      {OpId::Mul, {1, 24, 5, 6}, {1, 24, 1, 1}, false},
      {OpId::Sub, {2, 3, 4, 5}, {5}, false},
      {OpId::Div, {2, 3, 4, 5}, {}, true},
      {OpId::Add, {1, 1, 4, 5}, {1, 7, 1, 1}, true},
      {OpId::Mul, {3, 17}, {3, 1}, false},
  };
  for (const Case &C : Cases) {
    GraphBuilder B{unsigned(C.A.size() * 10 + C.B.size())};
    Value *A =
        B.input(C.A, layoutFor(C.CL && C.A.size() == 4, unsigned(C.A.size())));
    Value *BV = B.constant(C.B, {});
    if (C.Op == OpId::Div) // Keep away from zero.
      BV = B.constant(C.B, {1.5f});
    Value *Y = B.op(C.Op, {A, BV});
    B.setLayout(Y, layoutFor(C.CL && Y->getType().getRank() == 4,
                             Y->getType().getRank()));
    Value *Act = B.op(OpId::Sigmoid, {Y});
    B.setLayout(Act, Y->getType().getLayout());
    B.check(Act);
  }
}

TEST(CPUKernelTest, Activations) {
  for (OpId Op : {OpId::Relu, OpId::LeakyRelu, OpId::Sigmoid, OpId::HardSigmoid,
                  OpId::HardSwish}) {
    GraphBuilder B{unsigned(Op)};
    Value *X = B.input({1, 3, 7, 11}); // 231 elements: a vector tail.
    Value *Y = B.op(Op, {X});
    B.check(Y);
  }
}

TEST(CPUKernelTest, GemmVariants) {
  for (int TA : {0, 1})
    for (int TB : {0, 1})
      for (bool Bias : {false, true}) {
        GraphBuilder B{unsigned(TA * 4 + TB * 2 + Bias)};
        const int64_t M = 5, K = 70, N = 37;
        Value *A = B.input(TA ? std::vector<int64_t>{K, M}
                              : std::vector<int64_t>{M, K});
        Value *W = B.constant(TB ? std::vector<int64_t>{N, K}
                                 : std::vector<int64_t>{K, N});
        std::vector<Value *> Ops{A, W};
        if (Bias)
          Ops.push_back(B.constant({N}));
        Value *Y = B.op(OpId::Gemm, Ops,
                        {{"transA", Attribute::getInt(TA)},
                         {"transB", Attribute::getInt(TB)},
                         {"alpha", Attribute::getFloat(0.5f)},
                         {"beta", Attribute::getFloat(2.0f)}});
        Y = B.op(OpId::Relu, {Y});
        B.check(Y);
      }
}

TEST(CPUKernelTest, MatMulBatchedAndTransposedOperand) {
  GraphBuilder B(3);
  Value *A = B.input({2, 9, 20});
  Value *Y = B.op(OpId::MatMul, {A, B.constant({20, 33})});
  B.check(Y);

  // A rank-3 operand stored with its last two dims swapped: read as a
  // transposed matrix.
  GraphBuilder B2(4);
  Value *A2 = B2.input({2, 9, 20}, Layout({0, 2, 1}));
  Value *Y2 = B2.op(OpId::MatMul, {A2, B2.constant({20, 7})});
  B2.check(Y2);
}

TEST(CPUKernelTest, MatMulOfTwoActivations) {
  // Attention-like: batched, and a rank-2 right operand.
  GraphBuilder B(11);
  Value *Q = B.input({2, 9, 12});
  Value *KT = B.input({2, 12, 17}, Layout({0, 2, 1})); // stored transposed
  Value *Y = B.op(OpId::MatMul, {Q, KT});
  B.check(Y);
  GraphBuilder B2(12);
  Value *X = B2.input({3, 5, 7});
  Value *W = B2.input({7, 4});
  B2.check(B2.op(OpId::MatMul, {X, W}));
}

TEST(CPUKernelTest, GemmOfTwoActivations) {
  // transA/transB, and C absent, constant, an activation (read per run),
  // switched off by beta 0, or a full matrix (added as a residual, beta
  // 1); a fused Relu.
  enum { None, Constant, Input, Off, Matrix };
  for (int TA : {0, 1})
    for (int TB : {0, 1})
      for (int CKind : {None, Constant, Input, Off, Matrix}) {
        GraphBuilder B(100 + 8 * TA + 4 * TB + CKind);
        Value *A = B.input(TA ? std::vector<int64_t>{13, 6}
                              : std::vector<int64_t>{6, 13});
        Value *W = B.input(TB ? std::vector<int64_t>{21, 13}
                              : std::vector<int64_t>{13, 21});
        std::vector<Value *> Ops = {A, W};
        if (CKind == Constant || CKind == Off)
          Ops.push_back(B.constant({21}));
        if (CKind == Input)
          Ops.push_back(B.input({1, 21}));
        if (CKind == Matrix)
          Ops.push_back(B.input({6, 21}));
        float Beta = CKind == Off ? 0.0f : CKind == Matrix ? 1.0f : 0.5f;
        Value *Y = B.op(OpId::Gemm, Ops,
                        {{"transA", Attribute::getInt(TA)},
                         {"transB", Attribute::getInt(TB)},
                         {"beta", Attribute::getFloat(Beta)}});
        B.check(B.op(OpId::Relu, {Y}), 0, 1, "gemm.dynamic+relu");
      }
}

TEST(CPUKernelTest, BatchNormBothLayoutsWithFusedRelu) {
  for (bool CL : {false, true})
    for (int64_t C : {5, 32}) {
      GraphBuilder B{unsigned(C) + CL};
      Value *X = B.input({2, C, 6, 7}, layoutFor(CL, 4));
      std::vector<float> Var(static_cast<size_t>(C), 0.0f);
      for (size_t I = 0; I < Var.size(); ++I)
        Var[I] = 0.5f + 0.1f * float(I);
      Value *Y = B.op(OpId::BatchNormalization,
                      {X, B.constant({C}), B.constant({C}), B.constant({C}),
                       B.constant({C}, Var)},
                      {{"epsilon", Attribute::getFloat(1e-3f)}});
      B.setLayout(Y, layoutFor(CL, 4));
      Value *R = B.op(OpId::Relu, {Y});
      B.setLayout(R, layoutFor(CL, 4));
      B.check(R);
    }
}

TEST(CPUKernelTest, ConcatRelayoutAndTranspose) {
  for (bool CL : {false, true}) {
    GraphBuilder B(CL ? 5 : 6);
    Value *X = B.input({1, 5, 6, 7}, layoutFor(CL, 4));
    Value *Z = B.input({1, 3, 6, 7}, layoutFor(CL, 4));
    Value *Y = B.op(OpId::Concat, {X, Z}, {{"axis", Attribute::getInt(1)}});
    B.setLayout(Y, layoutFor(CL, 4));
    // Relayout into the other layout.
    Value *R = B.op(OpId::Relayout, {Y});
    B.setLayout(R, layoutFor(!CL, 4));
    Value *T = B.op(OpId::Transpose, {R},
                    {{"perm", Attribute::getInts({0, 2, 3, 1})}});
    B.check(T);
  }
  // Concat along a spatial axis.
  GraphBuilder B(7);
  Value *X = B.input({1, 4, 3, 5}, Layout::getChannelsLast(4));
  Value *Z = B.input({1, 4, 2, 5}, Layout::getChannelsLast(4));
  Value *Y = B.op(OpId::Concat, {X, Z}, {{"axis", Attribute::getInt(-2)}});
  B.setLayout(Y, Layout::getChannelsLast(4));
  B.check(Y);
}

/// The kernel names of \p G's program, in order.
std::vector<std::string> kernelNames(const Graph &G) {
  std::vector<std::string> Names;
  auto Prog = cpu::compileForCPU(G, {});
  EXPECT_TRUE(bool(Prog)) << llvm::toString(Prog.takeError());
  if (Prog)
    for (const cpu::StepInfo &S : (*Prog)->getSteps())
      Names.push_back(S.Kernel);
  return Names;
}

TEST(CPUKernelTest, ConcatWrittenInPlaceByProducers) {
  // Convs (dense with a fused activation, pointwise, depthwise) and a
  // Resize whose only reader is a Concat write into its buffer at their
  // channel offset; a graph input, a value read twice and a conv with a
  // fused residual are copied by the concat as before. Both layouts,
  // batch 1 and 2.
  for (bool CL : {false, true})
    for (int64_t N : {1, 2}) {
      GraphBuilder B(unsigned(200 + 2 * N + CL));
      Layout L4 = layoutFor(CL, 4);
      auto Conv = [&](Value *In, int64_t Cout, int64_t K, int64_t Group,
                      Value *Residual = nullptr) {
        int64_t Cin = In->getType().getStaticShape()[1];
        Value *Y = B.op(
            OpId::Conv,
            {In, B.constant({Cout, Cin / Group, K, K}), B.constant({Cout})},
            {{"pads", Attribute::getInts({K / 2, K / 2, K / 2, K / 2})},
             {"group", Attribute::getInt(Group)}});
        B.setLayout(Y, L4);
        if (Residual) {
          Y = B.op(OpId::Add, {Y, Residual});
          B.setLayout(Y, L4);
        }
        return Y;
      };
      Value *X = B.input({N, 6, 9, 16}, L4);
      Value *A = B.op(OpId::Relu, {Conv(X, 8, 3, 1)});
      B.setLayout(A, L4);
      Value *P = Conv(X, 5, 1, 1);
      Value *D = Conv(X, 6, 3, 6);
      Value *Twice = Conv(X, 3, 1, 1);
      Value *Res = Conv(X, 6, 3, 1, X);
      std::vector<Value *> Parts = {A, X, P, D, Twice, Res};
      if (CL) {
        Value *Small = B.input({N, 4, 3, 8}, L4);
        Node *Roi = B.G.createNode(OpId::Constant, {}, {"roi"},
                                   {TensorType::get(ElementType::F32, {0})});
        Roi->setAttr("value",
                     Attribute::getTensor(TensorData::fromFloat({0}, {})));
        Value *Up = B.op(OpId::Resize, {Small, Roi->getResult(0),
                                        B.constant({4}, {1, 1, 3, 2})});
        B.setLayout(Up, L4);
        Parts.push_back(Up);
      }
      Value *Y = B.op(OpId::Concat, Parts, {{"axis", Attribute::getInt(1)}});
      B.setLayout(Y, L4);
      // Twice's second reader (dead, but run by both executors).
      B.setLayout(B.op(OpId::Relu, {Twice}), L4);
      B.check(Y, 0, 1, "concat");
      B.check(Y, 0, 2, "concat");
    }

  // Every operand written in place: no concat step at all.
  for (bool CL : {false, true}) {
    GraphBuilder B(210 + CL);
    Layout L4 = layoutFor(CL, 4);
    Value *X = B.input({1, 6, 5, 20}, L4);
    std::vector<Value *> Parts;
    for (int64_t Cout : {16, 3}) {
      Value *C = B.op(OpId::Conv, {X, B.constant({Cout, 6, 3, 3})},
                      {{"pads", Attribute::getInts({1, 1, 1, 1})}});
      B.setLayout(C, L4);
      Parts.push_back(C);
    }
    Value *Y = B.op(OpId::Concat, Parts, {{"axis", Attribute::getInt(1)}});
    B.setLayout(Y, L4);
    Value *R = B.op(OpId::Relu, {Y});
    B.setLayout(R, L4);
    B.check(R);
    for (const std::string &K : kernelNames(B.G))
      EXPECT_EQ(K.find("concat"), std::string::npos) << K;
  }

  // A conv written in place has no buffer of its own: the activations are
  // the two inputs and the concat.
  for (bool CL : {false, true}) {
    GraphBuilder B(220 + CL);
    Layout L4 = layoutFor(CL, 4);
    Value *X = B.input({2, 6, 5, 20}, L4);
    Value *Z = B.input({2, 3, 5, 20}, L4);
    Value *A = B.op(OpId::Conv, {X, B.constant({16, 6, 3, 3})},
                    {{"pads", Attribute::getInts({1, 1, 1, 1})}});
    B.setLayout(A, L4);
    Value *Y = B.op(OpId::Concat, {Z, A}, {{"axis", Attribute::getInt(1)}});
    B.setLayout(Y, L4);
    B.check(Y, 0, 1, "concat");
    auto Prog = cpu::compileForCPU(B.G, {});
    ASSERT_TRUE(bool(Prog)) << llvm::toString(Prog.takeError());
    EXPECT_EQ((*Prog)->getUnplannedBytes(),
              4 * (2 * 6 * 100 + 2 * 3 * 100 + 2 * 19 * 100));
  }
}

TEST(CPUKernelTest, SplitSlicePadAndSpaceDepth) {
  for (bool CL : {false, true}) {
    Layout L4 = layoutFor(CL, 4);
    {
      GraphBuilder B(20 + CL);
      Value *X = B.input({1, 10, 6, 7}, L4);
      // Split sizes as a constant int64 operand.
      TensorDataRef Sizes =
          TensorData::fromInt64(ElementType::I64, {3}, {2, 5, 3});
      Node *C =
          B.G.createNode(OpId::Constant, {}, {"sizes"}, {Sizes->getType()});
      C->setAttr("value", Attribute::getTensor(Sizes));
      Value *Y = B.op(OpId::Split, {X, C->getResult(0)},
                      {{"axis", Attribute::getInt(1)}}, 3);
      Node *Sp = Y->getDefiningNode();
      for (unsigned I = 0; I < 3; ++I)
        B.setLayout(Sp->getResult(I), L4);
      // Use the middle part; the others stay live as outputs.
      B.G.addOutput(Sp->getResult(0));
      B.G.addOutput(Sp->getResult(2));
      B.check(Sp->getResult(1));
    }
    {
      GraphBuilder B(30 + CL);
      Value *X = B.input({2, 8, 9, 10}, L4);
      auto Ints = [&](std::vector<int64_t> V) {
        TensorDataRef D =
            TensorData::fromInt64(ElementType::I64, {int64_t(V.size())}, V);
        Node *C = B.G.createNode(OpId::Constant, {}, {B.G.makeUniqueName("i")},
                                 {D->getType()});
        C->setAttr("value", Attribute::getTensor(D));
        return C->getResult(0);
      };
      Value *Y = B.op(OpId::Slice, {X, Ints({-1, 1, 7}), Ints({0, 6, -100}),
                                    Ints({1, 2, 3}), Ints({-2, 2, -3})});
      B.setLayout(Y, L4);
      B.check(Y);
    }
    {
      GraphBuilder B(40 + CL);
      Value *X = B.input({1, 3, 5, 6}, L4);
      TensorDataRef Pads = TensorData::fromInt64(ElementType::I64, {8},
                                                 {0, 1, 2, 0, 0, 2, 1, 3});
      Node *C = B.G.createNode(OpId::Constant, {}, {"pads"}, {Pads->getType()});
      C->setAttr("value", Attribute::getTensor(Pads));
      Value *Y = B.op(OpId::Pad, {X, C->getResult(0), B.constant({}, {0.5f})});
      B.setLayout(Y, L4);
      B.check(Y);
    }
    for (const char *Mode : {"DCR", "CRD"}) {
      GraphBuilder B(50 + CL);
      Value *X = B.input({2, 12, 3, 4}, L4);
      Value *Y = B.op(OpId::DepthToSpace, {X},
                      {{"blocksize", Attribute::getInt(2)},
                       {"mode", Attribute::getString(Mode)}});
      B.setLayout(Y, L4);
      Value *Z =
          B.op(OpId::SpaceToDepth, {Y}, {{"blocksize", Attribute::getInt(2)}});
      B.setLayout(Z, layoutFor(!CL, 4));
      B.check(Z);
    }
    {
      // A channel shuffle: reshapes that are not bitcasts of a
      // channels-last tensor copy their elements.
      GraphBuilder B(60 + CL);
      Value *X = B.input({1, 6, 4, 5}, L4);
      auto Shape = [&](std::vector<int64_t> V) {
        TensorDataRef D =
            TensorData::fromInt64(ElementType::I64, {int64_t(V.size())}, V);
        Node *C = B.G.createNode(OpId::Constant, {}, {B.G.makeUniqueName("s")},
                                 {D->getType()});
        C->setAttr("value", Attribute::getTensor(D));
        return C->getResult(0);
      };
      Value *R = B.op(OpId::Reshape, {X, Shape({1, 2, 3, 4, 5})});
      Value *T = B.op(OpId::Transpose, {R},
                      {{"perm", Attribute::getInts({0, 2, 1, 3, 4})}});
      Value *Y = B.op(OpId::Reshape, {T, Shape({1, 6, 4, 5})});
      B.setLayout(Y, L4);
      B.check(Y);
    }
  }
}

TEST(CPUKernelTest, PadEveryModeAsCopies) {
  auto Ints = [](GraphBuilder &B, std::vector<int64_t> V) {
    TensorDataRef D =
        TensorData::fromInt64(ElementType::I64, {int64_t(V.size())}, V);
    Node *C = B.G.createNode(OpId::Constant, {}, {B.G.makeUniqueName("i")},
                             {D->getType()});
    C->setAttr("value", Attribute::getTensor(D));
    return C->getResult(0);
  };
  auto Mode = [](const char *M) {
    return std::vector<std::pair<std::string, Attribute>>{
        {"mode", Attribute::getString(M)}};
  };
  struct Case {
    std::vector<int64_t> Shape;
    const char *Mode;
    std::vector<int64_t> Pads, Axes;
  };
  // Pads on spatial, channel and batch dims; negative pads crop (and a
  // reflect border may mirror next to a crop).
  const Case Cases[] = {
      {{1, 3, 5, 6}, "reflect", {0, 0, 2, 1, 0, 0, 1, 3}, {}},
      {{2, 3, 6, 7}, "reflect", {0, 1, -1, 2, 0, 2, 2, -1}, {}},
      {{1, 2, 5, 6}, "reflect", {1, 2, 3, 1}, {-1, 2}},
      {{2, 3, 4, 5}, "edge", {1, 0, 2, -1, 0, 2, -2, 3}, {}},
      {{1, 4, 1, 5}, "edge", {0, 0, 2, 0, 0, 0, 3, 4}, {}},
      {{1, 4, 1, 5}, "reflect", {0, 0, 2, 1, 0, 0, 3, 4}, {}},
      {{2, 3, 4, 5}, "constant", {0, 1, -1, 2, 1, 0, 2, -2}, {}},
  };
  for (bool CL : {false, true}) {
    Layout L4 = layoutFor(CL, 4);
    unsigned Seed = 90 + CL;
    for (const Case &C : Cases) {
      GraphBuilder B(Seed += 2);
      Value *X = B.input(C.Shape, L4);
      std::vector<Value *> Ops = {X, Ints(B, C.Pads)};
      if (!C.Axes.empty())
        Ops.insert(Ops.end(), {nullptr, Ints(B, C.Axes)});
      Value *Y = B.op(OpId::Pad, Ops, Mode(C.Mode), L4);
      B.check(Y, 0, 1, std::string("pad.") + C.Mode);
    }
    // Ranks 1, 3 and 5, in the rank's own layouts.
    for (auto [Shape, Pads] :
         {std::make_pair(std::vector<int64_t>{7}, std::vector<int64_t>{3, 5}),
          std::make_pair(std::vector<int64_t>{2, 4, 6},
                         std::vector<int64_t>{0, 1, 2, 1, 3, 4}),
          std::make_pair(std::vector<int64_t>{1, 2, 3, 4, 5},
                         std::vector<int64_t>{0, 1, 2, 1, 3, 0, 1, 1, 2, 2})}) {
      const unsigned R = unsigned(Shape.size());
      for (const char *M : {"edge", "reflect"}) {
        GraphBuilder B(Seed += 2);
        Layout LR = R == 1 ? Layout() : layoutFor(CL, R);
        Value *X = B.input(Shape, LR);
        std::vector<int64_t> P = Pads;
        if (std::string(M) == "reflect")
          for (size_t I = 0; I < P.size(); ++I)
            P[I] = std::min(P[I], Shape[I % R] - 1);
        Value *Y = B.op(OpId::Pad, {X, Ints(B, P)}, Mode(M), LR);
        B.check(Y, 0, 1, std::string("pad.") + M);
      }
    }
    // Element sizes 8 and 1 (i64 and i8 between casts).
    for (ElementType Elt : {ElementType::I64, ElementType::I8}) {
      GraphBuilder B(Seed += 2);
      auto To = [](ElementType E) {
        return std::vector<std::pair<std::string, Attribute>>{
            {"to", Attribute::getInt(toOnnxDataType(E))}};
      };
      Value *X = B.op(
          OpId::Mul, {B.input({1, 3, 4, 5}, L4), B.constant({}, {40})}, {}, L4);
      Value *I = B.op(OpId::Cast, {X}, To(Elt), L4);
      Value *P = B.op(OpId::Pad, {I, Ints(B, {0, 1, 2, 3, 0, 2, 1, 2})},
                      Mode(Elt == ElementType::I8 ? "edge" : "reflect"), L4);
      B.check(B.op(OpId::Cast, {P}, To(ElementType::F32), L4), 0, 1, "pad.");
    }
    {
      // Reflecting further than the dim holds is declined: the reference
      // kernel runs it.
      GraphBuilder B(Seed += 2);
      Value *X = B.input({1, 2, 3, 4}, L4);
      Value *Y = B.op(OpId::Pad, {X, Ints(B, {0, 0, 3, 0, 0, 0, 0, 5})},
                      Mode("reflect"), L4);
      B.check(Y, 1);
    }
  }
}

TEST(CPUKernelTest, TileAndGatherWithConstantOperands) {
  auto Ints = [](GraphBuilder &B, std::vector<int64_t> Shape,
                 std::vector<int64_t> V) {
    TensorDataRef D = TensorData::fromInt64(ElementType::I64, Shape, V);
    Node *C = B.G.createNode(OpId::Constant, {}, {B.G.makeUniqueName("i")},
                             {D->getType()});
    C->setAttr("value", Attribute::getTensor(D));
    return C->getResult(0);
  };
  for (bool CL : {false, true}) {
    Layout L4 = layoutFor(CL, 4);
    {
      GraphBuilder B(70 + CL);
      Value *X = B.input({2, 3, 4, 5}, L4);
      Value *Y = B.op(OpId::Tile, {X, Ints(B, {4}, {1, 2, 3, 1})});
      B.setLayout(Y, layoutFor(!CL, 4));
      B.check(Y, 0, 1, "tile");
    }
    // Gather along the channels and along a spatial axis, with a scalar, a
    // list and a 2-D index tensor (negative indices count from the end).
    for (auto [Axis, IShape, Idx] :
         {std::make_tuple(1, std::vector<int64_t>{}, std::vector<int64_t>{2}),
          std::make_tuple(1, std::vector<int64_t>{3},
                          std::vector<int64_t>{5, 0, -1}),
          std::make_tuple(3, std::vector<int64_t>{2, 2},
                          std::vector<int64_t>{1, 4, -2, 0})}) {
      GraphBuilder B(80 + CL + Axis);
      Value *X = B.input({2, 6, 4, 5}, L4);
      Value *Y = B.op(OpId::Gather, {X, Ints(B, IShape, Idx)},
                      {{"axis", Attribute::getInt(Axis)}});
      B.check(Y, 0, 2, "gather");
    }
  }
}

/// A TopK node of \p X with a constant K along \p Axis.
Node *addTopK(GraphBuilder &B, Value *X, int64_t K, int64_t Axis, int Largest) {
  TensorDataRef KD = TensorData::fromInt64(ElementType::I64, {1}, {K});
  Node *C = B.G.createNode(OpId::Constant, {}, {"k"}, {KD->getType()});
  C->setAttr("value", Attribute::getTensor(KD));
  Value *V = B.op(OpId::TopK, {X, C->getResult(0)},
                  {{"axis", Attribute::getInt(Axis)},
                   {"largest", Attribute::getInt(Largest)}},
                  2);
  return V->getDefiningNode();
}

TEST(CPUKernelTest, TopKAlongAnyAxisWithTies) {
  // Largest and smallest, K from 0 to the whole axis, along channels and a
  // spatial axis of both layouts; values on a coarse grid so that ties
  // occur (the lower index goes first), both results checked.
  for (bool CL : {false, true})
    for (int64_t Axis : {1, 3})
      for (int64_t K : {0, 1, 3, 6})
        for (int Largest : {0, 1})
          for (unsigned Result : {0u, 1u}) {
            GraphBuilder B(110 + CL + 2 * K + Largest);
            Value *X = B.input({2, 6, 3, 6}, layoutFor(CL, 4));
            runtime::Tensor &XT = B.Inputs[X->getName()];
            for (int64_t E = 0; E < XT.getNumElements(); ++E)
              XT.setDouble(E, std::round(XT.getDouble(E) * 2));
            Node *T = addTopK(B, X, K, Axis, Largest);
            B.G.addOutput(T->getResult(1 - Result));
            B.check(T->getResult(Result), 0, 2, "topk.");
          }
}

TEST(CPUKernelTest, TopKPutsNanAboveEveryNumber) {
  // NaN counts as the largest value, equal NaNs by position (a total
  // order; PyTorch's topk has it so): the positions match the reference's.
  for (bool CL : {false, true})
    for (int Largest : {0, 1}) {
      GraphBuilder B(130 + CL + 2 * Largest);
      Value *X = B.input({1, 6, 2, 5}, layoutFor(CL, 4));
      runtime::Tensor &XT = B.Inputs[X->getName()];
      for (int64_t E = 0; E < XT.getNumElements(); ++E)
        XT.setDouble(E,
                     E % 4 == 1 ? std::nan("") : std::round(XT.getDouble(E)));
      Node *T = addTopK(B, X, 3, 1, Largest);
      B.G.addOutput(T->getResult(0));
      B.check(T->getResult(1), 0, 2, "topk.");
    }
}

TEST(CPUKernelTest, ArithmeticOfIntegersAndDoubles) {
  // Add/Sub/Mul/Div of i64, i32 and f64 with broadcasting, as the reference
  // computes them: wrapping, truncating division, x / 0 = 0, MIN / -1
  // (f64 divisors are not 0: the comparison does not take infinities).
  const int64_t AV[] = {7, -7, 0, INT64_MIN, 5, INT64_MAX, -1, 9};
  const int64_t BV[] = {2, -1, 0, 3};
  for (ElementType Elt : {ElementType::I64, ElementType::I32, ElementType::F64})
    for (OpId Op : {OpId::Add, OpId::Sub, OpId::Mul, OpId::Div}) {
      GraphBuilder B(7);
      Value *X = B.G.addInput("a", TensorType::get(Elt, {2, 4}));
      Value *Y = B.G.addInput("b", TensorType::get(Elt, {4}));
      runtime::Tensor XT(Elt, {2, 4}), YT(Elt, {4});
      for (int64_t K = 0; K < 8; ++K)
        Elt == ElementType::F64 ? XT.setDouble(K, double(AV[K] % 1000) / 3)
                                : XT.setInt(K, AV[K]);
      for (int64_t K = 0; K < 4; ++K)
        Elt == ElementType::F64 ? YT.setDouble(K, double(BV[K]) * 0.5 + 0.25)
                                : YT.setInt(K, BV[K]);
      B.Inputs["a"] = std::move(XT);
      B.Inputs["b"] = std::move(YT);
      B.check(B.op(Op, {X, Y}), 0, 2, "arith.");
    }
}

TEST(CPUKernelTest, MaxAndMinOfIntegers) {
  // i64 (extremes), i32 and u64 (values past INT64_MAX compare as
  // unsigned), broadcast.
  const int64_t AV[] = {7, -7, 0, INT64_MIN, 5, INT64_MAX, -1, 9};
  const int64_t BV[] = {2, -1, 0, 3};
  for (ElementType Elt : {ElementType::I64, ElementType::I32, ElementType::U64})
    for (OpId Op : {OpId::Max, OpId::Min}) {
      GraphBuilder B(10);
      Value *X = B.G.addInput("a", TensorType::get(Elt, {2, 4}));
      Value *Y = B.G.addInput("b", TensorType::get(Elt, {4}));
      runtime::Tensor XT(Elt, {2, 4}), YT(Elt, {4});
      for (int64_t K = 0; K < 8; ++K)
        XT.setInt(K, AV[K]);
      for (int64_t K = 0; K < 4; ++K)
        YT.setInt(K, BV[K]);
      B.Inputs["a"] = std::move(XT);
      B.Inputs["b"] = std::move(YT);
      B.check(B.op(Op, {X, Y}), 0, 2,
              Op == OpId::Max ? "arith.max" : "arith.min");
    }
}

TEST(CPUKernelTest, RemaindersAndShifts) {
  // Mod in both forms (signs of both operands, x mod 0, MIN mod -1) of
  // i64 and i32, fmod of f32 and f64, shifts of u8 and u64 past the width.
  const int64_t AV[] = {7, -7, 0, INT64_MIN, 5, INT64_MAX, -1, 9};
  const int64_t BV[] = {3, -1, 0, -4};
  for (ElementType Elt :
       {ElementType::I64, ElementType::I32, ElementType::F32, ElementType::F64})
    for (int64_t Fmod : {0, 1}) {
      const bool Float = Elt == ElementType::F32 || Elt == ElementType::F64;
      if (Float && Fmod == 0)
        continue;
      GraphBuilder B(8);
      Value *X = B.G.addInput("a", TensorType::get(Elt, {2, 4}));
      Value *Y = B.G.addInput("b", TensorType::get(Elt, {4}));
      runtime::Tensor XT(Elt, {2, 4}), YT(Elt, {4});
      for (int64_t K = 0; K < 8; ++K)
        Float ? XT.setDouble(K, double(AV[K] % 1000) / 3) : XT.setInt(K, AV[K]);
      for (int64_t K = 0; K < 4; ++K)
        Float ? YT.setDouble(K, double(BV[K]) * 0.5 + 0.25)
              : YT.setInt(K, BV[K]);
      B.Inputs["a"] = std::move(XT);
      B.Inputs["b"] = std::move(YT);
      B.check(B.op(OpId::Mod, {X, Y}, {{"fmod", Attribute::getInt(Fmod)}}), 0,
              2, "arith.mod");
    }
  for (ElementType Elt : {ElementType::U8, ElementType::U64})
    for (const char *Dir : {"LEFT", "RIGHT"}) {
      GraphBuilder B(9);
      Value *X = B.G.addInput("a", TensorType::get(Elt, {2, 3}));
      Value *Y = B.G.addInput("b", TensorType::get(Elt, {3}));
      runtime::Tensor XT(Elt, {2, 3}), YT(Elt, {3});
      const int64_t Vals[] = {1, 255, 16, 200, 3, 128};
      const int64_t Shifts[] = {3, 9, 70};
      for (int64_t K = 0; K < 6; ++K)
        XT.setInt(K, Vals[K]);
      for (int64_t K = 0; K < 3; ++K)
        YT.setInt(K, Shifts[K]);
      B.Inputs["a"] = std::move(XT);
      B.Inputs["b"] = std::move(YT);
      B.check(B.op(OpId::BitShift, {X, Y},
                   {{"direction", Attribute::getString(Dir)}}),
              0, 2, "arith.bitshift");
    }
}

TEST(CPUKernelTest, CumSumAlongEachAxis) {
  // Every axis of a 3-D tensor (rows, strided), both flags, f32, f64, i32
  // and i64 (an i64 sum wrapping).
  for (ElementType Elt :
       {ElementType::F32, ElementType::F64, ElementType::I32, ElementType::I64})
    for (int64_t Axis : {0, 1, -1})
      for (int Flags = 0; Flags < 4; ++Flags) {
        GraphBuilder B(12);
        Value *X = B.G.addInput("x", TensorType::get(Elt, {2, 5, 7}));
        runtime::Tensor XT(Elt, {2, 5, 7});
        for (int64_t K = 0; K < XT.getNumElements(); ++K)
          if (Elt == ElementType::F32 || Elt == ElementType::F64)
            XT.setDouble(K, std::sin(0.7 * double(K)));
          else
            XT.setInt(K, K == 3 ? INT64_MAX : (K * 37) % 23 - 11);
        B.Inputs["x"] = std::move(XT);
        Value *Y = B.op(OpId::CumSum, {X, B.int64Constant({}, {Axis})},
                        {{"exclusive", Attribute::getInt(Flags & 1)},
                         {"reverse", Attribute::getInt(Flags >> 1)}});
        B.check(Y, 0, 2, "scan.cumsum");
      }
}

TEST(CPUKernelTest, GatherNDAndScatterND) {
  // Index tuples computed at run time (a graph input), negative ones,
  // repeated ones (ScatterND: the last wins, or every reduction combines
  // them in order), batch_dims; f32 and i64 data.
  for (ElementType Elt : {ElementType::F32, ElementType::I64}) {
    auto Data = [&](GraphBuilder &B) {
      Value *X = B.G.addInput("x", TensorType::get(Elt, {3, 4, 5}));
      runtime::Tensor XT(Elt, {3, 4, 5});
      for (int64_t K = 0; K < XT.getNumElements(); ++K)
        XT.setDouble(K, double((K * 7) % 13) - 6);
      B.Inputs["x"] = std::move(XT);
      return X;
    };
    auto Indices = [&](GraphBuilder &B, std::vector<int64_t> Shape,
                       std::vector<int64_t> Vals) {
      Value *I = B.G.addInput("i", TensorType::get(ElementType::I64, Shape));
      runtime::Tensor IT(ElementType::I64, Shape);
      for (size_t K = 0; K < Vals.size(); ++K)
        IT.setInt(int64_t(K), Vals[K]);
      B.Inputs["i"] = std::move(IT);
      return I;
    };
    {
      GraphBuilder B(20);
      Value *X = Data(B);
      Value *I = Indices(B, {2, 2, 2}, {0, 1, 2, -1, 1, 3, -3, 0});
      B.check(B.op(OpId::GatherND, {X, I}), 0, 2, "gather_nd");
    }
    {
      GraphBuilder B(21);
      Value *X = Data(B);
      Value *I = Indices(B, {3, 2, 1}, {1, 3, 0, 0, 2, -2});
      B.check(
          B.op(OpId::GatherND, {X, I}, {{"batch_dims", Attribute::getInt(1)}}),
          0, 2, "gather_nd");
    }
    for (const char *Reduction : {"none", "add", "mul", "max", "min"}) {
      GraphBuilder B(22);
      Value *X = Data(B);
      Value *I = Indices(B, {3, 2}, {1, 2, 0, -1, 1, 2});
      Value *U = B.G.addInput("u", TensorType::get(Elt, {3, 5}));
      runtime::Tensor UT(Elt, {3, 5});
      for (int64_t K = 0; K < UT.getNumElements(); ++K)
        UT.setDouble(K, double(K % 4) - 1.5 * (Elt == ElementType::F32));
      B.Inputs["u"] = std::move(UT);
      B.check(B.op(OpId::ScatterND, {X, I, U},
                   {{"reduction", Attribute::getString(Reduction)}}),
              0, 2, "scatter_nd");
    }
  }
  // An index out of range stops the run with the node named.
  GraphBuilder B(23);
  Value *X = B.input({2, 3});
  Value *I = B.G.addInput("i", TensorType::get(ElementType::I64, {1, 1}));
  runtime::Tensor IT(ElementType::I64, {1, 1});
  IT.setInt(0, 2);
  B.Inputs["i"] = std::move(IT);
  Value *Y = B.op(OpId::GatherND, {X, I});
  B.G.addOutput(Y);
  auto Prog = cpu::compileForCPU(B.G, cpu::CPUOptions());
  ASSERT_TRUE(bool(Prog)) << llvm::toString(Prog.takeError());
  auto Got = (*Prog)->run(B.Inputs);
  ASSERT_FALSE(bool(Got));
  EXPECT_NE(llvm::toString(Got.takeError())
                .find("index 2 is out of range for an axis of size 2"),
            std::string::npos);
}

TEST(CPUKernelTest, QuantizeDequantizeRoundTrips) {
  // A QDQ pair per tensor (u8, a zero point) and per channel (i8) of a
  // channels-last tensor, and i32 dequantized (a bias's form).
  for (bool PerChannel : {false, true}) {
    GraphBuilder B(30 + PerChannel);
    Value *X = B.input({1, 4, 3, 5}, cputest::layoutFor(true, 4));
    auto &T = B.Inputs[X->getName()];
    float *P = reinterpret_cast<float *>(T.getMutableBytes().data());
    for (int64_t I = 0; I < T.getNumElements(); ++I)
      P[I] = P[I] * 40.0f + (I % 3 == 0 ? 0.25f : 0.0f);
    // Halfway cases of the per-tensor scale 0.25: to even.
    P[0] = 0.125f;
    P[1] = 0.375f;
    P[2] = -0.625f;
    const ElementType QE = PerChannel ? ElementType::I8 : ElementType::U8;
    Value *Scale = PerChannel ? B.constant({4}, {0.1f, 0.2f, 0.5f, 0.05f})
                              : B.constant({}, {0.25f});
    TensorDataRef ZD = PerChannel
                           ? TensorData::fromInt64(QE, {4}, {0, -3, 5, 1})
                           : TensorData::fromInt64(QE, {}, {128});
    Node *ZN = B.G.createNode(OpId::Constant, {}, {"zp"}, {ZD->getType()});
    ZN->setAttr("value", Attribute::getTensor(ZD));
    Value *Zero = ZN->getResult(0);
    Value *Q = B.op(OpId::QuantizeLinear, {X, Scale, Zero}, {},
                    cputest::layoutFor(true, 4));
    Value *D = B.op(OpId::DequantizeLinear, {Q, Scale, Zero}, {},
                    cputest::layoutFor(true, 4));
    B.G.addOutput(Q);
    B.check(D, 0, 2, PerChannel ? "dequantize.i8.per_axis" : "dequantize.u8");
  }
  GraphBuilder B(32);
  Value *X = B.G.addInput("x", TensorType::get(ElementType::I32, {3, 7}));
  runtime::Tensor XT(ElementType::I32, {3, 7});
  for (int64_t K = 0; K < 21; ++K)
    XT.setInt(K, (K * 7919) % 2001 - 1000);
  B.Inputs["x"] = std::move(XT);
  B.check(B.op(OpId::DequantizeLinear, {X, B.constant({}, {0.003f})}), 0, 2,
          "dequantize.i32");
}

// The 8-bit rows are SIMD (a vector width per target, then a scalar tail):
// runs of 77 elements per channel (channels-first), halfway cases, values
// past the range and NaN, against the reference on every target.
TEST(CPUKernelTest, QuantizeRowsOnEverySimdTarget) {
  forEachSimdTarget([] {
    for (bool PerChannel : {false, true}) {
      GraphBuilder B(40 + PerChannel);
      Value *X = B.input({1, 3, 7, 11});
      auto &T = B.Inputs[X->getName()];
      float *P = reinterpret_cast<float *>(T.getMutableBytes().data());
      for (int64_t I = 0; I < T.getNumElements(); ++I)
        P[I] = P[I] * 60.0f;
      const float Specials[] = {0.125f, 0.375f, -0.625f, 1e9f, -1e9f,
                                NAN,    2.5f,   -3.5f,   1e-8f};
      for (size_t I = 0; I < std::size(Specials); ++I) {
        P[I * 13] = Specials[I];
        P[T.getNumElements() - 1 - int64_t(I)] = Specials[I];
      }
      const ElementType QE = PerChannel ? ElementType::I8 : ElementType::U8;
      Value *Scale = PerChannel ? B.constant({3}, {0.25f, 0.5f, 0.125f})
                                : B.constant({}, {0.25f});
      TensorDataRef ZD = PerChannel ? TensorData::fromInt64(QE, {3}, {0, -3, 5})
                                    : TensorData::fromInt64(QE, {}, {128});
      Node *ZN = B.G.createNode(OpId::Constant, {}, {"zp"}, {ZD->getType()});
      ZN->setAttr("value", Attribute::getTensor(ZD));
      Value *Q = B.op(OpId::QuantizeLinear, {X, Scale, ZN->getResult(0)});
      Value *D = B.op(OpId::DequantizeLinear, {Q, Scale, ZN->getResult(0)});
      B.G.addOutput(Q);
      B.check(D, 0, 0, PerChannel ? "dequantize.i8.per_axis" : "dequantize.u8");
    }
  });
}

/// A constant of integer type \p Elt.
Value *intConstant(GraphBuilder &B, ElementType Elt,
                   llvm::ArrayRef<int64_t> Shape,
                   llvm::ArrayRef<int64_t> Values) {
  TensorDataRef D = TensorData::fromInt64(Elt, Shape, Values);
  Node *N = B.G.createNode(OpId::Constant, {}, {B.G.makeUniqueName("c")},
                           {D->getType()});
  N->setAttr("value", Attribute::getTensor(D));
  return N->getResult(0);
}

// QLinearConv on the integer GEMM against the reference, bit for bit: u8
// and i8 activations and weights (u8 weights with per-channel zero points
// not 0, which need the rows' sums), per-channel and per-tensor scales,
// k not a multiple of 4, output channels past a vector, groups, strides,
// dilation, padding, both layouts, on every SIMD target (VNNI, the 16-bit
// pairs, the 32-bit bytes); depthwise ones channels-last on the direct
// kernel (channels past 4 vectors, taps in the padding).
TEST(CPUKernelTest, QLinearConvOnEverySimdTarget) {
  struct Geom {
    int64_t Cin, Cout, Group, H, W, Kernel, Stride, Dilation, Pad;
  } Geoms[] = {{13, 37, 1, 7, 9, 3, 1, 1, 1},
               {8, 6, 2, 9, 8, 3, 2, 2, 2},
               {32, 80, 1, 5, 6, 1, 1, 1, 0},
               {19, 19, 19, 6, 7, 3, 1, 1, 1},
               {70, 70, 70, 9, 8, 5, 2, 1, 2}};
  forEachSimdTarget([&] {
    unsigned Seed = 0;
    for (const Geom &G : Geoms)
      for (ElementType XE : {ElementType::U8, ElementType::I8})
        for (ElementType WE : {ElementType::I8, ElementType::U8})
          for (bool CL : {true, false}) {
            GraphBuilder B(300 + Seed++);
            SCOPED_TRACE(testing::Message()
                         << "cin " << G.Cin << " cout " << G.Cout << " x "
                         << getElementTypeName(XE).str() << " w "
                         << getElementTypeName(WE).str() << " cl " << CL);
            const bool U = XE == ElementType::U8;
            Value *X = B.input({2, G.Cin, G.H, G.W}, layoutFor(CL, 4));
            Value *XS = B.constant({}, {0.01f});
            Value *XZ = intConstant(B, XE, {}, {U ? 120 : -7});
            Value *Q =
                B.op(OpId::QuantizeLinear, {X, XS, XZ}, {}, layoutFor(CL, 4));
            const int64_t CG = G.Cin / G.Group;
            std::vector<int64_t> W(size_t(G.Cout * CG * G.Kernel * G.Kernel));
            std::uniform_int_distribution<int> Byte(
                WE == ElementType::U8 ? 0 : -128,
                WE == ElementType::U8 ? 255 : 127);
            for (int64_t &V : W)
              V = Byte(B.Rng);
            Value *WC = intConstant(B, WE, {G.Cout, CG, G.Kernel, G.Kernel}, W);
            const bool PerChannel = G.Cout != 6;
            std::vector<float> WScale;
            std::vector<int64_t> WZero, Bias;
            for (int64_t M = 0; M < (PerChannel ? G.Cout : 1); ++M) {
              WScale.push_back(0.002f + 0.0001f * float(M));
              WZero.push_back(WE == ElementType::U8 ? 100 + M % 50 : 0);
            }
            for (int64_t M = 0; M < G.Cout; ++M)
              Bias.push_back((M * 7919) % 2001 - 1000);
            Value *WS = PerChannel ? B.constant({G.Cout}, WScale)
                                   : B.constant({}, WScale);
            Value *WZ = PerChannel ? intConstant(B, WE, {G.Cout}, WZero)
                                   : intConstant(B, WE, {}, WZero);
            Value *YS = B.constant({}, {0.05f});
            Value *YZ = intConstant(B, XE, {}, {U ? 10 : 3});
            Value *BC = intConstant(B, ElementType::I32, {G.Cout}, Bias);
            const int64_t P = G.Pad;
            Value *Y = B.op(
                OpId::QLinearConv, {Q, XS, XZ, WC, WS, WZ, YS, YZ, BC},
                {{"kernel_shape", Attribute::getInts({G.Kernel, G.Kernel})},
                 {"strides", Attribute::getInts({G.Stride, G.Stride})},
                 {"dilations", Attribute::getInts({G.Dilation, G.Dilation})},
                 {"pads", Attribute::getInts({P, P, P, P})},
                 {"group", Attribute::getInt(G.Group)}});
            B.setLayout(Y, layoutFor(CL, 4));
            const bool Depthwise = G.Group == G.Cin && CL;
            B.check(Y, 0, 1,
                    std::string(Depthwise ? "qconv.depthwise." : "qconv.") +
                        (CL ? "nhwc" : "nchw"));
          }
  });
}

// fuse-quantized-lookup's tables against the float chains they replace:
// the reference interpreter's outputs of the chain, bit for bit those of
// the CPU program of the rewritten graph (u8 and i8, both layouts, on
// every SIMD target: VBMI's vpermi2b and the byte loop).
// A zero y_scale (multipliers not finite) is the reference's to define:
// the CPU backend declines, the node runs its reference kernel.
TEST(CPUKernelTest, QLinearConvOfZeroScaleFallsBack) {
  GraphBuilder B(77);
  Value *X = B.input({1, 4, 5, 5}, layoutFor(true, 4));
  Value *XS = B.constant({}, {0.01f});
  Value *XZ = intConstant(B, ElementType::U8, {}, {128});
  Value *Q = B.op(OpId::QuantizeLinear, {X, XS, XZ}, {}, layoutFor(true, 4));
  std::vector<int64_t> W(4 * 4 * 3 * 3, 3);
  Value *Y =
      B.op(OpId::QLinearConv,
           {Q, XS, XZ, intConstant(B, ElementType::I8, {4, 4, 3, 3}, W),
            B.constant({}, {0.02f}), intConstant(B, ElementType::I8, {}, {0}),
            B.constant({}, {0.0f}), intConstant(B, ElementType::U8, {}, {7})},
           {{"kernel_shape", Attribute::getInts({3, 3})}});
  B.setLayout(Y, layoutFor(true, 4));
  B.check(Y, 1, 1, "reference.QLinearConv");
}

// ConvInteger on the integer kernels against the reference: u8 and i8
// activations and weights, x's zero point a constant or a graph input (as
// DynamicQuantizeLinear computes it), one or per-channel weight zero
// points, groups, strides, padding, both layouts, depthwise, on every SIMD
// target; alone (the i32 sums, bit for bit) or with the rescale fused
// after it: Cast to f32, Mul by a run-time scalar or per-channel constant
// scale, Add of a per-channel constant, a residual, Relu.
TEST(CPUKernelTest, ConvIntegerOnEverySimdTarget) {
  struct Geom {
    int64_t Cin, Cout, Group, H, W, Kernel, Stride, Pad;
  } Geoms[] = {{13, 37, 1, 7, 9, 3, 1, 1},
               {8, 6, 2, 9, 8, 3, 2, 2},
               {32, 80, 1, 5, 6, 1, 1, 0},
               {19, 19, 19, 6, 7, 3, 1, 1},
               {70, 70, 70, 9, 8, 5, 2, 2}};
  forEachSimdTarget([&] {
    unsigned Seed = 0;
    for (const Geom &G : Geoms)
      for (ElementType XE : {ElementType::U8, ElementType::I8})
        for (ElementType WE : {ElementType::I8, ElementType::U8})
          for (bool CL : {true, false}) {
            const unsigned Tail = Seed % 3;
            const bool RunTimeZero = Seed % 2 == 0;
            GraphBuilder B(500 + Seed++);
            SCOPED_TRACE(testing::Message()
                         << "cin " << G.Cin << " cout " << G.Cout << " x "
                         << getElementTypeName(XE).str() << " w "
                         << getElementTypeName(WE).str() << " cl " << CL
                         << " tail " << Tail << " run-time zp " << RunTimeZero);
            const bool U = XE == ElementType::U8;
            const Layout L4 = layoutFor(CL, 4);
            Value *X = B.input({2, G.Cin, G.H, G.W}, L4);
            Value *XS = B.constant({}, {0.01f});
            const int64_t XZero = U ? 120 : -7;
            Value *XZC = intConstant(B, XE, {}, {XZero});
            Value *Q = B.op(OpId::QuantizeLinear, {X, XS, XZC}, {}, L4);
            Value *XZ = XZC;
            if (RunTimeZero) {
              XZ = B.G.addInput("xz", TensorType::get(XE, {}));
              runtime::Tensor T(XE, {});
              T.setInt(0, XZero);
              B.Inputs["xz"] = std::move(T);
            }
            const int64_t CG = G.Cin / G.Group;
            std::vector<int64_t> W(size_t(G.Cout * CG * G.Kernel * G.Kernel));
            std::uniform_int_distribution<int> Byte(
                WE == ElementType::U8 ? 0 : -128,
                WE == ElementType::U8 ? 255 : 127);
            for (int64_t &V : W)
              V = Byte(B.Rng);
            Value *WC = intConstant(B, WE, {G.Cout, CG, G.Kernel, G.Kernel}, W);
            const bool PerChannel = G.Cout != 6;
            std::vector<int64_t> WZero;
            for (int64_t M = 0; M < (PerChannel ? G.Cout : 1); ++M)
              WZero.push_back(WE == ElementType::U8 ? 100 + M % 50 : M % 3);
            Value *WZ = PerChannel ? intConstant(B, WE, {G.Cout}, WZero)
                                   : intConstant(B, WE, {}, WZero);
            const int64_t P = G.Pad;
            Value *Y = B.op(
                OpId::ConvInteger, {Q, WC, XZ, WZ},
                {{"kernel_shape", Attribute::getInts({G.Kernel, G.Kernel})},
                 {"strides", Attribute::getInts({G.Stride, G.Stride})},
                 {"pads", Attribute::getInts({P, P, P, P})},
                 {"group", Attribute::getInt(G.Group)}});
            B.setLayout(Y, L4);
            const bool Depthwise = G.Group == G.Cin && CL;
            std::string Kernel =
                std::string(Depthwise ? "qconv.depthwise." : "qconv.") +
                (CL ? "nhwc" : "nchw");
            if (Tail != 0) {
              Value *F = B.op(
                  OpId::Cast, {Y},
                  {{"to", Attribute::getInt(toOnnxDataType(ElementType::F32))}},
                  L4);
              Value *S;
              if (Tail == 1) {
                S = B.G.addInput("s", TensorType::get(F32, {}));
                runtime::Tensor T(F32, {});
                T.setDouble(0, 0.0037);
                B.Inputs["s"] = std::move(T);
              } else {
                std::vector<float> Scales;
                for (int64_t M = 0; M < G.Cout; ++M)
                  Scales.push_back(0.001f + 0.0002f * float(M % 7));
                S = B.constant({1, G.Cout, 1, 1}, Scales);
              }
              Value *R = B.op(OpId::Mul, {F, S}, {}, L4);
              R = B.op(OpId::Add, {R, B.constant({1, G.Cout, 1, 1})}, {}, L4);
              if (Tail == 2) {
                const TensorType &RT = R->getType();
                Value *Res = B.input(RT.getStaticShape(), L4);
                R = B.op(OpId::Add, {Res, R}, {}, L4);
              }
              Y = B.op(OpId::Relu, {R}, {}, L4);
              Kernel += Tail == 1 ? "+rescale+relu" : "+rescale+add+relu";
            }
            B.check(Y, 0, 1, Kernel);
          }
  });
}

// qbinary (an Add or Mul of two quantized tensors) on the quantization row
// kernels against the reference's chain, bit for bit: u8 and i8 operands
// and results, mixed, both layouts, a length that is no multiple of the
// chunk or the vector, on every SIMD target.
TEST(CPUKernelTest, QuantizedBinaryOnEverySimdTarget) {
  forEachSimdTarget([] {
    unsigned Seed = 0;
    for (const char *Op : {"Add", "Mul"})
      for (ElementType AE : {ElementType::U8, ElementType::I8})
        for (ElementType YE : {ElementType::U8, ElementType::I8})
          for (bool CL : {true, false}) {
            GraphBuilder B(700 + Seed++);
            SCOPED_TRACE(testing::Message()
                         << Op << " a " << getElementTypeName(AE).str() << " y "
                         << getElementTypeName(YE).str() << " cl " << CL);
            const ElementType BE =
                AE == ElementType::U8 ? ElementType::I8 : ElementType::U8;
            const Layout L4 = layoutFor(CL, 4);
            auto Quantized = [&](ElementType E, float Scale, int64_t Zero) {
              Value *X = B.input({1, 13, 17, 19}, L4);
              Value *S = B.constant({}, {Scale});
              Value *Z = intConstant(B, E, {}, {Zero});
              return std::array<Value *, 3>{
                  B.op(OpId::QuantizeLinear, {X, S, Z}, {}, L4), S, Z};
            };
            auto QA = Quantized(AE, 0.011f, AE == ElementType::U8 ? 130 : -3);
            auto QB = Quantized(BE, 0.007f, BE == ElementType::U8 ? 120 : 5);
            Value *Y = B.op(
                OpId::QBinary,
                {QA[0], QA[1], QA[2], QB[0], QB[1], QB[2],
                 B.constant({}, {std::string(Op) == "Mul" ? 0.005f : 0.013f}),
                 intConstant(B, YE, {}, {YE == ElementType::U8 ? 128 : 0})},
                {{"op", Attribute::getString(Op)}}, L4);
            B.check(Y, 0, 1,
                    std::string("qbinary.") +
                        (std::string(Op) == "Mul" ? "mul." : "add.") +
                        getElementTypeName(YE).str());
          }
  });
}

TEST(CPUKernelTest, QuantizedLookupOnEverySimdTarget) {
  forEachSimdTarget([] {
    for (ElementType QE : {ElementType::U8, ElementType::I8})
      for (OpId Op : {OpId::Sigmoid, OpId::HardSwish, OpId::Add})
        for (bool CL : {true, false}) {
          GraphBuilder B(500 + unsigned(Op) + CL);
          Value *X = B.input({1, 19, 9, 11}, layoutFor(CL, 4));
          const bool U = QE == ElementType::U8;
          Value *S = B.constant({}, {0.03f});
          Value *Z = intConstant(B, QE, {}, {U ? 128 : 5});
          Value *Q =
              B.op(OpId::QuantizeLinear, {X, S, Z}, {}, layoutFor(CL, 4));
          Value *D =
              B.op(OpId::DequantizeLinear, {Q, S, Z}, {}, layoutFor(CL, 4));
          Value *F = Op == OpId::Add
                         ? B.op(OpId::Add, {D, B.constant({1}, {0.7f})}, {},
                                layoutFor(CL, 4))
                         : B.op(Op, {D}, {}, layoutFor(CL, 4));
          Value *S2 = B.constant({}, {0.01f});
          Value *Z2 = intConstant(B, QE, {}, {U ? 20 : -100});
          Value *Y =
              B.op(OpId::QuantizeLinear, {F, S2, Z2}, {}, layoutFor(CL, 4));
          B.G.addOutput(Y);
          // The lookup takes Y's name (Y itself goes).
          const std::string YName = Y->getName();
          auto Want = runtime::runReference(B.G, B.Inputs);
          ASSERT_TRUE(bool(Want)) << llvm::toString(Want.takeError());
          for (auto &P : {createFuseQuantizedLookupPass(),
                          createDeadCodeEliminationPass()})
            ASSERT_FALSE(bool(P->run(B.G)));
          cpu::CPUOptions Opts;
          auto Prog = cpu::compileForCPU(B.G, Opts);
          ASSERT_TRUE(bool(Prog)) << llvm::toString(Prog.takeError());
          std::string Kernels;
          for (const cpu::StepInfo &St : (*Prog)->getSteps())
            Kernels += " " + St.Kernel;
          EXPECT_NE(Kernels.find("lookup"), std::string::npos) << Kernels;
          EXPECT_EQ(Kernels.find("dequantize"), std::string::npos) << Kernels;
          auto Got = (*Prog)->run(B.Inputs);
          ASSERT_TRUE(bool(Got)) << llvm::toString(Got.takeError());
          const runtime::Tensor &W = Want->at(YName);
          const runtime::Tensor &G = Got->at(YName);
          ASSERT_EQ(G.getLayout(), W.getLayout());
          EXPECT_TRUE(G.getBytes() == W.getBytes());
        }
  });
}

TEST(CPUKernelTest, XorAndFloatClassification) {
  GraphBuilder B(10);
  Value *P = B.G.addInput("p", TensorType::get(ElementType::Bool, {2, 3}));
  Value *Q = B.G.addInput("q", TensorType::get(ElementType::Bool, {3}));
  runtime::Tensor PT(ElementType::Bool, {2, 3}), QT(ElementType::Bool, {3});
  for (int64_t K = 0; K < 6; ++K)
    PT.setInt(K, K % 2);
  for (int64_t K = 0; K < 3; ++K)
    QT.setInt(K, K == 1);
  B.Inputs["p"] = std::move(PT);
  B.Inputs["q"] = std::move(QT);
  B.check(B.op(OpId::Xor, {P, Q}), 0, 1, "compare.xor");
  const float Vals[] = {1.0f, NAN, INFINITY, -INFINITY, 0.0f, -2.0f, NAN};
  for (int Mode = 0; Mode < 4; ++Mode) {
    GraphBuilder C(11 + Mode);
    Value *X = C.input({7});
    auto &T = C.Inputs[X->getName()];
    std::memcpy(T.getMutableBytes().data(), Vals, sizeof(Vals));
    std::vector<std::pair<std::string, Attribute>> Attrs;
    if (Mode == 2)
      Attrs.push_back({"detect_negative", Attribute::getInt(0)});
    if (Mode == 3)
      Attrs.push_back({"detect_positive", Attribute::getInt(0)});
    C.check(C.op(Mode == 0 ? OpId::IsNaN : OpId::IsInf, {X}, Attrs), 0, 1,
            Mode == 0 ? "logic.isnan" : "logic.isinf");
  }
}

TEST(CPUKernelTest, GatherByIndicesComputedAtRunTime) {
  // An embedding lookup: the indices are a graph input (i64 and i32, a 2-D
  // index tensor, negative indices), gathered along the rows and along a
  // channels-last tensor's channels.
  for (ElementType IElt : {ElementType::I64, ElementType::I32}) {
    for (bool CL : {false, true}) {
      GraphBuilder B(90 + CL);
      Value *X = B.input({2, 6, 3, 4}, layoutFor(CL, 4));
      Value *I = B.G.addInput("idx", TensorType::get(IElt, {2, 3}));
      runtime::Tensor IT(IElt, {2, 3});
      const int64_t Values[] = {5, 0, -1, 2, 2, -6};
      for (int64_t K = 0; K < 6; ++K)
        IT.setInt(K, Values[K]);
      B.Inputs["idx"] = std::move(IT);
      Value *Y = B.op(OpId::Gather, {X, I}, {{"axis", Attribute::getInt(1)}});
      B.check(Y, 0, 2, "gather.dynamic");
    }
  }
}

/// A graph input \p Name of \p Elt and \p Shape holding \p Values
/// (repeated).
Value *intInput(GraphBuilder &B, const std::string &Name, ElementType Elt,
                llvm::ArrayRef<int64_t> Shape, llvm::ArrayRef<int64_t> Values) {
  Value *V = B.G.addInput(Name, TensorType::get(Elt, Shape));
  runtime::Tensor T(Elt, Shape);
  for (int64_t K = 0; K < T.getNumElements(); ++K)
    T.setInt(K, Values[size_t(K) % Values.size()]);
  B.Inputs[Name] = std::move(T);
  return V;
}

TEST(CPUKernelTest, GatherAndScatterElementsByRunTimeIndices) {
  // Indices (i64 and i32, negative ones, repeats) of a smaller shape than
  // the data along every axis; ScatterElements with each reduction, of f32
  // and i64 data (repeated indices: the last update wins, or they combine
  // in row-major order of the indices, as in the reference).
  const int64_t Index[] = {1, -1, 0, 2, -3, 1, 0, 2, 2};
  for (ElementType IElt : {ElementType::I64, ElementType::I32})
    for (int64_t Axis : {0, 1, -1}) {
      std::vector<int64_t> IShape = {2, 3, 2};
      {
        GraphBuilder B(140 + unsigned(Axis));
        Value *X = B.input({3, 4, 3});
        Value *I = intInput(B, "idx", IElt, IShape, Index);
        Value *Y = B.op(OpId::GatherElements, {X, I},
                        {{"axis", Attribute::getInt(Axis)}});
        B.check(Y, 0, 1, "gather_elements");
      }
      for (const char *R : {"none", "add", "mul", "max", "min"})
        for (ElementType DElt : {ElementType::F32, ElementType::I64}) {
          GraphBuilder B(150 + unsigned(Axis));
          Value *X, *U;
          if (DElt == ElementType::F32) {
            X = B.input({3, 4, 3});
            U = B.input(IShape);
          } else {
            X = intInput(B, "x", DElt, {3, 4, 3}, {5, -2, 7, 0, 3});
            U = intInput(B, "u", DElt, IShape, {-4, 9, 2, 6});
          }
          Value *I = intInput(B, "idx", IElt, IShape, Index);
          Value *Y = B.op(OpId::ScatterElements, {X, I, U},
                          {{"axis", Attribute::getInt(Axis)},
                           {"reduction", Attribute::getString(R)}});
          B.check(Y, 0, 1, "scatter_elements");
        }
    }
}

TEST(CPUKernelTest, TopKOfIntegersAndDoubles) {
  // Sorting sequence lengths (i64), with ties, both results checked.
  for (ElementType Elt : {ElementType::I64, ElementType::I32, ElementType::F64})
    for (int Largest : {0, 1})
      for (unsigned Result : {0u, 1u}) {
        GraphBuilder B(170 + Largest);
        Value *X = intInput(B, "x", Elt, {3, 5}, {4, -1, 9, 4, 0, 7, 7, 2});
        Node *T = addTopK(B, X, 3, 1, Largest);
        B.G.addOutput(T->getResult(1 - Result));
        B.check(T->getResult(Result), 0, 2, "topk.");
      }
}

TEST(CPUKernelTest, STFTAsOneGemmOverEveryFrame) {
  // Real signals ([B, L, 1] and [B, L]), with a window or only a frame
  // length, one- and two-sided, steps shorter and longer than a frame, an
  // odd frame length; a complex signal runs on the reference kernel.
  struct Case {
    std::vector<int64_t> Signal;
    int64_t Step, Length;
    bool Window;
    int OneSided;
  };
  const Case Cases[] = {{{2, 64, 1}, 8, 16, true, 1},
                        {{1, 50}, 12, 10, false, 1},
                        {{3, 41, 1}, 5, 9, true, 0},
                        {{2, 30}, 30, 30, true, 1}};
  auto IntConstant = [](GraphBuilder &B, int64_t V) {
    TensorDataRef D = TensorData::fromInt64(ElementType::I64, {}, {V});
    Node *C = B.G.createNode(OpId::Constant, {}, {B.G.makeUniqueName("i")},
                             {D->getType()});
    C->setAttr("value", Attribute::getTensor(D));
    return C->getResult(0);
  };
  for (const Case &C : Cases)
    for (int Threads : {1, 2}) {
      GraphBuilder B(unsigned(180 + C.Length));
      Value *X = B.input(C.Signal);
      std::vector<Value *> Ops = {X, IntConstant(B, C.Step)};
      Ops.push_back(C.Window ? B.constant({C.Length}) : nullptr);
      if (!C.Window)
        Ops.push_back(IntConstant(B, C.Length));
      Value *Y =
          B.op(OpId::STFT, Ops, {{"onesided", Attribute::getInt(C.OneSided)}});
      B.check(Y, 0, Threads, "stft.gemm");
    }
  GraphBuilder B(190);
  Value *X = B.input({1, 20, 2});
  Value *Y = B.op(OpId::STFT, {X, IntConstant(B, 4), B.constant({8})});
  B.check(Y, /*MaxFallbacks=*/1, 1, "reference.STFT");
}

TEST(CPUKernelTest, ResizeEveryLayout) {
  struct Case {
    const char *Mode, *Coord, *Nearest;
    std::vector<float> Scales;
  } Cases[] = {
      {"nearest", "asymmetric", "floor", {1, 1, 2, 2}},
      {"nearest", "half_pixel", "round_prefer_ceil", {1, 1, 1.5f, 0.5f}},
      {"linear", "half_pixel", "floor", {1, 1, 2, 2}},
      {"linear", "align_corners", "floor", {1, 1, 1.75f, 2.5f}},
      {"cubic", "pytorch_half_pixel", "floor", {1, 1, 2, 3}},
  };
  // Channels-last runs the channel-vector kernel; channels-first (and the
  // mixed case) samples each channel as an image of its own.
  for (const Case &C : Cases)
    for (auto [InCL, OutCL] : {std::pair(true, true), std::pair(false, false),
                               std::pair(true, false)}) {
      GraphBuilder B(90);
      Value *X = B.input({2, 19, 5, 6}, layoutFor(InCL, 4));
      Node *Empty = B.G.createNode(OpId::Constant, {}, {"roi"},
                                   {TensorType::get(ElementType::F32, {0})});
      Empty->setAttr("value",
                     Attribute::getTensor(TensorData::fromFloat({0}, {})));
      Value *Y = B.op(
          OpId::Resize, {X, Empty->getResult(0), B.constant({4}, C.Scales)},
          {{"mode", Attribute::getString(C.Mode)},
           {"coordinate_transformation_mode", Attribute::getString(C.Coord)},
           {"nearest_mode", Attribute::getString(C.Nearest)}});
      B.setLayout(Y, layoutFor(OutCL, 4));
      B.check(Y, 0, 2, InCL && OutCL ? "resize.nhwc" : "resize.planes");
    }
}

// A quantized model's u8 activations: nearest samples are copies of
// their source's bytes, in every layout; linear needs the float kernel
// (the reference runs it).
TEST(CPUKernelTest, ResizeOf8BitCopiesNearestSamples) {
  for (const char *Mode : {"nearest", "linear"})
    for (auto [InCL, OutCL] : {std::pair(true, true), std::pair(false, false),
                               std::pair(true, false)}) {
      GraphBuilder B(91);
      Value *X = B.input({1, 19, 5, 6}, layoutFor(InCL, 4));
      TensorDataRef ZD = TensorData::fromInt64(ElementType::U8, {}, {100});
      Node *ZN = B.G.createNode(OpId::Constant, {}, {"zp"}, {ZD->getType()});
      ZN->setAttr("value", Attribute::getTensor(ZD));
      Value *Q = B.op(OpId::QuantizeLinear,
                      {X, B.constant({}, {0.05f}), ZN->getResult(0)}, {},
                      layoutFor(InCL, 4));
      Node *Empty = B.G.createNode(OpId::Constant, {}, {"roi"},
                                   {TensorType::get(ElementType::F32, {0})});
      Empty->setAttr("value",
                     Attribute::getTensor(TensorData::fromFloat({0}, {})));
      Value *Y =
          B.op(OpId::Resize,
               {Q, Empty->getResult(0), B.constant({4}, {1, 1, 2, 1.5f})},
               {{"mode", Attribute::getString(Mode)}});
      B.setLayout(Y, layoutFor(OutCL, 4));
      if (llvm::StringRef(Mode) == "nearest")
        B.check(Y, 0, 0, InCL && OutCL ? "resize.nhwc.u8" : "resize.planes.u8");
      else
        B.check(Y, 1, 0, "reference.Resize");
    }
}

// MaxPool of a quantized model's u8 and i8 activations (YOLOv8's SPPF
// pools them), in both layouts, against the reference.
TEST(CPUKernelTest, MaxPoolOf8BitActivations) {
  for (ElementType QE : {ElementType::U8, ElementType::I8})
    for (bool CL : {true, false})
      for (bool Strided : {false, true}) {
        GraphBuilder B(92);
        Value *X = B.input({1, 19, 9, 11}, layoutFor(CL, 4));
        TensorDataRef ZD = TensorData::fromInt64(
            QE, {}, {QE == ElementType::U8 ? 100 : -3});
        Node *ZN = B.G.createNode(OpId::Constant, {}, {"zp"}, {ZD->getType()});
        ZN->setAttr("value", Attribute::getTensor(ZD));
        Value *Q = B.op(OpId::QuantizeLinear,
                        {X, B.constant({}, {0.05f}), ZN->getResult(0)}, {},
                        layoutFor(CL, 4));
        std::vector<std::pair<std::string, Attribute>> A =
            Strided
                ? std::vector<std::pair<std::string, Attribute>>{
                      {"kernel_shape", Attribute::getInts({3, 3})},
                        {"strides", Attribute::getInts({2, 2})},
                        {"dilations", Attribute::getInts({1, 2})},
                        {"pads", Attribute::getInts({1, 2, 1, 2})}}
                : std::vector<std::pair<std::string, Attribute>>{
                      {"kernel_shape", Attribute::getInts({5, 5})},
                        {"pads", Attribute::getInts({2, 2, 2, 2})}};
        Value *Y = B.op(OpId::MaxPool, {Q}, A);
        B.setLayout(Y, layoutFor(CL, 4));
        B.check(Y, 0, 0,
                std::string("pool.max.") + (CL ? "nhwc." : "nchw.") +
                    getElementTypeName(QE).str());
      }
}

TEST(CPUKernelTest, SoftmaxAndReductionsAlongAnyAxis) {
  for (bool CL : {false, true})
    for (int64_t Axis : {1, 3, -2})
      for (OpId Op : {OpId::Softmax, OpId::LogSoftmax}) {
        GraphBuilder B{unsigned(Axis + 7)};
        Value *X = B.input({2, 21, 5, 19}, layoutFor(CL, 4));
        Value *Y = B.op(Op, {X}, {{"axis", Attribute::getInt(Axis)}});
        B.setLayout(Y, layoutFor(CL, 4));
        B.check(Y, 0, 1, "softmax");
      }
  struct Case {
    OpId Op;
    std::vector<int64_t> Axes;
    int Keep;
  } Cases[] = {{OpId::ReduceMean, {2, 3}, 1},  {OpId::ReduceMax, {1}, 1},
               {OpId::ReduceSum, {-1}, 0},     {OpId::ReduceMean, {1}, 0},
               {OpId::ReduceSum, {}, 1},       {OpId::ReduceMin, {2, 3}, 1},
               {OpId::ReduceMin, {1}, 0},      {OpId::ReduceProd, {1}, 1},
               {OpId::ReduceProd, {2, 3}, 0},  {OpId::ReduceSumSquare, {1}, 1},
               {OpId::ReduceSumSquare, {}, 0}, {OpId::ReduceL2, {2, 3}, 1},
               {OpId::ReduceL2, {1}, 0}};
  for (bool CL : {false, true})
    for (const Case &C : Cases) {
      GraphBuilder B(100 + CL);
      // Products of values around 1 stay far from 0 and infinity.
      Value *X = B.input({2, 17, 6, 5}, layoutFor(CL, 4),
                         C.Op == OpId::ReduceProd ? 1.2f : 0.0f);
      std::vector<Value *> Ops{X};
      if (!C.Axes.empty()) {
        TensorDataRef D = TensorData::fromInt64(
            ElementType::I64, {int64_t(C.Axes.size())}, C.Axes);
        Node *A = B.G.createNode(OpId::Constant, {}, {"axes"}, {D->getType()});
        A->setAttr("value", Attribute::getTensor(D));
        Ops.push_back(A->getResult(0));
      }
      Value *Y = B.op(C.Op, Ops, {{"keepdims", Attribute::getInt(C.Keep)}});
      if (Y->getType().getRank() == 4)
        B.setLayout(Y, layoutFor(CL, 4));
      // A rank-3 row-major result of a channels-last input holds its kept
      // dims in another physical order: that one falls back.
      bool Reordered = CL && !C.Keep && C.Axes == std::vector<int64_t>{-1};
      B.check(Y, Reordered ? 1 : 0, 1, Reordered ? "" : "reduce.");
    }
}

TEST(CPUKernelTest, ArgMaxArgMinAlongAnyAxis) {
  for (bool CL : {false, true})
    for (int64_t Axis : {1, -1, 2, 0})
      for (int Keep : {1, 0})
        for (int Last : {0, 1})
          for (OpId Op : {OpId::ArgMax, OpId::ArgMin}) {
            GraphBuilder B(unsigned(200 + Axis * 4 + Keep * 2 + Last));
            // Rows of 37 (longer than a vector, with a tail) and values
            // on a coarse grid, so that ties decide between first and last.
            Value *X = B.input({2, 37, 6, 5}, layoutFor(CL, 4));
            runtime::Tensor &T = B.Inputs[X->getName()];
            float *Data = reinterpret_cast<float *>(T.getMutableBytes().data());
            for (int64_t I = 0; I < T.getNumElements(); ++I)
              Data[I] = std::round(Data[I] * 2.0f);
            Value *Y = B.op(Op, {X},
                            {{"axis", Attribute::getInt(Axis)},
                             {"keepdims", Attribute::getInt(Keep)},
                             {"select_last_index", Attribute::getInt(Last)}});
            if (Keep)
              B.setLayout(Y, layoutFor(CL, 4));
            // A rank-3 result may hold the kept dims in another physical
            // order than a channels-last input: that one falls back.
            if (CL && !Keep)
              B.check(Y, 1);
            else
              B.check(Y, 0, 1, Op == OpId::ArgMax ? "argmax." : "argmin.");
          }
}

TEST(CPUKernelTest, ReshapeViewsShareBuffers) {
  GraphBuilder B(8);
  Value *X = B.input({2, 6, 4});
  Value *F = B.op(OpId::Flatten, {X}, {{"axis", Attribute::getInt(1)}});
  Value *Y = B.op(OpId::Gemm, {F, B.constant({24, 5})});
  B.check(Y);
}

TEST(CPUKernelTest, ReshapeCopies) {
  // Reshapes that are no bitcast in their layouts: one strided pass where
  // the two shapes refine each other (a channel shuffle with its views
  // laid out as layout assignment derives them), else staged through a
  // row-major copy (6 x 4 -> 4 x 6).
  struct Case {
    std::vector<int64_t> XShape;
    std::vector<unsigned> XLayout;
    std::vector<int64_t> YShape;
    std::vector<unsigned> YLayout;
    const char *Kernel;
  } Cases[] = {
      {{1, 2, 3, 4, 5},
       {0, 3, 4, 2, 1},
       {1, 6, 4, 5},
       {0, 2, 3, 1},
       "reshape.copy"},
      {{2, 6, 4, 5}, {0, 2, 3, 1}, {2, 3, 2, 20}, {0, 1, 2, 3}, "reshape.copy"},
      {{2, 6, 4, 5},
       {0, 2, 3, 1},
       {2, 4, 6, 5},
       {0, 2, 3, 1},
       "reshape.copy.staged"},
      {{3, 1, 8}, {2, 0, 1}, {3, 2, 2, 2}, {3, 1, 0, 2}, "reshape.copy"},
  };
  unsigned Seed = 70;
  for (const Case &C : Cases) {
    GraphBuilder B(Seed++);
    Value *X = B.input(C.XShape, Layout(C.XLayout));
    TensorDataRef D = TensorData::fromInt64(
        ElementType::I64, {int64_t(C.YShape.size())}, C.YShape);
    Node *S = B.G.createNode(OpId::Constant, {}, {"shape"}, {D->getType()});
    S->setAttr("value", Attribute::getTensor(D));
    Value *Y = B.op(OpId::Reshape, {X, S->getResult(0)});
    B.setLayout(Y, Layout(C.YLayout));
    B.check(Y, 0, 1, C.Kernel);
    auto Prog = cpu::compileForCPU(B.G, {});
    ASSERT_TRUE(bool(Prog)) << llvm::toString(Prog.takeError());
    ASSERT_EQ((*Prog)->getSteps().size(), 1u);
    EXPECT_EQ((*Prog)->getSteps()[0].Kernel, C.Kernel);
  }
}

TEST(CPUKernelTest, UnsupportedOpsFallBackToReference) {
  GraphBuilder B(9);
  Value *X = B.input({2, 3, 4});
  Value *Y = B.op(OpId::Softmax, {X}, {{"axis", Attribute::getInt(1)}});
  B.check(Y, /*MaxFallbacks=*/1);
}

//===----------------------------------------------------------------------===//
// Memory planner
//===----------------------------------------------------------------------===//

} // namespace

TEST(CPUKernelTest, GridSampleEveryModeAndPadding) {
  // Grid points inside, on the borders (x, y = -1 or 1) and up to 60% of
  // the image outside it; X channels-first and channels-last; 2 threads.
  for (const char *Mode : {"linear", "nearest", "cubic"})
    for (const char *Padding : {"zeros", "border", "reflection"})
      for (int Align = 0; Align < 2; ++Align)
        for (bool ChannelsLast : {false, true}) {
          GraphBuilder B(unsigned(Align * 3 + ChannelsLast));
          Value *X =
              B.input({2, 3, 5, 6},
                      ChannelsLast ? Layout::getChannelsLast(4) : Layout());
          Value *G = B.G.addInput(
              "grid", TensorType::get(ElementType::F32, {2, 4, 7, 2}));
          runtime::Tensor GT(ElementType::F32, {2, 4, 7, 2});
          for (int64_t K = 0; K < GT.getNumElements(); ++K)
            GT.setDouble(K, K % 9 == 0   ? (K % 2 ? 1.0 : -1.0)
                            : K % 9 == 1 ? 0.0
                                         : 1.6 * std::sin(1.3 * double(K)));
          B.Inputs["grid"] = std::move(GT);
          Value *Y = B.op(OpId::GridSample, {X, G},
                          {{"mode", Attribute::getString(Mode)},
                           {"padding_mode", Attribute::getString(Padding)},
                           {"align_corners", Attribute::getInt(Align)}});
          SCOPED_TRACE(std::string(Mode) + " " + Padding + " align " +
                       std::to_string(Align) +
                       (ChannelsLast ? " nhwc" : " nchw"));
          B.check(Y, 0, 2, "grid_sample");
        }
}
