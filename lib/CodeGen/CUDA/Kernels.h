//===- Kernels.h - The CUDA backend's own kernels ---------------*- C++ -*-===//
//
// Private to lib/CodeGen/CUDA. Every kernel the backend launches itself
// (everything but convolutions and GEMMs, which go to cuDNN and cuBLASLt):
// a parameter struct the host-side lowering fills with static shapes and
// element strides, and a launcher that enqueues the kernel on a stream.
// Parameter structs are plain data: the lowering is tested on machines
// without a GPU by inspecting them.
//
// Conventions:
// - Shapes and strides are in elements, in physical order (outermost
//   first) unless a field says otherwise; a stride of 0 broadcasts.
// - Activations are f32, f16 or bf16 (DType); arithmetic is f32 in
//   registers whatever the storage type; per-channel parameters (scale,
//   bias, normalization weights) are f32.
// - Launchers never allocate or synchronize: they are captured into a
//   CUDA graph. They return the launch's status (cudaGetLastError).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_KERNELS_H
#define STRIDER_LIB_CODEGEN_CUDA_KERNELS_H

#include "strider/CodeGen/Activation.h"
#include "strider/CodeGen/BinaryOp.h"
#include "strider/Runtime/GridSampling.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace strider {
namespace cuda {

/// Storage type of a tensor on the device.
enum class DType : uint8_t { F32, F16, BF16 };
inline size_t getDTypeBytes(DType T) { return T == DType::F32 ? 4 : 2; }
const char *getDTypeName(DType T); ///< "f32", "f16", "bf16"

constexpr int MaxRank = 6;

/// What a kernel found wrong in a run's data where the CPU backend stops
/// the run with an error: an index out of range, a sequence length outside
/// [0, seq]. The kernel goes on (a gather gives 0, a scatter skips the
/// update, a length is clamped) and the first report of the run wins
/// (reportRunError; of several bad values, which one is reported depends
/// on the order the threads run in); the program reads it back after the
/// run and fails the run with it.
struct RunError {
  enum Kind : int32_t { None = 0, Index = 1, SequenceLength = 2 };
  int32_t Step = -1; ///< The plan step that reported; -1: none.
  int32_t What = None;
  int64_t Value = 0, Bound = 0; ///< The index or length, and its bound.
};

//===----------------------------------------------------------------------===//
// Data movement (DataMovementKernels.cu, CopyPlan.cpp)
//===----------------------------------------------------------------------===//

/// Y[i] = convert(X[i]) for every index i of Shape, with element strides
/// on both sides: relayouts, Transpose, Concat/Split/Slice copies, Expand
/// and Tile (zero X strides), and Cast between float types.
struct CopyParams {
  int Rank = 0;
  int64_t Shape[MaxRank] = {};
  int64_t XStrides[MaxRank] = {}, YStrides[MaxRank] = {};
  DType XType = DType::F32, YType = DType::F32;
};

/// How launchCopy runs a copy, decided on the host (planCopy) so that it
/// is tested without a GPU.
enum class CopyStrategy : uint8_t {
  Contiguous,  ///< Both sides dense in the same order: a flat copy.
  Transpose2D, ///< Batch of Rows x Cols -> Cols x Rows: shared-memory tiles.
  Generic,     ///< Any strides: one thread per output element.
};
struct CopyPlan {
  CopyStrategy Strategy = CopyStrategy::Generic;
  /// The copy after merging dims that are contiguous on both sides and
  /// dropping unit dims (Rank 0: a single element).
  CopyParams Params;
  /// Transpose2D: Y[b][c][r] = X[b][r][c] for b < Batch (the batch dims
  /// are Params' outer dims), with X row stride XRowStride and Y row
  /// stride YRowStride; the inner unit stride is implied.
  int64_t Rows = 0, Cols = 0, Batch = 1;
  int64_t XRowStride = 0, YRowStride = 0;
  /// Contiguous and Transpose2D: elements per 16-byte access on both
  /// sides (1 when alignment or sizes do not allow vectors).
  int Vector = 1;
};
/// Plans \p P: simplifies the dims and picks a strategy. Pointers to the
/// data are assumed 16-byte aligned plus the offsets the strides imply.
CopyPlan planCopy(const CopyParams &P);
cudaError_t launchCopy(const CopyPlan &P, const void *X, void *Y,
                       cudaStream_t S);

/// Pad (ONNX modes) of a tensor of physical shape XShape into YShape:
/// Y index i reads X index i - Begin (per physical dim), or Value /
/// reflection / the edge outside X. Both dense in the same physical order.
struct PadParams {
  enum Mode : uint8_t { Constant, Reflect, Edge };
  int Rank = 0;
  int64_t XShape[MaxRank] = {}, YShape[MaxRank] = {};
  int64_t Begin[MaxRank] = {}; ///< May be negative (crops).
  Mode PadMode = Constant;
  float Value = 0.0f;
  DType Type = DType::F32;
};
cudaError_t launchPad(const PadParams &P, const void *X, void *Y,
                      cudaStream_t S);

/// Resize as separable per-axis sampling (runtime::ResizeSampling): for
/// each of the up to 3 innermost logical spatial axes, every output
/// position reads Taps input positions with weights. The tables are
/// device arrays the lowering uploads with the weights: Index[a] and
/// Weight[a] hold Out[a] * Taps[a] entries. An output position whose first
/// tap along some axis has index -1 lies outside the input
/// (tf_crop_and_resize) and holds Extrapolation.
struct ResizeParams {
  int64_t N = 1, C = 1;
  int Spatial = 2; ///< 1..3
  int64_t In[3] = {1, 1, 1}, Out[3] = {1, 1, 1};
  int Taps[3] = {1, 1, 1};
  const int32_t *Index[3] = {};
  const float *Weight[3] = {};
  bool ChannelsLast = false; ///< X and Y in N, spatial..., C order.
  DType Type = DType::F32;
  float Extrapolation = 0.0f;
};
cudaError_t launchResize(const ResizeParams &P, const void *X, void *Y,
                         cudaStream_t S);

//===----------------------------------------------------------------------===//
// Elementwise (ElementwiseKernels.cu)
//===----------------------------------------------------------------------===//

using codegen::BinaryOp;

/// Y = Act(A op B) over Y's dense physical shape; A and B read with
/// broadcast strides in Y's physical order. Op None: Y = Act(A) (B is
/// ignored). AType must be YType, and BType YType or F32 (else
/// cudaErrorInvalidValue).
struct ElementwiseParams {
  BinaryOp Op = BinaryOp::None;
  codegen::Activation Act;
  int Rank = 0;
  int64_t Shape[MaxRank] = {};
  int64_t AStrides[MaxRank] = {}, BStrides[MaxRank] = {};
  DType AType = DType::F32, BType = DType::F32, YType = DType::F32;
};
cudaError_t launchElementwise(const ElementwiseParams &P, const void *A,
                              const void *B, void *Y, cudaStream_t S);

//===----------------------------------------------------------------------===//
// Typed elementwise ops: integers, bools and masks (LogicKernels.cu)
//===----------------------------------------------------------------------===//

/// Storage types of the typed kernel: the float types and the index,
/// mask and byte types the other kernels do not hold (bool is one byte, 0
/// or 1).
enum class ScalarType : uint8_t {
  F32,
  F16,
  BF16,
  I32,
  I64,
  Bool,
  I8,
  U8,
  F64,
  I16,
  U16,
  U32,
  /// Held in the kernel's int64 arithmetic by its bits: wrapping +, -, *
  /// alike; orders, division and conversions to floats as unsigned.
  U64,
};

/// Whether \p T is one of the float storage types, and which (into \p Out).
inline bool toDType(ScalarType T, DType &Out) {
  switch (T) {
  case ScalarType::F32:
    Out = DType::F32;
    return true;
  case ScalarType::F16:
    Out = DType::F16;
    return true;
  case ScalarType::BF16:
    Out = DType::BF16;
    return true;
  default:
    return false;
  }
}
inline ScalarType toScalarType(DType T) {
  return T == DType::F32   ? ScalarType::F32
         : T == DType::F16 ? ScalarType::F16
                           : ScalarType::BF16;
}

/// What the typed kernel computes per element (DeviceMath.h: evalTyped),
/// with the reference interpreter's semantics:
///   Cast                Y = A converted (floats to integers truncate,
///                       anything to bool is != 0, to f16/bf16 rounds)
///   Add..Min            integer arithmetic, wrapping; Div truncates and
///                       x / 0 = 0; of f64, in double
///   Pow                 an integer base to an integer power (wrapping,
///                       exact; negative powers give 0 but for bases 1
///                       and -1), else in double, converted to Y (the
///                       base's type)
///   Equal..GreaterEqual comparisons (integers exactly, floats as values)
///   And, Or, Not        of bools
///   Where               Y = C ? A : B (operand 0 the condition)
///   Gather              Y = A at offset (position through Strides[0]) +
///                       index * AxisStride, the index B's element at the
///                       position (Gather by run-time indices,
///                       GatherElements); an index outside [-AxisSize,
///                       AxisSize) gives 0 and is reported (RunError)
///   Scatter             ScatterElements, in place on Y
///                       (a copy of the data): one thread per row along
///                       Axis of Shape (the indices' shape) stores the
///                       updates B of the row in order (a repeated index
///                       keeps the last), at Y offset (position through
///                       Strides[2]) + index * AxisStride, index from A;
///                       indices out of range are skipped and
///                       reported; with a
///                       Reduction, the update is combined with what Y
///                       holds (add, mul, max, min), in the same order
///   ArgMax, ArgMin      one thread per row along Axis of Shape (the
///                       data's shape), or a block for long rows
///                       (useArgRowBlocks): the position of the first
///                       extreme of the row (the last with SelectLast),
///                       stored as i64 at Y offset (position through
///                       Strides[2], whose Axis entry is 0); NaN is never
///                       an extreme but in first place, as in the
///                       reference
///   Pad                 Y = A at the position getPadSourceIndex maps
///                       each dim to (through Strides[0]), or the fill
///                       where a Constant pad leaves the input (Pad of
///                       integers, bools and f64)
///   TopK                the K largest (or smallest) of each row along
///                       Axis of Shape (the data's shape) in order (NaN
///                       above every number, ties by lower position),
///                       values to Y at (position through Strides[2]) +
///                       j * Strides[2][Axis] and their i64 positions to
///                       Y2 through Strides[1]: one thread per row
///                       inserting into the output row (O(row length x
///                       K)), or by ranks for long rows (useTopKRanks)
///   Neg, Abs            of integers (wrapping: -INT64_MIN is itself) and
///                       f64
///   Reduce              one thread per row along Axis of Shape (the
///                       data's shape): the row combined by Reduction
///                       (Add: ReduceSum, Mul: ReduceProd, Max, Min) in
///                       order, integers wrapping, f64 in double, stored at
///                       Y offset (position through Strides[2], whose Axis
///                       entry is 0)
///   Trilu               Y = A, or 0 below (Upper) or above diagonal k of
///                       each matrix (the last two dims of Shape, Y dense
///                       row-major); k is B's first element with two
///                       operands, else K
///   Contract            Einsum of integers or f64: Y = the sum over the
///                       summed labels (SumShape, operand k's strides
///                       SumStrides[k]) of A's element, times B's with two
///                       operands; integers wrapping, f64 in double, in
///                       row-major order of the summed labels
enum class TypedOp : uint8_t {
  Cast,
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,
  Pow,
  Equal,
  Less,
  LessEqual,
  Greater,
  GreaterEqual,
  And,
  Or,
  Not,
  Where,
  Gather,
  Scatter,
  ArgMax,
  ArgMin,
  TopK,
  Pad,
  Neg,
  Abs,
  Sign,
  Mod,  ///< The remainder with the divisor's sign (integers).
  FMod, ///< The truncated remainder (C's fmod), of any number.
  ShiftLeft,
  ShiftRight,
  Xor,
  IsNaN,
  IsInf,      ///< Of the signs DetectNegative and DetectPositive select.
  CumSum,     ///< Running sums along Axis (Exclusive, Reverse).
  Math,       ///< Act of f64 elements, in double.
  Quantize,   ///< QuantizeLinear: In[1] the scale, In[2] the zero point.
  Dequantize, ///< DequantizeLinear, the same operands.
  GatherND,   ///< A thread per result element (the Nd* fields).
  ScatterND,  ///< A row op: a thread per slice element, over the tuples.
  Reduce,
  Contract,
  Trilu,
  GridSample, ///< A thread per result element (the Grid* fields).
};

/// How a Scatter combines an update with what Y holds.
enum class ScatterReduction : uint8_t { None, Add, Mul, Max, Min };

/// Y (dense in its physical order, Shape) = Op of up to three operands,
/// each read through broadcast strides in Y's physical order.
struct TypedParams {
  TypedOp Op = TypedOp::Cast;
  int Rank = 0;
  int64_t Shape[MaxRank] = {};
  int64_t Strides[3][MaxRank] = {};
  ScalarType In[3] = {ScalarType::F32, ScalarType::F32, ScalarType::F32};
  ScalarType Y = ScalarType::F32;
  int NumOperands = 1;
  /// Gather and Scatter: the indexed dim (Scatter, ArgMax/ArgMin, TopK:
  /// of Shape, the dim the rows run along).
  int Axis = 0;
  int64_t AxisSize = 0, AxisStride = 0;
  ScatterReduction Reduction = ScatterReduction::None;
  bool SelectLast = false; ///< ArgMax/ArgMin: the last extreme.
  bool Largest = true;     ///< TopK.
  bool Upper = true;       ///< Trilu.
  bool DetectNegative = true, DetectPositive = true; ///< IsInf.
  bool Exclusive = false, Reverse = false;           ///< CumSum.
  codegen::Activation Act;                           ///< Math.
  /// GatherND and ScatterND: index tuples of NdRank i64 entries (In[1] for
  /// GatherND, In[0] for ScatterND) into row-major data, tuple T naming in
  /// batch T / NdTuplesPerBatch (NdBatchStride elements apart) the slice of
  /// NdSlice elements at the sum of its indices times NdStrides (each
  /// index within NdDims).
  int NdRank = 0;
  int64_t NdDims[MaxRank] = {}, NdStrides[MaxRank] = {};
  int64_t NdSlice = 1, NdTuplesPerBatch = 1, NdBatchStride = 0;
  int64_t K = 0;           ///< TopK: values per row; Trilu: the diagonal.
  int32_t PlanStep = -1;   ///< The step's index, for RunError reports.
  /// Pad: per dim of Shape (Y's physical order), X's extent and the pad
  /// before it (negative: a crop); the mode and, for Constant, the fill
  /// (as an integer for integer types, exactly).
  int64_t PadXShape[MaxRank] = {}, PadBegin[MaxRank] = {};
  PadParams::Mode PadMode = PadParams::Constant;
  double PadFill = 0;
  int64_t PadFillInt = 0;
  /// Cast: Y's element of a position at (the position through
  /// Strides[2]) instead of dense (a copy into a Concat's part of Y).
  bool StridedY = false;
  /// Contract: the summed labels' extents and, per operand, its strides
  /// along them.
  int SumRank = 0;
  int64_t SumShape[MaxRank] = {};
  int64_t SumStrides[2][MaxRank] = {};
  /// GridSample: Y (Shape) is N x C x OH x OW row-major, the grid (In[1])
  /// N x OH x OW x 2 row-major, X (In[0]) GridH x GridW images at element
  /// strides GridXStrides (n, c, y, x).
  gridsample::Options Grid;
  int64_t GridXStrides[4] = {};
  int64_t GridH = 0, GridW = 0;
};
/// Y2 is TopK's second result (the positions); null for the other ops.
/// Gathers and scatters report an index out of range to \p Err (if not
/// null).
cudaError_t launchTyped(const TypedParams &P, const void *A, const void *B,
                        const void *C, void *Y, void *Y2, RunError *Err,
                        cudaStream_t S);

/// Y = Act(X * Scale[c] + Bias[c] + Residual) over Count elements, channel
/// c = (i / ChannelStride) % Channels (NCHW: ChannelStride = pixels; NHWC:
/// 1). Scale, Bias and Residual may be null; X may equal Y. What follows
/// a library conv or GEMM that could not fuse its epilogue, and
/// BatchNormalization in inference form. XType, YType and (with a
/// Residual) ResidualType must agree.
struct EpilogueParams {
  int64_t Count = 0;
  int64_t Channels = 1, ChannelStride = 1;
  codegen::Activation Act;
  DType XType = DType::F32, ResidualType = DType::F32, YType = DType::F32;
};
cudaError_t launchEpilogue(const EpilogueParams &P, const void *X,
                           const float *Scale, const float *Bias,
                           const void *Residual, void *Y, cudaStream_t S);

//===----------------------------------------------------------------------===//
// Pooling, normalization, softmax, reductions (ReductionKernels.cu,
// PoolingKernels.cu)
//===----------------------------------------------------------------------===//

/// MaxPool / AveragePool over 1-3 spatial dims, NCHW or NHWC (X and Y in
/// the same order). Output o of a spatial axis reads input positions
/// o * Stride - PadBegin + k * Dilation, k < Kernel, that lie inside the
/// input; an average divides by their number, or with CountIncludePad by
/// the number of positions inside the padded input [-PadBegin, In +
/// PadEnd) (a ceil_mode window may reach past it). A window with nothing
/// to read gives -inf (max) or NaN (average). MaxPool may also write its
/// Indices result (i64, in Y's order; DeviceMath.h: evalPool) and may be
/// of i8 or u8 elements.
struct PoolParams {
  bool Max = true;
  bool CountIncludePad = false;
  int Spatial = 2;
  int64_t N = 1, C = 1;
  int64_t In[3] = {1, 1, 1}, Out[3] = {1, 1, 1};
  int64_t Kernel[3] = {1, 1, 1}, Stride[3] = {1, 1, 1};
  int64_t Dilation[3] = {1, 1, 1}, PadBegin[3] = {0, 0, 0};
  int64_t PadEnd[3] = {0, 0, 0};
  bool ChannelsLast = false;
  /// X and Y: F32, F16, BF16, or for MaxPool I8 or U8.
  ScalarType Type = ScalarType::F32;
  /// Indices: the spatial dims column-major (ONNX storage_order 1).
  bool IndicesColumnMajor = false;
};
/// \p Indices (MaxPool only) may be null.
cudaError_t launchPool(const PoolParams &P, const void *X, void *Y,
                       int64_t *Indices, cudaStream_t S);

/// A reduction over the middle of Outer x Reduced x Inner (dense):
/// Y[o][i] = reduce_r X[o][r][i]. Covers GlobalAveragePool/GlobalMaxPool
/// (NCHW: Outer=N*C, Inner=1; NHWC: Outer=N, Reduced=pixels, Inner=C) and
/// ReduceX over a contiguous block of physical dims. Here and in
/// SoftmaxParams and NormParams, XType must be YType.
struct ReduceParams {
  enum Kind : uint8_t { Sum, Mean, Max, Min, Prod, L2, SumSquare };
  Kind Op = Sum;
  int64_t Outer = 1, Reduced = 1, Inner = 1;
  DType XType = DType::F32, YType = DType::F32;
};
cudaError_t launchReduce(const ReduceParams &P, const void *X, void *Y,
                         cudaStream_t S);

/// Softmax / LogSoftmax along the middle of Outer x Axis x Inner (dense).
struct SoftmaxParams {
  int64_t Outer = 1, Axis = 1, Inner = 1;
  bool Log = false;
  DType XType = DType::F32, YType = DType::F32;
};
cudaError_t launchSoftmax(const SoftmaxParams &P, const void *X, void *Y,
                          cudaStream_t S);

/// Normalizes the Reduced elements of every (o, i) of Outer x Reduced x
/// Inner (dense) to zero mean and unit variance, then scales: Y = (X -
/// mean) / sqrt(var + Epsilon) * Scale[k] + Bias[k], k = the affine index:
/// LayerNormalization (Inner = 1, k = r), InstanceNormalization NCHW
/// (Outer = N*C, Inner = 1, k = o % Channels) and NHWC (Outer = N,
/// Reduced = pixels, Inner = C, k = i). Scale and Bias may be null.
struct NormParams {
  int64_t Outer = 1, Reduced = 1, Inner = 1;
  enum AffineIndex : uint8_t { ByReduced, ByOuterChannel, ByInner };
  AffineIndex Affine = ByReduced;
  int64_t Channels = 1; ///< ByOuterChannel: k = o % Channels.
  float Epsilon = 1e-5f;
  codegen::Activation Act;
  DType XType = DType::F32, YType = DType::F32;
};
/// \p Mean and \p InvStd (f32, dense Outer x Inner; either may be null)
/// receive each line's mean and 1 / sqrt(var + Epsilon):
/// LayerNormalization's second and third results.
cudaError_t launchNorm(const NormParams &P, const void *X, const float *Scale,
                       const float *Bias, void *Y, float *Mean, float *InvStd,
                       cudaStream_t S);

/// BatchNormalization in training mode, its statistics: per channel c,
/// the mean and biased variance of X (N x C x Pixels, or N x Pixels x C
/// with ChannelsLast) over N and the pixels, accumulated in double. Writes
/// Scale[c] = Gamma[c] / sqrt(var + Epsilon) and Shift[c] = Beta[c] - mean
/// * Scale[c] (f32: the epilogue then normalizes X with them) and, where
/// not null, the running statistics RunMean[c] = InMean[c] * Momentum +
/// mean * (1 - Momentum) and RunVar[c] likewise. One block per channel.
struct BatchStatsParams {
  int64_t N = 1, C = 1, Pixels = 1;
  bool ChannelsLast = false;
  DType Type = DType::F32;
  float Epsilon = 1e-5f, Momentum = 0.9f;
};
cudaError_t launchBatchStats(const BatchStatsParams &P, const void *X,
                             const float *Gamma, const float *Beta,
                             const float *InMean, const float *InVar,
                             float *Scale, float *Shift, float *RunMean,
                             float *RunVar, cudaStream_t S);
/// Threads of a BatchStats block.
constexpr int BatchStatsThreads = 256;

/// LRN across channels, X and Y of one layout seen as [Outer][Len][Inner]
/// in physical order with the channels as Len (NCHW: Inner = pixels; NHWC:
/// Inner = 1): y = x * (Bias + Alpha / Size * s)^-Beta, s the sum of x^2
/// over channels c - (Size - 1) / 2 .. c + Size / 2 that exist.
struct LrnParams {
  int64_t Outer = 1, Len = 1, Inner = 1, Size = 1;
  float Alpha = 1e-4f, Beta = 0.75f, Bias = 1.0f;
  DType Type = DType::F32;
};
cudaError_t launchLrn(const LrnParams &P, const void *X, void *Y,
                      cudaStream_t S);

//===----------------------------------------------------------------------===//
// Recurrences (RecurrentKernels.cu)
//===----------------------------------------------------------------------===//

/// Where one step of a recurrence's direction reads its input projection
/// and writes Y. Step is the step's number in the direction's order; with
/// no sequence lengths every batch entry runs at time t = Step (forward)
/// or Seq - 1 - Step (reverse). With lengths (Lens, one LensType entry per
/// batch entry, clamped to [0, Seq] and reported to the RunError outside
/// it), entry b runs at t = Step or Len_b - 1 - Step while Step <
/// Len_b; past its length it keeps its states (zero when there are none
/// yet) and writes zeros to Y at time Step, so that every time from Len_b
/// on is zero once the direction is done. The input projection's row of
/// (t, b) is at Pre + t * PreTimeStride + b * PreRowStride, Y's at Y + t *
/// YTimeStride + b * YBatchStride.
struct RecurrentStep {
  int64_t Step = 0, Seq = 1;
  bool Backward = false;
  int64_t PreTimeStride = 0, PreRowStride = 0;
  int64_t YTimeStride = 0, YBatchStride = 0;
  ScalarType LensType = ScalarType::I32;
  int32_t PlanStep = -1; ///< The step's index, for RunError reports.
};

/// The elementwise half of one LSTM step of one direction, f32, one thread
/// per (batch entry, hidden unit): gate pre-activations (i, o, f, c, H
/// apart) from the input projection (Time), plus the recurrent product Rec
/// (Batch x 4H, dense; none on a first step without an initial state); the
/// default nonlinearities (sigmoid, tanh, tanh), clipping, input_forget
/// and peepholes (i, o, f); the cell and hidden states (Batch x H, dense)
/// updated in place (a first step without an initial state reads no cell
/// state), and the hidden state also written to Y when there is a Y.
struct LstmCellParams {
  int64_t Batch = 1, Hidden = 1;
  RecurrentStep Time;
  bool HasCellState = true;
  bool InputForget = false;
  float Clip = 0; ///< 0: none.
};
cudaError_t launchLstmCell(const LstmCellParams &P, const float *Pre,
                           const float *Rec, const float *Peep, float *Cell,
                           float *Hidden, float *Y, const void *Lens,
                           RunError *Err, cudaStream_t S);

/// One GRU step of one direction, f32, one thread per (batch entry,
/// hidden unit), in one of two stages. Pre holds the input projection's
/// gates z, r, h (H apart) at the rows Time says; Rec the recurrent
/// product's z and r (and, with linear_before_reset, h) gates, row b at
/// Rec + b * RecRowStride; RecH its h gate, row b at RecH + b *
/// RecRowStride (with linear_before_reset: Rec + 2H) or, without, the
/// product of the reset hidden state by R's h rows (dense Batch x H). A
/// first step without an initial state has no Rec, RecH or state (zeros).
///   Reset: Out = sigmoid(Pre_r + Rec_r) * Hidden (the reset hidden
///     state, dense Batch x H), without linear_before_reset;
///   Gates: z = sigmoid(Pre_z + Rec_z), h~ = tanh(Pre_h + RecH) or, with
///     linear_before_reset, tanh(Pre_h + r * (RecH + RecBias)); Hidden =
///     (1 - z) * h~ + z * Hidden in place, and Out (Y) at the row Time
///     says when there is an Out.
/// Pre-activations are clipped to [-Clip, Clip] when Clip > 0.
struct GruCellParams {
  enum StageKind : uint8_t { Reset, Gates };
  StageKind Stage = Gates;
  int64_t Batch = 1, Hidden = 1;
  RecurrentStep Time;
  int64_t RecRowStride = 0;
  bool HasState = true;
  bool LinearBeforeReset = false;
  float Clip = 0;
};
cudaError_t launchGruCell(const GruCellParams &P, const float *Pre,
                          const float *Rec, const float *RecH,
                          const float *RecBias, float *Hidden, float *Out,
                          const void *Lens, RunError *Err, cudaStream_t S);

/// Every step of one LSTM or GRU direction in one launch, for recurrences
/// small enough that R stays in cache between steps (useRecurrenceLoop):
/// one block runs the steps in order. Each step: the recurrent product
/// Rec = Hidden x R^T (R row-major RecCols x Hidden, Rec dense Batch x
/// RecCols; none on a first step without a state), a barrier, then what
/// the per-step kernels compute (evalLstmCell, or evalGruCell; GRU without
/// linear_before_reset first runs the reset stage into Reset, a barrier,
/// RecH = Reset x RH^T, a barrier), and a barrier. The cell parameters are
/// step 0's; Time.Step and the state flags follow the step. Replaces 2 to
/// 4 launches per step with one per direction.
struct RecurrenceLoopParams {
  bool IsGru = false;
  LstmCellParams Lstm; ///< LSTM: step 0's.
  GruCellParams Gru;   ///< GRU: step 0's, Stage Gates.
  int64_t RecCols = 0; ///< Rows of R: 4H, 3H (linear_before_reset) or 2H.
  bool FirstHasState = false; ///< Whether step 0 has an initial state.
};
cudaError_t launchRecurrenceLoop(const RecurrenceLoopParams &P,
                                 const float *Pre, const float *R,
                                 const float *RH, const float *Peep,
                                 const float *RecBias, float *Rec, float *RecH,
                                 float *Reset, float *Cell, float *Hidden,
                                 float *Y, const void *Lens, RunError *Err,
                                 cudaStream_t S);
/// Threads of a RecurrenceLoop block.
constexpr int RecurrenceLoopThreads = 512;
/// Whether a direction of \p Batch entries of \p Hidden units whose
/// recurrent products read \p RBytes of R per step runs as one
/// RecurrenceLoop launch: what one block streams per step (R once per
/// batch entry) at most 512 KiB. Larger recurrences keep a GEMM per step,
/// which spreads over the device.
inline bool useRecurrenceLoop(int64_t Batch, int64_t RBytes) {
  return Batch * RBytes <= 512 * 1024;
}

//===----------------------------------------------------------------------===//
// The launchers as a table
//===----------------------------------------------------------------------===//

/// The launchers above as a table: the device's (getDeviceLaunchers) or
/// the same .cu code compiled for the host (OnHost/: onhost::getLaunchers),
/// so that one function maps a plan step to its launch for both
/// (launchKernelStep, PlanImpl.h).
struct KernelLaunchers {
  decltype(&launchCopy) Copy = nullptr;
  decltype(&launchPad) Pad = nullptr;
  decltype(&launchResize) Resize = nullptr;
  decltype(&launchElementwise) Elementwise = nullptr;
  decltype(&launchTyped) Typed = nullptr;
  decltype(&launchEpilogue) Epilogue = nullptr;
  decltype(&launchPool) Pool = nullptr;
  decltype(&launchReduce) Reduce = nullptr;
  decltype(&launchSoftmax) Softmax = nullptr;
  decltype(&launchNorm) Norm = nullptr;
  decltype(&launchBatchStats) BatchStats = nullptr;
  decltype(&launchLrn) Lrn = nullptr;
  decltype(&launchLstmCell) LstmCell = nullptr;
  decltype(&launchGruCell) GruCell = nullptr;
  decltype(&launchRecurrenceLoop) RecurrenceLoop = nullptr;
};
const KernelLaunchers &getDeviceLaunchers();

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_KERNELS_H
