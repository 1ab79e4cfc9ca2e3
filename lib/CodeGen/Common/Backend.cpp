//===- Backend.cpp - What every backend's program does by default ---------===//

#include "strider/CodeGen/Backend.h"
#include "strider/IR/Diagnostics.h"
#include "strider/Layout/Tuning.h"

using namespace strider;
using namespace strider::codegen;

HostPin::~HostPin() = default;
Executable::~Executable() = default;
Backend::~Backend() = default;

llvm::Error Executable::runInto(const runtime::TensorMap &Inputs,
                                runtime::TensorMap &Outputs) {
  auto Results = run(Inputs);
  if (!Results)
    return Results.takeError();
  for (auto &[Name, T] : *Results) {
    if (llvm::Error E = runtime::checkOutput(Outputs, Name, T.getElementType(),
                                             T.getShape()))
      return E;
    runtime::copyTensor(T, Outputs.find(Name)->second);
  }
  return llvm::Error::success();
}

llvm::Error Executable::runOnDevice(const runtime::DeviceTensorMap &,
                                    const runtime::DeviceTensorMap &) {
  return makeError("tensors in device memory need the cuda backend; this "
                   "session runs on the host");
}

llvm::Error Backend::prepareTuningTable(layout::TuningTable &,
                                        const BackendOptions &) const {
  return makeError("the " + getName() + " backend does not time kernels");
}

llvm::Error Backend::tune(const Graph &, const layout::DimBindings &,
                          const BackendOptions &, const TuneDriverOptions &,
                          layout::TuningTable &, TuneStats *) const {
  return makeError("the " + getName() + " backend does not time kernels");
}

unsigned Executable::getNumFallbacks() const {
  unsigned N = 0;
  for (const StepInfo &S : getSteps())
    N += S.Fallback;
  return N;
}

llvm::Error codegen::matchTuningMachine(layout::TuningTable &Table,
                                        const std::string &Have,
                                        const std::string &Want,
                                        llvm::function_ref<void()> Record) {
  if (Table.getNumEntries() == 0) {
    Record();
    return llvm::Error::success();
  }
  if (Have == Want)
    return llvm::Error::success();
  return makeError("measured with " + Have + "; this run would add " + Want);
}
