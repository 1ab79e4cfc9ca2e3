//===- Pass.h - Passes and the pass manager ---------------------*- C++ -*-===//
//
// A pass transforms a graph in place. The pass manager runs a pipeline and
// verifies the graph after every pass (on by default).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_TRANSFORMS_PASS_H
#define STRIDER_TRANSFORMS_PASS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <vector>

namespace strider {

class Graph;
struct PipelineOptions;

class Pass {
public:
  virtual ~Pass();
  /// The pass's command-line name (`infer-shapes`).
  virtual llvm::StringRef getArgument() const = 0;
  /// Take the tool's settings; passes without options ignore them.
  virtual void configure(const PipelineOptions &) {}
  /// Run on \p G; errors are located diagnostics about the model.
  virtual llvm::Error run(Graph &G) = 0;
};

/// A pass without options or state: its command-line name and a function of
/// the graph.
std::unique_ptr<Pass> createFunctionPass(llvm::StringRef Argument,
                                         llvm::Error (*Run)(Graph &));

class PassManager {
public:
  void addPass(std::unique_ptr<Pass> P) { Passes.push_back(std::move(P)); }
  void setVerifyEach(bool V) { VerifyEach = V; }
  bool empty() const { return Passes.empty(); }
  /// Hand \p Opts to every pass added so far.
  void configure(const PipelineOptions &Opts) {
    for (auto &P : Passes)
      P->configure(Opts);
  }
  size_t size() const { return Passes.size(); }
  /// Run every pass in order, verifying after each when enabled. A
  /// verification failure names the pass that broke the graph.
  llvm::Error run(Graph &G);

private:
  std::vector<std::unique_ptr<Pass>> Passes;
  bool VerifyEach = true;
};

} // namespace strider

#endif // STRIDER_TRANSFORMS_PASS_H
