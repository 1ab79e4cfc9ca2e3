//===- LowerConv.cpp - Conv and ConvTranspose as GEMMs --------------------===//
//
// A Conv (1-3 spatial dims, any stride, padding, dilation and group) is
// one GEMM per image and group, in one of two formulations chosen by the
// output layout, each reading the input in any layout through strides:
//
//   - channels-last output: C[pixel][out channel]; A packs input pixels
//     (k = tap-major, channel-minor), B is the weight packed at compile
//     time, the bias is per column. A first layer reading an NCHW image
//     and writing NHWC is this form with a strided A.
//   - channels-first output: C[out channel][pixel]; A is the weight, B
//     packs input pixels (k = channel-major, tap-minor), bias per row.
//     Reading NHWC and writing NCHW is this form with a strided B.
//
// Depthwise convolutions with channels-last input and output have their
// own SIMD kernel (one vector of channels per tap), and so do first
// layers (at most 4 input channels, 64 of them times taps) writing
// contiguous output channels (DirectConvKernels.cpp: no GEMM for a K of
// 27). The epilogue adds the bias and a residual and applies the
// activation.
//
// A ConvTranspose (1-3 spatial dims, any stride, padding, dilation, group,
// output_padding, output_shape or auto_pad) with constant f32 weights is,
// per image and group, one GEMM over the input pixels into a column
// buffer, then a gather of the columns into the output (col2im, in
// ConvTransposeKernels.cpp). Two formulations, chosen by the output
// layout:
//
//   - channels-last output: Col[in pixel][tap * Mg + m] = X rows (read in
//     place when the input is channels-last) times the weight packed at
//     compile time; each output pixel adds Mg-channel rows of Col.
//   - channels-first output: Col[m * Taps + tap][in pixel] = the packed
//     weight times X's channel planes; each output row adds runs of Col
//     rows.
//
// The bias starts every output sum; taps are added in kernel order.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "ProgramImpl.h"

#include "strider/IR/LayoutAlgebra.h"
#include "strider/IR/WindowGeometry.h"
#include "strider/Runtime/Requantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

using namespace strider;
using namespace strider::cpu;

namespace {

/// The constant f32 weight (operand 1) of a Conv or ConvTranspose, read
/// when first called for (not at all when a DerivedStore holds what is
/// derived from it), and its constant bias (operand 2), if any.
class ConstantWeights {
public:
  std::vector<float> Bias;

  /// False (the node declines) when the weight is not an f32 constant or
  /// a bias is not a constant.
  bool read(const Node &N) {
    W = N.getOperand(1);
    if (!isConstantF32(W))
      return false;
    if (N.hasOperand(2)) {
      Bias = getConstantFloats(N.getOperand(2));
      if (Bias.empty())
        return false;
    }
    return true;
  }
  const std::vector<float> &operator()() {
    if (Data.empty())
      Data = getConstantFloats(W);
    return Data;
  }

private:
  const Value *W = nullptr;
  std::vector<float> Data;
};

/// Geometry of a conv normalized to 3 spatial dims (leading unit dims).
struct ConvShape {
  int64_t Batch = 1, Cin = 1, Cout = 1, Group = 1;
  int64_t In[3] = {1, 1, 1}, Out[3] = {1, 1, 1}, Kernel[3] = {1, 1, 1};
  int64_t Stride[3] = {1, 1, 1}, Dilation[3] = {1, 1, 1}, Pad[3] = {0, 0, 0};
  // Element strides: input (batch, channel, spatial...), output likewise.
  int64_t XB = 0, XC = 0, XS[3] = {0, 0, 0};
  int64_t YB = 0, YC = 0, YS[3] = {0, 0, 0};

