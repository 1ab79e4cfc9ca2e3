//===- Ops.cpp - The op table ---------------------------------------------===//
//
// Builds the OpInfo table from Ops.def, parsing each attribute schema string
// once on first use.
//
//===----------------------------------------------------------------------===//

#include "strider/IR/OpInfo.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/ErrorHandling.h"

#include <vector>

using namespace strider;

namespace {
struct RawOp {
  OpId Id;
  const char *Name;
  int MinIn, MaxIn, MinOut, MaxOut;
  LayoutClass Layout;
  const char *Attrs;
};

constexpr RawOp RawOps[] = {
#define STRIDER_OP(Id, Name, MinIn, MaxIn, MinOut, MaxOut, Layout, Attrs)      \
  {OpId::Id, Name, MinIn, MaxIn, MinOut, MaxOut, LayoutClass::Layout, Attrs},
#include "strider/IR/Ops.def"
};

struct RawTraits {
  OpId Id;
  uint32_t Traits;
};

constexpr RawTraits RawOpTraits[] = {
#define STRIDER_OP_TRAITS(Id, Traits)                                          \
  {OpId::Id, [] {                                                              \
     using namespace optrait;                                                  \
     return uint32_t(Traits);                                                  \
   }()},
#include "strider/IR/Ops.def"
};

AttrKind parseKind(llvm::StringRef K) {
  static const AttrKind Kinds[] = {
      AttrKind::Int,    AttrKind::Float,   AttrKind::String, AttrKind::Ints,
      AttrKind::Floats, AttrKind::Strings, AttrKind::Tensor, AttrKind::Graph};
  for (AttrKind Kind : Kinds)
    if (getAttrKindName(Kind) == K)
      return Kind;
  llvm_unreachable("bad attribute kind in Ops.def");
}

struct OpTable {
  std::vector<std::vector<AttrSpec>> Specs;
  std::vector<OpInfo> Infos;

  OpTable() {
    Specs.resize(std::size(RawOps));
    for (unsigned I = 0; I < std::size(RawOps); ++I) {
      const RawOp &R = RawOps[I];
      assert(static_cast<unsigned>(R.Id) == I && "Ops.def order");
      llvm::SmallVector<llvm::StringRef, 8> Entries;
      llvm::StringRef(R.Attrs).split(Entries, ',', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef E : Entries) {
        auto [Name, Kind] = E.split(':');
        bool Required = Kind.consume_back("!");
        Specs[I].push_back({Name, parseKind(Kind), Required});
      }
      llvm::sort(Specs[I], [](const AttrSpec &A, const AttrSpec &B) {
        return A.Name < B.Name;
      });
      Infos.push_back(OpInfo{R.Id, R.Name, R.MinIn, R.MaxIn, R.MinOut, R.MaxOut,
                             R.Layout, Specs[I]});
    }
    for (const RawTraits &T : RawOpTraits) {
      assert(Infos[unsigned(T.Id)].Traits == 0 && "two trait entries");
      Infos[unsigned(T.Id)].Traits = T.Traits;
    }
  }
};

const OpTable &getTable() {
  static const OpTable Table;
  return Table;
}
} // namespace

const AttrSpec *OpInfo::findAttr(llvm::StringRef N) const {
  for (const AttrSpec &S : Attrs)
    if (S.Name == N)
      return &S;
  return nullptr;
}

const OpInfo &strider::getOpInfo(OpId Id) {
  assert(Id != OpId::Opaque && "opaque ops have no table entry");
  return getTable().Infos[static_cast<unsigned>(Id)];
}

bool strider::hasOpTrait(OpId Id, OpTrait T) {
  return Id != OpId::Opaque && getOpInfo(Id).hasTrait(T);
}

const OpInfo *strider::lookupOp(llvm::StringRef Name) {
  for (const OpInfo &I : getTable().Infos)
    if (I.Name == Name)
      return &I;
  return nullptr;
}

llvm::ArrayRef<OpInfo> strider::getAllOps() { return getTable().Infos; }
