//===- CPUTransposeTest.cpp - The CPU backend's float transposition -------===//
//
// transposeFloats against the definition D[j][i] = S[i][j] over every
// shape up to 40 x 40 (all tile sizes and edges, the overlapped last
// tiles, one to three rows or columns), padded leading dimensions, and
// shapes as relayouts have them (few channels times many pixels and the
// reverse), on every SIMD target compiled in that this machine runs.
// Elements outside D's matrix must stay untouched.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "hwy/targets.h"
#include "gtest/gtest.h"

#include <cstdint>
#include <vector>

using namespace strider::cpu;

namespace {

/// Transposes a Rows x Cols matrix with leading dimensions Cols + SPad
/// (source) and Rows + DPad (destination) and checks every element of
/// the destination buffer.
void checkTranspose(int64_t Rows, int64_t Cols, int64_t SPad, int64_t DPad) {
  const int64_t SLd = Cols + SPad, DLd = Rows + DPad;
  std::vector<float> S(size_t(Rows * SLd)), D(size_t(Cols * DLd), -1.0f);
  for (int64_t I = 0; I < Rows * SLd; ++I)
    S[size_t(I)] = float(I);
  transposeFloats(S.data(), SLd, D.data(), DLd, Rows, Cols);
  for (int64_t J = 0; J < Cols; ++J)
    for (int64_t I = 0; I < DLd; ++I) {
      const float Want = I < Rows ? S[size_t(I * SLd + J)] : -1.0f;
      ASSERT_EQ(D[size_t(J * DLd + I)], Want)
          << Rows << " x " << Cols << " (pads " << SPad << ", " << DPad
          << "): D[" << J << "][" << I << "]";
    }
}

/// Runs Check once per SIMD target this machine supports, with
/// transposeFloats dispatching to the best compiled target of each (the
/// portable fallback where it was not compiled), then restores dispatch.
template <typename Fn> void forEachTarget(Fn Check) {
  const int64_t Supported = hwy::SupportedTargets();
  for (int64_t Left = Supported; Left != 0; Left &= Left - 1) {
    const int64_t Target = Left & -Left;
    SCOPED_TRACE(hwy::TargetName(Target));
    hwy::SetSupportedTargetsForTest(Target);
    Check();
    if (::testing::Test::HasFatalFailure())
      break;
  }
  hwy::SetSupportedTargetsForTest(0);
}

TEST(CPUTranspose, EveryShapeUpTo40) {
  forEachTarget([] {
    for (int64_t Rows = 1; Rows <= 40; ++Rows)
      for (int64_t Cols = 1; Cols <= 40; ++Cols)
        ASSERT_NO_FATAL_FAILURE(checkTranspose(Rows, Cols, 0, 0));
  });
}

TEST(CPUTranspose, PaddedLeadingDims) {
  forEachTarget([] {
    for (int64_t Rows = 1; Rows <= 37; Rows += 3)
      for (int64_t Cols = 1; Cols <= 37; Cols += 3)
        for (int64_t SPad : {1, 5})
          for (int64_t DPad : {1, 3})
            ASSERT_NO_FATAL_FAILURE(checkTranspose(Rows, Cols, SPad, DPad));
  });
}

TEST(CPUTranspose, RelayoutShapes) {
  // Channels x pixels and pixels x channels: both directions of NCHW <->
  // NHWC, incl. column blocks with a short last block.
  const int64_t Shapes[][2] = {{3, 50176 / 16}, {24, 3136}, {64, 196},
                               {2048, 49},      {512, 49},  {96, 130},
                               {17, 193},       {200, 129}, {2, 1000}};
  forEachTarget([&] {
    for (const auto &Sh : Shapes) {
      ASSERT_NO_FATAL_FAILURE(checkTranspose(Sh[0], Sh[1], 0, 0));
      ASSERT_NO_FATAL_FAILURE(checkTranspose(Sh[1], Sh[0], 0, 0));
    }
  });
}

} // namespace
