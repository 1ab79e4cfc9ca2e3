//===- ComputeGpuTest.cpp - The CUDA compute kernels against the host -----===//
//
// launchElementwise, launchEpilogue, launchPool, launchReduce,
// launchSoftmax and launchNorm on random data, compared with plain host
// computations in double: f32 tightly, f16 and bf16 loosely, both pooling
// layouts, shapes that are not multiples of the block sizes and reductions
// longer than a block. Skips itself on machines without a GPU.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"
#include "GpuTestSupport.h"
#include "Kernels.h"
#include "LibraryDescriptors.h"

#include "strider/CodeGen/CUDA/CUDABackend.h"
#include "strider/IR/TensorData.h"

#include "gtest/gtest.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace strider;
using namespace strider::cuda;
using namespace strider::cuda::gputest;
using codegen::Activation;
using codegen::ActKind;

namespace {

/// \p V as stored in type \p T and read back.
float roundTo(float V, DType T) {
  switch (T) {
  case DType::F32:
    return V;
  case DType::F16:
    return halfToFloat(floatToHalf(V));
  case DType::BF16:
    return bfloat16ToFloat(floatToBfloat16(V));
  }
  return V;
}

/// Device memory freed on scope exit.
class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t Bytes) : Bytes(Bytes) {
    EXPECT_EQ(targetMalloc(&Ptr, Bytes ? Bytes : 1), cudaSuccess);
  }
  DeviceBuffer(const std::vector<float> &V, DType T)
      : DeviceBuffer(V.size() * getDTypeBytes(T)) {
    const std::vector<uint8_t> B = toStorage(V, T);
    if (!B.empty()) {
      EXPECT_EQ(targetUpload(Ptr, B.data(), B.size()), cudaSuccess);
    }
  }
  /// \p B's bytes as they are (element types the float helpers do not
  /// cover).
  explicit DeviceBuffer(const std::vector<uint8_t> &B)
      : DeviceBuffer(B.size()) {
    if (!B.empty()) {
      EXPECT_EQ(targetUpload(Ptr, B.data(), B.size()), cudaSuccess);
    }
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { targetFree(Ptr); }

  void *get() const { return Ptr; }
  float *getFloats() const { return static_cast<float *>(Ptr); }
  std::vector<float> read(DType T) const {
    std::vector<uint8_t> B(Bytes);
    if (!B.empty()) {
      EXPECT_EQ(targetDownload(B.data(), Ptr, B.size()), cudaSuccess);
    }
    return gputest::fromStorage(B, T);
  }
  std::vector<uint8_t> readBytes() const {
    std::vector<uint8_t> B(Bytes);
    if (!B.empty()) {
      EXPECT_EQ(targetDownload(B.data(), Ptr, B.size()), cudaSuccess);
    }
    return B;
  }

private:
  void *Ptr = nullptr;
  size_t Bytes = 0;
};

/// Uniform values in [\p Lo, \p Hi), rounded to the storage type \p T so
/// that the host reference sees what the kernel reads.
std::vector<float> randomValues(size_t N, DType T, unsigned Seed,
                                float Lo = -2.0f, float Hi = 2.0f) {
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<float> D(Lo, Hi);
  std::vector<float> V(N);
  for (float &X : V)
    X = roundTo(D(Gen), T);
  return V;
}

/// Waits for the device and checks that nothing failed.
void expectFinished(cudaError_t Launched) {
  EXPECT_EQ(Launched, cudaSuccess) << describeLaunch(Launched);
  const cudaError_t Done = targetSynchronize();
  EXPECT_EQ(Done, cudaSuccess) << describeLaunch(Done);
}

/// The tolerance of a comparison, relative to max(1, |expected|).
double getTolerance(DType T, double F32Tol = 1e-5) {
  return T == DType::F32 ? F32Tol : T == DType::F16 ? 1e-2 : 3e-2;
}

void expectClose(const std::vector<double> &Expected,
                 const std::vector<float> &Actual, double Tol,
                 const std::string &What) {
  ASSERT_EQ(Expected.size(), Actual.size()) << What;
  int Failures = 0;
  for (size_t I = 0; I < Expected.size(); ++I) {
    const double E = Expected[I], A = Actual[I];
    bool OK;
    if (std::isnan(E))
      OK = std::isnan(A);
    else if (std::isinf(E))
      OK = E == A;
    else
      OK = std::fabs(A - E) <= Tol * std::max(1.0, std::fabs(E));
    if (!OK && ++Failures <= 5)
      ADD_FAILURE() << What << ": element " << I << " is " << A << ", expected "
                    << E;
  }
  EXPECT_EQ(Failures, 0) << What << ": " << Failures << " of "
                         << Expected.size() << " elements differ";
}

const DType AllTypes[] = {DType::F32, DType::F16, DType::BF16};

