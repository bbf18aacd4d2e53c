#include "plan/sweep_file.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/input_file.hpp"
#include "topology/parse/loader_names.hpp"
#include "topology/parse/yaml_fields.hpp"

namespace cs::plan {

using topo::yaml::Fields;

const char* to_string(SweepCommand command) {
  switch (command) {
    case SweepCommand::ddp:
      return "ddp";
    case SweepCommand::coll:
      return "coll";
    case SweepCommand::plan:
      return "plan";
  }
  return "?";
}

const std::vector<std::string>& allowed_axes(SweepCommand command) {
  static const std::vector<std::string> ddp = {
      "topology", "nodes",         "model",      "batch", "seq", "precision", "optimizer",
      "momentum", "bucket_cap_mb", "host_probe", "tp",    "pp",  "grad_accum"};
  static const std::vector<std::string> coll = {"topology", "nodes", "op", "size", "dtype"};
  static const std::vector<std::string> plan = {
      "topology", "nodes",         "model",        "batch",      "seq", "precision", "optimizer",
      "momentum", "bucket_cap_mb", "global_batch", "host_probe", "tp",  "pp",        "grad_accum"};
  switch (command) {
    case SweepCommand::ddp:
      return ddp;
    case SweepCommand::coll:
      return coll;
    case SweepCommand::plan:
      return plan;
  }
  return ddp;
}

const std::vector<std::string>& required_axes(SweepCommand command) {
  static const std::vector<std::string> model = {"topology", "model"};
  static const std::vector<std::string> coll = {"topology", "size"};
  return command == SweepCommand::coll ? coll : model;
}

bool numeric_axis(const std::string& name) {
  return name == "nodes" || name == "batch" || name == "seq" || name == "global_batch" ||
         name == "bucket_cap_mb" || name == "momentum" || name == "tp" || name == "pp" ||
         name == "grad_accum";
}

namespace {

std::uint64_t fnv1a(const std::string& bytes) {
  std::uint64_t h = 14695981039346656037ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// Integer axes and their ranges; number axes above 0; word axes and their words.
void check_value(const Axis& axis, const std::string& value, const SourceLoc& loc) {
  const std::string& key = axis.name;
  if (numeric_axis(key) && key != "bucket_cap_mb" && key != "momentum") {
    topo::yaml::parse_integer(value, key, loc, 1, 1'000'000);
  } else if (key == "bucket_cap_mb") {
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !(v > 0) || !(v < 1e6)) {
      throw InputError(loc, key, "'" + value + "' is not a bucket cap in MiB (a number above 0)");
    }
  } else if (key == "precision" && value != "bf16" && value != "fp32" && value != "fp16") {
    throw InputError(loc, key, "unknown precision '" + value + "'; valid: bf16, fp32, fp16");
  } else if (key == "momentum") {
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !(v >= 0) || !(v < 1e9)) {
      throw InputError(loc, key, "'" + value + "' is not a momentum (a number >= 0)");
    }
  } else if (key == "optimizer" && value != "sgd" && value != "adamw") {
    throw InputError(loc, key, "unknown optimizer '" + value + "'; valid: sgd, adamw");
  }
}

Axis parse_axis(const std::string& name, const YAML::Node& node, const std::string& file,
                const SourceLoc& where) {
  Axis axis;
  axis.name = name;
  const SourceLoc loc = topo::yaml::loc_of(node, file, where);
  const auto add = [&](const YAML::Node& item) {
    const SourceLoc at = topo::yaml::loc_of(item, file, loc);
    axis.values.push_back(topo::yaml::scalar_text(item, name, at));
    axis.locs.push_back(at);
    check_value(axis, axis.values.back(), at);
  };
  if (node.IsSequence()) {
    for (const YAML::Node& item : node) add(item);
  } else {
    add(node);
  }
  if (axis.values.empty()) throw InputError(loc, name, "the axis has no values");
  return axis;
}

Target parse_target(const Fields& root) {
  Fields f(root.node("target"), "target", "target", root.file(), root.loc("target"),
           {"samples", "tokens", "steps"});
  Target t;
  int given = 0;
  for (const auto& [key, kind] :
       {std::pair{"samples", TargetKind::samples}, std::pair{"tokens", TargetKind::tokens},
        std::pair{"steps", TargetKind::steps}}) {
    if (!f.has(key)) continue;
    ++given;
    t = {kind, *f.optional_number(key, 0.0, 1e24)};
    if (t.amount < 1) f.fail(key, "must be at least 1");
  }
  if (given != 1) f.fail("", "give exactly one of samples, tokens, steps");
  return t;
}

}  // namespace

