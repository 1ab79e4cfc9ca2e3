//===- LowerLogic.cpp - Comparisons, logic, Where, quantization -----------===//
//
// Equal/Less/LessOrEqual/Greater/GreaterOrEqual (f32, i32, i64 or bool
// operands), And/Or/Xor/Not, IsNaN/IsInf of f32, Where (any element
// size), Add/Sub/Mul/Div of f64 and integers, Mod (those and f32) and
// BitShift with numpy broadcasting in any layouts, and
// QuantizeLinear/DequantizeLinear between f32 and u8/i8 (i32 too for
// dequantization) with constant parameters, the lookup op (a table
// of 256 bytes, LookupKernels.cpp) and qbinary (ElementwiseKernels.cpp).
// Each function declines
// (returns false) outside the cases its kernel covers, and the node then
// runs its reference kernel.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ProgramImpl.h"

#include "strider/CodeGen/TensorGeometry.h"
#include "strider/IR/LayoutAlgebra.h"

#include <iterator>
#include <memory>

using namespace strider;
using namespace strider::cpu;

namespace {

const std::pair<OpId, CompareOp> CompareOps[] = {
    {OpId::Equal, CompareOp::Equal},
    {OpId::Less, CompareOp::Less},
    {OpId::LessOrEqual, CompareOp::LessOrEqual},
    {OpId::Greater, CompareOp::Greater},
    {OpId::GreaterOrEqual, CompareOp::GreaterOrEqual},
    {OpId::And, CompareOp::And},
    {OpId::Or, CompareOp::Or},
    {OpId::Xor, CompareOp::Xor},
};

const std::pair<ElementType, CompareType> CompareTypes[] = {
    {ElementType::F32, CompareType::F32},
    {ElementType::I32, CompareType::I32},
    {ElementType::I64, CompareType::I64},
    {ElementType::Bool, CompareType::Bool},
};

/// The result's physical shape and each operand's strides into it; false
/// past rank 6.
bool getBroadcastParams(const Node &N, BroadcastParams &P) {
  const TensorType &YT = N.getResult(0)->getType();
  if (YT.getRank() > 6 || N.getNumOperands() > 3)
    return false;
  P.Rank = int(YT.getRank());
  getPhysicalShape(YT, P.Shape);
  for (unsigned K = 0; K < N.getNumOperands(); ++K) {
    if (!N.hasOperand(K))
      return false;
    getBroadcastStrides(N.getOperand(K)->getType(), YT, P.Strides[K]);
  }
  return true;
}

std::vector<BufferId> getOperandBuffers(LoweringContext &L, const Node &N) {
  std::vector<BufferId> Reads;
  for (const Value *Op : N.getOperands())
    Reads.push_back(L.getBuffer(Op));
  return Reads;
}

const std::pair<OpId, ArithOp> ArithOps[] = {
    {OpId::Add, ArithOp::Add},
    {OpId::Sub, ArithOp::Sub},
    {OpId::Mul, ArithOp::Mul},
    {OpId::Div, ArithOp::Div},
    {OpId::Mod, ArithOp::Mod},            // FMod with fmod = 1.
    {OpId::BitShift, ArithOp::ShiftLeft}, // ShiftRight for direction RIGHT.
    {OpId::Max, ArithOp::Max},            // Of integers.
    {OpId::Min, ArithOp::Min},
};

/// f32 comes here only for what the SIMD binaries lack (Mod).
const std::pair<ElementType, ArithType> ArithTypes[] = {
    {ElementType::F32, ArithType::F32}, {ElementType::F64, ArithType::F64},
    {ElementType::I32, ArithType::I32}, {ElementType::I64, ArithType::I64},
    {ElementType::U8, ArithType::U8},   {ElementType::U16, ArithType::U16},
    {ElementType::U32, ArithType::U32}, {ElementType::U64, ArithType::U64},
};

/// The kernel operation of \p N, its attributes read.
llvm::Optional<ArithOp> getArithOp(const Node &N) {
  const auto *OpIt = llvm::find_if(
      ArithOps, [&](const auto &E) { return E.first == N.getOpId(); });
  if (OpIt == std::end(ArithOps))
    return llvm::None;
  if (N.getOpId() == OpId::Mod && N.getIntAttr("fmod", 0) != 0)
    return ArithOp::FMod;
  if (N.getOpId() == OpId::BitShift &&
      N.getStringAttr("direction", "") == "RIGHT")
    return ArithOp::ShiftRight;
  return OpIt->second;
}

} // namespace

