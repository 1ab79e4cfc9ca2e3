//===- FunctionBodies.cpp - Strider's bodies for ONNX ops -----------------===//
//
// One table entry per op form: the op, the opsets whose form it is, and
// its body in ONNX's textual syntax, parsed once by libonnx's parser. The
// bodies are decompositions into ops every backend runs on its fast path:
//
//   ReduceL1(x)        = ReduceSum(Abs(x))
//   ReduceLogSum(x)    = Log(ReduceSum(x))
//   ReduceLogSumExp(x) = Log(ReduceSum(Exp(x - m))) + m, m = ReduceMax(x)
//                        (shifted by the maximum: no overflow; a slice
//                        whose maximum is infinite gives NaN)
//   EyeLike(x)         = 1 where column - row = k (positions as exclusive
//                        CumSums of ones), in dtype or x's type
//   OneHot(i, d, v)    = v[1] where the position along the new axis
//                        (an exclusive CumSum of ones) is i (i + d if
//                        negative), else v[0]
//   Mean(x1, ..., xn)  = Sum(x1, ..., xn) / n, n up to 4 (one form each)
//   Hardmax(x)         = 1 where an element's position along the axis
//                        (an exclusive CumSum of ones) is ArgMax's (the
//                        first maximum), else 0, in x's type
//   QLinearMatMul      = the QDQ form, QuantizeLinear(MatMul(
//                        DequantizeLinear(x), DequantizeLinear(w))):
//                        per-axis b along its columns, a along its rows
//                        (QLinearConv is an op of its own, Ops.def)
//   MatMulInteger:       Cast<int32>(MatMul(A - a_zero_point, B -
//                        b_zero_point)), the differences dequantized with
//                        a scale of 1 and summed in f32: exact while every
//                        partial sum stays below 2^24 in magnitude (255 x
//                        255 products: up to 258 of them) (ConvInteger is
//                        an op of its own, Ops.def)
//
// Opsets before 18 name the reduced axes in an attribute; their bodies
// are read at opset 12, whose ReduceSum and ReduceMax take it so too (the
// importer then upgrades them).
//
//===----------------------------------------------------------------------===//

#include "FunctionBodies.h"
#include "ModelImporter.h"

#include "onnx/defs/parser.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cassert>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

using namespace strider;
using namespace strider::onnximport;

