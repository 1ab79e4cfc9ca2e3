//===- AsmParserImpl.h - The textual IR parser's class ----------*- C++ -*-===//
//
// Private to lib/IR. The recursive-descent parser of the textual IR:
// AsmParser.cpp parses the module, graphs, nodes, types and attributes;
// AsmLiterals.cpp the `dense<...>` and `dense_external<...>` constants.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LIB_IR_ASMPARSERIMPL_H
#define STRIDER_LIB_IR_ASMPARSERIMPL_H

#include "AsmLexer.h"

#include "strider/IR/AsmParser.h"
#include "strider/IR/Graph.h"

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace strider {
namespace asmsyntax {

/// The contents of `dense<...>` or `dense_external<...>` before the type is
/// known.
struct DenseLiteral {
  enum FormKind { Splat, List, Hex, External };
  const char *Loc = nullptr;
  FormKind Form = Splat;
  /// Element literals (one for a splat).
  std::vector<Token> Elements;
  /// The hex string token.
  Token HexData;
  /// The offset of external data in the blob.
  uint64_t Offset = 0;
};

/// Supplies the external blob the first time a constant needs it; errors
/// say why it is missing ("cannot be read: ...").
using ExternalDataLoader = llvm::function_ref<llvm::Expected<ExternalData>()>;

class Parser {
public:
  /// \p External is the blob, or null to call \p Load (if given) when the
  /// first `dense_external` needs it; \p WeightsName names it in messages.
  Parser(llvm::StringRef Text, llvm::StringRef BufferName,
         const ExternalData *External, std::string WeightsName,
         ExternalDataLoader Load = nullptr)
      : Lex(Text), BufferName(BufferName), External(External),
        WeightsName(std::move(WeightsName)), LoadExternal(Load),
        G(std::make_unique<Graph>()) {
    consume();
  }

  llvm::Expected<std::unique_ptr<Graph>> run();

private:
  //===--- Tokens and errors ----------------------------------------------===//

  void consume() { Tok = Lex.lex(); }
  /// Record an error at \p Loc (the first one wins); always returns true so
  /// that callers can `return emitError(...)`.
  bool emitError(const char *Loc, const llvm::Twine &Msg);
  bool emitError(const llvm::Twine &Msg) {
    return emitError(Tok.getLoc(), Msg);
  }
  /// Consume a token of kind \p K, or fail with "expected <What>".
  bool expect(TokenKind K, llvm::StringRef What);
  /// Consume the identifier \p Keyword, or fail.
  bool expectKeyword(llvm::StringRef Keyword);
  /// Consume \p K if it is the current token; returns whether it was.
  bool consumeIf(TokenKind K) {
    if (!Tok.is(K))
      return false;
    consume();
    return true;
  }
  std::string spell(const Token &T) const { return T.Text.str(); }

  //===--- Grammar --------------------------------------------------------===//

  bool parseModelLine();
  bool parseStringMap(std::vector<std::pair<std::string, std::string>> &Out);
  bool parseOpsetImports(std::map<std::string, int64_t> &Out);
  bool parseInt64(int64_t &Out);
  bool parseString(std::string &Out);
  bool parseGraph();
  /// `graph @name(inputs) { nodes return outputs }` into G.
  bool parseGraphBody();
  /// A graph attribute: a graph body of its own.
  bool parseSubgraph(Attribute &Out);
  bool parseInput();
  bool parseNode();
  bool parseReturn();
  bool parseOperand(Value *&Out);
  bool parseAttrDict(std::vector<NamedAttribute> &Attrs);
  bool parseAttrValue(Attribute &Out);
  bool parseAttrList(llvm::StringRef Prefix, Attribute &Out);
  bool parseLocation(Location &Out);
  bool parseType(TensorType &Out);
  bool parseLayout(const TensorType &T, Layout &Out);
  bool parseDenseLiteral(DenseLiteral &Out);
  bool buildTensorData(const DenseLiteral &L, const TensorType &T,
                       TensorDataRef &Out);
  bool buildExternalData(const DenseLiteral &L, const TensorType &T,
                         uint64_t NumBytes, TensorDataRef &Out);
  bool encodeElement(const Token &T, ElementType Ty,
                     std::vector<uint8_t> &Bytes);
  bool checkNewValueName(const Token &NameTok, const std::string &Name);

  AsmLexer Lex;
  llvm::StringRef BufferName;
  /// The blob of dense_external data, once known.
  const ExternalData *External;
  std::string WeightsName;
  ExternalDataLoader LoadExternal;
  /// What LoadExternal returned.
  llvm::Optional<ExternalData> Loaded;
  Token Tok;
  std::unique_ptr<Graph> G;
  llvm::Optional<std::string> Error;
};

/// Whether \p T starts a constant: `dense` or `dense_external`.
bool isDenseKeyword(const Token &T);

} // namespace asmsyntax
} // namespace strider

#endif // STRIDER_LIB_IR_ASMPARSERIMPL_H
