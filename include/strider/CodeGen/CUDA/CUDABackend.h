//===- CUDABackend.h - Lowering to the CUDA backend -------------*- C++ -*-===//
//
// The CPU backend's twin for NVIDIA GPUs. A verified, shape-inferred graph
// (static shapes, layouts chosen, precisions assigned) is lowered in two
// stages:
//
// - planForCUDA (host code, no GPU needed): the fusion groups and the
//   activation arena of the CPU backend, and one step per kernel launch or
//   library call: convolutions through cuDNN, Gemm/MatMul through
//   cuBLASLt, everything else through the backend's own kernels. A plan is
//   plain data, printed by print() and tested on machines without a GPU.
// - Program::load: the plan on a device: one arena allocation, weights
//   uploaded and arranged once, the libraries' algorithms chosen, pinned
//   host buffers for inputs and outputs, and the whole program captured
//   once as a CUDA graph that every run() replays (no allocation and no
//   synchronization inside a run but the final one).
//
// Ops without a CUDA kernel are an error naming the node: there is no
// silent host fallback inside a GPU program.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_CUDA_CUDABACKEND_H
#define STRIDER_CODEGEN_CUDA_CUDABACKEND_H

#include "strider/CodeGen/Backend.h"
#include "strider/CodeGen/CUDA/Device.h"
#include "strider/Runtime/DeviceTensor.h"
#include "strider/Runtime/Reference.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace strider {

class Graph;

namespace cuda {

/// What convolutions and matmuls compute in (`--precision`). FP16 and
/// BF16 graphs come from the assign-precision pass (half values in the
/// graph); FP32 and TF32 differ only in the libraries' math mode.
enum class Precision : uint8_t { FP32, TF32, FP16, BF16 };
llvm::Optional<Precision> parsePrecision(llvm::StringRef Name);
llvm::StringRef getPrecisionName(Precision P);

struct CUDAOptions {
  int Device = 0;
  Precision Math = Precision::FP32;
  /// Inputs and outputs through pinned host buffers (asynchronous copies).
  bool Pinned = true;
  /// Capture the program once as a CUDA graph and replay it.
  bool UseGraph = true;
  /// Tuned library algorithms by conv/GEMM key (Libraries.h keys; from a
  /// cuda tuning file); others use the libraries' heuristics.
  std::map<std::string, std::string> Algorithms;
  /// Convs without a tuned algorithm time every algorithm cuDNN offers at
  /// load (cuDNN's find) and run the fastest, instead of taking the
  /// heuristic's choice: what `--tune` does on cuda targets.
  bool FindAlgorithms = false;
  /// Run each direction of a small LSTM or GRU in one launch (the
  /// recurrence loop kernel); off: a GEMM and gate kernels per step, as
  /// larger recurrences always run (tests of both forms, A/B timing).
  bool RecurrenceLoop = true;
};

/// A conv's algorithm as a loaded program runs it.
struct LibraryAlgorithm {
  std::string Key;  ///< The conv's key ("x=1x64x56x56 w=... f16").
  std::string Algo; ///< cuDNN's name for it ("IMPLICIT_PRECOMP_GEMM").
  /// With CUDAOptions::FindAlgorithms, what cuDNN's find measured for it
  /// (the conv alone); 0 when it was tuned or the heuristic's.
  double FoundNs = 0;
  uint64_t WorkspaceBytes = 0;
};

/// One step of a plan, for reports ("cudnn.conv nhwc>nhwc f16 +bias+relu";
/// Flops of the conv and GEMM steps; never a fallback).
using StepInfo = codegen::StepInfo;

class PlanImpl;

/// A lowered program, not yet on a device.
class Plan {
public:
  explicit Plan(std::unique_ptr<PlanImpl> Impl);
  ~Plan();
  Plan(const Plan &) = delete;
  Plan &operator=(const Plan &) = delete;

  llvm::ArrayRef<StepInfo> getSteps() const;
  /// Bytes of the device arena holding every activation, and of the
  /// constants uploaded at load (weights in their device form).
  int64_t getArenaBytes() const;
  int64_t getConstantBytes() const;
  /// One line per step, then the arena and constant totals.
  void print(llvm::raw_ostream &OS) const;
  PlanImpl &getImpl() { return *Impl; }
  const PlanImpl &getImpl() const { return *Impl; }

private:
  std::unique_ptr<PlanImpl> Impl;
};

/// Lowers \p G (host only). Errors, located at the node, for dynamic
/// shapes, element types the backend does not hold and ops it has no
/// kernel for. \p G must outlive the plan.
llvm::Expected<std::unique_ptr<Plan>> planForCUDA(const Graph &G,
                                                  const CUDAOptions &Opts);

/// How emulateOnHost runs the steps of the backend's own kernels.
enum class EmulationMode {
  /// Host models of the kernels, which share the kernels' per-element code
  /// where there is some: checks the plan.
  Models,
  /// The kernels' device code itself, compiled for the host, every block
  /// and thread of each launch run by a scheduler that honours barriers
  /// and warp shuffles: checks the plan and the kernels' own indexing,
  /// tiling, vectorized paths and synchronization. Slower.
  DeviceCode,
};

/// Runs \p P on the host, without a GPU: the arena laid out as on the
/// device, every step in program order. Kernel steps run as \p Mode says;
/// library steps through plain loops over their descriptors (what cuDNN's
/// convolutions and cuBLASLt's GEMMs compute). Storage types are rounded
/// as the device rounds them. The outputs in the identity layout, or the
/// error a kernel would report (a bad index), or a launch the device
/// would refuse. For tests and the fuzzer: slow, and blind to the
/// libraries themselves and to races between threads.
llvm::Expected<runtime::TensorMap>
emulateOnHost(const Plan &P, const runtime::TensorMap &Inputs,
              EmulationMode Mode = EmulationMode::Models);

class ProgramImpl;

/// A plan loaded on a device. Not reentrant: one run at a time.
class Program final : public codegen::Executable {
public:
  /// Loads \p P on the device \p Opts names (see the file comment).
  static llvm::Expected<std::unique_ptr<Program>> load(std::unique_ptr<Plan> P,
                                                       const CUDAOptions &Opts);
  ~Program() override;
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;

