// Runs n independent tasks on up to `jobs` threads. Each task writes only its
// own result slot, so the outcome never depends on scheduling: `--jobs 1` and
// `--jobs 4` print the same bytes.
#ifndef HBMSIM_SIM_WHATIF_THREAD_POOL_H_
#define HBMSIM_SIM_WHATIF_THREAD_POOL_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace hbmsim {

// All cores, at least 1.
inline int DefaultJobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

inline void ParallelFor(size_t n, int jobs, const std::function<void(size_t)>& task) {
  const size_t threads = std::min(n, static_cast<size_t>(jobs < 1 ? 1 : jobs));
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) task(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < n; i = next++) task(i);
    });
  }
  for (std::thread& th : pool) th.join();
}

}  // namespace hbmsim

#endif  // HBMSIM_SIM_WHATIF_THREAD_POOL_H_
