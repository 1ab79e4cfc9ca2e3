//===- strider-run.cpp - Execute a model and check its outputs ------------===//
//
// Runs an ONNX model, a textual IR graph or a strider-compile output
// directory on given or random inputs with the reference interpreter,
// writes the outputs as .npy files and compares them with expected ones.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/AsmParser.h"
#include "strider/IR/Graph.h"
#include "strider/IR/Verifier.h"
#include "strider/Import/ONNX.h"
#include "strider/Runtime/Npy.h"
#include "strider/Runtime/Reference.h"
#include "strider/Support/FileIO.h"
#include "strider/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <random>

using namespace strider;
using namespace strider::runtime;
namespace cl = llvm::cl;

static cl::OptionCategory RunCat("strider-run options");

static cl::opt<std::string>
    ModelPath(cl::Positional, cl::Required,
              cl::desc("<model.onnx | model.lir | strider-compile output dir>"),
              cl::cat(RunCat));
static cl::opt<std::string>
    Backend("backend",
            cl::desc("Executor: reference (the default and, for "
                     "now, the only one)"),
            cl::init("reference"), cl::cat(RunCat));
static cl::list<std::string>
    InputFlags("input",
               cl::desc("An input: NAME=FILE.npy or NAME=FILE.pb (an ONNX "
                        "TensorProto); repeat for each input"),
               cl::value_desc("NAME=FILE"), cl::cat(RunCat));
static cl::opt<bool> RandomInputs(
    "random-inputs",
    cl::desc("Fill inputs not given with --input with seeded random values "
             "(floats in [-1, 1), integers in [0, 10))"),
    cl::init(false), cl::cat(RunCat));
static cl::opt<uint64_t> Seed("seed", cl::desc("Seed of --random-inputs"),
                              cl::init(0), cl::cat(RunCat));
static cl::list<std::string>
    DimFlags("dim",
             cl::desc("Size of a symbolic dim for random inputs, e.g. N=1 "
                      "(default 1; given inputs bind their own dims)"),
             cl::value_desc("NAME=SIZE"), cl::cat(RunCat));
static cl::opt<std::string>
    OutputDir("output-dir",
              cl::desc("Write each output to DIR/<output name>.npy"),
              cl::value_desc("dir"), cl::cat(RunCat));
static cl::opt<std::string> CompareDir(
    "compare",
    cl::desc("Compare with expected outputs in DIR (<output name>.npy, or "
             "ONNX output_K.pb in output order); exit 1 on a mismatch"),
    cl::value_desc("dir"), cl::cat(RunCat));
static cl::opt<double> RTol("rtol", cl::desc("Relative tolerance (1e-4)"),
                            cl::init(1e-4), cl::cat(RunCat));
static cl::opt<double> ATol("atol", cl::desc("Absolute tolerance (1e-5)"),
                            cl::init(1e-5), cl::cat(RunCat));
static cl::opt<bool> Json("json",
                          cl::desc("Print one JSON object instead of text"),
                          cl::init(false), cl::cat(RunCat));

static llvm::Error toolError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

/// Load the graph: .lir is parsed and verified, anything else imported as
/// ONNX; a strider-compile directory stands for its model.lir (the graph
/// with its chosen layouts), or else its model.onnx.
static llvm::Expected<std::unique_ptr<Graph>> loadGraph(llvm::StringRef Path) {
  std::string File = Path.str();
  if (llvm::sys::fs::is_directory(Path)) {
    llvm::SmallString<256> Lir(Path), Onnx(Path);
    llvm::sys::path::append(Lir, "model.lir");
    llvm::sys::path::append(Onnx, "model.onnx");
    File = (llvm::sys::fs::exists(Lir) ? Lir : Onnx).str().str();
  }
  if (!llvm::StringRef(File).endswith(".lir"))
    return importONNXFile(File);
  auto Buf = readInputFile(File);
  if (!Buf)
    return Buf.takeError();
  auto G = parseGraph((*Buf)->getBuffer(), File);
  if (!G)
    return G.takeError();
  if (llvm::Error E = verifyGraph(**G))
    return E;
  return G;
}

/// Read one tensor file (.npy, else an ONNX TensorProto).
static llvm::Expected<Tensor> readTensorFile(llvm::StringRef Path) {
  if (Path.endswith(".npy"))
    return readNpyFile(Path);
  auto D = readONNXTensorFile(Path);
  if (!D)
    return D.takeError();
  return Tensor::fromData(**D);
}

