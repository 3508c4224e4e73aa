// Chrome trace JSON: process and thread names, then one complete ("X") event per span.
// Format: "Trace Event Format" (Google, docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU).
// Complete events on one thread must nest, and the link tiers' collectives and a rank's sends
// overlap in time: such a track is laid out in lanes, each its own thread, so none overlap.
#include "stepcast/sim/trace_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

#include "stepcast/core/units.hpp"

namespace stepcast::sim {
namespace {

constexpr int kPid = 1;
// Thread ids: lane l of track t is t * kLaneStride + l, so lanes sort right after their track.
constexpr std::size_t kLaneStride = 1000;

}  // namespace

std::string chrome_trace_json(const StepResult& result) {
  // Each span's lane: the first lane of its track free by its start (spans taken by start time).
  std::vector<std::size_t> order(result.spans.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const TraceSpan& x = result.spans[a];
    const TraceSpan& y = result.spans[b];
    return x.track != y.track ? x.track < y.track : x.start_s < y.start_s;
  });
  std::vector<std::size_t> lane(result.spans.size(), 0);
  std::vector<std::vector<double>> lane_ends(result.tracks.size());
  for (const std::size_t i : order) {
    const TraceSpan& s = result.spans[i];
    auto& ends = lane_ends[static_cast<std::size_t>(s.track)];
    const auto free = std::find_if(ends.begin(), ends.end(), [&](double end) { return end <= s.start_s; });
    lane[i] = static_cast<std::size_t>(free - ends.begin());
    if (free == ends.end()) {
      ends.push_back(s.end_s);
    } else {
      *free = s.end_s;
    }
  }

  nlohmann::json events = nlohmann::json::array();
  events.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", kPid}, {"args", {{"name", "stepcast simulated step"}}}});
  // Only tracks that hold spans are named: an idle link tier shows no empty row.
  for (std::size_t t = 0; t < result.tracks.size(); ++t) {
    const std::size_t lanes = lane_ends[t].size();
    for (std::size_t l = 0; l < lanes; ++l) {
      const std::size_t tid = t * kLaneStride + l;
      const std::string name =
          lanes == 1 ? result.tracks[t] : fmt::format("{} ({} of {})", result.tracks[t], l + 1, lanes);
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", {{"name", name}}}});
      events.push_back(
          {{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", {{"sort_index", tid}}}});
    }
  }
  for (std::size_t i = 0; i < result.spans.size(); ++i) {
    const TraceSpan& s = result.spans[i];
    events.push_back({{"name", s.name},
                      {"ph", "X"},
                      {"pid", kPid},
                      {"tid", static_cast<std::size_t>(s.track) * kLaneStride + lane[i]},
                      {"ts", s.start_s * unit::kMega},
                      {"dur", (s.end_s - s.start_s) * unit::kMega}});
  }
  nlohmann::json trace;
  trace["traceEvents"] = std::move(events);
  trace["displayTimeUnit"] = "ms";
  return trace.dump() + "\n";
}

}  // namespace stepcast::sim
