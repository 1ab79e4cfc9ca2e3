//===- ArenaRegion.cpp - One block of address space for many arenas -------===//
//
// See ArenaRegion in CPUBackend.h. The block is an anonymous mapping
// reserved without committing memory: pages become memory as runs touch
// them, and stay for the programs that follow.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/CPU/CPUBackend.h"

#include <algorithm>

#include <sys/mman.h>

using namespace strider;
using namespace strider::cpu;

ArenaRegion::ArenaRegion(size_t Capacity) {
  void *P = mmap(nullptr, Capacity, PROT_READ | PROT_WRITE,
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
  ++Placed;
  Largest = std::max(Largest, Bytes);
  return Base;
}
