//===- TensorProtoTest.cpp - TensorProto decoding and encoding ------------===//

#include "TensorProto.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace strider;
using namespace strider::onnximport;

namespace {

onnx::TensorProto makeTensor(const char *Name, int32_t DataType,
                             std::vector<int64_t> Dims) {
  onnx::TensorProto T;
  T.set_name(Name);
  T.set_data_type(DataType);
  for (int64_t D : Dims)
    T.add_dims(D);
  return T;
}

TensorDataRef decodeOk(const onnx::TensorProto &T,
                       const ExternalDataPolicy &Policy = {}) {
  auto D = decodeTensor(T, Policy);
  if (!D) {
    ADD_FAILURE() << llvm::toString(D.takeError());
    return nullptr;
  }
  return *D;
}

std::string decodeError(const onnx::TensorProto &T,
                        const ExternalDataPolicy &Policy = {}) {
  auto D = decodeTensor(T, Policy);
  if (D) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return llvm::toString(D.takeError());
}

TEST(TensorProtoTest, RawData) {
  onnx::TensorProto T = makeTensor("w", onnx::TensorProto::FLOAT, {2});
  float Values[] = {1.5f, -2.0f};
  T.set_raw_data(std::string(reinterpret_cast<const char *>(Values), 8));
  TensorDataRef D = decodeOk(T);
  ASSERT_TRUE(D);
  EXPECT_EQ(D->getType(), TensorType::get(ElementType::F32, {2}));
  EXPECT_EQ(D->getDouble(0), 1.5);
  EXPECT_EQ(D->getDouble(1), -2.0);
}

TEST(TensorProtoTest, TypedFields) {
  onnx::TensorProto F = makeTensor("f", onnx::TensorProto::FLOAT, {2});
  F.add_float_data(0.25f);
  F.add_float_data(4.0f);
  EXPECT_EQ(decodeOk(F)->toDoubleVector(), (std::vector<double>{0.25, 4.0}));

  onnx::TensorProto I64 = makeTensor("l", onnx::TensorProto::INT64, {2});
  I64.add_int64_data(-(int64_t(1) << 40));
  I64.add_int64_data(3);
  EXPECT_EQ(decodeOk(I64)->toInt64Vector(),
            (std::vector<int64_t>{-(int64_t(1) << 40), 3}));

  onnx::TensorProto Dbl = makeTensor("d", onnx::TensorProto::DOUBLE, {1});
  Dbl.add_double_data(-1.25);
  EXPECT_EQ(decodeOk(Dbl)->getDouble(0), -1.25);

  onnx::TensorProto U32 = makeTensor("u", onnx::TensorProto::UINT32, {1});
  U32.add_uint64_data(0xFFFFFFFFu);
  TensorDataRef DU32 = decodeOk(U32);
  EXPECT_EQ(DU32->getBytes().size(), 4u);
  EXPECT_EQ(DU32->getInt(0), 0xFFFFFFFFll);

  onnx::TensorProto U64 = makeTensor("v", onnx::TensorProto::UINT64, {1});
  U64.add_uint64_data(7);
  EXPECT_EQ(decodeOk(U64)->getInt(0), 7);
}

TEST(TensorProtoTest, NarrowTypesInInt32Data) {
  struct Case {
    int32_t DataType;
    std::vector<int32_t> Stored;
    std::vector<uint8_t> Bytes;
  } Cases[] = {
      {onnx::TensorProto::INT8, {-128, 127}, {0x80, 0x7F}},
      {onnx::TensorProto::UINT8, {0, 255}, {0x00, 0xFF}},
      {onnx::TensorProto::INT16, {-2, 300}, {0xFE, 0xFF, 0x2C, 0x01}},
      {onnx::TensorProto::UINT16, {65535, 1}, {0xFF, 0xFF, 0x01, 0x00}},
      {onnx::TensorProto::BOOL, {1, 0, 5}, {1, 0, 1}},
      {onnx::TensorProto::FLOAT16, {0x3C00, 0xB800}, {0x00, 0x3C, 0x00, 0xB8}},
      {onnx::TensorProto::BFLOAT16, {0x3F80, 0xC000}, {0x80, 0x3F, 0x00, 0xC0}},
      {onnx::TensorProto::INT32, {-7}, {0xF9, 0xFF, 0xFF, 0xFF}},
  };
  for (const Case &C : Cases) {
    onnx::TensorProto T =
        makeTensor("t", C.DataType, {int64_t(C.Stored.size())});
    for (int32_t V : C.Stored)
      T.add_int32_data(V);
    TensorDataRef D = decodeOk(T);
    ASSERT_TRUE(D) << "data type " << C.DataType;
    EXPECT_EQ(std::vector<uint8_t>(D->getBytes().begin(), D->getBytes().end()),
              C.Bytes)
        << "data type " << C.DataType;
  }
  onnx::TensorProto H = makeTensor("h", onnx::TensorProto::FLOAT16, {1});
  H.add_int32_data(0xB800);
  EXPECT_EQ(decodeOk(H)->getDouble(0), -0.5);
}

TEST(TensorProtoTest, ScalarAndEmpty) {
  onnx::TensorProto S = makeTensor("s", onnx::TensorProto::INT64, {});
  S.add_int64_data(42);
  TensorDataRef D = decodeOk(S);
  EXPECT_EQ(D->getType().getRank(), 0u);
  EXPECT_EQ(D->getInt(0), 42);

  onnx::TensorProto E = makeTensor("e", onnx::TensorProto::FLOAT, {0, 3});
  EXPECT_EQ(decodeOk(E)->getNumElements(), 0);
}

TEST(TensorProtoTest, Errors) {
  onnx::TensorProto Short = makeTensor("w", onnx::TensorProto::FLOAT, {2, 2});
  Short.set_raw_data(std::string(12, '\0'));
  EXPECT_EQ(decodeError(Short),
            "tensor 'w' has 12 bytes of raw data, its shape needs 16");

  onnx::TensorProto Few = makeTensor("w", onnx::TensorProto::INT64, {3});
  Few.add_int64_data(1);
  EXPECT_EQ(decodeError(Few), "tensor 'w' has 1 elements of data, its shape "
                              "needs 3");

  onnx::TensorProto Neg = makeTensor("w", onnx::TensorProto::FLOAT, {2, -1});
  EXPECT_EQ(decodeError(Neg), "tensor 'w' has negative dimension -1");

  onnx::TensorProto Str = makeTensor("w", onnx::TensorProto::STRING, {1});
  Str.add_string_data("x");
  EXPECT_EQ(decodeError(Str), "tensor 'w' has unsupported element type string");

  onnx::TensorProto F8 = makeTensor("w", 17, {1});
  EXPECT_EQ(decodeError(F8),
            "tensor 'w' has unsupported element type float8e4m3fn");

  onnx::TensorProto Huge =
      makeTensor("w", onnx::TensorProto::FLOAT, {1ll << 40, 1ll << 40});
  EXPECT_EQ(decodeError(Huge), "tensor 'w' is too large");
}

/// A scratch directory with a model directory inside it.
class ExternalDataTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("strider-ext", Root));
    ModelDir = Root;
    llvm::sys::path::append(ModelDir, "model");
    ASSERT_FALSE(llvm::sys::fs::create_directory(ModelDir));
    Policy.ModelDir = std::string(ModelDir);
  }
  void TearDown() override { llvm::sys::fs::remove_directories(Root); }

  void writeFile(llvm::StringRef Dir, llvm::StringRef Name,
                 llvm::StringRef Bytes) {
    llvm::SmallString<128> Path(Dir);
    llvm::sys::path::append(Path, Name);
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    ASSERT_FALSE(EC);
    OS << Bytes;
  }

  static onnx::TensorProto external(llvm::StringRef Location,
                                    const char *Offset, const char *Length) {
    onnx::TensorProto T = makeTensor("w", onnx::TensorProto::FLOAT, {2});
    T.set_data_location(onnx::TensorProto::EXTERNAL);
    auto Add = [&](const char *K, llvm::StringRef V) {
      onnx::StringStringEntryProto *E = T.add_external_data();
      E->set_key(K);
      E->set_value(V.str());
    };
    Add("location", Location);
    if (Offset)
      Add("offset", Offset);
    if (Length)
      Add("length", Length);
    return T;
  }

  llvm::SmallString<128> Root, ModelDir;
  ExternalDataPolicy Policy;
};

