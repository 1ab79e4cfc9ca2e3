//===- SignalKernels.cpp - Signal-processing reference kernels ------------===//
//
// STFT: frame f of batch b is the signal's samples [f * step, f * step +
// N), multiplied by the window (ones when absent), and its discrete Fourier
// transform X[k] = sum_n x[n] * w[n] * exp(-2 pi i k n / N) for k < N (k <=
// N / 2 when onesided), as [re, im] pairs; a complex signal ([..., 2])
// multiplies in full; [batch, length] is a real signal. Sums in double,
// angles reduced mod N exactly.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"

#include <cmath>

using namespace strider;
using namespace strider::runtime;

namespace {

using Operands = llvm::ArrayRef<const Tensor *>;
using Results = llvm::MutableArrayRef<Tensor>;

llvm::Error stftKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &X = *Ins[0];
  const Tensor *Window = Ins.size() > 2 ? Ins[2] : nullptr;
  const Tensor *LengthT = Ins.size() > 3 ? Ins[3] : nullptr;
  Tensor &Y = Outs[0];
  if ((X.getRank() != 2 && X.getRank() != 3) ||
      (X.getRank() == 3 && X.getDim(2) != 1 && X.getDim(2) != 2))
    return makeNodeError(N, "signal " + X.getType().str() +
                                " must be [batch, length, 1 or 2]");
  const int64_t Step = Ins[1]->getInt(0);
  int64_t Length = LengthT ? LengthT->getInt(0)
                           : Window ? Window->getNumElements() : -1;
  if (Step < 1 || Length < 1 ||
      (Window && Window->getNumElements() != Length) ||
      X.getDim(1) < Length)
    return makeNodeError(N, "frame_step " + llvm::Twine(Step) +
                                " and frame length " + llvm::Twine(Length) +
                                " do not fit signal " + X.getType().str() +
                                (Window ? " and window " +
                                              Window->getType().str()
                                        : std::string()));
  const bool OneSided = N.getIntAttr("onesided", 1) != 0;
  const int64_t Batch = X.getDim(0), Frames = (X.getDim(1) - Length) / Step + 1,
                Bins = OneSided ? Length / 2 + 1 : Length;
  const int64_t Want[] = {Batch, Frames, Bins, 2};
  if (Y.getShape() != llvm::makeArrayRef(Want))
    return makeNodeError(N, "result type " + Y.getType().str() +
                                " does not match the computed shape");
  const bool Complex = X.getRank() == 3 && X.getDim(2) == 2;
  int64_t Idx[4], XI[3] = {0, 0, 0};
  const llvm::ArrayRef<int64_t> XIndex(XI, X.getRank());
  for (int64_t B = 0; B < Batch; ++B)
    for (int64_t F = 0; F < Frames; ++F)
      for (int64_t K = 0; K < Bins; ++K) {
        double Re = 0, Im = 0;
        for (int64_t T = 0; T < Length; ++T) {
          XI[0] = B;
          XI[1] = F * Step + T;
          XI[2] = 0;
          const double W =
              Window ? Window->getDouble(Window->getOffset({T})) : 1.0;
          const double XR = X.getDouble(X.getOffset(XIndex)) * W;
          double XIm = 0;
          if (Complex) {
            XI[2] = 1;
            XIm = X.getDouble(X.getOffset(XIndex)) * W;
          }
          // e^{-i a} = cos a - i sin a, a = 2 pi (k t mod N) / N.
          const double A =
              2.0 * M_PI * double((K * T) % Length) / double(Length);
          const double Cos = std::cos(A), Sin = std::sin(A);
          Re += XR * Cos + XIm * Sin;
          Im += XIm * Cos - XR * Sin;
        }
        Idx[0] = B;
        Idx[1] = F;
        Idx[2] = K;
        Idx[3] = 0;
        Y.setDouble(Y.getOffset(Idx), Re);
        Idx[3] = 1;
        Y.setDouble(Y.getOffset(Idx), Im);
      }
  return llvm::Error::success();
}

} // namespace

void runtime::addSignalKernels(KernelTable &T) {
  T[static_cast<size_t>(OpId::STFT)] = stftKernel;
}
