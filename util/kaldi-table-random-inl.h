// util/kaldi-table-random-inl.h: the random-access readers behind RandomAccessTableReader (scp:
// an index of the scp lines, values read on demand; archive: read forward as far as a key needs,
// keeping what was passed) and RandomAccessTableReaderMapped. Included by util/kaldi-table.h.
// SPDX-License-Identifier: Apache-2.0
// The declarations; this file is included at their end (and compiles on its own).
#include "util/kaldi-table.h"

#ifndef CUCTX_UTIL_KALDI_TABLE_RANDOM_INL_H_
#define CUCTX_UTIL_KALDI_TABLE_RANDOM_INL_H_

#include "util/kaldi-table-reader-inl.h"  // ArchiveEntryReader, ReadScriptEntry
#include <algorithm>
#include <map>

namespace cuctx {
namespace internal {

template <class Holder>
class RandomAccessImpl {
 public:
  virtual ~RandomAccessImpl() = default;
  virtual bool HasKey(const std::string& key) = 0;
  virtual const typename Holder::T& Value(const std::string& key) = 0;
  virtual bool Close() = 0;
};

template <class Holder>
class RandomAccessScriptImpl : public RandomAccessImpl<Holder> {
 public:
  RandomAccessScriptImpl(const std::string& rspecifier, const std::string& rxfilename,
                         const RspecifierOptions& opts)
      : table_("scp " + PrintableSpecifier(rspecifier)), opts_(opts) {
    std::string error;
    if (!ReadScriptFileOrExplain(rxfilename, &script_, &error))
      throw TableOpenError("cannot read " + table_ + ": " + error);
    std::stable_sort(
        script_.begin(), script_.end(),
        [](const std::pair<std::string, std::string>& a,
           const std::pair<std::string, std::string>& b) { return a.first < b.first; });
    for (size_t i = 1; i < script_.size(); ++i)
      if (script_[i].first == script_[i - 1].first)
        throw TableOpenError("duplicate key '" + script_[i].first + "' in " + table_);
  }
  bool HasKey(const std::string& key) override {
    const int64 i = Find(key);
    if (i < 0) return false;
    if (!opts_.permissive) return true;
    try {
      Load(i);
      return true;
    } catch (const Error& e) {
      CUCTX_WARN << e.what() << " (permissive: reporting the key as absent)";
      return false;
    }
  }
  const typename Holder::T& Value(const std::string& key) override {
    const int64 i = Find(key);
    if (i < 0) CUCTX_ERR << "key '" << key << "' is not in " << table_;
    Load(i);
    return holder_.Value();
  }
  bool Close() override {
    input_.Close();
    return true;
  }

 private:
  int64 Find(const std::string& key) const {
    auto it = std::lower_bound(script_.begin(), script_.end(), key,
                               [](const std::pair<std::string, std::string>& a,
                                  const std::string& k) { return a.first < k; });
    if (it == script_.end() || it->first != key) return -1;
    return it - script_.begin();
  }
  void Load(int64 i) {
    if (i == loaded_) return;
    loaded_ = -1;
    ReadScriptEntry(table_, script_[i].first, script_[i].second, &input_, &holder_);
    loaded_ = i;
  }
  std::string table_;
  RspecifierOptions opts_;
  std::vector<std::pair<std::string, std::string>> script_;  // sorted by key
  Input input_;
  Holder holder_;
  int64 loaded_ = -1;  // index of the entry in holder_
};

template <class Holder>
class RandomAccessArchiveImpl : public RandomAccessImpl<Holder> {
 public:
  RandomAccessArchiveImpl(const std::string& rspecifier, const std::string& rxfilename,
                          const RspecifierOptions& opts)
      : table_("archive " + PrintableSpecifier(rspecifier)), opts_(opts) {
    reader_.Open(table_, rxfilename);
  }
  bool HasKey(const std::string& key) override { return Find(key) != nullptr; }
  const typename Holder::T& Value(const std::string& key) override {
    Holder* holder = Find(key);
    if (holder == nullptr)
      CUCTX_ERR << "key '" << key << "' is not in " << table_
                << (opts_.sorted && !eof_ ? " (the archive is read as sorted: \"s\")" : "");
    if (opts_.once) erase_next_ = key;
    return holder->Value();
  }
  bool Close() override {
    reader_.Close();
    seen_.clear();
    return true;
  }

