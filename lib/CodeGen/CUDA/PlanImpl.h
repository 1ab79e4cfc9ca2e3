//===- PlanImpl.h - CUDA plan internals and the lowering context -*- C++ -*-===//
//
// Private to lib/CodeGen/CUDA. A plan is a list of steps, each a kernel's
// or library call's parameters (plain data, Kernels.h and Libraries.h)
// and the buffers it takes, plus the buffers: activations placed in one
// device arena, constants uploaded at load. Lowering functions, one per op
// family (Lower*.cpp, named as in the CPU backend), add steps through a
// PlanContext.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CUDA_PLANIMPL_H
#define STRIDER_LIB_CODEGEN_CUDA_PLANIMPL_H

#include "Kernels.h"
#include "Libraries.h"

#include "strider/CodeGen/CUDA/CUDABackend.h"
#include "strider/CodeGen/Fusion.h"
#include "strider/CodeGen/Lowering.h"
#include "strider/CodeGen/TensorGeometry.h"
#include "strider/IR/Graph.h"
#include "strider/IR/WindowGeometry.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <memory>
#include <variant>
#include <vector>

namespace strider {
namespace cuda {

using codegen::ChannelOrder;
using codegen::FusedTail;
using BufferId = int;

struct PlanBuffer {
  int64_t Bytes = 0;
  bool IsConstant = false;
  /// Constants: the bytes uploaded at load, already in their device form.
  std::shared_ptr<const std::vector<uint8_t>> Data;
};

/// A buffer and a byte offset into it (a slot of a concat, a slice).
struct Arg {
  BufferId Buffer = -1;
  int64_t Offset = 0;
};

/// A library convolution: the descriptor and the host weights the runner
/// converts and uploads at load.
struct ConvStep {
  ConvDesc Desc;
  std::shared_ptr<const std::vector<float>> Weights, Bias;
};
struct GemmStep {
  GemmDesc Desc;
  /// B when it is a constant (row-major as GemmDesc says), else null.
  std::shared_ptr<const std::vector<float>> B;
  std::shared_ptr<const std::vector<float>> Bias;
};

/// Parameters of a step, and what its Args are, in order:
///   CopyPlan, PadParams, ReduceParams, SoftmaxParams: X, Y
///   PoolParams: X, Y, and for MaxPool's second result the indices
///   ResizeParams: X, Y, then Index and Weight tables per spatial axis
///   ElementwiseParams: A, B (-1 for unary ops), Y
///   TypedParams: A, B, C (-1 where the op has fewer operands), Y, and
///     for TopK Y2 (the positions)
///   EpilogueParams: X, Scale, Bias, Residual (each may be -1), Y
///   NormParams: X, Scale, Bias, Y, and for LayerNormalization's second
///     and third results Mean and InvStd (-1 where not read)
///   LrnParams: X, Y
///   BatchStatsParams: X, Gamma, Beta, InMean, InVar, Scale, Shift,
///     RunMean, RunVar (the last two -1 where not read)
///   LstmCellParams: Pre, Rec, Peep (each may be -1 but Pre), Cell,
///     Hidden, Y (-1 when not written), Lens (-1 without lengths); writes
///     Cell, Hidden and Y
///   GruCellParams: Pre, Rec, RecH, RecBias (each may be -1 but Pre),
///     Hidden, Out, Lens (-1 without lengths); the Reset stage writes Out,
///     the Gates stage Hidden and Out (-1 when there is no Y)
///   RecurrenceLoopParams: Pre, R, RH, Peep, RecBias, Rec, RecH, Reset,
///     Cell, Hidden, Y, Lens (each may be -1 but Pre, R and Hidden; RH,
///     RecH and Reset for GRU without linear_before_reset, Cell for LSTM);
///     writes Rec, RecH, Reset, Cell, Hidden and Y
///   ConvStep: X, Residual, Y, Bias (f32, for an epilogue the library
///     does not fuse)
///   GemmStep: A, B (-1 when constant), Y, Bias (as for ConvStep)
using StepParams =
    std::variant<CopyPlan, PadParams, ResizeParams, ElementwiseParams,
                 TypedParams, EpilogueParams, PoolParams, ReduceParams,
                 SoftmaxParams, NormParams, BatchStatsParams, LrnParams,
                 LstmCellParams, GruCellParams, RecurrenceLoopParams, ConvStep,
                 GemmStep>;

struct PlanStep {
  StepInfo Info;
  StepParams Params;
  std::vector<Arg> Args;
  std::vector<BufferId> Reads, Writes;
};

using Binding = codegen::IOBinding;

class PlanImpl {
public:
  std::vector<PlanBuffer> Buffers;
  std::vector<int64_t> Offsets; ///< Arena byte offsets of activations.
  std::vector<PlanStep> Steps;
  std::vector<StepInfo> Infos;
  std::vector<Binding> Inputs, Outputs;
  int64_t ArenaBytes = 0, ConstantBytes = 0;
  Precision Math = Precision::FP32;
};

/// Whether \p S runs one of the backend's own kernels (not cuDNN or
/// cuBLASLt).
bool isKernelStep(const PlanStep &S);
/// Launches kernel step \p S through \p L on \p Stream, its arguments'
/// addresses from \p Address (of argument K), a report of bad data to
/// \p Err: the one mapping from a step's arguments to its launcher's, for
/// the device program and the host emulation's device-code mode. Library
/// steps give cudaErrorInvalidValue.
cudaError_t launchKernelStep(const KernelLaunchers &L, const PlanStep &S,
                             llvm::function_ref<void *(size_t K)> Address,
                             RunError *Err, cudaStream_t Stream);

/// The message of a run that kernel reports in \p R stopped: "step
/// '<nodes>' (<kernel>): index 7 is out of range for an axis of size 5".
std::string describeRunError(const PlanImpl &P, const RunError &R);

/// Copy parameters over \p Shape (logical dims of the index space) from
/// \p XStrides to \p YStrides (elements), converting \p XT to \p YT.
CopyParams makeCopy(llvm::ArrayRef<int64_t> Shape,
                    llvm::ArrayRef<int64_t> XStrides,
                    llvm::ArrayRef<int64_t> YStrides, DType XT, DType YT);

/// The device storage type of \p E, if the backend holds it.
llvm::Optional<DType> getDType(ElementType E);
/// The typed kernel's storage type of \p E (the float types, f64, the
/// integer types and bool), if it holds it.
llvm::Optional<ScalarType> getScalarType(ElementType E);
/// "f32", "i64", ... as in step names.
const char *getScalarTypeName(ScalarType T);

class PlanContext {
public:
  PlanContext(const Graph &G, PlanImpl &P, const CUDAOptions &Opts)
      : G(G), P(P), Opts(Opts) {}

