//===- LibraryKeysTest.cpp - Keys and descriptors of library calls --------===//
//
// The host-side decisions of the cuDNN and cuBLASLt runners, without a
// GPU: tuning keys, why cuDNN cannot run a conv, the dims and strides of
// cuDNN's descriptors, filter packing, epilogue splits, algorithm names,
// and the column-major GEMM that computes a row-major one (executed here
// by plain loops).
//
//===----------------------------------------------------------------------===//

#include "LibraryDescriptors.h"

#include "gtest/gtest.h"

#include <cstring>
#include <random>

using namespace strider;
using namespace strider::cuda;
using codegen::ActKind;

namespace {

/// A 2-D conv with symmetric pads, "same" output when stride 1.
ConvDesc makeConv2D(int64_t N, int64_t C, int64_t K, int64_t H, int64_t W,
                    int64_t R, int64_t Pad, int64_t Stride = 1) {
  ConvDesc D;
  D.Spatial = 2;
  D.N = N;
  D.C = C;
  D.K = K;
  for (int I = 0; I < 2; ++I) {
    D.In[I] = I == 0 ? H : W;
    D.Filter[I] = R;
    D.PadBegin[I] = D.PadEnd[I] = Pad;
    D.Stride[I] = Stride;
    D.Out[I] = (D.In[I] + 2 * Pad - R) / Stride + 1;
  }
  return D;
}

codegen::Activation act(ActKind K) {
  codegen::Activation A;
  A.Kind = K;
  return A;
}

/// The rule Program.cpp applies to what a runner fused: a prefix of
/// bias, residual, activation among the wanted parts.
bool isPrefix(const EpilogueSpec &Wanted, const EpilogueSpec &Fused) {
  const bool Act = !Fused.Act.isNone();
  if ((Fused.Bias && !Wanted.Bias) || (Fused.Residual && !Wanted.Residual) ||
      (Act && Fused.Act.Kind != Wanted.Act.Kind))
    return false;
  const bool RestBias = Wanted.Bias && !Fused.Bias;
  const bool RestResidual = Wanted.Residual && !Fused.Residual;
  return !(RestBias && (Fused.Residual || Act)) && !(RestResidual && Act);
}

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

TEST(LibraryKeysTest, ConvKeyOfTheDocumentedExample) {
  ConvDesc D = makeConv2D(1, 64, 64, 56, 56, 3, 1);
  D.XChannelsLast = D.YChannelsLast = true;
  D.Type = DType::F16;
  D.Math = MathMode::Half;
  EXPECT_EQ(getConvKey(D), "x=1x64x56x56 w=64x64x3x3 s=1x1 p=1x1x1x1 d=1x1 "
                           "g=1 xl=nhwc yl=nhwc f16");
}

TEST(LibraryKeysTest, ConvKeysOf1DGroupedTF32And3D) {
  ConvDesc D;
  D.Spatial = 1;
  D.N = 2;
  D.C = 8;
  D.K = 4;
  D.Groups = 2;
  D.In[0] = 20;
  D.Filter[0] = 5;
  D.Stride[0] = 2;
  D.Dilation[0] = 2;
  D.PadBegin[0] = 3;
  D.PadEnd[0] = 2;
  D.Out[0] = 9;
  D.XChannelsLast = true;
  D.Math = MathMode::TF32;
  EXPECT_EQ(getConvKey(D),
            "x=2x8x20 w=4x4x5 s=2 p=3x2 d=2 g=2 xl=nhwc yl=nchw f32 tf32");

  ConvDesc V;
  V.Spatial = 3;
  V.N = 1;
  V.C = 3;
  V.K = 6;
  for (int I = 0; I < 3; ++I) {
    V.In[I] = V.Out[I] = 8 + I;
    V.Filter[I] = 3;
    V.PadBegin[I] = V.PadEnd[I] = 1;
  }
  V.Type = DType::BF16;
  V.Math = MathMode::Half;
  EXPECT_EQ(getConvKey(V), "x=1x3x8x9x10 w=6x3x3x3x3 s=1x1x1 p=1x1x1x1x1x1 "
                           "d=1x1x1 g=1 xl=nchw yl=nchw bf16");
}

TEST(LibraryKeysTest, TransposedConvKeyCarriesTheOutputSize) {
  // ConvTranspose 4x4 -> 8x8, stride 2, kernel 3, pads 1, output_padding 1.
  ConvDesc D = makeConv2D(1, 16, 8, 4, 4, 3, 1, 2);
  D.Transposed = true;
  D.Out[0] = D.Out[1] = 8;
  D.Groups = 2;
  EXPECT_EQ(getConvKey(D), "transposed x=1x16x4x4 w=16x4x3x3 y=1x8x8x8 s=2x2 "
                           "p=1x1x1x1 d=1x1 g=2 xl=nchw yl=nchw f32");
}

TEST(LibraryKeysTest, GemmKeys) {
  GemmDesc D;
  D.M = 64;
  D.N = 128;
  D.K = 256;
  D.TransB = true;
  D.Type = DType::F16;
  D.Math = MathMode::Half;
  EXPECT_EQ(getGemmKey(D), "b=1 m=64 n=128 k=256 ta=0 tb=1 f16");
  D.Epilogue.Bias = true;
  D.Epilogue.Act = act(ActKind::Relu);
  EXPECT_EQ(getGemmKey(D), "b=1 m=64 n=128 k=256 ta=0 tb=1 f16 bias relu");
  // Only the activations cuBLASLt fuses appear.
  D.Epilogue.Act = act(ActKind::Sigmoid);
  EXPECT_EQ(getGemmKey(D), "b=1 m=64 n=128 k=256 ta=0 tb=1 f16 bias");
  D.Epilogue.Act = act(ActKind::GeluTanh);
  EXPECT_EQ(getGemmKey(D), "b=1 m=64 n=128 k=256 ta=0 tb=1 f16 bias gelu");
  D.Epilogue.Act = act(ActKind::Gelu);
  EXPECT_EQ(getGemmKey(D), "b=1 m=64 n=128 k=256 ta=0 tb=1 f16 bias");

  GemmDesc B;
  B.Batch = 12;
  B.M = 128;
  B.N = 128;
  B.K = 64;
  B.TransA = true;
  B.BatchStrideA = 128 * 64;
  B.BatchStrideB = 0;
  B.BatchStrideY = 128 * 128;
  B.Math = MathMode::TF32;
  EXPECT_EQ(getGemmKey(B), "b=12 m=128 n=128 k=64 ta=1 tb=0 f32 tf32 "
                           "sa=8192 sb=0 sy=16384");
}

//===----------------------------------------------------------------------===//
// checkConv
//===----------------------------------------------------------------------===//

TEST(LibraryKeysTest, CheckConvAcceptsWhatCudnnRuns) {
  EXPECT_EQ(checkConv(makeConv2D(2, 16, 32, 14, 14, 3, 1)), "");
  EXPECT_EQ(checkConv(makeConv2D(2, 16, 32, 14, 14, 3, 1, 2)), "");
  ConvDesc Depthwise = makeConv2D(1, 32, 32, 7, 7, 3, 1);
  Depthwise.Groups = 32;
  EXPECT_EQ(checkConv(Depthwise), "");
}

TEST(LibraryKeysTest, CheckConvTakesAsymmetricPadsThatAreNeverRead) {
  // Stride 2 over 8 with kernel 3 and pads 1/0 (TF's SAME_LOWER-like):
  // 4 outputs; a pad of 1 on both sides gives the same 4 windows.
  ConvDesc D = makeConv2D(1, 4, 4, 8, 8, 3, 1, 2);
  D.PadEnd[0] = D.PadEnd[1] = 0;
  D.Out[0] = D.Out[1] = 4;
  EXPECT_EQ(checkConv(D), "");
  EXPECT_EQ(getSymmetricPad(D, 0), 1);
  EXPECT_EQ(getCudnnConvGeometry(D).Pad[0], 1);
}

TEST(LibraryKeysTest, CheckConvReasons) {
  // SAME_UPPER with an even kernel: pads 0/1 change the windows.
  ConvDesc Same = makeConv2D(1, 4, 4, 8, 8, 2, 0);
  Same.PadEnd[1] = 1;
  Same.Out[1] = 8;
  EXPECT_EQ(checkConv(Same), "asymmetric padding 0/1 at spatial dim 1 "
                             "(cuDNN pads both sides equally)");

  ConvDesc Groups = makeConv2D(1, 6, 8, 8, 8, 3, 1);
  Groups.Groups = 4;
  EXPECT_EQ(checkConv(Groups), "4 groups do not divide C=6 and K=8");

  ConvDesc Rank = makeConv2D(1, 4, 4, 8, 8, 3, 1);
  Rank.Spatial = 4;
  EXPECT_EQ(checkConv(Rank), "cuDNN takes 1 to 3 spatial dims, not 4");

  ConvDesc Empty = makeConv2D(0, 4, 4, 8, 8, 3, 1);
  EXPECT_NE(checkConv(Empty).find("empty tensors"), std::string::npos);
  ConvDesc EmptySpatial = makeConv2D(1, 4, 4, 8, 8, 3, 1);
  EmptySpatial.In[0] = 0;
  EXPECT_EQ(checkConv(EmptySpatial),
            "an empty input, output or filter at spatial dim 0");

  ConvDesc Negative = makeConv2D(1, 4, 4, 8, 8, 3, 1);
  Negative.PadBegin[1] = -1;
  EXPECT_EQ(checkConv(Negative), "negative padding at spatial dim 1");

  ConvDesc Stride = makeConv2D(1, 4, 4, 8, 8, 3, 1);
  Stride.Stride[0] = 0;
  EXPECT_EQ(checkConv(Stride), "a stride or dilation below 1 at spatial dim 0");

  ConvDesc Far = makeConv2D(1, 4, 4, 8, 8, 1, 0);
  Far.Stride[1] = int64_t(1) << 32;
  Far.Out[1] = 1;
  EXPECT_EQ(checkConv(Far), "a window parameter of 2^31 or more at spatial "
                            "dim 1");

  ConvDesc Wrong = makeConv2D(1, 4, 4, 8, 8, 3, 1);
  Wrong.Out[0] = 7;
  EXPECT_EQ(checkConv(Wrong), "an output size 7 that does not follow from "
                              "the window at spatial dim 0");

  ConvDesc Huge = makeConv2D(64, 256, 256, 512, 512, 1, 0);
  EXPECT_EQ(checkConv(Huge),
            "a tensor of 2^31 elements or more (cuDNN's limit)");
}

TEST(LibraryKeysTest, CheckConvOfTransposedConvs) {
  // 4 -> 8 with stride 2, kernel 3, pads 1/1 and output_padding 1: the
  // forward conv from 8 back to 4 is floor((8 + 2 - 3) / 2) + 1 = 4.
  ConvDesc D = makeConv2D(1, 8, 4, 4, 4, 3, 1, 2);
  D.Transposed = true;
  D.Out[0] = D.Out[1] = 8;
  EXPECT_EQ(checkConv(D), "");
  // Without output_padding: 7.
  D.Out[0] = 7;
  EXPECT_EQ(checkConv(D), "");
  // Nothing maps 10 back to 4.
  D.Out[0] = 10;
  EXPECT_NE(checkConv(D), "");
}

//===----------------------------------------------------------------------===//
// Descriptors
//===----------------------------------------------------------------------===//

void expectDims(const CudnnTensorDims &T, std::vector<int> Dims,
                std::vector<int> Strides) {
  ASSERT_EQ(size_t(T.Rank), Dims.size());
  for (int I = 0; I < T.Rank; ++I) {
    EXPECT_EQ(T.Dims[I], Dims[size_t(I)]) << "dim " << I;
    EXPECT_EQ(T.Strides[I], Strides[size_t(I)]) << "stride " << I;
  }
}

TEST(LibraryKeysTest, GeometryOf2DConvsInBothLayouts) {
  ConvDesc D = makeConv2D(2, 3, 8, 5, 7, 3, 1, 2);
  D.Groups = 1;
  CudnnConvGeometry G = getCudnnConvGeometry(D);
  EXPECT_EQ(G.Rank, 4);
  expectDims(G.X, {2, 3, 5, 7}, {105, 35, 7, 1});
  expectDims(G.Y, {2, 8, 3, 4}, {96, 12, 4, 1});
  expectDims(G.Bias, {1, 8, 1, 1}, {8, 1, 1, 1});
  EXPECT_EQ(std::vector<int>(G.Filter, G.Filter + 4),
            (std::vector<int>{8, 3, 3, 3}));
  EXPECT_FALSE(G.FilterChannelsLast);
  EXPECT_EQ(G.Pad[0], 1);
  EXPECT_EQ(G.Pad[1], 1);
  EXPECT_EQ(G.Stride[0], 2);
  EXPECT_EQ(G.Dilation[1], 1);

  D.XChannelsLast = D.YChannelsLast = true;
  G = getCudnnConvGeometry(D);
  expectDims(G.X, {2, 3, 5, 7}, {105, 1, 21, 3});
  expectDims(G.Y, {2, 8, 3, 4}, {96, 1, 32, 8});
  expectDims(G.Bias, {1, 8, 1, 1}, {8, 1, 8, 8});
  EXPECT_TRUE(G.FilterChannelsLast);

  // Mixed layouts keep the KCRS filter.
  D.YChannelsLast = false;
  G = getCudnnConvGeometry(D);
  expectDims(G.Y, {2, 8, 3, 4}, {96, 12, 4, 1});
  EXPECT_FALSE(G.FilterChannelsLast);
}

TEST(LibraryKeysTest, GeometryOf1DConvsIs2DWithHeightOne) {
  ConvDesc D;
  D.Spatial = 1;
  D.N = 2;
  D.C = 4;
  D.K = 6;
  D.Groups = 2;
  D.In[0] = 10;
  D.Filter[0] = 3;
  D.Stride[0] = 2;
  D.Dilation[0] = 2;
  D.PadBegin[0] = D.PadEnd[0] = 2;
  D.Out[0] = 5;
  D.XChannelsLast = D.YChannelsLast = true;
  ASSERT_EQ(checkConv(D), "");
  CudnnConvGeometry G = getCudnnConvGeometry(D);
  EXPECT_EQ(G.Rank, 4);
  expectDims(G.X, {2, 4, 1, 10}, {40, 1, 40, 4});
  expectDims(G.Y, {2, 6, 1, 5}, {30, 1, 30, 6});
  EXPECT_EQ(std::vector<int>(G.Filter, G.Filter + 4),
            (std::vector<int>{6, 2, 1, 3}));
  EXPECT_EQ(G.Pad[0], 0);
  EXPECT_EQ(G.Pad[1], 2);
  EXPECT_EQ(G.Stride[0], 1);
  EXPECT_EQ(G.Stride[1], 2);
  EXPECT_EQ(G.Dilation[0], 1);
  EXPECT_EQ(G.Dilation[1], 2);
  EXPECT_EQ(G.Groups, 2);
}

TEST(LibraryKeysTest, GeometryOf3DConvs) {
  ConvDesc D;
  D.Spatial = 3;
  D.N = 1;
  D.C = 2;
  D.K = 4;
  for (int I = 0; I < 3; ++I) {
    D.In[I] = D.Out[I] = 3 + I;
    D.Filter[I] = 3;
    D.PadBegin[I] = D.PadEnd[I] = 1;
  }
  D.XChannelsLast = D.YChannelsLast = true;
  ASSERT_EQ(checkConv(D), "");
  CudnnConvGeometry G = getCudnnConvGeometry(D);
  EXPECT_EQ(G.Rank, 5);
  expectDims(G.X, {1, 2, 3, 4, 5}, {120, 1, 40, 10, 2});
  expectDims(G.Y, {1, 4, 3, 4, 5}, {240, 1, 80, 20, 4});
  expectDims(G.Bias, {1, 4, 1, 1, 1}, {4, 1, 4, 4, 4});
  EXPECT_EQ(std::vector<int>(G.Filter, G.Filter + 5),
            (std::vector<int>{4, 2, 3, 3, 3}));
}

TEST(LibraryKeysTest, GeometryOfTransposedConvsIsTheForwardConvFromY) {
  // ConvTranspose C=8 -> K=6 with 2 groups: ONNX weight (8, 3, 3, 3) is
  // the filter of the forward conv from Y (6 channels) to X (8).
  ConvDesc D = makeConv2D(1, 8, 6, 4, 4, 3, 1, 2);
  D.Transposed = true;
  D.Groups = 2;
  D.Out[0] = D.Out[1] = 8;
  ASSERT_EQ(checkConv(D), "");
  CudnnConvGeometry G = getCudnnConvGeometry(D);
  expectDims(G.X, {1, 8, 4, 4}, {128, 16, 4, 1});
  expectDims(G.Y, {1, 6, 8, 8}, {384, 64, 8, 1});
  EXPECT_EQ(std::vector<int>(G.Filter, G.Filter + 4),
            (std::vector<int>{8, 3, 3, 3}));
  EXPECT_EQ(G.Pad[0], 1);
  EXPECT_EQ(G.Stride[0], 2);
}

TEST(LibraryKeysTest, PackedFiltersFollowTheirFormat) {
  ConvDesc D = makeConv2D(1, 4, 3, 6, 6, 3, 1);
  D.K = 3;
  D.Filter[1] = 2;
  D.Out[1] = 7;
  const int64_t K = 3, C = 4, R = 3, S = 2;
  std::vector<float> W(size_t(K * C * R * S));
  for (int64_t O = 0; O < K; ++O)
    for (int64_t I = 0; I < C; ++I)
      for (int64_t Y = 0; Y < R; ++Y)
        for (int64_t X = 0; X < S; ++X)
          W[size_t(((O * C + I) * R + Y) * S + X)] =
              float(O * 1000 + I * 100 + Y * 10 + X);
  EXPECT_EQ(packConvFilter(D, W.data(), false), W);
  std::vector<float> P = packConvFilter(D, W.data(), true);
  ASSERT_EQ(P.size(), W.size());
  for (int64_t O = 0; O < K; ++O)
    for (int64_t I = 0; I < C; ++I)
      for (int64_t Y = 0; Y < R; ++Y)
        for (int64_t X = 0; X < S; ++X)
          EXPECT_EQ(P[size_t(((O * R + Y) * S + X) * C + I)],
                    float(O * 1000 + I * 100 + Y * 10 + X));

  // Transposed with groups: (C, K / G, taps) -> (C, taps, K / G).
  ConvDesc T = makeConv2D(1, 2, 4, 3, 3, 1, 0);
  T.Transposed = true;
  T.Groups = 2;
  std::vector<float> TW = {1, 2, 3, 4}; // (2, 2, 1, 1)
  EXPECT_EQ(packConvFilter(T, TW.data(), true), TW);
}

TEST(LibraryKeysTest, StorageConversion) {
  std::vector<float> V = {1.0f, -2.0f, 0.5f};
  std::vector<uint8_t> F32 = toStorage(V, DType::F32);
  ASSERT_EQ(F32.size(), 12u);
  EXPECT_EQ(std::memcmp(F32.data(), V.data(), 12), 0);
  auto Half = [](const std::vector<uint8_t> &B, size_t I) {
    uint16_t H;
    std::memcpy(&H, &B[2 * I], 2);
    return H;
  };
  std::vector<uint8_t> F16 = toStorage(V, DType::F16);
  ASSERT_EQ(F16.size(), 6u);
  EXPECT_EQ(Half(F16, 0), 0x3C00);
  EXPECT_EQ(Half(F16, 1), 0xC000);
  EXPECT_EQ(Half(F16, 2), 0x3800);
  std::vector<uint8_t> BF16 = toStorage(V, DType::BF16);
  EXPECT_EQ(Half(BF16, 0), 0x3F80);
  EXPECT_EQ(Half(BF16, 1), 0xC000);
  EXPECT_EQ(Half(BF16, 2), 0x3F00);
}

//===----------------------------------------------------------------------===//
// Epilogue splits
//===----------------------------------------------------------------------===//

TEST(LibraryKeysTest, ConvEpilogueSplits) {
  const auto Precomp = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  const auto Other = CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
  ConvDesc D = makeConv2D(1, 4, 4, 8, 8, 3, 1);

  // Bias + residual + ReLU: all of it, with any algorithm.
  D.Epilogue = {true, true, act(ActKind::Relu)};
  for (auto A : {Precomp, Other}) {
    ConvFusion F = splitConvEpilogue(D, A);
    EXPECT_TRUE(F.BiasActivation);
    EXPECT_TRUE(F.Relu);
    EXPECT_TRUE(F.Fused.Bias && F.Fused.Residual);
    EXPECT_EQ(F.Fused.Act.Kind, ActKind::Relu);
  }
  // ReLU alone: through the fused call with a zero bias.
  D.Epilogue = {false, false, act(ActKind::Relu)};
  ConvFusion F = splitConvEpilogue(D, Other);
  EXPECT_TRUE(F.BiasActivation && F.Relu);
  EXPECT_FALSE(F.Fused.Bias);
  EXPECT_EQ(F.Fused.Act.Kind, ActKind::Relu);

  // No activation: IDENTITY needs IMPLICIT_PRECOMP_GEMM.
  D.Epilogue = {true, true, {}};
  F = splitConvEpilogue(D, Precomp);
  EXPECT_TRUE(F.BiasActivation);
  EXPECT_FALSE(F.Relu);
  EXPECT_TRUE(F.Fused.Bias && F.Fused.Residual);
  F = splitConvEpilogue(D, Other);
  EXPECT_FALSE(F.BiasActivation);
  EXPECT_FALSE(F.Fused.Bias || F.Fused.Residual);

  // Nothing wanted: the plain forward call.
  D.Epilogue = {};
  EXPECT_FALSE(splitConvEpilogue(D, Precomp).BiasActivation);

  // Another activation: the caller's pass does all three.
  D.Epilogue = {true, false, act(ActKind::Sigmoid)};
  F = splitConvEpilogue(D, Precomp);
  EXPECT_FALSE(F.BiasActivation);
  EXPECT_FALSE(F.Fused.Bias);
  EXPECT_TRUE(F.Fused.Act.isNone());

  // ConvTranspose fuses nothing.
  ConvDesc T = D;
  T.Transposed = true;
  T.Epilogue = {true, true, act(ActKind::Relu)};
  F = splitConvEpilogue(T, Precomp);
  EXPECT_FALSE(F.BiasActivation);
  EXPECT_FALSE(F.Fused.Bias || F.Fused.Residual || !F.Fused.Act.isNone());

  // Every split is a prefix the program can finish.
  for (bool Bias : {false, true})
    for (bool Residual : {false, true})
      for (ActKind K :
           {ActKind::None, ActKind::Relu, ActKind::Clip, ActKind::Sigmoid})
        for (auto A : {Precomp, Other})
          for (bool Transposed : {false, true}) {
            ConvDesc E = D;
            E.Transposed = Transposed;
            E.Epilogue = {Bias, Residual, act(K)};
            EXPECT_TRUE(isPrefix(E.Epilogue, splitConvEpilogue(E, A).Fused));
          }
}

TEST(LibraryKeysTest, GemmEpilogueSplits) {
  struct Case {
    bool Bias;
    ActKind Act;
    cublasLtEpilogue_t Epilogue;
    bool FusesAct;
  } Cases[] = {
      {false, ActKind::None, CUBLASLT_EPILOGUE_DEFAULT, false},
      {true, ActKind::None, CUBLASLT_EPILOGUE_BIAS, false},
      {false, ActKind::Relu, CUBLASLT_EPILOGUE_RELU, true},
      {true, ActKind::Relu, CUBLASLT_EPILOGUE_RELU_BIAS, true},
      {false, ActKind::GeluTanh, CUBLASLT_EPILOGUE_GELU, true},
      {true, ActKind::GeluTanh, CUBLASLT_EPILOGUE_GELU_BIAS, true},
      // The erf form of GELU and the rest: bias only.
      {true, ActKind::Gelu, CUBLASLT_EPILOGUE_BIAS, false},
      {false, ActKind::Gelu, CUBLASLT_EPILOGUE_DEFAULT, false},
      {true, ActKind::Sigmoid, CUBLASLT_EPILOGUE_BIAS, false},
      {true, ActKind::Clip, CUBLASLT_EPILOGUE_BIAS, false},
  };
  for (const Case &C : Cases) {
    EpilogueSpec W{C.Bias, false, act(C.Act)};
    GemmFusion F = splitGemmEpilogue(W);
    EXPECT_EQ(F.Epilogue, C.Epilogue) << int(C.Act) << " " << C.Bias;
    EXPECT_EQ(F.Fused.Bias, C.Bias);
    EXPECT_EQ(!F.Fused.Act.isNone(), C.FusesAct);
    EXPECT_TRUE(isPrefix(W, F.Fused));
  }
}

//===----------------------------------------------------------------------===//
// Algorithm names
//===----------------------------------------------------------------------===//

TEST(LibraryKeysTest, ConvAlgoNamesRoundTrip) {
  for (int A = 0; A < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++A) {
    const char *Name = getConvAlgoName(false, A);
    ASSERT_NE(Name, nullptr) << A;
    EXPECT_EQ(parseConvAlgo(false, Name), A);
  }
  for (int A = 0; A < CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT; ++A) {
    const char *Name = getConvAlgoName(true, A);
    ASSERT_NE(Name, nullptr) << A;
    EXPECT_EQ(parseConvAlgo(true, Name), A);
  }
  EXPECT_STREQ(getConvAlgoName(false, 1), "implicit_precomp_gemm");
  EXPECT_EQ(parseConvAlgo(false, "implicit_precomp_gemm"),
            int(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM));
  EXPECT_EQ(parseConvAlgo(false, "winograd_nonfused"),
            int(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED));
  EXPECT_EQ(parseConvAlgo(true, "algo_1"),
            int(CUDNN_CONVOLUTION_BWD_DATA_ALGO_1));
  EXPECT_EQ(parseConvAlgo(true, "implicit_gemm"), -1);
  EXPECT_EQ(parseConvAlgo(false, "algo_0"), -1);
  EXPECT_EQ(parseConvAlgo(false, ""), -1);
  EXPECT_EQ(getConvAlgoName(false, CUDNN_CONVOLUTION_FWD_ALGO_COUNT), nullptr);
  EXPECT_EQ(getConvAlgoName(true, -1), nullptr);
}

TEST(LibraryKeysTest, GemmAlgoConfigsRoundTrip) {
  GemmAlgoConfig C;
  C.Id = 21;
  C.Tile = 20;
  C.Stages = 8;
  C.SplitK = 4;
  C.Reduction = 2;
  C.Swizzle = 1;
  C.Custom = 3;
  C.InnerShape = 5;
  C.ClusterShape = 2;
  const std::string S = formatGemmAlgo(C);
  EXPECT_EQ(S, "id=21 tile=20 stages=8 splitk=4 reduction=2 swizzle=1 "
               "custom=3 inner=5 cluster=2");
  auto P = parseGemmAlgo(S);
  ASSERT_TRUE(P.hasValue());
  EXPECT_EQ(formatGemmAlgo(*P), S);
  // Any order.
  auto Q = parseGemmAlgo("cluster=2 inner=5 custom=3 swizzle=1 reduction=2 "
                         "splitk=4 stages=8 tile=20 id=21");
  ASSERT_TRUE(Q.hasValue());
  EXPECT_EQ(formatGemmAlgo(*Q), S);

  EXPECT_FALSE(parseGemmAlgo("").hasValue());
  EXPECT_FALSE(parseGemmAlgo("implicit_gemm").hasValue());
  EXPECT_FALSE(parseGemmAlgo("id=21 tile=20").hasValue()); // Missing fields.
  EXPECT_FALSE(parseGemmAlgo(S + " id=3").hasValue());     // Twice.
  EXPECT_FALSE(parseGemmAlgo(S + " foo=1").hasValue());    // Unknown.
  std::string Zero = S;
  Zero.replace(Zero.find("splitk=4"), 8, "splitk=0");
  EXPECT_FALSE(parseGemmAlgo(Zero).hasValue());
  std::string Wide = S;
  Wide.replace(Wide.find("inner=5"), 7, "inner=70000");
  EXPECT_FALSE(parseGemmAlgo(Wide).hasValue());
}

//===----------------------------------------------------------------------===//
// Row-major GEMMs as cuBLASLt's column-major ones
//===----------------------------------------------------------------------===//

/// The product \p S describes, run as cuBLASLt would: column-major, op()
/// per the transposes, batch by batch.
void runColumnMajor(const LtGemmShape &S, float Alpha, const float *A,
                    const float *B, float *C) {
  for (int64_t Bt = 0; Bt < S.Batch; ++Bt) {
    const float *Ab = A + Bt * S.StrideA, *Bb = B + Bt * S.StrideB;
    float *Cb = C + Bt * S.StrideC;
    for (int64_t I = 0; I < S.M; ++I)
      for (int64_t J = 0; J < S.N; ++J) {
        double Sum = 0;
        for (int64_t L = 0; L < S.K; ++L) {
          float OpA = S.TransA ? Ab[L + I * S.Lda] : Ab[I + L * S.Lda];
          float OpB = S.TransB ? Bb[J + L * S.Ldb] : Bb[L + J * S.Ldb];
          Sum += double(OpA) * OpB;
        }
        Cb[I + J * S.Ldc] = float(Alpha * Sum);
      }
  }
}

/// The row-major product \p D describes, by its definition.
void runRowMajor(const GemmDesc &D, const float *A, const float *B, float *Y) {
  for (int64_t Bt = 0; Bt < D.Batch; ++Bt) {
    const float *Ab = A + Bt * D.BatchStrideA, *Bb = B + Bt * D.BatchStrideB;
    float *Yb = Y + Bt * D.BatchStrideY;
    for (int64_t M = 0; M < D.M; ++M)
      for (int64_t N = 0; N < D.N; ++N) {
        double Sum = 0;
        for (int64_t K = 0; K < D.K; ++K) {
          float AV = D.TransA ? Ab[K * D.M + M] : Ab[M * D.K + K];
          float BV = D.TransB ? Bb[N * D.K + K] : Bb[K * D.N + N];
          Sum += double(AV) * BV;
        }
        Yb[M * D.N + N] = float(D.Alpha * Sum);
      }
  }
}

TEST(LibraryKeysTest, RowMajorGemmsAsColumnMajorOnes) {
  std::mt19937 Gen(7);
  std::uniform_real_distribution<float> Dist(-1.0f, 1.0f);
  struct Shape {
    int64_t Batch, M, N, K;
    bool ShareA, ShareB;
  } Shapes[] = {{1, 5, 7, 3, false, false},
                {1, 1, 4, 6, false, false},
                {3, 4, 2, 5, false, false},
                {2, 3, 6, 4, true, false},
                {4, 2, 3, 7, false, true}};
  for (const Shape &Sh : Shapes)
    for (bool TransA : {false, true})
      for (bool TransB : {false, true}) {
        GemmDesc D;
        D.Batch = Sh.Batch;
        D.M = Sh.M;
        D.N = Sh.N;
        D.K = Sh.K;
        D.TransA = TransA;
        D.TransB = TransB;
        D.Alpha = 0.5f;
        if (D.Batch > 1) {
          D.BatchStrideA = Sh.ShareA ? 0 : D.M * D.K;
          D.BatchStrideB = Sh.ShareB ? 0 : D.K * D.N;
          D.BatchStrideY = D.M * D.N;
        }
        ASSERT_EQ(checkGemm(D), "");
        std::vector<float> A(size_t(D.Batch * D.M * D.K)),
            B(size_t(D.Batch * D.K * D.N));
        for (float &V : A)
          V = Dist(Gen);
        for (float &V : B)
          V = Dist(Gen);
        std::vector<float> Want(size_t(D.Batch * D.M * D.N)),
            Got(Want.size(), -99.0f);
        runRowMajor(D, A.data(), B.data(), Want.data());

        LtGemmShape S = getLtGemmShape(D);
        // The layouts hold the stored matrices and op() gives M x K, K x N.
        EXPECT_EQ(S.TransA ? S.ACols : S.ARows, S.M);
        EXPECT_EQ(S.TransA ? S.ARows : S.ACols, S.K);
        EXPECT_EQ(S.TransB ? S.BCols : S.BRows, S.K);
        EXPECT_EQ(S.TransB ? S.BRows : S.BCols, S.N);
        EXPECT_EQ(S.CRows, S.M);
        EXPECT_EQ(S.CCols, S.N);
        EXPECT_GE(S.Lda, S.ARows);
        EXPECT_GE(S.Ldb, S.BRows);
        EXPECT_GE(S.Ldc, S.CRows);
        // cuBLASLt's A is our B, its B our A.
        runColumnMajor(S, D.Alpha, B.data(), A.data(), Got.data());
        for (size_t I = 0; I < Want.size(); ++I)
          ASSERT_NEAR(Got[I], Want[I], 1e-5)
              << "batch " << D.Batch << " m " << D.M << " n " << D.N << " k "
              << D.K << " ta " << TransA << " tb " << TransB << " at " << I;
      }
}

TEST(LibraryKeysTest, CheckGemmReasons) {
  GemmDesc D;
  D.M = 4;
  D.N = 4;
  D.K = 4;
  EXPECT_EQ(checkGemm(D), "");
  D.K = 0;
  EXPECT_EQ(checkGemm(D), "an empty matrix product (batch=1 m=4 n=4 k=0)");
  D.K = int64_t(1) << 31;
  EXPECT_EQ(checkGemm(D), "a matrix dim of 2^31 or more (cuBLASLt's limit)");
  D.K = 4;
  D.Batch = 2;
  D.BatchStrideY = 8;
  EXPECT_EQ(checkGemm(D), "batches of Y that overlap (stride 8 < 16)");
  D.BatchStrideY = 16;
  D.BatchStrideA = -1;
  EXPECT_EQ(checkGemm(D), "a negative batch stride");
}

} // namespace
