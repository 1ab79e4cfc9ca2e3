//===- DeviceMathTest.cpp - Scalar math of the CUDA compute kernels -------===//
//
// DeviceMath.h compiled for the host: the activations against the shared
// scalar definitions (and their formulas), the binary ops, pooling window
// taps against a brute-force walk, reduction steps, the typed kernel's
// half conversions against the reference interpreter's, and the host-side
// choices (dim merging, launch shapes). No GPU needed.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"

#include "strider/Runtime/Tensor.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace strider;
using namespace strider::cuda;
using codegen::Activation;
using codegen::ActKind;

namespace {

const float Inf = std::numeric_limits<float>::infinity();
const float NaN = std::numeric_limits<float>::quiet_NaN();

Activation makeAct(ActKind K, float Alpha = 0.0f, float Beta = 0.0f) {
  Activation A;
  A.Kind = K;
  A.Alpha = Alpha;
  A.Beta = Beta;
  return A;
}

/// Typical parameters for each kind: the ops' attribute defaults (what
/// the importer sets for a node without them) and Clip's ReLU6 bounds.
Activation typicalAct(ActKind K) {
  switch (K) {
  case ActKind::Clip:
    return makeAct(K, 0.0f, 6.0f);
#define STRIDER_ACTIVATION_DEFAULTS(Kind, AlphaAttr, AlphaDefault, BetaAttr,   \
                                    BetaDefault)                               \
  case ActKind::Kind:                                                          \
    return makeAct(K, AlphaDefault, BetaDefault);
    STRIDER_ACTIVATION_ATTRS(STRIDER_ACTIVATION_DEFAULTS)
#undef STRIDER_ACTIVATION_DEFAULTS
  default:
    return makeAct(K);
  }
}

void expectSameFloat(float Expected, float Actual, const std::string &What) {
  if (std::isnan(Expected)) {
    EXPECT_TRUE(std::isnan(Actual)) << What << ": got " << Actual;
    return;
  }
  if (std::isinf(Expected)) {
    EXPECT_EQ(Expected, Actual) << What;
    return;
  }
  EXPECT_FLOAT_EQ(Expected, Actual) << What;
}

TEST(CudaDeviceMathTest, EveryActivationMatchesTheSharedDefinition) {
  const std::vector<float> Inputs = {
      -100.0f, -20.0f, -6.5f,  -3.0f, -1.0f, -0.5f, -1e-3f, 0.0f,
      -0.0f,   1e-3f,  0.25f,  0.5f,  1.0f,  2.5f,  3.0f,   6.0f,
      7.5f,    20.0f,  100.0f, Inf,   -Inf,  NaN};
  for (unsigned K = 0; K < codegen::NumActKinds; ++K) {
    const Activation A = typicalAct(ActKind(K));
    for (float X : Inputs)
      expectSameFloat(codegen::applyScalar(A, X), applyActivation(A, X),
                      std::string("kind ") + std::to_string(K) + " at " +
                          std::to_string(X));
  }
}

