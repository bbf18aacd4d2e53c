// The pieces of the model-file reader that its source files share: what the layer and op readers
// need to know of the rest of the file, and value readers for what topology's yaml::Fields does
// not read (numbers with an inclusive bound, sizes that may be 0, booleans, enum spellings).
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "topology/parse/loader_names.hpp"
#include "topology/parse/yaml_fields.hpp"
#include "workload/model/model.hpp"

// Internal to the model_loader files; a namespace of its own keeps names like Scale out of the
// layer's.
namespace cs::workload::loader {

using topo::yaml::Fields;

inline constexpr long long kMaxCount = 1'000'000;     // batch, kernels, repeat
inline constexpr long long kMaxSeq = 100'000'000;     // tokens per sample
inline constexpr long long kMaxElements = 1LL << 50;  // one tensor

// What the layer and op readers need from the rest of the file.
struct ModelContext {
  std::string file;
  bool has_seq = false;                      // settings has seq
  std::vector<std::string> measurement_ids;  // in file order
};

// The smallest value a number may take.
enum class Least { zero, above_zero, one };

// A finite number in text, at least `least`; InputError naming `key` otherwise.
double parse_number(const std::string& text, const std::string& key, const SourceLoc& loc,
                    Least least);
double number(const Fields& f, const std::string& key, Least least);  // required
// A size ("16 KiB", or a bare number of bytes) >= 0.
double size_bytes(const Fields& f, const std::string& key);
bool boolean(const Fields& f, const std::string& key);  // true | false
// A non-empty name.
std::string name_text(const Fields& f, const std::string& key);

// The map under `key` of `parent`, read with `allowed` keys; "missing in ..." when absent.
Fields sub_map(const Fields& parent, const std::string& key, const std::string& what,
               std::vector<std::string> allowed);

// Exponents of the per-GPU batch and of the sequence length that a size grows with.
struct Scale {
  double batch = 1, seq = 0;
};
// Proportional to batch and seq: [1, 1] when the model has a sequence, [1, 0] when not.
Scale default_scale(const ModelContext& ctx);
// `[batch exponent, seq exponent]` under `key`, default_scale() without the key.
Scale parse_scale(const Fields& f, const std::string& key, const ModelContext& ctx);

// A value written as an integer when it is one ("38597376", not "3.85974e+07").
std::string format_count(double value);

// One of `values`, spelled as to_string() spells it; `what` names the choice in the message.
template <typename Enum>
Enum choice(const Fields& f, const std::string& key, const std::string& what,
            std::initializer_list<Enum> values) {
  const std::string text = f.text(key);
  std::vector<std::string> valid;
  for (Enum value : values) {
    if (text == to_string(value)) return value;
    valid.emplace_back(to_string(value));
  }
  f.fail(key, "unknown " + what + " '" + text + "'" + topo::names::did_you_mean(text, valid) +
                  "; valid: " + topo::names::join_truncated(valid));
}

// The `layers:` list of the file, repeats expanded; needs at least one layer.
std::vector<Layer> parse_layers(const Fields& root, const ModelContext& ctx,
                                std::vector<Block>& blocks);

// One entry of a layer's forward or backward list; `weight` checks against `params`.
Op parse_op(const YAML::Node& node, const SourceLoc& where, const std::string& list_key,
            const ModelContext& ctx, const std::vector<TensorSpec>& params);

}  // namespace cs::workload::loader
