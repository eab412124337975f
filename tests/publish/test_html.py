"""The page in a real browser: headless Chromium (Debian's `chromium`) via Playwright."""

from __future__ import annotations

import copy
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.matrix_json import load_matrix, validate_matrix, write_matrix
from harness.merge.combine import merge_cell_dirs
from harness.model import Matrix
from harness.publish.render.html import render_html
from tests.conftest import in_ci
from tests.publishing_cells import MARKUP_TEST, REGRESSED, real_cells

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        if in_ci():
            pytest.fail("headless Chromium (/usr/bin/chromium) is required in CI")
        pytest.skip("no /usr/bin/chromium on this host")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        yield chromium
        chromium.close()


class Page:
    """A page under test that records every request, dialog and script error."""

    def __init__(self, browser, url: str, origin: str = "") -> None:
        self.origin = origin  # an http origin the page may request (its own, when served)
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(url)
        self.page.wait_for_selector("body[data-ready='1']", timeout=60_000)

    def tests_shown(self) -> list[str]:
        return self.page.eval_on_selector_all("tr.test", "els => els.map(e => e.getAttribute('data-test'))")

    def wait_count(self, text: str) -> None:
        self.page.wait_for_function(
            "t => document.getElementById('match-count').textContent.startsWith(t)", arg=text, timeout=30_000
        )

    def hash_params(self) -> dict[str, str]:
        return dict(self.page.evaluate("[...new URLSearchParams(location.hash.slice(1))]"))

    def close(self) -> None:
        assert self.errors == [], f"script errors: {self.errors}"
        assert self.dialogs == [], f"a dialog fired (injected script ran?): {self.dialogs}"
        outside = [
            u for u in self.requests if not u.startswith(("file://", "data:", *([self.origin] if self.origin else [])))
        ]
        assert outside == [], f"the page requested other hosts: {outside}"
        self.page.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A page built by `harness report --format html` from real cells: cpu, cu130 (STALE), rocm (NO DATA)."""
    cells = real_cells()
    out = tmp_path_factory.mktemp("html")
    matrix = merge_cell_dirs([cells.new, cells.stale, cells.nodata])
    validate_matrix(matrix)
    write_matrix(matrix, out / "matrix.json")
    assert main(["report", str(out / "matrix.json"), "--format", "html", "-o", str(out / "index.html")]) == 0
    return out / "index.html", matrix.to_json()


def _expected(matrix: dict, rule) -> list[str]:
    with_data = [c["id"] for c in matrix["columns"] if c["state"] != "no-data"]
    return sorted(t["id"] for t in matrix["tests"] if rule(t, with_data))


BAD = {"failed", "error", "timeout", "crashed"}


def test_matrix_cells_columns_and_drilldown(browser, site, artifacts_dir: Path) -> None:
    path, matrix = site
    p = Page(browser, path.as_uri())
    page = p.page
    headers = page.eval_on_selector_all("thead th.col", "els => els.map(e => e.getAttribute('data-col'))")
    assert headers == ["cpu", "cu130", "rocm"]
    rocm = page.locator("th.col[data-col='rocm']")
    assert "NO DATA" in rocm.inner_text() and "0/" not in rocm.inner_text()
    assert "STALE" in page.locator("th.col[data-col='cu130']").inner_text()
    assert "STALE" not in page.locator("th.col[data-col='cpu']").inner_text()
    cpu_score = next(c for c in matrix["columns"] if c["id"] == "cpu")["score"]
    assert (
        f"{cpu_score['supported']}/{cpu_score['judged']} features supported"
        in page.locator("th.col[data-col='cpu']").inner_text()
    )

    # Every roll-up cell shows the matrix's state, in word and symbol; NO DATA never as a number.
    for feature in matrix["features"]:
        for column in matrix["columns"]:
            td = page.locator(f"tr.feature[data-feature='{feature['id']}'] td[data-col='{column['id']}']")
            want = "no-data" if column["state"] == "no-data" else matrix["cells"][feature["id"]][column["id"]]["state"]
            assert td.get_attribute("data-state") == want
            assert ("NO DATA" if want == "no-data" else want) in td.inner_text()

    # The environment panel of a column header.
    page.locator("th.col[data-col='cpu'] details.env summary").click()
    env_text = page.locator("th.col[data-col='cpu'] details.env").inner_text()
    env = matrix["columns"][0]["environment"]
    for value in (env["torch"], env["suite_sha"], env["runner"], env["started_at"]):
        assert value in env_text

    # A row opens to its tests; the markup-named test is shown as text.
    page.locator("tr.feature[data-feature='alpha'] button.toggle").click()
    shown = p.tests_shown()
    assert MARKUP_TEST in shown and REGRESSED in shown
    assert page.locator("tr.test th", has_text="<img src=x onerror=alert(1)>").count() == 1
    assert page.evaluate("document.querySelectorAll('img').length") == 0

    # A cell opens to outcome, message and trace.
    page.locator(f"tr.test[data-test='{REGRESSED}'] td[data-col='cpu'] button").click()
    detail = page.locator("#detail")
    assert detail.is_visible()
    text = detail.inner_text()
    assert "failed" in text and "regressed" in text and "Trace (trimmed)" in text and "duration" in text
    assert p.hash_params()["test"] == REGRESSED
    page.locator(f"tr.test[data-test='{MARKUP_TEST}'] td[data-col='cpu'] button").click()
    assert "message with <script>alert(2)</script> & <b>markup</b>" in page.locator("#detail pre.message").inner_text()
    assert page.evaluate("document.querySelectorAll('script').length") == 2

    # Skip reason and class, the known-issue link, performance figures.
    page.locator("tr.feature[data-feature='beta'] button.toggle").click()
    page.locator("tr.test[data-test='beta/test_b.py::test_beta_known'] td[data-col='cpu'] button").click()
    link = page.locator("#detail a")
    assert link.get_attribute("href") == "https://github.com/pytorch/pytorch/issues/12345"
    assert "known-issue" in detail.inner_text() and "tracked upstream" in detail.inner_text()
    page.locator("tr.test[data-test='beta/test_b.py::test_beta_unsupported'] td[data-col='cpu'] button").click()
    assert "unsupported" in detail.inner_text() and "not on this backend" in detail.inner_text()
    page.locator("tr.test[data-test='beta/test_b.py::test_perf'] td[data-col='cpu'] button").click()
    assert "gflops" in detail.inner_text() and "12.5" in detail.inner_text()
    # A column without data shows NO DATA for each test, not a failure.
    assert page.locator(f"tr.test[data-test='{REGRESSED}'] td[data-col='rocm']").inner_text() == "NO DATA"

    page.screenshot(path=str(artifacts_dir / "matrix-page.png"), full_page=True)
    p.close()


def test_filters_and_url_state(browser, site, artifacts_dir: Path) -> None:
    path, matrix = site
    p = Page(browser, path.as_uri())
    page = p.page

    page.select_option("#f-only", "cpu")
    p.wait_count("1 of")
    only_cpu = _expected(
        matrix,
        lambda t, cols: (
            t["results"].get("cpu", {}).get("outcome") in BAD
            and not any(t["results"].get(c, {}).get("outcome") in BAD for c in cols if c != "cpu")
        ),
    )
    assert only_cpu == [REGRESSED] and p.tests_shown() == only_cpu
    assert p.hash_params()["only"] == "cpu"

    page.select_option("#f-only", "")
    page.check("#f-differs")
    differs = _expected(matrix, lambda t, cols: len({(t["results"].get(c) or {}).get("outcome") for c in cols}) > 1)
    p.wait_count(f"{len(differs)} of")
    assert sorted(p.tests_shown()) == differs
    assert {REGRESSED, "alpha/test_a.py::test_fixed", "alpha/test_a.py::test_new"} <= set(differs)
    page.uncheck("#f-differs")

    page.select_option("#f-outcome", "failed")
    page.select_option("#f-backend", "cu130")
    failed_cu130 = _expected(matrix, lambda t, cols: t["results"].get("cu130", {}).get("outcome") == "failed")
    p.wait_count(f"{len(failed_cu130)} of")
    assert sorted(p.tests_shown()) == failed_cu130
    assert page.eval_on_selector_all("thead th.col", "els => els.map(e => e.dataset.col)") == ["cu130"]

    page.fill("#f-q", "known")
    p.wait_count("1 of")
    assert p.tests_shown() == ["alpha/test_a.py::test_known_bad"]
    state = p.hash_params()
    assert state == {"outcome": "failed", "backend": "cu130", "q": "known"}

    # The URL alone reproduces the view in a fresh page, form included.
    url = page.url
    p.close()
    again = Page(browser, url)
    assert again.tests_shown() == ["alpha/test_a.py::test_known_bad"]
    assert again.page.input_value("#f-q") == "known" and again.page.input_value("#f-backend") == "cu130"
    again.page.screenshot(path=str(artifacts_dir / "matrix-page-filtered.png"), full_page=True)
    again.page.click("#f-reset")
    again.wait_count(f"{len(matrix['tests'])} tests")
    assert again.hash_params() == {}
    again.page.select_option("#f-feature", "beta")
    assert again.page.eval_on_selector_all("tr.feature", "els => els.map(e => e.dataset.feature)") == ["beta"]
    again.close()


def test_page_is_self_contained(site) -> None:
    path, _ = site
    html = path.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in html and "default-src &#39;none&#39;" in html
    for marker in ('src="http', "src='http", 'href="http', "url(http", "@import", "//cdn"):
        assert marker not in html
    # The markup-named test and message only appear escaped inside the JSON island.
    assert "<img src=x" not in html and "<script>alert(2)" not in html


def _scale_matrix(real: dict, n_tests: int = 50_000) -> Matrix:
    """5 columns x n_tests, synthesized from a real matrix (hand-made data is for scale only)."""
    matrix = copy.deepcopy(real)
    base_cols = {c["id"]: c for c in matrix["columns"]}
    cpu = base_cols["cpu"]
    for new_id, backend, name in (("cu126", "cu126", "CUDA 12.6"), ("xpu", "xpu", "Intel XPU")):
        col = copy.deepcopy(cpu)
        col.update(id=new_id, backend=backend, display_name=name)
        matrix["columns"].append(col)
    col_ids = [c["id"] for c in matrix["columns"] if c["state"] != "no-data"]
    outcomes = ["passed"] * 8 + ["failed", "skipped"]
    features = [f["id"] for f in matrix["features"]]
    tests = []
    for i in range(n_tests):
        results = {}
        for j, col in enumerate(col_ids):
            outcome = outcomes[(i * 7 + j * (i % 3)) % len(outcomes)]
            result: dict = {"outcome": outcome, "duration": 0.001 * (i % 50)}
            if outcome == "failed":
                result["message"] = f"AssertionError: case {i} <b>{j}</b>"
                result["trace"] = "E   AssertionError\n" * 5
            if outcome == "skipped":
                result |= {"skip_class": "hardware", "message": "needs a GPU"}
            results[col] = result
        tests.append(
            {
                "id": f"{features[i % len(features)]}/test_scale.py::test_case[{i}]",
                "feature": features[i % len(features)],
                "results": results,
            }
        )
    matrix["tests"] = tests
    for fid in features:
        for col in col_ids:
            matrix["cells"][fid][col] = {"state": "partial", "counts": {"passed": 8, "failed": 1, "skipped": 1}}
    validate_matrix(matrix)
    return Matrix.from_json(matrix)


@pytest.mark.slow
def test_usable_at_5_columns_and_50000_tests(browser, site, tmp_path: Path, artifacts_dir: Path) -> None:
    _, real = site
    start = time.perf_counter()
    matrix = _scale_matrix(real)
    validated = time.perf_counter()
    html = render_html(matrix)
    rendered = time.perf_counter()
    page_path = tmp_path / "scale.html"
    page_path.write_text(html, encoding="utf-8")
    print(
        f"\nscale: {len(matrix.columns)} columns x {len(matrix.tests)} tests; build {validated - start:.1f}s, "
        f"render {rendered - validated:.1f}s, page {len(html) / 1e6:.1f} MB"
    )
    assert len(matrix.columns) == 5

    t0 = time.perf_counter()
    p = Page(browser, page_path.as_uri())
    load_s = time.perf_counter() - t0
    page = p.page
    t1 = time.perf_counter()
    page.select_option("#f-outcome", "failed")
    p.wait_count("")
    page.wait_for_function("document.getElementById('match-count').textContent.includes('of 50000')")
    filter_s = time.perf_counter() - t1
    rows = len(p.tests_shown())
    assert 0 < rows <= 100 * len(matrix.features), "test rows must be paginated, not all drawn"
    more = page.locator("tr.more button").first
    assert "more" in more.inner_text()
    t2 = time.perf_counter()
    page.fill("#f-q", "test_case[4999")
    page.wait_for_function("document.getElementById('match-count').textContent.startsWith('1') ")
    search_s = time.perf_counter() - t2
    page.screenshot(path=str(artifacts_dir / "matrix-page-50k.png"))
    print(f"scale: load {load_s:.2f}s, outcome filter {filter_s:.2f}s, search {search_s:.2f}s, rows drawn {rows}")
    assert load_s < 20 and filter_s < 10 and search_s < 10
    p.close()


def test_release_view_and_rerun_commands(browser, tmp_path: Path, artifacts_dir: Path) -> None:
    """The committed real cells (torch 2.13.0 and 2.14.1 of the CUDA 13.0 build, run CPU-only, and the CPU
    build): the release view lays a backend's builds side by side; a test names its rerun command."""
    cells = Path(__file__).resolve().parents[1] / "data" / "cells"
    matrix = merge_cell_dirs(sorted(p for p in cells.iterdir() if p.is_dir()))
    page_path = tmp_path / "releases.html"
    page_path.write_text(render_html(matrix), encoding="utf-8")
    p = Page(browser, page_path.as_uri())
    page = p.page
    head = page.locator("th.col[data-col='cu130-2.14.1-cpu-only']").inner_text()
    assert "CUDA 13.0 build, CPU only" in head and "torch 2.14.1+cu130" in head and "CPU-ONLY" in head
    page.select_option("#f-release", "0")
    page.wait_for_selector("#releases table.releases")
    builds = page.eval_on_selector_all("#releases th.col", "els => els.map(e => e.dataset.col)")
    # the CPU line: the CPU build and every build run without its device, release by release
    assert builds == ["cpu-2.13.0", "cu130-2.14.1-cpu-only", "cu132-2.15.0-cpu-only"]
    linalg = page.locator("#releases tr[data-feature='linalg'] td.state")
    assert [linalg.nth(i).get_attribute("data-state") for i in range(3)] == ["supported"] * 3
    assert p.hash_params()["release"] == "0", "the view is kept in the URL"
    page.screenshot(path=str(artifacts_dir / "matrix-page-releases.png"))
    page.locator("tr.feature[data-feature='export'] button.toggle").click()
    test_id = "export/test_torchscript.py::test_torchscript_warning_category_is_deprecation"
    page.locator(f"tr.test[data-test='{test_id}'] td[data-col='cu130-2.14.1-cpu-only'] button").click()
    rerun = page.locator("#detail code.rerun").inner_text()
    assert rerun.startswith("python3 -m pip install torch==2.14.1+cu130")
    assert rerun.endswith(f"--test {test_id}")
    detail = page.locator("#detail").inner_text()
    assert "warning_category" in detail and "FutureWarning" in detail, "2.14 announces the deprecation to users"
    p.close()


