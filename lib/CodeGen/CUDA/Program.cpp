//===- Program.cpp - A CUDA plan loaded on a device -----------------------===//
//
// Loading allocates everything a run needs once: the activation arena, the
// constants (uploaded as the plan holds them), one runner per library
// step (weights converted and uploaded by the runner), the largest
// workspace any runner asks for, pinned host buffers for the inputs and
// outputs, and a CUDA graph of every step captured on the program's
// stream after one uncaptured run. A run copies the inputs in (straight
// from page-locked caller memory, else staged through the pinned buffers
// in chunks that overlap their transfers), replays the graph, copies the
// outputs out the same way and waits for the last chunk.
//
//===----------------------------------------------------------------------===//

#include "PlanImpl.h"

#include "strider/CodeGen/TensorGeometry.h"
#include "strider/Runtime/Tensor.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <map>

using namespace strider;
using namespace strider::cuda;
using runtime::Tensor;
using runtime::TensorMap;

namespace {

llvm::Error cudaFailure(cudaError_t Code, const llvm::Twine &What) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 What + ": " + cudaGetErrorString(Code));
}

#define STRIDER_CUDA_TRY(Call, What)                                           \
  do {                                                                         \
    cudaError_t Status_ = (Call);                                              \
    if (Status_ != cudaSuccess)                                                \
      return cudaFailure(Status_, What);                                       \
  } while (false)

/// What a runner left of the epilogue it was asked for: it must be a
/// suffix of bias, residual, activation (the order they apply in).
llvm::Expected<EpilogueSpec> getRemainder(const EpilogueSpec &Wanted,
                                          const EpilogueSpec &Fused,
                                          const std::string &Step) {
  EpilogueSpec Rest;
  Rest.Bias = Wanted.Bias && !Fused.Bias;
  Rest.Residual = Wanted.Residual && !Fused.Residual;
  if (!Wanted.Act.isNone() && Fused.Act.isNone())
    Rest.Act = Wanted.Act;
  const bool ActFused = !Wanted.Act.isNone() && !Fused.Act.isNone();
  if ((Rest.Bias && (Fused.Residual || ActFused)) ||
      (Rest.Residual && ActFused))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "step '" + Step +
            "': the library fused a later part of the epilogue without an "
            "earlier one");
  return Rest;
}

} // namespace

namespace strider {
namespace cuda {

class ProgramImpl {
public:
  std::unique_ptr<Plan> ThePlan;
  CUDAOptions Opts;
  std::string DeviceName;
  cudaStream_t Stream = nullptr;
  uint8_t *Arena = nullptr;
  std::vector<uint8_t *> Constants; ///< Per buffer id; null for activations.
  void *Workspace = nullptr;
  size_t WorkspaceBytes = 0;
  std::unique_ptr<Libraries> Libs;
  /// Per step: its runner, if it is a library step.
  std::vector<std::unique_ptr<ConvRunner>> Convs;
  /// Shared by steps of one description that own no data (the recurrent
  /// products of every step of an LSTM or GRU).
  std::vector<std::shared_ptr<GemmRunner>> Gemms;
  std::vector<LibraryAlgorithm> ConvAlgorithms;
  /// Per step: the epilogue its library left, launched after it.
  struct Remainder {
    EpilogueParams Params;
    bool Bias = false, Residual = false;
  };
  std::vector<llvm::Optional<Remainder>> Remainders;
  std::vector<uint8_t *> PinnedIn, PinnedOut;
  /// Where kernels report bad indices and lengths (plans with gathers,
  /// scatters or recurrences by sequence_lens; else null), and its pinned
  /// copy read back after every run.
  RunError *DeviceError = nullptr;
  RunError *HostError = nullptr;
  cudaGraphExec_t Exec = nullptr;
  /// With profiling: the steps captured again with an event recorded
  /// after each (event record nodes), so that profiled runs replay as
  /// unprofiled ones do; null where that capture failed (then profiled
  /// runs launch step by step).
  cudaGraphExec_t ProfiledExec = nullptr;
  bool ProfiledGraphTried = false;
  std::vector<cudaEvent_t> Events;
  /// Around the replays Program::timeReplays times.
  cudaEvent_t ReplayBegin = nullptr, ReplayEnd = nullptr;
  /// Staged copies move this many bytes per transfer, so that staging on
  /// the host overlaps the transfers; one event per output chunk.
  static constexpr size_t CopyChunk = size_t(2) << 20;
  std::vector<cudaEvent_t> CopyEvents;
  bool Profile = false;
  std::vector<double> StepSeconds;
  unsigned ProfiledRuns = 0;

  ~ProgramImpl();
  const PlanImpl &plan() const { return ThePlan->getImpl(); }
  void *ptr(const Arg &A) const;
  LibraryStatus launch(size_t Step);
  /// launch, with a failure named by its step (and the library's status).
  llvm::Error launchStep(size_t Step);
  llvm::Error launchAll();
  /// Captures ProfiledExec (Events created); false, with the stream's
  /// capture ended and errors cleared, when any of it fails.
  bool captureProfiledGraph();
  llvm::Error load();
  /// The steps of a run once its inputs are on the device: the graph's
  /// replay, or step by step between events when profiling.
  llvm::Error launchBody();
  /// Waits for the run and adds its profile; fails it with what a kernel
  /// reported.
  llvm::Error finishRun();
  /// Sets the report word to "nothing reported".
  llvm::Error clearRunError();
  /// Enqueues the copy of input \p K's bytes into the arena: straight
  /// from page-locked caller memory; else through the pinned staging
  /// buffer in chunks, each chunk's transfer overlapping the staging of
  /// the next; else (no staging buffers) from pageable memory.
  llvm::Error copyInput(size_t K, llvm::ArrayRef<uint8_t> Bytes);
};

} // namespace cuda
} // namespace strider

