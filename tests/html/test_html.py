"""`promptinclude audit --html` in a real browser (run by scripts/test-html).

Needs PROMPTINCLUDE_BIN (the binary), Debian's chromium and
/usr/bin/chromedriver, and selenium.
"""

import html
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

REPO = Path(__file__).resolve().parents[2]
BIN = os.environ["PROMPTINCLUDE_BIN"]
SHOTS = Path(os.environ.get("PROMPTINCLUDE_SCREENSHOTS", REPO / "target" / "html-screenshots"))
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
FIXTURES = {
    # name: (roots, extra audit options)
    "example": (["fixtures/trees/example"], ["--max-total-tokens", "2000"]),
    "quirks": (["fixtures/trees/quirks"], []),
    "both": (["fixtures/trees/example", "fixtures/trees/quirks"], []),
}
TITLE_RE = re.compile(r"^promptinclude audit: \d+ roots?$")


def audit(roots, options, html_file=None, content=False, cwd=REPO):
    """(JSON records, exit status) of `audit --json`, also writing html_file."""
    cmd = [BIN, "audit", "--json", *options]
    if html_file:
        cmd += ["--html", str(html_file)]
        if content:
            cmd.append("--html-include-content")
    proc = subprocess.run(cmd + list(roots), cwd=cwd, capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def dump_dom(path):
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            ["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", path.as_uri()],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def tree_dirs(root):
    """Every directory at or below `root`, as the audit walks them: links
    not followed, `.git` not entered."""
    out = [root]
    for entry in os.scandir(root):
        if entry.is_dir(follow_symlinks=False) and entry.name != ".git":
            out.extend(tree_dirs(entry.path))
    return out


def chain_dirs(chain, dirs):
    """The directories of `dirs` an audit chain holds: those whose nearest
    `subtrees` or `except` entry at or above them is in `subtrees`
    (docs/audit-schema.md)."""
    subtrees, except_ = set(chain["subtrees"]), set(chain["except"])

    def holds(d):
        while True:
            if d in subtrees:
                return True
            if d in except_ or os.path.dirname(d) == d:
                return False
            d = os.path.dirname(d)

    return [d for d in dirs if holds(d)]


def relative(path, abs_root):
    prefix = abs_root.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) and len(path) > len(prefix) else path


def text(fragment):
    return html.unescape(re.sub(r"<[^>]*>", "", fragment))


def sections(dom):
    """{id: section html} of the dumped DOM."""
    out = {}
    for m in re.finditer(r'<section class="root" id="(r\d+)"[^>]*>(.*?)</section>', dom, re.S):
        out[m.group(1)] = m.group(2)
    return out


def file_rows(section):
    table = re.search(r'<table class="sortable files">.*?<tbody>(.*?)</tbody>', section, re.S)
    if not table:
        return []
    rows = []
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(1), re.S):
        rows.append([text(td) for td in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)])
    return rows


def expected_rows(record):
    rows = []
    for f in record["files"]:
        included = f["status"] in ("ok", "cropped")
        rows.append([
            f["status"],
            "-" if f["tokens_counted"] is None else str(f["tokens_counted"]),
            str(f["tokens_included"]) if included else "-",
            f"{f['budget_share'] * 100:.1f}%" if included else "-",
            relative(f["path"], record["abs_root"]),
        ])
    return rows


@pytest.fixture(scope="session")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    profile = tempfile.TemporaryDirectory()
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={profile.name}", "--window-size=1200,1600"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    yield driver
    driver.quit()
    profile.cleanup()


