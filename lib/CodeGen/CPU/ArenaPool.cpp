//===- ArenaPool.cpp - Activation arenas that runs take and give back -----===//
//
// See ArenaPool in CPUBackend.h. A reserved arena is an anonymous mapping
// made inaccessible (no commit charge, even under strict overcommit);
// serving a larger request opens more of its prefix. The pool's lock is
// held for a handful of instructions per run (and an mprotect when an
// arena grows), never while a run computes.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/CPU/CPUBackend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <sys/mman.h>
#include <unistd.h>

using namespace strider;
using namespace strider::cpu;

namespace {

/// One arena: a reservation whose first Accessible bytes are open, or an
/// allocation of Accessible bytes (Reserved == 0).
struct Arena {
  uint8_t *Base = nullptr;
  size_t Reserved = 0, Accessible = 0;
  bool InUse = false;
};

size_t roundUp(size_t Bytes, size_t To) { return (Bytes + To - 1) / To * To; }

void destroy(Arena &A) {
  if (A.Reserved)
    munmap(A.Base, A.Reserved);
  else
    std::free(A.Base);
  A = Arena();
}

/// Makes \p A hold at least \p Bytes: opens more of a reservation, else
/// (no reservation, or one too small) an allocation replaces it. False,
/// with \p A unchanged, when the memory cannot be had.
bool grow(Arena &A, size_t Bytes, size_t ReserveBytes) {
  if (A.Base && Bytes <= A.Accessible)
    return true;
  static const size_t Page = size_t(sysconf(_SC_PAGESIZE));
  if (!A.Base && ReserveBytes >= Bytes) {
    void *P = mmap(nullptr, ReserveBytes, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (P != MAP_FAILED) {
      A.Base = static_cast<uint8_t *>(P);
      A.Reserved = ReserveBytes;
    }
  }
  if (A.Reserved && Bytes <= A.Reserved) {
    const size_t Want = std::min(A.Reserved, roundUp(Bytes, Page));
    if (mprotect(A.Base, Want, PROT_READ | PROT_WRITE) == 0) {
      A.Accessible = Want;
      return true;
    }
  }
  // An ordinary allocation. Its zeros are never read (kernels write every
  // element before reading it) but make a new arena's contents certain.
  const size_t Alloc = roundUp(std::max<size_t>(Bytes, 64), 64);
  void *Mem = std::aligned_alloc(64, Alloc);
  if (!Mem)
    return false;
  std::memset(Mem, 0, Alloc);
  const bool InUse = A.InUse;
  if (A.Base)
    destroy(A);
  A.Base = static_cast<uint8_t *>(Mem);
  A.Accessible = Alloc;
  A.InUse = InUse;
  return true;
}

} // namespace

struct ArenaPool::State {
  mutable std::mutex M;
  std::vector<Arena> Arenas;
  size_t Largest = 0;
  uint64_t Acquired = 0;
};

ArenaPool::ArenaPool(size_t ReserveBytes)
    : ReserveBytes(ReserveBytes), S(std::make_unique<State>()) {}

ArenaPool::~ArenaPool() {
  for (Arena &A : S->Arenas)
    destroy(A);
}

uint8_t *ArenaPool::acquire(size_t Bytes) {
  std::lock_guard<std::mutex> Lock(S->M);
  // A free arena that already holds Bytes, else the largest free one
  // (grown), else a new one.
  Arena *Pick = nullptr;
  for (Arena &A : S->Arenas) {
    if (A.InUse)
      continue;
    if (A.Accessible >= Bytes) {
      Pick = &A;
      break;
    }
    if (!Pick || A.Accessible > Pick->Accessible)
      Pick = &A;
  }
  if (!Pick) {
    S->Arenas.emplace_back();
    Pick = &S->Arenas.back();
  }
  if (!grow(*Pick, Bytes, ReserveBytes)) {
    if (!Pick->Base)
      S->Arenas.pop_back();
    return nullptr;
  }
  Pick->InUse = true;
  S->Largest = std::max(S->Largest, Bytes);
  ++S->Acquired;
  return Pick->Base;
}

void ArenaPool::release(uint8_t *Base) {
  std::lock_guard<std::mutex> Lock(S->M);
  for (Arena &A : S->Arenas)
    if (A.Base == Base) {
      A.InUse = false;
      return;
    }
}

size_t ArenaPool::getNumArenas() const {
  std::lock_guard<std::mutex> Lock(S->M);
  return S->Arenas.size();
}

size_t ArenaPool::getLargest() const {
  std::lock_guard<std::mutex> Lock(S->M);
  return S->Largest;
}

uint64_t ArenaPool::getNumAcquired() const {
  std::lock_guard<std::mutex> Lock(S->M);
  return S->Acquired;
}
