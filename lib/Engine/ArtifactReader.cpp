//===- ArtifactReader.cpp - Loading and validating model.strider ----------===//
//
// Every field is checked before it is used: bounds with overflow-safe
// arithmetic, checksums of the header and of each section, the meta
// lines, the derived index, and the graph through the IR parser and
// verifier. The weights and derived data are used in place.
//
//===----------------------------------------------------------------------===//

#include "ArtifactFormat.h"

#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/Engine/Artifact.h"
#include "strider/IR/AsmParser.h"
#include "strider/IR/Graph.h"
#include "strider/IR/Verifier.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Endian.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace strider;
using namespace strider::engine;

#ifndef STRIDER_VERSION_STRING
#define STRIDER_VERSION_STRING "unknown"
#endif

llvm::StringRef engine::getStriderVersion() { return STRIDER_VERSION_STRING; }

namespace {

// The fuzzer's build checks everything but the checksums, so that its
// mutations reach the section table, the index and the graph parser
// (which must stand any bytes on their own).
#ifdef STRIDER_FUZZING_IGNORE_CHECKSUMS
constexpr bool IgnoreChecksums = true;
#else
constexpr bool IgnoreChecksums = false;
#endif

uint64_t rotl(uint64_t V, int R) { return (V << R) | (V >> (64 - R)); }

constexpr uint64_t P1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t P2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t P3 = 0x165667B19E3779F9ull;

uint64_t read64(const uint8_t *P) {
  return llvm::support::endian::read64le(P);
}
uint32_t read32(const uint8_t *P) {
  return llvm::support::endian::read32le(P);
}

/// The derived constants of an artifact, viewing its bytes.
class MappedStore final : public cpu::DerivedStore {
public:
  explicit MappedStore(std::shared_ptr<const void> Owner)
      : Owner(std::move(Owner)) {}
  /// The artifact's graph names the keys: any source is its own. What it
  /// does not hold (shapes it was not packed at) is packed by the first
  /// specialization that needs it and shared by later ones.
  std::shared_ptr<const float> find(llvm::StringRef Key, size_t Count,
                                    const TensorData *Source) const override {
    auto It = Entries.find(Key);
    if (It == Entries.end() || It->second.second != Count)
      return Packed.find(Key, Count, Source);
    return std::shared_ptr<const float>(Owner, It->second.first);
  }
  void add(llvm::StringRef Key, std::shared_ptr<const float> Data, size_t Count,
           const TensorDataRef &Source) override {
    Packed.add(Key, std::move(Data), Count, Source);
  }

  llvm::StringMap<std::pair<const float *, size_t>> Entries;

private:
  std::shared_ptr<const void> Owner;
  cpu::SharedDerivedStore Packed;
};

/// A name field of the header: NUL-padded text without other NULs.
llvm::Optional<std::string> readName(const uint8_t *P) {
  size_t Len = 0;
  while (Len < format::NameField && P[Len])
    ++Len;
  for (size_t I = Len; I < format::NameField; ++I)
    if (P[I])
      return llvm::None;
  for (size_t I = 0; I < Len; ++I)
    if (P[I] < 0x20 || P[I] > 0x7e)
      return llvm::None;
  return std::string(reinterpret_cast<const char *>(P), Len);
}

} // namespace

