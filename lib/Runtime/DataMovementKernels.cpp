//===- DataMovementKernels.cpp - Copying and indexing reference kernels ---===//
//
// Ops that move elements without arithmetic: Concat, Split, Slice, Pad,
// Transpose, the reshape family, Expand, Gather, GatherElements,
// ScatterElements (whose reductions are the only arithmetic here), Shape,
// the constants and DepthToSpace/SpaceToDepth. Axes are logical (negative ones
// count from the end); every element goes through the operand's and the
// result's strides, so any layout works. Result shapes come from the result
// types.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

using namespace strider;
using namespace strider::runtime;

namespace {

using Operands = llvm::ArrayRef<const Tensor *>;
using Results = llvm::MutableArrayRef<Tensor>;
using Index = llvm::SmallVector<int64_t, 6>;

/// All elements of \p T as int64, in logical row-major order.
std::vector<int64_t> readInts(const Tensor &T) {
  std::vector<int64_t> R;
  R.reserve(T.getNumElements());
  forEachIndex(T.getShape(), [&](llvm::ArrayRef<int64_t> I) {
    R.push_back(T.getInt(T.getOffset(I)));
  });
  return R;
}

/// Error unless the result has shape \p Expected (result shapes come from
/// shape inference, which cannot see non-constant bounds and sizes).
llvm::Error checkResultShape(const Node &N, const Tensor &Out,
                             llvm::ArrayRef<int64_t> Expected) {
  if (Out.getShape() == Expected)
    return llvm::Error::success();
  return makeNodeError(
      N, "result type " + Out.getType().str() +
             " does not match the computed shape " +
             TensorType::get(Out.getElementType(), Expected).str());
}

/// Whether \p T's elements lie in logical row-major order (its strides
/// those of a row-major tensor, whatever size-1 dims have).
bool isRowMajor(const Tensor &T) {
  int64_t Expect = 1;
  for (int D = int(T.getRank()) - 1; D >= 0; --D) {
    if (T.getDim(D) != 1 && T.getStrides()[D] != Expect)
      return false;
    Expect *= T.getDim(D);
  }
  return true;
}

/// Out[O] = In[InBase + sum O[D] * InStrides[D]] for every index O of
/// Out, walking both offsets incrementally (no index-to-offset product per
/// element), elements of \p Size bytes.
template <size_t Size>
void walkCopy(const uint8_t *In, llvm::ArrayRef<int64_t> InStrides,
              int64_t InBase, uint8_t *Out, llvm::ArrayRef<int64_t> Shape,
              llvm::ArrayRef<int64_t> OutStrides) {
  const unsigned Rank = Shape.size();
  for (int64_t D : Shape)
    if (D == 0)
      return;
  Index I(Rank, 0);
  int64_t InOff = InBase, OutOff = 0;
  const int64_t Inner = Rank ? Shape[Rank - 1] : 1;
  const int64_t IS = Rank ? InStrides[Rank - 1] : 0,
                OS = Rank ? OutStrides[Rank - 1] : 0;
  while (true) {
    for (int64_t K = 0; K < Inner; ++K)
      std::memcpy(Out + (OutOff + K * OS) * int64_t(Size),
                  In + (InOff + K * IS) * int64_t(Size), Size);
    // The next row: an odometer over the dims but the last.
    int D = int(Rank) - 2;
    for (; D >= 0; --D) {
      InOff += InStrides[D];
      OutOff += OutStrides[D];
      if (++I[D] < Shape[D])
        break;
      InOff -= InStrides[D] * Shape[D];
      OutOff -= OutStrides[D] * Shape[D];
      I[D] = 0;
    }
    if (D < 0)
      return;
  }
}

/// walkCopy of \p In into every element of \p Out (equal element types).
void copyWalked(const Tensor &In, llvm::ArrayRef<int64_t> InStrides,
                int64_t InBase, Tensor &Out) {
  assert(In.getElementType() == Out.getElementType() && "types differ");
  const uint8_t *Src = In.getBytes().data();
  uint8_t *Dst = Out.getMutableBytes().data();
  switch (getElementByteSize(Out.getElementType())) {
  case 1:
    return walkCopy<1>(Src, InStrides, InBase, Dst, Out.getShape(),
                       Out.getStrides());
  case 2:
    return walkCopy<2>(Src, InStrides, InBase, Dst, Out.getShape(),
                       Out.getStrides());
  case 4:
    return walkCopy<4>(Src, InStrides, InBase, Dst, Out.getShape(),
                       Out.getStrides());
  case 8:
    return walkCopy<8>(Src, InStrides, InBase, Dst, Out.getShape(),
                       Out.getStrides());
  default:
    forEachIndex(Out.getShape(), [&](llvm::ArrayRef<int64_t> O) {
      int64_t Off = InBase;
      for (unsigned D = 0; D < O.size(); ++D)
        Off += O[D] * InStrides[D];
      Out.copyElement(Out.getOffset(O), In, Off);
    });
  }
}

/// Copies \p In to \p Out (equal element counts) in logical row-major
/// order: the semantics of Reshape, Flatten, Squeeze and Unsqueeze.
void copyRowMajor(const Tensor &In, Tensor &Out) {
  assert(In.getNumElements() == Out.getNumElements() && "size mismatch");
  if (In.getElementType() == Out.getElementType() && isRowMajor(In) &&
      isRowMajor(Out)) {
    llvm::ArrayRef<uint8_t> B = In.getBytes();
    if (!B.empty())
      std::memcpy(Out.getMutableBytes().data(), B.data(), B.size());
    return;
  }
  llvm::ArrayRef<int64_t> InShape = In.getShape();
  Index InIdx(InShape.size(), 0);
  forEachIndex(Out.getShape(), [&](llvm::ArrayRef<int64_t> OutIdx) {
    Out.copyElement(Out.getOffset(OutIdx), In, In.getOffset(InIdx));
    for (int D = int(InShape.size()) - 1; D >= 0; --D) {
      if (++InIdx[D] < InShape[D])
        break;
      InIdx[D] = 0;
    }
  });
}

llvm::Error reshapeKernel(const Node &N, Operands Ins, Results Outs) {
  if (Ins[0]->getNumElements() != Outs[0].getNumElements())
    return makeNodeError(N, "operand type " + Ins[0]->getType().str() +
                                " and result type " + Outs[0].getType().str() +
                                " differ in element count");
  copyRowMajor(*Ins[0], Outs[0]);
  return llvm::Error::success();
}

llvm::Error transposeKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &In = *Ins[0];
  Tensor &Out = Outs[0];
  int64_t Rank = In.getRank();
  std::vector<int64_t> Perm = N.getIntsAttr("perm");
  if (Perm.empty())
    for (int64_t I = Rank - 1; I >= 0; --I)
      Perm.push_back(I);
  if (int64_t(Perm.size()) != Rank || !Layout::isPermutation(Perm))
    return makeNodeError(N, "'perm' is not a permutation of the " +
                                llvm::Twine(Rank) + " operand dims");
  Index Expected;
  for (int64_t P : Perm)
    Expected.push_back(In.getDim(P));
  if (llvm::Error E = checkResultShape(N, Out, Expected))
    return E;
  // Output dim I walks input dim Perm[I].
  Index InStrides(Rank);
  for (int64_t I = 0; I != Rank; ++I)
    InStrides[I] = In.getStrides()[Perm[I]];
  copyWalked(In, InStrides, 0, Out);
  return llvm::Error::success();
}

