//===- PoolingKernels.cpp - Reference pooling kernels ---------------------===//
//
// MaxPool (with its optional Indices result), AveragePool and the global
// pools. The output size comes from the pre-allocated result; the window
// attributes are checked against it.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/WindowGeometry.h"

#include <limits>
#include <vector>

using namespace strider;
using namespace strider::runtime;

namespace {

/// Resolved window of a pooling op over the spatial dims.
struct PoolWindow {
  std::vector<int64_t> Kernel, Strides, Dilations, PadBegin, PadEnd;
};

llvm::Error readPoolWindow(const Node &N, const Tensor &X, const Tensor &Y,
                           PoolWindow &P) {
  if (X.getRank() < 3)
    return makeNodeError(N, "input has rank " + llvm::Twine(X.getRank()) +
                                ", expected at least 3");
  if (Y.getRank() != X.getRank() || Y.getDim(0) != X.getDim(0) ||
      Y.getDim(1) != X.getDim(1))
    return makeNodeError(N, "result batch and channels must match the input");
  auto Axes = resolveWindow(N, X.getShape().drop_front(2), llvm::None);
  if (!Axes)
    return Axes.takeError();
  for (unsigned I = 0; I < Axes->size(); ++I) {
    const WindowAxis &A = (*Axes)[I];
    if (A.Out != Y.getDim(I + 2))
      return makeNodeError(N, "result spatial dim " + llvm::Twine(I) + " is " +
                                  llvm::Twine(Y.getDim(I + 2)) + ", expected " +
                                  llvm::Twine(A.Out));
    P.Kernel.push_back(A.Kernel);
    P.Strides.push_back(A.Stride);
    P.Dilations.push_back(A.Dilation);
    P.PadBegin.push_back(A.PadBegin);
    P.PadEnd.push_back(A.PadEnd);
  }
  return llvm::Error::success();
}

/// Calls \p F(InputIndex, InsideInput) for every window position of result
/// index \p YIdx whose position lies inside the input plus its pads.
template <typename Fn>
void forEachWindowPos(const PoolWindow &P, const Tensor &X,
                      llvm::ArrayRef<int64_t> YIdx, Fn F) {
  unsigned K = P.Kernel.size();
  llvm::SmallVector<int64_t, 5> XIdx(YIdx.begin(), YIdx.end());
  forEachIndex(P.Kernel, [&](llvm::ArrayRef<int64_t> KIdx) {
    bool Inside = true;
    for (unsigned I = 0; I < K; ++I) {
      int64_t Pos =
          YIdx[I + 2] * P.Strides[I] - P.PadBegin[I] + KIdx[I] * P.Dilations[I];
      if (Pos < -P.PadBegin[I] || Pos >= X.getDim(I + 2) + P.PadEnd[I])
        return;
      if (Pos < 0 || Pos >= X.getDim(I + 2))
        Inside = false;
      XIdx[I + 2] = Pos;
    }
    F(llvm::ArrayRef<int64_t>(XIdx), Inside);
  });
}

/// A windowed pooling kernel after its window is read: X, Y = Results[0].
using PoolBody = llvm::Error (*)(const Node &N, const Tensor &X,
                                 const PoolWindow &P,
                                 llvm::MutableArrayRef<Tensor> Results);

template <PoolBody Body>
llvm::Error poolKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                       llvm::MutableArrayRef<Tensor> Results) {
  PoolWindow P;
  if (llvm::Error E = readPoolWindow(N, *Operands[0], Results[0], P))
    return E;
  return Body(N, *Operands[0], P, Results);
}

