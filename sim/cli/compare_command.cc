// `hbmsim compare TRACE --allocators bfc,tpu,first_fit,... [--bytes-limit L]`:
// one row per allocator (sim/whatif/comparison.h lists the measures).
// `hbmsim compare --baseline A --candidate B --allocator X [--bytes-limit L]`:
// the side-by-side table a performance PR needs, each line with its delta.
#include <cstdio>
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "sim/whatif/compact_trace.h"
#include "sim/whatif/comparison.h"
#include "sim/whatif/thread_pool.h"
#include "sim/whatif/whatif_common.h"
#include "trace/core/numbers.h"
#include "trace/io/output_set.h"

namespace hbmsim::cli {
namespace {

struct Failure {
  int code;
  std::string message;
};

Failure FromStatus(const absl::Status& s) {
  const bool internal = s.code() == absl::StatusCode::kInternal;
  return {internal ? kExitInternal : kExitBadInput,
          fmt::format("{}{}", internal ? "internal error: " : "", std::string(s.message()))};
}

class CompareCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("TRACE", trace_, "the trace to compare allocators on");
    app.add_option("--allocators", allocators_,
                   "comma-separated NAME[:KEY=VALUE...] or YAML configs, e.g. bfc,tpu,paged:page_size=64KiB");
    app.add_option("--baseline", baseline_, "baseline trace (with --candidate and --allocator)");
    app.add_option("--candidate", candidate_, "candidate trace, compared with --baseline");
    app.add_option("--allocator", allocator_, "the allocator for --baseline/--candidate");
    app.add_option("--set", sets_, "KEY=VALUE for --allocator (repeatable)")->allow_extra_args(false);
    app.add_option("--bytes-limit", bytes_limit_, "the limit L for failures and peaks (units allowed)");
    app.add_option("--resolution", resolution_, "the size search's step in bytes (default 256)");
    app.add_option("--jobs", jobs_,
                   "trials run in parallel (default: all cores); the output never depends on it");
    app.add_option("--json", json_, "write the table as JSON here");
  }
  int Run() override {
    std::optional<Failure> f = Compare();
    if (!f || f->code != kExitBadInput) {
      for (const std::string& note : notes_) fmt::print(stderr, "hbmsim compare: {}\n", note);
    }
    if (!f) return kExitOk;
    if (!f->message.empty()) fmt::print(stderr, "hbmsim compare: {}\n", OneLineMessage(f->message));
    return f->code;
  }

 private:
  std::optional<Failure> Compare();
  std::optional<Failure> ParseCommon(std::optional<Bytes>& limit, SizeOptions& options) const;
  absl::StatusOr<CompactTrace> Load(const std::string& path);
  std::optional<Failure> OpenOutputs();
  std::optional<Failure> Emit(const std::string& text, const nlohmann::ordered_json& json, bool any_failed);
  std::optional<Failure> Multi(const std::optional<Bytes>& limit, const SizeOptions& options);
  std::optional<Failure> Pair(const std::optional<Bytes>& limit, const SizeOptions& options);

  std::string trace_, allocators_, baseline_, candidate_, allocator_;
  std::vector<std::string> sets_;
  std::string bytes_limit_;
  std::string resolution_ = "256";
  int jobs_ = DefaultJobs();
  std::string json_;
  io::OutputSet outputs_;
  std::vector<std::string> notes_;  // said on stderr unless the run ends with exit 2 (one line then)
};

std::optional<Failure> CompareCommand::ParseCommon(std::optional<Bytes>& limit, SizeOptions& options) const {
  if (!bytes_limit_.empty()) {
    absl::StatusOr<Bytes> b = ParseBytes(bytes_limit_, /*allow_more_units=*/true);
    if (!b.ok()) {
      return Failure{kExitBadInput,
                     fmt::format("--bytes-limit {}: {}", bytes_limit_, std::string(b.status().message()))};
    }
    limit = *b;
  }
  absl::StatusOr<Bytes> r = ParseBytes(resolution_, /*allow_more_units=*/true);
  if (!r.ok()) {
    return Failure{kExitBadInput,
                   fmt::format("--resolution {}: {}", resolution_, std::string(r.status().message()))};
  }
  if (r->is_zero()) return Failure{kExitBadInput, "--resolution 0: must be at least 1 byte"};
  if (jobs_ < 1) return Failure{kExitBadInput, fmt::format("--jobs {}: must be at least 1", jobs_)};
  options = SizeOptions{r->value(), jobs_};
  return std::nullopt;
}

absl::StatusOr<CompactTrace> CompareCommand::Load(const std::string& path) {
  absl::StatusOr<CompactTrace> t = LoadCompactTrace(path, std::nullopt);
  if (t.ok()) {
    notes_.push_back(fmt::format("read {} once into memory: {} events in {} bytes (tags and marks dropped)",
                                 path, t->events.size(), t->MemoryBytes()));
  }
  return t;
}

