//===- Session.cpp - Specialize, optimize, lower and run, cached by shape -===//
//
// A session keeps one Specialization per set of fed shapes: a copy of the
// model's graph bound to those shapes, optimized for the session's target
// (ONNX input), and lowered for its backend.
//
//===----------------------------------------------------------------------===//

#include "strider/Engine/Session.h"
#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/CodeGen/Registry/BackendRegistry.h"
#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/Verifier.h"
#include "strider/Layout/Target.h"
#include "strider/Layout/Tuning.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"
#include "strider/Transforms/Precision.h"
#include "strider/Transforms/Specialize.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <chrono>

using namespace strider;
using namespace strider::engine;

Specialization::~Specialization() = default;

std::string engine::getDefaultTarget() {
  return llvm::cantFail(codegen::findBackend("cpu"))
      ->getDefaultTarget(codegen::BackendOptions());
}

/// What \p Opts ask of their backend.
static codegen::BackendOptions getBackendOptions(const SessionOptions &Opts) {
  codegen::BackendOptions BO;
  BO.Threads = Opts.Threads;
  BO.Device = Opts.Device;
  BO.Precision = Opts.Precision;
  BO.Pinned = Opts.Pinned;
  BO.EmulateDeviceCode = Opts.EmulateDeviceCode;
  BO.Tuning = Opts.Tuning;
  BO.MaxMemory = Opts.MaxMemory;
  return BO;
}

Session::Session(std::shared_ptr<const Model> M, SessionOptions Opts,
                 const codegen::Backend &B)
    : M(std::move(M)), Opts(std::move(Opts)), TheBackend(&B) {
  // Each arena reserves address space only: memory is committed as runs
  // touch it.
  if (this->Opts.Backend == "cpu")
    Arena = std::make_shared<cpu::ArenaPool>(size_t(16) << 30);
}
Session::~Session() = default;

llvm::Error engine::checkBackendAvailable(const SessionOptions &Opts) {
  auto B = codegen::findBackend(Opts.Backend);
  if (!B)
    return B.takeError();
  return (*B)->checkAvailable(getBackendOptions(Opts));
}

llvm::Expected<std::unique_ptr<Session>>
Session::create(std::shared_ptr<const Model> M, SessionOptions Opts) {
  if (Opts.Threads < 1)
    return makeError("threads must be at least 1 (got " +
                     llvm::Twine(Opts.Threads) + ")");
  auto B = codegen::findBackend(Opts.Backend);
  if (!B)
    return B.takeError();
  const codegen::BackendOptions BO = getBackendOptions(Opts);
  if (llvm::Error E = (*B)->checkOptions(BO))
    return E;
  if (Opts.MaxSpecializations < 1)
    Opts.MaxSpecializations = 1;
  if (Opts.Target.empty())
    Opts.Target = (*B)->getDefaultTarget(BO);
  auto L = layout::parseLayoutOptions(Opts.Target, "auto", "model", {});
  if (!L)
    return L.takeError();
  // The table before the device: a wrong file is wrong on every machine.
  if (const layout::TuningTable *T = Opts.Tuning.get()) {
    if (T->Target != L->Target->Name)
      return makeError("the tuning table was measured for target '" +
                       T->Target + "', not for " + L->Target->Name);
    if (!T->Device.empty() && T->Precision != Opts.Precision)
      return makeError("the tuning table was measured at " + T->Precision +
                       ", not at precision " + Opts.Precision);
  }
  if (llvm::Error E = (*B)->checkAvailable(BO))
    return E;
  if (llvm::Error E = checkDimBindings(M->getGraph(), Opts.Dims))
    return makeError(M->getFile() + ": " + llvm::toString(std::move(E)));
  if (llvm::Error E = engine::checkInputRanges(M->getGraph(), Opts.InputRanges))
    return makeError(M->getFile() + ": " + llvm::toString(std::move(E)));
  return std::unique_ptr<Session>(
      new Session(std::move(M), std::move(Opts), **B));
}

ShapeKey Session::getKey(const runtime::TensorMap &Inputs) {
  ShapeKey Key;
  for (const auto &[Name, T] : Inputs)
    Key[Name] = {T.getElementType(), std::vector<int64_t>(T.getShape().begin(),
                                                          T.getShape().end())};
  return Key;
}

