//===- FileIO.cpp - Reading inputs and writing outputs safely -------------===//
//
// See FileIO.h.
//
//===----------------------------------------------------------------------===//

#include "strider/Support/FileIO.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace strider;

static llvm::Error fileError(llvm::StringRef Path, const llvm::Twine &What) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 Path + ": " + What);
}

llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
strider::readInputFile(llvm::StringRef Path) {
  auto BufOrErr = llvm::MemoryBuffer::getFileOrSTDIN(Path, /*IsText=*/false,
                                                     /*RequiresNullTerminator=*/false);
  if (!BufOrErr)
    return fileError(Path == "-" ? "<stdin>" : Path,
                     "cannot read file: " + BufOrErr.getError().message());
  return std::move(*BufOrErr);
}

llvm::Error strider::writeOutputFile(
    llvm::StringRef Path,
    llvm::function_ref<llvm::Error(llvm::raw_ostream &)> Writer) {
  if (Path == "-") {
    if (llvm::Error E = Writer(llvm::outs()))
      return E;
    llvm::outs().flush();
    return llvm::Error::success();
  }
  llvm::SmallString<256> Model(Path);
  Model += ".tmp-%%%%%%";
  int FD;
  llvm::SmallString<256> TempPath;
  if (std::error_code EC =
          llvm::sys::fs::createUniqueFile(Model, FD, TempPath))
    return fileError(Path, "cannot create output: " + EC.message());
  llvm::Error Result = llvm::Error::success();
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    Result = Writer(OS);
    OS.close();
    if (!Result && OS.has_error()) {
      Result = fileError(Path, "cannot write output: " + OS.error().message());
      OS.clear_error();
    }
  }
  if (Result) {
    llvm::sys::fs::remove(TempPath);
    return Result;
  }
  if (std::error_code EC = llvm::sys::fs::rename(TempPath, Path)) {
    llvm::sys::fs::remove(TempPath);
    return fileError(Path, "cannot write output: " + EC.message());
  }
  return llvm::Error::success();
}
