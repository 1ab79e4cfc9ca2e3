//===- CAPITest.cpp - The C API through libstrider only --------------------===//
//
// Links libstrider and nothing else of Strider, as an outside program
// does. The model is examples/resnet_block.onnx (input image N x 3 x 32 x
// 32, output logits N x 10).
//
//===----------------------------------------------------------------------===//

#include "strider/strider.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace {

const char *modelPath() { return STRIDER_SAMPLE_MODEL; }

DLTensor view(void *Data, DLDataType Type, std::vector<int64_t> &Shape,
              int64_t *Strides = nullptr) {
  DLTensor T;
  std::memset(&T, 0, sizeof T);
  T.data = Data;
  T.device = DLDevice{kDLCPU, 0};
  T.ndim = int32_t(Shape.size());
  T.dtype = Type;
  T.shape = Shape.data();
  T.strides = Strides;
  return T;
}

const DLDataType F32{kDLFloat, 32, 1};

/// A deterministic N x 3 x 32 x 32 image, row-major.
std::vector<float> image(int64_t N) {
  std::vector<float> V(size_t(N * 3 * 32 * 32));
  for (size_t I = 0; I < V.size(); ++I)
    V[I] = float((I * 2654435761u) % 1000) / 500.0f - 1.0f;
  return V;
}

struct Fixture : testing::Test {
  strider_model *M = nullptr;
  void SetUp() override {
    ASSERT_EQ(strider_model_load(modelPath(), &M), STRIDER_OK)
        << strider_last_error();
  }
  void TearDown() override { strider_model_free(M); }

  strider_session *session(const char *Backend = "cpu", int Threads = 1) {
    strider_session_options *O = nullptr;
    EXPECT_EQ(strider_session_options_create(&O), STRIDER_OK);
    EXPECT_EQ(strider_session_options_set_backend(O, Backend), STRIDER_OK);
    EXPECT_EQ(strider_session_options_set_threads(O, Threads), STRIDER_OK);
    strider_session *S = nullptr;
    EXPECT_EQ(strider_session_create(M, O, &S), STRIDER_OK)
        << strider_last_error();
    strider_session_options_free(O);
    return S;
  }

  /// Logits of \p S for \p Input (N x 3 x 32 x 32 with \p Strides).
  std::vector<float> run(strider_session *S, std::vector<float> &Input,
                         int64_t N, int64_t *Strides = nullptr) {
    std::vector<int64_t> InShape{N, 3, 32, 32}, OutShape{N, 10};
    std::vector<float> Out(size_t(N * 10), -1.0f);
    DLTensor In = view(Input.data(), F32, InShape, Strides);
    DLTensor O = view(Out.data(), F32, OutShape);
    EXPECT_EQ(strider_session_run(S, &In, 1, &O, 1), STRIDER_OK)
        << strider_last_error();
    return Out;
  }
};

TEST(CAPI, Version) {
  EXPECT_EQ(strider_api_version(), STRIDER_API_VERSION);
  EXPECT_STRNE(strider_version(), "");
}

