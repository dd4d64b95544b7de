// `hbmsim size TRACE --allocator A [--set K=V] [--resolution 256] [--jobs N]
// [--json OUT]`: the smallest bytes_limit at which the trace replays with no
// failed allocation (sim/whatif/size_search.h says how it is searched).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "sim/cli/command.h"
#include "sim/report/replay_report.h"
#include "sim/whatif/compact_trace.h"
#include "sim/whatif/size_search.h"
#include "sim/whatif/thread_pool.h"
#include "sim/whatif/whatif_common.h"
#include "trace/core/human_bytes.h"
#include "trace/core/numbers.h"
#include "trace/io/output_set.h"

namespace hbmsim::cli {
namespace {

struct Failure {
  int code;
  std::string message;
};

class SizeCommand : public Command {
 public:
  void Configure(CLI::App& app) override {
    app.add_option("TRACE", trace_, "the trace (any format replay reads)")->required();
    app.add_option("--allocator", allocator_, "a built-in policy or a YAML config")->required();
    app.add_option("--set", sets_, "KEY=VALUE: override one allocator option (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--resolution", resolution_, "the search's step in bytes (default 256; units allowed)");
    app.add_option("--jobs", jobs_,
                   "trials run in parallel (default: all cores); the output never depends on it");
    app.add_option("--json", json_, "write min_bytes_limit, peak_live_bytes, overhead, ... here");
  }
  int Run() override;

 private:
  std::optional<Failure> Size();
  std::string Text(const AllocatorConfig& config, const CompactTrace& trace, const SizeResult& r) const;
  nlohmann::ordered_json Json(const AllocatorConfig& config, const SizeResult& r, uint64_t resolution) const;