ValueKey Session::getValueKey(const runtime::TensorMap &Inputs) const {
  ValueKey Values;
  for (const Value *In : M->getControlInputs()) {
    auto It = Inputs.find(In->getName());
    if (It == Inputs.end())
      continue;
    const runtime::Tensor &T = It->second;
    std::vector<int64_t> &V = Values[In->getName()];
    // Row-major order whatever the tensor's layout (a control input has
    // at most MaxControlInputElements elements).
    runtime::forEachIndex(T.getShape(), [&](llvm::ArrayRef<int64_t> Index) {
      V.push_back(T.getInt(T.getOffset(Index)));
    });
  }
  return Values;
}

/// The pipeline options of a session's optimization: layouts for
/// \p Target, costed by \p Tuning when given, and no report (nobody reads
/// it).
static llvm::Expected<PipelineOptions>
getPipelineOptions(llvm::StringRef Target,
                   std::shared_ptr<layout::TuningTable> Tuning) {
  llvm::Expected<layout::LayoutOptions> Layout =
      layout::parseLayoutOptions(Target, "auto", "model", {});
  if (!Layout)
    return Layout.takeError();
  Layout->Tuning = std::move(Tuning);
  Layout->Explain = false;
  PipelineOptions Opts;
  Opts.Layout = std::move(*Layout);
  return Opts;
}

/// The pipeline a specialized graph (and a size class's graph) is
/// optimized with: the default pipeline without its first inference.
static const char *const ShapePipeline =
    "canonicalize,infer-shapes,layout-assignment";

/// strider-compile's default pipeline after specialization: canonicalize,
/// then layout assignment for \p Target, costed by \p Tuning when given
/// (as ONNX Runtime optimizes at session creation). Returns what it did.
/// The graph is inferred already (specialization ends at inference's fixed
/// point), so the pipeline's first inference is left out; it is verified
/// once, at the end, and layout assignment writes no report (nobody reads
/// it): what a new shape costs is kept to what it must do.
static llvm::Expected<std::string>
optimizeGraph(Graph &G, llvm::StringRef Target,
              std::shared_ptr<layout::TuningTable> Tuning) {
  llvm::Expected<PipelineOptions> Opts =
      getPipelineOptions(Target, std::move(Tuning));
  if (!Opts)
    return Opts.takeError();
  size_t Before = G.getNumNodes();
  PassManager PM;
  llvm::cantFail(parsePassPipeline(ShapePipeline, PM));
  PM.configure(*Opts);
  PM.setVerifyEach(false);
  if (llvm::Error E = PM.run(G))
    return E;
  if (llvm::Error E = verifyGraph(G))
    return makeError("graph fails verification after optimization: " +
                     llvm::toString(std::move(E)));
  unsigned Relayouts = 0;
  for (const Node *N : G.nodes())
    Relayouts += N->getOpId() == OpId::Relayout;
  return "optimized for " + Opts->Layout.Target->Name.str() + " (" +
         std::to_string(Before) + " -> " + std::to_string(G.getNumNodes()) +
         " nodes, " + std::to_string(Relayouts) + " relayouts)";
}

/// The data of every constant of \p G.
static llvm::DenseSet<const TensorData *> getConstantData(const Graph &G) {
  llvm::DenseSet<const TensorData *> Data;
  for (const Node *N : G.nodes())
    if (N->getOpId() == OpId::Constant && N->getNumResults())
      if (const TensorData *D = N->getResult(0)->getConstantData())
        Data.insert(D);
  return Data;
}

/// The bytes of the constants of \p G whose data is not in \p Shared.
static int64_t getOwnedBytes(const Graph &G,
                             const llvm::DenseSet<const TensorData *> &Shared) {
  int64_t Bytes = 0;
  for (const TensorData *D : getConstantData(G))
    if (!Shared.count(D))
      Bytes += int64_t(D->getBytes().size());
  return Bytes;
}

llvm::Error Session::checkInputRanges(const ShapeKey &Key) const {
  std::map<std::string, std::vector<int64_t>> Shapes;
  for (const auto &[Name, Fed] : Key)
    Shapes[Name] = Fed.second;
  if (llvm::Error E = M->checkInputRanges(Shapes))
    return E;
  return checkShapesInRanges(Opts.InputRanges, Shapes, M->getFile(),
                             "the session allows (its input ranges)");
}

