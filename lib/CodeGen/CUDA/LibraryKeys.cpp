//===- LibraryKeys.cpp - Keys, checks and descriptors of library calls ----===//
//
// Host code only (no CUDA calls): the tuning keys of convs and GEMMs, why
// a conv or GEMM cannot go to its library, and the descriptors, epilogue
// splits and algorithm names the cuDNN and cuBLASLt runners use
// (LibraryDescriptors.h).
//
//===----------------------------------------------------------------------===//

#include "LibraryDescriptors.h"

#include "strider/IR/TensorData.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <climits>
#include <cstring>

using namespace strider;
using namespace strider::cuda;

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

namespace {

std::string joinDims(llvm::ArrayRef<int64_t> Dims) {
  std::string S;
  for (size_t I = 0; I < Dims.size(); ++I) {
    if (I)
      S += 'x';
    S += std::to_string(Dims[I]);
  }
  return S;
}

/// The logical (N, C, spatial...) dims of our X and Y and the ONNX weight
/// dims: (K, C / G, spatial...) or, transposed, (C, K / G, spatial...).
llvm::SmallVector<int64_t, 5> getXDims(const ConvDesc &D) {
  llvm::SmallVector<int64_t, 5> V = {D.N, D.C};
  V.append(D.In, D.In + D.Spatial);
  return V;
}
llvm::SmallVector<int64_t, 5> getYDims(const ConvDesc &D) {
  llvm::SmallVector<int64_t, 5> V = {D.N, D.K};
  V.append(D.Out, D.Out + D.Spatial);
  return V;
}
llvm::SmallVector<int64_t, 5> getWeightDims(const ConvDesc &D) {
  llvm::SmallVector<int64_t, 5> V;
  if (D.Transposed)
    V = {D.C, D.Groups ? D.K / D.Groups : 0};
  else
    V = {D.K, D.Groups ? D.C / D.Groups : 0};
  V.append(D.Filter, D.Filter + D.Spatial);
  return V;
}

const char *getMathSuffix(MathMode M) {
  return M == MathMode::TF32 ? " tf32" : "";
}

} // namespace

std::string cuda::getConvKey(const ConvDesc &D) {
  std::string K = D.Transposed ? "transposed " : "";
  K += "x=" + joinDims(getXDims(D)) + " w=" + joinDims(getWeightDims(D));
  // A transposed conv's output size is not implied by the others
  // (output_padding).
  if (D.Transposed)
    K += " y=" + joinDims(getYDims(D));
  llvm::SmallVector<int64_t, 6> Pads(D.PadBegin, D.PadBegin + D.Spatial);
  Pads.append(D.PadEnd, D.PadEnd + D.Spatial);
  K += " s=" + joinDims(llvm::makeArrayRef(D.Stride, size_t(D.Spatial))) +
       " p=" + joinDims(Pads) +
       " d=" + joinDims(llvm::makeArrayRef(D.Dilation, size_t(D.Spatial))) +
       " g=" + std::to_string(D.Groups) +
       " xl=" + (D.XChannelsLast ? "nhwc" : "nchw") +
       " yl=" + (D.YChannelsLast ? "nhwc" : "nchw") + " " +
       getDTypeName(D.Type) + getMathSuffix(D.Math);
  return K;
}

std::string cuda::getGemmKey(const GemmDesc &D) {
  std::string K = "b=" + std::to_string(D.Batch) + " m=" + std::to_string(D.M) +
                  " n=" + std::to_string(D.N) + " k=" + std::to_string(D.K) +
                  " ta=" + (D.TransA ? "1" : "0") +
                  " tb=" + (D.TransB ? "1" : "0") + " " + getDTypeName(D.Type) +
                  getMathSuffix(D.Math);
  if (D.Batch > 1)
    K += " sa=" + std::to_string(D.BatchStrideA) +
         " sb=" + std::to_string(D.BatchStrideB) +
         " sy=" + std::to_string(D.BatchStrideY);
  // The fused epilogue limits the algorithms cuBLASLt offers.
  GemmFusion F = splitGemmEpilogue(D.Epilogue);
  if (F.Fused.Bias)
    K += " bias";
  if (F.Fused.Act.Kind == codegen::ActKind::Relu)
    K += " relu";
  else if (F.Fused.Act.Kind == codegen::ActKind::GeluTanh)
    K += " gelu";
  return K;
}

