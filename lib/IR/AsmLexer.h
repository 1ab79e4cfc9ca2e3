//===- AsmLexer.h - Tokens and literals of the textual IR -------*- C++ -*-===//
//
// The lexer of the textual IR (`.lir`, docs/LangRef.md) and the literal
// helpers that the printer and the parser share, so that what one writes
// the other reads back bit for bit. Private to lib/IR.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_IR_ASMLEXER_H
#define STRIDER_LIB_IR_ASMLEXER_H

#include "strider/IR/Types.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace strider {
namespace asmsyntax {

enum class TokenKind : uint8_t {
  Eof,
  /// A lexing error; the token's text is the offending input and the
  /// lexer's error message says what is wrong.
  Error,
  /// [A-Za-z_][A-Za-z0-9_.$]*: keywords, op and attribute names, element
  /// types, layout names, bare dim symbols, `x`, `inf`, `nan`, ...
  Identifier,
  /// -?[0-9]+
  Integer,
  /// -?[0-9]+(.[0-9]*)?([eE][+-]?[0-9]+)? with a `.` or exponent, or `-inf`.
  Float,
  /// A double-quoted string with escapes (validated by the lexer).
  String,
  /// `%name` or `%"name"`.
  ValueName,
  /// `@name` or `@"name"`.
  GraphName,
  LParen,
  RParen,
  LBrace,
  RBrace,
  LSquare,
  RSquare,
  Less,
  Greater,
  Comma,
  Equal,
  Colon,
  Star,
  Question,
  Dot,
};

struct Token {
  TokenKind Kind = TokenKind::Eof;
  /// The token's spelling in the buffer (for strings, with the quotes).
  llvm::StringRef Text;

  bool is(TokenKind K) const { return Kind == K; }
  bool isIdentifier(llvm::StringRef Name) const {
    return Kind == TokenKind::Identifier && Text == Name;
  }
  const char *getLoc() const { return Text.begin(); }
  /// Contents of a String token, or the name of a ValueName or GraphName
  /// token, with escapes resolved.
  std::string getStringValue() const;
};

/// Splits a buffer into tokens, skipping whitespace and `//` comments. Never
/// reads outside the buffer; the buffer need not be NUL-terminated.
class AsmLexer {
public:
  explicit AsmLexer(llvm::StringRef Buffer)
      : Buffer(Buffer), Cur(Buffer.begin()) {}

  Token lex();
  /// Message of the last Error token.
  const std::string &getErrorMessage() const { return ErrorMessage; }
  llvm::StringRef getBuffer() const { return Buffer; }

private:
  Token make(TokenKind K, const char *Start) {
    return Token{K, llvm::StringRef(Start, Cur - Start)};
  }
  Token makeError(const char *Start, const llvm::Twine &Msg);
  void skipWhitespaceAndComments();
  Token lexNumber(const char *Start);
  Token lexIdentifier(const char *Start);
  /// Lex the rest of a string whose opening quote is at Cur - 1.
  Token lexString(const char *Start, TokenKind K);
  Token lexPrefixedName(const char *Start, TokenKind K);

  llvm::StringRef Buffer;
  const char *Cur;
  std::string ErrorMessage;
};

/// Whether \p C may appear in a bare `%name`: [A-Za-z0-9_.$/-].
bool isBareValueNameChar(char C);
/// Whether \p Name can be printed as a bare `%name`.
bool isBareValueName(llvm::StringRef Name);

/// APFloat semantics of a floating-point element type.
const llvm::fltSemantics &getFloatSemantics(ElementType Ty);

/// The shortest decimal text that reads back (with parseFloatLiteral) to
/// exactly \p V, always with a `.` or an exponent (`1.0`, `2.5e-08`), or
/// `inf`, `-inf`, `nan`. A NaN reads back as the canonical quiet NaN only.
std::string formatFloatLiteral(const llvm::APFloat &V);

/// Read a decimal literal (Integer or Float token text, `inf`, `-inf` or
/// `nan`) as a value of \p Sem, rounding to nearest even. None if the text
/// is not a number or overflows the type.
llvm::Optional<llvm::APFloat> parseFloatLiteral(llvm::StringRef Text,
                                                const llvm::fltSemantics &Sem);

} // namespace asmsyntax
} // namespace strider

#endif // STRIDER_LIB_IR_ASMLEXER_H
