//===- SpecializeShapes.cpp - Bind dynamic dims, resolve shapes -----------===//
//
// specializeShapes binds a graph's dynamic dims from the shapes a caller
// feeds, rewrites declared types with the bindings and runs shape inference
// and constant folding to their fixed point; the `specialize-shapes` pass
// does the same with the bindings of the tool's --shape and --dim flags.
//
//===----------------------------------------------------------------------===//

#include "strider/Transforms/Specialize.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

#include <cmath>
#include <set>

using namespace strider;

static std::string shapeText(llvm::ArrayRef<int64_t> Shape) {
  std::string S;
  for (int64_t D : Shape)
    S += (S.empty() ? "" : "x") + std::to_string(D);
  return S.empty() ? "scalar" : S;
}

//===----------------------------------------------------------------------===//
// Dim expressions
//===----------------------------------------------------------------------===//

namespace {
/// Recursive-descent evaluator of the dim expressions exporters write into
/// value_info (ONNX Runtime's symbolic shape inference among them). Depth
/// is bounded: the text comes from the model.
class DimExpressionParser {
public:
  DimExpressionParser(llvm::StringRef Text,
                      const std::map<std::string, int64_t> &Sizes)
      : Text(Text), Sizes(Sizes) {}

  llvm::Optional<double> parse() {
    llvm::Optional<double> V = parseSum(0);
    skipSpace();
    if (!V || Pos != Text.size())
      return llvm::None;
    return V;
  }

private:
  static constexpr unsigned MaxDepth = 64;

  void skipSpace() {
    while (Pos < Text.size() && llvm::isSpace(Text[Pos]))
      ++Pos;
  }
  bool consume(char C) {
    skipSpace();
    if (Pos < Text.size() && Text[Pos] == C) {
      ++Pos;
      return true;
    }
    return false;
  }
  static bool isSymbolChar(char C) {
    return llvm::isAlnum(C) || C == '_' || C == '.' || C == ':' || C == '\'';
  }

  llvm::Optional<double> parseSum(unsigned Depth) {
    llvm::Optional<double> L = parseProduct(Depth);
    while (L) {
      if (consume('+')) {
        llvm::Optional<double> R = parseProduct(Depth);
        L = R ? llvm::Optional<double>(*L + *R) : llvm::None;
      } else if (consume('-')) {
        llvm::Optional<double> R = parseProduct(Depth);
        L = R ? llvm::Optional<double>(*L - *R) : llvm::None;
      } else {
        break;
      }
    }
    return L;
  }

  llvm::Optional<double> parseProduct(unsigned Depth) {
    llvm::Optional<double> L = parseUnary(Depth);
    while (L) {
      if (consume('*')) {
        llvm::Optional<double> R = parseUnary(Depth);
        L = R ? llvm::Optional<double>(*L * *R) : llvm::None;
      } else if (consume('/')) {
        llvm::Optional<double> R = parseUnary(Depth);
        if (!R || *R == 0)
          return llvm::None;
        L = *L / *R;
      } else {
        break;
      }
    }
    return L;
  }

  llvm::Optional<double> parseUnary(unsigned Depth) {
    if (Depth > MaxDepth)
      return llvm::None;
    if (consume('-')) {
      llvm::Optional<double> V = parseUnary(Depth + 1);
      return V ? llvm::Optional<double>(-*V) : llvm::None;
    }
    if (consume('(')) {
      llvm::Optional<double> V = parseSum(Depth + 1);
      if (!V || !consume(')'))
        return llvm::None;
      return V;
    }
    skipSpace();
    size_t Start = Pos;
    while (Pos < Text.size() && isSymbolChar(Text[Pos]))
      ++Pos;
    llvm::StringRef Word = Text.slice(Start, Pos);
    if (Word.empty())
      return llvm::None;
    if (llvm::isDigit(Word.front())) {
      uint64_t N;
      if (Word.getAsInteger(10, N) || N > (uint64_t(1) << 53))
        return llvm::None;
      return double(N);
    }
    if (consume('('))
      return parseCall(Word, Depth + 1);
    auto It = Sizes.find(Word.str());
    if (It == Sizes.end())
      return llvm::None;
    return double(It->second);
  }