//===----------------------------------------------------------------------===//
// Convolutions
//===----------------------------------------------------------------------===//

int64_t cuda::getSymmetricPad(const ConvDesc &D, int I) {
  const int64_t Pad = D.PadBegin[I];
  // cuDNN's forward conv runs from Out to In when transposed.
  const int64_t From = D.Transposed ? D.Out[I] : D.In[I];
  const int64_t To = D.Transposed ? D.In[I] : D.Out[I];
  const int64_t Span = (D.Filter[I] - 1) * D.Dilation[I] + 1;
  if (Pad < 0 || D.Stride[I] <= 0 || From + 2 * Pad < Span)
    return -1;
  return (From + 2 * Pad - Span) / D.Stride[I] + 1 == To ? Pad : -1;
}

std::string cuda::checkConv(const ConvDesc &D) {
  if (D.Spatial < 1 || D.Spatial > 3)
    return "cuDNN takes 1 to 3 spatial dims, not " + std::to_string(D.Spatial);
  if (D.N <= 0 || D.C <= 0 || D.K <= 0 || D.Groups <= 0)
    return "empty tensors (N=" + std::to_string(D.N) +
           " C=" + std::to_string(D.C) + " K=" + std::to_string(D.K) +
           " groups=" + std::to_string(D.Groups) + ")";
  if (D.C % D.Groups || D.K % D.Groups)
    return std::to_string(D.Groups) +
           " groups do not divide C=" + std::to_string(D.C) +
           " and K=" + std::to_string(D.K);
  for (int I = 0; I < D.Spatial; ++I) {
    const std::string Dim = " at spatial dim " + std::to_string(I);
    if (D.In[I] <= 0 || D.Out[I] <= 0 || D.Filter[I] <= 0)
      return "an empty input, output or filter" + Dim;
    if (D.Stride[I] <= 0 || D.Dilation[I] <= 0)
      return "a stride or dilation below 1" + Dim;
    if (D.PadBegin[I] < 0 || D.PadEnd[I] < 0)
      return "negative padding" + Dim;
    if (D.Filter[I] > INT_MAX || D.Stride[I] > INT_MAX ||
        D.Dilation[I] > INT_MAX || D.PadBegin[I] > INT_MAX)
      return "a window parameter of 2^31 or more" + Dim;
    if (getSymmetricPad(D, I) < 0) {
      if (D.PadBegin[I] != D.PadEnd[I])
        return "asymmetric padding " + std::to_string(D.PadBegin[I]) + "/" +
               std::to_string(D.PadEnd[I]) + Dim +
               " (cuDNN pads both sides equally)";
      return "an output size " + std::to_string(D.Out[I]) +
             " that does not follow from the window" + Dim;
    }
  }
  // cuDNN's legacy descriptors hold int dims and at most 2^31 - 1
  // elements per tensor.
  int64_t Weights =
      (D.Transposed ? D.C * (D.K / D.Groups) : D.K * (D.C / D.Groups));
  int64_t X = D.N * D.C, Y = D.N * D.K;
  for (int I = 0; I < D.Spatial; ++I) {
    if (X > INT_MAX || Y > INT_MAX || Weights > INT_MAX)
      break;
    X *= D.In[I];
    Y *= D.Out[I];
    Weights *= D.Filter[I];
  }
  if (X > INT_MAX || Y > INT_MAX || Weights > INT_MAX)
    return "a tensor of 2^31 elements or more (cuDNN's limit)";
  return std::string();
}

