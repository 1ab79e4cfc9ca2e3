//===- strider-fuzz.cpp - Differential fuzzing of the layout pipeline -----===//
//
// Generates random, valid graphs from seeds, runs the reference interpreter
// on each, then runs `infer-shapes,canonicalize,infer-shapes,
// layout-assignment` under several layout configurations and checks that
// the interpreter computes the same logical outputs on the rewritten graph.
// Where the CUDA backend is built, the cuda-* configurations also plan the
// rewritten graph for it and run the plan on the host
// (the cuda-emulated backend), which must give the same outputs too.
//
//===----------------------------------------------------------------------===//

#include "strider/CodeGen/Registry/BackendRegistry.h"
#include "strider/IR/AsmParser.h"
#include "strider/IR/AsmPrinter.h"
#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/IR/TensorData.h"
#include "strider/IR/Verifier.h"
#include "strider/Runtime/Reference.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace strider;
namespace cl = llvm::cl;

static cl::OptionCategory FuzzCat("strider-fuzz options");

static cl::opt<unsigned> NumSeeds("seeds", cl::desc("Number of seeds to run"),
                                  cl::init(100), cl::cat(FuzzCat));
static cl::opt<unsigned> FirstSeed("first", cl::desc("First seed to run"),
                                   cl::init(0), cl::cat(FuzzCat));
static cl::opt<int64_t>
    OnlySeed("seed", cl::desc("Run only this seed (overrides --first/--seeds)"),
             cl::init(-1), cl::cat(FuzzCat));
static cl::opt<std::string> GraphFile(
    "graph",
    cl::desc("Check the textual IR graph in this file instead of generated "
             "ones (inputs from --seed, default 0): reproduces and reduces a "
             "failing seed printed with --print"),
    cl::value_desc("file"), cl::cat(FuzzCat));
static cl::opt<bool>
    PrintGraph("print",
               cl::desc("Print the generated graph of --seed as textual IR"),
               cl::cat(FuzzCat));
static cl::opt<bool> Verbose("v", cl::desc("Print every seed and check"),
                             cl::cat(FuzzCat));
static cl::opt<bool> DeviceCode(
    "device-code",
    cl::desc("Run the cuda-* plans' kernel steps through the kernels' own "
             "device code compiled for the host (cuda::EmulationMode::"
             "DeviceCode) instead of their host models"),
    cl::cat(FuzzCat));
static cl::opt<bool> ConstantsFirst(
    "constants-first",
    cl::desc("Put every Constant node at the start of the graph (as "
             "importers do) instead of just before its first user"),
    cl::cat(FuzzCat));

namespace {

/// Largest number of elements a generated value may have.
constexpr int64_t MaxElements = 12000;
/// Largest number of multiply-adds a generated Conv or Gemm may need.
constexpr int64_t MaxMacs = 150000;

/// Deterministic choices from a std::mt19937 (whose output sequence the
/// standard fixes, unlike the distributions').
class RandomSource {
public:
  explicit RandomSource(uint32_t Seed) : Engine(Seed) {}
  /// An integer in [0, N); N > 0.
  int64_t below(int64_t N) { return int64_t(Engine() % uint32_t(N)); }
  /// An integer in [Lo, Hi].
  int64_t range(int64_t Lo, int64_t Hi) { return Lo + below(Hi - Lo + 1); }
  /// True with probability Num/Den.
  bool chance(int64_t Num, int64_t Den) { return below(Den) < Num; }
  /// A float in [-1, 1] on a grid of 1/1024.
  float unit() { return float(range(-1024, 1024)) / 1024.0f; }
  template <typename T> const T &element(const std::vector<T> &V) {
    return V[below(int64_t(V.size()))];
  }

private:
  std::mt19937 Engine;
};

/// Builds one random graph, node by node. A generator step creates its
/// nodes, lets shape inference type them, and either commits them (their
/// results join the pool of operands) or rolls them back.
class GraphGenerator {
public:
  GraphGenerator(Graph &G, uint32_t Seed) : G(G), Rand(Seed) {}

  /// Fill the graph; the caller verifies it.
  void generate();

private:
  using AttrList = std::vector<std::pair<std::string, Attribute>>;
  using Shape = llvm::SmallVector<int64_t, 6>;

  Value *constant(TensorDataRef D);
  Value *floatConstant(llvm::ArrayRef<int64_t> Dims, float Scale);
  Value *scalarConstant(float V);
  Value *intConstant(llvm::ArrayRef<int64_t> Values);
  /// Create a node with untyped results and type it by shape inference;
  /// null if inference rejects it or a result is too large or empty.
  Node *node(OpId Id, llvm::ArrayRef<Value *> Operands, AttrList Attrs,
             unsigned NumResults = 1);
  void rollback();
  void commit();

  /// A pool value satisfying \p Pred, biased to recent ones; null if none.
  template <typename Pred> Value *pick(Pred P);
  Value *pickRank(unsigned Rank) {
    return pick([Rank](Value *V) { return V->getType().getRank() == Rank; });
  }
  Value *pickAny() {
    return pick([](Value *) { return true; });
  }
  static Shape shapeOf(Value *V) { return V->getType().getStaticShape(); }

