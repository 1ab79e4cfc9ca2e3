//===- LayoutAssignment.cpp - The layout-assignment pass ------------------===//
//
// Runs Strider's global layout choice (lib/Layout) on a graph with the
// tool's target, --layout, --io-layout and dim bindings, and hands the
// report to the tool.
//
//===----------------------------------------------------------------------===//

#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"

#include "strider/Layout/LayoutAssignment.h"

using namespace strider;

namespace {
class LayoutAssignmentPass : public Pass {
public:
  llvm::StringRef getArgument() const override { return "layout-assignment"; }

  void configure(const PipelineOptions &Opts) override {
    Options = Opts.Layout;
    Reports = Opts.LayoutReports;
  }

  llvm::Error run(Graph &G) override {
    llvm::Expected<layout::LayoutReport> R = layout::assignLayouts(G, Options);
    if (!R)
      return R.takeError();
    if (Reports)
      Reports->push_back(std::move(*R));
    return llvm::Error::success();
  }

private:
  layout::LayoutOptions Options;
  std::vector<layout::LayoutReport> *Reports = nullptr;
};
} // namespace

std::unique_ptr<Pass> strider::createLayoutAssignmentPass() {
  return std::make_unique<LayoutAssignmentPass>();
}
