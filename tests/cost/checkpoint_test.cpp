// Checkpoint contents per rank and in total under DDP, ZeRO-1/2/3 and FSDP; storage tiers, write
// time and the asynchronous stall; restoring under another plan.
#include <doctest/doctest.h>

#include <string>

#include "stepcast/core/errors.hpp"
#include "stepcast/cost/checkpoint.hpp"
#include "support/input_error_text.hpp"

namespace checkpoint_test {

using namespace stepcast;
using namespace stepcast::cost;

namespace {

// ZeRO (Rajbhandari et al. 2020): mixed-precision Adam holds 2 + 2 + 12 bytes per parameter.
constexpr StateBytesPerParameter kMixedAdam{2.0, 2.0, 12.0};
constexpr double kSeedParams = 7e9;

plan::Plan make_plan(plan::Sharding sharding, int dp, int tp = 1, int pp = 1, int shard_group = 0) {
  plan::Plan p;
  p.dp = dp;
  p.tp = tp;
  p.pp = pp;
  p.sharding = sharding;
  p.shard_group = shard_group > 0 ? shard_group : dp;
  return p;
}

// The full ZeRO state, gradients included (a checkpoint inside a gradient-accumulation window):
// the cases below check ZeRO's sharding of all three parts.
CheckpointOptions with_gradients() {
  CheckpointOptions o;
  o.include_gradients = true;
  return o;
}

Bytes extras_per_rank() {
  const CheckpointExtras ex = default_checkpoint_extras();
  return ex.rng_per_rank + ex.data_position_per_rank;
}

std::string input_error(const char* text) {
  return test::input_error_text([&] { (void)parse_storage(text); });
}

}  // namespace

TEST_SUITE("cost.checkpoint") {
  TEST_CASE("seed: 7e9 params, 8-way FSDP, mixed-precision Adam: 16 B/param / 8 = 14e9 B = 13.04 GiB per rank") {
    const CheckpointSize c =
        checkpoint_size(kSeedParams, make_plan(plan::Sharding::kFsdpFull, 8), kMixedAdam, 8, with_gradients());
    CHECK(c.model_state_per_rank.value() == doctest::Approx(14e9));
    CHECK(format_bytes(c.model_state_per_rank) == "13.04 GiB");
    // Every rank writes its own shard: 8 writers; the node writes 8 x 14e9 = 112e9 B of state.
    CHECK(c.writers == 8);
    CHECK(c.written_per_rank.value() == doctest::Approx(c.held_per_rank.value()));
    const CheckpointExtras ex = default_checkpoint_extras();
    CHECK(c.total.value() == doctest::Approx(112e9 + ex.scheduler.value() + 8 * extras_per_rank().value()));
    CHECK(c.busiest_node_written.value() == doctest::Approx(c.total.value()));
  }

  TEST_CASE("DDP: every rank holds all 16 B/param, only replica 0 writes, the total counts it once") {
    // 16 x 7e9 = 112e9 B held per rank, 8 replicas, one writer.
    const CheckpointSize c =
        checkpoint_size(kSeedParams, make_plan(plan::Sharding::kDdp, 8), kMixedAdam, 8, with_gradients());
    CHECK(c.model_state_per_rank.value() == doctest::Approx(112e9));
    CHECK(c.writers == 1);
    CHECK(c.items[0].replicas == 8);
    const CheckpointExtras ex = default_checkpoint_extras();
    CHECK(c.total.value() == doctest::Approx(112e9 + ex.scheduler.value() + 8 * extras_per_rank().value()));
  }

  TEST_CASE("ZeRO-1 on 8 ranks: 2 + 2 B replicated, 12 B sharded: 14e9 + 14e9 + 84e9/8 = 38.5e9 B per rank") {
    const CheckpointSize c =
        checkpoint_size(kSeedParams, make_plan(plan::Sharding::kZero1, 8), kMixedAdam, 8, with_gradients());
    CHECK(c.model_state_per_rank.value() == doctest::Approx(38.5e9));
    // Rank 0 writes weights, gradients and its optimizer shard; the other 7 only their 10.5e9 B shard.
    CHECK(c.writers == 8);
    CHECK(c.written_per_rank.value() ==
          doctest::Approx(38.5e9 + default_checkpoint_extras().scheduler.value() + extras_per_rank().value()));
    CHECK(c.busiest_node_written.value() ==
          doctest::Approx(38.5e9 + 7 * 10.5e9 + default_checkpoint_extras().scheduler.value() +
                          8 * extras_per_rank().value()));
  }

  TEST_CASE("ZeRO-2 on 8 ranks: 2 B replicated, 2 + 12 B sharded: 14e9 + 98e9/8 = 26.25e9 B per rank") {
    const CheckpointSize c =
        checkpoint_size(kSeedParams, make_plan(plan::Sharding::kZero2, 8), kMixedAdam, 8, with_gradients());
    CHECK(c.model_state_per_rank.value() == doctest::Approx(26.25e9));
  }

  TEST_CASE("ZeRO-3 on 8 ranks: all 16 B sharded: 112e9 / 8 = 14e9 B per rank") {
    const CheckpointSize c =
        checkpoint_size(kSeedParams, make_plan(plan::Sharding::kZero3, 8), kMixedAdam, 8, with_gradients());
    CHECK(c.model_state_per_rank.value() == doctest::Approx(14e9));
  }

  TEST_CASE("tensor and pipeline parallel split the state first: tp=2, pp=2, ZeRO-1 dp=4 on 16 GPUs") {
    // Per model-parallel rank 7e9 / 4 = 1.75e9 params: (2 + 2) x 1.75e9 + 12 x 1.75e9 / 4 = 7e9 + 5.25e9.
    const CheckpointSize c =
        checkpoint_size(kSeedParams, make_plan(plan::Sharding::kZero1, 4, 2, 2), kMixedAdam, 8, with_gradients());
    CHECK(c.model_state_per_rank.value() == doctest::Approx(12.25e9));
    // Data-parallel index 0 (ranks 0-3) writes weights and gradients; all 16 write optimizer shards.
    CHECK(c.writers == 16);
  }

  TEST_CASE("HYBRID_SHARD: shard group of 8, 2 replicas: 14e9 B per rank, only the first group writes") {
    const CheckpointSize c = checkpoint_size(kSeedParams, make_plan(plan::Sharding::kFsdpHybrid, 16, 1, 1, 8),
                                             kMixedAdam, 8, with_gradients());
    CHECK(c.model_state_per_rank.value() == doctest::Approx(14e9));
    CHECK(c.writers == 8);
    CHECK(c.items[0].replicas == 2);
  }

  TEST_CASE("as frameworks save it (no gradients), the seed case stores 14 B/param / 8 = 12.25e9 B per rank") {
    // Megatron-LM, PyTorch DCP and DeepSpeed save weights (2 B) and optimizer state (12 B:
    // fp32 master weights and two Adam moments), not gradients.
    const CheckpointSize c = checkpoint_size(kSeedParams, make_plan(plan::Sharding::kFsdpFull, 8), kMixedAdam, 8);
    CHECK(c.model_state_per_rank.value() == doctest::Approx(12.25e9));
    for (const CheckpointItem& item : c.items) {
      if (item.content == CheckpointContent::kGradients) CHECK(item.held_per_rank.value() == 0.0);
    }
  }

  TEST_CASE("storage strings: a bandwidth is a shared aggregate, kinds and named tiers") {
    const StorageTier plain = parse_storage("2 GB/s");
    CHECK(plain.kind == StorageKind::kShared);
    CHECK(plain.bandwidth.value() == doctest::Approx(2e9));
    const StorageTier node = parse_storage("node:3 GB/s");
    CHECK(node.kind == StorageKind::kNodeLocal);
    CHECK(node.bandwidth.value() == doctest::Approx(3e9));
    CHECK(parse_storage("client: 800 Mbps").bandwidth.value() == doctest::Approx(100e6));
    CHECK(parse_storage("nvme").kind == StorageKind::kNodeLocal);
    CHECK(parse_storage("fsx").kind == StorageKind::kShared);
    CHECK(parse_storage("s3").kind == StorageKind::kPerClient);
  }

  TEST_CASE("storage strings: bad ones name the option and list the accepted forms") {
    CHECK(input_error("2 GB").find("--storage") != std::string::npos);
    CHECK(input_error("2 GB").find("accepted: a bandwidth such as \"2 GB/s\"") != std::string::npos);
    CHECK(input_error("disk:2 GB/s").find("unknown storage kind \"disk\"") != std::string::npos);
    CHECK(input_error("0 GB/s").find("must be positive") != std::string::npos);
    CHECK(input_error("fast").find("--storage") != std::string::npos);
  }

  TEST_CASE("write time: shared divides all bytes, node-local the busiest node's, per-client the busiest rank's") {
    const TransferLoad load{Bytes(14e9), Bytes(112e9), Bytes(224e9)};
    // 224e9 / 2e9 = 112 s; 112e9 / 2e9 = 56 s; 14e9 / 2e9 = 7 s.
    CHECK(transfer_time(load, parse_storage("shared:2 GB/s"), "write").time.value() == doctest::Approx(112.0));
    CHECK(transfer_time(load, parse_storage("node:2 GB/s"), "write").time.value() == doctest::Approx(56.0));
    CHECK(transfer_time(load, parse_storage("client:2 GB/s"), "write").time.value() == doctest::Approx(7.0));
  }

  TEST_CASE("async: only the copy to host memory stalls, if the node's bytes fit host memory") {
    const CheckpointSize c =
        checkpoint_size(kSeedParams, make_plan(plan::Sharding::kFsdpFull, 8), kMixedAdam, 8, with_gradients());
    const TransferTime write =
        transfer_time({c.written_per_rank, c.busiest_node_written, c.total}, parse_storage("2 GB/s"), "write");
    const CheckpointStall sync = checkpoint_stall(c, write, std::nullopt);
    CHECK(sync.stall.value() == doctest::Approx(write.time.value()));
    CHECK_FALSE(sync.asynchronous);
    // 14e9 B (+ a few KiB) over 25 GB/s = 0.56 s; 112e9 B fits in 1152 GiB.
    const CheckpointStall async = checkpoint_stall(c, write, AsyncStaging{gbyte_per_s(25.0), gib(1152.0)});
    CHECK(async.asynchronous);
    CHECK(async.stall.value() == doctest::Approx(0.56).epsilon(1e-4));
    CHECK(async.background_write.value() == doctest::Approx(write.time.value()));
    // 112e9 B = 104.3 GiB does not fit 100 GiB: synchronous, with the reason.
    const CheckpointStall fallback = checkpoint_stall(c, write, AsyncStaging{gbyte_per_s(25.0), gib(100.0)});
    CHECK_FALSE(fallback.asynchronous);
    CHECK(fallback.note.find("not possible") != std::string::npos);
  }

  TEST_CASE("restore under the same plan reads what each rank holds, one file each") {
    const auto p = make_plan(plan::Sharding::kFsdpFull, 8);
    const RestoreReads r = restore_reads(kSeedParams, p, p, kMixedAdam, with_gradients());
    const CheckpointSize c = checkpoint_size(kSeedParams, p, kMixedAdam, 8, with_gradients());
    CHECK(r.files_per_rank == 1);
    CHECK(r.needed_per_rank.value() == doctest::Approx(c.held_per_rank.value()));
    CHECK(r.whole_file_per_rank.value() == doctest::Approx(c.held_per_rank.value()));
  }

  TEST_CASE("restore FSDP 64 -> 128: each rank needs half a saved shard but a whole-file reader reads all of it") {
    const RestoreReads r = restore_reads(kSeedParams, make_plan(plan::Sharding::kFsdpFull, 64),
                                         make_plan(plan::Sharding::kFsdpFull, 128), kMixedAdam, with_gradients());
    const Bytes extras = default_checkpoint_extras().scheduler + extras_per_rank();
    // 112e9 / 128 = 0.875e9 B needed; whole saved shard 112e9 / 64 = 1.75e9 B.
    CHECK(r.needed_per_rank.value() == doctest::Approx(0.875e9 + extras.value()));
    CHECK(r.whole_file_per_rank.value() == doctest::Approx(1.75e9 + extras.value()));
    CHECK(r.files_per_rank == 1);
    CHECK(r.gpus == 128);
  }

  TEST_CASE("restore TP 8 -> 4: each restored rank reads two saved tensor-parallel files") {
    const RestoreReads r = restore_reads(kSeedParams, make_plan(plan::Sharding::kDdp, 1, 8),
                                         make_plan(plan::Sharding::kDdp, 1, 4), kMixedAdam, with_gradients());
    const Bytes extras = default_checkpoint_extras().scheduler + extras_per_rank();
    // 112e9 / 4 = 28e9 B, which is exactly two of the 112e9 / 8 = 14e9 B files.
    CHECK(r.files_per_rank == 2);
    CHECK(r.needed_per_rank.value() == doctest::Approx(28e9 + extras.value()));
    CHECK(r.whole_file_per_rank.value() == doctest::Approx(28e9 + extras.value()));
  }

  TEST_CASE("restore 3 -> 2 pieces: half of the state meets two of three saved pieces") {
    // Restored piece [0, 1/2) meets saved [0, 1/3) and [1/3, 2/3): 2 files of 112e9 / 3 B each.
    const RestoreReads r = restore_reads(kSeedParams, make_plan(plan::Sharding::kDdp, 1, 3),
                                         make_plan(plan::Sharding::kDdp, 1, 2), kMixedAdam, with_gradients());
    const Bytes extras = default_checkpoint_extras().scheduler + extras_per_rank();
    CHECK(r.files_per_rank == 2);
    CHECK(r.whole_file_per_rank.value() == doctest::Approx(2.0 * 112e9 / 3.0 + extras.value()));
  }
}

}  // namespace checkpoint_test
