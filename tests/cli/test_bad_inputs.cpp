// The bad-input corpus of every format clustersim reads (issue 20): for each format one case per
// class of error (syntax, unknown key, wrong type, out of range, dangling reference, empty, binary
// garbage) under tests/data/bad/<format>/, plus the topology's older cases (tests/data/bad/*.yaml)
// and the model's (tests/data/models/bad_*.yaml) that already cover a class. Each case runs
// through the command that reads the format and must end in exit 2, one line on standard error
// naming the file, the line, the key and what is wrong, and no output: nothing on standard
// output, no output file. Every class applies to every format.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "support/cli_run.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kRoot = CLUSTERSIM_SOURCE_DIR;
const std::string kData = CLUSTERSIM_TEST_DATA;

enum class Format {
  topology,
  flows,
  calibration,
  measurements,
  model,
  sweep,
  published,
  ddp_steps
};

struct BadCase {
  Format format;
  const char* file;     // under tests/data
  const char* message;  // how the error line goes on after "<path>:"; {root} is the source tree
};

// Lines are counted in the files; YAML and CSV cases open with a comment saying what is wrong.
// The binary garbage is 256 bytes of Python's random.Random(20), the same in every format: its
// first control byte, 0x19, is its 14th byte, on line 1 (it holds no newline).
const std::vector<BadCase> kCases = {
    // Topology YAML, through `clustersim topo`.
    {Format::topology, "bad/malformed_yaml.yaml", "7: malformed YAML: end of map flow not found"},
    {Format::topology, "bad/unknown_key.yaml",
     "13: key 'bandwith': unknown key in link entry; did you mean 'bandwidth'?"},
    {Format::topology, "bad/bad_integer.yaml", "8: key 'count': 'two' is not an integer"},
    {Format::topology, "bad/count_zero.yaml",
     "15: key 'count': '0' is out of range; valid: an integer from 1 to"},
    {Format::topology, "bad/unknown_link_node.yaml",
     "13: key 'to': no node 'gpu9' in server template 'box' (did you mean 'gpu0'?); known "
     "nodes: gpu0, gpu1, cpu, nic"},
    {Format::topology, "bad/topology/empty.yaml",
     "1: the topology file must be a map of keys to values, found empty"},
    {Format::topology, "bad/topology/binary_garbage.yaml",
     "1: not a text file (control byte 0x19); a topology file is YAML text"},
    // Flows CSV, through `clustersim flows` on tests/data/flows/two-servers.yaml.
    {Format::flows, "bad/flows/syntax.csv",
     "4: the row has 4 fields; the header names 5 (id, src, dst, bytes, start)"},
    {Format::flows, "bad/flows/unknown_key.csv",
     "2: key 'size': unknown column; the columns are id, src, dst, bytes, start"},
    {Format::flows, "bad/flows/wrong_type.csv",
     "4: key 'bytes': 'lots' is not a size: it must start with a number"},
    {Format::flows, "bad/flows/out_of_range.csv",
     "3: key 'start': '2e6s' must be a time in [0, 1e6 s]"},
    {Format::flows, "bad/flows/dangling_reference.csv",
     "3: key 'dst': no node named 'node2/gpu0'; valid: rank:0..rank:3 or a node name such as"},
    {Format::flows, "bad/flows/empty.csv",
     "1: no header line; it must name id, src, dst, bytes, start"},
    {Format::flows, "bad/flows/binary_garbage.csv",
     "1: control character 0x19 in the text; is this a CSV file?"},
    // Calibration JSON, through `clustersim coll --calibration`. The errors stop the reading, so
    // most cases hold only the keys read before theirs.
    {Format::calibration, "bad/calibration/syntax.json",
     "6: not valid JSON: [json.exception.parse_error.101] parse error at line 6, column 10: "
     "syntax error while parsing object - unexpected string literal; expected '}'"},
    {Format::calibration, "bad/calibration/unknown_key.json",
     "10: key 'mem_bw_GBps': unknown key; valid here: schema, machine, topology, split, timing, "
     "nccl_nvls_enable, "
     "nccl, nccl_by_op, copies, launch, membw_GBps, gemm"},
    {Format::calibration, "bad/calibration/wrong_type.json",
     "4: key 'machine.gpu_count': expected an integer in 0..1048576, got \"one\""},
    {Format::calibration, "bad/calibration/out_of_range.json",
     "10: key 'split.holdout_ranks[0]': expected an integer in 1..1048576, got 0"},
    // calibrate/data/h100x1/calibration.json with a host floor of a configuration that no run
    // has; it was read, and never found.
    {Format::calibration, "bad/calibration/dangling_reference.json",
     "95: key 'nccl.host_floors[0].config': unknown configuration 'rign/LL'; valid: default, or "
     "ALGO/PROTO with ALGO one of TREE, RING, NVLS, PAT, NVLSTREE, COLLNETDIRECT, COLLNETCHAIN "
     "and PROTO one of LL, LL128, SIMPLE"},
    {Format::calibration, "bad/calibration/empty.json",
     "1: not valid JSON: [json.exception.parse_error.101] parse error at line 1, column 1: "
     "syntax error while parsing value - unexpected end of input"},
    {Format::calibration, "bad/calibration/binary_garbage.json",
     "1: not a text file (control byte 0x19); a calibration file is JSON text"},
    // Measurement JSON, one record a line, through `clustersim fit` of a folder holding the file
    // alone, against tests/data/topologies/two-gpu-pcie.yaml. Record errors name the record's
    // line and the bare key.
    {Format::measurements, "bad/measurements/syntax.json",
     "4: not valid JSON: [json.exception.parse_error.101] parse error at line 4, column 1: "
     "syntax error while parsing array - unexpected '{'; expected ']'"},
    // 'timng' was ignored and the gated record fitted as host-paced.
    {Format::measurements, "bad/measurements/unknown_key.json",
     "4: key 'timng': unknown key in a nccl record (did you mean 'timing'?); valid: kind, "
     "time_us, repetitions, iterations, timing, op,"},
    {Format::measurements, "bad/measurements/wrong_type.json",
     "4: key 'nranks': expected an integer, got \"two\""},
    {Format::measurements, "bad/measurements/out_of_range.json",
     "4: key 'bytes': expected a finite number above 0, got -4096"},
    {Format::measurements, "bad/measurements/dangling_reference.json",
     "4: key 'dst': GPU 3 measured, but two-gpu-pcie.yaml has 2 GPU(s); give the measured "
     "machine's topology"},
    {Format::measurements, "bad/measurements/empty.json",
     "1: not valid JSON: [json.exception.parse_error.101] parse error at line 1, column 1: "
     "syntax error while parsing value - unexpected end of input"},
    {Format::measurements, "bad/measurements/binary_garbage.json",
     "1: not a text file (control byte 0x19); a measurement file is JSON text"},
    // Model YAML, through `clustersim ddp --trace`.
    {Format::model, "models/bad_syntax.yaml", "4: malformed YAML: illegal flow end"},
    {Format::model, "models/bad_unknown_key.yaml",
     "6: key 'precison': unknown key in settings; did you mean 'precision'?"},
    {Format::model, "models/bad_causal.yaml",
     "14: key 'causal': 'yes' is not a boolean; valid: true, false"},
    {Format::model, "models/bad_batch_zero.yaml",
     "5: key 'batch': '0' is out of range; valid: an integer from 1 to 1000000"},
    {Format::model, "models/bad_dangling_measured.yaml",
     "18: key 'h100': no measurement has id 'h100' (did you mean 'h200'?)"},
    {Format::model, "models/bad_empty.yaml",
     "1: the file holds no YAML; a model file needs model, settings, recorded_at and layers"},
    {Format::model, "bad/model/binary_garbage.yaml",
     "1: not a text file (control byte 0x19); a model file is YAML text"},
    // Sweep YAML, through `clustersim sweep -o`.
    {Format::sweep, "bad/sweep/syntax.yaml", "7: malformed YAML: end of sequence flow not found"},
    {Format::sweep, "bad/sweep/unknown_key.yaml",
     "6: key 'batchsize': unknown key in axes. Valid keys: topology, nodes, model, batch, seq,"},
    {Format::sweep, "bad/sweep/wrong_type.yaml", "6: key 'batch': 'eight' is not an integer"},
    // Was exit 3: yaml-cpp's conversion error.
    {Format::sweep, "bad/sweep/wrong_type_price_name.yaml",
     "7: key 'prices': expected a single value, found a list"},
    {Format::sweep, "bad/sweep/out_of_range.yaml",
     "6: key 'nodes': '0' is out of range; valid: an integer from 1 to 1000000"},
    // Was the missing file's own "cannot open" error, without the sweep file's line.
    {Format::sweep, "bad/sweep/dangling_reference.yaml",
     "4: key 'topology': no topology file {root}/topologies/dgx-h300.yaml (paths are relative to "
     "the sweep file's folder)"},
    {Format::sweep, "bad/sweep/empty.yaml",
     "1: the sweep file must be a map of keys to values, found empty"},
    {Format::sweep, "bad/sweep/binary_garbage.yaml",
     "1: not a text file (control byte 0x19); a sweep file is YAML text"},
    // Published sets YAML, through `clustersim compare`.
    {Format::published, "bad/published/syntax.yaml",
     "10: malformed YAML: end of map flow not found"},
    {Format::published, "bad/published/unknown_key.yaml",
     "6: key 'topolgy': unknown key in set; did you mean 'topology'?"},
    // Was exit 0: anything but "true" read as false.
    {Format::published, "bad/published/wrong_type.yaml",
     "9: key 'in_place': 'yes' is not a boolean; valid: true, false"},
    // Was exit 3: yaml-cpp's conversion error.
    {Format::published, "bad/published/wrong_type_env_name.yaml",
     "9: key 'env': expected a single value, found a list"},
    // Both were found only when the set was simulated, and named neither file nor line.
    {Format::published, "bad/published/out_of_range.yaml",
     "8: key 'gpus_per_node': 16 is more than the 8 GPUs of server 'node0' of dgx-h100.yaml"},
    {Format::published, "bad/published/out_of_range_env.yaml",
     "9: key 'NCCL_ALGO': unknown algorithm 'Rign'; valid: TREE, RING, NVLS, PAT"},
    {Format::published, "bad/published/out_of_range_nccl.yaml",
     "9: key 'nccl': 'v2.24.3-1' is not an NCCL release 2.12 - 2.99 (as 2.24.3 or 2.24)"},
    {Format::published, "bad/published/dangling_reference.yaml",
     "6: key 'topology': no topology file {root}/topologies/dgx-h300.yaml"},
    {Format::published, "bad/published/empty.yaml",
     "1: the published sets file must be a map of keys to values, found empty"},
    {Format::published, "bad/published/binary_garbage.yaml",
     "1: not a text file (control byte 0x19); a published sets file is YAML text"},
    // DDP step JSON (calibrate/ddp/ddp_steps.py), through `clustersim validate --ddp` of a folder
    // holding the file alone, against topologies/h200-4gpu.yaml and the shipped models.
    {Format::ddp_steps, "bad/ddp_steps/syntax.json",
     "5: not valid JSON: [json.exception.parse_error.101] parse error at line 5, column 6: "
     "syntax error while parsing object - unexpected string literal; expected '}'"},
    {Format::ddp_steps, "bad/ddp_steps/unknown_key.json",
     "9: key 'wold_size': unknown key; valid here: schema, model, batch, seq, precision, "
     "optimizer, momentum, world_size, launch, steps, warmup, date, node, variants"},
    {Format::ddp_steps, "bad/ddp_steps/unknown_variant.json",
     "12: key 'variants.fsdp25': unknown variant; valid: plain (no DDP) or ddp<cap> (DDP with a "
     "bucket cap in MiB, as ddp25)"},
    {Format::ddp_steps, "bad/ddp_steps/missing_key.json", "1: key 'batch': missing"},
    {Format::ddp_steps, "bad/ddp_steps/wrong_type.json",
     "4: key 'batch': expected an integer in 1..1048576, got \"eight\""},
    {Format::ddp_steps, "bad/ddp_steps/out_of_range.json",
     "9: key 'world_size': expected an integer in 1..1048576, got 0"},
    {Format::ddp_steps, "bad/ddp_steps/dangling_reference.json",
     "3: key 'model': no model file '{root}/models/gpt5.yaml'"},
    {Format::ddp_steps, "bad/ddp_steps/empty.json",
     "1: not valid JSON: [json.exception.parse_error.101] parse error at line 1, column 1: "
     "syntax error while parsing value - unexpected end of input"},
    {Format::ddp_steps, "bad/ddp_steps/binary_garbage.json",
     "1: not a text file (control byte 0x19); a DDP step file is JSON text"},
};

