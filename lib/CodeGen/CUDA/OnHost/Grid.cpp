//===- Grid.cpp - Blocks and threads of a launch, run on the host ---------===//
//
// A launch runs its blocks one after another, and a block's threads as
// fibers (each on its own stack) that a scheduler runs round-robin: a
// fiber runs until it returns or waits; a warp's shuffle releases when all
// its live lanes wait at it, the block's barrier when all its live threads
// do (a thread that returned holds no barrier, as on the device). When
// nothing can be released, the block is stuck (a barrier or shuffle some
// thread cannot reach): the launch fails with what was found. Blocks and
// threads run in index order, or all in reverse (setReversedOrder): a
// kernel whose results differ between the two has threads or blocks
// racing.
//
// Fibers switch by saving the callee-saved registers and the stack pointer
// (x86-64: a few instructions; ucontext's swapcontext elsewhere, which
// also makes a system call per switch to save the signal mask).
//
//===----------------------------------------------------------------------===//

#include "Grid.h"

#include <sys/mman.h>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#include <atomic>
#include <cstdlib>
#include <memory>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define STRIDER_FIBERS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRIDER_FIBERS_ASAN 1
#endif
#endif
#ifdef STRIDER_FIBERS_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

using namespace strider::cuda;

#if defined(__x86_64__)
// strider_onhost_switch(Save, Next): pushes the callee-saved registers and
// the SSE and x87 control words, stores the stack pointer to *Save, loads
// Next (a stack pointer stored the same way, or made by makeContext) and
// pops what it holds. Returns into the other fiber.
extern "C" void strider_onhost_switch(void **Save, void *Next);
asm(R"(
  .text
  .globl strider_onhost_switch
  .hidden strider_onhost_switch
  .type strider_onhost_switch, @function
strider_onhost_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size strider_onhost_switch, .-strider_onhost_switch
)");
#endif

