"""promptinclude.Index: a live index stays exact (every scan equals a fresh
scan_promptinclude_files) through random changes of its tree, from threads, and
across os.fork(); an unchanged rescan lists and reads nothing.

Seeds are random, printed, and set by PROMPTINCLUDE_PY_INDEX_SEED; the number of
random changes by PROMPTINCLUDE_PY_INDEX_STEPS (default 300).
"""

import os
import random
import shutil
import signal
import sys
import threading
import time

import pytest

import promptinclude
from promptinclude import DEFAULT_CONFIG, Index, scan_promptinclude_files

STEPS = int(os.environ.get("PROMPTINCLUDE_PY_INDEX_STEPS") or 300)

#: The plugin's defaults, and small limits (depth, cropping, count and total budget).
CONFIGS = [
    dict(DEFAULT_CONFIG),
    dict(name_pattern="*.md", max_depth=3, max_file_tokens=40, max_file_count=6,
         max_total_tokens=300, gitignore="build/\n*.skip.md\n!keep.skip.md\n"),
]

WORDS = ["use tabs", "prefer small functions", "no emoji", "日本語のテキスト", "🙂", "x" * 40,
         "\n", "   ", "é", "\x00", "run the tests"]
DIR_NAMES = ["src", "lib", "docs", "build", "node_modules", "a", "b", "deep", ".git", "ünï"]
FILE_NAMES = ["a.promptinclude.md", "b.promptinclude.md", "notes.md", "x.skip.md",
              "keep.skip.md", "z.promptinclude.md.bak", "README.md", "c.promptinclude.md"]


def seed_for(request, name):
    env = os.environ.get("PROMPTINCLUDE_PY_INDEX_SEED")
    seed = int(env) if env else random.randrange(2**32)
    line = f"{name}: PROMPTINCLUDE_PY_INDEX_SEED={seed}"
    print(line)
    request.config.promptinclude_seeds = getattr(request.config, "promptinclude_seeds", []) + [line]
    return seed


def text(rng):
    return "".join(rng.choice(WORDS) + rng.choice([" ", "\n"]) for _ in range(rng.randrange(0, 60)))


def all_dirs(root):
    out = [root]
    for dirpath, dirnames, _ in os.walk(root):
        out.extend(os.path.join(dirpath, d) for d in dirnames
                   if not os.path.islink(os.path.join(dirpath, d)))
    return out


