//===- AsmPrinter.cpp - Textual IR printer --------------------------------===//
//
// Writes a graph as `.lir` text (docs/LangRef.md). Everything is printed in
// a fixed order so that the output is deterministic, and in forms the parser
// reads back to the same graph. Large constants may go to an external blob
// instead, referenced by offset.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/AsmPrinter.h"

#include "AsmLexer.h"

#include "strider/IR/Graph.h"

#include "llvm/ADT/APInt.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/raw_ostream.h"

using namespace strider;
using namespace strider::asmsyntax;
namespace endian = llvm::support::endian;

/// Longest list printed as `dense<[...]>`; larger data is printed as hex.
static constexpr int64_t MaxDenseListElements = 16;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

static void printValueName(llvm::raw_ostream &OS, llvm::StringRef Name) {
  OS << '%';
  if (isBareValueName(Name))
    OS << Name;
  else
    printQuotedString(OS, Name);
}

static void printIdentifier(llvm::raw_ostream &OS, llvm::StringRef Name) {
  if (isBareIdentifier(Name))
    OS << Name;
  else
    printQuotedString(OS, Name);
}

/// Words that start or continue a statement; an opaque op of the default
/// domain with one of these names is printed with an explicit `"".`.
static bool isReservedOpName(llvm::StringRef Name) {
  return Name == "return" || Name == "loc" || Name == "doc" || Name == "_";
}

static void printOpName(llvm::raw_ostream &OS, const Node &N) {
  llvm::StringRef Type = N.getOpType();
  if (!N.isOpaque()) {
    OS << Type;
    return;
  }
  if (N.getDomain().empty() && isBareIdentifier(Type) && !lookupOp(Type) &&
      !isReservedOpName(Type)) {
    OS << Type;
    return;
  }
  printQuotedString(OS, N.getDomain());
  OS << '.';
  printIdentifier(OS, Type);
}

//===----------------------------------------------------------------------===//
// Constant data
//===----------------------------------------------------------------------===//

namespace {
/// Reads the elements of constant data and prints them as literals.
class ElementPrinter {
public:
  explicit ElementPrinter(const TensorData &D)
      : Ty(D.getElementType()), Bytes(D.getBytes().data()),
        Size(getElementByteSize(Ty)) {}

  /// Whether printElement(I) reads back to the same bytes.
  bool isExact(int64_t I) const {
    if (Ty == ElementType::Bool)
      return Bytes[I] <= 1;
    if (!isFloatingPoint(Ty))
      return true;
    llvm::APFloat V = getFloat(I);
    // Every NaN prints as `nan`, which reads back as the canonical one.
    return !V.isNaN() ||
           V.bitwiseIsEqual(llvm::APFloat::getQNaN(V.getSemantics()));
  }

  void printElement(llvm::raw_ostream &OS, int64_t I) const {
    const uint8_t *P = Bytes + I * Size;
    switch (Ty) {
    case ElementType::Bool:
      OS << (*P ? "true" : "false");
      return;
    case ElementType::I8:
      OS << int64_t(int8_t(*P));
      return;
    case ElementType::U8:
      OS << uint64_t(*P);
      return;
    case ElementType::I16:
      OS << int64_t(int16_t(read<uint16_t>(P)));
      return;
    case ElementType::U16:
      OS << uint64_t(read<uint16_t>(P));
      return;
    case ElementType::I32:
      OS << int64_t(int32_t(read<uint32_t>(P)));
      return;
    case ElementType::U32:
      OS << uint64_t(read<uint32_t>(P));
      return;
    case ElementType::I64:
      OS << int64_t(read<uint64_t>(P));
      return;
    case ElementType::U64:
      OS << read<uint64_t>(P);
      return;
    case ElementType::F16:
    case ElementType::BF16:
    case ElementType::F32:
    case ElementType::F64:
      OS << formatFloatLiteral(getFloat(I));
      return;
    case ElementType::Unknown:
      break;
    }
    llvm_unreachable("constant data of unknown element type");
  }

private:
  template <typename T> static T read(const uint8_t *P) {
    return endian::read<T, llvm::support::little, 1>(P);
  }

