"""End-to-end checks of what errors leave behind: the status file and the
metrics' error event, as docs/status.md and docs/metrics.md describe them.

    python3 tests/e2e/errors.py SEXPGPU REPO CASE
"""
import json, os

from harness import TMP, expect, jsonl, main, run


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def case_missing_data_status_failed():
    """A data file that is missing refuses the run (exit 2) and leaves the status file `failed` with the error."""
    sx = write("nodata.sx", """
(defloader train :source "no-such-data.txt" :tokenizer bytes :seq-len 8)
(defmodel m [tokens targets] (cross-entropy (embed tokens (param "w" [256 256])) targets))
(defrun nodata :model m :loader train :batch 2 :steps 1 :optimizer (sgd :lr 0.1))
""")
    status = os.path.join(TMP, "nodata.json")
    p = run("run", sx, "--status", status, check_rc=2)
    expect("error[E-DATA-001]" in p.stderr, p.stderr)
    s = json.load(open(status))
    expect(s["state"] == "failed", f"status state {s['state']}, expected failed: {s}")
    expect(s["error"] is not None and s["error"]["code"] == "E-DATA-001" and s["summary"] is None, str(s))
    # Found after the file compiled: the status holds the compiled run's steps and knobs.
    expect(s["steps"] == 1 and s["slug"] == "nodata" and any(k["name"] == "batch" for k in s["knobs"]), str(s))


def case_nonfinite_error_step():
    """The metrics' `error` event of a non-finite loss carries the failing step, as its message says."""
    metrics = os.path.join(TMP, "nf.jsonl")
    run("run", "tests/e2e/nonfinite.sx", "--metrics", "jsonl:" + metrics, check_rc=1)
    events = [r for r in jsonl(metrics) if r["kind"] == "event"]
    nonfinite = [e for e in events if e["event"] == "nonfinite"]
    error = [e for e in events if e["event"] == "error"]
    expect(len(nonfinite) == 1 and len(error) == 1, str(events))
    expect(error[0]["message"] == "train/loss is not finite at step 1", str(error[0]))
    expect(nonfinite[0]["step"] == 1 and error[0]["step"] == 1, str(events))


def case_directory_refused():
    """`run`, `check`, `knobs` and `explain` of a directory: E-READ-020, exit 2, nothing else."""
    for command in ("run", "check", "knobs", "explain"):
        p = run(command, "examples", check_rc=2)
        expect(p.stderr.startswith("error[E-READ-020]: expected an .sx file at examples, found a directory"),
               f"{command}: {p.stderr}")
        expect(p.stdout == "", f"{command}: {p.stdout}")


main(globals())