def all_files(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        out.extend(os.path.join(dirpath, f) for f in filenames)
        out.extend(os.path.join(dirpath, d) for d in dirnames
                   if os.path.islink(os.path.join(dirpath, d)))
    return out


def has_links(root):
    """Symbolic links or files with several hard links: the index looks at those
    again on every scan (by design), so an unchanged rescan is not free there."""
    for path in all_files(root) + all_dirs(root):
        st = os.lstat(path)
        if os.path.islink(path) or (not os.path.isdir(path) and st.st_nlink > 1):
            return True
    return False


def remove_links(root):
    """Removes every symbolic link, and every hard link but one of each file."""
    seen = set()
    for path in all_files(root):
        st = os.lstat(path)
        if os.path.islink(path) or (st.st_ino, st.st_dev) in seen:
            os.unlink(path)
        seen.add((st.st_ino, st.st_dev))
    return "remove links"


def write(path, content, rng=None):
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as fh:
        fh.write(content)


def mutate(rng, root):
    """One random change of the tree under root; returns what it did (a change
    the tree refuses, such as a directory below a dangling link, is skipped)."""
    try:
        return mutate_or_raise(rng, root)
    except OSError as e:
        return f"refused: {e}"


def mutate_or_raise(rng, root):
    dirs = all_dirs(root)
    files = all_files(root)
    kind = rng.choice(["create", "create", "create", "rewrite", "rewrite", "truncate", "delete",
                       "rename", "rename", "mkdir", "mkdir", "rmdir", "movedir", "symlink",
                       "hardlink", "append", "deepdir"])
    here = rng.choice(dirs)
    if kind == "create" or (not files and kind in ("rewrite", "truncate", "delete", "rename",
                                                   "symlink", "hardlink", "append")):
        path = os.path.join(here, rng.choice(FILE_NAMES))
        if os.path.isdir(path) and not os.path.islink(path):
            return "create (a directory is there)"
        if os.path.islink(path):
            os.unlink(path)
        write(path, text(rng))
        return f"create {path}"
    victim = rng.choice(files) if files else None
    if kind == "rewrite":
        if os.path.islink(victim):
            return "rewrite (a link)"
        write(victim, text(rng))
        return f"rewrite {victim}"
    if kind == "append":
        if os.path.islink(victim):
            return "append (a link)"
        with open(victim, "a", encoding="utf-8") as fh:
            fh.write(text(rng))
        return f"append {victim}"
    if kind == "truncate":
        if os.path.islink(victim):
            return "truncate (a link)"
        os.truncate(victim, rng.randrange(0, max(1, os.path.getsize(victim) + 1)))
        return f"truncate {victim}"
    if kind == "delete":
        os.unlink(victim)
        return f"delete {victim}"
    if kind == "rename":
        dest_dir = rng.choice(dirs)
        dest = os.path.join(dest_dir, rng.choice(FILE_NAMES))
        if os.path.isdir(dest) and not os.path.islink(dest):
            return "rename (a directory is there)"
        os.replace(victim, dest)
        return f"rename {victim} -> {dest}"
    if kind in ("mkdir", "deepdir"):
        depth = 1 if kind == "mkdir" else rng.randrange(2, 6)
        path = here
        for _ in range(depth):
            path = os.path.join(path, rng.choice(DIR_NAMES))
        if os.path.lexists(path) and not os.path.isdir(path):
            return "mkdir (a file is there)"
        os.makedirs(path, exist_ok=True)
        # Files made at once after the directory (watched before listed).
        for _ in range(rng.randrange(0, 4)):
            write(os.path.join(path, rng.choice(FILE_NAMES)), text(rng))
        return f"mkdir {path}"
    if kind == "rmdir":
        if here == root:
            return "rmdir (the root)"
        shutil.rmtree(here)
        return f"rmdir {here}"
    if kind == "movedir":
        if here == root:
            return "movedir (the root)"
        dest_parent = rng.choice(dirs)
        dest = os.path.join(dest_parent, rng.choice(DIR_NAMES))
        if dest_parent == here or dest_parent.startswith(here + os.sep) or os.path.lexists(dest):
            return "movedir (into itself, or taken)"
        os.rename(here, dest)
        return f"movedir {here} -> {dest}"
    if kind == "symlink":
        path = os.path.join(here, rng.choice(FILE_NAMES + DIR_NAMES))
        if os.path.lexists(path):
            if os.path.isdir(path) and not os.path.islink(path):
                return "symlink (a directory is there)"
            os.unlink(path)
        target = rng.choice([victim, rng.choice(dirs), os.path.join(root, "missing")])
        os.symlink(target, path)
        return f"symlink {path} -> {target}"
    if kind == "hardlink":
        path = os.path.join(here, rng.choice(FILE_NAMES))
        if os.path.lexists(path) or os.path.islink(victim):
            return "hardlink (taken, or a link)"
        os.link(victim, path)
        return f"hardlink {path} -> {victim}"
    raise AssertionError(kind)


def initial_tree(rng, root):
    os.makedirs(root)
    for _ in range(40):
        mutate(rng, root)


def test_index_equals_fresh_scan_through_random_changes(request, tmp_path):
    seed = seed_for(request, "index random changes")
    rng = random.Random(seed)
    root = str(tmp_path / "tree")
    initial_tree(rng, root)
    indexes = [Index(root, **cfg) for cfg in CONFIGS]
    unchanged_checked = 0
    history = []
    for step in range(STEPS):
        # Every 25th step takes the links away: the index looks at those again on
        # every scan, so the free unchanged rescan is checked in between.
        history.append(remove_links(root) if step % 25 == 24 else mutate(rng, root))
        free_rescan = not has_links(root)
        for cfg, index in zip(CONFIGS, indexes):
            fresh = scan_promptinclude_files(root, **cfg)
            got = index.scan()
            assert got == fresh, (f"seed {seed}, step {step}, config {cfg['name_pattern']}: "
                                  f"index != fresh scan after:\n" + "\n".join(history[-5:]))
            again = index.scan()
            assert again == fresh, (seed, step)
            if free_rescan:
                stats = index.stats()
                assert stats["last_dirs_listed"] == 0 and stats["last_files_read"] == 0, \
                    (seed, step, stats)
                unchanged_checked += 1
        # The shim's entry point agrees too.
        assert promptinclude.scan_promptinclude_files_indexed(root, **CONFIGS[0]) == \
            scan_promptinclude_files(root, **CONFIGS[0]), (seed, step)
    stats = indexes[0].stats()
    print(f"{STEPS} changes; unchanged rescans checked free: {unchanged_checked}; stats {stats}")
    assert stats["scans"] == 2 * STEPS
    assert unchanged_checked > 0 and stats["unchanged"] > 0, (seed, unchanged_checked, stats)


def test_unchanged_rescan_lists_and_reads_nothing(tmp_path):
    root = tmp_path / "repo"
    for d in ["", "src", "src/a", "docs", "node_modules/x"]:
        (root / d).mkdir(parents=True, exist_ok=True)
        (root / d / "r.promptinclude.md").write_text(f"rules of {d or 'the root'}\n")
        (root / d / "code.py").write_text("x = 1\n")
    index = Index(root, **DEFAULT_CONFIG)
    first = index.scan()
    assert first == scan_promptinclude_files(str(root), **DEFAULT_CONFIG)
    assert index.stats()["last_dirs_listed"] > 0
    for _ in range(3):
        assert index.scan() == first
        stats = index.stats()
        assert stats["last_dirs_listed"] == 0 and stats["last_files_read"] == 0, stats
    assert stats["unchanged"] == 3 and stats["scans"] == 4
    assert set(stats["fallbacks"]) == {"overflow", "watch_limit", "remote_fs", "links",
                                       "root_changed", "mounts", "config_changed", "forked",
                                       "deep_tree", "unsupported"}
    (root / "src" / "a" / "r.promptinclude.md").write_text("changed\n")
    assert index.scan() == scan_promptinclude_files(str(root), **DEFAULT_CONFIG)
    assert index.stats()["last_files_read"] >= 1


def test_links_that_are_not_rule_files_cost_nothing(tmp_path):
    """`CLAUDE.md -> AGENTS.md`, a licence link, a link to a directory: no
    answer depends on them, so an unchanged rescan lists nothing, and
    ``stats()["links"]`` says so; a rule-file link is ``stat``-ed instead."""
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "r.promptinclude.md").write_text("rules\n")
    (root / "AGENTS.md").write_text("shared\n")
    os.symlink("AGENTS.md", root / "CLAUDE.md")
    os.symlink("../AGENTS.md", root / "src" / "LICENSE")
    os.symlink("src", root / "code")
    os.symlink("../AGENTS.md", root / "src" / "shared.promptinclude.md")
    time.sleep(0.3)  # what was written just now cannot be vouched for by its times
    index = Index(root, **DEFAULT_CONFIG)
    first = index.scan()
    assert first == scan_promptinclude_files(str(root), **DEFAULT_CONFIG)
    assert index.scan() == first
    stats = index.stats()
    assert stats["last_dirs_listed"] == 0 and stats["last_files_read"] == 0, stats
    assert stats["links_checked"] == 1, stats
    links = stats["links"]
    assert links["free"] == 3, links
    assert links["stat"] == [str(root / "src" / "shared.promptinclude.md")], links
    assert links["stat_and_read"] == [] and links["listed"] == [], links


