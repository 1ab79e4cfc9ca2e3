//===- relayout-bench.cpp - Relayout bandwidth against memcpy -------------===//
//
// strider-bench-relayout: the CPU backend's relayout (copyStrided, the
// kernel of every `relayout` op) moving NCHW <-> NHWC tensors of several
// sizes, against memcpy of the same bytes in the same run. Both read and
// write every byte once; each is timed warm (the first repeat is not
// counted), memcpy and the two relayouts alternating repeat by repeat so
// that they see the same machine. Prints GB/s (bytes read + written per
// second, medians over repeats) and the ratio of the slower direction to
// memcpy. Tensors whose source and destination fit in one core's L2
// together are marked in-cache.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace strider::cpu;

namespace {

struct Shape {
  int64_t C, H, W;
};

// Channels 3..2048 and planes 7x7..224x224, as in image models.
const Shape DefaultShapes[] = {{512, 7, 7},   {2048, 7, 7},   {64, 28, 28},
                               {256, 14, 14}, {1024, 14, 14}, {3, 224, 224},
                               {24, 56, 56},  {64, 56, 56},   {32, 112, 112},
                               {128, 56, 56}, {256, 56, 56},  {64, 112, 112}};

/// A 64-byte aligned float buffer.
class AlignedFloats {
public:
  explicit AlignedFloats(int64_t N)
      : P(static_cast<float *>(
            std::aligned_alloc(64, size_t((N * 4 + 63) / 64 * 64)))) {}
  ~AlignedFloats() { std::free(P); }
  AlignedFloats(const AlignedFloats &) = delete;
  AlignedFloats &operator=(const AlignedFloats &) = delete;
  float *data() { return P; }
  const float *data() const { return P; }
  float &operator[](size_t I) { return P[I]; }

private:
  float *P;
};

constexpr int64_t L2Bytes = 2 << 20;

double seconds(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
      .count();
}

double median(std::vector<double> T) {
  std::sort(T.begin(), T.end());
  return T[T.size() / 2];
}

void usage() {
  std::printf(
      "usage: strider-bench-relayout [THREADS] [options]\n"
      "  --threads N     threads of the relayout (default 1; memcpy runs on "
      "one)\n"
      "  --reps N        timed repeats per tensor (default: 2001 in-cache, "
      "201 larger)\n"
      "  --shape CxHxW   a tensor to time (repeatable; default: a set from "
      "7x7 to 224x224)\n"
      "  --help          this text\n"
      "Columns: GB/s counted as bytes read + written (2 x tensor size) per "
      "second,\nmedians over the repeats; ratio = slower relayout / memcpy.\n");
}

} // namespace

int main(int argc, char **argv) {
  int Threads = 1, RepsOverride = 0;
  std::vector<Shape> Shapes;
  for (int I = 1; I < argc; ++I) {
    std::string A = argv[I];
    if (A == "--help" || A == "-h") {
      usage();
      return 0;
    }
    if (A == "--threads" && I + 1 < argc) {
      Threads = std::atoi(argv[++I]);
    } else if (A == "--reps" && I + 1 < argc) {
      RepsOverride = std::atoi(argv[++I]);
    } else if (A == "--shape" && I + 1 < argc) {
      Shape S;
      long C, H, W;
      if (std::sscanf(argv[++I], "%ldx%ldx%ld", &C, &H, &W) != 3 || C < 1 ||
          H < 1 || W < 1) {
        std::fprintf(stderr, "bad --shape '%s'\n", argv[I]);
        return 1;
      }
      S.C = C;
      S.H = H;
      S.W = W;
      Shapes.push_back(S);
    } else if (!A.empty() && A[0] != '-') {
      Threads = std::atoi(A.c_str());
    } else {
      std::fprintf(stderr, "unknown argument '%s' (see --help)\n", A.c_str());
      return 1;
    }
  }
  if (Shapes.empty())
    Shapes.assign(std::begin(DefaultShapes), std::end(DefaultShapes));
  std::printf("threads %d\n%-14s %8s %8s %12s %12s %12s %8s\n", Threads,
              "C x H x W", "KiB", "", "memcpy GB/s", "to NHWC GB/s",
              "to NCHW GB/s", "ratio");
  for (const Shape &S : Shapes) {
    const int64_t N = S.C * S.H * S.W, Bytes = N * 4;
    // 64-byte aligned, as the backend's arena places its tensors.
    AlignedFloats A(N), B(N);
    for (int64_t I = 0; I < N; ++I)
      A[size_t(I)] = float(I);
    const int64_t Shape4[4] = {1, S.C, S.H, S.W};
    const int64_t NCHW[4] = {N, S.H * S.W, S.W, 1};
    const int64_t NHWC[4] = {N, 1, S.W * S.C, S.C};
    const bool InCache = 2 * Bytes <= L2Bytes;
    const int Reps = RepsOverride > 0 ? RepsOverride : InCache ? 2001 : 201;
    auto In = [](const AlignedFloats &V) {
      return reinterpret_cast<const uint8_t *>(V.data());
    };
    auto Out = [](AlignedFloats &V) {
      return reinterpret_cast<uint8_t *>(V.data());
    };
    // memcpy A -> B, then A (NCHW) -> B (NHWC) -> A (NCHW): the same
    // two buffers.
    std::vector<double> Mem, ToNHWC, ToNCHW;
    for (int R = 0; R <= Reps; ++R) {
      auto T0 = std::chrono::steady_clock::now();
      std::memcpy(B.data(), A.data(), size_t(Bytes));
      double TMem = seconds(T0);
      T0 = std::chrono::steady_clock::now();
      copyStrided(4, Shape4, In(A), NCHW, Out(B), NHWC, 4, Threads);
      double TTo = seconds(T0);
      T0 = std::chrono::steady_clock::now();
      copyStrided(4, Shape4, In(B), NHWC, Out(A), NCHW, 4, Threads);
      double TFrom = seconds(T0);
      if (R == 0)
        continue; // Cold caches and page faults.
      Mem.push_back(TMem);
      ToNHWC.push_back(TTo);
      ToNCHW.push_back(TFrom);
    }
    // B must hold A in NHWC order, and A its original values.
    const int64_t HW = S.H * S.W;
    for (int64_t C = 0; C < S.C; ++C)
      for (int64_t P = 0; P < HW; ++P)
        if (B[size_t(P * S.C + C)] != float(C * HW + P) ||
            A[size_t(C * HW + P)] != float(C * HW + P)) {
          std::fprintf(stderr, "relayout produced wrong data\n");
          return 1;
        }
    auto GBs = [&](const std::vector<double> &T) {
      return 2.0 * double(Bytes) / median(T) / 1e9;
    };
    char Name[32];
    std::snprintf(Name, sizeof(Name), "%ldx%ldx%ld", long(S.C), long(S.H),
                  long(S.W));
    std::printf("%-14s %8ld %8s %12.1f %12.1f %12.1f %8.2f\n", Name,
                long(Bytes / 1024), InCache ? "in-cache" : "", GBs(Mem),
                GBs(ToNHWC), GBs(ToNCHW),
                std::min(GBs(ToNHWC), GBs(ToNCHW)) / GBs(Mem));
  }
  return 0;
}