  llvm::APFloat getFloat(int64_t I) const {
    const uint8_t *P = Bytes + I * Size;
    unsigned Bits = Size * 8;
    uint64_t Raw = Size == 2   ? read<uint16_t>(P)
                   : Size == 4 ? read<uint32_t>(P)
                               : read<uint64_t>(P);
    return llvm::APFloat(getFloatSemantics(Ty), llvm::APInt(Bits, Raw));
  }

  ElementType Ty;
  const uint8_t *Bytes;
  unsigned Size;
};
} // namespace

/// Whether \p D prints as a splat, `dense<V>`.
static bool printsAsSplat(const TensorData &D) {
  return D.getNumElements() > 0 && D.isSplat() && ElementPrinter(D).isExact(0);
}

/// Print `dense<...>` without the type.
static void printDenseLiteral(llvm::raw_ostream &OS, const TensorData &D) {
  OS << "dense<";
  int64_t N = D.getNumElements();
  ElementPrinter EP(D);
  bool HalfWidth = D.getElementType() == ElementType::F16 ||
                   D.getElementType() == ElementType::BF16;
  if (N == 0) {
    OS << "[]>";
    return;
  }
  if (D.isSplat() && EP.isExact(0)) {
    EP.printElement(OS, 0);
    OS << '>';
    return;
  }
  bool AsList = N <= MaxDenseListElements && !HalfWidth;
  for (int64_t I = 0; AsList && I < N; ++I)
    AsList = EP.isExact(I);
  if (AsList) {
    OS << '[';
    for (int64_t I = 0; I < N; ++I) {
      if (I)
        OS << ", ";
      EP.printElement(OS, I);
    }
    OS << "]>";
    return;
  }
  static const char HexDigits[] = "0123456789ABCDEF";
  OS << "\"0x";
  for (uint8_t B : D.getBytes())
    OS << HexDigits[B >> 4] << HexDigits[B & 15];
  OS << "\">";
}

ExternalDataWriter::~ExternalDataWriter() = default;

/// Bytes of zeros that pad an entry of \p Size bytes to a multiple of 64.
static size_t getPadding(uint64_t Size) { return size_t(-Size & 63); }

uint64_t ExternalDataBuffer::write(llvm::ArrayRef<uint8_t> Data) {
  uint64_t Offset = Bytes.size();
  Bytes.insert(Bytes.end(), Data.begin(), Data.end());
  Bytes.resize(Bytes.size() + getPadding(Data.size()), 0);
  return Offset;
}

uint64_t ExternalDataStream::write(llvm::ArrayRef<uint8_t> Data) {
  static const char Zeros[64] = {};
  uint64_t Offset = Size;
  OS.write(reinterpret_cast<const char *>(Data.data()), Data.size());
  size_t Pad = getPadding(Data.size());
  OS.write(Zeros, Pad);
  Size += Data.size() + Pad;
  return Offset;
}

namespace {
/// Prints constant data inline or as references into an external blob,
/// writing each TensorData object to the blob once.
class DataPrinter {
public:
  explicit DataPrinter(const PrintOptions &Opts) : Opts(Opts) {}

  /// Print `dense<...>` or `dense_external<OFFSET>`, without the type.
  void printLiteral(llvm::raw_ostream &OS, const TensorData &D) {
    if (!goesExternal(D))
      return printDenseLiteral(OS, D);
    auto [It, Inserted] = Offsets.try_emplace(&D, 0);
    if (Inserted) {
      It->second = Opts.External->write(D.getBytes());
      assert(It->second % 64 == 0 && "external data offset not 64-aligned");
    }
    OS << "dense_external<" << It->second << '>';
  }

  /// Print the literal and the type.
  void printTyped(llvm::raw_ostream &OS, const TensorData &D) {
    printLiteral(OS, D);
    OS << " : " << D.getType();
  }

private:
  bool goesExternal(const TensorData &D) const {
    return Opts.External && !D.getBytes().empty() &&
           D.getBytes().size() >= Opts.MinExternalBytes && !printsAsSplat(D);
  }

  const PrintOptions &Opts;
  /// Only looked up, never iterated: the output stays deterministic.
  llvm::DenseMap<const TensorData *, uint64_t> Offsets;
};
} // namespace

