"""The xocdia pytest plugin: benches, certification steps, evidence, matrix. Its options are declared, and the
plugin registered in the runs that want it, by the entry point ``pytest11: xocdia`` (:mod:`harness.cert.entry`).

- ``--bench PATH|NAME`` (default ``in-process``): the bench every scenario runs on; fixtures ``bench``,
  ``cert`` (a scenario's :class:`~harness.cert.steps.context.CertContext`; its rig is closed after the scenario),
  ``players``, ``rig`` (the running rig) and ``oracle`` (a callable returning the verdict so far).
- ``--dialect NAME|module:Class``: the table's devices speak this dialect instead of the bench file's.
- ``--tags EXPR``: run only scenarios whose tags match (``clause:SH-3 or gli:4.16``).
- ``--clause-matrix DIR``: write ``clause-matrix.json`` / ``.md`` there at the end (also into ``--alluredir``).
- ``--scenario-timeout S`` (default 300): a scenario still running after S wall seconds fails by timeout
  (pytest-timeout), so a hung server never hangs the run.
- Step definitions (every module of :data:`harness.cert.steps.STEP_MODULES`, one per area) are registered as plugins.
- Tags ``@clause:X``, ``@gli:N`` and ``@severity:S`` are accepted under ``--strict-markers``; they become allure
  labels, and every Gherkin step becomes an allure step. Per scenario the serial trace of every port, the ground-
  truth timeline, the server's round events and the oracle's verdict are attached.
Works under xdist: workers send each scenario's tags in ``user_properties``; the controller builds the matrix.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import platform
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import allure
import pytest

from harness.bench.config import Bench, BenchError, load_bench
from harness.bench.rig import Rig
from harness.cert import entry
from harness.cert.feed import FeedPlugin
from harness.cert.report.clauses import NOT_APPLICABLE as NOT_APPLICABLE_OUTCOME
from harness.cert.report.clauses import ScenarioResult, build_matrix, matches, rule_clauses
from harness.cert.report.html import write_matrix_result
from harness.cert.steps import STEP_MODULES
from harness.cert.steps.context import NOT_APPLICABLE, CertContext, not_applicable
from harness.cert.steps.explore import ExploreOptions
from harness.errors import AdapterError
from harness.judge.checks import CheckLog, ClauseFailure
from harness.judge.oracle import Verdict

TAG_PREFIXES = ("clause:", "gli:", "severity:", "bench:")
_TAGS_ATTR = "_xocdia_tags"
_STEPS_KEY = pytest.StashKey[list[Any]]()
_OTHER_BENCH_KEY = pytest.StashKey[str]()  # why a scenario tagged for other benches is not applicable here
_CERT_KEY = pytest.StashKey[CertContext]()  # the scenario's context, when one of its steps used it
_FINAL_KEY = pytest.StashKey[Verdict]()  # the judge's final verdict on the scenario
_DONE_KEY = pytest.StashKey[int]()  # how many of the scenario's steps ended without an error
REPO = Path(__file__).resolve().parents[2]
ALLURE: Any = allure  # allure-python's API has no type hints: used through Any on purpose
#: Wall seconds a scenario (setup, steps, teardown) may take by default (the option is declared by the entry point).
SCENARIO_TIMEOUT_S = entry.SCENARIO_TIMEOUT_S


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Where this module is loaded by name (``-p harness.cert.plugin``) rather than through the entry point, register
    the entry point's module too (its options, :mod:`harness.cert.entry`): under ``xocdia`` when that name is free,
    so autoload does not load it a second time."""
    if not pluginmanager.is_registered(entry):
        pluginmanager.register(entry, "xocdia" if pluginmanager.get_plugin("xocdia") is None else entry.__name__)


def pytest_configure(config: pytest.Config) -> None:
    for name in STEP_MODULES:
        module = importlib.import_module(name)
        if not config.pluginmanager.is_registered(module):
            config.pluginmanager.register(module, f"xocdia-steps-{name}")
    if not config.pluginmanager.has_plugin("xocdia-matrix"):
        config.pluginmanager.register(MatrixCollector(config), "xocdia-matrix")
    feed = str(config.getoption("--feed", "") or "")
    if feed and not config.pluginmanager.has_plugin("xocdia-feed") and not _is_xdist_controller(config):
        config.pluginmanager.register(FeedPlugin(feed), "xocdia-feed")
    _refuse_parallel_workers_on_a_shared_bench(config)


