//===- CAPI.cpp - The C API over the engine -------------------------------===//
//
// strider.h's functions: DLPack tensors in and out of engine sessions,
// errors as status codes plus a per-thread message. Nothing thrown or
// asserted here reaches the caller: every entry point catches.
//
//===----------------------------------------------------------------------===//

#include "strider/strider.h"

#include "strider/CodeGen/Registry/BackendRegistry.h"
#include "strider/Engine/Session.h"
#include "strider/IR/Graph.h"
#include "strider/Layout/Tuning.h"
#include "strider/Runtime/Tensor.h"

#include <atomic>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

using namespace strider;

#ifndef STRIDER_VERSION_STRING
#define STRIDER_VERSION_STRING "unknown"
#endif

namespace {

thread_local std::string LastError;

/// A failure: \p Status, with \p Msg as this thread's message.
strider_status fail(strider_status Status, const llvm::Twine &Msg) {
  LastError = Msg.str();
  return Status;
}

strider_status fail(strider_status Status, llvm::Error E) {
  return fail(Status, llvm::toString(std::move(E)));
}

/// Runs \p F, turning exceptions into statuses.
template <typename Fn> strider_status guarded(Fn &&F) {
  try {
    return F();
  } catch (const std::bad_alloc &) {
    return fail(STRIDER_ERROR_INTERNAL, "out of memory");
  } catch (const std::exception &E) {
    return fail(STRIDER_ERROR_INTERNAL,
                llvm::Twine("internal error: ") + E.what());
  } catch (...) {
    return fail(STRIDER_ERROR_INTERNAL, "internal error");
  }
}

struct TypeCode {
  ElementType Elt;
  DLDataType DL;
};

const TypeCode TypeCodes[] = {
    {ElementType::F32, {kDLFloat, 32, 1}},
    {ElementType::F16, {kDLFloat, 16, 1}},
    {ElementType::F64, {kDLFloat, 64, 1}},
    {ElementType::BF16, {kDLBfloat, 16, 1}},
    {ElementType::I8, {kDLInt, 8, 1}},
    {ElementType::I16, {kDLInt, 16, 1}},
    {ElementType::I32, {kDLInt, 32, 1}},
    {ElementType::I64, {kDLInt, 64, 1}},
    {ElementType::U8, {kDLUInt, 8, 1}},
    {ElementType::U16, {kDLUInt, 16, 1}},
    {ElementType::U32, {kDLUInt, 32, 1}},
    {ElementType::U64, {kDLUInt, 64, 1}},
    {ElementType::Bool, {STRIDER_DL_BOOL, 8, 1}},
};

DLDataType toDL(ElementType Elt) {
  for (const TypeCode &C : TypeCodes)
    if (C.Elt == Elt)
      return C.DL;
  return DLDataType{0, 0, 0};
}

ElementType fromDL(DLDataType T) {
  for (const TypeCode &C : TypeCodes)
    if (C.DL.code == T.code && C.DL.bits == T.bits && T.lanes == 1)
      return C.Elt;
  return ElementType::Unknown;
}

std::string describeDL(DLDataType T) {
  return "DLDataType{code " + std::to_string(T.code) + ", bits " +
         std::to_string(T.bits) + ", lanes " + std::to_string(T.lanes) + "}";
}

/// Backing store of a strider_tensor_info. Built in place and never
/// moved: the info's pointers point into it.
struct TensorInfo {
  std::string Name;
  DLDataType DType{0, 0, 0};
  int32_t NDim = -1;
  std::vector<int64_t> Shape;
  std::vector<std::string> Symbols;
  std::vector<const char *> DimNames;
  std::vector<int32_t> Order;
  std::string LayoutName;

  TensorInfo(const std::string &N, const TensorType &T) : Name(N) {
    DType = toDL(T.getElementType());
    if (!T.hasRank())
      return;
    NDim = int32_t(T.getRank());
    Symbols.resize(T.getRank());
    for (unsigned I = 0; I < T.getRank(); ++I) {
      const Dim &D = T.getDim(I);
      Shape.push_back(D.isStatic() ? D.getSize() : -1);
      if (D.isSymbol())
        Symbols[I] = D.getSymbol().str();
    }
    for (unsigned I = 0; I < T.getRank(); ++I)
      DimNames.push_back(T.getDim(I).isSymbol() ? Symbols[I].c_str() : nullptr);
    for (unsigned P : T.getLayout().getPermutation(T.getRank()))
      Order.push_back(int32_t(P));
    LayoutName = T.getLayout().isIdentity() && T.getRank() < 3
                     ? std::string()
                     : T.getLayout().getName(T.getRank());
  }
  TensorInfo(const TensorInfo &) = delete;

