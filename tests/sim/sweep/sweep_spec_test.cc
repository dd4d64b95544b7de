// The sweep spec reader: the task list it expands to (order, keys, command
// lines) and the one-line error of every malformed spec. Patterns go through
// a fake expander, so the tests never depend on the files of the machine.
#include "sim/sweep/sweep_spec.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/sweep/spec_bounds.h"

namespace hbmsim::sim::sweep {
namespace {

// The "filesystem" the fake expander serves: pattern -> its sorted matches.
const std::map<std::string, std::vector<std::string>> kFiles = {
    {"jobs/*.pickle", {"jobs/a.pickle", "jobs/b.pickle"}},
    {"jobs/a.pickle", {"jobs/a.pickle"}},
    {"/abs/oom.trace", {"/abs/oom.trace"}},
};

SweepSpecOptions Fake(size_t max_tasks = kMaxSweepTasks) {
  SweepSpecOptions options;
  options.expand = [](const std::string& pattern) {
    auto it = kFiles.find(pattern);
    return it == kFiles.end() ? std::vector<std::string>{} : it->second;
  };
  options.max_tasks = max_tasks;
  return options;
}

std::string ErrorOf(const std::string& yaml, size_t max_tasks = kMaxSweepTasks) {
  absl::StatusOr<SweepSpec> spec = ParseSweepSpec(yaml, "s.yaml", Fake(max_tasks));
  return spec.ok() ? "ok" : std::string(spec.status().message());
}

std::vector<std::string> Keys(const SweepSpec& spec) {
  std::vector<std::string> out;
  for (const SweepTask& t : spec.tasks) out.push_back(t.Key().dump());
  return out;
}

TEST(SweepSpecTest, ExpandsInTheDocumentedOrder) {
  // Spec in folder "dir": patterns resolve against it, a path matched twice is kept once.
  SweepSpecOptions options = Fake();
  options.expand = [](const std::string& pattern) {
    if (pattern == "dir/jobs/*.pickle")
      return std::vector<std::string>{"dir/jobs/a.pickle", "dir/jobs/b.pickle"};
    if (pattern == "dir/jobs/a.pickle") return std::vector<std::string>{"dir/jobs/a.pickle"};
    return std::vector<std::string>{};
  };
  absl::StatusOr<SweepSpec> spec = ParseSweepSpec(
      "recordings: [jobs/a.pickle, 'jobs/*.pickle']\n"
      "allocators: [torch, cfg/bfc.yaml]\n"
      "settings:\n"
      "  expandable_segments: [false, true]\n"
      "  max_split_size: [0, 128MiB]\n"
      "limits: [16GiB]\n"
      "size: true\n",
      "dir/s.yaml", options);
  ASSERT_TRUE(spec.ok()) << spec.status();
  // 2 recordings x 2 allocators x 4 combinations x 2 questions.
  ASSERT_EQ(spec->tasks.size(), 32u);
  EXPECT_EQ(spec->tasks[0].Key().dump(),
            R"({"task":0,"recording":"dir/jobs/a.pickle","allocator":"torch",)"
            R"("settings":"expandable_segments=false,max_split_size=0","question":"limit",)"
            R"("bytes_limit":"16GiB","device":null})");
  EXPECT_EQ(spec->tasks[1].Key().dump(),
            R"({"task":1,"recording":"dir/jobs/a.pickle","allocator":"torch",)"
            R"("settings":"expandable_segments=false,max_split_size=0","question":"size",)"
            R"("bytes_limit":null,"device":null})");
  // The last settings key varies fastest.
  EXPECT_EQ(spec->tasks[2].SettingsText(), "expandable_segments=false,max_split_size=128MiB");
  EXPECT_EQ(spec->tasks[4].SettingsText(), "expandable_segments=true,max_split_size=0");
  // A YAML config resolves against the spec's folder too.
  EXPECT_EQ(spec->tasks[8].allocator, "dir/cfg/bfc.yaml");
  EXPECT_EQ(spec->tasks[16].recording, "dir/jobs/b.pickle");
  EXPECT_EQ(spec->tasks[31].FileName(), "task-000031.json");
}

TEST(SweepSpecTest, TaskCommandLines) {
  absl::StatusOr<SweepSpec> spec = ParseSweepSpec(
      "recordings: /abs/oom.trace\nallocators: bfc\nsettings: {garbage_collection: [true]}\n"
      "limits: [auto]\nsize: yes\nadvise: true\ndevice: 1\n",
      "s.yaml", Fake());
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->tasks.size(), 3u);
  using V = std::vector<std::string>;
  EXPECT_EQ(spec->tasks[0].Args("r.json"),
            (V{"replay", "/abs/oom.trace", "--allocator", "bfc", "--bytes-limit", "auto", "--no-advice",
               "--quiet", "--set", "garbage_collection=true", "--device", "1", "--json", "r.json"}));
  EXPECT_EQ(spec->tasks[1].Args("r.json"),
            (V{"size", "/abs/oom.trace", "--allocator", "bfc", "--set", "garbage_collection=true", "--device",
               "1", "--jobs", "1", "--json", "r.json"}));
  EXPECT_EQ(spec->tasks[2].question, "advise");
}

TEST(SweepSpecTest, SameSpecSameList) {
  const std::string yaml = "recordings: ['jobs/*.pickle']\nallocators: [bfc, torch]\nlimits: [1GiB, 2GiB]\n";
  absl::StatusOr<SweepSpec> a = ParseSweepSpec(yaml, "s.yaml", Fake());
  absl::StatusOr<SweepSpec> b = ParseSweepSpec(yaml, "s.yaml", Fake());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Keys(*a), Keys(*b));
  EXPECT_EQ(a->tasks.size(), 8u);
}

