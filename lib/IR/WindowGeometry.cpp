//===- WindowGeometry.cpp - Sliding-window geometry -----------------------===//
//
// Window attributes, per-axis output sizes and padding of convolution and
// pooling, for static sizes (resolveWindowAxis and friends: kernels and
// lowerings) and for symbolic dims (computeWindowOutputDim: shape
// inference, which falls back on the static functions).
//
//===----------------------------------------------------------------------===//

#include "strider/IR/WindowGeometry.h"

#include "InferFunctions.h"

#include "llvm/Support/MathExtras.h"

using namespace strider;
using namespace strider::detail;

llvm::Expected<AutoPad> strider::readAutoPad(const Node &N) {
  std::string S = N.getStringAttr("auto_pad", "NOTSET");
  if (S == "NOTSET")
    return AutoPad::NotSet;
  if (S == "SAME_UPPER")
    return AutoPad::SameUpper;
  if (S == "SAME_LOWER")
    return AutoPad::SameLower;
  if (S == "VALID")
    return AutoPad::Valid;
  return makeNodeError(N, "unknown auto_pad '" + S + "'");
}

llvm::Error
strider::readWindowAttrs(const Node &N, unsigned NumSpatial,
                         llvm::Optional<llvm::ArrayRef<Dim>> WeightSpatial,
                         WindowAttrs &W) {
  W = WindowAttrs();
  auto PadOrErr = readAutoPad(N);
  if (!PadOrErr)
    return PadOrErr.takeError();
  W.Pad = *PadOrErr;

  if (N.getAttr("kernel_shape")) {
    llvm::SmallVector<int64_t, 3> K;
    if (llvm::Error E = readIntsAttr(N, "kernel_shape", NumSpatial, 1, 1, K))
      return E;
    for (unsigned I = 0; I < NumSpatial; ++I) {
      if (WeightSpatial) {
        const Dim &WD = (*WeightSpatial)[I];
        if (WD.isStatic() && WD.getSize() != K[I])
          return makeNodeError(
              N, "kernel_shape entry " + llvm::Twine(K[I]) +
                     " does not match dim " + llvm::Twine(WD.getSize()) +
                     " of input 'W' at spatial dim " + llvm::Twine(I));
      }
      W.Kernel.push_back(K[I]);
    }
  } else if (WeightSpatial) {
    for (const Dim &D : *WeightSpatial) {
      if (!D.isStatic()) {
        W.Kernel.push_back(llvm::None);
        continue;
      }
      if (D.getSize() < 1)
        return makeNodeError(N, "kernel size must be positive, got " +
                                    llvm::Twine(D.getSize()));
      if (D.getSize() > MaxDimSize)
        return makeNodeError(N, "kernel size exceeds 2^62");
      W.Kernel.push_back(D.getSize());
    }
  } else {
    return makeNodeError(N, "missing attribute 'kernel_shape'");
  }

  if (llvm::Error E = readIntsAttr(N, "strides", NumSpatial, 1, 1, W.Strides))
    return E;
  if (llvm::Error E =
          readIntsAttr(N, "dilations", NumSpatial, 1, 1, W.Dilations))
    return E;
  if (llvm::Error E = readIntsAttr(N, "pads", 2 * NumSpatial, 0, 0, W.Pads))
    return E;
  if (llvm::Error E =
          readIntsAttr(N, "output_padding", NumSpatial, 0, 0, W.OutputPadding))
    return E;
  // Explicit pads only apply without auto_pad.
  if (W.Pad != AutoPad::NotSet)
    W.Pads.assign(2 * NumSpatial, 0);
  W.CeilMode = N.getIntAttr("ceil_mode", 0) != 0;
  return llvm::Error::success();
}

/// The dilated kernel size (K - 1) * D + 1 of spatial dim \p I.
static llvm::Expected<int64_t> getDilatedKernel(const Node &N, int64_t K,
                                                int64_t D, unsigned I) {
  int64_t EK;
  if (llvm::MulOverflow(K - 1, D, EK) || EK >= MaxDimSize)
    return makeNodeError(N, "dilated kernel size of spatial dim " +
                                llvm::Twine(I) + " exceeds 2^62");
  return EK + 1;
}

static std::string outputSizeText(unsigned I) {
  return "output size of spatial dim " + std::to_string(I);
}

