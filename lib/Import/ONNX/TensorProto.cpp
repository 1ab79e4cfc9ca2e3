//===- TensorProto.cpp - TensorProto <-> TensorData -----------------------===//
//
// Decoding of every TensorProto storage form (raw_data, the typed repeated
// fields, external data files) into dense little-endian TensorData, and the
// inverse encoding as raw_data in logical order.
//
//===----------------------------------------------------------------------===//

#include "TensorProto.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <limits>

using namespace strider;
using namespace strider::onnximport;

static llvm::Error tensorError(const llvm::Twine &Msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), Msg);
}

/// `tensor 'w'` or `tensor` for an unnamed one.
static std::string tensorLabel(const onnx::TensorProto &T) {
  if (T.name().empty())
    return "tensor";
  return "tensor '" + T.name() + "'";
}

std::string onnximport::describeOnnxDataType(int32_t DataType) {
  switch (DataType) {
  case onnx::TensorProto::UNDEFINED:
    return "undefined";
  case onnx::TensorProto::FLOAT:
    return "float";
  case onnx::TensorProto::UINT8:
    return "uint8";
  case onnx::TensorProto::INT8:
    return "int8";
  case onnx::TensorProto::UINT16:
    return "uint16";
  case onnx::TensorProto::INT16:
    return "int16";
  case onnx::TensorProto::INT32:
    return "int32";
  case onnx::TensorProto::INT64:
    return "int64";
  case onnx::TensorProto::STRING:
    return "string";
  case onnx::TensorProto::BOOL:
    return "bool";
  case onnx::TensorProto::FLOAT16:
    return "float16";
  case onnx::TensorProto::DOUBLE:
    return "double";
  case onnx::TensorProto::UINT32:
    return "uint32";
  case onnx::TensorProto::UINT64:
    return "uint64";
  case onnx::TensorProto::COMPLEX64:
    return "complex64";
  case onnx::TensorProto::COMPLEX128:
    return "complex128";
  case onnx::TensorProto::BFLOAT16:
    return "bfloat16";
  // Types newer than libonnx 1.12's enum.
  case 17:
    return "float8e4m3fn";
  case 18:
    return "float8e4m3fnuz";
  case 19:
    return "float8e5m2";
  case 20:
    return "float8e5m2fnuz";
  case 21:
    return "uint4";
  case 22:
    return "int4";
  case 23:
    return "float4e2m1";
  case 24:
    return "float8e8m0";
  case 25:
    return "uint2";
  case 26:
    return "int2";
  default:
    break;
  }
  return ("data type " + llvm::Twine(DataType)).str();
}

namespace {
/// Little-endian byte sink for the typed repeated fields.
class ByteWriter {
public:
  explicit ByteWriter(std::vector<uint8_t> &Out) : Out(Out) {}
  template <typename T> void put(T V) {
    uint8_t Buf[sizeof(T)];
    std::memcpy(Buf, &V, sizeof(T));
    Out.insert(Out.end(), Buf, Buf + sizeof(T));
  }

private:
  std::vector<uint8_t> &Out;
};
} // namespace