@pytest.fixture
def tmp(tmp_path):
    return tmp_path


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_dom_holds_the_json_numbers(name, tmp, browser):
    roots, options = FIXTURES[name]
    page = tmp / f"{name}.html"
    records = audit(roots, options, page)
    dom = dump_dom(page)
    roots_json = [r for r in records if r["type"] == "root"]
    summary = records[-1]
    assert summary["type"] == "summary"
    found = sections(dom)
    assert len(found) == len(roots_json)
    for i, record in enumerate(roots_json):
        section = found[f"r{i}"]
        assert text(re.search(r"<h2>(.*?)</h2>", section, re.S).group(1)) == record["root"]
        assert file_rows(section) == expected_rows(record)
        t = record["totals"]
        assert f"budget used <b>{t['budget_used']}</b> of {record['config']['max_total_tokens']}" in section
        warnings = [text(li) for li in re.findall(r"<li>(.*?)</li>", section, re.S)]
        assert len(warnings) == len(record["warnings"])
        for shown, w in zip(warnings, record["warnings"]):
            assert shown.startswith(w["kind"] + " "), (shown, w)
            assert shown.endswith(w["message"]), (shown, w)
    stats = dict(
        (text(dt), text(dd))
        for dt, dd in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", dom, re.S)
    )
    assert stats["roots"] == str(summary["roots"])
    assert stats["rule files"] == str(summary["rule_files"])
    assert stats["tokens included"] == str(summary["tokens_included"])
    assert stats["tokens counted"] == str(summary["tokens_counted"])
    assert stats["warnings"] == str(summary["warnings"])
    for kind, count in summary["warnings_by_kind"].items():
        assert re.search(
            rf"<th scope=\"row\"><code>{kind}</code></th><td class=\"num\">{count}</td>", dom
        ), kind
    # The page's script ran under its CSP (it shows the controls).
    assert '<div id="controls">' in dom
    # Screenshot for people to look at.
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.get(page.as_uri())
    browser.save_screenshot(str(SHOTS / f"{name}.png"))


HOSTILE_TEXT = (
    "<script>document.title='pwned'</script>\n"
    "<img src=x onerror=\"document.title='pwned'\">\n"
    "</textarea><svg onload=\"document.title='pwned'\"></svg>\n"
    "' \" & {{ include \"x<script>.md\" }}\n"
)


def hostile_tree(tmp):
    root = tmp / "<svg onload=document.title='pwned'>"
    root.mkdir()
    names = [
        "<img src=x onerror=document.title='pwned'>.promptinclude.md",
        # A directory named "<" makes the relative path start with "</textarea>".
        "</textarea><script>document.title='pwned'<.promptinclude.md",
        "\" onmouseover=\"document.title='pwned'.promptinclude.md",
        # A bidi override would show this as "b" + "dm.txt.promptinclude.md" reversed.
        "b\u202edm.txt.promptinclude.md",
    ]
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(HOSTILE_TEXT)
    return root, names


def test_hostile_names_and_contents_stay_text(tmp, browser):
    root, names = hostile_tree(tmp)
    page = tmp / "hostile.html"
    records = audit([str(root)], [], page, content=True)
    assert records[0]["totals"]["rule_files"] == 4
    dom = dump_dom(page)
    title = re.search(r"<title>(.*?)</title>", dom, re.S).group(1)
    assert TITLE_RE.match(title), title
    assert "pwned" not in title
    body = dom[dom.index("<body"):]
    for tag in ("<img", "<svg onload", "<textarea", "<script>document"):
        assert tag not in body, tag
    assert body.count("<script>") == 1  # the page's own
    # Names are shown with bidi controls made visible (crates/visible); the
    # rendered section (content) is shown as it is, escaped for HTML only.
    shown = [n.replace("\u202e", "\\u{202e}") for n in names]
    outside_content = re.sub(r'<details class="content">.*?</details>', "", body, flags=re.S)
    assert "\u202e" not in outside_content
    for name in shown:
        assert name in text(body)
    # Also live in the browser, with the section expanded.
    browser.get(page.as_uri())
    assert browser.title == title
    assert browser.execute_script(
        "return document.querySelectorAll('img,textarea,[onerror],[onload],[onmouseover],body script ~ script').length"
    ) == 0
    browser.find_element(By.CSS_SELECTOR, "#r0 details summary").click()
    pre = browser.find_element(By.CSS_SELECTOR, "#r0 details pre")
    assert "<script>document.title='pwned'</script>" in pre.text
    assert browser.title == title
    cells = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#r0 table.files td.path")]
    assert sorted(cells) == sorted(shown)


