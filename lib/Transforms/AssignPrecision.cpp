//===- AssignPrecision.cpp - Mixed precision by minimum cut ---------------===//
//
// The assign-precision pass (include/strider/Transforms/Precision.h): a
// table says which ops prefer the half type (convolutions and matmuls) and
// which may follow it (elementwise, pooling, data movement); every other
// op, the graph inputs and the graph outputs stay f32. Each node of the
// table is a variable of a two-label problem (0 = f32, 1 = half) with its
// estimated time in each type; each value pays one Cast when its producer
// and readers disagree. The minimum cut gives the labelling; the graph is
// then rewritten: half nodes rebuilt with half results and half copies of
// their float constants, and one Cast per value and direction.
//
//===----------------------------------------------------------------------===//

#include "ConstantTensor.h"
#include "GraphRewrite.h"

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"
#include "strider/Layout/LayoutProblem.h"
#include "strider/Layout/Target.h"
#include "strider/Transforms/PipelineOptions.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/Precision.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace strider;
using layout::Cost;

namespace {

/// How an op of the table takes part.
enum class PrecisionClass : uint8_t {
  Compute, ///< Runs faster in half (tensor cores): convs, matmuls.
  Follow,  ///< Runs in either type at the cost of its memory traffic.
};

/// How an op takes part: its Ops.def traits (HalfCompute, HalfFollow,
/// HalfFirstOperand).
struct PrecisionRule {
  PrecisionClass Class;
  /// Only operand 0 carries data of the node's type (Resize: roi and
  /// scales keep their own types); otherwise every float operand does.
  bool FirstOperandOnly = false;
};

/// Ops a logarithm downstream reads the rounding of unchanged in kind:
/// arithmetic and data movement. With the convs and matmuls by constant
/// weights (a DFT basis, a mel filterbank) above them, they make up the
/// log-domain features of audio front ends, where half precision fails:
/// the spectrum's quiet bins come out of sums that cancel, half rounding
/// of their inputs gives them relative errors near 1, and power spectra
/// pass f16's range. Those nodes stay f32, as in frameworks that run the
/// front end outside autocast. A nonlinearity (Relu, Sigmoid, Softmax...)
/// stops the walk up from a Log: a network's own layers stay candidates.
constexpr OpId LogCarriers[] = {
    // Arithmetic, magnitudes and powers.
    OpId::Add, OpId::Sub, OpId::Mul, OpId::Div, OpId::Neg, OpId::Abs,
    OpId::Sqrt, OpId::Pow, OpId::Max, OpId::Min, OpId::Clip, OpId::Sum,
    OpId::Where,
    // Sums over bins or frames.
    OpId::ReduceSum, OpId::ReduceSumSquare, OpId::ReduceMean, OpId::ReduceL2,
    // Data movement.
    OpId::Relayout, OpId::Transpose, OpId::Concat, OpId::Split, OpId::Slice,
    OpId::Pad, OpId::Expand, OpId::Reshape, OpId::Flatten, OpId::Squeeze,
    OpId::Unsqueeze, OpId::Identity};

const PrecisionRule *lookupRule(const Node &N) {
  // One rule per op with a Half* trait, by OpId.
  static const std::vector<llvm::Optional<PrecisionRule>> Rules = [] {
    std::vector<llvm::Optional<PrecisionRule>> R;
    for (const OpInfo &I : getAllOps()) {
      const bool First = I.hasTrait(optrait::HalfFirstOperand);
      if (I.hasTrait(optrait::HalfCompute))
        R.push_back(PrecisionRule{PrecisionClass::Compute, First});
      else if (I.hasTrait(optrait::HalfFollow))
        R.push_back(PrecisionRule{PrecisionClass::Follow, First});
      else
        R.push_back(llvm::None);
    }
    return R;
  }();
  if (N.isOpaque())
    return nullptr;
  const llvm::Optional<PrecisionRule> &R = Rules[size_t(N.getOpId())];
  return R ? &*R : nullptr;
}

/// Elements of \p T with unknown dims counted as 1.
int64_t countElements(const TensorType &T) {
  if (!T.hasRank())
    return 1;
  int64_t N = 1;
  for (const Dim &D : T.getShape())
    N *= D.isStatic() ? D.getSize() : 1;
  return N;
}

int64_t getDimOr(const Value *V, unsigned I, int64_t Default) {
  const TensorType &T = V->getType();
  if (!T.hasRank() || I >= T.getRank() || !T.getDim(I).isStatic())
    return Default;
  return T.getDim(I).getSize();
}

bool isF32(const Value *V) {
  return V && V->getType().getElementType() == ElementType::F32;
}

bool isConstant(const Value *V) {
  return V && folding::getConstantDataRef(V) != nullptr;
}

/// Whether operand \p I of \p N carries data of the node's type.
bool isDataOperand(const Node &N, const PrecisionRule &R, unsigned I) {
  if (!N.hasOperand(I) || !isFloatingPoint(N.getOperand(I)->getType()
                                               .getElementType()))
    return false;
  return !R.FirstOperandOnly || I == 0;
}

/// Multiply-adds times two of a conv or matmul node (unknown dims as 1).
int64_t estimateFlops(const Node &N) {
  const Value *Y = N.hasResult(0) ? N.getResult(0) : nullptr;
  if (!Y || !N.hasOperand(0) || !N.hasOperand(1))
    return 0;
  const Value *A = N.getOperand(0), *B = N.getOperand(1);
  const int64_t WElems = countElements(B->getType());
  switch (N.getOpId()) {
  case OpId::Conv:
    // Each output element reads C/G x taps weights: |W| / K.
    return 2 * countElements(Y->getType()) * WElems /
           std::max<int64_t>(getDimOr(B, 0, 1), 1);
  case OpId::ConvTranspose:
    // Each input element scatters into K/G x taps outputs: |W| / C.
    return 2 * countElements(A->getType()) * WElems /
           std::max<int64_t>(getDimOr(B, 0, 1), 1);
  case OpId::Gemm: {
    const unsigned KDim = N.getIntAttr("transA", 0) ? 0 : 1;
    return 2 * countElements(Y->getType()) * getDimOr(A, KDim, 1);
  }
  case OpId::MatMul: {
    const TensorType &AT = A->getType();
    const unsigned Rank = AT.hasRank() ? AT.getRank() : 0;
    return 2 * countElements(Y->getType()) *
           (Rank ? getDimOr(A, Rank - 1, 1) : 1);
  }
  default:
    return 0;
  }
}

Cost saturate(double Picoseconds) {
  if (!(Picoseconds > 0))
    return 0;
  return Picoseconds >= double(layout::MaxFiniteCost)
             ? layout::MaxFiniteCost
             : Cost(Picoseconds);
}

/// The two-label problem and the graph's side of it.
class PrecisionAssigner {
public:
  PrecisionAssigner(Graph &G, ElementType Half,
                    const layout::TargetDescription &T)
      : G(G), Half(Half), T(T) {}

