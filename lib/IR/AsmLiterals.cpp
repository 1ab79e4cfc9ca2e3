//===- AsmLiterals.cpp - Constants of the textual IR ----------------------===//
//
// `dense<...>` (a splat, a list of elements, or hex bytes) and
// `dense_external<offset>` (bytes of the weights file) parsed and encoded
// as the tensor data of their type.
//
//===----------------------------------------------------------------------===//

#include "AsmParserImpl.h"

#include "strider/IR/Diagnostics.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"

using namespace strider;
using namespace strider::asmsyntax;

/// Largest constant a splat `dense<V>` may expand to. Listed and hex data
/// are bounded by the size of the text itself.
static constexpr uint64_t MaxSplatBytes = uint64_t(1) << 30;

static bool isElementLiteral(const Token &T) {
  return T.is(TokenKind::Integer) || T.is(TokenKind::Float) ||
         T.isIdentifier("true") || T.isIdentifier("false") ||
         T.isIdentifier("inf") || T.isIdentifier("nan");
}

bool asmsyntax::isDenseKeyword(const Token &T) {
  return T.isIdentifier("dense") || T.isIdentifier("dense_external");
}

bool Parser::parseDenseLiteral(DenseLiteral &Out) {
  Out.Loc = Tok.getLoc();
  if (Tok.isIdentifier("dense_external")) {
    consume();
    Out.Form = DenseLiteral::External;
    if (expect(TokenKind::Less, "'<'"))
      return true;
    if (!Tok.is(TokenKind::Integer))
      return emitError("expected the data's byte offset in the weights file");
    if (Tok.Text.startswith("-") || Tok.Text.getAsInteger(10, Out.Offset))
      return emitError("dense_external offset " + spell(Tok) +
                       " is out of range");
    if (Out.Offset % 64)
      return emitError("dense_external offset " + spell(Tok) +
                       " is not a multiple of 64");
    consume();
    return expect(TokenKind::Greater, "'>'");
  }
  if (!Tok.isIdentifier("dense"))
    return emitError("expected 'dense' or 'dense_external'");
  consume();
  if (expect(TokenKind::Less, "'<'"))
    return true;
  if (Tok.is(TokenKind::String)) {
    Out.Form = DenseLiteral::Hex;
    Out.HexData = Tok;
    consume();
  } else if (consumeIf(TokenKind::LSquare)) {
    Out.Form = DenseLiteral::List;
    if (!Tok.is(TokenKind::RSquare)) {
      do {
        if (!isElementLiteral(Tok))
          return emitError("expected a number, 'true' or 'false'");
        Out.Elements.push_back(Tok);
        consume();
      } while (consumeIf(TokenKind::Comma));
    }
    if (expect(TokenKind::RSquare, "',' or ']'"))
      return true;
  } else {
    Out.Form = DenseLiteral::Splat;
    if (!isElementLiteral(Tok))
      return emitError("expected a number, 'true', 'false', a list or a "
                       "hex string in dense<...>");
    Out.Elements.push_back(Tok);
    consume();
  }
  return expect(TokenKind::Greater, "'>'");
}

/// Append the low \p Size bytes of \p Raw, least significant first.
static void appendLittleEndian(std::vector<uint8_t> &Bytes, uint64_t Raw,
                               unsigned Size) {
  for (unsigned I = 0; I < Size; ++I)
    Bytes.push_back(uint8_t(Raw >> (8 * I)));
}

bool Parser::encodeElement(const Token &T, ElementType Ty,
                           std::vector<uint8_t> &Bytes) {
  llvm::StringRef TyName = getElementTypeName(Ty);
  if (Ty == ElementType::Bool) {
    if (T.isIdentifier("true") || (T.is(TokenKind::Integer) && T.Text == "1"))
      Bytes.push_back(1);
    else if (T.isIdentifier("false") ||
             (T.is(TokenKind::Integer) && T.Text == "0"))
      Bytes.push_back(0);
    else
      return emitError(T.getLoc(), "expected 'true' or 'false' for a bool "
                                   "element, got '" +
                                       spell(T) + "'");
    return false;
  }
  if (isFloatingPoint(Ty)) {
    if (T.isIdentifier("true") || T.isIdentifier("false"))
      return emitError(T.getLoc(), "expected a number for an " + TyName +
                                       " element, got '" + spell(T) + "'");
    llvm::Optional<llvm::APFloat> V =
        parseFloatLiteral(T.Text, getFloatSemantics(Ty));
    if (!V)
      return emitError(T.getLoc(),
                       "value " + spell(T) + " is out of range for " + TyName);
    appendLittleEndian(Bytes, V->bitcastToAPInt().getZExtValue(),
                       getElementByteSize(Ty));
    return false;
  }
  // Integers: the literal must be an integer in the type's range.
  if (!T.is(TokenKind::Integer))
    return emitError(T.getLoc(), "expected an integer for an " + TyName +
                                     " element, got '" + spell(T) + "'");
  unsigned Size = getElementByteSize(Ty);
  auto OutOfRange = [&] {
    return emitError(T.getLoc(),
                     "value " + spell(T) + " is out of range for " + TyName);
  };
  uint64_t Raw;
  if (isSignedInteger(Ty)) {
    int64_t V;
    if (T.Text.getAsInteger(10, V))
      return OutOfRange();
    if (Size < 8) {
      int64_t Limit = int64_t(1) << (Size * 8 - 1);
      if (V < -Limit || V >= Limit)
        return OutOfRange();
    }
    Raw = uint64_t(V);
  } else {
    uint64_t V;
    if (T.Text.startswith("-") || T.Text.getAsInteger(10, V))
      return OutOfRange();
    if (Size < 8 && V >= (uint64_t(1) << (Size * 8)))
      return OutOfRange();
    Raw = V;
  }
  appendLittleEndian(Bytes, Raw, Size);
  return false;
}