  int64_t cinPerGroup() const { return Cin / Group; }
  int64_t coutPerGroup() const { return Cout / Group; }
  int64_t taps() const { return Kernel[0] * Kernel[1] * Kernel[2]; }
  /// The spatial geometry, as the SIMD kernels take it.
  ConvWindow window() const {
    ConvWindow W;
    for (unsigned D = 0; D < 3; ++D) {
      W.In[D] = In[D];
      W.Out[D] = Out[D];
      W.Kernel[D] = Kernel[D];
      W.Stride[D] = Stride[D];
      W.Dilation[D] = Dilation[D];
      W.Pad[D] = Pad[D];
      W.XS[D] = XS[D];
      W.YS[D] = YS[D];
    }
    return W;
  }
  int64_t outPixels() const { return Out[0] * Out[1] * Out[2]; }
  /// Stride between consecutive output pixels when spatial dims nest in
  /// order (d, h, w) with nothing in between, else 0.
  int64_t outPixelStride() const {
    if (YS[1] != Out[2] * YS[2] || YS[0] != Out[1] * YS[1])
      return 0;
    return YS[2];
  }
};

/// The geometry of \p N; the output's element strides are \p YStrides
/// (by logical dim) where given, else those of its dense type.
bool readConvShape(const Node &N, ConvShape &S,
                   llvm::ArrayRef<int64_t> YStrides = {}) {
  const TensorType &XT = N.getOperand(0)->getType();
  const TensorType &WT =
      N.getOperand(N.getOpId() == OpId::QLinearConv ? 3 : 1)->getType();
  const TensorType &YT = N.getResult(0)->getType();
  unsigned Rank = XT.getRank();
  if (Rank < 3 || Rank > 5 || WT.getRank() != Rank || YT.getRank() != Rank)
    return false;
  unsigned Sp = Rank - 2, Off = 3 - Sp;
  auto X = XT.getStaticShape(), W = WT.getStaticShape(),
       Y = YT.getStaticShape();
  auto XStr = getStrides(XT), YStr = getStrides(YT);
  if (!YStrides.empty())
    YStr.assign(YStrides.begin(), YStrides.end());
  S.Batch = X[0];
  S.Cin = X[1];
  S.Cout = Y[1];
  S.Group = N.getIntAttr("group", 1);
  S.XB = XStr[0];
  S.XC = XStr[1];
  S.YB = YStr[0];
  S.YC = YStr[1];
  auto Axes = resolveWindow(N, llvm::makeArrayRef(X).drop_front(2),
                            llvm::makeArrayRef(W).drop_front(2));
  if (!Axes) {
    llvm::consumeError(Axes.takeError());
    return false;
  }
  for (unsigned I = 0; I < Sp; ++I) {
    const WindowAxis &A = (*Axes)[I];
    unsigned D = Off + I;
    S.In[D] = X[2 + I];
    S.Out[D] = Y[2 + I];
    S.Kernel[D] = W[2 + I];
    S.Stride[D] = A.Stride;
    S.Dilation[D] = A.Dilation;
    S.Pad[D] = A.PadBegin;
    S.XS[D] = XStr[2 + I];
    S.YS[D] = YStr[2 + I];
    if (A.Out != S.Out[D])
      return false;
  }
  // Leading unit dims nest around the real ones.
  for (unsigned D = Off; D-- > 0;) {
    S.XS[D] = S.XS[D + 1] * S.In[D + 1];
    S.YS[D] = S.YS[D + 1] * S.Out[D + 1];
  }
  if (S.Group < 1 || S.Cin % S.Group || S.Cout % S.Group ||
      W[1] != S.cinPerGroup() || W[0] != S.Cout)
    return false;
  return true;
}

/// Input coordinate of output position \p O through tap \p K on dim \p D.
inline int64_t inputPos(const ConvShape &S, unsigned D, int64_t O, int64_t K) {
  return O * S.Stride[D] - S.Pad[D] + K * S.Dilation[D];
}

/// Decodes a flat output pixel index into (d, h, w).
inline void decodePixel(const ConvShape &S, int64_t P, int64_t (&O)[3]) {
  O[2] = P % S.Out[2];
  P /= S.Out[2];
  O[1] = P % S.Out[1];
  O[0] = P / S.Out[1];
}

inline void decodeTap(const ConvShape &S, int64_t T, int64_t (&K)[3]) {
  K[2] = T % S.Kernel[2];
  T /= S.Kernel[2];
  K[1] = T % S.Kernel[1];
  K[0] = T / S.Kernel[1];
}

/// A packer over output pixels as rows: k = tap * CinG + c.
class PixelRowsPacker final : public APacker {
public:
  /// Rows past the first image's pixels are the next images' (\p X
  /// advancing by S.XB), for a GEMM over several images at once.
  PixelRowsPacker(const ConvShape &S, const float *X, int64_t C0)
      : S(S), X(X), C0(C0) {}
  void pack(int64_t M0, int Rows, int64_t K0, int64_t KC, int MR,
            float *Dst) const override {
    const int64_t CG = S.cinPerGroup();
    for (int R = 0; R < MR; ++R) {
      float *D = Dst + R;
      if (R >= Rows) {
        for (int64_t K = 0; K < KC; ++K)
          D[K * MR] = 0.0f;
        continue;
      }
      const int64_t Image = (M0 + R) / S.outPixels();
      int64_t O[3];
      decodePixel(S, (M0 + R) - Image * S.outPixels(), O);
      const float *XI = X + Image * S.XB;
      int64_t K = K0;
      const int64_t KEnd = K0 + KC;
      while (K < KEnd) {
        const int64_t Tap = K / CG, C = K % CG;
        const int64_t Run = std::min(CG - C, KEnd - K);
        int64_t T[3];
        decodeTap(S, Tap, T);
        const float *Src = XI + (C0 + C) * S.XC;
        bool Inside = true;
        for (unsigned Dm = 0; Dm < 3; ++Dm) {
          int64_t I = inputPos(S, Dm, O[Dm], T[Dm]);
          Inside &= I >= 0 && I < S.In[Dm];
          Src += I * S.XS[Dm];
        }
        float *Out = D + (K - K0) * MR;
        if (!Inside) {
          for (int64_t J = 0; J < Run; ++J)
            Out[J * MR] = 0.0f;
        } else if (S.XC == 1) {
          for (int64_t J = 0; J < Run; ++J)
            Out[J * MR] = Src[J];
        } else {
          for (int64_t J = 0; J < Run; ++J)
            Out[J * MR] = Src[J * S.XC];
        }
        K += Run;
      }
    }
  }

private:
  const ConvShape &S;
  const float *X;
  int64_t C0;
};

/// A packer over output pixels as columns: k = c * Taps + tap.
class PixelColsPacker final : public BPacker {
public:
  PixelColsPacker(const ConvShape &S, const float *X, int64_t C0)
      : S(S), X(X), C0(C0) {
    // A pointwise conv with unit strides over pixels stored contiguously:
    // row k of B is a contiguous run of channel k's plane.
    Contiguous = S.taps() == 1 && S.XS[2] == 1 && S.XS[1] == S.In[2] &&
                 S.XS[0] == S.In[1] * S.In[2];
    for (unsigned Dm = 0; Dm < 3; ++Dm)
      Contiguous &=
          S.Stride[Dm] == 1 && S.Pad[Dm] == 0 && S.In[Dm] == S.Out[Dm];
  }
  void pack(int64_t N0, int Cols, int64_t K0, int64_t KC, int NR,
            float *Dst) const override {
    if (Contiguous) {
      for (int64_t K = K0; K < K0 + KC; ++K) {
        float *D = Dst + (K - K0) * NR;
        std::memcpy(D, X + (C0 + K) * S.XC + N0, size_t(Cols) * sizeof(float));
        std::fill(D + Cols, D + NR, 0.0f);
      }
      return;
    }
    if (S.Stride[2] == 1 && S.XS[2] == 1) {
      packRows(N0, Cols, K0, KC, NR, Dst);
      return;
    }
    int64_t Pix[64][3];
    for (int J = 0; J < Cols; ++J) {
      int64_t O[3];
      decodePixel(S, N0 + J, O);
      for (unsigned Dm = 0; Dm < 3; ++Dm)
        Pix[J][Dm] = O[Dm];
    }
    const int64_t Taps = S.taps();
    for (int64_t K = K0; K < K0 + KC; ++K) {
      const int64_t C = K / Taps, Tap = K % Taps;
      int64_t T[3];
      decodeTap(S, Tap, T);
      const float *Plane = X + (C0 + C) * S.XC;
      float *D = Dst + (K - K0) * NR;
      int J = 0;
      for (; J < Cols; ++J) {
        const float *Src = Plane;
        bool Inside = true;
        for (unsigned Dm = 0; Dm < 3; ++Dm) {
          int64_t I = inputPos(S, Dm, Pix[J][Dm], T[Dm]);
          Inside &= I >= 0 && I < S.In[Dm];
          Src += I * S.XS[Dm];
        }
        D[J] = Inside ? *Src : 0.0f;
      }
      for (; J < NR; ++J)
        D[J] = 0.0f;
    }
  }

private:
  /// Unit column stride over contiguous input rows: each output row's run
  /// of columns reads a contiguous run of an input row (zeros outside).
  void packRows(int64_t N0, int Cols, int64_t K0, int64_t KC, int NR,
                float *Dst) const {
    const int64_t Taps = S.taps();
    for (int64_t K = K0; K < K0 + KC; ++K) {
      const int64_t C = K / Taps, Tap = K % Taps;
      int64_t T[3];
      decodeTap(S, Tap, T);
      const float *Plane = X + (C0 + C) * S.XC;
      float *D = Dst + (K - K0) * NR;
      const int64_t Shift = T[2] * S.Dilation[2] - S.Pad[2];
      int J = 0;
      while (J < Cols) {
        int64_t O[3];
        decodePixel(S, N0 + J, O);
        const int Run = int(std::min<int64_t>(Cols - J, S.Out[2] - O[2]));
        const int64_t ID = inputPos(S, 0, O[0], T[0]);
        const int64_t IH = inputPos(S, 1, O[1], T[1]);
        if (ID < 0 || ID >= S.In[0] || IH < 0 || IH >= S.In[1]) {
          std::fill(D + J, D + J + Run, 0.0f);
        } else {
          const float *Row = Plane + ID * S.XS[0] + IH * S.XS[1];
          // Columns ow in [O2, O2 + Run) read iw = ow + Shift.
          const int64_t Lo =
              std::min<int64_t>(Run, std::max<int64_t>(0, -Shift - O[2]));
          const int64_t Hi = std::max<int64_t>(
              Lo, std::min<int64_t>(Run, S.In[2] - Shift - O[2]));
          std::fill(D + J, D + J + Lo, 0.0f);
          std::memcpy(D + J + Lo, Row + O[2] + Lo + Shift,
                      size_t(Hi - Lo) * sizeof(float));
          std::fill(D + J + Hi, D + J + Run, 0.0f);
        }
        J += Run;
      }
      std::fill(D + Cols, D + NR, 0.0f);
    }
  }

  const ConvShape &S;
  const float *X;
  int64_t C0;
  bool Contiguous = false;
};

/// Rows of A read in place from a channels-last input (2D or 1D convs):
/// the input itself when no tap reaches the padding, else a zero-padded
/// copy made by the step.
struct DirectInput {
  bool Enabled = false;
  bool Padded = false;
  bool Uniform = false;           ///< One row stride over the whole image.
  int64_t Width = 0;              ///< Contiguous elements per tap group.
  int64_t Dp = 1, Hp = 0, Wp = 0; ///< Padded extent: planes, rows, columns.
  int64_t PixelStride = 0;        ///< Elements between pixels of the source.
  int64_t RowStride = 0;          ///< Elements between rows of the source.
  int64_t PlaneStride = 0; ///< Elements between planes (3D) of the source.
  std::vector<int64_t> TapOffsets;
};

/// Copies one image \p X (any layout) channels-last into the zero-padded
/// buffer \p Pad (DI.Dp x DI.Hp x DI.Wp pixels of S.Cin channels, the image
/// at the pad offset).
void padChannelsLast(const ConvShape &S, const float *X, const DirectInput &DI,
                     float *Pad) {
  const int64_t C = S.Cin, PD = S.Pad[0], PH = S.Pad[1], PW = S.Pad[2];
  const size_t RowBytes = size_t(DI.Wp * C) * sizeof(float);
  for (int64_t D = 0; D < DI.Dp; ++D) {
    const int64_t ID = D - PD;
    for (int64_t H = 0; H < DI.Hp; ++H) {
      float *Row = Pad + (D * DI.Hp + H) * DI.Wp * C;
      const int64_t IH = H - PH;
      if (ID < 0 || ID >= S.In[0] || IH < 0 || IH >= S.In[1]) {
        std::memset(Row, 0, RowBytes);
        continue;
      }
      std::memset(Row, 0, size_t(PW * C) * sizeof(float));
      const float *Src = X + ID * S.XS[0] + IH * S.XS[1];
      if (S.XC != 1) {
        // Channels-first source: gather each pixel's channels.
        for (int64_t W = 0; W < S.In[2]; ++W)
          for (int64_t Ch = 0; Ch < C; ++Ch)
            Row[(PW + W) * C + Ch] = Src[W * S.XS[2] + Ch * S.XC];
      } else if (S.XS[2] == C) {
        std::memcpy(Row + PW * C, Src, size_t(S.In[2] * C) * sizeof(float));
      } else {
        for (int64_t W = 0; W < S.In[2]; ++W)
          std::memcpy(Row + (PW + W) * C, Src + W * S.XS[2],
                      size_t(C) * sizeof(float));
      }
      const int64_t Tail = DI.Wp - PW - S.In[2];
      if (Tail > 0)
        std::memset(Row + (PW + S.In[2]) * C, 0,
                    size_t(Tail * C) * sizeof(float));
    }
  }
}

struct ConvPlan {
  ConvShape S;
  bool ViaScratch = false; ///< Pixel rows stored channels-last, transposed.
  DirectInput Direct;
  std::vector<PackedOperand> Weights; ///< One per group.
  std::shared_ptr<AlignedFloats> Bias;
  bool PixelRows = true; ///< Which formulation.
  /// Pixel rows of all images as one GEMM (small images: one call, whose
  /// rows the threads share); padded images then follow each other in the
  /// padding scratch, ImageStride elements apart.
  bool MergeImages = false;
  int64_t ImageStride = 0;
  Activation Act;
};

} // namespace

