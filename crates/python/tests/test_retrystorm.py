"""The Python package against the CLI: the same model and seed give the same JSON."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import retrystorm

ROOT = Path(__file__).resolve().parents[3]
BIN = os.environ.get("RETRYSTORM_BIN", str(ROOT / "target" / "debug" / "retrystorm"))
HERD = str(ROOT / "models" / "thundering-herd.toml")
THREE = str(ROOT / "models" / "three-clients.toml")
LONG = str(ROOT / "tests" / "fixtures" / "long.toml")


def cli(*args, ok=(0,)):
    p = subprocess.run([BIN, "-q", *args], capture_output=True, text=True)
    assert p.returncode in ok, p.stderr
    return p


def canon(obj):
    return json.dumps(obj, sort_keys=True)


def test_run_summary_is_the_cli_json(tmp_path):
    out = tmp_path / "r.json"
    cli("run", HERD, "--seed", "7", "--set", "retry.jitter=full", "--json", str(out))
    m = retrystorm.load(HERD, set={"retry.jitter": "full"})
    r = retrystorm.run(m, seed=7)
    assert canon(r.summary) == canon(json.loads(out.read_text()))
    assert r.json == out.read_text()


def test_run_variant_and_series(tmp_path):
    m = retrystorm.load(THREE)
    assert len(m.variants) > 1
    v = m.variants[1]
    out, csv = tmp_path / "r.json", tmp_path / "r.csv"
    cli("run", THREE, "--variant", v, "--json", str(out), "--csv", str(csv))
    r = retrystorm.run(m, variant=v)
    assert canon(r.summary) == canon(json.loads(out.read_text()))
    assert r.csv == csv.read_text()
    series = r.summary["variants"][0]["series"]
    assert list(r.series["retries"]) == series["retries"]
    assert list(r.series["first"]) == series["first"]
    assert set(r.series["variant"]) == {v}


def test_compare_is_the_cli_json(tmp_path):
    out = tmp_path / "c.json"
    cli("compare", THREE, "--seeds", "2", "--json", str(out))
    got = retrystorm.compare(retrystorm.load(THREE), seeds=2)
    assert canon(got) == canon(json.loads(out.read_text()))


def test_sweep_rows_are_the_cli_jsonl(tmp_path):
    out = tmp_path / "s.jsonl"
    cli("sweep", HERD, "--vary", "retry.base=50ms,1s", "--seeds", "3", "--out", str(out))
    lines = out.read_text().splitlines()
    want = [retrystorm.flatten_record(json.loads(l)) for l in lines[1:]]
    m = retrystorm.load(HERD)
    df = retrystorm.sweep(m, vary={"retry.base": ["50ms", "1s"]}, seeds=3, jobs=2)
    n = 3 * len(m.variants)
    assert len(df) == len(want) == 2 * n
    assert canon(df.to_dict("records")) == canon(want)
    assert canon(df.attrs["header"]) == canon(json.loads(lines[0]))
    assert list(df["retry.base"]) == ["50ms"] * n + ["1s"] * n


def test_sweep_without_pandas_is_a_list(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    m = retrystorm.load(HERD)
    rows = retrystorm.sweep(m, vary={"retry.base": ["50ms", "1s"]})
    n = len(m.variants)
    assert isinstance(rows, list) and len(rows) == 2 * n
    assert [r["retry.base"] for r in rows] == ["50ms"] * n + ["1s"] * n
    r = retrystorm.run(retrystorm.load(HERD))
    assert isinstance(r.series, dict)
    assert r.series["retries"] == r.summary["variants"][0]["series"]["retries"]


def test_check_is_the_cli_verdict():
    p = cli("check", THREE, "--seeds", "2", ok=(0, 1))
    got = retrystorm.check(retrystorm.load(THREE), seeds=2)
    assert got["passed"] == (p.returncode == 0)
    assert got["verdict"] in p.stdout + p.stderr
    assert got["checks"] and all("passed" in c and "seen" in c for c in got["checks"])
    # The lines `check` prints (quiet: only failures).
    assert got["seeds"] == [got["seeds"][0] + i for i in range(2)]


def test_check_expect_fails_as_cli_does():
    p = cli("check", HERD, "--expect", "retries < 1", ok=(1,))
    got = retrystorm.check(retrystorm.load(HERD), expect=["retries < 1"])
    assert not got["passed"] and got["failed"] == 1
    assert got["verdict"] in p.stderr + p.stdout


def test_bad_field_names_line_and_field():
    with pytest.raises(retrystorm.ModelError) as e:
        retrystorm.load('name = "m"\n[retry]\nbase = "abc"\n')
    assert isinstance(e.value, ValueError)
    assert e.value.path == "<string>"
    assert e.value.line == 3
    assert e.value.field == "retry.base"
    assert str(e.value).startswith("<string>:3:1: retry.base: ")


def test_bad_file_message_is_the_cli_one(tmp_path):
    m = tmp_path / "m.toml"
    m.write_text("[retry]\njiter = \"full\"\n")
    p = cli("run", str(m), ok=(2,))
    with pytest.raises(retrystorm.ModelError) as e:
        retrystorm.load(str(m))
    assert p.stderr.strip() == f"error: {e.value}"
    assert (e.value.path, e.value.line, e.value.field) == (str(m), 2, "retry.jiter")


def test_bad_set_and_missing_file_and_variant():
    with pytest.raises(retrystorm.ModelError) as e:
        retrystorm.load(HERD, set={"retry.jitter": "fulll"})
    assert e.value.field == "retry.jitter" and e.value.line is None
    assert "did you mean `full`" in str(e.value)
    with pytest.raises(retrystorm.ModelError) as e:
        retrystorm.load("no/such/model.toml")
    assert e.value.path == "no/such/model.toml" and "cannot read" in str(e.value)
    with pytest.raises(retrystorm.ModelError, match="no such variant"):
        retrystorm.run(retrystorm.load(THREE), variant="nope")


def interrupted(code, timeout):
    """Runs `code` in a child Python that prints `started` before its work, sends it SIGINT a
    second later, and returns its exit code and what it printed after `started`."""
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "started"
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=timeout)
    return p.returncode, out


def test_ctrl_c_stops_a_sweep():
    code = (
        "import retrystorm, sys\n"
        f"m = retrystorm.load({HERD!r})\n"
        "print('started', flush=True)\n"
        "try:\n"
        "    retrystorm.sweep(m, vary={'retry.base': [f'{i}ms' for i in range(1, 201)]}, seeds=100, jobs=1)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "    sys.exit(3)\n"
    )
    # 80,000 runs would take minutes; the interrupt lands within the 50 ms poll.
    rc, out = interrupted(code, timeout=20)
    assert rc == 3 and "interrupted" in out


@pytest.mark.parametrize("call", ["run", "compare"])
def test_ctrl_c_stops_a_long_run(call):
    # 360 M intents: minutes of work. After Ctrl-C the runs stop at their next progress point
    # and summarise what they reached (the direct path sorts its records then: about 1.5 s
    # after a second of running), so the process stops using CPU within a few seconds (before,
    # the run went on in the background for minutes).
    code = (
        "import retrystorm, sys, time\n"
        f"m = retrystorm.load({LONG!r})\n"
        "print('started', flush=True)\n"
        "try:\n"
        f"    retrystorm.{call}(m, jobs=1)\n"
        "except KeyboardInterrupt:\n"
        "    time.sleep(5.0)\n"
        "    t = time.process_time()\n"
        "    time.sleep(1.0)\n"
        "    print('interrupted', time.process_time() - t, flush=True)\n"
        "    sys.exit(3)\n"
    )
    rc, out = interrupted(code, timeout=30)
    assert rc == 3, out
    word, cpu = out.split()
    assert word == "interrupted"
    assert float(cpu) < 0.3, f"{call}: {cpu} s of CPU in the second after the interrupt"


def test_bad_flag_value_is_a_model_error():
    with pytest.raises(retrystorm.ModelError) as e:
        retrystorm.run(retrystorm.load(HERD), seeds=0)
    assert "--seeds" in str(e.value) and not str(e.value).startswith("error:")
    assert (e.value.path, e.value.line, e.value.field) == (None, None, None)
