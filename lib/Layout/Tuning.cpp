//===- Tuning.cpp - Measured kernel times for the cost model --------------===//
//
// Conv configurations and their keys, the tuning table's text form (parser
// and printer), and the calibration of a target's estimates from the
// measurements.
//
//===----------------------------------------------------------------------===//

#include "strider/Layout/Tuning.h"

#include "strider/IR/Graph.h"
#include "strider/Layout/CostModel.h"
#include "strider/Support/FileIO.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace strider;
using namespace strider::layout;

/// The header's first line: format name and version.
static constexpr llvm::StringLiteral Magic = "strider-tuning 1";

/// Field names of the conv variants, in ConvVariant order.
static constexpr llvm::StringLiteral VariantNames[NumConvVariants] = {
    "nchw", "nhwc", "nchw>nhwc", "nhwc>nchw"};

llvm::StringRef layout::getConvVariantName(ConvVariant V) {
  return VariantNames[V];
}

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

static bool knownSizes(const TensorType &T, const DimBindings &Dims,
                       std::vector<int64_t> &Out) {
  if (!T.hasRank())
    return false;
  Out.clear();
  for (const Dim &D : T.getShape()) {
    int64_t S = Dims.getKnownSize(D);
    if (S < 0)
      return false;
    Out.push_back(S);
  }
  return true;
}

static std::string joinInts(llvm::ArrayRef<int64_t> V) {
  std::string S;
  for (int64_t X : V)
    S += (S.empty() ? "" : "x") + std::to_string(X);
  return S.empty() ? "-" : S;
}

bool ConvConfig::fromNode(const Node &N, const DimBindings &Dims,
                          ConvConfig &Out) {
  if (N.isOpaque() || N.getOpId() != OpId::Conv || !N.hasOperand(0) ||
      !N.hasOperand(1) || !N.hasResult(0))
    return false;
  ConvConfig C;
  if (!knownSizes(N.getOperand(0)->getType(), Dims, C.X) ||
      !knownSizes(N.getOperand(1)->getType(), Dims, C.W) ||
      !knownSizes(N.getResult(0)->getType(), Dims, C.Y) || C.X.size() < 3 ||
      C.W.size() != C.X.size() || C.Y.size() != C.X.size())
    return false;
  size_t Spatial = C.X.size() - 2;
  C.Strides = N.getIntsAttr("strides");
  if (C.Strides.empty())
    C.Strides.assign(Spatial, 1);
  C.Dilations = N.getIntsAttr("dilations");
  if (C.Dilations.empty())
    C.Dilations.assign(Spatial, 1);
  C.AutoPad = N.getStringAttr("auto_pad", "NOTSET");
  if (C.AutoPad == "NOTSET") {
    C.AutoPad.clear();
    C.Pads = N.getIntsAttr("pads");
    if (C.Pads.empty())
      C.Pads.assign(2 * Spatial, 0);
  }
  C.Group = N.getIntAttr("group", 1);
  C.HasBias = N.hasOperand(2);
  const Value *Y = N.getResult(0);
  if (Y->getUses().size() == 1 && !N.getGraph()->isGraphOutput(Y)) {
    const Node *U = Y->getUses().front().User;
    if (!U->isOpaque() && U->getOpId() == OpId::Add &&
        U->getNumOperands() == 2 && U->getOperand(0) && U->getOperand(1)) {
      const Value *Other =
          U->getOperand(0) == Y ? U->getOperand(1) : U->getOperand(0);
      std::vector<int64_t> OS;
      C.HasResidual =
          Other != Y && knownSizes(Other->getType(), Dims, OS) && OS == C.Y;
    }
  }
  Out = std::move(C);
  return true;
}

std::string ConvConfig::getKey() const {
  std::string K = "x=" + joinInts(X) + " w=" + joinInts(W) +
                  " y=" + joinInts(Y) + " s=" + joinInts(Strides);
  K += AutoPad.empty() ? " p=" + joinInts(Pads) : " a=" + AutoPad;
  K += " d=" + joinInts(Dilations) + " g=" + std::to_string(Group) +
       " b=" + (HasBias ? "1" : "0") + " r=" + (HasResidual ? "1" : "0");
  return K;
}

double ConvConfig::getMacs() const {
  return estimateConvShape(X, W, Y, Group, Strides, /*Transposed=*/false, 1)
      .Macs;
}

std::string TuningTable::getRelayoutKey(const TensorType &T,
                                        const DimBindings &Dims) {
  std::vector<int64_t> S;
  if (!knownSizes(T, Dims, S))
    return "";
  return joinInts(S);
}