def _refuse_parallel_workers_on_a_shared_bench(config: pytest.Config) -> None:
    """Two or more xdist workers (``-n``) on a bench attached by URL stop the run before any scenario, in one line:
    every scenario there shares one server and one set of device lines (as ``certify --workers`` refuses them).

    Raises:
        pytest.UsageError: such workers on such a bench.
    """
    if not _is_xdist_controller(config):
        return
    try:
        workers = int(config.option.numprocesses)
        bench = load_bench(str(config.getoption("--bench")), config.getoption("--dialect"))
    except (TypeError, ValueError, BenchError):
        return  # not a count of workers, or a bad bench (the bench fixture reports it)
    refusal = bench.workers_refusal("-n", workers)
    if refusal:
        raise pytest.UsageError(refusal)


def _is_xdist_controller(config: pytest.Config) -> bool:
    """True in the xdist process that hands scenarios to workers (it builds no rig)."""
    return not hasattr(config, "workerinput") and bool(getattr(config.option, "numprocesses", None))


# ---------------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def bench(pytestconfig: pytest.Config) -> Bench:
    """The bench named by ``--bench``. A bad bench file stops the run with its field-named error."""
    try:
        return load_bench(str(pytestconfig.getoption("--bench")), pytestconfig.getoption("--dialect"))
    except BenchError as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.fixture(autouse=True)
def clause_checks(request: pytest.FixtureRequest) -> Iterator[CheckLog]:
    """The checks one test ran, each naming its clause; for a scenario they go to the clause matrix
    (``user_properties``): a clause is covered only by checks that ran."""
    log = CheckLog()
    yield log
    props = dict(request.node.user_properties)
    if "xocdia_clauses" in props:
        request.node.user_properties.append(("xocdia_checked", ",".join(log.ran())))


@pytest.fixture
def cert(request: pytest.FixtureRequest, bench: Bench, clause_checks: CheckLog) -> Iterator[CertContext]:
    """One scenario's context; after the scenario its evidence is attached and its rig closed (the judge's final
    verdict is taken before, at the end of the scenario's steps: :func:`pytest_bdd_after_scenario`)."""
    context = CertContext(bench, checks=clause_checks)
    request.node.stash[_CERT_KEY] = context
    try:
        yield context
    finally:
        if context.rig is not None or context.tried:
            request.node.user_properties.append(("xocdia_server", "reached" if context.rig else "unreached"))
        with context.rig or contextlib.nullcontext():  # the rig (if built) is closed once its evidence is attached
            final = request.node.stash.get(_FINAL_KEY, None)
            for name, body in context.evidence(final).items():
                ALLURE.attach(body, name=name, attachment_type=allure.attachment_type.TEXT)
                print(f"----- {name} -----\n{body}")  # captured: pytest shows it only when the scenario fails


@pytest.fixture
def explore_options(pytestconfig: pytest.Config) -> ExploreOptions:
    """``--explore``/``--explore-seed`` for the exploration steps; failing tables go to ``explored/`` of the
    clause-matrix folder (the report folder of ``certify``)."""
    folder = str(pytestconfig.getoption("--clause-matrix") or "")
    return ExploreOptions(
        pytestconfig.getoption("--explore"),
        pytestconfig.getoption("--explore-seed"),
        Path(folder) / "explored" if folder else None,
    )


@pytest.fixture
def players(cert: CertContext) -> dict[str, int]:
    """The scenario's players and opening balances (filled by ``Given player ... has a balance of ...``)."""
    return cert.players


@pytest.fixture
def rig(cert: CertContext) -> Rig:
    """The running bench rig (emulated table, devices, server adapter), built on first use."""
    return cert.running()


@pytest.fixture
def oracle(cert: CertContext) -> Callable[[], Verdict]:
    """Judge everything the server reported so far: ``oracle().passed``, ``oracle().differences``."""
    return cert.verdict


