//===- Einsum.cpp - Einsum equations: parsing and binding -----------------===//
//
// Parses an Einsum equation once into its terms, binds the terms to the
// operand ranks (labelling the dims of `...`) and sizes the labels.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Einsum.h"

#include "InferFunctions.h"

#include "strider/IR/Diagnostics.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <array>

using namespace strider;

std::string EinsumTerm::str() const {
  if (!hasEllipsis())
    return Letters;
  return Letters.substr(0, size_t(Ellipsis)) + "..." +
         Letters.substr(size_t(Ellipsis));
}

namespace {

/// `invalid character 'x'`, or the byte in hex when it does not print.
std::string describeCharacter(char C) {
  if (llvm::isPrint(C))
    return std::string("invalid character '") + C + "'";
  const char *Hex = "0123456789ABCDEF";
  const uint8_t Byte = uint8_t(C);
  return std::string("invalid byte 0x") + Hex[Byte >> 4] + Hex[Byte & 15];
}

/// Reads one term (spaces already removed) into \p Out.
llvm::Error parseTerm(llvm::StringRef Equation, llvm::StringRef Text,
                      EinsumTerm &Out) {
  for (size_t I = 0; I < Text.size();) {
    char C = Text[I];
    if (llvm::isAlpha(C)) {
      Out.Letters.push_back(C);
      ++I;
      continue;
    }
    if (C != '.')
      return makeError("equation '" + Equation + "': " + describeCharacter(C));
    if (!Text.substr(I).startswith("..."))
      return makeError("equation '" + Equation + "': '.' outside of '...'");
    if (Out.hasEllipsis())
      return makeError("equation '" + Equation + "': term '" + Text +
                       "' has more than one '...'");
    Out.Ellipsis = int(Out.Letters.size());
    I += 3;
  }
  return llvm::Error::success();
}

std::string dimText(const Dim &D) {
  if (D.isStatic())
    return std::to_string(D.getSize());
  if (D.isSymbol())
    return D.getSymbol().str();
  return "?";
}

} // namespace

llvm::Expected<EinsumEquation> strider::parseEinsum(llvm::StringRef Text) {
  std::string Compact;
  for (char C : Text)
    if (C != ' ')
      Compact.push_back(C);
  llvm::StringRef S = Compact;
  EinsumEquation E;
  E.Text = Text.str();
  llvm::StringRef Lhs = S, Rhs;
  size_t Arrow = S.find("->");
  if (Arrow != llvm::StringRef::npos) {
    if (S.find("->", Arrow + 2) != llvm::StringRef::npos)
      return makeError("equation '" + Text + "': more than one '->'");
    Lhs = S.take_front(Arrow);
    Rhs = S.drop_front(Arrow + 2);
    E.Explicit = true;
  }
  llvm::SmallVector<llvm::StringRef, 4> Terms;
  Lhs.split(Terms, ',', -1, /*KeepEmpty=*/true);
  for (llvm::StringRef T : Terms) {
    E.Inputs.emplace_back();
    if (llvm::Error Err = parseTerm(Text, T, E.Inputs.back()))
      return Err;
  }
  // How often each letter appears in the inputs (diagonals count twice).
  std::array<unsigned, 128> Count{};
  bool InputEllipsis = false;
  for (const EinsumTerm &T : E.Inputs) {
    for (char C : T.Letters)
      ++Count[size_t(C)];
    InputEllipsis |= T.hasEllipsis();
  }
  if (E.Explicit) {
    if (llvm::Error Err = parseTerm(Text, Rhs, E.Output))
      return Err;
    std::array<bool, 128> Seen{};
    for (char C : E.Output.Letters) {
      if (!Count[size_t(C)])
        return makeError("equation '" + Text + "': output label '" +
                         llvm::Twine(C) + "' appears in no input");
      if (Seen[size_t(C)])
        return makeError("equation '" + Text + "': output label '" +
                         llvm::Twine(C) + "' appears more than once");
      Seen[size_t(C)] = true;
    }
    return E;
  }
  if (InputEllipsis)
    E.Output.Ellipsis = 0;
  for (unsigned C = 0; C < Count.size(); ++C)
    if (Count[C] == 1)
      E.Output.Letters.push_back(char(C));
  return E;
}

std::string EinsumBinding::describeLabel(unsigned L) const {
  if (Letters[L])
    return std::string("label '") + Letters[L] + "'";
  return "dim " + std::to_string(L - (NumLabels - EllipsisRank)) + " of '...'";
}

bool EinsumBinding::isInResult(unsigned L) const {
  return llvm::is_contained(Result, L);
}

