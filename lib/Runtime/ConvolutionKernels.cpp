//===- ConvolutionKernels.cpp - Reference convolutions --------------------===//
//
// Direct (non-im2col) convolution loops over logical indices; every operand,
// the weight included, is read through its layout's strides, and each
// output element's sum is accumulated in double.
//
// Conv and ConvTranspose share one loop nest (gatherConv): both are
//   Y[n, m, o...] = B[m] + sum over the group's input channels c and the
//                   kernel taps t... of X[n, c', i(o, t)...] * W(m, c, t...)
// where i(o, t) is the input position that output position o reads through
// tap t on each spatial axis (none where the tap falls into the padding, or,
// for ConvTranspose, between two strided inputs). These positions are
// tabulated once per axis from the definitions, so the loops do no bounds
// checks per tap. The innermost loop runs along the last spatial axis over
// a row of double accumulators; the terms of every output element are
// added in the order bias, c, then taps in row-major order. QLinearConv
// and ConvInteger run the same nest on their zero-point-shifted integers,
// then requantize (Requantize.h) or wrap the sum to int32.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "strider/Runtime/Requantize.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/WindowGeometry.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <vector>

using namespace strider;
using namespace strider::runtime;

namespace {

/// The window of \p N over X's spatial dims (a transposed one for
/// ConvTranspose), checked against Y's spatial dims.
llvm::Expected<WindowAxes> resolveGeometry(const Node &N, const Tensor &X,
                                           const Tensor &W, const Tensor &Y,
                                           bool Transposed) {
  auto Axes = resolveWindow(N, X.getShape().drop_front(2),
                            W.getShape().drop_front(2), Transposed);
  if (!Axes)
    return Axes.takeError();
  for (unsigned I = 0; I < Axes->size(); ++I)
    if ((*Axes)[I].Out != Y.getDim(I + 2))
      return makeNodeError(N, "result spatial dim " + llvm::Twine(I) + " is " +
                                  llvm::Twine(Y.getDim(I + 2)) + ", expected " +
                                  llvm::Twine((*Axes)[I].Out));
  return Axes;
}

llvm::Error checkRanks(const Node &N, const Tensor &X, const Tensor &W,
                       const Tensor &Y) {
  if (X.getRank() < 3 || X.getRank() > 5)
    return makeNodeError(N, "input has rank " + llvm::Twine(X.getRank()) +
                                ", expected 3 to 5");
  if (W.getRank() != X.getRank() || Y.getRank() != X.getRank())
    return makeNodeError(N, "weight and result must have the input's rank");
  if (X.getDim(0) != Y.getDim(0))
    return makeNodeError(N, "result batch does not match the input batch");
  return llvm::Error::success();
}

llvm::Error checkBias(const Node &N, const Tensor *B, int64_t M) {
  if (B && (B->getRank() != 1 || B->getDim(0) != M))
    return makeNodeError(N, "bias must have shape [" + llvm::Twine(M) + "]");
  return llvm::Error::success();
}

/// One spatial axis of a convolution seen as a gather: the input position
/// that output position O reads through kernel tap T, or -1 for none.
/// Ranks below 3 spatial dims are padded with trivial axes (all sizes 1,
/// strides 0), so the loop nest is always three axes deep.
struct SpatialAxis {
  int64_t In = 1, Out = 1, Kernel = 1;
  /// Element strides of this axis in X, W and Y.
  int64_t XStride = 0, WStride = 0, YStride = 0;
  /// InputOf[O * Kernel + T].
  std::vector<int64_t> InputOf = {0};
  int64_t inputOf(int64_t O, int64_t T) const {
    return InputOf[O * Kernel + T];
  }
};

/// Forward convolution: output O reads input O * S - PadBegin + T * D.
void tabulateForward(SpatialAxis &A, int64_t S, int64_t D, int64_t PadBegin) {
  A.InputOf.assign(A.Out * A.Kernel, -1);
  for (int64_t O = 0; O < A.Out; ++O)
    for (int64_t T = 0; T < A.Kernel; ++T) {
      int64_t I = O * S - PadBegin + T * D;
      if (I >= 0 && I < A.In)
        A.InputOf[O * A.Kernel + T] = I;
    }
}

/// Transposed convolution: input I writes output I * S - PadBegin + T * D,
/// so output O reads the input I with I * S = O + PadBegin - T * D, if any.
void tabulateTransposed(SpatialAxis &A, int64_t S, int64_t D,
                        int64_t PadBegin) {
  A.InputOf.assign(A.Out * A.Kernel, -1);
  for (int64_t O = 0; O < A.Out; ++O)
    for (int64_t T = 0; T < A.Kernel; ++T) {
      int64_t Num = O + PadBegin - T * D;
      if (Num >= 0 && Num % S == 0 && Num / S < A.In)
        A.InputOf[O * A.Kernel + T] = Num / S;
    }
}

/// The outputs along an axis that one tap reaches: output OutFirst +
/// J * OutStep reads input InFirst + J * InStep, for J < Count. (A forward
/// conv reaches a contiguous range of outputs, input step S; a transposed
/// one every S-th output, input step 1.)
struct TapRun {
  int64_t OutFirst = 0, OutStep = 1, InFirst = 0, InStep = 1, Count = 0;
};

TapRun tapRunOf(const SpatialAxis &A, int64_t T) {
  TapRun R;
  for (int64_t O = 0; O < A.Out; ++O) {
    int64_t I = A.inputOf(O, T);
    if (I < 0)
      continue;
    if (R.Count == 0) {
      R.OutFirst = O;
      R.InFirst = I;
    } else if (R.Count == 1) {
      R.OutStep = O - R.OutFirst;
      R.InStep = I - R.InFirst;
    }
    assert(O == R.OutFirst + R.Count * R.OutStep &&
           I == R.InFirst + R.Count * R.InStep && "taps are not a progression");
    ++R.Count;
  }
  return R;
}

/// The group and channel structure of a convolution and the element
/// strides of the batch and channel dims.
struct ChannelMap {
  /// Batch size, output channels, input and output channels per group.
  int64_t Batch = 0, M = 0, Cg = 0, Mg = 0;
  int64_t XStrideN = 0, XStrideC = 0, YStrideN = 0, YStrideC = 0;
  /// W offset of output channel m, group g = m / Mg, group input channel c:
  /// g * WStrideGroup + (m - g * Mg) * WStrideM + c * WStrideC.
  int64_t WStrideGroup = 0, WStrideM = 0, WStrideC = 0;
};

/// The channel map without its weight strides.
ChannelMap mapChannels(const Tensor &X, const Tensor &Y, int64_t M, int64_t Cg,
                       int64_t Mg) {
  ChannelMap Ch;
  Ch.Batch = X.getDim(0);
  Ch.M = M;
  Ch.Cg = Cg;
  Ch.Mg = Mg;
  Ch.XStrideN = X.getStrides()[0];
  Ch.XStrideC = X.getStrides()[1];
  Ch.YStrideN = Y.getStrides()[0];
  Ch.YStrideC = Y.getStrides()[1];
  return Ch;
}

/// The elements of \p T indexed by offset (physical order), as float for
/// f32 and converted to double otherwise.
void readElements(const Tensor &T, std::vector<float> &Out) {
  assert(T.getElementType() == ElementType::F32);
  Out.resize(T.getNumElements());
  if (!Out.empty())
    std::memcpy(Out.data(), T.getBytes().data(), Out.size() * sizeof(float));
}
void readElements(const Tensor &T, std::vector<double> &Out) {
  Out.resize(T.getNumElements());
  for (int64_t Off = 0, E = T.getNumElements(); Off < E; ++Off)
    Out[Off] = T.getDouble(Off);
}

/// The loop nest of the file comment over elements of type \p Elt: one row
/// of double accumulators per output (n, m, od, oh), the innermost loop
/// running along the row over the outputs one tap reaches.
template <typename Elt>
void gatherConvLoops(const Tensor &XT, const Tensor &WT, const Tensor *B,
                     Tensor &Y, const ChannelMap &Ch,
                     const SpatialAxis (&Ax)[3]) {
  std::vector<Elt> X, W;
  readElements(XT, X);
  readElements(WT, W);
  const SpatialAxis &AD = Ax[0], &AH = Ax[1], &AW = Ax[2];
  std::vector<TapRun> Runs;
  for (int64_t T = 0; T < AW.Kernel; ++T)
    Runs.push_back(tapRunOf(AW, T));
  std::vector<double> Acc(AW.Out);
  for (int64_t N = 0; N < Ch.Batch; ++N)
    for (int64_t M = 0; M < Ch.M; ++M) {
      int64_t G = M / Ch.Mg;
      double Bias = B ? B->getDouble(B->getOffset({M})) : 0.0;
      int64_t XGroup = N * Ch.XStrideN + G * Ch.Cg * Ch.XStrideC;
      int64_t WOut = G * Ch.WStrideGroup + (M - G * Ch.Mg) * Ch.WStrideM;
      int64_t YOut = N * Ch.YStrideN + M * Ch.YStrideC;
      for (int64_t OD = 0; OD < AD.Out; ++OD)
        for (int64_t OH = 0; OH < AH.Out; ++OH) {
          std::fill(Acc.begin(), Acc.end(), Bias);
          for (int64_t C = 0; C < Ch.Cg; ++C) {
            int64_t XChan = XGroup + C * Ch.XStrideC;
            int64_t WChan = WOut + C * Ch.WStrideC;
            for (int64_t KD = 0; KD < AD.Kernel; ++KD) {
              int64_t ID = AD.inputOf(OD, KD);
              if (ID < 0)
                continue;
              for (int64_t KH = 0; KH < AH.Kernel; ++KH) {
                int64_t IH = AH.inputOf(OH, KH);
                if (IH < 0)
                  continue;
                int64_t XRow = XChan + ID * AD.XStride + IH * AH.XStride;
                int64_t WRow = WChan + KD * AD.WStride + KH * AH.WStride;
                for (int64_t KW = 0; KW < AW.Kernel; ++KW) {
                  const TapRun &R = Runs[KW];
                  if (R.Count == 0)
                    continue;
                  double WV = W[WRow + KW * AW.WStride];
                  const Elt *XP = X.data() + XRow + R.InFirst * AW.XStride;
                  int64_t XStep = R.InStep * AW.XStride;
                  double *AP = Acc.data() + R.OutFirst;
                  for (int64_t J = 0; J < R.Count; ++J)
                    AP[J * R.OutStep] += double(XP[J * XStep]) * WV;
                }
              }
            }
          }
          int64_t YRow = YOut + OD * AD.YStride + OH * AH.YStride;
          for (int64_t OW = 0; OW < AW.Out; ++OW)
            Y.setDouble(YRow + OW * AW.YStride, Acc[OW]);
        }
    }
}

/// Runs the loop nest on f32 elements as they are stored, or on every
/// other element type converted to double.
void gatherConv(const Tensor &X, const Tensor &W, const Tensor *B, Tensor &Y,
                const ChannelMap &Ch, const SpatialAxis (&Ax)[3]) {
  if (X.getElementType() == ElementType::F32 &&
      W.getElementType() == ElementType::F32)
    gatherConvLoops<float>(X, W, B, Y, Ch, Ax);
  else
    gatherConvLoops<double>(X, W, B, Y, Ch, Ax);
}

/// The three loop axes of an operation with \p K spatial dims: trivial
/// ones first, then spatial dim I of X, W and Y as axis 3 - K + I, with
/// sizes and strides filled in (InputOf is left to the caller).
void mapSpatialAxes(const Tensor &X, const Tensor &W, const Tensor &Y,
                    const WindowAxes &G, SpatialAxis (&Ax)[3]) {
  unsigned K = X.getRank() - 2;
  for (unsigned I = 0; I < K; ++I) {
    SpatialAxis &A = Ax[3 - K + I];
    A.In = X.getDim(I + 2);
    A.Out = Y.getDim(I + 2);
    A.Kernel = G[I].Kernel;
    A.XStride = X.getStrides()[I + 2];
    A.WStride = W.getStrides()[I + 2];
    A.YStride = Y.getStrides()[I + 2];
  }
}

/// Conv of \p X and \p W (and \p B) into \p Y, for Conv and QLinearConv.
llvm::Error runConv(const Node &N, const Tensor &X, const Tensor &W,
                    const Tensor *B, Tensor &Y) {
  if (llvm::Error E = checkRanks(N, X, W, Y))
    return E;
  unsigned K = X.getRank() - 2;
  int64_t Group = N.getIntAttr("group", 1);
  int64_t C = X.getDim(1), M = W.getDim(0);
  if (Group < 1 || C % Group != 0 || M % Group != 0 || W.getDim(1) != C / Group)
    return makeNodeError(N, "weight shape does not match the input channels "
                            "and group " +
                                llvm::Twine(Group));
  if (Y.getDim(1) != M)
    return makeNodeError(N, "result channels do not match the weight");
  if (llvm::Error E = checkBias(N, B, M))
    return E;
  auto G = resolveGeometry(N, X, W, Y, /*Transposed=*/false);
  if (!G)
    return G.takeError();

  int64_t Cg = C / Group, Mg = M / Group;
  llvm::ArrayRef<int64_t> WS = W.getStrides();
  ChannelMap Ch = mapChannels(X, Y, M, Cg, Mg);
  // W is [M, C / group, kernel...].
  Ch.WStrideGroup = Mg * WS[0];
  Ch.WStrideM = WS[0];
  Ch.WStrideC = WS[1];
  SpatialAxis Ax[3];
  mapSpatialAxes(X, W, Y, *G, Ax);
  for (unsigned I = 0; I < K; ++I)
    tabulateForward(Ax[3 - K + I], (*G)[I].Stride, (*G)[I].Dilation,
                    (*G)[I].PadBegin);
  gatherConv(X, W, B, Y, Ch, Ax);
  return llvm::Error::success();
}

llvm::Error convKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                       llvm::MutableArrayRef<Tensor> Results) {
  return runConv(N, *Operands[0], *Operands[1],
                 Operands.size() > 2 ? Operands[2] : nullptr, Results[0]);
}

