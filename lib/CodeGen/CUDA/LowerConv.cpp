//===- LowerConv.cpp - Conv and ConvTranspose on cuDNN --------------------===//
//
// Conv and ConvTranspose become cuDNN steps (ConvDesc) with the epilogue
// of their fusion group; asymmetric pads a library cannot take become a
// Pad step first. The weights stay host floats in the plan: the runner
// converts them to the form cuDNN wants when the program is loaded.
//
//===----------------------------------------------------------------------===//

#include "LibraryDescriptors.h"
#include "PlanImpl.h"

#include "strider/IR/WindowGeometry.h"

#include <algorithm>

using namespace strider;
using namespace strider::cuda;

namespace {

/// The pad cuDNN can apply to both sides of spatial dim \p I of \p D when
/// it cannot take the dim's pads as they are (they differ, and the first on
/// both sides changes the windows or the output size): the smaller one,
/// or 0 where a pad is negative (a ConvTranspose's output_padding past its
/// end pad: outputs beyond the full one). -1 when cuDNN takes them as
/// they are.
int64_t getCommonPad(const ConvDesc &D, int I) {
  const int64_t Common = std::min(D.PadBegin[I], D.PadEnd[I]);
  if (Common < 0)
    return 0;
  if (D.PadBegin[I] == D.PadEnd[I] || getSymmetricPad(D, I) >= 0)
    return -1;
  return Common;
}

/// The spatial dims of \p D whose pads cuDNN cannot take as they are, each
/// with its getCommonPad.
llvm::SmallVector<std::pair<int, int64_t>, 3>
getUnevenPadDims(const ConvDesc &D) {
  llvm::SmallVector<std::pair<int, int64_t>, 3> Dims;
  for (int I = 0; I < D.Spatial; ++I)
    if (const int64_t Common = getCommonPad(D, I); Common >= 0)
      Dims.push_back({I, Common});
  return Dims;
}

/// cuDNN pads both sides of a dim alike. Where a forward conv's pads
/// differ and padding both sides by the first would change the windows
/// (SAME_UPPER at stride 2 on an even size, `padding="same"` with an even
/// kernel), \p D is changed to read an input padded explicitly by the
/// dim's difference (zeros before or after the input), leaving the common
/// part to cuDNN; returns that pad, in \p XT's layout. None when cuDNN
/// can pad every dim itself.
llvm::Optional<PadParams> splitAsymmetricPads(ConvDesc &D,
                                              const TensorType &XT) {
  if (D.Transposed)
    return llvm::None;
  auto Static = XT.getStaticShape();
  std::vector<int64_t> Logical(Static.begin(), Static.end()),
      Padded = Logical, Begin(Logical.size(), 0);
  const auto Uneven = getUnevenPadDims(D);
  if (Uneven.empty())
    return llvm::None;
  for (const auto &[I, Common] : Uneven) {
    Begin[size_t(I) + 2] = D.PadBegin[I] - Common;
    D.In[I] += D.PadBegin[I] + D.PadEnd[I] - 2 * Common;
    Padded[size_t(I) + 2] = D.In[I];
    D.PadBegin[I] = D.PadEnd[I] = Common;
  }
  PadParams P;
  P.Rank = int(Logical.size());
  P.PadMode = PadParams::Constant;
  P.Value = 0.0f;
  P.Type = D.Type;
  // In the order the conv reads X (NC... or N...C): the same bytes as
  // XT's layout, which may order unit dims differently ([0, 3, 2, 1] with
  // H = 1 is NHWC's bytes; the padded H is not 1).
  std::vector<unsigned> Perm(Logical.size());
  for (size_t I = 0; I < Perm.size(); ++I)
    Perm[I] = unsigned(I);
  if (D.XChannelsLast)
    std::rotate(Perm.begin() + 1, Perm.begin() + 2, Perm.end());
  for (size_t I = 0; I < Logical.size(); ++I) {
    P.XShape[I] = Logical[Perm[I]];
    P.YShape[I] = Padded[Perm[I]];
    P.Begin[I] = Begin[Perm[I]];
  }
  return P;
}

/// cuDNN crops a ConvTranspose's full output by the same pad on both
/// sides of a dim (its end is implied by the output size). Where the pads
/// differ so that it cannot (SAME_UPPER exports, pads 0/1), \p D is
/// changed to crop both sides by the smaller pad only (0 where a pad is
/// negative), which gives a larger output; returns where the wanted
/// output starts in it, per spatial dim (negative, or ending past it,
/// where the wanted output reaches beyond the full one). None when cuDNN
/// can crop every dim itself.
llvm::Optional<llvm::SmallVector<int64_t, 3>> splitTransposedPads(ConvDesc &D) {
  if (!D.Transposed)
    return llvm::None;
  llvm::SmallVector<int64_t, 3> Start(size_t(D.Spatial), 0);
  const auto Uneven = getUnevenPadDims(D);
  if (Uneven.empty())
    return llvm::None;
  for (const auto &[I, Common] : Uneven) {
    Start[size_t(I)] = D.PadBegin[I] - Common;
    D.Out[I] += D.PadBegin[I] + D.PadEnd[I] - 2 * Common;
    D.PadBegin[I] = D.PadEnd[I] = Common;
  }
  return Start;
}

} // namespace

