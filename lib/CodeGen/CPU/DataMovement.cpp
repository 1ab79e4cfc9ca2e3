//===- DataMovement.cpp - Strided copies: concat, relayout, copying views -===//
//
// Every data-movement op of the backend is one strided copy: concat
// copies each operand into its slice of the result, a relayout or a
// copying Transpose reads the source through permuted strides. Dims that
// nest in both tensors are merged first; a contiguous innermost run is a
// memcpy, and a transposition (the source's innermost dim is not the
// destination's) goes through transposeFloats' register tiles.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "Parallel.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstring>
#include <numeric>

using namespace strider;
using namespace strider::cpu;

namespace {

void copyElements(const uint8_t *Src, int64_t SS, uint8_t *Dst, int64_t DS,
                  int64_t Count, int64_t Elt) {
  if (SS == 1 && DS == 1) {
    if (Count > 0)
      std::memcpy(Dst, Src, size_t(Count * Elt));
    return;
  }
  for (int64_t I = 0; I < Count; ++I)
    std::memcpy(Dst + I * DS * Elt, Src + I * SS * Elt, size_t(Elt));
}

/// Dst[r][c] = Src[c][r] for elements of type T (rows of Dst DLd apart,
/// contiguous; Src's rows SLd apart): the plain loop the compiler unrolls,
/// for the element sizes transposeFloats' tiles do not take (quantized
/// activations: an 8-bit image's 3 channels).
template <typename T>
void transposeElements(const uint8_t *Src, int64_t SLd, uint8_t *Dst,
                       int64_t DLd, int64_t Rows, int64_t Cols) {
  const T *S = reinterpret_cast<const T *>(Src);
  T *D = reinterpret_cast<T *>(Dst);
  for (int64_t R = 0; R < Rows; ++R)
    for (int64_t C = 0; C < Cols; ++C)
      D[R * DLd + C] = S[C * SLd + R];
}

} // namespace

void cpu::copyStrided(int Rank, const int64_t *Shape, const uint8_t *Src,
                      const int64_t *SrcStrides, uint8_t *Dst,
                      const int64_t *DstStrides, int64_t Elt, int Threads) {
  // Order dims by destination stride, outermost first, dropping unit dims,
  // and merge those that nest on both sides.
  // Small vectors: a relayout of a small tensor must not pay for heap
  // allocations.
  llvm::SmallVector<int, 8> Dims;
  for (int I = 0; I < Rank; ++I)
    if (Shape[I] != 1)
      Dims.push_back(I);
  std::stable_sort(Dims.begin(), Dims.end(),
                   [&](int A, int B) { return DstStrides[A] > DstStrides[B]; });
  llvm::SmallVector<int64_t, 8> N, SS, DS;
  for (int I : Dims) {
    if (!N.empty() && SS.back() == SrcStrides[I] * Shape[I] &&
        DS.back() == DstStrides[I] * Shape[I]) {
      N.back() *= Shape[I];
      SS.back() = SrcStrides[I];
      DS.back() = DstStrides[I];
      continue;
    }
    N.push_back(Shape[I]);
    SS.push_back(SrcStrides[I]);
    DS.push_back(DstStrides[I]);
  }
  if (N.empty()) {
    std::memcpy(Dst, Src, size_t(Elt));
    return;
  }
  const int R = int(N.size());
  // A transposition of the two innermost destination dims: tiles.
  int Outer = R - 1;
  bool Transpose = false;
  if (R >= 2 && SS[R - 1] != 1 && DS[R - 1] == 1) {
    // Find the source's innermost dim among the others.
    int Inner = -1;
    for (int I = 0; I < R - 1; ++I)
      if (SS[I] == 1)
        Inner = I;
    if (Inner == R - 2) {
      Transpose = true;
      Outer = R - 2;
    }
  }
  int64_t Items = 1;
  for (int I = 0; I < Outer; ++I)
    Items *= N[I];
  parallelFor(Items, Threads, [&](int64_t Item) {
    int64_t SO = 0, DO = 0, Rem = Item;
    for (int I = Outer - 1; I >= 0; --I) {
      int64_t Idx = Rem % N[I];
      Rem /= N[I];
      SO += Idx * SS[I];
      DO += Idx * DS[I];
    }
    if (!Transpose) {
      copyElements(Src + SO * Elt, SS[R - 1], Dst + DO * Elt, DS[R - 1],
                   N[R - 1], Elt);
      return;
    }
    const int64_t Rows = N[R - 2], Cols = N[R - 1];
    if (Elt == 4)
      // Dst[r][c] = Src[c][r]: the source's rows run along dim R-1.
      transposeFloats(reinterpret_cast<const float *>(Src) + SO, SS[R - 1],
                      reinterpret_cast<float *>(Dst) + DO, DS[R - 2], Cols,
                      Rows);
    else if (Elt == 1 && SS[R - 2] == 1)
      transposeElements<uint8_t>(Src + SO, SS[R - 1], Dst + DO, DS[R - 2], Rows,
                                 Cols);
    else if (Elt == 2 && SS[R - 2] == 1)
      transposeElements<uint16_t>(Src + SO * 2, SS[R - 1], Dst + DO * 2,
                                  DS[R - 2], Rows, Cols);
    else
      for (int64_t Rr = 0; Rr < Rows; ++Rr)
        copyElements(Src + (SO + Rr * SS[R - 2]) * Elt, SS[R - 1],
                     Dst + (DO + Rr * DS[R - 2]) * Elt, DS[R - 1], Cols, Elt);
  });
}
