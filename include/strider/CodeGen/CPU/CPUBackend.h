//===- CPUBackend.h - Lowering to the CPU SIMD backend ----------*- C++ -*-===//
//
// Lowers a verified, shape-inferred IR graph (static shapes, layouts
// chosen) to a Program: a sequence of kernel calls with static shapes,
// buffers placed in one arena by a liveness-based memory planner, and
// constants packed at compile time into the blocking each kernel wants.
// Convolutions, Gemm/MatMul, pooling, elementwise chains, concats and
// relayouts have SIMD kernels (Highway, dispatched at run time to the
// machine's best target); every other op runs its reference kernel on the
// same buffers (a fallback, listed by getSteps()).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_CPU_CPUBACKEND_H
#define STRIDER_CODEGEN_CPU_CPUBACKEND_H

#include "strider/CodeGen/Backend.h"
#include "strider/IR/TensorData.h"
#include "strider/Runtime/Reference.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace strider {

class Graph;

namespace cpu {

/// Constant data the lowering derives from a graph's weights (GEMM
/// panels, reordered depthwise taps), under keys that name the node, what
/// was derived and the SIMD blocking it was derived for. A lowering looks
/// each array up here before computing it, and reports what it computed:
/// a compiled artifact is a store filled by one lowering and read by the
/// next, which then never reads the weights it was packed from; a model's
/// store (engine::Model) is filled by the lowering of one specialization
/// and read by the others.
///
/// Each array also names its source: the constant it was derived from
/// (null when it is not one constant's). A store that serves other graphs
/// than the one whose node names its keys hold (the model's, shared by
/// specializations whose rewrites may fold other weights under the same
/// node name) returns an entry only for the same source.
class DerivedStore {
public:
  virtual ~DerivedStore() = default;
  /// The \p Count floats stored under \p Key for \p Source (64-byte
  /// aligned, readable up to the next multiple of 16 floats), or null.
  virtual std::shared_ptr<const float> find(llvm::StringRef Key, size_t Count,
                                            const TensorData *Source) const = 0;
  /// \p Data (\p Count floats) was derived under \p Key from \p Source.
  virtual void add(llvm::StringRef Key, std::shared_ptr<const float> Data,
                   size_t Count, const TensorDataRef &Source) = 0;
};

/// A store for the specializations of one graph: thread-safe, keeping
/// every array added until it is destroyed; an entry is found only for the
/// source it was derived from (and a later add under its key replaces it).
class SharedDerivedStore final : public DerivedStore {
public:
  SharedDerivedStore();
  ~SharedDerivedStore() override;
  std::shared_ptr<const float> find(llvm::StringRef Key, size_t Count,
                                    const TensorData *Source) const override;
  void add(llvm::StringRef Key, std::shared_ptr<const float> Data,
           size_t Count, const TensorDataRef &Source) override;
  /// Lookups that found an array, arrays added, and the bytes held.
  uint64_t getNumFound() const;
  uint64_t getNumAdded() const;
  uint64_t getBytes() const;

private:
  struct Impl;
  std::unique_ptr<Impl> I;
};

/// The activation arenas that runs of programs take and give back: one
/// pool serves every program of a session (or one program), and holds as
/// many arenas as runs were ever in flight at once. A run takes a free
/// arena of at least its program's size and returns it when it ends, so
/// runs one after another reuse the memory earlier runs touched, and N
/// concurrent runs hold N arenas. An arena is a block of address space
/// reserved inaccessible (no commit charge) whose prefix is opened as the
/// runs it serves need it; pages become memory as they are touched. With
/// no reservation, or one that fails or is too small, an arena is an
/// ordinary zeroed allocation. Thread-safe; programs keep their pool
/// alive.
class ArenaPool {
public:
  /// Each arena reserves \p ReserveBytes of address space (0: arenas are
  /// ordinary allocations of the size asked for).
  explicit ArenaPool(size_t ReserveBytes);
  ~ArenaPool();
  ArenaPool(const ArenaPool &) = delete;
  ArenaPool &operator=(const ArenaPool &) = delete;

