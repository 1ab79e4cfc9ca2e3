//===- Memory.h - The memory budget of a program ----------------*- C++ -*-===//
//
// What a run may allocate: the machine's available memory unless the user
// sets a budget (--max-memory, the C API's and Python's max_memory), and
// byte counts read and written the way users write them ("512M", "4GiB").
// Backends refuse a program whose run would need more than its budget at
// compile time, with a message saying how much it needs, instead of
// failing (or being killed) halfway through a run.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_SUPPORT_MEMORY_H
#define STRIDER_SUPPORT_MEMORY_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace strider {

/// More than any run can need (shape inference refuses a tensor of more
/// than 2^62 bytes): sums of sizes saturate here (addSaturated), and a
/// need of this much is refused whatever the budget.
constexpr uint64_t MaxRunBytes = uint64_t(1) << 62;

/// \p A + \p B, at most MaxRunBytes: sizes of many tensors summed without
/// wrapping.
inline uint64_t addSaturated(uint64_t A, uint64_t B) {
  A = A < MaxRunBytes ? A : MaxRunBytes;
  B = B < MaxRunBytes ? B : MaxRunBytes;
  return A + B < MaxRunBytes ? A + B : MaxRunBytes;
}

/// The bytes this process can still allocate without swapping: the
/// kernel's MemAvailable, lowered to what the process's cgroup (v2
/// memory.max less memory.current) still allows; 0 when neither can be
/// read.
uint64_t getAvailableMemory();

/// The budget a run is checked against: \p Requested where nonzero, else
/// getAvailableMemory() (no limit, UINT64_MAX, when that is unknown).
uint64_t getMemoryBudget(uint64_t Requested);

/// Why \p NeedBytes of \p What exceed the budget \p Requested resolves
/// to, or an empty string when they fit; a need of MaxRunBytes never fits
/// ("at least 4.0 EiB"). For example: "a run needs 1.0 TiB (1099511627840
/// bytes) of activations, more than the 22.6 GiB memory budget (the memory
/// available on this machine; a max-memory option sets another)".
std::string checkMemoryBudget(uint64_t NeedBytes, llvm::StringRef What,
                              uint64_t Requested);

/// \p Bytes in the largest binary unit that keeps it at least 1, one
/// decimal: "512 B", "1.5 KiB", "22.6 GiB".
std::string formatByteSize(uint64_t Bytes);

/// A byte count as users write it: digits with an optional fraction and
/// an optional unit, K, M, G, T, P or E (powers of 1024; "KB", "KiB" and
/// lower case read the same) or B; none when \p Text is not one or the
/// count does not fit 64 bits.
std::optional<uint64_t> parseByteSize(llvm::StringRef Text);

} // namespace strider

#endif // STRIDER_SUPPORT_MEMORY_H
