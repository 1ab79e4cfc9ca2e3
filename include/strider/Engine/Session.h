//===- Session.h - Load a model once, run it on any input shapes -*- C++
//-*-===//
//
// The execution layer the tools and the C API share. A Model is a graph as
// loaded (an ONNX file, textual IR, or a strider-compile directory),
// immutable after loading, so any number of sessions on any threads may
// use one. A Session runs it: for each distinct set of input shapes it
// specializes a copy of the graph to those shapes (symbolic dims bound,
// shape chains folded), optimizes it as strider-compile would (ONNX input
// only: canonicalize, layout assignment for the session's target) and
// lowers it for its backend, then caches the result, so that the next run
// with the same shapes starts at the kernels. Constant data and packed
// weights are the model's, shared by every session and specialization.
//
// Any number of threads may run one session at once: the cache is
// locked only to look a specialization up or to insert one (a build runs
// outside the lock, and threads that want the same one wait for it), and
// a CPU run takes an activation arena of its own from the session's pool
// (see docs/Embedding.md).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_ENGINE_SESSION_H
#define STRIDER_ENGINE_SESSION_H

#include "strider/Engine/Artifact.h"
#include "strider/IR/Types.h"
#include "strider/Runtime/DeviceTensor.h"
#include "strider/Runtime/Reference.h"
#include "strider/Transforms/Specialize.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace strider {

namespace layout {
class TuningTable;
}

class Graph;
class Value;

namespace cpu {
class ArenaPool;
class DerivedStore;
} // namespace cpu
namespace codegen {
class Backend;
class Executable;
} // namespace codegen

namespace engine {

struct LoadOptions {
  /// Refuse what ONNX Runtime tolerates in ONNX files (negative dim_value,
  /// declared shapes that contradict inference).
  bool Strict = false;
};

/// A model as loaded. Immutable: safe to share between threads.
class Model {
public:
  /// Loads \p Path: a `.strider` artifact (mapped and validated; see
  /// Artifact.h), `.lir` textual IR (parsed and verified), a
  /// strider-compile output directory (its model.strider, else model.lir,
  /// else model.onnx), or anything else as ONNX. Errors name the file
  /// read.
  static llvm::Expected<std::shared_ptr<const Model>>
  load(llvm::StringRef Path, const LoadOptions &Opts = LoadOptions());
  ~Model();

  /// The file the graph was read from (a directory's model.lir).
  const std::string &getFile() const { return File; }
  /// Imported from ONNX, so not optimized yet (sessions optimize it).
  bool isFromOnnx() const { return FromOnnx; }
  /// What the importer tolerated, one located line each.
  llvm::ArrayRef<std::string> getWarnings() const { return Warnings; }
  const Graph &getGraph() const { return *G; }
  /// The graph sessions that optimize an ONNX model specialize: the
  /// imported one after getPreparePipeline's shape-independent rewrites,
  /// made on first use (thread-safe) and shared by every session and
  /// specialization of the model. Other models, and ONNX models those
  /// rewrites refuse (a session's own pipeline then reports why), give
  /// getGraph().
  const Graph &getPreparedGraph() const;
  /// The constants the CPU backend derives from the weights (packed GEMM
  /// panels, depthwise taps): an artifact's, read from its file; for other
  /// models a store that the first specialization lowered fills and later
  /// ones, of every session of the model, read (cpu::DerivedStore).
  const std::shared_ptr<cpu::DerivedStore> &getDerived() const {
    return Derived;
  }
  /// Whether it was loaded from an artifact.
  bool isArtifact() const { return FromArtifact; }
  /// The sizes its dynamic input dims may take (an artifact compiled with
  /// shape ranges; empty: any the graph accepts). Sessions refuse others.
  llvm::ArrayRef<InputRange> getInputRanges() const { return Ranges; }
  /// Error unless the shapes in \p Shapes (by input name) lie in
  /// getInputRanges(), naming the input, dim, size and range.
  llvm::Error checkInputRanges(
      const std::map<std::string, std::vector<int64_t>> &Shapes) const;

