//===- EinsumTest.cpp - Einsum equations: parse, bind, size ---------------===//

#include "strider/IR/Einsum.h"

#include "gtest/gtest.h"

using namespace strider;

namespace {

EinsumEquation parse(llvm::StringRef Text) {
  auto E = parseEinsum(Text);
  EXPECT_TRUE(bool(E)) << Text.str() << ": " << llvm::toString(E.takeError());
  return E ? *E : EinsumEquation();
}

std::string parseError(llvm::StringRef Text) {
  auto E = parseEinsum(Text);
  if (E)
    return "no error";
  return llvm::toString(E.takeError());
}

EinsumBinding bind(llvm::StringRef Text, llvm::ArrayRef<unsigned> Ranks) {
  auto B = bindEinsum(parse(Text), Ranks);
  EXPECT_TRUE(bool(B)) << Text.str() << ": " << llvm::toString(B.takeError());
  return B ? *B : EinsumBinding();
}

/// The static sizes of the result of \p Text on operands of \p Shapes, or
/// the error.
std::string resultShape(llvm::StringRef Text,
                        std::vector<std::vector<int64_t>> Shapes) {
  llvm::SmallVector<unsigned, 2> Ranks;
  llvm::SmallVector<llvm::ArrayRef<int64_t>, 2> Refs;
  for (const auto &S : Shapes) {
    Ranks.push_back(S.size());
    Refs.push_back(S);
  }
  auto B = bindEinsum(parse(Text), Ranks);
  if (!B)
    return llvm::toString(B.takeError());
  llvm::SmallVector<int64_t, 8> Sizes;
  if (llvm::Error E = resolveEinsumSizes(*B, Refs, Sizes))
    return llvm::toString(std::move(E));
  std::string Out = "[";
  for (unsigned L : B->Result)
    Out += (Out.size() > 1 ? ", " : "") + std::to_string(Sizes[L]);
  return Out + "]";
}

} // namespace

TEST(EinsumTest, ParsesTermsSpacesAndEllipses) {
  EinsumEquation E = parse(" bij , bjk -> bik ");
  ASSERT_EQ(E.Inputs.size(), 2u);
  EXPECT_EQ(E.Inputs[0].Letters, "bij");
  EXPECT_EQ(E.Inputs[1].Letters, "bjk");
  EXPECT_TRUE(E.Explicit);
  EXPECT_EQ(E.Output.Letters, "bik");
  EXPECT_FALSE(E.Output.hasEllipsis());

  E = parse("a...b,...->...ba");
  EXPECT_EQ(E.Inputs[0].Ellipsis, 1);
  EXPECT_EQ(E.Inputs[0].str(), "a...b");
  EXPECT_EQ(E.Inputs[1].str(), "...");
  EXPECT_EQ(E.Output.str(), "...ba");

  // An empty term is a scalar operand; an empty output a full sum.
  E = parse(",i->");
  ASSERT_EQ(E.Inputs.size(), 2u);
  EXPECT_EQ(E.Inputs[0].Letters, "");
  EXPECT_EQ(E.Output.str(), "");
}

TEST(EinsumTest, ImplicitOutput) {
  // Letters that appear exactly once, in ASCII order (upper case first);
  // '...' first when an input has one.
  EXPECT_EQ(parse("ij,jk").Output.str(), "ik");
  EXPECT_EQ(parse("ba").Output.str(), "ab");
  EXPECT_EQ(parse("Ba,ab").Output.str(), "Bb");
  EXPECT_EQ(parse("ii").Output.str(), "");
  EXPECT_EQ(parse("i,i").Output.str(), "");
  EXPECT_EQ(parse("...ij,...jk").Output.str(), "...ik");
  EXPECT_FALSE(parse("ij").Explicit);
}

TEST(EinsumTest, ParseErrors) {
  EXPECT_EQ(parseError("ij,j1->i"),
            "equation 'ij,j1->i': invalid character '1'");
  EXPECT_EQ(parseError("ij->i\tj"), "equation 'ij->i\tj': invalid byte 0x09");
  EXPECT_EQ(parseError("ij->i,j"), "equation 'ij->i,j': invalid character ','");
  EXPECT_EQ(parseError("i-j"), "equation 'i-j': invalid character '-'");
  EXPECT_EQ(parseError("i..j"), "equation 'i..j': '.' outside of '...'");
  EXPECT_EQ(parseError("i....j"), "equation 'i....j': '.' outside of '...'");
  EXPECT_EQ(parseError("...i...->i"),
            "equation '...i...->i': term '...i...' has more than one '...'");
  EXPECT_EQ(parseError("i->i->i"), "equation 'i->i->i': more than one '->'");
  EXPECT_EQ(parseError("ij->ik"),
            "equation 'ij->ik': output label 'k' appears in no input");
  EXPECT_EQ(parseError("ij->jij"),
            "equation 'ij->jij': output label 'j' appears more than once");
  EXPECT_EQ(parseError("ij->..."), "no error");
}

