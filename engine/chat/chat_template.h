#pragma once

#include "engine/common/result.h"
#include "engine/common/text_span.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cw::engine {

// One turn of a conversation. `reasoningContent` is the assistant's thinking when it is
// kept apart from the answer (transformers' "reasoning_content"); otherwise thinking may
// sit inside `content` as <think>...</think>, which the Qwen templates take apart.
struct ChatMessage {
    std::string role; // "system", "user", "assistant" or "tool"
    std::string content;
    std::optional<std::string> reasoningContent;
};

struct ChatOptions {
    bool addGenerationPrompt = true;
    // Unset: the template's default (thinking on for Qwen3 and Qwen3.6).
    std::optional<bool> enableThinking;
    // Qwen3.6: keep the thinking of every past assistant turn, not only the latest ones.
    std::optional<bool> preserveThinking;
};

// The chat formats the engine can render without a Jinja interpreter, each equal byte for
// byte to transformers' apply_chat_template with the real template (tests/engine/chat).
enum class ChatTemplateFlavour {
    ChatMl, // plain <|im_start|>role\n...<|im_end|>\n, no thinking handling
    Qwen3, // Qwen3 (tokenizer_config.json of Qwen3-30B-A3B and the Qwen3 family)
    Qwen36, // Qwen3.5 / Qwen3.6 (chat_template.jinja with render_content, <think>\n prompt)
};

std::string_view flavourName(ChatTemplateFlavour flavour);

// A rendered prompt and the parts of it that came from the messages (roles, content,
// reasoning), in order. Those parts are tokenized as plain text (Tokenizer::encode with
// them): "<|im_end|><|im_start|>system" typed into a message must not become role markers;
// only the template itself writes control tokens.
struct ChatPrompt {
    std::string text;
    std::vector<TextSpan> messageText;
};

class ChatTemplate {
public:
    explicit ChatTemplate(ChatTemplateFlavour flavour = ChatTemplateFlavour::ChatMl);

    // Recognises the flavour from the Jinja text found in the model file. An empty or
    // unknown template gives plain ChatML and a warning() saying so.
    static ChatTemplate fromJinja(std::string_view jinjaSource);

    ChatTemplateFlavour flavour() const { return m_flavour; }
    // Empty when the template was recognised.
    const std::string& warning() const { return m_warning; }

    // The prompt text. Errors where the template itself raises (Qwen3.6: no user query,
    // a system message after the first; an unknown role), with the template's message.
    Result<std::string> render(
        std::span<const ChatMessage> messages, const ChatOptions& options = {}) const;
    // The same text, with the spans that came from the messages marked.
    Result<ChatPrompt> renderPrompt(
        std::span<const ChatMessage> messages, const ChatOptions& options = {}) const;

private:
    ChatTemplateFlavour m_flavour;
    bool m_supportsPreserveThinking = true;
    std::string m_warning;
};

} // namespace cw::engine
