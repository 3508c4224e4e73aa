// Which parameters train: all of them, or under peft=lora the adapters beside frozen weights.
#pragma once

#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::cost {

/// One model-parallel rank's parameters (its tp x pp share of the model), split into those the
/// step trains (gradients, optimizer state, data-parallel reduction) and those it keeps frozen.
struct ParameterShare {
  double trained = 0.0;
  double frozen = 0.0;
};

/// The whole share trains, or under peft=lora only its layers' adapters (the k x n of the adapter
/// GEMMs operators.cpp lists for one layer, times the rank's layers) while the model's share is
/// frozen. Precondition: resolved, valid plan (a LoRA plan's workload has a shape).
ParameterShare parameters_per_model_rank(const workload::Workload& workload, const plan::Plan& plan);

}  // namespace stepcast::cost
