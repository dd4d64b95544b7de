// Every shared JAX device memory profile read whole: per device the buffer
// count and bytes, the label, the largest frame group; what is held on no
// device. The expected figures were computed independently of this reader
// (a Python gzip + hand wire decoder over the same files, summing each
// sample's [count, bytes] by its `kind` and `device` labels).
#include "trace/pprof/device_profile.h"

#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "trace/formats/format_table.h"
#include "trace/pprof/held_events.h"
#include "trace/pprof/resolve.h"

namespace hbmsim::trace::pprof {
namespace {

const std::string kDir = std::string(HBMSIM_SHARED_DIR) + "/jax_tpu/pprof/";

struct DeviceFigures {
  std::string name;
  uint64_t buffers;
  uint64_t bytes;
};

struct FileFigures {
  std::string file;
  std::vector<DeviceFigures> devices;  // ascending by device number
  uint64_t executables;
  int64_t executable_bytes;  // Σ of the sizes recorded (TPU records none: -1 each, not summed)
  uint64_t executables_of_unknown_size;
};

std::vector<DeviceFigures> EightTpus(uint64_t buffers0, uint64_t bytes0, uint64_t buffers, uint64_t bytes) {
  const char* names[] = {"TPU_0(process=0,(0,0,0,0))", "TPU_1(process=0,(0,0,0,1))",
                         "TPU_2(process=0,(1,0,0,0))", "TPU_3(process=0,(1,0,0,1))",
                         "TPU_4(process=0,(0,1,0,0))", "TPU_5(process=0,(0,1,0,1))",
                         "TPU_6(process=0,(1,1,0,0))", "TPU_7(process=0,(1,1,0,1))"};
  std::vector<DeviceFigures> out;
  for (int i = 0; i < 8; ++i) out.push_back({names[i], i == 0 ? buffers0 : buffers, i == 0 ? bytes0 : bytes});
  return out;
}

const std::vector<FileFigures>& Expected() {
  static const std::vector<FileFigures> kFiles = {
      {"3DAlgoLab__TinyVLA__6ba9ad949b19__memory.prof", {{"cuda:0", 3, 84000000}}, 9, 29768, 0},
      {"5uru__Implementation__c51c5caba072__memory_profile.prof", {{"TFRT_CPU_0", 682, 95406688}}, 43, 0, 0},
      {"BenjaminCoupry__LED-getter__188ae89f8bf3__memory.prof", {{"cuda:0", 18, 17870202}}, 608, 3454404, 0},
      {"andrinr__gsn-link-sign-pred__cdef125cf08c__memory.prof", {{"cuda:0", 32, 7208874}}, 40, 186640, 0},
      {"facebookresearch__flip__578d387bc3b5__cache_prof__vit_base.prof",
       EightTpus(641, 1061821440, 640, 1061820416), 34, 0, 34},
      {"jeh15__sandbox__6c33b1705b12__memory.prof", {{"gpu:0", 367, 20131688}}, 77, 5604697, 0},
      {"sholtodouglas__scalingExperiments__e8c863c15775__model_parallel_tutorial__memory.prof",
       EightTpus(22, 251040768, 15, 249461760), 30, 0, 30},
      {"sholtodouglas__scalingExperiments__fd1f687a9499__memory.prof", EightTpus(19, 16159744, 12, 14580736),
       31, 0, 31},
      {"willwhitney__exploration-reimplementation__b956a53e5557__memory.prof",
       {{"0", 37, 3232672}},
       51,
       317984,
       0},
  };
  return kFiles;
}

TEST(DeviceProfile, EverySharedProfileHasTheTotalsOfItsSamples) {
  for (const FileFigures& want : Expected()) {
    SCOPED_TRACE(want.file);
    absl::StatusOr<HeldState> held = ReadDeviceProfileFile(kDir + want.file);
    ASSERT_TRUE(held.ok()) << held.status();
    EXPECT_EQ(held->source, "JAX device memory profile (pprof)");
    ASSERT_EQ(held->devices.size(), want.devices.size());
    for (size_t i = 0; i < want.devices.size(); ++i) {
      const HeldDevice& d = held->devices[i];
      uint64_t count = 0;
      int64_t bytes = 0;
      for (const HeldEntry& e : d.entries) {
        EXPECT_EQ(e.kind, "buffer");
        count += e.count;
        bytes += e.bytes;
      }
      EXPECT_EQ(d.name, want.devices[i].name);
      EXPECT_EQ(d.device.value(), i);  // every label's own number: cuda:0, TPU_3(...) is 3, "0"
      EXPECT_EQ(count, want.devices[i].buffers);
      EXPECT_EQ(bytes, static_cast<int64_t>(want.devices[i].bytes));
    }
    uint64_t executables = 0, unknown = 0;
    int64_t executable_bytes = 0;
    for (const HeldEntry& e : held->unplaced) {
      EXPECT_EQ(e.kind, "executable");
      executables += e.count;
      if (e.bytes >= 0) executable_bytes += e.bytes;
      if (e.bytes < 0) unknown += e.count;
    }
    EXPECT_EQ(executables, want.executables);
    EXPECT_EQ(executable_bytes, want.executable_bytes);
    EXPECT_EQ(unknown, want.executables_of_unknown_size);
  }
}

TEST(DeviceProfile, EverySharedProfileIsDetectedAndItsEventsAddUp) {
  for (const FileFigures& want : Expected()) {
    SCOPED_TRACE(want.file);
    absl::StatusOr<const TraceFormatRow*> row = DetectTraceFormat(kDir + want.file);
    ASSERT_TRUE(row.ok());
    EXPECT_EQ((*row)->format, TraceFormat::kJaxDeviceProfile);
    absl::StatusOr<std::unique_ptr<Recording>> r = OpenRecording(kDir + want.file);
    ASSERT_TRUE(r.ok()) << r.status();
    absl::StatusOr<std::unique_ptr<EventReader>> events = (*r)->Events(DeviceId(0));
    ASSERT_TRUE(events.ok());
    uint64_t allocs = 0, bytes = 0;
    Event e;
    while (*(*events)->Next(e)) {
      EXPECT_EQ(e.kind, EventKind::kAlloc);
      EXPECT_EQ(e.device, DeviceId(0));
      EXPECT_EQ(e.tag, "preexisting");
      ++allocs;
      bytes += e.bytes.value();
    }
    EXPECT_EQ(allocs, want.devices[0].buffers);
    EXPECT_EQ(bytes, want.devices[0].bytes);
    EXPECT_EQ(*(*r)->facts().metadata.Find("allocator"),
              want.devices[0].name.starts_with("TPU") ? "tpu" : "bfc");
  }
}

TEST(DeviceProfile, TheFirstBufferNamesItsKindAndUserFrame) {
  absl::StatusOr<std::unique_ptr<Recording>> r =
      OpenRecording(kDir + "3DAlgoLab__TinyVLA__6ba9ad949b19__memory.prof");
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::unique_ptr<EventReader>> events = (*r)->Events(std::nullopt);
  ASSERT_TRUE(events.ok());
  std::vector<std::string> seen;
  Event e;
  while (*(*events)->Next(e)) seen.push_back(fmt::format("{} {} {}", e.id, e.bytes.value(), e.attrs));
  // In file order; the innermost frame outside jax's own Python.
  EXPECT_EQ(seen, (std::vector<std::string>{"1 4000000 kind=buffer frame=jax_intro2.py:15",
                                            "2 40000000 kind=buffer frame=jax_intro2.py:12",
                                            "3 40000000 kind=buffer frame=jax_intro2.py:7"}));
}

TEST(DeviceProfile, DeviceLabelsCarryTheirNumbers) {
  EXPECT_EQ(DeviceLabelNumber("cuda:3"), 3u);
  EXPECT_EQ(DeviceLabelNumber("gpu:12"), 12u);
  EXPECT_EQ(DeviceLabelNumber("TPU_5(process=0,(0,1,0,1))"), 5u);
  EXPECT_EQ(DeviceLabelNumber("TFRT_CPU_0"), 0u);
  EXPECT_EQ(DeviceLabelNumber("7"), 7u);
  EXPECT_EQ(DeviceLabelNumber("rocm"), std::nullopt);
  EXPECT_EQ(DeviceLabelNumber("x7"), std::nullopt);
  EXPECT_EQ(DeviceLabelNumber(""), std::nullopt);
}

}  // namespace
}  // namespace hbmsim::trace::pprof
