//===- DataMovementGpuTest.cpp - Copy, Pad and Resize kernels on a GPU ----===//
//
// launchCopy (every strategy, every type pair of flat copies, vectorized
// and not, misaligned pointers), launchPad (every mode) and launchResize
// (nearest and linear, both layouts) against host computations, and the
// RelayoutBandwidth tests: NCHW -> NHWC relayouts timed against a
// device-to-device memcpy of the same bytes. Every test skips itself on
// machines without a GPU.
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"
#include "PlanImpl.h"
#include "Kernels.h"

#include "strider/CodeGen/CUDA/CUDABackend.h"

#include "gtest/gtest.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace strider;
using namespace strider::cuda;
using namespace strider::cuda::gputest;

namespace {

//===----------------------------------------------------------------------===//
// Host storage types
//===----------------------------------------------------------------------===//

/// Host values of one device type, stored as the device stores them.
class HostTensor {
public:
  HostTensor(DType T, size_t Count)
      : Type(T), Bytes(Count * getDTypeBytes(T), 0) {}
  DType getType() const { return Type; }
  size_t size() const { return Bytes.size() / getDTypeBytes(Type); }
  float get(size_t I) const {
    if (Type == DType::F32) {
      float F;
      std::memcpy(&F, &Bytes[I * 4], 4);
      return F;
    }
    uint16_t H;
    std::memcpy(&H, &Bytes[I * 2], 2);
    return Type == DType::F16 ? halfToFloat(H) : bfloat16ToFloat(H);
  }
  void set(size_t I, float V) {
    if (Type == DType::F32) {
      std::memcpy(&Bytes[I * 4], &V, 4);
      return;
    }
    const uint16_t H = Type == DType::F16 ? floatToHalf(V) : floatToBfloat16(V);
    std::memcpy(&Bytes[I * 2], &H, 2);
  }
  uint8_t *data() { return Bytes.data(); }
  const uint8_t *data() const { return Bytes.data(); }
  size_t getBytes() const { return Bytes.size(); }

private:
  DType Type;
  std::vector<uint8_t> Bytes;
};

/// Values exact in every device type: multiples of 1/16 in [-8, 8).
HostTensor makeInput(DType T, size_t Count, unsigned Seed) {
  HostTensor H(T, Count);
  std::mt19937 Gen(Seed);
  std::uniform_int_distribution<int> D(-128, 127);
  for (size_t I = 0; I < Count; ++I)
    H.set(I, float(D(Gen)) / 16.0f);
  return H;
}

//===----------------------------------------------------------------------===//
// Device buffers
//===----------------------------------------------------------------------===//

class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t Bytes) {
    EXPECT_EQ(targetMalloc(&Ptr, Bytes ? Bytes : 1), cudaSuccess);
    Size = Bytes;
  }
  ~DeviceBuffer() {
    if (Ptr)
      targetFree(Ptr);
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  uint8_t *get() const { return static_cast<uint8_t *>(Ptr); }
  void upload(const HostTensor &H, size_t Offset = 0) {
    ASSERT_LE(Offset + H.getBytes(), Size);
    ASSERT_EQ(targetUpload(get() + Offset, H.data(), H.getBytes()),
              cudaSuccess);
  }
  void download(HostTensor &H, size_t Offset = 0) const {
    ASSERT_LE(Offset + H.getBytes(), Size);
    ASSERT_EQ(targetDownload(H.data(), get() + Offset, H.getBytes()),
              cudaSuccess);
  }
  /// Fills with a byte pattern no test value has (NaNs in every type).
  void poison() { ASSERT_EQ(targetMemset(Ptr, 0xff, Size), cudaSuccess); }

private:
  void *Ptr = nullptr;
  size_t Size = 0;
};

/// Tolerance of results stored in \p T.
float getTolerance(DType T) {
  return T == DType::F32 ? 1e-5f : T == DType::F16 ? 2e-3f : 1e-2f;
}

void expectNear(const HostTensor &Expected, const HostTensor &Actual,
                const std::string &What) {
  ASSERT_EQ(Expected.size(), Actual.size());
  const float Tol = getTolerance(Actual.getType());
  size_t Bad = 0;
  for (size_t I = 0; I < Expected.size(); ++I) {
    const float E = Expected.get(I), A = Actual.get(I);
    if (std::fabs(E - A) <= Tol * std::max(1.0f, std::fabs(E)))
      continue;
    if (++Bad <= 5)
      ADD_FAILURE() << What << ": element " << I << " is " << A << ", expected "
                    << E;
  }
  EXPECT_EQ(Bad, 0u) << What;
}