bool cpu::lowerConv(LoweringContext &L, const Node &N, const FusedTail &Tail) {
  if (N.getNumResults() != 1 || N.getNumOperands() < 2)
    return false;
  const Value *X = N.getOperand(0);
  if (X->getType().getElementType() != ElementType::F32)
    return false;
  ConstantWeights Weights;
  if (!Weights.read(N))
    return false;
  const std::vector<float> &Bias = Weights.Bias;
  const std::string Key = "conv/" + N.getResult(0)->getName();
  auto Plan = std::make_shared<ConvPlan>();
  ConvShape &S = Plan->S;
  // Written straight into the Concat that reads the result, at its
  // offset and with its strides (not with a residual, which is read with
  // the output's own strides).
  llvm::Optional<LoweringContext::ConcatSlot> Slot;
  if (!Tail.Residual)
    Slot = L.findConcatSlot(Tail.Result);
  const int64_t YOffset = Slot ? Slot->Offset : 0;
  if (!readConvShape(N, S,
                     Slot ? llvm::ArrayRef<int64_t>(Slot->Strides)
                          : llvm::ArrayRef<int64_t>()))
    return false;
  const TensorType &YT = Tail.Result->getType();
  if (Tail.Residual &&
      (Tail.Residual->getType().getShape() != YT.getShape() ||
       !layout::areLayoutsEquivalent(
           YT.getShape(), Tail.Residual->getType().getLayout(),
           N.getResult(0)->getType().getLayout(), layout::DimBindings())))
    return false;
  const int64_t PixStride = S.outPixelStride();
  if (PixStride == 0)
    return false;
  Plan->Act = Tail.Act;
  const int64_t CG = S.cinPerGroup(), OG = S.coutPerGroup(), Taps = S.taps();
  const int64_t K = CG * Taps;

  BufferId XB = L.getBuffer(X);
  BufferId RB = Tail.Residual ? L.getBuffer(Tail.Residual) : -1;
  size_t LastIndex = L.getNodeIndex(Tail.Last);
  BufferId YB;
  // In place of the residual, unless the conv reads that very buffer.
  if (Tail.Residual && RB != XB && L.canOverwrite(Tail.Residual, LastIndex)) {
    L.alias(Tail.Result, Tail.Residual);
    YB = RB;
  } else if (Slot) {
    YB = L.useConcatSlot(Tail.Result, *Slot);
  } else {
    YB = L.defineBuffer(Tail.Result);
  }
  std::vector<BufferId> Reads{XB};
  if (RB >= 0)
    Reads.push_back(RB);
  Plan->Bias = makePaddedFloats(Bias, S.Cout);
  const int Threads = L.getThreads();
  std::string Name;

  // Depthwise: the SIMD kernel over contiguous channels when both sides
  // are channels-last, else plane by plane.
  if (S.Group == S.Cin && S.Group == S.Cout) {
    const bool Planar = S.XC != 1 || S.YC != 1;
    DepthwiseParams DP;
    static_cast<ConvWindow &>(DP) = S.window();
    DP.Channels = S.Cin;
    // Weights tap-major, channels padded to a vector multiple.
    const int64_t CP = (S.Cin + 63) / 64 * 64;
    const float *WP = L.deriveFloats(
        Key + "/taps" + std::to_string(CP), size_t(Taps * CP),
        [&](float *Dst) {
          const std::vector<float> &WR = Weights();
          for (int64_t C = 0; C < S.Cin; ++C)
            for (int64_t T = 0; T < Taps; ++T)
              Dst[T * CP + C] = WR[size_t(C * Taps + T)];
        },
        N.getOperand(1));
    DP.WeightStride = CP;
    const int64_t XBS = S.XB, YBS = S.YB, Batch = S.Batch;
    const int64_t XCS = S.XC, YCS = S.YC;
    L.addStep(
        {Tail.Result->getName(),
         std::string(Planar ? "conv.depthwise.planar" : "conv.depthwise.nhwc") +
             (Tail.Residual ? "+add" : "") + (Tail.Act.isNone() ? "" : "+") +
             (Tail.Act.isNone() ? "" : Tail.Act.getName()),
         false, 2 * S.Batch * S.outPixels() * S.Cout * S.taps()},
        Reads, {YB}, [=](Frame &Fr) {
          const float *Xp = Fr.f32(XB);
          float *Yp = Fr.f32(YB) + YOffset;
          const float *Rp = RB >= 0 ? Fr.f32(RB) : nullptr;
          for (int64_t B = 0; B < Batch; ++B) {
            if (Planar)
              runDepthwisePlanar(DP, XCS, YCS, Xp + B * XBS, WP,
                                 Plan->Bias->get(), Rp ? Rp + B * YBS : nullptr,
                                 Plan->Act, Yp + B * YBS, Threads);
            else
              runDepthwise(DP, Xp + B * XBS, WP, Plan->Bias->get(),
                           Rp ? Rp + B * YBS : nullptr, Plan->Act, Yp + B * YBS,
                           Threads);
          }
        });
    L.own(Plan);
    return true;
  }

  // A first layer (at most 4 input channels, at most 64 of them times
  // taps) into contiguous output channels: the direct kernel, whose
  // broadcast inputs need no packing (a GEMM's K would be 27 for RGB 3x3).
  if (S.Group == 1 && S.YC == 1 && S.Cin <= 4 && S.Cin * Taps <= 64 &&
      S.Cout <= 256) {
    DirectConvParams DP;
    static_cast<ConvWindow &>(DP) = S.window();
    DP.Cin = S.Cin;
    DP.Cout = S.Cout;
    DP.XC = S.XC;
    // One row per (input channel, tap), output channels padded.
    const int64_t CP = (S.Cout + 63) / 64 * 64;
    const float *WP = L.deriveFloats(
        Key + "/direct" + std::to_string(CP), size_t(K * CP),
        [&](float *Dst) {
          const std::vector<float> &WR = Weights();
          std::fill(Dst, Dst + K * CP, 0.0f);
          for (int64_t O = 0; O < S.Cout; ++O)
            for (int64_t R = 0; R < K; ++R)
              Dst[R * CP + O] = WR[size_t(O * K + R)];
        },
        N.getOperand(1));
    DP.WeightStride = CP;
    const int64_t XBS = S.XB, YBS = S.YB, Batch = S.Batch;
    L.addStep({Tail.Result->getName(),
               std::string(S.XC == 1 ? "conv.direct.nhwc"
                                     : "conv.direct.nchw_to_nhwc") +
                   "+bias" + (Tail.Residual ? "+add" : "") +
                   (Tail.Act.isNone() ? "" : "+") +
                   (Tail.Act.isNone() ? "" : Tail.Act.getName()),
               false, 2 * S.Batch * S.outPixels() * S.Cout * K},
              Reads, {YB}, [=](Frame &Fr) {
                const float *Xp = Fr.f32(XB);
                float *Yp = Fr.f32(YB) + YOffset;
                const float *Rp = RB >= 0 ? Fr.f32(RB) : nullptr;
                for (int64_t B = 0; B < Batch; ++B)
                  runDirectConv(DP, Xp + B * XBS, WP, Plan->Bias->get(),
                                Rp ? Rp + B * YBS : nullptr, Plan->Act,
                                Yp + B * YBS, Threads);
              });
    L.own(Plan);
    return true;
  }

  // A single input channel's stride never multiplies a non-zero index:
  // call it 1, so that such an input stored channels-first (a first layer,
  // a framed signal) has its taps read in place as channels-last.
  if (S.Cin == 1)
    S.XC = 1;
  Plan->PixelRows = S.YC == 1 || PixStride != 1;
  // Channels-last input, channels-first output (the last conv of a
  // channels-last body): pixel rows into a channels-last scratch image,
  // then one tiled transposition, rather than im2col columns gathered
  // across channels.
  BufferId TB = -1;
  if (!Plan->PixelRows && S.XC == 1 && !Tail.Residual) {
    Plan->PixelRows = true;
    Plan->ViaScratch = true;
    TB = L.defineScratch(S.outPixels() * S.Cout * int64_t(sizeof(float)));
  }
  // Channels-last input, pixel rows, at most 2 spatial dims: A is read in
  // place, from a zero-padded copy if any tap can reach the padding.
  BufferId PadB = -1;
  DirectInput &DI = Plan->Direct;
  // A channels-first input with few channels (a first layer) is copied
  // channels-last into the padded buffer. Rows of a tile never cross an
  // output row, so narrow outputs (fewer columns than a tile has rows)
  // keep the packed path, unless rows are uniform over the whole image
  // (a pointwise conv with unit stride).
  const int MR = getGemmBlocking().MR;
  const bool Pointwise =
      S.Kernel[0] == 1 && S.Stride[0] == 1 && S.Pad[0] == 0 &&
      S.Out[0] == S.In[0] && S.XS[0] == S.In[1] * S.XS[1] && S.Kernel[1] == 1 &&
      S.Kernel[2] == 1 && S.Stride[1] == 1 && S.Stride[2] == 1 &&
      S.Pad[1] == 0 && S.Pad[2] == 0 && S.Out[1] == S.In[1] &&
      S.Out[2] == S.In[2] && S.XS[1] == S.In[2] * S.XS[2];
  if (Plan->PixelRows && (S.XC == 1 || S.Cin <= 4) &&
      (S.XC == 1 || S.Out[2] >= MR)) {
    DI.Enabled = true;
    DI.Uniform = S.XC == 1 && Pointwise;
    int64_t Need[3];
    bool Reaches = S.XC != 1;
    for (int Dm = 0; Dm < 3; ++Dm) {
      Need[Dm] = (S.Out[Dm] - 1) * S.Stride[Dm] +
                 (S.Kernel[Dm] - 1) * S.Dilation[Dm] + 1;
      Reaches |= S.Pad[Dm] > 0 || Need[Dm] > S.In[Dm];
    }
    DI.Padded = Reaches;
    if (DI.Padded) {
      DI.Dp = std::max(Need[0], S.In[0] + S.Pad[0]);
      DI.Hp = std::max(Need[1], S.In[1] + S.Pad[1]);
      DI.Wp = std::max(Need[2], S.In[2] + S.Pad[2]);
      DI.PixelStride = S.Cin;
      DI.RowStride = DI.Wp * S.Cin;
      DI.PlaneStride = DI.Hp * DI.RowStride;
      Plan->ImageStride = DI.Dp * DI.Hp * DI.Wp * S.Cin;
    } else {
      DI.PixelStride = S.XS[2];
      DI.RowStride = S.XS[1];
      DI.PlaneStride = S.XS[0];
      Plan->ImageStride = S.XB;
    }
    // With unit column dilation and dense pixels of one group, the taps of
    // a kernel row are one contiguous run of KW * Cin elements.
    const bool MergeRow =
        S.Dilation[2] == 1 && S.Group == 1 && DI.PixelStride == S.Cin;
    DI.Width = MergeRow ? S.Kernel[2] * CG : CG;
    for (int64_t KD = 0; KD < S.Kernel[0]; ++KD)
      for (int64_t KH = 0; KH < S.Kernel[1]; ++KH)
        for (int64_t KW = 0; KW < (MergeRow ? 1 : S.Kernel[2]); ++KW)
          DI.TapOffsets.push_back(KD * S.Dilation[0] * DI.PlaneStride +
                                  KH * S.Dilation[1] * DI.RowStride +
                                  KW * S.Dilation[2] * DI.PixelStride);
  }
  // Several images as one GEMM: the output's images must follow each
  // other pixel row after pixel row, and rows read in place need a free
  // outer level for the image (no depth dim). Padded copies cost a
  // padded image each, so only small images merge then.
  Plan->MergeImages = S.Batch > 1 && Plan->PixelRows && !Plan->ViaScratch &&
                      S.YB == S.outPixels() * PixStride &&
                      (!DI.Enabled || ((DI.Uniform || S.Out[0] == 1) &&
                                       (!DI.Padded || S.outPixels() < 1024)));
  if (DI.Padded)
    PadB = L.defineScratch((Plan->MergeImages ? S.Batch : 1) *
                           Plan->ImageStride * int64_t(sizeof(float)));
  for (int64_t G = 0; G < S.Group; ++G) {
    const std::string GroupKey = Key + "/g" + std::to_string(G);
    if (Plan->PixelRows) {
      // B[k][n] = W[G*OG + n][c][tap], k = tap * CG + c.
      auto F = [&Weights, G, OG, CG, Taps](int64_t Nn, int64_t Kk) {
        int64_t Tap = Kk / CG, C = Kk % CG;
        return Weights()[((G * OG + Nn) * CG + C) * Taps + Tap];
      };
      WeightPacker<decltype(F)> WPk(F);
      Plan->Weights.push_back(L.packConstantB(GroupKey, WPk, OG, K, N.getOperand(1)));
    } else {
      // A[m][k] = W[G*OG + m][c][tap], k = c * Taps + tap.
      auto F = [&Weights, G, OG, K](int64_t M, int64_t Kk) {
        return Weights()[(G * OG + M) * K + Kk];
      };
      WeightPacker<decltype(F)> WPk(F);
      Plan->Weights.push_back(L.packConstantA(GroupKey, WPk, OG, K, N.getOperand(1)));
    }
  }
  L.own(Plan);

  std::vector<BufferId> Writes{YB};
  if (PadB >= 0)
    Writes.push_back(PadB);
  if (TB >= 0)
    Writes.push_back(TB);
  const char *Form = S.XC == 1 ? (S.YC == 1 ? "nhwc" : "nhwc_to_nchw")
                               : (S.YC == 1 ? "nchw_to_nhwc" : "nchw");
  Name = std::string("conv.") + Form + (Bias.empty() ? "" : "+bias") +
         (Tail.Residual ? "+add" : "") + (Tail.Act.isNone() ? "" : "+") +
         (Tail.Act.isNone() ? "" : Tail.Act.getName());
  const int64_t Flops =
      2 * S.Batch * S.outPixels() * S.Cout * S.cinPerGroup() * S.taps();
  L.addStep({Tail.Result->getName(), Name, false, Flops}, Reads, Writes,
            [=](Frame &Fr) {
              const ConvShape &S = Plan->S;
              const DirectInput &DI = Plan->Direct;
              const float *Xp = Fr.f32(XB);
              float *Yp = Fr.f32(YB) + YOffset;
              const float *Rp = RB >= 0 ? Fr.f32(RB) : nullptr;
              const int64_t OG = S.coutPerGroup(), CG = S.cinPerGroup();
              const bool Merge = Plan->MergeImages;
              const int64_t Images = Merge ? S.Batch : 1;
              for (int64_t B = 0; B < S.Batch / Images; ++B) {
                const float *XI = Xp + B * S.XB;
                DirectA DA;
                if (DI.Enabled) {
                  const float *Src = XI;
                  if (DI.Padded) {
                    float *Pad = Fr.f32(PadB);
                    for (int64_t I = 0; I < Images; ++I)
                      padChannelsLast(S, XI + I * S.XB, DI,
                                      Pad + I * Plan->ImageStride);
                    Src = Pad;
                  }
                  DA.Base = Src;
                  if (DI.Uniform) {
                    // One segment per image.
                    DA.SegRows = S.outPixels();
                    DA.SegStride = Plan->ImageStride;
                  } else {
                    // Rows of one output row per segment; planes (or, merged,
                    // images) as the outer level.
                    DA.SegRows = S.Out[2];
                    DA.SegStride = S.Stride[1] * DI.RowStride;
                    DA.OuterSegs = S.Out[1];
                    DA.OuterStride = Merge ? Plan->ImageStride
                                           : S.Stride[0] * DI.PlaneStride;
                  }
                  DA.RowStride = S.Stride[2] * DI.PixelStride;
                  DA.Width = DI.Width;
                  DA.TapOffsets = DI.TapOffsets.data();
                }
                float *Scratch = Plan->ViaScratch ? Fr.f32(TB) : nullptr;
                for (int64_t G = 0; G < S.Group; ++G) {
                  GemmProblem GP;
                  const int64_t YOff = B * S.YB + G * OG * S.YC;
                  GP.C = Scratch ? Scratch + G * OG : Yp + YOff;
                  GP.K = CG * S.taps();
                  GP.Epi.Act = Plan->Act;
                  GP.Epi.Residual = Rp ? Rp + YOff : nullptr;
                  if (Plan->PixelRows) {
                    PixelRowsPacker A(S, XI, G * CG);
                    DirectA DG = DA;
                    GP.M = Images * S.outPixels();
                    GP.N = OG;
                    if (DI.Enabled) {
                      DG.Base = DA.Base + G * CG;
                      GP.Direct = &DG;
                    } else {
                      GP.A = &A;
                    }
                    GP.PackedB = &Plan->Weights[size_t(G)];
                    GP.LdM = Scratch ? S.Cout : PixStride;
                    GP.LdN = Scratch ? 1 : S.YC;
                    GP.Epi.Bias = Plan->Bias->get() + G * OG;
                    GP.Epi.BiasPerRow = false;
                    runGemm(GP, Threads);
                  } else {
                    PixelColsPacker Bp(S, XI, G * CG);
                    GP.M = OG;
                    GP.N = S.outPixels();
                    GP.PackedA = &Plan->Weights[size_t(G)];
                    GP.B = &Bp;
                    GP.LdM = S.YC;
                    GP.LdN = PixStride;
                    GP.Epi.Bias = Plan->Bias->get() + G * OG;
                    GP.Epi.BiasPerRow = true;
                    runGemm(GP, Threads);
                  }
                }
                if (Scratch) {
                  // [pixel][channel] -> the output's channel and pixel strides.
                  const int64_t Shape[2] = {S.Cout, S.outPixels()};
                  const int64_t From[2] = {1, S.Cout};
                  const int64_t To[2] = {S.YC, PixStride};
                  copyStrided(2, Shape,
                              reinterpret_cast<const uint8_t *>(Scratch), From,
                              reinterpret_cast<uint8_t *>(Yp + B * S.YB), To,
                              sizeof(float), Threads);
                }
              }
            });
  return true;
}