llvm::Error maxPool(const Node &N, const Tensor &X, const PoolWindow &P,
                    llvm::MutableArrayRef<Tensor> Results) {
  Tensor &Y = Results[0];
  Tensor *Indices =
      Results.size() > 1 && Results[1].getElementType() != ElementType::Unknown
          ? &Results[1]
          : nullptr;
  if (Indices && Indices->getShape() != Y.getShape())
    return makeNodeError(N, "indices result shape does not match the result");
  int64_t StorageOrder = N.getIntAttr("storage_order", 0);
  if (StorageOrder != 0 && StorageOrder != 1)
    return makeNodeError(N, "storage_order must be 0 or 1");
  unsigned K = P.Kernel.size();
  forEachIndex(Y.getShape(), [&](llvm::ArrayRef<int64_t> YIdx) {
    double Best = -std::numeric_limits<double>::infinity();
    llvm::SmallVector<int64_t, 5> BestIdx;
    forEachWindowPos(P, X, YIdx, [&](llvm::ArrayRef<int64_t> XIdx, bool In) {
      if (!In)
        return;
      double V = X.getDouble(X.getOffset(XIdx));
      if (BestIdx.empty() || V > Best) {
        Best = V;
        BestIdx.assign(XIdx.begin(), XIdx.end());
      }
    });
    Y.setDouble(Y.getOffset(YIdx), Best);
    if (!Indices || BestIdx.empty())
      return;
    // Flattened index into the logical NCHW input; storage_order 1 orders
    // the spatial dims column-major.
    int64_t Flat = YIdx[0] * X.getDim(1) + YIdx[1];
    if (StorageOrder == 0) {
      for (unsigned I = 0; I < K; ++I)
        Flat = Flat * X.getDim(I + 2) + BestIdx[I + 2];
    } else {
      int64_t Spatial = 0, Scale = 1;
      for (unsigned I = 0; I < K; ++I) {
        Spatial += BestIdx[I + 2] * Scale;
        Scale *= X.getDim(I + 2);
      }
      Flat = Flat * Scale + Spatial;
    }
    Indices->setInt(Indices->getOffset(YIdx), Flat);
  });
  return llvm::Error::success();
}

llvm::Error averagePool(const Node &N, const Tensor &X, const PoolWindow &P,
                        llvm::MutableArrayRef<Tensor> Results) {
  Tensor &Y = Results[0];
  bool CountPad = N.getIntAttr("count_include_pad", 0) != 0;
  forEachIndex(Y.getShape(), [&](llvm::ArrayRef<int64_t> YIdx) {
    double Sum = 0;
    int64_t Count = 0;
    forEachWindowPos(P, X, YIdx, [&](llvm::ArrayRef<int64_t> XIdx, bool In) {
      if (In)
        Sum += X.getDouble(X.getOffset(XIdx));
      if (In || CountPad)
        ++Count;
    });
    Y.setDouble(Y.getOffset(YIdx),
                Count ? Sum / double(Count)
                      : std::numeric_limits<double>::quiet_NaN());
  });
  return llvm::Error::success();
}

/// GlobalMaxPool (\p IsMax) or GlobalAveragePool: reduce all spatial dims
/// of each (n, c).
template <bool IsMax>
llvm::Error globalPoolKernel(const Node &N,
                             llvm::ArrayRef<const Tensor *> Operands,
                             llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  Tensor &Y = Results[0];
  if (X.getRank() < 3 || Y.getRank() != X.getRank() ||
      Y.getDim(0) != X.getDim(0) || Y.getDim(1) != X.getDim(1))
    return makeNodeError(N, "result must be the input with spatial dims of 1");
  for (unsigned I = 2; I < Y.getRank(); ++I)
    if (Y.getDim(I) != 1)
      return makeNodeError(N, "result spatial dims must be 1");
  llvm::ArrayRef<int64_t> Spatial = X.getShape().drop_front(2);
  int64_t Count = 1;
  for (int64_t D : Spatial)
    Count *= D;
  llvm::SmallVector<int64_t, 5> XIdx(X.getRank(), 0);
  forEachIndex(Y.getShape(), [&](llvm::ArrayRef<int64_t> YIdx) {
    XIdx[0] = YIdx[0];
    XIdx[1] = YIdx[1];
    double Acc = IsMax ? -std::numeric_limits<double>::infinity() : 0.0;
    forEachIndex(Spatial, [&](llvm::ArrayRef<int64_t> SIdx) {
      std::copy(SIdx.begin(), SIdx.end(), XIdx.begin() + 2);
      double V = X.getDouble(X.getOffset(XIdx));
      Acc = IsMax ? std::max(Acc, V) : Acc + V;
    });
    if (!IsMax)
      Acc = Count ? Acc / double(Count)
                  : std::numeric_limits<double>::quiet_NaN();
    Y.setDouble(Y.getOffset(YIdx), Acc);
  });
  return llvm::Error::success();
}

} // namespace

void runtime::addPoolingKernels(KernelTable &T) {
  T[static_cast<size_t>(OpId::MaxPool)] = poolKernel<maxPool>;
  T[static_cast<size_t>(OpId::AveragePool)] = poolKernel<averagePool>;
  T[static_cast<size_t>(OpId::GlobalAveragePool)] = globalPoolKernel<false>;
  T[static_cast<size_t>(OpId::GlobalMaxPool)] = globalPoolKernel<true>;
}
