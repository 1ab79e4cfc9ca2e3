//===- AsmParser.cpp - Textual IR parser ----------------------------------===//
//
// A recursive-descent parser for `.lir` text (docs/LangRef.md). It builds
// the graph as it reads, so values must be defined before they are used. Any
// malformed input gives a located error, never an assertion: every check the
// IR core asserts (unique names, valid layouts, data sizes) happens here
// first. `dense_external<OFFSET>` constants become views of the external
// blob, which readGraphFile maps only when the text refers to it.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/AsmParser.h"

#include "AsmParserImpl.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace strider;
using namespace strider::asmsyntax;


//===----------------------------------------------------------------------===//
// Tokens and errors
//===----------------------------------------------------------------------===//

bool Parser::emitError(const char *Loc, const llvm::Twine &Msg) {
  if (Error)
    return true;
  std::string Text = Msg.str();
  // A malformed token is the real problem when the parser trips over it.
  if (Tok.is(TokenKind::Error) && Loc == Tok.getLoc())
    Text = Lex.getErrorMessage();
  llvm::StringRef Buf = Lex.getBuffer();
  size_t Offset = Loc ? size_t(Loc - Buf.begin()) : 0;
  Offset = std::min(Offset, Buf.size());
  llvm::StringRef Before = Buf.take_front(Offset);
  size_t Line = Before.count('\n') + 1;
  size_t LineStart = Before.rfind('\n');
  size_t Col =
      LineStart == llvm::StringRef::npos ? Offset + 1 : Offset - LineStart;
  Error = (BufferName + ":" + llvm::Twine(Line) + ":" + llvm::Twine(Col) +
           ": error: " + Text)
              .str();
  return true;
}

bool Parser::expect(TokenKind K, llvm::StringRef What) {
  if (!Tok.is(K))
    return emitError("expected " + What);
  consume();
  return false;
}

bool Parser::expectKeyword(llvm::StringRef Keyword) {
  if (!Tok.isIdentifier(Keyword))
    return emitError("expected '" + Keyword + "'");
  consume();
  return false;
}

bool Parser::parseInt64(int64_t &Out) {
  if (!Tok.is(TokenKind::Integer))
    return emitError("expected an integer");
  if (Tok.Text.getAsInteger(10, Out))
    return emitError("integer " + spell(Tok) + " is out of range");
  consume();
  return false;
}

bool Parser::parseString(std::string &Out) {
  if (!Tok.is(TokenKind::String))
    return emitError("expected a string");
  Out = Tok.getStringValue();
  consume();
  return false;
}

//===----------------------------------------------------------------------===//
// Model line
//===----------------------------------------------------------------------===//

bool Parser::parseOpsetImports(std::map<std::string, int64_t> &Out) {
  if (expect(TokenKind::LBrace, "'{'"))
    return true;
  if (consumeIf(TokenKind::RBrace))
    return false;
  do {
    const char *Loc = Tok.getLoc();
    std::string Domain;
    int64_t Version;
    if (parseString(Domain) || expect(TokenKind::Equal, "'='") ||
        parseInt64(Version))
      return true;
    if (!Out.emplace(Domain, Version).second)
      return emitError(Loc,
                       "duplicate opset import for domain '" + Domain + "'");
  } while (consumeIf(TokenKind::Comma));
  return expect(TokenKind::RBrace, "',' or '}'");
}

bool Parser::parseStringMap(
    std::vector<std::pair<std::string, std::string>> &Out) {
  if (expect(TokenKind::LBrace, "'{'"))
    return true;
  if (consumeIf(TokenKind::RBrace))
    return false;
  do {
    std::string Key, Val;
    if (parseString(Key) || expect(TokenKind::Equal, "'='") || parseString(Val))
      return true;
    Out.emplace_back(std::move(Key), std::move(Val));
  } while (consumeIf(TokenKind::Comma));
  return expect(TokenKind::RBrace, "',' or '}'");
}

