//===- strider-run.cpp - Execute a model and check its outputs ------------===//
//
// Runs an ONNX model, a textual IR graph or a strider-compile output
// directory on given or random inputs with the reference interpreter or
// the CPU backend: the graph is specialized to the inputs' shapes, and an
// ONNX model goes through strider-compile's pipeline first. Writes the
// outputs as .npy files and compares them with expected ones.
//
//===----------------------------------------------------------------------===//

#include "Common/OutOfMemory.h"

#include "strider/CodeGen/Registry/BackendRegistry.h"
#include "strider/Engine/Session.h"
#include "strider/IR/AsmParser.h"
#include "strider/IR/Graph.h"
#include "strider/IR/Verifier.h"
#include "strider/Import/ONNX.h"
#include "strider/Layout/Tuning.h"
#include "strider/Runtime/Npy.h"
#include "strider/Runtime/Reference.h"
#include "strider/Support/FileIO.h"
#include "strider/Support/Memory.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"
#include "strider/Transforms/Specialize.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <random>

using namespace strider;
using namespace strider::runtime;
namespace cl = llvm::cl;

static cl::OptionCategory RunCat("strider-run options");

static cl::opt<std::string>
    ModelPath(cl::Positional,
              cl::desc("<model.onnx | model.lir | strider-compile output dir>"),
              cl::cat(RunCat));
static cl::opt<std::string>
    Backend("backend",
            cl::desc("Executor: cpu (SIMD kernels, threads, fused "
                     "epilogues, planned memory; the default), cuda (cuDNN, "
                     "cuBLASLt and Strider's kernels on a GPU, replayed as a "
                     "CUDA graph; needs a GPU), reference (plain loops, "
                     "the oracle the others are tested against) or "
                     "cuda-emulated (the cuda backend's plan run on the "
                     "host by models of its kernels: no GPU needed, slow; "
                     "checks what the cuda backend would compute)"),
            cl::init("cpu"), cl::cat(RunCat));
static cl::opt<bool> EmulateDeviceCode(
    "emulate-device-code",
    cl::desc("With --backend=cuda-emulated: run the kernel steps through "
             "the kernels' own device code compiled for the host (every "
             "block and thread, barriers and warp shuffles as on the "
             "device) instead of their host models; slower, and checks the "
             "kernels' indexing too"),
    cl::cat(RunCat));
static cl::list<std::string>
    InputFlags("input",
               cl::desc("An input: NAME=FILE.npy or NAME=FILE.pb (an ONNX "
                        "TensorProto); repeat for each input"),
               cl::value_desc("NAME=FILE"), cl::cat(RunCat));
static cl::opt<bool> RandomInputs(
    "random-inputs",
    cl::desc("Fill inputs not given with --input with seeded random values "
             "(floats in [-1, 1), integers in [0, 10))"),
    cl::init(false), cl::cat(RunCat));
static cl::opt<uint64_t> Seed("seed", cl::desc("Seed of --random-inputs"),
                              cl::init(0), cl::cat(RunCat));
static cl::list<std::string> DimFlags(
    "dim",
    cl::desc("Size of a symbolic dim of the inputs, e.g. N=1 (an anonymous "
             "dim of input x at axis 2 is 'x:2'); random inputs take 1 for "
             "dims nothing binds, given inputs bind their own"),
    cl::value_desc("NAME=SIZE"), cl::cat(RunCat));
static cl::opt<std::string>
    OutputDir("output-dir",
              cl::desc("Write each output to DIR/<output name>.npy (names "
                       "that are no valid file name, e.g. with '/', have "
                       "every character but [A-Za-z0-9._-] replaced by '_')"),
              cl::value_desc("dir"), cl::cat(RunCat));
static cl::opt<std::string> CompareDir(
    "compare",
    cl::desc("Compare with expected outputs in DIR (<output name>.npy, "
             "literal or sanitized as --output-dir writes it, or ONNX "
             "output_K.pb in output order); exit 1 on a mismatch"),
    cl::value_desc("dir"), cl::cat(RunCat));
static cl::opt<double> RTol("rtol", cl::desc("Relative tolerance (1e-4)"),
                            cl::init(1e-4), cl::cat(RunCat));
static cl::opt<double> ATol("atol", cl::desc("Absolute tolerance (1e-5)"),
                            cl::init(1e-5), cl::cat(RunCat));
static cl::opt<std::string> OnnxTest(
    "onnx-test",
    cl::desc("Run a directory in ONNX's backend-test format (model.onnx, "
             "test_data_set_*/input_K.pb and output_K.pb) and check every "
             "data set (instead of a model argument)"),
    cl::value_desc("dir"), cl::cat(RunCat));
