// The two real profiles of shared/profiler (README there): what is read per
// allocator, the inferred start state and limit, and the memory-profile JSON
// of the TF run giving the same trace as its XSpace.
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "tests/trace/xplane/xplane_test_util.h"
#include "trace/xplane/profile_trace.h"

namespace hbmsim::trace::xplane {
namespace {

struct DeviceWant {
  std::string name;
  int64_t allocations, deallocations;
  int64_t limit;
  int64_t in_use_before, unknown_before;
  uint64_t base;
};

void ExpectDevices(const ProfileTrace& t, const std::vector<DeviceWant>& want) {
  ASSERT_EQ(t.devices.size(), want.size());
  for (size_t d = 0; d < want.size(); ++d) {
    const ProfileDevice& dev = t.devices[d];
    EXPECT_EQ(dev.recording.name, want[d].name) << d;
    EXPECT_EQ(dev.recording.allocations, want[d].allocations) << d;
    EXPECT_EQ(dev.recording.deallocations, want[d].deallocations) << d;
    EXPECT_EQ(dev.start.limit, want[d].limit) << d;
    EXPECT_EQ(dev.start.bytes_in_use_before, want[d].in_use_before) << d;
    EXPECT_EQ(dev.start.unknown_bytes, want[d].unknown_before) << d;
    EXPECT_EQ(dev.start.base(), want[d].base) << d;
  }
}

TEST(SharedProfiles, TensorFlowT4XSpace) {
  absl::StatusOr<ProfileTrace> t = ReadProfileTraceFile(kSharedProfiles + "tf_t4_keras_fit.xplane.pb");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->framework, Framework::kTensorFlow);
  // The GPU allocator first (the busiest GPU one), then the pinned host allocator.
  ExpectDevices(*t, {{"GPU_0_bfc", 77, 77, 14648653952, 1913088, 1912576, 0x7fce96000000},
                     {"gpu_host_bfc", 3, 3, 68719476736, 2560, 2560, 0x7fce63c00200}});
  // Two chunks allocated before the recording are freed in it.
  int known = 0;
  for (const StartChunk& c : t->devices[0].start.chunks) known += c.kind == StartChunkKind::kKnown;
  EXPECT_EQ(known, 2);
  EXPECT_EQ(*t->metadata.Find("device_bytes"), "14648653952");
}

TEST(SharedProfiles, JaxMi300xXSpace) {
  absl::StatusOr<ProfileTrace> t = ReadProfileTraceFile(kSharedProfiles + "jax_mi300x_attention.xplane.pb");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->framework, Framework::kJax);
  ASSERT_EQ(t->devices.size(), 2u);
  EXPECT_EQ(t->devices[0].recording.name, "GPU_0_bfc");
  EXPECT_EQ(t->devices[0].recording.allocations, 126);
  EXPECT_EQ(t->devices[0].recording.deallocations, 126);
  EXPECT_EQ(t->devices[0].start.limit, 154606239744);
  EXPECT_EQ(t->devices[0].start.bytes_in_use_before, 58720768);
  EXPECT_EQ(t->devices[1].recording.name, "xla_gpu_host_bfc");
  EXPECT_EQ(t->devices[1].recording.allocations, 18);
  EXPECT_EQ(t->devices[1].recording.deallocations, 18);
  EXPECT_EQ(t->devices[1].start.limit, 68719476736);
  EXPECT_EQ(t->devices[1].start.bytes_in_use_before, 0);
}

std::vector<std::string> EventLines(ProfileTrace& t) {
  std::vector<std::string> out;
  for (OwnedEvent& o : t.events) {
    const Event& e = o.get();
    out.push_back(fmt::format(
        "{} {} {} d={} t={} addr={} tag={} label={} shape={}", EventKindName(e.kind), e.id, e.bytes.value(),
        e.device.value(), e.time_us ? std::to_string(*e.time_us) : "-",
        e.addr ? std::to_string(*e.addr) : "-", e.tag, e.label, e.shape ? FormatShape(*e.shape) : "-"));
  }
  return out;
}

TEST(SharedProfiles, TheMemoryProfileJsonGivesTheSameTraceAsItsXSpace) {
  absl::StatusOr<ProfileTrace> x = ReadProfileTraceFile(kSharedProfiles + "tf_t4_keras_fit.xplane.pb");
  absl::StatusOr<ProfileTrace> j = ReadProfileTraceFile(kSharedProfiles + "tf_t4_keras_fit.memory_profile.json.gz");
  ASSERT_TRUE(x.ok()) << x.status();
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->form, "memory_profile_json");
  const std::vector<std::string> xl = EventLines(*x), jl = EventLines(*j);
  ASSERT_EQ(xl.size(), 171u);  // 160 records, 2 step marks, 9 start-state events
  EXPECT_EQ(xl, jl);
  EXPECT_EQ(xl[0], "alloc 1 1912320 d=0 t=- addr=140525256572928 tag=preexisting_unknown label= shape=-");
  // Everything but the source line is the same metadata.
  ASSERT_EQ(x->metadata.entries.size(), j->metadata.entries.size());
  for (size_t i = 1; i < x->metadata.entries.size(); ++i)
    EXPECT_EQ(x->metadata.entries[i], j->metadata.entries[i]);
}

}  // namespace
}  // namespace hbmsim::trace::xplane
