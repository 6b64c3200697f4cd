// util/simple-options.cc: SimpleOptions (see the header).
// SPDX-License-Identifier: Apache-2.0
#include "util/simple-options.h"

#include "base/error.h"

#include <limits>

namespace cuctx {

void SimpleOptions::Add(const std::string& name, OptionType type, void* ptr,
                        const std::string& doc) {
  if (ptr == nullptr) CUCTX_ERR << "SimpleOptions: null pointer registered for option " << name;
  if (Find(name) != nullptr) {
    CUCTX_WARN << "SimpleOptions: option " << name << " registered twice; keeping the first";
    return;
  }
  entries_.push_back(Entry{name, OptionInfo(doc, type), ptr});
}

SimpleOptions::Entry* SimpleOptions::Find(const std::string& key) {
  for (Entry& e : entries_)
    if (e.name == key) return &e;
  return nullptr;
}

void SimpleOptions::Register(const std::string& name, bool* ptr, const std::string& doc) {
  Add(name, kBool, ptr, doc);
}
void SimpleOptions::Register(const std::string& name, int32* ptr, const std::string& doc) {
  Add(name, kInt32, ptr, doc);
}
void SimpleOptions::Register(const std::string& name, uint32* ptr, const std::string& doc) {
  Add(name, kUint32, ptr, doc);
}
void SimpleOptions::Register(const std::string& name, float* ptr, const std::string& doc) {
  Add(name, kFloat, ptr, doc);
}
void SimpleOptions::Register(const std::string& name, double* ptr, const std::string& doc) {
  Add(name, kDouble, ptr, doc);
}
void SimpleOptions::Register(const std::string& name, std::string* ptr, const std::string& doc) {
  Add(name, kString, ptr, doc);
}

bool SimpleOptions::SetOption(const std::string& key, const bool& value) {
  Entry* e = Find(key);
  if (e == nullptr || e->info.type != kBool) return false;
  *static_cast<bool*>(e->ptr) = value;
  return true;
}

bool SimpleOptions::SetOption(const std::string& key, const int32& value) {
  Entry* e = Find(key);
  if (e == nullptr) return false;
  if (e->info.type == kInt32) {
    *static_cast<int32*>(e->ptr) = value;
    return true;
  }
  if (e->info.type == kUint32 && value >= 0) {
    *static_cast<uint32*>(e->ptr) = static_cast<uint32>(value);
    return true;
  }
  return false;
}

bool SimpleOptions::SetOption(const std::string& key, const uint32& value) {
  Entry* e = Find(key);
  if (e == nullptr) return false;
  if (e->info.type == kUint32) {
    *static_cast<uint32*>(e->ptr) = value;
    return true;
  }
  if (e->info.type == kInt32 && value <= static_cast<uint32>(std::numeric_limits<int32>::max())) {
    *static_cast<int32*>(e->ptr) = static_cast<int32>(value);
    return true;
  }
  return false;
}

bool SimpleOptions::SetOption(const std::string& key, const float& value) {
  return SetOption(key, static_cast<double>(value));
}

bool SimpleOptions::SetOption(const std::string& key, const double& value) {
  Entry* e = Find(key);
  if (e == nullptr) return false;
  if (e->info.type == kDouble) {
    *static_cast<double*>(e->ptr) = value;
    return true;
  }
  if (e->info.type == kFloat) {
    *static_cast<float*>(e->ptr) = static_cast<float>(value);
    return true;
  }
  return false;
}

bool SimpleOptions::SetOption(const std::string& key, const std::string& value) {
  Entry* e = Find(key);
  if (e == nullptr || e->info.type != kString) return false;
  *static_cast<std::string*>(e->ptr) = value;
  return true;
}

bool SimpleOptions::SetOption(const std::string& key, const char* value) {
  return value != nullptr && SetOption(key, std::string(value));
}

namespace {
template <typename T>
bool Get(void* ptr, T* value) {
  *value = *static_cast<T*>(ptr);
  return true;
}
}  // namespace

bool SimpleOptions::GetOption(const std::string& key, bool* value) {
  Entry* e = Find(key);
  return e != nullptr && e->info.type == kBool && Get(e->ptr, value);
}
bool SimpleOptions::GetOption(const std::string& key, int32* value) {
  Entry* e = Find(key);
  return e != nullptr && e->info.type == kInt32 && Get(e->ptr, value);
}
bool SimpleOptions::GetOption(const std::string& key, uint32* value) {
  Entry* e = Find(key);
  return e != nullptr && e->info.type == kUint32 && Get(e->ptr, value);
}
bool SimpleOptions::GetOption(const std::string& key, float* value) {
  Entry* e = Find(key);
  return e != nullptr && e->info.type == kFloat && Get(e->ptr, value);
}
bool SimpleOptions::GetOption(const std::string& key, double* value) {
  Entry* e = Find(key);
  return e != nullptr && e->info.type == kDouble && Get(e->ptr, value);
}
bool SimpleOptions::GetOption(const std::string& key, std::string* value) {
  Entry* e = Find(key);
  return e != nullptr && e->info.type == kString && Get(e->ptr, value);
}

std::vector<std::pair<std::string, SimpleOptions::OptionInfo>> SimpleOptions::GetOptionInfos() {
  std::vector<std::pair<std::string, OptionInfo>> out;
  for (const Entry& e : entries_) out.emplace_back(e.name, e.info);
  return out;
}

bool SimpleOptions::GetOptionType(const std::string& key, OptionType* type) {
  Entry* e = Find(key);
  if (e == nullptr) return false;
  *type = e->info.type;
  return true;
}

}  // namespace cuctx
