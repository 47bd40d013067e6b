#pragma once

#include "engine/common/result.h"
#include "engine/generation/request_scheduler.h"

#include <functional>

namespace cw::engine {

// Submits one request to the model's scheduler and waits for its end (its text streams
// through request.onText on the scheduler's thread meanwhile). `cancelled` is polled while
// waiting; when it turns true the request is cancelled and ends within a step. Errors: the
// request was refused (the message says why), or the engine failed in its step.
Result<GenerationResult> generateAndWait(RequestScheduler& scheduler, ScheduledRequest request,
    const std::function<bool()>& cancelled = {});

} // namespace cw::engine