static cl::opt<unsigned>
    BenchRuns("bench",
              cl::desc("Time this many runs (after --warmup) and print the "
                       "min, median, p10 and p90 latency"),
              cl::value_desc("runs"), cl::init(0), cl::cat(RunCat));
static cl::opt<unsigned> Warmup("warmup",
                                cl::desc("Untimed runs before --bench (1)"),
                                cl::init(1), cl::cat(RunCat));
static cl::opt<int>
    Device("device", cl::desc("With --backend=cuda: the GPU to run on (0)"),
           cl::init(0), cl::cat(RunCat));
static cl::opt<bool> Pinned(
    "pinned",
    cl::desc("With --backend=cuda: page-lock the inputs' host memory, as "
             "an application that pins its buffers does, so that they are "
             "copied to the GPU directly and asynchronously, and copy "
             "outputs through pinned buffers (default on; --pinned=false "
             "copies from and to pageable memory)"),
    cl::init(true), cl::cat(RunCat));
static cl::opt<std::string> PrecisionFlag(
    "precision",
    cl::desc("With --backend=cuda: what convolutions and matmuls compute "
             "in: fp32 (default), tf32 (fp32 storage, TF32 tensor cores), "
             "fp16 or bf16 (mixed precision as with AMP: half storage and "
             "tensor cores for convs and matmuls, fp32 accumulation; "
             "normalizations, softmax, reductions and the graph's inputs "
             "and outputs stay fp32; the assign-precision pass places the "
             "casts where they cost least)"),
    cl::init("fp32"), cl::cat(RunCat));
static cl::opt<unsigned>
    Threads("threads",
            cl::desc("Threads of the backend (the reference interpreter runs "
                     "on one; the cpu backend splits each kernel over N)"),
            cl::init(1), cl::cat(RunCat));
static cl::opt<bool>
    Verbose("verbose",
            cl::desc("With --backend=cpu or cuda: list the program's kernel "
                     "calls (fallbacks to reference kernels marked) and its "
                     "memory plan, on stderr"),
            cl::init(false), cl::cat(RunCat));
static cl::opt<bool>
    Profile("profile",
            cl::desc("With --backend=cpu or cuda and --bench: time every "
                     "kernel call of the timed runs (cuda: a CUDA event "
                     "after each step, recorded inside the graph's replay) "
                     "and print the slowest kernel calls and the time per "
                     "kernel kind, on stderr"),
            cl::init(false), cl::cat(RunCat));
static cl::opt<bool> NoOptimize(
    "no-optimize",
    cl::desc("Run an ONNX model as imported (shapes still specialized to "
             "the inputs); by default it first goes through strider-compile's "
             "pipeline: canonicalize, then layout assignment for --target"),
    cl::init(false), cl::cat(RunCat));
static cl::opt<std::string> TargetName(
    "target",
    cl::desc("Layout-assignment target of an ONNX model (default: this "
             "machine's, cpu-avx512 or cpu-avx2; with --backend=cuda the "
             "GPU's, cuda-sm90 from sm_90 on, else cuda-sm80)"),
    cl::value_desc("name"), cl::cat(RunCat));
static cl::opt<std::string> TuningFile(
    "tuning-file",
    cl::desc("Kernel times measured for --target by strider-compile --tune: "
             "an ONNX model's layouts are costed by them, and with "
             "--backend=cuda its convs run the cuDNN algorithms the file "
             "holds"),
    cl::value_desc("file"), cl::cat(RunCat));
static cl::opt<bool> Strict(
    "strict",
    cl::desc("Refuse what ONNX Runtime tolerates in ONNX files: negative "
             "dim_value, declared shapes that contradict inference"),
    cl::init(false), cl::cat(RunCat));
static cl::opt<bool> Quiet("quiet",
                           cl::desc("No status line on stderr (what was "
                                    "done to the graph); warnings stay"),
                           cl::init(false), cl::cat(RunCat));
static cl::opt<std::string> MaxMemory(
    "max-memory",
    cl::desc("The most a run may allocate on the host (activations; the "
             "reference backend's tensors), e.g. 4G or 512M (K, M, G, T: "
             "powers of 1024): a program needing more is refused before it "
             "runs, saying how much it needs. Default: the memory available "
             "on this machine"),
    cl::value_desc("size"), cl::cat(RunCat));
static cl::opt<bool> Json("json",
                          cl::desc("Print one JSON object instead of text"),
                          cl::init(false), cl::cat(RunCat));

static llvm::Error toolError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

