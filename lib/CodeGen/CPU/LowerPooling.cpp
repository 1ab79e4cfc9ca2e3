//===- LowerPooling.cpp - Max, average and global pooling -----------------===//
//
// MaxPool, AveragePool and the global pools of f32 tensors in either
// layout (PoolingKernels.cpp): windows over channels-last pixel rows or
// channels-first planes.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ProgramImpl.h"

#include "strider/IR/WindowGeometry.h"

using namespace strider;
using namespace strider::cpu;

bool cpu::lowerPool(LoweringContext &L, const Node &N, const FusedTail &Tail) {
  const Value *X = N.getOperand(0);
  // MaxPool's Indices result has no kernel; MaxPool of u8 and i8 has a
  // scalar one (a quantized model's).
  const ElementType Elt = X->getType().getElementType();
  const bool Bytes = Elt == ElementType::U8 || Elt == ElementType::I8;
  if (!(isF32(X) || (Bytes && N.getOpId() == OpId::MaxPool)) ||
      N.hasResult(1) || Tail.Residual || !Tail.Act.isNone())
    return false;
  const TensorType &XT = X->getType(), &YT = N.getResult(0)->getType();
  const unsigned Rank = XT.getRank();
  if (Rank < 3 || Rank > 5 || YT.getRank() != Rank)
    return false;
  auto XShape = XT.getStaticShape(), YShape = YT.getStaticShape();
  auto Axes =
      resolveWindow(N, llvm::makeArrayRef(XShape).drop_front(2), llvm::None);
  if (!Axes) {
    llvm::consumeError(Axes.takeError());
    return false;
  }
  auto XS = getStrides(XT), YS = getStrides(YT);
  PoolParams PP;
  PP.Max = N.getOpId() == OpId::MaxPool;
  PP.CountPad = !PP.Max && N.getIntAttr("count_include_pad", 0) != 0;
  PP.Channels = XShape[1];
  PP.XC = XS[1];
  PP.YC = YS[1];
  const unsigned Sp = Rank - 2, Off = 3 - Sp;
  for (unsigned I = 0; I < Sp; ++I) {
    const WindowAxis &A = (*Axes)[I];
    const unsigned D = Off + I;
    if (A.Out != YShape[2 + I])
      return false;
    PP.In[D] = A.In;
    PP.Out[D] = A.Out;
    PP.Kernel[D] = A.Kernel;
    PP.Stride[D] = A.Stride;
    PP.Dilation[D] = A.Dilation;
    PP.PadBegin[D] = A.PadBegin;
    PP.PadEnd[D] = A.PadEnd;
    PP.XS[D] = XS[2 + I];
    PP.YS[D] = YS[2 + I];
  }
  // 8-bit: kernels of at most 64 taps per axis (the scalar kernel's
  // tables).
  if (Bytes && llvm::any_of(PP.Kernel, [](int64_t K) { return K > 64; }))
    return false;
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Tail.Result);
  const int64_t Batch = XShape[0], XBS = XS[0], YBS = YS[0];
  const int Threads = L.getThreads();
  if (Bytes) {
    const bool Signed = Elt == ElementType::I8;
    L.addStep({Tail.Result->getName(),
               std::string("pool.max") +
                   (PP.channelsLast() ? ".nhwc." : ".nchw.") +
                   getElementTypeName(Elt).str(),
               false},
              {XB}, {YB}, [=](Frame &Fr) {
                for (int64_t B = 0; B < Batch; ++B) {
                  uint8_t *In = Fr.bytes(XB) + B * XBS,
                          *Out = Fr.bytes(YB) + B * YBS;
                  if (Signed)
                    runMaxPool(PP, reinterpret_cast<const int8_t *>(In),
                               reinterpret_cast<int8_t *>(Out), Threads);
                  else
                    runMaxPool(PP, In, Out, Threads);
                }
              });
    return true;
  }
  L.addStep({Tail.Result->getName(),
             std::string(PP.Max ? "pool.max" : "pool.average") +
                 (PP.channelsLast() ? ".nhwc" : ".nchw"),
             false},
            {XB}, {YB}, [=](Frame &Fr) {
              for (int64_t B = 0; B < Batch; ++B)
                runPool(PP, Fr.f32(XB) + B * XBS, Fr.f32(YB) + B * YBS,
                        Threads);
            });
  return true;
}

bool cpu::lowerGlobalPool(LoweringContext &L, const Node &N,
                          const FusedTail &Tail) {
  const Value *X = N.getOperand(0);
  if (!isF32(X) || Tail.Residual || !Tail.Act.isNone())
    return false;
  const TensorType &XT = X->getType(), &YT = N.getResult(0)->getType();
  unsigned Rank = XT.getRank();
  if (Rank < 3)
    return false;
  auto XS = getStrides(XT), YS = getStrides(YT);
  auto Shape = XT.getStaticShape();
  // Spatial dims must nest into one pixel stride.
  for (unsigned I = 2; I + 1 < Rank; ++I)
    if (XS[I] != XS[I + 1] * Shape[I + 1])
      return false;
  int64_t Pixels = 1;
  for (unsigned I = 2; I < Rank; ++I)
    Pixels *= Shape[I];
  const bool Max = N.getOpId() == OpId::GlobalMaxPool;
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Tail.Result);
  const int64_t Batch = Shape[0], C = Shape[1], PS = XS[Rank - 1], CS = XS[1],
                XBS = XS[0], YBS = YS[0], YCS = YS[1];
  const int Threads = L.getThreads();
  L.addStep({Tail.Result->getName(),
             std::string(Max ? "pool.global_max" : "pool.global_average") +
                 (CS == 1 ? ".nhwc" : ".nchw"),
             false},
            {XB}, {YB}, [=](Frame &Fr) {
              for (int64_t B = 0; B < Batch; ++B)
                runGlobalPool(Max, Pixels, C, PS, CS, Fr.f32(XB) + B * XBS,
                              Fr.f32(YB) + B * YBS, YCS, Threads);
            });
  return true;
}