  void fill(strider_tensor_info *Info) const {
    Info->name = Name.c_str();
    Info->dtype = DType;
    Info->ndim = NDim;
    Info->shape = NDim < 0 ? nullptr : Shape.data();
    Info->dim_names = NDim < 0 ? nullptr : DimNames.data();
    Info->dim_order = NDim < 0 ? nullptr : Order.data();
    Info->layout = LayoutName.c_str();
  }
};

using InfoList = std::vector<std::unique_ptr<TensorInfo>>;

/// Host memory every session can read and write.
bool isHost(DLDevice D) {
  return D.device_type == kDLCPU || D.device_type == kDLCUDAHost;
}

/// Checks what every tensor crossing the API needs: host memory or a CUDA
/// device's (which runs check against the session), a known element type,
/// a shape (and data, if \p NeedData).
strider_status checkTensor(const DLTensor &T, const std::string &What,
                           bool NeedData) {
  if (!isHost(T.device) && T.device.device_type != kDLCUDA)
    return fail(STRIDER_ERROR_TENSOR,
                What + " is on device type " +
                    llvm::Twine(int(T.device.device_type)) +
                    "; Strider reads and writes host memory (kDLCPU, "
                    "kDLCUDAHost) and, with the cuda backend, its GPU's "
                    "(kDLCUDA)");
  if (fromDL(T.dtype) == ElementType::Unknown)
    return fail(STRIDER_ERROR_TENSOR,
                What + " has an element type Strider does not support (" +
                    describeDL(T.dtype) + ")");
  if (T.ndim < 0 || T.ndim > 32)
    return fail(STRIDER_ERROR_TENSOR,
                What + " has rank " + llvm::Twine(T.ndim));
  if (T.ndim > 0 && !T.shape)
    return fail(STRIDER_ERROR_TENSOR, What + " has no shape array");
  int64_t Count = 1;
  for (int I = 0; I < T.ndim; ++I) {
    if (T.shape[I] < 0)
      return fail(STRIDER_ERROR_TENSOR, What + " has a negative dim (" +
                                            llvm::Twine(T.shape[I]) + ")");
    Count *= T.shape[I];
  }
  if (NeedData && Count > 0 && !T.data)
    return fail(STRIDER_ERROR_TENSOR, What + " has no data");
  return STRIDER_OK;
}

std::vector<int64_t> shapeOf(const DLTensor &T) {
  return std::vector<int64_t>(T.shape, T.shape + T.ndim);
}

std::string shapeString(llvm::ArrayRef<int64_t> Shape) {
  std::string S = "[";
  for (size_t I = 0; I < Shape.size(); ++I)
    S += (I ? ", " : "") + std::to_string(Shape[I]);
  return S + "]";
}

/// Element strides of \p T as the caller laid it out.
std::vector<int64_t> stridesOf(const DLTensor &T) {
  std::vector<int64_t> S(size_t(T.ndim), 1);
  if (T.strides) {
    S.assign(T.strides, T.strides + T.ndim);
    return S;
  }
  for (int I = T.ndim - 2; I >= 0; --I)
    S[I] = S[I + 1] * T.shape[I + 1];
  return S;
}

/// The dense layout (outermost dim first) that \p Strides describe for
/// \p Shape, if they describe one.
llvm::Optional<Layout> denseLayoutOf(llvm::ArrayRef<int64_t> Shape,
                                     llvm::ArrayRef<int64_t> Strides) {
  const unsigned Rank = Shape.size();
  llvm::SmallVector<unsigned, 6> Perm;
  for (unsigned I = 0; I < Rank; ++I)
    Perm.push_back(I);
  // Outermost first; dims of size 1 keep their logical position among
  // equal strides.
  std::stable_sort(Perm.begin(), Perm.end(), [&](unsigned A, unsigned B) {
    return Strides[A] > Strides[B];
  });
  int64_t Expect = 1;
  for (unsigned K = Rank; K-- > 0;) {
    unsigned D = Perm[K];
    if (Shape[D] != 1 && Strides[D] != Expect)
      return llvm::None;
    Expect *= Shape[D];
  }
  return Layout(Perm);
}

/// Caller tensor \p T (checked) as a runtime tensor: a view of its memory
/// when it is dense, else a row-major copy.
runtime::Tensor readTensor(const DLTensor &T) {
  const ElementType Elt = fromDL(T.dtype);
  const std::vector<int64_t> Shape = shapeOf(T);
  const std::vector<int64_t> Strides = stridesOf(T);
  const auto *Base = static_cast<const uint8_t *>(T.data) + T.byte_offset;
  // Dense in some layout: the caller's buffer itself, not a copy (a run
  // reads its inputs through const tensors and never writes them). A
  // page-locked buffer (kDLCUDAHost) then goes to the GPU directly.
  if (llvm::Optional<Layout> L = denseLayoutOf(Shape, Strides))
    return runtime::Tensor::view(Elt, Shape, *L, const_cast<uint8_t *>(Base));
  runtime::Tensor R(Elt, Shape);
  const unsigned Size = getElementByteSize(Elt);
  uint8_t *Out = R.getMutableBytes().data();
  runtime::forEachIndex(Shape, [&](llvm::ArrayRef<int64_t> Index) {
    int64_t Src = 0;
    for (size_t I = 0; I < Index.size(); ++I)
      Src += Index[I] * Strides[I];
    std::memcpy(Out + R.getOffset(Index) * Size, Base + Src * Size, Size);
  });
  return R;
}

/// Caller tensor \p T (checked) as a view of its memory, when it is dense
/// in some dim order.
llvm::Optional<runtime::Tensor> viewTensor(const DLTensor &T) {
  const std::vector<int64_t> Shape = shapeOf(T);
  llvm::Optional<Layout> L = denseLayoutOf(Shape, stridesOf(T));
  if (!L)
    return llvm::None;
  return runtime::Tensor::view(fromDL(T.dtype), Shape, *L,
                               static_cast<uint8_t *>(T.data) + T.byte_offset);
}

/// Copies \p R into caller tensor \p T (checked: same type and shape).
void writeTensor(const runtime::Tensor &R, DLTensor &T) {
  const std::vector<int64_t> Strides = stridesOf(T);
  auto *Base = static_cast<uint8_t *>(T.data) + T.byte_offset;
  if (llvm::makeArrayRef(Strides) == R.getStrides() ||
      R.getNumElements() <= 1) {
    if (!R.getBytes().empty())
      std::memcpy(Base, R.getBytes().data(), R.getBytes().size());
    return;
  }
  const unsigned Size = getElementByteSize(R.getElementType());
  const uint8_t *In = R.getBytes().data();
  runtime::forEachIndex(R.getShape(), [&](llvm::ArrayRef<int64_t> Index) {
    int64_t Dst = 0;
    for (size_t I = 0; I < Index.size(); ++I)
      Dst += Index[I] * Strides[I];
    std::memcpy(Base + Dst * Size, In + R.getOffset(Index) * Size, Size);
  });
}

} // namespace

