//===- TuningTest.cpp - Tuning tables and measured costs ------------------===//
//
// The tuning table's text form (print/parse round trip, errors), conv keys
// taken from nodes, the cost model preferring measurements, and the
// calibration of a target: re-estimating a measured conv with the
// calibrated figures gives back its measured time.
//
//===----------------------------------------------------------------------===//

#include "strider/Layout/Tuning.h"
#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/Layout/CostModel.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

using namespace strider;
using namespace strider::layout;

namespace {

/// A graph with one Conv: input 1 x Cin x H x W, 3x3 kernel, pads 1.
struct ConvGraph {
  Graph G;
  Node *Conv = nullptr;

  ConvGraph(int64_t Cin, int64_t Cout, int64_t H, int64_t W, int64_t Group = 1,
            bool SymbolicBatch = false) {
    std::vector<Dim> XS = {
        SymbolicBatch ? Dim::getSymbol("N") : Dim::getStatic(1),
        Dim::getStatic(Cin), Dim::getStatic(H), Dim::getStatic(W)};
    Value *X = G.addInput("x", TensorType(ElementType::F32, XS));
    Value *Wt = G.addInput(
        "w", TensorType::get(ElementType::F32, {Cout, Cin / Group, 3, 3}));
    Conv = G.createNode(OpId::Conv, {X, Wt}, {"y"}, {TensorType()});
    Conv->setAttr("pads", Attribute::getInts({1, 1, 1, 1}));
    Conv->setAttr("group", Attribute::getInt(Group));
    llvm::SmallVector<TensorType, 1> Types;
    llvm::Error E = inferResultTypes(*Conv, Types);
    EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
    Conv->getResult(0)->setType(Types[0]);
    G.addOutput(Conv->getResult(0));
  }
};

TEST(TuningTest, KeyFromNode) {
  ConvGraph C(16, 32, 10, 12);
  DimBindings Dims;
  ConvConfig Config;
  ASSERT_TRUE(ConvConfig::fromNode(*C.Conv, Dims, Config));
  EXPECT_EQ(Config.getKey(), "x=1x16x10x12 w=32x16x3x3 y=1x32x10x12 s=1x1 "
                             "p=1x1x1x1 d=1x1 g=1 b=0 r=0");
  EXPECT_DOUBLE_EQ(Config.getMacs(), 32.0 * 10 * 12 * 16 * 9);

  // A conv whose only reader adds a tensor of its shape is timed with
  // that residual fused: another key.
  {
    ConvGraph R(16, 32, 10, 12);
    Value *Y = R.Conv->getResult(0);
    Value *Skip = R.G.addInput("skip", Y->getType());
    Node *Add = R.G.createNode(OpId::Add, {Skip, Y}, {"sum"}, {Y->getType()});
    ConvConfig RC;
    // Still a graph output: no residual.
    ASSERT_TRUE(ConvConfig::fromNode(*R.Conv, Dims, RC));
    EXPECT_FALSE(RC.HasResidual);
    R.G.setOutput(0, Add->getResult(0));
    ASSERT_TRUE(ConvConfig::fromNode(*R.Conv, Dims, RC));
    EXPECT_TRUE(RC.HasResidual);
    EXPECT_NE(RC.getKey(), Config.getKey());
  }

  // A symbolic batch needs a binding; bound, it is part of the key.
  ConvGraph S(16, 32, 10, 12, 1, /*SymbolicBatch=*/true);
  EXPECT_FALSE(ConvConfig::fromNode(*S.Conv, Dims, Config));
  Dims.bind("N", 4);
  ASSERT_TRUE(ConvConfig::fromNode(*S.Conv, Dims, Config));
  EXPECT_EQ(Config.X[0], 4);
}

TEST(TuningTest, PrintParseRoundTrip) {
  TuningTable T;
  T.Target = "cpu-avx512";
  T.Simd = "AVX3";
  T.Threads = 2;
  ConvGraph C(16, 32, 10, 12);
  DimBindings Dims;
  ConvConfig Config;
  ASSERT_TRUE(ConvConfig::fromNode(*C.Conv, Dims, Config));
  ConvTiming Timing;
  Timing.Ns[ReadFirstWriteFirst] = 1234.5;
  Timing.Ns[ReadLastWriteLast] = 999.0;
  Timing.Ns[ReadLastWriteFirst] = 1100.0;
  T.setConv(Config, Timing);
  T.setRelayout("1x16x10x12", 77.7);

  std::string Text;
  llvm::raw_string_ostream OS(Text);
  T.print(OS);
  auto Back = TuningTable::parse(OS.str(), "t.tune");
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_EQ(Back->Target, "cpu-avx512");
  EXPECT_EQ(Back->Simd, "AVX3");
  EXPECT_EQ(Back->Threads, 2);
  const ConvTiming *Got = Back->lookupConv(Config.getKey());
  ASSERT_NE(Got, nullptr);
  EXPECT_DOUBLE_EQ(Got->Ns[ReadFirstWriteFirst], 1234.5);
  EXPECT_DOUBLE_EQ(Got->Ns[ReadLastWriteLast], 999.0);
  EXPECT_LT(Got->Ns[ReadFirstWriteLast], 0); // `-`: no such kernel.
  EXPECT_DOUBLE_EQ(Back->lookupRelayout("1x16x10x12"), 77.7);
  EXPECT_LT(Back->lookupRelayout("1x16x10x13"), 0);

  // Printing the parsed table gives the same text.
  std::string Again;
  llvm::raw_string_ostream OS2(Again);
  Back->print(OS2);
  EXPECT_EQ(OS.str(), OS2.str());
}

TEST(TuningTest, GpuTableRoundTrip) {
  // A cuda-* table: device and precision instead of simd and threads, and
  // the algorithm each conv key ran, keyed by text with spaces.
  TuningTable T;
  T.Target = "cuda-sm90";
  T.Device = "NVIDIA H100 80GB HBM3 (sm_90)";
  T.Precision = "fp16";
  T.setRelayout("1x16x10x12", 3.5);
  const std::string Key = "x=1x64x56x56 w=64x64x3x3 s=1x1 p=1x1x1x1 d=1x1 "
                          "g=1 xl=nhwc yl=nhwc f16";
  TunedAlgorithm A;
  A.Name = "IMPLICIT_PRECOMP_GEMM";
  A.Ns = 9120.5;
  A.WorkspaceBytes = 4096;
  T.setAlgorithm(Key, A);
  T.setAlgorithm("transposed x=1x8x4x4 w=8x4x2x2 y=1x4x8x8 s=2x2 p=0x0x0x0 "
                 "d=1x1 g=1 xl=nchw yl=nchw f32",
                 {"ALGO_1", 55, 0});

  std::string Text;
  llvm::raw_string_ostream OS(Text);
  T.print(OS);
  EXPECT_TRUE(llvm::StringRef(OS.str()).startswith(
      "strider-tuning 1\ntarget cuda-sm90\ndevice NVIDIA H100 80GB HBM3 "
      "(sm_90)\nprecision fp16\nmargin 0.05\nrelayout 1x16x10x12 "))
      << OS.str();
  EXPECT_EQ(OS.str().find("simd"), std::string::npos);
  auto Back = TuningTable::parse(OS.str(), "gpu.tune");
  ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
  EXPECT_EQ(Back->Device, T.Device);
  EXPECT_EQ(Back->Precision, "fp16");
  ASSERT_EQ(Back->getAlgorithms().size(), 2u);
  auto It = Back->getAlgorithms().find(Key);
  ASSERT_NE(It, Back->getAlgorithms().end());
  EXPECT_EQ(It->second.Name, "IMPLICIT_PRECOMP_GEMM");
  EXPECT_DOUBLE_EQ(It->second.Ns, 9120.5);
  EXPECT_EQ(It->second.WorkspaceBytes, 4096u);
  std::string Again;
  llvm::raw_string_ostream OS2(Again);
  Back->print(OS2);
  EXPECT_EQ(OS.str(), OS2.str());

  // Half-precision relayouts move 2-byte elements: the bandwidth fitted
  // from 1x16x10x12 in 3.5 ns is 1920 * 2 / 3.5 bytes per ns.
  TargetDescription Fitted = Back->calibrateTarget(getDefaultTarget());
  EXPECT_NEAR(Fitted.RelayoutGBs, 1920.0 * 2 / 3.5, 1e-6);
  Back->Precision = "fp32";
  EXPECT_NEAR(Back->calibrateTarget(getDefaultTarget()).RelayoutGBs,
              1920.0 * 4 / 3.5, 1e-6);
}

TEST(TuningTest, ParseErrorsAreLocated) {
  auto Msg = [](llvm::StringRef Text) {
    auto T = TuningTable::parse(Text, "t.tune");
    return T ? std::string() : llvm::toString(T.takeError());
  };
  EXPECT_EQ(Msg(""), "t.tune: empty file, not a tuning table");
  EXPECT_EQ(Msg("strider-tuning 1\n"), "t.tune: no 'target' line");
  EXPECT_EQ(Msg("strider-tuning 1\ntarget cpu-avx512\nthreads zero\n"),
            "t.tune:3:9: threads must be a number >= 1, not 'zero'");
  EXPECT_EQ(Msg("strider-tuning 1\ntarget cpu-avx512\nrelayout 1x2 ns=-3\n"),
            "t.tune:3:14: 'ns=-3': expected a time in nanoseconds (> 0, at "
            "most 1e10) or '-'");
  // Times past 10 s per call, duplicate entries, an auto_pad that no conv
  // key has, ranks past 5.
  EXPECT_EQ(Msg("strider-tuning 1\ntarget cpu-avx512\nrelayout 1x2 ns=2e10\n"),
            "t.tune:3:14: 'ns=2e10': expected a time in nanoseconds (> 0, at "
            "most 1e10) or '-'");
  EXPECT_EQ(Msg("strider-tuning 1\ntarget cpu-avx512\nrelayout 1x2 ns=5\n"
                "relayout 1x2 ns=6\n"),
            "t.tune:4:1: a second entry for relayouts of this shape");
  const char *Conv = "conv x=1x2x3 w=2x2x1 y=1x2x3 s=1 p=0x0 d=1 g=1 b=1 "
                     "nchw=1 nhwc=1 nchw>nhwc=1 nhwc>nchw=1\n";
  EXPECT_EQ(
      Msg(std::string("strider-tuning 1\ntarget cpu-avx512\n") + Conv + Conv),
      "t.tune:4:1: a second entry for this conv");
  EXPECT_EQ(Msg("strider-tuning 1\ntarget cpu-avx512\nconv x=1x2x3 w=2x2x1 "
                "y=1x2x3 s=1 a=NOTSET d=1 g=1 b=1 nchw=1 nhwc=1 nchw>nhwc=1 "
                "nhwc>nchw=1\n"),
            "t.tune:3:34: a (auto_pad) must be SAME_UPPER, SAME_LOWER or "
            "VALID (explicit pads go in p)");
  EXPECT_EQ(Msg("strider-tuning 1\ntarget cpu-avx512\nconv x=1x1x1x1x1x1 "
                "w=1x1x1x1x1x1 y=1x1x1x1x1x1 s=1x1x1x1 p=0x0x0x0x0x0x0x0 "
                "d=1x1x1x1 g=1 b=1 nchw=1 nhwc=1 nchw>nhwc=1 nhwc>nchw=1\n"),
            "t.tune:3:1: conv entry: x, w and y need the same rank (3-5), s "
            "and d one value and p two per spatial dim");
  EXPECT_EQ(Msg("strider-tuning 1\ntarget cpu-avx512\nconv x=1x2x3 w=2x2x1 "
                "y=1x2x3 s=1 p=0x0 d=1 g=1 b=1 nchw=1 nhwc=1 nchw>nhwc=1 "
                "nhwc>nchw=1 nchw=2\n"),
            "t.tune:3:90: field 'nchw' given twice");
  EXPECT_EQ(Msg("strider-tuning 1\ntarget cpu-avx512\nconv x=1x2x3 w=2x2x1 "
                "y=1x2x3 s=1 p=0 d=1 g=1 b=1 nchw=1 nhwc=1 nchw>nhwc=1 "
                "nhwc>nchw=1\n"),
            "t.tune:3:1: conv entry: x, w and y need the same rank (3-5), s "
            "and d one value and p two per spatial dim");
  // GPU tables' lines.
  const std::string Gpu = "strider-tuning 1\ntarget cuda-sm90\n";
  EXPECT_EQ(Msg(Gpu + "precision fp8\n"),
            "t.tune:3:11: precision must be fp32, tf32, fp16 or bf16, not "
            "'fp8'");
  EXPECT_EQ(Msg(Gpu + "device   \n"),
            "t.tune:3:1: 'device' needs the device's name");
  EXPECT_EQ(Msg(Gpu + "algo GEMM ns=5 x=1\n"),
            "t.tune:3:1: expected 'algo NAME ns=TIME ws=BYTES KEY'");
  EXPECT_EQ(Msg(Gpu + "algo GEMM ns=- ws=0 x=1\n"),
            "t.tune:3:11: an algorithm entry needs its time, not '-'");
  EXPECT_EQ(Msg(Gpu + "algo GEMM ns=5 ws=-1 x=1\n"),
            "t.tune:3:16: 'ws=-1': expected a workspace size in bytes");
  EXPECT_EQ(Msg(Gpu + "algo GEMM ns=5 ws=0 x=1 f16\nalgo FFT ns=6 ws=0 x=1  "
                      "f16\n"),
            "t.tune:4:20: a second algorithm for this key");
}

TEST(TuningTest, MeasuredCostsReplaceEstimates) {
  ConvGraph C(32, 32, 28, 28);
  DimBindings Dims;
  const TargetDescription &Target = getDefaultTarget();
  CostModel Estimated(Target, Dims);
  ConvConfig Config;
  ASSERT_TRUE(ConvConfig::fromNode(*C.Conv, Dims, Config));
  TuningTable T;
  T.Target = "cpu-avx512";
  ConvTiming Timing;
  Timing.Ns[ReadFirstWriteFirst] = 5000;
  Timing.Ns[ReadLastWriteLast] = 40000;
  T.setConv(Config, Timing);
  CostModel Measured(Target, Dims, &T);
  EXPECT_TRUE(Measured.isMeasured(*C.Conv));
  EXPECT_FALSE(Estimated.isMeasured(*C.Conv));
  EXPECT_EQ(Measured.getNodeCost(*C.Conv, ChannelsFirst), 5000 * 1000);
  EXPECT_EQ(Measured.getNodeCost(*C.Conv, ChannelsLast), 40000 * 1000);
  // The estimates favour channels-last here; the measurement reverses it.
  EXPECT_LT(Estimated.getNodeCost(*C.Conv, ChannelsLast),
            Estimated.getNodeCost(*C.Conv, ChannelsFirst));

  const TensorType &Y = C.Conv->getResult(0)->getType();
  Cost RelayoutEstimate = Measured.getRelayoutCost(Y);
  T.setRelayout(TuningTable::getRelayoutKey(Y, Dims), 321.0);
  EXPECT_EQ(Measured.getRelayoutCost(Y), 321 * 1000);
  EXPECT_NE(RelayoutEstimate, 321 * 1000);
}

TEST(TuningTest, DifferencesWithinTheMarginAreTies) {
  // nhwc 3% slower than nchw: within the 5% margin, both cost the nchw
  // time; the target offers the nhwc>nchw variant of this conv, 10% slower:
  // it keeps its time. With margin 0 every variant keeps its own.
  ConvGraph C(32, 32, 28, 28);
  DimBindings Dims;
  const TargetDescription &Target = getDefaultTarget();
  ConvConfig Config;
  ASSERT_TRUE(ConvConfig::fromNode(*C.Conv, Dims, Config));
  TuningTable T;
  T.Target = "cpu-avx512";
  ConvTiming Timing;
  Timing.Ns[ReadFirstWriteFirst] = 1000;
  Timing.Ns[ReadLastWriteLast] = 1030;
  Timing.Ns[ReadFirstWriteLast] = 500; // Not offered: no say in the best.
  Timing.Ns[ReadLastWriteFirst] = 1100;
  T.setConv(Config, Timing);
  CostModel Model(Target, Dims, &T);
  EXPECT_EQ(Model.getNodeCost(*C.Conv, ChannelsFirst), 1000 * 1000);
  EXPECT_EQ(Model.getNodeCost(*C.Conv, ChannelsLast), 1000 * 1000);
  EXPECT_EQ(Model.getMixedConvCost(*C.Conv, ChannelsLast), 1100 * 1000);
  EXPECT_EQ(Model.getMixedConvCost(*C.Conv, ChannelsFirst), InfiniteCost);
  T.Margin = 0;
  EXPECT_EQ(Model.getNodeCost(*C.Conv, ChannelsLast), 1030 * 1000);
  // `-`: no kernel for that variant, which is then ruled out.
  Timing.Ns[ReadLastWriteLast] = -1;
  T.setConv(Config, Timing);
  EXPECT_EQ(Model.getNodeCost(*C.Conv, ChannelsLast), InfiniteCost);
  EXPECT_EQ(Model.getNodeCost(*C.Conv, ChannelsFirst), 1000 * 1000);
}

TEST(TuningTest, AbsurdFiguresSaturate) {
  // The longest time a table may hold, and a relayout bandwidth calibrated
  // from it: costs saturate at MaxFiniteCost instead of overflowing.
  ConvGraph C(32, 32, 28, 28);
  DimBindings Dims;
  TuningTable T;
  T.Target = "cpu-avx512";
  const TensorType &Y = C.Conv->getResult(0)->getType();
  T.setRelayout("1x2", 1e10); // 8 bytes in 10 s.
  TargetDescription Cal = T.calibrateTarget(getDefaultTarget());
  CostModel Model(Cal, Dims, &T);
  EXPECT_EQ(Model.getRelayoutCost(Y), MaxFiniteCost);
  T.setRelayout(TuningTable::getRelayoutKey(Y, Dims), 1e10);
  EXPECT_EQ(Model.getRelayoutCost(Y), MaxFiniteCost);
}

TEST(TuningTest, CalibrationReproducesMeasurements) {
  // Two dense convs measured at different efficiencies: the calibrated
  // figure is their median, and a third, unmeasured conv is estimated
  // with it.
  const TargetDescription &Base = getDefaultTarget();
  DimBindings Dims;
  TuningTable T;
  T.Target = "cpu-avx512";
  ConvGraph A(64, 64, 32, 32), B(64, 64, 16, 16), Other(64, 64, 24, 24);
  for (ConvGraph *G : {&A, &B}) {
    ConvConfig Config;
    ASSERT_TRUE(ConvConfig::fromNode(*G->Conv, Dims, Config));
    ConvTiming Timing;
    // 50% of peak channels-first, 80% channels-last (vectors are full).
    double Flops = 2 * Config.getMacs();
    Timing.Ns[ReadFirstWriteFirst] = Flops / (Base.PeakGFlops * 0.5);
    Timing.Ns[ReadLastWriteLast] = Flops / (Base.PeakGFlops * 0.8);
    T.setConv(Config, Timing);
  }
  T.setRelayout("1x64x32x32", 262144 / 20.0); // 20 GB/s
  TargetDescription Cal = T.calibrateTarget(Base);
  EXPECT_NEAR(Cal.Conv.Dense[ChannelsFirst], 0.5, 1e-9);
  EXPECT_NEAR(Cal.Conv.Dense[ChannelsLast], 0.8, 1e-9);
  EXPECT_NEAR(Cal.RelayoutGBs, 20.0, 1e-9);
  // Figures with nothing to fit them keep their estimates.
  EXPECT_EQ(Cal.Conv.Depthwise[ChannelsLast],
            Base.Conv.Depthwise[ChannelsLast]);
  EXPECT_EQ(Cal.MemoryGBs, Base.MemoryGBs);

  CostModel Model(Cal, Dims, &T);
  EXPECT_FALSE(Model.isMeasured(*Other.Conv));
  ConvConfig OC;
  ASSERT_TRUE(ConvConfig::fromNode(*Other.Conv, Dims, OC));
  double WantNs = 2 * OC.getMacs() / (Base.PeakGFlops * 0.8);
  double GotNs = double(Model.getNodeCost(*Other.Conv, ChannelsLast)) / 1000.0 -
                 Cal.KernelLaunchNs;
  EXPECT_NEAR(GotNs, WantNs, 1.0);
}

} // namespace

TEST(TuningTest, SizesOfHugeTypesSaturate) {
  // Found by the onnx fuzzer: an input declared "x:0" x 3 x 2^62 x "x:3",
  // costed with its symbols as 1, wrapped int64 (24 * 2^62).
  DimBindings Dims;
  CostModel Model(getDefaultTarget(), Dims);
  TensorType T(ElementType::F32,
               {Dim::getSymbol("x:0"), Dim::getStatic(3),
                Dim::getStatic(int64_t(1) << 62), Dim::getSymbol("x:3")});
  EXPECT_EQ(Model.getNumBytes(T), INT64_MAX);
  EXPECT_EQ(Model.getRelayoutCost(T), MaxFiniteCost);
  EXPECT_EQ(Model.getNumBytes(TensorType::get(ElementType::F32, {2, 3})), 24);
}
