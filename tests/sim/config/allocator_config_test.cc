#include <string>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "sim/config/allocator_config.h"

namespace hbmsim {
namespace {

std::string ErrorOf(const absl::StatusOr<AllocatorConfig>& c) {
  return c.ok() ? "ok" : std::string(c.status().message());
}

std::string ErrorOf(const absl::Status& s) { return s.ok() ? "ok" : std::string(s.message()); }

absl::StatusOr<AllocatorConfig> Parse(const std::string& yaml) {
  return ParseAllocatorConfig(BuiltinPolicies(), yaml, "configs/x.yaml");
}

std::string Options(const AllocatorConfig& c) {
  std::string out;
  for (const auto& [k, v] : c.options.entries()) out += k + "=" + FormatOptionValue(v) + " ";
  return out;
}

TEST(PolicyRegistryTest, BfcHasTheContractOptionsAndDefaults) {
  const PolicySpec* bfc = BuiltinPolicies().Find("bfc");
  ASSERT_NE(bfc, nullptr);
  EXPECT_EQ(Options(DefaultConfig(*bfc)),
            "allow_growth=false garbage_collection=false fragmentation_fraction=0 region_coalescing=false "
            "first_region=2097152 ");
  EXPECT_EQ(BuiltinPolicies().Find("nope"), nullptr);
}

// A row with a name and nothing else.
PolicySpec Named(const char* name) {
  PolicySpec spec;
  spec.name = name;
  return spec;
}

TEST(PolicyRegistryTest, RejectsADuplicateName) {
  PolicyRegistry r;
  ASSERT_TRUE(r.Register(Named("b")).ok());
  ASSERT_TRUE(r.Register(Named("a")).ok());
  EXPECT_EQ(ErrorOf(r.Register(Named("a"))), "policy a registered twice");
  EXPECT_EQ(r.Names(), "a, b");
}

TEST(PolicyRegistryTest, EachRecordingFormatIsClaimedByAtMostOnePolicy) {
  const PolicyRegistry& builtin = BuiltinPolicies();
  ASSERT_NE(builtin.MadeFormat(TraceFormat::kTorchSnapshot), nullptr);
  EXPECT_EQ(builtin.MadeFormat(TraceFormat::kTorchSnapshot)->name, "torch");
  EXPECT_EQ(builtin.MadeFormat(TraceFormat::kXplane)->name, "bfc");
  EXPECT_EQ(builtin.MadeFormat(TraceFormat::kMemoryProfile)->name, "bfc");
  EXPECT_EQ(builtin.MadeFormat(TraceFormat::kText), nullptr);  // a text trace does not say
  // XLA's buffer assignment is the offline planner under XLA's rules.
  EXPECT_EQ(builtin.MadeFormat(TraceFormat::kXlaText)->name, "offline");
  EXPECT_EQ(builtin.MadeFormat(TraceFormat::kXlaProto)->name, "offline");
  EXPECT_EQ(builtin.MadeFormat(TraceFormat::kRmmLog), nullptr);
  PolicyRegistry r;
  PolicySpec a;
  a.name = "a";
  a.recording.made_formats = {TraceFormat::kTorchSnapshot};
  PolicySpec b = a;
  b.name = "b";
  ASSERT_TRUE(r.Register(a).ok());
  const absl::Status s = r.Register(b);
  EXPECT_TRUE(absl::IsAlreadyExists(s));
  EXPECT_EQ(s.message(), "policies a and b both claim torch-snapshot recordings");
}

TEST(AllocatorConfigTest, ResolvesABuiltinName) {
  absl::StatusOr<AllocatorConfig> c = ResolveAllocator(BuiltinPolicies(), "bfc");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->policy->name, "bfc");
  EXPECT_EQ(c->source, "built-in");
  EXPECT_FALSE(c->bytes_limit.has_value());
}

TEST(AllocatorConfigTest, UnknownAllocatorNamesTheBuiltins) {
  EXPECT_EQ(ErrorOf(ResolveAllocator(BuiltinPolicies(), "bfcc")),
            "--allocator bfcc: unknown allocator (built-in: " + BuiltinPolicies().Names() +
                "; or a .yaml config file)");
  EXPECT_EQ(ErrorOf(ResolveAllocator(BuiltinPolicies(), "no/such.yaml")),
            "no/such.yaml: cannot open allocator config: No such file or directory");
}

TEST(AllocatorConfigTest, SetOverridesAnOptionStrictly) {
  AllocatorConfig c = DefaultConfig(*BuiltinPolicies().Find("bfc"));
  EXPECT_TRUE(ApplySetOption(c, "allow_growth=true").ok());
  EXPECT_TRUE(ApplySetOption(c, "fragmentation_fraction=0.25").ok());
  EXPECT_TRUE(ApplySetOption(c, "bytes_limit=1GiB").ok());
  EXPECT_EQ(
      Options(c),
      "allow_growth=true garbage_collection=false fragmentation_fraction=0.25 region_coalescing=false "
      "first_region=2097152 ");
  EXPECT_EQ(c.bytes_limit, Bytes::GiB(1));
  EXPECT_EQ(ErrorOf(ApplySetOption(c, "allow_growth=maybe")),
            "--set allow_growth=maybe: expected true or false");
  EXPECT_EQ(ErrorOf(ApplySetOption(c, "allow_growth=1")), "--set allow_growth=1: expected true or false");
  EXPECT_EQ(ErrorOf(ApplySetOption(c, "fragmentation_fraction=1")),
            "--set fragmentation_fraction=1: must be >= 0 and < 1");
  EXPECT_EQ(ErrorOf(ApplySetOption(c, "fragmentation_fraction=x")),
            "--set fragmentation_fraction=x: expected a number, got 'x'");
  EXPECT_EQ(ErrorOf(ApplySetOption(c, "allow_grwth=true")),
            "--set allow_grwth=true: unknown option for bfc (known: allow_growth, garbage_collection, "
            "fragmentation_fraction, region_coalescing, first_region)");
  EXPECT_EQ(ErrorOf(ApplySetOption(c, "allow_growth")), "--set allow_growth: expected KEY=VALUE");
}

TEST(AllocatorConfigTest, LoadsAYamlConfig) {
  absl::StatusOr<AllocatorConfig> c = Parse(
      "# comment\n"
      "allocator:\n"
      "  impl: bfc\n"
      "  bytes_limit: 16GiB\n"
      "  garbage_collection: true\n"
      "  region_coalescing: true\n");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->source, "configs/x.yaml");
  EXPECT_EQ(c->bytes_limit, Bytes::GiB(16));
  EXPECT_EQ(Options(*c),
            "allow_growth=false garbage_collection=true fragmentation_fraction=0 region_coalescing=true "
            "first_region=2097152 ");
}

