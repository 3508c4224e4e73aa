// A ranking's reasons in the analytical model's own terms: the step time is compute + bubble +
// exposed communication + optimizer (graph/predict.hpp), so two plans' difference splits into
// those terms exactly, and the communication a plan hides is each term's time minus its exposed part.
#include "stepcast/report/search_compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "stepcast/core/errors.hpp"
#include "stepcast/planner/plan_dedup.hpp"
#include "stepcast/report/plan_reports.hpp"

namespace stepcast::report {
namespace {

/// One step-time term of two plans: the best plan's and another's.
struct Term {
  std::string name;
  Seconds best;
  Seconds other;
  [[nodiscard]] Seconds difference() const { return other - best; }
};

std::vector<Term> step_terms(const graph::StepPrediction& best, const graph::StepPrediction& other) {
  std::vector<Term> out = {{"compute", best.compute, other.compute}, {"pipeline bubble", best.bubble, other.bubble}};
  const auto add = [&out](const graph::CommTerm& t, bool of_best) {
    const std::string name = t.name + " (exposed)";
    auto it = std::find_if(out.begin(), out.end(), [&name](const Term& x) { return x.name == name; });
    if (it == out.end()) it = out.insert(out.end(), Term{name, Seconds{0.0}, Seconds{0.0}});
    (of_best ? it->best : it->other) += t.exposed;
  };
  for (const graph::CommTerm& t : best.communication) add(t, true);
  for (const graph::CommTerm& t : other.communication) add(t, false);
  out.push_back({"optimizer step", best.optimizer, other.optimizer});
  return out;
}

graph::StepPrediction predicted(const plan::Plan& plan, const ComparisonInputs& in,
                                const cost::Calibration* calibration = nullptr) {
  graph::StepOptions options = *in.step;
  options.explain = false;
  options.memory.explain = false;
  if (calibration) {
    options.calibration = calibration;
    options.price_cache = nullptr;
    options.compute_cache = nullptr;
  }
  return graph::predict_step(*in.workload, plan, *in.topology, options);
}

/// What the per-kernel overheads make of two plans' compute difference (other minus leader): the
/// difference less the one with no GPU or host time per kernel. They are free parameters fitted
/// on the corpus's runs of small models, so a lead that rests on them says so.
Seconds overhead_part(const plan::Plan& leader, const plan::Plan& other, Seconds compute_difference,
                      const ComparisonInputs& in) {
  cost::Calibration bare = in.step->calibration ? *in.step->calibration : cost::Calibration{};
  cost::ComputeCalibration compute = bare.compute.value_or(cost::ComputeCalibration{});
  compute.kernel_overhead = Seconds(0.0);
  compute.host_overhead = Seconds(0.0);
  bare.compute = compute;
  const Seconds without = predicted(other, in, &bare).compute - predicted(leader, in, &bare).compute;
  return compute_difference - without;
}

/// "; its compute lead of 4.573 s: 3.902 s from the time per kernel ..., 0.671 s from the kernels'
/// work" (each part positive where it favours the leader), where the overheads make a tenth or
/// more of a compute difference; empty otherwise.
std::string overhead_note(Seconds compute_difference, Seconds overheads) {
  const double d = compute_difference.value();
  const double o = overheads.value();
  if (!(std::abs(d) > 0.0) || std::abs(o) < 0.1 * std::abs(d)) return {};
  return fmt::format(
      "; its compute {} of {:.3f} s: {:.3f} s from the time per kernel (kernel_overhead and host_overhead, "
      "free parameters fitted on measured runs, topologies/model-defaults.json), {:.3f} s from the kernels' work",
      d > 0.0 ? "lead" : "deficit", std::abs(d), d > 0.0 ? o : -o, d > 0.0 ? d - o : o - d);
}

/// The terms where `sign` x difference is positive, largest first, at most three, as "name 0.123 s".
std::string largest_terms(const std::vector<Term>& terms, double sign) {
  std::vector<Term> picked;
  std::copy_if(terms.begin(), terms.end(), std::back_inserter(picked),
               [sign](const Term& t) { return sign * t.difference().value() > 0.0; });
  std::stable_sort(picked.begin(), picked.end(), [sign](const Term& a, const Term& b) {
    return sign * a.difference().value() > sign * b.difference().value();
  });
  std::string out;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, picked.size()); ++i) {
    out += fmt::format("{}{} {:.3f} s", i > 0 ? ", " : "", picked[i].name, std::abs(picked[i].difference().value()));
  }
  return out;
}

