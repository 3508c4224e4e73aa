// Storage tiers for checkpoints (named tiers with their sources, or a bandwidth), the time to
// move a checkpoint through one, and the stall of a synchronous or host-staged checkpoint.
#include "stepcast/core/text.hpp"
#include "stepcast/cost/checkpoint.hpp"

#include <fmt/format.h>
#include <array>

#include "stepcast/core/errors.hpp"

namespace stepcast::cost {
namespace {

struct NamedTier {
  std::string_view name;
  StorageKind kind;
  double bandwidth_Bps;
  std::string_view source;
};

// One table of the named tiers, each figure with where it comes from.
constexpr std::array kNamedTiers{
    NamedTier{"nvme", StorageKind::kNodeLocal, 8.0 * 2.0 * unit::kGiga,
              "8 local NVMe SSDs per node (p4d.24xlarge: 8 x 1 TB) at an assumed 2 GB/s sustained sequential "
              "write each; measure yours with fio and pass node:<bandwidth>"},
    NamedTier{"fsx", StorageKind::kShared, 12.0 * 1000.0 * unit::kMega,
              "Amazon FSx for Lustre PERSISTENT_2 at 1000 MB/s/TiB (its highest PerUnitStorageThroughput, FSx "
              "API reference) on a 12 TiB file system: 12 GB/s aggregate"},
    NamedTier{"s3", StorageKind::kPerClient, 10.0 * 85.0 * unit::kMega,
              "Amazon S3: about 85 MB/s per concurrent request (S3 performance guidelines: one request per "
              "85-90 MB/s) x 10 requests, the AWS CLI's default max_concurrent_requests"},
};

constexpr std::string_view kAccepted =
    "a bandwidth such as \"2 GB/s\" (a shared file system's aggregate), node:<bandwidth> (per node, local "
    "NVMe), shared:<bandwidth> (aggregate), client:<bandwidth> (per rank, object store), or a named tier: "
    "nvme, fsx, s3";

std::string_view kind_name(StorageKind kind) {
  switch (kind) {
    case StorageKind::kNodeLocal:
      return "per node";
    case StorageKind::kShared:
      return "aggregate";
    case StorageKind::kPerClient:
      return "per client";
  }
  STEPCAST_UNREACHABLE("unknown storage kind");
}

}  // namespace

StorageTier parse_storage(std::string_view text, std::string_view option) {
  const std::string_view body = trim(text);
  for (const NamedTier& t : kNamedTiers) {
    if (body == t.name)
      return StorageTier{std::string(t.name), t.kind, BytesPerSecond(t.bandwidth_Bps), std::string(t.source)};
  }
  StorageKind kind = StorageKind::kShared;
  std::string_view bandwidth_text = body;
  if (const auto colon = body.find(':'); colon != std::string_view::npos) {
    const std::string_view prefix = trim(body.substr(0, colon));
    if (prefix == "node") {
      kind = StorageKind::kNodeLocal;
    } else if (prefix == "shared") {
      kind = StorageKind::kShared;
    } else if (prefix == "client") {
      kind = StorageKind::kPerClient;
    } else {
      throw InputError(
          fmt::format("{} \"{}\": unknown storage kind \"{}\"; accepted: {}", option, text, prefix, kAccepted));
    }
    bandwidth_text = body.substr(colon + 1);
  }
  BytesPerSecond bw;
  try {
    bw = parse_bandwidth(bandwidth_text);
  } catch (const UnitError& e) {
    throw InputError(fmt::format("{} {}; accepted: {}", option, e.what(), kAccepted));
  }
  if (!(bw.value() > 0.0)) {
    throw InputError(fmt::format("{} \"{}\": the bandwidth must be positive; accepted: {}", option, text, kAccepted));
  }
  return StorageTier{"custom", kind, bw, fmt::format("given as {} \"{}\"", option, text)};
}

TransferTime transfer_time(const TransferLoad& load, const StorageTier& tier, std::string_view what) {
  STEPCAST_ASSERT(tier.bandwidth.value() > 0.0, "storage bandwidth must be positive");
  Bytes moved;
  std::string_view whose;
  switch (tier.kind) {
    case StorageKind::kNodeLocal:
      moved = load.busiest_node;
      whose = "busiest node's bytes";
      break;
    case StorageKind::kShared:
      moved = load.total;
      whose = "all bytes";
      break;
    case StorageKind::kPerClient:
      moved = load.busiest_rank;
      whose = "busiest rank's bytes";
      break;
  }
  TransferTime out;
  out.time = moved / tier.bandwidth;
  out.term = {std::string(what),
              fmt::format("{} / {} bandwidth = {} / {} ({})", whose, kind_name(tier.kind), format_bytes(moved),
                          format_bandwidth(tier.bandwidth), tier.name),
              format_seconds(out.time)};
  return out;
}

CheckpointStall checkpoint_stall(const CheckpointSize& size, const TransferTime& write,
                                 const std::optional<AsyncStaging>& staging) {
  CheckpointStall out;
  out.stall = write.time;
  out.explanation.push_back(write.term);
  if (!staging) {
    out.explanation.push_back({"stall (synchronous)", "training waits for the whole write", format_seconds(out.stall)});
    return out;
  }
  STEPCAST_ASSERT(staging->copy_bandwidth_per_gpu.value() > 0.0, "copy bandwidth must be positive");
  if (size.busiest_node_written > staging->host_memory_per_node) {
    out.note = fmt::format(
        "asynchronous checkpoint not possible: the busiest node stages {} but has {} of host memory; "
        "synchronous instead",
        format_bytes(size.busiest_node_written), format_bytes(staging->host_memory_per_node));
    out.explanation.push_back({"stall (synchronous)", "staging does not fit host memory", format_seconds(out.stall)});
    return out;
  }
  // Each GPU copies its own share over its own host link at once, so the busiest rank sets the stall.
  out.asynchronous = true;
  out.background_write = write.time;
  out.stall = size.written_per_rank / staging->copy_bandwidth_per_gpu;
  out.explanation.push_back(
      {"stall (asynchronous)",
       fmt::format("busiest rank's bytes / copy bandwidth to host = {} / {}", format_bytes(size.written_per_rank),
                   format_bandwidth(staging->copy_bandwidth_per_gpu)),
       format_seconds(out.stall)});
  return out;
}

}  // namespace stepcast::cost