TEST_F(ExternalDataTest, ReadsSlice) {
  float Values[] = {3.0f, 4.0f};
  std::string Bytes = "pad!" + std::string(reinterpret_cast<char *>(Values), 8);
  writeFile(ModelDir, "w.bin", Bytes);
  TensorDataRef D = decodeOk(external("w.bin", "4", "8"), Policy);
  ASSERT_TRUE(D);
  EXPECT_EQ(D->toDoubleVector(), (std::vector<double>{3.0, 4.0}));
  // Without a length the tensor's own size is read from the offset.
  D = decodeOk(external("w.bin", "4", nullptr), Policy);
  ASSERT_TRUE(D);
  EXPECT_EQ(D->getDouble(1), 4.0);
}

TEST_F(ExternalDataTest, RefusesEscapes) {
  writeFile(Root, "outside.bin", std::string(8, '\0'));
  EXPECT_EQ(decodeError(external("../outside.bin", nullptr, nullptr), Policy),
            "tensor 'w': external data location '../outside.bin' is outside "
            "the model directory");
  EXPECT_EQ(decodeError(external("/etc/hostname", nullptr, nullptr), Policy),
            "tensor 'w': external data location '/etc/hostname' is outside "
            "the model directory");
  llvm::SmallString<128> Link(ModelDir), Target(Root);
  llvm::sys::path::append(Link, "link.bin");
  llvm::sys::path::append(Target, "outside.bin");
  ASSERT_FALSE(llvm::sys::fs::create_link(Target, Link));
  EXPECT_EQ(decodeError(external("link.bin", nullptr, nullptr), Policy),
            "tensor 'w': external data location 'link.bin' is outside the "
            "model directory");
  ExternalDataPolicy None;
  EXPECT_EQ(decodeError(external("w.bin", nullptr, nullptr), None),
            "tensor 'w': external data 'w.bin' cannot be read (no model "
            "directory)");
}