namespace {

/// Dims and strides of a tensor of logical dims \p Dims (N, C, spatial),
/// stored channels-first or -last.
CudnnTensorDims makeTensorDims(llvm::ArrayRef<int64_t> Dims,
                               bool ChannelsLast) {
  CudnnTensorDims T;
  T.Rank = int(Dims.size());
  for (int I = 0; I < T.Rank; ++I)
    T.Dims[I] = int(Dims[size_t(I)]);
  // The storage order of the logical dims, outermost first.
  llvm::SmallVector<int, 5> Order = {0};
  if (!ChannelsLast)
    Order.push_back(1);
  for (int I = 2; I < T.Rank; ++I)
    Order.push_back(I);
  if (ChannelsLast)
    Order.push_back(1);
  int Stride = 1;
  for (size_t P = Order.size(); P-- > 0;) {
    T.Strides[Order[P]] = Stride;
    Stride *= T.Dims[Order[P]];
  }
  return T;
}

/// \p Spatial values of a conv as cuDNN's (1-D as 2-D: \p Unit first).
llvm::SmallVector<int64_t, 3> liftSpatial(const ConvDesc &D,
                                          const int64_t *Values, int64_t Unit) {
  llvm::SmallVector<int64_t, 3> V;
  if (D.Spatial == 1)
    V.push_back(Unit);
  V.append(Values, Values + D.Spatial);
  return V;
}

} // namespace

CudnnConvGeometry cuda::getCudnnConvGeometry(const ConvDesc &D) {
  CudnnConvGeometry G;
  auto In = liftSpatial(D, D.In, 1), Out = liftSpatial(D, D.Out, 1);
  auto Filter = liftSpatial(D, D.Filter, 1);
  auto Stride = liftSpatial(D, D.Stride, 1);
  auto Dilation = liftSpatial(D, D.Dilation, 1);
  llvm::SmallVector<int64_t, 3> Pads;
  for (int I = 0; I < D.Spatial; ++I)
    Pads.push_back(getSymmetricPad(D, I));
  auto Pad = liftSpatial(D, Pads.data(), 0);
  const int S = int(In.size());
  G.Rank = S + 2;

  llvm::SmallVector<int64_t, 5> XDims = {D.N, D.C}, YDims = {D.N, D.K};
  XDims.append(In.begin(), In.end());
  YDims.append(Out.begin(), Out.end());
  G.X = makeTensorDims(XDims, D.XChannelsLast);
  G.Y = makeTensorDims(YDims, D.YChannelsLast);
  llvm::SmallVector<int64_t, 5> BiasDims(size_t(G.Rank), 1);
  BiasDims[1] = D.K;
  G.Bias = makeTensorDims(BiasDims, D.YChannelsLast);

  // The forward conv's channels: ours, or from Y to X when transposed.
  const int64_t FwdOut = D.Transposed ? D.C : D.K;
  const int64_t FwdIn = D.Transposed ? D.K : D.C;
  G.Filter[0] = int(FwdOut);
  G.Filter[1] = int(FwdIn / D.Groups);
  for (int I = 0; I < S; ++I) {
    G.Filter[I + 2] = int(Filter[size_t(I)]);
    G.Pad[I] = int(Pad[size_t(I)]);
    G.Stride[I] = int(Stride[size_t(I)]);
    G.Dilation[I] = int(Dilation[size_t(I)]);
  }
  G.FilterChannelsLast = D.XChannelsLast && D.YChannelsLast;
  G.Groups = int(D.Groups);
  return G;
}

std::vector<float> cuda::packConvFilter(const ConvDesc &D, const float *W,
                                        bool ChannelsLast) {
  const int64_t Out = D.Transposed ? D.C : D.K;
  const int64_t In = (D.Transposed ? D.K : D.C) / D.Groups;
  int64_t Taps = 1;
  for (int I = 0; I < D.Spatial; ++I)
    Taps *= D.Filter[I];
  std::vector<float> P(size_t(Out * In * Taps));
  if (!ChannelsLast) {
    std::memcpy(P.data(), W, P.size() * sizeof(float));
    return P;
  }
  // (out, in, taps) -> (out, taps, in); 1-D's extra H = 1 moves nothing.
  for (int64_t O = 0; O < Out; ++O)
    for (int64_t C = 0; C < In; ++C)
      for (int64_t T = 0; T < Taps; ++T)
        P[size_t((O * Taps + T) * In + C)] = W[(O * In + C) * Taps + T];
  return P;
}

