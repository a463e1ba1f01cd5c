"""``lensbench eval CONFIG``: models x benchmarks x settings into one run root, resumable as a whole.

A config (TOML or YAML) names models (backend spec, endpoints, the NAME of the key's environment
variable, a concurrency budget shared by every cell on that model's endpoints) and benchmarks
(data folder, shared run flags, and variants: e.g. IF-Bench's five GenViP input configurations or
IV-Bench frame counts). Every (model, benchmark, variant) cell is one ordinary run folder
``<out>/<model>/<benchmark>[--<variant>]``, so re-running the same config resumes every cell and
``lensbench report``/``view`` read them like any run. Every key is checked before anything is
sent: an unknown key is refused with the nearest valid one, a key naming a secret (also inside
``extra_body``) is refused, names must be plain folder names, and two cells that would share a
folder are refused.

Example (TOML)::

    out = "runs/matrix"
    [[model]]
    name = "qwen2.5-vl-7b"
    spec = "openai:Qwen/Qwen2.5-VL-7B-Instruct"
    base_url = ["http://gpu1:8000/v1"]
    concurrency = 64
    [[benchmark]]
    name = "if-bench"
    judge_model = "openai:Qwen/Qwen3-8B"
    [[benchmark.variant]]
    label = "IF+RGB"
    options = { input = "if+rgb" }
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lensbench.benchmarks.registry import PluginError, benchmark_names, get_benchmark
from lensbench.core.configcheck import SECRET_HINT, find_secrets, unknown_key
from lensbench.core.errors import ConfigError, LensbenchError
from lensbench.core.results import RunResult
from lensbench.runtime.interrupt import run_async
from lensbench.runtime.runner import arun_benchmark
from lensbench.runtime.settings import DEFAULT_KEY_ENV, MAX_CONCURRENCY, RunSettings

__all__ = ["MatrixConfig", "Cell", "load_config", "expand_cells", "run_matrix"]

#: a folder name: starts with a letter or digit (never ``.``, ``..`` or hidden), then letters, digits, ``._+-``
_SAFE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$"


class ModelEntry(BaseModel):
    """One model: ``name`` (folder and report name), ``spec`` (``--model``), endpoints, key variable NAME,
    ``concurrency`` (requests in flight on its endpoints, shared by all its cells), other run flags."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=_SAFE_NAME, description="folder and report name of the model (letters, digits, ._+-)")
    spec: str = Field(description="backend spec, as --model: openai:MODEL, hf:PATH, vllm:MODEL, replay:FILE ...")
    base_url: list[str] = Field(default_factory=list, description="the model's OpenAI-compatible endpoint(s)")
    api_key_env: str = Field(default=DEFAULT_KEY_ENV, description="NAME of the environment variable holding the "
                             "key (a key itself is refused)")
    concurrency: int = Field(default=16, ge=1, le=MAX_CONCURRENCY, strict=True, description="requests in flight on "
                             "this model's endpoints, shared by all its cells (<= 4096)")
    model_args: dict[str, Any] = Field(default_factory=dict, description="backend arguments, as -M KEY=VALUE "
                                       "(e.g. { dtype = \"bfloat16\" } for hf:); see docs/model-args.md")
    settings: dict[str, Any] = Field(default_factory=dict, description="run flags for every cell of this model")


class Variant(BaseModel):
    """One setting of a benchmark: ``label`` (folder suffix, report tag) and its ``options`` / run flags."""

    model_config = ConfigDict(extra="forbid")
    label: str = Field(pattern=r"^[A-Za-z0-9._+=-]{1,128}$", description="folder suffix <benchmark>--<label> and "
                       "report tag")
    options: dict[str, Any] = Field(default_factory=dict, description="benchmark options of this variant (over the "
                                    "benchmark's options)")
    settings: dict[str, Any] = Field(default_factory=dict, description="run flags of this variant (e.g. temperature)")


class BenchmarkEntry(BaseModel):
    """One benchmark: CLI ``name``, ``data_dir`` (default: the data home), shared ``options``, run flags
    (``judge_model``, ``limit`` ...) in ``settings`` or as keys, and ``variant`` list (default: one cell)."""

    model_config = ConfigDict(extra="allow")  # run flags as keys: checked by _unknown_keys against RunSettings
    name: str = Field(description="benchmark, as in 'lensbench run NAME'")
    data_dir: Path | None = Field(default=None, description="its data folder, relative to the config file (default: "
                                  "the data home's, 'lensbench data where NAME')")
    options: dict[str, Any] = Field(default_factory=dict, description="benchmark options (the benchmark's own flags "
                                    "of 'lensbench run NAME', underscores for dashes)")
    settings: dict[str, Any] = Field(default_factory=dict, description="run flags for this benchmark's cells (also "
                                     "allowed directly as keys: judge_model, judge_base_url, limit ...)")
    variant: list[Variant] = Field(default_factory=list, description="settings to run side by side, one cell each "
                                   "(default: one cell)")

    @model_validator(mode="after")
    def _known(self):
        if self.name not in benchmark_names():
            raise ValueError(f"unknown benchmark {self.name!r}; known: {', '.join(sorted(benchmark_names()))}")
        bad = [unknown_key("", k, RunSettings.model_fields) for k in self.model_extra or {}
               if k not in RunSettings.model_fields]
        if bad:  # load_config names these with their path first; this guards configs built in Python
            raise ValueError("; ".join(bad))
        return self


