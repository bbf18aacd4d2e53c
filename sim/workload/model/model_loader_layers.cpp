// The `layers:` list -> Layers, declared in model_loader_parse.hpp: layer entries, repeat blocks
// (expanded here, `{i}` in a name becoming the iteration), params and buffers, activations, the
// op lists and the per-measurement times.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "workload/model/model_loader_parse.hpp"

namespace cs::workload::loader {
namespace {

constexpr const char* kIteration = "{i}";

struct ParsedLayer {
  Layer layer;
  SourceLoc name_loc;
};

// The params or buffers list under `key`; names must be unique across both (`seen`).
std::vector<TensorSpec> parse_tensors(const Fields& layer, const std::string& key,
                                      std::unordered_map<std::string, int>& seen) {
  std::vector<TensorSpec> out;
  if (!layer.has(key)) return out;
  const YAML::Node list = layer.list(key);
  for (const auto& item : list) {
    const Fields t(item, key == "params" ? "param entry" : "buffer entry", key, layer.file(),
                   topo::yaml::loc_of(item, layer.file(), layer.loc(key)),
                   {"name", "elements", "dtype"});
    TensorSpec tensor;
    tensor.name = name_text(t, "name");
    const auto [it, inserted] = seen.emplace(tensor.name, t.loc("name").line);
    if (!inserted) {
      t.fail("name", "duplicate tensor name '" + tensor.name +
                         "' in this layer; first defined at line " + std::to_string(it->second));
    }
    tensor.elements = t.integer("elements", 1, kMaxElements);
    tensor.dtype = choice(t, "dtype", "dtype", {Dtype::fp32, Dtype::bf16, Dtype::fp16});
    out.push_back(std::move(tensor));
  }
  return out;
}

std::vector<Op> parse_ops(const Fields& layer, const std::string& key, const ModelContext& ctx,
                          const std::vector<TensorSpec>& params) {
  std::vector<Op> out;
  if (!layer.has(key)) return out;
  const YAML::Node list = layer.list(key);
  for (const auto& item : list) {
    out.push_back(
        parse_op(item, topo::yaml::loc_of(item, ctx.file, layer.loc(key)), key, ctx, params));
  }
  return out;
}

std::map<std::string, LayerMeasured> parse_measured(const Fields& layer, const ModelContext& ctx) {
  std::map<std::string, LayerMeasured> out;
  if (!layer.has("measured")) return out;
  const YAML::Node map = layer.node("measured");
  const SourceLoc where = layer.loc("measured");
  if (!map.IsMap()) {
    throw InputError(where, "measured",
                     "must be a map of measurement ids to {forward_us, backward_us, "
                     "forward_kernels, backward_kernels}");
  }
  for (const auto& entry : map) {
    const SourceLoc loc = topo::yaml::loc_of(entry.first, ctx.file, where);
    const std::string id = topo::yaml::scalar_text(entry.first, "measured", loc);
    const auto& ids = ctx.measurement_ids;
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
      throw InputError(loc, id,
                       "no measurement has id '" + id + "'" + topo::names::did_you_mean(id, ids) +
                           "; ids under measurements: " + topo::names::join_truncated(ids));
    }
    if (out.count(id) != 0) throw InputError(loc, id, "given twice in measured");
    const Fields m(entry.second, "measured time of '" + id + "'", id, ctx.file, loc,
                   {"forward_us", "backward_us", "forward_kernels", "backward_kernels"});
    LayerMeasured& t = out[id];
    t.forward_us = number(m, "forward_us", Least::zero);
    t.backward_us = number(m, "backward_us", Least::zero);
    t.forward_kernels = static_cast<int>(m.integer("forward_kernels", 0, kMaxCount));
    t.backward_kernels = static_cast<int>(m.integer("backward_kernels", 0, kMaxCount));
  }
  return out;
}

// One layer entry; `repeat` is the count of the enclosing repeat block, 0 outside one.
ParsedLayer parse_layer(const YAML::Node& node, const SourceLoc& where, const ModelContext& ctx,
                        long long repeat) {
  const Fields f(node, "layer entry", "layers", ctx.file, where,
                 {"name", "params", "buffers", "activations", "forward", "backward", "measured",
                  "repeat", "tp"});
  ParsedLayer out;
  Layer& layer = out.layer;
  layer.name = name_text(f, "name");
  out.name_loc = f.loc("name");
  const bool templated = layer.name.find(kIteration) != std::string::npos;
  if (repeat == 0 && templated) {
    f.fail("name", "'{i}' stands for the iteration of a repeat block, and this layer is in none");
  }
  if (repeat > 1 && !templated) {
    f.fail("name", "'" + layer.name + "' would repeat " + std::to_string(repeat) +
                       " times; names in a repeat block need '{i}' to stay unique");
  }
  std::unordered_map<std::string, int> tensor_names;
  layer.params = parse_tensors(f, "params", tensor_names);
  layer.buffers = parse_tensors(f, "buffers", tensor_names);
  const Scale unscaled = default_scale(ctx);
  layer.activation_scale_batch = unscaled.batch;
  layer.activation_scale_seq = unscaled.seq;
  if (f.has("activations")) {
    const Fields a = sub_map(f, "activations", "activations", {"bytes", "scale"});
    layer.activation_bytes = size_bytes(a, "bytes");
    const Scale scale = parse_scale(a, "scale", ctx);
    layer.activation_scale_batch = scale.batch;
    layer.activation_scale_seq = scale.seq;
  }
  layer.forward = parse_ops(f, "forward", ctx, layer.params);
  layer.backward = parse_ops(f, "backward", ctx, layer.params);
  layer.measured = parse_measured(f, ctx);
  if (f.has("tp")) {
    layer.tp =
        choice(f, "tp", "tensor-parallel role",
               {TpRole::replicated, TpRole::column, TpRole::row, TpRole::split, TpRole::vocab});
  }
  return out;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
    text.replace(at, from.size(), to);
    at += to.size();
  }
  return text;
}

}  // namespace

