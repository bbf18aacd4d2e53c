// Harness: registers each Point with Google Benchmark (manual time, fixed repetitions), collects
// the median repetition through a reporter, and writes the calibration JSON file atomically.
#include "harness.hpp"

#include <benchmark/benchmark.h>

#include <cstring>
#include <iostream>
#include <memory>
#include <stdexcept>

#include "core/atomic_file.hpp"
#include "launch.hpp"
#include "node_info.hpp"

namespace cs_cal {

namespace {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Console output as usual (none when `quiet`), and the median of each point's repetitions kept by
// benchmark name.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  explicit CollectingReporter(bool quiet) : quiet_(quiet) {}
  bool ReportContext(const Context& context) override {
    return quiet_ || ConsoleReporter::ReportContext(context);
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Aggregate || run.aggregate_name != "median") continue;
      const double iterations = run.iterations > 0 ? static_cast<double>(run.iterations) : 1.0;
      medians[run.run_name.function_name] = run.real_accumulated_time / iterations;
    }
    if (!quiet_) ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> medians;  // seconds per operation

 private:
  bool quiet_;
};

}  // namespace

void Options::parse(int& argc, char** argv) {
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--benchmark_", 0) == 0 || arg.rfind("--", 0) != 0) {
      argv[kept++] = argv[i];
      continue;
    }
    const auto eq = arg.find('=');
    const std::string key = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (values_.count(key) == 0 || eq == std::string::npos) {
      std::string valid;
      for (const auto& [name, value] : values_) valid += " --" + name + "=" + value;
      throw UsageError("unknown option '" + arg + "'; options (with defaults):" + valid +
                       " and Google Benchmark's --benchmark_*");
    }
    values_[key] = arg.substr(eq + 1);
  }
  argc = kept;
}

const std::string& Options::text(const std::string& key) const {
  return values_.at(key);
}

long long Options::integer(const std::string& key) const {
  const std::string& value = text(key);
  try {
    size_t used = 0;
    const long long number = std::stoll(value, &used);
    if (used == value.size()) return number;
  } catch (const std::exception&) {
  }
  throw UsageError("option --" + key + "=" + value + ": expected an integer");
}

size_t Options::count(const std::string& key) const {
  const long long number = integer(key);
  if (number < 0)
    throw UsageError("option --" + key + "=" + text(key) + ": expected a count, 0 or more");
  return static_cast<size_t>(number);
}

void Harness::run_in_lockstep(bool reports) {
  for (const std::string& flag : benchmark_flags_) {
    for (const char* refused :
         {"--benchmark_enable_random_interleaving", "--benchmark_min_warmup_time"}) {
      if (flag.rfind(refused, 0) == 0)
        throw UsageError(flag + ": refused in a run of several processes, which must all run " +
                         "the same points the same number of times in the same order");
    }
  }
  reports_ = reports;
}

size_t Harness::run_and_write(const std::string& out_path) {
  std::map<std::string, int> seen;
  for (const Point& point : points_) {
    if (seen[point.name]++ > 0) throw std::logic_error("two points named " + point.name);
  }
  for (const Point& point : points_) {
    auto warmed = std::make_shared<bool>(false);
    const Point* p = &point;
    benchmark::RegisterBenchmark(point.name.c_str(),
                                 [p, warmed](benchmark::State& state) {
                                   if (!*warmed && p->warmup) p->warmup();
                                   *warmed = true;
                                   for (auto _ : state) {
                                     const double seconds = p->measure();
                                     state.SetIterationTime(seconds);
                                     if (p->bytes_per_op > 0)
                                       state.counters["bytes_per_second"] =
                                           p->bytes_per_op / seconds;
                                   }
                                 })
        ->UseManualTime()
        ->Iterations(1)
        ->Repetitions(point.repetitions < 2 ? 2 : point.repetitions)
        ->ReportAggregatesOnly(true)
        ->Unit(benchmark::kMicrosecond);
  }
  CollectingReporter reporter(!reports_);
  benchmark::RunSpecifiedBenchmarks(&reporter);

  std::vector<Record> records;
  for (const Point& point : points_) {
    const auto found = reporter.medians.find(point.name);
    if (found == reporter.medians.end()) continue;  // filtered out
    Record record = point.record;
    record.set("time_us", found->second * 1e6);
    record.set("repetitions", point.repetitions < 2 ? 2 : point.repetitions);
    if (point.finish) point.finish(record, found->second);
    records.push_back(std::move(record));
  }
  if (postprocess_) postprocess_(records);
  if (!reports_) return records.size();

  std::string text =
      "{\"schema\":\"clustersim-calibration-v1\",\n\"program\":" + json_string(program_) +
      ",\n\"node\":" + node_json() + ",\n\"env\":" + env_json();
  for (const auto& [key, json] : notes_) text += ",\n" + json_string(key) + ":" + json;
  text += ",\n\"measurements\":[";
  for (size_t i = 0; i < records.size(); ++i) text += (i ? ",\n" : "\n") + to_json(records[i]);
  text += "\n]}\n";
  cs::write_file_atomically(out_path, text);
  return records.size();
}

int calibration_main(int argc, char** argv, const std::string& program,
                     std::map<std::string, std::string> option_defaults,
                     const std::function<void(const Options&, Harness&)>& setup) {
  option_defaults.emplace("out", program + ".json");
  Options options(std::move(option_defaults));
  std::vector<std::string> copy_args, benchmark_flags;  // as given: for --procs' copies
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--procs=", 0) != 0) copy_args.push_back(arg);
    if (arg.rfind("--benchmark_", 0) == 0) benchmark_flags.push_back(arg);
  }
  int procs = 0;
  try {
    options.parse(argc, argv);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
    if (options.declares("procs")) {
      if (options.count("procs") > 1024)
        throw UsageError("option --procs=" + options.text("procs") + ": expected 0..1024");
      procs = static_cast<int>(options.count("procs"));
    }
  } catch (const UsageError& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 2;
  }
  try {
    if (procs > 0) return run_copies(program, procs, copy_args);
    Harness harness(program, benchmark_flags);
    setup(options, harness);
    const size_t written = harness.run_and_write(options.text("out"));
    if (harness.reports())
      std::cerr << program << ": wrote " << written << " records to " << options.text("out")
                << "\n";
    return 0;
  } catch (const UsageError& e) {
    std::cerr << program << ": " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << program << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace cs_cal
