//===- ExportLowering.cpp - Layouts and op forms for ONNX export ----------===//
//
// What the exporter does with the IR concepts ONNX has no words for.
//
// Physical layouts. IR op semantics are logical; a value's Layout only says
// how its bytes lie (DESIGN.md §1). ONNX has no layouts, so the exported
// model makes every layout explicit, with one rule:
//
//   The ONNX tensor named like an IR value holds that value's PHYSICAL
//   tensor: the logical tensor transposed by the layout's permutation
//   (ONNX Transpose perm = Perm, where Perm[i] is the logical dim stored at
//   physical position i), so its ONNX shape is the physical dim order and
//   its row-major bytes are exactly the bytes Strider keeps in memory.
//
// Consequences:
// - Graph inputs and outputs in a non-identity layout have their physical
//   shape in the exported model (a caller who asked for NHWC I/O gets it);
//   constants and input default data are written in physical order with
//   the physical shape (their stored bytes).
// - A relayout from layout A to layout B is one ONNX Transpose from A's
//   physical order to B's: perm[i] = A^-1[B[i]] (an Identity when A == B).
// - Every other node computes on logical tensors, as its ONNX op does: an
//   operand in a non-identity layout is fed through Transpose(perm = Perm^-1)
//   (physical -> logical), and a result in a non-identity layout is written
//   under a fresh `<name>.logical` tensor, from which Transpose(perm = Perm)
//   makes the physical tensor.
// - Conversions are emitted on demand and at most once per value: a value
//   computed logically whose physical form nobody reads (it is no graph
//   output and feeds no relayout) never gets one, and consumers of a
//   logical result read it directly. This is the exporter's peephole: the
//   Transpose pairs it would insert between two logical ops cancel by
//   construction, while relayouts and physical graph inputs, outputs and
//   constants always appear as explicit Transposes. ONNX Runtime therefore
//   computes the same outputs as the IR, and every data movement Strider
//   performs is visible.
//
// Op forms. The IR uses the newest opset's op forms (Clip bounds, Pad pads,
// Split sizes, Squeeze/Unsqueeze and Reduce axes as inputs; Resize with
// roi/scales/sizes; Softmax over one axis). The exporter keeps the model's
// default-domain opset when every node can be written at it, and otherwise
// raises it to the lowest version at which all can (a model without a
// default-domain import gets 17, the newest Debian's libonnx knows, or
// more). Three tables decide: per op, the first version of an equivalent
// form with two optional hooks, the version a particular node needs
// (non-constant operands that older forms hold as attributes, negative axes
// of unknown rank, Softmax's old 2-D semantics, ...) and the rewrite of a
// node into an older form; attributes added in later versions (dropped
// below them when they keep the old behaviour); element types added in
// later versions. Opaque nodes are written as they are, whatever the
// opset.
//
//===----------------------------------------------------------------------===//

#include "ExportLowering.h"
#include "TensorProto.h"

#include "strider/IR/Graph.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>

using namespace strider;
using namespace strider::onnxexport;

ExportSink::~ExportSink() = default;

//===----------------------------------------------------------------------===//
// Layout helpers
//===----------------------------------------------------------------------===//

static llvm::SmallVector<unsigned, 6> invertPerm(llvm::ArrayRef<unsigned> P) {
  llvm::SmallVector<unsigned, 6> Inv(P.size());
  for (unsigned I = 0; I < P.size(); ++I)
    Inv[P[I]] = I;
  return Inv;
}

static bool isIdentityPerm(llvm::ArrayRef<unsigned> P) {
  for (unsigned I = 0; I < P.size(); ++I)
    if (P[I] != I)
      return false;
  return true;
}

TensorType onnxexport::getPhysicalType(const TensorType &T) {
  if (T.getLayout().isIdentity())
    return T;
  assert(T.hasRank() && "a layout needs a rank");
  llvm::SmallVector<unsigned, 6> P = T.getLayout().getPermutation(T.getRank());
  llvm::SmallVector<Dim, 6> Dims;
  for (unsigned I : P)
    Dims.push_back(T.getDim(I));
  return TensorType(T.getElementType(), Dims);
}

llvm::Expected<TensorDataRef> onnxexport::getPhysicalTensor(const TensorData &D,
                                                            const Layout &L) {
  const TensorType &Ty = D.getType();
  TensorType Logical = Ty.withLayout(Layout());
  if (Ty.getLayout() == L) {
    // The stored bytes are already in L's order.
    std::vector<uint8_t> Bytes(D.getBytes().begin(), D.getBytes().end());
    return TensorData::create(getPhysicalType(Ty), std::move(Bytes));
  }
  std::vector<uint8_t> LogicalBytes = onnximport::toLogicalOrder(D);
  if (L.isIdentity())
    return TensorData::create(Logical, std::move(LogicalBytes));
  // Logical bytes, read as a tensor of the physical shape stored in layout
  // P^-1, are that tensor's physical bytes; its logical order is then the
  // row-major order of the physical shape, which toLogicalOrder produces.
  unsigned Rank = Ty.getRank();
  llvm::SmallVector<unsigned, 6> Inv = invertPerm(L.getPermutation(Rank));
  TensorType Phys = getPhysicalType(Logical.withLayout(L));
  auto Staged =
      TensorData::create(Phys.withLayout(Layout(Inv)), std::move(LogicalBytes));
  if (!Staged)
    return Staged.takeError();
  return TensorData::create(Phys, onnximport::toLogicalOrder(**Staged));
}

//===----------------------------------------------------------------------===//
// LayoutLowering
//===----------------------------------------------------------------------===//

static void addIntsAttr(onnx::NodeProto &NP, llvm::StringRef Name,
                        llvm::ArrayRef<int64_t> Values) {
  onnx::AttributeProto *A = NP.add_attribute();
  A->set_name(Name.str());
  A->set_type(onnx::AttributeProto::INTS);
  for (int64_t V : Values)
    A->add_ints(V);
}