//===----------------------------------------------------------------------===//
// Entries
//===----------------------------------------------------------------------===//

const ConvTiming *TuningTable::lookupConv(llvm::StringRef Key) const {
  auto It = Convs.find(Key.str());
  return It == Convs.end() ? nullptr : &It->second.Timing;
}

void TuningTable::setConv(const ConvConfig &C, const ConvTiming &T) {
  Convs[C.getKey()] = {C, T};
}

double TuningTable::lookupRelayout(llvm::StringRef Key) const {
  auto It = Relayouts.find(Key.str());
  return It == Relayouts.end() ? -1.0 : It->second;
}

void TuningTable::setAlgorithm(llvm::StringRef Key, const TunedAlgorithm &A) {
  Algorithms[Key.str()] = A;
}

void TuningTable::setRelayout(llvm::StringRef Key, double Ns) {
  Relayouts[Key.str()] = Ns;
}

//===----------------------------------------------------------------------===//
// Calibration
//===----------------------------------------------------------------------===//

static double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N % 2 ? V[N / 2] : 0.5 * (V[N / 2 - 1] + V[N / 2]);
}

TargetDescription
TuningTable::calibrateTarget(const TargetDescription &Base) const {
  TargetDescription T = Base;
  // Efficiency samples per kind (Dense, Pointwise, Depthwise) and layout:
  // the fraction of peak each measurement implies, divided by the vector
  // fill the estimate applies, so that re-estimating the same conv gives
  // back (about) its measured time.
  std::vector<double> Samples[3][2];
  for (const auto &KV : Convs) {
    const ConvConfig &C = KV.second.Config;
    ConvShapeEstimate S = estimateConvShape(C.X, C.W, C.Y, C.Group, C.Strides,
                                            false, T.VectorWidth);
    for (LayoutLabel L : {ChannelsFirst, ChannelsLast}) {
      double Ns =
          KV.second.Timing
              .Ns[L == ChannelsLast ? ReadLastWriteLast : ReadFirstWriteFirst];
      if (Ns <= 0 || S.Macs <= 0)
        continue;
      // GFLOP/s times ns is FLOPs.
      double Eff = 2.0 * S.Macs / (T.PeakGFlops * Ns) / S.VectorFill[L];
      Samples[S.Kind][L].push_back(std::min(1.0, std::max(0.01, Eff)));
    }
  }
  for (unsigned K = 0; K < 3; ++K) {
    double *Col = K == ConvShapeEstimate::Depthwise   ? T.Conv.Depthwise
                  : K == ConvShapeEstimate::Pointwise ? T.Conv.Pointwise
                                                      : T.Conv.Dense;
    for (unsigned L = 0; L < 2; ++L)
      if (!Samples[K][L].empty())
        Col[L] = median(Samples[K][L]);
  }
  std::vector<double> Bandwidths;
  for (const auto &KV : Relayouts) {
    // Half precision tables time relayouts of 2-byte elements.
    double Bytes = Precision == "fp16" || Precision == "bf16" ? 2 : 4;
    llvm::SmallVector<llvm::StringRef, 6> Parts;
    llvm::StringRef(KV.first).split(Parts, 'x');
    for (llvm::StringRef P : Parts) {
      int64_t D = 0;
      if (P.getAsInteger(10, D))
        D = 0;
      Bytes *= double(D);
    }
    if (KV.second > 0 && Bytes > 0)
      Bandwidths.push_back(Bytes / KV.second); // bytes per ns = GB/s
  }
  if (!Bandwidths.empty())
    T.RelayoutGBs = median(Bandwidths);
  return T;
}

//===----------------------------------------------------------------------===//
// Text form
//===----------------------------------------------------------------------===//

static void printNs(llvm::raw_ostream &OS, double Ns) {
  if (Ns < 0)
    OS << "-";
  else
    OS << llvm::format("%.1f", Ns);
}

void TuningTable::print(llvm::raw_ostream &OS) const {
  OS << Magic << "\n";
  OS << "target " << Target << "\n";
  if (Device.empty()) {
    OS << "simd " << (Simd.empty() ? "-" : Simd) << "\n";
    OS << "threads " << Threads << "\n";
  } else {
    OS << "device " << Device << "\n";
    OS << "precision " << (Precision.empty() ? "fp32" : Precision) << "\n";
  }
  OS << "margin " << llvm::format("%g", Margin) << "\n";
  for (const auto &KV : Convs) {
    OS << "conv " << KV.first;
    for (unsigned V = 0; V < NumConvVariants; ++V) {
      OS << " " << VariantNames[V] << "=";
      printNs(OS, KV.second.Timing.Ns[V]);
    }
    OS << "\n";
  }
  for (const auto &KV : Relayouts) {
    OS << "relayout " << KV.first << " ns=";
    printNs(OS, KV.second);
    OS << "\n";
  }
  for (const auto &KV : Algorithms) {
    OS << "algo " << KV.second.Name << " ns=";
    printNs(OS, KV.second.Ns);
    OS << " ws=" << KV.second.WorkspaceBytes << " " << KV.first << "\n";
  }
}