namespace {

struct BodyEntry {
  const char *OpType;
  int64_t MinOpset, MaxOpset; ///< The call's opsets this form is for.
  int64_t BodyOpset;
  std::string Text;
  /// The form is for calls that give this attribute ("!name": that lack
  /// it; "name=V", "name>=V": that leave the int attribute out or give V,
  /// or at least V); null for every call.
  const char *AttrCondition = nullptr;
  /// The form is for calls with this many inputs; 0 for any number.
  int Inputs = 0;
  /// The op's domain (null: the default one); a form of another domain is
  /// for every version of it.
  const char *Domain = nullptr;
};

// Attributes an older form's call may give (axes, keepdims), bound by
// reference; absent ones take the body ops' defaults, which are the
// reduction's own.
const BodyEntry FixedEntries[] = {
    {"ReduceL1", 1, 17, 12, R"(
<domain: "", opset_import: ["": 12]>
ReduceL1 (data) => (reduced) {
  magnitude = Abs (data)
  reduced = ReduceSum <axes: ints = @axes, keepdims: int = @keepdims> (magnitude)
}
)"},
    {"ReduceL1", 18, INT64_MAX, 18, R"(
<domain: "", opset_import: ["": 18]>
ReduceL1 (data, axes) => (reduced) {
  magnitude = Abs (data)
  reduced = ReduceSum <keepdims: int = @keepdims, noop_with_empty_axes: int = @noop_with_empty_axes> (magnitude, axes)
}
)"},
    {"ReduceLogSum", 1, 17, 12, R"(
<domain: "", opset_import: ["": 12]>
ReduceLogSum (data) => (reduced) {
  total = ReduceSum <axes: ints = @axes, keepdims: int = @keepdims> (data)
  reduced = Log (total)
}
)"},
    {"ReduceLogSum", 18, INT64_MAX, 18, R"(
<domain: "", opset_import: ["": 18]>
ReduceLogSum (data, axes) => (reduced) {
  total = ReduceSum <keepdims: int = @keepdims, noop_with_empty_axes: int = @noop_with_empty_axes> (data, axes)
  reduced = Log (total)
}
)"},
    {"ReduceLogSumExp", 1, 17, 12, R"(
<domain: "", opset_import: ["": 12]>
ReduceLogSumExp (data) => (reduced) {
  peak = ReduceMax <axes: ints = @axes, keepdims = 1> (data)
  shifted = Sub (data, peak)
  exps = Exp (shifted)
  total = ReduceSum <axes: ints = @axes, keepdims: int = @keepdims> (exps)
  logs = Log (total)
  top = ReduceMax <axes: ints = @axes, keepdims: int = @keepdims> (data)
  reduced = Add (logs, top)
}
)"},
    {"ReduceLogSumExp", 18, INT64_MAX, 18, R"(
<domain: "", opset_import: ["": 18]>
ReduceLogSumExp (data, axes) => (reduced) {
  peak = ReduceMax <keepdims = 1, noop_with_empty_axes: int = @noop_with_empty_axes> (data, axes)
  shifted = Sub (data, peak)
  exps = Exp (shifted)
  total = ReduceSum <keepdims: int = @keepdims, noop_with_empty_axes: int = @noop_with_empty_axes> (exps, axes)
  logs = Log (total)
  top = ReduceMax <keepdims: int = @keepdims, noop_with_empty_axes: int = @noop_with_empty_axes> (data, axes)
  reduced = Add (logs, top)
}
)"},
    // Indices outside [-depth, depth) match no position: all off.
    {"OneHot", 9, INT64_MAX, 15, R"(
<domain: "", opset_import: ["": 15]>
OneHot (indices, depth, values) => (output) {
  scalar_shape = Constant <value = int64[0] {}> ()
  one_shape = Constant <value = int64[1] {1}> ()
  zero = Constant <value = int64 {0}> ()
  one = Constant <value = int64 {1}> ()
  depth_scalar = Reshape (depth, scalar_shape)
  d = Cast <to = 7> (depth_scalar)
  index = Cast <to = 7> (indices)
  negative = Less (index, zero)
  wrapped = Add (index, d)
  position = Where (negative, wrapped, index)
  axis_scalar = Constant <value_int: int = @axis> ()
  axes = Reshape (axis_scalar, one_shape)
  column = Unsqueeze (position, axes)
  column_shape = Shape (column)
  d_list = Reshape (d, one_shape)
  out_shape = ScatterElements (column_shape, axes, d_list)
  ones = ConstantOfShape <value = float[1] {1}> (out_shape)
  counts = CumSum <exclusive = 1> (ones, axis_scalar)
  column_f = Cast <to = 1> (column)
  hit = Equal (counts, column_f)
  off = Gather (values, zero)
  on = Gather (values, one)
  output = Where (hit, on, off)
}
)"},
    // Read at opset 15, CastLike's first.
    {"Hardmax", 13, INT64_MAX, 15, R"(
<domain: "", opset_import: ["": 15]>
Hardmax (input) => (output) {
  axis_t = Constant <value_int: int = @axis> ()
  top = ArgMax <axis: int = @axis, keepdims = 1> (input)
  shape = Shape (input)
  ones = ConstantOfShape <value = float[1] {1}> (shape)
  position = CumSum <exclusive = 1> (ones, axis_t)
  topf = Cast <to = 1> (top)
  hit = Equal (position, topf)
  output = CastLike (hit, input)
}
)"},
};

/// EyeLike's body; \p Output is the statement that makes 'output' of 'hit'.
/// The positions are exact in f32 below 2^24 rows and columns.
std::string getEyeLikeText(llvm::StringRef Output) {
  return R"(
<domain: "", opset_import: ["": 15]>
EyeLike (input) => (output) {
  shape = Shape (input)
  ones = ConstantOfShape <value = float[1] {1}> (shape)
  rows_axis = Constant <value = int64 {0}> ()
  cols_axis = Constant <value = int64 {1}> ()
  row = CumSum <exclusive = 1> (ones, rows_axis)
  col = CumSum <exclusive = 1> (ones, cols_axis)
  offset = Sub (col, row)
  k_int = Constant <value_int: int = @k> ()
  k = Cast <to = 1> (k_int)
  hit = Equal (offset, k)
  output = )" +
         Output.str() + "\n}\n";
}

/// Mean's body for \p Count inputs.
std::string getMeanText(int Count) {
  std::string Inputs;
  for (int I = 1; I <= Count; ++I)
    Inputs += (I > 1 ? ", x" : "x") + std::to_string(I);
  return R"(
<domain: "", opset_import: ["": 15]>
Mean ()" +
         Inputs + R"() => (mean) {
  total = Sum ()" +
         Inputs + R"()
  count = Constant <value = float {)" +
         std::to_string(Count) + R"(}> ()
  divisor = CastLike (count, total)
  mean = Div (total, divisor)
}
)";
}

