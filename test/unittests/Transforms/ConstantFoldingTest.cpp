//===- ConstantFoldingTest.cpp - constant-fold against naive references ---===//
//
// Random Transpose, broadcasting arithmetic, Slice and Gather cases built
// through the Graph API, folded by the constant-fold pass and compared
// element by element with straightforward reference loops.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Graph.h"
#include "strider/IR/TensorData.h"
#include "strider/IR/Verifier.h"
#include "strider/Transforms/Passes.h"

#include "gtest/gtest.h"

#include <random>
#include <string>
#include <vector>

using namespace strider;

namespace {

using Shape = std::vector<int64_t>;

int64_t numElements(const Shape &S) {
  int64_t N = 1;
  for (int64_t D : S)
    N *= D;
  return N;
}

/// Row-major coordinates of element \p Index of a tensor of \p S.
Shape coordsOf(int64_t Index, const Shape &S) {
  Shape C(S.size());
  for (size_t I = S.size(); I > 0; --I) {
    C[I - 1] = Index % S[I - 1];
    Index /= S[I - 1];
  }
  return C;
}

Shape shapeOf(const TensorData &D) {
  llvm::SmallVector<int64_t, 6> S = D.getType().getStaticShape();
  return Shape(S.begin(), S.end());
}

int64_t indexOf(const Shape &C, const Shape &S) {
  int64_t Index = 0;
  for (size_t I = 0; I < S.size(); ++I)
    Index = Index * S[I] + C[I];
  return Index;
}

class ConstantFoldingTest : public ::testing::Test {
protected:
  Graph G;
  std::mt19937 Rng{20240611};
  unsigned NextName = 0;

  std::string fresh() { return "v" + std::to_string(NextName++); }

  int64_t uniform(int64_t Lo, int64_t Hi) {
    return std::uniform_int_distribution<int64_t>(Lo, Hi)(Rng);
  }

  Shape randomShape(unsigned Rank, int64_t MaxDim = 4) {
    Shape S;
    for (unsigned I = 0; I < Rank; ++I)
      S.push_back(uniform(1, MaxDim));
    return S;
  }

  /// i64 data of \p S with distinct values, so that every misplaced
  /// element shows.
  static TensorDataRef iota(const Shape &S) {
    std::vector<int64_t> V(numElements(S));
    for (size_t I = 0; I < V.size(); ++I)
      V[I] = int64_t(I) * 7 - 11;
    return TensorData::fromInt64(ElementType::I64, S, V);
  }

  Value *constant(TensorDataRef Data) {
    Node *C = G.createNode(OpId::Constant, {}, {fresh()}, {Data->getType()});
    C->setAttr("value", Attribute::getTensor(Data));
    return C->getResult(0);
  }

  Value *ints(std::vector<int64_t> V) {
    return constant(
        TensorData::fromInt64(ElementType::I64, {int64_t(V.size())}, V));
  }

  /// Append node \p Id as a graph output with an unknown result type, run
  /// constant-fold and return the output's constant data (null if the node
  /// did not fold). Constants only the folded node read are gone after.
  const TensorData *fold(OpId Id, llvm::ArrayRef<Value *> Operands,
                         std::vector<NamedAttribute> Attrs = {}) {
    Node *N = G.createNode(Id, Operands, {fresh()}, {TensorType()});
    for (NamedAttribute &A : Attrs)
      N->setAttr(A.Name, A.Value);
    G.addOutput(N->getResult(0));
    EXPECT_FALSE(bool(createConstantFoldingPass()->run(G)));
    if (llvm::Error E = verifyGraph(G)) {
      ADD_FAILURE() << llvm::toString(std::move(E));
      return nullptr;
    }
    return G.getOutputs().back()->getConstantData();
  }
};

} // namespace