namespace {

/// Element \p M of a one-element or per-channel constant.
double paramAt(const TensorData &D, int64_t M) {
  return D.getDouble(D.getNumElements() == 1 ? 0 : M);
}

bool is8Bit(ElementType T) {
  return T == ElementType::U8 || T == ElementType::I8;
}

/// Where an integer conv's weight-derived block puts things: the packed
/// weight (or the depthwise taps) first, then per-channel arrays of
/// Channels entries (Cout padded by a vector).
struct IntegerWeightLayout {
  bool Depthwise = false;
  int64_t Lanes = 0, TapStride = 0, PackedBytes = 0, Channels = 0;
};

/// The GEMM geometry of \p S into \p P, and the layout of its weight
/// block. Depthwise, channels-last on both sides: the direct kernel; its
/// weight is tap-major int32 less the zero points, channels padded to 4
/// vectors.
IntegerWeightLayout setIntegerConvShape(const ConvShape &S,
                                        QuantizedConvParams &P) {
  static_cast<ConvWindow &>(P) = S.window();
  P.Group = S.Group;
  P.CinG = S.cinPerGroup();
  P.CoutG = S.coutPerGroup();
  P.K = P.CinG * S.taps();
  P.KPad = (P.K + 3) / 4 * 4;
  P.XC = S.XC;
  P.YC = S.YC;
  IntegerWeightLayout WL;
  WL.Lanes = getQuantizedConvLanes();
  P.ColVectors = (P.CoutG + WL.Lanes - 1) / WL.Lanes;
  WL.Depthwise =
      S.Group == S.Cin && S.Group == S.Cout && S.XC == 1 && S.YC == 1;
  WL.TapStride = (S.Cout + 4 * WL.Lanes - 1) / (4 * WL.Lanes) * 4 * WL.Lanes;
  WL.PackedBytes =
      WL.Depthwise
          ? S.taps() * WL.TapStride * 4
          : (P.Group * P.ColVectors * P.KPad * WL.Lanes + 63) / 64 * 64;
  WL.Channels = S.Cout + WL.Lanes;
  return WL;
}

/// Writes the constant weight \p W (of zero points \p WZ) of a conv of
/// geometry \p S at \p Dst as the kernels read it (WL), and per output
/// channel M, shifted to s8 as the file comment of the kernels says, its
/// zero point Z[M] and Sum[M], the sum over k of w (of w - Z when
/// depthwise: the taps hold that).
void fillIntegerWeights(const Value &W, const TensorData &WZ,
                        const ConvShape &S, const QuantizedConvParams &P,
                        const IntegerWeightLayout &WL, float *Dst, int64_t *Sum,
                        int32_t *Z) {
  const TensorData &WD = *W.getConstantDataRef();
  const TensorType &WT = W.getType();
  const bool WUnsigned = WT.getElementType() == ElementType::U8;
  const auto WStrides = getStrides(WT);
  const unsigned Rank = WT.getRank();
  // The weight as s8 [Cout][K], k = tap * CinG + c, read through its
  // strides (its logical order is [Cout][CinG][taps]).
  const int64_t Taps = S.taps(), CG = P.CinG;
  std::vector<int32_t> Dense(size_t(S.Cout * P.K));
  for (int64_t M = 0; M < S.Cout; ++M)
    for (int64_t C = 0; C < CG; ++C)
      for (int64_t T = 0; T < Taps; ++T) {
        int64_t Off = M * WStrides[0] + C * WStrides[1], Rest = T;
        for (unsigned D = Rank; D-- > 2;) {
          const int64_t Size = WT.getDim(D).getSize();
          Off += (Rest % Size) * WStrides[D];
          Rest /= Size;
        }
        Dense[size_t(M * P.K + T * CG + C)] =
            int32_t(WD.getInt(Off)) - (WUnsigned ? 128 : 0);
      }
  auto WeightAt = [&](int64_t M, int64_t Kk) {
    return Dense[size_t(M * P.K + Kk)];
  };
  for (int64_t M = 0; M < S.Cout; ++M)
    Z[M] = int32_t(paramAt(WZ, M)) - (WUnsigned ? 128 : 0);
  if (WL.Depthwise) {
    int32_t *TapW = reinterpret_cast<int32_t *>(Dst);
    for (int64_t M = 0; M < S.Cout; ++M)
      for (int64_t T = 0; T < Taps; ++T)
        TapW[T * WL.TapStride + M] = WeightAt(M, T) - Z[M];
  } else {
    packQuantizedConvWeights(P, WeightAt, WL.Lanes,
                             reinterpret_cast<uint8_t *>(Dst));
  }
  for (int64_t M = 0; M < S.Cout; ++M) {
    int64_t Total = 0;
    for (int64_t Kk = 0; Kk < P.K; ++Kk)
      Total += WeightAt(M, Kk) - (WL.Depthwise ? Z[M] : 0);
    Sum[M] = Total;
  }
}

/// Whether some of the \p Cout weight zero points \p WZ, shifted to s8 as
/// fillIntegerWeights shifts them (\p WUnsigned: less 128), is not 0: the
/// GEMM then needs its rows' sums of x.
bool hasWeightZeroPoint(const TensorData &WZ, bool WUnsigned, int64_t Cout) {
  for (int64_t M = 0; M < Cout; ++M)
    if (int32_t(paramAt(WZ, M)) - (WUnsigned ? 128 : 0) != 0)
      return true;
  return false;
}

/// The per-channel bias of the kernels' sums for x's zero point \p XZero
/// (shifted to u8) and the weight's terms \p Sum, \p Z (fillIntegerWeights)
/// plus \p Bias: B - XZero Sum + K XZero Z (no last term when depthwise),
/// wrapped to int32 as ONNX's int32 sums wrap.
int32_t getColumnBias(int64_t Bias, int32_t XZero, int64_t Sum, int32_t Z,
                      int64_t K, bool Depthwise) {
  const int64_t B =
      Bias - int64_t(XZero) * Sum + (Depthwise ? 0 : K * int64_t(XZero) * Z);
  return int32_t(uint32_t(B));
}

/// The step kind of an integer conv: its form ("qconv.nhwc",
/// "qconv.depthwise.nchw_to_nhwc").
std::string getIntegerConvForm(const ConvShape &S, bool Depthwise) {
  const char *Form = S.XC == 1 ? (S.YC == 1 ? "nhwc" : "nhwc_to_nchw")
                               : (S.YC == 1 ? "nchw_to_nhwc" : "nchw");
  return std::string(Depthwise ? "qconv.depthwise." : "qconv.") + Form;
}

} // namespace

