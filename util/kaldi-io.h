// util/kaldi-io.h: Kaldi's extended filenames: Input (rxfilenames) and Output (wxfilenames), their
// classification and printable forms, and ReadKaldiObject / WriteKaldiObject.
// SPDX-License-Identifier: Apache-2.0
//
// An rxfilename (for reading) is one of:
//   "-" or ""          standard input
//   "some/file"        a file
//   "command |"        the standard output of a shell command (popen)
//   "some/file:1234"   a file, read from byte offset 1234 (what scp files written with an archive
//                      contain)
// A wxfilename (for writing) is one of:
//   "-" or ""          standard output
//   "some/file"        a file, created or truncated
//   "| command"        the standard input of a shell command
// A name with leading or trailing whitespace, an input pipe used for output (or the reverse), an
// offset used for output, or a table specifier ("ark:...", "scp:...", "ark,t:-") is none of
// these: Classify* return kNoInput / kNoOutput and Open refuses it with a message that says so
// (so a specifier given where a plain filename is expected never becomes a file of that name).
//
// Binary header: Kaldi's binary objects start with "\0B". Input(name, &binary) consumes it if
// present and sets binary; Output(name, true) writes it (Output(name, false) writes nothing and
// sets the text precision as Kaldi's writers do).
//
// Errors: constructors and Stream() on a closed object throw cuctx::Error; Open returns false
// after a warning that names the file and the OS error (strerror). A pipe's command that exits
// with a nonzero status is reported by Close (Input::Close returns the status; Output::Close
// returns false after a warning naming the command and its status).
//
// Speed: files, pipes and standard streams go through FdStreamBuf (util/fd-streambuf.h): 128 KiB
// (reading) and 1 MiB (writing) buffers, with large reads and writes bypassing them.
//
// Threads: an Input or Output object belongs to one thread at a time. "-" for input shares one
// process-wide buffer over descriptor 0 (so several Inputs of "-" read one after another, as
// Kaldi's do through std::cin); "-" for output shares one over descriptor 1 and flushes std::cout
// and stdio's stdout before writing, so tool output stays in order.
#ifndef CUCTX_UTIL_KALDI_IO_H_
#define CUCTX_UTIL_KALDI_IO_H_

#include "base/error.h"
#include "base/io-funcs.h"
#include "base/kaldi-common.h"  // as Kaldi's header does: ported code relies on it
#include "base/types.h"

#include <istream>
#include <memory>
#include <ostream>
#include <string>

namespace cuctx {

enum OutputType { kNoOutput, kFileOutput, kStandardOutput, kPipeOutput };
enum InputType { kNoInput, kFileInput, kStandardInput, kOffsetFileInput, kPipeInput };

// Classifies a wxfilename / rxfilename as the file comment describes.
OutputType ClassifyWxfilename(const std::string& wxfilename);
InputType ClassifyRxfilename(const std::string& rxfilename);

// For messages: "standard input" / "standard output" for "-" and "", else the name in single
// quotes, with control bytes escaped.
std::string PrintableRxfilename(const std::string& rxfilename);
std::string PrintableWxfilename(const std::string& wxfilename);

// True if `name` has the shape of a table specifier, valid or not: comma-separated lowercase
// words of at most 3 letters, ark or scp among them, then ':' ("ark:x", "ark,t:-", "scp,zz:y").
// Such a name is refused as a plain rx/wxfilename.
bool LooksLikeTableSpecifier(const std::string& name);

class InputImpl;
class OutputImpl;

class Output {
 public:
  // Opens `wxfilename`, writing the binary header if binary && write_header; throws
  // cuctx::Error naming the file and the reason on failure.
  Output(const std::string& wxfilename, bool binary, bool write_header = true);
  Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  // Closes (a failure is logged as a warning; call Close() to know).
  ~Output();

