//===- LowerNormalization.cpp - Normalizations and LRN --------------------===//
//
// BatchNormalization (inference: a per-channel scale and shift with the
// group's activation), LRN, and InstanceNormalization of an f32 tensor
// stored channels-last (pixel rows of channels) or channels-first
// (contiguous planes), input and output holding the same bytes layout;
// scale and bias may be constants or activations (read when the step
// runs). The kernels are in NormalizationKernels.cpp.
//
// LayerNormalization of an f32 tensor whose normalized dims (from `axis`
// on) are its innermost ones in physical order, in any order among
// themselves: contiguous rows (scale and bias are laid out in the same
// order). Scale and B are constants, broadcast to a row at compile time;
// Mean and InvStdDev results are left to the reference kernel. The kernel
// is in ReductionKernels.cpp.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ProgramImpl.h"

#include "strider/IR/LayoutAlgebra.h"

#include <cmath>

using namespace strider;
using namespace strider::cpu;

bool cpu::lowerBatchNorm(LoweringContext &L, const Node &N,
                         const FusedTail &Tail) {
  const Value *X = N.getOperand(0);
  if (!isF32(X) || Tail.Residual || N.getIntAttr("training_mode", 0) != 0)
    return false;
  for (unsigned I = 1; I < N.getNumResults(); ++I)
    if (N.hasResult(I))
      return false;
  std::vector<float> Sc = getConstantFloats(N.getOperand(1)),
                     Bi = getConstantFloats(N.getOperand(2)),
                     Mean = getConstantFloats(N.getOperand(3)),
                     Var = getConstantFloats(N.getOperand(4));
  const TensorType &XT = X->getType(), &YT = Tail.Result->getType();
  if (Sc.empty() || Bi.empty() || Mean.empty() || Var.empty() ||
      XT.getRank() < 2 || !haveSameElementOrder(XT, YT))
    return false;
  auto Shape = XT.getStaticShape();
  const int64_t Batch = Shape[0], C = Shape[1];
  int64_t Pixels = 1;
  for (unsigned I = 2; I < Shape.size(); ++I)
    Pixels *= Shape[I];
  const ChannelOrder Order = getChannelOrder(XT);
  if (Order == ChannelOrder::Other)
    return false;
  const bool ChannelsLast = Order == ChannelOrder::Last;
  const float Eps = N.getFloatAttr("epsilon", 1e-5f);
  std::vector<float> ScaleV(static_cast<size_t>(C)), ShiftV(ScaleV.size());
  for (int64_t I = 0; I < C; ++I) {
    double A = double(Sc[size_t(I)]) / std::sqrt(double(Var[size_t(I)]) + Eps);
    ScaleV[size_t(I)] = float(A);
    ShiftV[size_t(I)] =
        float(double(Bi[size_t(I)]) - double(Mean[size_t(I)]) * A);
  }
  auto Scale = makePaddedFloats(ScaleV, C), Shift = makePaddedFloats(ShiftV, C);
  L.own(Scale);
  L.own(Shift);
  BufferId XB = L.getBuffer(X);
  const BufferId YB = L.defineOver(Tail.Result, {X}, *Tail.Last);
  const Activation Act = Tail.Act;
  const int Threads = L.getThreads();
  L.addStep({Tail.Result->getName(),
             withTail(ChannelsLast ? "batchnorm.nhwc" : "batchnorm.nchw", Tail),
             false},
            {XB}, {YB}, [=](Frame &Fr) {
              runChannelAffine(ChannelsLast, Batch, C, Pixels, Fr.f32(XB),
                               Scale->get(), Shift->get(), Act, Fr.f32(YB),
                               Threads);
            });
  return true;
}

bool cpu::lowerLRN(LoweringContext &L, const Node &N, const FusedTail &Tail) {
  const Value *X = N.getOperand(0), *Y = Tail.Result;
  if (!isF32(X) || Tail.Residual || !Tail.Act.isNone())
    return false;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const int64_t R = XT.getRank();
  if (R < 3 || !haveSameElementOrder(XT, YT))
    return false;
  std::vector<bool> Middle(size_t(R), false);
  Middle[1] = true;
  LRNParams LP;
  if (!splitAround(XT, Middle, LP.Outer, LP.Len, LP.Inner))
    return false;
  LP.Size = N.getIntAttr("size", 0);
  LP.Alpha = N.getFloatAttr("alpha", 1e-4f);
  LP.Beta = N.getFloatAttr("beta", 0.75f);
  LP.Bias = N.getFloatAttr("bias", 1.0f);
  if (LP.Size < 1)
    return false;
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(), LP.Inner == 1 ? "lrn.rows" : "lrn.strided", false},
            {XB}, {YB},
            [=](Frame &Fr) { runLRN(LP, Fr.f32(XB), Fr.f32(YB), Threads); });
  return true;
}