  const Graph &getGraph() const { return G; }
  const CUDAOptions &getOptions() const { return Opts; }
  MathMode getMathMode(DType T) const;

  /// The buffer holding \p V (constants are uploaded as they are, in
  /// their element type); errors for element types the backend does not
  /// hold, located at \p User.
  llvm::Expected<BufferId> getBuffer(const Value *V, const Node &User);
  /// The buffer of \p V as a step argument, or no argument (buffer -1)
  /// when \p V is null (an optional operand).
  llvm::Expected<Arg> getOptionalArg(const Value *V, const Node &User);
  /// A new activation buffer for result \p V.
  llvm::Expected<BufferId> defineBuffer(const Value *V, const Node &Def);
  /// The buffers of \p Operands (getBuffer) and then new buffers for
  /// \p Results (defineBuffer) of node \p N, each stored through its
  /// pointer: a lowering's buffers in one call, its first error returned.
  using BufferSlot = std::pair<const Value *, BufferId *>;
  llvm::Error bindBuffers(const Node &N, llvm::ArrayRef<BufferSlot> Operands,
                          llvm::ArrayRef<BufferSlot> Results = {});
  /// An arena buffer of \p Bytes that no value holds: a step's scratch
  /// (written by one step, read by the next), placed by its uses.
  BufferId addScratch(int64_t Bytes);
  /// A constant buffer holding \p Data (already in device form).
  BufferId addConstant(std::vector<uint8_t> Data);
  BufferId addConstantFloats(llvm::ArrayRef<float> Data);
  /// An argument for the constant \p Data, or no buffer when it is empty
  /// (an absent bias).
  Arg getOptionalConstant(llvm::ArrayRef<float> Data) {
    return Data.empty() ? Arg() : Arg{addConstantFloats(Data), 0};
  }
  /// \p Result shares \p Operand's buffer (views, and kernels that
  /// overwrite an operand).
  void alias(const Value *Result, const Value *Operand);
  /// The program order in-place reuse asks (codegen::ProgramOrder); set
  /// once the fusion groups are known.
  void setOrder(const codegen::ProgramOrder *O) { Order = O; }
  /// Whether a kernel of the group ending at \p Last may write its result
  /// over \p V's buffer (codegen::ProgramOrder::canOverwrite).
  bool canOverwrite(const Value *V, const Node &Last) const {
    return Order && Order->canOverwrite(V, Order->getNodeIndex(&Last));
  }
  bool hasBuffer(const Value *V) const { return BufferOf.count(V); }

