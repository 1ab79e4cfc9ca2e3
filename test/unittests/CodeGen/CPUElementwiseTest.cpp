//===- CPUElementwiseTest.cpp - CPU elementwise kernels vs reference ------===//
//
// The CPU backend's unary math, binary and variadic kernels against the
// reference interpreter, in both layouts, with and without broadcasting
// and fused activations; every case asserts that no fallback ran.
//
//===----------------------------------------------------------------------===//

#include "CPUTestGraph.h"

#include "strider/CodeGen/Fusion.h"
#include "strider/IR/OpInfo.h"
#include "strider/IR/TensorData.h"

#include <cctype>

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
      {OpId::Selu,
       0.0f,
       4.0f,
       {{"alpha", Attribute::getFloat(1.5f)},
        {"gamma", Attribute::getFloat(1.2f)}}},
      {OpId::Selu, 0.0f, 4.0f, {}},
      {OpId::Softplus, 0.0f, 40.0f, {}},
      {OpId::Softsign, 0.0f, 50.0f, {}},
      {OpId::Exp, 0.0f, 20.0f, {}},
      {OpId::Sqrt, 3.0f, 2.5f, {}},
      {OpId::Neg, 0.0f, 3.0f, {}},
      {OpId::Abs, 0.0f, 3.0f, {}},
      {OpId::Reciprocal, 2.0f, 1.5f, {}},
      {OpId::Floor, 0.0f, 5.0f, {}},
      {OpId::Ceil, 0.0f, 5.0f, {}},
      {OpId::Log, 5.0f, 4.9f, {}},
      {OpId::Sin, 0.0f, 20.0f, {}},
      {OpId::Cos, 0.0f, 20.0f, {}},
      {OpId::Tan, 0.0f, 1.5f, {}},
      {OpId::Asin, 0.0f, 1.0f, {}},
      {OpId::Acos, 0.0f, 1.0f, {}},
      {OpId::Atan, 0.0f, 30.0f, {}},
      {OpId::Sinh, 0.0f, 30.0f, {}},
      {OpId::Cosh, 0.0f, 30.0f, {}},
      {OpId::Asinh, 0.0f, 1000.0f, {}},
      {OpId::Acosh, 500.0f, 499.0f, {}},
      {OpId::Atanh, 0.0f, 1.0f, {}},
      {OpId::Sign, 0.0f, 3.0f, {}},
      {OpId::Round, 0.0f, 8.0f, {}},
      {OpId::ThresholdedRelu,
       0.0f,
       3.0f,
       {{"alpha", Attribute::getFloat(0.4f)}}},
      {OpId::ThresholdedRelu, 0.0f, 3.0f, {}},
      {OpId::Shrink,
       0.0f,
       3.0f,
       {{"lambd", Attribute::getFloat(0.8f)},
        {"bias", Attribute::getFloat(0.3f)}}},
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

TEST(CPUElementwiseTest, ActivationOpsListEveryOpWithAnActKind) {
  // getActivationOps (which both backends' tables read) and getActivation
  // agree: every listed op maps to an ActKind (Clip with constant bounds),
  // every other op to none.
  llvm::ArrayRef<OpId> Listed = codegen::getActivationOps();
  for (const OpInfo &Info : getAllOps()) {
    if (Info.MaxOperands == 0)
      continue; // Constants and shape sources: no activation.
    GraphBuilder B{1};
    Value *X = B.input({2, 3});
    std::vector<Value *> Ops = {X};
    while (Ops.size() < unsigned(std::max(Info.MinOperands, 1)))
      Ops.push_back(B.constant({}, {1.0f}));
    Node *N = B.G.createNode(Info.Id, Ops, {"y"},
                             {TensorType::get(ElementType::F32, {2, 3})});
    codegen::Activation A;
    EXPECT_EQ(codegen::getActivation(*N, A), llvm::is_contained(Listed, Info.Id))
        << Info.Name.str();
  }
}

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
    // The activation's name: the op's in snake case.
    std::string Name;
    for (char Ch : getOpInfo(C.Op).Name) {
      if (std::isupper(static_cast<unsigned char>(Ch)) && !Name.empty())
        Name += '_';
      Name += char(std::tolower(static_cast<unsigned char>(Ch)));
    }
    B.check(Y, 0, 1, "binary.mul+" + Name);
  }
}

TEST(CPUElementwiseTest, SeluSoftplusSoftsignAtExtremes) {
  // Far past exp's range both ways (Softplus must neither overflow nor
  // lose x), around exp's limits, and at zero; vector body and tail.
  const std::vector<float> Values = {
      -1e30f, -1e4f, -100.0f, -88.8f, -87.0f, -20.0f, -1e-6f, 0.0f, 1e-6f,
      20.0f,  87.0f, 88.8f,   100.0f, 1e4f,   1e30f,  -3.0f,  3.0f};
  for (OpId Op : {OpId::Selu, OpId::Softplus, OpId::Softsign}) {
    GraphBuilder B{unsigned(Op) + 400};
    Value *X = B.input({int64_t(Values.size())});
    auto &T = B.Inputs[X->getName()];
    std::memcpy(T.getMutableBytes().data(), Values.data(),
                Values.size() * sizeof(float));
    B.check(B.op(Op, {X}), 0, 1, "unary.");
  }
}

