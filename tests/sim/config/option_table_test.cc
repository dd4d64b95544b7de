// OptionTable: each option declared once, typed by its member, defaulted by
// the member's value, built into the typed options and read back as what ran.
// And the policy rows built from tables: effective options, texts.
#include "sim/config/option_table.h"

#include <optional>
#include <string>

#include "allocator/tpu/tpu_options.h"
#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "sim/config/allocator_config.h"
#include "sim/dumps/failure_texts.h"
#include "tests/sim/engine/fake_allocator.h"

namespace hbmsim {
namespace {

enum class Colour : uint8_t { kRed, kBlue };
std::string_view ColourName(Colour c) { return c == Colour::kRed ? "red" : "blue"; }

struct Knobs {
  Bytes limit;
  bool on = true;
  int small = 3;
  int64_t big = -4;
  double ratio = 0.5;
  Bytes size = Bytes::KiB(2);
  uint64_t raw_size = 256;
  std::string text = "hi";
  std::optional<double> fraction;
  Bytes cap = Bytes::Max();
  Colour colour = Colour::kBlue;
};

OptionTable<Knobs> KnobTable() {
  OptionTable<Knobs> t;
  t.Limit(&Knobs::limit);
  t.AddEditor(OptionName<std::string>{"preset"}, "sets several knobs; wins over them",
              [](const OptionValue& v, Knobs& k) {
                if (std::get<std::string>(v) == "tiny") k.size = Bytes(1);
                if (std::get<std::string>(v) == "bad") return absl::InvalidArgumentError("no such preset");
                return absl::OkStatus();
              });
  t.Add(OptionName<bool>{"on"}, &Knobs::on, "h");
  t.Add(OptionName<int64_t>{"small"}, &Knobs::small, "h");
  t.Add(OptionName<int64_t>{"big"}, &Knobs::big, "h");
  t.Add(OptionName<double>{"ratio"}, &Knobs::ratio, "h");
  t.Add(OptionName<Bytes>{"size"}, &Knobs::size, "h");
  t.Add(OptionName<Bytes>{"raw_size"}, &Knobs::raw_size, "h");
  t.Add(OptionName<std::string>{"text"}, &Knobs::text, "h");
  t.Add(OptionName<double>{"fraction"}, &Knobs::fraction, "h");
  t.AddZeroMeans(OptionName<Bytes>{"cap"}, &Knobs::cap, Bytes::Max(), "h");
  t.AddEnum(OptionName<std::string>{"colour"}, &Knobs::colour, "h", {Colour::kRed, Colour::kBlue},
            ColourName);
  return t;
}

std::string Describe(const std::vector<OptionSpec>& specs) {
  std::string out;
  for (const OptionSpec& s : specs)
    out += s.name + ":" + std::string(OptionTypeName(s.type)) + "=" + s.default_text + " ";
  return out;
}

std::string Text(const OptionValues& v) {
  std::string out;
  for (const auto& [k, value] : v.entries()) out += k + "=" + FormatOptionValue(value) + " ";
  return out;
}

TEST(OptionTableTest, TypesAndDefaultsComeFromTheMembersInDeclarationOrder) {
  EXPECT_EQ(Describe(KnobTable().Specs()),
            "preset:string= on:bool=true small:int=3 big:int=-4 ratio:double=0.5 size:bytes=2048 "
            "raw_size:bytes=256 text:string=hi fraction:double=0 cap:bytes=0 colour:enum=blue ");
  EXPECT_EQ(KnobTable().Specs().back().choices, (std::vector<std::string>{"red", "blue"}));
}

TEST(OptionTableTest, BuildWritesEveryMemberAndTheLimit) {
  const OptionTable<Knobs> t = KnobTable();
  OptionValues v = OptionValues::Defaults(t.Specs());
  ASSERT_TRUE(v.Set("on", false));
  ASSERT_TRUE(v.Set("small", int64_t{7}));
  ASSERT_TRUE(v.Set("raw_size", Bytes(512)));
  ASSERT_TRUE(v.Set("fraction", 0.25));
  ASSERT_TRUE(v.Set("cap", Bytes::MiB(1)));
  ASSERT_TRUE(v.Set("colour", std::string("red")));
  absl::StatusOr<Knobs> k = t.Build(Bytes(99), v);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->limit, Bytes(99));
  EXPECT_FALSE(k->on);
  EXPECT_EQ(k->small, 7);
  EXPECT_EQ(k->big, -4);
  EXPECT_EQ(k->raw_size, 512u);
  EXPECT_EQ(k->fraction, 0.25);
  EXPECT_EQ(k->cap, Bytes::MiB(1));
  EXPECT_EQ(k->colour, Colour::kRed);
  // The defaults build the default-constructed struct (0 stands for the unset/unlimited member).
  absl::StatusOr<Knobs> d = t.Build(Bytes(), OptionValues::Defaults(t.Specs()));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->fraction, std::nullopt);
  EXPECT_EQ(d->cap, Bytes::Max());
  EXPECT_EQ(d->size, Bytes::KiB(2));
}