// A scratch folder of this test process: the output files a run must not write, its standard
// output, and the data folder of one case (fit and validate --ddp read folders).
struct Scratch {
  fs::path dir = fs::temp_directory_path() / ("clustersim-badin-" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string path(const std::string& name) const { return (dir / name).string(); }
};

std::string quoted(const std::string& path) {
  return "'" + path + "'";
}

// The command line that reads `input` as its format, writing any output file to `out`.
std::string command_for(Format format, const std::string& input, const std::string& out) {
  const std::string bin = quoted(CLUSTERSIM_BINARY) + " ";
  switch (format) {
    case Format::topology:
      return bin + "topo " + quoted(input);
    case Format::flows:
      return bin + "flows -t " + quoted(kData + "/flows/two-servers.yaml") + " --flows " +
             quoted(input) + " --csv " + quoted(out);
    case Format::calibration:
      return bin + "coll -t " + quoted(kRoot + "/topologies/dgx-h100.yaml") + " -b 8 -e 8" +
             " --calibration " + quoted(input);
    case Format::measurements:  // `input` is the folder
      return bin + "fit " + quoted(input) + " -t " +
             quoted(kData + "/topologies/two-gpu-pcie.yaml") + " -o " + quoted(out);
    case Format::model:
      return bin + "ddp -t " + quoted(kRoot + "/topologies/dgx-h100.yaml") + " -m " +
             quoted(input) + " --trace " + quoted(out);
    case Format::sweep:
      return bin + "sweep -q -o " + quoted(out) + " " + quoted(input);
    case Format::published:
      return bin + "compare " + quoted(input);
    case Format::ddp_steps:  // `input` is the folder
      return bin + "validate -t " + quoted(kRoot + "/topologies/h200-4gpu.yaml") + " --ddp " +
             quoted(input) + " --models " + quoted(kRoot + "/models") + " --csv " + quoted(out);
  }
  return "";
}

std::string with_root(std::string message) {
  const std::string mark = "{root}";
  const auto at = message.find(mark);
  if (at != std::string::npos) message.replace(at, mark.size(), kRoot);
  return message;
}

}  // namespace