uint64_t
format::checksum(llvm::ArrayRef<uint8_t> Bytes,
                 llvm::function_ref<void(llvm::ArrayRef<uint8_t>)> Done) {
  constexpr size_t Piece = size_t(16) << 20; // A multiple of 64.
  // Eight independent lanes, one multiply per 8-byte word: memory speed.
  // Each step is a bijection of its lane, so a change in one word always
  // changes the result.
  uint64_t Lane[8];
  for (int L = 0; L < 8; ++L)
    Lane[L] = P1 * uint64_t(L + 1) + P2;
  const uint8_t *P = Bytes.data();
  size_t N = Bytes.size();
  const uint8_t *PieceStart = P;
  while (N >= 64) {
    for (int L = 0; L < 8; ++L)
      Lane[L] = rotl((Lane[L] ^ read64(P + 8 * L)) * P1, 29);
    P += 64;
    N -= 64;
    if (Done && size_t(P - PieceStart) == Piece) {
      Done(llvm::ArrayRef<uint8_t>(PieceStart, Piece));
      PieceStart = P;
    }
  }
  uint64_t H = uint64_t(Bytes.size()) * P3;
  for (int L = 0; L < 8; ++L)
    H = rotl(H ^ (Lane[L] * P2), 27) * P1 + P3;
  while (N >= 8) {
    H = rotl(H ^ (read64(P) * P2), 27) * P1 + P3;
    P += 8;
    N -= 8;
  }
  while (N) {
    H = rotl(H ^ (uint64_t(*P) * P3), 11) * P1;
    ++P;
    --N;
  }
  if (Done && P != PieceStart)
    Done(llvm::ArrayRef<uint8_t>(PieceStart, size_t(P - PieceStart)));
  H ^= H >> 33;
  H *= P2;
  H ^= H >> 29;
  H *= P3;
  H ^= H >> 32;
  return H;
}

bool engine::isArtifact(llvm::ArrayRef<uint8_t> Bytes) {
  return Bytes.size() >= 8 && std::memcmp(Bytes.data(), format::Magic, 8) == 0;
}

/// Drops the whole pages of \p Bytes, part of a private read-only file
/// mapping, from the process (they are read again from the file if
/// touched): verifying a section must not make all of it resident.
static void releasePages(llvm::ArrayRef<uint8_t> Bytes) {
  const uintptr_t Page = uintptr_t(::sysconf(_SC_PAGESIZE));
  uintptr_t Begin = (reinterpret_cast<uintptr_t>(Bytes.data()) + Page - 1) /
                    Page * Page;
  uintptr_t End =
      (reinterpret_cast<uintptr_t>(Bytes.data()) + Bytes.size()) / Page * Page;
  if (End > Begin)
    (void)::madvise(reinterpret_cast<void *>(Begin), End - Begin,
                    MADV_DONTNEED);
}