  bool genConv();
  bool genUnary();
  bool genBinary();
  bool genConcat();
  bool genPool();
  bool genGlobalPool();
  bool genBatchNorm();
  bool genResize();
  bool genTranspose();
  bool genReshape();
  bool genGemmHead();
  bool genSoftmax();
  bool genReduceMean();
  bool genPad();
  bool genSlice();
  bool genSplit();
  bool genDepthToSpace();

  Graph &G;
  RandomSource Rand;
  std::vector<Value *> Pool;
  std::vector<Node *> Pending;
  unsigned NextName = 0;
};

/// Generator steps with their relative weights.
struct GeneratorStep {
  bool (GraphGenerator::*Run)();
  unsigned Weight;
};

} // namespace

Value *GraphGenerator::constant(TensorDataRef D) {
  TensorType T = D->getType();
  Node *Front =
      ConstantsFirst && G.getNumNodes() ? *G.nodes().begin() : nullptr;
  Node *N = G.createNode(OpId::Constant, {}, {"c" + std::to_string(NextName++)},
                         {T}, Front);
  N->setAttr("value", Attribute::getTensor(std::move(D)));
  Pending.push_back(N);
  return N->getResult(0);
}

Value *GraphGenerator::floatConstant(llvm::ArrayRef<int64_t> Dims,
                                     float Scale) {
  int64_t Count = 1;
  for (int64_t D : Dims)
    Count *= D;
  std::vector<float> Values(Count);
  for (float &F : Values)
    F = Rand.unit() * Scale;
  return constant(TensorData::fromFloat(Dims, Values));
}

Value *GraphGenerator::scalarConstant(float V) {
  return constant(TensorData::fromFloat({}, {V}));
}

Value *GraphGenerator::intConstant(llvm::ArrayRef<int64_t> Values) {
  return constant(TensorData::fromInt64(ElementType::I64,
                                        {int64_t(Values.size())}, Values));
}

Node *GraphGenerator::node(OpId Id, llvm::ArrayRef<Value *> Operands,
                           AttrList Attrs, unsigned NumResults) {
  std::vector<std::string> Names;
  for (unsigned I = 0; I != NumResults; ++I)
    Names.push_back("v" + std::to_string(NextName++));
  std::vector<TensorType> Types(NumResults);
  Node *N = G.createNode(Id, Operands, Names, Types);
  Pending.push_back(N);
  for (auto &A : Attrs)
    N->setAttr(A.first, std::move(A.second));
  llvm::SmallVector<TensorType, 4> Results;
  if (llvm::Error E = inferResultTypes(*N, Results)) {
    llvm::consumeError(std::move(E));
    return nullptr;
  }
  for (unsigned I = 0; I != NumResults; ++I) {
    const TensorType &T = Results[I];
    if (!T.hasRank() || !T.hasStaticShape() ||
        T.getElementType() != ElementType::F32)
      return nullptr;
    int64_t Count = *T.getNumElements();
    if (Count == 0 || Count > MaxElements)
      return nullptr;
    N->getResult(I)->setType(T);
  }
  return N;
}

void GraphGenerator::rollback() {
  for (auto It = Pending.rbegin(); It != Pending.rend(); ++It) {
    (*It)->dropAllOperands();
    G.eraseNode(*It);
  }
  Pending.clear();
}

void GraphGenerator::commit() {
  for (Node *N : Pending)
    if (N->getOpId() != OpId::Constant)
      for (unsigned I = 0; I != N->getNumResults(); ++I)
        Pool.push_back(N->getResult(I));
  Pending.clear();
}

template <typename Pred> Value *GraphGenerator::pick(Pred P) {
  std::vector<Value *> Candidates;
  for (Value *V : Pool)
    if (P(V))
      Candidates.push_back(V);
  if (Candidates.empty())
    return nullptr;
  // Mostly a value nothing reads yet, so that little of the graph is dead;
  // rank-4 values first, so that the graph stays mostly convolutional.
  std::vector<Value *> Unused, Rank4;
  for (Value *V : Candidates) {
    if (!V->hasUses())
      Unused.push_back(V);
    if (V->getType().getRank() == 4)
      Rank4.push_back(V);
  }
  if (!Unused.empty() && Rand.chance(3, 5))
    Candidates = std::move(Unused);
  else if (!Rank4.empty() && Rand.chance(1, 2))
    Candidates = std::move(Rank4);
  // Half the time one of the three newest, for depth; otherwise any, for
  // branches and long skips.
  if (Rand.chance(1, 2)) {
    int64_t Recent = std::min<int64_t>(3, Candidates.size());
    return Candidates[Candidates.size() - 1 - Rand.below(Recent)];
  }
  return Rand.element(Candidates);
}