  llvm::Optional<double> parseCall(llvm::StringRef Fn, unsigned Depth) {
    llvm::SmallVector<double, 2> Args;
    do {
      llvm::Optional<double> A = parseSum(Depth);
      if (!A)
        return llvm::None;
      Args.push_back(*A);
    } while (consume(','));
    if (!consume(')'))
      return llvm::None;
    if (Args.size() == 1 && Fn == "floor")
      return std::floor(Args[0]);
    if (Args.size() == 1 && Fn == "ceil")
      return std::ceil(Args[0]);
    if (Args.size() == 2 && Fn == "max")
      return std::max(Args[0], Args[1]);
    if (Args.size() == 2 && Fn == "min")
      return std::min(Args[0], Args[1]);
    return llvm::None;
  }

  llvm::StringRef Text;
  const std::map<std::string, int64_t> &Sizes;
  size_t Pos = 0;
};
} // namespace

llvm::Optional<int64_t>
strider::evaluateDimExpression(llvm::StringRef Expr,
                               const std::map<std::string, int64_t> &Sizes) {
  llvm::Optional<double> V = DimExpressionParser(Expr, Sizes).parse();
  if (!V || !std::isfinite(*V) || *V < 0 || *V > double(int64_t(1) << 53) ||
      *V != std::floor(*V))
    return llvm::None;
  return int64_t(*V);
}

//===----------------------------------------------------------------------===//
// Fixed point of inference and folding
//===----------------------------------------------------------------------===//

/// The nodes of \p G and their ops, in order: what folding and inlining
/// change when they change anything (they replace nodes by constants or
/// by a branch's nodes, and erase what is dead; they do not retype a node
/// they keep, and inference, which does, is run before and compared by
/// itself).
static std::vector<std::pair<const Node *, OpId>> getSignature(const Graph &G) {
  std::vector<std::pair<const Node *, OpId>> S;
  S.reserve(G.getNumNodes());
  for (const Node *N : G.nodes())
    S.emplace_back(N, N->getOpId());
  return S;
}

llvm::Expected<unsigned>
strider::inferAndFoldToFixedPoint(Graph &G, std::vector<std::string> *Conflicts,
                                  unsigned MaxRounds,
                                  int64_t MaxFoldedElements) {
  // The graph is being bound for a run: a constant of any size it needs
  // (light zoo weights are ConstantOfShape of their shapes) is memory the
  // run takes anyway; MaxFoldedElements bounds what one fold may allocate.
  std::unique_ptr<Pass> Fold = createConstantFoldingPass(MaxFoldedElements);
  // Ifs whose conditions folded (on shapes, or on inputs bound to values)
  // become their taken branches, whose nodes the next round infers.
  std::unique_ptr<Pass> Inline = createInlineIfPass();
  // Inference is idempotent: once folding and inlining leave an inferred
  // graph as it was, inferring it again would change nothing either.
  // Each round after the first infers what the previous one's folding and
  // inlining made or changed (InferenceMemo).
  InferenceMemo Memo;
  for (unsigned Round = 1; Round <= MaxRounds; ++Round) {
    if (llvm::Error E = inferShapes(G, Conflicts, &Memo))
      return E;
    auto Inferred = getSignature(G);
    if (llvm::Error E = Fold->run(G))
      return E;
    if (llvm::Error E = Inline->run(G))
      return E;
    if (getSignature(G) == Inferred)
      return Round;
  }
  // Not settled (a pathological model); one last inference keeps the
  // types consistent with the folded graph.
  if (llvm::Error E = inferShapes(G, Conflicts, &Memo))
    return E;
  return MaxRounds;
}

//===----------------------------------------------------------------------===//
// Specialization
//===----------------------------------------------------------------------===//

/// The sizes symbols and expressions of them take, by interned symbol
/// (Dim symbols are interned: one spelling, one pointer): each parsed once
/// per specialization, not once per value that has it.
using DimValues = llvm::DenseMap<const char *, llvm::Optional<int64_t>>;