class MatrixConfig(BaseModel):
    """The whole config: ``out`` (run root), ``model`` list, ``benchmark`` list, ``settings`` for every cell."""

    model_config = ConfigDict(extra="forbid")
    out: Path = Field(description="the run root, relative to the config file; cells go to out/<model>/<benchmark>"
                      "[--<variant>]")
    model: list[ModelEntry] = Field(min_length=1, description="the models ([[model]] tables)")
    benchmark: list[BenchmarkEntry] = Field(min_length=1, description="the benchmarks ([[benchmark]] tables)")
    settings: dict[str, Any] = Field(default_factory=dict, description="run flags for every cell (e.g. limit, "
                                     "log_to)")


class Cell(BaseModel):
    """One run of the matrix: its folder, benchmark name, options and run settings; ``error``: the one line
    of a benchmark plugin that cannot be loaded or constructed (the cell fails alone; settings None)."""

    model: str
    benchmark: str
    variant: str | None
    out: Path
    options: dict[str, Any]
    settings: RunSettings | None
    error: str | None = None


#: run flags that configure a judge: refused on a benchmark table without a judge round, dropped from shared tables
JUDGE_KEYS = ("judge_model", "judge_base_url", "judge_model_arg")


def _unknown_keys(doc: dict[str, Any]) -> list[str]:
    """One message per key of ``doc`` that is no field where it stands (with the nearest valid key)."""
    out: list[str] = []
    run_flags = set(RunSettings.model_fields)

    def check(d: Any, known, where: str) -> None:
        if isinstance(d, dict):  # anything else: the model's own validation names the type error
            out.extend(unknown_key(where, k, known) for k in d if k not in known)

    def entries(d: Any, key: str) -> list[Any]:
        v = d.get(key) if isinstance(d, dict) else None
        return v if isinstance(v, list) else []

    check(doc, MatrixConfig.model_fields, "")
    check(doc.get("settings"), run_flags, "settings.")
    for i, m in enumerate(entries(doc, "model")):
        check(m, ModelEntry.model_fields, f"model[{i}].")
        check(m.get("settings") if isinstance(m, dict) else None, run_flags, f"model[{i}].settings.")
    for i, b in enumerate(entries(doc, "benchmark")):
        if not isinstance(b, dict):
            continue
        where = f"benchmark[{i}]."
        check(b, set(BenchmarkEntry.model_fields) | run_flags, where)
        check(b.get("settings"), run_flags, where + "settings.")
        known_bench = isinstance(b.get("name"), str) and b["name"] in benchmark_names()
        opts = _option_names(b["name"]) if known_bench else None
        if opts is not None:
            check(b.get("options"), opts, where + "options.")
        for j, v in enumerate(entries(b, "variant")):
            check(v, Variant.model_fields, f"{where}variant[{j}].")
            if isinstance(v, dict):
                check(v.get("settings"), run_flags, f"{where}variant[{j}].settings.")
                if opts is not None:
                    check(v.get("options"), opts, f"{where}variant[{j}].options.")
    return out


