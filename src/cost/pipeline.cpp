// Pipeline bubble and in-flight micro-batches per schedule (Narayanan et al. 2021; Korthikanti
// et al. 2022; Qi et al. 2023 "Zero Bubble Pipeline Parallelism").
#include "stepcast/cost/pipeline.hpp"

#include <algorithm>

#include "stepcast/core/errors.hpp"

namespace stepcast::cost {

double bubble_fraction(plan::Schedule schedule, int p, int m, int v) {
  STEPCAST_ASSERT(p >= 1 && m >= 1 && v >= 1, "pipeline degrees are at least 1");
  const double idle_slots = p - 1;
  switch (schedule) {
    case plan::Schedule::kGpipe:
    case plan::Schedule::k1F1B:
      return idle_slots / m;  // Narayanan et al. 2021, section 2.2.1
    case plan::Schedule::kInterleaved:
      return idle_slots / (static_cast<double>(v) * m);  // section 2.2.2
    case plan::Schedule::kZbH1:
      return idle_slots / (3.0 * m);  // Qi et al. 2023, section 3.1: a third of 1F1B's bubble
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

}  // namespace stepcast::cost