/// \p E as the tool's own error (`strider-run: ...`), as opposed to a
/// located diagnostic about the model, which prints as it is.
static llvm::Error toolPrefixed(llvm::Error E) {
  return toolError("strider-run: " + llvm::toString(std::move(E)));
}

/// Read one tensor file (.npy, else an ONNX TensorProto).
static llvm::Expected<Tensor> readTensorFile(llvm::StringRef Path) {
  if (Path.endswith(".npy"))
    return readNpyFile(Path);
  auto D = readONNXTensorFile(Path);
  if (!D)
    return D.takeError();
  return Tensor::fromData(**D);
}

/// The --dim flags as sizes by symbol.
static llvm::Expected<std::map<std::string, int64_t>> parseDimFlags() {
  std::map<std::string, int64_t> Dims;
  for (const std::string &D : DimFlags) {
    auto [Name, Size] = llvm::StringRef(D).rsplit('=');
    int64_t N;
    if (Name.empty() || Size.getAsInteger(10, N) || N < 0)
      return toolError("bad --dim '" + D + "' (expected NAME=SIZE, SIZE >= 0)");
    Dims[Name.str()] = N;
  }
  return Dims;
}

/// Make random tensors for the inputs of \p M that are neither given nor
/// defaulted (with --random-inputs; sizes of unbound symbolic dims from
/// --dim or the given inputs, else 1).
static llvm::Error fillRandomInputs(const engine::Model &M,
                                    const std::map<std::string, int64_t> &Dims,
                                    TensorMap &Given) {
  const Graph &G = M.getGraph();
  // Sizes of symbols for random inputs: --dim, then the given inputs.
  std::map<std::string, int64_t> Sizes = Dims;
  for (const auto &[Name, T] : Given) {
    Value *In = G.lookupValue(Name);
    if (!In || !In->isGraphInput())
      return toolError("the model has no input '" + Name + "'");
    const TensorType &Want = In->getType();
    if (Want.hasRank() && Want.getRank() == T.getRank())
      for (unsigned I = 0; I < T.getRank(); ++I)
        if (Want.getDim(I).isSymbol())
          Sizes.try_emplace(Want.getDim(I).getSymbol().str(), T.getDim(I));
  }
  std::mt19937_64 Rng(Seed);
  for (const Value *In : M.getInputs()) {
    const TensorType &T = In->getType();
    if (Given.count(In->getName()))
      continue;
    if (!RandomInputs)
      return toolError("missing input '" + In->getName() + "' (" + T.str() +
                       "): give --input " + In->getName() +
                       "=FILE or --random-inputs");
    if (!T.hasRank() || T.getElementType() == ElementType::Unknown)
      return toolError("input '" + In->getName() + "' has type " + T.str() +
                       ": its shape and element type must be known");
    llvm::SmallVector<int64_t, 6> Shape;
    for (const Dim &D : T.getShape()) {
      if (D.isStatic())
        Shape.push_back(D.getSize());
      else if (D.isSymbol() && Sizes.count(D.getSymbol().str()))
        Shape.push_back(Sizes[D.getSymbol().str()]);
      else
        Shape.push_back(1);
    }
    ElementType Elt = T.getElementType();
    // A declared 2^62 dim beside a bound one: no tensor has that size.
    const TensorType Fill = TensorType::get(Elt, Shape);
    if (!Fill.isWithinSizeLimit())
      return toolError("random input '" + In->getName() + "' would be " +
                       Fill.str() + ": " + Fill.getSizeLimitProblem());
    Tensor R(Elt, Shape);
    std::uniform_real_distribution<double> Real(-1.0, 1.0);
    std::uniform_int_distribution<int64_t> Int(0, 9);
    for (int64_t I = 0; I < R.getNumElements(); ++I) {
      if (isFloatingPoint(Elt))
        R.setDouble(I, Real(Rng));
      else
        R.setInt(I, Int(Rng) % (Elt == ElementType::Bool ? 2 : 10));
    }
    Given[In->getName()] = std::move(R);
  }
  return llvm::Error::success();
}

/// \p Name with every character but letters, digits, '.', '-' and '_'
/// replaced by '_'.
static std::string sanitizedFileName(llvm::StringRef Name) {
  std::string S;
  for (char C : Name)
    S += (llvm::isAlnum(C) || C == '.' || C == '-' || C == '_') ? C : '_';
  return S;
}

/// The file name (without .npy) of output \p Name: the name itself when it
/// is a valid file name (not empty, "." or "..", at most 200 bytes, no '/',
/// '\\', control characters or leading '-'), the sanitized name otherwise.
static std::string fileNameFor(llvm::StringRef Name) {
  bool Valid =
      !Name.empty() && Name != "." && Name != ".." && Name.size() <= 200 &&
      !Name.startswith("-") && llvm::none_of(Name, [](char C) {
        return C == '/' || C == '\\' || (unsigned char)C < 0x20 || C == 0x7f;
      });
  return Valid ? Name.str() : sanitizedFileName(Name);
}