/// Emit `Out = Transpose(In, Perm)`, or an Identity for an identity perm.
static void emitTranspose(ExportSink &Sink, llvm::StringRef NodeName,
                          llvm::StringRef In, llvm::StringRef Out,
                          llvm::ArrayRef<unsigned> Perm,
                          const std::string &DocString = "") {
  onnx::NodeProto NP;
  std::string Name = Sink.makeUniqueNodeName(NodeName);
  if (!Name.empty())
    NP.set_name(Name);
  NP.add_input(In.str());
  NP.add_output(Out.str());
  if (!DocString.empty())
    NP.set_doc_string(DocString);
  if (isIdentityPerm(Perm)) {
    NP.set_op_type("Identity");
  } else {
    NP.set_op_type("Transpose");
    llvm::SmallVector<int64_t, 6> P(Perm.begin(), Perm.end());
    addIntsAttr(NP, "perm", P);
  }
  Sink.addNode(std::move(NP));
}

void LayoutLowering::definePhysical(const Value &V) {
  Forms &F = ValueForms[&V];
  F.HasPhysical = true;
  if (V.getType().getLayout().isIdentity())
    F.LogicalName = V.getName();
}

void LayoutLowering::defineLogical(const Value &V,
                                   llvm::StringRef LogicalName) {
  Forms &F = ValueForms[&V];
  F.LogicalName = LogicalName.str();
  F.HasPhysical = V.getType().getLayout().isIdentity();
  assert((!F.HasPhysical || V.getName() == LogicalName) &&
         "an identity-layout value is named as its tensor");
}

std::string LayoutLowering::defineLogicalResult(const Value &V) {
  std::string Name = V.getName();
  bool Identity = V.getType().getLayout().isIdentity();
  if (!Identity)
    Name = Sink.makeUniqueTensorName(V.getName() + ".logical");
  Forms &F = ValueForms[&V];
  F.LogicalName = Name;
  F.HasPhysical = Identity;
  Sink.recordValueInfo(Name, V.getType().withLayout(Layout()));
  return Name;
}

std::string LayoutLowering::getLogicalName(const Value &V) {
  auto It = ValueForms.find(&V);
  assert(It != ValueForms.end() && "value used before it was defined");
  if (!It->second.LogicalName.empty())
    return It->second.LogicalName;
  assert(It->second.HasPhysical && "value has no form");
  const TensorType &T = V.getType();
  llvm::SmallVector<unsigned, 6> Inv =
      invertPerm(T.getLayout().getPermutation(T.getRank()));
  std::string Name = Sink.makeUniqueTensorName(V.getName() + ".logical");
  emitTranspose(Sink, V.getName() + ".to_logical", V.getName(), Name, Inv);
  Sink.recordValueInfo(Name, T.withLayout(Layout()));
  ValueForms[&V].LogicalName = Name;
  return Name;
}

std::string LayoutLowering::getPhysicalName(const Value &V) {
  auto It = ValueForms.find(&V);
  assert(It != ValueForms.end() && "value used before it was defined");
  if (It->second.HasPhysical)
    return V.getName();
  const TensorType &T = V.getType();
  std::string Logical = It->second.LogicalName;
  emitTranspose(Sink, V.getName() + ".to_physical", Logical, V.getName(),
                T.getLayout().getPermutation(T.getRank()));
  Sink.recordValueInfo(V.getName(), getPhysicalType(T));
  ValueForms[&V].HasPhysical = true;
  return V.getName();
}

void LayoutLowering::lowerRelayout(const Node &N) {
  const Value &X = *N.getOperand(0);
  const Value &Y = *N.getResult(0);
  std::string Src = getPhysicalName(X);
  const Layout &A = X.getType().getLayout(), &B = Y.getType().getLayout();
  llvm::SmallVector<unsigned, 6> Perm;
  if (A != B) {
    unsigned Rank = X.getType().getRank();
    llvm::SmallVector<unsigned, 6> InvA = invertPerm(A.getPermutation(Rank));
    for (unsigned I : B.getPermutation(Rank))
      Perm.push_back(InvA[I]);
  }
  emitTranspose(Sink, N.getLoc().Name, Src, Y.getName(), Perm,
                N.getDocString());
  definePhysical(Y);
  Sink.recordValueInfo(Y.getName(), getPhysicalType(Y.getType()));
}

//===----------------------------------------------------------------------===//
// NodeProto and operand helpers for the opset table
//===----------------------------------------------------------------------===//

