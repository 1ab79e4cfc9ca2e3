//===- PlanTest.cpp - The CUDA backend's host-side lowering ---------------===//
//
// planForCUDA on small graphs, no GPU needed: which steps a graph becomes
// (library calls with fused epilogues, own kernels, views), their
// parameters in each layout, the arena, and the errors for what the
// backend does not run.
//
//===----------------------------------------------------------------------===//

#include "CopyPlanInterpreter.h"
#include "DeviceMath.h"
#include "PlanImpl.h"

#include "strider/IR/AsmParser.h"
#include "strider/IR/Graph.h"
#include "strider/Runtime/Reference.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstring>
#include <limits>

using namespace strider;
using namespace strider::cuda;

namespace {

std::unique_ptr<Graph> parse(llvm::StringRef Text) {
  auto G = parseGraph(Text, "test.lir");
  EXPECT_TRUE(bool(G)) << llvm::toString(G.takeError());
  return G ? std::move(*G) : nullptr;
}

std::unique_ptr<Plan> plan(const Graph &G, CUDAOptions Opts = {}) {
  auto P = planForCUDA(G, Opts);
  EXPECT_TRUE(bool(P)) << llvm::toString(P.takeError());
  return P ? std::move(*P) : nullptr;
}

std::string planError(const Graph &G) {
  auto P = planForCUDA(G, CUDAOptions());
  if (P)
    return "<planned>";
  return llvm::toString(P.takeError());
}

std::vector<std::string> kernels(const Plan &P) {
  std::vector<std::string> K;
  for (const StepInfo &S : P.getSteps())
    K.push_back(S.Kernel);
  return K;
}

template <typename T> const T &params(const Plan &P, size_t Step) {
  return std::get<T>(P.getImpl().Steps.at(Step).Params);
}

// A conv block in NHWC: conv + bias + residual + relu is one cuDNN step,
// and the pool reads channels-last.
const char *ResidualNHWC = R"(
graph @block(%x: tensor<1 x 8 x 6 x 6 x f32, nhwc>) {
  %w = Constant() {value = dense<0.5> : tensor<8 x 8 x 3 x 3 x f32>} : tensor<8 x 8 x 3 x 3 x f32>
  %b = Constant() {value = dense<0.25> : tensor<8 x f32>} : tensor<8 x f32>
  %c = Conv(%x, %w, %b) {pads = [1, 1, 1, 1]} : tensor<1 x 8 x 6 x 6 x f32, nhwc> loc("conv")
  %s = Add(%c, %x) : tensor<1 x 8 x 6 x 6 x f32, nhwc> loc("add")
  %r = Relu(%s) : tensor<1 x 8 x 6 x 6 x f32, nhwc> loc("relu")
  %p = MaxPool(%r) {kernel_shape = [2, 2], strides = [2, 2]} : tensor<1 x 8 x 3 x 3 x f32, nhwc> loc("pool")
  return %p
}
)";

TEST(CudaPlanTest, ConvBlockFusesIntoOneLibraryCall) {
  auto G = parse(ResidualNHWC);
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  ASSERT_EQ(kernels(*P),
            (std::vector<std::string>{
                "cudnn.conv nhwc>nhwc f32+bias+residual+relu",
                "pool.max nhwc f32"}));
  EXPECT_EQ(P->getSteps()[0].Nodes, "c,s,r");
  // 2 * N * K * pixels * C * taps.
  EXPECT_EQ(P->getSteps()[0].Flops, 2 * 8 * 36 * 8 * 9);
  const ConvStep &C = params<ConvStep>(*P, 0);
  EXPECT_TRUE(C.Desc.XChannelsLast);
  EXPECT_TRUE(C.Desc.YChannelsLast);
  EXPECT_EQ(C.Desc.PadBegin[0], 1);
  EXPECT_EQ(C.Desc.PadEnd[1], 1);
  EXPECT_EQ(C.Desc.Filter[0], 3);
  EXPECT_EQ(C.Desc.Math, MathMode::FP32);
  EXPECT_TRUE(C.Desc.Epilogue.Bias && C.Desc.Epilogue.Residual);
  EXPECT_EQ(C.Desc.Epilogue.Act.Kind, codegen::ActKind::Relu);
  ASSERT_EQ(C.Weights->size(), 8u * 8 * 9);
  // X and the residual are the same input buffer.
  const PlanStep &S = P->getImpl().Steps[0];
  EXPECT_EQ(S.Args[0].Buffer, S.Args[1].Buffer);
  const PoolParams &Pool = params<PoolParams>(*P, 1);
  EXPECT_TRUE(Pool.ChannelsLast);
  EXPECT_EQ(Pool.Out[0], 3);
  EXPECT_EQ(Pool.Kernel[1], 2);
  // Buffers are 256-byte aligned: the input and the conv result take
  // 1280 bytes each (1152 used); the pool result (288 bytes) reuses the
  // input's slot, dead after the conv reads it.
  EXPECT_EQ(P->getArenaBytes(), 2 * 1280);
}

TEST(CudaPlanTest, TF32IsAMathModeOfFloatConvs) {
  auto G = parse(ResidualNHWC);
  ASSERT_TRUE(G);
  CUDAOptions O;
  O.Math = Precision::TF32;
  auto P = plan(*G, O);
  ASSERT_TRUE(P);
  EXPECT_EQ(params<ConvStep>(*P, 0).Desc.Math, MathMode::TF32);
  EXPECT_EQ(P->getSteps()[0].Kernel,
            "cudnn.conv nhwc>nhwc f32 tf32+bias+residual+relu");
}

