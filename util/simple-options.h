// util/simple-options.h: SimpleOptions, an OptionsItf that keeps the registered option variables
// by name so that a program can set and get them directly (Kaldi's, e.g. for options coming from
// an API rather than a command line).
// SPDX-License-Identifier: Apache-2.0
//
// Registration order is kept (GetOptionInfos). SetOption converts between int32 and uint32 (when
// the value fits) and between float and double; other mismatches, and unknown names, return
// false and change nothing. Not thread-safe; the registered variables stay owned by the caller.
#ifndef CUCTX_UTIL_SIMPLE_OPTIONS_H_
#define CUCTX_UTIL_SIMPLE_OPTIONS_H_

#include "base/kaldi-common.h"  // as Kaldi's header does: ported code relies on it
#include "base/options-itf.h"
#include "base/types.h"

#include <string>
#include <utility>
#include <vector>

namespace cuctx {

class SimpleOptions : public OptionsItf {
 public:
  SimpleOptions() = default;
  ~SimpleOptions() override = default;

  void Register(const std::string& name, bool* ptr, const std::string& doc) override;
  void Register(const std::string& name, int32* ptr, const std::string& doc) override;
  void Register(const std::string& name, uint32* ptr, const std::string& doc) override;
  void Register(const std::string& name, float* ptr, const std::string& doc) override;
  void Register(const std::string& name, double* ptr, const std::string& doc) override;
  void Register(const std::string& name, std::string* ptr, const std::string& doc) override;

  // Sets the option `key`; true on success.
  bool SetOption(const std::string& key, const bool& value);
  bool SetOption(const std::string& key, const int32& value);
  bool SetOption(const std::string& key, const uint32& value);
  bool SetOption(const std::string& key, const float& value);
  bool SetOption(const std::string& key, const double& value);
  bool SetOption(const std::string& key, const std::string& value);
  bool SetOption(const std::string& key, const char* value);

  // Reads the option `key` into *value; true if it exists with exactly that type.
  bool GetOption(const std::string& key, bool* value);
  bool GetOption(const std::string& key, int32* value);
  bool GetOption(const std::string& key, uint32* value);
  bool GetOption(const std::string& key, float* value);
  bool GetOption(const std::string& key, double* value);
  bool GetOption(const std::string& key, std::string* value);

  enum OptionType { kBool, kInt32, kUint32, kFloat, kDouble, kString };

  struct OptionInfo {
    OptionInfo(const std::string& doc_in, OptionType type_in) : doc(doc_in), type(type_in) {}
    std::string doc;
    OptionType type;
  };

  // The registered options, in registration order.
  std::vector<std::pair<std::string, OptionInfo>> GetOptionInfos();
  // The type of `key`; false if there is no such option.
  bool GetOptionType(const std::string& key, OptionType* type);

 private:
  struct Entry {
    std::string name;
    OptionInfo info;
    void* ptr;
  };
  void Add(const std::string& name, OptionType type, void* ptr, const std::string& doc);
  Entry* Find(const std::string& key);
  std::vector<Entry> entries_;
};

}  // namespace cuctx

#endif  // CUCTX_UTIL_SIMPLE_OPTIONS_H_
