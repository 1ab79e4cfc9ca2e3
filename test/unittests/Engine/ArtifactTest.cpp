//===- ArtifactTest.cpp - model.strider round trip and refusals ----------===//

#include "ArtifactFormat.h"

#include "strider/CodeGen/CPU/CPUBackend.h"
#include "strider/Engine/Artifact.h"
#include "strider/Engine/Session.h"
#include "strider/IR/AsmPrinter.h"
#include "strider/IR/Graph.h"
#include "strider/Runtime/Tensor.h"

#include "strider/Transforms/Specialize.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cstring>
#include <fstream>

using namespace strider;
using namespace strider::engine;

namespace {

/// Counts arrays a lowering had to derive itself (and with Forward, adds
/// them to the store it wraps).
class CountingStore final : public cpu::DerivedStore {
public:
  explicit CountingStore(std::shared_ptr<cpu::DerivedStore> Inner,
                         bool Forward = false)
      : Inner(std::move(Inner)), Forward(Forward) {}
  std::shared_ptr<const float> find(llvm::StringRef Key, size_t Count,
                                    const TensorData *Source) const override {
    return Inner->find(Key, Count, Source);
  }
  void add(llvm::StringRef Key, std::shared_ptr<const float> Data, size_t Count,
           const TensorDataRef &Source) override {
    ++Added;
    if (Forward)
      Inner->add(Key, std::move(Data), Count, Source);
  }
  std::shared_ptr<cpu::DerivedStore> Inner;
  bool Forward;
  unsigned Added = 0;
};

runtime::TensorMap input() {
  runtime::Tensor T(ElementType::F32, {1, 3, 32, 32});
  for (int64_t I = 0; I < T.getNumElements(); ++I)
    T.setDouble(I, double((I * 37) % 101) / 50.0 - 1.0);
  runtime::TensorMap M;
  M["image"] = T;
  return M;
}

/// The sample model specialized to batch 1 and optimized, its program
/// (which owns the packed constants), and the artifact bytes.
struct Compiled {
  std::shared_ptr<const Model> M;
  std::unique_ptr<Session> S;
  std::shared_ptr<Specialization> Spec;
  std::shared_ptr<cpu::DerivedStore> Recorded;
  std::unique_ptr<cpu::Program> Program;
  std::string Bytes;
};

Compiled compileSample() {
  Compiled C;
  C.M = llvm::cantFail(Model::load(STRIDER_SAMPLE_MODEL));
  C.S = llvm::cantFail(Session::create(C.M, SessionOptions()));
  C.Spec = llvm::cantFail(C.S->prepare(Session::getKey(input())));
  C.Recorded = createRecordingStore();
  cpu::CPUOptions CO;
  CO.Derived = C.Recorded;
  C.Program = llvm::cantFail(cpu::compileForCPU(*C.Spec->G, CO));
  llvm::raw_string_ostream OS(C.Bytes);
  llvm::cantFail(writeArtifact(OS, *C.Spec->G, getDefaultTarget(),
                               C.Recorded.get(), cpu::getDerivedFormat()));
  OS.flush();
  return C;
}

llvm::Expected<Artifact> read(const std::string &Bytes,
                              llvm::StringRef Format = "") {
  return readArtifactBytes(
      llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(Bytes.data()),
                              Bytes.size()),
      nullptr, "t.strider",
      Format.empty() ? llvm::StringRef(cpu::getDerivedFormat()) : Format);
}

std::string errorOf(const std::string &Bytes, llvm::StringRef Format = "") {
  auto A = read(Bytes, Format);
  if (A)
    return "";
  return llvm::toString(A.takeError());
}

/// Recomputes the header checksum after a header edit.
void resum(std::string &Bytes) {
  const uint32_t Count = llvm::support::endian::read32le(&Bytes[12]);
  std::string Summed =
      Bytes.substr(0, 24) +
      Bytes.substr(32, size_t(format::HeaderSize - 32 +
                              Count * format::EntrySize));
  uint64_t Sum = format::checksum(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(Summed.data()), Summed.size()));
  llvm::support::endian::write64le(&Bytes[24], Sum);
}

