//===- ProgramImpl.h - Program internals, the lowering context --*- C++ -*-===//
//
// Private to lib/CodeGen/CPU. A program is a list of steps (closures over
// buffer ids, run in a Frame) and what they run on: the activations'
// offsets in an arena, placed by the memory planner once every step is
// known (each run takes an arena from the program's pool), and the
// constants. Lowering functions, one per op family (Lower*.cpp), add
// steps through a LoweringContext.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CPU_PROGRAMIMPL_H
#define STRIDER_LIB_CODEGEN_CPU_PROGRAMIMPL_H

#include "Activation.h"
#include "Gemm.h"

#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/CodeGen/Fusion.h"
#include "strider/CodeGen/Lowering.h"
#include "strider/CodeGen/TensorGeometry.h"
#include "strider/IR/Graph.h"
#include "strider/Runtime/Tensor.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <memory>
#include <mutex>

namespace strider {
namespace cpu {

using BufferId = int;
class ProgramImpl;

/// One run's view of a program's buffers: activations in the arena the
/// run was given (each concurrent run has its own; see ArenaPool),
/// constants where the program keeps them. Steps take it as their
/// argument, so a program's steps can run in several frames at once.
class Frame {
public:
  Frame(const ProgramImpl &P, uint8_t *Arena) : P(P), Arena(Arena) {}
  inline uint8_t *bytes(BufferId B) const;
  float *f32(BufferId B) const { return reinterpret_cast<float *>(bytes(B)); }
  /// Records that a step failed (a reference kernel's error, an index out
  /// of range): the run stops after it and returns the first message.
  void fail(std::string Message) {
    if (!Error)
      Error = std::move(Message);
  }
  const llvm::Optional<std::string> &getError() const { return Error; }

private:
  const ProgramImpl &P;
  uint8_t *Arena;
  llvm::Optional<std::string> Error;
};

struct BufferInfo {
  int64_t Bytes = 0;
  bool IsConstant = false;
};

class ProgramImpl {
public:
  struct Step {
    StepInfo Info;
    std::vector<BufferId> Reads, Writes;
    std::function<void(Frame &)> Run;
  };
  using Binding = codegen::IOBinding;

  std::vector<BufferInfo> Buffers;
  std::vector<int64_t> Offsets; ///< Arena offsets (activations).
  /// Constants steps read as buffers: the graph's own data (shared, not
  /// copied; an artifact's stays in its mapping).
  std::vector<TensorDataRef> Constants;
  std::vector<int> ConstantSlot; ///< Per buffer: index in Constants.
  /// Where runs take their arenas, and the bytes each needs (the plan's,
  /// plus slack for SIMD tails that read past the last buffer).
  std::shared_ptr<ArenaPool> Arenas;
  size_t ArenaAlloc = 0;
  /// Packed weights and other data the steps own.
  std::vector<std::shared_ptr<const void>> Owned;
  std::vector<Step> Steps;
  std::vector<StepInfo> Infos;
  std::vector<Binding> Inputs, Outputs;
  int Threads = 1;
  bool Profile = false;
  /// Profiled runs add their step times under ProfileM.
  std::mutex ProfileM;
  std::vector<double> StepSeconds;
  unsigned ProfiledRuns = 0;
  int64_t ArenaBytes = 0, UnplannedBytes = 0, ConstantBytes = 0;

};

inline uint8_t *Frame::bytes(BufferId B) const {
  if (P.Buffers[B].IsConstant) // Read only: no step writes a constant.
    return const_cast<uint8_t *>(
        P.Constants[size_t(P.ConstantSlot[B])]->getBytes().data());
  return Arena + P.Offsets[B];
}

using codegen::ChannelOrder;
using codegen::getBroadcastStrides;
using codegen::getChannelOrder;
using codegen::getPhysicalShape;
using codegen::getStrides;
using codegen::haveSameElementOrder;
using codegen::splitAround;
using codegen::splitReduction;

// Small helpers the per-op lowerings share (Lowering.cpp).

/// Whether \p V is a value of f32 elements.
bool isF32(const Value *V);
/// \p Name, the kernel's name in reports, with the parts of \p T it
/// applies: "conv+add+relu".
std::string withTail(std::string Name, const codegen::FusedTail &T);
/// Whether a kernel copies elements of \p Bytes: 1, 2, 4 or 8.
bool isCopyableSize(unsigned Bytes);

using codegen::getConstantFloats;
/// Whether \p V is an f32 constant with elements (reads none of them).
bool isConstantF32(const Value *V);

/// \p Values in an aligned array zero-padded to a multiple of 64 entries
/// plus 64 (vector loads of any tile past the last entry stay inside).
std::shared_ptr<AlignedFloats> makePaddedFloats(llvm::ArrayRef<float> Values,
                                                int64_t Count);


class LoweringContext {
public:
  LoweringContext(const Graph &G, ProgramImpl &P) : G(G), P(P) {}

  const Graph &getGraph() const { return G; }
  ProgramImpl &getProgram() { return P; }
  int getThreads() const { return P.Threads; }

  /// The buffer holding \p V (constants get one on first use).
  BufferId getBuffer(const Value *V);
  /// Whether \p V has a buffer yet (activations: once defined).
  bool hasBuffer(const Value *V) const { return BufferOf.count(V); }
  /// A new activation buffer for result \p V.
  BufferId defineBuffer(const Value *V);
  /// A scratch buffer of \p Bytes for the next step only (list it among
  /// the step's writes).
  BufferId defineScratch(int64_t Bytes);
  /// \p Result shares \p Operand's buffer (a view, or in-place).
  void alias(const Value *Result, const Value *Operand);
  /// The buffer of result \p Result of the group ending at \p Last: the
  /// buffer of the first of \p Operands that has Result's type and that
  /// the group may overwrite (canOverwrite), else a new one.
  BufferId defineOver(const Value *Result,
                      std::initializer_list<const Value *> Operands,
                      const Node &Last);

