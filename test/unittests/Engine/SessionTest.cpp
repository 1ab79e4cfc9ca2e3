//===- SessionTest.cpp - Specializations cached by input shapes ----------===//

#include "strider/Engine/Session.h"
#include "strider/IR/Graph.h"
#include "strider/Runtime/Tensor.h"

#include "gtest/gtest.h"

using namespace strider;
using namespace strider::engine;

namespace {

runtime::TensorMap imageOf(int64_t N) {
  runtime::TensorMap M;
  M["image"] = runtime::Tensor(ElementType::F32, {N, 3, 32, 32});
  return M;
}

TEST(Session, SpecializationsAreCachedByShape) {
  auto M = Model::load(STRIDER_SAMPLE_MODEL);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  SessionOptions Opts;
  Opts.MaxSpecializations = 2;
  auto S = Session::create(*M, Opts);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  for (int64_t N : {1, 1, 2, 1, 3, 1, 2}) {
    auto Out = (*S)->run(imageOf(N));
    ASSERT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
    EXPECT_EQ(Out->at("logits").getShape(), (llvm::ArrayRef<int64_t>{N, 10}));
  }
  // 1 built; 1 hit; 2 built; 1 hit; 3 built (evicts 2); 1 hit; 2 rebuilt.
  EXPECT_EQ((*S)->getNumBuilt(), 4u);
  EXPECT_EQ((*S)->getNumCached(), 2u);
  // The model's own graph stays symbolic.
  EXPECT_TRUE((*M)->getInputs()[0]->getType().getDim(0).isSymbol());
}

TEST(Session, SpecializationIsOptimizedForTheTarget) {
  auto M = Model::load(STRIDER_SAMPLE_MODEL);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  auto S = Session::create(*M, SessionOptions());
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  auto Spec = (*S)->prepare(Session::getKey(imageOf(2)));
  ASSERT_TRUE(bool(Spec)) << llvm::toString(Spec.takeError());
  EXPECT_NE((*Spec)->Summary.find("shapes specialized (N=2); optimized for"),
            std::string::npos)
      << (*Spec)->Summary;
  EXPECT_TRUE((*Spec)->G->getInputs()[0]->getType().hasStaticShape());
  EXPECT_NE((*Spec)->Program, nullptr);
}

TEST(Session, BadOptionsAndInputs) {
  auto M = Model::load(STRIDER_SAMPLE_MODEL);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  SessionOptions Opts;
  Opts.Target = "tpu-v9";
  EXPECT_FALSE(bool(Session::create(*M, Opts)));
  Opts = SessionOptions();
  Opts.Kind = Backend::Reference;
  Opts.Threads = 2;
  auto S = Session::create(*M, Opts);
  ASSERT_FALSE(bool(S));
  EXPECT_NE(llvm::toString(S.takeError()).find("one thread"),
            std::string::npos);
  auto Good = Session::create(*M, SessionOptions());
  ASSERT_TRUE(bool(Good));
  auto Missing = (*Good)->run(runtime::TensorMap());
  ASSERT_FALSE(bool(Missing));
  EXPECT_NE(llvm::toString(Missing.takeError()).find("missing input 'image'"),
            std::string::npos);
  runtime::TensorMap Extra = imageOf(1);
  Extra["nope"] = runtime::Tensor(ElementType::F32, {1});
  auto Unknown = (*Good)->run(Extra);
  ASSERT_FALSE(bool(Unknown));
  EXPECT_NE(llvm::toString(Unknown.takeError()).find("no input 'nope'"),
            std::string::npos);
}

} // namespace
