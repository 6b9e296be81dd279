"""Where the reference raises, we raise the same exception type."""

import math
import re

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
]


@pytest.mark.parametrize("cfg,exc", CASES, ids=[repr(c) for c, _ in CASES])
def test_raises_like_reference(reference, tree, cfg, exc):
    with pytest.raises(Exception) as theirs:
        reference(tree, **cfg)
    with pytest.raises(exc) as mine:
        promptinclude.scan_promptinclude_files(tree, **cfg)
    assert isinstance(theirs.value, type(mine.value)), (theirs.value, mine.value)
    assert str(mine.value)


@pytest.mark.parametrize("cfg", [{"gitignore": 0}, {"gitignore": None}, {"gitignore": []},
                                 {"gitignore": b"  "}, {"gitignore": False},
                                 {"max_depth": True}, {"max_file_count": 2.5},
                                 {"max_total_tokens": 10**40}, {"max_file_tokens": -1},
                                 {"max_file_tokens": math.nan}, {"max_total_tokens": math.inf},
                                 {"max_depth": -math.inf}])
def test_odd_values_return_like_reference(reference, tree, cfg):
    assert promptinclude.scan_promptinclude_files(tree, **cfg) == reference(tree, **cfg)


def test_bytes_root_is_a_type_error(tree):
    with pytest.raises(TypeError):
        promptinclude.scan_promptinclude_files(tree.encode())


def test_keyword_only(tree):
    with pytest.raises(TypeError):
        promptinclude.scan_promptinclude_files(tree, "*.md")  # type: ignore[misc]
