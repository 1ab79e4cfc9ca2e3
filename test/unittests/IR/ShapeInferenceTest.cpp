//===- ShapeInferenceTest.cpp - Per-op shape and type inference -----------===//
//
// Builds one-node graphs through the Graph API and checks the inferred
// result types and error messages of every op family, plus parameterized
// sweeps of convolution and pooling output sizes against hand formulas.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/ShapeInference.h"
#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/TensorData.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace strider;

namespace {

/// One dim of a test type: an int is static, "?" unknown, a name a symbol.
struct D {
  Dim V;
  D(int S) : V(Dim::getStatic(S)) {}
  D(int64_t S) : V(Dim::getStatic(S)) {}
  D(const char *S)
      : V(std::string(S) == "?" ? Dim::getUnknown() : Dim::getSymbol(S)) {}
};

TensorType ty(ElementType Elt, std::initializer_list<D> Dims) {
  std::vector<Dim> V;
  for (const D &X : Dims)
    V.push_back(X.V);
  return TensorType(Elt, V);
}
TensorType f32(std::initializer_list<D> Dims) {
  return ty(ElementType::F32, Dims);
}
TensorType i64(std::initializer_list<D> Dims) {
  return ty(ElementType::I64, Dims);
}
const ElementType F32 = ElementType::F32;

class InferTest : public ::testing::Test {
protected:
  Graph G;
  unsigned NextName = 0;

  std::string fresh() { return "v" + std::to_string(NextName++); }

  Value *input(TensorType T) { return G.addInput(fresh(), std::move(T)); }

  Value *constant(TensorDataRef Data) {
    Node *C = G.createNode(OpId::Constant, {}, {fresh()}, {Data->getType()});
    C->setAttr("value", Attribute::getTensor(Data));
    return C->getResult(0);
  }
  /// A constant 1-D tensor of integers (i64 unless \p Elt says otherwise).
  Value *ints(std::vector<int64_t> V, ElementType Elt = ElementType::I64) {
    return constant(
        TensorData::fromInt64(Elt, {static_cast<int64_t>(V.size())}, V));
  }
  Value *floats(std::vector<float> V) {
    return constant(TensorData::fromFloat({static_cast<int64_t>(V.size())}, V));
  }
  Value *scalarF32(float V) { return constant(TensorData::fromFloat({}, {V})); }

  /// A node with \p NumResults results of unknown type.
  Node *node(OpId Id, std::vector<Value *> Ops, unsigned NumResults = 1) {
    std::vector<std::string> Names;
    for (unsigned I = 0; I < NumResults; ++I)
      Names.push_back(fresh());
    std::vector<TensorType> Types(NumResults);
    return G.createNode(Id, Ops, Names, Types);
  }

  /// Inferred type of result \p I of \p N as text, or "error: <msg>".
  std::string infer(Node *N, unsigned I = 0) {
    llvm::SmallVector<TensorType, 4> R;
    if (llvm::Error E = inferResultTypes(*N, R))
      return "error: " + llvm::toString(std::move(E));
    if (I >= R.size())
      return "no result";
    return R[I].str();
  }

  /// The message of the error inference reports for \p N ("" if none),
  /// without the node prefix.
  std::string error(Node *N) {
    llvm::SmallVector<TensorType, 4> R;
    llvm::Error E = inferResultTypes(*N, R);
    if (!E)
      return "";
    std::string Msg = llvm::toString(std::move(E));
    std::string Prefix = describeNode(*N) + ": ";
    if (Msg.compare(0, Prefix.size(), Prefix) == 0)
      return Msg.substr(Prefix.size());
    return Msg;
  }