def load_config(path: str | Path) -> MatrixConfig:
    """Read and validate a TOML (``.toml``) or YAML (``.yaml``/``.yml``) config.

    Raises ConfigError naming the file and the key at fault: a secret-looking key (anywhere, also
    inside an ``extra_body`` JSON string), every unknown key (with the nearest valid one), a bad
    value, a model name that is not a plain folder name (``..``, ``a/b``, ``.hidden``).
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: config file not found")
    try:
        text = p.read_bytes().decode("utf-8")
        if "\x00" in text:
            raise ValueError("it holds NUL bytes (a binary file?)")
        if p.suffix == ".toml":
            try:
                import tomllib
            except ModuleNotFoundError:  # Python 3.10
                import tomli as tomllib

            doc = tomllib.loads(text)
        elif p.suffix in (".yaml", ".yml"):
            from lensbench.core.extras import require

            doc = require("yaml", "yaml").safe_load(text)
        else:
            raise ConfigError(f"{p}: config must be .toml, .yaml or .yml")
    except (ValueError, ImportError) as exc:
        raise ConfigError(f"{p}: not valid {p.suffix[1:].upper()}: {exc}") from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{p}: the config must be a table / mapping")
    secrets = find_secrets(doc)
    if secrets:
        raise ConfigError(f"{p}: {', '.join(secrets)}: {SECRET_HINT}")
    unknown = _unknown_keys(doc)
    if unknown:
        raise ConfigError(f"{p}: " + "; ".join(unknown))
    try:
        cfg = MatrixConfig(**doc)
    except ValidationError as exc:
        e = exc.errors()[0]
        loc = ".".join(str(x) for x in e["loc"])
        raise ConfigError(f"{p}: {loc}: {e['msg']}") from None
    if not cfg.out.is_absolute():
        cfg.out = (p.parent / cfg.out).resolve()
    for b in cfg.benchmark:
        if b.data_dir is not None and not b.data_dir.is_absolute():
            b.data_dir = (p.parent / b.data_dir).resolve()
    return cfg


def _option_names(name: str) -> set[str] | None:
    """The option keys of benchmark ``name``; None for a plugin that cannot be loaded (its cells fail alone)."""
    try:
        return set(get_benchmark(name).Options.model_fields)
    except PluginError:
        return None


def _plugin_fault(name: str, options: dict[str, Any]) -> str | None:
    """The one line of benchmark plugin ``name`` when it cannot be loaded or constructed, else None."""
    try:
        cls = get_benchmark(name)
        cls(cls.Options(**{k: x for k, x in options.items() if k in cls.Options.model_fields}))
    except PluginError as exc:
        return str(exc)
    except (ValidationError, LensbenchError):
        return None  # a bad option: refused below with its key
    return None


def expand_cells(cfg: MatrixConfig, source: str | Path | None = None) -> list[Cell]:
    """Every (model, benchmark, variant) cell with its validated settings, in config order.

    Raises ConfigError naming the model/benchmark/variant whose flags or options are invalid, or
    two cells that would write the same folder (same model name, same benchmark and variant;
    compared case-insensitively, as macOS and Windows file systems do). ``source`` (the config
    file) prefixes the messages.
    """
    pre = f"{source}: " if source is not None else ""
    cells: list[Cell] = []
    seen: dict[str, str] = {}
    root = os.path.normpath(cfg.out)
    for m in cfg.model:
        for b in cfg.benchmark:
            flat = {k: v for k, v in (b.model_extra or {}).items()}
            for v in b.variant or [None]:
                where = f"model {m.name} x benchmark {b.name}" + (f" x variant {v.label}" if v else "")
                options = {**b.options, **(v.options if v else {})}
                fault = _plugin_fault(b.name, options)
                if fault is not None:  # issue 30 item 5: this cell fails alone, naming the plugin
                    cells.append(Cell(model=m.name, benchmark=b.name, variant=v.label if v else None,
                                      out=cfg.out / m.name / (b.name + (f"--{v.label}" if v else "")), options=options,
                                      settings=None, error=fault))
                    continue
                cls = get_benchmark(b.name)
                own = {**b.settings, **flat, **(v.settings if v else {})}  # this benchmark's own keys
                shared = {**cfg.settings, **m.settings}
                if cls(cls.Options(**{k: x for k, x in {**b.options, **(v.options if v else {})}.items()
                                      if k in cls.Options.model_fields})).judge_use() is None:
                    # a judge set for every cell (top level / model) does not apply where the protocol has none
                    shared = {k: x for k, x in shared.items() if k not in JUDGE_KEYS}
                raw = {**shared, **own}
                folder = cfg.out / m.name / (b.name + (f"--{v.label}" if v else ""))
                norm = os.path.normpath(folder)
                if os.path.dirname(os.path.dirname(norm)) != root:
                    raise ConfigError(f"{pre}{where}: its folder {folder} is not inside out = {cfg.out}")
                if norm.casefold() in seen:
                    raise ConfigError(f"{pre}{where} and {seen[norm.casefold()]} would write the same folder {folder}: "
                                      "give the models different names or the variants different labels")
                seen[norm.casefold()] = where
                stray = [unknown_key("options.", k, cls.Options.model_fields) for k in options
                         if k not in cls.Options.model_fields]
                if stray:
                    raise ConfigError(f"{pre}{where}: {'; '.join(stray)}")
                try:
                    cls.Options(**options)
                    fixed = {"model": m.spec, "base_url": m.base_url, "api_key_env": m.api_key_env, "out": folder,
                             "data_dir": b.data_dir, "progress": False, "model_arg": m.model_args}
                    clash = sorted(set(raw) & set(fixed))
                    if clash:
                        raise ConfigError(f"{pre}{where}: {', '.join(clash)} is set by the matrix (model entry / run "
                                          "root), not in settings")
                    s = RunSettings.model_validate({"concurrency": m.concurrency, "model_name": m.name,
                                                    **({"tag": v.label} if v else {}), **raw, **fixed},
                                                   strict=True)  # a config's "2" or true is no count
                    cls(cls.Options(**options)).check_judge_flags([k for k in JUDGE_KEYS if own.get(k)])
                except ValidationError as exc:
                    e = exc.errors()[0]
                    raise ConfigError(f"{pre}{where}: {'.'.join(map(str, e['loc']))}: {e['msg']}") from None
                except ConfigError as exc:
                    if str(exc).startswith(pre + where):
                        raise
                    raise ConfigError(f"{pre}{where}: {exc}") from None
                cells.append(Cell(model=m.name, benchmark=b.name, variant=v.label if v else None, out=folder,
                                  options=options, settings=s))
    return cells


def cell_name(c: Cell) -> str:
    """``model/benchmark[--variant]``: the cell's folder under the run root (progress lines, messages)."""
    return f"{c.model}/{c.out.name}"