  llvm::Expected<PrecisionReport> run();

private:
  Graph &G;
  ElementType Half;
  const layout::TargetDescription &T;
  layout::LayoutProblem Problem;
  unsigned Anchor = 0; ///< Fixed to f32: inputs, outputs, other ops.
  llvm::DenseMap<const Node *, unsigned> VarOf;
  std::vector<uint8_t> Labels;
  /// Half nodes after rebuilding.
  llvm::DenseMap<const Node *, const PrecisionRule *> HalfNodes;

  bool isCandidate(const Node &N, const PrecisionRule &R) const;
  /// Marks in FeedsLog the nodes whose results a Log reads through
  /// LogCarriers and convs/matmuls by constant weights.
  void findLogFeeders();
  llvm::DenseSet<const Node *> FeedsLog;
  unsigned LogFeeders = 0; ///< Candidates of the table kept f32 for a Log.
  Cost getNodeCost(const Node &N, const PrecisionRule &R, bool InHalf) const;
  Cost getCastCost(const Value *V) const;
  /// The label of \p V's producer, and of reader \p U (operand \p I).
  unsigned producerVar(const Value *V) const;
  unsigned readerVar(const Node &U, unsigned I) const;
  void buildProblem();
  llvm::Error rewrite(PrecisionReport &Report);
  Value *getHalfConstant(Value *C, Node &Before);
  llvm::DenseMap<Value *, Value *> HalfConstants;
  std::vector<Value *> ConvertedOrder; ///< HalfConstants' keys, in order.
};

bool PrecisionAssigner::isCandidate(const Node &N,
                                    const PrecisionRule &R) const {
  bool AnyResult = false;
  for (unsigned I = 0; I < N.getNumResults(); ++I) {
    if (!N.hasResult(I))
      continue;
    const ElementType E = N.getResult(I)->getType().getElementType();
    if (isFloatingPoint(E) && E != ElementType::F32)
      return false;
    AnyResult |= E == ElementType::F32;
  }
  if (!AnyResult)
    return false;
  for (unsigned I = 0; I < N.getNumOperands(); ++I)
    if (isDataOperand(N, R, I) && !isF32(N.getOperand(I)))
      return false;
  return true;
}

Cost PrecisionAssigner::getNodeCost(const Node &N, const PrecisionRule &R,
                                    bool InHalf) const {
  const double Elt = InHalf ? 2.0 : 4.0;
  double Bytes = 0;
  for (unsigned I = 0; I < N.getNumOperands(); ++I)
    if (isDataOperand(N, R, I))
      Bytes += double(countElements(N.getOperand(I)->getType())) * Elt;
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (N.hasResult(I) && isF32(N.getResult(I)))
      Bytes += double(countElements(N.getResult(I)->getType())) * Elt;
  // GB/s = bytes per ns: bytes * 1000 / GBs picoseconds.
  double Ps = Bytes * 1000.0 / T.MemoryGBs;
  if (R.Class == PrecisionClass::Compute) {
    // The target's peak is the TF32 tensor-core rate. Half tensor cores
    // run twice that; a conv or matmul left in f32 under --precision=fp16
    // runs with plain FMA math (no TF32), about an eighth of it on A100
    // and H100.
    const double GFlops = T.PeakGFlops * (InHalf ? 2.0 : 0.125);
    Ps += double(estimateFlops(N)) * 1000.0 / GFlops;
  }
  return saturate(Ps);
}

Cost PrecisionAssigner::getCastCost(const Value *V) const {
  // One kernel reading f32 and writing half (or the reverse).
  const double Bytes = double(countElements(V->getType())) * 6.0;
  return saturate(T.KernelLaunchNs * 1000.0 + Bytes * 1000.0 / T.MemoryGBs);
}

unsigned PrecisionAssigner::producerVar(const Value *V) const {
  const Node *D = V->getDefiningNode();
  auto It = D ? VarOf.find(D) : VarOf.end();
  return It == VarOf.end() ? Anchor : It->second;
}

unsigned PrecisionAssigner::readerVar(const Node &U, unsigned I) const {
  auto It = VarOf.find(&U);
  if (It == VarOf.end())
    return Anchor;
  const PrecisionRule *R = lookupRule(U);
  return isDataOperand(U, *R, I) ? It->second : Anchor;
}

void PrecisionAssigner::findLogFeeders() {
  std::vector<const Value *> Work;
  for (const Node *N : G.nodes())
    if (N->getOpId() == OpId::Log && N->hasOperand(0))
      Work.push_back(N->getOperand(0));
  while (!Work.empty()) {
    const Value *V = Work.back();
    Work.pop_back();
    const Node *D = V->getDefiningNode();
    if (!D || isConstant(V) || FeedsLog.count(D))
      continue;
    const PrecisionRule *R = lookupRule(*D);
    const bool Carrier = llvm::is_contained(LogCarriers, D->getOpId()) ||
                         (R && R->Class == PrecisionClass::Compute &&
                          llvm::any_of(D->getOperands(), [](const Value *O) {
                            return isConstant(O);
                          }));
    if (!Carrier)
      continue;
    FeedsLog.insert(D);
    for (const Value *O : D->getOperands())
      if (O && isFloatingPoint(O->getType().getElementType()))
        Work.push_back(O);
  }
}

void PrecisionAssigner::buildProblem() {
  Anchor = Problem.addVariable({0, layout::InfiniteCost});
  findLogFeeders();
  for (const Node *N : G.nodes()) {
    const PrecisionRule *R = lookupRule(*N);
    if (!R || !isCandidate(*N, *R))
      continue;
    if (FeedsLog.count(N)) {
      ++LogFeeders;
      continue;
    }
    VarOf[N] = Problem.addVariable(
        {getNodeCost(*N, *R, false), getNodeCost(*N, *R, true)});
  }
  // Each f32 activation: one Cast when its producer and readers disagree.
  auto AddValue = [&](const Value *V) {
    if (!isF32(V) || isConstant(V))
      return;
    std::vector<unsigned> Vars = {producerVar(V)};
    for (const Use &U : V->getUses())
      Vars.push_back(readerVar(*U.User, U.OperandIndex));
    if (G.isGraphOutput(V))
      Vars.push_back(Anchor);
    std::sort(Vars.begin(), Vars.end());
    Vars.erase(std::unique(Vars.begin(), Vars.end()), Vars.end());
    if (Vars.size() >= 2)
      Problem.addDisagreement(Vars, getCastCost(V));
  };
  for (const Value *In : G.getInputs())
    AddValue(In);
  for (const Node *N : G.nodes())
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (N->hasResult(I))
        AddValue(N->getResult(I));
}

Value *PrecisionAssigner::getHalfConstant(Value *C, Node &Before) {
  auto It = HalfConstants.find(C);
  if (It != HalfConstants.end())
    return It->second;
  TensorDataRef D = folding::getConstantDataRef(C);
  const TensorType HalfType = D->getType().withElementType(Half);
  const int64_t N = D->getNumElements();
  const size_t Size = getElementByteSize(Half);
  std::vector<uint8_t> Bytes(size_t(N) * Size);
  for (int64_t I = 0; I < N; ++I)
    folding::storeFloat(Half, D->getDouble(I), Bytes.data() + size_t(I) * Size);
  Value *New = rewrite::createConstant(
      G, llvm::cantFail(TensorData::create(HalfType, std::move(Bytes))),
      C->getType().withElementType(Half),
      C->getName() + "_" + getElementTypeName(Half).str(),
      C->getDefiningNode()->getLoc(), &Before);
  HalfConstants[C] = New;
  ConvertedOrder.push_back(C);
  return New;
}

llvm::Error PrecisionAssigner::rewrite(PrecisionReport &Report) {
  // Half nodes: half copies of their float constants, half results.
  for (Node *N : G.getNodeList()) {
    auto It = VarOf.find(N);
    if (It == VarOf.end())
      continue;
    const PrecisionRule *R = lookupRule(*N);
    if (!Labels[It->second]) {
      ++Report.FloatNodes;
      continue;
    }
    for (unsigned I = 0; I < N->getNumOperands(); ++I)
      if (isDataOperand(*N, *R, I) && isConstant(N->getOperand(I)))
        N->setOperand(I, getHalfConstant(N->getOperand(I), *N));
    std::vector<TensorType> Types;
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      Types.push_back(N->hasResult(I) && isF32(N->getResult(I))
                          ? N->getResult(I)->getType().withElementType(Half)
                          : (N->hasResult(I) ? N->getResult(I)->getType()
                                             : TensorType()));
    Node *New = G.rebuildNode(N, Types);
    HalfNodes[New] = R;
    ++Report.HalfNodes;
    if (R->Class == PrecisionClass::Compute)
      ++Report.ComputeNodes;
  }

  // Casts: per value, readers of the other type share one conversion.
  std::vector<Node *> Order = G.getNodeList();
  llvm::DenseMap<const Node *, size_t> Position;
  for (size_t I = 0; I < Order.size(); ++I)
    Position[Order[I]] = I;
  auto ReadsHalf = [&](const Node &U, unsigned I) {
    auto It = HalfNodes.find(&U);
    return It != HalfNodes.end() && isDataOperand(U, *It->second, I);
  };
  std::vector<Value *> Values(G.getInputs().begin(), G.getInputs().end());
  for (Node *N : Order)
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (N->hasResult(I))
        Values.push_back(N->getResult(I));
  for (Value *V : Values) {
    const ElementType E = V->getType().getElementType();
    if ((E != ElementType::F32 && E != Half) || isConstant(V))
      continue;
    const bool FromHalf = V->getDefiningNode() &&
                          HalfNodes.count(V->getDefiningNode());
    if (E == Half && !FromHalf)
      continue; // A half value the graph had before: not ours.
    std::vector<Use> Other;
    for (const Use &U : V->getUses())
      if (ReadsHalf(*U.User, U.OperandIndex) != FromHalf)
        Other.push_back(U);
    const bool Output = FromHalf && G.isGraphOutput(V);
    if (Other.empty() && !Output)
      continue;
    const ElementType To = FromHalf ? ElementType::F32 : Half;
    Node *Before = nullptr;
    for (const Use &U : Other)
      if (!Before || Position.lookup(U.User) < Position.lookup(Before))
        Before = U.User;
    const TensorType CastType = V->getType().withElementType(To);
    std::string Name;
    if (Output) {
      // The graph output keeps its name and its f32 type.
      Name = V->getName();
      G.renameValue(V, G.makeUniqueName(Name + "_" +
                                        getElementTypeName(Half).str()));
    } else {
      Name = G.makeUniqueName(V->getName() + "_" +
                              getElementTypeName(To).str());
    }
    Node *Cast = G.createNode(OpId::Cast, {V}, {Name}, {CastType}, Before);
    Cast->setAttr("to", Attribute::getInt(toOnnxDataType(To)));
    Cast->setLoc(V->getDefiningNode() ? V->getDefiningNode()->getLoc()
                                      : Before ? Before->getLoc()
                                               : Location{G.getSourceFile(),
                                                          V->getName()});
    Value *Converted = Cast->getResult(0);
    CastRecord Rec;
    Rec.Value = Output ? Name : V->getName();
    Rec.From = E;
    Rec.To = To;
    Rec.Elements = V->getType().getNumElements().getValueOr(0);
    for (const Use &U : Other) {
      U.User->setOperand(U.OperandIndex, Converted);
      Rec.Readers += (Rec.Readers.empty() ? "" : ",") +
                     (U.User->getNumResults() && U.User->hasResult(0)
                          ? U.User->getResult(0)->getName()
                          : U.User->getOpType().str());
    }
    if (Output) {
      for (unsigned I = 0; I < G.getOutputs().size(); ++I)
        if (G.getOutputs()[I] == V)
          G.setOutput(I, Converted);
      Rec.Readers += std::string(Rec.Readers.empty() ? "" : ",") +
                     "graph output";
    }
    Report.Casts.push_back(std::move(Rec));
  }
  // The f32 originals of converted constants, where nothing else reads
  // them.
  for (Value *C : ConvertedOrder)
    if (!C->hasUses() && !G.isGraphOutput(C))
      G.eraseNode(C->getDefiningNode());
  return llvm::Error::success();
}

llvm::Expected<PrecisionReport> PrecisionAssigner::run() {
  PrecisionReport Report;
  Report.Half = Half;
  buildProblem();
  auto Solution = layout::createMinCutSolver()->solve(Problem);
  if (!Solution)
    return makeGraphError(G, "precision assignment: " +
                                 llvm::toString(Solution.takeError()));
  Labels = std::move(Solution->Labels);
  Report.LogFeeders = LogFeeders;
  if (llvm::Error E = rewrite(Report))
    return E;
  return Report;
}

} // namespace

