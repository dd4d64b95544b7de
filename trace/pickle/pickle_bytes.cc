#include "trace/pickle/pickle_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "fmt/format.h"
#include "trace/pickle/unpickler.h"

namespace hbmsim::trace {

PickleBytes& PickleBytes::operator=(PickleBytes&& o) noexcept {
  if (this != &o) {
    this->~PickleBytes();
    owned_ = std::move(o.owned_);
    map_ = std::exchange(o.map_, nullptr);
    map_size_ = std::exchange(o.map_size_, 0);
    released_ = std::exchange(o.released_, 0);
  }
  return *this;
}

PickleBytes::~PickleBytes() {
  if (map_ != nullptr) munmap(const_cast<char*>(map_), map_size_);
  map_ = nullptr;
}

absl::StatusOr<PickleBytes> PickleBytes::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(fmt::format("{}: cannot open", path));
  struct stat st {};
  void* map = MAP_FAILED;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  }
  ::close(fd);
  if (map == MAP_FAILED) {
    absl::StatusOr<std::string> data = ReadWholeFile(path);
    if (!data.ok()) return data.status();
    return PickleBytes(*std::move(data));
  }
  // One pass, front to back: let the kernel read ahead.
  madvise(map, static_cast<size_t>(st.st_size), MADV_SEQUENTIAL);
  PickleBytes out;
  out.map_ = static_cast<const char*>(map);
  out.map_size_ = static_cast<size_t>(st.st_size);
  return out;
}

void PickleBytes::Release(size_t end) {
  constexpr size_t kStep = size_t{16} << 20;
  if (map_ == nullptr || end < released_ + kStep) return;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t upto = end / page * page;
  // The mapping is private and read-only: dropped pages are read back from
  // the file if a string in them is looked at later.
  madvise(const_cast<char*>(map_) + released_, upto - released_, MADV_DONTNEED);
  released_ = upto;
}

}  // namespace hbmsim::trace
