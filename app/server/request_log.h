#pragma once

#include <nlohmann/json.hpp>

namespace cw::server {

// The fields of the request an HTTP worker thread is answering (httplib runs a request's
// routing, handler, streaming and logger on one thread), gathered for its log line.
void startRequestLog();
nlohmann::json& requestLog();
double requestMilliseconds();

} // namespace cw::server