/// Element \p M of a scalar or 1-D quantization parameter \p P (its only
/// element when it has one).
double getParam(const Tensor &P, int64_t M) {
  if (P.getRank() == 0 || P.getNumElements() == 1)
    return P.getDouble(0);
  return P.getDouble(P.getOffset({M}));
}

/// QLinearConv: the conv of x - x_zero_point and w - w_zero_point (per
/// output channel) plus the bias, exact in double, then requantized per
/// output channel (Requantize.h).
llvm::Error qlinearConvKernel(const Node &N,
                              llvm::ArrayRef<const Tensor *> Operands,
                              llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0], &W = *Operands[3];
  const Tensor &XS = *Operands[1], &XZ = *Operands[2];
  const Tensor &WS = *Operands[4], &WZ = *Operands[5];
  const Tensor &YS = *Operands[6], &YZ = *Operands[7];
  const Tensor *B = Operands.size() > 8 ? Operands[8] : nullptr;
  Tensor &Y = Results[0];
  if (W.getRank() < 1 || Y.getRank() < 2)
    return makeNodeError(N, "weight and result must have the input's rank");
  const int64_t M = W.getDim(0);
  for (const Tensor *P : {&XS, &XZ, &YS, &YZ})
    if (P->getNumElements() != 1)
      return makeNodeError(N, "x's and y's scales and zero points must have "
                              "one element, got " +
                                  P->getType().str());
  for (const Tensor *P : {&WS, &WZ})
    if (P->getNumElements() != 1 && (P->getRank() != 1 || P->getDim(0) != M))
      return makeNodeError(N, "w's scale and zero point must have one "
                              "element or " +
                                  llvm::Twine(M) + ", got " +
                                  P->getType().str());
  Tensor XI(ElementType::I32, X.getShape(), X.getLayout());
  const int64_t XZero = XZ.getInt(0);
  for (int64_t Off = 0, E = X.getNumElements(); Off < E; ++Off)
    XI.setInt(Off, X.getInt(Off) - XZero);
  Tensor WI(ElementType::I32, W.getShape(), W.getLayout());
  forEachIndex(W.getShape(), [&](llvm::ArrayRef<int64_t> I) {
    int64_t Off = W.getOffset(I);
    WI.setInt(Off, W.getInt(Off) - int64_t(getParam(WZ, I[0])));
  });
  Tensor Acc(ElementType::F64, Y.getShape(), Y.getLayout());
  if (llvm::Error E = runConv(N, XI, WI, B, Acc))
    return E;
  const bool Signed = Y.getElementType() == ElementType::I8;
  const int32_t Lo = Signed ? -128 : 0, Hi = Signed ? 127 : 255;
  const float XScale = float(XS.getDouble(0)), YScale = float(YS.getDouble(0));
  const int32_t YZero = int32_t(YZ.getInt(0));
  forEachIndex(Y.getShape(), [&](llvm::ArrayRef<int64_t> I) {
    int64_t Off = Y.getOffset(I);
    // Sums past int32 wrap, as the int32 accumulation of ONNX's
    // definition does.
    int32_t Sum = int32_t(uint32_t(saturatingToInt64(Acc.getDouble(Off))));
    float Scale = getRequantScale(XScale, float(getParam(WS, I[1])), YScale);
    Y.setInt(Off, requantize(Sum, Scale, YZero, Lo, Hi));
  });
  return llvm::Error::success();
}

