// `stepcast operators`: loads the plan's inputs and renders the operators the compute model
// prices for one micro-batch.
#include "stepcast/report/operators_command.hpp"

#include "stepcast/calibrate/bench_operators.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/report/operator_table.hpp"
#include "stepcast/report/writers.hpp"

namespace stepcast::report {

std::string operators_command(const OperatorsRequest& c) {
  const Format format = parse_format(c.format, "--format");
  const PlanInputs in = load_plan_inputs(c.plan);
  if (!in.workload.shape) {
    throw InputError(c.plan.workload, {},
                     "operators needs the model's shape (layers, hidden, heads, ...), not only a parameter count");
  }
  const auto operators =
      calibrate::bench_operators(in.workload, in.plan, cost::fp8_gemm_any_layout(in.topology->gpu()));
  return render(operator_report(in.workload, in.plan, in.topology->gpu().name, operators), format);
}

}  // namespace stepcast::report
