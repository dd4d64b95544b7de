// XLA's own peak listing ("Live ranges at T (peak):" of HloLiveRange) beside
// hbmsim's peak live bytes, and the rules that make them differ
// (reference/tpu-and-xla.md §2.3, XLA's HloLiveRange):
//
//   moment  hbmsim's peak is the largest sum over logical times of the bytes
//           of the values live then (ends inclusive). XLA picks T with a sweep
//           that sizes each value by its defining instruction's whole shape
//           (an element of a tuple counts as the tuple's index table, 8 B per
//           element) and applies a value's end at end+1 after the starts of
//           that time, so T need not be the moment of the most live bytes.
//   values  at T the listing and hbmsim may size a value differently: older
//           XLA prints every value of a tuple-shaped instruction with the
//           instruction's size (its index table), not the element's own bytes;
//           aliases hbmsim merged into one buffer count once; a listed value
//           the buffer assignment gave no memory is not in hbmsim's sum.
//
//   hbmsim peak − XLA listed = (peak − hbmsim at T) + (hbmsim at T − listed)
#ifndef HBMSIM_TRACE_XLA_LISTED_PEAK_H_
#define HBMSIM_TRACE_XLA_LISTED_PEAK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "trace/xla/live_range_text.h"
#include "trace/xla/xla_trace.h"

namespace hbmsim::trace::xla {

// One instruction name whose bytes at T differ between the two.
struct NameDifference {
  std::string name;              // without its shape index
  std::vector<uint64_t> listed;  // XLA's entries of that name
  std::vector<uint64_t> hbmsim;  // hbmsim's live values of that name at T
};

struct PeakComparison {
  uint64_t listed_time = 0;
  uint64_t listed_bytes = 0;
  size_t listed_values = 0;
  uint64_t at_listed_time = 0;  // hbmsim's live bytes at T
  uint64_t peak = 0;            // hbmsim's peak live bytes
  uint64_t peak_time = 0;       // the first time it is reached
  std::vector<NameDifference> differences;
};

PeakComparison ComparePeak(const ListedPeak& listed, const std::vector<LiveInterval>& intervals);

// The comparison as report lines: the two numbers, then each rule's share.
std::vector<std::string> ExplainPeak(const PeakComparison& c);

}  // namespace hbmsim::trace::xla

#endif  // HBMSIM_TRACE_XLA_LISTED_PEAK_H_
