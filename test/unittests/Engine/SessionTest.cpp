//===- SessionTest.cpp - Specializations cached by input shapes ----------===//

#include "strider/Engine/Session.h"
#include "strider/CodeGen/Backend.h"
#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/IR/AsmParser.h"
#include "strider/IR/Graph.h"
#include "strider/Import/ONNX.h"
#include "strider/Runtime/Tensor.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <thread>

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

TEST(Session, ProgramsOfOneSessionShareTheirArenaPool) {
  auto M = Model::load(STRIDER_SAMPLE_MODEL);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  SessionOptions RefOpts;
  RefOpts.Backend = "reference";
  auto Cpu = Session::create(*M, SessionOptions());
  auto Ref = Session::create(*M, RefOpts);
  ASSERT_TRUE(Cpu && Ref);
  // Programs for batches 1, 3 and 2 start their arenas at one address:
  // each run finds what the others left there, and must not read it.
  unsigned Seed = 0;
  for (int64_t N : {1, 3, 1, 2, 3, 1}) {
    runtime::TensorMap In = imageOf(N);
    runtime::Tensor &X = In["image"];
    ++Seed;
    for (int64_t I = 0; I < X.getNumElements(); ++I)
      X.setDouble(I, double((I * 37 + Seed * 11) % 101) / 50.0 - 1.0);
    auto Got = (*Cpu)->run(In);
    auto Want = (*Ref)->run(In);
    ASSERT_TRUE(Got && Want);
    const runtime::Tensor &G = Got->at("logits"), &W = Want->at("logits");
    ASSERT_EQ(G.getShape(), W.getShape());
    for (int64_t B = 0; B < N; ++B)
      for (int64_t K = 0; K < 10; ++K) {
        const double V = W.getDouble(W.getOffset({B, K}));
        EXPECT_NEAR(G.getDouble(G.getOffset({B, K})), V,
                    1e-4 + 1e-4 * std::fabs(V))
            << "batch " << N << " row " << B;
      }
  }
  // A program's first arena is made when it is compiled: in a reservation
  // where it fits, else an ordinary allocation.
  auto Spec = (*Cpu)->prepare(Session::getKey(imageOf(2)));
  ASSERT_TRUE(bool(Spec));
  auto Big = std::make_shared<cpu::ArenaPool>(size_t(1) << 24);
  auto Small = std::make_shared<cpu::ArenaPool>(64);
  for (const auto &Pool : {Big, Small}) {
    codegen::BackendOptions BO;
    BO.Arena = Pool;
    auto P = cpu::getBackend().compile(*(*Spec)->G, BO);
    ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
    EXPECT_EQ(Pool->getNumArenas(), 1u);
    auto Out = (*P)->run(imageOf(2));
    ASSERT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
    EXPECT_EQ(Pool->getNumArenas(), 1u); // The run reused it.
    EXPECT_EQ(Pool->getNumAcquired(), 2u);
  }
  EXPECT_GE(Big->getLargest(), size_t((*Spec)->Program->getArenaBytes()));
}

TEST(ArenaPool, RunsInFlightHoldArenasOfTheirOwn) {
  for (size_t Reserve : {size_t(1) << 20, size_t(0)}) {
    cpu::ArenaPool Pool(Reserve);
    uint8_t *A = Pool.acquire(1000);
    uint8_t *B = Pool.acquire(1000);
    ASSERT_TRUE(A && B);
    EXPECT_NE(A, B);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(A) % 64, 0u);
    A[999] = 1;
    B[999] = 2;
    Pool.release(A);
    // A free arena is handed out again, with what was left in it.
    uint8_t *C = Pool.acquire(500);
    EXPECT_EQ(C, A);
    EXPECT_EQ(C[999], 1);
    Pool.release(B);
    // A larger request grows a free arena rather than making another.
    uint8_t *D = Pool.acquire(200000);
    ASSERT_NE(D, nullptr);
    D[199999] = 3;
    EXPECT_EQ(Pool.getNumArenas(), 2u);
    EXPECT_EQ(Pool.getLargest(), 200000u);
    Pool.release(C);
    Pool.release(D);
    EXPECT_EQ(Pool.getNumAcquired(), 4u);
  }
}