/// QLinearConv with constant weights and quantization parameters on the
/// integer GEMM of QuantizedConvKernels.cpp, in any layout (channels-last
/// gathers contiguous rows).
bool cpu::lowerQLinearConv(LoweringContext &L, const Node &N,
                           const FusedTail &Tail) {
  if (N.getNumResults() != 1 || N.getNumOperands() < 8 || Tail.Residual ||
      !Tail.Act.isNone())
    return false;
  const Value *X = N.getOperand(0);
  const ElementType XE = X->getType().getElementType();
  const ElementType WE = N.getOperand(3)->getType().getElementType();
  const ElementType YE = N.getResult(0)->getType().getElementType();
  if (!is8Bit(XE) || !is8Bit(WE) || !is8Bit(YE))
    return false;
  TensorDataRef Params[9];
  for (unsigned I = 1; I < N.getNumOperands(); ++I)
    if (N.hasOperand(I) && !(Params[I] = N.getOperand(I)->getConstantDataRef()))
      return false;
  const TensorData &XS = *Params[1], &XZ = *Params[2], &WS = *Params[4],
                   &WZ = *Params[5], &YS = *Params[6], &YZ = *Params[7];
  if (XS.getNumElements() != 1 || XZ.getNumElements() != 1 ||
      YS.getNumElements() != 1 || YZ.getNumElements() != 1)
    return false;
  auto Plan = std::make_shared<ConvShape>();
  ConvShape &S = *Plan;
  if (!readConvShape(N, S) || S.outPixelStride() == 0)
    return false;
  for (const TensorData *P : {&WS, &WZ})
    if (P->getNumElements() != 1 && P->getNumElements() != S.Cout)
      return false;
  if (Params[8] && Params[8]->getNumElements() != S.Cout)
    return false;
  // Multipliers that are not finite numbers (a zero y_scale, infinite or
  // NaN scales) are the reference's to define (its NaN goes to the zero
  // point, the vector clamp's to the low bound).
  for (int64_t M = 0; M < S.Cout; ++M)
    if (!std::isfinite(runtime::getRequantScale(float(XS.getDouble(0)),
                                                float(paramAt(WS, M)),
                                                float(YS.getDouble(0)))))
      return false;

  QuantizedConvParams P;
  const IntegerWeightLayout WL = setIntegerConvShape(S, P);
  // The signed-unsigned shifts of the file comment of the kernels.
  const bool XSigned = XE == ElementType::I8, WUnsigned = WE == ElementType::U8;
  const int32_t XZero = int32_t(XZ.getInt(0)) + (XSigned ? 128 : 0);
  P.XZero = uint8_t(XZero);
  P.XFlip = XSigned ? 0x80 : 0;
  P.YSigned = YE == ElementType::I8;
  P.Lo = P.YSigned ? -128 : 0;
  P.Hi = P.YSigned ? 127 : 255;
  P.YZero = int32_t(YZ.getInt(0));
  P.YZeroShifted = P.YZero - P.Lo;

  // One derived block: the weight, then per channel (padded by a vector)
  // the bias, the weight's zero points and the multipliers.
  const int64_t Channels = WL.Channels;
  const size_t Floats = size_t(WL.PackedBytes / 4 + 3 * Channels);
  const float XScale = float(XS.getDouble(0)), YScale = float(YS.getDouble(0));
  const bool AnyWZero = hasWeightZeroPoint(WZ, WUnsigned, S.Cout);
  const float *Block = L.deriveFloats(
      "qconv/" + N.getResult(0)->getName() + "/L" + std::to_string(WL.Lanes),
      Floats,
      [&](float *Dst) {
        int32_t *Bias = reinterpret_cast<int32_t *>(Dst + WL.PackedBytes / 4);
        int32_t *WZero = Bias + Channels;
        float *Scale = reinterpret_cast<float *>(WZero + Channels);
        std::vector<int64_t> Sum(size_t(S.Cout));
        fillIntegerWeights(*N.getOperand(3), WZ, S, P, WL, Dst, Sum.data(),
                           WZero);
        for (int64_t M = 0; M < S.Cout; ++M) {
          Bias[M] = getColumnBias(Params[8] ? Params[8]->getInt(M) : 0, XZero,
                                  Sum[size_t(M)], WZero[M], P.K, WL.Depthwise);
          Scale[M] =
              runtime::getRequantScale(XScale, float(paramAt(WS, M)), YScale);
        }
      },
      N.getOperand(3));
  if (WL.Depthwise) {
    P.TapWeights = reinterpret_cast<const int32_t *>(Block);
    P.WeightStride = WL.TapStride;
  } else {
    P.Packed = reinterpret_cast<const uint8_t *>(Block);
  }
  P.ColBias = reinterpret_cast<const int32_t *>(Block + WL.PackedBytes / 4);
  P.WZero = AnyWZero && !WL.Depthwise ? P.ColBias + Channels : nullptr;
  P.Scale = reinterpret_cast<const float *>(P.ColBias + 2 * Channels);

  BufferId XB = L.getBuffer(X);
  BufferId YB = L.defineBuffer(Tail.Result);
  const int Threads = L.getThreads();
  const int64_t XBS = S.XB, YBS = S.YB, Batch = S.Batch;
  L.addStep({Tail.Result->getName(), getIntegerConvForm(S, WL.Depthwise), false,
             2 * S.Batch * S.outPixels() * S.Cout * P.K},
            {XB}, {YB}, [=](Frame &Fr) {
              const uint8_t *Xp = Fr.bytes(XB);
              uint8_t *Yp = Fr.bytes(YB);
              for (int64_t B = 0; B < Batch; ++B)
                runQuantizedConv(P, Xp + B * XBS, Yp + B * YBS, Threads);
            });
  L.own(Plan);
  return true;
}

