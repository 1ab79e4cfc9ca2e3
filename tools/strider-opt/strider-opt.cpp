//===- strider-opt.cpp - Run passes on textual IR -------------------------===//
//
// Reads a .lir graph (with its .lir.weights file, if it has one), verifies
// it, runs the requested passes (verifying after each), and prints the
// result. The driver of Strider's lit tests.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/AsmParser.h"
#include "strider/IR/AsmPrinter.h"
#include "strider/IR/Graph.h"
#include "strider/IR/Verifier.h"
#include "strider/Support/FileIO.h"
#include "strider/Transforms/Passes.h"
#include "strider/Transforms/PipelineOptions.h"

#include "Common/LayoutFlags.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace strider;
namespace cl = llvm::cl;

static cl::OptionCategory StriderCat("strider-opt options");

static cl::opt<std::string> InputFilename(cl::Positional,
                                          cl::desc("<input .lir file>"),
                                          cl::init("-"), cl::cat(StriderCat));
static cl::opt<std::string> OutputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("filename"),
                                           cl::init("-"), cl::cat(StriderCat));
static cl::opt<std::string>
    PassPipeline("pass-pipeline",
                 cl::desc("Comma-separated passes to run, e.g. "
                          "'infer-shapes,dce' (instead of pass flags)"),
                 cl::value_desc("passes"), cl::cat(StriderCat));
static cl::opt<bool>
    VerifyEach("verify-each",
               cl::desc("Verify the graph after each pass (default on)"),
               cl::init(true), cl::cat(StriderCat));
static cl::opt<bool> ExternalWeights(
    "external-weights",
    cl::desc("Write constants of 1 KiB or more to <output>.weights and "
             "print them as dense_external<OFFSET> (needs -o <file>)"),
    cl::init(false), cl::cat(StriderCat));
static cl::opt<uint64_t> ExternalWeightsMinBytes(
    "external-weights-min-bytes",
    cl::desc("With --external-weights, the smallest constant (in bytes) "
             "written to the weights file (default 1024)"),
    cl::init(1024), cl::cat(StriderCat));
static cl::opt<bool> SplitInputFile(
    "split-input-file",
    cl::desc("Split the input on '// -----' lines and process each chunk "
             "independently (errors do not stop later chunks)"),
    cl::init(false), cl::cat(StriderCat));

static cl::opt<std::string> LayoutReportFile(
    "layout-report",
    cl::desc("Write layout-assignment's report to this file ('-': stdout, "
             "after each graph)"),
    cl::value_desc("filename"), cl::cat(toolflags::LayoutFlagsCat));
static cl::opt<std::string>
    LayoutReportFormat("layout-report-format",
                       cl::desc("text (default) or json"),
                       cl::value_desc("format"), cl::init("text"),
                       cl::cat(toolflags::LayoutFlagsCat));

static cl::opt<std::string> PrecisionFlag(
    "precision",
    cl::desc("assign-precision's half type: fp16, bf16, or fp32 (the "
             "default: the pass changes nothing)"),
    cl::value_desc("type"), cl::init("fp32"), cl::cat(StriderCat));
static cl::opt<bool> PrecisionReportFlag(
    "precision-report",
    cl::desc("Print assign-precision's summary and casts after each graph"),
    cl::cat(StriderCat));

static PipelineOptions Options;
static std::vector<layout::LayoutReport> Reports;
static std::vector<PrecisionReport> PrecisionReports;

static void printReport(const layout::LayoutReport &R, llvm::raw_ostream &OS) {
  if (LayoutReportFormat == "json")
    R.printJSON(OS);
  else
    R.printText(OS);
}