TEST(CPUElementwiseTest, InverseAndHyperbolicAtTheirLimits) {
  // Out of the domain (NaN), at the poles, past Highway's own domains
  // (sinh and cosh near float's limit, infinite inputs), halves for Round
  // and signed zero and NaN for Sign.
  const std::vector<float> Values = {
      -INFINITY, -1e30f, -89.0f, -88.0f, -20.0f, -2.0f,    -1.0f, -0.5f,
      -1e-6f,    -0.0f,  0.0f,   1e-6f,  0.5f,   1.0f,     1.5f,  2.5f,
      3.5f,      20.0f,  88.0f,  89.0f,  1e30f,  INFINITY, NAN};
  for (OpId Op :
       {OpId::Asin, OpId::Acos, OpId::Atan, OpId::Sinh, OpId::Cosh, OpId::Asinh,
        OpId::Acosh, OpId::Atanh, OpId::Sign, OpId::Round}) {
    GraphBuilder B{unsigned(Op) + 500};
    Value *X = B.input({int64_t(Values.size())});
    auto &T = B.Inputs[X->getName()];
    std::memcpy(T.getMutableBytes().data(), Values.data(),
                Values.size() * sizeof(float));
    B.check(B.op(Op, {X}), 0, 1, "unary.");
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
      {OpId::Pow, {3, 17}, {}, false, 0.0f, {2}},        // x * x
      {OpId::Pow, {3, 17}, {1, 1, 1}, false, 0.0f, {2}}, // broadcast up
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

TEST(CPUElementwiseTest, LongRowsSplitOverThreads) {
  // Dense operands merge into one row of 60033 elements, split into
  // pieces: every thread count gives the same bits.
  GraphBuilder B(350);
  Value *Y = B.op(OpId::Pow,
                  {B.input({3, 20011}, Layout(), 2.0f), B.input({3, 20011})});
  Value *S = B.op(OpId::Sigmoid, {B.op(OpId::Add, {Y, B.constant({}, {1})})});
  B.checkThreads(S, "binary.add+sigmoid", {1, 2, 3});
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
      // One operand: a copy, here with a fused Relu.
      GraphBuilder O{unsigned(Op) * 2 + CL + 90};
      Y = O.op(Op, {O.input({2, 5, 4, 9}, L4)});
      O.setLayout(Y, L4);
      Value *OR = O.op(OpId::Relu, {Y});
      O.setLayout(OR, L4);
      O.check(OR, 0, 1, "copy." + getOpInfo(Op).Name.lower() + "+relu");
      // Two operands, the second broadcast, then Relu fused.
      GraphBuilder F{unsigned(Op) * 2 + CL + 50};
      Y = F.op(Op, {F.input({2, 5, 4, 9}, L4), F.input({5, 1, 1})});
      F.setLayout(Y, L4);
      Value *R = F.op(OpId::Relu, {Y});
      F.setLayout(R, L4);
      F.check(R, 0, 1, "+relu");
    }
}

TEST(CPUElementwiseTest, Comparisons) {
  for (OpId Op :
       {OpId::Less, OpId::LessOrEqual, OpId::Greater, OpId::GreaterOrEqual})
    for (bool CL : {false, true}) {
      GraphBuilder B{unsigned(Op) * 2 + CL};
      Layout L4 = layoutFor(CL, 4);
      Value *A = B.input({2, 6, 5, 7}, L4);
      Value *C = B.input({6, 1, 1});
      Value *Y = B.op(Op, {A, C});
      B.setLayout(Y, L4);
      B.check(Y, 0, 1, "compare." + getOpInfo(Op).Name.lower() + ".f32");
    }
  // Equal of values that are often equal: floors of [-1, 1) are -1 or 0.
  GraphBuilder B(400);
  Value *A = B.op(OpId::Floor, {B.input({3, 33})});
  Value *C = B.op(OpId::Floor, {B.input({33})});
  B.check(B.op(OpId::Equal, {A, C}), 0, 1, "compare.equal.f32");
  // Integers.
  GraphBuilder I(401);
  Value *IA = I.int64Constant({2, 3}, {1, -4, 7, 0, 5, 5});
  Value *IB = I.int64Constant({3}, {1, 5, -2});
  I.check(I.op(OpId::Greater, {IA, IB}), 0, 1, "compare.greater.i64");
}

TEST(CPUElementwiseTest, LogicOps) {
  for (bool CL : {false, true}) {
    GraphBuilder B{500u + CL};
    Layout L4 = layoutFor(CL, 4);
    Value *A = B.input({2, 5, 4, 9}, L4);
    Value *C = B.input({5, 1, 1});
    Value *D = B.input({9});
    Value *Lt = B.op(OpId::Less, {A, C}, {}, L4);
    Value *Gt = B.op(OpId::Greater, {A, D}, {}, L4);
    Value *And = B.op(OpId::And, {Lt, Gt}, {}, L4);
    Value *Not = B.op(OpId::Not, {And}, {}, L4);
    Value *Or = B.op(OpId::Or, {Not, B.op(OpId::Less, {C, D})}, {}, L4);
    Value *Eq = B.op(OpId::Equal, {Or, Lt}, {}, L4);
    B.check(Eq, 0, 1, "logic.not");
  }
}

TEST(CPUElementwiseTest, WhereBroadcastsThreeOperands) {
  for (bool CL : {false, true}) {
    GraphBuilder B{600u + CL};
    Layout L4 = layoutFor(CL, 4);
    Value *A = B.input({2, 5, 4, 9}, L4);
    Value *C = B.input({5, 1, 1});
    Value *Cond = B.op(OpId::Less, {A, C}, {}, L4);
    Value *Y = B.op(OpId::Where, {Cond, A, B.input({4, 1})}, {}, L4);
    B.check(Y, 0, 1, "where.f32");
  }
  // Long rows are split into pieces over the threads: every thread count
  // gives the same result.
  {
    GraphBuilder B(620);
    Value *A = B.input({3, 20011});
    Value *Cond = B.op(OpId::Less, {A, B.input({3, 20011})});
    B.checkThreads(B.op(OpId::Where, {Cond, A, B.input({1})}), "where.f32",
                   {1, 2, 3});
  }
  // Integers (and a condition of lower rank).
  GraphBuilder B(610);
  Value *Cond = B.op(OpId::Less, {B.input({1, 3}), B.input({3})});
  Value *X = B.int64Constant({2, 1}, {7, -8});
  Value *Y = B.int64Constant({3}, {1, 2, 3});
  B.check(B.op(OpId::Where, {Cond, X, Y}), 0, 1, "where.i64");
}

TEST(CPUElementwiseTest, CastBetweenElementTypes) {
  auto To = [](ElementType Elt) {
    return std::vector<std::pair<std::string, Attribute>>{
        {"to", Attribute::getInt(toOnnxDataType(Elt))}};
  };
  for (bool CL : {false, true}) {
    GraphBuilder B{700u + CL};
    Layout L4 = layoutFor(CL, 4);
    // Values in [-40, 40): f32 -> i64 truncates toward zero; i32 -> bool
    // is false only for the zeros.
    Value *X = B.op(OpId::Mul,
                    {B.input({2, 3, 5, 7}, L4), B.constant({}, {40})}, {}, L4);
    Value *I = B.op(OpId::Cast, {X}, To(ElementType::I64), L4);
    Value *I32 = B.op(OpId::Cast, {I}, To(ElementType::I32), L4);
    Value *Bool = B.op(OpId::Cast, {I32}, To(ElementType::Bool), L4);
    Value *F = B.op(OpId::Cast, {Bool}, To(ElementType::F64), L4);
    Value *FromBool = B.op(OpId::Cast, {F}, To(ElementType::F32), L4);
    Value *FromInt = B.op(OpId::Cast, {I}, To(ElementType::F32), L4);
    Value *Sum = B.op(OpId::Add, {FromBool, FromInt}, {}, L4);
    B.check(Sum, 0, 1, "cast.i32.bool");
    // Values in [-400, 400): f32 -> i8 wraps.
    GraphBuilder W{710u + CL};
    X = W.op(OpId::Mul, {W.input({2, 3, 5, 7}, L4), W.constant({}, {400})}, {},
             L4);
    Value *I8 = W.op(OpId::Cast, {X}, To(ElementType::I8), L4);
    W.check(W.op(OpId::Cast, {I8}, To(ElementType::F32), L4), 0, 1,
            "cast.f32.i8");
  }
}

TEST(CPUElementwiseTest, ExpandBroadcastsInAnyLayout) {
  for (bool CL : {false, true}) {
    GraphBuilder B{800u + CL};
    Value *X = B.input({6, 1, 1});
    Value *Y = B.op(OpId::Expand, {X, B.int64Constant({4}, {2, 6, 5, 7})});
    B.setLayout(Y, layoutFor(CL, 4));
    B.check(Y, 0, 1, "expand.f32");
  }
  GraphBuilder B(810);
  Value *X = B.int64Constant({3, 1}, {4, -5, 6});
  B.check(B.op(OpId::Expand, {X, B.int64Constant({2}, {1, 4})}), 0, 1,
          "expand.i64");
}

TEST(CPUElementwiseTest, PowOfTwoIsASquare) {
  for (bool CL : {false, true}) {
    GraphBuilder B{900u + CL};
    Value *X = B.input({2, 6, 5, 7}, layoutFor(CL, 4));
    Value *Y = B.op(OpId::Pow, {X, B.constant({}, {2})});
    B.setLayout(Y, layoutFor(CL, 4));
    B.checkThreads(Y, "binary.pow.square", {1, 2});
  }
}
