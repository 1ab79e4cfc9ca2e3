//===- DTypeTest.cpp - Device storage types -------------------------------===//

#include "Kernels.h"

#include "gtest/gtest.h"

using namespace strider::cuda;

TEST(CudaDTypeTest, NamesAndSizes) {
  EXPECT_STREQ(getDTypeName(DType::F32), "f32");
  EXPECT_STREQ(getDTypeName(DType::F16), "f16");
  EXPECT_STREQ(getDTypeName(DType::BF16), "bf16");
  EXPECT_EQ(getDTypeBytes(DType::F32), 4u);
  EXPECT_EQ(getDTypeBytes(DType::F16), 2u);
  EXPECT_EQ(getDTypeBytes(DType::BF16), 2u);
}