  /// The inputs a caller feeds, in graph order: graph inputs without
  /// default data (inputs with defaults are constants unless a tool feeds
  /// them by name).
  llvm::ArrayRef<const Value *> getInputs() const { return Inputs; }
  llvm::ArrayRef<const Value *> getOutputs() const { return Outputs; }
  /// The inputs whose values decide which branch an If takes (small
  /// integer or bool inputs; findControlInputs): a specialization binds
  /// them to the values fed, so those Ifs fold into their taken branches.
  llvm::ArrayRef<const Value *> getControlInputs() const {
    return ControlInputs;
  }

private:
  Model() = default;
  std::unique_ptr<Graph> G;
  mutable std::once_flag PrepareOnce;
  mutable std::unique_ptr<Graph> Prepared;
  std::string File;
  bool FromOnnx = false;
  bool FromArtifact = false;
  std::shared_ptr<cpu::DerivedStore> Derived;
  std::vector<InputRange> Ranges;
  std::vector<std::string> Warnings;
  std::vector<const Value *> Inputs, Outputs, ControlInputs;
};

struct SessionOptions {
  /// The backend, by its name in the registry (codegen::getBackends()):
  /// cpu (the SIMD backend), cuda (needs a GPU), cuda-emulated (the CUDA
  /// backend's plan run on the host by host models of its kernels and
  /// library calls: slow, for checking what it computes without a GPU) or
  /// reference (the interpreter; the oracle).
  std::string Backend = "cpu";
  /// Threads each CPU kernel splits its work over.
  int Threads = 1;
  /// Run an ONNX model through strider-compile's pipeline (canonicalize,
  /// layout assignment); off runs it as imported. Compiled graphs keep
  /// their layouts either way.
  bool Optimize = true;
  /// Layout-assignment target of an ONNX model; empty: the backend's
  /// (on the CPU this machine's, cpu-avx512 or cpu-avx2, after the SIMD
  /// target the kernels use; on cuda the GPU's, cuda-sm90 from sm_90 on,
  /// else cuda-sm80).
  std::string Target;
  /// Sizes of symbolic dims beyond what the fed shapes bind (`--dim`).
  std::map<std::string, int64_t> Dims;
  /// The sizes dynamic input dims may take, as an artifact compiled with
  /// strider-compile --shape x=1x3x48x100..1000 records them: other sizes
  /// are refused. An optimized ONNX model is then optimized once for
  /// every shape in the ranges (layouts costed at their upper ends, as
  /// strider-compile does; other dynamic dims by size class, below), and
  /// a new shape is only specialized and lowered.
  std::vector<InputRange> InputRanges;
  /// How an optimized ONNX model with dynamic input dims (and no control
  /// inputs) is optimized for the shapes it is fed. False: once per size
  /// class, each dynamic dim's size rounded up to a power of two (a range's
  /// dim: the range's upper end); the class's graph keeps its dims
  /// dynamic, its layouts costed at the class's sizes, and each new shape
  /// of the class is only specialized and lowered (about half a per-shape
  /// build). True: each new shape optimized for itself, layouts costed at
  /// its own sizes, as strider-compile --shape at that shape does. Either
  /// way a shape's program depends on its shape only, not on the shapes
  /// run before it.
  bool OptimizePerShape = false;
  /// What the cache of specializations may keep: the least recently used
  /// one is evicted while more than MaxSpecializations are cached or the
  /// memory they hold of their own exceeds MaxCacheBytes (the constants
  /// their graphs made for their shapes, Specialization::OwnedBytes: the
  /// weights and packed weights are the model's, and a CPU session's
  /// programs run in one pool of activation arenas, as many as runs were
  /// in flight at once, whatever the number cached). The one just built
  /// is kept whatever its size.
  unsigned MaxSpecializations = 64;
  int64_t MaxCacheBytes = int64_t(1) << 30;
  /// The most one run may allocate on the host, in bytes (a program's
  /// activation arena; the reference backend's live tensors; the
  /// cuda-emulated backend's device memory); 0: the memory available on
  /// the machine when a shape's program is built. A shape whose program
  /// needs more is refused when it is built, saying how much it needs.
  uint64_t MaxMemory = 0;
  /// cuda: the device ordinal, and what convolutions and matmuls
  /// compute in (fp32, tf32, fp16 or bf16; fp16/bf16 run the
  /// assign-precision pass on ONNX input).
  int Device = 0;
  std::string Precision = "fp32";
  /// cuda: inputs and outputs through pinned host buffers
  /// (asynchronous copies); off copies from and to pageable memory.
  bool Pinned = true;
  /// Kernel times measured for Target (strider-compile --tune): layout
  /// assignment of ONNX models costs by them, and on cuda the
  /// convs run the cuDNN algorithms the table holds. Its target must be
  /// Target's, and a GPU table's precision Precision.
  std::shared_ptr<layout::TuningTable> Tuning;
  /// cuda-emulated: run kernel steps through the kernels' device
  /// code compiled for the host (cuda::EmulationMode::DeviceCode) instead
  /// of their host models.
  bool EmulateDeviceCode = false;
};

/// Whether this build and machine can run \p Opts' backend: a known name,
/// and for cuda a CUDA build, a known precision and device Opts.Device
/// present (cuda-emulated: the build and the precision) ("no CUDA device
/// on this machine", ...). Session::create checks this too; callers use it
/// to tell a missing backend from other errors.
llvm::Error checkBackendAvailable(const SessionOptions &Opts);

/// The graph and program for one set of input shapes.
struct Specialization {
  std::unique_ptr<Graph> G;
  /// The control inputs' values it was built for (see ValueKey); they are
  /// constants of G, no longer inputs.
  std::map<std::string, std::vector<int64_t>> BoundValues;
  SpecializeResult Specialized;
  /// What was done to the graph, in one line ("shapes specialized (N=1);
  /// optimized for cpu-avx512 (120 -> 80 nodes, 2 relayouts)").
  std::string Summary;
  /// The session's backend's program for G.
  std::unique_ptr<codegen::Executable> Program;
  /// Where its build's time went, in seconds: binding the shapes and
  /// folding (specialize), the optimizing pipeline (ONNX input; with
  /// assign-precision) and the backend's lowering.
  struct BuildTimes {
    double Specialize = 0, Optimize = 0, Lower = 0;
  } Times;
  /// Bytes of the constants its graph made for its shapes (what the
  /// cache counts against SessionOptions::MaxCacheBytes).
  int64_t OwnedBytes = 0;
  /// Runs of Program so far.
  std::atomic<uint64_t> Runs{0};
  /// Held through each run of a program that is not reentrant
  /// (Executable::isReentrant): its runs take turns.
  std::mutex RunLock;
  ~Specialization();
};

/// Element types and logical shapes of fed tensors, by input name: what a
/// specialization is keyed by.
using ShapeKey =
    std::map<std::string, std::pair<ElementType, std::vector<int64_t>>>;
/// Values of the fed control inputs (Model::getControlInputs()), by name,
/// in row-major order: the rest of a specialization's key.
using ValueKey = std::map<std::string, std::vector<int64_t>>;

class Session {
public:
  /// Checks \p Opts (threads >= 1, one thread for the reference backend,
  /// a known target, dims naming symbols of the model's inputs).
  static llvm::Expected<std::unique_ptr<Session>>
  create(std::shared_ptr<const Model> M, SessionOptions Opts);
  ~Session();