# -- the site at scale: a page plus data/ parts, fetched when needed; a test's history ---------------
@pytest.fixture(scope="module")
def three_run_sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same three published runs (base: the test passes, new: it fails, base again) as a split
    site (its tests in data/) and as an inline one (everything in the page)."""
    import os

    from harness.publish.site import publish
    from tests.publishing_cells import write_base_and_new

    root = tmp_path_factory.mktemp("sites")
    base, new = write_base_and_new(root)
    sites = {"split": root / "split", "inline": root / "inline"}
    saved = {k: os.environ.get(k) for k in ("GITHUB_RUN_ID", "GITHUB_STEP_SUMMARY")}
    os.environ.pop("GITHUB_STEP_SUMMARY", None)
    try:
        for run, path in ((21, base), (22, new), (23, base)):
            os.environ["GITHUB_RUN_ID"] = str(run)
            for name, site in sites.items():
                publish(load_matrix(path), site, inline_limit=0 if name == "split" else 10**9)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return sites


def _serve(root: Path):
    import threading
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _check_history_panel(page) -> None:
    page.locator(f"tr.test[data-test='{REGRESSED}'] td[data-col='cpu'] button").click()
    timeline = page.locator("#detail .timeline[data-col='cpu']")
    timeline.wait_for(timeout=30_000)
    codes = timeline.locator(".tl-run").evaluate_all("els => els.map(e => e.dataset.code)")
    assert codes == ["p", "f", "p"]
    assert timeline.locator(".tl-first-bad").inner_text().startswith("run gh22-1, torch 2.13.0+cpu, ")
    assert timeline.locator(".tl-last-good").inner_text().startswith("run gh21-1, torch 2.13.0+cpu, ")
    assert timeline.locator(".tl-fixed").inner_text().startswith("run gh23-1, ")
    flips = timeline.locator(".tl-flips").inner_text()
    assert flips == "2 flip(s) between good and bad within torch 2.13.0+cpu"
    assert "flaky across runs" in timeline.inner_text()


def test_a_split_site_draws_first_and_fetches_a_feature_and_a_test_when_opened(
    browser, three_run_sites, artifacts_dir: Path
) -> None:
    site = three_run_sites["split"]
    server = _serve(site)
    origin = f"http://127.0.0.1:{server.server_port}"
    try:
        p = Page(browser, f"{origin}/index.html", origin=origin)
        page = p.page
        assert page.locator("tr.feature").count() == 2
        fetched = lambda: sorted(u.rsplit("/", 1)[-1] for u in p.requests if "/data/" in u)  # noqa: E731
        assert fetched() == [], "the first draw needs no test data"
        page.locator("tr.feature[data-feature='alpha'] button.toggle").click()
        page.wait_for_selector(f"tr.test[data-test='{REGRESSED}']")
        assert fetched() == ["r0-0.json"], "opening a feature fetches its rows, nothing else"
        _check_history_panel(page)
        assert fetched() == ["h0.json", "r0-0.json"], "it passed in the last run: no details to fetch"
        page.click("#detail-close")
        page.locator("tr.test[data-test='alpha/test_a.py::test_known_bad'] td[data-col='cpu'] button").click()
        page.wait_for_selector("#detail pre.message")
        assert "always broken" in page.locator("#detail pre.message").inner_text()
        assert fetched() == ["d0.json", "h0.json", "r0-0.json"]
        page.screenshot(path=str(artifacts_dir / "matrix-page-history.png"))
        # a filter needs every test: the other feature's rows come too
        page.select_option("#f-outcome", "failed")
        p.wait_count("3 of")
        assert "r1-0.json" in fetched()
        p.close()
    finally:
        server.shutdown()


def test_an_inline_site_shows_a_tests_history_from_disk(browser, three_run_sites) -> None:
    p = Page(browser, (three_run_sites["inline"] / "index.html").as_uri())
    p.page.locator("tr.feature[data-feature='alpha'] button.toggle").click()
    _check_history_panel(p.page)
    p.close()


def test_a_split_site_opened_from_disk_says_how_to_open_it(browser, three_run_sites) -> None:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto((three_run_sites["split"] / "index.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    page.locator("tr.feature[data-feature='alpha'] button.toggle").click()
    warning = page.locator("#warnings .load-error")
    warning.wait_for(timeout=10_000)
    assert "python3 -m http.server" in warning.inner_text() and "harness report" in warning.inner_text()
    assert errors == []
    page.close()


def test_the_page_takes_failing_outcomes_from_its_data(browser, site, tmp_path: Path) -> None:
    """The script holds no list of failing outcomes: swap the data's list and "any failure" follows it."""
    path, matrix = site
    html = path.read_text(encoding="utf-8")
    script = html.split("<script>", 1)[1]
    assert '"failed"' not in script and "failed: 1" not in script, "a literal list of failing outcomes"
    assert '"bad":["crashed","error","failed","timeout"]' in html
    swapped = tmp_path / "swapped.html"
    swapped.write_text(html.replace('"bad":["crashed","error","failed","timeout"]', '"bad":["xfailed"]'), "utf-8")
    p = Page(browser, swapped.as_uri())
    p.page.select_option("#f-outcome", "problems")
    xfailed = _expected(matrix, lambda t, cols: any(t["results"].get(c, {}).get("outcome") == "xfailed" for c in cols))
    p.wait_count(f"{len(xfailed)} of")
    assert sorted(p.tests_shown()) == xfailed and xfailed
    p.close()