TEST_CASE("every bad input: exit 2, one line with file:line, key and what is wrong, no output") {
  for (const BadCase& c : kCases) {
    const std::string file = c.file;
    CAPTURE(file);
    const Scratch scratch;
    const std::string out = scratch.path("out");
    std::string path = kData + "/" + c.file;
    std::string input = path;
    if (c.format == Format::measurements || c.format == Format::ddp_steps) {
      // fit and validate --ddp read a folder: the file alone in one.
      input = scratch.path("data");
      fs::create_directories(input);
      path = (fs::path(input) / fs::path(c.file).filename()).string();
      fs::copy_file(kData + "/" + c.file, path);
    }
    const std::string stdout_file = scratch.path("stdout");
    const cs::test::CommandResult r =
        cs::test::run_command(command_for(c.format, input, out) + " 2>&1 >" + quoted(stdout_file));
    CAPTURE(r.output);
    CHECK(r.status == 2);
    CHECK(std::count(r.output.begin(), r.output.end(), '\n') == 1);
    CHECK(r.output.starts_with("clustersim: error: " + path + ":" + with_root(c.message)));
    CHECK(cs::test::read_text_file(stdout_file).empty());
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("every file of the tests/data/bad/<format> folders has a row in the table") {
  // A case added without a row would never be checked.
  std::set<std::string> listed;
  for (const BadCase& c : kCases) listed.insert(c.file);
  std::set<std::string> on_disk;
  for (const char* folder : {"topology", "flows", "calibration", "measurements", "model", "sweep",
                             "published", "ddp_steps"}) {
    for (const auto& entry : fs::directory_iterator(kData + "/bad/" + folder)) {
      on_disk.insert(std::string("bad/") + folder + "/" + entry.path().filename().string());
    }
  }
  for (const std::string& file : on_disk) {
    CAPTURE(file);
    CHECK(listed.count(file) == 1);
  }
}
