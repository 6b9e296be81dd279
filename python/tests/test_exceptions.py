"""Where the reference raises, we raise the same exception type; where it
returns, we return the same value (compared with the real reference, or the
project oracle where it is absent: see conftest.py)."""

import decimal
import math
import re
from decimal import Decimal
from fractions import Fraction

import pytest

import promptinclude


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "a.promptinclude.md").write_text("word " * 3000)
    (tmp_path / "b.promptinclude.md").write_text("short rule")
    return str(tmp_path)


CASES = [
    ({"max_depth": "10"}, TypeError),
    ({"max_depth": None}, TypeError),
    ({"max_file_tokens": [1]}, TypeError),
    ({"max_total_tokens": {}}, TypeError),
    ({"max_file_count": b"x"}, TypeError),
    ({"name_pattern": 5}, TypeError),
    ({"name_pattern": None}, TypeError),
    ({"name_pattern": b"*.md"}, TypeError),
    ({"gitignore": ["a"]}, AttributeError),
    ({"gitignore": 5}, AttributeError),
    ({"gitignore": math.nan}, AttributeError),
    ({"gitignore": b"x"}, TypeError),
    ({"gitignore": "!"}, ValueError),
    ({"gitignore": "a\\"}, ValueError),
    ({"gitignore": "[z-a]"}, re.error),
    ({"max_file_tokens": -math.inf}, OverflowError),  # int(-inf) while cropping
    ({"max_file_tokens": -1e308}, OverflowError),
    # Python's numeric tower: the reference's own arithmetic raises.
    ({"max_file_tokens": Decimal(5)}, TypeError),  # Decimal * 0.8 while cropping
    ({"max_total_tokens": Decimal(100)}, TypeError),  # the same, fitting a part
    ({"max_depth": Decimal("NaN")}, decimal.InvalidOperation),  # 0 >= NaN
    ({"max_file_count": Decimal("sNaN")}, decimal.InvalidOperation),
    ({"max_file_tokens": Decimal("NaN")}, decimal.InvalidOperation),  # min(n, NaN)
    ({"max_total_tokens": Decimal("-NaN")}, decimal.InvalidOperation),
    ({"max_depth": 1j}, TypeError),
    ({"max_file_count": complex(5)}, TypeError),
]


@pytest.mark.parametrize("cfg,exc", CASES, ids=[repr(c) for c, _ in CASES])
def test_raises_like_reference(reference, tree, cfg, exc):
    with pytest.raises(Exception) as theirs:
        reference(tree, **cfg)
    with pytest.raises(exc) as mine:
        promptinclude.scan_promptinclude_files(tree, **cfg)
    assert isinstance(theirs.value, type(mine.value)), (theirs.value, mine.value)
    assert str(mine.value)
    if any(isinstance(v, (Decimal, Fraction)) for v in cfg.values()):
        # Raised by Python's own arithmetic, as in the reference: the same message.
        assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("cfg", [{"gitignore": 0}, {"gitignore": None}, {"gitignore": []},
                                 {"gitignore": b"  "}, {"gitignore": False},
                                 {"max_depth": True}, {"max_file_count": 2.5},
                                 {"max_total_tokens": 10**40}, {"max_file_tokens": -1},
                                 {"max_file_tokens": math.nan}, {"max_total_tokens": math.inf},
                                 {"max_depth": -math.inf},
                                 # Python's numeric tower (issue #21, item 9)
                                 {"max_depth": Decimal(2)}, {"max_file_count": Fraction(3)},
                                 {"max_depth": Fraction(1, 3)}, {"max_depth": Decimal("0.5")},
                                 {"max_depth": Decimal("-Infinity")},
                                 {"max_depth": Decimal("1E+400")},
                                 {"max_file_count": Decimal(1)}, {"max_file_count": Fraction(1, 2)},
                                 {"max_file_count": Decimal("Infinity")},
                                 {"max_file_tokens": Fraction(7, 2)},
                                 {"max_file_tokens": Fraction(-10**50, 7)},
                                 {"max_file_tokens": Decimal("Infinity")},
                                 {"max_file_tokens": Decimal(10**6)},
                                 {"max_total_tokens": Fraction(1000, 3)},
                                 {"max_total_tokens": Decimal("Infinity")},
                                 {"max_total_tokens": Decimal(30)},  # skipped: no arithmetic
                                 {"max_total_tokens": Decimal("1E+400")},
                                 {"max_total_tokens": Fraction(10**40 + 1, 10**37)},
                                 {"max_file_tokens": Fraction(1999, 2), "max_total_tokens":
                                  Decimal("1.5E+3"), "max_file_count": Fraction(5, 2),
                                  "max_depth": Decimal(7)}],
                         ids=repr)