struct strider_model {
  std::shared_ptr<const engine::Model> M;
  InfoList Inputs, Outputs;
};

struct strider_session_options {
  engine::SessionOptions Opts;
  /// A kDLCUDA device was set: only the cuda backend runs there.
  bool CudaDevice = false;
};

namespace {

/// What one thread's last prepare or run of a session chose: the
/// specialization, and its outputs for strider_session_output_info.
struct Prepared {
  std::shared_ptr<engine::Specialization> Spec;
  InfoList Outputs;
};

/// A session's Prepared of each thread that used it, by thread token. The
/// map is guarded by Mutex; an entry is read and written by its thread
/// only.
struct PerThread {
  std::mutex Mutex;
  std::map<uint64_t, std::unique_ptr<Prepared>> ByThread;
};

/// The calling thread: a token no other thread has had (thread ids are
/// reused), and the sessions it has entries in, which it leaves when it
/// exits.
struct ThisThread {
  uint64_t Token;
  std::vector<std::weak_ptr<PerThread>> Sessions;
  ThisThread() {
    static std::atomic<uint64_t> Next{0};
    Token = Next.fetch_add(1);
  }
  ~ThisThread() {
    for (const std::weak_ptr<PerThread> &W : Sessions)
      if (std::shared_ptr<PerThread> P = W.lock()) {
        std::lock_guard<std::mutex> Lock(P->Mutex);
        P->ByThread.erase(Token);
      }
  }
};
thread_local ThisThread Me;

} // namespace

struct strider_session {
  const strider_model *Model = nullptr;
  std::unique_ptr<engine::Session> S;
  /// Each thread's own last prepare (so that runs on many threads at once
  /// never touch each other's).
  std::shared_ptr<PerThread> Threads = std::make_shared<PerThread>();