/// \p Msg prefixed by \p File, unless it names it first already (errors
/// located at a node do).
static std::string withFile(const std::string &File, std::string Msg) {
  if (llvm::StringRef(Msg).startswith(File + ":"))
    return Msg;
  return File + ": " + Msg;
}

/// The size a dynamic dim of \p N is optimized at: N rounded up to a power
/// of two (0 and 1 as they are).
static int64_t getClassSize(int64_t N) {
  return N <= 1 ? N : int64_t(llvm::PowerOf2Ceil(uint64_t(N)));
}

llvm::Optional<Session::SizeClass>
Session::getSizeClass(const ShapeKey &Key) const {
  if (!M->isFromOnnx() || !Opts.Optimize || !M->getControlInputs().empty())
    return llvm::None;
  if (Opts.OptimizePerShape && Opts.InputRanges.empty())
    return llvm::None;
  const Graph &Base = M->getGraph();
  SizeClass C;
  C.AtSizes.Dims = Opts.Dims;
  bool Dynamic = false;
  for (const auto &[Name, Fed] : Key) {
    const TensorType &T = Base.lookupValue(Name)->getType();
    auto &Shape = C.AtSizes.InputShapes[Name];
    Shape.assign(Fed.second.begin(), Fed.second.end());
    C.Id.push_back(int64_t(Shape.size()));
    for (unsigned I = 0; I < Shape.size(); ++I) {
      const Dim D = T.hasRank() && I < T.getRank() ? T.getDim(I) : Dim();
      const bool Bound = D.isSymbol() && Opts.Dims.count(D.getSymbol().str());
      if (!D.isStatic() && !Bound) {
        Dynamic = true;
        auto R = llvm::find_if(Opts.InputRanges, [&](const InputRange &R) {
          return R.Input == Name && R.Axis == I;
        });
        if (R != Opts.InputRanges.end())
          Shape[I] = R->Max;
        else if (!Opts.OptimizePerShape)
          Shape[I] = getClassSize(Shape[I]);
      }
      C.Id.push_back(Shape[I]);
    }
    if (!C.Text.empty())
      C.Text += ", ";
    C.Text += Name + "=";
    for (unsigned I = 0; I < Shape.size(); ++I)
      C.Text += (I ? "x" : "") + std::to_string(Shape[I]);
  }
  if (!Dynamic)
    return llvm::None;
  return C;
}

llvm::Expected<const Graph &> Session::getClassGraph(const SizeClass &C) {
  ClassGraph *Entry;
  {
    std::lock_guard<std::mutex> Lock(ClassMutex);
    std::unique_ptr<ClassGraph> &Slot = Classes[C.Id];
    if (!Slot)
      Slot = std::make_unique<ClassGraph>();
    Entry = Slot.get();
  }
  std::call_once(Entry->Once, [&] {
    llvm::Error E = [&]() -> llvm::Error {
      llvm::Expected<PipelineOptions> PO =
          getPipelineOptions(Opts.Target, Opts.Tuning);
      if (!PO)
        return PO.takeError();
      std::unique_ptr<Graph> G = M->getPreparedGraph().clone();
      // As a per-shape optimization: the graphs are inferred already, and
      // verified once, at the end.
      if (llvm::Error E = runPipelineAtSizes(*G, C.AtSizes, ShapePipeline, *PO,
                                             /*VerifyEach=*/false))
        return E;
      Entry->G = std::move(G);
      return llvm::Error::success();
    }();
    if (E)
      Entry->Error = M->getFile() + ": optimizing for " + C.Text + ": " +
                     llvm::toString(std::move(E));
    Entry->Done.store(true, std::memory_order_release);
  });
  if (!Entry->G)
    return makeError(Entry->Error);
  return *Entry->G;
}

