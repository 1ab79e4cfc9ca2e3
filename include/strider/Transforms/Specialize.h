//===- Specialize.h - Bind a graph's dynamic dims to sizes ------*- C++ -*-===//
//
// Shape specialization: given the shapes of the tensors a caller feeds (or
// sizes for symbolic dims), make every dim of the graph static where the
// model allows it. Graph inputs take the fed shapes, symbolic dims are
// bound model-wide, declared types (value_info, including symbolic
// expressions such as `floor(height/2 - 1/2) + 1`) are rewritten with the
// bindings, unfed inputs that carry default data become constants, and
// shape inference and constant folding then run until nothing changes, so
// that Shape -> Gather -> Concat -> Reshape and Range chains resolve.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_TRANSFORMS_SPECIALIZE_H
#define STRIDER_TRANSFORMS_SPECIALIZE_H

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strider {

class Graph;
class Value;

/// What a graph is specialized to.
/// Folds during specialization may create constants of up to 2^28
/// elements (a specialized graph is bound for a run, whose memory they
/// are anyway; the memory budget does not count them yet).
constexpr int64_t DefaultMaxFoldedElements = int64_t(1) << 28;

struct ShapeBindings {
  /// Static logical shapes of graph inputs, by input name.
  std::map<std::string, llvm::SmallVector<int64_t, 6>> InputShapes;
  /// Sizes of symbolic dims, by symbol (`--dim N=1`; an anonymous dim of
  /// input `x` at axis 2 is the symbol `x:2`). Each must name a symbol of a
  /// graph input's type.
  std::map<std::string, int64_t> Dims;
  /// Values of integer or bool inputs bound as constants, in row-major
  /// order (control inputs, see findControlInputs; `--bind NAME=V,...`):
  /// each input becomes a Constant of its element type and of its shape
  /// (InputShapes' if given, else its declared one, which must be static),
  /// so the Ifs it decides fold.
  std::map<std::string, std::vector<int64_t>> InputValues;
  /// The most elements a constant one fold may make (a larger result stays
  /// an op of the run); inferAndFoldToFixedPoint's default.
  int64_t MaxFoldedElements = DefaultMaxFoldedElements;
};

/// Most elements an input bound by value may have.
constexpr int64_t MaxControlInputElements = 16;

/// The graph inputs of \p G (without default data) whose values decide
/// which branch an If takes: integer or bool inputs of static shape with
/// at most MaxControlInputElements elements whose uses reach an If's
/// condition (through other nodes, and through the branches of Ifs they
/// are passed to). A session keys its specializations by their values too.
std::vector<const Value *> findControlInputs(const Graph &G);

/// An error for the first If of \p G (after specialization) whose
/// condition did not fold, naming the graph inputs it is computed from:
/// no backend runs an If, each runs the branch an If takes, inlined.
llvm::Error checkIfsFolded(const Graph &G);

/// What specialization did, for tools to report.
struct SpecializeResult {
  /// Every symbol of the graph inputs with the size it was bound to.
  std::map<std::string, int64_t> BoundDims;
  /// Unfed graph inputs with default data that became constants.
  std::vector<std::string> FoldedInputs;
  /// Inputs bound by value (ShapeBindings::InputValues), as `name=value`
  /// (values listed up to 4 elements).
  std::vector<std::string> BoundValues;
  /// Located notes: declared types that inference contradicted.
  std::vector<std::string> Warnings;
  /// Rounds of inference and folding until the fixed point.
  unsigned Rounds = 0;
};

/// Specialize \p G to \p B (see the file comment). Inputs named in
/// B.InputShapes must exist and agree with their declared rank and static
/// dims; a symbol bound to two sizes, a size below 0, or a B.Dims entry
/// that names no symbol of the inputs is an error naming it. Inputs neither
/// fed nor defaulted keep their dims where no binding covers them.
/// Errors are one line each; \p Result, if given, says what was done.
llvm::Error specializeShapes(Graph &G, const ShapeBindings &B,
                             SpecializeResult *Result = nullptr);

/// Error unless every symbol of \p Dims is a symbolic dim of a graph input
/// of \p G (the message lists the symbols there are), and sizes are >= 0.
llvm::Error checkDimBindings(const Graph &G,
                             const std::map<std::string, int64_t> &Dims);

/// Shape inference and constant folding in turn until neither changes the
/// graph (at most \p MaxRounds rounds). Folds may create constants of up
/// to \p MaxFoldedElements elements. Declared types that contradict
/// inference are replaced (notes in \p Conflicts) when it is given, errors
/// otherwise. Returns the number of rounds run.
llvm::Expected<unsigned>
inferAndFoldToFixedPoint(Graph &G, std::vector<std::string> *Conflicts,
                         unsigned MaxRounds = 16,
                         int64_t MaxFoldedElements = DefaultMaxFoldedElements);

/// The value of symbolic dim expression \p Expr (integers, symbols, + - *
/// /, parentheses, floor(), ceil(), min(), max()) under \p Sizes, when it
/// parses, every symbol is bound and the value is a non-negative integer;
/// None otherwise. A plain symbol is an expression too.
llvm::Optional<int64_t>
evaluateDimExpression(llvm::StringRef Expr,
                      const std::map<std::string, int64_t> &Sizes);

} // namespace strider

#endif // STRIDER_TRANSFORMS_SPECIALIZE_H
