//===- NumericConformance.cpp - Reference interpreter vs ONNX backend tests
//===//
//
// For every ONNX backend test directory (model.onnx + test_data_set_*/)
// whose ops all have reference kernels: import the model, give the graph
// inputs the static types of each data set's inputs, and run the reference
// interpreter twice -- on the imported graph (after
// infer-shapes,constant-fold,infer-shapes) and after the channels-last
// pipeline (infer-shapes,canonicalize,infer-shapes,layout-assignment with
// --layout=nhwc) -- comparing every output with the stored expected one.
// Where shapes depend on input values (Reshape shapes, Slice bounds, Resize
// scales, ...), the fewest such inputs are bound to their data as
// constants; the data inputs always go through the interpreter.
// Prints one line per failing test and a summary; exits 1 on any failure.
//
//===----------------------------------------------------------------------===//

#include "ConformanceSupport.h"

#include "strider/CodeGen/Registry/BackendRegistry.h"
#include "strider/IR/Graph.h"
#include "strider/IR/OpInfo.h"
#include "strider/Import/ONNX.h"
#include "strider/Runtime/Reference.h"
#include "strider/Transforms/Pass.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"
#include "strider/Transforms/Specialize.h"

#include "onnx/onnx_pb.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace strider;
using namespace strider::conformance;
namespace cl = llvm::cl;

static cl::list<std::string> TestRoots(cl::Positional, cl::OneOrMore,
                                       cl::desc("<backend test data dirs>"));
static cl::opt<bool> Verbose("v", cl::desc("Print every test's status"));
static cl::opt<std::string>
    Backend("backend", cl::init("reference"),
            cl::desc("Executor: reference (the interpreter), cpu (the "
                     "SIMD backend's program, its fallbacks included) or "
                     "cuda (the CUDA backend on GPU 0; tests whose graphs "
                     "it cannot plan count as unsupported)"));
static cl::opt<bool> PlanOnly(
    "plan-only",
    cl::desc("With --backend=cuda: plan every test without a GPU and count "
             "those the backend plans (nothing runs; no device needed)"));
static cl::opt<bool> Emulate(
    "emulate",
    cl::desc("With --backend=cuda: plan every test and run the plan on the "
             "host (cuda::emulateOnHost: host models of every kernel and "
             "library call; no device needed), comparing its outputs"));
static cl::opt<bool> DeviceCode(
    "device-code",
    cl::desc("With --emulate: run the kernel steps through the kernels' own "
             "device code compiled for the host (blocks and threads "
             "scheduled as on the device) instead of their host models"));
static cl::opt<unsigned>
    Floor("floor", cl::init(0),
          cl::desc("Fail when fewer tests pass (the count checked into "
                   "test/Conformance/floors.txt: lost coverage fails)"));
static cl::opt<int> MaxFallbacks(
    "max-fallbacks", cl::init(-1),
    cl::desc("Fail when more passing tests than this ran a reference "
             "kernel inside the backend's program (a lowering that starts "
             "declining fails; -1: no limit)"));
static cl::opt<double> RTol("rtol", cl::init(1e-3),
                            cl::desc("Relative tolerance for floats"));
static cl::opt<double> ATol("atol", cl::init(1e-5),
                            cl::desc("Absolute tolerance for floats"));

