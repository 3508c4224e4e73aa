// The options search and table share on the plans they try (their requests name them alike, as
// the Python module's read_search_options reads them): micro-batch and context-parallel bounds,
// every plan's precision, optimizer, attention and document packing, its fine-tuning, and the
// calibration that prices them.
#pragma once

#include <CLI/CLI.hpp>

#include "fine_tuning_options.hpp"
#include "option_checks.hpp"

namespace stepcast::cli {

template <typename Request>
void add_plan_space_options(CLI::App& command, Request& c) {
  command.add_option("--max-mbs", c.max_mbs, "Largest micro-batch size tried (powers of two, default 16)")
      ->check(positive_number());
  command
      .add_option("--max-cp", c.max_cp,
                  "Largest context-parallel degree tried (powers of two, with cp-comm p2p and a2a; default 1: none)")
      ->check(positive_number());
  command.add_option("--precision", c.precision, "fp32, tf32, bf16 (default), fp16, fp8, mxfp8 or nvfp4");
  command.add_option("--optimizer", c.optimizer,
                     "Every plan's optimizer: adam (default), adamw, sgd-momentum, sgd or muon");
  command.add_flag("--flash", c.flash,
                   "Plans use fused (flash) attention, which never stores the s x s scores (the default where every "
                   "GPU of the clusters runs it)");
  command.add_flag("--no-flash", c.no_flash,
                   "Plans store the s x s attention scores (Korthikanti et al.'s accounting)");
  command
      .add_option(
          "--doc-len", c.doc_len,
          "Every plan packs documents of N tokens into each sequence, attention within each (plan key doc-len=)")
      ->check(positive_number());
  add_fine_tuning_options(command, c.fine_tuning);
  command.add_option("--calibration", c.calibration,
                     "Calibration file from `stepcast calibrate`: every plan's collectives and compute priced with it");
}

}  // namespace stepcast::cli
