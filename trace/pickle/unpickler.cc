#include "trace/pickle/unpickler.h"

#include <cstdio>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "trace/pickle/machine.h"

namespace hbmsim::trace {

absl::StatusOr<PickleTree> Unpickle(PickleBytes data, std::string_view file_name, const UnpickleLimits& limits,
                                    PickleListSink* sink) {
  pickle_internal::Machine machine(std::move(data), file_name, limits, sink);
  return machine.Run();
}

absl::StatusOr<PickleTree> Unpickle(std::string data, std::string_view file_name,
                                    const UnpickleLimits& limits) {
  return Unpickle(PickleBytes(std::move(data)), file_name, limits, nullptr);
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return absl::NotFoundError(fmt::format("{}: cannot open", path));
  std::string data;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) data.append(buffer, n);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return absl::InvalidArgumentError(fmt::format("{}: read error", path));
  return data;
}

absl::StatusOr<PickleTree> UnpickleFile(const std::string& path, const UnpickleLimits& limits,
                                        PickleListSink* sink) {
  absl::StatusOr<PickleBytes> data = PickleBytes::Open(path);
  if (!data.ok()) return data.status();
  return Unpickle(*std::move(data), path, limits, sink);
}

}  // namespace hbmsim::trace
