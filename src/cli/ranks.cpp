// Sharing a command's units over the ranks: agree that every rank is ready, deal by predicted
// cost, run, send each result to rank 0 as soon as it is done, and hand rank 0 the results in
// unit order, so that what it writes cannot depend on the rank count or on timing.
#include "ranks.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "failure.hpp"
#include "mpi/transport.hpp"
#include "stepcast/core/errors.hpp"
#include "stepcast/planner/deal.hpp"

namespace stepcast::cli::ranks {

namespace {

enum UnitStatus : std::uint64_t { kDone = 0, kThrew = 1 };

bool sharing = false;  // the command called will_share()
bool agreed = false;   // the ranks have agreed on their readiness (share() or on_failure())

std::string run_unit(const std::function<std::string(std::size_t)>& work, std::size_t unit) {
  WireWriter w;
  w.u64(unit);
  try {
    std::string result = work(unit);
    w.u64(kDone).text(result);
  } catch (...) {
    const Failure f = describe_failure(std::current_exception());
    w.u64(kThrew).u64(static_cast<std::uint64_t>(f.exit_code)).text(f.message);
  }
  return w.take();
}

/// Every rank's exit code so far (0: ready); the lowest failing rank's position, or -1.
int first_failing(const std::vector<int>& codes) {
  const auto it = std::find_if(codes.begin(), codes.end(), [](int c) { return c != 0; });
  return it == codes.end() ? -1 : static_cast<int>(it - codes.begin());
}

}  // namespace

void start(int& argc, char**& argv) { transport::start(argc, argv); }
void stop() { transport::stop(); }
int index() { return transport::rank(); }
int count() { return transport::size(); }

void will_share() { sharing = true; }

std::vector<std::string> share(const std::vector<double>& costs, const std::function<std::string(std::size_t)>& work,
                               const std::function<void()>& on_done) {
  STEPCAST_ASSERT(count() == 1 || (sharing && !agreed), "a command shares its units once, after will_share()");
  if (count() > 1) {
    const std::vector<int> codes = transport::all_gather(0);
    agreed = true;
    const int first = first_failing(codes);
    if (first >= 0) throw Failed{codes[static_cast<std::size_t>(first)], {}};
  }
  const std::vector<int> owner = planner::deal_by_cost(costs, count());
  const bool root = is_root();
  std::vector<std::string> raw(costs.size());
  // Results rank 0 still awaits from the others (counted first: they may arrive in any order).
  auto remote = static_cast<std::size_t>(std::count_if(owner.begin(), owner.end(), [](int r) { return r != index(); }));
  const auto store = [&raw, &on_done](std::string bytes) {
    const std::size_t unit = WireReader(bytes).u64();
    STEPCAST_ASSERT(unit < raw.size() && raw[unit].empty(), "each unit's result arrives once");
    raw[unit] = std::move(bytes);
    if (on_done) on_done();
  };
  for (std::size_t i = 0; i < costs.size(); ++i) {
    if (owner[i] != index()) continue;
    std::string bytes = run_unit(work, i);
    if (!root) {
      transport::send_to_root(bytes);
      continue;
    }
    store(std::move(bytes));
    // Take what the other ranks finished meanwhile, so the progress line moves with them.
    while (transport::message_waiting()) {
      store(transport::receive());
      --remote;
    }
  }
  if (!root) return {};
  for (; remote > 0; --remote) store(transport::receive());

  std::vector<std::string> results;
  results.reserve(raw.size());
  for (const std::string& bytes : raw) {
    WireReader r(bytes);
    r.u64();  // the unit
    if (r.u64() == kThrew) {
      const auto code = static_cast<int>(r.u64());
      throw Failed{code, r.text()};  // the lowest unit's error, as the units run in order alone
    }
    results.push_back(r.text());
  }
  return results;
}

Verdict on_failure(int exit_code) {
  if (count() == 1) return {true, exit_code};
  if (sharing && !agreed) {
    // This rank failed before the work was dealt; the others are waiting in share().
    const std::vector<int> codes = transport::all_gather(exit_code);
    agreed = true;
    const int first = first_failing(codes);
    return {first == index(), codes[static_cast<std::size_t>(first)]};
  }
  // Every rank ran the same command on the same input: rank 0 speaks for all.
  return {is_root(), exit_code};
}

WireWriter& WireWriter::u64(std::uint64_t v) {
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  bytes_.append(b, sizeof v);
  return *this;
}

WireWriter& WireWriter::f64(double v) { return u64(std::bit_cast<std::uint64_t>(v)); }

WireWriter& WireWriter::text(std::string_view s) {
  u64(s.size());
  bytes_.append(s);
  return *this;
}

std::uint64_t WireReader::u64() {
  std::uint64_t v = 0;
  STEPCAST_ASSERT(at_ + sizeof v <= bytes_.size(), "a result message is read within its bytes");
  std::memcpy(&v, bytes_.data() + at_, sizeof v);
  at_ += sizeof v;
  return v;
}

double WireReader::f64() { return std::bit_cast<double>(u64()); }

std::string WireReader::text() {
  const std::uint64_t n = u64();
  STEPCAST_ASSERT(at_ + n <= bytes_.size(), "a result message is read within its bytes");
  std::string s(bytes_.substr(at_, n));
  at_ += n;
  return s;
}

}  // namespace stepcast::cli::ranks
