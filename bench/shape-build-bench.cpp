//===- shape-build-bench.cpp - What a new input shape costs, by phase -----===//
//
// Loads a model, opens one CPU session and feeds it one input at a series
// of shapes (one dim of a base shape swept over a list of sizes), each
// shape new to the session, then runs each once more. Prints, per shape,
// the build's phases (specialize, optimize, lower), its first run and the
// repeat, and at the end their medians over the shapes after the first
// (whose build also prepares the model and packs the weights). Run it
// under perf to see where a build goes. With RANGE (LO..HI), the session
// is given that input range for the swept dim (SessionOptions::
// InputRanges: an ONNX model is optimized once for the range). With
// --builds-only first, each shape is only built (Session::prepare), not
// run, and every program is kept (no eviction): a profile of that is a
// profile of the builds; each line then ends with the KiB of constants
// the build made for its shape (Specialization::OwnedBytes). A benchmark: run
// it by hand, not from ctest.
//
//   strider-bench-shape-build [--builds-only] MODEL INPUT BASE AXIS
//                             SIZE,SIZE,... [RANGE]
//   e.g. rec.onnx x 1x3x48x320 3 100,131,162 100..1000
//
//===----------------------------------------------------------------------===//

#include "strider/Engine/Session.h"
#include "strider/Runtime/Tensor.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <vector>

using namespace strider;

static int usage(const char *Why) {
  llvm::errs() << "strider-bench-shape-build: " << Why
               << "\nusage: strider-bench-shape-build [--builds-only] MODEL "
                  "INPUT BASE AXIS SIZE,SIZE,... [LO..HI] (BASE e.g. "
                  "1x3x48x320; AXIS the dim swept; LO..HI its input range; "
                  "--builds-only: build each shape, run none)\n";
  return 1;
}

static bool parseList(llvm::StringRef S, char Sep,
                      llvm::SmallVectorImpl<int64_t> &Out) {
  llvm::SmallVector<llvm::StringRef, 8> Parts;
  S.split(Parts, Sep);
  for (llvm::StringRef P : Parts) {
    int64_t N;
    if (P.getAsInteger(10, N) || N < 1)
      return false;
    Out.push_back(N);
  }
  return !Out.empty();
}

static double median(std::vector<double> V) {
  if (V.empty())
    return 0;
  std::sort(V.begin(), V.end());
  return V[V.size() / 2];
}

int main(int argc, char **argv) {
  bool BuildsOnly = argc > 1 && llvm::StringRef(argv[1]) == "--builds-only";
  if (BuildsOnly) {
    --argc;
    ++argv;
  }
  if (argc != 6 && argc != 7)
    return usage("wrong number of arguments");
  llvm::SmallVector<int64_t, 6> Base, Sizes;
  unsigned Axis;
  if (!parseList(argv[3], 'x', Base))
    return usage("bad BASE");
  if (llvm::StringRef(argv[4]).getAsInteger(10, Axis) || Axis >= Base.size())
    return usage("bad AXIS");
  if (!parseList(argv[5], ',', Sizes))
    return usage("bad SIZE list");
  auto M = engine::Model::load(argv[1]);
  if (!M) {
    llvm::errs() << llvm::toString(M.takeError()) << "\n";
    return 1;
  }
  engine::SessionOptions Opts;
  // Builds only: every program kept, so that no eviction's destruction
  // lands in a profile of the builds.
  if (BuildsOnly)
    Opts.MaxSpecializations = unsigned(Sizes.size()) + 1;
  if (argc == 7) {
    auto [Lo, Hi] = llvm::StringRef(argv[6]).split("..");
    engine::InputRange R;
    R.Input = argv[2];
    R.Axis = Axis;
    if (Lo.getAsInteger(10, R.Min) || Hi.getAsInteger(10, R.Max))
      return usage("bad RANGE");
    Opts.InputRanges.push_back(R);
  }
  auto S = engine::Session::create(*M, Opts);
  if (!S) {
    llvm::errs() << llvm::toString(S.takeError()) << "\n";
    return 1;
  }
  using Clock = std::chrono::steady_clock;
  auto Ms = [](Clock::time_point A, Clock::time_point B) {
    return std::chrono::duration<double, std::milli>(B - A).count();
  };
  llvm::outs() << "    size  special.  optimize     lower     build   1st run"
                  "    repeat   (ms)"
               << (BuildsOnly ? "  own KiB" : "") << "\n";
  std::vector<double> Spec, Opt, Low, Build, Repeat;
  // A build's phases, for the medians (not the first shape's, whose build
  // also prepares the model and packs the weights).
  auto Record = [&](size_t I, const engine::Session::CacheStats &C) {
    if (I == 0)
      return;
    Spec.push_back(C.LastBuild.Specialize * 1e3);
    Opt.push_back(C.LastBuild.Optimize * 1e3);
    Low.push_back(C.LastBuild.Lower * 1e3);
    Build.push_back(C.LastBuildSeconds * 1e3);
  };
  for (size_t I = 0; I < Sizes.size(); ++I) {
    llvm::SmallVector<int64_t, 6> Shape(Base);
    Shape[Axis] = Sizes[I];
    runtime::TensorMap In;
    runtime::Tensor X(ElementType::F32, Shape);
    auto Bytes = X.getMutableBytes();
    float *F = reinterpret_cast<float *>(Bytes.data());
    for (int64_t E = 0; E < X.getNumElements(); ++E)
      F[E] = float((E * 7919) % 2001) / 1000.0f - 1.0f;
    In.emplace(argv[2], std::move(X));
    if (BuildsOnly) {
      auto Built = (*S)->prepare(engine::Session::getKey(In));
      if (!Built) {
        llvm::errs() << llvm::toString(Built.takeError()) << "\n";
        return 1;
      }
      const engine::Session::CacheStats C = (*S)->getCacheStats();
      const auto &P = C.LastBuild;
      llvm::outs() << llvm::format(
          "%8lld %9.2f %9.2f %9.2f %9.2f %9s %9s %9.1f\n", (long long)Sizes[I],
          P.Specialize * 1e3, P.Optimize * 1e3, P.Lower * 1e3,
          C.LastBuildSeconds * 1e3, static_cast<const char *>(""),
          static_cast<const char *>(""), double((*Built)->OwnedBytes) / 1024.0);
      Record(I, C);
      continue;
    }
    auto T0 = Clock::now();
    auto Out = (*S)->run(In);
    auto T1 = Clock::now();
    if (!Out) {
      llvm::errs() << llvm::toString(Out.takeError()) << "\n";
      return 1;
    }
    auto Again = (*S)->run(In);
    auto T2 = Clock::now();
    if (!Again) {
      llvm::errs() << llvm::toString(Again.takeError()) << "\n";
      return 1;
    }
    const engine::Session::CacheStats C = (*S)->getCacheStats();
    const auto &P = C.LastBuild;
    llvm::outs() << llvm::format(
        "%8lld %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n", (long long)Sizes[I],
        P.Specialize * 1e3, P.Optimize * 1e3, P.Lower * 1e3,
        C.LastBuildSeconds * 1e3, Ms(T0, T1), Ms(T1, T2));
    Record(I, C);
    if (I > 0)
      Repeat.push_back(Ms(T1, T2));
  }
  llvm::outs() << "  median"
               << llvm::format(" %9.2f %9.2f %9.2f %9.2f %9s %9.2f\n",
                               median(Spec), median(Opt), median(Low),
                               median(Build), static_cast<const char *>(""),
                               median(Repeat));
  return 0;
}