static llvm::Expected<Artifact>
readArtifactImpl(llvm::ArrayRef<uint8_t> Bytes,
                 std::shared_ptr<const void> Owner, llvm::StringRef Name,
                 llvm::StringRef DerivedFormat, bool Mapped) {
  auto Fail = [&](const llvm::Twine &Msg) -> llvm::Error {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   Name + ": " + Msg);
  };
  // Kernels read the data with aligned vector loads: move it if the
  // buffer is not 64-byte aligned (small files are read, not mapped).
  if (reinterpret_cast<uintptr_t>(Bytes.data()) % format::Alignment) {
    size_t Size = format::alignTo64(std::max<size_t>(Bytes.size(), 1));
    std::shared_ptr<uint8_t> Copy(
        static_cast<uint8_t *>(std::aligned_alloc(format::Alignment, Size)),
        [](uint8_t *P) { std::free(P); });
    if (!Copy)
      return Fail("cannot allocate " + llvm::Twine(Size) + " bytes");
    if (!Bytes.empty())
      std::memcpy(Copy.get(), Bytes.data(), Bytes.size());
    Bytes = llvm::ArrayRef<uint8_t>(Copy.get(), Bytes.size());
    Owner = Copy;
    Mapped = false;
  }
  const uint64_t Size = Bytes.size();
  const uint8_t *Base = Bytes.data();
  if (Size < format::HeaderSize || !isArtifact(Bytes))
    return Fail(Size < 8 || !isArtifact(Bytes)
                    ? "not a Strider artifact (no model.strider magic)"
                    : "truncated: " + llvm::Twine(Size) +
                          " bytes, shorter than the header");
  const uint32_t Version = read32(Base + 8);
  if (Version != ArtifactFormatVersion)
    return Fail("artifact format version " + llvm::Twine(Version) +
                "; this Strider reads version " +
                llvm::Twine(ArtifactFormatVersion) + " (recompile the model)");
  const uint32_t Count = read32(Base + 12);
  const uint64_t DeclaredSize = read64(Base + 16);
  if (Count == 0 || Count > format::MaxSections)
    return Fail("bad section count " + llvm::Twine(Count));
  const uint64_t TableEnd = format::HeaderSize + Count * format::EntrySize;
  if (DeclaredSize != Size)
    return Fail("truncated or extended: the header says " +
                llvm::Twine(DeclaredSize) + " bytes, the file has " +
                llvm::Twine(Size));
  if (TableEnd > Size)
    return Fail("truncated in the section table");
  {
    std::string Summed(reinterpret_cast<const char *>(Base), 24);
    Summed.append(reinterpret_cast<const char *>(Base + 32),
                  size_t(TableEnd - 32));
    if (format::checksum(llvm::ArrayRef<uint8_t>(
            reinterpret_cast<const uint8_t *>(Summed.data()), Summed.size())) !=
            read64(Base + 24) &&
        !IgnoreChecksums)
      return Fail("header checksum mismatch (the file is corrupted)");
  }
  Artifact A;
  llvm::Optional<std::string> Version2 = readName(Base + 32),
                              Target = readName(Base + 48);
  if (!Version2 || !Target)
    return Fail("bad version or target field in the header");
  A.StriderVersion = *Version2;
  A.Target = *Target;
  if (A.StriderVersion != getStriderVersion())
    return Fail("written by Strider " + A.StriderVersion + ", this is " +
                getStriderVersion() + " (recompile the model)");
  if (!llvm::StringRef(A.Target).startswith("cpu-"))
    return Fail("compiled for target '" + A.Target +
                "'; the CPU backend runs artifacts of cpu-* targets "
                "(recompile with --target=cpu-avx512 or cpu-avx2)");

  llvm::ArrayRef<uint8_t> Sections[format::NumKinds + 1];
  bool Seen[format::NumKinds + 1] = {};
  uint64_t End = TableEnd;
  for (uint32_t I = 0; I < Count; ++I) {
    const uint8_t *E = Base + format::HeaderSize + I * format::EntrySize;
    const uint32_t Kind = read32(E);
    const uint64_t Off = read64(E + 8), Len = read64(E + 16);
    if (Kind == 0 || Kind > format::NumKinds || Seen[Kind] || read32(E + 4))
      return Fail("section " + llvm::Twine(I) + " has a bad or repeated kind " +
                  llvm::Twine(Kind));
    if (Off % format::Alignment || Off < End || Off > Size ||
        Len > Size - Off)
      return Fail("section " + llvm::Twine(I) + " (" + llvm::Twine(Off) +
                  " + " + llvm::Twine(Len) +
                  " bytes) is out of bounds (truncated file?)");
    llvm::ArrayRef<uint8_t> S(Base + Off, size_t(Len));
    // Weights and packed constants are verified without staying
    // resident: kernels touch the packed ones they use, and nothing
    // touches the weights they were packed from.
    const bool Large = Kind == format::Weights || Kind == format::DerivedData;
    llvm::function_ref<void(llvm::ArrayRef<uint8_t>)> Release;
    if (Mapped && Large)
      Release = releasePages;
    if (format::checksum(S, Release) != read64(E + 24) && !IgnoreChecksums)
      return Fail("section " + llvm::Twine(I) +
                  " checksum mismatch (the file is corrupted)");
    // The gap before it is padding, all zeros.
    for (uint64_t B = End; B < Off; ++B)
      if (Base[B])
        return Fail("nonzero padding before section " + llvm::Twine(I) +
                    " (the file is corrupted)");
    Seen[Kind] = true;
    Sections[Kind] = S;
    End = Off + Len;
  }
  for (uint64_t B = End; B < Size; ++B)
    if (Base[B])
      return Fail("nonzero padding after the last section (the file is "
                  "corrupted)");
  for (uint32_t K = 1; K <= format::NumKinds; ++K)
    if (!Seen[K])
      return Fail("section of kind " + llvm::Twine(K) + " is missing");

  // Meta.
  llvm::StringRef Meta(reinterpret_cast<const char *>(Sections[format::Meta].data()),
                       Sections[format::Meta].size());
  llvm::SmallVector<llvm::StringRef, 4> Lines;
  Meta.split(Lines, '\n', -1, false);
  for (llvm::StringRef Line : Lines) {
    auto [Key, Value] = Line.split('=');
    if (Key == "derived_format")
      A.DerivedFormat = Value.str();
    if (Key != "input_range")
      continue;
    // AXIS MIN MAX NAME (the name is the rest of the line).
    InputRange R;
    auto [AxisText, Rest] = Value.split(' ');
    auto [MinText, Rest2] = Rest.split(' ');
    auto [MaxText, Input] = Rest2.split(' ');
    if (AxisText.getAsInteger(10, R.Axis) || MinText.getAsInteger(10, R.Min) ||
        MaxText.getAsInteger(10, R.Max) || Input.empty())
      return Fail("malformed input_range line '" + Line + "'");
    R.Input = Input.str();
    A.Ranges.push_back(std::move(R));
  }
  auto Store = std::make_shared<MappedStore>(Owner);
  llvm::ArrayRef<uint8_t> Index = Sections[format::DerivedIndex];
  llvm::ArrayRef<uint8_t> Data = Sections[format::DerivedData];
  if (!Index.empty() && !DerivedFormat.empty() &&
      A.DerivedFormat != DerivedFormat)
    return Fail("packed for kernels '" + A.DerivedFormat +
                "', this machine runs '" + DerivedFormat +
                "' (recompile the model here)");
  for (size_t Pos = 0; Pos < Index.size();) {
    if (Index.size() - Pos < 20)
      return Fail("derived index entry at " + llvm::Twine(Pos) +
                  " is truncated");
    const uint64_t Off = read64(Index.data() + Pos);
    const uint64_t Floats = read64(Index.data() + Pos + 8);
    const uint32_t KeyLen = read32(Index.data() + Pos + 16);
    Pos += 20;
    if (KeyLen == 0 || KeyLen > Index.size() - Pos)
      return Fail("derived index entry has a bad key length");
    llvm::StringRef Key(reinterpret_cast<const char *>(Index.data() + Pos),
                        KeyLen);
    Pos = (Pos + KeyLen + 7) / 8 * 8;
    if (Pos > Index.size())
      return Fail("derived index entry of '" + Key + "' is truncated");
    if (Off % format::Alignment || Off > Data.size() ||
        Floats > (Data.size() - Off) / sizeof(float))
      return Fail("derived data of '" + Key + "' is out of bounds");
    if (!Store->Entries
             .try_emplace(Key, reinterpret_cast<const float *>(Data.data() + Off),
                          size_t(Floats))
             .second)
      return Fail("derived data '" + Key + "' appears twice");
  }
  A.DerivedArrays = Store->Entries.size();
  A.Derived = Store;

  ExternalData Ext;
  Ext.Bytes = Sections[format::Weights];
  Ext.Owner = Owner;
  Ext.Name = (Name + " (weights section)").str();
  llvm::ArrayRef<uint8_t> GraphBytes = Sections[format::GraphText];
  auto G = parseGraph(
      llvm::StringRef(reinterpret_cast<const char *>(GraphBytes.data()),
                      GraphBytes.size()),
      Name, &Ext);
  if (!G)
    return G.takeError();
  if (llvm::Error E = verifyGraph(**G))
    return E;
  if (llvm::Error E = checkInputRanges(**G, A.Ranges))
    return Fail(llvm::toString(std::move(E)));
  (*G)->setSourceFile(Name.str());
  A.G = std::move(*G);
  return A;
}

