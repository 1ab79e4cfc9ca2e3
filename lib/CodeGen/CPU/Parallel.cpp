//===- Parallel.cpp - The kernels' thread pool ----------------------------===//
//
// One process-wide pool, grown to the largest thread count asked for.
// A job is published with a generation number; workers spin briefly on it
// (kernels come back to back) and then sleep on a condition variable.
// Items are claimed from an atomic counter by the caller and the workers
// alike; the caller waits for the count of finished items only.
//
//===----------------------------------------------------------------------===//

#include "Parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

using namespace strider;
using namespace strider::cpu;

namespace {

/// A short wait in a spin loop.
inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

/// A job's items, split into one contiguous range per thread slot (so
/// consecutive kernels give the same rows to the same core, whose caches
/// hold them); a thread done with its range takes items left in others'.
struct Job {
  struct alignas(64) Range {
    std::atomic<int64_t> Next{0};
    int64_t End = 0;
  };
  llvm::function_ref<void(int64_t)> F;
  int64_t Items = 0;
  int Slots = 1;
  std::unique_ptr<Range[]> Ranges;
  std::atomic<int64_t> Done{0};
  std::atomic<int> Joined{0};

  Job(llvm::function_ref<void(int64_t)> F, int64_t Items, int Slots)
      : F(F), Items(Items), Slots(Slots), Ranges(new Range[size_t(Slots)]) {
    for (int S = 0; S < Slots; ++S) {
      Ranges[S].Next.store(Items * S / Slots, std::memory_order_relaxed);
      Ranges[S].End = Items * (S + 1) / Slots;
    }
  }

  /// Runs the items of slot \p Own, then any left in the other slots.
  void work(int Own) {
    int64_t Count = 0;
    for (int K = 0; K < Slots; ++K) {
      Range &R = Ranges[(Own + K) % Slots];
      for (int64_t I = R.Next.fetch_add(1); I < R.End;
           I = R.Next.fetch_add(1)) {
        F(I);
        ++Count;
      }
    }
    if (Count)
      Done.fetch_add(Count, std::memory_order_release);
  }
};

class Pool {
public:
  /// Never destroyed: workers sleep until the process exits (joining them
  /// from a static destructor would race with other exit handlers).
  static Pool &get() {
    static Pool *P = new Pool;
    return *P;
  }

  void run(int64_t Items, int Threads, llvm::function_ref<void(int64_t)> F) {
    ensureWorkers(Threads - 1);
    auto J = std::make_shared<Job>(F, Items, Threads);
    {
      std::lock_guard<std::mutex> Lock(M);
      Current = J;
      Generation.fetch_add(1, std::memory_order_release);
    }
    if (Sleeping.load(std::memory_order_acquire))
      CV.notify_all();
    J->work(0);
    // Only items taken by workers can still be running.
    for (unsigned Spins = 0; J->Done.load(std::memory_order_acquire) < Items;
         ++Spins)
      if (Spins < 4096)
        relax();
      else
        std::this_thread::yield();
    std::lock_guard<std::mutex> Lock(M);
    if (Current == J)
      Current.reset();
  }

private:
  void ensureWorkers(int N) {
    std::lock_guard<std::mutex> Lock(GrowM);
    while (int(Workers.size()) < N)
      Workers.emplace_back([this] { loop(); }).detach();
  }

  void loop() {
    uint64_t Seen = Generation.load(std::memory_order_acquire);
    while (true) {
      // Spin for a while: the next kernel usually follows within
      // microseconds.
      auto Until =
          std::chrono::steady_clock::now() + std::chrono::microseconds(200);
      for (unsigned Spins = 0;
           Generation.load(std::memory_order_acquire) == Seen; ++Spins) {
        relax();
        if ((Spins & 255) == 0 && std::chrono::steady_clock::now() >= Until)
          break;
      }
      std::shared_ptr<Job> J;
      {
        std::unique_lock<std::mutex> Lock(M);
        if (Generation.load() == Seen) {
          Sleeping.fetch_add(1);
          CV.wait(Lock, [&] { return Generation.load() != Seen; });
          Sleeping.fetch_sub(1);
        }
        Seen = Generation.load();
        J = Current;
      }
      if (J) {
        const int Slot = J->Joined.fetch_add(1) + 1;
        if (Slot < J->Slots)
          J->work(Slot);
      }
    }
  }

  std::mutex M, GrowM;
  std::condition_variable CV;
  std::shared_ptr<Job> Current;
  std::atomic<uint64_t> Generation{0};
  std::atomic<int> Sleeping{0};
  std::vector<std::thread> Workers;
};

} // namespace

void cpu::parallelForImpl(int64_t Items, int Threads,
                          llvm::function_ref<void(int64_t)> F) {
  Pool::get().run(Items, Threads, F);
}
