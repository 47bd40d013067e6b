#pragma once

#include <functional>
#include <nlohmann/json.hpp>

namespace cw::server {

// The fields of the request an HTTP worker thread is answering (httplib runs a request's
// routing, handler, streaming and logger on one thread), gathered for its log line.
void startRequestLog();
nlohmann::json& requestLog();
double requestMilliseconds();
// Runs once just before the request's log line is written (then forgotten): a streamed
// answer whose client left notes it there, since httplib logs before it lets go of the
// stream.
void beforeRequestLogLine(std::function<void()> hook);
void runBeforeRequestLogLine();

} // namespace cw::server