TEST(CudaDeviceMathTest, ActivationFormulas) {
  EXPECT_EQ(applyActivation(makeAct(ActKind::None), -2.5f), -2.5f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Relu), -2.0f), 0.0f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Relu), 2.0f), 2.0f);
  const Activation Clip = makeAct(ActKind::Clip, 0.0f, 6.0f);
  EXPECT_EQ(applyActivation(Clip, -1.0f), 0.0f);
  EXPECT_EQ(applyActivation(Clip, 3.0f), 3.0f);
  EXPECT_EQ(applyActivation(Clip, 7.0f), 6.0f);
  EXPECT_TRUE(std::isnan(applyActivation(Clip, NaN)));
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::LeakyRelu, 0.1f), -2.0f),
                  -0.2f);
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Sigmoid), 0.0f), 0.5f);
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Sigmoid), 2.0f),
                  1.0f / (1.0f + std::exp(-2.0f)));
  const Activation HardSigmoid = makeAct(ActKind::HardSigmoid, 0.2f, 0.5f);
  EXPECT_FLOAT_EQ(applyActivation(HardSigmoid, 1.0f), 0.7f);
  EXPECT_EQ(applyActivation(HardSigmoid, 5.0f), 1.0f);
  EXPECT_EQ(applyActivation(HardSigmoid, -5.0f), 0.0f);
  const Activation HardSwish = makeAct(ActKind::HardSwish);
  EXPECT_EQ(applyActivation(HardSwish, -3.0f), -0.0f);
  EXPECT_EQ(applyActivation(HardSwish, 3.0f), 3.0f);
  EXPECT_FLOAT_EQ(applyActivation(HardSwish, 1.0f), 1.0f * (1.0f / 6 + 0.5f));
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::SiLU), 1.0f), 0.7310585786f);
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Tanh), 0.5f),
                  std::tanh(0.5f));
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Elu, 2.0f), -1.0f),
                  2.0f * (std::exp(-1.0f) - 1.0f));
  EXPECT_EQ(applyActivation(makeAct(ActKind::Elu, 2.0f), 1.5f), 1.5f);
  const Activation Selu = makeAct(ActKind::Selu, 1.5f, 2.0f);
  EXPECT_FLOAT_EQ(applyActivation(Selu, -1.0f),
                  2.0f * 1.5f * (std::exp(-1.0f) - 1.0f));
  EXPECT_FLOAT_EQ(applyActivation(Selu, 1.0f), 2.0f);
  const Activation Softplus = makeAct(ActKind::Softplus);
  EXPECT_FLOAT_EQ(applyActivation(Softplus, 0.0f), std::log(2.0f));
  EXPECT_FLOAT_EQ(applyActivation(Softplus, 100.0f), 100.0f);
  EXPECT_FLOAT_EQ(applyActivation(Softplus, -100.0f), std::exp(-100.0f));
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Softsign), 1.0f), 0.5f);
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Softsign), -3.0f), -0.75f);
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Exp), 1.0f), 2.718281828f);
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Log), 2.718281828f), 1.0f);
  EXPECT_TRUE(std::isnan(applyActivation(makeAct(ActKind::Log), -1.0f)));
  EXPECT_EQ(applyActivation(makeAct(ActKind::Sqrt), 9.0f), 3.0f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Reciprocal), 4.0f), 0.25f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Reciprocal), 0.0f), Inf);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Neg), 4.0f), -4.0f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Abs), -4.0f), 4.0f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Floor), -1.5f), -2.0f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Ceil), -1.5f), -1.0f);
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Sin), 1.0f), std::sin(1.0f));
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Cos), 1.0f), std::cos(1.0f));
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Tan), 1.0f), std::tan(1.0f));
  EXPECT_TRUE(std::isnan(applyActivation(makeAct(ActKind::Asin), 1.5f)));
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Acos), 0.0f), 1.5707964f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Atanh), 1.0f), Inf);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Sign), -3.0f), -1.0f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Round), 2.5f), 2.0f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Round), -1.5f), -2.0f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::ThresholdedRelu, 1.0f), 1.0f),
            0.0f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::ThresholdedRelu, 1.0f), 1.5f),
            1.5f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Shrink, 0.5f, 0.25f), -1.0f),
            -0.75f);
  EXPECT_EQ(applyActivation(makeAct(ActKind::Shrink, 0.5f, 0.25f), 0.5f), 0.0f);
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Erf), 0.5f), 0.5204998778f);
  // GELU(1) = Phi(1) and its tanh approximation.
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Gelu), 1.0f), 0.8413447461f);
  EXPECT_NEAR(applyActivation(makeAct(ActKind::GeluTanh), 1.0f), 0.8411920f,
              1e-6);
  EXPECT_FLOAT_EQ(applyActivation(makeAct(ActKind::Gelu), -1.0f),
                  -1.0f + 0.8413447461f);
}

