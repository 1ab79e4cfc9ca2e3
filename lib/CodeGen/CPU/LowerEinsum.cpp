//===- LowerEinsum.cpp - Einsum on the CPU backend ------------------------===//
//
// f32 Einsum on the backend's kernels. Every tensor
// is a strided view of its labels (a label repeated in one operand walks
// the diagonal; dims broadcast from 1 are read as absent). Labels that one
// operand has and neither the other nor the result are summed out first
// (runReduce); two operands are then contracted as a batch of GEMMs whose
// rows, columns and sums each run along labels that nest into one stride,
// read in place through row and column strides, or from a copy in GEMM
// order (copyStrided: tiled transpositions) where the summed labels do not
// nest (without rows and columns, a loop of dot products instead); one operand
// is a strided copy; more than two are contracted left to right through
// intermediates that keep the labels still needed. Other element types run the
// reference kernel.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "Parallel.h"
#include "ProgramImpl.h"

#include "strider/IR/Einsum.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <functional>

using namespace strider;
using namespace strider::cpu;

namespace {

/// One dim of a strided view: its label, size and element stride.
struct Axis {
  unsigned Label;
  int64_t Size, Stride;
};
using View = llvm::SmallVector<Axis, 6>;
using LabelList = llvm::SmallVector<unsigned, 6>;

/// A tensor as the stages read it: its buffer and the view of its labels.
struct Operand {
  BufferId Buffer = -1;
  View Axes;
};

const Axis *findAxis(const View &V, unsigned Label) {
  for (const Axis &A : V)
    if (A.Label == Label)
      return &A;
  return nullptr;
}

bool hasLabel(const View &V, unsigned Label) {
  return findAxis(V, Label) != nullptr;
}

int64_t strideOf(const View &V, unsigned Label) {
  const Axis *A = findAxis(V, Label);
  return A ? A->Stride : 0;
}

/// The labels of \p V, the largest stride first.
LabelList physicalOrder(const View &V) {
  View Sorted = V;
  std::stable_sort(
      Sorted.begin(), Sorted.end(),
      [](const Axis &A, const Axis &B) { return A.Stride > B.Stride; });
  LabelList Out;
  for (const Axis &A : Sorted)
    Out.push_back(A.Label);
  return Out;
}

/// The labels of \p Order that \p Keep holds, in order.
LabelList filter(llvm::ArrayRef<unsigned> Order,
                 llvm::ArrayRef<unsigned> Keep) {
  LabelList Out;
  for (unsigned L : Order)
    if (llvm::is_contained(Keep, L))
      Out.push_back(L);
  return Out;
}

/// Whether the axes of \p V for \p Labels (outermost first) nest: each
/// stride is the next one's times its size, so one stride walks them all.
bool nests(const View &V, llvm::ArrayRef<unsigned> Labels) {
  for (size_t I = 0; I + 1 < Labels.size(); ++I) {
    const Axis *Outer = findAxis(V, Labels[I]);
    const Axis *Inner = findAxis(V, Labels[I + 1]);
    if (Outer->Stride != Inner->Stride * Inner->Size)
      return false;
  }
  return true;
}

/// Whether \p V covers a dense block of its buffer.
bool isDense(const View &V) {
  LabelList Order = physicalOrder(V);
  return nests(V, Order) &&
         (Order.empty() || findAxis(V, Order.back())->Stride == 1);
}

/// Collects the stages of one Einsum node; the step runs them in order.
class EinsumPlanner {
public:
  using Stage = std::function<void(Frame &Fr, int Threads)>;

  EinsumPlanner(LoweringContext &L, llvm::ArrayRef<int64_t> Sizes)
      : L(L), Sizes(Sizes.begin(), Sizes.end()) {}

  std::vector<Stage> Stages;
  std::vector<BufferId> Scratch;
  int64_t Flops = 0;
  /// The kernels the stages run, in order, each once: `einsum.copy+gemm`.
  std::string kernelName() const {
    std::string Name = "einsum.";
    for (size_t I = 0; I < Kinds.size(); ++I)
      Name += (I ? "+" : "") + std::string(Kinds[I]);
    return Name;
  }