//===----------------------------------------------------------------------===//
// Copies
//===----------------------------------------------------------------------===//

using Dims = std::vector<int64_t>;

using gputest::getDenseStrides;

CopyParams makeParams(const Dims &Shape, const Dims &XStrides,
                      const Dims &YStrides, DType XT, DType YT) {
  return makeCopy(Shape, XStrides, YStrides, XT, YT);
}

/// The extent in elements of a strided walk from its element 0, and the
/// offset of its lowest element (negative strides) below element 0.
std::pair<int64_t, int64_t> getSpan(const CopyParams &P, bool X) {
  int64_t Lo = 0, Hi = 0;
  for (int I = 0; I < P.Rank; ++I) {
    const int64_t S = (P.Shape[I] - 1) * (X ? P.XStrides[I] : P.YStrides[I]);
    (S < 0 ? Lo : Hi) += S;
  }
  return {-Lo, Hi - Lo + 1};
}

struct CopyCase {
  CopyParams Params;
  /// Extra elements before X's and Y's element 0 (misaligns the pointers
  /// when not a whole 16 bytes).
  int64_t XPad = 0, YPad = 0;
};

/// Runs \p C through planCopy and launchCopy and compares every element of
/// Y (written or not) with the host's strided copy. Returns the plan.
CopyPlan checkCopy(const CopyCase &C, const std::string &What) {
  const CopyParams &P = C.Params;
  CopyPlan Plan = planCopy(P);
  auto [XBase, XSize] = getSpan(P, true);
  auto [YBase, YSize] = getSpan(P, false);
  XBase += C.XPad;
  YBase += C.YPad;
  HostTensor X = makeInput(P.XType, size_t(XBase + XSize), 7);
  HostTensor Expected(P.YType, size_t(YBase + YSize));
  for (size_t I = 0; I < Expected.size(); ++I)
    Expected.set(I, -1000.0f);
  int64_t Count = 1;
  for (int I = 0; I < P.Rank; ++I)
    Count *= P.Shape[I];
  for (int64_t L = 0; L < Count; ++L) {
    int64_t Rest = L, XOff = XBase, YOff = YBase;
    for (int D = P.Rank - 1; D >= 0; --D) {
      const int64_t I = Rest % P.Shape[D];
      Rest /= P.Shape[D];
      XOff += I * P.XStrides[D];
      YOff += I * P.YStrides[D];
    }
    Expected.set(size_t(YOff), X.get(size_t(XOff)));
  }
  HostTensor Y(P.YType, Expected.size());
  for (size_t I = 0; I < Y.size(); ++I)
    Y.set(I, -1000.0f);
  DeviceBuffer DX(X.getBytes()), DY(Y.getBytes());
  DX.upload(X);
  DY.upload(Y);
  const size_t XElt = getDTypeBytes(P.XType), YElt = getDTypeBytes(P.YType);
  EXPECT_EQ(launchers().Copy(Plan, DX.get() + XBase * int64_t(XElt),
                             DY.get() + YBase * int64_t(YElt), nullptr),
            cudaSuccess)
      << What;
  EXPECT_EQ(targetSynchronize(), cudaSuccess) << What;
  DY.download(Y);
  expectNear(Expected, Y, What);
  return Plan;
}

const DType AllTypes[] = {DType::F32, DType::F16, DType::BF16};
const Dims NCHW = {0, 1, 2, 3}, NHWC = {0, 2, 3, 1};

std::string describe(const char *Name, DType XT, DType YT) {
  return std::string(Name) + " " + getDTypeName(XT) + ">" + getDTypeName(YT);
}

TEST(DataMovementGpuTest, ContiguousCopiesAndCasts) {
  STRIDER_SKIP_WITHOUT_TARGET();
  for (DType XT : AllTypes)
    for (DType YT : AllTypes) {
      // 4000 elements: whole vectors; 4001: not.
      for (int64_t Count : {4000, 4001}) {
        CopyCase C;
        C.Params = makeParams({Count}, {1}, {1}, XT, YT);
        const std::string What =
            describe("flat", XT, YT) + " x" + std::to_string(Count);
        CopyPlan Plan = checkCopy(C, What);
        EXPECT_EQ(Plan.Strategy, CopyStrategy::Contiguous) << What;
        EXPECT_EQ(Plan.Vector > 1, XT == YT && Count == 4000) << What;
      }
    }
}