TEST(EinsumTest, BindsLabelsAndEllipsisDims) {
  // Letters in order of first appearance, then the dims of '...'; a
  // narrower '...' takes the last ones.
  EinsumBinding B = bind("...ij,jk...->...ik", {4, 3});
  EXPECT_EQ(B.NumLabels, 5u);
  EXPECT_EQ(B.EllipsisRank, 2u);
  EXPECT_EQ(B.Operands[0], (llvm::SmallVector<unsigned, 6>{3, 4, 0, 1}));
  EXPECT_EQ(B.Operands[1], (llvm::SmallVector<unsigned, 6>{1, 2, 4}));
  EXPECT_EQ(B.Result, (llvm::SmallVector<unsigned, 6>{3, 4, 0, 2}));
  EXPECT_EQ(B.describeLabel(1), "label 'j'");
  EXPECT_EQ(B.describeLabel(4), "dim 1 of '...'");
  EXPECT_TRUE(B.isInResult(2));
  EXPECT_FALSE(B.isInResult(1));

  // A repeated label is a diagonal: both dims get it.
  B = bind("ii->i", {2});
  EXPECT_EQ(B.Operands[0], (llvm::SmallVector<unsigned, 6>{0, 0}));
}

TEST(EinsumTest, BindErrors) {
  auto Error = [](llvm::StringRef Text, llvm::ArrayRef<unsigned> Ranks) {
    auto B = bindEinsum(parse(Text), Ranks);
    return B ? std::string("no error") : llvm::toString(B.takeError());
  };
  EXPECT_EQ(Error("ij,jk->ik", {2}),
            "equation 'ij,jk->ik' has 2 input terms for 1 inputs");
  EXPECT_EQ(Error("bij,bjk->bik", {3, 2}),
            "input 1 has rank 2, but its term 'bjk' has 3 labels");
  EXPECT_EQ(Error("...ij->...", {1}),
            "input 0 has rank 1, but its term '...ij' has 2 labels besides "
            "'...'");
  EXPECT_EQ(Error("...ij->ij", {4}),
            "equation '...ij->ij': the output has no '...', but '...' stands "
            "for 2 dims of the inputs");
  // '...' standing for no dims may be left out.
  EXPECT_EQ(Error("...ij->ij", {2}), "no error");
}

TEST(EinsumTest, LabelSizes) {
  EXPECT_EQ(resultShape("bij,bjk->bik", {{5, 2, 3}, {5, 3, 4}}), "[5, 2, 4]");
  EXPECT_EQ(resultShape("ij,jk", {{2, 3}, {4, 5}}),
            "label 'j' has size 3 in input 0 and 4 in input 1");
  EXPECT_EQ(resultShape("ii->i", {{2, 3}}),
            "label 'i' has size 2 and 3 in input 0");
  // A 1 broadcasts, letters and '...' alike (numpy, ONNX Runtime).
  EXPECT_EQ(resultShape("i,i->i", {{1}, {3}}), "[3]");
  EXPECT_EQ(resultShape("...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 6}}),
            "[2, 5, 3, 6]");
  EXPECT_EQ(resultShape("...i,...i->...", {{2, 4}, {3, 4}}),
            "dim 0 of '...' has size 2 in input 0 and 3 in input 1");
  EXPECT_EQ(resultShape("i,i", {{1}, {1}}), "[]");
}

TEST(EinsumTest, SymbolicSizes) {
  EinsumBinding B = bind("bij,bjk->bik", {3, 3});
  llvm::SmallVector<Dim, 3> A = {Dim::getSymbol("N"), Dim::getStatic(2),
                                 Dim::getUnknown()};
  llvm::SmallVector<Dim, 3> C = {Dim::getStatic(1), Dim::getSymbol("K"),
                                 Dim::getSymbol("M")};
  llvm::ArrayRef<Dim> Shapes[] = {A, C};
  llvm::SmallVector<Dim, 8> Sizes;
  ASSERT_FALSE(bool(resolveEinsumDims(B, Shapes, Sizes)));
  // b: N and a broadcast 1; j: unknown and K (either may be 1: unknown).
  EXPECT_EQ(Sizes[0], Dim::getSymbol("N"));
  EXPECT_EQ(Sizes[1], Dim::getStatic(2));
  EXPECT_EQ(Sizes[2], Dim::getUnknown());
  EXPECT_EQ(Sizes[3], Dim::getSymbol("M"));
}
