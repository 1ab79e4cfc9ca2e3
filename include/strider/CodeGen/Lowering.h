//===- Lowering.h - The lowering driver every backend shares ----*- C++ -*-===//
//
// What lowering a graph to a program of steps is, whatever the backend:
// the graph's inputs and outputs bound to buffers (IOBinding), the nodes
// walked in program order with each fusion group lowered at its last node
// (lowerNodes: one loop, one convention for declining), the activation
// buffers placed in one arena by their live ranges (planBufferArena), and
// the caller's tensors checked against the bindings on every run
// (bindInputs). A backend supplies its per-op lowering and its steps.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_LOWERING_H
#define STRIDER_CODEGEN_LOWERING_H

#include "strider/CodeGen/Fusion.h"
#include "strider/IR/TensorData.h"
#include "strider/IR/Types.h"
#include "strider/Runtime/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace strider {

class Graph;
class Node;

namespace codegen {

/// A graph input or output of a program and the buffer that holds it.
struct IOBinding {
  std::string Name;
  TensorType Type; ///< Static shape, element type, layout.
  int Buffer = -1;
  TensorDataRef Default; ///< Inputs: the default data, if any.
};

/// Bytes of a tensor of static type \p T (0 when a dim is not static).
int64_t getByteSize(const TensorType &T);

/// \p Why (a memory budget refusal) located at the node of \p G whose
/// result is the largest tensor, naming that result; at the graph when
/// no node has a result of static shape.
llvm::Error makeTooBigError(const Graph &G, const std::string &Why);

/// makeTooBigError when \p G's largest tensor alone exceeds the memory
/// budget \p MaxMemory (Support/Memory.h; \p What names the memory):
/// checked before lowering, whose tables (a Resize's taps per output
/// position) grow with the tensors' dims.
llvm::Error checkLargestTensor(const Graph &G, uint64_t MaxMemory,
                               llvm::StringRef What);

/// A dense row-major copy of constant \p V's elements as floats: of an f32
/// constant, and with \p WidenHalf of an f16 or bf16 one; empty for any
/// other value.
std::vector<float> getConstantFloats(const Value *V, bool WidenHalf = false);

/// The elements of constant operand \p I of \p N as integers; empty when
/// the operand is absent or not a constant.
std::vector<int64_t> getConstantInts(const Node &N, unsigned I);

/// The view a Slice \p N with constant bounds takes of its input: the
/// element offset of its first element and, per logical dim, the element
/// stride (the input's times the step). False when a bound is not a constant
/// or an axis or step is invalid.
bool getSliceView(const Node &N, int64_t &Offset,
                  llvm::SmallVectorImpl<int64_t> &Strides);

/// The 'axis' attribute of \p N (\p Default when absent) normalized for
/// rank \p R; -1 when it is out of range.
int64_t getAxisAttr(const Node &N, int64_t R, int64_t Default = 0);

/// How a backend lowers node \p N, or the fusion group \p Tail it ends
/// (a group of one for a plain node): success, or an error saying why it
/// declined (nothing added then).
using LowerNodeFn =
    llvm::function_ref<llvm::Error(const Node &N, const FusedTail &Tail)>;
/// What a backend does with a node it declined on its own (\p Why):
/// success where it runs it another way (the CPU backend's reference
/// kernel), else the error to stop at (the CUDA backend's).
using DeclinedFn =
    llvm::function_ref<llvm::Error(const Node &N, llvm::Error Why)>;

/// The one lowering loop: the nodes of \p Order in program order, each
/// group of \p Groups lowered at its last node by \p Lower; a group it
/// declines is lowered member by member, and a member or plain node it
/// declines goes to \p Declined.
llvm::Error lowerNodes(llvm::ArrayRef<const Node *> Order,
                       const FusionGroups &Groups, LowerNodeFn Lower,
                       DeclinedFn Declined);

/// Where each node of a program runs: its position in program order, and
/// for members of a fusion group the position of the group's last node
/// (where the group's kernel runs). What in-place reuse asks.
class ProgramOrder {
public:
  ProgramOrder(const Graph &G, llvm::ArrayRef<const Node *> Order,
               const FusionGroups &Groups);

