// Chrome trace JSON: thread_name metadata names each track, then one complete event per span.
// Format: "Trace Event Format" (Google, docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU).
#include "stepcast/sim/trace_json.hpp"

#include <nlohmann/json.hpp>

#include "stepcast/core/units.hpp"

namespace stepcast::sim {

std::string chrome_trace_json(const StepResult& result) {
  nlohmann::json events = nlohmann::json::array();
  for (std::size_t i = 0; i < result.tracks.size(); ++i) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", i}, {"args", {{"name", result.tracks[i]}}}});
    events.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", i}, {"args", {{"sort_index", i}}}});
  }
  for (const TraceSpan& s : result.spans) {
    events.push_back({{"name", s.name},
                      {"ph", "X"},
                      {"pid", 1},
                      {"tid", s.track},
                      {"ts", s.start_s * unit::kMega},
                      {"dur", (s.end_s - s.start_s) * unit::kMega}});
  }
  nlohmann::json trace;
  trace["traceEvents"] = std::move(events);
  trace["displayTimeUnit"] = "ms";
  return trace.dump() + "\n";
}

}  // namespace stepcast::sim