namespace {
/// Parses the text form line by line; every error names the line and the
/// column of the offending word.
class TableParser {
public:
  TableParser(llvm::StringRef Text, llvm::StringRef Name)
      : Text(Text), Name(Name) {}

  llvm::Expected<TuningTable> parse();

private:
  llvm::Error error(llvm::StringRef At, const llvm::Twine &Msg) const {
    size_t Col =
        At.data() >= Line.data() && At.data() <= Line.data() + Line.size()
            ? size_t(At.data() - Line.data()) + 1
            : 1;
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   Name + ":" + llvm::Twine(LineNo) + ":" +
                                       llvm::Twine(Col) + ": " + Msg);
  }
  llvm::Error parseHeader(llvm::StringRef Keyword, llvm::StringRef Rest,
                          TuningTable &T);
  llvm::Error parseInts(llvm::StringRef Word, llvm::StringRef Value,
                        bool AllowEmpty, std::vector<int64_t> &Out);
  llvm::Error parseNs(llvm::StringRef Word, llvm::StringRef Value, double &Out);
  llvm::Error parseConvField(llvm::StringRef Word, llvm::StringRef Field,
                             llvm::StringRef Value, ConvConfig &C,
                             ConvTiming &Timing);
  llvm::Error parseConv(llvm::ArrayRef<llvm::StringRef> Words, TuningTable &T);
  llvm::Error parseRelayout(llvm::ArrayRef<llvm::StringRef> Words,
                            TuningTable &T);
  llvm::Error parseAlgorithm(llvm::ArrayRef<llvm::StringRef> Words,
                             TuningTable &T);
  llvm::Error parseEntry(llvm::StringRef Keyword, llvm::StringRef Content,
                         llvm::ArrayRef<llvm::StringRef> Words, TuningTable &T);

  llvm::StringRef Text, Name, Line;
  unsigned LineNo = 0;
};
} // namespace

llvm::Error TableParser::parseInts(llvm::StringRef Word, llvm::StringRef Value,
                                   bool AllowEmpty, std::vector<int64_t> &Out) {
  Out.clear();
  if (Value == "-") {
    if (AllowEmpty)
      return llvm::Error::success();
    return error(Word, "'" + Word + "' needs a list of sizes like 1x64x56x56");
  }
  llvm::SmallVector<llvm::StringRef, 8> Parts;
  Value.split(Parts, 'x');
  for (llvm::StringRef P : Parts) {
    int64_t N;
    if (P.getAsInteger(10, N) || N < 0)
      return error(Word, "'" + Word + "': bad size '" + P +
                             "' (expected sizes like 1x64x56x56)");
    Out.push_back(N);
  }
  return llvm::Error::success();
}

llvm::Error TableParser::parseNs(llvm::StringRef Word, llvm::StringRef Value,
                                 double &Out) {
  if (Value == "-") {
    Out = -1;
    return llvm::Error::success();
  }
  // Up to 10 s per call: the cost model's largest finite term.
  if (Value.getAsDouble(Out) || !(Out > 0) || !(Out <= 1e10))
    return error(Word, "'" + Word +
                           "': expected a time in nanoseconds (> 0, at most "
                           "1e10) or '-'");
  return llvm::Error::success();
}

llvm::Error TableParser::parseHeader(llvm::StringRef Keyword,
                                     llvm::StringRef Rest, TuningTable &T) {
  if (Rest.empty() || Rest.contains(' '))
    return error(Keyword, "'" + Keyword + "' takes one word");
  if (Keyword == "target") {
    T.Target = Rest.str();
  } else if (Keyword == "simd") {
    T.Simd = Rest == "-" ? "" : Rest.str();
  } else if (Keyword == "precision") {
    if (Rest != "fp32" && Rest != "tf32" && Rest != "fp16" && Rest != "bf16")
      return error(Rest, "precision must be fp32, tf32, fp16 or bf16, not '" +
                             Rest + "'");
    T.Precision = Rest.str();
  } else if (Keyword == "margin") {
    double M;
    if (Rest.getAsDouble(M) || !(M >= 0) || M > 1)
      return error(Rest,
                   "margin must be a fraction in [0, 1], not '" + Rest + "'");
    T.Margin = M;
  } else {
    int N;
    if (Rest.getAsInteger(10, N) || N < 1)
      return error(Rest, "threads must be a number >= 1, not '" + Rest + "'");
    T.Threads = N;
  }
  return llvm::Error::success();
}