TEST(Artifact, RoundTripRunsWithoutRepacking) {
  Compiled C = compileSample();
  auto A = read(C.Bytes);
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  EXPECT_GT(A->DerivedArrays, 0u);
  EXPECT_EQ(A->Target, getDefaultTarget());
  EXPECT_EQ(A->StriderVersion, getStriderVersion());
  auto Counting = std::make_shared<CountingStore>(A->Derived);
  cpu::CPUOptions CO;
  CO.Derived = Counting;
  auto P = cpu::compileForCPU(*A->G, CO);
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  EXPECT_EQ(Counting->Added, 0u) << "the lowering packed weights again";
  auto Want = C.Program->run(input());
  auto Got = (*P)->run(input());
  ASSERT_TRUE(bool(Want) && bool(Got));
  EXPECT_EQ(Got->at("logits").getBytes(), Want->at("logits").getBytes());
  // Written twice, the same bytes.
  Compiled Again = compileSample();
  EXPECT_EQ(Again.Bytes, C.Bytes);
}

TEST(Artifact, TruncatedAnywhereIsRefused) {
  Compiled C = compileSample();
  std::vector<size_t> Cuts = {0, 7, 8, 63, 64, 65, C.Bytes.size() - 1};
  const uint32_t Count = llvm::support::endian::read32le(&C.Bytes[12]);
  for (uint32_t I = 0; I < Count; ++I) {
    const char *E = &C.Bytes[format::HeaderSize + I * format::EntrySize];
    uint64_t Off = llvm::support::endian::read64le(E + 8);
    uint64_t Len = llvm::support::endian::read64le(E + 16);
    for (uint64_t Cut : {Off, Off + 1, Off + Len / 2, Off + Len})
      if (Cut < C.Bytes.size())
        Cuts.push_back(size_t(Cut));
  }
  for (size_t Cut : Cuts) {
    std::string E = errorOf(C.Bytes.substr(0, Cut));
    EXPECT_NE(E, "") << "cut at " << Cut;
    EXPECT_EQ(E.rfind("t.strider: ", 0), 0u) << E;
  }
}

TEST(Artifact, FlippedBytesAreRefused) {
  Compiled C = compileSample();
  // Every byte of the header and table, then a spread over the rest.
  std::vector<size_t> At;
  for (size_t I = 0; I < 64 + 5 * 32; ++I)
    At.push_back(I);
  for (size_t I = 224; I < C.Bytes.size(); I += 997)
    At.push_back(I);
  for (size_t I : At) {
    std::string B = C.Bytes;
    B[I] = char(B[I] ^ 0x10);
    EXPECT_NE(errorOf(B), "") << "flipped byte " << I << " was accepted";
  }
}

TEST(Artifact, ForeignVersionTargetAndKernelsAreRefused) {
  Compiled C = compileSample();
  std::string B = C.Bytes;
  llvm::support::endian::write32le(&B[8], 2);
  resum(B);
  EXPECT_NE(errorOf(B).find("artifact format version 2"), std::string::npos)
      << errorOf(B);
  B = C.Bytes;
  std::memset(&B[32], 0, 16);
  std::memcpy(&B[32], "9.9.9", 5);
  resum(B);
  EXPECT_NE(errorOf(B).find("written by Strider 9.9.9"), std::string::npos)
      << errorOf(B);
  B = C.Bytes;
  std::memset(&B[48], 0, 16);
  std::memcpy(&B[48], "cuda-sm90", 9);
  resum(B);
  EXPECT_NE(errorOf(B).find("compiled for target 'cuda-sm90'"),
            std::string::npos)
      << errorOf(B);
  EXPECT_NE(errorOf(C.Bytes, "SSE2 mr4 nr8").find("packed for kernels"),
            std::string::npos);
  EXPECT_NE(errorOf("PK\x03\x04 not an artifact at all, a zip").find(
                "not a Strider artifact"),
            std::string::npos);
  EXPECT_NE(errorOf("").find("not a Strider artifact"), std::string::npos);
}