Activation makeAct(ActKind K, float Alpha = 0.0f, float Beta = 0.0f) {
  Activation A;
  A.Kind = K;
  A.Alpha = Alpha;
  A.Beta = Beta;
  return A;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

double refBinary(BinaryOp Op, double A, double B) {
  switch (Op) {
  case BinaryOp::None:
    return A;
  case BinaryOp::Add:
    return A + B;
  case BinaryOp::Sub:
    return A - B;
  case BinaryOp::Mul:
    return A * B;
  case BinaryOp::Div:
    return A / B;
  case BinaryOp::Pow:
    return std::pow(A, B);
  case BinaryOp::Max:
    return std::isnan(B) || B > A ? B : A;
  case BinaryOp::Min:
    return std::isnan(B) || B < A ? B : A;
  case BinaryOp::PRelu:
    return A < 0 ? A * B : A;
  }
  return A;
}

/// Elements an operand read with \p Strides over \p Shape spans.
size_t getSpan(const std::vector<int64_t> &Shape,
               const std::vector<int64_t> &Strides) {
  int64_t Max = 0;
  for (size_t D = 0; D < Shape.size(); ++D)
    Max += (Shape[D] - 1) * Strides[D];
  return size_t(Max + 1);
}

struct ElementwiseCase {
  std::string Name;
  BinaryOp Op;
  Activation Act;
  std::vector<int64_t> Shape, AStrides, BStrides;
  float BLo = -2.0f, BHi = 2.0f; ///< The range of B's values.
  int64_t AOffset = 0; ///< Elements before A in its buffer (misaligns it).
};

/// Runs \p C with A and Y of type \p T and B of type \p BT against the
/// host.
void runElementwise(const ElementwiseCase &C, DType T, DType BT) {
  const std::string What =
      C.Name + " " + getDTypeName(T) + "/" + getDTypeName(BT);
  ElementwiseParams P;
  P.Op = C.Op;
  P.Act = C.Act;
  P.Rank = int(C.Shape.size());
  int64_t Count = 1;
  for (int D = 0; D < P.Rank; ++D) {
    P.Shape[D] = C.Shape[size_t(D)];
    P.AStrides[D] = C.AStrides[size_t(D)];
    P.BStrides[D] = C.Op == BinaryOp::None ? 0 : C.BStrides[size_t(D)];
    Count *= P.Shape[D];
  }
  P.AType = P.YType = T;
  P.BType = BT;
  const bool HasB = C.Op != BinaryOp::None;
  const std::vector<float> A =
      randomValues(getSpan(C.Shape, C.AStrides) + size_t(C.AOffset), T, 1);
  const std::vector<float> B =
      HasB ? randomValues(getSpan(C.Shape, C.BStrides), BT, 2, C.BLo, C.BHi)
           : std::vector<float>();
  std::vector<double> Expected(static_cast<size_t>(Count));
  for (int64_t I = 0; I < Count; ++I) {
    int64_t Rest = I, AOff = 0, BOff = 0;
    for (int D = P.Rank - 1; D >= 0; --D) {
      const int64_t Idx = Rest % P.Shape[D];
      Rest /= P.Shape[D];
      AOff += Idx * P.AStrides[D];
      BOff += Idx * P.BStrides[D];
    }
    const double V = refBinary(C.Op, A[size_t(C.AOffset + AOff)],
                               HasB ? B[size_t(BOff)] : 0.0);
    Expected[size_t(I)] = codegen::applyScalar(C.Act, float(V));
  }
  DeviceBuffer DA(A, T), DB(HasB ? B : std::vector<float>{0.0f}, BT),
      DY(size_t(Count) * getDTypeBytes(T));
  const void *APtr =
      static_cast<const char *>(DA.get()) + C.AOffset * getDTypeBytes(T);
  expectFinished(launchers().Elementwise(P, APtr, HasB ? DB.get() : nullptr,
                                         DY.get(), nullptr));
  expectClose(Expected, DY.read(T), getTolerance(T), What);
}

std::vector<ElementwiseCase> getElementwiseCases() {
  std::vector<ElementwiseCase> Cases;
  // Same shapes: vector accesses and a tail.
  Cases.push_back({"add+relu dense",
                   BinaryOp::Add,
                   makeAct(ActKind::Relu),
                   {2, 3, 33, 35},
                   {3465, 1155, 35, 1},
                   {3465, 1155, 35, 1}});
  // ... unless A is misaligned: a flat walk.
  Cases.push_back({"add misaligned",
                   BinaryOp::Add,
                   Activation(),
                   {4, 25},
                   {25, 1},
                   {25, 1},
                   -2.0f,
                   2.0f,
                   1});
  // A scalar B over more elements than one pass of the grid covers.
  Cases.push_back(
      {"mul scalar", BinaryOp::Mul, Activation(), {1000003}, {1}, {0}});
  Cases.push_back(
      {"sub scalar A", BinaryOp::Sub, Activation(), {5, 13}, {0, 0}, {13, 1}});
  // One strided dim.
  Cases.push_back({"add strided", BinaryOp::Add, Activation(), {50}, {2}, {1}});
  // Per-channel B, NCHW and NHWC.
  Cases.push_back({"sub+sigmoid per-channel nchw",
                   BinaryOp::Sub,
                   makeAct(ActKind::Sigmoid),
                   {2, 5, 7, 9},
                   {315, 63, 9, 1},
                   {0, 1, 0, 0}});
  Cases.push_back({"prelu per-channel nhwc",
                   BinaryOp::PRelu,
                   Activation(),
                   {2, 7, 9, 5},
                   {315, 45, 5, 1},
                   {0, 0, 0, 1},
                   0.0f,
                   0.5f});
  // Squeeze-excite: (N, C, 1, 1) over (N, C, H, W).
  Cases.push_back({"mul+hard_sigmoid excite",
                   BinaryOp::Mul,
                   makeAct(ActKind::HardSigmoid, 0.2f, 0.5f),
                   {3, 16, 5, 5},
                   {400, 25, 5, 1},
                   {16, 1, 0, 0}});
  // A transposed A, B away from zero.
  Cases.push_back({"div transposed",
                   BinaryOp::Div,
                   Activation(),
                   {3, 4, 5},
                   {1, 3, 12},
                   {20, 5, 1},
                   0.5f,
                   2.0f});
  // Broadcast on both sides: (4, 1, 6) with (1, 5, 1).
  Cases.push_back({"max both broadcast",
                   BinaryOp::Max,
                   Activation(),
                   {4, 5, 6},
                   {6, 0, 1},
                   {0, 1, 0}});
  Cases.push_back({"min+clip both broadcast",
                   BinaryOp::Min,
                   makeAct(ActKind::Clip, -1.0f, 1.0f),
                   {4, 5, 6},
                   {6, 0, 1},
                   {0, 1, 0}});
  // Pow with integral and fractional exponents of any base.
  Cases.push_back({"pow",
                   BinaryOp::Pow,
                   Activation(),
                   {7, 11},
                   {11, 1},
                   {0, 1},
                   -3.0f,
                   3.0f});
  // Rank 6, every dim kept.
  Cases.push_back({"add rank 6",
                   BinaryOp::Add,
                   makeAct(ActKind::Tanh),
                   {2, 3, 2, 3, 2, 5},
                   {1, 2, 6, 12, 36, 72},
                   {0, 10, 0, 1, 5, 0}});
  return Cases;
}

TEST(CudaComputeTest, ElementwiseBinaryF32) {
  STRIDER_SKIP_WITHOUT_TARGET();
  for (const ElementwiseCase &C : getElementwiseCases())
    runElementwise(C, DType::F32, DType::F32);
}

TEST(CudaComputeTest, ElementwiseBinaryHalfTypes) {
  STRIDER_SKIP_WITHOUT_TARGET();
  for (const ElementwiseCase &C : getElementwiseCases()) {
    if (C.Op == BinaryOp::Pow)
      continue; // Rounded operands move pow too far for a loose check.
    for (DType T : {DType::F16, DType::BF16}) {
      runElementwise(C, T, T);
      runElementwise(C, T, DType::F32);
    }
  }
}

TEST(CudaComputeTest, ElementwiseEveryActivation) {
  STRIDER_SKIP_WITHOUT_TARGET();
  for (unsigned K = 0; K < codegen::NumActKinds; ++K) {
    ElementwiseCase C;
    C.Name = "unary kind " + std::to_string(K);
    C.Op = BinaryOp::None;
    C.Act = makeAct(ActKind(K), 0.3f, 0.6f);
    if (C.Act.Kind == ActKind::Clip)
      C.Act.Alpha = -0.5f;
    C.Shape = {3, 257};
    C.AStrides = {257, 1};
    C.BStrides = {0, 0};
    runElementwise(C, DType::F32, DType::F32);
    runElementwise(C, DType::F16, DType::F16);
  }
}

TEST(CudaComputeTest, ElementwiseRejectsTypeMixes) {
  STRIDER_SKIP_WITHOUT_TARGET();
  ElementwiseParams P;
  P.Op = BinaryOp::Add;
  P.Rank = 1;
  P.Shape[0] = 4;
  P.AStrides[0] = P.BStrides[0] = 1;
  DeviceBuffer A(16), B(16), Y(16);
  P.AType = DType::F32;
  P.YType = DType::F16;
  EXPECT_EQ(launchers().Elementwise(P, A.get(), B.get(), Y.get(), nullptr),
            cudaErrorInvalidValue);
  P.AType = P.YType = DType::F16;
  P.BType = DType::BF16;
  EXPECT_EQ(launchers().Elementwise(P, A.get(), B.get(), Y.get(), nullptr),
            cudaErrorInvalidValue);
  // An empty result launches nothing.
  P.BType = DType::F16;
  P.Shape[0] = 0;
  EXPECT_EQ(launchers().Elementwise(P, A.get(), B.get(), Y.get(), nullptr),
            cudaSuccess);
}

//===----------------------------------------------------------------------===//
// Epilogue
//===----------------------------------------------------------------------===//

struct EpilogueCase {
  std::string Name;
  int64_t Count, Channels, ChannelStride;
  bool Scale, Bias, Residual, InPlace;
  Activation Act;
};

void runEpilogue(const EpilogueCase &C, DType T) {
  const std::string What = C.Name + " " + getDTypeName(T);
  EpilogueParams P;
  P.Count = C.Count;
  P.Channels = C.Channels;
  P.ChannelStride = C.ChannelStride;
  P.Act = C.Act;
  P.XType = P.ResidualType = P.YType = T;
  const std::vector<float> X = randomValues(size_t(C.Count), T, 3);
  const std::vector<float> R = randomValues(size_t(C.Count), T, 4);
  const std::vector<float> S =
      randomValues(size_t(C.Channels), DType::F32, 5, 0.5f, 1.5f);
  const std::vector<float> B = randomValues(size_t(C.Channels), DType::F32, 6);
  std::vector<double> Expected(size_t(C.Count));
  for (int64_t I = 0; I < C.Count; ++I) {
    const size_t Ch = size_t((I / C.ChannelStride) % C.Channels);
    double V = X[size_t(I)];
    if (C.Scale)
      V *= S[Ch];
    if (C.Bias)
      V += B[Ch];
    if (C.Residual)
      V += R[size_t(I)];
    Expected[size_t(I)] = codegen::applyScalar(C.Act, float(V));
  }
  DeviceBuffer DX(X, T), DR(R, T), DS(S, DType::F32), DB(B, DType::F32),
      DY(size_t(C.Count) * getDTypeBytes(T));
  void *Y = C.InPlace ? DX.get() : DY.get();
  expectFinished(
      launchers().Epilogue(P, DX.get(), C.Scale ? DS.getFloats() : nullptr,
                           C.Bias ? DB.getFloats() : nullptr,
                           C.Residual ? DR.get() : nullptr, Y, nullptr));
  expectClose(Expected, (C.InPlace ? DX : DY).read(T), getTolerance(T), What);
}

TEST(CudaComputeTest, Epilogue) {
  STRIDER_SKIP_WITHOUT_TARGET();
  const EpilogueCase Cases[] = {
      // BatchNormalization, NCHW and NHWC.
      {"batchnorm nchw", 2 * 7 * 45, 7, 45, true, true, false, false,
       Activation()},
      {"batchnorm+relu nhwc", 2 * 45 * 7, 7, 1, true, true, false, false,
       makeAct(ActKind::Relu)},
      // What a library left: bias, residual, activation, in place.
      {"bias+residual+relu nchw in place", 3 * 16 * 100, 16, 100, false, true,
       true, true, makeAct(ActKind::Relu)},
      {"residual+clip in place", 100003, 1, 1, false, false, true, true,
       makeAct(ActKind::Clip, 0.0f, 6.0f)},
      {"silu only", 4099, 1, 1, false, false, false, false,
       makeAct(ActKind::SiLU)},
      {"scale only nhwc", 5 * 33, 33, 1, true, false, false, false,
       Activation()},
  };
  for (const EpilogueCase &C : Cases)
    for (DType T : AllTypes)
      runEpilogue(C, T);
}

TEST(CudaComputeTest, EpilogueRejectsTypeMixes) {
  STRIDER_SKIP_WITHOUT_TARGET();
  EpilogueParams P;
  P.Count = 4;
  P.XType = P.YType = DType::F16;
  P.ResidualType = DType::F32;
  DeviceBuffer X(16), R(16);
  EXPECT_EQ(launchers().Epilogue(P, X.get(), nullptr, nullptr, R.get(), X.get(),
                                 nullptr),
            cudaErrorInvalidValue);
  // Without a residual its type does not matter.
  expectFinished(launchers().Epilogue(P, X.get(), nullptr, nullptr, nullptr,
                                      X.get(), nullptr));
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// The output size of a pooling axis (ceil_mode drops a last window that
/// starts past the input and its begin padding).
int64_t poolOut(int64_t In, int64_t K, int64_t S, int64_t D, int64_t PB,
                int64_t PE, bool Ceil) {
  const int64_t Span = In + PB + PE - (K - 1) * D - 1;
  int64_t Out = (Ceil ? (Span + S - 1) / S : Span / S) + 1;
  if (Ceil && (Out - 1) * S >= In + PB)
    --Out;
  return Out;
}

/// Pooling on the host, window by window: the values and, for a max,
/// ONNX's index of the first maximum in window order (spatial dims
/// row-major, or column-major with \p ColumnMajor).
struct PoolReference {
  std::vector<double> Y;
  std::vector<int64_t> Indices;
};
PoolReference refPool(const PoolParams &P, const std::vector<float> &X,
                      bool ColumnMajor = false) {
  int64_t InPix = 1, OutPix = 1;
  for (int D = 0; D < P.Spatial; ++D) {
    InPix *= P.In[D];
    OutPix *= P.Out[D];
  }
  PoolReference R;
  R.Y.resize(size_t(P.N * P.C * OutPix));
  R.Indices.assign(R.Y.size(), -1);
  auto XAt = [&](int64_t N, int64_t C, int64_t Pix) {
    return double(X[size_t(P.ChannelsLast ? (N * InPix + Pix) * P.C + C
                                          : (N * P.C + C) * InPix + Pix)]);
  };
  for (int64_t N = 0; N < P.N; ++N)
    for (int64_t C = 0; C < P.C; ++C)
      for (int64_t OP = 0; OP < OutPix; ++OP) {
        int64_t O[3] = {0, 0, 0}, Rest = OP;
        for (int D = P.Spatial - 1; D >= 0; --D) {
          O[D] = Rest % P.Out[D];
          Rest /= P.Out[D];
        }
        double Acc = P.Max ? -INFINITY : 0.0;
        int64_t Counted = 0, Best = -1;
        int64_t Taps = 1;
        for (int D = 0; D < P.Spatial; ++D)
          Taps *= P.Kernel[D];
        for (int64_t T = 0; T < Taps; ++T) {
          int64_t K[3] = {0, 0, 0}, Rest = T, Pix = 0, ColPix = 0, Scale = 1;
          for (int D = P.Spatial - 1; D >= 0; --D) {
            K[D] = Rest % P.Kernel[D];
            Rest /= P.Kernel[D];
          }
          bool Inside = true, InPadded = true;
          for (int D = 0; D < P.Spatial; ++D) {
            const int64_t Pos =
                O[D] * P.Stride[D] - P.PadBegin[D] + K[D] * P.Dilation[D];
            Inside = Inside && Pos >= 0 && Pos < P.In[D];
            InPadded = InPadded && Pos >= -P.PadBegin[D] &&
                       Pos < P.In[D] + P.PadEnd[D];
            Pix = Pix * P.In[D] + Pos;
            ColPix += Pos * Scale;
            Scale *= P.In[D];
          }
          if (Inside) {
            const double V = XAt(N, C, Pix);
            if (!P.Max) {
              Acc += V;
            } else if (Best < 0 || V > Acc) {
              Acc = V;
              Best = (N * P.C + C) * InPix + (ColumnMajor ? ColPix : Pix);
            }
          }
          if (P.CountIncludePad ? InPadded : Inside)
            ++Counted;
        }
        if (!P.Max)
          Acc = Counted ? Acc / double(Counted)
                        : std::numeric_limits<double>::quiet_NaN();
        const int64_t YIdx = P.ChannelsLast ? (N * OutPix + OP) * P.C + C
                                            : (N * P.C + C) * OutPix + OP;
        R.Y[size_t(YIdx)] = Acc;
        R.Indices[size_t(YIdx)] = Best;
      }
  return R;
}

struct PoolCase {
  std::string Name;
  bool Max, CountPad, Ceil;
  int64_t N, C;
  std::vector<int64_t> In, Kernel, Stride, Dilation, PadBegin, PadEnd;
};

/// \p Case's parameters in the order \p ChannelsLast; \p InCount and
/// \p OutCount get the element counts of X and Y.
PoolParams makePool(const PoolCase &Case, bool ChannelsLast, int64_t &InCount,
                    int64_t &OutCount) {
  PoolParams P;
  P.Max = Case.Max;
  P.CountIncludePad = Case.CountPad;
  P.Spatial = int(Case.In.size());
  P.N = Case.N;
  P.C = Case.C;
  InCount = OutCount = P.N * P.C;
  for (int D = 0; D < P.Spatial; ++D) {
    const size_t S = size_t(D);
    P.In[D] = Case.In[S];
    P.Kernel[D] = Case.Kernel[S];
    P.Stride[D] = Case.Stride[S];
    P.Dilation[D] = Case.Dilation[S];
    P.PadBegin[D] = Case.PadBegin[S];
    P.PadEnd[D] = Case.PadEnd[S];
    P.Out[D] = poolOut(P.In[D], P.Kernel[D], P.Stride[D], P.Dilation[D],
                       P.PadBegin[D], P.PadEnd[D], Case.Ceil);
    InCount *= P.In[D];
    OutCount *= P.Out[D];
  }
  P.ChannelsLast = ChannelsLast;
  return P;
}

std::vector<int64_t> readIndices(const DeviceBuffer &B) {
  const std::vector<uint8_t> Bytes = B.readBytes();
  std::vector<int64_t> V(Bytes.size() / 8);
  if (!V.empty())
    std::memcpy(V.data(), Bytes.data(), V.size() * 8);
  return V;
}

void runPool(const PoolCase &Case, bool ChannelsLast, DType T) {
  const std::string What =
      Case.Name + (ChannelsLast ? " nhwc " : " nchw ") + getDTypeName(T);
  int64_t InCount, OutCount;
  PoolParams P = makePool(Case, ChannelsLast, InCount, OutCount);
  P.Type = toScalarType(T);
  const std::vector<float> X = randomValues(size_t(InCount), T, 7);
  DeviceBuffer DX(X, T), DY(size_t(OutCount) * getDTypeBytes(T));
  expectFinished(launchers().Pool(P, DX.get(), DY.get(), nullptr, nullptr));
  expectClose(refPool(P, X).Y, DY.read(T), getTolerance(T), What);
  if (!P.Max)
    return;
  // Again with the indices, both storage orders (f16 and bf16 values tie
  // now and then: the first maximum wins).
  for (bool Column : {false, true}) {
    P.IndicesColumnMajor = Column;
    DeviceBuffer DI(size_t(OutCount) * 8);
    expectFinished(launchers().Pool(P, DX.get(), DY.get(),
                                    static_cast<int64_t *>(DI.get()), nullptr));
    const PoolReference R = refPool(P, X, Column);
    expectClose(R.Y, DY.read(T), getTolerance(T), What + " with indices");
    EXPECT_EQ(readIndices(DI), R.Indices)
        << What << (Column ? " column-major" : " row-major") << " indices";
  }
}

/// Windows of every kind: pads, ceil_mode, count_include_pad, 1D to 3D,
/// dilations.
const PoolCase PoolCases[] = {
    // The ResNet stem's max pool.
    {"max 3x3 s2 p1",
     true,
     false,
     false,
     2,
     19,
     {17, 16},
     {3, 3},
     {2, 2},
     {1, 1},
     {1, 1},
     {1, 1}},
    {"average 3x3 s1 p1",
     false,
     false,
     false,
     2,
     5,
     {9, 11},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1},
     {1, 1}},
    {"average 3x3 s1 p1 count_include_pad",
     false,
     true,
     false,
     2,
     5,
     {9, 11},
     {3, 3},
     {1, 1},
     {1, 1},
     {1, 1},
     {1, 1}},
    // ceil_mode: the last windows reach past the input and the pads.
    {"average ceil count_include_pad",
     false,
     true,
     true,
     1,
     3,
     {6, 7},
     {3, 3},
     {2, 3},
     {1, 1},
     {0, 1},
     {0, 0}},
    {"max ceil",
     true,
     false,
     true,
     1,
     3,
     {6, 7},
     {3, 3},
     {2, 3},
     {1, 1},
     {0, 1},
     {0, 0}},
    // 1D with dilation and uneven pads.
    {"average 1d dilated",
     false,
     false,
     false,
     3,
     4,
     {20},
     {3},
     {2},
     {2},
     {2},
     {1}},
    // 3D with dilation.
    {"max 3d dilated",
     true,
     false,
     false,
     1,
     3,
     {5, 6, 7},
     {2, 2, 3},
     {1, 2, 1},
     {2, 1, 2},
     {1, 0, 1},
     {0, 1, 1}},
    {"average 3d count_include_pad",
     false,
     true,
     false,
     2,
     2,
     {4, 5, 6},
     {3, 3, 3},
     {2, 2, 2},
     {1, 1, 1},
     {1, 1, 1},
     {1, 1, 1}},
    // Global-sized window over many channels (non-multiple of 32).
    {"average 7x7 window",
     false,
     false,
     false,
     2,
     37,
     {7, 7},
     {7, 7},
     {1, 1},
     {1, 1},
     {0, 0},
     {0, 0}},
};

TEST(CudaComputeTest, Pool) {
  STRIDER_SKIP_WITHOUT_TARGET();
  for (const PoolCase &C : PoolCases)
    for (bool Last : {false, true})
      for (DType T : AllTypes)
        runPool(C, Last, T);
}

// MaxPool of i8 and u8 (exact) over the max cases above, with its
// indices: values from a small range, so that windows tie often and the
// first maximum must win.
TEST(CudaComputeTest, MaxPoolOfBytes) {
  STRIDER_SKIP_WITHOUT_TARGET();
  std::mt19937 Gen(11);
  for (const PoolCase &Case : PoolCases)
    for (ScalarType T : {ScalarType::I8, ScalarType::U8})
      for (bool Last : {false, true})
        for (bool Column : {false, true}) {
          if (!Case.Max)
            continue;
          const std::string What = Case.Name + (Last ? " nhwc " : " nchw ") +
                                   (T == ScalarType::I8 ? "i8" : "u8") +
                                   (Column ? " column-major" : " row-major");
          int64_t InCount, OutCount;
          PoolParams P = makePool(Case, Last, InCount, OutCount);
          P.Type = T;
          P.IndicesColumnMajor = Column;
          std::uniform_int_distribution<int> D(T == ScalarType::I8 ? -4 : 250,
                                               T == ScalarType::I8 ? 3 : 255);
          std::vector<uint8_t> XBytes(static_cast<size_t>(InCount));
          std::vector<float> X(XBytes.size());
          for (size_t I = 0; I < X.size(); ++I) {
            const int V = D(Gen);
            XBytes[I] = uint8_t(V);
            X[I] = float(V);
          }
          DeviceBuffer DX(XBytes), DY(static_cast<size_t>(OutCount)),
              DI(size_t(OutCount) * 8);
          expectFinished(launchers().Pool(P, DX.get(), DY.get(),
                                          static_cast<int64_t *>(DI.get()),
                                          nullptr));
          const PoolReference R = refPool(P, X, Column);
          const std::vector<uint8_t> Y = DY.readBytes();
          std::vector<double> Got(Y.size());
          for (size_t I = 0; I < Y.size(); ++I)
            Got[I] = T == ScalarType::I8 ? double(int8_t(Y[I])) : double(Y[I]);
          EXPECT_EQ(Got, R.Y) << What;
          EXPECT_EQ(readIndices(DI), R.Indices) << What;
        }
}

//===----------------------------------------------------------------------===//
// Reductions, softmax, normalization
//===----------------------------------------------------------------------===//

struct Shape3 {
  int64_t Outer, Reduced, Inner;
};

/// Covers every launch shape: warp rows, block rows (longer than a
/// block), a thread per output, and columns with 1, 4, 8 and 16 threads
/// each.
const Shape3 ReduceShapes[] = {
    {6, 49, 1},    {300, 100, 1}, {3, 5000, 1}, {2, 20000, 1},
    {7, 3, 1},     {2, 49, 70},   {1, 3000, 5}, {5, 17, 33},
    {40, 20, 900}, {8, 30, 1000}, {1, 1, 1},    {3, 1000, 1},
};

const char *getReduceName(ReduceParams::Kind K) {
  static const char *const Names[] = {"sum",  "mean", "max",       "min",
                                      "prod", "l2",   "sum_square"};
  return Names[K];
}

void runReduce(ReduceParams::Kind Kind, const Shape3 &S, DType T) {
  const std::string What = std::string(getReduceName(Kind)) + " " +
                           std::to_string(S.Outer) + "x" +
                           std::to_string(S.Reduced) + "x" +
                           std::to_string(S.Inner) + " " + getDTypeName(T);
  ReduceParams P;
  P.Op = Kind;
  P.Outer = S.Outer;
  P.Reduced = S.Reduced;
  P.Inner = S.Inner;
  P.XType = P.YType = T;
  // Positive values keep sums free of cancellation; products near 1.
  float Lo = 0.5f, Hi = 1.5f;
  if (Kind == ReduceParams::Max || Kind == ReduceParams::Min) {
    Lo = -2.0f;
    Hi = 2.0f;
  } else if (Kind == ReduceParams::Prod) {
    Lo = 0.99f;
    Hi = 1.01f;
  }
  const std::vector<float> X =
      randomValues(size_t(S.Outer * S.Reduced * S.Inner), T, 8, Lo, Hi);
  std::vector<double> Expected(size_t(S.Outer * S.Inner));
  for (int64_t O = 0; O < S.Outer; ++O)
    for (int64_t I = 0; I < S.Inner; ++I) {
      double Acc = Kind == ReduceParams::Max    ? -INFINITY
                   : Kind == ReduceParams::Min  ? INFINITY
                   : Kind == ReduceParams::Prod ? 1.0
                                                : 0.0;
      for (int64_t R = 0; R < S.Reduced; ++R) {
        const double V = X[size_t((O * S.Reduced + R) * S.Inner + I)];
        switch (Kind) {
        case ReduceParams::Max:
          Acc = std::max(Acc, V);
          break;
        case ReduceParams::Min:
          Acc = std::min(Acc, V);
          break;
        case ReduceParams::Prod:
          Acc *= V;
          break;
        case ReduceParams::L2:
        case ReduceParams::SumSquare:
          Acc += V * V;
          break;
        default:
          Acc += V;
        }
      }
      if (Kind == ReduceParams::Mean)
        Acc /= double(S.Reduced);
      if (Kind == ReduceParams::L2)
        Acc = std::sqrt(Acc);
      Expected[size_t(O * S.Inner + I)] = Acc;
    }
  DeviceBuffer DX(X, T), DY(Expected.size() * getDTypeBytes(T));
  expectFinished(launchers().Reduce(P, DX.get(), DY.get(), nullptr));
  expectClose(Expected, DY.read(T), getTolerance(T), What);
}

TEST(CudaComputeTest, ReduceEveryKind) {
  STRIDER_SKIP_WITHOUT_TARGET();
  for (int K = ReduceParams::Sum; K <= ReduceParams::SumSquare; ++K)
    for (const Shape3 &S : ReduceShapes) {
      if (K == ReduceParams::Prod && S.Reduced > 1000)
        continue; // Rounding compounds over long products.
      for (DType T : AllTypes)
        runReduce(ReduceParams::Kind(K), S, T);
    }
}

TEST(CudaComputeTest, ReduceRejectsTypeMixes) {
  STRIDER_SKIP_WITHOUT_TARGET();
  ReduceParams P;
  P.XType = DType::F32;
  P.YType = DType::F16;
  DeviceBuffer X(16), Y(16);
  EXPECT_EQ(launchers().Reduce(P, X.get(), Y.get(), nullptr),
            cudaErrorInvalidValue);
}

void runSoftmax(const Shape3 &S, bool Log, DType T) {
  const std::string What = std::string(Log ? "log_softmax " : "softmax ") +
                           std::to_string(S.Outer) + "x" +
                           std::to_string(S.Reduced) + "x" +
                           std::to_string(S.Inner) + " " + getDTypeName(T);
  SoftmaxParams P;
  P.Outer = S.Outer;
  P.Axis = S.Reduced;
  P.Inner = S.Inner;
  P.Log = Log;
  P.XType = P.YType = T;
  const std::vector<float> X =
      randomValues(size_t(S.Outer * S.Reduced * S.Inner), T, 9, -8.0f, 8.0f);
  std::vector<double> Expected(X.size());
  for (int64_t O = 0; O < S.Outer; ++O)
    for (int64_t I = 0; I < S.Inner; ++I) {
      auto At = [&](int64_t R) {
        return size_t((O * S.Reduced + R) * S.Inner + I);
      };
      double Max = -INFINITY, Sum = 0;
      for (int64_t R = 0; R < S.Reduced; ++R)
        Max = std::max(Max, double(X[At(R)]));
      for (int64_t R = 0; R < S.Reduced; ++R)
        Sum += std::exp(X[At(R)] - Max);
      for (int64_t R = 0; R < S.Reduced; ++R) {
        const double D = X[At(R)] - Max;
        Expected[At(R)] = Log ? D - std::log(Sum) : std::exp(D) / Sum;
      }
    }
  DeviceBuffer DX(X, T), DY(X.size() * getDTypeBytes(T));
  expectFinished(launchers().Softmax(P, DX.get(), DY.get(), nullptr));
  expectClose(Expected, DY.read(T), getTolerance(T), What);
}

TEST(CudaComputeTest, Softmax) {
  STRIDER_SKIP_WITHOUT_TARGET();
  const Shape3 Shapes[] = {
      {4, 1000, 1},  {300, 10, 1}, {2, 21, 4096}, {1, 5000, 3},
      {2, 70000, 1}, {64, 257, 1}, {3, 1, 5},
  };
  for (const Shape3 &S : Shapes)
    for (bool Log : {false, true})
      for (DType T : AllTypes)
        runSoftmax(S, Log, T);
}

struct NormCase {
  std::string Name;
  Shape3 S;
  NormParams::AffineIndex Affine;
  int64_t Channels;
  bool Scale, Bias;
  Activation Act;
};

void runNorm(const NormCase &C, DType T) {
  const std::string What = C.Name + " " + getDTypeName(T);
  const Shape3 &S = C.S;
  NormParams P;
  P.Outer = S.Outer;
  P.Reduced = S.Reduced;
  P.Inner = S.Inner;
  P.Affine = C.Affine;
  P.Channels = C.Channels;
  P.Epsilon = 1e-3f;
  P.Act = C.Act;
  P.XType = P.YType = T;
  const int64_t AffineSize = C.Affine == NormParams::ByReduced ? S.Reduced
                             : C.Affine == NormParams::ByInner ? S.Inner
                                                               : C.Channels;
  const std::vector<float> X =
      randomValues(size_t(S.Outer * S.Reduced * S.Inner), T, 10, -1.0f, 3.0f);
  const std::vector<float> Scale =
      randomValues(size_t(AffineSize), DType::F32, 11, 0.5f, 1.5f);
  const std::vector<float> Bias =
      randomValues(size_t(AffineSize), DType::F32, 12);
  std::vector<double> Expected(X.size());
  std::vector<double> WantMean(size_t(S.Outer * S.Inner)),
      WantInvStd(size_t(S.Outer * S.Inner));
  for (int64_t O = 0; O < S.Outer; ++O)
    for (int64_t I = 0; I < S.Inner; ++I) {
      auto At = [&](int64_t R) {
        return size_t((O * S.Reduced + R) * S.Inner + I);
      };
      double Sum = 0, Squares = 0;
      for (int64_t R = 0; R < S.Reduced; ++R)
        Sum += X[At(R)];
      const double Mean = Sum / double(S.Reduced);
      for (int64_t R = 0; R < S.Reduced; ++R)
        Squares += (X[At(R)] - Mean) * (X[At(R)] - Mean);
      const double InvStd =
          1.0 / std::sqrt(Squares / double(S.Reduced) + double(P.Epsilon));
      WantMean[size_t(O * S.Inner + I)] = Mean;
      WantInvStd[size_t(O * S.Inner + I)] = InvStd;
      for (int64_t R = 0; R < S.Reduced; ++R) {
        const size_t K =
            size_t(C.Affine == NormParams::ByReduced ? R
                   : C.Affine == NormParams::ByInner ? I
                                                     : O % C.Channels);
        double V = (X[At(R)] - Mean) * InvStd;
        if (C.Scale)
          V *= Scale[K];
        if (C.Bias)
          V += Bias[K];
        Expected[At(R)] = codegen::applyScalar(C.Act, float(V));
      }
    }
  DeviceBuffer DX(X, T), DS(Scale, DType::F32), DB(Bias, DType::F32),
      DY(X.size() * getDTypeBytes(T)), DM(WantMean.size() * 4),
      DI(WantInvStd.size() * 4);
  expectFinished(launchers().Norm(P, DX.get(),
                                  C.Scale ? DS.getFloats() : nullptr,
                                  C.Bias ? DB.getFloats() : nullptr, DY.get(),
                                  DM.getFloats(), DI.getFloats(), nullptr));
  expectClose(Expected, DY.read(T), getTolerance(T, 5e-5), What);
  // The statistics (LayerNormalization's extra results), from the data as
  // stored.
  expectClose(WantMean, DM.read(DType::F32), getTolerance(T, 1e-5),
              What + " mean");
  expectClose(WantInvStd, DI.read(DType::F32), getTolerance(T, 1e-5),
              What + " inv_std_dev");
}

TEST(CudaComputeTest, Norm) {
  STRIDER_SKIP_WITHOUT_TARGET();
  const NormCase Cases[] = {
      {"layernorm 768",
       {6, 768, 1},
       NormParams::ByReduced,
       1,
       true,
       true,
       Activation()},
      {"layernorm long rows",
       {3, 20000, 1},
       NormParams::ByReduced,
       1,
       true,
       true,
       Activation()},
      {"layernorm many short rows",
       {1000, 40, 1},
       NormParams::ByReduced,
       1,
       true,
       false,
       Activation()},
      {"instancenorm nchw",
       {2 * 3, 1000, 1},
       NormParams::ByOuterChannel,
       3,
       true,
       true,
       makeAct(ActKind::Relu)},
      {"instancenorm nhwc",
       {2, 1000, 3},
       NormParams::ByInner,
       3,
       true,
       true,
       Activation()},
      {"instancenorm nhwc wide",
       {1, 4099, 70},
       NormParams::ByInner,
       70,
       true,
       true,
       Activation()},
      {"tiny rows, no affine",
       {10, 5, 1},
       NormParams::ByReduced,
       1,
       false,
       false,
       Activation()},
  };
  for (const NormCase &C : Cases)
    for (DType T : AllTypes)
      runNorm(C, T);
}

// BatchNormalization's batch statistics: channels of more elements than a
// block has threads (the strided passes and the tree), both layouts, the
// half types read as f32.
TEST(CudaComputeTest, BatchStatistics) {
  STRIDER_SKIP_WITHOUT_TARGET();
  for (DType T : AllTypes)
    for (bool Last : {false, true}) {
      BatchStatsParams P;
      P.N = 3;
      P.C = 5;
      P.Pixels = 197;
      P.ChannelsLast = Last;
      P.Type = T;
      P.Epsilon = 1e-3f;
      P.Momentum = 0.75f;
      const int64_t Count = P.N * P.C * P.Pixels;
      const std::vector<float> X = randomValues(size_t(Count), T, 21, -1, 3);
      const std::vector<float> G = randomValues(5, DType::F32, 22, 0.5f, 1.5f),
                               B = randomValues(5, DType::F32, 23),
                               M = randomValues(5, DType::F32, 24),
                               V = randomValues(5, DType::F32, 25, 0.5f, 2);
      DeviceBuffer DX(X, T), DG(G, DType::F32), DB(B, DType::F32),
          DM(M, DType::F32), DV(V, DType::F32), Scale(20), Shift(20),
          RunMean(20), RunVar(20);
      expectFinished(launchers().BatchStats(
          P, DX.get(), DG.getFloats(), DB.getFloats(), DM.getFloats(),
          DV.getFloats(), Scale.getFloats(), Shift.getFloats(),
          RunMean.getFloats(), RunVar.getFloats(), nullptr));
      std::vector<double> WantScale, WantShift, WantMean, WantVar;
      for (int64_t C = 0; C < P.C; ++C) {
        double Sum = 0, Sq = 0;
        const int64_t Per = P.N * P.Pixels;
        for (int64_t K = 0; K < Per; ++K)
          Sum += X[size_t(getBatchStatsOffset(P, C, K))];
        const double Mean = Sum / double(Per);
        for (int64_t K = 0; K < Per; ++K) {
          const double D = X[size_t(getBatchStatsOffset(P, C, K))] - Mean;
          Sq += D * D;
        }
        const double Var = Sq / double(Per);
        const double S = G[size_t(C)] / std::sqrt(Var + 1e-3);
        WantScale.push_back(S);
        WantShift.push_back(B[size_t(C)] - Mean * S);
        WantMean.push_back(M[size_t(C)] * 0.75 + Mean * 0.25);
        WantVar.push_back(V[size_t(C)] * 0.75 + Var * 0.25);
      }
      const std::string What = std::string("batch statistics ") +
                               (Last ? "nhwc " : "nchw ") + getDTypeName(T);
      expectClose(WantScale, Scale.read(DType::F32), 1e-5, What + " scale");
      expectClose(WantShift, Shift.read(DType::F32), 1e-5, What + " shift");
      expectClose(WantMean, RunMean.read(DType::F32), 1e-5, What + " mean");
      expectClose(WantVar, RunVar.read(DType::F32), 1e-5, What + " var");
    }
}

} // namespace
