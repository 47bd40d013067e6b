#include "engine/generation/generate_and_wait.h"

#include <chrono>
#include <future>
#include <memory>

namespace cw::engine {

Result<GenerationResult> generateAndWait(
    RequestScheduler& scheduler, ScheduledRequest request, const std::function<bool()>& cancelled)
{
    auto finished = std::make_shared<std::promise<Result<GenerationResult>>>();
    auto future = finished->get_future();
    request.onFinished
        = [finished](Result<GenerationResult> result) { finished->set_value(std::move(result)); };
    const auto submitted = scheduler.submit(std::move(request));
    if (submitted.refusal != RequestScheduler::Refusal::None)
        return makeError(submitted.message);
    if (!cancelled) {
        future.wait();
        return future.get();
    }
    bool cancelSent = false;
    while (future.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
        if (!cancelSent && cancelled()) {
            scheduler.cancel(submitted.id);
            cancelSent = true;
        }
    }
    return future.get();
}

} // namespace cw::engine
