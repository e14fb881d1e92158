"""retrystorm: a deterministic simulator of retry and backoff storms, from Python.

A thin layer over the Rust library: every function runs the same code as the command line
(``retrystorm run/compare/sweep/check``) and parses the very JSON the CLI writes, so the
numbers are the CLI's, byte for byte.

    >>> import retrystorm
    >>> m = retrystorm.load("models/thundering-herd.toml", set={"retry.jitter": "full"})
    >>> r = retrystorm.run(m, seed=7)
    >>> r.report["variants"][0]["summary"]["retries"]
    >>> df = retrystorm.sweep(m, vary={"retry.base": ["50ms", "1s"]}, seeds=3)

Long calls release the GIL and use every core (``jobs`` threads); Ctrl-C stops them.
Bad input raises :class:`ModelError` with the CLI's ``file:line:column: field: ...`` message.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re

from . import _native

__version__: str = _native.__version__
"""The version of the retrystorm engine these bindings run (the CLI's ``--version``)."""

__all__ = ["__version__", "ModelError", "Model", "Result", "load", "run", "compare", "sweep", "check", "flatten_record"]

_WHERE = re.compile(
    r"^(?P<path>.+?)(?::(?P<line>\d+)(?::(?P<col>\d+))?)?: (?:(?P<field>[A-Za-z_][\w.\[\]-]*): )?"
)


class ModelError(ValueError):
    """Bad input: the CLI's message (the CLI exits 2 on it).

    Attributes: ``path`` (the model file, or the flag such as ``--set retry.jitter=x``),
    ``line`` (1-based, or None), ``field`` (such as ``retry.base``, or None).
    """

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
        self.path = None
        self.line = None
        self.field = None
        m = _WHERE.match(message)
        # A place is a path without spaces (or a flag), unless a line or a field follows it.
        if m and (m.group("line") or m.group("field") or not re.search(r"\s", m.group("path"))):
            self.path = m.group("path")
            self.line = int(m.group("line")) if m.group("line") else None
            self.field = m.group("field")


def _call(f, *args):
    try:
        return f(*args)
    except _native.InputError as e:
        raise ModelError(str(e)) from None


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class Model:
    """A model file (or TOML text) with its ``set`` overrides, resolved and validated.

    ``name`` is the model's name, ``variants`` the names of its variants (the rows of
    :func:`compare`; pass one to :func:`run` as ``variant``).
    """

    def __init__(self, origin: str, text, sets: dict):
        self.origin = origin
        self.text = text
        self.sets = dict(sets)
        self.name, self.variants = _call(_native.load, origin, text, self._flags())

    def _flags(self, seed=None, seeds=None, jobs=None, max_events=None):
        flags = []
        for k, v in self.sets.items():
            flags += ["--set", f"{k}={_value(v)}"]
        for flag, v in (("--seed", seed), ("--seeds", seeds), ("--jobs", jobs), ("--max-events", max_events)):
            if v is not None:
                flags += [flag, str(v)]
        return flags

    def __repr__(self) -> str:
        return f"Model({self.name!r}, variants={self.variants!r})"


def load(path_or_toml_text, set=None) -> Model:
    """Loads a model file (a path) or TOML text, with ``set`` overrides as ``--set KEY=VALUE``.

    Raises :class:`ModelError` for a missing file or a bad model, naming file:line:field.
    """
    src = os.fspath(path_or_toml_text)
    if not os.path.exists(src) and ("\n" in src or "=" in src):
        return Model("<string>", src, set or {})
    return Model(src, None, set or {})


def _rows(rows: list):
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows)


def _number(text: str):
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


