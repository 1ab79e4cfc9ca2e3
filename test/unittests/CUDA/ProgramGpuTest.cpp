//===- ProgramGpuTest.cpp - CUDA programs against the reference -----------===//
//
// Small graphs that cover every step kind of the CUDA backend (library
// convs and GEMMs with their epilogues in both layouts, the own kernels,
// views, copies) compiled with compileForCUDA, run on a GPU and compared
// with the reference interpreter. Skips itself on machines without one.
//
//===----------------------------------------------------------------------===//

#include "GpuTestSupport.h"

#include "strider/CodeGen/CUDA/CUDABackend.h"
#include "strider/IR/AsmParser.h"
#include "strider/IR/Graph.h"
#include "strider/Runtime/Reference.h"

#include "gtest/gtest.h"

#include <cuda_runtime_api.h>

#include <cmath>
#include <random>

using namespace strider;
using namespace strider::runtime;

namespace {


Tensor randomTensor(const TensorType &T, unsigned Seed) {
  Tensor R = Tensor::zeros(TensorType::get(T.getElementType(),
                                           T.getStaticShape()));
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<double> D(-1.0, 1.0);
  for (int64_t I = 0; I < R.getNumElements(); ++I)
    R.setDouble(I, D(Gen));
  return R;
}

/// Random tensors for \p G's inputs, seeded 1, 2, ... in input order.
TensorMap randomInputs(const Graph &G) {
  TensorMap Inputs;
  unsigned Seed = 1;
  for (const Value *In : G.getInputs())
    Inputs[In->getName()] = randomTensor(In->getType(), Seed++);
  return Inputs;
}

/// Every output of \p Expected in \p Got, within \p Tol relative (0:
/// exactly), any layouts.
void expectOutputsNear(const TensorMap &Got, const TensorMap &Expected,
                       double Tol, const std::string &What) {
  for (const auto &[Name, Want] : Expected) {
    ASSERT_TRUE(Got.count(Name)) << What << ": " << Name;
    Tensor A = Got.at(Name).withLayout(Layout());
    Tensor B = Want.withLayout(Layout());
    ASSERT_EQ(A.getNumElements(), B.getNumElements()) << What << ": " << Name;
    for (int64_t I = 0; I < A.getNumElements(); ++I)
      ASSERT_NEAR(A.getDouble(I), B.getDouble(I),
                  Tol * (1 + std::fabs(B.getDouble(I))))
          << What << ": " << Name << "[" << I << "]";
  }
}

struct Case {
  const char *Name;
  const char *Text;
  double Tol;
  cuda::Precision Math = cuda::Precision::FP32;
  /// CUDAOptions::RecurrenceLoop: off plans small recurrences a GEMM and
  /// gate kernels per step.
  bool RecurrenceLoop = true;
};

// Recurrences, planned both ways.
const char *const LstmBidirectionalStates = R"(
graph @g(%x: tensor<4 x 2 x 3 x f32>, %h0: tensor<2 x 2 x 2 x f32>, %c0: tensor<2 x 2 x 2 x f32>) {
  %w = Constant() {value = dense<[0.07987, 0.3623, 0.5957, 0.7485, 0.8, 0.7432, 0.5858, 0.3491, 0.0652, -0.2275, -0.4895, -0.6852, -0.7881, -0.7844, -0.6746, -0.4734, -0.2081, 0.08529, 0.3672, 0.5993, 0.7504, 0.7999, 0.7411, 0.5821, 0.3442, 0.05977, -0.2328, -0.4938, -0.688, -0.7891, -0.7833, -0.6716, -0.469, -0.2029, 0.09071, 0.372, 0.6029, 0.7523, 0.7998, 0.7391, 0.5783, 0.3393, 0.05433, -0.238, -0.4981, -0.6907, -0.7899, -0.7822]> : tensor<2 x 8 x 3 x f32>} : tensor<2 x 8 x 3 x f32>
  %r = Constant() {value = dense<[0.3356, 0.535, 0.662, 0.6995, 0.6422, 0.498, 0.2864, 0.0361, -0.2191, -0.4447, -0.6101, -0.6929, -0.6819, -0.5787, -0.3971, -0.1618, 0.09547, 0.3398, 0.5381, 0.6636, 0.6993, 0.6403, 0.4947, 0.2821, 0.03133, -0.2237, -0.4484, -0.6124, -0.6936, -0.6809, -0.576, -0.3932]> : tensor<2 x 8 x 2 x f32>} : tensor<2 x 8 x 2 x f32>
  %b = Constant() {value = dense<[0.235, 0.2865, 0.2993, 0.2715, 0.207, 0.1145, 0.006477, -0.1024, -0.1975, -0.2658, -0.2981, -0.2901, -0.2428, -0.1627, -0.06054, 0.04981, 0.1534, 0.2363, 0.2871, 0.2991, 0.2707, 0.2055, 0.1126, 0.004433, -0.1043, -0.199, -0.2667, -0.2983, -0.2896, -0.2416, -0.161, -0.05853]> : tensor<2 x 16 x f32>} : tensor<2 x 16 x f32>
  %p = Constant() {value = dense<[0.4958, 0.439, 0.3227, 0.1628, -0.0192, -0.1986, -0.3511, -0.4561, -0.4993, -0.475, -0.3864, -0.2455]> : tensor<2 x 6 x f32>} : tensor<2 x 6 x f32>
  %y, %yh, %yc = LSTM(%x, %w, %r, %b, none, %h0, %c0, %p) {direction = "bidirectional", hidden_size = 2, clip = 2.5} : tensor<4 x 2 x 2 x 2 x f32>, tensor<2 x 2 x 2 x f32>, tensor<2 x 2 x 2 x f32>
  return %y, %yh, %yc
}
)";
const char *const GruBothResetForms = R"(
graph @g(%x: tensor<2 x 4 x 3 x f32>, %h0: tensor<2 x 2 x 2 x f32>) {
  %w = Constant() {value = dense<[0.266, 0.5589, 0.7762, 0.8884, 0.8804, 0.7532, 0.5241, 0.2241, -0.1063, -0.4223, -0.6811, -0.8478, -0.8997, -0.8298, -0.6476, -0.3778, -0.05683, 0.2718, 0.5637, 0.7793, 0.8894, 0.8791, 0.7498, 0.5191, 0.2181, -0.1124, -0.4277, -0.6851, -0.8498, -0.8995, -0.8274, -0.6433, -0.3722, -0.05071, 0.2777, 0.5684]> : tensor<2 x 6 x 3 x f32>} : tensor<2 x 6 x 3 x f32>
  %r = Constant() {value = dense<[0.713, 0.7959, 0.7712, 0.6421, 0.426, 0.1523, -0.142, -0.4171, -0.6357, -0.7683, -0.7969, -0.7177, -0.5413, -0.2917, -0.002548, 0.2869, 0.5375, 0.7154, 0.7965, 0.7697, 0.6388, 0.4214, 0.147, -0.1473]> : tensor<2 x 6 x 2 x f32>} : tensor<2 x 6 x 2 x f32>
  %b = Constant() {value = dense<[0.07947, 0.2159, 0.323, 0.3865, 0.3976, 0.3549, 0.2642, 0.1378, -0.007363, -0.1515, -0.2751, -0.3615, -0.399, -0.3824, -0.3141, -0.2033, -0.06498, 0.08214, 0.2181, 0.3246, 0.3872, 0.3973, 0.3537, 0.2622]> : tensor<2 x 12 x f32>} : tensor<2 x 12 x f32>
  %y, %yh = GRU(%x, %w, %r, %b, none, %h0) {direction = "bidirectional", hidden_size = 2, layout = 1} : tensor<2 x 4 x 2 x 2 x f32>, tensor<2 x 2 x 2 x f32>
  %z, %zh = GRU(%x, %w, %r, %b) {direction = "bidirectional", hidden_size = 2, layout = 1, linear_before_reset = 1} : tensor<2 x 4 x 2 x 2 x f32>, tensor<2 x 2 x 2 x f32>
  return %y, %yh, %z, %zh
}
)";