struct Comparison {
  bool Found = false, ShapeOk = false, Ok = false;
  double MaxAbs = 0, MaxRel = 0;
  std::string Note;
};

static Comparison compare(const Tensor &Got, const Tensor &Want) {
  Comparison C;
  C.Found = true;
  C.ShapeOk = Got.getShape() == Want.getShape();
  if (!C.ShapeOk) {
    C.Note = "shape differs";
    return C;
  }
  C.Ok = true;
  forEachIndex(Got.getShape(), [&](llvm::ArrayRef<int64_t> Index) {
    double A = Got.getDouble(Got.getOffset(Index));
    double B = Want.getDouble(Want.getOffset(Index));
    if (std::isnan(A) || std::isnan(B)) {
      if (std::isnan(A) != std::isnan(B))
        C.Ok = false;
      return;
    }
    double Abs = A == B ? 0.0 : std::fabs(A - B);
    C.MaxAbs = std::max(C.MaxAbs, Abs);
    if (B != 0)
      C.MaxRel = std::max(C.MaxRel, Abs / std::fabs(B));
    if (!(Abs <= ATol + RTol * std::fabs(B)))
      C.Ok = false;
  });
  return C;
}

/// What one run of a model on one set of inputs produced.
struct RunResult {
  std::vector<std::string> Names;
  std::vector<TensorType> Types;
  std::vector<Comparison> Comparisons; ///< Empty without expected outputs.
  std::vector<double> Millis;          ///< --bench latencies, sorted.
  bool Ok = true;
  /// The program's shape (backends with kernels: not the interpreter).
  struct ProgramStats {
    std::string Target;
    size_t Kernels = 0, Fallbacks = 0;
    int64_t ArenaBytes = 0, UnplannedBytes = 0, ConstantBytes = 0;
  };
  llvm::Optional<ProgramStats> Program;
  /// Seconds the session took to specialize, optimize and lower the model,
  /// and each phase's.
  double BuildSeconds = 0;
  engine::Specialization::BuildTimes BuildPhases;
};

/// --profile: the slowest kernel calls and the time per kernel kind.
static void printProfile(const codegen::Executable &P, llvm::raw_ostream &OS) {
  llvm::ArrayRef<double> Sec = P.getStepSeconds();
  unsigned Runs = std::max(1u, P.getProfiledRuns());
  auto Steps = P.getSteps();
  double Total = 0;
  for (double S : Sec)
    Total += S;
  std::map<std::string, std::pair<double, unsigned>> ByKind;
  std::vector<size_t> Order;
  for (size_t I = 0; I < Sec.size(); ++I) {
    std::string Kind = Steps[I].Kernel;
    auto &E = ByKind[Kind];
    E.first += Sec[I];
    ++E.second;
    Order.push_back(I);
  }
  llvm::sort(Order, [&](size_t A, size_t B) { return Sec[A] > Sec[B]; });
  OS << llvm::format("profile over %u runs: %.3f ms per run in kernels\n", Runs,
                     1e3 * Total / Runs);
  OS << "slowest kernel calls (ms per run, share, GFLOP/s):\n";
  for (size_t I = 0; I < std::min<size_t>(15, Order.size()); ++I) {
    size_t S = Order[I];
    double Ms = 1e3 * Sec[S] / Runs;
    OS << llvm::format("  %8.3f  %5.1f%%  ", Ms,
                       Total > 0 ? 100 * Sec[S] / Total : 0.0);
    if (Steps[S].Flops && Ms > 0)
      OS << llvm::format("%6.1f  ", double(Steps[S].Flops) / Ms / 1e6);
    else
      OS << "     -  ";
    OS << Steps[S].Kernel << " -> " << Steps[S].Nodes << "\n";
  }
  std::vector<std::pair<double, std::string>> Kinds;
  for (const auto &KV : ByKind)
    Kinds.push_back({KV.second.first, KV.first});
  llvm::sort(Kinds,
             [](const auto &A, const auto &B) { return A.first > B.first; });
  OS << "time per kernel kind (ms per run, share, calls):\n";
  for (const auto &[Sum, Kind] : Kinds)
    OS << llvm::format("  %8.3f  %5.1f%%  %4u  ", 1e3 * Sum / Runs,
                       Total > 0 ? 100 * Sum / Total : 0.0, ByKind[Kind].second)
       << Kind << "\n";
}