TEST(AllocatorConfigTest, YamlErrorsNameFileLineAndPath) {
  EXPECT_EQ(ErrorOf(Parse("allocator:\n  impl: bfc\n  allow_growth: false\n  allow_grwth: true\n")),
            "configs/x.yaml:4: allocator.allow_grwth: unknown option for bfc (known: allow_growth, "
            "garbage_collection, fragmentation_fraction, region_coalescing, first_region)");
  EXPECT_EQ(ErrorOf(Parse("allocator:\n  impl: bfc\n  allow_growth: yes\n")),
            "configs/x.yaml:3: allocator.allow_growth: expected true or false");
  EXPECT_EQ(ErrorOf(Parse("allocator:\n  impl: bfc\n  bytes_limit: lots\n"))
                .rfind("configs/x.yaml:3: allocator.bytes_limit: ", 0),
            0u);
  EXPECT_EQ(ErrorOf(Parse("allocator:\n  impl: bfx\n")),
            "configs/x.yaml:2: allocator.impl: unknown allocator 'bfx' (built-in: " +
                BuiltinPolicies().Names() + ")");
  EXPECT_EQ(ErrorOf(Parse("allocator:\n  allow_growth: true\n")),
            "configs/x.yaml:1: allocator: missing impl (built-in: " + BuiltinPolicies().Names() + ")");
  EXPECT_EQ(ErrorOf(Parse("alocator:\n  impl: bfc\n")),
            "configs/x.yaml:1: alocator: unknown key (known: allocator)");
  EXPECT_EQ(ErrorOf(Parse("allocator:\n  impl: bfc\n  impl: bfc\n")),
            "configs/x.yaml:3: allocator.impl: duplicate key");
  EXPECT_EQ(ErrorOf(Parse("allocator:\n  impl: bfc\n  allow_growth: [true]\n")),
            "configs/x.yaml:3: allocator.allow_growth: expected a single value");
  EXPECT_EQ(ErrorOf(Parse("- 1\n")), "configs/x.yaml:1: expected a mapping with an allocator: key");
  // An empty flow mapping used to be read through root.begin() == end (fuzz_yaml_config: "{}r").
  EXPECT_EQ(ErrorOf(Parse("{}\n")), "configs/x.yaml:1: expected a mapping with an allocator: key");
  EXPECT_EQ(ErrorOf(Parse("{}r")), "configs/x.yaml:1: expected a mapping with an allocator: key");
  EXPECT_EQ(ErrorOf(Parse("allocator: {impl: bfc\n")).rfind("configs/x.yaml:2: malformed YAML: ", 0), 0u);
}