/// Give the graph's inputs the static shapes of the given tensors (binding
/// symbolic dims) and make random tensors for the others when asked.
static llvm::Error bindInputs(Graph &G, TensorMap &Given) {
  llvm::StringMap<int64_t> Dims;
  for (const std::string &D : DimFlags) {
    auto [Name, Size] = llvm::StringRef(D).split('=');
    int64_t N;
    if (Name.empty() || Size.getAsInteger(10, N) || N < 1)
      return toolError("bad --dim '" + D + "' (expected NAME=SIZE, SIZE >= 1)");
    Dims[Name] = N;
  }
  for (const auto &[Name, T] : Given) {
    Value *In = G.lookupValue(Name);
    if (!In || !In->isGraphInput())
      return toolError("the model has no input '" + Name + "'");
    const TensorType &Want = In->getType();
    if (!Want.hasRank())
      continue;
    if (Want.getRank() != T.getRank())
      return toolError("input '" + Name + "' has rank " +
                       llvm::Twine(T.getRank()) + ", the model expects " +
                       Want.str());
    for (unsigned I = 0; I < T.getRank(); ++I) {
      const Dim &D = Want.getDim(I);
      if (D.isStatic() && D.getSize() != T.getDim(I))
        return toolError("input '" + Name + "' has dim " + llvm::Twine(I) +
                         " of size " + llvm::Twine(T.getDim(I)) +
                         ", the model expects " + Want.str());
      if (D.isSymbol()) {
        auto [It, New] = Dims.try_emplace(D.getSymbol(), T.getDim(I));
        if (!New && It->second != T.getDim(I))
          return toolError("input '" + Name + "' binds dim '" + D.getSymbol() +
                           "' to " + llvm::Twine(T.getDim(I)) +
                           ", another input to " + llvm::Twine(It->second));
      }
    }
  }
  std::mt19937_64 Rng(Seed);
  for (Value *In : G.getInputs()) {
    const TensorType &T = In->getType();
    auto It = Given.find(In->getName());
    if (It == Given.end() && In->getDefaultData())
      continue;
    if (!T.hasRank() || T.getElementType() == ElementType::Unknown)
      return toolError("input '" + In->getName() + "' has type " + T.str() +
                       ": its shape and element type must be known");
    llvm::SmallVector<int64_t, 6> Shape;
    for (const Dim &D : T.getShape()) {
      if (D.isStatic())
        Shape.push_back(D.getSize());
      else if (D.isSymbol() && Dims.count(D.getSymbol()))
        Shape.push_back(Dims[D.getSymbol()]);
      else if (It != Given.end())
        Shape.push_back(It->second.getDim(Shape.size()));
      else
        Shape.push_back(1);
    }
    if (It != Given.end() && It->second.getElementType() != T.getElementType())
      return toolError("input '" + In->getName() + "' has element type " +
                       getElementTypeName(It->second.getElementType()) +
                       ", the model expects " + T.str());
    if (It == Given.end() && !RandomInputs)
      return toolError("missing input '" + In->getName() + "' (" + T.str() +
                       "): give --input " + In->getName() +
                       "=FILE or --random-inputs");
    ElementType Elt = T.getElementType();
    In->setType(TensorType::get(Elt, Shape, T.getLayout()));
    if (It != Given.end())
      continue;
    Tensor R(Elt, Shape);
    std::uniform_real_distribution<double> Real(-1.0, 1.0);
    std::uniform_int_distribution<int64_t> Int(0, 9);
    for (int64_t I = 0; I < R.getNumElements(); ++I) {
      if (isFloatingPoint(Elt))
        R.setDouble(I, Real(Rng));
      else
        R.setInt(I, Int(Rng) % (Elt == ElementType::Bool ? 2 : 10));
    }
    Given[In->getName()] = std::move(R);
  }
  // Every value static: infer, fold shape computations, infer again.
  PassManager PM;
  llvm::cantFail(
      parsePassPipeline("infer-shapes,constant-fold,infer-shapes", PM));
  return PM.run(G);
}

/// A file name for output \p Name.
static std::string fileNameFor(llvm::StringRef Name) {
  std::string S;
  for (char C : Name)
    S += (llvm::isAlnum(C) || C == '.' || C == '-' || C == '_') ? C : '_';
  return S;
}

struct Comparison {
  bool Found = false, ShapeOk = false, Ok = false;
  double MaxAbs = 0, MaxRel = 0;
  std::string Note;
};

static Comparison compare(const Tensor &Got, const Tensor &Want) {
  Comparison C;
  C.Found = true;
  C.ShapeOk = Got.getShape() == Want.getShape();
  if (!C.ShapeOk) {
    C.Note = "shape differs";
    return C;
  }
  C.Ok = true;
  forEachIndex(Got.getShape(), [&](llvm::ArrayRef<int64_t> Index) {
    double A = Got.getDouble(Got.getOffset(Index));
    double B = Want.getDouble(Want.getOffset(Index));
    if (std::isnan(A) || std::isnan(B)) {
      if (std::isnan(A) != std::isnan(B))
        C.Ok = false;
      return;
    }
    double Abs = A == B ? 0.0 : std::fabs(A - B);
    C.MaxAbs = std::max(C.MaxAbs, Abs);
    if (B != 0)
      C.MaxRel = std::max(C.MaxRel, Abs / std::fabs(B));
    if (!(Abs <= ATol + RTol * std::fabs(B)))
      C.Ok = false;
  });
  return C;
}

