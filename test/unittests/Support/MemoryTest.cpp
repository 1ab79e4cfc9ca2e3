//===- MemoryTest.cpp - Byte counts and the memory budget -----------------===//

#include "strider/Support/Memory.h"

#include "gtest/gtest.h"

using namespace strider;

TEST(MemoryTest, ParsesByteCountsAsUsersWriteThem) {
  EXPECT_EQ(parseByteSize("1000000"), uint64_t(1000000));
  EXPECT_EQ(parseByteSize("512M"), uint64_t(512) << 20);
  EXPECT_EQ(parseByteSize("4G"), uint64_t(4) << 30);
  EXPECT_EQ(parseByteSize("4GiB"), uint64_t(4) << 30);
  EXPECT_EQ(parseByteSize("4gb"), uint64_t(4) << 30);
  EXPECT_EQ(parseByteSize(" 2 T "), uint64_t(2) << 40);
  EXPECT_EQ(parseByteSize("1.5K"), uint64_t(1536));
  EXPECT_EQ(parseByteSize("64B"), uint64_t(64));
  EXPECT_EQ(parseByteSize("15E"), uint64_t(15) << 60);
  EXPECT_EQ(parseByteSize("0"), uint64_t(0));
}

TEST(MemoryTest, RefusesWhatIsNotAByteCount) {
  for (const char *Bad : {"", "lots", "G", "4X", "4 GG", "1.5", "1..5K", "-4G",
                          "16E", "1e3", ".", "4GiBs"})
    EXPECT_FALSE(parseByteSize(Bad).has_value()) << Bad;
}

TEST(MemoryTest, FormatsInTheLargestUnit) {
  EXPECT_EQ(formatByteSize(0), "0 B");
  EXPECT_EQ(formatByteSize(1023), "1023 B");
  EXPECT_EQ(formatByteSize(1536), "1.5 KiB");
  EXPECT_EQ(formatByteSize(uint64_t(1) << 40), "1.0 TiB");
  EXPECT_EQ(formatByteSize(UINT64_MAX), "16.0 EiB");
}

TEST(MemoryTest, SumsSaturateInsteadOfWrapping) {
  EXPECT_EQ(addSaturated(1, 2), uint64_t(3));
  EXPECT_EQ(addSaturated(MaxRunBytes - 1, 1), MaxRunBytes);
  EXPECT_EQ(addSaturated(MaxRunBytes, MaxRunBytes), MaxRunBytes);
  EXPECT_EQ(addSaturated(UINT64_MAX, UINT64_MAX), MaxRunBytes);
}

TEST(MemoryTest, BudgetRefusesWhatExceedsIt) {
  EXPECT_EQ(checkMemoryBudget(1000, "activations", 1000), "");
  EXPECT_EQ(checkMemoryBudget(1001, "activations", 1000),
            "a run needs 1001 B (1001 bytes) of activations, more than the "
            "1000 B memory budget (as set)");
  // Saturated needs are refused whatever the budget.
  EXPECT_NE(checkMemoryBudget(MaxRunBytes, "tensors", UINT64_MAX), "");
  // The default is the machine's: every machine here has a megabyte free
  // and none has an exabyte.
  EXPECT_GT(getAvailableMemory(), uint64_t(1) << 20);
  EXPECT_EQ(checkMemoryBudget(1 << 20, "tensors", 0), "");
  std::string Why = checkMemoryBudget(uint64_t(1) << 60, "tensors", 0);
  EXPECT_NE(Why.find("the memory available on this machine"), std::string::npos)
      << Why;
}