TEST(SweepSpecTest, MalformedSpecsGetOneLine) {
  const std::string base = "recordings: ['jobs/*.pickle']\nallocators: [bfc]\n";
  EXPECT_EQ(ErrorOf(base + "limits: [16GiBB]\n"),
            "s.yaml:3: limits: '16GiBB' is not a size (plain bytes, or a number with B, KiB, MiB, GiB, "
            "TiB, PiB, KB, MB, GB or TB)");
  EXPECT_EQ(ErrorOf(base + "limits: [a100-40gb, l4]\n"), "ok");  // device presets, as --bytes-limit takes them
  EXPECT_EQ(ErrorOf(base), "s.yaml:1: ask something: limits:, size: true, advise: true or scale:");
  EXPECT_EQ(ErrorOf(base + "size: maybe\n"), "s.yaml:3: size: expected true or false");
  EXPECT_EQ(ErrorOf(base + "size: true\nlimit: [1GiB]\n"),
            "s.yaml:4: unknown key 'limit' (recordings, allocators, settings, limits, size, advise, device, "
            "scale)");
  EXPECT_EQ(ErrorOf("recordings: ['jobs/*.pickle']\nsize: true\n"), "s.yaml:1: needs allocators:");
  EXPECT_EQ(ErrorOf("allocators: [bfc]\nsize: true\n"), "s.yaml:1: needs recordings:");
  EXPECT_EQ(ErrorOf("recordings: ['jobs/*.pickle']\nallocators: []\nsize: true\n"),
            "s.yaml:2: allocators: the list is empty");
  EXPECT_EQ(ErrorOf("recordings: [missing/*.trace]\nallocators: [bfc]\nsize: true\n"),
            "s.yaml:1: recordings: no file matches 'missing/*.trace'");
  EXPECT_EQ(ErrorOf(base + "size: true\ndevice: [0, 1]\n"), "s.yaml:4: device: expected one device index");
  EXPECT_EQ(ErrorOf(base + "size: true\nsettings: [a, b]\n"),
            "s.yaml:4: settings: expected KEY: [values...]");
  EXPECT_EQ(ErrorOf(base + "size: true\nsettings:\n  k: []\n"), "s.yaml:5: settings: k: the list is empty");
  EXPECT_EQ(ErrorOf(base + "size: true\nsettings:\n  k: [[1]]\n"),
            "s.yaml:5: settings: k: expected a list of values");
  EXPECT_EQ(ErrorOf("- a\n- b\n"), "s.yaml:1: a sweep spec is a map (recordings:, allocators:, ...)");
  EXPECT_EQ(ErrorOf("recordings: [a\n"), "s.yaml:2: end of sequence flow not found");
}

// scale: one family, asked under every allocator and settings combination,
// once per size and once per fit limit, after the per-recording tasks.
TEST(SweepSpecTest, ScaleTasks) {
  absl::StatusOr<SweepSpec> spec = ParseSweepSpec(
      "allocators: [torch]\n"
      "settings: {expandable_segments: [false, true]}\n"
      "scale:\n"
      "  at: {128: jobs/a.pickle, 256: /abs/oom.trace}\n"
      "  to: [1024]\n"
      "  fit_limits: [80GiB]\n"
      "  step: 64\n",
      "s.yaml", Fake());
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_EQ(spec->tasks.size(), 4u);
  EXPECT_EQ(spec->tasks[0].Key().dump(),
            R"({"task":0,"recording":"128=jobs/a.pickle 256=/abs/oom.trace","allocator":"torch",)"
            R"("settings":"expandable_segments=false","question":"scale","bytes_limit":null,"device":null,)"
            R"("to":"1024","step":null})");
  using V = std::vector<std::string>;
  EXPECT_EQ(spec->tasks[0].Args("r.json"),
            (V{"scale", "--at", "128", "jobs/a.pickle", "--at", "256", "/abs/oom.trace", "--allocator",
               "torch", "--set", "expandable_segments=false", "--to", "1024", "--json", "r.json"}));
  EXPECT_EQ(
      spec->tasks[3].Args("r.json"),
      (V{"scale", "--at", "128", "jobs/a.pickle", "--at", "256", "/abs/oom.trace", "--allocator", "torch",
         "--set", "expandable_segments=true", "--fit-limit", "80GiB", "--step", "64", "--json", "r.json"}));
  // With recordings, their tasks come first.
  absl::StatusOr<SweepSpec> both = ParseSweepSpec(
      "recordings: ['jobs/*.pickle']\nallocators: [bfc]\nsize: true\n"
      "scale: {at: {1: jobs/a.pickle, 2: jobs/a.pickle}, to: 3}\n",
      "s.yaml", Fake());
  ASSERT_TRUE(both.ok()) << both.status();
  ASSERT_EQ(both->tasks.size(), 3u);
  EXPECT_EQ(both->tasks[2].question, "scale");
  EXPECT_EQ(both->tasks[2].to, "3");
}

