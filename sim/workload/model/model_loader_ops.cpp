// Op entries -> Op, declared in model_loader_parse.hpp: the `op` kind decides which keys apply;
// a gemm or conv that names its weight must have that weight's shape.
#include <algorithm>

#include "workload/model/model_loader_parse.hpp"

namespace cs::workload::loader {
namespace {

constexpr const char* kGemmKeys = "m, n, k, batch, dtype, grows, weight, kernels";
constexpr const char* kAttentionKeys =
    "batch, heads, seq_q, seq_kv, head_dim, causal, dtype, kernels";
constexpr const char* kMemoryKeys = "bytes, kernels, scale, access";

Dtype op_dtype(const Fields& f) {
  return choice(f, "dtype", "dtype", {Dtype::fp32, Dtype::tf32, Dtype::bf16, Dtype::fp16});
}

Dim grows_dim(const Fields& g, const std::string& key) {
  if (!g.has(key)) return Dim::none;
  return choice(g, key, "dimension", {Dim::m, Dim::n, Dim::k, Dim::batch, Dim::none});
}

void parse_grows(const Fields& f, const ModelContext& ctx, Op& op) {
  if (!f.has("grows")) return;
  const Fields g = sub_map(f, "grows", "grows", {"batch", "seq"});
  op.grows_batch = grows_dim(g, "batch");
  op.grows_seq = grows_dim(g, "seq");
  if (op.grows_seq != Dim::none && !ctx.has_seq) {
    g.fail("seq", std::string("grows along '") + to_string(op.grows_seq) +
                      "', but the model has no sequence (settings has no seq); valid here: none");
  }
}

// A weight of n x k elements per matrix (for conv, out channels x in channels/groups*kh*kw);
// returns its index in `params`.
int check_weight(const Fields& f, const Op& op, const std::vector<TensorSpec>& params) {
  const std::string name = f.text("weight");
  std::vector<std::string> names;
  names.reserve(params.size());
  for (const auto& p : params) names.push_back(p.name);
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) {
    f.fail("weight", "no param '" + name + "' in this layer" +
                         topo::names::did_you_mean(name, names) +
                         "; params: " + topo::names::join_truncated(names));
  }
  const TensorSpec& weight = params[static_cast<std::size_t>(it - names.begin())];
  if (op.n * op.k * op.batch != static_cast<double>(weight.elements)) {
    const std::string shape = (op.batch != 1 ? format_count(op.batch) + " x " : std::string()) +
                              format_count(op.n) + " x " + format_count(op.k);
    f.fail("weight", std::string(to_string(op.kind)) + " shape " + shape + " does not fit param '" +
                         name + "' of " + std::to_string(weight.elements) +
                         " elements; n*k*batch must equal them");
  }
  return static_cast<int>(it - names.begin());
}

}  // namespace

Op parse_op(const YAML::Node& node, const SourceLoc& where, const std::string& list_key,
            const ModelContext& ctx, const std::vector<TensorSpec>& params) {
  const Fields f(node, "op entry", list_key, ctx.file, where,
                 {"op", "m", "n", "k", "batch", "dtype", "grows", "weight", "heads", "seq_q",
                  "seq_kv", "head_dim", "causal", "bytes", "scale", "access", "kernels"});
  Op op;
  op.kind = choice(f, "op", "op", {OpKind::gemm, OpKind::conv, OpKind::attention, OpKind::memory});
  const std::string context = std::string(to_string(op.kind)) + " ops";
  switch (op.kind) {
    case OpKind::gemm:
    case OpKind::conv:
      f.forbid({"heads", "seq_q", "seq_kv", "head_dim", "causal", "bytes", "scale", "access"},
               context, kGemmKeys);
      op.m = number(f, "m", Least::above_zero);
      op.n = number(f, "n", Least::above_zero);
      op.k = number(f, "k", Least::above_zero);
      if (f.has("batch")) op.batch = number(f, "batch", Least::one);
      op.dtype = op_dtype(f);
      parse_grows(f, ctx, op);
      if (f.has("weight")) op.weight = check_weight(f, op, params);
      break;
    case OpKind::attention:
      f.forbid({"m", "n", "k", "grows", "weight", "bytes", "scale", "access"}, context,
               kAttentionKeys);
      op.batch = number(f, "batch", Least::one);
      op.heads = number(f, "heads", Least::one);
      op.seq_q = number(f, "seq_q", Least::one);
      op.seq_kv = number(f, "seq_kv", Least::one);
      op.head_dim = number(f, "head_dim", Least::one);
      if (f.has("causal")) op.causal = boolean(f, "causal");
      op.dtype = op_dtype(f);
      break;
    case OpKind::memory: {
      f.forbid({"m", "n", "k", "batch", "dtype", "grows", "weight", "heads", "seq_q", "seq_kv",
                "head_dim", "causal"},
               context, kMemoryKeys);
      op.bytes = size_bytes(f, "bytes");
      if (!f.has("kernels")) f.fail("kernels", "missing in memory op: how many kernels move it");
      const Scale scale = parse_scale(f, "scale", ctx);
      op.scale_batch = scale.batch;
      op.scale_seq = scale.seq;
      if (f.has("access")) {
        op.access = choice(f, "access", "access pattern",
                           {Access::elementwise, Access::reduction, Access::strided_reduction});
      }
      break;
    }
  }
  op.kernels = static_cast<int>(f.optional_integer("kernels", 1, kMaxCount).value_or(1));
  return op;
}

}  // namespace cs::workload::loader