namespace {

#if defined(__x86_64__)
struct Context {
  void *Sp = nullptr;
};
/// A context that starts \p Entry (which must never return) on \p Stack.
void makeContext(Context &C, void *Stack, size_t Bytes, void (*Entry)()) {
  auto *Top = reinterpret_cast<uint64_t *>(
      (reinterpret_cast<uintptr_t>(Stack) + Bytes) & ~uintptr_t(15));
  // What strider_onhost_switch pops, from the stack pointer up: the control
  // words, r15, r14, r13, r12, rbx, rbp, the address it returns to; then
  // Entry's own return address (none). Entry starts with the stack pointer
  // 8 past a 16-byte boundary, as after a call.
  Top[-1] = 0;
  Top[-2] = reinterpret_cast<uint64_t>(Entry);
  for (int I = 3; I <= 8; ++I)
    Top[-I] = 0;
  uint32_t Mxcsr = 0;
  uint16_t X87 = 0;
  asm volatile("stmxcsr %0" : "=m"(Mxcsr));
  asm volatile("fnstcw %0" : "=m"(X87));
  uint64_t Control = Mxcsr | uint64_t(X87) << 32;
  Top[-9] = Control;
  C.Sp = &Top[-9];
}
void switchContext(Context &From, Context &To) {
  strider_onhost_switch(&From.Sp, To.Sp);
}
#else
struct Context {
  ucontext_t U;
};
void makeContext(Context &C, void *Stack, size_t Bytes, void (*Entry)()) {
  getcontext(&C.U);
  C.U.uc_stack.ss_sp = Stack;
  C.U.uc_stack.ss_size = Bytes;
  C.U.uc_link = nullptr;
  makecontext(&C.U, Entry, 0);
}
void switchContext(Context &From, Context &To) { swapcontext(&From.U, &To.U); }
#endif

/// A fiber's stack: the device gives a thread little, sanitized builds
/// use more; pages are committed only when touched. Its lowest page is
/// a guard: an overflow faults instead of writing into another mapping.
constexpr size_t StackBytes = 256 * 1024;

struct Stack {
  void *Base = nullptr;
  Stack() {
    Base = mmap(nullptr, StackBytes, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (Base == MAP_FAILED)
      Base = nullptr;
    else
      (void)mprotect(Base, 4096, PROT_NONE);
  }
  ~Stack() {
    if (Base)
      munmap(Base, StackBytes);
  }
  Stack(const Stack &) = delete;
  Stack &operator=(const Stack &) = delete;
};

enum class State : uint8_t { Ready, AtBarrier, AtShuffle, Done };

struct Fiber {
  Context Ctx;
  State St = State::Ready;
  uint3 Thread = {0, 0, 0};
  uint64_t Published = 0; ///< What the thread offers a warp exchange.
};

/// One launch in progress on this host thread.
struct Launch {
  dim3 Grid, Block;
  uint3 BlockIdx = {0, 0, 0};
  unsigned Threads = 0; ///< Per block.
  bool Reversed = false;
  llvm::function_ref<void()> Body;
  std::vector<Fiber> Fibers;
  Context Scheduler;
  /// The fiber running; -1 in the scheduler.
  int Current = -1;
  std::string Error;
#ifdef STRIDER_FIBERS_ASAN
  const void *SchedulerStack = nullptr;
  size_t SchedulerStackSize = 0;
#endif
};

thread_local Launch *Active = nullptr;
/// Default: STRIDER_ONHOST_ORDER=reversed in the environment.
std::atomic<bool> Reversed{[] {
  const char *E = std::getenv("STRIDER_ONHOST_ORDER");
  return E && std::strcmp(E, "reversed") == 0;
}()};
thread_local std::string LastError;
/// Stacks kept between launches.
thread_local std::vector<std::unique_ptr<Stack>> Stacks;

uint3 unlinearize(unsigned T, const dim3 &Block) {
  return {T % Block.x, (T / Block.x) % Block.y, T / (Block.x * Block.y)};
}

std::string describe(const uint3 &V) {
  return "(" + std::to_string(V.x) + "," + std::to_string(V.y) + "," +
         std::to_string(V.z) + ")";
}

/// Switches from the running fiber back to the scheduler.
void yieldToScheduler() {
  Launch &L = *Active;
  Fiber &F = L.Fibers[size_t(L.Current)];
#ifdef STRIDER_FIBERS_ASAN
  void *FakeStack = nullptr;
  __sanitizer_start_switch_fiber(&FakeStack, L.SchedulerStack,
                                 L.SchedulerStackSize);
#endif
  switchContext(F.Ctx, L.Scheduler);
#ifdef STRIDER_FIBERS_ASAN
  __sanitizer_finish_switch_fiber(FakeStack, nullptr, nullptr);
#endif
}

void fiberEntry() {
#ifdef STRIDER_FIBERS_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &Active->SchedulerStack,
                                  &Active->SchedulerStackSize);
#endif
  Active->Body();
  Launch &L = *Active;
  Fiber &F = L.Fibers[size_t(L.Current)];
  F.St = State::Done;
#ifdef STRIDER_FIBERS_ASAN
  // The fiber's stack is left for good: no fake stack to keep.
  __sanitizer_start_switch_fiber(nullptr, L.SchedulerStack,
                                 L.SchedulerStackSize);
#endif
  switchContext(F.Ctx, L.Scheduler); // Never resumed.
  __builtin_unreachable();
}

/// Runs fiber \p I until it returns or waits.
void resume(Launch &L, size_t I) {
  L.Current = int(I);
#ifdef STRIDER_FIBERS_ASAN
  void *FakeStack = nullptr;
  __sanitizer_start_switch_fiber(&FakeStack, Stacks[I]->Base, StackBytes);
#endif
  switchContext(L.Scheduler, L.Fibers[I].Ctx);
#ifdef STRIDER_FIBERS_ASAN
  __sanitizer_finish_switch_fiber(FakeStack, nullptr, nullptr);
#endif
  L.Current = -1;
}

bool startFiber(Launch &L, size_t I) {
  while (Stacks.size() <= I) {
    Stacks.push_back(std::make_unique<Stack>());
    if (!Stacks.back()->Base) {
      Stacks.pop_back();
      L.Error = "no memory for the stacks of a block's threads";
      return false;
    }
  }
  Fiber &F = L.Fibers[I];
  F.St = State::Ready;
  F.Thread = unlinearize(unsigned(I), L.Block);
#ifdef STRIDER_FIBERS_ASAN
  // A stack reused after a stuck block still has that block's frames
  // poisoned.
  __asan_unpoison_memory_region(Stacks[I]->Base, StackBytes);
#endif
  makeContext(F.Ctx, Stacks[I]->Base, StackBytes, fiberEntry);
  return true;
}

/// Runs the block's fibers until all return; false when stuck.
bool schedule(Launch &L) {
  const size_t N = L.Threads;
  for (;;) {
    bool Ran = false;
    for (size_t K = 0; K < N; ++K) {
      const size_t I = L.Reversed ? N - 1 - K : K;
      if (L.Fibers[I].St == State::Ready) {
        resume(L, I);
        Ran = true;
      }
    }
    if (Ran)
      continue;
    size_t Live = 0, AtBarrier = 0;
    for (size_t I = 0; I < N; ++I) {
      Live += L.Fibers[I].St != State::Done;
      AtBarrier += L.Fibers[I].St == State::AtBarrier;
    }
    if (Live == 0)
      return true;
    // Warps whose live lanes all wait at a shuffle go first: another warp
    // may be waiting at the block's barrier meanwhile.
    bool Released = false;
    for (size_t W = 0; W < N; W += 32) {
      size_t WarpLive = 0, WarpWaiting = 0;
      for (size_t I = W; I < std::min(N, W + 32); ++I) {
        WarpLive += L.Fibers[I].St != State::Done;
        WarpWaiting += L.Fibers[I].St == State::AtShuffle;
      }
      if (WarpWaiting && WarpWaiting == WarpLive) {
        for (size_t I = W; I < std::min(N, W + 32); ++I)
          L.Fibers[I].St = State::Ready;
        Released = true;
      }
    }
    if (Released)
      continue;
    if (AtBarrier == Live) {
      for (size_t I = 0; I < N; ++I)
        if (L.Fibers[I].St == State::AtBarrier)
          L.Fibers[I].St = State::Ready;
      continue;
    }
    L.Error = "block " + describe(L.BlockIdx) +
              " is stuck: " + std::to_string(AtBarrier) + " of its " +
              std::to_string(Live) +
              " live threads wait at __syncthreads, the others at a warp "
              "shuffle some lane of their warp does not reach";
    return false;
  }
}

bool runBlock(Launch &L) {
  L.Fibers.resize(L.Threads);
  for (size_t I = 0; I < L.Threads; ++I)
    if (!startFiber(L, I))
      return false;
  return schedule(L);
}

Launch &active() {
  // Device code runs only inside runGrid.
  return *Active;
}

Fiber &runningFiber() {
  Launch &L = active();
  return L.Fibers[size_t(L.Current)];
}

} // namespace

