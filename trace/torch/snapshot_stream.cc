#include "trace/torch/snapshot_stream.h"

#include <sys/mman.h>

#include <algorithm>
#include <new>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "fmt/format.h"

static_assert(std::is_trivially_copyable_v<hbmsim::trace::TraceEntry>);

namespace hbmsim::trace {
namespace {

// Stands for the list's own path in a streamed entry's error until the
// list's place under device_traces is known.
constexpr std::string_view kHole = "\x01";

struct ActionName {
  std::string_view name;
  TraceAction action;
};
constexpr ActionName kActions[] = {
    {"alloc", TraceAction::kAlloc},
    {"free_requested", TraceAction::kFreeRequested},
    {"free_completed", TraceAction::kFreeCompleted},
    {"free", TraceAction::kFree},
    {"segment_alloc", TraceAction::kSegmentAlloc},
    {"segment_free", TraceAction::kSegmentFree},
    {"segment_map", TraceAction::kSegmentMap},
    {"segment_unmap", TraceAction::kSegmentUnmap},
    {"snapshot", TraceAction::kSnapshot},
    {"oom", TraceAction::kOom},
};

void ClassifyAction(std::string_view name, Snapshot& snap, TraceEntry& e) {
  for (const ActionName& a : kActions) {
    if (a.name == name) {
      e.action = a.action;
      return;
    }
  }
  e.action = TraceAction::kOther;
  auto& names = snap.other_action_names;
  const auto it = std::find(names.begin(), names.end(), name);
  e.other_action = static_cast<uint16_t>(it - names.begin());
  if (it == names.end()) names.emplace_back(name);
}

}  // namespace

bool ParseTraceEntry(FieldReader& r, ContextReader& c, PickleValue d, const ValuePath& at, Snapshot& snap,
                     TraceEntry& e, GenerationClues& clues) {
  if (!r.Spend(1, at) || !r.ExpectKind(d, PickleKind::kDict, at)) return false;
  std::string_view action;
  if (!r.Str(d, "action", at, true, action)) return false;
  ClassifyAction(action, snap, e);
  if (snap.other_action_names.size() > UINT16_MAX)
    return r.Fail(at, "more than 65535 distinct unknown actions");
  const bool is_oom = e.action == TraceAction::kOom;
  const bool known = e.action != TraceAction::kOther;
  const bool needs_addr = known && !is_oom && e.action != TraceAction::kSnapshot;
  uint64_t addr = 0, size = 0, stream = 0, device_free = 0, time_us = 0;
  if (!r.U64(d, "addr", at, needs_addr, addr) || !r.U64(d, "size", at, known, size) ||
      !r.U64(d, "stream", at, false, stream) || !r.U64(d, "device_free", at, is_oom, device_free)) {
    return false;
  }
  if (d.Find("time_us")) {
    if (!r.U64(d, "time_us", at, true, time_us)) return false;
    e.has_time = true;
    e.time = time_us;
    clues.time_us = true;
  }
  if (d.Find("user_metadata")) clues.user_metadata = true;
  if (!c.Entry(d, at, e.context)) return false;
  e.addr = Offset(addr);
  e.size = Bytes(size);
  e.stream = StreamId(stream);
  e.device_free = Bytes(device_free);
  return true;
}

namespace {

// A trace's first batch: every item a dict whose `action` is a str.
bool LooksLikeEntries(const PickleTree& tree, const PickleNodeId* items, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const PickleValue v(&tree, items[i]);
    if (!v.is_dict()) return false;
    const std::optional<PickleValue> action = v.Find("action");
    if (!action || !action->is_string()) return false;
  }
  return true;
}

}  // namespace

