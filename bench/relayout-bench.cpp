//===- relayout-bench.cpp - Relayout bandwidth against memcpy -------------===//
//
// strider-bench-relayout: the CPU backend's relayout (copyStrided, the
// kernel of every `relayout` op) moving NCHW <-> NHWC tensors of several
// sizes, against memcpy of the same bytes in the same run. Sizes up to
// 1 MiB stay in this machine's L2 (in-cache); larger ones stream memory.
// Prints GB/s (bytes read + written per second, medians over repeats) and
// the ratio to memcpy.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

using namespace strider::cpu;

namespace {

template <typename Fn> double medianSeconds(Fn F, int Reps) {
  std::vector<double> T;
  for (int R = 0; R < Reps; ++R) {
    auto Start = std::chrono::steady_clock::now();
    F();
    T.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
            .count());
  }
  std::sort(T.begin(), T.end());
  return T[T.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  int Threads = argc > 1 ? std::atoi(argv[1]) : 1;
  struct Shape {
    int64_t C, H, W;
  } Shapes[] = {
      {64, 28, 28}, {256, 14, 14}, {64, 56, 56}, {32, 112, 112}, {256, 56, 56}};
  std::printf("threads %d\n%-14s %10s %12s %12s %12s %8s\n", Threads,
              "C x H x W", "KiB", "memcpy GB/s", "to NHWC GB/s", "to NCHW GB/s",
              "ratio");
  for (const Shape &S : Shapes) {
    const int64_t N = S.C * S.H * S.W, Bytes = N * 4;
    std::vector<float> A(static_cast<size_t>(N)), B(static_cast<size_t>(N));
    for (int64_t I = 0; I < N; ++I)
      A[size_t(I)] = float(I % 97);
    const int64_t Shape4[4] = {1, S.C, S.H, S.W};
    const int64_t NCHW[4] = {N, S.H * S.W, S.W, 1};
    const int64_t NHWC[4] = {N, 1, S.W * S.C, S.C};
    const int Reps = Bytes < (1 << 20) ? 2001 : 201;
    auto Bytes8 = [&](const float *P) {
      return reinterpret_cast<const uint8_t *>(P);
    };
    double Mem = medianSeconds(
        [&] { std::memcpy(B.data(), A.data(), size_t(Bytes)); }, Reps);
    double ToNHWC = medianSeconds(
        [&] {
          copyStrided(4, Shape4, Bytes8(A.data()), NCHW,
                      reinterpret_cast<uint8_t *>(B.data()), NHWC, 4, Threads);
        },
        Reps);
    // Check one element: B must hold A in NHWC order.
    if (B[size_t(S.C)] != A[size_t(1)]) {
      std::fprintf(stderr, "relayout produced wrong data\n");
      return 1;
    }
    double ToNCHW = medianSeconds(
        [&] {
          copyStrided(4, Shape4, Bytes8(B.data()), NHWC,
                      reinterpret_cast<uint8_t *>(A.data()), NCHW, 4, Threads);
        },
        Reps);
    auto GBs = [&](double Sec) { return 2.0 * double(Bytes) / Sec / 1e9; };
    char Name[32];
    std::snprintf(Name, sizeof(Name), "%ldx%ldx%ld", long(S.C), long(S.H),
                  long(S.W));
    std::printf("%-14s %10ld %12.1f %12.1f %12.1f %8.2f\n", Name,
                long(Bytes / 1024), GBs(Mem), GBs(ToNHWC), GBs(ToNCHW),
                std::min(GBs(ToNHWC), GBs(ToNCHW)) / GBs(Mem));
  }
  return 0;
}
