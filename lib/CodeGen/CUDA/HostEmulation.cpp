//===- HostEmulation.cpp - A plan run on the host, step by step -----------===//
//
// emulateOnHost runs a plan without a GPU: one arena of host memory laid
// out as the device's (activations at the planned offsets, constants in
// their uploaded form), every step in program order through a host model
// of its kernel or library call. The models use the per-element code the
// kernels themselves run where DeviceMath.h and DataMovementIndexing.h
// hold it (the typed kernel, the recurrent cells, activations, binary ops,
// pooling windows, reductions, pad and resize indexing); convolutions and
// GEMMs are plain loops over their descriptors (what cuDNN and cuBLASLt
// compute), the rest loops that mirror their kernels. Storage types are
// converted as the device does (f16 and bf16 rounded to nearest even);
// arithmetic is in f32 or wider.
//
// What this checks: every decision of the planner (steps, buffers and
// their places in the arena, strides, layouts, epilogues, weights and
// tables). In EmulationMode::DeviceCode the kernel steps run the kernels'
// own code instead of the models (OnHost/: the .cu files compiled for the
// host), which checks their indexing, tiling, vectorized paths and
// barriers too. What neither can check: races between threads and the
// libraries' behaviour.
//
//===----------------------------------------------------------------------===//

#include "DataMovementIndexing.h"
#include "DeviceMath.h"
#include "OnHost/OnHost.h"
#include "PlanImpl.h"

#include "strider/Runtime/Tensor.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace strider;
using namespace strider::cuda;

namespace {

ScalarType toScalar(DType T) {
  return T == DType::F16    ? ScalarType::F16
         : T == DType::BF16 ? ScalarType::BF16
                            : ScalarType::F32;
}

/// Element \p I of \p Base (of storage type \p T) as a float, and back.
float load(DType T, const void *Base, int64_t I) {
  return float(loadDouble(toScalar(T), Base, I));
}
void store(DType T, void *Base, int64_t I, float V) {
  storeScalar(toScalar(T), Base, I, double(V), 0, false);
}

class Emulator {
public:
  Emulator(const PlanImpl &P) : P(P), Arena(size_t(P.ArenaBytes), 0xFF) {
    // Poisoned (NaN in every float): a step that reads what no step
    // wrote shows.
    Constants.resize(P.Buffers.size());
    for (size_t B = 0; B < P.Buffers.size(); ++B)
      if (P.Buffers[B].IsConstant && P.Buffers[B].Data)
        Constants[B] = *P.Buffers[B].Data;
  }

  uint8_t *ptr(const Arg &A) {
    if (A.Buffer < 0)
      return nullptr;
    const size_t B = size_t(A.Buffer);
    uint8_t *Base = P.Buffers[B].IsConstant ? Constants[B].data()
                                            : Arena.data() + P.Offsets[B];
    return Base + A.Offset;
  }
  float *f32(const Arg &A) { return reinterpret_cast<float *>(ptr(A)); }

  void run(const PlanStep &S);
  /// Kernel step \p S through its device code compiled for the host.
  llvm::Error runDeviceCode(const PlanStep &S);
  /// Non-finite values among what step \p S wrote to its result (of a
  /// float type), and how many values that is.
  std::pair<int64_t, int64_t> countNonFinite(const PlanStep &S);
  RunError Reported;

private:
  void copy(const CopyPlan &C, const PlanStep &S);
  void pad(const PadParams &Q, const PlanStep &S);
  void resize(const ResizeParams &Q, const PlanStep &S);
  void elementwise(const ElementwiseParams &E, const PlanStep &S);
  void typed(const TypedParams &T, const PlanStep &S);
  void epilogue(const EpilogueParams &E, const PlanStep &S);
  void pool(const PoolParams &Q, const PlanStep &S);
  void reduce(const ReduceParams &R, const PlanStep &S);
  void softmax(const SoftmaxParams &Q, const PlanStep &S);
  void norm(const NormParams &Q, const PlanStep &S);
  void batchStats(const BatchStatsParams &Q, const PlanStep &S);
  void lrn(const LrnParams &Q, const PlanStep &S);
  void conv(const ConvStep &C, const PlanStep &S);
  void gemm(const GemmStep &G, const PlanStep &S);