const Case Cases[] = {
    {"conv_nhwc_residual_relu", R"(
graph @g(%x: tensor<2 x 8 x 9 x 9 x f32, nhwc>) {
  %w = Constant() {value = dense<0.05> : tensor<8 x 8 x 3 x 3 x f32>} : tensor<8 x 8 x 3 x 3 x f32>
  %b = Constant() {value = dense<0.25> : tensor<8 x f32>} : tensor<8 x f32>
  %c = Conv(%x, %w, %b) {pads = [1, 1, 1, 1]} : tensor<2 x 8 x 9 x 9 x f32, nhwc>
  %s = Add(%c, %x) : tensor<2 x 8 x 9 x 9 x f32, nhwc>
  %r = Relu(%s) : tensor<2 x 8 x 9 x 9 x f32, nhwc>
  %p = MaxPool(%r) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : tensor<2 x 8 x 5 x 5 x f32, nhwc>
  return %p
}
)",
     1e-4},
    {"conv_mixed_directions_and_relayout", R"(
graph @g(%x: tensor<1 x 6 x 7 x 5 x f32>) {
  %w = Constant() {value = dense<0.1> : tensor<12 x 3 x 3 x 3 x f32>} : tensor<12 x 3 x 3 x 3 x f32>
  %c = Conv(%x, %w) {group = 2, strides = [2, 1], dilations = [1, 2], pads = [1, 2, 1, 2]} : tensor<1 x 12 x 4 x 5 x f32, nhwc>
  %y = relayout(%c) : tensor<1 x 12 x 4 x 5 x f32>
  return %y
}
)",
     1e-4},
    {"conv_asymmetric_pads", R"(
graph @g(%x: tensor<2 x 4 x 8 x 8 x f32, nhwc>) {
  %w = Constant() {value = dense<0.05> : tensor<6 x 4 x 3 x 2 x f32>} : tensor<6 x 4 x 3 x 2 x f32>
  %b = Constant() {value = dense<0.25> : tensor<6 x f32>} : tensor<6 x f32>
  %c = Conv(%x, %w, %b) {strides = [2, 1], pads = [0, 1, 1, 0]} : tensor<2 x 6 x 4 x 8 x f32, nhwc>
  %r = Relu(%c) : tensor<2 x 6 x 4 x 8 x f32, nhwc>
  return %r
}
)",
     1e-4},
    {"conv_transpose_asymmetric_pads", R"(
graph @g(%x: tensor<2 x 4 x 4 x 5 x f32, nhwc>) {
  %w = Constant() {value = dense<0.05> : tensor<4 x 6 x 3 x 3 x f32>} : tensor<4 x 6 x 3 x 3 x f32>
  %b = Constant() {value = dense<0.25> : tensor<6 x f32>} : tensor<6 x f32>
  %c = ConvTranspose(%x, %w, %b) {strides = [2, 2], pads = [0, 2, 1, 0]} : tensor<2 x 6 x 8 x 9 x f32, nhwc>
  return %c
}
)",
     1e-4},
    {"elementwise_softmax_norms", R"(
graph @g(%x: tensor<2 x 4 x 6 x 6 x f32, nhwc>) {
  %k = Constant() {value = dense<[0.5, -1.0, 2.0, 0.25]> : tensor<4 x 1 x 1 x f32>} : tensor<4 x 1 x 1 x f32>
  %a = Mul(%x, %k) : tensor<2 x 4 x 6 x 6 x f32, nhwc>
  %t = Tanh(%a) : tensor<2 x 4 x 6 x 6 x f32, nhwc>
  %s = Softmax(%t) {axis = 1} : tensor<2 x 4 x 6 x 6 x f32, nhwc>
  %g = Constant() {value = dense<[1.0, 2.0, 0.5, 1.5]> : tensor<4 x f32>} : tensor<4 x f32>
  %h = Constant() {value = dense<[0.0, 0.1, 0.2, 0.3]> : tensor<4 x f32>} : tensor<4 x f32>
  %i = InstanceNormalization(%t, %g, %h) : tensor<2 x 4 x 6 x 6 x f32, nhwc>
  %m = GlobalAveragePool(%i) : tensor<2 x 4 x 1 x 1 x f32, nhwc>
  return %s, %i, %m
}
)",
     1e-4},
    {"lrn_both_layouts", R"(
graph @g(%x: tensor<2 x 7 x 5 x 6 x f32, nhwc>) {
  %a = LRN(%x) {size = 5, alpha = 0.001, beta = 0.75, bias = 1.0} : tensor<2 x 7 x 5 x 6 x f32, nhwc>
  %t = relayout(%a) : tensor<2 x 7 x 5 x 6 x f32>
  %b = LRN(%t) {size = 4, alpha = 0.5, beta = 0.6, bias = 2.0} : tensor<2 x 7 x 5 x 6 x f32>
  return %b
}
)",
     1e-4},
    {"gemm_concat_slice", R"(
graph @g(%x: tensor<3 x 16 x f32>, %z: tensor<3 x 4 x f32>) {
  %w = Constant() {value = dense<0.125> : tensor<10 x 16 x f32>} : tensor<10 x 16 x f32>
  %b = Constant() {value = dense<0.5> : tensor<10 x f32>} : tensor<10 x f32>
  %g = Gemm(%x, %w, %b) {transB = 1} : tensor<3 x 10 x f32>
  %r = Relu(%g) : tensor<3 x 10 x f32>
  %c = Concat(%r, %z) {axis = 1} : tensor<3 x 14 x f32>
  %st = Constant() {value = dense<[1]> : tensor<1 x i64>} : tensor<1 x i64>
  %en = Constant() {value = dense<[13]> : tensor<1 x i64>} : tensor<1 x i64>
  %ax = Constant() {value = dense<[1]> : tensor<1 x i64>} : tensor<1 x i64>
  %sp = Constant() {value = dense<[2]> : tensor<1 x i64>} : tensor<1 x i64>
  %y = Slice(%c, %st, %en, %ax, %sp) : tensor<3 x 6 x f32>
  return %y
}
)",
     1e-4},
    {"tile_depth_space_sum3_addmm", R"(
graph @g(%x: tensor<1 x 8 x 2 x 3 x f32, nhwc>, %a: tensor<3 x 4 x f32>, %c: tensor<3 x 5 x f32>) {
  %d = DepthToSpace(%x) {blocksize = 2, mode = "CRD"} : tensor<1 x 2 x 4 x 6 x f32, nhwc>
  %s = SpaceToDepth(%d) {blocksize = 2} : tensor<1 x 8 x 2 x 3 x f32>
  %r = Constant() {value = dense<[1, 2, 1, 3]> : tensor<4 x i64>} : tensor<4 x i64>
  %t = Tile(%s, %r) : tensor<1 x 16 x 2 x 9 x f32>
  %w = Constant() {value = dense<0.5> : tensor<4 x 5 x f32>} : tensor<4 x 5 x f32>
  %g = Gemm(%a, %w, %c) : tensor<3 x 5 x f32>
  %u = Sum(%g, %c, %g) : tensor<3 x 5 x f32>
  return %t, %u
}
)",
     1e-4},
    {"lstm_bidirectional_states", LstmBidirectionalStates, 1e-4},
    {"lstm_bidirectional_states_per_step", LstmBidirectionalStates, 1e-4,
     cuda::Precision::FP32, false},
    {"gru_both_reset_forms", GruBothResetForms, 1e-4},
    {"gru_both_reset_forms_per_step", GruBothResetForms, 1e-4,
     cuda::Precision::FP32, false},
    {"gather_token_and_channels", R"(
graph @g(%x: tensor<2 x 6 x 5 x 4 x f32, nhwc>) {
  %i = Constant() {value = dense<[5, 0, -2]> : tensor<3 x i64>} : tensor<3 x i64>
  %c = Gather(%x, %i) {axis = 1} : tensor<2 x 3 x 5 x 4 x f32, nhwc>
  %t = Constant() {value = dense<0> : tensor<i64>} : tensor<i64>
  %y = Gather(%c, %t) {axis = 2} : tensor<2 x 3 x 4 x f32>
  return %c, %y
}
)",
     1e-4},
    {"half_conv_chain", R"(
graph @g(%x: tensor<1 x 8 x 8 x 8 x f32>) {
  %h = Cast(%x) {to = 10} : tensor<1 x 8 x 8 x 8 x f16, nhwc>
  %w = Constant() {value = dense<0.05> : tensor<8 x 8 x 3 x 3 x f16>} : tensor<8 x 8 x 3 x 3 x f16>
  %c = Conv(%h, %w) {pads = [1, 1, 1, 1]} : tensor<1 x 8 x 8 x 8 x f16, nhwc>
  %r = Relu(%c) : tensor<1 x 8 x 8 x 8 x f16, nhwc>
  %y = Cast(%r) {to = 1} : tensor<1 x 8 x 8 x 8 x f32>
  return %y
}
)",
     2e-2, cuda::Precision::FP16},
    // The typed kernel: a mask from lengths (an i64 input and output, a
    // bool output), Where, Not, casts both ways.
    {"typed_mask_by_length", R"(
graph @g(%x: tensor<2 x 6 x f32>, %len: tensor<2 x i64>) {
  %r = Constant() {value = dense<[0, 1, 2, 3, 4, 5]> : tensor<6 x i64>} : tensor<6 x i64>
  %k = Constant() {value = dense<[3, 5]> : tensor<2 x i64>} : tensor<2 x i64>
  %ax = Constant() {value = dense<[1]> : tensor<1 x i64>} : tensor<1 x i64>
  %zero = Constant() {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %l = Add(%len, %k) : tensor<2 x i64>
  %lu = Unsqueeze(%l, %ax) : tensor<2 x 1 x i64>
  %m = Less(%r, %lu) : tensor<2 x 6 x bool>
  %y = Where(%m, %x, %zero) : tensor<2 x 6 x f32>
  %n = Not(%m) : tensor<2 x 6 x bool>
  %c = Cast(%n) {to = 1} : tensor<2 x 6 x f32>
  return %y, %c, %l, %m
}
)",
     0},
    // Gathers and a scatter by indices computed at run time.
    {"typed_gather_scatter", R"(
graph @g(%x: tensor<3 x 5 x f32>, %u: tensor<3 x 2 x f32>) {
  %w = Constant() {value = dense<[0.5, -1.0, 2.0, 0.25, 1.5, 3.0, -0.5, 0.75, 4.0, -2.5]> : tensor<5 x 2 x f32>} : tensor<5 x 2 x f32>
  %e = Constant() {value = dense<[0, 4, 2, 2, -1, 1]> : tensor<3 x 2 x i64>} : tensor<3 x 2 x i64>
  %one = Constant() {value = dense<1> : tensor<i64>} : tensor<i64>
  %ids = Add(%e, %one) : tensor<3 x 2 x i64>
  %emb = Gather(%w, %e) : tensor<3 x 2 x 2 x f32>
  %ge = GatherElements(%x, %e) {axis = 1} : tensor<3 x 2 x f32>
  %sc = ScatterElements(%x, %e, %u) {axis = 1} : tensor<3 x 5 x f32>
  return %emb, %ge, %sc, %ids
}
)",
     0},
    // The typed kernel's row ops (ArgMax, TopK, a scatter reduction, a
    // byte output) and a GRU whose sequence lengths are computed at run
    // time (3, 0 and 2 of 3 steps).
    {"typed_rows_and_lengths", R"(
graph @g(%x: tensor<3 x 3 x 2 x f32>, %s: tensor<4 x 7 x f32>, %u: tensor<4 x 2 x f32>) {
  %w = Constant() {value = dense<0.3> : tensor<2 x 6 x 2 x f32>} : tensor<2 x 6 x 2 x f32>
  %r = Constant() {value = dense<-0.2> : tensor<2 x 6 x 2 x f32>} : tensor<2 x 6 x 2 x f32>
  %c = Constant() {value = dense<[2, -1, 1]> : tensor<3 x i32>} : tensor<3 x i32>
  %one = Constant() {value = dense<1> : tensor<i32>} : tensor<i32>
  %len = Add(%c, %one) : tensor<3 x i32>
  %y, %yh = GRU(%x, %w, %r, none, %len) {direction = "bidirectional", hidden_size = 2, linear_before_reset = 1} : tensor<3 x 2 x 3 x 2 x f32>, tensor<2 x 3 x 2 x f32>
  %am = ArgMax(%s) {axis = 1, keepdims = 0} : tensor<4 x i64>
  %b = Cast(%am) {to = 2} : tensor<4 x u8>
  %k = Constant() {value = dense<[3]> : tensor<1 x i64>} : tensor<1 x i64>
  %v, %i = TopK(%s, %k) {axis = 1, largest = 0} : tensor<4 x 3 x f32>, tensor<4 x 3 x i64>
  %e = Constant() {value = dense<[0, 6, 6, 1, -1, -1, 3, 3]> : tensor<4 x 2 x i64>} : tensor<4 x 2 x i64>
  %sc = ScatterElements(%s, %e, %u) {axis = 1, reduction = "add"} : tensor<4 x 7 x f32>
  return %y, %yh, %b, %v, %i, %sc
}
)",
     1e-4},
    // TopK by ranks (rows from 256 elements): a detector's candidates,
    // the 100 best of 2000 per row, and a whole row sorted smallest first
    // along a strided axis; the tiles of a row straddle blocks. ArgMax and
    // ArgMin of the long rows, a block each.
    {"long_rows_topk_and_arg", R"(
graph @g(%s: tensor<2 x 2000 x f32>, %t: tensor<300 x 3 x f32>) {
  %k = Constant() {value = dense<[100]> : tensor<1 x i64>} : tensor<1 x i64>
  %v, %i = TopK(%s, %k) {axis = 1} : tensor<2 x 100 x f32>, tensor<2 x 100 x i64>
  %n = Constant() {value = dense<[300]> : tensor<1 x i64>} : tensor<1 x i64>
  %w, %j = TopK(%t, %n) {axis = 0, largest = 0} : tensor<300 x 3 x f32>, tensor<300 x 3 x i64>
  %a = ArgMax(%s) {axis = 1} : tensor<2 x 1 x i64>
  %b = ArgMin(%s) {axis = 1, select_last_index = 1} : tensor<2 x 1 x i64>
  return %v, %i, %w, %j, %a, %b
}
)",
     0},
    // Einsum: a batched product written into a permuted result, and a
    // label summed in one operand only.
    {"einsum_permuted_and_summed", R"(
graph @g(%a: tensor<2 x 3 x 4 x f32>, %b: tensor<2 x 4 x 5 x f32>, %c: tensor<3 x 4 x 2 x f32>) {
  %y = Einsum(%a, %b) {equation = "bij,bjk->kbi"} : tensor<5 x 2 x 3 x f32>
  %w = Constant() {value = dense<0.5> : tensor<4 x 6 x f32>} : tensor<4 x 6 x f32>
  %z = Einsum(%c, %w) {equation = "ijk,jl->il"} : tensor<3 x 6 x f32>
  return %y, %z
}
)",
     1e-4},
    // STFT: the frame copy and the GEMM by the basis.
    {"stft_frames_gemm", R"(
graph @g(%x: tensor<2 x 40 x 1 x f32>) {
  %s = Constant() {value = dense<6> : tensor<i64>} : tensor<i64>
  %w = Constant() {value = dense<[0.0, 0.1, 0.35, 0.65, 0.9, 1.0, 0.9, 0.65, 0.35, 0.1]> : tensor<10 x f32>} : tensor<10 x f32>
  %y = STFT(%x, %s, %w) : tensor<2 x 6 x 6 x 2 x f32>
  return %y
}
)",
     1e-4},
};

