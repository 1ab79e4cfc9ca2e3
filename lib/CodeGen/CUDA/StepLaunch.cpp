//===- StepLaunch.cpp - A kernel step's arguments to its launcher ---------===//
//
// One mapping from a plan step's arguments (PlanImpl.h lists them per step
// kind) to its launcher's parameters, used by the device program and by
// the host emulation when it runs the kernels' own code (OnHost/).
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

using namespace strider;
using namespace strider::cuda;

const KernelLaunchers &cuda::getDeviceLaunchers() {
  static const KernelLaunchers L = [] {
    KernelLaunchers T;
    T.Copy = &launchCopy;
    T.Pad = &launchPad;
    T.Resize = &launchResize;
    T.Elementwise = &launchElementwise;
    T.Typed = &launchTyped;
    T.Epilogue = &launchEpilogue;
    T.Pool = &launchPool;
    T.Reduce = &launchReduce;
    T.Softmax = &launchSoftmax;
    T.Norm = &launchNorm;
    T.BatchStats = &launchBatchStats;
    T.Lrn = &launchLrn;
    T.LstmCell = &launchLstmCell;
    T.GruCell = &launchGruCell;
    T.RecurrenceLoop = &launchRecurrenceLoop;
    return T;
  }();
  return L;
}

bool cuda::isKernelStep(const PlanStep &S) {
  return !std::holds_alternative<ConvStep>(S.Params) &&
         !std::holds_alternative<GemmStep>(S.Params);
}

cudaError_t cuda::launchKernelStep(const KernelLaunchers &L, const PlanStep &S,
                                   llvm::function_ref<void *(size_t K)> Address,
                                   RunError *Err, cudaStream_t Stream) {
  auto A = [&](size_t K) { return Address(K); };
  auto F = [&](size_t K) { return static_cast<float *>(Address(K)); };
  // An argument that steps of a kind may leave out.
  auto Optional = [&](size_t K) {
    return S.Args.size() > K ? Address(K) : nullptr;
  };
  return std::visit(
      [&](const auto &P) -> cudaError_t {
        using T = std::decay_t<decltype(P)>;
        if constexpr (std::is_same_v<T, CopyPlan>) {
          return L.Copy(P, A(0), A(1), Stream);
        } else if constexpr (std::is_same_v<T, PadParams>) {
          return L.Pad(P, A(0), A(1), Stream);
        } else if constexpr (std::is_same_v<T, ResizeParams>) {
          ResizeParams R = P;
          for (int D = 0; D < R.Spatial; ++D) {
            R.Index[D] = static_cast<const int32_t *>(A(2 + 2 * size_t(D)));
            R.Weight[D] = F(3 + 2 * size_t(D));
          }
          return L.Resize(R, A(0), A(1), Stream);
        } else if constexpr (std::is_same_v<T, ElementwiseParams>) {
          return L.Elementwise(P, A(0), A(1), A(2), Stream);
        } else if constexpr (std::is_same_v<T, TypedParams>) {
          return L.Typed(P, A(0), A(1), A(2), A(3), Optional(4), Err, Stream);
        } else if constexpr (std::is_same_v<T, EpilogueParams>) {
          return L.Epilogue(P, A(0), F(1), F(2), A(3), A(4), Stream);
        } else if constexpr (std::is_same_v<T, PoolParams>) {
          return L.Pool(P, A(0), A(1), static_cast<int64_t *>(Optional(2)),
                        Stream);
        } else if constexpr (std::is_same_v<T, ReduceParams>) {
          return L.Reduce(P, A(0), A(1), Stream);
        } else if constexpr (std::is_same_v<T, SoftmaxParams>) {
          return L.Softmax(P, A(0), A(1), Stream);
        } else if constexpr (std::is_same_v<T, LstmCellParams>) {
          return L.LstmCell(P, F(0), F(1), F(2), F(3), F(4), F(5), A(6), Err,
                            Stream);
        } else if constexpr (std::is_same_v<T, GruCellParams>) {
          return L.GruCell(P, F(0), F(1), F(2), F(3), F(4), F(5), A(6), Err,
                           Stream);
        } else if constexpr (std::is_same_v<T, RecurrenceLoopParams>) {
          return L.RecurrenceLoop(P, F(0), F(1), F(2), F(3), F(4), F(5), F(6),
                                  F(7), F(8), F(9), F(10), A(11), Err, Stream);
        } else if constexpr (std::is_same_v<T, LrnParams>) {
          return L.Lrn(P, A(0), A(1), Stream);
        } else if constexpr (std::is_same_v<T, BatchStatsParams>) {
          auto G = [&](size_t K) { return static_cast<float *>(Optional(K)); };
          return L.BatchStats(P, A(0), F(1), F(2), G(3), G(4), F(5), F(6), G(7),
                              G(8), Stream);
        } else if constexpr (std::is_same_v<T, NormParams>) {
          return L.Norm(P, A(0), F(1), F(2), A(3),
                        static_cast<float *>(Optional(4)),
                        static_cast<float *>(Optional(5)), Stream);
        } else {
          static_assert(std::is_same_v<T, ConvStep> ||
                            std::is_same_v<T, GemmStep>,
                        "a step kind is missing");
          return cudaErrorInvalidValue;
        }
      },
      S.Params);
}
