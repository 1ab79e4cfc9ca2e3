//===- ConvolutionKernels.cpp - Reference Conv and ConvTranspose ----------===//
//
// Direct (non-im2col) convolution loops over logical indices; every operand,
// the weight included, is read through its layout's strides, and sums are
// accumulated in double.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"

#include <vector>

using namespace strider;
using namespace strider::runtime;

namespace {

/// Per-spatial-dim geometry of a convolution window.
struct ConvGeometry {
  llvm::SmallVector<int64_t, 3> Kernel, Strides, Dilations, PadBegin, PadEnd;
};

/// Reads strides, dilations and kernel_shape for \p NumSpatial dims;
/// \p WeightSpatial gives the kernel extent found on the weight.
llvm::Error readWindow(const Node &N, unsigned NumSpatial,
                       llvm::ArrayRef<int64_t> WeightSpatial,
                       ConvGeometry &G) {
  std::vector<int64_t> Kernel = N.getIntsAttr("kernel_shape");
  if (!Kernel.empty() &&
      llvm::ArrayRef<int64_t>(Kernel) != WeightSpatial)
    return makeNodeError(N, "kernel_shape does not match the weight shape");
  G.Kernel.assign(WeightSpatial.begin(), WeightSpatial.end());
  std::vector<int64_t> Ones(NumSpatial, 1);
  std::vector<int64_t> S = N.getIntsAttr("strides", Ones);
  std::vector<int64_t> D = N.getIntsAttr("dilations", Ones);
  if (S.size() != NumSpatial || D.size() != NumSpatial)
    return makeNodeError(N, "strides and dilations must have " +
                                llvm::Twine(NumSpatial) + " entries");
  for (unsigned I = 0; I < NumSpatial; ++I)
    if (S[I] < 1 || D[I] < 1)
      return makeNodeError(N, "strides and dilations must be positive");
  G.Strides.assign(S.begin(), S.end());
  G.Dilations.assign(D.begin(), D.end());
  return llvm::Error::success();
}

/// Explicit pads attribute (begins then ends), zero by default.
llvm::Error readPads(const Node &N, unsigned NumSpatial, ConvGeometry &G) {
  std::vector<int64_t> P =
      N.getIntsAttr("pads", std::vector<int64_t>(2 * NumSpatial, 0));
  if (P.size() != 2 * NumSpatial)
    return makeNodeError(N, "pads must have " + llvm::Twine(2 * NumSpatial) +
                                " entries");
  for (int64_t V : P)
    if (V < 0)
      return makeNodeError(N, "pads must be non-negative");
  G.PadBegin.assign(P.begin(), P.begin() + NumSpatial);
  G.PadEnd.assign(P.begin() + NumSpatial, P.end());
  return llvm::Error::success();
}

/// Input positions are multiplied out from the output positions: pads of a
/// forward convolution, resolving auto_pad.
llvm::Error computeForwardPads(const Node &N, llvm::ArrayRef<int64_t> InSpatial,
                               ConvGeometry &G) {
  unsigned K = InSpatial.size();
  std::string AutoPad = N.getStringAttr("auto_pad", "NOTSET");
  if (AutoPad == "NOTSET")
    return readPads(N, K, G);
  G.PadBegin.assign(K, 0);
  G.PadEnd.assign(K, 0);
  if (AutoPad == "VALID")
    return llvm::Error::success();
  if (AutoPad != "SAME_UPPER" && AutoPad != "SAME_LOWER")
    return makeNodeError(N, "unsupported auto_pad '" + AutoPad + "'");
  for (unsigned I = 0; I < K; ++I) {
    int64_t Out = (InSpatial[I] + G.Strides[I] - 1) / G.Strides[I];
    int64_t Extent = (G.Kernel[I] - 1) * G.Dilations[I] + 1;
    int64_t Total =
        std::max<int64_t>(0, (Out - 1) * G.Strides[I] + Extent - InSpatial[I]);
    int64_t Small = Total / 2;
    G.PadBegin[I] = AutoPad == "SAME_UPPER" ? Small : Total - Small;
    G.PadEnd[I] = Total - G.PadBegin[I];
  }
  return llvm::Error::success();
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

llvm::Error convKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                       llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  const Tensor &W = *Operands[1];
  const Tensor *B = Operands.size() > 2 ? Operands[2] : nullptr;
  Tensor &Y = Results[0];
  if (llvm::Error E = checkRanks(N, X, W, Y))
    return E;
  unsigned K = X.getRank() - 2;
  int64_t Group = N.getIntAttr("group", 1);
  int64_t C = X.getDim(1), M = W.getDim(0);
  if (Group < 1 || C % Group != 0 || M % Group != 0 ||
      W.getDim(1) != C / Group)
    return makeNodeError(N, "weight shape does not match the input channels "
                            "and group " + llvm::Twine(Group));
  if (Y.getDim(1) != M)
    return makeNodeError(N, "result channels do not match the weight");
  if (llvm::Error E = checkBias(N, B, M))
    return E;
  ConvGeometry G;
  if (llvm::Error E = readWindow(N, K, W.getShape().drop_front(2), G))
    return E;
  if (llvm::Error E = computeForwardPads(N, X.getShape().drop_front(2), G))
    return E;
  for (unsigned I = 0; I < K; ++I) {
    int64_t Extent = (G.Kernel[I] - 1) * G.Dilations[I] + 1;
    int64_t Padded = X.getDim(I + 2) + G.PadBegin[I] + G.PadEnd[I];
    int64_t Out = Padded < Extent ? 0 : (Padded - Extent) / G.Strides[I] + 1;
    if (Out != Y.getDim(I + 2))
      return makeNodeError(N, "result spatial dim " + llvm::Twine(I) + " is " +
                                  llvm::Twine(Y.getDim(I + 2)) + ", expected " +
                                  llvm::Twine(Out));
  }

  int64_t Cg = C / Group, Mg = M / Group;
  llvm::SmallVector<int64_t, 5> XIdx(X.getRank()), WIdx(W.getRank());
  forEachIndex(Y.getShape(), [&](llvm::ArrayRef<int64_t> YIdx) {
    int64_t Ch = YIdx[1], G0 = Ch / Mg;
    double Acc = B ? B->getDouble(B->getOffset({Ch})) : 0.0;
    XIdx[0] = YIdx[0];
    WIdx[0] = Ch;
    for (int64_t Cin = 0; Cin < Cg; ++Cin) {
      XIdx[1] = G0 * Cg + Cin;
      WIdx[1] = Cin;
      forEachIndex(G.Kernel, [&](llvm::ArrayRef<int64_t> KIdx) {
        for (unsigned I = 0; I < K; ++I) {
          int64_t Pos = YIdx[I + 2] * G.Strides[I] - G.PadBegin[I] +
                        KIdx[I] * G.Dilations[I];
          if (Pos < 0 || Pos >= X.getDim(I + 2))
            return;
          XIdx[I + 2] = Pos;
          WIdx[I + 2] = KIdx[I];
        }
        Acc += X.getDouble(X.getOffset(XIdx)) * W.getDouble(W.getOffset(WIdx));
      });
    }
    Y.setDouble(Y.getOffset(YIdx), Acc);
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
                            "and group " + llvm::Twine(Group));
  if (Y.getDim(1) != M)
    return makeNodeError(N, "result channels do not match the weight");
  if (llvm::Error E = checkBias(N, B, M))
    return E;
  ConvGeometry G;
  if (llvm::Error E = readWindow(N, K, W.getShape().drop_front(2), G))
    return E;
  std::vector<int64_t> OutPad =
      N.getIntsAttr("output_padding", std::vector<int64_t>(K, 0));
  std::vector<int64_t> OutShape = N.getIntsAttr("output_shape");
  if (OutPad.size() != K)
    return makeNodeError(N, "output_padding must have " + llvm::Twine(K) +
                                " entries");
  if (!OutShape.empty() && OutShape.size() != K && OutShape.size() != K + 2)
    return makeNodeError(N, "output_shape must have " + llvm::Twine(K) +
                                " entries");
  if (OutShape.size() == K + 2)
    OutShape.erase(OutShape.begin(), OutShape.begin() + 2);
  std::string AutoPad = N.getStringAttr("auto_pad", "NOTSET");
  bool Same = AutoPad == "SAME_UPPER" || AutoPad == "SAME_LOWER";
  if (!Same && AutoPad != "NOTSET" && AutoPad != "VALID")
    return makeNodeError(N, "unsupported auto_pad '" + AutoPad + "'");
  if (AutoPad == "NOTSET" && OutShape.empty()) {
    if (llvm::Error E = readPads(N, K, G))
      return E;
  } else if (AutoPad == "VALID" && OutShape.empty()) {
    G.PadBegin.assign(K, 0);
    G.PadEnd.assign(K, 0);
  } else {
    // Pads follow from the requested output shape (input * stride when
    // auto_pad SAME gives none).
    G.PadBegin.resize(K);
    G.PadEnd.resize(K);
    for (unsigned I = 0; I < K; ++I) {
      int64_t Out =
          OutShape.empty() ? X.getDim(I + 2) * G.Strides[I] : OutShape[I];
      int64_t Total = G.Strides[I] * (X.getDim(I + 2) - 1) + OutPad[I] +
                      (G.Kernel[I] - 1) * G.Dilations[I] + 1 - Out;
      // Floor division, as ONNX's reference does: a requested output
      // larger than the full result gives a negative Total, and the
      // extra (zero) elements go to the end (pads 0 and -1 for -1).
      int64_t Small = Total >= 0 ? Total / 2 : -((1 - Total) / 2);
      G.PadBegin[I] = AutoPad == "SAME_UPPER" ? Small : Total - Small;
      G.PadEnd[I] = Total - G.PadBegin[I];
    }
  }
  for (unsigned I = 0; I < K; ++I) {
    int64_t Out = G.Strides[I] * (X.getDim(I + 2) - 1) + OutPad[I] +
                  (G.Kernel[I] - 1) * G.Dilations[I] + 1 - G.PadBegin[I] -
                  G.PadEnd[I];
    if (Out != Y.getDim(I + 2))
      return makeNodeError(N, "result spatial dim " + llvm::Twine(I) + " is " +
                                  llvm::Twine(Y.getDim(I + 2)) + ", expected " +
                                  llvm::Twine(Out));
  }

  // Scatter every input element into the windows it contributes to, in a
  // row-major double accumulator over the logical result shape.
  llvm::SmallVector<int64_t, 5> RowStrides(Y.getRank(), 1);
  for (int I = int(Y.getRank()) - 2; I >= 0; --I)
    RowStrides[I] = RowStrides[I + 1] * Y.getDim(I + 1);
  std::vector<double> Acc(Y.getNumElements(), 0.0);
  int64_t Cg = C / Group;
  llvm::SmallVector<int64_t, 5> WIdx(W.getRank());
  forEachIndex(X.getShape(), [&](llvm::ArrayRef<int64_t> XIdx) {
    double XV = X.getDouble(X.getOffset(XIdx));
    int64_t G0 = XIdx[1] / Cg;
    WIdx[0] = XIdx[1];
    for (int64_t Mo = 0; Mo < Mg; ++Mo) {
      WIdx[1] = Mo;
      int64_t Base = XIdx[0] * RowStrides[0] + (G0 * Mg + Mo) * RowStrides[1];
      forEachIndex(G.Kernel, [&](llvm::ArrayRef<int64_t> KIdx) {
        int64_t Flat = Base;
        for (unsigned I = 0; I < K; ++I) {
          int64_t Pos = XIdx[I + 2] * G.Strides[I] +
                        KIdx[I] * G.Dilations[I] - G.PadBegin[I];
          if (Pos < 0 || Pos >= Y.getDim(I + 2))
            return;
          Flat += Pos * RowStrides[I + 2];
          WIdx[I + 2] = KIdx[I];
        }
        Acc[Flat] += XV * W.getDouble(W.getOffset(WIdx));
      });
    }
  });
  int64_t Flat = 0;
  forEachIndex(Y.getShape(), [&](llvm::ArrayRef<int64_t> YIdx) {
    double V = Acc[Flat++];
    if (B)
      V += B->getDouble(B->getOffset({YIdx[1]}));
    Y.setDouble(Y.getOffset(YIdx), V);
  });
  return llvm::Error::success();
}

} // namespace

void runtime::addConvolutionKernels(KernelTable &T) {
  T[static_cast<size_t>(OpId::Conv)] = convKernel;
  T[static_cast<size_t>(OpId::ConvTranspose)] = convTransposeKernel;
}
