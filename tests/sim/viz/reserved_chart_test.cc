// The HTML hook for "reserved, explained" (issue 46, item 1): a report input
// carrying reserved_explained draws each moment as a stacked bar by cause.
#include "sim/viz/reserved_chart.h"

#include <string>

#include "gtest/gtest.h"

namespace hbmsim::sim::viz {
namespace {

using Json = nlohmann::ordered_json;

TEST(ReservedChart, NoDataNoSection) {
  ReplayReportInput in;
  EXPECT_EQ(ReservedSection(in), "");
}

TEST(ReservedChart, EachMomentIsABarWhosePartsAddUp) {
  ReplayReportInput in;
  in.reserved_explained = Json::parse(R"({
    "peak": {"reserved": 4194304, "parts": [{"cause": "requested", "bytes": 3145728},
                                             {"cause": "whole free segments", "bytes": 1048576}]},
    "end": {"reserved": 2097152, "parts": [{"cause": "requested", "bytes": 1048576}]}})");
  const std::string html = ReservedSection(in);
  EXPECT_NE(html.find("<h2>Reserved, explained</h2>"), std::string::npos);
  EXPECT_NE(html.find("<h3>At the peak: 4.00MiB reserved</h3>"), std::string::npos) << html;
  EXPECT_NE(html.find("<rect x=\"0.00\" y=\"0\" width=\"750.00\" height=\"28\" fill=\"#0072b2\" "
                      "data-bytes=\"3145728\"><title>requested: 3.00MiB</title></rect>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<rect x=\"750.00\" y=\"0\" width=\"250.00\" height=\"28\" fill=\"#e69f00\" "
                      "data-bytes=\"1048576\"><title>whole free segments: 1.00MiB</title></rect>"),
            std::string::npos);
  EXPECT_EQ(html.find("At the first failure"), std::string::npos);
  // A moment whose parts do not add up says so rather than drawing a short bar silently.
  EXPECT_NE(html.find("<p>The parts add up to 1048576 B, not the 2097152 B reserved.</p>"), std::string::npos);
  // The peak's parts add up: no such line for it.
  EXPECT_EQ(html.find("not the 4194304 B reserved"), std::string::npos);
}

// A part of free blocks names who freed it in the legend: the top three
// labels with their bytes, then how many more; other parts leave the cell empty.
TEST(ReservedChart, LegendNamesTheFreesOfAPart) {
  ReplayReportInput in;
  in.reserved_explained = Json::parse(R"({
    "end": {"reserved": 4194304, "parts": [
      {"cause": "requested", "bytes": 1048576},
      {"cause": "inactive_split", "bytes": 3145728, "freed_by": [
        {"label": "model.py:88 forward", "bytes": 1048576}, {"label": "<b>", "bytes": 1048576},
        {"label": "c", "bytes": 524288}, {"label": "d", "bytes": 262144}, {"label": "e", "bytes": 262144}]}]}})");
  const std::string html = ReservedSection(in);
  EXPECT_NE(html.find("<th class=\"l\">freed by</th></tr>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>1048576</td><td>1.00MiB</td><td>25.0%</td><td class=\"l\"></td></tr>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td class=\"l\">model.py:88 forward 1.00MiB; &lt;b&gt; 1.00MiB; c 512.0KiB; 2 more</td>"),
            std::string::npos)
      << html;
}

}  // namespace
}  // namespace hbmsim::sim::viz
