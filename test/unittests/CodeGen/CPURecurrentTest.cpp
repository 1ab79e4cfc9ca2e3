//===- CPURecurrentTest.cpp - LSTM and GRU kernels ------------------------===//
//
// The CPU backend's LSTM and GRU (one GEMM for the input projection, GEMMs
// and a SIMD gate step per time step) against the reference interpreter,
// with no fallback: every direction, with and without sequence lengths,
// initial states (and LSTM's peepholes), batch-major layout, clipping,
// coupled gates, GRU's two linear_before_reset forms and weights given as
// inputs (packed by every run); every result; the same bits on 1 and 3
// threads.
//
//===----------------------------------------------------------------------===//

#include "CPUTestGraph.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace strider;

namespace {

using GraphBuilder = cputest::TestGraph;

struct LstmCase {
  const char *Direction;
  int64_t Seq, Batch, In, Hidden;
  bool Lens, Initial, Peep, BatchMajor;
  float Clip;
  bool InputForget;
  bool WeightInputs = false; ///< W, R, B and P as graph inputs.
};

std::string describe(const LstmCase &C) {
  return std::string(C.Direction) + " seq " + std::to_string(C.Seq) +
         " batch " + std::to_string(C.Batch) + " in " + std::to_string(C.In) +
         " hidden " + std::to_string(C.Hidden) + (C.Lens ? " lens" : "") +
         (C.Initial ? " initial" : "") + (C.Peep ? " peep" : "") +
         (C.BatchMajor ? " layout1" : "") + (C.Clip > 0 ? " clip" : "") +
         (C.InputForget ? " input_forget" : "") +
         (C.WeightInputs ? " weight inputs" : "");
}

/// Builds the LSTM of \p C and checks result \p Result against the
/// reference.
void checkLstm(const LstmCase &C, unsigned Result,
               std::vector<int> Threads = {1}) {
  SCOPED_TRACE(describe(C) + ", result " + std::to_string(Result));
  GraphBuilder B(unsigned(C.Seq * 31 + C.Batch * 7 + C.Hidden + Result));
  const int64_t Dirs = std::string(C.Direction) == "bidirectional" ? 2 : 1;
  const int64_t H = C.Hidden;
  Value *X = B.input(C.BatchMajor ? std::vector<int64_t>{C.Batch, C.Seq, C.In}
                                  : std::vector<int64_t>{C.Seq, C.Batch, C.In});
  auto Weight = [&](std::vector<int64_t> Shape) {
    return C.WeightInputs ? B.input(Shape) : B.constant(Shape);
  };
  Value *W = Weight({Dirs, 4 * H, C.In});
  Value *R = Weight({Dirs, 4 * H, H});
  Value *Bias = Weight({Dirs, 8 * H});
  Value *Lens = nullptr;
  if (C.Lens) {
    std::vector<int64_t> L;
    for (int64_t I = 0; I < C.Batch; ++I)
      L.push_back((C.Seq * (I + 1) * 2 / (C.Batch + 1)) % (C.Seq + 1));
    TensorDataRef D = TensorData::fromInt64(ElementType::I32, {C.Batch}, L);
    Node *N = B.G.createNode(OpId::Constant, {}, {B.G.makeUniqueName("l")},
                             {D->getType()});
    N->setAttr("value", Attribute::getTensor(D));
    Lens = N->getResult(0);
  }
  std::vector<int64_t> StateShape =
      C.BatchMajor ? std::vector<int64_t>{C.Batch, Dirs, H}
                   : std::vector<int64_t>{Dirs, C.Batch, H};
  Value *H0 = C.Initial ? B.input(StateShape) : nullptr;
  Value *C0 = C.Initial ? B.input(StateShape) : nullptr;
  Value *P = C.Peep ? Weight({Dirs, 3 * H}) : nullptr;
  std::vector<std::pair<std::string, Attribute>> Attrs = {
      {"direction", Attribute::getString(C.Direction)},
      {"hidden_size", Attribute::getInt(H)}};
  if (C.BatchMajor)
    Attrs.push_back({"layout", Attribute::getInt(1)});
  if (C.Clip > 0)
    Attrs.push_back({"clip", Attribute::getFloat(C.Clip)});
  if (C.InputForget)
    Attrs.push_back({"input_forget", Attribute::getInt(1)});
  Value *Y = B.op(OpId::LSTM, {X, W, R, Bias, Lens, H0, C0, P}, Attrs, 3);
  Node *N = Y->getDefiningNode();
  B.checkThreads(N->getResult(Result), "lstm.", Threads);
}

TEST(CPURecurrentTest, LSTMMatchesReference) {
  for (const char *Dir : {"forward", "reverse", "bidirectional"})
    for (bool Lens : {false, true})
      for (int64_t Batch : {1, 3})
        for (int64_t Hidden : {3, 17})
          for (bool Initial : {false, true})
            for (unsigned Result : {0u, 1u, 2u}) {
              LstmCase C{Dir,     5,       Batch, 4,    Hidden, Lens,
                         Initial, Initial, false, 0.0f, false};
              checkLstm(C, Result);
            }
}

TEST(CPURecurrentTest, LSTMLayoutClipAndThreads) {
  const LstmCase Cases[] = {
      {"bidirectional", 6, 2, 5, 8, true, true, true, true, 0.0f, false},
      {"reverse", 4, 3, 2, 33, false, true, false, true, 0.5f, false},
      {"forward", 7, 2, 3, 16, true, false, true, false, 0.0f, true},
      {"bidirectional", 9, 5, 24, 40, true, true, true, false, 2.0f, false},
      {"bidirectional", 4, 2, 3, 5, true, true, true, false, 0.0f, false, true},
      {"forward", 3, 1, 2, 7, false, false, false, true, 0.0f, false, true},
  };
  for (const LstmCase &C : Cases)
    for (unsigned Result : {0u, 1u, 2u})
      checkLstm(C, Result, {1, 3});
}

TEST(CPURecurrentTest, LSTMSequenceLengthOutOfRange) {
  // A length past the sequence is a located error of the run, in both
  // executors.
  GraphBuilder B(5);
  Value *X = B.input({4, 2, 3});
  TensorDataRef D = TensorData::fromInt64(ElementType::I32, {2}, {4, 7});
  Node *LN = B.G.createNode(OpId::Constant, {}, {B.G.makeUniqueName("l")},
                            {D->getType()});
  LN->setAttr("value", Attribute::getTensor(D));
  Value *Y = B.op(OpId::LSTM,
                  {X, B.constant({1, 8, 3}), B.constant({1, 8, 2}), nullptr,
                   LN->getResult(0)},
                  {{"hidden_size", Attribute::getInt(2)}}, 3);
  Y->getDefiningNode()->setLoc(Location{"", "rnn"});
  B.G.addOutput(Y);
  auto Want = runtime::runReference(B.G, B.Inputs);
  ASSERT_FALSE(bool(Want));
  EXPECT_NE(llvm::toString(Want.takeError())
                .find("node 'rnn' (LSTM): sequence_lens entry 1 is 7, "
                      "expected 0 to 4"),
            std::string::npos);
  auto Prog = cpu::compileForCPU(B.G, cpu::CPUOptions());
  ASSERT_TRUE(bool(Prog)) << llvm::toString(Prog.takeError());
  ASSERT_FALSE((*Prog)->getSteps()[0].Fallback);
  auto Got = (*Prog)->run(B.Inputs);
  ASSERT_FALSE(bool(Got));
  EXPECT_NE(llvm::toString(Got.takeError())
                .find("node 'rnn' (LSTM): sequence_lens entry 1 is 7, "
                      "expected 0 to 4"),
            std::string::npos);
}

struct GruCase {
  const char *Direction;
  int64_t Seq, Batch, In, Hidden;
  bool Lens, Initial, LinearBeforeReset, BatchMajor;
  float Clip;
  bool WeightInputs = false;
};

/// Builds the GRU of \p C and checks result \p Result (Y or Y_h) against
/// the reference.
void checkGru(const GruCase &C, unsigned Result,
              std::vector<int> Threads = {1}) {
  SCOPED_TRACE(std::string(C.Direction) + " seq " + std::to_string(C.Seq) +
               " batch " + std::to_string(C.Batch) + " hidden " +
               std::to_string(C.Hidden) + (C.Lens ? " lens" : "") +
               (C.Initial ? " initial" : "") +
               (C.LinearBeforeReset ? " linear_before_reset" : "") +
               (C.BatchMajor ? " layout1" : "") + (C.Clip > 0 ? " clip" : "") +
               (C.WeightInputs ? " weight inputs" : "") + ", result " +
               std::to_string(Result));
  GraphBuilder B(unsigned(C.Seq * 29 + C.Batch * 5 + C.Hidden + Result));
  const int64_t Dirs = std::string(C.Direction) == "bidirectional" ? 2 : 1;
  const int64_t H = C.Hidden;
  Value *X = B.input(C.BatchMajor ? std::vector<int64_t>{C.Batch, C.Seq, C.In}
                                  : std::vector<int64_t>{C.Seq, C.Batch, C.In});
  auto Weight = [&](std::vector<int64_t> Shape) {
    return C.WeightInputs ? B.input(Shape) : B.constant(Shape);
  };
  Value *W = Weight({Dirs, 3 * H, C.In});
  Value *R = Weight({Dirs, 3 * H, H});
  Value *Bias = Weight({Dirs, 6 * H});
  Value *Lens = nullptr;
  if (C.Lens) {
    std::vector<int64_t> L;
    for (int64_t I = 0; I < C.Batch; ++I)
      L.push_back((C.Seq * (I + 1) * 2 / (C.Batch + 1)) % (C.Seq + 1));
    TensorDataRef D = TensorData::fromInt64(ElementType::I64, {C.Batch}, L);
    Node *N = B.G.createNode(OpId::Constant, {}, {B.G.makeUniqueName("l")},
                             {D->getType()});
    N->setAttr("value", Attribute::getTensor(D));
    Lens = N->getResult(0);
  }
  Value *H0 =
      C.Initial ? B.input(C.BatchMajor ? std::vector<int64_t>{C.Batch, Dirs, H}
                                       : std::vector<int64_t>{Dirs, C.Batch, H})
                : nullptr;
  std::vector<std::pair<std::string, Attribute>> Attrs = {
      {"direction", Attribute::getString(C.Direction)},
      {"hidden_size", Attribute::getInt(H)}};
  if (C.LinearBeforeReset)
    Attrs.push_back({"linear_before_reset", Attribute::getInt(1)});
  if (C.BatchMajor)
    Attrs.push_back({"layout", Attribute::getInt(1)});
  if (C.Clip > 0)
    Attrs.push_back({"clip", Attribute::getFloat(C.Clip)});
  Value *Y = B.op(OpId::GRU, {X, W, R, Bias, Lens, H0}, Attrs, 2);
  Node *N = Y->getDefiningNode();
  B.checkThreads(N->getResult(Result), "gru.", Threads);
}

TEST(CPURecurrentTest, GRUMatchesReference) {
  for (const char *Dir : {"forward", "reverse", "bidirectional"})
    for (bool Lens : {false, true})
      for (int64_t Batch : {1, 3})
        for (int64_t Hidden : {3, 17})
          for (bool Initial : {false, true})
            for (bool LBR : {false, true})
              for (unsigned Result : {0u, 1u}) {
                GruCase C{Dir,  5,       Batch, 4,     Hidden,
                          Lens, Initial, LBR,   false, 0.0f};
                checkGru(C, Result);
              }
}

TEST(CPURecurrentTest, GRULayoutClipAndThreads) {
  const GruCase Cases[] = {
      {"bidirectional", 6, 2, 5, 8, true, true, false, true, 0.0f},
      {"reverse", 4, 3, 2, 33, false, true, true, true, 0.5f},
      {"bidirectional", 9, 5, 24, 40, true, true, false, false, 1.5f},
      {"bidirectional", 4, 2, 3, 5, true, true, true, false, 0.0f, true},
      {"forward", 3, 1, 2, 7, false, false, false, true, 0.0f, true},
  };
  for (const GruCase &C : Cases)
    for (unsigned Result : {0u, 1u})
      checkGru(C, Result, {1, 3});
}

} // namespace
