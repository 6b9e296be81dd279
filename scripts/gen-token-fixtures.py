#!/usr/bin/env python3
"""Generate expected cl100k_base token counts (and trims) from Python tiktoken.

Writes crates/tokenize/tests/fixtures/counts.jsonl ({"text", "count"}) and
crates/tokenize/tests/fixtures/trim.jsonl ({"text", "max", "out"}) for crates/tokenize/tests/exact.rs.
count = len(enc.encode(text, disallowed_special=())), as the reference does;
out = the reference's trim_start(text, max).

Run with the oracle's interpreter (tiktoken 0.8.0):
  /work/shared/oracle/oracle /tmp   # once, creates the venv
  TIKTOKEN_CACHE_DIR=~/.cache/promptinclude-oracle/tiktoken \
    ~/.cache/promptinclude-oracle/venv/bin/python scripts/gen-token-fixtures.py
Deterministic (fixed seed); the output must not change between runs.
"""
import json
import os
import random

import tiktoken

assert tiktoken.__version__ == "0.8.0", tiktoken.__version__
ENC = tiktoken.get_encoding("cl100k_base")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "tokenize", "tests", "fixtures")


def count(text):
    return len(ENC.encode(text, disallowed_special=())) if text else 0


def trim_start(text, max_tokens, ellipsis="..."):
    # Same as the reference's trim_start (TRIM_BUFFER = 0.8).
    n_chars, n_tokens = len(text), count(text)
    if n_tokens <= max_tokens:
        return text
    keep = int(n_chars * (max_tokens / n_tokens) * 0.8)
    return text[:keep] + ellipsis


WORDS = ["the", " the", "The", "include", " prompt", "Rule", "tabs", "don", "I", "a", "HTTP",
         "über", "naïve", "Привет", "Ελληνικά", "مرحبا", "नमस्ते", "こんにちは", "漢字", "한국어"]
PUNCT = list(".,!?:;-_*#`()[]{}<>/\\|=+&%$@~^\"") + ["```", "---", "**", "…", "—", "«", "»", "→", "€"]
SPACES = [" ", " ", "  ", "\t", "\n", "\n\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e",
          "\x1f", "\x85", "\xa0", "\u1680", "\u2003", "\u2028", "\u2029", "\u202f", "\u3000",
          "\u200b", "\ufeff", "\u180e", " \n", "\n ", "\t\n"]
APOS = ["'", "'s", "'S", "'\u017f", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'LL", "'d", "'D",
        "'r", "'x", "\u2019s", "'se", "'lla"]
DIGITS = ["0", "12", "123", "1234", "99999", "3.14", "\u0663", "\u0967\u0968", "\uff11\uff12",
          "\xb2", "\xbd", "\u216b", "\u3007", "\U0001d7d9", "\u246b"]
MISC = ["<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>", "\U0001f600", "\U0001f44d\U0001f3fd",
        "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f1e9\U0001f1ea", "\u2764\ufe0f",
        "e\u0301", "\u0301", "a\u0308", "\ufffd", "\0", "\x7f",
        # Unicode 16 additions (letters/digits in newer tables): must agree.
        "\u1c89", "\u1c8a", "\U00010d50", "\U00010d70", "\U00016d40", "\U0001ccf0", "\U0001e5d0",
        "\U00011bc0", "\U0001e5f1", "\U000116d0"]


def rand_char(rng):
    lo, hi = rng.choice([(0x4E00, 0x9FFF), (0x3040, 0x30FF), (0xAC00, 0xD7A3), (0x1F300, 0x1FAFF),
                         (0x300, 0x36F), (0x80, 0x2FFF), (0x0, 0x10FFFF), (0x0, 0x20),
                         (0x20, 0x7E), (0x10000, 0x1FFFF)])
    while True:
        c = rng.randint(lo, hi)
        if not 0xD800 <= c <= 0xDFFF:
            return chr(c)


def rand_text(rng, units):
    out = []
    for _ in range(rng.randint(0, units)):
        k = rng.randrange(18)
        if k < 5:
            out.append(rng.choice(WORDS))
        elif k < 8:
            out.append(rng.choice(SPACES))
        elif k < 10:
            out.append(rng.choice(PUNCT))
        elif k == 10:
            out.append(rng.choice(APOS))
        elif k == 11:
            out.append(rng.choice(DIGITS))
        elif k == 12:
            out.append(rng.choice(MISC))
        elif k == 13:
            out.append(rand_char(rng))
        elif k == 14:
            out.append(rng.choice(SPACES + PUNCT + DIGITS + WORDS) * rng.randint(1, 12))
        else:
            out.append("".join(chr(rng.randint(97, 122)) for _ in range(rng.randint(1, 8))))
    return "".join(out)


def main():
    rng = random.Random(20240601)
    texts = []
    for i in range(4000):
        texts.append(rand_text(rng, 300 if i % 100 == 0 else 24))
    for m in MISC + APOS + DIGITS:
        for ctx in ["a{}b", "{}", " {}", "\n{}\n", "1{}2", "{}{}"]:
            texts.append(ctx.replace("{}", m))
    # Runs of one class (the reference is quadratic on these, keep them moderate).
    for u in [" ", "\n", "\t", "\r\n", " \n", "\u3000", "a", "\u6f22", "\U0001f600", "!", "-", "1",
              "'", "'s", "\xe9", "\u0301", " a", "\x1c", "\xa0"]:
        for n in [1, 2, 3, 17, 1000, 5000]:
            texts.append(u * n)
            texts.append(u * n + "x")
            texts.append("x" + u * n)
    # A markdown rule file.
    texts.append("# Rules\n\n- Always use tabs.\n- Don't commit secrets; it's 2024.\r\n\n"
                 "```python\ndef f(x):\n    return x ** 2  # square\n```\n" * 50)
    with open(os.path.join(OUT, "counts.jsonl"), "w", encoding="utf-8") as f:
        for t in texts:
            f.write(json.dumps({"text": t, "count": count(t)}, ensure_ascii=False) + "\n")
    with open(os.path.join(OUT, "trim.jsonl"), "w", encoding="utf-8") as f:
        for t in texts[1:1201]:
            n = count(t)
            for m in sorted({0, 1, n // 2, max(n - 1, 0), n, rng.randint(0, n + 1)}):
                f.write(json.dumps({"text": t, "max": m, "out": trim_start(t, m)},
                                   ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