  /// The calling thread's entry; null if it has none yet and \p Make is
  /// false.
  Prepared *getPrepared(bool Make) const {
    std::lock_guard<std::mutex> Lock(Threads->Mutex);
    auto It = Threads->ByThread.find(Me.Token);
    if (It != Threads->ByThread.end())
      return It->second.get();
    if (!Make)
      return nullptr;
    llvm::erase_if(Me.Sessions, [](const std::weak_ptr<PerThread> &W) {
      return W.expired();
    });
    Me.Sessions.push_back(Threads);
    auto &P = Threads->ByThread[Me.Token];
    P = std::make_unique<Prepared>();
    return P.get();
  }
};

namespace {

/// The caller's device tensor \p T as the engine takes it.
runtime::DeviceTensor deviceTensorOf(const DLTensor &T) {
  runtime::DeviceTensor D;
  D.Data = static_cast<uint8_t *>(T.data) + T.byte_offset;
  D.Type = fromDL(T.dtype);
  D.Shape = shapeOf(T);
  D.Strides = stridesOf(T);
  return D;
}

/// Whether a run's tensors (checked) are all in host memory or all in the
/// memory of the session's GPU (\p OnDevice); a mix, or GPU memory a
/// session does not run on, is an error naming the first odd tensor.
strider_status whereRunTensors(const strider_session &S, const DLTensor *In,
                               size_t NumIn, const DLTensor *Out, size_t NumOut,
                               bool &OnDevice) {
  const size_t Count = NumIn + NumOut;
  if (Count == 0)
    return STRIDER_OK;
  // Tensor K of the run: the inputs, then the outputs; named on errors only.
  auto At = [&](size_t K) -> const DLTensor & {
    return K < NumIn ? In[K] : Out[K - NumIn];
  };
  auto Name = [&](size_t K) {
    return K < NumIn ? "input " + std::to_string(K)
                     : "output " + std::to_string(K - NumIn);
  };
  const engine::SessionOptions &O = S.S->getOptions();
  OnDevice = At(0).device.device_type == kDLCUDA;
  for (size_t K = 0; K < Count; ++K) {
    const bool Device = At(K).device.device_type == kDLCUDA;
    if (Device != OnDevice)
      return fail(STRIDER_ERROR_TENSOR,
                  Name(K) + " is in " + (Device ? "GPU" : "host") +
                      " memory and " + Name(0) + " in " +
                      (OnDevice ? "GPU" : "host") +
                      " memory: a run's tensors are all in host memory or "
                      "all on the session's GPU");
  }
  if (!OnDevice)
    return STRIDER_OK;
  if (!llvm::cantFail(codegen::findBackend(O.Backend))->runsOnDevice())
    return fail(STRIDER_ERROR_TENSOR,
                Name(0) + " is in GPU memory (kDLCUDA); this session's "
                          "backend reads host memory (kDLCPU)");
  for (size_t K = 0; K < Count; ++K)
    if (At(K).device.device_id != O.Device)
      return fail(STRIDER_ERROR_TENSOR,
                  Name(K) + " is on GPU " +
                      llvm::Twine(At(K).device.device_id) +
                      "; this session runs on GPU " + llvm::Twine(O.Device));
  return STRIDER_OK;
}

} // namespace

extern "C" {

const char *strider_version(void) { return STRIDER_VERSION_STRING; }
int strider_api_version(void) { return STRIDER_API_VERSION; }
const char *strider_last_error(void) { return LastError.c_str(); }

strider_status strider_model_load(const char *path, strider_model **model) {
  return guarded([&]() -> strider_status {
    if (!model)
      return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                  "strider_model_load: model is NULL");
    *model = nullptr;
    if (!path)
      return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                  "strider_model_load: path is NULL");
    auto M = engine::Model::load(path);
    if (!M)
      return fail(STRIDER_ERROR_MODEL, M.takeError());
    auto Result = std::make_unique<strider_model>();
    Result->M = std::move(*M);
    for (const Value *In : Result->M->getInputs())
      Result->Inputs.push_back(
          std::make_unique<TensorInfo>(In->getName(), In->getType()));
    for (const Value *Out : Result->M->getOutputs())
      Result->Outputs.push_back(
          std::make_unique<TensorInfo>(Out->getName(), Out->getType()));
    *model = Result.release();
    return STRIDER_OK;
  });
}