# ---------------------------------------------------------------------------------------------------- tags
@pytest.hookimpl(tryfirst=True)
def pytest_bdd_apply_tag(tag: str, function: Callable[..., Any]) -> bool | None:
    """Remember every tag on the scenario function; accept clause/gli/severity tags without making markers."""
    tags: set[str] = function.__dict__.setdefault(_TAGS_ATTR, set())
    tags.add(tag)
    return True if tag.startswith(TAG_PREFIXES) else None


def _tags(item: pytest.Item) -> set[str]:
    function = getattr(item, "function", None)
    return set(getattr(function, _TAGS_ATTR, set()))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect scenarios that do not match ``--tags``. A scenario tagged ``@bench:NAME`` for other benches only
    (it needs what only those benches have, e.g. serial fault injection in-process) stays selected and ends as not
    applicable to this bench, with that reason, when it starts (:func:`pytest_bdd_before_scenario`)."""
    expression = str(config.getoption("--tags"))
    try:
        bench_name = load_bench(str(config.getoption("--bench"))).name
    except BenchError:
        bench_name = ""  # the bench fixture reports the error when a scenario needs it
    keep: list[pytest.Item] = []
    for item in items:
        tags = _tags(item)
        benches = {t.split(":", 1)[1] for t in tags if t.startswith("bench:")}
        try:
            wanted = matches(expression, tags)
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        if not wanted:
            continue
        if benches and bench_name and bench_name not in benches:
            item.stash[_OTHER_BENCH_KEY] = (
                f"written for the {', '.join(sorted(benches))} bench only "
                f"({' '.join('@bench:' + b for b in sorted(benches))}); this bench is {bench_name}"
            )
        keep.append(item)
    dropped = [i for i in items if i not in keep]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    _limit_wall_time(config, keep)


def _limit_wall_time(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give every Gherkin scenario without a ``timeout`` marker of its own the ``--scenario-timeout`` limit
    (pytest-timeout, part of the certify extra): a scenario still running after it fails by timeout and the run goes
    on, so a server that hangs (an endless loop inside a step, which no virtual-time step timeout can see) never
    hangs ``certify``. The signal method interrupts the loop where it is; the thread method (no SIGALRM) ends the
    whole run. Other tests in the session are left alone."""
    limit = float(config.getoption("--scenario-timeout"))
    if limit <= 0 or not config.pluginmanager.has_plugin("timeout"):
        return
    method = "signal" if hasattr(signal, "SIGALRM") else "thread"
    for item in items:
        scenario = "_pytest_bdd_example" in getattr(item, "fixturenames", ())  # every pytest-bdd scenario's argument
        if scenario and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(limit, method=method))


# ---------------------------------------------------------------------------------------------------- allure
@pytest.hookimpl(trylast=True)  # a scenario not applicable here ends in it: the other plugins saw it start
def pytest_bdd_before_scenario(request: pytest.FixtureRequest, feature: Any, scenario: Any) -> None:
    tags = set(scenario.tags) | set(feature.tags)
    clauses = sorted(t.split(":", 1)[1] for t in tags if t.startswith("clause:"))
    gli = sorted(t.split(":", 1)[1] for t in tags if t.startswith("gli:"))
    severity = next(
        (t.split(":", 1)[1] for t in tags if t.startswith("severity:")), "critical" if clauses else "normal"
    )
    ALLURE.dynamic.feature(feature.name)
    ALLURE.dynamic.story(scenario.name)
    ALLURE.dynamic.severity(
        allure.severity_level(severity) if severity in _SEVERITIES else allure.severity_level.NORMAL
    )
    for clause in clauses:
        ALLURE.dynamic.label("clause", clause)
        ALLURE.dynamic.tag(f"clause:{clause}")
    for ref in gli:
        ALLURE.dynamic.label("gli", ref)
        ALLURE.dynamic.tag(f"gli:{ref}")
    node = request.node
    node.user_properties.append(("xocdia_scenario", scenario.name))
    node.user_properties.append(("xocdia_where", f"{_feature_path(feature)}:{scenario.line_number}"))
    node.user_properties.append(("xocdia_clauses", ",".join(clauses)))
    node.user_properties.append(("xocdia_gli", ",".join(gli)))
    node.stash[_STEPS_KEY] = []
    other_bench = node.stash.get(_OTHER_BENCH_KEY, "")
    if other_bench:
        not_applicable(other_bench)  # before any step: the matrix lists it with its clauses and this reason


