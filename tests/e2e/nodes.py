"""Several nodes on loopback (docs/nodes.md): real `sexpgpu run` processes meeting at a rendezvous, their numbers
against one process's, signals, and nodes that die, hang, never come or lose their network."""
import os, re, shutil, signal, subprocess, time
from harness import *

SX = "tests/e2e/nodes.sx"
FILES = ("model.safetensors", "optimizer.safetensors")


def node_env(rank, nodes, port, extra=None, host="127.0.0.1"):
    e = {"SEXPGPU_NODES": str(nodes), "SEXPGPU_NODE_RANK": str(rank), "SEXPGPU_RENDEZVOUS": f"{host}:{port}",
         "SEXPGPU_NODE_TIMEOUT": "20", "SEXPGPU_THREADS": "1"}
    e.update(extra or {})
    return e


def start_nodes(nodes, args, extra=None, per_rank=None):
    """`nodes` processes of `sexpgpu run SX args`, rank 0 first; per_rank(r) adds arguments to rank r's."""
    port = free_port()
    procs = []
    for r in range(nodes):
        cmd = [SEXPGPU, "run", SX, *args, *((per_rank or (lambda r: []))(r))]
        procs.append(subprocess.Popen(cmd, cwd=REPO,
                                      env=clean_env(node_env(r, nodes, port, extra)),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    return procs


def finish(procs, timeout=300):
    out = []
    for p in procs:
        o, e = p.communicate(timeout=timeout)
        out.append((p.returncode, o, e))
    return out


def one_process(name, micro, steps=None, device_args=(), env=None):
    """One process with `micro` microbatches: its records and final checkpoint files."""
    ck, m = os.path.join(TMP, name + "-ck"), os.path.join(TMP, name + ".jsonl")
    args = ["run", SX, "--set", f"micro={micro}", "--checkpoint-dir", ck, "--metrics", "jsonl:" + m, *device_args]
    run(*args, *(["--steps", str(steps)] if steps else []), env={"SEXPGPU_THREADS": "1", **(env or {})})
    return latest_records(m), final_files(ck)


def final_files(ck, step=12):
    """The tensor files of step-<step> in the one run folder under `ck` (its slug names the knobs set)."""
    (slug,) = os.listdir(ck)
    d = os.path.join(ck, slug, f"step-{step}")
    return {f: open(os.path.join(d, f), "rb").read() for f in FILES}


def same_numbers(got, want, what):
    expect(sorted(got) == sorted(want), f"{what}: records differ: {sorted(set(got) ^ set(want))}")
    for key in want:
        g = {k: v for k, v in got[key].items() if k != "exchange_s"}
        w = {k: v for k, v in want[key].items()}
        expect(g == w, f"{what}: {key}: {g} != {w}")


def wait_steps(metrics, n, procs, deadline_s=120, poll_s=0.02):
    deadline = time.time() + deadline_s
    while time.time() < deadline and steps_written(metrics) < n:
        if any(p.poll() is not None for p in procs):
            break
        time.sleep(poll_s)
    expect(steps_written(metrics) >= n, f"fewer than {n} steps written")


def checkpoints_in(ck):
    d = os.path.join(ck, "nodes")
    return sorted(x for x in os.listdir(d) if x.startswith("step-")) if os.path.isdir(d) else []


def case_nodes_equal_one_process():
    """2 and 3 nodes of one microbatch each: the losses, evals and final checkpoint bytes of one process of 2 and
    3 microbatches, bit for bit; every node prints its run line with its rank, node 0 alone the rest."""
    for nodes in (2, 3):
        want, want_files = one_process(f"one-{nodes}", nodes)
        ck, m = os.path.join(TMP, f"nodes{nodes}-ck"), os.path.join(TMP, f"nodes{nodes}.jsonl")
        res = finish(start_nodes(nodes, ["--checkpoint-dir", ck, "--metrics", "jsonl:" + m]))
        for r, (rc, out, err) in enumerate(res):
            expect(rc == 0, f"node {r}: exit {rc}\n{err}")
            expect(re.search(rf"^run: {SX} slug nodes .* node {r}/{nodes}$", err, re.M), err)
            expect(("step 12/12 loss" in err) == (r == 0), f"node {r}:\n{err}")
        same_numbers(latest_records(m), want, f"{nodes} nodes")
        expect(final_files(ck) == want_files, f"{nodes} nodes: the final checkpoint's tensors differ")


def case_nodes_cuda_equal_one_process():
    """Nodes on --device cuda (the emulated GPU here), one GPU each, their gradients crossing with Gloo through the
    host: 2 nodes of one microbatch end with the bits of one cuda process of 2."""
    emulate = {"SEXPGPU_CUDA_EMULATE": "1"}
    want, want_files = one_process("one-cuda-2", 2, device_args=("--device", "cuda"), env=emulate)
    ck, m = os.path.join(TMP, "cuda-nodes-ck"), os.path.join(TMP, "cuda-nodes.jsonl")
    res = finish(start_nodes(2, ["--device", "cuda", "--checkpoint-dir", ck, "--metrics", "jsonl:" + m],
                             extra=emulate))
    for r, (rc, out, err) in enumerate(res):
        expect(rc == 0, f"node {r}: exit {rc}\n{err}")
        expect(re.search(rf"^run: {SX} slug nodes device cuda .* node {r}/2$", err, re.M), err)
    same_numbers(latest_records(m), want, "2 cuda nodes")
    expect(final_files(ck) == want_files, "2 cuda nodes: the final checkpoint's tensors differ")


def case_nodes_of_several_gpus():
    """2 nodes of 2 (emulated) GPUs each, one microbatch a GPU: the bits of one GPU of 4 microbatches (GPU g of
    node n is the step's microbatch 2n + g); SIGTERM to one node stops both at one step and the resumed run ends the
    same; kill -9 of a node stops the other with E-NODE-004; a batch that does not divide over nodes x GPUs x
    microbatches is refused (E-NODE-005), and so are nodes of different numbers of GPUs, on both (E-NODE-002)."""
    gpus = {"SEXPGPU_CUDA_EMULATE": "2"}
    cuda = ["--device", "cuda"]
    want, want_files = one_process("one-cuda-4", 4, device_args=cuda, env={"SEXPGPU_CUDA_EMULATE": "1"})
    ck, m = os.path.join(TMP, "gpu-nodes-ck"), os.path.join(TMP, "gpu-nodes.jsonl")
    res = finish(start_nodes(2, [*cuda, "--checkpoint-dir", ck, "--metrics", "jsonl:" + m], extra=gpus))
    for r, (rc, out, err) in enumerate(res):
        expect(rc == 0, f"node {r}: exit {rc}\n{err}")
        expect(re.search(rf"^run: {SX} slug nodes device cuda .* node {r}/2 devices 0,1$", err, re.M), err)
    same_numbers(latest_records(m), want, "2 nodes of 2 GPUs")
    expect(final_files(ck) == want_files, "2 nodes of 2 GPUs: the final checkpoint's tensors differ")

    ck, m = os.path.join(TMP, "gpu-term-ck"), os.path.join(TMP, "gpu-term.jsonl")
    args = [*cuda, "--checkpoint-dir", ck, "--resume", "latest", "--metrics", "jsonl:" + m]
    procs = start_nodes(2, args, extra=gpus)
    wait_steps(m, 2, procs, poll_s=0.001)
    procs[1].send_signal(signal.SIGSTOP)
    procs[1].send_signal(signal.SIGTERM)
    procs[1].send_signal(signal.SIGCONT)
    steps = []
    for r, (rc, out, err) in enumerate(finish(procs, timeout=120)):
        expect(rc == 143, f"node {r}: exit {rc}\n{err}")
        s = re.search(r"^stopping: SIGTERM at step (\d+)", err, re.M)
        expect(s, f"node {r}:\n{err}")
        steps.append(int(s.group(1)))
    expect(steps[0] == steps[1] < 12, f"stopped at steps {steps}")
    expect(f"step-{steps[0]}" in checkpoints_in(ck), str(checkpoints_in(ck)))
    for r, (rc, out, err) in enumerate(finish(start_nodes(2, args, extra=gpus))):
        expect(rc == 0 and "resume latest=" in err, f"node {r}: exit {rc}\n{err}")
    same_numbers(latest_records(m), want, "2 nodes of 2 GPUs, resumed")
    expect(final_files(ck) == want_files, "2 nodes of 2 GPUs, resumed: the final checkpoint's tensors differ")

    m = os.path.join(TMP, "gpu-kill.jsonl")
    procs = start_nodes(2, [*cuda, "--steps", "100000", "--metrics", "jsonl:" + m],
                        extra={**gpus, "SEXPGPU_NODE_TIMEOUT": "60"})
    wait_steps(m, 4, procs)
    t0 = time.time()
    procs[1].kill()
    out, err = procs[0].communicate(timeout=120)
    procs[1].communicate()
    expect(procs[0].returncode == 1, f"node 0: exit {procs[0].returncode}\n{err}")
    expect(re.search(r"^error\[E-NODE-004\]: node 0 lost node 1: ", err, re.M), err)
    expect(time.time() - t0 < 20, f"node 0 took {time.time() - t0:.1f}s")

    p = run("run", SX, *cuda, "--set", "micro=2", env={**node_env(0, 2, free_port()), **gpus}, check_rc=2)
    expect(p.stderr.startswith("error[E-NODE-005]: defrun `nodes`: :batch 12 does not divide over 2 nodes of 2 GPUs of "
                               ":microbatches 2 (2 x 2 x 2 = 8 shares)"), p.stderr)

    port = free_port()
    procs = [subprocess.Popen([SEXPGPU, "run", SX, *cuda], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env=clean_env(node_env(r, 2, port, {**gpus, **({"SEXPGPU_DEVICES": "1"} if r
                                                                                        else {})})))
             for r in range(2)]
    for r, (rc, out, err) in enumerate(finish(procs)):
        expect(rc == 2, f"node {r}: exit {rc}\n{err}")
        expect("error[E-NODE-002]" in err and "the number of GPUs (SEXPGPU_DEVICES) is 1 on node 1 but 2 on node 0"
               in err, f"node {r}:\n{err}")


def case_nodes_bf16_and_other_splits():
    """bf16 gradients across nodes learn and differ from f32's; 2 nodes of 3 microbatches agree with one process
    of 6 to 1e-5 (only the order of additions differs)."""
    want, _ = one_process("one-6", 6)
    m = os.path.join(TMP, "split.jsonl")
    res = finish(start_nodes(2, ["--set", "micro=3", "--metrics", "jsonl:" + m]))
    expect(all(rc == 0 for rc, _, _ in res), res[0][2] + res[1][2])
    got = latest_records(m)
    for key in want:
        for k, v in want[key].items():
            if k.startswith(("train/", "eval/")):
                expect(abs(got[key][k] - v) <= 1e-5 * max(1.0, abs(v)), f"{key} {k}: {got[key][k]} vs {v}")
    mb = os.path.join(TMP, "bf16.jsonl")
    res = finish(start_nodes(2, ["--metrics", "jsonl:" + mb], extra={"SEXPGPU_NODE_GRADIENTS": "bf16"}))
    expect(all(rc == 0 for rc, _, _ in res), res[0][2] + res[1][2])
    f32, _ = one_process("one-2b", 2)
    b = latest_records(mb)
    last = ("step", None, 12)
    expect(b[last]["train/loss"] != f32[last]["train/loss"], "bf16 gradients gave f32's bits")
    expect(abs(b[last]["train/loss"] - f32[last]["train/loss"]) < 0.1, f"{b[last]} vs {f32[last]}")
    expect(b[("step", None, 12)]["train/loss"] < b[("step", None, 1)]["train/loss"], "bf16 did not learn")


def case_nodes_batch_does_not_divide():
    """A batch that does not divide over the nodes is refused before step 1, naming the sizes."""
    p = run("run", SX, "--set", "micro=2", env=node_env(0, 5, free_port()), check_rc=2)
    expect(p.stderr.startswith("error[E-NODE-005]: defrun `nodes`: :batch 12 does not divide over 5 nodes of "
                               ":microbatches 2"), p.stderr)


def case_nodes_knob_mismatch():
    """A knob that differs is refused on both nodes, naming it and both values (exit 2)."""
    res = finish(start_nodes(2, [], per_rank=lambda r: ["--set", "lr=0.02"] if r == 1 else []))
    for r, (rc, out, err) in enumerate(res):
        expect(rc == 2, f"node {r}: exit {rc}\n{err}")
        expect(err.startswith("error[E-NODE-002]: the nodes disagree: knob lr is 0.02 on node 1 but 0.01 on node 0"),
               f"node {r}: {err}")


def case_nodes_never_comes():
    """Node 0 alone gives up within SEXPGPU_NODE_TIMEOUT naming the missing rank; a node without node 0 too."""
    for rank in (0, 1):
        t0 = time.time()
        p = run("run", SX, env=node_env(rank, 2, free_port(), {"SEXPGPU_NODE_TIMEOUT": "2"}), check_rc=2)
        took = time.time() - t0
        expect(took < 30, f"took {took:.1f}s")
        want = "error[E-NODE-003]: node 1 did not arrive" if rank == 0 else "error[E-NODE-003]: node 0 could not be"
        expect(p.stderr.startswith(want), p.stderr)


def lost_node(sig, timeout_s, within_s, at_least_s=0.0):
    ck, m = os.path.join(TMP, f"lost{sig}-ck"), os.path.join(TMP, f"lost{sig}.jsonl")
    procs = start_nodes(3, ["--steps", "100000", "--checkpoint-dir", ck, "--metrics", "jsonl:" + m],
                        extra={"SEXPGPU_NODE_TIMEOUT": str(timeout_s)})
    wait_steps(m, 6, procs)
    t0 = time.time()
    procs[1].send_signal(sig)
    for r in (0, 2):
        out, err = procs[r].communicate(timeout=120)
        took = time.time() - t0
        expect(procs[r].returncode == 1, f"node {r}: exit {procs[r].returncode}\n{err}")
        expect(re.search(rf"^error\[E-NODE-004\]: node {r} lost node 1: ", err, re.M), f"node {r}:\n{err}")
        expect(at_least_s <= took < within_s, f"node {r} took {took:.1f}s\n{err}")
    procs[1].kill()
    procs[1].communicate()
    # The last complete checkpoint stays and loads: the nodes resume from it.
    cks = checkpoints_in(ck)
    expect(cks, "no checkpoint")
    last = max(int(c[5:]) for c in cks)
    res = finish(start_nodes(3, ["--steps", str(last + 1), "--checkpoint-dir", ck, "--resume", "latest"]))
    for r, (rc, out, err) in enumerate(res):
        expect(rc == 0 and f"resume latest=" in err, f"node {r}: exit {rc}\n{err}")
    expect(f"resume: from " in res[0][2] and f"step {last + 1}/{last + 1} loss" in res[0][2], res[0][2])


def case_nodes_kill9():
    """kill -9 of one node of three: the others stop with E-NODE-004 naming it, well inside the timeout."""
    lost_node(signal.SIGKILL, 60, 20)


def case_nodes_sigstop():
    """SIGSTOP of one node: the others stop with E-NODE-004 naming it once the timeout has passed."""
    lost_node(signal.SIGSTOP, 5, 40, at_least_s=3.0)


def case_nodes_sigterm_and_resume():
    """SIGTERM to node 1 of 2: both stop at the same step, exit 143, one checkpoint; resumed with latest the run
    ends as the uninterrupted one (and as one process of 2 microbatches)."""
    want, want_files = one_process("one-r", 2)
    ck, m = os.path.join(TMP, "term-ck"), os.path.join(TMP, "term.jsonl")
    args = ["--checkpoint-dir", ck, "--resume", "latest", "--metrics", "jsonl:" + m]
    procs = start_nodes(2, args)
    # A step takes milliseconds: node 1 is frozen first (node 0 then waits for its gradients), so that the run
    # cannot end before the SIGTERM, which node 1 takes when it continues.
    wait_steps(m, 2, procs, poll_s=0.001)
    procs[1].send_signal(signal.SIGSTOP)
    procs[1].send_signal(signal.SIGTERM)
    procs[1].send_signal(signal.SIGCONT)
    res = finish(procs, timeout=120)
    steps = []
    for r, (rc, out, err) in enumerate(res):
        expect(rc == 143, f"node {r}: exit {rc}\n{err}")
        s = re.search(r"^stopping: SIGTERM at step (\d+)", err, re.M)
        expect(s, f"node {r}:\n{err}")
        steps.append(int(s.group(1)))
    expect(steps[0] == steps[1], f"stopped at steps {steps}")
    expect(f"checkpoint step-{steps[0]} -> " in res[0][2] or steps[0] % 4 == 0, res[0][2])
    expect(f"step-{steps[0]}" in checkpoints_in(ck), str(checkpoints_in(ck)))
    expect(steps[0] < 12, "the run ended before the signal")
    res = finish(start_nodes(2, args))
    for r, (rc, out, err) in enumerate(res):
        expect(rc == 0, f"node {r}: exit {rc}\n{err}")
        expect(f"resume latest=" in err, err)
    same_numbers(latest_records(m), want, "resumed")
    expect(final_files(ck) == want_files, "the resumed run's final tensors differ")


def case_nodes_netns_cut():
    """One node in each of two network namespaces joined by a veth pair; the link cut mid-run: both stop with
    E-NODE-004 within the timeout. Skipped where not root or `ip netns` does not work."""
    if os.geteuid() != 0 or not shutil.which("ip"):
        print("SKIP: needs root and ip")
        return
    tag = str(os.getpid() % 100000)
    ns = [f"sxa{tag}", f"sxb{tag}"]
    veth = [f"sxva{tag}", f"sxvb{tag}"]
    addr = ["198.18.0.1", "198.18.0.2"]  # the benchmarking range, only inside these namespaces

    def ip(*a):
        return subprocess.run(["ip", *a], capture_output=True, text=True)

    try:
        for n in ns:
            if ip("netns", "add", n).returncode != 0:
                print("SKIP: ip netns add failed")
                return
        if ip("link", "add", veth[0], "netns", ns[0], "type", "veth", "peer", "name", veth[1], "netns",
              ns[1]).returncode != 0:
            print("SKIP: no veth")
            return
        for n, v, a in zip(ns, veth, addr):
            ip("-n", n, "addr", "add", a + "/24", "dev", v)
            ip("-n", n, "link", "set", v, "up")
            ip("-n", n, "link", "set", "lo", "up")
        m = os.path.join(TMP, "netns.jsonl")
        port = free_port()
        procs = []
        for r in range(2):
            env = clean_env(node_env(r, 2, port, {"SEXPGPU_NODE_TIMEOUT": "6"}, host=addr[0]))
            procs.append(subprocess.Popen(["ip", "netns", "exec", ns[r], SEXPGPU, "run", SX, "--steps", "100000",
                                           "--metrics", "jsonl:" + m], cwd=REPO, env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        wait_steps(m, 4, procs)
        t0 = time.time()
        ip("-n", ns[0], "link", "set", veth[0], "down")
        for r in (0, 1):
            out, err = procs[r].communicate(timeout=120)
            took = time.time() - t0
            expect(procs[r].returncode == 1, f"node {r}: exit {procs[r].returncode}\n{err}")
            expect(re.search(rf"^error\[E-NODE-004\]: node {r} lost node {1 - r}: ", err, re.M), f"node {r}:\n{err}")
            expect(took < 60, f"node {r} took {took:.1f}s")
    finally:
        for n in ns:
            ip("netns", "del", n)


main(globals())
