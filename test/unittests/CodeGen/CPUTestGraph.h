//===- CPUTestGraph.h - Small graphs run by the CPU backend ------*- C++
//-*-===//
//
// The scaffolding of the CPU backend's tests: a graph under construction
// whose inputs get random data and constants random values, and checks
// that run it through the reference interpreter and compileForCPU and
// compare, asserting which kernels ran (no silent fallbacks).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_TEST_UNITTESTS_CODEGEN_CPUTESTGRAPH_H
#define STRIDER_TEST_UNITTESTS_CODEGEN_CPUTESTGRAPH_H

#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/Runtime/Reference.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace strider {
namespace cputest {

constexpr ElementType F32 = ElementType::F32;

inline int64_t product(llvm::ArrayRef<int64_t> S) {
  int64_t P = 1;
  for (int64_t D : S)
    P *= D;
  return P;
}

inline Layout layoutFor(bool ChannelsLast, unsigned Rank) {
  return ChannelsLast ? Layout::getChannelsLast(Rank) : Layout();
}

class TestGraph {
public:
  explicit TestGraph(unsigned Seed) : Rng(Seed) {}

  /// \p N values uniform in [Offset - 1, Offset + 1).
  std::vector<float> random(int64_t N, float Offset = 0.0f) {
    std::uniform_real_distribution<float> U(-1.0f, 1.0f);
    std::vector<float> V(static_cast<size_t>(N));
    for (float &X : V)
      X = Offset + U(Rng);
    return V;
  }

  Value *input(llvm::ArrayRef<int64_t> Shape, Layout L = Layout(),
               float Offset = 0.0f) {
    std::string Name = "in" + std::to_string(Inputs.size());
    Value *V = G.addInput(Name, TensorType::get(F32, Shape, L));
    runtime::Tensor T(F32, Shape);
    std::vector<float> Vals = random(product(Shape), Offset);
    std::memcpy(T.getMutableBytes().data(), Vals.data(),
                Vals.size() * sizeof(float));
    Inputs[Name] = std::move(T);
    return V;
  }

  Value *constant(llvm::ArrayRef<int64_t> Shape, std::vector<float> Vals = {}) {
    if (Vals.empty())
      Vals = random(product(Shape));
    TensorDataRef D = TensorData::fromFloat(Shape, Vals);
    Node *N = G.createNode(OpId::Constant, {}, {G.makeUniqueName("c")},
                           {D->getType()});
    N->setAttr("value", Attribute::getTensor(D));
    return N->getResult(0);
  }

  /// An i64 constant.
  Value *int64Constant(llvm::ArrayRef<int64_t> Shape,
                       llvm::ArrayRef<int64_t> Vals) {
    TensorDataRef D = TensorData::fromInt64(ElementType::I64, Shape, Vals);
    Node *N = G.createNode(OpId::Constant, {}, {G.makeUniqueName("c")},
                           {D->getType()});
    N->setAttr("value", Attribute::getTensor(D));
    return N->getResult(0);
  }

  /// A node with inferred result types (in their default layouts).
  Value *op(OpId Id, llvm::ArrayRef<Value *> Operands,
            std::vector<std::pair<std::string, Attribute>> Attrs = {},
            unsigned Results = 1) {
    std::vector<std::string> Names;
    std::vector<TensorType> Types;
    for (unsigned I = 0; I < Results; ++I) {
      Names.push_back(G.makeUniqueName("v"));
      Types.push_back(TensorType());
    }
    Node *N = G.createNode(Id, Operands, Names, Types);
    for (auto &A : Attrs)
      N->setAttr(A.first, A.second);
    llvm::SmallVector<TensorType, 2> Inferred;
    llvm::Error E = inferResultTypes(*N, Inferred);
    EXPECT_FALSE(bool(E)) << llvm::toString(std::move(E));
    for (unsigned I = 0; I < Results && I < Inferred.size(); ++I)
      N->getResult(I)->setType(Inferred[I]);
    return N->getResult(0);
  }

  /// The same, its (first) result stored in layout \p L.
  Value *op(OpId Id, llvm::ArrayRef<Value *> Operands,
            std::vector<std::pair<std::string, Attribute>> Attrs, Layout L) {
    Value *V = op(Id, Operands, std::move(Attrs));
    setLayout(V, L);
    return V;
  }

