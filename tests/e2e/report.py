#!/usr/bin/env python3
"""End-to-end tests of `sexpgpu report`: the page opened in headless Chromium
(no network) for a single run, a run killed and resumed from latest, and a
4-run sweep — no console errors, each curve's point count equal to the
records, a screenshot that is a PNG of more than one colour, HTML that
validates (an independent parser, and tidy); a slug or knob value with a
<script> shown escaped; the refusals E-CLI-061 and E-CLI-062.

    report.py SEXPGPU REPO CASE

Without Chromium a case that needs it exits 77, which ctest shows as skipped.
"""
import html.parser, json, os, re, shutil, signal, struct, subprocess, sys, tempfile, time, zlib

from harness import REPO, SEXPGPU, TMP, clean_env, expect, fail, jsonl, latest_records, main, run

SX = "tests/e2e/sweep.sx"
SKIP = 77


def chromium_exe():
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("SKIP: chromium is not installed (scripts/setup.sh installs Debian's chromium)")
        sys.exit(SKIP)
    return exe


def chromium(page, *args):
    """Headless Chromium on `page` with no network (a proxy on a closed port): its stdout and stderr."""
    profile = tempfile.mkdtemp(dir=TMP, prefix="chromium-")
    cmd = [chromium_exe(), "--headless", "--no-sandbox", "--disable-gpu", "--proxy-server=127.0.0.1:9",
           f"--user-data-dir={profile}", "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--enable-logging=stderr", "--v=0", *args, "file://" + page]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    expect(p.returncode == 0, f"chromium exit {p.returncode}:\n{p.stderr[-3000:]}")
    return p.stdout, p.stderr


# What Chromium logs of the page's console: every console message and every uncaught error.
CONSOLE = re.compile(r":CONSOLE[(:]\d*\)?\] .*")


def console_lines(stderr):
    return CONSOLE.findall(stderr)


def dom(page):
    return dom_at(page)


def dom_at(page, *args):
    """The page after its scripts ran (--dump-dom), checked to have no console message."""
    out, err = chromium(page, "--dump-dom", *args)
    expect(not console_lines(err), "console messages:\n" + "\n".join(console_lines(err)))
    expect('data-ready="1"' in out.split(">", 2)[1], "the page's script did not run to its end:\n" + out[:400])
    return out


