//===- RecurrentKernels.cu - LSTM gate steps ------------------------------===//
//
// The elementwise half of an LSTM step: the GEMMs (input projection of
// every step, recurrent product of each) are cuBLASLt steps of the plan;
// this kernel turns their sums into the new states, one thread per
// (batch entry, hidden unit), reading the gates of its unit H apart.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"
#include "DeviceTypes.cuh"

namespace strider {
namespace cuda {
namespace {

constexpr int Threads = 256;

__global__ void __launch_bounds__(Threads)
    lstmCellKernel(LstmCellParams P, const float *Pre, const float *Rec,
                   const float *Peep, float *Cell, float *Hidden, float *Y) {
  const int64_t H = P.Hidden, Count = P.Batch * H;
  const int64_t Step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t I = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; I < Count;
       I += Step) {
    const int64_t B = I / H, J = I % H;
    const float *PreRow = Pre + B * P.PreRowStride + J;
    float G[4];
    for (int K = 0; K < 4; ++K)
      G[K] = PreRow[K * H] + (Rec ? Rec[B * 4 * H + K * H + J] : 0.0f);
    const float CPrev = P.HasCellState ? Cell[I] : 0.0f;
    const LstmUnit U =
        lstmUnit(G[0], G[1], G[2], G[3], CPrev, Peep ? Peep[J] : 0.0f,
                 Peep ? Peep[H + J] : 0.0f, Peep ? Peep[2 * H + J] : 0.0f,
                 P.Clip, P.InputForget);
    Cell[I] = U.Cell;
    Hidden[I] = U.Hidden;
    if (Y)
      Y[B * P.YBatchStride + J] = U.Hidden;
  }
}

} // namespace

cudaError_t launchLstmCell(const LstmCellParams &P, const float *Pre,
                           const float *Rec, const float *Peep, float *Cell,
                           float *Hidden, float *Y, cudaStream_t Stream) {
  if (P.Batch < 0 || P.Hidden < 0 || !Pre || !Cell || !Hidden)
    return cudaErrorInvalidValue;
  const int64_t Count = P.Batch * P.Hidden;
  if (Count == 0)
    return cudaSuccess;
  lstmCellKernel<<<getBlocks(Count, Threads), Threads, 0, Stream>>>(
      P, Pre, Rec, Peep, Cell, Hidden, Y);
  return cudaGetLastError();
}

} // namespace cuda
} // namespace strider
