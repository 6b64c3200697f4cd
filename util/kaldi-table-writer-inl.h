// util/kaldi-table-writer-inl.h: the writers behind TableWriter: archive (optionally with an scp
// index, "ark,scp") and scp (each value to the file its scp line names). Each entry is serialized
// into a buffer first and appended whole, so a value that fails to serialize leaves nothing
// behind. Included by util/kaldi-table.h only.
// SPDX-License-Identifier: Apache-2.0
// The declarations; this file is included at their end (and compiles on its own).
#include "util/kaldi-table.h"

#ifndef CUCTX_UTIL_KALDI_TABLE_WRITER_INL_H_
#define CUCTX_UTIL_KALDI_TABLE_WRITER_INL_H_

#include <algorithm>
#include <streambuf>

namespace cuctx {
namespace internal {

// A growable in-memory output buffer, reused from entry to entry.
class EntryBuffer : public std::streambuf {
 public:
  void Clear() { data_.clear(); }
  const std::string& Data() const { return data_; }

 protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof()))
      data_.push_back(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    data_.append(s, static_cast<size_t>(n));
    return n;
  }

 private:
  std::string data_;
};

// Serializes `value` with Holder::Write into *buffer (cleared first); throws naming `table` and
// `key` if the holder fails.
template <class Holder>
void SerializeEntry(const std::string& table, const std::string& key, bool binary,
                    const typename Holder::T& value, EntryBuffer* buffer) {
  buffer->Clear();
  std::ostream os(buffer);
  bool ok = false;
  std::string cause = "the holder reported a failure";
  try {
    ok = Holder::Write(os, binary, value);
  } catch (const std::exception& e) {
    cause = e.what();
  }
  if (!ok)
    CUCTX_ERR << "cannot write entry '" << key << "' to " << table << ": " << cause
              << " (nothing of it was written)";
}

void CheckKey(const std::string& table, const std::string& key);

template <class Holder>
class WriterImpl {
 public:
  virtual ~WriterImpl() = default;
  virtual void Write(const std::string& key, const typename Holder::T& value) = 0;
  virtual void Flush() = 0;
  virtual bool Close() = 0;
};

template <class Holder>
class ArchiveWriterImpl : public WriterImpl<Holder> {
 public:
  ArchiveWriterImpl(const std::string& wspecifier, const std::string& archive_wxfilename,
                    const std::string& script_wxfilename, const WspecifierOptions& opts)
      : table_("archive " + PrintableSpecifier(wspecifier)),
        archive_wxfilename_(archive_wxfilename),
        opts_(opts),
        with_script_(!script_wxfilename.empty() ||
                     ClassifyWspecifier(wspecifier, nullptr, nullptr, nullptr) == kBothWspecifier) {
    if (with_script_ && ClassifyWxfilename(archive_wxfilename) != kFileOutput)
      throw TableOpenError("in " + PrintableSpecifier(wspecifier) +
                           ", the archive must be a file so that the scp lines can give offsets "
                           "into it (found " +
                           PrintableWxfilename(archive_wxfilename) + ")");
    std::string error;
    if (!archive_.Open(archive_wxfilename, opts.binary, false, &error) ||
        (with_script_ && !script_.Open(script_wxfilename, false, false, &error)))
      throw TableOpenError("cannot write " + table_ + ": " + error);
  }
  void Write(const std::string& key, const typename Holder::T& value) override {
    CheckKey(table_, key);
    SerializeEntry<Holder>(table_, key, opts_.binary, value, &value_buffer_);
    std::ostream& os = archive_.Stream();
    const int64 offset = static_cast<int64>(os.tellp()) + static_cast<int64>(key.size()) + 1;
    os.write(key.data(), static_cast<std::streamsize>(key.size()));
    os.put(' ');
    os.write(value_buffer_.Data().data(),
             static_cast<std::streamsize>(value_buffer_.Data().size()));
    if (opts_.flush) os.flush();
    if (!os.good())
      CUCTX_ERR << "writing entry '" << key << "' to " << table_ << " failed (disk full, or the "
                << "reading end of a pipe closed?)";
    if (with_script_) {
      std::ostream& ss = script_.Stream();
      ss << key << ' ' << archive_wxfilename_ << ':' << offset << '\n';
      if (opts_.flush) ss.flush();
      if (!ss.good())
        CUCTX_ERR << "writing the scp line of entry '" << key << "' of " << table_ << " failed";
    }
  }
  void Flush() override {
    archive_.Stream().flush();
    if (with_script_) script_.Stream().flush();
  }
  bool Close() override {
    std::string error;
    bool ok = archive_.Close(&error);
    if (!ok) CUCTX_WARN << error;
    if (with_script_ && !script_.Close(&error)) {
      CUCTX_WARN << error;
      ok = false;
    }
    return ok;
  }