/// \p T with every symbol that \p Sizes binds, or that is an expression of
/// bound symbols, made static.
static TensorType bindDims(const TensorType &T,
                           const std::map<std::string, int64_t> &Sizes,
                           DimValues &Known) {
  if (!T.hasRank())
    return T;
  llvm::SmallVector<Dim, 6> Dims(T.getShape().begin(), T.getShape().end());
  bool Changed = false;
  for (Dim &D : Dims) {
    if (!D.isSymbol())
      continue;
    auto [It, New] = Known.try_emplace(D.getSymbol().data());
    if (New)
      It->second = evaluateDimExpression(D.getSymbol(), Sizes);
    if (It->second) {
      D = Dim::getStatic(*It->second);
      Changed = true;
    }
  }
  return Changed ? TensorType(T.getElementType(), Dims, T.getLayout()) : T;
}

/// Replace graph input \p In by a Constant node of \p Data, under the
/// input's name.
static void foldInput(Graph &G, Value *In, TensorDataRef Data) {
  std::string Name = In->getName();
  Node *First = G.getNumNodes() ? *G.nodes().begin() : nullptr;
  Node *C = G.createNode(OpId::Constant, {}, {G.makeUniqueName(Name)},
                         {Data->getType()}, First);
  C->setAttr("value", Attribute::getTensor(Data));
  C->setLoc(Location{G.getSourceFile(), Name});
  In->replaceAllUsesWith(C->getResult(0));
  for (unsigned O = 0; O < G.getOutputs().size(); ++O)
    if (G.getOutputs()[O] == In)
      G.setOutput(O, C->getResult(0));
  G.eraseInput(In);
  G.renameValue(C->getResult(0), Name);
}

llvm::Error
strider::checkDimBindings(const Graph &G,
                          const std::map<std::string, int64_t> &Dims) {
  std::set<std::string> Symbols;
  for (const Value *In : G.getInputs())
    if (In->getType().hasRank())
      for (const Dim &D : In->getType().getShape())
        if (D.isSymbol())
          Symbols.insert(D.getSymbol().str());
  for (const auto &[Symbol, Size] : Dims) {
    if (!Symbols.count(Symbol)) {
      std::string Known;
      for (const std::string &S : Symbols)
        Known += (Known.empty() ? "" : ", ") + S;
      return makeError(
          "dim '" + Symbol + "' is not a symbolic dim of the " +
          "model's inputs (" +
          (Known.empty() ? "they have none" : "they have " + Known) + ")");
    }
    if (Size < 0)
      return makeError("dim '" + Symbol + "' bound to " + llvm::Twine(Size) +
                       ", expected a size >= 0");
  }
  return llvm::Error::success();
}