/// MatMulInteger's body for \p Count inputs (2: no zero points, 3: a's,
/// 4: both): A is zero-pointed per row (axis -2), B per column.
std::string getMatMulIntegerText(int Count) {
  const std::string ZA = Count > 2 ? ", a_zero_point" : "";
  const std::string ZB = Count > 3 ? ", b_zero_point" : "";
  return "<domain: \"\", opset_import: [\"\": 13]>\n"
         "MatMulInteger (A, B" +
         ZA + ZB +
         ") => (y) {\n"
         "  one = Constant <value = float {1}> ()\n"
         "  af = DequantizeLinear <axis = -2> (A, one" +
         ZA +
         ")\n"
         "  bf = DequantizeLinear <axis = -1> (B, one" +
         ZB +
         ")\n"
         "  yf = MatMul (af, bf)\n"
         "  y = Cast <to = 6> (yf)\n}\n";
}

/// QLinearMatMul's body. (QLinearConv is an op of Ops.def: it is imported
/// as it is.)
std::string getQLinearMatMulText() {
  return "<domain: \"\", opset_import: [\"\": 13]>\n"
         "QLinearMatMul (x, x_scale, x_zero_point, w, w_scale, w_zero_point, "
         "y_scale, y_zero_point) => (y) {\n"
         "  xf = DequantizeLinear <axis = -2> (x, x_scale, x_zero_point)\n"
         "  wf = DequantizeLinear <axis = -1> (w, w_scale, w_zero_point)\n"
         "  yf = MatMul (xf, wf)\n"
         "  y = QuantizeLinear (yf, y_scale, y_zero_point)\n}\n";
}

/// Appends quantized operand \p X with its scale and zero point to a
/// body's \p Inputs, its dequantization to \p Body, and the result's name
/// to \p Args.
void addQuantizedInput(const std::string &X, std::string &Inputs,
                       std::string &Body, std::string &Args) {
  Inputs += (Inputs.empty() ? "" : ", ") + X + ", " + X + "_scale, " + X +
            "_zero_point";
  Body += "  " + X + "_f = DequantizeLinear (" + X + ", " + X + "_scale, " + X +
          "_zero_point)\n";
  Args += (Args.empty() ? "" : ", ") + X + "_f";
}

/// The first \p Count of \p Names, comma-separated.
std::string joinFirst(llvm::ArrayRef<const char *> Names, int Count) {
  std::string Out;
  for (int I = 0; I < Count; ++I)
    Out += std::string(I ? ", " : "") + Names[size_t(I)];
  return Out;
}

/// A float matmul body's last statements: y = a_f x b_f (+ bias).
std::string matMulTail(bool Bias) {
  return Bias ? "  product = MatMul (a_f, b_f)\n  y = Add (product, bias)\n}\n"
              : "  y = MatMul (a_f, b_f)\n}\n";
}

