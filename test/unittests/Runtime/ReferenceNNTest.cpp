//===- ReferenceNNTest.cpp - Reference NN kernels vs onnxruntime ----------===//
//
// The convolution, pooling, normalization, reduction, matrix and resize
// kernels of the reference interpreter: hand-computed cases, cases whose
// expected values come from onnxruntime, and layout invariance (the same
// logical results with operands and results stored channels-last or with
// reversed dims).
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Graph.h"
#include "strider/Runtime/Reference.h"

#include "llvm/Support/Error.h"

#include "gtest/gtest.h"

#include <cmath>
#include <string>
#include <vector>

using namespace strider;
using namespace strider::runtime;

namespace {

constexpr ElementType F32 = ElementType::F32;
constexpr ElementType I64 = ElementType::I64;
constexpr ElementType I32 = ElementType::I32;
constexpr ElementType F64 = ElementType::F64;

/// A tensor given by its logical row-major values.
struct TensorSpec {
  ElementType Elt = ElementType::Unknown;
  std::vector<int64_t> Shape;
  std::vector<double> Values;
  bool isAbsent() const { return Elt == ElementType::Unknown; }
};
const TensorSpec Absent{};

struct NNCase {
  const char *Name;
  OpId Op;
  std::vector<std::pair<std::string, Attribute>> Attrs;
  std::vector<TensorSpec> Operands;
  /// Expected results (their shapes are the result types).
  std::vector<TensorSpec> Results;
};

/// How the layout tests store operands and results.
enum class LayoutChoice { Identity, ChannelsLast, Reversed };

Layout pickLayout(LayoutChoice C, unsigned Rank) {
  if (C == LayoutChoice::ChannelsLast && Rank >= 3)
    return Layout::getChannelsLast(Rank);
  if (C == LayoutChoice::Reversed && Rank >= 2) {
    std::vector<unsigned> Perm;
    for (unsigned I = Rank; I-- > 0;)
      Perm.push_back(I);
    return Layout(Perm);
  }
  return Layout();
}

Tensor makeTensor(const TensorSpec &S, const Layout &L) {
  Tensor T(S.Elt, S.Shape, L);
  size_t I = 0;
  forEachIndex(S.Shape, [&](llvm::ArrayRef<int64_t> Idx) {
    T.setDouble(T.getOffset(Idx), S.Values[I++]);
  });
  return T;
}

/// Logical row-major values of \p T.
std::vector<double> logicalValues(const Tensor &T) {
  std::vector<double> V;
  forEachIndex(T.getShape(), [&](llvm::ArrayRef<int64_t> Idx) {
    V.push_back(T.getDouble(T.getOffset(Idx)));
  });
  return V;
}

/// Builds a one-node graph for \p C and runs the op's reference kernel with
/// every operand and result stored in layout \p LC.
llvm::Expected<std::vector<Tensor>> runCase(const NNCase &C, LayoutChoice LC) {
  Graph G;
  std::vector<Value *> Inputs;
  std::vector<Tensor> Storage;
  for (size_t I = 0; I < C.Operands.size(); ++I) {
    const TensorSpec &S = C.Operands[I];
    if (S.isAbsent()) {
      Inputs.push_back(nullptr);
      continue;
    }
    Layout L = pickLayout(LC, S.Shape.size());
    Inputs.push_back(G.addInput("in" + std::to_string(I),
                                TensorType::get(S.Elt, S.Shape, L)));
  }
  std::vector<std::string> Names;
  std::vector<TensorType> Types;
  for (size_t I = 0; I < C.Results.size(); ++I) {
    const TensorSpec &S = C.Results[I];
    Names.push_back("out" + std::to_string(I));
    Types.push_back(
        TensorType::get(S.Elt, S.Shape, pickLayout(LC, S.Shape.size())));
  }
  Node *N = G.createNode(C.Op, Inputs, Names, Types);
  for (const auto &A : C.Attrs)
    N->setAttr(A.first, A.second);
  Storage.reserve(C.Operands.size());
  std::vector<const Tensor *> Operands;
  for (size_t I = 0; I < C.Operands.size(); ++I) {
    if (!Inputs[I]) {
      Operands.push_back(nullptr);
      continue;
    }
    Storage.push_back(
        makeTensor(C.Operands[I], Inputs[I]->getType().getLayout()));
    Operands.push_back(&Storage.back());
  }
  std::vector<Tensor> Results;
  for (const TensorType &T : Types)
    Results.push_back(Tensor::zeros(T));
  ReferenceKernel K = lookupReferenceKernel(C.Op);
  if (!K)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no kernel");
  if (llvm::Error E = K(*N, Operands, Results))
    return E;
  return Results;
}

void expectClose(const std::vector<double> &Got,
                 const std::vector<double> &Want, double Tol) {
  ASSERT_EQ(Got.size(), Want.size());
  for (size_t I = 0; I < Got.size(); ++I)
    EXPECT_NEAR(Got[I], Want[I], Tol * (1 + std::fabs(Want[I])))
        << "at element " << I;
}

//===----------------------------------------------------------------------===//
// Hand-computed cases
//===----------------------------------------------------------------------===//

const NNCase HandCases[] = {
    // Training mode: batch mean 3 and biased variance 3.5 (+ epsilon 0.5
    // = 4); running stats 1 * 0.5 + 3 * 0.5 and 0.5 * 0.5 + 3.5 * 0.5.
    {"BatchNormTraining", OpId::BatchNormalization,
     {{"training_mode", Attribute::getInt(1)},
      {"epsilon", Attribute::getFloat(0.5f)},
      {"momentum", Attribute::getFloat(0.5f)}},
     {{F32, {2, 1, 2}, {1, 2, 3, 6}}, {F32, {1}, {1}}, {F32, {1}, {0}},
      {F32, {1}, {1}}, {F32, {1}, {0.5}}},
     {{F32, {2, 1, 2}, {-1, -0.5, 0, 1.5}}, {F32, {1}, {2}}, {F32, {1}, {2}}}},
    // 1x1 conv: y[m] = sum_c w[m, c] x[c] + b[m].
    {"ConvPointwise", OpId::Conv, {},
     {{F32, {1, 2, 1, 2}, {1, 2, 3, 4}}, {F32, {1, 2, 1, 1}, {10, 100}},
      {F32, {1}, {0.5}}},
     {{F32, {1, 1, 1, 2}, {310.5, 420.5}}}},
    // Stride-2 transposed conv with a 1-tap kernel spreads the input out.
    {"ConvTransposeSpread", OpId::ConvTranspose,
     {{"strides", Attribute::getInts({2})}},
     {{F32, {1, 1, 2}, {3, 5}}, {F32, {1, 1, 1}, {2}}},
     {{F32, {1, 1, 3}, {6, 0, 10}}}},
    // output_shape one longer than the full result: total padding -1
    // splits as ONNX's floor division does (begin 0, end -1), so the
    // extra element is a trailing zero.
    {"ConvTransposeOutputShapeLonger", OpId::ConvTranspose,
     {{"strides", Attribute::getInts({2})},
      {"output_shape", Attribute::getInts({4})}},
     {{F32, {1, 1, 2}, {3, 5}}, {F32, {1, 1, 1}, {2}}},
     {{F32, {1, 1, 4}, {6, 0, 10, 0}}}},
    // Row-major indices of the window maxima of a 3x3 map.
    {"MaxPoolIndices", OpId::MaxPool,
     {{"kernel_shape", Attribute::getInts({2, 2})}},
     {{F32, {1, 1, 3, 3}, {1, 9, 2, 3, 4, 5, 8, 6, 7}}},
     {{F32, {1, 1, 2, 2}, {9, 9, 8, 7}}, {I64, {1, 1, 2, 2}, {1, 1, 6, 8}}}},
    // Averaging a corner window counts the pads only when asked to.
    {"AveragePoolCountPad", OpId::AveragePool,
     {{"count_include_pad", Attribute::getInt(1)},
      {"kernel_shape", Attribute::getInts({2})},
      {"pads", Attribute::getInts({1, 0})}},
     {{F32, {1, 1, 2}, {4, 8}}},
     {{F32, {1, 1, 2}, {2, 6}}}},
    {"SoftmaxTwo", OpId::Softmax, {},
     {{F32, {1, 2}, {0, std::log(3.0)}}},
     {{F32, {1, 2}, {0.25, 0.75}}}},
    {"ReduceSumAxis0", OpId::ReduceSum, {{"keepdims", Attribute::getInt(0)}},
     {{F32, {2, 2}, {1, 2, 3, 4}}, {I64, {1}, {0}}},
     {{F32, {2}, {4, 6}}}},
    {"GemmIdentity", OpId::Gemm, {},
     {{F32, {2, 2}, {1, 0, 0, 1}}, {F32, {2, 2}, {1, 2, 3, 4}},
      {F32, {}, {10}}},
     {{F32, {2, 2}, {11, 12, 13, 14}}}},
    {"MatMulDot", OpId::MatMul, {},
     {{F32, {3}, {1, 2, 3}}, {F32, {3}, {4, 5, 6}}},
     {{F32, {}, {32}}}},
    {"EinsumTrace", OpId::Einsum, {{"equation", Attribute::getString("ii")}},
     {{F32, {2, 2}, {1, 2, 3, 4}}},
     {{F32, {}, {5}}}},
    {"EinsumBatchDiagonal", OpId::Einsum,
     {{"equation", Attribute::getString("...ii->...i")}},
     {{F64, {2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}}},
     {{F64, {2, 2}, {1, 4, 5, 8}}}},
    {"EinsumTransposeI32", OpId::Einsum,
     {{"equation", Attribute::getString("ij->ji")}},
     {{I32, {2, 3}, {1, 2, 3, 4, 5, 6}}},
     {{I32, {3, 2}, {1, 4, 2, 5, 3, 6}}}},
    {"EinsumRowSums", OpId::Einsum, {{"equation", Attribute::getString("ij->i")}},
     {{F32, {2, 3}, {1, 2, 3, 4, 5, 6}}},
     {{F32, {2}, {6, 15}}}},
    {"EinsumOuter", OpId::Einsum, {{"equation", Attribute::getString("i,j")}},
     {{I64, {2}, {1, 2}}, {I64, {3}, {3, 4, 5}}},
     {{I64, {2, 3}, {3, 4, 5, 6, 8, 10}}}},
    // '...' of 1 and 0 dims; the 1 of B's j broadcasts against A's 2.
    {"EinsumEllipsisAndBroadcast", OpId::Einsum,
     {{"equation", Attribute::getString("...ij,...jk->...ik")}},
     {{F32, {2, 1, 2}, {1, 2, 3, 4}}, {F32, {1, 2}, {5, 6}}},
     {{F32, {2, 1, 2}, {15, 18, 35, 42}}}},
    {"EinsumAttentionScores", OpId::Einsum,
     {{"equation", Attribute::getString("bhqd,bhkd->bhqk")}},
     {{F32, {1, 2, 2, 2}, {1, 0, 0, 1, 1, 1, 2, -1}},
      {F32, {1, 2, 1, 2}, {3, 4, 5, 6}}},
     {{F32, {1, 2, 2, 1}, {3, 4, 11, 4}}}},
    {"ResizeNearestDouble", OpId::Resize,
     {{"mode", Attribute::getString("nearest")}},
     {{F32, {1, 1, 1, 2}, {1, 2}}, Absent, {F32, {4}, {1, 1, 2, 2}}},
     {{F32, {1, 1, 2, 4}, {1, 1, 2, 2, 1, 1, 2, 2}}}},
    // Linear on one axis: half_pixel taps at -0.25, 0.25, 0.75, 1.25.
    {"ResizeLinearRow", OpId::Resize,
     {{"mode", Attribute::getString("linear")}},
     {{F32, {1, 2}, {0, 4}}, Absent, {F32, {2}, {1, 2}}},
     {{F32, {1, 4}, {0, 1, 3, 4}}}},
};

//===----------------------------------------------------------------------===//
// Cases checked against onnxruntime (1.x CPU provider, opset 19, f32).
//
// Generated by this Python snippet (numpy, onnx, onnxruntime); each case
// builds a one-node model, runs it and prints inputs and outputs as the
// initializers below:
//
//   rng = np.random.default_rng(7)
//   r = lambda *s: (rng.integers(-16, 17, size=s) / 8.0).astype(np.float32)
//   pos = lambda *s: (rng.integers(1, 17, size=s) / 8.0).astype(np.float32)
//   def case(name, op, ins, attrs={}, nout=1):
//       names = [f"i{k}" if v is not None else "" for k, v in enumerate(ins)]
//       outs = [f"o{k}" for k in range(nout)]
//       node = helper.make_node(op, names, outs, **attrs)
//       inputs = [make_tensor_value_info(n, INT64 or FLOAT, v.shape) ...]
//       outputs = [make_tensor_value_info(o, INT64 for MaxPool's second
//                  result else FLOAT, None) ...]
//       model = make_model(make_graph([node], "g", inputs, outputs),
//                          opset_imports=[make_opsetid("", 19)],
//                          ir_version=9)
//       res = ort.InferenceSession(model.SerializeToString(),
//                                  providers=["CPUExecutionProvider"]).run(
//           None, feeds)
//       # print name, op, sorted attrs, inputs and res as C++ initializers
//       # (floats with 9 significant digits)
//
// called, in order, as the cases below read, e.g.
//   case("ConvGroupStridedDilated", "Conv", [r(1,2,5,5), r(4,1,3,3), r(4)],
//        dict(group=2, strides=[2,1], pads=[1,0,1,2], dilations=[1,2]))
// (None for a missing optional input; int64 arrays for axes and sizes).
//===----------------------------------------------------------------------===//

const NNCase OrtCases[] = {
    {"ConvGroupStridedDilated", OpId::Conv,
     {{"dilations", Attribute::getInts({1, 2})}, {"group", Attribute::getInt(2)}, {"pads", Attribute::getInts({1, 0, 1, 2})}, {"strides", Attribute::getInts({2, 1})}},
     {{F32, {1, 2, 5, 5}, {1.875, 0.5, 0.75, 1.625, 0.375, 1.125, 1.375, -1.125, -1.875, -0.875, -0.875, 1.5, 1.75, -2, 0, 1.375, -1.5, 1.25, -1.625, -0.125, 1.25, -0.75, -0.625, -0.875, 0.875, -1, 2, -0.25, -0.125, 0, 0.375, 0.25, 0, 2, 1.25, 1.25, 0.875, 0.5, -0.625, 2, -0.125, -1.125, 1.375, -1.375, 1.5, 0.5, -1.625, -1.875, -0.25, -1.875}}, {F32, {4, 1, 3, 3}, {-1.5, 0, 2, -0.125, 1.25, 1.75, 1.375, 0.5, -0.25, 0, -1, 0, -0.5, -1, 2, -2, -1.625, -1.25, 1.875, 0.75, 1.625, -1.25, 0.875, -0.5, 0, -2, 0.5, 1.375, 0.625, -1.375, 0.125, -1, 1.875, 1.625, -1.25, 0}}, {F32, {4}, {1.875, 1.375, 0.875, 0.625}}},
     {{F32, {1, 4, 3, 3}, {4.4375, 4.796875, 0.265625, 3.28125, -5.75, 5, 0.15625, 3.125, 1.171875, 1.109375, -0.203125, 4.296875, -3.4375, 10.140625, -0.921875, 1.875, 4.25, 0.9375, 2.53125, -5.734375, -1.3125, -0.515625, 3.953125, -0.0625, 2.78125, -0.453125, 5.28125, 1.359375, -1.09375, -0.96875, 0.90625, 2.84375, -0.171875, -2.328125, -1.734375, 5.09375}}}},
    {"Conv1DSameLower", OpId::Conv,
     {{"auto_pad", Attribute::getString("SAME_LOWER")}, {"strides", Attribute::getInts({2})}},
     {{F32, {1, 3, 7}, {-1.875, 1, -0.125, -1.625, -1, 0.125, 0.875, 0, 0.5, 1.5, 0.75, -0.625, 0.625, 0.375, -1.625, -1.875, 0.625, -0.5, 0.375, -0.75, -1.125}}, {F32, {2, 3, 2}, {-1.5, -0.5, 1.25, -0.375, -0.5, 0.25, 2, -0.5, 0.375, -0.25, 0.375, -0.25}}},
     {{F32, {1, 2, 4}, {0.53125, -0.28125, 4.453125, 0.109375, 1.34375, 1.015625, -2.59375, -0.046875}}}},
    {"Conv3DDepthwiseSameUpper", OpId::Conv,
     {{"auto_pad", Attribute::getString("SAME_UPPER")}, {"group", Attribute::getInt(2)}},
     {{F32, {1, 2, 3, 4, 4}, {0.625, 0.25, 0.75, 1.875, -1.5, 0.25, -0.25, -0.625, -1.125, -1.875, -0.375, 1.375, -1.625, -0.375, 1.875, 1.875, -1.125, -2, 0.75, -2, -0.875, 0, 1.5, -1.625, 0.625, 0.125, -1.5, 1.375, 1.375, -0.125, 1.875, 0.5, 1.625, 1.875, 0.25, -0.875, -1.5, 0.25, -1.25, 1, 1.75, -1, 0.25, -1.875, -1.375, -0.5, 1.625, 1.875, 0.625, 0.375, 0.25, -1.75, -0.5, 2, -0.375, -1.125, -1.125, 0.875, -1.875, 1.875, 1.5, 0.25, -0.125, 1.125, 0.25, -0.125, -0.75, -0.25, 1, -1.875, -2, 0.875, -0.5, 1.25, -1.875, 1.625, -1.5, -0.375, 1.875, -1.625, 0.625, 1, -0.25, -1.75, 0.125, -0.25, 1.5, 0.75, -0.625, -1.875, 0.375, -0.875, 0.75, 1.5, -0.625, 1.625}}, {F32, {2, 1, 2, 2, 2}, {0.125, 0.125, 1.125, 1.25, 1.75, 2, -1.5, -0.375, 1.75, -0.75, -2, 0.375, 1, 1, 1.25, 0.625}}, {F32, {2}, {-1.5, 1.375}}},
     {{F32, {1, 2, 3, 4, 4}, {-7.421875, -3.96875, -6.5625, -3.03125, -7.78125, -0.703125, 0.796875, -4.9375, -4.84375, -3.15625, 0.203125, 2.4375, 0.40625, 2.21875, 3.25, -0.390625, 5.875, 4.09375, -1.8125, -6.609375, -5.125, -3.703125, -1.34375, 4.40625, 3.296875, -0.578125, -5.234375, -6.859375, -4.75, 1.09375, 5.390625, 1.84375, -2.4375, -2.515625, -1.734375, -0.484375, -0.9375, -2.4375, -3.59375, -3.484375, -3.578125, -0.125, 2.46875, 0.375, -1.734375, -1.359375, -1.0625, -1.265625, 4.140625, -6.765625, 0.5, 1.40625, 0.859375, -0.78125, 3.5625, -1.4375, -5.515625, 3.84375, -1.5625, 2, 1.9375, 3.40625, 0.5625, 1.71875, 0.828125, 6.09375, 4.921875, -1.625, 3.921875, -4.46875, 3.75, -0.6875, 1.796875, 6.40625, -7.75, 8.625, 1.28125, 0.1875, 6.875, 0.15625, 1.375, 4.375, -0.46875, -3.1875, 2.328125, 3.703125, 2.359375, 4.4375, 0.75, -5.421875, 4.546875, -3.40625, 1.5625, 4.46875, -0.9375, 4.21875}}}},
    {"ConvTransposePadsOutputPadding", OpId::ConvTranspose,
     {{"output_padding", Attribute::getInts({1, 0})}, {"pads", Attribute::getInts({1, 0, 0, 1})}, {"strides", Attribute::getInts({2, 2})}},
     {{F32, {1, 2, 3, 3}, {-0.375, 1.375, 1.25, 2, -2, 1.5, 0.5, 0, 1.25, 1.875, 0, -1.75, 0.875, -1.125, -1.125, -1.25, -1.25, 1.75}}, {F32, {2, 3, 3, 3}, {-0.625, -1.625, -1.375, -0.375, -0.625, -0.75, 1.875, 1.5, 0.25, 2, -0.625, -1.5, -1, -1.75, 1.875, -1.125, -0.25, -1.25, 2, -1.375, 0.125, 1.875, 0.125, 1.625, 1.625, 1.125, 1, 0.375, 0.375, 1.375, -0.25, 1.875, 1.5, -0.5, -0.375, 0.875, 1.75, -1.625, -1.75, -1, -0.25, -1.375, 0.125, 0.125, 1.875, 1, -1, 1.125, 1.25, 0.75, 0.75, -0.75, 0.875, -1.5}}, {F32, {3}, {0.5, 1.75, 2}}},
     {{F32, {1, 3, 7, 6}, {0.171875, 4.25, 3.078125, -0.359375, -0.5625, -3.5625, -2.0625, -3.6875, 3.90625, 5.390625, 3.90625, 0.171875, -0.46875, 0.890625, 1.34375, -0.359375, 0.03125, -2.546875, 3.03125, 1.890625, -4.296875, -2.546875, 0.546875, 1.796875, 0.625, -2.15625, -1.4375, -1.84375, -2.28125, 3, 2.0625, 1.71875, 0.15625, 0.96875, 0.875, 1.71875, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 1.9375, -2.90625, -0.65625, 4.828125, 0, 7.9375, -0.59375, -6.3125, 4.484375, 4.40625, 2.109375, -1.125, -1.96875, 7.421875, 5.53125, -0.828125, -0.59375, -1.578125, 3.078125, 2.25, 4.140625, 8.0625, -2.390625, 2.5, 1.1875, 5.65625, 2.0625, 0.46875, -0.875, 1.03125, 1.46875, -1.375, 1.59375, -1.78125, 1.65625, 1.75, 1.75, 1.75, 1.75, 1.75, 1.75, 3.640625, 3.359375, 5.375, 2.171875, 4.390625, 0.84375, 4.859375, -0.40625, -2.84375, 7.421875, 7.078125, 0.9375, 6.84375, 2.90625, 0.75, 0.90625, -0.6875, 1.34375, 4.34375, 5.578125, -2.3125, 0.015625, 7.8125, -0.765625, 1.375, 1.125, 0.3125, 1.0625, 5.59375, 3.46875, 3.75, 1.46875, 5.3125, 0.90625, 4.59375, 4.9375, 2, 2, 2, 2, 2, 2}}}},
    {"ConvTransposeGroupOutputShape", OpId::ConvTranspose,
     {{"group", Attribute::getInt(2)}, {"output_shape", Attribute::getInts({5, 5})}, {"strides", Attribute::getInts({2, 2})}},
     {{F32, {1, 2, 3, 3}, {-0.875, -0.75, 0.5, -0.375, 1, -1.25, -1.375, -1.875, -0.125, -1.125, -0.875, 1.75, 1.25, 1.375, 0.375, -1.625, 1, 0.375}}, {F32, {2, 1, 2, 2}, {1.625, -0.125, -1.375, 0.375, -0.125, 0.625, -0.5, -0.75}}},
     {{F32, {1, 2, 5, 5}, {-0.328125, 1.03125, -0.28125, -0.6875, 0.1875, 0.046875, 1.625, -0.125, -2.03125, 0.15625, -0.140625, -1.375, 0.375, 1.71875, -0.46875, 0.171875, -3.046875, 0.234375, -0.203125, 0.015625, -0.515625, 2.578125, -0.703125, 0.171875, -0.046875, 0.84375, 0.4375, 0.65625, -0.875, -1.3125, 0.78125, -0.171875, 0.859375, -0.046875, 0.234375, -0.9375, -0.6875, -1.03125, -0.1875, -0.28125, -1.015625, -0.125, 0.625, -0.046875, 0.234375, 1.21875, -0.5, -0.75, -0.1875, -0.28125}}}},
    {"ConvTranspose1DDilatedSameUpper", OpId::ConvTranspose,
     {{"auto_pad", Attribute::getString("SAME_UPPER")}, {"dilations", Attribute::getInts({2})}, {"strides", Attribute::getInts({2})}},
     {{F32, {1, 2, 4}, {-1.5, 1.875, 1, -0.125, -1.125, 0.5, -0.375, 0.5}}, {F32, {2, 2, 3}, {-1.75, -1.25, 1, -1.75, 0.75, -0.375, -2, 1.125, 0.875, 1.25, 1.625, 1}}, {F32, {2}, {1.375, -1.625}}},
     {{F32, {1, 2, 8}, {1.375, -2.296875, 1.375, -3.890625, 1.375, 1.234375, 1.375, 2.765625, -1.625, -7.234375, -1.625, -2.1875, -1.625, -0.84375, -1.625, -1.65625}}}},
    {"MaxPoolCeilIndices", OpId::MaxPool,
     {{"ceil_mode", Attribute::getInt(1)}, {"kernel_shape", Attribute::getInts({2, 3})}, {"pads", Attribute::getInts({0, 1, 1, 0})}, {"strides", Attribute::getInts({2, 2})}},
     {{F32, {1, 2, 5, 6}, {1.75, 1.75, 0.75, 1.25, 1, 1.5, 1.625, 0.125, 1.25, 1.75, -0.875, -1.875, -1.375, -2, -0.25, -2, -1, -1, 0.875, -1, 1.875, -1.25, 2, 0.25, -1, -1.875, -0.75, 0.375, -1.625, -1.375, -1.625, 0.75, -1.75, -2, -0.125, -0.75, 0.25, 1.75, 1.5, 0.125, 0.625, 1.25, -0.25, 0.625, -1.125, 0.5, -1.125, -1.25, 1.125, 0.25, -0.5, -1.875, -1.125, 1.25, -0.125, 1.875, 1.625, 1.5, -2, -1.875}}},
     {{F32, {1, 2, 3, 3}, {1.75, 1.75, 1.75, 0.875, 1.875, 2, -1, 0.375, 0.375, 1.75, 1.75, 1.25, 1.125, 0.625, 1.25, 1.875, 1.875, 1.5}}, {I64, {1, 2, 3, 3}, {0, 1, 9, 18, 20, 22, 24, 27, 27, 37, 37, 41, 48, 43, 53, 55, 55, 57}}}},
    {"MaxPoolDilatedColumnMajor", OpId::MaxPool,
     {{"dilations", Attribute::getInts({2, 2})}, {"kernel_shape", Attribute::getInts({2, 2})}, {"storage_order", Attribute::getInt(1)}},
     {{F32, {1, 2, 5, 5}, {0.375, -0.625, 1.375, -0.75, -1.375, -1.625, -0.875, 0.5, -1.5, 1.25, -0.875, -0.75, 0.625, 1.5, -0.25, 1.25, -0.75, -1.5, 1.375, 1.125, 1, 1.625, 0, -1.25, 0.375, 0.25, -0.5, 0.625, -1, 0.5, 1.25, -1.625, -0.25, 0.625, -1.875, 0.5, 1.75, 1.375, 0.75, 1.25, -0.625, -0.75, -1.75, 0.875, -0.75, 1.5, -0.125, 1.625, -1.5, -1.375}}},
     {{F32, {1, 2, 3, 3}, {1.375, 1.5, 1.375, 1.25, 1.375, 1.25, 1, 1.625, 0.625, 1.375, 1.75, 1.375, 1.25, 0.875, -0.25, 1.625, 1.75, 1.625}}, {I64, {1, 2, 3, 3}, {10, 17, 10, 3, 18, 21, 4, 9, 12, 37, 32, 37, 26, 43, 36, 39, 32, 39}}}},
    {"MaxPool1DSameUpper", OpId::MaxPool,
     {{"auto_pad", Attribute::getString("SAME_UPPER")}, {"kernel_shape", Attribute::getInts({3})}, {"strides", Attribute::getInts({2})}},
     {{F32, {1, 2, 7}, {-0.625, -2, 0, 0.625, 0.625, -1.125, -1.375, 0.25, 0.5, 1.875, 1.625, -0.5, -1.375, -1}}},
     {{F32, {1, 2, 4}, {-0.625, 0.625, 0.625, -1.125, 0.5, 1.875, 1.625, -1}}}},
    {"AveragePoolIncludePad", OpId::AveragePool,
     {{"count_include_pad", Attribute::getInt(1)}, {"kernel_shape", Attribute::getInts({3, 3})}, {"pads", Attribute::getInts({1, 1, 1, 1})}, {"strides", Attribute::getInts({2, 2})}},
     {{F32, {1, 2, 5, 5}, {1.625, -0.125, 2, 0.625, 0.375, -1.625, 0.375, -0.5, 1.375, -1.5, -1.25, 0.625, 0.75, 1.375, 0.125, -0.5, -0.75, -0.5, 0.625, 0.125, -0.875, -1.125, 0.875, -1, -1.25, -0.75, 1.5, -0.125, 0.375, -1.75, -0.625, 1, 1.125, 0.375, 1.5, -0.875, -1.375, -1.75, -1.25, 1.125, 1.625, -1.5, 0, -1.5, 1.375, -1.5, 0.625, -1.75, 1, 1.625}}},
     {{F32, {1, 2, 3, 3}, {0.027777778, 0.416666657, 0.0972222239, -0.347222209, 0.375, 0.236111104, -0.361111104, -0.208333328, -0.166666672, 0.125, 0.472222209, 0.055555556, -0.194444448, -0.541666687, 0.180555552, -0.0833333358, -0.347222209, 0.277777791}}}},
    {"AveragePoolExcludePadCeil", OpId::AveragePool,
     {{"ceil_mode", Attribute::getInt(1)}, {"kernel_shape", Attribute::getInts({2, 2})}, {"pads", Attribute::getInts({1, 0, 0, 1})}, {"strides", Attribute::getInts({2, 2})}},
     {{F32, {1, 2, 5, 6}, {1, -1, 1.375, -0.75, 1, 1.375, 0, 0.5, 1.5, -1.25, -2, -0.25, -1.375, 1.625, 1.5, -0.5, -0.75, 0.875, -0.25, -1.625, 0.625, 1, -1.75, 1.125, 0.125, 1.375, 1.5, 0.75, -0.625, -0.5, 0.875, -1.75, -1.125, 0.125, 1.875, 1, 1.25, -1.25, -0.875, -1, 1, 0.125, -1.25, 1, 0.625, 1.625, 0.25, -1.5, 1.625, -1.25, -1.875, 1.25, -0.25, 0.625, -1.5, 0.875, -0.375, 2, 0.5, 1.75}}},
     {{F32, {1, 2, 3, 3}, {0, 0.3125, 1.1875, 0.1875, 0.3125, -0.53125, -0.09375, 0.96875, -0.4375, -0.4375, -0.5, 1.4375, -0.0625, 0.09375, -0.03125, -0.0625, 0.25, 0.65625}}}},
    {"AveragePoolSameLower", OpId::AveragePool,
     {{"auto_pad", Attribute::getString("SAME_LOWER")}, {"kernel_shape", Attribute::getInts({3, 2})}},
     {{F32, {1, 1, 4, 5}, {1.25, 1.375, -1.75, 1.125, 0.375, -0.375, -0.75, 0.625, -1.25, -1.25, 1.5, 1.125, 0.375, 1.125, -0.75, 0.875, -1.25, -0.25, -1.5, -0.5}}},
     {{F32, {1, 1, 4, 5}, {0.4375, 0.375, -0.125, -0.3125, -0.25, 0.791666687, 0.6875, 0.166666672, 0.0416666679, -0.104166664, 0.666666687, 0.1875, -0.020833334, -0.145833328, -0.6875, 1.1875, 0.5625, 0, -0.0625, -0.40625}}}},
    {"GlobalAveragePool", OpId::GlobalAveragePool,
     {},
     {{F32, {2, 3, 2, 3}, {-0.625, -0.375, -0.125, -1.875, -0.625, 1.375, -0.25, 0.125, -1.625, -0.5, 2, 0.25, -2, 0.875, 1.125, -0.5, -1.875, 1.375, -1, 1.75, -0.625, -0.5, 1.25, -1.5, -2, 1.125, 1.75, 2, -1.5, -1.5, -0.625, 0.875, 1.75, 1.375, -0.5, 1.75}}},
     {{F32, {2, 3, 1, 1}, {-0.375, 0, -0.166666672, -0.104166664, -0.020833334, 0.770833313}}}},
    {"GlobalMaxPool", OpId::GlobalMaxPool,
     {},
     {{F32, {1, 3, 2, 2, 2}, {-1, -1.5, -0.25, -1.625, 0.75, 2, -1.625, -1.625, -1.375, -1.375, 0.125, 0.25, 1.875, -0.25, 1.75, 1, 1.5, -1.25, -0.25, 1.75, 1, -1.125, 1.375, 1.125}}},
     {{F32, {1, 3, 1, 1, 1}, {2, 1.875, 1.75}}}},
    {"BatchNormalization", OpId::BatchNormalization,
     {{"epsilon", Attribute::getFloat(0.001f)}},
     {{F32, {2, 3, 2, 2}, {-1.5, -1.75, -1, -0.125, -1.375, -1.875, -1.625, -0.75, -0.5, -0.75, -0.25, 0.875, -1, -0.125, 1, -1.875, 1.875, 2, -0.875, 1.625, -1, 1.75, 0.625, -1}}, {F32, {3}, {-1.75, -0.375, 1}}, {F32, {3}, {-1.125, 0, -1.5}}, {F32, {3}, {-0.25, -1.875, 2}}, {F32, {3}, {1.125, 1.75, 0.25}}},
     {{F32, {2, 3, 2, 2}, {0.936478734, 1.34877431, 0.111887217, -1.33114779, -0.141696185, 0, -0.0708481073, -0.318816453, -6.49003029, -6.9890337, -5.99102736, -3.74551392, 0.111887217, -1.33114779, -3.18647861, 1.55492222, -1.06272149, -1.09814548, -0.2833924, -0.991873384, -7.48803663, -1.99900317, -4.24451685, -7.48803663}}}},
    {"InstanceNormalization", OpId::InstanceNormalization,
     {{"epsilon", Attribute::getFloat(0.01f)}},
     {{F32, {2, 3, 2, 3}, {-1.375, -1.375, 0.25, 1.5, 0.5, -0.125, 1.875, -1.25, -1.375, 0.75, 1.5, -1, -1, 0.125, 1.125, -0.875, 1.375, 0.125, 0.875, 0.5, -0.125, 0.125, 2, -0.375, 1.875, 1.25, -1.25, 1.5, -0.5, -1.375, -1, -1.5, -0.625, -1.625, 0.125, 2}}, {F32, {3}, {1.875, 1.875, -1}}, {F32, {3}, {-1.125, 0.75, 2}}},
     {{F32, {2, 3, 2, 3}, {-3.44043541, -3.44043541, -0.479714721, 1.79776287, -0.0242192149, -1.16295803, 3.25397849, -1.11342597, -1.28812206, 1.68171287, 2.72988987, -0.764033556, 3.26981831, 2.0230875, 0.914882421, 3.13129282, 0.637831092, 2.0230875, -0.235312939, -1.12500012, -2.60781217, -2.0146873, 2.43374872, -3.20093679, 3.0298636, 2.15299296, -1.35448956, 2.50374103, -0.302244723, -1.5298636, 2.45405149, 2.85765314, 2.1513505, 2.95855331, 1.54594851, 0.0324431658}}}},
    {"SoftmaxAxis1", OpId::Softmax,
     {{"axis", Attribute::getInt(1)}},
     {{F32, {2, 3, 2, 2}, {1.375, -1.25, 1, 0, -0.25, 0, 0.25, 1.75, 1.25, -1.875, 1.125, -0.75, -0.625, 0.375, 2, -1.75, 0, -1.125, 1.75, -0.125, 1.5, 1.625, -1.625, 1.125}}},
     {{F32, {2, 3, 2, 2}, {0.48090595, 0.198981047, 0.383801281, 0.138370588, 0.0946960002, 0.694512069, 0.181294888, 0.796267748, 0.424398005, 0.106506877, 0.43490383, 0.0653616339, 0.088958919, 0.212157786, 0.553878605, 0.0420100205, 0.166197136, 0.0473387986, 0.431361079, 0.213344485, 0.7448439, 0.74050343, 0.0147603648, 0.744645417}}}},
    {"LogSoftmaxDefaultAxis", OpId::LogSoftmax,
     {},
     {{F32, {2, 3, 4}, {1.25, 1.375, 2, 1.125, 1.375, 0.875, -0.875, 1.5, 0.875, 0.75, 2, 1, -0.625, -0.875, -0.75, -1.375, -1.75, 1, 1.125, -1.375, -0.375, 1.75, 1.375, 0.375}}},
     {{F32, {2, 3, 4}, {-1.63562119, -1.51062119, -0.88562119, -1.76062119, -1.04559064, -1.54559064, -3.29559064, -0.92059058, -1.80761027, -1.93261027, -0.682610214, -1.68261027, -1.14220297, -1.39220297, -1.26720297, -1.89220297, -3.57859135, -0.828591466, -0.703591466, -3.20359135, -2.84749317, -0.722493231, -1.09749317, -2.09749317}}}},
    {"ReduceMeanKeepDims", OpId::ReduceMean,
     {},
     {{F32, {2, 3, 2, 2}, {2, -0.75, 1.375, 1.75, 0.375, -1.375, -0.875, 0, -0.875, -1.625, -1.375, 1.875, -0.5, 0.25, -0.25, 1.25, -1.625, -0.875, 0.375, 1.25, -0.125, 0.875, 1.25, 0.625}}, {I64, {2}, {1, -1}}},
     {{F32, {2, 1, 2, 1}, {-0.375, 0.458333343, -0.333333343, 0.75}}}},
    {"ReduceMaxNoKeepDims", OpId::ReduceMax,
     {{"keepdims", Attribute::getInt(0)}},
     {{F32, {2, 3, 2, 2}, {1.375, 1.875, -1.125, -0.25, -1.125, -0.375, -2, 0.75, -1.125, 1.375, 0.875, -0.625, -0.25, 0.75, -0.375, -1.25, -1.875, 0.25, 0.125, 1.125, -1.5, -1.75, 1, 1}}, {I64, {1}, {2}}},
     {{F32, {2, 3, 2}, {1.375, 1.875, -1.125, 0.75, 0.875, 1.375, -0.25, 0.75, 0.125, 1.125, 1, 1}}}},
    {"ReduceSumAll", OpId::ReduceSum,
     {{"keepdims", Attribute::getInt(0)}},
     {{F32, {2, 3, 2, 2}, {1.25, -2, 0.625, 1.875, 1.125, -0.125, -0.125, -0.375, -1.875, 0.875, 0.125, 0.125, 1.75, 1, 1.875, -1.75, 1.875, 0.25, -0.375, 0.25, -1.875, 1.75, 0.5, -1.875}}},
     {{F32, {}, {4.875}}}},
    // Integers reduce exactly; u64 values past 2^63 order as unsigned
    // (2^63 + 2048 is exact in a double, as the table holds values).
    {"ReduceMaxU64", OpId::ReduceMax,
     {{"keepdims", Attribute::getInt(0)}},
     {{ElementType::U64, {3}, {1, 9223372036854777856.0, 7}}},
     {{ElementType::U64, {}, {9223372036854777856.0}}}},
    // Max, Min, comparisons and division of u64 as unsigned too.
    {"MaxU64", OpId::Max,
     {},
     {{ElementType::U64, {3}, {1, 9223372036854777856.0, 7}}, {ElementType::U64, {3}, {9223372036854777856.0, 5, 7}}},
     {{ElementType::U64, {3}, {9223372036854777856.0, 9223372036854777856.0, 7}}}},
    {"MinU64", OpId::Min,
     {},
     {{ElementType::U64, {2}, {1, 9223372036854777856.0}}, {ElementType::U64, {2}, {9223372036854777856.0, 5}}},
     {{ElementType::U64, {2}, {1, 5}}}},
    {"LessU64", OpId::Less,
     {},
     {{ElementType::U64, {3}, {1, 9223372036854777856.0, 7}}, {ElementType::U64, {3}, {9223372036854777856.0, 5, 7}}},
     {{ElementType::Bool, {3}, {1, 0, 0}}}},
    {"DivU64", OpId::Div,
     {},
     {{ElementType::U64, {3}, {18446744073709549568.0, 9, 4}}, {ElementType::U64, {3}, {2, 2, 0}}},
     {{ElementType::U64, {3}, {9223372036854774784.0, 4, 0}}}},
    {"ReduceMinI64", OpId::ReduceMin,
     {{"keepdims", Attribute::getInt(0)}},
     {{I64, {3}, {4, -9007199254740992.0, 3}}},
     {{I64, {}, {-9007199254740992.0}}}},
    {"ReduceSumNoop", OpId::ReduceSum,
     {{"noop_with_empty_axes", Attribute::getInt(1)}},
     {{F32, {1, 2, 2, 2}, {1.75, -0.25, -1.625, 0.5, -1.75, 0.25, 1.125, -1.75}}},
     {{F32, {1, 2, 2, 2}, {1.75, -0.25, -1.625, 0.5, -1.75, 0.25, 1.125, -1.75}}}},
    {"GemmTransposedBroadcastC", OpId::Gemm,
     {{"alpha", Attribute::getFloat(0.5f)}, {"beta", Attribute::getFloat(2.0f)}, {"transA", Attribute::getInt(1)}, {"transB", Attribute::getInt(1)}},
     {{F32, {3, 2}, {1.25, 0.375, -0.75, -1.125, -2, -1.25}}, {F32, {4, 3}, {-0.875, 1.5, 0, -1.25, 1, -0.25, 1.375, 1, 1.75, 0.875, -1.625, 0.25}}, {F32, {4}, {-0.25, 1.25, -1.375, -0.125}}},
     {{F32, {2, 4}, {-1.609375, 1.59375, -4.015625, 0.65625, -1.5078125, 1.859375, -4.1484375, 0.671875}}}},
    {"GemmColumnC", OpId::Gemm,
     {{"beta", Attribute::getFloat(-1.0f)}},
     {{F32, {2, 3}, {1.375, 0.5, -1.875, 1.375, -0.5, 0.75}}, {F32, {3, 4}, {0.625, 0.625, -0.375, -0.375, -1.625, 0.25, -0.875, -0.375, -1.375, 1, 1.75, -0.5}}, {F32, {2, 1}, {-0.375, -0.125}}},
     {{F32, {2, 4}, {3, -0.515625, -3.859375, 0.609375, 0.765625, 1.609375, 1.359375, -0.578125}}}},
    {"MatMulBatchBroadcast", OpId::MatMul,
     {},
     {{F32, {2, 1, 3, 4}, {-1.75, 1, 1.625, 0, -1.75, -0.625, -1.375, 1.375, 1.25, -0.5, -0.5, 1.375, -1.75, 1.125, 1.875, -0.25, 1, 0.875, 1.625, -1.875, 0.875, -0.5, 1.5, 1.5}}, {F32, {3, 4, 2}, {-0.875, 0.375, 0, 0.25, 1.375, 0.625, 1, 0.75, -1, 0.375, -0.5, -0.375, -1.625, -1.25, -0.625, -0.875, 0.625, -0.875, -1, -0.25, 0.25, 2, 0, -0.625}}},
     {{F32, {2, 3, 3, 2}, {3.765625, 0.609375, 1.015625, -0.640625, -0.40625, 1.0625, -1.390625, -3.0625, 3.4375, 0.09375, -1.046875, 0.078125, -1.6875, 4.53125, -0.8125, -1.921875, 1.15625, -2.828125, 3.859375, 0.609375, -0.515625, 0.203125, 2.796875, 2.265625, -1.703125, -3.203125, -2.90625, -0.34375, -4, -2.671875, -1.75, 5.15625, 0.15625, 3.328125, 1.421875, 1.421875}}}},
    {"MatMulVectorLeft", OpId::MatMul,
     {},
     {{F32, {3}, {-0.75, -0.25, 1.75}}, {F32, {2, 3, 4}, {-0.5, -1, 0.375, 1.125, 1.875, -0.875, 1.625, 1.5, -0.5, -0.625, -1, -0.75, 1.625, -0.75, 0, 1.75, 0.75, -1.5, -1.75, -1.125, 1.5, -1.125, -0.75, 0.125}}},
     {{F32, {2, 4}, {-0.96875, -0.125, -2.4375, -2.53125, 1.21875, -1.03125, -0.875, -0.8125}}}},
    {"MatMulVectorRight", OpId::MatMul,
     {},
     {{F32, {2, 1, 3, 4}, {0, -1.75, -1.25, 2, -0.375, -0.875, 1.375, -0.125, 1.375, -1.375, -0.125, 1.25, 1.125, 0.75, -0.125, 1.375, -0.5, 0.625, 0.25, -0.875, -1.25, 0.125, -0.75, 0.125}}, {F32, {4}, {0.875, 1.25, 1.125, 0}}},
     {{F32, {2, 1, 3}, {-3.59375, 0.125, -0.65625, 1.78125, 0.625, -1.78125}}}},
    {"ResizeNearestAsymmetricFloor", OpId::Resize,
     {{"coordinate_transformation_mode", Attribute::getString("asymmetric")}, {"mode", Attribute::getString("nearest")}, {"nearest_mode", Attribute::getString("floor")}},
     {{F32, {1, 2, 2, 3}, {-1.875, -1.375, 1, 0.375, 1.25, 0, -0.25, -1, -1.75, -1.5, 0.75, 0.375}}, Absent, {F32, {4}, {1, 1, 2, 1.5}}},
     {{F32, {1, 2, 4, 4}, {-1.875, -1.875, -1.375, 1, -1.875, -1.875, -1.375, 1, 0.375, 0.375, 1.25, 0, 0.375, 0.375, 1.25, 0, -0.25, -0.25, -1, -1.75, -0.25, -0.25, -1, -1.75, -1.5, -1.5, 0.75, 0.375, -1.5, -1.5, 0.75, 0.375}}}},
    {"ResizeNearestHalfPixelCeil", OpId::Resize,
     {{"mode", Attribute::getString("nearest")}, {"nearest_mode", Attribute::getString("ceil")}},
     {{F32, {1, 1, 3, 4}, {-1, -0.625, 0.625, -0.5, -0.5, -1, 0.625, 1.625, -1, -0.875, -0.125, -1.25}}, Absent, {F32, {4}, {1, 1, 1.66999996, 0.75}}},
     {{F32, {1, 1, 5, 3}, {-0.625, 0.625, -0.5, -1, 0.625, 1.625, -1, 0.625, 1.625, -0.875, -0.125, -1.25, -0.875, -0.125, -1.25}}}},
    {"ResizeNearestPreferCeilSizes", OpId::Resize,
     {{"axes", Attribute::getInts({2, 3})}, {"mode", Attribute::getString("nearest")}, {"nearest_mode", Attribute::getString("round_prefer_ceil")}},
     {{F32, {1, 1, 4, 4}, {0.125, 1.625, 0.5, -1.375, -1.25, -1.75, 1.875, -0.625, -0.875, 1.5, -0.75, -1.125, -1, -0.375, -1.75, 0.625}}, Absent, Absent, {I64, {2}, {6, 3}}},
     {{F32, {1, 1, 6, 3}, {0.125, 0.5, -1.375, -1.25, 1.875, -0.625, -1.25, 1.875, -0.625, -0.875, -0.75, -1.125, -1, -1.75, 0.625, -1, -1.75, 0.625}}}},
    {"ResizeLinearHalfPixel", OpId::Resize,
     {{"mode", Attribute::getString("linear")}},
     {{F32, {1, 2, 2, 3}, {-0.375, 2, 1.125, -0.5, 0.875, 1.25, -1.25, -1.375, -1.5, -1.875, -0.75, 1.25}}, Absent, {F32, {4}, {1, 1, 2, 2}}},
     {{F32, {1, 2, 4, 6}, {-0.375, 0.21875, 1.40625, 1.78125, 1.34375, 1.125, -0.40625, 0.125, 1.1875, 1.578125, 1.296875, 1.15625, -0.46875, -0.0625, 0.75, 1.171875, 1.203125, 1.21875, -0.5, -0.15625, 0.53125, 0.96875, 1.15625, 1.25, -1.25, -1.28125, -1.34375, -1.40625, -1.46875, -1.5, -1.40625, -1.359375, -1.265625, -1.1171875, -0.9140625, -0.8125, -1.71875, -1.515625, -1.109375, -0.5390625, 0.1953125, 0.5625, -1.875, -1.59375, -1.03125, -0.25, 0.75, 1.25}}}},
    {"ResizeLinearAlignCorners", OpId::Resize,
     {{"coordinate_transformation_mode", Attribute::getString("align_corners")}, {"mode", Attribute::getString("linear")}},
     {{F32, {1, 1, 3, 3}, {1.125, -0.5, 0, 1.125, 1.75, -0.875, 0.625, 0.375, 0.5}}, Absent, Absent, {I64, {4}, {1, 1, 5, 4}}},
     {{F32, {1, 1, 5, 4}, {1.125, 0.0416666269, -0.333333313, 0, 1.125, 0.791666687, 0.270833313, -0.4375, 1.125, 1.54166675, 0.87499994, -0.875, 0.875, 1, 0.645833254, -0.1875, 0.625, 0.458333313, 0.416666687, 0.5}}}},
    {"ResizeLinearPytorchHalfPixelDown", OpId::Resize,
     {{"coordinate_transformation_mode", Attribute::getString("pytorch_half_pixel")}, {"mode", Attribute::getString("linear")}},
     {{F32, {1, 1, 4, 6}, {1.25, 1.125, -0.375, 1, -1.875, -0.625, -1.125, -1, 1.625, -0.25, -1.75, 0, -1.75, -1.5, -0.5, -0.25, -1.125, 0.625, 0, -1.5, 1.375, -1.5, -0.625, -1.375}}, Absent, {F32, {4}, {1, 1, 0.5, 0.5}}},
     {{F32, {1, 1, 2, 3}, {0.0625, 0.5, -1.0625, -1.1875, -0.21875, -0.625}}}},
    {"ResizeCubic", OpId::Resize,
     {{"mode", Attribute::getString("cubic")}},
     {{F32, {1, 1, 4, 4}, {1.875, -0.875, 1.5, 1.875, -1.125, -2, -2, -1.25, -0.375, -1.375, 1.875, -0.125, 1.375, -2, -1.5, -0.125}}, Absent, {F32, {4}, {1, 1, 2, 1.5}}},
     {{F32, {1, 1, 8, 6}, {2.44728851, 0.471389771, -0.641245782, 1.41203976, 2.28300476, 2.23370886, 1.37040424, -0.152954102, -1.11574423, 0.234956726, 1.01062012, 1.17576098, -0.412728339, -1.18603516, -1.91127181, -1.74899697, -1.11987305, -0.577738702, -1.2790091, -1.69865417, -1.92630661, -1.47111464, -1.29402161, -1.32055342, -0.778079927, -1.4176178, -1.12685847, 0.977484763, 0.625137329, -0.639027536, 0.23524484, -0.953460693, -1.1326493, 1.19831288, 1.03475952, -0.138759717, 1.25152469, -0.531768799, -1.91440916, -0.870615244, -0.226287842, -0.0408597589, 1.87428355, -0.272857666, -2.38054872, -2.09928966, -0.970794678, 0.0252563041}}}},
    {"ResizeCubicExcludeOutsideAsymmetric", OpId::Resize,
     {{"coordinate_transformation_mode", Attribute::getString("asymmetric")}, {"cubic_coeff_a", Attribute::getFloat(-0.5f)}, {"exclude_outside", Attribute::getInt(1)}, {"mode", Attribute::getString("cubic")}},
     {{F32, {1, 1, 4, 4}, {-1.375, -1.375, -2, -1, 1.125, 1.25, 0, -1.25, -0.25, 0.5, -1.5, -0.375, 1.375, -0.375, -0.125, 1.25}}, Absent, {F32, {4}, {1, 1, 1.5, 2}}},
     {{F32, {1, 1, 6, 8}, {-1.375, -1.33823538, -1.375, -1.75, -2, -1.50735307, -1, -0.875, 0.419642836, 0.49711141, 0.459821373, 0.00809149444, -0.535714209, -0.96297276, -1.23214269, -1.31919634, 0.842593193, 1.1307193, 1.25462937, 0.524594903, -0.347221911, -0.823801219, -1.06944335, -1.15972126, -0.25, 0.220588237, 0.5, -0.5234375, -1.5, -1.02205896, -0.375, -0.234375, 0.879310548, 0.413793266, -0.159482658, -0.50942868, -0.556034267, 0.155425996, 0.831896424, 1.00538766, 1.54605258, 0.570046425, -0.46710518, -0.437088788, 0.0197367072, 0.790247619, 1.42105246, 1.59621692}}}},
    {"ResizeTfCropAndResize", OpId::Resize,
     {{"coordinate_transformation_mode", Attribute::getString("tf_crop_and_resize")}, {"extrapolation_value", Attribute::getFloat(7.5f)}, {"mode", Attribute::getString("linear")}},
     {{F32, {1, 1, 4, 4}, {0.75, -1.375, 0.5, 1.75, -1.25, 1.625, 0.375, 0.75, -0.75, -1.875, -2, 0.625, 2, 0.375, -0.625, 1.125}}, {F32, {8}, {0, 0, 0.400000006, -0.200000003, 1, 1, 1.20000005, 0.899999976}}, Absent, {I64, {4}, {1, 1, 3, 3}}},
     {{F32, {1, 1, 3, 3}, {7.5, 0.873749673, 0.4775002, 7.5, -0.998749852, 0.142500743, 7.5, 7.5, 7.5}}}},
    {"ResizeNotLargerSizes", OpId::Resize,
     {{"axes", Attribute::getInts({2, 3})}, {"keep_aspect_ratio_policy", Attribute::getString("not_larger")}, {"mode", Attribute::getString("nearest")}},
     {{F32, {1, 1, 2, 4}, {1.875, -1.125, -1.625, 1.875, -1.875, 1.625, -1.5, -1.625}}, Absent, Absent, {I64, {2}, {4, 4}}},
     {{F32, {1, 1, 2, 4}, {1.875, -1.125, -1.625, 1.875, -1.875, 1.625, -1.5, -1.625}}}},
};

std::string caseName(const ::testing::TestParamInfo<NNCase> &Info) {
  return Info.param.Name;
}

class ReferenceNNTest : public ::testing::TestWithParam<NNCase> {};

TEST_P(ReferenceNNTest, MatchesExpected) {
  const NNCase &C = GetParam();
  auto ResultsOrErr = runCase(C, LayoutChoice::Identity);
  ASSERT_TRUE(bool(ResultsOrErr)) << llvm::toString(ResultsOrErr.takeError());
  ASSERT_EQ(ResultsOrErr->size(), C.Results.size());
  for (size_t I = 0; I < C.Results.size(); ++I) {
    SCOPED_TRACE("result " + std::to_string(I));
    expectClose(logicalValues((*ResultsOrErr)[I]), C.Results[I].Values, 1e-5);
  }
}

/// Layouts other than the identity must not change any logical value: the
/// kernels walk logical indices, so even the summation order is the same.
TEST_P(ReferenceNNTest, LayoutInvariant) {
  const NNCase &C = GetParam();
  auto Base = runCase(C, LayoutChoice::Identity);
  ASSERT_TRUE(bool(Base)) << llvm::toString(Base.takeError());
  for (LayoutChoice LC : {LayoutChoice::ChannelsLast, LayoutChoice::Reversed}) {
    SCOPED_TRACE(LC == LayoutChoice::ChannelsLast ? "channels-last"
                                                  : "reversed");
    auto Other = runCase(C, LC);
    ASSERT_TRUE(bool(Other)) << llvm::toString(Other.takeError());
    for (size_t I = 0; I < Base->size(); ++I) {
      EXPECT_EQ((*Other)[I].getLayout(),
                pickLayout(LC, (*Other)[I].getRank()));
      EXPECT_EQ(logicalValues((*Other)[I]), logicalValues((*Base)[I]))
          << "result " << I;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Hand, ReferenceNNTest,
                         ::testing::ValuesIn(HandCases), caseName);
INSTANTIATE_TEST_SUITE_P(Onnxruntime, ReferenceNNTest,
                         ::testing::ValuesIn(OrtCases), caseName);

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

/// Runs \p C and returns its error message ("" on success).
std::string errorOf(const NNCase &C) {
  auto R = runCase(C, LayoutChoice::Identity);
  if (R)
    return "";
  return llvm::toString(R.takeError());
}

TEST(ReferenceNNErrorTest, ConvResultShapeMismatch) {
  NNCase C{"", OpId::Conv, {},
           {{F32, {1, 1, 4}, {1, 2, 3, 4}}, {F32, {1, 1, 2}, {1, 1}}},
           {{F32, {1, 1, 2}, {0, 0}}}};
  EXPECT_EQ(errorOf(C), "node (Conv) producing 'out0': result spatial dim 0 is 2, expected 3");
}

TEST(ReferenceNNErrorTest, ResizeUnsupportedMode) {
  NNCase C{"", OpId::Resize, {{"mode", Attribute::getString("bilinear")}},
           {{F32, {1, 2}, {0, 4}}, Absent, {F32, {2}, {1, 2}}},
           {{F32, {1, 4}, {0, 0, 0, 0}}}};
  EXPECT_EQ(errorOf(C), "node (Resize) producing 'out0': unsupported mode 'bilinear'");
}

TEST(ReferenceNNErrorTest, MatMulInnerDims) {
  NNCase C{"", OpId::MatMul, {},
           {{F32, {2, 3}, {1, 2, 3, 4, 5, 6}}, {F32, {2, 2}, {1, 2, 3, 4}}},
           {{F32, {2, 2}, {0, 0, 0, 0}}}};
  EXPECT_EQ(errorOf(C), "node (MatMul) producing 'out0': inner dims 3 and 2 do not match");
}

TEST(ReferenceNNErrorTest, EinsumLabelSizes) {
  NNCase C{"", OpId::Einsum, {{"equation", Attribute::getString("ij,jk")}},
           {{F32, {1, 3}, {1, 2, 3}}, {F32, {2, 1}, {1, 2}}},
           {{F32, {1, 1}, {0}}}};
  EXPECT_EQ(errorOf(C), "node (Einsum) producing 'out0': label 'j' has size 3 in input 0 and 2 in input 1");
}

} // namespace
