// One named spdlog logger per component, declared here and nowhere else. Levels: info for
// lifecycle, debug per message, trace per rewrite. Kernels never log.
#pragma once

#include <memory>
#include <string_view>

#include "spdlog/spdlog.h"

namespace hlox::log {

spdlog::logger& broker();
spdlog::logger& worker();
spdlog::logger& agent();
spdlog::logger& passes();
spdlog::logger& runtime();
spdlog::logger& cli();

// Sets the level of every hlox logger ("trace", "debug", "info", "warn", "error", "off").
void SetLevel(std::string_view level);

}  // namespace hlox::log