llvm::Optional<ElementType> strider::parseHalfPrecision(llvm::StringRef Name) {
  return llvm::StringSwitch<llvm::Optional<ElementType>>(Name)
      .Case("fp32", ElementType::Unknown)
      .Case("fp16", ElementType::F16)
      .Case("bf16", ElementType::BF16)
      .Default(llvm::None);
}

std::string PrecisionReport::summary() const {
  if (Half == ElementType::Unknown)
    return "precision f32";
  int64_t Bytes = 0;
  for (const CastRecord &C : Casts)
    Bytes += C.Elements * int64_t(getElementByteSize(C.To));
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << "precision " << getElementTypeName(Half) << ": " << HalfNodes
     << " nodes in " << getElementTypeName(Half) << " (" << ComputeNodes
     << " convs/matmuls), " << FloatNodes << " kept f32";
  if (LogFeeders)
    OS << " (and " << LogFeeders << " feeding a Log)";
  OS << ", " << Casts.size() << (Casts.size() == 1 ? " cast (" : " casts (")
     << Bytes << " bytes written)";
  return OS.str();
}

void PrecisionReport::print(llvm::raw_ostream &OS) const {
  OS << summary() << "\n";
  for (const CastRecord &C : Casts)
    OS << "  cast " << C.Value << " " << getElementTypeName(C.From) << " -> "
       << getElementTypeName(C.To) << " (" << C.Elements
       << " elements) for " << C.Readers << "\n";
}

