//===- Artifact.h - The compiled model file (model.strider) -----*- C++ -*-===//
//
// A compiled model in one binary file, made to be mapped rather than read:
// the graph with its layouts (textual IR whose large constants refer to
// the weights section), the weights, and the constants the CPU lowering
// derived from them (GEMM panels and reordered taps, packed for the SIMD
// kernels of the machine it was compiled on), each section 64-byte aligned
// and checksummed. Loading validates every byte that is used before using
// it; a session lowering the graph then takes the packed constants from
// the mapping instead of repacking the weights (which are not read). The
// layout is documented in docs/Embedding.md.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_ENGINE_ARTIFACT_H
#define STRIDER_ENGINE_ARTIFACT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace strider {

class Graph;

namespace cpu {
class DerivedStore;
}

namespace engine {

/// The format version this build writes and reads.
constexpr uint32_t ArtifactFormatVersion = 1;

/// A DerivedStore that keeps what one lowering derived, for
/// writeArtifact (the data stays owned by that lowering's program, which
/// must outlive the write).
std::shared_ptr<cpu::DerivedStore> createRecordingStore();

/// The sizes one dynamic dim of a graph input may take: what an artifact
/// compiled with a shape range serves (strider-compile --shape
/// x=1x3x48x100..1000 gives {x, 3, 100, 1000}).
struct InputRange {
  std::string Input;
  unsigned Axis = 0;
  int64_t Min = 1, Max = 1;
  bool operator==(const InputRange &O) const {
    return Input == O.Input && Axis == O.Axis && Min == O.Min && Max == O.Max;
  }
};

/// Writes \p G (layouts assigned, for layout target \p Target) and what
/// \p Recorded recorded (a createRecordingStore() store, or null: none)
/// as an artifact to \p OS. \p DerivedFormat names the kernels the
/// derived data was packed for (cpu::getDerivedFormat()). \p Ranges are
/// the sizes its dynamic input dims may take (each must name a dynamic dim
/// of a graph input of \p G).
llvm::Error writeArtifact(llvm::raw_ostream &OS, const Graph &G,
                          llvm::StringRef Target,
                          const cpu::DerivedStore *Recorded,
                          llvm::StringRef DerivedFormat,
                          llvm::ArrayRef<InputRange> Ranges = {});

/// Error unless every range of \p Ranges names a dynamic dim of a graph
/// input of \p G, with 1 <= Min <= Max, at most one range per dim.
llvm::Error checkInputRanges(const Graph &G, llvm::ArrayRef<InputRange> Ranges);

/// Error unless each input shape of \p Shapes (by input name) has its
/// dims in \p Ranges: "WHERE: input 'x' dim 3 is 1200, outside the range
/// 100..1000 SOURCE".
llvm::Error
checkShapesInRanges(llvm::ArrayRef<InputRange> Ranges,
                    const std::map<std::string, std::vector<int64_t>> &Shapes,
                    const llvm::Twine &Where, llvm::StringRef Source);

struct Artifact {
  std::unique_ptr<Graph> G;
  /// The packed constants, viewing the mapping (which it keeps alive).
  std::shared_ptr<cpu::DerivedStore> Derived;
  std::string Target;        ///< Layout target, e.g. cpu-avx512.
  std::string DerivedFormat; ///< Kernels it was packed for.
  std::string StriderVersion;
  size_t DerivedArrays = 0;
  /// The input sizes it serves (empty: any its graph accepts).
  std::vector<InputRange> Ranges;
};

/// The version string of this build ("0.1.0").
llvm::StringRef getStriderVersion();

/// Reads artifact file \p Path (mapped, not copied). Refused with one
/// message naming the file: a file too short, of another format, version
/// or Strider version, a section out of bounds, a checksum mismatch, a
/// graph that does not parse or verify, a target that is not a CPU one,
/// constants packed for other kernels than \p DerivedFormat (this
/// machine's, cpu::getDerivedFormat(); empty: not checked, for tests).
llvm::Expected<Artifact> readArtifact(llvm::StringRef Path,
                                      llvm::StringRef DerivedFormat);
/// The same for \p Bytes in memory that \p Owner keeps alive (\p Name
/// for messages). Bytes that are not 64-byte aligned are copied.
llvm::Expected<Artifact> readArtifactBytes(llvm::ArrayRef<uint8_t> Bytes,
                                           std::shared_ptr<const void> Owner,
                                           llvm::StringRef Name,
                                           llvm::StringRef DerivedFormat);

/// Whether \p Bytes start like an artifact (its magic).
bool isArtifact(llvm::ArrayRef<uint8_t> Bytes);

} // namespace engine
} // namespace strider

#endif // STRIDER_ENGINE_ARTIFACT_H