bool Parser::buildTensorData(const DenseLiteral &L, const TensorType &T,
                             TensorDataRef &Out) {
  if (!T.hasStaticShape())
    return emitError(L.Loc, "constant of type " + T.str() +
                                " must have a static shape");
  if (T.getElementType() == ElementType::Unknown)
    return emitError(L.Loc, "constant of type " + T.str() +
                                " must have a known element type");
  // parseType has checked that the element count fits in int64.
  int64_t NumElements = *T.getNumElements();
  int64_t EltSize = getElementByteSize(T.getElementType());
  int64_t NumBytes;
  if (llvm::MulOverflow(NumElements, EltSize, NumBytes))
    return emitError(L.Loc, "constant of type " + T.str() + " is too large");

  if (L.Form == DenseLiteral::External)
    return buildExternalData(L, T, uint64_t(NumBytes), Out);

  std::vector<uint8_t> Bytes;
  switch (L.Form) {
  case DenseLiteral::External:
    llvm_unreachable("handled above");
  case DenseLiteral::Hex: {
    llvm::StringRef Hex = L.HexData.Text.drop_front().drop_back();
    if (!Hex.consume_front("0x") && !Hex.consume_front("0X"))
      return emitError(L.HexData.getLoc(), "hex data must start with '0x'");
    if (!llvm::all_of(Hex, llvm::isHexDigit))
      return emitError(L.HexData.getLoc(), "hex data has a non-hex digit");
    if (Hex.size() % 2)
      return emitError(L.HexData.getLoc(),
                       "hex data has an odd number of digits");
    if (uint64_t(Hex.size() / 2) != uint64_t(NumBytes))
      return emitError(L.HexData.getLoc(),
                       "hex data has " + llvm::Twine(Hex.size() / 2) +
                           " bytes, but " + T.str() + " needs " +
                           llvm::Twine(NumBytes));
    Bytes.reserve(NumBytes);
    for (size_t I = 0; I < Hex.size(); I += 2)
      Bytes.push_back(uint8_t(llvm::hexDigitValue(Hex[I]) * 16 +
                              llvm::hexDigitValue(Hex[I + 1])));
    break;
  }
  case DenseLiteral::List:
    if (uint64_t(L.Elements.size()) != uint64_t(NumElements))
      return emitError(L.Loc, "dense list has " +
                                  llvm::Twine(L.Elements.size()) +
                                  " elements, but " + T.str() + " has " +
                                  llvm::Twine(NumElements));
    Bytes.reserve(NumBytes);
    for (const Token &E : L.Elements)
      if (encodeElement(E, T.getElementType(), Bytes))
        return true;
    break;
  case DenseLiteral::Splat: {
    if (uint64_t(NumBytes) > MaxSplatBytes)
      return emitError(L.Loc, "splat constant of type " + T.str() +
                                  " is too large to expand");
    if (encodeElement(L.Elements.front(), T.getElementType(), Bytes))
      return true;
    if (NumElements == 0) {
      Bytes.clear();
      break;
    }
    Bytes.reserve(NumBytes);
    for (int64_t I = 1; I < NumElements; ++I)
      Bytes.insert(Bytes.end(), Bytes.begin(), Bytes.begin() + EltSize);
    break;
  }
  }
  llvm::Expected<TensorDataRef> D = TensorData::create(T, std::move(Bytes));
  if (!D)
    return emitError(L.Loc, llvm::toString(D.takeError()));
  Out = std::move(*D);
  return false;
}

bool Parser::buildExternalData(const DenseLiteral &L, const TensorType &T,
                               uint64_t NumBytes, TensorDataRef &Out) {
  if (!External && !Loaded) {
    if (!LoadExternal)
      return emitError(L.Loc, "dense_external<...> needs the weights file " +
                                  WeightsName + ", which was not given");
    llvm::Expected<ExternalData> Data = LoadExternal();
    if (!Data)
      return emitError(L.Loc, "dense_external<...> needs the weights file " +
                                  WeightsName + ", which " +
                                  llvm::toString(Data.takeError()));
    Loaded = std::move(*Data);
  }
  const ExternalData &Blob = External ? *External : *Loaded;
  uint64_t Size = Blob.Bytes.size();
  if (L.Offset > Size || NumBytes > Size - L.Offset)
    return emitError(L.Loc, "dense_external<" + llvm::Twine(L.Offset) +
                                "> : " + T.str() + " needs " +
                                llvm::Twine(NumBytes) + " bytes at offset " +
                                llvm::Twine(L.Offset) + ", but " + Blob.Name +
                                " has " + llvm::Twine(Size));
  llvm::Expected<TensorDataRef> D = TensorData::createView(
      T, Blob.Bytes.slice(L.Offset, NumBytes), Blob.Owner);
  if (!D)
    return emitError(L.Loc, llvm::toString(D.takeError()));
  Out = std::move(*D);
  return false;
}
