//===- DerivedStore.cpp - Derived constants shared by specializations -----===//
//
// The store a model keeps for the specializations of its graph (see
// DerivedStore in CPUBackend.h): keyed by the lowering's key, and checked
// against the constant an entry was derived from, which it keeps alive so
// that its address cannot name another constant later.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/CPU/CPUBackend.h"

#include "llvm/ADT/StringMap.h"

#include <mutex>

using namespace strider;
using namespace strider::cpu;

struct SharedDerivedStore::Impl {
  struct Entry {
    std::shared_ptr<const float> Data;
    size_t Count = 0;
    TensorDataRef Source;
  };
  std::mutex Mutex;
  llvm::StringMap<Entry> Entries;
  uint64_t Found = 0, Added = 0, Bytes = 0;
};

SharedDerivedStore::SharedDerivedStore() : I(std::make_unique<Impl>()) {}
SharedDerivedStore::~SharedDerivedStore() = default;

std::shared_ptr<const float>
SharedDerivedStore::find(llvm::StringRef Key, size_t Count,
                         const TensorData *Source) const {
  if (!Source)
    return nullptr;
  std::lock_guard<std::mutex> Lock(I->Mutex);
  auto It = I->Entries.find(Key);
  if (It == I->Entries.end() || It->second.Count != Count ||
      It->second.Source.get() != Source)
    return nullptr;
  ++I->Found;
  return It->second.Data;
}

void SharedDerivedStore::add(llvm::StringRef Key,
                             std::shared_ptr<const float> Data, size_t Count,
                             const TensorDataRef &Source) {
  if (!Source)
    return;
  std::lock_guard<std::mutex> Lock(I->Mutex);
  Impl::Entry &E = I->Entries[Key];
  I->Bytes += Count * sizeof(float);
  I->Bytes -= E.Count * sizeof(float);
  E = {std::move(Data), Count, Source};
  ++I->Added;
}

uint64_t SharedDerivedStore::getNumFound() const {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  return I->Found;
}

uint64_t SharedDerivedStore::getNumAdded() const {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  return I->Added;
}

uint64_t SharedDerivedStore::getBytes() const {
  std::lock_guard<std::mutex> Lock(I->Mutex);
  return I->Bytes;
}
