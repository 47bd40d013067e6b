#include "app/server/request_log.h"

#include <chrono>
#include <utility>

namespace cw::server {

namespace {

thread_local nlohmann::json t_fields = nlohmann::json::object();
thread_local std::chrono::steady_clock::time_point t_start = std::chrono::steady_clock::now();
thread_local std::function<void()> t_beforeLogLine;

} // namespace

void startRequestLog()
{
    t_fields = nlohmann::json::object();
    t_start = std::chrono::steady_clock::now();
    t_beforeLogLine = nullptr;
}

void beforeRequestLogLine(std::function<void()> hook)
{
    t_beforeLogLine = std::move(hook);
}

void runBeforeRequestLogLine()
{
    if (auto hook = std::exchange(t_beforeLogLine, nullptr))
        hook();
}

nlohmann::json& requestLog()
{
    return t_fields;
}

double requestMilliseconds()
{
    const auto elapsed = std::chrono::steady_clock::now() - t_start;
    return double(std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count()) / 1000.0;
}

} // namespace cw::server
