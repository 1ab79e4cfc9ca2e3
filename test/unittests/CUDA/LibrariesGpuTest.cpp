//===- LibrariesGpuTest.cpp - cuDNN and cuBLASLt runners on a GPU ---------===//
//
// ConvRunner and GemmRunner against plain host loops: convs in both
// layouts and in f32, f16 and bf16, grouped and depthwise, strided and
// dilated, 1-D to 3-D, with their fused epilogues, ConvTranspose; GEMMs
// transposed, batched, with a constant B and fused epilogues; tuned
// algorithms and cuDNN's find; runs captured into CUDA graphs. The output
// is poisoned with NaNs before each run. Skips itself without a GPU.
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"
#include "LibraryDescriptors.h"

#include "strider/CodeGen/CUDA/CUDABackend.h"
#include "strider/IR/TensorData.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

using namespace strider;
using namespace strider::cuda;
using codegen::ActKind;

namespace {

codegen::Activation act(ActKind K) {
  codegen::Activation A;
  A.Kind = K;
  return A;
}

/// Device memory for one test, freed with it.
struct DeviceMemory {
  void *Ptr = nullptr;
  explicit DeviceMemory(size_t Bytes) {
    if (cudaMalloc(&Ptr, Bytes ? Bytes : 1) != cudaSuccess)
      Ptr = nullptr;
  }
  DeviceMemory(const DeviceMemory &) = delete;
  DeviceMemory &operator=(const DeviceMemory &) = delete;
  ~DeviceMemory() {
    if (Ptr)
      (void)cudaFree(Ptr);
  }
};

/// Random values in [-1, 1], as \p T holds them.
std::vector<float> randomValues(size_t Count, DType T, unsigned Seed) {
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<float> Dist(-1.0f, 1.0f);
  std::vector<float> V(Count);
  for (float &F : V)
    F = Dist(Gen);
  return gputest::fromStorage(toStorage(V, T), T);
}

/// Logical (N, C, pixels) data stored channels-first or -last, and back.
std::vector<float> toLayout(const std::vector<float> &V, int64_t N, int64_t C,
                            int64_t Pixels, bool ChannelsLast) {
  if (!ChannelsLast)
    return V;
  std::vector<float> R(V.size());
  for (int64_t B = 0; B < N; ++B)
    for (int64_t Ch = 0; Ch < C; ++Ch)
      for (int64_t P = 0; P < Pixels; ++P)
        R[size_t((B * Pixels + P) * C + Ch)] =
            V[size_t((B * C + Ch) * Pixels + P)];
  return R;
}
std::vector<float> fromLayout(const std::vector<float> &V, int64_t N, int64_t C,
                              int64_t Pixels, bool ChannelsLast) {
  if (!ChannelsLast)
    return V;
  std::vector<float> R(V.size());
  for (int64_t B = 0; B < N; ++B)
    for (int64_t Ch = 0; Ch < C; ++Ch)
      for (int64_t P = 0; P < Pixels; ++P)
        R[size_t((B * C + Ch) * Pixels + P)] =
            V[size_t((B * Pixels + P) * C + Ch)];
  return R;
}

/// The bound a result is held to: \p Tol times (1 + the sum of the
/// magnitudes of what was added up).
double getTolerance(DType T, MathMode M) {
  if (T == DType::BF16)
    return 1e-2;
  if (T == DType::F16)
    return 2e-3;
  return M == MathMode::TF32 ? 2e-3 : 2e-5;
}

/// A reference result and, per element, the sum of the magnitudes of the
/// terms it adds (for the tolerance).
struct Reference {
  std::vector<double> Y, Magnitude;
};

int64_t product(const int64_t *V) { return V[0] * V[1] * V[2]; }

/// ONNX's Conv or ConvTranspose on logical data, then the parts of the
/// epilogue in \p Apply.
Reference referenceConv(const ConvDesc &D, const std::vector<float> &X,
                        const std::vector<float> &W,
                        const std::vector<float> &Bias,
                        const std::vector<float> &Residual,
                        const EpilogueSpec &Apply) {
  const int64_t InPixels = product(D.In), OutPixels = product(D.Out);
  const int64_t Taps = product(D.Filter);
  Reference R;
  R.Y.assign(size_t(D.N * D.K * OutPixels), 0.0);
  R.Magnitude.assign(R.Y.size(), 0.0);
  auto Offset = [](const int64_t *Pos, const int64_t *Size) {
    return (Pos[0] * Size[1] + Pos[1]) * Size[2] + Pos[2];
  };
  const int64_t Cg = D.C / D.Groups, Kg = D.K / D.Groups;
  for (int64_t B = 0; B < D.N; ++B)
    for (int64_t T = 0; T < Taps; ++T) {
      int64_t Tap[3] = {T / (D.Filter[1] * D.Filter[2]),
                        T / D.Filter[2] % D.Filter[1], T % D.Filter[2]};
      // Forward: output o reads input o * s - p + t * d. Transposed: input
      // o scatters to that output position.
      const int64_t *From = D.Transposed ? D.In : D.Out;
      const int64_t *To = D.Transposed ? D.Out : D.In;
      for (int64_t O = 0; O < product(From); ++O) {
        int64_t Pos[3] = {O / (From[1] * From[2]), O / From[2] % From[1],
                          O % From[2]};
        int64_t Other[3];
        bool Inside = true;
        for (int I = 0; I < 3; ++I) {
          Other[I] =
              Pos[I] * D.Stride[I] - D.PadBegin[I] + Tap[I] * D.Dilation[I];
          Inside &= Other[I] >= 0 && Other[I] < To[I];
        }
        if (!Inside)
          continue;
        const int64_t FromPix = Offset(Pos, From), ToPix = Offset(Other, To);
        for (int64_t G = 0; G < D.Groups; ++G)
          for (int64_t Kk = 0; Kk < Kg; ++Kk)
            for (int64_t Cc = 0; Cc < Cg; ++Cc) {
              const int64_t Cin = G * Cg + Cc, Kout = G * Kg + Kk;
              double XV, WV;
              size_t YI;
              if (!D.Transposed) {
                XV = X[size_t((B * D.C + Cin) * InPixels + ToPix)];
                WV = W[size_t((Kout * Cg + Cc) * Taps + T)];
                YI = size_t((B * D.K + Kout) * OutPixels + FromPix);
              } else {
                XV = X[size_t((B * D.C + Cin) * InPixels + FromPix)];
                WV = W[size_t((Cin * Kg + Kk) * Taps + T)];
                YI = size_t((B * D.K + Kout) * OutPixels + ToPix);
              }
              R.Y[YI] += XV * WV;
              R.Magnitude[YI] += std::fabs(XV * WV);
            }
      }
    }
  for (size_t I = 0; I < R.Y.size(); ++I) {
    const int64_t K = int64_t(I) / OutPixels % D.K;
    if (Apply.Bias) {
      R.Y[I] += Bias[size_t(K)];
      R.Magnitude[I] += std::fabs(Bias[size_t(K)]);
    }
    if (Apply.Residual) {
      R.Y[I] += Residual[I];
      R.Magnitude[I] += std::fabs(Residual[I]);
    }
    R.Y[I] = applyScalar(Apply.Act, float(R.Y[I]));
  }
  return R;
}

void expectClose(const std::vector<float> &Got, const Reference &Want,
                 double Tol, const std::string &What) {
  ASSERT_EQ(Got.size(), Want.Y.size()) << What;
  size_t Bad = 0;
  for (size_t I = 0; I < Got.size(); ++I) {
    const double Bound = Tol * (1.0 + Want.Magnitude[I]);
    if (!(std::fabs(double(Got[I]) - Want.Y[I]) <= Bound) && Bad++ < 5)
      ADD_FAILURE() << What << ": element " << I << " is " << Got[I]
                    << ", expected " << Want.Y[I] << " (within " << Bound
                    << ")";
  }
  EXPECT_EQ(Bad, 0u) << What;
}

class LibrariesGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    STRIDER_SKIP_WITHOUT_DEVICE();
    ASSERT_EQ(cudaStreamCreateWithFlags(&Stream, cudaStreamNonBlocking),
              cudaSuccess);
    auto L = Libraries::create(Stream);
    ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
    Libs = std::move(*L);
  }
  void TearDown() override {
    Libs.reset();
    if (Stream)
      (void)cudaStreamDestroy(Stream);
  }

  /// Enqueues \p Launch on the stream, directly or through a captured
  /// graph, and waits.
  template <typename Fn> cudaError_t launch(Fn Launch, bool Capture) {
    if (!Capture) {
      cudaError_t E = Launch();
      return E != cudaSuccess ? E : cudaStreamSynchronize(Stream);
    }
    cudaGraph_t Graph = nullptr;
    cudaGraphExec_t Exec = nullptr;
    cudaError_t E =
        cudaStreamBeginCapture(Stream, cudaStreamCaptureModeThreadLocal);
    if (E != cudaSuccess)
      return E;
    cudaError_t Launched = Launch();
    E = cudaStreamEndCapture(Stream, &Graph);
    if (Launched != cudaSuccess)
      return Launched;
    if (E != cudaSuccess)
      return E;
    E = cudaGraphInstantiate(&Exec, Graph, 0);
    (void)cudaGraphDestroy(Graph);
    if (E == cudaSuccess)
      E = cudaGraphLaunch(Exec, Stream);
    if (E == cudaSuccess)
      E = cudaStreamSynchronize(Stream);
    if (Exec)
      (void)cudaGraphExecDestroy(Exec);
    return E;
  }

  /// Runs \p D through a ConvRunner (algorithm \p Algo, or the
  /// heuristic's) and compares with the host; returns what it fused.
  EpilogueSpec runConv(const ConvDesc &D, const std::string &Algo = "",
                       bool Capture = false);
  /// Same for a GemmRunner; \p AlgoOut receives its algorithm.
  EpilogueSpec runGemm(const GemmDesc &D, bool ConstantB,
                       const std::string &Algo = "", bool Capture = false,
                       std::string *AlgoOut = nullptr);

  cudaStream_t Stream = nullptr;
  std::unique_ptr<Libraries> Libs;
};