void strider_model_free(strider_model *model) { delete model; }

size_t strider_model_num_inputs(const strider_model *model) {
  return model ? model->Inputs.size() : 0;
}

size_t strider_model_num_outputs(const strider_model *model) {
  return model ? model->Outputs.size() : 0;
}

static strider_status getInfo(const InfoList *List, size_t Index,
                              strider_tensor_info *Info, const char *Fn) {
  if (!List || !Info)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                llvm::Twine(Fn) + ": a pointer argument is NULL");
  if (Index >= List->size())
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                llvm::Twine(Fn) + ": index " + llvm::Twine(Index) +
                    " is out of range (there are " + llvm::Twine(List->size()) +
                    ")");
  (*List)[Index]->fill(Info);
  return STRIDER_OK;
}

strider_status strider_model_input_info(const strider_model *model,
                                        size_t index,
                                        strider_tensor_info *info) {
  return getInfo(model ? &model->Inputs : nullptr, index, info,
                 "strider_model_input_info");
}

strider_status strider_model_output_info(const strider_model *model,
                                         size_t index,
                                         strider_tensor_info *info) {
  return getInfo(model ? &model->Outputs : nullptr, index, info,
                 "strider_model_output_info");
}

strider_status strider_model_input_dim_range(const strider_model *model,
                                             size_t index, int32_t axis,
                                             int64_t *min, int64_t *max) {
  if (!model || !min || !max)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_model_input_dim_range: model, min or max is NULL");
  llvm::ArrayRef<const Value *> Inputs = model->M->getInputs();
  if (index >= Inputs.size())
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_model_input_dim_range: input " + llvm::Twine(index) +
                    " of " + llvm::Twine(Inputs.size()));
  const TensorType &T = Inputs[index]->getType();
  if (!T.hasRank() || axis < 0 || unsigned(axis) >= T.getRank())
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_model_input_dim_range: input '" +
                    Inputs[index]->getName() + "' (" + T.str() +
                    ") has no dim " + llvm::Twine(axis));
  const Dim &D = T.getDim(unsigned(axis));
  *min = D.isStatic() ? D.getSize() : 0;
  *max = D.isStatic() ? D.getSize() : INT64_MAX;
  for (const engine::InputRange &R : model->M->getInputRanges())
    if (R.Input == Inputs[index]->getName() && R.Axis == unsigned(axis)) {
      *min = R.Min;
      *max = R.Max;
    }
  return STRIDER_OK;
}

strider_status
strider_session_options_set_input_range(strider_session_options *options,
                                        const char *input, int32_t axis,
                                        int64_t min, int64_t max) {
  if (!options || !input)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_session_options_set_input_range: options or input "
                "is NULL");
  if (axis < 0 || min < 1 || max < min)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_session_options_set_input_range: axis " +
                    llvm::Twine(axis) + ", range " + llvm::Twine(min) + ".." +
                    llvm::Twine(max) + " (need axis >= 0 and 1 <= min <= max)");
  auto &Ranges = options->Opts.InputRanges;
  for (engine::InputRange &R : Ranges)
    if (R.Input == input && R.Axis == unsigned(axis)) {
      R.Min = min;
      R.Max = max;
      return STRIDER_OK;
    }
  Ranges.push_back({input, unsigned(axis), min, max});
  return STRIDER_OK;
}

strider_status
strider_session_options_set_optimize_per_shape(strider_session_options *options,
                                               int per_shape) {
  if (!options)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_session_options_set_optimize_per_shape: options is "
                "NULL");
  options->Opts.OptimizePerShape = per_shape != 0;
  return STRIDER_OK;
}

strider_status
strider_session_options_create(strider_session_options **options) {
  return guarded([&]() -> strider_status {
    if (!options)
      return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                  "strider_session_options_create: options is NULL");
    *options = new strider_session_options();
    return STRIDER_OK;
  });
}

void strider_session_options_free(strider_session_options *options) {
  delete options;
}

strider_status
strider_session_options_set_threads(strider_session_options *options,
                                    int threads) {
  if (!options)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_session_options_set_threads: options is NULL");
  if (threads < 1)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "threads must be at least 1 (got " + llvm::Twine(threads) +
                    ")");
  options->Opts.Threads = threads;
  return STRIDER_OK;
}

strider_status
strider_session_options_set_backend(strider_session_options *options,
                                    const char *backend) {
  if (!options || !backend)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_session_options_set_backend: a pointer is NULL");
  auto B = codegen::findBackend(backend);
  if (!B)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT, B.takeError());
  options->Opts.Backend = (*B)->getName().str();
  return STRIDER_OK;
}

