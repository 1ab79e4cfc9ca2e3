//===- LowerSignal.cpp - STFT on the CUDA backend -------------------------===//
//
// STFT of a real signal with constant frame_step, frame length and window
// (or none): a strided copy gathers every frame of every batch into a
// scratch matrix (frames overlap in the signal, which a GEMM's leading
// dimension cannot express), then one cuBLASLt GEMM by the windowed DFT
// basis (codegen::getDFTBasis, as the CPU backend's), a constant the runner
// uploads once, whose rows are the result's frames of [re, im] pairs.
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

#include "strider/CodeGen/Signal.h"
#include "strider/CodeGen/TensorGeometry.h"

using namespace strider;
using namespace strider::cuda;

namespace {

/// The one integer of constant \p V, or -1.
int64_t getConstantInt(const Value *V) {
  const TensorData *D = V ? V->getConstantData() : nullptr;
  return D && D->getNumElements() == 1 ? D->getInt(0) : -1;
}

} // namespace

llvm::Error cuda::planSTFT(PlanContext &C, const Node &N, const FusedTail &T) {
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  const TensorType &XT = X->getType(), &YT = Y->getType();
  auto XD = getDType(XT.getElementType()), YD = getDType(YT.getElementType());
  const bool Real =
      XT.getRank() == 2 ||
      (XT.getRank() == 3 && XT.hasStaticShape() && XT.getStaticShape()[2] == 1);
  if (!XD || !YD || *XD != *YD || !Real || !XT.hasStaticShape() ||
      !YT.hasStaticShape() || YT.getRank() != 4 || !T.Act.isNone() ||
      T.Residual)
    return unsupported(N, "an STFT from " + XT.str() + " to " + YT.str() +
                              " (a real float signal)");
  std::vector<float> Window;
  if (N.hasOperand(2)) {
    Window = getConstantFloats(N.getOperand(2));
    if (Window.empty())
      return unsupported(N, "an STFT whose window is computed at run time");
  }
  const int64_t Step = getConstantInt(N.getOperand(1));
  const int64_t Length = N.hasOperand(3) ? getConstantInt(N.getOperand(3))
                                         : int64_t(Window.size());
  auto XS = XT.getStaticShape(), YS = YT.getStaticShape();
  const int64_t Batch = XS[0], Frames = YS[1], Bins = YS[2];
  if (Step < 1 || Length < 1 ||
      (!Window.empty() && int64_t(Window.size()) != Length) ||
      (Frames - 1) * Step + Length > XS[1])
    return unsupported(N, "an STFT whose step or frame length is computed "
                          "at run time");
  auto XStr = codegen::getStrides(XT);
  // The result dense and row-major: frames of Bins [re, im] pairs.
  const int64_t RowMajor[4] = {Frames * Bins * 2, Bins * 2, 2, 1};
  if (llvm::makeArrayRef(codegen::getStrides(YT)) !=
      llvm::makeArrayRef(RowMajor))
    return unsupported(N, "an STFT into layout " + YT.str());
  BufferId XB, YB;
  if (llvm::Error E = getInOut(C, N, X, Y, XB, YB))
    return E;
  // Frames: [batch][frame][t] = X[batch][frame * step + t].
  const int64_t Elt = int64_t(getDTypeBytes(*XD));
  Arg Framed{C.addScratch(Batch * Frames * Length * Elt), 0};
  const std::string Nodes = getStepNodes(N, T);
  addCopy(C, Nodes, "frames",
          makeCopy({Batch, Frames, Length}, {XStr[0], Step * XStr[1], XStr[1]},
                   {Frames * Length, Length, 1}, *XD, *XD),
          {XB, 0}, Framed);
  std::vector<float> Basis = codegen::getDFTBasis(Length, Bins, Window);
  GemmDesc D;
  D.M = Batch * Frames;
  D.K = Length;
  D.N = 2 * Bins;
  D.Type = *XD;
  D.Math = C.getMathMode(D.Type);
  StepInfo Info;
  Info.Nodes = Nodes;
  Info.Kernel = std::string("cublaslt.gemm nn ") + getDTypeName(D.Type) +
                (D.Math == MathMode::TF32 ? " tf32" : "") + " (stft basis)";
  Info.Flops = 2 * D.M * D.N * D.K;
  C.addRunnerConstantBytes(int64_t(Basis.size() * getDTypeBytes(D.Type)));
  GemmStep S{D, std::make_shared<const std::vector<float>>(std::move(Basis)),
             nullptr};
  C.addStep(Info, std::move(S), {Framed, Arg(), {YB, 0}, Arg()});
  return llvm::Error::success();
}
