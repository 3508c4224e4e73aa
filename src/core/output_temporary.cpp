// Temporary files of outputs: created with a unique name that records host and process, and
// removed by a later run once that process is gone.
#include "output_temporary.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "stepcast/core/errors.hpp"

namespace stepcast::detail {
namespace {

constexpr std::string_view kMarker = ".stepcast.";

/// This host's name, reduced to letters, digits and '-' so it cannot break the name's fields.
std::string host_name() {
  std::array<char, 256> buffer{};
  if (::gethostname(buffer.data(), buffer.size() - 1) != 0) return "host";
  std::string host;
  for (const char c : std::string_view(buffer.data())) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    host += plain ? c : '-';
  }
  return host.empty() ? std::string("host") : host;
}

std::string prefix_of(const std::filesystem::path& target) {
  return "." + target.filename().string() + std::string(kMarker);
}

/// The target's file name and the process that made `name`, when `name` is a temporary file's
/// (".NAME.stepcast.HOST.PID.XXXXXX", or a backup's: "-old" after it) made on `host`. Read from the
/// end: HOST, PID and XXXXXX hold no '.', NAME may.
std::optional<std::pair<std::string_view, pid_t>> made_on_host(std::string_view name, std::string_view host) {
  const auto field_before = [](std::string_view& rest) -> std::optional<std::string_view> {
    const auto dot = rest.rfind('.');
    if (dot == std::string_view::npos) return std::nullopt;
    const std::string_view field = rest.substr(dot + 1);
    rest = rest.substr(0, dot);
    return field;
  };
  std::string_view rest = name;
  const auto unique = field_before(rest);
  const auto digits = field_before(rest);
  const auto made_on = field_before(rest);
  if (!unique || !digits || !made_on || *made_on != host) return std::nullopt;
  constexpr std::string_view kStem = kMarker.substr(0, kMarker.size() - 1);  // ".stepcast"
  if (!rest.starts_with('.') || !rest.ends_with(kStem) || rest.size() <= kStem.size() + 1) return std::nullopt;
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(digits->data(), digits->data() + digits->size(), pid);
  if (ec != std::errc() || end != digits->data() + digits->size() || pid <= 0) return std::nullopt;
  return std::pair(rest.substr(1, rest.size() - 1 - kStem.size()), pid);
}

}  // namespace

std::string system_reason(int error) { return std::generic_category().message(error); }

std::filesystem::path folder_of(const std::filesystem::path& path) {
  const std::filesystem::path folder = path.parent_path();
  return folder.empty() ? std::filesystem::path(".") : folder;
}

TemporaryFile create_temporary(const std::filesystem::path& target) {
  const std::filesystem::path pattern =
      folder_of(target) / fmt::format("{}{}.{}.XXXXXX", prefix_of(target), host_name(), ::getpid());
  std::string name = pattern.string();
  // mkostemp opens with O_RDWR|O_CREAT|O_EXCL and the flags given, mode 0600.
  const int fd = ::mkostemp(name.data(), O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    const int error = errno;
    throw InputError(target.string(), {},
                     fmt::format("cannot create a temporary file in the folder \"{}\": {}", folder_of(target).string(),
                                 system_reason(error)));
  }
  return {fd, std::filesystem::path(name)};
}

std::filesystem::path backup_name(const std::filesystem::path& temporary) {
  std::filesystem::path backup = temporary;
  backup += "-old";
  return backup;
}

void remove_stale_temporaries(const std::vector<std::filesystem::path>& targets) {
  std::map<std::filesystem::path, std::set<std::string, std::less<>>> names_by_folder;
  for (const auto& target : targets) names_by_folder[folder_of(target)].insert(target.filename().string());
  const std::string host = host_name();
  for (const auto& [folder, names] : names_by_folder) {
    std::error_code ec;
    std::vector<std::filesystem::path> stale;
    for (std::filesystem::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      const auto made = made_on_host(name, host);
      if (!made || !names.contains(made->first) || made->second == ::getpid()) continue;
      // getpgid fails with ESRCH only when no such process exists.
      if (::getpgid(made->second) < 0 && errno == ESRCH) stale.push_back(it->path());
    }
    for (const auto& path : stale) ::unlink(path.c_str());
  }
}

}  // namespace stepcast::detail