def visible_rows(browser, root_id, column):
    return [
        tr.find_elements(By.TAG_NAME, "td")[column].text
        for tr in browser.find_elements(By.CSS_SELECTOR, f"#{root_id} table.files tbody tr")
        if tr.is_displayed()
    ]


def num(cell):
    return -1 if cell == "-" else float(cell.rstrip("%"))


def test_sort_filter_expand(tmp, browser):
    roots, options = FIXTURES["both"]
    page = tmp / "both.html"
    audit(roots, options, page, content=True)
    browser.get(page.as_uri())
    info = browser.find_element(By.ID, "pinfo")
    assert info.text.startswith("2 of 2 roots")
    # Sorting: counted, ascending then descending.
    header = browser.find_element(By.XPATH, "//section[@id='r1']//table//th[2]")
    header.click()
    counted = [num(c) for c in visible_rows(browser, "r1", 1)]
    assert counted == sorted(counted) and len(counted) > 3
    assert header.get_attribute("aria-sort") == "ascending"
    header.click()
    counted = [num(c) for c in visible_rows(browser, "r1", 1)]
    assert counted == sorted(counted, reverse=True)
    # Sorting the file column by name.
    browser.find_element(By.XPATH, "//section[@id='r0']//table//th[5]").click()
    paths = visible_rows(browser, "r0", 4)
    assert paths == sorted(paths, key=str.lower)
    # Filtering by a file name: only that root and that row stay.
    search = browser.find_element(By.ID, "q")
    search.send_keys("billing")
    WebDriverWait(browser, 5).until(lambda b: not b.find_element(By.ID, "r1").is_displayed())
    assert browser.find_element(By.ID, "pinfo").text.startswith("1 of 2")
    assert browser.find_element(By.ID, "r0").is_displayed()
    assert not browser.find_element(By.ID, "r1").is_displayed()
    assert visible_rows(browser, "r0", 4) == ["services/billing/money.promptinclude.md"]
    # By a root name: the whole root.
    search.clear()
    search.send_keys("quirks")
    WebDriverWait(browser, 5).until(lambda b: b.find_element(By.ID, "r1").is_displayed())
    assert browser.find_element(By.ID, "pinfo").text.startswith("1 of 2")
    assert not browser.find_element(By.ID, "r0").is_displayed()
    assert len(visible_rows(browser, "r1", 4)) == 19
    search.clear()
    search.send_keys("x")
    search.send_keys("\b")
    WebDriverWait(browser, 5).until(lambda b: b.find_element(By.ID, "pinfo").text.startswith("2 of 2"))
    # Expanding: the section is exactly what `render` prints.
    details = browser.find_element(By.CSS_SELECTOR, "#r0 details")
    assert details.get_attribute("open") is None
    details.find_element(By.TAG_NAME, "summary").click()
    assert details.get_attribute("open") is not None
    rendered = subprocess.run(
        [BIN, "render", *options, roots[0]], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    shown = browser.execute_script("return document.querySelector('#r0 details pre').textContent")
    assert shown == rendered
    # "Expand sections" opens the rest.
    browser.find_element(By.ID, "expand").click()
    assert browser.execute_script(
        "return [...document.querySelectorAll('details')].every(d => d.open)"
    )


def test_without_content_no_rule_file_text(tmp):
    root, _ = hostile_tree(tmp)
    page = tmp / "plain.html"
    audit([str(root)], [], page)
    data = page.read_text()
    assert "<details" not in data
    assert "document.title=&#39;pwned&#39;&lt;/script" not in data


def test_ten_thousand_roots(tmp, browser):
    base = tmp / "many"
    roots = []
    for i in range(10_000):
        root = base / f"repo-{i:05d}"
        (root / "docs").mkdir(parents=True)
        (root / "project.promptinclude.md").write_text(f"Project {i}: run the tests before committing.\n")
        # Every seventh root has a warning (a host placeholder).
        style = "Prefer small functions.\n" * (1 + i % 5) + ("Ask {{user}}.\n" if i % 7 == 0 else "")
        (root / "docs" / "style.promptinclude.md").write_text(style)
        roots.append(root.name)
    roots_file = tmp / "roots.txt"
    roots_file.write_text("\n".join(roots) + "\n")
    page = tmp / "many.html"

    def timed(cmd):
        best = None
        for _ in range(2):
            start = time.perf_counter()
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=base)
            elapsed = time.perf_counter() - start
            best = elapsed if best is None else min(best, elapsed)
        return best

    base_cmd = [BIN, "audit", "--json", "--roots-from", str(roots_file)]
    json_time = timed(base_cmd)
    html_time = timed(base_cmd + ["--html", str(page)])
    size = page.stat().st_size
    browser.get("about:blank")
    start = time.perf_counter()
    browser.get(page.as_uri())
    wall = time.perf_counter() - start
    timing = browser.execute_script(
        "var t=performance.getEntriesByType('navigation')[0];"
        "return [t.domContentLoadedEventEnd, t.loadEventEnd];"
    )
    dom_ready_ms = timing[0]
    print(
        f"\n10,000 roots: audit --json {json_time:.2f} s, with --html {html_time:.2f} s "
        f"(ratio {html_time / json_time:.2f}); page {size} bytes = {size / 10_000:.0f} bytes/root; "
        f"DOM ready {dom_ready_ms:.0f} ms, load {timing[1]:.0f} ms, get() {wall:.2f} s"
    )
    # The times are printed, not asserted: on a shared machine they move with
    # the load (a CI run saw DOM ready at 4.3 s while other builds ran), and
    # speed targets belong in the benchmarks. The size is exact.
    assert size / 10_000 < 3000
    # Usable: one page of roots shown, paging works, filtering finds a root.
    info = browser.find_element(By.ID, "pinfo")
    assert info.text == "10000 of 10000 roots \u00b7 page 1 of 200"
    assert browser.execute_script("return document.querySelectorAll('section.root:not([hidden])').length") == 50
    browser.find_element(By.ID, "next").click()
    assert browser.find_element(By.ID, "r50").is_displayed()
    assert not browser.find_element(By.ID, "r0").is_displayed()
    search = browser.find_element(By.ID, "q")
    search.send_keys("repo-09876")
    WebDriverWait(browser, 10).until(lambda b: b.find_element(By.ID, "pinfo").text.startswith("1 of 10000"))
    assert browser.find_element(By.ID, "r9876").is_displayed()
    # A link from the overview reveals its root even off the current page.
    search.clear()
    search.send_keys("x")
    search.send_keys("\b")
    WebDriverWait(browser, 10).until(lambda b: b.find_element(By.ID, "pinfo").text.startswith("10000 of"))
    link = browser.find_element(By.CSS_SELECTOR, "#by-budget tbody tr:last-child a")
    target = link.get_attribute("href").split("#")[1]
    link.click()
    WebDriverWait(browser, 5).until(lambda b: b.find_element(By.ID, target).is_displayed())


