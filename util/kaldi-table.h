// util/kaldi-table.h: Kaldi's tables: collections of (key, value) pairs read and written through
// specifiers: SequentialTableReader, RandomAccessTableReader (and its Mapped form) and
// TableWriter, over archives and scp files; the specifier parsers and the scp file functions.
// SPDX-License-Identifier: Apache-2.0
//
// Specifiers: "<options>:<filename>", options comma-separated, exactly one of ark or scp (both,
// "ark,scp:a.ark,a.scp", for writing):
//   rspecifier (reading): ark | scp, and
//     o / no    once: each key is asked for at most once (random access frees values after use)
//     s / ns    sorted: the archive or scp is sorted by key (random access can stop early)
//     cs / ncs  called sorted: keys are asked for in sorted order (random access frees earlier
//               values)
//     p / np    permissive: an entry that fails to read is skipped (scp) or ends the archive,
//               with a warning, instead of an error; random access reports it as a missing key
//     bg        background: a thread reads the next entry while the caller works on this one
//     b, t      accepted and ignored (the data says whether it is binary)
//   wspecifier (writing): ark | scp | ark,scp, and
//     b / t     binary (the default) or text
//     f / nf    flush after every entry, or not (the default)
//     p         permissive: with scp, keys missing from the scp file are skipped, not an error
//   The filename is an rxfilename / wxfilename (util/kaldi-io.h): files, "-", pipes, and for
//   reading "file:offset". "ark,scp:a.ark,a.scp" splits the names at the first comma.
// Archive format: per entry the key (a token), one space, then the holder's Write output
// (util/kaldi-holder.h) — for binary values "\0B" and the data. An scp file has lines
// "<key> <rxfilename>", the rxfilename may end in a range "[0:9]" or "[0:9,2:3]" (matrices).
// "ark,scp" writes the scp lines "<key> <archive>:<offset of the value>".
//
// Errors: the constructors throw cuctx::Error for a specifier that is malformed, or whose file
// cannot be opened (Open() returns false after a warning instead). Malformed or truncated data
// throws from the call that meets it (the constructor, Next(), Value(), HasKey()) with a message
// naming the specifier, the key and the byte offset; a failing pipe command is reported with
// its exit status when the archive ends; a key missing from a random-access table is named. A
// writer's Write() throws if the key is not a token or the value cannot be written; it serializes
// the whole entry before appending it, so an entry it refuses leaves nothing in the archive.
// Destructors never throw: an error met only while closing is logged (call Close() to see it).
//
// Threads: a table object belongs to one thread at a time; "bg" adds one reading thread that the
// object owns and joins on Close().
#ifndef CUCTX_UTIL_KALDI_TABLE_H_
#define CUCTX_UTIL_KALDI_TABLE_H_

#include "base/error.h"
#include "base/kaldi-common.h"  // as Kaldi's header does: ported code relies on it

#include "util/kaldi-holder.h"
#include "util/kaldi-io.h"
#include "util/stl-utils.h"  // Kaldi's table headers bring it (Uniq, SortAndUniq, ...)
#include <istream>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace cuctx {

enum WspecifierType { kNoWspecifier, kArchiveWspecifier, kScriptWspecifier, kBothWspecifier };

struct WspecifierOptions {
  bool binary = true;
  bool flush = false;
  bool permissive = false;
};

// Parses a wspecifier; on kNoWspecifier the outputs are cleared. Any output may be null.
WspecifierType ClassifyWspecifier(const std::string& wspecifier, std::string* archive_wxfilename,
                                  std::string* script_wxfilename, WspecifierOptions* opts);

enum RspecifierType { kNoRspecifier, kArchiveRspecifier, kScriptRspecifier };

struct RspecifierOptions {
  bool once = false;
  bool sorted = false;
  bool called_sorted = false;
  bool permissive = false;
  bool background = false;
};

// Parses an rspecifier; on kNoRspecifier *rxfilename is cleared. Any output may be null.
RspecifierType ClassifyRspecifier(const std::string& rspecifier, std::string* rxfilename,
                                  RspecifierOptions* opts);

// Reads an scp file: one "<key> <rxfilename>" per line (whitespace around and between trimmed;
// the rxfilename may contain spaces). Returns false, with a warning naming the line if `warn`,
// for a line without both parts or whose key is not a token; *script_out then holds the lines
// before it.
bool ReadScriptFile(std::istream& is, bool warn,
                    std::vector<std::pair<std::string, std::string>>* script_out);
bool ReadScriptFile(const std::string& rxfilename, bool warn,
                    std::vector<std::pair<std::string, std::string>>* script_out);
// Writes the lines "<key> <rxfilename>\n"; false (after a warning) for a key that is not a token,
// a filename that is not a line, or a write failure.
bool WriteScriptFile(std::ostream& os,
                     const std::vector<std::pair<std::string, std::string>>& script);
bool WriteScriptFile(const std::string& wxfilename,
                     const std::vector<std::pair<std::string, std::string>>& script);

namespace internal {
// ReadScriptFile(rxfilename, ...) that puts the reason for a failure in *error, without logging.
bool ReadScriptFileOrExplain(const std::string& rxfilename,
                             std::vector<std::pair<std::string, std::string>>* script_out,
                             std::string* error);
template <class Holder>
class SequentialImpl;
template <class Holder>
class RandomAccessImpl;
template <class Holder>
class WriterImpl;
}  // namespace internal