namespace {

/// One element, or one per channel of a result of type \p Y: rank at most
/// Y's, every dim 1 but the one that broadcasts against Y's dim 1, which
/// is \p Cout. Such a tensor's elements lie in channel order in any
/// layout.
bool isPerChannel(const TensorType &T, const TensorType &Y, int64_t Cout) {
  if (!T.hasStaticShape())
    return false;
  const auto Shape = T.getStaticShape();
  const unsigned R = unsigned(Shape.size()), YR = Y.getRank();
  if (R > YR)
    return false;
  int64_t Count = 1;
  for (unsigned I = 0; I < R; ++I) {
    Count *= Shape[I];
    if (Shape[I] != 1 && (YR - R + I != 1 || Shape[I] != Cout))
      return false;
  }
  return Count == 1 || Count == Cout;
}

/// A one-element or per-channel f32 value (isPerChannel) as the kernels
/// read it at run time: from a constant, or from its buffer.
struct ChannelFloats {
  std::shared_ptr<AlignedFloats> Constant;
  BufferId Buffer = -1;
  bool PerChannel = false;

  /// False when \p V is not such a value.
  bool read(LoweringContext &L, const Value *V, const TensorType &Y,
            int64_t Cout) {
    if (!isF32(V) || !isPerChannel(V->getType(), Y, Cout))
      return false;
    PerChannel = V->getType().getNumElements().getValueOr(0) != 1;
    if (V->getConstantData()) {
      std::vector<float> F = getConstantFloats(V);
      if (F.empty())
        return false;
      if (!PerChannel)
        F.assign(size_t(Cout), F[0]);
      Constant = makePaddedFloats(F, Cout);
      L.own(Constant);
    } else {
      Buffer = L.getBuffer(V);
    }
    return true;
  }
  /// The Cout values of this run: the constant's, or \p Dst filled.
  const float *get(const Frame &Fr, int64_t Cout, float *Dst) const {
    if (Constant)
      return Constant->get();
    const float *Src = Fr.f32(Buffer);
    for (int64_t M = 0; M < Cout; ++M)
      Dst[M] = Src[PerChannel ? M : 0];
    return Dst;
  }
};

} // namespace