def test_narrow_dark_and_print(tmp, browser):
    roots, options = FIXTURES["both"]
    page = tmp / "narrow.html"
    audit(roots, options, page)
    try:
        browser.set_window_size(400, 900)
        browser.get(page.as_uri())
        # Nothing but the tables' own scroll boxes is wider than the window.
        assert browser.execute_script(
            "return document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        )
        SHOTS.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(SHOTS / "both-narrow.png"))
        light = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
        browser.execute_cdp_cmd(
            "Emulation.setEmulatedMedia",
            {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
        )
        dark = browser.execute_script("return getComputedStyle(document.body).backgroundColor")
        assert light != dark, (light, dark)
        browser.save_screenshot(str(SHOTS / "both-narrow-dark.png"))
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print", "features": []})
        assert not browser.find_element(By.ID, "controls").is_displayed()
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "", "features": []})
        browser.set_window_size(1200, 1600)


def agents_tree(tmp):
    """A repository every agent reads, with a Codex cut and a hostile directory name."""
    repo, home = tmp / "mono", tmp / "home"
    (repo / ".git").mkdir(parents=True)
    home.mkdir()
    files = {
        "AGENTS.md": "# Rules\n" + "Use tabs. " * 2000 + "\n",
        "CLAUDE.md": "@AGENTS.md\n",
        "GEMINI.md": "gemini rules\n",
        "services/payments/AGENTS.md": "Payments: " + "never log card numbers. " * 800 + "\n",
        "services/payments/db/.keep": "",
        "apps/web/AGENTS.md": "web\n",
        ".claude/rules/ts.md": "---\npaths: src/**/*.ts\n---\nts rules\n",
        "<img src=x onerror=document.title='pwned'>/AGENTS.md": "x\n",
    }
    for rel, body in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(body)
    return repo, home


