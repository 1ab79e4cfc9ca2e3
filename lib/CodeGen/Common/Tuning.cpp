//===- Tuning.cpp - Timing a backend's kernels for layout choice ----------===//
//
// Each measurement is a one-op program (a Conv with the graph's
// attributes, or a Relayout) compiled by the backend being tuned. A sample
// repeats the program for a minimum time; the variants of one conv are
// sampled in turn, round after round, and each one's median counts.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/Tuning.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/IR/LayoutAlgebra.h"
#include "strider/IR/ShapeInference.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <random>

using namespace strider;
using namespace strider::codegen;
using layout::ConvConfig;
using layout::ConvTiming;

namespace {

Layout labelLayout(bool ChannelsLast, unsigned Rank) {
  return ChannelsLast ? Layout::getChannelsLast(Rank) : Layout();
}

/// A tensor of \p Type and \p Shape (in layout \p L) with values uniform
/// in [-1, 1).
runtime::Tensor randomTensor(ElementType Type, llvm::ArrayRef<int64_t> Shape,
                             const Layout &L, std::mt19937 &Rng) {
  std::uniform_real_distribution<float> U(-1.0f, 1.0f);
  runtime::Tensor T(Type, Shape, L);
  for (int64_t I = 0; I < T.getNumElements(); ++I)
    T.setDouble(I, U(Rng));
  return T;
}

/// A one-op program ready to be timed, with the graph it was compiled from
/// and its inputs.
struct Candidate {
  std::unique_ptr<Graph> G;
  std::unique_ptr<TimedProgram> Prog;
  runtime::TensorMap Inputs;
  unsigned Reps = 1;
  std::vector<double> Samples;
};

/// Compiles \p G, runs it once on random inputs and sizes its samples; a
/// null program when the backend has no kernel for it.
llvm::Error prepare(std::unique_ptr<Graph> G, const TuneDriverOptions &Opts,
                    CompileForTiming Compile, std::mt19937 &Rng,
                    Candidate &C) {
  C.G = std::move(G);
  auto Prog = Compile(*C.G);
  if (!Prog)
    return Prog.takeError();
  if (!*Prog)
    return llvm::Error::success();
  for (const Value *In : C.G->getInputs()) {
    const TensorType &T = In->getType();
    C.Inputs[In->getName()] =
        randomTensor(T.getElementType(), T.getStaticShape(), T.getLayout(), Rng);
  }
  // One warm-up run, which also sizes a sample.
  auto Once = (*Prog)->run(C.Inputs, 1);
  if (!Once)
    return Once.takeError();
  C.Reps = unsigned(std::clamp(Opts.SampleSeconds / std::max(*Once * 1e-9, 1e-7),
                               1.0, 10000.0));
  C.Prog = std::move(*Prog);
  return llvm::Error::success();
}

/// Times the candidates in rounds, one sample of each per round (so that
/// a change of the machine's state, such as a neighbour's load or the
/// clock, shifts them all alike), and returns each one's median sample in
/// nanoseconds per call, or -1 for a candidate without a program.
llvm::Expected<std::vector<double>> timeInterleaved(std::vector<Candidate> &Cs,
                                                    const TuneDriverOptions &Opts) {
  for (unsigned Round = 0; Round < std::max(1u, Opts.Samples); ++Round)
    for (Candidate &C : Cs) {
      if (!C.Prog)
        continue;
      auto Ns = C.Prog->run(C.Inputs, C.Reps);
      if (!Ns)
        return Ns.takeError();
      C.Samples.push_back(*Ns);
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

/// A graph of one Conv of config \p C with \p N's attributes on \p Type
/// data, reading and writing the given layouts, with the residual Add the
/// backends fuse into it when the model has one.
std::unique_ptr<Graph> makeConvGraph(const Node &N, const ConvConfig &C,
                                     ElementType Type, bool InLast,
                                     bool OutLast, std::mt19937 &Rng) {
  auto G = std::make_unique<Graph>("tune");
  unsigned Rank = unsigned(C.X.size());
  Value *X = G->addInput(
      "x", TensorType::get(Type, C.X, labelLayout(InLast, Rank)));
  std::vector<Value *> Operands = {X};
  auto AddConstant = [&](llvm::ArrayRef<int64_t> Shape) {
    runtime::Tensor T = randomTensor(Type, Shape, Layout(), Rng);
    TensorDataRef D = llvm::cantFail(TensorData::create(
        T.getType(), std::vector<uint8_t>(T.getBytes().begin(),
                                          T.getBytes().end())));
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

llvm::Error codegen::tuneConvsAndRelayouts(const Graph &G,
                                           const layout::DimBindings &Dims,
                                           const TuneDriverOptions &Opts,
                                           CompileForTiming Compile,
                                           layout::TuningTable &Table,
                                           TuneStats *Stats) {
  auto Start = std::chrono::steady_clock::now();
  TuneStats S;
  std::mt19937 Rng(42);
  auto TimeRelayout = [&](llvm::ArrayRef<int64_t> Shape) -> llvm::Error {
    TensorType Ty = TensorType::get(Opts.Type, Shape);
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
      if (llvm::Error E =
              prepare(std::move(R), Opts, Compile, Rng, Cs[ToLast]))
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
      std::unique_ptr<Graph> CG = makeConvGraph(
          *N, C, Opts.Type, Variants[V][0], Variants[V][1], Rng);
      Built = CG != nullptr;
      if (Built)
        if (llvm::Error E =
                prepare(std::move(CG), Opts, Compile, Rng, Cs[V]))
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
