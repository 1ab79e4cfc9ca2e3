//===- Libraries.cpp - Loading cuDNN and cuBLASLt at run time -------------===//
//
// dlopen of libcudnn.so.9 and libcublasLt.so.13 (or .12), each only when a
// program has a step for it, every entry point the runners call resolved by
// name, and the handles bound to a program's stream. Nothing here is linked at
// build time, so binaries start (and say what is missing) on machines without
// the libraries.
//
//===----------------------------------------------------------------------===//

#include "LibrariesImpl.h"

#include <dlfcn.h>

using namespace strider;
using namespace strider::cuda;

llvm::Error cuda::makeLibraryError(const llvm::Twine &What) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), What);
}

char NoAlgorithmError::ID = 0;

llvm::Error cuda::makeNoAlgorithmError(const llvm::Twine &What) {
  return llvm::make_error<NoAlgorithmError>(What.str());
}

llvm::Error cuda::makeCudaError(cudaError_t Code, const llvm::Twine &What) {
  return makeLibraryError(What + ": " + cudaGetErrorString(Code));
}

DeviceBuffer::~DeviceBuffer() {
  if (Ptr)
    (void)cudaFree(Ptr);
}

llvm::Error DeviceBuffer::allocate(size_t Bytes, const llvm::Twine &What) {
  cudaError_t E = cudaMalloc(&Ptr, Bytes ? Bytes : 1);
  if (E != cudaSuccess) {
    Ptr = nullptr;
    return makeCudaError(E, "cannot allocate " + llvm::Twine(Bytes) +
                                " bytes for " + What);
  }
  return llvm::Error::success();
}

llvm::Error DeviceBuffer::upload(const std::vector<uint8_t> &Bytes,
                                 const llvm::Twine &What) {
  if (llvm::Error E = allocate(Bytes.size(), What))
    return E;
  if (Bytes.empty())
    return llvm::Error::success();
  cudaError_t E =
      cudaMemcpy(Ptr, Bytes.data(), Bytes.size(), cudaMemcpyHostToDevice);
  if (E != cudaSuccess)
    return makeCudaError(E, "uploading " + What);
  return llvm::Error::success();
}

namespace {

std::string takeDlError() {
  const char *E = dlerror();
  return E ? E : "unknown error";
}

/// Opens the first of \p Names that loads; on failure, \p Why holds each
/// one's dlerror.
void *openFirst(std::initializer_list<const char *> Names, std::string &Loaded,
                std::string &Why) {
  for (const char *Name : Names) {
    // Never closed: unloading cuDNN or cuBLAS while their own helper
    // libraries and CUDA state remain is unsafe; dlopen counts references.
    if (void *H = dlopen(Name, RTLD_NOW | RTLD_LOCAL)) {
      Loaded = Name;
      return H;
    }
    if (!Why.empty())
      Why += "; ";
    Why += takeDlError();
  }
  return nullptr;
}

/// Resolves \p Name in \p Lib into \p Fn.
template <typename FnPtr>
llvm::Error resolve(void *Lib, const std::string &LibName, const char *Name,
                    const char *Hint, FnPtr &Fn) {
  (void)dlerror();
  void *Sym = dlsym(Lib, Name);
  if (!Sym)
    return makeLibraryError(LibName + " has no " + Name + " (" + takeDlError() +
                            "); " + Hint);
  Fn = reinterpret_cast<FnPtr>(Sym);
  return llvm::Error::success();
}

const char *const CudnnHint =
    "install cuDNN 9 or put its directory in LD_LIBRARY_PATH";
const char *const CublasLtHint =
    "install cuBLAS 13 or 12 (libcublasLt) or put its directory in "
    "LD_LIBRARY_PATH";

} // namespace

