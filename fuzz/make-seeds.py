#!/usr/bin/env python3
"""Write the committed seed corpora under fuzz/corpus/<target>/ (deterministic).

Seeds come from the oracle-checked vectors in fixtures/vectors/, the fixture
configurations, and a few hand-picked hostile inputs. Each seed is one file
named by the sha1 of its bytes (libFuzzer's convention). Re-running rewrites
the same files. Usage: python3 fuzz/make-seeds.py
"""
import hashlib
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VECTORS = os.path.join(ROOT, "fixtures", "vectors")


def vectors(name):
    with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def write(target, seeds):
    out = os.path.join(HERE, "corpus", target)
    os.makedirs(out, exist_ok=True)
    for seed in seeds:
        if isinstance(seed, str):
            seed = seed.encode("utf-8", "surrogateescape")
        with open(os.path.join(out, hashlib.sha1(seed).hexdigest()), "wb") as f:
            f.write(seed)


def gitignore_seeds(rng):
    seeds = ["\n".join(v["patterns"]) for v in vectors("invalid_patterns.jsonl")]
    lists = sorted({"\n".join(v["patterns"]) for v in vectors("gitwildmatch.jsonl")})
    seeds += rng.sample(lists, min(150, len(lists)))
    seeds += [v["text"] for v in vectors("gitignore_lines.jsonl")]
    seeds += [
        "a[b\\",  # unclosed [ hides the dangling backslash
        "[z-a]/x[",  # unclosed [ hides the bad range
        "[z-a]/x\\",  # the dangling backslash wins over the bad range
        "[]-a]\n[!]-]]\n[a-\\]]\n[^a-]\n[--0]",
        "!\n#c\n/\n!/\n**/\n/**/\n***\n\\ \n\\#x\n\\!x",
        "a\u0085b\u2028c\x1cd\r\ne\rf",
    ]
    return seeds


def fnmatch_seeds(rng):
    pairs = sorted({(v["pattern"], v["name"]) for v in vectors("fnmatch.jsonl")})
    seeds = [p + "\0" + n for p, n in rng.sample(pairs, min(250, len(pairs)))]
    seeds += [
        b"*.promptinclude.md\0a\xff.promptinclude.md",
        "[!a-c-e]*\0-x",
        "[a-]]\0-]",
        "*[&&~~||]*\0a&b",
        "?\0\n",
        "\\*\0\\x",
    ]
    return seeds


def decode_seeds():
    return [
        b"",
        b"plain text\n",
        b"a\r\nb\rc\n\r\r\n",
        b"\xef\xbb\xbfbom",
        b"a\xe2\x82b\xff\xfe\xef\xbb\xbfz",
        b"\xed\xa0\x80\xed\xbf\xbf",
        b"\xf0\x90\x80\xf4\x90\x80\x80\xf5",
        b"\xc0\xaf\xe0\x80\xaf\xc2",
        b"a\r\xffb\n",
        "\u00e9\u65e5\U0001f600\r".encode(),
    ]


def trim_seeds():
    header = lambda mx, seed: mx.to_bytes(2, "little") + seed.to_bytes(2, "little")
    texts = [
        "Always use tabs.\nNever commit secrets.\n" * 20,
        "x" * 3000,
        " " * 2000 + "a",
        "\n\n\n" + "word " * 500,
        "日本語のルール" * 100,
        "<|endoftext|> 's 'll 123456 3.14 \u00a0\u3000\u2028" * 30,
        "\ufeff\U0001f44d\U0001f3fd e\u0301" * 50,
    ]
    seeds = []
    for i, text in enumerate(texts):
        for mx in (0, 1, 50, 51, 300):
            seeds.append(header(mx, i * 97 + mx) + text.encode())
    return seeds


def config_seeds():
    seeds = []
    for name in sorted(os.listdir(os.path.join(ROOT, "fixtures", "configs"))):
        with open(os.path.join(ROOT, "fixtures", "configs", name), "rb") as f:
            seeds.append(f.read())
    with open(os.path.join(ROOT, "fixtures", "config", "default_config.yaml"), "rb") as f:
        seeds.append(f.read())
    seeds += [
        '{"max_depth": -1}',
        '{"max_depth": 1e3}',
        '{"max_depth": 18446744073709551615}',
        '{"max_file_count": "50"}',
        '{"gitignore": null, "name_pattern": ["x"]}',
        '{"max_total_tokens": true, "extra": {"a": [1, 2]}}',
        "max_depth: 0x10\nmax_file_tokens: 1_000\nname_pattern: !!str 5\n",
        "gitignore: |\n  venv/**\n  !keep\nmax_file_count: ~\n",
        "a: &x [1, 2]\nb: *x\nmax_depth: *x\n",
        "? [complex, key]\n: 1\n",
        "[1, 2, 3]",
        "---\n...\n",
        "max_depth: 5\nmax_depth: 6\n",
    ]
    return seeds


def main():
    rng = random.Random(6)
    write("gitignore", gitignore_seeds(rng))
    write("fnmatch", fnmatch_seeds(rng))
    write("decode", decode_seeds())
    write("trim", trim_seeds())
    write("config", config_seeds())


if __name__ == "__main__":
    main()
