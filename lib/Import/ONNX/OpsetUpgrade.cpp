//===- OpsetUpgrade.cpp - Older ONNX op forms to the IR's -----------------===//
//
// One table entry per op whose form changed between opset 6 and the newest
// opset. Each entry applies to models importing an opset older than its
// bound and rewrites the node into the newest form. Entries with no bound
// normalize forms the newest opset still allows (Constant's value_* forms)
// or drop newer attributes whose only accepted value is the IR's behaviour.
//
//   Op                  Opsets      Rewrite
//   Add, Sub, Mul, Div, 6           `broadcast`/`axis` -> numpy broadcasting:
//   Pow, And, Or, Xor,              B unsqueezed to align at `axis`; without
//   Equal, Greater, Less            broadcast = 1 the shapes must match
//   PRelu               6           one slope per channel (axis 1) ->
//                                   slope unsqueezed to [C, 1, ...]
//   Gemm                6           `broadcast` dropped
//   BatchNormalization  6           `is_test` = 0 is an error (training)
//   Dropout             6           `is_test` = 0 is an error (training)
//   Upsample            6           `height_scale`/`width_scale`, mode
//                                   bilinear -> `scales`, linear
//   BatchNormalization  6-8         `spatial` dropped (0 is an error);
//                                   `is_test`, `consumed_inputs` dropped
//                       6-13        extra outputs -> training_mode = 1
//   Clip                6-10        `min`/`max` attributes -> inputs
//   Dropout             6-11        `ratio` -> input; `is_test` dropped
//   Pad                 6-10        `pads`/`value` -> inputs
//   Slice               6-9         `starts`/`ends`/`axes` -> inputs
//   Split               6-12        `split` -> input
//   TopK                1-9         `k` -> input
//                       6-17        no split sizes -> num_outputs
//   Squeeze, Unsqueeze  6-12        `axes` -> input
//   ReduceSum           6-12        `axes` -> input
//   ReduceMean/Max/Min, 6-17        `axes` -> input
//   ReduceProd/L2/
//   ReduceSumSquare
//   Softmax/LogSoftmax  6-12        2-D coercion -> Softmax on the last
//                                   axis, or Flatten -> Softmax -> Reshape
//   Upsample            6-10        -> Resize, asymmetric coordinates,
//                                   nearest_mode floor
//   Resize              10          (X, scales) -> (X, none, scales) with
//                                   Upsample's coordinates
//                       11-12       empty roi/scales inputs -> missing;
//                                   tf_half_pixel_for_nn (nearest, floor
//                                   or round_prefer_floor) -> half_pixel
//                                   with round_prefer_ceil or ceil
//   Constant            all         value_float(s)/value_int(s) -> value
//   Cast                all         `to` must be a supported type;
//                                   `round_mode` (float8e8m0 only) dropped
//   SpaceToDepth        all         `mode` DCR dropped, CRD is an error
//   GridSample          16-19       mode bilinear -> linear, bicubic ->
//                                   cubic (opset 20's names)
//
// Opsets 1-5 are read for ops whose form opset 6 still has (Softplus-1,
// GlobalAveragePool-1, Not-1, ...); an op that changed before opset 6
// (consumed_inputs dropped, Reshape's shape attribute, ...) is an error in
// such a model (Opset6Forms).
//
// Ops not listed kept their form (attributes added by newer opsets default
// to the older behaviour: AveragePool-1's count_include_pad, MaxPool-1's
// storage_order; Sum/Max/Min/Mean-6 required equal shapes, a case of
// numpy broadcasting).
//
//===----------------------------------------------------------------------===//

#include "OpsetUpgrade.h"

#include "strider/IR/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstring>

using namespace strider;
using namespace strider::onnximport;

//===----------------------------------------------------------------------===//
// PendingNode and UpgradeBuilder
//===----------------------------------------------------------------------===//

const Attribute *PendingNode::findAttr(llvm::StringRef Name) const {
  for (const NamedAttribute &A : Attrs)
    if (A.Name == Name)
      return &A.Value;
  return nullptr;
}

bool PendingNode::eraseAttr(llvm::StringRef Name) {
  auto It = llvm::find_if(
      Attrs, [&](const NamedAttribute &A) { return A.Name == Name; });
  if (It == Attrs.end())
    return false;
  Attrs.erase(It);
  return true;
}

void PendingNode::setAttr(llvm::StringRef Name, Attribute A) {
  for (NamedAttribute &Existing : Attrs)
    if (Existing.Name == Name) {
      Existing.Value = std::move(A);
      return;
    }
  Attrs.push_back({Name.str(), std::move(A)});
}

llvm::Error PendingNode::error(const llvm::Twine &Msg) const {
  return makeError(Description + ": " + Msg);
}

UpgradeBuilder::~UpgradeBuilder() = default;

