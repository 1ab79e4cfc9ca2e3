//===- CostModel.h - Estimated kernel and relayout times --------*- C++ -*-===//
//
// Turns a node and a layout label into an estimated time on a target
// (analytic: FLOPs, bytes, the target's throughput table); when moving a
// value between layouts is free (dims of size 1, reshapes that are
// bitcasts, transposes that are views) is IR/LayoutAlgebra.h's to say.
// Times are in picoseconds (layout::Cost).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LAYOUT_COSTMODEL_H
#define STRIDER_LAYOUT_COSTMODEL_H

#include "strider/IR/LayoutAlgebra.h"
#include "strider/IR/Types.h"
#include "strider/Layout/LayoutProblem.h"
#include "strider/Layout/Target.h"

#include "llvm/ADT/StringMap.h"

#include <vector>

namespace strider {

class Node;
class Value;

namespace layout {

/// The columns of the STRIDER_OP_LAYOUT entries of IR/Ops.def (documented
/// there).
enum class OperandRule : uint8_t { First, SameRank, All, Matrix, None };
enum class ResultRule : uint8_t { Same, None };
enum class KernelRule : uint8_t { Both, ChannelsFirst };
enum class CostKind : uint8_t { Conv, ConvTranspose, Memory, View, Free };

/// How an op takes part in layout assignment (its STRIDER_OP_LAYOUT entry).
struct OpLayoutRule {
  OperandRule Operands;
  ResultRule Results;
  KernelRule Kernels;
  CostKind Kind;
};

/// The rule of \p N's op; opaque ops are layout-fixed (All, ChannelsFirst).
const OpLayoutRule &getOpLayoutRule(const Node &N);

/// The layout a label stands for at rank \p Rank (3..5).
Layout getLabelLayout(LayoutLabel L, unsigned Rank);
/// Lower-case name of a label at \p Rank (`nchw`, `nhwc`, `ncdhw`, ...).
std::string getLabelName(LayoutLabel L, unsigned Rank);

/// How the analytic model sees a convolution (sizes as given; symbolic
/// dims already replaced): its multiply-adds, which efficiency column of
/// the target it uses, and how full the vectors of each layout's kernel
/// are (channels-last kernels vectorize over a group's output channels,
/// channels-first ones over the output width).
struct ConvShapeEstimate {
  enum KindTy : uint8_t { Dense, Pointwise, Depthwise } Kind;
  double Macs;
  /// Index: LayoutLabel; in (0, 1].
  double VectorFill[2];
};
ConvShapeEstimate estimateConvShape(llvm::ArrayRef<int64_t> X,
                                    llvm::ArrayRef<int64_t> W,
                                    llvm::ArrayRef<int64_t> Y, int64_t Group,
                                    llvm::ArrayRef<int64_t> Strides,
                                    bool Transposed, unsigned VectorWidth);
/// The efficiency column of \p Kind in \p E (index: LayoutLabel).
const double *getConvEfficiencies(const ConvEfficiency &E,
                                  ConvShapeEstimate::KindTy Kind);

class TuningTable;
struct ConvTiming;

class CostModel {
public:
  /// With \p Tuning, a conv or relayout the table measured is costed by its
  /// measurement.
  CostModel(const TargetDescription &Target, const DimBindings &Dims,
            const TuningTable *Tuning = nullptr)
      : Target(Target), Dims(Dims), Tuning(Tuning) {}

  const TargetDescription &getTarget() const { return Target; }
  const DimBindings &getDims() const { return Dims; }

  /// Size of \p T in bytes (symbols bound or counted as 1).
  int64_t getNumBytes(const TensorType &T) const;
  /// Time of a relayout of \p T (any two layouts holding different bytes).
  Cost getMoveCost(const TensorType &T) const;
  /// Time to move \p T between its channels-first and channels-last
  /// layouts; 0 when both hold the same bytes.
  Cost getRelayoutCost(const TensorType &T) const;
  /// Time of \p N's kernel when it runs in layout \p L; InfiniteCost if the
  /// op has no such kernel. View ops cost 0 here (see getViewCost).
  Cost getNodeCost(const Node &N, LayoutLabel L) const;
  /// Whether the tuning table holds a measurement of \p N's kernels.
  bool isMeasured(const Node &N) const;
  /// Time of a Conv that reads its input in \p Read and writes the other
  /// layout, or InfiniteCost where the target has no such kernel for \p N.
  /// At most one direction is offered per conv: reading channels-first
  /// for few input channels (first layers), else reading channels-last
  /// with the relayout fused into the store.
  Cost getMixedConvCost(const Node &N, LayoutLabel Read) const;
  /// Time of view op \p N (Reshape, Flatten, Squeeze, Unsqueeze,
  /// Transpose) reading its operand in \p In and writing in \p Out: 0 for a
  /// bitcast or view, else a copy.
  Cost getViewCost(const Node &N, const Layout &In, const Layout &Out) const;
  /// Whether a channels-last Flatten/Reshape feeding only Gemm/MatMul with
  /// constant weights can read the channels-last bytes directly once the
  /// weight rows are permuted at compile time.
  bool canPermuteConsumerWeights(const Node &View) const;

private:
  Cost timeForBytes(double Bytes, double GBs) const;
  Cost getConvCost(const Node &N, LayoutLabel L, bool Transposed) const;
  Cost getMemoryCost(const Node &N, LayoutLabel L) const;
  /// The measured time of variant \p V of conv \p N (InfiniteCost if the
  /// table says it has no kernel), or -1 if the table does not hold \p N
  /// (see TuningTable::Margin).
  Cost getMeasuredConvCost(const Node &N, unsigned V) const;
  /// The table's entry for conv \p N, if it measured any variant.
  const ConvTiming *lookupConvTiming(const Node &N) const;
  /// The one mixed-layout variant (a ConvVariant) the target offers for
  /// conv \p N, or -1.
  int getOfferedMixedVariant(const Node &N) const;

  const TargetDescription &Target;
  const DimBindings &Dims;
  const TuningTable *Tuning;
};

} // namespace layout
} // namespace strider

#endif // STRIDER_LAYOUT_COSTMODEL_H
