//===- LowerConvTranspose.cpp - Transposed convolutions as GEMM + col2im --===//
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

#include "strider/IR/WindowGeometry.h"

#include <algorithm>

using namespace strider;
using namespace strider::cpu;

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
  const Value *WV = N.getOperand(1);
  if (!isConstantF32(WV))
    return false;
  // Read only where a DerivedStore does not hold the packed form.
  std::vector<float> W;
  auto Weights = [&]() -> const std::vector<float> & {
    if (W.empty())
      W = getConstantFloats(WV);
    return W;
  };
  std::vector<float> Bias;
  if (N.hasOperand(2)) {
    Bias = getConstantFloats(N.getOperand(2));
    if (Bias.empty())
      return false;
  }
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
      Plan->Weights.push_back(L.packConstantB(GroupKey, WP, ColN, CG));
    } else {
      // A[m * Taps + tap][c].
      auto F = [&Weights, G, CG, OG, Taps](int64_t Row, int64_t C) {
        return Weights()[size_t((G * CG + C) * OG * Taps + Row)];
      };
      WeightPacker<decltype(F)> WP(F);
      Plan->Weights.push_back(L.packConstantA(GroupKey, WP, ColN, CG));
    }
  }
  Plan->Bias = makePaddedFloats(Bias, S.Cout);
  L.own(Plan);

  ProgramImpl *PP = &L.getProgram();
  const BufferId XB = L.getBuffer(X);
  const BufferId YB = L.defineBuffer(Y);
  const BufferId ColB = L.defineScratch(ColBytes);
  const int Threads = L.getThreads();
  const char *Form = S.XC == 1 ? (S.YC == 1 ? "nhwc" : "nhwc_to_nchw")
                               : (S.YC == 1 ? "nchw_to_nhwc" : "nchw");
  const std::string Name =
      std::string("convtranspose.") + Form + (Bias.empty() ? "" : "+bias");
  const int64_t Flops = 2 * S.Batch * InPix * S.Cin * OG * Taps;
  L.addStep({Y->getName(), Name, false, Flops}, {XB}, {YB, ColB}, [=]() {
    const ConvTransposeShape &S = Plan->S;
    const float *Xp = PP->f32(XB);
    float *Yp = PP->f32(YB);
    float *Col = PP->f32(ColB);
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
          StridedAPacker A(XG, XP, S.XC);
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
          StridedBPacker Bp(XG, S.XC, XP);
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
