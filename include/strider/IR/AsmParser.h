//===- AsmParser.h - Textual IR parser --------------------------*- C++ -*-===//
//
// Parses the textual IR (`.lir`, docs/LangRef.md). Errors are located as
// `<buffer>:<line>:<col>: error: <message>`.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_ASMPARSER_H
#define STRIDER_IR_ASMPARSER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace strider {

class Graph;

/// Parse a graph from \p Text; \p BufferName is used in error messages.
/// The result is not verified (callers run verifyGraph).
llvm::Expected<std::unique_ptr<Graph>> parseGraph(llvm::StringRef Text,
                                                  llvm::StringRef BufferName);

} // namespace strider

#endif // STRIDER_IR_ASMPARSER_H