namespace {

void removeAttr(onnx::NodeProto &NP, llvm::StringRef Name) {
  auto *Attrs = NP.mutable_attribute();
  for (int I = 0; I < Attrs->size(); ++I)
    if (Attrs->Get(I).name() == Name) {
      Attrs->DeleteSubrange(I, 1);
      return;
    }
}

void setIntAttr(onnx::NodeProto &NP, llvm::StringRef Name, int64_t V) {
  removeAttr(NP, Name);
  onnx::AttributeProto *A = NP.add_attribute();
  A->set_name(Name.str());
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(V);
}

void setFloatAttr(onnx::NodeProto &NP, llvm::StringRef Name, float V) {
  removeAttr(NP, Name);
  onnx::AttributeProto *A = NP.add_attribute();
  A->set_name(Name.str());
  A->set_type(onnx::AttributeProto::FLOAT);
  A->set_f(V);
}

void setIntsAttr(onnx::NodeProto &NP, llvm::StringRef Name,
                 llvm::ArrayRef<int64_t> V) {
  removeAttr(NP, Name);
  addIntsAttr(NP, Name, V);
}

/// Drop input \p I (it became an attribute); trailing empty inputs are
/// trimmed by the caller.
void clearInput(onnx::NodeProto &NP, unsigned I) {
  if (int(I) < NP.input_size())
    NP.set_input(I, "");
}

/// Constant contents of operand \p I, or null when it is absent or not the
/// result of a Constant node (graph inputs with default data may be
/// overridden, so they are not constant).
const TensorData *getConstantOperand(const Node &N, unsigned I) {
  if (!N.hasOperand(I))
    return nullptr;
  return N.getOperand(I)->getConstantData();
}

/// Operand \p I as a list of integers if it is a constant of rank <= 1.
llvm::Optional<std::vector<int64_t>> getConstantInts(const Node &N,
                                                     unsigned I) {
  const TensorData *D = getConstantOperand(N, I);
  if (!D || D->getType().getRank() > 1)
    return llvm::None;
  return D->toInt64Vector();
}

/// Operand \p I as a single number if it is a one-element constant.
llvm::Optional<double> getConstantScalar(const Node &N, unsigned I) {
  const TensorData *D = getConstantOperand(N, I);
  if (!D || D->getNumElements() != 1)
    return llvm::None;
  return D->getDouble(0);
}

/// Whether operand \p I is absent or a constant of rank <= 1.
bool isAbsentOrConstantInts(const Node &N, unsigned I) {
  return !N.hasOperand(I) || getConstantInts(N, I).hasValue();
}

llvm::Optional<unsigned> getRank(const Value *V) {
  if (!V || !V->getType().hasRank())
    return llvm::None;
  return V->getType().getRank();
}

llvm::Optional<unsigned> getOperandRank(const Node &N, unsigned I) {
  return N.hasOperand(I) ? getRank(N.getOperand(I)) : llvm::None;
}

bool hasNegative(llvm::ArrayRef<int64_t> Axes) {
  return llvm::any_of(Axes, [](int64_t A) { return A < 0; });
}

/// Negative axes are allowed from opset 11 on; older forms need the rank
/// to make them non-negative.
int64_t versionForAxes(llvm::ArrayRef<int64_t> Axes,
                       llvm::Optional<unsigned> Rank) {
  return hasNegative(Axes) && !Rank ? 11 : 1;
}

std::vector<int64_t> normalizeAxes(std::vector<int64_t> Axes, unsigned Rank) {
  for (int64_t &A : Axes)
    if (A < 0)
      A += Rank;
  return Axes;
}

//===----------------------------------------------------------------------===//
// Per-op rules
//===----------------------------------------------------------------------===//

// Ops with an `axis` attribute over operand 0's rank (Concat, Gather,
// Flatten; Flatten's axis may equal the rank, which normalizes the same).
int64_t minVersionAxisAttr(const Node &N) {
  const Attribute *A = N.getAttr("axis");
  if (!A)
    return 1;
  return versionForAxes({A->getInt()}, getOperandRank(N, 0));
}

void lowerAxisAttr(const Node &N, int64_t Version, onnx::NodeProto &NP,
                   ExportSink &) {
  const Attribute *A = N.getAttr("axis");
  if (Version >= 11 || !A || A->getInt() >= 0)
    return;
  setIntAttr(NP, "axis", A->getInt() + *getOperandRank(N, 0));
}

// ScatterElements: reductions add and mul from 16, max and min from 18
// (the attribute does not exist before 16).
int64_t minVersionScatterReduction(const Node &N) {
  const std::string R = N.getStringAttr("reduction", "none");
  return R == "none" ? 11 : R == "add" || R == "mul" ? 16 : 18;
}

// STFT: `onesided` always written. The spec and ONNX Runtime default it to
// 1, but ONNX's shape inference (1.23) reads an absent one as 0, so that
// onnx.checker would reject the node's one-sided result shape.
void lowerSTFT(const Node &N, int64_t, onnx::NodeProto &NP, ExportSink &) {
  if (!N.getAttr("onesided"))
    setIntAttr(NP, "onesided", 1);
}

// BatchNormalization: the training outputs have their current meaning from
// opset 14 on.
int64_t minVersionBatchNorm(const Node &N) {
  return N.hasResult(1) || N.hasResult(2) ? 14 : 1;
}

// MaxPool: the Indices output exists from 8.
int64_t minVersionMaxPool(const Node &N) { return N.hasResult(1) ? 8 : 1; }

// Clip: bounds are inputs from 11 (attributes before).
int64_t minVersionClip(const Node &N) {
  for (unsigned I = 1; I <= 2; ++I)
    if (N.hasOperand(I) && !getConstantScalar(N, I))
      return 11;
  return 1;
}

void lowerClip(const Node &N, int64_t Version, onnx::NodeProto &NP,
               ExportSink &) {
  if (Version >= 11)
    return;
  if (auto Min = getConstantScalar(N, 1))
    setFloatAttr(NP, "min", float(*Min));
  if (auto Max = getConstantScalar(N, 2))
    setFloatAttr(NP, "max", float(*Max));
  clearInput(NP, 1);
  clearInput(NP, 2);
}

// Dropout: ratio and training_mode are inputs from 12 (a ratio attribute
// and inference mode before); the mask is bool from 10.
int64_t minVersionDropout(const Node &N) {
  int64_t V = N.hasResult(1) ? 10 : 1;
  if (N.hasOperand(1) && !getConstantScalar(N, 1))
    return 12;
  if (N.hasOperand(2)) {
    auto Training = getConstantScalar(N, 2);
    if (!Training || *Training != 0)
      return 12;
  }
  return V;
}

void lowerDropout(const Node &N, int64_t Version, onnx::NodeProto &NP,
                  ExportSink &) {
  if (Version >= 12)
    return;
  if (auto Ratio = getConstantScalar(N, 1))
    setFloatAttr(NP, "ratio", float(*Ratio));
  removeAttr(NP, "seed");
  clearInput(NP, 1);
  clearInput(NP, 2);
}

// lookup (internal): a Gather of the table by x Cast to int32 (an i8 x
// shifted by 128).
void lowerLookup(const Node &N, int64_t, onnx::NodeProto &NP,
                 ExportSink &Sink) {
  const std::string Out = NP.output(0), X = NP.input(0), Table = NP.input(1);
  onnx::NodeProto Cast;
  Cast.set_op_type("Cast");
  Cast.add_input(X);
  std::string Index = Sink.makeUniqueTensorName(Out + ".index");
  Cast.add_output(Index);
  setIntAttr(Cast, "to", onnx::TensorProto::INT32);
  Sink.addNode(std::move(Cast));
  if (N.getOperand(0)->getType().getElementType() == ElementType::I8) {
    onnx::NodeProto Add;
    Add.set_op_type("Add");
    Add.add_input(Index);
    Add.add_input(Sink.addInitializer(
        *TensorData::fromInt64(ElementType::I32, {}, {128}), Out + ".offset"));
    Index = Sink.makeUniqueTensorName(Out + ".index");
    Add.add_output(Index);
    Sink.addNode(std::move(Add));
  }
  NP.set_op_type("Gather");
  NP.clear_input();
  NP.add_input(Table);
  NP.add_input(Index);
}

// qbinary (internal): the chain it was made of, DequantizeLinear of a and
// b, the Add or Mul, and QuantizeLinear into y.
void lowerQBinary(const Node &N, int64_t, onnx::NodeProto &NP,
                  ExportSink &Sink) {
  const std::string Out = NP.output(0);
  std::string Float[2];
  for (unsigned I = 0; I < 2; ++I) {
    onnx::NodeProto DQ;
    DQ.set_op_type("DequantizeLinear");
    for (unsigned J = 0; J < 3; ++J)
      DQ.add_input(NP.input(int(I * 3 + J)));
    Float[I] = Sink.makeUniqueTensorName(Out + (I ? ".b" : ".a"));
    DQ.add_output(Float[I]);
    Sink.addNode(std::move(DQ));
  }
  onnx::NodeProto Op;
  Op.set_op_type(N.getStringAttr("op", "Add"));
  Op.add_input(Float[0]);
  Op.add_input(Float[1]);
  const std::string Sum = Sink.makeUniqueTensorName(Out + ".f");
  Op.add_output(Sum);
  Sink.addNode(std::move(Op));
  const std::string YS = NP.input(6), YZ = NP.input(7);
  NP.set_op_type("QuantizeLinear");
  removeAttr(NP, "op");
  NP.clear_input();
  NP.add_input(Sum);
  NP.add_input(YS);
  NP.add_input(YZ);
}

// Max, Min, Sum broadcast from 8; before, all operands had one shape.
int64_t minVersionVariadic(const Node &N) {
  const TensorType &First = N.getOperand(0)->getType();
  for (Value *Op : N.getOperands()) {
    if (!Op || !Op->getType().hasRank() || !First.hasRank() ||
        !Op->getType().hasStaticShape() || !First.hasStaticShape() ||
        Op->getType().getShape() != First.getShape())
      return 8;
  }
  return 1;
}

// Split: the sizes are an input from 13 (an attribute before), and
// num_outputs exists from 18; without it, a split without sizes is an
// equal split into as many parts as there are outputs.
/// Static sizes of the results along the split axis, if all are known.
llvm::Optional<std::vector<int64_t>> getSplitSizes(const Node &N,
                                                   int64_t Axis) {
  std::vector<int64_t> Sizes;
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    Value *R = N.getResult(I);
    if (!R || !R->getType().hasRank() || Axis < 0 ||
        Axis >= int64_t(R->getType().getRank()) ||
        !R->getType().getDim(Axis).isStatic())
      return llvm::None;
    Sizes.push_back(R->getType().getDim(Axis).getSize());
  }
  return Sizes;
}