TEST(CudaDeviceMathTest, BinaryOps) {
  EXPECT_EQ(applyBinary(BinaryOp::None, 3.0f, 5.0f), 3.0f);
  EXPECT_EQ(applyBinary(BinaryOp::Add, 3.0f, 5.0f), 8.0f);
  EXPECT_EQ(applyBinary(BinaryOp::Sub, 3.0f, 5.0f), -2.0f);
  EXPECT_EQ(applyBinary(BinaryOp::Mul, 3.0f, 5.0f), 15.0f);
  EXPECT_EQ(applyBinary(BinaryOp::Div, 3.0f, 4.0f), 0.75f);
  EXPECT_EQ(applyBinary(BinaryOp::Div, 1.0f, 0.0f), Inf);
  EXPECT_EQ(applyBinary(BinaryOp::Div, -1.0f, 0.0f), -Inf);
  EXPECT_TRUE(std::isnan(applyBinary(BinaryOp::Div, 0.0f, 0.0f)));
  // Pow as C's powf: odd integer exponents keep the sign, fractional ones
  // of a negative base are NaN, x^0 = 1.
  EXPECT_EQ(applyBinary(BinaryOp::Pow, 2.0f, 3.0f), 8.0f);
  EXPECT_EQ(applyBinary(BinaryOp::Pow, -2.0f, 3.0f), -8.0f);
  EXPECT_EQ(applyBinary(BinaryOp::Pow, -2.0f, 2.0f), 4.0f);
  EXPECT_FLOAT_EQ(applyBinary(BinaryOp::Pow, 4.0f, 0.5f), 2.0f);
  EXPECT_FLOAT_EQ(applyBinary(BinaryOp::Pow, 2.0f, -2.0f), 0.25f);
  EXPECT_TRUE(std::isnan(applyBinary(BinaryOp::Pow, -2.0f, 0.5f)));
  EXPECT_EQ(applyBinary(BinaryOp::Pow, NaN, 0.0f), 1.0f);
  EXPECT_EQ(applyBinary(BinaryOp::Pow, 0.0f, -1.0f), Inf);
  for (float A : {-3.0f, -0.5f, 0.0f, 1.5f, 7.0f})
    for (float B : {-2.0f, 0.0f, 1.0f, 2.0f, 3.0f})
      EXPECT_EQ(applyBinary(BinaryOp::Pow, A, B), std::pow(A, B))
          << A << "^" << B;
  EXPECT_EQ(applyBinary(BinaryOp::Max, 3.0f, 5.0f), 5.0f);
  EXPECT_EQ(applyBinary(BinaryOp::Max, 5.0f, 3.0f), 5.0f);
  EXPECT_EQ(applyBinary(BinaryOp::Min, 3.0f, 5.0f), 3.0f);
  EXPECT_EQ(applyBinary(BinaryOp::Min, 5.0f, 3.0f), 3.0f);
  // NaN in either operand gives NaN, as on the CPU backend.
  EXPECT_TRUE(std::isnan(applyBinary(BinaryOp::Max, 1.0f, NaN)));
  EXPECT_TRUE(std::isnan(applyBinary(BinaryOp::Max, NaN, 1.0f)));
  EXPECT_TRUE(std::isnan(applyBinary(BinaryOp::Min, 1.0f, NaN)));
  EXPECT_TRUE(std::isnan(applyBinary(BinaryOp::Min, NaN, 1.0f)));
  EXPECT_EQ(applyBinary(BinaryOp::PRelu, -2.0f, 0.25f), -0.5f);
  EXPECT_EQ(applyBinary(BinaryOp::PRelu, 2.0f, 0.25f), 2.0f);
  EXPECT_EQ(applyBinary(BinaryOp::PRelu, 0.0f, 0.25f), 0.0f);
}