/// Decode the typed field that holds elements of \p Elt per the ONNX rules.
/// Returns the number of elements found in that field via \p Count.
static llvm::Error decodeTypedFields(const onnx::TensorProto &T,
                                     ElementType Elt,
                                     std::vector<uint8_t> &Bytes,
                                     int64_t &Count) {
  ByteWriter W(Bytes);
  switch (Elt) {
  case ElementType::F32:
    Count = T.float_data_size();
    Bytes.reserve(size_t(Count) * 4);
    for (float V : T.float_data())
      W.put<float>(V);
    return llvm::Error::success();
  case ElementType::F64:
    Count = T.double_data_size();
    Bytes.reserve(size_t(Count) * 8);
    for (double V : T.double_data())
      W.put<double>(V);
    return llvm::Error::success();
  case ElementType::I64:
    Count = T.int64_data_size();
    Bytes.reserve(size_t(Count) * 8);
    for (int64_t V : T.int64_data())
      W.put<int64_t>(V);
    return llvm::Error::success();
  case ElementType::U32:
    Count = T.uint64_data_size();
    for (uint64_t V : T.uint64_data())
      W.put<uint32_t>(uint32_t(V));
    return llvm::Error::success();
  case ElementType::U64:
    Count = T.uint64_data_size();
    for (uint64_t V : T.uint64_data())
      W.put<uint64_t>(V);
    return llvm::Error::success();
  case ElementType::I32:
    Count = T.int32_data_size();
    for (int32_t V : T.int32_data())
      W.put<int32_t>(V);
    return llvm::Error::success();
  // Narrower types are stored one element per int32_data entry; fp16 and
  // bf16 hold their bit patterns in the low 16 bits.
  case ElementType::I8:
    Count = T.int32_data_size();
    for (int32_t V : T.int32_data())
      W.put<int8_t>(int8_t(V));
    return llvm::Error::success();
  case ElementType::U8:
  case ElementType::Bool:
    Count = T.int32_data_size();
    for (int32_t V : T.int32_data())
      W.put<uint8_t>(Elt == ElementType::Bool ? uint8_t(V != 0) : uint8_t(V));
    return llvm::Error::success();
  case ElementType::I16:
    Count = T.int32_data_size();
    for (int32_t V : T.int32_data())
      W.put<int16_t>(int16_t(V));
    return llvm::Error::success();
  case ElementType::U16:
  case ElementType::F16:
  case ElementType::BF16:
    Count = T.int32_data_size();
    for (int32_t V : T.int32_data())
      W.put<uint16_t>(uint16_t(uint32_t(V) & 0xFFFF));
    return llvm::Error::success();
  case ElementType::Unknown:
    break;
  }
  return tensorError("tensor has an unknown element type");
}

/// Whether a path component list contains `..` or the path is absolute.
static bool isEscapingLocation(llvm::StringRef Location) {
  if (Location.empty())
    return true;
  if (llvm::sys::path::is_absolute(Location) ||
      llvm::sys::path::has_root_name(Location) || Location.startswith("/") ||
      Location.startswith("\\"))
    return true;
  for (auto It = llvm::sys::path::begin(Location),
            End = llvm::sys::path::end(Location);
       It != End; ++It)
    if (*It == "..")
      return true;
  return false;
}

static bool parseUnsigned(llvm::StringRef S, uint64_t &Out) {
  if (S.empty())
    return false;
  return !S.getAsInteger(10, Out);
}

