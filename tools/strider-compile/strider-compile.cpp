//===- strider-compile.cpp - Ahead-of-time layout conversion --------------===//
//
// Reads an ONNX model, canonicalizes it, chooses a layout for every
// activation and writes an output directory: the optimized, layout-explicit
// model (model.onnx, and as textual IR with its layouts, model.lir, whose
// large constants are raw bytes in model.lir.weights), the
// layout report (report.json, report.txt) and a
// Graphviz view (layout.dot, plus layout.svg when `dot` is installed). The
// directory is written under a temporary name and renamed into place, so a
// failed run leaves no partial output. With --tune, the convolutions are
// first timed on this machine's CPU backend (cpu-* targets) or GPU
// (cuda-* targets, with cuDNN's find choosing each conv's algorithm) and
// the times cached in the --tuning-file, which then drives the layout
// choice.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/CodeGen/Registry/BackendRegistry.h"
#include "strider/CodeGen/Tuning.h"
#include "strider/Engine/Artifact.h"
#include "strider/IR/AsmPrinter.h"
#include "strider/IR/Graph.h"
#include "strider/IR/Verifier.h"
#include "strider/Import/ONNX.h"
#include "strider/Layout/LayoutDot.h"
#include "strider/Support/FileIO.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"
#include "strider/Transforms/Specialize.h"

#include "Common/LayoutFlags.h"
#include "Common/OutOfMemory.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace strider;
namespace cl = llvm::cl;

static cl::OptionCategory CompileCat("strider-compile options");

static cl::opt<std::string> InputFilename(cl::Positional, cl::Required,
                                          cl::desc("<model.onnx>"),
                                          cl::cat(CompileCat));
static cl::opt<std::string>
    OutputDir("o", cl::Required,
              cl::desc("Output directory (created; replaced if it holds an "
                       "earlier strider-compile output)"),
              cl::value_desc("dir"), cl::cat(CompileCat));
static cl::opt<bool>
    RenderSvg("svg",
              cl::desc("Render layout.svg with Graphviz's dot when it is "
                       "installed (default on; not counted in compile time)"),
              cl::init(true), cl::cat(CompileCat));
static cl::opt<bool> Quiet("quiet", cl::desc("Print nothing on success"),
                           cl::init(false), cl::cat(CompileCat));
static cl::opt<bool>
    Tune("tune",
         cl::desc("Time every conv of the model (four layout variants) and "
                  "the relayouts around it on this machine, add what "
                  "--tuning-file lacks to it (it is created if missing) and "
                  "choose layouts by those times: CPU kernels for cpu-* "
                  "targets; for cuda-* targets the GPU (--tune-device) in "
                  "the --precision, with cuDNN's find choosing each conv's "
                  "algorithm (kept in the file too)"),
         cl::init(false), cl::cat(CompileCat));
static cl::opt<unsigned>
    TuneThreads("tune-threads",
                cl::desc("Threads each timed kernel runs on (default 1; "
                         "a tuning file holds one thread count)"),
                cl::init(1), cl::cat(CompileCat));
static cl::opt<int>
    TuneDevice("tune-device",
               cl::desc("cuda-* targets: the GPU --tune times on (default 0; "
                        "a tuning file holds one device)"),
               cl::init(0), cl::cat(CompileCat));
static cl::opt<bool> Strict(
    "strict",
    cl::desc("Refuse what ONNX Runtime tolerates: negative dim_value, "
             "declared shapes that contradict inference (default: a warning, "
             "inference wins)"),
    cl::init(false), cl::cat(CompileCat));
static cl::opt<bool> TuneVerbose("tune-verbose",
                                 cl::desc("Print each conv's times as it "
                                          "is measured"),
                                 cl::init(false), cl::cat(CompileCat));

static cl::opt<std::string> PrecisionFlag(
    "precision",
    cl::desc("cuda-* targets: fp32 (default), fp16 or bf16: convolutions "
             "and matmuls in half precision, casts placed by the "
             "assign-precision pass (listed in precision.txt)"),
    cl::init("fp32"), cl::cat(CompileCat));

static int fail(llvm::Error E) {
  llvm::errs() << "strider-compile: " << llvm::toString(std::move(E)) << "\n";
  return 1;
}

static llvm::Error makeToolError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

static codegen::TuneStats TuneResult;

