// --peft, --lora-rank and --lora-targets: the fine-tuning search and table try every plan with.
#pragma once

#include <CLI/CLI.hpp>

#include "stepcast/report/fine_tuning.hpp"

namespace stepcast::cli {

void add_fine_tuning_options(CLI::App& command, report::FineTuningOptions& options);

}  // namespace stepcast::cli