llvm::Error expandKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &In = *Ins[0];
  Tensor &Out = Outs[0];
  bool OK = In.getRank() <= Out.getRank();
  for (unsigned I = 0, R = In.getRank(); OK && I != R; ++I) {
    int64_t O = Out.getDim(Out.getRank() - R + I);
    OK = In.getDim(I) == O || In.getDim(I) == 1;
  }
  if (!OK)
    return makeNodeError(N, "operand type " + In.getType().str() +
                                " does not broadcast to the result type " +
                                Out.getType().str());
  llvm::SmallVector<int64_t, 6> Strides =
      getBroadcastStrides(In, Out.getShape());
  copyWalked(In, Strides, 0, Out);
  return llvm::Error::success();
}

/// Tile: result index i reads input index i mod the input's dims.
llvm::Error tileKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &In = *Ins[0];
  Tensor &Out = Outs[0];
  bool OK = In.getRank() == Out.getRank() &&
            Ins[1]->getNumElements() == int64_t(In.getRank());
  for (unsigned I = 0; OK && I < In.getRank(); ++I)
    OK = Out.getDim(I) == In.getDim(I) * Ins[1]->getInt(I);
  if (!OK)
    return makeNodeError(N, "result type " + Out.getType().str() +
                                " is not the input " + In.getType().str() +
                                " tiled by the repeats");
  Index InIdx(In.getRank());
  forEachIndex(Out.getShape(), [&](llvm::ArrayRef<int64_t> O) {
    for (unsigned D = 0; D < O.size(); ++D)
      InIdx[D] = O[D] % In.getDim(D);
    Out.copyElement(Out.getOffset(O), In, In.getOffset(InIdx));
  });
  return llvm::Error::success();
}