/// Writes \p T to --tuning-file when tuning added to it (or the file is
/// new), after \p Tuned, what tuning returned: what was measured is kept
/// even if tuning stopped at an error or the compile fails later.
static llvm::Error keepTuning(llvm::Error Tuned, bool Existed, size_t Before,
                              const layout::TuningTable &T) {
  if (!Existed || T.getNumEntries() != Before)
    if (llvm::Error W = T.writeFile(toolflags::TuningFileFlag))
      return llvm::joinErrors(std::move(Tuned), std::move(W));
  return Tuned;
}

/// Where a table's times were measured, for the summary line.
static std::string describeTuningMachine(const layout::TuningTable &T) {
  if (!T.Device.empty())
    return T.Device + ", " + (T.Precision.empty() ? "fp32" : T.Precision);
  return T.Simd + ", " + std::to_string(T.Threads) + " thread(s)";
}

/// Checks --tune's flags against the table and installs the tuner of the
/// backend that runs the target's kernels.
static llvm::Error setUpTuning(layout::LayoutOptions &Layout) {
  if (toolflags::TuningFileFlag.empty())
    return makeToolError("--tune needs --tuning-file=FILE to keep the "
                         "measurements in");
  const llvm::StringRef Target = Layout.Target->Name;
  const codegen::Backend *B = codegen::getTunerFor(Target);
  if (!B)
    return makeToolError("--tune times CPU or CUDA kernels; --target=" +
                         Target + " is neither a cpu-* nor a cuda-* target");
  if (TuneThreads < 1 || TuneThreads > 1024)
    return makeToolError("--tune-threads must be between 1 and 1024");
  codegen::BackendOptions BO;
  BO.Threads = int(TuneThreads);
  BO.Device = TuneDevice;
  BO.Precision = PrecisionFlag;
  if (llvm::Error E = B->checkAvailable(BO))
    return makeToolError(
        "--tune on --target=" + Target +
        (B->runsOnDevice() ? " times on a GPU: " : " times on this machine: ") +
        llvm::toString(std::move(E)));
  if (llvm::Error E = B->prepareTuningTable(*Layout.Tuning, BO))
    return makeToolError(toolflags::TuningFileFlag + ": " +
                         llvm::toString(std::move(E)) + ": use another file");
  const bool Existed = llvm::sys::fs::exists(toolflags::TuningFileFlag);
  Layout.Tune = [Existed, B, BO](const Graph &G,
                                 const layout::DimBindings &Dims,
                                 layout::TuningTable &T) {
    codegen::TuneDriverOptions Timing;
    Timing.Log = TuneVerbose ? &llvm::outs() : nullptr;
    const size_t Before = T.getNumEntries();
    return keepTuning(B->tune(G, Dims, BO, Timing, T, &TuneResult), Existed,
                      Before, T);
  };
  return llvm::Error::success();
}

static llvm::Expected<PipelineOptions> parseOptions() {
  llvm::Expected<layout::LayoutOptions> Layout =
      toolflags::parseLayoutFlags(/*CreateTuning=*/Tune);
  if (!Layout)
    return Layout.takeError();
  llvm::Optional<ElementType> Half = parseHalfPrecision(PrecisionFlag);
  if (!Half)
    return makeToolError("unknown precision '" + PrecisionFlag +
                         "' (fp32, fp16 or bf16)");
  if (*Half != ElementType::Unknown &&
      !Layout->Target->Name.startswith("cuda-"))
    return makeToolError("--precision=" + PrecisionFlag +
                         " is for cuda-* targets; --target=" +
                         Layout->Target->Name + " computes in f32");
  if (Tune)
    if (llvm::Error E = setUpTuning(*Layout))
      return E;
  // A GPU table holds the times of one precision's kernels.
  if (const layout::TuningTable *T = Layout->Tuning.get();
      T && !T->Device.empty() && T->Precision != PrecisionFlag)
    return makeToolError(toolflags::TuningFileFlag + ": measured at " +
                         T->Precision +
                         ", not at --precision=" + PrecisionFlag +
                         ": use a table measured at " + PrecisionFlag);
  PipelineOptions Opts;
  Opts.Precision.Half = *Half;
  Opts.Precision.Target = Layout->Target;
  Opts.Layout = std::move(*Layout);
  return Opts;
}