llvm::Expected<EinsumBinding>
strider::bindEinsum(const EinsumEquation &E, llvm::ArrayRef<unsigned> Ranks) {
  if (E.Inputs.size() != Ranks.size())
    return makeError("equation '" + E.Text + "' has " +
                     llvm::Twine(E.Inputs.size()) + " input terms for " +
                     llvm::Twine(Ranks.size()) + " inputs");
  EinsumBinding B;
  std::array<int, 128> LabelOf;
  LabelOf.fill(-1);
  for (const EinsumTerm &T : E.Inputs)
    for (char C : T.Letters)
      if (LabelOf[size_t(C)] < 0) {
        LabelOf[size_t(C)] = int(B.Letters.size());
        B.Letters.push_back(C);
      }
  const unsigned NumLetters = B.Letters.size();
  llvm::SmallVector<unsigned, 2> EllipsisRanks;
  for (unsigned I = 0; I < Ranks.size(); ++I) {
    const EinsumTerm &T = E.Inputs[I];
    const unsigned Labels = T.Letters.size();
    if (!T.hasEllipsis() && Ranks[I] != Labels)
      return makeError("input " + llvm::Twine(I) + " has rank " +
                       llvm::Twine(Ranks[I]) + ", but its term '" + T.str() +
                       "' has " + llvm::Twine(Labels) + " labels");
    if (T.hasEllipsis() && Ranks[I] < Labels)
      return makeError("input " + llvm::Twine(I) + " has rank " +
                       llvm::Twine(Ranks[I]) + ", but its term '" + T.str() +
                       "' has " + llvm::Twine(Labels) +
                       " labels besides '...'");
    EllipsisRanks.push_back(Ranks[I] - Labels);
    B.EllipsisRank = std::max(B.EllipsisRank, Ranks[I] - Labels);
  }
  if (B.EllipsisRank && !E.Output.hasEllipsis())
    return makeError("equation '" + E.Text +
                     "': the output has no '...', but '...' stands for " +
                     llvm::Twine(B.EllipsisRank) +
                     (B.EllipsisRank == 1 ? " dim" : " dims") +
                     " of the inputs");
  B.NumLabels = NumLetters + B.EllipsisRank;
  B.Letters.resize(B.NumLabels, 0);
  // The labels of a term's dims; its `...` stands for the last \p Rank
  // dims of the widest one.
  auto Label = [&](const EinsumTerm &T, unsigned Rank,
                   llvm::SmallVectorImpl<unsigned> &Out) {
    for (int I = 0; I <= int(T.Letters.size()); ++I) {
      if (I == T.Ellipsis)
        for (unsigned J = B.EllipsisRank - Rank; J < B.EllipsisRank; ++J)
          Out.push_back(NumLetters + J);
      if (I < int(T.Letters.size()))
        Out.push_back(unsigned(LabelOf[size_t(T.Letters[size_t(I)])]));
    }
  };
  for (unsigned I = 0; I < Ranks.size(); ++I) {
    B.Operands.emplace_back();
    Label(E.Inputs[I], EllipsisRanks[I], B.Operands.back());
  }
  Label(E.Output, B.EllipsisRank, B.Result);
  return B;
}

llvm::Error
strider::resolveEinsumDims(const EinsumBinding &B,
                           llvm::ArrayRef<llvm::ArrayRef<Dim>> Shapes,
                           llvm::SmallVectorImpl<Dim> &Sizes) {
  assert(Shapes.size() == B.Operands.size() && "one shape per operand");
  Sizes.assign(B.NumLabels, Dim::getStatic(1));
  // Which operand gave each label its current size (-1: none yet).
  llvm::SmallVector<int, 8> From(B.NumLabels, -1);
  for (unsigned I = 0; I < Shapes.size(); ++I) {
    assert(Shapes[I].size() == B.Operands[I].size() && "bound rank");
    for (unsigned D = 0; D < Shapes[I].size(); ++D) {
      const unsigned L = B.Operands[I][D];
      const Dim &New = Shapes[I][D];
      if (From[L] < 0) {
        Sizes[L] = New;
        From[L] = int(I);
        continue;
      }
      Dim Merged;
      if (!detail::broadcastDim(Sizes[L], New, Merged)) {
        std::string Where =
            From[L] == int(I)
                ? "size " + dimText(Sizes[L]) + " and " + dimText(New) +
                      " in input " + std::to_string(I)
                : "size " + dimText(Sizes[L]) + " in input " +
                      std::to_string(From[L]) + " and " + dimText(New) +
                      " in input " + std::to_string(I);
        return makeError(B.describeLabel(L) + " has " + Where);
      }
      if (Merged != Sizes[L]) {
        Sizes[L] = Merged;
        From[L] = int(I);
      }
    }
  }
  return llvm::Error::success();
}

llvm::Error
strider::resolveEinsumSizes(const EinsumBinding &B,
                            llvm::ArrayRef<llvm::ArrayRef<int64_t>> Shapes,
                            llvm::SmallVectorImpl<int64_t> &Sizes) {
  llvm::SmallVector<llvm::SmallVector<Dim, 6>, 2> Dims;
  for (llvm::ArrayRef<int64_t> S : Shapes) {
    Dims.emplace_back();
    for (int64_t D : S)
      Dims.back().push_back(Dim::getStatic(D));
  }
  llvm::SmallVector<llvm::ArrayRef<Dim>, 2> Refs(Dims.begin(), Dims.end());
  llvm::SmallVector<Dim, 8> Resolved;
  if (llvm::Error E = resolveEinsumDims(B, Refs, Resolved))
    return E;
  Sizes.clear();
  for (const Dim &D : Resolved)
    Sizes.push_back(D.getSize());
  return llvm::Error::success();
}
