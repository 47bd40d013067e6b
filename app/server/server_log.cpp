#include "app/server/server_log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace cw::server {

namespace {

std::string utcNow()
{
    const auto now = std::chrono::system_clock::now();
    const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    const auto millis
        = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count()
        % 1000;
    std::tm tm {};
    gmtime_r(&seconds, &tm);
    char text[80];
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
        tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(millis));
    return text;
}

} // namespace

void logEvent(std::string_view level, std::string_view event, nlohmann::json fields)
{
    static std::mutex mutex;
    nlohmann::json line { { "ts", utcNow() }, { "level", level }, { "event", event } };
    if (fields.is_object())
        line.update(fields);
    const std::string text
        = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::lock_guard lock(mutex);
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
}

} // namespace cw::server