/// One warning line per kernel call that runs a reference kernel (the slow
/// path): its op, its node(s) and its share of the profiled run.
static void printFallbacks(const codegen::Executable &P,
                           llvm::raw_ostream &OS) {
  llvm::ArrayRef<double> Sec = P.getStepSeconds();
  double Total = 0;
  for (double S : Sec)
    Total += S;
  llvm::ArrayRef<codegen::StepInfo> Steps = P.getSteps();
  for (size_t I = 0; I < Steps.size(); ++I)
    if (Steps[I].Fallback)
      OS << "strider-run: warning: slow path: " << Steps[I].Kernel << " -> "
         << Steps[I].Nodes
         << llvm::format(" (%.1f%% of the run)", Total > 0 && I < Sec.size()
                                                     ? 100 * Sec[I] / Total
                                                     : 0.0)
         << "\n";
}

static double percentile(const std::vector<double> &Sorted, double P) {
  size_t I = size_t(P * double(Sorted.size() - 1) + 0.5);
  return Sorted[std::min(I, Sorted.size() - 1)];
}

/// Load \p Model, bind \p Inputs, run it, write outputs to --output-dir and
/// compare them with \p Expected (a directory, or empty).
static llvm::Expected<RunResult>
runModel(llvm::StringRef Model, TensorMap Inputs, llvm::StringRef Expected) {
  engine::LoadOptions LO;
  LO.Strict = Strict;
  auto Loaded = engine::Model::load(Model, LO);
  if (!Loaded)
    return Loaded.takeError();
  const engine::Model &M = **Loaded;
  for (const std::string &W : M.getWarnings())
    llvm::errs() << "strider-run: warning: " << W << "\n";
  engine::SessionOptions SO;
  SO.Backend = Backend;
  SO.Device = Device;
  SO.Precision = PrecisionFlag;
  SO.Pinned = Pinned;
  SO.EmulateDeviceCode = EmulateDeviceCode;
  SO.Threads = int(Threads);
  if (!MaxMemory.empty()) {
    std::optional<uint64_t> Bytes = parseByteSize(MaxMemory);
    if (!Bytes || *Bytes == 0)
      return toolError("strider-run: --max-memory='" + MaxMemory +
                       "' is not a byte count above 0 (e.g. 4G, 512M or "
                       "1000000)");
    SO.MaxMemory = *Bytes;
  }
  SO.Optimize = !NoOptimize;
  // One shape a run: optimized at its own sizes, as strider-compile
  // --shape at that shape would.
  SO.OptimizePerShape = true;
  SO.Target = TargetName;
  if (!TuningFile.empty()) {
    auto Table = layout::TuningTable::readFile(TuningFile);
    if (!Table)
      return toolPrefixed(Table.takeError());
    SO.Tuning = std::make_shared<layout::TuningTable>(std::move(*Table));
  }
  auto Dims = parseDimFlags();
  if (!Dims)
    return toolPrefixed(Dims.takeError());
  SO.Dims = *Dims;
  auto Sess = engine::Session::create(*Loaded, SO);
  if (!Sess)
    return toolPrefixed(Sess.takeError());
  if (llvm::Error E = fillRandomInputs(M, SO.Dims, Inputs))
    return toolError("strider-run: " + M.getFile() + ": " +
                     llvm::toString(std::move(E)));
  engine::Session &Run = **Sess;
  auto Spec =
      Run.prepare(engine::Session::getKey(Inputs), Run.getValueKey(Inputs));
  if (!Spec)
    return toolPrefixed(Spec.takeError());
  engine::Specialization &S = **Spec;
  const Graph &G = *S.G;
  for (const std::string &W : S.Specialized.Warnings)
    llvm::errs() << "strider-run: warning: " << W << "\n";
  if (!Quiet)
    llvm::errs() << "strider-run: " << M.getFile() << ": " << S.Summary
                 << (M.isFromOnnx() && NoOptimize ? " (--no-optimize)" : "")
                 << "\n";
  codegen::Executable &Prog = *S.Program;
  if (Verbose)
    Prog.print(llvm::errs());
  // The inputs live as long as the runs: page-locked once, as a caller
  // that reuses pinned input buffers has them (where the backend copies
  // such memory faster).
  std::vector<std::unique_ptr<codegen::HostPin>> PinnedInputs;
  if (Pinned)
    for (auto &KV : Inputs) {
      llvm::MutableArrayRef<uint8_t> Bytes = KV.second.getMutableBytes();
      auto Pin = Prog.pinHostMemory(Bytes.data(), Bytes.size());
      // Small inputs may share a page already registered for another:
      // such an input is staged, which is only slower.
      if (!Pin) {
        llvm::consumeError(Pin.takeError());
        continue;
      }
      if (*Pin)
        PinnedInputs.push_back(std::move(*Pin));
    }
  auto Exec = [&](const TensorMap &In) { return Run.run(S, In); };
  const unsigned Fallbacks = Prog.getNumFallbacks();
  // The first run is profiled when reference kernels run, to say what
  // share of the time they take.
  if (Fallbacks)
    Prog.setProfiling(true);
  auto Outputs = Exec(Inputs);
  if (!Outputs)
    return Outputs.takeError();
  if (Fallbacks) {
    printFallbacks(Prog, llvm::errs());
    Prog.setProfiling(false);
  }

  RunResult R;
  R.BuildSeconds = Run.getCacheStats().LastBuildSeconds;
  R.BuildPhases = Run.getCacheStats().LastBuild;
  const std::string KernelTarget = Prog.getKernelTarget();
  if (!KernelTarget.empty()) {
    RunResult::ProgramStats PS;
    PS.Target = KernelTarget;
    PS.Kernels = Prog.getSteps().size();
    PS.Fallbacks = Fallbacks;
    PS.ArenaBytes = Prog.getArenaBytes();
    PS.UnplannedBytes = Prog.getUnplannedBytes();
    PS.ConstantBytes = Prog.getConstantBytes();
    R.Program = PS;
  }
  if (BenchRuns) {
    for (unsigned I = 0; I < Warmup + BenchRuns; ++I) {
      auto Start = std::chrono::steady_clock::now();
      auto Again = Exec(Inputs);
      auto End = std::chrono::steady_clock::now();
      if (!Again)
        return Again.takeError();
      if (Profile && I + 1 == Warmup)
        Prog.setProfiling(true);
      if (I >= Warmup)
        R.Millis.push_back(
            std::chrono::duration<double, std::milli>(End - Start).count());
    }
    llvm::sort(R.Millis);
    if (Profile && !Prog.getSteps().empty())
      printProfile(Prog, llvm::errs());
  }

  if (!OutputDir.empty()) {
    if (std::error_code EC = llvm::sys::fs::create_directories(OutputDir))
      return toolError("strider-run: " + OutputDir + ": " + EC.message());
    for (const auto &[Name, T] : *Outputs) {
      auto Bytes = writeNpy(T);
      if (!Bytes)
        return toolPrefixed(Bytes.takeError());
      llvm::SmallString<256> P(OutputDir);
      llvm::sys::path::append(P, fileNameFor(Name) + ".npy");
      if (llvm::Error E = writeOutputFile(P, [&](llvm::raw_ostream &OS) {
            OS << *Bytes;
            return llvm::Error::success();
          }))
        return toolPrefixed(std::move(E));
    }
  }

  for (unsigned K = 0; K < G.getOutputs().size(); ++K) {
    const std::string &Name = G.getOutputs()[K]->getName();
    R.Names.push_back(Name);
    R.Types.push_back(Outputs->at(Name).getType().withLayout(Layout()));
    if (Expected.empty())
      continue;
    // Expected outputs: <name>.npy (the literal name, else the sanitized
    // one), else output_K.pb in output order.
    llvm::SmallString<256> Npy(Expected), Sanitized(Expected), Pb(Expected);
    llvm::sys::path::append(Npy, fileNameFor(Name) + ".npy");
    llvm::sys::path::append(Sanitized, sanitizedFileName(Name) + ".npy");
    llvm::sys::path::append(Pb, "output_" + std::to_string(K) + ".pb");
    llvm::StringRef File = llvm::sys::fs::exists(Npy)         ? Npy.str()
                           : llvm::sys::fs::exists(Sanitized) ? Sanitized.str()
                                                              : Pb.str();
    Comparison C;
    if (!llvm::sys::fs::exists(File)) {
      C.Note = "no expected output (" + Npy.str().str() + " or " +
               Pb.str().str() + ")";
    } else {
      auto Want = readTensorFile(File);
      if (!Want)
        return toolPrefixed(Want.takeError());
      C = compare(Outputs->at(Name), *Want);
    }
    R.Ok &= C.Ok;
    R.Comparisons.push_back(std::move(C));
  }
  return R;
}

