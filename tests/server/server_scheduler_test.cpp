// clausewright-server answers through the model's one scheduler: requests from concurrent
// clients are decoded in the same steps, the tokens they report are the ones the scheduler
// generated, and a prompt prefix they share is forked from its prefix cache.
#include "app/server/completion_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <thread>

using namespace cw;
using nlohmann::json;

TEST(ServerScheduler, concurrentClientsShareTheSchedulersSteps)
{
    engine::SchedulerOptions scheduling;
    scheduling.maxActive = 4;
    scheduling.minSharedPrefix = 16;
    engine::ModelOptions modelOptions;
    modelOptions.threads = 1;
    auto model = server::ServedModel::open(
        CW_TEST_DATA_DIR "/golden/models/qwen3_moe_a", modelOptions, "tiny");
    ASSERT_TRUE(model.ok()) << model.error().message;
    engine::RequestScheduler scheduler(*(*model)->model, *(*model)->tokenizer, scheduling);
    server::ServerOptions options;
    options.port = 0;
    server::CompletionServer http(**model, scheduler, options);
    ASSERT_TRUE(http.bind().ok());
    std::thread serving([&] { http.serve(); });

    const std::string system = "You review contracts for a firm. Answer briefly and cite the "
                               "clause you rely on. The contract follows in full.";
    std::vector<std::int64_t> completionTokens(4, -1);
    std::vector<std::thread> clients;
    for (int i = 0; i < 4; ++i)
        clients.emplace_back([&, i] {
            httplib::Client client("127.0.0.1", http.port());
            client.set_read_timeout(60, 0);
            const json body { { "model", "tiny" },
                { "messages",
                    json::array({ { { "role", "system" }, { "content", system } },
                        { { "role", "user" }, { "content", "question " + std::to_string(i) } } }) },
                { "max_tokens", 24 }, { "temperature", 0 },
                { "logit_bias", { { "600", -100 }, { "602", -100 } } } };
            auto r = client.Post("/v1/chat/completions", body.dump(), "application/json");
            if (r && r->status == 200)
                completionTokens[std::size_t(i)]
                    = json::parse(r->body)["usage"]["completion_tokens"].get<std::int64_t>();
        });
    for (auto& c : clients)
        c.join();
    http.stop();
    serving.join();

    std::int64_t total = 0;
    for (auto n : completionTokens) {
        EXPECT_EQ(n, 24);
        total += n;
    }
    const auto stats = scheduler.stats();
    EXPECT_EQ(stats.generatedTokens, total) << "every token came from the scheduler";
    EXPECT_GE(stats.mostRequestsInOneStep, 2u) << "the clients were decoded in the same steps";
    EXPECT_GT(stats.reusedPromptTokens, 0) << "the shared system prompt was forked";
}
