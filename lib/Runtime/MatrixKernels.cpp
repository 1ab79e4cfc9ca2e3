//===- MatrixKernels.cpp - Reference Gemm, MatMul and Einsum --------------===//
//
// Matrix products over logical indices, accumulating in double (Einsum of
// integers in wrapping 64-bit integers); operands and results may be
// stored in any layout.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Einsum.h"
#include "strider/IR/Graph.h"

using namespace strider;
using namespace strider::runtime;

namespace {

llvm::Error gemmKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                       llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &A = *Operands[0];
  const Tensor &B = *Operands[1];
  const Tensor *C = Operands.size() > 2 ? Operands[2] : nullptr;
  Tensor &Y = Results[0];
  if (A.getRank() != 2 || B.getRank() != 2 || Y.getRank() != 2)
    return makeNodeError(N, "operands and result must have rank 2");
  bool TransA = N.getIntAttr("transA", 0) != 0;
  bool TransB = N.getIntAttr("transB", 0) != 0;
  double Alpha = N.getFloatAttr("alpha", 1.0f);
  double Beta = N.getFloatAttr("beta", 1.0f);
  int64_t M = A.getDim(TransA ? 1 : 0), K = A.getDim(TransA ? 0 : 1);
  int64_t KB = B.getDim(TransB ? 1 : 0), NCols = B.getDim(TransB ? 0 : 1);
  if (K != KB)
    return makeNodeError(N, "inner dims " + llvm::Twine(K) + " and " +
                                llvm::Twine(KB) + " do not match");
  if (Y.getDim(0) != M || Y.getDim(1) != NCols)
    return makeNodeError(N, "result shape does not match [" + llvm::Twine(M) +
                                ", " + llvm::Twine(NCols) + "]");
  // C broadcasts unidirectionally to [M, N]: align its dims to the right.
  llvm::SmallVector<int64_t, 2> CShape;
  if (C) {
    if (C->getRank() > 2)
      return makeNodeError(N, "C has rank " + llvm::Twine(C->getRank()) +
                                  ", expected at most 2");
    CShape.assign(C->getShape().begin(), C->getShape().end());
    CShape.insert(CShape.begin(), 2 - CShape.size(), 1);
    if ((CShape[0] != 1 && CShape[0] != M) ||
        (CShape[1] != 1 && CShape[1] != NCols))
      return makeNodeError(N, "C cannot be broadcast to the result shape");
  }
  int64_t AS0 = A.getStrides()[0], AS1 = A.getStrides()[1];
  int64_t BS0 = B.getStrides()[0], BS1 = B.getStrides()[1];
  for (int64_t I = 0; I < M; ++I) {
    for (int64_t J = 0; J < NCols; ++J) {
      double Acc = 0;
      for (int64_t P = 0; P < K; ++P) {
        int64_t AOff = TransA ? P * AS0 + I * AS1 : I * AS0 + P * AS1;
        int64_t BOff = TransB ? J * BS0 + P * BS1 : P * BS0 + J * BS1;
        Acc += A.getDouble(AOff) * B.getDouble(BOff);
      }
      double V = Alpha * Acc;
      if (C) {
        int64_t CI[2] = {CShape[0] == 1 ? 0 : I, CShape[1] == 1 ? 0 : J};
        V += Beta * C->getDouble(
                        C->getOffset(llvm::makeArrayRef(CI).take_back(
                            C->getRank())));
      }
      Y.setDouble(Y.getOffset({I, J}), V);
    }
  }
  return llvm::Error::success();
}

