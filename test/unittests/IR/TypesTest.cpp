//===- TypesTest.cpp - Element types, layouts, tensor types, data ---------===//

#include "strider/IR/TensorData.h"
#include "strider/IR/Types.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <memory>

using namespace strider;

TEST(TypesTest, ElementTypeNamesRoundTrip) {
  for (ElementType T :
       {ElementType::F32, ElementType::F16, ElementType::BF16, ElementType::F64,
        ElementType::I8, ElementType::U8, ElementType::I16, ElementType::U16,
        ElementType::I32, ElementType::U32, ElementType::I64, ElementType::U64,
        ElementType::Bool}) {
    EXPECT_EQ(parseElementTypeName(getElementTypeName(T)), T);
    EXPECT_EQ(fromOnnxDataType(toOnnxDataType(T)), T);
    EXPECT_GT(getElementByteSize(T), 0u);
  }
  EXPECT_FALSE(parseElementTypeName("f128").hasValue());
  EXPECT_FALSE(fromOnnxDataType(8).hasValue()); // STRING is unsupported.
}

TEST(TypesTest, LayoutCanonicalForm) {
  EXPECT_TRUE(Layout(llvm::ArrayRef<unsigned>{0, 1, 2, 3}).isIdentity());
  Layout NHWC = Layout::getChannelsLast(4);
  EXPECT_EQ(NHWC.getStoredPermutation(), (llvm::ArrayRef<unsigned>{0, 2, 3, 1}));
  EXPECT_EQ(NHWC.getName(4), "nhwc");
  EXPECT_EQ(Layout().getName(4), "nchw");
  EXPECT_EQ(Layout::getChannelsLast(5).getName(5), "ndhwc");
  EXPECT_EQ(Layout::getChannelsLast(3).getName(3), "nwc");
  EXPECT_EQ(Layout(llvm::ArrayRef<unsigned>{1, 0}).getName(2), "[1, 0]");
  EXPECT_TRUE(Layout::getChannelsLast(2).isIdentity());
}

TEST(TypesTest, LayoutParse) {
  EXPECT_EQ(Layout::parse("nhwc", 4), Layout::getChannelsLast(4));
  EXPECT_EQ(Layout::parse("ohwi", 4), Layout::getChannelsLast(4));
  EXPECT_EQ(Layout::parse("nchw", 4), Layout());
  EXPECT_EQ(Layout::parse("[0, 2, 1]", 3), Layout::getChannelsLast(3));
  EXPECT_FALSE(Layout::parse("nhwc", 5).hasValue());
  EXPECT_FALSE(Layout::parse("[0, 0, 1]", 3).hasValue());
  EXPECT_FALSE(Layout::parse("[0, 1]", 3).hasValue());
  EXPECT_FALSE(Layout::parse("[0, 3, 1]", 3).hasValue());
  EXPECT_FALSE(Layout::parse("nhcw", 4).hasValue());
}

TEST(TypesTest, TensorTypePrint) {
  TensorType T(ElementType::F32,
               {Dim::getSymbol("N"), Dim::getStatic(64), Dim::getStatic(56),
                Dim::getUnknown()},
               Layout::getChannelsLast(4));
  EXPECT_EQ(T.str(), "tensor<N x 64 x 56 x ? x f32, nhwc>");
  EXPECT_EQ(TensorType::get(ElementType::I64, {}).str(), "tensor<i64>");
  EXPECT_EQ(TensorType::getUnranked(ElementType::F16).str(),
            "tensor<* x f16>");
  TensorType Quoted(ElementType::F32, {Dim::getSymbol("batch size")});
  EXPECT_EQ(Quoted.str(), "tensor<\"batch size\" x f32>");
  EXPECT_FALSE(T.hasStaticShape());
  EXPECT_EQ(*TensorType::get(ElementType::F32, {2, 3}).getNumElements(), 6);
}

TEST(TypesTest, TypesAreValues) {
  TensorType T = TensorType::get(ElementType::F32, {1, 8, 4, 4});
  TensorType L = T.withLayout(Layout::getChannelsLast(4));
  EXPECT_NE(T, L);
  EXPECT_TRUE(T.getLayout().isIdentity());
  EXPECT_EQ(L.withLayout(Layout()), T);
}