// silero-vad's decoder: the LSTM's [T, N, C] output transposed to
// [N, C, T] is stored [W, C, N]; with N = 1 those are NWC's bytes, and the
// conv reads them as such.
TEST(CudaPlanTest, ConvReadsAnotherDimOrderWithChannelsLastBytes) {
  auto G = parse(R"(
graph @g(%x: tensor<1 x 16 x 9 x f32, [2, 1, 0]>) {
  %w = Constant() {value = dense<0.5> : tensor<1 x 16 x 1 x f32>} : tensor<1 x 16 x 1 x f32>
  %y = Conv(%x, %w) : tensor<1 x 1 x 9 x f32, nwc> loc("conv")
  return %y
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  ASSERT_EQ(kernels(*P),
            (std::vector<std::string>{"cudnn.conv nhwc>nhwc f32"}));
  EXPECT_TRUE(params<ConvStep>(*P, 0).Desc.XChannelsLast);
  // N = 2: the batch stride is neither order's.
  auto Batched = parse(R"(
graph @g(%x: tensor<2 x 16 x 9 x f32, [2, 1, 0]>) {
  %w = Constant() {value = dense<0.5> : tensor<1 x 16 x 1 x f32>} : tensor<1 x 16 x 1 x f32>
  %y = Conv(%x, %w) : tensor<2 x 1 x 9 x f32, nwc> loc("conv")
  return %y
}
)");
  ASSERT_TRUE(Batched);
  EXPECT_NE(planError(*Batched).find("no CUDA kernel for a convolution in "
                                     "layout"),
            std::string::npos)
      << planError(*Batched);
}

TEST(CudaPlanTest, HalfGraphsUseHalfMath) {
  auto G = parse(R"(
graph @half(%x: tensor<2 x 4 x 5 x 5 x f16>) {
  %w = Constant() {value = dense<0.5> : tensor<6 x 4 x 1 x 1 x f16>} : tensor<6 x 4 x 1 x 1 x f16>
  %c = Conv(%x, %w) : tensor<2 x 6 x 5 x 5 x f16> loc("conv")
  %y = Cast(%c) {to = 1} : tensor<2 x 6 x 5 x 5 x f32> loc("cast")
  return %y
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  ASSERT_EQ(kernels(*P), (std::vector<std::string>{
                             "cudnn.conv nchw>nchw f16",
                             "copy.cast contiguous f16>f32"}));
  EXPECT_EQ(params<ConvStep>(*P, 0).Desc.Math, MathMode::Half);
  EXPECT_EQ(params<ConvStep>(*P, 0).Desc.Type, DType::F16);
  // The weights stay host floats, uploaded as f16 by the runner: 2 bytes
  // each in the totals.
  EXPECT_EQ(P->getConstantBytes(), 6 * 4 * 2);
}

TEST(CudaPlanTest, RelayoutIsATiledTranspose) {
  auto G = parse(R"(
graph @relayout(%x: tensor<1 x 64 x 56 x 56 x f32>) {
  %y = relayout(%x) : tensor<1 x 64 x 56 x 56 x f32, nhwc> loc("r")
  return %y
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  ASSERT_EQ(P->getSteps().size(), 1u);
  const CopyPlan &C = params<CopyPlan>(*P, 0);
  EXPECT_EQ(C.Strategy, CopyStrategy::Transpose2D);
  EXPECT_EQ(C.Rows * C.Cols * C.Batch, 64 * 56 * 56);
}

// A Cast and a relayout in a row are one copy from the first's operand;
// not when the intermediate value has another reader or is an output, or
// when skipping it would skip a rounding.
TEST(CudaPlanTest, CastAndRelayoutFoldIntoOneCopy) {
  auto G = parse(R"(
graph @fold(%x: tensor<2 x 16 x 8 x 8 x f32>) {
  %h = Cast(%x) {to = 10} : tensor<2 x 16 x 8 x 8 x f16>
  %r = relayout(%h) : tensor<2 x 16 x 8 x 8 x f16, nhwc>
  %b = Cast(%r) {to = 1} : tensor<2 x 16 x 8 x 8 x f32, nhwc>
  return %b
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  // Pairs fold, never a whole chain: the rounding to f16 stays its own
  // step, and the relayout folds into the cast back to f32.
  EXPECT_EQ(kernels(*P), (std::vector<std::string>{
                             "copy.cast contiguous f32>f16",
                             "copy.relayout+cast transpose2d f16>f32"}));
  EXPECT_EQ(P->getSteps()[1].Nodes, "r,b");
  EXPECT_EQ(params<CopyPlan>(*P, 1).Strategy, CopyStrategy::Transpose2D);

  auto Shared = parse(R"(
graph @shared(%x: tensor<2 x 16 x 8 x 8 x f32>) {
  %h = Cast(%x) {to = 10} : tensor<2 x 16 x 8 x 8 x f16>
  %r = relayout(%h) : tensor<2 x 16 x 8 x 8 x f16, nhwc>
  return %r, %h
}
)");
  ASSERT_TRUE(Shared);
  auto Q = plan(*Shared);
  ASSERT_TRUE(Q);
  EXPECT_EQ(kernels(*Q), (std::vector<std::string>{
                             "copy.cast contiguous f32>f16",
                             "copy.relayout transpose2d f16"}));
}

TEST(CudaPlanTest, ElementwiseBroadcastStrides) {
  auto G = parse(R"(
graph @bias(%x: tensor<2 x 3 x 4 x 5 x f32, nhwc>) {
  %b = Constant() {value = dense<1.0> : tensor<3 x 1 x 1 x f32>} : tensor<3 x 1 x 1 x f32>
  %a = Mul(%x, %b) : tensor<2 x 3 x 4 x 5 x f32, nhwc> loc("mul")
  %y = Sigmoid(%a) : tensor<2 x 3 x 4 x 5 x f32, nhwc> loc("sig")
  return %y
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  ASSERT_EQ(kernels(*P),
            (std::vector<std::string>{"elementwise.mul+sigmoid f32"}));
  const ElementwiseParams &E = params<ElementwiseParams>(*P, 0);
  EXPECT_EQ(E.Op, BinaryOp::Mul);
  EXPECT_EQ(E.Act.Kind, codegen::ActKind::Sigmoid);
  // Physical order N, H, W, C: x dense; b varies along C only.
  EXPECT_EQ(std::vector<int64_t>(E.Shape, E.Shape + 4),
            (std::vector<int64_t>{2, 4, 5, 3}));
  EXPECT_EQ(std::vector<int64_t>(E.AStrides, E.AStrides + 4),
            (std::vector<int64_t>{60, 15, 3, 1}));
  EXPECT_EQ(std::vector<int64_t>(E.BStrides, E.BStrides + 4),
            (std::vector<int64_t>{0, 0, 0, 1}));
}

TEST(CudaPlanTest, ElementwiseOverwritesAnOperandNothingReadsLater) {
  // e is read by the Mul only: m is written over it. m is still read by
  // the Add, whose other operand is the graph input: neither is
  // overwritten by the Mul, and the Add writes over m.
  auto G = parse(R"(
graph @inplace(%x: tensor<4 x 64 x f32>) {
  %c = Constant() {value = dense<2.0> : tensor<4 x 64 x f32>} : tensor<4 x 64 x f32>
  %e = Exp(%x) : tensor<4 x 64 x f32> loc("exp")
  %m = Mul(%e, %c) : tensor<4 x 64 x f32> loc("mul")
  %a = Add(%m, %x) : tensor<4 x 64 x f32> loc("add")
  %y = Sub(%a, %m) : tensor<4 x 64 x f32> loc("sub")
  return %y
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  const auto &Steps = P->getImpl().Steps;
  ASSERT_EQ(Steps.size(), 4u);
  // Args: A, B, Y.
  const BufferId E = Steps[0].Args[2].Buffer;
  EXPECT_EQ(Steps[1].Args[0].Buffer, E);
  EXPECT_EQ(Steps[1].Args[2].Buffer, E); // m over e.
  const BufferId M = Steps[1].Args[2].Buffer;
  EXPECT_NE(Steps[2].Args[2].Buffer, M); // m is read again by the Sub.
  EXPECT_NE(Steps[2].Args[2].Buffer, Steps[0].Args[0].Buffer); // Not over x.
  EXPECT_EQ(Steps[3].Args[2].Buffer, Steps[3].Args[0].Buffer); // y over a.
  // The graph input and two activations of 1 KiB each.
  EXPECT_EQ(P->getArenaBytes(), 3 * 1024);
}

TEST(CudaPlanTest, ConcatCopiesIntoSlicesAndViewsShareBuffers) {
  auto G = parse(R"(
graph @cat(%a: tensor<1 x 2 x 3 x 3 x f32, nhwc>, %b: tensor<1 x 4 x 3 x 3 x f32, nhwc>) {
  %c = Concat(%a, %b) {axis = 1} : tensor<1 x 6 x 3 x 3 x f32, nhwc> loc("cat")
  %r = relayout(%c) : tensor<1 x 6 x 3 x 3 x f32> loc("r")
  %s = Constant() {value = dense<[1, 54]> : tensor<2 x i64>} : tensor<2 x i64>
  %f = Reshape(%r, %s) : tensor<1 x 54 x f32> loc("flat")
  return %f
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  ASSERT_EQ(P->getSteps().size(), 3u);
  const PlanImpl &I = P->getImpl();
  // The second operand lands after the first's 2 channels (f32).
  EXPECT_EQ(I.Steps[0].Args[1].Offset, 0);
  EXPECT_EQ(I.Steps[1].Args[1].Offset, 2 * 4);
  EXPECT_EQ(I.Steps[0].Args[1].Buffer, I.Steps[1].Args[1].Buffer);
  // The reshape is a view: the output is the relayout's buffer.
  EXPECT_EQ(I.Outputs[0].Buffer, I.Steps[2].Args[1].Buffer);
}

TEST(CudaPlanTest, SoftmaxAndReductionsFollowThePhysicalOrder) {
  auto G = parse(R"(
graph @heads(%x: tensor<2 x 8 x 4 x 4 x f32, nhwc>) {
  %s = Softmax(%x) {axis = 1} : tensor<2 x 8 x 4 x 4 x f32, nhwc> loc("softmax")
  %m = GlobalAveragePool(%x) : tensor<2 x 8 x 1 x 1 x f32, nhwc> loc("gap")
  return %s, %m
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  const SoftmaxParams &S = params<SoftmaxParams>(*P, 0);
  EXPECT_EQ(S.Outer, 2 * 16);
  EXPECT_EQ(S.Axis, 8);
  EXPECT_EQ(S.Inner, 1);
  const ReduceParams &R = params<ReduceParams>(*P, 1);
  EXPECT_EQ(R.Op, ReduceParams::Mean);
  EXPECT_EQ(R.Outer, 2);
  EXPECT_EQ(R.Reduced, 16);
  EXPECT_EQ(R.Inner, 8);
}

TEST(CudaPlanTest, BatchNormFoldsIntoAChannelEpilogue) {
  auto G = parse(R"(
graph @bn(%x: tensor<1 x 2 x 3 x 3 x f32>) {
  %g = Constant() {value = dense<[2.0, 4.0]> : tensor<2 x f32>} : tensor<2 x f32>
  %b = Constant() {value = dense<[1.0, 0.0]> : tensor<2 x f32>} : tensor<2 x f32>
  %m = Constant() {value = dense<[0.5, 1.0]> : tensor<2 x f32>} : tensor<2 x f32>
  %v = Constant() {value = dense<[3.0, 15.0]> : tensor<2 x f32>} : tensor<2 x f32>
  %n = BatchNormalization(%x, %g, %b, %m, %v) {epsilon = 1.0} : tensor<1 x 2 x 3 x 3 x f32> loc("bn")
  %y = Relu(%n) : tensor<1 x 2 x 3 x 3 x f32> loc("relu")
  return %y
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  ASSERT_EQ(kernels(*P),
            (std::vector<std::string>{"epilogue.batchnorm nchw+relu"}));
  const EpilogueParams &E = params<EpilogueParams>(*P, 0);
  EXPECT_EQ(E.ChannelStride, 9);
  EXPECT_EQ(E.Channels, 2);
  // scale = g / sqrt(v + eps) = [1, 1]; shift = b - m * scale.
  const PlanImpl &I = P->getImpl();
  const auto &Scale = *I.Buffers[size_t(I.Steps[0].Args[1].Buffer)].Data;
  const auto &Shift = *I.Buffers[size_t(I.Steps[0].Args[2].Buffer)].Data;
  float S[2], B[2];
  std::memcpy(S, Scale.data(), sizeof(S));
  std::memcpy(B, Shift.data(), sizeof(B));
  EXPECT_FLOAT_EQ(S[0], 1.0f);
  EXPECT_FLOAT_EQ(S[1], 1.0f);
  EXPECT_FLOAT_EQ(B[0], 0.5f);
  EXPECT_FLOAT_EQ(B[1], -1.0f);
}

TEST(CudaPlanTest, GemmBiasAndTransposes) {
  auto G = parse(R"(
graph @fc(%x: tensor<4 x 16 x f32>) {
  %w = Constant() {value = dense<0.5> : tensor<10 x 16 x f32>} : tensor<10 x 16 x f32>
  %b = Constant() {value = dense<1.0> : tensor<10 x f32>} : tensor<10 x f32>
  %g = Gemm(%x, %w, %b) {transB = 1, beta = 2.0} : tensor<4 x 10 x f32> loc("fc")
  %y = Relu(%g) : tensor<4 x 10 x f32> loc("relu")
  return %y
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  ASSERT_EQ(kernels(*P),
            (std::vector<std::string>{"cublaslt.gemm nt f32+bias+relu"}));
  const GemmStep &S = params<GemmStep>(*P, 0);
  EXPECT_EQ(S.Desc.M, 4);
  EXPECT_EQ(S.Desc.N, 10);
  EXPECT_EQ(S.Desc.K, 16);
  ASSERT_TRUE(S.B);
  // beta scales the bias on the host.
  EXPECT_FLOAT_EQ((*S.Bias)[3], 2.0f);
}

// The global-pool kernel writes Y[n][c]: an output with channels outside
// the batch is refused, not written in the wrong order.
TEST(CudaPlanTest, GlobalPoolOutputLayoutIsChecked) {
  auto G = parse(R"(
graph @gap(%x: tensor<2 x 3 x 4 x 4 x f32, nhwc>) {
  %y = GlobalAveragePool(%x) : tensor<2 x 3 x 1 x 1 x f32, [1, 0, 2, 3]> loc("gap")
  return %y
}
)");
  ASSERT_TRUE(G);
  EXPECT_NE(planError(*G).find("no CUDA kernel for GlobalAveragePool to"),
            std::string::npos)
      << planError(*G);
}

TEST(CudaPlanTest, AsymmetricConvPadsBecomeAnExplicitPad) {
  // H: SAME_UPPER, kernel 3, stride 2 on 8 (pads 0/1); W: SAME_LOWER,
  // kernel 2, stride 1 (pads 1/0). cuDNN pads both sides alike, and the
  // first pad on both sides would change the windows: the input is padded
  // by each dim's difference into a scratch buffer, cuDNN pads the common
  // part (0). In NHWC the pad's dims are in physical order.
  auto G = parse(R"(
graph @same(%x: tensor<1 x 4 x 8 x 8 x f32, nhwc>) {
  %w = Constant() {value = dense<0.5> : tensor<6 x 4 x 3 x 2 x f32>} : tensor<6 x 4 x 3 x 2 x f32>
  %c = Conv(%x, %w) {strides = [2, 1], pads = [0, 1, 1, 0]} : tensor<1 x 6 x 4 x 8 x f32, nhwc>
  return %c
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  ASSERT_EQ(kernels(*P).size(), 2u);
  EXPECT_EQ(kernels(*P)[0], "pad.constant f32 (asymmetric conv pads)");
  const PadParams &Pad = params<PadParams>(*P, 0);
  ASSERT_EQ(Pad.Rank, 4);
  // Physical N, H, W, C: H gets 1 after, W 1 before.
  EXPECT_EQ(std::vector<int64_t>(Pad.XShape, Pad.XShape + 4),
            (std::vector<int64_t>{1, 8, 8, 4}));
  EXPECT_EQ(std::vector<int64_t>(Pad.YShape, Pad.YShape + 4),
            (std::vector<int64_t>{1, 9, 9, 4}));
  EXPECT_EQ(std::vector<int64_t>(Pad.Begin, Pad.Begin + 4),
            (std::vector<int64_t>{0, 0, 1, 0}));
  EXPECT_EQ(Pad.PadMode, PadParams::Constant);
  EXPECT_EQ(Pad.Value, 0.0f);
  const ConvStep &Conv = params<ConvStep>(*P, 1);
  EXPECT_EQ(Conv.Desc.In[0], 9);
  EXPECT_EQ(Conv.Desc.In[1], 9);
  for (int I = 0; I < 2; ++I) {
    EXPECT_EQ(Conv.Desc.PadBegin[I], 0);
    EXPECT_EQ(Conv.Desc.PadEnd[I], 0);
  }
  EXPECT_EQ(checkConv(Conv.Desc), "");
  // The conv reads the pad's scratch buffer, which the arena keeps apart
  // from the input the pad reads.
  const PlanImpl &I = P->getImpl();
  const BufferId Scratch = I.Steps[0].Args[1].Buffer;
  EXPECT_EQ(I.Steps[1].Args[0].Buffer, Scratch);
  EXPECT_EQ(I.Buffers[size_t(Scratch)].Bytes, 1 * 9 * 9 * 4 * 4);
  const BufferId In = I.Steps[0].Args[0].Buffer;
  const int64_t A = I.Offsets[size_t(In)], B = I.Offsets[size_t(Scratch)];
  EXPECT_TRUE(A + I.Buffers[size_t(In)].Bytes <= B ||
              B + I.Buffers[size_t(Scratch)].Bytes <= A);

  // Pads whose extra part is never read (stride 2 over 7 with pads 0/1)
  // stay with cuDNN: no pad step.
  auto Odd = parse(R"(
graph @odd(%x: tensor<1 x 4 x 7 x 7 x f32>) {
  %w = Constant() {value = dense<0.5> : tensor<6 x 4 x 3 x 3 x f32>} : tensor<6 x 4 x 3 x 3 x f32>
  %c = Conv(%x, %w) {strides = [2, 2], pads = [0, 0, 1, 1]} : tensor<1 x 6 x 3 x 3 x f32>
  return %c
}
)");
  ASSERT_TRUE(Odd);
  auto PO = plan(*Odd);
  ASSERT_TRUE(PO);
  ASSERT_EQ(kernels(*PO).size(), 1u);
  EXPECT_EQ(kernels(*PO)[0].rfind("cudnn.conv nchw>nchw f32", 0), 0u)
      << kernels(*PO)[0];
}

TEST(CudaPlanTest, AsymmetricConvTransposePadsBecomeACrop) {
  // Stride 2, kernel 3 on 4: the full output is 9. H crops 0/1 (SAME_UPPER)
  // to 8, W 2/0 to 7. cuDNN crops both sides of a dim alike and neither
  // fits: it computes the output cropped by the smaller pad (0) into a
  // scratch buffer, a copy crops it into Y, and the bias follows.
  auto G = parse(R"(
graph @up(%x: tensor<1 x 4 x 4 x 4 x f32, nhwc>) {
  %w = Constant() {value = dense<0.5> : tensor<4 x 6 x 3 x 3 x f32>} : tensor<4 x 6 x 3 x 3 x f32>
  %b = Constant() {value = dense<0.25> : tensor<6 x f32>} : tensor<6 x f32>
  %c = ConvTranspose(%x, %w, %b) {strides = [2, 2], pads = [0, 2, 1, 0]} : tensor<1 x 6 x 8 x 7 x f32, nhwc>
  return %c
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  ASSERT_EQ(kernels(*P).size(), 3u) << ::testing::PrintToString(kernels(*P));
  EXPECT_EQ(kernels(*P)[0],
            "cudnn.conv_transpose nhwc>nhwc f32 (uncropped: asymmetric pads)");
  EXPECT_EQ(kernels(*P)[1].rfind("copy.crop ", 0), 0u) << kernels(*P)[1];
  EXPECT_EQ(kernels(*P)[2], "epilogue.conv_transpose nhwc f32+bias");
  const ConvStep &Conv = params<ConvStep>(*P, 0);
  EXPECT_EQ(Conv.Desc.Out[0], 9);
  EXPECT_EQ(Conv.Desc.Out[1], 9);
  for (int I = 0; I < 2; ++I) {
    EXPECT_EQ(Conv.Desc.PadBegin[I], 0);
    EXPECT_EQ(Conv.Desc.PadEnd[I], 0);
  }
  EXPECT_FALSE(Conv.Desc.Epilogue.Bias);
  EXPECT_EQ(checkConv(Conv.Desc), "");
  const PlanImpl &I = P->getImpl();
  // The scratch holds 9 x 9 x 6 floats; the crop starts at w = 2, that is
  // 2 * 6 elements into NHWC rows.
  const BufferId Scratch = I.Steps[0].Args[2].Buffer;
  EXPECT_EQ(I.Buffers[size_t(Scratch)].Bytes, 9 * 9 * 6 * 4);
  EXPECT_EQ(I.Steps[1].Args[0].Buffer, Scratch);
  EXPECT_EQ(I.Steps[1].Args[0].Offset, 2 * 6 * 4);
  const BufferId Y = I.Steps[1].Args[1].Buffer;
  EXPECT_NE(Y, Scratch);
  EXPECT_EQ(I.Buffers[size_t(Y)].Bytes, 8 * 7 * 6 * 4);
  // The epilogue runs in place on Y, channels innermost.
  const EpilogueParams &E = params<EpilogueParams>(*P, 2);
  EXPECT_EQ(I.Steps[2].Args[0].Buffer, Y);
  EXPECT_EQ(I.Steps[2].Args[4].Buffer, Y);
  EXPECT_GE(I.Steps[2].Args[2].Buffer, 0);
  EXPECT_EQ(E.Count, 8 * 7 * 6);
  EXPECT_EQ(E.Channels, 6);
  EXPECT_EQ(E.ChannelStride, 1);

  // Pads cuDNN can crop (begin 1, end 0 at stride 2 fits its window) stay
  // one step.
  auto Fits = parse(R"(
graph @fits(%x: tensor<1 x 4 x 4 x 4 x f32>) {
  %w = Constant() {value = dense<0.5> : tensor<4 x 6 x 3 x 3 x f32>} : tensor<4 x 6 x 3 x 3 x f32>
  %c = ConvTranspose(%x, %w) {strides = [2, 2], pads = [1, 1, 0, 0]} : tensor<1 x 6 x 8 x 8 x f32>
  return %c
}
)");
  ASSERT_TRUE(Fits);
  auto PF = plan(*Fits);
  ASSERT_TRUE(PF);
  ASSERT_EQ(kernels(*PF).size(), 1u);
  EXPECT_EQ(kernels(*PF)[0], "cudnn.conv_transpose nchw>nchw f32");
}

TEST(CudaPlanTest, LrnInBothLayoutsMatchesTheReference) {
  // Size 4 is an even window (one channel before, two after). The plan's
  // parameters walked on the host with the kernel's window and scale
  // (DeviceMath.h) give the reference interpreter's LRN in both layouts.
  const int64_t N = 2, Ch = 6, H = 3, W = 5, Pixels = H * W;
  for (bool Last : {false, true}) {
    std::string L = Last ? ", nhwc" : "";
    auto G = parse("graph @lrn(%x: tensor<2 x 6 x 3 x 5 x f32" + L +
                   ">) {\n"
                   "  %y = LRN(%x) {size = 4, alpha = 0.02, beta = 0.75, "
                   "bias = 2.0} : tensor<2 x 6 x 3 x 5 x f32" +
                   L + ">\n  return %y\n}\n");
    ASSERT_TRUE(G);
    auto P = plan(*G);
    ASSERT_TRUE(P);
    ASSERT_EQ(kernels(*P).size(), 1u);
    EXPECT_EQ(kernels(*P)[0], Last ? "lrn.rows f32" : "lrn.strided f32");
    const LrnParams &LP = params<LrnParams>(*P, 0);
    EXPECT_EQ(LP.Outer, Last ? N * Pixels : N);
    EXPECT_EQ(LP.Len, Ch);
    EXPECT_EQ(LP.Inner, Last ? 1 : Pixels);
    EXPECT_EQ(LP.Size, 4);
    EXPECT_FLOAT_EQ(LP.Alpha, 0.02f);
    EXPECT_FLOAT_EQ(LP.Bias, 2.0f);

    runtime::Tensor X = runtime::Tensor::zeros(
        TensorType::get(ElementType::F32, {N, Ch, H, W}));
    for (int64_t I = 0; I < X.getNumElements(); ++I)
      X.setDouble(I, std::sin(0.7 * double(I)) * 3.0);
    runtime::TensorMap In;
    In["x"] = X;
    auto Want = runtime::runReference(*G, In);
    ASSERT_TRUE(bool(Want)) << llvm::toString(Want.takeError());
    // The reference returns Y in its declared layout; compare logically.
    const runtime::Tensor Y = Want->at("y").withLayout(Layout());
    // Physical offset of logical (n, c, p) in the tensors' layout.
    auto Phys = [&](int64_t Nn, int64_t C, int64_t Px) {
      return Last ? (Nn * Pixels + Px) * Ch + C : (Nn * Ch + C) * Pixels + Px;
    };
    std::vector<float> XP(size_t(X.getNumElements()));
    for (int64_t Nn = 0; Nn < N; ++Nn)
      for (int64_t C = 0; C < Ch; ++C)
        for (int64_t Px = 0; Px < Pixels; ++Px)
          XP[size_t(Phys(Nn, C, Px))] =
              float(X.getDouble((Nn * Ch + C) * Pixels + Px));
    for (int64_t Nn = 0; Nn < N; ++Nn)
      for (int64_t C = 0; C < Ch; ++C)
        for (int64_t Px = 0; Px < Pixels; ++Px) {
          const int64_t I = Phys(Nn, C, Px);
          const int64_t KC = I / LP.Inner % LP.Len;
          ASSERT_EQ(KC, C);
          const LrnWindow Win = getLrnWindow(LP, KC);
          float Sum = 0;
          for (int64_t K = Win.Lo; K < Win.Hi; ++K) {
            const float V = XP[size_t(I + (K - KC) * LP.Inner)];
            Sum += V * V;
          }
          const double Expect = Y.getDouble((Nn * Ch + C) * Pixels + Px);
          EXPECT_NEAR(lrnScale(LP, XP[size_t(I)], Sum), Expect,
                      1e-5 * (1 + std::abs(Expect)))
              << (Last ? "nhwc" : "nchw") << " n=" << Nn << " c=" << C
              << " p=" << Px;
        }
  }
}

/// Options planning small recurrences both ways: a launch per direction,
/// and a GEMM and gate kernels per step.
CUDAOptions withRecurrenceLoop(bool Loop) {
  CUDAOptions O;
  O.RecurrenceLoop = Loop;
  return O;
}

/// Plans \p Text, runs it with emulateOnHost on numbered inputs (or those of
/// \p Given), through the kernels' models and through their device code,
/// and compares every output with the reference interpreter's, within
/// \p Tol relative (0: exactly). An empty \p Kernels skips the check of
/// the step names. \p Opts plans it.
void checkOnHostAgainstReference(const std::string &Text,
                                 const std::vector<std::string> &Kernels,
                                 double Tol = 0,
                                 const runtime::TensorMap &Given = {},
                                 const CUDAOptions &Opts = {}) {
  SCOPED_TRACE(Text);
  auto G = parse(Text);
  ASSERT_TRUE(G);
  auto P = plan(*G, Opts);
  ASSERT_TRUE(P);
  if (!Kernels.empty()) {
    EXPECT_EQ(kernels(*P), Kernels);
  }
  runtime::TensorMap In;
  for (const Value *V : G->getInputs()) {
    if (Given.count(V->getName())) {
      In[V->getName()] = Given.at(V->getName());
      continue;
    }
    runtime::Tensor T = runtime::Tensor::zeros(TensorType::get(
        V->getType().getElementType(), V->getType().getStaticShape()));
    for (int64_t I = 0; I < T.getNumElements(); ++I)
      T.setDouble(I, Tol ? std::sin(1.3 * double(I) + 0.2) : double(I) + 0.5);
    In[V->getName()] = T;
  }
  auto Want = runtime::runReference(*G, In);
  ASSERT_TRUE(bool(Want)) << llvm::toString(Want.takeError());
  for (EmulationMode Mode :
       {EmulationMode::Models, EmulationMode::DeviceCode}) {
    SCOPED_TRACE(Mode == EmulationMode::Models ? "models" : "device code");
    auto Emulated = emulateOnHost(*P, In, Mode);
    ASSERT_TRUE(bool(Emulated)) << llvm::toString(Emulated.takeError());
    const runtime::TensorMap &Got = *Emulated;
    for (const auto &KV : *Want) {
      ASSERT_TRUE(Got.count(KV.first)) << KV.first;
      runtime::Tensor W = KV.second.withLayout(Layout());
      const runtime::Tensor &O = Got.at(KV.first);
      ASSERT_EQ(W.getShape(), O.getShape());
      for (int64_t I = 0; I < W.getNumElements(); ++I) {
        if (std::isnan(W.getDouble(I)))
          ASSERT_TRUE(std::isnan(O.getDouble(I)))
              << KV.first << "[" << I << "]";
        else if (Tol == 0)
          ASSERT_EQ(O.getDouble(I), W.getDouble(I))
              << KV.first << "[" << I << "]";
        else
          ASSERT_NEAR(O.getDouble(I), W.getDouble(I),
                      Tol * (1 + std::abs(W.getDouble(I))))
              << KV.first << "[" << I << "]";
      }
    }
  }
}

TEST(CudaPlanTest, TileIsOneStridedCopy) {
  // Each output dim of r * d elements reads its input dim r times (a zero
  // stride over the copies), in any layout.
  checkOnHostAgainstReference(R"(
graph @tile(%x: tensor<2 x 3 x 4 x f32>) {
  %r = Constant() {value = dense<[2, 1, 3]> : tensor<3 x i64>} : tensor<3 x i64>
  %y = Tile(%x, %r) : tensor<4 x 3 x 12 x f32>
  return %y
}
)",
                              {"copy.tile generic f32"});
  checkOnHostAgainstReference(R"(
graph @tile(%x: tensor<1 x 3 x 2 x 2 x f32, nhwc>) {
  %r = Constant() {value = dense<[2, 1, 2, 3]> : tensor<4 x i64>} : tensor<4 x i64>
  %y = Tile(%x, %r) : tensor<2 x 3 x 4 x 6 x f32, nhwc>
  return %y
}
)",
                              {"copy.tile generic f32"});
  // Every dim of a rank-4 tensor repeated: (r, d) per dim is 8 dims, past
  // the copy kernel's 6, so the first half of the repeats goes into a
  // scratch tensor and the rest from it.
  checkOnHostAgainstReference(
      R"(
graph @tile(%x: tensor<2 x 3 x 2 x 2 x f32, nhwc>) {
  %r = Constant() {value = dense<[2, 3, 2, 3]> : tensor<4 x i64>} : tensor<4 x i64>
  %y = Tile(%x, %r) : tensor<4 x 9 x 4 x 6 x f32, nhwc>
  return %y
}
)",
      {"copy.tile generic f32", "copy.tile generic f32"});
}

TEST(CudaPlanTest, ReshapesAndPadsAcrossLayoutsMoveElements) {
  // Flattening a channels-last tensor: one copy over the shape refining
  // both (W, H, C pieces), for floats and for the typed kernel's integers.
  checkOnHostAgainstReference(
      R"(
graph @g(%x: tensor<1 x 8 x 3 x 3 x f32, nhwc>, %i: tensor<1 x 2 x 2 x 3 x i64, nhwc>) {
  %s = Constant() {value = dense<[1, 72]> : tensor<2 x i64>} : tensor<2 x i64>
  %y = Reshape(%x, %s) : tensor<1 x 72 x f32>
  %t = Constant() {value = dense<[2, 6]> : tensor<2 x i64>} : tensor<2 x i64>
  %j = Reshape(%i, %t) : tensor<2 x 6 x i64>
  return %y, %j
}
)",
      {"copy.reshape transpose2d f32", "typed.reshape i64"});
  // 6x4 stored transposed into 4x6: no shape refines both, so the
  // elements go through row-major order: a scratch copy where neither
  // side is stored row-major, else one copy.
  checkOnHostAgainstReference(R"(
graph @g(%x: tensor<6 x 4 x f32, [1, 0]>) {
  %s = Constant() {value = dense<[4, 6]> : tensor<2 x i64>} : tensor<2 x i64>
  %y = Reshape(%x, %s) : tensor<4 x 6 x f32>
  return %y
}
)",
                              {"copy.reshape generic f32"});
  checkOnHostAgainstReference(
      R"(
graph @g(%x: tensor<6 x 4 x f32, [1, 0]>) {
  %s = Constant() {value = dense<[4, 6]> : tensor<2 x i64>} : tensor<2 x i64>
  %y = Reshape(%x, %s) : tensor<4 x 6 x f32, [1, 0]>
  return %y
}
)",
      {"copy.reshape.stage generic f32", "copy.reshape generic f32"});
  checkOnHostAgainstReference(R"(
graph @g(%x: tensor<6 x 4 x f32>) {
  %s = Constant() {value = dense<[4, 6]> : tensor<2 x i64>} : tensor<2 x i64>
  %y = Reshape(%x, %s) : tensor<4 x 6 x f32, [1, 0]>
  return %y
}
)",
                              {"copy.reshape generic f32"});
  // A Pad whose result is stored in another layout pads in its operand's
  // order, then relays out; in every mode.
  for (const char *Mode : {"constant", "reflect", "edge"})
    checkOnHostAgainstReference(
        std::string(R"(
graph @g(%x: tensor<1 x 2 x 3 x 3 x f32, nhwc>) {
  %p = Constant() {value = dense<[0, 0, 1, 2, 0, 1, 2, 1]> : tensor<8 x i64>} : tensor<8 x i64>
  %y = Pad(%x, %p) {mode = ")") +
            Mode + R"("} : tensor<1 x 3 x 6 x 6 x f32>
  return %y
}
)",
        {std::string("pad.") + Mode + " f32", "copy.relayout generic f32"});
}

TEST(CudaPlanTest, GatherWithFewConstantIndicesIsACopyPerIndex) {
  // A scalar index drops the axis (a class token); a vector or matrix of
  // indices (negative ones count from the end) replaces it; any layout.
  checkOnHostAgainstReference(R"(
graph @g(%x: tensor<2 x 5 x 3 x f32>) {
  %i = Constant() {value = dense<1> : tensor<i64>} : tensor<i64>
  %y = Gather(%x, %i) {axis = 1} : tensor<2 x 3 x f32>
  return %y
}
)",
                              {"copy.gather generic f32"});
  checkOnHostAgainstReference(R"(
graph @g(%x: tensor<2 x 6 x 3 x 4 x f32, nhwc>) {
  %i = Constant() {value = dense<[4, -1, 0, 2]> : tensor<2 x 2 x i64>} : tensor<2 x 2 x i64>
  %y = Gather(%x, %i) {axis = 1} : tensor<2 x 2 x 2 x 3 x 4 x f32>
  return %y
}
)",
                              std::vector<std::string>(4, "copy.gather generic f32"));
  // More indices: one typed gather step.
  checkOnHostAgainstReference(R"(
graph @g(%x: tensor<100 x 8 x f32>) {
  %i = Constant() {value = dense<[3, 97, -1, 0, 5, 5, 42, 8, 13, 21, 34, 55, 89, 1, 2, 4, 6, 7, 9, 10, 11, 12, 14, 15, 16, 17, 18, 19, 20, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, -100]> : tensor<40 x i64>} : tensor<40 x i64>
  %y = Gather(%x, %i) : tensor<40 x 8 x f32>
  return %y
}
)",
                              {"typed.gather f32 by i64"});
}

TEST(CudaPlanTest, DepthToSpaceAndBackAreStridedCopies) {
  for (const char *L : {"", ", nhwc"}) {
    for (const char *Mode : {"DCR", "CRD"})
      checkOnHostAgainstReference(
          std::string("graph @d2s(%x: tensor<2 x 8 x 2 x 3 x f32") + L +
              ">) {\n  %y = DepthToSpace(%x) {blocksize = 2, mode = \"" +
              Mode + "\"} : tensor<2 x 2 x 4 x 6 x f32" + L +
              ">\n  return %y\n}\n",
          {"copy.depthtospace generic f32"});
    checkOnHostAgainstReference(
        std::string("graph @s2d(%x: tensor<2 x 2 x 4 x 6 x f32") + L +
            ">) {\n  %y = SpaceToDepth(%x) {blocksize = 2} : "
            "tensor<2 x 8 x 2 x 3 x f32" +
            L + ">\n  return %y\n}\n",
        {"copy.spacetodepth generic f32"});
  }
}

/// A tensor of \p Type and \p Shape holding \p Values in row-major order.
runtime::Tensor tensorOf(ElementType Type, llvm::ArrayRef<int64_t> Shape,
                         llvm::ArrayRef<double> Values) {
  runtime::Tensor T = runtime::Tensor::zeros(TensorType::get(Type, Shape));
  EXPECT_EQ(int64_t(Values.size()), T.getNumElements());
  for (size_t I = 0; I < Values.size(); ++I)
    T.setDouble(int64_t(I), Values[I]);
  return T;
}

/// "dense<[...]> : tensor<...>" of \p Count values of a fixed pattern.
std::string denseOf(llvm::ArrayRef<int64_t> Shape, double Scale, double Phase) {
  int64_t Count = 1;
  std::string Dims;
  for (int64_t D : Shape) {
    Count *= D;
    Dims += std::to_string(D) + " x ";
  }
  std::string S = "dense<[";
  for (int64_t I = 0; I < Count; ++I)
    S += (I ? ", " : "") +
         std::to_string(Scale * std::sin(0.37 * double(I) + Phase));
  return S + "]> : tensor<" + Dims + "f32>";
}

TEST(CudaPlanTest, LstmPlansMatchTheReferenceOnTheHost) {
  // Seq 3, batch 2, input 3, hidden 2: every direction, both layouts,
  // biases, peepholes, initial states, clip and input_forget. The plan's
  // GEMMs, gate steps and copies run on the host (the gate step through
  // DeviceMath.h's lstmUnit) and must give the reference's Y, Y_h, Y_c.
  struct LstmCase {
    const char *Direction;
    int Layout;
    bool Bias, Peep, Initial;
    const char *Extra;
  };
  const LstmCase Cases[] = {
      {"forward", 0, false, false, false, ""},
      {"reverse", 0, true, false, false, ""},
      {"bidirectional", 0, true, true, true, ", clip = 0.9"},
      {"bidirectional", 1, true, false, true, ""},
      {"forward", 1, true, true, false, ", input_forget = 1"},
  };
  const int64_t Seq = 3, Batch = 2, In = 3, H = 2;
  for (const LstmCase &K : Cases) {
    const int64_t Dirs = std::string(K.Direction) == "bidirectional" ? 2 : 1;
    auto Shape = [&](std::initializer_list<int64_t> L0,
                     std::initializer_list<int64_t> L1) {
      std::string S = "tensor<";
      for (int64_t D : K.Layout ? L1 : L0)
        S += std::to_string(D) + " x ";
      return S + "f32>";
    };
    const std::string XT = Shape({Seq, Batch, In}, {Batch, Seq, In});
    const std::string ST = Shape({Dirs, Batch, H}, {Batch, Dirs, H});
    const std::string YT = Shape({Seq, Dirs, Batch, H}, {Batch, Seq, Dirs, H});
    std::string T = "graph @lstm(%x: " + XT;
    // Initial states stored with their first two dims swapped: read
    // through their strides.
    std::string STIn = ST;
    if (K.Initial && K.Layout == 0 && Dirs == 2)
      STIn.insert(STIn.size() - 1, ", [1, 0, 2]");
    if (K.Initial)
      T += ", %h0: " + STIn + ", %c0: " + STIn;
    T += ") {\n";
    T += "  %w = Constant() {value = " + denseOf({Dirs, 4 * H, In}, 0.8, 0.1) +
         "} : " + Shape({Dirs, 4 * H, In}, {Dirs, 4 * H, In}) + "\n";
    T += "  %r = Constant() {value = " + denseOf({Dirs, 4 * H, H}, 0.7, 0.5) +
         "} : " + Shape({Dirs, 4 * H, H}, {Dirs, 4 * H, H}) + "\n";
    if (K.Bias)
      T += "  %b = Constant() {value = " + denseOf({Dirs, 8 * H}, 0.3, 0.9) +
           "} : " + Shape({Dirs, 8 * H}, {Dirs, 8 * H}) + "\n";
    if (K.Peep)
      T += "  %p = Constant() {value = " + denseOf({Dirs, 3 * H}, 0.5, 1.7) +
           "} : " + Shape({Dirs, 3 * H}, {Dirs, 3 * H}) + "\n";
    T += std::string("  %y, %yh, %yc = LSTM(%x, %w, %r, ") +
         (K.Bias ? "%b" : "none") + ", none, " +
         (K.Initial ? "%h0, %c0" : "none, none") + (K.Peep ? ", %p" : "") +
         ") {direction = \"" + K.Direction +
         "\", hidden_size = 2, layout = " + std::to_string(K.Layout) +
         K.Extra + "} : " + YT + ", " + ST + ", " + ST + "\n";
    T += "  return %y, %yh, %yc\n}\n";
    for (bool Loop : {true, false})
      checkOnHostAgainstReference(T, {}, 1e-5, {}, withRecurrenceLoop(Loop));
  }

  // One step's kernels: the projection once, then per direction and step
  // a recurrent product (none first, without an initial state) and a cell;
  // or, by default for one this small, every step in one launch.
  auto G = parse(R"(
graph @l(%x: tensor<3 x 1 x 2 x f32>) {
  %w = Constant() {value = dense<0.5> : tensor<1 x 8 x 2 x f32>} : tensor<1 x 8 x 2 x f32>
  %r = Constant() {value = dense<0.25> : tensor<1 x 8 x 2 x f32>} : tensor<1 x 8 x 2 x f32>
  %y, %yh = LSTM(%x, %w, %r) {hidden_size = 2} : tensor<3 x 1 x 1 x 2 x f32>, tensor<1 x 1 x 2 x f32>
  return %yh
}
)");
  ASSERT_TRUE(G);
  auto Loop = plan(*G);
  ASSERT_TRUE(Loop);
  EXPECT_EQ(kernels(*Loop), (std::vector<std::string>{
                                "cublaslt.gemm nt f32 (lstm input projection)",
                                "lstm.loop f32 forward (3 steps)",
                                "copy.lstm Y_h contiguous f32"}));
  auto P = plan(*G, withRecurrenceLoop(false));
  ASSERT_TRUE(P);
  EXPECT_EQ(kernels(*P),
            (std::vector<std::string>{
                "cublaslt.gemm nt f32 (lstm input projection)",
                "lstm.cell f32 forward step 0",
                "cublaslt.gemm nt f32 (lstm recurrent product)",
                "lstm.cell f32 forward step 1",
                "cublaslt.gemm nt f32 (lstm recurrent product)",
                "lstm.cell f32 forward step 2", "copy.lstm Y_h contiguous f32"}));
}

TEST(CudaPlanTest, GruPlansMatchTheReferenceOnTheHost) {
  // As the LSTM test, with linear_before_reset both ways (without it, a
  // reset kernel and a third GEMM per step).
  struct GruCase {
    const char *Direction;
    int Layout;
    bool Bias, Initial;
    int Lbr;
    const char *Extra;
  };
  const GruCase Cases[] = {
      {"forward", 0, false, false, 0, ""},
      {"reverse", 0, true, true, 1, ""},
      {"bidirectional", 0, true, true, 0, ", clip = 0.8"},
      {"bidirectional", 1, true, false, 1, ""},
      {"forward", 1, true, true, 0, ""},
  };
  const int64_t Seq = 3, Batch = 2, In = 3, H = 2;
  for (const GruCase &K : Cases) {
    const int64_t Dirs = std::string(K.Direction) == "bidirectional" ? 2 : 1;
    auto Shape = [&](std::initializer_list<int64_t> L0,
                     std::initializer_list<int64_t> L1) {
      std::string S = "tensor<";
      for (int64_t D : K.Layout ? L1 : L0)
        S += std::to_string(D) + " x ";
      return S + "f32>";
    };
    const std::string ST = Shape({Dirs, Batch, H}, {Batch, Dirs, H});
    std::string T = "graph @gru(%x: " + Shape({Seq, Batch, In}, {Batch, Seq, In});
    if (K.Initial)
      T += ", %h0: " + ST;
    T += ") {\n";
    T += "  %w = Constant() {value = " + denseOf({Dirs, 3 * H, In}, 0.9, 0.3) +
         "} : " + Shape({Dirs, 3 * H, In}, {Dirs, 3 * H, In}) + "\n";
    T += "  %r = Constant() {value = " + denseOf({Dirs, 3 * H, H}, 0.8, 1.1) +
         "} : " + Shape({Dirs, 3 * H, H}, {Dirs, 3 * H, H}) + "\n";
    if (K.Bias)
      T += "  %b = Constant() {value = " + denseOf({Dirs, 6 * H}, 0.4, 0.2) +
           "} : " + Shape({Dirs, 6 * H}, {Dirs, 6 * H}) + "\n";
    T += std::string("  %y, %yh = GRU(%x, %w, %r, ") +
         (K.Bias ? "%b" : "none") + ", none" + (K.Initial ? ", %h0" : "") +
         ") {direction = \"" + K.Direction +
         "\", hidden_size = 2, layout = " + std::to_string(K.Layout) +
         ", linear_before_reset = " + std::to_string(K.Lbr) + K.Extra +
         "} : " + Shape({Seq, Dirs, Batch, H}, {Batch, Seq, Dirs, H}) + ", " +
         ST + "\n";
    T += "  return %y, %yh\n}\n";
    for (bool Loop : {true, false})
      checkOnHostAgainstReference(T, {}, 1e-5, {}, withRecurrenceLoop(Loop));
  }
}

TEST(CudaPlanTest, RecurrencesFollowSequenceLengthsOnTheHost) {
  // sequence_lens computed at run time (an input: 3, 1 and 0 of 3 steps)
  // and constant (2, 0, 3): each entry runs its own steps (a reverse
  // direction from its own last step), Y is zero past its length and
  // Y_h / Y_c hold its last state; an entry of length 0 keeps its initial
  // state, or zeros without one. GRU both ways of linear_before_reset,
  // LSTM, both layouts (seq = batch = 3, so X reads either way).
  runtime::TensorMap In;
  In["len"] = tensorOf(ElementType::I32, {3}, {3, 1, 0});
  std::string T = "graph @rnn(%x: tensor<3 x 3 x 2 x f32>, %len: tensor<3 x "
                  "i32>, %h0: tensor<2 x 3 x 2 x f32>) {\n";
  T += "  %w = Constant() {value = " + denseOf({2, 6, 2}, 0.9, 0.3) +
       "} : tensor<2 x 6 x 2 x f32>\n";
  T += "  %r = Constant() {value = " + denseOf({2, 6, 2}, 0.8, 1.1) +
       "} : tensor<2 x 6 x 2 x f32>\n";
  T += "  %b = Constant() {value = " + denseOf({2, 12}, 0.4, 0.2) +
       "} : tensor<2 x 12 x f32>\n";
  T += "  %lw = Constant() {value = " + denseOf({2, 8, 2}, 0.8, 0.1) +
       "} : tensor<2 x 8 x 2 x f32>\n";
  T += "  %lr = Constant() {value = " + denseOf({2, 8, 2}, 0.7, 0.5) +
       "} : tensor<2 x 8 x 2 x f32>\n";
  T += "  %cl = Constant() {value = dense<[2, 0, 3]> : tensor<3 x i64>} : "
       "tensor<3 x i64>\n";
  T +=
      R"(  %y, %yh = GRU(%x, %w, %r, %b, %len, %h0) {direction = "bidirectional", hidden_size = 2, linear_before_reset = 1} : tensor<3 x 2 x 3 x 2 x f32>, tensor<2 x 3 x 2 x f32>
  %y2, %yh2 = GRU(%x, %w, %r, %b, %len) {direction = "bidirectional", hidden_size = 2} : tensor<3 x 2 x 3 x 2 x f32>, tensor<2 x 3 x 2 x f32>
  %y3, %yh3 = GRU(%x, %w, %r, %b, %cl) {direction = "bidirectional", hidden_size = 2, layout = 1} : tensor<3 x 3 x 2 x 2 x f32>, tensor<3 x 2 x 2 x f32>
  %ly, %lyh, %lyc = LSTM(%x, %lw, %lr, none, %len) {direction = "bidirectional", hidden_size = 2} : tensor<3 x 2 x 3 x 2 x f32>, tensor<2 x 3 x 2 x f32>, tensor<2 x 3 x 2 x f32>
  %my, %myh, %myc = LSTM(%x, %lw, %lr, none, %cl) {direction = "bidirectional", hidden_size = 2, layout = 1} : tensor<3 x 3 x 2 x 2 x f32>, tensor<3 x 2 x 2 x f32>, tensor<3 x 2 x 2 x f32>
  return %y, %yh, %y2, %yh2, %y3, %yh3, %ly, %lyh, %lyc, %my, %myh, %myc
}
)";
  for (bool Loop : {true, false})
    checkOnHostAgainstReference(T, {}, 1e-5, In, withRecurrenceLoop(Loop));
  // Steps are numbered in the direction's order when lengths pick times.
  auto G = parse(T);
  ASSERT_TRUE(G);
  auto P = plan(*G, withRecurrenceLoop(false));
  ASSERT_TRUE(P);
  const std::vector<std::string> K = kernels(*P);
  EXPECT_NE(llvm::find(K, "gru.cell f32 reverse step 0 by sequence_lens"),
            K.end());
}

TEST(CudaPlanTest, VariadicSumsAndAGemmsMatrixCRunInPlace) {
  // Sum of three: the first two into y, the third added to y in place,
  // the activation last.
  auto G = parse(R"(
graph @sum(%a: tensor<2 x 5 x f32>, %b: tensor<5 x f32>, %c: tensor<2 x 5 x f32>) {
  %s = Sum(%a, %b, %c) : tensor<2 x 5 x f32>
  %m = Max(%a, %b, %c, %s) : tensor<2 x 5 x f32>
  return %m
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  EXPECT_EQ(kernels(*P),
            (std::vector<std::string>{
                "elementwise.sum f32 (operands 1-2 of 3)",
                "elementwise.sum f32 (operand 3 of 3)",
                "elementwise.max f32 (operands 1-2 of 4)",
                "elementwise.max f32 (operand 3 of 4)",
                "elementwise.max f32 (operand 4 of 4)"}));
  const PlanImpl &I = P->getImpl();
  const BufferId S = I.Steps[0].Args[2].Buffer;
  EXPECT_EQ(I.Steps[1].Args[0].Buffer, S);
  EXPECT_EQ(I.Steps[1].Args[2].Buffer, S);
  const ElementwiseParams &Second = params<ElementwiseParams>(*P, 1);
  EXPECT_EQ(Second.Op, BinaryOp::Add);
  // b (5) broadcast over rows: a zero stride on the outer dim.
  const ElementwiseParams &First = params<ElementwiseParams>(*P, 0);
  EXPECT_EQ(First.BStrides[0], 0);
  EXPECT_EQ(First.BStrides[1], 1);

  // Gemm with C a matrix computed at run time (addmm): the product, then
  // y += C in place with the fused activation.
  auto Addmm = parse(R"(
graph @addmm(%a: tensor<3 x 4 x f32>, %c: tensor<3 x 5 x f32>) {
  %w = Constant() {value = dense<0.5> : tensor<4 x 5 x f32>} : tensor<4 x 5 x f32>
  %g = Gemm(%a, %w, %c) : tensor<3 x 5 x f32>
  %r = Relu(%g) : tensor<3 x 5 x f32>
  return %r
}
)");
  ASSERT_TRUE(Addmm);
  auto PA = plan(*Addmm);
  ASSERT_TRUE(PA);
  EXPECT_EQ(kernels(*PA),
            (std::vector<std::string>{"cublaslt.gemm nn f32",
                                      "elementwise.add+relu f32 (gemm's C)"}));
  EXPECT_FALSE(params<GemmStep>(*PA, 0).Desc.Epilogue.Bias);
  EXPECT_TRUE(params<GemmStep>(*PA, 0).Desc.Epilogue.Act.isNone());
  const PlanImpl &IA = PA->getImpl();
  EXPECT_EQ(IA.Steps[1].Args[0].Buffer, IA.Steps[0].Args[2].Buffer);
  EXPECT_EQ(IA.Steps[1].Args[2].Buffer, IA.Steps[0].Args[2].Buffer);
}

TEST(CudaPlanTest, MatMulReadsTransposedMatricesInPlace) {
  // A channels-last rank-3 operand is a batch of transposed matrices: a
  // spectrogram [1, frames, bins] stored [1, bins, frames] times a
  // filterbank, a batched product of two activations, and a batch of
  // them times one matrix.
  checkOnHostAgainstReference(R"(
graph @mel(%s: tensor<1 x 6 x 5 x f32, nwc>) {
  %fb = Constant() {value = dense<[0.5, -1.0, 0.25, 2.0, 1.5, 0.0, -0.5, 1.0, 0.75, 3.0, -2.0, 0.5, 1.0, 1.0, -1.5, 0.25, 2.5, -0.75, 0.5, 1.25]> : tensor<5 x 4 x f32>} : tensor<5 x 4 x f32>
  %y = MatMul(%s, %fb) : tensor<1 x 6 x 4 x f32>
  return %y
}
)",
                              {"cublaslt.gemm tn f32"}, 1e-6);
  checkOnHostAgainstReference(R"(
graph @bmm(%a: tensor<2 x 3 x 4 x f32, nwc>, %b: tensor<2 x 4 x 5 x f32, nwc>) {
  %y = MatMul(%a, %b) : tensor<2 x 3 x 5 x f32>
  return %y
}
)",
                              {"cublaslt.gemm tt f32 batch2"}, 1e-6);
  // A batch of transposed matrices by one shared matrix: batched, B's
  // batch stride 0.
  checkOnHostAgainstReference(R"(
graph @g(%a: tensor<2 x 3 x 4 x f32, nwc>) {
  %b = Constant() {value = dense<[0.5, -1.0, 0.25, 2.0, 1.5, 0.0, -0.5, 1.0, 0.75, 3.0, -2.0, 0.5, 1.0, 1.0, -1.5, 0.25, 2.5, -0.75, 0.5, 1.25]> : tensor<4 x 5 x f32>} : tensor<4 x 5 x f32>
  %y = MatMul(%a, %b) : tensor<2 x 3 x 5 x f32>
  return %y
}
)",
                              {"cublaslt.gemm tn f32 batch2"}, 1e-6);
}

TEST(CudaPlanTest, EinsumIsCopiesReductionsAndOneGemm) {
  // Batched products (written in place, or copied into a permuted
  // result), transposes, diagonals and traces, labels summed in one
  // operand only, outer and inner products, `...`, a dim of 1 broadcast,
  // a channels-last operand and constant operands arranged on the host.
  struct EinsumCase {
    const char *Equation, *Operands, *Result;
    std::vector<std::string> Kernels;
  };
  const EinsumCase Cases[] = {
      {"bij,bjk->bik",
       "%a: tensor<2 x 3 x 4 x f32>, %b: tensor<2 x 4 x 5 x f32>",
       "tensor<2 x 3 x 5 x f32>",
       {"cublaslt.gemm nn f32 batch2 (einsum)"}},
      {"bij,bjk->kbi",
       "%a: tensor<2 x 3 x 4 x f32>, %b: tensor<2 x 4 x 5 x f32>",
       "tensor<5 x 2 x 3 x f32>",
       {"cublaslt.gemm nn f32 batch2 (einsum)", "copy.einsum generic f32"}},
      {"ij->ji",
       "%a: tensor<3 x 4 x f32>",
       "tensor<4 x 3 x f32>",
       {"copy.einsum generic f32"}},
      {"ii->i",
       "%a: tensor<4 x 4 x f32>",
       "tensor<4 x f32>",
       {"copy.einsum generic f32"}},
      {"ii",
       "%a: tensor<4 x 4 x f32>",
       "tensor<f32>",
       {"copy.einsum generic f32", "reduce.sum.rows f32 (einsum)",
        "copy.einsum contiguous f32"}},
      {"ijk,jl->il",
       "%a: tensor<3 x 4 x 2 x f32>, %b: tensor<4 x 5 x f32>",
       "tensor<3 x 5 x f32>",
       {"reduce.sum.rows f32 (einsum)", "cublaslt.gemm nn f32 (einsum)"}},
      {"i,j->ij",
       "%a: tensor<3 x f32>, %b: tensor<4 x f32>",
       "tensor<3 x 4 x f32>",
       {"cublaslt.gemm nn f32 (einsum)"}},
      {"ij,ij->i",
       "%a: tensor<3 x 4 x f32>, %b: tensor<3 x 4 x f32>",
       "tensor<3 x f32>",
       {"cublaslt.gemm nn f32 batch3 (einsum)"}},
      {"...ij,jk->...ik",
       "%a: tensor<2 x 2 x 3 x 4 x f32>, %b: tensor<4 x 5 x f32>",
       "tensor<2 x 2 x 3 x 5 x f32>",
       {"cublaslt.gemm nn f32 (einsum)"}},
      {"bij,bjk->bik",
       "%a: tensor<1 x 3 x 4 x f32>, %b: tensor<2 x 4 x 5 x f32>",
       "tensor<2 x 3 x 5 x f32>",
       {"copy.einsum generic f32", "cublaslt.gemm nn f32 batch2 (einsum)"}},
      {"nchw,cd->nhwd",
       "%a: tensor<2 x 3 x 4 x 5 x f32, nhwc>",
       "tensor<2 x 4 x 5 x 6 x f32>",
       {}},
  };
  for (const EinsumCase &K : Cases) {
    std::string T = std::string("graph @e(") + K.Operands + ") {\n";
    std::string Args = "%a";
    if (std::string(K.Equation) == "nchw,cd->nhwd") {
      T += "  %b = Constant() {value = " + denseOf({3, 6}, 0.7, 0.2) +
           "} : tensor<3 x 6 x f32>\n";
      Args += ", %b";
    } else if (std::string(K.Operands).find("%b") != std::string::npos) {
      Args += ", %b";
    }
    T += "  %y = Einsum(" + Args + ") {equation = \"" + K.Equation +
         "\"} : " + K.Result + "\n  return %y\n}\n";
    checkOnHostAgainstReference(T, K.Kernels, 1e-5);
  }
}

TEST(CudaPlanTest, LayerNormsInAnyLayoutWithStatistics) {
  // Normalized dims stored innermost (rows) or with dims after them
  // (columns), in an order other than the logical one (the affine
  // constants arranged to match), and the Mean / InvStdDev results stored
  // in the order X stores its lines.
  checkOnHostAgainstReference(R"(
graph @ln(%x: tensor<2 x 3 x 4 x 5 x f32, nhwc>) {
  %s = Constant() {value = )" + denseOf({3, 4, 5}, 0.9, 0.4) +
                                  R"(} : tensor<3 x 4 x 5 x f32>
  %b = Constant() {value = )" + denseOf({3, 4, 5}, 0.3, 1.1) +
                                  R"(} : tensor<3 x 4 x 5 x f32>
  %y, %m, %r = LayerNormalization(%x, %s, %b) {axis = 1} : tensor<2 x 3 x 4 x 5 x f32, nhwc>, tensor<2 x 1 x 1 x 1 x f32>, tensor<2 x 1 x 1 x 1 x f32>
  return %y, %m, %r
}
)",
                              {"norm.layernormalization.rows f32+statistics"},
                              1e-5);
  checkOnHostAgainstReference(
      R"(
graph @ln(%x: tensor<2 x 3 x 5 x f32, nwc>) {
  %s = Constant() {value = )" +
          denseOf({5}, 0.9, 0.4) +
          R"(} : tensor<5 x f32>
  %y, %m = LayerNormalization(%x, %s) {axis = -1, epsilon = 0.01} : tensor<2 x 3 x 5 x f32, nwc>, tensor<2 x 3 x 1 x f32, nwc>
  return %y, %m
}
)",
      {"norm.layernormalization.strided f32+statistics"}, 1e-5);
  // Lines in an order the statistics do not share: refused.
  auto G = parse(R"(
graph @ln(%x: tensor<2 x 3 x 5 x f32, nwc>) {
  %s = Constant() {value = dense<1.0> : tensor<5 x f32>} : tensor<5 x f32>
  %y, %m = LayerNormalization(%x, %s) {axis = -1} : tensor<2 x 3 x 5 x f32, nwc>, tensor<2 x 3 x 1 x f32, [1, 0, 2]>
  return %y, %m
}
)");
  ASSERT_TRUE(G);
  EXPECT_NE(planError(*G).find("LayerNormalization with statistics results"),
            std::string::npos)
      << planError(*G);
}

TEST(CudaPlanTest, GemmTransposesActivationsByItsAttributes) {
  // transA / transB on operands computed at run time (row-major, or
  // stored transposed themselves): the product reads each storage the
  // right way round.
  checkOnHostAgainstReference(R"(
graph @g(%a: tensor<6 x 3 x f32>, %b: tensor<5 x 6 x f32>) {
  %y = Gemm(%a, %b) {transA = 1, transB = 1} : tensor<3 x 5 x f32>
  return %y
}
)",
                              {"cublaslt.gemm tt f32"}, 1e-6);
  checkOnHostAgainstReference(R"(
graph @g(%a: tensor<6 x 3 x f32, [1, 0]>, %b: tensor<6 x 5 x f32>) {
  %y = Gemm(%a, %b) {transA = 1} : tensor<3 x 5 x f32>
  return %y
}
)",
                              {"cublaslt.gemm nn f32"}, 1e-6);
}

TEST(CudaPlanTest, SmallFormsOfCommonOps) {
  // Forms ONNX's backend tests use: Max of one operand (with a fused
  // Relu), a reduction with noop_with_empty_axes (each element alone),
  // Dropout's all-true mask in inference, a bool mask relaid out, and
  // reductions over dims apart in storage.
  checkOnHostAgainstReference(
      R"(
graph @g(%x: tensor<2 x 3 x f32>, %m: tensor<2 x 3 x 4 x bool>) {
  %a = Max(%x) : tensor<2 x 3 x f32>
  %r = Relu(%a) : tensor<2 x 3 x f32>
  %n = ReduceSum(%x) {noop_with_empty_axes = 1} : tensor<2 x 3 x f32>
  %l = ReduceL2(%x) {noop_with_empty_axes = 1} : tensor<2 x 3 x f32>
  %d, %k = Dropout(%x) : tensor<2 x 3 x f32>, tensor<2 x 3 x bool>
  %t = relayout(%m) : tensor<2 x 3 x 4 x bool, nwc>
  return %r, %n, %l, %d, %k, %t
}
)",
      {"elementwise.relu f32", "reduce.reducesum.rows f32",
       "reduce.reducel2.rows f32", "typed.fill bool", "typed.relayout bool"},
      1e-6);
  // Reduced dims apart in storage: gathered by a copy, then rows; an
  // Identity stored in another layout: a relayout.
  checkOnHostAgainstReference(
      R"(
graph @g(%x: tensor<2 x 3 x 4 x 5 x f32, nhwc>) {
  %a = Constant() {value = dense<[0, 2]> : tensor<2 x i64>} : tensor<2 x i64>
  %y = ReduceMean(%x, %a) : tensor<1 x 3 x 1 x 5 x f32>
  %b = Constant() {value = dense<[1, 3]> : tensor<2 x i64>} : tensor<2 x i64>
  %z = ReduceMax(%x, %b) {keepdims = 0} : tensor<2 x 4 x f32, [1, 0]>
  %c = Identity(%x) : tensor<2 x 3 x 4 x 5 x f32>
  return %y, %z, %c
}
)",
      {"copy.reduce generic f32", "reduce.reducemean.rows f32",
       "copy.reduce generic f32", "reduce.reducemax.rows f32",
       "copy.relayout generic f32"},
      1e-5);
}

TEST(CudaPlanTest, AsymmetricConvPadsPadInTheConvsOrder) {
  // X stored [0, 3, 2, 1] with H = 1 is NHWC's bytes, but its padded copy
  // (H grows) must be written NHWC, as the conv reads it; likewise the
  // uncropped output of a ConvTranspose whose Y is stored that way (found
  // by strider-fuzz through the host emulation).
  checkOnHostAgainstReference(R"(
graph @g(%x: tensor<1 x 4 x 1 x 5 x f32, [0, 3, 2, 1]>) {
  %w = Constant() {value = )" + denseOf({4, 4, 3, 3}, 0.6, 0.3) +
                                  R"(} : tensor<4 x 4 x 3 x 3 x f32>
  %y = Conv(%x, %w) {kernel_shape = [3, 3], pads = [2, 2, 1, 0], strides = [2, 2]} : tensor<1 x 4 x 1 x 3 x f32, nhwc>
  return %y
}
)",
                              {"pad.constant f32 (asymmetric conv pads)",
                               "cudnn.conv nhwc>nhwc f32"},
                              1e-5);
  checkOnHostAgainstReference(R"(
graph @g(%x: tensor<1 x 4 x 1 x 3 x f32, nhwc>) {
  %w = Constant() {value = )" + denseOf({4, 2, 3, 3}, 0.6, 0.3) +
                                  R"(} : tensor<4 x 2 x 3 x 3 x f32>
  %y = ConvTranspose(%x, %w) {kernel_shape = [3, 3], pads = [2, 1, 0, 0], strides = [2, 2]} : tensor<1 x 2 x 1 x 6 x f32, [0, 3, 2, 1]>
  return %y
}
)",
                              {}, 1e-5);
}

TEST(CudaPlanTest, ConvTransposeOutputsPastTheFullOneArePadded) {
  // An output_shape larger than the full output (negative pads) asks for
  // outputs beyond what cuDNN computes: they hold the bias alone. The
  // full output goes to a scratch buffer, the Pad kernel writes Y (zeros
  // beyond it), then the epilogue; both layouts.
  for (const char *L : {"", ", nhwc"})
    checkOnHostAgainstReference(
        std::string(R"(
graph @g(%x: tensor<1 x 2 x 3 x 3 x f32)") +
            L + R"(>) {
  %w = Constant() {value = )" +
            denseOf({2, 3, 3, 3}, 0.6, 0.3) +
            R"(} : tensor<2 x 3 x 3 x 3 x f32>
  %b = Constant() {value = dense<[0.5, -1.0, 2.0]> : tensor<3 x f32>} : tensor<3 x f32>
  %y = ConvTranspose(%x, %w, %b) {kernel_shape = [3, 3], strides = [3, 2], output_shape = [10, 8]} : tensor<1 x 3 x 10 x 8 x f32)" +
            L + R"(>
  return %y
}
)",
        {std::string("cudnn.conv_transpose ") +
             (*L ? "nhwc>nhwc" : "nchw>nchw") +
             " f32 (uncropped: asymmetric "
             "pads)",
         "pad.constant f32 (conv_transpose output past the full one)",
         std::string("epilogue.conv_transpose ") + (*L ? "nhwc" : "nchw") +
             " f32+bias"},
        1e-5);
}