/// The quantized forms of ONNX Runtime's com.microsoft domain its quantizer
/// writes, as QDQ: Q(op(DQ(x), ...)). \p Op is the body's float op with
/// its attributes, \p Ins the quantized operands (each with its scale and
/// zero point after it, as the op's inputs list them).
std::string getMicrosoftQText(llvm::StringRef Name, llvm::StringRef Op,
                              llvm::ArrayRef<const char *> Ins) {
  std::string Inputs, Body, Args;
  for (const char *In : Ins)
    addQuantizedInput(In, Inputs, Body, Args);
  return "<domain: \"com.microsoft\", opset_import: [\"\": 13]>\n" +
         Name.str() + " (" + Inputs + ", y_scale, y_zero_point) => (y) {\n" +
         Body + "  y_f = " + Op.str() + " (" + Args + ")\n" +
         "  y = QuantizeLinear (y_f, y_scale, y_zero_point)\n}\n";
}

/// QLinearConcat's body for \p Count quantized inputs (after the output's
/// scale and zero point, each with its own).
std::string getQLinearConcatText(int Count) {
  std::string Inputs = "y_scale, y_zero_point", Body, Args;
  for (int I = 0; I < Count; ++I)
    addQuantizedInput("x" + std::to_string(I), Inputs, Body, Args);
  return "<domain: \"com.microsoft\", opset_import: [\"\": 13]>\n"
         "QLinearConcat (" +
         Inputs + ") => (y) {\n" + Body +
         "  y_f = Concat <axis: int = @axis> (" + Args + ")\n" +
         "  y = QuantizeLinear (y_f, y_scale, y_zero_point)\n}\n";
}

/// MatMulIntegerToFloat's body for \p Count inputs (4: A, B and their
/// scales; 5, 6: their zero points; 7: a bias): DQ(A) x DQ(B) (+ bias),
/// both zero-pointed and scaled along their last axis.
std::string getMatMulIntegerToFloatText(int Count) {
  const char *Names[] = {
      "A", "B", "a_scale", "b_scale", "a_zero_point", "b_zero_point", "bias"};
  std::string Text = "<domain: \"com.microsoft\", opset_import: [\"\": 13]>\n"
                     "MatMulIntegerToFloat (" +
                     joinFirst(Names, Count) + ") => (y) {\n" +
                     "  a_f = DequantizeLinear <axis = -1> (A, a_scale" +
                     (Count > 4 ? ", a_zero_point" : "") + ")\n" +
                     "  b_f = DequantizeLinear <axis = -1> (B, b_scale" +
                     (Count > 5 ? ", b_zero_point" : "") + ")\n";
  return Text + matMulTail(Count > 6);
}

/// DynamicQuantizeMatMul's body for \p Count inputs (3: A, B, b_scale; 4:
/// B's zero point; 5: a bias): A quantized to u8 as DynamicQuantizeLinear
/// does, then as MatMulIntegerToFloat.
std::string getDynamicQuantizeMatMulText(int Count) {
  std::string Text =
      std::string("<domain: \"com.microsoft\", opset_import: [\"\": 13]>\n"
                  "DynamicQuantizeMatMul (A, B, b_scale") +
      (Count > 3 ? ", b_zero_point" : "") + (Count > 4 ? ", bias" : "") +
      ") => (y) {\n"
      "  a_q, a_scale, a_zero_point = DynamicQuantizeLinear (A)\n"
      "  a_f = DequantizeLinear (a_q, a_scale, a_zero_point)\n"
      "  b_f = DequantizeLinear <axis = -1> (B, b_scale" +
      (Count > 3 ? ", b_zero_point" : "") + ")\n";
  return Text + matMulTail(Count > 4);
}