  /// A free arena of at least \p Bytes, 64-byte aligned, holding what an
  /// earlier run left there (zeros the first time), or null when the
  /// memory cannot be had. Give it back with release().
  uint8_t *acquire(size_t Bytes);
  void release(uint8_t *Arena);

  /// Arenas made so far (the most held at once), the largest size asked
  /// for, and the acquire() calls served.
  size_t getNumArenas() const;
  size_t getLargest() const;
  uint64_t getNumAcquired() const;

private:
  const size_t ReserveBytes;
  struct State;
  std::unique_ptr<State> S;
};

struct CPUOptions {
  /// Threads each kernel splits its work over (1: the caller's thread).
  int Threads = 1;
  /// Derived constants to reuse and record; null: everything is derived
  /// from the weights. The program keeps a reference.
  std::shared_ptr<DerivedStore> Derived;
  /// Where runs take their activation arenas (see ArenaPool); null: a
  /// pool of the program's own, of ordinary allocations.
  std::shared_ptr<ArenaPool> Arena;
  /// The most a run's activation arena may take (codegen::BackendOptions).
  uint64_t MaxMemory = 0;
};

/// One kernel call of a program, for reports (--verbose).
using StepInfo = codegen::StepInfo;

class ProgramImpl;

/// An executable program. Reentrant: any number of threads may run it at
/// once, each run in an arena of its own from the program's ArenaPool
/// (setProfiling must not race with runs).
class Program final : public codegen::Executable {
public:
  explicit Program(std::unique_ptr<ProgramImpl> Impl);
  ~Program() override;
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;

  /// Runs the program: \p Inputs as for runtime::runReference (by name,
  /// logical shape, any layout); returns the graph outputs in their
  /// declared layouts.
  llvm::Expected<runtime::TensorMap>
  run(const runtime::TensorMap &Inputs) override;
  /// run(), writing each graph output into the tensor of its name in
  /// \p Outputs (its logical shape and element type, any layout; a
  /// Tensor::view of the caller's buffer writes there) instead of a new
  /// one. Every output must be there.
  llvm::Error runInto(const runtime::TensorMap &Inputs,
                      runtime::TensorMap &Outputs) override;

  bool isReentrant() const override { return true; }
  llvm::ArrayRef<StepInfo> getSteps() const override;
  /// With profiling on, run() adds each step's wall time to a total per
  /// step (seconds; in the order of getSteps()), and counts the runs.
  void setProfiling(bool On) override;
  llvm::ArrayRef<double> getStepSeconds() const override;
  unsigned getProfiledRuns() const override;
  /// Bytes of the arena holding every activation (inputs and outputs
  /// included), and the sum of their sizes without reuse.
  int64_t getArenaBytes() const override;
  int64_t getUnplannedBytes() const override;
  /// Bytes of the constants the steps read: packed weights (derived here
  /// or taken from a DerivedStore) and constants read as they are.
  int64_t getConstantBytes() const override;
  /// The SIMD target the kernels dispatched to ("AVX3", "AVX2", ...).
  static std::string getSimdTarget();
  std::string getKernelTarget() const override { return getSimdTarget(); }
  /// The SIMD target, every kernel call (fallbacks marked) and the
  /// memory plan.
  void print(llvm::raw_ostream &OS) const override;

private:
  std::unique_ptr<ProgramImpl> Impl;
};

/// What derived constants depend on besides the graph: the SIMD target
/// and GEMM blocking of this machine's kernels ("AVX3 mr8 nr32").
std::string getDerivedFormat();

/// Lowers \p G. Errors (located at the node) for dynamic shapes or element
/// types the backend cannot hold. \p G must outlive the program: steps
/// that run reference kernels read their node's attributes.
llvm::Expected<std::unique_ptr<Program>> compileForCPU(const Graph &G,
                                                       const CPUOptions &Opts);

/// The CPU backend ("cpu") as the registry lists it: compileForCPU, f32
/// only, the layout target of this machine's SIMD target.
const codegen::Backend &getBackend();

} // namespace cpu
} // namespace strider

#endif // STRIDER_CODEGEN_CPU_CPUBACKEND_H