namespace {

// The module path of `name` up to and including its first integer component ("" without one);
// a "#2" suffix (a module's second call) is not part of a component's index.
std::string block_prefix(const std::string& name) {
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('.', start);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(start, end - start);
    const bool index = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
    if (index) return name.substr(0, end);
    start = end + 1;
  }
  return "";
}

// Blocks of a file without repeat blocks: runs of consecutive layers with one block prefix.
void blocks_from_names(std::vector<Layer>& layers, std::vector<Block>& blocks) {
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string prefix = block_prefix(layers[i].name);
    if (prefix.empty()) continue;
    if (blocks.empty() || blocks.back().name != prefix ||
        blocks.back().first_layer + blocks.back().layer_count != static_cast<int>(i)) {
      Block b;
      b.name = prefix;
      b.first_layer = static_cast<int>(i);
      blocks.push_back(std::move(b));
    }
    ++blocks.back().layer_count;
    layers[i].block = static_cast<int>(blocks.size()) - 1;
  }
}

}  // namespace

std::vector<Layer> parse_layers(const Fields& root, const ModelContext& ctx,
                                std::vector<Block>& blocks) {
  if (!root.has("layers")) root.fail("layers", "missing: the model's layers in forward order");
  const YAML::Node list = root.list("layers");
  std::vector<Layer> out;
  std::unordered_map<std::string, int> first_line;
  const auto add = [&](Layer layer, const SourceLoc& name_loc) {
    const auto [it, inserted] = first_line.emplace(layer.name, name_loc.line);
    if (!inserted) {
      throw InputError(name_loc, "name",
                       "duplicate layer name '" + layer.name + "'; first defined at line " +
                           std::to_string(it->second));
    }
    out.push_back(std::move(layer));
  };

  int repeats = 0;  // repeat blocks read so far
  for (const auto& item : list) {
    const SourceLoc where = topo::yaml::loc_of(item, ctx.file, root.loc("layers"));
    if (!item.IsMap() || !item["repeat"].IsDefined()) {
      ParsedLayer parsed = parse_layer(item, where, ctx, 0);
      add(std::move(parsed.layer), parsed.name_loc);
      continue;
    }
    const Fields block(item, "repeat block", "layers", ctx.file, where, {"repeat", "layers"});
    const long long count = block.integer("repeat", 1, kMaxCount);
    if (!block.has("layers")) block.fail("layers", "missing in repeat block: the layers to repeat");
    const YAML::Node body = block.list("layers");
    if (body.size() == 0) block.fail("layers", "the repeat block has no layers");
    std::vector<ParsedLayer> once;
    for (const auto& inner : body) {
      const SourceLoc inner_where = topo::yaml::loc_of(inner, ctx.file, block.loc("layers"));
      if (inner.IsMap() && inner["repeat"].IsDefined()) {
        throw InputError(topo::yaml::loc_of(inner["repeat"], ctx.file, inner_where), "repeat",
                         "repeat blocks do not nest; list the inner block's layers instead");
      }
      once.push_back(parse_layer(inner, inner_where, ctx, count));
    }
    for (long long i = 0; i < count; ++i) {
      Block b;
      b.repeat = repeats;
      b.iteration = static_cast<int>(i);
      b.first_layer = static_cast<int>(out.size());
      b.layer_count = static_cast<int>(once.size());
      for (const auto& parsed : once) {
        Layer layer = parsed.layer;
        layer.name = replace_all(layer.name, kIteration, std::to_string(i));
        layer.block = static_cast<int>(blocks.size());
        add(std::move(layer), parsed.name_loc);
      }
      b.name = out[static_cast<std::size_t>(b.first_layer)].name;
      blocks.push_back(std::move(b));
    }
    ++repeats;
  }
  if (out.empty()) root.fail("layers", "the model has no layers");
  if (repeats == 0) blocks_from_names(out, blocks);
  return out;
}

}  // namespace cs::workload::loader