std::vector<uint8_t> cuda::toStorage(llvm::ArrayRef<float> Values, DType T) {
  std::vector<uint8_t> Bytes(Values.size() * getDTypeBytes(T));
  if (T == DType::F32) {
    if (!Values.empty())
      std::memcpy(Bytes.data(), Values.data(), Bytes.size());
    return Bytes;
  }
  for (size_t I = 0; I < Values.size(); ++I) {
    uint16_t H =
        T == DType::F16 ? floatToHalf(Values[I]) : floatToBfloat16(Values[I]);
    std::memcpy(&Bytes[2 * I], &H, 2);
  }
  return Bytes;
}

ConvFusion cuda::splitConvEpilogue(const ConvDesc &D,
                                   cudnnConvolutionFwdAlgo_t Algo) {
  ConvFusion F;
  const EpilogueSpec &W = D.Epilogue;
  if (D.Transposed)
    return F;
  if (W.Act.Kind == codegen::ActKind::Relu) {
    F.BiasActivation = true;
    F.Relu = true;
    F.Fused = W;
    return F;
  }
  if (W.Act.isNone() && (W.Bias || W.Residual) &&
      Algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) {
    F.BiasActivation = true;
    F.Fused.Bias = W.Bias;
    F.Fused.Residual = W.Residual;
  }
  return F;
}

namespace {

struct AlgoName {
  int Value;
  const char *Name;
};

const AlgoName ForwardAlgos[] = {
    {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, "implicit_gemm"},
    {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, "implicit_precomp_gemm"},
    {CUDNN_CONVOLUTION_FWD_ALGO_GEMM, "gemm"},
    {CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, "direct"},
    {CUDNN_CONVOLUTION_FWD_ALGO_FFT, "fft"},
    {CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, "fft_tiling"},
    {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, "winograd"},
    {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, "winograd_nonfused"},
};

const AlgoName BackwardDataAlgos[] = {
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, "algo_0"},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, "algo_1"},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, "fft"},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING, "fft_tiling"},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, "winograd"},
    {CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED, "winograd_nonfused"},
};

llvm::ArrayRef<AlgoName> getAlgoTable(bool Transposed) {
  if (Transposed)
    return BackwardDataAlgos;
  return ForwardAlgos;
}

} // namespace

const char *cuda::getConvAlgoName(bool Transposed, int Algo) {
  for (const AlgoName &A : getAlgoTable(Transposed))
    if (A.Value == Algo)
      return A.Name;
  return nullptr;
}

int cuda::parseConvAlgo(bool Transposed, llvm::StringRef Name) {
  for (const AlgoName &A : getAlgoTable(Transposed))
    if (Name == A.Name)
      return A.Value;
  return -1;
}

//===----------------------------------------------------------------------===//
// GEMMs
//===----------------------------------------------------------------------===//

LtGemmShape cuda::getLtGemmShape(const GemmDesc &D) {
  LtGemmShape L;
  L.M = D.N;
  L.N = D.M;
  L.K = D.K;
  // Our B, row-major K x N, is column-major N x K (op N); stored N x K
  // (TransB), it is column-major K x N (op T).
  L.TransA = D.TransB;
  L.ARows = D.TransB ? D.K : D.N;
  L.ACols = D.TransB ? D.N : D.K;
  L.Lda = L.ARows;
  // Our A, row-major M x K, is column-major K x M (op N); stored K x M
  // (TransA), it is column-major M x K (op T).
  L.TransB = D.TransA;
  L.BRows = D.TransA ? D.M : D.K;
  L.BCols = D.TransA ? D.K : D.M;
  L.Ldb = L.BRows;
  // Y, row-major M x N, is column-major N x M.
  L.CRows = D.N;
  L.CCols = D.M;
  L.Ldc = D.N;
  L.Batch = D.Batch;
  L.StrideA = D.BatchStrideB;
  L.StrideB = D.BatchStrideA;
  L.StrideC = D.BatchStrideY;
  return L;
}

