//===- TensorFile.cpp - Reading serialized TensorProto files --------------===//
//
// Backend-test data files (`input_0.pb`) and other standalone tensors.
//
//===----------------------------------------------------------------------===//

#include "TensorProto.h"

#include "strider/Import/ONNX.h"
#include "strider/IR/Diagnostics.h"
#include "strider/Support/FileIO.h"

#include "llvm/Support/Path.h"

#include <limits>

using namespace strider;

llvm::Expected<TensorDataRef> strider::readONNXTensorFile(llvm::StringRef Path,
                                                          std::string *Name) {
  auto BufOrErr = readInputFile(Path);
  if (!BufOrErr)
    return BufOrErr.takeError();
  llvm::StringRef Bytes = (*BufOrErr)->getBuffer();
  onnx::TensorProto T;
  if (Bytes.size() > size_t(std::numeric_limits<int>::max()) ||
      !T.ParseFromArray(Bytes.data(), int(Bytes.size())))
    return makeError(Path + ": not a valid ONNX TensorProto file");
  onnximport::ExternalDataPolicy Policy;
  Policy.ModelDir = llvm::sys::path::parent_path(Path).str();
  if (Policy.ModelDir.empty())
    Policy.ModelDir = ".";
  auto DataOrErr = onnximport::decodeTensor(T, Policy);
  if (!DataOrErr)
    return makeError(Path + ": " + llvm::toString(DataOrErr.takeError()));
  if (Name)
    *Name = T.name();
  return *DataOrErr;
}