/// Inputs of batch \p N whose values depend on \p Seed.
runtime::TensorMap seededImage(int64_t N, unsigned Seed) {
  runtime::TensorMap In = imageOf(N);
  runtime::Tensor &X = In["image"];
  for (int64_t I = 0; I < X.getNumElements(); ++I)
    X.setDouble(I, double((I * 37 + Seed * 11) % 101) / 50.0 - 1.0);
  return In;
}

TEST(Session, ConcurrentRunsOfOneSessionMatchSerialRuns) {
  auto M = Model::load(STRIDER_SAMPLE_MODEL);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  // What each (batch, seed) computes, one run at a time.
  const int64_t Batches[] = {1, 2, 3};
  const unsigned Seeds = 4;
  auto Serial = Session::create(*M, SessionOptions());
  ASSERT_TRUE(bool(Serial)) << llvm::toString(Serial.takeError());
  std::map<std::pair<int64_t, unsigned>, runtime::Tensor> Want;
  for (int64_t N : Batches)
    for (unsigned Seed = 0; Seed < Seeds; ++Seed) {
      auto Out = (*Serial)->run(seededImage(N, Seed));
      ASSERT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
      Want[{N, Seed}] = Out->at("logits");
    }
  // Four threads on one session (kernels on 1 and on 2 threads), over
  // three shapes with room for two: runs overlap, builds overlap runs, and
  // specializations are evicted while other threads may be running them.
  for (int Threads : {1, 2}) {
    SessionOptions Opts;
    Opts.Threads = Threads;
    Opts.MaxSpecializations = 2;
    auto S = Session::create(*M, Opts);
    ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
    std::atomic<int> Mismatches{0}, Failures{0};
    std::vector<std::thread> Callers;
    const int Rounds = 12;
    for (int T = 0; T < 4; ++T)
      Callers.emplace_back([&, T] {
        for (int R = 0; R < Rounds; ++R) {
          const int64_t N = Batches[(T + R) % 3];
          const unsigned Seed = unsigned(T + 3 * R) % Seeds;
          runtime::TensorMap In = seededImage(N, Seed);
          auto Out = (*S)->run(In);
          if (!Out) {
            llvm::consumeError(Out.takeError());
            ++Failures;
            continue;
          }
          const runtime::Tensor &G = Out->at("logits"), &W = Want.at({N, Seed});
          if (G.getShape() != W.getShape() ||
              std::memcmp(G.getBytes().data(), W.getBytes().data(),
                          W.getBytes().size()) != 0)
            ++Mismatches;
        }
      });
    for (std::thread &T : Callers)
      T.join();
    EXPECT_EQ(Failures.load(), 0) << Threads << " kernel thread(s)";
    EXPECT_EQ(Mismatches.load(), 0) << Threads << " kernel thread(s)";
    const Session::CacheStats C = (*S)->getCacheStats();
    EXPECT_EQ(C.Hits + C.Builds, uint64_t(4 * Rounds));
    EXPECT_LE((*S)->getNumCached(), 2u);
    EXPECT_EQ(C.Builds - C.Evictions, (*S)->getNumCached());
  }
}

TEST(Session, ThreadsWantingOneNewShapeWaitForOneBuild) {
  auto M = Model::load(STRIDER_SAMPLE_MODEL);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  auto S = Session::create(*M, SessionOptions());
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  std::vector<std::thread> Callers;
  std::atomic<int> Failures{0};
  for (int T = 0; T < 4; ++T)
    Callers.emplace_back([&] {
      auto Out = (*S)->run(imageOf(5));
      if (!Out) {
        llvm::consumeError(Out.takeError());
        ++Failures;
      }
    });
  for (std::thread &T : Callers)
    T.join();
  EXPECT_EQ(Failures.load(), 0);
  EXPECT_EQ((*S)->getNumBuilt(), 1u);
  EXPECT_EQ((*S)->getCacheStats().Hits, 3u);
}

