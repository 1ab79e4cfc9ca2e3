//===- Backend.cpp - The CUDA backend as the registry lists it ------------===//
//
// Two entries of the backend registry: "cuda", plans loaded on a GPU, and
// "cuda-emulated", the same plans run on the host by emulateOnHost (no
// GPU; slow), plus the --verbose report of a loaded program.
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

#include "strider/CodeGen/CUDA/CUDABackend.h"
#include "strider/CodeGen/CUDA/Tuning.h"
#include "strider/IR/Diagnostics.h"
#include "strider/Layout/Tuning.h"
#include "strider/Support/Memory.h"

#include "llvm/Support/raw_ostream.h"

using namespace strider;
using namespace strider::cuda;

void Program::print(llvm::raw_ostream &OS) const {
  OS << "cuda program on " << getDeviceName() << ", " << getSteps().size()
     << " steps:\n";
  for (const StepInfo &Step : getSteps())
    OS << "  " << Step.Kernel << " -> " << Step.Nodes << "\n";
  OS << "activation arena: " << getArenaBytes() << " bytes\n";
  for (const std::string &Lib : getLibraries())
    OS << "library: " << Lib << "\n";
  for (const LibraryAlgorithm &A : getConvAlgorithms())
    OS << "conv algorithm: " << A.Algo << " (workspace " << A.WorkspaceBytes
       << " bytes) for " << A.Key << "\n";
}

llvm::Expected<std::unique_ptr<codegen::HostPin>>
Program::pinHostMemory(void *Ptr, size_t Bytes) {
  auto Pin = PinnedHostMemory::pin(Ptr, Bytes);
  if (!Pin)
    return Pin.takeError();
  return std::unique_ptr<codegen::HostPin>(std::move(*Pin));
}

