//===- CPUEinsumTest.cpp - Einsum on the CPU backend vs the reference -----===//
//
// f32 Einsum through compileForCPU against the reference interpreter: the
// contractions of attention blocks and exported models (batched, with
// transposed and permuted operands, broadcast batch dims through '...',
// outer and inner products, labels summed out of one operand first),
// transposes, diagonals and reductions of one operand, operands and
// results in other layouts, three operands, empty labels; each case
// asserts which kernel ran and that nothing fell back. Other element types
// run the reference kernel.
//
//===----------------------------------------------------------------------===//

#include "CPUTestGraph.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace strider;

namespace {

using GraphBuilder = cputest::TestGraph;

struct EinsumCase {
  const char *Equation;
  std::vector<std::vector<int64_t>> Shapes;
  /// The kernel that must run: einsum. and its stages (gemm, dot, copy,
  /// reduce, zero) in order.
  const char *Kernel;
  /// Operand layouts as permutations (empty: identity).
  std::vector<std::vector<unsigned>> Layouts = {};
  /// The result's layout (empty: identity).
  std::vector<unsigned> ResultLayout = {};
};

std::ostream &operator<<(std::ostream &OS, const EinsumCase &C) {
  OS << C.Equation;
  for (const auto &S : C.Shapes) {
    OS << " [";
    for (size_t I = 0; I < S.size(); ++I)
      OS << (I ? "x" : "") << S[I];
    OS << "]";
  }
  return OS;
}

const EinsumCase Cases[] = {
    // Batched matrix products as attention blocks write them.
    {"bij,bjk->bik", {{3, 5, 7}, {3, 7, 9}}, "einsum.gemm"},
    {"bij, bjk -> bik", {{2, 33, 70}, {2, 70, 41}}, "einsum.gemm"},
    {"bhqd,bhkd->bhqk", {{2, 3, 10, 16}, {2, 3, 12, 16}}, "einsum.gemm"},
    {"bhqk,bhkd->bhqd", {{2, 3, 10, 12}, {2, 3, 12, 16}}, "einsum.gemm"},
    {"bqhd,bkhd->bhqk", {{2, 9, 3, 8}, {2, 11, 3, 8}}, "einsum.gemm"},
    {"bhqk,bkhd->bqhd", {{2, 3, 9, 11}, {2, 11, 3, 8}}, "einsum.gemm"},
    {"ij,jk->ik", {{17, 33}, {33, 40}}, "einsum.gemm"},
    {"ij,jk", {{4, 5}, {5, 6}}, "einsum.gemm"},
    {"ji,kj->ik", {{33, 17}, {40, 33}}, "einsum.gemm"},
    {"ij,jk->ki", {{6, 5}, {5, 7}}, "einsum.gemm"},
    {"bid,jd->bij", {{2, 5, 8}, {7, 8}}, "einsum.gemm"},
    {"bij,bjk->bki", {{3, 4, 5}, {3, 5, 6}}, "einsum.gemm"},
    // Summed labels that nest in one operand and not the other: a copy
    // in GEMM order first.
    {"ijl,ljk->ik", {{4, 5, 6}, {6, 5, 7}}, "einsum.copy+gemm"},
    {"bjil,bljk->bik", {{2, 3, 4, 5}, {2, 5, 3, 6}}, "einsum.copy+gemm"},
    // Products without a sum, sums without rows or columns.
    {"i,j->ij", {{7}, {11}}, "einsum.gemm"},
    {"bi,bj->bij", {{3, 7}, {3, 5}}, "einsum.gemm"},
    {"i,i", {{37}, {37}}, "einsum.dot"},
    {"ij,ij->", {{3, 4}, {3, 4}}, "einsum.dot"},
    {"ij,ij->ij", {{30, 70}, {30, 70}}, "einsum.dot"},
    {"...d,...d->...", {{3, 50, 16}, {50, 16}}, "einsum.gemm"},
    {"bij,bj->bi", {{4, 6, 9}, {4, 9}}, "einsum.gemm"},
    {"i,ij->j", {{9}, {9, 20}}, "einsum.gemm"},
    // Broadcast batch dims: '...' of different ranks, and 1s.
    {"...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 6}}, "einsum.gemm"},
    {"...ij,...jk->...ik", {{2, 3, 4}, {4, 5}}, "einsum.gemm"},
    {"...ij,...jk->...ik", {{2, 3, 3, 4}, {1, 4, 5}}, "einsum.gemm"},
    {"...ij,jk", {{6, 3, 4}, {4, 5}}, "einsum.gemm"},
    {"ij,jk->ik", {{3, 1}, {4, 5}}, "einsum.reduce+gemm"},
    // Labels summed out of one operand first.
    {"ij,jk->i", {{4, 5}, {5, 6}}, "einsum.reduce+gemm"},
    {"bij,bkj->b", {{2, 3, 4}, {2, 5, 4}}, "einsum.reduce+dot"},
    {"aij,jk->ik", {{3, 4, 5}, {5, 6}}, "einsum.reduce+gemm"},
    {"ija,jkb->ik", {{4, 5, 3}, {5, 6, 2}}, "einsum.reduce+gemm"},
    // A diagonal read through strides inside a contraction.
    {"iij,jk->ik", {{3, 3, 4}, {4, 5}}, "einsum.gemm"},
    // One operand: transposes, diagonals, reductions.
    {"ij->ji", {{13, 29}}, "einsum.copy"},
    {"bhqd->bqhd", {{2, 3, 5, 8}}, "einsum.copy"},
    {"ii->i", {{9, 9}}, "einsum.copy"},
    {"...ii->...i", {{3, 5, 5}}, "einsum.copy"},
    {"ij", {{4, 6}}, "einsum.copy"},
    {"ii", {{9, 9}}, "einsum.copy+reduce"},
    {"ij->i", {{5, 37}}, "einsum.reduce"},
    {"ij->j", {{5, 37}}, "einsum.reduce"},
    {"ij->", {{5, 37}}, "einsum.reduce"},
    {"ijk->ik", {{3, 4, 5}}, "einsum.reduce"},
    {"ijk->ki", {{3, 4, 5}}, "einsum.copy+reduce"},
    {"iij->j", {{4, 4, 6}}, "einsum.copy+reduce"},
    // Three operands, contracted left to right.
    {"ij,jk,kl->il", {{3, 4}, {4, 5}, {5, 2}}, "einsum.gemm"},
    {"bi,bj,bk->bijk", {{2, 3}, {2, 4}, {2, 5}}, "einsum.gemm"},
    {"i,i,j->j", {{6}, {6}, {4}}, "einsum.dot+gemm"},
    {"ab,bc,ca->", {{3, 4}, {4, 5}, {5, 3}}, "einsum.gemm+copy+dot"},
    // Operands and results in other layouts (read through their strides).
    {"bhqd,bhkd->bhqk",
     {{2, 3, 10, 16}, {2, 3, 12, 16}},
     "einsum.gemm",
     {{0, 2, 3, 1}, {3, 2, 1, 0}}},
    {"bij,bjk->bik", {{3, 5, 7}, {3, 7, 9}}, "einsum.gemm", {}, {2, 1, 0}},
    {"ij->i", {{5, 37}}, "einsum.reduce", {{1, 0}}},
};

class CPUEinsumTest : public ::testing::TestWithParam<EinsumCase> {};

TEST_P(CPUEinsumTest, MatchesReferenceWithoutFallback) {
  const EinsumCase &C = GetParam();
  GraphBuilder B(7);
  std::vector<Value *> Ops;
  for (size_t I = 0; I < C.Shapes.size(); ++I) {
    Layout L;
    if (I < C.Layouts.size() && !C.Layouts[I].empty())
      L = Layout(C.Layouts[I]);
    Ops.push_back(B.input(C.Shapes[I], L));
  }
  Value *Y =
      B.op(OpId::Einsum, Ops, {{"equation", Attribute::getString(C.Equation)}});
  if (!C.ResultLayout.empty())
    B.setLayout(Y, Layout(C.ResultLayout));
  B.checkThreads(Y, C.Kernel, {1, 2, 3});
  // Exactly these stages, in one step.
  auto Prog = cpu::compileForCPU(B.G, cpu::CPUOptions());
  ASSERT_TRUE(bool(Prog)) << llvm::toString(Prog.takeError());
  ASSERT_EQ((*Prog)->getSteps().size(), 1u);
  EXPECT_EQ((*Prog)->getSteps()[0].Kernel, C.Kernel);
}

INSTANTIATE_TEST_SUITE_P(Einsum, CPUEinsumTest, ::testing::ValuesIn(Cases));

TEST(CPUEinsumKernelTest, ManySmallAndFewLargeProducts) {
  // Many small products run one per thread, few large ones split their
  // tiles: the same bits either way.
  for (auto Shapes :
       {std::vector<std::vector<int64_t>>{{4, 12, 16, 8}, {4, 12, 16, 8}},
        std::vector<std::vector<int64_t>>{{1, 2, 150, 64}, {1, 2, 170, 64}}}) {
    GraphBuilder B(11);
    Value *Q = B.input(Shapes[0]), *K = B.input(Shapes[1]);
    Value *Y = B.op(OpId::Einsum, {Q, K},
                    {{"equation", Attribute::getString("bhqd,bhkd->bhqk")}});
    B.checkThreads(Y, "einsum.gemm", {1, 2, 3});
  }
}

TEST(CPUEinsumKernelTest, EmptyLabels) {
  // A summed label of size 0 gives zeros; an empty result, nothing.
  for (auto Shapes : {std::vector<std::vector<int64_t>>{{2, 0}, {0, 3}},
                      std::vector<std::vector<int64_t>>{{0, 4}, {4, 3}}}) {
    GraphBuilder B(14);
    std::vector<Value *> Ops;
    for (const auto &S : Shapes) {
      std::string Name = "in" + std::to_string(Ops.size());
      Ops.push_back(B.G.addInput(Name, TensorType::get(ElementType::F32, S)));
      B.Inputs[Name] = runtime::Tensor(ElementType::F32, S);
    }
    Value *Y = B.op(OpId::Einsum, Ops,
                    {{"equation", Attribute::getString("ij,jk->ik")}});
    B.checkThreads(Y, "einsum.zero", {1, 2});
  }
}

TEST(CPUEinsumKernelTest, ConstantOperand) {
  // Weights as a constant: read from the constant's buffer.
  GraphBuilder B(12);
  Value *X = B.input({2, 5, 8});
  Value *W = B.constant({8, 6});
  Value *Y = B.op(OpId::Einsum, {X, W},
                  {{"equation", Attribute::getString("bsd,de->bse")}});
  B.checkThreads(Y, "einsum.gemm", {1, 2});
}

TEST(CPUEinsumKernelTest, OtherElementTypesFallBack) {
  // f64 runs the reference kernel (one fallback step), as do the other
  // element types.
  GraphBuilder B(13);
  Value *A = B.G.addInput("a", TensorType::get(ElementType::F64, {3, 4}));
  runtime::Tensor T(ElementType::F64, {3, 4});
  for (int64_t I = 0; I < T.getNumElements(); ++I)
    T.setDouble(I, 0.25 * double(I) - 1);
  B.Inputs["a"] = T;
  Value *Y =
      B.op(OpId::Einsum, {A, A}, {{"equation", Attribute::getString("ij,kj")}});
  B.check(Y, /*MaxFallbacks=*/1, /*Threads=*/1, "reference.Einsum");
}

} // namespace
