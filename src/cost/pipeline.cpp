// Pipeline bubble and in-flight micro-batches per schedule (Narayanan et al. 2021; Korthikanti
// et al. 2022; Qi et al. 2023 "Zero Bubble Pipeline Parallelism").
#include "stepcast/cost/pipeline.hpp"

#include <algorithm>

#include "stepcast/core/errors.hpp"

namespace stepcast::cost {

double bubble_fraction(plan::Schedule schedule, int p, int m, int v) {
  STEPCAST_ASSERT(p >= 1 && m >= 1 && v >= 1, "pipeline degrees are at least 1");
  if (p == 1) return 0.0;  // gradient accumulation runs micro-batches one after another
  const double idle_slots = p - 1;
  switch (schedule) {
    case plan::Schedule::kGpipe:
    case plan::Schedule::k1F1B:
      return idle_slots / m;  // Narayanan et al. 2021, section 2.2.1
    case plan::Schedule::kInterleaved:
      return idle_slots / (static_cast<double>(v) * m);  // section 2.2.2
    case plan::Schedule::kZbH1:
      STEPCAST_UNREACHABLE("ZB-H1's bubble depends on its passes' times: zb_h1_pipeline");
  }
  STEPCAST_UNREACHABLE("unknown schedule");
}

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

}  // namespace stepcast::cost