/// ConvInteger with a constant weight and weight zero point on the integer
/// kernels of QuantizedConvKernels.cpp; x's zero point may be computed at
/// run time (DynamicQuantizeLinear's). Alone it stores the i32 sums; with
/// the rescale after it (Cast to f32, Mul by one or per-channel scales, an
/// optional per-channel constant, a residual, Relu or Clip: Fusion.h) it
/// stores the f32 result.
bool cpu::lowerConvInteger(LoweringContext &L, const Node &N,
                           const FusedTail &Tail) {
  if (N.getNumResults() != 1 || N.getNumOperands() < 2)
    return false;
  const Value *X = N.getOperand(0), *W = N.getOperand(1);
  const ElementType XE = X->getType().getElementType();
  if (!is8Bit(XE) || !is8Bit(W->getType().getElementType()) ||
      !W->getConstantData() ||
      N.getResult(0)->getType().getElementType() != ElementType::I32)
    return false;
  const bool Float = Tail.Scale != nullptr;
  if (!Float && (Tail.Residual || !Tail.Act.isNone()))
    return false;
  float FLo = -INFINITY, FHi = INFINITY;
  switch (Tail.Act.Kind) {
  case ActKind::None:
    break;
  case ActKind::Relu:
    FLo = 0;
    break;
  case ActKind::Clip:
    FLo = Tail.Act.Alpha;
    FHi = Tail.Act.Beta;
    break;
  default:
    return false;
  }
  TensorDataRef WZ = N.hasOperand(3) ? N.getOperand(3)->getConstantDataRef()
                                     : TensorData::fromFloat({}, {0.0f});
  if (!WZ)
    return false;
  const Value *XZV = N.hasOperand(2) ? N.getOperand(2) : nullptr;
  TensorDataRef XZC = XZV ? XZV->getConstantDataRef() : nullptr;
  if (XZV && !XZC && XZV->getType().getNumElements().getValueOr(0) != 1)
    return false;
  auto Plan = std::make_shared<ConvShape>();
  ConvShape &S = *Plan;
  if (!readConvShape(N, S) || S.outPixelStride() == 0)
    return false;
  if (WZ->getNumElements() != 1 && WZ->getNumElements() != S.Cout)
    return false;
  const TensorType &YT = N.getResult(0)->getType();
  if (Float && !haveSameElementOrder(Tail.Result->getType(), YT))
    return false;
  ChannelFloats Scale, Shift;
  if (Float && (!Scale.read(L, Tail.Scale, YT, S.Cout) ||
                (Tail.Shift &&
                 (!Shift.read(L, Tail.Shift, YT, S.Cout) || !Shift.Constant))))
    return false;
  if (Tail.Residual && (!isF32(Tail.Residual) ||
                        !codegen::haveSameBytes(Tail.Residual->getType(),
                                                Tail.Result->getType())))
    return false;

  QuantizedConvParams P;
  const IntegerWeightLayout WL = setIntegerConvShape(S, P);
  const bool XSigned = XE == ElementType::I8;
  P.XFlip = XSigned ? 0x80 : 0;
  P.Store = Float ? QuantizedConvStore::Float : QuantizedConvStore::Int32;
  P.YBytes = 4;
  P.FLo = FLo;
  P.FHi = FHi;
  P.HasResidual = Tail.Residual != nullptr;
  if (Shift.Constant)
    P.Shift = Shift.Constant->get();

  // The weight block: the weight, then per channel (padded by a vector)
  // Sum and Z of fillIntegerWeights (Sum wrapped to int32).
  const int64_t Channels = WL.Channels;
  const bool AnyWZero = hasWeightZeroPoint(
      *WZ, W->getType().getElementType() == ElementType::U8, S.Cout);
  const float *Block = L.deriveFloats(
      "convinteger/" + N.getResult(0)->getName() + "/L" +
          std::to_string(WL.Lanes),
      size_t(WL.PackedBytes / 4 + 2 * Channels),
      [&](float *Dst) {
        int32_t *Sum = reinterpret_cast<int32_t *>(Dst + WL.PackedBytes / 4);
        int32_t *Z = Sum + Channels;
        std::vector<int64_t> Sum64(size_t(S.Cout));
        fillIntegerWeights(*W, *WZ, S, P, WL, Dst, Sum64.data(), Z);
        for (int64_t M = 0; M < S.Cout; ++M)
          Sum[M] = int32_t(uint32_t(Sum64[size_t(M)]));
      },
      W);
  if (WL.Depthwise) {
    P.TapWeights = reinterpret_cast<const int32_t *>(Block);
    P.WeightStride = WL.TapStride;
  } else {
    P.Packed = reinterpret_cast<const uint8_t *>(Block);
  }
  const int32_t *Sum =
      reinterpret_cast<const int32_t *>(Block + WL.PackedBytes / 4);
  const int32_t *Z = Sum + Channels;
  P.WZero = AnyWZero && !WL.Depthwise ? Z : nullptr;

  BufferId XB = L.getBuffer(X);
  BufferId ZB = XZV && !XZC ? L.getBuffer(XZV) : -1;
  const int32_t XZConst =
      (XZC ? int32_t(XZC->getInt(0)) : 0) + (XSigned ? 128 : 0);
  BufferId RB = Tail.Residual ? L.getBuffer(Tail.Residual) : -1;
  BufferId YB;
  if (RB >= 0 && L.canOverwrite(Tail.Residual, L.getNodeIndex(Tail.Last))) {
    L.alias(Tail.Result, Tail.Residual);
    YB = RB;
  } else {
    YB = L.defineBuffer(Tail.Result);
  }
  // This run's column biases and scales.
  BufferId TB = L.defineScratch(2 * Channels * 4);
  std::vector<BufferId> Reads{XB};
  for (BufferId B : {ZB, Scale.Buffer, RB})
    if (B >= 0)
      Reads.push_back(B);
  const int Threads = L.getThreads();
  const int64_t XBS = S.XB, YBS = S.YB * 4, Batch = S.Batch, Cout = S.Cout;
  std::string Kind = getIntegerConvForm(S, WL.Depthwise);
  if (Float)
    Kind += std::string("+rescale") + (Tail.Residual ? "+add" : "") +
            (Tail.Act.isNone() ? "" : "+") +
            (Tail.Act.isNone() ? "" : Tail.Act.getName());
  L.addStep({Tail.Result->getName(), Kind, false,
             2 * S.Batch * S.outPixels() * S.Cout * P.K},
            Reads, {YB, TB}, [=](Frame &Fr) {
              QuantizedConvParams Q = P;
              const int32_t XZero =
                  ZB >= 0
                      ? int32_t(XSigned ? int32_t(int8_t(*Fr.bytes(ZB))) + 128
                                        : int32_t(*Fr.bytes(ZB)))
                      : XZConst;
              Q.XZero = uint8_t(XZero);
              int32_t *ColBias = reinterpret_cast<int32_t *>(Fr.bytes(TB));
              for (int64_t M = 0; M < Cout; ++M)
                ColBias[M] =
                    getColumnBias(0, XZero, Sum[M], Z[M], Q.K, WL.Depthwise);
              std::fill(ColBias + Cout, ColBias + Channels, 0);
              Q.ColBias = ColBias;
              if (Float) {
                float *ScaleRun = reinterpret_cast<float *>(ColBias + Channels);
                std::fill(ScaleRun + Cout, ScaleRun + Channels, 0.0f);
                Q.Scale = Scale.get(Fr, Cout, ScaleRun);
              }
              const uint8_t *Xp = Fr.bytes(XB);
              uint8_t *Yp = Fr.bytes(YB);
              if (RB >= 0)
                Q.ResidualOffset = std::ptrdiff_t(
                    reinterpret_cast<std::uintptr_t>(Fr.bytes(RB)) -
                    reinterpret_cast<std::uintptr_t>(Yp));
              for (int64_t B = 0; B < Batch; ++B)
                runQuantizedConv(Q, Xp + B * XBS, Yp + B * YBS, Threads);
            });
  L.own(Plan);
  return true;
}

namespace {

/// Geometry of a transposed conv normalized to 3 spatial dims (leading
/// unit dims).
struct ConvTransposeShape {
  int64_t Batch = 1, Cin = 1, Cout = 1, Group = 1;
  int64_t In[3] = {1, 1, 1}, Out[3] = {1, 1, 1}, Kernel[3] = {1, 1, 1};
  int64_t Stride[3] = {1, 1, 1}, Dilation[3] = {1, 1, 1};
  int64_t PadBegin[3] = {0, 0, 0};
  // Element strides: input (batch, channel, spatial...), output likewise.
  int64_t XB = 0, XC = 0, XS[3] = {0, 0, 0};
  int64_t YB = 0, YC = 0, YS[3] = {0, 0, 0};

