//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reading and writing tensors as NumPy `.npy` files (format versions 1 to
// 3, little-endian numeric dtypes and bool). A Fortran-order array is read
// as a tensor whose layout reverses its dims; files are always written in
// C order.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_RUNTIME_NPY_H
#define STRIDER_RUNTIME_NPY_H

#include "strider/Runtime/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace strider {
namespace runtime {

/// Parse the bytes of a .npy file; \p Name is used in error messages.
llvm::Expected<Tensor> parseNpy(llvm::StringRef Bytes, llvm::StringRef Name);
/// Read the .npy file at \p Path.
llvm::Expected<Tensor> readNpyFile(llvm::StringRef Path);
/// The bytes of a version-1.0 .npy file holding \p T in C order.
llvm::Expected<std::string> writeNpy(const Tensor &T);

} // namespace runtime
} // namespace strider

#endif // STRIDER_RUNTIME_NPY_H