strider_status
strider_session_options_set_device(strider_session_options *options,
                                   DLDevice device) {
  if (!options)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_session_options_set_device: options is NULL");
  // kDLCUDA names the GPU of the cuda backend; tensors stay in host
  // memory either way.
  if (device.device_type == kDLCUDA && device.device_id >= 0) {
    options->Opts.Device = device.device_id;
    options->CudaDevice = true;
    return STRIDER_OK;
  }
  if (device.device_type != kDLCPU || device.device_id != 0)
    return fail(STRIDER_ERROR_UNSUPPORTED,
                "device (type " + llvm::Twine(int(device.device_type)) +
                    ", id " + llvm::Twine(device.device_id) +
                    ") is not available: kDLCPU device 0, or a kDLCUDA "
                    "device for the cuda backend");
  options->Opts.Device = 0;
  options->CudaDevice = false;
  return STRIDER_OK;
}

strider_status
strider_session_options_set_precision(strider_session_options *options,
                                      const char *precision) {
  return guarded([&]() -> strider_status {
    if (!options || !precision)
      return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                  "strider_session_options_set_precision: a pointer is NULL");
    llvm::StringRef P(precision);
    if (P != "fp32" && P != "tf32" && P != "fp16" && P != "bf16")
      return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                  "unknown precision '" + P + "' (fp32, tf32, fp16 or bf16)");
    options->Opts.Precision = P.str();
    return STRIDER_OK;
  });
}

strider_status strider_session_options_set_dim(strider_session_options *options,
                                               const char *symbol,
                                               int64_t size) {
  return guarded([&]() -> strider_status {
    if (!options || !symbol)
      return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                  "strider_session_options_set_dim: a pointer is NULL");
    if (size < 0)
      return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                  "dim '" + llvm::Twine(symbol) + "' cannot be " +
                      llvm::Twine(size));
    options->Opts.Dims[symbol] = size;
    return STRIDER_OK;
  });
}

strider_status
strider_session_options_set_optimize(strider_session_options *options,
                                     int optimize) {
  if (!options)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_session_options_set_optimize: options is NULL");
  options->Opts.Optimize = optimize != 0;
  return STRIDER_OK;
}

strider_status strider_session_options_set_cache_limits(
    strider_session_options *options, size_t max_programs, int64_t max_bytes) {
  if (!options)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_session_options_set_cache_limits: options is NULL");
  if (max_programs < 1 || max_programs > UINT32_MAX)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_session_options_set_cache_limits: max_programs must "
                "be from 1 to 4294967295 (got " +
                    llvm::Twine(uint64_t(max_programs)) + ")");
  if (max_bytes < 0)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_session_options_set_cache_limits: max_bytes must not "
                "be negative (got " +
                    llvm::Twine(max_bytes) + ")");
  options->Opts.MaxSpecializations = unsigned(max_programs);
  options->Opts.MaxCacheBytes = max_bytes;
  return STRIDER_OK;
}

strider_status
strider_session_options_set_max_memory(strider_session_options *options,
                                       uint64_t max_bytes) {
  if (!options)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_session_options_set_max_memory: options is NULL");
  options->Opts.MaxMemory = max_bytes;
  return STRIDER_OK;
}

strider_status
strider_session_options_set_tuning_file(strider_session_options *options,
                                        const char *path) {
  return guarded([&]() -> strider_status {
    if (!options)
      return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                  "strider_session_options_set_tuning_file: options is NULL");
    if (!path) {
      options->Opts.Tuning.reset();
      return STRIDER_OK;
    }
    auto Table = layout::TuningTable::readFile(path);
    if (!Table)
      return fail(STRIDER_ERROR_INVALID_ARGUMENT, Table.takeError());
    options->Opts.Tuning =
        std::make_shared<layout::TuningTable>(std::move(*Table));
    return STRIDER_OK;
  });
}