TEST(SweepSpecTest, MalformedScaleGetsOneLine) {
  const std::string base = "allocators: [bfc]\nscale:\n";
  EXPECT_EQ(ErrorOf(base + "  at: {1: jobs/a.pickle}\n  to: [4]\n"),
            "s.yaml:3: scale: at: give two recordings or more");
  EXPECT_EQ(ErrorOf(base + "  at: {1: jobs/a.pickle, 2: nope.pickle}\n  to: [4]\n"),
            "s.yaml:3: scale: at: no file 'nope.pickle'");
  EXPECT_EQ(ErrorOf(base + "  at: {x: jobs/a.pickle, 2: jobs/a.pickle}\n  to: [4]\n"),
            "s.yaml:3: scale: at: each key is a positive integer (the size the recording was made at)");
  EXPECT_EQ(ErrorOf(base + "  at: {1: jobs/a.pickle, 2: jobs/a.pickle}\n  to: [0]\n"),
            "s.yaml:4: scale: to: expected a positive integer");
  EXPECT_EQ(
      ErrorOf(base + "  at: {1: jobs/a.pickle, 2: jobs/a.pickle}\n  fit_limits: [lots]\n"),
      "s.yaml:4: scale: fit_limits: 'lots' is not a size (plain bytes, or a number with B, KiB, MiB, GiB, "
      "TiB, PiB, KB, MB, GB or TB)");
  EXPECT_EQ(ErrorOf(base + "  at: {1: jobs/a.pickle, 2: jobs/a.pickle}\n"),
            "s.yaml:3: scale: ask something: to: or fit_limits:");
  EXPECT_EQ(ErrorOf(base + "  to: [4]\n"), "s.yaml:3: scale: at: expected VALUE: RECORDING, two or more");
  EXPECT_EQ(ErrorOf(base + "  at: {1: jobs/a.pickle, 2: jobs/a.pickle}\n  to: 4\n  from: 2\n"),
            "s.yaml:5: scale: unknown key 'from' (at, to, fit_limits, step)");
  EXPECT_EQ(ErrorOf("recordings: ['jobs/*.pickle']\n" + base +
                    "  at: {1: jobs/a.pickle, 2: jobs/a.pickle}\n  to: 4\n"),
            "s.yaml:1: recordings: no question asks them (limits:, size: or advise:)");
}

TEST(SweepSpecTest, DeepOrHugeSpecsAreRefusedBeforeParsing) {
  // yaml-cpp recurses per level: 5000 brackets would overflow the stack.
  EXPECT_EQ(ErrorOf("recordings: " + std::string(5000, '[') + std::string(5000, ']') + "\n"),
            "s.yaml:1: nesting deeper than 16 levels");
  EXPECT_EQ(ErrorOf(std::string(kMaxSweepSpecBytes + 1, '#')),
            "s.yaml: larger than 4194304 bytes; not a sweep spec");
}

TEST(SweepSpecTest, TaskCountIsCappedBeforeExpansion) {
  // 2 recordings x 1 allocator x 2^3 settings x 1 question = 16 tasks.
  const std::string yaml =
      "recordings: ['jobs/*.pickle']\nallocators: [bfc]\nsize: true\nsettings:\n"
      "  a: [1, 2]\n  b: [1, 2]\n  c: [1, 2]\n";
  EXPECT_EQ(ErrorOf(yaml, 16), "ok");
  EXPECT_EQ(ErrorOf(yaml, 15),
            "s.yaml:1: the sweep expands to more than 15 tasks; split it into several specs");
  // The grid alone past the cap: refused while building it, never materialised.
  std::string grid = "recordings: ['jobs/*.pickle']\nallocators: [bfc]\nsize: true\nsettings:\n";
  for (int i = 0; i < 40; ++i) grid += "  k" + std::to_string(i) + ": [x, y]\n";
  EXPECT_EQ(ErrorOf(grid),
            "s.yaml:5: the sweep expands to more than 100000 tasks; split it into several specs");
}