bool Parser::parseModelLine() {
  consume(); // 'model'
  if (expect(TokenKind::LBrace, "'{' after 'model'"))
    return true;
  if (consumeIf(TokenKind::RBrace))
    return false;
  ModelInfo &Info = G->getModelInfo();
  llvm::StringSet<> Seen;
  do {
    if (!Tok.is(TokenKind::Identifier))
      return emitError("expected a model field name");
    Token Name = Tok;
    if (!Seen.insert(Name.Text).second)
      return emitError("duplicate model field '" + spell(Name) + "'");
    consume();
    if (expect(TokenKind::Equal, "'='"))
      return true;
    llvm::StringRef N = Name.Text;
    bool Failed;
    if (N == "ir_version") {
      Failed = parseInt64(Info.IRVersion);
    } else if (N == "model_version") {
      Failed = parseInt64(Info.ModelVersion);
    } else if (N == "opset_import") {
      Failed = parseOpsetImports(Info.OpsetImports);
    } else if (N == "metadata_props") {
      Failed = parseStringMap(Info.Metadata);
    } else if (N == "producer_name") {
      Failed = parseString(Info.ProducerName);
    } else if (N == "producer_version") {
      Failed = parseString(Info.ProducerVersion);
    } else if (N == "domain") {
      Failed = parseString(Info.Domain);
    } else if (N == "doc_string") {
      Failed = parseString(Info.DocString);
    } else if (N == "graph_doc_string") {
      Failed = parseString(Info.GraphDocString);
    } else if (N == "source") {
      std::string Source;
      Failed = parseString(Source);
      G->setSourceFile(Source);
    } else {
      return emitError(Name.getLoc(),
                       "unknown model field '" + spell(Name) + "'");
    }
    if (Failed)
      return true;
  } while (consumeIf(TokenKind::Comma));
  return expect(TokenKind::RBrace, "',' or '}'");
}

//===----------------------------------------------------------------------===//
// Types and constant data
//===----------------------------------------------------------------------===//

bool Parser::parseLayout(const TensorType &T, Layout &Out) {
  const char *Loc = Tok.getLoc();
  unsigned Rank = T.getRank();
  auto Invalid = [&](llvm::StringRef Spelling) {
    return emitError(Loc, "invalid layout '" + Spelling + "' for a rank-" +
                              llvm::Twine(Rank) + " tensor");
  };
  if (Tok.is(TokenKind::Identifier)) {
    llvm::Optional<Layout> L = Layout::parse(Tok.Text, Rank);
    if (!L)
      return Invalid(Tok.Text);
    Out = *L;
    consume();
    return false;
  }
  if (!Tok.is(TokenKind::LSquare))
    return emitError("expected a layout name or a permutation");
  consume();
  llvm::SmallVector<int64_t, 6> Perm;
  if (!Tok.is(TokenKind::RSquare)) {
    do {
      int64_t X;
      if (parseInt64(X))
        return true;
      Perm.push_back(X);
    } while (consumeIf(TokenKind::Comma));
  }
  llvm::StringRef Spelling(Loc, Tok.getLoc() + Tok.Text.size() - Loc);
  if (expect(TokenKind::RSquare, "',' or ']'"))
    return true;
  if (Perm.size() != Rank || !Layout::isPermutation(Perm))
    return Invalid(Spelling);
  llvm::SmallVector<unsigned, 6> P(Perm.begin(), Perm.end());
  Out = Layout(P);
  return false;
}