strider_status strider_session_create(const strider_model *model,
                                      const strider_session_options *options,
                                      strider_session **session) {
  return guarded([&]() -> strider_status {
    if (!session)
      return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                  "strider_session_create: session is NULL");
    *session = nullptr;
    if (!model)
      return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                  "strider_session_create: model is NULL");
    engine::SessionOptions Opts =
        options ? options->Opts : engine::SessionOptions();
    if (options && options->CudaDevice &&
        !llvm::cantFail(codegen::findBackend(Opts.Backend))->runsOnDevice())
      return fail(STRIDER_ERROR_UNSUPPORTED,
                  "a kDLCUDA device needs the cuda backend "
                  "(strider_session_options_set_backend)");
    if (llvm::Error E = engine::checkBackendAvailable(Opts))
      return fail(STRIDER_ERROR_UNSUPPORTED, std::move(E));
    auto S = engine::Session::create(model->M, Opts);
    if (!S)
      return fail(STRIDER_ERROR_INVALID_ARGUMENT, S.takeError());
    auto Result = std::make_unique<strider_session>();
    Result->Model = model;
    Result->S = std::move(*S);
    *session = Result.release();
    return STRIDER_OK;
  });
}

void strider_session_free(strider_session *session) { delete session; }

/// Checks \p Inputs against the model's inputs (count, element types,
/// ranks, static dims) and makes the calling thread's specialization of
/// \p Session theirs (\p Out: its entry).
static strider_status prepare(strider_session *Session, const DLTensor *Inputs,
                              size_t NumInputs, bool NeedData, Prepared *&Out) {
  if (!Session)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT, "session is NULL");
  const engine::Model &M = Session->S->getModel();
  llvm::ArrayRef<const Value *> Want = M.getInputs();
  if (NumInputs != Want.size())
    return fail(STRIDER_ERROR_TENSOR,
                "the model has " + llvm::Twine(Want.size()) + " inputs, got " +
                    llvm::Twine(NumInputs));
  if (NumInputs && !Inputs)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT, "inputs is NULL");
  engine::ShapeKey Key;
  for (size_t I = 0; I < NumInputs; ++I) {
    const std::string &Name = Want[I]->getName();
    const std::string What = "input " + std::to_string(I) + " ('" + Name + "')";
    if (strider_status St = checkTensor(Inputs[I], What, NeedData))
      return St;
    const TensorType &T = Want[I]->getType();
    const ElementType Elt = fromDL(Inputs[I].dtype);
    if (T.getElementType() != ElementType::Unknown && Elt != T.getElementType())
      return fail(STRIDER_ERROR_TENSOR,
                  What + " has element type " + getElementTypeName(Elt) +
                      ", the model expects " +
                      getElementTypeName(T.getElementType()));
    const std::vector<int64_t> Shape = shapeOf(Inputs[I]);
    if (T.hasRank()) {
      bool Ok = Shape.size() == T.getRank();
      for (unsigned D = 0; Ok && D < T.getRank(); ++D)
        Ok = !T.getDim(D).isStatic() || T.getDim(D).getSize() == Shape[D];
      if (!Ok)
        return fail(STRIDER_ERROR_TENSOR, What + " has shape " +
                                              shapeString(Shape) +
                                              ", the model expects " + T.str());
    }
    Key[Name] = {Elt, Shape};
  }
  if (llvm::Error E = Session->S->checkInputRanges(Key))
    return fail(STRIDER_ERROR_TENSOR, std::move(E));
  // Inputs that decide an If's branch key the specialization by value:
  // read where the host can (a prepare without data, or with them in GPU
  // memory, leaves them out and the session says it needs them).
  runtime::TensorMap Control;
  for (const Value *In : M.getControlInputs())
    for (size_t I = 0; I < NumInputs; ++I)
      if (Want[I] == In && Inputs[I].data && isHost(Inputs[I].device))
        Control[In->getName()] = readTensor(Inputs[I]);
  auto S = Session->S->prepare(Key, Session->S->getValueKey(Control));
  if (!S)
    return fail(STRIDER_ERROR_RUN, S.takeError());
  Prepared *P = Session->getPrepared(true);
  if (*S != P->Spec) {
    P->Spec = std::move(*S);
    P->Outputs.clear();
    for (const Value *Out : P->Spec->G->getOutputs())
      P->Outputs.push_back(std::make_unique<TensorInfo>(
          Out->getName(), Out->getType().withLayout(Layout())));
  }
  Out = P;
  return STRIDER_OK;
}

strider_status strider_session_prepare(strider_session *session,
                                       const DLTensor *inputs,
                                       size_t num_inputs) {
  return guarded([&]() -> strider_status {
    Prepared *P = nullptr;
    return prepare(session, inputs, num_inputs, false, P);
  });
}

