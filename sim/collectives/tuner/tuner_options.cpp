// The tuner's options as NCCL's environment spells them: NCCL_ALGO / NCCL_PROTO lists and
// NCCL_NVLS_ENABLE, and the NCCL release whose choice to follow (declared in tuner.hpp).
#include <cstdio>
#include <sstream>
#include <string>

#include "collectives/tuner/tuner.hpp"
#include "core/error.hpp"

namespace cs::coll {
namespace {

unsigned parse_mask(const std::string& text, const std::string& key, bool algo) {
  if (text.empty()) return algo ? (1u << kAlgoCount) - 1 : (1u << kProtoCount) - 1;
  unsigned mask = 0;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (algo) {
      const auto a = parse_algo(item);
      if (!a)
        throw InputError("key '" + key + "': unknown algorithm '" + item +
                         "'; valid: " + valid_algos());
      mask |= 1u << index_of(*a);
    } else {
      const auto p = parse_proto(item);
      if (!p)
        throw InputError("key '" + key + "': unknown protocol '" + item +
                         "'; valid: " + valid_protos());
      mask |= 1u << index_of(*p);
    }
  }
  return mask;
}

}  // namespace

unsigned parse_algo_mask(const std::string& text, const std::string& key) {
  return parse_mask(text, key, true);
}

unsigned parse_proto_mask(const std::string& text, const std::string& key) {
  return parse_mask(text, key, false);
}

std::optional<bool> parse_enable(const std::string& text, const std::string& key) {
  if (text.empty()) return std::nullopt;
  if (text == "on" || text == "1") return true;
  if (text == "off" || text == "0") return false;
  throw InputError("key '" + key + "': '" + text + "' is not on/1 or off/0");
}

int parse_nccl_version(const std::string& text, const std::string& key) {
  if (text.empty()) return 0;
  int major = 0;
  int minor = 0;
  int patch = 0;
  char tail = 0;
  const int n = std::sscanf(text.c_str(), "%d.%d.%d%c", &major, &minor, &patch, &tail);
  if (!(n == 2 || n == 3) || major != 2 || minor < 12 || minor > 99 || patch < 0 || patch > 99)
    throw InputError("key '" + key + "': '" + text +
                     "' is not an NCCL release 2.12 - 2.99 (as 2.24.3 or 2.24)");
  return major * 10000 + minor * 100 + patch;
}

}  // namespace cs::coll