  const PlanImpl &P;
  std::vector<uint8_t> Arena;
  std::vector<std::vector<uint8_t>> Constants;
};

void Emulator::copy(const CopyPlan &C, const PlanStep &S) {
  const CopyParams &Q = C.Params;
  const uint8_t *X = ptr(S.Args[0]);
  uint8_t *Y = ptr(S.Args[1]);
  int64_t Count = 1;
  for (int D = 0; D < Q.Rank; ++D)
    Count *= Q.Shape[D];
  for (int64_t I = 0; I < Count; ++I) {
    int64_t XO, YO;
    getStridedOffsets<uint64_t>(I, Q.Rank, Q.Shape, Q.XStrides, Q.YStrides, XO,
                                YO);
    store(Q.YType, Y, YO, load(Q.XType, X, XO));
  }
}

void Emulator::pad(const PadParams &Q, const PlanStep &S) {
  const uint8_t *X = ptr(S.Args[0]);
  uint8_t *Y = ptr(S.Args[1]);
  int64_t XStr[MaxRank], Count = 1, Str = 1;
  for (int D = Q.Rank - 1; D >= 0; --D) {
    XStr[D] = Str;
    Str *= Q.XShape[D];
    Count *= Q.YShape[D];
  }
  for (int64_t I = 0; I < Count; ++I) {
    const int64_t From = getPadSourceOffset(Q.Rank, Q.YShape, Q.Begin, Q.XShape,
                                            XStr, Q.PadMode, I);
    store(Q.Type, Y, I, From >= 0 ? load(Q.Type, X, From) : Q.Value);
  }
}

void Emulator::resize(const ResizeParams &Given, const PlanStep &S) {
  const uint8_t *X = ptr(S.Args[0]);
  uint8_t *Y = ptr(S.Args[1]);
  ResizeParams Q = Given;
  for (int A = 0; A < Q.Spatial; ++A) {
    Q.Index[A] =
        reinterpret_cast<const int32_t *>(ptr(S.Args[2 + 2 * size_t(A)]));
    Q.Weight[A] = f32(S.Args[3 + 2 * size_t(A)]);
  }
  const int32_t *const *Index = Q.Index;
  const float *const *Weight = Q.Weight;
  const ResizeInputStrides XS = getResizeInputStrides(Q);
  int64_t Count = Q.N * Q.C;
  for (int A = 0; A < Q.Spatial; ++A)
    Count *= Q.Out[A];
  for (int64_t I = 0; I < Count; ++I) {
    int64_t N, C, O[3];
    getResizeOutputIndex(Q, I, N, C, O);
    if (isResizeExtrapolated(Q, O)) {
      store(Q.Type, Y, I, Q.Extrapolation);
      continue;
    }
    // Each axis's taps; axes past Spatial have the one tap 1 at 0.
    auto Taps = [&](int A) { return A < Q.Spatial ? Q.Taps[A] : 1; };
    auto Tap = [&](int A, int K, float &W, int64_t &At) {
      if (A >= Q.Spatial) {
        W = 1.0f;
        At = 0;
        return;
      }
      const int64_t E = O[A] * Q.Taps[A] + K;
      W = Weight[A][E];
      At = Index[A][E];
    };
    float Acc = 0.0f;
    for (int K0 = 0; K0 < Taps(0); ++K0)
      for (int K1 = 0; K1 < Taps(1); ++K1)
        for (int K2 = 0; K2 < Taps(2); ++K2) {
          float W0, W1, W2;
          int64_t I0, I1, I2;
          Tap(0, K0, W0, I0);
          Tap(1, K1, W1, I1);
          Tap(2, K2, W2, I2);
          if (W0 == 0.0f || W1 == 0.0f || W2 == 0.0f)
            continue;
          Acc += W0 * W1 * W2 *
                 load(Q.Type, X,
                      N * XS.Batch + C * XS.Channel + I0 * XS.Spatial[0] +
                          I1 * XS.Spatial[1] + I2 * XS.Spatial[2]);
        }
    store(Q.Type, Y, I, Acc);
  }
}

void Emulator::elementwise(const ElementwiseParams &E, const PlanStep &S) {
  const uint8_t *A = ptr(S.Args[0]), *B = ptr(S.Args[1]);
  uint8_t *Y = ptr(S.Args[2]);
  int64_t Count = 1;
  for (int D = 0; D < E.Rank; ++D)
    Count *= E.Shape[D];
  for (int64_t I = 0; I < Count; ++I) {
    int64_t Rest = I, AO = 0, BO = 0;
    for (int D = E.Rank - 1; D >= 0; --D) {
      const int64_t At = Rest % E.Shape[D];
      Rest /= E.Shape[D];
      AO += At * E.AStrides[D];
      BO += At * E.BStrides[D];
    }
    float V = load(E.AType, A, AO);
    if (E.Op != BinaryOp::None)
      V = applyBinary(E.Op, V, load(E.BType, B, BO));
    store(E.YType, Y, I, applyActivation(E.Act, V));
  }
}

void Emulator::typed(const TypedParams &T, const PlanStep &S) {
  const void *Ins[3];
  for (size_t K = 0; K < 3; ++K)
    Ins[K] = ptr(S.Args[K]);
  void *Y = ptr(S.Args[3]);
  void *Y2 = S.Args.size() > 4 ? ptr(S.Args[4]) : nullptr;
  int64_t Count = 1;
  for (int D = 0; D < T.Rank; ++D)
    Count *= T.Shape[D];
  if (Count && useArgRowBlocks(T)) {
    // argRowsKernel's model: ArgRowThreads strided passes, then the tree.
    const int64_t Len = T.Shape[T.Axis], Stride = T.Strides[0][T.Axis];
    for (int64_t Row = 0; Row < getRowCount(T); ++Row) {
      int64_t Off[3];
      getRowOffsets(T, Row, Off);
      double Best[ArgRowThreads];
      int64_t At[ArgRowThreads];
      for (int Th = 0; Th < ArgRowThreads; ++Th) {
        Best[Th] = 0;
        At[Th] = -1;
        for (int64_t J = Th; J < Len; J += ArgRowThreads) {
          const double V = loadDouble(T.In[0], Ins[0], Off[0] + J * Stride);
          if (argTakes(T, V, J, Best[Th], At[Th])) {
            Best[Th] = V;
            At[Th] = J;
          }
        }
      }
      for (int Half = ArgRowThreads / 2; Half > 0; Half /= 2)
        for (int Th = 0; Th < Half; ++Th)
          if (argTakes(T, Best[Th + Half], At[Th + Half], Best[Th], At[Th])) {
            Best[Th] = Best[Th + Half];
            At[Th] = At[Th + Half];
          }
      storeScalar(T.Y, Y, Off[2], 0.0,
                  getArgRowResult(loadDouble(T.In[0], Ins[0], Off[0]), At[0]),
                  true);
    }
    return;
  }
  if (Count && useTopKRanks(T)) {
    // topKRankKernel's model: each element stored at its rank, if below K.
    for (int64_t Row = 0; Row < getRowCount(T); ++Row) {
      int64_t Off[3];
      getRowOffsets(T, Row, Off);
      for (int64_t I = 0; I < T.Shape[T.Axis]; ++I)
        if (const int64_t Rank = getTopKRank(T, Ins[0], Off, I); Rank < T.K)
          storeTopKSlot(T, Ins[0], Y, Y2, Off, Rank, I);
    }
    return;
  }
  if (isRowOp(T.Op)) {
    for (int64_t Row = 0; Count && Row < getRowCount(T); ++Row)
      evalTypedRow(T, Ins, Y, Y2, Row, &Reported);
    return;
  }
  for (int64_t I = 0; I < Count; ++I)
    evalTyped(T, Ins, Y, I, &Reported);
}

void Emulator::epilogue(const EpilogueParams &E, const PlanStep &S) {
  const uint8_t *X = ptr(S.Args[0]), *R = ptr(S.Args[3]);
  const float *Scale = f32(S.Args[1]), *Bias = f32(S.Args[2]);
  uint8_t *Y = ptr(S.Args[4]);
  for (int64_t I = 0; I < E.Count; ++I) {
    const int64_t C = (I / E.ChannelStride) % E.Channels;
    float V = load(E.XType, X, I);
    if (Scale)
      V *= Scale[C];
    if (Bias)
      V += Bias[C];
    if (R)
      V += load(E.ResidualType, R, I);
    store(E.YType, Y, I, applyActivation(E.Act, V));
  }
}

void Emulator::pool(const PoolParams &Given, const PlanStep &S) {
  const PoolParams Q = normalizePool(Given);
  const uint8_t *X = ptr(S.Args[0]);
  uint8_t *Y = ptr(S.Args[1]);
  auto *Indices =
      S.Args.size() > 2 ? reinterpret_cast<int64_t *>(ptr(S.Args[2])) : nullptr;
  const int64_t Count = Q.N * Q.C * Q.Out[0] * Q.Out[1] * Q.Out[2];
  for (int64_t I = 0; I < Count; ++I) {
    const PoolResult R = evalPool(
        Q, I, [&](int64_t Off) { return float(loadDouble(Q.Type, X, Off)); });
    storeScalar(Q.Type, Y, I, R.Value, 0, false);
    if (Indices)
      Indices[I] = R.Index;
  }
}

void Emulator::reduce(const ReduceParams &R, const PlanStep &S) {
  const uint8_t *X = ptr(S.Args[0]);
  uint8_t *Y = ptr(S.Args[1]);
  for (int64_t O = 0; O < R.Outer; ++O)
    for (int64_t I = 0; I < R.Inner; ++I) {
      float Acc = getReduceInit(R.Op);
      for (int64_t K = 0; K < R.Reduced; ++K)
        Acc = combineReduce(
            R.Op, Acc,
            mapReduce(R.Op,
                      load(R.XType, X, (O * R.Reduced + K) * R.Inner + I)));
      store(R.YType, Y, O * R.Inner + I, finishReduce(R.Op, Acc, R.Reduced));
    }
}

void Emulator::softmax(const SoftmaxParams &Q, const PlanStep &S) {
  const uint8_t *X = ptr(S.Args[0]);
  uint8_t *Y = ptr(S.Args[1]);
  for (int64_t O = 0; O < Q.Outer; ++O)
    for (int64_t I = 0; I < Q.Inner; ++I) {
      auto At = [&](int64_t K) { return (O * Q.Axis + K) * Q.Inner + I; };
      float Max = -INFINITY, Sum = 0.0f;
      for (int64_t K = 0; K < Q.Axis; ++K)
        Max = fmaxf(Max, load(Q.XType, X, At(K)));
      for (int64_t K = 0; K < Q.Axis; ++K)
        Sum += expf(load(Q.XType, X, At(K)) - Max);
      const float LogSum = logf(Sum);
      for (int64_t K = 0; K < Q.Axis; ++K) {
        const float D = load(Q.XType, X, At(K)) - Max;
        store(Q.YType, Y, At(K), Q.Log ? D - LogSum : expf(D) / Sum);
      }
    }
}

void Emulator::batchStats(const BatchStatsParams &Q, const PlanStep &S) {
  const uint8_t *X = ptr(S.Args[0]);
  auto F = [&](size_t K) { return f32(S.Args[K]); };
  const int64_t Count = Q.N * Q.Pixels;
  for (int64_t C = 0; C < Q.C; ++C) {
    double Sum = 0.0, Squares = 0.0;
    for (int64_t K = 0; K < Count; ++K)
      Sum += load(Q.Type, X, getBatchStatsOffset(Q, C, K));
    const double Mean = Sum / double(Count);
    for (int64_t K = 0; K < Count; ++K) {
      const double D = load(Q.Type, X, getBatchStatsOffset(Q, C, K)) - Mean;
      Squares += D * D;
    }
    finishBatchStats(Q, C, Mean, Squares / double(Count), F(1), F(2), F(3),
                     F(4), F(5), F(6), F(7), F(8));
  }
}

void Emulator::norm(const NormParams &Q, const PlanStep &S) {
  const uint8_t *X = ptr(S.Args[0]);
  const float *Scale = f32(S.Args[1]), *Bias = f32(S.Args[2]);
  uint8_t *Y = ptr(S.Args[3]);
  float *Mean = S.Args.size() > 4 ? f32(S.Args[4]) : nullptr;
  float *Inv = S.Args.size() > 5 ? f32(S.Args[5]) : nullptr;
  for (int64_t O = 0; O < Q.Outer; ++O)
    for (int64_t I = 0; I < Q.Inner; ++I) {
      auto At = [&](int64_t R) { return (O * Q.Reduced + R) * Q.Inner + I; };
      double Sum = 0, Sq = 0;
      for (int64_t R = 0; R < Q.Reduced; ++R)
        Sum += load(Q.XType, X, At(R));
      const double M = Sum / double(Q.Reduced);
      for (int64_t R = 0; R < Q.Reduced; ++R) {
        const double D = load(Q.XType, X, At(R)) - M;
        Sq += D * D;
      }
      const double IS = 1.0 / std::sqrt(Sq / double(Q.Reduced) + Q.Epsilon);
      if (Mean)
        Mean[O * Q.Inner + I] = float(M);
      if (Inv)
        Inv[O * Q.Inner + I] = float(IS);
      for (int64_t R = 0; R < Q.Reduced; ++R) {
        const int64_t K = getAffineIndex(Q.Affine, Q.Channels, O, R, I);
        double V = (load(Q.XType, X, At(R)) - M) * IS;
        if (Scale)
          V *= Scale[K];
        if (Bias)
          V += Bias[K];
        store(Q.YType, Y, At(R), applyActivation(Q.Act, float(V)));
      }
    }
}

void Emulator::lrn(const LrnParams &Q, const PlanStep &S) {
  const uint8_t *X = ptr(S.Args[0]);
  uint8_t *Y = ptr(S.Args[1]);
  for (int64_t O = 0; O < Q.Outer; ++O)
    for (int64_t C = 0; C < Q.Len; ++C)
      for (int64_t I = 0; I < Q.Inner; ++I) {
        const LrnWindow W = getLrnWindow(Q, C);
        float Sum = 0.0f;
        for (int64_t K = W.Lo; K < W.Hi; ++K) {
          const float V = load(Q.Type, X, (O * Q.Len + K) * Q.Inner + I);
          Sum += V * V;
        }
        const int64_t At = (O * Q.Len + C) * Q.Inner + I;
        store(Q.Type, Y, At, lrnScale(Q, load(Q.Type, X, At), Sum));
      }
}

void Emulator::conv(const ConvStep &C, const PlanStep &S) {
  const ConvDesc &D = C.Desc;
  const uint8_t *X = ptr(S.Args[0]), *Res = ptr(S.Args[1]);
  uint8_t *Y = ptr(S.Args[2]);
  const std::vector<float> &W = *C.Weights;
  const float *Bias =
      C.Bias && !C.Bias->empty() ? C.Bias->data() : f32(S.Args[3]);
  // Three spatial dims, unused ones of size 1 (1D and 2D convs).
  int64_t In[3], Out[3], F[3], St[3], Di[3], Pb[3];
  for (int A = 0; A < 3; ++A) {
    const int Src = A - (3 - D.Spatial);
    const bool Real = Src >= 0;
    In[A] = Real ? D.In[Src] : 1;
    Out[A] = Real ? D.Out[Src] : 1;
    F[A] = Real ? D.Filter[Src] : 1;
    St[A] = Real ? D.Stride[Src] : 1;
    Di[A] = Real ? D.Dilation[Src] : 1;
    Pb[A] = Real ? D.PadBegin[Src] : 0;
  }
  // Offsets of (n, c, d, h, w) in a tensor of \p Ch channels.
  auto Offset = [](bool Last, int64_t Ch, const int64_t *Size, int64_t N,
                   int64_t Cc, const int64_t *P) {
    const int64_t Pix = (P[0] * Size[1] + P[1]) * Size[2] + P[2];
    const int64_t Pixels = Size[0] * Size[1] * Size[2];
    return Last ? (N * Pixels + Pix) * Ch + Cc : (N * Ch + Cc) * Pixels + Pix;
  };
  const int64_t G = D.Groups, Cg = D.C / G, Kg = D.K / G;
  const int64_t Taps = F[0] * F[1] * F[2];
  std::vector<double> Acc(size_t(D.N * D.K * Out[0] * Out[1] * Out[2]), 0.0);
  auto AccAt = [&](int64_t N, int64_t K, const int64_t *P) -> double & {
    return Acc[size_t(Offset(false, D.K, Out, N, K, P))];
  };
  for (int64_t N = 0; N < D.N; ++N)
    for (int64_t Gi = 0; Gi < G; ++Gi)
      for (int64_t Ci = 0; Ci < Cg; ++Ci)
        for (int64_t Ki = 0; Ki < Kg; ++Ki)
          for (int64_t T = 0; T < Taps; ++T) {
            const int64_t R[3] = {T / (F[1] * F[2]), T / F[2] % F[1], T % F[2]};
            // Forward: W is [K, C/G, taps]; ConvTranspose: [C, K/G, taps].
            const float Wt =
                D.Transposed ? W[size_t(((Gi * Cg + Ci) * Kg + Ki) * Taps + T)]
                             : W[size_t(((Gi * Kg + Ki) * Cg + Ci) * Taps + T)];
            // Pixel S of the strided side (forward: the output; ConvTranspose,
            // which scatters every input pixel through every tap: the input)
            // meets pixel S * stride - pad + tap * dilation of the other.
            const int64_t *SSize = D.Transposed ? In : Out;
            const int64_t *USize = D.Transposed ? Out : In;
            int64_t SP[3];
            for (SP[0] = 0; SP[0] < SSize[0]; ++SP[0])
              for (SP[1] = 0; SP[1] < SSize[1]; ++SP[1])
                for (SP[2] = 0; SP[2] < SSize[2]; ++SP[2]) {
                  int64_t UP[3];
                  bool Inside = true;
                  for (int A = 0; A < 3; ++A) {
                    UP[A] = SP[A] * St[A] - Pb[A] + R[A] * Di[A];
                    Inside &= UP[A] >= 0 && UP[A] < USize[A];
                  }
                  if (!Inside)
                    continue;
                  const int64_t *P = D.Transposed ? SP : UP;
                  const int64_t *O = D.Transposed ? UP : SP;
                  AccAt(N, Gi * Kg + Ki, O) +=
                      double(Wt) * load(D.Type, X,
                                        Offset(D.XChannelsLast, D.C, In, N,
                                               Gi * Cg + Ci, P));
                }
          }
  int64_t O[3];
  for (int64_t N = 0; N < D.N; ++N)
    for (int64_t K = 0; K < D.K; ++K)
      for (O[0] = 0; O[0] < Out[0]; ++O[0])
        for (O[1] = 0; O[1] < Out[1]; ++O[1])
          for (O[2] = 0; O[2] < Out[2]; ++O[2]) {
            const int64_t At = Offset(D.YChannelsLast, D.K, Out, N, K, O);
            float V = float(AccAt(N, K, O));
            if (D.Epilogue.Bias && Bias)
              V += Bias[K];
            if (D.Epilogue.Residual && Res)
              V += load(D.Type, Res, At);
            store(D.Type, Y, At, applyActivation(D.Epilogue.Act, V));
          }
}

void Emulator::gemm(const GemmStep &G, const PlanStep &S) {
  const GemmDesc &D = G.Desc;
  const uint8_t *A = ptr(S.Args[0]), *B = ptr(S.Args[1]);
  uint8_t *Y = ptr(S.Args[2]);
  const float *Bias =
      G.Bias && !G.Bias->empty() ? G.Bias->data() : f32(S.Args[3]);
  for (int64_t Bt = 0; Bt < D.Batch; ++Bt) {
    const int64_t AO = Bt * D.BatchStrideA, BO = Bt * D.BatchStrideB,
                  YO = Bt * D.BatchStrideY;
    for (int64_t M = 0; M < D.M; ++M)
      for (int64_t N = 0; N < D.N; ++N) {
        double Sum = 0;
        for (int64_t K = 0; K < D.K; ++K) {
          const int64_t AI = AO + (D.TransA ? K * D.M + M : M * D.K + K);
          const int64_t BI = BO + (D.TransB ? N * D.K + K : K * D.N + N);
          const float BV = G.B ? (*G.B)[size_t(BI)] : load(D.Type, B, BI);
          Sum += double(load(D.Type, A, AI)) * BV;
        }
        float V = float(D.Alpha * Sum);
        if (D.Epilogue.Bias && Bias)
          V += Bias[N];
        store(D.Type, Y, YO + M * D.N + N, applyActivation(D.Epilogue.Act, V));
      }
  }
}

void Emulator::run(const PlanStep &S) {
  std::visit(
      [&](const auto &Q) {
        using T = std::decay_t<decltype(Q)>;
        if constexpr (std::is_same_v<T, CopyPlan>)
          copy(Q, S);
        else if constexpr (std::is_same_v<T, PadParams>)
          pad(Q, S);
        else if constexpr (std::is_same_v<T, ResizeParams>)
          resize(Q, S);
        else if constexpr (std::is_same_v<T, ElementwiseParams>)
          elementwise(Q, S);
        else if constexpr (std::is_same_v<T, TypedParams>)
          typed(Q, S);
        else if constexpr (std::is_same_v<T, EpilogueParams>)
          epilogue(Q, S);
        else if constexpr (std::is_same_v<T, PoolParams>)
          pool(Q, S);
        else if constexpr (std::is_same_v<T, ReduceParams>)
          reduce(Q, S);
        else if constexpr (std::is_same_v<T, SoftmaxParams>)
          softmax(Q, S);
        else if constexpr (std::is_same_v<T, NormParams>)
          norm(Q, S);
        else if constexpr (std::is_same_v<T, BatchStatsParams>)
          batchStats(Q, S);
        else if constexpr (std::is_same_v<T, LrnParams>)
          lrn(Q, S);
        else if constexpr (std::is_same_v<T, LstmCellParams>) {
          for (int64_t I = 0; I < Q.Batch * Q.Hidden; ++I)
            evalLstmCell(Q, f32(S.Args[0]), f32(S.Args[1]), f32(S.Args[2]),
                         f32(S.Args[3]), f32(S.Args[4]), f32(S.Args[5]),
                         ptr(S.Args[6]), &Reported, I);
        } else if constexpr (std::is_same_v<T, GruCellParams>) {
          for (int64_t I = 0; I < Q.Batch * Q.Hidden; ++I)
            evalGruCell(Q, f32(S.Args[0]), f32(S.Args[1]), f32(S.Args[2]),
                        f32(S.Args[3]), f32(S.Args[4]), f32(S.Args[5]),
                        ptr(S.Args[6]), &Reported, I);
        } else if constexpr (std::is_same_v<T, RecurrenceLoopParams>) {
          evalRecurrenceLoop(Q, f32(S.Args[0]), f32(S.Args[1]), f32(S.Args[2]),
                             f32(S.Args[3]), f32(S.Args[4]), f32(S.Args[5]),
                             f32(S.Args[6]), f32(S.Args[7]), f32(S.Args[8]),
                             f32(S.Args[9]), f32(S.Args[10]), ptr(S.Args[11]),
                             &Reported, 0, 1, [] {});
        } else if constexpr (std::is_same_v<T, ConvStep>)
          conv(Q, S);
        else {
          static_assert(std::is_same_v<T, GemmStep>, "a step kind is missing");
          gemm(Q, S);
        }
      },
      S.Params);
}

llvm::Error Emulator::runDeviceCode(const PlanStep &S) {
  const cudaError_t Code = launchKernelStep(
      onhost::getLaunchers(), S,
      [&](size_t K) -> void * { return ptr(S.Args[K]); }, &Reported, nullptr);
  if (Code == cudaSuccess)
    return llvm::Error::success();
  const std::string &Why = onhost::getLaunchError();
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "step '" + S.Info.Nodes + "' (" + S.Info.Kernel + "): the launch fails" +
          (Why.empty() ? " (cudaError " + std::to_string(int(Code)) + ")"
                       : ": " + Why));
}

} // namespace

