// The extension `stepcast._stepcast`: one function per command, each reading its option dict into
// the request the command line builds and calling the same report/ function, with the GIL released
// while it runs. Each returns the command's --json text (and what the command line would exit
// with); stepcast/_commands.py turns that into dicts and exceptions.
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <utility>

#include "errors.hpp"
#include "options.hpp"
#include "stepcast/core/output_file.hpp"
#include "stepcast/report/calibrate_command.hpp"
#include "stepcast/report/collective_command.hpp"
#include "stepcast/report/command_output.hpp"
#include "stepcast/report/memory_command.hpp"
#include "stepcast/report/operators_command.hpp"
#include "stepcast/report/predict_command.hpp"
#include "stepcast/report/search_command.hpp"
#include "stepcast/report/simulate_command.hpp"
#include "stepcast/report/table_command.hpp"
#include "stepcast/report/validate_command.hpp"
#include "stepcast/report/validate_runs_command.hpp"

namespace stepcast::python {

namespace py = pybind11;

namespace {

/// Runs `work` with the GIL released: other Python threads run meanwhile. `work` touches no
/// Python object.
template <typename Work>
auto without_gil(Work&& work) {
  const py::gil_scoped_release release;
  return std::forward<Work>(work)();
}

/// The JSON text, and the refusal's message when the plan does not fit (None otherwise). The
/// files a command makes beside its text (a trace) are written, as the executable writes them,
/// only for a plan that fits.
py::tuple with_refusal(const report::CommandOutput& out) {
  if (!out.refusal) write_files_atomically(out.files);
  return py::make_tuple(out.text, out.refusal ? py::object(py::str(out.refusal->what())) : py::object(py::none()));
}

py::tuple predict(const py::dict& values) {
  const Options o(values);
  report::PredictRequest r;
  r.plan = plan_options(o);
  r.interval.runs = o.texts("interval_runs");
  r.achieved_fraction = o.number("achieved_fraction");
  r.explain = o.flag("explain");
  r.json = true;
  return with_refusal(without_gil([&r] { return report::predict_command(r); }));
}

py::tuple memory(const py::dict& values) {
  const Options o(values);
  report::MemoryRequest r;
  r.plan = plan_options(o);
  r.explain = o.flag("explain");
  r.json = true;
  return with_refusal(without_gil([&r] { return report::memory_command(r); }));
}

py::tuple simulate(const py::dict& values) {
  const Options o(values);
  report::SimulateRequest r;
  r.plan = plan_options(o);
  r.interval.runs = o.texts("interval_runs");
  r.seed = static_cast<std::uint64_t>(o.integer("seed", 1));
  r.seeds = o.integer("seeds", 1);
  r.straggler = o.text("straggler");
  r.trace = o.text("trace");
  r.json = true;
  return with_refusal(without_gil([&r] { return report::simulate_command(r); }));
}

std::string search(const py::dict& values) {
  const Options o(values);
  report::SearchRequest r;
  r.workload = o.text("workload");
  r.topology = o.text("topology");
  r.nodes = o.integer("nodes");
  r.gpus = o.integer("gpus");
  r.top = o.integer("top", r.top);
  r.compare = o.texts("compare");
  read_search_options(o, r);
  r.json = true;
  return without_gil([&r] { return report::search_command(r).text; });
}

std::string table(const py::dict& values) {
  const Options o(values);
  report::TableRequest r;
  r.workloads = o.texts("workloads");
  r.topologies = o.texts("topologies");
  r.gpus = o.integers("gpus");
  r.tokens = o.number("tokens");
  r.prices = o.numbers("price");
  r.plan = o.text("plan");
  read_search_options(o, r);
  r.format = "json";
  return without_gil([&r] { return report::table_command(r).text; });
}

std::string collective(const py::dict& values) {
  const Options o(values);
  report::CollectiveRequest r;
  r.op = o.text("op");
  r.algorithm = o.text("algorithm");
  r.protocol = o.text("protocol");
  r.size = o.text("size");
  r.sizes = o.text("sizes");
  r.ranks = o.integer("ranks");
  r.ranks_given = o.has("ranks");
  r.topology = o.text("topology");
  r.nodes = o.integer("nodes");
  r.nodes_given = o.has("nodes");
  r.gpus = o.integer("gpus");
  r.gpus_per_domain = o.integer("gpus_per_domain");
  r.sets = o.texts("set");
  r.explain = o.flag("explain");
  r.engine = o.text("engine", r.engine);
  r.calibration = o.text("calibration");
  r.json = true;
  return without_gil([&r] { return report::collective_command(r); });
}

std::string validate(const py::dict& values) {
  const Options o(values);
  report::ValidateOutput out;
  if (o.has("runs")) {
    report::ValidateRunsRequest r;
    r.files = o.texts("runs");
    r.engine = o.text("engine", r.engine);
    r.calibration = o.text("calibration");
    r.plot = o.text("plot");
    r.json = true;
    out = without_gil([&r] { return report::validate_runs_command(r); });
  } else {
    report::ValidateRequest r;
    r.in = measured_options(o, r.in);
    r.calibration = o.text("calibration");
    r.plot = o.text("plot");
    r.json = true;
    out = without_gil([&r] { return report::validate_command(r); });
  }
  write_files_atomically(out.files);  // the plot, when asked
  return out.text;
}

/// The calibration file's text and the fit's report.
py::tuple calibrate(const py::dict& values) {
  const Options o(values);
  report::CalibrateOutput out;
  if (o.has("runs")) {
    report::CalibrateRunsRequest r;
    r.files = o.texts("runs");
    if (o.has("fit")) r.fit = o.texts("fit");
    r.fit_on = o.text("fit_on", r.fit_on);
    r.base = o.text("base");
    out = without_gil([&r] { return report::calibrate_runs_command(r); });
  } else {
    const report::MeasuredOptions r = measured_options(o);
    out = without_gil([&r] { return report::calibrate_command(r); });
  }
  return py::make_tuple(out.calibration_json, out.text);
}

std::string operators(const py::dict& values) {
  const Options o(values);
  report::OperatorsRequest r;
  r.plan = plan_options(o);
  r.format = "json";
  return without_gil([&r] { return report::operators_command(r); });
}

}  // namespace

}  // namespace stepcast::python

PYBIND11_MODULE(_stepcast, m) {
  namespace sp = stepcast::python;
  m.doc() = "stepcast's commands over its C++ libraries; use the `stepcast` package, which wraps these.";
  sp::register_error_translation();
  m.attr("version") = STEPCAST_VERSION;
  // The clone this module was built from: its topologies/ and workloads/ are the shipped ones.
  m.attr("source_dir") = STEPCAST_SOURCE_DIR;
  m.def("predict", &sp::predict);
  m.def("memory", &sp::memory);
  m.def("simulate", &sp::simulate);
  m.def("search", &sp::search);
  m.def("table", &sp::table);
  m.def("collective", &sp::collective);
  m.def("validate", &sp::validate);
  m.def("calibrate", &sp::calibrate);
  m.def("operators", &sp::operators);
}
