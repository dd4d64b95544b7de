// Segments, blocks and trace entries: the value tree to the Snapshot model.
#include <algorithm>
#include <utility>

#include "fmt/format.h"
#include "trace/pickle/unpickler.h"
#include "trace/torch/fields.h"
#include "trace/torch/settings_parse.h"
#include "trace/torch/snapshot.h"
#include "trace/torch/snapshot_context.h"
#include "trace/torch/snapshot_stream.h"

namespace hbmsim::trace {
namespace {

std::optional<BlockState> ParseBlockState(std::string_view s) {
  if (s == "active_allocated") return BlockState::kInUse;
  // The code emits active_pending_free; the docstrings say active_awaiting_free.
  if (s == "active_pending_free" || s == "active_awaiting_free") return BlockState::kPendingFree;
  if (s == "inactive") return BlockState::kFree;
  return std::nullopt;
}

// gen1 blocks list their allocations in `history`, newest first: {addr,
// real_size, frames}. The request is history[0].real_size (what MemoryViz reads).
bool ParseHistory(FieldReader& r, PickleValue block, const ValuePath& at, uint64_t& requested,
                  std::vector<HistoryAlloc>& out) {
  const std::optional<PickleValue> history = block.Find("history");
  if (!history) return true;
  const ValuePath hpath = at.Key("history");
  if (!r.ExpectSequence(*history, hpath)) return false;
  for (size_t i = 0; i < history->size(); ++i) {
    const PickleValue h = history->at(i);
    const ValuePath ipath = hpath.Index(i);
    uint64_t addr = 0, real_size = 0;
    if (!r.Spend(1, ipath) || !r.ExpectKind(h, PickleKind::kDict, ipath) ||
        !r.U64(h, "addr", ipath, false, addr) || !r.U64(h, "real_size", ipath, false, real_size)) {
      return false;
    }
    if (i == 0) requested = real_size;
    // An entry without addr still gives the request; it has no address to compare.
    if (h.Find("addr")) out.push_back(HistoryAlloc{Offset(addr), Bytes(real_size)});
  }
  return true;
}

// The stack of the allocation: `frames`, or gen1's history[0].frames.
bool BlockFrames(ContextReader& c, PickleValue b, const ValuePath& at, uint32_t& out) {
  if (b.Find("frames")) return c.Frames(b, "frames", at, out);
  const std::optional<PickleValue> history = b.Find("history");
  if (!history || !history->is_sequence() || history->size() == 0 || !history->at(0).is_dict()) return true;
  return c.Frames(history->at(0), "frames", at.Key("history").Index(0), out);
}

bool ParseBlock(FieldReader& r, ContextReader& c, PickleValue b, const ValuePath& at, Offset next_address,
                SnapshotBlock& out, GenerationClues& clues) {
  if (!r.Spend(1, at) || !r.ExpectKind(b, PickleKind::kDict, at)) return false;
  uint64_t size = 0, address = next_address.value(), requested = 0;
  std::string_view state;
  if (!r.U64(b, "size", at, true, size) || !r.U64(b, "address", at, false, address) ||
      !r.Str(b, "state", at, true, state)) {
    return false;
  }
  if (b.Find("history")) clues.block_history = true;
  std::vector<HistoryAlloc> history;
  uint64_t from_history = 0;
  if (!ParseHistory(r, b, at, from_history, history)) return false;
  if (b.Find("requested_size")) {
    if (!r.U64(b, "requested_size", at, false, requested)) return false;
  } else {
    requested = from_history;
  }
  const std::optional<BlockState> s = ParseBlockState(state);
  if (!s) return r.Fail(at.Key("state"), fmt::format("unknown block state '{}'", state));
  out = SnapshotBlock{Offset(address), Bytes(size), Bytes(requested), *s, std::move(history)};
  return BlockFrames(c, b, at, out.frames);
}

bool ParsePoolId(FieldReader& r, PickleValue seg, const ValuePath& at, std::pair<int64_t, int64_t>& out) {
  const std::optional<PickleValue> pool = seg.Find("segment_pool_id");
  if (!pool) return true;
  const ValuePath p = at.Key("segment_pool_id");
  if (!pool->is_sequence() || pool->size() != 2) return r.Fail(p, "expected a pair of ints");
  const std::optional<int64_t> a = pool->at(0).AsInt64(), b = pool->at(1).AsInt64();
  if (!a || !b) return r.Fail(p, "expected a pair of ints");
  out = {*a, *b};
  return true;
}

// Sizes a pre-2.0 segment leaves out are the sums over its blocks.
void FillMissingSegmentSizes(PickleValue seg, SnapshotSegment& s) {
  Bytes allocated, active, requested;
  for (const SnapshotBlock& b : s.blocks) {
    if (b.state == BlockState::kFree) continue;
    active += b.size;
    requested += b.requested_size;
    if (b.state == BlockState::kInUse) allocated += b.size;
  }
  if (!seg.Find("allocated_size")) s.allocated_size = allocated;
  if (!seg.Find("active_size")) s.active_size = active;
  if (!seg.Find("requested_size")) s.requested_size = requested;
}

bool ParseSegmentScalars(FieldReader& r, PickleValue seg, const ValuePath& at, SnapshotSegment& s) {
  int64_t device = 0;
  uint64_t address = 0, total = 0, allocated = 0, active = 0, requested = 0, stream = 0;
  std::string_view type = "large";
  if (!r.I64(seg, "device", at, false, device) || !r.U64(seg, "address", at, true, address) ||
      !r.U64(seg, "total_size", at, true, total) || !r.U64(seg, "allocated_size", at, false, allocated) ||
      !r.U64(seg, "active_size", at, false, active) || !r.U64(seg, "requested_size", at, false, requested) ||
      !r.U64(seg, "stream", at, false, stream) || !r.Str(seg, "segment_type", at, false, type) ||
      !r.Bool(seg, "is_expandable", at, false, s.is_expandable) || !ParsePoolId(r, seg, at, s.pool_id)) {
    return false;
  }
  if (device < 0) return r.Fail(at.Key("device"), fmt::format("negative device {}", device));
  if (type != "small" && type != "large") {
    return r.Fail(at.Key("segment_type"), fmt::format("unknown segment type '{}'", type));
  }
  s.device = DeviceId(static_cast<uint64_t>(device));
  s.address = Offset(address);
  s.total_size = Bytes(total);
  s.allocated_size = Bytes(allocated);
  s.active_size = Bytes(active);
  s.requested_size = Bytes(requested);
  s.stream = StreamId(stream);
  s.type = type == "small" ? SegmentType::kSmall : SegmentType::kLarge;
  return true;
}

bool ParseSegment(FieldReader& r, ContextReader& c, PickleValue seg, const ValuePath& at, SnapshotSegment& s,
                  GenerationClues& clues) {
  if (!r.Spend(1, at) || !r.ExpectKind(seg, PickleKind::kDict, at)) return false;
  if (!ParseSegmentScalars(r, seg, at, s) || !c.Frames(seg, "frames", at, s.frames)) return false;
  if (seg.Find("is_expandable")) clues.segment_expandable = true;
  const std::optional<PickleValue> blocks = r.Get(seg, "blocks", at, true);
  const ValuePath bpath = at.Key("blocks");
  if (!blocks || !r.ExpectSequence(*blocks, bpath)) return false;
  s.blocks.resize(blocks->size());
  Offset next = s.address;
  for (size_t i = 0; i < blocks->size(); ++i) {
    if (!ParseBlock(r, c, blocks->at(i), bpath.Index(i), next, s.blocks[i], clues)) return false;
    next = s.blocks[i].address + s.blocks[i].size;
  }
  FillMissingSegmentSizes(seg, s);
  return true;
}

bool ParseSegments(FieldReader& r, ContextReader& c, PickleValue list, const ValuePath& at, Snapshot& snap,
                   GenerationClues& clues) {
  if (!r.ExpectSequence(list, at)) return false;
  snap.segments.resize(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    if (!ParseSegment(r, c, list.at(i), at.Index(i), snap.segments[i], clues)) return false;
  }
  return true;
}

bool ParseDeviceTraces(FieldReader& r, ContextReader& c, TraceStream* stream, PickleValue list,
                       const ValuePath& at, Snapshot& snap, GenerationClues& clues) {
  if (!r.ExpectSequence(list, at)) return false;
  snap.device_traces.resize(list.size());
  for (size_t dev = 0; dev < list.size(); ++dev) {
    const PickleValue entries = list.at(dev);
    const ValuePath dpath = at.Index(dev);
    if (!r.ExpectSequence(entries, dpath)) return false;
    DeviceTrace& trace = snap.device_traces[dev];
    trace.device = DeviceId(dev);
    if (stream != nullptr && stream->Streamed(entries.id())) {
      if (!stream->MoveTo(entries.id(), r, dpath, trace.entries)) return false;
      continue;
    }
    trace.entries.resize(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      if (!ParseTraceEntry(r, c, entries.at(i), dpath.Index(i), snap, trace.entries[i], clues)) return false;
    }
  }
  return true;
}

int InferGeneration(const Snapshot& snap, const GenerationClues& clues) {
  if (clues.block_history || (!snap.segments.empty() && !clues.segment_expandable)) return 1;
  if (snap.allocator_settings) {
    const bool gen5 =
        clues.user_metadata || snap.allocator_settings->Find("graph_capture_record_stream_reuse");
    return gen5 ? 5 : 4;
  }
  return clues.time_us ? 3 : 2;
}

// record_function boundaries; an item that is not {stage, name, device,
// time_us} is counted but not kept (MemoryViz ignores what it cannot read).
void ParseAnnotations(PickleValue list, Snapshot& snap) {
  snap.external_annotations = list.size();
  for (size_t i = 0; i < list.size(); ++i) {
    const PickleValue a = list.at(i);
    if (!a.is_dict()) continue;
    const std::optional<PickleValue> stage = a.Find("stage"), name = a.Find("name");
    if (!stage || !stage->is_string() || !name || !name->is_string()) continue;
    RangeAnnotation out{std::string(stage->AsString()), std::string(name->AsString()), 0, std::nullopt};
    if (const std::optional<PickleValue> d = a.Find("device")) out.device = d->AsInt64().value_or(0);
    if (const std::optional<PickleValue> t = a.Find("time_us")) out.time_us = t->AsUInt64();
    snap.context.annotations.push_back(std::move(out));
  }
}

bool ParseTopLevel(FieldReader& r, ContextReader& c, TraceStream* stream, PickleValue root, Snapshot& snap,
                   GenerationClues& clues) {
  const ValuePath top;
  if (root.is_sequence()) {
    snap.bare_list = true;
    return ParseSegments(r, c, root, top, snap, clues);
  }
  if (!root.is_dict()) {
    return r.Fail(
        top, fmt::format("expected a dict with 'segments' or a list of segments, found {}", root.KindName()));
  }
  const std::optional<PickleValue> segments = r.Get(root, "segments", top, true);
  if (!segments || !ParseSegments(r, c, *segments, top.Key("segments"), snap, clues)) return false;
  if (const std::optional<PickleValue> traces = root.Find("device_traces")) {
    if (!ParseDeviceTraces(r, c, stream, *traces, top.Key("device_traces"), snap, clues)) return false;
  }
  if (const std::optional<PickleValue> settings = root.Find("allocator_settings")) {
    snap.allocator_settings.emplace();
    if (!ParseAllocatorSettings(r, *settings, top.Key("allocator_settings"), *snap.allocator_settings)) {
      return false;
    }
  }
  if (const std::optional<PickleValue> ann = root.Find("external_annotations")) {
    if (!r.ExpectSequence(*ann, top.Key("external_annotations"))) return false;
    ParseAnnotations(*ann, snap);
  }
  return true;
}

// The rest of a snapshot after the stream took its device traces (or all
// of it, with no stream). The budget counts the nodes the stream discarded.
absl::Status ParseInto(const PickleTree& tree, TraceStream* stream, Snapshot& snap) {
  snap.file_name = std::string(tree.file_name());
  FieldReader reader(tree.file_name(), tree.NodeCount() + tree.DroppedCount());
  GenerationClues clues;
  std::optional<ContextReader> own;
  ContextReader& context =
      stream != nullptr ? stream->context() : own.emplace(reader, snap.context, snap.entry_contexts);
  context.set_reader(reader);
  if (!ParseTopLevel(reader, context, stream, tree.root(), snap, clues)) return reader.status();
  if (stream != nullptr) {
    clues.time_us = clues.time_us || stream->clues().time_us;
    clues.user_metadata = clues.user_metadata || stream->clues().user_metadata;
    RestoreContextOrder(snap);
  }
  snap.generation = InferGeneration(snap, clues);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Snapshot> ParseSnapshot(const PickleTree& tree) {
  Snapshot snap;
  if (absl::Status s = ParseInto(tree, nullptr, snap); !s.ok()) return s;
  return snap;
}

absl::StatusOr<Snapshot> LoadSnapshotFile(const std::string& path) {
  {
    Snapshot snap;
    TraceStream stream(path, snap);
    absl::StatusOr<PickleTree> tree = UnpickleFile(path, {}, &stream);
    if (!tree.ok()) return tree.status();
    const absl::Status s = ParseInto(*tree, &stream, snap);
    // A list the stream took that is not a device trace (an unusual file):
    // its items are missing from the tree, so read the file again whole.
    if (stream.AllMoved()) {
      if (!s.ok()) return s;
      return snap;
    }
  }
  absl::StatusOr<PickleTree> tree = UnpickleFile(path);
  if (!tree.ok()) return tree.status();
  return ParseSnapshot(*tree);
}

}  // namespace hbmsim::trace