TEST(AllocatorConfigTest, RefusesHugeOrDeeplyNestedInputBeforeParsing) {
  EXPECT_EQ(ErrorOf(Parse(std::string(kMaxConfigFileBytes + 1, '#'))),
            "configs/x.yaml: larger than 4194304 bytes; not an allocator config");
  EXPECT_EQ(ErrorOf(Parse("allocator: " + std::string(100000, '['))),
            "configs/x.yaml:1: nesting deeper than 64 levels");
  std::string dashes;
  for (int i = 0; i < 70; ++i) dashes += "- ";
  EXPECT_EQ(ErrorOf(Parse(dashes + "x\n")), "configs/x.yaml:1: nesting deeper than 64 levels");
  std::string indented;
  for (int i = 0; i < 70; ++i) indented += std::string(i, ' ') + "k" + std::to_string(i) + ":\n";
  EXPECT_EQ(ErrorOf(Parse(indented)), "configs/x.yaml:65: nesting deeper than 64 levels");
}

TEST(PolicyRegistryTest, EveryDefaultParsesAndEveryFactoryBuildsOrSaysWhy) {
  // Other policies may join; these three must be there and build from defaults.
  for (const char* name : {"bfc", "torch", "tpu"}) EXPECT_NE(BuiltinPolicies().Find(name), nullptr) << name;
  for (const PolicySpec& p : BuiltinPolicies().policies()) {
    for (const OptionSpec& o : p.options) {
      EXPECT_TRUE(ParseOptionValue(o, o.default_text).ok()) << p.name << "." << o.name;
    }
    absl::StatusOr<std::unique_ptr<Allocator>> a = BuildAllocator(DefaultConfig(p), Bytes::MiB(64));
    const bool must_build = p.name == "bfc" || p.name == "torch" || p.name == "tpu";
    if (a.ok()) {
      EXPECT_EQ((*a)->name(), p.name);
    } else {
      EXPECT_FALSE(must_build) << p.name << ": " << a.status();
      EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument) << p.name;  // bad input, never a crash
    }
  }
}

TEST(AllocatorConfigTest, TpuOptionsAreTypedAndChecked) {
  AllocatorConfig c = DefaultConfig(*BuiltinPolicies().Find("tpu"));
  EXPECT_EQ(Options(c),
            "granule=512 tile_padding=true queued_free_retry=true defragment=true evict_programs=true "
            "eviction_order=lru log_allocations_on_oom=false ");
  EXPECT_EQ(ErrorOf(ApplySetOption(c, "eviction_order=fifo")),
            "--set eviction_order=fifo: expected one of lru, largest_first, got 'fifo'");
  EXPECT_EQ(ErrorOf(ApplySetOption(c, "granule=0")), "--set granule=0: must be at least 1 byte");
  EXPECT_TRUE(ApplySetOption(c, "granule=2KiB").ok());
  EXPECT_EQ(c.options.Get<Bytes>("granule").value_or(Bytes()), Bytes(2048));
}

TEST(AllocatorConfigTest, TorchTakesAnAllocConfString) {
  AllocatorConfig c = DefaultConfig(*BuiltinPolicies().Find("torch"));
  ASSERT_TRUE(ApplySetOption(c, "alloc_conf=expandable_segments:True,max_split_size_mb:128").ok());
  EXPECT_TRUE(BuildAllocator(c, Bytes::GiB(1)).ok());
  ASSERT_TRUE(ApplySetOption(c, "alloc_conf=nonsense_key:1").ok());
  absl::StatusOr<std::unique_ptr<Allocator>> a = BuildAllocator(c, Bytes::GiB(1));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(std::string(a.status().message()).rfind("alloc_conf: ", 0), 0u) << a.status();
  EXPECT_EQ(ErrorOf(ApplySetOption(c, "garbage_collection_threshold=1")),
            "--set garbage_collection_threshold=1: must be >= 0 and < 1 (0 = off)");
}

// first_region is a size of at least one byte; 0 is refused, naming the option.
TEST(AllocatorConfigTest, BfcFirstRegionIsCheckedAndSet) {
  AllocatorConfig c = DefaultConfig(*BuiltinPolicies().Find("bfc"));
  EXPECT_EQ(c.options.Get<Bytes>("first_region").value_or(Bytes()), Bytes::MiB(2));
  EXPECT_EQ(ErrorOf(ApplySetOption(c, "first_region=0")), "--set first_region=0: must be at least 1 byte");
  ASSERT_TRUE(ApplySetOption(c, "first_region=1MiB").ok());
  EXPECT_EQ(c.options.Get<Bytes>("first_region").value_or(Bytes()), Bytes::MiB(1));
}

TEST(AllocatorConfigTest, BuildsTheBfcPolicy) {
  AllocatorConfig c = DefaultConfig(*BuiltinPolicies().Find("bfc"));
  absl::StatusOr<std::unique_ptr<Allocator>> a = BuildAllocator(c, Bytes::MiB(1));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ((*a)->name(), "bfc");
  EXPECT_EQ((*a)->GetStats().bytes_limit, int64_t{1} << 20);
}

}  // namespace
}  // namespace hbmsim