/// Write \p Text to \p Dir/\p Name.
static llvm::Error writeText(llvm::StringRef Dir, llvm::StringRef Name,
                             llvm::function_ref<void(llvm::raw_ostream &)> W) {
  llvm::SmallString<256> Path(Dir);
  llvm::sys::path::append(Path, Name);
  return writeOutputFile(Path, [&](llvm::raw_ostream &OS) {
    W(OS);
    return llvm::Error::success();
  });
}

/// Write \p G to \p Dir/model.lir, its constants of 1 KiB or more to
/// \p Dir/model.lir.weights (streamed, not held in memory twice).
static llvm::Error writeTextualIR(const Graph &G, llvm::StringRef Dir) {
  llvm::SmallString<256> LirPath(Dir);
  llvm::sys::path::append(LirPath, "model.lir");
  std::string WeightsPath = (LirPath + ".weights").str();
  return writeOutputFile(
      WeightsPath, [&](llvm::raw_ostream &WOS) -> llvm::Error {
        ExternalDataStream Weights(WOS);
        PrintOptions Print;
        Print.External = &Weights;
        return writeOutputFile(LirPath, [&](llvm::raw_ostream &OS) {
          printGraph(G, OS, Print);
          return llvm::Error::success();
        });
      });
}

/// Whether an existing \p Dir may be replaced: empty, or an earlier output.
static bool isReplaceable(llvm::StringRef Dir) {
  llvm::SmallString<256> Report(Dir);
  llvm::sys::path::append(Report, "report.json");
  if (llvm::sys::fs::exists(Report))
    return true;
  std::error_code EC;
  llvm::sys::fs::directory_iterator It(Dir, EC);
  return !EC && It == llvm::sys::fs::directory_iterator();
}

/// Move the finished \p Staging directory to \p Dir.
static llvm::Error publish(llvm::StringRef Staging, llvm::StringRef Dir) {
  if (llvm::sys::fs::exists(Dir)) {
    if (!llvm::sys::fs::is_directory(Dir) || !isReplaceable(Dir))
      return makeToolError(Dir + ": exists and is not an earlier "
                                 "strider-compile output; not replacing it");
    llvm::SmallString<256> Old;
    llvm::sys::fs::createUniquePath(Dir + ".old-%%%%%%", Old,
                                    /*MakeAbsolute=*/false);
    if (std::error_code EC = llvm::sys::fs::rename(Dir, Old))
      return makeToolError(
          Dir + ": cannot move the earlier output aside: " + EC.message());
    if (std::error_code EC = llvm::sys::fs::rename(Staging, Dir)) {
      (void)llvm::sys::fs::rename(Old, Dir);
      return makeToolError(Dir + ": " + EC.message());
    }
    (void)llvm::sys::fs::remove_directories(Old);
    return llvm::Error::success();
  }
  if (std::error_code EC = llvm::sys::fs::rename(Staging, Dir))
    return makeToolError(Dir + ": " + EC.message());
  return llvm::Error::success();
}

/// Render layout.dot to layout.svg when Graphviz is installed; whether it
/// did.
static bool renderSvg(llvm::StringRef Dir) {
  llvm::ErrorOr<std::string> Dot = llvm::sys::findProgramByName("dot");
  if (!Dot)
    return false;
  llvm::SmallString<256> In(Dir), Out(Dir);
  llvm::sys::path::append(In, "layout.dot");
  llvm::sys::path::append(Out, "layout.svg");
  std::string OutArg = "-o" + Out.str().str();
  llvm::StringRef Args[] = {*Dot, "-Tsvg", In, OutArg};
  if (llvm::sys::ExecuteAndWait(*Dot, Args, llvm::None, {}, /*Seconds=*/60) ==
      0)
    return true;
  (void)llvm::sys::fs::remove(Out);
  return false;
}

static bool isStaticGraph(const Graph &G) {
  for (const Node *N : G.nodes())
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (const Value *V = N->getResult(I))
        if (!V->getType().hasStaticShape())
          return false;
  return true;
}

/// The target's program for \p G, lowered on this machine by the backend
/// that serves the target without a device (the CPU backend for cpu-*
/// targets, the CUDA backend's plan for cuda-*), when every shape is
/// static: recording the constants it packs (for model.strider), listing
/// its steps (cuda-plan.txt) and telling which nodes fall back.
struct LoweredGraph {
  /// The backend that lowered it; null when nothing was lowered (dynamic
  /// shapes, an op no backend has, a backend this build lacks).
  const codegen::Backend *Backend = nullptr;
  std::shared_ptr<cpu::DerivedStore> Recorded;
  std::unique_ptr<codegen::Executable> Program;
  std::string Error;
};