class StrictParser(html.parser.HTMLParser):
    """Every element closed in order (void ones excepted), no duplicate id, attributes quoted by the parser."""
    VOID = {"meta", "link", "br", "hr", "img", "input", "source", "wbr", "col", "area", "base", "embed", "track"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.ids, self.errors, self.tags = [], set(), [], {}

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for k, v in attrs:
            if k == "id":
                if v in self.ids:
                    self.errors.append(f"duplicate id {v}")
                self.ids.add(v)
        if tag not in self.VOID:
            self.stack.append((tag, self.getpos()))

    def handle_startendtag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.errors.append(f"</{tag}> at {self.getpos()} closes {self.stack[-1] if self.stack else 'nothing'}")
            return
        self.stack.pop()


def validate(page):
    text = open(page, encoding="utf-8").read()
    expect(text.startswith("<!DOCTYPE html>\n"), "the page starts with its doctype")
    p = StrictParser()
    p.feed(text)
    p.close()
    expect(not p.errors and not p.stack, f"the HTML is not well formed: {p.errors} unclosed {p.stack}")
    for external in ("http:", "https:", "src=", "<link", "url(", "@import"):
        expect(external not in text, f"the page refers to something outside it ({external})")
    if shutil.which("tidy"):
        t = subprocess.run(["tidy", "-errors", "-q", page], capture_output=True, text=True)
        expect(t.returncode == 0, "tidy finds errors or warnings:\n" + t.stderr)
    else:
        fail("tidy is not installed (scripts/setup.sh installs it)")
    return p.tags


def with_script(page, js, name):
    """A copy of `page` that runs `js` after the page's own script (the page itself is left as it is)."""
    copy = os.path.join(TMP, name)
    text = open(page, encoding="utf-8").read()
    expect(text.count("</body>") == 1, "one </body>")
    open(copy, "w", encoding="utf-8").write(text.replace("</body>", f"<script>{js}</script>\n</body>"))
    return copy


def report(*args, check_rc=0):
    return run("report", *args, check_rc=check_rc)


def png_pixels(path):
    """(width, height, rows of RGB(A) byte tuples) of an 8-bit RGB or RGBA PNG, decoded with zlib alone."""
    data = open(path, "rb").read()
    expect(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
    at, idat, width = 8, b"", 0
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        expect(zlib.crc32(kind + body) == struct.unpack(">I", data[at + 8 + n:at + 12 + n])[0], "a PNG chunk's CRC")
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            expect(depth == 8 and colour in (2, 6), f"an 8-bit RGB(A) PNG, found depth {depth} colour {colour}")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        at += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a, b, c = (line[i - bpp] if i >= bpp else 0), prev[i], (prev[i - bpp] if i >= bpp else 0)
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, [[tuple(r[i:i + 3]) for i in range(0, stride, bpp)] for r in rows]


def check_screenshot(path, dark=False):
    """A PNG of more than one flat colour, whose background is the theme's, with a series' colour in it."""
    w, h, rows = png_pixels(path)
    counts = {}
    for r in rows:
        for px in r:
            counts[px] = counts.get(px, 0) + 1
    background, most = max(counts.items(), key=lambda kv: kv[1])
    expect(len(counts) > 16 and most < 0.97 * w * h, f"the screenshot is (nearly) one flat colour: {len(counts)} colours")
    light = sum(background) / 3
    expect(light < 60 if dark else light > 200, f"the background {background} is not the {'dark' if dark else 'light'} theme's")
    # The first run's colour (--c0), where its curve is drawn.
    c0 = (0x58, 0xa6, 0xff) if dark else (0x1f, 0x6f, 0xeb)
    near = sum(n for px, n in counts.items() if sum(abs(a - b) for a, b in zip(px, c0)) < 30)
    expect(near > 50, f"no curve of the first run's colour {c0} in the screenshot ({near} pixels)")


def series(page_dom):
    """{(metric, run): data-points} of every curve in the page."""
    out = {}
    for fig in re.finditer(r'<figure id="chart-\d+" data-metric="([^"]*)">(.*?)</figure>', page_dom, re.S):
        for m in re.finditer(r'<path class="line[^"]*" data-run="([^"]*)" data-points="(\d+)"', fig.group(2)):
            out[(html_unescape(fig.group(1)), html_unescape(m.group(1)))] = int(m.group(2))
    return out


def html_unescape(s):
    import html
    return html.unescape(s)


def expected_points(path, slug):
    """{(metric, slug): count} from a jsonl file, by the latest-segment rule (harness.latest_records)."""
    want = {}
    for (kind, pass_, step), r in latest_records(path).items():
        for k, v in r.items():
            if kind == "step" and k in ("train/loss", "lr") and isinstance(v, float):
                want[(k, slug)] = want.get((k, slug), 0) + 1
            if kind == "eval" and k.startswith("eval/") and isinstance(v, float):
                name = k if pass_ == "eval" else f"{pass_}:{k}"
                want[(name, slug)] = want.get((name, slug), 0) + 1
    return want


def check_points(page_dom, want):
    got = series(page_dom)
    for key, n in sorted(want.items()):
        expect(got.get(key) == n, f"the curve {key} has {got.get(key)} points, the records {n}")


def case_single_run():
    m, ck, page = os.path.join(TMP, "m.jsonl"), os.path.join(TMP, "ck"), os.path.join(TMP, "single.html")
    run("run", SX, "--checkpoint-dir", ck, "--metrics", "jsonl:" + m, "--diagnostics", "grad/norm")
    p = report(m, "-o", page)
    expect(p.stdout.startswith(f"report: {page} (1 run, "), p.stdout)
    tags = validate(page)
    expect(tags.get("script") == 1, f"one script, the page's own: {tags.get('script')}")
    d = dom(page)
    check_points(d, expected_points(m, "sweep"))
    expect(series(d).get(("train/loss", "sweep")) == 8, "8 steps")
    # Diagnostics: one curve per model path, each with a point per step.
    grads = {k: n for k, n in series(d).items() if k[0].startswith("grad/norm/")}
    expect(len(grads) > 5 and set(grads.values()) == {8}, f"grad/norm curves: {grads}")
    # The checkpoints at steps 4 and 8 on every chart's axis; the knobs with their sources.
    first = re.search(r'<figure id="chart-0".*?</figure>', d, re.S).group(0)
    expect(first.count('class="mark m-checkpoint"') == 2, "two checkpoint marks on train/loss")
    expect(re.search(r"<tr><td>lr</td><td>0.01<span class=\"src\">default</span></td></tr>", d), "the knob lr")
    expect(re.search(r"<td>steps</td><td>8<span class=\"src\">default</span>", d), "the setting steps")
    # Same inputs, same bytes.
    again = os.path.join(TMP, "again.html")
    report(m, "-o", again)
    expect(open(page, "rb").read() == open(again, "rb").read(), "two reports of one file differ")
    shot = os.path.join(TMP, "single.png")
    chromium(page, "--hide-scrollbars", "--window-size=900,1200", "--screenshot=" + shot)
    check_screenshot(shot)
    # A phone, in the dark theme: the page is the phone's width (no sideways scroll) and dark.
    phone = os.path.join(TMP, "phone.png")
    chromium(page, "--hide-scrollbars", "--force-dark-mode", "--blink-settings=preferredColorScheme=0",
             "--window-size=390,844", "--screenshot=" + phone)
    check_screenshot(phone, dark=True)
    # On a narrow screen the page is no wider than the screen: only the tables scroll sideways, in their boxes.
    # (Headless Chromium lays a --dump-dom page out at least 500 px wide; a screenshot goes narrower.)
    measured = with_script(page, "var e = document.documentElement;"
                                 "e.setAttribute('data-overflow', String(e.scrollWidth - e.clientWidth));"
                                 "e.setAttribute('data-width', String(e.clientWidth));", "phone.html")
    d = dom_at(measured, "--hide-scrollbars", "--window-size=500,844")
    expect('data-width="500"' in d and 'data-overflow="0"' in d, "the page is wider than a phone: " + d[:300])


def case_resumed_run():
    """Killed (-9) after a checkpoint with steps after it, resumed from latest: the re-run steps replace the old."""
    m, ck, page = os.path.join(TMP, "m.jsonl"), os.path.join(TMP, "ck"), os.path.join(TMP, "resumed.html")
    # Enough steps (about a second here) that the polling below, descheduled
    # on a loaded machine, still finds the run alive: 120 steps took 0.1 s,
    # and the run once ended before it could be killed.
    steps = 1200
    args = ["run", SX, "--steps", str(steps), "--checkpoint-dir", ck, "--metrics", "jsonl:" + m]
    proc = subprocess.Popen([SEXPGPU, *args], cwd=REPO, env=clean_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while True:
        expect(time.time() < deadline and proc.poll() is None, "the run ended before it could be killed")
        lines = open(m).read().splitlines() if os.path.exists(m) else []
        if sum('"kind":"step"' in l for l in lines) >= 12:
            # Frozen, the file and the folder say where it is: kill it only with steps after its newest checkpoint.
            # SIGSTOP returns before the run has stopped: wait until it has, or a checkpoint it was finishing
            # is COMPLETE after the look below (the run then resumed from a later step than the one seen).
            proc.send_signal(signal.SIGSTOP)
            _, status = os.waitpid(proc.pid, os.WUNTRACED)
            expect(os.WIFSTOPPED(status), "the run ended before it could be killed")
            last = max([json.loads(l)["step"] for l in open(m).read().splitlines() if '"kind":"step"' in l
                        and l.endswith("}")], default=0)
            folder = os.path.join(ck, "sweep")
            done = [int(n[5:]) for n in (os.listdir(folder) if os.path.isdir(folder) else [])
                    if re.fullmatch(r"step-\d+", n) and os.path.exists(os.path.join(folder, n, "COMPLETE"))]
            ckpt = max(done, default=0)
            if ckpt and last > ckpt:
                proc.kill()
                proc.wait()
                break
            proc.send_signal(signal.SIGCONT)
        time.sleep(0.005)
    run(*args, "--resume", "latest")
    recs = jsonl(m)
    metas = [r for r in recs if r["kind"] == "meta"]
    expect(len(metas) == 2 and metas[1]["resumed_from"]["step"] == ckpt, f"resumed from step {ckpt}: {metas[1]}")
    first_steps = [r["step"] for r in recs[:recs.index(metas[1])] if r["kind"] == "step"]
    rerun = [s for s in first_steps if s > ckpt]
    expect(rerun, "steps after the checkpoint were written before the kill")
    report(m, "-o", page)
    validate(page)
    d = dom(page)
    want = expected_points(m, "sweep")
    check_points(d, want)
    expect(want[("train/loss", "sweep")] == steps, f"{steps} steps, each once")
    # The resume marked at its step; the second segment's numbers for the re-run steps.
    expect(f"<title>resumed from step {ckpt}</title>" in d, "the resume mark")
    latest = latest_records(m)[("step", None, steps)]["train/loss"]
    expect(f'data-v="{json.dumps(latest)}">{latest:.4f}</td>' in d, f"the final train/loss {latest}")
    expect(re.search(rf"<td>2</td><td>[^<]+</td><td>step {ckpt}</td><td>{ckpt + 1}\.\.{steps}</td>", d),
           "the segments table: the second from the checkpoint")
    shot = os.path.join(TMP, "resumed.png")
    chromium(page, "--hide-scrollbars", "--window-size=900,1200", "--screenshot=" + shot)
    check_screenshot(shot)


SLUGS = ["sweep-layers=1-lr=0.01", "sweep-layers=2-lr=0.01", "sweep-layers=1-lr=0.003", "sweep-layers=2-lr=0.003"]


def rows_order(d):
    body = re.search(r'<table class="sortable" id="finals">.*?<tbody>(.*?)</tbody>', d, re.S).group(1)
    return [html_unescape(s) for s in re.findall(r'<tr data-run="([^"]*)"', body)]


def case_sweep_four_runs():
    sweep_dir, page = os.path.join(TMP, "sweep"), os.path.join(TMP, "sweep.html")
    run("sweep", SX, "--set", "lr=0.01,0.003", "--set", "layers=1,2", "--dir", sweep_dir)
    p = report(sweep_dir, "-o", page)
    expect(p.stdout.startswith(f"report: {page} (4 runs, "), p.stdout)
    validate(page)
    d = dom(page)
    want = {}
    for slug in SLUGS:
        want.update(expected_points(os.path.join(sweep_dir, slug + ".jsonl"), slug))
    check_points(d, want)
    expect(len([k for k in series(d) if k[0] == "train/loss"]) == 4, "four train/loss curves")
    legend = re.search(r'<ul class="legend">(.*?)</ul>', d, re.S).group(1)
    expect([html_unescape(s) for s in re.findall(r"</span>([^<]*)</li>", legend)] == SLUGS, "the legend by slug")
    expect(rows_order(d) == SLUGS, "the table in the sweep's order")
    # Sorted by a click on a header: the same page with a script that clicks train/loss once, then twice.
    losses = {s: latest_records(os.path.join(sweep_dir, s + ".jsonl"))[("step", None, 8)]["train/loss"] for s in SLUGS}
    for clicks, reverse in ((1, False), (2, True)):
        click = ("var th = Array.prototype.filter.call(document.querySelectorAll('#finals th'), "
                 "function (h) { return h.textContent === 'train/loss'; })[0];" + "th.click();" * clicks)
        order = rows_order(dom(with_script(page, click, f"clicked{clicks}.html")))
        expect(order == sorted(SLUGS, key=losses.get, reverse=reverse), f"{clicks} clicks: {order} {losses}")
    shot = os.path.join(TMP, "sweep.png")
    chromium(page, "--hide-scrollbars", "--window-size=1000,1400", "--screenshot=" + shot)
    check_screenshot(shot)


def case_console_errors_detected():
    """The console check can fail: a page with an error and a console.error is caught."""
    page = os.path.join(TMP, "broken.html")
    open(page, "w").write("<!DOCTYPE html><html><body><script>console.error('seen');"
                          "undefined_function();</script></body></html>")
    _, err = chromium(page, "--dump-dom")
    lines = console_lines(err)
    expect(any("seen" in l for l in lines) and any("undefined_function" in l for l in lines),
           "chromium's console lines:\n" + err[-3000:])


EVIL = "<script>alert(1)</script>"


def case_injection_escaped():
    m, page = os.path.join(TMP, "evil.jsonl"), os.path.join(TMP, "evil.html")
    meta = {"kind": "meta", "slug": EVIL, "file": EVIL + ".sx", "run": "r\"'<b>", "device": "cpu",
            "knobs": [{"name": "lr", "value": EVIL, "source": EVIL}, {"name": EVIL, "value": 1, "source": "default"}],
            "started_at": EVIL, "resumed_from": None}
    lines = [meta, {"kind": "step", "step": 1, "train/loss": 2.5, "lr": 0.1, "tokens": 8, "step_s": 0.1, EVIL: 1.0},
             {"kind": "step", "step": 2, "train/loss": 2.25, "lr": 0.1, "tokens": 16, "step_s": 0.1, EVIL: 2.0},
             {"kind": "eval", "pass": EVIL, "step": 2, "eval/loss": 2.0},
             {"kind": "event", "event": "stage", "step": 2, "from": 0, "to": 1, "name": EVIL, "condition": EVIL},
             {"kind": "event", "event": "error", "step": 2, "code": EVIL, "message": EVIL}]
    with open(m, "w") as f:
        for r in lines:
            f.write(json.dumps(r) + "\n")
    report(m, "-o", page)
    text = open(page, encoding="utf-8").read()
    expect("<script>alert" not in text and "<b>" not in text, "an input's text became markup")
    expect(text.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 8, "the texts are shown, escaped")
    tags = validate(page)
    expect(tags.get("script") == 1 and "b" not in tags, f"the page's elements: {tags}")
    d = dom(page)
    expect(d.count("<script") == 1, "no script element came from the inputs")


def refused(code, *args):
    p = report(*args, check_rc=2)
    expect(f"error[{code}]" in p.stderr, f"expected {code}:\n{p.stderr}")
    return p


def case_refusals():
    good = os.path.join(TMP, "good.jsonl")
    with open(good, "w") as f:
        f.write(json.dumps({"kind": "step", "step": 1, "train/loss": 1.0}) + "\n")
    out = os.path.join(TMP, "r.html")
    p = refused("E-CLI-061", os.path.join(TMP, "missing.jsonl"), "-o", out)
    expect("missing.jsonl: No such file or directory" in p.stderr, p.stderr)
    refused("E-CLI-061", TMP, "-o", out)  # a folder that is no sweep's
    fifo = os.path.join(TMP, "fifo.jsonl")
    os.mkfifo(fifo)
    p = refused("E-CLI-061", fifo, "-o", out)  # refused, not waited on
    expect("found a FIFO" in p.stderr, p.stderr)
    p = refused("E-CLI-061", good, "-o", "/nonexistent/r.html")
    expect("cannot write the report /nonexistent/r.html: No such file or directory" in p.stderr, p.stderr)
    refused("E-CLI-061", good, "-o", TMP)  # a folder
    empty = os.path.join(TMP, "empty.jsonl")
    open(empty, "w").close()
    refused("E-CLI-062", empty, "-o", out)
    garbage = os.path.join(TMP, "garbage.jsonl")
    open(garbage, "wb").write(b"\x00\x01 not json\n[1,2]\n")
    refused("E-CLI-062", good, garbage, "-o", out)
    # A sweep folder none of whose runs has started.
    d = os.path.join(TMP, "not-started")
    os.makedirs(d)
    json.dump({"kind": "sweep", "file": "x.sx", "runs": [{"slug": "a"}, {"slug": "b"}]}, open(os.path.join(d, "sweep.json"), "w"))
    refused("E-CLI-062", d, "-o", out)
    expect(not os.path.exists(out), "a refused report writes nothing")
    expect(not [f for f in os.listdir(TMP) if f.startswith(".r.html")], "no temporary file left")
    report(good, "-o", out)
    expect(os.path.exists(out), "the good file's report")


def case_screenshot_script():
    chromium_exe()
    shot = os.path.join(TMP, "docs-shot.png")
    p = subprocess.run(["bash", os.path.join(REPO, "scripts", "report_screenshot.sh"), SEXPGPU, shot], cwd=REPO,
                       env=clean_env(), capture_output=True, text=True, timeout=600)
    expect(p.returncode == 0, f"report_screenshot.sh exit {p.returncode}:\n{p.stderr}")
    check_screenshot(shot)
    # The committed one is such a picture too.
    check_screenshot(os.path.join(REPO, "docs", "report.png"))


main(globals())