TEST(Session, SpecializationsShareTheModelsPackedWeights) {
  auto M = Model::load(STRIDER_SAMPLE_MODEL);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  auto *Store =
      dynamic_cast<const cpu::SharedDerivedStore *>((*M)->getDerived().get());
  ASSERT_NE(Store, nullptr);
  auto S = Session::create(*M, SessionOptions());
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  auto First = (*S)->run(imageOf(1));
  ASSERT_TRUE(bool(First)) << llvm::toString(First.takeError());
  const uint64_t Packed = Store->getNumAdded();
  EXPECT_GT(Packed, 0u);
  EXPECT_EQ(Store->getNumFound(), 0u);
  EXPECT_GT(Store->getBytes(), 0u);
  // Another batch size packs nothing again, nor does another session.
  ASSERT_TRUE(bool((*S)->run(imageOf(2))));
  EXPECT_EQ(Store->getNumAdded(), Packed);
  EXPECT_EQ(Store->getNumFound(), Packed);
  auto Other = Session::create(*M, SessionOptions());
  ASSERT_TRUE(bool(Other)) << llvm::toString(Other.takeError());
  auto Again = (*Other)->run(imageOf(1));
  ASSERT_TRUE(bool(Again)) << llvm::toString(Again.takeError());
  EXPECT_EQ(Store->getNumAdded(), Packed);
  EXPECT_EQ(Store->getNumFound(), 2 * Packed);
  // What the reused weights compute is what the first program computed.
  const runtime::Tensor &A = First->at("logits"), &B = Again->at("logits");
  ASSERT_EQ(A.getShape(), B.getShape());
  for (int64_t I = 0; I < A.getNumElements(); ++I)
    EXPECT_EQ(A.getDouble(A.getOffset({0, I})),
              B.getDouble(B.getOffset({0, I})));
}

TEST(Session, InputRangesOptimizeAnOnnxModelOnce) {
  auto M = Model::load(STRIDER_SAMPLE_MODEL);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  SessionOptions Opts;
  Opts.InputRanges = {{"image", 0, 1, 3}};
  auto S = Session::create(*M, Opts);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  auto PerShape = Session::create(*M, SessionOptions());
  ASSERT_TRUE(bool(PerShape)) << llvm::toString(PerShape.takeError());
  for (int64_t N : {2, 1, 3}) {
    runtime::TensorMap In = imageOf(N);
    runtime::Tensor &X = In["image"];
    for (int64_t I = 0; I < X.getNumElements(); ++I)
      X.setDouble(I, double((I * 37) % 101) / 50.0 - 1.0);
    auto Spec = (*S)->prepare(Session::getKey(In));
    ASSERT_TRUE(bool(Spec)) << llvm::toString(Spec.takeError());
    EXPECT_NE(
        (*Spec)->Summary.find("layouts as optimized for the input ranges"),
        std::string::npos)
        << (*Spec)->Summary;
    auto Got = (*S)->run(**Spec, In);
    auto Want = (*PerShape)->run(In);
    ASSERT_TRUE(bool(Got) && bool(Want));
    const runtime::Tensor &A = Got->at("logits"), &B = Want->at("logits");
    ASSERT_EQ(A.getShape(), B.getShape());
    for (int64_t I = 0; I < N; ++I)
      for (int64_t K = 0; K < 10; ++K)
        EXPECT_NEAR(A.getDouble(A.getOffset({I, K})),
                    B.getDouble(B.getOffset({I, K})), 1e-4);
  }
  auto Outside = (*S)->run(imageOf(4));
  ASSERT_FALSE(bool(Outside));
  EXPECT_NE(llvm::toString(Outside.takeError())
                .find("input 'image' dim 0 is 4, outside the range 1..3 the "
                      "session allows"),
            std::string::npos);
  // A range must name a dynamic dim of an input.
  Opts.InputRanges = {{"image", 2, 1, 3}};
  auto Bad = Session::create(*M, Opts);
  ASSERT_FALSE(bool(Bad));
  EXPECT_NE(llvm::toString(Bad.takeError()).find("dim 2 is static"),
            std::string::npos);
}

/// \p X filled with a pattern of \p Seed.
void fillImage(runtime::Tensor &X, unsigned Seed) {
  for (int64_t I = 0; I < X.getNumElements(); ++I)
    X.setDouble(I, double((I * 37 + Seed * 11) % 101) / 50.0 - 1.0);
}