bool cpu::lowerArith(LoweringContext &L, const Node &N, const FusedTail &Tail) {
  const llvm::Optional<ArithOp> Op = getArithOp(N);
  if (!Op || N.getNumOperands() != 2 || !N.hasOperand(0) || !N.hasOperand(1) ||
      Tail.Residual || !Tail.Act.isNone())
    return false;
  ElementType Elt = N.getResult(0)->getType().getElementType();
  const auto *TypeIt =
      llvm::find_if(ArithTypes, [&](const auto &E) { return E.first == Elt; });
  if (TypeIt == std::end(ArithTypes) ||
      N.getOperand(0)->getType().getElementType() != Elt ||
      N.getOperand(1)->getType().getElementType() != Elt)
    return false;
  BroadcastParams BP;
  if (!getBroadcastParams(N, BP))
    return false;
  std::vector<BufferId> Reads = getOperandBuffers(L, N);
  BufferId YB = L.defineBuffer(N.getResult(0));
  const ArithType Type = TypeIt->second;
  // f32 arithmetic belongs to the SIMD binaries; Max and Min here are
  // the integers' (a float's NaN rules are the binaries').
  if ((Type == ArithType::F32 && *Op != ArithOp::Mod && *Op != ArithOp::FMod) ||
      ((*Op == ArithOp::Max || *Op == ArithOp::Min) &&
       (Type == ArithType::F32 || Type == ArithType::F64)))
    return false;
  const int Threads = L.getThreads();
  L.addStep(
      {N.getResult(0)->getName(),
       "arith." + N.getOpType().lower() + "." + getElementTypeName(Elt).str(),
       false},
      Reads, {YB}, [=](Frame &Fr) {
        runArith(*Op, Type, BP, Fr.bytes(Reads[0]), Fr.bytes(Reads[1]),
                 Fr.bytes(YB), Threads);
      });
  return true;
}

bool cpu::lowerCompare(LoweringContext &L, const Node &N, const FusedTail &) {
  const auto *OpIt = llvm::find_if(
      CompareOps, [&](const auto &E) { return E.first == N.getOpId(); });
  if (OpIt == std::end(CompareOps) || N.getNumOperands() != 2 ||
      !N.hasOperand(0) || !N.hasOperand(1))
    return false;
  ElementType Elt = N.getOperand(0)->getType().getElementType();
  const auto *TypeIt = llvm::find_if(
      CompareTypes, [&](const auto &E) { return E.first == Elt; });
  if (TypeIt == std::end(CompareTypes) ||
      N.getOperand(1)->getType().getElementType() != Elt ||
      N.getResult(0)->getType().getElementType() != ElementType::Bool)
    return false;
  BroadcastParams BP;
  if (!getBroadcastParams(N, BP))
    return false;
  std::vector<BufferId> Reads = getOperandBuffers(L, N);
  BufferId YB = L.defineBuffer(N.getResult(0));
  const CompareOp Op = OpIt->second;
  const CompareType Type = TypeIt->second;
  const int Threads = L.getThreads();
  L.addStep(
      {N.getResult(0)->getName(),
       "compare." + N.getOpType().lower() + "." + getElementTypeName(Elt).str(),
       false},
      Reads, {YB}, [=](Frame &Fr) {
        runCompare(Op, Type, BP, Fr.bytes(Reads[0]), Fr.bytes(Reads[1]),
                   Fr.bytes(YB), Threads);
      });
  return true;
}

bool cpu::lowerNot(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  // Over the flat buffer: both layouts must hold the same bytes.
  if (XT.getElementType() != ElementType::Bool ||
      YT.getElementType() != ElementType::Bool || !haveSameElementOrder(XT, YT))
    return false;
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int64_t Count = *XT.getNumElements();
  L.addStep({Y->getName(), "logic.not", false}, {XB}, {YB},
            [=](Frame &Fr) { runNot(Fr.bytes(XB), Fr.bytes(YB), Count); });
  return true;
}

bool cpu::lowerClassify(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  // Over the flat buffers: both layouts must order the elements alike.
  if (XT.getElementType() != ElementType::F32 ||
      YT.getElementType() != ElementType::Bool || !haveSameElementOrder(XT, YT))
    return false;
  FloatClass Class = FloatClass::NaN;
  if (N.getOpId() == OpId::IsInf) {
    const bool Negative = N.getIntAttr("detect_negative", 1) != 0;
    const bool Positive = N.getIntAttr("detect_positive", 1) != 0;
    if (!Negative && !Positive)
      return false; // All false: the reference kernel's fill will do.
    Class = Negative && Positive ? FloatClass::Inf
            : Positive           ? FloatClass::PosInf
                                 : FloatClass::NegInf;
  }
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int64_t Count = *XT.getNumElements();
  L.addStep(
      {Y->getName(), "logic." + N.getOpType().lower(), false}, {XB}, {YB},
      [=](Frame &Fr) { runClassify(Class, Fr.f32(XB), Fr.bytes(YB), Count); });
  return true;
}