llvm::Error cuda::loadCudnnApi(Libraries::Impl &I) {
  std::string Why;
  void *Dnn = openFirst({"libcudnn.so.9"}, I.DnnName, Why);
  if (!Dnn)
    return makeLibraryError("cannot load libcudnn.so.9 (cuDNN 9): " + Why +
                            "; " + CudnnHint);
#define STRIDER_RESOLVE(Fn)                                                    \
  if (llvm::Error E = resolve(Dnn, I.DnnName, #Fn, CudnnHint, I.Dnn.Fn))       \
    return E;
  STRIDER_CUDNN_FUNCTIONS(STRIDER_RESOLVE)
#undef STRIDER_RESOLVE
  const size_t DnnVersion = I.Dnn.cudnnGetVersion();
  if (DnnVersion / 10000 != 9)
    return makeLibraryError(I.DnnName + " is cuDNN version " +
                            llvm::Twine(DnnVersion) + ", not 9.x; " +
                            CudnnHint);
  return llvm::Error::success();
}

llvm::Error cuda::loadCublasLtApi(Libraries::Impl &I) {
  std::string Why;
  void *Lt =
      openFirst({"libcublasLt.so.13", "libcublasLt.so.12"}, I.LtName, Why);
  if (!Lt)
    return makeLibraryError(
        "cannot load libcublasLt.so.13 or libcublasLt.so.12 (cuBLASLt): " +
        Why + "; " + CublasLtHint);
#define STRIDER_RESOLVE(Fn)                                                    \
  if (llvm::Error E = resolve(Lt, I.LtName, #Fn, CublasLtHint, I.Lt.Fn))       \
    return E;
  STRIDER_CUBLASLT_FUNCTIONS(STRIDER_RESOLVE)
#undef STRIDER_RESOLVE
  const size_t LtVersion = I.Lt.cublasLtGetVersion();
  if (LtVersion / 10000 != 12 && LtVersion / 10000 != 13)
    return makeLibraryError(I.LtName + " is cuBLASLt version " +
                            llvm::Twine(LtVersion) + ", not 12.x or 13.x; " +
                            CublasLtHint);
  return llvm::Error::success();
}

Libraries::Impl::~Impl() {
  // Teardown errors have no one to go to.
  if (LtHandle)
    (void)Lt.cublasLtDestroy(LtHandle);
  if (DnnHandle)
    (void)Dnn.cudnnDestroy(DnnHandle);
}

cudnnStatus_t Libraries::Impl::bindStream(cudaStream_t S) {
  if (S == Stream)
    return CUDNN_STATUS_SUCCESS;
  cudnnStatus_t Status = Dnn.cudnnSetStream(DnnHandle, S);
  if (Status == CUDNN_STATUS_SUCCESS)
    Stream = S;
  return Status;
}

llvm::Error Libraries::Impl::dnnError(cudnnStatus_t Status,
                                      const llvm::Twine &What) const {
  // cuDNN keeps a longer message of its last error (say, which parameter).
  char Detail[512] = {};
  Dnn.cudnnGetLastErrorString(Detail, sizeof(Detail));
  std::string Message = What.str() + ": " + Dnn.cudnnGetErrorString(Status);
  if (Detail[0])
    Message += std::string(" (") + Detail + ")";
  // What the description asks for is not supported (as opposed to a
  // driver, runtime or sublibrary that is missing or too old).
  switch (Status) {
  case CUDNN_STATUS_NOT_SUPPORTED:
  case CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN:
  case CUDNN_STATUS_NOT_SUPPORTED_SHAPE:
  case CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE:
  case CUDNN_STATUS_NOT_SUPPORTED_LAYOUT:
  case CUDNN_STATUS_NOT_SUPPORTED_PADDING:
    return makeNoAlgorithmError(Message);
  default:
    return makeLibraryError(Message);
  }
}

llvm::Error Libraries::Impl::ltError(cublasStatus_t Status,
                                     const llvm::Twine &What) const {
  return makeLibraryError(What + ": " + Lt.cublasLtGetStatusString(Status));
}

cudaError_t cuda::toCudaError(cudnnStatus_t Status) {
  // cuDNN 9 codes are a category (thousands) plus a specific error.
  switch (int(CUDNN_STATUS_CATEGORY(int(Status)))) {
  case CUDNN_STATUS_SUCCESS:
    return cudaSuccess;
  case CUDNN_STATUS_BAD_PARAM:
    return cudaErrorInvalidValue;
  case CUDNN_STATUS_NOT_SUPPORTED:
    return cudaErrorNotSupported;
  case CUDNN_STATUS_EXECUTION_FAILED: {
    // The launch's own error, if CUDA has one.
    cudaError_t E = cudaGetLastError();
    return E != cudaSuccess ? E : cudaErrorLaunchFailure;
  }
  default:
    return cudaErrorUnknown;
  }
}

cudaError_t cuda::toCudaError(cublasStatus_t Status) {
  switch (Status) {
  case CUBLAS_STATUS_SUCCESS:
    return cudaSuccess;
  case CUBLAS_STATUS_INVALID_VALUE:
    return cudaErrorInvalidValue;
  case CUBLAS_STATUS_NOT_SUPPORTED:
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return cudaErrorNotSupported;
  case CUBLAS_STATUS_EXECUTION_FAILED: {
    cudaError_t E = cudaGetLastError();
    return E != cudaSuccess ? E : cudaErrorLaunchFailure;
  }
  default:
    return cudaErrorUnknown;
  }
}

Libraries::Libraries(std::unique_ptr<Impl> I) : I(std::move(I)) {}
Libraries::~Libraries() = default;

llvm::Expected<std::unique_ptr<Libraries>>
Libraries::create(cudaStream_t Stream, LibrarySet Needed) {
  auto I = std::make_unique<Impl>();
  if (Needed.Cudnn) {
    if (llvm::Error E = loadCudnnApi(*I))
      return E;
    cudnnStatus_t DS = I->Dnn.cudnnCreate(&I->DnnHandle);
    if (DS != CUDNN_STATUS_SUCCESS) {
      I->DnnHandle = nullptr;
      return I->dnnError(DS, "cannot create a cuDNN handle (" + I->DnnName +
                                 ") on the current device");
    }
    DS = I->Dnn.cudnnSetStream(I->DnnHandle, Stream);
    if (DS != CUDNN_STATUS_SUCCESS)
      return I->dnnError(DS, "cannot bind cuDNN to the program's stream");
    I->Stream = Stream;
  }
  if (Needed.CublasLt) {
    if (llvm::Error E = loadCublasLtApi(*I))
      return E;
    cublasStatus_t LS = I->Lt.cublasLtCreate(&I->LtHandle);
    if (LS != CUBLAS_STATUS_SUCCESS) {
      I->LtHandle = nullptr;
      return I->ltError(LS,
                        "cannot create a cuBLASLt handle (" + I->LtName + ")");
    }
  }
  return std::unique_ptr<Libraries>(new Libraries(std::move(I)));
}

bool Libraries::hasCudnn() const { return I->DnnHandle != nullptr; }
bool Libraries::hasCublasLt() const { return I->LtHandle != nullptr; }

/// "major.minor.patch" of a version number major * 10000 + minor * 100 +
/// patch (cuDNN 9's and cuBLAS's encoding).
static std::string formatVersion(size_t V) {
  return std::to_string(V / 10000) + "." + std::to_string(V / 100 % 100) + "." +
         std::to_string(V % 100);
}

std::string Libraries::getLastCudnnError() const {
  if (!hasCudnn())
    return std::string();
  char Detail[512] = {};
  I->Dnn.cudnnGetLastErrorString(Detail, sizeof(Detail));
  return Detail;
}

std::vector<std::string> Libraries::describe() const {
  std::vector<std::string> R;
  if (hasCudnn())
    R.push_back(I->DnnName + " (cuDNN " +
                formatVersion(I->Dnn.cudnnGetVersion()) + ")");
  if (hasCublasLt())
    R.push_back(I->LtName + " (cuBLASLt " +
                formatVersion(I->Lt.cublasLtGetVersion()) + ")");
  return R;
}

LibraryStatus cuda::toLibraryStatus(const Libraries::Impl &L,
                                    cudnnStatus_t Status) {
  LibraryStatus R;
  R.Code = toCudaError(Status);
  if (Status != CUDNN_STATUS_SUCCESS)
    R.Detail = L.Dnn.cudnnGetErrorString(Status);
  return R;
}

LibraryStatus cuda::toLibraryStatus(const Libraries::Impl &L,
                                    cublasStatus_t Status) {
  LibraryStatus R;
  R.Code = toCudaError(Status);
  if (Status != CUBLAS_STATUS_SUCCESS)
    R.Detail = L.Lt.cublasLtGetStatusString(Status);
  return R;
}
