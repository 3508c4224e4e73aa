// What to try when a plan does not fit: every change of one plan setting is priced by the memory
// model on the same GPUs, and only those that fit are suggested, so no advice saves nothing
// (recompute=selective once FlashAttention stores no scores) or misses the lever that suffices.
#include "stepcast/report/fit_hint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "stepcast/report/moe_fit_hint.hpp"

namespace stepcast::report {

namespace {

/// The setting a change moves; a pair of changes moves two different ones.
enum class Lever { kRecompute, kFlash, kSharding, kMicroBatch, kTensor, kPipeline, kExpert };

struct Change {
  Lever lever;
  std::string label;  ///< as the plan spells it: "zero=1", "tp=2,sp=on"
  std::function<void(plan::Plan&)> apply;
};

/// Degrees re-derived from the GPU count once tp, pp or ep moves.
void rederive_dp(plan::Plan& q) {
  if (q.sharding != plan::Sharding::kFsdpHybrid) q.shard_group = 0;
  q.dp = 0;
}

std::vector<Change> changes(const PlanInputs& in) {
  using plan::Recompute;
  using plan::Sharding;
  const plan::Plan& p = in.plan;
  const workload::TransformerShape& shape = *in.workload.shape;
  std::vector<Change> out;
  if (p.recompute == Recompute::kNone)
    out.push_back(
        {Lever::kRecompute, "recompute=selective", [](plan::Plan& q) { q.recompute = Recompute::kSelective; }});
  if (p.recompute != Recompute::kFull)
    out.push_back({Lever::kRecompute, "recompute=full", [](plan::Plan& q) { q.recompute = Recompute::kFull; }});
  if (!p.flash_attention) {
    out.push_back({Lever::kFlash, "flash=on", [](plan::Plan& q) {
                     q.flash_attention = true;
                     q.flash_given = true;
                   }});
  }
  // Deeper sharding, in the plan's own vocabulary (ZeRO stages, or FSDP's strategies).
  const std::vector<std::pair<Sharding, const char*>> ladder =
      p.is_fsdp() ? std::vector<std::pair<Sharding, const char*>>{{Sharding::kFsdpGradOp, "fsdp=grad-op"},
                                                                  {Sharding::kFsdpFull, "fsdp=full"}}
                  : std::vector<std::pair<Sharding, const char*>>{
                        {Sharding::kZero1, "zero=1"}, {Sharding::kZero2, "zero=2"}, {Sharding::kZero3, "zero=3"}};
  for (const auto& [sharding, label] : ladder) {
    plan::Plan q = p;
    q.sharding = sharding;
    if (q.zero_stage() > p.zero_stage() || (p.sharding == Sharding::kFsdpHybrid && sharding == Sharding::kFsdpFull)) {
      out.push_back({Lever::kSharding, label, [s = sharding](plan::Plan& r) {
                       r.sharding = s;
                       r.shard_group = 0;
                     }});
    }
  }
  for (int m = p.micro_batch_size / 2; m >= 1; m /= 2)
    out.push_back({Lever::kMicroBatch, fmt::format("mbs={}", m), [m](plan::Plan& q) { q.micro_batch_size = m; }});
  const int per_node = in.topology ? in.topology->gpus_per_node() : 8;
  for (int t = p.tp * 2; t <= per_node; t *= 2) {
    out.push_back({Lever::kTensor, fmt::format("tp={},sp=on", t), [t](plan::Plan& q) {
                     q.tp = t;
                     q.sequence_parallel = true;
                     rederive_dp(q);
                   }});
  }
  for (int s = p.pp * 2; s <= shape.layers; s *= 2) {
    out.push_back({Lever::kPipeline, fmt::format("pp={}", s), [s](plan::Plan& q) {
                     q.pp = s;
                     rederive_dp(q);
                   }});
  }
  if (shape.moe) {
    for (int e = p.ep * 2; e <= shape.moe->experts; e *= 2)
      out.push_back({Lever::kExpert, fmt::format("ep={}", e), [e](plan::Plan& q) { q.ep = e; }});
  }
  return out;
}

struct Fitting {
  std::string label;
  Bytes total;
};

/// The memory per GPU of `in.plan` with `apply`, when the result is a valid plan that fits.
std::optional<Fitting> try_change(const PlanInputs& in, const cost::MemoryFit& fit, const std::string& label,
                                  const std::function<void(plan::Plan&)>& apply) {
  plan::Plan q = in.plan;
  apply(q);
  const int gpus = in.plan.gpus();
  try {
    q = plan::resolve(q, in.workload, gpus);
  } catch (const InputError&) {
    return std::nullopt;  // a change whose degrees exceed what a plan may span
  }
  if (!plan::problems(q, in.workload, gpus).empty()) return std::nullopt;
  cost::MemoryOptions options = in.memory;
  options.explain = false;
  const cost::MemoryBreakdown m = cost::estimate_memory(in.workload, q, options);
  if (!cost::check_fit(m, fit.capacity, in.memory.margin).fits) return std::nullopt;
  return Fitting{label, m.total};
}

/// The smallest change first: the one that leaves the plan closest to where it was.
void smallest_first(std::vector<Fitting>& fitting) {
  std::sort(fitting.begin(), fitting.end(), [](const Fitting& a, const Fitting& b) {
    return a.total.value() != b.total.value() ? a.total > b.total : a.label < b.label;
  });
}

/// "9.20 GiB kept free for allocator fragmentation (the default margin, 11.5%; ...)" or "4.00 GiB
/// kept free by --memory-margin".
std::string margin_words(const cost::MemoryFit& fit) {
  if (fit.default_margin) {
    return fmt::format(
        "{} kept free for allocator fragmentation (the default margin, {:.3g}%; --memory-margin sets "
        "another)",
        format_bytes(fit.margin), 100.0 * fit.margin.value() / fit.capacity.value());
  }
  return fmt::format("{} kept free by --memory-margin", format_bytes(fit.margin));
}

}  // namespace

std::string fit_hint(const PlanInputs& in, const cost::MemoryFit& fit) {
  if (!in.workload.shape) return {};
  std::string out = in.workload.shape->moe ? moe_fit_hint(in.plan, in.workload) : std::string();
  const std::vector<Change> all = changes(in);
  std::vector<Fitting> fitting;
  for (const Change& c : all) {
    if (auto f = try_change(in, fit, c.label, c.apply)) fitting.push_back(*f);
  }
  std::string kind = "change";
  if (fitting.empty()) {
    kind = "pair of changes";
    for (std::size_t i = 0; i < all.size(); ++i) {
      for (std::size_t j = i + 1; j < all.size(); ++j) {
        if (all[i].lever == all[j].lever) continue;
        const auto both = [&](plan::Plan& q) {
          all[i].apply(q);
          all[j].apply(q);
        };
        if (auto f = try_change(in, fit, all[i].label + "," + all[j].label, both)) fitting.push_back(*f);
      }
    }
  }
  if (fitting.empty()) {
    return out + fmt::format(
                     "  nothing tried fits these {} GPUs (recompute, flash, deeper sharding, a smaller micro-batch, "
                     "a larger tp, pp{}, alone or in pairs): more GPUs (--gpus) or GPUs with more memory\n",
                     in.plan.gpus(), in.workload.shape->moe ? " or ep" : "");
  }
  smallest_first(fitting);
  constexpr std::size_t kShown = 5;
  out += fmt::format("  each {} that fits, priced on the model (smallest first):\n", kind);
  for (std::size_t i = 0; i < std::min(kShown, fitting.size()); ++i)
    out += fmt::format("    {:<32} {:>10} per GPU\n", fitting[i].label, format_bytes(fitting[i].total));
  if (fitting.size() > kShown) out += fmt::format("    ... and {} more\n", fitting.size() - kShown);
  return out;
}

std::string fit_text(const PlanInputs& in, const cost::MemoryFit& fit) {
  if (fit.fits && fit.margin.value() > 0.0) {
    return fmt::format("Fits: yes, {} free of {}, more than the {}\n", format_bytes(fit.headroom),
                       format_bytes(fit.capacity), margin_words(fit));
  }
  if (fit.fits)
    return fmt::format("Fits: yes, {} free of {}\n", format_bytes(fit.headroom), format_bytes(fit.capacity));
  if (fit.within_margin()) {
    return fmt::format("Fits: NO, {} free of {} per GPU is less than the {}: counted as not fitting\n",
                       format_bytes(fit.headroom), format_bytes(fit.capacity), margin_words(fit)) +
           fit_hint(in, fit);
  }
  return fmt::format("Fits: NO, {} short of {} per GPU: this plan cannot run as given\n", format_bytes(-fit.headroom),
                     format_bytes(fit.capacity)) +
         fit_hint(in, fit);
}

std::string margin_note(const cost::MemoryMargin& margin, const topology::GpuSpec& gpu) {
  cost::MemoryFit fit;
  fit.capacity = gpu.memory;
  fit.margin = margin.of(gpu.memory);
  fit.default_margin = margin.is_default;
  if (!margin.is_set()) return "memory margin: none, plans may fill the GPU to its last byte";
  return fmt::format("memory margin: of each {} GPU, {}", format_bytes(fit.capacity), margin_words(fit));
}

std::string margin_note(const cost::MemoryMargin& margin) {
  if (!margin.is_set()) return "memory margin: none, plans may fill the GPU to its last byte";
  if (margin.is_default) {
    return fmt::format(
        "memory margin: {:.3g}% of each GPU's memory kept free for allocator fragmentation (the default; "
        "--memory-margin sets another)",
        100.0 * margin.fraction);
  }
  return fmt::format("memory margin: {} of each GPU's memory kept free by --memory-margin", margin.to_string());
}

std::optional<InfeasibleError> refusal(const cost::MemoryBreakdown& memory, const cost::MemoryFit& fit,
                                       const std::string& gpu_name) {
  if (fit.fits) return std::nullopt;
  if (fit.within_margin()) {
    return InfeasibleError(fmt::format("the plan needs {} per GPU, which leaves {} of the {}'s {}: less than the {}",
                                       format_bytes(memory.total), format_bytes(fit.headroom), gpu_name,
                                       format_bytes(fit.capacity), margin_words(fit)));
  }
  return InfeasibleError(fmt::format("the plan needs {} per GPU but the {} has {}", format_bytes(memory.total),
                                     gpu_name, format_bytes(fit.capacity)));
}

}  // namespace stepcast::report