async def _run_cells(cells: list[Cell], budgets: dict[str, int], console, progress: bool,
                     every_s: float) -> list[tuple[Cell, RunResult | str]]:
    from lensbench.runtime.matrix_progress import MatrixProgress

    limiters = {name: asyncio.Semaphore(n) for name, n in budgets.items()}
    shown = MatrixProgress([cell_name(c) for c in cells], console, every_s=every_s,
                           enabled=progress and console is not None) if console is not None else None

    async def one(c: Cell):
        name = cell_name(c)
        try:
            if c.error is not None:
                raise PluginError(c.error, c.benchmark, c.error)
            cls = get_benchmark(c.benchmark)
            res = await arun_benchmark(cls(cls.Options(**c.options)), c.settings, console=console,
                                       limiters={"model": limiters[c.model]},
                                       display=shown.cell(name) if shown is not None else None)
        except Exception as exc:  # noqa: BLE001 - one raising cell never stops the others (issue 30 item 5)
            if shown is not None:
                shown.finish_cell(name, "failed")
            return c, str(exc) if isinstance(exc, LensbenchError) else f"{type(exc).__name__}: {exc}"
        if shown is not None:
            n_err = res.counts.get("n_error", 0)
            shown.finish_cell(name, f"incomplete ({n_err} errors)" if n_err else
                              f"partial ({res.extra['partial']})" if res.extra.get("partial") else "complete")
        return c, res

    if shown is None:
        return list(await asyncio.gather(*(one(c) for c in cells)))
    with shown:
        return list(await asyncio.gather(*(one(c) for c in cells)))


def run_matrix(cfg: MatrixConfig, console=None, *, progress: bool = True,
               every_s: float = 30.0) -> list[tuple[Cell, RunResult | str]]:
    """Run every cell concurrently in one event loop, each model's cells sharing its concurrency budget.

    ``console``: where progress goes (None: nothing shown): each running cell and the whole matrix
    (:mod:`lensbench.runtime.matrix_progress`; bars on a terminal, a plain block every ``every_s``
    seconds elsewhere). A failing cell (bad data, endpoint down, a plugin raising ...) does not stop the
    others: its entry is the error message. Returns ``[(cell, RunResult | error message)]`` in cell order.
    """
    cells = expand_cells(cfg)
    check_matrix_requirements(cells, console)
    return run_async(_run_cells(cells, {m.name: m.concurrency for m in cfg.model}, console, progress, every_s))


def check_matrix_requirements(cells: list[Cell], console=None) -> None:
    """Every optional library any cell will need, checked before the first cell starts (one
    MissingExtraError naming them all with one install line; optional ones are warnings on ``console``)."""
    from lensbench.core.datahome import resolve_data_dir
    from lensbench.runtime.preflight import check_run_requirements, run_requirements

    reqs = []
    for c in cells:
        if c.error is not None:
            continue
        try:
            data_dir = resolve_data_dir(c.benchmark, c.settings.data_dir)
        except ConfigError:  # that cell fails on its own, naming the folder
            data_dir = None
        try:
            cls = get_benchmark(c.benchmark)
            bench = cls(cls.Options(**c.options))
        except ConfigError:  # a broken plugin: that cell fails on its own, naming it
            continue
        reqs += run_requirements(bench, c.settings, data_dir)
    warn = (lambda msg: console.print(msg, highlight=False, markup=False)) if console is not None else None
    check_run_requirements(reqs, warn)
    from lensbench.runtime.tracking import check_trackers

    check_trackers(sorted({t for c in cells if c.error is None for t in c.settings.log_to}))
