//===- ReferenceTest.cpp - Reference interpreter and its kernels ----------===//
//
// Tensor strides and conversions, hand-computed cases of the elementwise
// and data-movement kernels (each run with identity and with permuted
// layouts), interpreter errors, and a layout property test: a graph gives
// the same outputs with every value channels-first and channels-last.
//
//===----------------------------------------------------------------------===//

#include "strider/Runtime/Reference.h"
#include "strider/Runtime/Npy.h"
#include "strider/Runtime/Tensor.h"

#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/IR/Verifier.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace strider;
using namespace strider::runtime;

namespace {

const ElementType F32 = ElementType::F32;
const ElementType I64 = ElementType::I64;

/// A tensor of logical shape \p Shape holding \p Values in row-major order.
Tensor makeTensor(ElementType Elt, std::vector<int64_t> Shape,
                  std::vector<double> Values, Layout L = Layout()) {
  Tensor T(Elt, Shape, L);
  EXPECT_EQ(int64_t(Values.size()), T.getNumElements());
  size_t K = 0;
  forEachIndex(Shape, [&](llvm::ArrayRef<int64_t> I) {
    T.setDouble(T.getOffset(I), Values[K++]);
  });
  return T;
}

Tensor f32(std::vector<int64_t> Shape, std::vector<double> Values) {
  return makeTensor(F32, std::move(Shape), std::move(Values));
}
Tensor i64(std::vector<int64_t> Shape, std::vector<double> Values) {
  return makeTensor(I64, std::move(Shape), std::move(Values));
}

/// The elements of \p T in logical row-major order.
std::vector<double> values(const Tensor &T) {
  std::vector<double> R;
  forEachIndex(T.getShape(), [&](llvm::ArrayRef<int64_t> I) {
    R.push_back(T.getDouble(T.getOffset(I)));
  });
  return R;
}

/// Reversed dims: a non-identity layout for any rank >= 2.
Layout reversedLayout(unsigned Rank) {
  if (Rank < 2)
    return Layout();
  std::vector<unsigned> Perm;
  for (unsigned I = Rank; I-- > 0;)
    Perm.push_back(I);
  return Layout(Perm);
}

/// One op to run: operands (null = missing), attributes, result types.
struct OpCase {
  OpId Id;
  std::vector<const Tensor *> Operands;
  std::vector<std::pair<std::string, Attribute>> Attrs;
  std::vector<TensorType> ResultTypes;
};

/// Runs \p C as a one-node graph; with \p Permuted every operand and result
/// of rank >= 2 gets a reversed layout. Returns the results in order.
llvm::Expected<std::vector<Tensor>> runOp(const OpCase &C, bool Permuted) {
  Graph G;
  std::vector<Value *> Ops;
  TensorMap Inputs;
  for (size_t I = 0; I != C.Operands.size(); ++I) {
    const Tensor *T = C.Operands[I];
    if (!T) {
      Ops.push_back(nullptr);
      continue;
    }
    std::string Name = "in" + std::to_string(I);
    Layout L = Permuted ? reversedLayout(T->getRank()) : Layout();
    Ops.push_back(G.addInput(Name, T->getType().withLayout(L)));
    Inputs[Name] = *T;
  }
  std::vector<std::string> Names;
  std::vector<TensorType> Types;
  for (size_t I = 0; I != C.ResultTypes.size(); ++I) {
    Names.push_back("out" + std::to_string(I));
    const TensorType &T = C.ResultTypes[I];
    Types.push_back(
        T.withLayout(Permuted ? reversedLayout(T.getRank()) : Layout()));
  }
  Node *N = G.createNode(C.Id, Ops, Names, Types);
  for (const auto &A : C.Attrs)
    N->setAttr(A.first, A.second);
  for (unsigned I = 0; I != N->getNumResults(); ++I)
    G.addOutput(N->getResult(I));
  llvm::Expected<TensorMap> Out = runReference(G, Inputs);
  if (!Out)
    return Out.takeError();
  std::vector<Tensor> R;
  for (size_t I = 0; I != Names.size(); ++I) {
    const Tensor &T = Out->at(Names[I]);
    EXPECT_EQ(T.getType(), Types[I]);
    R.push_back(T);
  }
  return R;
}

/// Checks result \p Result of \p C in both layouts against \p Expected.
void expectOp(const OpCase &C, std::vector<double> Expected,
              unsigned Result = 0, double Tol = 1e-6) {
  for (bool Permuted : {false, true}) {
    SCOPED_TRACE(Permuted ? "permuted layouts" : "identity layouts");
    llvm::Expected<std::vector<Tensor>> R = runOp(C, Permuted);
    ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
    std::vector<double> Got = values((*R)[Result]);
    ASSERT_EQ(Got.size(), Expected.size());
    for (size_t I = 0; I != Got.size(); ++I) {
      if (std::isnan(Expected[I]))
        EXPECT_TRUE(std::isnan(Got[I])) << "element " << I;
      else if (std::isinf(Expected[I]))
        EXPECT_EQ(Got[I], Expected[I]) << "element " << I;
      else
        EXPECT_NEAR(Got[I], Expected[I], Tol) << "element " << I;
    }
  }
}

/// The error message of running \p C (identity layouts).
std::string opError(const OpCase &C) {
  llvm::Expected<std::vector<Tensor>> R = runOp(C, false);
  if (R)
    return "<no error>";
  return llvm::toString(R.takeError());
}

TensorType ty(ElementType Elt, std::vector<int64_t> Shape) {
  return TensorType::get(Elt, Shape);
}
Attribute ints(std::vector<int64_t> V) { return Attribute::getInts(V); }
Attribute intAttr(int64_t V) { return Attribute::getInt(V); }

//===----------------------------------------------------------------------===//
// Tensor.
//===----------------------------------------------------------------------===//

TEST(TensorTest, StridesFollowTheLayout) {
  Tensor Id(F32, {2, 3, 4, 5});
  EXPECT_EQ(Id.getStrides(), llvm::makeArrayRef<int64_t>({60, 20, 5, 1}));
  Tensor Nhwc(F32, {2, 3, 4, 5}, Layout::getChannelsLast(4));
  EXPECT_EQ(Nhwc.getStrides(), llvm::makeArrayRef<int64_t>({60, 1, 15, 3}));
  EXPECT_EQ(Nhwc.getOffset({1, 2, 3, 4}), 60 + 2 + 45 + 12);
  Tensor Rev(F32, {2, 3, 4}, Layout({2, 1, 0}));
  EXPECT_EQ(Rev.getStrides(), llvm::makeArrayRef<int64_t>({1, 2, 6}));
  Tensor Scalar(I64, {});
  EXPECT_EQ(Scalar.getNumElements(), 1);
  EXPECT_EQ(Scalar.getOffset({}), 0);
  Tensor Empty(F32, {2, 0, 3});
  EXPECT_EQ(Empty.getNumElements(), 0);
  EXPECT_TRUE(Empty.getBytes().empty());
}

TEST(TensorTest, ElementConversions) {
  struct Case {
    ElementType Elt;
    double In, AsDouble;
    int64_t AsInt;
  };
  const Case Cases[] = {
      {ElementType::F32, 2.75, 2.75, 2},
      {ElementType::F64, -2.75, -2.75, -2},
      {ElementType::F16, 1.5, 1.5, 1},
      {ElementType::F16, 0.1, 0.0999755859375, 0},
      {ElementType::BF16, -3.0, -3.0, -3},
      {ElementType::I8, -7.9, -7, -7},
      {ElementType::U8, 200.5, 200, 200},
      {ElementType::I16, -300, -300, -300},
      {ElementType::U16, 60000, 60000, 60000},
      {ElementType::I32, -2.5, -2, -2},
      {ElementType::U32, 4000000000.0, 4000000000.0, 4000000000},
      {ElementType::I64, 1e12, 1e12, 1000000000000},
      {ElementType::U64, 5, 5, 5},
      {ElementType::Bool, 0.25, 1, 1},
      {ElementType::Bool, 0, 0, 0},
  };
  for (const Case &C : Cases) {
    SCOPED_TRACE(getElementTypeName(C.Elt).str());
    Tensor T(C.Elt, {2});
    EXPECT_EQ(T.getBytes().size(), 2 * getElementByteSize(C.Elt));
    T.setDouble(1, C.In);
    EXPECT_EQ(T.getDouble(1), C.AsDouble);
    EXPECT_EQ(T.getInt(1), C.AsInt);
    EXPECT_EQ(T.getDouble(0), 0.0);
    T.setInt(0, C.AsInt);
    EXPECT_EQ(T.getInt(0), C.AsInt);
  }
  // Narrowing integer stores wrap; huge and NaN floats do not trap.
  Tensor I8(ElementType::I8, {1});
  I8.setInt(0, 130);
  EXPECT_EQ(I8.getInt(0), -126);
  Tensor I64T(I64, {1});
  I64T.setDouble(0, NAN);
  EXPECT_EQ(I64T.getInt(0), 0);
  I64T.setDouble(0, 1e300);
  EXPECT_EQ(I64T.getInt(0), INT64_MAX);
  Tensor F(F32, {1});
  F.setDouble(0, NAN);
  EXPECT_EQ(F.getInt(0), 0);
}

TEST(TensorTest, WithLayoutAndData) {
  Tensor T = makeTensor(ElementType::I16, {2, 3, 2},
                        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Tensor C = T.withLayout(Layout::getChannelsLast(3));
  EXPECT_EQ(C.getLayout(), Layout::getChannelsLast(3));
  EXPECT_EQ(values(C), values(T));
  // Physical order of nwc: for n, w, c.
  std::vector<double> Phys;
  for (int64_t I = 0; I != C.getNumElements(); ++I)
    Phys.push_back(C.getDouble(I));
  EXPECT_EQ(Phys, (std::vector<double>{0, 2, 4, 1, 3, 5, 6, 8, 10, 7, 9, 11}));
  Tensor Back = C.withLayout(Layout());
  EXPECT_EQ(Back.getBytes(), T.getBytes());

  TensorDataRef D = C.toData();
  EXPECT_EQ(D->getType(), C.getType());
  EXPECT_EQ(D->getDouble(3), 1.0);
  Tensor R = Tensor::fromData(*D);
  EXPECT_EQ(R.getType(), C.getType());
  EXPECT_EQ(R.getBytes(), C.getBytes());

  Tensor Z = Tensor::zeros(
      TensorType::get(ElementType::BF16, {3, 1, 2}, Layout({1, 2, 0})));
  EXPECT_EQ(Z.getStrides(), llvm::makeArrayRef<int64_t>({1, 6, 3}));
  EXPECT_EQ(values(Z), std::vector<double>(6, 0.0));
}

TEST(TensorTest, ViewsReadAndWriteTheCallersBytesAndCopiesOwnTheirs) {
  std::vector<float> Buf = {0, 1, 2, 3, 4, 5};
  auto *Data = reinterpret_cast<uint8_t *>(Buf.data());
  Tensor V = Tensor::view(ElementType::F32, {1, 3, 2},
                          Layout::getChannelsLast(3), Data);
  EXPECT_TRUE(V.isView());
  EXPECT_EQ(V.getBytes().data(), Data);
  EXPECT_EQ(V.getBytes().size(), Buf.size() * sizeof(float));
  // Logical (0, c, w) is physical w * 3 + c.
  EXPECT_EQ(V.getDouble(V.getOffset({0, 2, 1})), 5.0);
  V.setDouble(V.getOffset({0, 1, 0}), 7.0);
  EXPECT_EQ(Buf[1], 7.0f);

  Tensor Copy = V;
  EXPECT_FALSE(Copy.isView());
  EXPECT_NE(Copy.getBytes().data(), Data);
  EXPECT_EQ(Copy.getBytes(), V.getBytes());
  Copy.setDouble(0, 9.0);
  EXPECT_EQ(Buf[0], 0.0f);
  Tensor Assigned;
  Assigned = V;
  EXPECT_FALSE(Assigned.isView());
  EXPECT_EQ(values(Assigned), values(V));

  Tensor Moved = std::move(V);
  EXPECT_TRUE(Moved.isView());
  EXPECT_EQ(Moved.getBytes().data(), Data);
  EXPECT_EQ(values(Moved.withLayout(Layout())),
            (std::vector<double>{0, 3, 7, 4, 2, 5}));

  Tensor Empty = Tensor::view(ElementType::F32, {0, 3}, Layout(), Data);
  EXPECT_FALSE(Empty.isView());
  EXPECT_TRUE(Empty.getBytes().empty());
}

TEST(TensorTest, BroadcastStrides) {
  Tensor B(F32, {3, 1}, Layout({1, 0}));
  EXPECT_EQ(getBroadcastStrides(B, {2, 3, 4}),
            (llvm::SmallVector<int64_t, 6>{0, 1, 0}));
}

//===----------------------------------------------------------------------===//
// Elementwise kernels.
//===----------------------------------------------------------------------===//

TEST(ElementwiseKernelTest, UnaryActivations) {
  Tensor X = f32({2, 3}, {-2, -0.5, 0, 0.5, 1, 3});
  TensorType T = ty(F32, {2, 3});
  auto Map = [&](double (*F)(double)) {
    std::vector<double> R;
    for (double V : values(X))
      R.push_back(F(V));
    return R;
  };
  expectOp({OpId::Relu, {&X}, {}, {T}}, {0, 0, 0, 0.5, 1, 3});
  expectOp({OpId::LeakyRelu, {&X}, {{"alpha", Attribute::getFloat(0.5f)}}, {T}},
           {-1, -0.25, 0, 0.5, 1, 3});
  expectOp({OpId::LeakyRelu, {&X}, {}, {T}}, {-0.02, -0.005, 0, 0.5, 1, 3});
  expectOp({OpId::Sigmoid, {&X}, {}, {T}},
           Map([](double V) { return 1 / (1 + std::exp(-V)); }));
  expectOp({OpId::HardSigmoid, {&X}, {}, {T}}, {0.1, 0.4, 0.5, 0.6, 0.7, 1});
  expectOp({OpId::HardSwish, {&X}, {}, {T}},
           {-2 * (1.0 / 6), -0.5 * (2.5 / 6), 0, 0.5 * (3.5 / 6), 4.0 / 6, 3});
  expectOp({OpId::Tanh, {&X}, {}, {T}},
           Map([](double V) { return std::tanh(V); }));
  expectOp({OpId::Elu, {&X}, {{"alpha", Attribute::getFloat(2.0f)}}, {T}},
           {2 * (std::exp(-2.0) - 1), 2 * (std::exp(-0.5) - 1), 0, 0.5, 1, 3});
  expectOp({OpId::Erf, {&X}, {}, {T}},
           Map([](double V) { return std::erf(V); }));
  expectOp({OpId::Selu,
            {&X},
            {{"alpha", Attribute::getFloat(2.0f)},
             {"gamma", Attribute::getFloat(3.0f)}},
            {T}},
           {6 * (std::exp(-2.0) - 1), 6 * (std::exp(-0.5) - 1), 0, 1.5, 3, 9});
  // Default alpha and gamma: SELU's self-normalizing constants.
  expectOp({OpId::Selu, {&X}, {}, {T}}, Map([](double V) {
             return 1.0507009873554805 *
                    (V > 0 ? V : 1.6732632423543772 * (std::exp(V) - 1));
           }),
           0, 1e-5);
  expectOp({OpId::Softplus, {&X}, {}, {T}},
           Map([](double V) { return std::log(1 + std::exp(V)); }));
  expectOp({OpId::Softsign, {&X}, {}, {T}},
           {-2.0 / 3, -1.0 / 3, 0, 1.0 / 3, 0.5, 0.75});
  // Softplus far out: x itself above, e^x below; no overflow.
  Tensor Far = f32({4}, {-100, -20, 100, 1000});
  expectOp({OpId::Softplus, {&Far}, {}, {ty(F32, {4})}},
           {3.720075976020836e-44, 2.0611536181902037e-09, 100, 1000}, 0,
           1e-12);
  expectOp({OpId::Exp, {&X}, {}, {T}},
           Map([](double V) { return std::exp(V); }), 0, 1e-5);
  expectOp({OpId::Sqrt, {&X}, {}, {T}},
           {NAN, NAN, 0, std::sqrt(0.5), 1, std::sqrt(3.0)});
  expectOp({OpId::Identity, {&X}, {}, {T}}, values(X));
  Tensor I = i64({4}, {-3, 0, 2, -1});
  expectOp({OpId::Relu, {&I}, {}, {ty(I64, {4})}}, {0, 0, 2, 0});
}

TEST(ElementwiseKernelTest, Clip) {
  Tensor X = f32({2, 2}, {-5, 0.5, 2, NAN});
  Tensor Lo = f32({}, {0}), Hi = f32({}, {1});
  TensorType T = ty(F32, {2, 2});
  expectOp({OpId::Clip, {&X, &Lo, &Hi}, {}, {T}}, {0, 0.5, 1, NAN});
  expectOp({OpId::Clip, {&X, nullptr, &Hi}, {}, {T}}, {-5, 0.5, 1, NAN});
  expectOp({OpId::Clip, {&X, &Lo}, {}, {T}}, {0, 0.5, 2, NAN});
  expectOp({OpId::Clip, {&X}, {}, {T}}, {-5, 0.5, 2, NAN});
  Tensor I = i64({3}, {-9, 4, 12});
  Tensor ILo = i64({}, {-2}), IHi = i64({}, {10});
  expectOp({OpId::Clip, {&I, &ILo, &IHi}, {}, {ty(I64, {3})}}, {-2, 4, 10});
}

TEST(ElementwiseKernelTest, Cast) {
  Tensor X = f32({5}, {-2.7, -0.5, 0.5, 2.7, 300.25});
  auto CastTo = [&](ElementType Elt) {
    return OpCase{OpId::Cast,
                  {&X},
                  {{"to", intAttr(toOnnxDataType(Elt))}},
                  {ty(Elt, {5})}};
  };
  expectOp(CastTo(ElementType::I32), {-2, 0, 0, 2, 300});
  expectOp(CastTo(ElementType::I64), {-2, 0, 0, 2, 300});
  expectOp(CastTo(ElementType::Bool), {1, 1, 1, 1, 1});
  expectOp(CastTo(ElementType::F16),
           {-2.69921875, -0.5, 0.5, 2.69921875, 300.25});
  expectOp(CastTo(ElementType::F64), values(X));
  Tensor I = i64({3}, {-1, 0, 257});
  expectOp({OpId::Cast,
            {&I},
            {{"to", intAttr(toOnnxDataType(ElementType::U8))}},
            {ty(ElementType::U8, {3})}},
           {255, 0, 1});
  expectOp({OpId::Cast, {&I}, {{"to", intAttr(1)}}, {ty(F32, {3})}},
           {-1, 0, 257});
  EXPECT_NE(opError({OpId::Cast, {&I}, {{"to", intAttr(1)}}, {ty(I64, {3})}})
                .find("does not match the result type"),
            std::string::npos);
}

TEST(ElementwiseKernelTest, Dropout) {
  Tensor X = f32({2, 2}, {1, -2, 3, -4});
  TensorType Mask = ty(ElementType::Bool, {2, 2});
  OpCase C{OpId::Dropout, {&X}, {}, {ty(F32, {2, 2}), Mask}};
  expectOp(C, {1, -2, 3, -4}, 0);
  expectOp(C, {1, 1, 1, 1}, 1);
  Tensor Ratio = f32({}, {0.5});
  Tensor Training = makeTensor(ElementType::Bool, {}, {1});
  EXPECT_NE(
      opError({OpId::Dropout, {&X, &Ratio, &Training}, {}, {ty(F32, {2, 2})}})
          .find("training mode is not supported"),
      std::string::npos);
  // Training with ratio 0 keeps everything (an all-true mask).
  Tensor Zero = f32({}, {0});
  OpCase T{OpId::Dropout, {&X, &Zero, &Training}, {}, {ty(F32, {2, 2}), Mask}};
  expectOp(T, {1, -2, 3, -4}, 0);
  expectOp(T, {1, 1, 1, 1}, 1);
}

TEST(ElementwiseKernelTest, BroadcastingBinary) {
  Tensor A = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor B = f32({3}, {10, 20, 30});
  Tensor C = f32({2, 1}, {2, -1});
  TensorType T = ty(F32, {2, 3});
  expectOp({OpId::Add, {&A, &B}, {}, {T}}, {11, 22, 33, 14, 25, 36});
  expectOp({OpId::Sub, {&A, &C}, {}, {T}}, {-1, 0, 1, 5, 6, 7});
  expectOp({OpId::Mul, {&C, &B}, {}, {T}}, {20, 40, 60, -10, -20, -30});
  expectOp({OpId::Div, {&A, &C}, {}, {T}}, {0.5, 1, 1.5, -4, -5, -6});
  expectOp({OpId::Pow, {&A, &C}, {}, {T}}, {1, 4, 9, 0.25, 0.2, 1.0 / 6});
  // Rank-3 result from rank-2 and rank-1 operands.
  Tensor D = f32({2, 1, 1}, {0, 100});
  expectOp({OpId::Add, {&D, &A}, {}, {ty(F32, {2, 2, 3})}},
           {1, 2, 3, 4, 5, 6, 101, 102, 103, 104, 105, 106});

  Tensor IA = i64({4}, {7, -7, 7, -7});
  Tensor IB = i64({4}, {2, 2, -2, -2});
  TensorType IT = ty(I64, {4});
  expectOp({OpId::Div, {&IA, &IB}, {}, {IT}}, {3, -3, -3, 3});
  expectOp({OpId::Pow, {&IB, &IA}, {}, {IT}}, {128, 0, -128, 0});
  Tensor Big = i64({}, {3});
  Tensor Exps = i64({4}, {0, 1, 2, 39});
  expectOp({OpId::Pow, {&Big, &Exps}, {}, {IT}},
           {1, 3, 9, 4052555153018976267.0});
  Tensor Half = f32({}, {0.5});
  Tensor Nine = i64({}, {9});
  expectOp({OpId::Pow, {&Nine, &Half}, {}, {ty(I64, {})}}, {3});
}

TEST(ElementwiseKernelTest, PReluAndVariadic) {
  Tensor X = f32({1, 2, 2}, {-1, 2, -3, 4});
  Tensor Slope = f32({2, 1}, {0.5, 2});
  expectOp({OpId::PRelu, {&X, &Slope}, {}, {ty(F32, {1, 2, 2})}},
           {-0.5, 2, -6, 4});
  Tensor A = f32({3}, {1, 5, NAN}), B = f32({1}, {3}), C = f32({3}, {4, 0, 1});
  TensorType T = ty(F32, {3});
  expectOp({OpId::Max, {&A, &B, &C}, {}, {T}}, {4, 5, NAN});
  expectOp({OpId::Min, {&A, &B, &C}, {}, {T}}, {1, 0, NAN});
  expectOp({OpId::Sum, {&A, &B, &C}, {}, {T}}, {8, 8, NAN});
  expectOp({OpId::Sum, {&C}, {}, {T}}, {4, 0, 1});
  Tensor IA = i64({2}, {-4, 9}), IB = i64({2}, {3, -8});
  expectOp({OpId::Max, {&IA, &IB}, {}, {ty(I64, {2})}}, {3, 9});
  expectOp({OpId::Min, {&IA, &IB}, {}, {ty(I64, {2})}}, {-4, -8});
}

TEST(ElementwiseKernelTest, UnaryMath) {
  Tensor X = f32({2, 3}, {-2.5, -0.5, 0, 0.5, 1, 3});
  TensorType T = ty(F32, {2, 3});
  expectOp({OpId::Neg, {&X}, {}, {T}}, {2.5, 0.5, 0, -0.5, -1, -3});
  expectOp({OpId::Abs, {&X}, {}, {T}}, {2.5, 0.5, 0, 0.5, 1, 3});
  expectOp({OpId::Reciprocal, {&X}, {}, {T}},
           {-0.4, -2, INFINITY, 2, 1, 1.0 / 3});
  expectOp({OpId::Floor, {&X}, {}, {T}}, {-3, -1, 0, 0, 1, 3});
  expectOp({OpId::Ceil, {&X}, {}, {T}}, {-2, -0.0, 0, 1, 1, 3});
  expectOp({OpId::Log, {&X}, {}, {T}},
           {NAN, NAN, -INFINITY, std::log(0.5), 0, std::log(3.0)});
  expectOp({OpId::Sin, {&X}, {}, {T}},
           {std::sin(-2.5), std::sin(-0.5), 0, std::sin(0.5), std::sin(1.0),
            std::sin(3.0)});
  expectOp({OpId::Cos, {&X}, {}, {T}},
           {std::cos(-2.5), std::cos(-0.5), 1, std::cos(0.5), std::cos(1.0),
            std::cos(3.0)});
  // Integers stay exact; -INT64_MIN wraps.
  Tensor I = i64({4}, {-3, 0, 7, -9});
  expectOp({OpId::Neg, {&I}, {}, {ty(I64, {4})}}, {3, 0, -7, 9});
  expectOp({OpId::Abs, {&I}, {}, {ty(I64, {4})}}, {3, 0, 7, 9});
  expectOp({OpId::Sign, {&I}, {}, {ty(I64, {4})}}, {-1, 0, 1, -1});
}

TEST(ElementwiseKernelTest, TrigonometricSignRoundShrink) {
  Tensor X = f32({2, 3}, {-2.5, -0.5, 0, 0.5, 1, 3});
  TensorType T = ty(F32, {2, 3});
  expectOp({OpId::Tan, {&X}, {}, {T}},
           {std::tan(-2.5), std::tan(-0.5), 0, std::tan(0.5), std::tan(1.0),
            std::tan(3.0)});
  expectOp({OpId::Asin, {&X}, {}, {T}},
           {NAN, std::asin(-0.5), 0, std::asin(0.5), M_PI / 2, NAN});
  expectOp({OpId::Acos, {&X}, {}, {T}},
           {NAN, std::acos(-0.5), M_PI / 2, std::acos(0.5), 0, NAN});
  expectOp({OpId::Atan, {&X}, {}, {T}},
           {std::atan(-2.5), std::atan(-0.5), 0, std::atan(0.5), M_PI / 4,
            std::atan(3.0)});
  expectOp({OpId::Sinh, {&X}, {}, {T}},
           {std::sinh(-2.5), std::sinh(-0.5), 0, std::sinh(0.5), std::sinh(1.0),
            std::sinh(3.0)});
  expectOp({OpId::Cosh, {&X}, {}, {T}},
           {std::cosh(-2.5), std::cosh(-0.5), 1, std::cosh(0.5), std::cosh(1.0),
            std::cosh(3.0)});
  expectOp({OpId::Asinh, {&X}, {}, {T}},
           {std::asinh(-2.5), std::asinh(-0.5), 0, std::asinh(0.5),
            std::asinh(1.0), std::asinh(3.0)});
  expectOp({OpId::Acosh, {&X}, {}, {T}},
           {NAN, NAN, NAN, NAN, 0, std::acosh(3.0)});
  expectOp({OpId::Atanh, {&X}, {}, {T}},
           {NAN, std::atanh(-0.5), 0, std::atanh(0.5), INFINITY, NAN});
  expectOp({OpId::Sign, {&X}, {}, {T}}, {-1, -1, 0, 1, 1, 1});
  // Halves go to the even neighbour.
  expectOp({OpId::Round, {&X}, {}, {T}}, {-2, -0.0, 0, 0, 1, 3});
  expectOp({OpId::ThresholdedRelu, {&X}, {}, {T}}, {0, 0, 0, 0, 0, 3});
  expectOp({OpId::ThresholdedRelu,
            {&X},
            {{"alpha", Attribute::getFloat(0.25f)}},
            {T}},
           {0, 0, 0, 0.5, 1, 3});
  expectOp({OpId::Shrink,
            {&X},
            {{"lambd", Attribute::getFloat(0.5f)},
             {"bias", Attribute::getFloat(0.25f)}},
            {T}},
           {-2.25, 0, 0, 0, 0.75, 2.75});
}

TEST(ElementwiseKernelTest, ComparisonsLogicAndWhere) {
  const ElementType Bool = ElementType::Bool;
  Tensor A = f32({2, 3}, {1, 2, 3, 4, NAN, 6});
  Tensor B = f32({3}, {2, 2, 2});
  TensorType T = ty(Bool, {2, 3});
  expectOp({OpId::Equal, {&A, &B}, {}, {T}}, {0, 1, 0, 0, 0, 0});
  expectOp({OpId::Less, {&A, &B}, {}, {T}}, {1, 0, 0, 0, 0, 0});
  expectOp({OpId::LessOrEqual, {&A, &B}, {}, {T}}, {1, 1, 0, 0, 0, 0});
  expectOp({OpId::Greater, {&A, &B}, {}, {T}}, {0, 0, 1, 1, 0, 1});
  expectOp({OpId::GreaterOrEqual, {&A, &B}, {}, {T}}, {0, 1, 1, 1, 0, 1});
  // Integers compare exactly past float precision.
  Tensor IA(I64, {2}), IB(I64, {2});
  IA.setInt(0, int64_t(1) << 60);
  IB.setInt(0, (int64_t(1) << 60) + 1);
  IA.setInt(1, -5);
  IB.setInt(1, -5);
  expectOp({OpId::Less, {&IA, &IB}, {}, {ty(Bool, {2})}}, {1, 0});
  expectOp({OpId::Equal, {&IA, &IB}, {}, {ty(Bool, {2})}}, {0, 1});
  Tensor P = makeTensor(Bool, {2, 2}, {0, 1, 0, 1});
  Tensor Q = makeTensor(Bool, {2, 1}, {0, 1});
  TensorType BT = ty(Bool, {2, 2});
  expectOp({OpId::Not, {&P}, {}, {BT}}, {1, 0, 1, 0});
  expectOp({OpId::And, {&P, &Q}, {}, {BT}}, {0, 0, 0, 1});
  expectOp({OpId::Or, {&P, &Q}, {}, {BT}}, {0, 1, 1, 1});
  expectOp({OpId::Equal, {&P, &Q}, {}, {BT}}, {1, 0, 0, 1});
  // Where broadcasts all three operands, any element type.
  Tensor X = f32({2, 2}, {1, 2, 3, 4}), Y = f32({}, {-1});
  expectOp({OpId::Where, {&Q, &X, &Y}, {}, {ty(F32, {2, 2})}}, {-1, -1, 3, 4});
  Tensor IX = i64({2}, {10, 20}), IY = i64({2, 1}, {-1, -2});
  expectOp({OpId::Where, {&P, &IX, &IY}, {}, {ty(I64, {2, 2})}},
           {-1, 20, -2, 20});
}

TEST(ElementwiseKernelTest, RemaindersShiftsXorAndClassification) {
  // Mod of integers takes the divisor's sign; fmod = 1 truncates (C's %
  // and fmod); x mod 0 is 0 for integers, as x / 0 is.
  Tensor A = i64({6}, {7, -7, 7, -7, 5, INT64_MIN});
  Tensor B = i64({6}, {3, 3, -3, -3, 0, -1});
  TensorType T = ty(I64, {6});
  expectOp({OpId::Mod, {&A, &B}, {}, {T}}, {1, 2, -2, -1, 0, 0});
  expectOp({OpId::Mod, {&A, &B}, {{"fmod", Attribute::getInt(1)}}, {T}},
           {1, -1, 1, -1, 0, 0});
  Tensor FA = f32({4}, {5.5, -5.5, 5.5, 1}), FB = f32({4}, {2, 2, -2, 0});
  expectOp(
      {OpId::Mod, {&FA, &FB}, {{"fmod", Attribute::getInt(1)}}, {ty(F32, {4})}},
      {1.5, -1.5, 1.5, NAN});
  // u64 past 2^63 divides as unsigned.
  const ElementType U64 = ElementType::U64, U8 = ElementType::U8;
  Tensor UA(U64, {2}), UB(U64, {2});
  UA.setInt(0, int64_t(0x8000000000000007ull));
  UB.setInt(0, 10);
  UA.setInt(1, 9);
  UB.setInt(1, int64_t(0x8000000000000000ull));
  expectOp({OpId::Mod, {&UA, &UB}, {}, {ty(U64, {2})}},
           {double(0x8000000000000007ull % 10), 9});
  // Shifts of unsigned types; past the width, 0.
  Tensor SA = makeTensor(U8, {4}, {1, 255, 16, 200});
  Tensor SB = makeTensor(U8, {4}, {3, 1, 8, 200});
  expectOp({OpId::BitShift,
            {&SA, &SB},
            {{"direction", Attribute::getString("LEFT")}},
            {ty(U8, {4})}},
           {8, 254, 0, 0});
  expectOp({OpId::BitShift,
            {&SA, &SB},
            {{"direction", Attribute::getString("RIGHT")}},
            {ty(U8, {4})}},
           {0, 127, 0, 0});
  const ElementType Bool = ElementType::Bool;
  Tensor P = makeTensor(Bool, {2, 2}, {0, 1, 0, 1});
  Tensor Q = makeTensor(Bool, {2, 1}, {0, 1});
  expectOp({OpId::Xor, {&P, &Q}, {}, {ty(Bool, {2, 2})}}, {0, 1, 1, 0});
  Tensor X = f32({5}, {1, NAN, INFINITY, -INFINITY, 0});
  TensorType BT = ty(Bool, {5});
  expectOp({OpId::IsNaN, {&X}, {}, {BT}}, {0, 1, 0, 0, 0});
  expectOp({OpId::IsInf, {&X}, {}, {BT}}, {0, 0, 1, 1, 0});
  expectOp(
      {OpId::IsInf, {&X}, {{"detect_negative", Attribute::getInt(0)}}, {BT}},
      {0, 0, 1, 0, 0});
  expectOp(
      {OpId::IsInf, {&X}, {{"detect_positive", Attribute::getInt(0)}}, {BT}},
      {0, 0, 0, 1, 0});
}

TEST(ReductionKernelTest, CumSum) {
  Tensor X = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor Axis1 = i64({}, {1}), AxisNeg = i64({1}, {-2});
  TensorType T = ty(F32, {2, 3});
  expectOp({OpId::CumSum, {&X, &Axis1}, {}, {T}}, {1, 3, 6, 4, 9, 15});
  expectOp({OpId::CumSum, {&X, &AxisNeg}, {}, {T}}, {1, 2, 3, 5, 7, 9});
  expectOp(
      {OpId::CumSum, {&X, &Axis1}, {{"exclusive", Attribute::getInt(1)}}, {T}},
      {0, 1, 3, 0, 4, 9});
  expectOp(
      {OpId::CumSum, {&X, &Axis1}, {{"reverse", Attribute::getInt(1)}}, {T}},
      {6, 5, 3, 15, 11, 6});
  expectOp(
      {OpId::CumSum,
       {&X, &Axis1},
       {{"reverse", Attribute::getInt(1)}, {"exclusive", Attribute::getInt(1)}},
       {T}},
      {5, 3, 0, 11, 6, 0});
  // Integers wrap exactly.
  Tensor I(I64, {2});
  I.setInt(0, INT64_MAX);
  I.setInt(1, 1);
  Tensor Axis0 = i64({}, {0});
  expectOp({OpId::CumSum, {&I, &Axis0}, {}, {ty(I64, {2})}},
           {double(INT64_MAX), double(INT64_MIN)});
  Tensor Bad = i64({}, {2});
  EXPECT_NE(opError({OpId::CumSum, {&X, &Bad}, {}, {T}})
                .find("axis 2 is out of range for rank 2"),
            std::string::npos);
}

TEST(DataMovementKernelTest, GatherNDAndScatterND) {
  Tensor X = f32({2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  // Tuples of length 2 name rows; of length 1 (a negative index) planes.
  Tensor Rows = i64({2, 2}, {1, 0, 0, -1});
  expectOp({OpId::GatherND, {&X, &Rows}, {}, {ty(F32, {2, 3})}},
           {6, 7, 8, 3, 4, 5});
  Tensor Planes = i64({1, 1}, {-1});
  expectOp({OpId::GatherND, {&X, &Planes}, {}, {ty(F32, {1, 2, 3})}},
           {6, 7, 8, 9, 10, 11});
  // batch_dims = 1: each batch's own tuples.
  Tensor Batched = i64({2, 1, 2}, {1, 2, 0, 1});
  expectOp({OpId::GatherND,
            {&X, &Batched},
            {{"batch_dims", Attribute::getInt(1)}},
            {ty(F32, {2, 1})}},
           {5, 7});
  // ScatterND: rows replaced (a repeated tuple: the last wins), or added.
  Tensor Targets = i64({3, 2}, {0, 1, 1, 0, 0, 1});
  Tensor Updates = f32({3, 3}, {1, 1, 1, 2, 2, 2, 3, 3, 3});
  TensorType T = ty(F32, {2, 2, 3});
  expectOp({OpId::ScatterND, {&X, &Targets, &Updates}, {}, {T}},
           {0, 1, 2, 3, 3, 3, 2, 2, 2, 9, 10, 11});
  expectOp({OpId::ScatterND,
            {&X, &Targets, &Updates},
            {{"reduction", Attribute::getString("add")}},
            {T}},
           {0, 1, 2, 7, 8, 9, 8, 9, 10, 9, 10, 11});
  Tensor Bad = i64({1, 2}, {2, 0});
  EXPECT_NE(opError({OpId::GatherND, {&X, &Bad}, {}, {ty(F32, {1, 3})}})
                .find("index 2 is out of range for an axis of size 2"),
            std::string::npos);
}

TEST(ElementwiseKernelTest, QuantizeAndDequantizeLinear) {
  const ElementType U8 = ElementType::U8, I8 = ElementType::I8;
  // Halves round to even; the result saturates; no zero point: u8.
  Tensor X = f32({6}, {-1, 0.5, 1.5, 2.5, 300, 63.7});
  Tensor Half = f32({}, {0.5});
  expectOp({OpId::QuantizeLinear, {&X, &Half}, {}, {ty(U8, {6})}},
           {0, 1, 3, 5, 255, 127});
  Tensor Zero = makeTensor(I8, {}, {-10});
  expectOp({OpId::QuantizeLinear, {&X, &Half, &Zero}, {}, {ty(I8, {6})}},
           {-12, -9, -7, -5, 127, 117});
  // Per axis (1, the default): one scale and zero point per channel.
  Tensor Q = makeTensor(U8, {2, 3}, {0, 128, 255, 10, 20, 30});
  Tensor Scales = f32({3}, {1, 0.5, 2});
  Tensor Zeros = makeTensor(U8, {3}, {0, 128, 10});
  expectOp(
      {OpId::DequantizeLinear, {&Q, &Scales, &Zeros}, {}, {ty(F32, {2, 3})}},
      {0, 0, 490, 10, -54, 40});
  Tensor XS = f32({2, 3}, {0, 0, 490, 10, -54, 40});
  expectOp({OpId::QuantizeLinear, {&XS, &Scales, &Zeros}, {}, {ty(U8, {2, 3})}},
           {0, 128, 255, 10, 20, 30});
  Tensor Wrong = f32({2}, {1, 2});
  EXPECT_NE(
      opError({OpId::DequantizeLinear, {&Q, &Wrong}, {}, {ty(F32, {2, 3})}})
          .find("quantization parameter tensor<2 x f32> for x"),
      std::string::npos);
}

TEST(ElementwiseKernelTest, RelayoutKeepsLogicalValues) {
  Tensor X =
      makeTensor(F32, {1, 2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Graph G;
  Value *In = G.addInput("x", X.getType());
  TensorType Nhwc = X.getType().withLayout(Layout::getChannelsLast(4));
  Node *R = G.createNode(OpId::Relayout, {In}, {"y"}, {Nhwc});
  G.addOutput(R->getResult(0));
  llvm::Expected<TensorMap> Out = runReference(G, {{"x", X}});
  ASSERT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
  const Tensor &Y = Out->at("y");
  EXPECT_EQ(Y.getType(), Nhwc);
  EXPECT_EQ(values(Y), values(X));
  EXPECT_EQ(Y.getDouble(1), 6.0); // (0, 1, 0, 0) follows (0, 0, 0, 0).
}

//===----------------------------------------------------------------------===//
// Data movement kernels.
//===----------------------------------------------------------------------===//

std::vector<double> iota(int64_t N) {
  std::vector<double> V;
  for (int64_t I = 0; I != N; ++I)
    V.push_back(double(I));
  return V;
}

TEST(DataMovementKernelTest, ConcatAndSplit) {
  Tensor A = f32({2, 2}, {1, 2, 3, 4}), B = f32({2, 1}, {5, 6});
  expectOp({OpId::Concat, {&A, &B}, {{"axis", intAttr(-1)}}, {ty(F32, {2, 3})}},
           {1, 2, 5, 3, 4, 6});
  expectOp({OpId::Concat, {&A, &A}, {{"axis", intAttr(0)}}, {ty(F32, {4, 2})}},
           {1, 2, 3, 4, 1, 2, 3, 4});
  Tensor X = f32({2, 5}, iota(10));
  Tensor Sizes = i64({2}, {2, 3});
  OpCase S{OpId::Split,
           {&X, &Sizes},
           {{"axis", intAttr(1)}},
           {ty(F32, {2, 2}), ty(F32, {2, 3})}};
  expectOp(S, {0, 1, 5, 6}, 0);
  expectOp(S, {2, 3, 4, 7, 8, 9}, 1);
  OpCase Even{OpId::Split,
              {&X},
              {{"axis", intAttr(-2)}, {"num_outputs", intAttr(2)}},
              {ty(F32, {1, 5}), ty(F32, {1, 5})}};
  expectOp(Even, {5, 6, 7, 8, 9}, 1);
}

TEST(DataMovementKernelTest, Slice) {
  Tensor X = f32({3, 4}, iota(12));
  Tensor Starts = i64({2}, {1, 0}), Ends = i64({2}, {3, 100});
  expectOp({OpId::Slice, {&X, &Starts, &Ends}, {}, {ty(F32, {2, 4})}},
           {4, 5, 6, 7, 8, 9, 10, 11});
  // Negative steps, negative and clamped bounds, negative axes.
  Tensor S2 = i64({2}, {-1, 100}), E2 = i64({2}, {-100, 0});
  Tensor Axes = i64({2}, {-1, 0}), Steps = i64({2}, {-2, -1});
  expectOp({OpId::Slice, {&X, &S2, &E2, &Axes, &Steps}, {}, {ty(F32, {2, 2})}},
           {11, 9, 7, 5});
  Tensor S3 = i64({1}, {0}), E3 = i64({1}, {4}), A3 = i64({1}, {1}),
         St3 = i64({1}, {3});
  expectOp({OpId::Slice, {&X, &S3, &E3, &A3, &St3}, {}, {ty(F32, {3, 2})}},
           {0, 3, 4, 7, 8, 11});
}

TEST(DataMovementKernelTest, Pad) {
  Tensor X = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor Pads = i64({4}, {0, 2, 1, 1});
  Tensor Value = f32({}, {9});
  expectOp({OpId::Pad, {&X, &Pads, &Value}, {}, {ty(F32, {3, 6})}},
           {9, 9, 1, 2, 3, 9, 9, 9, 4, 5, 6, 9, 9, 9, 9, 9, 9, 9});
  expectOp({OpId::Pad, {&X, &Pads}, {}, {ty(F32, {3, 6})}},
           {0, 0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0, 0, 0, 0, 0, 0});
  expectOp({OpId::Pad,
            {&X, &Pads},
            {{"mode", Attribute::getString("reflect")}},
            {ty(F32, {3, 6})}},
           {3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2});
  expectOp({OpId::Pad,
            {&X, &Pads},
            {{"mode", Attribute::getString("edge")}},
            {ty(F32, {3, 6})}},
           {1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6, 4, 4, 4, 5, 6, 6});
  // Axes operand and negative (cropping) pads.
  Tensor AxPads = i64({2}, {-1, 1}), Axes = i64({1}, {-1});
  expectOp({OpId::Pad, {&X, &AxPads, nullptr, &Axes}, {}, {ty(F32, {2, 3})}},
           {2, 3, 0, 5, 6, 0});
  EXPECT_NE(opError({OpId::Pad,
                     {&X, &Pads},
                     {{"mode", Attribute::getString("wrap")}},
                     {ty(F32, {3, 6})}})
                .find("unsupported pad mode 'wrap'"),
            std::string::npos);
}

TEST(DataMovementKernelTest, TransposeAndReshapes) {
  Tensor X = f32({2, 3, 2}, iota(12));
  expectOp({OpId::Transpose, {&X}, {}, {ty(F32, {2, 3, 2})}},
           {0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11});
  expectOp({OpId::Transpose,
            {&X},
            {{"perm", ints({1, 0, 2})}},
            {ty(F32, {3, 2, 2})}},
           {0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11});
  Tensor Shape = i64({2}, {4, 3});
  expectOp({OpId::Reshape, {&X, &Shape}, {}, {ty(F32, {4, 3})}}, iota(12));
  expectOp({OpId::Flatten, {&X}, {{"axis", intAttr(1)}}, {ty(F32, {2, 6})}},
           iota(12));
  Tensor Y = f32({1, 3, 1}, {1, 2, 3});
  expectOp({OpId::Squeeze, {&Y}, {}, {ty(F32, {3})}}, {1, 2, 3});
  Tensor Axes = i64({2}, {0, -1});
  expectOp({OpId::Unsqueeze, {&Y, &Axes}, {}, {ty(F32, {1, 1, 3, 1, 1})}},
           {1, 2, 3});
}

TEST(DataMovementKernelTest, ExpandAndGather) {
  Tensor X = f32({3, 1}, {1, 2, 3});
  Tensor Shape = i64({3}, {2, 1, 2});
  expectOp({OpId::Expand, {&X, &Shape}, {}, {ty(F32, {2, 3, 2})}},
           {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  Tensor D = f32({2, 3}, iota(6));
  Tensor Idx = i64({2, 2}, {0, -1, 2, 1});
  expectOp(
      {OpId::Gather, {&D, &Idx}, {{"axis", intAttr(1)}}, {ty(F32, {2, 2, 2})}},
      {0, 2, 2, 1, 3, 5, 5, 4});
  Tensor Row = i64({}, {-1});
  expectOp({OpId::Gather, {&D, &Row}, {}, {ty(F32, {3})}}, {3, 4, 5});
  Tensor Bad = i64({1}, {3});
  EXPECT_NE(opError({OpId::Gather, {&D, &Bad}, {}, {ty(F32, {1, 3})}})
                .find("index 3 is out of range for a dim of size 2"),
            std::string::npos);
}

TEST(DataMovementKernelTest, ShapeAndConstants) {
  Tensor X(F32, {2, 3, 4, 5});
  expectOp({OpId::Shape, {&X}, {}, {ty(I64, {4})}}, {2, 3, 4, 5});
  expectOp({OpId::Shape,
            {&X},
            {{"start", intAttr(1)}, {"end", intAttr(-1)}},
            {ty(I64, {2})}},
           {3, 4});
  TensorDataRef V = TensorData::fromFloat({2, 2}, {1, 2, 3, 4});
  expectOp({OpId::Constant,
            {},
            {{"value", Attribute::getTensor(V)}},
            {ty(F32, {2, 2})}},
           {1, 2, 3, 4});
  // Constant data stored in a non-identity layout.
  expectOp({OpId::Constant,
            {},
            {{"value", Attribute::getTensor(V->withLayout(Layout({1, 0})))}},
            {ty(F32, {2, 2})}},
           {1, 2, 3, 4});
  Tensor Shape = i64({2}, {2, 3});
  expectOp({OpId::ConstantOfShape, {&Shape}, {}, {ty(F32, {2, 3})}},
           std::vector<double>(6, 0.0));
  expectOp(
      {OpId::ConstantOfShape,
       {&Shape},
       {{"value", Attribute::getTensor(TensorData::fromInt64(I64, {1}, {7}))}},
       {ty(I64, {2, 3})}},
      std::vector<double>(6, 7.0));
}

TEST(DataMovementKernelTest, DepthToSpaceAndBack) {
  Tensor X = f32({1, 8, 1, 2}, iota(16));
  // DCR: out(c, 2h+bh, 2w+bw) = in((bh*2+bw)*2 + c, h, w).
  OpCase DCR{OpId::DepthToSpace,
             {&X},
             {{"blocksize", intAttr(2)}},
             {ty(F32, {1, 2, 2, 4})}};
  expectOp(DCR, {0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15});
  // CRD: out(c, 2h+bh, 2w+bw) = in(c*4 + bh*2 + bw, h, w).
  OpCase CRD{OpId::DepthToSpace,
             {&X},
             {{"blocksize", intAttr(2)}, {"mode", Attribute::getString("CRD")}},
             {ty(F32, {1, 2, 2, 4})}};
  expectOp(CRD, {0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15});
  Tensor Y =
      f32({1, 2, 2, 4}, {0, 4, 1, 5, 8, 12, 9, 13, 2, 6, 3, 7, 10, 14, 11, 15});
  expectOp({OpId::SpaceToDepth,
            {&Y},
            {{"blocksize", intAttr(2)}},
            {ty(F32, {1, 8, 1, 2})}},
           iota(16));
}

TEST(DataMovementKernelTest, ResultTypesAreChecked) {
  // Bounds from non-constant operands: inference cannot check the result
  // type, the kernel does.
  Tensor X = f32({3, 4}, iota(12));
  Tensor Starts = i64({1}, {1}), Ends = i64({1}, {3});
  EXPECT_EQ(opError({OpId::Slice, {&X, &Starts, &Ends}, {}, {ty(F32, {3, 4})}}),
            "node (Slice) producing 'out0': result type tensor<3 x 4 x f32> "
            "does not match the computed shape tensor<2 x 4 x f32>");
  Tensor Shape = i64({1}, {10});
  EXPECT_EQ(opError({OpId::Reshape, {&X, &Shape}, {}, {ty(F32, {10})}}),
            "node (Reshape) producing 'out0': operand type tensor<3 x 4 x f32> "
            "and result type tensor<10 x f32> differ in element count");
  Tensor Pads = i64({4}, {0, 0, 0, 1});
  EXPECT_NE(opError({OpId::Pad, {&X, &Pads}, {}, {ty(F32, {3, 4})}})
                .find("does not match the computed shape tensor<3 x 5 x f32>"),
            std::string::npos);
  Tensor Y = f32({2}, {1, 2});
  EXPECT_NE(opError({OpId::Add, {&X, &Y}, {}, {ty(F32, {3, 4})}})
                .find("operand 1 of type tensor<2 x f32> does not broadcast"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Interpreter errors.
//===----------------------------------------------------------------------===//

class InterpreterErrorTest : public ::testing::Test {
protected:
  Graph G;
  Value *X = nullptr;
  void SetUp() override {
    X = G.addInput("x", TensorType::get(F32, {2, 3}));
    Node *N = G.createNode(OpId::Relu, {X}, {"y"}, {X->getType()});
    G.addOutput(N->getResult(0));
  }
  std::string error(const TensorMap &Inputs) {
    llvm::Expected<TensorMap> R = runReference(G, Inputs);
    if (R)
      return "<no error>";
    return llvm::toString(R.takeError());
  }
};

TEST_F(InterpreterErrorTest, Inputs) {
  EXPECT_EQ(error({}),
            "graph 'main': missing input 'x' of type tensor<2 x 3 x f32>");
  EXPECT_EQ(error({{"x", Tensor(F32, {2, 3})}, {"z", Tensor(F32, {1})}}),
            "graph 'main': unknown input 'z'");
  EXPECT_EQ(error({{"x", Tensor(F32, {3, 2})}}),
            "graph 'main': input 'x' has type tensor<3 x 2 x f32>, expected "
            "tensor<2 x 3 x f32>");
  EXPECT_EQ(error({{"x", Tensor(I64, {2, 3})}}),
            "graph 'main': input 'x' has type tensor<2 x 3 x i64>, expected "
            "tensor<2 x 3 x f32>");
  // Default data stands in for a missing input.
  X->setDefaultData(TensorData::fromFloat({2, 3}, {-1, 2, -3, 4, -5, 6}));
  llvm::Expected<TensorMap> R = runReference(G, {});
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  EXPECT_EQ(values(R->at("y")), (std::vector<double>{0, 2, 0, 4, 0, 6}));
}

TEST_F(InterpreterErrorTest, OpaqueAndMissingKernels) {
  Node *N =
      G.createOpaqueNode("com.example", "MyOp", {X}, {"z"}, {X->getType()});
  N->setLoc({"m.onnx", "my"});
  G.addOutput(N->getResult(0));
  EXPECT_EQ(error({{"x", Tensor(F32, {2, 3})}}),
            "m.onnx: node 'my' (com.example.MyOp): no reference kernel for op "
            "'com.example.MyOp'");
}

TEST_F(InterpreterErrorTest, NonStaticShapes) {
  Node *N =
      G.createNode(OpId::Relu, {X}, {"w"},
                   {TensorType(F32, {Dim::getSymbol("N"), Dim::getStatic(3)})});
  N->setLoc({"", "r"});
  G.addOutput(N->getResult(0));
  EXPECT_EQ(error({{"x", Tensor(F32, {2, 3})}}),
            "node 'r' (Relu): result 'w' has a non-static shape "
            "tensor<N x 3 x f32>: bind symbolic dims (--dim) and infer shapes "
            "first");
  Graph G2;
  G2.addInput("u", TensorType(F32, {Dim::getUnknown()}));
  llvm::Expected<TensorMap> R = runReference(G2, {});
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(llvm::toString(R.takeError()),
            "graph 'main': input 'u' has a non-static shape tensor<? x f32>: "
            "bind symbolic dims (--dim) and infer shapes first");
}

//===----------------------------------------------------------------------===//
// Layout property: channels-first and channels-last graphs agree.
//===----------------------------------------------------------------------===//

/// Builds a graph exercising most kernels; with \p ChannelsLast every
/// rank-3..5 value is channels-last.
void buildMixedGraph(Graph &G, bool ChannelsLast) {
  auto T = [&](std::vector<int64_t> Shape, ElementType Elt = F32) {
    unsigned Rank = Shape.size();
    Layout L = ChannelsLast && Rank >= 3 && Rank <= 5
                   ? Layout::getChannelsLast(Rank)
                   : Layout();
    return TensorType::get(Elt, Shape, L);
  };
  unsigned Next = 0;
  auto Node1 = [&](OpId Id, std::vector<Value *> Ops, TensorType Ty) {
    return G.createNode(Id, Ops, {"v" + std::to_string(Next++)}, {Ty});
  };
  auto Const = [&](std::vector<int64_t> V) {
    Node *N = Node1(OpId::Constant, {}, T({int64_t(V.size())}, I64));
    N->setAttr("value", Attribute::getTensor(TensorData::fromInt64(
                            I64, {int64_t(V.size())}, V)));
    return N->getResult(0);
  };
  Value *X = G.addInput("x", T({1, 4, 3, 5}));
  Value *Y = G.addInput("y", T({1, 4, 3, 5}));
  Value *B = G.addInput("b", T({4, 1, 1}));
  Value *A = Node1(OpId::Relu, {X}, T({1, 4, 3, 5}))->getResult(0);
  Value *Ab = Node1(OpId::Add, {A, B}, T({1, 4, 3, 5}))->getResult(0);
  Node *Cat = Node1(OpId::Concat, {Ab, Y}, T({1, 8, 3, 5}));
  Cat->setAttr("axis", Attribute::getInt(-3));
  Value *C = Cat->getResult(0);
  Node *D2S = Node1(OpId::DepthToSpace, {C}, T({1, 2, 6, 10}));
  D2S->setAttr("blocksize", Attribute::getInt(2));
  D2S->setAttr("mode", Attribute::getString("CRD"));
  Node *D2SDcr = Node1(OpId::DepthToSpace, {C}, T({1, 2, 6, 10}));
  D2SDcr->setAttr("blocksize", Attribute::getInt(2));
  Node *S2D = Node1(OpId::SpaceToDepth, {D2S->getResult(0)}, T({1, 8, 3, 5}));
  S2D->setAttr("blocksize", Attribute::getInt(2));
  Value *M =
      Node1(OpId::Mul, {S2D->getResult(0), C}, T({1, 8, 3, 5}))->getResult(0);
  Node *P =
      Node1(OpId::Pad, {M, Const({0, 0, 1, 0, 0, 0, 1, 2})}, T({1, 8, 5, 7}));
  P->setAttr("mode", Attribute::getString("reflect"));
  Value *S = Node1(OpId::Slice,
                   {P->getResult(0), Const({4, -1}), Const({0, -100}),
                    Const({2, -1}), Const({-2, -2})},
                   T({1, 8, 2, 4}))
                 ->getResult(0);
  Node *Tr = Node1(OpId::Transpose, {S}, T({1, 4, 8, 2}));
  Tr->setAttr("perm", Attribute::getInts({0, 3, 1, 2}));
  Node *Sp = G.createNode(OpId::Split, {Tr->getResult(0), Const({3, 5})},
                          {"s0", "s1"}, {T({1, 4, 3, 2}), T({1, 4, 5, 2})});
  Sp->setAttr("axis", Attribute::getInt(2));
  Value *R =
      Node1(OpId::Reshape, {Sp->getResult(1), Const({1, 4, 10})}, T({1, 4, 10}))
          ->getResult(0);
  Value *Sig = Node1(OpId::Sigmoid, {R}, T({1, 4, 10}))->getResult(0);
  Node *Ga = Node1(OpId::Gather, {Sig, Const({-1, 0})}, T({1, 4, 2}));
  Ga->setAttr("axis", Attribute::getInt(2));
  Value *E =
      Node1(OpId::Expand, {Ga->getResult(0), Const({2, 1, 1})}, T({2, 4, 2}))
          ->getResult(0);
  Node *Floor = Node1(OpId::Constant, {}, T({1}));
  Floor->setAttr("value",
                 Attribute::getTensor(TensorData::fromFloat({1}, {0.6f})));
  Value *Mx =
      Node1(OpId::Max, {E, Ga->getResult(0), Floor->getResult(0)}, T({2, 4, 2}))
          ->getResult(0);
  G.addOutput(Sp->getResult(0));
  G.addOutput(D2SDcr->getResult(0));
  G.addOutput(Mx);
}

TEST(LayoutPropertyTest, ChannelsLastMatchesChannelsFirst) {
  std::mt19937 Rng(42);
  std::uniform_real_distribution<double> Dist(-2, 2);
  auto Random = [&](std::vector<int64_t> Shape) {
    Tensor T(F32, Shape);
    for (int64_t I = 0; I != T.getNumElements(); ++I)
      T.setDouble(I, Dist(Rng));
    return T;
  };
  TensorMap Inputs = {{"x", Random({1, 4, 3, 5})},
                      {"y", Random({1, 4, 3, 5})},
                      {"b", Random({4, 1, 1})}};
  Graph First, Last;
  buildMixedGraph(First, false);
  buildMixedGraph(Last, true);
  // The hand-written result types agree with shape inference.
  for (Graph *G : {&First, &Last}) {
    llvm::Error E = inferShapes(*G);
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    llvm::Error V = verifyGraph(*G);
    ASSERT_FALSE(bool(V)) << llvm::toString(std::move(V));
  }
  llvm::Expected<TensorMap> A = runReference(First, Inputs);
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  llvm::Expected<TensorMap> B = runReference(Last, Inputs);
  ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
  ASSERT_EQ(A->size(), 3u);
  ASSERT_EQ(B->size(), 3u);
  for (const auto &KV : *A) {
    SCOPED_TRACE(KV.first);
    const Tensor &TA = KV.second, &TB = B->at(KV.first);
    EXPECT_EQ(TB.getLayout(), TB.getRank() >= 3
                                  ? Layout::getChannelsLast(TB.getRank())
                                  : Layout());
    EXPECT_EQ(TA.getShape(), TB.getShape());
    EXPECT_EQ(TA.getBytes(), TB.withLayout(Layout()).getBytes());
    // Not a trivially zero result.
    std::vector<double> V = values(TA);
    EXPECT_NE(std::count(V.begin(), V.end(), 0.0), int64_t(V.size()));
  }
}

TEST(MatrixKernelTest, EinsumOfIntegersIsExact) {
  // Integers are summed in 64 bits (wrapping), not through double:
  // 2^40 * 2^20 + 1 * 3 needs more than a double's 53 bits.
  Tensor A(I64, {1, 2}), B(I64, {2, 1});
  A.setInt(0, int64_t(1) << 40);
  A.setInt(1, 1);
  B.setInt(0, int64_t(1) << 20);
  B.setInt(1, 3);
  OpCase C{OpId::Einsum,
           {&A, &B},
           {{"equation", Attribute::getString("ij,jk->ik")}},
           {ty(I64, {1, 1})}};
  for (bool Permuted : {false, true}) {
    auto R = runOp(C, Permuted);
    ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
    EXPECT_EQ((*R)[0].getInt(0), (int64_t(1) << 60) + 3);
  }
}

} // namespace

TEST(InterpreterTest, EveryOpOfTheTableHasAKernel) {
  for (const OpInfo &Op : getAllOps()) {
    // An If runs as the branch it takes, inlined by specialization
    // (Transforms/InlineIf.cpp); no backend has a kernel for it.
    if (Op.Id == OpId::If)
      continue;
    EXPECT_NE(runtime::lookupReferenceKernel(Op.Id), nullptr)
        << "no reference kernel for " << Op.Name.str();
  }
  EXPECT_EQ(runtime::lookupReferenceKernel(OpId::Opaque), nullptr);
}

//===----------------------------------------------------------------------===//
// Peak memory of a run.
//===----------------------------------------------------------------------===//

TEST(ReferencePeakTest, CountsTheLiveTensorsAtEachNode) {
  // x (24 B) -> a = relu(x) -> b = relu(a) -> y = a + b: x is freed
  // after a's Relu (48 B live there), so the peak is the Add's a, b and y
  // (72 B), not x, a and b.
  Graph G;
  TensorType T = TensorType::get(F32, {2, 3});
  Value *X = G.addInput("x", T);
  Node *A = G.createNode(OpId::Relu, {X}, {"a"}, {T});
  Node *B = G.createNode(OpId::Relu, {A->getResult(0)}, {"b"}, {T});
  Node *Y =
      G.createNode(OpId::Add, {A->getResult(0), B->getResult(0)}, {"y"}, {T});
  G.addOutput(Y->getResult(0));
  const Node *At = nullptr;
  EXPECT_EQ(getReferencePeakBytes(G, &At), uint64_t(72));
  EXPECT_EQ(At, Y);
  // A non-static shape has no peak.
  Node *N =
      G.createNode(OpId::Relu, {X}, {"w"},
                   {TensorType(F32, {Dim::getSymbol("N"), Dim::getStatic(3)})});
  G.addOutput(N->getResult(0));
  EXPECT_FALSE(getReferencePeakBytes(G).has_value());
}

//===----------------------------------------------------------------------===//
// .npy files.
//===----------------------------------------------------------------------===//

TEST(NpyTest, RoundTripsIncludingEmptyTensors) {
  // An empty tensor has no bytes (its data pointer is null): found by the
  // npy fuzzer, a memcpy from null under UBSan.
  for (std::vector<int64_t> Shape :
       {std::vector<int64_t>{2, 3}, {0, 3}, {}, {4, 0, 2}}) {
    Tensor T(F32, Shape);
    for (int64_t I = 0; I < T.getNumElements(); ++I)
      T.setDouble(I, double(I) - 2.5);
    llvm::Expected<std::string> Bytes = writeNpy(T);
    ASSERT_TRUE(bool(Bytes)) << llvm::toString(Bytes.takeError());
    llvm::Expected<Tensor> Back = parseNpy(*Bytes, "t.npy");
    ASSERT_TRUE(bool(Back)) << llvm::toString(Back.takeError());
    EXPECT_EQ(Back->getType(), T.getType());
    EXPECT_EQ(Back->getBytes(), T.getBytes());
  }
}

TEST(NpyTest, RefusesEmptyArraysWhoseOtherDimsAreHuge) {
  // Found by the npy fuzzer: (0, 3, ..., 24444444444444444) has no bytes,
  // but its strides overflowed int64.
  std::string Header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3, "
      "24444444444444444), }";
  Header.append(64 - (10 + Header.size() + 1) % 64, ' ');
  Header += '\n';
  std::string File = "\x93NUMPY";
  File += char(1);
  File += char(0);
  File += char(Header.size() & 0xff);
  File += char(Header.size() >> 8);
  File += Header;
  llvm::Expected<Tensor> T = parseNpy(File, "huge.npy");
  ASSERT_FALSE(bool(T));
  EXPECT_EQ(llvm::toString(T.takeError()), "huge.npy: array too large");
}
