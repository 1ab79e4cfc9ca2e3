//===- Types.cpp - Element types, dims, layouts and tensor types ----------===//
//
// Names, sizes and ONNX codes of element types; layout names; the textual
// form of tensor types.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Types.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <mutex>
#include <numeric>

using namespace strider;

namespace {
struct ElementTypeEntry {
  ElementType Ty;
  const char *Name;
  unsigned Bytes;
  int32_t OnnxCode;
};
// ONNX TensorProto::DataType codes.
constexpr ElementTypeEntry ElementTypeTable[] = {
    {ElementType::Unknown, "?", 0, 0},   {ElementType::F32, "f32", 4, 1},
    {ElementType::F16, "f16", 2, 10},    {ElementType::BF16, "bf16", 2, 16},
    {ElementType::F64, "f64", 8, 11},    {ElementType::I8, "i8", 1, 3},
    {ElementType::U8, "u8", 1, 2},       {ElementType::I16, "i16", 2, 5},
    {ElementType::U16, "u16", 2, 4},     {ElementType::I32, "i32", 4, 6},
    {ElementType::U32, "u32", 4, 12},    {ElementType::I64, "i64", 8, 7},
    {ElementType::U64, "u64", 8, 13},    {ElementType::Bool, "bool", 1, 9},
};

const ElementTypeEntry &entryFor(ElementType Ty) {
  const ElementTypeEntry &E = ElementTypeTable[static_cast<unsigned>(Ty)];
  assert(E.Ty == Ty && "element type table out of order");
  return E;
}
} // namespace

unsigned strider::getElementByteSize(ElementType Ty) {
  return entryFor(Ty).Bytes;
}

llvm::StringRef strider::getElementTypeName(ElementType Ty) {
  return entryFor(Ty).Name;
}

llvm::Optional<ElementType> strider::parseElementTypeName(llvm::StringRef N) {
  for (const ElementTypeEntry &E : ElementTypeTable)
    if (N == E.Name && E.Ty != ElementType::Unknown)
      return E.Ty;
  return llvm::None;
}

int32_t strider::toOnnxDataType(ElementType Ty) { return entryFor(Ty).OnnxCode; }

llvm::Optional<ElementType> strider::fromOnnxDataType(int32_t Code) {
  for (const ElementTypeEntry &E : ElementTypeTable)
    if (E.OnnxCode == Code && E.Ty != ElementType::Unknown)
      return E.Ty;
  return llvm::None;
}

bool strider::isFloatingPoint(ElementType Ty) {
  return Ty == ElementType::F32 || Ty == ElementType::F16 ||
         Ty == ElementType::BF16 || Ty == ElementType::F64;
}

bool strider::isSignedInteger(ElementType Ty) {
  return Ty == ElementType::I8 || Ty == ElementType::I16 ||
         Ty == ElementType::I32 || Ty == ElementType::I64;
}

bool strider::isUnsignedInteger(ElementType Ty) {
  return Ty == ElementType::U8 || Ty == ElementType::U16 ||
         Ty == ElementType::U32 || Ty == ElementType::U64;
}

//===----------------------------------------------------------------------===//
// Dim
//===----------------------------------------------------------------------===//

Dim Dim::getStatic(int64_t Size) {
  assert(Size >= 0 && "static dims are non-negative");
  Dim D;
  D.Size = Size;
  return D;
}

Dim Dim::getSymbol(llvm::StringRef Name) {
  Dim D;
  if (Name.empty())
    return D;
  static std::mutex PoolMutex;
  // Entries stay where they are allocated when the table grows.
  static llvm::StringSet<> *Pool = new llvm::StringSet<>();
  std::lock_guard<std::mutex> Lock(PoolMutex);
  D.Symbol = Pool->insert(Name).first->getKey();
  return D;
}

