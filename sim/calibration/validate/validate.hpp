// `clustersim validate` as a pure computation: every measured NCCL point and copy predicted by the
// simulator twice, with NCCL's priors on the plain topology and with a calibration applied, then
// the error table: per (collective, rank count, forced config) the median and worst |error| over
// held-out sizes, and how often the tuner's (algorithm, protocol) equals the one NCCL logged.
#pragma once

#include <string>
#include <vector>

#include "calibration/calfile/calibration_file.hpp"
#include "calibration/measurements/measurements.hpp"
#include "topology/cluster/cluster.hpp"

namespace cs::cal {

// One measured point and its two predictions.
struct Prediction {
  std::string kind;    // "nccl" or "copy"
  std::string group;   // nccl: op; copy: path (h2d_pinned, peer, ...)
  int n_ranks = 0;     // nccl only
  std::string config;  // nccl: "default" or "ring/LL", ...; copy: ""
  double bytes = 0;
  bool held_out = false;
  double measured_us = 0;
  double prior_us = 0;
  double calibrated_us = 0;
  // "RING/LL128/24" as logged (algorithm/protocol, then channels where the log has them); ""
  // when NCCL logged none.
  std::string nccl_choice;
  std::string prior_choice;  // the tuner's, alike ("P2P/SIMPLE" for send/recv based ops)
  std::string calibrated_choice;
};

// Errors of one table row, over its held-out points.
struct ErrorRow {
  std::string kind;
  std::string group;
  int n_ranks = 0;
  std::string config;
  int points = 0;
  double prior_median = 0;  // |relative error|
  double prior_worst = 0;
  double calibrated_median = 0;
  double calibrated_worst = 0;
  int choice_points = 0;  // points where NCCL logged its choice
  int prior_choice_matches = 0;
  int calibrated_choice_matches = 0;
};

struct Validation {
  std::string machine;
  std::string topology;
  std::string split;   // Split::describe()
  std::string timing;  // TimingSelection::describe() of the data ("" when not selected)
  std::vector<Prediction> predictions;
  std::vector<ErrorRow> rows;     // per (kind, group, ranks, config), in that order
  std::vector<ErrorRow> summary;  // per NCCL op over default runs, all rank counts; per copy path
};

// Predicts every point of `data` on `cluster` (its uncalibrated topology) with and without
// `calibration`; rows are computed over the points the calibration's split held out.
Validation validate(const Measurements& data, const topo::Cluster& cluster,
                    const Calibration& calibration);

}  // namespace cs::cal
