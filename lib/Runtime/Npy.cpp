//===- Npy.cpp - NumPy .npy files -----------------------------------------===//
//
// The .npy format: a magic string, a version, a little-endian header length,
// a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}
// padded with spaces to a 16-byte boundary, then the raw data.
//
//===----------------------------------------------------------------------===//

#include "strider/Runtime/Npy.h"

#include "strider/Support/FileIO.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>

using namespace strider;
using namespace strider::runtime;

namespace {
struct DType {
  const char *Code; ///< numpy type code and size, without the byte order.
  ElementType Elt;
};
const DType DTypes[] = {
    {"f4", ElementType::F32}, {"f8", ElementType::F64},
    {"f2", ElementType::F16}, {"i1", ElementType::I8},
    {"u1", ElementType::U8},  {"i2", ElementType::I16},
    {"u2", ElementType::U16}, {"i4", ElementType::I32},
    {"u4", ElementType::U32}, {"i8", ElementType::I64},
    {"u8", ElementType::U64}, {"b1", ElementType::Bool},
};

llvm::Error npyError(llvm::StringRef Name, const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 Name + ": " + Msg);
}

/// The value of key \p Key in the header dict: the text after `'Key':` up
/// to the next top-level comma or the closing brace.
llvm::Optional<llvm::StringRef> getHeaderValue(llvm::StringRef Header,
                                               llvm::StringRef Key) {
  std::string Quoted = ("'" + Key + "'").str();
  size_t Pos = Header.find(Quoted);
  if (Pos == llvm::StringRef::npos)
    return llvm::None;
  llvm::StringRef Rest = Header.drop_front(Pos + Quoted.size()).ltrim();
  if (!Rest.consume_front(":"))
    return llvm::None;
  Rest = Rest.ltrim();
  int Depth = 0;
  for (size_t I = 0; I < Rest.size(); ++I) {
    char C = Rest[I];
    if (C == '(')
      ++Depth;
    else if (C == ')')
      --Depth;
    else if ((C == ',' && Depth == 0) || C == '}')
      return Rest.take_front(I).trim();
  }
  return llvm::None;
}
} // namespace