namespace {

/// The registry's backend that runs the tests: --backend's, or with
/// --plan-only or --emulate the CUDA backend's plans on the host.
const codegen::Backend &getExecutor() {
  static const codegen::Backend &B = *codegen::lookupBackend(
      Backend == "cuda" && (PlanOnly || Emulate) ? "cuda-emulated"
                                                 : Backend.getValue());
  return B;
}

/// Tests whose stored outputs no correct interpreter reproduces: each still
/// runs, and a failure counts as unsupported with this reason (a pass is
/// reported, so that stale entries get removed).
const std::map<std::string, std::string> &knownTestDataQuirks() {
  static const std::map<std::string, std::string> Quirks = {
      // ONNX 1.12 generated these by truncating float32 to bfloat16;
      // later ONNX (and onnx.reference) round to nearest even, as
      // Strider's Cast does (0.48033667 -> 0.48046875, stored 0.47851562).
      {"test_cast_FLOAT_to_BFLOAT16",
       "ONNX 1.12 data truncates float32 to bfloat16 instead of rounding"},
      {"test_castlike_FLOAT_to_BFLOAT16",
       "ONNX 1.12 data truncates float32 to bfloat16 instead of rounding"},
      {"test_castlike_FLOAT_to_BFLOAT16_expanded",
       "ONNX 1.12 data truncates float32 to bfloat16 instead of rounding"},
      // Dropout in training mode with a nonzero ratio draws a random mask
      // (numpy's RNG in the generator): no interpreter can reproduce it.
      {"test_training_dropout", "random Dropout mask (training, ratio > 0)"},
      {"test_training_dropout_default",
       "random Dropout mask (training, ratio > 0)"},
      {"test_training_dropout_default_mask",
       "random Dropout mask (training, ratio > 0)"},
      {"test_training_dropout_mask",
       "random Dropout mask (training, ratio > 0)"},
  };
  return Quirks;
}

enum class Status { Passed, Unsupported, Failed };

struct Outcome {
  Status S;
  std::string Why;
  /// Unsupported because some shape stayed non-static.
  bool NonStatic = false;
  /// Values stored in a non-identity layout (the nhwc run's coverage).
  unsigned Relaid = 0;
  /// Program steps that ran reference kernels (the cpu backend's slow
  /// path) over every run of the test, and those kernels' names.
  unsigned Fallbacks = 0;
  std::set<std::string> FallbackKernels = {};
};

Outcome unsupported(std::string Why) {
  return {Status::Unsupported, std::move(Why)};
}
Outcome failed(std::string Why) { return {Status::Failed, std::move(Why)}; }

/// ONNX 1.12's test data stores bfloat16 tensors as UINT16 bit patterns.
runtime::Tensor fixBF16(runtime::Tensor T, ElementType Declared) {
  if (Declared != ElementType::BF16 || T.getElementType() != ElementType::U16)
    return T;
  runtime::Tensor R(ElementType::BF16, T.getShape(), T.getLayout());
  std::copy(T.getBytes().begin(), T.getBytes().end(),
            R.getMutableBytes().begin());
  return R;
}

llvm::Expected<runtime::Tensor> readTensor(const std::string &Path) {
  auto Data = readONNXTensorFile(Path);
  if (!Data)
    return Data.takeError();
  return runtime::Tensor::fromData(**Data);
}

std::string formatIndex(llvm::ArrayRef<int64_t> Index) {
  std::string S = "[";
  for (size_t I = 0; I != Index.size(); ++I)
    S += (I ? "," : "") + std::to_string(Index[I]);
  return S + "]";
}

std::string formatDouble(double D) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << llvm::format("%.8g", D);
  return OS.str();
}

/// Why \p Got differs from \p Want (logical comparison, any layouts), or "".
std::string compareTensors(const runtime::Tensor &Got,
                           const runtime::Tensor &Want) {
  if (Got.getElementType() != Want.getElementType() ||
      Got.getShape() != Want.getShape())
    return "got type " +
           TensorType::get(Got.getElementType(), Got.getShape()).str() +
           ", expected " +
           TensorType::get(Want.getElementType(), Want.getShape()).str();
  bool Float = isFloatingPoint(Got.getElementType());
  int64_t Bad = 0;
  std::string First;
  runtime::forEachIndex(Got.getShape(), [&](llvm::ArrayRef<int64_t> I) {
    int64_t GO = Got.getOffset(I), WO = Want.getOffset(I);
    if (Float) {
      double G = Got.getDouble(GO), W = Want.getDouble(WO);
      if (std::isnan(G) && std::isnan(W))
        return;
      if (G == W || std::fabs(G - W) <= ATol + RTol * std::fabs(W))
        return;
      if (!Bad++)
        First = formatIndex(I) + " = " + formatDouble(G) + ", expected " +
                formatDouble(W);
      return;
    }
    int64_t G = Got.getInt(GO), W = Want.getInt(WO);
    if (G != W && !Bad++)
      First = formatIndex(I) + " = " + std::to_string(G) + ", expected " +
              std::to_string(W);
  });
  if (!Bad)
    return "";
  return std::to_string(Bad) + " of " + std::to_string(Got.getNumElements()) +
         " elements differ, first " + First;
}

