// MPI underneath ranks.cpp: MPI_COMM_WORLD, blocking point-to-point messages to rank 0 and one
// all-gather. Only the main thread calls MPI (MPI_THREAD_FUNNELED); threads stay inside units.
#include <mpi.h>

#include <cstdlib>
#include <limits>

#include "stepcast/core/errors.hpp"
#include "transport.hpp"

namespace stepcast::cli::transport {

namespace {

constexpr int kResultTag = 19;  // any fixed tag: results are the only messages
bool running = false;

/// Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE; srun and other PMI launchers set PMIX_RANK or
/// PMI_RANK. Plain execution sets none of them and stays a single process without MPI_Init.
bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

}  // namespace

bool start(int& argc, char**& argv) {
  if (!launched_by_mpi()) return false;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  running = true;
  return true;
}

void stop() {
  if (running) MPI_Finalize();
  running = false;
}

int rank() {
  if (!running) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int size() {
  if (!running) return 1;
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

std::vector<int> all_gather(int value) {
  std::vector<int> all(static_cast<std::size_t>(size()), 0);
  if (!running) return {value};
  MPI_Allgather(&value, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
  return all;
}

void send_to_root(const std::string& bytes) {
  STEPCAST_ASSERT(running && bytes.size() <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                  "one result fits one MPI message");
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kResultTag, MPI_COMM_WORLD);
}

bool message_waiting() {
  if (!running) return false;
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, kResultTag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  return flag != 0;
}

std::string receive() {
  STEPCAST_ASSERT(running, "receiving needs MPI");
  MPI_Status status;
  MPI_Probe(MPI_ANY_SOURCE, kResultTag, MPI_COMM_WORLD, &status);
  int n = 0;
  MPI_Get_count(&status, MPI_BYTE, &n);
  std::string bytes(static_cast<std::size_t>(n), '\0');
  MPI_Recv(bytes.data(), n, MPI_BYTE, status.MPI_SOURCE, kResultTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return bytes;
}

}  // namespace stepcast::cli::transport
