// Plan search: evaluate every candidate on a pool of threads, each result stored at its
// candidate id, then reduce in id order so the output never depends on the thread count.
#include "stepcast/planner/search.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/low_precision.hpp"
#include "stepcast/planner/plan_dedup.hpp"

namespace stepcast::planner {
namespace {

// Candidates a worker takes at a time: large enough that the shared counter is not contended,
// small enough that two threads finish together.
constexpr std::size_t kChunk = 64;

PlanMetrics metrics_of(const graph::StepPrediction& p) {
  PlanMetrics m;
  m.step_time = p.step_time;
  m.compute = p.compute;
  m.bubble = p.bubble;
  m.exposed_communication = p.exposed_communication;
  m.optimizer = p.optimizer;
  m.tokens_per_s = p.tokens_per_s;
  m.mfu = p.mfu;
  m.memory = p.memory;
  m.gpu_memory = p.fit.capacity;
  m.fits = p.fit.fits;
  return m;
}

int thread_count(int requested, std::size_t work) {
  int threads = requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto chunks = static_cast<int>(std::min<std::size_t>((work + kChunk - 1) / kChunk, 1024));
  return std::max(1, std::min(threads, chunks));
}

}  // namespace

Evaluation evaluate_plan(const workload::Workload& workload, const topology::Topology& topology, const plan::Plan& plan,
                         const SearchSpace& space, const graph::StepOptions& step_options) {
  Evaluation e;
  if (space.max_tp_in_node && plan.tp > space.gpus_per_node) {
    e.verdict = {plan::Rule::kTpWithinNode, {{"tp", plan.tp}, {"gpus_per_node", space.gpus_per_node}}};
    return e;
  }
  if (auto found = plan::problems(plan, workload, space.gpus); !found.empty()) {
    e.verdict = std::move(found.front());
    return e;
  }
  graph::StepOptions options = step_options;
  options.explain = false;
  options.memory.explain = false;
  options.memory.fp8_any_layout = cost::fp8_gemm_any_layout(topology.gpu());
  const cost::MemoryBreakdown memory = cost::estimate_memory(workload, plan, options.memory);
  const cost::MemoryFit fit = cost::check_fit(memory, topology.gpu().memory, options.memory.margin);
  if (!fit.fits) {
    e.outcome = Evaluation::Outcome::kDoesNotFit;
    e.verdict = {plan::Rule::kFitsGpuMemory,
                 {{"needed_bytes", memory.total.value()},
                  {"headroom_bytes", fit.headroom.value()},
                  {"capacity_bytes", fit.capacity.value()},
                  {"margin_bytes", fit.margin.value()}}};
    e.metrics.memory = memory;
    e.metrics.gpu_memory = fit.capacity;
    return e;
  }
  e.outcome = Evaluation::Outcome::kFits;
  e.metrics = metrics_of(graph::predict_step(workload, plan, topology, options));
  STEPCAST_ASSERT(e.metrics.fits, "the predictor's memory agrees with the memory model");
  return e;
}

Evaluation evaluate_candidate(const workload::Workload& workload, const topology::Topology& topology,
                              const plan::Plan& plan, const SearchSpace& space,
                              const graph::StepOptions& step_options) {
  Evaluation e = evaluate_plan(workload, topology, plan, space, step_options);
  const int layers = workload.shape ? workload.shape->layers : 0;
  if (e.outcome != Evaluation::Outcome::kDoesNotFit || !topology.host_link() || plan.pp != 1 ||
      plan.recompute != plan::Recompute::kNone || plan.offload_layers > 0 || layers < 2)
    return e;
  // Memory falls as more layers are offloaded: the fewest that fit, by bisection over 1 .. L-1.
  cost::MemoryOptions memory = step_options.memory;
  memory.explain = false;
  memory.fp8_any_layout = cost::fp8_gemm_any_layout(topology.gpu());
  const auto fits = [&](int offloaded) {
    plan::Plan p = plan;
    p.offload_layers = offloaded;
    return cost::check_fit(cost::estimate_memory(workload, p, memory), topology.gpu().memory, memory.margin).fits;
  };
  if (!fits(layers - 1)) return e;
  int low = 0;  // does not fit
  int high = layers - 1;
  while (high - low > 1) {
    const int mid = low + (high - low) / 2;
    (fits(mid) ? high : low) = mid;
  }
  plan::Plan p = plan;
  p.offload_layers = high;
  Evaluation offloaded = evaluate_plan(workload, topology, p, space, step_options);
  if (offloaded.outcome != Evaluation::Outcome::kFits) return e;
  offloaded.offloaded = high;
  return offloaded;
}

SearchResult search(const workload::Workload& workload, const topology::Topology& topology, const SearchSpace& space,
                    const SearchOptions& options) {
  if (!workload.has_shape()) {
    throw InputError(
        workload.name, {},
        "plan search needs a workload with a transformer shape (layers, hidden, heads), not a bare parameter count");
  }
  const std::vector<plan::Plan> candidates = enumerate_candidates(space, workload);
  const std::size_t n = candidates.size();
  std::vector<Evaluation> results(n);

  std::atomic<std::size_t> next{0};
  std::mutex error_mutex;
  std::size_t error_at = n;
  std::exception_ptr error;
  const auto worker = [&] {
    // Collective prices repeat across plans (the same groups, buckets and activations): each
    // thread remembers its own.
    graph::PriceCache cache;
    graph::ComputeCache compute;
    graph::StepOptions step = options.step;
    step.price_cache = &cache;
    step.compute_cache = &compute;
    for (;;) {
      const std::size_t begin = next.fetch_add(kChunk, std::memory_order_relaxed);
      if (begin >= n) return;
      const std::size_t end = std::min(n, begin + kChunk);
      for (std::size_t i = begin; i < end; ++i) {
        try {
          results[i] = evaluate_candidate(workload, topology, candidates[i], space, step);
        } catch (...) {
          // Keep the error of the lowest candidate id, so which error surfaces is deterministic.
          const std::lock_guard lock(error_mutex);
          if (i < error_at) {
            error_at = i;
            error = std::current_exception();
          }
        }
      }
      if (options.on_progress) options.on_progress(end - begin);
    }
  };
  {
    std::vector<std::jthread> pool;
    const int threads = thread_count(options.threads, n);
    for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
  }
  if (error) std::rethrow_exception(error);

  // The reduction, in candidate-id order.
  SearchResult out;
  out.candidates = n;
  std::map<plan::Rule, Rejection> by_rule;
  for (std::size_t i = 0; i < n; ++i) {
    const Evaluation& e = results[i];
    if (e.outcome == Evaluation::Outcome::kFits) {
      out.ranked.push_back(RankedPlan{i, e.plan_of(candidates[i]), e.metrics, std::nullopt, {}});
      continue;
    }
    auto it = by_rule.find(e.verdict.rule);
    if (it == by_rule.end()) it = by_rule.emplace(e.verdict.rule, Rejection{e.verdict.rule, 0, e.verdict}).first;
    ++it->second.count;
    if (e.outcome == Evaluation::Outcome::kInvalid) {
      ++out.invalid;
    } else {
      ++out.not_fitting;
      if (!out.least_memory || e.metrics.memory.total < out.least_memory->metrics.memory.total) {
        out.least_memory = RankedPlan{i, candidates[i], e.metrics, std::nullopt, {}};
      }
    }
  }
  if (!out.ranked.empty()) out.least_memory.reset();
  // A total order ending in the id (STYLE.md B6).
  std::stable_sort(out.ranked.begin(), out.ranked.end(), [](const RankedPlan& a, const RankedPlan& b) {
    if (a.metrics.step_time != b.metrics.step_time) return a.metrics.step_time < b.metrics.step_time;
    return a.id < b.id;
  });
  merge_equivalent_plans(out);
  for (auto& [rule, rejection] : by_rule) out.rejections.push_back(std::move(rejection));
  std::sort(out.rejections.begin(), out.rejections.end(), [](const Rejection& a, const Rejection& b) {
    if (a.count != b.count) return a.count > b.count;
    return plan::rule_summary(a.rule) < plan::rule_summary(b.rule);
  });
  return out;
}

}  // namespace stepcast::planner