TEST(CudaPlanTest, STFTIsAFrameCopyAndAGemmByTheBasis) {
  // Overlapping frames with a window, frames with gaps and only a frame
  // length, two-sided.
  checkOnHostAgainstReference(
      R"(
graph @stft(%x: tensor<2 x 40 x 1 x f32>) {
  %s = Constant() {value = dense<6> : tensor<i64>} : tensor<i64>
  %w = Constant() {value = dense<[0.0, 0.1, 0.35, 0.65, 0.9, 1.0, 0.9, 0.65, 0.35, 0.1]> : tensor<10 x f32>} : tensor<10 x f32>
  %y = STFT(%x, %s, %w) : tensor<2 x 6 x 6 x 2 x f32>
  return %y
}
)",
      {"copy.frames generic f32", "cublaslt.gemm nn f32 (stft basis)"}, 1e-5);
  checkOnHostAgainstReference(R"(
graph @stft(%x: tensor<1 x 50 x f32>) {
  %s = Constant() {value = dense<12> : tensor<i64>} : tensor<i64>
  %n = Constant() {value = dense<9> : tensor<i64>} : tensor<i64>
  %y = STFT(%x, %s, none, %n) {onesided = 0} : tensor<1 x 4 x 9 x 2 x f32>
  return %y
}
)",
                              {}, 1e-5);
}

