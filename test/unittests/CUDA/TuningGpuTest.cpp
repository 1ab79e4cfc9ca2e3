//===- TuningGpuTest.cpp - --tune on the CUDA backend ---------------------===//
//
// cuda::tuneGraph: without a device, one error saying so; on a GPU, every
// variant of a conv and its relayouts timed into the table with the
// algorithm cuDNN's find chose, nothing measured twice, and programs built
// with the table running the algorithms it holds.
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"

#include "strider/CodeGen/CUDA/Tuning.h"
#include "strider/IR/AsmParser.h"
#include "strider/IR/Graph.h"
#include "strider/Layout/CostModel.h"

#include "gtest/gtest.h"

using namespace strider;
using namespace strider::layout;

namespace {

const char *const ConvGraphText = R"(
graph @g(%x: tensor<2 x 16 x 12 x 12 x f32>) {
  %w = Constant() {value = dense<0.05> : tensor<32 x 16 x 3 x 3 x f32>} : tensor<32 x 16 x 3 x 3 x f32>
  %b = Constant() {value = dense<0.25> : tensor<32 x f32>} : tensor<32 x f32>
  %c = Conv(%x, %w, %b) {pads = [1, 1, 1, 1]} : tensor<2 x 32 x 12 x 12 x f32>
  %r = Relu(%c) : tensor<2 x 32 x 12 x 12 x f32>
  return %r
}
)";

TEST(CudaTuningTest, WithoutDeviceOneError) {
  if (cuda::gputest::hasDevice())
    GTEST_SKIP() << "a CUDA device is present";
  auto G = parseGraph(ConvGraphText, "g");
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  TuningTable T;
  T.Target = "cuda-sm90";
  llvm::Error E = cuda::tuneGraph(**G, DimBindings(), {}, T);
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("no CUDA device on this machine"),
            std::string::npos);
  EXPECT_EQ(T.getNumConvs() + T.getNumRelayouts(), 0u);
}

class CudaTuningPrecisionTest
    : public ::testing::TestWithParam<cuda::Precision> {};

TEST_P(CudaTuningPrecisionTest, TimesVariantsAndKeepsAlgorithms) {
  STRIDER_SKIP_WITHOUT_DEVICE();
  auto G = parseGraph(ConvGraphText, "g");
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  TuningTable T;
  T.Target = "cuda-sm90";
  cuda::TuneOptions Opts;
  Opts.Math = GetParam();
  Opts.Timing.Samples = 3;
  Opts.Timing.SampleSeconds = 0.0005;
  codegen::TuneStats Stats;
  llvm::Error E = cuda::tuneGraph(**G, DimBindings(), Opts, T, &Stats);
  ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
  EXPECT_EQ(Stats.Convs, 1u);
  EXPECT_EQ(Stats.MeasuredConvs, 1u);
  EXPECT_EQ(Stats.MeasuredRelayouts, 2u);
  ASSERT_EQ(T.getNumConvs(), 1u);
  // Both same-layout variants run everywhere (1e10 ns is the table's
  // ceiling).
  ConvConfig Config;
  for (const Node *N : (*G)->nodes()) {
    if (N->getOpId() == OpId::Conv) {
      ASSERT_TRUE(ConvConfig::fromNode(*N, DimBindings(), Config));
    }
  }
  const ConvTiming *Timing = T.lookupConv(Config.getKey());
  ASSERT_NE(Timing, nullptr);
  for (ConvVariant V : {ReadFirstWriteFirst, ReadLastWriteLast}) {
    EXPECT_GT(Timing->Ns[V], 0) << getConvVariantName(V).str();
    EXPECT_LT(Timing->Ns[V], 1e10) << getConvVariantName(V).str();
  }
  // One algorithm per conv key the variants ran, keyed in the precision's
  // type.
  ASSERT_FALSE(T.getAlgorithms().empty());
  const char *Suffix = GetParam() == cuda::Precision::FP16 ? " f16" : " f32";
  for (const auto &KV : T.getAlgorithms()) {
    EXPECT_TRUE(llvm::StringRef(KV.first).endswith(Suffix)) << KV.first;
    EXPECT_FALSE(KV.second.Name.empty());
    EXPECT_GT(KV.second.Ns, 0);
  }

  // Tuning again measures nothing.
  const size_t Algorithms = T.getAlgorithms().size();
  E = cuda::tuneGraph(**G, DimBindings(), Opts, T, &Stats);
  ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
  EXPECT_EQ(Stats.MeasuredConvs, 0u);
  EXPECT_EQ(Stats.MeasuredRelayouts, 0u);
  EXPECT_EQ(T.getAlgorithms().size(), Algorithms);

  // A program given the table's algorithms runs them.
  if (GetParam() != cuda::Precision::FP32)
    return; // The graph is f32; its half form comes from assign-precision.
  cuda::CUDAOptions CO;
  CO.Algorithms = cuda::getTunedAlgorithms(T);
  auto P = cuda::compileForCUDA(**G, CO);
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  ASSERT_EQ((*P)->getConvAlgorithms().size(), 1u);
  const cuda::LibraryAlgorithm &Ran = (*P)->getConvAlgorithms()[0];
  auto It = T.getAlgorithms().find(Ran.Key);
  ASSERT_NE(It, T.getAlgorithms().end()) << Ran.Key;
  EXPECT_EQ(Ran.Algo, It->second.Name);
  EXPECT_EQ(Ran.FoundNs, 0); // Taken from the table, not found again.
}

INSTANTIATE_TEST_SUITE_P(Precisions, CudaTuningPrecisionTest,
                         ::testing::Values(cuda::Precision::FP32,
                                           cuda::Precision::FP16));

} // namespace
