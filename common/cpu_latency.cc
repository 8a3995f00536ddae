// PM QoS CPU latency requests: see cpu_latency.h.
#include "common/cpu_latency.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace hlox {
namespace {
constexpr const char* kDevice = "/dev/cpu_dma_latency";
}  // namespace

absl::StatusOr<std::unique_ptr<CpuLatencyRequest>> CpuLatencyRequest::Hold(int max_us) {
  if (max_us < 0) return absl::InvalidArgumentError("CPU latency limit must be >= 0 us");
  const int fd = ::open(kDevice, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open ", kDevice, ": ", std::strerror(errno), " (needs root)"));
  }
  const int32_t value = max_us;
  if (::write(fd, &value, sizeof(value)) != static_cast<ssize_t>(sizeof(value))) {
    const int err = errno;
    ::close(fd);
    return absl::InternalError(absl::StrCat("cannot write ", kDevice, ": ", std::strerror(err)));
  }
  return std::unique_ptr<CpuLatencyRequest>(new CpuLatencyRequest(fd));
}

CpuLatencyRequest::~CpuLatencyRequest() {
  if (fd_ >= 0) ::close(fd_);
}

absl::StatusOr<int> CurrentCpuLatencyLimit() {
  const int fd = ::open(kDevice, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open ", kDevice, ": ", std::strerror(errno)));
  }
  int32_t value = 0;
  const ssize_t n = ::read(fd, &value, sizeof(value));
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof(value))) {
    return absl::InternalError(absl::StrCat("cannot read ", kDevice));
  }
  return static_cast<int>(value);
}

}  // namespace hlox
