// The runtime's one-sentence failures, read from the flat text so that a
// sentence wrapped over lines still reads.
#include "fmt/format.h"
#include "trace/oom_text/blocks.h"

namespace hbmsim::trace::oom_text {

bool AddSize(OomText& t, std::string name, std::string_view s) {
  std::optional<PrintedSize> size = ReadSize(s);
  if (!size) return false;
  t.figures.push_back(Figure{std::move(name), static_cast<double>(size->bytes), "B",
                             static_cast<double>(size->precision), false, size->text});
  return true;
}

bool AddRatio(OomText& t, std::string name, std::string_view s, std::string unit) {
  size_t i = 0;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.') && i < 24) ++i;
  if (i == 0 || i >= s.size() || s.substr(i, unit.size()) != unit) return false;
  const std::string number(s.substr(0, i));
  const size_t dot = number.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(number.size() - dot - 1);
  double precision = 0.5;
  for (int d = 0; d < decimals; ++d) precision /= 10;
  t.figures.push_back(Figure{std::move(name), std::strtod(number.c_str(), nullptr), std::move(unit),
                             precision, false, std::string(s.substr(0, i + 1))});
  return true;
}

void AddDerived(OomText& t, std::string name, double bytes, double precision, std::string how) {
  t.figures.push_back(Figure{std::move(name), bytes, "B", precision, true, std::move(how)});
}

namespace {

// Each occurrence of `anchor` in the flat text, with the text after it.
template <typename OnHit>
void ForEach(const LogLines& log, std::string_view anchor, OnHit on_hit) {
  const std::string_view flat = log.flat;
  size_t hits = 0;
  for (size_t at = flat.find(anchor); at != std::string_view::npos && hits < kMaxBlocksPerKind;
       at = flat.find(anchor, at + 1), ++hits) {
    on_hit(at, flat.substr(at + anchor.size()));
  }
}

// The first `key` within the next `window` characters of `s`, and the text after it.
std::optional<std::string_view> Near(std::string_view s, std::string_view key, size_t window = 400) {
  const size_t at = s.substr(0, window).find(key);
  if (at == std::string_view::npos) return std::nullopt;
  return s.substr(at + key.size());
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return s;
}

// A figure printed as plain bytes ("1073741824"), as BFC's stats print them.
void AddPlainBytes(OomText& t, std::string name, std::string_view s) {
  size_t n = 0;
  while (n < s.size() && n < 19 && s[n] >= '0' && s[n] <= '9') ++n;
  if (n == 0) return;
  const std::string digits(s.substr(0, n));
  t.figures.push_back(Figure{std::move(name), std::strtod(digits.c_str(), nullptr), "B", 0, false, digits});
}

}  // namespace

void ReadTpuAllocations(const LogLines& log, std::vector<OomText>& out) {
  ForEach(log, "Attempting to allocate ", [&](size_t at, std::string_view rest) {
    OomText t;
    t.kind = "tpu-allocation";
    t.line = log.LineOf(at);
    if (!AddSize(t, "requested", rest)) return;
    if (auto free = Near(rest, "There are ")) {
      AddSize(t, "free", *free);
    } else {
      t.missing.push_back("the free memory (\"There are Y free.\")");
    }
    if (auto largest = Near(rest, "largest contiguous region of free memory is ")) {
      AddSize(t, "largest_free", *largest);
    }
    if (auto space = Near(rest, "; (", 600))
      t.figures.push_back(
          Figure{"memory_space", 0, "", 0, false, std::string(space->substr(0, space->find(')')))});
    Conclude(t);
    out.push_back(std::move(t));
  });
}

void ReadAllocatableFailures(const LogLines& log, std::vector<OomText>& out) {
  ForEach(log, "Could not allocate ", [&](size_t at, std::string_view rest) {
    OomText t;
    t.kind = "tpu-allocatable";
    t.line = log.LineOf(at);
    if (!AddSize(t, "requested", rest)) return;
    if (auto space = Near(rest, " in memory ", 80)) {
      t.figures.push_back(
          Figure{"memory_space", 0, "", 0, false, std::string(space->substr(0, space->find(';')))});
    }
    if (auto semi = Near(rest, "; ", 120)) {
      std::optional<PrintedSize> allocatable = ReadSize(*semi);
      if (allocatable && semi->substr(allocatable->length).starts_with(" allocatable")) {
        AddSize(t, "largest_free", *semi);
        if (auto avail = Near(semi->substr(allocatable->length), ", ", 40)) AddSize(t, "free", *avail);
      }
    }
    if (t.Find("free") == nullptr) t.missing.push_back("the allocatable and available bytes");
    Conclude(t);
    out.push_back(std::move(t));
  });
}

void ReadReservations(const LogLines& log, std::vector<OomText>& out) {
  ForEach(log, "Attempting to reserve ", [&](size_t at, std::string_view rest) {
    OomText t;
    t.kind = "program-reservation";
    t.line = log.LineOf(at);
    if (!AddSize(t, "requested", rest)) return;
    if (auto free = Near(rest, "There are ")) {
      std::optional<PrintedSize> f = ReadSize(*free);
      if (f) {
        AddSize(t, "free", *free);
        if (auto reserved = Near(free->substr(f->length), ", ", 20)) AddSize(t, "reserved", *reserved);
        if (auto reservable = Near(free->substr(f->length), "and ", 60))
          AddSize(t, "reservable", *reservable);
      }
    }
    ReadHbmLines(log, t.line, t);  // the block's lines start after the sentence's
    Conclude(t);
    out.push_back(std::move(t));
  });
}

void ReadCompileTimeReports(const LogLines& log, std::vector<OomText>& out) {
  ForEach(log, "Ran out of memory in memory space ", [&](size_t at, std::string_view rest) {
    OomText t;
    t.kind = "compile-time";
    t.line = log.LineOf(at);
    t.figures.push_back(Figure{"memory_space", 0, "", 0, false, std::string(rest.substr(0, rest.find('.')))});
    if (auto used = Near(rest, "Used ", 80)) {
      std::optional<PrintedSize> u = ReadSize(*used);
      if (u) {
        AddSize(t, "used", *used);
        if (auto of = Near(used->substr(u->length), " of ", 8)) AddSize(t, "capacity", *of);
      }
    }
    if (auto by = Near(rest, "Exceeded ", 200)) {
      if (auto size = Near(*by, " by ", 40)) AddSize(t, "exceeded_by", *size);
    }
    ReadHbmLines(log, t.line, t);
    Conclude(t);
    out.push_back(std::move(t));
  });
}

void ReadBareRequests(const LogLines& log, std::vector<OomText>& out) {
  // JAX on GPU: "Out of memory while trying to allocate N bytes." alone (with BufferAssignment's
  // debugging after it, ReadBufferAssignments reads it), and PjRt's "Failed to allocate request for
  // 1.00GiB (1073741824B) on device ordinal 0".
  ForEach(log, "Out of memory while trying to allocate ", [&](size_t at, std::string_view rest) {
    if (Near(rest, "BufferAssignment OOM Debugging", 200)) return;
    OomText t;
    t.kind = "allocation-request";
    t.line = log.LineOf(at);
    if (!AddSize(t, "requested", rest)) return;
    Conclude(t);
    out.push_back(std::move(t));
  });
  ForEach(log, "Failed to allocate request for ", [&](size_t at, std::string_view rest) {
    OomText t;
    t.kind = "allocation-request";
    t.line = log.LineOf(at);
    if (!AddSize(t, "requested", rest)) return;
    if (auto exact = Near(rest, " (", 30)) {
      std::string_view digits = *exact;
      size_t n = 0;
      while (n < digits.size() && n < 19 && digits[n] >= '0' && digits[n] <= '9') ++n;
      if (n > 0 && digits.substr(n).starts_with("B)")) {
        t.figures.back().value = std::strtod(std::string(digits.substr(0, n)).c_str(), nullptr);
        t.figures.back().precision = 0;
        t.figures.back().text += " (" + std::string(digits.substr(0, n + 2));
      }
    }
    if (auto ordinal = Near(rest, "on device ordinal ", 60)) {
      t.figures.push_back(Figure{"device_ordinal", 0, "", 0, false,
                                 std::string(ordinal->substr(0, ordinal->find_first_not_of("0123456789")))});
    }
    Conclude(t);
    out.push_back(std::move(t));
  });
}

void ReadBfcHeaders(const LogLines& log, std::vector<OomText>& out) {
  ForEach(log, " ran out of memory trying to allocate ", [&](size_t at, std::string_view rest) {
    OomText t;
    t.kind = "bfc-header";
    t.line = log.LineOf(at);
    const size_t open = log.flat.rfind("Allocator (", at);
    if (open != std::string::npos && at - open < 80) {
      t.figures.push_back(Figure{"allocator", 0, "", 0, false, log.flat.substr(open + 11, at - open - 12)});
    }
    if (!AddSize(t, "requested", rest)) return;
    if (auto rounded = Near(rest, "(rounded to ", 40)) AddPlainBytes(t, "rounded", *rounded);
    // TensorFlow's stats block, when the paste kept it: "Limit: N" and "InUse: N" in bytes.
    if (auto limit = Near(rest, "Limit:", 6000)) AddPlainBytes(t, "limit", TrimSpaces(*limit));
    if (auto in_use = Near(rest, "InUse:", 6000)) AddPlainBytes(t, "in_use", TrimSpaces(*in_use));
    Conclude(t);
    out.push_back(std::move(t));
  });
}

}  // namespace hbmsim::trace::oom_text