TEST(OptionTableTest, TheEditorRunsLastAndEffectiveShowsWhatRan) {
  const OptionTable<Knobs> t = KnobTable();
  OptionValues v = OptionValues::Defaults(t.Specs());
  ASSERT_TRUE(v.Set("size", Bytes(4096)));
  ASSERT_TRUE(v.Set("preset", std::string("tiny")));
  absl::StatusOr<OptionValues> ran = t.Effective(v);
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_EQ(Text(*ran),
            "preset=tiny on=true small=3 big=-4 ratio=0.5 size=1 raw_size=256 text=hi fraction=0 cap=0 "
            "colour=blue ");
  ASSERT_TRUE(v.Set("preset", std::string("bad")));
  EXPECT_EQ(t.Build(Bytes(), v).status().message(), "preset: no such preset");
}

TEST(OptionTableTest, AnIntOutOfRangeIsRefused) {
  const OptionSpec small = KnobTable().Specs()[2];
  EXPECT_TRUE(ParseOptionValue(small, "2147483647").ok());
  EXPECT_EQ(ParseOptionValue(small, "2147483648").status().message(),
            "must be an int between -2147483648 and 2147483647");
}

TEST(OptionValuesTest, AskingForAnUnknownNameOrTypeIsAnError) {
  const OptionValues v = DefaultConfig(*BuiltinPolicies().Find("bfc")).options;
  EXPECT_EQ(v.Get<bool>("allow_growth").value_or(true), false);
  EXPECT_EQ(v.Get<bool>("allow_grwth").status().message(),
            "no option allow_grwth (known: allow_growth, garbage_collection, fragmentation_fraction, "
            "region_coalescing, first_region)");
  EXPECT_EQ(v.Get<Bytes>("allow_growth").status().message(), "option allow_growth holds another type");
}

TEST(PolicyRowTest, TorchShowsTheOptionsAnAllocConfSets) {
  AllocatorConfig c = DefaultConfig(*BuiltinPolicies().Find("torch"));
  ASSERT_TRUE(ApplySetOption(c, "expandable_segments=true").ok());
  ASSERT_TRUE(ApplySetOption(c, "alloc_conf=expandable_segments:False,max_split_size_mb:128").ok());
  absl::StatusOr<OptionValues> ran = c.policy->effective_options(c.options);
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_EQ(Text(*ran),
            "alloc_conf=expandable_segments:False,max_split_size_mb:128 expandable_segments=false "
            "max_split_size=134217728 max_non_split_rounding=20971520 large_segment_size=20971520 "
            "garbage_collection_threshold=0 per_process_memory_fraction=0 device_index=0 "
            "fixed_retry_search=false roundup_power2_divisions= ");
}

TEST(PolicyRowTest, EveryRowHasTextsAndTheDefaultsItsStructHas) {
  for (const PolicySpec& p : BuiltinPolicies().policies()) {
    EXPECT_TRUE(p.texts.at_failure) << p.name;
    EXPECT_TRUE(p.texts.stats) << p.name;
    ASSERT_TRUE(p.effective_options) << p.name;
    const OptionValues defaults = OptionValues::Defaults(p.options);
    absl::StatusOr<OptionValues> ran = p.effective_options(defaults);
    ASSERT_TRUE(ran.ok()) << p.name << ": " << ran.status();
    EXPECT_EQ(Text(*ran), Text(defaults)) << p.name;
  }
}

// A row's typed text given an allocator of another type falls back to the
// generic text instead of misreading it.
TEST(PolicyRowTest, ATypedTextOnAnotherAllocatorFallsBackToTheGenericOne) {
  testing::FakeAllocator fake(Bytes(2048));
  const PolicySpec& bfc = *BuiltinPolicies().Find("bfc");
  FailureRecord f;
  EXPECT_EQ(bfc.texts.at_failure(fake, f), GenericFailureText(fake, f));
  EXPECT_EQ(BuiltinPolicies().Find("torch")->texts.stats(fake),
            BuiltinPolicies().Find("bfc")->texts.stats(fake));
}

TEST(PolicyRowTest, RegisteringARowWithoutTextsGivesTheGenericOnes) {
  PolicyRegistry r;
  PolicySpec plain;
  plain.name = "plain";
  ASSERT_TRUE(r.Register(plain).ok());
  testing::FakeAllocator fake(Bytes(2048));
  EXPECT_EQ(r.Find("plain")->texts.at_failure(fake, FailureRecord{}),
            GenericFailureText(fake, FailureRecord{}));
  EXPECT_NE(r.Find("plain")->texts.stats(fake).find("(TensorFlow/JAX AllocatorStats names)"),
            std::string::npos);
}

}  // namespace
}  // namespace hbmsim
