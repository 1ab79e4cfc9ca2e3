//===- Requantize.h - An int32 sum back to 8 bits ---------------*- C++ -*-===//
//
// QLinearConv's last step, shared by the reference kernel and the CPU
// backend's vector epilogue so that both give the same bits: the sum is
// converted to float, multiplied by x_scale * w_scale / y_scale (computed
// in float, as ONNX Runtime does), clamped to the result type's range less
// the zero point, rounded half to even and shifted by the zero point.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_RUNTIME_REQUANTIZE_H
#define STRIDER_RUNTIME_REQUANTIZE_H

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace strider {
namespace runtime {

/// The multiplier of one output channel.
inline float getRequantScale(float XScale, float WScale, float YScale) {
  return XScale * WScale / YScale;
}

/// \p Acc requantized into [\p Lo, \p Hi] (the 8-bit type's range).
inline int32_t requantize(int32_t Acc, float Scale, int32_t Zero, int32_t Lo,
                          int32_t Hi) {
  float V = float(Acc) * Scale;
  V = std::min(std::max(V, float(Lo - Zero)), float(Hi - Zero));
  if (std::isnan(V))
    V = 0.0f;
  return int32_t(std::nearbyint(V)) + Zero;
}

} // namespace runtime
} // namespace strider

#endif // STRIDER_RUNTIME_REQUANTIZE_H
