//===- FoldBatchNormTest.cpp - fold-batchnorm against a reference ---------===//
//
// Random Conv and ConvTranspose shapes, groups and weight layouts: the
// folded weights and bias must equal a reference that walks the weight by
// (input group, output channel, kernel) loops and applies the
// normalization's per-channel factor.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Graph.h"
#include "strider/IR/TensorData.h"
#include "strider/IR/Verifier.h"
#include "strider/Transforms/Passes.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace strider;

namespace {

struct ConvCase {
  bool Transposed;
  int64_t Group, InPerGroup, OutPerGroup, Kernel;
  bool HasBias;
  bool ChannelsLastWeight;
};

class FoldBatchNormTest : public ::testing::TestWithParam<unsigned> {
protected:
  Graph G;
  unsigned NextName = 0;

  std::string fresh() { return "v" + std::to_string(NextName++); }

  Value *constant(TensorDataRef Data, const TensorType &Type) {
    Node *C = G.createNode(OpId::Constant, {}, {fresh()}, {Type});
    C->setAttr("value", Attribute::getTensor(Data));
    return C->getResult(0);
  }
};

std::vector<float> randomFloats(std::mt19937 &Rng, size_t N, float Lo,
                                float Hi) {
  std::uniform_real_distribution<float> D(Lo, Hi);
  std::vector<float> V(N);
  for (float &X : V)
    X = D(Rng);
  return V;
}

} // namespace

TEST_P(FoldBatchNormTest, WeightsAndBiasMatchReference) {
  std::mt19937 Rng(GetParam());
  auto Pick = [&](int64_t Lo, int64_t Hi) {
    return std::uniform_int_distribution<int64_t>(Lo, Hi)(Rng);
  };
  ConvCase C{Pick(0, 1) == 1, Pick(1, 3),      Pick(1, 3),     Pick(1, 3),
             Pick(1, 2),      Pick(0, 1) == 1, Pick(0, 1) == 1};
  int64_t In = C.Group * C.InPerGroup, Out = C.Group * C.OutPerGroup;
  // Conv: [Out, In / group, k, k]; ConvTranspose: [In, Out / group, k, k].
  std::vector<int64_t> WShape =
      C.Transposed
          ? std::vector<int64_t>{In, C.OutPerGroup, C.Kernel, C.Kernel}
          : std::vector<int64_t>{Out, C.InPerGroup, C.Kernel, C.Kernel};
  int64_t WSize = WShape[0] * WShape[1] * C.Kernel * C.Kernel;
  std::vector<float> W = randomFloats(Rng, WSize, -1, 1);
  std::vector<float> B = randomFloats(Rng, Out, -1, 1);
  std::vector<float> Gamma = randomFloats(Rng, Out, -2, 2);
  std::vector<float> Beta = randomFloats(Rng, Out, -1, 1);
  std::vector<float> Mean = randomFloats(Rng, Out, -1, 1);
  std::vector<float> Var = randomFloats(Rng, Out, 0.1f, 2);
  const float Eps = 1e-3f;

  TensorDataRef WData = TensorData::fromFloat(WShape, W);
  TensorType WType = WData->getType();
  if (C.ChannelsLastWeight) {
    WType = WType.withLayout(Layout::getChannelsLast(4));
    WData = WData->withLayout(WType.getLayout());
  }
  Value *X = G.addInput("x", TensorType::get(ElementType::F32, {1, In, 5, 5}));
  Value *WV = constant(WData, WType);
  std::vector<Value *> ConvOps = {X, WV};
  if (C.HasBias) {
    TensorDataRef BD = TensorData::fromFloat({Out}, B);
    ConvOps.push_back(constant(BD, BD->getType()));
  }
  Node *Conv = G.createNode(C.Transposed ? OpId::ConvTranspose : OpId::Conv,
                            ConvOps, {"c"}, {TensorType()});
  Conv->setAttr("group", Attribute::getInt(C.Group));
  std::vector<Value *> BNOps = {Conv->getResult(0)};
  for (const std::vector<float> *P : {&Gamma, &Beta, &Mean, &Var}) {
    TensorDataRef D = TensorData::fromFloat({Out}, *P);
    BNOps.push_back(constant(D, D->getType()));
  }
  OpId ConvOp = Conv->getOpId();
  Node *BN =
      G.createNode(OpId::BatchNormalization, BNOps, {"y"}, {TensorType()});
  BN->setAttr("epsilon", Attribute::getFloat(Eps));
  G.addOutput(BN->getResult(0));
  ASSERT_FALSE(bool(createFoldBatchNormPass()->run(G)));
  if (llvm::Error E = verifyGraph(G))
    FAIL() << llvm::toString(std::move(E));

  Node *Folded = G.getOutputs()[0]->getDefiningNode();
  ASSERT_EQ(Folded->getOpId(), ConvOp);
  const TensorData *NewW = Folded->getOperand(1)->getConstantData();
  const TensorData *NewB = Folded->getOperand(2)->getConstantData();
  ASSERT_TRUE(NewW && NewB);
  ASSERT_EQ(Folded->getOperand(1)->getType(), WType);
  TensorDataRef LogicalW = NewW->withLayout(Layout());

  auto Scale = [&](int64_t O) {
    return double(Gamma[O]) / std::sqrt(double(Var[O]) + double(Eps));
  };
  int64_t K2 = C.Kernel * C.Kernel;
  for (int64_t Grp = 0; Grp < C.Group; ++Grp)
    for (int64_t I = 0; I < C.InPerGroup; ++I)
      for (int64_t J = 0; J < C.OutPerGroup; ++J)
        for (int64_t K = 0; K < K2; ++K) {
          int64_t InC = Grp * C.InPerGroup + I, OutC = Grp * C.OutPerGroup + J;
          int64_t Index = C.Transposed ? (InC * C.OutPerGroup + J) * K2 + K
                                       : (OutC * C.InPerGroup + I) * K2 + K;
          float Want = float(Scale(OutC) * W[Index]);
          ASSERT_EQ(float(LogicalW->getDouble(Index)), Want)
              << "group " << Grp << ", in " << I << ", out " << J;
        }
  for (int64_t O = 0; O < Out; ++O) {
    double Bias = C.HasBias ? B[O] : 0.0;
    float Want = float(Scale(O) * (Bias - Mean[O]) + Beta[O]);
    EXPECT_NEAR(NewB->getDouble(O), Want, 1e-6 * (1 + std::fabs(Want)))
        << "channel " << O;
  }
}

INSTANTIATE_TEST_SUITE_P(RandomCases, FoldBatchNormTest,
                         ::testing::Range(1u, 65u));
