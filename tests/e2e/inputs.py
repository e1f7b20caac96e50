"""Inputs that must never hang the process: data sources that are not regular
files, and a signal during the compilation of a big model."""
import os, re, signal, subprocess, time

from harness import *

ALPHABET = "abcdefghijklmnopqrstuvwxyz .,;\\n!"


def experiment(name, source, layers=2):
    """An experiment in TMP whose training loader reads `source`."""
    path = os.path.join(TMP, name + ".sx")
    with open(path, "w") as f:
        f.write(f"""(require std/nn)
(defloader train :source "{source}" :tokenizer (chars "{ALPHABET}") :seq-len 16)
(defmodel m [tokens targets]
  (cross-entropy (gpt tokens :vocab (vocab train) :d-model 16 :layers {layers} :heads 2 :seq-len 16) targets))
(defrun {name} :model m :loader train :batch 2 :steps 1 :optimizer (adamw :lr 0.001) :seed 1)
""")
    return path


def refused_quickly(sx, named):
    """`sexpgpu run sx` exits 2 with E-DATA-030 naming `named`, and does not hang."""
    t0 = time.time()
    try:
        p = subprocess.run([SEXPGPU, "run", sx], cwd=TMP, env=clean_env(), capture_output=True, text=True,
                           timeout=60)
    except subprocess.TimeoutExpired:
        fail(f"sexpgpu run {sx} still running after 60 s: it hangs on the data source")
    took = time.time() - t0
    expect(p.returncode == 2, f"exit {p.returncode}:\n{p.stderr}")
    expect("error[E-DATA-030]" in p.stderr, p.stderr)
    expect(named in p.stderr, f"the message does not name {named}:\n{p.stderr}")
    expect("help:" in p.stderr, p.stderr)
    expect(took < 30, f"took {took:.1f}s to refuse")
    return p


def case_fifo_data_source():
    """A FIFO as :source is refused at once (it used to block in open() forever)."""
    fifo = os.path.join(TMP, "stream.txt")
    os.mkfifo(fifo)
    p = refused_quickly(experiment("fifo", fifo), fifo)
    expect("a FIFO" in p.stderr, p.stderr)


def case_dev_zero_data_source():
    """/dev/zero behind a symbolic link named like a data file is refused, not read until memory runs out."""
    link = os.path.join(TMP, "zeros.txt")
    os.symlink("/dev/zero", link)
    p = refused_quickly(experiment("zeros", "zeros.txt"), "zeros.txt")
    expect("a character device" in p.stderr, p.stderr)


def loadavg_per_core():
    return os.getloadavg()[0] / (os.cpu_count() or 1)


def case_sigterm_during_big_compile():
    """SIGTERM while a 2048-layer gpt compiles: exit 143 promptly, before the first step."""
    data = os.path.join(REPO, "examples", "data", "train.txt")
    sx = experiment("big", data, layers=2048)
    status = os.path.join(TMP, "big.json")
    p = subprocess.Popen([SEXPGPU, "run", sx, "--status", status], cwd=TMP, env=clean_env(),
                         stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    # The status file says `compiling` once the run listens for signals.
    deadline = time.time() + 60
    while time.time() < deadline and not os.path.exists(status) and p.poll() is None:
        time.sleep(0.005)
    if p.poll() is not None:
        fail(f"exited {p.returncode} before the signal:\n{p.stderr.read()}")
    time.sleep(0.3)  # into the tracer, the differentiation or the planner
    load = loadavg_per_core()
    t0 = time.time()
    p.send_signal(signal.SIGTERM)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        fail("still compiling 60 s after SIGTERM")
    took = time.time() - t0
    expect(p.returncode == 143, f"exit {p.returncode}:\n{err}")
    expect(re.search(r"^stopping: SIGTERM before the first step \(\d+\.\d+s to exit\)$", err, re.M), err)
    print(f"signal to exit: {took:.3f}s (load {load:.2f} per core)")
    # 0.5 s is the promise; on a machine loaded past its cores the scheduler
    # alone can take longer, so there the time is only bounded generously.
    limit = 0.5 if load < 1.0 else 5.0
    expect(took < limit, f"{took:.2f}s from SIGTERM to the exit (load {load:.2f} per core, limit {limit}s)")


main(globals())
