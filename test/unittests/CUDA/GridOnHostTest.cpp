//===- GridOnHostTest.cpp - Device code run on the host: the scheduler ----===//
//
// What lib/CodeGen/CUDA/OnHost/Grid.cpp promises device code compiled for
// the host: indices over a whole grid, barriers that order shared memory,
// warp shuffles, threads that return before a barrier, and the launches
// the device refuses or that cannot finish. The kernels here are written
// as device code (this file is compiled as the OnHost wrappers are).
//
//===----------------------------------------------------------------------===//

#define STRIDER_KERNELS_ON_HOST 1
#include "OnHost/Grid.h"
#include "OnHost/OnHost.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

using namespace strider::cuda;

namespace {

__global__ void writeGlobalIndex(int *Count, int Total) {
  const int Block =
      int(blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));
  const int Thread =
      int(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
  const int I = Block * int(blockDim.x * blockDim.y * blockDim.z) + Thread;
  if (I < Total)
    ++Count[I];
}

TEST(GridOnHostTest, EveryThreadOfA3DGridRunsOnce) {
  const dim3 Grid(3, 2, 2), Block(4, 3, 2);
  std::vector<int> Count(12 * 24, 0);
  ASSERT_EQ(onhost::runGrid(
                Grid, Block, 0,
                [&] { writeGlobalIndex(Count.data(), int(Count.size())); }),
            cudaSuccess);
  for (size_t I = 0; I < Count.size(); ++I)
    EXPECT_EQ(Count[I], 1) << I;
}

/// Each thread stores its square, then reads its mirror's: wrong without
/// the barrier, since threads run one after another.
__global__ void mirrorThroughShared(int *Out) {
  __shared__ int Slots[64];
  const int T = int(threadIdx.x);
  Slots[T] = T * T + int(blockIdx.x);
  __syncthreads();
  Out[blockIdx.x * 64 + T] = Slots[63 - T];
}

TEST(GridOnHostTest, BarriersOrderSharedMemory) {
  std::vector<int> Out(3 * 64, -1);
  ASSERT_EQ(onhost::runGrid(dim3(3), dim3(64), 0,
                            [&] { mirrorThroughShared(Out.data()); }),
            cudaSuccess);
  for (int B = 0; B < 3; ++B)
    for (int T = 0; T < 64; ++T)
      EXPECT_EQ(Out[size_t(B * 64 + T)], (63 - T) * (63 - T) + B);
}

/// A butterfly sum over each warp of a 16 x 4 block (two warps of
/// consecutive linear indices).
__global__ void warpSums(int *Out) {
  const int I = int(threadIdx.x + blockDim.x * threadIdx.y);
  int V = I;
  for (int Mask = 16; Mask > 0; Mask /= 2)
    V += __shfl_xor_sync(0xffffffffu, V, Mask);
  Out[I] = V;
}

TEST(GridOnHostTest, ShufflesExchangeWithinWarps) {
  std::vector<int> Out(64, -1);
  ASSERT_EQ(
      onhost::runGrid(dim3(1), dim3(16, 4), 0, [&] { warpSums(Out.data()); }),
      cudaSuccess);
  // 0 + ... + 31 and 32 + ... + 63.
  for (int I = 0; I < 64; ++I)
    EXPECT_EQ(Out[size_t(I)], I < 32 ? 496 : 1520) << I;
}

/// Threads past Live return first; the rest meet at a barrier.
__global__ void someReturnEarly(int Live, int *Out) {
  __shared__ int Slots[64];
  const int T = int(threadIdx.x);
  if (T >= Live)
    return;
  Slots[T] = T + 1;
  __syncthreads();
  Out[T] = Slots[Live - 1 - T];
}

TEST(GridOnHostTest, ReturnedThreadsDoNotHoldABarrier) {
  std::vector<int> Out(64, -1);
  ASSERT_EQ(onhost::runGrid(dim3(1), dim3(64), 0,
                            [&] { someReturnEarly(40, Out.data()); }),
            cudaSuccess);
  for (int T = 0; T < 64; ++T)
    EXPECT_EQ(Out[size_t(T)], T < 40 ? 40 - T : -1) << T;
}

/// One thread meets a barrier after the others of its block returned: it
/// passes, as on the device.
__global__ void barrierAfterTheOthersReturned(int *Out) {
  if (threadIdx.x != 5)
    return;
  __syncthreads();
  Out[blockIdx.x] = int(threadIdx.x);
}

__global__ void barrierAgainstShuffle() {
  // Warp 0 waits at the block's barrier; in warp 1, half the lanes
  // shuffle while the other half wait at the barrier.
  if (threadIdx.x >= 32 && threadIdx.x < 48)
    (void)__shfl_xor_sync(0xffffffffu, 1, 1);
  else
    __syncthreads();
}

TEST(GridOnHostTest, BarriersAndShufflesSomeThreadCannotReachFailTheLaunch) {
  std::vector<int> Fives(2, -1);
  EXPECT_EQ(
      onhost::runGrid(dim3(2), dim3(32), 0,
                      [&] { barrierAfterTheOthersReturned(Fives.data()); }),
      cudaSuccess);
  EXPECT_EQ(Fives, (std::vector<int>{5, 5}));
  EXPECT_EQ(
      onhost::runGrid(dim3(1), dim3(64), 0, [&] { barrierAgainstShuffle(); }),
      cudaErrorLaunchFailure);
  EXPECT_EQ(onhost::getLaunchError(),
            "block (0,0,0) is stuck: 48 of its 64 live threads wait at "
            "__syncthreads, the others at a warp shuffle some lane of their "
            "warp does not reach");
  // The next launch is clean.
  std::vector<int> Out(64, -1);
  EXPECT_EQ(onhost::runGrid(dim3(1), dim3(64), 0,
                            [&] { mirrorThroughShared(Out.data()); }),
            cudaSuccess);
  EXPECT_EQ(onhost::getLaunchError(), "");
  EXPECT_EQ(Out[0], 63 * 63);
}

TEST(GridOnHostTest, ConfigurationsTheDeviceRefusesAreRefused) {
  int Runs = 0;
  auto Count = [&] { ++Runs; };
  EXPECT_EQ(onhost::runGrid(dim3(1), dim3(1025), 0, Count),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(onhost::runGrid(dim3(1), dim3(32, 32, 2), 0, Count),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(onhost::getLaunchError(),
            "launch configuration the device refuses: grid (1,1,1), block "
            "(32,32,2), 0 bytes of dynamic shared memory");
  EXPECT_EQ(onhost::runGrid(dim3(1, 65536), dim3(32), 0, Count),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(onhost::runGrid(dim3(0), dim3(32), 0, Count),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(onhost::runGrid(dim3(1), dim3(32), 64 * 1024, Count),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(Runs, 0);
  // The largest y, and the largest block.
  EXPECT_EQ(onhost::runGrid(dim3(2, 65535), dim3(1), 0, Count), cudaSuccess);
  EXPECT_EQ(onhost::runGrid(dim3(1), dim3(1024), 0, Count), cudaSuccess);
  EXPECT_EQ(Runs, 2 * 65535 + 1024);
}

/// Every thread of every block stores to the same place: the device
/// keeps one of them, whichever.
__global__ void everyoneStores(int *Out) {
  *Out = int(blockIdx.x * blockDim.x + threadIdx.x);
}

TEST(GridOnHostTest, ReversedOrderExposesRaces) {
  // ctest runs these tests in both orders (cuda-host-unittests-reversed):
  // this one sets the order it needs and puts the default back.
  const bool Was = onhost::getReversedOrder();
  int Out = -1;
  auto Run = [&] { everyoneStores(&Out); };
  onhost::setReversedOrder(false);
  ASSERT_EQ(onhost::runGrid(dim3(3), dim3(64), 0, Run), cudaSuccess);
  EXPECT_EQ(Out, 3 * 64 - 1);
  onhost::setReversedOrder(true);
  ASSERT_EQ(onhost::runGrid(dim3(3), dim3(64), 0, Run), cudaSuccess);
  EXPECT_EQ(Out, 0);
  // Barriers and shuffles mean the same in either order.
  std::vector<int> Mirrored(3 * 64, -1), Sums(64, -1);
  ASSERT_EQ(onhost::runGrid(dim3(3), dim3(64), 0,
                            [&] { mirrorThroughShared(Mirrored.data()); }),
            cudaSuccess);
  ASSERT_EQ(
      onhost::runGrid(dim3(1), dim3(16, 4), 0, [&] { warpSums(Sums.data()); }),
      cudaSuccess);
  onhost::setReversedOrder(Was);
  for (int B = 0; B < 3; ++B)
    for (int T = 0; T < 64; ++T)
      EXPECT_EQ(Mirrored[size_t(B * 64 + T)], (63 - T) * (63 - T) + B);
  for (int I = 0; I < 64; ++I)
    EXPECT_EQ(Sums[size_t(I)], I < 32 ? 496 : 1520) << I;
}

/// Every entry of \p L is set (a kernel family added to one table and
/// not the other would crash the step that needs it).
void expectEveryLauncherSet(const KernelLaunchers &L, const char *Which) {
  using Slot = void (*)();
  static_assert(sizeof(KernelLaunchers) % sizeof(Slot) == 0,
                "KernelLaunchers holds only function pointers");
  constexpr size_t Count = sizeof(KernelLaunchers) / sizeof(Slot);
  uintptr_t Slots[Count];
  std::memcpy(Slots, &L, sizeof(L));
  for (size_t I = 0; I < Count; ++I)
    EXPECT_NE(Slots[I], uintptr_t(0)) << Which << " launcher " << I;
}

TEST(GridOnHostTest, BothLauncherTablesAreComplete) {
  expectEveryLauncherSet(onhost::getLaunchers(), "host");
  expectEveryLauncherSet(getDeviceLaunchers(), "device");
}

} // namespace
