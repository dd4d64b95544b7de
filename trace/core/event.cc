#include "trace/core/event.h"

namespace hbmsim::trace {

std::string_view EventKindName(EventKind k) {
  switch (k) {
    case EventKind::kAlloc:
      return "alloc";
    case EventKind::kFree:
      return "free";
    case EventKind::kFreeRequested:
      return "free_requested";
    case EventKind::kFreeCompleted:
      return "free_completed";
    case EventKind::kProgramLoad:
      return "program_load";
    case EventKind::kProgramRun:
      return "program_run";
    case EventKind::kProgramUnload:
      return "program_unload";
    case EventKind::kMark:
      return "mark";
  }
  return "?";
}

OwnedEvent OwnedEvent::Own(const Event& e) {
  OwnedEvent o;
  o.event = e;
  o.tag = std::string(e.tag);
  o.label = std::string(e.label);
  o.attrs = std::string(e.attrs);
  o.get();
  return o;
}

const Event& OwnedEvent::get() {
  event.tag = tag;
  event.label = label;
  event.attrs = attrs;
  return event;
}

}  // namespace hbmsim::trace