TEST(Session, ShapesOfOneSizeClassShareOneOptimizedGraph) {
  auto M = Model::load(STRIDER_SAMPLE_MODEL);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  auto S = Session::create(*M, SessionOptions());
  SessionOptions ExactOpts, RefOpts;
  ExactOpts.OptimizePerShape = true;
  RefOpts.Backend = "reference";
  auto Exact = Session::create(*M, ExactOpts);
  auto Ref = Session::create(*M, RefOpts);
  ASSERT_TRUE(S && Exact && Ref);
  // Batches 3 and 4 round up to the class of 4, 2 is its own class.
  std::map<int64_t, runtime::TensorMap> Outputs;
  for (int64_t N : {3, 4, 2}) {
    runtime::TensorMap In = imageOf(N);
    fillImage(In["image"], unsigned(N));
    auto Spec = (*S)->prepare(Session::getKey(In));
    ASSERT_TRUE(bool(Spec)) << llvm::toString(Spec.takeError());
    const std::string Class = N == 2 ? "image=2x3x32x32" : "image=4x3x32x32";
    EXPECT_NE((*Spec)->Summary.find("layouts as optimized for the size class " +
                                    Class),
              std::string::npos)
        << (*Spec)->Summary;
    auto Got = (*S)->run(**Spec, In);
    auto PerShape = (*Exact)->run(In);
    auto Want = (*Ref)->run(In);
    ASSERT_TRUE(Got && PerShape && Want);
    const runtime::Tensor &A = Got->at("logits"), &B = PerShape->at("logits"),
                          &W = Want->at("logits");
    ASSERT_EQ(A.getShape(), W.getShape());
    for (int64_t I = 0; I < N; ++I)
      for (int64_t K = 0; K < 10; ++K) {
        const double V = W.getDouble(W.getOffset({I, K}));
        EXPECT_NEAR(A.getDouble(A.getOffset({I, K})), V,
                    1e-4 + 1e-4 * std::fabs(V));
        EXPECT_NEAR(B.getDouble(B.getOffset({I, K})), V,
                    1e-4 + 1e-4 * std::fabs(V));
      }
    Outputs[N] = std::move(*Got);
  }
  Session::CacheStats C = (*S)->getCacheStats();
  EXPECT_EQ(C.Builds, 3u);
  EXPECT_EQ(C.SizeClasses, 2u);
  EXPECT_EQ(C.FailedSizeClasses, 0u);
  // A session that never ran batch 3 builds batch 4 the same program:
  // what a shape computes does not depend on the shapes run before it.
  auto Fresh = Session::create(*M, SessionOptions());
  ASSERT_TRUE(bool(Fresh)) << llvm::toString(Fresh.takeError());
  runtime::TensorMap In = imageOf(4);
  fillImage(In["image"], 4);
  auto Again = (*Fresh)->run(In);
  ASSERT_TRUE(bool(Again)) << llvm::toString(Again.takeError());
  const runtime::Tensor &A = Outputs[4].at("logits"), &B = Again->at("logits");
  for (int64_t I = 0; I < 4; ++I)
    for (int64_t K = 0; K < 10; ++K)
      EXPECT_EQ(A.getDouble(A.getOffset({I, K})),
                B.getDouble(B.getOffset({I, K})));
  // Per shape: every build optimizes, no class graph is made.
  EXPECT_EQ((*Exact)->getCacheStats().SizeClasses, 0u);
}

// The model needs c's size to be a's plus b's, which sizes rounded up to
// their classes need not be (3 + 5 = 8, but 4 + 8 != 8).
constexpr const char *ConcatThenAdd = R"(
graph @g(%a: tensor<1 x A x f32>, %b: tensor<1 x B x f32>, %c: tensor<1 x C x f32>) {
  %j = Concat(%a, %b) {axis = 1} : tensor<1 x ? x f32>
  %y = Add(%j, %c) : tensor<1 x ? x f32>
  return %y
}
)";