/// The constant parameters of quantization node \p N (scale, optional
/// zero point) for x of type \p XT, read in x's physical order; false
/// when they are not constants of a supported form.
static bool getQuantParams(const Node &N, const TensorType &XT,
                           QuantParams &Q) {
  const int64_t R = XT.getRank();
  int64_t Axis = N.getIntAttr("axis", 1);
  if (Axis < 0)
    Axis += R;
  int64_t Channels = 1;
  for (unsigned K = 1; K < 3; ++K) {
    if (!N.hasOperand(K))
      continue;
    const TensorData *D = N.getOperand(K)->getConstantData();
    if (!D)
      return false;
    const int64_t Count = D->getNumElements();
    if (Count != 1) {
      if (Axis < 0 || Axis >= R || (Channels != 1 && Channels != Count))
        return false;
      Channels = Count;
    }
    for (int64_t I = 0; I < Count; ++I)
      K == 1 ? Q.Scales.push_back(float(D->getDouble(I)))
             : Q.Zeros.push_back(int32_t(D->getInt(I)));
  }
  if (Q.Zeros.empty())
    Q.Zeros.push_back(0);
  Q.Scales.resize(size_t(Channels), Q.Scales[0]);
  Q.Zeros.resize(size_t(Channels), Q.Zeros[0]);
  Q.Channels = Channels;
  if (Channels == 1)
    return true;
  // The axis's run length: the physical dims after it.
  Q.Stride = 1;
  bool After = false;
  for (unsigned D : XT.getLayout().getPermutation(unsigned(R))) {
    if (After)
      Q.Stride *= XT.getShape()[D].getSize();
    After |= int64_t(D) == Axis;
  }
  return XT.getShape()[size_t(Axis)].getSize() == Channels;
}

/// Whether quantization parameters \p K of \p N (1: scale, 2: zero point)
/// are one element each, computed at run time (DynamicQuantizeLinear's),
/// of the types the kernels take: f32 scale, zero point of x's or y's
/// quantized type \p QE.
static bool hasRuntimeScalarParams(const Node &N, ElementType QE) {
  for (unsigned K = 1; K < 3; ++K) {
    if (!N.hasOperand(K))
      continue;
    const TensorType &T = N.getOperand(K)->getType();
    if (T.getNumElements() != int64_t(1) ||
        T.getElementType() != (K == 1 ? ElementType::F32 : QE))
      return false;
  }
  return true;
}

bool cpu::lowerQuantize(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const bool Quantize = N.getOpId() == OpId::QuantizeLinear;
  const ElementType QE = Quantize ? YT.getElementType() : XT.getElementType();
  static const std::pair<ElementType, QuantType> Types[] = {
      {ElementType::U8, QuantType::U8},
      {ElementType::I8, QuantType::I8},
      {ElementType::I32, QuantType::I32}};
  const auto *TypeIt =
      llvm::find_if(Types, [&](const auto &E) { return E.first == QE; });
  if (TypeIt == std::end(Types) || (Quantize && QE == ElementType::I32) ||
      (Quantize ? XT : YT).getElementType() != ElementType::F32 ||
      !XT.hasStaticShape() || !codegen::haveSameElementOrder(XT, YT))
    return false;
  auto Q = std::make_shared<QuantParams>();
  // Constant parameters are read once; one-element ones computed at run
  // time (dynamic quantization) are read by each run.
  const bool Runtime = !getQuantParams(N, XT, *Q);
  if (Runtime && !hasRuntimeScalarParams(N, QE))
    return false;
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  BufferId SB = -1, ZB = -1;
  std::vector<BufferId> Reads{XB};
  if (Runtime) {
    SB = L.getBuffer(N.getOperand(1));
    Reads.push_back(SB);
    if (N.hasOperand(2)) {
      ZB = L.getBuffer(N.getOperand(2));
      Reads.push_back(ZB);
    }
  }
  const int64_t Count = *XT.getNumElements();
  const int Threads = L.getThreads();
  const QuantType Type = TypeIt->second;
  const std::string Kernel =
      std::string(Quantize ? "quantize." : "dequantize.") +
      getElementTypeName(QE).str() + (Q->Channels > 1 ? ".per_axis" : "");
  L.addStep({Y->getName(), Kernel, false}, Reads, {YB}, [=](Frame &Fr) {
    QuantParams Now;
    const QuantParams *P = Q.get();
    if (Runtime) {
      Now.Scales.push_back(Fr.f32(SB)[0]);
      int32_t Zero = 0;
      if (ZB >= 0) {
        const void *Z = Fr.bytes(ZB);
        Zero = Type == QuantType::U8   ? *static_cast<const uint8_t *>(Z)
               : Type == QuantType::I8 ? *static_cast<const int8_t *>(Z)
                                       : *static_cast<const int32_t *>(Z);
      }
      Now.Zeros.push_back(Zero);
      P = &Now;
    }
    if (Quantize)
      runQuantize(*P, Type == QuantType::I8, Fr.f32(XB), Fr.bytes(YB), Count,
                  Threads);
    else
      runDequantize(*P, Type, Fr.bytes(XB), Fr.f32(YB), Count, Threads);
  });
  return true;
}