/// QGemm's body for \p Count inputs (6: no bias; 7: an int32 bias C; 8, 9:
/// a quantized result, with its zero point at 9), its B per column (axis
/// 0 of B when \p TransB): alpha x (DQ(A) x DQ(B) + C x a_scale x b_scale),
/// the form ONNX Runtime computes.
std::string getQGemmText(int Count, bool TransB) {
  const char *Names[] = {"A", "a_scale", "a_zero_point",
                         "B", "b_scale", "b_zero_point",
                         "C", "y_scale", "y_zero_point"};
  std::string Text =
      "<domain: \"com.microsoft\", opset_import: [\"\": 13]>\n"
      "QGemm (" +
      joinFirst(Names, Count) + ") => (y) {\n" +
      "  a_f = DequantizeLinear (A, a_scale, a_zero_point)\n" +
      "  b_f = DequantizeLinear <axis = " + (TransB ? "0" : "1") +
      "> (B, b_scale, b_zero_point)\n";
  const std::string Gemm = "Gemm <alpha: float = @alpha, beta: float = "
                           "@alpha, transA: int = @transA, transB: int = "
                           "@transB>";
  const std::string Out = Count > 7 ? "y_f" : "y";
  if (Count > 6)
    Text += "  c_scale = Mul (a_scale, b_scale)\n"
            "  c_i = Cast <to = 1> (C)\n"
            "  c_f = Mul (c_i, c_scale)\n"
            "  " +
            Out + " = " + Gemm + " (a_f, b_f, c_f)\n";
  else
    Text += "  " + Out + " = " + Gemm + " (a_f, b_f)\n";
  if (Count > 7)
    Text += std::string("  y = QuantizeLinear (y_f, y_scale") +
            (Count > 8 ? ", y_zero_point" : "") + ")\n";
  return Text + "}\n";
}

/// The fixed entries and those written from a pattern, in match order.
const std::vector<BodyEntry> &getEntries() {
  static const auto Entries = [] {
    std::vector<BodyEntry> V(std::begin(FixedEntries), std::end(FixedEntries));
    V.push_back({"EyeLike", 9, INT64_MAX, 15,
                 getEyeLikeText("Cast <to: int = @dtype> (hit)"), "dtype"});
    V.push_back({"EyeLike", 9, INT64_MAX, 15,
                 getEyeLikeText("CastLike (hit, input)"), "!dtype"});
    for (int Count = 1; Count <= 4; ++Count)
      V.push_back(
          {"Mean", 6, INT64_MAX, 15, getMeanText(Count), nullptr, Count});
    for (int Count = 2; Count <= 4; ++Count)
      V.push_back({"MatMulInteger", 10, INT64_MAX, 13,
                   getMatMulIntegerText(Count), nullptr, Count});
    V.push_back({"QLinearMatMul", 10, INT64_MAX, 13, getQLinearMatMulText(),
                 nullptr, 8});
    // ONNX Runtime's com.microsoft forms; pools only channels-first
    // (channels_last = 1 stays an op no backend runs).
    const char *MS = "com.microsoft";
    const std::string Pool =
        std::string("AveragePool <auto_pad: string = @auto_pad, ceil_mode: int "
                    "= @ceil_mode, count_include_pad: int = "
                    "@count_include_pad, kernel_shape: ints = @kernel_shape, "
                    "pads: ints = @pads, strides: ints = @strides>");
    const std::pair<const char *, std::string> Unary[] = {
        {"QLinearSigmoid", "Sigmoid"},
        {"QLinearLeakyRelu", "LeakyRelu <alpha: float = @alpha>"},
        {"QLinearGlobalAveragePool", "GlobalAveragePool"},
        {"QLinearAveragePool", Pool}};
    for (const auto &[Name, Op] : Unary)
      V.push_back(
          {Name, 1, INT64_MAX, 13, getMicrosoftQText(Name, Op, {"x"}),
           llvm::StringRef(Name).endswith("Pool") ? "channels_last=0" : nullptr,
           5, MS});
    // QLinearSoftmax's `opset` names the Softmax whose semantics it has:
    // 13 on, one axis (before 13, a 2-D coercion: no body).
    V.push_back({"QLinearSoftmax", 1, INT64_MAX, 13,
                 getMicrosoftQText("QLinearSoftmax",
                                   "Softmax <axis: int = @axis>", {"x"}),
                 "opset>=13", 5, MS});
    for (const char *Name : {"QLinearAdd", "QLinearMul"})
      V.push_back({Name, 1, INT64_MAX, 13,
                   getMicrosoftQText(Name, llvm::StringRef(Name).drop_front(7),
                                     {"a", "b"}),
                   nullptr, 8, MS});
    for (int Count = 1; Count <= 8; ++Count)
      V.push_back({"QLinearConcat", 1, INT64_MAX, 13,
                   getQLinearConcatText(Count), nullptr, 2 + 3 * Count, MS});
    for (int Count = 4; Count <= 7; ++Count)
      V.push_back({"MatMulIntegerToFloat", 1, INT64_MAX, 13,
                   getMatMulIntegerToFloatText(Count), nullptr, Count, MS});
    for (int Count = 3; Count <= 5; ++Count)
      V.push_back({"DynamicQuantizeMatMul", 1, INT64_MAX, 13,
                   getDynamicQuantizeMatMulText(Count), nullptr, Count, MS});
    // transB absent or 0 first; any other transB is 1.
    for (bool TransB : {false, true})
      for (int Count = 6; Count <= 9; ++Count)
        V.push_back({"QGemm", 1, INT64_MAX, 13, getQGemmText(Count, TransB),
                     TransB ? nullptr : "transB=0", Count, MS});
    return V;
  }();
  return Entries;
}