llvm::Expected<PrecisionReport>
strider::assignPrecision(Graph &G, const PrecisionOptions &Opts) {
  PrecisionReport Empty;
  if (Opts.Half == ElementType::Unknown)
    return Empty;
  assert((Opts.Half == ElementType::F16 || Opts.Half == ElementType::BF16) &&
         "the half type is f16 or bf16");
  const layout::TargetDescription *T =
      Opts.Target ? Opts.Target : layout::lookupTarget("cuda-sm90");
  assert(T && "cuda-sm90 is a built-in target");
  return PrecisionAssigner(G, Opts.Half, *T).run();
}

namespace {
class AssignPrecisionPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "assign-precision"; }
  void configure(const PipelineOptions &Opts) override {
    Options = Opts.Precision;
    Reports = Opts.PrecisionReports;
  }
  llvm::Error run(Graph &G) override {
    auto R = assignPrecision(G, Options);
    if (!R)
      return R.takeError();
    if (Reports)
      Reports->push_back(std::move(*R));
    return llvm::Error::success();
  }

private:
  PrecisionOptions Options;
  std::vector<PrecisionReport> *Reports = nullptr;
};
} // namespace

std::unique_ptr<Pass> strider::createAssignPrecisionPass() {
  return std::make_unique<AssignPrecisionPass>();
}
