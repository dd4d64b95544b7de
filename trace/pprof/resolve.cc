#include "trace/pprof/resolve.h"

#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "fmt/format.h"
#include "trace/pprof/device_profile.h"
#include "trace/pprof/wire.h"

namespace hbmsim::trace::pprof {
namespace {

// The samples' strings, ids and labels, checked as they are looked up.
class Resolver {
 public:
  explicit Resolver(const Profile& p) : p_(p) {}

  absl::Status Index();
  absl::StatusOr<std::string_view> String(uint64_t index, size_t offset) const {
    if (index >= p_.strings.size()) {
      return WireError(offset, fmt::format("string index {} is past the string table ({} strings)", index,
                                           p_.strings.size()));
    }
    return p_.strings[index];
  }
  // The sample-type positions of the count and the bytes.
  absl::Status FindValueIndices();
  // The frame list of a sample's stack, in `table`.
  absl::StatusOr<uint32_t> Stack(const Sample& s, ContextTable& table);

  size_t count_index = 0;
  size_t bytes_index = 0;

 private:
  absl::StatusOr<std::vector<uint32_t>> LocationFrames(uint64_t id, size_t offset, ContextTable& table);

  const Profile& p_;
  absl::flat_hash_map<uint64_t, const Location*> locations_;
  absl::flat_hash_map<uint64_t, const Function*> functions_;
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> frames_of_location_;
};

absl::Status Resolver::Index() {
  for (const Location& l : p_.locations) {
    if (!locations_.emplace(l.id, &l).second)
      return WireError(l.offset, fmt::format("location id {} twice", l.id));
  }
  for (const Function& f : p_.functions) {
    if (!functions_.emplace(f.id, &f).second)
      return WireError(f.offset, fmt::format("function id {} twice", f.id));
  }
  return absl::OkStatus();
}

absl::Status Resolver::FindValueIndices() {
  std::optional<size_t> count, bytes;
  for (size_t i = 0; i < p_.sample_types.size(); ++i) {
    const uint64_t type = p_.sample_types[i].type, unit = p_.sample_types[i].unit;
    if (type >= p_.strings.size() || unit >= p_.strings.size()) continue;
    if (p_.strings[type] == "allocations" && p_.strings[unit] == "count") count = i;
    if (p_.strings[type] == "space" && p_.strings[unit] == "bytes") bytes = i;
  }
  if (!count || !bytes) {
    return WireError(0, "not a device memory profile: no sample types allocations/count and space/bytes");
  }
  count_index = *count;
  bytes_index = *bytes;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint32_t>> Resolver::LocationFrames(uint64_t id, size_t offset,
                                                               ContextTable& table) {
  if (auto it = frames_of_location_.find(id); it != frames_of_location_.end()) return it->second;
  auto loc = locations_.find(id);
  if (loc == locations_.end()) return WireError(offset, fmt::format("location {} is not in the profile", id));
  std::vector<uint32_t> frames;
  for (const Line& line : loc->second->lines) {
    auto fn = functions_.find(line.function_id);
    if (fn == functions_.end()) {
      return WireError(loc->second->offset,
                       fmt::format("function {} is not in the profile", line.function_id));
    }
    absl::StatusOr<std::string_view> name = String(fn->second->name, fn->second->offset);
    if (!name.ok()) return name.status();
    absl::StatusOr<std::string_view> file = String(fn->second->filename, fn->second->offset);
    if (!file.ok()) return file.status();
    frames.push_back(table.AddFrame(StackFrame{std::string(*file), line.line, std::string(*name)}));
  }
  frames_of_location_.emplace(id, frames);
  return frames;
}

absl::StatusOr<uint32_t> Resolver::Stack(const Sample& s, ContextTable& table) {
  std::vector<uint32_t> stack;
  for (uint64_t id : s.location_ids) {
    absl::StatusOr<std::vector<uint32_t>> frames = LocationFrames(id, s.offset, table);
    if (!frames.ok()) return frames.status();
    stack.insert(stack.end(), frames->begin(), frames->end());
  }
  return table.AddList(std::move(stack));
}

// One sample's kind and device label (empty: none).
struct SampleLabels {
  std::string kind = "unknown";
  std::optional<std::string> device;
};

absl::StatusOr<SampleLabels> ReadLabels(const Resolver& r, const Sample& s) {
  SampleLabels out;
  for (const Label& l : s.labels) {
    absl::StatusOr<std::string_view> key = r.String(l.key, l.offset);
    if (!key.ok()) return key.status();
    absl::StatusOr<std::string_view> value = r.String(l.str, l.offset);
    if (!value.ok()) return value.status();
    const bool numeric = l.str == 0;
    if (*key == "kind") out.kind = numeric ? fmt::format("{}", l.num) : std::string(*value);
    if (*key == "device") out.device = numeric ? fmt::format("{}", l.num) : std::string(*value);
  }
  return out;
}

// Device numbers: each label's own number when all have distinct ones, else first-appearance order.
std::map<std::string, uint64_t> NumberDevices(const std::vector<std::string>& labels_in_order) {
  std::map<std::string, uint64_t> numbers;
  std::map<uint64_t, std::string> taken;
  bool own = true;
  for (const std::string& label : labels_in_order) {
    const std::optional<uint64_t> n = DeviceLabelNumber(label);
    if (!n || !taken.emplace(*n, label).second) own = false;
  }
  for (size_t i = 0; i < labels_in_order.size(); ++i) {
    numbers[labels_in_order[i]] = own ? *DeviceLabelNumber(labels_in_order[i]) : i;
  }
  return numbers;
}

}  // namespace

std::optional<uint64_t> DeviceLabelNumber(std::string_view label) {
  const size_t paren = label.find('(');
  std::string_view head = label.substr(0, paren);  // "TPU_3", "cuda:3", "TFRT_CPU_3", "3"
  size_t start = head.size();
  while (start > 0 && head[start - 1] >= '0' && head[start - 1] <= '9') --start;
  const std::string_view digits = head.substr(start);
  if (digits.empty() || digits.size() > 18) return std::nullopt;
  if (start > 0 && head[start - 1] != ':' && head[start - 1] != '_') return std::nullopt;
  uint64_t n = 0;
  for (char c : digits) n = n * 10 + static_cast<uint64_t>(c - '0');
  return n;
}

absl::StatusOr<HeldState> ResolveDeviceProfile(const Profile& p) {
  Resolver r(p);
  if (absl::Status s = r.Index(); !s.ok()) return s;
  if (absl::Status s = r.FindValueIndices(); !s.ok()) return s;
  HeldState held;
  held.source = "JAX device memory profile (pprof)";
  std::vector<std::string> labels_in_order;
  absl::flat_hash_set<std::string> seen_labels;
  std::vector<std::pair<std::optional<std::string>, HeldEntry>> entries;
  uint64_t buffers = 0;
  for (const Sample& s : p.samples) {
    if (s.values.size() != p.sample_types.size()) {
      return WireError(s.offset, fmt::format("the sample has {} values for {} sample types", s.values.size(),
                                             p.sample_types.size()));
    }
    absl::StatusOr<SampleLabels> labels = ReadLabels(r, s);
    if (!labels.ok()) return labels.status();
    const int64_t count = s.values[r.count_index];
    if (count < 0) return WireError(s.offset, fmt::format("the sample's count is negative ({})", count));
    buffers += static_cast<uint64_t>(count);
    if (buffers > kMaxHeldBuffers) {
      return WireError(s.offset, fmt::format("more than {} allocations in one profile", kMaxHeldBuffers));
    }
    // A buffer sample's bytes are its buffers' bytes: bytes held by no buffer
    // cannot be placed, and dropping them would be a silent skip.
    if (labels->kind == "buffer" && count == 0 && s.values[r.bytes_index] > 0) {
      return WireError(s.offset, fmt::format("the sample holds {} bytes in 0 buffers", s.values[r.bytes_index]));
    }
    absl::StatusOr<uint32_t> stack = r.Stack(s, held.table);
    if (!stack.ok()) return stack.status();
    if (labels->device && seen_labels.insert(*labels->device).second)
      labels_in_order.push_back(*labels->device);
    entries.push_back({labels->device, HeldEntry{labels->kind, static_cast<uint64_t>(count),
                                                 s.values[r.bytes_index], *stack}});
  }
  const std::map<std::string, uint64_t> numbers = NumberDevices(labels_in_order);
  std::map<uint64_t, HeldDevice> devices;  // ordered: ascending
  for (auto& [label, entry] : entries) {
    if (!label) {
      held.unplaced.push_back(std::move(entry));
      continue;
    }
    HeldDevice& d = devices[numbers.at(*label)];
    d.device = DeviceId(numbers.at(*label));
    d.name = *label;
    d.entries.push_back(std::move(entry));
  }
  for (auto& [n, d] : devices) held.devices.push_back(std::move(d));
  return held;
}

}  // namespace hbmsim::trace::pprof
