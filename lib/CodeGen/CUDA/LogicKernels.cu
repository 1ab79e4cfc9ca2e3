//===- LogicKernels.cu - Integers, bools and masks ------------------------===//
//
// The typed kernel: one thread per element of the result (grid-stride),
// each evaluating DeviceMath.h's evalTyped (the row ops Scatter, ArgMax,
// ArgMin and TopK: one thread per row, evalTypedRow), so that the host
// tests run the very code this kernel runs. The storage types and the op are
// read per element (uniform across a launch, so no divergence); what goes
// through here is small (sequence lengths, masks, index arithmetic) and memory
// bound.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"
#include "DeviceTypes.cuh"

namespace strider {
namespace cuda {
namespace {

constexpr int Threads = 256;

__global__ void __launch_bounds__(Threads)
    typedKernel(TypedParams P, const void *A, const void *B, const void *C,
                void *Y, void *Y2, RunError *Err, int64_t Count) {
  const void *Ins[3] = {A, B, C};
  const int64_t Step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t I = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; I < Count;
       I += Step) {
    if (isRowOp(P.Op))
      evalTypedRow(P, Ins, Y, Y2, I, Err);
    else
      evalTyped(P, Ins, Y, I, Err);
  }
}

} // namespace

cudaError_t launchTyped(const TypedParams &P, const void *A, const void *B,
                        const void *C, void *Y, void *Y2, RunError *Err,
                        cudaStream_t S) {
  if (P.Rank < 0 || P.Rank > MaxRank || P.NumOperands < 1 || P.NumOperands > 3)
    return cudaErrorInvalidValue;
  if (isRowOp(P.Op) && (P.Axis < 0 || P.Axis >= P.Rank))
    return cudaErrorInvalidValue;
  if (P.Op == TypedOp::TopK && (!Y2 || P.K < 0 || P.K > P.Shape[P.Axis]))
    return cudaErrorInvalidValue;
  int64_t Count = 1;
  for (int D = 0; D < P.Rank; ++D)
    Count *= P.Shape[D];
  if (isRowOp(P.Op) && Count)
    Count = getRowCount(P);
  if (Count == 0)
    return cudaSuccess;
  typedKernel<<<getBlocks(Count, Threads), Threads, 0, S>>>(P, A, B, C, Y, Y2,
                                                            Err, Count);
  return cudaGetLastError();
}

} // namespace cuda
} // namespace strider