def test_index_checks_values_as_the_drop_in(tmp_path):
    cases = [dict(max_depth="3"), dict(name_pattern=3), dict(gitignore=["x"]),
             dict(gitignore="[z-a]"), dict(max_file_count=1j)]
    for cfg in cases:
        with pytest.raises(Exception) as fresh:
            scan_promptinclude_files(str(tmp_path), **cfg)
        with pytest.raises(type(fresh.value)):
            Index(str(tmp_path), **cfg)
        with pytest.raises(type(fresh.value)):
            promptinclude.scan_promptinclude_files_indexed(str(tmp_path), **cfg)
    with pytest.raises(TypeError):
        Index(b"/tmp")
    # Roots that are not directories, or no file name at all: empty, as fresh.
    for root in [str(tmp_path / "missing"), "/x\ud800", str(tmp_path / "f")]:
        (tmp_path / "f").write_text("x")
        assert Index(root).scan() == scan_promptinclude_files(root) == \
            {"files": [], "skipped_count": 0}


def test_index_spellings_and_other_numbers(tmp_path, monkeypatch):
    from decimal import Decimal
    from fractions import Fraction

    root = tmp_path / "r"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.promptinclude.md").write_text("word " * 300)
    (root / "b.promptinclude.md").write_text("rule\n")
    monkeypatch.chdir(tmp_path)
    for spelling in ["r", "./r/", "r/sub/..", str(root) + "//", root]:
        for cfg in [{}, dict(max_file_tokens=10.5), dict(max_total_tokens=True),
                    dict(max_depth=Decimal(2), max_file_tokens=Fraction(7, 2))]:
            fresh = scan_promptinclude_files(spelling, **cfg)
            index = Index(spelling, **cfg)
            assert index.scan() == fresh == index.scan(), (spelling, cfg)
            assert promptinclude.scan_promptinclude_files_indexed(spelling, **cfg) == fresh
    stats = Index(root, max_depth=Decimal(3))
    stats.scan()
    assert stats.stats()["fallbacks"]["unsupported"] == 1


