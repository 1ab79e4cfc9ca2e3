//===- AsmParser.h - Textual IR parser --------------------------*- C++ -*-===//
//
// Parses the textual IR (`.lir`, docs/LangRef.md). Errors are located as
// `<buffer>:<line>:<col>: error: <message>`. Constants written as
// `dense_external<OFFSET>` are views of an external blob (the `.lir.weights`
// file next to a `.lir` file), not copies.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_ASMPARSER_H
#define STRIDER_IR_ASMPARSER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>

namespace strider {

class Graph;

/// The blob `dense_external<OFFSET>` constants refer to.
struct ExternalData {
  llvm::ArrayRef<uint8_t> Bytes;
  /// Keeps Bytes alive (e.g. a mapped file).
  std::shared_ptr<const void> Owner;
  /// For messages (the sidecar's path).
  std::string Name;
};

/// Parse a graph from \p Text; \p BufferName is used in error messages.
/// Its `dense_external<...>` constants view \p External's bytes and keep
/// its Owner alive; without \p External they are an error. The result is
/// not verified (callers run verifyGraph).
llvm::Expected<std::unique_ptr<Graph>>
parseGraph(llvm::StringRef Text, llvm::StringRef BufferName,
           const ExternalData *External = nullptr);

/// Reads textual IR file \p Path (`-`: stdin, which has no weights file);
/// when it uses dense_external, its sidecar \p Path + ".weights" (e.g.
/// model.lir.weights) is mapped (llvm::MemoryBuffer::getFile with
/// RequiresNullTerminator=false, so large files are mmapped) and its
/// constants view the mapping, which lives as long as they do. Errors name
/// the file. The result is not verified.
llvm::Expected<std::unique_ptr<Graph>> readGraphFile(llvm::StringRef Path);

/// Maps the weights file \p Path (as readGraphFile does) for parseGraph.
/// Errors name the file.
llvm::Expected<ExternalData> readExternalData(llvm::StringRef Path);

} // namespace strider

#endif // STRIDER_IR_ASMPARSER_H
