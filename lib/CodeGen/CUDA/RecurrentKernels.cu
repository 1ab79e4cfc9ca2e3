//===- RecurrentKernels.cu - LSTM and GRU gate steps ----------------------===//
//
// The elementwise half of an LSTM or GRU step: the GEMMs (input projection
// of every step, recurrent products of each) are cuBLASLt steps of the
// plan; these kernels turn their sums into the new states (and GRU's reset
// hidden state), one thread per (batch entry, hidden unit), reading the
// gates of its unit H apart. What a thread computes is DeviceMath.h's
// evalLstmCell / evalGruCell, which the host tests run too.
//
// Small recurrences run a whole direction in one launch instead
// (recurrenceLoopKernel): one block, the recurrent products by its
// threads (evalRowProducts: R is read from cache on every step), barriers
// between the phases of a step.
//
//===----------------------------------------------------------------------===//

#include "DeviceMath.h"
#include "DeviceTypes.cuh"

namespace strider {
namespace cuda {
STRIDER_KERNELS_NAMESPACE_BEGIN
namespace {

constexpr int Threads = 256;

__global__ void __launch_bounds__(Threads)
    lstmCellKernel(LstmCellParams P, const float *Pre, const float *Rec,
                   const float *Peep, float *Cell, float *Hidden, float *Y,
                   const void *Lens, RunError *Err) {
  const int64_t Count = P.Batch * P.Hidden;
  const int64_t Step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t I = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; I < Count;
       I += Step)
    evalLstmCell(P, Pre, Rec, Peep, Cell, Hidden, Y, Lens, Err, I);
}

__global__ void __launch_bounds__(Threads)
    gruCellKernel(GruCellParams P, const float *Pre, const float *Rec,
                  const float *RecH, const float *RecBias, float *Hidden,
                  float *Out, const void *Lens, RunError *Err) {
  const int64_t Count = P.Batch * P.Hidden;
  const int64_t Step = int64_t(gridDim.x) * blockDim.x;
  for (int64_t I = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; I < Count;
       I += Step)
    evalGruCell(P, Pre, Rec, RecH, RecBias, Hidden, Out, Lens, Err, I);
}

struct BlockBarrier {
  __device__ void operator()() const { __syncthreads(); }
};

/// All steps of one direction (RecurrenceLoopParams), in one block.
__global__ void __launch_bounds__(RecurrenceLoopThreads)
    recurrenceLoopKernel(RecurrenceLoopParams P, const float *Pre,
                         const float *R, const float *RH, const float *Peep,
                         const float *RecBias, float *Rec, float *RecH,
                         float *Reset, float *Cell, float *Hidden, float *Y,
                         const void *Lens, RunError *Err) {
  evalRecurrenceLoop(P, Pre, R, RH, Peep, RecBias, Rec, RecH, Reset, Cell,
                     Hidden, Y, Lens, Err, threadIdx.x, blockDim.x,
                     BlockBarrier());
}

} // namespace

cudaError_t launchRecurrenceLoop(const RecurrenceLoopParams &P,
                                 const float *Pre, const float *R,
                                 const float *RH, const float *Peep,
                                 const float *RecBias, float *Rec, float *RecH,
                                 float *Reset, float *Cell, float *Hidden,
                                 float *Y, const void *Lens, RunError *Err,
                                 cudaStream_t Stream) {
  const int64_t Batch = P.IsGru ? P.Gru.Batch : P.Lstm.Batch;
  const int64_t H = P.IsGru ? P.Gru.Hidden : P.Lstm.Hidden;
  const bool Lbr = P.IsGru && P.Gru.LinearBeforeReset;
  if (Batch < 0 || H < 0 || P.RecCols < 0 ||
      (P.IsGru && !Lbr && (!RH || !RecH || !Reset)) || (!P.IsGru && !Cell) ||
      (Lbr && !RecBias) || !Hidden || !Pre || !R || !Rec)
    return cudaErrorInvalidValue;
  if (Batch * H == 0)
    return cudaSuccess;
  return launchKernel(recurrenceLoopKernel, 1, RecurrenceLoopThreads, 0, Stream,
                      P, Pre, R, RH, Peep, RecBias, Rec, RecH, Reset, Cell,
                      Hidden, Y, Lens, Err);
}

cudaError_t launchGruCell(const GruCellParams &P, const float *Pre,
                          const float *Rec, const float *RecH,
                          const float *RecBias, float *Hidden, float *Out,
                          const void *Lens, RunError *Err,
                          cudaStream_t Stream) {
  if (P.Batch < 0 || P.Hidden < 0 || !Pre || !Hidden ||
      (P.Stage == GruCellParams::Reset && !Out) ||
      (P.Stage == GruCellParams::Gates && P.LinearBeforeReset && !RecBias))
    return cudaErrorInvalidValue;
  const int64_t Count = P.Batch * P.Hidden;
  if (Count == 0)
    return cudaSuccess;
  return launchKernel(gruCellKernel, getBlocks(Count, Threads), Threads, 0,
                      Stream, P, Pre, Rec, RecH, RecBias, Hidden, Out, Lens,
                      Err);
}

cudaError_t launchLstmCell(const LstmCellParams &P, const float *Pre,
                           const float *Rec, const float *Peep, float *Cell,
                           float *Hidden, float *Y, const void *Lens,
                           RunError *Err, cudaStream_t Stream) {
  if (P.Batch < 0 || P.Hidden < 0 || !Pre || !Cell || !Hidden)
    return cudaErrorInvalidValue;
  const int64_t Count = P.Batch * P.Hidden;
  if (Count == 0)
    return cudaSuccess;
  return launchKernel(lstmCellKernel, getBlocks(Count, Threads), Threads, 0,
                      Stream, P, Pre, Rec, Peep, Cell, Hidden, Y, Lens, Err);
}

STRIDER_KERNELS_NAMESPACE_END
} // namespace cuda
} // namespace strider
