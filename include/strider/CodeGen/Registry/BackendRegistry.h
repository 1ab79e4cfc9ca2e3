//===- BackendRegistry.h - Every backend, by name ---------------*- C++ -*-===//
//
// The one place that knows which backends this build has: the engine, the
// C API, the tools and the conformance harness find a backend here by the
// name a user gives (`--backend=NAME`) and use it through Backend.h.
// Backends a build leaves out (cuda without nvcc) are still listed, and
// say why they are not available.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_CODEGEN_REGISTRY_BACKENDREGISTRY_H
#define STRIDER_CODEGEN_REGISTRY_BACKENDREGISTRY_H

#include "strider/CodeGen/Backend.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace strider {
namespace codegen {

/// Every backend, in name order: cpu, cuda, cuda-emulated, reference.
llvm::ArrayRef<const Backend *> getBackends();
/// The backend named \p Name, or null.
const Backend *lookupBackend(llvm::StringRef Name);
/// The backend named \p Name, or "unknown backend 'NAME' (available:
/// cpu, cuda, cuda-emulated, reference)".
llvm::Expected<const Backend *> findBackend(llvm::StringRef Name);
/// "cpu, cuda, cuda-emulated, reference".
std::string getBackendNames();
/// The backend that lowers graphs for layout target \p Target on this
/// machine without a device (cpu for cpu-* targets, cuda-emulated for
/// cuda-*: the CUDA backend's plan), or null.
const Backend *getHostBackendFor(llvm::StringRef Target);
/// The backend whose kernels `--tune` times for layout target \p Target
/// (cpu, cuda), or null.
const Backend *getTunerFor(llvm::StringRef Target);
/// One line per backend ("  cpu - the CPU SIMD backend ..."), for --help.
std::string describeBackends();

} // namespace codegen
} // namespace strider

#endif // STRIDER_CODEGEN_REGISTRY_BACKENDREGISTRY_H