TEST(TensorDataTest, CreateChecksSize) {
  auto Ok = TensorData::create(TensorType::get(ElementType::F32, {2}),
                               std::vector<uint8_t>(8));
  ASSERT_TRUE(bool(Ok));
  auto Bad = TensorData::create(TensorType::get(ElementType::F32, {2}),
                                std::vector<uint8_t>(7));
  ASSERT_FALSE(bool(Bad));
  EXPECT_EQ(llvm::toString(Bad.takeError()),
            "constant of type tensor<2 x f32> needs 8 bytes of data, got 7");
  auto Dyn = TensorData::create(
      TensorType(ElementType::F32, {Dim::getSymbol("N")}), {});
  EXPECT_FALSE(bool(Dyn));
  llvm::consumeError(Dyn.takeError());
  auto Huge = TensorData::create(
      TensorType::get(ElementType::F64, {int64_t(1) << 40, int64_t(1) << 40}),
      {});
  EXPECT_FALSE(bool(Huge));
  llvm::consumeError(Huge.takeError());
}

TEST(TensorDataTest, ViewsAreNotCopies) {
  std::vector<float> Values = {1.0f, -2.0f, 3.0f, 4.5f, 5.0f, 6.0f};
  auto Storage = std::make_shared<std::vector<uint8_t>>(Values.size() * 4);
  std::memcpy(Storage->data(), Values.data(), Storage->size());
  const uint8_t *Raw = Storage->data();
  std::weak_ptr<std::vector<uint8_t>> Alive = Storage;
  TensorType Ty = TensorType::get(ElementType::F32, {2, 3});
  auto View = TensorData::createView(Ty, *Storage, Storage);
  ASSERT_TRUE(bool(View));
  // The owner keeps the bytes alive as long as the data is.
  Storage.reset();
  EXPECT_FALSE(Alive.expired());
  EXPECT_EQ((*View)->getBytes().data(), Raw);
  EXPECT_EQ((*View)->getBytes().size(), 24u);
  EXPECT_DOUBLE_EQ((*View)->getDouble(3), 4.5);
  EXPECT_EQ((*View)->getInt(1), -2);
  EXPECT_FALSE((*View)->isSplat());

  // Equal to an owned copy, both ways.
  TensorDataRef Owned = TensorData::fromFloat({2, 3}, Values);
  EXPECT_EQ(**View, *Owned);
  EXPECT_EQ(*Owned, **View);
  EXPECT_EQ((*View)->getBytes().data(), Raw);

  // withLayout copies into owned bytes that outlive the view and its owner.
  Layout T(llvm::ArrayRef<unsigned>{1, 0});
  TensorDataRef Transposed = (*View)->withLayout(T);
  EXPECT_EQ(*Transposed, *Owned->withLayout(T));
  EXPECT_NE(Transposed->getBytes().data(), Raw);
  EXPECT_EQ(*Transposed->withLayout(Layout()), *Owned);
  View->reset();
  EXPECT_TRUE(Alive.expired());
  EXPECT_EQ(Transposed->toDoubleVector(),
            (std::vector<double>{1.0, 4.5, -2.0, 5.0, 3.0, 6.0}));
}

TEST(TensorDataTest, CreateViewChecks) {
  uint8_t Bytes[16] = {};
  auto Splat = TensorData::createView(TensorType::get(ElementType::I32, {4}),
                                      Bytes, nullptr);
  ASSERT_TRUE(bool(Splat));
  EXPECT_TRUE((*Splat)->isSplat());
  auto Short = TensorData::createView(TensorType::get(ElementType::F64, {4}),
                                      Bytes, nullptr);
  ASSERT_FALSE(bool(Short));
  EXPECT_EQ(llvm::toString(Short.takeError()),
            "constant of type tensor<4 x f64> needs 32 bytes of data, got 16");
  auto Dyn = TensorData::createView(
      TensorType(ElementType::F32, {Dim::getSymbol("N")}), Bytes, nullptr);
  ASSERT_FALSE(bool(Dyn));
  EXPECT_EQ(llvm::toString(Dyn.takeError()),
            "constant of type tensor<N x f32> must have a static shape");
  auto Unknown = TensorData::createView(
      TensorType::get(ElementType::Unknown, {4}), Bytes, nullptr);
  ASSERT_FALSE(bool(Unknown));
  EXPECT_EQ(llvm::toString(Unknown.takeError()),
            "constant has an unknown element type");
  auto Empty = TensorData::createView(TensorType::get(ElementType::F32, {0}),
                                      {}, nullptr);
  ASSERT_TRUE(bool(Empty));
  EXPECT_EQ(**Empty, *TensorData::fromFloat({0}, {}));
}

