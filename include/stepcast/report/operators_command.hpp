// `stepcast operators`: the compute model's operator list for one micro-batch of a plan, in the
// requested format. The command line and the Python module both call operators_command.
#pragma once

#include <string>

#include "stepcast/report/plan_inputs.hpp"

namespace stepcast::report {

struct OperatorsRequest {
  PlanOptions plan;  ///< the topology is required (its GPU names the list)
  std::string format = "text";
};

/// The operator report rendered as `format` (text, markdown, csv or json). Bad input throws InputError.
std::string operators_command(const OperatorsRequest& request);

}  // namespace stepcast::report
