//===- AsmLexer.cpp - Tokens and literals of the textual IR ---------------===//
//
// Turns `.lir` text into tokens, and converts float literals both ways with
// APFloat so that printing and parsing agree exactly.
//
//===----------------------------------------------------------------------===//

#include "AsmLexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace strider;
using namespace strider::asmsyntax;

static bool isIdentifierStart(char C) { return llvm::isAlpha(C) || C == '_'; }

static bool isIdentifierChar(char C) {
  return llvm::isAlnum(C) || C == '_' || C == '.' || C == '$';
}

bool asmsyntax::isBareValueNameChar(char C) {
  return llvm::isAlnum(C) || C == '_' || C == '.' || C == '$' || C == '/' ||
         C == '-';
}

bool asmsyntax::isBareValueName(llvm::StringRef Name) {
  return !Name.empty() && llvm::all_of(Name, isBareValueNameChar);
}

/// Resolve the escapes of a quoted string body; the lexer has validated it.
static std::string unescape(llvm::StringRef Body) {
  std::string S;
  S.reserve(Body.size());
  for (size_t I = 0; I < Body.size(); ++I) {
    char C = Body[I];
    if (C != '\\' || I + 1 >= Body.size()) {
      S.push_back(C);
      continue;
    }
    char E = Body[++I];
    if (E == 'n') {
      S.push_back('\n');
    } else if (E == 't') {
      S.push_back('\t');
    } else if (E == '"' || E == '\\') {
      S.push_back(E);
    } else if (I + 1 < Body.size() && llvm::isHexDigit(E) &&
               llvm::isHexDigit(Body[I + 1])) {
      S.push_back(
          char(llvm::hexDigitValue(E) * 16 + llvm::hexDigitValue(Body[I + 1])));
      ++I;
    }
  }
  return S;
}

std::string Token::getStringValue() const {
  llvm::StringRef T = Text;
  if (Kind == TokenKind::ValueName || Kind == TokenKind::GraphName)
    T = T.drop_front();
  if (T.size() >= 2 && T.front() == '"' && T.back() == '"')
    return unescape(T.drop_front().drop_back());
  return T.str();
}

Token AsmLexer::makeError(const char *Start, const llvm::Twine &Msg) {
  ErrorMessage = Msg.str();
  return make(TokenKind::Error, Start);
}

void AsmLexer::skipWhitespaceAndComments() {
  const char *End = Buffer.end();
  while (Cur != End) {
    char C = *Cur;
    if (C == ' ' || C == '\t' || C == '\n' || C == '\r' || C == '\v' ||
        C == '\f') {
      ++Cur;
      continue;
    }
    if (C == '/' && Cur + 1 != End && Cur[1] == '/') {
      while (Cur != End && *Cur != '\n')
        ++Cur;
      continue;
    }
    return;
  }
}

Token AsmLexer::lex() {
  skipWhitespaceAndComments();
  const char *Start = Cur;
  if (Cur == Buffer.end())
    return make(TokenKind::Eof, Start);
  char C = *Cur++;
  switch (C) {
  case '(':
    return make(TokenKind::LParen, Start);
  case ')':
    return make(TokenKind::RParen, Start);
  case '{':
    return make(TokenKind::LBrace, Start);
  case '}':
    return make(TokenKind::RBrace, Start);
  case '[':
    return make(TokenKind::LSquare, Start);
  case ']':
    return make(TokenKind::RSquare, Start);
  case '<':
    return make(TokenKind::Less, Start);
  case '>':
    return make(TokenKind::Greater, Start);
  case ',':
    return make(TokenKind::Comma, Start);
  case '=':
    return make(TokenKind::Equal, Start);
  case ':':
    return make(TokenKind::Colon, Start);
  case '*':
    return make(TokenKind::Star, Start);
  case '?':
    return make(TokenKind::Question, Start);
  case '.':
    return make(TokenKind::Dot, Start);
  case '"':
    return lexString(Start, TokenKind::String);
  case '%':
    return lexPrefixedName(Start, TokenKind::ValueName);
  case '@':
    return lexPrefixedName(Start, TokenKind::GraphName);
  default:
    break;
  }
  if (C == '-' || llvm::isDigit(C))
    return lexNumber(Start);
  if (isIdentifierStart(C))
    return lexIdentifier(Start);
  if (llvm::isPrint(C))
    return makeError(Start, "unexpected character '" + llvm::Twine(C) + "'");
  std::string Hex;
  llvm::raw_string_ostream OS(Hex);
  OS << llvm::format_hex(uint8_t(C), 4);
  return makeError(Start, "unexpected byte " + OS.str());
}

Token AsmLexer::lexNumber(const char *Start) {
  const char *End = Buffer.end();
  auto AtDigit = [&](const char *P) { return P != End && llvm::isDigit(*P); };
  if (*Start == '-') {
    if (llvm::StringRef(Cur, End - Cur).startswith("inf") &&
        (Cur + 3 == End || !isIdentifierChar(Cur[3]))) {
      Cur += 3;
      return make(TokenKind::Float, Start);
    }
    if (!AtDigit(Cur))
      return makeError(Start, "expected a number after '-'");
  }
  while (AtDigit(Cur))
    ++Cur;
  bool IsFloat = false;
  if (Cur != End && *Cur == '.') {
    IsFloat = true;
    ++Cur;
    while (AtDigit(Cur))
      ++Cur;
  }
  if (Cur != End && (*Cur == 'e' || *Cur == 'E')) {
    const char *P = Cur + 1;
    if (P != End && (*P == '+' || *P == '-'))
      ++P;
    if (AtDigit(P)) {
      IsFloat = true;
      Cur = P;
      while (AtDigit(Cur))
        ++Cur;
    }
  }
  return make(IsFloat ? TokenKind::Float : TokenKind::Integer, Start);
}