llvm::Error concatKernel(const Node &N, Operands Ins, Results Outs) {
  Tensor &Out = Outs[0];
  int64_t Axis = N.getIntAttr("axis", 0);
  if (llvm::Error E = normalizeAxis(N, Axis, Out.getRank()))
    return E;
  int64_t Base = 0;
  Index OutIdx;
  for (const Tensor *In : Ins) {
    if (!In)
      continue;
    Index Expected(Out.getShape().begin(), Out.getShape().end());
    Expected[Axis] = In->getDim(Axis);
    if (In->getShape() != llvm::makeArrayRef(Expected))
      return makeNodeError(N, "operand type " + In->getType().str() +
                                  " does not fit the result type " +
                                  Out.getType().str());
    if (Base + In->getDim(Axis) > Out.getDim(Axis))
      return makeNodeError(N, "operands cover more than the result's " +
                                  llvm::Twine(Out.getDim(Axis)) +
                                  " elements along the axis");
    if (In->getElementType() == Out.getElementType() && isRowMajor(*In) &&
        isRowMajor(Out)) {
      // Row-major both: one block of the operand per outer index.
      int64_t Outer = 1, Inner = 1;
      for (int64_t D = 0; D < Axis; ++D)
        Outer *= Out.getDim(unsigned(D));
      for (unsigned D = unsigned(Axis) + 1; D < Out.getRank(); ++D)
        Inner *= Out.getDim(D);
      const size_t Size = getElementByteSize(Out.getElementType());
      const int64_t InBlock = In->getDim(unsigned(Axis)) * Inner,
                    OutBlock = Out.getDim(unsigned(Axis)) * Inner;
      const uint8_t *Src = In->getBytes().data();
      uint8_t *Dst = Out.getMutableBytes().data();
      if (InBlock)
        for (int64_t O = 0; O < Outer; ++O)
          std::memcpy(Dst + size_t(O * OutBlock + Base * Inner) * Size,
                      Src + size_t(O * InBlock) * Size, size_t(InBlock) * Size);
    } else {
      forEachIndex(In->getShape(), [&](llvm::ArrayRef<int64_t> I) {
        OutIdx.assign(I.begin(), I.end());
        OutIdx[Axis] += Base;
        Out.copyElement(Out.getOffset(OutIdx), *In, In->getOffset(I));
      });
    }
    Base += In->getDim(Axis);
  }
  if (Base != Out.getDim(Axis))
    return makeNodeError(N, "operands cover " + llvm::Twine(Base) +
                                " elements along the axis, result has " +
                                llvm::Twine(Out.getDim(Axis)));
  return llvm::Error::success();
}

llvm::Error splitKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &In = *Ins[0];
  int64_t Axis = N.getIntAttr("axis", 0);
  if (llvm::Error E = normalizeAxis(N, Axis, In.getRank()))
    return E;
  // The result types hold the split sizes (from operand 1 or num_outputs).
  int64_t Base = 0;
  Index InIdx;
  for (Tensor &Out : Outs) {
    if (Out.getElementType() == ElementType::Unknown)
      return makeNodeError(N, "missing results are not supported");
    Index Expected(In.getShape().begin(), In.getShape().end());
    Expected[Axis] = Out.getDim(Axis);
    if (llvm::Error E = checkResultShape(N, Out, Expected))
      return E;
    if (Base + Out.getDim(Axis) > In.getDim(Axis))
      return makeNodeError(N, "results cover more than the operand's " +
                                  llvm::Twine(In.getDim(Axis)) +
                                  " elements along the axis");
    forEachIndex(Out.getShape(), [&](llvm::ArrayRef<int64_t> O) {
      InIdx.assign(O.begin(), O.end());
      InIdx[Axis] += Base;
      Out.copyElement(Out.getOffset(O), In, In.getOffset(InIdx));
    });
    Base += Out.getDim(Axis);
  }
  if (Base != In.getDim(Axis))
    return makeNodeError(N, "results cover " + llvm::Twine(Base) +
                                " elements along the axis, operand has " +
                                llvm::Twine(In.getDim(Axis)));
  return llvm::Error::success();
}

llvm::Error sliceKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &In = *Ins[0];
  Tensor &Out = Outs[0];
  int64_t Rank = In.getRank();
  std::vector<int64_t> Starts = readInts(*Ins[1]);
  std::vector<int64_t> Ends = readInts(*Ins[2]);
  std::vector<int64_t> Axes;
  if (Ins.size() > 3 && Ins[3])
    Axes = readInts(*Ins[3]);
  else
    for (int64_t I = 0, E = Starts.size(); I != E; ++I)
      Axes.push_back(I);
  std::vector<int64_t> Steps(Starts.size(), 1);
  if (Ins.size() > 4 && Ins[4])
    Steps = readInts(*Ins[4]);
  if (Ends.size() != Starts.size() || Axes.size() != Starts.size() ||
      Steps.size() != Starts.size())
    return makeNodeError(N, "starts, ends, axes and steps differ in length");

  Index First(Rank, 0), Step(Rank, 1);
  Index Expected(In.getShape().begin(), In.getShape().end());
  for (size_t K = 0, E = Starts.size(); K != E; ++K) {
    int64_t Axis = Axes[K];
    if (llvm::Error Err = normalizeAxis(N, Axis, Rank))
      return Err;
    int64_t Dim = In.getDim(Axis), S = Starts[K], St = Steps[K];
    if (St == 0)
      return makeNodeError(N, "slice step is 0");
    St = std::max<int64_t>(St, -INT64_MAX); // Keep -St representable.
    if (S < 0)
      S += Dim;
    if (Dim == 0)
      S = 0; // The result is empty along this axis.
    else
      S = St > 0 ? std::clamp<int64_t>(S, 0, Dim)
                 : std::clamp<int64_t>(S, 0, Dim - 1);
    First[Axis] = S;
    Step[Axis] = St;
    int64_t End = Ends[K];
    if (End < 0)
      End += Dim;
    End = St > 0 ? std::clamp<int64_t>(End, 0, Dim)
                 : std::clamp<int64_t>(End, -1, Dim - 1);
    int64_t Count = 0;
    if (Dim != 0 && St > 0 && End > S)
      Count = 1 + (End - S - 1) / St;
    else if (Dim != 0 && St < 0 && S > End)
      Count = 1 + (S - End - 1) / -St;
    Expected[Axis] = Count;
  }
  if (llvm::Error E = checkResultShape(N, Out, Expected))
    return E;
  Index InIdx(Rank);
  forEachIndex(Out.getShape(), [&](llvm::ArrayRef<int64_t> O) {
    for (int64_t D = 0; D != Rank; ++D)
      InIdx[D] = First[D] + O[D] * Step[D];
    Out.copyElement(Out.getOffset(O), In, In.getOffset(InIdx));
  });
  return llvm::Error::success();
}

