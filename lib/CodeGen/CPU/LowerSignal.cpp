//===- LowerSignal.cpp - STFT on the CPU backend --------------------------===//
//
// STFT of a real f32 signal with constant frame_step, frame length and
// window (or none): one GEMM over every frame of every batch. Frame rows
// are read in place (frame f of batch b starts at sample f * step of the
// batch's signal; rows overlap where the step is shorter than a frame), B
// is the windowed DFT basis (codegen::getDFTBasis) packed at compile time,
// and C is the result, whose [re, im] pairs of bin k are
// columns 2k and 2k + 1 of a frame's row. Complex signals, or a step,
// length or window known only at run time, run on the reference kernel.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"
#include "ProgramImpl.h"

#include "strider/CodeGen/Signal.h"

using namespace strider;
using namespace strider::cpu;

namespace {

/// The packed basis and the GEMM's row geometry.
struct STFTPlan {
  PackedOperand Basis;
  int64_t Batch = 1, Frames = 1, Length = 1, Columns = 2;
  int64_t SignalStride = 0, Step = 1; ///< Elements per batch, per frame.
  int64_t ResultRowStride = 0;
};

/// The one integer of constant \p V, or -1.
int64_t getConstantInt(const Value *V) {
  const TensorData *D = V ? V->getConstantData() : nullptr;
  return D && D->getNumElements() == 1 ? D->getInt(0) : -1;
}

} // namespace

bool cpu::lowerSTFT(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  if (XT.getElementType() != ElementType::F32 ||
      (XT.getRank() != 3 && XT.getRank() != 2) || YT.getRank() != 4 ||
      !XT.hasStaticShape() || !YT.hasStaticShape())
    return false;
  auto XShape = XT.getStaticShape(), YShape = YT.getStaticShape();
  const Value *WindowV = N.hasOperand(2) ? N.getOperand(2) : nullptr;
  std::vector<float> Window;
  if (WindowV) {
    Window = getConstantFloats(WindowV);
    if (Window.empty())
      return false;
  }
  const int64_t Step = getConstantInt(N.getOperand(1));
  const int64_t Length = N.hasOperand(3) ? getConstantInt(N.getOperand(3))
                                         : int64_t(Window.size());
  if ((XShape.size() == 3 && XShape[2] != 1) || Step < 1 || Length < 1 ||
      (WindowV && int64_t(Window.size()) != Length) || XShape[1] < Length)
    return false;
  auto Plan = std::make_shared<STFTPlan>();
  Plan->Batch = XShape[0];
  Plan->Frames = YShape[1];
  Plan->Length = Length;
  Plan->Columns = 2 * YShape[2];
  Plan->Step = Step;
  auto XS = getStrides(XT), YS = getStrides(YT);
  // Frames in place: consecutive samples, images of frames one after the
  // other in the result.
  if (XS[1] != 1 || YS[3] != 1 || YS[2] != 2 ||
      YS[0] != Plan->Frames * YS[1] ||
      (Plan->Frames - 1) * Step + Length > XShape[1])
    return false;
  Plan->SignalStride = XS[0];
  Plan->ResultRowStride = YS[1];
  // B[t][c]: the windowed cosine (c even) or negated sine (c odd) of bin
  // c / 2 at sample t.
  const std::vector<float> Basis =
      codegen::getDFTBasis(Length, YShape[2], Window);
  const int64_t Columns = Plan->Columns;
  auto F = [&](int64_t C, int64_t T) { return Basis[size_t(T * Columns + C)]; };
  WeightPacker<decltype(F)> BP(F);
  Plan->Basis = L.packConstantB("stft/" + Y->getName(), BP, Plan->Columns,
                                Length);
  L.own(Plan);
  BufferId XB = L.getBuffer(X), YB = L.defineBuffer(Y);
  const int Threads = L.getThreads();
  const int64_t Flops = 2 * Plan->Batch * Plan->Frames * Plan->Columns * Length;
  L.addStep({Y->getName(), "stft.gemm", false, Flops}, {XB}, {YB},
            [=](Frame &Fr) {
              static const int64_t NoOffset = 0;
              DirectA D;
              D.Base = Fr.f32(XB);
              D.SegRows = Plan->Frames;
              D.SegStride = Plan->SignalStride;
              D.RowStride = Plan->Step;
              D.Width = Plan->Length;
              D.TapOffsets = &NoOffset;
              GemmProblem G;
              G.M = Plan->Batch * Plan->Frames;
              G.N = Plan->Columns;
              G.K = Plan->Length;
              G.Direct = &D;
              G.PackedB = &Plan->Basis;
              G.C = Fr.f32(YB);
              G.LdM = Plan->ResultRowStride;
              G.LdN = 1;
              runGemm(G, Threads);
            });
  return true;
}