llvm::Expected<Tensor> runtime::parseNpy(llvm::StringRef Bytes,
                                         llvm::StringRef Name) {
  if (!Bytes.startswith("\x93NUMPY") || Bytes.size() < 10)
    return npyError(Name, "not a .npy file (bad magic string)");
  unsigned Major = uint8_t(Bytes[6]);
  size_t HeaderLen, HeaderStart;
  if (Major == 1) {
    HeaderLen = uint8_t(Bytes[8]) | (size_t(uint8_t(Bytes[9])) << 8);
    HeaderStart = 10;
  } else if (Major == 2 || Major == 3) {
    if (Bytes.size() < 12)
      return npyError(Name, "truncated header");
    HeaderLen = 0;
    for (unsigned I = 0; I < 4; ++I)
      HeaderLen |= size_t(uint8_t(Bytes[8 + I])) << (8 * I);
    HeaderStart = 12;
  } else {
    return npyError(Name, "unsupported .npy version " + llvm::Twine(Major));
  }
  if (HeaderStart + HeaderLen > Bytes.size())
    return npyError(Name, "truncated header");
  llvm::StringRef Header = Bytes.substr(HeaderStart, HeaderLen);

  auto Descr = getHeaderValue(Header, "descr");
  auto Fortran = getHeaderValue(Header, "fortran_order");
  auto ShapeText = getHeaderValue(Header, "shape");
  if (!Descr || !Fortran || !ShapeText)
    return npyError(Name, "header lacks descr, fortran_order or shape");
  llvm::StringRef D = Descr->trim("'\"");
  // Byte order: '<' little-endian, '=' native (little-endian on every host
  // we run on), '|' not applicable (one-byte types).
  ElementType Elt = ElementType::Unknown;
  if (D.size() == 3 && (D[0] == '<' || D[0] == '=' || D[0] == '|'))
    for (const DType &T : DTypes)
      if (D.drop_front() == T.Code)
        Elt = T.Elt;
  if (Elt == ElementType::Unknown)
    return npyError(Name, "unsupported dtype '" + D + "'");
  bool IsFortran;
  if (*Fortran == "True")
    IsFortran = true;
  else if (*Fortran == "False")
    IsFortran = false;
  else
    return npyError(Name, "bad fortran_order '" + *Fortran + "'");

  llvm::StringRef S = ShapeText->trim();
  if (!S.consume_front("(") || !S.consume_back(")"))
    return npyError(Name, "bad shape '" + *ShapeText + "'");
  llvm::SmallVector<int64_t, 6> Shape;
  llvm::SmallVector<llvm::StringRef, 6> Parts;
  S.split(Parts, ',', -1, /*KeepEmpty=*/false);
  // Span: the product with 0 dims as 1, so that an empty array's strides
  // stay small too (the npy fuzzer found an empty one whose other dims
  // overflowed them).
  uint64_t Count = 1, Span = 1;
  for (llvm::StringRef P : Parts) {
    int64_t Dim;
    if (P.trim().getAsInteger(10, Dim) || Dim < 0)
      return npyError(Name, "bad shape '" + *ShapeText + "'");
    uint64_t D = uint64_t(std::max<int64_t>(Dim, 1));
    if (Span > (uint64_t(1) << 40) / D)
      return npyError(Name, "array too large");
    Span *= D;
    Count *= uint64_t(Dim);
    Shape.push_back(Dim);
  }

  llvm::StringRef Data = Bytes.drop_front(HeaderStart + HeaderLen);
  uint64_t Need = Count * getElementByteSize(Elt);
  if (Data.size() != Need)
    return npyError(Name, "data holds " + llvm::Twine(uint64_t(Data.size())) +
                              " bytes, the header says " + llvm::Twine(Need));
  // Fortran order is the C order of the reversed dims.
  Layout L;
  if (IsFortran && Shape.size() > 1) {
    llvm::SmallVector<unsigned, 6> Perm;
    for (unsigned I = Shape.size(); I > 0; --I)
      Perm.push_back(I - 1);
    L = Layout(Perm);
  }
  Tensor T(Elt, Shape, L);
  if (!Data.empty()) // An empty tensor has no bytes to copy (nor a pointer).
    std::memcpy(T.getMutableBytes().data(), Data.data(), Data.size());
  return T;
}

llvm::Expected<Tensor> runtime::readNpyFile(llvm::StringRef Path) {
  auto Buf = readInputFile(Path);
  if (!Buf)
    return Buf.takeError();
  return parseNpy((*Buf)->getBuffer(), Path);
}

llvm::Expected<std::string> runtime::writeNpy(const Tensor &T) {
  std::string Descr;
  for (const DType &D : DTypes)
    if (D.Elt == T.getElementType())
      Descr =
          (getElementByteSize(D.Elt) == 1 ? "|" : "<") + std::string(D.Code);
  if (Descr.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "element type " +
                                       getElementTypeName(T.getElementType()) +
                                       " has no .npy dtype");
  std::string Header;
  llvm::raw_string_ostream OS(Header);
  OS << "{'descr': '" << Descr << "', 'fortran_order': False, 'shape': (";
  for (int64_t D : T.getShape())
    OS << D << (T.getRank() == 1 ? "," : ", ");
  if (T.getRank() > 1)
    Header.resize(Header.size() - 2);
  OS << "), }";
  OS.flush();
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64.
  size_t Total = 10 + Header.size() + 1;
  Header.append((64 - Total % 64) % 64, ' ');
  Header += '\n';
  std::string Out = "\x93NUMPY";
  Out += char(1);
  Out += char(0);
  Out += char(Header.size() & 0xff);
  Out += char(Header.size() >> 8);
  Out += Header;
  Tensor C = T.getLayout().isIdentity() ? T : T.withLayout(Layout());
  Out.append(reinterpret_cast<const char *>(C.getBytes().data()),
             C.getBytes().size());
  return Out;
}