/// The sample model's graph as imported (its batch dim N symbolic), as
/// artifact bytes with \p Ranges and no packed constants.
std::string symbolicArtifact(std::shared_ptr<const Model> &M,
                             llvm::ArrayRef<InputRange> Ranges) {
  M = llvm::cantFail(Model::load(STRIDER_SAMPLE_MODEL));
  std::string Bytes;
  llvm::raw_string_ostream OS(Bytes);
  llvm::cantFail(writeArtifact(OS, M->getGraph(), getDefaultTarget(), nullptr,
                               cpu::getDerivedFormat(), Ranges));
  OS.flush();
  return Bytes;
}

TEST(Artifact, InputRangesRoundTripAndBadOnesAreRefused) {
  std::shared_ptr<const Model> M;
  const std::vector<InputRange> Ranges = {{"image", 0, 1, 4}};
  // The artifact views its bytes: they must outlive it.
  const std::string Bytes = symbolicArtifact(M, Ranges);
  auto A = read(Bytes);
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  EXPECT_EQ(A->Ranges, Ranges);
  auto WriteError = [&](InputRange R) {
    std::string Written;
    llvm::raw_string_ostream OS(Written);
    llvm::Error E = writeArtifact(OS, M->getGraph(), getDefaultTarget(),
                                  nullptr, cpu::getDerivedFormat(), {R});
    return E ? llvm::toString(std::move(E)) : std::string();
  };
  EXPECT_NE(WriteError({"image", 1, 1, 4}).find("dim 1 is static"),
            std::string::npos);
  EXPECT_NE(WriteError({"nope", 0, 1, 4}).find("no such graph input"),
            std::string::npos);
  EXPECT_NE(WriteError({"image", 0, 3, 2}).find("is not a range"),
            std::string::npos);
  EXPECT_NE(WriteError({"image", 7, 1, 2}).find("has no dim 7"),
            std::string::npos);
}

TEST(Artifact, WithoutPackedConstantsItPacksOnceForEveryShape) {
  std::shared_ptr<const Model> M;
  const std::string Bytes = symbolicArtifact(M, {});
  auto A = read(Bytes);
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  EXPECT_EQ(A->DerivedArrays, 0u);
  unsigned Packed = 0;
  for (int64_t N : {1, 3, 2}) {
    auto G = A->G->clone();
    ShapeBindings B;
    B.InputShapes["image"] = {N, 3, 32, 32};
    ASSERT_FALSE(bool(specializeShapes(*G, B)));
    auto Counting = std::make_shared<CountingStore>(A->Derived, true);
    cpu::CPUOptions CO;
    CO.Derived = Counting;
    auto P = cpu::compileForCPU(*G, CO);
    ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
    if (N == 1)
      Packed = Counting->Added;
    else
      EXPECT_EQ(Counting->Added, 0u) << "batch " << N << " packed again";
  }
  EXPECT_GT(Packed, 0u);
}

TEST(Artifact, SessionsRefuseShapesOutsideItsRanges) {
  std::shared_ptr<const Model> Source;
  const std::string Bytes = symbolicArtifact(Source, {{"image", 0, 1, 4}});
  llvm::SmallString<128> Path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("ranges", "strider", Path));
  {
    std::ofstream F(Path.c_str(), std::ios::binary);
    F.write(Bytes.data(), std::streamsize(Bytes.size()));
  }
  auto M = Model::load(Path);
  ASSERT_TRUE(bool(M)) << llvm::toString(M.takeError());
  EXPECT_EQ((*M)->getInputRanges().size(), 1u);
  auto S = Session::create(*M, SessionOptions());
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  for (int64_t N : {1, 4}) {
    runtime::TensorMap In;
    In["image"] = runtime::Tensor(ElementType::F32, {N, 3, 32, 32});
    auto Out = (*S)->run(In);
    EXPECT_TRUE(bool(Out)) << llvm::toString(Out.takeError());
  }
  runtime::TensorMap In;
  In["image"] = runtime::Tensor(ElementType::F32, {5, 3, 32, 32});
  auto Out = (*S)->run(In);
  ASSERT_FALSE(bool(Out));
  EXPECT_NE(llvm::toString(Out.takeError())
                .find("input 'image' dim 0 is 5, outside the range 1..4"),
            std::string::npos);
  EXPECT_EQ((*S)->getNumBuilt(), 2u);
  (void)llvm::sys::fs::remove(Path);
}

} // namespace
