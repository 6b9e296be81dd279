"""scan_promptinclude_files against the real reference scanner (or, where it is
absent, the project oracle: see conftest.py), as Python objects.

>= 100 random trees x 6 random configurations (odd values included: floats,
bools, negatives, huge ints, NaN, inf, Decimal, Fraction, complex, wrong types,
invalid patterns), plus a missing root; and a numeric-tower differential with a
random, printed seed. Knobs: PROMPTINCLUDE_PY_DIFF_TREES,
PROMPTINCLUDE_PY_DIFF_CONFIGS, PROMPTINCLUDE_PY_DIFF_SEED, PROMPTINCLUDE_PY_TOWER_SEED.
"""

import decimal
import os
import random

import promptinclude
from randomtrees import random_config, random_tree

TREES = int(os.environ.get("PROMPTINCLUDE_PY_DIFF_TREES", "100"))
CONFIGS = int(os.environ.get("PROMPTINCLUDE_PY_DIFF_CONFIGS", "6"))
SEED = int(os.environ.get("PROMPTINCLUDE_PY_DIFF_SEED", "12"))


def outcome(fn, root, cfg):
    try:
        return ("returns", fn(root, **cfg))
    except Exception as e:  # noqa: BLE001
        return ("raises", e)


def same_objects(a, b):
    """Equal, with the same types all the way down and the same key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same_objects(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_objects(x, y) for x, y in zip(a, b))
    return a == b


def same_exception(mine, theirs):
    # pathspec's GitIgnorePatternError is a ValueError subclass; we raise ValueError.
    return type(mine) is type(theirs) or (
        type(mine) is ValueError and isinstance(theirs, ValueError)
    )


def test_differential_against_reference(reference, tmp_path):
    rng = random.Random(SEED)
    roots = []
    for i in range(TREES):
        root = os.path.join(str(tmp_path), f"t{i:04d}")
        random_tree(rng, root)
        roots.append(root)
    roots.append(os.path.join(str(tmp_path), "missing"))
    cases = both_raise = eager = 0
    statuses = set()
    failures = []
    for root in roots:
        for _ in range(CONFIGS):
            cfg = random_config(rng)
            mine = outcome(promptinclude.scan_promptinclude_files, root, cfg)
            theirs = outcome(reference, root, cfg)
            cases += 1
            if mine[0] == theirs[0] == "returns":
                if same_objects(mine[1], theirs[1]):
                    statuses.update(f["status"] for f in mine[1]["files"])
                    continue
            elif mine[0] == theirs[0] == "raises":
                if same_exception(mine[1], theirs[1]):
                    both_raise += 1
                    continue
            if mine[0] == "raises" and isinstance(mine[1], (TypeError, AttributeError)) \
                    and "the reference raises" in str(mine[1]):
                # A value of the wrong type: we raise at once, the reference only
                # once it first uses the value (here it never did, or raised first
                # over another value, such as Decimal("sNaN")). Documented.
                eager += 1
                continue
            failures.append(f"root {root!r}, config {cfg!r}:\n  package:   {mine!r}"
                            f"\n  reference: {theirs!r}")
    print(f"differential (seed {SEED}): {cases} cases, {both_raise} where both raise, {eager} raised eagerly "
          f"on a wrong type, {len(failures)} differences")
    assert not failures, f"{len(failures)} differences of {cases}:\n" + "\n".join(failures[:10])
    assert cases >= TREES * CONFIGS
    assert {"ok", "cropped", "skipped"} <= statuses, statuses


def test_relative_and_pathlike_roots(reference, tmp_path, monkeypatch):
    import pathlib

    rng = random.Random(7)
    root = tmp_path / "rel"
    random_tree(rng, str(root))
    monkeypatch.chdir(tmp_path)
    for given in ["rel", "./rel/", pathlib.Path("rel"), "rel/../rel", "."]:
        cfg = {"max_total_tokens": 3000}
        assert same_objects(
            promptinclude.scan_promptinclude_files(given, **cfg), reference(given, **cfg)
        ), given


def test_numeric_tower_differential(reference, tmp_path, request):
    """The four numbers drawn from every type of Python's numeric tower (int, bool,
    float, Decimal, Fraction, complex; negative, huge, NaN, infinities), against the
    reference. The seed is random unless PROMPTINCLUDE_PY_TOWER_SEED sets it, and is
    printed (and named in a failure) to re-run it."""
    from randomtrees import tower_number

    seed = int(os.environ.get("PROMPTINCLUDE_PY_TOWER_SEED") or random.randrange(2**32))
    print(f"numeric tower differential: seed {seed} (PROMPTINCLUDE_PY_TOWER_SEED={seed})")
    request.config.promptinclude_seeds = getattr(request.config, "promptinclude_seeds", []) + [
        f"numeric tower differential: PROMPTINCLUDE_PY_TOWER_SEED={seed}"]
    rng = random.Random(seed)
    roots = []
    for i in range(max(TREES // 3, 1)):
        root = os.path.join(str(tmp_path), f"n{i:04d}")
        random_tree(rng, root)
        roots.append(root)
    roots += [os.path.join(str(tmp_path), "missing"), "/nonexistent\ud800"]
    cases = 0
    kinds = {}
    failures = []
    for root in roots:
        for _ in range(CONFIGS * 2):
            cfg = random_config(rng, number=tower_number)
            mine = outcome(promptinclude.scan_promptinclude_files, root, cfg)
            theirs = outcome(reference, root, cfg)
            cases += 1
            types = {type(v).__name__ for v in cfg.values() if not isinstance(v, str)}
            ok = False
            eager = mine[0] == "raises" and isinstance(mine[1], (TypeError, AttributeError)) \
                and "the reference raises" in str(mine[1])
            if eager:
                # A value of the wrong type (complex, str, ...) raised at once
                # (documented), where the reference returns, or raises only once it
                # uses that value, or raises first over another value.
                ok = theirs[0] == "returns" or isinstance(theirs[1], Exception)
            elif mine[0] == theirs[0] == "returns":
                ok = same_objects(mine[1], theirs[1])
            elif mine[0] == theirs[0] == "raises":
                ok = same_exception(mine[1], theirs[1])
                if isinstance(theirs[1], decimal.DecimalException) or str(theirs[1]).startswith(
                        "unsupported operand"):
                    # raised by Python's own arithmetic, as there: the same message
                    ok = ok and str(mine[1]) == str(theirs[1])
            if ok:
                for t in types:
                    kinds[(t, theirs[0])] = kinds.get((t, theirs[0]), 0) + 1
            else:
                failures.append(f"root {root!r}, config {cfg!r}:\n  package:   {mine!r}"
                                f"\n  reference: {theirs!r}")
    print(f"numeric tower differential: {cases} cases, {len(failures)} differences, "
          f"by type and outcome: {dict(sorted(kinds.items()))}")
    assert not failures, (f"seed {seed}: {len(failures)} differences of {cases}:\n"
                          + "\n".join(failures[:10]))
    for t in ["Decimal", "Fraction"]:
        assert kinds.get((t, "returns"), 0) > 0, (seed, kinds)
    assert kinds.get(("Decimal", "raises"), 0) > 0, (seed, kinds)