/// Every entry's parsed body, in table order.
const std::vector<std::unique_ptr<onnx::FunctionProto>> &getParsedBodies() {
  static const auto Bodies = [] {
    std::vector<std::unique_ptr<onnx::FunctionProto>> V;
    for (const BodyEntry &E : getEntries()) {
      auto F = std::make_unique<onnx::FunctionProto>();
      onnx::Common::Status S = onnx::OnnxParser::Parse(*F, E.Text.c_str());
      (void)S;
      assert(S.IsOK() && "a function body of the table does not parse");
      V.push_back(std::move(F));
    }
    return V;
  }();
  return Bodies;
}

} // namespace

FunctionBody onnximport::getStriderFunctionBody(const onnx::NodeProto &Call,
                                                int64_t Opset) {
  auto Gives = [&](llvm::StringRef Name) {
    return llvm::any_of(Call.attribute(), [&](const onnx::AttributeProto &A) {
      return A.name() == Name;
    });
  };
  const std::string Domain = normalizeDomain(Call.domain());
  const std::vector<BodyEntry> &Entries = getEntries();
  for (size_t I = 0; I < Entries.size(); ++I) {
    const BodyEntry &E = Entries[I];
    if (Call.op_type() != E.OpType || Domain != (E.Domain ? E.Domain : ""))
      continue;
    if (!E.Domain && (Opset < E.MinOpset || Opset > E.MaxOpset))
      continue;
    if (E.Inputs && Call.input_size() != E.Inputs)
      continue;
    if (E.AttrCondition) {
      llvm::StringRef Cond(E.AttrCondition);
      const bool Negated = Cond.consume_front("!");
      const size_t Eq = Cond.find('=');
      if (Eq != llvm::StringRef::npos) {
        const bool AtLeast = Eq > 0 && Cond[Eq - 1] == '>';
        const llvm::StringRef Name = Cond.take_front(Eq - AtLeast);
        int64_t Value = 0;
        (void)Cond.drop_front(Eq + 1).getAsInteger(10, Value);
        const auto A =
            llvm::find_if(Call.attribute(), [&](const onnx::AttributeProto &A) {
              return A.name() == Name;
            });
        if (A != Call.attribute().end() &&
            (AtLeast ? A->i() < Value : A->i() != Value))
          continue;
      } else if (Gives(Cond) == Negated) {
        continue;
      }
    }
    return {getParsedBodies()[I].get(), E.BodyOpset};
  }
  return {};
}

bool onnximport::hasStriderFunctionBody(llvm::StringRef OpType, int64_t Opset) {
  return llvm::any_of(getEntries(), [&](const BodyEntry &E) {
    return !E.Domain && OpType == E.OpType && Opset >= E.MinOpset &&
           Opset <= E.MaxOpset;
  });
}