SweepFile load_sweep_file(const std::string& path) {
  return parse_sweep(read_input_file(path, "sweep file"), path);
}

SweepFile parse_sweep(const std::string& text, const std::string& file) {
  check_is_text(text, file, "a sweep file is YAML text");
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(SourceLoc{file, e.mark.line >= 0 ? e.mark.line + 1 : 0}, "",
                     "malformed YAML: " + e.msg);
  }
  SweepFile sweep;
  sweep.file = file;
  sweep.dir = std::filesystem::path(file).parent_path().string();
  sweep.digest = fnv1a(text);
  const Fields f(root, "the sweep file", "", file, SourceLoc{file, 1},
                 {"command", "axes", "target", "prices"});
  if (!f.has("command")) f.fail("command", "missing: ddp, coll or plan");
  const std::string command = f.text("command");
  const std::vector<std::string> commands = {"ddp", "coll", "plan"};
  if (command == "ddp") {
    sweep.command = SweepCommand::ddp;
  } else if (command == "coll") {
    sweep.command = SweepCommand::coll;
  } else if (command == "plan") {
    sweep.command = SweepCommand::plan;
  } else {
    f.fail("command", "unknown command '" + command + "'" +
                          topo::names::did_you_mean(command, commands) +
                          "; valid: ddp, coll, plan");
  }
  if (!f.has("axes")) f.fail("axes", "missing: the map of axis names to their values");
  const std::vector<std::string>& allowed = allowed_axes(sweep.command);
  const Fields axes(f.node("axes"), "axes", "axes", file, f.loc("axes"), allowed);
  for (const auto& entry : f.node("axes")) {
    const std::string name = entry.first.as<std::string>();
    sweep.axes.push_back(parse_axis(name, entry.second, file, axes.loc(name)));
  }
  for (const std::string& need : required_axes(sweep.command)) {
    if (!axes.has(need)) {
      axes.fail(need, "missing: a " + std::string(to_string(sweep.command)) + " sweep needs it");
    }
  }
  if (sweep.command == SweepCommand::plan) {
    if (!f.has("target")) f.fail("target", "missing: e.g. target: {tokens: 300e9}");
    sweep.target = parse_target(f);
    if (f.has("prices")) {
      const YAML::Node prices = f.node("prices");
      if (!prices.IsMap()) f.fail("prices", "must be a map of server template to USD per hour");
      for (const auto& entry : prices) {
        const std::string name = topo::yaml::scalar_text(
            entry.first, "prices", topo::yaml::loc_of(entry.first, file, f.loc("prices")));
        const SourceLoc at = topo::yaml::loc_of(entry.second, file, f.loc("prices"));
        const std::string value = topo::yaml::scalar_text(entry.second, name, at);
        char* end = nullptr;
        const double usd = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || !(usd > 0) || !(usd < 1e9)) {
          throw InputError(at, name, "'" + value + "' is not a price in USD per hour (above 0)");
        }
        sweep.prices[name] = usd;
      }
    }
  } else {
    if (f.has("target")) f.fail("target", "applies to plan sweeps only");
    if (f.has("prices")) f.fail("prices", "applies to plan sweeps only");
  }
  if (point_count(sweep) > kMaxPoints) {
    throw InputError(f.loc("axes"), "axes",
                     std::to_string(point_count(sweep)) + " points are more than " +
                         std::to_string(kMaxPoints) + "; split the sweep");
  }
  return sweep;
}

std::size_t point_count(const SweepFile& sweep) {
  std::size_t n = 1;
  for (const Axis& a : sweep.axes) {
    if (n > kMaxPoints) return n;  // no overflow: the caller refuses it anyway
    n *= a.values.size();
  }
  return n;
}

std::vector<std::size_t> point_coordinates(const SweepFile& sweep, std::size_t index) {
  std::vector<std::size_t> at(sweep.axes.size());
  for (std::size_t i = sweep.axes.size(); i-- > 0;) {
    const std::size_t n = sweep.axes[i].values.size();
    at[i] = index % n;
    index /= n;
  }
  return at;
}

}  // namespace cs::plan