ProgramImpl::~ProgramImpl() {
  // Teardown errors have no one to go to; the device may be gone.
  if (Exec)
    (void)cudaGraphExecDestroy(Exec);
  if (ProfiledExec)
    (void)cudaGraphExecDestroy(ProfiledExec);
  for (cudaEvent_t E : Events)
    (void)cudaEventDestroy(E);
  for (cudaEvent_t E : {ReplayBegin, ReplayEnd})
    if (E)
      (void)cudaEventDestroy(E);
  for (cudaEvent_t E : CopyEvents)
    (void)cudaEventDestroy(E);
  Convs.clear();
  Gemms.clear();
  Libs.reset();
  for (uint8_t *P : Constants)
    if (P)
      (void)cudaFree(P);
  for (uint8_t *P : PinnedIn)
    (void)cudaFreeHost(P);
  for (uint8_t *P : PinnedOut)
    (void)cudaFreeHost(P);
  if (HostError)
    (void)cudaFreeHost(HostError);
  if (DeviceError)
    (void)cudaFree(DeviceError);
  if (Workspace)
    (void)cudaFree(Workspace);
  if (Arena)
    (void)cudaFree(Arena);
  if (Stream)
    (void)cudaStreamDestroy(Stream);
}

void *ProgramImpl::ptr(const Arg &A) const {
  if (A.Buffer < 0)
    return nullptr;
  const size_t B = size_t(A.Buffer);
  uint8_t *Base =
      plan().Buffers[B].IsConstant ? Constants[B] : Arena + plan().Offsets[B];
  return Base + A.Offset;
}

LibraryStatus ProgramImpl::launch(size_t I) {
  const PlanStep &S = plan().Steps[I];
  auto A = [&](size_t K) { return ptr(S.Args[K]); };
  auto Kernel = [](cudaError_t Code) { return LibraryStatus{Code, nullptr}; };
  LibraryStatus Status;
  if (isKernelStep(S))
    Status = Kernel(launchKernelStep(
        getDeviceLaunchers(), S, [&](size_t K) { return A(K); }, DeviceError,
        Stream));
  else if (std::holds_alternative<ConvStep>(S.Params))
    Status = Convs[I]->run(A(0), A(1), A(2), Workspace, Stream);
  else
    Status = Gemms[I]->run(A(0), A(1), A(2), Workspace, Stream);
  if (Status.Code != cudaSuccess || !Remainders[I])
    return Status;
  // The library step's epilogue, in place on its result.
  const Remainder &R = *Remainders[I];
  void *Y = A(2);
  return Kernel(launchEpilogue(
      R.Params, Y, nullptr, R.Bias ? static_cast<const float *>(A(3)) : nullptr,
      R.Residual ? A(1) : nullptr, Y, Stream));
}

llvm::Error ProgramImpl::launchStep(size_t I) {
  const LibraryStatus Status = launch(I);
  if (Status.Code == cudaSuccess)
    return llvm::Error::success();
  const StepInfo &Info = plan().Steps[I].Info;
  std::string What = "step '" + Info.Nodes + "' (" + Info.Kernel + ")";
  if (Status.Detail) {
    What += std::string(": ") + Status.Detail;
    // cuDNN keeps a longer account of its last failure (which parameter).
    if (Libs && std::holds_alternative<ConvStep>(plan().Steps[I].Params)) {
      std::string Last = Libs->getLastCudnnError();
      if (!Last.empty())
        What += " (" + Last + ")";
    }
  }
  return cudaFailure(Status.Code, What);
}

llvm::Error ProgramImpl::launchAll() {
  for (size_t I = 0; I < plan().Steps.size(); ++I)
    if (llvm::Error E = launchStep(I))
      return E;
  return llvm::Error::success();
}

/// The epilogue kernel's parameters for what a library left of \p Rest
/// on a result of \p Count elements.
static EpilogueParams makeRemainder(const EpilogueSpec &Rest, int64_t Count,
                                    int64_t Channels, int64_t ChannelStride,
                                    DType T) {
  EpilogueParams E;
  E.Count = Count;
  E.Channels = Channels;
  E.ChannelStride = ChannelStride;
  E.Act = Rest.Act;
  E.XType = E.ResidualType = E.YType = T;
  return E;
}

