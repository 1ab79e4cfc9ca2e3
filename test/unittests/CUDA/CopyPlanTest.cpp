//===- CopyPlanTest.cpp - Planning of the CUDA backend's copies -----------===//
//
// planCopy's strategies, simplified dims and vector widths, checked
// without a GPU; the host interpreter of CopyPlan (CopyPlanInterpreter.h)
// run against the strided copy it came from on random relayouts, slices
// and broadcasts; and the index math the data-movement kernels share with
// the host (DataMovementIndexing.h).
//
//===----------------------------------------------------------------------===//

#include "CopyPlanInterpreter.h"
#include "DataMovementIndexing.h"
#include "GpuTestSupport.h"
#include "PlanImpl.h"
#include "Kernels.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

using namespace strider::cuda;

namespace {

using Dims = std::vector<int64_t>;

using gputest::getDenseStrides;

Dims getIdentityOrder(size_t Rank) {
  Dims Order(Rank);
  std::iota(Order.begin(), Order.end(), 0);
  return Order;
}

CopyParams makeParams(const Dims &Shape, const Dims &XStrides,
                      const Dims &YStrides, DType XT = DType::F32,
                      DType YT = DType::F32) {
  return makeCopy(Shape, XStrides, YStrides, XT, YT);
}

/// A relayout of logical shape \p Shape from physical order \p XOrder to
/// \p YOrder.
CopyParams makeRelayout(const Dims &Shape, const Dims &XOrder,
                        const Dims &YOrder, DType T = DType::F32) {
  return makeParams(Shape, getDenseStrides(Shape, XOrder),
                    getDenseStrides(Shape, YOrder), T, T);
}

Dims getShape(const CopyParams &P) { return Dims(P.Shape, P.Shape + P.Rank); }

const Dims NCHW = {0, 1, 2, 3}, NHWC = {0, 2, 3, 1};
const Dims NCDHW = {0, 1, 2, 3, 4}, NDHWC = {0, 2, 3, 4, 1};

//===----------------------------------------------------------------------===//
// Strategies
//===----------------------------------------------------------------------===//

TEST(CopyPlanTest, NCHWToNHWCIsABatchedTranspose) {
  CopyPlan P = planCopy(makeRelayout({2, 64, 56, 56}, NCHW, NHWC));
  EXPECT_EQ(P.Strategy, CopyStrategy::Transpose2D);
  // Y[n][hw][c] = X[n][c][hw]: rows are channels, columns pixels.
  EXPECT_EQ(P.Batch, 2);
  EXPECT_EQ(P.Rows, 64);
  EXPECT_EQ(P.Cols, 56 * 56);
  EXPECT_EQ(P.XRowStride, 56 * 56);
  EXPECT_EQ(P.YRowStride, 64);
  EXPECT_EQ(P.Vector, 4);
  EXPECT_EQ(getShape(P.Params), (Dims{2, 56 * 56, 64}));
  EXPECT_EQ(P.Params.XStrides[0], 64 * 56 * 56);
  EXPECT_EQ(P.Params.YStrides[0], 64 * 56 * 56);
}

TEST(CopyPlanTest, NHWCToNCHWIsABatchedTranspose) {
  CopyPlan P = planCopy(makeRelayout({2, 64, 56, 56}, NHWC, NCHW));
  EXPECT_EQ(P.Strategy, CopyStrategy::Transpose2D);
  EXPECT_EQ(P.Batch, 2);
  EXPECT_EQ(P.Rows, 56 * 56);
  EXPECT_EQ(P.Cols, 64);
  EXPECT_EQ(P.XRowStride, 64);
  EXPECT_EQ(P.YRowStride, 56 * 56);
  EXPECT_EQ(P.Vector, 4);
  EXPECT_EQ(getShape(P.Params), (Dims{2, 64, 56 * 56}));
}

TEST(CopyPlanTest, BatchOfOneHasNoBatchDim) {
  CopyPlan P = planCopy(makeRelayout({1, 32, 7, 9}, NCHW, NHWC));
  EXPECT_EQ(P.Strategy, CopyStrategy::Transpose2D);
  EXPECT_EQ(P.Batch, 1);
  EXPECT_EQ(P.Params.Rank, 2);
  EXPECT_EQ(P.Rows, 32);
  EXPECT_EQ(P.Cols, 63);
  // 63 pixels: no vectors.
  EXPECT_EQ(P.Vector, 1);

  CopyPlan Back = planCopy(makeRelayout({1, 32, 7, 9}, NHWC, NCHW));
  EXPECT_EQ(Back.Strategy, CopyStrategy::Transpose2D);
  EXPECT_EQ(Back.Batch, 1);
  EXPECT_EQ(Back.Rows, 63);
  EXPECT_EQ(Back.Cols, 32);
}

TEST(CopyPlanTest, FiveDimRelayouts) {
  CopyPlan P = planCopy(makeRelayout({3, 16, 4, 8, 8}, NCDHW, NDHWC));
  EXPECT_EQ(P.Strategy, CopyStrategy::Transpose2D);
  EXPECT_EQ(P.Batch, 3);
  EXPECT_EQ(P.Rows, 16);
  EXPECT_EQ(P.Cols, 256);
  EXPECT_EQ(P.XRowStride, 256);
  EXPECT_EQ(P.YRowStride, 16);
  EXPECT_EQ(P.Vector, 4);

  CopyPlan Back =
      planCopy(makeRelayout({1, 16, 4, 8, 8}, NDHWC, NCDHW, DType::F16));
  EXPECT_EQ(Back.Strategy, CopyStrategy::Transpose2D);
  EXPECT_EQ(Back.Batch, 1);
  EXPECT_EQ(Back.Rows, 256);
  EXPECT_EQ(Back.Cols, 16);
  EXPECT_EQ(Back.Vector, 8);
}

TEST(CopyPlanTest, RelayoutIntoAConcatSlot) {
  // NCHW x of 8 channels into channels [8, 16) of an NHWC result of 24.
  const Dims Shape = {2, 8, 5, 6};
  CopyPlan P = planCopy(makeParams(Shape, getDenseStrides(Shape, NCHW),
                                   getDenseStrides({2, 24, 5, 6}, NHWC)));
  EXPECT_EQ(P.Strategy, CopyStrategy::Transpose2D);
  EXPECT_EQ(P.Rows, 8);
  EXPECT_EQ(P.Cols, 30);
  EXPECT_EQ(P.YRowStride, 24);
  EXPECT_EQ(P.Params.YStrides[0], 30 * 24);
  EXPECT_EQ(P.Vector, 1); // 30 columns.
}

TEST(CopyPlanTest, IdentityCopiesOfAnyRankAreFlat) {
  for (size_t Rank = 1; Rank <= size_t(MaxRank); ++Rank) {
    Dims Shape;
    for (size_t I = 0; I < Rank; ++I)
      Shape.push_back(int64_t(2 + I));
    const Dims Order = getIdentityOrder(Rank);
    CopyPlan P = planCopy(makeRelayout(Shape, Order, Order));
    const int64_t Count = std::accumulate(Shape.begin(), Shape.end(),
                                          int64_t(1), std::multiplies<>());
    EXPECT_EQ(P.Strategy, CopyStrategy::Contiguous) << "rank " << Rank;
    EXPECT_EQ(getShape(P.Params), Dims{Count}) << "rank " << Rank;
    EXPECT_EQ(P.Params.XStrides[0], 1);
    EXPECT_EQ(P.Params.YStrides[0], 1);
  }
  // Same physical order on both sides, whatever it is.
  CopyPlan P = planCopy(makeRelayout({2, 3, 4, 5}, NHWC, NHWC));
  EXPECT_EQ(P.Strategy, CopyStrategy::Contiguous);
  EXPECT_EQ(getShape(P.Params), Dims{120});
  EXPECT_EQ(P.Vector, 4);
}

TEST(CopyPlanTest, CastIsAFlatConversion) {
  const Dims Shape = {2, 8, 4, 4};
  CopyPlan P = planCopy(makeRelayout(Shape, NCHW, NCHW, DType::F32));
  CopyParams Cast =
      makeParams(Shape, getDenseStrides(Shape, NCHW),
                 getDenseStrides(Shape, NCHW), DType::F32, DType::F16);
  CopyPlan C = planCopy(Cast);
  EXPECT_EQ(C.Strategy, CopyStrategy::Contiguous);
  EXPECT_EQ(C.Params.XType, DType::F32);
  EXPECT_EQ(C.Params.YType, DType::F16);
  EXPECT_EQ(getShape(C.Params), Dims{256});
  // Conversions move one element per access.
  EXPECT_EQ(C.Vector, 1);
  EXPECT_EQ(P.Vector, 4);
}

TEST(CopyPlanTest, CastingRelayoutIsAScalarTranspose) {
  const Dims Shape = {2, 16, 8, 8};
  CopyPlan P = planCopy(makeParams(Shape, getDenseStrides(Shape, NCHW),
                                   getDenseStrides(Shape, NHWC), DType::F16,
                                   DType::F32));
  EXPECT_EQ(P.Strategy, CopyStrategy::Transpose2D);
  EXPECT_EQ(P.Vector, 1);
}

TEST(CopyPlanTest, BroadcastsAreGeneric) {
  // Expand of a per-channel tensor to N, C, H, W.
  const Dims Shape = {2, 8, 4, 4};
  CopyPlan P =
      planCopy(makeParams(Shape, {0, 1, 0, 0}, getDenseStrides(Shape, NCHW)));
  EXPECT_EQ(P.Strategy, CopyStrategy::Generic);
  EXPECT_EQ(P.Vector, 1);
  // N merges with nothing (X stride 0, C's is 1); H and W merge.
  EXPECT_EQ(getShape(P.Params), (Dims{2, 8, 16}));
  EXPECT_EQ(P.Params.XStrides[2], 0);
  EXPECT_EQ(P.Params.YStrides[2], 1);

  // A broadcast inside an otherwise transposable copy stays generic.
  CopyPlan T =
      planCopy(makeParams(Shape, {0, 16, 4, 1}, getDenseStrides(Shape, NHWC)));
  EXPECT_EQ(T.Strategy, CopyStrategy::Generic);
}

TEST(CopyPlanTest, NarrowTransposesAreGeneric) {
  // Three channels: a 32 x 32 tile would be mostly empty.
  CopyPlan P = planCopy(makeRelayout({4, 3, 32, 32}, NCHW, NHWC));
  EXPECT_EQ(P.Strategy, CopyStrategy::Generic);
  EXPECT_EQ(getShape(P.Params), (Dims{4, 1024, 3}));
}

TEST(CopyPlanTest, GeneralPermutationsAreGeneric) {
  // Y[a][b][c] = X[c][a][b] with no inner dims swapped pairwise.
  const Dims Shape = {8, 9, 10};
  CopyPlan P = planCopy(makeRelayout(Shape, {2, 1, 0}, {0, 1, 2}));
  // X's unit-stride dim (0) is Y's outermost: not a batched 2D transpose.
  EXPECT_EQ(P.Strategy, CopyStrategy::Generic);
}

TEST(CopyPlanTest, VectorWidths) {
  auto flat = [](int64_t Count, DType T) {
    return planCopy(makeParams({Count}, {1}, {1}, T, T)).Vector;
  };
  EXPECT_EQ(flat(64, DType::F32), 4);
  EXPECT_EQ(flat(64, DType::F16), 8);
  EXPECT_EQ(flat(64, DType::BF16), 8);
  EXPECT_EQ(flat(12, DType::F16), 1);
  EXPECT_EQ(flat(63, DType::F32), 1);
  EXPECT_EQ(flat(1, DType::F32), 1);

  auto transpose = [](const Dims &Shape, DType T) {
    CopyPlan P = planCopy(makeRelayout(Shape, NCHW, NHWC, T));
    EXPECT_EQ(P.Strategy, CopyStrategy::Transpose2D);
    return P.Vector;
  };
  EXPECT_EQ(transpose({2, 64, 8, 8}, DType::F32), 4);
  EXPECT_EQ(transpose({2, 64, 8, 8}, DType::F16), 8);
  EXPECT_EQ(transpose({2, 12, 8, 8}, DType::F32), 4);
  EXPECT_EQ(transpose({2, 12, 8, 8}, DType::F16), 1); // 12 rows.
  EXPECT_EQ(transpose({2, 64, 7, 7}, DType::F32), 1); // 49 columns.
  EXPECT_EQ(transpose({2, 64, 3, 3}, DType::F32), 1); // 9 columns.

  // A slot whose row stride is not a whole vector.
  const Dims Shape = {2, 8, 4, 4};
  CopyPlan P = planCopy(makeParams(Shape, getDenseStrides(Shape, NCHW),
                                   getDenseStrides({2, 10, 4, 4}, NHWC)));
  EXPECT_EQ(P.Strategy, CopyStrategy::Transpose2D);
  EXPECT_EQ(P.YRowStride, 10);
  EXPECT_EQ(P.Vector, 1);
}

TEST(CopyPlanTest, UnitDimsAreDropped) {
  // The strides of unit dims are meaningless and must not block merging.
  CopyPlan P =
      planCopy(makeParams({1, 5, 1, 7}, {999, 7, 123, 1}, {-4, 7, 0, 1}));
  EXPECT_EQ(P.Strategy, CopyStrategy::Contiguous);
  EXPECT_EQ(getShape(P.Params), Dims{35});

  CopyPlan T = planCopy(makeRelayout({1, 16, 1, 20}, NCHW, NHWC));
  EXPECT_EQ(T.Strategy, CopyStrategy::Transpose2D);
  EXPECT_EQ(T.Batch, 1);
  EXPECT_EQ(T.Rows, 16);
  EXPECT_EQ(T.Cols, 20);
}

TEST(CopyPlanTest, SingleElementsAndEmptyCopies) {
  CopyPlan Scalar = planCopy(makeParams({}, {}, {}));
  EXPECT_EQ(Scalar.Strategy, CopyStrategy::Contiguous);
  EXPECT_EQ(Scalar.Params.Rank, 0);

  CopyPlan Ones = planCopy(
      makeParams({1, 1, 1}, {5, 6, 7}, {1, 1, 1}, DType::F16, DType::F32));
  EXPECT_EQ(Ones.Strategy, CopyStrategy::Contiguous);
  EXPECT_EQ(Ones.Params.Rank, 0);
  EXPECT_EQ(Ones.Params.XType, DType::F16);
  EXPECT_EQ(Ones.Params.YType, DType::F32);

  CopyPlan Empty = planCopy(makeParams({4, 0, 3}, {0, 3, 1}, {3, 3, 1}));
  EXPECT_EQ(Empty.Strategy, CopyStrategy::Contiguous);
  EXPECT_EQ(getShape(Empty.Params), Dims{0});
}

TEST(CopyPlanTest, StridedSlicesAreGeneric) {
  // Every second column of a 6 x 8 matrix.
  CopyPlan P = planCopy(makeParams({6, 4}, {8, 2}, {4, 1}));
  EXPECT_EQ(P.Strategy, CopyStrategy::Generic);
  // A slice of whole rows is flat within each row and merges no further.
  CopyPlan Rows = planCopy(makeParams({3, 8}, {16, 1}, {8, 1}));
  EXPECT_EQ(Rows.Strategy, CopyStrategy::Generic);
  EXPECT_EQ(getShape(Rows.Params), (Dims{3, 8}));
}

//===----------------------------------------------------------------------===//
// The plan means what the copy means
//===----------------------------------------------------------------------===//

/// The smallest and largest element offsets of a strided walk.
std::pair<int64_t, int64_t> getOffsetRange(const Dims &Shape,
                                           const Dims &Strides) {
  int64_t Lo = 0, Hi = 0;
  for (size_t I = 0; I < Shape.size(); ++I) {
    const int64_t Span = (Shape[I] - 1) * Strides[I];
    (Span < 0 ? Lo : Hi) += Span;
  }
  return {Lo, Hi};
}

using gputest::dot;
using gputest::forEachIndex;

void runPlan(const CopyPlan &Plan, const int *X, int *Y) {
  gputest::runCopyPlan(Plan, X, Y);
}

/// Checks what the plan's fields promise about each other.
void checkPlanInvariants(const CopyPlan &Plan, int64_t Count) {
  const CopyParams &P = Plan.Params;
  int64_t PlanCount = 1;
  for (int I = 0; I < P.Rank; ++I) {
    EXPECT_GT(P.Shape[I], 1);
    PlanCount *= P.Shape[I];
  }
  EXPECT_EQ(PlanCount, Count);
  const int64_t V = Plan.Vector;
  EXPECT_TRUE(V == 1 || V == int64_t(16 / getDTypeBytes(P.XType)));
  if (V > 1) {
    EXPECT_EQ(P.XType, P.YType);
  }
  switch (Plan.Strategy) {
  case CopyStrategy::Contiguous:
    EXPECT_LE(P.Rank, 1);
    EXPECT_EQ(Count % V, 0);
    break;
  case CopyStrategy::Transpose2D: {
    ASSERT_GE(P.Rank, 2);
    EXPECT_EQ(Plan.Rows, P.Shape[P.Rank - 1]);
    EXPECT_EQ(Plan.Cols, P.Shape[P.Rank - 2]);
    EXPECT_EQ(P.YStrides[P.Rank - 1], 1);
    EXPECT_EQ(P.XStrides[P.Rank - 2], 1);
    EXPECT_EQ(Plan.XRowStride, P.XStrides[P.Rank - 1]);
    EXPECT_EQ(Plan.YRowStride, P.YStrides[P.Rank - 2]);
    EXPECT_EQ(Plan.Batch * Plan.Rows * Plan.Cols, Count);
    for (int64_t Length :
         {Plan.Rows, Plan.Cols, Plan.XRowStride, Plan.YRowStride})
      EXPECT_EQ(Length % V, 0);
    for (int I = 0; I < P.Rank - 2; ++I) {
      EXPECT_EQ(P.XStrides[I] % V, 0);
      EXPECT_EQ(P.YStrides[I] % V, 0);
    }
    break;
  }
  case CopyStrategy::Generic:
    EXPECT_EQ(V, 1);
    break;
  }
}

/// Random copies: every physical order on both sides, unit dims, slices
/// (steps, negative too), broadcasts and outputs into slots of larger
/// tensors. The plan, run by runPlan, must write what the copy writes.
TEST(CopyPlanTest, PlansPreserveMeaning) {
  std::mt19937 Gen(1234);
  auto uniform = [&](int64_t Lo, int64_t Hi) {
    return std::uniform_int_distribution<int64_t>(Lo, Hi)(Gen);
  };
  int Strategies[3] = {0, 0, 0};
  for (int Case = 0; Case < 3000; ++Case) {
    const size_t Rank = size_t(uniform(0, MaxRank));
    Dims Shape(Rank);
    int64_t Count = 1;
    for (int64_t &S : Shape) {
      const int64_t Kind = uniform(0, 9);
      S = Kind < 2 ? 1 : Kind < 5 ? uniform(2, 4) : uniform(8, 12);
      if (Count * S > 20000)
        S = uniform(1, 2);
      Count *= S;
    }
    // X: a dense buffer of a random order, sliced with random steps
    // (rarely) and broadcast along random dims (rarely).
    Dims XOrder = getIdentityOrder(Rank), YOrder = getIdentityOrder(Rank);
    std::shuffle(XOrder.begin(), XOrder.end(), Gen);
    if (uniform(0, 2) == 0)
      std::shuffle(YOrder.begin(), YOrder.end(), Gen);
    Dims XShape = Shape;
    Dims Steps(Rank, 1);
    for (size_t I = 0; I < Rank; ++I)
      if (uniform(0, 9) == 0) {
        Steps[I] = uniform(0, 1) ? 2 : -1;
        XShape[I] = Shape[I] * std::abs(Steps[I]);
      }
    Dims XStrides = getDenseStrides(XShape, XOrder);
    for (size_t I = 0; I < Rank; ++I) {
      XStrides[I] *= Steps[I];
      if (uniform(0, 11) == 0)
        XStrides[I] = 0;
    }
    // Y: a dense buffer, or a slot of one larger along one dim.
    Dims YShape = Shape;
    if (Rank > 0 && uniform(0, 3) == 0)
      YShape[size_t(uniform(0, int64_t(Rank) - 1))] += uniform(1, 3);
    const Dims YStrides = getDenseStrides(YShape, YOrder);
    const DType T = uniform(0, 1) ? DType::F32 : DType::F16;
    const CopyParams Params = makeParams(Shape, XStrides, YStrides, T, T);
    const CopyPlan Plan = planCopy(Params);
    ++Strategies[int(Plan.Strategy)];

    SCOPED_TRACE("case " + std::to_string(Case));
    checkPlanInvariants(Plan, Count);
    auto [XLo, XHi] = getOffsetRange(Shape, XStrides);
    auto [YLo, YHi] = getOffsetRange(Shape, YStrides);
    ASSERT_EQ(YLo, 0);
    std::vector<int> X(size_t(XHi - XLo + 1));
    std::iota(X.begin(), X.end(), 1);
    std::vector<int> Expected(size_t(YHi + 1), 0), Actual = Expected;
    const int *X0 = X.data() - XLo;
    forEachIndex(Shape, [&](const Dims &I) {
      Expected[size_t(dot(I, YStrides.data()))] = X0[dot(I, XStrides.data())];
    });
    runPlan(Plan, X0, Actual.data());
    ASSERT_EQ(Actual, Expected);
  }
  // The cases reach every strategy.
  EXPECT_GT(Strategies[int(CopyStrategy::Contiguous)], 100);
  EXPECT_GT(Strategies[int(CopyStrategy::Transpose2D)], 100);
  EXPECT_GT(Strategies[int(CopyStrategy::Generic)], 100);
}

//===----------------------------------------------------------------------===//
// Index math shared with the kernels
//===----------------------------------------------------------------------===//

TEST(DataMovementIndexingTest, StridedOffsets) {
  const int64_t Shape[3] = {2, 3, 4};
  const int64_t XStrides[3] = {1, 2, 6}, YStrides[3] = {12, 4, 1};
  for (int64_t L = 0; L < 24; ++L) {
    const int64_t I0 = L / 12, I1 = L / 4 % 3, I2 = L % 4;
    int64_t XOff32, YOff32, XOff64, YOff64;
    getStridedOffsets<uint32_t>(L, 3, Shape, XStrides, YStrides, XOff32,
                                YOff32);
    getStridedOffsets<uint64_t>(L, 3, Shape, XStrides, YStrides, XOff64,
                                YOff64);
    EXPECT_EQ(XOff32, I0 + 2 * I1 + 6 * I2);
    EXPECT_EQ(YOff32, L);
    EXPECT_EQ(XOff64, XOff32);
    EXPECT_EQ(YOff64, YOff32);
  }
  // Negative strides (reversing slices) and rank 0.
  const int64_t Neg[1] = {-3}, One[1] = {1}, Len[1] = {5};
  int64_t XOff, YOff;
  getStridedOffsets<uint32_t>(4, 1, Len, Neg, One, XOff, YOff);
  EXPECT_EQ(XOff, -12);
  EXPECT_EQ(YOff, 4);
  getStridedOffsets<uint64_t>(0, 0, Len, Neg, One, XOff, YOff);
  EXPECT_EQ(XOff, 0);
  EXPECT_EQ(YOff, 0);
  // Offsets past 32 bits with 32-bit index arithmetic.
  const int64_t Big[2] = {3, 1000}, BigX[2] = {int64_t(1) << 33, 1},
                Dense[2] = {1000, 1};
  getStridedOffsets<uint32_t>(2999, 2, Big, BigX, Dense, XOff, YOff);
  EXPECT_EQ(XOff, 2 * (int64_t(1) << 33) + 999);
  EXPECT_EQ(YOff, 2999);
}

TEST(DataMovementIndexingTest, TransposeTiles) {
  // 2 x 3 batches (strides 100, 10 in X; 1000, 7 in Y) of 4 x 5 tiles.
  const int64_t Batch[2] = {2, 3}, XB[2] = {100, 10}, YB[2] = {1000, 7};
  int64_t Tile = 0;
  for (int64_t B0 = 0; B0 < 2; ++B0)
    for (int64_t B1 = 0; B1 < 3; ++B1)
      for (int64_t R = 0; R < 4; ++R)
        for (int64_t C = 0; C < 5; ++C, ++Tile) {
          int64_t TR, TC, XOff, YOff;
          locateTransposeTile<uint32_t>(Tile, 4, 5, 2, Batch, XB, YB, TR, TC,
                                        XOff, YOff);
          EXPECT_EQ(TR, R);
          EXPECT_EQ(TC, C);
          EXPECT_EQ(XOff, B0 * 100 + B1 * 10);
          EXPECT_EQ(YOff, B0 * 1000 + B1 * 7);
          int64_t TR64, TC64, XOff64, YOff64;
          locateTransposeTile<uint64_t>(Tile, 4, 5, 2, Batch, XB, YB, TR64,
                                        TC64, XOff64, YOff64);
          EXPECT_EQ(TR64, TR);
          EXPECT_EQ(TC64, TC);
          EXPECT_EQ(XOff64, XOff);
          EXPECT_EQ(YOff64, YOff);
        }
  // No batch dims.
  int64_t TR, TC, XOff, YOff;
  locateTransposeTile<uint32_t>(7, 3, 4, 0, Batch, XB, YB, TR, TC, XOff, YOff);
  EXPECT_EQ(TR, 1);
  EXPECT_EQ(TC, 3);
  EXPECT_EQ(XOff, 0);
  EXPECT_EQ(YOff, 0);
}

/// numpy.pad(range(Size), (Before, After), mode) along one dim, as read
/// indices.
std::vector<int64_t> padIndices(int64_t Size, int64_t Before, int64_t After,
                                PadParams::Mode M) {
  std::vector<int64_t> R;
  for (int64_t I = 0; I < Size + Before + After; ++I)
    R.push_back(getPadSourceIndex(I, Before, Size, M));
  return R;
}

TEST(DataMovementIndexingTest, PadSourceIndices) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(padIndices(3, 2, 1, PadParams::Constant), (V{-1, -1, 0, 1, 2, -1}));
  EXPECT_EQ(padIndices(3, 2, 3, PadParams::Edge), (V{0, 0, 0, 1, 2, 2, 2, 2}));
  // np.pad([0, 1, 2, 3], (2, 2), 'reflect') = [2, 1, 0, 1, 2, 3, 2, 1].
  EXPECT_EQ(padIndices(4, 2, 2, PadParams::Reflect),
            (V{2, 1, 0, 1, 2, 3, 2, 1}));
  // Pads beyond the size reflect again: np.pad([0, 1, 2], (5, 5),
  // 'reflect') = [1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1].
  EXPECT_EQ(padIndices(3, 5, 5, PadParams::Reflect),
            (V{1, 0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1}));
  EXPECT_EQ(padIndices(1, 2, 1, PadParams::Reflect), (V{0, 0, 0, 0}));
  // Negative Begin crops: Y[i] = X[i + 2].
  EXPECT_EQ(padIndices(5, -2, 0, PadParams::Constant), (V{2, 3, 4}));
  EXPECT_EQ(padIndices(5, -2, 1, PadParams::Reflect), (V{2, 3, 4, 3}));
  EXPECT_EQ(padIndices(5, -2, 2, PadParams::Edge), (V{2, 3, 4, 4, 4}));
  // An empty dim has nothing to reflect or repeat.
  EXPECT_EQ(getPadSourceIndex(0, 1, 0, PadParams::Edge), -1);
  EXPECT_EQ(getPadSourceIndex(1, 1, 0, PadParams::Reflect), -1);
}