  /// Stores \p V in layout \p L.
  void setLayout(Value *V, Layout L) { V->setType(V->getType().withLayout(L)); }

  /// Runs the graph with \p Out as its output through the reference
  /// interpreter and a CPU program on \p Threads threads (twice: the arena
  /// is reused and must not leak state between runs); checks that at most
  /// \p MaxFallbacks steps fell back, that a kernel whose name contains
  /// \p ExpectKernel ran, and that results match within 1e-4 absolute +
  /// 1e-4 relative.
  void check(Value *Out, unsigned MaxFallbacks = 0, int Threads = 1,
             const std::string &ExpectKernel = "") {
    runAndCompare(Out, {Threads}, MaxFallbacks, ExpectKernel, 1e-4);
  }

  /// The same on each of \p Threads, without fallbacks, within 1e-5
  /// absolute + 1e-4 relative, and every thread count must give the same
  /// bits.
  void checkThreads(Value *Out, const std::string &Kernel,
                    std::vector<int> Threads = {1}) {
    runAndCompare(Out, Threads, 0, Kernel, 1e-5);
  }

  Graph G;
  runtime::TensorMap Inputs;
  std::mt19937 Rng;

private:
  void runAndCompare(Value *Out, const std::vector<int> &Threads,
                     unsigned MaxFallbacks, const std::string &ExpectKernel,
                     double Atol) {
    G.addOutput(Out);
    auto Want = runtime::runReference(G, Inputs);
    ASSERT_TRUE(bool(Want)) << llvm::toString(Want.takeError());
    const runtime::Tensor &W = Want->at(Out->getName());
    std::vector<uint8_t> FirstBits;
    for (int T : Threads) {
      cpu::CPUOptions Opts;
      Opts.Threads = T;
      auto Prog = cpu::compileForCPU(G, Opts);
      ASSERT_TRUE(bool(Prog)) << llvm::toString(Prog.takeError());
      unsigned Fallbacks = 0;
      std::string Kernels;
      for (const cpu::StepInfo &S : (*Prog)->getSteps()) {
        Fallbacks += S.Fallback;
        Kernels += " " + S.Kernel;
      }
      EXPECT_LE(Fallbacks, MaxFallbacks) << "kernels:" << Kernels;
      if (!ExpectKernel.empty()) {
        EXPECT_NE(Kernels.find(ExpectKernel), std::string::npos)
            << "kernels:" << Kernels;
      }
      for (int Run = 0; Run < 2; ++Run) {
        auto Got = (*Prog)->run(Inputs);
        ASSERT_TRUE(bool(Got)) << llvm::toString(Got.takeError());
        const runtime::Tensor &GT = Got->at(Out->getName());
        ASSERT_EQ(GT.getShape(), W.getShape());
        ASSERT_EQ(GT.getLayout(), W.getLayout());
        double MaxErr = 0;
        int64_t Bad = 0;
        runtime::forEachIndex(W.getShape(), [&](llvm::ArrayRef<int64_t> I) {
          double A = GT.getDouble(GT.getOffset(I));
          double B = W.getDouble(W.getOffset(I));
          // Equal infinities and NaN against NaN match.
          if (A == B || (std::isnan(A) && std::isnan(B)))
            return;
          double Err = std::fabs(A - B);
          MaxErr = std::max(MaxErr, Err);
          if (!(Err <= Atol + 1e-4 * std::fabs(B)) && Bad++ == 0)
            ADD_FAILURE() << "first mismatch: got " << A << ", want " << B;
        });
        EXPECT_EQ(Bad, 0) << "threads " << T << ", max abs error " << MaxErr
                          << ", kernels:" << Kernels;
        llvm::ArrayRef<uint8_t> Bits = GT.getBytes();
        if (FirstBits.empty())
          FirstBits.assign(Bits.begin(), Bits.end());
        else
          EXPECT_TRUE(Bits.size() == FirstBits.size() &&
                      std::memcmp(Bits.data(), FirstBits.data(), Bits.size()) ==
                          0)
              << "threads " << T << " differ from threads " << Threads[0];
      }
    }
  }
};

} // namespace cputest
} // namespace strider

#endif // STRIDER_TEST_UNITTESTS_CODEGEN_CPUTESTGRAPH_H