static int run() {
  auto Fail = [](llvm::Error E) {
    llvm::errs() << "strider-run: " << llvm::toString(std::move(E)) << "\n";
    return 1;
  };
  if (Backend != "reference")
    return Fail(
        toolError("unknown backend '" + Backend + "' (available: reference)"));
  auto GOrErr = loadGraph(ModelPath);
  if (!GOrErr) {
    llvm::errs() << llvm::toString(GOrErr.takeError()) << "\n";
    return 1;
  }
  Graph &G = **GOrErr;

  TensorMap Inputs;
  for (const std::string &F : InputFlags) {
    auto [Name, File] = llvm::StringRef(F).split('=');
    if (Name.empty() || File.empty())
      return Fail(toolError("bad --input '" + F + "' (expected NAME=FILE)"));
    if (Inputs.count(Name.str()))
      return Fail(toolError("input '" + Name + "' given twice"));
    auto T = readTensorFile(File);
    if (!T)
      return Fail(T.takeError());
    Inputs[Name.str()] = std::move(*T);
  }
  if (llvm::Error E = bindInputs(G, Inputs))
    return Fail(std::move(E));
  auto Outputs = runReference(G, Inputs);
  if (!Outputs) {
    llvm::errs() << llvm::toString(Outputs.takeError()) << "\n";
    return 1;
  }

  if (!OutputDir.empty()) {
    if (std::error_code EC = llvm::sys::fs::create_directories(OutputDir))
      return Fail(toolError(OutputDir + ": " + EC.message()));
    for (const auto &[Name, T] : *Outputs) {
      auto Bytes = writeNpy(T);
      if (!Bytes)
        return Fail(Bytes.takeError());
      llvm::SmallString<256> P(OutputDir);
      llvm::sys::path::append(P, fileNameFor(Name) + ".npy");
      if (llvm::Error E = writeOutputFile(P, [&](llvm::raw_ostream &OS) {
            OS << *Bytes;
            return llvm::Error::success();
          }))
        return Fail(std::move(E));
    }
  }

  // Expected outputs: <name>.npy, else output_K.pb in output order.
  std::vector<Comparison> Results(G.getOutputs().size());
  bool AllOk = true;
  if (!CompareDir.empty()) {
    for (unsigned K = 0; K < G.getOutputs().size(); ++K) {
      const std::string &Name = G.getOutputs()[K]->getName();
      llvm::SmallString<256> Npy(CompareDir), Pb(CompareDir);
      llvm::sys::path::append(Npy, fileNameFor(Name) + ".npy");
      llvm::sys::path::append(Pb, "output_" + std::to_string(K) + ".pb");
      llvm::StringRef File = llvm::sys::fs::exists(Npy) ? Npy.str() : Pb.str();
      if (!llvm::sys::fs::exists(File)) {
        Results[K].Note = "no expected output (" + Npy.str().str() + " or " +
                          Pb.str().str() + ")";
        AllOk = false;
        continue;
      }
      auto Want = readTensorFile(File);
      if (!Want)
        return Fail(Want.takeError());
      Results[K] = compare(Outputs->at(Name), *Want);
      AllOk &= Results[K].Ok;
    }
  }

  if (Json) {
    llvm::json::OStream J(llvm::outs(), 2);
    J.object([&] {
      J.attribute("model", ModelPath);
      J.attribute("backend", Backend);
      J.attributeArray("outputs", [&] {
        for (unsigned K = 0; K < G.getOutputs().size(); ++K) {
          const std::string &Name = G.getOutputs()[K]->getName();
          const Tensor &T = Outputs->at(Name);
          J.object([&] {
            J.attribute("name", Name);
            J.attribute("type", T.getType().withLayout(Layout()).str());
            if (!CompareDir.empty()) {
              J.attribute("match", Results[K].Ok);
              J.attribute("max_abs_error", Results[K].MaxAbs);
              J.attribute("max_rel_error", Results[K].MaxRel);
              if (!Results[K].Note.empty())
                J.attribute("note", Results[K].Note);
            }
          });
        }
      });
      if (!CompareDir.empty())
        J.attribute("match", AllOk);
    });
    llvm::outs() << "\n";
  } else {
    for (unsigned K = 0; K < G.getOutputs().size(); ++K) {
      const std::string &Name = G.getOutputs()[K]->getName();
      const Tensor &T = Outputs->at(Name);
      llvm::outs() << "output '" << Name << "' "
                   << T.getType().withLayout(Layout());
      if (!CompareDir.empty()) {
        const Comparison &C = Results[K];
        if (!C.Note.empty() && !C.ShapeOk)
          llvm::outs() << ": MISMATCH, " << C.Note;
        else
          llvm::outs() << llvm::format(": max abs error %.3g, max rel error "
                                       "%.3g",
                                       C.MaxAbs, C.MaxRel)
                       << (C.Ok ? " (match)" : " (MISMATCH)");
      }
      llvm::outs() << "\n";
    }
    if (!CompareDir.empty())
      llvm::outs() << (AllOk ? "all outputs match" : "outputs differ")
                   << llvm::format(" (rtol %g, atol %g)\n", RTol.getValue(),
                                   ATol.getValue());
  }
  return AllOk ? 0 : 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(RunCat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "Strider model runner: execute an ONNX model, textual IR or a "
      "strider-compile output directory with the reference interpreter "
      "(every layout executed as such), write and compare outputs\n");
  return run();
}
