//===- Backend.h - The interface every backend implements -------*- C++ -*-===//
//
// A backend turns a lowered graph (static shapes, layouts chosen) into an
// Executable: something that runs on tensors, says what kernels it calls
// and how much memory it holds. The engine, the C API, the tools and the
// conformance harness reach every backend through this interface and the
// registry (CodeGen/Registry/BackendRegistry.h), never by its own types.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_BACKEND_H
#define STRIDER_CODEGEN_BACKEND_H

#include "strider/IR/OpInfo.h"
#include "strider/Runtime/DeviceTensor.h"
#include "strider/Runtime/Reference.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>

namespace llvm {
class raw_ostream;
}

namespace strider {

class Graph;

namespace layout {
class DimBindings;
class TuningTable;
} // namespace layout
namespace cpu {
class ArenaPool;
class DerivedStore;
} // namespace cpu

namespace codegen {

struct TuneDriverOptions;
struct TuneStats;

/// One kernel call or library call of a program, for reports (--verbose,
/// --profile).
struct StepInfo {
  std::string Nodes;     ///< The node(s) it computes, by result name.
  std::string Kernel;    ///< Which kernel: "conv.nhwc+bias+add+relu", ...
  bool Fallback = false; ///< Runs the reference kernel (the slow path).
  /// Floating-point operations of one call (2 per multiply-add) for the
  /// matrix kernels, 0 where not counted.
  int64_t Flops = 0;
};

/// Host memory kept page-locked for a backend while this object lives
/// (Executable::pinHostMemory).
class HostPin {
public:
  virtual ~HostPin();
};

/// A program a backend made for one graph. Not reentrant: one run at a
/// time.
class Executable {
public:
  virtual ~Executable();

  /// Runs the program: \p Inputs by name, logical shape, any layout (those
  /// with defaults may be left out); returns the graph outputs in their
  /// declared layouts.
  virtual llvm::Expected<runtime::TensorMap>
  run(const runtime::TensorMap &Inputs) = 0;
  /// run(), writing each graph output into the host tensor of its name in
  /// \p Outputs (its logical shape and element type, any layout; a
  /// runtime::Tensor::view writes into the caller's buffer). Every output
  /// must be there. By default run()'s results are copied there.
  virtual llvm::Error runInto(const runtime::TensorMap &Inputs,
                              runtime::TensorMap &Outputs);
  /// A run on tensors in the memory of the backend's device, read and
  /// written in place in the caller's strides. By default an error: the
  /// program runs on the host.
  virtual llvm::Error runOnDevice(const runtime::DeviceTensorMap &Inputs,
                                  const runtime::DeviceTensorMap &Outputs);

  /// Whether runs may overlap: any number of threads may call run() and
  /// runInto() at once (each run then has storage of its own). Where not,
  /// callers serialize the runs of one program (engine::Session does).
  virtual bool isReentrant() const { return false; }

  /// The program's steps in run order (empty for an interpreter).
  virtual llvm::ArrayRef<StepInfo> getSteps() const { return {}; }
  /// With profiling on, run() adds each step's time to a total per step
  /// (seconds; in the order of getSteps()) and counts the runs.
  virtual void setProfiling(bool On) { (void)On; }
  virtual llvm::ArrayRef<double> getStepSeconds() const { return {}; }
  virtual unsigned getProfiledRuns() const { return 0; }
  /// Steps that run reference kernels.
  unsigned getNumFallbacks() const;

  /// Bytes of the arena holding every activation, of those activations
  /// without reuse, and of the constants the steps read (0 where the
  /// backend does not plan them).
  virtual int64_t getArenaBytes() const { return 0; }
  virtual int64_t getUnplannedBytes() const { return 0; }
  virtual int64_t getConstantBytes() const { return 0; }
  /// What the steps run on, for reports: the SIMD target ("AVX3"), the GPU
  /// ("NVIDIA H100 80GB HBM3 (sm_90)"); empty for an interpreter.
  virtual std::string getKernelTarget() const { return ""; }
  /// --verbose: the program's steps and memory, a few lines.
  virtual void print(llvm::raw_ostream &OS) const { (void)OS; }

