//===- NormalizationKernels.cpp - Reference normalizations and reductions -===//
//
// BatchNormalization (inference), InstanceNormalization, LayerNormalization
// (opset 17), LRN, Softmax and LogSoftmax along one axis (opset 13), and
// ReduceMean/Max/Sum/Min/Prod/L2/SumSquare with the axes operand, ArgMax
// and ArgMin, and CumSum. Statistics are accumulated in double.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

using namespace strider;
using namespace strider::runtime;

namespace {

/// Element \p I of a rank-1 per-channel operand.
double channelValue(const Tensor &T, int64_t I) {
  return T.getDouble(T.getOffset({I}));
}

llvm::Error checkPerChannel(const Node &N, llvm::ArrayRef<const Tensor *> Ops,
                            unsigned First, int64_t C) {
  for (unsigned I = First; I < Ops.size(); ++I)
    if (!Ops[I] || Ops[I]->getRank() != 1 || Ops[I]->getDim(0) != C)
      return makeNodeError(N, "operand " + llvm::Twine(I) +
                                  " must have shape [" + llvm::Twine(C) + "]");
  return llvm::Error::success();
}

llvm::Error batchNormKernel(const Node &N,
                            llvm::ArrayRef<const Tensor *> Operands,
                            llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  Tensor &Y = Results[0];
  bool Training = N.getIntAttr("training_mode", 0) != 0;
  if (!Training)
    for (unsigned I = 1; I < Results.size(); ++I)
      if (Results[I].getElementType() != ElementType::Unknown)
        return makeNodeError(N, "running statistics results need "
                                "training_mode");
  if (X.getRank() < 2 || Y.getShape() != X.getShape())
    return makeNodeError(N, "result must have the input's shape (rank >= 2)");
  int64_t NumC = X.getDim(1);
  if (llvm::Error E = checkPerChannel(N, Operands, 1, NumC))
    return E;
  double Eps = N.getFloatAttr("epsilon", 1e-5f);
  const Tensor &Scale = *Operands[1], &Bias = *Operands[2],
               &Mean = *Operands[3], &Var = *Operands[4];
  std::vector<double> UseMean(NumC), UseVar(NumC);
  for (int64_t C = 0; C < NumC; ++C) {
    UseMean[C] = channelValue(Mean, C);
    UseVar[C] = channelValue(Var, C);
  }
  if (Training) {
    // ONNX (opset 14+): normalize with the batch's mean and biased
    // variance over every dim but 1; results 1 and 2 are the running
    // statistics input * momentum + batch * (1 - momentum).
    if (Results.size() > 3)
      return makeNodeError(N, "saved mean/variance results are not "
                              "supported");
    for (unsigned I = 1; I < Results.size(); ++I)
      if (Results[I].getElementType() != ElementType::Unknown &&
          Results[I].getShape() != llvm::makeArrayRef(NumC))
        return makeNodeError(N, "running statistics must have shape [C]");
    std::vector<double> Sum(NumC, 0.0), SqSum(NumC, 0.0);
    int64_t Count = NumC ? X.getNumElements() / NumC : 0;
    forEachIndex(X.getShape(), [&](llvm::ArrayRef<int64_t> Idx) {
      Sum[Idx[1]] += X.getDouble(X.getOffset(Idx));
    });
    for (int64_t C = 0; C < NumC; ++C)
      Sum[C] /= double(Count);
    forEachIndex(X.getShape(), [&](llvm::ArrayRef<int64_t> Idx) {
      double D = X.getDouble(X.getOffset(Idx)) - Sum[Idx[1]];
      SqSum[Idx[1]] += D * D;
    });
    double Momentum = N.getFloatAttr("momentum", 0.9f);
    for (int64_t C = 0; C < NumC; ++C) {
      double BatchVar = SqSum[C] / double(Count);
      if (Results.size() > 1 &&
          Results[1].getElementType() != ElementType::Unknown)
        Results[1].setDouble(Results[1].getOffset({C}),
                             UseMean[C] * Momentum + Sum[C] * (1 - Momentum));
      if (Results.size() > 2 &&
          Results[2].getElementType() != ElementType::Unknown)
        Results[2].setDouble(Results[2].getOffset({C}),
                             UseVar[C] * Momentum + BatchVar * (1 - Momentum));
      UseMean[C] = Sum[C];
      UseVar[C] = BatchVar;
    }
  }
  forEachIndex(X.getShape(), [&](llvm::ArrayRef<int64_t> Idx) {
    int64_t C = Idx[1];
    double V = (X.getDouble(X.getOffset(Idx)) - UseMean[C]) /
                   std::sqrt(UseVar[C] + Eps) * channelValue(Scale, C) +
               channelValue(Bias, C);
    Y.setDouble(Y.getOffset(Idx), V);
  });
  return llvm::Error::success();
}

llvm::Error instanceNormKernel(const Node &N,
                               llvm::ArrayRef<const Tensor *> Operands,
                               llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  Tensor &Y = Results[0];
  if (X.getRank() < 3 || Y.getShape() != X.getShape())
    return makeNodeError(N, "result must have the input's shape (rank >= 3)");
  if (llvm::Error E = checkPerChannel(N, Operands, 1, X.getDim(1)))
    return E;
  double Eps = N.getFloatAttr("epsilon", 1e-5f);
  llvm::ArrayRef<int64_t> Spatial = X.getShape().drop_front(2);
  int64_t Count = 1;
  for (int64_t D : Spatial)
    Count *= D;
  llvm::SmallVector<int64_t, 5> Idx(X.getRank());
  forEachIndex(X.getShape().take_front(2), [&](llvm::ArrayRef<int64_t> NC) {
    Idx[0] = NC[0];
    Idx[1] = NC[1];
    auto ForSpatial = [&](auto F) {
      forEachIndex(Spatial, [&](llvm::ArrayRef<int64_t> S) {
        std::copy(S.begin(), S.end(), Idx.begin() + 2);
        F();
      });
    };
    double Sum = 0;
    ForSpatial([&] { Sum += X.getDouble(X.getOffset(Idx)); });
    double Mean = Sum / double(Count), SqSum = 0;
    ForSpatial([&] {
      double D = X.getDouble(X.getOffset(Idx)) - Mean;
      SqSum += D * D;
    });
    double InvStd = 1.0 / std::sqrt(SqSum / double(Count) + Eps);
    double Scale = channelValue(*Operands[1], NC[1]);
    double Bias = channelValue(*Operands[2], NC[1]);
    ForSpatial([&] {
      int64_t Off = X.getOffset(Idx);
      Y.setDouble(Y.getOffset(Idx),
                  (X.getDouble(Off) - Mean) * InvStd * Scale + Bias);
    });
  });
  return llvm::Error::success();
}

/// LayerNormalization over the dims from `axis` on; the optional Mean and
/// InvStdDev results hold the statistics of each normalized slice.
llvm::Error layerNormKernel(const Node &N,
                            llvm::ArrayRef<const Tensor *> Operands,
                            llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  Tensor &Y = Results[0];
  if (Y.getShape() != X.getShape())
    return makeNodeError(N, "result must have the input's shape");
  int64_t Rank = X.getRank();
  int64_t Axis = N.getIntAttr("axis", -1);
  if (llvm::Error E = normalizeAxis(N, Axis, Rank))
    return E;
  llvm::ArrayRef<int64_t> Lead = X.getShape().take_front(size_t(Axis));
  llvm::ArrayRef<int64_t> Norm = X.getShape().drop_front(size_t(Axis));
  // Scale and B broadcast to the normalized dims.
  llvm::SmallVector<int64_t, 6> Stride[2];
  const Tensor *Affine[2] = {Operands[1],
                             Operands.size() > 2 ? Operands[2] : nullptr};
  for (unsigned K = 0; K < 2; ++K) {
    const Tensor *T = Affine[K];
    if (!T)
      continue;
    llvm::ArrayRef<int64_t> S = T->getShape();
    bool OK = S.size() <= Norm.size();
    for (size_t I = 0; OK && I < S.size(); ++I)
      OK = S[I] == 1 || S[I] == Norm[Norm.size() - S.size() + I];
    if (!OK)
      return makeNodeError(N, llvm::Twine(K ? "B" : "Scale") + " of type " +
                                  T->getType().str() +
                                  " does not broadcast to the normalized dims");
    Stride[K] = getBroadcastStrides(*T, Norm);
  }
  llvm::SmallVector<int64_t, 6> StatShape(Lead.begin(), Lead.end());
  StatShape.resize(size_t(Rank), 1);
  Tensor *Stats[2] = {nullptr, nullptr};
  for (unsigned K = 1; K < 3 && K < Results.size(); ++K) {
    if (Results[K].getElementType() == ElementType::Unknown)
      continue;
    if (Results[K].getShape() != llvm::ArrayRef<int64_t>(StatShape))
      return makeNodeError(N, "Mean and InvStdDev must keep the dims before "
                              "the axis and be 1 from it on");
    Stats[K - 1] = &Results[K];
  }
  double Eps = N.getFloatAttr("epsilon", 1e-5f);
  int64_t Count = 1;
  for (int64_t D : Norm)
    Count *= D;
  llvm::SmallVector<int64_t, 6> Idx(size_t(Rank), 0);
  forEachIndex(Lead, [&](llvm::ArrayRef<int64_t> L) {
    std::copy(L.begin(), L.end(), Idx.begin());
    auto ForNormalized = [&](auto F) {
      forEachIndex(Norm, [&](llvm::ArrayRef<int64_t> I) {
        std::copy(I.begin(), I.end(), Idx.begin() + Axis);
        F(I);
      });
    };
    double Sum = 0;
    ForNormalized(
        [&](llvm::ArrayRef<int64_t>) { Sum += X.getDouble(X.getOffset(Idx)); });
    double Mean = Sum / double(Count), SqSum = 0;
    ForNormalized([&](llvm::ArrayRef<int64_t>) {
      double D = X.getDouble(X.getOffset(Idx)) - Mean;
      SqSum += D * D;
    });
    double InvStd = 1.0 / std::sqrt(SqSum / double(Count) + Eps);
    ForNormalized([&](llvm::ArrayRef<int64_t> I) {
      double V = (X.getDouble(X.getOffset(Idx)) - Mean) * InvStd;
      for (unsigned K = 0; K < 2; ++K) {
        if (!Affine[K])
          continue;
        int64_t Off = 0;
        for (size_t D = 0; D < I.size(); ++D)
          Off += I[D] * Stride[K][D];
        double A = Affine[K]->getDouble(Off);
        V = K ? V + A : V * A;
      }
      Y.setDouble(Y.getOffset(Idx), V);
    });
    std::fill(Idx.begin() + Axis, Idx.end(), 0);
    if (Stats[0])
      Stats[0]->setDouble(Stats[0]->getOffset(Idx), Mean);
    if (Stats[1])
      Stats[1]->setDouble(Stats[1]->getOffset(Idx), InvStd);
  });
  return llvm::Error::success();
}

/// LRN (opset 13): Y = X / (bias + alpha / size * sum of X^2 over the
/// channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] that
/// exist)^beta.
llvm::Error lrnKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                      llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  Tensor &Y = Results[0];
  if (X.getRank() < 3 || Y.getShape() != X.getShape())
    return makeNodeError(N, "result must have the input's shape (rank >= 3)");
  const int64_t Size = N.getIntAttr("size", 0);
  if (Size < 1)
    return makeNodeError(N, "attribute 'size' must be positive, got " +
                                llvm::Twine(Size));
  const double Alpha = N.getFloatAttr("alpha", 1e-4f);
  const double Beta = N.getFloatAttr("beta", 0.75f);
  const double Bias = N.getFloatAttr("bias", 1.0f);
  const int64_t C = X.getDim(1), Before = (Size - 1) / 2,
                After = Size - 1 - Before;
  llvm::SmallVector<int64_t, 5> Src;
  forEachIndex(X.getShape(), [&](llvm::ArrayRef<int64_t> Idx) {
    Src.assign(Idx.begin(), Idx.end());
    double SqSum = 0;
    for (int64_t I = std::max<int64_t>(0, Idx[1] - Before),
                 E = std::min(C - 1, Idx[1] + After);
         I <= E; ++I) {
      Src[1] = I;
      double V = X.getDouble(X.getOffset(Src));
      SqSum += V * V;
    }
    Y.setDouble(Y.getOffset(Idx),
                X.getDouble(X.getOffset(Idx)) /
                    std::pow(Bias + Alpha / double(Size) * SqSum, Beta));
  });
  return llvm::Error::success();
}