  int64_t cinPerGroup() const { return Cin / Group; }
  int64_t coutPerGroup() const { return Cout / Group; }
  int64_t taps() const { return Kernel[0] * Kernel[1] * Kernel[2]; }
  int64_t inPixels() const { return In[0] * In[1] * In[2]; }
  int64_t outPixels() const { return Out[0] * Out[1] * Out[2]; }
};

/// Reads the geometry of \p N (resolveWindow: pads from auto_pad,
/// output_shape and output_padding); false if anything is outside what the
/// kernels cover or the result shape disagrees.
bool readShape(const Node &N, ConvTransposeShape &S) {
  const TensorType &XT = N.getOperand(0)->getType();
  const TensorType &WT = N.getOperand(1)->getType();
  const TensorType &YT = N.getResult(0)->getType();
  const unsigned Rank = XT.getRank();
  if (Rank < 3 || Rank > 5 || WT.getRank() != Rank || YT.getRank() != Rank)
    return false;
  const unsigned Sp = Rank - 2, Off = 3 - Sp;
  auto X = XT.getStaticShape(), W = WT.getStaticShape(),
       Y = YT.getStaticShape();
  auto XStr = getStrides(XT), YStr = getStrides(YT);
  S.Batch = X[0];
  S.Cin = X[1];
  S.Cout = Y[1];
  S.Group = N.getIntAttr("group", 1);
  if (S.Group < 1 || S.Cin % S.Group || W[0] != S.Cin ||
      W[1] * S.Group != S.Cout || Y[0] != S.Batch)
    return false;
  S.XB = XStr[0];
  S.XC = XStr[1];
  S.YB = YStr[0];
  S.YC = YStr[1];
  auto Axes = resolveWindow(N, llvm::makeArrayRef(X).drop_front(2),
                            llvm::makeArrayRef(W).drop_front(2),
                            /*Transposed=*/true);
  if (!Axes) {
    llvm::consumeError(Axes.takeError());
    return false;
  }
  for (unsigned I = 0; I < Sp; ++I) {
    const WindowAxis &A = (*Axes)[I];
    const unsigned D = Off + I;
    S.In[D] = X[2 + I];
    S.Out[D] = Y[2 + I];
    S.Kernel[D] = W[2 + I];
    S.Stride[D] = A.Stride;
    S.Dilation[D] = A.Dilation;
    S.XS[D] = XStr[2 + I];
    S.YS[D] = YStr[2 + I];
    S.PadBegin[D] = A.PadBegin;
    if (A.Out != S.Out[D] || S.In[D] < 1 || S.Out[D] < 1)
      return false;
  }
  for (unsigned D = Off; D-- > 0;) {
    S.XS[D] = S.XS[D + 1] * S.In[D + 1];
    S.YS[D] = S.YS[D + 1] * S.Out[D + 1];
  }
  return S.Batch > 0 && S.Cin > 0 && S.Cout > 0;
}

/// Output o of one axis receives, through tap t, input i with
/// i * Stride + t * Dilation - PadBegin = o.
Col2ImAxis tabulateAxis(int64_t In, int64_t Out, int64_t Kernel, int64_t Stride,
                        int64_t Dilation, int64_t PadBegin) {
  Col2ImAxis A;
  A.Begin.push_back(0);
  for (int64_t O = 0; O < Out; ++O) {
    for (int64_t T = 0; T < Kernel; ++T) {
      const int64_t Num = O + PadBegin - T * Dilation;
      if (Num >= 0 && Num % Stride == 0 && Num / Stride < In) {
        A.Tap.push_back(int32_t(T));
        A.In.push_back(int32_t(Num / Stride));
      }
    }
    A.Begin.push_back(int32_t(A.Tap.size()));
  }
  return A;
}

struct ConvTransposePlan {
  ConvTransposeShape S;
  bool PixelRows = true; ///< Channels-last columns (which formulation).
  Col2ImParams Col2Im;
  std::vector<PackedOperand> Weights; ///< One per group.
  std::shared_ptr<AlignedFloats> Bias;
};

} // namespace

bool cpu::lowerConvTranspose(LoweringContext &L, const Node &N,
                             const FusedTail &Tail) {
  if (N.getNumResults() != 1 || N.getNumOperands() < 2 || Tail.Residual ||
      !Tail.Act.isNone() || Tail.Result != N.getResult(0))
    return false;
  const Value *X = N.getOperand(0), *Y = N.getResult(0);
  if (X->getType().getElementType() != ElementType::F32 ||
      Y->getType().getElementType() != ElementType::F32)
    return false;
  ConstantWeights Weights;
  if (!Weights.read(N))
    return false;
  const std::vector<float> &Bias = Weights.Bias;
  auto Plan = std::make_shared<ConvTransposePlan>();
  ConvTransposeShape &S = Plan->S;
  if (!readShape(N, S) || (!Bias.empty() && int64_t(Bias.size()) != S.Cout))
    return false;
  // Input pixels must nest (one stride walks them all).
  if (S.XS[1] != S.In[2] * S.XS[2] || S.XS[0] != S.In[1] * S.XS[1])
    return false;
  // Channels-last columns need contiguous output channels; channels-first
  // ones contiguous output rows.
  Plan->PixelRows = S.YC == 1;
  if (!Plan->PixelRows && S.YS[2] != 1)
    return false;
  const int64_t CG = S.cinPerGroup(), OG = S.coutPerGroup(), Taps = S.taps();
  const int64_t InPix = S.inPixels(), ColN = OG * Taps;
  const int64_t ColBytes = InPix * ColN * int64_t(sizeof(float));
  if (ColBytes > (int64_t(1) << 30))
    return false;

  Col2ImParams &CP = Plan->Col2Im;
  CP.Channels = OG;
  CP.YC = S.YC;
  for (unsigned D = 0; D < 3; ++D) {
    CP.In[D] = S.In[D];
    CP.Out[D] = S.Out[D];
    CP.Kernel[D] = S.Kernel[D];
    CP.YS[D] = S.YS[D];
    CP.Axes[D] = tabulateAxis(S.In[D], S.Out[D], S.Kernel[D], S.Stride[D],
                              S.Dilation[D], S.PadBegin[D]);
  }
  // W is [Cin][OG][taps]; group G's input channels come first.
  const std::string Key = "convtranspose/" + Y->getName();
  for (int64_t G = 0; G < S.Group; ++G) {
    const std::string GroupKey = Key + "/g" + std::to_string(G);
    if (Plan->PixelRows) {
      // B[c][tap * OG + m].
      auto F = [&Weights, G, CG, OG, Taps](int64_t Col, int64_t C) {
        const int64_t Tap = Col / OG, M = Col % OG;
        return Weights()[size_t(((G * CG + C) * OG + M) * Taps + Tap)];
      };
      WeightPacker<decltype(F)> WP(F);
      Plan->Weights.push_back(L.packConstantB(GroupKey, WP, ColN, CG, N.getOperand(1)));
    } else {
      // A[m * Taps + tap][c].
      auto F = [&Weights, G, CG, OG, Taps](int64_t Row, int64_t C) {
        return Weights()[size_t((G * CG + C) * OG * Taps + Row)];
      };
      WeightPacker<decltype(F)> WP(F);
      Plan->Weights.push_back(L.packConstantA(GroupKey, WP, ColN, CG, N.getOperand(1)));
    }
  }
  Plan->Bias = makePaddedFloats(Bias, S.Cout);
  L.own(Plan);

  const BufferId XB = L.getBuffer(X);
  const BufferId YB = L.defineBuffer(Y);
  const BufferId ColB = L.defineScratch(ColBytes);
  const int Threads = L.getThreads();
  const char *Form = S.XC == 1 ? (S.YC == 1 ? "nhwc" : "nhwc_to_nchw")
                               : (S.YC == 1 ? "nchw_to_nhwc" : "nchw");
  const std::string Name =
      std::string("convtranspose.") + Form + (Bias.empty() ? "" : "+bias");
  const int64_t Flops = 2 * S.Batch * InPix * S.Cin * OG * Taps;
  L.addStep(
      {Y->getName(), Name, false, Flops}, {XB}, {YB, ColB}, [=](Frame &Fr) {
        const ConvTransposeShape &S = Plan->S;
        const float *Xp = Fr.f32(XB);
        float *Yp = Fr.f32(YB);
        float *Col = Fr.f32(ColB);
        const int64_t XP = S.XS[2];
        for (int64_t B = 0; B < S.Batch; ++B)
          for (int64_t G = 0; G < S.Group; ++G) {
            const float *XG = Xp + B * S.XB + G * CG * S.XC;
            const float *BiasG = Plan->Bias->get() + G * OG;
            GemmProblem GP;
            GP.K = CG;
            GP.C = Col;
            if (Plan->PixelRows) {
              GP.M = InPix;
              GP.N = ColN;
              auto A = makeStridedAPacker(XG, XP, S.XC);
              DirectA DA = DirectA::matrix(XG, InPix, CG, XP);
              if (S.XC == 1)
                GP.Direct = &DA;
              else
                GP.A = &A;
              GP.PackedB = &Plan->Weights[size_t(G)];
              GP.LdM = ColN;
              GP.LdN = 1;
              runGemm(GP, Threads);
              runCol2ImChannelsLast(Plan->Col2Im, Col, BiasG,
                                    Yp + B * S.YB + G * OG, Threads);
            } else {
              GP.M = ColN;
              GP.N = InPix;
              auto Bp = makeStridedBPacker(XG, S.XC, XP);
              GP.PackedA = &Plan->Weights[size_t(G)];
              GP.B = &Bp;
              GP.LdM = InPix;
              GP.LdN = 1;
              runGemm(GP, Threads);
              runCol2ImChannelsFirst(Plan->Col2Im, Col, BiasG,
                                     Yp + B * S.YB + G * OG * S.YC, Threads);
            }
          }
      });
  return true;
}