TEST(TensorDataTest, Accessors) {
  TensorDataRef D = TensorData::fromInt64(ElementType::I32, {3}, {1, -2, 3});
  EXPECT_EQ(D->toInt64Vector(), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_DOUBLE_EQ(D->getDouble(1), -2.0);
  EXPECT_FALSE(D->isSplat());
  EXPECT_TRUE(TensorData::fromFloat({2}, {1.5f, 1.5f})->isSplat());
}

TEST(TensorDataTest, HalfConversion) {
  for (float F : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f,
                  5.960464477539063e-08f, 0.333251953125f})
    EXPECT_EQ(halfToFloat(floatToHalf(F)), F) << F;
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00); // Rounds to infinity.
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT_TRUE(std::isinf(halfToFloat(0x7c00)));
  // Round to nearest even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10.
  EXPECT_EQ(floatToHalf(1.0f + 0.00048828125f), 0x3c00);
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
  EXPECT_EQ(bfloat16ToFloat(0x3f80), 1.0f);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(NAN))));
}

TEST(TensorDataTest, FromInt64WrapsIntoUnsignedTypes) {
  TensorDataRef D = TensorData::fromInt64(ElementType::U8, {2}, {-1, 256});
  EXPECT_EQ(D->getBytes()[0], 255);
  EXPECT_EQ(D->getBytes()[1], 0);
  EXPECT_EQ(TensorData::fromInt64(ElementType::U64, {1}, {-1})->getDouble(0),
            18446744073709551615.0);
}

TEST(TypesTest, SizeLimitIsCheckedWithoutOverflow) {
  const int64_t Big = int64_t(1) << 31;
  // 2^62 bytes exactly is allowed; a byte more per element is not.
  EXPECT_TRUE(
      TensorType::get(ElementType::U8, {int64_t(1) << 62}).isWithinSizeLimit());
  EXPECT_FALSE(TensorType::get(ElementType::F32, {int64_t(1) << 61})
                   .isWithinSizeLimit());
  // 2^64 elements: the product wraps to 0 in 64 bits.
  EXPECT_FALSE(
      TensorType::get(ElementType::F32, {Big, Big, 4}).isWithinSizeLimit());
  // A dim of 0 makes a tensor empty, but its strides still span its other
  // dims (found by the onnx fuzzer: strides of 2^93 wrapped).
  TensorType Empty = TensorType::get(ElementType::F32, {Big, Big, Big, 0});
  EXPECT_FALSE(Empty.isWithinSizeLimit());
  EXPECT_EQ(Empty.getNumElements(), int64_t(0));
  EXPECT_STREQ(Empty.getSizeLimitProblem(),
               "empty, but its other dims span more than 2^62 bytes");
  EXPECT_TRUE(
      TensorType::get(ElementType::F32, {Big, 0, 4}).isWithinSizeLimit());
  // Dims not known yet are checked once they are.
  EXPECT_TRUE(TensorType(ElementType::F32, {Dim::getSymbol("n"),
                                            Dim::getStatic(Big), Dim::getStatic(Big)})
                  .isWithinSizeLimit());
  EXPECT_FALSE(TensorType::get(ElementType::Unknown, {Big, Big, 2})
                   .isWithinSizeLimit());
}

TEST(TensorDataTest, DoublesSaturateToInt64) {
  // A plain cast of these is undefined (the onnx fuzzer found a Clip bound
  // of 1.8e34 on an i8 tensor cast so).
  EXPECT_EQ(saturatingToInt64(1.8e34), INT64_MAX);
  EXPECT_EQ(saturatingToInt64(-1.8e34), INT64_MIN);
  EXPECT_EQ(saturatingToInt64(std::nan("")), 0);
  EXPECT_EQ(saturatingToInt64(-2.9), -2);
  EXPECT_EQ(saturatingToInt64(9.2233720368547758e18), INT64_MAX);
}