namespace {

/// A plan run on the host (cuda-emulated).
class EmulatedProgram final : public codegen::Executable {
public:
  EmulatedProgram(std::unique_ptr<Plan> P, EmulationMode Mode)
      : ThePlan(std::move(P)), Mode(Mode) {}
  llvm::Expected<runtime::TensorMap>
  run(const runtime::TensorMap &Inputs) override {
    return emulateOnHost(*ThePlan, Inputs, Mode);
  }
  llvm::ArrayRef<StepInfo> getSteps() const override {
    return ThePlan->getSteps();
  }
  int64_t getArenaBytes() const override { return ThePlan->getArenaBytes(); }
  int64_t getConstantBytes() const override {
    return ThePlan->getConstantBytes();
  }
  std::string getKernelTarget() const override {
    return Mode == EmulationMode::DeviceCode ? "host (device code)"
                                             : "host (kernel models)";
  }
  /// The plan (Plan::print): one line per step, the arena and constants.
  void print(llvm::raw_ostream &OS) const override { ThePlan->print(OS); }

private:
  std::unique_ptr<Plan> ThePlan;
  EmulationMode Mode;
};

/// The target of GPU \p Device's architecture; cuda-sm90 when there is no
/// such device (the cuda entry's checkAvailable refuses it).
std::string getTargetOf(int Device) {
  auto T = getDeviceTarget(Device);
  if (T)
    return *T;
  llvm::consumeError(T.takeError());
  return "cuda-sm90";
}

/// \p Opts as the CUDA backend takes them (the precision it computes in
/// checked), for a program on device Opts.Device.
llvm::Expected<CUDAOptions>
getCUDAOptions(const codegen::BackendOptions &Opts) {
  llvm::Optional<Precision> Math = parsePrecision(Opts.Precision);
  if (!Math)
    return makeError("unknown precision '" + Opts.Precision +
                     "' (fp32, tf32, fp16 or bf16)");
  CUDAOptions CO;
  CO.Device = Opts.Device;
  CO.Math = *Math;
  CO.Pinned = Opts.Pinned;
  if (Opts.Tuning)
    CO.Algorithms = getTunedAlgorithms(*Opts.Tuning);
  return CO;
}

/// Ops the CUDA backend has no kernel for: a graph with one is refused,
/// naming the node (there is no host fallback inside a GPU program).
/// QLinearConv, ConvInteger, lookup and qbinary: the cuda targets keep
/// quantized convs and elementwise ops in their float form
/// (TargetDescription::HasInt8), so only a graph written with one (textual
/// IR) reaches the backend.
const std::initializer_list<OpId> UnsupportedOps = {
    OpId::QLinearConv, OpId::ConvInteger, OpId::Lookup, OpId::QBinary};

/// What both entries share: the options, the targets, the default target,
/// the ops.
class CUDABackendBase : public codegen::Backend {
public:
  codegen::OpSupport getOpSupport(OpId Id) const override {
    if (hasPlanner(Id))
      return codegen::OpSupport::Kernel;
    if (hasOpTrait(Id, optrait::CompileTime))
      return codegen::OpSupport::CompileTime;
    if (llvm::is_contained(UnsupportedOps, Id))
      return codegen::OpSupport::Unsupported;
    return codegen::OpSupport::Unlisted;
  }
  llvm::Error checkOptions(const codegen::BackendOptions &Opts) const override {
    return getCUDAOptions(Opts).takeError();
  }
  std::string
  getDefaultTarget(const codegen::BackendOptions &Opts) const override {
    return getTargetOf(Opts.Device);
  }
  bool servesTarget(llvm::StringRef Target) const override {
    return Target.startswith("cuda-");
  }
};

class CUDABackend final : public CUDABackendBase {
public:
  llvm::StringRef getName() const override { return "cuda"; }
  llvm::StringRef getDescription() const override {
    return "the CUDA backend on a GPU (cuDNN, cuBLASLt, its own kernels)";
  }
  llvm::Error
  checkAvailable(const codegen::BackendOptions &Opts) const override {
    return checkDevice(Opts.Device);
  }
  bool runsOnDevice() const override { return true; }
  bool canTune() const override { return true; }
  llvm::Error
  prepareTuningTable(layout::TuningTable &Table,
                     const codegen::BackendOptions &Opts) const override {
    if (llvm::Error E = checkOptions(Opts))
      return E;
    auto Device = getDeviceName(Opts.Device);
    if (!Device)
      return Device.takeError();
    auto Describe = [](const std::string &Dev, const std::string &Prec) {
      return (Dev.empty() ? std::string("no device") : Dev) + " at " +
             (Prec.empty() ? std::string("fp32") : Prec);
    };
    return codegen::matchTuningMachine(Table,
                                       Describe(Table.Device, Table.Precision),
                                       Describe(*Device, Opts.Precision), [&] {
                                         Table.Device = *Device;
                                         Table.Precision = Opts.Precision;
                                       });
  }
  llvm::Error tune(const Graph &G, const layout::DimBindings &Dims,
                   const codegen::BackendOptions &Opts,
                   const codegen::TuneDriverOptions &Timing,
                   layout::TuningTable &Table,
                   codegen::TuneStats *Stats) const override {
    auto CO = getCUDAOptions(Opts);
    if (!CO)
      return CO.takeError();
    TuneOptions TO;
    TO.Device = Opts.Device;
    TO.Math = CO->Math;
    TO.Timing = Timing;
    return tuneGraph(G, Dims, TO, Table, Stats);
  }
  llvm::Expected<std::unique_ptr<codegen::Executable>>
  compile(const Graph &G, const codegen::BackendOptions &Opts) const override {
    auto CO = getCUDAOptions(Opts);
    if (!CO)
      return CO.takeError();
    auto P = compileForCUDA(G, *CO);
    if (!P)
      return P.takeError();
    return std::unique_ptr<codegen::Executable>(std::move(*P));
  }
};

class CUDAEmulatedBackend final : public CUDABackendBase {
public:
  llvm::StringRef getName() const override { return "cuda-emulated"; }
  llvm::StringRef getDescription() const override {
    return "the CUDA backend's plan run on the host (no GPU; slow)";
  }
  llvm::Expected<std::unique_ptr<codegen::Executable>>
  compile(const Graph &G, const codegen::BackendOptions &Opts) const override {
    auto CO = getCUDAOptions(Opts);
    if (!CO)
      return CO.takeError();
    if (llvm::Error E = codegen::checkLargestTensor(G, Opts.MaxMemory,
                                                    "emulated device memory"))
      return E;
    auto P = planForCUDA(G, *CO);
    if (!P)
      return P.takeError();
    // The emulator's device memory is the host's: the arena and a copy
    // of every constant.
    std::string TooBig = checkMemoryBudget(
        uint64_t((*P)->getArenaBytes()) + uint64_t((*P)->getConstantBytes()),
        "emulated device memory", Opts.MaxMemory);
    if (!TooBig.empty())
      return codegen::makeTooBigError(G, TooBig);
    return std::unique_ptr<codegen::Executable>(new EmulatedProgram(
        std::move(*P), Opts.EmulateDeviceCode ? EmulationMode::DeviceCode
                                              : EmulationMode::Models));
  }
};

} // namespace

const codegen::Backend &cuda::getBackend() {
  static const CUDABackend B;
  return B;
}

const codegen::Backend &cuda::getEmulatedBackend() {
  static const CUDAEmulatedBackend B;
  return B;
}
