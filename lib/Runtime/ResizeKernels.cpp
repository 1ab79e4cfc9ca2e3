//===- ResizeKernels.cpp - Reference Resize (opset 19) --------------------===//
//
// Resize with nearest, linear and cubic modes, and GridSample (the point
// sampling of GridSampling.h). Each Resize output coordinate is
// mapped back per axis (coordinate_transformation_mode) to a set of input
// taps with weights; linear and cubic are separable, so an output element
// is the sum over the product of the per-axis taps. Input positions outside
// the input take the edge value, as ONNX specifies.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "strider/Runtime/ResizeSampling.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <vector>

using namespace strider;
using namespace strider::runtime;

namespace {

/// Reads a rank-1 operand as doubles.
std::vector<double> readVector(const Tensor &T) {
  std::vector<double> V;
  for (int64_t I = 0; I < T.getNumElements(); ++I)
    V.push_back(T.getDouble(T.getOffset({I})));
  return V;
}

/// Cubic convolution weights of the four taps floor(x)-1 .. floor(x)+2 for
/// fractional offset \p T.
std::array<double, 4> cubicWeights(double T, double A) {
  auto Near = [&](double X) { return ((A + 2) * X - (A + 3)) * X * X + 1; };
  auto Far = [&](double X) { return ((A * X - 5 * A) * X + 8 * A) * X - 4 * A; };
  return {Far(T + 1), Near(T), Near(1 - T), Far(2 - T)};
}

} // namespace