TEST(CAPI, LoadErrors) {
  strider_model *M = reinterpret_cast<strider_model *>(1);
  EXPECT_EQ(strider_model_load(nullptr, &M), STRIDER_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(M, nullptr);
  EXPECT_EQ(strider_model_load(modelPath(), nullptr),
            STRIDER_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(strider_model_load("/nonexistent/model.onnx", &M),
            STRIDER_ERROR_MODEL);
  EXPECT_NE(std::string(strider_last_error()).find("/nonexistent/model.onnx"),
            std::string::npos)
      << strider_last_error();
  std::string Garbage = testing::TempDir() + "capi-garbage.onnx";
  std::ofstream(Garbage) << "not a model";
  EXPECT_EQ(strider_model_load(Garbage.c_str(), &M), STRIDER_ERROR_MODEL);
  EXPECT_NE(std::string(strider_last_error()).find("capi-garbage.onnx"),
            std::string::npos)
      << strider_last_error();
  EXPECT_EQ(M, nullptr);
  strider_model_free(nullptr);
  strider_session_free(nullptr);
  strider_session_options_free(nullptr);
}

/// Graphs asking for sizes no machine has (issue: hostile models), each
/// refused with a status and a message naming what it needs, never an
/// abort: at load (the size limit of shape inference) or when the program
/// for the fed shape is built (the memory budget).
TEST(CAPI, HostileSizesAreErrors) {
  struct Case {
    const char *Name, *Lir, *Says;
  };
  const Case Cases[] = {
      {"tile-2e40",
       "graph @g(%x: tensor<1 x 4 x f32>) {\n"
       "  %r = Constant() {value = dense<[1099511627776, 1]> : tensor<2 x "
       "i64>} : tensor<2 x i64>\n"
       "  %y = Tile(%x, %r) : tensor<* x f32>\n  return %y\n}\n",
       "16.0 TiB"},
      {"constant-of-shape-1tib",
       "graph @g(%x: tensor<1 x 4 x f32>) {\n"
       "  %s = Constant() {value = dense<[68719476736, 4]> : tensor<2 x i64>} "
       ": tensor<2 x i64>\n"
       "  %c = ConstantOfShape(%s) : tensor<* x f32>\n"
       "  %y = Add(%c, %x) : tensor<* x f32>\n  return %y\n}\n",
       " TiB ("},
      {"expand-2e64",
       "graph @g(%x: tensor<1 x 4 x f32>) {\n"
       "  %s = Constant() {value = dense<[2147483648, 2147483648, 4]> : "
       "tensor<3 x i64>} : tensor<3 x i64>\n"
       "  %y = Expand(%x, %s) : tensor<* x f32>\n  return %y\n}\n",
       "more than 2^62 bytes"},
  };
  std::vector<float> X(4, 1.0f);
  std::vector<int64_t> Shape{1, 4};
  for (const Case &C : Cases) {
    std::string Path = testing::TempDir() + "capi-hostile-" + C.Name + ".lir";
    std::ofstream(Path) << C.Lir;
    strider_model *M = nullptr;
    strider_status Loaded = strider_model_load(Path.c_str(), &M);
    if (Loaded != STRIDER_OK) {
      EXPECT_EQ(Loaded, STRIDER_ERROR_MODEL) << C.Name;
      EXPECT_NE(std::string(strider_last_error()).find(C.Says),
                std::string::npos)
          << C.Name << ": " << strider_last_error();
      continue;
    }
    for (const char *Backend : {"cpu", "reference"}) {
      strider_session_options *O = nullptr;
      ASSERT_EQ(strider_session_options_create(&O), STRIDER_OK);
      ASSERT_EQ(strider_session_options_set_backend(O, Backend), STRIDER_OK);
      strider_session *S = nullptr;
      ASSERT_EQ(strider_session_create(M, O, &S), STRIDER_OK)
          << strider_last_error();
      strider_session_options_free(O);
      DLTensor In = view(X.data(), F32, Shape);
      EXPECT_EQ(strider_session_prepare(S, &In, 1), STRIDER_ERROR_RUN)
          << C.Name << " on " << Backend;
      EXPECT_NE(std::string(strider_last_error()).find(C.Says),
                std::string::npos)
          << C.Name << " on " << Backend << ": " << strider_last_error();
      strider_session_free(S);
    }
    strider_model_free(M);
  }
}

TEST_F(Fixture, Introspection) {
  ASSERT_EQ(strider_model_num_inputs(M), 1u);
  ASSERT_EQ(strider_model_num_outputs(M), 1u);
  strider_tensor_info I;
  ASSERT_EQ(strider_model_input_info(M, 0, &I), STRIDER_OK);
  EXPECT_STREQ(I.name, "image");
  EXPECT_EQ(I.dtype.code, kDLFloat);
  EXPECT_EQ(I.dtype.bits, 32);
  ASSERT_EQ(I.ndim, 4);
  EXPECT_EQ(I.shape[0], -1);
  EXPECT_STREQ(I.dim_names[0], "N");
  EXPECT_EQ(I.shape[1], 3);
  EXPECT_EQ(I.dim_names[1], nullptr);
  EXPECT_EQ(I.shape[3], 32);
  for (int D = 0; D < 4; ++D)
    EXPECT_EQ(I.dim_order[D], D);
  EXPECT_STREQ(I.layout, "nchw");
  strider_tensor_info O;
  ASSERT_EQ(strider_model_output_info(M, 0, &O), STRIDER_OK);
  EXPECT_STREQ(O.name, "logits");
  ASSERT_EQ(O.ndim, 2);
  EXPECT_STREQ(O.dim_names[0], "N");
  EXPECT_EQ(O.shape[1], 10);
  EXPECT_EQ(strider_model_input_info(M, 1, &I),
            STRIDER_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(strider_last_error()).find("out of range"),
            std::string::npos);
  EXPECT_EQ(strider_model_output_info(nullptr, 0, &O),
            STRIDER_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(strider_model_output_info(M, 0, nullptr),
            STRIDER_ERROR_INVALID_ARGUMENT);
}

TEST_F(Fixture, RunMatchesTheReferenceAndCachesByShape) {
  strider_session *Cpu = session("cpu", 2);
  strider_session *Ref = session("reference");
  strider_tensor_info O;
  EXPECT_EQ(strider_session_output_info(Cpu, 0, &O),
            STRIDER_ERROR_INVALID_ARGUMENT); // Not prepared yet.
  for (int64_t N : {2, 3, 2}) {
    std::vector<float> In = image(N);
    std::vector<float> Got = run(Cpu, In, N), Want = run(Ref, In, N);
    ASSERT_EQ(Got.size(), Want.size());
    for (size_t I = 0; I < Got.size(); ++I)
      EXPECT_NEAR(Got[I], Want[I], 1e-4 + 1e-3 * std::fabs(Want[I])) << I;
    ASSERT_EQ(strider_session_output_info(Cpu, 0, &O), STRIDER_OK);
    ASSERT_EQ(O.ndim, 2);
    EXPECT_EQ(O.shape[0], N);
    EXPECT_EQ(O.dim_names[0], nullptr);
  }
  // Batch 2 ran twice: its program was reused.
  EXPECT_EQ(strider_session_num_programs_built(Cpu), 2u);
  EXPECT_EQ(strider_session_num_cache_hits(Cpu), 1u);
  EXPECT_GT(strider_session_build_seconds(Cpu), 0.0);
  EXPECT_EQ(strider_session_num_cache_hits(nullptr), 0u);
  EXPECT_EQ(strider_session_build_seconds(nullptr), 0.0);
  // Batches 2 and 3 are two size classes (2 and 4).
  EXPECT_EQ(strider_session_num_size_classes(Cpu), 2u);
  EXPECT_EQ(strider_session_num_size_classes(nullptr), 0u);
  strider_session_free(Cpu);
  strider_session_free(Ref);
}

TEST_F(Fixture, OptimizePerShapeMakesNoSizeClasses) {
  strider_session_options *O = nullptr;
  ASSERT_EQ(strider_session_options_create(&O), STRIDER_OK);
  ASSERT_EQ(strider_session_options_set_optimize_per_shape(O, 1), STRIDER_OK);
  strider_session *S = nullptr;
  ASSERT_EQ(strider_session_create(M, O, &S), STRIDER_OK)
      << strider_last_error();
  strider_session_options_free(O);
  strider_session *Ref = session("reference");
  for (int64_t N : {3, 4}) {
    std::vector<float> In = image(N);
    std::vector<float> Got = run(S, In, N), Want = run(Ref, In, N);
    for (size_t I = 0; I < Got.size(); ++I)
      EXPECT_NEAR(Got[I], Want[I], 1e-4 + 1e-3 * std::fabs(Want[I])) << I;
  }
  EXPECT_EQ(strider_session_num_programs_built(S), 2u);
  EXPECT_EQ(strider_session_num_size_classes(S), 0u);
  EXPECT_EQ(strider_session_options_set_optimize_per_shape(nullptr, 1),
            STRIDER_ERROR_INVALID_ARGUMENT);
  strider_session_free(S);
  strider_session_free(Ref);
}

TEST_F(Fixture, CallerStridesAreRead) {
  strider_session *S = session();
  const int64_t N = 2;
  std::vector<float> Nchw = image(N);
  std::vector<float> Want = run(S, Nchw, N);
  // The same image stored NHWC.
  std::vector<float> Nhwc(Nchw.size());
  for (int64_t B = 0; B < N; ++B)
    for (int64_t C = 0; C < 3; ++C)
      for (int64_t P = 0; P < 32 * 32; ++P)
        Nhwc[size_t((B * 1024 + P) * 3 + C)] =
            Nchw[size_t((B * 3 + C) * 1024 + P)];
  int64_t NhwcStrides[] = {32 * 32 * 3, 1, 32 * 3, 3};
  EXPECT_EQ(run(S, Nhwc, N, NhwcStrides), Want);
  // Every other element of a buffer twice the size: not dense.
  std::vector<float> Sparse(Nchw.size() * 2, 99.0f);
  for (size_t I = 0; I < Nchw.size(); ++I)
    Sparse[2 * I] = Nchw[I];
  int64_t SparseStrides[] = {2 * 3 * 1024, 2 * 1024, 2 * 32, 2};
  EXPECT_EQ(run(S, Sparse, N, SparseStrides), Want);
  // Outputs written column-major, at a byte offset.
  std::vector<int64_t> OutShape{N, 10}, InShape{N, 3, 32, 32};
  int64_t OutStrides[] = {1, N};
  std::vector<float> Col(size_t(N * 10) + 4, -1.0f);
  DLTensor In = view(Nchw.data(), F32, InShape);
  DLTensor O = view(Col.data(), F32, OutShape, OutStrides);
  O.byte_offset = 4 * sizeof(float);
  ASSERT_EQ(strider_session_run(S, &In, 1, &O, 1), STRIDER_OK)
      << strider_last_error();
  for (int64_t B = 0; B < N; ++B)
    for (int64_t K = 0; K < 10; ++K)
      EXPECT_EQ(Col[size_t(4 + K * N + B)], Want[size_t(B * 10 + K)]);
  strider_session_free(S);
}

/// \p Status and the message saying \p Text.
#define EXPECT_FAILS(Call, Status, Text)                                       \
  do {                                                                         \
    EXPECT_EQ((Call), (Status));                                               \
    EXPECT_NE(std::string(strider_last_error()).find(Text), std::string::npos) \
        << strider_last_error();                                               \
  } while (0)

TEST_F(Fixture, BadTensorsAreRefused) {
  strider_session *S = session();
  std::vector<float> Data = image(1), Out(10);
  std::vector<int64_t> Shape{1, 3, 32, 32}, OutShape{1, 10};
  DLTensor In = view(Data.data(), F32, Shape);
  DLTensor O = view(Out.data(), F32, OutShape);
  EXPECT_FAILS(strider_session_run(S, &In, 0, &O, 1), STRIDER_ERROR_TENSOR,
               "has 1 inputs, got 0");
  EXPECT_FAILS(strider_session_run(S, nullptr, 1, &O, 1),
               STRIDER_ERROR_INVALID_ARGUMENT, "inputs is NULL");
  EXPECT_FAILS(strider_session_run(nullptr, &In, 1, &O, 1),
               STRIDER_ERROR_INVALID_ARGUMENT, "session is NULL");
  EXPECT_FAILS(strider_session_run(S, &In, 1, &O, 2), STRIDER_ERROR_TENSOR,
               "has 1 outputs, got 2");
  EXPECT_FAILS(strider_session_run(S, &In, 1, nullptr, 1),
               STRIDER_ERROR_INVALID_ARGUMENT, "outputs is NULL");

  DLTensor Bad = In;
  Bad.dtype = DLDataType{kDLInt, 64, 1};
  EXPECT_FAILS(strider_session_run(S, &Bad, 1, &O, 1), STRIDER_ERROR_TENSOR,
               "element type i64, the model expects f32");
  Bad = In;
  Bad.dtype = DLDataType{kDLFloat, 32, 4};
  EXPECT_FAILS(strider_session_run(S, &Bad, 1, &O, 1), STRIDER_ERROR_TENSOR,
               "does not support");
  Bad = In;
  Bad.device = DLDevice{kDLOpenCL, 0};
  EXPECT_FAILS(strider_session_run(S, &Bad, 1, &O, 1), STRIDER_ERROR_TENSOR,
               "input 0 ('image') is on device type 4");
  // GPU memory: only a cuda session's GPU, and never mixed with host
  // memory in one run (checked before anything is read).
  Bad = In;
  Bad.device = DLDevice{kDLCUDA, 0};
  EXPECT_FAILS(strider_session_run(S, &Bad, 1, &O, 1), STRIDER_ERROR_TENSOR,
               "output 0 is in host memory and input 0 in GPU memory");
  DLTensor DeviceOut = O;
  DeviceOut.device = DLDevice{kDLCUDA, 0};
  EXPECT_FAILS(strider_session_run(S, &Bad, 1, &DeviceOut, 1),
               STRIDER_ERROR_TENSOR,
               "input 0 is in GPU memory (kDLCUDA); this session's backend "
               "reads host memory");
  Bad = In;
  Bad.data = nullptr;
  EXPECT_FAILS(strider_session_run(S, &Bad, 1, &O, 1), STRIDER_ERROR_TENSOR,
               "has no data");
  std::vector<int64_t> Small{1, 3, 16, 16};
  Bad = view(Data.data(), F32, Small);
  EXPECT_FAILS(strider_session_run(S, &Bad, 1, &O, 1), STRIDER_ERROR_TENSOR,
               "has shape [1, 3, 16, 16], the model expects");
  std::vector<int64_t> Rank3{3, 32, 32};
  Bad = view(Data.data(), F32, Rank3);
  EXPECT_FAILS(strider_session_run(S, &Bad, 1, &O, 1), STRIDER_ERROR_TENSOR,
               "has shape [3, 32, 32]");
  std::vector<int64_t> Negative{-1, 3, 32, 32};
  Bad = view(Data.data(), F32, Negative);
  EXPECT_FAILS(strider_session_run(S, &Bad, 1, &O, 1), STRIDER_ERROR_TENSOR,
               "negative dim");

  std::vector<int64_t> WrongOut{2, 10};
  DLTensor BadOut = view(Out.data(), F32, WrongOut);
  EXPECT_FAILS(strider_session_run(S, &In, 1, &BadOut, 1),
               STRIDER_ERROR_TENSOR, "has shape [2, 10], the model writes [1, 10]");
  BadOut = O;
  BadOut.dtype = DLDataType{kDLFloat, 64, 1};
  EXPECT_FAILS(strider_session_run(S, &In, 1, &BadOut, 1),
               STRIDER_ERROR_TENSOR, "output 0 ('logits') has element type");
  // The failures changed nothing: a good run still works.
  EXPECT_EQ(strider_session_run(S, &In, 1, &O, 1), STRIDER_OK)
      << strider_last_error();
  strider_session_free(S);
}

// The cuda backend runs the model where the build and machine allow it
// and matches the CPU backend; elsewhere session creation says why with
// STRIDER_ERROR_UNSUPPORTED. A kDLCUDA device needs the cuda backend, and
// half precision the cuda backend.
TEST_F(Fixture, CudaBackendRunsOrSaysWhyNot) {
  strider_session_options *O = nullptr;
  ASSERT_EQ(strider_session_options_create(&O), STRIDER_OK);
  ASSERT_EQ(strider_session_options_set_device(O, DLDevice{kDLCUDA, 0}),
            STRIDER_OK);
  strider_session *S = nullptr;
  EXPECT_FAILS(strider_session_create(M, O, &S), STRIDER_ERROR_UNSUPPORTED,
               "a kDLCUDA device needs the cuda backend");
  ASSERT_EQ(strider_session_options_set_device(O, DLDevice{kDLCPU, 0}),
            STRIDER_OK);
  ASSERT_EQ(strider_session_options_set_precision(O, "fp16"), STRIDER_OK);
  EXPECT_FAILS(strider_session_create(M, O, &S),
               STRIDER_ERROR_INVALID_ARGUMENT, "needs the CUDA backend");
  ASSERT_EQ(strider_session_options_set_precision(O, "fp32"), STRIDER_OK);
  ASSERT_EQ(strider_session_options_set_backend(O, "cuda"), STRIDER_OK);
  ASSERT_EQ(strider_session_options_set_device(O, DLDevice{kDLCUDA, 0}),
            STRIDER_OK);
  strider_status Status = strider_session_create(M, O, &S);
  strider_session_options_free(O);
  if (Status != STRIDER_OK) {
    EXPECT_EQ(Status, STRIDER_ERROR_UNSUPPORTED) << strider_last_error();
    const std::string Why = strider_last_error();
    EXPECT_TRUE(Why.find("no CUDA device") != std::string::npos ||
                Why.find("no CUDA backend") != std::string::npos)
        << Why;
    EXPECT_EQ(S, nullptr);
    return;
  }
  strider_session *Cpu = session();
  std::vector<float> Input = image(2);
  std::vector<float> Want = run(Cpu, Input, 2), Got = run(S, Input, 2);
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t I = 0; I < Got.size(); ++I)
    EXPECT_NEAR(Got[I], Want[I], 1e-4 + 1e-4 * std::abs(Want[I])) << I;
  strider_session_free(Cpu);
  strider_session_free(S);
}

TEST_F(Fixture, EveryRegisteredBackendRunsOrSaysWhyNot) {
  // The backends by their registry names: the CUDA backend's plan on the
  // host (no GPU) gives the CPU backend's logits, or, in a build without
  // nvcc, a session refused as unsupported.
  strider_session *Cpu = session();
  std::vector<float> Input = image(1);
  std::vector<float> Want = run(Cpu, Input, 1);
  strider_session_free(Cpu);
  for (const char *Name : {"reference", "cuda-emulated"}) {
    SCOPED_TRACE(Name);
    strider_session_options *O = nullptr;
    ASSERT_EQ(strider_session_options_create(&O), STRIDER_OK);
    ASSERT_EQ(strider_session_options_set_backend(O, Name), STRIDER_OK);
    strider_session *S = nullptr;
    strider_status Status = strider_session_create(M, O, &S);
    strider_session_options_free(O);
    if (Status != STRIDER_OK) {
      EXPECT_EQ(Status, STRIDER_ERROR_UNSUPPORTED) << strider_last_error();
      EXPECT_NE(std::string(strider_last_error()).find("no CUDA backend"),
                std::string::npos)
          << strider_last_error();
      continue;
    }
    std::vector<float> Got = run(S, Input, 1);
    ASSERT_EQ(Got.size(), Want.size());
    for (size_t I = 0; I < Got.size(); ++I)
      EXPECT_NEAR(Got[I], Want[I], 1e-3 + 1e-3 * std::abs(Want[I])) << I;
    strider_session_free(S);
  }
}

TEST_F(Fixture, BadOptionsAreRefused) {
  strider_session_options *O = nullptr;
  ASSERT_EQ(strider_session_options_create(&O), STRIDER_OK);
  EXPECT_FAILS(strider_session_options_set_threads(O, 0),
               STRIDER_ERROR_INVALID_ARGUMENT, "at least 1");
  EXPECT_FAILS(strider_session_options_set_backend(O, "gpu"),
               STRIDER_ERROR_INVALID_ARGUMENT,
               "unknown backend 'gpu' (available: cpu, cuda, cuda-emulated, "
               "reference)");
  EXPECT_FAILS(strider_session_options_set_device(O, DLDevice{kDLOpenCL, 0}),
               STRIDER_ERROR_UNSUPPORTED, "kDLCPU");
  EXPECT_FAILS(strider_session_options_set_device(O, DLDevice{kDLCPU, 1}),
               STRIDER_ERROR_UNSUPPORTED, "kDLCPU");
  EXPECT_FAILS(strider_session_options_set_precision(O, "fp8"),
               STRIDER_ERROR_INVALID_ARGUMENT, "unknown precision 'fp8'");
  EXPECT_EQ(strider_session_options_set_device(O, DLDevice{kDLCPU, 0}),
            STRIDER_OK);
  EXPECT_FAILS(strider_session_options_set_dim(O, "N", -2),
               STRIDER_ERROR_INVALID_ARGUMENT, "cannot be -2");
  EXPECT_FAILS(strider_session_options_set_threads(nullptr, 1),
               STRIDER_ERROR_INVALID_ARGUMENT, "NULL");
  ASSERT_EQ(strider_session_options_set_dim(O, "bogus", 3), STRIDER_OK);
  strider_session *S = nullptr;
  EXPECT_FAILS(strider_session_create(M, O, &S),
               STRIDER_ERROR_INVALID_ARGUMENT, "dim 'bogus'");
  EXPECT_EQ(S, nullptr);
  EXPECT_FAILS(strider_session_create(nullptr, nullptr, &S),
               STRIDER_ERROR_INVALID_ARGUMENT, "model is NULL");
  strider_session_options_free(O);
  // A bound dim the inputs contradict.
  ASSERT_EQ(strider_session_options_create(&O), STRIDER_OK);
  ASSERT_EQ(strider_session_options_set_dim(O, "N", 2), STRIDER_OK);
  ASSERT_EQ(strider_session_create(M, O, &S), STRIDER_OK);
  strider_session_options_free(O);
  std::vector<float> Data = image(1);
  std::vector<int64_t> Shape{1, 3, 32, 32};
  DLTensor In = view(Data.data(), F32, Shape);
  EXPECT_FAILS(strider_session_prepare(S, &In, 1), STRIDER_ERROR_RUN,
               "'N'");
  strider_session_free(S);
}

/// Writes \p Text to a file in the test's temporary directory.
std::string writeTemp(const char *Name, const std::string &Text) {
  std::string Path = testing::TempDir() + Name;
  std::ofstream(Path) << Text;
  return Path;
}

TEST_F(Fixture, TuningFiles) {
  // A table of the session's target is taken and the session runs; one of
  // another target is refused at creation. The session's target is this
  // machine's (cpu-avx512 or cpu-avx2): one of the two tables fits.
  strider_session_options *O = nullptr;
  ASSERT_EQ(strider_session_options_create(&O), STRIDER_OK);
  std::vector<std::string> Refused;
  int Created = 0;
  for (const char *Target : {"cpu-avx512", "cpu-avx2"}) {
    std::string Path = writeTemp(
        (std::string("capi-") + Target + ".tune").c_str(),
        std::string("strider-tuning 1\ntarget ") + Target +
            "\nsimd -\nthreads 1\nrelayout 1x8x32x32 ns=100\n");
    ASSERT_EQ(strider_session_options_set_tuning_file(O, Path.c_str()),
              STRIDER_OK)
        << strider_last_error();
    strider_session *S = nullptr;
    if (strider_session_create(M, O, &S) == STRIDER_OK) {
      ++Created;
      std::vector<float> In = image(1);
      std::vector<float> Out = run(S, In, 1);
      EXPECT_NE(Out[0], -1.0f);
      strider_session_free(S);
    } else {
      Refused.push_back(strider_last_error());
    }
  }
  EXPECT_EQ(Created, 1);
  ASSERT_EQ(Refused.size(), 1u);
  EXPECT_NE(Refused[0].find("the tuning table was measured for target 'cpu-"),
            std::string::npos)
      << Refused[0];

  EXPECT_FAILS(strider_session_options_set_tuning_file(
                   O, (testing::TempDir() + "absent.tune").c_str()),
               STRIDER_ERROR_INVALID_ARGUMENT, "absent.tune");
  std::string Bad = writeTemp("capi-bad.tune", "strider-tuning 1\nkernel x\n");
  EXPECT_FAILS(strider_session_options_set_tuning_file(O, Bad.c_str()),
               STRIDER_ERROR_INVALID_ARGUMENT, "capi-bad.tune:2:1: unknown entry");
  EXPECT_FAILS(strider_session_options_set_tuning_file(nullptr, Bad.c_str()),
               STRIDER_ERROR_INVALID_ARGUMENT, "options is NULL");
  // NULL clears the table.
  EXPECT_EQ(strider_session_options_set_tuning_file(O, nullptr), STRIDER_OK);
  strider_session *S = nullptr;
  EXPECT_EQ(strider_session_create(M, O, &S), STRIDER_OK) << strider_last_error();
  strider_session_free(S);
  strider_session_options_free(O);
}

TEST_F(Fixture, ErrorsArePerThread) {
  strider_model *Bad = nullptr;
  ASSERT_EQ(strider_model_load("/nonexistent/a.onnx", &Bad),
            STRIDER_ERROR_MODEL);
  std::thread T([] {
    strider_model *Other = nullptr;
    EXPECT_STREQ(strider_last_error(), "");
    EXPECT_EQ(strider_model_load("/nonexistent/b.onnx", &Other),
              STRIDER_ERROR_MODEL);
    EXPECT_NE(std::string(strider_last_error()).find("b.onnx"),
              std::string::npos);
  });
  T.join();
  EXPECT_NE(std::string(strider_last_error()).find("a.onnx"),
            std::string::npos);
}

TEST_F(Fixture, SessionsRunConcurrently) {
  const int64_t N = 2;
  std::vector<float> In = image(N);
  strider_session *Single = session();
  std::vector<float> Want = run(Single, In, N);
  strider_session_free(Single);
  strider_session *A = session("cpu", 1), *B = session("cpu", 2);
  std::vector<std::vector<float>> GotA, GotB;
  std::thread TA([&] {
    for (int I = 0; I < 10; ++I)
      GotA.push_back(run(A, In, N));
  });
  std::thread TB([&] {
    for (int I = 0; I < 10; ++I)
      GotB.push_back(run(B, In, N));
  });
  TA.join();
  TB.join();
  for (const auto &G : GotA)
    EXPECT_EQ(G, Want);
  for (const auto &G : GotB)
    EXPECT_EQ(G, Want);
  strider_session_free(A);
  strider_session_free(B);
}

TEST_F(Fixture, CacheLimitsEvictPrograms) {
  strider_session_options *O = nullptr;
  ASSERT_EQ(strider_session_options_create(&O), STRIDER_OK);
  EXPECT_FAILS(strider_session_options_set_cache_limits(O, 0, 1),
               STRIDER_ERROR_INVALID_ARGUMENT, "max_programs must be");
  EXPECT_FAILS(strider_session_options_set_cache_limits(O, 1, -1),
               STRIDER_ERROR_INVALID_ARGUMENT, "max_bytes must not");
  EXPECT_FAILS(strider_session_options_set_cache_limits(nullptr, 1, 1),
               STRIDER_ERROR_INVALID_ARGUMENT, "options is NULL");
  ASSERT_EQ(strider_session_options_set_cache_limits(O, 1, int64_t(1) << 30),
            STRIDER_OK);
  strider_session *S = nullptr;
  ASSERT_EQ(strider_session_create(M, O, &S), STRIDER_OK)
      << strider_last_error();
  strider_session_options_free(O);
  // Room for one program: batches 1, 2, 1 build three.
  for (int64_t N : {1, 2, 1}) {
    std::vector<float> In = image(N);
    run(S, In, N);
  }
  EXPECT_EQ(strider_session_num_programs_built(S), 3u);
  EXPECT_EQ(strider_session_num_cache_hits(S), 0u);
  strider_session_free(S);
}

TEST_F(Fixture, MaxMemoryRefusesAShapeThatNeedsMore) {
  EXPECT_FAILS(strider_session_options_set_max_memory(nullptr, 1),
               STRIDER_ERROR_INVALID_ARGUMENT, "options is NULL");
  for (const char *Backend : {"cpu", "reference"}) {
    strider_session_options *O = nullptr;
    ASSERT_EQ(strider_session_options_create(&O), STRIDER_OK);
    ASSERT_EQ(strider_session_options_set_backend(O, Backend), STRIDER_OK);
    // Batch 1 of the 3 x 32 x 32 model fits in 1 MiB; batch 64 does not.
    ASSERT_EQ(strider_session_options_set_max_memory(O, 1 << 20), STRIDER_OK);
    strider_session *S = nullptr;
    ASSERT_EQ(strider_session_create(M, O, &S), STRIDER_OK)
        << strider_last_error();
    strider_session_options_free(O);
    std::vector<float> One = image(1);
    run(S, One, 1);
    std::vector<float> Many = image(64);
    std::vector<int64_t> InShape{64, 3, 32, 32}, OutShape{64, 10};
    std::vector<float> Out(64 * 10);
    DLTensor In = view(Many.data(), F32, InShape);
    DLTensor Y = view(Out.data(), F32, OutShape);
    EXPECT_FAILS(strider_session_run(S, &In, 1, &Y, 1), STRIDER_ERROR_RUN,
                 "more than the 1.0 MiB memory budget (as set)");
    // The session goes on serving the shapes that fit.
    EXPECT_EQ(run(S, One, 1).size(), 10u);
    strider_session_free(S);
  }
}

TEST_F(Fixture, OneSessionRunsOnManyThreads) {
  // Serial results per batch size, then four threads on one session, each
  // preparing its own batch size: output_info answers for the calling
  // thread's last prepare, and every run matches bit for bit.
  strider_session *Single = session();
  std::map<int64_t, std::vector<float>> In, Want;
  for (int64_t N : {1, 2, 3, 4}) {
    In[N] = image(N);
    Want[N] = run(Single, In[N], N);
  }
  strider_session_free(Single);
  for (int Threads : {1, 2}) {
    strider_session *S = session("cpu", Threads);
    std::atomic<int> Bad{0};
    std::vector<std::thread> Callers;
    for (int64_t N : {1, 2, 3, 4})
      Callers.emplace_back([&, N] {
        std::vector<float> Input = In.at(N);
        std::vector<int64_t> Shape{N, 3, 32, 32};
        DLTensor X = view(Input.data(), F32, Shape);
        for (int R = 0; R < 8; ++R) {
          if (strider_session_prepare(S, &X, 1) != STRIDER_OK) {
            ++Bad;
            return;
          }
          strider_tensor_info Info;
          if (strider_session_output_info(S, 0, &Info) != STRIDER_OK ||
              Info.ndim != 2 || Info.shape[0] != N)
            ++Bad;
          if (run(S, Input, N) != Want.at(N))
            ++Bad;
        }
      });
    for (std::thread &T : Callers)
      T.join();
    EXPECT_EQ(Bad.load(), 0) << Threads << " kernel thread(s)";
    EXPECT_EQ(strider_session_num_programs_built(S), 4u);
    // A thread that has not prepared the session has no output shapes.
    std::thread Fresh([&] {
      strider_tensor_info Info;
      EXPECT_FAILS(strider_session_output_info(S, 0, &Info),
                   STRIDER_ERROR_INVALID_ARGUMENT, "this thread has not");
    });
    Fresh.join();
    strider_session_free(S);
  }
}

} // namespace

namespace {

/// y = sr == 16000 ? Relu(x) : Neg(x): the value of `sr` picks a branch.
const char *IfOnRateLir = R"(
graph @g(%sr: tensor<i64>, %x: tensor<2 x f32>) {
  %k = Constant() {value = dense<16000> : tensor<i64>} : tensor<i64>
  %c = Equal(%sr, %k) : tensor<bool>
  %y = If(%c, %x) {else_branch = graph @else(%x: tensor<2 x f32>) {
    %n = Neg(%x) : tensor<2 x f32>
    return %n
  }, then_branch = graph @then(%x: tensor<2 x f32>) {
    %r = Relu(%x) : tensor<2 x f32>
    return %r
  }} : tensor<2 x f32>
  return %y
}
)";

TEST(CAPI, InputsDecidingAnIfAreReadByValue) {
  const std::string Path = testing::TempDir() + "strider-capi-if.lir";
  std::ofstream(Path) << IfOnRateLir;
  strider_model *M = nullptr;
  ASSERT_EQ(strider_model_load(Path.c_str(), &M), STRIDER_OK)
      << strider_last_error();
  std::remove(Path.c_str());
  strider_session *S = nullptr;
  ASSERT_EQ(strider_session_create(M, nullptr, &S), STRIDER_OK)
      << strider_last_error();

  const DLDataType I64{kDLInt, 64, 1};
  std::vector<int64_t> Scalar, Pair{2};
  std::vector<float> X{-1.0f, 2.0f};
  for (int64_t Rate : {16000, 8000, 16000}) {
    int64_t SR = Rate;
    DLTensor In[2] = {view(&SR, I64, Scalar), view(X.data(), F32, Pair)};
    std::vector<float> Y(2, 7.0f);
    DLTensor Out = view(Y.data(), F32, Pair);
    ASSERT_EQ(strider_session_run(S, In, 2, &Out, 1), STRIDER_OK)
        << strider_last_error();
    EXPECT_EQ(Y[0], Rate == 16000 ? 0.0f : 1.0f);
    EXPECT_EQ(Y[1], Rate == 16000 ? 2.0f : -2.0f);
  }
  EXPECT_EQ(strider_session_num_programs_built(S), 2u);

  // Prepared without data, the session cannot tell which branch runs.
  DLTensor NoData[2] = {view(nullptr, I64, Scalar), view(nullptr, F32, Pair)};
  EXPECT_EQ(strider_session_prepare(S, NoData, 2), STRIDER_ERROR_RUN);
  EXPECT_NE(std::string(strider_last_error())
                .find("input 'sr' decides which branch an If takes"),
            std::string::npos)
      << strider_last_error();
  strider_session_free(S);
  strider_model_free(M);
}

TEST_F(Fixture, InputRangesRefuseOtherSizes) {
  strider_session_options *O = nullptr;
  ASSERT_EQ(strider_session_options_create(&O), STRIDER_OK);
  EXPECT_EQ(strider_session_options_set_input_range(O, "image", 0, 3, 2),
            STRIDER_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(strider_session_options_set_input_range(O, "image", -1, 1, 2),
            STRIDER_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(strider_session_options_set_input_range(O, nullptr, 0, 1, 2),
            STRIDER_ERROR_INVALID_ARGUMENT);
  // A static dim cannot take a range: refused when the session is made.
  ASSERT_EQ(strider_session_options_set_input_range(O, "image", 2, 1, 2),
            STRIDER_OK);
  strider_session *S = nullptr;
  EXPECT_FAILS(strider_session_create(M, O, &S), STRIDER_ERROR_INVALID_ARGUMENT,
               "dim 2 is static");
  strider_session_options_free(O);
  ASSERT_EQ(strider_session_options_create(&O), STRIDER_OK);
  ASSERT_EQ(strider_session_options_set_input_range(O, "image", 0, 1, 2),
            STRIDER_OK);
  ASSERT_EQ(strider_session_create(M, O, &S), STRIDER_OK)
      << strider_last_error();
  strider_session_options_free(O);
  std::vector<float> Two = image(2);
  const std::vector<float> Logits = run(S, Two, 2);
  EXPECT_TRUE(std::isfinite(Logits[0]));
  std::vector<float> In = image(3), Out(30);
  std::vector<int64_t> InShape{3, 3, 32, 32}, OutShape{3, 10};
  DLTensor I = view(In.data(), F32, InShape);
  DLTensor T = view(Out.data(), F32, OutShape);
  EXPECT_FAILS(strider_session_run(S, &I, 1, &T, 1), STRIDER_ERROR_TENSOR,
               "dim 0 is 3, outside the range 1..2 the session allows");
  strider_session_free(S);
}

// An artifact compiled for a range of batch sizes (strider-compile
// --shape image=1..4x3x32x32) says so and refuses batches outside it.
TEST(ShapeRanges, ArtifactServesItsRangeOnly) {
  char Dir[] = "/tmp/strider-capi-ranges-XXXXXX";
  ASSERT_NE(mkdtemp(Dir), nullptr);
  const std::string Out = std::string(Dir) + "/out";
  const std::string Cmd = std::string(STRIDER_COMPILE_TOOL) + " " +
                          modelPath() + " -o " + Out +
                          " --shape image=1..4x3x32x32 --quiet --svg=false";
  ASSERT_EQ(std::system(Cmd.c_str()), 0) << Cmd;
  strider_model *M = nullptr;
  ASSERT_EQ(strider_model_load(Out.c_str(), &M), STRIDER_OK)
      << strider_last_error();
  int64_t Min = -1, Max = -1;
  ASSERT_EQ(strider_model_input_dim_range(M, 0, 0, &Min, &Max), STRIDER_OK);
  EXPECT_EQ(Min, 1);
  EXPECT_EQ(Max, 4);
  ASSERT_EQ(strider_model_input_dim_range(M, 0, 1, &Min, &Max), STRIDER_OK);
  EXPECT_EQ(Min, 3);
  EXPECT_EQ(Max, 3);
  EXPECT_EQ(strider_model_input_dim_range(M, 0, 4, &Min, &Max),
            STRIDER_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(strider_model_input_dim_range(M, 1, 0, &Min, &Max),
            STRIDER_ERROR_INVALID_ARGUMENT);
  strider_session *S = nullptr;
  ASSERT_EQ(strider_session_create(M, nullptr, &S), STRIDER_OK)
      << strider_last_error();
  for (int64_t N : {4, 1, 5}) {
    std::vector<float> In = image(N), Logits(size_t(N * 10));
    std::vector<int64_t> InShape{N, 3, 32, 32}, OutShape{N, 10};
    DLTensor I = view(In.data(), F32, InShape);
    DLTensor O = view(Logits.data(), F32, OutShape);
    const strider_status St = strider_session_run(S, &I, 1, &O, 1);
    if (N <= 4) {
      EXPECT_EQ(St, STRIDER_OK) << strider_last_error();
      continue;
    }
    EXPECT_FAILS(St, STRIDER_ERROR_TENSOR,
                 "input 'image' dim 0 is 5, outside the range 1..4");
  }
  strider_session_free(S);
  strider_model_free(M);
  const std::string Clean = "rm -rf " + std::string(Dir);
  EXPECT_EQ(std::system(Clean.c_str()), 0);
}

} // namespace
