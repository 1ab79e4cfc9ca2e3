//===- Tuning.cpp - Timing the CPU backend's kernels for layout choice ----===//
//
// Each measurement is a one-op program (a Conv with the graph's
// attributes, or a Relayout) compiled by the CPU backend and run with
// profiling on: the time counted is the sum of its steps, so copying
// inputs in and outputs out of the arena is not part of it. A sample
// repeats the program for a minimum time; the variants of one conv are
// sampled in turn, round after round, and each one's median counts.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/CPU/Tuning.h"

#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/Layout/CostModel.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

using namespace strider;
using namespace strider::cpu;
using layout::ConvConfig;
using layout::ConvTiming;

namespace {

std::vector<float> randomFloats(int64_t N, std::mt19937 &Rng) {
  std::uniform_real_distribution<float> U(-1.0f, 1.0f);
  std::vector<float> V(size_t(std::max<int64_t>(N, 0)));
  for (float &X : V)
    X = U(Rng);
  return V;
}

int64_t product(llvm::ArrayRef<int64_t> S) {
  int64_t P = 1;
  for (int64_t D : S)
    P *= D;
  return P;
}

Layout labelLayout(bool ChannelsLast, unsigned Rank) {
  return ChannelsLast ? Layout::getChannelsLast(Rank) : Layout();
}

/// A one-op program ready to be timed, with the graph it was compiled from
/// (which its fallback steps would read) and its input.
struct Candidate {
  std::unique_ptr<Graph> G;
  std::unique_ptr<Program> Prog;
  runtime::TensorMap Inputs;
  unsigned Reps = 1;
  std::vector<double> Samples;
};

/// Compiles \p G, runs it once on random inputs and sizes its samples; a
/// null program when a step would fall back to a reference kernel (the
/// backend has no such kernel).
llvm::Error prepare(std::unique_ptr<Graph> G, const TuneOptions &Opts,
                    std::mt19937 &Rng, Candidate &C) {
  C.G = std::move(G);
  CPUOptions CO;
  CO.Threads = Opts.Threads;
  auto Prog = compileForCPU(*C.G, CO);
  if (!Prog)
    return Prog.takeError();
  for (const StepInfo &S : (*Prog)->getSteps())
    if (S.Fallback)
      return llvm::Error::success();
  for (const Value *In : C.G->getInputs()) {
    auto Shape = In->getType().getStaticShape();
    runtime::Tensor X(ElementType::F32, Shape);
    std::vector<float> Data = randomFloats(product(Shape), Rng);
    std::memcpy(X.getMutableBytes().data(), Data.data(),
                Data.size() * sizeof(float));
    C.Inputs[In->getName()] = std::move(X);
  }
  // One warm-up run, which also sizes a sample.
  auto Start = std::chrono::steady_clock::now();
  if (auto R = (*Prog)->run(C.Inputs); !R)
    return R.takeError();
  double Once =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  C.Reps = unsigned(
      std::clamp(Opts.SampleSeconds / std::max(Once, 1e-7), 1.0, 10000.0));
  C.Prog = std::move(*Prog);
  return llvm::Error::success();
}

/// Times the candidates in rounds, one sample of each per round (so that
/// a change of the machine's state, such as a neighbour's load or the
/// clock, shifts them all alike), and returns each one's median sample in
/// nanoseconds per call, or -1 for a candidate without a program. A
/// sample is the sum of the program's kernel steps, so copying inputs in
/// and outputs out is not counted.
llvm::Expected<std::vector<double>> timeInterleaved(std::vector<Candidate> &Cs,
                                                    const TuneOptions &Opts) {
  for (unsigned Round = 0; Round < std::max(1u, Opts.Samples); ++Round)
    for (Candidate &C : Cs) {
      if (!C.Prog)
        continue;
      C.Prog->setProfiling(true);
      for (unsigned I = 0; I < C.Reps; ++I)
        if (auto R = C.Prog->run(C.Inputs); !R)
          return R.takeError();
      double Sum = 0;
      for (double Sec : C.Prog->getStepSeconds())
        Sum += Sec;
      C.Samples.push_back(Sum / C.Prog->getProfiledRuns() * 1e9);
    }
  std::vector<double> Medians;
  for (Candidate &C : Cs) {
    if (C.Samples.empty()) {
      Medians.push_back(-1.0);
      continue;
    }
    std::sort(C.Samples.begin(), C.Samples.end());
    Medians.push_back(C.Samples[C.Samples.size() / 2]);
  }
  return Medians;
}

/// A graph of one Conv of config \p C with \p N's attributes, reading and
/// writing the given layouts, with the residual Add the backend fuses into
/// it when the model has one.
std::unique_ptr<Graph> makeConvGraph(const Node &N, const ConvConfig &C,
                                     bool InLast, bool OutLast,
                                     std::mt19937 &Rng) {
  auto G = std::make_unique<Graph>("tune");
  unsigned Rank = unsigned(C.X.size());
  Value *X = G->addInput(
      "x", TensorType::get(ElementType::F32, C.X, labelLayout(InLast, Rank)));
  std::vector<Value *> Operands = {X};
  auto AddConstant = [&](llvm::ArrayRef<int64_t> Shape) {
    TensorDataRef D =
        TensorData::fromFloat(Shape, randomFloats(product(Shape), Rng));
    Node *K = G->createNode(OpId::Constant, {}, {G->makeUniqueName("c")},
                            {D->getType()});
    K->setAttr("value", Attribute::getTensor(D));
    Operands.push_back(K->getResult(0));
  };
  AddConstant(C.W);
  if (C.HasBias)
    AddConstant({C.Y[1]});
  Node *Conv = G->createNode(OpId::Conv, Operands, {"y"}, {TensorType()});
  for (const NamedAttribute &A : N.getAttrs())
    Conv->setAttr(A.Name, A.Value);
  llvm::SmallVector<TensorType, 1> Types;
  if (llvm::Error E = inferResultTypes(*Conv, Types)) {
    llvm::consumeError(std::move(E));
    return nullptr;
  }
  const Layout Out = labelLayout(OutLast, Rank);
  Value *Y = Conv->getResult(0);
  Y->setType(Types[0].withLayout(Out));
  if (C.HasResidual) {
    Value *R = G->addInput("r", Y->getType());
    Y = G->createNode(OpId::Add, {Y, R}, {"sum"}, {Y->getType()})->getResult(0);
  }
  G->addOutput(Y);
  return G;
}

} // namespace