  std::string trace_;
  std::string allocator_;
  std::vector<std::string> sets_;
  std::string resolution_ = "256";
  int jobs_ = DefaultJobs();
  std::string json_;
  std::vector<std::string> notes_;  // said on stderr unless the run ends with exit 2 (one line then)
};

std::string Human(Bytes b) { return HumanReadableNumBytes(b); }

std::string SizeCommand::Text(const AllocatorConfig& config, const CompactTrace& trace,
                              const SizeResult& r) const {
  std::string out = "hbmsim size\n";
  out += fmt::format("  trace:            {}\n", trace_);
  out += fmt::format("  allocator:        {} ({})\n", config.policy->name, config.source);
  out += fmt::format("  options:          {}\n", EffectiveOptionsText(config));
  out += fmt::format("  peak live bytes:  {} ({})\n", r.peak_live_bytes.value(), Human(r.peak_live_bytes));
  out += fmt::format("  resolution:       {}\n", resolution_);
  out += fmt::format("  trials:           {} limits tried, plus one verifying replay\n", r.probes.size());
  if (!r.found) {
    out += "  min bytes_limit:  none: no limit up to 4EiB fits\n";
    return out;
  }
  out += fmt::format("  min bytes_limit:  {} ({})\n", r.min_bytes_limit.value(), Human(r.min_bytes_limit));
  out += fmt::format("  overhead:         {:.4f} ({:.2f}% over peak live)\n", r.overhead, 100 * r.overhead);
  out += fmt::format("  verified:         a full replay at {} fits all {} events\n",
                     r.min_bytes_limit.value(), trace.events.size());
  if (r.non_monotonic) {
    out += fmt::format(
        "  WARNING: not monotonic: {} fits but the larger limit {} failed; {} allocator is not monotonic in "
        "its "
        "limit, so a limit above the minimum may still fail\n",
        r.min_bytes_limit.value(), r.non_monotonic->value(), config.policy->name);
  } else {
    out += "  monotonic:        no larger limit that was tried failed\n";
  }
  return out;
}

nlohmann::ordered_json SizeCommand::Json(const AllocatorConfig& config, const SizeResult& r,
                                         uint64_t resolution) const {
  nlohmann::ordered_json j;
  j["trace"] = trace_;
  j["allocator"] = AllocatorJson(config);
  j["min_bytes_limit"] =
      r.found ? nlohmann::ordered_json(r.min_bytes_limit.value()) : nlohmann::ordered_json();
  j["peak_live_bytes"] = r.peak_live_bytes.value();
  j["overhead"] = r.found ? nlohmann::ordered_json(r.overhead) : nlohmann::ordered_json();
  j["resolution"] = resolution;
  j["non_monotonic"] =
      r.non_monotonic ? nlohmann::ordered_json(r.non_monotonic->value()) : nlohmann::ordered_json();
  nlohmann::ordered_json probes = nlohmann::ordered_json::array();
  for (const SizeProbe& p : r.probes) probes.push_back({{"bytes_limit", p.limit.value()}, {"fits", p.ok}});
  j["trials"] = probes;
  return j;
}

std::optional<Failure> SizeCommand::Size() {
  absl::StatusOr<Bytes> resolution = ParseBytes(resolution_, /*allow_more_units=*/true);
  if (!resolution.ok()) {
    return Failure{kExitBadInput, fmt::format("--resolution {}: {}", resolution_,
                                              std::string(resolution.status().message()))};
  }
  if (resolution->is_zero()) return Failure{kExitBadInput, "--resolution 0: must be at least 1 byte"};
  if (jobs_ < 1) return Failure{kExitBadInput, fmt::format("--jobs {}: must be at least 1", jobs_)};
  absl::StatusOr<AllocatorConfig> config = ResolveWithSets(allocator_, sets_);
  if (!config.ok()) return Failure{kExitBadInput, std::string(config.status().message())};
  // Checked against the inputs and created before the search: a bad path costs no trial.
  absl::StatusOr<io::OutputSet> outputs =
      io::OutputSet::Open({{"TRACE", trace_}, {"--allocator", allocator_}}, {{"--json", json_}});
  if (!outputs.ok()) return Failure{kExitBadInput, std::string(outputs.status().message())};
  absl::StatusOr<CompactTrace> trace = LoadCompactTrace(trace_, std::nullopt);
  if (!trace.ok()) return Failure{kExitBadInput, std::string(trace.status().message())};
  notes_.push_back(fmt::format("read {} once into memory: {} events in {} bytes (tags and marks dropped)",
                               trace_, trace->events.size(), trace->MemoryBytes()));
  if (config->policy->name == "offline") {
    notes_.push_back("offline makes two passes over the trace: it plans every buffer, then replays");
  }
  AllocatorMaker maker = MakeAllocatorMaker(*config, *trace);
  absl::StatusOr<SizeResult> r = FindMinLimit(*trace, maker, SizeOptions{resolution->value(), jobs_});
  if (!r.ok()) {
    const bool internal = r.status().code() == absl::StatusCode::kInternal;
    return Failure{
        internal ? kExitInternal : kExitBadInput,
        fmt::format("{}{}", internal ? "internal error: " : "", std::string(r.status().message()))};
  }
  const std::string text = Text(*config, *trace, *r);
  if (absl::Status s = io::WriteStdout(text); !s.ok()) return Failure{kExitBadInput, std::string(s.message())};
  if (io::OutputFile* out = outputs->Get("--json")) {
    if (absl::Status s = out->Write(Json(*config, *r, resolution->value()).dump(2) + "\n"); !s.ok()) {
      return Failure{kExitBadInput, std::string(io::WithRole("--json", s).message())};
    }
  }
  if (absl::Status s = outputs->CommitAll(); !s.ok()) return Failure{kExitBadInput, std::string(s.message())};
  if (!r->found) return Failure{kExitFailures, "no limit up to 4EiB fits this trace"};
  return std::nullopt;
}

int SizeCommand::Run() {
  std::optional<Failure> f = Size();
  // Notes are said unless the run is a usage or input error: that is one line.
  if (!f || f->code != kExitBadInput) {
    for (const std::string& note : notes_) fmt::print(stderr, "hbmsim size: {}\n", note);
  }
  if (!f) return kExitOk;
  fmt::print(stderr, "hbmsim size: {}\n", OneLineMessage(f->message));
  return f->code;
}

const CommandRegistration kSize(
    "size", "the smallest bytes_limit at which a trace replays with no failure, under one allocator",
    []() -> std::unique_ptr<Command> { return std::make_unique<SizeCommand>(); });

}  // namespace
}  // namespace hbmsim::cli
