"""Random trees and configurations for the Python-side differential tests
(tests/oracle/crosscheck.py and python/tests/): odd names, non-UTF-8 names,
links, deep trees, blank and big files, and Python values of every kind for
the six keys."""

import math
import os
from decimal import Decimal
from fractions import Fraction

TEXTS = ["rule", " always", " never", "\n", "\r\n", "\r", "日本語", "😀", "<|endoftext|>",
         "{{content}}", "\u3000", "\xa0", "\x1c", "\u2028", "12345", "don't", "  ", "\t",
         "é", "```", "!!!", "snake_case", "\ufeff"]
DIRS = ["src", "a", "a-b", "a.b", "b", "node_modules", ".git", "build", "dist", "venv",
        "__pycache__", "x.egg-info", "deep", "Ünï", "sp ace", "[x]", ".cache", "keep", "rules"]
FILES = ["a.promptinclude.md", "b.promptinclude.md", ".promptinclude.md", "A.PROMPTINCLUDE.md",
         "日本.promptinclude.md", "x y.promptinclude.md", "a-b.promptinclude.md", "rule.md",
         "notes.txt", "[1].promptinclude.md", "a.promptinclude.md.bak"]


def random_bytes(rng):
    kind = rng.randrange(12)
    if kind == 0:
        return b""
    if kind == 1:
        return rng.choice([" \n\t", "\x1c\x1d", "\u3000\n", "\r\n", "\x85"]).encode()
    if kind == 2:
        return (rng.choice(["a", "ab1", "語", "_"]) * rng.randrange(100, 2500)).encode()
    words = rng.choice([rng.randrange(1, 40), rng.randrange(100, 700), rng.randrange(1500, 4000)])
    out = bytearray()
    for _ in range(words):
        out += rng.choice(TEXTS).encode()
        if rng.randrange(40) == 0:
            out += rng.choice([b"\xff", b"\xe2\x82", b"\xed\xa0\x80"])
    return bytes(out)


def random_tree(rng, root):
    os.makedirs(root)
    dirs = [root]
    for _ in range(rng.randrange(1, 10)):
        d = os.path.join(rng.choice(dirs), rng.choice(DIRS))
        os.makedirs(d, exist_ok=True)
        dirs.append(d)
    if rng.randrange(4) == 0:
        d = os.path.join(root, "deep", *[f"d{i}" for i in range(rng.randrange(3, 12))])
        os.makedirs(d, exist_ok=True)
        dirs.append(d)
    for _ in range(rng.randrange(1, 16)):
        path = os.path.join(rng.choice(dirs), rng.choice(FILES))
        if not os.path.isdir(path):
            with open(path, "wb") as fh:
                fh.write(random_bytes(rng))
    if rng.randrange(5) == 0:  # a name that is not UTF-8
        path = os.path.join(os.fsencode(rng.choice(dirs)), b"\xff.promptinclude.md")
        with open(path, "wb") as fh:
            fh.write(random_bytes(rng))
    for _ in range(rng.randrange(3)):
        link = os.path.join(rng.choice(dirs), f"link{rng.randrange(4)}.promptinclude.md")
        if os.path.lexists(link):
            continue
        target = rng.choice(["nowhere.promptinclude.md", link, rng.choice(dirs)])
        os.symlink(target, link)


INTS = [0, 1, 2, 3, 5, 10, 50, 51, 60, 100, 120, 300, 2000, 8000, 50000,
        -1, -50, 2**31, 2**63, 2**64, 10**30, 10**400]
FLOATS = [0.0, -0.0, 0.5, 1.5, 2.0, 51.5, 60.7, 100.5, 1e2, 1999.9, -3.5,
          math.inf, -math.inf, math.nan, 1e308]
ODD = [True, False, None, "10", "", [], [1], {}, {"a": 1}, b"x"]
PATTERNS = ["*.promptinclude.md", "*.md", "*rule*", "[a-c]*.promptinclude.md", "?*.md",
            "*[!z].promptinclude.md", "[", "[]]", "", "*", "*.PROMPTINCLUDE.md",
            5, None, True, False, b"*.md", ["*.md"], 1.5, "\udcff*"]
LINES = ["venv/**", "**/node_modules/**", "build/", "!build/", "*.md", "!a.promptinclude.md",
         "a-b", "/src", "docs/**", "**/deep/**/d3", "[ab]*", "# comment", "", "  sp  ",
         "!/", "**/", "\\#x", "a[", "[z-a]", "!", "\\", "Ünï/", "**/*.egg-info/**", "*[!x]",
         "\udcff*"]