static LoweredGraph lowerForTarget(const Graph &G,
                                   const layout::LayoutOptions &Layout) {
  LoweredGraph L;
  for (const Node *N : G.nodes())
    if (N->isOpaque())
      return L;
  const codegen::Backend *B = codegen::getHostBackendFor(Layout.Target->Name);
  if (!B || !isStaticGraph(G))
    return L;
  codegen::BackendOptions BO;
  BO.Precision = PrecisionFlag;
  if (llvm::Error E = B->checkAvailable(BO)) {
    llvm::consumeError(std::move(E));
    return L;
  }
  L.Backend = B;
  L.Recorded = engine::createRecordingStore();
  BO.Derived = L.Recorded;
  auto P = B->compile(G, BO);
  if (P)
    L.Program = std::move(*P);
  else
    L.Error = llvm::toString(P.takeError());
  return L;
}

/// Which nodes the target's backend would not run on its own kernels: for
/// a cpu-* target and a static graph, the CPU backend's reference-kernel
/// fallbacks (lowering the graph tells); otherwise the ops no backend has.
static void printKernelCoverage(const Graph &G,
                                const layout::LayoutOptions &Layout,
                                const LoweredGraph &Lowered,
                                llvm::raw_ostream &OS) {
  std::vector<std::string> Uncovered;
  for (const Node *N : G.nodes())
    if (N->isOpaque())
      Uncovered.push_back(N->getOpType().str() + " '" + N->getLoc().Name +
                          "' (no kernel in any backend)");
  const bool Cpu = Layout.Target->Name.startswith("cpu-");
  const bool Cuda = Layout.Target->Name.startswith("cuda-");
  if (!Lowered.Error.empty())
    Uncovered.push_back(Lowered.Error);
  if (Lowered.Program)
    for (const codegen::StepInfo &S : Lowered.Program->getSteps())
      if (S.Fallback)
        Uncovered.push_back(S.Kernel + " -> " + S.Nodes);
  if (Uncovered.empty()) {
    if (Lowered.Backend && Cpu)
      OS << "kernels: every node runs on CPU backend kernels\n";
    else if (Lowered.Backend && Cuda)
      OS << "kernels: every node runs on CUDA backend kernels ("
         << Lowered.Program->getSteps().size() << " steps, cuda-plan.txt)\n";
    else if ((Cpu || Cuda) && !isStaticGraph(G))
      OS << "kernels: not checked (dynamic shapes; give --shape)\n";
    return;
  }
  OS << "kernels: " << Uncovered.size()
     << " node(s) not covered by the target's kernels (slow path):\n";
  for (const std::string &U : Uncovered)
    OS << "  " << U << "\n";
}

/// Binds the one-size dims of the ranged --shape flags \p Flags in
/// \p Shapes (as dims of the model's symbols, so that the ranged dims stay
/// dynamic), and fills \p Ranges and \p AtMax, the ranged inputs at their
/// ranges' upper ends. Errors name the flag.
static llvm::Error bindRanges(const Graph &G,
                              llvm::ArrayRef<toolflags::ShapeRangeFlag> Flags,
                              ShapeBindings &Shapes,
                              std::vector<engine::InputRange> &Ranges,
                              ShapeBindings &AtMax) {
  std::map<std::string, std::pair<int64_t, int64_t>> Ranged;
  for (const toolflags::ShapeRangeFlag &F : Flags) {
    auto Bad = [&](const llvm::Twine &Msg) {
      return makeToolError("--shape " + F.Input + "=...: " + Msg);
    };
    const Value *In = G.lookupValue(F.Input);
    if (!In || !In->isGraphInput())
      return Bad("the model has no input '" + F.Input + "'");
    const TensorType &T = In->getType();
    if (!T.hasRank() || T.getRank() != F.Min.size())
      return Bad("gives " + llvm::Twine(F.Min.size()) + " dims, the input is " +
                 T.str());
    for (unsigned A = 0; A < F.Min.size(); ++A) {
      const Dim &D = T.getDim(A);
      const std::string Key = D.isSymbol() ? D.getSymbol().str()
                                           : F.Input + ":" + std::to_string(A);
      if (F.Min[A] == F.Max[A]) {
        if (D.isStatic()) {
          if (D.getSize() != F.Min[A])
            return Bad("dim " + llvm::Twine(A) + " is " +
                       llvm::Twine(D.getSize()) + " in the model, not " +
                       llvm::Twine(F.Min[A]));
          continue;
        }
        auto [It, New] = Shapes.Dims.emplace(Key, F.Min[A]);
        if (Ranged.count(Key) || (!New && It->second != F.Min[A]))
          return Bad("dim '" + Key + "' is given two sizes");
        continue;
      }
      if (D.isStatic())
        return Bad("dim " + llvm::Twine(A) + " is " + llvm::Twine(D.getSize()) +
                   " in the model; a range needs a dynamic dim");
      auto [It, New] = Ranged.emplace(Key, std::make_pair(F.Min[A], F.Max[A]));
      if (Shapes.Dims.count(Key) ||
          (!New && It->second != std::make_pair(F.Min[A], F.Max[A])))
        return Bad("dim '" + Key + "' is given two sizes");
      Ranges.push_back({F.Input, A, F.Min[A], F.Max[A]});
    }
    AtMax.InputShapes[F.Input] = F.Max;
  }
  return llvm::Error::success();
}

