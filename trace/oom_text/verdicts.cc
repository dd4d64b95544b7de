// The verdict of each block from the figures it shows, the figures derived
// from them, and what would fit. A comparison closer than the printed
// precision decides nothing ("undetermined"), never a guess.
#include <algorithm>
#include <cmath>

#include "fmt/format.h"
#include "trace/core/human_bytes.h"
#include "trace/oom_text/blocks.h"

namespace hbmsim::trace::oom_text {
namespace {

std::string Human(double bytes) { return HumanReadableNumBytes(static_cast<int64_t>(std::llround(bytes))); }
// A seen figure as printed, a derived one in TensorFlow's units.
// An exact size printed beside its rounded one ("6.08G (   6,532,939,776 bytes)") is said as the rounded one.
std::string Say(const Figure& f) { return f.derived ? Human(f.value) : f.text.substr(0, f.text.find(" (")); }

// a > b whatever the rounding of either.
bool Greater(const Figure& a, const Figure& b) { return a.value - a.precision > b.value + b.precision; }
bool AtMost(const Figure& a, const Figure& b) { return a.value + a.precision <= b.value - b.precision; }

const Figure& Derive(OomText& t, std::string name, const Figure& a, const Figure& b, std::string how) {
  AddDerived(t, std::move(name), a.value - b.value, a.precision + b.precision, std::move(how));
  return t.figures.back();
}

// A request against free memory and the largest free region (the runtime's two failures, BFC's header).
void ConcludeRequest(OomText& t, const Figure& req, const Figure* free, const Figure* largest) {
  if (free == nullptr) {
    t.verdict = "undetermined";
    t.why = fmt::format(
        "{} was asked for; the text shows no free memory, so oom and fragmentation cannot be told "
        "apart",
        Say(req));
    return;
  }
  if (Greater(req, *free)) {
    t.verdict = "oom";
    const Figure& s = Derive(t, "shortfall", req, *free, "requested - free");
    t.why = fmt::format("{} was asked for and only {} was free: no arrangement of the free memory holds it",
                        Say(req), Say(*free));
    t.would_fit.push_back(
        fmt::format("free at least {} of live buffers (or ask for that much less): only then "
                    "can the request fit",
                    Say(s)));
    return;
  }
  if (!AtMost(req, *free)) {
    t.verdict = "undetermined";
    t.why =
        fmt::format("{} asked, {} free: too close to tell at the printed precision", Say(req), Say(*free));
    return;
  }
  t.verdict = "fragmentation";
  if (largest == nullptr) {
    t.why = fmt::format(
        "{} was free, enough for {}, but no free region held it (the text does not give the largest)",
        Say(*free), Say(req));
    return;
  }
  const Figure& s = Derive(t, "shortfall", req, *largest, "requested - largest_free");
  Derive(t, "free_outside_largest", *free, *largest, "free - largest_free");
  t.why = fmt::format("{} was free, enough for {}, but the largest contiguous region was {}: {} short",
                      Say(*free), Say(req), Say(*largest), Say(s));
  t.would_fit.push_back(fmt::format("a request of at most {} fits as the memory is", Say(*largest)));
  t.would_fit.push_back(
      fmt::format("for {}, {} more must join the largest region: free the buffers beside it, or "
                  "allocate the long-lived buffers first so they do not cut the free memory",
                  Say(req), Say(s)));
}

void ConcludeBufferAssignment(OomText& t) {
  const Figure* req = t.Find("requested");
  t.verdict = "undetermined";
  t.why = fmt::format(
      "the runtime could not allocate {} for the compiled program's buffers; the text shows no free "
      "memory, so oom and fragmentation cannot be told apart",
      req != nullptr ? Say(*req) : std::string("a buffer"));
  const Figure* total = t.Find("total_allocation");
  const Figure* params = t.Find("parameter_allocation");
  const Figure* outs = t.Find("maybe_live_out_allocation");
  const Figure* temp = t.Find("preallocated_temp_allocation");
  if (total == nullptr) {
    t.missing.push_back("the BufferAssignment stats (parameter, maybe_live_out, temp, total allocation)");
  } else {
    auto share = [&](const Figure* f) {
      return f == nullptr
                 ? std::string("not shown")
                 : fmt::format("{} ({:.0f}%)", Say(*f), total->value > 0 ? 100 * f->value / total->value : 0);
    };
    t.would_fit.push_back(fmt::format("the program needs {}: parameters {}, outputs {}, temp {}", Say(*total),
                                      share(params), share(outs), share(temp)));
    if (params != nullptr && outs != nullptr && params->value > 0 && outs->value > 0) {
      const Figure& smaller = params->value < outs->value ? *params : *outs;
      AddDerived(t, "donatable", smaller.value, smaller.precision, "min(parameter, maybe_live_out)");
      t.would_fit.push_back(
          fmt::format("donating the parameters (jax.jit donate_argnums) lets the outputs reuse "
                      "their memory: up to {} less",
                      Human(std::min(params->value, outs->value))));
    }
    if (temp != nullptr && outs != nullptr && params != nullptr &&
        temp->value > std::max(params->value, outs->value)) {
      t.would_fit.push_back(
          "temp is the largest part: rematerialization (jax.checkpoint) or a smaller batch shrinks it");
    }
  }
  if (req != nullptr)
    t.would_fit.push_back(fmt::format("the device must have {} free in one piece", Say(*req)));
  if (t.allocations.empty()) t.missing.push_back("the peak buffers");
  // The failing request is often one peak buffer exactly: its shape's bytes say which.
  std::vector<std::string> matching;
  for (const ProgramAllocation& a : t.allocations) {
    const std::optional<int64_t> bytes = ShapeBytes(a.shape);
    if (req == nullptr || req->precision > 0 || !bytes || static_cast<double>(*bytes) != req->value) continue;
    matching.push_back(fmt::format("{} ({}{})", a.index, a.shape, a.op.empty() ? "" : ", " + a.op));
  }
  if (!matching.empty()) {
    t.would_fit.push_back(fmt::format("the failing request is exactly the size of peak buffer {}",
                                      fmt::join(matching, " and of ")));
  }
}

// What freeing the largest program allocation, or only its padding, would leave.
void LargestAllocationEffects(OomText& t, const Figure& used, const Figure& capacity) {
  if (t.allocations.empty() || !t.allocations.front().size) return;
  const ProgramAllocation& a = t.allocations.front();
  auto verdict = [&](double left, double precision) {
    return left + precision <= capacity.value - capacity.precision
               ? std::string("fits")
               : fmt::format("still {} over", Human(left - capacity.value));
  };
  const double without = used.value - a.size->value;
  AddDerived(t, "used_without_largest", without, used.precision + a.size->precision,
             "used - largest allocation size");
  t.would_fit.push_back(fmt::format("without the largest program allocation ({}{}): {} of {}, {}",
                                    Say(*a.size), a.op.empty() ? "" : ", " + a.op, Human(without),
                                    Say(capacity), verdict(without, used.precision + a.size->precision)));
  if (a.padding) {
    const double unpadded = used.value - a.padding->value;
    AddDerived(t, "used_without_its_padding", unpadded, used.precision + a.padding->precision,
               "used - its extra memory due to padding");
    t.would_fit.push_back(fmt::format(
        "with its padding dropped ({}{}, e.g. a layout whose minor dimension fills the "
        "(8,128) tile): {} of {}, {}",
        Say(*a.padding), a.expansion.empty() ? "" : ", " + a.expansion + " expansion", Human(unpadded),
        Say(capacity), verdict(unpadded, used.precision + a.padding->precision)));
  }
}

}  // namespace

namespace {

void ConcludeCompileTime(OomText& t) {
  const Figure* used = t.Find("used");
  const Figure* capacity = t.Find("capacity");
  t.verdict = "program does not fit";
  if (used == nullptr || capacity == nullptr) {
    t.why = "XLA could not fit the program in the memory space (the text is cut before its usage figures)";
    t.missing.push_back("\"Used X of Y hbm\"");
    return;
  }
  const Figure& over = Derive(t, "over_capacity", *used, *capacity, "used - capacity");
  t.why = fmt::format(
      "the compiled program uses {} of the {} memory space: {} over, decided at compile time, "
      "before anything ran",
      Say(*used), Say(*capacity), Say(over));
  if (const Figure* padded = t.Find("hlo_temp_padded"); padded != nullptr) {
    if (const Figure* unpadded = t.Find("hlo_temp_unpadded"); unpadded != nullptr) {
      Derive(t, "hlo_temp_padding", *padded, *unpadded, "hlo_temp_padded - hlo_temp_unpadded");
    }
  }
  if (const Figure* by = t.Find("exceeded_by")) {
    t.would_fit.push_back(
        fmt::format("the program must shrink by {} (smaller batch or model shards, rematerialization, "
                    "less padding) or run on a device with that much more memory",
                    Say(*by)));
  }
  LargestAllocationEffects(t, *used, *capacity);
  if (t.Find("program_requirement") == nullptr)
    t.missing.push_back("the program's requirement (\"Program hbm requirement\")");
  if (t.allocations.empty()) t.missing.push_back("the largest program allocations");
}

void ConcludeReservation(OomText& t) {
  const Figure* req = t.Find("requested");
  const Figure* free = t.Find("free");
  const Figure* reservable = t.Find("reservable");
  t.verdict = "program does not fit";
  if (free == nullptr || reservable == nullptr) {
    t.why = fmt::format("the runtime could not reserve {} at the bottom of memory for a program", Say(*req));
    t.missing.push_back("the free, reserved and reservable bytes");
  } else if (AtMost(*req, *free)) {
    const Figure& s = Derive(t, "shortfall", *req, *reservable, "requested - reservable");
    t.why = fmt::format(
        "{} was free, enough for the program's {}, but only {} of it was reservable (right above the "
        "programs, at the bottom of memory): live buffers sit where the program must go",
        Say(*free), Say(*req), Say(*reservable));
    t.would_fit.push_back(
        fmt::format("{} more must be reservable: free the buffers just above the programs, or load "
                    "the program before allocating them",
                    Say(s)));
  } else {
    const Figure& s = Derive(t, "shortfall", *req, *free, "requested - free");
    t.why = fmt::format(
        "the program needs {} and only {} was free: {} short even if all of it were at the bottom", Say(*req),
        Say(*free), Say(s));
    t.would_fit.push_back(
        fmt::format("free at least {} of live buffers, or shrink the program by that much", Say(s)));
  }
  const Figure* capacity = t.Find("hbm_capacity");
  const Figure* top = t.Find("top_of_memory_reserved");
  const Figure* allocated_now = t.Find("currently_allocated");
  const Figure* need = t.Find("program_requirement_at_reservation");
  if (capacity != nullptr && top != nullptr && allocated_now != nullptr && need != nullptr) {
    AddDerived(
        t, "available_after_request_computed",
        capacity->value - top->value - allocated_now->value - need->value,
        capacity->precision + top->precision + allocated_now->precision + need->precision,
        "hbm_capacity - top_of_memory_reserved - currently_allocated - program_requirement_at_reservation");
  }
  if (const Figure* allocated = t.Find("currently_allocated")) {
    t.would_fit.push_back(
        fmt::format("the heap held {} of live buffers when the program was loaded", Say(*allocated)));
  }
  if (const Figure* padded = t.Find("hlo_temp_padded"); padded != nullptr) {
    if (const Figure* unpadded = t.Find("hlo_temp_unpadded"); unpadded != nullptr) {
      const Figure& pad =
          Derive(t, "hlo_temp_padding", *padded, *unpadded, "hlo_temp_padded - hlo_temp_unpadded");
      t.would_fit.push_back(fmt::format("the program's HLO temp is {} padded from {} unpadded: {} of padding",
                                        Say(*padded), Say(*unpadded), Say(pad)));
    }
  }
  if (t.Find("hbm_capacity") == nullptr)
    t.missing.push_back("the HBM capacity block (capacity, top-of-memory reserved, currently allocated)");
  if (t.Find("program_requirement") == nullptr)
    t.missing.push_back("the program's requirement (\"Program hbm requirement\")");
}

void ConcludeStats(OomText& t) {
  t.verdict = "no failure shown";
  const Figure* in_use = t.Find("in_use");
  const Figure* limit = t.Find("limit");
  t.why = "allocator statistics only: they say what was held, not which request failed";
  if (in_use != nullptr && limit != nullptr) {
    const Figure& free = Derive(t, "free_under_limit", *limit, *in_use, "limit - in_use");
    t.why = fmt::format("allocator statistics only: {} in use of a {} limit, {} free under it", Say(*in_use),
                        Say(*limit), Say(free));
  }
  const Figure* reserved = t.Find("reserved");
  if (reserved != nullptr && in_use != nullptr) {
    Derive(t, "reserved_not_in_use", *reserved, *in_use, "reserved - in_use");
  }
  if (const Figure* reservable = t.Find("reservable_limit"); reservable != nullptr && reserved != nullptr) {
    const Figure& room =
        Derive(t, "reservable_headroom", *reservable, *reserved, "reservable_limit - reserved");
    t.would_fit.push_back(fmt::format("{} more can be reserved before the reservable limit", Say(room)));
  }
  if (const Figure* largest = t.Find("largest_free")) {
    t.would_fit.push_back(
        fmt::format("a request of at most {} fits in the largest free block", Say(*largest)));
  }
}

}  // namespace

void Conclude(OomText& t) {
  const Figure* req = t.Find("requested");
  if (t.kind == "tpu-allocation" || t.kind == "tpu-allocatable") {
    ConcludeRequest(t, *req, t.Find("free"), t.Find("largest_free"));
  } else if (t.kind == "bfc-header") {
    const Figure* limit = t.Find("limit");
    const Figure* in_use = t.Find("in_use");
    const Figure* asked = t.Find("rounded") != nullptr ? t.Find("rounded") : req;
    const Figure* free = nullptr;
    if (limit != nullptr && in_use != nullptr) free = &Derive(t, "free", *limit, *in_use, "limit - in_use");
    if (free == nullptr) t.missing.push_back("the chunk listing and Stats that BFC prints after this line");
    const Figure asked_copy = *asked;
    const std::optional<Figure> free_copy = free != nullptr ? std::optional<Figure>(*free) : std::nullopt;
    ConcludeRequest(t, asked_copy, free_copy ? &*free_copy : nullptr, nullptr);
  } else if (t.kind == "allocation-request") {
    ConcludeRequest(t, *req, nullptr, nullptr);
    t.missing.push_back(
        "the free memory and the largest free block (with TF_CPP_MIN_LOG_LEVEL=0, XLA's GPU "
        "client prints BFC's dump, which hbmsim diagnose reads)");
  } else if (t.kind == "buffer-assignment") {
    ConcludeBufferAssignment(t);
  } else if (t.kind == "program-reservation") {
    ConcludeReservation(t);
  } else if (t.kind == "compile-time") {
    ConcludeCompileTime(t);
  } else if (t.kind == "allocator-stats") {
    ConcludeStats(t);
  }
  for (ProgramAllocation& a : t.allocations) {
    a.shape_bytes = ShapeBytes(a.shape);
    a.cut = a.op.empty() && a.shape.empty();
    if (a.cut)
      t.missing.push_back(fmt::format("allocation {} shows only its size (the text ends there)", a.index));
  }
}

}  // namespace hbmsim::trace::oom_text