// Reads the entries of a table in order:
//   for (SequentialBaseFloatMatrixReader r("ark:feats.ark"); !r.Done(); r.Next())
//     Use(r.Key(), r.Value());
template <class Holder>
class SequentialTableReader {
 public:
  typedef typename Holder::T T;
  SequentialTableReader();
  // Opens (unless `rspecifier` is empty) and positions at the first entry; throws on failure.
  explicit SequentialTableReader(const std::string& rspecifier);
  SequentialTableReader(const SequentialTableReader&) = delete;
  SequentialTableReader& operator=(const SequentialTableReader&) = delete;
  ~SequentialTableReader();

  // Closes what is open and opens `rspecifier`. False (after a warning) for a malformed
  // specifier or an input that cannot be opened; throws for malformed data in the first entry.
  bool Open(const std::string& rspecifier);
  bool IsOpen() const;
  // True once every entry has been visited (or the table is not open).
  bool Done();
  // The current key; requires !Done().
  std::string Key();
  // The current value (read now for scp tables); requires !Done(). Valid until Next() or
  // FreeCurrent(); the caller may modify or swap it.
  T& Value();
  // Releases the current value's memory (Kaldi's FreeCurrent).
  void FreeCurrent();
  // Moves to the next entry.
  void Next();
  // Closes; false if an error was met and tolerated, or a pipe's command failed (logged).
  bool Close();

 private:
  std::unique_ptr<internal::SequentialImpl<Holder>> impl_;
};

// Looks values up by key. Value()'s reference stays valid until the next call on the reader.
template <class Holder>
class RandomAccessTableReader {
 public:
  typedef typename Holder::T T;
  RandomAccessTableReader();
  explicit RandomAccessTableReader(const std::string& rspecifier);
  RandomAccessTableReader(const RandomAccessTableReader&) = delete;
  RandomAccessTableReader& operator=(const RandomAccessTableReader&) = delete;
  ~RandomAccessTableReader();

  bool Open(const std::string& rspecifier);
  bool IsOpen() const;
  bool Close();
  // True if `key` is in the table (with "p", also readable).
  bool HasKey(const std::string& key);
  // The value of `key`; throws naming the key and the table if it is not there or cannot be read.
  const T& Value(const std::string& key);

 private:
  std::unique_ptr<internal::RandomAccessImpl<Holder>> impl_;
};

// A RandomAccessTableReader whose keys go through a map first (Kaldi's utt2spk idiom): with a
// non-empty `utt2spk_rxfilename`, a text file of "<utt> <spk>" lines, Value(utt) looks up
// spk; with an empty one it is a plain random-access reader.
template <class Holder>
class RandomAccessTableReaderMapped {
 public:
  typedef typename Holder::T T;
  RandomAccessTableReaderMapped() = default;
  RandomAccessTableReaderMapped(const std::string& table_rxfilename,
                                const std::string& utt2spk_rxfilename);
  bool Open(const std::string& table_rxfilename, const std::string& utt2spk_rxfilename);
  bool HasKey(const std::string& key);
  const T& Value(const std::string& key);
  bool IsOpen() const { return reader_.IsOpen(); }
  bool Close();

 private:
  // The key that `key` maps to; throws if the map lacks it (when `must` is set).
  bool MapKey(const std::string& key, bool must, std::string* mapped) const;
  RandomAccessTableReader<Holder> reader_;
  std::vector<std::pair<std::string, std::string>> utt2spk_;  // sorted by utterance
  std::string table_rxfilename_, utt2spk_rxfilename_;
};

// Writes entries to an archive, to the files an scp file names, or to an archive and an scp file
// indexing it.
template <class Holder>
class TableWriter {
 public:
  typedef typename Holder::T T;
  TableWriter();
  explicit TableWriter(const std::string& wspecifier);
  TableWriter(const TableWriter&) = delete;
  TableWriter& operator=(const TableWriter&) = delete;
  ~TableWriter();

  bool Open(const std::string& wspecifier);
  bool IsOpen() const;
  // Writes one entry; throws (naming the key and the table) if it could not be written.
  void Write(const std::string& key, const T& value) const;
  // Flushes what is buffered.
  void Flush();
  // Flushes and closes; false (logged) if anything failed.
  bool Close();

 private:
  std::unique_ptr<internal::WriterImpl<Holder>> impl_;
};

namespace internal {

// What the tables throw when a specifier is malformed or its file cannot be opened; Open()
// turns it into a warning and false.
class TableOpenError : public Error {
 public:
  explicit TableOpenError(const std::string& what) : Error(what) {}
};
std::string InvalidRspecifierMessage(const std::string& rspecifier);
std::string InvalidWspecifierMessage(const std::string& wspecifier);

// "error reading <table>: entry '<key>' (at byte N): <cause>", as a cuctx::Error.
[[noreturn]] void ThrowTableError(const std::string& table, const std::string& key, int64 offset,
                                  const std::string& cause);
// For messages: the specifier quoted.
std::string PrintableSpecifier(const std::string& specifier);
// The position of a stream for messages (-1 if unknown), clearing nothing.
int64 TellOrMinusOne(std::istream& is);

}  // namespace internal

}  // namespace cuctx

// The template bodies, in this order (the random-access readers use the sequential ones).
#include "util/kaldi-table-random-inl.h"
#include "util/kaldi-table-reader-inl.h"
#include "util/kaldi-table-writer-inl.h"

#endif  // CUCTX_UTIL_KALDI_TABLE_H_
