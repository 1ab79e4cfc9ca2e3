//===- OutOfMemory.h - Allocation failure as a message ----------*- C++ -*-===//
//
// InitLLVM makes a failed operator new abort ("LLVM ERROR: out of memory").
// The tools that run models put the standard behaviour back (a
// std::bad_alloc) and turn it into one message and exit 1: the memory
// budget refuses what it can see before anything is allocated, and this
// catches what it cannot (a machine whose memory went to someone else in
// the meantime, a process limit).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_TOOLS_COMMON_OUTOFMEMORY_H
#define STRIDER_TOOLS_COMMON_OUTOFMEMORY_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <new>

namespace strider {
namespace toolflags {

/// \p Body's exit code, or 1 with a message naming \p Tool when an
/// allocation fails inside it. Call after InitLLVM.
inline int runReportingOutOfMemory(const char *Tool,
                                   llvm::function_ref<int()> Body) {
  std::set_new_handler(nullptr);
  try {
    return Body();
  } catch (const std::bad_alloc &) {
    llvm::errs() << Tool
                 << ": out of memory: an allocation failed (the memory "
                    "budget, --max-memory, refuses what a program is known "
                    "to need before it runs)\n";
    return 1;
  }
}

} // namespace toolflags
} // namespace strider

#endif // STRIDER_TOOLS_COMMON_OUTOFMEMORY_H
