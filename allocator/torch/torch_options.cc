#include "allocator/torch/torch_options.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace hbmsim::allocator::torch {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kMinSplitSizeMb = kLargeBuffer / kMiB;  // 20

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

// PyTorch's lexer: `,` `:` `[` `]` are tokens of their own, spaces vanish.
std::vector<std::string> Lex(std::string_view conf) {
  std::vector<std::string> tokens;
  std::string buf;
  for (char c : conf) {
    if (c == ',' || c == ':' || c == '[' || c == ']') {
      if (!buf.empty()) tokens.push_back(std::move(buf));
      buf.clear();
      tokens.emplace_back(1, c);
    } else if (c != ' ') {
      buf.push_back(c);
    }
  }
  if (!buf.empty()) tokens.push_back(std::move(buf));
  return tokens;
}

absl::Status Invalid(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

// Walks the token list the way AllocatorConfig::parseArgs does.
class ConfParser {
 public:
  explicit ConfParser(std::vector<std::string> tokens) : t_(std::move(tokens)) {}

  absl::StatusOr<TorchConfDelta> Run() {
    for (i_ = 0; i_ < t_.size(); ++i_) {
      absl::Status s = ParseKey(t_[i_]);
      if (!s.ok()) return s;
      if (i_ + 1 < t_.size()) {
        if (absl::Status c = Consume(','); !c.ok()) return c;
      }
    }
    return delta_;
  }

 private:
  absl::Status Consume(char c) {
    ++i_;
    if (i_ < t_.size() && t_[i_] == std::string(1, c)) return absl::OkStatus();
    return Invalid(fmt::format("Error parsing CachingAllocator::AllocatorConfig settings, expected {}", c));
  }
  // The value token after `key:`, or the "expecting" error.
  absl::StatusOr<std::string_view> Value(std::string_view expecting) {
    if (absl::Status s = Consume(':'); !s.ok()) return s;
    if (++i_ < t_.size()) return std::string_view(t_[i_]);
    return Invalid(fmt::format("Error, expecting {} value", expecting));
  }
  static absl::StatusOr<uint64_t> Unsigned(std::string_view s, std::string_view key) {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) {
      return Invalid(fmt::format("Invalid value '{}' for CachingAllocator option {}", s, key));
    }
    return v;
  }
  static absl::StatusOr<double> Real(std::string_view s, std::string_view key) {
    std::string copy(s);
    char* end = nullptr;
    const double v = std::strtod(copy.c_str(), &end);
    if (copy.empty() || end != copy.c_str() + copy.size()) {
      return Invalid(fmt::format("Invalid value '{}' for CachingAllocator option {}", s, key));
    }
    return v;
  }

  absl::StatusOr<Bytes> MegabytesAtLeast20(std::string_view key) {
    auto v = Value(key);
    if (!v.ok()) return v.status();
    auto mb = Unsigned(*v, key);
    if (!mb.ok()) return mb.status();
    if (*mb < kMinSplitSizeMb) {
      return Invalid(
          fmt::format("CachingAllocator option {} too small, must be >= {}", key, kMinSplitSizeMb));
    }
    return Bytes(std::min(*mb, kUnlimited / kMiB) * kMiB);
  }

  absl::StatusOr<bool> TrueFalse(std::string_view key) {
    if (absl::Status s = Consume(':'); !s.ok()) return s;
    ++i_;
    if (i_ < t_.size() && (t_[i_] == "True" || t_[i_] == "False")) return t_[i_] == "True";
    return Invalid(fmt::format("Expected a single True/False argument for {}", key));
  }

  absl::Status ParseKey(std::string_view key);
  absl::Status ParseRoundup();
  absl::Status ParseRoundupList(std::array<uint64_t, kRoundupIntervals>& buckets);

  std::vector<std::string> t_;
  size_t i_ = 0;
  TorchConfDelta delta_;
};

absl::Status ConfParser::ParseKey(std::string_view key) {
  if (key == "max_split_size_mb" || key == "max_non_split_rounding_mb") {
    auto bytes = MegabytesAtLeast20(key);
    if (!bytes.ok()) return bytes.status();
    (key == "max_split_size_mb" ? delta_.max_split_size : delta_.max_non_split_rounding) = *bytes;
  } else if (key == "large_segment_size_mb") {
    auto bytes = MegabytesAtLeast20(key);
    if (!bytes.ok()) return bytes.status();
    delta_.large_segment_size = *bytes;
  } else if (key == "garbage_collection_threshold") {
    auto v = Value(key);
    if (!v.ok()) return v.status();
    auto d = Real(*v, key);
    if (!d.ok()) return d.status();
    if (!(*d > 0 && *d < 1.0)) return Invalid("garbage_collect_threshold is invalid, set it in (0.0, 1.0)");
    delta_.garbage_collection_threshold = *d;
  } else if (key == "per_process_memory_fraction") {
    auto v = Value(key);
    if (!v.ok()) return v.status();
    auto d = Real(*v, key);
    if (!d.ok()) return d.status();
    if (!(*d >= 0 && *d <= 1.0))
      return Invalid(fmt::format("invalid fraction:{}. Please set within (0, 1).", *v));
    delta_.per_process_memory_fraction = *d;
  } else if (key == "roundup_power2_divisions") {
    return ParseRoundup();
  } else if (key == "expandable_segments") {
    auto b = TrueFalse(key);
    if (!b.ok()) return b.status();
    delta_.expandable_segments = *b;
  } else if (key == "release_lock_on_cudamalloc" || key == "pinned_use_cuda_host_register" ||
             key == "pinned_use_background_threads" || key == "graph_capture_record_stream_reuse" ||
             key == "throw_on_cudamalloc_oom") {
    auto b = TrueFalse(key);
    if (!b.ok()) return b.status();
  } else if (key == "pinned_num_register_threads" || key == "pinned_reserve_segment_size_mb") {
    auto v = Value(key);
    if (!v.ok()) return v.status();
  } else if (key == "backend") {
    auto v = Value("allocator backend");
    if (!v.ok()) return v.status();
    if (*v != "native") {
      return Invalid(fmt::format("Unknown allocator backend, options are native and cudaMallocAsync{}",
                                 *v == "cudaMallocAsync" ? " (the torch policy models native only)" : ""));
    }
  } else {
    return Invalid(fmt::format("Unrecognized key '{}' in CUDA allocator config.", key));
  }
  return absl::OkStatus();
}

