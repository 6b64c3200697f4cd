// util/kaldi-table-reader-inl.h: the sequential readers behind SequentialTableReader (archive,
// scp, background thread) and the archive-entry and scp-entry readers that the random-access
// readers share. Included by util/kaldi-table.h only.
// SPDX-License-Identifier: Apache-2.0
// The declarations; this file is included at their end (and compiles on its own).
#include "util/kaldi-table.h"

#ifndef CUCTX_UTIL_KALDI_TABLE_READER_INL_H_
#define CUCTX_UTIL_KALDI_TABLE_READER_INL_H_

#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace cuctx {
namespace internal {

// Reads a holder's value, turning a false return or any exception into cuctx::Error's cause.
template <class Holder>
void ReadHolderOrThrow(std::istream& is, Holder* holder, const std::string& table,
                       const std::string& key, int64 offset) {
  bool ok = false;
  try {
    ok = holder->Read(is);
  } catch (const Error& e) {
    ThrowTableError(table, key, offset, e.what());
  } catch (const std::exception& e) {
    ThrowTableError(table, key, offset, e.what());
  }
  if (!ok) ThrowTableError(table, key, offset, "the value could not be read");
}

// Reads one archive entry after another from an open Input.
template <class Holder>
class ArchiveEntryReader {
 public:
  // Opens the archive; throws naming `table` if it cannot be opened.
  void Open(const std::string& table, const std::string& rxfilename) {
    table_ = table;
    rxfilename_ = rxfilename;
    std::string error;
    if (!input_.Open(rxfilename, nullptr, &error))
      throw TableOpenError("cannot read " + table + ": " + error);
  }
  // Reads the next entry into *key and *holder; returns false at the end of the archive (after
  // checking that a pipe's command succeeded). Throws for malformed data.
  bool ReadNext(std::string* key, Holder* holder) {
    if (!input_.IsOpen()) return false;
    std::istream& is = input_.Stream();
    is >> std::ws;
    if (is.peek() == std::char_traits<char>::eof()) {
      Finish();
      return false;
    }
    const int64 key_offset = TellOrMinusOne(is);
    key->clear();
    is >> *key;
    const int c = is.peek();
    if (c != ' ' && c != '\t' && c != '\n') {
      std::string found = c == std::char_traits<char>::eof() ? std::string("end of stream")
                                                             : "byte " + std::to_string(c);
      ThrowTableError(table_, "", key_offset,
                      "after the key \"" + *key + "\" expected a space, found " + found +
                          " (not an archive, or truncated?)");
    }
    if (c != '\n') is.get();
    const int64 offset = TellOrMinusOne(is);
    try {
      ReadHolderOrThrow(is, holder, table_, *key, offset);
    } catch (const Error& e) {
      std::string pipe_error;
      input_.Close(&pipe_error);
      if (pipe_error.empty()) throw;
      throw Error(std::string(e.what()) + " (" + pipe_error + ")");
    }
    return true;
  }
  // Closes; throws if a pipe's command failed.
  void Finish() {
    std::string error;
    input_.Close(&error);
    if (!error.empty()) ThrowTableError(table_, "", -1, error);
  }
  bool IsOpen() const { return input_.IsOpen(); }
  void Close() {
    std::string ignored;
    input_.Close(&ignored);
  }