/// qbinary with constant parameters in one pass over the bytes
/// (runQBinary: each step as the QuantizeLinear and DequantizeLinear
/// kernels compute it, so the same bits as the three ops).
bool cpu::lowerQBinary(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *A = N.getOperand(0), *B = N.getOperand(3), *Y = N.getResult(0);
  const TensorType &AT = A->getType(), &BT = B->getType(), &YT = Y->getType();
  if (!AT.hasStaticShape() || !codegen::haveSameElementOrder(AT, BT) ||
      !codegen::haveSameElementOrder(AT, YT))
    return false;
  float Params[8] = {};
  for (unsigned I : {1u, 2u, 4u, 5u, 6u, 7u}) {
    const TensorData *D = N.getOperand(I)->getConstantData();
    if (!D || D->getNumElements() != 1)
      return false;
    Params[I] = float(D->getDouble(0));
  }
  QBinaryParams P;
  P.AScale = Params[1];
  P.AZero = Params[2];
  P.BScale = Params[4];
  P.BZero = Params[5];
  P.YScale = Params[6];
  P.YZero = Params[7];
  P.Mul = N.getStringAttr("op", "") == "Mul";
  P.ASigned = AT.getElementType() == ElementType::I8;
  P.BSigned = BT.getElementType() == ElementType::I8;
  P.YSigned = YT.getElementType() == ElementType::I8;
  BufferId AB = L.getBuffer(A), BB = L.getBuffer(B), YB = L.defineBuffer(Y);
  const int64_t Count = *AT.getNumElements();
  const int Threads = L.getThreads();
  L.addStep({Y->getName(),
             std::string("qbinary.") + (P.Mul ? "mul." : "add.") +
                 getElementTypeName(YT.getElementType()).str(),
             false, Count},
            {AB, BB}, {YB}, [=](Frame &Fr) {
              runQBinary(P, Fr.bytes(AB), Fr.bytes(BB), Fr.bytes(YB), Count,
                         Threads);
            });
  return true;
}

bool cpu::lowerWhere(LoweringContext &L, const Node &N, const FusedTail &) {
  if (N.getNumOperands() != 3 || !N.hasOperand(0) || !N.hasOperand(1) ||
      !N.hasOperand(2))
    return false;
  const ElementType Elt = N.getResult(0)->getType().getElementType();
  const unsigned Bytes = getElementByteSize(Elt);
  if (N.getOperand(0)->getType().getElementType() != ElementType::Bool ||
      N.getOperand(1)->getType().getElementType() != Elt ||
      N.getOperand(2)->getType().getElementType() != Elt ||
      !isCopyableSize(Bytes))
    return false;
  BroadcastParams BP;
  if (!getBroadcastParams(N, BP))
    return false;
  std::vector<BufferId> Reads = getOperandBuffers(L, N);
  BufferId YB = L.defineBuffer(N.getResult(0));
  const int Threads = L.getThreads();
  L.addStep({N.getResult(0)->getName(),
             "where." + getElementTypeName(Elt).str(), false},
            Reads, {YB}, [=](Frame &Fr) {
              runWhere(Bytes, BP, Fr.bytes(Reads[0]), Fr.bytes(Reads[1]),
                       Fr.bytes(Reads[2]), Fr.bytes(YB), Threads);
            });
  return true;
}

/// lookup over the flat buffer (both layouts hold the same bytes), the
/// table (a constant) read in place.
bool cpu::lowerLookup(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0);
  const TensorData *Table = N.getOperand(1)->getConstantData();
  const TensorType &XT = X->getType(), &YT = N.getResult(0)->getType();
  if (!Table || Table->getNumElements() != 256 || !XT.hasStaticShape() ||
      !haveSameElementOrder(XT, YT))
    return false;
  auto Bytes = std::make_shared<std::vector<uint8_t>>(Table->getBytes().begin(),
                                                      Table->getBytes().end());
  const uint8_t *T = L.own(Bytes)->data();
  const BufferId XB = L.getBuffer(X);
  const BufferId YB = L.defineOver(N.getResult(0), {X}, N);
  const uint8_t Flip = XT.getElementType() == ElementType::I8 ? 0x80 : 0;
  const int64_t Count = *XT.getNumElements();
  const int Threads = L.getThreads();
  L.addStep({N.getResult(0)->getName(), "lookup", false}, {XB}, {YB},
            [=](Frame &Fr) {
              runLookup(T, Fr.bytes(XB), Flip, Fr.bytes(YB), Count, Threads);
            });
  return true;
}
