//===- TensorGeometryTest.cpp - Channel orders of stored tensors ----------===//

#include "strider/CodeGen/TensorGeometry.h"

#include "gtest/gtest.h"

using namespace strider;
using codegen::ChannelOrder;
using codegen::getChannelOrder;

namespace {

TensorType typeOf(llvm::ArrayRef<int64_t> Shape,
                  llvm::ArrayRef<unsigned> Order) {
  return TensorType::get(ElementType::F32, Shape).withLayout(Layout(Order));
}

TEST(TensorGeometryTest, NamedOrders) {
  EXPECT_EQ(getChannelOrder(typeOf({2, 8, 4, 4}, {0, 1, 2, 3})),
            ChannelOrder::First);
  EXPECT_EQ(getChannelOrder(typeOf({2, 8, 4, 4}, {0, 2, 3, 1})),
            ChannelOrder::Last);
  EXPECT_EQ(getChannelOrder(typeOf({2, 8, 5}, {0, 2, 1})),
            ChannelOrder::Last);
  EXPECT_EQ(getChannelOrder(typeOf({2, 8, 4, 4}, {1, 0, 2, 3})),
            ChannelOrder::Other);
  EXPECT_EQ(getChannelOrder(typeOf({8}, {0})), ChannelOrder::Other);
}

TEST(TensorGeometryTest, UnitDimsKeepTheNamedOrder) {
  // C = 1: both orders are the same bytes; the layout's own name wins.
  EXPECT_EQ(getChannelOrder(typeOf({2, 1, 4, 4}, {0, 1, 2, 3})),
            ChannelOrder::First);
  EXPECT_EQ(getChannelOrder(typeOf({2, 1, 4, 4}, {0, 2, 3, 1})),
            ChannelOrder::Last);
}

TEST(TensorGeometryTest, OtherDimOrdersWithTheSameBytes) {
  // [W, C, N] with N = 1 (an RNN's output transposed into a Conv1D) is
  // stored as NWC; [C, N, W] with N = 1 as NCW.
  EXPECT_EQ(getChannelOrder(typeOf({1, 128, 938}, {2, 1, 0})),
            ChannelOrder::Last);
  EXPECT_EQ(getChannelOrder(typeOf({1, 128, 938}, {1, 0, 2})),
            ChannelOrder::First);
  // With N = 2 the batch stride differs from both.
  EXPECT_EQ(getChannelOrder(typeOf({2, 128, 938}, {2, 1, 0})),
            ChannelOrder::Other);
  // A unit spatial dim moved outermost: [H, N, C, W] with H = 1.
  EXPECT_EQ(getChannelOrder(typeOf({3, 8, 1, 5}, {2, 0, 1, 3})),
            ChannelOrder::First);
}

} // namespace