  void addStep(StepInfo Info, StepParams Params, std::vector<Arg> Args);
  /// Counts constants a runner uploads itself (weights) in the totals.
  void addRunnerConstantBytes(int64_t Bytes) { P.ConstantBytes += Bytes; }

private:
  const Graph &G;
  PlanImpl &P;
  const CUDAOptions &Opts;
  const codegen::ProgramOrder *Order = nullptr;
  llvm::DenseMap<const Value *, BufferId> BufferOf;
};

// Small helpers the per-op lowerings share (Lowering.cpp).

/// The device storage type of \p V's elements (f32 for types it lacks).
DType dtypeOf(const Value *V);
/// Pixels of a (N, C, spatial...) shape.
int64_t getPixels(llvm::ArrayRef<int64_t> Shape);
/// \p Logical (one entry per logical dim of \p YT) in \p YT's physical
/// order, into \p Out.
void toPhysical(const TensorType &YT, llvm::ArrayRef<int64_t> Logical,
                int64_t *Out);
/// Element strides of \p V per logical dim.
std::vector<int64_t> getLogicalStrides(const Value *V);
/// \p V as the shared host floats a library step keeps.
std::shared_ptr<const std::vector<float>> share(std::vector<float> V);

/// Fill the per-axis arrays of a convolution or pooling descriptor \p D:
/// input and output sizes (dims 2... of \p XS and \p YS) and the resolved
/// window \p Axes, whose kernel sizes go to \p Kernel (one of D's arrays).
template <typename Desc>
void setWindowAxes(Desc &D, int64_t (&Kernel)[3], llvm::ArrayRef<int64_t> XS,
                   llvm::ArrayRef<int64_t> YS,
                   llvm::ArrayRef<WindowAxis> Axes) {
  for (size_t I = 0; I < Axes.size(); ++I) {
    D.In[I] = XS[I + 2];
    D.Out[I] = YS[I + 2];
    Kernel[I] = Axes[I].Kernel;
    D.Stride[I] = Axes[I].Stride;
    D.Dilation[I] = Axes[I].Dilation;
    D.PadBegin[I] = Axes[I].PadBegin;
    D.PadEnd[I] = Axes[I].PadEnd;
  }
}

/// f32 data of constant \p V in its logical (row-major) order; empty if
/// \p V is not a float constant (f16/bf16 constants are widened).
inline std::vector<float> getConstantFloats(const Value *V) {
  return codegen::getConstantFloats(V, /*WidenHalf=*/true);
}
/// The results a step computes, for reports: \p N's, then those of the
/// group's followers ("conv1,relu1").
std::string getStepNodes(const Node &N, const codegen::FusedTail &T);
/// "+bias+residual+relu" for the parts of \p E that are set.
std::string getEpilogueSuffix(const EpilogueSpec &E);
/// The channel order \p X and \p Y share, reading one in the other's
/// where their layouts place its bytes alike (a channel or spatial dim of
/// 1 makes NCHW and NHWC the same bytes); Other if they share none.
codegen::ChannelOrder getSharedChannelOrder(const TensorType &X,
                                            const TensorType &Y);
/// Element strides per dim of an index space, one array per operand.
using DimStrides = llvm::SmallVector<int64_t, 12>;
/// Simplifies the index space \p Shape walked through every array of
/// \p Strides (in place): unit dims dropped, neighbours that nest in every
/// array (the outer stride the inner one times its extent) merged. One
/// dim of 1 remains of a single element.
void collapseDims(llvm::SmallVectorImpl<int64_t> &Shape,
                  llvm::MutableArrayRef<DimStrides> Strides);
/// "nchw", "nhwc" (any rank: channels-first or -last).
const char *getOrderName(bool ChannelsLast);

/// Adds a copy step (planCopy of \p P) from \p X to \p Y, reported as
/// "copy.<What> <strategy> <type>".
void addCopy(PlanContext &C, const std::string &Nodes, const char *What,
             const CopyParams &P, Arg X, Arg Y);

/// The buffer of operand \p X and a new one for result \p Y of \p N.
llvm::Error getInOut(PlanContext &C, const Node &N, const Value *X,
                     const Value *Y, BufferId &XB, BufferId &YB);

/// An error located at \p N: "no CUDA kernel for <what>".
llvm::Error unsupported(const Node &N, const llvm::Twine &What);
/// The dims of reduction \p N's operand that its constant axes (operand
/// 1) mark; none when it has no axes (the callers read
/// noop_with_empty_axes). Unsupported for axes computed at run time or out
/// of range.
llvm::Expected<std::vector<bool>> getReducedDims(const Node &N);

/// Lowers one op (or fusion group, \p Tail) into steps; errors say why
/// the backend cannot run it.
using PlanFn = llvm::Error (*)(PlanContext &C, const Node &N,
                               const codegen::FusedTail &Tail);

// One file per op family, named as in the CPU backend: LowerConv.cpp,
// LowerGemm.cpp, LowerElementwise.cpp, LowerNormalization.cpp,
// LowerPooling.cpp, LowerReduction.cpp, LowerLogic.cpp, LowerSelection.cpp,
// LowerResample.cpp, LowerDataMovement.cpp, LowerEinsum.cpp,
// LowerRecurrent.cpp, LowerSignal.cpp.
llvm::Error planConv(PlanContext &C, const Node &N,
                     const codegen::FusedTail &Tail);
llvm::Error planGemm(PlanContext &C, const Node &N,
                     const codegen::FusedTail &Tail);
llvm::Error planMatMul(PlanContext &C, const Node &N,
                       const codegen::FusedTail &Tail);
llvm::Error planElementwise(PlanContext &C, const Node &N,
                            const codegen::FusedTail &Tail);
/// LowerLogic.cpp: whether \p N runs on the typed kernel (comparisons,
/// logic, Where; Cast and arithmetic with an integer or bool side), and
/// its step.
bool isTypedStep(const Node &N);
/// LowerEinsum.cpp: Einsum of one or two f32 operands as copies, row
/// reductions and one batched GEMM; of f64 or integers, one typed step.
llvm::Error planEinsum(PlanContext &C, const Node &N,
                       const codegen::FusedTail &Tail);
/// LowerSignal.cpp: STFT as a frame copy and a GEMM by the DFT basis.
llvm::Error planSTFT(PlanContext &C, const Node &N,
                     const codegen::FusedTail &Tail);
llvm::Error planTyped(PlanContext &C, const Node &N,
                      const codegen::FusedTail &Tail);
/// Gather by indices computed at run time (or many constant ones) and
/// GatherElements; ScatterElements (a copy, then the updates row by row,
/// stored or combined by its reduction).
llvm::Error planIndexedGather(PlanContext &C, const Node &N,
                              const codegen::FusedTail &Tail);
llvm::Error planScatterElements(PlanContext &C, const Node &N,
                                const codegen::FusedTail &Tail);
/// ArgMax and ArgMin, and TopK with a constant K: a thread per row.
llvm::Error planArgReduce(PlanContext &C, const Node &N,
                          const codegen::FusedTail &Tail);
llvm::Error planTopK(PlanContext &C, const Node &N,
                     const codegen::FusedTail &Tail);
/// GridSample over two spatial dims of any float type (X in any layout,
/// grid and Y row-major): a thread per result element
/// (gridsample::sample2D).
llvm::Error planGridSample(PlanContext &C, const Node &N,
                           const codegen::FusedTail &Tail);
/// Trilu of any held type, k constant or computed: a thread per element.
llvm::Error planTrilu(PlanContext &C, const Node &N,
                      const codegen::FusedTail &Tail);
/// QuantizeLinear (any float type to u8/i8) and DequantizeLinear (u8, i8,
/// i32 to any float type), parameters per tensor or per axis, in any
/// layout: a thread per element.
llvm::Error planQuantize(PlanContext &C, const Node &N,
                         const codegen::FusedTail &Tail);
/// GatherND and ScatterND (every reduction) of any held type by i64 index
/// tuples, row-major: a thread per result element, or a copy and then a
/// thread per slice element walking the tuples in order.
llvm::Error planGatherND(PlanContext &C, const Node &N,
                         const codegen::FusedTail &Tail);
llvm::Error planScatterND(PlanContext &C, const Node &N,
                          const codegen::FusedTail &Tail);
/// CumSum of any held number type along a constant axis: a thread per
/// row.
llvm::Error planCumSum(PlanContext &C, const Node &N,
                       const codegen::FusedTail &Tail);
llvm::Error planBatchNorm(PlanContext &C, const Node &N,
                          const codegen::FusedTail &Tail);
llvm::Error planNorm(PlanContext &C, const Node &N,
                     const codegen::FusedTail &Tail);
llvm::Error planPool(PlanContext &C, const Node &N,
                     const codegen::FusedTail &Tail);
llvm::Error planGlobalPool(PlanContext &C, const Node &N,
                           const codegen::FusedTail &Tail);
llvm::Error planReduce(PlanContext &C, const Node &N,
                       const codegen::FusedTail &Tail);
llvm::Error planSoftmax(PlanContext &C, const Node &N,
                        const codegen::FusedTail &Tail);
llvm::Error planLrn(PlanContext &C, const Node &N,
                    const codegen::FusedTail &Tail);
llvm::Error planLstm(PlanContext &C, const Node &N,
                     const codegen::FusedTail &Tail);
llvm::Error planGru(PlanContext &C, const Node &N,
                    const codegen::FusedTail &Tail);
llvm::Error planView(PlanContext &C, const Node &N,
                     const codegen::FusedTail &Tail);
llvm::Error planCopyLike(PlanContext &C, const Node &N,
                         const codegen::FusedTail &Tail);
llvm::Error planConcat(PlanContext &C, const Node &N,
                       const codegen::FusedTail &Tail);
llvm::Error planSplit(PlanContext &C, const Node &N,
                      const codegen::FusedTail &Tail);
llvm::Error planSlice(PlanContext &C, const Node &N,
                      const codegen::FusedTail &Tail);
llvm::Error planPad(PlanContext &C, const Node &N,
                    const codegen::FusedTail &Tail);
llvm::Error planResize(PlanContext &C, const Node &N,
                       const codegen::FusedTail &Tail);
llvm::Error planTile(PlanContext &C, const Node &N,
                     const codegen::FusedTail &Tail);
/// Gather with a few constant indices: a copy per index.
llvm::Error planGather(PlanContext &C, const Node &N,
                       const codegen::FusedTail &Tail);
/// DepthToSpace and SpaceToDepth.
llvm::Error planDepthSpace(PlanContext &C, const Node &N,
                           const codegen::FusedTail &Tail);

/// Whether the planning table has an entry for \p Id.
bool hasPlanner(OpId Id);

} // namespace cuda
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CUDA_PLANIMPL_H