static void printText(const RunResult &R, llvm::raw_ostream &OS) {
  for (unsigned K = 0; K < R.Names.size(); ++K) {
    OS << "output '" << R.Names[K] << "' " << R.Types[K];
    if (!R.Comparisons.empty()) {
      const Comparison &C = R.Comparisons[K];
      if (!C.Note.empty() && !C.ShapeOk)
        OS << ": MISMATCH, " << C.Note;
      else
        OS << llvm::format(": max abs error %.3g, max rel error %.3g", C.MaxAbs,
                           C.MaxRel)
           << (C.Ok ? " (match)" : " (MISMATCH)");
    }
    OS << "\n";
  }
  if (!R.Millis.empty())
    OS << llvm::format("latency over %u runs (ms): min %.3f, median %.3f, "
                       "p10 %.3f, p90 %.3f\n",
                       unsigned(R.Millis.size()), R.Millis.front(),
                       percentile(R.Millis, 0.5), percentile(R.Millis, 0.1),
                       percentile(R.Millis, 0.9));
  if (!R.Comparisons.empty())
    OS << (R.Ok ? "all outputs match" : "outputs differ")
       << llvm::format(" (rtol %g, atol %g)\n", RTol.getValue(),
                       ATol.getValue());
}

static void printJson(const RunResult &R, llvm::json::OStream &J) {
  if (R.Program)
    J.attributeObject("program", [&] {
      // The SIMD target on the cpu backend, the GPU on cuda.
      J.attribute("kernel_target", R.Program->Target);
      J.attribute("kernel_calls", int64_t(R.Program->Kernels));
      J.attribute("fallbacks", int64_t(R.Program->Fallbacks));
      J.attribute("arena_bytes", R.Program->ArenaBytes);
      J.attribute("activation_bytes_unplanned", R.Program->UnplannedBytes);
      J.attribute("constant_bytes", R.Program->ConstantBytes);
    });
  J.attribute("build_ms", R.BuildSeconds * 1e3);
  J.attributeObject("build_phases_ms", [&] {
    J.attribute("specialize", R.BuildPhases.Specialize * 1e3);
    J.attribute("optimize", R.BuildPhases.Optimize * 1e3);
    J.attribute("lower", R.BuildPhases.Lower * 1e3);
  });
  J.attributeArray("outputs", [&] {
    for (unsigned K = 0; K < R.Names.size(); ++K)
      J.object([&] {
        J.attribute("name", R.Names[K]);
        J.attribute("type", R.Types[K].str());
        if (R.Comparisons.empty())
          return;
        const Comparison &C = R.Comparisons[K];
        J.attribute("match", C.Ok);
        J.attribute("max_abs_error", C.MaxAbs);
        J.attribute("max_rel_error", C.MaxRel);
        if (!C.Note.empty())
          J.attribute("note", C.Note);
      });
  });
  if (!R.Comparisons.empty())
    J.attribute("match", R.Ok);
  if (!R.Millis.empty())
    J.attributeObject("bench", [&] {
      J.attribute("runs", int64_t(R.Millis.size()));
      J.attribute("min_ms", R.Millis.front());
      J.attribute("median_ms", percentile(R.Millis, 0.5));
      J.attribute("p10_ms", percentile(R.Millis, 0.1));
      J.attribute("p90_ms", percentile(R.Millis, 0.9));
    });
}