/// How many graph inputs become constants before the pipeline runs.
enum class Binding {
  /// None: every input is a runtime tensor.
  None,
  /// Inputs never read as a first operand (Reshape shapes, Slice bounds,
  /// Resize scales, Pad pads, ...).
  NonFirstOperands,
  /// Those and every integer input (ConstantOfShape's shape, ...).
  ShapeLike,
};

/// Runs data set \p DataSet of the model at \p ModelPath through
/// \p Pipeline (configured with \p Opts) and the reference interpreter,
/// with the shape-deciding inputs chosen by \p B bound to their data.
Outcome runDataSet(llvm::StringRef ModelPath, llvm::StringRef DataSet,
                   llvm::StringRef Pipeline, const PipelineOptions &Opts,
                   Binding B) {
  ImportOptions IOpts;
  IOpts.InferShapes = false;
  auto GOrErr = importONNXFile(ModelPath, IOpts);
  if (!GOrErr)
    return unsupported("import: " + llvm::toString(GOrErr.takeError()));
  Graph &G = **GOrErr;

  // input_K.pb is the K-th graph input without default data.
  runtime::TensorMap Inputs;
  unsigned K = 0;
  std::vector<Value *> GraphInputs(G.getInputs().begin(), G.getInputs().end());
  // Inputs that decide an If are bound by value, as sessions bind them.
  std::vector<const Value *> Control = findControlInputs(G);
  for (Value *In : GraphInputs) {
    if (TensorDataRef Default = In->getDefaultData()) {
      // An initializer listed as an input: the data sets do not feed it,
      // and strider-run folds such inputs into constants (specialize-
      // shapes), as the backends' constant weights need.
      if (B != Binding::None)
        replaceInputByConstant(G, In, Default);
      continue;
    }
    std::string Path = dataFile(DataSet, "input", K++);
    if (!llvm::sys::fs::exists(Path))
      return unsupported("data set has no " +
                         llvm::sys::path::filename(Path).str() + " for '" +
                         In->getName() + "'");
    auto D = readONNXTensorFile(Path);
    if (!D)
      return failed(llvm::toString(D.takeError()));
    if (llvm::is_contained(Control, In) ||
        (B != Binding::None &&
         isShapeLikeInput(*In, B == Binding::ShapeLike))) {
      replaceInputByConstant(G, In, *D);
      continue;
    }
    runtime::Tensor Data =
        fixBF16(runtime::Tensor::fromData(**D), In->getType().getElementType());
    In->setType(TensorType::get(Data.getElementType(), Data.getShape()));
    Inputs[In->getName()] = std::move(Data);
  }
  // Forget the exporter's intermediate and output types: the pipeline's
  // shape inference derives them from the inputs' static types.
  for (Node *N : G.nodes())
    if (N->getOpId() != OpId::Constant)
      for (unsigned I = 0; I < N->getNumResults(); ++I)
        if (Value *R = N->getResult(I))
          R->setType(TensorType());

  PassManager PM;
  if (llvm::Error E = parsePassPipeline(Pipeline, PM))
    return failed(llvm::toString(std::move(E)));
  PM.configure(Opts);
  if (llvm::Error E = PM.run(G))
    return failed("pipeline: " + llvm::toString(std::move(E)));

  for (const Node *N : G.nodes())
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (const Value *R = N->getResult(I))
        if (!R->getType().hasStaticShape())
          return {Status::Unsupported,
                  "'" + R->getName() + "' has a non-static type " +
                      R->getType().str() + " (data-dependent shape)",
                  /*NonStatic=*/true};

  // Passes may drop inputs nothing reads; bind only those still there.
  runtime::TensorMap Bound;
  for (auto &KV : Inputs) {
    const Value *V = G.lookupValue(KV.first);
    if (V && V->isGraphInput())
      Bound.insert(KV);
  }
  codegen::BackendOptions BO;
  BO.EmulateDeviceCode = DeviceCode;
  auto Prog = getExecutor().compile(G, BO);
  if (!Prog) {
    // What the CUDA backend cannot plan (an op without a CUDA kernel, f64
    // or integer activations) is unsupported, not failed.
    if (Backend == "cuda")
      return unsupported("cuda: " + llvm::toString(Prog.takeError()));
    return failed("lowering: " + llvm::toString(Prog.takeError()));
  }
  std::set<std::string> FallbackKernels;
  unsigned Fallbacks = 0;
  for (const codegen::StepInfo &Step : (*Prog)->getSteps())
    if (Step.Fallback) {
      FallbackKernels.insert(Step.Kernel);
      ++Fallbacks;
    }
  if (PlanOnly)
    return {Status::Passed, ""};
  llvm::Expected<runtime::TensorMap> Out = (*Prog)->run(Bound);
  if (!Out)
    return failed("run: " + llvm::toString(Out.takeError()));

  for (unsigned O = 0, E = G.getOutputs().size(); O != E; ++O) {
    const Value *V = G.getOutputs()[O];
    auto Want = readTensor(dataFile(DataSet, "output", O));
    if (!Want)
      return failed(llvm::toString(Want.takeError()));
    const runtime::Tensor &Got = Out->at(V->getName());
    std::string Why =
        compareTensors(Got, fixBF16(std::move(*Want), Got.getElementType()));
    if (!Why.empty())
      return failed("output " + std::to_string(O) + " ('" + V->getName() +
                    "'): " + Why);
  }
  Outcome O{Status::Passed, ""};
  O.Fallbacks = Fallbacks;
  O.FallbackKernels = std::move(FallbackKernels);
  for (const Node *N : G.nodes())
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (const Value *R = N->getResult(I))
        O.Relaid += !R->getType().getLayout().isIdentity();
  return O;
}

