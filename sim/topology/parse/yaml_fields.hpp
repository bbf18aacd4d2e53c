// Strict reading of one YAML map: keys are checked against a closed set (a typo gets "did you
// mean"), values are read as typed scalars with their unit parsed, and every failure becomes an
// InputError that names file:line and the key. Only the loader files include this header.
#pragma once

#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace cs::topo::yaml {

// The 1-based source location of a node; `fallback` when yaml-cpp has no mark for it.
SourceLoc loc_of(const YAML::Node& node, const std::string& file, const SourceLoc& fallback);

// The scalar text of `node`, or an InputError naming `key` when it is a map, list or empty.
std::string scalar_text(const YAML::Node& node, const std::string& key, const SourceLoc& loc);

// Parses a whole-string integer in [min, max].
long long parse_integer(const std::string& text, const std::string& key, const SourceLoc& loc,
                        long long min, long long max);

class Fields {
 public:
  // `what` names the map in messages ("link entry", "gpu model 'H100'"), `key` is the key it sits
  // under ("links"). Throws when `node` is not a map or holds a key outside `allowed` or twice.
  Fields(const YAML::Node& node, std::string what, const std::string& key, const std::string& file,
         const SourceLoc& where, std::vector<std::string> allowed);

  const SourceLoc& loc() const { return loc_; }
  SourceLoc loc(const std::string& key) const;  // the value's line, else the map's
  bool has(const std::string& key) const;
  YAML::Node node(const std::string& key) const;  // a null node when absent
  const std::string& file() const { return file_; }
  const std::string& what() const { return what_; }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  // Throws for each present key of `keys`: they do not apply in this context (e.g. `width` on an
  // nvlink link); `context` ("nvlink links") and `valid` ("generation, count") shape the message.
  void forbid(std::initializer_list<std::string_view> keys, const std::string& context,
              const std::string& valid) const;

  YAML::Node list(const std::string& key) const;   // required sequence
  std::string text(const std::string& key) const;  // required scalar
  std::optional<std::string> optional_text(const std::string& key) const;
  long long integer(const std::string& key, long long min, long long max) const;  // required
  std::optional<long long> optional_integer(const std::string& key, long long min,
                                            long long max) const;
  // true or false (YAML's spelling); nullopt when absent.
  std::optional<bool> optional_bool(const std::string& key) const;
  // A plain number in (min, max] (e.g. efficiency).
  std::optional<double> optional_number(const std::string& key, double exclusive_min,
                                        double inclusive_max) const;
  // Positive quantities with units; the message of a bad unit comes from cs::units.
  double bandwidth_Bps(const std::string& key) const;
  std::optional<double> optional_bandwidth_Bps(const std::string& key) const;
  std::optional<double> optional_latency_s(const std::string& key) const;  // >= 0
  double flops(const std::string& key) const;
  double size_bytes(const std::string& key) const;

 private:
  YAML::Node map_;
  std::string what_;
  std::string file_;
  SourceLoc loc_;
};

}  // namespace cs::topo::yaml