bool Parser::parseType(TensorType &Out) {
  const char *TypeLoc = Tok.getLoc();
  if (expectKeyword("tensor") || expect(TokenKind::Less, "'<'"))
    return true;
  bool Ranked = true;
  if (consumeIf(TokenKind::Star)) {
    Ranked = false;
    if (expectKeyword("x"))
      return true;
  }
  // Dims and the element type: each dim is followed by `x`, the element
  // type is not (so `tensor<x x f32 x f32>` has dims `x` and `f32`).
  llvm::SmallVector<Dim, 6> Dims;
  ElementType Elt = ElementType::Unknown;
  while (true) {
    Token Atom = Tok;
    if (!Atom.is(TokenKind::Integer) && !Atom.is(TokenKind::Question) &&
        !Atom.is(TokenKind::Identifier) && !Atom.is(TokenKind::String))
      return emitError("expected a dim or an element type");
    consume();
    if (Tok.isIdentifier("x")) {
      if (!Ranked)
        return emitError(Atom.getLoc(), "an unranked tensor has no dims");
      consume();
      if (Atom.is(TokenKind::Integer)) {
        if (Atom.Text.startswith("-"))
          return emitError(Atom.getLoc(),
                           "dim size " + spell(Atom) + " is negative");
        int64_t Size;
        if (Atom.Text.getAsInteger(10, Size))
          return emitError(Atom.getLoc(),
                           "dim size " + spell(Atom) + " is too large");
        Dims.push_back(Dim::getStatic(Size));
      } else if (Atom.is(TokenKind::Question)) {
        Dims.push_back(Dim::getUnknown());
      } else {
        std::string Symbol = Atom.is(TokenKind::String) ? Atom.getStringValue()
                                                        : Atom.Text.str();
        if (Symbol.empty())
          return emitError(Atom.getLoc(), "dim symbol must not be empty");
        Dims.push_back(Dim::getSymbol(Symbol));
      }
      continue;
    }
    if (Atom.is(TokenKind::Question))
      break;
    if (!Atom.is(TokenKind::Identifier))
      return emitError("expected 'x' after a dim");
    llvm::Optional<ElementType> Parsed = parseElementTypeName(Atom.Text);
    if (!Parsed)
      return emitError(Atom.getLoc(),
                       "unknown element type '" + spell(Atom) + "'");
    Elt = *Parsed;
    break;
  }
  if (!Ranked) {
    if (Tok.is(TokenKind::Comma)) {
      consume();
      return emitError("an unranked tensor has no layout");
    }
    Out = TensorType::getUnranked(Elt);
    return expect(TokenKind::Greater, "'>'");
  }
  // Reject shapes whose element count does not fit: code that sizes
  // buffers from a type must not overflow.
  int64_t NumElements = 1;
  for (const Dim &D : Dims)
    if (D.isStatic() &&
        llvm::MulOverflow(NumElements, D.getSize(), NumElements))
      return emitError(TypeLoc, "tensor type has too many elements");
  TensorType T(Elt, Dims);
  if (consumeIf(TokenKind::Comma)) {
    Layout L;
    if (parseLayout(T, L))
      return true;
    T = T.withLayout(L);
  }
  Out = std::move(T);
  return expect(TokenKind::Greater, "'>'");
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

bool Parser::parseAttrList(llvm::StringRef Prefix, Attribute &Out) {
  if (expect(TokenKind::LSquare, "'['"))
    return true;
  std::vector<Token> Elements;
  if (!Tok.is(TokenKind::RSquare)) {
    do {
      if (!Tok.is(TokenKind::Integer) && !Tok.is(TokenKind::Float) &&
          !Tok.is(TokenKind::String) && !Tok.isIdentifier("inf") &&
          !Tok.isIdentifier("nan"))
        return emitError("expected a number or a string");
      Elements.push_back(Tok);
      consume();
    } while (consumeIf(TokenKind::Comma));
  }
  if (expect(TokenKind::RSquare, "',' or ']'"))
    return true;

  // The element kind: from the prefix, else from the literals (all
  // integers: ints; strings: strings; other numbers: floats).
  AttrKind Kind = AttrKind::Ints;
  if (Prefix == "floats")
    Kind = AttrKind::Floats;
  else if (Prefix == "strings")
    Kind = AttrKind::Strings;
  else if (Prefix.empty() && !Elements.empty()) {
    if (Elements.front().is(TokenKind::String))
      Kind = AttrKind::Strings;
    else if (llvm::any_of(Elements, [](const Token &T) {
               return !T.is(TokenKind::Integer) && !T.is(TokenKind::String);
             }))
      Kind = AttrKind::Floats;
  }

  switch (Kind) {
  case AttrKind::Ints: {
    std::vector<int64_t> V;
    for (const Token &T : Elements) {
      int64_t X;
      if (!T.is(TokenKind::Integer))
        return emitError(T.getLoc(), "expected an integer in an ints list");
      if (T.Text.getAsInteger(10, X))
        return emitError(T.getLoc(),
                         "integer " + spell(T) + " is out of range");
      V.push_back(X);
    }
    Out = Attribute::getInts(std::move(V));
    return false;
  }
  case AttrKind::Floats: {
    std::vector<float> V;
    for (const Token &T : Elements) {
      if (T.is(TokenKind::String))
        return emitError(T.getLoc(), "expected a number in a floats list");
      llvm::Optional<llvm::APFloat> F =
          parseFloatLiteral(T.Text, llvm::APFloat::IEEEsingle());
      if (!F)
        return emitError(T.getLoc(),
                         "float " + spell(T) + " is out of range for f32");
      V.push_back(F->convertToFloat());
    }
    Out = Attribute::getFloats(std::move(V));
    return false;
  }
  default: {
    std::vector<std::string> V;
    for (const Token &T : Elements) {
      if (!T.is(TokenKind::String))
        return emitError(T.getLoc(), "expected a string in a strings list");
      V.push_back(T.getStringValue());
    }
    Out = Attribute::getStrings(std::move(V));
    return false;
  }
  }
}

bool Parser::parseAttrValue(Attribute &Out) {
  if (Tok.is(TokenKind::Integer)) {
    int64_t V;
    if (parseInt64(V))
      return true;
    Out = Attribute::getInt(V);
    return false;
  }
  if (Tok.is(TokenKind::Float) || Tok.isIdentifier("inf") ||
      Tok.isIdentifier("nan")) {
    llvm::Optional<llvm::APFloat> F =
        parseFloatLiteral(Tok.Text, llvm::APFloat::IEEEsingle());
    if (!F)
      return emitError("float " + spell(Tok) + " is out of range for f32");
    Out = Attribute::getFloat(F->convertToFloat());
    consume();
    return false;
  }
  if (Tok.is(TokenKind::String)) {
    Out = Attribute::getString(Tok.getStringValue());
    consume();
    return false;
  }
  if (Tok.is(TokenKind::LSquare))
    return parseAttrList("", Out);
  if (Tok.isIdentifier("ints") || Tok.isIdentifier("floats") ||
      Tok.isIdentifier("strings")) {
    llvm::StringRef Prefix = Tok.Text;
    consume();
    return parseAttrList(Prefix, Out);
  }
  if (isDenseKeyword(Tok)) {
    DenseLiteral L;
    TensorType T;
    TensorDataRef D;
    if (parseDenseLiteral(L) ||
        expect(TokenKind::Colon, "':' and the type of the tensor") ||
        parseType(T) || buildTensorData(L, T, D))
      return true;
    Out = Attribute::getTensor(std::move(D));
    return false;
  }
  if (Tok.isIdentifier("graph"))
    return parseSubgraph(Out);
  return emitError("expected an attribute value");
}

bool Parser::parseAttrDict(std::vector<NamedAttribute> &Attrs) {
  consume(); // '{'
  if (consumeIf(TokenKind::RBrace))
    return false;
  llvm::StringSet<> Seen;
  do {
    if (!Tok.is(TokenKind::Identifier) && !Tok.is(TokenKind::String))
      return emitError("expected an attribute name");
    std::string Name =
        Tok.is(TokenKind::String) ? Tok.getStringValue() : Tok.Text.str();
    if (!Seen.insert(Name).second)
      return emitError("duplicate attribute '" + Name + "'");
    consume();
    Attribute A;
    if (expect(TokenKind::Equal, "'='") || parseAttrValue(A))
      return true;
    Attrs.push_back({std::move(Name), std::move(A)});
  } while (consumeIf(TokenKind::Comma));
  return expect(TokenKind::RBrace, "',' or '}'");
}

//===----------------------------------------------------------------------===//
// Graph
//===----------------------------------------------------------------------===//

bool Parser::checkNewValueName(const Token &NameTok, const std::string &Name) {
  if (Name.empty())
    return emitError(NameTok.getLoc(), "value name must not be empty");
  if (G->lookupValue(Name))
    return emitError(NameTok.getLoc(),
                     "duplicate value name '" + spell(NameTok) + "'");
  return false;
}

bool Parser::parseInput() {
  if (!Tok.is(TokenKind::ValueName))
    return emitError("expected an input name");
  Token NameTok = Tok;
  std::string Name = Tok.getStringValue();
  if (checkNewValueName(NameTok, Name))
    return true;
  consume();
  TensorType T;
  if (expect(TokenKind::Colon, "':' and the input's type") || parseType(T))
    return true;
  TensorDataRef Data;
  if (consumeIf(TokenKind::Equal)) {
    // Default data: its type is the input's unless given.
    DenseLiteral L;
    TensorType DataType = T;
    if (parseDenseLiteral(L) ||
        (consumeIf(TokenKind::Colon) && parseType(DataType)) ||
        buildTensorData(L, DataType, Data))
      return true;
  }
  Value *In = G->addInput(Name, T);
  In->setDefaultData(std::move(Data));
  return false;
}

bool Parser::parseOperand(Value *&Out) {
  if (Tok.isIdentifier("none")) {
    Out = nullptr;
    consume();
    return false;
  }
  if (!Tok.is(TokenKind::ValueName))
    return emitError("expected a value or 'none'");
  Out = G->lookupValue(Tok.getStringValue());
  if (!Out)
    return emitError("use of undefined value '" + spell(Tok) + "'");
  consume();
  return false;
}

bool Parser::parseLocation(Location &Out) {
  consume(); // 'loc'
  std::string First;
  if (expect(TokenKind::LParen, "'(' after 'loc'") || parseString(First))
    return true;
  if (consumeIf(TokenKind::Colon)) {
    Out.File = std::move(First);
    if (parseString(Out.Name))
      return true;
  } else {
    Out.Name = std::move(First);
  }
  return expect(TokenKind::RParen, "')'");
}

bool Parser::parseNode() {
  // Results.
  std::vector<std::string> ResultNames;
  llvm::StringSet<> NodeNames;
  if (Tok.is(TokenKind::ValueName) || Tok.isIdentifier("_")) {
    do {
      if (Tok.isIdentifier("_")) {
        ResultNames.emplace_back();
        consume();
        continue;
      }
      if (!Tok.is(TokenKind::ValueName))
        return emitError("expected a result name or '_'");
      std::string Name = Tok.getStringValue();
      if (checkNewValueName(Tok, Name))
        return true;
      if (!NodeNames.insert(Name).second)
        return emitError("duplicate value name '" + spell(Tok) + "'");
      ResultNames.push_back(std::move(Name));
      consume();
    } while (consumeIf(TokenKind::Comma));
    if (expect(TokenKind::Equal, "'=' after the results"))
      return true;
  }

  // Op name: a table op, an opaque op of the default domain, or
  // `"domain".OpType`.
  const OpInfo *Info = nullptr;
  std::string Domain, OpType;
  if (Tok.is(TokenKind::Identifier)) {
    OpType = Tok.Text.str();
    Info = lookupOp(OpType);
    consume();
  } else if (Tok.is(TokenKind::String)) {
    Domain = Tok.getStringValue();
    consume();
    if (expect(TokenKind::Dot, "'.' after the op domain"))
      return true;
    if (!Tok.is(TokenKind::Identifier) && !Tok.is(TokenKind::String))
      return emitError("expected an op type");
    OpType = Tok.is(TokenKind::String) ? Tok.getStringValue() : Tok.Text.str();
    if (OpType.empty())
      return emitError("op type must not be empty");
    consume();
  } else {
    return emitError(ResultNames.empty() ? "expected an op or 'return'"
                                         : "expected an op name");
  }

  // Operands.
  std::vector<Value *> Operands;
  if (expect(TokenKind::LParen, "'(' after the op name"))
    return true;
  if (!Tok.is(TokenKind::RParen)) {
    do {
      Value *V;
      if (parseOperand(V))
        return true;
      Operands.push_back(V);
    } while (consumeIf(TokenKind::Comma));
  }
  if (expect(TokenKind::RParen, "',' or ')'"))
    return true;

  std::vector<NamedAttribute> Attrs;
  if (Tok.is(TokenKind::LBrace) && parseAttrDict(Attrs))
    return true;

  // One type per present result.
  unsigned NumPresent = llvm::count_if(
      ResultNames, [](const std::string &N) { return !N.empty(); });
  std::vector<TensorType> Types;
  if (NumPresent) {
    const char *ColonLoc = Tok.getLoc();
    if (expect(TokenKind::Colon, "':' and the result types"))
      return true;
    do {
      TensorType T;
      if (parseType(T))
        return true;
      Types.push_back(std::move(T));
    } while (consumeIf(TokenKind::Comma));
    if (Types.size() != NumPresent)
      return emitError(ColonLoc, "expected " + llvm::Twine(NumPresent) +
                                     " result types, got " +
                                     llvm::Twine(Types.size()));
  } else if (Tok.is(TokenKind::Colon)) {
    return emitError("a node without results has no result types");
  }
  std::vector<TensorType> SlotTypes;
  for (unsigned I = 0, Next = 0; I < ResultNames.size(); ++I)
    SlotTypes.push_back(ResultNames[I].empty() ? TensorType() : Types[Next++]);

  Location Loc;
  if (Tok.isIdentifier("loc") && parseLocation(Loc))
    return true;
  std::string Doc;
  if (Tok.isIdentifier("doc")) {
    consume();
    if (expect(TokenKind::Equal, "'=' after 'doc'") || parseString(Doc))
      return true;
  }

  Node *N = Info ? G->createNode(Info->Id, Operands, ResultNames, SlotTypes)
                 : G->createOpaqueNode(Domain, OpType, Operands, ResultNames,
                                       SlotTypes);
  for (NamedAttribute &A : Attrs)
    N->setAttr(A.Name, std::move(A.Value));
  N->setLoc(std::move(Loc));
  N->setDocString(std::move(Doc));
  return false;
}

bool Parser::parseReturn() {
  consume(); // 'return'
  if (!Tok.is(TokenKind::ValueName))
    return false;
  do {
    if (!Tok.is(TokenKind::ValueName))
      return emitError("expected an output value");
    Value *V = G->lookupValue(Tok.getStringValue());
    if (!V)
      return emitError("use of undefined value '" + spell(Tok) + "'");
    G->addOutput(V);
    consume();
  } while (consumeIf(TokenKind::Comma));
  return false;
}

bool Parser::parseGraphBody() {
  if (expectKeyword("graph"))
    return true;
  if (!Tok.is(TokenKind::GraphName))
    return emitError("expected the graph name ('@name')");
  G->setName(Tok.getStringValue());
  consume();
  if (expect(TokenKind::LParen, "'(' before the graph inputs"))
    return true;
  if (!Tok.is(TokenKind::RParen)) {
    do {
      if (parseInput())
        return true;
    } while (consumeIf(TokenKind::Comma));
  }
  if (expect(TokenKind::RParen, "',' or ')'") ||
      expect(TokenKind::LBrace, "'{' before the graph body"))
    return true;
  while (!Tok.isIdentifier("return")) {
    if (Tok.is(TokenKind::Eof))
      return emitError("expected 'return' before the end of the graph");
    if (parseNode())
      return true;
  }
  return parseReturn() || expect(TokenKind::RBrace, "'}' after 'return'");
}

bool Parser::parseSubgraph(Attribute &Out) {
  // The branch is a graph of its own: its values are out of the enclosing
  // graph's scope, which it reads only through its inputs.
  auto Sub = std::make_unique<Graph>();
  Sub->setSourceFile(G->getSourceFile());
  std::swap(G, Sub);
  bool Failed = parseGraphBody();
  std::swap(G, Sub);
  if (Failed)
    return true;
  Out = Attribute::getGraph(std::move(Sub));
  return false;
}

bool Parser::parseGraph() {
  if (Tok.isIdentifier("model") && parseModelLine())
    return true;
  if (parseGraphBody())
    return true;
  if (!Tok.is(TokenKind::Eof))
    return emitError("expected the end of the input after the graph");
  return false;
}

llvm::Expected<std::unique_ptr<Graph>> Parser::run() {
  if (parseGraph())
    return makeError(*Error);
  return std::move(G);
}

llvm::Expected<std::unique_ptr<Graph>>
strider::parseGraph(llvm::StringRef Text, llvm::StringRef BufferName,
                    const ExternalData *External) {
  Parser P(Text, BufferName, External, (BufferName + ".weights").str());
  return P.run();
}

static llvm::Error makeFileError(llvm::StringRef Path, const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 Path + ": " + Msg);
}