  /// A dense view over \p Order (outermost first).
  View dense(llvm::ArrayRef<unsigned> Order) const {
    View V;
    int64_t Stride = 1;
    for (unsigned L : llvm::reverse(Order)) {
      V.insert(V.begin(), Axis{L, Sizes[L], Stride});
      Stride *= Sizes[L];
    }
    return V;
  }

  int64_t volume(llvm::ArrayRef<unsigned> Labels) const {
    int64_t N = 1;
    for (unsigned L : Labels)
      N *= Sizes[L];
    return N;
  }

  /// A scratch tensor dense over \p Order.
  Operand scratch(llvm::ArrayRef<unsigned> Order) {
    BufferId B = L.defineScratch(volume(Order) * int64_t(sizeof(float)));
    Scratch.push_back(B);
    return {B, dense(Order)};
  }

  /// Zeros over \p Count floats of \p Dst.
  void zero(BufferId Dst, int64_t Count) {
    addKind("zero");
    Stages.push_back([=](Frame &Fr, int) {
      std::fill(Fr.f32(Dst), Fr.f32(Dst) + Count, 0.0f);
    });
  }

  /// To = From, both over the same labels.
  void copy(const Operand &From, const Operand &To) {
    llvm::SmallVector<int64_t, 6> Shape, SS, DS;
    for (const Axis &A : To.Axes) {
      Shape.push_back(A.Size);
      SS.push_back(strideOf(From.Axes, A.Label));
      DS.push_back(A.Stride);
    }
    const BufferId Src = From.Buffer, Dst = To.Buffer;
    addKind("copy");
    Stages.push_back([=](Frame &Fr, int Threads) {
      copyStrided(int(Shape.size()), Shape.data(), Fr.bytes(Src), SS.data(),
                  Fr.bytes(Dst), DS.data(), sizeof(float), Threads);
    });
  }

  /// To = From summed over the labels To lacks; To is dense. Read in place
  /// when From is dense with the summed labels adjacent and the kept ones
  /// in To's order; else From is first copied to [kept..., summed...].
  void sumInto(const Operand &From, const Operand &To) {
    const LabelList Keep = physicalOrder(To.Axes);
    LabelList Summed;
    for (unsigned Lb : physicalOrder(From.Axes))
      if (!hasLabel(To.Axes, Lb))
        Summed.push_back(Lb);
    BufferId Src = From.Buffer;
    int64_t Outer = volume(Keep), Len = volume(Summed), Inner = 1;
    bool InPlace = false;
    if (isDense(From.Axes)) {
      const LabelList Order = physicalOrder(From.Axes);
      llvm::ArrayRef<unsigned> O = Order;
      const size_t Begin =
          size_t(llvm::find(Order, Summed.front()) - O.begin());
      const size_t End = Begin + Summed.size();
      if (End <= O.size() &&
          O.slice(Begin, Summed.size()) == llvm::makeArrayRef(Summed) &&
          filter(Order, Keep) == Keep) {
        InPlace = true;
        Outer = volume(O.take_front(Begin));
        Inner = volume(O.drop_front(End));
      }
    }
    if (!InPlace) {
      LabelList Order = Keep;
      Order.append(Summed.begin(), Summed.end());
      Operand Copy = scratch(Order);
      copy(From, Copy);
      Src = Copy.Buffer;
    }
    const BufferId Dst = To.Buffer;
    addKind("reduce");
    Stages.push_back([=](Frame &Fr, int Threads) {
      runReduce(ReduceKind::Sum, Outer, Len, Inner, Fr.f32(Src), Fr.f32(Dst),
                Threads);
    });
  }

  /// Out = the contraction of A and B (Out's labels are theirs).
  void contract(Operand A, Operand B, const Operand &Out);

private:
  void addKind(const char *Kind) {
    if (!llvm::is_contained(Kinds, llvm::StringRef(Kind)))
      Kinds.push_back(Kind);
  }

