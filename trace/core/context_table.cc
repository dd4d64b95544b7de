#include "trace/core/context_table.h"

#include <utility>

namespace hbmsim::trace {

uint32_t ContextTable::AddFrame(StackFrame f) {
  frames_.push_back(std::move(f));
  return static_cast<uint32_t>(frames_.size() - 1);
}

uint32_t ContextTable::AddList(std::vector<uint32_t> frames) {
  if (frames.empty()) return 0;
  lists_.push_back(std::move(frames));
  return static_cast<uint32_t>(lists_.size() - 1);
}

uint32_t ContextTable::AddString(std::string_view s) {
  if (s.empty()) return 0;
  const auto [it, added] = string_ids_.try_emplace(std::string(s), static_cast<uint32_t>(strings_.size()));
  if (added) strings_.emplace_back(s);
  return it->second;
}

}  // namespace hbmsim::trace