llvm::Error padKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &In = *Ins[0];
  Tensor &Out = Outs[0];
  int64_t Rank = In.getRank();
  std::string Mode = N.getStringAttr("mode", "constant");
  if (Mode != "constant" && Mode != "reflect" && Mode != "edge")
    return makeNodeError(N, "unsupported pad mode '" + Mode + "'");
  std::vector<int64_t> Pads = readInts(*Ins[1]);
  std::vector<int64_t> Axes;
  if (Ins.size() > 3 && Ins[3])
    Axes = readInts(*Ins[3]);
  else
    for (int64_t I = 0; I != Rank; ++I)
      Axes.push_back(I);
  if (Pads.size() != 2 * Axes.size())
    return makeNodeError(N, "'pads' has " + llvm::Twine(Pads.size()) +
                                " entries, expected " +
                                llvm::Twine(2 * Axes.size()));
  Index Before(Rank, 0);
  Index Expected(In.getShape().begin(), In.getShape().end());
  for (size_t K = 0, E = Axes.size(); K != E; ++K) {
    int64_t Axis = Axes[K];
    if (llvm::Error Err = normalizeAxis(N, Axis, Rank))
      return Err;
    Before[Axis] = Pads[K];
    Expected[Axis] += Pads[K] + Pads[K + E];
  }
  if (llvm::Error Err = checkResultShape(N, Out, Expected))
    return Err;
  const Tensor *Value = Ins.size() > 2 ? Ins[2] : nullptr;
  if (Value && Value->getNumElements() == 0)
    Value = nullptr;
  if (Value && Value->getElementType() != Out.getElementType())
    return makeNodeError(N, "constant_value has element type " +
                                getElementTypeName(Value->getElementType()) +
                                ", expected " +
                                getElementTypeName(Out.getElementType()));
  if (Mode != "constant")
    for (int64_t D = 0; D != Rank; ++D)
      if (In.getDim(D) == 0 && Out.getDim(D) != 0)
        return makeNodeError(N, "cannot " + Mode + "-pad an empty dim");

  Index InIdx(Rank);
  forEachIndex(Out.getShape(), [&](llvm::ArrayRef<int64_t> O) {
    bool Inside = true;
    for (int64_t D = 0; D != Rank; ++D) {
      int64_t I = O[D] - Before[D], Dim = In.getDim(D);
      if (I < 0 || I >= Dim) {
        if (Mode == "edge") {
          I = std::clamp<int64_t>(I, 0, Dim - 1);
        } else if (Mode == "reflect") {
          if (Dim == 1) {
            I = 0;
          } else {
            int64_t Period = 2 * (Dim - 1);
            I %= Period;
            if (I < 0)
              I += Period;
            if (I >= Dim)
              I = Period - I;
          }
        } else {
          Inside = false;
        }
      }
      InIdx[D] = I;
    }
    int64_t OutOff = Out.getOffset(O);
    if (Inside)
      Out.copyElement(OutOff, In, In.getOffset(InIdx));
    else if (Value)
      Out.copyElement(OutOff, *Value, 0);
  });
  return llvm::Error::success();
}

llvm::Error gatherKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &Data = *Ins[0], &Indices = *Ins[1];
  Tensor &Out = Outs[0];
  int64_t Axis = N.getIntAttr("axis", 0);
  if (llvm::Error E = normalizeAxis(N, Axis, Data.getRank()))
    return E;
  int64_t Dim = Data.getDim(Axis);
  unsigned IdxRank = Indices.getRank();
  Index Expected(Data.getShape().begin(), Data.getShape().begin() + Axis);
  Expected.append(Indices.getShape().begin(), Indices.getShape().end());
  Expected.append(Data.getShape().begin() + Axis + 1, Data.getShape().end());
  if (llvm::Error E = checkResultShape(N, Out, Expected))
    return E;
  Index DataIdx(Data.getRank()), IdxIdx(IdxRank);
  bool Bad = false;
  int64_t BadValue = 0;
  forEachIndex(Out.getShape(), [&](llvm::ArrayRef<int64_t> O) {
    if (Bad)
      return;
    for (int64_t D = 0; D != Axis; ++D)
      DataIdx[D] = O[D];
    for (unsigned D = 0; D != IdxRank; ++D)
      IdxIdx[D] = O[Axis + D];
    int64_t I = Indices.getInt(Indices.getOffset(IdxIdx));
    if (I < -Dim || I >= Dim) {
      Bad = true;
      BadValue = I;
      return;
    }
    DataIdx[Axis] = I < 0 ? I + Dim : I;
    for (int64_t D = Axis + 1, E = Data.getRank(); D < E; ++D)
      DataIdx[D] = O[D - 1 + IdxRank];
    Out.copyElement(Out.getOffset(O), Data, Data.getOffset(DataIdx));
  });
  if (Bad)
    return makeNodeError(N, "index " + llvm::Twine(BadValue) +
                                " is out of range for a dim of size " +
                                llvm::Twine(Dim));
  return llvm::Error::success();
}