  // Opens, first closing what is open (throws if that close fails). Returns false, after a
  // warning naming the file and the reason, if it cannot be opened.
  bool Open(const std::string& wxfilename, bool binary, bool write_header);
  // As Open, but puts the reason in *error instead of logging it (cuctx's addition).
  bool Open(const std::string& wxfilename, bool binary, bool write_header, std::string* error);
  bool IsOpen() const;
  // The stream; throws if not open.
  std::ostream& Stream();
  // Flushes and closes; for a pipe waits for the command. Returns false (after a warning naming
  // the file or command, and the OS error or exit status) if anything failed. True if not open.
  bool Close();
  // As Close(), but puts the message in *error instead of logging it (cuctx's addition).
  bool Close(std::string* error);

 private:
  // Opens; returns "" or the reason it failed.
  std::string OpenOrExplain(const std::string& wxfilename, bool binary, bool write_header);
  std::unique_ptr<OutputImpl> impl_;
};

class Input {
 public:
  // Opens `rxfilename`; if contents_binary is not null, reads the binary header into it. Throws
  // cuctx::Error naming the file and the reason on failure.
  explicit Input(const std::string& rxfilename, bool* contents_binary = nullptr);
  Input();
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;
  ~Input();

  // Opens (closing what is open; reopening the same file at another offset only seeks).
  // Returns false, after a warning naming the file and the reason, on failure; the object is
  // then closed.
  bool Open(const std::string& rxfilename, bool* contents_binary = nullptr);
  // As Open, but puts the reason in *error instead of logging it (cuctx's addition).
  bool Open(const std::string& rxfilename, bool* contents_binary, std::string* error);
  // As Open; files are always read in binary mode on POSIX, so this is the same.
  bool OpenTextMode(const std::string& rxfilename);
  bool IsOpen() const;
  // The stream; throws if not open.
  std::istream& Stream();
  // Closes. Returns 0, or for a pipe whose command exited with a nonzero status that status
  // (after a warning naming the command), or -1 if it was killed by a signal or a read failed.
  int32 Close();
  // As Close(), but puts the message in *error instead of logging it (cuctx's addition).
  int32 Close(std::string* error);
  // The OS error (errno) of a failed read on the open input, or 0.
  int ReadErrno() const;

 private:
  std::unique_ptr<InputImpl> impl_;
};

// Reads an object (anything with Read(std::istream&, bool binary)) from an rxfilename, in the
// mode its header gives. Throws cuctx::Error naming the input: if it cannot be opened, with
// Read's message prefixed by "reading <name>: " for malformed data, or if a pipe's command fails.
template <class C>
void ReadKaldiObject(const std::string& rxfilename, C* c) {
  bool binary_in = false;
  Input ki(rxfilename, &binary_in);
  try {
    c->Read(ki.Stream(), binary_in);
  } catch (const Error& e) {
    std::string pipe_error;  // a failed command explains a truncated stream
    ki.Close(&pipe_error);
    throw Error("reading " + PrintableRxfilename(rxfilename) + ": " + e.what() +
                (pipe_error.empty() ? "" : " (" + pipe_error + ")"));
  }
  std::string error;
  if (ki.Close(&error) != 0)
    CUCTX_ERR << "reading " << PrintableRxfilename(rxfilename) << ": " << error;
}

template <typename Real>
class Matrix;
// Matrices also take Kaldi's range form "feats.ark:1234[0:9]" or "m.mat[0:9,2:3]" (rows, and
// optionally columns, inclusive; defined in kaldi-holder.cc). A range that does not fit throws.
template <>
void ReadKaldiObject(const std::string& rxfilename, Matrix<float>* m);
template <>
void ReadKaldiObject(const std::string& rxfilename, Matrix<double>* m);

// Writes an object (anything with Write(std::ostream&, bool binary) const) to a wxfilename,
// with the binary header when binary, then closes; throws cuctx::Error naming the output if
// writing or closing failed.
template <class C>
void WriteKaldiObject(const C& c, const std::string& wxfilename, bool binary) {
  Output ko(wxfilename, binary);
  c.Write(ko.Stream(), binary);
  std::string error;
  if (!ko.Close(&error)) CUCTX_ERR << error;
}

}  // namespace cuctx

#endif  // CUCTX_UTIL_KALDI_IO_H_