/// Read the external data of \p T (\p Expected bytes) under the policy.
static llvm::Error readExternalData(const onnx::TensorProto &T,
                                    const ExternalDataPolicy &Policy,
                                    uint64_t ExpectedBytes,
                                    std::vector<uint8_t> &Bytes) {
  std::string Label = tensorLabel(T);
  std::string Location;
  bool HasLocation = false;
  uint64_t Offset = 0, Length = 0;
  bool HasLength = false;
  for (const onnx::StringStringEntryProto &E : T.external_data()) {
    if (E.key() == "location") {
      Location = E.value();
      HasLocation = true;
    } else if (E.key() == "offset") {
      if (!parseUnsigned(E.value(), Offset))
        return tensorError(Label + ": invalid external data offset '" +
                           E.value() + "'");
    } else if (E.key() == "length") {
      if (!parseUnsigned(E.value(), Length))
        return tensorError(Label + ": invalid external data length '" +
                           E.value() + "'");
      HasLength = true;
    }
    // `checksum` and unknown keys carry no semantics we need.
  }
  if (!HasLocation)
    return tensorError(Label + ": external data has no location");
  if (Policy.ModelDir.empty())
    return tensorError(Label + ": external data '" + Location +
                       "' cannot be read (no model directory)");
  if (isEscapingLocation(Location))
    return tensorError(Label + ": external data location '" + Location +
                       "' is outside the model directory");

  // Resolve symlinks on both sides and require containment.
  llvm::SmallString<256> RealDir;
  if (llvm::sys::fs::real_path(Policy.ModelDir, RealDir))
    return tensorError(Label + ": cannot resolve model directory '" +
                       Policy.ModelDir + "'");
  llvm::SmallString<256> Joined(Policy.ModelDir);
  llvm::sys::path::append(Joined, Location);
  llvm::SmallString<256> RealFile;
  if (std::error_code EC = llvm::sys::fs::real_path(Joined, RealFile))
    return tensorError(Label + ": cannot open external data file '" + Location +
                       "': " + EC.message());
  llvm::SmallString<256> DirPrefix(RealDir);
  if (!DirPrefix.endswith("/"))
    DirPrefix += "/";
  if (!llvm::StringRef(RealFile).startswith(DirPrefix))
    return tensorError(Label + ": external data location '" + Location +
                       "' is outside the model directory");
  if (!llvm::sys::fs::is_regular_file(RealFile))
    return tensorError(Label + ": external data '" + Location +
                       "' is not a regular file");

  uint64_t FileSize = 0;
  if (std::error_code EC = llvm::sys::fs::file_size(RealFile, FileSize))
    return tensorError(Label + ": cannot read external data file '" + Location +
                       "': " + EC.message());
  if (Offset > FileSize)
    return tensorError(Label + ": external data offset " + llvm::Twine(Offset) +
                       " is beyond the end of '" + Location + "' (" +
                       llvm::Twine(FileSize) + " bytes)");
  if (!HasLength)
    Length = FileSize - Offset;
  if (Length > FileSize - Offset)
    return tensorError(Label + ": external data range [" + llvm::Twine(Offset) +
                       ", " + llvm::Twine(Offset + Length) +
                       ") is beyond the end of '" + Location + "' (" +
                       llvm::Twine(FileSize) + " bytes)");
  // Without an explicit length, the tensor is read from the offset on.
  if (!HasLength && Length > ExpectedBytes)
    Length = ExpectedBytes;
  if (Length != ExpectedBytes)
    return tensorError(Label + ": external data has " + llvm::Twine(Length) +
                       " bytes, its shape needs " + llvm::Twine(ExpectedBytes));
  if (Length == 0)
    return llvm::Error::success();

  auto BufOrErr = llvm::MemoryBuffer::getFileSlice(RealFile, Length, Offset,
                                                   /*IsVolatile=*/false);
  if (!BufOrErr)
    return tensorError(Label + ": cannot read external data file '" + Location +
                       "': " + BufOrErr.getError().message());
  const llvm::MemoryBuffer &Buf = **BufOrErr;
  if (Buf.getBufferSize() != Length)
    return tensorError(Label + ": short read from external data file '" +
                       Location + "'");
  Bytes.assign(Buf.getBufferStart(), Buf.getBufferEnd());
  return llvm::Error::success();
}

llvm::Expected<TensorDataRef>
onnximport::decodeTensor(const onnx::TensorProto &T,
                         const ExternalDataPolicy &Policy) {
  std::string Label = tensorLabel(T);
  llvm::Optional<ElementType> Elt;
  if (T.data_type() != onnx::TensorProto::UNDEFINED)
    Elt = fromOnnxDataType(T.data_type());
  if (!Elt || *Elt == ElementType::Unknown)
    return tensorError(Label + " has unsupported element type " +
                       describeOnnxDataType(T.data_type()));
  if (T.has_segment())
    return tensorError(Label + " is segmented (unsupported)");

  // Shape and element count, with overflow checks.
  llvm::SmallVector<int64_t, 6> Shape;
  uint64_t NumElements = 1;
  const uint64_t Limit = uint64_t(1) << 62;
  for (int64_t D : T.dims()) {
    if (D < 0)
      return tensorError(Label + " has negative dimension " + llvm::Twine(D));
    if (D != 0 && NumElements > Limit / uint64_t(D))
      return tensorError(Label + " is too large");
    NumElements *= uint64_t(D);
    Shape.push_back(D);
  }
  uint64_t EltSize = getElementByteSize(*Elt);
  if (NumElements > Limit / EltSize)
    return tensorError(Label + " is too large");
  uint64_t ExpectedBytes = NumElements * EltSize;

  std::vector<uint8_t> Bytes;
  bool External =
      T.has_data_location() && T.data_location() == onnx::TensorProto::EXTERNAL;
  if (External) {
    if (llvm::Error E = readExternalData(T, Policy, ExpectedBytes, Bytes))
      return E;
  } else if (T.has_raw_data()) {
    const std::string &Raw = T.raw_data();
    if (Raw.size() != ExpectedBytes)
      return tensorError(Label + " has " + llvm::Twine(uint64_t(Raw.size())) +
                         " bytes of raw data, its shape needs " +
                         llvm::Twine(ExpectedBytes));
    Bytes.assign(Raw.begin(), Raw.end());
    if (*Elt == ElementType::Bool)
      for (uint8_t &B : Bytes)
        B = B != 0;
  } else {
    int64_t Count = 0;
    if (llvm::Error E = decodeTypedFields(T, *Elt, Bytes, Count))
      return E;
    if (uint64_t(Count) != NumElements)
      return tensorError(Label + " has " + llvm::Twine(Count) +
                         " elements of data, its shape needs " +
                         llvm::Twine(NumElements));
  }

  llvm::SmallVector<Dim, 6> Dims;
  for (int64_t D : Shape)
    Dims.push_back(Dim::getStatic(D));
  auto D = TensorData::create(TensorType(*Elt, Dims), std::move(Bytes));
  if (!D)
    return tensorError(Label + ": " + llvm::toString(D.takeError()));
  return *D;
}