bool GraphGenerator::genConv() {
  Value *X = pickRank(4);
  if (!X)
    return false;
  Shape S = shapeOf(X);
  int64_t C = S[1];
  int64_t Group = 1, OutC;
  int64_t Kind = Rand.below(3);
  if (Kind == 1 && C > 1) { // depthwise
    Group = C;
    OutC = C * Rand.range(1, 2);
  } else if (Kind == 2) { // grouped
    std::vector<int64_t> Divisors;
    for (int64_t D = 2; D < C; ++D)
      if (C % D == 0)
        Divisors.push_back(D);
    if (Divisors.empty())
      return false;
    Group = Rand.element(Divisors);
    OutC = Group * Rand.range(1, std::max<int64_t>(1, 16 / Group));
  } else {
    OutC = Rand.element(std::vector<int64_t>{1, 3, 4, 8, 16});
  }
  int64_t K = Rand.chance(1, 2) ? 1 : 3;
  AttrList Attrs = {{"kernel_shape", Attribute::getInts({K, K})}};
  if (Group != 1 || Rand.chance(1, 3))
    Attrs.push_back({"group", Attribute::getInt(Group)});
  if (Rand.chance(1, 2))
    Attrs.push_back(
        {"strides", Attribute::getInts({Rand.range(1, 2), Rand.range(1, 2)})});
  if (K == 3 && Rand.chance(1, 4))
    Attrs.push_back({"dilations",
                     Attribute::getInts({Rand.range(1, 2), Rand.range(1, 2)})});
  if (Rand.chance(2, 3)) {
    std::vector<int64_t> Pads(4);
    for (int64_t &P : Pads)
      P = Rand.range(0, K - 1);
    Attrs.push_back({"pads", Attribute::getInts(Pads)});
  }
  int64_t FanIn = C / Group * K * K;
  if (S[0] * OutC * S[2] * S[3] * FanIn > MaxMacs)
    return false;
  float Scale = 1.5f / std::sqrt(float(FanIn));
  std::vector<Value *> Ops = {X, floatConstant({OutC, C / Group, K, K}, Scale)};
  if (Rand.chance(1, 2))
    Ops.push_back(floatConstant({OutC}, 0.5f));
  return node(OpId::Conv, Ops, std::move(Attrs)) != nullptr;
}

bool GraphGenerator::genUnary() {
  Value *X = pickAny();
  switch (Rand.below(4)) {
  case 0:
    return node(OpId::Relu, {X}, {});
  case 1:
    return node(OpId::Sigmoid, {X}, {});
  case 2:
    return node(OpId::LeakyRelu, {X},
                {{"alpha", Attribute::getFloat(0.125f * Rand.range(0, 4))}});
  default: {
    float Lo = -0.25f * Rand.range(0, 4), Hi = 0.25f * Rand.range(1, 4);
    switch (Rand.below(3)) {
    case 0:
      return node(OpId::Clip, {X, scalarConstant(Lo), scalarConstant(Hi)}, {});
    case 1:
      return node(OpId::Clip, {X, scalarConstant(Lo)}, {});
    default:
      return node(OpId::Clip, {X, nullptr, scalarConstant(Hi)}, {});
    }
  }
  }
}

bool GraphGenerator::genBinary() {
  Value *X = pickAny();
  Shape S = shapeOf(X);
  OpId Id = Rand.chance(1, 2) ? OpId::Add : OpId::Mul;
  Value *Y = nullptr;
  switch (Rand.below(3)) {
  case 0: // residual: another value of the same shape
    Y = pick([&](Value *V) { return shapeOf(V) == S; });
    break;
  case 1: // a value that broadcasts to X (an SE-block scale, ...)
    Y = pick([&](Value *V) {
      Shape T = shapeOf(V);
      if (T.size() != S.size() || T == S)
        return false;
      for (size_t I = 0; I != S.size(); ++I)
        if (T[I] != S[I] && T[I] != 1)
          return false;
      return true;
    });
    break;
  default: { // a broadcast constant
    std::vector<int64_t> Dims;
    if (S.size() == 4 && Rand.chance(2, 3))
      Dims = Rand.chance(1, 2) ? std::vector<int64_t>{S[1], 1, 1}
                               : std::vector<int64_t>{1, S[1], 1, 1};
    else if (!S.empty() && Rand.chance(1, 2))
      Dims = {S.back()};
    Y = floatConstant(Dims, 1.0f);
    break;
  }
  }
  if (!Y)
    return false;
  if (Rand.chance(1, 2))
    std::swap(X, Y);
  return node(Id, {X, Y}, {});
}

bool GraphGenerator::genConcat() {
  Value *X = pickAny();
  Shape S = shapeOf(X);
  if (S.empty())
    return false;
  int64_t Rank = S.size();
  int64_t Axis = Rank >= 2 && Rand.chance(1, 2) ? 1 : Rand.below(Rank);
  std::vector<Value *> Ops = {X};
  int64_t Extra = Rand.range(1, 2);
  for (int64_t I = 0; I != Extra; ++I) {
    Value *Y = pick([&](Value *V) {
      Shape T = shapeOf(V);
      if (int64_t(T.size()) != Rank)
        return false;
      for (int64_t D = 0; D != Rank; ++D)
        if (D != Axis && T[D] != S[D])
          return false;
      return true;
    });
    Ops.push_back(Y);
  }
  if (Rand.chance(1, 2))
    std::swap(Ops.front(), Ops.back());
  if (Rand.chance(1, 3))
    Axis -= Rank;
  return node(OpId::Concat, Ops, {{"axis", Attribute::getInt(Axis)}});
}

