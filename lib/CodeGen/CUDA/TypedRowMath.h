//===- TypedRowMath.h - Rows of the typed kernel ----------------*- C++ -*-===//
//
// Private to lib/CodeGen/CUDA. The typed kernel's row ops (one thread, or
// one block, per row along an axis): scatters, ArgMax/ArgMin, reductions
// of integers and f64, CumSum, TopK.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_TYPEDROWMATH_H
#define STRIDER_LIB_CODEGEN_CUDA_TYPEDROWMATH_H

#include "TypedMath.h"

namespace strider {
namespace cuda {

/// Whether \p Op runs one thread per row along Axis (evalTypedRow) rather
/// than one per element of Y (evalTyped).
STRIDER_HOST_DEVICE bool isRowOp(TypedOp Op) {
  return Op == TypedOp::Scatter || Op == TypedOp::ArgMax ||
         Op == TypedOp::ArgMin || Op == TypedOp::TopK ||
         Op == TypedOp::Reduce || Op == TypedOp::CumSum ||
         Op == TypedOp::ScatterND;
}

/// Rows of a row op: Shape's elements with the Axis entry removed.
STRIDER_HOST_DEVICE int64_t getRowCount(const TypedParams &P) {
  int64_t Rows = 1;
  for (int D = 0; D < P.Rank; ++D)
    if (D != P.Axis)
      Rows *= P.Shape[D];
  return Rows;
}

/// Where row \p Row starts in each of the three stride sets.
STRIDER_HOST_DEVICE void getRowOffsets(const TypedParams &P, int64_t Row,
                                       int64_t *Off) {
  Off[0] = Off[1] = Off[2] = 0;
  int64_t Rest = Row;
  for (int D = P.Rank - 1; D >= 0; --D) {
    if (D == P.Axis)
      continue;
    const int64_t At = Rest % P.Shape[D];
    Rest /= P.Shape[D];
    for (int K = 0; K < 3; ++K)
      Off[K] += At * P.Strides[K][D];
  }
}

/// \p A (what Y holds) combined with the update \p B by \p R: as
/// integers that wrap (int64_t), or as doubles.
template <typename T>
STRIDER_HOST_DEVICE T combineScatterValues(ScatterReduction R, T A, T B) {
  switch (R) {
  case ScatterReduction::Add:
    if constexpr (std::is_integral_v<T>)
      return T(uint64_t(A) + uint64_t(B));
    else
      return A + B;
  case ScatterReduction::Mul:
    if constexpr (std::is_integral_v<T>)
      return T(uint64_t(A) * uint64_t(B));
    else
      return A * B;
  case ScatterReduction::Max:
    return A < B ? B : A;
  case ScatterReduction::Min:
    return B < A ? B : A;
  case ScatterReduction::None:
    break;
  }
  return B;
}

/// Element \p I of \p Y combined with the update at \p U's element \p J
/// by \p R (integers wrap; floats in double, rounded once on the store).
STRIDER_HOST_DEVICE void combineScatter(ScatterReduction R, ScalarType T,
                                        void *Y, int64_t I, const void *U,
                                        int64_t J) {
  if (T == ScalarType::U64) // Max and min as unsigned.
    storeScalar(T, Y, I, 0.0,
                int64_t(combineScatterValues(R, uint64_t(loadInt(T, Y, I)),
                                             uint64_t(loadInt(T, U, J)))),
                true);
  else if (isIntegerType(T))
    storeScalar(T, Y, I, 0.0,
                combineScatterValues(R, loadInt(T, Y, I), loadInt(T, U, J)),
                true);
  else
    storeScalar(
        T, Y, I,
        combineScatterValues(R, loadDouble(T, Y, I), loadDouble(T, U, J)), 0,
        false);
}

/// Row \p Row of a Scatter (see TypedOp): its updates stored, or combined,
/// in order.
STRIDER_HOST_DEVICE void evalScatterRow(const TypedParams &P,
                                        const void *const *Ins, void *Y,
                                        const int64_t *Off, RunError *Err) {
  const int Bytes = getScalarBytes(P.Y);
  for (int64_t J = 0; J < P.Shape[P.Axis]; ++J) {
    int64_t I = loadInt(P.In[0], Ins[0], Off[0] + J * P.Strides[0][P.Axis]);
    if (I < -P.AxisSize || I >= P.AxisSize) {
      reportRunError(Err, P.PlanStep, RunError::Index, I, P.AxisSize);
      continue;
    }
    if (I < 0)
      I += P.AxisSize;
    const int64_t To = Off[2] + I * P.AxisStride,
                  From = Off[1] + J * P.Strides[1][P.Axis];
    if (P.Reduction != ScatterReduction::None)
      combineScatter(P.Reduction, P.Y, Y, To, Ins[1], From);
    else
      memcpy(static_cast<char *>(Y) + To * Bytes,
             static_cast<const char *>(Ins[1]) + From * Bytes, size_t(Bytes));
  }
}

/// Whether element \p I of an ArgMax/ArgMin row, of value \p V, beats the
/// best so far, element \p At of value \p Best: the greater (ArgMin: the
/// smaller) value, equal values by position (the first, or the last with
/// SelectLast); NaN neither beats nor is beaten.
STRIDER_HOST_DEVICE bool argBeats(const TypedParams &P, double V, int64_t I,
                                  double Best, int64_t At) {
  if (V != Best)
    return P.Op == TypedOp::ArgMax ? V > Best : V < Best;
  return P.SelectLast ? I > At : I < At;
}

/// Row of an ArgMax/ArgMin (see TypedOp) starting at offsets \p Off,
/// element by element: a NaN in first place stays the answer, any other
/// NaN is passed over (the reference's order).
STRIDER_HOST_DEVICE void evalArgRow(const TypedParams &P,
                                    const void *const *Ins, void *Y,
                                    const int64_t *Off) {
  const int64_t Stride = P.Strides[0][P.Axis];
  double Best = loadDouble(P.In[0], Ins[0], Off[0]);
  int64_t At = 0;
  for (int64_t J = 1; J < P.Shape[P.Axis]; ++J) {
    const double V = loadDouble(P.In[0], Ins[0], Off[0] + J * Stride);
    if (argBeats(P, V, J, Best, At)) {
      Best = V;
      At = J;
    }
  }
  storeScalar(P.Y, Y, Off[2], 0.0, At, true);
}

/// A Reduce row (TypedOp::Reduce) of integers (wrapping) or f64.
STRIDER_HOST_DEVICE void evalReduceRow(const TypedParams &P,
                                       const void *const *Ins, void *Y,
                                       const int64_t *Off) {
  const int64_t Stride = P.Strides[0][P.Axis], Len = P.Shape[P.Axis];
  const ScalarType T = P.In[0];
  if (isIntegerType(T)) {
    int64_t R = loadInt(T, Ins[0], Off[0]);
    for (int64_t J = 1; J < Len; ++J) {
      const int64_t V = loadInt(T, Ins[0], Off[0] + J * Stride);
      switch (P.Reduction) {
      case ScatterReduction::Mul:
        R = int64_t(uint64_t(R) * uint64_t(V));
        break;
      case ScatterReduction::Max:
        R = intLess(T, R, V) ? V : R;
        break;
      case ScatterReduction::Min:
        R = intLess(T, V, R) ? V : R;
        break;
      default:
        R = int64_t(uint64_t(R) + uint64_t(V));
        break;
      }
    }
    storeScalar(P.Y, Y, Off[2], 0.0, R, true);
    return;
  }
  double R = loadDouble(T, Ins[0], Off[0]);
  for (int64_t J = 1; J < Len; ++J) {
    const double V = loadDouble(T, Ins[0], Off[0] + J * Stride);
    R = P.Reduction == ScatterReduction::Mul   ? R * V
        : P.Reduction == ScatterReduction::Max ? (V > R || V != V ? V : R)
        : P.Reduction == ScatterReduction::Min ? (V < R || V != V ? V : R)
                                               : R + V;
  }
  storeScalar(P.Y, Y, Off[2], R, 0, false);
}

/// A CumSum row: integers as wrapping int64 (u64 by its bits), floats in
/// double, rounded once per stored sum.
STRIDER_HOST_DEVICE void evalCumSumRow(const TypedParams &P,
                                       const void *const *Ins, void *Y,
                                       const int64_t *Off) {
  const int64_t Len = P.Shape[P.Axis];
  const int64_t XStride = P.Strides[0][P.Axis], YStride = P.Strides[2][P.Axis];
  const ScalarType T = P.In[0];
  uint64_t IntAcc = 0;
  double Acc = 0;
  for (int64_t K = 0; K < Len; ++K) {
    const int64_t J = P.Reverse ? Len - 1 - K : K;
    const int64_t XO = Off[0] + J * XStride, YO = Off[2] + J * YStride;
    if (isIntegerType(T)) {
      const uint64_t V = uint64_t(loadInt(T, Ins[0], XO));
      IntAcc += P.Exclusive ? 0 : V;
      storeScalar(P.Y, Y, YO, 0.0, int64_t(IntAcc), true);
      IntAcc += P.Exclusive ? V : 0;
    } else {
      const double V = loadDouble(T, Ins[0], XO);
      Acc += P.Exclusive ? 0.0 : V;
      storeScalar(P.Y, Y, YO, Acc, 0, false);
      Acc += P.Exclusive ? V : 0.0;
    }
  }
}

/// Threads of an ArgMax/ArgMin row block (launchTyped's argRowsKernel).
constexpr int ArgRowThreads = 256;

/// Whether an ArgMax/ArgMin runs a block per row (rows from 512 elements:
/// a vocabulary's logits, a long spectrum) instead of a thread per row.
STRIDER_HOST_DEVICE bool useArgRowBlocks(const TypedParams &P) {
  return (P.Op == TypedOp::ArgMax || P.Op == TypedOp::ArgMin) &&
         P.Shape[P.Axis] >= 2 * ArgRowThreads;
}

/// A block's partial result, (Best, At), takes candidate (V, I): the
/// argRowsKernel step, in each thread's strided pass and in the tree that
/// combines the threads'. At < 0: none yet. NaN is never taken, so the
/// order of the passes does not matter: the result is the row's extreme
/// over its numbers, ties by position.
STRIDER_HOST_DEVICE bool argTakes(const TypedParams &P, double V, int64_t I,
                                  double Best, int64_t At) {
  return I >= 0 && V == V && (At < 0 || argBeats(P, V, I, Best, At));
}

/// The position argRowsKernel stores, given the row's first element and
/// the block's combined partial: evalArgRow's answer (0 when the first
/// element is NaN or every element is).
STRIDER_HOST_DEVICE int64_t getArgRowResult(double First, int64_t At) {
  return First != First || At < 0 ? 0 : At;
}

/// Whether element \p IA of a TopK row, of value \p A, comes before element
/// \p IB of value \p B in the result: the larger (smallest: the smaller)
/// value first, NaN above every number (as PyTorch's topk has it), equal
/// values by position. A total order, so every element has one rank.
STRIDER_HOST_DEVICE bool topKPrecedes(bool Largest, double A, int64_t IA,
                                      double B, int64_t IB) {
  const bool NanA = A != A, NanB = B != B;
  if (NanA || NanB) {
    if (NanA && NanB)
      return IA < IB;
    return Largest ? NanA : NanB;
  }
  if (A != B)
    return Largest ? A > B : A < B;
  return IA < IB;
}

/// Slot \p Slot of a TopK row's results (offsets \p Off) set to element
/// \p J of its operand row: the value's bits and the position.
STRIDER_HOST_DEVICE void storeTopKSlot(const TypedParams &P, const void *X,
                                       void *Y, void *Y2, const int64_t *Off,
                                       int64_t Slot, int64_t J) {
  const int Bytes = getScalarBytes(P.Y);
  memcpy(static_cast<char *>(Y) +
             (Off[2] + Slot * P.Strides[2][P.Axis]) * Bytes,
         static_cast<const char *>(X) +
             (Off[0] + J * P.Strides[0][P.Axis]) * Bytes,
         size_t(Bytes));
  storeScalar(ScalarType::I64, Y2, Off[1] + Slot * P.Strides[1][P.Axis], 0.0, J,
              true);
}

/// Row of a TopK (see TypedOp) starting at offsets \p Off: each element in
/// turn is inserted into the sorted output row (topKPrecedes), the last
/// dropped once K are held. O(row length x K): for short rows, one thread
/// each.
STRIDER_HOST_DEVICE void evalTopKRow(const TypedParams &P,
                                     const void *const *Ins, void *Y, void *Y2,
                                     const int64_t *Off) {
  const int Bytes = getScalarBytes(P.Y);
  const int64_t XStride = P.Strides[0][P.Axis], IStride = P.Strides[1][P.Axis],
                VStride = P.Strides[2][P.Axis];
  char *Values = static_cast<char *>(Y);
  // Whether (V, J) goes before the result held in Slot.
  auto Before = [&](double V, int64_t J, int64_t Slot) {
    return topKPrecedes(P.Largest, V, J,
                        loadDouble(P.Y, Y, Off[2] + Slot * VStride),
                        loadInt(ScalarType::I64, Y2, Off[1] + Slot * IStride));
  };
  int64_t Held = 0;
  for (int64_t J = 0; J < P.Shape[P.Axis] && P.K > 0; ++J) {
    const double V = loadDouble(P.In[0], Ins[0], Off[0] + J * XStride);
    int64_t Slot = Held;
    if (Held == P.K) {
      if (!Before(V, J, P.K - 1))
        continue;
      Slot = P.K - 1;
    } else {
      ++Held;
    }
    for (; Slot > 0 && Before(V, J, Slot - 1); --Slot) {
      memcpy(Values + (Off[2] + Slot * VStride) * Bytes,
             Values + (Off[2] + (Slot - 1) * VStride) * Bytes, size_t(Bytes));
      storeScalar(ScalarType::I64, Y2, Off[1] + Slot * IStride, 0.0,
                  loadInt(ScalarType::I64, Y2, Off[1] + (Slot - 1) * IStride),
                  true);
    }
    storeTopKSlot(P, Ins[0], Y, Y2, Off, Slot, J);
  }
}

/// Elements of a TopK rank tile (launchTyped's topKRankKernel: a block of
/// this many threads, one element each, reads the row through shared
/// memory this many at a time).
constexpr int TopKRankTile = 256;

/// Whether a TopK runs by ranks instead of one thread per row: each
/// element counts the elements of its row that precede it (topKPrecedes)
/// and, if fewer than K do, stores itself at that slot. Parallel within a
/// row but O(row length^2) per row, so for rows from TopKRankTile
/// elements (a detector's candidates, a vocabulary) up to a total of
/// 2^33 comparisons; insertion (O(row length x K), one thread per row)
/// otherwise.
STRIDER_HOST_DEVICE bool useTopKRanks(const TypedParams &P) {
  const int64_t Len = P.Shape[P.Axis];
  if (P.Op != TypedOp::TopK || Len < TopKRankTile || P.K == 0)
    return false;
  const int64_t Rows = getRowCount(P);
  const double Comparisons = double(Rows) * double(Len) * double(Len);
  return Comparisons <= double(int64_t(1) << 33);
}

/// The rank of element \p I of a TopK row (offsets \p Off): how many of
/// the row's elements precede it. The host's model of topKRankKernel,
/// which counts the same comparisons tile by tile.
STRIDER_HOST_DEVICE int64_t getTopKRank(const TypedParams &P, const void *X,
                                        const int64_t *Off, int64_t I) {
  const int64_t Stride = P.Strides[0][P.Axis];
  const double V = loadDouble(P.In[0], X, Off[0] + I * Stride);
  int64_t Rank = 0;
  for (int64_t J = 0; J < P.Shape[P.Axis]; ++J)
    Rank += topKPrecedes(P.Largest, loadDouble(P.In[0], X, Off[0] + J * Stride),
                         J, V, I);
  return Rank;
}

/// Row \p Row of a row op (isRowOp); a scatter index out of range goes
/// to \p Err.
STRIDER_HOST_DEVICE void evalTypedRow(const TypedParams &P,
                                      const void *const *Ins, void *Y, void *Y2,
                                      int64_t Row, RunError *Err) {
  int64_t Off[3];
  getRowOffsets(P, Row, Off);
  switch (P.Op) {
  case TypedOp::Scatter:
    evalScatterRow(P, Ins, Y, Off, Err);
    return;
  case TypedOp::ArgMax:
  case TypedOp::ArgMin:
    evalArgRow(P, Ins, Y, Off);
    return;
  case TypedOp::TopK:
    evalTopKRow(P, Ins, Y, Y2, Off);
    return;
  case TypedOp::Reduce:
    evalReduceRow(P, Ins, Y, Off);
    return;
  case TypedOp::CumSum:
    evalCumSumRow(P, Ins, Y, Off);
    return;
  case TypedOp::ScatterND: {
    // Row Row: element Row of every tuple's slice, tuples in order.
    const int Bytes = getScalarBytes(P.Y);
    for (int64_t T = 0; T < P.Shape[0]; ++T) {
      const int64_t To = getNdSliceOffset(P, P.In[0], Ins[0], T, Err);
      if (To < 0)
        continue;
      const int64_t From = T * P.NdSlice + Row;
      if (P.Reduction != ScatterReduction::None)
        combineScatter(P.Reduction, P.Y, Y, To + Row, Ins[1], From);
      else
        memcpy(static_cast<char *>(Y) + (To + Row) * Bytes,
               static_cast<const char *>(Ins[1]) + From * Bytes, size_t(Bytes));
    }
    return;
  }
  default:
    return;
  }
}

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_TYPEDROWMATH_H
