// Fit on one machine, predict the others: every run of a list is fitted on all of its points and
// predicts every other run of the same GPU model, none of whose points it saw. This is what a
// user meets when a calibration made on one node is used for another node of the same kind.
#pragma once

#include <string>
#include <vector>

#include "calibration/measurements/measurements.hpp"
#include "calibration/measurements/timing_select.hpp"
#include "topology/cluster/cluster.hpp"

namespace cs::cal {

// One measured run (a data folder), its NCCL records reduced to one timing.
struct NamedRun {
  std::string name;  // the folder's base name
  Measurements data;
};

// Errors over the predicted points of one (collective, rank count, size band), default runs
// (NCCL's own choice), every ordered pair of runs.
struct CrossRow {
  std::string op;
  int n_ranks = 0;          // 0: every rank count
  bool large = false;       // the band: bytes >= 1 MiB, else below
  int pairs = 0;            // (fitted run, predicted run) pairs with points in the row
  int points = 0;           // predicted points over those pairs
  double prior_median = 0;  // |relative error|; the prior's points are counted once per pair
  double prior_worst = 0;
  double calibrated_median = 0;
  double calibrated_worst = 0;
  std::string worst;  // where the calibrated worst is: "fitted -> predicted, bytes"
};

struct CrossValidation {
  std::string topology;
  std::vector<std::string> runs;     // in the order given
  int pairs = 0;                     // ordered pairs fitted and predicted
  std::vector<std::string> skipped;  // "a -> b: other GPU model", runs without NCCL points
  std::vector<CrossRow> rows;        // per op, rank count, band
  std::vector<CrossRow> summary;     // per op and band over every rank count
  // NCCL's logged choice against the predicted one, over every predicted default-run point.
  int choice_points = 0;
  int prior_choice_matches = 0;
  int calibrated_choice_matches = 0;
};

inline constexpr double kLargeBandBytes = 1024.0 * 1024.0;

// Fits each run on all its points (no hold-out; `timing` recorded in its calibration) and
// predicts every other run of the same GPU model on `cluster`. Runs need NCCL records of two or
// more ranks to be fitted; one without them is named in `skipped`.
CrossValidation cross_validate(const std::vector<NamedRun>& runs, const topo::Cluster& cluster,
                               NcclTiming timing);

// The tables as text, as CSV (`table,what,ranks,band,pairs,points,prior_median,prior_worst,
// calibrated_median,calibrated_worst,worst`, errors as fractions) and as JSON.
std::string cross_validation_text(const CrossValidation& v, const std::string& timing_line);
std::string cross_validation_csv(const CrossValidation& v);
std::string cross_validation_json(const CrossValidation& v, const std::string& timing_line);

}  // namespace cs::cal