  /// The specialization for inputs of these types and shapes (every input
  /// of Model::getInputs() must be there; inputs with default data may
  /// be): the cached one, else a new one. Errors name the model file.
  /// A model with control inputs needs their values in \p Values. It stays
  /// valid while the caller holds it, evicted from the cache or not.
  llvm::Expected<std::shared_ptr<Specialization>>
  prepare(const ShapeKey &Key, const ValueKey &Values = {});
  /// prepare() for \p Inputs' shapes (any layout), then a run; the
  /// outputs, by name, each in the layout of its graph output.
  llvm::Expected<runtime::TensorMap> run(const runtime::TensorMap &Inputs);
  /// Runs \p S (from this session's prepare()). Control inputs in
  /// \p Inputs must hold the values \p S was built for.
  llvm::Expected<runtime::TensorMap> run(Specialization &S,
                                         const runtime::TensorMap &Inputs);
  /// run(S, Inputs), writing each output into the host tensor of its name
  /// in \p Outputs (its logical shape and element type, any layout; a
  /// runtime::Tensor::view writes into the caller's buffer) instead of
  /// returning new ones. Every output must be there.
  llvm::Error runInto(Specialization &S, const runtime::TensorMap &Inputs,
                      runtime::TensorMap &Outputs);
  /// Runs \p S on tensors in the memory of the session's device
  /// (a backend that runsOnDevice(), cuda; Executable::runOnDevice): inputs
  /// read and outputs written in place, in the caller's strides. Other
  /// backends: an error. Control inputs are not read (S holds the values it was
  /// prepared for).
  llvm::Error runOnDevice(Specialization &S,
                          const runtime::DeviceTensorMap &Inputs,
                          const runtime::DeviceTensorMap &Outputs);

  const Model &getModel() const { return *M; }
  const SessionOptions &getOptions() const { return Opts; }
  /// Specializations built so far (cache misses), and those cached now.
  unsigned getNumBuilt() const { return unsigned(getCacheStats().Builds); }
  size_t getNumCached() const;