strider_status strider_session_output_info(const strider_session *session,
                                           size_t index,
                                           strider_tensor_info *info) {
  const Prepared *P = session ? session->getPrepared(false) : nullptr;
  if (session && !P)
    return fail(STRIDER_ERROR_INVALID_ARGUMENT,
                "strider_session_output_info: this thread has not prepared "
                "or run the session yet (output shapes depend on the inputs)");
  return getInfo(P ? &P->Outputs : nullptr, index, info,
                 "strider_session_output_info");
}

strider_status strider_session_run(strider_session *session,
                                   const DLTensor *inputs, size_t num_inputs,
                                   DLTensor *outputs, size_t num_outputs) {
  return guarded([&]() -> strider_status {
    Prepared *P = nullptr;
    if (strider_status St = prepare(session, inputs, num_inputs, true, P))
      return St;
    // The calling thread's entry holds it: an eviction does not free it.
    engine::Specialization &Spec = *P->Spec;
    const InfoList &Outs = P->Outputs;
    if (num_outputs != Outs.size())
      return fail(STRIDER_ERROR_TENSOR,
                  "the model has " + llvm::Twine(Outs.size()) +
                      " outputs, got " + llvm::Twine(num_outputs));
    if (num_outputs && !outputs)
      return fail(STRIDER_ERROR_INVALID_ARGUMENT, "outputs is NULL");
    for (size_t I = 0; I < num_outputs; ++I) {
      const TensorInfo &Want = *Outs[I];
      const std::string What =
          "output " + std::to_string(I) + " ('" + Want.Name + "')";
      if (strider_status St = checkTensor(outputs[I], What, true))
        return St;
      if (fromDL(outputs[I].dtype) != fromDL(Want.DType))
        return fail(STRIDER_ERROR_TENSOR,
                    What + " has element type " + describeDL(outputs[I].dtype) +
                        ", the model writes " + describeDL(Want.DType));
      if (shapeOf(outputs[I]) != Want.Shape)
        return fail(STRIDER_ERROR_TENSOR,
                    What + " has shape " + shapeString(shapeOf(outputs[I])) +
                        ", the model writes " + shapeString(Want.Shape));
    }
    const engine::Model &M = session->S->getModel();
    bool OnDevice = false;
    if (strider_status St = whereRunTensors(*session, inputs, num_inputs,
                                            outputs, num_outputs, OnDevice))
      return St;
    if (OnDevice) {
      runtime::DeviceTensorMap In, Out;
      for (size_t I = 0; I < num_inputs; ++I)
        In[M.getInputs()[I]->getName()] = deviceTensorOf(inputs[I]);
      for (size_t I = 0; I < num_outputs; ++I)
        Out[Outs[I]->Name] = deviceTensorOf(outputs[I]);
      if (llvm::Error E = session->S->runOnDevice(Spec, In, Out))
        return fail(STRIDER_ERROR_RUN, std::move(E));
      return STRIDER_OK;
    }
    runtime::TensorMap Feeds;
    for (size_t I = 0; I < num_inputs; ++I)
      Feeds[M.getInputs()[I]->getName()] = readTensor(inputs[I]);
    // Outputs dense in some dim order are written where they lie.
    runtime::TensorMap Into;
    for (size_t I = 0; I < num_outputs; ++I) {
      llvm::Optional<runtime::Tensor> V = viewTensor(outputs[I]);
      if (!V)
        break;
      Into[Outs[I]->Name] = std::move(*V);
    }
    if (Into.size() == num_outputs) {
      if (llvm::Error E = session->S->runInto(Spec, Feeds, Into))
        return fail(STRIDER_ERROR_RUN, std::move(E));
      return STRIDER_OK;
    }
    auto Results = session->S->run(Spec, Feeds);
    if (!Results)
      return fail(STRIDER_ERROR_RUN, Results.takeError());
    for (size_t I = 0; I < num_outputs; ++I)
      writeTensor(Results->at(Outs[I]->Name), outputs[I]);
    return STRIDER_OK;
  });
}

size_t strider_session_num_programs_built(const strider_session *session) {
  return session ? session->S->getNumBuilt() : 0;
}

size_t strider_session_num_cache_hits(const strider_session *session) {
  return session ? size_t(session->S->getCacheStats().Hits) : 0;
}

double strider_session_build_seconds(const strider_session *session) {
  return session ? session->S->getCacheStats().BuildSeconds : 0.0;
}

size_t strider_session_num_size_classes(const strider_session *session) {
  return session ? size_t(session->S->getCacheStats().SizeClasses) : 0;
}

} // extern "C"