/// The data index that element \p At of GatherElements' or
/// ScatterElements' indices names: \p At with the axis entry replaced by the
/// index (negative ones count from the end); an error names a bad one.
llvm::Error getElementsTarget(const Node &N, const Tensor &Data,
                              const Tensor &Indices, int64_t Axis,
                              llvm::ArrayRef<int64_t> At, Index &Target) {
  const int64_t Dim = Data.getDim(unsigned(Axis));
  const int64_t I = Indices.getInt(Indices.getOffset(At));
  if (I < -Dim || I >= Dim)
    return makeNodeError(N, "index " + llvm::Twine(I) +
                                " is out of range for a dim of size " +
                                llvm::Twine(Dim));
  Target.assign(At.begin(), At.end());
  Target[size_t(Axis)] = I < 0 ? I + Dim : I;
  for (unsigned D = 0; D < Data.getRank(); ++D)
    if (Target[D] >= Data.getDim(D))
      return makeNodeError(N, "indices shape " + Indices.getType().str() +
                                  " exceeds the data's " +
                                  Data.getType().str());
  return llvm::Error::success();
}

llvm::Error gatherElementsKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &Data = *Ins[0], &Indices = *Ins[1];
  Tensor &Out = Outs[0];
  int64_t Axis = N.getIntAttr("axis", 0);
  if (llvm::Error E = normalizeAxis(N, Axis, Data.getRank()))
    return E;
  if (Indices.getRank() != Data.getRank())
    return makeNodeError(N, "indices and data ranks differ");
  if (llvm::Error E = checkResultShape(N, Out, Indices.getShape()))
    return E;
  llvm::Error Err = llvm::Error::success();
  Index Target;
  forEachIndex(Out.getShape(), [&](llvm::ArrayRef<int64_t> O) {
    if (Err)
      return;
    if ((Err = getElementsTarget(N, Data, Indices, Axis, O, Target)))
      return;
    Out.copyElement(Out.getOffset(O), Data, Data.getOffset(Target));
  });
  return Err;
}

void combineElement(Tensor &Out, int64_t To, const Tensor &Updates,
                    int64_t From, llvm::StringRef Reduction);

/// ScatterElements: the data, then each update stored (or combined by the
/// reduction) at the element its index names, in row-major order of the
/// indices (with reduction none, a repeated index keeps the last update).
llvm::Error scatterElementsKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &Data = *Ins[0], &Indices = *Ins[1], &Updates = *Ins[2];
  Tensor &Out = Outs[0];
  int64_t Axis = N.getIntAttr("axis", 0);
  if (llvm::Error E = normalizeAxis(N, Axis, Data.getRank()))
    return E;
  if (Indices.getRank() != Data.getRank() ||
      Updates.getShape() != Indices.getShape())
    return makeNodeError(N, "updates " + Updates.getType().str() +
                                " and indices " + Indices.getType().str() +
                                " must have one shape, of the data's rank");
  if (llvm::Error E = checkResultShape(N, Out, Data.getShape()))
    return E;
  const std::string Reduction = N.getStringAttr("reduction", "none");
  if (Reduction != "none" && Data.getElementType() == ElementType::Bool)
    return makeNodeError(N, "reduction '" + Reduction + "' of bool data");
  forEachIndex(Data.getShape(), [&](llvm::ArrayRef<int64_t> I) {
    Out.copyElement(Out.getOffset(I), Data, Data.getOffset(I));
  });
  llvm::Error Err = llvm::Error::success();
  Index Target;
  forEachIndex(Indices.getShape(), [&](llvm::ArrayRef<int64_t> U) {
    if (Err)
      return;
    if ((Err = getElementsTarget(N, Data, Indices, Axis, U, Target)))
      return;
    combineElement(Out, Out.getOffset(Target), Updates, Updates.getOffset(U),
                   Reduction);
  });
  return Err;
}

/// The data index that index tuple \p Prefix of \p Indices (its last dim
/// the tuple) names after batch index \p Batch, into \p Target (the
/// slice's dims left 0); an error for an index out of range.
llvm::Error getTupleTarget(const Node &N, const Tensor &Data,
                           const Tensor &Indices,
                           llvm::ArrayRef<int64_t> Prefix,
                           llvm::ArrayRef<int64_t> Batch, Index &Target) {
  const int64_t K = Indices.getShape().back();
  Target.assign(Data.getRank(), 0);
  std::copy(Batch.begin(), Batch.end(), Target.begin());
  Index At(Prefix.begin(), Prefix.end());
  At.push_back(0);
  for (int64_t J = 0; J < K; ++J) {
    At.back() = J;
    const int64_t Size = Data.getShape()[Batch.size() + size_t(J)];
    int64_t I = Indices.getInt(Indices.getOffset(At));
    if (I < -Size || I >= Size)
      return makeNodeError(N, "index " + llvm::Twine(I) +
                                  " is out of range for an axis of size " +
                                  llvm::Twine(Size));
    Target[Batch.size() + size_t(J)] = I < 0 ? I + Size : I;
  }
  return llvm::Error::success();
}

