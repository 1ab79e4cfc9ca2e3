//===- LowerNormalization.cpp - InstanceNormalization ---------------------===//
//
// InstanceNormalization of an f32 tensor stored channels-last (pixel rows
// of channels) or channels-first (contiguous planes), input and output
// holding the same bytes layout; scale and bias may be constants or
// activations (read when the step runs). The kernel is in
// NormalizationKernels.cpp.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ProgramImpl.h"

#include "strider/Layout/CostModel.h"

using namespace strider;
using namespace strider::cpu;

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
  if (XT.getRank() < 3 || XT.getShape() != YT.getShape() ||
      !layout::areLayoutsEquivalent(XT.getShape(), XT.getLayout(),
                                    YT.getLayout(), layout::DimBindings()))
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
  ProgramImpl *P = &L.getProgram();
  const BufferId XB = L.getBuffer(X), SB = L.getBuffer(Scale),
                 BB = L.getBuffer(Bias);
  BufferId YB;
  if (XT == YT && L.canOverwrite(X, L.getNodeIndex(&N))) {
    L.alias(Y, X);
    YB = XB;
  } else {
    YB = L.defineBuffer(Y);
  }
  const int Threads = L.getThreads();
  L.addStep({Y->getName(),
             ChannelsLast ? "instancenorm.nhwc" : "instancenorm.nchw", false},
            {XB, SB, BB}, {YB}, [=]() {
              runInstanceNorm(ChannelsLast, Batch, C, Pixels, P->f32(XB),
                              P->f32(SB), P->f32(BB), Eps, P->f32(YB), Threads);
            });
  return true;
}
