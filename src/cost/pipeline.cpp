// Pipeline bubble and in-flight micro-batches per schedule (Narayanan et al. 2021; Korthikanti
// et al. 2022; Qi et al. 2023 "Zero Bubble Pipeline Parallelism").
#include "stepcast/cost/pipeline.hpp"

#include <algorithm>

#include "stepcast/core/errors.hpp"

namespace stepcast::cost {

double held_microbatches(plan::Schedule schedule, int p, int m, int v) {
  STEPCAST_ASSERT(p >= 1 && m >= 1 && v >= 1, "pipeline degrees are at least 1");
  if (p == 1) return 1.0;  // gradient accumulation runs micro-batches one after another
  const double warmup = std::min(p, m);
  switch (schedule) {
    case plan::Schedule::kGpipe:
      return m;
    case plan::Schedule::k1F1B:
    case plan::Schedule::kZbH1:  // Qi et al. 2023: ZB-H1 keeps 1F1B's peak memory
      return warmup;
    case plan::Schedule::kInterleaved:
      return warmup * (1.0 + (p - 1.0) / (static_cast<double>(p) * v));
  }
  STEPCAST_UNREACHABLE("unknown schedule");
}

double overlap_extra_microbatches(const plan::Plan& plan) {
  const bool paired = plan.moe_overlap && plan.pp > 1 && plan.schedule == plan::Schedule::kInterleaved;
  return paired ? 1.0 / plan.vp : 0.0;
}

double held_microbatches(const plan::Plan& plan) {
  return held_microbatches(plan.schedule, plan.pp, plan.micro_batches(), plan.vp) + overlap_extra_microbatches(plan);
}

double cooldown_microbatches(plan::Schedule schedule, int p, int m, int v) {
  STEPCAST_ASSERT(p >= 1 && m >= 1 && v >= 1, "pipeline degrees are at least 1");
  if (p == 1) return 0.0;  // gradient accumulation: every backward follows its own forward
  switch (schedule) {
    case plan::Schedule::kGpipe:
      return m;
    case plan::Schedule::k1F1B:
    case plan::Schedule::kZbH1:
      return std::min(p - 1, m);
    case plan::Schedule::kInterleaved: {
      if (v == 1) return std::min(p - 1, m);
      const int passes = std::min((p - 1) * 2 + (v - 1) * p, m * v);
      return static_cast<double>(passes) / v;
    }
  }
  STEPCAST_UNREACHABLE("unknown schedule");
}

double unpaired_microbatches(plan::Schedule schedule, int p, int m, int v) {
  if (schedule == plan::Schedule::kGpipe) return m;
  // The cool-down mirrors the warm-up; the first steady forward (one model chunk's pass) has no
  // backward before it either, unless the warm-up takes every pass.
  const double cooldown = cooldown_microbatches(schedule, p, m, v);
  const double pass = schedule == plan::Schedule::kInterleaved ? 1.0 / v : 1.0;
  return cooldown < m ? cooldown + pass : cooldown;
}

// Stage c runs its m micro-batches, m(F+B+W), back to back once micro-batch 0's forward reaches
// it, and but for one wait: its first B needs micro-batch 0 to reach the last stage and come
// back, while c runs the min(p-c, m) forwards before that B. c's last B comes before the
// min(m, c+1) W's it deferred; from there the last micro-batch's B runs down to each stage k
// below, which then runs its own min(m, k+1) deferred W's. The step takes the longest of these
// paths over c; where the paths cross stages more than once (upstream stages feeding c slower
// than it runs), longer ones exist and this is a lower bound.
PipelineTime zb_h1_pipeline(const std::vector<StagePasses>& stages, int m) {
  const int p = static_cast<int>(stages.size());
  STEPCAST_ASSERT(p >= 1 && m >= 1, "a pipeline has stages and micro-batches");
  const auto at = [&](int s) -> const StagePasses& { return stages[static_cast<std::size_t>(s)]; };
  const auto deferred = [&](int s) { return at(s).weight_grad * std::min(m, s + 1); };
  Seconds round_trip;  // micro-batch 0's F and B on the stages after c
  for (int s = 1; s < p; ++s) round_trip += at(s).forward + at(s).backward;
  Seconds head;                 // micro-batch 0's forward up to c
  Seconds down;                 // the B's of the stages below c
  Seconds drain = deferred(0);  // the longest of k's deferred W's less `down` up to k, k <= c
  PipelineTime best;
  for (int c = 0; c < p; ++c) {
    const StagePasses& st = at(c);
    const Seconds wait = std::max(Seconds(0.0), st.forward + round_trip - st.forward * std::min(p - c, m));
    drain = std::max(drain, deferred(c) - down);
    const Seconds time = head + wait + (st.forward + st.backward + st.weight_grad) * m + down + drain - deferred(c);
    if (time > best.time) best = {time, c};
    head += st.forward;
    down += st.backward;
    if (c + 1 < p) round_trip -= at(c + 1).forward + at(c + 1).backward;
  }
  return best;
}

PipelineTime one_f_one_b_pipeline(std::vector<StagePasses> stages, int m) {
  for (StagePasses& st : stages) {
    st.backward += st.weight_grad;
    st.weight_grad = Seconds(0.0);
  }
  return zb_h1_pipeline(stages, m);
}

namespace {

/// How many of the first n passes in Megatron-LM's interleaved order run chunk `chunk`: forwards
/// go through the chunks in groups of p micro-batches (schedules.py, get_model_chunk_id), and the
/// backwards, counted from the last, the same way.
int passes_of_chunk(int n, int chunk, int p, int v) {
  const int cycle = p * v;
  return (n / cycle) * p + std::clamp(n % cycle - chunk * p, 0, p);
}

}  // namespace

// Stage c runs its m x v chunk passes back to back once micro-batch 0's first chunk reaches it,
// but for two waits. Its first backward (micro-batch 0's last chunk) needs micro-batch 0 through
// chunk 0 of the stages from c on, every stage's later chunks, and back to c, while c runs its
// warm-up forwards and one more. Mirrored, its last backward (micro-batch m-1's chunk 0) needs
// that micro-batch from c's last forward (its last chunk) on to the last stage and back through
// every stage's later chunks' backwards, while c runs its cool-down backwards. Without a steady
// phase (every forward before the first backward) the two windows overlap and the longer path
// holds. After its last backward, micro-batch m-1's chunk 0 runs down the stages below c. The
// step takes the longest of these paths over c.
PipelineTime interleaved_pipeline(const std::vector<StagePasses>& stages, int m, int v, Seconds hop) {
  const int p = static_cast<int>(stages.size());
  STEPCAST_ASSERT(p >= 1 && m >= 1 && v >= 1, "a pipeline has stages, micro-batches and chunks");
  const auto forward = [&](int s, int k) {
    const StagePasses& st = stages[static_cast<std::size_t>(s)];
    return st.chunk_forward.empty() ? st.forward / v : st.chunk_forward[static_cast<std::size_t>(k)];
  };
  const auto backward = [&](int s, int k) {
    const StagePasses& st = stages[static_cast<std::size_t>(s)];
    return st.chunk_backward.empty() ? (st.backward + st.weight_grad) / v
                                     : st.chunk_backward[static_cast<std::size_t>(k)];
  };
  const int passes = m * v;
  Seconds head;  // micro-batch 0's chunk 0 forward down to c
  Seconds down;  // micro-batch m-1's chunk 0 backward from c - 1 down to stage 0
  PipelineTime best;
  for (int c = 0; c < p; ++c) {
    const int warm = std::min((p - c - 1) * 2 + (v - 1) * p, passes);
    // Forwards before the first backward, and as many backwards after the last forward.
    const int before = std::min(warm + 1, passes);
    Seconds work;
    Seconds first_forwards;
    Seconds last_backwards;
    for (int k = 0; k < v; ++k) {
      work += (forward(c, k) + backward(c, k)) * m;
      first_forwards += forward(c, k) * passes_of_chunk(before, k, p, v);
      last_backwards += backward(c, k) * passes_of_chunk(before, k, p, v);
    }
    last_backwards -= backward(c, 0);  // but the last backward itself, chunk 0's
    Seconds trip = forward(c, 0);
    Seconds trip_back;
    for (int s = c + 1; s < p; ++s) {
      trip += hop + forward(s, 0) + backward(s, v - 1) + hop;
      trip_back += hop + forward(s, v - 1) + backward(s, 0) + hop;
    }
    for (int k = 1; k < v; ++k) {
      for (int s = 0; s < p; ++s) {
        trip += hop + forward(s, k);
        trip_back += backward(s, k) + hop;
      }
    }
    Seconds time;
    if (before < passes) {
      time = std::max(Seconds(0.0), trip - first_forwards) + work + std::max(Seconds(0.0), trip_back - last_backwards);
    } else {
      const Seconds forwards = first_forwards;
      time = std::max(std::max(trip, forwards) + (work - forwards),
                      forwards + std::max(trip_back, last_backwards) + backward(c, 0));
    }
    time += head + down;
    if (time > best.time) best = {time, c};
    head += forward(c, 0) + hop;
    down += backward(c, 0) + hop;
  }
  return best;
}

PipelineTime gpipe_pipeline(const std::vector<StagePasses>& stages, int m) {
  STEPCAST_ASSERT(!stages.empty() && m >= 1, "a pipeline has stages and micro-batches");
  Seconds forwards;
  Seconds backwards;
  Seconds slowest_forward;
  Seconds slowest_backward;
  PipelineTime out;
  Seconds pace;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const Seconds forward = stages[s].forward;
    const Seconds backward = stages[s].backward + stages[s].weight_grad;
    forwards += forward;
    backwards += backward;
    slowest_forward = std::max(slowest_forward, forward);
    slowest_backward = std::max(slowest_backward, backward);
    if (forward + backward > pace) {
      pace = forward + backward;
      out.pacing_stage = static_cast<int>(s);
    }
  }
  out.time = forwards + backwards + (slowest_forward + slowest_backward) * (m - 1);
  return out;
}

PipelineTime pipeline_time(plan::Schedule schedule, std::vector<StagePasses> stages, int m, int v, Seconds hop) {
  if (schedule == plan::Schedule::kInterleaved) return interleaved_pipeline(stages, m, v, hop);
  const std::size_t p = stages.size();
  for (std::size_t s = 0; s < p; ++s) {
    if (s + 1 < p) stages[s].forward += hop;
    if (s > 0) stages[s].backward += hop;
  }
  switch (schedule) {
    case plan::Schedule::kGpipe:
      return gpipe_pipeline(stages, m);
    case plan::Schedule::k1F1B:
      return one_f_one_b_pipeline(stages, m);
    case plan::Schedule::kZbH1:
      return zb_h1_pipeline(stages, m);
    case plan::Schedule::kInterleaved:
      break;
  }
  STEPCAST_UNREACHABLE("unknown schedule");
}

}  // namespace stepcast::cost