int64_t Dim::getSize() const {
  assert(isStatic() && "dim is not static");
  return Size;
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

Layout::Layout(llvm::ArrayRef<unsigned> P) {
#ifndef NDEBUG
  llvm::SmallVector<int64_t, 6> Check(P.begin(), P.end());
  assert(isPermutation(Check) && "layout must be a permutation");
#endif
  bool Identity = true;
  for (unsigned I = 0; I < P.size(); ++I)
    Identity &= P[I] == I;
  if (!Identity)
    Perm.assign(P.begin(), P.end());
}

Layout Layout::getChannelsLast(unsigned Rank) {
  if (Rank < 3)
    return Layout();
  llvm::SmallVector<unsigned, 6> P;
  P.push_back(0);
  for (unsigned I = 2; I < Rank; ++I)
    P.push_back(I);
  P.push_back(1);
  return Layout(P);
}

bool Layout::isPermutation(llvm::ArrayRef<int64_t> P) {
  llvm::SmallVector<bool, 8> Seen(P.size(), false);
  for (int64_t X : P) {
    if (X < 0 || X >= static_cast<int64_t>(P.size()) || Seen[X])
      return false;
    Seen[X] = true;
  }
  return true;
}

llvm::SmallVector<unsigned, 6> Layout::getPermutation(unsigned Rank) const {
  if (!Perm.empty()) {
    assert(Perm.size() == Rank && "layout rank mismatch");
    return Perm;
  }
  llvm::SmallVector<unsigned, 6> P(Rank);
  std::iota(P.begin(), P.end(), 0u);
  return P;
}

bool Layout::isValidForRank(unsigned Rank) const {
  return Perm.empty() || Perm.size() == Rank;
}

bool Layout::isChannelsLast(unsigned Rank) const {
  return Rank >= 3 && *this == getChannelsLast(Rank);
}

// Conventional names for ranks 3..5, channels-first and channels-last.
static const char *const FirstNames[] = {"ncw", "nchw", "ncdhw"};
static const char *const LastNames[] = {"nwc", "nhwc", "ndhwc"};

std::string Layout::getName(unsigned Rank) const {
  if (Rank >= 3 && Rank <= 5) {
    if (isIdentity())
      return FirstNames[Rank - 3];
    if (isChannelsLast(Rank))
      return LastNames[Rank - 3];
  }
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << '[';
  llvm::interleaveComma(getPermutation(Rank), OS);
  OS << ']';
  return OS.str();
}

llvm::Optional<Layout> Layout::parse(llvm::StringRef Text, unsigned Rank) {
  // Weight-layout aliases share the activation permutations.
  static const struct {
    const char *Name;
    unsigned Rank;
    bool Last;
  } Names[] = {{"ncw", 3, false},   {"nwc", 3, true},    {"oiw", 3, false},
               {"owi", 3, true},    {"nchw", 4, false},  {"nhwc", 4, true},
               {"oihw", 4, false},  {"ohwi", 4, true},   {"ncdhw", 5, false},
               {"ndhwc", 5, true},  {"oidhw", 5, false}, {"odhwi", 5, true}};
  for (const auto &N : Names) {
    if (Text != N.Name)
      continue;
    if (N.Rank != Rank)
      return llvm::None;
    return N.Last ? getChannelsLast(Rank) : Layout();
  }
  Text = Text.trim();
  if (!Text.consume_front("[") || !Text.consume_back("]"))
    return llvm::None;
  llvm::SmallVector<int64_t, 6> P;
  llvm::SmallVector<llvm::StringRef, 6> Parts;
  Text.split(Parts, ',');
  if (Text.trim().empty())
    Parts.clear();
  for (llvm::StringRef Part : Parts) {
    int64_t X;
    if (Part.trim().getAsInteger(10, X))
      return llvm::None;
    P.push_back(X);
  }
  if (P.size() != Rank || !isPermutation(P))
    return llvm::None;
  llvm::SmallVector<unsigned, 6> U(P.begin(), P.end());
  return Layout(U);
}

//===----------------------------------------------------------------------===//
// TensorType
//===----------------------------------------------------------------------===//

TensorType::TensorType(ElementType Elt, llvm::ArrayRef<Dim> Shape, Layout L)
    : Elt(Elt), Ranked(true), Shape(Shape.begin(), Shape.end()),
      L(std::move(L)) {
  assert(this->L.isValidForRank(Shape.size()) && "layout rank mismatch");
}

TensorType TensorType::get(ElementType Elt, llvm::ArrayRef<int64_t> Shape,
                           Layout L) {
  llvm::SmallVector<Dim, 6> Dims;
  for (int64_t S : Shape)
    Dims.push_back(Dim::getStatic(S));
  return TensorType(Elt, Dims, std::move(L));
}

TensorType TensorType::getUnranked(ElementType Elt) {
  TensorType T;
  T.Elt = Elt;
  return T;
}

unsigned TensorType::getRank() const {
  assert(Ranked && "unranked tensor has no rank");
  return Shape.size();
}

bool TensorType::hasStaticShape() const {
  return Ranked &&
         llvm::all_of(Shape, [](const Dim &D) { return D.isStatic(); });
}

llvm::SmallVector<int64_t, 6> TensorType::getStaticShape() const {
  assert(hasStaticShape() && "shape is not static");
  llvm::SmallVector<int64_t, 6> R;
  for (const Dim &D : Shape)
    R.push_back(D.getSize());
  return R;
}

llvm::Optional<int64_t> TensorType::getNumElements() const {
  if (!hasStaticShape())
    return llvm::None;
  // An empty shape's other dims may overflow a product taken in order.
  if (llvm::any_of(Shape, [](const Dim &D) { return D.getSize() == 0; }))
    return 0;
  int64_t N = 1;
  for (const Dim &D : Shape)
    N *= D.getSize();
  return N;
}

bool TensorType::isWithinSizeLimit() const {
  if (!hasStaticShape())
    return true;
  // 0 dims count as 1: the strides of an empty tensor must fit too.
  int64_t Bytes = std::max<int64_t>(1, getElementByteSize(Elt));
  for (const Dim &D : Shape)
    if (llvm::MulOverflow(Bytes, std::max<int64_t>(D.getSize(), 1), Bytes) ||
        Bytes > MaxTensorBytes)
      return false;
  return true;
}

const char *TensorType::getSizeLimitProblem() const {
  bool Empty = llvm::any_of(
      Shape, [](const Dim &D) { return D.isStatic() && !D.getSize(); });
  return Empty ? "empty, but its other dims span more than 2^62 bytes"
               : "more than 2^62 bytes";
}

TensorType TensorType::withLayout(Layout NewL) const {
  TensorType T = *this;
  assert(Ranked && NewL.isValidForRank(Shape.size()));
  T.L = std::move(NewL);
  return T;
}

TensorType TensorType::withElementType(ElementType NewElt) const {
  TensorType T = *this;
  T.Elt = NewElt;
  return T;
}

TensorType TensorType::withShape(llvm::ArrayRef<Dim> NewShape) const {
  TensorType T = *this;
  T.Ranked = true;
  T.Shape.assign(NewShape.begin(), NewShape.end());
  if (!T.L.isValidForRank(NewShape.size()))
    T.L = Layout();
  return T;
}

bool strider::isBareIdentifier(llvm::StringRef Name) {
  if (Name.empty() || !(llvm::isAlpha(Name[0]) || Name[0] == '_'))
    return false;
  return llvm::all_of(Name, [](char C) {
    return llvm::isAlnum(C) || C == '_' || C == '.' || C == '$';
  });
}

void strider::printQuotedString(llvm::raw_ostream &OS, llvm::StringRef S) {
  OS << '"';
  for (unsigned char C : S) {
    if (C == '"' || C == '\\')
      OS << '\\' << C;
    else if (C == '\n')
      OS << "\\n";
    else if (C == '\t')
      OS << "\\t";
    else if (C < 0x20 || C >= 0x7f)
      OS << '\\' << llvm::format_hex_no_prefix(C, 2, /*Upper=*/true);
    else
      OS << C;
  }
  OS << '"';
}

void TensorType::print(llvm::raw_ostream &OS) const {
  OS << "tensor<";
  if (!Ranked) {
    OS << "* x ";
  } else {
    for (const Dim &D : Shape) {
      if (D.isStatic())
        OS << D.getSize();
      else if (D.isUnknown())
        OS << '?';
      else if (isBareIdentifier(D.getSymbol()))
        OS << D.getSymbol();
      else
        printQuotedString(OS, D.getSymbol());
      OS << " x ";
    }
  }
  OS << getElementTypeName(Elt);
  if (Ranked && !L.isIdentity())
    OS << ", " << L.getName(Shape.size());
  OS << '>';
}

std::string TensorType::str() const {
  std::string S;
  llvm::raw_string_ostream OS(S);
  print(OS);
  return OS.str();
}

llvm::raw_ostream &strider::operator<<(llvm::raw_ostream &OS,
                                       const TensorType &T) {
  T.print(OS);
  return OS;
}
