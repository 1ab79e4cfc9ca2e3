//===- Signal.h - What the backends' STFT kernels share ---------*- C++ -*-===//
//
// The STFT of a frame is its product with a constant matrix; both
// backends pack or upload the same one (the reference interpreter sums in
// double on its own, as the oracle).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_SIGNAL_H
#define STRIDER_CODEGEN_SIGNAL_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace strider {
namespace codegen {

/// The windowed DFT basis of frames of \p Length samples, row-major
/// \p Length x 2 * \p Bins: column 2k of row t is w[t] cos(2 pi k t / N),
/// column 2k + 1 is -w[t] sin(2 pi k t / N), the angle reduced mod N in
/// integers (N = \p Length; w = 1 where \p Window is empty). A frame (a
/// row vector) times it is the frame's spectrum as [re, im] pairs.
std::vector<float> getDFTBasis(int64_t Length, int64_t Bins,
                               llvm::ArrayRef<float> Window);

} // namespace codegen
} // namespace strider

#endif // STRIDER_CODEGEN_SIGNAL_H
