//===- CPUElementwiseTest.cpp - CPU elementwise kernels vs reference ------===//
//
// The CPU backend's unary math, binary and variadic kernels against the
// reference interpreter, in both layouts, with and without broadcasting
// and fused activations; every case asserts that no fallback ran.
//
//===----------------------------------------------------------------------===//

#include "CPUTestGraph.h"

#include "strider/IR/OpInfo.h"

using namespace strider;
using cputest::layoutFor;
using GraphBuilder = cputest::TestGraph;

namespace {

/// A unary op, the range its inputs are drawn from, and its attributes.
struct UnaryCase {
  OpId Op;
  float Offset; ///< Inputs in [Offset - Scale, Offset + Scale).
  float Scale;
  std::vector<std::pair<std::string, Attribute>> Attrs;
};

std::vector<UnaryCase> unaryCases() {
  return {
      {OpId::Tanh, 0.0f, 12.0f, {}},
      {OpId::Elu, 0.0f, 4.0f, {{"alpha", Attribute::getFloat(0.7f)}}},
      {OpId::Exp, 0.0f, 20.0f, {}},
      {OpId::Sqrt, 3.0f, 2.5f, {}},
  };
}

/// X scaled into the case's range: (X + Offset / Scale) * Scale, the last
/// step a Mul by a constant (a unary op after it fuses into the Mul).
Value *scaled(GraphBuilder &B, Value *X, const UnaryCase &C) {
  Value *Shifted = B.op(OpId::Add, {X, B.constant({}, {C.Offset / C.Scale})});
  B.setLayout(Shifted, X->getType().getLayout());
  Value *S = B.op(OpId::Mul, {Shifted, B.constant({}, {C.Scale})});
  B.setLayout(S, X->getType().getLayout());
  return S;
}

} // namespace

TEST(CPUElementwiseTest, UnaryMathStandalone) {
  for (const UnaryCase &C : unaryCases())
    for (bool CL : {false, true}) {
      GraphBuilder B{unsigned(C.Op) * 2 + CL};
      // 231 elements: a vector tail. Inputs scaled in a graph input of
      // their own so that the op runs standalone.
      Value *X = B.input({1, 3, 7, 11}, layoutFor(CL, 4));
      auto &T = B.Inputs[X->getName()];
      float *P = reinterpret_cast<float *>(T.getMutableBytes().data());
      for (int64_t I = 0; I < T.getNumElements(); ++I)
        P[I] = C.Offset + C.Scale * P[I];
      Value *Y = B.op(C.Op, {X}, C.Attrs);
      B.setLayout(Y, layoutFor(CL, 4));
      B.check(Y, 0, 1, "unary.");
    }
}

TEST(CPUElementwiseTest, UnaryMathFusesIntoBinaries) {
  for (const UnaryCase &C : unaryCases()) {
    GraphBuilder B{unsigned(C.Op) + 100};
    Value *X = B.input({2, 5, 3, 13}, layoutFor(true, 4));
    Value *Y = B.op(C.Op, {scaled(B, X, C)}, C.Attrs);
    B.setLayout(Y, layoutFor(true, 4));
    std::string Name = getOpInfo(C.Op).Name.lower();
    B.check(Y, 0, 1, "binary.mul+" + Name);
  }
}

TEST(CPUElementwiseTest, TanhFusesIntoConvAndGemm) {
  for (bool CL : {false, true}) {
    GraphBuilder B(200 + CL);
    Layout L4 = layoutFor(CL, 4);
    Value *X = B.input({1, 6, 5, 9}, L4);
    Value *Y = B.op(OpId::Conv, {X, B.constant({8, 6, 3, 3}), B.constant({8})},
                    {{"pads", Attribute::getInts({1, 1, 1, 1})}});
    B.setLayout(Y, L4);
    Value *T = B.op(OpId::Tanh, {Y});
    B.setLayout(T, L4);
    B.check(T, 0, 1, "+tanh");
  }
  GraphBuilder B(210);
  Value *X = B.input({7, 20});
  Value *Y = B.op(OpId::Gemm, {X, B.constant({20, 9}), B.constant({9})});
  B.check(B.op(OpId::Tanh, {Y}), 0, 1, "gemm+tanh");
}

