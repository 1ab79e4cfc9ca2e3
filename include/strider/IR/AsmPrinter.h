//===- AsmPrinter.h - Textual IR printer ------------------------*- C++ -*-===//
//
// Prints a graph in the textual IR (`.lir`) described in docs/LangRef.md.
// The output is deterministic and parses back to an identical graph. Large
// constants may go to a separate binary blob (a `.lir.weights` file) and
// print as references into it.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_ASMPRINTER_H
#define STRIDER_IR_ASMPRINTER_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace strider {

class Graph;
class Attribute;
class TensorData;

/// Where the printer puts constant data it does not print inline.
class ExternalDataWriter {
public:
  virtual ~ExternalDataWriter();
  /// Stores \p Bytes; returns their offset in the blob (a multiple of 64).
  virtual uint64_t write(llvm::ArrayRef<uint8_t> Bytes) = 0;
};

/// An ExternalDataWriter that appends to a byte vector, each entry padded
/// with zeros to a multiple of 64 bytes.
class ExternalDataBuffer : public ExternalDataWriter {
public:
  uint64_t write(llvm::ArrayRef<uint8_t> Bytes) override;
  /// The blob: every entry written so far.
  const std::vector<uint8_t> &getBytes() const { return Bytes; }

private:
  std::vector<uint8_t> Bytes;
};

/// An ExternalDataWriter that streams the blob to \p OS (offsets count from
/// the first write), each entry padded with zeros to a multiple of 64
/// bytes; for blobs too large to hold twice in memory.
class ExternalDataStream : public ExternalDataWriter {
public:
  explicit ExternalDataStream(llvm::raw_ostream &OS) : OS(OS) {}
  uint64_t write(llvm::ArrayRef<uint8_t> Bytes) override;
  /// The blob's size so far.
  uint64_t getSize() const { return Size; }

private:
  llvm::raw_ostream &OS;
  uint64_t Size = 0;
};

/// How printGraph writes constant data.
struct PrintOptions {
  /// Constants of at least MinExternalBytes bytes go to External and print
  /// as `dense_external<OFFSET>`, except those that print as a splat
  /// (`dense<0.0>`); the same TensorData object is written once. Null:
  /// every constant inline (the output of printGraph(G, OS)).
  ExternalDataWriter *External = nullptr;
  uint64_t MinExternalBytes = 1024;
};

/// Print \p G as textual IR, every constant inline.
void printGraph(const Graph &G, llvm::raw_ostream &OS);

/// Print \p G as textual IR, large constants as \p Opts says.
void printGraph(const Graph &G, llvm::raw_ostream &OS,
                const PrintOptions &Opts);

/// Print one attribute value as it appears in `{name = value}`.
void printAttribute(const Attribute &A, llvm::raw_ostream &OS);

/// Print constant data as `dense<...> : tensor<...>`.
void printTensorData(const TensorData &D, llvm::raw_ostream &OS);

} // namespace strider

#endif // STRIDER_IR_ASMPRINTER_H