  LoweringContext &L;
  llvm::SmallVector<int64_t, 8> Sizes;
  llvm::SmallVector<llvm::StringRef, 3> Kinds;
};

/// One label looped over outside the GEMMs, with its stride in A, B and
/// the result (0 where absent).
struct LoopAxis {
  int64_t Size, SA, SB, SC;
};

/// GEMMs of at most this many flops run one per thread when there are
/// enough of them; larger ones split their own tiles over the threads.
constexpr int64_t SmallGemmFlops = int64_t(1) << 22;

void EinsumPlanner::contract(Operand A, Operand B, const Operand &Out) {
  // Labels of both operands and the result are looped over (batch), those
  // of one operand and the result are GEMM rows (A) or columns (B), those
  // of both operands only are summed by the GEMM; those of one operand
  // only are summed out of it first.
  LabelList Loop, M, N, K;
  bool SumA = false, SumB = false;
  for (unsigned Lb = 0; Lb < Sizes.size(); ++Lb) {
    const bool InA = hasLabel(A.Axes, Lb), InB = hasLabel(B.Axes, Lb),
               InC = hasLabel(Out.Axes, Lb);
    if (InA && InB)
      (InC ? Loop : K).push_back(Lb);
    else if (InA && InC)
      M.push_back(Lb);
    else if (InB && InC)
      N.push_back(Lb);
    else if (InA)
      SumA = true;
    else if (InB)
      SumB = true;
  }
  const LabelList OutOrder = physicalOrder(Out.Axes);
  // C's unit stride should run along its columns: the operand with the
  // result's innermost label is B.
  if (!OutOrder.empty() && llvm::is_contained(M, OutOrder.back())) {
    std::swap(A, B);
    std::swap(M, N);
    std::swap(SumA, SumB);
  }
  const LabelList LoopOrder = filter(OutOrder, Loop);
  const LabelList MOrder = filter(OutOrder, M), NOrder = filter(OutOrder, N);
  // The order of the summed labels: one in which both operands nest if
  // there is one; an operand rebuilt anyway takes the other's order.
  LabelList KOrder = filter(physicalOrder(A.Axes), K);
  if (SumA && !SumB) {
    KOrder = filter(physicalOrder(B.Axes), K);
  } else if (!SumA && !SumB &&
             !(nests(A.Axes, KOrder) && nests(B.Axes, KOrder))) {
    LabelList FromB = filter(physicalOrder(B.Axes), K);
    if ((nests(A.Axes, FromB) && nests(B.Axes, FromB)) ||
        !nests(A.Axes, KOrder))
      KOrder = FromB;
  }
  LabelList ACanon = LoopOrder, BCanon = LoopOrder;
  ACanon.append(MOrder.begin(), MOrder.end());
  ACanon.append(KOrder.begin(), KOrder.end());
  BCanon.append(KOrder.begin(), KOrder.end());
  BCanon.append(NOrder.begin(), NOrder.end());
  auto Prepare = [&](Operand &X, bool Sum, const LabelList &Canon) {
    if (!Sum && nests(X.Axes, KOrder))
      return;
    Operand T = scratch(Canon);
    if (Sum)
      sumInto(X, T);
    else
      copy(X, T);
    X = T;
  };
  Prepare(A, SumA, ACanon);
  Prepare(B, SumB, BCanon);

  // Rows: the innermost labels of M that nest in both A and the result;
  // columns likewise; the other labels of M and N are looped over.
  auto Split = [&](const LabelList &Order, const View &Src, LabelList &Set,
                   llvm::SmallVectorImpl<LoopAxis> &Loops, bool IsA) {
    size_t Start = Order.size();
    if (Start)
      --Start;
    while (Start > 0) {
      unsigned Pair[2] = {Order[Start - 1], Order[Start]};
      if (!nests(Src, Pair) || !nests(Out.Axes, Pair))
        break;
      --Start;
    }
    Set.assign(Order.begin() + Start, Order.end());
    for (size_t I = 0; I < Start; ++I) {
      const int64_t S = strideOf(Src, Order[I]);
      Loops.push_back({Sizes[Order[I]], IsA ? S : 0, IsA ? 0 : S,
                       strideOf(Out.Axes, Order[I])});
    }
  };
  llvm::SmallVector<LoopAxis, 6> Loops;
  for (unsigned Lb : LoopOrder)
    Loops.push_back({Sizes[Lb], strideOf(A.Axes, Lb), strideOf(B.Axes, Lb),
                     strideOf(Out.Axes, Lb)});
  LabelList Rows, Cols;
  Split(MOrder, A.Axes, Rows, Loops, /*IsA=*/true);
  Split(NOrder, B.Axes, Cols, Loops, /*IsA=*/false);

  const int64_t GM = volume(Rows), GN = volume(Cols), GK = volume(KOrder);
  const int64_t ARow = Rows.empty() ? 0 : strideOf(A.Axes, Rows.back());
  const int64_t ACol = KOrder.empty() ? 1 : strideOf(A.Axes, KOrder.back());
  const int64_t BRow = KOrder.empty() ? 0 : strideOf(B.Axes, KOrder.back());
  const int64_t BCol = Cols.empty() ? 1 : strideOf(B.Axes, Cols.back());
  const int64_t LdM = Rows.empty() ? 0 : strideOf(Out.Axes, Rows.back());
  const int64_t LdN = Cols.empty() ? 1 : strideOf(Out.Axes, Cols.back());
  int64_t Items = 1;
  for (const LoopAxis &X : Loops)
    Items *= X.Size;
  Flops += 2 * Items * GM * GN * GK;
  const BufferId AB = A.Buffer, BB = B.Buffer, CB = Out.Buffer;
  // Where item \p Item of the loops starts in A, B and C.
  auto Offsets = [Loops](int64_t Item, int64_t &OA, int64_t &OB, int64_t &OC) {
    OA = OB = OC = 0;
    for (size_t I = Loops.size(); I-- > 0;) {
      const int64_t Idx = Item % Loops[I].Size;
      Item /= Loops[I].Size;
      OA += Idx * Loops[I].SA;
      OB += Idx * Loops[I].SB;
      OC += Idx * Loops[I].SC;
    }
  };
  if (GM == 1 && GN == 1) {
    // One sum per result element (dot products, elementwise products): a
    // plain loop, summed in double, costs less than a GEMM call each.
    addKind("dot");
    Stages.push_back([=](Frame &Fr, int Threads) {
      const float *Ap = Fr.f32(AB), *Bp = Fr.f32(BB);
      float *Cp = Fr.f32(CB);
      constexpr int64_t Block = 256;
      parallelFor((Items + Block - 1) / Block, Threads, [&](int64_t Blk) {
        const int64_t End = std::min(Items, (Blk + 1) * Block);
        for (int64_t Item = Blk * Block; Item < End; ++Item) {
          int64_t OA, OB, OC;
          Offsets(Item, OA, OB, OC);
          double Sum = 0;
          for (int64_t I = 0; I < GK; ++I)
            Sum += double(Ap[OA + I * ACol]) * double(Bp[OB + I * BRow]);
          Cp[OC] = float(Sum);
        }
      });
    });
    return;
  }
  addKind("gemm");
  Stages.push_back([=](Frame &Fr, int Threads) {
    const float *Ap = Fr.f32(AB), *Bp = Fr.f32(BB);
    float *Cp = Fr.f32(CB);
    auto RunItem = [&](int64_t Item, int GemmThreads) {
      int64_t OA, OB, OC;
      Offsets(Item, OA, OB, OC);
      runGemmOfActivations(Ap + OA, ARow, ACol, Bp + OB, BRow, BCol, GM, GN, GK,
                           Cp + OC, LdM, LdN, Epilogue(), GemmThreads);
    };
    if (Threads > 1 && Items >= Threads && 2 * GM * GN * GK <= SmallGemmFlops) {
      parallelFor(Items, Threads, [&](int64_t Item) { RunItem(Item, 1); });
      return;
    }
    for (int64_t Item = 0; Item < Items; ++Item)
      RunItem(Item, Threads);
  });
}

} // namespace