TEST(DataMovementIndexingTest, ResizeIndices) {
  ResizeParams P;
  P.N = 2;
  P.C = 3;
  P.Spatial = 2;
  P.In[0] = 4;
  P.In[1] = 5;
  P.Out[0] = 6;
  P.Out[1] = 7;
  int64_t N, C, O[3];
  // NCHW: (1, 2, 4, 5) of 2 x 3 x 6 x 7.
  getResizeOutputIndex(P, ((1 * 3 + 2) * 6 + 4) * 7 + 5, N, C, O);
  EXPECT_EQ(N, 1);
  EXPECT_EQ(C, 2);
  EXPECT_EQ(O[0], 4);
  EXPECT_EQ(O[1], 5);
  EXPECT_EQ(O[2], 0);
  ResizeInputStrides S = getResizeInputStrides(P);
  EXPECT_EQ(S.Batch, 60);
  EXPECT_EQ(S.Channel, 20);
  EXPECT_EQ(S.Spatial[0], 5);
  EXPECT_EQ(S.Spatial[1], 1);
  EXPECT_EQ(S.Spatial[2], 0);

  // NHWC: (1, 4, 5, 2) of 2 x 6 x 7 x 3.
  P.ChannelsLast = true;
  getResizeOutputIndex(P, ((1 * 6 + 4) * 7 + 5) * 3 + 2, N, C, O);
  EXPECT_EQ(N, 1);
  EXPECT_EQ(C, 2);
  EXPECT_EQ(O[0], 4);
  EXPECT_EQ(O[1], 5);
  S = getResizeInputStrides(P);
  EXPECT_EQ(S.Batch, 60);
  EXPECT_EQ(S.Channel, 1);
  EXPECT_EQ(S.Spatial[0], 15);
  EXPECT_EQ(S.Spatial[1], 3);

  // One and three spatial dims.
  P.Spatial = 1;
  P.ChannelsLast = false;
  getResizeOutputIndex(P, (1 * 3 + 1) * 6 + 3, N, C, O);
  EXPECT_EQ(N, 1);
  EXPECT_EQ(C, 1);
  EXPECT_EQ(O[0], 3);
  EXPECT_EQ(O[1], 0);
  EXPECT_EQ(getResizeInputStrides(P).Channel, 4);
  P.Spatial = 3;
  P.In[2] = 2;
  P.Out[2] = 3;
  P.ChannelsLast = true;
  getResizeOutputIndex(P, (((1 * 6 + 5) * 7 + 6) * 3 + 2) * 3 + 1, N, C, O);
  EXPECT_EQ(N, 1);
  EXPECT_EQ(C, 1);
  EXPECT_EQ(O[0], 5);
  EXPECT_EQ(O[1], 6);
  EXPECT_EQ(O[2], 2);
  S = getResizeInputStrides(P);
  EXPECT_EQ(S.Spatial[2], 3);
  EXPECT_EQ(S.Spatial[1], 6);
  EXPECT_EQ(S.Spatial[0], 30);
  EXPECT_EQ(S.Batch, 120);
}

} // namespace
