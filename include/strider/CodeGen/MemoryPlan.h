//===- MemoryPlan.h - Liveness-based buffer placement -----------*- C++ -*-===//
//
// Places buffers with known live ranges (in steps of a program) at offsets
// of one arena so that buffers live at the same time never overlap. Greedy
// best-offset placement, largest buffers first: deterministic, and close to
// the peak of simultaneously live bytes on the graphs of CNNs. Lowering's
// arena placement (planArena, Lowering.h) is its user.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_MEMORYPLAN_H
#define STRIDER_CODEGEN_MEMORYPLAN_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace strider {
namespace codegen {

struct BufferRequest {
  int64_t Bytes = 0;
  int Begin = 0; ///< First step that writes it (inclusive).
  int End = 0;   ///< Last step that reads it (inclusive).
};

struct MemoryPlan {
  std::vector<int64_t> Offsets; ///< One per request, multiples of Alignment.
  /// At most MaxRunBytes (Support/Memory.h): a plan that would need more
  /// says that much (offsets then mean nothing) and is refused by the
  /// memory budget.
  int64_t ArenaBytes = 0;
  /// The largest sum of sizes of buffers live at one step: no plan can be
  /// smaller.
  int64_t PeakLiveBytes = 0;
};

MemoryPlan planMemory(llvm::ArrayRef<BufferRequest> Requests,
                      int64_t Alignment = 64);

} // namespace codegen
} // namespace strider

#endif // STRIDER_CODEGEN_MEMORYPLAN_H