llvm::Error ProgramImpl::load() {
  const PlanImpl &P = plan();
  STRIDER_CUDA_TRY(cudaSetDevice(Opts.Device), "cudaSetDevice");
  auto Name = getDeviceName(Opts.Device);
  if (!Name)
    return Name.takeError();
  DeviceName = std::move(*Name);
  STRIDER_CUDA_TRY(cudaStreamCreateWithFlags(&Stream, cudaStreamNonBlocking),
                   "cudaStreamCreate");
  if (P.ArenaBytes)
    STRIDER_CUDA_TRY(
        cudaMalloc(reinterpret_cast<void **>(&Arena), size_t(P.ArenaBytes)),
        "cannot allocate the " + llvm::Twine(P.ArenaBytes) +
            "-byte activation arena");
  Constants.assign(P.Buffers.size(), nullptr);
  for (size_t B = 0; B < P.Buffers.size(); ++B) {
    const PlanBuffer &PB = P.Buffers[B];
    if (!PB.IsConstant)
      continue;
    STRIDER_CUDA_TRY(cudaMalloc(reinterpret_cast<void **>(&Constants[B]),
                                std::max<size_t>(size_t(PB.Bytes), 1)),
                     "cudaMalloc (constants)");
    if (PB.Bytes)
      STRIDER_CUDA_TRY(cudaMemcpy(Constants[B], PB.Data->data(),
                                  size_t(PB.Bytes), cudaMemcpyHostToDevice),
                       "uploading constants");
  }

  // Library runners and the epilogues they leave.
  LibrarySet Needed{false, false};
  for (const PlanStep &S : P.Steps) {
    Needed.Cudnn |= std::holds_alternative<ConvStep>(S.Params);
    Needed.CublasLt |= std::holds_alternative<GemmStep>(S.Params);
  }
  std::map<std::string, std::shared_ptr<GemmRunner>> SharedGemms;
  Convs.resize(P.Steps.size());
  Gemms.resize(P.Steps.size());
  Remainders.resize(P.Steps.size());
  for (size_t I = 0; I < P.Steps.size(); ++I) {
    const PlanStep &S = P.Steps[I];
    const ConvStep *C = std::get_if<ConvStep>(&S.Params);
    const GemmStep *G = std::get_if<GemmStep>(&S.Params);
    if (!C && !G)
      continue;
    if (!Libs) {
      auto L = Libraries::create(Stream, Needed);
      if (!L)
        return L.takeError();
      Libs = std::move(*L);
    }
    EpilogueSpec Wanted, Fused;
    size_t Work = 0;
    int64_t Count = 0, Channels = 1, ChannelStride = 1;
    DType T;
    if (C) {
      LibraryAlgorithm Chosen;
      Chosen.Key = getConvKey(C->Desc);
      auto It = Opts.Algorithms.find(Chosen.Key);
      std::string Algo =
          It == Opts.Algorithms.end() ? std::string() : It->second;
      if (Algo.empty() && Opts.FindAlgorithms) {
        auto Found = findConvAlgorithms(*Libs, C->Desc);
        if (!Found)
          return Found.takeError();
        Algo = Found->front().Algo;
        Chosen.FoundNs = Found->front().Nanoseconds;
      }
      auto R = ConvRunner::create(
          *Libs, C->Desc, C->Weights->data(),
          C->Bias && !C->Bias->empty() ? C->Bias->data() : nullptr, Algo);
      if (!R)
        return R.takeError();
      Convs[I] = std::move(*R);
      Chosen.Algo = Convs[I]->getAlgo();
      Chosen.WorkspaceBytes = Convs[I]->getWorkspaceBytes();
      ConvAlgorithms.push_back(std::move(Chosen));
      Wanted = C->Desc.Epilogue;
      Fused = Convs[I]->getFused();
      Work = Convs[I]->getWorkspaceBytes();
      int64_t Pixels = 1;
      for (int D = 0; D < C->Desc.Spatial; ++D)
        Pixels *= C->Desc.Out[D];
      Count = C->Desc.N * C->Desc.K * Pixels;
      Channels = C->Desc.K;
      ChannelStride = C->Desc.YChannelsLast ? 1 : Pixels;
      T = C->Desc.Type;
    } else {
      const std::string Key = getGemmKey(G->Desc);
      const bool OwnsData = G->B || (G->Bias && !G->Bias->empty());
      // The key leaves out alpha, which the runner holds too.
      uint32_t AlphaBits;
      std::memcpy(&AlphaBits, &G->Desc.Alpha, sizeof(AlphaBits));
      const std::string ShareKey = Key + " alpha=" + std::to_string(AlphaBits);
      auto Shared = OwnsData ? SharedGemms.end() : SharedGemms.find(ShareKey);
      if (Shared != SharedGemms.end()) {
        Gemms[I] = Shared->second;
      } else {
        auto It = Opts.Algorithms.find(Key);
        auto R = GemmRunner::create(
            *Libs, G->Desc, G->B ? G->B->data() : nullptr,
            G->Bias && !G->Bias->empty() ? G->Bias->data() : nullptr,
            It == Opts.Algorithms.end() ? std::string() : It->second);
        if (!R)
          return R.takeError();
        Gemms[I] = std::move(*R);
        if (!OwnsData)
          SharedGemms.emplace(ShareKey, Gemms[I]);
      }
      Wanted = G->Desc.Epilogue;
      Fused = Gemms[I]->getFused();
      Work = Gemms[I]->getWorkspaceBytes();
      Count = G->Desc.Batch * G->Desc.M * G->Desc.N;
      Channels = G->Desc.N;
      T = G->Desc.Type;
    }
    auto Rest = getRemainder(Wanted, Fused, S.Info.Nodes);
    if (!Rest)
      return Rest.takeError();
    if (Rest->Bias || Rest->Residual || !Rest->Act.isNone())
      Remainders[I] = ProgramImpl::Remainder{
          makeRemainder(*Rest, Count, Rest->Bias ? Channels : 1, ChannelStride,
                        T),
          Rest->Bias, Rest->Residual};
    WorkspaceBytes = std::max(WorkspaceBytes, Work);
  }
  if (WorkspaceBytes)
    STRIDER_CUDA_TRY(cudaMalloc(&Workspace, WorkspaceBytes),
                     "cannot allocate the " + llvm::Twine(WorkspaceBytes) +
                         "-byte library workspace");

  if (Opts.Pinned) {
    for (const Binding &B : P.Inputs) {
      uint8_t *H = nullptr;
      STRIDER_CUDA_TRY(
          cudaMallocHost(
              reinterpret_cast<void **>(&H),
              std::max<size_t>(size_t(P.Buffers[size_t(B.Buffer)].Bytes), 1)),
          "cudaMallocHost (inputs)");
      PinnedIn.push_back(H);
    }
    for (const Binding &B : P.Outputs) {
      uint8_t *H = nullptr;
      STRIDER_CUDA_TRY(
          cudaMallocHost(
              reinterpret_cast<void **>(&H),
              std::max<size_t>(size_t(P.Buffers[size_t(B.Buffer)].Bytes), 1)),
          "cudaMallocHost (outputs)");
      PinnedOut.push_back(H);
    }
  }

  // Steps that may report: gathers and scatters by run-time indices, and
  // recurrences reading sequence_lens.
  const bool Reports = llvm::any_of(P.Steps, [](const PlanStep &S) {
    if (const auto *T = std::get_if<TypedParams>(&S.Params))
      return T->Op == TypedOp::Gather || T->Op == TypedOp::Scatter ||
             T->Op == TypedOp::GatherND || T->Op == TypedOp::ScatterND;
    if (std::holds_alternative<RecurrenceLoopParams>(S.Params))
      return S.Args[11].Buffer >= 0;
    return (std::holds_alternative<LstmCellParams>(S.Params) ||
            std::holds_alternative<GruCellParams>(S.Params)) &&
           S.Args.size() > 6 && S.Args[6].Buffer >= 0;
  });
  if (Reports) {
    STRIDER_CUDA_TRY(
        cudaMalloc(reinterpret_cast<void **>(&DeviceError), sizeof(RunError)),
        "cudaMalloc (the run's error report)");
    STRIDER_CUDA_TRY(
        cudaMallocHost(reinterpret_cast<void **>(&HostError), sizeof(RunError)),
        "cudaMallocHost (the run's error report)");
    if (llvm::Error E = clearRunError())
      return E;
  }

  // The uploads above (constants, and the runners' weights and biases)
  // copy pageable memory on the legacy default stream, which may still be
  // moving data when cudaMemcpy returns; the program's non-blocking stream
  // does not wait for it. Everything is on the device before the first
  // step.
  STRIDER_CUDA_TRY(cudaDeviceSynchronize(), "finishing the uploads");

  if (Opts.UseGraph && !P.Steps.empty()) {
    // One run outside the capture first, on a zeroed arena (no index read
    // from it is out of bounds): what cuDNN and cuBLASLt set up on first
    // use (plans, kernels loaded lazily) is done here rather than inside
    // the capture, where allocating fails, and a failing step says so by
    // name.
    if (Arena)
      STRIDER_CUDA_TRY(cudaMemsetAsync(Arena, 0, size_t(P.ArenaBytes), Stream),
                       "clearing the activation arena");
    if (llvm::Error E = launchAll())
      return E;
    STRIDER_CUDA_TRY(cudaStreamSynchronize(Stream),
                     "the run before the graph capture");
    if (DeviceError) // Indices read from a zeroed arena may still be bad.
      if (llvm::Error E = clearRunError())
        return E;
    cudaGraph_t Graph = nullptr;
    STRIDER_CUDA_TRY(
        cudaStreamBeginCapture(Stream, cudaStreamCaptureModeThreadLocal),
        "cudaStreamBeginCapture");
    llvm::Error Launched = launchAll();
    cudaError_t End = cudaStreamEndCapture(Stream, &Graph);
    if (Launched) {
      if (Graph)
        (void)cudaGraphDestroy(Graph);
      return Launched;
    }
    STRIDER_CUDA_TRY(End, "cudaStreamEndCapture");
    cudaError_t Inst = cudaGraphInstantiate(&Exec, Graph, 0);
    (void)cudaGraphDestroy(Graph);
    STRIDER_CUDA_TRY(Inst, "cudaGraphInstantiate");
  }
  return llvm::Error::success();
}