/// GatherND: for each index tuple (after batch_dims shared leading dims),
/// the data's slice it names.
llvm::Error gatherNDKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &Data = *Ins[0], &Indices = *Ins[1];
  Tensor &Out = Outs[0];
  const int64_t B = N.getIntAttr("batch_dims", 0);
  const int64_t R = Data.getRank(), Q = Indices.getRank();
  if (Q < B + 1 || B >= R)
    return makeNodeError(N, "indices " + Indices.getType().str() +
                                " for data " + Data.getType().str());
  const int64_t K = Indices.getShape().back();
  if (K < 1 || K > R - B)
    return makeNodeError(N, "index tuples of length " + llvm::Twine(K) +
                                " for data of rank " + llvm::Twine(R));
  llvm::ArrayRef<int64_t> IShape = Indices.getShape(), DShape = Data.getShape();
  for (int64_t I = 0; I < B; ++I)
    if (IShape[size_t(I)] != DShape[size_t(I)])
      return makeNodeError(N, "batch dim " + llvm::Twine(I) + " of data " +
                                  Data.getType().str() + " and indices " +
                                  Indices.getType().str() + " differ");
  std::vector<int64_t> Expected(IShape.begin(), IShape.end() - 1);
  Expected.insert(Expected.end(), DShape.begin() + B + K, DShape.end());
  if (llvm::Error E = checkResultShape(N, Out, Expected))
    return E;
  std::vector<int64_t> Slice(DShape.begin() + B + K, DShape.end());
  llvm::Error Err = llvm::Error::success();
  Index Target, O;
  forEachIndex(IShape.drop_back(), [&](llvm::ArrayRef<int64_t> Prefix) {
    if (Err)
      return;
    if ((Err = getTupleTarget(N, Data, Indices, Prefix, Prefix.take_front(B),
                              Target)))
      return;
    forEachIndex(Slice, [&](llvm::ArrayRef<int64_t> S) {
      std::copy(S.begin(), S.end(), Target.begin() + B + K);
      O.assign(Prefix.begin(), Prefix.end());
      O.append(S.begin(), S.end());
      Out.copyElement(Out.getOffset(O), Data, Data.getOffset(Target));
    });
  });
  return Err;
}

/// Element \p To of \p Out combined with \p Updates' element \p From by
/// \p Reduction (none: replaced); integers wrap and u64 orders unsigned.
void combineElement(Tensor &Out, int64_t To, const Tensor &Updates,
                    int64_t From, llvm::StringRef Reduction) {
  if (Reduction == "none") {
    Out.copyElement(To, Updates, From);
  } else if (isFloatingPoint(Out.getElementType())) {
    double A = Out.getDouble(To), B = Updates.getDouble(From);
    Out.setDouble(To, Reduction == "add"   ? A + B
                      : Reduction == "mul" ? A * B
                      : Reduction == "max" ? std::max(A, B)
                                           : std::min(A, B));
  } else {
    int64_t A = Out.getInt(To), B = Updates.getInt(From);
    // Wrapping arithmetic, as the integer types do in ONNX Runtime; u64
    // values order as unsigned.
    const bool Less = Out.getElementType() == ElementType::U64
                          ? uint64_t(A) < uint64_t(B)
                          : A < B;
    Out.setInt(To, Reduction == "add"   ? int64_t(uint64_t(A) + uint64_t(B))
                   : Reduction == "mul" ? int64_t(uint64_t(A) * uint64_t(B))
                   : Reduction == "max" ? (Less ? B : A)
                                        : (Less ? A : B));
  }
}

