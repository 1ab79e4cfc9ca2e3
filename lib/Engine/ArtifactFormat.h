//===- ArtifactFormat.h - model.strider, byte by byte -----------*- C++ -*-===//
//
// Private to lib/Engine. All integers little-endian.
//
//   offset  size  field
//        0     8  magic: 0x89 'S' 'T' 'R' 'I' 'D' 'R' '\n'
//        8     4  format version (ArtifactFormatVersion)
//       12     4  number of sections (1..MaxSections)
//       16     8  size of the whole file in bytes
//       24     8  checksum of bytes [0, 24) and [32, end of section table)
//       32    16  Strider version that wrote it, NUL-padded
//       48    16  layout target (cpu-avx512, ...), NUL-padded
//       64  32*n  section table: u32 kind, u32 0, u64 offset, u64 size,
//                 u64 checksum of the section's bytes
//
// Sections start at multiples of 64, in table order, without overlap;
// the bytes between them are zero. Kinds:
//   1 meta:          "key=value\n" lines (derived_format, source)
//   2 graph:         textual IR; constants of 1 KiB and more are
//                    dense_external<OFFSET> into the weights section
//   3 weights:       constant data, each entry 64-byte aligned
//   4 derived index: per entry u64 offset (into derived data, a multiple
//                    of 64), u64 float count, u32 key length, the key,
//                    zero padding to a multiple of 8
//   5 derived data:  the floats, each entry padded to 64 bytes
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_ENGINE_ARTIFACTFORMAT_H
#define STRIDER_LIB_ENGINE_ARTIFACTFORMAT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>

namespace strider {
namespace engine {
namespace format {

constexpr uint8_t Magic[8] = {0x89, 'S', 'T', 'R', 'I', 'D', 'R', '\n'};
constexpr uint64_t HeaderSize = 64;
constexpr uint64_t EntrySize = 32;
constexpr uint32_t MaxSections = 16;
constexpr uint64_t Alignment = 64;
constexpr uint64_t NameField = 16;

enum SectionKind : uint32_t {
  Meta = 1,
  GraphText = 2,
  Weights = 3,
  DerivedIndex = 4,
  DerivedData = 5,
};
constexpr uint32_t NumKinds = 5;

/// A 64-bit checksum of \p Bytes (eight interleaved multiply-rotate lanes
/// over 8-byte words, then a mix of the lanes, the tail and the length):
/// a change within one word always changes it, other changes with
/// overwhelming probability; at memory speed. \p Done, if
/// given, is called with each consecutive piece (16 MiB) once it is
/// summed.
uint64_t checksum(llvm::ArrayRef<uint8_t> Bytes,
                  llvm::function_ref<void(llvm::ArrayRef<uint8_t>)> Done =
                      nullptr);

inline uint64_t alignTo64(uint64_t N) { return (N + 63) / 64 * 64; }

} // namespace format
} // namespace engine
} // namespace strider

#endif // STRIDER_LIB_ENGINE_ARTIFACTFORMAT_H