/// --onnx-test: every test_data_set_* of \p Dir, inputs input_K.pb bound to
/// the graph inputs without default data in order.
static int runOnnxTest(llvm::StringRef Dir) {
  llvm::SmallString<256> Model(Dir);
  llvm::sys::path::append(Model, "model.onnx");
  auto G = importONNXFile(Model);
  if (!G) {
    llvm::errs() << llvm::toString(G.takeError()) << "\n";
    return 1;
  }
  std::vector<std::string> InputNames;
  for (Value *In : (*G)->getInputs())
    if (!In->getDefaultData())
      InputNames.push_back(In->getName());
  std::vector<std::string> Sets;
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC;
       It.increment(EC))
    if (llvm::sys::path::filename(It->path()).startswith("test_data_set_"))
      Sets.push_back(It->path());
  llvm::sort(Sets);
  if (EC || Sets.empty()) {
    llvm::errs() << "strider-run: " << Dir
                 << ": no test_data_set_* directories\n";
    return 1;
  }
  std::vector<std::pair<std::string, RunResult>> Results;
  bool AllOk = true;
  for (const std::string &Set : Sets) {
    TensorMap Inputs;
    for (unsigned K = 0;; ++K) {
      llvm::SmallString<256> P(Set);
      llvm::sys::path::append(P, "input_" + std::to_string(K) + ".pb");
      if (!llvm::sys::fs::exists(P))
        break;
      if (K >= InputNames.size()) {
        llvm::errs() << "strider-run: " << P << ": the model has only "
                     << InputNames.size() << " inputs\n";
        return 1;
      }
      auto T = readTensorFile(P);
      if (!T) {
        llvm::errs() << "strider-run: " << llvm::toString(T.takeError())
                     << "\n";
        return 1;
      }
      Inputs[InputNames[K]] = std::move(*T);
    }
    auto R = runModel(Model, std::move(Inputs), Set);
    if (!R) {
      llvm::errs() << llvm::toString(R.takeError()) << "\n";
      return 1;
    }
    AllOk &= R->Ok;
    Results.emplace_back(llvm::sys::path::filename(Set).str(), std::move(*R));
  }
  if (Json) {
    llvm::json::OStream J(llvm::outs(), 2);
    J.object([&] {
      J.attribute("onnx_test", Dir);
      J.attributeArray("data_sets", [&] {
        for (const auto &[Name, R] : Results)
          J.object([&] {
            J.attribute("name", Name);
            printJson(R, J);
          });
      });
      J.attribute("match", AllOk);
    });
    llvm::outs() << "\n";
  } else {
    for (const auto &[Name, R] : Results) {
      llvm::outs() << Name << ":\n";
      printText(R, llvm::outs());
    }
    llvm::outs() << Results.size()
                 << " data sets: " << (AllOk ? "all match" : "some differ")
                 << "\n";
  }
  return AllOk ? 0 : 1;
}

