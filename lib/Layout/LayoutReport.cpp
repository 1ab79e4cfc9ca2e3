//===- LayoutReport.cpp - Text, JSON and summary forms of the report ------===//
//
// Printers for LayoutReport. The text form is meant for FileCheck and for
// reading; the JSON form for tools (strider-compile's report.json).
//
//===----------------------------------------------------------------------===//

#include "strider/Layout/LayoutAssignment.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace strider;
using namespace strider::layout;

static void printUs(llvm::raw_ostream &OS, Cost Ps) {
  if (Ps >= InfiniteCost)
    OS << "inf";
  else
    OS << llvm::format("%.3f", double(Ps) / 1e6);
}

void LayoutReport::printText(llvm::raw_ostream &OS) const {
  OS << "layout report: target " << Target << ", mode " << Mode << "\n";
  OS << "totals: relayouts " << Relayouts.size() << ", relayout bytes "
     << RelayoutBytes << ", copies " << Copies.size() << ", copy bytes "
     << CopyBytes << "\n";
  OS << "estimated cost (us): chosen ";
  printUs(OS, EstimatedCost);
  OS << ", all-nchw ";
  printUs(OS, AllChannelsFirstCost);
  OS << ", all-nhwc ";
  printUs(OS, AllChannelsLastCost);
  OS << "\n";
  OS << "problem: " << NumVariables << " variables, " << NumApproximatedTerms
     << " approximated terms; " << NumMixedKernels << " mixed-layout convs, "
     << NumConstantsRelaid << " constants laid out, " << NumWeightsPermuted
     << " weights permuted\n";
  if (Tuned)
    OS << "tuning: " << NumMeasuredConvs << " of " << NumConvs
       << " convs measured\n";
  for (const auto &[Name, Type] : Inputs)
    OS << "input '" << Name << "' " << Type << "\n";
  if (!CostedDims.empty())
    printCostedDims(OS);
  for (const ValueEntry &V : Values)
    OS << "value '" << V.Name << "' " << V.Shape << " " << V.Layout << ": "
       << V.Reason << "\n";
  for (const RelayoutEntry &R : Relayouts)
    OS << "relayout '" << R.Value << "' " << R.From << " -> " << R.To << ", "
       << R.Bytes << " bytes" << (R.Symbolic ? " (symbolic)" : "") << ": "
       << R.Reason << "\n";
  for (const CopyEntry &C : Copies)
    OS << "copy '" << C.Value << "' by " << C.Op << " '" << C.Node << "', "
       << C.Bytes << " bytes" << (C.Symbolic ? " (symbolic)" : "") << "\n";
}

void LayoutReport::printCostedDims(llvm::raw_ostream &OS) const {
  OS << "dynamic dims costed as:";
  for (const CostedDim &D : CostedDims)
    OS << " " << D.Symbol << "=" << D.Size << (D.Bound ? "" : " (default)");
  OS << "; byte counts marked (symbolic) assume these sizes\n";
}

void LayoutReport::printJSON(llvm::raw_ostream &OS) const {
  llvm::json::OStream J(OS, /*IndentSize=*/2);
  auto Us = [](Cost Ps) {
    return Ps >= InfiniteCost ? llvm::json::Value(nullptr)
                              : llvm::json::Value(double(Ps) / 1e6);
  };
  J.object([&] {
    J.attribute("target", Target);
    J.attribute("mode", Mode);
    J.attributeObject("totals", [&] {
      J.attribute("relayouts", int64_t(Relayouts.size()));
      J.attribute("relayout_bytes", RelayoutBytes);
      J.attribute("copies", int64_t(Copies.size()));
      J.attribute("copy_bytes", CopyBytes);
      J.attribute("estimated_cost", Us(EstimatedCost));
      J.attribute("all_nchw_cost", Us(AllChannelsFirstCost));
      J.attribute("all_nhwc_cost", Us(AllChannelsLastCost));
      J.attribute("cost_unit", "us");
      J.attribute("variables", int64_t(NumVariables));
      J.attribute("approximated_terms", int64_t(NumApproximatedTerms));
      J.attribute("mixed_layout_convs", int64_t(NumMixedKernels));
      J.attribute("constants_laid_out", int64_t(NumConstantsRelaid));
      J.attribute("weights_permuted", int64_t(NumWeightsPermuted));
      if (Tuned) {
        J.attribute("convs", int64_t(NumConvs));
        J.attribute("measured_convs", int64_t(NumMeasuredConvs));
      }
    });
    J.attributeArray("inputs", [&] {
      for (const auto &In : Inputs)
        J.object([&] {
          J.attribute("name", In.first);
          J.attribute("type", In.second);
        });
    });
    J.attributeArray("dynamic_dims", [&] {
      for (const CostedDim &D : CostedDims)
        J.object([&] {
          J.attribute("symbol", D.Symbol);
          J.attribute("costed_as", D.Size);
          J.attribute("bound", D.Bound);
        });
    });
    J.attributeArray("values", [&] {
      for (const ValueEntry &V : Values)
        J.object([&] {
          J.attribute("name", V.Name);
          J.attribute("shape", V.Shape);
          J.attribute("layout", V.Layout);
          J.attribute("reason", V.Reason);
        });
    });
    J.attributeArray("relayouts", [&] {
      for (const RelayoutEntry &R : Relayouts)
        J.object([&] {
          J.attribute("value", R.Value);
          J.attribute("from", R.From);
          J.attribute("to", R.To);
          J.attribute("bytes", R.Bytes);
          if (R.Symbolic)
            J.attribute("symbolic", true);
          J.attribute("reason", R.Reason);
        });
    });
    J.attributeArray("copies", [&] {
      for (const CopyEntry &C : Copies)
        J.object([&] {
          J.attribute("node", C.Node);
          J.attribute("op", C.Op);
          J.attribute("value", C.Value);
          J.attribute("bytes", C.Bytes);
          if (C.Symbolic)
            J.attribute("symbolic", true);
        });
    });
  });
  OS << "\n";
}

void LayoutReport::printSummary(llvm::raw_ostream &OS) const {
  unsigned ChannelsLastValues = 0;
  for (const ValueEntry &V : Values)
    if (V.Layout == "nhwc" || V.Layout == "ndhwc" || V.Layout == "nwc")
      ++ChannelsLastValues;
  OS << "layouts: " << ChannelsLastValues << " of " << Values.size()
     << " activations channels-last (target " << Target << ", mode " << Mode
     << ")\n";
  OS << "relayouts: " << Relayouts.size() << " (" << RelayoutBytes
     << " bytes); copying views: " << Copies.size() << " (" << CopyBytes
     << " bytes)\n";
  if (!CostedDims.empty())
    printCostedDims(OS);
  OS << "estimated time: ";
  printUs(OS, EstimatedCost);
  OS << " us (all-nchw ";
  printUs(OS, AllChannelsFirstCost);
  OS << " us, all-nhwc ";
  printUs(OS, AllChannelsLastCost);
  OS << " us)\n";
  if (Tuned)
    OS << "tuning: " << NumMeasuredConvs << " of " << NumConvs
       << " convs costed by measurements\n";
}