  /// As cpu::Program::run: inputs by name in any layout, outputs in their
  /// graph layouts.
  llvm::Expected<runtime::TensorMap>
  run(const runtime::TensorMap &Inputs) override;
  /// As cpu::Program::runInto: run(), each output written into the host
  /// tensor of its name in \p Outputs (a Tensor::view of the caller's
  /// buffer is written in place).
  llvm::Error runInto(const runtime::TensorMap &Inputs,
                      runtime::TensorMap &Outputs) override;
  /// A run on the caller's device memory (on this program's device):
  /// each input is copied into the arena by a strided copy kernel (any
  /// strides; the binding's layout applied on the way), and each output
  /// written into the caller's tensor in its strides. Every output must be
  /// given; an input not given takes its default, if it has one. No host
  /// copy of activations; one synchronization at the end. The program runs
  /// on a stream of its own that does not wait for the caller's work: the
  /// inputs must be written (the caller's stream synchronized) before the
  /// call.
  llvm::Error runOnDevice(const runtime::DeviceTensorMap &Inputs,
                          const runtime::DeviceTensorMap &Outputs) override;

  llvm::ArrayRef<StepInfo> getSteps() const override;
  /// With profiling on, run() records a CUDA event after each step (in a
  /// second capture of the steps, replayed; step by step where that
  /// capture fails) and adds each step's time (seconds).
  void setProfiling(bool On) override;
  llvm::ArrayRef<double> getStepSeconds() const override;
  unsigned getProfiledRuns() const override;
  /// Replays the program's steps \p Reps times back to back on the data
  /// the arena holds (a run() first puts inputs there), as its CUDA graph
  /// (or step by step when it has none), and returns the device time per
  /// replay in nanoseconds: what a kernel costs inside a program, launch
  /// latency overlapped, as strider-compile --tune measures it.
  llvm::Expected<double> timeReplays(unsigned Reps);
  int64_t getArenaBytes() const override;
  /// Bytes of the constants uploaded at load (Plan::getConstantBytes).
  int64_t getConstantBytes() const override;
  /// The algorithm of each conv step, in step order.
  llvm::ArrayRef<LibraryAlgorithm> getConvAlgorithms() const;
  /// "NVIDIA H100 80GB HBM3 (sm_90)".
  std::string getDeviceName() const;
  std::string getKernelTarget() const override { return getDeviceName(); }
  /// The libraries this program loaded, with their versions: cuDNN only
  /// if it has conv steps, cuBLASLt only if it has GEMM steps.
  std::vector<std::string> getLibraries() const;
  /// The device, every step, the arena, the libraries and each conv's
  /// algorithm.
  void print(llvm::raw_ostream &OS) const override;
  /// PinnedHostMemory::pin.
  llvm::Expected<std::unique_ptr<codegen::HostPin>>
  pinHostMemory(void *Ptr, size_t Bytes) override;

private:
  explicit Program(std::unique_ptr<ProgramImpl> Impl);
  /// run() (\p Given false: Outputs filled) and runInto() (true).
  llvm::Error runTo(const runtime::TensorMap &Inputs,
                    runtime::TensorMap &Outputs, bool Given);
  std::unique_ptr<ProgramImpl> Impl;
};

/// Page-locks a caller's host memory while it lives (cudaHostRegister), as
/// an application that pins its input buffers does: Program::run copies
/// inputs in page-locked memory to the device directly, where pageable
/// ones go through its staging buffers first.
class PinnedHostMemory final : public codegen::HostPin {
public:
  static llvm::Expected<std::unique_ptr<PinnedHostMemory>> pin(void *Ptr,
                                                               size_t Bytes);
  ~PinnedHostMemory() override;
  PinnedHostMemory(const PinnedHostMemory &) = delete;
  PinnedHostMemory &operator=(const PinnedHostMemory &) = delete;

private:
  explicit PinnedHostMemory(void *Ptr);
  void *Ptr;
};

/// planForCUDA then Program::load.
llvm::Expected<std::unique_ptr<Program>>
compileForCUDA(const Graph &G, const CUDAOptions &Opts);

/// The CUDA backend as the registry lists it: "cuda" (programs loaded on
/// a GPU) and "cuda-emulated" (plans run on the host by emulateOnHost).
const codegen::Backend &getBackend();
const codegen::Backend &getEmulatedBackend();

} // namespace cuda
} // namespace strider

#endif // STRIDER_CODEGEN_CUDA_CUDABACKEND_H
