#include "trace/core/live_id_table.h"

#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"

namespace hbmsim {
namespace {

TEST(LiveIdTableTest, InsertFindErase) {
  LiveIdTable<uint64_t, int> t;
  EXPECT_EQ(t.Find(7), nullptr);
  auto [v, inserted] = t.TryInsert(7, 70);
  EXPECT_TRUE(inserted);
  EXPECT_EQ(*v, 70);
  auto [again, inserted_again] = t.TryInsert(7, 71);
  EXPECT_FALSE(inserted_again);
  EXPECT_EQ(*again, 70);  // the existing value, unchanged
  EXPECT_EQ(t.size(), 1u);
  *t.Find(7) = 72;
  EXPECT_EQ(*t.Find(7), 72);
  EXPECT_TRUE(t.Erase(uint64_t{7}));
  EXPECT_FALSE(t.Erase(uint64_t{7}));
  EXPECT_EQ(t.Find(7), nullptr);
  EXPECT_EQ(t.size(), 0u);
}

TEST(LiveIdTableTest, DeviceScopedKeysAreDistinct) {
  LiveIdTable<DeviceScopedId, char> t;
  EXPECT_TRUE(t.TryInsert({0, 5}, 'a').second);
  EXPECT_TRUE(t.TryInsert({1, 5}, 'b').second);
  EXPECT_TRUE(t.TryInsert({5, 0}, 'c').second);
  EXPECT_EQ(*t.Find({0, 5}), 'a');
  EXPECT_EQ(*t.Find({1, 5}), 'b');
  EXPECT_EQ(*t.Find({5, 0}), 'c');
  EXPECT_EQ(t.Find({1, 0}), nullptr);
  EXPECT_EQ(t.size(), 3u);
}

// Keys as homes (the numbered buffers of a `size` log): dense numbers, the
// last freed reused first, then keys far past the capacity (which wrap
// around and probe like any other), against std::map; nothing lost.
TEST(LiveIdTableTest, KeysAsHomesMatchAMapAndWrapFarKeys) {
  std::mt19937_64 rng(7);
  LiveIdTable<uint64_t, uint64_t> t;
  t.KeysAreHomes();
  std::map<uint64_t, uint64_t> reference;
  std::vector<uint64_t> free_numbers;
  uint64_t next = 0;
  for (int step = 0; step < 100000; ++step) {
    if (reference.empty() || rng() % 2 == 0) {
      uint64_t n = next;
      if (free_numbers.empty()) {
        ++next;
      } else {
        n = free_numbers.back();
        free_numbers.pop_back();
      }
      ASSERT_TRUE(t.TryInsert(n, n + 1).second) << "step " << step;
      reference.emplace(n, n + 1);
    } else {
      auto it = std::next(reference.begin(), static_cast<long>(rng() % reference.size()));
      ASSERT_TRUE(t.Erase(it->first)) << "step " << step;
      free_numbers.push_back(it->first);
      reference.erase(it);
    }
  }
  for (const uint64_t far : {uint64_t{1} << 20, uint64_t{1} << 40, ~uint64_t{0}}) {
    ASSERT_TRUE(t.TryInsert(far, 5).second);
    reference.emplace(far, 5);
  }
  EXPECT_FALSE(t.TryInsert(uint64_t{1} << 40, 6).second);
  ASSERT_EQ(t.size(), reference.size());
  for (const auto& [k, v] : reference) {
    const uint64_t* found = t.Find(k);
    ASSERT_NE(found, nullptr) << k;
    EXPECT_EQ(*found, v) << k;
  }
  for (uint64_t n = 0; n < next; ++n) EXPECT_EQ(t.Find(n) != nullptr, reference.contains(n)) << n;
  for (const auto& [k, v] : std::map<uint64_t, uint64_t>(reference)) {
    ASSERT_TRUE(t.Erase(k)) << k;
  }
  EXPECT_EQ(t.size(), 0u);
}

// Extreme and clustered ids (multiples of a large power of two, the ends of
// the 64-bit range) through growth and back-shifting erases, against std::map.
TEST(LiveIdTableTest, MatchesAMapUnderRandomChurn) {
  for (const uint64_t seed : {1u, 2u, 3u}) {
    std::mt19937_64 rng(seed);
    LiveIdTable<uint64_t, uint64_t> t;
    std::map<uint64_t, uint64_t> reference;
    auto random_id = [&]() -> uint64_t {
      const uint64_t small = rng() % 3000;
      switch (rng() % 3) {
        case 0:
          return small;
        case 1:
          return small << 40;
        default:
          return ~small;
      }
    };
    for (int step = 0; step < 200000; ++step) {
      const uint64_t id = random_id();
      if (rng() % 2 == 0) {
        const bool inserted = t.TryInsert(id, id * 3).second;
        EXPECT_EQ(inserted, reference.emplace(id, id * 3).second) << "seed " << seed << " step " << step;
      } else {
        EXPECT_EQ(t.Erase(id), reference.erase(id) == 1) << "seed " << seed << " step " << step;
      }
      ASSERT_EQ(t.size(), reference.size()) << "seed " << seed << " step " << step;
    }
    for (uint64_t small = 0; small < 3000; ++small) {
      for (const uint64_t id : {small, small << 40, ~small}) {
        const uint64_t* v = t.Find(id);
        const auto it = reference.find(id);
        ASSERT_EQ(v != nullptr, it != reference.end()) << "seed " << seed << " id " << id;
        if (v != nullptr) {
          EXPECT_EQ(*v, it->second) << "seed " << seed << " id " << id;
        }
      }
    }
  }
}

// A snapshot (ForEach) loaded into a fresh table answers every lookup as the
// original does: what a checkpoint of `size` relies on.
TEST(LiveIdTableTest, ForEachSnapshotLoadsBackAlike) {
  LiveIdTable<uint64_t, int> t;
  std::map<uint64_t, int> model;
  std::mt19937_64 rng(3);
  for (int i = 0; i < 5000; ++i) {
    const uint64_t id = rng() % 3000;
    if (model.contains(id)) {
      EXPECT_TRUE(t.Erase(id));
      model.erase(id);
    } else {
      t.TryInsert(id, i);
      model[id] = i;
    }
  }
  std::map<uint64_t, int> seen;
  t.ForEach([&](uint64_t id, int v) { EXPECT_TRUE(seen.emplace(id, v).second) << id; });
  EXPECT_EQ(seen, model);
  LiveIdTable<uint64_t, int> loaded;
  t.ForEach([&](uint64_t id, int v) { loaded.TryInsert(id, v); });
  ASSERT_EQ(loaded.size(), model.size());
  for (uint64_t id = 0; id < 3000; ++id) {
    const int* v = loaded.Find(id);
    ASSERT_EQ(v != nullptr, model.contains(id)) << id;
    if (v != nullptr) {
      EXPECT_EQ(*v, model[id]) << id;
    }
  }
}

}  // namespace
}  // namespace hbmsim