/// Softmax (or its logarithm) along one axis.
template <bool IsLog>
llvm::Error softmaxKernel(const Node &N,
                          llvm::ArrayRef<const Tensor *> Operands,
                          llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  Tensor &Y = Results[0];
  if (Y.getShape() != X.getShape())
    return makeNodeError(N, "result must have the input's shape");
  int64_t Rank = X.getRank();
  int64_t Axis = N.getIntAttr("axis", -1);
  if (Axis < -Rank || Axis >= Rank || Rank == 0)
    return makeNodeError(N, "axis " + llvm::Twine(Axis) +
                                " is out of range for rank " +
                                llvm::Twine(Rank));
  if (Axis < 0)
    Axis += Rank;
  llvm::SmallVector<int64_t, 6> Outer(X.getShape().begin(), X.getShape().end());
  Outer[Axis] = 1;
  int64_t Len = X.getDim(Axis);
  int64_t XStride = X.getStrides()[Axis], YStride = Y.getStrides()[Axis];
  forEachIndex(Outer, [&](llvm::ArrayRef<int64_t> Idx) {
    int64_t XBase = X.getOffset(Idx), YBase = Y.getOffset(Idx);
    double Max = -std::numeric_limits<double>::infinity();
    for (int64_t I = 0; I < Len; ++I)
      Max = std::max(Max, X.getDouble(XBase + I * XStride));
    double Sum = 0;
    for (int64_t I = 0; I < Len; ++I)
      Sum += std::exp(X.getDouble(XBase + I * XStride) - Max);
    for (int64_t I = 0; I < Len; ++I) {
      double D = X.getDouble(XBase + I * XStride) - Max;
      Y.setDouble(YBase + I * YStride,
                  IsLog ? D - std::log(Sum) : std::exp(D) / Sum);
    }
  });
  return llvm::Error::success();
}