/// ConvInteger: the conv of x - x_zero_point and w - w_zero_point (per
/// output channel), exact in double, wrapped to int32 as ONNX's int32
/// accumulation does.
llvm::Error convIntegerKernel(const Node &N,
                              llvm::ArrayRef<const Tensor *> Operands,
                              llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0], &W = *Operands[1];
  const Tensor *XZ = Operands.size() > 2 ? Operands[2] : nullptr;
  const Tensor *WZ = Operands.size() > 3 ? Operands[3] : nullptr;
  Tensor &Y = Results[0];
  if (W.getRank() < 1 || Y.getRank() < 2)
    return makeNodeError(N, "weight and result must have the input's rank");
  const int64_t M = W.getDim(0);
  if (XZ && XZ->getNumElements() != 1)
    return makeNodeError(N, "x's zero point must have one element, got " +
                                XZ->getType().str());
  if (WZ && WZ->getNumElements() != 1 &&
      (WZ->getRank() != 1 || WZ->getDim(0) != M))
    return makeNodeError(N, "w's zero point must have one element or " +
                                llvm::Twine(M) + ", got " +
                                WZ->getType().str());
  Tensor XI(ElementType::I32, X.getShape(), X.getLayout());
  const int64_t XZero = XZ ? XZ->getInt(0) : 0;
  for (int64_t Off = 0, E = X.getNumElements(); Off < E; ++Off)
    XI.setInt(Off, X.getInt(Off) - XZero);
  Tensor WI(ElementType::I32, W.getShape(), W.getLayout());
  forEachIndex(W.getShape(), [&](llvm::ArrayRef<int64_t> I) {
    int64_t Off = W.getOffset(I);
    WI.setInt(Off, W.getInt(Off) - (WZ ? int64_t(getParam(*WZ, I[0])) : 0));
  });
  Tensor Acc(ElementType::F64, Y.getShape(), Y.getLayout());
  if (llvm::Error E = runConv(N, XI, WI, nullptr, Acc))
    return E;
  forEachIndex(Y.getShape(), [&](llvm::ArrayRef<int64_t> I) {
    int64_t Off = Y.getOffset(I);
    Y.setInt(Off, int32_t(uint32_t(saturatingToInt64(Acc.getDouble(Off)))));
  });
  return llvm::Error::success();
}

