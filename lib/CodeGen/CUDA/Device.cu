//===- Device.cu - CUDA device discovery and smoke test -------------------===//
//
// Every query of the machine's GPUs the CUDA backend makes: which devices
// there are, whether one can run programs, its name and its layout
// target, and a smoke kernel. See Device.h.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/CUDA/Device.h"

#include <cuda_runtime.h>

#include <vector>

using namespace strider;
using namespace strider::cuda;

namespace {
/// Error for a failed CUDA call; keeps the cudaError_t as the error code.
class CudaError : public llvm::ErrorInfo<CudaError> {
public:
  static char ID;
  CudaError(cudaError_t Code, std::string What)
      : Code(Code), What(std::move(What)) {}
  void log(llvm::raw_ostream &OS) const override {
    OS << What << ": " << cudaGetErrorString(Code);
  }
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  cudaError_t Code;
  std::string What;
};
char CudaError::ID = 0;

llvm::Error check(cudaError_t Code, const char *What) {
  if (Code == cudaSuccess)
    return llvm::Error::success();
  return llvm::make_error<CudaError>(Code, What);
}

__global__ void writePattern(int *Out, int N) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < N)
    Out[I] = I * 3 + 1;
}
} // namespace

llvm::Expected<std::vector<DeviceInfo>> cuda::listDevices() {
  int Count = 0;
  cudaError_t Status = cudaGetDeviceCount(&Count);
  // No driver or no GPU is a normal state of a build machine, not an error.
  if (Status == cudaErrorNoDevice || Status == cudaErrorInsufficientDriver) {
    (void)cudaGetLastError(); // Clear the sticky error state.
    return std::vector<DeviceInfo>();
  }
  if (Status != cudaSuccess)
    return llvm::make_error<CudaError>(Status, "cudaGetDeviceCount");
  std::vector<DeviceInfo> Devices;
  for (int I = 0; I < Count; ++I) {
    cudaDeviceProp Prop;
    cudaError_t PropStatus = cudaGetDeviceProperties(&Prop, I);
    if (PropStatus != cudaSuccess)
      return llvm::make_error<CudaError>(PropStatus, "cudaGetDeviceProperties");
    Devices.push_back({I, Prop.name, Prop.major, Prop.minor,
                       Prop.totalGlobalMem, Prop.multiProcessorCount});
  }
  return Devices;
}

llvm::Error cuda::runSmokeTest(int Ordinal) {
  if (llvm::Error E = check(cudaSetDevice(Ordinal), "cudaSetDevice"))
    return E;
  constexpr int N = 1000;
  int *Dev = nullptr;
  if (llvm::Error E = check(cudaMalloc(&Dev, N * sizeof(int)), "cudaMalloc"))
    return E;
  writePattern<<<(N + 255) / 256, 256>>>(Dev, N);
  std::vector<int> Host(N);
  cudaError_t Launch = cudaGetLastError();
  cudaError_t Copy = Launch == cudaSuccess
                         ? cudaMemcpy(Host.data(), Dev, N * sizeof(int),
                                      cudaMemcpyDeviceToHost)
                         : cudaSuccess;
  (void)cudaFree(Dev);
  if (llvm::Error E = check(Launch, "kernel launch"))
    return E;
  if (llvm::Error E = check(Copy, "cudaMemcpy"))
    return E;
  for (int I = 0; I < N; ++I)
    if (Host[I] != I * 3 + 1)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "smoke test kernel wrote a wrong value");
  return llvm::Error::success();
}

llvm::Error cuda::checkDevice(int Ordinal) {
  int Count = 0;
  cudaError_t Status = cudaGetDeviceCount(&Count);
  if (Status != cudaSuccess) {
    (void)cudaGetLastError(); // Clear the sticky state.
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        llvm::Twine("no CUDA device on this machine (") +
            cudaGetErrorString(Status) + ")");
  }
  if (Count == 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no CUDA device on this machine");
  if (Ordinal < 0 || Ordinal >= Count)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "device " + llvm::Twine(Ordinal) + " does not exist (" +
            llvm::Twine(Count) + (Count == 1 ? " device)" : " devices)"));
  return llvm::Error::success();
}

llvm::Expected<std::string> cuda::getDeviceName(int Ordinal) {
  if (llvm::Error E = checkDevice(Ordinal))
    return llvm::Expected<std::string>(std::move(E));
  cudaDeviceProp Prop;
  if (llvm::Error E = check(cudaGetDeviceProperties(&Prop, Ordinal),
                            "cudaGetDeviceProperties"))
    return llvm::Expected<std::string>(std::move(E));
  return std::string(Prop.name) + " (sm_" + std::to_string(Prop.major) +
         std::to_string(Prop.minor) + ")";
}

llvm::Expected<std::string> cuda::getDeviceTarget(int Ordinal) {
  if (llvm::Error E = checkDevice(Ordinal))
    return llvm::Expected<std::string>(std::move(E));
  int Major = 0;
  if (llvm::Error E =
          check(cudaDeviceGetAttribute(
                    &Major, cudaDevAttrComputeCapabilityMajor, Ordinal),
                "cudaDeviceGetAttribute"))
    return llvm::Expected<std::string>(std::move(E));
  return std::string(Major >= 9 ? "cuda-sm90" : "cuda-sm80");
}
