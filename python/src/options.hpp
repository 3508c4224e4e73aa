// Reading the option dict the Python package hands to each command (keys named as the request
// fields, values already checked and normalized by stepcast/_options.py) into report/ requests.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "stepcast/report/measured_inputs.hpp"
#include "stepcast/report/plan_inputs.hpp"

namespace stepcast::python {

/// One command's options: a key that is absent or None reads as the fallback.
class Options {
 public:
  explicit Options(pybind11::dict values) : values_(std::move(values)) {}

  [[nodiscard]] bool has(const char* key) const;
  [[nodiscard]] std::string text(const char* key, const std::string& fallback = {}) const;
  [[nodiscard]] int integer(const char* key, int fallback = 0) const;
  [[nodiscard]] double number(const char* key, double fallback = 0.0) const;
  [[nodiscard]] bool flag(const char* key) const;
  [[nodiscard]] std::vector<std::string> texts(const char* key) const;
  [[nodiscard]] std::vector<int> integers(const char* key) const;
  [[nodiscard]] std::vector<double> numbers(const char* key) const;

 private:
  pybind11::dict values_;
};

/// The options every plan command shares (workload, topology, nodes, plan, global_batch, seq,
/// precision, optimizer, overhead, calibration, gpus, set, memory_margin).
report::PlanOptions plan_options(const Options& options);

/// The options search and table share (their requests name them alike), those not given keeping
/// the request's defaults.
template <typename Request>
void read_search_options(const Options& o, Request& r) {
  r.global_batch = o.integer("global_batch");
  r.seq = o.integer("seq");
  r.refine = o.integer("refine", r.refine);
  r.threads = o.integer("threads");
  r.max_mbs = o.integer("max_mbs", r.max_mbs);
  r.max_cp = o.integer("max_cp", r.max_cp);
  r.precision = o.text("precision");
  r.optimizer = o.text("optimizer");
  r.flash = o.flag("flash");
  r.no_flash = o.flag("no_flash");
  r.doc_len = o.integer("doc_len");
  r.fine_tuning.peft = o.text("peft");
  r.fine_tuning.lora_rank = o.integer("lora_rank");
  r.fine_tuning.lora_targets = o.text("lora_targets");
  r.calibration = o.text("calibration");
  r.gpus_per_domain = o.integer("gpus_per_domain");
  r.sets = o.texts("set");
  r.memory_margin = o.text("memory_margin");
}

/// The options calibrate and validate share on measured collectives and kernels; those not given
/// keep the command's defaults.
report::MeasuredOptions measured_options(const Options& options, report::MeasuredOptions defaults = {});

}  // namespace stepcast::python
