// The bytes a PickleTree's strings point into: a string the tree owns, or a
// read-only mapping of the file. A mapping lets a large snapshot be parsed
// without a second copy of the file in memory: the unpickler reads it once,
// front to back, and hands the pages it has passed back to the kernel
// (Release), so the file costs resident memory only for the window being
// parsed; a string the tree still points into is read back from the page
// cache when touched. (A 381 MB snapshot read into a std::string was 381 MB
// of the 1.72 GB peak; notes/perf-snap.md.)
#ifndef HBMSIM_TRACE_PICKLE_PICKLE_BYTES_H_
#define HBMSIM_TRACE_PICKLE_PICKLE_BYTES_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace hbmsim::trace {

class PickleBytes {
 public:
  PickleBytes() = default;
  explicit PickleBytes(std::string owned) : owned_(std::move(owned)) {}
  PickleBytes(PickleBytes&& o) noexcept { *this = std::move(o); }
  PickleBytes& operator=(PickleBytes&& o) noexcept;
  PickleBytes(const PickleBytes&) = delete;
  PickleBytes& operator=(const PickleBytes&) = delete;
  ~PickleBytes();

  // Maps `path` read-only; a file that cannot be mapped (a pipe, an empty
  // file) is read into memory instead. NotFound / InvalidArgument name it.
  static absl::StatusOr<PickleBytes> Open(const std::string& path);

  std::string_view view() const {
    return map_ != nullptr ? std::string_view(map_, map_size_) : std::string_view(owned_);
  }
  // Appends to an owned string (a tree built from values, not a file);
  // returns the offset of `s`.
  size_t Append(std::string_view s) {
    const size_t at = owned_.size();
    owned_.append(s);
    return at;
  }
  // Lets the pages wholly before byte `end` leave memory (a mapping only; an
  // owned string keeps its bytes). Cheap to call often: it acts every 16 MB.
  void Release(size_t end);

 private:
  std::string owned_;
  const char* map_ = nullptr;
  size_t map_size_ = 0;
  size_t released_ = 0;  // pages before this offset were released
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_PICKLE_PICKLE_BYTES_H_
