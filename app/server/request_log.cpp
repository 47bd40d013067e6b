#include "app/server/request_log.h"

#include <chrono>

namespace cw::server {

namespace {

thread_local nlohmann::json t_fields = nlohmann::json::object();
thread_local std::chrono::steady_clock::time_point t_start = std::chrono::steady_clock::now();

} // namespace

void startRequestLog()
{
    t_fields = nlohmann::json::object();
    t_start = std::chrono::steady_clock::now();
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