llvm::Expected<ResizeSampling>
runtime::computeResizeSampling(const Node &N, llvm::ArrayRef<int64_t> InShape,
                               llvm::ArrayRef<int64_t> OutShape,
                               const Tensor *Roi, const Tensor *Scales,
                               const Tensor *Sizes) {
  auto InDim = [&](int64_t D) { return InShape[size_t(D)]; };
  auto OutDim = [&](int64_t D) { return OutShape[size_t(D)]; };
  int64_t Rank = int64_t(InShape.size());
  if (int64_t(OutShape.size()) != Rank)
    return makeNodeError(N, "result must have the input's rank");
  if (N.getIntAttr("antialias", 0) != 0)
    return makeNodeError(N, "antialias is not supported");
  std::string Mode = N.getStringAttr("mode", "nearest");
  std::string Coord =
      N.getStringAttr("coordinate_transformation_mode", "half_pixel");
  std::string NearestMode =
      N.getStringAttr("nearest_mode", "round_prefer_floor");
  std::string Policy = N.getStringAttr("keep_aspect_ratio_policy", "stretch");
  double CubicA = N.getFloatAttr("cubic_coeff_a", -0.75f);
  bool ExcludeOutside = N.getIntAttr("exclude_outside", 0) != 0;
  ResizeSampling Result;
  Result.ExtrapolationValue = N.getFloatAttr("extrapolation_value", 0.0f);
  if (Mode != "nearest" && Mode != "linear" && Mode != "cubic")
    return makeNodeError(N, "unsupported mode '" + Mode + "'");
  if (Coord != "half_pixel" && Coord != "half_pixel_symmetric" &&
      Coord != "pytorch_half_pixel" && Coord != "align_corners" &&
      Coord != "asymmetric" && Coord != "tf_crop_and_resize")
    return makeNodeError(N, "unsupported coordinate_transformation_mode '" +
                                Coord + "'");
  if (Mode == "nearest" && NearestMode != "round_prefer_floor" &&
      NearestMode != "round_prefer_ceil" && NearestMode != "floor" &&
      NearestMode != "ceil")
    return makeNodeError(N, "unsupported nearest_mode '" + NearestMode + "'");

  // The resized axes and, per axis, scale and roi.
  std::vector<int64_t> Axes = N.getIntsAttr("axes");
  if (Axes.empty())
    for (int64_t I = 0; I < Rank; ++I)
      Axes.push_back(I);
  for (int64_t &A : Axes) {
    if (A < -Rank || A >= Rank)
      return makeNodeError(N, "axis " + llvm::Twine(A) +
                                  " is out of range for rank " +
                                  llvm::Twine(Rank));
    if (A < 0)
      A += Rank;
  }
  size_t NumAxes = Axes.size();
  std::vector<double> Scale(Rank, 1.0), RoiStart(Rank, 0.0), RoiEnd(Rank, 1.0);
  if (Scales && Sizes)
    return makeNodeError(N, "only one of scales and sizes may be given");
  if (Scales) {
    std::vector<double> S = readVector(*Scales);
    if (S.size() != NumAxes)
      return makeNodeError(N, "scales must have " + llvm::Twine(NumAxes) +
                                  " entries");
    for (size_t I = 0; I < NumAxes; ++I) {
      if (!(S[I] > 0))
        return makeNodeError(N, "scales must be positive");
      Scale[Axes[I]] = S[I];
    }
  } else if (Sizes) {
    std::vector<double> S = readVector(*Sizes);
    if (S.size() != NumAxes)
      return makeNodeError(N, "sizes must have " + llvm::Twine(NumAxes) +
                                  " entries");
    double Common = Policy == "not_larger" ? HUGE_VAL : 0.0;
    for (size_t I = 0; I < NumAxes; ++I) {
      double R = S[I] / double(InDim(Axes[I]));
      Scale[Axes[I]] = R;
      Common = Policy == "not_larger" ? std::min(Common, R)
                                      : std::max(Common, R);
    }
    if (Policy == "not_larger" || Policy == "not_smaller") {
      for (int64_t A : Axes)
        Scale[A] = Common;
    } else if (Policy != "stretch") {
      return makeNodeError(N, "unsupported keep_aspect_ratio_policy '" +
                                  Policy + "'");
    }
  } else {
    return makeNodeError(N, "one of scales and sizes must be given");
  }
  if (Coord == "tf_crop_and_resize") {
    if (!Roi)
      return makeNodeError(N, "tf_crop_and_resize needs a roi");
    std::vector<double> R = readVector(*Roi);
    if (R.size() != 2 * NumAxes)
      return makeNodeError(N, "roi must have " + llvm::Twine(2 * NumAxes) +
                                  " entries");
    for (size_t I = 0; I < NumAxes; ++I) {
      RoiStart[Axes[I]] = R[I];
      RoiEnd[Axes[I]] = R[I + NumAxes];
    }
  }
  for (int64_t D = 0; D < Rank; ++D) {
    // Sizes (scaled by a common factor) round; scales truncate.
    double Exact = Scale[D] * double(InDim(D));
    int64_t Out = !llvm::is_contained(Axes, D) ? InDim(D)
                  : Sizes                      ? int64_t(std::llround(Exact))
                                               : int64_t(Exact);
    if (Out != OutDim(D))
      return makeNodeError(N, "result dim " + llvm::Twine(D) + " is " +
                                  llvm::Twine(OutDim(D)) + ", expected " +
                                  llvm::Twine(Out));
    if (InDim(D) == 0 && Out != 0)
      return makeNodeError(N, "cannot resize an empty dim");
  }

  // Per-axis taps of every output position.
  std::vector<ResizeAxis> &Sampling = Result.Axes;
  Sampling.resize(size_t(Rank));
  for (int64_t D = 0; D < Rank; ++D) {
    int64_t In = InDim(D), Out = OutDim(D);
    double S = Scale[D], OutF = S * double(In);
    ResizeAxis &AS = Sampling[D];
    AS.Taps.resize(Out);
    AS.Extrapolated.assign(Out, false);
    for (int64_t O = 0; O < Out; ++O) {
      double Pos = double(O);
      double XOri;
      if (Coord == "half_pixel") {
        XOri = (Pos + 0.5) / S - 0.5;
      } else if (Coord == "half_pixel_symmetric") {
        double Offset = double(In) / 2 * (1 - double(Out) / OutF);
        XOri = Offset + (Pos + 0.5) / S - 0.5;
      } else if (Coord == "pytorch_half_pixel") {
        XOri = OutF == 1 ? -0.5 : (Pos + 0.5) / S - 0.5;
      } else if (Coord == "align_corners") {
        XOri = OutF == 1 ? 0.0 : Pos * double(In - 1) / (OutF - 1);
      } else if (Coord == "asymmetric") {
        XOri = Pos / S;
      } else {
        double Span = (RoiEnd[D] - RoiStart[D]) * double(In - 1);
        XOri = OutF == 1 ? Span / 2 : Pos * Span / (OutF - 1);
        XOri += RoiStart[D] * double(In - 1);
        AS.Extrapolated[O] = XOri < 0 || XOri > double(In - 1);
      }
      auto Clamp = [&](int64_t I) {
        return std::min(std::max<int64_t>(I, 0), In - 1);
      };
      double Floor = std::floor(XOri), Frac = XOri - Floor;
      int64_t Base = int64_t(Floor);
      std::vector<ResizeTap> &Taps = AS.Taps[O];
      if (Mode == "nearest") {
        bool Up;
        if (Frac == 0)
          Up = false;
        else if (NearestMode == "round_prefer_floor")
          Up = Frac > 0.5;
        else if (NearestMode == "round_prefer_ceil")
          Up = Frac >= 0.5;
        else
          Up = NearestMode == "ceil";
        Taps.push_back({Clamp(Base + Up), 1.0});
        continue;
      }
      llvm::SmallVector<std::pair<int64_t, double>, 4> Raw;
      if (Mode == "linear") {
        Raw.push_back({Base, 1 - Frac});
        Raw.push_back({Base + 1, Frac});
      } else {
        std::array<double, 4> W = cubicWeights(Frac, CubicA);
        for (int I = 0; I < 4; ++I)
          Raw.push_back({Base - 1 + I, W[I]});
      }
      double Sum = 0;
      for (auto &R : Raw) {
        if (ExcludeOutside && (R.first < 0 || R.first >= In))
          R.second = 0;
        Sum += R.second;
      }
      if (ExcludeOutside && Sum != 0)
        for (auto &R : Raw)
          R.second /= Sum;
      // Taps clamped to the same input position read it once, with their
      // weights summed (a border's taps; an axis of 1 resized to 1 under
      // pytorch_half_pixel reads index 0 at -0.5 twice, by 0.5 each).
      for (const auto &R : Raw) {
        if (R.second == 0)
          continue;
        const int64_t At = Clamp(R.first);
        auto Same = llvm::find_if(
            Taps, [&](const ResizeTap &T) { return T.Index == At; });
        if (Same != Taps.end())
          Same->Weight += R.second;
        else
          Taps.push_back({At, R.second});
      }
    }
  }

  return Result;
}