llvm::Expected<std::unique_ptr<Specialization>>
Session::build(const ShapeKey &Key, const ValueKey &Values) {
  const Graph &Base = M->getGraph();
  const std::string &File = M->getFile();
  ShapeBindings B;
  B.Dims = Opts.Dims;
  for (const auto &[Name, Fed] : Key) {
    const Value *In = Base.lookupValue(Name);
    if (!In || !In->isGraphInput())
      return makeError(File + ": the model has no input '" + Name + "'");
    const TensorType &Want = In->getType();
    if (Want.getElementType() != ElementType::Unknown &&
        Fed.first != Want.getElementType())
      return makeError(File + ": input '" + Name + "' has element type " +
                       getElementTypeName(Fed.first) + ", the model expects " +
                       Want.str());
    B.InputShapes[Name].assign(Fed.second.begin(), Fed.second.end());
  }
  for (const Value *In : M->getInputs())
    if (!Key.count(In->getName()))
      return makeError(File + ": missing input '" + In->getName() + "' (" +
                       In->getType().str() + ")");
  if (llvm::Error E = checkInputRanges(Key))
    return E;

  auto S = std::make_unique<Specialization>();
  for (const Value *In : M->getControlInputs()) {
    const std::string &Name = In->getName();
    auto V = Values.find(Name);
    if (V == Values.end())
      return makeError(File + ": input '" + Name +
                       "' decides which branch an If takes: compiling the "
                       "model needs its value (run it, or prepare with it)");
    B.InputValues[Name] = V->second;
    S->BoundValues[Name] = V->second;
  }
  using Clock = std::chrono::steady_clock;
  auto Since = [](Clock::time_point T) {
    return std::chrono::duration<double>(Clock::now() - T).count();
  };
  // An optimized ONNX model specializes the graph its shape-independent
  // rewrites were done on once, for every session and shape, or that graph
  // optimized once for the shape's size class. Without input ranges a
  // class whose graph cannot be made (sizes rounded up that the model
  // does not accept) has each of its shapes optimized for itself.
  auto Phase = Clock::now();
  llvm::Optional<SizeClass> Class = getSizeClass(Key);
  const Graph *ClassG = nullptr;
  std::string ClassFailed;
  if (Class) {
    llvm::Expected<const Graph &> CG = getClassGraph(*Class);
    if (CG)
      ClassG = &*CG;
    else if (!Opts.InputRanges.empty())
      return CG.takeError();
    else
      ClassFailed = llvm::toString(CG.takeError());
  }
  // The class's first build optimizes its graph: optimization time.
  const double ClassSeconds = Since(Phase);
  Phase = Clock::now();
  if (ClassG)
    S->G = ClassG->clone();
  else
    S->G = (Opts.Optimize ? M->getPreparedGraph() : Base).clone();
  const llvm::DenseSet<const TensorData *> Shared = getConstantData(*S->G);
  if (llvm::Error E = specializeShapes(*S->G, B, &S->Specialized))
    return makeError(withFile(File, llvm::toString(std::move(E))));
  if (llvm::Error E = checkIfsFolded(*S->G))
    return E;
  std::string Did = "shapes specialized";
  if (!S->Specialized.BoundDims.empty()) {
    Did += " (";
    bool First = true;
    for (const auto &[Symbol, Size] : S->Specialized.BoundDims) {
      Did += (First ? "" : ", ") + Symbol + "=" + std::to_string(Size);
      First = false;
    }
    Did += ")";
  }
  if (!S->Specialized.BoundValues.empty()) {
    Did += ", inputs bound (";
    for (size_t I = 0; I < S->Specialized.BoundValues.size(); ++I)
      Did += (I ? ", " : "") + S->Specialized.BoundValues[I];
    Did += ")";
  }
  S->Times.Specialize = Since(Phase);
  Phase = Clock::now();
  if (M->isArtifact()) {
    Did += "; layouts as compiled (artifact)";
  } else if (ClassG) {
    Did += Opts.InputRanges.empty() ? "; layouts as optimized for the size "
                                      "class " +
                                          Class->Text
                                    : "; layouts as optimized for the input "
                                      "ranges (" +
                                          Class->Text + ")";
  } else if (!M->isFromOnnx()) {
    Did += "; layouts as compiled";
  } else if (!Opts.Optimize) {
    Did += "; not optimized";
  } else {
    auto Summary = optimizeGraph(*S->G, Opts.Target, Opts.Tuning);
    if (!Summary)
      return Summary.takeError();
    Did += "; " + *Summary;
    if (!ClassFailed.empty())
      Did += " (for its shape: " + ClassFailed + ")";
  }
  // Mixed precision: convs and matmuls in half, casts placed by
  // assign-precision (graphs of any origin that are still f32). Only GPU
  // backends accept a half precision (Backend::checkOptions).
  llvm::Optional<ElementType> Half = parseHalfPrecision(Opts.Precision);
  if (Half && *Half != ElementType::Unknown) {
    PrecisionOptions PO;
    PO.Half = *Half;
    const layout::TargetDescription *T = layout::lookupTarget(Opts.Target);
    PO.Target = T && T->Name.startswith("cuda-") ? T : nullptr;
    auto R = assignPrecision(*S->G, PO);
    if (!R)
      return makeError(withFile(File, llvm::toString(R.takeError())));
    if (llvm::Error E = verifyGraph(*S->G))
      return makeError(
          File + ": after assign-precision: " + llvm::toString(std::move(E)));
    Did += "; " + R->summary();
  }
  S->Summary = std::move(Did);
  S->Times.Optimize = ClassSeconds + Since(Phase);
  Phase = Clock::now();
  codegen::BackendOptions BO = getBackendOptions(Opts);
  BO.Derived = M->getDerived();
  BO.Arena = Arena;
  auto P = TheBackend->compile(*S->G, BO);
  if (!P)
    return P.takeError();
  S->Program = std::move(*P);
  S->Times.Lower = Since(Phase);
  S->OwnedBytes = getOwnedBytes(*S->G, Shared);
  return S;
}