TEST(CudaPlanTest, GathersAndScattersByRunTimeIndices) {
  // An embedding lookup, a Gather along a middle axis by negative i32
  // indices computed at run time (its result also stored channels-last),
  // GatherElements, and ScatterElements with indices repeated within a
  // row (the last update wins).
  checkOnHostAgainstReference(R"(
graph @g(%ids: tensor<2 x 3 x i64>, %x: tensor<2 x 5 x 3 x f32>, %j: tensor<2 x i32>, %e: tensor<3 x 2 x i64>, %d: tensor<3 x 5 x f32>, %u: tensor<3 x 2 x f32>) {
  %w = Constant() {value = dense<[0.5, -1.0, 2.0, 0.25, 1.5, 3.0, -0.5, 0.75, 1.0, -2.0, 0.125, 4.0, -3.0, 2.5, 0.0, 1.25, 6.0, -1.5, 0.5, 2.0, 7.0, -4.0, 3.5, 1.0]> : tensor<6 x 4 x f32>} : tensor<6 x 4 x f32>
  %three = Constant() {value = dense<3> : tensor<i32>} : tensor<i32>
  %two = Constant() {value = dense<2> : tensor<i64>} : tensor<i64>
  %emb = Gather(%w, %ids) : tensor<2 x 3 x 4 x f32>
  %jn = Sub(%j, %three) : tensor<2 x i32>
  %mid = Gather(%x, %jn) {axis = 1} : tensor<2 x 2 x 3 x f32>
  %midl = Gather(%x, %jn) {axis = 1} : tensor<2 x 2 x 3 x f32, nwc>
  %eh = Div(%e, %two) : tensor<3 x 2 x i64>
  %ge = GatherElements(%d, %eh) {axis = 1} : tensor<3 x 2 x f32>
  %sc = ScatterElements(%d, %eh, %u) {axis = 1} : tensor<3 x 5 x f32>
  return %emb, %mid, %midl, %ge, %sc
}
)",
                              {"typed.gather f32 by i64", "typed.sub i32",
                               "typed.gather f32 by i32",
                               "typed.gather f32 by i32", "typed.div i64",
                               "typed.gather_elements f32 by i64",
                               "typed.copy f32", "typed.scatter f32 by i64"});
}

