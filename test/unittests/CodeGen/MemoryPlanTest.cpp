//===- MemoryPlanTest.cpp - Liveness-based buffer placement ---------------===//

#include "strider/CodeGen/MemoryPlan.h"
#include "strider/Support/Memory.h"

#include "gtest/gtest.h"

#include <random>
#include <vector>

using namespace strider;
using namespace strider::codegen;

TEST(MemoryPlanTest, LiveBuffersNeverOverlap) {
  std::mt19937 Rng(42);
  for (int Trial = 0; Trial < 200; ++Trial) {
    std::vector<BufferRequest> Reqs;
    int N = 1 + int(Rng() % 30);
    for (int I = 0; I < N; ++I) {
      BufferRequest R;
      R.Bytes = int64_t(1 + Rng() % 5000);
      R.Begin = int(Rng() % 20) - 1;
      R.End = R.Begin + int(Rng() % 8);
      Reqs.push_back(R);
    }
    MemoryPlan P = planMemory(Reqs, 64);
    ASSERT_EQ(P.Offsets.size(), Reqs.size());
    EXPECT_GE(P.ArenaBytes, P.PeakLiveBytes);
    for (int I = 0; I < N; ++I) {
      EXPECT_EQ(P.Offsets[I] % 64, 0);
      EXPECT_LE(P.Offsets[I] + Reqs[I].Bytes, P.ArenaBytes);
      for (int J = I + 1; J < N; ++J) {
        bool Live =
            Reqs[I].Begin <= Reqs[J].End && Reqs[J].Begin <= Reqs[I].End;
        bool Disjoint = P.Offsets[I] + Reqs[I].Bytes <= P.Offsets[J] ||
                        P.Offsets[J] + Reqs[J].Bytes <= P.Offsets[I];
        EXPECT_TRUE(!Live || Disjoint) << "trial " << Trial;
      }
    }
  }
}

TEST(MemoryPlanTest, ReusesMemoryOfDeadBuffers) {
  // A chain: each buffer dies when the next is written.
  std::vector<BufferRequest> Reqs;
  for (int I = 0; I < 10; ++I)
    Reqs.push_back({1024, I, I + 1});
  MemoryPlan P = planMemory(Reqs, 64);
  EXPECT_EQ(P.PeakLiveBytes, 2048);
  EXPECT_EQ(P.ArenaBytes, 2048);
}

TEST(MemoryPlanTest, HugeBuffersSaturateInsteadOfWrapping) {
  // Four live buffers of 2^62 bytes (the most a tensor may have): their
  // offsets would pass int64; the arena saturates at MaxRunBytes instead.
  std::vector<BufferRequest> Reqs(4);
  for (BufferRequest &R : Reqs) {
    R.Bytes = int64_t(1) << 62;
    R.Begin = 0;
    R.End = 3;
  }
  MemoryPlan P = planMemory(Reqs, 64);
  EXPECT_EQ(P.ArenaBytes, int64_t(MaxRunBytes));
  EXPECT_EQ(P.PeakLiveBytes, int64_t(MaxRunBytes));
}
