//===- Signal.cpp - The STFT's DFT basis ----------------------------------===//
//
// See Signal.h.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/Signal.h"

#include <cmath>

using namespace strider;

std::vector<float> codegen::getDFTBasis(int64_t Length, int64_t Bins,
                                        llvm::ArrayRef<float> Window) {
  std::vector<double> Cos(static_cast<size_t>(Length)),
      Sin(static_cast<size_t>(Length));
  for (int64_t J = 0; J < Length; ++J) {
    const double A = 2.0 * M_PI * double(J) / double(Length);
    Cos[size_t(J)] = std::cos(A);
    Sin[size_t(J)] = std::sin(A);
  }
  std::vector<float> Basis(static_cast<size_t>(Length * 2 * Bins));
  for (int64_t T = 0; T < Length; ++T) {
    const double W = Window.empty() ? 1.0 : double(Window[size_t(T)]);
    for (int64_t K = 0; K < Bins; ++K) {
      const size_t J = size_t((K * T) % Length);
      Basis[size_t(T * 2 * Bins + 2 * K)] = float(W * Cos[J]);
      Basis[size_t(T * 2 * Bins + 2 * K + 1)] = float(-W * Sin[J]);
    }
  }
  return Basis;
}
