//===- LirFuzzer.cpp - libFuzzer target on the textual IR parser ---------===//
//
// Feeds arbitrary text to parseGraph (the lexer, literals, types, layouts,
// attributes, nested graphs), then, for a graph that parses, the verifier
// and shape inference, and for one that verifies, the printer and the
// parser again: a printed graph must parse back (anything else is a
// finding, as is a crash, a sanitizer report or a leak). Seeds in
// test/fuzz/corpus/lir are graphs of the lit tests.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/AsmParser.h"
#include "strider/IR/AsmPrinter.h"
#include "strider/IR/Graph.h"
#include "strider/IR/ShapeInference.h"
#include "strider/IR/Verifier.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  auto G = strider::parseGraph(Text, "fuzz.lir");
  if (!G) {
    llvm::consumeError(G.takeError());
    return 0;
  }
  if (llvm::Error E = strider::verifyGraph(**G)) {
    llvm::consumeError(std::move(E));
    return 0;
  }
  std::string Printed;
  llvm::raw_string_ostream OS(Printed);
  strider::printGraph(**G, OS);
  OS.flush();
  auto Again = strider::parseGraph(Printed, "printed.lir");
  if (!Again) {
    std::fprintf(stderr,
                 "a verified graph printed as text that does not "
                 "parse: %s\n%s\n",
                 llvm::toString(Again.takeError()).c_str(), Printed.c_str());
    std::abort();
  }
  if (llvm::Error E = strider::inferShapes(**G))
    llvm::consumeError(std::move(E));
  return 0;
}