/// The taps of one pooling axis by walking the window.
PoolTaps bruteTaps(int64_t O, int64_t In, int64_t K, int64_t S, int64_t D,
                   int64_t PB, int64_t PE, bool CountPad) {
  PoolTaps T;
  bool Seen = false;
  for (int64_t Tap = 0; Tap < K; ++Tap) {
    const int64_t Pos = O * S - PB + Tap * D;
    const bool Inside = Pos >= 0 && Pos < In;
    if (Inside) {
      if (!Seen)
        T.Lo = Tap;
      T.Hi = Tap + 1;
      Seen = true;
    }
    if (CountPad ? Pos >= -PB && Pos < In + PE : Inside)
      ++T.Counted;
  }
  if (!Seen)
    T.Lo = T.Hi = 0;
  return T;
}

TEST(CudaDeviceMathTest, PoolTapsMatchAWalkOfTheWindow) {
  int Cases = 0;
  for (int64_t In = 1; In <= 7; ++In)
    for (int64_t K = 1; K <= 4; ++K)
      for (int64_t S = 1; S <= 3; ++S)
        for (int64_t D = 1; D <= 3; ++D)
          for (int64_t PB = 0; PB < K; ++PB)
            for (int64_t PE = 0; PE < K; ++PE)
              for (bool Ceil : {false, true}) {
                const int64_t Span = In + PB + PE - (K - 1) * D - 1;
                if (Span < 0)
                  continue;
                int64_t Out = (Ceil ? (Span + S - 1) / S : Span / S) + 1;
                // ceil_mode drops a last window starting past the input
                // and its begin padding.
                if (Ceil && (Out - 1) * S >= In + PB)
                  --Out;
                for (bool CountPad : {false, true})
                  for (int64_t O = 0; O < Out; ++O) {
                    const PoolTaps E =
                        bruteTaps(O, In, K, S, D, PB, PE, CountPad);
                    const PoolTaps A =
                        getPoolTaps(O, In, K, S, D, PB, PE, CountPad);
                    const bool Empty = E.Hi == E.Lo;
                    ASSERT_EQ(Empty, A.Hi == A.Lo);
                    if (!Empty) {
                      ASSERT_EQ(E.Lo, A.Lo);
                      ASSERT_EQ(E.Hi, A.Hi);
                    }
                    ASSERT_EQ(E.Counted, A.Counted)
                        << "In " << In << " K " << K << " S " << S << " D " << D
                        << " pads " << PB << "," << PE << " o " << O
                        << (CountPad ? " count_include_pad" : "");
                    ++Cases;
                  }
              }
  EXPECT_GT(Cases, 10000);
}

TEST(CudaDeviceMathTest, PoolTapsAtTheEdges) {
  // 3-tap window, pads 1: the corner reads 2 taps, counts 3 with the pad.
  PoolTaps T = getPoolTaps(0, 5, 3, 1, 1, 1, 1, false);
  EXPECT_EQ(T.Lo, 1);
  EXPECT_EQ(T.Hi, 3);
  EXPECT_EQ(T.Counted, 2);
  T = getPoolTaps(0, 5, 3, 1, 1, 1, 1, true);
  EXPECT_EQ(T.Counted, 3);
  T = getPoolTaps(4, 5, 3, 1, 1, 1, 1, true);
  EXPECT_EQ(T.Lo, 0);
  EXPECT_EQ(T.Hi, 2);
  EXPECT_EQ(T.Counted, 3);
  // ceil_mode: In 5, kernel 2, stride 2, no pads: the last window reads
  // position 4 only and counts only it even with count_include_pad.
  T = getPoolTaps(2, 5, 2, 2, 1, 0, 0, true);
  EXPECT_EQ(T.Hi - T.Lo, 1);
  EXPECT_EQ(T.Counted, 1);
  // With an end pad of 1 the same window counts 2.
  T = getPoolTaps(2, 5, 2, 2, 1, 0, 1, true);
  EXPECT_EQ(T.Counted, 2);
  // Dilation 2 over pads 2: taps at -2, 0, 2 read 0 and 2.
  T = getPoolTaps(0, 4, 3, 1, 2, 2, 2, false);
  EXPECT_EQ(T.Lo, 1);
  EXPECT_EQ(T.Hi, 3);
  EXPECT_EQ(T.Counted, 2);
  EXPECT_FLOAT_EQ(getAverage(6.0f, 4), 1.5f);
  EXPECT_TRUE(std::isnan(getAverage(0.0f, 0)));
}