bool cpu::lowerInstanceNorm(LoweringContext &L, const Node &N,
                            const FusedTail &Tail) {
  if (N.getNumResults() != 1 || N.getNumOperands() != 3 || Tail.Residual ||
      !Tail.Act.isNone() || Tail.Result != N.getResult(0))
    return false;
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const Value *Scale = N.getOperand(1), *Bias = N.getOperand(2);
  for (const Value *V : {X, Y, Scale, Bias})
    if (!V || V->getType().getElementType() != ElementType::F32)
      return false;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  if (XT.getRank() < 3 || !haveSameElementOrder(XT, YT))
    return false;
  auto Shape = XT.getStaticShape();
  const int64_t Batch = Shape[0], C = Shape[1];
  for (const Value *V : {Scale, Bias})
    if (V->getType().getRank() != 1 || V->getType().getStaticShape()[0] != C)
      return false;
  int64_t Pixels = 1;
  for (unsigned I = 2; I < Shape.size(); ++I)
    Pixels *= Shape[I];
  if (Batch * C * Pixels == 0)
    return false;
  const ChannelOrder Order = getChannelOrder(XT);
  if (Order == ChannelOrder::Other)
    return false;
  const bool ChannelsLast = Order == ChannelOrder::Last;
  const float Eps = N.getFloatAttr("epsilon", 1e-5f);
  const BufferId XB = L.getBuffer(X), SB = L.getBuffer(Scale),
                 BB = L.getBuffer(Bias);
  const BufferId YB = L.defineOver(Y, {X}, N);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(),
             ChannelsLast ? "instancenorm.nhwc" : "instancenorm.nchw", false},
            {XB, SB, BB}, {YB}, [=](Frame &Fr) {
              runInstanceNorm(ChannelsLast, Batch, C, Pixels, Fr.f32(XB),
                              Fr.f32(SB), Fr.f32(BB), Eps, Fr.f32(YB), Threads);
            });
  return true;
}

/// Constant \p V (absent: \p Fill) broadcast to the normalized dims
/// \p Norm (logical shape) and laid out as one physical row: \p Order
/// lists those dims (indices into Norm) outermost first.
static bool broadcastRow(const Value *V, llvm::ArrayRef<int64_t> Norm,
                         llvm::ArrayRef<unsigned> Order, float Fill,
                         std::vector<float> &Row) {
  int64_t Len = 1;
  for (int64_t D : Norm)
    Len *= D;
  if (!V) {
    Row.assign(size_t(Len), Fill);
    return true;
  }
  std::vector<float> Data = getConstantFloats(V);
  auto Shape = V->getType().getStaticShape();
  if (Data.empty() || Shape.size() > Norm.size())
    return false;
  // Row-major strides of V over Norm's dims (0 where broadcast).
  std::vector<int64_t> Strides(Norm.size(), 0);
  int64_t S = 1;
  for (size_t I = Shape.size(); I-- > 0;) {
    size_t D = Norm.size() - Shape.size() + I;
    if (Shape[I] != 1 && Shape[I] != Norm[D])
      return false;
    Strides[D] = Shape[I] == 1 ? 0 : S;
    S *= Shape[I];
  }
  Row.resize(size_t(Len));
  std::vector<int64_t> Idx(Norm.size(), 0);
  for (int64_t E = 0; E < Len; ++E) {
    int64_t Off = 0;
    for (size_t D = 0; D < Norm.size(); ++D)
      Off += Idx[D] * Strides[D];
    Row[size_t(E)] = Data[size_t(Off)];
    for (size_t K = Order.size(); K-- > 0;) {
      if (++Idx[Order[K]] < Norm[Order[K]])
        break;
      Idx[Order[K]] = 0;
    }
  }
  return true;
}

bool cpu::lowerLayerNorm(LoweringContext &L, const Node &N,
                         const FusedTail &Tail) {
  if (Tail.Residual || !Tail.Act.isNone() || Tail.Result != N.getResult(0) ||
      N.hasResult(1) || N.hasResult(2))
    return false;
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const Value *Scale = N.getOperand(1);
  const Value *Bias = N.hasOperand(2) ? N.getOperand(2) : nullptr;
  for (const Value *V : {X, Y, Scale, Bias})
    if (V && V->getType().getElementType() != ElementType::F32)
      return false;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const int64_t R = XT.getRank();
  const int64_t Axis = codegen::getAxisAttr(N, R, -1);
  if (Axis < 0 || !haveSameElementOrder(XT, YT))
    return false;
  // The normalized dims must be the innermost ones in physical order (in
  // any order among themselves): rows of Len contiguous elements.
  auto Shape = XT.getStaticShape();
  auto Perm = XT.getLayout().getPermutation(unsigned(R));
  llvm::SmallVector<unsigned, 6> Order;
  for (unsigned P = 0; P < Perm.size(); ++P) {
    if (int64_t(Perm[P]) >= Axis)
      Order.push_back(Perm[P] - unsigned(Axis));
    else if (!Order.empty() && Shape[Perm[P]] != 1)
      return false;
  }
  llvm::ArrayRef<int64_t> Norm = llvm::makeArrayRef(Shape).drop_front(Axis);
  int64_t Len = 1;
  for (int64_t D : Norm)
    Len *= D;
  const int64_t Rows = Len ? *XT.getNumElements() / Len : 0;
  std::vector<float> Gamma, Beta;
  if (Rows * Len == 0 || !broadcastRow(Scale, Norm, Order, 1.0f, Gamma) ||
      !broadcastRow(Bias, Norm, Order, 0.0f, Beta))
    return false;
  auto GammaP = makePaddedFloats(Gamma, Len);
  auto BetaP = makePaddedFloats(Beta, Len);
  const float Eps = N.getFloatAttr("epsilon", 1e-5f);
  const BufferId XB = L.getBuffer(X);
  const BufferId YB = L.defineOver(Y, {X}, N);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(), "layernorm.rows", false}, {XB}, {YB},
            [=](Frame &Fr) {
              runLayerNorm(Rows, Len, Fr.f32(XB), GammaP->get(), BetaP->get(),
                           Eps, Fr.f32(YB), Threads);
            });
  return true;
}
