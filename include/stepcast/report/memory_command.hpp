// `stepcast memory`: the memory per GPU of a plan, every term separate (STYLE.md A3: exit 3 when a
// topology is given and the plan does not fit); without a plan, a table of the common plans and
// precisions, as `accelerate estimate-memory` answers "will it fit" in one line.
#pragma once

#include "stepcast/report/command_output.hpp"
#include "stepcast/report/plan_inputs.hpp"

namespace stepcast::report {

struct MemoryRequest {
  PlanOptions plan;
  bool json = false;
  bool explain = false;
};

/// With a plan: its memory terms (or JSON) and a refusal when it does not fit the topology's GPU.
/// Without one: memory_table's rows.
CommandOutput memory_command(const MemoryRequest& request);

/// The memory per GPU of DDP, FSDP over the GPUs (one node unless --gpus or --nodes says more) and
/// FSDP with selective and full recompute, each in bf16 mixed precision and fp32 (or the
/// --precision given), at the workload's sequence length (--seq, else its training length, else
/// 2048, 4096 and 8192 tokens, said in a note); each row is what `memory --plan ROW` prints.
CommandOutput memory_table(const MemoryRequest& request);

}  // namespace stepcast::report