TEST(CudaDeviceMathTest, ReduceSteps) {
  const std::vector<float> V = {1.5f, -2.0f, 3.0f, 0.5f};
  auto Run = [&](ReduceParams::Kind K) {
    float Acc = getReduceInit(K);
    for (float X : V)
      Acc = combineReduce(K, Acc, mapReduce(K, X));
    return finishReduce(K, Acc, int64_t(V.size()));
  };
  EXPECT_FLOAT_EQ(Run(ReduceParams::Sum), 3.0f);
  EXPECT_FLOAT_EQ(Run(ReduceParams::Mean), 0.75f);
  EXPECT_FLOAT_EQ(Run(ReduceParams::Max), 3.0f);
  EXPECT_FLOAT_EQ(Run(ReduceParams::Min), -2.0f);
  EXPECT_FLOAT_EQ(Run(ReduceParams::Prod), -4.5f);
  EXPECT_FLOAT_EQ(Run(ReduceParams::SumSquare), 15.5f);
  EXPECT_FLOAT_EQ(Run(ReduceParams::L2), std::sqrt(15.5f));
  // Partial results combine like elements.
  for (ReduceParams::Kind K :
       {ReduceParams::Sum, ReduceParams::Max, ReduceParams::Min,
        ReduceParams::Prod, ReduceParams::L2}) {
    float A = getReduceInit(K), B = getReduceInit(K);
    A = combineReduce(K, A, mapReduce(K, V[0]));
    A = combineReduce(K, A, mapReduce(K, V[1]));
    B = combineReduce(K, B, mapReduce(K, V[2]));
    B = combineReduce(K, B, mapReduce(K, V[3]));
    EXPECT_FLOAT_EQ(finishReduce(K, combineReduce(K, A, B), 4), Run(K));
  }
  // The reduction of nothing.
  EXPECT_EQ(
      finishReduce(ReduceParams::Max, getReduceInit(ReduceParams::Max), 0),
      -Inf);
  EXPECT_EQ(
      finishReduce(ReduceParams::Min, getReduceInit(ReduceParams::Min), 0),
      Inf);
  EXPECT_EQ(
      finishReduce(ReduceParams::Prod, getReduceInit(ReduceParams::Prod), 0),
      1.0f);
  EXPECT_TRUE(std::isnan(
      finishReduce(ReduceParams::Mean, getReduceInit(ReduceParams::Mean), 0)));
}

ElementwiseParams makeBinary(std::vector<int64_t> Shape, std::vector<int64_t> A,
                             std::vector<int64_t> B,
                             BinaryOp Op = BinaryOp::Add) {
  ElementwiseParams P;
  P.Op = Op;
  P.Rank = int(Shape.size());
  for (size_t D = 0; D < Shape.size(); ++D) {
    P.Shape[D] = Shape[D];
    P.AStrides[D] = A[D];
    P.BStrides[D] = B[D];
  }
  return P;
}

void expectWalk(const ElementwiseParams &S, std::vector<int64_t> Shape,
                std::vector<int64_t> A, std::vector<int64_t> B) {
  ASSERT_EQ(S.Rank, int(Shape.size()));
  for (int D = 0; D < S.Rank; ++D) {
    EXPECT_EQ(S.Shape[D], Shape[size_t(D)]) << "dim " << D;
    EXPECT_EQ(S.AStrides[D], A[size_t(D)]) << "dim " << D;
    EXPECT_EQ(S.BStrides[D], B[size_t(D)]) << "dim " << D;
  }
}

