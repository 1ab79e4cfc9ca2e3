//===- LowerFuzzer.cpp - libFuzzer target on the CPU backend -------------===//
//
// The onnx target's way to a runnable graph (ModelPipeline.h), then the CPU
// backend: lowering (kernel choice, packed constants, the memory plan,
// within a 32 MiB budget) and, when the run is small, the program on zero
// inputs. A clean error is fine; a crash, a sanitizer report, a leak or a
// timeout is a finding. Built only on request (scripts/fuzz.sh lower).
//
//===----------------------------------------------------------------------===//

#include "ModelPipeline.h"

#include "strider/CodeGen/CPU/CPUBackend.h"

using namespace strider;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  std::unique_ptr<Graph> G = fuzz::prepareModel(Data, Size);
  if (!G)
    return 0;
  cpu::CPUOptions Opts;
  // Lowering's tables grow with the dims (a Resize's taps per output
  // position, about 25 bytes per output element of a 1-D resize): a 32 MiB
  // budget keeps them within the fuzzer's 2 GiB.
  Opts.MaxMemory = uint64_t(32) << 20;
  auto P = cpu::compileForCPU(*G, Opts);
  if (!P) {
    llvm::consumeError(P.takeError());
    return 0;
  }
  if (!fuzz::isSmallRun(*G))
    return 0;
  auto Out = (*P)->run(fuzz::zeroInputs(*G));
  if (!Out)
    llvm::consumeError(Out.takeError());
  return 0;
}
