// ScaleJson: the --json of `hbmsim scale`. The keys the issue fixes come first
// (to, aligned_fraction, unexplained_allocations, allocations,
// peak_allocated_bytes, peak_reserved_bytes, verdict; largest_fitting and
// first_failing with --fit-limit), then the details.
#include "sim/scale/member_stream.h"
#include "sim/scale/scale_report.h"
#include "sim/whatif/whatif_common.h"

namespace hbmsim::sim::scale {
namespace {

using Json = nlohmann::ordered_json;

Json FailureJson(const ScaleRunResult& run) {
  if (!run.first_failure) return nullptr;
  const ScaleFailure& f = *run.first_failure;
  return Json{{"kind", std::string(run.Verdict())},
              {"event", f.event},
              {"requested", f.requested.value()},
              {"frame", f.frame}};
}

Json PeakFramesJson(const ScaleRunResult& run) {
  Json rows = Json::array();
  if (!run.at_peak) return rows;
  for (const MemoryGroup& g : run.at_peak->by_frame) {
    rows.push_back({{"frame", g.key}, {"bytes", g.bytes}, {"buffers", g.buffers}, {"share", g.share}});
  }
  return rows;
}

Json PredictionJson(const Prediction& p) {
  return Json{{"to", p.to},
              {"allocations", p.run.allocations},
              {"peak_allocated_bytes", p.run.peak_allocated.value()},
              {"peak_reserved_bytes", p.run.peak_reserved.value()},
              {"verdict", std::string(p.run.Verdict())},
              {"bytes_limit", p.limit.limit.value()},
              {"failures", p.run.failures},
              {"first_failure", FailureJson(p.run)}};
}

Json MembersJson(const ScaleModel& m) {
  Json out = Json::array();
  for (const auto& member : m.members) {
    out.push_back({{"value", member->value},
                   {"path", member->name},
                   {"allocations", member->allocs() - member->start_allocs},
                   {"start_state_allocations", member->start_allocs}});
  }
  return out;
}

Json FormsJson(const ScaleModel& m) {
  Json out = Json::object();
  const auto counts = m.FormCounts();
  for (size_t i = 0; i < kSizeForms.size(); ++i) out[std::string(SizeFormName(kSizeForms[i]))] = counts[i];
  return out;
}

Json FitLimitJson(const FitLimitResult& f, Json& top) {
  top["largest_fitting"] = f.largest_fitting ? Json(PredictionJson(*f.largest_fitting)) : Json(nullptr);
  top["first_failing"] = f.first_failing ? Json(PredictionJson(*f.first_failing)) : Json(nullptr);
  Json probes = Json::array();
  for (const FitProbe& p : f.probes) probes.push_back({{"value", p.n}, {"fits", p.fits}});
  return Json{{"bytes_limit", f.limit.value()},
              {"step", f.step},
              {"fits_above", f.fits_above ? Json(*f.fits_above) : Json(nullptr)},
              {"probes", probes}};
}

Json CheckJson(const std::vector<CheckRow>& rows) {
  Json out = Json::array();
  for (const CheckRow& r : rows) {
    out.push_back({{"value", r.value},
                   {"path", r.name},
                   {"predicted_allocations", r.predicted_allocations},
                   {"real_allocations", r.real_allocations},
                   {"compared_allocations", r.compared},
                   {"exact_allocations", r.exact},
                   {"exact_share", r.ExactShare()},
                   {"largest_size_error_bytes", r.largest_error_bytes},
                   {"wrong_size_frame", r.wrong_frame},
                   {"wrong_size_frame_allocations", r.wrong_frame_allocations},
                   {"real_only_allocations", r.real_only_allocations},
                   {"predicted_only_allocations", r.predicted_only_allocations},
                   {"predicted_iterations", r.predicted_iterations},
                   {"real_iterations", r.real_iterations},
                   {"predicted_peak_allocated_bytes", r.predicted_peak_allocated.value()},
                   {"real_peak_allocated_bytes", r.real_peak_allocated.value()},
                   {"peak_allocated_error", r.AllocatedError()},
                   {"predicted_peak_reserved_bytes", r.predicted_peak_reserved.value()},
                   {"real_peak_reserved_bytes", r.real_peak_reserved.value()},
                   {"peak_reserved_error", r.ReservedError()},
                   {"real_start_state_reserved_bytes", r.real_start_reserved.value()}});
  }
  return out;
}

}  // namespace

nlohmann::ordered_json ScaleJson(const ScaleReport& r) {
  const ScaleModel& m = *r.model;
  Json j;
  const Prediction* p = r.prediction;
  j["to"] = p ? Json(p->to) : Json(nullptr);
  j["aligned_fraction"] = m.AlignedFraction();
  j["unexplained_allocations"] = m.UnexplainedAllocs();
  j["allocations"] = p ? Json(p->run.allocations) : Json(nullptr);
  j["peak_allocated_bytes"] = p ? Json(p->run.peak_allocated.value()) : Json(nullptr);
  j["peak_reserved_bytes"] = p ? Json(p->run.peak_reserved.value()) : Json(nullptr);
  j["verdict"] = p ? Json(std::string(p->run.Verdict())) : Json(nullptr);
  Json fit_limit = r.fit_limit ? FitLimitJson(*r.fit_limit, j) : Json(nullptr);
  j["allocator"] = AllocatorJson(*r.config);
  j["recordings"] = MembersJson(m);
  j["template"] = m.templ().name;
  j["aligned_allocations"] = m.AlignedAllocs();
  j["template_allocations"] = m.allocs.size();
  Json notes = Json::array();
  for (std::string& n : AlignmentNotes(m)) notes.push_back(std::move(n));
  j["not_aligned"] = std::move(notes);
  j["forms"] = FormsJson(m);
  j["start_states_nested"] = m.start_states_nested;
  Json unexplained = Json::array();
  for (const UnexplainedGroup& g : UnexplainedGroups(m)) {
    Json sizes = Json::array();
    for (const auto& [value, bytes] : g.sizes) sizes.push_back({{"value", value}, {"bytes", bytes}});
    unexplained.push_back({{"frame", g.frame}, {"allocations", g.allocations}, {"first_sizes", sizes}});
  }
  j["unexplained"] = std::move(unexplained);
  if (p) {
    j["extrapolation_factor"] = ExtrapolationFactor(m, p->to);
    j["start_state_kept"] = p->predicted.start_state_kept;
    j["start_cache_carried"] = p->predicted.cache_carried;
    j["start_blocks_resized"] = p->predicted.start_blocks_resized;
    j["bytes_limit"] = p->limit.limit.value();
    j["first_failure"] = FailureJson(p->run);
    j["peak_by_frame"] = PeakFramesJson(p->run);
  }
  if (r.fit_limit) j["fit_limit"] = std::move(fit_limit);
  if (r.check) j["check"] = CheckJson(*r.check);
  return j;
}

}  // namespace hbmsim::sim::scale