TEST(CudaPlanTest, ArgExtremesAndTopKRunARowPerThread) {
  // Rows with ties: ArgMax/ArgMin keep the first extreme (the last with
  // select_last_index), with and without keepdims, along any axis, of
  // f32, f16 and i64; TopK keeps the earlier of equal values first, K up
  // to the whole row, largest or smallest, results in either layout, and
  // only its positions read (its values in a scratch buffer). The i64
  // positions also cast to u8 (a model's byte output).
  runtime::TensorMap In;
  In["x"] = tensorOf(ElementType::F32, {3, 5},
                     {1, 5, 5, 2, 5, 0, -1, 3, 3, -1, 4, 4, 4, 4, 4});
  std::vector<double> H;
  for (int I = 0; I < 24; ++I)
    H.push_back(double((I * 7) % 5) - 2.5);
  In["h"] = tensorOf(ElementType::F16, {2, 4, 3}, H);
  In["n"] = tensorOf(ElementType::I64, {2, 6},
                     {3, 1, 3, 9, 1, 3, -2, 5, 5, 0, 7, -2});
  checkOnHostAgainstReference(
      R"(
graph @rows(%x: tensor<3 x 5 x f32>, %h: tensor<2 x 4 x 3 x f16>, %n: tensor<2 x 6 x i64>) {
  %am = ArgMax(%x) {axis = 1, keepdims = 0} : tensor<3 x i64>
  %an = ArgMin(%x) {axis = 0} : tensor<1 x 5 x i64>
  %al = ArgMax(%x) {axis = -1, select_last_index = 1} : tensor<3 x 1 x i64>
  %ah = ArgMin(%h) {axis = 1, keepdims = 0, select_last_index = 1} : tensor<2 x 3 x i64>
  %ai = ArgMax(%n) {axis = 1} : tensor<2 x 1 x i64>
  %b = Cast(%am) {to = 2} : tensor<3 x u8>
  %k3 = Constant() {value = dense<[3]> : tensor<1 x i64>} : tensor<1 x i64>
  %v, %i = TopK(%x, %k3) : tensor<3 x 3 x f32>, tensor<3 x 3 x i64>
  %vs, %is = TopK(%h, %k3) {axis = 1, largest = 0} : tensor<2 x 3 x 3 x f16, nwc>, tensor<2 x 3 x 3 x i64>
  %k6 = Constant() {value = dense<[6]> : tensor<1 x i64>} : tensor<1 x i64>
  %nv, %ni = TopK(%n, %k6) {axis = -1} : tensor<2 x 6 x i64>, tensor<2 x 6 x i64>
  return %am, %an, %al, %ah, %ai, %b, %v, %i, %vs, %is, %ni
}
)",
      {"typed.argmax f32", "typed.argmin f32", "typed.argmax f32",
       "typed.argmin f16", "typed.argmax i64", "typed.cast i64>u8",
       "typed.topk f32 largest", "typed.topk f16 smallest",
       "typed.topk i64 largest"},
      0, In);
}

TEST(CudaPlanTest, TopKOfLongRowsRunsByRanks) {
  // From 256 elements a row, each element counts those ahead of it and
  // stores itself at that rank: rows with many ties (positions break
  // them), along either axis, K from 1 to the whole row, largest or
  // smallest, f32 and i64.
  runtime::TensorMap In;
  std::vector<double> X, N;
  for (int I = 0; I < 2 * 300; ++I) {
    X.push_back(double((I * 37) % 23) - 11.0);
    N.push_back(double((I * 11) % 7));
  }
  In["x"] = tensorOf(ElementType::F32, {2, 300}, X);
  In["n"] = tensorOf(ElementType::I64, {300, 2}, N);
  checkOnHostAgainstReference(
      R"(
graph @long(%x: tensor<2 x 300 x f32>, %n: tensor<300 x 2 x i64>) {
  %k1 = Constant() {value = dense<[1]> : tensor<1 x i64>} : tensor<1 x i64>
  %k40 = Constant() {value = dense<[40]> : tensor<1 x i64>} : tensor<1 x i64>
  %k300 = Constant() {value = dense<[300]> : tensor<1 x i64>} : tensor<1 x i64>
  %v, %i = TopK(%x, %k40) : tensor<2 x 40 x f32>, tensor<2 x 40 x i64>
  %vs, %is = TopK(%x, %k300) {largest = 0} : tensor<2 x 300 x f32>, tensor<2 x 300 x i64>
  %vn, %in = TopK(%n, %k1) {axis = 0} : tensor<1 x 2 x i64>, tensor<1 x 2 x i64>
  %vm, %im = TopK(%n, %k300) {axis = 0, largest = 1} : tensor<300 x 2 x i64>, tensor<300 x 2 x i64>
  return %v, %i, %vs, %is, %vn, %in, %vm, %im
}
)",
      {"typed.topk.ranks f32 largest", "typed.topk.ranks f32 smallest",
       "typed.topk.ranks i64 largest", "typed.topk.ranks i64 largest"},
      0, In);
}

TEST(CudaPlanTest, ArgExtremesOfLongRowsRunABlockPerRow) {
  // From 512 elements a row, a block per row: each thread's strided pass,
  // then a tree over the threads; the same positions as one pass along
  // the row, ties by position (first, or last with select_last_index),
  // NaN passed over, a NaN in first place the answer.
  const double NaN = std::nan("");
  const int64_t Len = 700;
  std::vector<double> X, N;
  for (int64_t Row = 0; Row < 4; ++Row)
    for (int64_t I = 0; I < Len; ++I) {
      double V = double((I * 37 + Row * 11) % 53);
      if (Row == 1 && I % 5 == 0)
        V = NaN;
      if (Row == 2 && I == 0)
        V = NaN;
      X.push_back(V);
      N.push_back(double((I * 13 + Row) % 41) - 20);
    }
  runtime::TensorMap In;
  In["x"] = tensorOf(ElementType::F32, {4, Len}, X);
  In["n"] = tensorOf(ElementType::I64, {Len, 4}, N);
  checkOnHostAgainstReference(
      R"(
graph @long(%x: tensor<4 x 700 x f32>, %n: tensor<700 x 4 x i64>) {
  %a = ArgMax(%x) {axis = 1} : tensor<4 x 1 x i64>
  %b = ArgMin(%x) {axis = 1, keepdims = 0, select_last_index = 1} : tensor<4 x i64>
  %c = ArgMax(%n) {axis = 0, select_last_index = 1} : tensor<1 x 4 x i64>
  %d = ArgMin(%n) {axis = 0, keepdims = 0} : tensor<4 x i64>
  return %a, %b, %c, %d
}
)",
      {"typed.argmax.blocks f32", "typed.argmin.blocks f32",
       "typed.argmax.blocks i64", "typed.argmin.blocks i64"},
      0, In);
}