TEST_F(ConstantFoldingTest, TransposeMatchesReference) {
  for (unsigned Case = 0; Case < 200; ++Case) {
    unsigned Rank = uniform(0, 5);
    Shape In = randomShape(Rank);
    std::vector<int64_t> Perm(Rank);
    for (unsigned I = 0; I < Rank; ++I)
      Perm[I] = I;
    std::shuffle(Perm.begin(), Perm.end(), Rng);
    TensorDataRef XD = iota(In);
    const TensorData *R = fold(OpId::Transpose, {constant(XD)},
                               {{"perm", Attribute::getInts(Perm)}});
    ASSERT_TRUE(R) << "case " << Case;
    Shape Out;
    for (int64_t P : Perm)
      Out.push_back(In[P]);
    ASSERT_EQ(shapeOf(*R), Out);
    for (int64_t E = 0; E < numElements(Out); ++E) {
      Shape OC = coordsOf(E, Out), IC(Rank);
      for (unsigned I = 0; I < Rank; ++I)
        IC[Perm[I]] = OC[I];
      ASSERT_EQ(R->getInt(E), XD->getInt(indexOf(IC, In)))
          << "case " << Case << ", element " << E;
    }
  }
}

TEST_F(ConstantFoldingTest, BroadcastingArithmeticMatchesReference) {
  const OpId Ops[] = {OpId::Add, OpId::Sub, OpId::Mul, OpId::Div};
  for (unsigned Case = 0; Case < 200; ++Case) {
    Shape Out = randomShape(uniform(0, 4));
    // Each operand drops some leading dims and makes some dims 1.
    auto Operand = [&]() {
      Shape S(Out.begin() + uniform(0, Out.size()), Out.end());
      for (int64_t &D : S)
        if (uniform(0, 2) == 0)
          D = 1;
      return S;
    };
    Shape SA = Operand(), SB = Operand();
    std::vector<int64_t> VA(numElements(SA)), VB(numElements(SB));
    for (int64_t &V : VA)
      V = uniform(-50, 50);
    for (int64_t &V : VB)
      V = uniform(1, 9) * (uniform(0, 1) ? 1 : -1);
    Value *A = constant(TensorData::fromInt64(ElementType::I64, SA, VA));
    Value *B = constant(TensorData::fromInt64(ElementType::I64, SB, VB));
    OpId Op = Ops[Case % 4];
    const TensorData *R = fold(Op, {A, B});
    ASSERT_TRUE(R) << "case " << Case;
    // The result shape is the broadcast of both; here always Out with the
    // dims no operand keeps set to 1.
    Shape ROut = shapeOf(*R);
    for (int64_t E = 0; E < numElements(ROut); ++E) {
      Shape C = coordsOf(E, ROut);
      auto Pick = [&](const Shape &S) {
        Shape OC(C.end() - S.size(), C.end());
        for (size_t I = 0; I < S.size(); ++I)
          if (S[I] == 1)
            OC[I] = 0;
        return indexOf(OC, S);
      };
      int64_t X = VA[Pick(SA)], Y = VB[Pick(SB)];
      int64_t Want = Op == OpId::Add   ? X + Y
                     : Op == OpId::Sub ? X - Y
                     : Op == OpId::Mul ? X * Y
                                       : X / Y;
      ASSERT_EQ(R->getInt(E), Want) << "case " << Case << ", element " << E;
    }
  }
}