llvm::Error cpu::tuneGraph(const Graph &G, const layout::DimBindings &Dims,
                           const TuneOptions &Opts, layout::TuningTable &Table,
                           TuneStats *Stats) {
  auto Start = std::chrono::steady_clock::now();
  TuneStats S;
  std::mt19937 Rng(42);
  auto TimeRelayout = [&](llvm::ArrayRef<int64_t> Shape) -> llvm::Error {
    TensorType Ty = TensorType::get(ElementType::F32, Shape);
    std::string Key = layout::TuningTable::getRelayoutKey(Ty, Dims);
    if (Table.lookupRelayout(Key) >= 0 ||
        areLayoutsEquivalent(Ty.getShape(), Layout(),
                             Layout::getChannelsLast(Ty.getRank()), Dims))
      return llvm::Error::success();
    std::vector<Candidate> Cs(2);
    for (bool ToLast : {true, false}) {
      auto R = std::make_unique<Graph>("tune");
      unsigned Rank = Ty.getRank();
      Value *X = R->addInput("x", Ty.withLayout(labelLayout(!ToLast, Rank)));
      Node *N = R->createNode(OpId::Relayout, {X}, {"y"},
                              {Ty.withLayout(labelLayout(ToLast, Rank))});
      R->addOutput(N->getResult(0));
      if (llvm::Error E = prepare(std::move(R), Opts, Rng, Cs[ToLast]))
        return E;
    }
    auto Ns = timeInterleaved(Cs, Opts);
    if (!Ns)
      return Ns.takeError();
    if ((*Ns)[0] < 0 || (*Ns)[1] < 0)
      return llvm::Error::success(); // No relayout kernel: keep estimates.
    double Sum = (*Ns)[0] + (*Ns)[1];
    Table.setRelayout(Key, Sum / 2);
    ++S.MeasuredRelayouts;
    return llvm::Error::success();
  };

  for (const Node *N : G.nodes()) {
    if (N->isOpaque() || N->getOpId() != OpId::Conv)
      continue;
    ConvConfig C;
    if (!ConvConfig::fromNode(*N, Dims, C) ||
        N->getOperand(0)->getType().getElementType() != ElementType::F32) {
      ++S.SkippedConvs;
      continue;
    }
    ++S.Convs;
    std::string Key = C.getKey();
    if (Table.lookupConv(Key))
      continue;
    static constexpr bool Variants[layout::NumConvVariants][2] = {
        {false, false}, {true, true}, {false, true}, {true, false}};
    std::vector<Candidate> Cs(layout::NumConvVariants);
    bool Built = true;
    for (unsigned V = 0; V < layout::NumConvVariants && Built; ++V) {
      std::unique_ptr<Graph> CG =
          makeConvGraph(*N, C, Variants[V][0], Variants[V][1], Rng);
      Built = CG != nullptr;
      if (Built)
        if (llvm::Error E = prepare(std::move(CG), Opts, Rng, Cs[V]))
          return makeNodeError(*N, "tuning: " + llvm::toString(std::move(E)));
    }
    if (!Built)
      continue; // Not a conv the backend can build: it keeps its estimate.
    auto Ns = timeInterleaved(Cs, Opts);
    if (!Ns)
      return makeNodeError(*N, "tuning: " + llvm::toString(Ns.takeError()));
    ConvTiming Timing;
    for (unsigned V = 0; V < layout::NumConvVariants; ++V)
      Timing.Ns[V] = (*Ns)[V];
    Table.setConv(C, Timing);
    ++S.MeasuredConvs;
    if (Opts.Log) {
      *Opts.Log << "tune: " << N->getResult(0)->getName() << " (" << Key
                << "):";
      for (unsigned V = 0; V < layout::NumConvVariants; ++V) {
        *Opts.Log << " " << layout::getConvVariantName(layout::ConvVariant(V))
                  << " ";
        if (Timing.Ns[V] < 0)
          *Opts.Log << "-";
        else
          *Opts.Log << llvm::format("%.1f", Timing.Ns[V] / 1000.0) << " us";
      }
      *Opts.Log << "\n";
    }
    for (llvm::ArrayRef<int64_t> Shape :
         {llvm::ArrayRef<int64_t>(C.X), llvm::ArrayRef<int64_t>(C.Y)})
      if (llvm::Error E = TimeRelayout(Shape))
        return makeNodeError(*N, "tuning a relayout: " +
                                     llvm::toString(std::move(E)));
  }
  S.Seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - Start)
          .count();
  if (Stats)
    *Stats = S;
  return llvm::Error::success();
}
