// Where a plan's parallel groups sit on the cluster: for each kind of group the step communicates
// on (tensor, context, expert, data, pipeline, ...), its ranks and stride, the GPUs of its first
// group, and the scale-up domains (nodes, NVLink racks) and NICs it spans. The rank order decides
// these (order=, Megatron-Core's tp-cp-ep-dp-pp by default), and they decide what each collective
// costs: `predict --explain` prints them and `predict --json` lists them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "stepcast/graph/step_graph.hpp"
#include "stepcast/report/table.hpp"
#include "stepcast/topology/topology.hpp"

namespace stepcast::report {

struct GroupSpan {
  std::string role;  ///< GroupSpec::role
  int ranks = 1;
  int stride = 1;            ///< GPU index distance between consecutive ranks
  std::vector<int> gpus;     ///< the GPUs of the group priced (Topology::slowest_group_start)
  int groups = 1;            ///< groups of this kind in the first stage
  int domains = 1;           ///< scale-up domains the group spans
  int ranks_per_domain = 1;  ///< of its ranks on each spanned domain (the busiest)
  int nics = 0;              ///< NICs its ranks on one domain send through; 0 inside one domain
  int concurrent = 1;        ///< groups of its kind that run their collectives at the same time
};

/// One span per group kind of the step graph, in the graph's order.
std::vector<GroupSpan> group_spans(const graph::StepGraph& graph, const topology::Topology& topology);

/// Table "groups": a row per kind, for text and the other report formats.
Table group_span_table(const std::vector<GroupSpan>& spans);

/// The spans as a JSON array of objects keyed as the table's columns, with the GPUs as a list.
nlohmann::json group_spans_json(const std::vector<GroupSpan>& spans);

}  // namespace stepcast::report
