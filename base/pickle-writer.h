// base/pickle-writer.h: PickleWriter, a small emitter of Python pickles (protocol 2) for plain data.
// SPDX-License-Identifier: Apache-2.0
//
// Writes the few value kinds that data files exchanged with Python tools need: None, bool, int
// (any 64-bit value, signed or not), float, str (UTF-8), list, dict and 2-tuples, nested freely.
// No memo (every value is written out in full), no classes: a reader needs nothing but Python's
// pickle module, so the file is safe to load and stable across Python versions (protocol 2 is read
// by every Python 3). Used by the memory snapshots (cudamatrix/cu-memory-snapshot.h).
//
// The caller writes a value tree depth-first:
//   PickleWriter w(&os);
//   w.BeginDict();
//   w.Str("segments"); w.BeginList(); ... w.EndList();
//   w.Str("n"); w.Int(3);
//   w.EndDict();
//   w.Finish();  // the STOP opcode; the pickle holds exactly one top-level value
// Inside a dict, keys and values alternate. Finish() checks that every Begin has its End and that
// exactly one top-level value was written (cuctx::Error otherwise). Write errors of the stream
// are the caller's to check. Not thread-safe (one writer per stream).
#ifndef CUCTX_BASE_PICKLE_WRITER_H_
#define CUCTX_BASE_PICKLE_WRITER_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace cuctx {

class PickleWriter {
 public:
  // Writes the protocol header to *os, which must outlive the writer.
  explicit PickleWriter(std::ostream* os);

  void None();
  void Bool(bool value);
  void Int(int64_t value);
  void UInt(uint64_t value);
  void Float(double value);
  void Str(const std::string& value);

  void BeginList();
  void EndList();
  void BeginDict();
  void EndDict();
  // Makes a tuple of the last two values written (BeginTuple is not needed: the opcode pops two).
  void Tuple2();

  // Ends the pickle; throws cuctx::Error if a list or dict is still open or the pickle does not
  // hold exactly one top-level value.
  void Finish();

 private:
  void Op(unsigned char op) { os_->put(static_cast<char>(op)); }
  void Bytes(const unsigned char* data, size_t n);
  void Value();  // counts a value at the current nesting level

  std::ostream* os_;
  std::vector<char> open_;  // 'l' or 'd' per open container
  int64_t top_values_ = 0;
};

}  // namespace cuctx

#endif  // CUCTX_BASE_PICKLE_WRITER_H_
