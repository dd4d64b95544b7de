#include "trace/formats/memory_recordings.h"

#include <atomic>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"

namespace hbmsim::trace {
namespace {

constexpr char kPrefix[] = "hbmsim-memory:";

// Python threads run commands in parallel (the GIL is released), so the
// table is locked; lookups are one per command, never per event.
struct Registry {
  std::mutex mu;
  absl::flat_hash_map<std::string, std::shared_ptr<const PickleTree>> trees;
  std::atomic<uint64_t> next{1};
  std::atomic<uint64_t> opens{0};
};

Registry& TheRegistry() {
  static Registry* r = new Registry();  // never destroyed: no exit-order hazard
  return *r;
}

}  // namespace

std::string NextMemoryRecordingName() { return fmt::format("{}{}", kPrefix, TheRegistry().next++); }

void RegisterMemorySnapshot(const std::string& name, PickleTree tree) {
  Registry& r = TheRegistry();
  auto shared = std::make_shared<const PickleTree>(std::move(tree));
  std::lock_guard<std::mutex> lock(r.mu);
  r.trees[name] = std::move(shared);
}

void ReleaseMemoryRecording(const std::string& name) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.trees.erase(name);
}

std::shared_ptr<const PickleTree> FindMemorySnapshot(const std::string& name) {
  if (!std::string_view(name).starts_with(kPrefix)) return nullptr;
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto it = r.trees.find(name);
  if (it == r.trees.end()) return nullptr;
  ++r.opens;
  return it->second;
}

uint64_t MemorySnapshotOpens() { return TheRegistry().opens.load(); }

}  // namespace hbmsim::trace
