// The build without MPI: one process, rank 0 of 1. ranks.cpp never exchanges messages then.
#include "transport.hpp"

#include "stepcast/core/errors.hpp"

namespace stepcast::cli::transport {

bool start(int&, char**&) { return false; }
void stop() {}
int rank() { return 0; }
int size() { return 1; }
std::vector<int> all_gather(int value) { return {value}; }
void send_to_root(const std::string&) { STEPCAST_ASSERT(false, "a single process sends no messages"); }
bool message_waiting() { return false; }
std::string receive() {
  STEPCAST_ASSERT(false, "a single process receives no messages");
  return {};
}

}  // namespace stepcast::cli::transport
