// Component loggers; all write to stderr so stdout stays clean for command output.
#include "common/logging.h"

#include "spdlog/sinks/stdout_color_sinks.h"

namespace hlox::log {
namespace {

spdlog::logger& Get(const char* name) {
  auto existing = spdlog::get(name);
  if (existing) return *existing;
  auto logger = spdlog::stderr_color_mt(name);
  logger->set_level(spdlog::level::warn);
  if (const char* env = std::getenv("HLOX_LOG")) logger->set_level(spdlog::level::from_str(env));
  return *logger;
}

}  // namespace

spdlog::logger& broker() { static spdlog::logger& l = Get("broker"); return l; }
spdlog::logger& worker() { static spdlog::logger& l = Get("worker"); return l; }
spdlog::logger& agent() { static spdlog::logger& l = Get("agent"); return l; }
spdlog::logger& passes() { static spdlog::logger& l = Get("passes"); return l; }
spdlog::logger& runtime() { static spdlog::logger& l = Get("runtime"); return l; }
spdlog::logger& cli() { static spdlog::logger& l = Get("cli"); return l; }

void SetLevel(std::string_view level) {
  auto lvl = spdlog::level::from_str(std::string(level));
  for (auto* l : {&broker(), &worker(), &agent(), &passes(), &runtime(), &cli()}) l->set_level(lvl);
}

}  // namespace hlox::log