static std::string describeRanges(llvm::ArrayRef<engine::InputRange> Ranges) {
  std::string S;
  for (const engine::InputRange &R : Ranges)
    S += (S.empty() ? "" : ", ") + R.Input + " dim " + std::to_string(R.Axis) +
         " " + std::to_string(R.Min) + ".." + std::to_string(R.Max);
  return S;
}

static int compile() {
  auto Start = std::chrono::steady_clock::now();
  llvm::Expected<PipelineOptions> Opts = parseOptions();
  if (!Opts)
    return fail(Opts.takeError());
  std::vector<layout::LayoutReport> Reports;
  Opts->LayoutReports = &Reports;

  std::vector<std::string> Warnings;
  ImportOptions ImportOpts;
  ImportOpts.Strict = Strict;
  ImportOpts.Warnings = &Warnings;
  auto GraphOrErr = importONNXFile(InputFilename, ImportOpts);
  for (const std::string &W : Warnings)
    llvm::errs() << "strider-compile: warning: " << W << "\n";
  if (!GraphOrErr) {
    llvm::errs() << llvm::toString(GraphOrErr.takeError()) << "\n";
    return 1;
  }
  Graph &G = **GraphOrErr;
  // --shape specializes ahead of time; --dim alone only costs, but must
  // name a dim of the model.
  std::vector<toolflags::ShapeRangeFlag> RangeFlags;
  llvm::Expected<ShapeBindings> Shapes =
      toolflags::parseShapeFlags(&RangeFlags);
  if (!Shapes)
    return fail(Shapes.takeError());
  // A range keeps its dim dynamic; its other dims are bound.
  std::vector<engine::InputRange> Ranges;
  ShapeBindings AtMax;
  if (llvm::Error E = bindRanges(G, RangeFlags, *Shapes, Ranges, AtMax))
    return fail(std::move(E));
  // An If decided by an input's value compiles only for a given value.
  for (const Value *In : findControlInputs(G))
    if (!Shapes->InputValues.count(In->getName()))
      return fail(makeToolError(
          InputFilename + ": input '" + In->getName() +
          "' decides which branch an If takes: give its value with --bind " +
          In->getName() + "=VALUE"));
  if (!Shapes->InputShapes.empty() || !Shapes->InputValues.empty() ||
      !Ranges.empty()) {
    SpecializeResult Specialized;
    if (llvm::Error E = specializeShapes(G, *Shapes, &Specialized))
      return fail(
          makeToolError(InputFilename + ": " + llvm::toString(std::move(E))));
    for (const std::string &W : Specialized.Warnings)
      llvm::errs() << "strider-compile: warning: " << W << "\n";
  } else if (llvm::Error E = checkDimBindings(G, Shapes->Dims)) {
    return fail(
        makeToolError(InputFilename + ": " + llvm::toString(std::move(E))));
  }
  std::vector<PrecisionReport> PrecisionReports;
  Opts->PrecisionReports = &PrecisionReports;
  std::string Pipeline = getDefaultPipeline().str();
  if (Opts->Precision.Half != ElementType::Unknown)
    Pipeline += ",assign-precision";
  if (!Ranges.empty()) {
    // Layouts costed on the graph at the ranges' upper ends, then kept
    // for the graph that serves the whole range.
    for (const engine::InputRange &R : Ranges)
      if (const Dim &D = G.lookupValue(R.Input)->getType().getDim(R.Axis);
          D.isSymbol())
        Opts->Layout.Dims.bind(D.getSymbol(), R.Max);
    if (llvm::Error E = runPipelineAtSizes(G, AtMax, Pipeline, *Opts))
      return fail(
          makeToolError(InputFilename + ": " + llvm::toString(std::move(E))));
  } else {
    PassManager PM;
    llvm::cantFail(parsePassPipeline(Pipeline, PM));
    PM.configure(*Opts);
    if (llvm::Error E = PM.run(G)) {
      llvm::errs() << llvm::toString(std::move(E)) << "\n";
      return 1;
    }
  }
  // Canonicalization inlined the Ifs whose conditions fold; the rest
  // cannot be compiled.
  if (llvm::Error E = checkIfsFolded(G))
    return fail(std::move(E));

  const layout::LayoutReport &Report = Reports.back();

  // Stage everything next to the destination, then rename it into place.
  llvm::StringRef Parent = llvm::sys::path::parent_path(OutputDir);
  if (!Parent.empty())
    if (std::error_code EC = llvm::sys::fs::create_directories(Parent))
      return fail(makeToolError(Parent + ": cannot create: " + EC.message()));
  llvm::SmallString<256> Staging;
  llvm::sys::fs::createUniquePath(OutputDir + ".tmp-%%%%%%", Staging,
                                  /*MakeAbsolute=*/false);
  if (std::error_code EC = llvm::sys::fs::create_directory(Staging))
    return fail(makeToolError(Staging + ": cannot create: " + EC.message()));
  auto Cleanup = [&](llvm::Error E) {
    (void)llvm::sys::fs::remove_directories(Staging);
    return fail(std::move(E));
  };
  llvm::SmallString<256> ModelPath(Staging);
  llvm::sys::path::append(ModelPath, "model.onnx");
  if (llvm::Error E = exportONNXFile(G, ModelPath))
    return Cleanup(std::move(E));
  if (llvm::Error E =
          writeText(Staging, "report.json",
                    [&](llvm::raw_ostream &OS) { Report.printJSON(OS); }))
    return Cleanup(std::move(E));
  if (llvm::Error E =
          writeText(Staging, "report.txt",
                    [&](llvm::raw_ostream &OS) { Report.printText(OS); }))
    return Cleanup(std::move(E));
  if (llvm::Error E = writeTextualIR(G, Staging))
    return Cleanup(std::move(E));
  if (!PrecisionReports.empty())
    if (llvm::Error E =
            writeText(Staging, "precision.txt", [&](llvm::raw_ostream &OS) {
              PrecisionReports.back().print(OS);
            }))
      return Cleanup(std::move(E));
  if (llvm::Error E =
          writeText(Staging, "layout.dot", [&](llvm::raw_ostream &OS) {
            layout::printLayoutDot(G, OS);
          }))
    return Cleanup(std::move(E));
  // model.strider: the graph, its weights, and (static shapes) the
  // constants packed for this machine's kernels.
  // A graph for shape ranges is lowered at their upper ends: its kernels
  // are checked and its constants packed there (the keys are the same at
  // every size in the range).
  std::unique_ptr<Graph> AtMaxGraph;
  if (!Ranges.empty()) {
    AtMaxGraph = G.clone();
    if (llvm::Error E = specializeShapes(*AtMaxGraph, AtMax))
      return Cleanup(makeToolError(InputFilename +
                                   ": at the ranges' upper "
                                   "ends: " +
                                   llvm::toString(std::move(E))));
  }
  const LoweredGraph Lowered =
      lowerForTarget(AtMaxGraph ? *AtMaxGraph : G, Opts->Layout);
  // cuda-plan.txt: what the CUDA backend will launch (static shapes).
  if (Lowered.Program && Opts->Layout.Target->Name.startswith("cuda-"))
    if (llvm::Error E =
            writeText(Staging, "cuda-plan.txt", [&](llvm::raw_ostream &OS) {
              Lowered.Program->print(OS);
            }))
      return Cleanup(std::move(E));
  const bool WriteArtifact = Opts->Layout.Target->Name.startswith("cpu-");
  if (WriteArtifact) {
    llvm::SmallString<256> ArtifactPath(Staging);
    llvm::sys::path::append(ArtifactPath, "model.strider");
    if (llvm::Error E =
            writeOutputFile(ArtifactPath, [&](llvm::raw_ostream &OS) {
              return engine::writeArtifact(
                  OS, G, Opts->Layout.Target->Name,
                  Lowered.Program ? Lowered.Recorded.get() : nullptr,
                  cpu::getDerivedFormat(), Ranges);
            }))
      return Cleanup(std::move(E));
  }
  double Ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - Start)
                  .count();
  bool HasSvg = RenderSvg && renderSvg(Staging);
  if (llvm::Error E = publish(Staging, OutputDir))
    return Cleanup(std::move(E));

  if (!Quiet) {
    llvm::outs() << "strider-compile: " << InputFilename << " -> " << OutputDir
                 << "/model.onnx (" << G.getNumNodes() << " nodes)\n";
    if (Tune && TuneResult.SkippedConvs)
      llvm::outs() << "tuning: " << TuneResult.SkippedConvs
                   << " conv(s) not timed: a dim is not bound (--dim) or "
                      "the data is not f32\n";
    if (Tune)
      llvm::outs() << "tuning: timed " << TuneResult.MeasuredConvs << " of "
                   << TuneResult.Convs << " convs and "
                   << TuneResult.MeasuredRelayouts << " relayouts in "
                   << llvm::format("%.1f", TuneResult.Seconds) << " s ("
                   << describeTuningMachine(*Opts->Layout.Tuning) << "); "
                   << toolflags::TuningFileFlag << "\n";
    Report.printSummary(llvm::outs());
    if (!PrecisionReports.empty())
      llvm::outs() << PrecisionReports.back().summary() << " (precision.txt)\n";
    printKernelCoverage(AtMaxGraph ? *AtMaxGraph : G, Opts->Layout, Lowered,
                        llvm::outs());
    if (WriteArtifact)
      llvm::outs() << "artifact: " << OutputDir << "/model.strider"
                   << (Lowered.Program
                           ? " (constants packed for " +
                                 cpu::getDerivedFormat() + ")"
                           : std::string(" (no packed constants: dynamic "
                                         "shapes are packed at first run)"))
                   << "\n";
    if (!Ranges.empty())
      llvm::outs() << "shape ranges: " << describeRanges(Ranges)
                   << " (layouts costed, kernels checked and constants "
                      "packed at the upper ends; other sizes are refused)\n";
    llvm::outs() << "report: " << OutputDir << "/report.txt, " << OutputDir
                 << "/report.json; graph: " << OutputDir << "/layout.dot"
                 << (HasSvg ? ", layout.svg" : "") << "\n";
    llvm::outs() << "compile time: " << llvm::format("%.1f", Ms) << " ms\n";
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions({&CompileCat, &toolflags::LayoutFlagsCat});
  cl::ParseCommandLineOptions(
      argc, argv,
      "Strider ahead-of-time conversion: import an ONNX model, canonicalize, "
      "choose NCHW/NHWC for every activation, and write\n"
      "  OUTDIR/model.onnx    the optimized model (layouts as explicit "
      "Transposes)\n"
      "  OUTDIR/model.lir     the same as textual IR, layouts in its types\n"
      "  OUTDIR/model.lir.weights  model.lir's constants of 1 KiB or more "
      "(raw bytes)\n"
      "  OUTDIR/model.strider the compiled artifact for cpu-* targets: graph, "
      "weights and constants packed for this machine's kernels, mapped at "
      "load (what strider-run and libstrider run)\n"
      "  OUTDIR/report.json   every value's layout and why, every relayout, "
      "totals\n"
      "  OUTDIR/report.txt    the same as text\n"
      "  OUTDIR/precision.txt with --precision=fp16|bf16: what runs in half "
      "precision and every cast\n"
      "  OUTDIR/cuda-plan.txt for cuda-* targets with static shapes: every "
      "kernel launch and library call of the CUDA backend's program, and its "
      "memory\n"
      "  OUTDIR/layout.dot    Graphviz view (layout.svg with Graphviz "
      "installed)\n"
      "With --tune --tuning-file=FILE, convs are first timed on this machine "
      "and the layouts chosen by the measured times.\n");
  return toolflags::runReportingOutOfMemory("strider-compile", compile);
}