/// The memory a cached specialization holds of its own: the constants its
/// graph made for its shapes (folded shape chains, constants of shapes).
/// Its weights and packed weights are the model's, and a CPU session's
/// activation arenas are one pool that every program runs in.
static int64_t getCachedBytes(const Specialization &S) { return S.OwnedBytes; }

llvm::Expected<std::shared_ptr<Specialization>>
Session::prepare(const ShapeKey &Key, const ValueKey &Values) {
  // Values of inputs that decide no If do not make another specialization.
  ValueKey Control;
  for (const Value *In : M->getControlInputs()) {
    auto It = Values.find(In->getName());
    if (It != Values.end())
      Control.insert(*It);
  }
  CacheKey Wanted(Key, Control);
  auto Find = [&] {
    return std::find_if(Cache.begin(), Cache.end(),
                        [&](const auto &E) { return E.first == Wanted; });
  };
  std::unique_lock<std::mutex> Lock(CacheMutex);
  for (auto It = Find(); It != Cache.end(); It = Find()) {
    if (It->second) {
      Cache.splice(Cache.begin(), Cache, It);
      return Cache.front().second;
    }
    // Another thread is building it: wait for the result (or, if its
    // build failed, build it here and report why).
    Built.wait(Lock);
  }
  // A placeholder tells other threads this one builds it; the lock is not
  // held while it does, so runs of other shapes go on meanwhile.
  Cache.emplace_front(Wanted, nullptr);
  Lock.unlock();
  const auto Start = std::chrono::steady_clock::now();
  auto S = build(Key, Control);
  const double Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  Lock.lock();
  auto Mine = std::find_if(Cache.begin(), Cache.end(), [&](const auto &E) {
    return !E.second && E.first == Wanted;
  });
  if (!S) {
    Cache.erase(Mine);
    Built.notify_all();
    return S.takeError();
  }
  std::shared_ptr<Specialization> Made = std::move(*S);
  Mine->second = Made;
  Cache.splice(Cache.begin(), Cache, Mine);
  Stats.LastBuildSeconds = Seconds;
  Stats.LastBuild = Made->Times;
  Stats.BuildSeconds += Seconds;
  ++Stats.Builds;
  Stats.CachedBytes += getCachedBytes(*Made);
  // Evict the least recently used (never the one just built, nor one
  // being built; a thread running an evicted one keeps it alive).
  while (true) {
    size_t Cached = 0;
    auto Victim = Cache.end();
    for (auto It = Cache.begin(); It != Cache.end(); ++It)
      if (It->second) {
        ++Cached;
        if (It->second != Made)
          Victim = It;
      }
    if (Victim == Cache.end() || (Cached <= Opts.MaxSpecializations &&
                                  Stats.CachedBytes <= Opts.MaxCacheBytes))
      break;
    Stats.CachedBytes -= getCachedBytes(*Victim->second);
    Cache.erase(Victim);
    ++Stats.Evictions;
  }
  Built.notify_all();
  return Made;
}