int64_t getSplitAxis(const Node &N) {
  int64_t Axis = N.getIntAttr("axis", 0);
  if (Axis < 0)
    if (auto Rank = getOperandRank(N, 0))
      Axis += *Rank;
  return Axis;
}

int64_t minVersionSplit(const Node &N) {
  int64_t V = minVersionAxisAttr(N);
  if (N.hasOperand(1)) {
    if (!getConstantInts(N, 1))
      V = std::max<int64_t>(V, 13);
  } else if (N.getAttr("num_outputs")) {
    if (!getSplitSizes(N, getSplitAxis(N)))
      V = std::max<int64_t>(V, 18);
  }
  return V;
}

void lowerSplit(const Node &N, int64_t Version, onnx::NodeProto &NP,
                ExportSink &Sink) {
  lowerAxisAttr(N, Version, NP, Sink);
  if (Version < 18 && N.getAttr("num_outputs")) {
    removeAttr(NP, "num_outputs");
    if (!N.hasOperand(1)) {
      // Spell out unequal sizes; equal ones are the default.
      std::vector<int64_t> Sizes = *getSplitSizes(N, getSplitAxis(N));
      bool Equal =
          llvm::all_of(Sizes, [&](int64_t S) { return S == Sizes.front(); });
      if (!Equal) {
        if (Version >= 13) {
          std::string Name = Sink.addInitializer(
              *TensorData::fromInt64(ElementType::I64, {int64_t(Sizes.size())},
                                     Sizes),
              NP.output(0) + ".split");
          while (NP.input_size() < 2)
            NP.add_input("");
          NP.set_input(1, Name);
        } else {
          setIntsAttr(NP, "split", Sizes);
        }
      }
    }
  }
  if (Version < 13 && N.hasOperand(1)) {
    setIntsAttr(NP, "split", *getConstantInts(N, 1));
    clearInput(NP, 1);
  }
}

// Slice: starts/ends/axes/steps are inputs from 10 (attributes without
// steps before); negative axes from 11.
int64_t minVersionSlice(const Node &N) {
  int64_t V = 1;
  for (unsigned I = 1; I <= 4; ++I)
    if (!isAbsentOrConstantInts(N, I))
      return 10;
  if (N.hasOperand(4)) {
    std::vector<int64_t> Steps = *getConstantInts(N, 4);
    if (llvm::any_of(Steps, [](int64_t S) { return S != 1; }))
      V = 10;
  }
  if (N.hasOperand(3))
    V = std::max(V,
                 versionForAxes(*getConstantInts(N, 3), getOperandRank(N, 0)));
  return V;
}

void lowerSlice(const Node &N, int64_t Version, onnx::NodeProto &NP,
                ExportSink &) {
  if (Version >= 10)
    return;
  setIntsAttr(NP, "starts", *getConstantInts(N, 1));
  setIntsAttr(NP, "ends", *getConstantInts(N, 2));
  if (N.hasOperand(3)) {
    std::vector<int64_t> Axes = *getConstantInts(N, 3);
    if (hasNegative(Axes))
      Axes = normalizeAxes(std::move(Axes), *getOperandRank(N, 0));
    setIntsAttr(NP, "axes", Axes);
  }
  for (unsigned I = 1; I <= 4; ++I)
    clearInput(NP, I);
}

