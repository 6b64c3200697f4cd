// base/options-itf.h: OptionsItf, the interface through which option structs register themselves.
// SPDX-License-Identifier: Apache-2.0
//
// An options struct (say, a decoder's configuration) gets a `void Register(OptionsItf* opts)`
// method that calls opts->Register("beam", &beam, "Decoding beam") for each field. The struct then
// works with any implementation: ParseOptions for the command line and config files, a
// prefix-forwarding ParseOptions to nest it under "name." (see parse-options.h), or a caller's own
// implementation (for example one that fills the fields from a JSON document).
#ifndef CUCTX_BASE_OPTIONS_ITF_H_
#define CUCTX_BASE_OPTIONS_ITF_H_

#include "base/types.h"

#include <functional>
#include <string>

namespace cuctx {

// Abstract registry of named, typed, documented option variables.
//
// Contract for implementations: `ptr` stays owned by the caller and must outlive the registry;
// the value `*ptr` holds at registration time is the option's default. Implementations decide how
// names are normalised and what a duplicate registration does (ParseOptions: '_' -> '-',
// lower case; a duplicate is ignored with a warning).
class OptionsItf {
 public:
  virtual ~OptionsItf() = default;

  virtual void Register(const std::string& name, bool* ptr, const std::string& doc) = 0;
  virtual void Register(const std::string& name, int32* ptr, const std::string& doc) = 0;
  virtual void Register(const std::string& name, uint32* ptr, const std::string& doc) = 0;
  virtual void Register(const std::string& name, float* ptr, const std::string& doc) = 0;
  virtual void Register(const std::string& name, double* ptr, const std::string& doc) = 0;
  virtual void Register(const std::string& name, std::string* ptr, const std::string& doc) = 0;

  // Registers a check of option values (not in Kaldi's interface; cuctx's option structs use it to
  // refuse a bad value when it is parsed rather than when it is first used). `validate` throws
  // cuctx::Error naming the option and the bad value. ParseOptions runs every check after Read()
  // or ReadConfigFile() has applied all options; the default implementation ignores the check
  // (an implementation that does not parse has no moment to run it). The variables the check reads
  // must outlive the registry.
  virtual void RegisterValidator(const std::function<void()>& validate) { (void)validate; }
};

}  // namespace cuctx

#endif  // CUCTX_BASE_OPTIONS_ITF_H_
