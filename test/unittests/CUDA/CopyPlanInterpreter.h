//===- CopyPlanInterpreter.h - CopyPlan run on the host ---------*- C++ -*-===//
//
// A host interpreter of the CUDA backend's copy plans, walking each
// strategy the way launchCopy's kernels do, for tests without a GPU:
// planCopy against the strided copies it came from (CopyPlanTest), and
// whole plans made only of copies against the reference interpreter
// (PlanTest).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_TEST_UNITTESTS_CUDA_COPYPLANINTERPRETER_H
#define STRIDER_TEST_UNITTESTS_CUDA_COPYPLANINTERPRETER_H

#include "Kernels.h"

#include <cstdint>
#include <vector>

namespace strider {
namespace cuda {
namespace gputest {

/// Calls \p F with every index of \p Shape, last dim fastest.
template <typename Fn>
void forEachIndex(const std::vector<int64_t> &Shape, Fn &&F) {
  for (int64_t S : Shape)
    if (S == 0)
      return;
  std::vector<int64_t> Index(Shape.size(), 0);
  while (true) {
    F(Index);
    size_t D = Shape.size();
    while (D > 0) {
      --D;
      if (++Index[D] < Shape[D])
        break;
      Index[D] = 0;
      if (D == 0)
        return;
    }
    if (Shape.empty())
      return;
  }
}

inline int64_t dot(const std::vector<int64_t> &Index, const int64_t *Strides) {
  int64_t Off = 0;
  for (size_t I = 0; I < Index.size(); ++I)
    Off += Index[I] * Strides[I];
  return Off;
}

/// Runs \p Plan on the host the way launchCopy's kernels do, element for
/// element (no conversion: X and Y of one type \p T): \p X and \p Y point
/// at element 0 of each side.
template <typename T> void runCopyPlan(const CopyPlan &Plan, const T *X, T *Y) {
  const CopyParams &P = Plan.Params;
  switch (Plan.Strategy) {
  case CopyStrategy::Contiguous: {
    const int64_t Count = P.Rank == 0 ? 1 : P.Shape[0];
    for (int64_t I = 0; I < Count; ++I)
      Y[I] = X[I];
    return;
  }
  case CopyStrategy::Transpose2D: {
    const std::vector<int64_t> Batch(P.Shape, P.Shape + P.Rank - 2);
    forEachIndex(Batch, [&](const std::vector<int64_t> &B) {
      const T *XB = X + dot(B, P.XStrides);
      T *YB = Y + dot(B, P.YStrides);
      for (int64_t R = 0; R < Plan.Rows; ++R)
        for (int64_t C = 0; C < Plan.Cols; ++C)
          YB[C * Plan.YRowStride + R] = XB[R * Plan.XRowStride + C];
    });
    return;
  }
  case CopyStrategy::Generic:
    forEachIndex(std::vector<int64_t>(P.Shape, P.Shape + P.Rank),
                 [&](const std::vector<int64_t> &I) {
                   Y[dot(I, P.YStrides)] = X[dot(I, P.XStrides)];
                 });
    return;
  }
}

} // namespace gputest
} // namespace cuda
} // namespace strider

#endif // STRIDER_TEST_UNITTESTS_CUDA_COPYPLANINTERPRETER_H
