// Runs independent tasks on up to `jobs` threads. Each task writes only its
// own result slot, so the outcome never depends on scheduling: `--jobs 1` and
// `--jobs 4` print the same bytes.
//
//   ParallelFor  n tasks, returns when all are done;
//   TaskQueue    tasks keyed by a number, submitted one by one and collected
//                as they finish, so a caller can go on as soon as the ones it
//                needs are in (the size search: the next round once the
//                answer's interval is known, while a probe above it runs).
#ifndef HBMSIM_SIM_WHATIF_THREAD_POOL_H_
#define HBMSIM_SIM_WHATIF_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace hbmsim::sim {

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

// Tasks run inline in Submit when jobs is 1, else on `jobs` threads, the
// least key waiting first: the size search's keys are grid points, and the
// lower ones decide where the answer lies, while a probe left above a known
// pass only completes the record (it may wait until the narrowing is done).
// Once every task left is needed whatever the others find (the search's last
// phase), the owner may order them by a rank instead (RankBy: the least
// first, ties by key): the longest first, so that the last to end is short.
// Submit, Finished and RankBy are for one thread, the owner's.
template <typename Result>
class TaskQueue {
 public:
  TaskQueue(int jobs, std::function<Result(uint64_t)> run) : run_(std::move(run)) {
    for (int t = 0; jobs > 1 && t < jobs; ++t) workers_.emplace_back([this] { Work(); });
  }
  // Tasks not started are dropped; running ones finish first.
  ~TaskQueue() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  TaskQueue(const TaskQueue&) = delete;
  TaskQueue& operator=(const TaskQueue&) = delete;

  void Submit(uint64_t key) {
    outstanding_.insert(key);
    if (workers_.empty()) {
      finished_.emplace_back(key, run_(key));
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.insert(key);
    }
    wake_.notify_all();
  }

  // The tasks finished since the last call, in the order they finished;
  // waits for one when none has and some are outstanding.
  std::vector<std::pair<uint64_t, Result>> Finished() {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return !finished_.empty() || outstanding_.empty(); });
    std::vector<std::pair<uint64_t, Result>> out;
    out.swap(finished_);
    for (const auto& [key, result] : out) outstanding_.erase(key);
    return out;
  }
  // From now on a worker takes the waiting task of least rank(key) (ties: the
  // least key); `rank` runs on the workers, under the queue's lock, so it
  // must not call the queue.
  void RankBy(std::function<uint64_t(uint64_t)> rank) {
    std::lock_guard<std::mutex> lock(mu_);
    rank_ = std::move(rank);
  }

  // Submitted and not yet returned by Finished().
  const std::set<uint64_t>& outstanding() const { return outstanding_; }
  // Submitted and not started yet.
  bool Waiting(uint64_t key) const {
    std::lock_guard<std::mutex> lock(mu_);
    return queue_.contains(key);
  }

 private:
  void Work() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      const auto next = Next();
      const uint64_t key = *next;
      queue_.erase(next);
      lock.unlock();
      Result r = run_(key);
      lock.lock();
      finished_.emplace_back(key, std::move(r));
      done_.notify_all();
    }
  }

  // The task a worker takes next (mu_ held, queue_ not empty).
  std::set<uint64_t>::iterator Next() {
    if (!rank_) return queue_.begin();
    auto best = queue_.begin();
    uint64_t best_rank = rank_(*best);
    for (auto it = std::next(best); it != queue_.end(); ++it) {
      const uint64_t r = rank_(*it);
      if (r < best_rank) {
        best = it;
        best_rank = r;
      }
    }
    return best;
  }

  const std::function<Result(uint64_t)> run_;
  std::function<uint64_t(uint64_t)> rank_;  // empty: the least key first
  std::set<uint64_t> outstanding_;  // the owner's alone
  mutable std::mutex mu_;
  std::condition_variable wake_;  // for the workers: a task or stop_
  std::condition_variable done_;  // for the owner: a finished task
  std::set<uint64_t> queue_;  // submitted, not started
  std::vector<std::pair<uint64_t, Result>> finished_;
  bool stop_ = false;
  std::vector<std::thread> workers_;  // last: they start once the rest is built
};

}  // namespace hbmsim::sim

#endif  // HBMSIM_SIM_WHATIF_THREAD_POOL_H_