// A row fails when no limit fits the trace, or when allocations failed at --bytes-limit.
bool RowFailed(const CompareRow& row) {
  return !row.size.found || (row.at_limit && row.at_limit->failures > 0);
}

std::optional<Failure> CompareCommand::OpenOutputs() {
  absl::StatusOr<io::OutputSet> set = io::OutputSet::Open(
      {{"TRACE", trace_}, {"--baseline", baseline_}, {"--candidate", candidate_}, {"--allocator", allocator_}},
      {{"--json", json_}});
  if (!set.ok()) return Failure{kExitBadInput, std::string(set.status().message())};
  outputs_ = *std::move(set);
  return std::nullopt;
}

// Exit 1 when any row failed (the contract's "at least one allocation failed").
std::optional<Failure> CompareCommand::Emit(const std::string& text, const nlohmann::ordered_json& json,
                                            bool any_failed) {
  if (absl::Status s = io::WriteStdout(text); !s.ok()) return FromStatus(s);
  if (io::OutputFile* out = outputs_.Get("--json")) {
    if (absl::Status s = out->Write(json.dump(2) + "\n"); !s.ok()) return FromStatus(io::WithRole("--json", s));
  }
  if (absl::Status s = outputs_.CommitAll(); !s.ok()) return FromStatus(s);
  if (any_failed) return Failure{kExitFailures, ""};
  return std::nullopt;
}

std::optional<Failure> CompareCommand::Multi(const std::optional<Bytes>& limit, const SizeOptions& options) {
  if (allocators_.empty()) return Failure{kExitBadInput, "pass --allocators NAME,NAME,... with TRACE"};
  absl::StatusOr<std::vector<AllocatorConfig>> configs = ParseAllocatorList(allocators_);
  if (!configs.ok()) return Failure{kExitBadInput, std::string(configs.status().message())};
  absl::StatusOr<CompactTrace> trace = Load(trace_);
  if (!trace.ok()) return FromStatus(trace.status());
  for (const AllocatorConfig& c : *configs) {
    if (c.policy->name == "offline") {
      notes_.push_back("offline makes two passes over the trace: it plans every buffer, then replays");
    }
  }
  absl::StatusOr<std::vector<CompareRow>> rows = CompareAllocators(*trace, *configs, limit, options);
  if (!rows.ok()) return FromStatus(rows.status());
  const bool any_failed = std::any_of(rows->begin(), rows->end(), RowFailed);
  return Emit(CompareText(trace_, *trace, limit, *rows), CompareJson(trace_, *trace, limit, *rows), any_failed);
}

std::optional<Failure> CompareCommand::Pair(const std::optional<Bytes>& limit, const SizeOptions& options) {
  if (baseline_.empty() || candidate_.empty() || allocator_.empty()) {
    return Failure{kExitBadInput, "--baseline, --candidate and --allocator go together"};
  }
  absl::StatusOr<AllocatorConfig> config = ResolveWithSets(allocator_, sets_);
  if (!config.ok()) return Failure{kExitBadInput, std::string(config.status().message())};
  absl::StatusOr<CompactTrace> a = Load(baseline_);
  if (!a.ok()) return FromStatus(a.status());
  absl::StatusOr<CompactTrace> b = Load(candidate_);
  if (!b.ok()) return FromStatus(b.status());
  absl::StatusOr<std::vector<CompareRow>> ra = CompareAllocators(*a, {*config}, limit, options);
  if (!ra.ok()) return FromStatus(ra.status());
  absl::StatusOr<std::vector<CompareRow>> rb = CompareAllocators(*b, {*config}, limit, options);
  if (!rb.ok()) return FromStatus(rb.status());
  return Emit(BaselineCandidateText(baseline_, candidate_, *a, *b, limit, ra->front(), rb->front()),
              BaselineCandidateJson(*a, *b, limit, ra->front(), rb->front()),
              RowFailed(ra->front()) || RowFailed(rb->front()));
}

std::optional<Failure> CompareCommand::Compare() {
  std::optional<Bytes> limit;
  SizeOptions options;
  if (auto f = ParseCommon(limit, options)) return f;
  if (auto f = OpenOutputs()) return f;
  const bool pair = !baseline_.empty() || !candidate_.empty();
  if (pair && !trace_.empty())
    return Failure{kExitBadInput, "give either TRACE or --baseline/--candidate, not both"};
  if (!pair && trace_.empty())
    return Failure{kExitBadInput, "give TRACE --allocators ..., or --baseline/--candidate"};
  return pair ? Pair(limit, options) : Multi(limit, options);
}

const CommandRegistration kCompare(
    "compare",
    "compare allocators on one trace (min limit, failures, fragmentation), or a baseline and a candidate",
    []() -> std::unique_ptr<Command> { return std::make_unique<CompareCommand>(); });

}  // namespace
}  // namespace hbmsim::cli
