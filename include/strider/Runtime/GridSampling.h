//===- GridSampling.h - GridSample's value at one output point --*- C++ -*-===//
//
// ONNX GridSample (opset 20 semantics) over two spatial dims: a grid point
// (x, y) in [-1, 1] is mapped to input coordinates (align_corners: the
// extreme pixels' centres, else their outer edges), rounded half to even
// for nearest, brought inside by the padding mode (border: clamped,
// reflection: mirrored at the borders, zeros: left outside, where taps
// read 0), then interpolated (linear: 2 x 2 taps, cubic: 4 x 4 taps with
// Keys' coefficients, a = -0.75, each tap padded again). One definition,
// compiled for the host (the reference interpreter, the CPU backend) and
// for CUDA devices (the CUDA backend's typed kernel and its host model).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_RUNTIME_GRIDSAMPLING_H
#define STRIDER_RUNTIME_GRIDSAMPLING_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define STRIDER_GRID_HD __host__ __device__ __forceinline__
#else
#define STRIDER_GRID_HD inline
#endif

namespace strider {
namespace gridsample {

enum class Mode : uint8_t { Linear, Nearest, Cubic };
enum class Padding : uint8_t { Zeros, Border, Reflection };

struct Options {
  Mode M = Mode::Linear;
  Padding P = Padding::Zeros;
  bool AlignCorners = false;
};

/// The input coordinate of normalized coordinate \p N along an axis of
/// \p Size elements.
STRIDER_GRID_HD double denormalize(double N, int64_t Size, bool Align) {
  return Align ? (N + 1) / 2 * double(Size - 1)
               : ((N + 1) * double(Size) - 1) / 2;
}

/// \p X mirrored at \p Lo and \p Hi until it lies between them.
STRIDER_GRID_HD double reflect(double X, double Lo, double Hi) {
  const double Range = Hi - Lo;
  if (Range <= 0)
    return Lo;
  if (X < Lo) {
    const double D = Lo - X;
    const double K = floor(D / Range), R = D - K * Range;
    return fmod(K, 2.0) == 0 ? Lo + R : Hi - R;
  }
  if (X > Hi) {
    const double D = X - Hi;
    const double K = floor(D / Range), R = D - K * Range;
    return fmod(K, 2.0) == 0 ? Hi - R : Lo + R;
  }
  return X;
}

/// The index a tap at \p I along an axis of \p Size reads under \p O's
/// padding (reflection between \p Lo and \p Hi); -1 for a zero.
STRIDER_GRID_HD int64_t padIndex(int64_t I, int64_t Size, const Options &O,
                                 double Lo, double Hi) {
  if (I >= 0 && I < Size)
    return I;
  if (O.P == Padding::Zeros)
    return -1;
  if (O.P == Padding::Reflection)
    I = int64_t(reflect(double(I), Lo, Hi));
  return I < 0 ? 0 : I >= Size ? Size - 1 : I;
}

/// Keys' cubic convolution weights of the taps at -1, 0, 1, 2 for a point
/// \p T in [0, 1) past tap 0.
STRIDER_GRID_HD void cubicWeights(double T, double W[4]) {
  const double A = -0.75;
  const double X0 = T + 1, X1 = T, X2 = 1 - T, X3 = 2 - T;
  W[0] = ((A * X0 - 5 * A) * X0 + 8 * A) * X0 - 4 * A;
  W[1] = ((A + 2) * X1 - (A + 3)) * X1 * X1 + 1;
  W[2] = ((A + 2) * X2 - (A + 3)) * X2 * X2 + 1;
  W[3] = ((A * X3 - 5 * A) * X3 + 8 * A) * X3 - 4 * A;
}

/// Calls \p Tap(y, x, weight) for each pixel grid point (\p GX, \p GY)
/// of an \p H x \p W image reads (indices after padding, in range; taps
/// on zero padding are left out). False for a NaN point, whose value is
/// NaN.
template <class TapFn>
STRIDER_GRID_HD bool forEachTap(const Options &O, int64_t H, int64_t W,
                                double GX, double GY, TapFn Tap) {
  double X = denormalize(GX, W, O.AlignCorners);
  double Y = denormalize(GY, H, O.AlignCorners);
  if (X != X || Y != Y)
    return false;
  if (O.M == Mode::Nearest) {
    X = rint(X);
    Y = rint(Y);
  }
  const double XLo = O.AlignCorners ? 0 : -0.5,
               XHi = O.AlignCorners ? double(W - 1) : double(W) - 0.5;
  const double YLo = O.AlignCorners ? 0 : -0.5,
               YHi = O.AlignCorners ? double(H - 1) : double(H) - 0.5;
  if (X < XLo || X > XHi) {
    if (O.P == Padding::Border)
      X = X < 0 ? 0 : X > double(W - 1) ? double(W - 1) : X;
    else if (O.P == Padding::Reflection)
      X = reflect(X, XLo, XHi);
  }
  if (Y < YLo || Y > YHi) {
    if (O.P == Padding::Border)
      Y = Y < 0 ? 0 : Y > double(H - 1) ? double(H - 1) : Y;
    else if (O.P == Padding::Reflection)
      Y = reflect(Y, YLo, YHi);
  }
  auto Emit = [&](int64_t YI, int64_t XI, double Weight) {
    YI = padIndex(YI, H, O, YLo, YHi);
    XI = padIndex(XI, W, O, XLo, XHi);
    if (YI >= 0 && XI >= 0)
      Tap(YI, XI, Weight);
  };
  if (O.M == Mode::Nearest) {
    // Outside (only with zeros padding: the others brought the point
    // within half a pixel of the image) it reads zero padding; far
    // outside, the rounded point may not even fit an int64_t.
    if (X > -1 && X < double(W) && Y > -1 && Y < double(H))
      Emit(int64_t(Y), int64_t(X), 1.0);
    return true;
  }
  // Zeros padding: a point more than two pixels outside reads nothing.
  if (X < -3 || X > double(W) + 2 || Y < -3 || Y > double(H) + 2)
    return true;
  const double X0 = floor(X), Y0 = floor(Y);
  const int64_t XI = int64_t(X0), YI = int64_t(Y0);
  const double TX = X - X0, TY = Y - Y0;
  if (O.M == Mode::Linear) {
    Emit(YI, XI, (1 - TY) * (1 - TX));
    Emit(YI, XI + 1, (1 - TY) * TX);
    Emit(YI + 1, XI, TY * (1 - TX));
    Emit(YI + 1, XI + 1, TY * TX);
    return true;
  }
  double WX[4], WY[4];
  cubicWeights(TX, WX);
  cubicWeights(TY, WY);
  for (int J = 0; J < 4; ++J)
    for (int K = 0; K < 4; ++K)
      Emit(YI - 1 + J, XI - 1 + K, WY[J] * WX[K]);
  return true;
}

/// GridSample's value at grid point (\p GX, \p GY) of an \p H x \p W
/// image whose pixel (y, x) is \p Read(y, x) (called for in-range
/// indices only).
template <class ReadFn>
STRIDER_GRID_HD double sample2D(const Options &O, int64_t H, int64_t W,
                                double GX, double GY, ReadFn Read) {
  double Sum = 0;
  if (!forEachTap(O, H, W, GX, GY, [&](int64_t YI, int64_t XI, double Wt) {
        Sum += Wt * double(Read(YI, XI));
      }))
    return NAN;
  return Sum;
}

} // namespace gridsample
} // namespace strider

#endif // STRIDER_RUNTIME_GRIDSAMPLING_H