const uint3 &onhost::getThreadIdx() { return runningFiber().Thread; }
const uint3 &onhost::getBlockIdx() { return active().BlockIdx; }
const dim3 &onhost::getBlockDim() { return active().Block; }
const dim3 &onhost::getGridDim() { return active().Grid; }

unsigned onhost::getLane() {
  const uint3 &T = getThreadIdx();
  const dim3 &B = active().Block;
  return (T.x + T.y * B.x + T.z * B.x * B.y) % 32;
}

void onhost::syncThreads() {
  runningFiber().St = State::AtBarrier;
  yieldToScheduler();
}

uint64_t onhost::exchangeInWarp(uint64_t Bits, unsigned SrcLane) {
  Launch &L = active();
  const size_t Me = size_t(L.Current);
  L.Fibers[Me].Published = Bits;
  L.Fibers[Me].St = State::AtShuffle;
  yieldToScheduler();
  // Every live lane has published: read, then wait until all have read
  // before anyone publishes again.
  const size_t Src = Me - Me % 32 + SrcLane % 32;
  const uint64_t Got = Src < L.Threads && L.Fibers[Src].St != State::Done
                           ? L.Fibers[Src].Published
                           : Bits;
  L.Fibers[Me].St = State::AtShuffle;
  yieldToScheduler();
  return Got;
}

cudaError_t onhost::runGrid(dim3 Grid, dim3 Block, size_t SharedBytes,
                            llvm::function_ref<void()> Thread) {
  LastError.clear();
  const uint64_t Threads = uint64_t(Block.x) * Block.y * Block.z;
  const uint64_t Blocks = uint64_t(Grid.x) * Grid.y * Grid.z;
  // The limits of every device from sm_50 on.
  if (Threads == 0 || Threads > 1024 || Block.z > 64 || Blocks == 0 ||
      Grid.x > 0x7fffffffu || Grid.y > 65535 || Grid.z > 65535 ||
      SharedBytes > 48 * 1024) {
    LastError = "launch configuration the device refuses: grid (" +
                std::to_string(Grid.x) + "," + std::to_string(Grid.y) + "," +
                std::to_string(Grid.z) + "), block (" +
                std::to_string(Block.x) + "," + std::to_string(Block.y) + "," +
                std::to_string(Block.z) + "), " + std::to_string(SharedBytes) +
                " bytes of dynamic shared memory";
    return cudaErrorInvalidConfiguration;
  }
  if (Active) {
    LastError = "a launch from device code";
    return cudaErrorNotSupported;
  }
  Launch L;
  L.Grid = Grid;
  L.Block = Block;
  L.Threads = unsigned(Threads);
  L.Body = Thread;
  L.Reversed = Reversed;
  Active = &L;
  bool Ok = true;
  for (uint64_t K = 0; Ok && K < Blocks; ++K) {
    const uint64_t B = L.Reversed ? Blocks - 1 - K : K;
    L.BlockIdx = {unsigned(B % Grid.x), unsigned(B / Grid.x % Grid.y),
                  unsigned(B / (uint64_t(Grid.x) * Grid.y))};
    Ok = runBlock(L) && L.Error.empty();
  }
  Active = nullptr;
  if (Ok)
    return cudaSuccess;
  LastError = L.Error;
  return cudaErrorLaunchFailure;
}

const std::string &onhost::getLaunchError() { return LastError; }

void onhost::setReversedOrder(bool R) { Reversed = R; }
bool onhost::getReversedOrder() { return Reversed; }