enum class ReduceKind { Mean, Max, Sum, Min, Prod, L2, SumSquare };

/// The reduction of nothing (ReduceMax of an empty set is -inf, ...).
constexpr double reduceInit(ReduceKind K) {
  return K == ReduceKind::Max    ? -std::numeric_limits<double>::infinity()
         : K == ReduceKind::Min  ? std::numeric_limits<double>::infinity()
         : K == ReduceKind::Prod ? 1.0
                                 : 0.0;
}

/// \p Acc with one more element \p V.
template <ReduceKind K> double reduceStep(double Acc, double V) {
  switch (K) {
  case ReduceKind::Max:
    return std::max(Acc, V);
  case ReduceKind::Min:
    return std::min(Acc, V);
  case ReduceKind::Prod:
    return Acc * V;
  case ReduceKind::L2:
  case ReduceKind::SumSquare:
    return Acc + V * V;
  case ReduceKind::Mean:
  case ReduceKind::Sum:
    return Acc + V;
  }
  return Acc;
}

template <ReduceKind Kind>
llvm::Error reduceKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                         llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  Tensor &Y = Results[0];
  int64_t Rank = X.getRank();
  bool KeepDims = N.getIntAttr("keepdims", 1) != 0;
  bool NoopEmpty = N.getIntAttr("noop_with_empty_axes", 0) != 0;
  llvm::SmallVector<bool, 6> Reduced(Rank, false);
  const Tensor *Axes = Operands.size() > 1 ? Operands[1] : nullptr;
  if (Axes && Axes->getNumElements() > 0) {
    if (Axes->getRank() != 1 || !isInteger(Axes->getElementType()))
      return makeNodeError(N, "axes must be a rank-1 integer tensor");
    for (int64_t I = 0; I < Axes->getDim(0); ++I) {
      int64_t A = Axes->getInt(Axes->getOffset({I}));
      if (A < -Rank || A >= Rank)
        return makeNodeError(N, "axis " + llvm::Twine(A) +
                                    " is out of range for rank " +
                                    llvm::Twine(Rank));
      Reduced[A < 0 ? A + Rank : A] = true;
    }
  } else if (!NoopEmpty) {
    Reduced.assign(Rank, true);
  }
  // The result shape with every reduced dim kept as 1.
  llvm::SmallVector<int64_t, 6> Kept, Expected;
  for (int64_t I = 0; I < Rank; ++I) {
    Kept.push_back(Reduced[I] ? 1 : X.getDim(I));
    if (!Reduced[I] || KeepDims)
      Expected.push_back(Kept.back());
  }
  if (Y.getShape() != llvm::ArrayRef<int64_t>(Expected))
    return makeNodeError(N, "result shape does not match the reduction");
  llvm::SmallVector<int64_t, 6> Window(Rank);
  int64_t Count = 1;
  for (int64_t I = 0; I < Rank; ++I) {
    Window[I] = Reduced[I] ? X.getDim(I) : 1;
    Count *= Window[I];
  }
  llvm::SmallVector<int64_t, 6> XIdx(Rank), YIdx;
  auto YIndex = [&](llvm::ArrayRef<int64_t> KIdx) {
    YIdx.clear();
    for (int64_t I = 0; I < Rank; ++I)
      if (!Reduced[I] || KeepDims)
        YIdx.push_back(KIdx[I]);
    return Y.getOffset(YIdx);
  };
  if constexpr (Kind == ReduceKind::Sum || Kind == ReduceKind::Prod ||
                Kind == ReduceKind::Max || Kind == ReduceKind::Min) {
    if (isInteger(X.getElementType()) && isInteger(Y.getElementType())) {
      // Integers exactly (as 64 bits, wrapping): doubles round past 2^53.
      // Unsigned values order as such (u64 past 2^63).
      const bool Unsigned = isUnsignedInteger(X.getElementType());
      auto Before = [&](uint64_t A, uint64_t B) {
        return Unsigned ? A < B : int64_t(A) < int64_t(B);
      };
      forEachIndex(Kept, [&](llvm::ArrayRef<int64_t> KIdx) {
        uint64_t Acc = Kind == ReduceKind::Prod ? 1
                       : Kind == ReduceKind::Max
                           ? (Unsigned ? 0 : uint64_t(INT64_MIN))
                       : Kind == ReduceKind::Min
                           ? (Unsigned ? UINT64_MAX : uint64_t(INT64_MAX))
                           : 0;
        forEachIndex(Window, [&](llvm::ArrayRef<int64_t> WIdx) {
          for (int64_t I = 0; I < Rank; ++I)
            XIdx[I] = KIdx[I] + WIdx[I];
          const uint64_t V = uint64_t(X.getInt(X.getOffset(XIdx)));
          if (Kind == ReduceKind::Sum)
            Acc += V;
          else if (Kind == ReduceKind::Prod)
            Acc *= V;
          else if (Kind == ReduceKind::Max ? Before(Acc, V) : Before(V, Acc))
            Acc = V;
        });
        Y.setInt(YIndex(KIdx), int64_t(Acc));
      });
      return llvm::Error::success();
    }
  }
  forEachIndex(Kept, [&](llvm::ArrayRef<int64_t> KIdx) {
    double Acc = reduceInit(Kind);
    forEachIndex(Window, [&](llvm::ArrayRef<int64_t> WIdx) {
      for (int64_t I = 0; I < Rank; ++I)
        XIdx[I] = KIdx[I] + WIdx[I];
      double V = X.getDouble(X.getOffset(XIdx));
      Acc = reduceStep<Kind>(Acc, V);
    });
    if (Kind == ReduceKind::Mean)
      Acc = Count ? Acc / double(Count)
                  : std::numeric_limits<double>::quiet_NaN();
    if (Kind == ReduceKind::L2)
      Acc = std::sqrt(Acc);
    Y.setDouble(YIndex(KIdx), Acc);
  });
  return llvm::Error::success();
}

