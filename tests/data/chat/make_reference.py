#!/usr/bin/env python3
"""Renders the real Qwen chat templates the way transformers' apply_chat_template does and
writes chat_reference.json for tests/engine/chat.

transformers (chat_template_utils._compile_jinja_template) uses an ImmutableSandboxedEnvironment
with trim_blocks=True, lstrip_blocks=True, the loopcontrols extension, a tojson filter that
calls json.dumps(ensure_ascii=False, ...), and the globals raise_exception and strftime_now;
the render gets messages, add_generation_prompt, the tokenizer's special tokens and the
extra keyword arguments (enable_thinking, preserve_thinking) only when given.
Needs Debian's python3-jinja2 (3.1). Run: python3 tests/data/chat/make_reference.py
"""
import json
import os
from datetime import datetime

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))


class TemplateError(Exception):
    pass


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def strftime_now(fmt):
    return datetime.now().strftime(fmt)


def compile_template(source):
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)


SPECIAL_TOKENS = {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
                  "additional_special_tokens": ["<|im_start|>", "<|im_end|>"]}

THINK_HISTORY = "<think>\nThe clause caps liability at fees paid.\n</think>\n\nIt limits liability."

CONVERSATIONS = {
    "user_only": [{"role": "user", "content": "What is an indemnity clause?"}],
    "system_and_user": [
        {"role": "system", "content": "You are a careful contract reviewer."},
        {"role": "user", "content": "Summarise clause 7."},
    ],
    "multi_turn": [
        {"role": "system", "content": "You review contracts."},
        {"role": "user", "content": "Is there a non-compete?"},
        {"role": "assistant", "content": "Yes, in section 9.2, for two years."},
        {"role": "user", "content": "Is it enforceable in California?"},
    ],
    "history_with_think_content": [
        {"role": "user", "content": "What does clause 4 do?"},
        {"role": "assistant", "content": THINK_HISTORY},
        {"role": "user", "content": "And clause 5?"},
        {"role": "assistant", "content": "<think>\nClause 5 is about notices.\n</think>\n\nIt sets how notices are sent."},
    ],
    "history_with_reasoning_field": [
        {"role": "user", "content": "Who are the parties?"},
        {"role": "assistant", "content": "Acme Corp and Beta LLC.", "reasoning_content": "The preamble names them."},
        {"role": "user", "content": "When does it end?"},
    ],
    "last_assistant_without_think": [
        {"role": "user", "content": "Governing law?"},
        {"role": "assistant", "content": "New York."},
    ],
    "whitespace_around_content": [
        {"role": "system", "content": "  Be brief.  \n"},
        {"role": "user", "content": "\n  Term of the agreement?  \n\n"},
        {"role": "assistant", "content": "\n\nFive years.\n"},
        {"role": "user", "content": "Renewal?\t"},
    ],
    "tool_responses": [
        {"role": "user", "content": "Look up the clause."},
        {"role": "assistant", "content": "I will search."},
        {"role": "tool", "content": "Clause 12: Termination for convenience."},
        {"role": "tool", "content": "Clause 13: Survival."},
        {"role": "user", "content": "Thanks, summarise."},
    ],
    "unicode_content": [
        {"role": "system", "content": "Réponds en français."},
        {"role": "user", "content": "本合同的管辖法律是什么？ 👍"},
    ],
    "system_later": [
        {"role": "user", "content": "Hi"},
        {"role": "system", "content": "Late system."},
    ],
    "no_user_query": [
        {"role": "system", "content": "Only a system message."},
    ],
}

OPTION_SETS = [
    ("gen_default", {"add_generation_prompt": True}),
    ("gen_thinking_off", {"add_generation_prompt": True, "enable_thinking": False}),
    ("gen_thinking_on", {"add_generation_prompt": True, "enable_thinking": True}),
    ("no_gen", {"add_generation_prompt": False}),
    ("gen_preserve_thinking", {"add_generation_prompt": True, "preserve_thinking": True}),
]

TEMPLATES = {"qwen3": "qwen3.jinja", "qwen3_6": "qwen3_6.jinja"}


def main():
    cases = []
    for template_name, file_name in TEMPLATES.items():
        with open(os.path.join(HERE, file_name), encoding="utf-8") as f:
            template = compile_template(f.read())
        for conversation_name, messages in CONVERSATIONS.items():
            for options_name, options in OPTION_SETS:
                case = {"template": template_name, "name": f"{conversation_name}/{options_name}",
                        "messages": messages, "options": options}
                try:
                    case["expected"] = template.render(messages=messages, **SPECIAL_TOKENS, **options)
                except TemplateError as e:
                    case["error"] = str(e)
                cases.append(case)
    out = {"generator": f"make_reference.py with jinja2 {jinja2.__version__}", "cases": cases}
    with open(os.path.join(HERE, "chat_reference.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"{len(cases)} cases, {sum('error' in c for c in cases)} raise")


if __name__ == "__main__":
    main()