 private:
  Input input_;
  std::string table_, rxfilename_;
};

// Reads the value an scp line names ("file", "file:offset", "cmd |", each with an optional range)
// into *holder through *input (kept open between calls, so entries of one archive are reached by
// seeking). Throws naming `table` and `key`.
template <class Holder>
void ReadScriptEntry(const std::string& table, const std::string& key,
                     const std::string& rxfilename_with_range, Input* input, Holder* holder) {
  std::string rxfilename, range;
  if (!ExtractRangeSpecifier(rxfilename_with_range, &rxfilename, &range))
    ThrowTableError(table, key, -1, "malformed range in \"" + rxfilename_with_range + "\"");
  std::string open_error;
  if (!input->Open(rxfilename, nullptr, &open_error)) ThrowTableError(table, key, -1, open_error);
  const std::string where = table + " (from " + PrintableRxfilename(rxfilename) + ")";
  const int64 offset = TellOrMinusOne(input->Stream());
  if (range.empty()) {
    ReadHolderOrThrow(input->Stream(), holder, where, key, offset);
  } else {
    Holder whole;
    ReadHolderOrThrow(input->Stream(), &whole, where, key, offset);
    bool ok = false;
    try {
      ok = holder->ExtractRange(whole, range);
    } catch (const Error& e) {
      ThrowTableError(where, key, -1, e.what());
    }
    if (!ok) ThrowTableError(where, key, -1, "could not extract the range [" + range + "]");
  }
  if (ClassifyRxfilename(rxfilename) == kPipeInput) {
    std::string error;
    if (input->Close(&error) != 0) ThrowTableError(where, key, -1, error);
  }
}

template <class Holder>
class SequentialImpl {
 public:
  virtual ~SequentialImpl() = default;
  virtual bool Done() = 0;
  virtual const std::string& Key() = 0;
  virtual Holder& CurrentHolder() = 0;  // loads the value if it is not loaded yet
  virtual void FreeCurrent() = 0;
  virtual void Next() = 0;
  virtual bool Close() = 0;
};

template <class Holder>
class SequentialArchiveImpl : public SequentialImpl<Holder> {
 public:
  SequentialArchiveImpl(const std::string& rspecifier, const std::string& rxfilename,
                        const RspecifierOptions& opts)
      : table_("archive " + PrintableSpecifier(rspecifier)), opts_(opts) {
    reader_.Open(table_, rxfilename);
    Next();
  }
  bool Done() override { return done_; }
  const std::string& Key() override { return key_; }
  Holder& CurrentHolder() override { return holder_; }
  void FreeCurrent() override { holder_.Clear(); }
  void Next() override {
    if (done_ && started_) return;
    started_ = true;
    try {
      done_ = !reader_.ReadNext(&key_, &holder_);
    } catch (const Error& e) {
      done_ = true;
      if (!opts_.permissive) throw;
      CUCTX_WARN << e.what() << " (permissive: treating it as the end of the archive)";
      reader_.Close();
    }
  }
  bool Close() override {
    reader_.Close();
    done_ = true;
    return true;
  }

 private:
  ArchiveEntryReader<Holder> reader_;
  std::string table_;
  RspecifierOptions opts_;
  std::string key_;
  Holder holder_;
  bool done_ = true, started_ = false;
};

template <class Holder>
class SequentialScriptImpl : public SequentialImpl<Holder> {
 public:
  SequentialScriptImpl(const std::string& rspecifier, const std::string& rxfilename,
                       const RspecifierOptions& opts)
      : table_("scp " + PrintableSpecifier(rspecifier)), opts_(opts) {
    std::string error;
    if (!ReadScriptFileOrExplain(rxfilename, &script_, &error))
      throw TableOpenError("cannot read " + table_ + ": " + error);
    Settle();
  }
  bool Done() override { return index_ >= script_.size(); }
  const std::string& Key() override { return script_[index_].first; }
  Holder& CurrentHolder() override {
    if (!loaded_) {
      ReadScriptEntry(table_, script_[index_].first, script_[index_].second, &input_, &holder_);
      loaded_ = true;
    }
    return holder_;
  }
  void FreeCurrent() override {
    holder_.Clear();
    loaded_ = false;
  }
  void Next() override {
    if (Done()) return;
    ++index_;
    loaded_ = false;
    Settle();
  }
  bool Close() override {
    input_.Close();
    index_ = script_.size();
    return true;
  }

 private:
  // Permissive: skips entries whose value cannot be read (reading each now).
  void Settle() {
    if (!opts_.permissive) return;
    while (!Done()) {
      try {
        CurrentHolder();
        return;
      } catch (const Error& e) {
        CUCTX_WARN << e.what() << " (permissive: skipping it)";
        ++index_;
        loaded_ = false;
      }
    }
  }
  std::string table_;
  RspecifierOptions opts_;
  std::vector<std::pair<std::string, std::string>> script_;
  size_t index_ = 0;
  bool loaded_ = false;
  Input input_;
  Holder holder_;
};

// Runs another reader one entry ahead on its own thread ("bg").
template <class Holder>
class SequentialBackgroundImpl : public SequentialImpl<Holder> {
 public:
  explicit SequentialBackgroundImpl(std::unique_ptr<SequentialImpl<Holder>> inner)
      : inner_(std::move(inner)) {
    TakeFromInner();
    thread_ = std::thread([this] { Work(); });
    if (!done_) Request();
  }
  ~SequentialBackgroundImpl() override { Stop(); }
  bool Done() override { return done_; }
  const std::string& Key() override { return key_; }
  Holder& CurrentHolder() override { return holder_; }
  void FreeCurrent() override { holder_.Clear(); }
  void Next() override {
    if (done_) return;
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [this] { return !busy_; });
    if (error_) {
      done_ = true;
      std::exception_ptr e = error_;
      error_ = nullptr;
      std::rethrow_exception(e);
    }
    lock.unlock();
    TakeFromInner();
    if (!done_) Request();
  }
  bool Close() override {
    Stop();
    done_ = true;
    return inner_->Close();
  }