def test_odd_values_return_like_reference(reference, tree, cfg):
    mine = promptinclude.scan_promptinclude_files(tree, **cfg)
    assert mine == reference(tree, **cfg)
    assert all(type(f["token_count"]) is int for f in mine["files"])


@pytest.mark.parametrize("cfg", [{"max_depth": Decimal("NaN")}, {"max_file_count": Decimal("NaN")},
                                 {"max_file_tokens": Decimal(5)},
                                 {"max_total_tokens": Decimal(100)}], ids=repr)
def test_numbers_raise_only_where_the_reference_uses_them(reference, tmp_path, cfg):
    """A missing root, an empty one: the reference never compares the value (but
    it does compare max_depth with the depth of an empty root)."""
    (tmp_path / "empty").mkdir()
    roots = [str(tmp_path / "missing")]
    if "max_depth" not in cfg:
        roots.append(str(tmp_path / "empty"))
    for root in roots:
        assert promptinclude.scan_promptinclude_files(root, **cfg) == reference(root, **cfg) \
            == {"files": [], "skipped_count": 0}


def same_outcome(mine, theirs, root, cfg):
    def run(fn):
        try:
            return ("returns", fn(root, **cfg))
        except Exception as e:  # noqa: BLE001
            return ("raises", type(e), str(e))

    assert run(mine) == run(theirs), cfg


def test_numbers_under_the_callers_decimal_context(reference, tree):
    """Decimal arithmetic runs under the caller's context, as in the reference."""
    mine = promptinclude.scan_promptinclude_files
    with decimal.localcontext() as ctx:
        ctx.traps[decimal.InvalidOperation] = False
        for cfg in [{"max_depth": Decimal("NaN")}, {"max_file_count": Decimal("NaN")},
                    {"max_total_tokens": Decimal("NaN")}, {"max_file_tokens": Decimal("NaN")}]:
            same_outcome(mine, reference, tree, cfg)
    for prec in [1, 2, 3, 4, 28]:
        with decimal.localcontext() as ctx:
            ctx.prec = prec  # max_total_tokens - used - path_tokens rounds
            for total in ["3000.7", "3071", "3079", "3081", "3099", "65", "80"]:
                for tokens in [Decimal(20000), 20000, Fraction(3, 2)]:
                    cfg = {"max_total_tokens": Decimal(total), "max_file_tokens": tokens}
                    same_outcome(mine, reference, tree, cfg)
    total = Decimal("5000.333333333333333333333333333")  # 31 digits: differences round
    with decimal.localcontext() as ctx:
        ctx.traps[decimal.Inexact] = True  # ... and raise
        same_outcome(mine, reference, tree, {"max_total_tokens": total})


def test_scan_many_takes_the_numeric_tower(reference, tree, tmp_path):
    cfg = {"max_depth": Decimal(2), "max_file_count": Fraction(3), "max_total_tokens": Fraction(999, 2)}
    roots = [tree, str(tmp_path / "missing"), "/nonexistent\ud800"]
    assert promptinclude.scan_many(roots, cfg) == [reference(r, **cfg) for r in roots]
    with pytest.raises(ValueError):
        promptinclude.scan_many(roots, {"max_depht": Decimal(2)})
    with pytest.raises(TypeError):
        promptinclude.scan_many(roots, {"max_depth": Decimal(2), "max_file_count": "3"})


@pytest.mark.parametrize("root", ["/nonexistent\ud800", "rel\udfff/x", "\ud800",
                                  "/nonexistent\udcff"])
def test_a_root_no_file_name_can_have_is_empty(reference, root):
    """os.path.isdir is false for it (UnicodeEncodeError is a ValueError): empty."""
    for cfg in [{}, {"max_depth": Decimal(3)}, {"max_file_count": Fraction(1, 2)}]:
        assert promptinclude.scan_promptinclude_files(root, **cfg) == reference(root, **cfg) \
            == {"files": [], "skipped_count": 0}


def test_type_messages_read_well(tree):
    with pytest.raises(TypeError) as e:
        promptinclude.scan_promptinclude_files(tree, name_pattern=["*"])
    assert str(e.value) == ("name_pattern must be a str, not list (['*']): the reference raises "
                            "TypeError in fnmatch")
    with pytest.raises(TypeError) as e:
        promptinclude.scan_promptinclude_files(tree, max_depth=[1])
    assert str(e.value).startswith("max_depth must be a number (int, float, bool, or another of "
                                   "Python's numbers such as Decimal or Fraction), not list ([1])")


def test_bytes_root_is_a_type_error(tree):
    with pytest.raises(TypeError):
        promptinclude.scan_promptinclude_files(tree.encode())


def test_keyword_only(tree):
    with pytest.raises(TypeError):
        promptinclude.scan_promptinclude_files(tree, "*.md")  # type: ignore[misc]