TEST_F(ConstantFoldingTest, SliceMatchesReference) {
  for (unsigned Case = 0; Case < 300; ++Case) {
    unsigned Rank = uniform(1, 4);
    Shape In = randomShape(Rank, 6);
    // Slice a random subset of axes, in random order, with bounds that
    // are often out of range and steps of either sign.
    std::vector<int64_t> Axes;
    for (unsigned I = 0; I < Rank; ++I)
      if (uniform(0, 1))
        Axes.push_back(uniform(0, 1) ? I : int64_t(I) - Rank);
    std::shuffle(Axes.begin(), Axes.end(), Rng);
    std::vector<int64_t> Starts, Ends, Steps;
    for (size_t K = 0; K < Axes.size(); ++K) {
      Starts.push_back(uniform(-8, 8));
      Ends.push_back(uniform(-8, 8));
      int64_t Step = uniform(1, 3);
      Steps.push_back(uniform(0, 1) ? Step : -Step);
    }
    TensorDataRef XD = iota(In);
    const TensorData *R =
        fold(OpId::Slice,
             {constant(XD), ints(Starts), ints(Ends), ints(Axes), ints(Steps)});
    ASSERT_TRUE(R) << "case " << Case;

    // Reference: per dim, the source indices a loop over the clamped
    // bounds visits.
    std::vector<std::vector<int64_t>> Picked(Rank);
    for (unsigned I = 0; I < Rank; ++I)
      for (int64_t J = 0; J < In[I]; ++J)
        Picked[I].push_back(J);
    for (size_t K = 0; K < Axes.size(); ++K) {
      int64_t A = Axes[K] < 0 ? Axes[K] + Rank : Axes[K], Size = In[A];
      int64_t S = Starts[K] < 0 ? Starts[K] + Size : Starts[K];
      int64_t E = Ends[K] < 0 ? Ends[K] + Size : Ends[K];
      Picked[A].clear();
      if (Steps[K] > 0) {
        S = std::max<int64_t>(0, std::min(S, Size));
        E = std::max<int64_t>(0, std::min(E, Size));
        for (int64_t J = S; J < E; J += Steps[K])
          Picked[A].push_back(J);
      } else {
        // ONNX (unlike numpy) clamps a negative-step start into the dim.
        S = std::max<int64_t>(0, std::min(S, Size - 1));
        E = std::max<int64_t>(-1, std::min(E, Size - 1));
        for (int64_t J = S; J > E; J += Steps[K])
          Picked[A].push_back(J);
      }
    }
    Shape Out;
    for (unsigned I = 0; I < Rank; ++I)
      Out.push_back(Picked[I].size());
    ASSERT_EQ(shapeOf(*R), Out)
        << "case " << Case << ": " << ::testing::PrintToString(In) << " "
        << ::testing::PrintToString(Starts) << ::testing::PrintToString(Ends)
        << ::testing::PrintToString(Axes) << ::testing::PrintToString(Steps);
    for (int64_t E = 0; E < numElements(Out); ++E) {
      Shape C = coordsOf(E, Out), IC(Rank);
      for (unsigned I = 0; I < Rank; ++I)
        IC[I] = Picked[I][C[I]];
      ASSERT_EQ(R->getInt(E), XD->getInt(indexOf(IC, In)))
          << "case " << Case << ", element " << E;
    }
  }
}

TEST_F(ConstantFoldingTest, GatherMatchesReference) {
  for (unsigned Case = 0; Case < 100; ++Case) {
    unsigned Rank = uniform(1, 4);
    Shape In = randomShape(Rank);
    int64_t Axis = uniform(0, Rank - 1);
    Shape IdxShape = randomShape(uniform(0, 2), 3);
    std::vector<int64_t> Idx(numElements(IdxShape));
    for (int64_t &V : Idx)
      V = uniform(-In[Axis], In[Axis] - 1);
    TensorDataRef XD = iota(In);
    Value *I = constant(TensorData::fromInt64(ElementType::I32, IdxShape, Idx));
    const TensorData *R = fold(OpId::Gather, {constant(XD), I},
                               {{"axis", Attribute::getInt(Axis - Rank)}});
    ASSERT_TRUE(R) << "case " << Case;
    Shape Out(In.begin(), In.begin() + Axis);
    Out.insert(Out.end(), IdxShape.begin(), IdxShape.end());
    Out.insert(Out.end(), In.begin() + Axis + 1, In.end());
    ASSERT_EQ(shapeOf(*R), Out);
    for (int64_t E = 0; E < numElements(Out); ++E) {
      Shape C = coordsOf(E, Out);
      Shape IdxC(C.begin() + Axis, C.begin() + Axis + IdxShape.size());
      int64_t J = Idx[indexOf(IdxC, IdxShape)];
      Shape IC(C.begin(), C.begin() + Axis);
      IC.push_back(J < 0 ? J + In[Axis] : J);
      IC.insert(IC.end(), C.begin() + Axis + IdxShape.size(), C.end());
      ASSERT_EQ(R->getInt(E), XD->getInt(indexOf(IC, In)))
          << "case " << Case << ", element " << E;
    }
  }
}

TEST_F(ConstantFoldingTest, NonConstantOperandsDoNotFold) {
  Value *In = G.addInput("in", TensorType::get(ElementType::I64, {2}));
  Value *WithDefault = G.addInput("d", TensorType::get(ElementType::I64, {2}));
  WithDefault->setDefaultData(
      TensorData::fromInt64(ElementType::I64, {2}, {1, 2}));
  EXPECT_EQ(fold(OpId::Add, {In, ints({1, 2})}), nullptr);
  EXPECT_EQ(fold(OpId::Add, {WithDefault, ints({1, 2})}), nullptr);
}