  /// What the specialization cache did so far.
  struct CacheStats {
    /// Runs of a specialization an earlier run had used (cache hits), and
    /// specializations built (misses).
    uint64_t Hits = 0, Builds = 0;
    /// Seconds spent building (specializing, optimizing, lowering), in
    /// all and the last build.
    double BuildSeconds = 0, LastBuildSeconds = 0;
    /// The last build's phases.
    Specialization::BuildTimes LastBuild;
    /// Specializations evicted, and the bytes the cached ones hold now.
    uint64_t Evictions = 0;
    int64_t CachedBytes = 0;
    /// Size classes whose graph was optimized (SessionOptions::
    /// OptimizePerShape), and of those the ones whose graph could not be
    /// made (their shapes are optimized one by one).
    uint64_t SizeClasses = 0, FailedSizeClasses = 0;
  };
  CacheStats getCacheStats() const;

  /// Error unless the shapes of \p Key lie in the model's input ranges
  /// and the session's (SessionOptions::InputRanges).
  llvm::Error checkInputRanges(const ShapeKey &Key) const;

  static ShapeKey getKey(const runtime::TensorMap &Inputs);
  /// The values of the model's control inputs in \p Inputs (those fed).
  ValueKey getValueKey(const runtime::TensorMap &Inputs) const;

private:
  Session(std::shared_ptr<const Model> M, SessionOptions Opts,
          const codegen::Backend &B);
  /// \p Inputs without the control inputs \p S binds, as views in
  /// \p Rest, once their values are checked against S's.
  llvm::Error dropBoundInputs(const Specialization &S,
                              const runtime::TensorMap &Inputs,
                              runtime::TensorMap &Rest) const;
  llvm::Expected<std::unique_ptr<Specialization>> build(const ShapeKey &Key,
                                                        const ValueKey &Values);
  /// The sizes an optimized ONNX model's graph is optimized at for the
  /// shapes of a key (SessionOptions::OptimizePerShape): every input's fed
  /// shape with its dynamic dims (but those SessionOptions::Dims binds)
  /// at their class's size.
  struct SizeClass {
    /// The class's sizes, input after input (std::map order): its rank,
    /// then its dims.
    std::vector<int64_t> Id;
    ShapeBindings AtSizes;
    /// "x=1x3x48x512", for the specialization's summary.
    std::string Text;
  };
  /// \p Key's size class, or None where builds optimize each shape for
  /// itself (a model without dynamic input dims, or not an optimized ONNX
  /// model without control inputs, or OptimizePerShape without ranges).
  llvm::Optional<SizeClass> getSizeClass(const ShapeKey &Key) const;
  /// The prepared graph optimized once for \p C (its dims dynamic, its
  /// layouts costed at C's sizes), made at the class's first build.
  llvm::Expected<const Graph &> getClassGraph(const SizeClass &C);
  struct ClassGraph {
    std::once_flag Once;
    /// Set once G or Error is.
    std::atomic<bool> Done{false};
    std::unique_ptr<Graph> G;
    std::string Error;
  };
  /// Guards Classes (not what its entries hold: their Once does).
  mutable std::mutex ClassMutex;
  std::map<std::vector<int64_t>, std::unique_ptr<ClassGraph>> Classes;

  std::shared_ptr<const Model> M;
  SessionOptions Opts;
  /// The backend Opts.Backend names.
  const codegen::Backend *TheBackend;
  using CacheKey = std::pair<ShapeKey, ValueKey>;
  /// Counts a run of \p S (a hit unless it is its first).
  void countRun(Specialization &S);

  /// Guards Cache and Stats (but Hits, counted without it).
  mutable std::mutex CacheMutex;
  /// Signalled when a build ends.
  std::condition_variable Built;
  /// Most recently used first. A null specialization is being built by
  /// the thread that missed it first.
  std::list<std::pair<CacheKey, std::shared_ptr<Specialization>>> Cache;
  CacheStats Stats;
  std::atomic<uint64_t> Hits{0};
  /// Where the CPU backend's runs take their activation arenas: one pool
  /// for all of the session's programs, so a new shape reuses memory
  /// earlier runs touched and N concurrent runs hold N arenas.
  std::shared_ptr<cpu::ArenaPool> Arena;
};

/// The layout target of the CPU backend on this machine (cpu-avx512 or
/// cpu-avx2).
std::string getDefaultTarget();

} // namespace engine
} // namespace strider

#endif // STRIDER_ENGINE_SESSION_H
