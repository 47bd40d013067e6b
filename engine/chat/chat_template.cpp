#include "engine/chat/chat_template.h"

#include "engine/tokenizer/utf8.h"

#include <cstddef>

namespace cw::engine {

namespace {

constexpr std::string_view kImStart = "<|im_start|>";
constexpr std::string_view kImEnd = "<|im_end|>";

// Python's str.isspace() for one code point (what Jinja's trim strips).
bool isPythonSpace(char32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0
        || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F
        || c == 0x205F || c == 0x3000;
}

// Jinja's `trim` filter (Python str.strip()).
std::string trim(std::string_view s)
{
    std::size_t begin = 0;
    while (begin < s.size()) {
        const std::size_t n = utf8::sequenceLength(s, begin, nullptr, nullptr);
        if (n == 0 || !isPythonSpace(utf8::decodeAt(s, begin, n)))
            break;
        begin += n;
    }
    std::size_t end = s.size();
    while (end > begin) {
        std::size_t start = end - 1;
        while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80)
            --start;
        const std::size_t n = utf8::sequenceLength(s, start, nullptr, nullptr);
        if (n != end - start || !isPythonSpace(utf8::decodeAt(s, start, n)))
            break;
        end = start;
    }
    return std::string(s.substr(begin, end - begin));
}

// Python's str.lstrip('\n'), rstrip('\n'), strip('\n').
std::string_view lstripNewlines(std::string_view s)
{
    const auto p = s.find_first_not_of('\n');
    return p == std::string_view::npos ? std::string_view() : s.substr(p);
}
std::string_view rstripNewlines(std::string_view s)
{
    const auto p = s.find_last_not_of('\n');
    return p == std::string_view::npos ? std::string_view() : s.substr(0, p + 1);
}

// s.split(sep)[0] and s.split(sep)[-1].
std::string_view beforeFirst(std::string_view s, std::string_view sep)
{
    const auto p = s.find(sep);
    return p == std::string_view::npos ? s : s.substr(0, p);
}
std::string_view afterLast(std::string_view s, std::string_view sep)
{
    const auto p = s.rfind(sep);
    return p == std::string_view::npos ? s : s.substr(p + sep.size());
}

bool isToolResponse(std::string_view s)
{
    return s.starts_with("<tool_response>") && s.ends_with("</tool_response>");
}

// The reasoning and answer of an assistant turn whose thinking is inside `content`.
struct SplitTurn {
    std::string reasoning;
    std::string content;
};
SplitTurn splitThinking(std::string_view content)
{
    SplitTurn t;
    t.reasoning
        = lstripNewlines(afterLast(rstripNewlines(beforeFirst(content, "</think>")), "<think>"));
    t.content = lstripNewlines(afterLast(content, "</think>"));
    return t;
}

// The prompt being written: template text (append) and text from the messages (appendText),
// which is marked so that it is tokenized without control tokens.
class PromptBuilder {
public:
    PromptBuilder& append(std::string_view text)
    {
        m_prompt.text.append(text);
        return *this;
    }
    PromptBuilder& appendText(std::string_view text)
    {
        if (!text.empty()) {
            const std::size_t begin = m_prompt.text.size();
            m_prompt.text.append(text);
            m_prompt.messageText.push_back({ begin, m_prompt.text.size() });
        }
        return *this;
    }
    ChatPrompt take() { return std::move(m_prompt); }

private:
    ChatPrompt m_prompt;
};

void appendTurn(PromptBuilder& out, std::string_view role, std::string_view content)
{
    out.append(kImStart).appendText(role).append("\n").appendText(content).append(kImEnd).append(
        "\n");
}

Result<ChatPrompt> renderChatMl(std::span<const ChatMessage> messages, const ChatOptions& options)
{
    PromptBuilder out;
    for (const ChatMessage& m : messages)
        appendTurn(out, m.role, m.content);
    if (options.addGenerationPrompt)
        out.append(kImStart).append("assistant\n");
    return out.take();
}

// Qwen3's template (tools aside): see tests/data/chat/qwen3.jinja.
Result<ChatPrompt> renderQwen3(std::span<const ChatMessage> messages, const ChatOptions& options)
{
    const std::ptrdiff_t count = std::ptrdiff_t(messages.size());
    PromptBuilder out;
    if (count > 0 && messages[0].role == "system")
        appendTurn(out, "system", messages[0].content);
    std::ptrdiff_t lastQuery = count - 1;
    for (std::ptrdiff_t i = count - 1; i >= 0; --i) {
        const ChatMessage& m = messages[std::size_t(i)];
        if (m.role == "user" && !isToolResponse(m.content)) {
            lastQuery = i;
            break;
        }
    }
    for (std::ptrdiff_t i = 0; i < count; ++i) {
        const ChatMessage& m = messages[std::size_t(i)];
        const bool last = i == count - 1;
        if (m.role == "user" || (m.role == "system" && i != 0)) {
            appendTurn(out, m.role, m.content);
        } else if (m.role == "assistant") {
            std::string content = m.content;
            std::string reasoning;
            if (m.reasoningContent) {
                reasoning = *m.reasoningContent;
            } else if (m.content.find("</think>") != std::string::npos) {
                SplitTurn split = splitThinking(m.content);
                content = std::move(split.content);
                reasoning = std::move(split.reasoning);
            }
            out.append(kImStart).append("assistant\n");
            if (i > lastQuery && (last || !reasoning.empty())) {
                const std::string_view r = lstripNewlines(rstripNewlines(reasoning));
                out.append("<think>\n").appendText(r).append("\n</think>\n\n");
                out.appendText(lstripNewlines(content));
            } else {
                out.appendText(content);
            }
            out.append(kImEnd).append("\n");
        } else if (m.role == "tool") {
            if (i == 0 || messages[std::size_t(i - 1)].role != "tool")
                out.append(kImStart).append("user");
            out.append("\n<tool_response>\n").appendText(m.content).append("\n</tool_response>");
            if (last || messages[std::size_t(i + 1)].role != "tool")
                out.append(kImEnd).append("\n");
        }
        // Other roles (and a leading system message) produce nothing here.
    }
    if (options.addGenerationPrompt) {
        out.append(kImStart).append("assistant\n");
        if (options.enableThinking == false)
            out.append("<think>\n\n</think>\n\n");
    }
    return out.take();
}

// Qwen3.5/3.6's template (text content, tools aside): see tests/data/chat/qwen3_6.jinja.
Result<ChatPrompt> renderQwen36(
    std::span<const ChatMessage> messages, const ChatOptions& options, bool supportsPreserve)
{
    if (messages.empty())
        return makeError("No messages provided.");
    const std::ptrdiff_t count = std::ptrdiff_t(messages.size());
    PromptBuilder out;
    if (messages[0].role == "system")
        appendTurn(out, "system", trim(messages[0].content));
    std::ptrdiff_t lastQuery = -1;
    for (std::ptrdiff_t i = count - 1; i >= 0; --i) {
        const ChatMessage& m = messages[std::size_t(i)];
        if (m.role == "user" && !isToolResponse(trim(m.content))) {
            lastQuery = i;
            break;
        }
    }
    if (lastQuery < 0)
        return makeError("No user query found in messages.");
    const bool preserve = supportsPreserve && options.preserveThinking == true;
    for (std::ptrdiff_t i = 0; i < count; ++i) {
        const ChatMessage& m = messages[std::size_t(i)];
        std::string content = trim(m.content);
        if (m.role == "system") {
            if (i != 0)
                return makeError("System message must be at the beginning.");
        } else if (m.role == "user") {
            appendTurn(out, "user", content);
        } else if (m.role == "assistant") {
            std::string reasoning;
            if (m.reasoningContent) {
                reasoning = *m.reasoningContent;
            } else if (content.find("</think>") != std::string::npos) {
                SplitTurn split = splitThinking(content);
                content = std::move(split.content);
                reasoning = std::move(split.reasoning);
            }
            reasoning = trim(reasoning);
            out.append(kImStart).append("assistant\n");
            if (preserve || i > lastQuery)
                out.append("<think>\n").appendText(reasoning).append("\n</think>\n\n");
            out.appendText(content).append(kImEnd).append("\n");
        } else if (m.role == "tool") {
            // The template opens the user turn only after a non-tool message (not when a
            // tool message comes first: `loop.previtem` is undefined there).
            if (i > 0 && messages[std::size_t(i - 1)].role != "tool")
                out.append(kImStart).append("user");
            out.append("\n<tool_response>\n").appendText(content).append("\n</tool_response>");
            if (i == count - 1 || messages[std::size_t(i + 1)].role != "tool")
                out.append(kImEnd).append("\n");
        } else {
            return makeError("Unexpected message role.");
        }
    }
    if (options.addGenerationPrompt) {
        out.append(kImStart).append("assistant\n");
        out.append(options.enableThinking == false ? "<think>\n\n</think>\n\n" : "<think>\n");
    }
    return out.take();
}

} // namespace