bool GraphGenerator::genPool() {
  Value *X = pickRank(4);
  if (!X)
    return false;
  bool Max = Rand.chance(1, 2);
  std::vector<int64_t> Kernel = {Rand.range(1, 3), Rand.range(1, 3)};
  AttrList Attrs = {{"kernel_shape", Attribute::getInts(Kernel)}};
  if (Rand.chance(2, 3))
    Attrs.push_back(
        {"strides", Attribute::getInts({Rand.range(1, 2), Rand.range(1, 2)})});
  if (Rand.chance(1, 2)) {
    std::vector<int64_t> Pads = {
        Rand.range(0, Kernel[0] - 1), Rand.range(0, Kernel[1] - 1),
        Rand.range(0, Kernel[0] - 1), Rand.range(0, Kernel[1] - 1)};
    Attrs.push_back({"pads", Attribute::getInts(Pads)});
  }
  if (Rand.chance(1, 3))
    Attrs.push_back({"ceil_mode", Attribute::getInt(1)});
  if (!Max && Rand.chance(1, 2))
    Attrs.push_back({"count_include_pad", Attribute::getInt(1)});
  return node(Max ? OpId::MaxPool : OpId::AveragePool, {X}, std::move(Attrs));
}

bool GraphGenerator::genGlobalPool() {
  Value *X = pickRank(4);
  return X && node(OpId::GlobalAveragePool, {X}, {});
}

bool GraphGenerator::genBatchNorm() {
  Value *X = pickRank(4);
  if (!X)
    return false;
  int64_t C = shapeOf(X)[1];
  std::vector<float> Var(C);
  for (float &V : Var)
    V = 1.0f + 0.5f * Rand.unit();
  Value *Scale = floatConstant({C}, 1.0f);
  Value *Bias = floatConstant({C}, 0.5f);
  Value *Mean = floatConstant({C}, 0.5f);
  Value *VarV = constant(TensorData::fromFloat({C}, Var));
  AttrList Attrs;
  if (Rand.chance(1, 2))
    Attrs.push_back({"epsilon", Attribute::getFloat(0.001f)});
  return node(OpId::BatchNormalization, {X, Scale, Bias, Mean, VarV},
              std::move(Attrs));
}

bool GraphGenerator::genResize() {
  Value *X = pickRank(4);
  if (!X)
    return false;
  AttrList Attrs = {{"mode", Attribute::getString("nearest")}};
  if (Rand.chance(1, 2))
    Attrs.push_back(
        {"coordinate_transformation_mode", Attribute::getString("asymmetric")});
  Value *Scales = constant(TensorData::fromFloat({4}, {1, 1, 2, 2}));
  return node(OpId::Resize, {X, nullptr, Scales}, std::move(Attrs));
}

bool GraphGenerator::genTranspose() {
  Value *X = pick([](Value *V) { return V->getType().getRank() >= 2; });
  if (!X)
    return false;
  unsigned Rank = X->getType().getRank();
  if (Rand.chance(1, 6))
    return node(OpId::Transpose, {X}, {}); // reverses the dims
  std::vector<int64_t> Perm(Rank);
  for (unsigned I = 0; I != Rank; ++I)
    Perm[I] = I;
  for (unsigned I = Rank - 1; I > 0; --I)
    std::swap(Perm[I], Perm[Rand.below(I + 1)]);
  return node(OpId::Transpose, {X}, {{"perm", Attribute::getInts(Perm)}});
}

bool GraphGenerator::genReshape() {
  Value *X = pick([](Value *V) { return V->getType().getRank() >= 1; });
  if (!X)
    return false;
  Shape S = shapeOf(X);
  // Channel shuffle: N,C,H,W -> N,g,C/g,H,W -> transpose -> N,C,H,W.
  if (S.size() == 4 && Rand.chance(1, 3)) {
    std::vector<int64_t> Groups;
    for (int64_t D = 2; D < S[1]; ++D)
      if (S[1] % D == 0)
        Groups.push_back(D);
    if (Groups.empty())
      return false;
    int64_t Gr = Rand.element(Groups);
    std::vector<int64_t> Split = {Rand.chance(1, 2) ? 0 : S[0], Gr, S[1] / Gr,
                                  S[2], S[3]};
    if (Rand.chance(1, 3))
      Split[2] = -1;
    Node *R = node(OpId::Reshape, {X, intConstant(Split)}, {});
    if (!R)
      return false;
    Node *T = node(OpId::Transpose, {R->getResult(0)},
                   {{"perm", Attribute::getInts({0, 2, 1, 3, 4})}});
    if (!T)
      return false;
    std::vector<int64_t> Merge = {S[0], S[1], S[2], S[3]};
    if (Rand.chance(1, 2))
      Merge[Rand.below(4)] = -1;
    return node(OpId::Reshape, {T->getResult(0), intConstant(Merge)}, {});
  }
  std::vector<int64_t> Target(S.begin(), S.end());
  if (S.size() >= 2 && (S.size() >= 5 || Rand.chance(1, 2))) {
    // Merge two adjacent dims.
    size_t I = Rand.below(S.size() - 1);
    Target[I] *= Target[I + 1];
    Target.erase(Target.begin() + I + 1);
  } else {
    // Split a dim into two factors.
    size_t I = Rand.below(S.size());
    std::vector<int64_t> Factors;
    for (int64_t F = 2; F < S[I]; ++F)
      if (S[I] % F == 0)
        Factors.push_back(F);
    int64_t F = Factors.empty() ? 1 : Rand.element(Factors);
    Target[I] = S[I] / F;
    Target.insert(Target.begin() + I + 1, F);
  }
  if (Rand.chance(1, 3))
    Target[Rand.below(Target.size())] = -1;
  else if (Target[0] == S[0] && Rand.chance(1, 2))
    Target[0] = 0;
  return node(OpId::Reshape, {X, intConstant(Target)}, {});
}

