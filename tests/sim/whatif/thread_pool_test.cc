// ParallelFor and TaskQueue (sim/whatif/thread_pool.h): every task runs once,
// results come back under their keys; with one job the order is the order
// of submission, with more the least key waiting goes first.
#include "sim/whatif/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <vector>
#include <thread>

#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim {
namespace {

TEST(ThreadPoolTest, ParallelForRunsEachTaskOnce) {
  for (int jobs : {1, 2, 5}) {
    std::vector<std::atomic<int>> runs(100);
    ParallelFor(runs.size(), jobs, [&](size_t i) { ++runs[i]; });
    for (size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "jobs " << jobs << " task " << i;
  }
}

TEST(ThreadPoolTest, OneJobRunsInlineInSubmissionOrder) {
  std::vector<uint64_t> order;
  TaskQueue<uint64_t> q(1, [&](uint64_t k) {
    order.push_back(k);
    return k * 10;
  });
  q.Submit(7);
  EXPECT_EQ(order, std::vector<uint64_t>{7});  // already ran
  q.Submit(3);
  EXPECT_EQ(q.outstanding().size(), 2u);
  const auto done = q.Finished();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0], (std::pair<uint64_t, uint64_t>{7, 70}));
  EXPECT_EQ(done[1], (std::pair<uint64_t, uint64_t>{3, 30}));
  EXPECT_TRUE(q.outstanding().empty());
  EXPECT_TRUE(q.Finished().empty());  // nothing outstanding: no wait
}

TEST(ThreadPoolTest, ManyJobsReturnEveryResultUnderItsKey) {
  TaskQueue<uint64_t> q(3, [](uint64_t k) { return k * k; });
  for (uint64_t k = 0; k < 50; ++k) q.Submit(k);
  std::map<uint64_t, uint64_t> got;
  while (!q.outstanding().empty()) {
    for (const auto& [k, v] : q.Finished()) EXPECT_TRUE(got.emplace(k, v).second) << k;
  }
  ASSERT_EQ(got.size(), 50u);
  for (const auto& [k, v] : got) EXPECT_EQ(v, k * k);
}

// Tasks not started when the queue goes are dropped; running ones finish.
TEST(ThreadPoolTest, DestroyingTheQueueDropsTasksNotStarted) {
  std::atomic<int> started{0};
  std::atomic<bool> release{false};
  std::thread releaser;
  {
    TaskQueue<int> q(2, [&](uint64_t) {
      ++started;
      while (!release) std::this_thread::yield();
      return 0;
    });
    for (uint64_t k = 0; k < 1000; ++k) q.Submit(k);
    while (started < 2) std::this_thread::yield();  // both workers hold a task
    releaser = std::thread([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      release = true;
    });
  }  // stops the queue, then waits for the two running tasks
  releaser.join();
  EXPECT_EQ(started.load(), 2);
}

// The order in which 2 workers start the tasks 50, 10, 30 and 20, submitted
// while both are held by tasks 100 and 101, then let through one at a time;
// `rank`, when given, is set with RankBy before those four are submitted.
std::vector<uint64_t> WaitingTasksStartOrder(std::function<uint64_t(uint64_t)> rank) {
  std::mutex mu;
  std::vector<uint64_t> order;
  std::atomic<int> holding{0};
  std::atomic<bool> release_101{false};
  std::atomic<bool> release_100{false};
  TaskQueue<int> q(2, [&](uint64_t k) {
    if (k >= 100) {
      ++holding;
      while (!(k == 100 ? release_100 : release_101)) std::this_thread::yield();
      return 0;
    }
    std::lock_guard<std::mutex> lock(mu);
    order.push_back(k);
    return 0;
  });
  q.Submit(100);
  q.Submit(101);
  while (holding < 2) std::this_thread::yield();  // both workers busy
  if (rank) q.RankBy(std::move(rank));
  for (const uint64_t k : {50, 10, 30, 20}) q.Submit(k);
  release_101 = true;  // one worker takes the waiting ones, one at a time
  size_t done = 0;
  while (done < 5) done += q.Finished().size();
  release_100 = true;
  while (!q.outstanding().empty()) q.Finished();
  return order;
}

// With threads, the least key waiting starts first, whatever the order of
// submission: the size search's lower probes decide where the answer lies.
TEST(ThreadPoolTest, TheLeastWaitingKeyStartsFirst) {
  EXPECT_EQ(WaitingTasksStartOrder(nullptr), (std::vector<uint64_t>{10, 20, 30, 50}));
}

// Once the owner ranks the tasks, the waiting one of least rank starts first
// (ties by key): the size search's last phase runs the probe with the most
// events left first.
TEST(ThreadPoolTest, RankedTasksStartLeastRankFirst) {
  const auto rank = [](uint64_t k) -> uint64_t { return k == 20 ? 0 : k == 30 ? 5 : 7; };  // 10 and 50 tie
  EXPECT_EQ(WaitingTasksStartOrder(rank), (std::vector<uint64_t>{20, 30, 10, 50}));
}

}  // namespace
}  // namespace hbmsim
