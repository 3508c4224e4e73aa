// The weight-gradient placeholders of Megatron-Core's fused gradient accumulation: the weight
// gradient GEMM adds into the parameter's main_grad, and autograd is handed a tensor of the
// weight's shape in its place.
#pragma once

#include "stepcast/core/units.hpp"
#include "stepcast/plan/plan.hpp"
#include "stepcast/workload/workload.hpp"

namespace stepcast::cost {

/// Transformer Engine's cached placeholders (transformer_engine/pytorch/module/base.py,
/// get_dummy_wgrad, 2.3 on): one tensor per distinct weight shape of pipeline stage `stage`'s
/// layers, in the weights' precision, kept from the first backward on (a stage's layers of one kind
/// share theirs; routed experts of one shape share one). Only Megatron-Core's DDP, where
/// gradient_accumulation_fusion (its default) hands autograd placeholders, keeps them
/// (Plan::megatron_ddp: zero=1, or zero=0 with grad-reduce=). Zero for every other plan.
Bytes layer_wgrad_placeholders(const workload::TransformerShape& shape, const plan::Plan& plan, int stage = 0);

/// Megatron-Core's own output layer (tensor_parallel/layers.py,
/// LinearWithGradAccumulationAndAsyncCommunication): a new V/t x h placeholder at the start of
/// each micro-batch's backward, on the stage that holds the loss. Zero for plans that keep none
/// and under peft=lora, whose output layer is frozen.
Bytes output_wgrad_placeholder(const workload::TransformerShape& shape, const plan::Plan& plan);

}  // namespace stepcast::cost