llvm::Error cuda::planConv(PlanContext &C, const Node &N, const FusedTail &T) {
  const bool Transposed = N.getOpId() == OpId::ConvTranspose;
  const Value *X = N.getOperand(0), *W = N.getOperand(1);
  const Value *Y = T.Result;
  const TensorType &XT = X->getType(), &YT = Y->getType();
  const unsigned R = XT.getRank();
  if (R < 3 || R > 5 || !XT.hasStaticShape() || !YT.hasStaticShape())
    return unsupported(N, "a convolution of rank " + llvm::Twine(R) +
                              " (1 to 3 spatial dims)");
  std::vector<float> Weights = getConstantFloats(W);
  if (Weights.empty())
    return unsupported(N, "a convolution whose weights are not a constant");
  auto XD = getDType(XT.getElementType()), YD = getDType(YT.getElementType());
  if (!XD || !YD || *XD != *YD)
    return unsupported(N, "a convolution from " + XT.str() + " to " + YT.str() +
                              " (one float type)");
  const ChannelOrder XO = codegen::getChannelOrder(XT),
                     YO = codegen::getChannelOrder(YT);
  if (XO == ChannelOrder::Other || YO == ChannelOrder::Other)
    return unsupported(N, "a convolution in layout " + XT.str() + " -> " +
                              YT.str());
  auto XS = XT.getStaticShape(), YS = YT.getStaticShape();
  auto WS = W->getType().getStaticShape();
  llvm::SmallVector<int64_t, 3> InSpatial(XS.begin() + 2, XS.end());
  llvm::SmallVector<int64_t, 3> WSpatial(WS.begin() + 2, WS.end());
  auto Axes =
      resolveWindow(N, InSpatial, llvm::makeArrayRef(WSpatial), Transposed);
  if (!Axes)
    return Axes.takeError();

  ConvDesc D;
  D.Transposed = Transposed;
  D.Spatial = int(R - 2);
  D.N = XS[0];
  D.C = XS[1];
  D.Groups = N.getIntAttr("group", 1);
  D.K = YS[1];
  setWindowAxes(D, D.Filter, XS, YS, *Axes);
  D.XChannelsLast = XO == ChannelOrder::Last;
  D.YChannelsLast = YO == ChannelOrder::Last;
  D.Type = *XD;
  D.Math = C.getMathMode(D.Type);
  std::vector<float> Bias;
  if (N.hasOperand(2)) {
    Bias = getConstantFloats(N.getOperand(2));
    if (Bias.empty())
      return unsupported(N, "a convolution whose bias is not a constant");
  }
  D.Epilogue.Bias = !Bias.empty();
  D.Epilogue.Residual = T.Residual != nullptr;
  D.Epilogue.Act = T.Act;
  if (T.Residual) {
    auto RD = getDType(T.Residual->getType().getElementType());
    if (!RD || *RD != D.Type)
      return unsupported(N,
                         "a residual of type " + T.Residual->getType().str());
  }
  llvm::Optional<PadParams> PrePad = splitAsymmetricPads(D, XT);
  auto CropStart = splitTransposedPads(D);
  // A cropped conv leaves its whole epilogue to a step after the crop.
  const EpilogueSpec Epilogue = D.Epilogue;
  if (CropStart)
    D.Epilogue = EpilogueSpec();
  std::string Why = checkConv(D);
  if (!Why.empty())
    return unsupported(N, "this convolution: " + Why);

  auto XB = C.getBuffer(X, N);
  if (!XB)
    return XB.takeError();
  Arg XArg{*XB, 0};
  if (PrePad) {
    int64_t Elements = 1;
    for (int I = 0; I < PrePad->Rank; ++I)
      Elements *= PrePad->YShape[I];
    XArg.Buffer = C.addScratch(Elements * int64_t(getDTypeBytes(D.Type)));
    C.addStep({getStepNodes(N, T),
               std::string("pad.constant ") + getDTypeName(D.Type) +
                   " (asymmetric conv pads)",
               false, 0},
              *PrePad, {{*XB, 0}, XArg});
  }
  llvm::Expected<Arg> Residual = C.getOptionalArg(T.Residual, N);
  if (!Residual)
    return Residual.takeError();
  const Arg BiasArg = C.getOptionalConstant(Bias);
  auto YB = C.defineBuffer(Y, N);
  if (!YB)
    return YB.takeError();

  int64_t Taps = 1, OutPixels = 1, InPixels = 1;
  for (int I = 0; I < D.Spatial; ++I) {
    Taps *= D.Filter[I];
    OutPixels *= D.Out[I];
    InPixels *= D.In[I];
  }
  StepInfo Info;
  Info.Nodes = getStepNodes(N, T);
  Info.Kernel =
      std::string(Transposed ? "cudnn.conv_transpose " : "cudnn.conv ") +
      getOrderName(D.XChannelsLast) + ">" + getOrderName(D.YChannelsLast) +
      " " + getDTypeName(D.Type) + (D.Math == MathMode::TF32 ? " tf32" : "") +
      getEpilogueSuffix(D.Epilogue);
  // Transposed: every input pixel scatters through every tap.
  Info.Flops = 2 * D.N *
               (Transposed ? InPixels * D.C * (D.K / D.Groups)
                           : OutPixels * D.K * (D.C / D.Groups)) *
               Taps;
  C.addRunnerConstantBytes(int64_t(Weights.size() * getDTypeBytes(D.Type)));
  if (!CropStart) {
    ConvStep S{D, share(std::move(Weights)), share(std::move(Bias))};
    C.addStep(Info, std::move(S), {XArg, *Residual, {*YB, 0}, BiasArg});
    return llvm::Error::success();
  }

  // The larger output into a scratch buffer, its crop into
  // Y, then the epilogue in place on Y (cuDNN fuses none into a transposed
  // conv, so this launches nothing more than the uncropped path).
  auto YShape = YT.getStaticShape();
  llvm::SmallVector<int64_t, 6> Full(YShape.begin(), YShape.end());
  for (int I = 0; I < D.Spatial; ++I)
    Full[size_t(I) + 2] = D.Out[I];
  // In the order the conv writes (N...C or NC...), which Y's layout may
  // match only through its unit dims.
  const TensorType FullT = TensorType::get(
      YT.getElementType(), Full,
      D.YChannelsLast ? Layout::getChannelsLast(YT.getRank()) : Layout());
  const auto FullStrides = codegen::getStrides(FullT);
  const int64_t Elt = int64_t(getDTypeBytes(D.Type));
  Arg FullArg{C.addScratch(FullT.getNumElements().getValueOr(0) * Elt), 0};
  Info.Kernel += " (uncropped: asymmetric pads)";
  ConvStep S{D, share(std::move(Weights)), share(std::move(Bias))};
  C.addStep(Info, std::move(S), {XArg, Arg(), FullArg, Arg()});
  bool Beyond = false; // Y reaches past the full output somewhere.
  for (int I = 0; I < D.Spatial; ++I) {
    const int64_t Start = (*CropStart)[size_t(I)];
    Beyond |= Start < 0 || Start + YShape[size_t(I) + 2] > D.Out[I];
  }
  if (Beyond) {
    // Zeros where Y lies outside the full output (the bias follows), a
    // crop where inside: the Pad kernel, in the order the conv writes,
    // which is Y's bytes.
    PadParams P;
    P.Rank = int(YShape.size());
    P.PadMode = PadParams::Constant;
    P.Type = D.Type;
    codegen::getPhysicalShape(FullT, P.XShape);
    codegen::getPhysicalShape(YT.withLayout(FullT.getLayout()), P.YShape);
    auto Perm = FullT.getLayout().getPermutation(YT.getRank());
    for (size_t I = 0; I < Perm.size(); ++I)
      P.Begin[I] = Perm[I] >= 2 ? -(*CropStart)[Perm[I] - 2] : 0;
    C.addStep({Info.Nodes,
               std::string("pad.constant ") + getDTypeName(D.Type) +
                   " (conv_transpose output past the full one)",
               false, 0},
              P, {FullArg, {*YB, 0}});
  } else {
    int64_t Offset = 0;
    for (int I = 0; I < D.Spatial; ++I)
      Offset += (*CropStart)[size_t(I)] * FullStrides[size_t(I) + 2];
    addCopy(
        C, Info.Nodes, "crop",
        makeCopy(YShape, FullStrides, codegen::getStrides(YT), D.Type, D.Type),
        {FullArg.Buffer, Offset * Elt}, {*YB, 0});
  }
  if (!Epilogue.Bias && !Epilogue.Residual && Epilogue.Act.isNone())
    return llvm::Error::success();
  EpilogueParams E;
  E.Count = YT.getNumElements().getValueOr(0);
  E.Channels = Epilogue.Bias ? D.K : 1;
  E.ChannelStride = D.YChannelsLast ? 1 : E.Count / (D.N * D.K);
  E.Act = Epilogue.Act;
  E.XType = E.ResidualType = E.YType = D.Type;
  C.addStep({Info.Nodes,
             std::string("epilogue.conv_transpose ") +
                 getOrderName(D.YChannelsLast) + " " + getDTypeName(D.Type) +
                 getEpilogueSuffix(Epilogue),
             false, 0},
            E, {{*YB, 0}, Arg(), BiasArg, *Residual, {*YB, 0}});
  return llvm::Error::success();
}
