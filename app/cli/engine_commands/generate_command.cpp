// `clausewright-cli generate --model PATH (--prompt S | --chat S [--system S]) [--max-tokens N]
// [--temperature T] [--seed S] [--json] [--device cpu|cuda:N|auto]`: streams the model's answer.
// --chat renders the model's chat template (thinking off unless --think); --json prints the
// prompt and generated ids, the text and the timings instead of streaming.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "engine/chat/chat_template.h"
#include "engine/generation/generator.h"
#include "engine/model_files/model_loader.h"
#include "engine/runtime/precision.h"
#include "engine/tokenizer/tokenizer.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace {

int fail(const std::string& message)
{
    std::fprintf(stderr, "generate: %s\n", message.c_str());
    return 1;
}

const char* reasonName(cw::sampling::StopReason reason)
{
    switch (reason) {
    case cw::sampling::StopReason::EosToken:
        return "eos";
    case cw::sampling::StopReason::StopToken:
        return "stop_token";
    case cw::sampling::StopReason::StopString:
        return "stop_string";
    case cw::sampling::StopReason::MaxTokens:
        return "max_tokens";
    case cw::sampling::StopReason::None:
        break;
    }
    return "context";
}

int runGenerate(std::span<char*> args)
{
    CLI::App app { "Generate text with a model (on the CPU or a CUDA GPU)", "generate" };
    cw::cli::showDefaultsInHelp(app);
    std::string modelPath, prompt, chat, system, device = "cpu";
    std::string precision(cw::engine::kDefaultPrecision);
    cw::sampling::SamplingParams params;
    params.temperature = 0.0f;
    params.maxTokens = 128;
    bool asJson = false, think = false;
    int threads = 0;
    app.add_option("--model", modelPath, "GGUF file or Hugging Face folder")->required();
    auto* promptOpt = app.add_option("--prompt", prompt, "raw prompt text");
    auto* chatOpt
        = app.add_option("--chat", chat, "a user message, rendered with the chat template");
    promptOpt->excludes(chatOpt);
    app.add_option("--system", system, "system message (with --chat)")->needs(chatOpt);
    app.add_flag("--think", think, "let Qwen3 templates open a thinking block (with --chat)");
    app.add_option("--max-tokens", params.maxTokens, "tokens to generate at most (default 128)");
    app.add_option("--temperature", params.temperature, "0: greedy (default)");
    app.add_option("--top-k", params.topK, "0: off");
    app.add_option("--top-p", params.topP, "1: off");
    app.add_option("--min-p", params.minP, "0: off");
    app.add_option("--seed", params.seed, "random seed");
    app.add_option("--device", device, "where the model runs: cpu, cuda, cuda:N or auto");
    app.add_option("--threads", threads, "CPU threads (0: all)");
    app.add_option(
           "--precision", precision, "arithmetic: f32 (the reference), tf32 or bf16 (fastest)")
        ->check(CLI::IsMember({ "f32", "tf32", "bf16" }))
        ->capture_default_str();
    app.add_flag("--json", asJson, "print ids, text and timings as JSON");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    if (promptOpt->count() == 0 && chatOpt->count() == 0)
        return fail("give --prompt or --chat");
    auto description = cw::engine::openModel(modelPath);
    if (!description)
        return fail(description.error().message);
    auto tokenizer = cw::engine::tokenizerFromSource(description->tokenizer);
    if (!tokenizer)
        return fail(tokenizer.error().message);
    std::string text = prompt;
    if (chatOpt->count()) {
        const auto chatTemplate = cw::engine::ChatTemplate::fromJinja(description->chatTemplate);
        if (!chatTemplate.warning().empty() && !asJson)
            std::fprintf(stderr, "generate: %s\n", chatTemplate.warning().c_str());
        std::vector<cw::engine::ChatMessage> messages;
        if (!system.empty())
            messages.push_back({ "system", system, std::nullopt });
        messages.push_back({ "user", chat, std::nullopt });
        cw::engine::ChatOptions options;
        options.enableThinking = think;
        auto rendered = chatTemplate.render(messages, options);
        if (!rendered)
            return fail(rendered.error().message);
        text = *rendered;
    }
    const auto ids = tokenizer->encode(text);
    if (ids.empty())
        return fail("the prompt encodes to no tokens");
    cw::engine::ModelOptions options;
    options.threads = threads;
    options.device = device;
    if (auto ok = cw::engine::applyPrecision(options, precision); !ok)
        return fail(ok.error().message);
    auto model = cw::engine::Model::create(std::move(*description), options);
    if (!model)
        return fail(model.error().message);
    if (!asJson && (*model)->onGpu())
        std::fprintf(stderr, "generate: %s\n", (*model)->memoryPlan().c_str());
    const cw::engine::TextCallback stream = [&](std::string_view piece) {
        if (!asJson) {
            std::fwrite(piece.data(), 1, piece.size(), stdout);
            std::fflush(stdout);
        }
        return true;
    };
    auto result = cw::engine::generate(**model, *tokenizer, ids, params, stream);
    if (!result)
        return fail(result.error().message);
    const double decodeRate
        = result->decodeSeconds > 0 ? double(result->ids.size()) / result->decodeSeconds : 0.0;
    const double prefillRate
        = result->prefillSeconds > 0 ? double(ids.size()) / result->prefillSeconds : 0.0;
    if (asJson) {
        nlohmann::json out { { "prompt_ids", ids }, { "ids", result->ids },
            { "text", result->text }, { "stop_reason", reasonName(result->reason) },
            { "timings",
                { { "prompt_tokens", ids.size() }, { "generated_tokens", result->ids.size() },
                    { "prefill_seconds", result->prefillSeconds },
                    { "decode_seconds", result->decodeSeconds },
                    { "prefill_tokens_per_second", prefillRate },
                    { "decode_tokens_per_second", decodeRate } } } };
        std::printf(
            "%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
        std::printf("\n");
        std::fprintf(stderr,
            "[%zu prompt tokens at %.1f tok/s, %zu generated at %.2f tok/s, stop: %s]\n",
            ids.size(), prefillRate, result->ids.size(), decodeRate, reasonName(result->reason));
    }
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "generate",
    "generate text with a model (streams the answer)", runGenerate } };

} // namespace