/// "; it counts on 2.10 s of its 2.35 s of communication overlapping compute (most: ...)", or
/// empty when the plan hides none.
std::string hidden_communication(const graph::StepPrediction& p) {
  Seconds total{0.0};
  Seconds hidden{0.0};
  const graph::CommTerm* largest = nullptr;
  for (const graph::CommTerm& t : p.communication) {
    total += t.time;
    hidden += t.time - t.exposed;
    if (!largest || t.time - t.exposed > largest->time - largest->exposed) largest = &t;
  }
  if (!largest || !(hidden.value() > 0.0)) return {};
  return fmt::format(
      "; it counts on {:.3f} s of its {:.3f} s of communication overlapping compute (most: {}, "
      "{:.3f} s)",
      hidden.value(), total.value(), largest->name, (largest->time - largest->exposed).value());
}

/// Why `leader` leads in the model's terms (each term's difference, other minus leader), and what
/// it counts on hiding.
std::string lead_reasons(const std::vector<Term>& terms, const graph::StepPrediction& leader,
                         Seconds compute_overheads) {
  std::string out = ": ahead on " + largest_terms(terms, 1.0);
  const std::string behind = largest_terms(terms, -1.0);
  if (!behind.empty()) out += "; behind on " + behind;
  return out + overhead_note(terms.front().difference(), compute_overheads) + hidden_communication(leader);
}

bool same_degrees(const plan::Plan& a, const plan::Plan& b) {
  return a.dp == b.dp && a.tp == b.tp && a.pp == b.pp && a.cp == b.cp && a.ep == b.ep;
}

/// The 1-based rank of `named` among the ranked plans (as a row or a spelling merged into one),
/// or nothing when the search did not enumerate it.
std::optional<std::size_t> rank_of(const planner::SearchResult& result, const plan::Plan& named, Seconds step) {
  const std::string key = planner::equivalence_key(named);
  for (std::size_t i = 0; i < result.ranked.size(); ++i) {
    const planner::RankedPlan& r = result.ranked[i];
    if (r.metrics.step_time != step) continue;
    if (planner::equivalence_key(r.plan) == key) return i + 1;
    for (const plan::Plan& e : r.equivalents) {
      if (planner::equivalence_key(e) == key) return i + 1;
    }
  }
  return std::nullopt;
}

Table terms_table(const std::vector<Term>& terms, Seconds best_step, Seconds named_step, std::size_t index,
                  const std::string& named) {
  Table t(index == 1 ? std::string("compare") : fmt::format("compare-{}", index),
          fmt::format("Step-time terms of the best plan and compared plan {} ({}) (analytical model)", index, named),
          {{"term", "term", "", -1},
           {"best_s", "#1", "s", 4},
           {"compared_s", "compared", "s", 4},
           {"difference_s", "compared - #1", "s", 4}});
  for (const Term& term : terms) {
    t.add_row({Cell::of_text(term.name), Cell::of_number(term.best.value()), Cell::of_number(term.other.value()),
               Cell::of_number(term.difference().value())});
  }
  t.add_row({Cell::of_text("step time"), Cell::of_number(best_step.value()), Cell::of_number(named_step.value()),
             Cell::of_number((named_step - best_step).value())});
  return t;
}

}  // namespace

plan::Plan compared_plan(std::string_view text, const ComparisonInputs& in) {
  plan::Plan p = plan::parse_plan(text, "--compare");
  const auto given = [text](std::string_view key) {
    for (std::size_t at = 0; at <= text.size();) {
      const std::size_t end = std::min(text.find(',', at), text.size());
      const std::string_view part = text.substr(at, end - at);
      if (part.substr(0, part.find('=')) == key) return true;
      at = end + 1;
    }
    return false;
  };
  const planner::SearchSpace& space = *in.space;
  if (given("gbs") && p.global_batch != space.global_batch) {
    throw InputError("--compare", {},
                     fmt::format("the compared plan's gbs={} is not the search's --global-batch {}: plans are "
                                 "compared on one batch",
                                 p.global_batch, space.global_batch));
  }
  if (given("seq") && p.seq_len != space.seq_len) {
    throw InputError(
        "--compare", {},
        fmt::format("the compared plan's seq={} is not the search's sequence length {}", p.seq_len, space.seq_len));
  }
  p.global_batch = space.global_batch;
  p.seq_len = space.seq_len;
  if (!given("precision")) p.precision = space.base.precision;
  if (!given("flash")) p.flash_attention = space.base.flash_attention;
  return plan::resolve(p, *in.workload, space.gpus);
}

