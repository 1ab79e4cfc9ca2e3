//===- layout-pass-bench.cpp - Layout assignment on large graphs ----------===//
//
// Builds CNN-shaped IR graphs of about 1k, 10k and 50k nodes (residual
// blocks of conv-relu-conv-add-relu, every fourth block a grouped conv that
// prefers channels-first, every eighth a pooling and a channel concat) and
// times the whole layout-assignment pass on each: problem building, the
// min-cut solve, materialization and the report. Prints the median of
// several runs per size. A benchmark: run it by hand, not from ctest.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Graph.h"
#include "strider/Layout/LayoutAssignment.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <memory>

using namespace strider;

namespace {

/// Appends nodes to a graph, keeping names unique.
class CnnBuilder {
public:
  explicit CnnBuilder(Graph &G) : G(G) {}

  Value *input(unsigned C, unsigned H) {
    return G.addInput("image", TensorType::get(ElementType::F32, {1, C, H, H}));
  }

  Value *conv(Value *X, unsigned Cout, unsigned Group) {
    const TensorType &T = X->getType();
    int64_t C = T.getDim(1).getSize(), H = T.getDim(2).getSize();
    Value *W = G.addInput(
        name("w"), TensorType::get(ElementType::F32, {Cout, C / Group, 3, 3}));
    Node *N =
        G.createNode(OpId::Conv, {X, W}, {name("conv")},
                     {TensorType::get(ElementType::F32, {1, Cout, H, H})});
    N->setAttr("pads", Attribute::getInts({1, 1, 1, 1}));
    if (Group > 1)
      N->setAttr("group", Attribute::getInt(Group));
    return N->getResult(0);
  }

  Value *unary(OpId Op, Value *X) {
    return G.createNode(Op, {X}, {name("u")}, {X->getType()})->getResult(0);
  }

  Value *add(Value *A, Value *B) {
    return G.createNode(OpId::Add, {A, B}, {name("add")}, {A->getType()})
        ->getResult(0);
  }

  Value *concat(Value *A, Value *B) {
    const TensorType &T = A->getType();
    int64_t C = T.getDim(1).getSize() + B->getType().getDim(1).getSize();
    int64_t H = T.getDim(2).getSize();
    Node *N = G.createNode(OpId::Concat, {A, B}, {name("cat")},
                           {TensorType::get(ElementType::F32, {1, C, H, H})});
    N->setAttr("axis", Attribute::getInt(1));
    return N->getResult(0);
  }

  Value *pool(Value *X) {
    const TensorType &T = X->getType();
    int64_t C = T.getDim(1).getSize(), H = T.getDim(2).getSize();
    Node *N = G.createNode(
        OpId::MaxPool, {X}, {name("pool"), ""},
        {TensorType::get(ElementType::F32, {1, C, H, H}), TensorType()});
    N->setAttr("kernel_shape", Attribute::getInts({3, 3}));
    N->setAttr("pads", Attribute::getInts({1, 1, 1, 1}));
    return N->getResult(0);
  }

private:
  std::string name(const char *Base) {
    return std::string(Base) + std::to_string(Counter++);
  }

  Graph &G;
  unsigned Counter = 0;
};

std::unique_ptr<Graph> buildGraph(unsigned NumNodes) {
  auto G = std::make_unique<Graph>("cnn");
  CnnBuilder B(*G);
  Value *X = B.conv(B.input(32, 28), 32, 1);
  for (unsigned Block = 0; G->getNumNodes() < NumNodes; ++Block) {
    unsigned Group = Block % 4 == 3 ? 16 : 1;
    Value *Y = B.unary(OpId::Relu, B.conv(X, 32, Group));
    Y = B.conv(Y, 32, 1);
    X = B.unary(OpId::Relu, B.add(Y, X));
    if (Block % 8 == 7) {
      Value *P = B.pool(X);
      X = B.conv(B.concat(X, P), 32, 1);
    }
  }
  G->addOutput(X);
  return G;
}

} // namespace

int main() {
  const unsigned Sizes[] = {1000, 10000, 50000};
  llvm::outs() << "layout-assignment pass (cpu-avx512), median of 5 runs\n";
  for (unsigned Size : Sizes) {
    std::vector<double> Ms;
    size_t Nodes = 0, Relayouts = 0;
    for (unsigned Run = 0; Run < 5; ++Run) {
      std::unique_ptr<Graph> G = buildGraph(Size);
      Nodes = G->getNumNodes();
      auto Start = std::chrono::steady_clock::now();
      auto R = layout::assignLayouts(*G, layout::LayoutOptions());
      auto End = std::chrono::steady_clock::now();
      if (!R) {
        llvm::errs() << llvm::toString(R.takeError()) << "\n";
        return 1;
      }
      Relayouts = R->Relayouts.size();
      Ms.push_back(
          std::chrono::duration<double, std::milli>(End - Start).count());
    }
    std::sort(Ms.begin(), Ms.end());
    llvm::outs() << llvm::format("%6zu nodes: %8.2f ms (%zu relayouts)\n",
                                 Nodes, Ms[Ms.size() / 2], Relayouts);
  }
  return 0;
}