  /// Shorthand: infer result 0 of a fresh node.
  std::string run(OpId Id, std::vector<Value *> Ops,
                  std::vector<std::pair<const char *, Attribute>> Attrs = {},
                  unsigned Result = 0, unsigned NumResults = 1) {
    Node *N = node(Id, std::move(Ops), NumResults);
    for (auto &A : Attrs)
      N->setAttr(A.first, A.second);
    return infer(N, Result);
  }
  std::string
  runError(OpId Id, std::vector<Value *> Ops,
           std::vector<std::pair<const char *, Attribute>> Attrs = {},
           unsigned NumResults = 1) {
    Node *N = node(Id, std::move(Ops), NumResults);
    for (auto &A : Attrs)
      N->setAttr(A.first, A.second);
    return error(N);
  }
};

Attribute intsAttr(std::vector<int64_t> V) { return Attribute::getInts(V); }
Attribute intAttr(int64_t V) { return Attribute::getInt(V); }
Attribute strAttr(const char *V) { return Attribute::getString(V); }

//===----------------------------------------------------------------------===//
// Incremental inference
//===----------------------------------------------------------------------===//

/// The result types of \p G's nodes, in order, as text.
std::vector<std::string> resultTypes(const Graph &G) {
  std::vector<std::string> T;
  for (const Node *N : G.nodes())
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      T.push_back(N->getResult(I) ? N->getResult(I)->getType().str() : "-");
  return T;
}

// A memo's later calls infer what changed and what follows it: the types
// they leave are those a full inference of the same graph finds.
TEST_F(InferTest, AMemoReinfersWhatChangedAndWhatFollows) {
  Value *X = input(f32({"N", 4}));
  Node *R = node(OpId::Relu, {X});
  Node *Sh = node(OpId::Shape, {R->getResult(0)});
  Node *Re = node(OpId::Reshape, {R->getResult(0), Sh->getResult(0)});
  Node *Neg = node(OpId::Neg, {Re->getResult(0)});
  Value *Y = input(f32({1, 1}));
  Node *Add = node(OpId::Add, {Neg->getResult(0), Y});
  (void)Add;
  auto Full = [&] {
    std::unique_ptr<Graph> C = G.clone();
    if (llvm::Error E = inferShapes(*C))
      ADD_FAILURE() << llvm::toString(std::move(E));
    return resultTypes(*C);
  };
  InferenceMemo Memo;
  ASSERT_FALSE(bool(inferShapes(G, nullptr, &Memo)));
  EXPECT_EQ(resultTypes(G), Full());
  EXPECT_EQ(Neg->getResult(0)->getType().str(), "tensor<? x ? x f32>");
  // A graph input's new type reaches the nodes after it.
  X->setType(f32({3, 4}));
  ASSERT_FALSE(bool(inferShapes(G, nullptr, &Memo)));
  EXPECT_EQ(Sh->getResult(0)->getType().str(), "tensor<2 x i64>");
  EXPECT_EQ(R->getResult(0)->getType().str(), "tensor<3 x 4 x f32>");
  EXPECT_EQ(resultTypes(G), Full());
  // A folded operand (a new constant node) reaches its users and theirs.
  Value *Target = ints({2, 6});
  G.moveBefore(Target->getDefiningNode(), Re);
  Re->setOperand(1, Target);
  ASSERT_FALSE(bool(inferShapes(G, nullptr, &Memo)));
  EXPECT_EQ(Add->getResult(0)->getType().str(), "tensor<2 x 6 x f32>");
  EXPECT_EQ(resultTypes(G), Full());
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST_F(InferTest, UnaryKeepsTypeAndDropsLayout) {
  Value *X = input(TensorType(F32,
                              {Dim::getSymbol("N"), Dim::getStatic(3),
                               Dim::getStatic(4), Dim::getStatic(5)},
                              Layout::getChannelsLast(4)));
  for (OpId Id :
       {OpId::Relu, OpId::Sigmoid, OpId::Tanh, OpId::Exp, OpId::Sqrt, OpId::Erf,
        OpId::Elu, OpId::LeakyRelu, OpId::HardSigmoid, OpId::HardSwish,
        OpId::Selu, OpId::Softplus, OpId::Softsign, OpId::Identity})
    EXPECT_EQ(run(Id, {X}), "tensor<N x 3 x 4 x 5 x f32>");
  Value *U = input(TensorType::getUnranked(F32));
  EXPECT_EQ(run(OpId::Relu, {U}), "tensor<* x f32>");
  Value *Unknown = input(TensorType());
  EXPECT_EQ(run(OpId::Sigmoid, {Unknown}), "tensor<* x ?>");
}

TEST_F(InferTest, UnaryElementTypes) {
  Value *I = input(ty(ElementType::I32, {2}));
  EXPECT_EQ(run(OpId::Relu, {I}), "tensor<2 x i32>");
  EXPECT_EQ(runError(OpId::Sigmoid, {I}),
            "input 'X' has element type i32, expected a floating-point type");
  Value *U8 = input(ty(ElementType::U8, {2}));
  EXPECT_EQ(runError(OpId::Relu, {U8}),
            "input 'X' has element type u8, expected a signed or "
            "floating-point type");
}

TEST_F(InferTest, Cast) {
  Value *X = input(f32({2, "N"}));
  EXPECT_EQ(run(OpId::Cast, {X}, {{"to", intAttr(7)}}), "tensor<2 x N x i64>");
  EXPECT_EQ(run(OpId::Cast, {X}, {{"to", intAttr(10)}}), "tensor<2 x N x f16>");
  EXPECT_EQ(runError(OpId::Cast, {X}, {{"to", intAttr(8)}}),
            "unsupported target data type 8");
  EXPECT_EQ(runError(OpId::Cast, {X}), "missing int attribute 'to'");
}

TEST_F(InferTest, Dropout) {
  Value *X = input(f32({"N", 8}));
  Node *N = node(OpId::Dropout, {X, scalarF32(0.5f)}, 2);
  EXPECT_EQ(infer(N, 0), "tensor<N x 8 x f32>");
  EXPECT_EQ(infer(N, 1), "tensor<N x 8 x bool>");
  Value *Ratio = input(f32({2}));
  EXPECT_EQ(runError(OpId::Dropout, {X, Ratio}),
            "input 'ratio' must be a scalar, got tensor<2 x f32>");
  Value *Mode = input(f32({}));
  EXPECT_EQ(runError(OpId::Dropout, {X, nullptr, Mode}),
            "input 'training_mode' has element type f32, expected bool");
}

TEST_F(InferTest, Clip) {
  Value *X = input(f32({"N", 8}));
  Value *Lo = input(f32({})), *Hi = input(f32({1}));
  EXPECT_EQ(run(OpId::Clip, {X}), "tensor<N x 8 x f32>");
  EXPECT_EQ(run(OpId::Clip, {X, Lo, Hi}), "tensor<N x 8 x f32>");
  EXPECT_EQ(run(OpId::Clip, {X, nullptr, Hi}), "tensor<N x 8 x f32>");
  Value *Bad = input(f32({3}));
  EXPECT_EQ(runError(OpId::Clip, {X, Bad}),
            "input 'min' must be a scalar, got tensor<3 x f32>");
  Value *Half = input(ty(ElementType::F16, {}));
  EXPECT_EQ(runError(OpId::Clip, {X, Half}),
            "element type mismatch: f32 vs f16");
}

TEST_F(InferTest, BroadcastStatic) {
  Value *A = input(f32({2, 3, 4})), *B = input(f32({3, 1}));
  EXPECT_EQ(run(OpId::Add, {A, B}), "tensor<2 x 3 x 4 x f32>");
  Value *C = input(f32({4}));
  EXPECT_EQ(run(OpId::Mul, {C, A}), "tensor<2 x 3 x 4 x f32>");
  Value *S = input(f32({}));
  EXPECT_EQ(run(OpId::Sub, {S, A}), "tensor<2 x 3 x 4 x f32>");
  Value *Bad = input(f32({3, 5}));
  EXPECT_EQ(runError(OpId::Add, {A, Bad}),
            "operands of Add are not broadcastable: 4 vs 5 at dim 2");
  Value *Bad2 = input(f32({4, 4}));
  EXPECT_EQ(runError(OpId::Div, {A, Bad2}),
            "operands of Div are not broadcastable: 3 vs 4 at dim 1");
}

TEST_F(InferTest, BroadcastSymbols) {
  // N with N gives N; N with 1 gives N; N with a static 5 gives 5; N with M
  // or with ? gives ?.
  Value *A = input(f32({"N", "N", "N", "N", 1}));
  Value *B = input(f32({"N", 1, 5, "M", "?"}));
  EXPECT_EQ(run(OpId::Add, {A, B}), "tensor<N x N x 5 x ? x ? x f32>");
  EXPECT_EQ(run(OpId::Max, {A, B, A}), "tensor<N x N x 5 x ? x ? x f32>");
  Value *U = input(TensorType::getUnranked(F32));
  EXPECT_EQ(run(OpId::Add, {A, U}), "tensor<* x f32>");
}

TEST_F(InferTest, BroadcastElementTypes) {
  Value *A = input(f32({2})), *H = input(ty(ElementType::F16, {2}));
  EXPECT_EQ(runError(OpId::Add, {A, H}), "element type mismatch: f32 vs f16");
  Value *Unk = input(TensorType::getUnranked(ElementType::Unknown));
  EXPECT_EQ(run(OpId::Add, {Unk, A}), "tensor<* x f32>");
  Value *Exp = input(ty(ElementType::I32, {2}));
  EXPECT_EQ(run(OpId::Pow, {A, Exp}), "tensor<2 x f32>");
  Value *Bools = input(ty(ElementType::Bool, {2}));
  EXPECT_EQ(runError(OpId::Sum, {Bools}),
            "input 'operand 0' has element type bool, expected a numeric type");
  EXPECT_EQ(run(OpId::Sum, {A}), "tensor<2 x f32>");
}

TEST_F(InferTest, PRelu) {
  Value *X = input(f32({"N", 16, "H", 8}));
  Value *Slope = input(f32({16, 1, 1}));
  EXPECT_EQ(run(OpId::PRelu, {X, Slope}), "tensor<N x 16 x H x 8 x f32>");
  Value *Refine = input(f32({7, 1}));
  EXPECT_EQ(run(OpId::PRelu, {X, Refine}), "tensor<N x 16 x 7 x 8 x f32>");
  Value *Bad = input(f32({3, 1, 1}));
  EXPECT_EQ(runError(OpId::PRelu, {X, Bad}),
            "input 'slope' is not broadcastable to the result: 3 vs 16 at "
            "dim 1");
  Value *Big = input(f32({1, 1, 1, 1, 1}));
  EXPECT_EQ(runError(OpId::PRelu, {X, Big}),
            "input 'slope' of rank 5 is not broadcastable to rank 4");
}

TEST_F(InferTest, Expand) {
  Value *X = input(f32({3, 1}));
  EXPECT_EQ(run(OpId::Expand, {X, ints({2, 1, 6})}), "tensor<2 x 3 x 6 x f32>");
  EXPECT_EQ(run(OpId::Expand, {X, ints({1})}), "tensor<3 x 1 x f32>");
  Value *Sym = input(f32({"N", 1}));
  EXPECT_EQ(run(OpId::Expand, {Sym, ints({1, 5})}), "tensor<N x 5 x f32>");
  // A non-constant shape still gives the rank.
  Value *Shape = input(i64({3}));
  EXPECT_EQ(run(OpId::Expand, {X, Shape}), "tensor<? x 3 x ? x f32>");
  Value *AnyShape = input(i64({"?"}));
  EXPECT_EQ(run(OpId::Expand, {X, AnyShape}), "tensor<* x f32>");
  EXPECT_EQ(runError(OpId::Expand, {X, ints({4, 4})}),
            "operands of Expand are not broadcastable: 3 vs 4 at dim 0");
  EXPECT_EQ(runError(OpId::Expand, {X, ints({-2})}),
            "shape entry 0 is -2, must be non-negative");
  EXPECT_EQ(runError(OpId::Expand, {X, ints({2}, ElementType::I32)}),
            "input 'shape' has element type i32, expected i64");
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

TEST_F(InferTest, Reshape) {
  Value *X = input(f32({2, 3, 4}));
  EXPECT_EQ(run(OpId::Reshape, {X, ints({6, 4})}), "tensor<6 x 4 x f32>");
  EXPECT_EQ(run(OpId::Reshape, {X, ints({0, -1})}), "tensor<2 x 12 x f32>");
  EXPECT_EQ(run(OpId::Reshape, {X, ints({-1})}), "tensor<24 x f32>");
  EXPECT_EQ(run(OpId::Reshape, {X, ints({2, 0, 2, -1})}),
            "tensor<2 x 3 x 2 x 2 x f32>");
  EXPECT_EQ(runError(OpId::Reshape, {X, ints({-1, -1})}),
            "target shape has more than one -1");
  EXPECT_EQ(runError(OpId::Reshape, {X, ints({5, -1})}),
            "cannot reshape tensor<2 x 3 x 4 x f32> to [5, -1]");
  EXPECT_EQ(runError(OpId::Reshape, {X, ints({5, 5})}),
            "cannot reshape tensor<2 x 3 x 4 x f32> to [5, 5]");
  EXPECT_EQ(runError(OpId::Reshape, {X, ints({2, -3})}),
            "invalid target shape entry -3");
  EXPECT_EQ(runError(OpId::Reshape, {X, ints({0, 0, 0, 0})}),
            "target shape entry 0 at index 3 copies a dim beyond the input "
            "rank 3");
  EXPECT_EQ(runError(OpId::Reshape, {X, ints({6, 4}, ElementType::I32)}),
            "input 'shape' has element type i32, expected i64");
  EXPECT_EQ(runError(OpId::Reshape, {X, ints({int64_t(1) << 62, 4})}),
            "element count exceeds 2^62");
}

TEST_F(InferTest, ReshapeAllowZero) {
  Value *X = input(f32({0, 3}));
  EXPECT_EQ(run(OpId::Reshape, {X, ints({3, 0})}, {{"allowzero", intAttr(1)}}),
            "tensor<3 x 0 x f32>");
  EXPECT_EQ(runError(OpId::Reshape, {X, ints({3, 0})}),
            "cannot reshape tensor<0 x 3 x f32> to [3, 0]");
  EXPECT_EQ(
      run(OpId::Reshape, {X, ints({3, 0, 1})}, {{"allowzero", intAttr(1)}}),
      "tensor<3 x 0 x 1 x f32>");
  EXPECT_EQ(
      runError(OpId::Reshape, {X, ints({0, -1})}, {{"allowzero", intAttr(1)}}),
      "target shape has both 0 and -1 with allowzero");
}

TEST_F(InferTest, ReshapeSymbolic) {
  Value *X = input(f32({"N", 3, 4}));
  EXPECT_EQ(run(OpId::Reshape, {X, ints({0, -1})}), "tensor<N x 12 x f32>");
  EXPECT_EQ(run(OpId::Reshape, {X, ints({-1, 12})}), "tensor<N x 12 x f32>");
  EXPECT_EQ(run(OpId::Reshape, {X, ints({-1, 6})}), "tensor<? x 6 x f32>");
  EXPECT_EQ(run(OpId::Reshape, {X, ints({2, -1})}), "tensor<2 x ? x f32>");
  // A non-constant target gives its length as the rank.
  Value *Shape = input(i64({3}));
  EXPECT_EQ(run(OpId::Reshape, {X, Shape}), "tensor<? x ? x ? x f32>");
  Value *AnyShape = input(i64({"?"}));
  EXPECT_EQ(run(OpId::Reshape, {X, AnyShape}), "tensor<* x f32>");
  Value *LongShape = input(i64({100000}));
  EXPECT_EQ(runError(OpId::Reshape, {X, LongShape}),
            "input 'shape' has 100000 entries, more than 65536");
  Value *U = input(TensorType::getUnranked(F32));
  EXPECT_EQ(run(OpId::Reshape, {U, ints({0, 5, -1})}),
            "tensor<? x 5 x ? x f32>");
}

TEST_F(InferTest, Flatten) {
  Value *X = input(f32({"N", 3, 4, 5}));
  EXPECT_EQ(run(OpId::Flatten, {X}), "tensor<N x 60 x f32>");
  EXPECT_EQ(run(OpId::Flatten, {X}, {{"axis", intAttr(0)}}),
            "tensor<1 x ? x f32>");
  EXPECT_EQ(run(OpId::Flatten, {X}, {{"axis", intAttr(-2)}}),
            "tensor<? x 20 x f32>");
  EXPECT_EQ(run(OpId::Flatten, {X}, {{"axis", intAttr(4)}}),
            "tensor<? x 1 x f32>");
  EXPECT_EQ(runError(OpId::Flatten, {X}, {{"axis", intAttr(5)}}),
            "axis 5 is out of range for rank 4");
  Value *S = input(f32({2, 3, 4}));
  EXPECT_EQ(run(OpId::Flatten, {S}, {{"axis", intAttr(2)}}),
            "tensor<6 x 4 x f32>");
  Value *U = input(TensorType::getUnranked(F32));
  EXPECT_EQ(run(OpId::Flatten, {U}), "tensor<? x ? x f32>");
}

TEST_F(InferTest, Squeeze) {
  Value *X = input(f32({1, 3, 1, "N"}));
  EXPECT_EQ(run(OpId::Squeeze, {X, ints({0, 2})}), "tensor<3 x N x f32>");
  EXPECT_EQ(run(OpId::Squeeze, {X, ints({-2})}), "tensor<1 x 3 x N x f32>");
  // A symbolic dim named in axes must be 1.
  EXPECT_EQ(run(OpId::Squeeze, {X, ints({3})}), "tensor<1 x 3 x 1 x f32>");
  EXPECT_EQ(runError(OpId::Squeeze, {X, ints({1})}),
            "cannot squeeze dim 1 of size 3");
  EXPECT_EQ(runError(OpId::Squeeze, {X, ints({4})}),
            "axis 4 is out of range for rank 4");
  // Without axes a non-static dim may or may not go.
  EXPECT_EQ(run(OpId::Squeeze, {X}), "tensor<* x f32>");
  Value *S = input(f32({1, 3, 1}));
  EXPECT_EQ(run(OpId::Squeeze, {S}), "tensor<3 x f32>");
  Value *Axes = input(i64({1}));
  EXPECT_EQ(run(OpId::Squeeze, {S, Axes}), "tensor<* x f32>");
}

TEST_F(InferTest, Unsqueeze) {
  Value *X = input(f32({3, "N"}));
  EXPECT_EQ(run(OpId::Unsqueeze, {X, ints({0})}), "tensor<1 x 3 x N x f32>");
  EXPECT_EQ(run(OpId::Unsqueeze, {X, ints({-1, 1})}),
            "tensor<3 x 1 x N x 1 x f32>");
  EXPECT_EQ(run(OpId::Unsqueeze, {X, ints({3, 0})}),
            "tensor<1 x 3 x N x 1 x f32>");
  EXPECT_EQ(runError(OpId::Unsqueeze, {X, ints({1, 1})}), "duplicate axis 1");
  EXPECT_EQ(runError(OpId::Unsqueeze, {X, ints({3})}),
            "axis 3 is out of range for rank 3");
  Value *Axes = input(i64({2}));
  EXPECT_EQ(run(OpId::Unsqueeze, {X, Axes}), "tensor<? x ? x ? x ? x f32>");
  EXPECT_EQ(runError(OpId::Unsqueeze, {X, nullptr}),
            "missing required operand 'axes'");
}

TEST_F(InferTest, Transpose) {
  Value *X = input(f32({"N", 3, 4}));
  EXPECT_EQ(run(OpId::Transpose, {X}), "tensor<4 x 3 x N x f32>");
  EXPECT_EQ(run(OpId::Transpose, {X}, {{"perm", intsAttr({0, 2, 1})}}),
            "tensor<N x 4 x 3 x f32>");
  EXPECT_EQ(runError(OpId::Transpose, {X}, {{"perm", intsAttr({0, 0, 1})}}),
            "perm [0, 0, 1] is not a permutation");
  EXPECT_EQ(runError(OpId::Transpose, {X}, {{"perm", intsAttr({1, 0})}}),
            "perm [1, 0] has 2 entries, expected 3");
  Value *U = input(TensorType::getUnranked(F32));
  EXPECT_EQ(run(OpId::Transpose, {U}, {{"perm", intsAttr({1, 0})}}),
            "tensor<? x ? x f32>");
}

TEST_F(InferTest, Shape) {
  Value *X = input(TensorType(F32,
                              {Dim::getSymbol("N"), Dim::getStatic(3),
                               Dim::getStatic(4), Dim::getStatic(5)},
                              Layout::getChannelsLast(4)));
  EXPECT_EQ(run(OpId::Shape, {X}), "tensor<4 x i64>");
  EXPECT_EQ(run(OpId::Shape, {X}, {{"start", intAttr(1)}}), "tensor<3 x i64>");
  EXPECT_EQ(run(OpId::Shape, {X}, {{"start", intAttr(-1)}}), "tensor<1 x i64>");
  EXPECT_EQ(
      run(OpId::Shape, {X}, {{"start", intAttr(1)}, {"end", intAttr(-1)}}),
      "tensor<2 x i64>");
  EXPECT_EQ(
      run(OpId::Shape, {X}, {{"start", intAttr(-10)}, {"end", intAttr(10)}}),
      "tensor<4 x i64>");
  EXPECT_EQ(run(OpId::Shape, {X}, {{"start", intAttr(3)}, {"end", intAttr(1)}}),
            "tensor<0 x i64>");
  Value *U = input(TensorType::getUnranked(F32));
  EXPECT_EQ(run(OpId::Shape, {U}), "tensor<? x i64>");
}

TEST_F(InferTest, ConstantOfShape) {
  EXPECT_EQ(run(OpId::ConstantOfShape, {ints({2, 3})}), "tensor<2 x 3 x f32>");
  Node *N = node(OpId::ConstantOfShape, {ints({4})});
  N->setAttr("value", Attribute::getTensor(
                          TensorData::fromInt64(ElementType::I32, {1}, {7})));
  EXPECT_EQ(infer(N), "tensor<4 x i32>");
  EXPECT_EQ(run(OpId::ConstantOfShape, {ints({})}), "tensor<f32>");
  Value *Shape = input(i64({3}));
  EXPECT_EQ(run(OpId::ConstantOfShape, {Shape}), "tensor<? x ? x ? x f32>");
  EXPECT_EQ(runError(OpId::ConstantOfShape, {ints({2, -1})}),
            "shape entry 1 is -1, must be non-negative");
  Node *Bad = node(OpId::ConstantOfShape, {ints({4})});
  Bad->setAttr("value",
               Attribute::getTensor(TensorData::fromFloat({2}, {1.0f, 2.0f})));
  EXPECT_EQ(error(Bad),
            "attribute 'value' must hold one element, got tensor<2 x f32>");
  EXPECT_EQ(runError(OpId::ConstantOfShape,
                     {ints({int64_t(1) << 40, int64_t(1) << 40})}),
            "product of dims exceeds 2^62");
}

TEST_F(InferTest, Constant) {
  Value *C = floats({1, 2, 3});
  EXPECT_EQ(infer(C->getDefiningNode()), "tensor<3 x f32>");
  Node *N = node(OpId::Constant, {});
  EXPECT_EQ(error(N), "missing tensor attribute 'value'");
}

TEST_F(InferTest, Gather) {
  Value *Data = input(f32({5, "N", 7}));
  Value *Idx = input(ty(ElementType::I64, {2, 3}));
  EXPECT_EQ(run(OpId::Gather, {Data, Idx}), "tensor<2 x 3 x N x 7 x f32>");
  EXPECT_EQ(run(OpId::Gather, {Data, Idx}, {{"axis", intAttr(-1)}}),
            "tensor<5 x N x 2 x 3 x f32>");
  Value *Scalar = input(ty(ElementType::I32, {}));
  EXPECT_EQ(run(OpId::Gather, {Data, Scalar}, {{"axis", intAttr(1)}}),
            "tensor<5 x 7 x f32>");
  EXPECT_EQ(runError(OpId::Gather, {Data, Idx}, {{"axis", intAttr(3)}}),
            "axis 3 is out of range for rank 3");
  Value *FIdx = input(f32({2}));
  EXPECT_EQ(runError(OpId::Gather, {Data, FIdx}),
            "input 'indices' has element type f32, expected i32 or i64");
}

TEST_F(InferTest, Relayout) {
  Value *X = input(f32({"N", 3, 4, 5}));
  Node *N = G.createNode(
      OpId::Relayout, {X}, {fresh()},
      {TensorType(ElementType::Unknown, {Dim(), Dim(), Dim(), Dim()},
                  Layout::getChannelsLast(4))});
  EXPECT_EQ(infer(N), "tensor<N x 3 x 4 x 5 x f32, nhwc>");
  Value *Y = input(f32({3, 4, 5}));
  Node *Bad = G.createNode(OpId::Relayout, {Y}, {fresh()},
                           {TensorType(F32, {Dim(), Dim(), Dim(), Dim()},
                                       Layout::getChannelsLast(4))});
  EXPECT_EQ(error(Bad), "result layout nhwc does not fit the operand's rank 3");
  // An identity result layout: relayout to the canonical order.
  Value *Z = input(
      TensorType(F32, {Dim::getStatic(1), Dim::getStatic(2), Dim::getStatic(3)},
                 Layout::getChannelsLast(3)));
  EXPECT_EQ(run(OpId::Relayout, {Z}), "tensor<1 x 2 x 3 x f32>");
}

//===----------------------------------------------------------------------===//
// Tensor ops
//===----------------------------------------------------------------------===//

TEST_F(InferTest, Concat) {
  Value *A = input(f32({"N", 3, 8})), *B = input(f32({"N", 5, 8}));
  Value *C = input(f32({"?", 2, 8}));
  EXPECT_EQ(run(OpId::Concat, {A, B, C}, {{"axis", intAttr(1)}}),
            "tensor<N x 10 x 8 x f32>");
  EXPECT_EQ(
      run(OpId::Concat, {input(f32({"?", 3, 8})), A}, {{"axis", intAttr(-1)}}),
      "tensor<N x 3 x 16 x f32>");
  EXPECT_EQ(run(OpId::Concat, {A, A}, {{"axis", intAttr(0)}}),
            "tensor<? x 3 x 8 x f32>");
  Value *Empty = input(f32({0, 3, 8}));
  EXPECT_EQ(run(OpId::Concat, {Empty, A}, {{"axis", intAttr(0)}}),
            "tensor<N x 3 x 8 x f32>");
  EXPECT_EQ(runError(OpId::Concat, {A, B}, {{"axis", intAttr(0)}}),
            "dim 1 of operand 1 is 5, expected 3");
  Value *R2 = input(f32({3, 8}));
  EXPECT_EQ(runError(OpId::Concat, {A, R2}, {{"axis", intAttr(0)}}),
            "operand 1 has rank 2, expected 3");
  EXPECT_EQ(runError(OpId::Concat, {A, B}, {{"axis", intAttr(3)}}),
            "axis 3 is out of range for rank 3");
  EXPECT_EQ(runError(OpId::Concat, {A, B}), "missing int attribute 'axis'");
  Value *U = input(TensorType::getUnranked(F32));
  EXPECT_EQ(run(OpId::Concat, {A, U}, {{"axis", intAttr(1)}}),
            "tensor<N x ? x 8 x f32>");
}

TEST_F(InferTest, Split) {
  Value *X = input(f32({"N", 6, 4}));
  Node *Even = node(OpId::Split, {X}, 3);
  Even->setAttr("axis", intAttr(1));
  EXPECT_EQ(infer(Even, 2), "tensor<N x 2 x 4 x f32>");
  Node *Sizes = node(OpId::Split, {X, ints({1, 5})}, 2);
  Sizes->setAttr("axis", intAttr(-2));
  EXPECT_EQ(infer(Sizes, 0), "tensor<N x 1 x 4 x f32>");
  EXPECT_EQ(infer(Sizes, 1), "tensor<N x 5 x 4 x f32>");
  Node *Uneven = node(OpId::Split, {X}, 4);
  Uneven->setAttr("axis", intAttr(1));
  Uneven->setAttr("num_outputs", intAttr(4));
  EXPECT_EQ(infer(Uneven, 0), "tensor<N x 2 x 4 x f32>");
  EXPECT_EQ(infer(Uneven, 3), "tensor<N x 0 x 4 x f32>");
  Node *Sym = node(OpId::Split, {X}, 2);
  EXPECT_EQ(infer(Sym, 1), "tensor<? x 6 x 4 x f32>");
  EXPECT_EQ(runError(OpId::Split, {X}, {{"axis", intAttr(1)}}, 4),
            "cannot split dim of size 6 evenly into 4 outputs");
  EXPECT_EQ(runError(OpId::Split, {X, ints({1, 2})}, {{"axis", intAttr(1)}}, 2),
            "split sizes sum to 3, expected 6");
  EXPECT_EQ(
      runError(OpId::Split, {X, ints({1, 2, 3})}, {{"axis", intAttr(1)}}, 2),
      "input 'split' has 3 entries for 2 results");
  EXPECT_EQ(runError(OpId::Split, {X}, {{"num_outputs", intAttr(3)}}, 2),
            "attribute 'num_outputs' is 3 but the op has 2 results");
  EXPECT_EQ(runError(OpId::Split, {X, ints({3, 3})},
                     {{"axis", intAttr(1)}, {"num_outputs", intAttr(2)}}, 2),
            "input 'split' and attribute 'num_outputs' cannot both be given");
  Node *Five = node(OpId::Split, {input(f32({5}))}, 4);
  Five->setAttr("num_outputs", intAttr(4));
  EXPECT_EQ(error(Five), "cannot split dim of size 5 into 4 outputs");
}

TEST_F(InferTest, Slice) {
  Value *X = input(f32({20, 10, 5}));
  EXPECT_EQ(run(OpId::Slice, {X, ints({0, 0}), ints({3, 10})}),
            "tensor<3 x 10 x 5 x f32>");
  EXPECT_EQ(
      run(OpId::Slice, {X, ints({1}), ints({1000}), ints({1}), ints({3})}),
      "tensor<20 x 3 x 5 x f32>");
  EXPECT_EQ(
      run(OpId::Slice, {X, ints({-1}), ints({-1000}), ints({-3}), ints({-1})}),
      "tensor<20 x 10 x 5 x f32>");
  EXPECT_EQ(
      run(OpId::Slice, {X, ints({20}), ints({-21}), ints({0}), ints({-7})}),
      "tensor<3 x 10 x 5 x f32>");
  EXPECT_EQ(run(OpId::Slice, {X, ints({1000}), ints({1000}), ints({1})}),
            "tensor<20 x 0 x 5 x f32>");
  EXPECT_EQ(run(OpId::Slice,
                {X, ints({0}, ElementType::I32), ints({-1}, ElementType::I32)}),
            "tensor<19 x 10 x 5 x f32>");
  EXPECT_EQ(run(OpId::Slice, {X, ints({0}), ints({INT64_MAX}), ints({0}),
                              ints({INT64_MIN})}),
            "tensor<0 x 10 x 5 x f32>");
  EXPECT_EQ(run(OpId::Slice, {X, ints({-1}), ints({INT64_MIN}), ints({0}),
                              ints({INT64_MIN})}),
            "tensor<1 x 10 x 5 x f32>");
  EXPECT_EQ(
      runError(OpId::Slice, {X, ints({0}), ints({3}), ints({0}), ints({0})}),
      "slice step cannot be 0");
  EXPECT_EQ(runError(OpId::Slice, {X, ints({0, 0}), ints({3})}),
            "input 'ends' has 1 entries, expected 2");
  EXPECT_EQ(
      runError(OpId::Slice, {X, ints({0, 0}), ints({3, 3}), ints({1, -2})}),
      "duplicate axis -2");
  EXPECT_EQ(runError(OpId::Slice, {X, ints({0}), ints({3}), ints({3})}),
            "axis 3 is out of range for rank 3");
}

TEST_F(InferTest, SliceSymbolic) {
  Value *X = input(f32({"N", "C", 5}));
  // Full ranges keep symbols.
  EXPECT_EQ(run(OpId::Slice, {X, ints({0, -1}), ints({INT64_MAX, INT64_MIN}),
                              ints({0, 1}), ints({1, -1})}),
            "tensor<N x C x 5 x f32>");
  EXPECT_EQ(run(OpId::Slice, {X, ints({1}), ints({INT64_MAX})}),
            "tensor<? x C x 5 x f32>");
  // Unknown bounds: only the sliced axes become unknown.
  Value *Starts = input(i64({1}));
  EXPECT_EQ(run(OpId::Slice, {X, Starts, ints({3}), ints({2})}),
            "tensor<N x C x ? x f32>");
  EXPECT_EQ(run(OpId::Slice, {X, Starts, ints({3})}),
            "tensor<? x C x 5 x f32>");
  Value *Axes = input(i64({1}));
  EXPECT_EQ(run(OpId::Slice, {X, ints({0}), ints({3}), Axes}),
            "tensor<? x ? x ? x f32>");
}

TEST_F(InferTest, Pad) {
  Value *X = input(f32({"N", 3, 4, 4}));
  EXPECT_EQ(run(OpId::Pad, {X, ints({0, 0, 1, 2, 0, 0, 3, 4})}),
            "tensor<N x 3 x 8 x 10 x f32>");
  EXPECT_EQ(run(OpId::Pad, {X, ints({1, 0, 0, 0, 1, 0, 0, 0})}),
            "tensor<? x 3 x 4 x 4 x f32>");
  EXPECT_EQ(run(OpId::Pad, {X, ints({1, -1, 0, 0, -1, -1, 0, 0})}),
            "tensor<N x 1 x 4 x 4 x f32>");
  EXPECT_EQ(run(OpId::Pad, {X, ints({1, 1, 2, 2}), scalarF32(0), ints({-2, 3})},
                {{"mode", strAttr("reflect")}}),
            "tensor<N x 3 x 7 x 7 x f32>");
  EXPECT_EQ(run(OpId::Pad, {X, ints({0, 0, 1, 1}), nullptr, ints({2, 3})},
                {{"mode", strAttr("wrap")}}),
            "tensor<N x 3 x 5 x 5 x f32>");
  EXPECT_EQ(runError(OpId::Pad, {X, ints({0, 0, -5, 0, 0, 0, 0, 0})}),
            "output size of dim 2 is -1, must be non-negative");
  EXPECT_EQ(runError(OpId::Pad, {X, ints({1, 1})}),
            "input 'pads' has 2 entries, expected 8");
  EXPECT_EQ(runError(OpId::Pad, {X, ints({1, 1, 1, 1, 1, 1, 1, 1})},
                     {{"mode", strAttr("mirror")}}),
            "unknown mode 'mirror'");
  Value *Pads = input(i64({4}));
  EXPECT_EQ(run(OpId::Pad, {X, Pads, nullptr, ints({1, 2})}),
            "tensor<N x ? x ? x 4 x f32>");
  Value *CV = input(ty(ElementType::F16, {}));
  EXPECT_EQ(runError(OpId::Pad, {X, ints({0, 0, 0, 0, 0, 0, 0, 0}), CV}),
            "element type mismatch: f32 vs f16");
}

TEST_F(InferTest, Softmax) {
  Value *X = input(f32({"N", 10}));
  EXPECT_EQ(run(OpId::Softmax, {X}), "tensor<N x 10 x f32>");
  EXPECT_EQ(run(OpId::LogSoftmax, {X}, {{"axis", intAttr(0)}}),
            "tensor<N x 10 x f32>");
  EXPECT_EQ(runError(OpId::Softmax, {X}, {{"axis", intAttr(2)}}),
            "axis 2 is out of range for rank 2");
  Value *S = input(f32({}));
  EXPECT_EQ(runError(OpId::Softmax, {S}), "axis -1 is out of range for rank 0");
}

TEST_F(InferTest, Reduce) {
  Value *X = input(f32({"N", 3, 4, 5}));
  EXPECT_EQ(run(OpId::ReduceMean, {X, ints({2, 3})}),
            "tensor<N x 3 x 1 x 1 x f32>");
  EXPECT_EQ(
      run(OpId::ReduceSum, {X, ints({-1, 1})}, {{"keepdims", intAttr(0)}}),
      "tensor<N x 4 x f32>");
  EXPECT_EQ(run(OpId::ReduceMax, {X}), "tensor<1 x 1 x 1 x 1 x f32>");
  EXPECT_EQ(run(OpId::ReduceMax, {X}, {{"keepdims", intAttr(0)}}),
            "tensor<f32>");
  EXPECT_EQ(run(OpId::ReduceSum, {X, ints({})},
                {{"noop_with_empty_axes", intAttr(1)}}),
            "tensor<N x 3 x 4 x 5 x f32>");
  EXPECT_EQ(run(OpId::ReduceSum, {X, ints({})}, {{"keepdims", intAttr(0)}}),
            "tensor<f32>");
  EXPECT_EQ(runError(OpId::ReduceMean, {X, ints({4})}),
            "axis 4 is out of range for rank 4");
  Value *Axes = input(i64({1}));
  Value *Y = input(f32({"N", 1, 4}));
  EXPECT_EQ(run(OpId::ReduceMean, {Y, Axes}), "tensor<? x 1 x ? x f32>");
  EXPECT_EQ(run(OpId::ReduceMean, {Y, Axes}, {{"keepdims", intAttr(0)}}),
            "tensor<* x f32>");
  EXPECT_EQ(runError(OpId::ReduceMean, {X, ints({1}, ElementType::I32)}),
            "input 'axes' has element type i32, expected i64");
}

TEST_F(InferTest, Gemm) {
  Value *A = input(f32({"M", 4})), *B = input(f32({4, 8}));
  EXPECT_EQ(run(OpId::Gemm, {A, B}), "tensor<M x 8 x f32>");
  Value *At = input(f32({4, "M"})), *Bt = input(f32({8, 4}));
  EXPECT_EQ(run(OpId::Gemm, {At, Bt},
                {{"transA", intAttr(1)}, {"transB", intAttr(1)}}),
            "tensor<M x 8 x f32>");
  Value *C = input(f32({8}));
  EXPECT_EQ(run(OpId::Gemm, {A, B, C}), "tensor<M x 8 x f32>");
  Value *C2 = input(f32({5, 1}));
  EXPECT_EQ(run(OpId::Gemm, {A, B, C2}), "tensor<5 x 8 x f32>");
  Value *BadC = input(f32({3}));
  EXPECT_EQ(runError(OpId::Gemm, {A, B, BadC}),
            "input 'C' is not broadcastable to the result: 3 vs 8 at dim 1");
  EXPECT_EQ(runError(OpId::Gemm, {A, Bt}),
            "inner dimensions do not match: 4 vs 8");
  Value *A3 = input(f32({2, 3, 4}));
  EXPECT_EQ(runError(OpId::Gemm, {A3, B}), "input 'A' has rank 3, expected 2");
}

TEST_F(InferTest, MatMul) {
  auto MM = [&](TensorType A, TensorType B) {
    return run(OpId::MatMul, {input(A), input(B)});
  };
  EXPECT_EQ(MM(f32({"N", 3, 4}), f32({4, 5})), "tensor<N x 3 x 5 x f32>");
  EXPECT_EQ(MM(f32({4}), f32({4, 5})), "tensor<5 x f32>");
  EXPECT_EQ(MM(f32({3, 4}), f32({4})), "tensor<3 x f32>");
  EXPECT_EQ(MM(f32({4}), f32({4})), "tensor<f32>");
  EXPECT_EQ(MM(f32({2, 1, 3, 4}), f32({7, 4, 5})),
            "tensor<2 x 7 x 3 x 5 x f32>");
  EXPECT_EQ(MM(f32({"B", 3, 4}), f32({"B", 4, 5})), "tensor<B x 3 x 5 x f32>");
  EXPECT_EQ(MM(f32({4}), f32({2, 4, 5})), "tensor<2 x 5 x f32>");
  EXPECT_EQ(runError(OpId::MatMul, {input(f32({3, 4})), input(f32({5, 6}))}),
            "inner dimensions do not match: 4 vs 5");
  EXPECT_EQ(
      runError(OpId::MatMul, {input(f32({2, 3, 4})), input(f32({3, 4, 5}))}),
      "operands of MatMul are not broadcastable: 2 vs 3 at dim 0");
  EXPECT_EQ(runError(OpId::MatMul, {input(f32({})), input(f32({4}))}),
            "input 'A' has rank 0, expected at least 1");
}

//===----------------------------------------------------------------------===//
// Spatial ops
//===----------------------------------------------------------------------===//

TEST_F(InferTest, Conv) {
  Value *X = input(f32({"N", 3, 224, 224}));
  Value *W = input(f32({64, 3, 7, 7})), *B = input(f32({64}));
  EXPECT_EQ(
      run(OpId::Conv, {X, W, B},
          {{"strides", intsAttr({2, 2})}, {"pads", intsAttr({3, 3, 3, 3})}}),
      "tensor<N x 64 x 112 x 112 x f32>");
  // Stride-1 "same" convolutions keep symbolic spatial dims.
  Value *Y = input(f32({"N", 3, "H", "W"}));
  Value *W3 = input(f32({8, 3, 3, 3}));
  EXPECT_EQ(run(OpId::Conv, {Y, W3}, {{"pads", intsAttr({1, 1, 1, 1})}}),
            "tensor<N x 8 x H x W x f32>");
  EXPECT_EQ(run(OpId::Conv, {Y, W3}, {{"auto_pad", strAttr("SAME_UPPER")}}),
            "tensor<N x 8 x H x W x f32>");
  EXPECT_EQ(run(OpId::Conv, {Y, W3}), "tensor<N x 8 x ? x ? x f32>");
  // 1-D and 3-D, groups, kernel_shape.
  Value *X1 = input(f32({1, 4, 10})), *W1 = input(f32({6, 2, 3}));
  EXPECT_EQ(run(OpId::Conv, {X1, W1},
                {{"group", intAttr(2)}, {"kernel_shape", intsAttr({3})}}),
            "tensor<1 x 6 x 8 x f32>");
  Value *X3 = input(f32({1, 2, 8, 8, 8})), *W3d = input(f32({4, 2, 3, 3, 3}));
  EXPECT_EQ(run(OpId::Conv, {X3, W3d}, {{"dilations", intsAttr({2, 2, 2})}}),
            "tensor<1 x 4 x 4 x 4 x 4 x f32>");
  // W with unknown spatial dims but a kernel_shape attribute.
  Value *WU = input(f32({8, 3, "?", "?"}));
  EXPECT_EQ(run(OpId::Conv, {X, WU}, {{"kernel_shape", intsAttr({5, 5})}}),
            "tensor<N x 8 x 220 x 220 x f32>");
  EXPECT_EQ(run(OpId::Conv, {X, WU}), "tensor<N x 8 x ? x ? x f32>");
}

TEST_F(InferTest, ConvErrors) {
  Value *X = input(f32({1, 3, 8, 8}));
  Value *W = input(f32({4, 3, 3, 3}));
  EXPECT_EQ(runError(OpId::Conv, {X, input(f32({4, 3, 3}))}),
            "input 'W' has rank 3, expected 4");
  EXPECT_EQ(runError(OpId::Conv, {X, W}, {{"group", intAttr(2)}}),
            "channels 3 not divisible by group 2");
  EXPECT_EQ(runError(OpId::Conv, {X, W}, {{"group", intAttr(0)}}),
            "group must be positive, got 0");
  EXPECT_EQ(runError(OpId::Conv, {X, input(f32({4, 2, 3, 3}))}),
            "input 'W' has 2 channels per group, expected 3");
  Value *X4 = input(f32({1, 4, 8, 8}));
  EXPECT_EQ(runError(OpId::Conv, {X4, input(f32({5, 2, 3, 3}))},
                     {{"group", intAttr(2)}}),
            "output channels 5 not divisible by group 2");
  EXPECT_EQ(runError(OpId::Conv, {X, W}, {{"strides", intsAttr({0, 1})}}),
            "attribute 'strides' must be positive, got 0");
  EXPECT_EQ(runError(OpId::Conv, {X, W}, {{"dilations", intsAttr({1, -1})}}),
            "attribute 'dilations' must be positive, got -1");
  EXPECT_EQ(runError(OpId::Conv, {X, W}, {{"pads", intsAttr({1, 1})}}),
            "attribute 'pads' has 2 entries, expected 4");
  EXPECT_EQ(runError(OpId::Conv, {X, W}, {{"pads", intsAttr({-1, 0, 0, 0})}}),
            "attribute 'pads' must be non-negative, got -1");
  EXPECT_EQ(runError(OpId::Conv, {X, W}, {{"kernel_shape", intsAttr({5, 5})}}),
            "kernel_shape entry 5 does not match dim 3 of input 'W' at "
            "spatial dim 0");
  EXPECT_EQ(runError(OpId::Conv, {X, W}, {{"auto_pad", strAttr("SAME")}}),
            "unknown auto_pad 'SAME'");
  EXPECT_EQ(runError(OpId::Conv, {X, W}, {{"dilations", intsAttr({4, 4})}}),
            "padded input size 8 is smaller than the dilated kernel size 9 at "
            "spatial dim 0");
  EXPECT_EQ(runError(OpId::Conv, {X, W, input(f32({5}))}),
            "input 'B' has size 5, expected 4");
  EXPECT_EQ(
      runError(OpId::Conv, {X, input(ty(ElementType::F16, {4, 3, 3, 3}))}),
      "element type mismatch: f32 vs f16");
  EXPECT_EQ(runError(OpId::Conv, {X, W},
                     {{"dilations", intsAttr({int64_t(1) << 61, 1})},
                      {"kernel_shape", intsAttr({3, 3})}}),
            "dilated kernel size of spatial dim 0 exceeds 2^62");
  EXPECT_EQ(runError(OpId::Conv, {X, input(f32({4, 3, 0, 3}))}),
            "kernel size must be positive, got 0");
  EXPECT_EQ(runError(OpId::Conv, {input(f32({1, 3})), W}),
            "input 'X' has rank 2, expected at least 3");
  EXPECT_EQ(runError(OpId::Conv, {X, nullptr}), "missing required operand 'W'");
  Value *Huge = input(f32({1, 3, int64_t(1) << 62, 8}));
  EXPECT_EQ(runError(OpId::Conv, {Huge, W},
                     {{"pads", intsAttr({int64_t(1) << 62, 0, 0, 0})}}),
            "output size of spatial dim 0 exceeds 2^62");
  Value *Max = input(f32({1, 3, 8, INT64_MAX}));
  EXPECT_EQ(runError(OpId::Conv, {Max, W}),
            "input size of spatial dim 1 exceeds 2^62");
}

TEST_F(InferTest, ConvUnranked) {
  Value *U = input(TensorType::getUnranked(F32));
  Value *W = input(f32({8, 3, 3, 3}));
  EXPECT_EQ(run(OpId::Conv, {U, W}), "tensor<? x 8 x ? x ? x f32>");
  EXPECT_EQ(run(OpId::Conv, {U, U}), "tensor<* x f32>");
  EXPECT_EQ(run(OpId::Conv, {U, U}, {{"kernel_shape", intsAttr({3})}}),
            "tensor<? x ? x ? x f32>");
}

TEST_F(InferTest, ConvTranspose) {
  Value *X = input(f32({"N", 4, 5, 5}));
  Value *W = input(f32({4, 2, 3, 3}));
  EXPECT_EQ(run(OpId::ConvTranspose, {X, W}), "tensor<N x 2 x 7 x 7 x f32>");
  EXPECT_EQ(run(OpId::ConvTranspose, {X, W},
                {{"strides", intsAttr({2, 2})},
                 {"output_padding", intsAttr({1, 0})},
                 {"pads", intsAttr({1, 1, 1, 1})}}),
            "tensor<N x 2 x 10 x 9 x f32>");
  EXPECT_EQ(run(OpId::ConvTranspose, {X, W}, {{"group", intAttr(2)}}),
            "tensor<N x 4 x 7 x 7 x f32>");
  EXPECT_EQ(
      run(OpId::ConvTranspose, {X, W},
          {{"strides", intsAttr({2, 2})}, {"auto_pad", strAttr("SAME_UPPER")}}),
      "tensor<N x 2 x 10 x 10 x f32>");
  EXPECT_EQ(run(OpId::ConvTranspose, {X, W},
                {{"output_shape", intsAttr({11, 12})},
                 {"strides", intsAttr({2, 2})}}),
            "tensor<N x 2 x 11 x 12 x f32>");
  Value *S = input(f32({1, 4, "H", "W"}));
  EXPECT_EQ(
      run(OpId::ConvTranspose, {S, W}, {{"pads", intsAttr({1, 1, 1, 1})}}),
      "tensor<1 x 2 x H x W x f32>");
  EXPECT_EQ(runError(OpId::ConvTranspose, {X, input(f32({3, 2, 3, 3}))}),
            "input 'W' has 3 input channels, expected 4");
  EXPECT_EQ(
      runError(OpId::ConvTranspose, {X, W}, {{"pads", intsAttr({5, 5, 5, 5})}}),
      "output size of spatial dim 0 is -3, must be non-negative");
  EXPECT_EQ(runError(OpId::ConvTranspose, {X, W},
                     {{"output_padding", intsAttr({-1, 0})}}),
            "attribute 'output_padding' must be non-negative, got -1");
  EXPECT_EQ(runError(OpId::ConvTranspose, {X, W}, {{"group", intAttr(3)}}),
            "channels 4 not divisible by group 3");
  EXPECT_EQ(runError(OpId::ConvTranspose, {X, W, input(f32({4}))}),
            "input 'B' has size 4, expected 2");
}

TEST_F(InferTest, Pool) {
  Value *X = input(f32({"N", 64, 112, 112}));
  Node *MP = node(OpId::MaxPool, {X}, 2);
  MP->setAttr("kernel_shape", intsAttr({3, 3}));
  MP->setAttr("strides", intsAttr({2, 2}));
  MP->setAttr("pads", intsAttr({1, 1, 1, 1}));
  EXPECT_EQ(infer(MP, 0), "tensor<N x 64 x 56 x 56 x f32>");
  EXPECT_EQ(infer(MP, 1), "tensor<N x 64 x 56 x 56 x i64>");
  EXPECT_EQ(
      run(OpId::AveragePool, {X},
          {{"kernel_shape", intsAttr({2, 2})}, {"strides", intsAttr({2, 2})}}),
      "tensor<N x 64 x 56 x 56 x f32>");
  Value *C = input(f32({1, 1, 5, 5}));
  EXPECT_EQ(run(OpId::MaxPool, {C},
                {{"kernel_shape", intsAttr({2, 2})},
                 {"strides", intsAttr({2, 2})},
                 {"ceil_mode", intAttr(1)}}),
            "tensor<1 x 1 x 3 x 3 x f32>");
  EXPECT_EQ(runError(OpId::MaxPool, {X}), "missing attribute 'kernel_shape'");
  EXPECT_EQ(runError(OpId::MaxPool, {X}, {{"kernel_shape", intsAttr({3})}}),
            "attribute 'kernel_shape' has 1 entries, expected 2");
  EXPECT_EQ(runError(OpId::MaxPool, {X}, {{"kernel_shape", intsAttr({0, 3})}}),
            "attribute 'kernel_shape' must be positive, got 0");
  EXPECT_EQ(
      runError(OpId::AveragePool, {C}, {{"kernel_shape", intsAttr({6, 6})}}),
      "padded input size 5 is smaller than the dilated kernel size 6 at "
      "spatial dim 0");
  Value *U = input(TensorType::getUnranked(F32));
  EXPECT_EQ(run(OpId::MaxPool, {U}, {{"kernel_shape", intsAttr({3})}}),
            "tensor<? x ? x ? x f32>");
}

TEST_F(InferTest, GlobalPool) {
  Value *X = input(f32({"N", 64, 7, 7}));
  EXPECT_EQ(run(OpId::GlobalAveragePool, {X}), "tensor<N x 64 x 1 x 1 x f32>");
  Value *X3 = input(f32({2, 8, 3, 4, 5}));
  EXPECT_EQ(run(OpId::GlobalMaxPool, {X3}), "tensor<2 x 8 x 1 x 1 x 1 x f32>");
  EXPECT_EQ(runError(OpId::GlobalMaxPool, {input(f32({2, 8}))}),
            "input 'X' has rank 2, expected at least 3");
}

TEST_F(InferTest, BatchNormalization) {
  Value *X = input(f32({"N", 16, 8, 8}));
  Value *P = input(f32({16}));
  EXPECT_EQ(run(OpId::BatchNormalization, {X, P, P, P, P}),
            "tensor<N x 16 x 8 x 8 x f32>");
  Node *Train = node(OpId::BatchNormalization, {X, P, P, P, P}, 3);
  Train->setAttr("training_mode", intAttr(1));
  EXPECT_EQ(infer(Train, 2), "tensor<16 x f32>");
  EXPECT_EQ(runError(OpId::BatchNormalization, {X, P, P, P, P}, {}, 3),
            "running_mean and running_var results require training_mode = 1");
  Value *Bad = input(f32({8}));
  EXPECT_EQ(runError(OpId::BatchNormalization, {X, P, P, Bad, P}),
            "input 'input_mean' has size 8, expected 16");
  EXPECT_EQ(runError(OpId::BatchNormalization, {X, P, P, P, nullptr}),
            "missing required operand 'input_var'");
  // Y follows X; the statistics may have another float type.
  Value *XH = input(ty(ElementType::F16, {2, 16}));
  Node *Mixed = node(OpId::BatchNormalization, {XH, P, P, P, P}, 3);
  Mixed->setAttr("training_mode", intAttr(1));
  EXPECT_EQ(infer(Mixed, 0), "tensor<2 x 16 x f16>");
  EXPECT_EQ(infer(Mixed, 1), "tensor<16 x f32>");
}

TEST_F(InferTest, InstanceNormalization) {
  Value *X = input(f32({"N", 16, 8, 8}));
  Value *P = input(f32({16}));
  EXPECT_EQ(run(OpId::InstanceNormalization, {X, P, P}),
            "tensor<N x 16 x 8 x 8 x f32>");
  EXPECT_EQ(runError(OpId::InstanceNormalization, {X, input(f32({3})), P}),
            "input 'scale' has size 3, expected 16");
}

TEST_F(InferTest, Resize) {
  Value *X = input(f32({"N", 3, 16, 20}));
  EXPECT_EQ(run(OpId::Resize, {X, nullptr, floats({1, 1, 2, 0.5f})}),
            "tensor<N x 3 x 32 x 10 x f32>");
  EXPECT_EQ(run(OpId::Resize, {X, nullptr, floats({1, 1, 0.6f, 0.6f})}),
            "tensor<N x 3 x 9 x 12 x f32>");
  EXPECT_EQ(run(OpId::Resize, {X, nullptr, floats({}), ints({2, 3, 8, 8})}),
            "tensor<2 x 3 x 8 x 8 x f32>");
  EXPECT_EQ(run(OpId::Resize, {X, nullptr, nullptr, ints({8, 8})},
                {{"axes", intsAttr({2, 3})}}),
            "tensor<N x 3 x 8 x 8 x f32>");
  EXPECT_EQ(run(OpId::Resize, {X, nullptr, nullptr, ints({8, 8})},
                {{"axes", intsAttr({2, 3})},
                 {"keep_aspect_ratio_policy", strAttr("not_larger")}}),
            "tensor<N x 3 x 6 x 8 x f32>");
  EXPECT_EQ(run(OpId::Resize, {X, nullptr, nullptr, ints({8, 8})},
                {{"axes", intsAttr({-2, -1})},
                 {"keep_aspect_ratio_policy", strAttr("not_smaller")}}),
            "tensor<N x 3 x 8 x 10 x f32>");
  Value *Scales = input(f32({4}));
  EXPECT_EQ(run(OpId::Resize, {X, nullptr, Scales}),
            "tensor<? x ? x ? x ? x f32>");
  EXPECT_EQ(runError(OpId::Resize, {X}),
            "one of 'scales' and 'sizes' must be given");
  EXPECT_EQ(runError(OpId::Resize,
                     {X, nullptr, floats({1, 1, 2, 2}), ints({1, 3, 4, 4})}),
            "only one of 'scales' and 'sizes' may be given");
  EXPECT_EQ(runError(OpId::Resize, {X, nullptr, floats({2, 2})}),
            "input 'scales' has 2 entries, expected 4");
  EXPECT_EQ(runError(OpId::Resize, {X, nullptr, floats({1, 1, 0, 2})}),
            "scale must be positive, got 0");
  EXPECT_EQ(runError(OpId::Resize, {X, nullptr, nullptr, ints({1, 2})},
                     {{"axes", intsAttr({2, 2})}}),
            "duplicate axis 2");
  EXPECT_EQ(runError(OpId::Resize,
                     {X, nullptr, nullptr, ints({1, 2}, ElementType::I32)},
                     {{"axes", intsAttr({2, 3})}}),
            "input 'sizes' has element type i32, expected i64");
}

TEST_F(InferTest, DepthToSpace) {
  Value *X = input(f32({"N", 18, 4, "W"}));
  EXPECT_EQ(run(OpId::DepthToSpace, {X}, {{"blocksize", intAttr(3)}}),
            "tensor<N x 2 x 12 x ? x f32>");
  EXPECT_EQ(run(OpId::DepthToSpace, {X},
                {{"blocksize", intAttr(3)}, {"mode", strAttr("CRD")}}),
            "tensor<N x 2 x 12 x ? x f32>");
  EXPECT_EQ(runError(OpId::DepthToSpace, {X}, {{"blocksize", intAttr(4)}}),
            "channels 18 not divisible by blocksize^2 = 16");
  EXPECT_EQ(runError(OpId::DepthToSpace, {X}, {{"blocksize", intAttr(0)}}),
            "blocksize must be positive, got 0");
  EXPECT_EQ(runError(OpId::DepthToSpace, {X},
                     {{"blocksize", intAttr(3)}, {"mode", strAttr("XYZ")}}),
            "unknown mode 'XYZ'");
  EXPECT_EQ(runError(OpId::DepthToSpace, {input(f32({1, 4, 4}))},
                     {{"blocksize", intAttr(2)}}),
            "input 'input' has rank 3, expected 4");
}

TEST_F(InferTest, SpaceToDepth) {
  Value *X = input(f32({"N", 3, 8, 6}));
  EXPECT_EQ(run(OpId::SpaceToDepth, {X}, {{"blocksize", intAttr(2)}}),
            "tensor<N x 12 x 4 x 3 x f32>");
  EXPECT_EQ(runError(OpId::SpaceToDepth, {X}, {{"blocksize", intAttr(4)}}),
            "dim 3 of size 6 not divisible by blocksize 4");
  EXPECT_EQ(runError(OpId::SpaceToDepth, {X},
                     {{"blocksize", intAttr(int64_t(1) << 32)}}),
            "blocksize 4294967296 is too large");
}

TEST_F(InferTest, EveryOpRejectsMissingFirstOperand) {
  // Inference must not crash on malformed nodes built through the API.
  for (const OpInfo &Info : getAllOps()) {
    if (Info.MinOperands == 0)
      continue;
    Node *N = node(Info.Id, {nullptr, nullptr});
    EXPECT_NE(error(N), "") << Info.Name.str();
  }
}

TEST_F(InferTest, DriverRefinesDeclaredTypes) {
  Value *X = input(f32({"N", 3, 8, 8}));
  Value *W = input(f32({4, 3, 3, 3}));
  Node *Conv =
      G.createNode(OpId::Conv, {X, W}, {"y"},
                   {TensorType(F32, {Dim::getSymbol("N"), Dim(), Dim(), Dim()},
                               Layout::getChannelsLast(4))});
  G.addOutput(Conv->getResult(0));
  ASSERT_FALSE(llvm::errorToBool(inferShapes(G)));
  EXPECT_EQ(Conv->getResult(0)->getType().str(),
            "tensor<N x 4 x 6 x 6 x f32, nhwc>");
  // A contradicting declaration is an error.
  Node *Bad = G.createNode(OpId::Relu, {X}, {"z"}, {f32({1, 3, 8, 8})});
  (void)Bad;
  X->setType(f32({2, 3, 8, 8}));
  llvm::Error E = inferShapes(G);
  ASSERT_TRUE(static_cast<bool>(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("result 'z' declared as"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Output size sweeps against hand formulas
//===----------------------------------------------------------------------===//

struct WindowCase {
  int64_t In, Kernel, Stride, Dilation, PadBegin, PadEnd;
};

std::vector<WindowCase> windowCases() {
  std::vector<WindowCase> Cases;
  for (int64_t In : {1, 5, 7, 8, 13})
    for (int64_t K : {1, 2, 3})
      for (int64_t S : {1, 2, 3})
        for (int64_t Dil : {1, 2})
          for (auto [PB, PE] :
               {std::pair<int64_t, int64_t>{0, 0}, {1, 1}, {0, 2}, {2, 1}})
            Cases.push_back({In, K, S, Dil, PB, PE});
  return Cases;
}

class WindowSweep : public InferTest,
                    public ::testing::WithParamInterface<WindowCase> {
protected:
  /// Output spatial size of a 1-D op on [1, 2, In], or -1 on error.
  int64_t outputSize(OpId Id,
                     std::vector<std::pair<const char *, Attribute>> Attrs) {
    const WindowCase &C = GetParam();
    Value *X = input(f32({1, 2, C.In}));
    std::vector<Value *> Ops = {X};
    if (Id == OpId::Conv)
      Ops.push_back(input(f32({4, 2, C.Kernel})));
    if (Id == OpId::ConvTranspose)
      Ops.push_back(input(f32({2, 4, C.Kernel})));
    Node *N = node(Id, Ops, 1);
    if (Id != OpId::Conv && Id != OpId::ConvTranspose)
      N->setAttr("kernel_shape", intsAttr({C.Kernel}));
    N->setAttr("strides", intsAttr({C.Stride}));
    N->setAttr("dilations", intsAttr({C.Dilation}));
    for (auto &A : Attrs)
      N->setAttr(A.first, A.second);
    llvm::SmallVector<TensorType, 2> R;
    if (llvm::Error E = inferResultTypes(*N, R)) {
      llvm::consumeError(std::move(E));
      return -1;
    }
    return R[0].getDim(2).getSize();
  }
  int64_t dilatedKernel() const {
    return (GetParam().Kernel - 1) * GetParam().Dilation + 1;
  }
};

TEST_P(WindowSweep, ExplicitPads) {
  const WindowCase &C = GetParam();
  int64_t Span = C.In + C.PadBegin + C.PadEnd - dilatedKernel();
  int64_t Want = Span < 0 ? -1 : Span / C.Stride + 1;
  auto Pads = std::make_pair("pads", intsAttr({C.PadBegin, C.PadEnd}));
  EXPECT_EQ(outputSize(OpId::Conv, {Pads}), Want);
  EXPECT_EQ(outputSize(OpId::MaxPool, {Pads}), Want);
  EXPECT_EQ(outputSize(OpId::AveragePool, {Pads}), Want);
}

TEST_P(WindowSweep, CeilMode) {
  const WindowCase &C = GetParam();
  int64_t Span = C.In + C.PadBegin + C.PadEnd - dilatedKernel();
  int64_t Want = -1;
  if (Span >= 0) {
    Want =
        static_cast<int64_t>(std::ceil(static_cast<double>(Span) / C.Stride)) +
        1;
    // PyTorch/ONNX: the last window must start inside input or left pad.
    if ((Want - 1) * C.Stride >= C.In + C.PadBegin)
      --Want;
  }
  EXPECT_EQ(
      outputSize(OpId::MaxPool, {{"pads", intsAttr({C.PadBegin, C.PadEnd})},
                                 {"ceil_mode", intAttr(1)}}),
      Want);
}

TEST_P(WindowSweep, AutoPad) {
  const WindowCase &C = GetParam();
  int64_t Same = (C.In + C.Stride - 1) / C.Stride;
  for (const char *Mode : {"SAME_UPPER", "SAME_LOWER"}) {
    EXPECT_EQ(outputSize(OpId::Conv, {{"auto_pad", strAttr(Mode)}}), Same)
        << Mode;
    EXPECT_EQ(outputSize(OpId::MaxPool, {{"auto_pad", strAttr(Mode)}}), Same)
        << Mode;
  }
  int64_t Valid = C.In < dilatedKernel()
                      ? -1
                      : (C.In - dilatedKernel() + C.Stride) / C.Stride;
  EXPECT_EQ(outputSize(OpId::Conv, {{"auto_pad", strAttr("VALID")}}), Valid);
  // Explicit pads are ignored under auto_pad.
  EXPECT_EQ(outputSize(OpId::AveragePool,
                       {{"auto_pad", strAttr("VALID")},
                        {"pads", intsAttr({C.PadBegin, C.PadEnd})}}),
            Valid);
}

TEST_P(WindowSweep, ConvTranspose) {
  const WindowCase &C = GetParam();
  for (int64_t OutPad : {0, 1}) {
    int64_t Want = C.Stride * (C.In - 1) + OutPad + dilatedKernel() -
                   C.PadBegin - C.PadEnd;
    EXPECT_EQ(outputSize(OpId::ConvTranspose,
                         {{"pads", intsAttr({C.PadBegin, C.PadEnd})},
                          {"output_padding", intsAttr({OutPad})}}),
              Want < 0 ? -1 : Want);
  }
  EXPECT_EQ(
      outputSize(OpId::ConvTranspose, {{"auto_pad", strAttr("SAME_LOWER")}}),
      C.In * C.Stride);
  EXPECT_EQ(outputSize(OpId::ConvTranspose, {{"auto_pad", strAttr("VALID")}}),
            C.Stride * (C.In - 1) + dilatedKernel());
}

INSTANTIATE_TEST_SUITE_P(Sizes, WindowSweep,
                         ::testing::ValuesIn(windowCases()));

} // namespace

//===----------------------------------------------------------------------===//
// Robustness: random malformed nodes
//===----------------------------------------------------------------------===//

namespace {
/// Deterministic random nodes of every op with random operand types,
/// constant operands and attributes (extreme values included): inference
/// must return types or errors, never crash (run under the sanitizers).
class RandomNodes {
public:
  explicit RandomNodes(unsigned Seed) : Rng(Seed) {}

  int64_t pick(std::initializer_list<int64_t> Values) {
    std::vector<int64_t> V(Values);
    return V[Rng() % V.size()];
  }
  int64_t anyInt() {
    return pick({INT64_MIN, -MaxBig, -7, -2, -1, 0, 0, 1, 1, 2, 3, 4, 5, 8,
                 MaxBig, INT64_MAX});
  }
  Dim anyDim() {
    switch (Rng() % 6) {
    case 0:
      return Dim::getUnknown();
    case 1:
      return Dim::getSymbol(Rng() % 2 ? "N" : "M");
    default:
      return Dim::getStatic(pick({0, 1, 1, 2, 3, 4, 6, 8, MaxBig, INT64_MAX}));
    }
  }
  ElementType anyElt() {
    static const ElementType Elts[] = {
        ElementType::Unknown, ElementType::F32, ElementType::F32,
        ElementType::F16,     ElementType::I64, ElementType::I64,
        ElementType::I32,     ElementType::U8,  ElementType::Bool};
    return Elts[Rng() % (sizeof(Elts) / sizeof(Elts[0]))];
  }
  TensorType anyType() {
    if (Rng() % 8 == 0)
      return TensorType::getUnranked(anyElt());
    std::vector<Dim> Dims(Rng() % 6);
    for (Dim &D : Dims)
      D = anyDim();
    Layout L;
    if (Dims.size() >= 3 && Rng() % 4 == 0)
      L = Layout::getChannelsLast(Dims.size());
    return TensorType(anyElt(), Dims, L);
  }
  Value *anyOperand(Graph &G) {
    switch (Rng() % 5) {
    case 0:
      return nullptr;
    case 1: {
      // A constant list of integers (shapes, axes, pads, ...).
      std::vector<int64_t> V(Rng() % 6);
      for (int64_t &X : V)
        X = anyInt();
      ElementType Elt = Rng() % 4 ? ElementType::I64 : ElementType::I32;
      auto Data =
          TensorData::fromInt64(Elt, {static_cast<int64_t>(V.size())}, V);
      Node *C = G.createNode(OpId::Constant, {}, {G.makeUniqueName("c")},
                             {Data->getType()});
      C->setAttr("value", Attribute::getTensor(Data));
      return C->getResult(0);
    }
    case 2: {
      std::vector<float> V(Rng() % 6);
      for (float &X : V)
        X = static_cast<float>(pick({-1, 0, 1, 2, 3})) * 0.5f;
      auto Data = TensorData::fromFloat({static_cast<int64_t>(V.size())}, V);
      Node *C = G.createNode(OpId::Constant, {}, {G.makeUniqueName("c")},
                             {Data->getType()});
      C->setAttr("value", Attribute::getTensor(Data));
      return C->getResult(0);
    }
    default:
      return G.addInput(G.makeUniqueName("x"), anyType());
    }
  }
  Attribute anyAttr(AttrKind Kind) {
    switch (Kind) {
    case AttrKind::Int:
      return Attribute::getInt(anyInt());
    case AttrKind::Float:
      return Attribute::getFloat(0.5f);
    case AttrKind::String:
      return Attribute::getString(
          Rng() % 2 ? "NOTSET"
                    : (Rng() % 2 ? "SAME_UPPER" : (Rng() % 2 ? "VALID" : "x")));
    case AttrKind::Ints: {
      std::vector<int64_t> V(Rng() % 7);
      for (int64_t &X : V)
        X = Rng() % 3 ? pick({1, 1, 2, 3}) : anyInt();
      return Attribute::getInts(V);
    }
    case AttrKind::Floats:
      return Attribute::getFloats({1.0f});
    case AttrKind::Strings:
      return Attribute::getStrings({"a"});
    case AttrKind::Tensor:
      return Attribute::getTensor(Rng() % 2
                                      ? TensorData::fromFloat({1}, {1})
                                      : TensorData::fromFloat({2}, {1, 2}));
    case AttrKind::Graph: {
      // A branch passing one of its inputs through (or none: malformed).
      auto B = std::make_shared<Graph>("branch");
      unsigned NumIn = Rng() % 3;
      for (unsigned I = 0; I < NumIn; ++I)
        B->addInput("in" + std::to_string(I), anyType());
      if (NumIn)
        B->addOutput(B->getInputs()[Rng() % NumIn]);
      return Attribute::getGraph(std::move(B));
    }
    }
    return Attribute();
  }

private:
  static constexpr int64_t MaxBig = int64_t(1) << 62;
  std::mt19937 Rng;
};
} // namespace

TEST(InferRobustness, RandomNodesNeverCrash) {
  RandomNodes R(12345);
  std::mt19937 Rng(777);
  unsigned Inferred = 0;
  for (unsigned Iter = 0; Iter < 300; ++Iter) {
    for (const OpInfo &Info : getAllOps()) {
      Graph G;
      std::vector<Value *> Ops;
      unsigned NumOps = Info.MinOperands +
                        Rng() % (Info.MaxOperands < 0
                                     ? 4
                                     : Info.MaxOperands - Info.MinOperands + 1);
      for (unsigned I = 0; I < NumOps; ++I)
        Ops.push_back(R.anyOperand(G));
      unsigned NumResults = 1 + Rng() % 3;
      std::vector<std::string> Names;
      std::vector<TensorType> Types;
      for (unsigned I = 0; I < NumResults; ++I) {
        Names.push_back(G.makeUniqueName("r" + std::to_string(I)));
        Types.push_back(Rng() % 3 ? TensorType() : R.anyType());
      }
      Node *N = G.createNode(Info.Id, Ops, Names, Types);
      for (const AttrSpec &Spec : Info.Attrs)
        if (Rng() % 2)
          N->setAttr(Spec.Name, R.anyAttr(Spec.Kind));
      llvm::SmallVector<TensorType, 4> Results;
      if (llvm::Error E = inferResultTypes(*N, Results)) {
        llvm::consumeError(std::move(E));
        continue;
      }
      ++Inferred;
      ASSERT_GE(Results.size(), NumResults) << Info.Name.str();
    }
  }
  EXPECT_GT(Inferred, 0u);
}