absl::Status ConfParser::ParseRoundup() {
  auto v = Value("roundup_power2_divisions");
  if (!v.ok()) return v.status();
  std::array<uint64_t, kRoundupIntervals> buckets{};
  if (*v == "[") {
    if (absl::Status s = ParseRoundupList(buckets); !s.ok()) return s;
  } else {
    auto n = Unsigned(*v, "roundup_power2_divisions");
    if (!n.ok()) return n.status();
    if (!IsPowerOfTwo(*n)) return Invalid("For roundups, the divisons has to be power of 2 ");
    buckets.fill(*n);
  }
  delta_.roundup_power2_divisions = buckets;
  return absl::OkStatus();
}

// `[256:1,512:2,>:8]`. Copies PyTorch exactly, quirks included: the first entry
// also fills every bucket below it, and `>` fills from the PREVIOUS entry's
// bucket on (so that bucket is overwritten too).
absl::Status ConfParser::ParseRoundupList(std::array<uint64_t, kRoundupIntervals>& buckets) {
  bool first = true;
  size_t last_index = 0;
  while (++i_ < t_.size() && t_[i_] != "]") {
    const std::string interval = t_[i_];
    if (absl::Status s = Consume(':'); !s.ok()) return s;
    if (++i_ >= t_.size()) return Invalid("Error parsing roundup_power2_divisions value");
    auto divisions = Unsigned(t_[i_], "roundup_power2_divisions");
    if (!divisions.ok()) return divisions.status();
    if (*divisions != 0 && !IsPowerOfTwo(*divisions)) {
      return Invalid("For roundups, the divisons has to be power of 2 or 0 to disable roundup ");
    }
    if (interval == ">") {
      std::fill(buckets.begin() + static_cast<ptrdiff_t>(last_index), buckets.end(), *divisions);
    } else {
      auto mb = Unsigned(interval, "roundup_power2_divisions");
      if (!mb.ok()) return mb.status();
      if (!IsPowerOfTwo(*mb)) return Invalid("For roundups, the intervals have to be power of 2 ");
      const size_t index = std::min<size_t>(std::bit_width(*mb) - 1, kRoundupIntervals - 1);
      if (first) std::fill(buckets.begin(), buckets.begin() + static_cast<ptrdiff_t>(index), *divisions);
      first = false;
      buckets[index] = *divisions;
      last_index = index;
    }
    if (i_ + 1 < t_.size() && t_[i_ + 1] != "]") {
      if (absl::Status s = Consume(','); !s.ok()) return s;
    }
  }
  if (i_ >= t_.size())
    return Invalid("Expected closing bracket ']' in ConfigTokenizer but reached end of config");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TorchConfDelta> ParseAllocConf(std::string_view conf) { return ConfParser(Lex(conf)).Run(); }

void ApplyConfDelta(const TorchConfDelta& d, TorchOptions& o) {
  if (d.max_split_size) o.max_split_size = *d.max_split_size;
  if (d.max_non_split_rounding) o.max_non_split_rounding = *d.max_non_split_rounding;
  if (d.roundup_power2_divisions) o.roundup_power2_divisions = *d.roundup_power2_divisions;
  if (d.garbage_collection_threshold) o.garbage_collection_threshold = *d.garbage_collection_threshold;
  if (d.expandable_segments) o.expandable_segments = *d.expandable_segments;
  if (d.large_segment_size) o.large_segment_size = *d.large_segment_size;
  if (d.per_process_memory_fraction) o.per_process_memory_fraction = *d.per_process_memory_fraction;
}

int RoundupBucket(uint64_t size) {
  const int log2 = size == 0 ? 0 : static_cast<int>(std::bit_width(size)) - 1;
  return std::clamp(log2 - 20, 0, kRoundupIntervals - 1);
}

Bytes RoundSize(Bytes size, const TorchOptions& options) {
  const uint64_t s = size.value();
  if (s < kMinBlockSize) return Bytes(kMinBlockSize);
  const uint64_t divisions = options.roundup_power2_divisions[RoundupBucket(s)];
  if (divisions > 1 && s > kMinBlockSize * divisions) {
    if (IsPowerOfTwo(s)) return size;
    const uint64_t floor = std::bit_floor(s);
    const uint64_t step = floor >> (std::bit_width(divisions) - 1);
    if (step == 0) return Bytes(floor << 1);
    return size.RoundUp(step);
  }
  return size.RoundUp(kMinBlockSize);
}

Bytes AllocationSize(Bytes rounded, const TorchOptions& options) {
  if (rounded.value() <= kSmallSize) return Bytes(kSmallBuffer);
  if (rounded.value() < kMinLargeAlloc) return options.large_segment_size;
  return rounded.RoundUp(kRoundLarge);
}

}  // namespace hbmsim::allocator::torch