llvm::Error convTransposeKernel(const Node &N,
                                llvm::ArrayRef<const Tensor *> Operands,
                                llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  const Tensor &W = *Operands[1];
  const Tensor *B = Operands.size() > 2 ? Operands[2] : nullptr;
  Tensor &Y = Results[0];
  if (llvm::Error E = checkRanks(N, X, W, Y))
    return E;
  unsigned K = X.getRank() - 2;
  int64_t Group = N.getIntAttr("group", 1);
  int64_t C = X.getDim(1), Mg = W.getDim(1), M = Mg * Group;
  if (Group < 1 || W.getDim(0) != C || C % Group != 0)
    return makeNodeError(N, "weight shape does not match the input channels "
                            "and group " +
                                llvm::Twine(Group));
  if (Y.getDim(1) != M)
    return makeNodeError(N, "result channels do not match the weight");
  if (llvm::Error E = checkBias(N, B, M))
    return E;
  auto G = resolveGeometry(N, X, W, Y, /*Transposed=*/true);
  if (!G)
    return G.takeError();

  // Gathered as a forward loop nest: output position O of an axis reads
  // input I through tap T where I * stride + T * dilation - pad = O.
  int64_t Cg = C / Group;
  llvm::ArrayRef<int64_t> WS = W.getStrides();
  ChannelMap Ch = mapChannels(X, Y, M, Cg, Mg);
  // W is [C, M / group, kernel...]: group g's input channels first.
  Ch.WStrideGroup = Cg * WS[0];
  Ch.WStrideM = WS[1];
  Ch.WStrideC = WS[0];
  SpatialAxis Ax[3];
  mapSpatialAxes(X, W, Y, *G, Ax);
  for (unsigned I = 0; I < K; ++I)
    tabulateTransposed(Ax[3 - K + I], (*G)[I].Stride, (*G)[I].Dilation,
                       (*G)[I].PadBegin);
  gatherConv(X, W, B, Y, Ch, Ax);
  return llvm::Error::success();
}

} // namespace

void runtime::addConvolutionKernels(KernelTable &T) {
  T[static_cast<size_t>(OpId::Conv)] = convKernel;
  T[static_cast<size_t>(OpId::ConvTranspose)] = convTransposeKernel;
  T[static_cast<size_t>(OpId::QLinearConv)] = qlinearConvKernel;
  T[static_cast<size_t>(OpId::ConvInteger)] = convIntegerKernel;
}