 private:
  Holder* Find(const std::string& key) {
    if (!erase_next_.empty()) {
      seen_.erase(erase_next_);
      erase_next_.clear();
    }
    if (opts_.called_sorted)  // keys before this one will not be asked for again
      seen_.erase(seen_.begin(), seen_.lower_bound(key));
    auto it = seen_.find(key);
    if (it != seen_.end()) return it->second.get();
    while (!eof_ && !(opts_.sorted && !last_key_.empty() && last_key_ > key)) {
      std::unique_ptr<Holder> holder(new Holder);
      std::string k;
      try {
        if (!reader_.ReadNext(&k, holder.get())) {
          eof_ = true;
          break;
        }
      } catch (const Error& e) {
        eof_ = true;
        if (!opts_.permissive) throw;
        CUCTX_WARN << e.what() << " (permissive: treating it as the end of the archive)";
        reader_.Close();
        break;
      }
      if (opts_.sorted && !last_key_.empty() && k <= last_key_)
        CUCTX_ERR << table_ << " is read as sorted (\"s\"), but key '" << k << "' follows '"
                  << last_key_ << "'";
      if (seen_.count(k) != 0) CUCTX_ERR << "duplicate key '" << k << "' in " << table_;
      last_key_ = k;
      Holder* found = holder.get();
      if (!(opts_.called_sorted && k < key)) seen_[k] = std::move(holder);
      if (k == key) return found;
    }
    return nullptr;
  }
  ArchiveEntryReader<Holder> reader_;
  std::string table_;
  RspecifierOptions opts_;
  std::map<std::string, std::unique_ptr<Holder>> seen_;  // entries read and still wanted
  std::string last_key_, erase_next_;
  bool eof_ = false;
};

template <class Holder>
std::unique_ptr<RandomAccessImpl<Holder>> MakeRandomAccessImpl(const std::string& rspecifier) {
  std::string rxfilename;
  RspecifierOptions opts;
  RspecifierType type = ClassifyRspecifier(rspecifier, &rxfilename, &opts);
  if (type == kArchiveRspecifier)
    return std::unique_ptr<RandomAccessImpl<Holder>>(
        new RandomAccessArchiveImpl<Holder>(rspecifier, rxfilename, opts));
  if (type == kScriptRspecifier)
    return std::unique_ptr<RandomAccessImpl<Holder>>(
        new RandomAccessScriptImpl<Holder>(rspecifier, rxfilename, opts));
  throw TableOpenError(InvalidRspecifierMessage(rspecifier));
}

}  // namespace internal

template <class Holder>
RandomAccessTableReader<Holder>::RandomAccessTableReader() = default;

template <class Holder>
RandomAccessTableReader<Holder>::RandomAccessTableReader(const std::string& rspecifier) {
  if (!rspecifier.empty()) impl_ = internal::MakeRandomAccessImpl<Holder>(rspecifier);
}

template <class Holder>
RandomAccessTableReader<Holder>::~RandomAccessTableReader() {
  if (impl_) Close();
}

template <class Holder>
bool RandomAccessTableReader<Holder>::Open(const std::string& rspecifier) {
  if (impl_) Close();
  try {
    impl_ = internal::MakeRandomAccessImpl<Holder>(rspecifier);
  } catch (const internal::TableOpenError& e) {
    CUCTX_WARN << e.what();
    return false;
  }
  return true;
}

template <class Holder>
bool RandomAccessTableReader<Holder>::IsOpen() const {
  return impl_ != nullptr;
}

template <class Holder>
bool RandomAccessTableReader<Holder>::Close() {
  if (!impl_) return true;
  bool ok = impl_->Close();
  impl_.reset();
  return ok;
}

template <class Holder>
bool RandomAccessTableReader<Holder>::HasKey(const std::string& key) {
  if (!impl_) CUCTX_ERR << "RandomAccessTableReader::HasKey() called on a reader that is not open";
  return impl_->HasKey(key);
}

template <class Holder>
const typename Holder::T& RandomAccessTableReader<Holder>::Value(const std::string& key) {
  if (!impl_) CUCTX_ERR << "RandomAccessTableReader::Value() called on a reader that is not open";
  return impl_->Value(key);
}

template <class Holder>
RandomAccessTableReaderMapped<Holder>::RandomAccessTableReaderMapped(
    const std::string& table_rxfilename, const std::string& utt2spk_rxfilename) {
  if (!Open(table_rxfilename, utt2spk_rxfilename))
    CUCTX_ERR << "cannot open the table " << internal::PrintableSpecifier(table_rxfilename)
              << (utt2spk_rxfilename.empty()
                      ? ""
                      : " with the map " + PrintableRxfilename(utt2spk_rxfilename));
}

template <class Holder>
bool RandomAccessTableReaderMapped<Holder>::Open(const std::string& table_rxfilename,
                                                 const std::string& utt2spk_rxfilename) {
  table_rxfilename_ = table_rxfilename;
  utt2spk_rxfilename_ = utt2spk_rxfilename;
  utt2spk_.clear();
  if (!utt2spk_rxfilename.empty()) {
    if (!ReadScriptFile(utt2spk_rxfilename, true, &utt2spk_)) return false;
    std::sort(utt2spk_.begin(), utt2spk_.end());
  }
  return reader_.Open(table_rxfilename);
}

template <class Holder>
bool RandomAccessTableReaderMapped<Holder>::MapKey(const std::string& key, bool must,
                                                   std::string* mapped) const {
  if (utt2spk_rxfilename_.empty()) {
    *mapped = key;
    return true;
  }
  auto it = std::lower_bound(utt2spk_.begin(), utt2spk_.end(), std::make_pair(key, std::string()));
  if (it == utt2spk_.end() || it->first != key) {
    if (must)
      CUCTX_ERR << "key '" << key << "' is not in the map "
                << PrintableRxfilename(utt2spk_rxfilename_);
    return false;
  }
  *mapped = it->second;
  return true;
}

template <class Holder>
bool RandomAccessTableReaderMapped<Holder>::HasKey(const std::string& key) {
  std::string mapped;
  return MapKey(key, false, &mapped) && reader_.HasKey(mapped);
}

template <class Holder>
const typename Holder::T& RandomAccessTableReaderMapped<Holder>::Value(const std::string& key) {
  std::string mapped;
  MapKey(key, true, &mapped);
  return reader_.Value(mapped);
}

template <class Holder>
bool RandomAccessTableReaderMapped<Holder>::Close() {
  utt2spk_.clear();
  return reader_.Close();
}

}  // namespace cuctx

#endif  // CUCTX_UTIL_KALDI_TABLE_RANDOM_INL_H_
