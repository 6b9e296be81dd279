#!/usr/bin/env python3
"""Record the reference's verdicts on fuzz inputs, for tests/fuzz_smoke.rs.

For every input file of a gitignore corpus: does pathspec 1.1.1 accept the
text as the reference builds it (which line raises, and what), and, when it
does, which probe paths it ignores as a file and as a directory. For every
input of an fnmatch corpus: Python's fnmatch verdict. Inputs are decoded as
UTF-8 with replacement, exactly as the Rust fuzz targets decode them.

Run with the oracle's interpreter (pathspec 1.1.1), after a fuzz run:
  ~/.cache/promptinclude-oracle/venv/bin/python fuzz/oracle-verdicts.py \
      gitignore fixtures/fuzz/gitignore_verdicts.jsonl CORPUS_DIR...
  ~/.cache/promptinclude-oracle/venv/bin/python fuzz/oracle-verdicts.py \
      fnmatch fixtures/fuzz/fnmatch_verdicts.jsonl CORPUS_DIR...
At most --limit inputs are kept (a fixed-seed random sample, in byte order);
an input on which the reference needs more than 2 s is left out (reported).
"""
import argparse
import fnmatch
import json
import os
import random
import re
import signal

import pathspec
from pathspec.patterns.gitwildmatch import GitWildMatchPattern

assert pathspec.__version__ == "1.1.1", pathspec.__version__

FIXED_PROBES = ["a", "a/b", "b/a", "x.promptinclude.md", "venv/x", "a\nb"]


def reference_lines(text):
    """(line_number, stripped line) as the reference's ignore_spec keeps them."""
    out = []
    for i, line in enumerate(text.splitlines()):
        line = line.strip()
        if line and not line.startswith("#"):
            out.append((i + 1, line))
    return out


def probes(lines):
    """The paths a text is probed with (the same idea as the Rust target's)."""
    paths = list(FIXED_PROBES)
    for _, line in lines:
        bare = line.lstrip("!")
        paths += [line, bare.lstrip("/"), "d/" + bare.strip("/")]
        if len(paths) >= 16:
            break
    return [p for p in paths if p]


def gitignore_record(text):
    lines = reference_lines(text)
    for number, line in lines:
        try:
            GitWildMatchPattern(line)
        except re.error as e:
            kind = "BadCharacterRange" if "bad character range" in str(e) else "re.error: " + str(e)
            return {"text": text, "error": {"line": number, "kind": kind}}
        except Exception as e:  # pathspec's GitIgnorePatternError (a ValueError)
            kind = "InvalidPattern" if "Invalid git pattern" in str(e) else type(e).__name__ + ": " + str(e)
            return {"text": text, "error": {"line": number, "kind": kind}}
    if not lines:
        return {"text": text, "error": None, "probes": []}
    spec = pathspec.PathSpec.from_lines("gitwildmatch", [l for _, l in lines])
    verdicts = []
    for p in probes(lines):
        as_file = spec.match_file(p)
        verdicts.append([p, as_file, as_file or spec.match_file(p + "/")])
    return {"text": text, "error": None, "probes": verdicts}


def fnmatch_record(data):
    pattern, sep, name = data.partition(b"\0")
    if not sep:
        name = pattern
    pattern = pattern.decode("utf-8", "replace")
    name = name.decode("utf-8", "replace")
    return {"pattern": pattern, "name": name, "match": fnmatch.fnmatch(name, pattern)}


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("target", choices=["gitignore", "fnmatch"])
    ap.add_argument("out")
    ap.add_argument("corpus", nargs="+")
    ap.add_argument("--limit", type=int, default=1500)
    args = ap.parse_args()
    inputs = set()
    for d in args.corpus:
        for name in os.listdir(d):
            with open(os.path.join(d, name), "rb") as f:
                inputs.add(f.read())
    inputs = sorted(inputs)
    random.Random(6).shuffle(inputs)
    inputs = sorted(inputs[: args.limit])
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as out:
        signal.signal(signal.SIGALRM, on_alarm)
        slow = 0
        for data in inputs:
            # Python's backtracking `re` is exponential on some patterns (e.g. a
            # long run of `*`); such inputs get no verdict.
            signal.alarm(2)
            try:
                if args.target == "gitignore":
                    record = gitignore_record(data.decode("utf-8", "replace"))
                else:
                    record = fnmatch_record(data)
            except Timeout:
                slow += 1
                continue
            finally:
                signal.alarm(0)
            out.write(json.dumps(record, ensure_ascii=True) + "\n")
    print(f"{slow} inputs skipped: the reference took over 2 s")
    print(f"{len(inputs)} records -> {args.out}")


if __name__ == "__main__":
    main()