/// The positions along each row of \p Len elements (read by \p Get) that
/// TopK returns, in order: the K largest (or smallest), NaN above every
/// number (as PyTorch's topk has it), ties by lower index; \p Sorted false
/// keeps that order too (ONNX leaves it open).
std::vector<int64_t> topKPositions(int64_t Len, int64_t K, bool Largest,
                                   llvm::function_ref<double(int64_t)> Get) {
  std::vector<int64_t> Order(static_cast<size_t>(Len));
  for (int64_t I = 0; I < Len; ++I)
    Order[size_t(I)] = I;
  auto Before = [&](int64_t A, int64_t B) {
    double VA = Get(A), VB = Get(B);
    const bool NanA = std::isnan(VA), NanB = std::isnan(VB);
    if (NanA || NanB)
      return NanA && NanB ? A < B : Largest ? NanA : NanB;
    if (VA != VB)
      return Largest ? VA > VB : VA < VB;
    return A < B;
  };
  std::partial_sort(Order.begin(), Order.begin() + K, Order.end(), Before);
  Order.resize(size_t(K));
  return Order;
}

/// TopK along one axis: values and their i64 positions.
llvm::Error topKKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                       llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  const int64_t Rank = X.getRank();
  int64_t Axis = N.getIntAttr("axis", -1);
  if (llvm::Error E = normalizeAxis(N, Axis, Rank))
    return E;
  if (Operands[1]->getNumElements() != 1)
    return makeNodeError(N, "K must hold one element");
  const int64_t K = Operands[1]->getInt(0), Len = X.getDim(Axis);
  if (K < 0 || K > Len)
    return makeNodeError(N, "K = " + llvm::Twine(K) +
                                " is out of range for an axis of size " +
                                llvm::Twine(Len));
  Tensor &Values = Results[0];
  Tensor *Indices =
      Results.size() > 1 && Results[1].getElementType() != ElementType::Unknown
          ? &Results[1]
          : nullptr;
  llvm::SmallVector<int64_t, 6> Rows(X.getShape().begin(), X.getShape().end());
  Rows[Axis] = 1;
  const int64_t Stride = X.getStrides()[Axis];
  const bool Largest = N.getIntAttr("largest", 1) != 0;
  llvm::SmallVector<int64_t, 6> OutIdx;
  forEachIndex(Rows, [&](llvm::ArrayRef<int64_t> Idx) {
    const int64_t Base = X.getOffset(Idx);
    std::vector<int64_t> Pos = topKPositions(Len, K, Largest, [&](int64_t I) {
      return X.getDouble(Base + I * Stride);
    });
    OutIdx.assign(Idx.begin(), Idx.end());
    for (int64_t J = 0; J < K; ++J) {
      OutIdx[Axis] = J;
      Values.copyElement(Values.getOffset(OutIdx), X,
                         Base + Pos[size_t(J)] * Stride);
      if (Indices)
        Indices->setInt(Indices->getOffset(OutIdx), Pos[size_t(J)]);
    }
  });
  return llvm::Error::success();
}