bool GraphGenerator::genGemmHead() {
  Value *X = pick([](Value *V) {
    unsigned R = V->getType().getRank();
    return R == 4 || R == 2;
  });
  if (!X)
    return false;
  if (X->getType().getRank() == 4) {
    Node *F = node(OpId::Flatten, {X}, {{"axis", Attribute::getInt(1)}});
    if (!F)
      return false;
    X = F->getResult(0);
  }
  Shape S = shapeOf(X);
  int64_t M = Rand.range(1, 10);
  if (S[0] * S[1] * M > MaxMacs)
    return false;
  bool TransB = Rand.chance(1, 2);
  float Scale = 1.5f / std::sqrt(float(S[1]));
  std::vector<Value *> Ops = {X, TransB ? floatConstant({M, S[1]}, Scale)
                                        : floatConstant({S[1], M}, Scale)};
  if (Rand.chance(2, 3))
    Ops.push_back(floatConstant({M}, 0.5f));
  AttrList Attrs;
  if (TransB)
    Attrs.push_back({"transB", Attribute::getInt(1)});
  if (Rand.chance(1, 4))
    Attrs.push_back({"alpha", Attribute::getFloat(0.5f)});
  return node(OpId::Gemm, Ops, std::move(Attrs));
}

bool GraphGenerator::genSoftmax() {
  Value *X = pick([](Value *V) { return V->getType().getRank() >= 1; });
  if (!X)
    return false;
  int64_t Rank = X->getType().getRank();
  return node(OpId::Softmax, {X},
              {{"axis", Attribute::getInt(Rand.range(-Rank, Rank - 1))}});
}

bool GraphGenerator::genReduceMean() {
  Value *X = pick([](Value *V) { return V->getType().getRank() >= 1; });
  if (!X)
    return false;
  int64_t Rank = X->getType().getRank();
  std::vector<int64_t> Axes;
  for (int64_t D = 0; D != Rank; ++D)
    if (Rand.chance(1, 3))
      Axes.push_back(Rand.chance(1, 3) ? D - Rank : D);
  if (Axes.empty())
    Axes.push_back(Rand.below(Rank));
  bool Keep = int64_t(Axes.size()) == Rank || Rand.chance(1, 2);
  AttrList Attrs;
  if (!Keep)
    Attrs.push_back({"keepdims", Attribute::getInt(0)});
  return node(OpId::ReduceMean, {X, intConstant(Axes)}, std::move(Attrs));
}

bool GraphGenerator::genPad() {
  Value *X = pick([](Value *V) { return V->getType().getRank() >= 1; });
  if (!X)
    return false;
  Shape S = shapeOf(X);
  int64_t Mode = Rand.below(3);
  std::vector<int64_t> Pads(2 * S.size(), 0);
  for (size_t I = 0; I != Pads.size(); ++I) {
    int64_t Dim = S[I % S.size()];
    int64_t Limit = Mode == 1 ? std::min<int64_t>(2, Dim - 1) : 2;
    if (Rand.chance(1, 2))
      Pads[I] = Rand.range(0, Limit);
  }
  static const char *const Modes[] = {"constant", "reflect", "edge"};
  std::vector<Value *> Ops = {X, intConstant(Pads)};
  if (Mode == 0 && Rand.chance(1, 2))
    Ops.push_back(scalarConstant(Rand.unit()));
  AttrList Attrs;
  if (Mode != 0 || Rand.chance(1, 2))
    Attrs.push_back({"mode", Attribute::getString(Modes[Mode])});
  return node(OpId::Pad, Ops, std::move(Attrs));
}

bool GraphGenerator::genSlice() {
  Value *X = pick([](Value *V) { return V->getType().getRank() >= 1; });
  if (!X)
    return false;
  Shape S = shapeOf(X);
  int64_t Rank = S.size();
  std::vector<int64_t> Starts, Ends, Axes, Steps;
  bool AllUnitSteps = true;
  for (int64_t D = 0; D != Rank; ++D) {
    if (S[D] < 2 || !Rand.chance(1, 2))
      continue;
    int64_t Step = Rand.element(std::vector<int64_t>{1, 1, 2, -1});
    int64_t Start = Rand.range(0, S[D] - 1), End;
    if (Step > 0) {
      End = Rand.range(Start + 1, S[D]);
      if (End == S[D] && Rand.chance(1, 2))
        End = std::numeric_limits<int64_t>::max();
      else if (Rand.chance(1, 3))
        End -= S[D];
    } else {
      End = Rand.range(-1, Start - 1);
      if (End == -1)
        End = std::numeric_limits<int64_t>::min();
    }
    if (Rand.chance(1, 3))
      Start -= S[D];
    Starts.push_back(Start);
    Ends.push_back(End);
    Axes.push_back(Rand.chance(1, 3) ? D - Rank : D);
    Steps.push_back(Step);
    AllUnitSteps &= Step == 1;
  }
  if (Axes.empty())
    return false;
  std::vector<Value *> Ops = {X, intConstant(Starts), intConstant(Ends),
                              intConstant(Axes)};
  if (!AllUnitSteps || Rand.chance(1, 2))
    Ops.push_back(intConstant(Steps));
  return node(OpId::Slice, Ops, {});
}

