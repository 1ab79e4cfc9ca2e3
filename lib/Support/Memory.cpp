//===- Memory.cpp - The memory budget of a program ------------------------===//

#include "strider/Support/Memory.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <iterator>

using namespace strider;

namespace {

/// The contents of a (small, procfs or sysfs) file; empty when unreadable.
std::string readSmallFile(const llvm::Twine &Path) {
  auto Buf = llvm::MemoryBuffer::getFileAsStream(Path);
  if (!Buf)
    return "";
  return (*Buf)->getBuffer().str();
}

/// The rest of the first line of \p Text that starts with \p Prefix,
/// trimmed; none when no line does.
llvm::Optional<llvm::StringRef> findLineAfter(llvm::StringRef Text,
                                              llvm::StringRef Prefix) {
  while (!Text.empty()) {
    llvm::StringRef Line;
    std::tie(Line, Text) = Text.split('\n');
    if (Line.consume_front(Prefix))
      return Line.trim();
  }
  return llvm::None;
}

/// MemAvailable of /proc/meminfo in bytes; 0 when unknown.
uint64_t getMemAvailable() {
  std::string Info = readSmallFile("/proc/meminfo");
  auto Line = findLineAfter(Info, "MemAvailable:");
  uint64_t KiB = 0;
  if (!Line || !Line->consume_back("kB") || Line->trim().getAsInteger(10, KiB))
    return 0;
  return KiB * 1024;
}

/// What this process's cgroup (v2) still lets it allocate; UINT64_MAX
/// when it sets no limit or none can be read.
uint64_t getCgroupHeadroom() {
  std::string Groups = readSmallFile("/proc/self/cgroup");
  auto Path = findLineAfter(Groups, "0::");
  if (!Path)
    return UINT64_MAX;
  std::string Dir = ("/sys/fs/cgroup" + *Path).str();
  uint64_t Max = 0, Current = 0;
  if (llvm::StringRef(readSmallFile(Dir + "/memory.max"))
          .trim()
          .getAsInteger(10, Max))
    return UINT64_MAX; // "max", or no such file.
  if (llvm::StringRef(readSmallFile(Dir + "/memory.current"))
          .trim()
          .getAsInteger(10, Current))
    Current = 0;
  return Max > Current ? Max - Current : 0;
}

} // namespace

uint64_t strider::getAvailableMemory() {
  uint64_t Avail = getMemAvailable();
  uint64_t Headroom = getCgroupHeadroom();
  if (Avail == 0)
    return Headroom == UINT64_MAX ? 0 : Headroom;
  return std::min(Avail, Headroom);
}

uint64_t strider::getMemoryBudget(uint64_t Requested) {
  if (Requested)
    return Requested;
  uint64_t Avail = getAvailableMemory();
  return Avail ? Avail : UINT64_MAX;
}

std::string strider::checkMemoryBudget(uint64_t NeedBytes, llvm::StringRef What,
                                       uint64_t Requested) {
  uint64_t Budget = getMemoryBudget(Requested);
  bool Saturated = NeedBytes >= MaxRunBytes;
  if (NeedBytes <= Budget && !Saturated)
    return "";
  std::string Msg;
  llvm::raw_string_ostream OS(Msg);
  OS << "a run needs " << (Saturated ? "at least " : "")
     << formatByteSize(NeedBytes) << " (" << NeedBytes << " bytes) of " << What
     << ", more than the " << formatByteSize(Budget) << " memory budget ("
     << (Requested ? "as set"
                   : "the memory available on this machine; a max-memory "
                     "option sets another")
     << ")";
  return Msg;
}

std::string strider::formatByteSize(uint64_t Bytes) {
  static const char *const Units[] = {"B",   "KiB", "MiB", "GiB",
                                      "TiB", "PiB", "EiB"};
  if (Bytes < 1024)
    return std::to_string(Bytes) + " B";
  double V = double(Bytes);
  unsigned U = 0;
  while (V >= 1024 && U + 1 < std::size(Units)) {
    V /= 1024;
    ++U;
  }
  std::string S;
  llvm::raw_string_ostream(S) << llvm::format("%.1f ", V) << Units[U];
  return S;
}

std::optional<uint64_t> strider::parseByteSize(llvm::StringRef Text) {
  llvm::StringRef Num = Text.trim();
  size_t End = 0;
  while (End < Num.size() && (llvm::isDigit(Num[End]) || Num[End] == '.'))
    ++End;
  llvm::StringRef Digits = Num.take_front(End);
  std::string Unit = Num.drop_front(End).trim().lower();
  if (Digits.empty() || Digits.count('.') > 1 || Digits == ".")
    return std::nullopt;
  unsigned Shift = 0;
  if (!Unit.empty() && Unit != "b") {
    static const char Prefixes[] = "kmgtpe";
    const char *P = std::strchr(Prefixes, Unit[0]);
    llvm::StringRef Tail = llvm::StringRef(Unit).drop_front();
    if (!P || !(Tail.empty() || Tail == "b" || Tail == "ib"))
      return std::nullopt;
    Shift = 10 * unsigned(P - Prefixes + 1);
  }
  double V = 0;
  if (Digits.getAsDouble(V) || !std::isfinite(V))
    return std::nullopt;
  double Bytes = std::ldexp(V, int(Shift));
  // 2^64 is the first double past every uint64_t.
  if (Bytes >= 18446744073709551616.0)
    return std::nullopt;
  if (Shift == 0 && Digits.contains('.'))
    return std::nullopt; // A fraction of a byte.
  return uint64_t(std::round(Bytes));
}