TEST(Session, ASizeClassTheModelRejectsIsOptimizedShapeByShape) {
  auto G = parseGraph(ConcatThenAdd, "concat-then-add.lir");
  ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
  llvm::SmallString<128> Path;
  ASSERT_FALSE(
      llvm::sys::fs::createTemporaryFile("concat-then-add", "onnx", Path));
  ASSERT_FALSE(bool(exportONNXFile(**G, Path)));
  auto M = Model::load(Path);
  llvm::sys::fs::remove(Path);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_TRUE((*M)->isFromOnnx());
  auto S = Session::create(*M, SessionOptions());
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  auto Feeds = [](int64_t A, int64_t B) {
    runtime::TensorMap T;
    T["a"] = runtime::Tensor(ElementType::F32, {1, A});
    T["b"] = runtime::Tensor(ElementType::F32, {1, B});
    T["c"] = runtime::Tensor(ElementType::F32, {1, A + B});
    for (int64_t I = 0; I < A + B; ++I) {
      (I < A ? T["a"] : T["b"]).setDouble(I < A ? I : I - A, double(I));
      T["c"].setDouble(I, 100.0);
    }
    return T;
  };
  for (auto [A, B] : {std::pair<int64_t, int64_t>{3, 5}, {4, 4}}) {
    runtime::TensorMap In = Feeds(A, B);
    auto Spec = (*S)->prepare(Session::getKey(In));
    ASSERT_TRUE(bool(Spec)) << llvm::toString(Spec.takeError());
    const std::string &Did = (*Spec)->Summary;
    if (A == 3) // Classes 4, 8 and 8: the model rejects them.
      EXPECT_NE(Did.find("(for its shape: "), std::string::npos) << Did;
    else // Classes 4, 4 and 8: accepted.
      EXPECT_NE(Did.find("size class a=1x4, b=1x4, c=1x8"), std::string::npos)
          << Did;
    auto Out = (*S)->run(**Spec, In);
    ASSERT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
    const runtime::Tensor &Y = Out->at("y");
    ASSERT_EQ(Y.getNumElements(), A + B);
    for (int64_t I = 0; I < A + B; ++I)
      EXPECT_EQ(Y.getDouble(Y.getOffset({0, I})), 100.0 + double(I));
  }
  Session::CacheStats C = (*S)->getCacheStats();
  EXPECT_EQ(C.SizeClasses, 2u);
  EXPECT_EQ(C.FailedSizeClasses, 1u);
  // Shapes the model itself rejects: one error, located at the node, the
  // file named once.
  runtime::TensorMap Bad = Feeds(2, 2);
  Bad["c"] = runtime::Tensor(ElementType::F32, {1, 5});
  auto Out = (*S)->run(Bad);
  ASSERT_FALSE(bool(Out));
  const std::string Msg = llvm::toString(Out.takeError());
  EXPECT_EQ(Msg.find(std::string(Path)), 0u) << Msg;
  EXPECT_EQ(Msg.find(std::string(Path), 1), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("(Add)"), std::string::npos) << Msg;
}

TEST(Session, TheModelIsPreparedOnce) {
  auto M = Model::load(STRIDER_SAMPLE_MODEL);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  // The sample's batch norms are folded into its convs in the prepared
  // graph; the model's own graph keeps them (sessions without
  // optimization run it as imported).
  auto Count = [](const Graph &G, OpId Id) {
    unsigned C = 0;
    for (const Node *N : G.nodes())
      C += N->getOpId() == Id;
    return C;
  };
  const Graph &P = (*M)->getPreparedGraph();
  EXPECT_GT(Count((*M)->getGraph(), OpId::BatchNormalization), 0u);
  EXPECT_EQ(Count(P, OpId::BatchNormalization), 0u);
  EXPECT_EQ(&P, &(*M)->getPreparedGraph());
  EXPECT_TRUE(P.getInputs()[0]->getType().getDim(0).isSymbol());
}

TEST(Session, SpecializationIsOptimizedForTheTarget) {
  auto M = Model::load(STRIDER_SAMPLE_MODEL);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  SessionOptions Opts;
  Opts.OptimizePerShape = true;
  auto S = Session::create(*M, Opts);
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
  Opts.Backend = "reference";
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

namespace {

/// y = sr == 16000 ? Relu(x) : Neg(x): `sr` decides an If.
constexpr const char *IfOnRate = R"(
graph @g(%sr: tensor<i64>, %x: tensor<N x f32>) {
  %k = Constant() {value = dense<16000> : tensor<i64>} : tensor<i64>
  %c = Equal(%sr, %k) : tensor<bool>
  %y = If(%c, %x) {else_branch = graph @else(%x: tensor<N x f32>) {
    %n = Neg(%x) : tensor<N x f32>
    return %n
  }, then_branch = graph @then(%x: tensor<N x f32>) {
    %r = Relu(%x) : tensor<N x f32>
    return %r
  }} : tensor<N x f32>
  return %y
}
)";

runtime::TensorMap rateFeeds(int64_t Rate) {
  runtime::TensorMap M;
  M["sr"] = runtime::Tensor(ElementType::I64, {});
  M["sr"].setInt(0, Rate);
  M["x"] = runtime::Tensor(ElementType::F32, {2});
  M["x"].setDouble(0, -1.0);
  M["x"].setDouble(1, 2.0);
  return M;
}

std::string writeTempLir(const char *Text) {
  llvm::SmallString<128> Path;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("if-on-rate", "lir", Path));
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC);
  EXPECT_FALSE(EC);
  OS << Text;
  return Path.str().str();
}