class Result:
    """The result of :func:`run`.

    ``report`` is the whole JSON report of ``retrystorm run --json`` as a dict, field for field
    (the model, the seed, and per variant its ``summary`` and ``series``); ``summary`` is the same
    dict under its first name, kept so that code using it goes on working; ``json`` is its text. ``series`` is ``run --csv``'s series (one row per bucket: ``variant``,
    ``bucket``, ``start_ms``, ``first``, ``retries``, ``arrivals``, ...) as a pandas DataFrame
    when pandas is installed, else a dict of lists; ``csv`` is its text.
    """

    def __init__(self, text: str, csv_text: str):
        self.json = text
        self.csv = csv_text
        self.report = json.loads(text)
        self.summary = self.report
        try:
            import pandas
        except ImportError:
            pandas = None
        if pandas is not None:
            self.series = pandas.read_csv(io.StringIO(csv_text))
        else:
            rows = list(csv.reader(io.StringIO(csv_text)))
            head, body = rows[0], rows[1:]
            self.series = {h: [_number(r[i]) for r in body] for i, h in enumerate(head)}

    def __repr__(self) -> str:
        return f"Result(model={self.report.get('model')!r}, seed={self.report.get('seed')!r})"


def run(model: Model, variant=None, seed=None, seeds=None, jobs=None, max_events=None) -> Result:
    """Runs the model (its base, or ``variant``) with ``seed`` (default: the model's), as
    ``retrystorm run MODEL --json - --csv -``. ``seeds=N`` gives the replicated report (means,
    CI) and the first seed's series. Ctrl-C stops the runs and raises ``KeyboardInterrupt``."""
    text, csv_text = _call(
        _native.run, model.origin, model.text, model._flags(seed, seeds, jobs, max_events), variant
    )
    return Result(text, csv_text)


def compare(model: Model, seeds=None, seed=None, jobs=None, max_events=None) -> dict:
    """Runs every variant, as ``retrystorm compare MODEL --json -`` (``seeds=N``: means and
    95% confidence intervals); returns the JSON report as a dict. Ctrl-C stops the runs and
    raises ``KeyboardInterrupt``."""
    text = _call(_native.compare, model.origin, model.text, model._flags(seed, seeds, jobs, max_events))
    return json.loads(text)


def _flatten(prefix: str, value, out: dict):
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, out)
    else:
        out[prefix] = value


def flatten_record(record: dict) -> dict:
    """One sweep JSONL record as a flat row: ``params`` become a column per key, the nested
    ``summary`` becomes dotted columns (``summary.retries``, ...)."""
    row = {}
    for k, v in record.items():
        if k == "params":
            for key, val in v:
                row[key] = val
        else:
            _flatten(k, v, row)
    return row


def sweep(model: Model, vary: dict, seeds=None, jobs=None, seed=None, max_events=None):
    """Runs the grid of ``vary`` (``{"retry.base": ["50ms", "1s"]}`` or a range string
    ``"10ms..1s:10ms"``, FROM..TO:STEP as ``--vary`` takes it) x variants x seeds, as ``retrystorm sweep``.

    Returns one row per run (the CLI's sweep JSON Lines records, flattened by
    :func:`flatten_record`) as a DataFrame, or a list of dicts without pandas. The header line
    is in ``.attrs["header"]`` of the DataFrame. Ctrl-C stops it.
    """
    axes = []
    for k, v in vary.items():
        vals = v if isinstance(v, str) else ",".join(_value(x) for x in v)
        axes.append(f"{k}={vals}")
    lines, _complete = _call(
        _native.sweep, model.origin, model.text, model._flags(seed, seeds, jobs, max_events), axes
    )
    header = json.loads(lines[0])
    rows = [flatten_record(json.loads(l)) for l in lines[1:]]
    out = _rows(rows)
    if hasattr(out, "attrs"):
        out.attrs["header"] = header
    return out


def check(model: Model, seeds=None, expect=None, seed=None, jobs=None, max_events=None) -> dict:
    """Evaluates the model's ``[[expect]]`` tables (and ``expect``, a list of ``--expect``
    expressions) over ``seeds``, as ``retrystorm check``: a dict with ``checks`` (each
    expectation on each variant: ``passed``, ``seen``, ``values``, ``reproduce``), ``failed``,
    ``passed``, ``verdict`` (the CLI's verdict line) and ``text`` (the lines it prints)."""
    text = _call(
        _native.check, model.origin, model.text, model._flags(seed, seeds, jobs, max_events), list(expect or [])
    )
    return json.loads(text)