llvm::Expected<Value *>
UpgradeBuilder::createConstant(const PendingNode &Origin, TensorDataRef Data,
                               llvm::StringRef NameHint) {
  return createHelperNode(Origin, OpId::Constant, {},
                          {{"value", Attribute::getTensor(std::move(Data))}},
                          NameHint);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {
/// Attribute readers that report a located error on a kind mismatch.
llvm::Expected<llvm::Optional<std::vector<int64_t>>>
takeIntsAttr(PendingNode &N, llvm::StringRef Name) {
  const Attribute *A = N.findAttr(Name);
  if (!A)
    return llvm::Optional<std::vector<int64_t>>();
  if (A->getKind() != AttrKind::Ints)
    return N.error("attribute '" + Name + "' must be of kind ints, got " +
                   getAttrKindName(A->getKind()));
  std::vector<int64_t> V = A->getInts();
  N.eraseAttr(Name);
  return llvm::Optional<std::vector<int64_t>>(std::move(V));
}

llvm::Expected<llvm::Optional<float>> takeFloatAttr(PendingNode &N,
                                                    llvm::StringRef Name) {
  const Attribute *A = N.findAttr(Name);
  if (!A)
    return llvm::Optional<float>();
  if (A->getKind() != AttrKind::Float)
    return N.error("attribute '" + Name + "' must be of kind float, got " +
                   getAttrKindName(A->getKind()));
  float V = A->getFloat();
  N.eraseAttr(Name);
  return llvm::Optional<float>(V);
}

llvm::Expected<llvm::Optional<int64_t>> takeIntAttr(PendingNode &N,
                                                    llvm::StringRef Name) {
  const Attribute *A = N.findAttr(Name);
  if (!A)
    return llvm::Optional<int64_t>();
  if (A->getKind() != AttrKind::Int)
    return N.error("attribute '" + Name + "' must be of kind int, got " +
                   getAttrKindName(A->getKind()));
  int64_t V = A->getInt();
  N.eraseAttr(Name);
  return llvm::Optional<int64_t>(V);
}

llvm::Expected<llvm::Optional<std::string>>
takeStringAttr(PendingNode &N, llvm::StringRef Name) {
  const Attribute *A = N.findAttr(Name);
  if (!A)
    return llvm::Optional<std::string>();
  if (A->getKind() != AttrKind::String)
    return N.error("attribute '" + Name + "' must be of kind string, got " +
                   getAttrKindName(A->getKind()));
  std::string V = A->getString();
  N.eraseAttr(Name);
  return llvm::Optional<std::string>(std::move(V));
}

/// Place \p V at operand \p Index, padding with missing operands.
void setOperandAt(PendingNode &N, unsigned Index, Value *V) {
  if (N.Operands.size() <= Index)
    N.Operands.resize(Index + 1, nullptr);
  N.Operands[Index] = V;
}

/// A constant named `<first result>_<Suffix>`.
std::string helperName(const PendingNode &N, llvm::StringRef Suffix) {
  for (const std::string &R : N.ResultNames)
    if (!R.empty())
      return R + "_" + Suffix.str();
  return Suffix.str();
}

/// Element type of the first operand if known, else f32 (for scalar
/// operands such as Clip bounds that must match the data type).
ElementType dataElementType(const PendingNode &N) {
  if (!N.Operands.empty() && N.Operands[0]) {
    ElementType Elt = N.Operands[0]->getType().getElementType();
    if (Elt != ElementType::Unknown)
      return Elt;
  }
  return ElementType::F32;
}

/// A rank-0 tensor of element type \p Elt holding \p V.
TensorDataRef scalarOf(ElementType Elt, double V) {
  if (Elt == ElementType::F32)
    return TensorData::fromFloat({}, {float(V)});
  if (isFloatingPoint(Elt)) {
    // Build the exact bytes for f16/bf16/f64 through the f32 value.
    std::vector<uint8_t> Bytes(getElementByteSize(Elt));
    if (Elt == ElementType::F64) {
      std::memcpy(Bytes.data(), &V, sizeof(double));
    } else {
      uint16_t H = Elt == ElementType::F16 ? floatToHalf(float(V))
                                           : floatToBfloat16(float(V));
      std::memcpy(Bytes.data(), &H, sizeof(uint16_t));
    }
    return llvm::cantFail(
        TensorData::create(TensorType::get(Elt, {}), std::move(Bytes)));
  }
  // A bound past the type's range (a float attribute such as Clip's max)
  // bounds nothing: it becomes the type's extreme.
  if (Elt != ElementType::Bool) {
    int Bits = int(getElementByteSize(Elt)) * 8;
    double Hi = std::ldexp(1.0, isUnsignedInteger(Elt) ? Bits : Bits - 1);
    double Lo = isUnsignedInteger(Elt) ? 0.0 : -Hi;
    V = std::max(Lo, std::min(V, Hi - 1));
  }
  return TensorData::fromInt64(Elt, {}, {saturatingToInt64(V)});
}

/// Move an ints attribute into operand \p Index as a 1-D i64 constant.
llvm::Error intsAttrToInput(UpgradeBuilder &B, PendingNode &N,
                            llvm::StringRef Attr, unsigned Index,
                            bool Required) {
  auto V = takeIntsAttr(N, Attr);
  if (!V)
    return V.takeError();
  if (!*V) {
    if (Required)
      return N.error("is missing required attribute '" + Attr + "'");
    return llvm::Error::success();
  }
  std::vector<int64_t> Values = std::move(**V);
  int64_t Size = int64_t(Values.size());
  auto C = B.createConstant(
      N, TensorData::fromInt64(ElementType::I64, {Size}, Values),
      helperName(N, Attr));
  if (!C)
    return C.takeError();
  setOperandAt(N, Index, *C);
  return llvm::Error::success();
}

/// Check that an attribute dropped from the op only ever had the value the
/// IR implements.
llvm::Error dropIntAttrIf(PendingNode &N, llvm::StringRef Name,
                          int64_t Accepted, llvm::StringRef Why) {
  auto V = takeIntAttr(N, Name);
  if (!V)
    return V.takeError();
  if (*V && **V != Accepted)
    return N.error("attribute '" + Name + "' = " + llvm::Twine(**V) +
                   " is not supported (" + Why + ")");
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// The rewrites
//===----------------------------------------------------------------------===//

/// Unsqueeze \p V with \p Count trailing unit dims (axes Rank..Rank+Count-1)
/// so that numpy broadcasting aligns it \p Count dims further left.
llvm::Expected<Value *> appendUnitDims(UpgradeBuilder &B, PendingNode &N,
                                       Value *V, int64_t Rank, int64_t Count,
                                       llvm::StringRef NameHint) {
  std::vector<int64_t> Axes;
  for (int64_t I = 0; I < Count; ++I)
    Axes.push_back(Rank + I);
  auto AxesC = B.createConstant(
      N, TensorData::fromInt64(ElementType::I64, {Count}, Axes),
      helperName(N, (NameHint + "_axes").str()));
  if (!AxesC)
    return AxesC.takeError();
  return B.createHelperNode(N, OpId::Unsqueeze, {V, *AxesC}, {},
                            helperName(N, NameHint));
}

llvm::Error upgradeLegacyBroadcast(UpgradeBuilder &B, PendingNode &N) {
  // Before opset 7, B broadcast onto A only with broadcast = 1: its dims
  // line up with A's from `axis`, or with A's trailing dims without one.
  auto Broadcast = takeIntAttr(N, "broadcast");
  if (!Broadcast)
    return Broadcast.takeError();
  auto Axis = takeIntAttr(N, "axis");
  if (!Axis)
    return Axis.takeError();
  if (N.Operands.size() != 2 || !N.Operands[0] || !N.Operands[1])
    return N.error("expects two inputs");
  const TensorType &ATy = N.Operands[0]->getType();
  const TensorType &BTy = N.Operands[1]->getType();
  bool Ranked = ATy.hasRank() && BTy.hasRank();
  if (Broadcast->getValueOr(0) == 0) {
    if (!Ranked)
      return llvm::Error::success();
    bool Match = ATy.getRank() == BTy.getRank();
    for (unsigned I = 0; Match && I < ATy.getRank(); ++I) {
      const Dim &DA = ATy.getDim(I), &DB = BTy.getDim(I);
      Match = !(DA.isStatic() && DB.isStatic() && DA != DB);
    }
    if (!Match)
      return N.error("operands of types " + ATy.str() + " and " + BTy.str() +
                     " differ in shape and 'broadcast' is not set");
    return llvm::Error::success();
  }
  if (!Ranked) {
    if (!*Axis)
      return llvm::Error::success(); // Trailing alignment is numpy's.
    return N.error("broadcasting at axis " + llvm::Twine(**Axis) +
                   " needs operands of known rank");
  }
  int64_t RankA = ATy.getRank(), RankB = BTy.getRank();
  if (RankB > RankA)
    return N.error("cannot broadcast " + BTy.str() + " onto " + ATy.str());
  int64_t Start = RankA - RankB;
  if (*Axis) {
    Start = **Axis < 0 ? **Axis + RankA : **Axis;
    if (Start < 0 || Start + RankB > RankA)
      return N.error("broadcast axis " + llvm::Twine(**Axis) +
                     " does not fit " + BTy.str() + " into " + ATy.str());
  }
  for (int64_t I = 0; I < RankB; ++I) {
    const Dim &DA = ATy.getDim(unsigned(Start + I));
    const Dim &DB = BTy.getDim(unsigned(I));
    if (DA.isStatic() && DB.isStatic() && DB.getSize() != 1 && DA != DB)
      return N.error("cannot broadcast " + BTy.str() + " onto " + ATy.str() +
                     " at axis " + llvm::Twine(Start));
  }
  int64_t Trailing = RankA - Start - RankB;
  if (Trailing == 0)
    return llvm::Error::success();
  auto Aligned =
      appendUnitDims(B, N, N.Operands[1], RankB, Trailing, "aligned");
  if (!Aligned)
    return Aligned.takeError();
  N.Operands[1] = *Aligned;
  return llvm::Error::success();
}

llvm::Error upgradePReluSlope(UpgradeBuilder &B, PendingNode &N) {
  // Before opset 7 the slope was one value or one value per channel (axis
  // 1); numpy broadcasting needs a per-channel slope shaped [C, 1, ...].
  if (N.Operands.size() != 2 || !N.Operands[0] || !N.Operands[1])
    return N.error("expects inputs (X, slope)");
  const TensorType &XTy = N.Operands[0]->getType();
  const TensorType &STy = N.Operands[1]->getType();
  llvm::Optional<int64_t> Count = STy.getNumElements();
  if (Count && *Count == 1 && STy.hasRank() &&
      (!XTy.hasRank() || STy.getRank() <= XTy.getRank()))
    return llvm::Error::success();
  if (!XTy.hasRank() || !STy.hasRank() || STy.getRank() != 1 ||
      XTy.getRank() < 2)
    return N.error("slope of type " + STy.str() +
                   " is neither one value nor one per channel of " + XTy.str());
  const Dim &C = XTy.getDim(1), &S = STy.getDim(0);
  if (C.isStatic() && S.isStatic() && C != S)
    return N.error("slope of type " + STy.str() +
                   " does not match the channels of " + XTy.str());
  int64_t Trailing = int64_t(XTy.getRank()) - 2;
  if (Trailing == 0)
    return llvm::Error::success();
  auto Slope = appendUnitDims(B, N, N.Operands[1], 1, Trailing, "slope");
  if (!Slope)
    return Slope.takeError();
  N.Operands[1] = *Slope;
  return llvm::Error::success();
}

llvm::Error upgradeGemmBroadcast(UpgradeBuilder &, PendingNode &N) {
  // Gemm-7 broadcasts C unidirectionally, which covers both older forms.
  auto Broadcast = takeIntAttr(N, "broadcast");
  if (!Broadcast)
    return Broadcast.takeError();
  return llvm::Error::success();
}

llvm::Error upgradeIsTest(UpgradeBuilder &, PendingNode &N) {
  // Before opset 7, is_test = 0 selected training behaviour. Normalization
  // with training outputs is handled by upgradeBatchNormOutputs.
  unsigned Results = 0;
  for (const std::string &R : N.ResultNames)
    Results += !R.empty();
  if (N.OpType == "BatchNormalization" && Results > 1) {
    N.eraseAttr("is_test");
    return llvm::Error::success();
  }
  return dropIntAttrIf(N, "is_test", 1, "training mode");
}

llvm::Error upgradeBatchNormSpatial(UpgradeBuilder &, PendingNode &N) {
  if (llvm::Error E =
          dropIntAttrIf(N, "spatial", 1, "per-activation normalization"))
    return E;
  N.eraseAttr("is_test");
  N.eraseAttr("consumed_inputs");
  return llvm::Error::success();
}

llvm::Error upgradeBatchNormOutputs(UpgradeBuilder &, PendingNode &N) {
  // Before opset 14 the optional outputs (running mean/var, saved mean/var)
  // selected training; opset 14 keeps the first two behind training_mode.
  while (!N.ResultNames.empty() && N.ResultNames.back().empty()) {
    N.ResultNames.pop_back();
    N.ResultTypes.pop_back();
  }
  if (N.ResultNames.size() > 3)
    return N.error("saved mean/variance outputs of training-mode "
                   "normalization are not supported");
  if (N.ResultNames.size() > 1)
    N.setAttr("training_mode", Attribute::getInt(1));
  return llvm::Error::success();
}

llvm::Error upgradeClip(UpgradeBuilder &B, PendingNode &N) {
  auto Min = takeFloatAttr(N, "min");
  if (!Min)
    return Min.takeError();
  auto Max = takeFloatAttr(N, "max");
  if (!Max)
    return Max.takeError();
  ElementType Elt = dataElementType(N);
  N.Operands.resize(1);
  if (*Min) {
    auto C = B.createConstant(N, scalarOf(Elt, **Min), helperName(N, "min"));
    if (!C)
      return C.takeError();
    setOperandAt(N, 1, *C);
  }
  if (*Max) {
    auto C = B.createConstant(N, scalarOf(Elt, **Max), helperName(N, "max"));
    if (!C)
      return C.takeError();
    setOperandAt(N, 2, *C);
  }
  return llvm::Error::success();
}

llvm::Error upgradeDropout(UpgradeBuilder &B, PendingNode &N) {
  N.eraseAttr("is_test");
  auto Ratio = takeFloatAttr(N, "ratio");
  if (!Ratio)
    return Ratio.takeError();
  if (*Ratio) {
    auto C = B.createConstant(N, TensorData::fromFloat({}, {**Ratio}),
                              helperName(N, "ratio"));
    if (!C)
      return C.takeError();
    setOperandAt(N, 1, *C);
  }
  return llvm::Error::success();
}

llvm::Error upgradePad(UpgradeBuilder &B, PendingNode &N) {
  if (llvm::Error E = intsAttrToInput(B, N, "pads", 1, /*Required=*/true))
    return E;
  auto Value = takeFloatAttr(N, "value");
  if (!Value)
    return Value.takeError();
  const Attribute *Mode = N.findAttr("mode");
  bool IsConstant = !Mode || (Mode->getKind() == AttrKind::String &&
                              Mode->getString() == "constant");
  if (*Value && IsConstant && **Value != 0.0f) {
    auto C = B.createConstant(N, scalarOf(dataElementType(N), **Value),
                              helperName(N, "value"));
    if (!C)
      return C.takeError();
    setOperandAt(N, 2, *C);
  }
  return llvm::Error::success();
}

llvm::Error upgradeSlice(UpgradeBuilder &B, PendingNode &N) {
  if (N.Operands.size() > 1)
    return N.error("takes its bounds as attributes before opset 10, got " +
                   llvm::Twine(unsigned(N.Operands.size())) + " inputs");
  if (llvm::Error E = intsAttrToInput(B, N, "starts", 1, /*Required=*/true))
    return E;
  if (llvm::Error E = intsAttrToInput(B, N, "ends", 2, /*Required=*/true))
    return E;
  return intsAttrToInput(B, N, "axes", 3, /*Required=*/false);
}

/// TopK-1's `k` attribute becomes TopK-10's one-element K input.
llvm::Error upgradeTopKAttr(UpgradeBuilder &B, PendingNode &N) {
  auto K = takeIntAttr(N, "k");
  if (!K)
    return K.takeError();
  if (!*K)
    return N.error("is missing required attribute 'k'");
  auto C =
      B.createConstant(N, TensorData::fromInt64(ElementType::I64, {1}, {**K}),
                       helperName(N, "k"));
  if (!C)
    return C.takeError();
  setOperandAt(N, 1, *C);
  return llvm::Error::success();
}

llvm::Error upgradeSplitSizes(UpgradeBuilder &B, PendingNode &N) {
  return intsAttrToInput(B, N, "split", 1, /*Required=*/false);
}

llvm::Error upgradeSplitCount(UpgradeBuilder &, PendingNode &N) {
  // Without sizes, older Split divides evenly into its outputs; Split-18
  // says so with num_outputs.
  if (N.Operands.size() > 1 && N.Operands[1])
    return llvm::Error::success();
  if (!N.findAttr("num_outputs"))
    N.setAttr("num_outputs", Attribute::getInt(int64_t(N.ResultNames.size())));
  return llvm::Error::success();
}

llvm::Error upgradeAxesToInput(UpgradeBuilder &B, PendingNode &N) {
  if (N.Operands.size() > 1)
    return N.error("takes 'axes' as an attribute at opset " +
                   llvm::Twine(B.getOpsetVersion()) + ", got " +
                   llvm::Twine(unsigned(N.Operands.size())) + " inputs");
  return intsAttrToInput(B, N, "axes", 1, /*Required=*/N.OpType == "Unsqueeze");
}

llvm::Error upgradeReduceAxes(UpgradeBuilder &B, PendingNode &N) {
  auto Axes = takeIntsAttr(N, "axes");
  if (!Axes)
    return Axes.takeError();
  // An empty axes list reduced everything, as a missing axes input does.
  if (!*Axes || (*Axes)->empty())
    return llvm::Error::success();
  std::vector<int64_t> Values = std::move(**Axes);
  int64_t Size = int64_t(Values.size());
  auto C = B.createConstant(
      N, TensorData::fromInt64(ElementType::I64, {Size}, Values),
      helperName(N, "axes"));
  if (!C)
    return C.takeError();
  setOperandAt(N, 1, *C);
  return llvm::Error::success();
}

llvm::Error upgradeSoftmax(UpgradeBuilder &B, PendingNode &N) {
  // Before opset 13, Softmax(axis) flattens its input to
  // [prod(d < axis), prod(d >= axis)] and normalizes over the second dim.
  auto AxisAttr = takeIntAttr(N, "axis");
  if (!AxisAttr)
    return AxisAttr.takeError();
  int64_t Axis = AxisAttr->getValueOr(1);
  if (N.Operands.empty() || !N.Operands[0])
    return N.error("is missing its input");
  Value *X = N.Operands[0];
  const TensorType &XTy = X->getType();
  bool LastAxis = Axis == -1;
  if (XTy.hasRank()) {
    int64_t Rank = XTy.getRank();
    if (Axis < -Rank || Axis >= std::max<int64_t>(Rank, 1))
      return N.error("axis " + llvm::Twine(Axis) +
                     " is out of range for rank " + llvm::Twine(Rank));
    if (Axis < 0)
      Axis += Rank;
    LastAxis = LastAxis || Axis == Rank - 1 || Rank == 0;
  }
  if (LastAxis) {
    N.setAttr("axis", Attribute::getInt(-1));
    return llvm::Error::success();
  }
  OpId Kind = N.OpType == "Softmax" ? OpId::Softmax : OpId::LogSoftmax;
  auto Flat = B.createHelperNode(N, OpId::Flatten, {X},
                                 {{"axis", Attribute::getInt(Axis)}},
                                 helperName(N, "flat"));
  if (!Flat)
    return Flat.takeError();
  auto Norm = B.createHelperNode(
      N, Kind, {*Flat}, {{"axis", Attribute::getInt(1)}}, helperName(N, "2d"));
  if (!Norm)
    return Norm.takeError();
  auto Shape =
      B.createHelperNode(N, OpId::Shape, {X}, {}, helperName(N, "shape"));
  if (!Shape)
    return Shape.takeError();
  N.OpType = "Reshape";
  N.Operands = {*Norm, *Shape};
  N.Attrs.clear();
  return llvm::Error::success();
}

/// Upsample and Resize-10 semantics in Resize-19 terms.
llvm::Error setUpsampleModes(PendingNode &N) {
  auto Mode = takeStringAttr(N, "mode");
  if (!Mode)
    return Mode.takeError();
  std::string M = Mode->getValueOr("nearest");
  if (M != "nearest" && M != "linear")
    return N.error("mode '" + M + "' is not supported");
  N.Attrs.clear();
  N.setAttr("mode", Attribute::getString(M));
  N.setAttr("coordinate_transformation_mode",
            Attribute::getString("asymmetric"));
  if (M == "nearest")
    N.setAttr("nearest_mode", Attribute::getString("floor"));
  return llvm::Error::success();
}

llvm::Error upgradeUpsample1(UpgradeBuilder &, PendingNode &N) {
  // Upsample-1 scales the last two dims of a 4-D input by height_scale and
  // width_scale; its "bilinear" is Upsample-7's "linear".
  auto Height = takeFloatAttr(N, "height_scale");
  if (!Height)
    return Height.takeError();
  auto Width = takeFloatAttr(N, "width_scale");
  if (!Width)
    return Width.takeError();
  if (!*Height || !*Width)
    return N.error("needs attributes 'height_scale' and 'width_scale'");
  if (N.findAttr("scales"))
    return N.error("has both 'scales' and 'height_scale'/'width_scale'");
  N.setAttr("scales", Attribute::getFloats({1.0f, 1.0f, **Height, **Width}));
  if (const Attribute *Mode = N.findAttr("mode"))
    if (Mode->getKind() == AttrKind::String && Mode->getString() == "bilinear")
      N.setAttr("mode", Attribute::getString("linear"));
  return llvm::Error::success();
}

llvm::Error upgradeUpsample(UpgradeBuilder &B, PendingNode &N) {
  Value *Scales = nullptr;
  if (B.getOpsetVersion() < 9) {
    auto ScalesAttr = N.findAttr("scales");
    if (!ScalesAttr)
      return N.error("is missing required attribute 'scales'");
    if (ScalesAttr->getKind() != AttrKind::Floats)
      return N.error("attribute 'scales' must be of kind floats, got " +
                     getAttrKindName(ScalesAttr->getKind()));
    std::vector<float> Values = ScalesAttr->getFloats();
    auto C = B.createConstant(
        N, TensorData::fromFloat({int64_t(Values.size())}, Values),
        helperName(N, "scales"));
    if (!C)
      return C.takeError();
    Scales = *C;
    N.eraseAttr("scales");
  } else {
    if (N.Operands.size() != 2 || !N.Operands[1])
      return N.error("expects inputs (X, scales)");
    Scales = N.Operands[1];
  }
  if (N.Operands.empty() || !N.Operands[0])
    return N.error("is missing its input");
  if (llvm::Error E = setUpsampleModes(N))
    return E;
  N.OpType = "Resize";
  N.Operands = {N.Operands[0], nullptr, Scales};
  return llvm::Error::success();
}

llvm::Error upgradeResize10(UpgradeBuilder &, PendingNode &N) {
  if (N.Operands.size() != 2 || !N.Operands[0] || !N.Operands[1])
    return N.error("expects inputs (X, scales) at opset 10");
  if (llvm::Error E = setUpsampleModes(N))
    return E;
  N.Operands = {N.Operands[0], nullptr, N.Operands[1]};
  return llvm::Error::success();
}

/// Whether \p V is a Constant with no elements.
bool isEmptyConstant(const Value *V) {
  if (!V)
    return false;
  const TensorData *D = V->getConstantData();
  return D && D->getNumElements() == 0;
}

/// The string attribute \p Name of \p N, or \p Default.
std::string getStringAttr(const PendingNode &N, llvm::StringRef Name,
                          llvm::StringRef Default) {
  const Attribute *A = N.findAttr(Name);
  return A && A->getKind() == AttrKind::String ? A->getString() : Default.str();
}

/// Resize-11's tf_half_pixel_for_nn samples input (x + 0.5) / scale, which
/// is half_pixel's coordinate y plus 0.5: nearest_mode floor of it is
/// round_prefer_ceil of y, round_prefer_floor of it is ceil of y. Those two
/// (the ones exporters write) become the newest-opset form; the others
/// have no equivalent.
llvm::Error upgradeTFHalfPixelForNN(PendingNode &N) {
  if (getStringAttr(N, "coordinate_transformation_mode", "half_pixel") !=
      "tf_half_pixel_for_nn")
    return llvm::Error::success();
  std::string Mode = getStringAttr(N, "mode", "nearest");
  std::string Nearest = getStringAttr(N, "nearest_mode", "round_prefer_floor");
  const char *Equivalent = Nearest == "floor" ? "round_prefer_ceil"
                           : Nearest == "round_prefer_floor" ? "ceil"
                                                             : nullptr;
  if (Mode != "nearest" || !Equivalent)
    return N.error("coordinate_transformation_mode 'tf_half_pixel_for_nn' "
                   "with mode '" +
                   Mode + "' and nearest_mode '" + Nearest +
                   "' is not supported (only nearest with floor or "
                   "round_prefer_floor)");
  N.setAttr("coordinate_transformation_mode",
            Attribute::getString("half_pixel"));
  N.setAttr("nearest_mode", Attribute::getString(Equivalent));
  return llvm::Error::success();
}

llvm::Error upgradeResize11(UpgradeBuilder &, PendingNode &N) {
  // roi and scales were required inputs: empty constants stood for none.
  if (llvm::Error E = upgradeTFHalfPixelForNN(N))
    return E;
  if (N.Operands.size() > 1 && isEmptyConstant(N.Operands[1]))
    N.Operands[1] = nullptr;
  if (N.Operands.size() > 3 && N.Operands[3] && isEmptyConstant(N.Operands[2]))
    N.Operands[2] = nullptr;
  return llvm::Error::success();
}

llvm::Error normalizeConstant(UpgradeBuilder &, PendingNode &N) {
  static const char *const Forms[] = {
      "value",      "value_float",  "value_floats",  "value_int",
      "value_ints", "value_string", "value_strings", "sparse_value"};
  const char *Found = nullptr;
  for (const char *F : Forms) {
    if (!N.findAttr(F))
      continue;
    if (Found)
      return N.error("has both '" + llvm::Twine(Found) + "' and '" + F + "'");
    Found = F;
  }
  if (!Found)
    return N.error("has no value");
  llvm::StringRef Form = Found;
  if (Form == "value")
    return llvm::Error::success();
  if (Form == "value_string" || Form == "value_strings")
    return N.error("string constants are not supported");
  if (Form == "sparse_value")
    return N.error("sparse constants are not supported");
  const Attribute &A = *N.findAttr(Form);
  TensorDataRef Data;
  if (Form == "value_float" && A.getKind() == AttrKind::Float) {
    Data = TensorData::fromFloat({}, {A.getFloat()});
  } else if (Form == "value_floats" && A.getKind() == AttrKind::Floats) {
    Data =
        TensorData::fromFloat({int64_t(A.getFloats().size())}, A.getFloats());
  } else if (Form == "value_int" && A.getKind() == AttrKind::Int) {
    Data = TensorData::fromInt64(ElementType::I64, {}, {A.getInt()});
  } else if (Form == "value_ints" && A.getKind() == AttrKind::Ints) {
    Data = TensorData::fromInt64(ElementType::I64,
                                 {int64_t(A.getInts().size())}, A.getInts());
  } else {
    return N.error("attribute '" + Form + "' has the wrong kind " +
                   getAttrKindName(A.getKind()));
  }
  N.eraseAttr(Form);
  N.setAttr("value", Attribute::getTensor(std::move(Data)));
  return llvm::Error::success();
}

llvm::Error normalizeCast(UpgradeBuilder &, PendingNode &N) {
  // round_mode only affects casts to float8e8m0, which the IR cannot hold.
  N.eraseAttr("round_mode");
  const Attribute *To = N.findAttr("to");
  if (!To || To->getKind() != AttrKind::Int)
    return llvm::Error::success(); // The schema check reports it.
  if (!fromOnnxDataType(int32_t(To->getInt())) ||
      To->getInt() != int64_t(int32_t(To->getInt())))
    return N.error("cast to unsupported element type " +
                   llvm::Twine(To->getInt()));
  return llvm::Error::success();
}

llvm::Error normalizeSpaceToDepth(UpgradeBuilder &, PendingNode &N) {
  auto Mode = takeStringAttr(N, "mode");
  if (!Mode)
    return Mode.takeError();
  if (*Mode && **Mode != "DCR")
    return N.error("mode '" + **Mode + "' is not supported");
  return llvm::Error::success();
}

/// GridSample-16's mode names, as opset 20 spells them.
llvm::Error upgradeGridSampleModes(UpgradeBuilder &, PendingNode &N) {
  const Attribute *Mode = N.findAttr("mode");
  if (!Mode || Mode->getKind() != AttrKind::String)
    return llvm::Error::success(); // Absent: bilinear, opset 20's linear.
  if (Mode->getString() == "bilinear")
    N.setAttr("mode", Attribute::getString("linear"));
  else if (Mode->getString() == "bicubic")
    N.setAttr("mode", Attribute::getString("cubic"));
  else if (Mode->getString() != "nearest")
    return N.error("unknown mode '" + Mode->getString() +
                   "' (expected bilinear, nearest or bicubic)");
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

using UpgradeFn = llvm::Error (*)(UpgradeBuilder &, PendingNode &);

/// Applies to models whose default opset is in [FromVersion, BeforeVersion).
struct OpsetUpgrade {
  const char *OpType;
  int64_t FromVersion;
  int64_t BeforeVersion;
  UpgradeFn Fn;
};

constexpr int64_t AllVersions = INT64_MAX;

/// Applied in order; several entries may match one node.
const OpsetUpgrade UpgradeTable[] = {
    {"Add", 0, 7, upgradeLegacyBroadcast},
    {"Sub", 0, 7, upgradeLegacyBroadcast},
    {"Mul", 0, 7, upgradeLegacyBroadcast},
    {"Div", 0, 7, upgradeLegacyBroadcast},
    {"Pow", 0, 7, upgradeLegacyBroadcast},
    {"And", 0, 7, upgradeLegacyBroadcast},
    {"Or", 0, 7, upgradeLegacyBroadcast},
    {"Xor", 0, 7, upgradeLegacyBroadcast},
    {"Equal", 0, 7, upgradeLegacyBroadcast},
    {"Greater", 0, 7, upgradeLegacyBroadcast},
    {"Less", 0, 7, upgradeLegacyBroadcast},
    {"PRelu", 0, 7, upgradePReluSlope},
    {"Gemm", 0, 7, upgradeGemmBroadcast},
    {"BatchNormalization", 0, 7, upgradeIsTest},
    {"Dropout", 0, 7, upgradeIsTest},
    {"BatchNormalization", 0, 9, upgradeBatchNormSpatial},
    {"BatchNormalization", 0, 14, upgradeBatchNormOutputs},
    {"Clip", 0, 11, upgradeClip},
    {"Dropout", 0, 12, upgradeDropout},
    {"Pad", 0, 11, upgradePad},
    {"Slice", 0, 10, upgradeSlice},
    {"Split", 0, 13, upgradeSplitSizes},
    {"TopK", 0, 10, upgradeTopKAttr},
    {"Split", 0, 18, upgradeSplitCount},
    {"Squeeze", 0, 13, upgradeAxesToInput},
    {"Unsqueeze", 0, 13, upgradeAxesToInput},
    {"ReduceSum", 0, 13, upgradeReduceAxes},
    {"ReduceMean", 0, 18, upgradeReduceAxes},
    {"ReduceMax", 0, 18, upgradeReduceAxes},
    {"ReduceMin", 0, 18, upgradeReduceAxes},
    {"ReduceProd", 0, 18, upgradeReduceAxes},
    {"ReduceL2", 0, 18, upgradeReduceAxes},
    {"ReduceSumSquare", 0, 18, upgradeReduceAxes},
    {"Softmax", 0, 13, upgradeSoftmax},
    {"LogSoftmax", 0, 13, upgradeSoftmax},
    {"Upsample", 0, 7, upgradeUpsample1},
    {"Upsample", 0, 11, upgradeUpsample},
    {"Resize", 10, 11, upgradeResize10},
    {"Resize", 11, 13, upgradeResize11},
    {"Constant", 0, AllVersions, normalizeConstant},
    {"Cast", 0, AllVersions, normalizeCast},
    {"SpaceToDepth", 0, AllVersions, normalizeSpaceToDepth},
    {"GridSample", 0, 20, upgradeGridSampleModes},
};
} // namespace

/// Ops of ONNX's default domain with a form introduced in opsets 2-6 (from
/// ONNX's operator schema history), in name order.
static const std::pair<llvm::StringLiteral, int64_t> Opset6Forms[] = {
    {"Abs", 6},
    {"Add", 6},
    {"BatchNormalization", 6},
    {"Cast", 6},
    {"Ceil", 6},
    {"Clip", 6},
    {"Concat", 4},
    {"Div", 6},
    {"Dropout", 6},
    {"Elu", 6},
    {"Exp", 6},
    {"Floor", 6},
    {"GRU", 3},
    {"Gemm", 6},
    {"GlobalLpPool", 2},
    {"HardSigmoid", 6},
    {"InstanceNormalization", 6},
    {"LeakyRelu", 6},
    {"Log", 6},
    {"LpPool", 2},
    {"Max", 6},
    {"Mean", 6},
    {"Min", 6},
    {"Mul", 6},
    {"Neg", 6},
    {"PRelu", 6},
    {"Pad", 2},
    {"Reciprocal", 6},
    {"Relu", 6},
    {"Reshape", 5},
    {"Selu", 6},
    {"Sigmoid", 6},
    {"Split", 2},
    {"Sqrt", 6},
    {"Sub", 6},
    {"Sum", 6},
    {"Tanh", 6},
    {"Tile", 6},
};

int64_t onnximport::getOpset6FormVersion(llvm::StringRef OpType) {
  const auto *It = llvm::find_if(
      Opset6Forms, [&](const auto &F) { return F.first == OpType; });
  return It == std::end(Opset6Forms) ? 1 : It->second;
}

llvm::Error onnximport::upgradeNode(UpgradeBuilder &B, PendingNode &N) {
  if (!N.Domain.empty())
    return llvm::Error::success();
  int64_t Version = B.getOpsetVersion();
  if (int64_t Since = getOpset6FormVersion(N.OpType); Version < Since)
    return N.error("opset " + llvm::Twine(Version) + " has an older form of " +
                   N.OpType + " than opset " + llvm::Twine(Since) +
                   "'s, which is not supported");
  // Match on the type the node had when read: a rewrite may change it.
  std::string OriginalType = N.OpType;
  for (const OpsetUpgrade &U : UpgradeTable) {
    if (OriginalType != U.OpType || Version < U.FromVersion ||
        Version >= U.BeforeVersion)
      continue;
    if (llvm::Error E = U.Fn(B, N))
      return E;
  }
  return llvm::Error::success();
}