bool GraphGenerator::genSplit() {
  Value *X = pick([](Value *V) {
    for (const Dim &D : V->getType().getShape())
      if (D.getSize() >= 2)
        return true;
    return false;
  });
  if (!X)
    return false;
  Shape S = shapeOf(X);
  int64_t Rank = S.size();
  int64_t Axis;
  do
    Axis = Rank >= 2 && Rand.chance(1, 2) ? 1 : Rand.below(Rank);
  while (S[Axis] < 2);
  int64_t Parts = Rand.range(2, std::min<int64_t>(3, S[Axis]));
  AttrList Attrs = {
      {"axis", Attribute::getInt(Rand.chance(1, 3) ? Axis - Rank : Axis)}};
  std::vector<Value *> Ops = {X};
  if (Rand.chance(1, 2)) {
    std::vector<int64_t> Sizes(Parts, 1);
    for (int64_t Left = S[Axis] - Parts; Left > 0; --Left)
      ++Sizes[Rand.below(Parts)];
    Ops.push_back(intConstant(Sizes));
  } else {
    Attrs.push_back({"num_outputs", Attribute::getInt(Parts)});
  }
  return node(OpId::Split, Ops, std::move(Attrs), Parts);
}

bool GraphGenerator::genDepthToSpace() {
  Value *X = pick([](Value *V) {
    return V->getType().getRank() == 4 && shapeOf(V)[1] % 4 == 0;
  });
  if (!X)
    return false;
  AttrList Attrs = {{"blocksize", Attribute::getInt(2)}};
  if (Rand.chance(1, 2))
    Attrs.push_back(
        {"mode", Attribute::getString(Rand.chance(1, 2) ? "CRD" : "DCR")});
  return node(OpId::DepthToSpace, {X}, std::move(Attrs));
}

void GraphGenerator::generate() {
  static const GeneratorStep Steps[] = {
      {&GraphGenerator::genConv, 6},
      {&GraphGenerator::genUnary, 4},
      {&GraphGenerator::genBinary, 4},
      {&GraphGenerator::genConcat, 2},
      {&GraphGenerator::genPool, 2},
      {&GraphGenerator::genGlobalPool, 1},
      {&GraphGenerator::genBatchNorm, 2},
      {&GraphGenerator::genResize, 1},
      {&GraphGenerator::genTranspose, 2},
      {&GraphGenerator::genReshape, 2},
      {&GraphGenerator::genGemmHead, 1},
      {&GraphGenerator::genSoftmax, 1},
      {&GraphGenerator::genReduceMean, 1},
      {&GraphGenerator::genPad, 1},
      {&GraphGenerator::genSlice, 1},
      {&GraphGenerator::genSplit, 1},
      {&GraphGenerator::genDepthToSpace, 1},
  };
  unsigned TotalWeight = 0;
  for (const GeneratorStep &S : Steps)
    TotalWeight += S.Weight;

  int64_t NumInputs = Rand.range(1, 2);
  Shape First;
  for (int64_t I = 0; I != NumInputs; ++I) {
    Shape S = {Rand.range(1, 2),
               Rand.element(std::vector<int64_t>{1, 3, 4, 8, 16}),
               Rand.range(1, 9), Rand.range(1, 9)};
    if (I == 1 && Rand.chance(1, 2))
      S = First;
    First = S;
    Pool.push_back(G.addInput("x" + std::to_string(I),
                              TensorType::get(ElementType::F32, S)));
  }

  int64_t Target = Rand.range(5, 25);
  for (int64_t Done = 0, Tries = 0; Done < Target && Tries < 400; ++Tries) {
    int64_t Roll = Rand.below(TotalWeight);
    const GeneratorStep *Step = Steps;
    while (Roll >= Step->Weight)
      Roll -= (Step++)->Weight;
    if ((this->*Step->Run)()) {
      commit();
      ++Done;
    } else {
      rollback();
    }
  }

  // Outputs: the newest value and up to two others, none a graph input,
  // preferably values nothing reads (the rest of the graph is dead code).
  std::vector<Value *> Results(Pool.begin() + NumInputs, Pool.end());
  if (Results.empty()) {
    Node *N = node(OpId::Relu, {Pool.front()}, {});
    commit();
    Results.push_back(N->getResult(0));
  }
  std::vector<Value *> Sinks;
  for (Value *V : Results)
    if (!V->hasUses() && V != Results.back())
      Sinks.push_back(V);
  std::vector<Value *> Outputs = {Results.back()};
  int64_t Extra = Rand.range(0, 2);
  for (int64_t I = 0; I != Extra; ++I) {
    Value *V =
        Rand.element(Sinks.empty() || Rand.chance(1, 5) ? Results : Sinks);
    if (!llvm::is_contained(Outputs, V))
      Outputs.push_back(V);
  }
  for (Value *V : Outputs)
    G.addOutput(V);
}