// Pad: pads and constant_value are inputs from 11 (attributes before);
// axes from 18; `wrap` mode from 19.
int64_t minVersionPad(const Node &N) {
  int64_t V = 2;
  if (N.hasOperand(3))
    V = 18;
  if (N.getStringAttr("mode", "constant") == "wrap")
    V = 19;
  if (!isAbsentOrConstantInts(N, 1) ||
      (N.hasOperand(2) && !getConstantScalar(N, 2)))
    V = std::max<int64_t>(V, 11);
  return V;
}

void lowerPad(const Node &N, int64_t Version, onnx::NodeProto &NP,
              ExportSink &) {
  if (Version >= 11)
    return;
  setIntsAttr(NP, "pads", *getConstantInts(N, 1));
  if (auto Value = getConstantScalar(N, 2))
    setFloatAttr(NP, "value", float(*Value));
  clearInput(NP, 1);
  clearInput(NP, 2);
}

// GridSample: from 16, over two spatial dims with modes named bilinear
// and bicubic until 20, which takes any number of spatial dims.
int64_t minVersionGridSample(const Node &N) {
  const Value *X = N.getOperand(0);
  return X->getType().hasRank() && X->getType().getRank() == 4 ? 16 : 20;
}

void lowerGridSample(const Node &N, int64_t Version, onnx::NodeProto &NP,
                     ExportSink &) {
  if (Version >= 20)
    return;
  const std::string Mode = N.getStringAttr("mode", "linear");
  removeAttr(NP, "mode");
  onnx::AttributeProto *A = NP.add_attribute();
  A->set_name("mode");
  A->set_type(onnx::AttributeProto::STRING);
  A->set_s(Mode == "linear" ? "bilinear" : Mode == "cubic" ? "bicubic" : Mode);
}

// Resize: the IR form exists from 11, where roi and scales are required
// inputs (empty tensors when unused) until 13; antialias, axes and
// keep_aspect_ratio_policy from 18; half_pixel_symmetric from 19.
int64_t minVersionResize(const Node &N) {
  int64_t V = 11;
  if (N.getIntAttr("antialias", 0) != 0 || N.getAttr("axes") ||
      N.getStringAttr("keep_aspect_ratio_policy", "stretch") != "stretch")
    V = 18;
  if (N.getStringAttr("coordinate_transformation_mode", "half_pixel") ==
      "half_pixel_symmetric")
    V = 19;
  return V;
}

void lowerResize(const Node &N, int64_t Version, onnx::NodeProto &NP,
                 ExportSink &Sink) {
  if (Version >= 18) {
    return;
  }
  removeAttr(NP, "antialias");
  removeAttr(NP, "axes");
  removeAttr(NP, "keep_aspect_ratio_policy");
  if (Version >= 13)
    return;
  // roi and scales must be present; an empty float tensor means unused.
  unsigned Needed = N.hasOperand(3) ? 3 : 2;
  while (NP.input_size() < int(Needed))
    NP.add_input("");
  for (unsigned I = 1; I < Needed; ++I)
    if (NP.input(I).empty())
      NP.set_input(
          I, Sink.addInitializer(*TensorData::fromFloat({0}, {}),
                                 NP.output(0) + (I == 1 ? ".roi" : ".scales")));
}

// Softmax and LogSoftmax: before 13, the op flattens the input to 2-D at
// `axis`, which equals the IR's single-axis form only when every dim after
// the axis is 1 (in particular for the last axis).
int64_t minVersionSoftmax(const Node &N) {
  llvm::Optional<unsigned> Rank = getOperandRank(N, 0);
  if (!Rank)
    return 13;
  int64_t Axis = N.getIntAttr("axis", -1);
  if (Axis < 0)
    Axis += *Rank;
  const TensorType &T = N.getOperand(0)->getType();
  for (unsigned I = Axis + 1; I < *Rank; ++I)
    if (!T.getDim(I).isStatic() || T.getDim(I).getSize() != 1)
      return 13;
  return 1;
}

void lowerSoftmax(const Node &N, int64_t Version, onnx::NodeProto &NP,
                  ExportSink &) {
  if (Version >= 13)
    return;
  // The default axis was 1 before 13: always write it.
  int64_t Axis = N.getIntAttr("axis", -1);
  if (Axis < 0)
    Axis += *getOperandRank(N, 0);
  setIntAttr(NP, "axis", Axis);
}

// Reductions: axes are an input from FormVersion (an attribute before);
// noop_with_empty_axes comes with the input form.
template <int64_t FormVersion> int64_t minVersionReduce(const Node &N) {
  if (!isAbsentOrConstantInts(N, 1))
    return FormVersion;
  std::vector<int64_t> Axes;
  if (N.hasOperand(1))
    Axes = *getConstantInts(N, 1);
  if (Axes.empty() && N.getIntAttr("noop_with_empty_axes", 0) != 0)
    return FormVersion;
  return versionForAxes(Axes, getOperandRank(N, 0));
}

template <int64_t FormVersion>
void lowerReduce(const Node &N, int64_t Version, onnx::NodeProto &NP,
                 ExportSink &) {
  if (Version >= FormVersion)
    return;
  removeAttr(NP, "noop_with_empty_axes");
  if (N.hasOperand(1)) {
    std::vector<int64_t> Axes = *getConstantInts(N, 1);
    if (Version < 11 && hasNegative(Axes))
      Axes = normalizeAxes(std::move(Axes), *getOperandRank(N, 0));
    // Empty axes (noop_with_empty_axes = 0) reduce all: no attribute.
    if (!Axes.empty())
      setIntsAttr(NP, "axes", Axes);
    clearInput(NP, 1);
  }
}

// Squeeze and Unsqueeze: axes are an input from 13 (an attribute before).
// Unsqueeze's axes index its result.
int64_t minVersionSqueeze(const Node &N) {
  if (!isAbsentOrConstantInts(N, 1))
    return 13;
  if (!N.hasOperand(1))
    return 1;
  llvm::Optional<unsigned> Rank = N.getOpId() == OpId::Unsqueeze
                                      ? getRank(N.getResult(0))
                                      : getOperandRank(N, 0);
  return versionForAxes(*getConstantInts(N, 1), Rank);
}

