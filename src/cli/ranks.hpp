// The processes one command runs on: this process alone (plain execution, or a build without
// MPI), or the ranks of an MPI job started by mpirun or srun. `table`, `search` and `validate
// --runs` share their independent units out over the ranks with share(); rank 0 gathers the
// results and alone writes output. Commands see only this interface, never MPI itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace stepcast::cli::ranks {

/// Starts MPI when the build has it and a launcher started this process (mpirun, srun);
/// otherwise this process is the only rank. Call once, first thing in main.
void start(int& argc, char**& argv);
/// Ends MPI (when started). Call once, last thing in main.
void stop();

[[nodiscard]] int index();  ///< this rank, 0-based
[[nodiscard]] int count();  ///< ranks of the job; 1 without MPI
[[nodiscard]] inline bool is_root() { return index() == 0; }

/// An error that this rank must exit with: another rank's (`message` empty, that rank prints it)
/// or a unit's, raised on rank 0 with the text its own rank would have printed.
struct Failed {
  int exit_code = 0;
  std::string message;
};

/// Says that this command will call share(): from here an error on any rank is agreed on by all
/// before work is dealt, so that every rank stops with the same exit code and one prints it.
void will_share();

/// Runs the units dealt to this rank (deal_by_cost over `costs`, one per unit) and gathers their
/// results on rank 0, which gets every unit's bytes in unit order; the other ranks get nothing.
/// First the ranks agree that each read its inputs (else Failed is thrown on the healthy ones).
/// A unit that throws fails the run on rank 0 as the lowest such unit would have alone (Failed
/// with that exception's exit code and text). `on_done` is called on rank 0 after each unit,
/// wherever it ran (for the progress line).
std::vector<std::string> share(const std::vector<double>& costs, const std::function<std::string(std::size_t)>& work,
                               const std::function<void()>& on_done = {});

/// Called by main on any error, with the code and text it would print: whether this rank prints
/// it, and the exit code every rank returns (the same on all).
struct Verdict {
  bool print = true;
  int exit_code = 0;
};
Verdict on_failure(int exit_code);

/// Bytes of a unit's result: numbers bit for bit, so rank 0 rebuilds exactly what the unit's rank
/// computed.
class WireWriter {
 public:
  WireWriter& u64(std::uint64_t v);
  WireWriter& f64(double v);
  WireWriter& text(std::string_view s);
  [[nodiscard]] std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class WireReader {
 public:
  explicit WireReader(std::string_view bytes) : bytes_(bytes) {}
  std::uint64_t u64();
  double f64();
  std::string text();

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
};

}  // namespace stepcast::cli::ranks