def test_not_in_this_release_composite_columns_and_the_legend_in_a_browser(
    browser, tmp_path: Path, artifacts_dir: Path
) -> None:
    """The committed real cells with the suites' features file: rows a build cannot have read "not in
    this release", the release view says ARRIVED; a later partial run of cpu-2.13.0 (a sample suite's
    run restated) makes that column a composite whose overlaid tests name their run."""
    from tests.committed import CELLS, partial_rerun_cell, stated_features

    later = partial_rerun_cell(tmp_path)
    cells = sorted(p for p in CELLS.iterdir() if p.is_dir())
    matrix = merge_cell_dirs([*cells, later], features=stated_features(), jobs=1)
    overlaid = next(row.id for row, r in matrix.results("cpu-2.13.0") if r.run == "r-partial")
    page_path = tmp_path / "page.html"
    page_path.write_text(render_html(matrix), encoding="utf-8")
    p = Page(browser, page_path.as_uri())
    page = p.page
    rocm = page.locator("tr.feature[data-feature='rocm_builds'] td.state")
    assert [rocm.nth(i).get_attribute("data-state") for i in range(3)] == ["not-in-release"] * 3
    assert "not in this release" in rocm.nth(2).inner_text() and "ROCm builds only" in rocm.nth(2).inner_text()
    head = page.locator("th.col[data-col='cpu-2.13.0']").inner_text()
    assert "COMPOSITE OF 2 RUNS" in head
    legend = page.locator("#legend").inner_text()
    assert "judged without N host-side tests" in legend and "CPU only" in legend and "not in this release" in legend
    page.select_option("#f-release", "0")
    page.wait_for_selector("#releases table.releases")
    arrived = page.locator("#releases tr[data-feature='scaled_mm_mx'] td.state[data-arrived='1']")
    assert arrived.count() == 1 and "ARRIVED IN 2.14" in arrived.inner_text()
    page.screenshot(path=str(artifacts_dir / "matrix-page-not-in-release.png"))
    feature = next(row.feature for row in matrix.tests if row.id == overlaid)
    page.locator(f"tr.feature[data-feature='{feature}'] button.toggle").click()
    page.locator(f"tr.test[data-test='{overlaid}'] td[data-col='cpu-2.13.0'] button").click()
    page.wait_for_selector("#detail-body[data-ready]")
    detail = page.locator("#detail").inner_text()
    assert "result from" in detail and "run r-partial started 2026-12-02T00:00:00Z" in detail
    assert not p.errors, p.errors
    p.close()


