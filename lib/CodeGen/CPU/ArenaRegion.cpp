//===- ArenaRegion.cpp - One block of address space for many arenas -------===//
//
// See ArenaRegion in CPUBackend.h. The block is an anonymous mapping
// reserved inaccessible (no commit charge, even under strict overcommit);
// placing an arena makes its prefix accessible, and its pages become
// memory as runs touch them, staying for the programs that follow.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/CPU/CPUBackend.h"

#include <algorithm>

#include <sys/mman.h>
#include <unistd.h>

using namespace strider;
using namespace strider::cpu;

ArenaRegion::ArenaRegion(size_t Capacity) {
  void *P = mmap(nullptr, Capacity, PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (P == MAP_FAILED)
    return; // Every program then allocates its own arena.
  Base = static_cast<uint8_t *>(P);
  this->Capacity = Capacity;
}

ArenaRegion::~ArenaRegion() {
  if (Base)
    munmap(Base, Capacity);
}

uint8_t *ArenaRegion::place(size_t Bytes) {
  if (!Base || Bytes > Capacity)
    return nullptr;
  if (Bytes > Accessible) {
    const size_t Page = size_t(sysconf(_SC_PAGESIZE));
    const size_t Want = std::min(Capacity, (Bytes + Page - 1) / Page * Page);
    if (mprotect(Base, Want, PROT_READ | PROT_WRITE) != 0)
      return nullptr; // Out of memory to commit: the program allocates.
    Accessible = Want;
  }
  ++Placed;
  Largest = std::max(Largest, Bytes);
  return Base;
}