llvm::Error TableParser::parseConvField(llvm::StringRef Word,
                                        llvm::StringRef Field,
                                        llvm::StringRef Value, ConvConfig &C,
                                        ConvTiming &Timing) {
  if (Field == "x")
    return parseInts(Word, Value, false, C.X);
  if (Field == "w")
    return parseInts(Word, Value, false, C.W);
  if (Field == "y")
    return parseInts(Word, Value, false, C.Y);
  if (Field == "s")
    return parseInts(Word, Value, false, C.Strides);
  if (Field == "p")
    return parseInts(Word, Value, true, C.Pads);
  if (Field == "d")
    return parseInts(Word, Value, false, C.Dilations);
  if (Field == "a") {
    if (Value != "SAME_UPPER" && Value != "SAME_LOWER" && Value != "VALID")
      return error(Word, "a (auto_pad) must be SAME_UPPER, SAME_LOWER or "
                         "VALID (explicit pads go in p)");
    C.AutoPad = Value.str();
    return llvm::Error::success();
  }
  if (Field == "g") {
    if (Value.getAsInteger(10, C.Group) || C.Group < 1)
      return error(Word, "group must be a number >= 1");
    return llvm::Error::success();
  }
  if (Field == "b" || Field == "r") {
    if (Value != "0" && Value != "1")
      return error(Word, Field +
                             (Field == "b" ? " (has bias)" : " (residual)") +
                             " must be 0 or 1");
    (Field == "b" ? C.HasBias : C.HasResidual) = Value == "1";
    return llvm::Error::success();
  }
  const auto *V = llvm::find(VariantNames, Field);
  if (V == std::end(VariantNames))
    return error(Word, "unknown conv field '" + Field +
                           "' (fields: x w y s p|a d g b r nchw nhwc "
                           "nchw>nhwc nhwc>nchw)");
  return parseNs(Word, Value, Timing.Ns[V - std::begin(VariantNames)]);
}

llvm::Error TableParser::parseConv(llvm::ArrayRef<llvm::StringRef> Words,
                                   TuningTable &T) {
  ConvConfig C;
  ConvTiming Timing;
  llvm::StringRef Required[] = {"x", "w", "y", "s", "d", "g", "b"};
  llvm::StringMap<bool> Fields;
  for (llvm::StringRef Word : Words.drop_front()) {
    auto KV = Word.split('=');
    if (KV.second.empty() && !Word.endswith("="))
      return error(Word, "expected FIELD=VALUE, not '" + Word + "'");
    if (!Fields.insert({KV.first, true}).second)
      return error(Word, "field '" + KV.first + "' given twice");
    if (llvm::Error E = parseConvField(Word, KV.first, KV.second, C, Timing))
      return E;
  }
  for (llvm::StringRef F : Required)
    if (!Fields.count(F))
      return error(Words[0], "conv entry lacks field '" + F + "'");
  if (Fields.count("p") == Fields.count("a"))
    return error(Words[0], "conv entry needs exactly one of 'p' (pads) and "
                           "'a' (auto_pad)");
  for (unsigned I = 0; I < NumConvVariants; ++I)
    if (!Fields.count(VariantNames[I]))
      return error(Words[0], "conv entry lacks the time of variant '" +
                                 VariantNames[I] + "'");
  size_t Rank = C.X.size();
  if (Rank < 3 || Rank > 5 || C.W.size() != Rank || C.Y.size() != Rank ||
      C.Strides.size() != Rank - 2 || C.Dilations.size() != Rank - 2 ||
      (C.AutoPad.empty() && C.Pads.size() != 2 * (Rank - 2)))
    return error(Words[0], "conv entry: x, w and y need the same rank (3-5), "
                           "s and d one value and p two per spatial dim");
  if (T.lookupConv(C.getKey()))
    return error(Words[0], "a second entry for this conv");
  T.setConv(C, Timing);
  return llvm::Error::success();
}