 private:
  // Moves the inner reader's current entry here (reading it on this thread if it is lazy).
  void TakeFromInner() {
    done_ = inner_->Done();
    if (done_) return;
    key_ = inner_->Key();
    holder_.Swap(&inner_->CurrentHolder());
  }
  void Request() {
    std::lock_guard<std::mutex> lock(mutex_);
    busy_ = true;
    cv_.notify_all();
  }
  void Work() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [this] { return busy_ || stop_; });
      if (stop_) return;
      lock.unlock();
      std::exception_ptr error;
      try {
        inner_->Next();
        if (!inner_->Done()) inner_->CurrentHolder();  // read lazy values here too
      } catch (...) {
        error = std::current_exception();
      }
      lock.lock();
      error_ = error;
      busy_ = false;
      cv_.notify_all();
    }
  }
  void Stop() {
    if (!thread_.joinable()) return;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] { return !busy_; });
      stop_ = true;
      cv_.notify_all();
    }
    thread_.join();
  }

  std::unique_ptr<SequentialImpl<Holder>> inner_;
  std::string key_;
  Holder holder_;
  bool done_ = true;
  std::mutex mutex_;  // guards busy_, stop_, error_
  std::condition_variable cv_;
  bool busy_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

template <class Holder>
std::unique_ptr<SequentialImpl<Holder>> MakeSequentialImpl(const std::string& rspecifier) {
  std::string rxfilename;
  RspecifierOptions opts;
  RspecifierType type = ClassifyRspecifier(rspecifier, &rxfilename, &opts);
  std::unique_ptr<SequentialImpl<Holder>> impl;
  if (type == kArchiveRspecifier)
    impl.reset(new SequentialArchiveImpl<Holder>(rspecifier, rxfilename, opts));
  else if (type == kScriptRspecifier)
    impl.reset(new SequentialScriptImpl<Holder>(rspecifier, rxfilename, opts));
  else
    throw TableOpenError(InvalidRspecifierMessage(rspecifier));
  if (opts.background) impl.reset(new SequentialBackgroundImpl<Holder>(std::move(impl)));
  return impl;
}

}  // namespace internal

template <class Holder>
SequentialTableReader<Holder>::SequentialTableReader() = default;

template <class Holder>
SequentialTableReader<Holder>::SequentialTableReader(const std::string& rspecifier) {
  if (!rspecifier.empty()) impl_ = internal::MakeSequentialImpl<Holder>(rspecifier);
}

template <class Holder>
SequentialTableReader<Holder>::~SequentialTableReader() {
  if (impl_) Close();
}

template <class Holder>
bool SequentialTableReader<Holder>::Open(const std::string& rspecifier) {
  if (impl_) Close();
  try {
    impl_ = internal::MakeSequentialImpl<Holder>(rspecifier);
  } catch (const Error& e) {
    if (dynamic_cast<const internal::TableOpenError*>(&e) == nullptr) throw;
    CUCTX_WARN << e.what();
    return false;
  }
  return true;
}

template <class Holder>
bool SequentialTableReader<Holder>::IsOpen() const {
  return impl_ != nullptr;
}

template <class Holder>
bool SequentialTableReader<Holder>::Done() {
  return !impl_ || impl_->Done();
}

template <class Holder>
std::string SequentialTableReader<Holder>::Key() {
  if (Done()) CUCTX_ERR << "SequentialTableReader::Key() called when Done() or not open";
  return impl_->Key();
}

template <class Holder>
typename Holder::T& SequentialTableReader<Holder>::Value() {
  if (Done()) CUCTX_ERR << "SequentialTableReader::Value() called when Done() or not open";
  return impl_->CurrentHolder().Value();
}

template <class Holder>
void SequentialTableReader<Holder>::FreeCurrent() {
  if (!Done()) impl_->FreeCurrent();
}

template <class Holder>
void SequentialTableReader<Holder>::Next() {
  if (Done()) CUCTX_ERR << "SequentialTableReader::Next() called when Done() or not open";
  impl_->Next();
}

template <class Holder>
bool SequentialTableReader<Holder>::Close() {
  if (!impl_) return true;
  bool ok = impl_->Close();
  impl_.reset();
  return ok;
}

}  // namespace cuctx

#endif  // CUCTX_UTIL_KALDI_TABLE_READER_INL_H_