namespace {

llvm::Error resizeKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                         llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  Tensor &Y = Results[0];
  auto Operand = [&](unsigned I) -> const Tensor * {
    if (I >= Operands.size() || !Operands[I] ||
        Operands[I]->getNumElements() == 0)
      return nullptr;
    return Operands[I];
  };
  const Tensor *Roi = Operand(1), *Scales = Operand(2), *Sizes = Operand(3);
  // Nothing to sample, and the per-axis tables of an empty result's other
  // dims could be far longer than any tensor (found by the onnx fuzzer).
  if (Y.getNumElements() == 0)
    return llvm::Error::success();
  auto SamplingOrErr = computeResizeSampling(N, X.getShape(), Y.getShape(),
                                             Roi, Scales, Sizes);
  if (!SamplingOrErr)
    return SamplingOrErr.takeError();
  const std::vector<ResizeAxis> &Sampling = SamplingOrErr->Axes;
  const double ExtrapolationValue = SamplingOrErr->ExtrapolationValue;
  int64_t Rank = X.getRank();
  llvm::SmallVector<int64_t, 6> TapCounts(Rank), XIdx(Rank);
  forEachIndex(Y.getShape(), [&](llvm::ArrayRef<int64_t> YIdx) {
    bool Extrapolate = false;
    for (int64_t D = 0; D < Rank; ++D) {
      Extrapolate |= Sampling[D].Extrapolated[YIdx[D]];
      TapCounts[D] = Sampling[D].Taps[YIdx[D]].size();
    }
    double Acc = 0;
    if (Extrapolate) {
      Acc = ExtrapolationValue;
    } else {
      forEachIndex(TapCounts, [&](llvm::ArrayRef<int64_t> TIdx) {
        double W = 1;
        for (int64_t D = 0; D < Rank; ++D) {
          const ResizeTap &T = Sampling[D].Taps[YIdx[D]][TIdx[D]];
          XIdx[D] = T.Index;
          W *= T.Weight;
        }
        Acc += W * X.getDouble(X.getOffset(XIdx));
      });
    }
    Y.setDouble(Y.getOffset(YIdx), Acc);
  });
  return llvm::Error::success();
}