TEST(CudaDeviceMathTest, SimplifyElementwiseMergesDims) {
  // Same shapes, dense: one flat dim.
  expectWalk(simplifyElementwise(
                 makeBinary({2, 3, 4, 5}, {60, 20, 5, 1}, {60, 20, 5, 1})),
             {120}, {1}, {1});
  // A scalar B.
  expectWalk(simplifyElementwise(
                 makeBinary({2, 3, 4, 5}, {60, 20, 5, 1}, {0, 0, 0, 0})),
             {120}, {1}, {0});
  // A per-channel B in NCHW: (N, C, pixels).
  expectWalk(simplifyElementwise(
                 makeBinary({2, 3, 4, 5}, {60, 20, 5, 1}, {0, 1, 0, 0})),
             {2, 3, 20}, {60, 20, 1}, {0, 1, 0});
  // ... and in NHWC (physical N, H, W, C): (pixels, C).
  expectWalk(simplifyElementwise(
                 makeBinary({2, 4, 5, 3}, {60, 15, 3, 1}, {0, 0, 0, 1})),
             {40, 3}, {3, 1}, {0, 1});
  // A squeeze-excite scale (N, C, 1, 1): (N * C, pixels).
  expectWalk(simplifyElementwise(
                 makeBinary({2, 3, 4, 5}, {60, 20, 5, 1}, {3, 1, 0, 0})),
             {6, 20}, {20, 1}, {1, 0});
  // Unit dims vanish whatever their strides.
  expectWalk(simplifyElementwise(
                 makeBinary({1, 6, 1, 7}, {99, 7, 99, 1}, {5, 7, 3, 1})),
             {42}, {1}, {1});
  // A transposed operand keeps its dims.
  expectWalk(simplifyElementwise(makeBinary({3, 4, 5}, {1, 3, 12}, {20, 5, 1})),
             {3, 4, 5}, {1, 3, 12}, {20, 5, 1});
  // A single element.
  expectWalk(simplifyElementwise(makeBinary({1, 1}, {0, 0}, {0, 0})), {1}, {0},
             {0});
  expectWalk(simplifyElementwise(makeBinary({}, {}, {})), {1}, {0}, {0});
  // Unary ops ignore B's strides.
  expectWalk(simplifyElementwise(
                 makeBinary({2, 3, 4}, {12, 4, 1}, {0, 1, 0}, BinaryOp::None)),
             {24}, {1}, {0});
  // The rest of the params survive.
  ElementwiseParams P = makeBinary({2, 3}, {3, 1}, {0, 1}, BinaryOp::PRelu);
  P.Act.Kind = ActKind::Relu;
  P.AType = P.YType = DType::F16;
  P.BType = DType::F32;
  const ElementwiseParams S = simplifyElementwise(P);
  EXPECT_EQ(S.Op, BinaryOp::PRelu);
  EXPECT_EQ(S.Act.Kind, ActKind::Relu);
  EXPECT_EQ(S.YType, DType::F16);
  EXPECT_EQ(S.BType, DType::F32);
}

TEST(CudaDeviceMathTest, Int32Indexing) {
  EXPECT_TRUE(fitsInt32(makeBinary({1024, 1024}, {1024, 1}, {0, 1})));
  EXPECT_FALSE(fitsInt32(makeBinary({65536, 65536}, {65536, 1}, {0, 1})));
  // Few elements, far offsets.
  EXPECT_FALSE(fitsInt32(makeBinary({2, 2}, {int64_t(1) << 31, 1}, {0, 1})));
  EXPECT_TRUE(fitsInt32(makeBinary({2, 2}, {2, 1}, {int64_t(1) << 30, 0})));
}

