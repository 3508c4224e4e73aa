// What each --set changed, said by every command that takes one: the field's full path, the
// file's value and the new one, and for a per-NIC figure the node's total before and after.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace stepcast::report {

/// One line per edit: `Set: node.nics.bandwidth "100 Gbps" -> "200 Gbps" (per NIC; 4 NICs per
/// node: 400 Gbps -> 800 Gbps)`; empty without edits.
std::string set_echo_text(const std::filesystem::path& topology_file, const std::vector<std::string>& sets);

}  // namespace stepcast::report
