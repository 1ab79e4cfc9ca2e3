//===- LayoutAlgebra.cpp - When layouts hold the same bytes ---------------===//
//
// Physical orders without their unit dims, reshapes aligned as segments of
// dims whose products match, and the checks built on both.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/LayoutAlgebra.h"
#include "strider/IR/Graph.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

using namespace strider;
using namespace strider::layout;

int64_t DimBindings::getKnownSize(const Dim &D) const {
  if (D.isStatic())
    return D.getSize();
  if (D.isSymbol()) {
    auto It = Sizes.find(D.getSymbol());
    if (It != Sizes.end())
      return It->second;
  }
  return -1;
}

int64_t DimBindings::getCostSize(const Dim &D) const {
  int64_t S = getKnownSize(D);
  return S < 0 ? 1 : S;
}

namespace {
/// The logical dims of \p Shape in the physical order of \p L, without the
/// dims known to be 1.
llvm::SmallVector<unsigned, 6>
getNonUnitPhysicalOrder(llvm::ArrayRef<Dim> Shape, const Layout &L,
                        const DimBindings &Dims) {
  llvm::SmallVector<unsigned, 6> Order;
  for (unsigned D : L.getPermutation(Shape.size()))
    if (Dims.getKnownSize(Shape[D]) != 1)
      Order.push_back(D);
  return Order;
}

/// One dim of a reshape: its known size, or the symbol naming it.
struct ShapeAtom {
  int64_t Size; ///< -1 if unknown.
  llvm::StringRef Symbol;
};

/// Splits the non-unit dims of two shapes with equal element counts into
/// segments whose products match (the groups a row-major reshape merges or
/// splits). Fills the segment index of every non-unit dim (-1 for unit
/// dims). False if the shapes cannot be aligned with what is known.
bool alignReshapeSegments(llvm::ArrayRef<Dim> A, llvm::ArrayRef<Dim> B,
                          const DimBindings &Dims,
                          llvm::SmallVectorImpl<int> &SegA,
                          llvm::SmallVectorImpl<int> &SegB) {
  auto Atoms = [&](llvm::ArrayRef<Dim> Shape, llvm::SmallVectorImpl<int> &Seg,
                   llvm::SmallVectorImpl<unsigned> &Index) {
    llvm::SmallVector<ShapeAtom, 6> R;
    Seg.assign(Shape.size(), -1);
    for (unsigned I = 0; I < Shape.size(); ++I) {
      int64_t S = Dims.getKnownSize(Shape[I]);
      if (S == 1)
        continue;
      R.push_back({S, Shape[I].isSymbol() ? Shape[I].getSymbol() : ""});
      Index.push_back(I);
    }
    return R;
  };
  llvm::SmallVector<unsigned, 6> IA, IB;
  auto XA = Atoms(A, SegA, IA);
  auto XB = Atoms(B, SegB, IB);
  unsigned I = 0, J = 0;
  int Segment = 0;
  while (I < XA.size() && J < XB.size()) {
    if (XA[I].Size < 0 || XB[J].Size < 0) {
      // An unknown dim only matches the same named dim, alone.
      if (XA[I].Size >= 0 || XB[J].Size >= 0 || XA[I].Symbol.empty() ||
          XA[I].Symbol != XB[J].Symbol)
        return false;
      SegA[IA[I++]] = Segment;
      SegB[IB[J++]] = Segment;
      ++Segment;
      continue;
    }
    int64_t PA = XA[I].Size, PB = XB[J].Size;
    SegA[IA[I++]] = Segment;
    SegB[IB[J++]] = Segment;
    while (PA != PB) {
      if (PA < PB) {
        if (I == XA.size() || XA[I].Size < 0)
          return false;
        PA *= XA[I].Size;
        SegA[IA[I++]] = Segment;
      } else {
        if (J == XB.size() || XB[J].Size < 0)
          return false;
        PB *= XB[J].Size;
        SegB[IB[J++]] = Segment;
      }
    }
    ++Segment;
  }
  return I == XA.size() && J == XB.size();
}

/// The segments of a tensor in physical order, or an empty optional if a
/// segment's dims are not contiguous and in logical order in memory (then
/// the tensor is no row-major view of its segments).
bool getPhysicalSegmentOrder(llvm::ArrayRef<Dim> Shape, const Layout &L,
                             llvm::ArrayRef<int> Seg, const DimBindings &Dims,
                             llvm::SmallVectorImpl<int> &Order) {
  int LastDim = -1;
  for (unsigned D : getNonUnitPhysicalOrder(Shape, L, Dims)) {
    int S = Seg[D];
    if (!Order.empty() && Order.back() == S) {
      if (static_cast<int>(D) < LastDim)
        return false; // Dims of one segment out of logical order.
    } else {
      if (llvm::is_contained(Order, S))
        return false; // Segment split in two places.
      Order.push_back(S);
    }
    LastDim = D;
  }
  return true;
}
} // namespace

