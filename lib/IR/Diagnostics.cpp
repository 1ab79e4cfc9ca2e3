//===- Diagnostics.cpp - Located error messages ---------------------------===//
//
// Formats `<file>: node '<name>' (<OpType>): <message>` errors.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/Diagnostics.h"
#include "strider/IR/Graph.h"

using namespace strider;

llvm::Error strider::makeError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

std::string strider::describeNode(const Node &N) {
  std::string S;
  const std::string &File = N.getLoc().File.empty()
                                ? N.getGraph()->getSourceFile()
                                : N.getLoc().File;
  if (!File.empty())
    S += File + ": ";
  std::string Op = N.getOpType().str();
  if (!N.getDomain().empty())
    Op = N.getDomain().str() + "." + Op;
  if (!N.getLoc().Name.empty()) {
    S += "node '" + N.getLoc().Name + "' (" + Op + ")";
    return S;
  }
  for (unsigned I = 0; I < N.getNumResults(); ++I)
    if (Value *R = N.getResult(I)) {
      S += "node (" + Op + ") producing '" + R->getName() + "'";
      return S;
    }
  S += "node (" + Op + ")";
  return S;
}

llvm::Error strider::makeNodeError(const Node &N, const llvm::Twine &Msg) {
  return makeError(describeNode(N) + ": " + Msg);
}

llvm::Error strider::makeGraphError(const Graph &G, const llvm::Twine &Msg) {
  std::string Prefix;
  if (!G.getSourceFile().empty())
    Prefix = G.getSourceFile() + ": ";
  return makeError(Prefix + "graph '" + G.getName() + "': " + Msg);
}
