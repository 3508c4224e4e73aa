// Option dicts into report/ requests.
#include "options.hpp"

#include <pybind11/stl.h>

namespace stepcast::python {

namespace py = pybind11;

bool Options::has(const char* key) const { return values_.contains(key) && !values_[key].is_none(); }

std::string Options::text(const char* key, const std::string& fallback) const {
  return has(key) ? values_[key].cast<std::string>() : fallback;
}

int Options::integer(const char* key, int fallback) const { return has(key) ? values_[key].cast<int>() : fallback; }

double Options::number(const char* key, double fallback) const {
  return has(key) ? values_[key].cast<double>() : fallback;
}

bool Options::flag(const char* key) const { return has(key) && values_[key].cast<bool>(); }

std::vector<std::string> Options::texts(const char* key) const {
  return has(key) ? values_[key].cast<std::vector<std::string>>() : std::vector<std::string>{};
}

std::vector<int> Options::integers(const char* key) const {
  return has(key) ? values_[key].cast<std::vector<int>>() : std::vector<int>{};
}

std::vector<double> Options::numbers(const char* key) const {
  return has(key) ? values_[key].cast<std::vector<double>>() : std::vector<double>{};
}

report::PlanOptions plan_options(const Options& o) {
  report::PlanOptions p;
  p.workload = o.text("workload");
  p.topology = o.text("topology");
  p.nodes = o.integer("nodes");
  p.plan = o.text("plan");
  p.global_batch = o.integer("global_batch");
  p.seq = o.integer("seq");
  p.precision = o.text("precision");
  p.optimizer = o.text("optimizer");
  p.overhead = o.text("overhead");
  p.calibration = o.text("calibration");
  p.gpus = o.integer("gpus");
  p.gpus_per_domain = o.integer("gpus_per_domain");
  p.sets = o.texts("set");
  p.memory_margin = o.text("memory_margin");
  return p;
}

report::MeasuredOptions measured_options(const Options& o, report::MeasuredOptions m) {
  m.measured = o.texts("measured");
  m.topology = o.text("topology");
  m.nodes = o.integer("nodes");
  m.op = o.text("op");
  m.ranks = o.integer("ranks");
  m.gpus_per_node = o.integer("gpus_per_node");
  m.verbose = o.flag("verbose");
  m.algorithm = o.text("algorithm", m.algorithm);
  m.min_size = o.text("min_size");
  m.max_size = o.text("max_size");
  m.holdout = o.text("holdout", m.holdout);
  return m;
}

}  // namespace stepcast::python
