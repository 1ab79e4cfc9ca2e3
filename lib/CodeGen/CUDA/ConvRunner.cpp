//===- ConvRunner.cpp - Convolutions through cuDNN ------------------------===//
//
// ConvRunner on cuDNN's legacy convolution API: descriptors built once from
// the ConvDesc (LibraryDescriptors.h), the filter converted and uploaded
// at load, an algorithm from a tuning file or cuDNN's heuristic, and run()
// as one cudnnConvolutionForward, cudnnConvolutionBiasActivationForward
// (bias, residual and ReLU fused) or cudnnConvolutionBackwardData
// (ConvTranspose) call. findConvAlgorithms takes the algorithms cuDNN's
// find can run and times each as a program runs it: captured in a CUDA
// graph of back-to-back calls and replayed.
//
//===----------------------------------------------------------------------===//

#include "LibrariesImpl.h"
#include "LibraryDescriptors.h"

#include "llvm/ADT/Optional.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <random>

using namespace strider;
using namespace strider::cuda;

#define STRIDER_DNN_TRY(Call, What)                                            \
  do {                                                                         \
    cudnnStatus_t Status_ = (Call);                                            \
    if (Status_ != CUDNN_STATUS_SUCCESS)                                       \
      return L.dnnError(Status_, What);                                        \
  } while (false)

namespace {

cudnnDataType_t getCudnnType(DType T) {
  switch (T) {
  case DType::F32:
    return CUDNN_DATA_FLOAT;
  case DType::F16:
    return CUDNN_DATA_HALF;
  case DType::BF16:
    return CUDNN_DATA_BFLOAT16;
  }
  return CUDNN_DATA_FLOAT;
}

/// The math type a conv's descriptor asks for: FMA only for FP32 (no TF32
/// tensor cores), tensor cores for TF32 and half storage.
cudnnMathType_t getRequestedMath(MathMode M) {
  return M == MathMode::FP32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH;
}

/// Whether an algorithm cuDNN reports under math type \p T keeps \p D's
/// precision: FP32 takes FMA kernels only; f32 data is never converted to
/// f16 (ALLOW_CONVERSION).
bool keepsPrecision(const ConvDesc &D, cudnnMathType_t T) {
  if (D.Math == MathMode::FP32)
    return T == CUDNN_FMA_MATH || T == CUDNN_DEFAULT_MATH;
  return D.Type != DType::F32 || T != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
}

/// The math type to run an algorithm reported under \p T with.
cudnnMathType_t getRunMath(const ConvDesc &D, cudnnMathType_t T) {
  return D.Math == MathMode::FP32 ? CUDNN_FMA_MATH : T;
}

int64_t getCount(const int *Dims, int Rank) {
  int64_t N = 1;
  for (int I = 0; I < Rank; ++I)
    N *= Dims[I];
  return N;
}

/// The cuDNN descriptors of one conv, destroyed with it.
class ConvDescriptors {
public:
  explicit ConvDescriptors(Libraries::Impl &L) : L(L) {}
  ConvDescriptors(const ConvDescriptors &) = delete;
  ConvDescriptors &operator=(const ConvDescriptors &) = delete;
  ~ConvDescriptors();

  /// Describes \p D as \p G says, asking for \p D's math type.
  llvm::Error init(const ConvDesc &D, const CudnnConvGeometry &G);
  llvm::Error setMath(cudnnMathType_t T) const {
    STRIDER_DNN_TRY(L.Dnn.cudnnSetConvolutionMathType(Conv, T),
                    "cudnnSetConvolutionMathType");
    return llvm::Error::success();
  }
  /// The workspace algorithm \p Algo needs; a failure when it cannot run
  /// the conv.
  cudnnStatus_t getWorkspace(bool Transposed, int Algo, size_t &Bytes) const;