def test_a_gpu_columns_evidence_in_the_feature_cell_and_the_test_panel(browser, tmp_path: Path, artifacts_dir) -> None:
    """The real H200 cell (torch 2.11.0+cu130): the feature cell says what ran, a test's panel its kernel."""
    gpu = Path(__file__).resolve().parents[1] / "data" / "gpu-cells" / "cu130-2.11.0-h200-run2"
    matrix = merge_cell_dirs([gpu], jobs=1)
    write_matrix(matrix, tmp_path / "matrix.json")
    assert main(["report", str(tmp_path / "matrix.json"), "--format", "html", "-o", str(tmp_path / "index.html")]) == 0
    p = Page(browser, (tmp_path / "index.html").as_uri())
    page = p.page
    column = matrix.columns[0].id
    cell = page.locator(f"tr.feature[data-feature='varlen_attention'] td[data-col='{column}']").inner_text()
    assert "ran flash_fwd_kernel" in cell and "on sm_90" in cell, cell
    graphs = page.locator(f"tr.feature[data-feature='graphs'] td[data-col='{column}']").inner_text()
    assert "graph replays" in graphs, graphs
    page.locator("tr.feature[data-feature='attention'] button.toggle").click()
    test = "attention/test_sdpa_kernels.py::test_kernel_matches_float64_math[flash-bfloat16-plain]"
    page.locator(f"tr.test[data-test='{test}'] td[data-col='{column}'] button").click()
    detail = page.locator("#detail").inner_text()
    assert "flash_fwd_kernel on sm_90" in detail, detail[:1000]
    page.screenshot(path=str(artifacts_dir / "gpu-evidence-page.png"), full_page=False)
    p.close()