/// ScatterND: the data, then each index tuple's slice of updates stored
/// (or combined) at the slice it names, tuples in row-major order.
llvm::Error scatterNDKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &Data = *Ins[0], &Indices = *Ins[1], &Updates = *Ins[2];
  Tensor &Out = Outs[0];
  const int64_t R = Data.getRank();
  if (Indices.getRank() < 1)
    return makeNodeError(N, "indices must have rank 1 or more");
  const int64_t K = Indices.getShape().back();
  if (K < 1 || K > R)
    return makeNodeError(N, "index tuples of length " + llvm::Twine(K) +
                                " for data of rank " + llvm::Twine(R));
  llvm::ArrayRef<int64_t> IShape = Indices.getShape(), DShape = Data.getShape();
  std::vector<int64_t> Want(IShape.begin(), IShape.end() - 1);
  Want.insert(Want.end(), DShape.begin() + K, DShape.end());
  if (Updates.getShape() != llvm::ArrayRef<int64_t>(Want))
    return makeNodeError(N, "updates " + Updates.getType().str() +
                                " do not fit data " + Data.getType().str() +
                                " and indices " + Indices.getType().str());
  if (llvm::Error E = checkResultShape(N, Out, DShape))
    return E;
  const std::string Reduction = N.getStringAttr("reduction", "none");
  if (Reduction != "none" && Data.getElementType() == ElementType::Bool)
    return makeNodeError(N, "reduction '" + Reduction + "' of bool data");
  forEachIndex(DShape, [&](llvm::ArrayRef<int64_t> I) {
    Out.copyElement(Out.getOffset(I), Data, Data.getOffset(I));
  });
  std::vector<int64_t> Slice(DShape.begin() + K, DShape.end());
  llvm::Error Err = llvm::Error::success();
  Index Target, U;
  forEachIndex(IShape.drop_back(), [&](llvm::ArrayRef<int64_t> Prefix) {
    if (Err)
      return;
    if ((Err = getTupleTarget(N, Data, Indices, Prefix, {}, Target)))
      return;
    forEachIndex(Slice, [&](llvm::ArrayRef<int64_t> S) {
      std::copy(S.begin(), S.end(), Target.begin() + K);
      U.assign(Prefix.begin(), Prefix.end());
      U.append(S.begin(), S.end());
      combineElement(Out, Out.getOffset(Target), Updates, Updates.getOffset(U),
                     Reduction);
    });
  });
  return Err;
}

llvm::Error shapeKernel(const Node &N, Operands Ins, Results Outs) {
  llvm::ArrayRef<int64_t> Shape = Ins[0]->getShape();
  int64_t Rank = Shape.size();
  int64_t Start = N.getIntAttr("start", 0);
  if (Start < 0)
    Start += Rank;
  Start = std::clamp<int64_t>(Start, 0, Rank);
  Tensor &Out = Outs[0];
  if (Out.getRank() != 1 || Start + Out.getDim(0) > Rank)
    return makeNodeError(N, "result type " + Out.getType().str() +
                                " does not match the operand's rank");
  for (int64_t I = 0, E = Out.getDim(0); I != E; ++I)
    Out.setInt(Out.getOffset({I}), Shape[Start + I]);
  return llvm::Error::success();
}

llvm::Error sizeKernel(const Node &N, Operands Ins, Results Outs) {
  Tensor &Out = Outs[0];
  if (Out.getRank() != 0 || Out.getElementType() != ElementType::I64)
    return makeNodeError(N, "result type " + Out.getType().str() +
                                " is not tensor<i64>");
  Out.setInt(0, Ins[0]->getNumElements());
  return llvm::Error::success();
}

llvm::Error constantKernel(const Node &N, Operands, Results Outs) {
  const Attribute *A = N.getAttr("value");
  if (!A || A->getKind() != AttrKind::Tensor || !A->getTensor())
    return makeNodeError(N, "missing 'value' tensor attribute");
  Tensor V = Tensor::fromData(*A->getTensor());
  if (V.getElementType() != Outs[0].getElementType() ||
      V.getShape() != Outs[0].getShape())
    return makeNodeError(N, "'value' has type " + V.getType().str() +
                                ", result has " + Outs[0].getType().str());
  Outs[0] = V.withLayout(Outs[0].getLayout());
  return llvm::Error::success();
}

llvm::Error constantOfShapeKernel(const Node &N, Operands, Results Outs) {
  Tensor &Out = Outs[0];
  const Attribute *A = N.getAttr("value");
  if (!A)
    return llvm::Error::success(); // The result is zero-filled (0.f).
  if (A->getKind() != AttrKind::Tensor || !A->getTensor() ||
      A->getTensor()->getNumElements() != 1)
    return makeNodeError(N, "'value' must be a one-element tensor");
  Tensor V = Tensor::fromData(*A->getTensor());
  if (V.getElementType() != Out.getElementType())
    return makeNodeError(N, "'value' has element type " +
                                getElementTypeName(V.getElementType()) +
                                ", result has " +
                                getElementTypeName(Out.getElementType()));
  for (int64_t I = 0, E = Out.getNumElements(); I != E; ++I)
    Out.copyElement(I, V, 0);
  return llvm::Error::success();
}

/// Range: start + i * delta, the count from getRangeLength (which shape
/// inference uses too).
llvm::Error rangeKernel(const Node &N, Operands Ops, Results Outs) {
  Tensor &Out = Outs[0];
  for (const Tensor *T : Ops)
    if (T->getNumElements() != 1)
      return makeNodeError(N, "start, limit and delta must be scalars");
  bool Float = isFloatingPoint(Out.getElementType());
  llvm::Optional<int64_t> Length =
      Float ? getRangeLength(Ops[0]->getDouble(0), Ops[1]->getDouble(0),
                             Ops[2]->getDouble(0))
            : getRangeLength(Ops[0]->getInt(0), Ops[1]->getInt(0),
                             Ops[2]->getInt(0));
  if (!Length || *Length != Out.getNumElements())
    return makeNodeError(N, "the range's length does not match the result");
  for (int64_t I = 0; I < *Length; ++I) {
    if (Float)
      Out.setDouble(I, Ops[0]->getDouble(0) + double(I) * Ops[2]->getDouble(0));
    else
      Out.setInt(I, int64_t(uint64_t(Ops[0]->getInt(0)) +
                            uint64_t(I) * uint64_t(Ops[2]->getInt(0))));
  }
  return llvm::Error::success();
}