bool ProgramImpl::captureProfiledGraph() {
  const PlanImpl &P = plan();
  if (cudaStreamBeginCapture(Stream, cudaStreamCaptureModeThreadLocal) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  bool Ok = cudaEventRecordWithFlags(Events[0], Stream,
                                     cudaEventRecordExternal) == cudaSuccess;
  for (size_t S = 0; Ok && S < P.Steps.size(); ++S) {
    if (llvm::Error E = launchStep(S)) {
      llvm::consumeError(std::move(E));
      Ok = false;
      break;
    }
    Ok = cudaEventRecordWithFlags(Events[S + 1], Stream,
                                  cudaEventRecordExternal) == cudaSuccess;
  }
  cudaGraph_t Graph = nullptr;
  Ok &= cudaStreamEndCapture(Stream, &Graph) == cudaSuccess && Graph;
  Ok = Ok && cudaGraphInstantiate(&ProfiledExec, Graph, 0) == cudaSuccess;
  if (Graph)
    (void)cudaGraphDestroy(Graph);
  if (!Ok) {
    ProfiledExec = nullptr;
    (void)cudaGetLastError();
  }
  return Ok;
}

llvm::Error ProgramImpl::launchBody() {
  const PlanImpl &P = plan();
  if (Profile) {
    // An event after each step: per-step times, from a replay of the
    // steps captured with their events where that capture works, else
    // step by step (the host's time to enqueue each step is then counted
    // where the device waits for it).
    if (Events.size() != P.Steps.size() + 1) {
      Events.resize(P.Steps.size() + 1, nullptr);
      for (cudaEvent_t &E : Events)
        STRIDER_CUDA_TRY(cudaEventCreate(&E), "cudaEventCreate");
    }
    if (Exec && !ProfiledGraphTried) {
      ProfiledGraphTried = true;
      captureProfiledGraph();
    }
    if (ProfiledExec) {
      STRIDER_CUDA_TRY(cudaGraphLaunch(ProfiledExec, Stream),
                       "cudaGraphLaunch (profiled)");
      return llvm::Error::success();
    }
    STRIDER_CUDA_TRY(cudaEventRecord(Events[0], Stream), "cudaEventRecord");
    for (size_t S = 0; S < P.Steps.size(); ++S) {
      if (llvm::Error E = launchStep(S))
        return E;
      STRIDER_CUDA_TRY(cudaEventRecord(Events[S + 1], Stream),
                       "cudaEventRecord");
    }
  } else if (Exec) {
    STRIDER_CUDA_TRY(cudaGraphLaunch(Exec, Stream), "cudaGraphLaunch");
  } else if (llvm::Error E = launchAll()) {
    return E;
  }
  return llvm::Error::success();
}

llvm::Error ProgramImpl::clearRunError() {
  *HostError = RunError();
  STRIDER_CUDA_TRY(cudaMemcpyAsync(DeviceError, HostError, sizeof(RunError),
                                   cudaMemcpyHostToDevice, Stream),
                   "clearing the run's error report");
  STRIDER_CUDA_TRY(cudaStreamSynchronize(Stream),
                   "clearing the run's error report");
  return llvm::Error::success();
}

/// Whether \p Ptr lies in page-locked host memory (cudaMallocHost, or
/// registered with cudaHostRegister) that the device can copy from.
static bool isPageLocked(const void *Ptr) {
  cudaPointerAttributes A;
  if (cudaPointerGetAttributes(&A, Ptr) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return A.type == cudaMemoryTypeHost;
}

llvm::Error ProgramImpl::copyInput(size_t K, llvm::ArrayRef<uint8_t> Bytes) {
  const Binding &B = plan().Inputs[K];
  uint8_t *Dst = static_cast<uint8_t *>(ptr({B.Buffer, 0}));
  if (Bytes.empty())
    return llvm::Error::success();
  const std::string What = "copying input '" + B.Name + "' to the device";
  if (PinnedIn.empty() || isPageLocked(Bytes.data())) {
    STRIDER_CUDA_TRY(cudaMemcpyAsync(Dst, Bytes.data(), Bytes.size(),
                                     cudaMemcpyHostToDevice, Stream),
                     What);
    return llvm::Error::success();
  }
  // Pageable memory: staged. The staging buffer belongs to this input
  // alone and the previous run has finished, so every chunk has a place
  // of its own.
  for (size_t Off = 0; Off < Bytes.size(); Off += CopyChunk) {
    const size_t N = std::min(CopyChunk, Bytes.size() - Off);
    std::memcpy(PinnedIn[K] + Off, Bytes.data() + Off, N);
    STRIDER_CUDA_TRY(cudaMemcpyAsync(Dst + Off, PinnedIn[K] + Off, N,
                                     cudaMemcpyHostToDevice, Stream),
                     What);
  }
  return llvm::Error::success();
}

llvm::Error ProgramImpl::finishRun() {
  const PlanImpl &P = plan();
  if (DeviceError)
    STRIDER_CUDA_TRY(cudaMemcpyAsync(HostError, DeviceError, sizeof(RunError),
                                     cudaMemcpyDeviceToHost, Stream),
                     "reading the run's error report");
  STRIDER_CUDA_TRY(cudaStreamSynchronize(Stream), "running the program");
  if (DeviceError && HostError->Step != -1) {
    const RunError R = *HostError;
    if (llvm::Error E = clearRunError())
      return E;
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   describeRunError(P, R));
  }
  if (Profile) {
    for (size_t S = 0; S < P.Steps.size(); ++S) {
      float Ms = 0;
      STRIDER_CUDA_TRY(cudaEventElapsedTime(&Ms, Events[S], Events[S + 1]),
                       "cudaEventElapsedTime");
      StepSeconds[S] += double(Ms) * 1e-3;
    }
    ++ProfiledRuns;
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Program
//===----------------------------------------------------------------------===//

Program::Program(std::unique_ptr<ProgramImpl> Impl) : Impl(std::move(Impl)) {}
Program::~Program() = default;

llvm::Expected<std::unique_ptr<Program>>
Program::load(std::unique_ptr<Plan> P, const CUDAOptions &Opts) {
  if (llvm::Error E = checkDevice(Opts.Device))
    return E;
  auto I = std::make_unique<ProgramImpl>();
  I->ThePlan = std::move(P);
  I->Opts = Opts;
  if (llvm::Error E = I->load())
    return E;
  return std::unique_ptr<Program>(new Program(std::move(I)));
}

llvm::ArrayRef<StepInfo> Program::getSteps() const {
  return Impl->ThePlan->getSteps();
}
void Program::setProfiling(bool On) {
  Impl->Profile = On;
  Impl->StepSeconds.assign(Impl->plan().Steps.size(), 0.0);
  Impl->ProfiledRuns = 0;
}
llvm::Expected<double> Program::timeReplays(unsigned Reps) {
  ProgramImpl &I = *Impl;
  STRIDER_CUDA_TRY(cudaSetDevice(I.Opts.Device), "cudaSetDevice");
  for (cudaEvent_t *E : {&I.ReplayBegin, &I.ReplayEnd})
    if (!*E)
      STRIDER_CUDA_TRY(cudaEventCreate(E), "cudaEventCreate");
  STRIDER_CUDA_TRY(cudaEventRecord(I.ReplayBegin, I.Stream), "cudaEventRecord");
  const unsigned N = std::max(Reps, 1u);
  for (unsigned R = 0; R < N; ++R) {
    if (I.Exec)
      STRIDER_CUDA_TRY(cudaGraphLaunch(I.Exec, I.Stream), "cudaGraphLaunch");
    else if (llvm::Error E = I.launchAll())
      return E;
  }
  STRIDER_CUDA_TRY(cudaEventRecord(I.ReplayEnd, I.Stream), "cudaEventRecord");
  // Not a profiled run: the per-step events were not recorded.
  const bool Profiling = I.Profile;
  I.Profile = false;
  llvm::Error Finished = I.finishRun();
  I.Profile = Profiling;
  if (Finished)
    return Finished;
  float Ms = 0;
  STRIDER_CUDA_TRY(cudaEventElapsedTime(&Ms, I.ReplayBegin, I.ReplayEnd),
                   "cudaEventElapsedTime");
  return double(Ms) * 1e6 / double(N);
}
llvm::ArrayRef<double> Program::getStepSeconds() const {
  return Impl->StepSeconds;
}
unsigned Program::getProfiledRuns() const { return Impl->ProfiledRuns; }
int64_t Program::getArenaBytes() const { return Impl->plan().ArenaBytes; }
int64_t Program::getConstantBytes() const {
  return Impl->ThePlan->getConstantBytes();
}
llvm::ArrayRef<LibraryAlgorithm> Program::getConvAlgorithms() const {
  return Impl->ConvAlgorithms;
}
std::string Program::getDeviceName() const { return Impl->DeviceName; }

std::vector<std::string> Program::getLibraries() const {
  return Impl->Libs ? Impl->Libs->describe() : std::vector<std::string>();
}

llvm::Expected<TensorMap> Program::run(const TensorMap &Inputs) {
  TensorMap Out;
  if (llvm::Error E = runTo(Inputs, Out, /*Given=*/false))
    return E;
  return Out;
}

llvm::Error Program::runInto(const TensorMap &Inputs, TensorMap &Outputs) {
  return runTo(Inputs, Outputs, /*Given=*/true);
}

llvm::Error Program::runTo(const TensorMap &Inputs, TensorMap &Outputs,
                           bool Given) {
  ProgramImpl &I = *Impl;
  const PlanImpl &P = I.plan();
  if (Given)
    for (const Binding &B : P.Outputs)
      if (llvm::Error E =
              runtime::checkOutput(Outputs, B.Name, B.Type.getElementType(),
                                   B.Type.getStaticShape()))
        return E;
  // The caller's tensors are read in place when they are in the binding's
  // layout; defaults and relayouts are made here, and must outlive the
  // asynchronous copies.
  std::vector<Tensor> Made;
  auto Bound = codegen::bindInputs(P.Inputs, Inputs, Made);
  if (!Bound)
    return Bound.takeError();
  STRIDER_CUDA_TRY(cudaSetDevice(I.Opts.Device), "cudaSetDevice");
  for (size_t K = 0; K < P.Inputs.size(); ++K) {
    if (llvm::Error E = I.copyInput(K, (*Bound)[K]->getBytes()))
      return E;
  }
  if (llvm::Error E = I.launchBody())
    return E;
  // Outputs come back through the pinned buffers in chunks: the host
  // copies a chunk out while the next one is in flight.
  struct Chunk {
    size_t Output, Offset, Bytes;
  };
  std::vector<Chunk> Chunks;
  // Each output lands in the caller's tensor when it was given in the
  // binding's layout, else in a tensor of the binding's layout.
  std::vector<Tensor> Results(P.Outputs.size());
  std::vector<Tensor *> Dst(P.Outputs.size());
  for (size_t K = 0; K < P.Outputs.size(); ++K) {
    const Binding &B = P.Outputs[K];
    Tensor *Caller = Given ? &Outputs.find(B.Name)->second : nullptr;
    if (Caller && Caller->getLayout() == B.Type.getLayout()) {
      Dst[K] = Caller;
    } else {
      Results[K] = Tensor(B.Type.getElementType(), B.Type.getStaticShape(),
                          B.Type.getLayout());
      Dst[K] = &Results[K];
    }
    llvm::MutableArrayRef<uint8_t> Bytes = Dst[K]->getMutableBytes();
    if (Bytes.empty())
      continue;
    const uint8_t *Src = static_cast<const uint8_t *>(I.ptr({B.Buffer, 0}));
    const std::string What = "copying output '" + B.Name + "' from the device";
    if (I.PinnedOut.empty()) {
      STRIDER_CUDA_TRY(cudaMemcpyAsync(Bytes.data(), Src, Bytes.size(),
                                       cudaMemcpyDeviceToHost, I.Stream),
                       What);
      continue;
    }
    for (size_t Off = 0; Off < Bytes.size(); Off += ProgramImpl::CopyChunk) {
      const size_t N = std::min(ProgramImpl::CopyChunk, Bytes.size() - Off);
      STRIDER_CUDA_TRY(cudaMemcpyAsync(I.PinnedOut[K] + Off, Src + Off, N,
                                       cudaMemcpyDeviceToHost, I.Stream),
                       What);
      if (Chunks.size() == I.CopyEvents.size()) {
        cudaEvent_t E = nullptr;
        STRIDER_CUDA_TRY(cudaEventCreateWithFlags(&E, cudaEventDisableTiming),
                         "cudaEventCreateWithFlags");
        I.CopyEvents.push_back(E);
      }
      STRIDER_CUDA_TRY(cudaEventRecord(I.CopyEvents[Chunks.size()], I.Stream),
                       "cudaEventRecord");
      Chunks.push_back({K, Off, N});
    }
  }
  for (size_t C = 0; C < Chunks.size(); ++C) {
    const Chunk &Ch = Chunks[C];
    // A failing run is reported by finishRun below, which the same error
    // fails again.
    if (cudaEventSynchronize(I.CopyEvents[C]) != cudaSuccess)
      break;
    std::memcpy(Dst[Ch.Output]->getMutableBytes().data() + Ch.Offset,
                I.PinnedOut[Ch.Output] + Ch.Offset, Ch.Bytes);
  }
  if (llvm::Error E = I.finishRun())
    return E;
  for (size_t K = 0; K < P.Outputs.size(); ++K) {
    if (!Given)
      Outputs[P.Outputs[K].Name] = std::move(Results[K]);
    else if (Dst[K] == &Results[K])
      runtime::copyTensor(Results[K], Outputs.find(P.Outputs[K].Name)->second);
  }
  return llvm::Error::success();
}

/// Checks caller tensor \p T against binding \p B and returns its strides
/// (dense row-major when it gave none).
static llvm::Expected<std::vector<int64_t>>
checkDeviceTensor(const runtime::DeviceTensor &T, const Binding &B,
                  const char *Kind) {
  auto Fail = [&](const llvm::Twine &Msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   llvm::Twine(Kind) + " '" + B.Name + "' " +
                                       Msg);
  };
  const TensorType Logical =
      TensorType::get(B.Type.getElementType(), B.Type.getStaticShape());
  if (T.Type != B.Type.getElementType() ||
      llvm::makeArrayRef(T.Shape) !=
          llvm::makeArrayRef(B.Type.getStaticShape()))
    return Fail("has type " +
                (T.Type == ElementType::Unknown
                     ? std::string("<unknown>")
                     : TensorType::get(T.Type, T.Shape).str()) +
                ", expected " + Logical.str());
  const size_t Rank = T.Shape.size();
  if (Rank > size_t(MaxRank))
    return Fail("has rank " + llvm::Twine(Rank) + " (the copy kernels take " +
                llvm::Twine(MaxRank) + ")");
  std::vector<int64_t> Strides = T.Strides;
  if (Strides.empty()) {
    Strides.assign(Rank, 1);
    for (size_t D = Rank; D-- > 1;)
      Strides[D - 1] = Strides[D] * T.Shape[D];
  }
  if (Strides.size() != Rank ||
      llvm::any_of(Strides, [](int64_t S) { return S < 0; }))
    return Fail("has " + llvm::Twine(Strides.size()) + " strides for rank " +
                llvm::Twine(Rank) + " (one non-negative stride per dim)");
  if (!T.Data && llvm::none_of(T.Shape, [](int64_t D) { return D == 0; }))
    return Fail("has no data");
  return Strides;
}

llvm::Error Program::runOnDevice(const runtime::DeviceTensorMap &Inputs,
                                 const runtime::DeviceTensorMap &Outputs) {
  ProgramImpl &I = *Impl;
  const PlanImpl &P = I.plan();
  auto Unknown = [](const runtime::DeviceTensorMap &M,
                    llvm::ArrayRef<Binding> Bs,
                    const char *Kind) -> llvm::Error {
    for (const auto &KV : M)
      if (llvm::none_of(Bs,
                        [&](const Binding &B) { return B.Name == KV.first; }))
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       llvm::Twine("unknown ") + Kind + " '" +
                                           KV.first + "'");
    return llvm::Error::success();
  };
  if (llvm::Error E = Unknown(Inputs, P.Inputs, "input"))
    return E;
  if (llvm::Error E = Unknown(Outputs, P.Outputs, "output"))
    return E;
  // Everything is checked before anything is enqueued.
  struct Copy {
    CopyPlan Plan;
    /// Integer and bool tensors: a typed cast to their own type.
    llvm::Optional<TypedParams> Typed;
    const void *From;
    void *To;
  };
  // A copy of an integer or bool binding: from strides From into a dense
  // row-major tensor (the binding in its identity layout, or the caller's
  // dense memory).
  auto TypedCopy =
      [](const Binding &B, llvm::ArrayRef<int64_t> From,
         llvm::ArrayRef<int64_t> To) -> llvm::Optional<TypedParams> {
    auto Shape = B.Type.getStaticShape();
    llvm::SmallVector<int64_t, 6> Dense(Shape.size(), 1);
    for (size_t D = Shape.size(); D-- > 1;)
      Dense[D - 1] = Dense[D] * Shape[D];
    if (!B.Type.getLayout().isIdentity() || Shape.size() > size_t(MaxRank) ||
        llvm::makeArrayRef(To) != llvm::makeArrayRef(Dense))
      return llvm::None;
    TypedParams T;
    T.Op = TypedOp::Cast;
    T.Y = T.In[0] = *getScalarType(B.Type.getElementType());
    T.Rank = int(Shape.size());
    for (size_t D = 0; D < Shape.size(); ++D) {
      T.Shape[D] = Shape[D];
      T.Strides[0][D] = From[D];
    }
    return T;
  };
  auto Launch = [&](const Copy &C) {
    return C.Typed ? launchTyped(*C.Typed, C.From, nullptr, nullptr, C.To,
                                 nullptr, nullptr, I.Stream)
                   : launchCopy(C.Plan, C.From, C.To, I.Stream);
  };
  auto NotDense = [](const Binding &B, const char *Kind) {
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::Twine(Kind) + " '" + B.Name + "' of type " +
            TensorType::get(B.Type.getElementType(), B.Type.getStaticShape())
                .str() +
            " must be dense and row-major (integer and bool tensors)");
  };
  std::vector<Copy> In, Out;
  std::vector<Tensor> Defaults; // Host data, alive until the run ends.
  Defaults.reserve(P.Inputs.size());
  for (const Binding &B : P.Inputs) {
    auto DT = getDType(B.Type.getElementType());
    auto It = Inputs.find(B.Name);
    if (It == Inputs.end()) {
      if (!B.Default)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "missing input '" + B.Name + "' of type " +
                TensorType::get(B.Type.getElementType(),
                                B.Type.getStaticShape())
                    .str());
      Defaults.push_back(
          Tensor::fromData(*B.Default).withLayout(B.Type.getLayout()));
      continue;
    }
    auto Strides = checkDeviceTensor(It->second, B, "input");
    if (!Strides)
      return Strides.takeError();
    if (!DT) {
      auto T = TypedCopy(B, *Strides, codegen::getStrides(B.Type));
      if (!T)
        return NotDense(B, "input");
      In.push_back({CopyPlan(), *T, It->second.Data, I.ptr({B.Buffer, 0})});
      continue;
    }
    In.push_back({planCopy(makeCopy(B.Type.getStaticShape(), *Strides,
                                    codegen::getStrides(B.Type), *DT, *DT)),
                  llvm::None, It->second.Data, I.ptr({B.Buffer, 0})});
  }
  for (const Binding &B : P.Outputs) {
    auto It = Outputs.find(B.Name);
    if (It == Outputs.end())
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "missing output '" + B.Name + "'");
    auto Strides = checkDeviceTensor(It->second, B, "output");
    if (!Strides)
      return Strides.takeError();
    auto DT = getDType(B.Type.getElementType());
    if (!DT) {
      auto T = TypedCopy(B, codegen::getStrides(B.Type), *Strides);
      if (!T)
        return NotDense(B, "output");
      Out.push_back({CopyPlan(), *T, I.ptr({B.Buffer, 0}), It->second.Data});
      continue;
    }
    Out.push_back(
        {planCopy(makeCopy(B.Type.getStaticShape(), codegen::getStrides(B.Type),
                           *Strides, *DT, *DT)),
         llvm::None, I.ptr({B.Buffer, 0}), It->second.Data});
  }

  STRIDER_CUDA_TRY(cudaSetDevice(I.Opts.Device), "cudaSetDevice");
  size_t D = 0;
  for (const Binding &B : P.Inputs) {
    if (Inputs.count(B.Name))
      continue;
    llvm::ArrayRef<uint8_t> Bytes = Defaults[D++].getBytes();
    if (!Bytes.empty())
      STRIDER_CUDA_TRY(cudaMemcpyAsync(I.ptr({B.Buffer, 0}), Bytes.data(),
                                       Bytes.size(), cudaMemcpyHostToDevice,
                                       I.Stream),
                       "copying the default of input '" + B.Name + "'");
  }
  for (const Copy &C : In)
    STRIDER_CUDA_TRY(Launch(C), "copying a device input into the arena");
  if (llvm::Error E = I.launchBody())
    return E;
  for (const Copy &C : Out)
    STRIDER_CUDA_TRY(Launch(C),
                     "copying an output to the caller's device memory");
  return I.finishRun();
}

