//===- Gemm.h - The shared register-blocked GEMM (internal) -----*- C++ -*-===//
//
// Private to lib/CodeGen/CPU. One GEMM drives every matrix-shaped kernel of
// the CPU backend: convolutions (implicit im2col, either formulation),
// Gemm and MatMul. C[M x N] = A[M x K] * B[K x N], computed in MR x NR
// register tiles by a SIMD micro-kernel over packed panels:
//
//   - an A micro-panel holds MR rows of A for KC consecutive k, k-major
//     (Panel[k * MR + r]); rows past M are zero;
//   - a B micro-panel holds NR columns of B for KC consecutive k, k-major
//     (Panel[k * NR + c]); columns past N are zero.
//
// Each operand comes either prepacked (constants, packed once at compile
// time for the whole K) or through a packer called per micro-panel (the
// activation side: im2col from NCHW or NHWC, strided matrices). The
// epilogue (bias, residual add, activation) is applied in registers before
// the one store of each tile. Results do not depend on the thread count:
// every element of C is summed by one thread in one fixed order.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CPU_GEMM_H
#define STRIDER_LIB_CODEGEN_CPU_GEMM_H

#include "Activation.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace strider {
namespace cpu {

/// The register tile of the dispatched SIMD target.
struct GemmBlocking {
  int MR = 1; ///< Rows of C per tile (broadcast operand).
  int NR = 1; ///< Columns of C per tile (vector operand), a vector multiple.
};
GemmBlocking getGemmBlocking();

/// Packs micro-panels of A: rows [M0, M0 + Rows), Rows <= MR, k in
/// [K0, K0 + KC), into Dst[k * MR + r]; rows Rows..MR-1 are zero.
class APacker {
public:
  virtual ~APacker();
  virtual void pack(int64_t M0, int Rows, int64_t K0, int64_t KC, int MR,
                    float *Dst) const = 0;
};

/// Packs micro-panels of B: columns [N0, N0 + Cols), Cols <= NR, k in
/// [K0, K0 + KC), into Dst[k * NR + c]; columns Cols..NR-1 are zero.
class BPacker {
public:
  virtual ~BPacker();
  virtual void pack(int64_t N0, int Cols, int64_t K0, int64_t KC, int NR,
                    float *Dst) const = 0;
};

/// 64-byte aligned float storage.
struct AlignedFree {
  void operator()(float *P) const;
};
using AlignedFloats = std::unique_ptr<float[], AlignedFree>;
AlignedFloats allocateFloats(size_t Count);

/// A constant operand packed once for the whole K: panel P (of MR rows for
/// A, NR columns for B) at Data[P * K * Width], k-major inside.
struct PackedOperand {
  AlignedFloats Data;
  int64_t K = 0;
  int64_t Extent = 0; ///< M for A, N for B.
  int Width = 0;      ///< MR for A, NR for B.
  /// Panels held elsewhere (a per-call packing); null: Data.
  const float *View = nullptr;
  const float *panel(int64_t Index, int64_t K0) const {
    return (View ? View : Data.get()) + (Index * K + K0) * Width;
  }
};

/// Packs all of an operand through \p P (an A packer when \p IsA).
PackedOperand packA(const APacker &P, int64_t M, int64_t K);
PackedOperand packB(const BPacker &P, int64_t N, int64_t K);
/// Floats a whole packed A of M x K (B of K x N) takes on this machine.
size_t getPackedASize(int64_t M, int64_t K);
size_t getPackedBSize(int64_t N, int64_t K);
/// packA / packB into \p Dst (getPacked?Size floats), and an operand
/// viewing panels packed that way elsewhere.
void packAInto(const APacker &P, int64_t M, int64_t K, float *Dst);
void packBInto(const BPacker &P, int64_t N, int64_t K, float *Dst);
PackedOperand viewPackedA(const float *Data, int64_t M, int64_t K);
PackedOperand viewPackedB(const float *Data, int64_t N, int64_t K);

/// What happens to a tile after its sum: + bias (per column of C, or per
/// row), + residual (a tensor laid out as C), then the activation.
struct Epilogue {
  /// Bias of N entries (per column) or M entries (per row), padded with
  /// zeros to a multiple of 64 entries; null for none.
  const float *Bias = nullptr;
  bool BiasPerRow = false;
  const float *Residual = nullptr; ///< Same strides as C; may alias C.
  Activation Act;
};

/// Rows of A read in place, without packing: the rows are split into
/// segments of SegRows rows (an output row of a convolution over a padded
/// input; all of M for a plain matrix); row j of segment s starts at
/// Base + s * SegStride + j * RowStride. K runs over Taps groups of Width
/// contiguous elements each, group t at offset TapOffsets[t] from the row
/// start (a 1-tap problem is a plain row-major matrix).
struct DirectA {
  const float *Base = nullptr;
  int64_t SegRows = 0, SegStride = 0, RowStride = 0;
  /// Segments come in groups of OuterSegs (the rows of one output plane of
  /// a 3D conv), group g at Base + g * OuterStride; 0: one group.
  int64_t OuterSegs = 0, OuterStride = 0;
  /// The \p M rows of a row-major matrix of \p K columns whose rows are
  /// \p RowStride apart.
  static DirectA matrix(const float *Base, int64_t M, int64_t K,
                        int64_t RowStride) {
    static const int64_t NoOffset = 0;
    DirectA D;
    D.Base = Base;
    D.SegRows = std::max<int64_t>(M, 1);
    D.RowStride = RowStride;
    D.Width = K;
    D.TapOffsets = &NoOffset;
    return D;
  }
  /// Start of row \p M.
  const float *row(int64_t M) const {
    const int64_t Seg = M / SegRows, J = M - Seg * SegRows;
    if (!OuterSegs)
      return Base + Seg * SegStride + J * RowStride;
    const int64_t G = Seg / OuterSegs;
    return Base + G * OuterStride + (Seg - G * OuterSegs) * SegStride +
           J * RowStride;
  }
  int64_t Width = 0;
  const int64_t *TapOffsets = nullptr;
};

struct GemmProblem {
  int64_t M = 0, N = 0, K = 0;
  /// One of A (packed per micro-panel), PackedA or Direct.
  const APacker *A = nullptr;
  const PackedOperand *PackedA = nullptr;
  const DirectA *Direct = nullptr;
  const BPacker *B = nullptr; ///< Either B or PackedB.
  const PackedOperand *PackedB = nullptr;
  float *C = nullptr;
  int64_t LdM = 0; ///< Element stride between rows of C.
  int64_t LdN = 1; ///< Element stride between columns of C.
  Epilogue Epi;
};

/// A run of rows of one segment: rows [M0, M0 + Rows) of a problem, one
/// register tile (Rows <= MR).
struct RowTile {
  int64_t M0;
  int Rows;
};

/// Computes \p P on \p Threads threads (1 runs on the caller's thread).
void runGemm(const GemmProblem &P, int Threads);

/// Pack panel entries [I0, I0 + Count) (A's rows or B's columns), k in
/// [K0, K0 + KC), of a matrix whose entry (i, k) is at
/// Base[i * PanelStride + k * KStride], into Dst[k * Width + i - I0]; entries
/// Count..Width-1 are zero.
void packStridedPanel(const float *Base, int64_t PanelStride, int64_t KStride,
                      int64_t I0, int Count, int64_t K0, int64_t KC, int Width,
                      float *Dst);

/// An APacker or BPacker over a plain strided matrix (packStridedPanel's
/// strides); made by makeStridedAPacker and makeStridedBPacker.
template <typename Interface> class StridedPacker final : public Interface {
public:
  StridedPacker(const float *Base, int64_t PanelStride, int64_t KStride)
      : Base(Base), PanelStride(PanelStride), KStride(KStride) {}
  void pack(int64_t I0, int Count, int64_t K0, int64_t KC, int Width,
            float *Dst) const override {
    packStridedPanel(Base, PanelStride, KStride, I0, Count, K0, KC, Width, Dst);
  }

private:
  const float *Base;
  int64_t PanelStride, KStride;
};

/// A with element (r, k) at Base[r * RowStride + k * ColStride].
inline StridedPacker<APacker>
makeStridedAPacker(const float *Base, int64_t RowStride, int64_t ColStride) {
  return StridedPacker<APacker>(Base, RowStride, ColStride);
}

/// B with element (k, c) at Base[k * RowStride + c * ColStride].
inline StridedPacker<BPacker>
makeStridedBPacker(const float *Base, int64_t RowStride, int64_t ColStride) {
  return StridedPacker<BPacker>(Base, ColStride, RowStride);
}

/// C = A * B + epilogue with both operands activations read through
/// strides: A(r, k) at A[r * ARow + k * ACol] (rows read in place when
/// ACol is 1, else packed per panel), B(k, c) at B[k * BRow + c * BCol],
/// C(r, c) at C[r * LdM + c * LdN].
void runGemmOfActivations(const float *A, int64_t ARow, int64_t ACol,
                          const float *B, int64_t BRow, int64_t BCol, int64_t M,
                          int64_t N, int64_t K, float *C, int64_t LdM,
                          int64_t LdN, const Epilogue &Epi, int Threads);

/// A packer over a matrix given by an element function: F(r, k) is element
/// (r, k) of A, or element (k, r) of B (weights kept in whatever order a
/// lowering has them, packed once at compile time).
template <typename Fn>
class WeightPacker final : public APacker, public BPacker {
public:
  explicit WeightPacker(Fn F) : F(F) {}
  void pack(int64_t Row0, int Rows, int64_t K0, int64_t KC, int Width,
            float *Dst) const override {
    for (int64_t K = 0; K < KC; ++K)
      for (int R = 0; R < Width; ++R)
        Dst[K * Width + R] = R < Rows ? F(Row0 + R, K0 + K) : 0.0f;
  }

private:
  Fn F;
};

} // namespace cpu
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CPU_GEMM_H
