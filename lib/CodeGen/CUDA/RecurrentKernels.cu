//===- RecurrentKernels.cu - LSTM and GRU gate steps ----------------------===//
//
// The elementwise half of an LSTM or GRU step: the GEMMs (input projection
// of every step, recurrent products of each) are cuBLASLt steps of the
// plan; these kernels turn their sums into the new states (and GRU's reset
// hidden state), one thread per (batch entry, hidden unit), reading the
// gates of its unit H apart.
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

__global__ void __launch_bounds__(Threads)
    gruCellKernel(GruCellParams P, const float *Pre, const float *Rec,
                  const float *RecH, const float *RecBias, float *Hidden,
                  float *Out) {
  const int64_t H = P.Hidden, Count = P.Batch * H;
  const int64_t Step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t I = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; I < Count;
       I += Step) {
    const int64_t B = I / H, J = I % H;
    const float *PreRow = Pre + B * P.PreRowStride + J;
    const float *RecRow = Rec ? Rec + B * P.RecRowStride + J : nullptr;
    const float Prev = P.HasState ? Hidden[I] : 0.0f;
    if (P.Stage == GruCellParams::Reset) {
      const float R =
          sigmoidOf(clipGate(PreRow[H] + (RecRow ? RecRow[H] : 0.0f), P.Clip));
      Out[I] = R * Prev;
      continue;
    }
    float RH = 0.0f;
    if (RecH)
      RH = RecH[(P.LinearBeforeReset ? B * P.RecRowStride : B * H) + J];
    if (P.LinearBeforeReset) {
      const float R =
          sigmoidOf(clipGate(PreRow[H] + (RecRow ? RecRow[H] : 0.0f), P.Clip));
      RH = R * (RH + RecBias[J]);
    }
    const float Hn = gruUnit(PreRow[0] + (RecRow ? RecRow[0] : 0.0f),
                             PreRow[2 * H] + RH, Prev, P.Clip);
    Hidden[I] = Hn;
    if (Out)
      Out[B * P.YBatchStride + J] = Hn;
  }
}

} // namespace

cudaError_t launchGruCell(const GruCellParams &P, const float *Pre,
                          const float *Rec, const float *RecH,
                          const float *RecBias, float *Hidden, float *Out,
                          cudaStream_t Stream) {
  if (P.Batch < 0 || P.Hidden < 0 || !Pre || !Hidden ||
      (P.Stage == GruCellParams::Reset && !Out) ||
      (P.Stage == GruCellParams::Gates && P.LinearBeforeReset && !RecBias))
    return cudaErrorInvalidValue;
  const int64_t Count = P.Batch * P.Hidden;
  if (Count == 0)
    return cudaSuccess;
  gruCellKernel<<<getBlocks(Count, Threads), Threads, 0, Stream>>>(
      P, Pre, Rec, RecH, RecBias, Hidden, Out);
  return cudaGetLastError();
}

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