def test_threads_share_an_index(request, tmp_path):
    seed = seed_for(request, "index threads")
    rng = random.Random(seed)
    root = str(tmp_path / "tree")
    initial_tree(rng, root)
    cfg = CONFIGS[1]
    index = Index(root, **cfg)
    stop = threading.Event()
    errors = []
    scans = [0] * 8

    def scanner(i):
        try:
            while not stop.is_set():
                index.scan()
                promptinclude.scan_promptinclude_files_indexed(root, **cfg)
                scans[i] += 1
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    def mutator():
        mrng = random.Random(rng.randrange(2**32))
        try:
            for _ in range(150):
                mutate(mrng, root)
                time.sleep(0.002)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=scanner, args=(i,)) for i in range(8)]
    changer = threading.Thread(target=mutator)
    for t in threads:
        t.start()
    changer.start()
    changer.join()
    stop.set()
    for t in threads:
        t.join()
    assert not errors, (seed, errors)
    assert all(scans), scans
    fresh = scan_promptinclude_files(root, **cfg)
    after = [None] * 8

    def last(i):
        after[i] = (index.scan(), promptinclude.scan_promptinclude_files_indexed(root, **cfg))

    threads = [threading.Thread(target=last, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(a == (fresh, fresh) for a in after), seed
    print(f"scans per thread while changing: {scans}")


def fork_child(body):
    """Runs body() in a forked child; its exit code (2: it raised; killed after 60 s)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        code = 2
        try:
            signal.alarm(60)
            code = body()
        except BaseException as e:  # noqa: BLE001
            print(f"child raised {type(e).__name__}: {e}", file=sys.stderr)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_fork(request, tmp_path):
    seed = seed_for(request, "index fork")
    rng = random.Random(seed)
    root = str(tmp_path / "tree")
    initial_tree(rng, root)
    cfg = CONFIGS[0]
    index = Index(root, **cfg)
    assert index.scan() == scan_promptinclude_files(root, **cfg)
    promptinclude.scan_promptinclude_files_indexed(root, **cfg)

    def child():
        crng = random.Random(seed + 1)
        for _ in range(20):
            mutate(crng, root)
            if index.scan() != scan_promptinclude_files(root, **cfg):
                return 3
            if promptinclude.scan_promptinclude_files_indexed(root, **cfg) != \
                    scan_promptinclude_files(root, **cfg):
                return 4
        return 0 if index.stats()["fallbacks"]["forked"] == 1 else 5

    assert fork_child(child) == 0, seed
    # The child's changes are the parent's too: its index saw them.
    fresh = scan_promptinclude_files(root, **cfg)
    assert index.scan() == fresh, seed
    assert promptinclude.scan_promptinclude_files_indexed(root, **cfg) == fresh
    assert index.stats()["fallbacks"]["forked"] == 0
    # And it goes on noticing changes (the child did not take its watches away).
    for _ in range(20):
        mutate(rng, root)
        assert index.scan() == scan_promptinclude_files(root, **cfg), seed


def test_fork_while_another_thread_scans(tmp_path):
    """A thread of the parent holds the index's lock (mid-scan) at the fork: the
    child neither waits for it for ever nor answers wrongly."""
    root = tmp_path / "tree"
    for d in range(600):
        sub = root / f"d{d % 30}" / f"e{d}"
        sub.mkdir(parents=True)
        # A link in every directory: each scan lists them all (a long scan).
        os.symlink("/nonexistent", sub / "link")
        if d % 20 == 0:
            (sub / "r.promptinclude.md").write_text(f"rule {d}\n")
    index = Index(root)
    index.scan()
    stop = threading.Event()

    def busy():
        while not stop.is_set():
            index.scan()

    thread = threading.Thread(target=busy)
    thread.start()
    outcomes = []
    try:
        for i in range(8):
            time.sleep(0.01 + 0.003 * i)

            def child():
                (root / "d1" / f"new{os.getpid()}.promptinclude.md").write_text("new\n")
                if index.scan() != scan_promptinclude_files(str(root)):
                    return 3
                # 0: the index went on (forked counted); 1: it was made again.
                return 0 if index.stats()["fallbacks"]["forked"] == 1 else 1

            outcomes.append(fork_child(child))
    finally:
        stop.set()
        thread.join()
    print(f"children: {outcomes} (0: index kept, 1: made again after a fork mid-scan)")
    assert all(code in (0, 1) for code in outcomes), outcomes
    assert index.scan() == scan_promptinclude_files(str(root))


def test_indexed_table_is_bounded(tmp_path):
    roots = []
    for i in range(promptinclude.INDEXES_MAX + 8):
        r = tmp_path / f"r{i}"
        r.mkdir()
        (r / "a.promptinclude.md").write_text(f"root {i}\n")
        roots.append(str(r))
    for r in roots + roots[:4]:
        assert promptinclude.scan_promptinclude_files_indexed(r) == scan_promptinclude_files(r)
    assert len(promptinclude._INDEXES) <= promptinclude.INDEXES_MAX
