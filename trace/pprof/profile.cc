#include "trace/pprof/profile.h"

#include "fmt/format.h"
#include "trace/pprof/wire.h"

namespace hbmsim::trace::pprof {
namespace {

// A repeated integer field can hold no more integers than bytes.
constexpr size_t kMaxIntegers = size_t{1} << 28;

absl::Status Expect(const WireField& f, WireType type, std::string_view message) {
  if (f.type == type) return absl::OkStatus();
  return WireError(f.offset,
                   fmt::format("{} field {} has wire type {}", message, f.number, static_cast<int>(f.type)));
}

// The offset of a length-delimited field's payload: after its tag and length.
size_t PayloadOffset(const WireField& f, size_t base, std::string_view whole) {
  return base + static_cast<size_t>(f.bytes.data() - whole.data());
}

// Walks the message `bytes` (at `base` in the file), calling `on_field` for each field.
template <typename OnField>
absl::Status ForEachField(std::string_view bytes, size_t base, OnField on_field) {
  WireCursor c(bytes, base);
  while (!c.done()) {
    absl::StatusOr<WireField> f = c.Next();
    if (!f.ok()) return f.status();
    if (absl::Status s = on_field(*f); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<ValueType> DecodeValueType(std::string_view bytes, size_t base) {
  ValueType v;
  absl::Status s = ForEachField(bytes, base, [&](const WireField& f) -> absl::Status {
    if (f.number == 1 || f.number == 2) {
      if (absl::Status e = Expect(f, WireType::kVarint, "ValueType"); !e.ok()) return e;
      (f.number == 1 ? v.type : v.unit) = f.value;
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return v;
}

absl::StatusOr<Label> DecodeLabel(std::string_view bytes, size_t base) {
  Label l;
  l.offset = base;
  absl::Status s = ForEachField(bytes, base, [&](const WireField& f) -> absl::Status {
    if (f.number < 1 || f.number > 3) return absl::OkStatus();
    if (absl::Status e = Expect(f, WireType::kVarint, "Label"); !e.ok()) return e;
    if (f.number == 1) l.key = f.value;
    if (f.number == 2) l.str = f.value;
    if (f.number == 3) l.num = static_cast<int64_t>(f.value);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return l;
}

absl::StatusOr<Sample> DecodeSample(std::string_view bytes, size_t base) {
  Sample out;
  out.offset = base;
  std::vector<uint64_t> values;
  absl::Status s = ForEachField(bytes, base, [&](const WireField& f) -> absl::Status {
    if (f.number == 1) return AppendIntegers(f, out.location_ids, kMaxIntegers);
    if (f.number == 2) return AppendIntegers(f, values, kMaxIntegers);
    if (f.number != 3) return absl::OkStatus();
    if (absl::Status e = Expect(f, WireType::kBytes, "Sample"); !e.ok()) return e;
    absl::StatusOr<Label> l = DecodeLabel(f.bytes, PayloadOffset(f, base, bytes));
    if (!l.ok()) return l.status();
    out.labels.push_back(*l);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  for (uint64_t v : values) out.values.push_back(static_cast<int64_t>(v));
  return out;
}

absl::StatusOr<Location> DecodeLocation(std::string_view bytes, size_t base) {
  Location out;
  out.offset = base;
  absl::Status s = ForEachField(bytes, base, [&](const WireField& f) -> absl::Status {
    if (f.number == 1) {
      if (absl::Status e = Expect(f, WireType::kVarint, "Location"); !e.ok()) return e;
      out.id = f.value;
    } else if (f.number == 4) {
      if (absl::Status e = Expect(f, WireType::kBytes, "Location"); !e.ok()) return e;
      Line line;
      absl::Status ls = ForEachField(f.bytes, PayloadOffset(f, base, bytes), [&](const WireField& g) {
        if (g.number != 1 && g.number != 2) return absl::OkStatus();
        if (absl::Status e = Expect(g, WireType::kVarint, "Line"); !e.ok()) return e;
        if (g.number == 1) line.function_id = g.value;
        if (g.number == 2) line.line = static_cast<int64_t>(g.value);
        return absl::OkStatus();
      });
      if (!ls.ok()) return ls;
      out.lines.push_back(line);
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<Function> DecodeFunction(std::string_view bytes, size_t base) {
  Function out;
  out.offset = base;
  absl::Status s = ForEachField(bytes, base, [&](const WireField& f) -> absl::Status {
    if (f.number != 1 && f.number != 2 && f.number != 4) return absl::OkStatus();
    if (absl::Status e = Expect(f, WireType::kVarint, "Function"); !e.ok()) return e;
    if (f.number == 1) out.id = f.value;
    if (f.number == 2) out.name = f.value;
    if (f.number == 4) out.filename = f.value;
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

// One top-level field of the Profile into `p`.
absl::Status DecodeTopField(const WireField& f, std::string_view whole, Profile& p) {
  if (f.number < 1 || f.number > 6 || f.number == 3) return absl::OkStatus();
  if (absl::Status e = Expect(f, WireType::kBytes, "Profile"); !e.ok()) return e;
  const size_t at = PayloadOffset(f, 0, whole);
  switch (f.number) {
    case 1: {
      absl::StatusOr<ValueType> v = DecodeValueType(f.bytes, at);
      if (!v.ok()) return v.status();
      p.sample_types.push_back(*v);
      break;
    }
    case 2: {
      absl::StatusOr<Sample> v = DecodeSample(f.bytes, at);
      if (!v.ok()) return v.status();
      p.samples.push_back(*std::move(v));
      break;
    }
    case 4: {
      absl::StatusOr<Location> v = DecodeLocation(f.bytes, at);
      if (!v.ok()) return v.status();
      p.locations.push_back(*std::move(v));
      break;
    }
    case 5: {
      absl::StatusOr<Function> v = DecodeFunction(f.bytes, at);
      if (!v.ok()) return v.status();
      p.functions.push_back(*v);
      break;
    }
    case 6:
      p.strings.push_back(f.bytes);
      break;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Profile> DecodeProfile(std::string_view bytes) {
  Profile p;
  absl::Status s = ForEachField(bytes, 0, [&](const WireField& f) { return DecodeTopField(f, bytes, p); });
  if (!s.ok()) return s;
  return p;
}

}  // namespace hbmsim::trace::pprof
