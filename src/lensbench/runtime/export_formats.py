"""``lensbench export RUN --format vlmevalkit-tsv|vlmevalkit-xlsx|lmms-eval``: a run as another harness's predictions.

Reads the run's ``samples.jsonl`` (one record per model call) and its benchmark's
:class:`~lensbench.core.interop.InteropMap` (``benchmarks/<name>/interop.py``), and writes:

* ``vlmevalkit-tsv`` / ``vlmevalkit-xlsx``: VLMEvalKit's predictions table (``vlmeval/inference.py``: the
  dataset's columns plus ``prediction``): ``index`` (the benchmark's own, else 0, 1, ... in run order), the
  benchmark's columns, ``prediction`` = the raw reply; a failed call is VLMEvalKit's failure message
  (:data:`~lensbench.core.interop.FAIL_MSG`), which VLMEvalKit and ``predictions:`` both count as a failure.
* ``lmms-eval``: lmms-eval's ``--log_samples`` JSONL (``lmms_eval/evaluator.py``): ``doc_id`` (run order),
  ``doc``, ``target``, ``arguments`` (the prompt text and generation parameters), ``resps`` (``[[reply]]``),
  ``filtered_resps`` (``[reply]``: lensbench applies no filter), ``doc_hash``. lmms-eval logs no failed call,
  so a failed one is left out (``predictions:`` then counts that item as missing, an error, as the run did).

``predictions:FILE`` reads either back into the same metrics (tests/interop).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lensbench.benchmarks.registry import get_benchmark
from lensbench.core.errors import ConfigError
from lensbench.core.interop import FAIL_MSG, InteropMap
from lensbench.core.jsonl import dumps_line, read_jsonl
from lensbench.core.tabular import write_table
from lensbench.core.writes import write_atomically
from lensbench.report.runs import read_manifest

__all__ = ["FORMATS", "export_foreign", "vlmevalkit_rows", "lmms_samples"]

#: ``--format`` values besides lensbench's own ``jsonl``, with the file suffix each writes
FORMATS = {"vlmevalkit-tsv": ".tsv", "vlmevalkit-xlsx": ".xlsx", "lmms-eval": ".jsonl"}


def _mapping(run_dir: Path) -> tuple[InteropMap, list[dict[str, Any]]]:
    """The run's benchmark map and its records (dicts, file order). ConfigError for a folder that is not a
    finished run, a best-of-N run (GroundingME ``--best-of``), or a benchmark with no map."""
    man = read_manifest(run_dir)
    samples = run_dir / "samples.jsonl"
    if not man or not samples.is_file():
        raise ConfigError(f"{run_dir}: no run.json and samples.jsonl (not a finished lensbench run folder)")
    name = man.get("benchmark")
    if int((man.get("options") or {}).get("best_of") or 1) > 1:
        raise ConfigError(f"{run_dir}: a best-of-N run has N replies per item; VLMEvalKit and lmms-eval rows hold one")
    mapping = get_benchmark(str(name)).interop
    if mapping is None:
        raise ConfigError(f"{run_dir}: benchmark {name!r} declares no VLMEvalKit / lmms-eval layout")
    return mapping, read_jsonl(samples, "samples file")


def _prompt(record: dict[str, Any]) -> str:
    """The text parts of a record's messages, joined by newlines."""
    return "\n".join(p.get("text", "") for m in record.get("messages") or [] for p in m.get("content") or []
                     if isinstance(p, dict) and p.get("type") == "text")


def vlmevalkit_rows(run_dir: str | Path) -> tuple[list[str], list[dict[str, Any]]]:
    """``(columns, rows)`` of the run as VLMEvalKit predictions (module docstring)."""
    mapping, records = _mapping(Path(run_dir))
    rows = []
    for i, rec in enumerate(records):
        row = {"index": i, **mapping.row(rec)}
        row["prediction"] = FAIL_MSG if rec.get("outcome") == "error" or rec.get("reply") is None else rec["reply"]
        rows.append(row)
    return ["index", *mapping.columns, "prediction"], rows


def lmms_samples(run_dir: str | Path) -> Iterator[dict[str, Any]]:
    """The run as lmms-eval ``--log_samples`` records (module docstring); failed calls left out."""
    mapping, records = _mapping(Path(run_dir))
    for i, rec in enumerate(records):
        if rec.get("outcome") == "error" or rec.get("reply") is None:
            continue
        doc = mapping.doc(rec)
        yield {"doc_id": i, "doc": doc, "target": mapping.target(rec),
               "arguments": [_prompt(rec), {"request_id": rec.get("request_id")}],
               "resps": [[rec["reply"]]], "filtered_resps": [rec["reply"]],
               "doc_hash": hashlib.sha256(json.dumps(doc, indent=2, ensure_ascii=False,
                                                     default=str).encode("utf-8")).hexdigest()}


def export_foreign(run_dir: str | Path, fmt: str, out: str | Path) -> int:
    """Write the run ``run_dir`` as ``fmt`` (a :data:`FORMATS` key) to ``out``; the number of rows written.
    Raises ConfigError for an unknown format, a suffix that does not fit it, or a folder that is not a run;
    MissingExtraError for ``vlmevalkit-xlsx`` without openpyxl."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format must be jsonl or one of {', '.join(FORMATS)}, got {fmt!r}")
    out = Path(out)
    if out.suffix.lower() != FORMATS[fmt]:
        raise ConfigError(f"--out {out}: --format {fmt} writes a {FORMATS[fmt]} file")
    if fmt == "lmms-eval":
        recs = list(lmms_samples(run_dir))
        write_atomically(out, lambda fh: fh.writelines(dumps_line(r) + "\n" for r in recs))
        return len(recs)
    columns, rows = vlmevalkit_rows(run_dir)
    tmp = out.with_name(out.name + ".tmp" + out.suffix)
    write_table(tmp, columns, rows)
    tmp.replace(out)
    return len(rows)
