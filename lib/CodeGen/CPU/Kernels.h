//===- Kernels.h - CPU kernel entry points (internal) -----------*- C++ -*-===//
//
// Private to lib/CodeGen/CPU. The SIMD kernels besides the GEMM, each
// dispatched at run time to the machine's best Highway target, and the
// plain data-movement kernels. Every kernel takes raw buffers and element
// strides; results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CPU_KERNELS_H
#define STRIDER_LIB_CODEGEN_CPU_KERNELS_H

#include "Activation.h"
#include "strider/CodeGen/BinaryOp.h"
#include "strider/Runtime/GridSampling.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace strider {
namespace cpu {

/// A depthwise convolution of one image, channels contiguous (stride 1)
/// in input and output; spatial dims normalized to 3.
/// A conv's window over its spatial dims (d, h, w; fewer dims are 1 and
/// come first).
struct ConvWindow {
  int64_t In[3], Out[3], Kernel[3], Stride[3], Dilation[3], Pad[3];
  int64_t XS[3], YS[3]; ///< Element strides of the spatial dims.
};

/// The taps along d and h [Lo, Hi) that lie inside the input for output
/// row (\p OD, \p OH), and the input row and plane of the window's origin
/// (Base): the same for every pixel of the row.
struct RowTaps {
  int64_t Lo[2], Hi[2], Base[2];
};
inline RowTaps getRowTaps(const ConvWindow &P, int64_t OD, int64_t OH) {
  RowTaps R;
  const int64_t RowPos[2] = {OD, OH};
  for (int Dm = 0; Dm < 2; ++Dm) {
    R.Base[Dm] = RowPos[Dm] * P.Stride[Dm] - P.Pad[Dm];
    R.Lo[Dm] = 0;
    while (R.Lo[Dm] < P.Kernel[Dm] &&
           R.Base[Dm] + R.Lo[Dm] * P.Dilation[Dm] < 0)
      ++R.Lo[Dm];
    R.Hi[Dm] = P.Kernel[Dm];
    while (R.Hi[Dm] > R.Lo[Dm] &&
           R.Base[Dm] + (R.Hi[Dm] - 1) * P.Dilation[Dm] >= P.In[Dm])
      --R.Hi[Dm];
  }
  return R;
}

struct DepthwiseParams : ConvWindow {
  int64_t Channels = 0;
  int64_t WeightStride = 0; ///< Floats between taps of the packed weight.
};
/// \p W is tap-major ([tap][channel], channels padded to WeightStride),
/// \p Bias padded likewise; \p Residual (laid out as Y) may be null.
void runDepthwise(const DepthwiseParams &P, const float *X, const float *W,
                  const float *Bias, const float *Residual,
                  const Activation &Act, float *Y, int Threads);
/// The same for channels at any stride (\p XC in X, \p YC in Y and the
/// residual): one channel plane at a time, rows accumulated along the
/// output's last dim.
void runDepthwisePlanar(const DepthwiseParams &P, int64_t XC, int64_t YC,
                        const float *X, const float *W, const float *Bias,
                        const float *Residual, const Activation &Act, float *Y,
                        int Threads);

/// A group-1 conv with few input channels times taps whose output
/// channels are contiguous (YS are the output's spatial strides, channel
/// stride 1), its input read through strides (XC between channels).
struct DirectConvParams : ConvWindow {
  int64_t Cin = 0, Cout = 0;
  int64_t XC = 0;           ///< Elements between input channels.
  int64_t WeightStride = 0; ///< Floats between the packed weight's rows.
};
/// \p W has one row per (input channel, tap), channel-major, each of
/// Cout weights padded to WeightStride, a multiple of 64; \p Bias padded
/// likewise; \p Residual (laid out as Y) may be null.
void runDirectConv(const DirectConvParams &P, const float *X, const float *W,
                   const float *Bias, const float *Residual,
                   const Activation &Act, float *Y, int Threads);

/// QLinearConv's and ConvInteger's GEMM geometry
/// (QuantizedConvKernels.cpp): per group,
/// CoutG columns and K = taps * CinG rows, padded to KPad (a multiple of
/// 4).
struct QuantizedConvShape {
  int64_t Group = 1, CinG = 0, CoutG = 0;
  int64_t K = 0, KPad = 0;
};
/// What an integer conv's epilogue stores: the sums requantized to 8 bits
/// (QLinearConv), as they are in i32 (ConvInteger), or in f32 times Scale
/// plus Shift and the residual, clamped (ConvInteger and its rescale).
enum class QuantizedConvStore : uint8_t { Requantized, Int32, Float };

/// A QLinearConv or ConvInteger over one image: x (8-bit) read through its
/// strides (XC between channels, XS spatial) and y written through its
/// (YC, YS), in elements of YBytes.
struct QuantizedConvParams : ConvWindow, QuantizedConvShape {
  int64_t XC = 1, YC = 1;
  /// Vectors of output channels per group in the packed weight.
  int64_t ColVectors = 0;
  /// Output pixels per work item (gathered together).
  int64_t BlockRows = 24;
  /// The weight (packQuantizedConvWeights) and, per output channel (padded
  /// by one vector), the bias less the zero points' terms, the weight's
  /// zero point (null when all are 0) and the requantization multiplier.
  const uint8_t *Packed = nullptr;
  const int32_t *ColBias = nullptr, *WZero = nullptr;
  const float *Scale = nullptr;
  /// Depthwise (one input and one output channel per group, both sides
  /// channels-last) instead of the GEMM: the weight less its zero point,
  /// tap-major, WeightStride int32 per tap (channels padded by 4 vectors),
  /// and ColBias without the weight's zero point terms (TapWeights has
  /// them); Packed and WZero unused.
  const int32_t *TapWeights = nullptr;
  int64_t WeightStride = 0;
  /// x's zero point as u8 and the mask that makes x u8 (0x80 for i8).
  uint8_t XZero = 0, XFlip = 0;
  /// y's zero point and range; YZeroShifted = YZero - Lo; YSigned: y is i8.
  int32_t YZero = 0, Lo = 0, Hi = 255, YZeroShifted = 0;
  bool YSigned = false;
  QuantizedConvStore Store = QuantizedConvStore::Requantized;
  int64_t YBytes = 1;
  /// Float: per output channel (padded by one vector) the constant added
  /// after Scale (null: none); the residual, laid out as y, at
  /// ResidualOffset bytes from each y element (when HasResidual); the
  /// activation's bounds.
  const float *Shift = nullptr;
  bool HasResidual = false;
  std::ptrdiff_t ResidualOffset = 0;
  float FLo = -INFINITY, FHi = INFINITY;
};
/// Int32 lanes of the dispatched target's vectors: the packing's width.
int64_t getQuantizedConvLanes();
/// Packs \p W(channel, k) (an s8 value: the weight less 128 for a u8 one)
/// for \p Lanes lanes into \p Dst: Group * ColVectors * KPad * Lanes bytes.
void packQuantizedConvWeights(const QuantizedConvShape &S,
                              llvm::function_ref<int32_t(int64_t, int64_t)> W,
                              int64_t Lanes, uint8_t *Dst);
void runQuantizedConv(const QuantizedConvParams &P, const uint8_t *X,
                      uint8_t *Y, int Threads);

/// Y = Act(X) over \p Count contiguous elements (Y may be X).
void runUnary(const Activation &Act, const float *X, float *Y, int64_t Count,
              int Threads);

using codegen::BinaryOp;

/// Y[i] = Act(A[i] op B[i]) over a dense output of up to 6 dims (row-major
/// over Shape: Y's physical order); A and B are read through strides (0
/// where broadcast). Y may alias A or B when they are read with Y's own
/// strides.
struct BinaryParams {
  int Rank = 0;
  int64_t Shape[6];
  int64_t SA[6], SB[6];
  BinaryOp Op = BinaryOp::Add;
  Activation Act;
};
void runBinary(const BinaryParams &P, const float *A, const float *B, float *Y,
               int Threads);

/// A dense output of up to 6 dims (row-major over Shape: its physical
/// order) and the strides of up to three operands read at each of its
/// indices (0 where broadcast).
struct BroadcastParams {
  int Rank = 0;
  int64_t Shape[6];
  int64_t Strides[3][6];
};

/// Comparisons and the binary logic ops: a bool (one byte, 0 or 1) result.
enum class CompareOp : unsigned char {
  Equal,
  Less,
  LessOrEqual,
  Greater,
  GreaterOrEqual,
  And,
  Or,
  Xor,
};
/// The element type both operands of a comparison share.
enum class CompareType : unsigned char { F32, I32, I64, Bool };
/// Y[i] = A[i] op B[i] (operands 0 and 1 of \p P).
void runCompare(CompareOp Op, CompareType Type, const BroadcastParams &P,
                const void *A, const void *B, uint8_t *Y, int Threads);

/// Arithmetic of the element types the f32 SIMD binaries do not take.
/// Mod: the remainder with the divisor's sign (ONNX's fmod = 0, integers
/// only); FMod: truncated, as C's fmod; the shifts: of unsigned integers.
enum class ArithOp : unsigned char {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  FMod,
  ShiftLeft,
  ShiftRight,
  Max, ///< Of integers (floats go through the SIMD binaries).
  Min
};
enum class ArithType : unsigned char { F32, F64, I32, I64, U8, U16, U32, U64 };
/// Y[i] = A[i] op B[i] in the operands' element type, as the reference
/// computes it: integers wrap (through int64), integer division and
/// remainders truncate toward zero (Mod then takes the divisor's sign), x / 0
/// and x mod 0 are 0, shifts by the type's width or more give 0; u64
/// divides as unsigned.
void runArith(ArithOp Op, ArithType Type, const BroadcastParams &P,
              const void *A, const void *B, void *Y, int Threads);
/// Y = !X over \p Count bools.
void runNot(const uint8_t *X, uint8_t *Y, int64_t Count);
/// Linear (de)quantization over \p Count elements in one order: element
/// i's parameters are entry (i / Stride) % Channels of \p Scales and
/// \p Zeros (one entry, Channels = 1, for a whole tensor). Quantize:
/// Y = clamp(round-half-even(X / scale) + zero) into u8 or i8 (\p Signed);
/// Dequantize: Y = (X - zero) * scale, X of \p XType (u8, i8 or i32).
enum class QuantType : unsigned char { U8, I8, I32 };
struct QuantParams {
  std::vector<float> Scales;
  std::vector<int32_t> Zeros;
  int64_t Channels = 1, Stride = 1;
};
/// One run of 8-bit quantization (SIMD): Y = saturate(round(X / Scale) +
/// Zero), halves to even, NaN to Zero; and its inverse, (X - Zero) * Scale.
void quantizeRow(const float *X, uint8_t *Y, int64_t N, float Scale,
                 float Zero);
void quantizeRow(const float *X, int8_t *Y, int64_t N, float Scale, float Zero);
void dequantizeRow(const uint8_t *X, float *Y, int64_t N, float Scale,
                   float Zero);
void dequantizeRow(const int8_t *X, float *Y, int64_t N, float Scale,
                   float Zero);
/// qbinary over \p Count elements: y = quantize(dequantize(a) op
/// dequantize(b)), each step computed as quantizeRow and dequantizeRow
/// compute it (the same bits as the three ops' kernels), in one pass.
struct QBinaryParams {
  float AScale = 1, AZero = 0, BScale = 1, BZero = 0, YScale = 1, YZero = 0;
  bool ASigned = false, BSigned = false, YSigned = false, Mul = false;
};
void runQBinary(const QBinaryParams &P, const uint8_t *A, const uint8_t *B,
                uint8_t *Y, int64_t Count, int Threads);
void runQuantize(const QuantParams &Q, bool Signed, const float *X, void *Y,
                 int64_t Count, int Threads);
void runDequantize(const QuantParams &Q, QuantType XType, const void *X,
                   float *Y, int64_t Count, int Threads);

/// Y = IsNaN(X) or IsInf(X) (of the signs asked for) over \p Count
/// floats, as bools.
enum class FloatClass : unsigned char { NaN, Inf, PosInf, NegInf };
void runClassify(FloatClass Class, const float *X, uint8_t *Y, int64_t Count);
/// Y[i] = C[i] ? X[i] : Z[i] (operands 0, 1, 2 of \p P) for elements of
/// \p ElementBytes (1, 2, 4 or 8) bytes.
void runWhere(unsigned ElementBytes, const BroadcastParams &P, const uint8_t *C,
              const void *X, const void *Z, void *Y, int Threads);

/// Y[i] = X[i] (operand 0 of \p P, broadcast) for elements of
/// \p ElementBytes (1, 2, 4 or 8) bytes.
void runExpand(unsigned ElementBytes, const BroadcastParams &P, const void *X,
               void *Y, int Threads);

/// Y[i] = Table[X[i] ^ Flip] over \p Count contiguous bytes (Flip 0x80
/// for an i8 X: its index), in pieces over \p Threads (LookupKernels.cpp).
void runLookup(const uint8_t *Table, const uint8_t *X, uint8_t Flip, uint8_t *Y,
               int64_t Count, int Threads);

/// The element types Cast converts between.
enum class CastType : unsigned char { F32, F64, I8, U8, I32, I64, Bool };
/// Y = X converted over \p Count elements (the same order in both), as the
/// reference interpreter converts.
void runCast(CastType From, CastType To, const void *X, void *Y, int64_t Count,
             int Threads);

/// Y = Act(X * Scale[c] + Shift[c]) over \p Batch images of \p Channels
/// channels and \p Pixels pixels each, both tensors channels-last
/// (\p ChannelsLast: pixel rows of Channels elements) or channels-first
/// (contiguous planes); Y may be X. Scale and Shift are padded to a
/// multiple of 64 entries.
void runChannelAffine(bool ChannelsLast, int64_t Batch, int64_t Channels,
                      int64_t Pixels, const float *X, const float *Scale,
                      const float *Shift, const Activation &Act, float *Y,
                      int Threads);

/// InstanceNormalization of \p Batch images of \p Channels channels and
/// \p Pixels pixels each: Y = (X - mean) / sqrt(var + Eps) * Scale[c] +
/// Bias[c], mean and (biased) variance per image and channel. Both tensors
/// channels-last (pixel rows of Channels elements) or channels-first
/// (contiguous planes); Y may be X. Statistics are two passes, float lanes
/// flushed into double sums over fixed blocks (so the result does not
/// depend on the thread count).
void runInstanceNorm(bool ChannelsLast, int64_t Batch, int64_t Channels,
                     int64_t Pixels, const float *X, const float *Scale,
                     const float *Bias, float Eps, float *Y, int Threads);

/// One LSTM step of one batch entry over \p Hidden units: the gate
/// pre-activations Pre + Rec (gate order i, o, f, c; 4 * Hidden each),
/// peepholes Peep (i, o, f; null: none), clipped to [-Clip, Clip] when Clip
/// > 0, then Cell = f * Cell + i * tanh(c) and the new hidden state
/// o * tanh(Cell) to HiddenOut and Y (when not null). Default activations.
struct LstmGates {
  const float *Pre = nullptr, *Rec = nullptr, *Peep = nullptr;
  float *Cell = nullptr, *HiddenOut = nullptr, *Y = nullptr;
  int64_t Hidden = 0;
  float Clip = 0;
  bool InputForget = false;
};
void runLstmGates(const LstmGates &A);

/// One GRU step of one batch entry over \p Hidden units: gates z, r, h
/// from Pre + Rec (3 * Hidden each; clipped to [-Clip, Clip] when Clip >
/// 0). With RecBias (linear_before_reset: Rec's h part is H_{t-1} * Rh^T
/// without its bias) h = tanh(Pre_h + r * (Rec_h + RecBias)), else h =
/// tanh(Pre_h + Rec_h) where Rec_h is already (r . H_{t-1}) * Rh^T; then
/// State = (1 - z) * h + z * State, also to Y when not null.
struct GruGates {
  const float *Pre = nullptr, *Rec = nullptr, *RecBias = nullptr;
  float *State = nullptr, *Y = nullptr;
  int64_t Hidden = 0;
  float Clip = 0;
};
void runGruGates(const GruGates &A);
/// GRU without linear_before_reset: Out = sigmoid(PreR + RecR) . State
/// over \p Hidden units, clipped as above.
void runGruReset(const float *PreR, const float *RecR, const float *State,
                 float *Out, int64_t Hidden, float Clip);

/// The gather half of a transposed convolution (col2im) for one image and
/// one group, spatial dims normalized to 3. Output position o of axis d
/// receives taps [Begin[o], Begin[o + 1]) of Tap (the kernel index) and In
/// (the input position that reaches o through it).
struct Col2ImAxis {
  std::vector<int32_t> Begin, Tap, In;
};
struct Col2ImParams {
  int64_t Channels = 0; ///< Output channels of the group.
  int64_t In[3] = {1, 1, 1}, Out[3] = {1, 1, 1}, Kernel[3] = {1, 1, 1};
  int64_t YS[3] = {0, 0, 0}; ///< Element strides of Y's spatial dims.
  int64_t YC = 1;            ///< Element stride of Y's channels.
  Col2ImAxis Axes[3];
};
/// Channels-last columns: Col[in pixel][tap * Channels + m]; Y[o][m] =
/// Bias[m] + the columns of every tap reaching o (in tap order). Y's
/// channels must be contiguous (YC == 1).
void runCol2ImChannelsLast(const Col2ImParams &P, const float *Col,
                           const float *Bias, float *Y, int Threads);
/// Channels-first columns: Col[m * Taps + tap][in pixel], Y at any strides.
void runCol2ImChannelsFirst(const Col2ImParams &P, const float *Col,
                            const float *Bias, float *Y, int Threads);

/// Max or average pooling of one image over 3 spatial dims (1D/2D
/// normalized with leading unit dims), input and output at any element
/// strides. Output o of axis d reads input o * Stride - PadBegin +
/// k * Dilation for taps k inside the input; averages divide by the taps
/// inside the input, or with \p CountPad by those inside the padded input
/// [-PadBegin, In + PadEnd). A window without taps gives -inf (max) or NaN
/// (average), as the reference does.
struct PoolParams {
  bool Max = true;
  bool CountPad = false;
  int64_t Channels = 0;
  int64_t In[3] = {1, 1, 1}, Out[3] = {1, 1, 1}, Kernel[3] = {1, 1, 1};
  int64_t Stride[3] = {1, 1, 1}, Dilation[3] = {1, 1, 1};
  int64_t PadBegin[3] = {0, 0, 0}, PadEnd[3] = {0, 0, 0};
  int64_t XS[3] = {0, 0, 0}, YS[3] = {0, 0, 0}; ///< Spatial element strides.
  int64_t XC = 1, YC = 1;                       ///< Channel element strides.

