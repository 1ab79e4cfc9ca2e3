//===- Parallel.h - Work items over a small thread pool ---------*- C++ -*-===//
//
// Private to lib/CodeGen/CPU. Kernels split their work into independent
// items; parallelFor runs them on the calling thread and up to Threads - 1
// pool workers, which take items one at a time from a shared counter. The
// caller returns once every item is done: it never waits for a worker that
// has not taken an item, so a worker descheduled on a busy machine costs
// nothing (with OpenMP's fork-join, every region would wait for it). An
// item's result never depends on which thread runs it, so outputs are the
// same for every thread count.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CPU_PARALLEL_H
#define STRIDER_LIB_CODEGEN_CPU_PARALLEL_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>

namespace strider {
namespace cpu {

/// Runs F(0) .. F(Items - 1) on up to \p Threads threads (the caller's
/// included). Not reentrant: F must not call parallelFor.
void parallelForImpl(int64_t Items, int Threads,
                     llvm::function_ref<void(int64_t)> F);

template <typename Fn> void parallelFor(int64_t Items, int Threads, Fn &&F) {
  if (Threads <= 1 || Items <= 1) {
    for (int64_t I = 0; I < Items; ++I)
      F(I);
    return;
  }
  parallelForImpl(Items, Threads, F);
}

} // namespace cpu
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CPU_PARALLEL_H