TEST(CudaPlanTest, TopKPutsNanAboveEveryNumber) {
  // NaN counts as the largest value (PyTorch's topk), equal NaNs by
  // position, in both the insertion and the rank kernels, as in the
  // reference interpreter. Positions only: NaN values do not compare.
  const double NaN = std::nan("");
  for (int64_t Len : {6, 260}) {
    std::vector<double> X;
    for (int64_t I = 0; I < Len; ++I)
      X.push_back(I % 3 == 1 ? NaN : double((I * 5) % 7));
    runtime::TensorMap In;
    In["x"] = tensorOf(ElementType::F32, {1, Len}, X);
    const std::string T = "tensor<1 x " + std::to_string(Len);
    checkOnHostAgainstReference("graph @nan(%x: " + T + R"( x f32>) {
  %k = Constant() {value = dense<[4]> : tensor<1 x i64>} : tensor<1 x i64>
  %v, %i = TopK(%x, %k) : tensor<1 x 4 x f32>, tensor<1 x 4 x i64>
  %w, %j = TopK(%x, %k) {largest = 0} : tensor<1 x 4 x f32>, tensor<1 x 4 x i64>
  return %i, %j
}
)",
                                {}, 0, In);
  }
}

TEST(CudaPlanTest, IntegerClipsAndNarrowIntegerTypes) {
  // Clip of integers: Max by the lower bound, then Min by the upper one
  // (one step with one bound, a copy with none), from a channels-last
  // operand; i16, u16 and u32 in the typed kernel, stored wrapping.
  runtime::TensorMap In;
  std::vector<double> X, U;
  for (int I = 0; I < 24; ++I) {
    X.push_back(double((I * 37) % 29) - 14);
    U.push_back(double((I * 7919) % 65536));
  }
  In["x"] = tensorOf(ElementType::I8, {1, 4, 2, 3}, X);
  In["s"] = tensorOf(ElementType::I16, {2, 12}, X);
  In["u"] = tensorOf(ElementType::U16, {2, 12}, U);
  In["w"] = tensorOf(ElementType::U32, {2, 12}, U);
  checkOnHostAgainstReference(
      R"(
graph @g(%x: tensor<1 x 4 x 2 x 3 x i8, nhwc>, %s: tensor<2 x 12 x i16>, %u: tensor<2 x 12 x u16>, %w: tensor<2 x 12 x u32>) {
  %lo = Constant() {value = dense<-5> : tensor<i8>} : tensor<i8>
  %hi = Constant() {value = dense<[7]> : tensor<1 x i8>} : tensor<1 x i8>
  %a = Clip(%x, %lo, %hi) : tensor<1 x 4 x 2 x 3 x i8>
  %b = Clip(%x, none, %hi) : tensor<1 x 4 x 2 x 3 x i8, nhwc>
  %c = Clip(%x) : tensor<1 x 4 x 2 x 3 x i8>
  %m = Max(%s, %s) : tensor<2 x 12 x i16>
  %d = Mul(%u, %u) : tensor<2 x 12 x u16>
  %e = Add(%w, %w) : tensor<2 x 12 x u32>
  %f = Cast(%u) {to = 12} : tensor<2 x 12 x u32>
  return %a, %b, %c, %m, %d, %e, %f
}
)",
      {"typed.clip.max i8", "typed.clip.min i8", "typed.clip.min i8",
       "typed.clip i8", "typed.max i16", "typed.mul u16", "typed.add u32",
       "typed.cast u16>u32"},
      0, In);
}

TEST(CudaPlanTest, PadsOfIntegersRunOnTheTypedKernel) {
  // Every mode, crops, fills of the data's type (an i64 beyond 2^53 stays
  // exact), a result stored in another layout than the operand.
  runtime::TensorMap In;
  std::vector<double> X;
  for (int I = 0; I < 24; ++I)
    X.push_back(double((I * 37) % 29) - 14);
  In["x"] = tensorOf(ElementType::I32, {1, 2, 3, 4}, X);
  In["b"] = tensorOf(ElementType::Bool, {2, 3}, {1, 0, 0, 1, 1, 0});
  checkOnHostAgainstReference(
      R"(
graph @g(%x: tensor<1 x 2 x 3 x 4 x i32, nhwc>, %b: tensor<2 x 3 x bool>) {
  %p = Constant() {value = dense<[0, 0, 1, 2, 0, 1, 2, -1]> : tensor<8 x i64>} : tensor<8 x i64>
  %v = Constant() {value = dense<-7> : tensor<i32>} : tensor<i32>
  %c = Pad(%x, %p, %v) {mode = "constant"} : tensor<1 x 3 x 6 x 5 x i32>
  %r = Pad(%x, %p) {mode = "reflect"} : tensor<1 x 3 x 6 x 5 x i32, nhwc>
  %e = Pad(%x, %p) {mode = "edge"} : tensor<1 x 3 x 6 x 5 x i32>
  %q = Constant() {value = dense<[1, 0, 0, 2]> : tensor<4 x i64>} : tensor<4 x i64>
  %t = Constant() {value = dense<true> : tensor<bool>} : tensor<bool>
  %bp = Pad(%b, %q, %t) : tensor<3 x 5 x bool>
  return %c, %r, %e, %bp
}
)",
      {"typed.pad.constant i32", "typed.pad.reflect i32", "typed.pad.edge i32",
       "typed.pad.constant bool"},
      0, In);
  // A fill past 2^53 in i64 stays exact (doubles would round it to even).
  auto G = parse(R"(
graph @g(%l: tensor<3 x i64>) {
  %p = Constant() {value = dense<[2, 1]> : tensor<2 x i64>} : tensor<2 x i64>
  %v = Constant() {value = dense<9007199254740993> : tensor<i64>} : tensor<i64>
  %y = Pad(%l, %p, %v) : tensor<6 x i64>
  return %y
}
)");
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  runtime::TensorMap L;
  L["l"] = tensorOf(ElementType::I64, {3}, {1, 2, 3});
  for (EmulationMode Mode :
       {EmulationMode::Models, EmulationMode::DeviceCode}) {
    auto Got = emulateOnHost(*P, L, Mode);
    ASSERT_TRUE(bool(Got)) << llvm::toString(Got.takeError());
    const runtime::Tensor &Y = Got->at("y");
    const int64_t Want[] = {9007199254740993, 9007199254740993, 1, 2, 3,
                            9007199254740993};
    for (int64_t I = 0; I < 6; ++I)
      EXPECT_EQ(Y.getInt(I), Want[I]) << I;
  }
}

TEST(CudaPlanTest, IntegerAndBoolDataMovementRunsOnTheTypedKernel) {
  // Concat (its parts written through Y's strides where they are not dense
  // in Y), Split, Slice with steps, Expand, Tile (every dim repeated: two
  // copies through scratch) and DepthToSpace of integers and bools, in
  // either layout.
  runtime::TensorMap In;
  In["b"] = tensorOf(ElementType::Bool, {2, 3}, {1, 0, 0, 1, 1, 0});
  checkOnHostAgainstReference(
      R"(
graph @g(%x: tensor<1 x 2 x 3 x 4 x i64, nhwc>, %i: tensor<2 x 3 x i32>, %b: tensor<2 x 3 x bool>) {
  %c = Concat(%x, %x) {axis = 1} : tensor<1 x 4 x 3 x 4 x i64>
  %cl = Concat(%x, %x) {axis = 3} : tensor<1 x 2 x 3 x 8 x i64, nhwc>
  %ci = Concat(%i, %i, %i) {axis = 1} : tensor<2 x 9 x i32>
  %s1, %s2 = Split(%ci) {axis = 1, num_outputs = 2} : tensor<2 x 5 x i32>, tensor<2 x 4 x i32>
  %st = Constant() {value = dense<[3, 0]> : tensor<2 x i64>} : tensor<2 x i64>
  %en = Constant() {value = dense<[0, 1]> : tensor<2 x i64>} : tensor<2 x i64>
  %ax = Constant() {value = dense<[3, 2]> : tensor<2 x i64>} : tensor<2 x i64>
  %sp = Constant() {value = dense<[-2, 1]> : tensor<2 x i64>} : tensor<2 x i64>
  %sl = Slice(%x, %st, %en, %ax, %sp) : tensor<1 x 2 x 1 x 2 x i64>
  %sh = Constant() {value = dense<[2, 2, 3]> : tensor<3 x i64>} : tensor<3 x i64>
  %eb = Expand(%b, %sh) : tensor<2 x 2 x 3 x bool>
  %cb = Concat(%b, %b) {axis = 0} : tensor<4 x 3 x bool>
  %r2 = Constant() {value = dense<[2, 1, 3, 2]> : tensor<4 x i64>} : tensor<4 x i64>
  %t = Tile(%x, %r2) : tensor<2 x 2 x 9 x 8 x i64, nhwc>
  %ds = DepthToSpace(%c) {blocksize = 2} : tensor<1 x 1 x 6 x 8 x i64>
  return %c, %cl, %s1, %s2, %sl, %eb, %cb, %t, %ds
}
)",
      {}, 0, In);
}

TEST(CudaPlanTest, IntegerReductionsNegationsAndAbsRunOnTheTypedKernel) {
  // ReduceSum/Prod/Max/Min of integers and f64 over one or several
  // adjacent dims (a mask's lengths), Neg and Abs; integers wrap
  // (-INT64_MIN is itself; a sum past 2^63 wraps).
  runtime::TensorMap In;
  In["m"] = tensorOf(ElementType::I64, {2, 3, 4},
                     {1, -2, 3, 0, 5, 6, -7, 8, 9,  1,  1, 1,
                      4, 4,  4, 4, 0, 0, 0,  0, -1, -1, 2, 2});
  runtime::Tensor W =
      runtime::Tensor::zeros(TensorType::get(ElementType::I64, {2}));
  W.setInt(0, std::numeric_limits<int64_t>::min());
  W.setInt(1, std::numeric_limits<int64_t>::max());
  In["w"] = W;
  In["i"] = tensorOf(ElementType::I32, {2, 3}, {-5, 7, 0, 3, -3, 2});
  In["d"] = tensorOf(ElementType::F64, {2, 2}, {0.5, -1.25, 3.0, -0.125});
  checkOnHostAgainstReference(R"(
graph @g(%m: tensor<2 x 3 x 4 x i64>, %w: tensor<2 x i64>, %i: tensor<2 x 3 x i32>, %d: tensor<2 x 2 x f64>) {
  %a1 = Constant() {value = dense<[-1]> : tensor<1 x i64>} : tensor<1 x i64>
  %a12 = Constant() {value = dense<[1, 2]> : tensor<2 x i64>} : tensor<2 x i64>
  %a0 = Constant() {value = dense<[0]> : tensor<1 x i64>} : tensor<1 x i64>
  %s = ReduceSum(%m, %a1) {keepdims = 0} : tensor<2 x 3 x i64>
  %p = ReduceProd(%m, %a12) {keepdims = 1} : tensor<2 x 1 x 1 x i64>
  %mx = ReduceMax(%m, %a0) {keepdims = 0} : tensor<3 x 4 x i64>
  %mn = ReduceMin(%i) {keepdims = 0} : tensor<i32>
  %ws = ReduceSum(%w, %a0) {keepdims = 0} : tensor<i64>
  %wn = Neg(%w) : tensor<2 x i64>
  %ia = Abs(%i) : tensor<2 x 3 x i32>
  %in = Neg(%i) : tensor<2 x 3 x i32>
  %dn = Neg(%d) : tensor<2 x 2 x f64>
  %da = Abs(%d) : tensor<2 x 2 x f64>
  %ds = ReduceSum(%d, %a1) {keepdims = 0} : tensor<2 x f64>
  return %s, %p, %mx, %mn, %ws, %wn, %ia, %in, %dn, %da, %ds
}
)",
                              {}, 0, In);
}

TEST(CudaPlanTest, EinsumsOfDoublesAndIntegersContractOnTheTypedKernel) {
  // A batched product, a diagonal, a broadcast dim of 1, a full sum to a
  // scalar and a result stored channels-last; integers wrap.
  runtime::TensorMap In;
  std::vector<double> I;
  for (int K = 0; K < 24; ++K)
    I.push_back(double((K * 5) % 7) - 3);
  In["i"] = tensorOf(ElementType::I32, {2, 3, 4}, I);
  checkOnHostAgainstReference(R"(
graph @g(%a: tensor<2 x 3 x 4 x f64>, %b: tensor<2 x 4 x 5 x f64>, %d: tensor<3 x 3 x f64>, %e: tensor<1 x 4 x f64>, %i: tensor<2 x 3 x 4 x i32>) {
  %mm = Einsum(%a, %b) {equation = "bij,bjk->bik"} : tensor<2 x 3 x 5 x f64>
  %dg = Einsum(%d) {equation = "ii->i"} : tensor<3 x f64>
  %bc = Einsum(%a, %e) {equation = "bij,bj->bi"} : tensor<2 x 3 x f64>
  %sm = Einsum(%a) {equation = "bij->"} : tensor<f64>
  %nh = Einsum(%i, %i) {equation = "nct,nct->nct"} : tensor<2 x 3 x 4 x i32, nwc>
  %ip = Einsum(%i, %i) {equation = "ncj,ndj->cd"} : tensor<3 x 3 x i32>
  return %mm, %dg, %bc, %sm, %nh, %ip
}
)",
                              {"typed.einsum f64", "typed.einsum f64",
                               "typed.einsum f64", "typed.einsum f64",
                               "typed.einsum i32", "typed.einsum i32"},
                              0, In);
}

TEST(CudaPlanTest, BatchNormInTrainingModeComputesBatchStatistics) {
  // The batch's mean and biased variance per channel over N and the
  // pixels (channels-first and -last), the running statistics, and the
  // normalization by the epilogue.
  checkOnHostAgainstReference(
      R"(
graph @g(%x: tensor<3 x 4 x 5 x 2 x f32>, %s: tensor<4 x f32>, %b: tensor<4 x f32>, %m: tensor<4 x f32>, %v: tensor<4 x f32>, %h: tensor<2 x 4 x 6 x f32, nwc>) {
  %y, %rm, %rv = BatchNormalization(%x, %s, %b, %m, %v) {epsilon = 0.01, momentum = 0.8, training_mode = 1} : tensor<3 x 4 x 5 x 2 x f32>, tensor<4 x f32>, tensor<4 x f32>
  %z = BatchNormalization(%h, %s, %b, %m, %v) {training_mode = 1} : tensor<2 x 4 x 6 x f32, nwc>
  return %y, %rm, %rv, %z
}
)",
      {"batchnorm.statistics nchw f32", "epilogue.batchnorm nchw",
       "batchnorm.statistics nhwc f32", "epilogue.batchnorm nhwc"},
      1e-5);
}

TEST(CudaPlanTest, TriluRunsOnTheTypedKernel) {
  // Upper and lower triangles of a batch of non-square matrices, k given
  // at run time, constant or absent, any element type.
  runtime::TensorMap In;
  In["k"] = tensorOf(ElementType::I64, {}, {-1});
  std::vector<double> B;
  for (int I = 0; I < 12; ++I)
    B.push_back(double(I % 2));
  In["b"] = tensorOf(ElementType::Bool, {3, 4}, B);
  checkOnHostAgainstReference(R"(
graph @g(%x: tensor<2 x 3 x 4 x 5 x f32>, %k: tensor<i64>, %b: tensor<3 x 4 x bool>) {
  %two = Constant() {value = dense<2> : tensor<i64>} : tensor<i64>
  %u = Trilu(%x, %k) : tensor<2 x 3 x 4 x 5 x f32>
  %l = Trilu(%x, %two) {upper = 0} : tensor<2 x 3 x 4 x 5 x f32>
  %m = Trilu(%b) {upper = 0} : tensor<3 x 4 x bool>
  return %u, %l, %m
}
)",
                              {"typed.trilu.upper f32", "typed.trilu.lower f32",
                               "typed.trilu.lower bool"},
                              0, In);
}