/// The ops of the model at \p ModelPath without a reference kernel
/// (qualified by domain when not the default one), as imported: a call of
/// a function (an ONNX op defined by one, CastLike; a model-local one)
/// counts by the ops of its body. \p M when the import fails.
std::set<std::string> opsWithoutKernel(llvm::StringRef ModelPath,
                                       const onnx::ModelProto &M) {
  std::set<std::string> Missing;
  ImportOptions IOpts;
  IOpts.InferShapes = false;
  if (auto G = importONNXFile(ModelPath, IOpts)) {
    // An If runs as the branch it takes (inlined): its branches' ops count.
    std::function<void(const Graph &)> Walk = [&](const Graph &Body) {
      for (const Node *N : Body.nodes()) {
        if (N->isOpaque())
          Missing.insert(N->getDomain().empty()
                             ? N->getOpType().str()
                             : (N->getDomain() + "." + N->getOpType()).str());
        else if (N->getOpId() != OpId::If &&
                 !runtime::lookupReferenceKernel(N->getOpId()))
          Missing.insert(N->getOpType().str());
        for (const NamedAttribute &A : N->getAttrs())
          if (A.Value.getKind() == AttrKind::Graph && A.Value.getGraph())
            Walk(*A.Value.getGraph());
      }
    };
    Walk(**G);
    return Missing;
  } else {
    llvm::consumeError(G.takeError()); // runDataSet reports it.
  }
  for (const onnx::NodeProto &N : M.graph().node()) {
    if (!(N.domain().empty() || N.domain() == "ai.onnx")) {
      Missing.insert(N.domain() + "." + N.op_type());
      continue;
    }
    const OpInfo *Info = lookupOp(N.op_type());
    if (!Info ||
        (Info->Id != OpId::If && !runtime::lookupReferenceKernel(Info->Id)))
      Missing.insert(N.op_type());
  }
  return Missing;
}

