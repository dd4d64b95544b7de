// How much a test repeats itself, by build. The sanitizer build (CI's second
// step, scripts/test-sanitizers.sh) runs the same suite as the optimised
// build, 10-20 times slower: AddressSanitizer, UndefinedBehaviorSanitizer and
// libFuzzer's coverage on code compiled at -O1. Its job is to catch memory and
// undefined-behaviour errors, which need each code path run, not each
// recording or seed again. So the few tests that repeat one path over many
// inputs (every shared recording, many seeds, many limits) run a fixed,
// evenly spread part of them there; the optimised build runs them all.
// docs/fuzzing.md lists the tests that do.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <tuple>
#include <vector>

namespace hbmsim::testing {

// HBMSIM_SANITIZED_SCALE runs the sanitizer build's share in any build
// (-DCMAKE_CXX_FLAGS=-DHBMSIM_SANITIZED_SCALE), to check it in minutes.
#if defined(__SANITIZE_ADDRESS__) || defined(HBMSIM_SANITIZED_SCALE)
inline constexpr bool kSanitizedBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
#else
inline constexpr bool kSanitizedBuild = false;
#endif

// `full` in an optimised build, `sanitized` under the sanitizers.
template <typename T>
constexpr T ForThisBuild(T full, T sanitized) {
  return kSanitizedBuild ? sanitized : full;
}

// All of `items` in an optimised build; under the sanitizers at most `most`
// of them, evenly spread over the list in its order (the first always kept),
// so the same ones every run.
template <typename T>
std::vector<T> SpreadForThisBuild(const std::vector<T>& items, size_t most) {
  if (!kSanitizedBuild || items.size() <= most) return items;
  std::vector<T> kept;
  kept.reserve(most);
  for (size_t k = 0; k < most; ++k) kept.push_back(items[k * items.size() / most]);
  return kept;
}

// All of `files` (names under `dir`) in an optimised build; under the
// sanitizers the `most` smallest on disk, in the list's order. For a test that
// runs one command over every recording: the smallest cover the same code
// paths (state-only files, traces, every section of a report) in a fraction
// of the time, and the optimised build still runs every recording.
inline std::vector<std::string> SmallestForThisBuild(const std::vector<std::string>& files, size_t most,
                                                     const std::string& dir) {
  if (!kSanitizedBuild || files.size() <= most) return files;
  std::vector<std::tuple<uintmax_t, size_t>> by_size;  // (bytes, position in `files`)
  for (size_t k = 0; k < files.size(); ++k) {
    std::error_code error;
    const uintmax_t bytes = std::filesystem::file_size(dir + files[k], error);
    by_size.emplace_back(error ? UINTMAX_MAX : bytes, k);
  }
  std::sort(by_size.begin(), by_size.end());
  std::vector<size_t> kept;
  for (size_t k = 0; k < most; ++k) kept.push_back(std::get<1>(by_size[k]));
  std::sort(kept.begin(), kept.end());
  std::vector<std::string> out;
  for (const size_t k : kept) out.push_back(files[k]);
  return out;
}

}  // namespace hbmsim::testing