llvm::Error matMulKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                         llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &A = *Operands[0];
  const Tensor &B = *Operands[1];
  Tensor &Y = Results[0];
  if (A.getRank() == 0 || B.getRank() == 0)
    return makeNodeError(N, "operands must have rank at least 1");
  // Promote 1-D operands to matrices ([K] -> [1, K] for A, [K, 1] for B)
  // and remember which dims to drop from the result.
  llvm::SmallVector<int64_t, 6> AShape(A.getShape().begin(),
                                       A.getShape().end());
  llvm::SmallVector<int64_t, 6> BShape(B.getShape().begin(),
                                       B.getShape().end());
  bool AVec = AShape.size() == 1, BVec = BShape.size() == 1;
  if (AVec)
    AShape.insert(AShape.begin(), 1);
  if (BVec)
    BShape.push_back(1);
  int64_t M = AShape[AShape.size() - 2], K = AShape.back();
  int64_t KB = BShape[BShape.size() - 2], NCols = BShape.back();
  if (K != KB)
    return makeNodeError(N, "inner dims " + llvm::Twine(K) + " and " +
                                llvm::Twine(KB) + " do not match");
  unsigned ABatch = AShape.size() - 2, BBatch = BShape.size() - 2;
  unsigned Batch = std::max(ABatch, BBatch);
  llvm::SmallVector<int64_t, 6> BatchShape(Batch);
  for (unsigned I = 0; I < Batch; ++I) {
    int64_t DA = I + ABatch >= Batch ? AShape[I + ABatch - Batch] : 1;
    int64_t DB = I + BBatch >= Batch ? BShape[I + BBatch - Batch] : 1;
    if (DA != DB && DA != 1 && DB != 1)
      return makeNodeError(N, "batch dims " + llvm::Twine(DA) + " and " +
                                  llvm::Twine(DB) + " do not broadcast");
    BatchShape[I] = DA == 1 ? DB : DA;
  }
  llvm::SmallVector<int64_t, 6> Expected(BatchShape);
  if (!AVec)
    Expected.push_back(M);
  if (!BVec)
    Expected.push_back(NCols);
  if (Y.getShape() != llvm::ArrayRef<int64_t>(Expected))
    return makeNodeError(N, "result shape does not match the matmul shape");

  llvm::SmallVector<int64_t, 6> AIdx(A.getRank()), BIdx(B.getRank()), YIdx;
  forEachIndex(BatchShape, [&](llvm::ArrayRef<int64_t> Bt) {
    // Broadcast batch index into each operand's own batch dims.
    for (unsigned I = 0; I < ABatch; ++I)
      AIdx[I] = AShape[I] == 1 ? 0 : Bt[I + Batch - ABatch];
    for (unsigned I = 0; I < BBatch; ++I)
      BIdx[I] = BShape[I] == 1 ? 0 : Bt[I + Batch - BBatch];
    for (int64_t I = 0; I < M; ++I) {
      for (int64_t J = 0; J < NCols; ++J) {
        double Acc = 0;
        for (int64_t P = 0; P < K; ++P) {
          if (AVec) {
            AIdx[0] = P;
          } else {
            AIdx[ABatch] = I;
            AIdx[ABatch + 1] = P;
          }
          if (BVec) {
            BIdx[0] = P;
          } else {
            BIdx[BBatch] = P;
            BIdx[BBatch + 1] = J;
          }
          Acc += A.getDouble(A.getOffset(AIdx)) *
                 B.getDouble(B.getOffset(BIdx));
        }
        YIdx.assign(Bt.begin(), Bt.end());
        if (!AVec)
          YIdx.push_back(I);
        if (!BVec)
          YIdx.push_back(J);
        Y.setDouble(Y.getOffset(YIdx), Acc);
      }
    }
  });
  return llvm::Error::success();
}

