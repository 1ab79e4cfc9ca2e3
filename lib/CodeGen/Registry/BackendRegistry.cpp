//===- BackendRegistry.cpp - Every backend of this build, by name ---------===//
//
// The one registration point: each backend library exports its entries,
// and this file lists them. A backend this build was configured without
// keeps its name, with an entry that says why it cannot run.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/Registry/BackendRegistry.h"
#include "ReferenceBackend.h"

#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/IR/Diagnostics.h"
#if STRIDER_HAS_CUDA
#include "strider/CodeGen/CUDA/CUDABackend.h"
#endif

#include <array>

using namespace strider;
using namespace strider::codegen;

namespace {

#if !STRIDER_HAS_CUDA
/// A CUDA backend this build has no code for: known by name, serving the
/// cuda-* targets, never available.
class MissingBackend final : public Backend {
public:
  MissingBackend(llvm::StringRef Name, llvm::StringRef Description,
                 bool OnDevice)
      : Name(Name), Description(Description), OnDevice(OnDevice) {}
  llvm::StringRef getName() const override { return Name; }
  llvm::StringRef getDescription() const override { return Description; }
  llvm::Error checkOptions(const BackendOptions &) const override {
    return llvm::Error::success();
  }
  llvm::Error checkAvailable(const BackendOptions &) const override {
    return why();
  }
  std::string getDefaultTarget(const BackendOptions &) const override {
    return "cuda-sm90";
  }
  bool servesTarget(llvm::StringRef Target) const override {
    return Target.startswith("cuda-");
  }
  OpSupport getOpSupport(OpId) const override { return OpSupport::Unsupported; }
  bool runsOnDevice() const override { return OnDevice; }
  llvm::Expected<std::unique_ptr<Executable>>
  compile(const Graph &, const BackendOptions &) const override {
    return why();
  }
  bool canTune() const override { return OnDevice; }
  llvm::Error prepareTuningTable(layout::TuningTable &,
                                 const BackendOptions &) const override {
    return why();
  }

private:
  static llvm::Error why() {
    return makeError("this build of Strider has no CUDA backend (nvcc was "
                     "not found when it was configured)");
  }
  llvm::StringRef Name, Description;
  bool OnDevice;
};
#endif

const std::array<const Backend *, 4> &getTable() {
#if STRIDER_HAS_CUDA
  static const std::array<const Backend *, 4> Table = {
      &cpu::getBackend(), &cuda::getBackend(), &cuda::getEmulatedBackend(),
      &getReferenceBackend()};
#else
  static const MissingBackend Cuda("cuda",
                                   "the CUDA backend (not in this build)",
                                   /*OnDevice=*/true);
  static const MissingBackend Emulated(
      "cuda-emulated",
      "the CUDA backend's plan run on the host (not in this build)",
      /*OnDevice=*/false);
  static const std::array<const Backend *, 4> Table = {
      &cpu::getBackend(), &Cuda, &Emulated, &getReferenceBackend()};
#endif
  return Table;
}

} // namespace

llvm::ArrayRef<const Backend *> codegen::getBackends() { return getTable(); }

const Backend *codegen::lookupBackend(llvm::StringRef Name) {
  for (const Backend *B : getBackends())
    if (B->getName() == Name)
      return B;
  return nullptr;
}

std::string codegen::getBackendNames() {
  std::string Names;
  for (const Backend *B : getBackends())
    Names += (Names.empty() ? "" : ", ") + B->getName().str();
  return Names;
}

llvm::Expected<const Backend *> codegen::findBackend(llvm::StringRef Name) {
  if (const Backend *B = lookupBackend(Name))
    return B;
  return makeError("unknown backend '" + Name +
                   "' (available: " + getBackendNames() + ")");
}

const Backend *codegen::getHostBackendFor(llvm::StringRef Target) {
  for (const Backend *B : getBackends())
    if (B->servesTarget(Target) && !B->runsOnDevice())
      return B;
  return nullptr;
}

const Backend *codegen::getTunerFor(llvm::StringRef Target) {
  for (const Backend *B : getBackends())
    if (B->servesTarget(Target) && B->canTune())
      return B;
  return nullptr;
}

std::string codegen::describeBackends() {
  std::string Lines;
  for (const Backend *B : getBackends())
    Lines +=
        "  " + B->getName().str() + " - " + B->getDescription().str() + "\n";
  return Lines;
}