std::string_view flavourName(ChatTemplateFlavour flavour)
{
    switch (flavour) {
    case ChatTemplateFlavour::Qwen3:
        return "qwen3";
    case ChatTemplateFlavour::Qwen36:
        return "qwen3.6";
    default:
        return "chatml";
    }
}

ChatTemplate::ChatTemplate(ChatTemplateFlavour flavour)
    : m_flavour(flavour)
{
}

ChatTemplate ChatTemplate::fromJinja(std::string_view jinja)
{
    const auto has = [&](std::string_view s) { return jinja.find(s) != std::string_view::npos; };
    // Fingerprints: both Qwen templates find the last real user query (ns.last_query_index)
    // and take <think> apart; Qwen3.5/3.6 renders content through the render_content macro
    // and opens the generation prompt with '<think>\n'.
    const bool chatMl = has("<|im_start|>") && has("<|im_end|>");
    const bool qwenThinking
        = chatMl && has("last_query_index") && has("reasoning_content") && has("</think>");
    if (qwenThinking && has("render_content") && has("enable_thinking")) {
        ChatTemplate t(ChatTemplateFlavour::Qwen36);
        t.m_supportsPreserveThinking = has("preserve_thinking");
        return t;
    }
    if (qwenThinking && !has("render_content") && has("enable_thinking"))
        return ChatTemplate(ChatTemplateFlavour::Qwen3);
    ChatTemplate t(ChatTemplateFlavour::ChatMl);
    t.m_warning = jinja.empty() ? "the model file has no chat template; using plain ChatML"
                                : "the model's chat template is not one the engine knows (Qwen3, "
                                  "Qwen3.5/3.6); using plain ChatML, which may not match the model";
    return t;
}

Result<std::string> ChatTemplate::render(
    std::span<const ChatMessage> messages, const ChatOptions& options) const
{
    auto prompt = renderPrompt(messages, options);
    if (!prompt)
        return prompt.error();
    return std::move(prompt->text);
}

Result<ChatPrompt> ChatTemplate::renderPrompt(
    std::span<const ChatMessage> messages, const ChatOptions& options) const
{
    switch (m_flavour) {
    case ChatTemplateFlavour::Qwen3:
        return renderQwen3(messages, options);
    case ChatTemplateFlavour::Qwen36:
        return renderQwen36(messages, options, m_supportsPreserveThinking);
    default:
        return renderChatMl(messages, options);
    }
}

} // namespace cw::engine
