//===- LowerResample.cpp - Resize and GridSample --------------------------===//
//
// Resize (nearest, linear and cubic; tap tables per spatial axis built
// at compile time, ResampleKernels.cpp) in either layout, of f32 tensors,
// and of any element type where each output element copies one input
// element (a quantized model's nearest upsampling of u8); GridSample of
// f32 tensors.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ProgramImpl.h"

#include "strider/Runtime/ResizeSampling.h"

#include <algorithm>
#include <memory>

using namespace strider;
using namespace strider::cpu;

bool cpu::lowerResize(LoweringContext &L, const Node &N,
                      const FusedTail &Tail) {
  const Value *X = N.getOperand(0), *Y = Tail.Result;
  if (Tail.Residual || !Tail.Act.isNone())
    return false;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  // Other element types (a quantized model's u8) only where every output
  // element copies one input element.
  const bool F32 = isF32(X);
  const unsigned Bytes = getElementByteSize(XT.getElementType());
  if (!F32 && (Bytes == 0 || XT.getElementType() != YT.getElementType()))
    return false;
  const unsigned Rank = XT.getRank();
  // An empty result (the reference kernel writes nothing) has no sampling
  // worth building: its other dims' tables could pass any tensor's size.
  if (Rank < 3 || Rank > 5 || YT.getNumElements().getValueOr(0) == 0)
    return false;
  // The roi, scales and sizes operands must be constants (or absent).
  std::vector<runtime::Tensor> Ops(4);
  const runtime::Tensor *Ptrs[4] = {nullptr, nullptr, nullptr, nullptr};
  for (unsigned I = 1; I < 4 && I < N.getNumOperands(); ++I) {
    if (!N.hasOperand(I))
      continue;
    const TensorData *D = N.getOperand(I)->getConstantData();
    if (!D)
      return false;
    if (D->getNumElements() == 0)
      continue;
    Ops[I] = runtime::Tensor::fromData(*D);
    Ptrs[I] = &Ops[I];
  }
  auto XShape = XT.getStaticShape(), YShape = YT.getStaticShape();
  auto Sampling = runtime::computeResizeSampling(N, XShape, YShape, Ptrs[1],
                                                 Ptrs[2], Ptrs[3]);
  if (!Sampling) {
    llvm::consumeError(Sampling.takeError()); // The reference reports it.
    return false;
  }
  // Batch and channels must be copied through (the same sizes, one tap of
  // weight 1 at the same index), nothing extrapolated. (A channel count
  // resized from 65 to 1 has that one tap: the lowering fuzzer found the
  // kernel writing 65 channels into the result's one.)
  if (XShape[0] != YShape[0] || XShape[1] != YShape[1])
    return false;
  for (unsigned D = 0; D < Rank; ++D) {
    const runtime::ResizeAxis &A = Sampling->Axes[D];
    for (size_t O = 0; O < A.Taps.size(); ++O) {
      if (A.Extrapolated[O])
        return false;
      const bool Copy = A.Taps[O].size() == 1 && A.Taps[O][0].Weight == 1.0;
      if (D < 2 && (!Copy || A.Taps[O][0].Index != int64_t(O)))
        return false;
      if (!F32 && !Copy)
        return false;
    }
  }
  auto XS = getStrides(XT), YS = getStrides(YT);
  // Written straight into the Concat that reads the result (a UNet's
  // upsampling), at its offset and with its strides.
  auto Slot = L.findConcatSlot(Y);
  int64_t YOffset = 0;
  if (Slot) {
    YS.assign(Slot->Strides.begin(), Slot->Strides.end());
    YOffset = Slot->Offset;
  }
  // Channels-last: each output pixel is a weighted sum of channel vectors.
  // Any other layout: each channel is an image of one channel, sampled
  // through the same pixel offsets.
  const bool ChannelsLast = XS[1] == 1 && YS[1] == 1;
  auto Params = std::make_shared<ResampleParams>();
  Params->Channels = ChannelsLast ? XShape[1] : 1;
  const unsigned Off = 3 - (Rank - 2);
  for (unsigned I = 0; I < 3; ++I) {
    ResampleAxis &A = Params->Axes[I];
    if (I < Off) {
      A.Begin = {0, 1};
      A.Offset = {0};
      A.Weight = {1.0f};
      continue;
    }
    const unsigned D = 2 + I - Off;
    Params->Out[I] = YShape[D];
    Params->YS[I] = YS[D];
    A.Begin.push_back(0);
    for (const auto &Taps : Sampling->Axes[D].Taps) {
      for (const runtime::ResizeTap &T : Taps) {
        A.Offset.push_back(T.Index * XS[D]);
        A.Weight.push_back(float(T.Weight));
      }
      A.Begin.push_back(int64_t(A.Offset.size()));
    }
  }
  L.own(Params);
  BufferId XB = L.getBuffer(X);
  BufferId YB = Slot ? L.useConcatSlot(Y, *Slot) : L.defineBuffer(Y);
  const int64_t Batch = XShape[0], XBS = XS[0], YBS = YS[0];
  const int64_t Planes = ChannelsLast ? 1 : XShape[1];
  const int64_t XCS = XS[1], YCS = YS[1];
  const int Threads = L.getThreads();
  if (!F32) {
    L.addStep({Y->getName(),
               std::string(ChannelsLast ? "resize.nhwc." : "resize.planes.") +
                   getElementTypeName(XT.getElementType()).str(),
               false},
              {XB}, {YB}, [=](Frame &Fr) {
                for (int64_t B = 0; B < Batch; ++B)
                  for (int64_t C = 0; C < Planes; ++C)
                    runResampleCopy(
                        *Params, Fr.bytes(XB) + (B * XBS + C * XCS) * Bytes,
                        Fr.bytes(YB) + (YOffset + B * YBS + C * YCS) * Bytes,
                        Bytes, Threads);
              });
    return true;
  }
  L.addStep(
      {Y->getName(), ChannelsLast ? "resize.nhwc" : "resize.planes", false},
      {XB}, {YB}, [=](Frame &Fr) {
        for (int64_t B = 0; B < Batch; ++B)
          for (int64_t C = 0; C < Planes; ++C)
            runResampleChannelsLast(*Params, Fr.f32(XB) + B * XBS + C * XCS,
                                    Fr.f32(YB) + YOffset + B * YBS + C * YCS,
                                    Threads);
      });
  return true;
}