_SEVERITIES = {s.value for s in allure.severity_level}


def _feature_path(feature: Any) -> str:
    """The feature file's path as a lab reads it: relative to the working directory when under it."""
    path = Path(str(getattr(feature, "filename", "") or getattr(feature, "abs_filename", "")))
    with contextlib.suppress(ValueError):
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    return str(path)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Put the clause of a failed check (:class:`ClauseFailure`) into the report's ``user_properties`` as
    ``xocdia_failed``: the matrix marks that clause FAIL and the scenario's other clauses not decided."""
    outcome: Any = yield
    report: pytest.TestReport = outcome.get_result()
    excinfo = call.excinfo
    if report.failed and excinfo is not None and isinstance(excinfo.value, ClauseFailure):
        prop = ("xocdia_failed", excinfo.value.clause)
        item.user_properties.append(prop)
        report.user_properties.append(prop)


def pytest_bdd_before_step(
    request: pytest.FixtureRequest, feature: Any, scenario: Any, step: Any, step_func: Any
) -> None:
    context = ALLURE.step(f"{step.keyword} {step.name}")
    context.__enter__()
    request.node.stash.setdefault(_STEPS_KEY, []).append(context)


def _close_step(request: pytest.FixtureRequest, exc: BaseException | None) -> None:
    stack = request.node.stash.get(_STEPS_KEY, [])
    if stack:
        context = stack.pop()
        if exc is None:
            context.__exit__(None, None, None)
        else:
            context.__exit__(type(exc), exc, exc.__traceback__)


def pytest_bdd_after_step(request: pytest.FixtureRequest, **_: Any) -> None:
    _close_step(request, None)
    request.node.stash[_DONE_KEY] = request.node.stash.get(_DONE_KEY, 0) + 1


@pytest.hookimpl(trylast=True)
def pytest_bdd_after_scenario(request: pytest.FixtureRequest, feature: Any, scenario: Any) -> None:
    """The judge's final verdict on a scenario whose every step passed and which built a rig: everything the
    server did in it is judged against the whole rulebook, whatever the scenario's own Then steps asked. A
    difference fails the scenario, naming the judge's root clause (:class:`ClauseFailure`); the checks the judge
    ran count toward the clauses the scenario covers."""
    node = request.node
    context = node.stash.get(_CERT_KEY, None)
    if context is None or context.rig is None or node.stash.get(_DONE_KEY, 0) < len(scenario.steps):
        return
    try:
        final = context.verdict()
    except AdapterError:
        return  # a server that cannot be read at the end: the steps' own result stands
    node.stash[_FINAL_KEY] = final
    if not final.passed:
        raise final.failure("the judge's final verdict on the scenario")


def pytest_bdd_step_error(request: pytest.FixtureRequest, exception: Exception, **_: Any) -> None:
    """Close the step's allure context. A step that failed outside a clause check (a harness error: a timeout
    waiting for the server, a device model that cannot follow what the server commanded) is put to the judge: when
    the judge finds a root cause in what the server did, that clause is the scenario's failed clause (a finding,
    printed with the scenario's output), not an error of the harness."""
    _close_step(request, exception)
    if isinstance(exception, ClauseFailure):
        return
    context = request.node.stash.get(_CERT_KEY, None)
    if context is None or context.rig is None:
        return
    try:
        verdict = context.verdict()
    except Exception:  # the server cannot be read: the error stands as it is
        return
    if verdict.passed:
        return
    failure = verdict.failure(f"{type(exception).__name__}: {exception}")
    request.node.user_properties.append(("xocdia_failed", failure.clause))
    print(f"----- the judge's finding behind {type(exception).__name__} -----\n{failure}")