/// GridSample over two spatial dims (GridSampling.h), any float types.
llvm::Error gridSampleKernel(const Node &N,
                             llvm::ArrayRef<const Tensor *> Operands,
                             llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0], &G = *Operands[1];
  Tensor &Y = Results[0];
  if (X.getRank() != 4)
    return makeNodeError(N, "GridSample over " +
                                llvm::Twine(int(X.getRank()) - 2) +
                                " spatial dims is not supported (2 are)");
  auto O = getGridSampleOptions(N);
  if (!O)
    return O.takeError();
  const int64_t H = X.getDim(2), W = X.getDim(3);
  forEachIndex(Y.getShape(), [&](llvm::ArrayRef<int64_t> YIdx) {
    const int64_t B = YIdx[0], C = YIdx[1];
    const double GX = G.getDouble(G.getOffset({B, YIdx[2], YIdx[3], 0}));
    const double GY = G.getDouble(G.getOffset({B, YIdx[2], YIdx[3], 1}));
    const double V =
        gridsample::sample2D(*O, H, W, GX, GY, [&](int64_t YI, int64_t XI) {
          return X.getDouble(X.getOffset({B, C, YI, XI}));
        });
    Y.setDouble(Y.getOffset(YIdx), V);
  });
  return llvm::Error::success();
}

} // namespace

llvm::Expected<gridsample::Options>
runtime::getGridSampleOptions(const Node &N) {
  static const std::pair<llvm::StringRef, gridsample::Mode> Modes[] = {
      {"linear", gridsample::Mode::Linear},
      {"nearest", gridsample::Mode::Nearest},
      {"cubic", gridsample::Mode::Cubic}};
  static const std::pair<llvm::StringRef, gridsample::Padding> Paddings[] = {
      {"zeros", gridsample::Padding::Zeros},
      {"border", gridsample::Padding::Border},
      {"reflection", gridsample::Padding::Reflection}};
  const std::string Mode = N.getStringAttr("mode", "linear");
  const std::string Pad = N.getStringAttr("padding_mode", "zeros");
  const auto *M =
      llvm::find_if(Modes, [&](const auto &E) { return E.first == Mode; });
  if (M == std::end(Modes))
    return makeNodeError(N, "unknown mode '" + Mode + "'");
  const auto *P =
      llvm::find_if(Paddings, [&](const auto &E) { return E.first == Pad; });
  if (P == std::end(Paddings))
    return makeNodeError(N, "unknown padding_mode '" + Pad + "'");
  gridsample::Options O;
  O.M = M->second;
  O.P = P->second;
  O.AlignCorners = N.getIntAttr("align_corners", 0) != 0;
  return O;
}

void runtime::addResizeKernels(KernelTable &T) {
  T[static_cast<size_t>(OpId::Resize)] = resizeKernel;
  T[static_cast<size_t>(OpId::GridSample)] = gridSampleKernel;
}