llvm::Expected<std::unique_ptr<Program>>
cuda::compileForCUDA(const Graph &G, const CUDAOptions &Opts) {
  // The device first: a machine without one gets that message, not a
  // planning error.
  if (llvm::Error E = checkDevice(Opts.Device))
    return E;
  auto P = planForCUDA(G, Opts);
  if (!P)
    return P.takeError();
  return Program::load(std::move(*P), Opts);
}

PinnedHostMemory::PinnedHostMemory(void *Ptr) : Ptr(Ptr) {}
PinnedHostMemory::~PinnedHostMemory() {
  if (Ptr)
    (void)cudaHostUnregister(Ptr);
}

llvm::Expected<std::unique_ptr<PinnedHostMemory>>
PinnedHostMemory::pin(void *Ptr, size_t Bytes) {
  if (!Ptr || !Bytes)
    return std::unique_ptr<PinnedHostMemory>(new PinnedHostMemory(nullptr));
  STRIDER_CUDA_TRY(cudaHostRegister(Ptr, Bytes, cudaHostRegisterDefault),
                   "cudaHostRegister (" + llvm::Twine(uint64_t(Bytes)) +
                       " bytes)");
  return std::unique_ptr<PinnedHostMemory>(new PinnedHostMemory(Ptr));
}