/// The axis fields that come straight from the attributes; checks \p In.
static llvm::Expected<WindowAxis> startAxis(const Node &N, int64_t In,
                                            unsigned I, const WindowAttrs &W) {
  assert(W.Kernel[I] && "resolving a window of unknown kernel size");
  if (In > MaxDimSize)
    return makeNodeError(N, "input size of spatial dim " + llvm::Twine(I) +
                                " exceeds 2^62");
  WindowAxis A;
  A.In = In;
  A.Kernel = *W.Kernel[I];
  A.Stride = W.Strides[I];
  A.Dilation = W.Dilations[I];
  A.PadBegin = W.Pads[I];
  A.PadEnd = W.Pads[I + W.Strides.size()];
  if (llvm::Error E = getDilatedKernel(N, A.Kernel, A.Dilation, I).takeError())
    return E;
  return A;
}

llvm::Expected<WindowAxis> strider::resolveWindowAxis(const Node &N, int64_t In,
                                                      unsigned I,
                                                      const WindowAttrs &W) {
  auto AOrErr = startAxis(N, In, I, W);
  if (!AOrErr)
    return AOrErr.takeError();
  WindowAxis A = *AOrErr;
  const int64_t S = A.Stride, EK = A.dilatedKernel();
  if (W.isSame()) {
    A.Out = In / S + (In % S != 0);
    int64_t Total = std::max<int64_t>(0, (A.Out - 1) * S + EK - In);
    A.PadBegin = W.Pad == AutoPad::SameUpper ? Total / 2 : Total - Total / 2;
    A.PadEnd = Total - A.PadBegin;
    return A;
  }
  int64_t Padded;
  if (llvm::AddOverflow(In, A.PadBegin, Padded) ||
      llvm::AddOverflow(Padded, A.PadEnd, Padded))
    return makeNodeError(N, outputSizeText(I) + " exceeds 2^62");
  if (Padded < EK)
    return makeNodeError(N, "padded input size " + llvm::Twine(Padded) +
                                " is smaller than the dilated kernel size " +
                                llvm::Twine(EK) + " at spatial dim " +
                                llvm::Twine(I));
  int64_t Span = Padded - EK;
  int64_t Out = Span / S + 1;
  if (W.CeilMode) {
    Out += Span % S != 0;
    // The last window must start inside the input or its begin padding
    // (as in PyTorch and ONNX's reference; even when Span % S == 0).
    int64_t LastStart;
    if (llvm::MulOverflow(Out - 1, S, LastStart) ||
        LastStart >= In + A.PadBegin)
      --Out;
  }
  if (llvm::Error E = makeStaticDim(N, Out, outputSizeText(I)).takeError())
    return E;
  A.Out = Out;
  return A;
}

llvm::Expected<WindowAxis>
strider::resolveTransposedWindowAxis(const Node &N, int64_t In, unsigned I,
                                     const WindowAttrs &W,
                                     llvm::Optional<int64_t> Requested) {
  auto AOrErr = startAxis(N, In, I, W);
  if (!AOrErr)
    return AOrErr.takeError();
  WindowAxis A = *AOrErr;
  const int64_t S = A.Stride;
  int64_t Full;
  if (llvm::MulOverflow(S, In - 1, Full) ||
      llvm::AddOverflow(Full, W.OutputPadding[I], Full) ||
      llvm::AddOverflow(Full, A.dilatedKernel(), Full))
    return makeNodeError(N, outputSizeText(I) + " exceeds 2^62");
  if (Requested || W.isSame()) {
    int64_t Want;
    if (Requested)
      Want = *Requested;
    else if (llvm::MulOverflow(In, S, Want))
      return makeNodeError(N, outputSizeText(I) + " exceeds 2^62");
    // Floor division, as ONNX's reference does: a requested output larger
    // than the full result gives a negative total, and the extra (zero)
    // elements go to the end (pads 0 and -1 for -1).
    int64_t Total = Full - Want;
    int64_t Small = Total >= 0 ? Total / 2 : -((1 - Total) / 2);
    A.PadBegin = W.Pad == AutoPad::SameUpper ? Small : Total - Small;
    A.PadEnd = Total - A.PadBegin;
    A.Out = Want;
    return A;
  }
  int64_t Out;
  if (llvm::SubOverflow(Full, A.PadBegin, Out) ||
      llvm::SubOverflow(Out, A.PadEnd, Out))
    return makeNodeError(N, outputSizeText(I) + " exceeds 2^62");
  if (llvm::Error E = makeStaticDim(N, Out, outputSizeText(I)).takeError())
    return E;
  A.Out = Out;
  return A;
}