/// Einsum as its definition reads: every result element is the sum, over
/// all values of the labels the result does not have, of the product of
/// the operand elements those labels select. A label repeated in one
/// operand walks its diagonal; a dim of size 1 under a larger label is
/// read repeatedly (broadcast).
llvm::Error einsumKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                         llvm::MutableArrayRef<Tensor> Results) {
  auto Eq = parseEinsum(N.getStringAttr("equation", ""));
  if (!Eq)
    return makeNodeError(N, llvm::toString(Eq.takeError()));
  llvm::SmallVector<unsigned, 2> Ranks;
  llvm::SmallVector<llvm::ArrayRef<int64_t>, 2> Shapes;
  for (const Tensor *T : Operands) {
    if (!T)
      return makeNodeError(N, "missing operand");
    Ranks.push_back(T->getRank());
    Shapes.push_back(T->getShape());
  }
  auto B = bindEinsum(*Eq, Ranks);
  if (!B)
    return makeNodeError(N, llvm::toString(B.takeError()));
  llvm::SmallVector<int64_t, 8> Sizes;
  if (llvm::Error E = resolveEinsumSizes(*B, Shapes, Sizes))
    return makeNodeError(N, llvm::toString(std::move(E)));
  Tensor &Y = Results[0];
  llvm::SmallVector<int64_t, 6> Expected;
  for (unsigned L : B->Result)
    Expected.push_back(Sizes[L]);
  if (Y.getShape() != llvm::ArrayRef<int64_t>(Expected))
    return makeNodeError(N, "result shape does not match the equation");
  // Loop order: the result's labels, then the summed ones. Each operand
  // advances by the sum of the strides of its dims with a label.
  llvm::SmallVector<unsigned, 8> Order(B->Result.begin(), B->Result.end());
  for (unsigned L = 0; L < B->NumLabels; ++L)
    if (!B->isInResult(L))
      Order.push_back(L);
  const unsigned NumOut = B->Result.size();
  llvm::SmallVector<int64_t, 8> SumShape;
  for (unsigned I = NumOut; I < Order.size(); ++I)
    SumShape.push_back(Sizes[Order[I]]);
  // LabelStride[Op][I]: how far operand Op moves when label Order[I] does.
  llvm::SmallVector<llvm::SmallVector<int64_t, 8>, 2> LabelStride;
  for (unsigned Op = 0; Op < Operands.size(); ++Op) {
    llvm::SmallVector<int64_t, 8> ByLabel(B->NumLabels, 0);
    for (unsigned D = 0; D < Ranks[Op]; ++D) {
      const unsigned L = B->Operands[Op][D];
      if (Shapes[Op][D] == Sizes[L])
        ByLabel[L] += Operands[Op]->getStrides()[D];
    }
    LabelStride.emplace_back();
    for (unsigned L : Order)
      LabelStride.back().push_back(ByLabel[L]);
  }
  const bool Integer = isInteger(Y.getElementType());
  llvm::SmallVector<int64_t, 2> Base(Operands.size());
  forEachIndex(Y.getShape(), [&](llvm::ArrayRef<int64_t> Out) {
    for (unsigned Op = 0; Op < Operands.size(); ++Op) {
      Base[Op] = 0;
      for (unsigned I = 0; I < NumOut; ++I)
        Base[Op] += Out[I] * LabelStride[Op][I];
    }
    double Sum = 0;
    uint64_t IntSum = 0;
    forEachIndex(SumShape, [&](llvm::ArrayRef<int64_t> Summed) {
      double Product = 1;
      uint64_t IntProduct = 1;
      for (unsigned Op = 0; Op < Operands.size(); ++Op) {
        int64_t Off = Base[Op];
        for (unsigned I = 0; I < Summed.size(); ++I)
          Off += Summed[I] * LabelStride[Op][NumOut + I];
        if (Integer)
          IntProduct *= uint64_t(Operands[Op]->getInt(Off));
        else
          Product *= Operands[Op]->getDouble(Off);
      }
      Sum += Product;
      IntSum += IntProduct;
    });
    if (Integer)
      Y.setInt(Y.getOffset(Out), int64_t(IntSum));
    else
      Y.setDouble(Y.getOffset(Out), Sum);
  });
  return llvm::Error::success();
}

/// Trilu: each matrix (the last two dims) with the elements below (upper)
/// or above (lower) diagonal k set to zero.
llvm::Error triluKernel(const Node &N, llvm::ArrayRef<const Tensor *> Operands,
                        llvm::MutableArrayRef<Tensor> Results) {
  const Tensor &X = *Operands[0];
  Tensor &Y = Results[0];
  const int64_t K =
      Operands.size() > 1 && Operands[1] && Operands[1]->getNumElements() > 0
          ? Operands[1]->getInt(0)
          : 0;
  const bool Upper = N.getIntAttr("upper", 1) != 0;
  const unsigned R = X.getRank();
  if (R < 2 || Y.getShape() != X.getShape())
    return makeNodeError(N, "result must have the input's shape (rank >= 2)");
  forEachIndex(X.getShape(), [&](llvm::ArrayRef<int64_t> Idx) {
    const int64_t Diagonal = Idx[R - 1] - Idx[R - 2];
    const bool Keep = Upper ? Diagonal >= K : Diagonal <= K;
    const int64_t To = Y.getOffset(Idx);
    if (Keep)
      Y.copyElement(To, X, X.getOffset(Idx));
    else
      Y.setInt(To, 0);
  });
  return llvm::Error::success();
}

} // namespace

void runtime::addMatrixKernels(KernelTable &T) {
  T[static_cast<size_t>(OpId::Trilu)] = triluKernel;
  T[static_cast<size_t>(OpId::Gemm)] = gemmKernel;
  T[static_cast<size_t>(OpId::MatMul)] = matMulKernel;
  T[static_cast<size_t>(OpId::Einsum)] = einsumKernel;
}
