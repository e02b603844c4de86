"""Test-wide numerics: float64 and standard dtype promotion, set once for the test session;
a persistent compilation cache; process hygiene for long-lived xdist workers
(compiled-code mappings, no torch).

The persistent JAX compilation cache lives outside the checkout (default
``~/.cache/sorogym/jax-tests``, or ``$SOROGYM_TEST_JAX_CACHE``; set it to an empty string to
disable), so repeated runs on one machine, clean checkouts included, skip recompiling
unchanged functions. It is capped at 2 GiB (least recently used entries go first). JAX's
capped cache keeps an access-time file beside every entry and cannot store a new entry
while any entry lacks one (its size scan stops at the missing file, and the program is
silently not written); a process that used the same directory without the cap (a script
run by hand with ``JAX_COMPILATION_CACHE_DIR`` set) leaves such entries, so the session
gives them access times before the workers start.

Equinox's runtime checks (the non-convergence errors of diffrax, optimistix and
``static_equilibrium``) report through NaN (``EQX_ON_ERROR=nan``, unless set otherwise) as in
the scripts' smoke runs: a program with a host callback is never stored in the persistent
cache, so with the default every solve recompiled on every run; a failed check still fails
its test, as a non-finite result.

``SOROGYM_TEST_DURATIONS=<file>`` appends every test phase of 0.5 s or more (seconds, phase,
test id) to that file as it finishes (from the xdist controller: a run that is stopped early
still leaves its profile). ``SOROGYM_TEST_COMPILES=<file>`` appends, per test, the XLA
compilations it caused (cache loads included) and how many of them were single operations
run eagerly (a model evaluated outside ``jit`` compiles one program per operation: tens of
seconds for a tree's kinematics); tab-separated: total, eager, test id.

XLA's CPU compiler is run with a single code-generation thread: with parallel codegen,
long test sessions (hundreds of compilations) crashed inside XLA compilation a few times on
jaxlib 0.10.2. Must be set before JAX initialises its backend.
"""

import os

os.environ.setdefault("EQX_ON_ERROR", "nan")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_parallel_codegen_split_count=1").strip()

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_dtype_promotion", "standard")

_CACHE_DIR = os.environ.get(
    "SOROGYM_TEST_JAX_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "sorogym", "jax-tests")
)
if _CACHE_DIR:
    jax.config.update("jax_compilation_cache_dir", _CACHE_DIR)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.1)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    jax.config.update("jax_compilation_cache_max_size", 2 * 1024**3)


import gc  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import pytest  # noqa: E402


def _map_limit() -> int:
    try:
        with open("/proc/sys/vm/max_map_count") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 0


_MAP_LIMIT = _map_limit()


def _memory_maps() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


@pytest.fixture(autouse=True)
def _release_compiled_code_before_the_map_limit():
    """Every XLA:CPU executable keeps memory mappings for its code; a long-lived worker that
    compiles thousands of functions reaches the kernel's ``vm.max_map_count`` (65530 by
    default), after which LLVM fails with "Cannot allocate memory" and the worker aborts.
    Once a worker holds more than half the limit, drop JAX's compilation caches (functions
    recompile on their next call)."""
    yield
    if _MAP_LIMIT and _memory_maps() > _MAP_LIMIT // 2:
        jax.clear_caches()
        gc.collect()


class _CompileCounter(logging.Handler):
    """Counts JAX's "Finished XLA compilation of jit(<name>)" log records: all of them, and
    the eager ones (a primitive's or a ``jax.numpy`` function's name)."""

    PREFIX = "Finished XLA compilation of jit("

    def __init__(self):
        import jax.extend.core.primitives as primitives
        import jax.numpy as jnp

        super().__init__()
        self.total = self.eager = 0
        self._ops = {getattr(primitives, a).name for a in dir(primitives) if a.endswith("_p")}
        self._jnp = jnp

    def emit(self, record):
        message = record.getMessage()
        if message.startswith(self.PREFIX):
            name = message[len(self.PREFIX) :].split(")", 1)[0]
            self.total += 1
            self.eager += name in self._ops or hasattr(self._jnp, name)


_COMPILES_PATH = os.environ.get("SOROGYM_TEST_COMPILES")
_COMPILE_COUNTER = None
if _COMPILES_PATH:
    _COMPILE_COUNTER = _CompileCounter()
    logging.getLogger("jax").addHandler(_COMPILE_COUNTER)
    jax.config.update("jax_log_compiles", True)


@pytest.fixture(autouse=True)
def _count_compilations(request):
    """``SOROGYM_TEST_COMPILES`` (module docstring): one line per test."""
    if _COMPILE_COUNTER is None:
        yield
        return
    _COMPILE_COUNTER.total = _COMPILE_COUNTER.eager = 0
    yield
    with open(_COMPILES_PATH, "a") as f:
        f.write(f"{_COMPILE_COUNTER.total}\t{_COMPILE_COUNTER.eager}\t{request.node.nodeid}\n")


@pytest.fixture(autouse=True)
def _torch_stays_out_of_the_test_process():
    """torch must not load in a pytest worker (see ``tests/_isolated.py``)."""
    yield
    assert "torch" not in sys.modules, "this test loaded torch in the pytest process; run its body with run_isolated"


def _give_cache_entries_access_times(cache_dir: str) -> int:
    """Write an access-time file (now) for every entry of the capped cache at ``cache_dir``
    that has none (see the module docstring); return how many were written."""
    if not cache_dir or not os.path.isdir(cache_dir):
        return 0
    names = set(os.listdir(cache_dir))
    stamp = time.time_ns().to_bytes(8, "little")  # the format of jax's LRU cache
    keys = [n.removesuffix("-cache") for n in names if n.endswith("-cache")]
    missing = [key for key in keys if key + "-atime" not in names]
    for key in missing:
        with open(os.path.join(cache_dir, key + "-atime"), "wb") as f:
            f.write(stamp)
    return len(missing)


def pytest_configure(config):
    from _oracles import missing_oracles, oracles_required

    if "PYTEST_XDIST_WORKER" not in os.environ:
        _give_cache_entries_access_times(_CACHE_DIR)

    missing = missing_oracles()
    if missing and oracles_required():
        raise pytest.UsageError(
            f"oracle packages not installed: {', '.join(missing)}; SOROGYM_REQUIRE_ORACLES is set, so their "
            "comparisons may not skip (install them: pip install -c constraints.txt -e '.[dev]')"
        )


def pytest_runtest_logreport(report):
    path = os.environ.get("SOROGYM_TEST_DURATIONS")
    if path and "PYTEST_XDIST_WORKER" not in os.environ and report.duration >= 0.5:
        with open(path, "a") as f:
            f.write(f"{report.duration:.2f}\t{report.when}\t{report.nodeid}\n")


def pytest_terminal_summary(terminalreporter):
    from _oracles import missing_oracles

    missing = missing_oracles()
    if missing:
        terminalreporter.write_sep("=", "oracles missing", yellow=True)
        terminalreporter.write_line(
            f"oracle packages not installed: {', '.join(missing)}; the comparisons against them were skipped "
            "(set SOROGYM_REQUIRE_ORACLES=1 to make this an error, as .ci/run does)"
        )
