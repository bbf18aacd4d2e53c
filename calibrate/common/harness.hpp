// The Google Benchmark harness shared by the calibration programs: each measured point is one
// benchmark with manual (CUDA event) time, run for a few repetitions; the median repetition becomes
// one flat record of the program's JSON file, which is written atomically at the end.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "record.hpp"

namespace cs_cal {

// One measured point.
struct Point {
  std::string name;                 // unique benchmark name, e.g. "nccl/allreduce/n4/1048576"
  Record record;                    // the fields known before measuring (kind, op, bytes, ...)
  int repetitions = 5;              // timed regions; the median one is reported (>= 2)
  double bytes_per_op = 0;          // for the console's bytes_per_second counter (0: none)
  std::function<void()> warmup;     // run once before the first repetition (may be empty)
  std::function<double()> measure;  // one timed region; returns seconds per operation
  std::function<void(Record&, double seconds_per_op)> finish;  // adds GBps, tflops, ...
};

// Program options given as --key=value; every key must be declared with a default.
class Options {
 public:
  Options(std::map<std::string, std::string> defaults) : values_(std::move(defaults)) {}
  // Consumes the --key=value arguments that are declared; leaves --benchmark_* and the rest.
  void parse(int& argc, char** argv);
  bool declares(const std::string& key) const { return values_.count(key) > 0; }
  const std::string& text(const std::string& key) const;
  long long integer(const std::string& key) const;
  // A byte count or an element count: an integer >= 0, else UsageError naming the option.
  size_t count(const std::string& key) const;

 private:
  std::map<std::string, std::string> values_;
};

class Harness {
 public:
  // `benchmark_flags`: the --benchmark_* arguments the program was given (run_in_lockstep checks
  // them).
  explicit Harness(std::string program, std::vector<std::string> benchmark_flags = {})
      : program_(std::move(program)), benchmark_flags_(std::move(benchmark_flags)) {}
  void add(Point point) { points_.push_back(std::move(point)); }
  // For one process of several that time collectives together: each must run the same points the
  // same number of times in the same order, so Google Benchmark's flags that would not (random
  // interleaving, a warm-up timed to a minimum) are refused. Only the process with `reports` prints
  // and writes the file; the others measure silently.
  void run_in_lockstep(bool reports);
  bool reports() const { return reports_; }
  // Runs every point (Google Benchmark filters apply) and writes {schema, program, node, env,
  // measurements} to `out_path` atomically. Returns the number of records written (measured, on a
  // process that does not report).
  size_t run_and_write(const std::string& out_path);
  // Extra top-level JSON members (key -> JSON text), e.g. NCCL's chosen algorithms, set after
  // running.
  void set_note(const std::string& key, std::string json_text) {
    notes_[key] = std::move(json_text);
  }
  // Lets a program amend records after the run (e.g. attach what NCCL's log says); called before
  // writing.
  void set_postprocess(std::function<void(std::vector<Record>&)> fn) {
    postprocess_ = std::move(fn);
  }

 private:
  std::string program_;
  std::vector<std::string> benchmark_flags_;
  bool reports_ = true;
  std::vector<Point> points_;
  std::map<std::string, std::string> notes_;
  std::function<void(std::vector<Record>&)> postprocess_;
};

// The whole main() of a calibration program: parses options (adds --out, default
// "<program>.json"), lets `setup` register points, runs them, writes the file; turns errors into
// one line on stderr and exit code 1 (2 for bad options). A program that declares the option
// `procs` can be started as one process per GPU: --procs=N makes this process start N copies of the
// program with the other arguments (launch.hpp, run_copies) and return their exit code.
int calibration_main(int argc, char** argv, const std::string& program,
                     std::map<std::string, std::string> option_defaults,
                     const std::function<void(const Options&, Harness&)>& setup);

}  // namespace cs_cal