void lowerSqueeze(const Node &N, int64_t Version, onnx::NodeProto &NP,
                  ExportSink &) {
  if (Version >= 13 || !N.hasOperand(1))
    return;
  std::vector<int64_t> Axes = *getConstantInts(N, 1);
  if (Version < 11 && hasNegative(Axes))
    Axes = normalizeAxes(std::move(Axes), N.getOpId() == OpId::Unsqueeze
                                              ? *getRank(N.getResult(0))
                                              : *getOperandRank(N, 0));
  setIntsAttr(NP, "axes", Axes);
  clearInput(NP, 1);
}

// Gemm: C is optional from 11.
int64_t minVersionGemm(const Node &N) { return N.hasOperand(2) ? 1 : 11; }

//===----------------------------------------------------------------------===//
// The tables
//===----------------------------------------------------------------------===//

using MinVersionFn = int64_t (*)(const Node &);
using LowerFn = void (*)(const Node &, int64_t, onnx::NodeProto &,
                         ExportSink &);

struct OpsetRule {
  OpId Op;
  /// First opset with a form equivalent to the IR's (given the hooks).
  int64_t Since;
  /// Version this particular node needs; null: Since.
  MinVersionFn MinVersion;
  /// Rewrite into an older form; null: the form never changed.
  LowerFn Lower;
};

// One entry per op, in Ops.def order (checked in getRule).
constexpr OpsetRule OpsetRules[] = {
    {OpId::Conv, 1, nullptr, nullptr},
    {OpId::ConvTranspose, 1, nullptr, nullptr},
    {OpId::BatchNormalization, 7, minVersionBatchNorm, nullptr},
    {OpId::InstanceNormalization, 6, nullptr, nullptr},
    {OpId::LayerNormalization, 17, nullptr, nullptr},
    {OpId::LRN, 1, nullptr, nullptr},
    {OpId::MaxPool, 1, minVersionMaxPool, nullptr},
    {OpId::AveragePool, 1, nullptr, nullptr},
    {OpId::GlobalAveragePool, 1, nullptr, nullptr},
    {OpId::GlobalMaxPool, 1, nullptr, nullptr},
    {OpId::Relu, 6, nullptr, nullptr},
    {OpId::LeakyRelu, 6, nullptr, nullptr},
    {OpId::Clip, 6, minVersionClip, lowerClip},
    {OpId::Sigmoid, 6, nullptr, nullptr},
    {OpId::HardSigmoid, 6, nullptr, nullptr},
    {OpId::HardSwish, 14, nullptr, nullptr},
    {OpId::Tanh, 6, nullptr, nullptr},
    {OpId::Elu, 6, nullptr, nullptr},
    {OpId::Selu, 6, nullptr, nullptr},
    {OpId::Softplus, 1, nullptr, nullptr},
    {OpId::Softsign, 1, nullptr, nullptr},
    {OpId::Celu, 12, nullptr, nullptr},
    {OpId::Erf, 9, nullptr, nullptr},
    {OpId::Gelu, 20, nullptr, nullptr},
    {OpId::Exp, 6, nullptr, nullptr},
    {OpId::Sqrt, 6, nullptr, nullptr},
    {OpId::Cast, 6, nullptr, nullptr},
    {OpId::Identity, 1, nullptr, nullptr},
    {OpId::Dropout, 7, minVersionDropout, lowerDropout},
    {OpId::QuantizeLinear, 13, nullptr, nullptr},
    {OpId::DequantizeLinear, 13, nullptr, nullptr},
    {OpId::QLinearConv, 10, nullptr, nullptr},
    {OpId::ConvInteger, 10, nullptr, nullptr},
    {OpId::PRelu, 7, nullptr, nullptr},
    {OpId::Add, 7, nullptr, nullptr},
    {OpId::Sub, 7, nullptr, nullptr},
    {OpId::Mul, 7, nullptr, nullptr},
    {OpId::Div, 7, nullptr, nullptr},
    {OpId::Pow, 7, nullptr, nullptr},
    {OpId::Max, 6, minVersionVariadic, nullptr},
    {OpId::Min, 6, minVersionVariadic, nullptr},
    {OpId::Sum, 6, minVersionVariadic, nullptr},
    {OpId::Mod, 10, nullptr, nullptr},
    {OpId::BitShift, 11, nullptr, nullptr},
    {OpId::Neg, 6, nullptr, nullptr},
    {OpId::Abs, 6, nullptr, nullptr},
    {OpId::Reciprocal, 6, nullptr, nullptr},
    {OpId::Floor, 6, nullptr, nullptr},
    {OpId::Ceil, 6, nullptr, nullptr},
    {OpId::Log, 6, nullptr, nullptr},
    {OpId::Sin, 7, nullptr, nullptr},
    {OpId::Cos, 7, nullptr, nullptr},
    {OpId::Tan, 7, nullptr, nullptr},
    {OpId::Asin, 7, nullptr, nullptr},
    {OpId::Acos, 7, nullptr, nullptr},
    {OpId::Atan, 7, nullptr, nullptr},
    {OpId::Sinh, 9, nullptr, nullptr},
    {OpId::Cosh, 9, nullptr, nullptr},
    {OpId::Asinh, 9, nullptr, nullptr},
    {OpId::Acosh, 9, nullptr, nullptr},
    {OpId::Atanh, 9, nullptr, nullptr},
    {OpId::Sign, 9, nullptr, nullptr},
    {OpId::Round, 11, nullptr, nullptr},
    {OpId::ThresholdedRelu, 10, nullptr, nullptr},
    {OpId::Shrink, 9, nullptr, nullptr},
    {OpId::Equal, 11, nullptr, nullptr},
    {OpId::Less, 9, nullptr, nullptr},
    {OpId::LessOrEqual, 12, nullptr, nullptr},
    {OpId::Greater, 9, nullptr, nullptr},
    {OpId::GreaterOrEqual, 12, nullptr, nullptr},
    {OpId::Not, 1, nullptr, nullptr},
    {OpId::And, 7, nullptr, nullptr},
    {OpId::Or, 7, nullptr, nullptr},
    {OpId::Xor, 7, nullptr, nullptr},
    {OpId::IsNaN, 9, nullptr, nullptr},
    {OpId::IsInf, 10, nullptr, nullptr},
    {OpId::Where, 9, nullptr, nullptr},
    {OpId::Concat, 4, minVersionAxisAttr, lowerAxisAttr},
    {OpId::Split, 2, minVersionSplit, lowerSplit},
    {OpId::Slice, 1, minVersionSlice, lowerSlice},
    {OpId::Pad, 2, minVersionPad, lowerPad},
    {OpId::Resize, 11, minVersionResize, lowerResize},
    {OpId::GridSample, 16, minVersionGridSample, lowerGridSample},
    {OpId::DepthToSpace, 1, nullptr, nullptr},
    {OpId::SpaceToDepth, 1, nullptr, nullptr},
    {OpId::Softmax, 1, minVersionSoftmax, lowerSoftmax},
    {OpId::LogSoftmax, 1, minVersionSoftmax, lowerSoftmax},
    {OpId::ReduceMean, 1, minVersionReduce<18>, lowerReduce<18>},
    {OpId::ReduceMax, 1, minVersionReduce<18>, lowerReduce<18>},
    {OpId::ReduceSum, 1, minVersionReduce<13>, lowerReduce<13>},
    {OpId::ReduceMin, 1, minVersionReduce<18>, lowerReduce<18>},
    {OpId::ReduceProd, 1, minVersionReduce<18>, lowerReduce<18>},
    {OpId::ReduceL2, 1, minVersionReduce<18>, lowerReduce<18>},
    {OpId::ReduceSumSquare, 1, minVersionReduce<18>, lowerReduce<18>},
    {OpId::TopK, 11, nullptr, nullptr},
    {OpId::ArgMax, 1, minVersionAxisAttr, lowerAxisAttr},
    {OpId::ArgMin, 1, minVersionAxisAttr, lowerAxisAttr},
    {OpId::Gather, 1, minVersionAxisAttr, lowerAxisAttr},
    {OpId::GatherElements, 11, nullptr, nullptr},
    {OpId::ScatterElements, 11, minVersionScatterReduction, nullptr},
    {OpId::GatherND, 12, nullptr, nullptr},
    {OpId::ScatterND, 11, minVersionScatterReduction, nullptr},
    {OpId::Expand, 8, nullptr, nullptr},
    {OpId::Tile, 6, nullptr, nullptr},
    {OpId::Reshape, 5, nullptr, nullptr},
    {OpId::Flatten, 1, minVersionAxisAttr, lowerAxisAttr},
    {OpId::Squeeze, 1, minVersionSqueeze, lowerSqueeze},
    {OpId::Unsqueeze, 1, minVersionSqueeze, lowerSqueeze},
    {OpId::Transpose, 1, nullptr, nullptr},
    {OpId::Gemm, 7, minVersionGemm, nullptr},
    {OpId::MatMul, 1, nullptr, nullptr},
    {OpId::Einsum, 12, nullptr, nullptr},
    {OpId::Trilu, 14, nullptr, nullptr},
    {OpId::CumSum, 11, nullptr, nullptr},
    {OpId::LSTM, 7, nullptr, nullptr},
    {OpId::GRU, 7, nullptr, nullptr},
    {OpId::STFT, 17, nullptr, lowerSTFT},
    {OpId::Constant, 1, nullptr, nullptr},
    {OpId::ConstantOfShape, 9, nullptr, nullptr},
    {OpId::Shape, 1, nullptr, nullptr},
    {OpId::Size, 1, nullptr, nullptr},
    {OpId::Range, 11, nullptr, nullptr},
    {OpId::If, 1, nullptr, nullptr},
    {OpId::Relayout, 1, nullptr, nullptr},
    {OpId::Lookup, 6, nullptr, lowerLookup},
    {OpId::QBinary, 10, nullptr, lowerQBinary},
};