 private:
  std::string table_, archive_wxfilename_;
  WspecifierOptions opts_;
  bool with_script_;
  Output archive_, script_;
  EntryBuffer value_buffer_;
};

template <class Holder>
class ScriptWriterImpl : public WriterImpl<Holder> {
 public:
  ScriptWriterImpl(const std::string& wspecifier, const std::string& script_rxfilename,
                   const WspecifierOptions& opts)
      : table_("scp " + PrintableSpecifier(wspecifier)), opts_(opts) {
    std::string error;
    if (!ReadScriptFileOrExplain(script_rxfilename, &script_, &error))
      throw TableOpenError("cannot read " + table_ + ": " + error);
    std::stable_sort(
        script_.begin(), script_.end(),
        [](const std::pair<std::string, std::string>& a,
           const std::pair<std::string, std::string>& b) { return a.first < b.first; });
  }
  void Write(const std::string& key, const typename Holder::T& value) override {
    CheckKey(table_, key);
    auto it = std::lower_bound(script_.begin(), script_.end(), key,
                               [](const std::pair<std::string, std::string>& a,
                                  const std::string& k) { return a.first < k; });
    if (it == script_.end() || it->first != key) {
      if (opts_.permissive) return;
      CUCTX_ERR << "key '" << key << "' is not in the scp file of " << table_
                << " (use \"p\" to skip such keys)";
    }
    SerializeEntry<Holder>(table_, key, opts_.binary, value, &buffer_);
    Output out;
    if (!out.Open(it->second, opts_.binary, false))
      CUCTX_ERR << "cannot open " << PrintableWxfilename(it->second) << " for entry '" << key
                << "' of " << table_;
    out.Stream().write(buffer_.Data().data(), static_cast<std::streamsize>(buffer_.Data().size()));
    std::string error;
    if (!out.Close(&error)) CUCTX_ERR << "entry '" << key << "' of " << table_ << ": " << error;
  }
  void Flush() override {}
  bool Close() override { return true; }

 private:
  std::string table_;
  WspecifierOptions opts_;
  std::vector<std::pair<std::string, std::string>> script_;  // sorted by key
  EntryBuffer buffer_;
};

template <class Holder>
std::unique_ptr<WriterImpl<Holder>> MakeWriterImpl(const std::string& wspecifier) {
  std::string archive, script;
  WspecifierOptions opts;
  WspecifierType type = ClassifyWspecifier(wspecifier, &archive, &script, &opts);
  if (type == kArchiveWspecifier || type == kBothWspecifier)
    return std::unique_ptr<WriterImpl<Holder>>(
        new ArchiveWriterImpl<Holder>(wspecifier, archive, script, opts));
  if (type == kScriptWspecifier)
    return std::unique_ptr<WriterImpl<Holder>>(
        new ScriptWriterImpl<Holder>(wspecifier, script, opts));
  throw TableOpenError(InvalidWspecifierMessage(wspecifier));
}

}  // namespace internal

template <class Holder>
TableWriter<Holder>::TableWriter() = default;

template <class Holder>
TableWriter<Holder>::TableWriter(const std::string& wspecifier) {
  if (!wspecifier.empty()) impl_ = internal::MakeWriterImpl<Holder>(wspecifier);
}

template <class Holder>
TableWriter<Holder>::~TableWriter() {
  if (impl_) Close();
}

template <class Holder>
bool TableWriter<Holder>::Open(const std::string& wspecifier) {
  if (impl_ && !Close())
    CUCTX_ERR << "failed to close the previous table before opening "
              << internal::PrintableSpecifier(wspecifier);
  try {
    impl_ = internal::MakeWriterImpl<Holder>(wspecifier);
  } catch (const internal::TableOpenError& e) {
    CUCTX_WARN << e.what();
    return false;
  }
  return true;
}

template <class Holder>
bool TableWriter<Holder>::IsOpen() const {
  return impl_ != nullptr;
}

template <class Holder>
void TableWriter<Holder>::Write(const std::string& key, const T& value) const {
  if (!impl_) CUCTX_ERR << "TableWriter::Write() called on a writer that is not open";
  impl_->Write(key, value);
}

template <class Holder>
void TableWriter<Holder>::Flush() {
  if (impl_) impl_->Flush();
}

template <class Holder>
bool TableWriter<Holder>::Close() {
  if (!impl_) return true;
  bool ok = impl_->Close();
  impl_.reset();
  return ok;
}

}  // namespace cuctx

#endif  // CUCTX_UTIL_KALDI_TABLE_WRITER_INL_H_