DEFAULT_GITIGNORE = ("venv/**\n**/__pycache__/**\n**/node_modules/**\n**/.npm/**\n**/.git/**\n"
                     "**/.conda/**\n**/.cache/**\n**/dist/**\n**/build/**\n**/.tox/**\n"
                     "**/.eggs/**\n**/*.egg-info/**\n")
NUMBER_KEYS = ["max_depth", "max_file_tokens", "max_file_count", "max_total_tokens"]


DECIMALS = [Decimal(0), Decimal(1), Decimal(2), Decimal(-3), Decimal("-0"), Decimal("0.5"),
            Decimal("2.5"), Decimal("60.7"), Decimal("1E+2"), Decimal("2000"), Decimal("8000.25"),
            Decimal("1E+400"), Decimal("-1E+400"), Decimal("Infinity"), Decimal("-Infinity"),
            Decimal("NaN"), Decimal("-NaN"), Decimal("sNaN"),
            # more digits than the default context's 28: sums and differences round
            Decimal("60.00000000000000000000000000001"),
            Decimal("100.0000000000000000000000000000001")]
FRACTIONS = [Fraction(0), Fraction(3), Fraction(7, 2), Fraction(-1, 3), Fraction(1, 3),
             Fraction(2001, 2), Fraction(10**40 + 1, 10**37), Fraction(1, 10**30),
             Fraction(-10**50, 7), Fraction(161, 3)]


def tower_number(rng):
    """A number of any type of Python's numeric tower (no numpy): int, bool, float,
    Decimal, Fraction, complex; small, negative, huge, NaN and infinities."""
    kind = rng.randrange(6)
    base = rng.choice([rng.randrange(0, 200), rng.randrange(40, 3000), rng.randrange(100, 9000),
                       rng.choice(INTS)])
    if kind == 0:
        return base
    if kind == 1:
        return rng.choice([True, False, rng.randrange(0, 3000) + rng.choice([0.0, 0.5, 0.25]),
                           rng.choice(FLOATS)])
    if kind in (2, 3):
        if rng.randrange(2):
            return rng.choice(DECIMALS)
        return Decimal(base) + rng.choice([Decimal(0), Decimal("0.5"), Decimal("0.25"),
                                           Decimal("-0.75")])
    if kind == 4:
        if rng.randrange(2):
            return rng.choice(FRACTIONS)
        return Fraction(base) + Fraction(rng.randrange(0, 7), rng.randrange(1, 8))
    return rng.choice([complex(rng.randrange(0, 3000)), complex(0, 1), Fraction(base, 3),
                       Decimal(base) / 3])


def random_number(rng):
    roll = rng.randrange(23)
    if roll >= 20:
        return tower_number(rng)
    if roll < 9:
        return rng.choice([rng.randrange(0, 200), rng.randrange(40, 3000), rng.randrange(100, 9000)])
    if roll < 12:
        return rng.choice(INTS)
    if roll < 15:
        return rng.choice([rng.randrange(0, 3000) + rng.choice([0.0, 0.5, 0.25]), rng.choice(FLOATS)])
    if roll < 17:
        return rng.choice([True, False])
    return rng.choice(FLOATS + ODD)


def random_gitignore(rng):
    if rng.randrange(6) == 0:
        return rng.choice([0, False, None, [], 5, True, ["a"], b"x", b"  ", 0.0, math.nan, "",
                           "  \n# x\n"])
    lines = [rng.choice(LINES) for _ in range(rng.randrange(1, 6))]
    if rng.randrange(3):  # mostly without the lines that make pathspec raise
        lines = [l for l in lines if l not in ("[z-a]", "!", "\\")]
    return rng.choice(["\n", "\r\n", "\r"]).join(lines)


def random_config(rng, number=random_number):
    """Keyword arguments for scan_promptinclude_files (only some keys given)."""
    cfg = {}
    if rng.randrange(2):
        cfg["gitignore"] = DEFAULT_GITIGNORE
    for key in NUMBER_KEYS:
        if rng.randrange(2):
            cfg[key] = number(rng)
    if rng.randrange(3) == 0:
        cfg["name_pattern"] = rng.choice(PATTERNS)
    if rng.randrange(2):
        cfg["gitignore"] = random_gitignore(rng)
    return cfg
