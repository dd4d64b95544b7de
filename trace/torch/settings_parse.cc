#include "trace/torch/settings_parse.h"

#include <algorithm>
#include <bit>

#include "fmt/format.h"
#include "trace/core/numbers.h"

namespace hbmsim::trace {
namespace {

std::string FloatText(double d) {
  std::string s = fmt::format("{}", d);
  // Python prints integral floats with ".0" ("0.0", "2.0"); fmt prints "0".
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

// Appends repr(v) to `out` until it holds `max_chars`. Recursion is bounded by
// the tree's height (the unpickler caps it) and the work by `max_chars`.
void AppendRepr(PickleValue v, size_t max_chars, std::string& out) {
  if (out.size() >= max_chars) return;
  switch (v.kind()) {
    case PickleKind::kNone:
      out += "None";
      return;
    case PickleKind::kBool:
      out += *v.AsBool() ? "True" : "False";
      return;
    case PickleKind::kInt:
      out += fmt::format("{}", *v.AsInt64());
      return;
    case PickleKind::kUInt:
      out += fmt::format("{}", *v.AsUInt64());
      return;
    case PickleKind::kBigInt:
      out += "<int wider than 64 bits>";
      return;
    case PickleKind::kFloat:
      out += FloatText(*v.AsDouble());
      return;
    case PickleKind::kString:
    case PickleKind::kBytes:
      out += fmt::format("{}'{}'", v.kind() == PickleKind::kBytes ? "b" : "", v.AsString());
      return;
    case PickleKind::kList:
    case PickleKind::kTuple: {
      const bool list = v.is_list();
      out += list ? "[" : "(";
      for (size_t i = 0; i < v.size() && out.size() < max_chars; ++i) {
        if (i > 0) out += ", ";
        AppendRepr(v.at(i), max_chars, out);
      }
      out += list ? "]" : (v.size() == 1 ? ",)" : ")");
      return;
    }
    case PickleKind::kDict:
      out += "{";
      for (size_t i = 0; i < v.size() && out.size() < max_chars; ++i) {
        if (i > 0) out += ", ";
        AppendRepr(v.key(i), max_chars, out);
        out += ": ";
        AppendRepr(v.value(i), max_chars, out);
      }
      out += "}";
      return;
  }
}

bool ParseRoundupDivisions(FieldReader& r, PickleValue d, const ValuePath& at, AllocatorSettings& out) {
  if (!r.ExpectKind(d, PickleKind::kDict, at)) return false;
  for (size_t i = 0; i < d.size(); ++i) {
    const absl::StatusOr<uint64_t> interval = ParseU64(d.key(i).AsString());
    const std::optional<uint64_t> divisions = d.value(i).AsUInt64();
    if (!d.key(i).is_string() || !interval.ok()) {
      return r.Fail(at, fmt::format("key {} is not a size in MiB", PythonText(d.key(i), 64)));
    }
    if (!divisions) return r.Fail(at.Key(d.key(i).AsString()), "expected a non-negative int");
    out.roundup_power2_divisions.emplace_back(*interval, *divisions);
  }
  std::stable_sort(out.roundup_power2_divisions.begin(), out.roundup_power2_divisions.end());
  return true;
}

}  // namespace

std::string PythonText(PickleValue v, size_t max_chars) {
  if (v.is_string()) return std::string(v.AsString().substr(0, max_chars));
  std::string out;
  AppendRepr(v, max_chars, out);
  if (out.size() > max_chars) {
    out.resize(max_chars);
    out += "...";
  }
  return out;
}

bool ParseAllocatorSettings(FieldReader& r, PickleValue d, const ValuePath& at, AllocatorSettings& out) {
  if (!r.ExpectKind(d, PickleKind::kDict, at)) return false;
  for (size_t i = 0; i < d.size(); ++i) {
    if (!d.key(i).is_string()) return r.ExpectKind(d.key(i), PickleKind::kString, at.Index(i));
    out.entries.emplace_back(std::string(d.key(i).AsString()), PythonText(d.value(i)));
  }
  std::string_view conf;
  int64_t max_split = 0;
  bool expandable = false;
  if (!r.Str(d, "PYTORCH_CUDA_ALLOC_CONF", at, false, conf)) return false;
  out.alloc_conf = std::string(conf);
  if (d.Find("max_split_size")) {
    if (!r.I64(d, "max_split_size", at, true, max_split)) return false;
    out.max_split_size = max_split;
  }
  if (d.Find("expandable_segments")) {
    if (!r.Bool(d, "expandable_segments", at, true, expandable)) return false;
    out.expandable_segments = expandable;
  }
  if (const std::optional<PickleValue> gc = d.Find("garbage_collection_threshold")) {
    const std::optional<double> threshold = gc->AsDouble();
    if (!threshold) return r.Fail(at.Key("garbage_collection_threshold"), "expected float");
    out.garbage_collection_threshold = *threshold;
  }
  if (const std::optional<PickleValue> rp = d.Find("roundup_power2_divisions")) {
    return ParseRoundupDivisions(r, *rp, at.Key("roundup_power2_divisions"), out);
  }
  return true;
}

}  // namespace hbmsim::trace