// Each specialization folds the ConstantOfShape into a constant of its
// own, N x 64 floats.
const char *ConstantPerShape = R"(
graph @g(%x: tensor<N x 64 x f32>) {
  %s = Shape(%x) : tensor<2 x i64>
  %c = ConstantOfShape(%s) {value = dense<7.0> : tensor<1 x f32>} : tensor<N x 64 x f32>
  %y = Add(%x, %c) : tensor<N x 64 x f32>
  return %y
}
)";

TEST(Session, TheCacheIsBoundedByTheMemoryItsProgramsHold) {
  const std::string Path = writeTempLir(ConstantPerShape);
  auto M = Model::load(Path);
  llvm::sys::fs::remove(Path);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  auto In = [](int64_t N) {
    runtime::TensorMap T;
    T["x"] = runtime::Tensor(ElementType::F32, {N, 64});
    return T;
  };
  SessionOptions Opts;
  Opts.MaxCacheBytes = 600; // Batches 1 and 2 (256 + 512 bytes) do not fit.
  auto S = Session::create(*M, Opts);
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  for (int64_t N : {1, 2, 2, 1}) {
    auto Out = (*S)->run(In(N));
    ASSERT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
    EXPECT_EQ(Out->at("y").getDouble(0), 7.0);
  }
  Session::CacheStats C = (*S)->getCacheStats();
  EXPECT_EQ(C.Builds, 3u);
  EXPECT_EQ(C.Hits, 1u);
  EXPECT_EQ(C.Evictions, 2u);
  EXPECT_EQ((*S)->getNumCached(), 1u);
  auto Last = (*S)->prepare(Session::getKey(In(1)));
  ASSERT_TRUE(bool(Last));
  EXPECT_EQ((*Last)->OwnedBytes, 256);
  EXPECT_EQ(C.CachedBytes, 256);
  EXPECT_GT(C.BuildSeconds, 0.0);
  // The sample model's programs make no constants of their own: many fit
  // in a small budget (their activation arenas are the session's pool).
  auto Sample = Model::load(STRIDER_SAMPLE_MODEL);
  ASSERT_TRUE(bool(Sample)) << llvm::toString(Sample.takeError());
  auto T = Session::create(*Sample, Opts);
  ASSERT_TRUE(bool(T)) << llvm::toString(T.takeError());
  for (int64_t N : {1, 2, 3})
    ASSERT_TRUE(bool((*T)->run(imageOf(N))));
  EXPECT_EQ((*T)->getCacheStats().Evictions, 0u);
  EXPECT_EQ((*T)->getNumCached(), 3u);
}

TEST(Session, ControlInputsKeySpecializationsByValue) {
  const std::string Path = writeTempLir(IfOnRate);
  auto M = Model::load(Path);
  llvm::sys::fs::remove(Path);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  ASSERT_EQ((*M)->getControlInputs().size(), 1u);
  EXPECT_EQ((*M)->getControlInputs()[0]->getName(), "sr");
  auto S = Session::create(*M, SessionOptions());
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());

  // Each rate its own program, cached: 16000 takes Relu, others Neg.
  for (int64_t Rate : {16000, 8000, 16000, 8000}) {
    auto Out = (*S)->run(rateFeeds(Rate));
    ASSERT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
    const runtime::Tensor &Y = Out->at("y");
    EXPECT_EQ(Y.getDouble(0), Rate == 16000 ? 0.0 : 1.0);
    EXPECT_EQ(Y.getDouble(1), Rate == 16000 ? 2.0 : -2.0);
  }
  EXPECT_EQ((*S)->getNumBuilt(), 2u);

  // The If is gone from the program's graph; sr is no longer an input.
  auto Spec = (*S)->prepare(Session::getKey(rateFeeds(8000)),
                            (*S)->getValueKey(rateFeeds(8000)));
  ASSERT_TRUE(bool(Spec)) << llvm::toString(Spec.takeError());
  for (const Node *N : (*Spec)->G->nodes())
    EXPECT_NE(N->getOpId(), OpId::If);
  ASSERT_EQ((*Spec)->G->getInputs().size(), 1u);
  EXPECT_EQ((*Spec)->G->getInputs()[0]->getName(), "x");
  EXPECT_NE((*Spec)->Summary.find("inputs bound (sr=8000)"), std::string::npos)
      << (*Spec)->Summary;

  // Running it with another rate would take the wrong branch: refused.
  auto Wrong = (*S)->run(**Spec, rateFeeds(16000));
  ASSERT_FALSE(bool(Wrong));
  EXPECT_NE(llvm::toString(Wrong.takeError())
                .find("input 'sr' differs from the value this "
                      "specialization was built for"),
            std::string::npos);

  // Shapes alone cannot compile it.
  auto NoValue = (*S)->prepare(Session::getKey(rateFeeds(8000)));
  ASSERT_FALSE(bool(NoValue));
  EXPECT_NE(llvm::toString(NoValue.takeError())
                .find("input 'sr' decides which branch an If takes"),
            std::string::npos);
}