bool layout::areLayoutsEquivalent(llvm::ArrayRef<Dim> Shape, const Layout &A,
                                  const Layout &B, const DimBindings &Dims) {
  return getNonUnitPhysicalOrder(Shape, A, Dims) ==
         getNonUnitPhysicalOrder(Shape, B, Dims);
}

bool layout::isReshapeBitcast(const TensorType &From, const TensorType &To,
                              const DimBindings &Dims) {
  if (!From.hasRank() || !To.hasRank())
    return false;
  llvm::SmallVector<int, 6> SegA, SegB, OrderA, OrderB;
  if (!alignReshapeSegments(From.getShape(), To.getShape(), Dims, SegA, SegB))
    return false;
  return getPhysicalSegmentOrder(From.getShape(), From.getLayout(), SegA, Dims,
                                 OrderA) &&
         getPhysicalSegmentOrder(To.getShape(), To.getLayout(), SegB, Dims,
                                 OrderB) &&
         OrderA == OrderB;
}

llvm::Optional<Layout>
layout::getReshapeBitcastLayout(const TensorType &From, llvm::ArrayRef<Dim> To,
                                const DimBindings &Dims) {
  if (!From.hasRank())
    return llvm::None;
  llvm::SmallVector<int, 6> SegA, SegB, Order;
  if (!alignReshapeSegments(From.getShape(), To, Dims, SegA, SegB) ||
      !getPhysicalSegmentOrder(From.getShape(), From.getLayout(), SegA, Dims,
                               Order))
    return llvm::None;
  // The result's dims segment by segment in the operand's physical order,
  // each segment's dims in logical order; a unit dim goes before the first
  // placed dim that follows it logically (its position changes no byte).
  llvm::SmallVector<unsigned, 6> Perm;
  for (int S : Order)
    for (unsigned D = 0; D < To.size(); ++D)
      if (SegB[D] == S)
        Perm.push_back(D);
  for (unsigned D = 0; D < To.size(); ++D) {
    if (SegB[D] >= 0)
      continue;
    auto *Pos = llvm::find_if(Perm, [&](unsigned P) { return P > D; });
    Perm.insert(Pos, D);
  }
  if (Perm.size() != To.size())
    return llvm::None;
  return Layout(Perm);
}

std::vector<int64_t> layout::getTransposePerm(const Node &N) {
  std::vector<int64_t> Perm = N.getIntsAttr("perm");
  if (Perm.empty() && N.hasOperand(0) && N.getOperand(0)->getType().hasRank())
    for (unsigned I = N.getOperand(0)->getType().getRank(); I > 0; --I)
      Perm.push_back(I - 1);
  return Perm;
}

Layout layout::getTransposeViewLayout(const TensorType &From,
                                      llvm::ArrayRef<int64_t> Perm) {
  // Result dim j is operand dim Perm[j]: store the result dims in the
  // order their operand dims are stored.
  unsigned Rank = Perm.size();
  llvm::SmallVector<unsigned, 6> Inverse(Rank);
  for (unsigned J = 0; J < Rank; ++J)
    Inverse[Perm[J]] = J;
  llvm::SmallVector<unsigned, 6> Order;
  for (unsigned D : From.getLayout().getPermutation(Rank))
    Order.push_back(Inverse[D]);
  return Layout(Order);
}

bool layout::isTransposeView(const TensorType &From,
                             llvm::ArrayRef<int64_t> Perm, const TensorType &To,
                             const DimBindings &Dims) {
  if (!From.hasRank() || !To.hasRank() || Perm.size() != From.getRank() ||
      To.getRank() != From.getRank())
    return false;
  // Result dim j is operand dim Perm[j]; compare the two physical orders in
  // operand dims.
  llvm::SmallVector<unsigned, 6> ToInOperandDims;
  for (unsigned J :
       getNonUnitPhysicalOrder(To.getShape(), To.getLayout(), Dims))
    ToInOperandDims.push_back(static_cast<unsigned>(Perm[J]));
  return ToInOperandDims ==
         getNonUnitPhysicalOrder(From.getShape(), From.getLayout(), Dims);
}