bool cpu::lowerEinsum(LoweringContext &L, const Node &N, const FusedTail &) {
  const Value *Y = N.getResult(0);
  const unsigned NumOps = N.getNumOperands();
  if (NumOps < 1 || Y->getType().getElementType() != ElementType::F32)
    return false;
  llvm::SmallVector<unsigned, 2> Ranks;
  llvm::SmallVector<llvm::SmallVector<int64_t, 6>, 2> Shapes;
  for (unsigned I = 0; I < NumOps; ++I) {
    const Value *X = N.getOperand(I);
    if (!X || X->getType().getElementType() != ElementType::F32)
      return false;
    Ranks.push_back(X->getType().getRank());
    Shapes.push_back(X->getType().getStaticShape());
  }
  // A malformed equation is the reference kernel's to report.
  auto Eq = parseEinsum(N.getStringAttr("equation", ""));
  if (!Eq) {
    llvm::consumeError(Eq.takeError());
    return false;
  }
  auto Bound = bindEinsum(*Eq, Ranks);
  if (!Bound) {
    llvm::consumeError(Bound.takeError());
    return false;
  }
  llvm::SmallVector<llvm::ArrayRef<int64_t>, 2> ShapeRefs(Shapes.begin(),
                                                          Shapes.end());
  llvm::SmallVector<int64_t, 8> Sizes;
  if (llvm::Error E = resolveEinsumSizes(*Bound, ShapeRefs, Sizes)) {
    llvm::consumeError(std::move(E));
    return false;
  }
  // The view of a tensor: labels of size 1 and dims broadcast from 1 are
  // left out, a repeated label adds its strides.
  auto ViewOf = [&](const TensorType &T, llvm::ArrayRef<unsigned> Labels) {
    auto Shape = T.getStaticShape();
    auto Strides = getStrides(T);
    View V;
    for (unsigned D = 0; D < Labels.size(); ++D) {
      const unsigned Lb = Labels[D];
      if (Sizes[Lb] == 1 || Shape[D] != Sizes[Lb])
        continue;
      auto It = llvm::find_if(V, [&](const Axis &A) { return A.Label == Lb; });
      if (It != V.end())
        It->Stride += Strides[D];
      else
        V.push_back({Lb, Sizes[Lb], Strides[D]});
    }
    return V;
  };
  std::vector<BufferId> Reads;
  llvm::SmallVector<Operand, 2> Ops;
  for (unsigned I = 0; I < NumOps; ++I) {
    Ops.push_back({L.getBuffer(N.getOperand(I)),
                   ViewOf(N.getOperand(I)->getType(), Bound->Operands[I])});
    Reads.push_back(Ops.back().Buffer);
  }
  Operand Out{L.defineBuffer(Y), ViewOf(Y->getType(), Bound->Result)};
  EinsumPlanner Plan(L, Sizes);
  if (llvm::is_contained(Sizes, 0)) {
    // An empty label: nothing to sum, the result (if any) is zeros.
    Plan.zero(Out.Buffer, *Y->getType().getNumElements());
  } else if (NumOps == 1) {
    if (Ops[0].Axes.size() == Out.Axes.size())
      Plan.copy(Ops[0], Out);
    else
      Plan.sumInto(Ops[0], Out);
  } else {
    // Left to right; an intermediate keeps the labels the result or a
    // later operand has.
    Operand Acc = Ops[0];
    for (unsigned I = 1; I < NumOps; ++I) {
      Operand Dst = Out;
      if (I + 1 < NumOps) {
        LabelList Keep;
        for (unsigned Lb = 0; Lb < Sizes.size(); ++Lb) {
          if (!hasLabel(Acc.Axes, Lb) && !hasLabel(Ops[I].Axes, Lb))
            continue;
          bool Later = hasLabel(Out.Axes, Lb);
          for (unsigned J = I + 1; J < NumOps; ++J)
            Later |= hasLabel(Ops[J].Axes, Lb);
          if (Later)
            Keep.push_back(Lb);
        }
        Dst = Plan.scratch(Keep);
      }
      Plan.contract(Acc, Ops[I], Dst);
      Acc = Dst;
    }
  }
  std::vector<BufferId> Writes = {Out.Buffer};
  Writes.insert(Writes.end(), Plan.Scratch.begin(), Plan.Scratch.end());
  const int Threads = L.getThreads();
  std::vector<EinsumPlanner::Stage> Stages = std::move(Plan.Stages);
  L.addStep({Y->getName(), Plan.kernelName(), false, Plan.Flops}, Reads, Writes,
            [=](Frame &Fr) {
              for (const EinsumPlanner::Stage &S : Stages)
                S(Fr, Threads);
            });
  return true;
}