std::vector<uint8_t> onnximport::toLogicalOrder(const TensorData &D) {
  const TensorType &Ty = D.getType();
  llvm::ArrayRef<uint8_t> Src = D.getBytes();
  if (Ty.getLayout().isIdentity() || !Ty.hasRank() || Ty.getRank() < 2)
    return std::vector<uint8_t>(Src.begin(), Src.end());

  unsigned Rank = Ty.getRank();
  llvm::SmallVector<int64_t, 6> Logical = Ty.getStaticShape();
  llvm::SmallVector<unsigned, 6> Perm = Ty.getLayout().getPermutation(Rank);
  size_t EltSize = getElementByteSize(Ty.getElementType());
  std::vector<uint8_t> Out(Src.size());
  if (Src.empty())
    return Out;

  // Logical (row-major) strides, in elements.
  llvm::SmallVector<int64_t, 6> LogicalStride(Rank, 1);
  for (unsigned I = Rank - 1; I > 0; --I)
    LogicalStride[I - 1] = LogicalStride[I] * Logical[I];
  // Physical dim i has the extent and logical stride of logical dim Perm[i].
  llvm::SmallVector<int64_t, 6> PhysExtent(Rank), PhysStride(Rank);
  for (unsigned I = 0; I < Rank; ++I) {
    PhysExtent[I] = Logical[Perm[I]];
    PhysStride[I] = LogicalStride[Perm[I]];
  }

  // Walk the source in physical order with an odometer, tracking the
  // destination offset in logical order.
  llvm::SmallVector<int64_t, 6> Index(Rank, 0);
  int64_t NumElements = D.getNumElements();
  int64_t DstElt = 0;
  for (int64_t SrcElt = 0; SrcElt < NumElements; ++SrcElt) {
    std::memcpy(Out.data() + size_t(DstElt) * EltSize,
                Src.data() + size_t(SrcElt) * EltSize, EltSize);
    for (unsigned I = Rank; I > 0; --I) {
      unsigned Dm = I - 1;
      if (++Index[Dm] < PhysExtent[Dm]) {
        DstElt += PhysStride[Dm];
        break;
      }
      DstElt -= PhysStride[Dm] * (PhysExtent[Dm] - 1);
      Index[Dm] = 0;
    }
  }
  return Out;
}

void onnximport::encodeTensor(const TensorData &D, llvm::StringRef Name,
                              onnx::TensorProto &Out) {
  Out.Clear();
  Out.set_name(Name.str());
  const TensorType &Ty = D.getType();
  Out.set_data_type(toOnnxDataType(Ty.getElementType()));
  for (const Dim &Dm : Ty.getShape())
    Out.add_dims(Dm.getSize());
  std::vector<uint8_t> Bytes = toLogicalOrder(D);
  Out.set_raw_data(std::string(Bytes.begin(), Bytes.end()));
}