bool isAnyValue(const Attribute &) { return true; }
bool isZero(const Attribute &A) {
  return A.getKind() == AttrKind::Int && A.getInt() == 0;
}
bool isAllOnes(const Attribute &A) {
  return A.getKind() == AttrKind::Ints &&
         llvm::all_of(A.getInts(), [](int64_t V) { return V == 1; });
}
bool isNone(const Attribute &A) {
  return A.getKind() == AttrKind::String && A.getString() == "none";
}
bool isDCR(const Attribute &A) {
  return A.getKind() == AttrKind::String && A.getString() == "DCR";
}

/// An attribute added to an op in a later opset. Nodes that set it to a
/// value other than the older behaviour need version Since; below it, the
/// attribute is dropped.
struct AttrIntroduction {
  OpId Op;
  const char *Name;
  int64_t Since;
  bool (*IsOlderBehaviour)(const Attribute &);
};

constexpr AttrIntroduction AttrIntroductions[] = {
    {OpId::BatchNormalization, "training_mode", 14, isZero},
    {OpId::MaxPool, "storage_order", 8, isZero},
    {OpId::MaxPool, "ceil_mode", 10, isZero},
    {OpId::MaxPool, "dilations", 10, isAllOnes},
    {OpId::AveragePool, "count_include_pad", 7, isZero},
    {OpId::AveragePool, "ceil_mode", 10, isZero},
    {OpId::AveragePool, "dilations", 19, isAllOnes},
    // Only float8 targets saturate, and the IR has no float8.
    {OpId::Cast, "saturate", 19, isAnyValue},
    {OpId::DepthToSpace, "mode", 11, isDCR},
    {OpId::ArgMax, "select_last_index", 12, isZero},
    {OpId::ArgMin, "select_last_index", 12, isZero},
    {OpId::Reshape, "allowzero", 14, isZero},
    {OpId::Shape, "start", 15, isZero},
    {OpId::Shape, "end", 15, nullptr},
    {OpId::LSTM, "layout", 14, isZero},
    {OpId::GRU, "layout", 14, isZero},
    {OpId::ScatterElements, "reduction", 16, isNone},
};