TraceStream::Chunk::Chunk() {
  void* p = mmap(nullptr, kChunk * sizeof(TraceEntry), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data = static_cast<TraceEntry*>(p);
}

TraceStream::Chunk::~Chunk() {
  if (data != nullptr) munmap(data, kChunk * sizeof(TraceEntry));
}

TraceStream::TraceStream(std::string_view file_name, Snapshot& snap)
    : snap_(snap),
      reader_(file_name, std::numeric_limits<uint64_t>::max()),
      context_(reader_, snap.context, snap.entry_contexts) {}

bool TraceStream::Take(const PickleTree& tree, PickleNodeId list, const PickleNodeId* items, size_t n) {
  auto it = index_.find(list);
  if (it == index_.end()) {
    // A list the tree already holds items of stays in the tree.
    if (PickleValue(&tree, list).size() != 0 || !LooksLikeEntries(tree, items, n)) return false;
    it = index_.emplace(list, lists_.size()).first;
    lists_.emplace_back();
  }
  List& l = lists_[it->second];
  context_.Track();
  const ValuePath hole{nullptr, kHole, -1};
  for (size_t i = 0; i < n && l.error.ok(); ++i) {
    if (l.chunks.empty() || l.chunks.back().size == kChunk) l.chunks.emplace_back();
    TraceEntry e;
    if (!ParseTraceEntry(reader_, context_, PickleValue(&tree, items[i]), hole.Index(l.count), snap_, e,
                         clues_)) {
      l.error = reader_.TakeStatus();
      break;
    }
    Chunk& c = l.chunks.back();
    new (c.data + c.size++) TraceEntry(e);
    ++l.count;
  }
  return true;
}

void TraceStream::Dropped(PickleNodeId first) { context_.Forget(first); }

bool TraceStream::MoveTo(PickleNodeId list, FieldReader& r, const ValuePath& at, std::vector<TraceEntry>& out) {
  List& l = lists_[index_.at(list)];
  l.reached = true;
  // The tree walk spends one per entry before reading it, the failing one too.
  const uint64_t visited = l.count + (l.error.ok() ? 0 : 1);
  for (uint64_t i = 0; i < visited; ++i) {
    if (!r.Spend(1, at.Index(i))) return false;
  }
  if (!l.error.ok()) {
    std::string message(l.error.message());
    if (const size_t hole = message.find(kHole); hole != std::string::npos) {
      message.replace(hole, kHole.size(), at.ToString());
    }
    return r.Fail(absl::InvalidArgumentError(message));
  }
  if (l.moved != nullptr) {  // the same list object under two devices
    out = *l.moved;
    return true;
  }
  out.reserve(l.count);
  for (Chunk& chunk : l.chunks) {
    out.insert(out.end(), chunk.data, chunk.data + chunk.size);
    Chunk gone(std::move(chunk));  // unmapped now: the peak is one copy plus a chunk
  }
  l.chunks.clear();
  l.moved = &out;
  return true;
}

bool TraceStream::AllMoved() const {
  return std::all_of(lists_.begin(), lists_.end(), [](const List& l) { return l.reached; });
}

namespace {

// Rebuilds a ContextTable in the order a walk of the model visits it.
class ContextOrder {
 public:
  explicit ContextOrder(const ContextTable& old) : old_(old) {}

  uint32_t List(uint32_t id) {
    if (id == 0) return 0;
    if (const auto it = lists_.find(id); it != lists_.end()) return it->second;
    std::vector<uint32_t> frames = old_.list(id);
    for (uint32_t& f : frames) {
      const auto [it, added] = frames_.try_emplace(f, 0);
      if (added) it->second = table_.AddFrame(old_.frame(f));
      f = it->second;
    }
    return lists_[id] = table_.AddList(std::move(frames));
  }
  uint32_t String(uint32_t id) { return id == 0 ? 0 : table_.AddString(old_.string(id)); }
  ContextTable& table() { return table_; }

 private:
  const ContextTable& old_;
  ContextTable table_;
  absl::flat_hash_map<uint32_t, uint32_t> lists_, frames_;
};

}  // namespace

// The tree walk reads segments and then traces, so their frames and lists
// are numbered in that order; the stream read the traces first. Renumbering
// in the walk's order (segment frames, each block's, then each entry's
// labels and frames) gives the ids the walk would have given.
void RestoreContextOrder(Snapshot& snap) {
  ContextOrder order(snap.context);
  for (SnapshotSegment& seg : snap.segments) {
    seg.frames = order.List(seg.frames);
    for (SnapshotBlock& b : seg.blocks) b.frames = order.List(b.frames);
  }
  std::vector<bool> done(snap.entry_contexts.size(), false);
  done[0] = true;  // the empty context
  for (const DeviceTrace& t : snap.device_traces) {
    for (const TraceEntry& e : t.entries) {
      if (done[e.context]) continue;
      done[e.context] = true;
      EventContext& c = snap.entry_contexts[e.context];
      c.category = order.String(c.category);
      c.user_metadata = order.String(c.user_metadata);
      c.compile_context = order.String(c.compile_context);
      c.frames = order.List(c.frames);
    }
  }
  order.table().annotations = std::move(snap.context.annotations);
  snap.context = std::move(order.table());
}

}  // namespace hbmsim::trace