llvm::Error engine::checkInputRanges(const Graph &G,
                                     llvm::ArrayRef<InputRange> Ranges) {
  auto Fail = [](const llvm::Twine &Msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
  };
  for (size_t I = 0; I < Ranges.size(); ++I) {
    const InputRange &R = Ranges[I];
    const Value *In = G.lookupValue(R.Input);
    if (!In || !In->isGraphInput())
      return Fail("shape range of '" + R.Input + "': no such graph input");
    if (R.Input.find('\n') != std::string::npos)
      return Fail("shape range of an input whose name holds a newline");
    const TensorType &T = In->getType();
    if (!T.hasRank() || R.Axis >= T.getRank())
      return Fail("shape range of '" + R.Input + "': it has no dim " +
                  llvm::Twine(R.Axis) + " (" + T.str() + ")");
    if (T.getDim(R.Axis).isStatic())
      return Fail("shape range of '" + R.Input + "': dim " +
                  llvm::Twine(R.Axis) + " is static (" + T.str() +
                  "); a range needs a dynamic dim");
    if (R.Min < 1 || R.Max < R.Min)
      return Fail("shape range of '" + R.Input + "' dim " +
                  llvm::Twine(R.Axis) + ": " + llvm::Twine(R.Min) + ".." +
                  llvm::Twine(R.Max) + " is not a range 1 <= LO <= HI");
    for (size_t J = 0; J < I; ++J)
      if (Ranges[J].Input == R.Input && Ranges[J].Axis == R.Axis)
        return Fail("shape range of '" + R.Input + "' dim " +
                    llvm::Twine(R.Axis) + " given twice");
  }
  return llvm::Error::success();
}

