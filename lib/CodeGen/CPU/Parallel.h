//===- Parallel.h - Static work splitting over threads ----------*- C++ -*-===//
//
// Private to lib/CodeGen/CPU. Kernels split their work into independent
// items; parallelFor runs them on an OpenMP team with a static schedule.
// An item's result never depends on which thread runs it, so outputs are
// the same for every thread count.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_CODEGEN_CPU_PARALLEL_H
#define STRIDER_LIB_CODEGEN_CPU_PARALLEL_H

#include <cstdint>

namespace strider {
namespace cpu {

template <typename Fn> void parallelFor(int64_t Items, int Threads, Fn &&F) {
  if (Threads <= 1 || Items <= 1) {
    for (int64_t I = 0; I < Items; ++I)
      F(I);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel for num_threads(Threads) schedule(static)
  for (int64_t I = 0; I < Items; ++I)
    F(I);
#else
  for (int64_t I = 0; I < Items; ++I)
    F(I);
#endif
}

} // namespace cpu
} // namespace strider

#endif // STRIDER_LIB_CODEGEN_CPU_PARALLEL_H
