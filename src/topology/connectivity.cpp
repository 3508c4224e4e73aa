// Connectivity checks on Boost.Graph: connected components of the whole graph, then of the graph
// without GPUs, which tells whether two GPUs share a route that no other GPU forwards.
#include "connectivity.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <boost/property_map/property_map.hpp>
#include <vector>

namespace stepcast::topology {
namespace {

using Adjacency = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;

struct NotGpu {
  const std::vector<Vertex>* vertices = nullptr;
  bool operator()(Adjacency::vertex_descriptor v) const { return (*vertices)[v].kind != VertexKind::kGpu; }
};

}  // namespace

std::optional<std::string> find_connectivity_problem(std::span<const Vertex> vertices, std::span<const Link> links) {
  const std::vector<Vertex> vs(vertices.begin(), vertices.end());
  Adjacency g(vs.size());
  for (const Link& l : links) boost::add_edge(l.a, l.b, g);

  std::vector<int> component(vs.size(), -1);
  if (boost::connected_components(g, component.data()) > 1) {
    for (std::size_t v = 1; v < vs.size(); ++v) {
      if (component[v] != component[0]) {
        return fmt::format(
            "the graph is disconnected: vertex \"{}\" cannot be reached from vertex \"{}\" (every vertex must be "
            "linked to the rest)",
            vs[v].name, vs[0].name);
      }
    }
  }

  // Components of the graph without its GPUs: two GPUs have a route that no third GPU forwards
  // when they touch a common component, or when a link joins them directly.
  const boost::filtered_graph<Adjacency, boost::keep_all, NotGpu> switches(g, boost::keep_all{}, NotGpu{&vs});
  std::vector<int> piece(vs.size(), -1);
  // Boost's connected_components overflows its counter on a graph with no vertices (an int
  // wrapping past its maximum): with GPUs only, there are no pieces to find.
  const bool has_non_gpu =
      std::any_of(vs.begin(), vs.end(), [](const Vertex& v) { return v.kind != VertexKind::kGpu; });
  if (has_non_gpu) {
    boost::connected_components(switches,
                                boost::make_iterator_property_map(piece.begin(), boost::get(boost::vertex_index, g)));
  }

  std::vector<VertexId> gpus;
  for (std::size_t v = 0; v < vs.size(); ++v) {
    if (vs[v].kind == VertexKind::kGpu) gpus.push_back(static_cast<VertexId>(v));
  }
  // Per GPU: the pieces it touches and the GPUs it links to directly, sorted for intersection.
  std::vector<std::vector<int>> touches(vs.size());
  std::vector<std::vector<VertexId>> direct(vs.size());
  for (const Link& l : links) {
    const bool a_gpu = vs[l.a].kind == VertexKind::kGpu;
    const bool b_gpu = vs[l.b].kind == VertexKind::kGpu;
    if (a_gpu && b_gpu) {
      direct[l.a].push_back(l.b);
      direct[l.b].push_back(l.a);
    } else if (a_gpu) {
      touches[l.a].push_back(piece[l.b]);
    } else if (b_gpu) {
      touches[l.b].push_back(piece[l.a]);
    }
  }
  for (const VertexId v : gpus) {
    std::sort(touches[v].begin(), touches[v].end());
    touches[v].erase(std::unique(touches[v].begin(), touches[v].end()), touches[v].end());
    std::sort(direct[v].begin(), direct[v].end());
  }
  // The usual case: one piece (the switches and NICs) that every GPU touches.
  std::vector<int> common = touches[gpus[0]];
  for (const VertexId v : gpus) {
    std::vector<int> both;
    std::set_intersection(common.begin(), common.end(), touches[v].begin(), touches[v].end(), std::back_inserter(both));
    common = std::move(both);
    if (common.empty()) break;
  }
  if (!common.empty()) return std::nullopt;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t j = i + 1; j < gpus.size(); ++j) {
      const VertexId a = gpus[i];
      const VertexId b = gpus[j];
      std::vector<int> shared;
      std::set_intersection(touches[a].begin(), touches[a].end(), touches[b].begin(), touches[b].end(),
                            std::back_inserter(shared));
      if (!shared.empty() || std::binary_search(direct[a].begin(), direct[a].end(), b)) continue;
      return fmt::format(
          "GPU \"{}\" cannot reach GPU \"{}\" without passing through another GPU (GPUs do not forward traffic: every "
          "GPU needs a route to every other GPU through links, NICs and switches)",
          vs[a].name, vs[b].name);
    }
  }
  return std::nullopt;
}

}  // namespace stepcast::topology
