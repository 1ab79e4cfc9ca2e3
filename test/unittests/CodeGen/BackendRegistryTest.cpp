//===- BackendRegistryTest.cpp - Every backend through one interface ------===//
//
// The registry lists every backend by name, refuses unknown names with the
// list, and each backend this build and machine can run computes what the
// reference interpreter computes on the same graph, through
// codegen::Executable only (run and runInto).
//
//===----------------------------------------------------------------------===//

#include "CPUTestGraph.h"

#include "strider/CodeGen/Registry/BackendRegistry.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace strider;
using namespace strider::codegen;
using cputest::TestGraph;

TEST(BackendRegistry, ListsEveryBackendByName) {
  std::vector<std::string> Names;
  for (const Backend *B : getBackends()) {
    Names.push_back(B->getName().str());
    EXPECT_EQ(lookupBackend(B->getName()), B);
    EXPECT_FALSE(B->getDescription().empty()) << B->getName().str();
  }
  EXPECT_EQ(Names, (std::vector<std::string>{"cpu", "cuda", "cuda-emulated",
                                             "reference"}));
  EXPECT_EQ(getBackendNames(), "cpu, cuda, cuda-emulated, reference");
  EXPECT_EQ(lookupBackend("tpu"), nullptr);
  auto Unknown = findBackend("tpu");
  ASSERT_FALSE(bool(Unknown));
  EXPECT_EQ(llvm::toString(Unknown.takeError()),
            "unknown backend 'tpu' (available: cpu, cuda, cuda-emulated, "
            "reference)");
}

TEST(BackendRegistry, OptionsABackendCannotTakeAreRefused) {
  BackendOptions Half;
  Half.Precision = "fp16";
  for (const char *Name : {"cpu", "reference"}) {
    llvm::Error E = lookupBackend(Name)->checkOptions(Half);
    ASSERT_TRUE(bool(E)) << Name;
    EXPECT_NE(llvm::toString(std::move(E)).find("compute in f32"),
              std::string::npos);
  }
  BackendOptions Threads;
  Threads.Threads = 2;
  EXPECT_FALSE(bool(lookupBackend("cpu")->checkOptions(Threads)));
  llvm::Error E = lookupBackend("reference")->checkOptions(Threads);
  ASSERT_TRUE(bool(E));
  EXPECT_NE(llvm::toString(std::move(E)).find("one thread"), std::string::npos);
  // The CPU backends' layout target is this machine's.
  const std::string Cpu = lookupBackend("cpu")->getDefaultTarget({});
  EXPECT_TRUE(Cpu == "cpu-avx512" || Cpu == "cpu-avx2") << Cpu;
  EXPECT_EQ(lookupBackend("reference")->getDefaultTarget({}), Cpu);
  EXPECT_FALSE(lookupBackend("cpu")->runsOnDevice());
  EXPECT_TRUE(lookupBackend("cuda")->runsOnDevice());
}

TEST(BackendRegistry, EveryAvailableBackendComputesTheReference) {
  // Conv + bias + relu and a Sigmoid, channels-last: a conv kernel and an
  // elementwise one on every backend; outputs read back in either layout.
  TestGraph T(7);
  Layout NHWC = Layout::getChannelsLast(4);
  Value *X = T.input({1, 3, 6, 5}, NHWC);
  Value *C = T.op(OpId::Conv, {X, T.constant({4, 3, 3, 3}), T.constant({4})},
                  {{"pads", Attribute::getInts({1, 1, 1, 1})}}, NHWC);
  Value *R = T.op(OpId::Relu, {C}, {}, NHWC);
  Value *S = T.op(OpId::Sigmoid, {R}, {}, NHWC);
  T.G.addOutput(S);
  auto Want = runtime::runReference(T.G, T.Inputs);
  ASSERT_TRUE(bool(Want)) << llvm::toString(Want.takeError());
  const runtime::Tensor &W = Want->at(S->getName());

  unsigned Ran = 0;
  for (const Backend *B : getBackends()) {
    SCOPED_TRACE(B->getName().str());
    BackendOptions Opts;
    if (llvm::Error E = B->checkAvailable(Opts)) {
      // Only the CUDA backend may be missing (no nvcc, or no GPU).
      EXPECT_TRUE(B->getName().startswith("cuda"));
      EXPECT_NE(llvm::toString(std::move(E)).find("CUDA"), std::string::npos);
      continue;
    }
    auto P = B->compile(T.G, Opts);
    ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
    Executable &Prog = **P;
    EXPECT_EQ(Prog.getNumFallbacks(), 0u);
    EXPECT_EQ(Prog.getKernelTarget().empty(), B->getName() == "reference");
    auto Got = Prog.run(T.Inputs);
    ASSERT_TRUE(bool(Got)) << llvm::toString(Got.takeError());
    // Into a caller's tensor in another layout than the graph's.
    runtime::TensorMap Into;
    Into[S->getName()] = runtime::Tensor(ElementType::F32, W.getShape());
    llvm::Error E = Prog.runInto(T.Inputs, Into);
    ASSERT_FALSE(bool(E)) << llvm::toString(std::move(E));
    for (const runtime::Tensor *G :
         {&Got->at(S->getName()), &Into.at(S->getName())}) {
      ASSERT_EQ(G->getShape(), W.getShape());
      runtime::forEachIndex(W.getShape(), [&](llvm::ArrayRef<int64_t> I) {
        EXPECT_NEAR(G->getDouble(G->getOffset(I)), W.getDouble(W.getOffset(I)),
                    1e-4);
      });
    }
    ++Ran;
  }
  // cpu and reference always run.
  EXPECT_GE(Ran, 2u);
}

TEST(BackendRegistry, EveryBackendLowersOrDeclinesEveryOp) {
  // An op added to Ops.def needs a lowering or an explicit entry in each
  // backend's list of declined ops (the CPU backend's reference-kernel
  // ops, the CUDA backend's unsupported ones).
  for (const Backend *B : getBackends())
    for (const OpInfo &Op : getAllOps())
      EXPECT_NE(B->getOpSupport(Op.Id), OpSupport::Unlisted)
          << B->getName().str() << " neither lowers nor declines "
          << Op.Name.str();
}