/// Check and convert the layout flags; false after reporting an error.
static bool checkLayoutFlags() {
  auto Fail = [](llvm::Error E) {
    llvm::errs() << "strider-opt: " << llvm::toString(std::move(E)) << "\n";
    return false;
  };
  llvm::Expected<layout::LayoutOptions> Layout = toolflags::parseLayoutFlags();
  if (!Layout)
    return Fail(Layout.takeError());
  Options.Layout = std::move(*Layout);
  llvm::Expected<ShapeBindings> Shapes = toolflags::parseShapeFlags();
  if (!Shapes)
    return Fail(Shapes.takeError());
  Options.Shapes = std::move(*Shapes);
  if (LayoutReportFormat != "text" && LayoutReportFormat != "json") {
    llvm::errs() << "strider-opt: unknown report format '" << LayoutReportFormat
                 << "' (expected text or json)\n";
    return false;
  }
  Options.LayoutReports = &Reports;
  llvm::Optional<ElementType> Half = parseHalfPrecision(PrecisionFlag);
  if (!Half) {
    llvm::errs() << "strider-opt: unknown precision '" << PrecisionFlag
                 << "' (expected fp32, fp16 or bf16)\n";
    return false;
  }
  Options.Precision.Half = *Half;
  // Costs of a GPU target; the default cuda one for cpu-* targets.
  Options.Precision.Target =
      Options.Layout.Target->Name.startswith("cuda-") ? Options.Layout.Target
                                                      : nullptr;
  Options.PrecisionReports = &PrecisionReports;
  return true;
}

// One flag per registered pass; occurrences keep command-line order.
static cl::list<const PassInfo *, bool, cl::parser<const PassInfo *>>
    PassList(cl::desc("Passes, run in the order given:"), cl::cat(StriderCat));

