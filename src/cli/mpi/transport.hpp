// The little that ranks.cpp needs from MPI, so that one file of each build knows about it:
// transport_mpi.cpp (MPI found) or transport_single.cpp (one process).
#pragma once

#include <string>
#include <vector>

namespace stepcast::cli::transport {

/// Starts MPI when a launcher (mpirun, srun) started this process; returns whether it did.
bool start(int& argc, char**& argv);
void stop();
int rank();
int size();
/// Every rank's value, in rank order, on every rank.
std::vector<int> all_gather(int value);
/// A non-root rank's message to rank 0.
void send_to_root(const std::string& bytes);
/// Rank 0: whether a message has arrived (never blocks).
bool message_waiting();
/// Rank 0: the next message from any rank (blocks until one arrives).
std::string receive();

}  // namespace stepcast::cli::transport
