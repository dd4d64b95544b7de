#include "trace/torch/snapshot_context.h"

#include <utility>
#include <vector>

namespace hbmsim::trace {

bool ContextReader::Frame(PickleValue f, const ValuePath& at, uint32_t& out) {
  if (const auto it = frames_.find(f.id()); it != frames_.end()) {
    out = it->second;
    return true;
  }
  if (!r_->Spend(1, at) || !r_->ExpectKind(f, PickleKind::kDict, at)) return false;
  std::string_view filename, name;
  int64_t line = 0;
  if (!r_->Str(f, "filename", at, false, filename) || !r_->Str(f, "name", at, false, name) ||
      !r_->I64(f, "line", at, false, line)) {
    return false;
  }
  out = table_.AddFrame(StackFrame{std::string(filename), line, std::string(name)});
  frames_.emplace(f.id(), out);
  Remember(f.id());
  return true;
}

bool ContextReader::Frames(PickleValue dict, std::string_view key, const ValuePath& at, uint32_t& out) {
  out = 0;
  const std::optional<PickleValue> v = dict.Find(key);
  if (!v || v->is_none()) return true;
  if (const auto it = lists_.find(v->id()); it != lists_.end()) {
    out = it->second;
    return true;
  }
  const ValuePath path = at.Key(key);
  if (!r_->ExpectSequence(*v, path)) return false;
  std::vector<uint32_t> ids(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    if (!Frame(v->at(i), path.Index(i), ids[i])) return false;
  }
  out = table_.AddList(std::move(ids));
  lists_.emplace(v->id(), out);
  Remember(v->id());
  return true;
}

uint32_t ContextReader::String(PickleValue dict, std::string_view key) {
  const std::optional<PickleValue> v = dict.Find(key);
  return v && v->is_string() ? table_.AddString(v->AsString()) : 0;
}

bool ContextReader::Entry(PickleValue entry, const ValuePath& at, uint32_t& out) {
  EventContext c;
  c.has_category = true;
  c.category = String(entry, "category");
  c.user_metadata = String(entry, "user_metadata");
  c.compile_context = String(entry, "compile_context");
  if (!Frames(entry, "frames", at, c.frames)) return false;
  const auto [it, added] = context_ids_.try_emplace(c, static_cast<uint32_t>(entry_contexts_.size()));
  if (added) entry_contexts_.push_back(c);
  out = it->second;
  return true;
}

void ContextReader::Forget(PickleNodeId first) {
  for (const PickleNodeId id : recent_) {
    if (id < first) continue;
    lists_.erase(id);
    frames_.erase(id);
  }
  recent_.clear();
  tracking_ = false;
}

}  // namespace hbmsim::trace
