// The `sharding` attribute, checked as XLA's parser and HloSharding's validation check it, then
// kept as text (hlox runs one partition and does not use it):
//
//   sharding ::= '{' '}' | '{' sharding (',' sharding)* '}' | '{' item* '}'
//   item     ::= replicated | manual | unknown | maximal | device=N
//              | devices=[d,...] (id,... | <=[r,...] T(p,...)?)
//              | last_tile_dim_replicate | last_tile_dims={type, ...}
//              | shard_as N | shard_like N | metadata=metadata
//
// One kind per sharding (replicated, manual, unknown, maximal with its device, or a tile
// assignment); device ids non-negative and used once, as many as the tiles; an iota assignment
// whose reshape has as many devices as the tiles and whose T(...) permutes it; subgroup types
// only on tile assignments. Against the instruction's written shape: a tuple sharding needs a
// tuple shape with as many leaves, and a tile assignment has one dimension per array dimension
// plus its replicated/subgroup dimensions.
#include <algorithm>
#include <numeric>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ir/parser_internal.h"

namespace hlox::parser_internal {
namespace {

// Arrays below `s` (a tuple's leaves; 1 for an array or token).
int64_t LeafCount(const Shape& s) {
  if (!s.IsTuple()) return 1;
  int64_t n = 0;
  for (int64_t i = 0; i < s.tuple_size(); ++i) n += LeafCount(s.tuple_shape(i));
  return n;
}

}  // namespace

absl::Status Parser::ParseIntListIn(char open, char close, std::vector<int64_t>* out, std::string_view what) {
  out->clear();
  HLOX_RETURN_IF_ERROR(lex_.Expect(open, absl::StrCat("to open ", std::string(what))));
  if (lex_.TryConsume(close)) return absl::OkStatus();
  while (true) {
    int64_t v;
    HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&v, what));
    out->push_back(v);
    if (lex_.TryConsume(close)) return absl::OkStatus();
    HLOX_RETURN_IF_ERROR(lex_.Expect(',', absl::StrCat("or '", std::string(1, close), "' in ", std::string(what))));
  }
}

absl::Status Parser::ParseIotaTail(int64_t devices, size_t pos, std::string_view what) {
  std::vector<int64_t> reshape, perm;
  HLOX_RETURN_IF_ERROR(ParseIntListIn('[', ']', &reshape, "iota reshape dimensions"));
  int64_t have = 1;
  for (int64_t r : reshape) {
    if (r <= 0 || have > (int64_t{1} << 40) / r) return lex_.ErrorAt(pos, "iota reshape dimensions must be positive and small");
    have *= r;
  }
  if (have != devices) {
    return lex_.ErrorAt(pos, absl::StrCat(std::string(what), " lists ", have, " devices where ", devices, " are needed"));
  }
  if (lex_.PeekName() != "T") return absl::OkStatus();
  lex_.ConsumeName();
  const size_t ppos = lex_.SkipSpace();
  HLOX_RETURN_IF_ERROR(ParseIntListIn('(', ')', &perm, "iota transpose"));
  std::vector<int64_t> sorted = perm, want(reshape.size());
  std::sort(sorted.begin(), sorted.end());
  std::iota(want.begin(), want.end(), 0);
  if (sorted != want) return lex_.ErrorAt(ppos, "iota transpose must be a permutation of the reshape dimensions");
  return absl::OkStatus();
}

