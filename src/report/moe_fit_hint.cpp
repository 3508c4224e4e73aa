// The model state split of an MoE plan that does not fit: Megatron-LM's MoE guide names expert
// parallel, expert tensor parallel and the distributed optimizer for the experts' bytes and tp/pp
// for the dense layers', so the split says which of fit_hint's tries matter.
#include "stepcast/report/moe_fit_hint.hpp"

#include <fmt/format.h>

#include "stepcast/core/units.hpp"
#include "stepcast/cost/moe_memory.hpp"

namespace stepcast::report {

std::string moe_fit_hint(const plan::Plan& plan, const workload::Workload& workload) {
  const cost::MoeModelState state = cost::moe_state_split(workload, plan);
  return fmt::format("  model state per GPU: routed experts {}, dense layers {}\n", format_bytes(state.experts.total()),
                     format_bytes(state.dense.total()));
}

}  // namespace stepcast::report