std::string cuda::checkGemm(const GemmDesc &D) {
  if (D.Batch <= 0 || D.M <= 0 || D.N <= 0 || D.K <= 0)
    return "an empty matrix product (batch=" + std::to_string(D.Batch) +
           " m=" + std::to_string(D.M) + " n=" + std::to_string(D.N) +
           " k=" + std::to_string(D.K) + ")";
  if (D.M > INT_MAX || D.N > INT_MAX || D.K > INT_MAX || D.Batch > INT_MAX)
    return "a matrix dim of 2^31 or more (cuBLASLt's limit)";
  if (D.BatchStrideA < 0 || D.BatchStrideB < 0 || D.BatchStrideY < 0)
    return "a negative batch stride";
  if (D.Batch > 1 && D.BatchStrideY < D.M * D.N)
    return "batches of Y that overlap (stride " +
           std::to_string(D.BatchStrideY) + " < " + std::to_string(D.M * D.N) +
           ")";
  return std::string();
}

GemmFusion cuda::splitGemmEpilogue(const EpilogueSpec &Wanted) {
  GemmFusion F;
  F.Fused.Bias = Wanted.Bias;
  switch (Wanted.Act.Kind) {
  case codegen::ActKind::Relu:
    F.Epilogue =
        Wanted.Bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    F.Fused.Act = Wanted.Act;
    break;
  case codegen::ActKind::GeluTanh:
    F.Epilogue =
        Wanted.Bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    F.Fused.Act = Wanted.Act;
    break;
  default:
    F.Epilogue =
        Wanted.Bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    break;
  }
  return F;
}

std::string cuda::formatGemmAlgo(const GemmAlgoConfig &C) {
  return "id=" + std::to_string(C.Id) + " tile=" + std::to_string(C.Tile) +
         " stages=" + std::to_string(C.Stages) +
         " splitk=" + std::to_string(C.SplitK) +
         " reduction=" + std::to_string(C.Reduction) +
         " swizzle=" + std::to_string(C.Swizzle) +
         " custom=" + std::to_string(C.Custom) +
         " inner=" + std::to_string(C.InnerShape) +
         " cluster=" + std::to_string(C.ClusterShape);
}

llvm::Optional<GemmAlgoConfig> cuda::parseGemmAlgo(llvm::StringRef Name) {
  GemmAlgoConfig C;
  struct Field {
    const char *Key;
    int64_t Min, Max;
    int64_t Value;
    bool Seen;
  } Fields[] = {
      {"id", 0, INT32_MAX, 0, false},
      {"tile", 0, UINT32_MAX, 0, false},
      {"stages", 0, UINT32_MAX, 0, false},
      {"splitk", 1, INT32_MAX, 0, false},
      {"reduction", 0, UINT32_MAX, 0, false},
      {"swizzle", 0, UINT32_MAX, 0, false},
      {"custom", 0, UINT32_MAX, 0, false},
      {"inner", 0, UINT16_MAX, 0, false},
      {"cluster", 0, UINT16_MAX, 0, false},
  };
  llvm::SmallVector<llvm::StringRef, 9> Parts;
  Name.split(Parts, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef P : Parts) {
    auto KV = P.split('=');
    Field *F = nullptr;
    for (Field &Candidate : Fields)
      if (KV.first == Candidate.Key)
        F = &Candidate;
    int64_t V;
    if (!F || F->Seen || KV.second.getAsInteger(10, V) || V < F->Min ||
        V > F->Max)
      return llvm::None;
    F->Value = V;
    F->Seen = true;
  }
  for (const Field &F : Fields)
    if (!F.Seen)
      return llvm::None;
  C.Id = int32_t(Fields[0].Value);
  C.Tile = uint32_t(Fields[1].Value);
  C.Stages = uint32_t(Fields[2].Value);
  C.SplitK = int32_t(Fields[3].Value);
  C.Reduction = uint32_t(Fields[4].Value);
  C.Swizzle = uint32_t(Fields[5].Value);
  C.Custom = uint32_t(Fields[6].Value);
  C.InnerShape = uint16_t(Fields[7].Value);
  C.ClusterShape = uint16_t(Fields[8].Value);
  return C;
}