llvm::Error strider::specializeShapes(Graph &G, const ShapeBindings &B,
                                      SpecializeResult *Result) {
  SpecializeResult Local;
  SpecializeResult &R = Result ? *Result : Local;
  if (llvm::Error E = checkDimBindings(G, B.Dims))
    return E;
  std::map<std::string, int64_t> Sizes;
  std::map<std::string, std::string> BoundBy;
  for (const auto &[Symbol, Size] : B.Dims) {
    Sizes[Symbol] = Size;
    BoundBy[Symbol] = "--dim";
  }

  for (const auto &[Name, Shape] : B.InputShapes) {
    Value *In = G.lookupValue(Name);
    if (!In || !In->isGraphInput())
      return makeError("the model has no input '" + Name + "'");
    const TensorType &T = In->getType();
    if (!T.hasRank())
      continue;
    if (T.getRank() != Shape.size())
      return makeError("input '" + Name + "' has shape " + shapeText(Shape) +
                       " (rank " + llvm::Twine(Shape.size()) +
                       "), the model expects " + T.str());
    for (unsigned I = 0; I < Shape.size(); ++I) {
      const Dim &D = T.getDim(I);
      if (Shape[I] < 0)
        return makeError("input '" + Name + "' has a negative size at dim " +
                         llvm::Twine(I));
      if (D.isStatic() && D.getSize() != Shape[I])
        return makeError("input '" + Name + "' has shape " + shapeText(Shape) +
                         ", the model expects " + T.str() + " (dim " +
                         llvm::Twine(I) + ")");
      if (!D.isSymbol())
        continue;
      std::string Symbol = D.getSymbol().str();
      auto [It, New] = Sizes.try_emplace(Symbol, Shape[I]);
      if (!New && It->second != Shape[I])
        return makeError("input '" + Name + "' binds dim '" + Symbol + "' to " +
                         llvm::Twine(Shape[I]) + ", " + BoundBy[Symbol] +
                         " to " + llvm::Twine(It->second));
      if (New)
        BoundBy[Symbol] = "input '" + Name + "'";
    }
  }

  // Inputs bound by value become constants (of the fed shape, which binds
  // dims as a fed shape would).
  for (const auto &[Name, Values] : B.InputValues) {
    Value *In = G.lookupValue(Name);
    if (!In || !In->isGraphInput())
      return makeError("the model has no input '" + Name + "'");
    const TensorType &T = In->getType();
    const ElementType Elt = T.getElementType();
    if (!isInteger(Elt) && Elt != ElementType::Bool)
      return makeError("input '" + Name + "' is " + T.str() +
                       "; only integer and bool inputs are bound by value");
    llvm::SmallVector<int64_t, 6> Shape;
    auto Fed = B.InputShapes.find(Name);
    if (Fed != B.InputShapes.end())
      Shape = Fed->second;
    else if (T.hasStaticShape())
      Shape = T.getStaticShape();
    else
      return makeError("input '" + Name + "' (" + T.str() +
                       ") is bound by value but has no static shape; give "
                       "its shape too");
    int64_t Count = 1;
    for (int64_t D : Shape)
      Count *= D;
    if (Count != int64_t(Values.size()))
      return makeError("input '" + Name + "' of shape " + shapeText(Shape) +
                       " has " + llvm::Twine(Count) + " elements, bound to " +
                       llvm::Twine(Values.size()) + " values");
    TensorDataRef Data = TensorData::fromInt64(Elt, Shape, Values);
    if (!isCompatibleType(T.withLayout(Layout()), Data->getType()))
      return makeError("input '" + Name + "' is bound to a value of type " +
                       Data->getType().str() + ", the model expects " +
                       T.str());
    std::string Text = Name + "=";
    for (size_t I = 0; I < Values.size() && I < 4; ++I)
      Text += (I ? "," : "") + std::to_string(Data->getInt(I));
    if (Values.size() > 4)
      Text += ",...";
    R.BoundValues.push_back(std::move(Text));
    foldInput(G, In, Data);
  }

  // Inputs: fed ones take their shapes, unfed defaults become constants,
  // the others take what the bindings say.
  DimValues Known;
  std::vector<Value *> Inputs(G.getInputs().begin(), G.getInputs().end());
  for (Value *In : Inputs) {
    const TensorType &T = In->getType();
    auto It = B.InputShapes.find(In->getName());
    if (It != B.InputShapes.end()) {
      Layout L = T.hasRank() ? T.getLayout() : Layout();
      In->setType(TensorType::get(T.getElementType(), It->second, L));
    } else if (In->getDefaultData()) {
      R.FoldedInputs.push_back(In->getName());
      foldInput(G, In, In->getDefaultData());
      continue; // The input is gone: a constant now.
    } else {
      In->setType(bindDims(T, Sizes, Known));
    }
    // A declared 2^62 dim beside a bound one: no tensor has that size.
    if (!In->getType().isWithinSizeLimit())
      return makeError("input '" + In->getName() + "' is " +
                       In->getType().str() + ": " +
                       In->getType().getSizeLimitProblem());
  }
  for (Node *N : G.nodes())
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (Value *V = N->getResult(I))
        V->setType(bindDims(V->getType(), Sizes, Known));

  llvm::Expected<unsigned> Rounds =
      inferAndFoldToFixedPoint(G, &R.Warnings, 16, B.MaxFoldedElements);
  if (!Rounds)
    return Rounds.takeError();
  R.Rounds = *Rounds;
  R.BoundDims = std::move(Sizes);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
class SpecializeShapesPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "specialize-shapes"; }
  void configure(const PipelineOptions &Opts) override {
    Bindings = Opts.Shapes;
  }
  llvm::Error run(Graph &G) override {
    SpecializeResult R;
    if (llvm::Error E = specializeShapes(G, Bindings, &R))
      return E;
    // The pass form is for pinned pipelines (strider-opt): a contradicted
    // declaration is an error there, as in infer-shapes.
    if (!R.Warnings.empty())
      return makeError(R.Warnings.front());
    return llvm::Error::success();
  }

