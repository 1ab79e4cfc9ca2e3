//===- TensorGeometry.cpp - Strides and physical orders -------------------===//
//
// See TensorGeometry.h.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/TensorGeometry.h"

#include "strider/IR/LayoutAlgebra.h"

#include <algorithm>

using namespace strider;
using namespace strider::codegen;

/// Whether strides \p Str are those of \p Shape stored channels-last
/// (\p Last) or channels-first; dims of size 1 are skipped when
/// \p SkipUnitDims (their stride never multiplies a non-zero index).
static bool hasChannelOrder(llvm::ArrayRef<int64_t> Shape,
                            llvm::ArrayRef<int64_t> Str, bool Last,
                            bool SkipUnitDims) {
  const int64_t C = Shape[1];
  int64_t Pixels = 1;
  for (unsigned I = 2; I < Shape.size(); ++I)
    Pixels *= Shape[I];
  auto Matches = [&](unsigned I, int64_t Stride) {
    return Str[I] == Stride || (SkipUnitDims && Shape[I] == 1);
  };
  bool Ok = Matches(0, C * Pixels) && Matches(1, Last ? 1 : Pixels);
  int64_t Inner = 1;
  for (unsigned I = unsigned(Shape.size()); I-- > 2;) {
    Ok &= Matches(I, Last ? Inner * C : Inner);
    Inner *= Shape[I];
  }
  return Ok;
}

ChannelOrder codegen::getChannelOrder(const TensorType &T) {
  auto Shape = T.getStaticShape();
  if (Shape.size() < 2)
    return ChannelOrder::Other;
  auto Str = getStrides(T);
  // The exact strides first, so that a tensor whose unit dims make both
  // orders the same bytes keeps the one its layout names; then the same
  // bytes under another dim order (a transposed view with N = 1).
  for (bool SkipUnitDims : {false, true}) {
    if (hasChannelOrder(Shape, Str, /*Last=*/true, SkipUnitDims))
      return ChannelOrder::Last;
    if (hasChannelOrder(Shape, Str, /*Last=*/false, SkipUnitDims))
      return ChannelOrder::First;
  }
  return ChannelOrder::Other;
}

bool codegen::haveSameElementOrder(const TensorType &A, const TensorType &B) {
  return A.getShape() == B.getShape() &&
         layout::areLayoutsEquivalent(A.getShape(), A.getLayout(),
                                      B.getLayout(), layout::DimBindings());
}

llvm::SmallVector<int64_t, 6> codegen::getStrides(const TensorType &T) {
  unsigned Rank = T.getRank();
  llvm::SmallVector<int64_t, 6> Shape = T.getStaticShape();
  llvm::SmallVector<unsigned, 6> Perm = T.getLayout().getPermutation(Rank);
  llvm::SmallVector<int64_t, 6> Strides(Rank, 0);
  int64_t Stride = 1;
  for (unsigned P = Rank; P-- > 0;) {
    Strides[Perm[P]] = Stride;
    Stride *= Shape[Perm[P]];
  }
  return Strides;
}

void codegen::getPhysicalShape(const TensorType &T, int64_t *Out) {
  unsigned R = T.getRank();
  auto Shape = T.getStaticShape();
  auto Perm = T.getLayout().getPermutation(R);
  for (unsigned P = 0; P < R; ++P)
    Out[P] = Shape[Perm[P]];
}

void codegen::getBroadcastStrides(const TensorType &Operand,
                              const TensorType &Result, int64_t *Out) {
  unsigned R = Result.getRank();
  auto S = Operand.getStaticShape();
  auto Str = getStrides(Operand);
  unsigned OR = S.size();
  llvm::SmallVector<int64_t, 6> Logical(R, 0);
  for (unsigned I = 0; I < OR; ++I)
    Logical[R - OR + I] = S[I] == 1 ? 0 : Str[I];
  auto Perm = Result.getLayout().getPermutation(R);
  for (unsigned P = 0; P < R; ++P)
    Out[P] = Logical[Perm[P]];
}

bool codegen::splitAround(const TensorType &T, const std::vector<bool> &Middle,
                        int64_t &Outer, int64_t &Len, int64_t &Inner) {
  auto Shape = T.getStaticShape();
  auto Perm = T.getLayout().getPermutation(T.getRank());
  Outer = Len = Inner = 1;
  int Phase = 0; // 0: before the middle run, 1: in it, 2: after it.
  for (unsigned P = 0; P < Perm.size(); ++P) {
    const unsigned D = Perm[P];
    if (Shape[D] == 1)
      continue;
    if (Middle[D]) {
      if (Phase == 2)
        return false;
      Phase = 1;
      Len *= Shape[D];
    } else {
      if (Phase == 1)
        Phase = 2;
      (Phase == 0 ? Outer : Inner) *= Shape[D];
    }
  }
  return true;
}


bool codegen::splitReduction(const TensorType &XT, const TensorType &YT,
                               const std::vector<bool> &Reduced, bool Keep,
                               int64_t &Outer, int64_t &Len, int64_t &Inner) {
  if (!splitAround(XT, Reduced, Outer, Len, Inner))
    return false;
  const int64_t R = XT.getRank();
  auto XShape = XT.getStaticShape(), YShape = YT.getStaticShape();
  std::vector<int64_t> YToX;
  for (int64_t D = 0; D < R; ++D)
    if (!Reduced[size_t(D)] || Keep)
      YToX.push_back(D);
  if (YToX.size() != YShape.size())
    return false;
  std::vector<int64_t> SeqX, SeqY;
  for (unsigned D : XT.getLayout().getPermutation(unsigned(R)))
    if (!Reduced[D] && XShape[D] != 1)
      SeqX.push_back(D);
  for (unsigned D : YT.getLayout().getPermutation(YT.getRank()))
    if (YShape[D] != 1)
      SeqY.push_back(YToX[D]);
  return SeqX == SeqY;
}

bool codegen::getReshapeCopy(const TensorType &X, const TensorType &Y,
                             std::vector<int64_t> &Shape,
                             std::vector<int64_t> &XStrides,
                             std::vector<int64_t> &YStrides) {
  if (X.getNumElements().getValueOr(0) == 0)
    return false;
  auto XShape = X.getStaticShape(), YShape = Y.getStaticShape();
  auto XS = getStrides(X), YS = getStrides(Y);
  Shape.clear();
  XStrides.clear();
  YStrides.clear();
  // Walk both shapes from the innermost logical dim out, cutting each into
  // the pieces that the other's dims split it into.
  int I = int(XShape.size()) - 1, J = int(YShape.size()) - 1;
  int64_t DoneX = 1, DoneY = 1; // Extent of dims I and J already covered.
  while (true) {
    while (I >= 0 && XShape[size_t(I)] == DoneX) {
      --I;
      DoneX = 1;
    }
    while (J >= 0 && YShape[size_t(J)] == DoneY) {
      --J;
      DoneY = 1;
    }
    if (I < 0 || J < 0)
      break;
    const int64_t LeftX = XShape[size_t(I)] / DoneX;
    const int64_t LeftY = YShape[size_t(J)] / DoneY;
    const int64_t T = std::min(LeftX, LeftY);
    if (std::max(LeftX, LeftY) % T != 0)
      return false;
    Shape.insert(Shape.begin(), T);
    XStrides.insert(XStrides.begin(), XS[size_t(I)] * DoneX);
    YStrides.insert(YStrides.begin(), YS[size_t(J)] * DoneY);
    DoneX *= T;
    DoneY *= T;
  }
  // Only unit dims may be left, and they were skipped.
  return I < 0 && J < 0;
}
