//===- ArtifactWriter.cpp - Writing model.strider -------------------------===//
//
// Lays out the sections of ArtifactFormat.h: the graph printed with its
// large constants in the weights section, and what a recording
// DerivedStore collected during one lowering.
//
//===----------------------------------------------------------------------===//

#include "ArtifactFormat.h"

#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/Engine/Artifact.h"
#include "strider/IR/AsmPrinter.h"
#include "strider/IR/Graph.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <map>

using namespace strider;
using namespace strider::engine;

namespace {

/// Keeps every array a lowering derived, by key (in key order: the file
/// does not depend on the lowering's order).
class RecordingStore final : public cpu::DerivedStore {
public:
  std::shared_ptr<const float> find(llvm::StringRef, size_t,
                                    const TensorData *) const override {
    return nullptr;
  }
  void add(llvm::StringRef Key, std::shared_ptr<const float> Data, size_t Count,
           const TensorDataRef &) override {
    Entries[Key.str()] = {std::move(Data), Count};
  }
  std::map<std::string, std::pair<std::shared_ptr<const float>, size_t>>
      Entries;
};

void put32(std::string &S, uint32_t V) {
  char B[4];
  llvm::support::endian::write32le(B, V);
  S.append(B, 4);
}

void put64(std::string &S, uint64_t V) {
  char B[8];
  llvm::support::endian::write64le(B, V);
  S.append(B, 8);
}

void padTo(std::string &S, uint64_t Multiple) {
  S.append(size_t((Multiple - S.size() % Multiple) % Multiple), '\0');
}

/// \p Text NUL-padded to a header name field; error if too long.
llvm::Error putName(std::string &S, llvm::StringRef Text,
                    llvm::StringRef What) {
  if (Text.size() >= format::NameField || Text.contains('\0'))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the " + What + " '" + Text +
                                       "' does not fit an artifact header");
  S.append(Text.data(), Text.size());
  S.append(size_t(format::NameField - Text.size()), '\0');
  return llvm::Error::success();
}

} // namespace

std::shared_ptr<cpu::DerivedStore> engine::createRecordingStore() {
  return std::make_shared<RecordingStore>();
}

llvm::Error engine::writeArtifact(llvm::raw_ostream &OS, const Graph &G,
                                  llvm::StringRef Target,
                                  const cpu::DerivedStore *Recorded,
                                  llvm::StringRef DerivedFormat,
                                  llvm::ArrayRef<InputRange> Ranges) {
  if (llvm::Error E = checkInputRanges(G, Ranges))
    return E;
  const auto *Rec = dynamic_cast<const RecordingStore *>(Recorded);
  if (Recorded && !Rec)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "writeArtifact needs a recording store");
  ExternalDataBuffer Weights;
  PrintOptions PO;
  PO.External = &Weights;
  std::string GraphText;
  {
    llvm::raw_string_ostream GS(GraphText);
    printGraph(G, GS, PO);
  }
  std::string Meta = "derived_format=" + DerivedFormat.str() + "\n" +
                     "source=" + G.getSourceFile() + "\n";
  for (const InputRange &R : Ranges)
    Meta += "input_range=" + std::to_string(R.Axis) + " " +
            std::to_string(R.Min) + " " + std::to_string(R.Max) + " " +
            R.Input + "\n";
  std::string Index, Data;
  if (Rec)
    for (const auto &[Key, Entry] : Rec->Entries) {
      put64(Index, Data.size());
      put64(Index, Entry.second);
      put32(Index, uint32_t(Key.size()));
      Index += Key;
      padTo(Index, 8);
      Data.append(reinterpret_cast<const char *>(Entry.first.get()),
                  Entry.second * sizeof(float));
      padTo(Data, format::Alignment);
    }
  const llvm::ArrayRef<uint8_t> WeightBytes = Weights.getBytes();
  struct Section {
    uint32_t Kind;
    llvm::ArrayRef<uint8_t> Bytes;
  };
  auto bytesOf = [](const std::string &S) {
    return llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(S.data()), S.size());
  };
  const Section Sections[] = {
      {format::Meta, bytesOf(Meta)},
      {format::GraphText, bytesOf(GraphText)},
      {format::Weights, WeightBytes},
      {format::DerivedIndex, bytesOf(Index)},
      {format::DerivedData, bytesOf(Data)},
  };
  const uint32_t Count = uint32_t(std::size(Sections));

  // Offsets: after the header and table, each section 64-byte aligned.
  uint64_t Offset =
      format::alignTo64(format::HeaderSize + Count * format::EntrySize);
  std::vector<uint64_t> Offsets;
  for (const Section &S : Sections) {
    Offsets.push_back(Offset);
    Offset = format::alignTo64(Offset + S.Bytes.size());
  }
  const uint64_t FileSize = Offset;

  std::string Header(reinterpret_cast<const char *>(format::Magic), 8);
  put32(Header, ArtifactFormatVersion);
  put32(Header, Count);
  put64(Header, FileSize);
  put64(Header, 0); // The checksum, below.
  if (llvm::Error E = putName(Header, getStriderVersion(), "Strider version"))
    return E;
  if (llvm::Error E = putName(Header, Target, "target"))
    return E;
  for (uint32_t I = 0; I < Count; ++I) {
    put32(Header, Sections[I].Kind);
    put32(Header, 0);
    put64(Header, Offsets[I]);
    put64(Header, Sections[I].Bytes.size());
    put64(Header, format::checksum(Sections[I].Bytes));
  }
  std::string Summed = Header.substr(0, 24) + Header.substr(32);
  char Sum[8];
  llvm::support::endian::write64le(Sum, format::checksum(bytesOf(Summed)));
  std::memcpy(&Header[24], Sum, 8);
  padTo(Header, format::Alignment);

  OS << Header;
  uint64_t Written = Header.size();
  for (uint32_t I = 0; I < Count; ++I) {
    OS.write(std::string(size_t(Offsets[I] - Written), '\0').data(),
             Offsets[I] - Written);
    OS.write(reinterpret_cast<const char *>(Sections[I].Bytes.data()),
             Sections[I].Bytes.size());
    Written = Offsets[I] + Sections[I].Bytes.size();
  }
  OS.write(std::string(size_t(FileSize - Written), '\0').data(),
           FileSize - Written);
  return llvm::Error::success();
}