TEST(CudaPlanTest, U64RunsOnTheTypedKernelAsUnsigned) {
  // Values past 2^63 (negative as int64 bits) order, divide and convert
  // as unsigned; sums wrap alike.
  runtime::TensorMap In;
  runtime::Tensor A =
      runtime::Tensor::zeros(TensorType::get(ElementType::U64, {2, 3}));
  runtime::Tensor B = A;
  const int64_t Big = std::numeric_limits<int64_t>::min() + 2048; // 2^63+2048
  const int64_t AV[] = {1, Big, 7, -2048, 9, 0};
  const int64_t BV[] = {Big, 5, 7, 2, 2, -1};
  for (int I = 0; I < 6; ++I) {
    A.setInt(I, AV[I]);
    B.setInt(I, BV[I]);
  }
  In["a"] = A;
  In["b"] = B;
  In["d"] = tensorOf(ElementType::F64, {2}, {1.5e19, 3.0});
  checkOnHostAgainstReference(R"(
graph @g(%a: tensor<2 x 3 x u64>, %b: tensor<2 x 3 x u64>, %d: tensor<2 x f64>) {
  %mx = Max(%a, %b) : tensor<2 x 3 x u64>
  %mn = Min(%a, %b) : tensor<2 x 3 x u64>
  %lt = Less(%a, %b) : tensor<2 x 3 x bool>
  %ge = GreaterOrEqual(%a, %b) : tensor<2 x 3 x bool>
  %dv = Div(%a, %b) : tensor<2 x 3 x u64>
  %ad = Add(%a, %b) : tensor<2 x 3 x u64>
  %ab = Abs(%a) : tensor<2 x 3 x u64>
  %f = Cast(%a) {to = 1} : tensor<2 x 3 x f32>
  %g = Cast(%a) {to = 11} : tensor<2 x 3 x f64>
  %u = Cast(%d) {to = 13} : tensor<2 x u64>
  %a1 = Constant() {value = dense<[1]> : tensor<1 x i64>} : tensor<1 x i64>
  %rx = ReduceMax(%a, %a1) {keepdims = 0} : tensor<2 x u64>
  %rn = ReduceMin(%a, %a1) {keepdims = 0} : tensor<2 x u64>
  %k = Constant() {value = dense<[0, 0, 1, 1, 1, 0]> : tensor<2 x 3 x i64>} : tensor<2 x 3 x i64>
  %sx = ScatterElements(%a, %k, %b) {axis = 0, reduction = "max"} : tensor<2 x 3 x u64>
  return %mx, %mn, %lt, %ge, %dv, %ad, %ab, %f, %g, %u, %rx, %rn, %sx
}
)",
                              {}, 0, In);
}

TEST(CudaPlanTest, ScatterReductionsCombineInOrder) {
  // Repeated and negative indices along either axis: each reduction
  // combines the updates of a row in order with what the data holds.
  runtime::TensorMap In;
  In["d"] = tensorOf(ElementType::F32, {3, 4},
                     {1, 2, 3, 4, -1, -2, -3, -4, 0.5, 1.5, 2.5, 3.5});
  In["e"] = tensorOf(ElementType::I64, {3, 3}, {0, 0, 3, -1, 2, 2, 1, 1, 1});
  In["f"] = tensorOf(ElementType::I32, {2, 4}, {0, 2, -1, 1, 2, 2, 0, 0});
  In["u"] =
      tensorOf(ElementType::F32, {3, 3}, {2, 3, -1, 0.5, 4, -2, 1.5, 1.5, 3});
  In["di"] = tensorOf(ElementType::I32, {3, 4},
                      {7, -3, 0, 2, 5, 5, 1, -8, 9, 0, 4, 6});
  In["ui"] = tensorOf(ElementType::I32, {2, 4}, {-1, 8, 3, 3, 2, 6, -7, 10});
  checkOnHostAgainstReference(R"(
graph @s(%d: tensor<3 x 4 x f32>, %e: tensor<3 x 3 x i64>, %f: tensor<2 x 4 x i32>, %u: tensor<3 x 3 x f32>, %di: tensor<3 x 4 x i32>, %ui: tensor<2 x 4 x i32>) {
  %add = ScatterElements(%d, %e, %u) {axis = 1, reduction = "add"} : tensor<3 x 4 x f32>
  %mul = ScatterElements(%d, %e, %u) {axis = 1, reduction = "mul"} : tensor<3 x 4 x f32, [1, 0]>
  %max = ScatterElements(%di, %f, %ui) {axis = 0, reduction = "max"} : tensor<3 x 4 x i32>
  %min = ScatterElements(%di, %f, %ui) {axis = 0, reduction = "min"} : tensor<3 x 4 x i32>
  %sum = ScatterElements(%di, %f, %ui) {axis = 0, reduction = "add"} : tensor<3 x 4 x i32>
  return %add, %mul, %max, %min, %sum
}
)",
                              {"typed.copy f32", "typed.scatter_add f32 by i64",
                               "typed.copy f32", "typed.scatter_mul f32 by i64",
                               "typed.copy i32", "typed.scatter_max i32 by i32",
                               "typed.copy i32", "typed.scatter_min i32 by i32",
                               "typed.copy i32",
                               "typed.scatter_add i32 by i32"},
                              0, In);
}

TEST(CudaPlanTest, BadIndicesAndLengthsAreReportedByTheirStep) {
  // Where the CPU backend stops the run, the kernels go on and report a
  // bad value with their step (named by its results): a gather index, a
  // scatter index, a sequence length. One bad value each: of several,
  // which is reported depends on the threads' order.
  auto Check = [](const char *Text, const char *Input,
                  std::vector<double> Values, const std::string &Want) {
    SCOPED_TRACE(Text);
    auto G = parse(Text);
    ASSERT_TRUE(G);
    auto P = plan(*G);
    ASSERT_TRUE(P);
    runtime::TensorMap In;
    for (const Value *V : G->getInputs())
      In[V->getName()] = V->getName() == Input
                             ? tensorOf(V->getType().getElementType(),
                                        V->getType().getStaticShape(), Values)
                             : runtime::Tensor::zeros(TensorType::get(
                                   V->getType().getElementType(),
                                   V->getType().getStaticShape()));
    for (EmulationMode Mode :
         {EmulationMode::Models, EmulationMode::DeviceCode}) {
      auto Bad = emulateOnHost(*P, In, Mode);
      ASSERT_FALSE(bool(Bad));
      EXPECT_EQ(llvm::toString(Bad.takeError()), Want);
    }
    // In range: nothing reported.
    for (double &X : Values)
      X = 0;
    In[Input] =
        tensorOf(In[Input].getElementType(), In[Input].getShape(), Values);
    for (EmulationMode Mode :
         {EmulationMode::Models, EmulationMode::DeviceCode}) {
      auto Good = emulateOnHost(*P, In, Mode);
      EXPECT_TRUE(bool(Good)) << llvm::toString(Good.takeError());
    }
  };
  Check(R"(
graph @g(%x: tensor<5 x 2 x f32>, %i: tensor<3 x i64>) {
  %y = Gather(%x, %i) : tensor<3 x 2 x f32>
  return %y
}
)",
        "i", {1, 7, -2},
        "step 'y' (typed.gather f32 by i64): index 7 is out of range for "
        "an axis of size 5");
  Check(R"(
graph @g(%d: tensor<2 x 4 x f32>, %i: tensor<2 x 2 x i32>, %u: tensor<2 x 2 x f32>) {
  %y = ScatterElements(%d, %i, %u) {axis = 1, reduction = "add"} : tensor<2 x 4 x f32>
  return %y
}
)",
        "i", {0, 1, 3, -5},
        "step 'y' (typed.scatter_add f32 by i32): index -5 is out of "
        "range for an axis of size 4");
  Check(R"(
graph @g(%x: tensor<3 x 2 x 1 x f32>, %len: tensor<2 x i32>) {
  %w = Constant() {value = dense<0.5> : tensor<1 x 3 x 1 x f32>} : tensor<1 x 3 x 1 x f32>
  %r = Constant() {value = dense<0.25> : tensor<1 x 3 x 1 x f32>} : tensor<1 x 3 x 1 x f32>
  %y, %yh = GRU(%x, %w, %r, none, %len) {hidden_size = 1, linear_before_reset = 1} : tensor<3 x 1 x 2 x 1 x f32>, tensor<1 x 2 x 1 x f32>
  return %y, %yh
}
)",
        "len", {2, 4},
        "step 'y,yh' (gru.loop f32 forward (3 steps by sequence_lens)): a "
        "sequence_lens entry is 4, outside [0, 3]");
}

TEST(CudaPlanTest, IntegerPowersRunOnTheTypedKernel) {
  // Integer bases: exact wrapping powers of integer exponents (negative
  // ones give 0 but for 1 and -1), and truncated powers of float ones; a
  // float base with an integer exponent is the float kernel's.
  runtime::TensorMap In;
  In["b"] = tensorOf(ElementType::I64, {6}, {2, -3, 1, -1, 7, 0});
  In["e"] = tensorOf(ElementType::I32, {6}, {10, 3, -4, -3, 40, 0});
  In["f"] = tensorOf(ElementType::F32, {6}, {0.5, 2.0, 1.5, 3.0, 0.25, 1.0});
  In["x"] = tensorOf(ElementType::F32, {6}, {1.5, -2.0, 0.5, 3.0, 2.0, 0.0});
  checkOnHostAgainstReference(
      R"(
graph @p(%b: tensor<6 x i64>, %e: tensor<6 x i32>, %f: tensor<6 x f32>, %x: tensor<6 x f32>) {
  %i = Pow(%b, %e) : tensor<6 x i64>
  %g = Pow(%b, %f) : tensor<6 x i64>
  %k = Constant() {value = dense<[2, 3, 0, 1, 2, 3]> : tensor<6 x i64>} : tensor<6 x i64>
  %y = Pow(%x, %k) : tensor<6 x f32>
  return %i, %g, %y
}
)",
      {"typed.pow i64", "typed.pow i64", "elementwise.pow f32"}, 0, In);
}

TEST(CudaPlanTest, DoublesRunOnTheTypedKernel) {
  // f64 inputs and outputs, arithmetic in double, comparisons and casts
  // both ways; no float kernel reads them.
  checkOnHostAgainstReference(R"(
graph @d(%a: tensor<2 x 3 x f64>, %b: tensor<3 x f64>, %x: tensor<2 x 3 x f32>) {
  %s = Add(%a, %b) : tensor<2 x 3 x f64>
  %p = Mul(%s, %a) : tensor<2 x 3 x f64>
  %q = Div(%p, %b) : tensor<2 x 3 x f64>
  %m = Max(%q, %a) : tensor<2 x 3 x f64>
  %c = Cast(%x) {to = 11} : tensor<2 x 3 x f64>
  %l = Less(%c, %m) : tensor<2 x 3 x bool>
  %w = Where(%l, %c, %m) : tensor<2 x 3 x f64>
  %f = Cast(%w) {to = 1} : tensor<2 x 3 x f32>
  return %m, %w, %f
}
)",
                              {"typed.add f64", "typed.mul f64",
                               "typed.div f64", "typed.max f64",
                               "typed.cast f32>f64", "typed.less f64>bool",
                               "typed.where f64", "typed.cast f64>f32"});
}

TEST(CudaPlanTest, RemaindersShiftsXorAndClassificationRunOnTheTypedKernel) {
  // Mod in both forms over every sign pairing (and x mod 0), fmod of f32
  // and f16 (any float type: the typed kernel's only path for Mod), shifts
  // of u8 past the width, Xor, IsNaN and IsInf of one sign, Sign of i32.
  checkOnHostAgainstReference(
      R"(
graph @m(%x: tensor<2 x 3 x f32>) {
  %a = Constant() {value = dense<[7, -7, 7, -7, 5, -9]> : tensor<2 x 3 x i64>} : tensor<2 x 3 x i64>
  %b = Constant() {value = dense<[3, 3, -3, -3, 0, 4]> : tensor<2 x 3 x i64>} : tensor<2 x 3 x i64>
  %m = Mod(%a, %b) : tensor<2 x 3 x i64>
  %t = Mod(%a, %b) {fmod = 1} : tensor<2 x 3 x i64>
  %d = Constant() {value = dense<[0.75, -1.5, 0.0]> : tensor<3 x f32>} : tensor<3 x f32>
  %f = Mod(%x, %d) {fmod = 1} : tensor<2 x 3 x f32>
  %h = Cast(%x) {to = 10} : tensor<2 x 3 x f16>
  %g = Mod(%h, %h) {fmod = 1} : tensor<2 x 3 x f16>
  %u = Constant() {value = dense<[1, 255, 16, 200, 3, 128]> : tensor<2 x 3 x u8>} : tensor<2 x 3 x u8>
  %s = Constant() {value = dense<[3, 1, 9]> : tensor<3 x u8>} : tensor<3 x u8>
  %l = BitShift(%u, %s) {direction = "LEFT"} : tensor<2 x 3 x u8>
  %r = BitShift(%u, %s) {direction = "RIGHT"} : tensor<2 x 3 x u8>
  %z = Constant() {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %p = Less(%x, %d) : tensor<2 x 3 x bool>
  %q = Greater(%d, %z) : tensor<3 x bool>
  %e = Xor(%p, %q) : tensor<2 x 3 x bool>
  %v = Div(%x, %d) : tensor<2 x 3 x f32>
  %n = IsNaN(%v) : tensor<2 x 3 x bool>
  %i = IsInf(%v) {detect_negative = 0} : tensor<2 x 3 x bool>
  %w = Constant() {value = dense<[-4, 0, 9]> : tensor<3 x i32>} : tensor<3 x i32>
  %y = Sign(%w) : tensor<3 x i32>
  return %m, %t, %f, %g, %l, %r, %e, %n, %i, %y
}
)",
      {"typed.mod i64", "typed.mod i64", "typed.mod f32",
       "copy.cast contiguous f32>f16", "typed.mod f16", "typed.bitshift u8",
       "typed.bitshift u8", "typed.less f32>bool", "typed.greater f32>bool",
       "typed.xor bool", "elementwise.div f32", "typed.isnan f32>bool",
       "typed.isinf f32>bool", "typed.sign i32"});
}

TEST(CudaPlanTest, CumSumRunsOnTheTypedKernel) {
  // Position ids from a mask (i64 along the last axis, exclusive), f32
  // along the first axis in reverse, a channels-last f16 tensor along its
  // channels (the axis at its physical place) and i32 with both flags.
  runtime::TensorMap In;
  In["m"] = tensorOf(ElementType::I64, {2, 5}, {1, 1, 1, 0, 0, 1, 1, 1, 1, 1});
  checkOnHostAgainstReference(R"(
graph @c(%m: tensor<2 x 5 x i64>, %x: tensor<3 x 4 x f32>, %h: tensor<1 x 3 x 2 x 2 x f16, nhwc>, %i: tensor<4 x 3 x i32>) {
  %one = Constant() {value = dense<1> : tensor<i64>} : tensor<i64>
  %zero = Constant() {value = dense<[0]> : tensor<1 x i64>} : tensor<1 x i64>
  %a = CumSum(%m, %one) {exclusive = 1} : tensor<2 x 5 x i64>
  %b = CumSum(%x, %zero) {reverse = 1} : tensor<3 x 4 x f32>
  %c = CumSum(%h, %one) : tensor<1 x 3 x 2 x 2 x f16, nhwc>
  %d = CumSum(%i, %zero) {exclusive = 1, reverse = 1} : tensor<4 x 3 x i32>
  return %a, %b, %c, %d
}
)",
                              {"typed.cumsum i64", "typed.cumsum f32",
                               "typed.cumsum f16", "typed.cumsum i32"},
                              0, In);
}

TEST(CudaPlanTest, MathOfDoublesRunsOnTheTypedKernel) {
  // f64 unary math in double (a log-sum-exp as the importer expands it,
  // an attribute-carrying activation); f32 math stays on the float kernel.
  checkOnHostAgainstReference(
      R"(
graph @d(%a: tensor<2 x 3 x f64>) {
  %e = Exp(%a) : tensor<2 x 3 x f64>
  %l = Log(%e) : tensor<2 x 3 x f64>
  %s = Shrink(%l) {lambd = 1.0, bias = 0.5} : tensor<2 x 3 x f64>
  %g = Gelu(%s) {approximate = "tanh"} : tensor<2 x 3 x f64>
  return %g
}
)",
      {"typed.exp f64", "typed.log f64", "typed.shrink f64", "typed.gelu f64"},
      1e-12);
  checkOnHostAgainstReference(R"(
graph @f(%x: tensor<2 x 3 x f32>) {
  %t = Tanh(%x) : tensor<2 x 3 x f32>
  return %t
}
)",
                              {"elementwise.tanh f32"}, 1e-6);
}