TEST(CPUElementwiseTest, BinaryMaxMinPReluPow) {
  struct Case {
    OpId Op;
    std::vector<int64_t> A, B;
    bool CL;
    float AOffset;
    std::vector<float> BValues; ///< Empty: random in [-1, 1).
  } Cases[] = {
      {OpId::Max, {2, 6, 5, 7}, {2, 6, 5, 7}, true, 0.0f, {}},
      {OpId::Min, {2, 6, 5, 7}, {1, 6, 1, 1}, true, 0.0f, {}},
      {OpId::Max, {2, 6, 5, 7}, {7}, false, 0.0f, {}},
      {OpId::PRelu, {1, 6, 5, 7}, {6, 1, 1}, true, 0.0f, {}},
      {OpId::PRelu, {1, 6, 5, 7}, {6, 1, 1}, false, 0.0f, {}},
      {OpId::PRelu, {3, 19}, {19}, false, 0.0f, {}},
      // Positive bases, any exponent.
      {OpId::Pow, {2, 6, 5, 7}, {2, 6, 5, 7}, true, 2.0f, {}},
      // Negative bases, integer exponents (odd ones keep the sign).
      {OpId::Pow, {1, 4, 3, 9}, {4, 1, 1}, true, 0.0f, {2, 3, -1, 0}},
      {OpId::Pow, {3, 17}, {}, false, 0.0f, {2}},
      {OpId::Pow, {3, 17}, {}, false, 1.5f, {0.5f}},
  };
  unsigned Seed = 300;
  for (const Case &C : Cases) {
    GraphBuilder B{Seed++};
    unsigned R = unsigned(C.A.size());
    Value *A = B.input(C.A, layoutFor(C.CL && R == 4, R), C.AOffset);
    Value *BV = B.constant(C.B, C.BValues);
    Value *Y = B.op(C.Op, {A, BV});
    B.setLayout(Y, layoutFor(C.CL && R == 4, R));
    B.check(Y, 0, 1, "binary." + getOpInfo(C.Op).Name.lower());
    // The same with a fused activation.
    GraphBuilder F{Seed++};
    A = F.input(C.A, layoutFor(C.CL && R == 4, R), C.AOffset);
    Y = F.op(C.Op, {A, F.constant(C.B, C.BValues)});
    F.setLayout(Y, layoutFor(C.CL && R == 4, R));
    Value *S = F.op(OpId::Sigmoid, {Y});
    F.setLayout(S, Y->getType().getLayout());
    F.check(S, 0, 1, "+sigmoid");
  }
}

TEST(CPUElementwiseTest, VariadicSumMaxMin) {
  for (OpId Op : {OpId::Sum, OpId::Max, OpId::Min})
    for (bool CL : {false, true}) {
      GraphBuilder B{unsigned(Op) * 2 + CL};
      Layout L4 = layoutFor(CL, 4);
      Value *A = B.input({2, 5, 4, 9}, L4);
      Value *C = B.input({5, 1, 1});
      Value *D = B.input({2, 5, 4, 9}, L4);
      Value *E = B.input({9});
      Value *Y = B.op(Op, {A, C, D, E});
      B.setLayout(Y, L4);
      B.check(Y, 0, 1, "binary." + getOpInfo(Op).Name.lower());
      // Two operands, the second broadcast, then Relu fused.
      GraphBuilder F{unsigned(Op) * 2 + CL + 50};
      Y = F.op(Op, {F.input({2, 5, 4, 9}, L4), F.input({5, 1, 1})});
      F.setLayout(Y, L4);
      Value *R = F.op(OpId::Relu, {Y});
      F.setLayout(R, L4);
      F.check(R, 0, 1, "+relu");
    }
}
