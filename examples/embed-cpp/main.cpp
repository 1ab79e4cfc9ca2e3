// describe: list a model's inputs and outputs, then run it from two
// threads at once (one session each) and check both agree.
//
//   describe MODEL [BATCH]
//
// Every input must have a known element type of f32 or i64 and a known
// rank; symbolic dims take BATCH (default 2). Inputs are filled with a
// fixed pattern.
#include <strider/strider.hpp>

#include <cstdio>
#include <cstring>
#include <thread>

namespace api = strider::api;

static std::string shapeOf(const api::TensorInfo &T) {
  if (!T.Ranked)
    return "(unranked)";
  std::string S = "[";
  for (size_t I = 0; I < T.Shape.size(); ++I)
    S += (I ? ", " : "") + (T.Shape[I] >= 0 ? std::to_string(T.Shape[I])
                                            : T.DimNames[I]);
  return S + "]" + (T.Layout.empty() ? "" : " " + T.Layout);
}

struct Buffer {
  std::vector<int64_t> Shape;
  std::vector<unsigned char> Bytes;
  DLTensor View;
};

/// Inputs of \p M with symbolic dims set to \p Batch, filled with a
/// pattern.
static std::vector<Buffer> makeInputs(const api::Model &M, int64_t Batch) {
  std::vector<Buffer> In(M.numInputs());
  for (size_t I = 0; I < In.size(); ++I) {
    api::TensorInfo T = M.input(I);
    if (!T.Ranked || T.Type.bits == 0)
      throw std::runtime_error("input '" + T.Name + "' has no known type");
    for (int64_t D : T.Shape)
      In[I].Shape.push_back(D >= 0 ? D : Batch);
    int64_t N = 1;
    for (int64_t D : In[I].Shape)
      N *= D;
    In[I].Bytes.resize(size_t(N) * T.Type.bits / 8);
    for (int64_t K = 0; K < N; ++K) {
      if (T.Type.code == kDLFloat && T.Type.bits == 32) {
        float V = float((K * 7919) % 1000) / 1000.0f - 0.5f;
        std::memcpy(&In[I].Bytes[size_t(K) * 4], &V, 4);
      } else if (T.Type.code == kDLInt && T.Type.bits == 64) {
        int64_t V = K % 3;
        std::memcpy(&In[I].Bytes[size_t(K) * 8], &V, 8);
      } else {
        throw std::runtime_error("input '" + T.Name +
                                 "': only f32 and i64 inputs are filled");
      }
    }
    In[I].View = api::tensorView(In[I].Bytes.data(), T.Type, In[I].Shape);
  }
  return In;
}

/// Runs \p S on \p In; the outputs' bytes.
static std::vector<std::vector<unsigned char>>
runOnce(api::Session &S, const std::vector<Buffer> &In, size_t NumOutputs) {
  std::vector<DLTensor> Views;
  for (const Buffer &B : In)
    Views.push_back(B.View);
  S.prepare(Views);
  std::vector<Buffer> Out;
  for (size_t I = 0; I < NumOutputs; ++I) {
    // Static once prepared: the shapes of these inputs' outputs.
    api::TensorInfo T = S.output(I);
    Buffer B;
    B.Shape = T.Shape;
    B.Bytes.resize(size_t(T.numElements()) * T.Type.bits / 8);
    B.View = api::tensorView(nullptr, T.Type, B.Shape);
    Out.push_back(std::move(B));
  }
  std::vector<DLTensor> OutViews;
  for (Buffer &B : Out) {
    B.View.data = B.Bytes.data();
    B.View.shape = B.Shape.data();
    OutViews.push_back(B.View);
  }
  S.run(Views, OutViews);
  std::vector<std::vector<unsigned char>> Result;
  for (Buffer &B : Out)
    Result.push_back(std::move(B.Bytes));
  return Result;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: describe MODEL [BATCH]\n");
    return 2;
  }
  try {
    api::Model M = api::Model::load(argv[1]);
    std::printf("strider %s: %s\n", strider_version(), argv[1]);
    for (size_t I = 0; I < M.numInputs(); ++I)
      std::printf("input %zu: %s %s\n", I, M.input(I).Name.c_str(),
                  shapeOf(M.input(I)).c_str());
    for (size_t I = 0; I < M.numOutputs(); ++I)
      std::printf("output %zu: %s %s\n", I, M.output(I).Name.c_str(),
                  shapeOf(M.output(I)).c_str());
    const int64_t Batch = argc > 2 ? std::atoll(argv[2]) : 2;
    std::vector<Buffer> In = makeInputs(M, Batch);

    // Two sessions of one model (they share its weights), one per thread.
    api::Session A(M), B(M);
    std::vector<std::vector<unsigned char>> OutA, OutB;
    std::string ErrorB;
    std::thread T([&] {
      try {
        OutB = runOnce(B, In, M.numOutputs());
      } catch (const std::exception &E) {
        ErrorB = E.what();
      }
    });
    OutA = runOnce(A, In, M.numOutputs());
    T.join();
    if (!ErrorB.empty())
      throw std::runtime_error(ErrorB);
    // The same shapes again: the cached program runs.
    std::vector<std::vector<unsigned char>> Again = runOnce(A, In, M.numOutputs());
    std::printf("ran at batch %lld on two threads: outputs %s; programs "
                "built by one session for two runs: %zu (size classes "
                "optimized: %zu)\n",
                (long long)Batch,
                OutA == OutB && OutA == Again ? "identical" : "DIFFER",
                A.programsBuilt(), A.sizeClasses());
    return OutA == OutB && OutA == Again ? 0 : 1;
  } catch (const api::Error &E) {
    std::fprintf(stderr, "describe: %s (status %d)\n", E.what(), E.status());
  } catch (const std::exception &E) {
    std::fprintf(stderr, "describe: %s\n", E.what());
  }
  return 1;
}