void strider::printTensorData(const TensorData &D, llvm::raw_ostream &OS) {
  printDenseLiteral(OS, D);
  OS << " : " << D.getType();
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

static void printFloat(llvm::raw_ostream &OS, float F) {
  OS << formatFloatLiteral(llvm::APFloat(F));
}

static void printGraphImpl(const Graph &G, llvm::raw_ostream &OS,
                           DataPrinter &Data, unsigned Indent);

/// \p Indent: the indentation of the line the attribute is on (a graph
/// attribute's body goes two spaces deeper).
static void printAttributeImpl(const Attribute &A, llvm::raw_ostream &OS,
                               DataPrinter &Data, unsigned Indent = 0) {
  switch (A.getKind()) {
  case AttrKind::Int:
    OS << A.getInt();
    return;
  case AttrKind::Float:
    printFloat(OS, A.getFloat());
    return;
  case AttrKind::String:
    printQuotedString(OS, A.getString());
    return;
  case AttrKind::Ints:
    OS << '[';
    llvm::interleaveComma(A.getInts(), OS);
    OS << ']';
    return;
  case AttrKind::Floats:
    if (A.getFloats().empty())
      OS << "floats";
    OS << '[';
    llvm::interleaveComma(A.getFloats(), OS,
                          [&](float F) { printFloat(OS, F); });
    OS << ']';
    return;
  case AttrKind::Strings:
    if (A.getStrings().empty())
      OS << "strings";
    OS << '[';
    llvm::interleaveComma(A.getStrings(), OS, [&](const std::string &S) {
      printQuotedString(OS, S);
    });
    OS << ']';
    return;
  case AttrKind::Tensor:
    // Broken IR still prints (for debugging), but not in a parsable form.
    if (!A.getTensor())
      OS << "<<null tensor>>";
    else
      Data.printTyped(OS, *A.getTensor());
    return;
  case AttrKind::Graph:
    if (!A.getGraph())
      OS << "<<null graph>>";
    else
      printGraphImpl(*A.getGraph(), OS, Data, Indent);
    return;
  }
  llvm_unreachable("unknown attribute kind");
}

void strider::printAttribute(const Attribute &A, llvm::raw_ostream &OS) {
  PrintOptions Inline;
  DataPrinter Data(Inline);
  printAttributeImpl(A, OS, Data);
}

//===----------------------------------------------------------------------===//
// Graph
//===----------------------------------------------------------------------===//

/// Print the `model {...}` line: the ModelInfo fields that differ from
/// their defaults, and the source file. Nothing if all are defaults.
static void printModelLine(const Graph &G, llvm::raw_ostream &OS) {
  const ModelInfo &Info = G.getModelInfo();
  const ModelInfo Default;
  std::string Fields;
  llvm::raw_string_ostream FS(Fields);
  auto Field = [&](llvm::StringRef Name) -> llvm::raw_ostream & {
    if (!Fields.empty())
      FS << ", ";
    FS << Name << " = ";
    return FS;
  };
  auto StringField = [&](llvm::StringRef Name, const std::string &V) {
    if (!V.empty())
      printQuotedString(Field(Name), V);
  };
  if (Info.IRVersion != Default.IRVersion)
    Field("ir_version") << Info.IRVersion;
  if (!Info.OpsetImports.empty()) {
    Field("opset_import") << '{';
    bool First = true;
    for (const auto &[Domain, Version] : Info.OpsetImports) {
      if (!First)
        FS << ", ";
      First = false;
      printQuotedString(FS, Domain);
      FS << " = " << Version;
    }
    FS << '}';
  }
  StringField("producer_name", Info.ProducerName);
  StringField("producer_version", Info.ProducerVersion);
  StringField("domain", Info.Domain);
  if (Info.ModelVersion != Default.ModelVersion)
    Field("model_version") << Info.ModelVersion;
  StringField("doc_string", Info.DocString);
  StringField("graph_doc_string", Info.GraphDocString);
  if (!Info.Metadata.empty()) {
    Field("metadata_props") << '{';
    bool First = true;
    for (const auto &[Key, Val] : Info.Metadata) {
      if (!First)
        FS << ", ";
      First = false;
      printQuotedString(FS, Key);
      FS << " = ";
      printQuotedString(FS, Val);
    }
    FS << '}';
  }
  StringField("source", G.getSourceFile());
  FS.flush();
  if (!Fields.empty())
    OS << "model {" << Fields << "}\n";
}

static void printInput(const Value &In, llvm::raw_ostream &OS,
                       DataPrinter &Data) {
  printValueName(OS, In.getName());
  OS << ": " << In.getType();
  if (const TensorDataRef &D = In.getDefaultData()) {
    OS << " = ";
    Data.printLiteral(OS, *D);
    // The data's type is the input's unless stated.
    if (D->getType() != In.getType())
      OS << " : " << D->getType();
  }
}

static void printLocation(const Graph &G, const Node &N,
                          llvm::raw_ostream &OS) {
  const Location &L = N.getLoc();
  bool DefaultFile = L.File.empty() || L.File == G.getSourceFile();
  if (DefaultFile && L.Name.empty())
    return;
  OS << " loc(";
  if (!DefaultFile) {
    printQuotedString(OS, L.File);
    OS << ':';
  }
  printQuotedString(OS, L.Name);
  OS << ')';
}

static void printNode(const Graph &G, const Node &N, llvm::raw_ostream &OS,
                      DataPrinter &Data, unsigned Indent) {
  OS.indent(Indent);
  if (N.getNumResults()) {
    for (unsigned I = 0; I < N.getNumResults(); ++I) {
      if (I)
        OS << ", ";
      if (Value *R = N.getResult(I))
        printValueName(OS, R->getName());
      else
        OS << '_';
    }
    OS << " = ";
  }
  printOpName(OS, N);
  OS << '(';
  for (unsigned I = 0; I < N.getNumOperands(); ++I) {
    if (I)
      OS << ", ";
    if (Value *V = N.getOperand(I))
      printValueName(OS, V->getName());
    else
      OS << "none";
  }
  OS << ')';
  if (!N.getAttrs().empty()) {
    OS << " {";
    llvm::interleaveComma(N.getAttrs(), OS, [&](const NamedAttribute &A) {
      printIdentifier(OS, A.Name);
      OS << " = ";
      printAttributeImpl(A.Value, OS, Data, Indent);
    });
    OS << '}';
  }
  bool First = true;
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    Value *R = N.getResult(I);
    if (!R)
      continue;
    OS << (First ? " : " : ", ") << R->getType();
    First = false;
  }
  printLocation(G, N, OS);
  if (!N.getDocString().empty()) {
    OS << " doc = ";
    printQuotedString(OS, N.getDocString());
  }
  OS << '\n';
}