namespace {

/// One layout configuration of the pipeline under test.
struct Configuration {
  const char *Mode;
  const char *Target;
  const char *IO;
  std::string name() const {
    return std::string(Mode) + "/" + Target + "/io=" + IO;
  }
};

const Configuration Configurations[] = {
    {"auto", "cpu-avx512", "model"}, {"auto", "cpu-avx512", "nhwc"},
    {"auto", "cuda-sm90", "model"},  {"auto", "cuda-sm90", "nhwc"},
    {"nchw", "cpu-avx512", "model"}, {"nchw", "cpu-avx512", "nhwc"},
    {"nhwc", "cpu-avx512", "model"}, {"nhwc", "cpu-avx512", "nhwc"},
};
constexpr unsigned NumConfigurations =
    sizeof(Configurations) / sizeof(Configurations[0]);

/// Random logical inputs for every graph input.
runtime::TensorMap makeInputs(const Graph &G, uint32_t Seed) {
  RandomSource Rand(Seed ^ 0x9e3779b9u);
  runtime::TensorMap Inputs;
  for (Value *In : G.getInputs()) {
    runtime::Tensor T(ElementType::F32, In->getType().getStaticShape());
    for (int64_t I = 0; I != T.getNumElements(); ++I)
      T.setDouble(I, 2.0 * Rand.unit());
    Inputs.emplace(In->getName(), std::move(T));
  }
  return Inputs;
}

/// How the cuda-* configurations fared in the CUDA backend.
struct CudaTally {
  /// cuda-emulated, where this build has it; null otherwise.
  const codegen::Backend *Backend = nullptr;
  unsigned Emulated = 0, Refused = 0;
};

/// What differs between \p Actual (outputs of \p G, any layouts) and
/// \p Expected (of \p Original's outputs, in order), or "".
std::string compareOutputs(const Graph &G, const Graph &Original,
                           const runtime::TensorMap &Actual,
                           const runtime::TensorMap &Expected);

/// Runs one configuration on a copy of \p Text; an empty string when the
/// outputs match \p Expected, else what went wrong.
std::string checkConfiguration(const Configuration &Config,
                               llvm::StringRef Text, const Graph &Original,
                               const runtime::TensorMap &Inputs,
                               const runtime::TensorMap &Expected,
                               CudaTally &Cuda) {
  auto Parsed = parseGraph(Text, "generated");
  if (!Parsed)
    return "parse error: " + llvm::toString(Parsed.takeError());
  Graph &G = **Parsed;

  auto Opts =
      layout::parseLayoutOptions(Config.Target, Config.Mode, Config.IO, {});
  if (!Opts)
    return "bad options: " + llvm::toString(Opts.takeError());
  PipelineOptions Pipeline;
  Pipeline.Layout = *Opts;
  PassManager PM;
  if (llvm::Error E = parsePassPipeline(getDefaultPipeline(), PM))
    return "pipeline error: " + llvm::toString(std::move(E));
  PM.configure(Pipeline);
  if (llvm::Error E = PM.run(G))
    return "pass error: " + llvm::toString(std::move(E));
  if (llvm::Error E = verifyGraph(G))
    return "verifier error: " + llvm::toString(std::move(E));
  if (G.getOutputs().size() != Original.getOutputs().size())
    return "pipeline changed the number of graph outputs";

  runtime::TensorMap RunInputs;
  for (Value *In : G.getInputs()) {
    auto It = Inputs.find(In->getName());
    if (It == Inputs.end())
      return "pipeline added graph input '" + In->getName() + "'";
    RunInputs.insert(*It);
  }
  auto Actual = runtime::runReference(G, RunInputs);
  if (!Actual)
    return "interpreter error: " + llvm::toString(Actual.takeError());
  std::string Problems = compareOutputs(G, Original, *Actual, Expected);
  if (Cuda.Backend && llvm::StringRef(Config.Target).startswith("cuda")) {
    codegen::BackendOptions BO;
    BO.EmulateDeviceCode = DeviceCode;
    auto Plan = Cuda.Backend->compile(G, BO);
    if (!Plan) {
      ++Cuda.Refused;
      if (Verbose)
        llvm::outs() << "  cuda plan refused: "
                     << llvm::toString(Plan.takeError()) << "\n";
    } else {
      ++Cuda.Emulated;
      auto Emulated = (*Plan)->run(RunInputs);
      std::string Why = Emulated
                            ? compareOutputs(G, Original, *Emulated, Expected)
                            : "error " + llvm::toString(Emulated.takeError());
      if (!Why.empty())
        Problems += (Problems.empty() ? "" : "; ") + ("cuda plan: " + Why);
    }
  }
  return Problems;
}

std::string compareOutputs(const Graph &G, const Graph &Original,
                           const runtime::TensorMap &Actual,
                           const runtime::TensorMap &Expected) {
  std::string Problems;
  for (unsigned I = 0, E = G.getOutputs().size(); I != E; ++I) {
    const std::string &Name = Original.getOutputs()[I]->getName();
    const runtime::Tensor &Want = Expected.at(Name);
    auto It = Actual.find(G.getOutputs()[I]->getName());
    if (It == Actual.end()) {
      Problems += "output '" + Name + "': missing; ";
      continue;
    }
    runtime::Tensor Got = It->second.withLayout(Layout());
    if (Got.getShape() != Want.getShape() ||
        Got.getElementType() != Want.getElementType()) {
      Problems += "output '" + Name + "': type " + Got.getType().str() +
                  ", expected " + Want.getType().str() + "; ";
      continue;
    }
    double MaxErr = 0;
    bool Bad = false;
    for (int64_t J = 0, N = Got.getNumElements(); J != N; ++J) {
      double A = Got.getDouble(J), B = Want.getDouble(J);
      if (std::isnan(A) && std::isnan(B))
        continue;
      double Err = std::fabs(A - B);
      if (!(Err <= 1e-4 * std::fabs(B) + 1e-5))
        Bad = true;
      if (!(Err <= MaxErr))
        MaxErr = Err;
    }
    if (Bad)
      Problems += "output '" + Name + "': max error " +
                  llvm::formatv("{0:e}", MaxErr).str() + "; ";
  }
  if (!Problems.empty())
    Problems.erase(Problems.size() - 2);
  return Problems;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(FuzzCat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "strider differential fuzzer: random graphs through the layout "
      "pipeline, checked against the reference interpreter\n");

  uint32_t First = FirstSeed, Count = NumSeeds;
  if (!GraphFile.empty()) {
    First = OnlySeed >= 0 ? uint32_t(OnlySeed) : 0;
    Count = 1;
  } else if (OnlySeed >= 0) {
    First = uint32_t(OnlySeed);
    Count = 1;
  } else if (PrintGraph) {
    llvm::errs() << "strider-fuzz: --print needs --seed\n";
    return 2;
  }

  unsigned Passed = 0, Failed = 0;
  CudaTally Cuda;
  if (const codegen::Backend *B = codegen::lookupBackend("cuda-emulated")) {
    if (llvm::Error E = B->checkAvailable(codegen::BackendOptions()))
      llvm::consumeError(std::move(E));
    else
      Cuda.Backend = B;
  }
  for (uint32_t Seed = First; Seed != First + Count; ++Seed) {
    llvm::outs().flush(); // what was found survives a crash
    std::unique_ptr<Graph> Owned;
    std::string Text;
    if (!GraphFile.empty()) {
      auto Buffer = llvm::MemoryBuffer::getFile(GraphFile);
      if (!Buffer) {
        llvm::errs() << "strider-fuzz: cannot read '" << GraphFile
                     << "': " << Buffer.getError().message() << "\n";
        return 2;
      }
      Text = (*Buffer)->getBuffer().str();
      auto Parsed = parseGraph(Text, GraphFile);
      if (!Parsed) {
        llvm::errs() << "strider-fuzz: " << llvm::toString(Parsed.takeError())
                     << "\n";
        return 2;
      }
      Owned = std::move(*Parsed);
    } else {
      Owned = std::make_unique<Graph>("fuzz" + std::to_string(Seed));
      GraphGenerator(*Owned, Seed).generate();
      llvm::raw_string_ostream OS(Text);
      printGraph(*Owned, OS);
    }
    Graph &G = *Owned;
    if (PrintGraph)
      llvm::outs() << Text;

    auto FailAll = [&](const std::string &Why) {
      llvm::outs() << "seed " << Seed << ": " << Why << "\n";
      Failed += NumConfigurations;
    };
    if (llvm::Error E = verifyGraph(G)) {
      FailAll("generated graph does not verify: " +
              llvm::toString(std::move(E)));
      continue;
    }
    runtime::TensorMap Inputs = makeInputs(G, Seed);
    auto Expected = runtime::runReference(G, Inputs);
    if (!Expected) {
      FailAll("interpreter error on the generated graph: " +
              llvm::toString(Expected.takeError()));
      continue;
    }
    for (const Configuration &Config : Configurations) {
      std::string Problem =
          checkConfiguration(Config, Text, G, Inputs, *Expected, Cuda);
      if (Problem.empty()) {
        ++Passed;
        if (Verbose)
          llvm::outs() << "seed " << Seed << ", " << Config.name() << ": ok\n";
        continue;
      }
      ++Failed;
      llvm::outs() << "seed " << Seed << ", " << Config.name() << ": "
                   << Problem << "\n";
    }
    if (Verbose)
      llvm::outs() << "seed " << Seed << ": " << G.getNumNodes() << " nodes\n";
  }
  llvm::outs() << Count << " seeds, " << NumConfigurations
               << " configurations each: " << Passed << " passed, " << Failed
               << " failed\n";
  if (Cuda.Backend)
    llvm::outs() << "cuda-* configurations: " << Cuda.Emulated
                 << " planned for the CUDA backend and run on the host, "
                 << Cuda.Refused << " refused by its planner\n";
  return Failed ? 1 : 0;
}