llvm::Expected<WindowAxes>
strider::resolveWindow(const Node &N, llvm::ArrayRef<int64_t> InSpatial,
                       llvm::Optional<llvm::ArrayRef<int64_t>> WeightSpatial,
                       bool Transposed) {
  const unsigned NumSpatial = InSpatial.size();
  llvm::SmallVector<Dim, 3> WeightDims;
  if (WeightSpatial)
    for (int64_t K : *WeightSpatial)
      WeightDims.push_back(Dim::getStatic(K));
  WindowAttrs W;
  if (llvm::Error E = readWindowAttrs(
          N, NumSpatial,
          WeightSpatial ? llvm::Optional<llvm::ArrayRef<Dim>>(WeightDims)
                        : llvm::None,
          W))
    return E;
  llvm::SmallVector<int64_t, 3> OutputShape;
  if (Transposed && N.getAttr("output_shape"))
    if (llvm::Error E =
            readIntsAttr(N, "output_shape", NumSpatial, 0, 0, OutputShape))
      return E;
  WindowAxes Axes;
  for (unsigned I = 0; I < NumSpatial; ++I) {
    auto A = !Transposed ? resolveWindowAxis(N, InSpatial[I], I, W)
             : OutputShape.empty()
                 ? resolveTransposedWindowAxis(N, InSpatial[I], I, W)
                 : resolveTransposedWindowAxis(N, InSpatial[I], I, W,
                                               OutputShape[I]);
    if (!A)
      return A.takeError();
    Axes.push_back(*A);
  }
  return Axes;
}

//===----------------------------------------------------------------------===//
// Dims for shape inference
//===----------------------------------------------------------------------===//

/// Output dim \p I of a window op, transposed (ConvTranspose) or not.
static llvm::Expected<Dim> computeOutputDim(const Node &N, const Dim &In,
                                            unsigned I, const WindowAttrs &W,
                                            bool Transposed) {
  int64_t S = W.Strides[I], PB = W.Pads[I], PE = W.Pads[I + W.Strides.size()];
  int64_t OP = Transposed ? W.OutputPadding[I] : 0;
  if (W.Kernel[I] && In.isStatic()) {
    auto A = Transposed ? resolveTransposedWindowAxis(N, In.getSize(), I, W)
                        : resolveWindowAxis(N, In.getSize(), I, W);
    if (!A)
      return A.takeError();
    return Dim::getStatic(A->Out);
  }
  llvm::Optional<int64_t> EK;
  if (W.Kernel[I]) {
    auto EKOrErr = getDilatedKernel(N, *W.Kernel[I], W.Dilations[I], I);
    if (!EKOrErr)
      return EKOrErr.takeError();
    EK = *EKOrErr;
  }
  if (!In.isStatic()) {
    // Size-preserving windows keep symbolic dims.
    if (S == 1 && (W.isSame() || (EK && OP + *EK - 1 - PB == PE)))
      return In;
    return Dim::getUnknown();
  }
  // A static input under an unknown kernel: only SAME_* knows the size.
  if (!W.isSame())
    return Dim::getUnknown();
  if (!Transposed)
    return Dim::getStatic(In.getSize() / S + (In.getSize() % S != 0));
  int64_t Out;
  if (In.getSize() > MaxDimSize || llvm::MulOverflow(In.getSize(), S, Out))
    return makeNodeError(N, outputSizeText(I) + " exceeds 2^62");
  return makeStaticDim(N, Out, outputSizeText(I));
}

llvm::Expected<Dim> detail::computeWindowOutputDim(const Node &N, const Dim &In,
                                                   unsigned I,
                                                   const WindowAttrs &W) {
  return computeOutputDim(N, In, I, W, /*Transposed=*/false);
}

llvm::Expected<Dim> detail::computeTransposedOutputDim(const Node &N,
                                                       const Dim &In,
                                                       unsigned I,
                                                       const WindowAttrs &W) {
  return computeOutputDim(N, In, I, W, /*Transposed=*/true);
}