/// ArgMax (\p IsMax) or ArgMin along one axis: the first extreme, or the
/// last with select_last_index.
template <bool IsMax>
llvm::Error argReduceKernel(const Node &N,
                            llvm::ArrayRef<const Tensor *> Operands,
                            llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  Tensor &Y = Results[0];
  const int64_t Rank = X.getRank();
  int64_t Axis = N.getIntAttr("axis", 0);
  if (llvm::Error E = normalizeAxis(N, Axis, Rank))
    return E;
  const bool KeepDims = N.getIntAttr("keepdims", 1) != 0;
  const bool Last = N.getIntAttr("select_last_index", 0) != 0;
  llvm::SmallVector<int64_t, 6> Kept(X.getShape().begin(), X.getShape().end());
  Kept[Axis] = 1;
  llvm::SmallVector<int64_t, 6> Expected;
  for (int64_t I = 0; I < Rank; ++I)
    if (I != Axis || KeepDims)
      Expected.push_back(Kept[I]);
  if (Y.getShape() != llvm::ArrayRef<int64_t>(Expected) ||
      Y.getElementType() != ElementType::I64 || X.getDim(Axis) == 0)
    return makeNodeError(N, "result must be the i64 indices along a "
                            "non-empty axis");
  const int64_t Len = X.getDim(Axis), Stride = X.getStrides()[Axis];
  llvm::SmallVector<int64_t, 6> YIdx;
  forEachIndex(Kept, [&](llvm::ArrayRef<int64_t> Idx) {
    const int64_t Base = X.getOffset(Idx);
    double Best = X.getDouble(Base);
    int64_t BestI = 0;
    for (int64_t I = 1; I < Len; ++I) {
      double V = X.getDouble(Base + I * Stride);
      bool Better =
          IsMax ? (Last ? V >= Best : V > Best) : (Last ? V <= Best : V < Best);
      if (Better) {
        Best = V;
        BestI = I;
      }
    }
    YIdx.clear();
    for (int64_t I = 0; I < Rank; ++I)
      if (I != Axis || KeepDims)
        YIdx.push_back(Idx[I]);
    Y.setInt(Y.getOffset(YIdx), BestI);
  });
  return llvm::Error::success();
}