TEST(CudaPlanTest, GatherNDAndScatterNDRunOnTheTypedKernel) {
  // Tuples from a graph input (negative, repeated), batch_dims, a scatter
  // replacing and one adding, of f32 and i32 data.
  runtime::TensorMap In;
  In["i"] = tensorOf(ElementType::I64, {3, 2}, {1, 2, 0, -1, 1, 2});
  In["b"] = tensorOf(ElementType::I64, {2, 1, 1}, {2, -1});
  checkOnHostAgainstReference(R"(
graph @nd(%x: tensor<2 x 4 x 3 x f32>, %i: tensor<3 x 2 x i64>, %b: tensor<2 x 1 x 1 x i64>, %u: tensor<3 x 3 x f32>, %n: tensor<2 x 4 x 3 x i32>, %v: tensor<3 x 3 x i32>) {
  %g = GatherND(%x, %i) : tensor<3 x 3 x f32>
  %h = GatherND(%x, %b) {batch_dims = 1} : tensor<2 x 1 x 3 x f32>
  %s = ScatterND(%x, %i, %u) : tensor<2 x 4 x 3 x f32>
  %a = ScatterND(%n, %i, %v) {reduction = "add"} : tensor<2 x 4 x 3 x i32>
  return %g, %h, %s, %a
}
)",
                              {"typed.gather_nd f32", "typed.gather_nd f32",
                               "typed.copy f32", "typed.scatter_nd f32",
                               "typed.copy i32", "typed.scatter_nd_add i32"},
                              0, In);
}

TEST(CudaPlanTest, QuantizationRunsOnTheTypedKernel) {
  // A QDQ pair per tensor and one per channel of a channels-last tensor
  // (the parameters' stride along the channels' physical place).
  checkOnHostAgainstReference(
      R"(
graph @q(%x: tensor<1 x 3 x 2 x 4 x f32, nhwc>) {
  %s = Constant() {value = dense<0.25> : tensor<f32>} : tensor<f32>
  %z = Constant() {value = dense<3> : tensor<u8>} : tensor<u8>
  %q = QuantizeLinear(%x, %s, %z) : tensor<1 x 3 x 2 x 4 x u8, nhwc>
  %d = DequantizeLinear(%q, %s, %z) : tensor<1 x 3 x 2 x 4 x f32, nhwc>
  %cs = Constant() {value = dense<[0.5, 0.125, 2.0]> : tensor<3 x f32>} : tensor<3 x f32>
  %cz = Constant() {value = dense<[-1, 0, 7]> : tensor<3 x i8>} : tensor<3 x i8>
  %cq = QuantizeLinear(%x, %cs, %cz) : tensor<1 x 3 x 2 x 4 x i8, nhwc>
  %cd = DequantizeLinear(%cq, %cs, %cz) : tensor<1 x 3 x 2 x 4 x f32>
  return %q, %d, %cq, %cd
}
)",
      {"typed.quantize f32>u8", "typed.dequantize u8>f32",
       "typed.quantize f32>i8", "typed.dequantize i8>f32"});
}

TEST(CudaPlanTest, MasksByLengthRunOnTheTypedKernel) {
  // A feature extractor's masking: frame counts from lengths (integer
  // arithmetic), a mask from a range (Less, broadcast), Where, Not and
  // casts both ways; the views share their operand's buffer.
  checkOnHostAgainstReference(R"(
graph @mask(%x: tensor<2 x 6 x f32>, %len: tensor<2 x i64>) {
  %r = Constant() {value = dense<[0, 1, 2, 3, 4, 5]> : tensor<6 x i64>} : tensor<6 x i64>
  %k = Constant() {value = dense<[3, 5]> : tensor<2 x i64>} : tensor<2 x i64>
  %ax = Constant() {value = dense<[1]> : tensor<1 x i64>} : tensor<1 x i64>
  %three = Constant() {value = dense<3> : tensor<i64>} : tensor<i64>
  %zero = Constant() {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %l = Add(%len, %k) : tensor<2 x i64>
  %lu = Unsqueeze(%l, %ax) : tensor<2 x 1 x i64>
  %m = Less(%r, %lu) : tensor<2 x 6 x bool>
  %y = Where(%m, %x, %zero) : tensor<2 x 6 x f32>
  %d = Div(%l, %three) : tensor<2 x i64>
  %f = Cast(%d) {to = 1} : tensor<2 x f32>
  %n = Not(%m) : tensor<2 x 6 x bool>
  %c = Cast(%n) {to = 1} : tensor<2 x 6 x f32>
  %s = Constant() {value = dense<[3, 2, 6]> : tensor<3 x i64>} : tensor<3 x i64>
  %e = Expand(%m, %s) : tensor<3 x 2 x 6 x bool>
  return %y, %f, %c, %m, %e
}
)",
                              {"typed.add i64", "typed.less i64>bool",
                               "typed.where f32", "typed.div i64",
                               "typed.cast i64>f32", "typed.not bool",
                               "typed.cast bool>f32", "typed.expand bool"});
  // Comparisons of floats (a broadcast row), logic, casts that truncate,
  // wrap and round, integer Max/Min/Mul/Sub and Where of integers.
  checkOnHostAgainstReference(R"(
graph @mix(%a: tensor<2 x 3 x f32>, %b: tensor<3 x f32>, %i: tensor<2 x 3 x i32>) {
  %neg = Constant() {value = dense<[-2.5, 7.0, -0.5]> : tensor<3 x f32>} : tensor<3 x f32>
  %big = Constant() {value = dense<2147483647> : tensor<i32>} : tensor<i32>
  %two = Constant() {value = dense<2> : tensor<i32>} : tensor<i32>
  %lt = Less(%a, %b) : tensor<2 x 3 x bool>
  %ge = GreaterOrEqual(%a, %neg) : tensor<2 x 3 x bool>
  %gt = Greater(%b, %neg) : tensor<3 x bool>
  %le = LessOrEqual(%a, %a) : tensor<2 x 3 x bool>
  %eq = Equal(%i, %i) : tensor<2 x 3 x bool>
  %and = And(%lt, %ge) : tensor<2 x 3 x bool>
  %or = Or(%lt, %gt) : tensor<2 x 3 x bool>
  %s = Constant() {value = dense<[-2.7, 3.9, 0.0, 100.9, -7.5, 0.5]> : tensor<2 x 3 x f32>} : tensor<2 x 3 x f32>
  %t = Cast(%s) {to = 6} : tensor<2 x 3 x i32>
  %w = Add(%i, %big) : tensor<2 x 3 x i32>
  %mx = Max(%t, %i) : tensor<2 x 3 x i32>
  %mn = Min(%t, %two) : tensor<2 x 3 x i32>
  %mu = Mul(%i, %two) : tensor<2 x 3 x i32>
  %sel = Where(%or, %mx, %mn) : tensor<2 x 3 x i32>
  %h = Cast(%w) {to = 10} : tensor<2 x 3 x f16>
  %hb = Cast(%s) {to = 9} : tensor<2 x 3 x bool>
  return %and, %le, %eq, %sel, %mu, %h, %hb
}
)",
                              {});
}

TEST(CudaPlanTest, MaxPoolOfBytesAndWithIndices) {
  // Indices count in the logical NCHW input whatever the layout, spatial
  // dims column-major with storage_order 1; bytes tie often (the first
  // maximum in window order wins).
  checkOnHostAgainstReference(
      R"(
graph @g(%x: tensor<2 x 3 x 5 x 6 x f32, nhwc>) {
  %y, %i = MaxPool(%x) {kernel_shape = [3, 2], strides = [2, 1], pads = [1, 0, 1, 1]} : tensor<2 x 3 x 3 x 6 x f32, nhwc>, tensor<2 x 3 x 3 x 6 x i64, nhwc>
  %z, %j = MaxPool(%x) {kernel_shape = [2, 3], storage_order = 1} : tensor<2 x 3 x 4 x 4 x f32, nhwc>, tensor<2 x 3 x 4 x 4 x i64, nhwc>
  return %y, %i, %z, %j
}
)",
      {"pool.max+indices nhwc f32", "pool.max+indices nhwc f32"});
  runtime::TensorMap In;
  std::vector<double> B;
  for (int I = 0; I < 2 * 7; ++I)
    B.push_back(double((I * 5) % 4) + 250);
  In["b"] = tensorOf(ElementType::U8, {1, 2, 7}, B);
  std::vector<double> S;
  for (int I = 0; I < 36; ++I)
    S.push_back(double((I * 7) % 5) - 2);
  In["s"] = tensorOf(ElementType::I8, {1, 1, 6, 6}, S);
  checkOnHostAgainstReference(R"(
graph @g(%b: tensor<1 x 2 x 7 x u8>, %s: tensor<1 x 1 x 6 x 6 x i8>) {
  %y, %i = MaxPool(%b) {kernel_shape = [3], strides = [2], dilations = [2]} : tensor<1 x 2 x 2 x u8>, tensor<1 x 2 x 2 x i64>
  %z = MaxPool(%s) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : tensor<1 x 1 x 3 x 3 x i8>
  return %y, %i, %z
}
)",
                              {"pool.max+indices nchw u8", "pool.max nchw i8"},
                              0, In);
}

TEST(CudaPlanTest, ResizeExtrapolatesAndMergesClampedTaps) {
  // tf_crop_and_resize outside the input holds the extrapolation value;
  // pytorch_half_pixel over a batch and channel of 1 reads index 0 twice
  // at -0.5, one tap once merged.
  checkOnHostAgainstReference(R"(
graph @g(%x: tensor<1 x 2 x 4 x 4 x f32>) {
  %roi = Constant() {value = dense<[0.0, 0.0, -0.25, 0.6, 1.0, 1.0, 0.75, 1.4]> : tensor<8 x f32>} : tensor<8 x f32>
  %sz = Constant() {value = dense<[1, 2, 3, 5]> : tensor<4 x i64>} : tensor<4 x i64>
  %y = Resize(%x, %roi, none, %sz) {mode = "linear", coordinate_transformation_mode = "tf_crop_and_resize", extrapolation_value = 7.5} : tensor<1 x 2 x 3 x 5 x f32>
  %s1 = Constant() {value = dense<[1, 1, 3, 1]> : tensor<4 x i64>} : tensor<4 x i64>
  %z0 = Constant() {value = dense<[0]> : tensor<1 x i64>} : tensor<1 x i64>
  %o1 = Constant() {value = dense<[1]> : tensor<1 x i64>} : tensor<1 x i64>
  %x1 = Slice(%x, %z0, %o1, %o1) : tensor<1 x 1 x 4 x 4 x f32>
  %z = Resize(%x1, none, none, %s1) {mode = "linear", coordinate_transformation_mode = "pytorch_half_pixel"} : tensor<1 x 1 x 3 x 1 x f32>
  return %y, %z
}
)",
                              {}, 1e-6);
}

TEST(CudaPlanTest, RanksPastTheKernelsMergeNestedDims) {
  // A rank-7 GatherElements, elementwise op and Slice (a loss expanded by
  // the exporter): dims that nest in every operand merge to 6 or fewer.
  checkOnHostAgainstReference(
      R"(
graph @g(%x: tensor<2 x 3 x 2 x 2 x 3 x 2 x 2 x f32>, %k: tensor<2 x 1 x 2 x 2 x 3 x 2 x 2 x i64>) {
  %g = GatherElements(%x, %k) {axis = 1} : tensor<2 x 1 x 2 x 2 x 3 x 2 x 2 x f32>
  %n = Neg(%g) : tensor<2 x 1 x 2 x 2 x 3 x 2 x 2 x f32>
  %st = Constant() {value = dense<[1]> : tensor<1 x i64>} : tensor<1 x i64>
  %en = Constant() {value = dense<[2]> : tensor<1 x i64>} : tensor<1 x i64>
  %s = Slice(%x, %st, %en, %st) : tensor<2 x 1 x 2 x 2 x 3 x 2 x 2 x f32>
  %a = Add(%n, %s) : tensor<2 x 1 x 2 x 2 x 3 x 2 x 2 x f32>
  return %a
}
)",
      {}, 0, [] {
        runtime::TensorMap In;
        std::vector<double> X, K;
        for (int I = 0; I < 288; ++I)
          X.push_back(double(I) * 0.25);
        for (int I = 0; I < 96; ++I)
          K.push_back(double((I * 7) % 3));
        In["x"] = tensorOf(ElementType::F32, {2, 3, 2, 2, 3, 2, 2}, X);
        In["k"] = tensorOf(ElementType::I64, {2, 1, 2, 2, 3, 2, 2}, K);
        return In;
      }());
}

TEST(CudaPlanTest, ErrorsNameTheNodeAndTheReason) {
  // Integer tensors go only to the typed kernel and views.
  auto Int = parse(R"(
graph @ints(%x: tensor<1 x 1 x 4 x 4 x u8>) {
  %y = Softmax(%x) : tensor<1 x 1 x 4 x 4 x u8> loc("soft")
  return %y
}
)");
  ASSERT_TRUE(Int);
  EXPECT_NE(
      planError(*Int).find("'soft' (Softmax): no CUDA kernel for op 'Softmax' "
                           "reading tensor<1 x 1 x 4 x 4 x u8> (integer, bool "
                           "and f64 tensors go through comparisons"),
      std::string::npos)
      << planError(*Int);
  // MaxPool takes bytes, AveragePool does not (the same gate).
  auto Avg = parse(R"(
graph @ints(%x: tensor<1 x 1 x 4 x 4 x u8>) {
  %y = AveragePool(%x) {kernel_shape = [2, 2]} : tensor<1 x 1 x 3 x 3 x u8> loc("avg")
  return %y
}
)");
  ASSERT_TRUE(Avg);
  EXPECT_NE(planError(*Avg).find("'avg' (AveragePool): no CUDA kernel for "
                                 "op 'AveragePool' reading tensor<1 x 1 x 4 "
                                 "x 4 x u8>"),
            std::string::npos)
      << planError(*Avg);
  auto Dynamic = parse(R"(
graph @longs(%x: tensor<N x u64>) {
  %y = Identity(%x) : tensor<N x u64>
  return %y
}
)");
  ASSERT_TRUE(Dynamic);
  EXPECT_NE(planError(*Dynamic).find(
                "input 'x' has type tensor<N x u64>: the CUDA backend takes "
                "static f32, f16, bf16, f64, i8, u8, i16, u16, i32, u32, i64, "
                "u64 and bool inputs"),
            std::string::npos)
      << planError(*Dynamic);
  // f64 goes to the typed kernel only (its elementwise math, not a
  // Softmax).
  auto F64 = parse(R"(
graph @doubles(%x: tensor<4 x f64>) {
  %y = Softmax(%x) {axis = 0} : tensor<4 x f64> loc("softmax")
  return %y
}
)");
  ASSERT_TRUE(F64);
  EXPECT_NE(planError(*F64).find("'softmax' (Softmax): no CUDA kernel for op "
                                 "'Softmax' reading tensor<4 x f64>"),
            std::string::npos)
      << planError(*F64);
  auto Einsum = parse(R"(
graph @einsum(%a: tensor<4 x 8 x f32>, %b: tensor<8 x 3 x f32>, %c: tensor<3 x f32>) {
  %y = Einsum(%a, %b, %c) {equation = "ij,jk,k->i"} : tensor<4 x f32> loc("einsum")
  return %y
}
)");
  ASSERT_TRUE(Einsum);
  const std::string E = planError(*Einsum);
  EXPECT_NE(E.find("'einsum' (Einsum): no CUDA kernel for an Einsum of 3 "
                   "operands (one or two)"),
            std::string::npos)
      << E;
  // TopK's K must be known when planning.
  auto TopK = parse(R"(
graph @topk(%x: tensor<4 x 8 x f32>, %k: tensor<1 x i64>) {
  %v, %i = TopK(%x, %k) : tensor<4 x 2 x f32>, tensor<4 x 2 x i64> loc("topk")
  return %v, %i
}
)");
  ASSERT_TRUE(TopK);
  EXPECT_NE(planError(*TopK).find(
                "'topk' (TopK): no CUDA kernel for TopK whose K is computed "
                "at run time"),
            std::string::npos)
      << planError(*TopK);
  auto Dyn = parse(R"(
graph @dyn(%x: tensor<N x 4 x f32>) {
  %y = Relu(%x) : tensor<N x 4 x f32> loc("relu")
  return %y
}
)");
  ASSERT_TRUE(Dyn);
  EXPECT_NE(planError(*Dyn).find("static"), std::string::npos)
      << planError(*Dyn);
}

TEST(CudaPlanTest, PrintListsStepsAndTotals) {
  auto G = parse(ResidualNHWC);
  ASSERT_TRUE(G);
  auto P = plan(*G);
  ASSERT_TRUE(P);
  std::string S;
  llvm::raw_string_ostream OS(S);
  P->print(OS);
  EXPECT_NE(S.find("c,s,r: cudnn.conv nhwc>nhwc f32+bias+residual+relu"),
            std::string::npos)
      << S;
  EXPECT_NE(S.find("steps 2, arena 2560 bytes"), std::string::npos) << S;
}

} // namespace
