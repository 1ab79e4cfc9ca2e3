//===- LayoutAssignment.h - Global layout choice and its report -*- C++ -*-===//
//
// Chooses channels-first or channels-last for every rank-3..5 activation of
// a graph by minimizing the estimated total time (kernels + relayouts) over
// the whole graph, then materializes the choice: result layouts, relayout
// nodes where a consumer needs another layout (one per value and layout),
// constants laid out for their consumers, and graph inputs/outputs in the
// layout the caller asked for. Every decision is recorded in a report.
//
// Run after shape inference (and preferably canonicalization).
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_LAYOUT_LAYOUTASSIGNMENT_H
#define STRIDER_LAYOUT_LAYOUTASSIGNMENT_H

#include "strider/Layout/CostModel.h"
#include "strider/Layout/Tuning.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace strider {

class Graph;

namespace layout {

/// `--layout`: let the cost model decide, or force every activation that
/// can to one layout.
enum class LayoutMode { Auto, ChannelsFirst, ChannelsLast };
/// `--io-layout`: layout of rank-3..5 graph inputs and outputs.
enum class IOLayout { AsModel, ChannelsFirst, ChannelsLast };

struct LayoutOptions {
  const TargetDescription *Target = &getDefaultTarget();
  LayoutMode Mode = LayoutMode::Auto;
  IOLayout IO = IOLayout::AsModel;
  DimBindings Dims;
  /// Measured kernel times (`--tuning-file`); null: estimates only.
  std::shared_ptr<TuningTable> Tuning;
  /// Called with the graph before it is costed, to add what \p Tuning
  /// lacks (`strider-compile --tune`, which times the CPU backend's
  /// kernels); needs Tuning.
  std::function<llvm::Error(const Graph &, const DimBindings &, TuningTable &)>
      Tune;
  /// Say why each value got its layout and list every value, relayout and
  /// copy in the report; off, the report has only the costs (a session
  /// building a specialization per input shape reads none of it).
  bool Explain = true;
  /// Record every node's label in LayoutReport::NodeLabels.
  bool RecordLabels = false;
  /// Labels to keep (another solution's LayoutReport::NodeLabels, such as
  /// that of this graph specialized to representative sizes): each node
  /// they name whose variable may take the label there is fixed to it;
  /// the rest are solved as usual.
  std::shared_ptr<const std::map<std::string, uint8_t>> Keep;
};

/// Parse `auto|nchw|nhwc` (`ncdhw`/`ndhwc`, `channels-first`/`-last` too).
llvm::Expected<LayoutMode> parseLayoutMode(llvm::StringRef Text);
/// Parse `model|nchw|nhwc` (and the same aliases).
llvm::Expected<IOLayout> parseIOLayout(llvm::StringRef Text);
/// Parse `N=1` into \p Dims.
llvm::Error parseDimBinding(llvm::StringRef Text, DimBindings &Dims);
/// Options from the tools' flag values (`--target`, `--layout`,
/// `--io-layout`, `--dim`); an error names the bad value and what is
/// accepted.
llvm::Expected<LayoutOptions>
parseLayoutOptions(llvm::StringRef Target, llvm::StringRef Mode,
                   llvm::StringRef IO, llvm::ArrayRef<std::string> Dims);

/// What was decided and why.
struct LayoutReport {
  struct ValueEntry {
    std::string Name, Shape, Layout, Reason;
  };
  struct RelayoutEntry {
    std::string Value, From, To, Reason;
    int64_t Bytes;
    /// The tensor has dims that are not static: Bytes counts them at their
    /// costed sizes (CostedDims).
    bool Symbolic = false;
  };
  /// A Reshape/Flatten/Transpose that is not a view in the chosen layouts
  /// and so copies its operand.
  struct CopyEntry {
    std::string Node, Op, Value;
    int64_t Bytes;
    bool Symbolic = false;
  };
  /// A dim that is not static, and the size costs assumed for it.
  struct CostedDim {
    std::string Symbol; ///< "?" for unknown dims.
    int64_t Size;
    bool Bound; ///< Given (--dim), as opposed to the default of 1.
  };

  std::string Target;
  std::string Mode;
  /// The graph inputs and their types (bound shapes after specialization).
  std::vector<std::pair<std::string, std::string>> Inputs;
  /// Every non-static dim of the graph and the size it was costed as;
  /// empty when every shape is static.
  std::vector<CostedDim> CostedDims;
  std::vector<ValueEntry> Values;
  std::vector<RelayoutEntry> Relayouts;
  std::vector<CopyEntry> Copies;
  unsigned NumVariables = 0;
  /// View terms that were not submodular and were bounded from above (see
  /// docs/Layouts.md); 0 means the solution is exactly optimal.
  unsigned NumApproximatedTerms = 0;
  /// Constants laid out anew for a consumer, and Gemm/MatMul weights whose
  /// rows were permuted so that a flatten reads channels-last bytes.
  unsigned NumConstantsRelaid = 0;
  /// Convs that read one layout and write the other in one kernel.
  unsigned NumMixedKernels = 0;
  unsigned NumWeightsPermuted = 0;
  int64_t RelayoutBytes = 0;
  int64_t CopyBytes = 0;
  /// With a tuning table: the convs, and how many of them were costed by
  /// measurements.
  bool Tuned = false;
  unsigned NumConvs = 0;
  unsigned NumMeasuredConvs = 0;
  /// Estimated times in picoseconds.
  Cost EstimatedCost = 0;
  Cost AllChannelsFirstCost = 0;
  Cost AllChannelsLastCost = 0;
  /// With LayoutOptions::RecordLabels: the label (0 channels-first, 1
  /// channels-last) of each node's variable, by the name of the node's
  /// first result, and of the layout a mixed-kernel conv reads, by that
  /// name and "#input".
  std::map<std::string, uint8_t> NodeLabels;
  /// Nodes whose label LayoutOptions::Keep fixed.
  unsigned NumKeptLabels = 0;

  /// FileCheck-able text form: totals, then one line per value, relayout
  /// and copy.
  void printText(llvm::raw_ostream &OS) const;
  /// JSON: {"target", "mode", "totals": {...}, "values": [...],
  /// "relayouts": [...], "copies": [...]}.
  void printJSON(llvm::raw_ostream &OS) const;
  /// A few lines for a terminal.
  void printSummary(llvm::raw_ostream &OS) const;
  /// One line: the sizes dynamic dims were costed as.
  void printCostedDims(llvm::raw_ostream &OS) const;
};

/// Choose and materialize layouts for \p G. Errors are located diagnostics
/// (an unranked activation, an op the model cannot cost).
llvm::Expected<LayoutReport> assignLayouts(Graph &G, const LayoutOptions &Opts);

} // namespace layout
} // namespace strider

#endif // STRIDER_LAYOUT_LAYOUTASSIGNMENT_H