class CudaProgramTest : public ::testing::TestWithParam<Case> {};

TEST_P(CudaProgramTest, MatchesTheReference) {
  STRIDER_SKIP_WITHOUT_DEVICE();
  const Case &C = GetParam();
  auto G = parseGraph(C.Text, C.Name);
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  const TensorMap Inputs = randomInputs(**G);
  auto Expected = runReference(**G, Inputs);
  ASSERT_TRUE(bool(Expected)) << llvm::toString(Expected.takeError());
  cuda::CUDAOptions O;
  O.Math = C.Math;
  O.RecurrenceLoop = C.RecurrenceLoop;
  for (bool Graph : {true, false}) {
    O.UseGraph = Graph;
    auto P = cuda::compileForCUDA(**G, O);
    ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
    for (int Run = 0; Run < 2; ++Run) { // A replay gives the same.
      auto Got = (*P)->run(Inputs);
      ASSERT_TRUE(bool(Got)) << llvm::toString(Got.takeError());
      expectOutputsNear(*Got, *Expected, C.Tol,
                        std::string(C.Name) +
                            " graph=" + (Graph ? "true" : "false"));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Graphs, CudaProgramTest, ::testing::ValuesIn(Cases),
                         [](const auto &I) { return std::string(I.param.Name); });

/// Every case planned and run on the host in \p Mode, against the
/// reference within the case's tolerance.
void emulateEveryCase(cuda::EmulationMode Mode) {
  for (const Case &C : Cases) {
    auto G = parseGraph(C.Text, C.Name);
    ASSERT_TRUE(bool(G)) << C.Name << ": " << llvm::toString(G.takeError());
    cuda::CUDAOptions O;
    O.Math = C.Math;
    O.RecurrenceLoop = C.RecurrenceLoop;
    auto P = cuda::planForCUDA(**G, O);
    ASSERT_TRUE(bool(P)) << C.Name << ": " << llvm::toString(P.takeError());
    const TensorMap Inputs = randomInputs(**G);
    auto Expected = runReference(**G, Inputs);
    ASSERT_TRUE(bool(Expected)) << llvm::toString(Expected.takeError());
    auto Got = cuda::emulateOnHost(**P, Inputs, Mode);
    ASSERT_TRUE(bool(Got)) << C.Name << ": " << llvm::toString(Got.takeError());
    expectOutputsNear(*Got, *Expected, C.Tol, C.Name);
  }
}

TEST(CudaProgramTest, EveryCasePlansAndEmulatesWithoutADevice) {
  // Runs everywhere: a case that does not parse or plan is found here, not
  // on the first GPU run, and its plan run on the host through the
  // kernels' models must match the reference.
  emulateEveryCase(cuda::EmulationMode::Models);
}

TEST(CudaProgramTest, EveryCaseRunsItsDeviceCodeOnTheHost) {
  // The same plans with every kernel step running the kernels' own code
  // (compiled for the host, blocks and threads scheduled as the device
  // does): their indexing, tiles, vector paths and barriers.
  emulateEveryCase(cuda::EmulationMode::DeviceCode);
}

TEST(CudaProgramTest, ProfilingTimesEveryStep) {
  STRIDER_SKIP_WITHOUT_DEVICE();
  auto G = parseGraph(Cases[0].Text, "g");
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  auto P = cuda::compileForCUDA(**G, cuda::CUDAOptions());
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  TensorMap In;
  In["x"] = randomTensor((*G)->getInputs()[0]->getType(), 7);
  (*P)->setProfiling(true);
  for (int I = 0; I < 3; ++I)
    ASSERT_TRUE(bool((*P)->run(In)));
  EXPECT_EQ((*P)->getProfiledRuns(), 3u);
  ASSERT_EQ((*P)->getStepSeconds().size(), (*P)->getSteps().size());
  for (double S : (*P)->getStepSeconds())
    EXPECT_GT(S, 0.0);
}

TEST(CudaProgramTest, BadIndicesFailTheRunAndTheNextRunIsClean) {
  // A gather index out of range fails the run (graph replay or not) with
  // the step named; the report is cleared, so a good run follows.
  STRIDER_SKIP_WITHOUT_DEVICE();
  auto G = parseGraph(R"(
graph @g(%x: tensor<5 x 2 x f32>, %i: tensor<3 x i64>) {
  %y = Gather(%x, %i) : tensor<3 x 2 x f32>
  return %y
}
)",
                      "g");
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  for (bool Graph : {true, false}) {
    cuda::CUDAOptions O;
    O.UseGraph = Graph;
    auto P = cuda::compileForCUDA(**G, O);
    ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
    TensorMap In;
    In["x"] = randomTensor((*G)->getInputs()[0]->getType(), 3);
    Tensor I = Tensor::zeros(TensorType::get(ElementType::I64, {3}));
    I.setInt(0, 1);
    I.setInt(1, 5);
    I.setInt(2, -1);
    In["i"] = I;
    auto Bad = (*P)->run(In);
    ASSERT_FALSE(bool(Bad));
    EXPECT_NE(llvm::toString(Bad.takeError())
                  .find("step 'y' (typed.gather f32 by i64): index 5 is out "
                        "of range for an axis of size 5"),
              std::string::npos);
    I.setInt(1, -5);
    In["i"] = I;
    auto Good = (*P)->run(In);
    ASSERT_TRUE(bool(Good)) << llvm::toString(Good.takeError());
  }
}

TEST(CudaProgramTest, WrongInputsAreErrors) {
  STRIDER_SKIP_WITHOUT_DEVICE();
  auto G = parseGraph(Cases[0].Text, "g");
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  auto P = cuda::compileForCUDA(**G, cuda::CUDAOptions());
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  TensorMap In;
  In["x"] = Tensor::zeros(TensorType::get(ElementType::F32, {1, 2, 3}));
  auto R = (*P)->run(In);
  ASSERT_FALSE(bool(R));
  EXPECT_NE(llvm::toString(R.takeError()).find("input 'x' has type"),
            std::string::npos);
}

TEST(CudaProgramTest, LoadsOnlyTheLibrariesItCalls) {
  // A GEMM-only model runs where cuDNN is missing, a conv-only one where
  // cuBLASLt is, and one of neither loads nothing.
  STRIDER_SKIP_WITHOUT_DEVICE();
  auto Libraries = [](const char *Text) {
    auto G = parseGraph(Text, "g");
    EXPECT_TRUE(bool(G)) << llvm::toString(G.takeError());
    if (!G)
      return std::vector<std::string>{"(parse error)"};
    auto P = cuda::compileForCUDA(**G, cuda::CUDAOptions());
    EXPECT_TRUE(bool(P)) << llvm::toString(P.takeError());
    if (!P)
      return std::vector<std::string>{"(compile error)"};
    return (*P)->getLibraries();
  };
  auto Gemm = Libraries(R"(
graph @g(%x: tensor<3 x 16 x f32>) {
  %w = Constant() {value = dense<0.125> : tensor<16 x 10 x f32>} : tensor<16 x 10 x f32>
  %y = MatMul(%x, %w) : tensor<3 x 10 x f32>
  return %y
}
)");
  ASSERT_EQ(Gemm.size(), 1u);
  EXPECT_EQ(Gemm[0].rfind("libcublasLt.so.", 0), 0u) << Gemm[0];
  auto Conv = Libraries(Cases[0].Text);
  ASSERT_EQ(Conv.size(), 1u);
  EXPECT_EQ(Conv[0].rfind("libcudnn.so.9 (cuDNN 9.", 0), 0u) << Conv[0];
  auto Neither = Libraries(R"(
graph @g(%x: tensor<3 x 16 x f32>) {
  %y = Relu(%x) : tensor<3 x 16 x f32>
  return %y
}
)");
  EXPECT_TRUE(Neither.empty());
}

/// cudaMalloc'd memory freed at scope exit.
struct DeviceMemory {
  void *Ptr = nullptr;
  explicit DeviceMemory(size_t Bytes) {
    if (cudaMalloc(&Ptr, std::max<size_t>(Bytes, 1)) != cudaSuccess)
      Ptr = nullptr;
  }
  ~DeviceMemory() {
    if (Ptr)
      (void)cudaFree(Ptr);
  }
};

TEST(CudaProgramTest, RunsOnCallersDeviceMemory) {
  // The input in the caller's GPU memory twice: dense NCHW, and NCHW
  // logically but stored channels-last (strides given); the output into
  // the caller's memory with a row pitch wider than the row. Both must
  // match run() on host tensors.
  STRIDER_SKIP_WITHOUT_DEVICE();
  auto G = parseGraph(Cases[1].Text, "g"); // NCHW in, NCHW out.
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  auto P = cuda::compileForCUDA(**G, cuda::CUDAOptions());
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  const TensorType XT = (*G)->getInputs()[0]->getType();
  const Tensor X = randomTensor(XT, 11);
  TensorMap HostIn;
  HostIn["x"] = X;
  auto Want = (*P)->run(HostIn);
  ASSERT_TRUE(bool(Want)) << llvm::toString(Want.takeError());
  const Tensor &WantY = Want->at("y");
  const std::vector<int64_t> YShape(WantY.getShape().begin(),
                                    WantY.getShape().end());
  // Output rows padded to Pitch elements.
  const int64_t W = YShape[3], Pitch = W + 3;
  const int64_t Rows = YShape[0] * YShape[1] * YShape[2];
  DeviceMemory Y(size_t(Rows * Pitch) * 4);
  ASSERT_NE(Y.Ptr, nullptr);
  runtime::DeviceTensor DY{Y.Ptr, ElementType::F32, YShape,
                           {YShape[1] * YShape[2] * Pitch, YShape[2] * Pitch,
                            Pitch, 1}};

  for (bool ChannelsLast : {false, true}) {
    const Tensor Stored =
        ChannelsLast ? X.withLayout(Layout::getChannelsLast(4)) : X;
    DeviceMemory XMem(Stored.getBytes().size());
    ASSERT_NE(XMem.Ptr, nullptr);
    ASSERT_EQ(cudaMemcpy(XMem.Ptr, Stored.getBytes().data(),
                         Stored.getBytes().size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    runtime::DeviceTensor DX{XMem.Ptr, ElementType::F32,
                             std::vector<int64_t>(X.getShape().begin(),
                                                  X.getShape().end()),
                             std::vector<int64_t>(Stored.getStrides().begin(),
                                                  Stored.getStrides().end())};
    if (!ChannelsLast)
      DX.Strides.clear(); // Dense row-major by default.
    ASSERT_EQ(cudaMemset(Y.Ptr, 0xff, size_t(Rows * Pitch) * 4), cudaSuccess);
    llvm::Error E = (*P)->runOnDevice({{"x", DX}}, {{"y", DY}});
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    std::vector<float> Got(size_t(Rows * Pitch));
    ASSERT_EQ(cudaMemcpy(Got.data(), Y.Ptr, Got.size() * 4,
                         cudaMemcpyDeviceToHost),
              cudaSuccess);
    const Tensor WantDense = WantY.withLayout(Layout());
    for (int64_t R = 0; R < Rows; ++R)
      for (int64_t C = 0; C < W; ++C)
        ASSERT_EQ(Got[size_t(R * Pitch + C)], WantDense.getDouble(R * W + C))
            << "row " << R << " col " << C << " channels-last " << ChannelsLast;
  }

  // Checked before anything runs: a missing output, a wrong shape.
  DeviceMemory XMem(X.getBytes().size());
  runtime::DeviceTensor DX{XMem.Ptr, ElementType::F32,
                           std::vector<int64_t>(X.getShape().begin(),
                                                X.getShape().end()),
                           {}};
  llvm::Error E = (*P)->runOnDevice({{"x", DX}}, {});
  ASSERT_TRUE(bool(E));
  EXPECT_EQ(llvm::toString(std::move(E)), "missing output 'y'");
  DX.Shape[0] = 2;
  E = (*P)->runOnDevice({{"x", DX}}, {{"y", DY}});
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("input 'x' has type"),
            std::string::npos);
}

} // namespace

TEST(CudaProgramTest, CopiesLargeTensorsInChunksOrFromPinnedMemory) {
  // 12 MB in and out: six staged chunks and a partial one each way, or
  // straight from the caller's page-locked input, into a new tensor or
  // the caller's buffer; every element arrives.
  STRIDER_SKIP_WITHOUT_DEVICE();
  auto G = parseGraph(R"(
graph @g(%x: tensor<3 x 1000 x 1001 x f32>) {
  %y = Neg(%x) : tensor<3 x 1000 x 1001 x f32>
  return %y
}
)",
                      "g");
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  for (int Mode = 0; Mode < 3; ++Mode) {
    SCOPED_TRACE(Mode == 0   ? "pageable input, staged"
                 : Mode == 1 ? "page-locked input"
                             : "--pinned=false");
    cuda::CUDAOptions O;
    O.Pinned = Mode != 2;
    auto P = cuda::compileForCUDA(**G, O);
    ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
    TensorMap In;
    In["x"] = randomTensor((*G)->getInputs()[0]->getType(), 11 + Mode);
    std::unique_ptr<cuda::PinnedHostMemory> Pin;
    if (Mode == 1) {
      llvm::MutableArrayRef<uint8_t> B = In["x"].getMutableBytes();
      auto Pinned = cuda::PinnedHostMemory::pin(B.data(), B.size());
      ASSERT_TRUE(bool(Pinned)) << llvm::toString(Pinned.takeError());
      Pin = std::move(*Pinned);
    }
    for (int Run = 0; Run < 2; ++Run) {
      auto Out = (*P)->run(In);
      ASSERT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
      const Tensor &X = In["x"], &Y = Out->at("y");
      int64_t Wrong = 0;
      for (int64_t I = 0; I < X.getNumElements(); ++I)
        Wrong += Y.getDouble(I) != -X.getDouble(I);
      EXPECT_EQ(Wrong, 0);
    }
    // Into the caller's buffer (a view): the same elements.
    std::vector<float> Buf(size_t(In["x"].getNumElements()), 0.0f);
    TensorMap Into;
    Into["y"] = Tensor::view(ElementType::F32, In["x"].getShape(), Layout(),
                             reinterpret_cast<uint8_t *>(Buf.data()));
    llvm::Error E = (*P)->runInto(In, Into);
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    int64_t WrongInto = 0;
    for (int64_t I = 0; I < In["x"].getNumElements(); ++I)
      WrongInto += double(Buf[size_t(I)]) != -In["x"].getDouble(I);
    EXPECT_EQ(WrongInto, 0);
    // Replays of the program's graph on what the last run left.
    auto Ns = (*P)->timeReplays(5);
    ASSERT_TRUE(bool(Ns)) << llvm::toString(Ns.takeError());
    EXPECT_GT(*Ns, 0.0);
  }
}