TEST_F(ExternalDataTest, ChecksRanges) {
  writeFile(ModelDir, "w.bin", std::string(8, '\0'));
  EXPECT_EQ(decodeError(external("w.bin", "16", nullptr), Policy),
            "tensor 'w': external data offset 16 is beyond the end of 'w.bin' "
            "(8 bytes)");
  EXPECT_EQ(decodeError(external("w.bin", "4", "8"), Policy),
            "tensor 'w': external data range [4, 12) is beyond the end of "
            "'w.bin' (8 bytes)");
  EXPECT_EQ(decodeError(external("w.bin", "0", "4"), Policy),
            "tensor 'w': external data has 4 bytes, its shape needs 8");
  EXPECT_EQ(decodeError(external("w.bin", "-1", nullptr), Policy),
            "tensor 'w': invalid external data offset '-1'");
  EXPECT_EQ(decodeError(external("w.bin", "18446744073709551615", "8"), Policy),
            "tensor 'w': external data offset 18446744073709551615 is beyond "
            "the end of 'w.bin' (8 bytes)");
}

TEST(TensorProtoTest, EncodeRoundTrip) {
  TensorDataRef D =
      TensorData::fromInt64(ElementType::I16, {2, 2}, {1, -2, 3, 4});
  onnx::TensorProto T;
  encodeTensor(*D, "k", T);
  EXPECT_EQ(T.name(), "k");
  EXPECT_EQ(T.data_type(), onnx::TensorProto::INT16);
  ASSERT_EQ(T.dims_size(), 2);
  EXPECT_TRUE(T.has_raw_data());
  TensorDataRef Back = decodeOk(T);
  ASSERT_TRUE(Back);
  EXPECT_TRUE(*Back == *D);
}

TEST(TensorProtoTest, LogicalOrderOfChannelsLast) {
  // Logical NCHW [1, 3, 2, 2] stored as NHWC: physical element (h, w, c)
  // holds the value 100*c + 10*h + w.
  std::vector<float> Physical;
  for (int H = 0; H < 2; ++H)
    for (int W = 0; W < 2; ++W)
      for (int C = 0; C < 3; ++C)
        Physical.push_back(float(100 * C + 10 * H + W));
  std::vector<uint8_t> Bytes(Physical.size() * 4);
  std::memcpy(Bytes.data(), Physical.data(), Bytes.size());
  TensorType Ty = TensorType::get(ElementType::F32, {1, 3, 2, 2},
                                  Layout::getChannelsLast(4));
  auto D = TensorData::create(Ty, Bytes);
  ASSERT_TRUE(bool(D)) << llvm::toString(D.takeError());
  std::vector<uint8_t> Logical = toLogicalOrder(**D);
  ASSERT_EQ(Logical.size(), Bytes.size());
  std::vector<float> Got(Physical.size());
  std::memcpy(Got.data(), Logical.data(), Logical.size());
  std::vector<float> Want;
  for (int C = 0; C < 3; ++C)
    for (int H = 0; H < 2; ++H)
      for (int W = 0; W < 2; ++W)
        Want.push_back(float(100 * C + 10 * H + W));
  EXPECT_EQ(Got, Want);

  onnx::TensorProto T;
  encodeTensor(**D, "nhwc", T);
  ASSERT_EQ(T.dims_size(), 4);
  EXPECT_EQ(T.dims(1), 3);
  EXPECT_EQ(T.raw_data(), std::string(Logical.begin(), Logical.end()));
}

TEST(TensorProtoTest, LogicalOrderOfTranspose) {
  // A [2, 3] tensor stored transposed ([1, 0]): physical is [3, 2].
  std::vector<uint8_t> Physical = {0, 3, 1, 4, 2, 5};
  TensorType Ty = TensorType::get(ElementType::U8, {2, 3}, Layout({1, 0}));
  auto D = TensorData::create(Ty, Physical);
  ASSERT_TRUE(bool(D)) << llvm::toString(D.takeError());
  EXPECT_EQ(toLogicalOrder(**D), (std::vector<uint8_t>{0, 1, 2, 3, 4, 5}));
}

} // namespace