TEST(DataMovementGpuTest, ContiguousCopiesFromMisalignedSlots) {
  STRIDER_SKIP_WITHOUT_TARGET();
  for (DType T : AllTypes) {
    // The plan vectorizes; the pointers one element off make launchCopy
    // fall back to scalar accesses.
    const std::pair<int64_t, int64_t> Pads[] = {{1, 0}, {0, 1}};
    for (auto [XPad, YPad] : Pads) {
      CopyCase C;
      C.Params = makeParams({2, 3, 8, 8}, getDenseStrides({2, 3, 8, 8}, NCHW),
                            getDenseStrides({2, 3, 8, 8}, NCHW), T, T);
      C.XPad = XPad;
      C.YPad = YPad;
      CopyPlan Plan = checkCopy(C, describe("misaligned flat", T, T));
      EXPECT_GT(Plan.Vector, 1);
    }
  }
}

TEST(DataMovementGpuTest, Transposes) {
  STRIDER_SKIP_WITHOUT_TARGET();
  struct Shape {
    Dims Extents;
    bool Vectorizable; // For every type.
  };
  const Shape Shapes[] = {
      {{2, 64, 16, 16}, true}, // Whole tiles.
      {{3, 40, 12, 12}, true}, // Partial tiles of vectors.
      {{2, 33, 7, 7}, false},  // Odd everything.
      {{1, 24, 10, 9}, false}, // No batch.
  };
  for (const Shape &S : Shapes)
    for (DType T : AllTypes)
      for (bool ToNHWC : {true, false}) {
        CopyCase C;
        const Dims &E = S.Extents;
        C.Params = makeParams(E, getDenseStrides(E, ToNHWC ? NCHW : NHWC),
                              getDenseStrides(E, ToNHWC ? NHWC : NCHW), T, T);
        const std::string What =
            describe(ToNHWC ? "nchw>nhwc" : "nhwc>nchw", T, T) + " " +
            std::to_string(E[1]) + "x" + std::to_string(E[2]) + "x" +
            std::to_string(E[3]);
        CopyPlan Plan = checkCopy(C, What);
        EXPECT_EQ(Plan.Strategy, CopyStrategy::Transpose2D) << What;
        if (S.Vectorizable) {
          EXPECT_GT(Plan.Vector, 1) << What;
        }
      }
}

TEST(DataMovementGpuTest, TransposesWithCastsSlotsAndMisalignment) {
  STRIDER_SKIP_WITHOUT_TARGET();
  const Dims Shape = {2, 32, 8, 8};
  for (DType XT : AllTypes)
    for (DType YT : AllTypes) {
      if (XT == YT)
        continue;
      CopyCase C;
      C.Params = makeParams(Shape, getDenseStrides(Shape, NCHW),
                            getDenseStrides(Shape, NHWC), XT, YT);
      CopyPlan Plan = checkCopy(C, describe("casting transpose", XT, YT));
      EXPECT_EQ(Plan.Strategy, CopyStrategy::Transpose2D);
    }
  for (DType T : AllTypes) {
    // Into channels [16, 48) of an NHWC tensor of 64 channels.
    CopyCase Slot;
    Slot.Params = makeParams(Shape, getDenseStrides(Shape, NCHW),
                             getDenseStrides({2, 64, 8, 8}, NHWC), T, T);
    Slot.YPad = 16;
    CopyPlan Plan = checkCopy(Slot, describe("transpose into a slot", T, T));
    EXPECT_EQ(Plan.Strategy, CopyStrategy::Transpose2D);
    EXPECT_GT(Plan.Vector, 1);
    // A slot one element off a vector: scalar fallback at launch.
    Slot.YPad = 17;
    checkCopy(Slot, describe("transpose into a misaligned slot", T, T));
    Slot.YPad = 0;
    Slot.XPad = 3;
    checkCopy(Slot, describe("transpose from a misaligned base", T, T));
  }
  // 5D, both ways.
  const Dims Shape5 = {2, 16, 3, 4, 8};
  const Dims NCDHW = {0, 1, 2, 3, 4}, NDHWC = {0, 2, 3, 4, 1};
  for (DType T : AllTypes) {
    CopyCase C;
    C.Params = makeParams(Shape5, getDenseStrides(Shape5, NCDHW),
                          getDenseStrides(Shape5, NDHWC), T, T);
    EXPECT_EQ(checkCopy(C, describe("ncdhw>ndhwc", T, T)).Strategy,
              CopyStrategy::Transpose2D);
    C.Params = makeParams(Shape5, getDenseStrides(Shape5, NDHWC),
                          getDenseStrides(Shape5, NCDHW), T, T);
    EXPECT_EQ(checkCopy(C, describe("ndhwc>ncdhw", T, T)).Strategy,
              CopyStrategy::Transpose2D);
  }
}

