// Rows talk through typed handles (issue 45): an option's name is written once
// (OptionName), and what refers to it — advice, decides_as, recorded settings,
// the docs — names an option the row declares, or registration says so at
// start-up with a message naming the policy and the option.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/all_layers.h"
#include "sim/config/policy_registry.h"

namespace hbmsim {
namespace {

std::string StatusText(const absl::Status& s) { return s.ok() ? "ok" : std::string(s.message()); }

constexpr OptionName<bool> kOn{"on"};
constexpr OptionName<Bytes> kSize{"size"};

// A row with two options, `on` (bool) and `size` (bytes, at least 1 byte).
PolicySpec TwoOptions(const char* name) {
  struct Opts {
    Bytes limit;
    bool on = false;
    Bytes size{64};
  };
  OptionTable<Opts> t;
  t.Limit(&Opts::limit);
  t.Add(kOn, &Opts::on, "h");
  t.Add(kSize, &Opts::size, "h", AtLeastOneByte);
  return MakePolicySpec<Opts>(
      name, "a test row", std::move(t),
      [](const Opts&) -> absl::StatusOr<std::unique_ptr<Allocator>> { return nullptr; });
}

TEST(OptionHandlesTest, TheBuiltinPoliciesRegisterWithoutAnError) {
  EXPECT_EQ(StatusText(BuiltinPoliciesStatus()), "ok");
  EXPECT_EQ(BuiltinPolicies().Names(),
            "best_fit, bfc, cuda_async, first_fit, ideal, offline, paged, torch, tpu");
}

// The error RegisterBuiltinPolicies used to drop with (void): registering the
// built-in rows into a registry that has them is the first row's duplicate.
TEST(OptionHandlesTest, ADuplicateRegistrationIsReturnedWithItsMessage) {
  PolicyRegistry r;
  ASSERT_EQ(StatusText(RegisterBuiltinPolicies(r)), "ok");
  const absl::Status again = RegisterBuiltinPolicies(r);
  EXPECT_TRUE(absl::IsAlreadyExists(again));
  EXPECT_EQ(StatusText(again), "policy first_fit registered twice");
}

TEST(OptionHandlesTest, AnAdviceRowNamingAnOptionTheRowLacksDoesNotRegister) {
  PolicyRegistry r;
  PolicySpec spec = TwoOptions("p");
  spec.advice = {{"", {{OptionName<bool>{"of"}, true}}, "P_ON=1"}};
  EXPECT_EQ(StatusText(r.Register(spec)),
            "policy p: advice 'P_ON=1': of: p has no such option (known: on, size)");
  EXPECT_EQ(r.Find("p"), nullptr);
}

TEST(OptionHandlesTest, AnEditOfAnotherTypeOrRefusedValueDoesNotRegister) {
  PolicyRegistry r;
  PolicySpec wrong_type = TwoOptions("p");
  wrong_type.advice = {{"", {{OptionName<double>{"size"}, 2.5}}, "P_SIZE=2.5"}};
  EXPECT_EQ(StatusText(r.Register(wrong_type)),
            "policy p: advice 'P_SIZE=2.5': size=2.5: '2.5' is not a size: a fraction needs a unit (1.5GiB); "
            "plain bytes are whole");
  PolicySpec bool_as_text = TwoOptions("p");
  bool_as_text.advice = {{"", {{OptionName<std::string>{"on"}, "true"}}, "P_ON=true"}};
  EXPECT_EQ(StatusText(r.Register(bool_as_text)),
            "policy p: advice 'P_ON=true': on=true: the value is not of the option's type (bool)");
  PolicySpec refused = TwoOptions("p");
  refused.advice = {{"", {{kSize, Bytes()}}, "P_SIZE=0"}};
  EXPECT_EQ(StatusText(r.Register(refused)), "policy p: advice 'P_SIZE=0': size=0: must be at least 1 byte");
}

TEST(OptionHandlesTest, ADecidesAsRuleNamingAnOptionTheRowLacksDoesNotRegister) {
  PolicyRegistry r;
  PolicySpec spec = TwoOptions("p");
  spec.decides_as = {{{kOn, false}, {OptionName<Bytes>{"sise"}, Bytes(64)}}};
  EXPECT_EQ(StatusText(r.Register(spec)),
            "policy p: decides_as: sise: p has no such option (known: on, size)");
}

TEST(OptionHandlesTest, DecidesAsSetsTheInertOptionOnlyWhileItsConditionHolds) {
  PolicySpec spec = TwoOptions("p");
  spec.decides_as = {{{kOn, false}, {kSize, Bytes(64)}}};
  OptionValues v = OptionValues::Defaults(spec.options);
  v.Set(kSize.name, Bytes(4096));
  EXPECT_EQ(*spec.DecidesAs(v).Get(kSize), Bytes(64));
  v.Set(kOn.name, true);
  EXPECT_EQ(*spec.DecidesAs(v).Get(kSize), Bytes(4096));
}

TEST(OptionHandlesTest, AdviceToAnotherPolicyIsCheckedOnceEveryRowIsIn) {
  PolicyRegistry r;
  PolicySpec a = TwoOptions("a");
  a.advice = {{"b", {{OptionName<bool>{"on"}, true}}, "USE_B=1"}};
  ASSERT_EQ(StatusText(r.Register(a)), "ok");
  EXPECT_EQ(StatusText(r.CheckAdviceTargets()), "policy a: advice 'USE_B=1': no policy b (registered: a)");
  PolicySpec b;
  b.name = "b";
  ASSERT_EQ(StatusText(r.Register(b)), "ok");
  EXPECT_EQ(StatusText(r.CheckAdviceTargets()),
            "policy a: advice 'USE_B=1': on: b has no such option (known: none)");
}

// Every recorded setting a row can produce names one of its options, with a
// value it accepts: settings with every field set, for each framework.
TEST(OptionHandlesTest, EveryRecordedSettingNamesADeclaredOption) {
  std::vector<RecordedSettings> all;
  for (Framework f : {Framework::kUnknown, Framework::kTensorFlow, Framework::kJax, Framework::kXla}) {
    for (bool host : {false, true}) {
      RecordedSettings s;
      s.alloc_conf = "max_non_split_rounding_mb:64,large_segment_size_mb:32";
      s.max_split_size = int64_t{256} << 20;
      s.expandable_segments = true;
      s.garbage_collection_threshold = 0.7;
      s.roundup_power2_divisions = {{1, 4}, {2, 8}};
      s.framework = f;
      if (host) s.host_memory = true;  // unset otherwise: a profile's device allocator may not say
      s.pool_grown = !host;
      all.push_back(s);
    }
  }
  int edits = 0;
  for (const PolicySpec& p : BuiltinPolicies().policies()) {
    if (!p.recording.recorded_options) continue;
    for (const RecordedSettings& s : all) {
      for (const OptionEdit& e : p.recording.recorded_options(s, DeviceId(3))) {
        EXPECT_EQ(StatusText(p.CheckEdit(e)), "ok") << p.name;
        ++edits;
      }
    }
  }
  // bfc: 3 edits for each of the 6 settings that say a framework or a host;
  // offline: rules=xla twice; torch: 7 for each of the 8.
  EXPECT_EQ(edits, 6 * 3 + 2 + 8 * 7);
}

std::string ReadRepoFile(const std::string& path) {
  std::ifstream in(std::string(HBMSIM_SOURCE_DIR) + "/" + path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The docs name options in prose ("option `granule`", "--set granule=..."):
// each is an option some row declares. `bogus` is docs/cli.md's unknown one.
TEST(OptionHandlesTest, EveryOptionTheDocsNameIsDeclared) {
  std::set<std::string> declared = {"bytes_limit"};
  for (const PolicySpec& p : BuiltinPolicies().policies()) {
    for (const OptionSpec& o : p.options) declared.insert(o.name);
  }
  const std::regex named(R"(options? `([a-z_0-9]+)`|--set ([a-z_0-9]+)=)");
  int found = 0;
  for (const char* doc : {"README.md", "docs/cli.md", "docs/what-if.md", "docs/tpu-model.md",
                          "docs/cuda-async-model.md", "docs/torch-model.md", "docs/formats/xla.md"}) {
    const std::string text = ReadRepoFile(doc);
    ASSERT_FALSE(text.empty()) << doc << " is missing";
    for (std::sregex_iterator m(text.begin(), text.end(), named), end; m != end; ++m) {
      const std::string option = (*m)[1].matched ? (*m)[1].str() : (*m)[2].str();
      if (option == "bogus") continue;
      EXPECT_TRUE(declared.count(option))
          << doc << " names option " << option << ", which no policy declares";
      ++found;
    }
  }
  EXPECT_GE(found, 18);
}

// docs/cli.md's table of bfc's options lists exactly the options bfc declares.
TEST(OptionHandlesTest, TheCliDocsTableOfBfcOptionsIsBfcsOptions) {
  const std::string cli = ReadRepoFile("docs/cli.md");
  const size_t table = cli.find("| option | default | meaning |");
  ASSERT_NE(table, std::string::npos) << "docs/cli.md has no bfc option table";
  std::set<std::string> listed;
  std::istringstream rows(cli.substr(table));
  std::string row;
  std::getline(rows, row);  // the header
  std::getline(rows, row);  // |---|
  while (std::getline(rows, row) && row.starts_with("| `"))
    listed.insert(row.substr(3, row.find('`', 3) - 3));
  std::set<std::string> declared;
  for (const OptionSpec& o : BuiltinPolicies().Find("bfc")->options) declared.insert(o.name);
  EXPECT_EQ(listed, declared);
}

}  // namespace
}  // namespace hbmsim