  /// Where a producer may write \p V straight into the Concat that reads
  /// it: the concat's result, V's element offset in it, and its element
  /// strides by logical dim (which V's elements then take).
  struct ConcatSlot {
    const Value *Concat = nullptr;
    int64_t Offset = 0;
    llvm::SmallVector<int64_t, 6> Strides;
  };
  /// The slot of \p V, if V is an f32 activation (not a graph input or
  /// output) whose only reader is a Concat the fast kernel takes, in the
  /// layout of the concat's result. Changes nothing.
  llvm::Optional<ConcatSlot> findConcatSlot(const Value *V) const;
  /// Commits a producer to writing \p V into \p Slot (call once its
  /// lowering cannot fail any more): returns the concat's buffer (defined
  /// here if it is the first slot taken), and the Concat copies V no more.
  BufferId useConcatSlot(const Value *V, const ConcatSlot &Slot);
  bool isInConcatSlot(const Value *V) const { return InConcatSlot.count(V); }
  /// The program order in-place reuse asks (codegen::ProgramOrder); set
  /// once the fusion groups are known.
  void setOrder(const codegen::ProgramOrder *O) { Order = O; }
  bool canOverwrite(const Value *V, size_t NodeIndex) const {
    return Order->canOverwrite(V, NodeIndex);
  }
  size_t getNodeIndex(const Node *N) const { return Order->getNodeIndex(N); }

  void addStep(StepInfo Info, std::vector<BufferId> Reads,
               std::vector<BufferId> Writes, std::function<void(Frame &)> Run);

  /// Constant floats derived from weights, under \p Key (see
  /// DerivedStore), from the constant \p Source (null: not one
  /// constant's): the store's copy when it has \p Count of them, else
  /// made by \p Fill into zeroed, 64-byte aligned storage (and handed to
  /// the store). The program keeps the floats alive.
  const float *deriveFloats(llvm::StringRef Key, size_t Count,
                            llvm::function_ref<void(float *)> Fill,
                            const Value *Source = nullptr);
  /// A constant GEMM operand packed through deriveFloats; \p Key names
  /// the node and operand (the blocking is added), \p Source the
  /// constant it is packed from.
  PackedOperand packConstantA(llvm::StringRef Key, const APacker &P, int64_t M,
                              int64_t K, const Value *Source = nullptr);
  PackedOperand packConstantB(llvm::StringRef Key, const BPacker &P, int64_t N,
                              int64_t K, const Value *Source = nullptr);
  void setDerivedStore(std::shared_ptr<DerivedStore> S) {
    Derived = std::move(S);
    if (Derived)
      P.Owned.push_back(Derived);
  }

  /// Keeps \p Data alive as long as the program; returns its pointer.
  template <typename T> T *own(std::shared_ptr<T> Data) {
    P.Owned.push_back(Data);
    return Data.get();
  }

private:
  const Graph &G;
  ProgramImpl &P;
  std::shared_ptr<DerivedStore> Derived;
  llvm::DenseMap<const Value *, BufferId> BufferOf;
  const codegen::ProgramOrder *Order = nullptr;
  llvm::DenseSet<const Value *> InConcatSlot;
};

using codegen::FusedTail;
using codegen::getFusableActivation;

/// Lowers one op. Returns false (adding nothing) when the op's operands,
/// attributes or layouts are outside what the fast kernels handle; the
/// node then runs its reference kernel.
using LowerFn = bool (*)(LoweringContext &L, const Node &N,
                         const FusedTail &Tail);

/// Whether the lowering table has an entry for \p Id (which may still
/// decline a node, falling back to its reference kernel).
bool hasLowering(OpId Id);

// Lowering functions, one file per op family, named as in the CUDA backend:
// LowerConv.cpp, LowerGemm.cpp, LowerElementwise.cpp,
// LowerNormalization.cpp, LowerPooling.cpp, LowerReduction.cpp,
// LowerLogic.cpp, LowerSelection.cpp, LowerResample.cpp,
// LowerDataMovement.cpp, LowerEinsum.cpp, LowerRecurrent.cpp,
// LowerSignal.cpp; lowerConstant is the driver's (Lowering.cpp).
bool lowerConv(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerQLinearConv(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerConvInteger(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerConvTranspose(LoweringContext &L, const Node &N,
                        const FusedTail &Tail);
bool lowerGemm(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerMatMul(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerEinsum(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerLSTM(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerGRU(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerUnary(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerBinary(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerCompare(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerArith(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerTopK(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerSTFT(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerNot(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerClassify(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerQuantize(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerLookup(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerQBinary(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerWhere(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerExpand(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerCast(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerBatchNorm(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerInstanceNorm(LoweringContext &L, const Node &N,
                       const FusedTail &Tail);
bool lowerLayerNorm(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerResize(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerGridSample(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerSoftmax(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerLRN(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerReduce(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerArgReduce(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerCumSum(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerPool(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerGlobalPool(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerSplit(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerSlice(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerTile(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerGather(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerGatherElements(LoweringContext &L, const Node &N,
                         const FusedTail &Tail);
bool lowerScatterElements(LoweringContext &L, const Node &N,
                          const FusedTail &Tail);
bool lowerGatherND(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerScatterND(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerPad(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerDepthToSpace(LoweringContext &L, const Node &N,
                       const FusedTail &Tail);
bool lowerConcat(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerRelayout(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerConstant(LoweringContext &L, const Node &N, const FusedTail &Tail);
bool lowerView(LoweringContext &L, const Node &N, const FusedTail &Tail);

} // namespace cpu
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CPU_PROGRAMIMPL_H