bool cpu::lowerGridSample(LoweringContext &L, const Node &N,
                          const FusedTail &Tail) {
  const Value *X = N.getOperand(0), *G = N.getOperand(1), *Y = Tail.Result;
  if (!isF32(X) || !isF32(G) || Tail.Residual || !Tail.Act.isNone())
    return false;
  const TensorType &XT = X->getType(), &GT = G->getType(), &YT = Y->getType();
  if (XT.getRank() != 4 || !GT.getLayout().isIdentity() ||
      !XT.hasStaticShape() || !YT.hasStaticShape())
    return false;
  auto Opts = runtime::getGridSampleOptions(N);
  if (!Opts) {
    llvm::consumeError(Opts.takeError()); // The reference reports it.
    return false;
  }
  auto P = std::make_shared<GridSampleParams>();
  P->Opts = *Opts;
  auto XShape = XT.getStaticShape(), YShape = YT.getStaticShape();
  P->N = XShape[0];
  P->C = XShape[1];
  P->H = XShape[2];
  P->W = XShape[3];
  P->OH = YShape[2];
  P->OW = YShape[3];
  // Any layouts of X and Y: their strides in logical dim order.
  auto XS = getStrides(XT), YS = getStrides(YT);
  std::copy(XS.begin(), XS.end(), P->XS);
  std::copy(YS.begin(), YS.end(), P->YS);
  L.own(P);
  BufferId XB = L.getBuffer(X), GB = L.getBuffer(G), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  L.addStep({Y->getName(), "grid_sample", false}, {XB, GB}, {YB},
            [=](Frame &Fr) {
              runGridSample(*P, Fr.f32(XB), Fr.f32(GB), Fr.f32(YB), Threads);
            });
  return true;
}