TEST(CudaDeviceMathTest, ReduceLaunchShapes) {
  // NCHW global pool: many short rows, a warp each.
  ReduceLaunch L = chooseReduceLaunch(32 * 2048, 49, 1);
  EXPECT_EQ(L.How, ReduceLaunch::Rows);
  EXPECT_EQ(L.ThreadsX, 32);
  EXPECT_EQ(L.ThreadsY, 8);
  // NHWC global pool: columns over (n, c).
  L = chooseReduceLaunch(32, 49, 2048);
  EXPECT_EQ(L.How, ReduceLaunch::Columns);
  EXPECT_EQ(L.ThreadsX, 32);
  // A classifier's softmax over few rows: a block per row.
  L = chooseReduceLaunch(2, 1000, 1);
  EXPECT_EQ(L.How, ReduceLaunch::Rows);
  EXPECT_EQ(L.ThreadsX, 256);
  EXPECT_EQ(L.ThreadsY, 1);
  // Very long rows.
  L = chooseReduceLaunch(4, 100000, 1);
  EXPECT_EQ(L.ThreadsX, 512);
  // Tiny rows: a thread each.
  L = chooseReduceLaunch(1000, 8, 1);
  EXPECT_EQ(L.How, ReduceLaunch::Columns);
  EXPECT_EQ(L.ThreadsY, 1);
  // Few columns, long: more threads per column.
  L = chooseReduceLaunch(1, 65536, 64);
  EXPECT_EQ(L.How, ReduceLaunch::Columns);
  EXPECT_EQ(L.ThreadsY, 16);
  // Every shape: warps of whole rows, shared slots enough, block limits.
  for (int64_t Outer : {1, 3, 100, 5000, 200000})
    for (int64_t Reduced : {0, 1, 7, 16, 33, 257, 1025, 8193, 100000})
      for (int64_t Inner : {1, 2, 31, 64, 1000}) {
        L = chooseReduceLaunch(Outer, Reduced, Inner);
        EXPECT_EQ(L.ThreadsX % 32, 0);
        EXPECT_LE(L.ThreadsX * L.ThreadsY, MaxReduceThreads);
        EXPECT_LE(L.ThreadsY, 32);
        EXPECT_EQ(L.ThreadsY & (L.ThreadsY - 1), 0);
        if (L.How == ReduceLaunch::Rows)
          EXPECT_EQ(Inner, 1);
        else
          EXPECT_EQ(L.ThreadsX, 32);
      }
}

TEST(CudaDeviceMathTest, NormalizePoolPadsLeadingDims) {
  PoolParams P;
  P.Spatial = 1;
  P.In[0] = 10;
  P.Out[0] = 5;
  P.Kernel[0] = 3;
  P.Stride[0] = 2;
  P.Dilation[0] = 2;
  P.PadBegin[0] = 1;
  P.PadEnd[0] = 2;
  PoolParams Q = normalizePool(P);
  EXPECT_EQ(Q.Spatial, 3);
  for (int D = 0; D < 2; ++D) {
    EXPECT_EQ(Q.In[D], 1);
    EXPECT_EQ(Q.Out[D], 1);
    EXPECT_EQ(Q.Kernel[D], 1);
    EXPECT_EQ(Q.Stride[D], 1);
    EXPECT_EQ(Q.Dilation[D], 1);
    EXPECT_EQ(Q.PadBegin[D], 0);
    EXPECT_EQ(Q.PadEnd[D], 0);
  }
  EXPECT_EQ(Q.In[2], 10);
  EXPECT_EQ(Q.Out[2], 5);
  EXPECT_EQ(Q.Kernel[2], 3);
  EXPECT_EQ(Q.Stride[2], 2);
  EXPECT_EQ(Q.Dilation[2], 2);
  EXPECT_EQ(Q.PadBegin[2], 1);
  EXPECT_EQ(Q.PadEnd[2], 2);

  P = PoolParams();
  P.Spatial = 2;
  P.In[0] = 7;
  P.In[1] = 9;
  P.Kernel[0] = 2;
  P.Kernel[1] = 3;
  Q = normalizePool(P);
  EXPECT_EQ(Q.In[0], 1);
  EXPECT_EQ(Q.In[1], 7);
  EXPECT_EQ(Q.In[2], 9);
  EXPECT_EQ(Q.Kernel[0], 1);
  EXPECT_EQ(Q.Kernel[1], 2);
  EXPECT_EQ(Q.Kernel[2], 3);
}