  /// Channels contiguous in input and output: vectors of channels.
  bool channelsLast() const { return XC == 1 && YC == 1; }
};
/// Channels-last: one output pixel at a time, a vector of channels per
/// tap. Otherwise: one output row of one channel at a time, vectors of
/// output positions along the last spatial dim (gathered when strided) for
/// the windows inside the input, the edges one by one.
void runPool(const PoolParams &P, const float *X, float *Y, int Threads);
/// MaxPool of 8-bit elements (scalar; kernels up to 64 taps per axis).
void runMaxPool(const PoolParams &P, const uint8_t *X, uint8_t *Y,
                int Threads);
void runMaxPool(const PoolParams &P, const int8_t *X, int8_t *Y, int Threads);

/// Resize of one channels-last image over its (up to 3, normalized)
/// spatial dims: output position o of axis d reads input taps
/// [Begin[o], Begin[o + 1]) of Offset (element offsets) and Weight.
struct ResampleAxis {
  std::vector<int64_t> Begin, Offset;
  std::vector<float> Weight;
};
struct ResampleParams {
  int64_t Channels = 0;
  int64_t Out[3] = {1, 1, 1};
  int64_t YS[3] = {0, 0, 0};
  ResampleAxis Axes[3];
};
void runResampleChannelsLast(const ResampleParams &P, const float *X, float *Y,
                             int Threads);
/// The same when every output pixel has one tap of weight 1 (nearest, an
/// integer scale's aligned samples), for elements of any \p Bytes (8-bit
/// activations of a quantized model): each pixel a copy of its source's
/// channels.
void runResampleCopy(const ResampleParams &P, const uint8_t *X, uint8_t *Y,
                     unsigned Bytes, int Threads);

/// GridSample of an N x C x H x W image with element strides XS by a
/// dense N x OH x OW x 2 grid into Y (strides YS): each output point's
/// taps (gridsample::forEachTap) are found once and summed over every
/// channel.
struct GridSampleParams {
  gridsample::Options Opts;
  int64_t N = 0, C = 0, H = 0, W = 0, OH = 0, OW = 0;
  int64_t XS[4] = {}, YS[4] = {};
};
void runGridSample(const GridSampleParams &P, const float *X, const float *G,
                   float *Y, int Threads);

/// Softmax (\p Log: LogSoftmax) over the middle dim of a dense
/// [Outer][Len][Inner] tensor.
void runSoftmax(int64_t Outer, int64_t Len, int64_t Inner, bool Log,
                const float *X, float *Y, int Threads);

/// LayerNormalization of \p Rows contiguous rows of \p Len elements:
/// Y = (X - mean) / sqrt(var + Eps) * Gamma + Beta per row (Gamma, Beta:
/// Len entries each). Mean, then the variance around it (two passes, float
/// lanes summed in double per row); Y may be X.
void runLayerNorm(int64_t Rows, int64_t Len, const float *X, const float *Gamma,
                  const float *Beta, float Eps, float *Y, int Threads);
/// LRN across the middle (channel) dim of a dense [Outer][Len][Inner]
/// tensor: Y = X * (Bias + Alpha / Size * sum of X^2 over the channels
/// [c - Before, c + After] that exist)^-Beta, Before = (Size - 1) / 2.
struct LRNParams {
  int64_t Outer = 1, Len = 1, Inner = 1, Size = 1;
  float Alpha = 1e-4f, Beta = 0.75f, Bias = 1.0f;
};
void runLRN(const LRNParams &P, const float *X, float *Y, int Threads);

/// Y[o][i] = reduction over l of X[o][l][i] (dense tensors).
/// Min, Prod, SumSquare and L2 (the square root of SumSquare) as ONNX's
/// ReduceMin, ReduceProd, ReduceSumSquare and ReduceL2.
enum class ReduceKind { Sum, Max, Mean, Min, Prod, SumSquare, L2 };
void runReduce(ReduceKind Kind, int64_t Outer, int64_t Len, int64_t Inner,
               const float *X, float *Y, int Threads);

/// Y[o][l][i] = the sum of X[o][m][i] over m <= l (m < l: \p Exclusive;
/// m >= l, m > l: \p Reverse), accumulated in the element type (integers
/// wrap). Y may not be X.
enum class CumSumType : unsigned char { F32, F64, I32, I64 };
void runCumSum(CumSumType Type, int64_t Outer, int64_t Len, int64_t Inner,
               bool Exclusive, bool Reverse, const void *X, void *Y,
               int Threads);

/// Y[o][i] = the index l of the largest (\p Max) or smallest X[o][l][i],
/// the first one or with \p Last the last one (dense; Len < 2^31).
void runArgReduce(bool Max, bool Last, int64_t Outer, int64_t Len,
                  int64_t Inner, const float *X, int64_t *Y, int Threads);

/// Global max/average pooling of one image: X holds Pixels x Channels with
/// strides (PixelStride, ChannelStride); Y holds Channels with stride
/// YStride.
void runGlobalPool(bool Max, int64_t Pixels, int64_t Channels,
                   int64_t PixelStride, int64_t ChannelStride, const float *X,
                   float *Y, int64_t YStride, int Threads);

/// D[j][i] = S[i][j] for a \p Rows x \p Cols float matrix S with rows
/// \p SLd apart; D's rows are \p DLd apart.
void transposeFloats(const float *S, int64_t SLd, float *D, int64_t DLd,
                     int64_t Rows, int64_t Cols);

/// Copies a tensor of logical \p Shape read through \p SrcStrides into a
/// destination written through \p DstStrides (element strides; \p EltSize
/// bytes per element). Dims that nest are merged; a contiguous innermost
/// run is copied with memcpy, and a transposition of two dims goes
/// through cache-sized tiles.
void copyStrided(int Rank, const int64_t *Shape, const uint8_t *Src,
                 const int64_t *SrcStrides, uint8_t *Dst,
                 const int64_t *DstStrides, int64_t EltSize, int Threads);

} // namespace cpu
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CPU_KERNELS_H