EpilogueSpec LibrariesGpuTest::runConv(const ConvDesc &D,
                                       const std::string &Algo, bool Capture) {
  const std::string Key = getConvKey(D);
  const int64_t InPixels = product(D.In), OutPixels = product(D.Out);
  const size_t XCount = size_t(D.N * D.C * InPixels),
               YCount = size_t(D.N * D.K * OutPixels);
  const size_t WCount =
      size_t((D.Transposed ? D.C * (D.K / D.Groups) : D.K * (D.C / D.Groups)) *
             product(D.Filter));
  std::vector<float> X = randomValues(XCount, D.Type, 1),
                     W = randomValues(WCount, D.Type, 2),
                     Bias = randomValues(size_t(D.K), DType::F32, 3),
                     Residual = randomValues(YCount, D.Type, 4);

  auto R = ConvRunner::create(*Libs, D, W.data(),
                              D.Epilogue.Bias ? Bias.data() : nullptr, Algo);
  if (!R) {
    ADD_FAILURE() << Key << ": " << llvm::toString(R.takeError());
    return {};
  }
  ConvRunner &Runner = **R;
  if (!Algo.empty()) {
    EXPECT_EQ(Runner.getAlgo(), Algo);
  }
  const size_t Elt = getDTypeBytes(D.Type);
  DeviceMemory DX(XCount * Elt), DY(YCount * Elt), DR(YCount * Elt),
      DW(Runner.getWorkspaceBytes());
  std::vector<uint8_t> XB =
      toStorage(toLayout(X, D.N, D.C, InPixels, D.XChannelsLast), D.Type);
  std::vector<uint8_t> RB = toStorage(
      toLayout(Residual, D.N, D.K, OutPixels, D.YChannelsLast), D.Type);
  EXPECT_EQ(cudaMemcpy(DX.Ptr, XB.data(), XB.size(), cudaMemcpyHostToDevice),
            cudaSuccess);
  EXPECT_EQ(cudaMemcpy(DR.Ptr, RB.data(), RB.size(), cudaMemcpyHostToDevice),
            cudaSuccess);
  // NaNs in every storage type: a library that reads Y sees them.
  EXPECT_EQ(cudaMemset(DY.Ptr, 0xFF, YCount * Elt), cudaSuccess);
  cudaError_t E = launch(
      [&] { return Runner.run(DX.Ptr, DR.Ptr, DY.Ptr, DW.Ptr, Stream).Code; },
      Capture);
  EXPECT_EQ(E, cudaSuccess)
      << Key << " (" << Runner.getAlgo() << "): " << cudaGetErrorString(E);
  if (E != cudaSuccess)
    return Runner.getFused();
  std::vector<uint8_t> YB(YCount * Elt);
  EXPECT_EQ(cudaMemcpy(YB.data(), DY.Ptr, YB.size(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  std::vector<float> Y =
      fromLayout(gputest::fromStorage(YB, D.Type), D.N, D.K, OutPixels, D.YChannelsLast);
  const EpilogueSpec Fused = Runner.getFused();
  expectClose(Y, referenceConv(D, X, W, Bias, Residual, Fused),
              getTolerance(D.Type, D.Math),
              Key + " (" + Runner.getAlgo() + ")");
  return Fused;
}

EpilogueSpec LibrariesGpuTest::runGemm(const GemmDesc &D, bool ConstantB,
                                       const std::string &Algo, bool Capture,
                                       std::string *AlgoOut) {
  const std::string Key = getGemmKey(D);
  const size_t ACount = size_t((D.Batch - 1) * D.BatchStrideA + D.M * D.K),
               BCount = size_t((D.Batch - 1) * D.BatchStrideB + D.K * D.N),
               YCount = size_t((D.Batch - 1) * D.BatchStrideY + D.M * D.N);
  std::vector<float> A = randomValues(ACount, D.Type, 5),
                     B = randomValues(BCount, D.Type, 6),
                     Bias = randomValues(size_t(D.N), DType::F32, 7);
  auto R = GemmRunner::create(*Libs, D, ConstantB ? B.data() : nullptr,
                              D.Epilogue.Bias ? Bias.data() : nullptr, Algo);
  if (!R) {
    ADD_FAILURE() << Key << ": " << llvm::toString(R.takeError());
    return {};
  }
  GemmRunner &Runner = **R;
  if (AlgoOut)
    *AlgoOut = Runner.getAlgo();
  if (!Algo.empty()) {
    EXPECT_EQ(Runner.getAlgo(), Algo);
  }
  const size_t Elt = getDTypeBytes(D.Type);
  DeviceMemory DA(ACount * Elt), DB(BCount * Elt), DY(YCount * Elt),
      DW(Runner.getWorkspaceBytes());
  std::vector<uint8_t> AB = toStorage(A, D.Type), BB = toStorage(B, D.Type);
  EXPECT_EQ(cudaMemcpy(DA.Ptr, AB.data(), AB.size(), cudaMemcpyHostToDevice),
            cudaSuccess);
  EXPECT_EQ(cudaMemcpy(DB.Ptr, BB.data(), BB.size(), cudaMemcpyHostToDevice),
            cudaSuccess);
  EXPECT_EQ(cudaMemset(DY.Ptr, 0xFF, YCount * Elt), cudaSuccess);
  cudaError_t E = launch(
      [&] {
        return Runner
            .run(DA.Ptr, ConstantB ? nullptr : DB.Ptr, DY.Ptr, DW.Ptr, Stream)
            .Code;
      },
      Capture);
  EXPECT_EQ(E, cudaSuccess)
      << Key << " (" << Runner.getAlgo() << "): " << cudaGetErrorString(E);
  if (E != cudaSuccess)
    return Runner.getFused();
  std::vector<uint8_t> YB(YCount * Elt);
  EXPECT_EQ(cudaMemcpy(YB.data(), DY.Ptr, YB.size(), cudaMemcpyDeviceToHost),
            cudaSuccess);
  std::vector<float> Y = gputest::fromStorage(YB, D.Type);

  const EpilogueSpec Fused = Runner.getFused();
  Reference Want;
  Want.Y.assign(YCount, 0.0);
  Want.Magnitude.assign(YCount, 0.0);
  std::vector<float> Got(YCount, 0.0f);
  for (int64_t Bt = 0; Bt < D.Batch; ++Bt)
    for (int64_t M = 0; M < D.M; ++M)
      for (int64_t N = 0; N < D.N; ++N) {
        double Sum = 0, Mag = 0;
        for (int64_t K = 0; K < D.K; ++K) {
          double AV = D.TransA ? A[size_t(Bt * D.BatchStrideA + K * D.M + M)]
                               : A[size_t(Bt * D.BatchStrideA + M * D.K + K)];
          double BV = D.TransB ? B[size_t(Bt * D.BatchStrideB + N * D.K + K)]
                               : B[size_t(Bt * D.BatchStrideB + K * D.N + N)];
          Sum += AV * BV;
          Mag += std::fabs(AV * BV);
        }
        Sum *= D.Alpha;
        Mag *= std::fabs(D.Alpha);
        if (Fused.Bias) {
          Sum += Bias[size_t(N)];
          Mag += std::fabs(Bias[size_t(N)]);
        }
        const size_t I = size_t(Bt * D.BatchStrideY + M * D.N + N);
        Want.Y[I] = applyScalar(Fused.Act, float(Sum));
        Want.Magnitude[I] = Mag;
        Got[I] = Y[I];
      }
  expectClose(Got, Want, getTolerance(D.Type, D.Math),
              Key + " (" + Runner.getAlgo() + ")");
  return Fused;
}

ConvDesc makeConv(int Spatial, int64_t N, int64_t C, int64_t K, int64_t In,
                  int64_t Filter, int64_t Pad, int64_t Stride = 1,
                  int64_t Dilation = 1) {
  ConvDesc D;
  D.Spatial = Spatial;
  D.N = N;
  D.C = C;
  D.K = K;
  for (int I = 0; I < Spatial; ++I) {
    D.In[I] = In + I;
    D.Filter[I] = Filter;
    D.PadBegin[I] = D.PadEnd[I] = Pad;
    D.Stride[I] = Stride;
    D.Dilation[I] = Dilation;
    D.Out[I] = (D.In[I] + 2 * Pad - (Filter - 1) * Dilation - 1) / Stride + 1;
  }
  return D;
}

ConvDesc inType(ConvDesc D, DType T, bool ChannelsLast) {
  D.Type = T;
  D.Math = T == DType::F32 ? MathMode::FP32 : MathMode::Half;
  D.XChannelsLast = D.YChannelsLast = ChannelsLast;
  return D;
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

TEST_F(LibrariesGpuTest, ConvBiasResidualReluFusedInBothLayoutsAndTypes) {
  // f32 and f16 fuse; bf16 may not (the runner's load-time probe drops
  // the fused call where cuDNN answers NOT_SUPPORTED, and the program's
  // epilogue kernel takes over): the output is checked either way.
  for (DType T : {DType::F32, DType::F16, DType::BF16})
    for (bool Last : {false, true}) {
      ConvDesc D = inType(makeConv(2, 2, 8, 16, 9, 3, 1), T, Last);
      D.Epilogue = {true, true, act(ActKind::Relu)};
      EpilogueSpec F = runConv(D);
      if (T == DType::BF16 && !F.Bias) {
        std::printf("conv %s: cuDNN's fused call declined; unfused\n",
                    getConvKey(D).c_str());
        continue;
      }
      EXPECT_TRUE(F.Bias && F.Residual) << getConvKey(D);
      EXPECT_EQ(F.Act.Kind, ActKind::Relu) << getConvKey(D);
    }
}

TEST_F(LibrariesGpuTest, ConvReluWithoutBiasOrResidual) {
  ConvDesc D = inType(makeConv(2, 1, 4, 8, 7, 3, 1), DType::F32, true);
  D.Epilogue.Act = act(ActKind::Relu);
  EXPECT_EQ(runConv(D).Act.Kind, ActKind::Relu);
}

TEST_F(LibrariesGpuTest, ConvWithoutActivationOrOtherActivations) {
  for (ActKind K : {ActKind::None, ActKind::Sigmoid}) {
    ConvDesc D = inType(makeConv(2, 2, 8, 8, 10, 3, 1), DType::F16, true);
    D.Epilogue = {true, true, act(K)};
    runConv(D);
  }
}

TEST_F(LibrariesGpuTest, ConvStrideDilationAndAsymmetricPads) {
  for (bool Last : {false, true}) {
    runConv(inType(makeConv(2, 2, 6, 10, 13, 3, 2, 2, 2), DType::F32, Last));
    // Pads 1/0 with stride 2 over 8: the end pad is never read.
    ConvDesc D = inType(makeConv(2, 1, 4, 4, 8, 3, 1, 2), DType::F32, Last);
    D.In[1] = 8;
    D.PadEnd[0] = D.PadEnd[1] = 0;
    D.Out[0] = D.Out[1] = 4;
    ASSERT_EQ(checkConv(D), "");
    runConv(D);
  }
}

TEST_F(LibrariesGpuTest, GroupedAndDepthwiseConvs) {
  for (DType T : {DType::F32, DType::F16})
    for (bool Last : {false, true}) {
      ConvDesc G = inType(makeConv(2, 2, 8, 12, 9, 3, 1), T, Last);
      G.Groups = 4;
      G.Epilogue.Bias = true;
      runConv(G);
      ConvDesc DW = inType(makeConv(2, 2, 16, 16, 12, 3, 1, 2), T, Last);
      DW.Groups = 16;
      DW.Epilogue = {true, false, act(ActKind::Relu)};
      runConv(DW);
    }
}

TEST_F(LibrariesGpuTest, OneAndThreeDimensionalConvs) {
  for (DType T : {DType::F32, DType::F16})
    for (bool Last : {false, true}) {
      ConvDesc D1 = inType(makeConv(1, 2, 6, 10, 31, 5, 2, 2, 2), T, Last);
      D1.Epilogue = {true, true, act(ActKind::Relu)};
      runConv(D1);
      ConvDesc D3 = inType(makeConv(3, 1, 4, 8, 6, 3, 1), T, Last);
      D3.Epilogue.Bias = true;
      runConv(D3);
    }
}

TEST_F(LibrariesGpuTest, MixedLayoutsRunOrSayWhyNot) {
  for (bool XLast : {false, true}) {
    ConvDesc D = makeConv(2, 2, 3, 8, 12, 3, 1);
    D.XChannelsLast = XLast;
    D.YChannelsLast = !XLast;
    std::vector<float> W(size_t(8 * 3 * 9), 0.1f);
    auto R = ConvRunner::create(*Libs, D, W.data(), nullptr, "");
    if (!R) {
      // An error, not a crash, that names the conv.
      EXPECT_NE(llvm::toString(R.takeError()).find(getConvKey(D)),
                std::string::npos);
      continue;
    }
    R->reset();
    runConv(D);
  }
}

TEST_F(LibrariesGpuTest, ConvTransposeFusesNothing) {
  for (DType T : {DType::F32, DType::F16})
    for (bool Last : {false, true}) {
      // 5 -> 10 with stride 2, kernel 3, pads 1 and output_padding 1,
      // two groups of 4 -> 3 channels.
      ConvDesc D = inType(makeConv(2, 2, 8, 6, 5, 3, 1, 2), T, Last);
      D.Transposed = true;
      D.Groups = 2;
      D.Out[0] = 10;
      D.Out[1] = 12;
      D.Epilogue = {true, false, act(ActKind::Relu)};
      ASSERT_EQ(checkConv(D), "");
      EpilogueSpec F = runConv(D);
      EXPECT_FALSE(F.Bias || F.Residual || !F.Act.isNone());
    }
  // 1-D, without output_padding.
  ConvDesc D = inType(makeConv(1, 1, 4, 4, 7, 4, 1, 3), DType::F32, false);
  D.Transposed = true;
  D.Out[0] = 3 * (7 - 1) + 4 - 2;
  ASSERT_EQ(checkConv(D), "");
  runConv(D);
}

TEST_F(LibrariesGpuTest, TunedConvAlgorithmsAndFind) {
  // NCHW, where cuDNN has every algorithm.
  ConvDesc D = inType(makeConv(2, 2, 16, 16, 14, 3, 1), DType::F32, false);
  D.Epilogue = {true, false, {}};
  // IMPLICIT_PRECOMP_GEMM fuses a bias without an activation.
  EpilogueSpec F = runConv(D, "implicit_precomp_gemm");
  EXPECT_TRUE(F.Bias);
  runConv(D, "implicit_gemm");
  auto Bad =
      ConvRunner::create(*Libs, D, std::vector<float>(16 * 16 * 9).data(),
                         std::vector<float>(16).data(), "no_such_algo");
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(llvm::toString(Bad.takeError()).find("no_such_algo"),
            std::string::npos);

  for (bool Transposed : {false, true}) {
    ConvDesc T = D;
    T.Transposed = Transposed;
    T.Epilogue = {};
    if (Transposed) {
      // 14x15 -> 28x29: stride 2, kernel 3, pads 1, output_padding 1/0.
      T.Stride[0] = T.Stride[1] = 2;
      T.Out[0] = 28;
      T.Out[1] = 29;
    }
    ASSERT_EQ(checkConv(T), "") << getConvKey(T);
    auto Found = findConvAlgorithms(*Libs, T);
    ASSERT_TRUE(bool(Found)) << llvm::toString(Found.takeError());
    ASSERT_FALSE(Found->empty());
    for (size_t I = 0; I < Found->size(); ++I) {
      EXPECT_GE(parseConvAlgo(Transposed, (*Found)[I].Algo), 0);
      if (I) {
        EXPECT_LE((*Found)[I - 1].Nanoseconds, (*Found)[I].Nanoseconds);
      }
    }
    // The fastest runs as a tuned algorithm, inside a graph.
    runConv(T, Found->front().Algo, /*Capture=*/true);
  }
}

TEST_F(LibrariesGpuTest, ConvRunsInsideAGraph) {
  ConvDesc D = inType(makeConv(2, 2, 8, 16, 9, 3, 1), DType::F16, true);
  D.Epilogue = {true, true, act(ActKind::Relu)};
  runConv(D, "", /*Capture=*/true);
}

//===----------------------------------------------------------------------===//
// GEMMs
//===----------------------------------------------------------------------===//

GemmDesc makeGemm(int64_t M, int64_t N, int64_t K, bool TransA, bool TransB,
                  DType T = DType::F32) {
  GemmDesc D;
  D.M = M;
  D.N = N;
  D.K = K;
  D.TransA = TransA;
  D.TransB = TransB;
  D.Type = T;
  D.Math = T == DType::F32 ? MathMode::FP32 : MathMode::Half;
  return D;
}

TEST_F(LibrariesGpuTest, GemmTransposes) {
  for (DType T : {DType::F32, DType::F16, DType::BF16})
    for (bool TA : {false, true})
      for (bool TB : {false, true}) {
        GemmDesc D = makeGemm(37, 45, 29, TA, TB, T);
        D.Alpha = 0.5f;
        runGemm(D, /*ConstantB=*/false);
      }
}

TEST_F(LibrariesGpuTest, BatchedGemms) {
  for (bool ShareA : {false, true}) {
    GemmDesc D = makeGemm(16, 24, 40, false, ShareA);
    D.Batch = 3;
    D.BatchStrideA = ShareA ? 0 : D.M * D.K;
    D.BatchStrideB = D.K * D.N;
    D.BatchStrideY = D.M * D.N;
    runGemm(D, false);
  }
  GemmDesc H = makeGemm(32, 32, 64, false, true, DType::F16);
  H.Batch = 4;
  H.BatchStrideA = H.M * H.K;
  H.BatchStrideB = H.K * H.N;
  H.BatchStrideY = H.M * H.N;
  H.Epilogue.Bias = true;
  runGemm(H, false);
}

TEST_F(LibrariesGpuTest, GemmWithConstantBBiasAndActivations) {
  for (DType T : {DType::F32, DType::F16})
    for (bool TB : {false, true}) {
      GemmDesc D = makeGemm(20, 48, 64, false, TB, T);
      D.Epilogue = {true, false, act(ActKind::Relu)};
      EpilogueSpec F = runGemm(D, /*ConstantB=*/true);
      EXPECT_TRUE(F.Bias);
      EXPECT_EQ(F.Act.Kind, ActKind::Relu);
    }
  // cuBLASLt's GELU is the tanh form; the erf form stays with the caller.
  GemmDesc G = makeGemm(16, 32, 48, false, false);
  G.Epilogue = {true, false, act(ActKind::GeluTanh)};
  EXPECT_EQ(runGemm(G, true).Act.Kind, ActKind::GeluTanh);
  G.Epilogue.Act = act(ActKind::Gelu);
  EXPECT_TRUE(runGemm(G, true).Act.isNone());
  // ReLU without a bias.
  G.Epilogue = {false, false, act(ActKind::Relu)};
  EXPECT_EQ(runGemm(G, false).Act.Kind, ActKind::Relu);
}

TEST_F(LibrariesGpuTest, TF32Gemm) {
  GemmDesc D = makeGemm(64, 64, 256, false, true);
  D.Math = MathMode::TF32;
  runGemm(D, true);
}

TEST_F(LibrariesGpuTest, TunedGemmAlgorithmsAndGraphs) {
  GemmDesc D = makeGemm(64, 96, 128, false, true, DType::F16);
  D.Epilogue = {true, false, act(ActKind::Relu)};
  std::string Algo;
  runGemm(D, true, "", /*Capture=*/false, &Algo);
  ASSERT_TRUE(parseGemmAlgo(Algo).hasValue()) << Algo;
  runGemm(D, true, Algo, /*Capture=*/true);
  std::vector<float> Bias(96, 0.0f);
  auto Bad = GemmRunner::create(*Libs, D, nullptr, Bias.data(), "fastest");
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(llvm::toString(Bad.takeError()).find("'fastest'"),
            std::string::npos);
}

} // namespace