namespace {

/// A read-only private mapping of a whole file.
struct Mapping {
  void *Base = MAP_FAILED;
  size_t Size = 0;
  ~Mapping() {
    if (Base != MAP_FAILED)
      ::munmap(Base, Size);
  }
};

} // namespace

llvm::Expected<Artifact> engine::readArtifact(llvm::StringRef Path,
                                              llvm::StringRef DerivedFormat) {
  auto Fail = [&](const llvm::Twine &Msg) -> llvm::Error {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   Path + ": " + Msg);
  };
  const std::string P = Path.str();
  int FD = ::open(P.c_str(), O_RDONLY | O_CLOEXEC);
  if (FD < 0)
    return Fail(llvm::Twine("cannot read file: ") + std::strerror(errno));
  struct stat St;
  if (::fstat(FD, &St) != 0 || !S_ISREG(St.st_mode)) {
    ::close(FD);
    return Fail("cannot read file: not a regular file");
  }
  auto M = std::make_shared<Mapping>();
  M->Size = size_t(St.st_size);
  if (M->Size)
    M->Base = ::mmap(nullptr, M->Size, PROT_READ, MAP_PRIVATE, FD, 0);
  ::close(FD);
  if (M->Size && M->Base == MAP_FAILED)
    return Fail(llvm::Twine("cannot map file: ") + std::strerror(errno));
  llvm::ArrayRef<uint8_t> Bytes(
      M->Size ? static_cast<const uint8_t *>(M->Base) : nullptr, M->Size);
  return readArtifactImpl(Bytes, M, Path, DerivedFormat, /*Mapped=*/true);
}

llvm::Expected<Artifact>
engine::readArtifactBytes(llvm::ArrayRef<uint8_t> Bytes,
                          std::shared_ptr<const void> Owner,
                          llvm::StringRef Name, llvm::StringRef DerivedFormat) {
  return readArtifactImpl(Bytes, std::move(Owner), Name, DerivedFormat,
                          /*Mapped=*/false);
}