private:
  ShapeBindings Bindings;
};
} // namespace

std::unique_ptr<Pass> strider::createSpecializeShapesPass() {
  return std::make_unique<SpecializeShapesPass>();
}

//===----------------------------------------------------------------------===//
// Control inputs
//===----------------------------------------------------------------------===//

/// Whether \p V's uses reach an If's condition: directly, through the
/// results of the nodes reading it, or through the branch inputs of an If
/// it is passed to.
static bool reachesIfCondition(const Value *V,
                               llvm::DenseSet<const Value *> &Seen) {
  if (!Seen.insert(V).second)
    return false;
  for (const Use &U : V->getUses()) {
    const Node &N = *U.User;
    if (N.getOpId() == OpId::If) {
      if (U.OperandIndex == 0)
        return true;
      for (const char *Name : {"then_branch", "else_branch"}) {
        const Attribute *A = N.getAttr(Name);
        if (!A || A->getKind() != AttrKind::Graph || !A->getGraph())
          continue;
        llvm::ArrayRef<Value *> Ins = A->getGraph()->getInputs();
        if (U.OperandIndex - 1 < Ins.size() &&
            reachesIfCondition(Ins[U.OperandIndex - 1], Seen))
          return true;
      }
    }
    for (unsigned I = 0; I < N.getNumResults(); ++I)
      if (const Value *R = N.getResult(I))
        if (reachesIfCondition(R, Seen))
          return true;
  }
  return false;
}

std::vector<const Value *> strider::findControlInputs(const Graph &G) {
  std::vector<const Value *> Found;
  for (const Value *In : G.getInputs()) {
    const TensorType &T = In->getType();
    ElementType Elt = T.getElementType();
    llvm::Optional<int64_t> Count = T.getNumElements();
    if (In->getDefaultData() || !Count || *Count > MaxControlInputElements ||
        !(isInteger(Elt) || Elt == ElementType::Bool))
      continue;
    llvm::DenseSet<const Value *> Seen;
    if (reachesIfCondition(In, Seen))
      Found.push_back(In);
  }
  return Found;
}

llvm::Error strider::checkIfsFolded(const Graph &G) {
  for (const Node *N : G.nodes()) {
    if (N->getOpId() != OpId::If)
      continue;
    // The graph inputs the condition reads: their values, or (through
    // Shape and Size) only their shapes.
    std::set<std::string> From;
    std::vector<std::pair<const Value *, bool>> Work = {
        {N->getOperand(0), false}};
    std::set<std::pair<const Value *, bool>> Seen;
    while (!Work.empty()) {
      auto [V, ViaShape] = Work.back();
      Work.pop_back();
      if (!V || !Seen.insert({V, ViaShape}).second)
        continue;
      if (V->isGraphInput()) {
        From.insert((ViaShape ? "the shape of input '" : "input '") +
                    V->getName() + "'");
        continue;
      }
      const Node *D = V->getDefiningNode();
      const bool Shape =
          D->getOpId() == OpId::Shape || D->getOpId() == OpId::Size;
      for (const Value *Op : D->getOperands())
        Work.push_back({Op, ViaShape || Shape});
    }
    std::string Inputs;
    for (const std::string &What : From)
      Inputs += (Inputs.empty() ? "" : ", ") + What;
    return makeNodeError(
        *N, "its condition is not known when the model is compiled" +
                (Inputs.empty() ? std::string()
                                : " (it is computed from " + Inputs + ")") +
                "; Strider runs an If by inlining the branch it takes, "
                "which needs a condition that folds from static shapes, "
                "constants or small integer inputs");
  }
  return llvm::Error::success();
}
