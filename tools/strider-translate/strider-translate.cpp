//===- strider-translate.cpp - ONNX <-> textual IR ------------------------===//
//
// `--import-onnx M.onnx [-o out.lir]` and `--export-onnx in.lir -o M.onnx`.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/AsmParser.h"
#include "strider/IR/AsmPrinter.h"
#include "strider/IR/Graph.h"
#include "strider/IR/Verifier.h"
#include "strider/Import/ONNX.h"
#include "strider/Support/FileIO.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace strider;
namespace cl = llvm::cl;

static cl::OptionCategory TranslateCat("strider-translate options");

enum class Mode { None, ImportONNX, ExportONNX };
static cl::opt<Mode> TranslationMode(
    cl::desc("Translation:"),
    cl::values(clEnumValN(Mode::ImportONNX, "import-onnx",
                          "Read an ONNX model, print textual IR"),
               clEnumValN(Mode::ExportONNX, "export-onnx",
                          "Read textual IR, write an ONNX model")),
    cl::init(Mode::None), cl::cat(TranslateCat));
static cl::opt<std::string> InputFilename(cl::Positional,
                                          cl::desc("<input file>"),
                                          cl::init("-"), cl::cat(TranslateCat));
static cl::opt<std::string> OutputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("filename"),
                                           cl::init("-"),
                                           cl::cat(TranslateCat));
static cl::opt<bool> InferShapes(
    "infer-shapes",
    cl::desc("Run shape inference after import (default on; "
             "--infer-shapes=false keeps the model's declared types)"),
    cl::init(true), cl::cat(TranslateCat));
static cl::opt<bool> Strict(
    "strict",
    cl::desc("Refuse what ONNX Runtime tolerates: negative dim_value, "
             "declared shapes that contradict inference (default: a warning "
             "on stderr, inference wins)"),
    cl::init(false), cl::cat(TranslateCat));

static int fail(llvm::Error E) {
  llvm::errs() << llvm::toString(std::move(E)) << "\n";
  return 1;
}

static int importONNX() {
  if (InputFilename == "-") {
    llvm::errs() << "strider-translate: --import-onnx needs a model file "
                    "(external data is resolved relative to it)\n";
    return 1;
  }
  ImportOptions Opts;
  Opts.InferShapes = InferShapes;
  Opts.Strict = Strict;
  std::vector<std::string> Warnings;
  Opts.Warnings = &Warnings;
  auto GraphOrErr = importONNXFile(InputFilename, Opts);
  for (const std::string &W : Warnings)
    llvm::errs() << "strider-translate: warning: " << W << "\n";
  if (!GraphOrErr)
    return fail(GraphOrErr.takeError());
  if (llvm::Error E = writeOutputFile(
          OutputFilename, [&](llvm::raw_ostream &OS) -> llvm::Error {
            printGraph(**GraphOrErr, OS);
            return llvm::Error::success();
          }))
    return fail(std::move(E));
  return 0;
}

static int exportONNX() {
  if (OutputFilename == "-") {
    llvm::errs() << "strider-translate: --export-onnx needs -o <file>\n";
    return 1;
  }
  // A .lir file's dense_external constants come from its .lir.weights.
  auto GraphOrErr = readGraphFile(InputFilename);
  if (!GraphOrErr)
    return fail(GraphOrErr.takeError());
  if (llvm::Error E = verifyGraph(**GraphOrErr))
    return fail(std::move(E));
  if (llvm::Error E = exportONNXFile(**GraphOrErr, OutputFilename))
    return fail(std::move(E));
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(TranslateCat);
  cl::ParseCommandLineOptions(argc, argv,
                              "Strider translator between ONNX models and "
                              "textual IR\n");
  switch (TranslationMode) {
  case Mode::ImportONNX:
    return importONNX();
  case Mode::ExportONNX:
    return exportONNX();
  case Mode::None:
    break;
  }
  llvm::errs() << "strider-translate: choose --import-onnx or --export-onnx "
                  "(see --help)\n";
  return 1;
}
