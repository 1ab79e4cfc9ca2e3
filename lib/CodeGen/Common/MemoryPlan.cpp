//===- MemoryPlan.cpp - Liveness-based buffer placement -------------------===//

#include "strider/CodeGen/MemoryPlan.h"
#include "strider/Support/Memory.h"

#include <algorithm>
#include <numeric>

using namespace strider;
using namespace strider::codegen;

MemoryPlan codegen::planMemory(llvm::ArrayRef<BufferRequest> Requests,
                               int64_t Alignment) {
  MemoryPlan Plan;
  const size_t N = Requests.size();
  Plan.Offsets.assign(N, 0);
  // Sizes and offsets saturate at MaxRunBytes: a plan that big is refused
  // by the memory budget, and nothing here wraps.
  auto Add = [](int64_t A, int64_t B) {
    return int64_t(addSaturated(uint64_t(A), uint64_t(B)));
  };
  auto Round = [&](int64_t B) {
    B = std::min<int64_t>(std::max<int64_t>(B, 1), int64_t(MaxRunBytes));
    return (B + Alignment - 1) / Alignment * Alignment;
  };

  std::vector<size_t> Order(N);
  std::iota(Order.begin(), Order.end(), 0);
  std::stable_sort(Order.begin(), Order.end(), [&](size_t A, size_t B) {
    if (Requests[A].Bytes != Requests[B].Bytes)
      return Requests[A].Bytes > Requests[B].Bytes;
    return Requests[A].Begin < Requests[B].Begin;
  });

  struct Placed {
    int64_t Offset, Size;
    int Begin, End;
  };
  std::vector<Placed> Done;
  for (size_t I : Order) {
    const BufferRequest &R = Requests[I];
    const int64_t Size = Round(R.Bytes);
    // Occupied intervals of the buffers whose lifetimes overlap this one.
    std::vector<std::pair<int64_t, int64_t>> Busy;
    for (const Placed &P : Done)
      if (P.Begin <= R.End && R.Begin <= P.End)
        Busy.push_back({P.Offset, Add(P.Offset, P.Size)});
    std::sort(Busy.begin(), Busy.end());
    // The smallest gap that fits (best fit), else the end.
    int64_t Best = -1, BestGap = 0, Cursor = 0;
    for (const auto &B : Busy) {
      if (B.first >= Add(Cursor, Size)) {
        int64_t Gap = B.first - Cursor;
        if (Best < 0 || Gap < BestGap) {
          Best = Cursor;
          BestGap = Gap;
        }
      }
      Cursor = std::max(Cursor, B.second);
    }
    if (Best < 0)
      Best = Cursor;
    Plan.Offsets[I] = Best;
    Plan.ArenaBytes = std::max(Plan.ArenaBytes, Add(Best, Size));
    Done.push_back({Best, Size, R.Begin, R.End});
  }

  // Peak of live bytes, for reports: sweep the steps.
  if (Requests.empty())
    return Plan;
  int First = Requests[0].Begin, Last = Requests[0].End;
  for (const BufferRequest &R : Requests) {
    First = std::min(First, R.Begin);
    Last = std::max(Last, R.End);
  }
  for (int S = First; S <= Last; ++S) {
    int64_t Live = 0;
    for (const BufferRequest &R : Requests)
      if (R.Begin <= S && S <= R.End)
        Live = Add(Live, Round(R.Bytes));
    Plan.PeakLiveBytes = std::max(Plan.PeakLiveBytes, Live);
  }
  return Plan;
}