std::pair<int64_t, int64_t> Emulator::countNonFinite(const PlanStep &S) {
  // The result argument and its storage type, for the float steps.
  llvm::Optional<std::pair<Arg, DType>> Result = std::visit(
      [&](const auto &Q) -> llvm::Optional<std::pair<Arg, DType>> {
        using T = std::decay_t<decltype(Q)>;
        if constexpr (std::is_same_v<T, CopyPlan>)
          return std::make_pair(S.Args[1], Q.Params.YType);
        else if constexpr (std::is_same_v<T, PadParams> ||
                           std::is_same_v<T, ResizeParams> ||
                           std::is_same_v<T, LrnParams>)
          return std::make_pair(S.Args[1], Q.Type);
        else if constexpr (std::is_same_v<T, PoolParams>) {
          DType Float;
          if (!toDType(Q.Type, Float))
            return llvm::None; // MaxPool of bytes.
          return std::make_pair(S.Args[1], Float);
        } else if constexpr (std::is_same_v<T, ReduceParams> ||
                             std::is_same_v<T, SoftmaxParams>)
          return std::make_pair(S.Args[1], Q.YType);
        else if constexpr (std::is_same_v<T, ElementwiseParams>)
          return std::make_pair(S.Args[2], Q.YType);
        else if constexpr (std::is_same_v<T, NormParams>)
          return std::make_pair(S.Args[3], Q.YType);
        else if constexpr (std::is_same_v<T, EpilogueParams>)
          return std::make_pair(S.Args[4], Q.YType);
        else if constexpr (std::is_same_v<T, ConvStep> ||
                           std::is_same_v<T, GemmStep>)
          return std::make_pair(S.Args[2], Q.Desc.Type);
        else
          return llvm::None;
      },
      S.Params);
  if (!Result || Result->first.Buffer < 0)
    return {0, 0};
  const PlanBuffer &B = P.Buffers[size_t(Result->first.Buffer)];
  const int64_t Count =
      (B.Bytes - Result->first.Offset) / int64_t(getDTypeBytes(Result->second));
  const uint8_t *Base = ptr(Result->first);
  int64_t Bad = 0;
  for (int64_t I = 0; I < Count; ++I)
    Bad += !std::isfinite(load(Result->second, Base, I));
  return {Bad, Count};
}