def test_agents_view(tmp, browser):
    repo, home = agents_tree(tmp)
    page = tmp / "agents.html"
    records = audit([str(repo)], ["--agents", "all", "--home", str(home)], page)
    tree = records[0]["agents"]
    root = tree["root"]
    all_dirs = tree_dirs(root)
    rel = lambda p: relative(p, root) if p != root else "."
    browser.get(page.as_uri())
    assert browser.title != "pwned"
    assert browser.find_elements(By.CSS_SELECTOR, "img") == []
    # The summary leads the root's section, before Agent Zero's table and
    # the treemaps, and its numbers are the JSON's.
    order = browser.execute_script(
        "const s = document.querySelector('section.root');"
        "return [...s.querySelectorAll('section.digest, table.files, details.agent')].map(e => e.tagName + '.' + e.className);"
    )
    assert order[0] == "SECTION.digest" and order.index("DETAILS.agent") > 0, order
    overview = browser.execute_script(
        "const o = document.getElementById('overview'), r = document.getElementById('roots');"
        "return o.compareDocumentPosition(r) & Node.DOCUMENT_POSITION_PRECEDING;"
    )
    assert overview, "the overview of Agent Zero's files follows the roots"
    for agent in tree["agents"]:
        row = browser.find_element(By.CSS_SELECTOR, f"table.headlines tr[data-agent='{agent['agent']}']")
        cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
        dirs = sum(c["dir_count"] for c in agent["chains"])
        assert cells[1:3] == [str(len(agent["chains"])), str(dirs)], (agent["agent"], cells)
        sizes = sorted(c["bytes"] for c in agent["chains"])
        assert cells[3].startswith(f"{sizes[0]} / ") and cells[3].endswith(f" / {sizes[-1]}"), cells
    findings = {(w["kind"], w["agent"], w["cause"]) for w in tree["warnings"]}
    items = browser.find_elements(By.CSS_SELECTOR, "section.digest ul.findings li")
    assert len(items) == len(findings)
    for item in items:
        key = (item.get_attribute("data-kind"), item.get_attribute("data-agent"))
        count = int(item.find_element(By.CSS_SELECTOR, "b").text)
        cause = item.text.split("\n")[0].split(": ", 1)[1]
        assert count == sum((w["kind"], w["agent"], w["cause"]) == key + (cause,) for w in tree["warnings"]), item.text
    for agent in tree["agents"]:
        box = browser.find_element(By.CSS_SELECTOR, f"details.agent[data-agent='{agent['agent']}']")
        assert f"{agent['agent']} {agent['version']}: {len(agent['chains'])} chain" in box.text
        # The chains table holds each chain's numbers and cut points.
        rows = box.find_elements(By.CSS_SELECTOR, "table.chains tbody tr")
        assert len(rows) == len(agent["chains"])
        for row, chain in zip(rows, agent["chains"]):
            cells = [c.text for c in row.find_elements(By.TAG_NAME, "td")]
            sent = sum(f["status"] in ("loaded", "truncated") for f in chain["files"])
            assert cells[:5] == [
                rel(chain["start"]),
                str(chain["dir_count"]),
                f"{sent} of {len(chain['files'])}",
                str(chain["bytes"]),
                str(chain["tokens"]),
            ], (agent["agent"], cells, chain)
            limit = chain["limit"]
            assert cells[5].replace("\n", " ") == (f"{limit['used']} of {limit['max']}" if limit else "-")
            cuts = [f"{rel(f['path'])} at byte {f['at']} of {f['of']}" for f in chain["files"] if f["status"] == "truncated"]
            assert cells[6].split("\n") == (cuts or ["-"])
            assert ("tc" in row.get_attribute("class").split()) == bool(cuts)
        # The treemap has one rectangle per directory the agent sends
        # something from (the tree is small: none is too small to draw).
        titles = sorted(
            t.get_attribute("textContent")
            for t in box.find_elements(By.CSS_SELECTOR, "svg.treemap rect title")
        )
        # (Agent Zero's project is the whole tree: it is drawn at its root.)
        expected = sorted(
            f"{rel(d)}: {c['bytes']} bytes, {c['tokens']} tokens"
            + (f", {c['limit']['used']} of {c['limit']['max']} bytes of the limit" if c["limit"] else "")
            for c in agent["chains"]
            for d in ([root] if agent["agent"] == "agent-zero" else chain_dirs(c, all_dirs))
            if c["bytes"] > 0
        )
        assert titles == expected, agent["agent"]
        # Rectangles tile the drawing without overlapping: their areas add
        # up to the whole (each side is rounded to 0.01).
        area = browser.execute_script(
            "return [...arguments[0].querySelectorAll('svg.treemap rect')]"
            ".reduce((s, r) => s + r.width.baseVal.value * r.height.baseVal.value, 0)",
            box,
        )
        assert area <= 1000 * 160 * 1.0001
        if expected:
            assert area > 1000 * 160 * 0.99
    codex = [c for a in tree["agents"] if a["agent"] == "codex" for c in a["chains"]]
    assert any(f["status"] == "truncated" for c in codex for f in c["files"]), "the tree must cut"
    # The warnings, filtered by kind and by agent.
    warnings = tree["warnings"]
    rows = lambda: [
        (r.get_attribute("data-kind"), r.get_attribute("data-agent"))
        for r in browser.find_elements(By.CSS_SELECTOR, "table.agentwarn tbody tr")
        if r.is_displayed()
    ]
    assert len(rows()) == len(warnings)
    status = browser.find_element(By.CSS_SELECTOR, ".agents .wn")
    assert status.text == f"{len(warnings)} of {len(warnings)} warnings"
    kind = browser.find_element(By.CSS_SELECTOR, ".agents select.wk")
    agent = browser.find_element(By.CSS_SELECTOR, ".agents select.wa")
    kind.find_element(By.CSS_SELECTOR, "option[value='truncated']").click()
    assert rows() == [("truncated", "codex")] == [(w["kind"], w["agent"]) for w in warnings if w["kind"] == "truncated"]
    kind.find_element(By.CSS_SELECTOR, "option[value='']").click()
    agent.find_element(By.CSS_SELECTOR, "option[value='gemini']").click()
    gemini = [(w["kind"], w["agent"]) for w in warnings if w["agent"] == "gemini"]
    assert rows() == gemini and gemini
    assert status.text == f"{len(gemini)} of {len(warnings)} warnings"
    # Every warning's message and file are shown as text.
    agent.find_element(By.CSS_SELECTOR, "option[value='']").click()
    shown = [
        [c.text for c in r.find_elements(By.TAG_NAME, "td")]
        for r in browser.find_elements(By.CSS_SELECTOR, "table.agentwarn tbody tr")
    ]
    for cells, w in zip(shown, warnings):
        line = f":{w['line']}" if w.get("line") else ""
        assert cells[0] == w["kind"] and cells[2].replace("\n", "") == rel(w["path"]) + line
        assert cells[3] == w["message"]
    assert browser.title != "pwned"
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SHOTS / "agents.png"))