/// CumSum: running sums along the axis, integers as wrapping int64 (u64
/// by its bits, which wrap alike), floats in double.
llvm::Error cumSumKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                         llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  Tensor &Y = Results[0];
  if (Operands[1]->getNumElements() != 1)
    return makeNodeError(N, "axis must hold one element");
  const int64_t Rank = X.getRank();
  int64_t Axis = Operands[1]->getInt(0);
  if (llvm::Error E = normalizeAxis(N, Axis, Rank))
    return E;
  if (Y.getShape() != X.getShape())
    return makeNodeError(N, "result must have the input's shape");
  const bool Exclusive = N.getIntAttr("exclusive", 0) != 0;
  const bool Reverse = N.getIntAttr("reverse", 0) != 0;
  const bool Int = !isFloatingPoint(X.getElementType());
  const int64_t Len = X.getShape()[size_t(Axis)];
  std::vector<int64_t> Rows(X.getShape().begin(), X.getShape().end());
  Rows[size_t(Axis)] = 1;
  forEachIndex(Rows, [&](llvm::ArrayRef<int64_t> Start) {
    std::vector<int64_t> Idx(Start.begin(), Start.end());
    uint64_t IntAcc = 0;
    double Acc = 0;
    for (int64_t K = 0; K < Len; ++K) {
      Idx[size_t(Axis)] = Reverse ? Len - 1 - K : K;
      const int64_t XO = X.getOffset(Idx), YO = Y.getOffset(Idx);
      if (Int) {
        const uint64_t V = uint64_t(X.getInt(XO));
        if (!Exclusive)
          IntAcc += V;
        Y.setInt(YO, int64_t(IntAcc));
        if (Exclusive)
          IntAcc += V;
      } else {
        const double V = X.getDouble(XO);
        if (!Exclusive)
          Acc += V;
        Y.setDouble(YO, Acc);
        if (Exclusive)
          Acc += V;
      }
    }
  });
  return llvm::Error::success();
}

} // namespace