TEST(CudaDeviceMathTest, AffineIndex) {
  EXPECT_EQ(getAffineIndex(NormParams::ByReduced, 1, 7, 5, 0), 5);
  EXPECT_EQ(getAffineIndex(NormParams::ByInner, 1, 7, 5, 3), 3);
  EXPECT_EQ(getAffineIndex(NormParams::ByOuterChannel, 4, 7, 5, 0), 3);
}

} // namespace

namespace {

/// Bit pattern \p Bits of a one-element tensor of \p Elt, as the reference
/// interpreter's conversions read it.
double readAs(ElementType Elt, uint16_t Bits) {
  runtime::Tensor T(Elt, {1});
  std::memcpy(T.getMutableBytes().data(), &Bits, 2);
  return T.getDouble(0);
}

/// What the reference interpreter stores for \p V in \p Elt.
uint16_t storeAs(ElementType Elt, float V) {
  runtime::Tensor T(Elt, {1});
  T.setDouble(0, V);
  uint16_t Bits;
  std::memcpy(&Bits, T.getBytes().data(), 2);
  return Bits;
}

TEST(CudaDeviceMathTest, HalfConversionsMatchTheReference) {
  // Every f16 and bf16 bit pattern to float.
  for (uint32_t H = 0; H < 0x10000u; ++H) {
    const double F16 = readAs(ElementType::F16, uint16_t(H));
    const double BF16 = readAs(ElementType::BF16, uint16_t(H));
    if (std::isnan(F16))
      EXPECT_TRUE(std::isnan(halfBitsToFloat(uint16_t(H)))) << H;
    else
      ASSERT_EQ(double(halfBitsToFloat(uint16_t(H))), F16) << H;
    if (std::isnan(BF16))
      EXPECT_TRUE(std::isnan(bf16BitsToFloat(uint16_t(H)))) << H;
    else
      ASSERT_EQ(double(bf16BitsToFloat(uint16_t(H))), BF16) << H;
  }
  // Floats to f16 and bf16, rounding to nearest even: a sweep of bit
  // patterns of both signs (subnormals, ties, overflow) and the values
  // just around every f16 rounding boundary near the extremes.
  std::vector<float> Values = {0.0f,
                               -0.0f,
                               65504.0f,
                               65519.996f,
                               65520.0f,
                               5.9604645e-08f,
                               2.9802322e-08f,
                               2.9802326e-08f,
                               8.940697e-08f,
                               6.1035156e-05f,
                               6.1035152e-05f,
                               1.0009766f,
                               1.0004883f,
                               1.0014648f,
                               Inf,
                               -Inf};
  for (uint32_t X = 0; X < 0x7f800000u; X += 0x7d3u) {
    float F;
    std::memcpy(&F, &X, 4);
    Values.push_back(F);
    Values.push_back(-F);
  }
  for (float F : Values) {
    ASSERT_EQ(floatToHalfBits(F), storeAs(ElementType::F16, F)) << F;
    ASSERT_EQ(floatToBf16Bits(F), storeAs(ElementType::BF16, F)) << F;
  }
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(NaN))));
  EXPECT_TRUE(std::isnan(bf16BitsToFloat(floatToBf16Bits(NaN))));
}

} // namespace
