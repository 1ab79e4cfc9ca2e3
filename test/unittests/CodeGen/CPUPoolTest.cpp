//===- CPUPoolTest.cpp - MaxPool/AveragePool/LRN vs reference -------------===//
//
// The CPU backend's windowed pooling and LRN kernels against the reference
// interpreter on single-op graphs. The pooling sweep crosses 1D/2D/3D
// geometries (strides, dilations, outputs narrower and wider than a
// vector) with every padding form (none, explicit asymmetric pads,
// ceil_mode, SAME_UPPER, SAME_LOWER, VALID, count_include_pad), both ops,
// both layouts and batch 1 and 2; LRN crosses shapes (rank 3-5, fewer
// channels than the window), window sizes and constants with both layouts.
// Every case asserts that the SIMD kernel ran (no fallback to the
// reference) and that 1 and 3 threads give the same bits.
//
//===----------------------------------------------------------------------===//

#include "CPUTestGraph.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace strider;

namespace {

using cputest::layoutFor;
using OpGraph = cputest::TestGraph;

//===----------------------------------------------------------------------===//
// Pooling sweep
//===----------------------------------------------------------------------===//

struct PoolGeom {
  const char *Name;
  int64_t Channels;
  std::vector<int64_t> Spatial, Kernel, Strides, Dilations;
};

const PoolGeom Geometries[] = {
    {"k3s2", 5, {9, 10}, {3, 3}, {2, 2}, {1, 1}},
    {"k2s2", 19, {7, 8}, {2, 2}, {2, 2}, {1, 1}},
    {"k3x2s1x2d2x1", 6, {11, 6}, {3, 2}, {1, 2}, {2, 1}},
    // Rows wider than a vector: the channels-first kernel's vector path,
    // loaded (stride 1) and gathered (stride 2).
    {"wide_k3s1", 3, {5, 40}, {3, 3}, {1, 1}, {1, 1}},
    {"wide_k3s2", 17, {4, 75}, {3, 3}, {1, 2}, {1, 1}},
    {"wide_k5d2", 2, {3, 50}, {2, 5}, {1, 1}, {1, 2}},
    {"1d_k4s3", 7, {20}, {4}, {3}, {1}},
    {"1d_k3d2", 4, {37}, {3}, {1}, {2}},
    {"3d_k233", 5, {5, 6, 7}, {2, 3, 3}, {2, 1, 2}, {1, 1, 1}},
};

/// How a case pads its windows.
enum class Padding { None, Pads, Ceil, SameUpper, SameLower, Valid, CountPad };

const char *paddingName(Padding P) {
  static const char *const Names[] = {
      "none", "pads", "ceil", "sameupper", "samelower", "valid", "countpad"};
  return Names[int(P)];
}

struct PoolParam {
  const PoolGeom *Geom;
  OpId Op;
  Padding Pad;
  bool ChannelsLast;
  int64_t Batch;
};

std::string poolParamName(const testing::TestParamInfo<PoolParam> &I) {
  const PoolParam &P = I.param;
  return std::string(P.Geom->Name) + "_" +
         (P.Op == OpId::MaxPool ? "max" : "avg") + "_" + paddingName(P.Pad) +
         (P.ChannelsLast ? "_nhwc" : "_nchw") + "_n" + std::to_string(P.Batch);
}

class PoolKernelTest : public testing::TestWithParam<PoolParam> {};

TEST_P(PoolKernelTest, MatchesReference) {
  const PoolParam &P = GetParam();
  const PoolGeom &G = *P.Geom;
  OpGraph B{unsigned(G.Channels * 31 + int(P.Pad) * 7 + P.Batch)};
  std::vector<int64_t> XShape{P.Batch, G.Channels};
  XShape.insert(XShape.end(), G.Spatial.begin(), G.Spatial.end());
  const unsigned Rank = unsigned(XShape.size());
  Value *X = B.input(XShape, layoutFor(P.ChannelsLast, Rank));
  std::vector<std::pair<std::string, Attribute>> Attrs{
      {"kernel_shape", Attribute::getInts(G.Kernel)},
      {"strides", Attribute::getInts(G.Strides)},
      {"dilations", Attribute::getInts(G.Dilations)}};
  // Asymmetric pads: the larger one at the beginning, except with
  // ceil_mode (where the window may also run past the end pad).
  std::vector<int64_t> Pads(2 * G.Kernel.size());
  for (unsigned I = 0; I < G.Kernel.size(); ++I) {
    const int64_t Reach = (G.Kernel[I] - 1) * G.Dilations[I];
    Pads[I] = P.Pad == Padding::Ceil ? Reach / 2 : (Reach + 1) / 2;
    Pads[I + G.Kernel.size()] =
        P.Pad == Padding::Ceil ? (Reach + 1) / 2 : Reach / 2;
  }
  static const char *const AutoPads[] = {
      nullptr, nullptr, nullptr, "SAME_UPPER", "SAME_LOWER", "VALID", nullptr};
  if (const char *A = AutoPads[int(P.Pad)])
    Attrs.push_back({"auto_pad", Attribute::getString(A)});
  if (P.Pad == Padding::Pads || P.Pad == Padding::Ceil ||
      P.Pad == Padding::CountPad)
    Attrs.push_back({"pads", Attribute::getInts(Pads)});
  if (P.Pad == Padding::Ceil || P.Pad == Padding::CountPad)
    Attrs.push_back({"ceil_mode", Attribute::getInt(1)});
  if (P.Pad == Padding::CountPad)
    Attrs.push_back({"count_include_pad", Attribute::getInt(1)});
  Value *Y = B.op(P.Op, {X}, Attrs, layoutFor(P.ChannelsLast, Rank));
  B.checkThreads(
      Y,
      std::string(P.Op == OpId::MaxPool ? "pool.max" : "pool.average") +
          (P.ChannelsLast ? ".nhwc" : ".nchw"),
      {1, 3});
}

std::vector<PoolParam> poolParams() {
  std::vector<PoolParam> Ps;
  for (const PoolGeom &G : Geometries)
    for (OpId Op : {OpId::MaxPool, OpId::AveragePool})
      for (Padding Pad :
           {Padding::None, Padding::Pads, Padding::Ceil, Padding::SameUpper,
            Padding::SameLower, Padding::Valid, Padding::CountPad}) {
        // count_include_pad is an AveragePool attribute.
        if (Op == OpId::MaxPool && Pad == Padding::CountPad)
          continue;
        for (bool CL : {false, true})
          for (int64_t Batch : {1, 2})
            Ps.push_back({&G, Op, Pad, CL, Batch});
      }
  return Ps;
}

INSTANTIATE_TEST_SUITE_P(Sweep, PoolKernelTest, testing::ValuesIn(poolParams()),
                         poolParamName);

TEST(PoolLoweringTest, MaxPoolIndicesFallBack) {
  // The Indices result has no kernel: the reference runs.
  OpGraph B(3);
  Value *X = B.input({1, 4, 6, 6});
  Value *Y =
      B.op(OpId::MaxPool, {X}, {{"kernel_shape", Attribute::getInts({2, 2})}},
           /*Results=*/2);
  B.G.addOutput(Y->getDefiningNode()->getResult(1));
  B.check(Y, /*MaxFallbacks=*/1);
}

//===----------------------------------------------------------------------===//
// LRN sweep
//===----------------------------------------------------------------------===//

struct LRNParam {
  std::vector<int64_t> Shape;
  int64_t Size;
  float Alpha, Beta, Bias;
  int ConstIndex;
  bool ChannelsLast;
};

std::string lrnParamName(const testing::TestParamInfo<LRNParam> &I) {
  const LRNParam &P = I.param;
  std::string Name;
  for (int64_t D : P.Shape)
    Name += (Name.empty() ? "" : "x") + std::to_string(D);
  return Name + "_size" + std::to_string(P.Size) + "_consts" +
         std::to_string(P.ConstIndex) + (P.ChannelsLast ? "_nhwc" : "_nchw");
}

class LRNKernelTest : public testing::TestWithParam<LRNParam> {};

TEST_P(LRNKernelTest, MatchesReference) {
  const LRNParam &P = GetParam();
  OpGraph B{unsigned(P.Shape[1] * 13 + P.Size)};
  const unsigned Rank = unsigned(P.Shape.size());
  Value *X = B.input(P.Shape, layoutFor(P.ChannelsLast, Rank));
  Value *Y = B.op(OpId::LRN, {X},
                  {{"size", Attribute::getInt(P.Size)},
                   {"alpha", Attribute::getFloat(P.Alpha)},
                   {"beta", Attribute::getFloat(P.Beta)},
                   {"bias", Attribute::getFloat(P.Bias)}},
                  layoutFor(P.ChannelsLast, Rank));
  // Channels-last rows are contiguous channels; channels-first strided.
  B.checkThreads(Y, "lrn.", {1, 3});
}

std::vector<LRNParam> lrnParams() {
  const std::vector<std::vector<int64_t>> Shapes = {
      {1, 5, 4, 6}, {2, 16, 3, 3},   {1, 37, 7, 5}, {2, 3, 1, 9},
      {1, 10, 20},  {1, 6, 2, 3, 4}, {1, 96, 6, 7}};
  struct Consts {
    float Alpha, Beta, Bias;
  } Constants[] = {
      {1e-4f, 0.75f, 1.0f}, {0.5f, 0.75f, 1.0f}, {2.0f, 0.5f, 2.0f}};
  std::vector<LRNParam> Ps;
  for (const auto &S : Shapes)
    for (int64_t Size : {1, 2, 3, 5})
      for (int I = 0; I < 3; ++I)
        for (bool CL : {false, true})
          Ps.push_back({S, Size, Constants[I].Alpha, Constants[I].Beta,
                        Constants[I].Bias, I, CL});
  return Ps;
}

INSTANTIATE_TEST_SUITE_P(Sweep, LRNKernelTest, testing::ValuesIn(lrnParams()),
                         lrnParamName);

} // namespace