/// Checks the rank-4 operand of DepthToSpace/SpaceToDepth and reads the
/// block size.
llvm::Error getBlockSize(const Node &N, const Tensor &In, int64_t &B) {
  if (In.getRank() != 4)
    return makeNodeError(N, "expected a rank-4 operand, got rank " +
                                llvm::Twine(In.getRank()));
  B = N.getIntAttr("blocksize", 0);
  if (B <= 0)
    return makeNodeError(N, "'blocksize' must be positive");
  return llvm::Error::success();
}

llvm::Error depthToSpaceKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &In = *Ins[0];
  Tensor &Out = Outs[0];
  int64_t B = 0;
  if (llvm::Error E = getBlockSize(N, In, B))
    return E;
  std::string Mode = N.getStringAttr("mode", "DCR");
  if (Mode != "DCR" && Mode != "CRD")
    return makeNodeError(N, "unsupported mode '" + Mode + "'");
  bool DCR = Mode == "DCR";
  if (In.getDim(1) % (B * B))
    return makeNodeError(N, "channels (" + llvm::Twine(In.getDim(1)) +
                                ") are not a multiple of blocksize^2");
  int64_t OutC = In.getDim(1) / (B * B);
  if (llvm::Error E = checkResultShape(
          N, Out, {In.getDim(0), OutC, In.getDim(2) * B, In.getDim(3) * B}))
    return E;
  forEachIndex(Out.getShape(), [&](llvm::ArrayRef<int64_t> O) {
    int64_t BH = O[2] % B, BW = O[3] % B;
    int64_t C = DCR ? (BH * B + BW) * OutC + O[1] : (O[1] * B + BH) * B + BW;
    int64_t Off = In.getOffset({O[0], C, O[2] / B, O[3] / B});
    Out.copyElement(Out.getOffset(O), In, Off);
  });
  return llvm::Error::success();
}

llvm::Error spaceToDepthKernel(const Node &N, Operands Ins, Results Outs) {
  const Tensor &In = *Ins[0];
  Tensor &Out = Outs[0];
  int64_t B = 0;
  if (llvm::Error E = getBlockSize(N, In, B))
    return E;
  int64_t InC = In.getDim(1);
  if (In.getDim(2) % B || In.getDim(3) % B)
    return makeNodeError(N, "spatial dims are not multiples of the blocksize");
  if (llvm::Error E = checkResultShape(
          N, Out,
          {In.getDim(0), InC * B * B, In.getDim(2) / B, In.getDim(3) / B}))
    return E;
  forEachIndex(Out.getShape(), [&](llvm::ArrayRef<int64_t> O) {
    int64_t Block = O[1] / InC, C = O[1] % InC;
    int64_t BH = Block / B, BW = Block % B;
    int64_t Off = In.getOffset({O[0], C, O[2] * B + BH, O[3] * B + BW});
    Out.copyElement(Out.getOffset(O), In, Off);
  });
  return llvm::Error::success();
}

} // namespace

llvm::Error runtime::normalizeAxis(const Node &N, int64_t &Axis, int64_t Rank) {
  int64_t A = Axis < 0 ? Axis + Rank : Axis;
  if (A < 0 || A >= Rank)
    return makeNodeError(N, "axis " + llvm::Twine(Axis) +
                                " is out of range for rank " +
                                llvm::Twine(Rank));
  Axis = A;
  return llvm::Error::success();
}

void runtime::addDataMovementKernels(KernelTable &T) {
  auto Set = [&T](OpId Id, ReferenceKernel K) {
    T[static_cast<size_t>(Id)] = K;
  };
  Set(OpId::Concat, concatKernel);
  Set(OpId::Split, splitKernel);
  Set(OpId::Slice, sliceKernel);
  Set(OpId::Pad, padKernel);
  Set(OpId::Transpose, transposeKernel);
  Set(OpId::Reshape, reshapeKernel);
  Set(OpId::Flatten, reshapeKernel);
  Set(OpId::Squeeze, reshapeKernel);
  Set(OpId::Unsqueeze, reshapeKernel);
  Set(OpId::Expand, expandKernel);
  Set(OpId::Tile, tileKernel);
  Set(OpId::Gather, gatherKernel);
  Set(OpId::GatherElements, gatherElementsKernel);
  Set(OpId::ScatterElements, scatterElementsKernel);
  Set(OpId::GatherND, gatherNDKernel);
  Set(OpId::ScatterND, scatterNDKernel);
  Set(OpId::Shape, shapeKernel);
  Set(OpId::Size, sizeKernel);
  Set(OpId::Constant, constantKernel);
  Set(OpId::ConstantOfShape, constantOfShapeKernel);
  Set(OpId::Range, rangeKernel);
  Set(OpId::DepthToSpace, depthToSpaceKernel);
  Set(OpId::SpaceToDepth, spaceToDepthKernel);
}