# ---------------------------------------------------------------------------------------------------- matrix
class MatrixCollector:
    """Collects each scenario's clauses and outcome (on the xdist controller too) and writes the matrix."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.results: dict[str, ScenarioResult] = {}
        self._outcomes: dict[str, tuple[str, str]] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """A scenario's outcome comes from its call (or a failed setup); its checks and failed clauses from the
        teardown report, whose ``user_properties`` hold everything the scenario recorded."""
        props = dict(report.user_properties)
        if "xocdia_clauses" not in props:
            return
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self._outcomes[report.nodeid] = _outcome(report)
        elif report.when == "teardown" and report.outcome == "failed":
            self._outcomes.setdefault(report.nodeid, ("failed", ""))
        if report.when != "teardown" or report.nodeid not in self._outcomes:
            return
        failed = [str(v) for k, v in report.user_properties if k == "xocdia_failed"]
        outcome, reason = self._outcomes[report.nodeid]
        if report.outcome == "failed":
            outcome = "failed"
        self.results[report.nodeid] = ScenarioResult(
            report.nodeid,
            str(props.get("xocdia_scenario", report.nodeid)),
            _split(props["xocdia_clauses"]),
            _split(props.get("xocdia_gli", "")),
            outcome,
            reason,
            _split(props.get("xocdia_checked", "")),
            tuple(dict.fromkeys(failed)) if outcome == "failed" else (),
            str(props.get("xocdia_where", "")),
            str(props.get("xocdia_server", "")),
        )

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config = self.config
        if hasattr(config, "workerinput"):
            return  # xdist worker: the controller writes the matrix
        targets = [d for d in (str(config.getoption("--clause-matrix")), _alluredir(config)) if d]
        if not self.results or not targets:
            return
        try:  # the table configuration the scenarios followed, listed in the matrix
            table = load_bench(str(config.getoption("--bench")), config.getoption("--dialect")).table
        except BenchError:
            table = None
        matrix = build_matrix(rule_clauses(), self.results.values(), table)
        for folder in targets:
            path = Path(folder)
            path.mkdir(parents=True, exist_ok=True)
            (path / "clause-matrix.json").write_text(matrix.to_json(), encoding="utf-8")
            (path / "clause-matrix.md").write_text(matrix.to_markdown(), encoding="utf-8")
        alluredir = _alluredir(config)
        if alluredir:
            write_matrix_result(Path(alluredir), matrix)
            _write_environment(Path(alluredir), config)


def _split(value: object) -> tuple[str, ...]:
    return tuple(c for c in str(value).split(",") if c)


def _outcome(report: pytest.TestReport) -> tuple[str, str]:
    """The scenario's outcome and reason: ``not-applicable`` with the bench's reason for a scenario ended by
    :func:`~harness.cert.steps.context.not_applicable`, else pytest's outcome."""
    if report.outcome == "skipped" and isinstance(report.longrepr, tuple):
        message = str(report.longrepr[2])
        _, found, reason = message.partition(NOT_APPLICABLE)
        if found:
            return NOT_APPLICABLE_OUTCOME, reason
    return report.outcome, ""


def _alluredir(config: pytest.Config) -> str:
    try:
        return str(config.getoption("--alluredir") or "")
    except ValueError:
        return ""


def _write_environment(folder: Path, config: pytest.Config) -> None:
    """allure's environment.properties: bench, seed, versions, git revision (written last: --clean-alluredir)."""
    import importlib.metadata as md

    bench_name = str(config.getoption("--bench"))
    try:
        bench = load_bench(bench_name, config.getoption("--dialect"))
        seed, profile, dialect = str(bench.seed), bench.profile, bench.dialect_spec
    except BenchError:
        seed, profile, dialect = "?", "?", "?"
    try:
        revision = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=5, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        revision = ""
    props = {
        "bench": bench_name,
        "seed": seed,
        "profile": profile,
        "dialect": dialect,
        "python": platform.python_version(),
        "xocdia-hil": md.version("xocdia-hil"),
        "pytest-bdd": md.version("pytest-bdd"),
        "allure-pytest": md.version("allure-pytest"),
        "git.revision": revision or "unknown",
        "host": platform.node() or os.environ.get("HOSTNAME", ""),
    }
    text = "\n".join(f"{k}={v}" for k, v in props.items()) + "\n"
    (folder / "environment.properties").write_text(text, encoding="utf-8")