static int run() {
  auto Fail = [](llvm::Error E) {
    llvm::errs() << "strider-run: " << llvm::toString(std::move(E)) << "\n";
    return 1;
  };
  if (auto B = codegen::findBackend(Backend); !B)
    return Fail(B.takeError());
  const bool Cuda = Backend == "cuda" || Backend == "cuda-emulated";
  if (!Cuda && PrecisionFlag != "fp32")
    return Fail(toolError("--precision=" + PrecisionFlag +
                          " needs --backend=cuda: the other backends compute "
                          "in fp32"));
  if (Backend != "cuda-emulated" && EmulateDeviceCode)
    return Fail(toolError("--emulate-device-code is for "
                          "--backend=cuda-emulated"));
  if (Backend != "cuda" && Pinned.getNumOccurrences())
    return Fail(toolError("--pinned is for --backend=cuda"));
  if (Backend == "cuda-emulated" && (BenchRuns.getNumOccurrences() || Profile))
    return Fail(toolError("--bench and --profile time real programs; "
                          "--backend=cuda-emulated runs host models of the "
                          "cuda backend's kernels, whose times mean nothing"));
  if (Cuda && Threads != 1)
    return Fail(toolError("--threads is for the cpu backend (got --threads=" +
                          llvm::Twine(Threads.getValue()) +
                          " with --backend=cuda)"));
  if (Threads < 1)
    return Fail(toolError("--threads must be at least 1"));
  if (Backend == "reference" && Threads != 1)
    return Fail(toolError("the reference backend runs on one thread (got "
                          "--threads=" +
                          llvm::Twine(Threads.getValue()) + ")"));
  if (ModelPath.empty() == OnnxTest.empty())
    return Fail(toolError("give a model or --onnx-test DIR (see --help)"));
  if (!OnnxTest.empty())
    return runOnnxTest(OnnxTest);

  TensorMap Inputs;
  for (const std::string &F : InputFlags) {
    auto [Name, File] = llvm::StringRef(F).split('=');
    if (Name.empty() || File.empty())
      return Fail(toolError("bad --input '" + F + "' (expected NAME=FILE)"));
    if (Inputs.count(Name.str()))
      return Fail(toolError("input '" + Name + "' given twice"));
    auto T = readTensorFile(File);
    if (!T)
      return Fail(T.takeError());
    Inputs[Name.str()] = std::move(*T);
  }
  auto R = runModel(ModelPath, std::move(Inputs), CompareDir);
  if (!R) {
    llvm::errs() << llvm::toString(R.takeError()) << "\n";
    return 1;
  }
  if (Json) {
    llvm::json::OStream J(llvm::outs(), 2);
    J.object([&] {
      J.attribute("model", ModelPath);
      J.attribute("backend", Backend);
      printJson(*R, J);
    });
    llvm::outs() << "\n";
  } else {
    printText(*R, llvm::outs());
  }
  return R->Ok ? 0 : 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(RunCat);
  const std::string Overview =
      "Strider model runner: execute an ONNX model (specialized to the "
      "inputs' shapes and optimized as strider-compile does), textual IR or "
      "a strider-compile output directory (its layouts executed as such) "
      "on one of Strider's backends, write and compare outputs\n\n"
      "Backends (--backend):\n" +
      codegen::describeBackends();
  cl::ParseCommandLineOptions(argc, argv, Overview);
  return toolflags::runReportingOutOfMemory("strider-run", run);
}