  Libraries::Impl &L;
  cudnnTensorDescriptor_t X = nullptr, Y = nullptr, Bias = nullptr;
  cudnnFilterDescriptor_t W = nullptr;
  cudnnConvolutionDescriptor_t Conv = nullptr;
  cudnnActivationDescriptor_t Act = nullptr;
};

ConvDescriptors::~ConvDescriptors() {
  for (cudnnTensorDescriptor_t T : {X, Y, Bias})
    if (T)
      (void)L.Dnn.cudnnDestroyTensorDescriptor(T);
  if (W)
    (void)L.Dnn.cudnnDestroyFilterDescriptor(W);
  if (Conv)
    (void)L.Dnn.cudnnDestroyConvolutionDescriptor(Conv);
  if (Act)
    (void)L.Dnn.cudnnDestroyActivationDescriptor(Act);
}

llvm::Error ConvDescriptors::init(const ConvDesc &D,
                                  const CudnnConvGeometry &G) {
  const cudnnDataType_t T = getCudnnType(D.Type);
  auto Tensor = [&](cudnnTensorDescriptor_t &Desc,
                    const CudnnTensorDims &Dims) -> llvm::Error {
    STRIDER_DNN_TRY(L.Dnn.cudnnCreateTensorDescriptor(&Desc),
                    "cudnnCreateTensorDescriptor");
    STRIDER_DNN_TRY(L.Dnn.cudnnSetTensorNdDescriptor(Desc, T, Dims.Rank,
                                                     Dims.Dims, Dims.Strides),
                    "cudnnSetTensorNdDescriptor");
    return llvm::Error::success();
  };
  if (llvm::Error E = Tensor(X, G.X))
    return E;
  if (llvm::Error E = Tensor(Y, G.Y))
    return E;
  STRIDER_DNN_TRY(L.Dnn.cudnnCreateFilterDescriptor(&W),
                  "cudnnCreateFilterDescriptor");
  STRIDER_DNN_TRY(
      L.Dnn.cudnnSetFilterNdDescriptor(
          W, T, G.FilterChannelsLast ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
          G.Rank, G.Filter),
      "cudnnSetFilterNdDescriptor");
  STRIDER_DNN_TRY(L.Dnn.cudnnCreateConvolutionDescriptor(&Conv),
                  "cudnnCreateConvolutionDescriptor");
  // ONNX's Conv is a cross-correlation; ConvTranspose is its data
  // gradient. Accumulation is f32 for every storage type.
  STRIDER_DNN_TRY(L.Dnn.cudnnSetConvolutionNdDescriptor(
                      Conv, G.Rank - 2, G.Pad, G.Stride, G.Dilation,
                      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                  "cudnnSetConvolutionNdDescriptor");
  STRIDER_DNN_TRY(L.Dnn.cudnnSetConvolutionGroupCount(Conv, G.Groups),
                  "cudnnSetConvolutionGroupCount");
  return setMath(getRequestedMath(D.Math));
}

cudnnStatus_t ConvDescriptors::getWorkspace(bool Transposed, int Algo,
                                            size_t &Bytes) const {
  Bytes = 0;
  if (Transposed)
    return L.Dnn.cudnnGetConvolutionBackwardDataWorkspaceSize(
        L.DnnHandle, W, X, Conv, Y, cudnnConvolutionBwdDataAlgo_t(Algo),
        &Bytes);
  return L.Dnn.cudnnGetConvolutionForwardWorkspaceSize(
      L.DnnHandle, X, W, Conv, Y, cudnnConvolutionFwdAlgo_t(Algo), &Bytes);
}

/// One algorithm as cuDNN's heuristic or find reports it.
struct AlgoReport {
  int Algo = 0;
  cudnnStatus_t Status = CUDNN_STATUS_SUCCESS;
  cudnnMathType_t Math = CUDNN_DEFAULT_MATH;
  float Milliseconds = 0;
  size_t Memory = 0;
};

template <typename Perf>
std::vector<AlgoReport> toReports(const std::vector<Perf> &P, int Count) {
  std::vector<AlgoReport> R;
  for (int I = 0; I < Count && size_t(I) < P.size(); ++I)
    R.push_back({int(P[size_t(I)].algo), P[size_t(I)].status,
                 P[size_t(I)].mathType, P[size_t(I)].time,
                 P[size_t(I)].memory});
  return R;
}

/// cuDNN's heuristic's suggestions for the conv \p Ds describes, best
/// first.
llvm::Expected<std::vector<AlgoReport>>
getHeuristicReports(Libraries::Impl &L, const ConvDescriptors &Ds,
                    bool Transposed) {
  int Max = 0, Got = 0;
  if (!Transposed) {
    STRIDER_DNN_TRY(
        L.Dnn.cudnnGetConvolutionForwardAlgorithmMaxCount(L.DnnHandle, &Max),
        "cudnnGetConvolutionForwardAlgorithmMaxCount");
    std::vector<cudnnConvolutionFwdAlgoPerf_t> P(size_t(std::max(Max, 1)));
    STRIDER_DNN_TRY(L.Dnn.cudnnGetConvolutionForwardAlgorithm_v7(
                        L.DnnHandle, Ds.X, Ds.W, Ds.Conv, Ds.Y, int(P.size()),
                        &Got, P.data()),
                    "cudnnGetConvolutionForwardAlgorithm_v7");
    return toReports(P, Got);
  }
  STRIDER_DNN_TRY(
      L.Dnn.cudnnGetConvolutionBackwardDataAlgorithmMaxCount(L.DnnHandle, &Max),
      "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
  std::vector<cudnnConvolutionBwdDataAlgoPerf_t> P(size_t(std::max(Max, 1)));
  STRIDER_DNN_TRY(L.Dnn.cudnnGetConvolutionBackwardDataAlgorithm_v7(
                      L.DnnHandle, Ds.W, Ds.X, Ds.Conv, Ds.Y, int(P.size()),
                      &Got, P.data()),
                  "cudnnGetConvolutionBackwardDataAlgorithm_v7");
  return toReports(P, Got);
}

/// The algorithm a runner uses, with the math type and workspace it runs
/// under.
struct AlgoChoice {
  int Algo = 0;
  cudnnMathType_t Math = CUDNN_DEFAULT_MATH;
  size_t Workspace = 0;
};

/// Picks \p Tuned (>= 0) if it can run the conv \p Ds describes, else the
/// heuristic's first suggestion that can, within ConvWorkspaceLimit if any
/// does. None when nothing can. Leaves \p Ds set to the choice's math.
llvm::Expected<llvm::Optional<AlgoChoice>> pickAlgo(Libraries::Impl &L,
                                                    ConvDescriptors &Ds,
                                                    const ConvDesc &D,
                                                    int Tuned) {
  if (Tuned >= 0) {
    AlgoChoice C{Tuned, getRequestedMath(D.Math), 0};
    if (Ds.getWorkspace(D.Transposed, Tuned, C.Workspace) !=
        CUDNN_STATUS_SUCCESS)
      return llvm::None;
    return llvm::Optional<AlgoChoice>(C);
  }
  auto Reports = getHeuristicReports(L, Ds, D.Transposed);
  if (!Reports)
    return Reports.takeError();
  llvm::Optional<AlgoChoice> Smallest;
  for (const AlgoReport &R : *Reports) {
    if (R.Status != CUDNN_STATUS_SUCCESS || !keepsPrecision(D, R.Math) ||
        !getConvAlgoName(D.Transposed, R.Algo))
      continue;
    AlgoChoice C{R.Algo, getRunMath(D, R.Math), 0};
    if (llvm::Error E = Ds.setMath(C.Math))
      return E;
    if (Ds.getWorkspace(D.Transposed, R.Algo, C.Workspace) !=
        CUDNN_STATUS_SUCCESS)
      continue;
    if (C.Workspace <= ConvWorkspaceLimit)
      return llvm::Optional<AlgoChoice>(C);
    if (!Smallest || C.Workspace < Smallest->Workspace)
      Smallest = C;
  }
  if (Smallest)
    if (llvm::Error E = Ds.setMath(Smallest->Math))
      return E;
  return Smallest;
}

class CudnnConvRunner final : public ConvRunner {
public:
  CudnnConvRunner(Libraries::Impl &L, const ConvDesc &D) : L(L), D(D), Ds(L) {}

  /// Builds the descriptors for \p G and picks an algorithm; false when
  /// none can run the conv so described.
  llvm::Expected<bool> prepare(const CudnnConvGeometry &G, int Tuned);
  /// Uploads the filter and, for the fused call, the bias.
  llvm::Error upload(const float *Weights, const float *Bias,
                     bool FilterChannelsLast);
  /// Runs the fused call once on scratch buffers: cuDNN's legacy fused
  /// call takes fewer configurations than its forward call (bf16 data,
  /// some layouts and algorithms), and a captured program cannot change
  /// its calls. Where cuDNN answers NOT_SUPPORTED, the conv runs unfused
  /// and getFused() says so, so the program's epilogue kernel takes the
  /// bias, residual and activation.
  llvm::Error probeFusedCall();

  size_t getWorkspaceBytes() const override { return Choice.Workspace; }
  EpilogueSpec getFused() const override { return Fusion.Fused; }
  std::string getAlgo() const override {
    return getConvAlgoName(D.Transposed, Choice.Algo);
  }
  LibraryStatus run(const void *X, const void *Residual, void *Y,
                    void *Workspace, cudaStream_t S) const override;

private:
  Libraries::Impl &L;
  ConvDesc D;
  ConvDescriptors Ds;
  AlgoChoice Choice;
  ConvFusion Fusion;
  DeviceBuffer Filter, BiasData;
};

llvm::Expected<bool> CudnnConvRunner::prepare(const CudnnConvGeometry &G,
                                              int Tuned) {
  if (llvm::Error E = Ds.init(D, G))
    return E;
  auto C = pickAlgo(L, Ds, D, Tuned);
  if (!C)
    return C.takeError();
  if (!*C)
    return false;
  Choice = **C;
  if (!D.Transposed)
    Fusion = splitConvEpilogue(D, cudnnConvolutionFwdAlgo_t(Choice.Algo));
  return true;
}

llvm::Error CudnnConvRunner::upload(const float *Weights, const float *Bias,
                                    bool FilterChannelsLast) {
  if (llvm::Error E = Filter.upload(
          toStorage(packConvFilter(D, Weights, FilterChannelsLast), D.Type),
          "conv weights"))
    return E;
  if (!Fusion.BiasActivation)
    return llvm::Error::success();
  // The fused call always adds a bias (zeros when the conv has none), in
  // the output's type.
  std::vector<float> B(size_t(D.K), 0.0f);
  if (D.Epilogue.Bias)
    std::copy(Bias, Bias + D.K, B.begin());
  if (llvm::Error E = BiasData.upload(toStorage(B, D.Type), "conv bias"))
    return E;
  CudnnConvGeometry G = getCudnnConvGeometry(D);
  STRIDER_DNN_TRY(L.Dnn.cudnnCreateTensorDescriptor(&Ds.Bias),
                  "cudnnCreateTensorDescriptor");
  STRIDER_DNN_TRY(L.Dnn.cudnnSetTensorNdDescriptor(
                      Ds.Bias, getCudnnType(D.Type), G.Bias.Rank, G.Bias.Dims,
                      G.Bias.Strides),
                  "cudnnSetTensorNdDescriptor (bias)");
  STRIDER_DNN_TRY(L.Dnn.cudnnCreateActivationDescriptor(&Ds.Act),
                  "cudnnCreateActivationDescriptor");
  STRIDER_DNN_TRY(
      L.Dnn.cudnnSetActivationDescriptor(
          Ds.Act,
          Fusion.Relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
          CUDNN_NOT_PROPAGATE_NAN, 0.0),
      "cudnnSetActivationDescriptor");
  return llvm::Error::success();
}

llvm::Error CudnnConvRunner::probeFusedCall() {
  if (!Fusion.BiasActivation)
    return llvm::Error::success();
  const CudnnConvGeometry G = getCudnnConvGeometry(D);
  const size_t Elt = getDTypeBytes(D.Type);
  DeviceBuffer X, Y, Work;
  if (llvm::Error E = X.allocate(size_t(getCount(G.X.Dims, G.Rank)) * Elt,
                                 "conv probe input"))
    return E;
  if (llvm::Error E = Y.allocate(size_t(getCount(G.Y.Dims, G.Rank)) * Elt,
                                 "conv probe output"))
    return E;
  if (llvm::Error E = Work.allocate(Choice.Workspace, "conv probe workspace"))
    return E;
  // The residual is read from y itself (cuDNN allows z = y).
  const LibraryStatus Status = run(
      X.Ptr, Fusion.Fused.Residual ? Y.Ptr : nullptr, Y.Ptr, Work.Ptr, nullptr);
  // cuDNN rejects some layout and type mixes of the fused call as not
  // supported, others as a bad parameter: either way the conv runs unfused
  // (cudnnConvolutionForward and the epilogue kernel).
  if (Status.Code == cudaErrorNotSupported ||
      Status.Code == cudaErrorInvalidValue) {
    Fusion = ConvFusion();
    return llvm::Error::success();
  }
  if (Status.Code != cudaSuccess)
    return makeLibraryError(
        "conv '" + getConvKey(D) +
        "': cudnnConvolutionBiasActivationForward: " +
        (Status.Detail ? Status.Detail : cudaGetErrorString(Status.Code)));
  cudaError_t Sync = cudaStreamSynchronize(nullptr);
  if (Sync != cudaSuccess)
    return makeLibraryError(
        "conv '" + getConvKey(D) +
        "': the fused call's probe failed: " + cudaGetErrorString(Sync));
  return llvm::Error::success();
}

LibraryStatus CudnnConvRunner::run(const void *X, const void *Residual, void *Y,
                                   void *Workspace, cudaStream_t S) const {
  cudnnStatus_t Status = L.bindStream(S);
  if (Status != CUDNN_STATUS_SUCCESS)
    return toLibraryStatus(L, Status);
  const float One = 1.0f, Zero = 0.0f;
  if (D.Transposed) {
    Status = L.Dnn.cudnnConvolutionBackwardData(
        L.DnnHandle, &One, Ds.W, Filter.Ptr, Ds.X, X, Ds.Conv,
        cudnnConvolutionBwdDataAlgo_t(Choice.Algo), Workspace, Choice.Workspace,
        &Zero, Ds.Y, Y);
  } else if (!Fusion.BiasActivation) {
    Status = L.Dnn.cudnnConvolutionForward(
        L.DnnHandle, &One, Ds.X, X, Ds.W, Filter.Ptr, Ds.Conv,
        cudnnConvolutionFwdAlgo_t(Choice.Algo), Workspace, Choice.Workspace,
        &Zero, Ds.Y, Y);
  } else {
    // y = act(conv(x) + alpha2 * z + bias); without a residual z is y
    // itself, scaled by 0 (cuDNN wants a valid z).
    const bool AddResidual = Fusion.Fused.Residual && Residual;
    const float Alpha2 = AddResidual ? 1.0f : 0.0f;
    Status = L.Dnn.cudnnConvolutionBiasActivationForward(
        L.DnnHandle, &One, Ds.X, X, Ds.W, Filter.Ptr, Ds.Conv,
        cudnnConvolutionFwdAlgo_t(Choice.Algo), Workspace, Choice.Workspace,
        &Alpha2, Ds.Y, AddResidual ? Residual : Y, Ds.Bias, BiasData.Ptr,
        Ds.Act, Ds.Y, Y);
  }
  return toLibraryStatus(L, Status);
}

const char *getOrder(bool ChannelsLast) {
  return ChannelsLast ? "nhwc" : "nchw";
}

/// Random data of \p Count elements of type \p T.
std::vector<uint8_t> randomStorage(int64_t Count, DType T, unsigned Seed) {
  std::mt19937 Gen(Seed);
  std::uniform_real_distribution<float> Dist(-1.0f, 1.0f);
  std::vector<float> V(static_cast<size_t>(Count));
  for (float &F : V)
    F = Dist(Gen);
  return toStorage(V, T);
}

/// Nanoseconds per call of \p Launch (a library call on stream \p S) as a
/// program's graph replays it: a CUDA graph of back-to-back calls, the
/// least of several replays over the number of calls, after a warm-up
/// replay that also brings the clocks up. \p EstimateNs (find's figure)
/// sizes the graph to a millisecond or two. None when the call fails or
/// cannot be captured.
template <typename LaunchFn>
llvm::Optional<double> timeReplayed(cudaStream_t S, LaunchFn Launch,
                                    double EstimateNs) {
  if (!S)
    return llvm::None; // The legacy stream cannot be captured.
  if (Launch() != CUDNN_STATUS_SUCCESS ||
      cudaStreamSynchronize(S) != cudaSuccess) {
    (void)cudaGetLastError();
    return llvm::None;
  }
  const int Calls = int(std::clamp(2e6 / std::max(EstimateNs, 1.0), 4.0, 64.0));
  cudaGraph_t Graph = nullptr;
  if (cudaStreamBeginCapture(S, cudaStreamCaptureModeThreadLocal) !=
      cudaSuccess) {
    (void)cudaGetLastError();
    return llvm::None;
  }
  bool Launched = true;
  for (int I = 0; I < Calls && Launched; ++I)
    Launched = Launch() == CUDNN_STATUS_SUCCESS;
  cudaError_t End = cudaStreamEndCapture(S, &Graph);
  cudaGraphExec_t Exec = nullptr;
  if (!Launched || End != cudaSuccess || !Graph ||
      cudaGraphInstantiate(&Exec, Graph, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    if (Graph)
      (void)cudaGraphDestroy(Graph);
    return llvm::None;
  }
  (void)cudaGraphDestroy(Graph);
  cudaEvent_t Begin = nullptr, Finish = nullptr;
  llvm::Optional<double> Best;
  if (cudaEventCreate(&Begin) == cudaSuccess &&
      cudaEventCreate(&Finish) == cudaSuccess &&
      cudaGraphLaunch(Exec, S) == cudaSuccess) {
    constexpr int Replays = 5;
    for (int R = 0; R < Replays; ++R) {
      float Ms = 0;
      if (cudaEventRecord(Begin, S) != cudaSuccess ||
          cudaGraphLaunch(Exec, S) != cudaSuccess ||
          cudaEventRecord(Finish, S) != cudaSuccess ||
          cudaEventSynchronize(Finish) != cudaSuccess ||
          cudaEventElapsedTime(&Ms, Begin, Finish) != cudaSuccess) {
        Best = llvm::None;
        break;
      }
      const double Ns = double(Ms) * 1e6 / Calls;
      if (!Best || Ns < *Best)
        Best = Ns;
    }
  }
  (void)cudaGetLastError();
  if (Begin)
    (void)cudaEventDestroy(Begin);
  if (Finish)
    (void)cudaEventDestroy(Finish);
  (void)cudaGraphExecDestroy(Exec);
  return Best;
}

/// Times every algorithm cuDNN's find offers for the conv \p Ds
/// describes as \p G, on random data; fastest first.
llvm::Expected<std::vector<AlgoTiming>>
timeAlgorithms(Libraries::Impl &L, const ConvDescriptors &Ds, const ConvDesc &D,
               const CudnnConvGeometry &G) {
  DeviceBuffer X, W, Y, Work;
  const int64_t XCount = getCount(G.X.Dims, G.Rank),
                YCount = getCount(G.Y.Dims, G.Rank),
                WCount = getCount(G.Filter, G.Rank);
  if (llvm::Error E = X.upload(randomStorage(XCount, D.Type, 1), "conv input"))
    return E;
  if (llvm::Error E = W.upload(randomStorage(WCount, D.Type, 2), "conv filter"))
    return E;
  if (llvm::Error E =
          Y.allocate(size_t(YCount) * getDTypeBytes(D.Type), "conv output"))
    return E;
  // As much workspace as the device gives, up to the heuristic's limit.
  size_t WorkBytes = ConvWorkspaceLimit;
  while (WorkBytes && cudaMalloc(&Work.Ptr, WorkBytes) != cudaSuccess) {
    (void)cudaGetLastError();
    Work.Ptr = nullptr;
    WorkBytes /= 2;
  }

  std::vector<AlgoReport> Reports;
  int Max = 0, Got = 0;
  if (!D.Transposed) {
    STRIDER_DNN_TRY(
        L.Dnn.cudnnGetConvolutionForwardAlgorithmMaxCount(L.DnnHandle, &Max),
        "cudnnGetConvolutionForwardAlgorithmMaxCount");
    std::vector<cudnnConvolutionFwdAlgoPerf_t> P(size_t(std::max(Max, 1)));
    STRIDER_DNN_TRY(L.Dnn.cudnnFindConvolutionForwardAlgorithmEx(
                        L.DnnHandle, Ds.X, X.Ptr, Ds.W, W.Ptr, Ds.Conv, Ds.Y,
                        Y.Ptr, int(P.size()), &Got, P.data(), Work.Ptr,
                        WorkBytes),
                    "cudnnFindConvolutionForwardAlgorithmEx");
    Reports = toReports(P, Got);
  } else {
    STRIDER_DNN_TRY(L.Dnn.cudnnGetConvolutionBackwardDataAlgorithmMaxCount(
                        L.DnnHandle, &Max),
                    "cudnnGetConvolutionBackwardDataAlgorithmMaxCount");
    std::vector<cudnnConvolutionBwdDataAlgoPerf_t> P(size_t(std::max(Max, 1)));
    STRIDER_DNN_TRY(L.Dnn.cudnnFindConvolutionBackwardDataAlgorithmEx(
                        L.DnnHandle, Ds.W, W.Ptr, Ds.X, X.Ptr, Ds.Conv, Ds.Y,
                        Y.Ptr, int(P.size()), &Got, P.data(), Work.Ptr,
                        WorkBytes),
                    "cudnnFindConvolutionBackwardDataAlgorithmEx");
    Reports = toReports(P, Got);
  }

  std::vector<AlgoTiming> Timings, FindTimings;
  for (const AlgoReport &R : Reports) {
    const char *Name = getConvAlgoName(D.Transposed, R.Algo);
    if (R.Status != CUDNN_STATUS_SUCCESS || !Name ||
        !keepsPrecision(D, R.Math) ||
        llvm::any_of(FindTimings,
                     [&](const AlgoTiming &T) { return T.Algo == Name; }))
      continue;
    // Find's own figure times single calls, launch latency included (tens
    // of microseconds on small convs, which hides the differences that
    // matter inside a program's graph): each candidate is timed again as
    // programs run it.
    if (llvm::Error E = Ds.setMath(getRunMath(D, R.Math)))
      return E;
    const float One = 1.0f, Zero = 0.0f;
    const size_t AlgoWork = std::min(R.Memory, WorkBytes);
    auto Launch = [&]() {
      if (D.Transposed)
        return L.Dnn.cudnnConvolutionBackwardData(
            L.DnnHandle, &One, Ds.W, W.Ptr, Ds.X, X.Ptr, Ds.Conv,
            cudnnConvolutionBwdDataAlgo_t(R.Algo), Work.Ptr, AlgoWork, &Zero,
            Ds.Y, Y.Ptr);
      return L.Dnn.cudnnConvolutionForward(
          L.DnnHandle, &One, Ds.X, X.Ptr, Ds.W, W.Ptr, Ds.Conv,
          cudnnConvolutionFwdAlgo_t(R.Algo), Work.Ptr, AlgoWork, &Zero, Ds.Y,
          Y.Ptr);
    };
    const double FindNs = double(R.Milliseconds) * 1e6;
    FindTimings.push_back({Name, FindNs, R.Memory});
    llvm::Optional<double> Ns = timeReplayed(L.Stream, Launch, FindNs);
    if (!Ns)
      continue; // Not capturable: not what a program could run.
    Timings.push_back({Name, *Ns, R.Memory});
  }
  // None could be timed in a graph (the handle on the legacy stream):
  // find's figures are all there is.
  if (Timings.empty())
    Timings = std::move(FindTimings);
  if (llvm::Error E = Ds.setMath(getRequestedMath(D.Math)))
    return E;
  std::stable_sort(Timings.begin(), Timings.end(),
                   [](const AlgoTiming &A, const AlgoTiming &B) {
                     return A.Nanoseconds < B.Nanoseconds;
                   });
  return Timings;
}

} // namespace

llvm::Expected<std::unique_ptr<ConvRunner>>
ConvRunner::create(Libraries &Libs, const ConvDesc &D, const float *Weights,
                   const float *Bias, const std::string &Algo) {
  Libraries::Impl &L = Libs.getImpl();
  const std::string Key = getConvKey(D);
  if (!Libs.hasCudnn())
    return makeLibraryError("conv '" + Key + "': cuDNN was not loaded");
  std::string Why = checkConv(D);
  if (!Why.empty())
    return makeNoAlgorithmError("cuDNN cannot run conv '" + Key + "': " + Why);
  if (!Weights || (D.Epilogue.Bias && !Bias))
    return makeLibraryError("conv '" + Key + "' was given no " +
                            (Weights ? "bias" : "weights"));
  int Tuned = -1;
  if (!Algo.empty()) {
    Tuned = parseConvAlgo(D.Transposed, Algo);
    if (Tuned < 0)
      return makeLibraryError(
          "unknown cuDNN " +
          llvm::Twine(D.Transposed ? "backward-data" : "forward") +
          " algorithm '" + Algo + "' for conv '" + Key + "'");
  }
  // The preferred filter format first, then the other: cuDNN has
  // algorithms for some mixes of tensor and filter formats only.
  CudnnConvGeometry G = getCudnnConvGeometry(D);
  const bool Preferred = G.FilterChannelsLast;
  for (bool FilterLast : {Preferred, !Preferred}) {
    G.FilterChannelsLast = FilterLast;
    auto R = std::make_unique<CudnnConvRunner>(L, D);
    auto Ready = R->prepare(G, Tuned);
    if (!Ready) {
      // cuDNN refusing this filter format: try the other.
      if (llvm::Error E = llvm::handleErrors(Ready.takeError(),
                                             [](const NoAlgorithmError &) {}))
        return E;
      continue;
    }
    if (!*Ready)
      continue;
    if (llvm::Error E = R->upload(Weights, Bias, FilterLast))
      return E;
    if (llvm::Error E = R->probeFusedCall())
      return E;
    return std::unique_ptr<ConvRunner>(std::move(R));
  }
  const std::string Layouts = std::string(" (x ") + getOrder(D.XChannelsLast) +
                              ", y " + getOrder(D.YChannelsLast) +
                              ", filters kcrs and krsc)";
  if (Tuned >= 0)
    return makeLibraryError("the tuned cuDNN algorithm '" + Algo +
                            "' cannot run conv '" + Key + "'" + Layouts +
                            "; retune or drop it from the tuning file");
  return makeNoAlgorithmError("cuDNN has no algorithm for conv '" + Key + "'" +
                          Layouts);
}

llvm::Expected<std::vector<AlgoTiming>>
cuda::findConvAlgorithms(Libraries &Libs, const ConvDesc &D) {
  Libraries::Impl &L = Libs.getImpl();
  const std::string Key = getConvKey(D);
  if (!Libs.hasCudnn())
    return makeLibraryError("conv '" + Key + "': cuDNN was not loaded");
  std::string Why = checkConv(D);
  if (!Why.empty())
    return makeNoAlgorithmError("cuDNN cannot run conv '" + Key + "': " + Why);
  CudnnConvGeometry G = getCudnnConvGeometry(D);
  const bool Preferred = G.FilterChannelsLast;
  for (bool FilterLast : {Preferred, !Preferred}) {
    G.FilterChannelsLast = FilterLast;
    // cuDNN refusing this filter format (descriptors or search): try the
    // other.
    auto SkipFormat = [](llvm::Error E) {
      return llvm::handleErrors(std::move(E), [](const NoAlgorithmError &) {});
    };
    ConvDescriptors Ds(L);
    if (llvm::Error E = Ds.init(D, G)) {
      if (llvm::Error Rest = SkipFormat(std::move(E)))
        return Rest;
      continue;
    }
    auto Timings = timeAlgorithms(L, Ds, D, G);
    if (!Timings) {
      if (llvm::Error Rest = SkipFormat(Timings.takeError()))
        return Rest;
      continue;
    }
    if (!Timings->empty())
      return Timings;
  }
  return makeNoAlgorithmError("cuDNN found no algorithm for conv '" + Key + "'");
}