  size_t getNodeIndex(const Node *N) const { return NodeIndex.lookup(N); }
  /// Where \p N's kernel runs: its group's last node, else its own place.
  size_t getRunIndex(const Node *N) const {
    auto It = RunIndex.find(N);
    return It == RunIndex.end() ? getNodeIndex(N) : It->second;
  }
  /// Whether \p V's buffer may be overwritten by a kernel running at
  /// position \p Index: every reader of \p V runs at or before it, and
  /// \p V is an activation a kernel computes (not a graph input or output,
  /// a constant, a view or the operand of one, whose buffer another name
  /// shares).
  bool canOverwrite(const Value *V, size_t Index) const;

private:
  const Graph &G;
  llvm::DenseMap<const Node *, size_t> NodeIndex, RunIndex;
};

/// The buffers of a program placed in one arena: buffer ids index the
/// byte sizes; a step lists the buffers it reads and writes.
struct StepBuffers {
  llvm::ArrayRef<int> Reads, Writes;
};
struct ArenaPlan {
  std::vector<int64_t> Offsets; ///< Per buffer id (0 where not planned).
  int64_t ArenaBytes = 0;
};
/// Places the buffers for which \p Planned holds by their live ranges:
/// inputs live from before the first step, outputs to after the last,
/// everything else from its first write to its last read.
ArenaPlan planArena(llvm::ArrayRef<int64_t> Bytes, llvm::ArrayRef<uint8_t> Planned,
                    llvm::ArrayRef<StepBuffers> Steps,
                    llvm::ArrayRef<int> Inputs, llvm::ArrayRef<int> Outputs,
                    int64_t Alignment);

/// planArena over the buffer ids of \p Inputs and \p Outputs.
ArenaPlan planArena(llvm::ArrayRef<int64_t> Bytes,
                    llvm::ArrayRef<uint8_t> Planned,
                    llvm::ArrayRef<StepBuffers> Steps,
                    llvm::ArrayRef<IOBinding> Inputs,
                    llvm::ArrayRef<IOBinding> Outputs, int64_t Alignment);

/// The arena of a program's activation buffers (\p Buffers: anything with
/// Bytes and IsConstant; constants live outside it) read and written by
/// \p Steps (anything with Reads and Writes): inputs live from before the
/// first step, outputs to after the last, everything else from its first
/// write to its last read, aligned to \p Alignment.
template <typename BufferRange, typename StepRange>
ArenaPlan planBufferArena(const BufferRange &Buffers, const StepRange &Steps,
                          llvm::ArrayRef<IOBinding> Inputs,
                          llvm::ArrayRef<IOBinding> Outputs,
                          int64_t Alignment) {
  std::vector<int64_t> Bytes;
  std::vector<uint8_t> Planned;
  for (const auto &B : Buffers) {
    Bytes.push_back(B.Bytes);
    Planned.push_back(!B.IsConstant);
  }
  std::vector<StepBuffers> Uses;
  for (const auto &S : Steps)
    Uses.push_back({S.Reads, S.Writes});
  return planArena(Bytes, Planned, Uses, Inputs, Outputs, Alignment);
}

/// The tensor each of \p Bindings reads on a run fed \p Inputs (by name,
/// logical shape, any layout): the caller's own where it is in the
/// binding's layout, else a relayout or the binding's default, made in
/// \p Made (which must outlive the result). Errors: an input the program
/// has not ("unknown input 'x'"), a missing one without a default, a
/// wrong element type or shape.
llvm::Expected<std::vector<const runtime::Tensor *>>
bindInputs(llvm::ArrayRef<IOBinding> Bindings,
           const std::map<std::string, runtime::Tensor> &Inputs,
           std::vector<runtime::Tensor> &Made);

} // namespace codegen
} // namespace strider

#endif // STRIDER_CODEGEN_LOWERING_H