// Issue 48, item 5: the 1 MB spec that asked for ~99 GB (one 1,000,000-character setting copied into 99,000
// tasks) is refused at the value's line, before any task or grid is made.
TEST(SweepSpecTest, AHugeSettingIsRefusedAtItsLine) {
  std::string yaml =
      "recordings: ['jobs/*.pickle']\nallocators: [bfc]\nsettings:\n  k: " + std::string(1'000'000, 'x') +
      "\nlimits: [";
  for (int i = 0; i < 49'500; ++i) yaml += i == 0 ? "1GiB" : ",1GiB";
  yaml += "]\n";
  ASSERT_LT(yaml.size(), kMaxSweepSpecBytes);
  EXPECT_EQ(ErrorOf(yaml), "s.yaml:4: settings: k: a value of 1000000 bytes; at most 4096");
  EXPECT_EQ(ErrorOf("recordings: ['" + std::string(4097, 'r') + "']\nallocators: [bfc]\nsize: true\n"),
            "s.yaml:1: recordings: a value of 4097 bytes; at most 4096");
  // A long key needs YAML's explicit `? KEY` form: an implicit key is at most 1024 characters to yaml-cpp.
  EXPECT_EQ(ErrorOf("recordings: [jobs/a.pickle]\nallocators: [bfc]\nsize: true\nsettings:\n  ? " +
                    std::string(5000, 'k') + "\n  : [1]\n"),
            "s.yaml:5: settings: a value of 5000 bytes; at most 4096");
}

// Values each within the cap, but a grid (or the tasks made of it) holding more than 256 MiB between them.
TEST(SweepSpecTest, TheTasksTextIsBoundedBeforeItIsMade) {
  const std::string value = std::string(4000, 'v');
  auto grid = [&](int keys) {
    std::string out = "settings:\n";
    for (int i = 0; i < keys; ++i) out += "  k" + std::to_string(i) + ": [a" + value + ", b" + value + "]\n";
    return out;
  };
  // 2^14 combinations of 14 values of 4001 bytes: refused while counting the grid.
  EXPECT_EQ(
      ErrorOf("recordings: ['jobs/*.pickle']\nallocators: [bfc]\nsize: true\n" + grid(14)),
      "s.yaml:5: the sweep's 16384 tasks of up to 56942 bytes each would hold more than 268435456 bytes; "
      "shorten its values or split it into several specs");
  // 2^10 combinations fit (41 MB), but 2 recordings x 4 limits make 8,192 tasks of them.
  EXPECT_EQ(
      ErrorOf("recordings: ['jobs/*.pickle']\nallocators: [bfc]\nlimits: [1GiB, 2GiB, 3GiB, 4GiB]\n" +
              grid(10)),
      "s.yaml:1: the sweep's 8192 tasks of up to 40971 bytes each would hold more than 268435456 bytes; "
      "shorten its values or split it into several specs");
  EXPECT_EQ(ErrorOf("recordings: ['jobs/*.pickle']\nallocators: [bfc]\nlimits: [1GiB]\n" + grid(10)), "ok");
}

// yaml-cpp spends ~460 bytes per node: a spec of many small items is refused before it is parsed.
TEST(SweepSpecTest, TooManyItemsAreRefusedBeforeParsing) {
  std::string yaml = "recordings: [jobs/a.pickle";
  for (int i = 0; i < 100'000; ++i) yaml += ",jobs/a.pickle";
  yaml += "]\nallocators: [bfc]\nsize: true\n";
  EXPECT_EQ(
      ErrorOf(yaml),
      "s.yaml: 100003 items (commas and lines), more than the 100000 a sweep spec may hold; split it into "
      "several specs, or match recordings with a pattern");
}

TEST(SweepSpecTest, ParseShard) {
  EXPECT_EQ(*ParseShard("0/1"), std::make_pair(size_t{0}, size_t{1}));
  EXPECT_EQ(*ParseShard("2/3"), std::make_pair(size_t{2}, size_t{3}));
  for (const char* bad : {"3/3", "1/0", "1", "1/2x", "-1/2", "a/b", ""}) {
    absl::StatusOr<std::pair<size_t, size_t>> s = ParseShard(bad);
    EXPECT_FALSE(s.ok()) << bad;
    if (!s.ok()) {
      EXPECT_EQ(s.status().message(), "--shard " + std::string(bad) + ": expected I/N with 0 <= I < N");
    }
  }
}

}  // namespace
}  // namespace hbmsim::sim::sweep
