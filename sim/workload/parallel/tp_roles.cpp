// Tensor parallelism's names: the rule by module name that gives a layer its role, and the
// collectives' names.
#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "workload/parallel/tensor_parallel.hpp"

namespace cs::workload {
namespace {

// The module's own name: the path's last component, without the "#2" a second call adds.
std::string_view leaf(std::string_view name) {
  name = name.substr(0, name.find('#'));
  const std::size_t dot = name.rfind('.');
  return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

// The path's component before the leaf ("intermediate" in "bert.encoder.layer.0.intermediate.
// dense"), "" when there is none.
std::string_view parent(std::string_view name) {
  name = name.substr(0, name.find('#'));
  const std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return {};
  name = name.substr(0, dot);
  const std::size_t before = name.rfind('.');
  return before == std::string_view::npos ? name : name.substr(before + 1);
}

bool one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

}  // namespace

const char* to_string(TpOp op) {
  switch (op) {
    case TpOp::all_reduce:
      return "all-reduce";
    case TpOp::all_gather:
      return "all-gather";
    case TpOp::reduce_scatter:
      return "reduce-scatter";
  }
  return "?";
}

TpRole tp_role_by_name(const std::string& name) {
  const std::string_view l = leaf(name);
  const std::string_view p = parent(name);
  if (one_of(l,
             {"q_proj", "k_proj",    "v_proj",        "qkv_proj",     "c_attn", "query_key_value",
              "query",  "key",       "value",         "wq",           "wk",     "wv",
              "wqkv",   "gate_proj", "up_proj",       "gate_up_proj", "c_fc",   "fc1",
              "w1",     "w3",        "dense_h_to_4h", "lm_head"}))
    return TpRole::column;
  if (l == "dense") return p == "intermediate" ? TpRole::column : TpRole::row;
  if (one_of(l, {"o_proj", "out_proj", "c_proj", "down_proj", "fc2", "w2", "wo", "dense_4h_to_h"}))
    return TpRole::row;
  if (one_of(l, {"embed_tokens", "wte", "word_embeddings", "tok_embeddings", "embed_in"}))
    return TpRole::vocab;
  return TpRole::replicated;
}

}  // namespace cs::workload