Token AsmLexer::lexIdentifier(const char *Start) {
  while (Cur != Buffer.end() && isIdentifierChar(*Cur))
    ++Cur;
  return make(TokenKind::Identifier, Start);
}

Token AsmLexer::lexString(const char *Start, TokenKind K) {
  const char *End = Buffer.end();
  while (true) {
    if (Cur == End || *Cur == '\n')
      return makeError(Start, "unterminated string");
    char C = *Cur++;
    if (C == '"')
      return make(K, Start);
    if (C != '\\')
      continue;
    if (Cur == End)
      return makeError(Start, "unterminated string");
    char E = *Cur;
    if (E == 'n' || E == 't' || E == '"' || E == '\\') {
      ++Cur;
      continue;
    }
    if (Cur + 1 != End && llvm::isHexDigit(E) && llvm::isHexDigit(Cur[1])) {
      Cur += 2;
      continue;
    }
    return makeError(Cur - 1, "invalid escape sequence in string");
  }
}

Token AsmLexer::lexPrefixedName(const char *Start, TokenKind K) {
  if (Cur != Buffer.end() && *Cur == '"') {
    ++Cur;
    return lexString(Start, K);
  }
  while (Cur != Buffer.end() && isBareValueNameChar(*Cur))
    ++Cur;
  if (Cur == Start + 1)
    return makeError(Start,
                     "expected a name after '" + llvm::Twine(*Start) + "'");
  return make(K, Start);
}

//===----------------------------------------------------------------------===//
// Float literals
//===----------------------------------------------------------------------===//

const llvm::fltSemantics &asmsyntax::getFloatSemantics(ElementType Ty) {
  switch (Ty) {
  case ElementType::F16:
    return llvm::APFloat::IEEEhalf();
  case ElementType::BF16:
    return llvm::APFloat::BFloat();
  case ElementType::F64:
    return llvm::APFloat::IEEEdouble();
  default:
    return llvm::APFloat::IEEEsingle();
  }
}

llvm::Optional<llvm::APFloat>
asmsyntax::parseFloatLiteral(llvm::StringRef Text,
                             const llvm::fltSemantics &Sem) {
  if (Text == "nan")
    return llvm::APFloat::getQNaN(Sem);
  if (Text == "inf" || Text == "-inf")
    return llvm::APFloat::getInf(Sem, Text.front() == '-');
  if (Text.empty() || !(llvm::isDigit(Text.front()) ||
                        (Text.front() == '-' && Text.size() > 1)))
    return llvm::None;
  llvm::APFloat F(Sem);
  auto Status = F.convertFromString(Text, llvm::APFloat::rmNearestTiesToEven);
  if (!Status) {
    llvm::consumeError(Status.takeError());
    return llvm::None;
  }
  if ((*Status & llvm::APFloat::opOverflow) || F.isInfinity() || F.isNaN())
    return llvm::None;
  return F;
}

std::string asmsyntax::formatFloatLiteral(const llvm::APFloat &V) {
  if (V.isNaN())
    return "nan";
  if (V.isInfinity())
    return V.isNegative() ? "-inf" : "inf";
  // Every value of the supported formats is exact as a double.
  llvm::APFloat AsDouble = V;
  bool LosesInfo = false;
  AsDouble.convert(llvm::APFloat::IEEEdouble(),
                   llvm::APFloat::rmNearestTiesToEven, &LosesInfo);
  double D = AsDouble.convertToDouble();
  auto ReadsBack = [&](const char *Text) {
    llvm::Optional<llvm::APFloat> Back =
        parseFloatLiteral(Text, V.getSemantics());
    return Back && Back->bitwiseIsEqual(V);
  };
  // The fewest significant digits that read back (17 always do).
  char Buf[64];
  int Digits = 1;
  for (; Digits < 17; ++Digits) {
    std::snprintf(Buf, sizeof(Buf), "%.*e", Digits - 1, D);
    if (ReadsBack(Buf))
      break;
  }
  std::snprintf(Buf, sizeof(Buf), "%.*e", Digits - 1, D);
  // Like Python's repr: positional notation for decimal exponents in
  // [-4, 16), scientific otherwise (`100.0`, `0.0001`, `1e-05`, `1e+16`).
  // The shortest digits have no trailing zero, so `%.*f` with one decimal
  // per digit after the point keeps exactly those digits.
  const char *E = std::strchr(Buf, 'e');
  int Exponent = E ? std::atoi(E + 1) : 0;
  std::string S;
  if (Exponent >= -4 && Exponent < 16) {
    char Fixed[64];
    std::snprintf(Fixed, sizeof(Fixed), "%.*f",
                  std::max(0, Digits - 1 - Exponent), D);
    if (ReadsBack(Fixed))
      S = Fixed;
  }
  if (S.empty()) {
    // %g drops the trailing zeros of the mantissa that %e keeps.
    std::snprintf(Buf, sizeof(Buf), "%.*g", Digits, D);
    S = Buf;
  }
  if (S.find_first_of(".e") == std::string::npos)
    S += ".0";
  return S;
}