size_t Session::getNumCached() const {
  std::lock_guard<std::mutex> Lock(CacheMutex);
  return size_t(
      llvm::count_if(Cache, [](const auto &E) { return bool(E.second); }));
}

Session::CacheStats Session::getCacheStats() const {
  std::lock_guard<std::mutex> Lock(CacheMutex);
  CacheStats C = Stats;
  C.Hits = Hits.load(std::memory_order_relaxed);
  std::lock_guard<std::mutex> ClassLock(ClassMutex);
  for (const auto &[Id, Class] : Classes) {
    if (!Class->Done.load(std::memory_order_acquire))
      continue;
    ++C.SizeClasses;
    C.FailedSizeClasses += !Class->G;
  }
  return C;
}

void Session::countRun(Specialization &S) {
  if (S.Runs.fetch_add(1, std::memory_order_relaxed))
    Hits.fetch_add(1, std::memory_order_relaxed);
}

llvm::Error Session::dropBoundInputs(const Specialization &S,
                                     const runtime::TensorMap &Inputs,
                                     runtime::TensorMap &Rest) const {
  // The control inputs are constants of S's graph: check that they hold
  // what S was built for, and feed the rest (views, not copies).
  ValueKey Fed = getValueKey(Inputs);
  for (const auto &[Name, Want] : S.BoundValues) {
    auto It = Fed.find(Name);
    if (It != Fed.end() && It->second != Want)
      return makeError(M->getFile() + ": input '" + Name +
                       "' differs from the value this specialization was "
                       "built for (it decides which branch an If takes; "
                       "run through Session::run to pick the right one)");
  }
  for (const auto &KV : Inputs)
    if (!S.BoundValues.count(KV.first))
      Rest[KV.first] = runtime::viewOf(KV.second);
  return llvm::Error::success();
}

llvm::Expected<runtime::TensorMap>
Session::run(Specialization &S, const runtime::TensorMap &Inputs) {
  countRun(S);
  const runtime::TensorMap *Feeds = &Inputs;
  runtime::TensorMap Rest;
  if (!S.BoundValues.empty()) {
    if (llvm::Error E = dropBoundInputs(S, Inputs, Rest))
      return E;
    Feeds = &Rest;
  }
  if (S.Program->isReentrant())
    return S.Program->run(*Feeds);
  std::lock_guard<std::mutex> Turn(S.RunLock);
  return S.Program->run(*Feeds);
}

llvm::Error Session::runInto(Specialization &S,
                             const runtime::TensorMap &Inputs,
                             runtime::TensorMap &Outputs) {
  countRun(S);
  const runtime::TensorMap *Feeds = &Inputs;
  runtime::TensorMap Rest;
  if (!S.BoundValues.empty()) {
    if (llvm::Error E = dropBoundInputs(S, Inputs, Rest))
      return E;
    Feeds = &Rest;
  }
  if (S.Program->isReentrant())
    return S.Program->runInto(*Feeds, Outputs);
  std::lock_guard<std::mutex> Turn(S.RunLock);
  return S.Program->runInto(*Feeds, Outputs);
}

llvm::Error Session::runOnDevice(Specialization &S,
                                 const runtime::DeviceTensorMap &Inputs,
                                 const runtime::DeviceTensorMap &Outputs) {
  countRun(S);
  // Control inputs are constants of S's graph (their device copies are
  // not read: S was built for the values prepare() was given).
  runtime::DeviceTensorMap Rest = Inputs;
  for (const auto &Bound : S.BoundValues)
    Rest.erase(Bound.first);
  if (S.Program->isReentrant())
    return S.Program->runOnDevice(Rest, Outputs);
  std::lock_guard<std::mutex> Turn(S.RunLock);
  return S.Program->runOnDevice(Rest, Outputs);
}

llvm::Expected<runtime::TensorMap>
Session::run(const runtime::TensorMap &Inputs) {
  auto S = prepare(getKey(Inputs), getValueKey(Inputs));
  if (!S)
    return S.takeError();
  return run(**S, Inputs);
}