TEST(Session, RunIntoWritesTheCallersBuffersOnEveryBackend) {
  // The If model's bound input goes as a view; y lands in the caller's
  // buffer, in row-major or a view of it reversed, on each host backend.
  const std::string Path = writeTempLir(IfOnRate);
  auto M = Model::load(Path);
  llvm::sys::fs::remove(Path);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  for (const char *B : {"cpu", "reference"}) {
    SessionOptions Opts;
    Opts.Backend = B;
    auto S = Session::create(*M, Opts);
    ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
    runtime::TensorMap Feeds = rateFeeds(8000);
    auto Spec = (*S)->prepare(Session::getKey(Feeds), (*S)->getValueKey(Feeds));
    ASSERT_TRUE(bool(Spec)) << llvm::toString(Spec.takeError());
    float Buf[2] = {7.0f, 7.0f};
    runtime::TensorMap Out;
    Out["y"] = runtime::Tensor::view(ElementType::F32, {2}, Layout(),
                                     reinterpret_cast<uint8_t *>(Buf));
    ASSERT_FALSE(bool((*S)->runInto(**Spec, Feeds, Out)));
    EXPECT_EQ(Buf[0], 1.0f);
    EXPECT_EQ(Buf[1], -2.0f);

    // A missing output and one of another shape are errors; the buffer
    // is untouched.
    runtime::TensorMap None;
    llvm::Error Missing = (*S)->runInto(**Spec, Feeds, None);
    ASSERT_TRUE(bool(Missing));
    EXPECT_NE(llvm::toString(std::move(Missing)).find("missing output 'y'"),
              std::string::npos);
    runtime::TensorMap Short;
    Short["y"] = runtime::Tensor::view(ElementType::F32, {1}, Layout(),
                                       reinterpret_cast<uint8_t *>(Buf));
    llvm::Error Shape = (*S)->runInto(**Spec, Feeds, Short);
    ASSERT_TRUE(bool(Shape));
    EXPECT_NE(llvm::toString(std::move(Shape)).find("output 'y' has type"),
              std::string::npos);
  }
}

TEST(Session, RunIntoConvertsToTheCallersLayout) {
  // A 2-D output given transposed (a view in the reversed dim order).
  auto M = Model::load(STRIDER_SAMPLE_MODEL);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  auto S = Session::create(*M, SessionOptions());
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  runtime::TensorMap Feeds = imageOf(2);
  for (int64_t I = 0; I < Feeds["image"].getNumElements(); ++I)
    Feeds["image"].setDouble(I, double(I % 13) / 13.0 - 0.5);
  auto Want = (*S)->run(Feeds);
  ASSERT_TRUE(bool(Want)) << llvm::toString(Want.takeError());
  auto Spec = (*S)->prepare(Session::getKey(Feeds));
  ASSERT_TRUE(bool(Spec)) << llvm::toString(Spec.takeError());
  std::vector<float> Buf(20, 0.0f);
  runtime::TensorMap Out;
  Out["logits"] =
      runtime::Tensor::view(ElementType::F32, {2, 10}, Layout({1, 0}),
                            reinterpret_cast<uint8_t *>(Buf.data()));
  ASSERT_FALSE(bool((*S)->runInto(**Spec, Feeds, Out)));
  const runtime::Tensor &L = Want->at("logits");
  for (int64_t N = 0; N < 2; ++N)
    for (int64_t K = 0; K < 10; ++K)
      EXPECT_EQ(Buf[size_t(K * 2 + N)],
                float(L.getDouble(L.getOffset({N, K}))));
}

} // namespace
