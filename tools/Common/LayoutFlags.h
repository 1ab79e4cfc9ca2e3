//===- LayoutFlags.h - Layout-assignment flags of the tools -----*- C++ -*-===//
//
// The command-line flags strider-opt and strider-compile share: --target,
// --layout, --io-layout, --dim, --shape and --tuning-file, in the category
// LayoutFlagsCat. Include
// it in one source file of a tool: it defines the (static) options there.
//
//===----------------------------------------------------------------------===//

#ifndef STRIDER_TOOLS_COMMON_LAYOUTFLAGS_H
#define STRIDER_TOOLS_COMMON_LAYOUTFLAGS_H

#include "strider/Layout/LayoutAssignment.h"
#include "strider/Transforms/Specialize.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"

#include <set>
#include <vector>

namespace strider {
namespace toolflags {

static llvm::cl::OptionCategory LayoutFlagsCat("layout-assignment options");

static llvm::cl::opt<std::string>
    TargetName("target",
               llvm::cl::desc("Target whose costs drive layout assignment: "
                              "cpu-avx512 (default), cpu-avx2, cpu-neon, "
                              "cuda-sm80, cuda-sm90"),
               llvm::cl::value_desc("name"), llvm::cl::init("cpu-avx512"),
               llvm::cl::cat(LayoutFlagsCat));
static llvm::cl::opt<std::string> LayoutModeFlag(
    "layout",
    llvm::cl::desc("auto (cost model decides, default), nchw or nhwc "
                   "(force every activation that can)"),
    llvm::cl::value_desc("mode"), llvm::cl::init("auto"),
    llvm::cl::cat(LayoutFlagsCat));
static llvm::cl::opt<std::string> IOLayoutFlag(
    "io-layout",
    llvm::cl::desc("Layout of rank-3..5 graph inputs and outputs: model "
                   "(as declared, default), nchw or nhwc"),
    llvm::cl::value_desc("layout"), llvm::cl::init("model"),
    llvm::cl::cat(LayoutFlagsCat));
static llvm::cl::list<std::string> DimFlags(
    "dim",
    llvm::cl::desc("Size of a symbolic dim of the inputs, e.g. N=1 (an "
                   "anonymous dim of input x at axis 2 is 'x:2'): costs "
                   "layouts with it (unbound dims count as 1), and binds it "
                   "when the graph is specialized (--shape, "
                   "--specialize-shapes)"),
    llvm::cl::value_desc("NAME=SIZE"), llvm::cl::cat(LayoutFlagsCat));
static llvm::cl::list<std::string> ShapeFlags(
    "shape",
    llvm::cl::desc("Specialize the graph to a static input shape, e.g. "
                   "x=1x3x640x640 (repeatable): every dynamic dim is bound, "
                   "shapes are inferred and folded, and layouts are costed "
                   "on real sizes. strider-compile also takes ranges, e.g. "
                   "x=1x3x48x100..1000: the dim stays dynamic, the artifact "
                   "serves every size in the range (and refuses others), "
                   "and layouts are costed at the range's upper end"),
    llvm::cl::value_desc("INPUT=AxBxC"), llvm::cl::cat(LayoutFlagsCat));
static llvm::cl::list<std::string> BindFlags(
    "bind",
    llvm::cl::desc("Bind an integer or bool input to constant values, e.g. "
                   "sr=16000 (row-major, comma-separated; repeatable) and "
                   "specialize: an input whose value decides an If must be "
                   "bound to compile the model ahead of time (the taken "
                   "branch is inlined; the input is no longer one)"),
    llvm::cl::value_desc("INPUT=V,..."), llvm::cl::cat(LayoutFlagsCat));

static llvm::cl::opt<std::string> TuningFileFlag(
    "tuning-file",
    llvm::cl::desc("Kernel times measured on the target machine (written by "
                   "strider-compile --tune): convs and relayouts it holds "
                   "are costed by their measurements, the rest by estimates "
                   "calibrated from it"),
    llvm::cl::value_desc("file"), llvm::cl::cat(LayoutFlagsCat));

/// The options the flags say, or an error naming the bad value. With
/// \p CreateTuning, a --tuning-file that does not exist yet starts as an
/// empty table (to be filled by tuning).
inline llvm::Expected<layout::LayoutOptions>
parseLayoutFlags(bool CreateTuning = false) {
  llvm::Expected<layout::LayoutOptions> Opts = layout::parseLayoutOptions(
      TargetName, LayoutModeFlag, IOLayoutFlag, DimFlags);
  if (!Opts || TuningFileFlag.empty())
    return Opts;
  auto Table = std::make_shared<layout::TuningTable>();
  if (CreateTuning && !llvm::sys::fs::exists(TuningFileFlag)) {
    Table->Target = Opts->Target->Name.str();
  } else {
    llvm::Expected<layout::TuningTable> Read =
        layout::TuningTable::readFile(TuningFileFlag);
    if (!Read)
      return Read.takeError();
    *Table = std::move(*Read);
    if (Table->Target != Opts->Target->Name)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          TuningFileFlag + ": measured for target '" + Table->Target +
              "', not for --target=" + Opts->Target->Name);
  }
  Opts->Tuning = std::move(Table);
  return Opts;
}

/// A --shape with a range (LO..HI) for at least one dim: Min and Max per
/// axis, equal where the dim is one size.
struct ShapeRangeFlag {
  std::string Input;
  llvm::SmallVector<int64_t, 6> Min, Max;
};

/// The bindings of --shape, --bind and --dim, or an error naming a
/// malformed flag. A --shape with a range goes to \p Ranges (an error
/// when it is null: only strider-compile takes ranges).
inline llvm::Expected<ShapeBindings>
parseShapeFlags(std::vector<ShapeRangeFlag> *Ranges = nullptr) {
  auto Bad = [](const std::string &Flag, const char *Expected) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "bad " + Flag + " (expected " + Expected +
                                       ")");
  };
  ShapeBindings B;
  std::set<std::string> Seen;
  for (const std::string &S : ShapeFlags) {
    auto [Name, Dims] = llvm::StringRef(S).rsplit('=');
    if (Name.empty() || Name.size() == S.size())
      return Bad("--shape '" + S + "'", "INPUT=AxBxC");
    ShapeRangeFlag R;
    R.Input = Name.str();
    llvm::SmallVector<llvm::StringRef, 6> Parts;
    if (!Dims.empty())
      Dims.split(Parts, 'x');
    for (llvm::StringRef P : Parts) {
      auto [Lo, Hi] = P.split("..");
      int64_t Min, Max;
      if (Lo.getAsInteger(10, Min) || Min < 0)
        return Bad("--shape '" + S + "'", "INPUT=AxBxC, sizes >= 0");
      Max = Min;
      if (P.contains("..")) {
        if (!Ranges)
          return Bad("--shape '" + S + "'",
                     "INPUT=AxBxC; ranges LO..HI are for strider-compile");
        if (Hi.getAsInteger(10, Max) || Max < Min || Min < 1)
          return Bad("--shape '" + S + "'",
                     "a range LO..HI with 1 <= LO <= HI");
      }
      R.Min.push_back(Min);
      R.Max.push_back(Max);
    }
    if (!Seen.insert(R.Input).second)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--shape given twice for input '" + Name +
                                         "'");
    if (R.Min != R.Max)
      Ranges->push_back(std::move(R));
    else
      B.InputShapes.emplace(R.Input, R.Min);
  }
  for (const std::string &S : BindFlags) {
    auto [Name, List] = llvm::StringRef(S).split('=');
    if (Name.empty() || Name.size() == S.size() || List.empty())
      return Bad("--bind '" + S + "'", "INPUT=V,...");
    llvm::SmallVector<llvm::StringRef, 8> Parts;
    List.split(Parts, ',');
    std::vector<int64_t> Values;
    for (llvm::StringRef P : Parts) {
      int64_t V;
      if (P.trim().getAsInteger(10, V))
        return Bad("--bind '" + S + "'", "INPUT=V,... with integer values");
      Values.push_back(V);
    }
    if (!B.InputValues.emplace(Name.str(), std::move(Values)).second)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--bind given twice for input '" + Name +
                                         "'");
  }
  for (const std::string &D : DimFlags) {
    auto [Name, Size] = llvm::StringRef(D).rsplit('=');
    int64_t N;
    if (Name.empty() || Size.getAsInteger(10, N) || N < 1)
      return Bad("--dim '" + D + "'", "NAME=SIZE, SIZE >= 1");
    B.Dims[Name.str()] = N;
  }
  return B;
}

} // namespace toolflags
} // namespace strider

#endif // STRIDER_TOOLS_COMMON_LAYOUTFLAGS_H
