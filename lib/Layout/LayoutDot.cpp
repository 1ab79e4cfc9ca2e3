//===- LayoutDot.cpp - Graphviz view of a graph's layouts -----------------===//
//
// One DOT node per graph input and IR node, one edge per use. Fill colours
// say which layout a node writes; relayouts are red boxes.
//
//===----------------------------------------------------------------------===//

#include "strider/Layout/LayoutDot.h"

#include "strider/IR/Graph.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

using namespace strider;

namespace {
/// Quote \p S as a DOT string.
std::string quote(llvm::StringRef S) {
  std::string R = "\"";
  for (char C : S) {
    if (C == '"' || C == '\\')
      R += '\\';
    R += C;
  }
  return R + "\"";
}

/// Fill colour of a value's layout.
const char *getColour(const TensorType &T) {
  if (!T.hasRank() || T.getLayout().isIdentity())
    return T.hasRank() && T.getRank() >= 3 && T.getRank() <= 5 ? "#f6e3b4"
                                                               : "#eeeeee";
  if (T.getLayout().isChannelsLast(T.getRank()))
    return "#b7d7f0";
  return "#d5c4e8";
}
} // namespace

void layout::printLayoutDot(const Graph &G, llvm::raw_ostream &OS) {
  OS << "digraph " << quote(G.getName()) << " {\n";
  OS << "  rankdir=TB;\n  node [shape=box, style=filled, "
        "fontname=\"Helvetica\"];\n";
  OS << "  legend [shape=plaintext, style=\"\", label=<<table border=\"0\">"
        "<tr><td bgcolor=\"#f6e3b4\">channels-first</td>"
        "<td bgcolor=\"#b7d7f0\">channels-last</td>"
        "<td bgcolor=\"#d5c4e8\">other layout</td>"
        "<td bgcolor=\"#ff8a80\">relayout</td></tr></table>>];\n";
  llvm::DenseMap<const Value *, std::string> Source;
  unsigned Id = 0;
  for (Value *In : G.getInputs()) {
    std::string Name = "in" + std::to_string(Id++);
    Source[In] = Name;
    OS << "  " << Name
       << " [shape=ellipse, fillcolor=" << quote(getColour(In->getType()))
       << ", label=" << quote(In->getName() + "\n" + In->getType().str())
       << "];\n";
  }
  for (Node *N : G.nodes()) {
    std::string Name = "n" + std::to_string(Id++);
    const Value *R = N->getNumResults() ? N->getResult(0) : nullptr;
    bool IsRelayout = N->getOpId() == OpId::Relayout;
    // Constants are laid out at compile time: no colour.
    bool IsConstant = N->getOpId() == OpId::Constant;
    std::string Label = N->getOpType().str();
    if (!N->getLoc().Name.empty())
      Label += " '" + N->getLoc().Name + "'";
    if (R)
      Label += "\n" + R->getType().str();
    OS << "  " << Name << " [fillcolor="
       << quote(IsRelayout         ? "#ff8a80"
                : R && !IsConstant ? getColour(R->getType())
                                   : "#eeeeee");
    if (IsRelayout)
      OS << ", penwidth=2";
    OS << ", label=" << quote(Label) << "];\n";
    for (unsigned I = 0; I < N->getNumOperands(); ++I) {
      Value *V = N->getOperand(I);
      if (!V)
        continue;
      auto It = Source.find(V);
      if (It == Source.end())
        continue;
      OS << "  " << It->second << " -> " << Name << ";\n";
    }
    for (unsigned I = 0; I < N->getNumResults(); ++I)
      if (Value *Res = N->getResult(I))
        Source[Res] = Name;
  }
  for (unsigned I = 0; I < G.getOutputs().size(); ++I) {
    std::string Name = "out" + std::to_string(I);
    const Value *V = G.getOutputs()[I];
    OS << "  " << Name
       << " [shape=ellipse, fillcolor=" << quote(getColour(V->getType()))
       << ", label=" << quote(V->getName() + "\n" + V->getType().str())
       << "];\n";
    auto It = Source.find(V);
    if (It != Source.end())
      OS << "  " << It->second << " -> " << Name << ";\n";
  }
  OS << "}\n";
}