void strider::printGraph(const Graph &G, llvm::raw_ostream &OS) {
  printGraph(G, OS, PrintOptions());
}

/// `graph @name(inputs) {`, the nodes at \p Indent + 2, `return ...` and
/// `}` at \p Indent (without a final newline).
static void printGraphImpl(const Graph &G, llvm::raw_ostream &OS,
                           DataPrinter &Data, unsigned Indent) {
  OS << "graph @";
  printIdentifier(OS, G.getName());
  OS << '(';
  // Inputs with data get a line each; the hex of weights is long.
  bool OnePerLine = llvm::any_of(
      G.getInputs(), [](const Value *V) { return V->getDefaultData(); });
  for (unsigned I = 0; I < G.getInputs().size(); ++I) {
    if (I)
      OS << ',';
    if (OnePerLine)
      (OS << '\n').indent(Indent + 4);
    else if (I)
      OS << ' ';
    printInput(*G.getInputs()[I], OS, Data);
  }
  OS << ") {\n";
  for (const Node *N : G.nodes())
    printNode(G, *N, OS, Data, Indent + 2);
  OS.indent(Indent + 2) << "return";
  for (unsigned I = 0; I < G.getOutputs().size(); ++I) {
    OS << (I ? ", " : " ");
    if (const Value *Out = G.getOutputs()[I])
      printValueName(OS, Out->getName());
    else
      OS << "<<null value>>";
  }
  OS << '\n';
  OS.indent(Indent) << '}';
}

void strider::printGraph(const Graph &G, llvm::raw_ostream &OS,
                         const PrintOptions &Opts) {
  DataPrinter Data(Opts);
  printModelLine(G, OS);
  printGraphImpl(G, OS, Data, 0);
  OS << '\n';
}