/// Maps \p Path; errors say "cannot be read: <why>" without the path.
static llvm::Expected<ExternalData> mapWeightsFile(llvm::StringRef Path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buf =
      llvm::MemoryBuffer::getFile(Path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!Buf)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot be read: " +
                                       Buf.getError().message());
  std::shared_ptr<llvm::MemoryBuffer> Owner = std::move(*Buf);
  ExternalData Data;
  Data.Bytes = llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(Owner->getBufferStart()),
      Owner->getBufferSize());
  Data.Owner = std::move(Owner);
  Data.Name = Path.str();
  return Data;
}

llvm::Expected<ExternalData> strider::readExternalData(llvm::StringRef Path) {
  llvm::Expected<ExternalData> Data = mapWeightsFile(Path);
  if (!Data)
    return makeFileError(Path, llvm::toString(Data.takeError()));
  return Data;
}

llvm::Expected<std::unique_ptr<Graph>>
strider::readGraphFile(llvm::StringRef Path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Text =
      llvm::MemoryBuffer::getFileOrSTDIN(Path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  bool Stdin = Path == "-";
  std::string BufferName = Stdin ? std::string("<stdin>") : Path.str();
  if (!Text)
    return makeFileError(BufferName,
                         "cannot read file: " + Text.getError().message());
  std::string WeightsPath = BufferName + ".weights";
  auto Load = [&]() { return mapWeightsFile(WeightsPath); };
  // Standard input has no weights file next to it.
  Parser P((*Text)->getBuffer(), BufferName, nullptr, WeightsPath,
           Stdin ? ExternalDataLoader() : ExternalDataLoader(Load));
  return P.run();
}
