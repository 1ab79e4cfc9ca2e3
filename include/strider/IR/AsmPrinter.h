//===- AsmPrinter.h - Textual IR printer ------------------------*- C++ -*-===//
//
// Prints a graph in the textual IR (`.lir`) described in docs/LangRef.md.
// The output is deterministic and parses back to an identical graph.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_ASMPRINTER_H
#define STRIDER_IR_ASMPRINTER_H

namespace llvm {
class raw_ostream;
}

namespace strider {

class Graph;
class Attribute;
class TensorData;

/// Print \p G as textual IR.
void printGraph(const Graph &G, llvm::raw_ostream &OS);

/// Print one attribute value as it appears in `{name = value}`.
void printAttribute(const Attribute &A, llvm::raw_ostream &OS);

/// Print constant data as `dense<...> : tensor<...>`.
void printTensorData(const TensorData &D, llvm::raw_ostream &OS);

} // namespace strider

#endif // STRIDER_IR_ASMPRINTER_H
