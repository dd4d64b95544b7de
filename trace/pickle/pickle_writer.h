// A streaming writer of plain-data pickles (protocol 4) that CPython's
// pickle.load and our Unpickle (unpickler.h) both read: None, bool, int, float,
// str, list, dict and 2-tuples, using only EMPTY_DICT/MARK/SETITEMS,
// EMPTY_LIST/APPENDS, TUPLE2, SHORT_BINUNICODE/BINUNICODE, BININT1/BININT2/
// BININT/LONG1, BINFLOAT, NEWTRUE/NEWFALSE, NONE and STOP — nothing that
// names or calls code — plus MEMOIZE and BINGET/LONG_BINGET for a list the
// caller shares (EndListShared, then Get): PyTorch's own snapshots share
// every frame list this way, and MemoryViz's unpickler reads it.
//
// Containers are written as CPython writes them: the empty container first,
// then its items in batches of at most 1000 between MARK and APPENDS/SETITEMS,
// so the reader's stack never holds more than one batch per open container.
//
//   w.BeginDict(); w.String("k"); w.Int(1); w.EndDict();   {'k': 1}
#ifndef HBMSIM_TRACE_PICKLE_PICKLE_WRITER_H_
#define HBMSIM_TRACE_PICKLE_PICKLE_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hbmsim::trace {

class PickleWriter {
 public:
  PickleWriter();  // writes the PROTO 4 header

  void None();
  void Bool(bool v);
  void Int(int64_t v);
  void UInt(uint64_t v);
  void Float(double v);
  void String(std::string_view utf8);

  void BeginList();
  void EndList();
  // Ends the list and keeps it in the memo; returns its memo index.
  uint32_t EndListShared();
  // The memo's value `index` (written earlier by EndListShared), again.
  void Get(uint32_t index);
  // Keys and values alternate; the caller writes an even number of values.
  void BeginDict();
  void EndDict();
  // Exactly two values follow, then EndTuple2.
  void BeginTuple2();
  void EndTuple2();

  // Appends STOP and returns the pickle; the writer is then empty.
  std::string Finish();

 private:
  static constexpr uint32_t kBatch = 1000;  // CPython's _BATCHSIZE
  enum class Open : uint8_t { kList, kDict, kTuple };
  struct Frame {
    Open kind;
    uint32_t pending = 0;  // values since the last MARK
  };

  void Op(uint8_t op) { out_.push_back(static_cast<char>(op)); }
  void Raw(uint64_t v, int bytes);  // little endian
  // Called after every complete value: counts it in the open container and
  // closes a full batch.
  void Done();

  std::string out_;
  std::vector<Frame> open_;
  uint32_t memo_ = 0;  // memo entries written
};

}  // namespace hbmsim::trace

#endif  // HBMSIM_TRACE_PICKLE_PICKLE_WRITER_H_