constexpr uint32_t typeBit(ElementType T) {
  return uint32_t(1) << static_cast<unsigned>(T);
}
constexpr uint32_t BF16Bit = typeBit(ElementType::BF16);
constexpr uint32_t Int8And16 =
    typeBit(ElementType::I8) | typeBit(ElementType::U8) |
    typeBit(ElementType::I16) | typeBit(ElementType::U16);
constexpr uint32_t Int32And64 =
    typeBit(ElementType::I32) | typeBit(ElementType::U32) |
    typeBit(ElementType::I64) | typeBit(ElementType::U64);
constexpr uint32_t AllInts = Int8And16 | Int32And64;
constexpr uint32_t SignedInts =
    typeBit(ElementType::I8) | typeBit(ElementType::I16) |
    typeBit(ElementType::I32) | typeBit(ElementType::I64);
constexpr uint32_t BoolBit = typeBit(ElementType::Bool);

/// Element types of the first operand that an op accepts only from opset
/// Since on (from onnx.defs). bfloat16 arrived with opset 13 for every op
/// not listed with a later version.
struct TypeIntroduction {
  OpId Op;
  uint32_t Types;
  int64_t Since;
};

constexpr TypeIntroduction TypeIntroductions[] = {
    {OpId::Conv, BF16Bit, 22},
    {OpId::ConvTranspose, BF16Bit, 22},
    {OpId::BatchNormalization, BF16Bit, 14},
    {OpId::InstanceNormalization, BF16Bit, 22},
    {OpId::MaxPool, typeBit(ElementType::I8) | typeBit(ElementType::U8), 12},
    {OpId::MaxPool, BF16Bit, 22},
    {OpId::AveragePool, BF16Bit, 22},
    {OpId::GlobalAveragePool, BF16Bit, 22},
    {OpId::GlobalMaxPool, BF16Bit, 22},
    {OpId::Relu, SignedInts, 14},
    {OpId::LeakyRelu, BF16Bit, 16},
    {OpId::Clip, AllInts, 12},
    {OpId::HardSigmoid, BF16Bit, 22},
    {OpId::HardSwish, BF16Bit, 22},
    {OpId::Elu, BF16Bit, 22},
    {OpId::Selu, BF16Bit, 22},
    {OpId::Softplus, BF16Bit, 22},
    {OpId::Softsign, BF16Bit, 22},
    {OpId::PRelu, Int32And64, 9},
    {OpId::PRelu, BF16Bit, 16},
    {OpId::Add, Int8And16, 14},
    {OpId::Sub, Int8And16, 14},
    {OpId::Mul, Int8And16, 14},
    {OpId::Div, Int8And16, 14},
    {OpId::Pow, Int32And64, 12},
    {OpId::Max, AllInts, 12},
    {OpId::Min, AllInts, 12},
    {OpId::Pad, AllInts, 11},
    {OpId::Pad, BoolBit, 13},
    {OpId::ReduceMax, typeBit(ElementType::I8) | typeBit(ElementType::U8), 12},
    {OpId::ReduceMax, BoolBit, 20},
    {OpId::ReduceMin, typeBit(ElementType::I8) | typeBit(ElementType::U8), 12},
    {OpId::ReduceMin, BoolBit, 20},
    {OpId::Flatten, AllInts | BoolBit, 9},
    {OpId::Gemm, Int32And64, 9},
    {OpId::MatMul, Int32And64, 9},
};

const OpsetRule &getRule(OpId Id) {
  const OpsetRule &R = OpsetRules[static_cast<unsigned>(Id)];
  assert(R.Op == Id && "OpsetRules out of Ops.def order");
  static_assert(std::size(OpsetRules) == static_cast<unsigned>(OpId::Opaque),
                "one opset rule per op");
  return R;
}

} // namespace

int64_t onnxexport::getMinimumOpset(const Node &N) {
  assert(!N.isOpaque() && "opaque nodes have no opset rule");
  const OpsetRule &R = getRule(N.getOpId());
  int64_t V = R.Since;
  if (R.MinVersion)
    V = std::max(V, R.MinVersion(N));
  if (N.hasOperand(0)) {
    ElementType Elt = N.getOperand(0)->getType().getElementType();
    if (Elt == ElementType::BF16)
      V = std::max<int64_t>(V, 13);
    for (const TypeIntroduction &I : TypeIntroductions)
      if (I.Op == N.getOpId() && (I.Types & typeBit(Elt)))
        V = std::max(V, I.Since);
  }
  for (const AttrIntroduction &I : AttrIntroductions) {
    if (I.Op != N.getOpId())
      continue;
    const Attribute *A = N.getAttr(I.Name);
    if (A && !(I.IsOlderBehaviour && I.IsOlderBehaviour(*A)))
      V = std::max(V, I.Since);
  }
  return V;
}

void onnxexport::lowerToOpset(const Node &N, int64_t Version,
                              onnx::NodeProto &NP, ExportSink &Sink) {
  assert(Version >= getMinimumOpset(N) && "node not expressible");
  for (const AttrIntroduction &I : AttrIntroductions)
    if (I.Op == N.getOpId() && Version < I.Since)
      removeAttr(NP, I.Name);
  const OpsetRule &R = getRule(N.getOpId());
  if (R.Lower)
    R.Lower(N, Version, NP, Sink);
}

int64_t onnxexport::getMinimumIRVersion(int64_t Opset) {
  // First opset of each ONNX IR version (onnx.helper.VERSION_TABLE).
  static const struct {
    int64_t FirstOpset, IRVersion;
  } Releases[] = {{1, 3},  {9, 4},   {10, 5},  {11, 6},  {12, 7},  {15, 8},
                  {19, 9}, {21, 10}, {23, 11}, {24, 12}, {25, 13}, {28, 14}};
  int64_t IR = 3;
  for (const auto &R : Releases)
    if (Opset >= R.FirstOpset)
      IR = R.IRVersion;
  return IR;
}