void runtime::addNormalizationKernels(KernelTable &T) {
  T[static_cast<size_t>(OpId::CumSum)] = cumSumKernel;
  T[static_cast<size_t>(OpId::BatchNormalization)] = batchNormKernel;
  T[static_cast<size_t>(OpId::InstanceNormalization)] = instanceNormKernel;
  T[static_cast<size_t>(OpId::LayerNormalization)] = layerNormKernel;
  T[static_cast<size_t>(OpId::LRN)] = lrnKernel;
  T[static_cast<size_t>(OpId::Softmax)] = softmaxKernel<false>;
  T[static_cast<size_t>(OpId::LogSoftmax)] = softmaxKernel<true>;
  T[static_cast<size_t>(OpId::ReduceMean)] = reduceKernel<ReduceKind::Mean>;
  T[static_cast<size_t>(OpId::ReduceMax)] = reduceKernel<ReduceKind::Max>;
  T[static_cast<size_t>(OpId::ReduceSum)] = reduceKernel<ReduceKind::Sum>;
  T[static_cast<size_t>(OpId::ReduceMin)] = reduceKernel<ReduceKind::Min>;
  T[static_cast<size_t>(OpId::ReduceProd)] = reduceKernel<ReduceKind::Prod>;
  T[static_cast<size_t>(OpId::ReduceL2)] = reduceKernel<ReduceKind::L2>;
  T[static_cast<size_t>(OpId::ReduceSumSquare)] =
      reduceKernel<ReduceKind::SumSquare>;
  T[static_cast<size_t>(OpId::ArgMax)] = argReduceKernel<true>;
  T[static_cast<size_t>(OpId::TopK)] = topKKernel;
  T[static_cast<size_t>(OpId::ArgMin)] = argReduceKernel<false>;
}