TEST(DataMovementGpuTest, GenericCopies) {
  STRIDER_SKIP_WITHOUT_TARGET();
  for (DType XT : AllTypes)
    for (DType YT : AllTypes) {
      // Expand of a per-channel tensor.
      const Dims Shape = {2, 5, 3, 7};
      CopyCase Expand;
      Expand.Params =
          makeParams(Shape, {0, 1, 0, 0}, getDenseStrides(Shape, NCHW), XT, YT);
      EXPECT_EQ(checkCopy(Expand, describe("expand", XT, YT)).Strategy,
                CopyStrategy::Generic);
      // A general permutation of a 5D tensor.
      const Dims Shape5 = {3, 4, 5, 2, 6};
      CopyCase Perm;
      Perm.Params =
          makeParams(Shape5, getDenseStrides(Shape5, {4, 2, 0, 3, 1}),
                     getDenseStrides(Shape5, {1, 3, 0, 4, 2}), XT, YT);
      EXPECT_EQ(checkCopy(Perm, describe("permutation", XT, YT)).Strategy,
                CopyStrategy::Generic);
      // Every second row backwards and every third column of a 9 x 10
      // matrix.
      CopyCase Slice;
      Slice.Params = makeParams({5, 4}, {-20, 3}, {4, 1}, XT, YT);
      EXPECT_EQ(checkCopy(Slice, describe("slice", XT, YT)).Strategy,
                CopyStrategy::Generic);
      // Three channels NCHW -> NHWC.
      const Dims Image = {2, 3, 9, 11};
      CopyCase Narrow;
      Narrow.Params = makeParams(Image, getDenseStrides(Image, NCHW),
                                 getDenseStrides(Image, NHWC), XT, YT);
      EXPECT_EQ(checkCopy(Narrow, describe("narrow", XT, YT)).Strategy,
                CopyStrategy::Generic);
    }
  // A single element, and an empty copy (no launch).
  CopyCase One;
  One.Params = makeParams({1, 1}, {5, 5}, {1, 1}, DType::F16, DType::F32);
  checkCopy(One, "single element");
  CopyPlan Empty =
      planCopy(makeParams({3, 0}, {1, 1}, {1, 1}, DType::F32, DType::F32));
  EXPECT_EQ(launchers().Copy(Empty, nullptr, nullptr, nullptr), cudaSuccess);
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

TEST(DataMovementGpuTest, PadModes) {
  STRIDER_SKIP_WITHOUT_TARGET();
  const PadParams::Mode Modes[] = {PadParams::Constant, PadParams::Reflect,
                                   PadParams::Edge};
  for (DType T : AllTypes)
    for (PadParams::Mode M : Modes) {
      PadParams P;
      P.Rank = 4;
      const int64_t XShape[4] = {2, 3, 5, 6}, Begin[4] = {0, 1, 2, -1},
                    End[4] = {0, 2, 3, 1};
      for (int D = 0; D < 4; ++D) {
        P.XShape[D] = XShape[D];
        P.Begin[D] = Begin[D];
        P.YShape[D] = XShape[D] + Begin[D] + End[D];
      }
      P.PadMode = M;
      P.Value = 2.5f;
      P.Type = T;
      size_t XCount = 1, YCount = 1;
      for (int D = 0; D < 4; ++D) {
        XCount *= size_t(P.XShape[D]);
        YCount *= size_t(P.YShape[D]);
      }
      HostTensor X = makeInput(T, XCount, 11), Expected(T, YCount);
      for (size_t L = 0; L < YCount; ++L) {
        size_t Rest = L;
        int64_t XOff = 0, XStride = 1;
        bool Inside = true;
        for (int D = 3; D >= 0; --D) {
          const int64_t I = int64_t(Rest % size_t(P.YShape[D]));
          Rest /= size_t(P.YShape[D]);
          const int64_t N = P.XShape[D];
          int64_t S = I - P.Begin[D];
          if (S < 0 || S >= N) {
            if (M == PadParams::Constant)
              Inside = false;
            else if (M == PadParams::Edge)
              S = std::clamp<int64_t>(S, 0, N - 1);
            else if (N == 1)
              S = 0;
            else
              while (S < 0 || S >= N) // Mirror until inside.
                S = S < 0 ? -S : 2 * (N - 1) - S;
          }
          XOff += S * XStride;
          XStride *= N;
        }
        Expected.set(L, Inside ? X.get(size_t(XOff)) : P.Value);
      }
      HostTensor Y(T, YCount);
      DeviceBuffer DX(X.getBytes()), DY(Y.getBytes());
      DX.upload(X);
      DY.poison();
      EXPECT_EQ(launchers().Pad(P, DX.get(), DY.get(), nullptr), cudaSuccess);
      EXPECT_EQ(targetSynchronize(), cudaSuccess);
      DY.download(Y);
      expectNear(Expected, Y,
                 std::string("pad mode ") + std::to_string(int(M)) + " " +
                     getDTypeName(T));
    }
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

/// One axis of a Resize: the tables launchResize reads (as the lowering
/// builds them) and, independently, the sampling positions.
struct ResizeAxisTables {
  int Taps = 1;
  std::vector<int32_t> Index;
  std::vector<float> Weight;
};

/// half_pixel coordinates: linear interpolation (2 taps, clamped at the
/// borders) or nearest with round_prefer_floor (1 tap).
ResizeAxisTables makeAxis(int64_t In, int64_t Out, bool Linear) {
  ResizeAxisTables A;
  A.Taps = Linear ? 2 : 1;
  const double Scale = double(Out) / double(In);
  for (int64_t O = 0; O < Out; ++O) {
    const double XOri = (double(O) + 0.5) / Scale - 0.5;
    const double Floor = std::floor(XOri), Frac = XOri - Floor;
    auto clamp = [&](int64_t I) {
      return int32_t(std::min<int64_t>(std::max<int64_t>(I, 0), In - 1));
    };
    if (Linear) {
      A.Index.push_back(clamp(int64_t(Floor)));
      A.Weight.push_back(float(1 - Frac));
      A.Index.push_back(clamp(int64_t(Floor) + 1));
      A.Weight.push_back(float(Frac));
    } else {
      A.Index.push_back(clamp(int64_t(Floor) + (Frac > 0.5 ? 1 : 0)));
      A.Weight.push_back(1.0f);
    }
  }
  return A;
}

/// The input coordinate of output \p O (half_pixel) read the direct way:
/// linear blends of the clamped neighbours, nearest rounds half down.
float sampleAxis(int64_t O, int64_t In, int64_t Out, bool Linear,
                 const std::function<float(int64_t)> &At) {
  const double XOri = (double(O) + 0.5) * double(In) / double(Out) - 0.5;
  const double Clamped = std::min(std::max(XOri, 0.0), double(In - 1));
  if (!Linear) {
    const double R = std::ceil(XOri - 0.5); // Ties go down.
    return At(std::min<int64_t>(std::max<int64_t>(int64_t(R), 0), In - 1));
  }
  const int64_t I0 = int64_t(std::floor(Clamped));
  const int64_t I1 = std::min<int64_t>(I0 + 1, In - 1);
  const double F = Clamped - double(I0);
  return float((1 - F) * At(I0) + F * At(I1));
}

void checkResize2D(DType T, bool Linear, bool ChannelsLast) {
  const int64_t N = 2, C = 3, In[2] = {5, 4}, Out[2] = {8, 9};
  ResizeAxisTables Axes[2] = {makeAxis(In[0], Out[0], Linear),
                              makeAxis(In[1], Out[1], Linear)};
  const size_t XCount = size_t(N * C * In[0] * In[1]),
               YCount = size_t(N * C * Out[0] * Out[1]);
  HostTensor X = makeInput(T, XCount, 5), Expected(T, YCount);
  auto xAt = [&](int64_t Nn, int64_t Cc, int64_t H, int64_t W) {
    const int64_t Off = ChannelsLast ? ((Nn * In[0] + H) * In[1] + W) * C + Cc
                                     : ((Nn * C + Cc) * In[0] + H) * In[1] + W;
    return X.get(size_t(Off));
  };
  for (int64_t Nn = 0; Nn < N; ++Nn)
    for (int64_t Cc = 0; Cc < C; ++Cc)
      for (int64_t H = 0; H < Out[0]; ++H)
        for (int64_t W = 0; W < Out[1]; ++W) {
          const float V = sampleAxis(H, In[0], Out[0], Linear, [&](int64_t IH) {
            return sampleAxis(W, In[1], Out[1], Linear,
                              [&](int64_t IW) { return xAt(Nn, Cc, IH, IW); });
          });
          const int64_t Off = ChannelsLast
                                  ? ((Nn * Out[0] + H) * Out[1] + W) * C + Cc
                                  : ((Nn * C + Cc) * Out[0] + H) * Out[1] + W;
          Expected.set(size_t(Off), V);
        }

  DeviceBuffer DX(X.getBytes()), DY(YCount * getDTypeBytes(T));
  DeviceBuffer DIndex0(Axes[0].Index.size() * 4),
      DWeight0(Axes[0].Weight.size() * 4);
  DeviceBuffer DIndex1(Axes[1].Index.size() * 4),
      DWeight1(Axes[1].Weight.size() * 4);
  DX.upload(X);
  DY.poison();
  ASSERT_EQ(targetUpload(DIndex0.get(), Axes[0].Index.data(),
                         Axes[0].Index.size() * 4),
            cudaSuccess);
  ASSERT_EQ(targetUpload(DWeight0.get(), Axes[0].Weight.data(),
                         Axes[0].Weight.size() * 4),
            cudaSuccess);
  ASSERT_EQ(targetUpload(DIndex1.get(), Axes[1].Index.data(),
                         Axes[1].Index.size() * 4),
            cudaSuccess);
  ASSERT_EQ(targetUpload(DWeight1.get(), Axes[1].Weight.data(),
                         Axes[1].Weight.size() * 4),
            cudaSuccess);
  ResizeParams P;
  P.N = N;
  P.C = C;
  P.Spatial = 2;
  for (int A = 0; A < 2; ++A) {
    P.In[A] = In[A];
    P.Out[A] = Out[A];
    P.Taps[A] = Axes[A].Taps;
  }
  P.Index[0] = reinterpret_cast<const int32_t *>(DIndex0.get());
  P.Weight[0] = reinterpret_cast<const float *>(DWeight0.get());
  P.Index[1] = reinterpret_cast<const int32_t *>(DIndex1.get());
  P.Weight[1] = reinterpret_cast<const float *>(DWeight1.get());
  P.ChannelsLast = ChannelsLast;
  P.Type = T;
  EXPECT_EQ(launchers().Resize(P, DX.get(), DY.get(), nullptr), cudaSuccess);
  EXPECT_EQ(targetSynchronize(), cudaSuccess);
  HostTensor Y(T, YCount);
  DY.download(Y);
  expectNear(Expected, Y,
             std::string("resize ") + (Linear ? "linear " : "nearest ") +
                 (ChannelsLast ? "nhwc " : "nchw ") + getDTypeName(T));
}

TEST(DataMovementGpuTest, Resize2D) {
  STRIDER_SKIP_WITHOUT_TARGET();
  for (DType T : AllTypes)
    for (bool Linear : {false, true})
      for (bool ChannelsLast : {false, true})
        checkResize2D(T, Linear, ChannelsLast);
}

//===----------------------------------------------------------------------===//
// Bandwidth (the GPU only: host times say nothing)
//===----------------------------------------------------------------------===//

#ifndef STRIDER_KERNEL_TESTS_ON_HOST

/// Median of \p Runs timings of \p F on \p S, in milliseconds.
template <typename Fn> float getMedianMs(cudaStream_t S, int Runs, Fn &&F) {
  cudaEvent_t Start, Stop;
  EXPECT_EQ(cudaEventCreate(&Start), cudaSuccess);
  EXPECT_EQ(cudaEventCreate(&Stop), cudaSuccess);
  for (int I = 0; I < 3; ++I) // Warm up.
    F();
  std::vector<float> Ms;
  for (int I = 0; I < Runs; ++I) {
    EXPECT_EQ(cudaEventRecord(Start, S), cudaSuccess);
    F();
    EXPECT_EQ(cudaEventRecord(Stop, S), cudaSuccess);
    EXPECT_EQ(cudaEventSynchronize(Stop), cudaSuccess);
    float T = 0;
    EXPECT_EQ(cudaEventElapsedTime(&T, Start, Stop), cudaSuccess);
    Ms.push_back(T);
  }
  (void)cudaEventDestroy(Start);
  (void)cudaEventDestroy(Stop);
  std::sort(Ms.begin(), Ms.end());
  return Ms[Ms.size() / 2];
}

/// Times the relayout of \p Shape from \p From to \p To order against a
/// device-to-device memcpy of the same bytes, prints the ratio of their
/// bandwidths and expects at least 80% of memcpy's; spot-checks the
/// result.
void checkRelayoutBandwidth(const Dims &Shape, const Dims &From, const Dims &To,
                            DType T, const char *Name) {
  const CopyParams Params = makeParams(Shape, getDenseStrides(Shape, From),
                                       getDenseStrides(Shape, To), T, T);
  const CopyPlan Plan = planCopy(Params);
  EXPECT_EQ(Plan.Strategy, CopyStrategy::Transpose2D);
  EXPECT_GT(Plan.Vector, 1);
  int64_t Count = 1;
  for (int64_t S : Shape)
    Count *= S;
  const size_t Bytes = size_t(Count) * getDTypeBytes(T);
  HostTensor X = makeInput(T, size_t(Count), 3);
  DeviceBuffer DX(Bytes), DY(Bytes);
  DX.upload(X);
  cudaStream_t S;
  ASSERT_EQ(cudaStreamCreate(&S), cudaSuccess);
  const float CopyMs = getMedianMs(S, 20, [&] {
    EXPECT_EQ(
        cudaMemcpyAsync(DY.get(), DX.get(), Bytes, cudaMemcpyDeviceToDevice, S),
        cudaSuccess);
  });
  const float RelayoutMs = getMedianMs(S, 20, [&] {
    EXPECT_EQ(launchers().Copy(Plan, DX.get(), DY.get(), S), cudaSuccess);
  });
  ASSERT_EQ(cudaStreamSynchronize(S), cudaSuccess);
  (void)cudaStreamDestroy(S);
  const double Ratio = double(CopyMs) / double(RelayoutMs);
  std::string ShapeText;
  for (int64_t D : Shape)
    ShapeText += (ShapeText.empty() ? "" : "x") + std::to_string(D);
  std::printf("relayout-bandwidth: %s %s ratio=%.3f (%s: relayout %.3f ms, "
              "memcpy %.3f ms, %.0f GB/s moved by the relayout)\n",
              ShapeText.c_str(), getDTypeName(T), Ratio, Name, RelayoutMs,
              CopyMs, 2.0 * double(Bytes) / (double(RelayoutMs) * 1e6));
  std::fflush(stdout);
  EXPECT_GE(Ratio, 0.8) << ShapeText << " " << getDTypeName(T) << " " << Name;

  // Spot-check the result at random elements.
  HostTensor Y(T, size_t(Count));
  DY.download(Y);
  std::mt19937_64 Gen(9);
  std::uniform_int_distribution<int64_t> Pick(0, Count - 1);
  for (int K = 0; K < 10000; ++K) {
    int64_t Rest = Pick(Gen), XOff = 0, YOff = 0;
    for (int D = Params.Rank - 1; D >= 0; --D) {
      const int64_t I = Rest % Params.Shape[D];
      Rest /= Params.Shape[D];
      XOff += I * Params.XStrides[D];
      YOff += I * Params.YStrides[D];
    }
    if (Y.get(size_t(YOff)) != X.get(size_t(XOff))) {
      ADD_FAILURE() << "relayout result differs at Y element " << YOff;
      break;
    }
  }
}

TEST(RelayoutBandwidth, NCHWToNHWCF32) {
  STRIDER_SKIP_WITHOUT_DEVICE();
  checkRelayoutBandwidth({32, 256, 56, 56}, NCHW, NHWC, DType::F32,
                         "nchw>nhwc");
}

TEST(RelayoutBandwidth, NCHWToNHWCF16) {
  STRIDER_SKIP_WITHOUT_DEVICE();
  checkRelayoutBandwidth({32, 256, 56, 56}, NCHW, NHWC, DType::F16,
                         "nchw>nhwc");
}

TEST(RelayoutBandwidth, NHWCToNCHWF32) {
  STRIDER_SKIP_WITHOUT_DEVICE();
  checkRelayoutBandwidth({32, 256, 56, 56}, NHWC, NCHW, DType::F32,
                         "nhwc>nchw");
}
#endif // STRIDER_KERNEL_TESTS_ON_HOST

} // namespace
