//===- FileIO.h - Reading inputs and writing outputs safely -----*- C++ -*-===//
//
// Input files (`-` is stdin) and outputs written atomically: a temporary
// file next to the target, renamed over it only when writing succeeded, so
// a failed run never leaves a half-written or clobbered output.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_SUPPORT_FILEIO_H
#define STRIDER_SUPPORT_FILEIO_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>

namespace llvm {
class raw_ostream;
}

namespace strider {

/// Read \p Path (`-` reads stdin). Errors name the file.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readInputFile(llvm::StringRef Path);

/// Write an output through \p Writer: `-` writes to stdout, anything else
/// is written to a temporary file in the same directory and renamed over
/// \p Path once \p Writer succeeded. Errors name the file.
llvm::Error
writeOutputFile(llvm::StringRef Path,
                llvm::function_ref<llvm::Error(llvm::raw_ostream &)> Writer);

} // namespace strider

#endif // STRIDER_SUPPORT_FILEIO_H
