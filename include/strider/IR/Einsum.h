//===- Einsum.h - Einsum equations: parsing and binding ---------*- C++ -*-===//
//
// The one reading of ONNX Einsum's `equation`, shared by shape inference,
// the reference kernel and the CPU lowering: parseEinsum checks the text,
// bindEinsum gives every dim of every operand and of the result a label
// once the operand ranks are known, resolveEinsumDims the size of each
// label.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_IR_EINSUM_H
#define STRIDER_IR_EINSUM_H

#include "strider/IR/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace strider {

/// One term of an equation as written: its letters in order and where
/// `...` stands among them.
struct EinsumTerm {
  std::string Letters;
  /// Number of letters before `...`; -1 when the term has none.
  int Ellipsis = -1;

  bool hasEllipsis() const { return Ellipsis >= 0; }
  /// The term as written, without spaces (`...ij`).
  std::string str() const;
};

/// A parsed equation. In the implicit form (no `->`) the output is made
/// up here as numpy and ONNX define it: `...` when an input has one, then
/// the letters that appear exactly once in the inputs, in ASCII order
/// (upper case first).
struct EinsumEquation {
  /// The equation as given (for messages).
  std::string Text;
  llvm::SmallVector<EinsumTerm, 2> Inputs;
  EinsumTerm Output;
  bool Explicit = false;
};

/// Parses \p Text: terms of letters (a-z, A-Z) separated by `,`, an
/// optional `->` and the output term; `...` at most once per term; spaces
/// are ignored. Errors (not located; callers add the node) for any other
/// character, a `.` outside `...`, a second `...` in a term or a second
/// `->`, an output letter that no input has, and a repeated output letter.
llvm::Expected<EinsumEquation> parseEinsum(llvm::StringRef Text);

/// An equation bound to the ranks of its operands. Labels are numbered
/// 0..NumLabels-1: first the letters in order of first appearance, then
/// the EllipsisRank dims `...` stands for (the widest `...` of the inputs;
/// narrower ones take its last dims, as numpy broadcasting aligns them).
struct EinsumBinding {
  unsigned NumLabels = 0;
  unsigned EllipsisRank = 0;
  /// Per label: its letter, or 0 for a dim of `...`.
  llvm::SmallVector<char, 8> Letters;
  /// Per operand, per dim: the dim's label. A label may appear more than
  /// once in one operand (a diagonal).
  llvm::SmallVector<llvm::SmallVector<unsigned, 6>, 2> Operands;
  /// Per result dim: its label (each at most once).
  llvm::SmallVector<unsigned, 6> Result;

  /// How messages name label \p L: `label 'j'`, or `dim 1 of '...'`.
  std::string describeLabel(unsigned L) const;
  /// Whether label \p L appears in the result.
  bool isInResult(unsigned L) const;
};

/// Binds \p E to operands of ranks \p Ranks. Errors when the number of
/// input terms is not the number of operands, when an operand's rank does
/// not match its term, and when `...` stands for dims that the explicit
/// output leaves out (numpy rejects that too).
llvm::Expected<EinsumBinding> bindEinsum(const EinsumEquation &E,
                                         llvm::ArrayRef<unsigned> Ranks);

/// The size of each label of \p B, from the operand shapes \p Shapes (one
/// per operand, of the bound ranks). The dims of a label must agree, except
/// that a static 1 broadcasts to the others (numpy and ONNX Runtime read
/// such a dim repeatedly, letters and `...` alike): a static size beats a
/// symbol, two different symbols give unknown (either might be 1). Error
/// `label 'j' has size 3 in input 0 and 4 in input 1` otherwise.
llvm::Error resolveEinsumDims(const EinsumBinding &B,
                              llvm::ArrayRef<llvm::ArrayRef<Dim>> Shapes,
                              llvm::SmallVectorImpl<Dim> &Sizes);

/// resolveEinsumDims for static shapes.
llvm::Error resolveEinsumSizes(const EinsumBinding &B,
                               llvm::ArrayRef<llvm::ArrayRef<int64_t>> Shapes,
                               llvm::SmallVectorImpl<int64_t> &Sizes);

} // namespace strider

#endif // STRIDER_IR_EINSUM_H