absl::Status Parser::ParseShardingValue(const Shape* shape, int depth) {
  if (depth > 64) return lex_.Error("sharding nested too deeply");
  const size_t open = lex_.SkipSpace();
  HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open a sharding"));
  if (lex_.Peek() == '}' || lex_.Peek() == '{') {  // a tuple sharding, one per leaf
    int64_t count = 0;
    if (!lex_.TryConsume('}')) {
      while (true) {
        HLOX_RETURN_IF_ERROR(ParseShardingValue(nullptr, depth + 1));
        ++count;
        if (lex_.TryConsume('}')) break;
        HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or '}' between tuple shardings"));
      }
    }
    if (shape != nullptr && !shape->IsTuple()) {
      return lex_.ErrorAt(open, "a tuple sharding needs a tuple shape");
    }
    if (shape != nullptr && count != LeafCount(*shape)) {
      return lex_.ErrorAt(open, absl::StrCat("tuple sharding has ", count, " elements for a shape of ",
                                             LeafCount(*shape), " leaves"));
    }
    return absl::OkStatus();
  }
  std::string kind;  // replicated, manual, unknown, maximal or devices
  size_t kind_pos = open;
  bool has_device = false, replicate_last = false;
  std::vector<int64_t> tiles;
  std::vector<std::string> subgroups;
  std::unordered_set<std::string> seen;
  while (!lex_.TryConsume('}')) {
    const size_t pos = lex_.SkipSpace();
    std::string_view word = lex_.ConsumeName();
    if (word.empty()) return lex_.Error("expected a sharding item or '}'");
    const std::string w(word);
    if (w != "metadata" && !seen.insert(w).second) {
      return lex_.ErrorAt(pos, absl::StrCat("'", w, "' given twice in one sharding"));
    }
    auto set_kind = [&](const std::string& k) -> absl::Status {
      if (!kind.empty()) {
        return lex_.ErrorAt(pos, absl::StrCat("a sharding is either ", kind, " or ", k, ", not both"));
      }
      kind = k;
      kind_pos = pos;
      return absl::OkStatus();
    };
    if (w == "replicated" || w == "manual" || w == "unknown" || w == "maximal") {
      HLOX_RETURN_IF_ERROR(set_kind(w));
    } else if (w == "device") {
      HLOX_RETURN_IF_ERROR(lex_.Expect('=', "after 'device'"));
      int64_t d;
      const size_t dpos = lex_.SkipSpace();
      HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&d, "device id"));
      if (d < 0) return lex_.ErrorAt(dpos, "negative device id");
      has_device = true;
    } else if (w == "devices") {
      HLOX_RETURN_IF_ERROR(set_kind(w));
      HLOX_RETURN_IF_ERROR(lex_.Expect('=', "after 'devices'"));
      const size_t tpos = lex_.SkipSpace();
      HLOX_RETURN_IF_ERROR(ParseIntListIn('[', ']', &tiles, "tile assignment dimensions"));
      int64_t total = 1;
      for (int64_t t : tiles) {
        if (t <= 0) return lex_.ErrorAt(tpos, "tile assignment dimensions must be positive");
        if (total > (int64_t{1} << 40) / t) return lex_.ErrorAt(tpos, "tile assignment too large");
        total *= t;
      }
      if (tiles.empty()) return lex_.ErrorAt(tpos, "a tile assignment needs at least one dimension");
      const size_t ids_pos = lex_.SkipSpace();
      if (lex_.TryConsume("<=")) {  // iota form: <=[reshape] T(perm)
        HLOX_RETURN_IF_ERROR(ParseIotaTail(total, ids_pos, "iota tile assignment"));
      } else {
        std::unordered_set<int64_t> ids;
        while (true) {
          int64_t id;
          const size_t ipos = lex_.SkipSpace();
          HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&id, "device id"));
          if (id < 0) return lex_.ErrorAt(ipos, "negative device id");
          if (!ids.insert(id).second) return lex_.ErrorAt(ipos, absl::StrCat("device ", id, " used twice"));
          if (static_cast<int64_t>(ids.size()) > total) break;
          if (!lex_.TryConsume(',')) break;
        }
        if (static_cast<int64_t>(ids.size()) != total) {
          return lex_.ErrorAt(ids_pos, absl::StrCat("tile assignment lists ", ids.size(), " devices for ",
                                                    total, " tiles"));
        }
      }
    } else if (w == "last_tile_dim_replicate") {
      replicate_last = true;
    } else if (w == "last_tile_dims") {
      HLOX_RETURN_IF_ERROR(lex_.Expect('=', "after 'last_tile_dims'"));
      HLOX_RETURN_IF_ERROR(lex_.Expect('{', "to open last_tile_dims"));
      while (true) {
        const size_t spos = lex_.SkipSpace();
        std::string t(lex_.ConsumeName());
        if (t != "manual" && t != "replicated" && t != "maximal" && t != "unreduced") {
          return lex_.ErrorAt(spos, absl::StrCat("unknown subgroup type '", t,
                                                 "' (manual, replicated, maximal or unreduced)"));
        }
        subgroups.push_back(t);
        if (lex_.TryConsume('}')) break;
        HLOX_RETURN_IF_ERROR(lex_.Expect(',', "or '}' in last_tile_dims"));
      }
    } else if (w == "shard_as" || w == "shard_like") {
      int64_t group;
      const size_t gpos = lex_.SkipSpace();
      HLOX_RETURN_IF_ERROR(lex_.ConsumeInt(&group, "shard group id"));
      if (group < 0) return lex_.ErrorAt(gpos, "negative shard group id");
      if (seen.count(w == "shard_as" ? "shard_like" : "shard_as")) {
        return lex_.ErrorAt(pos, "a sharding is in one shard group: shard_as or shard_like, not both");
      }
    } else if (w == "metadata") {
      HLOX_RETURN_IF_ERROR(lex_.Expect('=', "after 'metadata'"));
      HLOX_RETURN_IF_ERROR(ParseMetadataValue());
    } else {
      return lex_.ErrorAt(pos, absl::StrCat("unknown sharding item '", w, "'"));
    }
  }
  if (kind.empty()) {
    return lex_.ErrorAt(open, "a sharding needs replicated, manual, unknown, maximal or devices=[...]");
  }
  if ((kind == "maximal") != has_device) {
    return lex_.ErrorAt(kind_pos, kind == "maximal" ? "maximal sharding needs device=N"
                                                    : "device=N belongs to a maximal sharding");
  }
  if (kind != "devices" && (replicate_last || !subgroups.empty())) {
    return lex_.ErrorAt(kind_pos, "last_tile_dim_replicate and last_tile_dims need devices=[...]");
  }
  if (replicate_last && !subgroups.empty()) {
    return lex_.ErrorAt(kind_pos, "last_tile_dim_replicate and last_tile_dims exclude each other");
  }
  if (kind == "devices" && shape != nullptr) {
    const int64_t extra = (replicate_last ? 1 : 0) + static_cast<int64_t>(subgroups.size());
    if (shape->IsTuple()) {
      return lex_.ErrorAt(kind_pos, "a tile assignment on a tuple shape: give one sharding per element");
    }
    if (shape->IsArray() && static_cast<int64_t>(tiles.size()) != shape->rank() + extra) {
      return lex_.ErrorAt(kind_pos, absl::StrCat("tile assignment has ", tiles.size(), " dimensions for a rank-",
                                                 shape->rank(), " shape", extra ? " plus its subgroup dimensions" : "",
                                                 " (", shape->rank() + extra, " expected)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace hlox::parser_internal