llvm::Error TableParser::parseRelayout(llvm::ArrayRef<llvm::StringRef> Words,
                                       TuningTable &T) {
  if (Words.size() != 3 || !Words[2].startswith("ns="))
    return error(Words[0], "expected 'relayout SHAPE ns=TIME'");
  std::vector<int64_t> Shape;
  if (llvm::Error E = parseInts(Words[1], Words[1], false, Shape))
    return E;
  double Ns;
  if (llvm::Error E = parseNs(Words[2], Words[2].drop_front(3), Ns))
    return E;
  if (T.lookupRelayout(joinInts(Shape)) >= 0)
    return error(Words[0], "a second entry for relayouts of this shape");
  T.setRelayout(joinInts(Shape), Ns);
  return llvm::Error::success();
}

llvm::Error TableParser::parseAlgorithm(llvm::ArrayRef<llvm::StringRef> Words,
                                       TuningTable &T) {
  if (Words.size() < 5 || !Words[2].startswith("ns=") ||
      !Words[3].startswith("ws="))
    return error(Words[0], "expected 'algo NAME ns=TIME ws=BYTES KEY'");
  TunedAlgorithm A;
  A.Name = Words[1].str();
  if (llvm::Error E = parseNs(Words[2], Words[2].drop_front(3), A.Ns))
    return E;
  if (A.Ns < 0)
    return error(Words[2], "an algorithm entry needs its time, not '-'");
  if (Words[3].drop_front(3).getAsInteger(10, A.WorkspaceBytes))
    return error(Words[3], "'" + Words[3] +
                               "': expected a workspace size in bytes");
  // The key is the rest of the line, with its words single-spaced.
  std::string Key;
  for (llvm::StringRef W : Words.drop_front(4))
    Key += (Key.empty() ? "" : " ") + W.str();
  if (T.getAlgorithms().count(Key))
    return error(Words[4], "a second algorithm for this key");
  T.setAlgorithm(Key, A);
  return llvm::Error::success();
}

llvm::Error TableParser::parseEntry(llvm::StringRef Keyword,
                                    llvm::StringRef Content,
                                    llvm::ArrayRef<llvm::StringRef> Words,
                                    TuningTable &T) {
  if (Keyword == "target" || Keyword == "simd" || Keyword == "threads" ||
      Keyword == "margin" || Keyword == "precision")
    return parseHeader(Keyword, Content.drop_front(Keyword.size()).trim(), T);
  if (Keyword == "device") {
    llvm::StringRef Name = Content.drop_front(Keyword.size()).trim();
    if (Name.empty())
      return error(Keyword, "'device' needs the device's name");
    T.Device = Name.str();
    return llvm::Error::success();
  }
  if (Keyword == "conv")
    return parseConv(Words, T);
  if (Keyword == "relayout")
    return parseRelayout(Words, T);
  if (Keyword == "algo")
    return parseAlgorithm(Words, T);
  return error(Keyword, "unknown entry '" + Keyword +
                            "' (expected target, simd, threads, device, "
                            "precision, margin, conv, relayout or algo)");
}

llvm::Expected<TuningTable> TableParser::parse() {
  TuningTable T;
  bool SeenMagic = false;
  llvm::StringRef Rest = Text;
  while (!Rest.empty()) {
    std::tie(Line, Rest) = Rest.split('\n');
    ++LineNo;
    llvm::StringRef Content = Line.split('#').first.trim();
    if (Content.empty())
      continue;
    if (!SeenMagic) {
      if (Content != Magic)
        return error(Content, "not a tuning table (expected '" + Magic +
                                  "' as its first line)");
      SeenMagic = true;
      continue;
    }
    llvm::SmallVector<llvm::StringRef, 16> Words;
    Content.split(Words, ' ', -1, /*KeepEmpty=*/false);
    llvm::StringRef Keyword = Words[0];
    if (llvm::Error E = parseEntry(Keyword, Content, Words, T))
      return E;
  }
  if (!SeenMagic)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   Name + ": empty file, not a tuning table");
  if (T.Target.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   Name + ": no 'target' line");
  return T;
}

llvm::Expected<TuningTable> TuningTable::parse(llvm::StringRef Text,
                                               llvm::StringRef Name) {
  return TableParser(Text, Name).parse();
}

llvm::Expected<TuningTable> TuningTable::readFile(llvm::StringRef Path) {
  auto Buf = readInputFile(Path);
  if (!Buf)
    return Buf.takeError();
  return parse((*Buf)->getBuffer(), Path);
}

llvm::Error TuningTable::writeFile(llvm::StringRef Path) const {
  return writeOutputFile(Path, [&](llvm::raw_ostream &OS) {
    print(OS);
    return llvm::Error::success();
  });
}