  /// Page-locks \p Bytes at \p Ptr, host memory the caller will feed to
  /// run() for as long as the result lives, where the backend copies
  /// page-locked memory faster (a GPU); null where it makes no difference.
  virtual llvm::Expected<std::unique_ptr<HostPin>> pinHostMemory(void *Ptr,
                                                                 size_t Bytes) {
    (void)Ptr;
    (void)Bytes;
    return nullptr;
  }
};

/// How a backend runs an op (Backend::getOpSupport).
enum class OpSupport : uint8_t {
  /// A lowering of its own (which may still decline an unusual form of the
  /// op at compile time: an element type, an attribute).
  Kernel,
  /// The reference kernel, inside the backend's programs: the slow path,
  /// a gap to close (strider-run warns where a model hits one).
  Reference,
  /// Not at all: compiling a graph with it is an error naming the node.
  Unsupported,
  /// Never reaches a backend: computed or inlined before lowering (the
  /// op's CompileTime trait).
  CompileTime,
  /// Neither lowered nor declined: the backend's op table lacks the op.
  Unlisted,
};

/// What a session or tool asks of a backend; each backend reads the
/// fields that concern it and refuses values it cannot honour.
struct BackendOptions {
  /// Threads each kernel splits its work over.
  int Threads = 1;
  /// The device ordinal (GPU backends).
  int Device = 0;
  /// What convolutions and matmuls compute in: fp32, tf32, fp16 or bf16.
  std::string Precision = "fp32";
  /// Inputs and outputs through pinned host buffers (GPU backends).
  bool Pinned = true;
  /// cuda-emulated: kernel steps through the kernels' device code
  /// compiled for the host instead of their host models.
  bool EmulateDeviceCode = false;
  /// Kernel times measured for the session's target (library algorithms
  /// of a GPU table are run as tuned).
  std::shared_ptr<layout::TuningTable> Tuning;
  /// Derived constants to reuse and record (the CPU backend's packed
  /// weights of an artifact).
  std::shared_ptr<cpu::DerivedStore> Derived;
  /// Where the CPU backend's programs take the activation arenas of their
  /// runs (a session's pool, shared by its programs); null: each program
  /// has its own.
  std::shared_ptr<cpu::ArenaPool> Arena;
  /// The most a run may allocate on the host (activation arenas, the
  /// reference interpreter's live tensors), in bytes; 0: the memory
  /// available on this machine when the program is compiled. A program
  /// needing more is refused by compile() (strider/Support/Memory.h).
  uint64_t MaxMemory = 0;
};

/// A backend, registered by name (see BackendRegistry.h).
class Backend {
public:
  virtual ~Backend();
  /// The name users pass (`--backend=NAME`): "cpu", "cuda", ...
  virtual llvm::StringRef getName() const = 0;
  /// One line for --help.
  virtual llvm::StringRef getDescription() const = 0;
  /// Refuses options the backend cannot take (a precision a CPU backend
  /// does not compute in, threads on the interpreter), whatever machine.
  virtual llvm::Error checkOptions(const BackendOptions &Opts) const = 0;
  /// Whether this build and machine can run it with \p Opts (a GPU
  /// backend: device Opts.Device present).
  virtual llvm::Error checkAvailable(const BackendOptions &Opts) const {
    (void)Opts;
    return llvm::Error::success();
  }
  /// The layout-assignment target of models compiled for it when the
  /// caller names none: this machine's CPU, the GPU's architecture.
  virtual std::string getDefaultTarget(const BackendOptions &Opts) const = 0;
  /// Whether graphs laid out for layout target \p Target ("cpu-avx2",
  /// "cuda-sm90") are its to run.
  virtual bool servesTarget(llvm::StringRef Target) const = 0;
  /// Whether its programs run on a device (a GPU), reading and writing
  /// tensors in its memory (Executable::runOnDevice); compile() then needs
  /// that device.
  virtual bool runsOnDevice() const { return false; }
  /// How its programs run op \p Id: every op must be lowered or declined
  /// explicitly (BackendRegistryTest fails on an Unlisted one).
  virtual OpSupport getOpSupport(OpId Id) const = 0;
  /// Lowers \p G (verified, static shapes, layouts chosen) for \p Opts.
  /// \p G must outlive the result. Errors are located at the node.
  virtual llvm::Expected<std::unique_ptr<Executable>>
  compile(const Graph &G, const BackendOptions &Opts) const = 0;

  /// `--tune`: whether the backend times kernels into tuning tables.
  virtual bool canTune() const { return false; }
  /// Readies \p Table for measurements taken with \p Opts: an empty table
  /// records the machine they are taken on (the SIMD target and threads;
  /// the GPU and precision), a filled one must hold that machine's times
  /// ("measured with X; this run would add Y" otherwise). A GPU backend
  /// also refuses a precision it does not compute in or a missing device.
  virtual llvm::Error prepareTuningTable(layout::TuningTable &Table,
                                         const BackendOptions &Opts) const;
  /// Measures what \p Table lacks for \p G (shape-inferred, \p Dims
  /// bound) with \p Opts and adds it. Errors name the conv whose program
  /// failed.
  virtual llvm::Error tune(const Graph &G, const layout::DimBindings &Dims,
                           const BackendOptions &Opts,
                           const TuneDriverOptions &Timing,
                           layout::TuningTable &Table, TuneStats *Stats) const;
};

/// For Backend::prepareTuningTable: a table without entries is the
/// measurements' now (\p Record sets its machine fields); one with entries
/// must have been measured on the machine this run would measure on
/// (\p Have and \p Want describe the two: "AVX3 kernels on 1 thread(s)").
llvm::Error matchTuningMachine(layout::TuningTable &Table,
                               const std::string &Have, const std::string &Want,
                               llvm::function_ref<void()> Record);

} // namespace codegen
} // namespace strider

#endif // STRIDER_CODEGEN_BACKEND_H