Outcome runTest(llvm::StringRef Dir, std::map<std::string, unsigned> &Missing) {
  onnx::ModelProto M;
  if (llvm::Error E = readModel(Dir, M))
    return failed(llvm::toString(std::move(E)));
  llvm::SmallString<256> Path(Dir);
  llvm::sys::path::append(Path, "model.onnx");
  std::set<std::string> NoKernel = opsWithoutKernel(Path, M);
  if (!NoKernel.empty()) {
    std::string Why = "no kernel:";
    for (const std::string &Op : NoKernel) {
      ++Missing[Op];
      Why += " " + Op;
    }
    return unsupported(Why);
  }
  std::string Why = unsupportedReason(M);
  if (!Why.empty())
    return unsupported(Why);
  std::vector<std::string> Sets = sortedDataSets(Dir);
  if (Sets.empty())
    return unsupported("no data set");

  llvm::SmallString<256> ModelPath(Dir);
  llvm::sys::path::append(ModelPath, "model.onnx");
  PipelineOptions Imported;
  PipelineOptions NHWC;
  NHWC.Layout.Mode = layout::LayoutMode::ChannelsLast;
  struct Variant {
    const char *Name;
    llvm::StringRef Pipeline;
    const PipelineOptions *Opts;
  } Variants[] = {
      {"imported", "infer-shapes,constant-fold,inline-if,infer-shapes",
       &Imported},
      {"nhwc", getDefaultPipeline(), &NHWC}};
  unsigned Relaid = 0, Fallbacks = 0;
  std::set<std::string> FallbackKernels;
  for (const Variant &V : Variants)
    for (const std::string &Set : Sets) {
      // Bind as few inputs as make every shape static, so that the
      // interpreter (not constant folding) computes as much as possible.
      // The backends' fast kernels want constant weights (packed at
      // compile time, handed to cuDNN), and the tests pass weights as
      // inputs: there, every input not read as a first operand is bound
      // from the start.
      Outcome O = runDataSet(ModelPath, Set, V.Pipeline, *V.Opts,
                             Backend != "reference" ? Binding::NonFirstOperands
                                                    : Binding::None);
      if (O.NonStatic)
        O = runDataSet(ModelPath, Set, V.Pipeline, *V.Opts,
                       Binding::NonFirstOperands);
      if (O.NonStatic)
        O = runDataSet(ModelPath, Set, V.Pipeline, *V.Opts, Binding::ShapeLike);
      if (O.S != Status::Passed) {
        O.Why = std::string(V.Name) + ", " +
                llvm::sys::path::filename(Set).str() + ": " + O.Why;
        return O;
      }
      if (V.Opts == &NHWC)
        Relaid = std::max(Relaid, O.Relaid);
      Fallbacks += O.Fallbacks;
      FallbackKernels.insert(O.FallbackKernels.begin(),
                             O.FallbackKernels.end());
    }
  Outcome O{Status::Passed, ""};
  O.Relaid = Relaid;
  O.Fallbacks = Fallbacks;
  O.FallbackKernels = std::move(FallbackKernels);
  return O;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Check Strider's reference interpreter against ONNX backend tests\n");
  if (Backend != "reference" && Backend != "cpu" && Backend != "cuda") {
    llvm::errs() << "strider-numeric-conformance: unknown backend '" << Backend
                 << "' (available: reference, cpu, cuda)\n";
    return 1;
  }
  if ((PlanOnly || Emulate) && Backend != "cuda") {
    llvm::errs() << "strider-numeric-conformance: --plan-only and --emulate "
                    "need --backend=cuda\n";
    return 1;
  }
  if (llvm::Error E = getExecutor().checkAvailable(codegen::BackendOptions())) {
    llvm::errs() << "strider-numeric-conformance: --backend=" << Backend << ": "
                 << llvm::toString(std::move(E)) << "\n";
    return 1;
  }
  auto DirsOrErr = collectTestDirs(TestRoots);
  if (!DirsOrErr) {
    llvm::errs() << llvm::toString(DirsOrErr.takeError()) << "\n";
    return 1;
  }
  const std::vector<std::string> &Dirs = *DirsOrErr;
  unsigned Passed = 0, Unsupported = 0, Failed = 0, WithFallbacks = 0;
  std::map<std::string, unsigned> Missing;
  /// Passing tests whose programs ran each reference kernel.
  std::map<std::string, unsigned> ByFallback;
  /// --backend=cuda: why the planner refused tests, by reason.
  std::map<std::string, unsigned> Refused;
  for (const std::string &Dir : Dirs) {
    std::string Name = llvm::sys::path::filename(Dir).str();
    Outcome O = runTest(Dir, Missing);
    auto Quirk = knownTestDataQuirks().find(Name);
    if (Quirk != knownTestDataQuirks().end()) {
      // Planning says nothing about data no interpreter reproduces.
      if (O.S == Status::Failed || (PlanOnly && O.S == Status::Passed))
        O = unsupported("skip list: " + Quirk->second + " (" + O.Why + ")");
      else if (O.S == Status::Passed)
        llvm::outs() << "NOTE " << Name
                     << " passes: remove it from the skip list\n";
    }
    switch (O.S) {
    case Status::Passed:
      ++Passed;
      WithFallbacks += O.Fallbacks != 0;
      for (const std::string &K : O.FallbackKernels)
        ++ByFallback[K];
      if (Verbose)
        llvm::outs() << "PASS " << Name << " (nhwc run: " << O.Relaid
                     << " values in a non-identity layout"
                     << (O.Fallbacks ? "; reference kernels: " +
                                           std::to_string(O.Fallbacks)
                                     : std::string())
                     << ")\n";
      break;
    case Status::Unsupported: {
      ++Unsupported;
      const size_t At = O.Why.find("no CUDA kernel for ");
      if (Quirk != knownTestDataQuirks().end()) {
        // Not counted: the skip list's tests say nothing either way.
      } else if (At != std::string::npos) {
        std::string Reason = O.Why.substr(At + 19);
        Reason = Reason.substr(0, Reason.find(" ("));
        ++Refused[Reason.substr(0, 60)];
      } else if (O.Why.find("cuda: ") != std::string::npos) {
        ++Refused["other planning errors"];
      }
      if (Verbose)
        llvm::outs() << "UNSUPPORTED " << Name << " (" << O.Why << ")\n";
      break;
    }
    case Status::Failed:
      ++Failed;
      llvm::outs() << "FAIL " << Name << " (" << O.Why << ")\n";
      break;
    }
  }
  std::vector<std::pair<std::string, unsigned>> Top(Missing.begin(),
                                                    Missing.end());
  std::stable_sort(Top.begin(), Top.end(), [](const auto &A, const auto &B) {
    return A.second > B.second;
  });
  if (Top.size() > 10)
    Top.resize(10);
  llvm::outs() << "onnx numeric conformance (" << Backend << " backend"
               << (PlanOnly  ? ", plan only"
                   : Emulate ? ", emulated on the host"
                             : "")
               << "): " << Dirs.size() << " total, " << Passed + Failed
               << " supported, " << Passed
               << (PlanOnly ? " planned both ways, " : " passed both ways, ")
               << Failed << " failed, " << Unsupported
               << " unsupported (op without kernel:";
  for (size_t I = 0; I != Top.size(); ++I)
    llvm::outs() << (I ? ", " : " ") << Top[I].first << " " << Top[I].second;
  llvm::outs() << ")\n";
  if (!Refused.empty()) {
    std::vector<std::pair<std::string, unsigned>> Why(Refused.begin(),
                                                      Refused.end());
    std::stable_sort(Why.begin(), Why.end(), [](const auto &A, const auto &B) {
      return A.second > B.second;
    });
    llvm::outs() << "refused by the CUDA planner:\n";
    for (const auto &[Reason, Count] : Why)
      llvm::outs() << "  " << Count << "  " << Reason << "\n";
  }
  if (Backend != "reference") {
    llvm::outs() << "passing tests whose program ran reference kernels: "
                 << WithFallbacks
                 << (ByFallback.empty() ? "" : " (tests per kernel:");
    for (const auto &[Kernel, Count] : ByFallback)
      llvm::outs() << " " << Kernel << " " << Count;
    llvm::outs() << (ByFallback.empty() ? "" : ")") << "\n";
  }
  bool Lost = false;
  if (Passed < Floor) {
    llvm::outs() << "FAIL coverage: " << Passed << " tests pass, below the "
                 << "floor of " << Floor
                 << " (test/Conformance/floors.txt): find the tests that "
                    "stopped passing (-v)\n";
    Lost = true;
  } else if (Passed > Floor && Floor.getNumOccurrences()) {
    llvm::outs() << "NOTE " << Passed << " tests pass, above the floor of "
                 << Floor << ": raise it in test/Conformance/floors.txt\n";
  }
  if (MaxFallbacks >= 0 && WithFallbacks > unsigned(MaxFallbacks)) {
    llvm::outs() << "FAIL coverage: " << WithFallbacks
                 << " passing tests ran reference kernels, above the limit "
                 << "of " << MaxFallbacks
                 << " (test/Conformance/floors.txt): a lowering declines "
                    "what it took before (-v lists them)\n";
    Lost = true;
  } else if (MaxFallbacks >= 0 && WithFallbacks < unsigned(MaxFallbacks)) {
    llvm::outs() << "NOTE " << WithFallbacks
                 << " passing tests ran reference kernels, below the limit "
                 << "of " << MaxFallbacks
                 << ": lower it in test/Conformance/floors.txt\n";
  }
  return Failed || Lost ? 1 : 0;
}