llvm::Expected<runtime::TensorMap>
cuda::emulateOnHost(const Plan &Pl, const runtime::TensorMap &Inputs,
                    EmulationMode Mode) {
  const PlanImpl &P = Pl.getImpl();
  Emulator E(P);
  std::vector<runtime::Tensor> Made;
  auto Bound = codegen::bindInputs(P.Inputs, Inputs, Made);
  if (!Bound)
    return Bound.takeError();
  for (size_t K = 0; K < P.Inputs.size(); ++K) {
    llvm::ArrayRef<uint8_t> Bytes = (*Bound)[K]->getBytes();
    if (!Bytes.empty())
      std::memcpy(E.ptr({P.Inputs[K].Buffer, 0}), Bytes.data(), Bytes.size());
  }
  // STRIDER_EMULATION_TRACE=1: after each step, how many of the values
  // in its result buffer are not finite (a debugging aid: the first step
  // that makes NaN or infinity; a buffer partly written by a step counts
  // the rest too).
  const bool Trace = std::getenv("STRIDER_EMULATION_TRACE") != nullptr;
  for (size_t I = 0; I < P.Steps.size(); ++I) {
    if (Mode == EmulationMode::DeviceCode && isKernelStep(P.Steps[I])) {
      if (llvm::Error Err = E.runDeviceCode(P.Steps[I]))
        return Err;
    } else {
      E.run(P.Steps[I]);
    }
    if (!Trace)
      continue;
    auto [Bad, Count] = E.countNonFinite(P.Steps[I]);
    llvm::errs() << "emulation step " << I << " '" << P.Steps[I].Info.Nodes
                 << "' (" << P.Steps[I].Info.Kernel << "): " << Bad << " of "
                 << Count << " not finite\n";
  }
  if (E.Reported.Step != -1)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   describeRunError(P, E.Reported));
  runtime::TensorMap Out;
  for (const Binding &B : P.Outputs) {
    runtime::Tensor T(B.Type.getElementType(), B.Type.getStaticShape(),
                      B.Type.getLayout());
    if (!T.getBytes().empty())
      std::memcpy(T.getMutableBytes().data(), E.ptr({B.Buffer, 0}),
                  T.getBytes().size());
    Out[B.Name] = T.withLayout(Layout());
  }
  return Out;
}