/// Parse, verify, transform and print one buffer, its dense_external data
/// in \p Weights (may be null), its large constants as \p Print says.
/// Returns false on error (already reported on stderr).
static bool processBuffer(llvm::StringRef Text, llvm::StringRef BufferName,
                          const ExternalData *Weights,
                          const PrintOptions &Print, llvm::raw_ostream &OS) {
  auto GraphOrErr = parseGraph(Text, BufferName, Weights);
  if (!GraphOrErr) {
    llvm::errs() << llvm::toString(GraphOrErr.takeError()) << "\n";
    return false;
  }
  Graph &G = **GraphOrErr;
  if (llvm::Error E = verifyGraph(G)) {
    llvm::errs() << llvm::toString(std::move(E)) << "\n";
    return false;
  }
  PassManager PM;
  PM.setVerifyEach(VerifyEach);
  // The pipeline was validated in main().
  if (!PassPipeline.empty())
    llvm::cantFail(parsePassPipeline(PassPipeline, PM));
  for (const PassInfo *P : PassList)
    PM.addPass(P->Create());
  PM.configure(Options);
  size_t FirstReport = Reports.size();
  size_t FirstPrecisionReport = PrecisionReports.size();
  if (llvm::Error E = PM.run(G)) {
    llvm::errs() << llvm::toString(std::move(E)) << "\n";
    return false;
  }
  printGraph(G, OS, Print);
  if (LayoutReportFile == "-")
    for (size_t I = FirstReport; I < Reports.size(); ++I)
      printReport(Reports[I], OS);
  if (PrecisionReportFlag)
    for (size_t I = FirstPrecisionReport; I < PrecisionReports.size(); ++I)
      PrecisionReports[I].print(OS);
  return true;
}

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  for (const PassInfo &P : getRegisteredPasses())
    PassList.getParser().addLiteralOption(P.Argument, &P, P.Description);
  cl::HideUnrelatedOptions({&StriderCat, &toolflags::LayoutFlagsCat});
  cl::ParseCommandLineOptions(
      argc, argv,
      "Strider IR optimizer: parse textual IR, run passes, print IR\n");

  if (!checkLayoutFlags())
    return 1;

  if (!PassPipeline.empty() && !PassList.empty()) {
    llvm::errs() << "strider-opt: give either --pass-pipeline or pass flags, "
                    "not both\n";
    return 1;
  }

  if (!PassPipeline.empty()) {
    PassManager Check;
    if (llvm::Error E = parsePassPipeline(PassPipeline, Check)) {
      llvm::errs() << "strider-opt: " << llvm::toString(std::move(E)) << "\n";
      return 1;
    }
  }

  if (ExternalWeights && OutputFilename == "-") {
    llvm::errs() << "strider-opt: --external-weights needs -o <file>\n";
    return 1;
  }
  if (ExternalWeights && SplitInputFile) {
    llvm::errs() << "strider-opt: --external-weights cannot be used with "
                    "--split-input-file\n";
    return 1;
  }

  auto BufOrErr = readInputFile(InputFilename);
  if (!BufOrErr) {
    llvm::errs() << "strider-opt: " << llvm::toString(BufOrErr.takeError())
                 << "\n";
    return 1;
  }
  llvm::StringRef Text = (*BufOrErr)->getBuffer();
  std::string BufferName =
      InputFilename == "-" ? std::string("<stdin>") : InputFilename.getValue();
  // The input's weights file, mapped (not read) when there is one; without
  // it, dense_external data is a parse error.
  llvm::Optional<ExternalData> Weights;
  std::string WeightsPath = BufferName + ".weights";
  if (InputFilename != "-" && llvm::sys::fs::exists(WeightsPath)) {
    llvm::Expected<ExternalData> W = readExternalData(WeightsPath);
    if (!W) {
      llvm::errs() << "strider-opt: " << llvm::toString(W.takeError()) << "\n";
      return 1;
    }
    Weights = std::move(*W);
  }
  const ExternalData *InputWeights = Weights ? &*Weights : nullptr;
  ExternalDataBuffer OutputWeights;
  PrintOptions Print;
  if (ExternalWeights)
    Print.External = &OutputWeights;
  Print.MinExternalBytes = ExternalWeightsMinBytes;

  bool Ok = true;
  llvm::Error WriteErr = writeOutputFile(
      OutputFilename, [&](llvm::raw_ostream &OS) -> llvm::Error {
        if (!SplitInputFile) {
          Ok = processBuffer(Text, BufferName, InputWeights, Print, OS);
          if (!Ok || !ExternalWeights)
            return llvm::Error::success();
          // Renamed into place before the output that refers to it.
          return writeOutputFile(
              OutputFilename + ".weights",
              [&](llvm::raw_ostream &WOS) -> llvm::Error {
                const std::vector<uint8_t> &B = OutputWeights.getBytes();
                WOS.write(reinterpret_cast<const char *>(B.data()), B.size());
                return llvm::Error::success();
              });
        }
        // Pad each chunk with the newlines before it so that error line
        // numbers refer to the whole file.
        size_t Start = 0, Line = 0;
        bool First = true;
        while (Start <= Text.size()) {
          size_t Sep = Text.find("\n// -----", Start);
          size_t End = Sep == llvm::StringRef::npos ? Text.size() : Sep + 1;
          std::string Chunk(Line, '\n');
          Chunk += Text.slice(Start, End).str();
          if (!First)
            OS << "// -----\n";
          First = false;
          Ok &= processBuffer(Chunk, BufferName, InputWeights, Print, OS);
          if (Sep == llvm::StringRef::npos)
            break;
          Line += Text.slice(Start, End).count('\n');
          // Skip the separator line itself.
          size_t NextLine = Text.find('\n', End);
          if (NextLine == llvm::StringRef::npos)
            break;
          Line += 1;
          Start = NextLine + 1;
        }
        return llvm::Error::success();
      });
  if (WriteErr) {
    llvm::errs() << "strider-opt: " << llvm::toString(std::move(WriteErr))
                 << "\n";
    return 1;
  }
  if (!LayoutReportFile.empty() && LayoutReportFile != "-") {
    if (llvm::Error E = writeOutputFile(
            LayoutReportFile, [&](llvm::raw_ostream &OS) -> llvm::Error {
              for (const layout::LayoutReport &R : Reports)
                printReport(R, OS);
              return llvm::Error::success();
            })) {
      llvm::errs() << "strider-opt: " << llvm::toString(std::move(E)) << "\n";
      return 1;
    }
  }
  return Ok ? 0 : 1;
}