std::string lead_note(const planner::SearchResult& result, const ComparisonInputs& in) {
  if (result.ranked.empty()) return {};
  const planner::RankedPlan& best = result.ranked.front();
  const auto other = std::find_if(result.ranked.begin() + 1, result.ranked.end(),
                                  [&best](const planner::RankedPlan& r) { return !same_degrees(r.plan, best.plan); });
  if (other == result.ranked.end()) return {};
  const graph::StepPrediction a = predicted(best.plan, in);
  const graph::StepPrediction b = predicted(other->plan, in);
  const Seconds gap = b.step_time - a.step_time;
  if (!(gap.value() > 0.0)) {
    return fmt::format(
        "lead: #1 leads #{} ({}), the fastest plan of other degrees, on the event engine only: by the "
        "analytical terms it is {:.3f} s behind",
        other - result.ranked.begin() + 1, plan_summary(other->plan), -gap.value());
  }
  return fmt::format(
      "lead: by the analytical terms #1 is {:.3f} s ({:.1f}%) faster than #{} ({}), the fastest "
      "plan of other degrees{}",
      gap.value(), 100.0 * gap / a.step_time, other - result.ranked.begin() + 1, plan_summary(other->plan),
      lead_reasons(step_terms(a, b), a, overhead_part(best.plan, other->plan, b.compute - a.compute, in)));
}

PlanComparison compare_with_best(const planner::SearchResult& result, const plan::Plan& named,
                                 const ComparisonInputs& in, std::size_t index) {
  PlanComparison out;
  const std::string name = plan_summary(named);
  const planner::Evaluation e = planner::evaluate_plan(*in.workload, *in.topology, named, *in.space, *in.step);
  if (e.outcome == planner::Evaluation::Outcome::kInvalid) {
    out.notes.push_back(fmt::format("compared: {} breaks a plan rule: {}", name, plan::describe(e.verdict)));
    return out;
  }
  if (e.outcome == planner::Evaluation::Outcome::kDoesNotFit) {
    const cost::MemoryFit fit = cost::check_fit(e.metrics.memory, e.metrics.gpu_memory, in.step->memory.margin);
    out.notes.push_back(fmt::format("compared: {} does not fit: it needs {} per GPU, {} more than the {} usable", name,
                                    format_bytes(e.metrics.memory.total), format_bytes(fit.margin - fit.headroom),
                                    format_bytes(fit.capacity - fit.margin)));
    return out;
  }
  const Seconds step = e.metrics.step_time;
  if (result.ranked.empty()) {
    out.notes.push_back(fmt::format("compared: {} fits ({:.3f} s), where no searched plan does", name, step.value()));
    return out;
  }
  const planner::RankedPlan& best = result.ranked.front();
  const std::optional<std::size_t> rank = rank_of(result, named, step);
  const auto faster = static_cast<std::size_t>(
      std::count_if(result.ranked.begin(), result.ranked.end(),
                    [step](const planner::RankedPlan& r) { return r.metrics.step_time < step; }));
  const double behind = 100.0 * (step - best.metrics.step_time) / best.metrics.step_time;
  if (rank) {
    out.notes.push_back(fmt::format("compared: {} ranks #{} of {}: {:.3f} s, {:.1f}% behind #1", name, *rank,
                                    result.ranked.size(), step.value(), behind));
  } else {
    out.notes.push_back(
        fmt::format("compared: {} is outside the searched space (the search does not vary what sets it apart); "
                    "it would rank #{}: {:.3f} s, {:.1f}% {} #1",
                    name, faster + 1, step.value(), std::abs(behind), behind >= 0.0 ? "behind" : "ahead of"));
  }
  const graph::StepPrediction a = predicted(best.plan, in);
  const graph::StepPrediction b = predicted(named, in);
  const std::vector<Term> terms = step_terms(a, b);
  const Seconds overheads = overhead_part(best.plan, named, b.compute - a.compute, in);
  if (b.step_time > a.step_time) {
    out.notes.push_back("why #1 leads it" + lead_reasons(terms, a, overheads));
  } else if (b.step_time < a.step_time) {
    std::vector<Term> reversed;
    for (const Term& t : terms) reversed.push_back({t.name, t.other, t.best});
    out.notes.push_back("why it leads #1" + lead_reasons(reversed, b, -overheads));
  }
  out.terms = terms_table(terms, a.step_time, b.step_time, index, name);
  return out;
}

}  // namespace stepcast::report
