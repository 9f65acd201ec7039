"""Any absorbing chain: markov_oca.anychain against PyDTMC, side by side.

Cases: gambler's ruin of growing size (closed forms), random sparse absorbing
chains of growing size (a dense solve as the reference where it fits), one of
our games (``oca-moderna``, 1 and 2 players: its deadlocks are closed classes),
and the target: a random absorbing chain of 1,000,000 states and about 10
transitions a state, fully analysed (absorption into every absorbing state,
expected steps and visits, steps given each outcome, the absorption-time
distribution, a hitting probability) in under a minute.

PyDTMC is dense and installed only for this benchmark; without it its columns
say ``absent``. PyDTMC pulls in an older numpy and matplotlib, so install it
beside the environment rather than into it::

    pip install --no-deps --target /tmp/pydtmc-lib PyDTMC
    PYTHONPATH=$PWD:/tmp/pydtmc-lib python benchmarks/bench_any_chain.py

Peak memory of one case, from outside::

    /usr/bin/time -v python benchmarks/bench_any_chain.py --case random-1000000

``--case retransmission-5000``: the almost acyclic chain of :func:`retransmission` (5,043 states, 120
chunks of six attempts), answered exactly by strongly connected components in topological order.

Any DRN file against Storm: ``--drn FILE:LABEL[:REFERENCE]`` (repeatable), the same side-by-side run on
that file (``P=? [F "LABEL"]``; ``--no-sound`` leaves out Storm's sound check). A public model exported by
Storm: ``--export-prism MODEL.prism CONSTANTS LABEL EXPRESSION OUT.drn`` builds it (the label added to the
model, so that the DRN carries it) and writes the DRN first, for instance the QVBS ``nand`` model::

    python benchmarks/bench_any_chain.py --export-prism nand.prism N=40,K=2 reliable "s=4 & z/N<0.1" \
        nand-40-2.drn --drn nand-40-2.drn:reliable:0.483805479851772

DRN against Storm (``--case drn-100000``, ``drn-1000000``, ``drn-2500000``, not run by default): a random
absorbing chain written as Storm writes DRN (ten-digit decimals), then, in the same run, each in a
process of its own timed from outside by ``/usr/bin/time -v``: Storm (``build_model_from_drn``, then
``P=? [F "goal"]`` with its default settings and with sound ones at 1e-6 relative), ``markov-oca
analyse FILE --hit goal`` (every figure with its bound) and ``markov-oca analyse FILE --only hit:goal``
(that probability alone, with its bound). ``--keep DIR`` writes the file there and reuses it.

Options: ``--case NAME`` (repeatable) runs only those cases; ``--pydtmc-limit N``
(default 2,000) skips PyDTMC above N states (its construction grows as n**2 in
memory and worse in time); ``--big`` also gives PyDTMC the 5,932-state game.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from markov_oca import build
from markov_oca.analysis.build import from_matrix, from_triples
from markov_oca.analysis.general import analyse


def gamblers_ruin(target: int, win: Fraction | float, start: int):
    """States 0..target, 0 and target absorbing; the closed forms of P(reach target) and E[duration]."""
    n = target + 1
    exact = isinstance(win, Fraction)
    P = np.zeros((n, n), object if exact else float)
    P[0, 0] = P[target, target] = 1
    for i in range(1, target):
        P[i, i + 1] = win
        P[i, i - 1] = 1 - win
    p, q = float(win), 1 - float(win)
    if p == q:
        reach, duration = start / target, start * (target - start)
    else:
        r = q / p
        reach = (1 - r ** start) / (1 - r ** target)
        duration = start / (q - p) - target / (q - p) * reach
    return P, reach, duration


def random_absorbing(n: int, per_row: int = 10, absorbing: int = 10, seed: int = 0):
    """A random sparse absorbing chain: the last ``absorbing`` states absorb; every other row has
    ``per_row - 1`` random targets and one step into a random absorbing state, whose chance varies
    from row to row (2% to 20%: equal exit chances make the all-ones right-hand side an eigenvector)."""
    rng = np.random.default_rng(seed)
    m = n - absorbing
    cols = rng.integers(0, n, size=(m, per_row))
    cols[:, -1] = rng.integers(m, n, size=m)
    w = rng.random((m, per_row))
    exit_p = rng.uniform(0.02, 0.2, size=m)
    w[:, :-1] *= ((1 - exit_p) / w[:, :-1].sum(axis=1))[:, None]
    w[:, -1] = exit_p
    rows = np.repeat(np.arange(m), per_row)
    rows = np.concatenate([rows, np.arange(m, n)])
    cols = np.concatenate([cols.ravel(), np.arange(m, n)])
    vals = np.concatenate([w.ravel(), np.ones(absorbing)])
    return rows, cols, vals


def retransmission(chunks: int, retries: int = 5):
    """A file sent in ``chunks`` chunks over lossy channels, each chunk tried up to ``retries + 1`` times
    (the shape of the bounded retransmission protocol): almost acyclic, with small cycles.

    Per chunk and attempt seven states: ``send`` (the frame is lost with chance 2/100), ``deliver`` and
    ``check`` (a re-read with chance 1/10: a cycle of two), ``ack`` (waits with chance 1/20: a self loop;
    the acknowledgement is lost with chance 1/100), ``lost``, ``sync`` and ``wait`` (a resynchronisation
    with chance 1/50: a cycle of three). A lost frame or acknowledgement retries the chunk; after the last
    attempt the file ends ``nok`` (``dk`` on the last chunk); the last chunk acknowledged ends ``ok``.
    Returns ``(n, rows, cols, vals, labels)`` for :func:`~markov_oca.anychain.from_triples` (exact
    fractions), the start state 0 and labels ``ok``, ``nok``, ``dk``, ``retry`` (second attempts on).
    """
    F = Fraction
    width = 7 * (retries + 1)
    ok, nok, dk = chunks * width, chunks * width + 1, chunks * width + 2
    trip: list[tuple[int, int, Fraction]] = [(s, s, F(1)) for s in (ok, nok, dk)]
    for i in range(chunks):
        nxt = ok if i == chunks - 1 else (i + 1) * width
        fail = dk if i == chunks - 1 else nok
        for a in range(retries + 1):
            send, deliver, check, ack, lost, sync, wait = range(i * width + 7 * a, i * width + 7 * a + 7)
            retry = send + 7 if a < retries else fail
            trip += [(send, deliver, F(98, 100)), (send, lost, F(2, 100)), (deliver, check, F(1)),
                     (check, deliver, F(1, 10)), (check, ack, F(9, 10)), (ack, ack, F(1, 20)),
                     (ack, nxt, F(94, 100)), (ack, lost, F(1, 100)), (lost, retry, F(49, 50)),
                     (lost, sync, F(1, 50)), (sync, wait, F(1)), (wait, lost, F(1))]
    rows, cols, vals = zip(*trip, strict=True)
    n = dk + 1
    retry_states = [s for s in range(chunks * width) if s % width >= 7]
    labels = {"ok": [ok], "nok": [nok], "dk": [dk], "retry": retry_states}
    return n, np.array(rows), np.array(cols), list(vals), labels


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def ours(chain, **kw):
    t, c = time.perf_counter(), time.process_time()
    r = analyse(chain, **kw)
    r.timings["cpu"] = time.process_time() - c  # both cores' seconds: wall time above it means waiting
    return r, time.perf_counter() - t


def pydtmc(P: np.ndarray, limit: int):
    """(seconds to construct, seconds to answer, absorption rows, mean absorption times) or a reason."""
    try:
        from pydtmc import MarkovChain
    except ImportError:
        return "absent"
    if P.shape[0] > limit:
        return f"skipped (> {limit:,} states)"
    t = time.perf_counter()
    mc = MarkovChain(np.asarray(P, float))
    t1 = time.perf_counter()
    ab = mc.absorption_probabilities()
    mt = mc.mean_absorption_times()
    t2 = time.perf_counter()
    if ab is None:
        return f"no answer (absorption_probabilities() is None; built in {t1 - t:.2f} s)"
    return t1 - t, t2 - t1, ab, mt


def line(*cells) -> None:
    print(" | ".join(str(c) for c in cells), flush=True)


def case_ruin(target: int, limit: int) -> None:
    start = target // 3
    P, reach, duration = gamblers_ruin(target, 0.4, start)
    chain = from_matrix(sp.csr_array(P), init=start)
    r, secs = ours(chain, exact=False)
    err = max(abs(float(r.outcomes[f"state {target}"]) - reach), abs(float(r.steps) - duration) / duration)
    other = pydtmc(P, limit)
    if isinstance(other, str):
        theirs = other
    else:
        t_build, t_ans, ab, mt = other
        i = start - 1  # PyDTMC: absorption (absorbing, transient), transient states in order
        e2 = max(abs(ab[-1, i] - reach), abs(mt[i] - duration) / duration)
        theirs = f"{t_build + t_ans:.3f} s, error {e2:.1e}"
    line(f"gambler's ruin to {target}", f"{chain.n:,}", f"{secs:.3f} s, error {err:.1e}", theirs)


def case_random(n: int, limit: int) -> None:
    rows, cols, vals = random_absorbing(n)
    t = time.perf_counter()
    chain = from_triples(n, rows, cols, vals, init=0)
    t_build = time.perf_counter() - t
    r, secs = ours(chain, exact=False, hit={"state 1": [1]}, conditional=10)
    worst = max(s["residual"] for s in r.solver)
    ab = np.array([float(k.absorption) for k in r.classes])
    check = f"sum {ab.sum():.12f}, mean length {r.length.mean:.6f} vs {float(r.steps):.6f}"
    ref = ""
    if n <= 3_000:
        P = chain.P.toarray()
        m = n - 10
        N0 = np.linalg.solve((np.eye(m) - P[:m, :m]).T, np.eye(m)[0])
        ref = f", vs dense {max(np.abs(N0 @ P[:m, m:] - ab).max(), abs(N0.sum() - float(r.steps))):.1e}"
    other = pydtmc(chain.P.toarray(), limit) if n <= max(limit, 1) else f"skipped (> {limit:,} states)"
    if isinstance(other, str):
        theirs = other
    else:
        t_b, t_a, pab, pmt = other
        theirs = f"{t_b + t_a:.3f} s, vs ours {max(np.abs(pab[:, 0] - ab).max(), abs(pmt[0] - float(r.steps))):.1e}"
    line("random absorbing, 10 a row", f"{n:,}", f"{t_build + secs:.2f} s (build {t_build:.2f}, "
         f"{', '.join(f'{k} {v:.2f}' for k, v in r.timings.items())}), residual {worst:.1e}, {check}{ref}",
         theirs)


def case_game(players: int, limit: int) -> None:
    chain = build("oca-moderna", players=players)
    r, secs = ours(chain, exact=False)
    other = pydtmc(chain.P.toarray(), limit)
    if isinstance(other, str):
        theirs = other
    else:
        t_b, t_a, pab, pmt = other
        theirs = f"{t_b + t_a:.2f} s"
    line(f"oca-moderna, {players} player(s)", f"{chain.n:,}",
         f"{secs:.2f} s, deadlock {float(r.deadlock):.6f}, steps {float(r.steps):.4f}", theirs)


def case_retransmission(chunks: int) -> None:
    """The almost acyclic retransmission chain, exactly (components in topological order) and in floats."""
    n, rows, cols, vals, labels = retransmission(chunks)
    chain = from_triples(n, rows, cols, vals, init=0, labels=labels)
    r, secs = ours(chain, exact=True, hit=["retry"], length=False)
    f, fsecs = ours(chain, exact=False, hit=["retry"], length=False)
    dk = r.outcomes["dk"]
    worst = max(abs(float(r.outcomes[k]) - f.outcomes[k]) / float(r.outcomes[k]) for k in r.outcomes)
    line(f"retransmission, {chunks} chunks (exact)", f"{n:,}",
         f"{secs:.2f} s ({', '.join(f'{k} {v:.2f}' for k, v in r.timings.items())}), P(dk) = {float(dk):.10e} "
         f"({dk.denominator.bit_length():,}-bit denominator); float {fsecs:.2f} s"
         f"{' (by the exact fallback)' if f.route else ''}, relative distance {worst:.1e}",
         r.solver[-1]["method"])


def write_storm_drn(path: Path, n: int, per_row: int = 10, absorbing: int = 10, seed: int = 0) -> int:
    """A random absorbing chain as Storm writes DRN: ten-digit decimals (each row summing to exactly 1),
    targets ascending and distinct, the odd absorbing states labelled ``goal``, the even ones ``fail`` (so
    that ``P=? [F "goal"]`` is a solve, not a graph search). Returns the transitions."""
    rng = np.random.default_rng(seed)
    m = n - absorbing
    base = rng.integers(0, m, size=(m, 1))
    stride = rng.integers(1, max(2, m // per_row), size=(m, 1))
    cols = np.sort(np.concatenate([(base + stride * np.arange(per_row - 1)) % m,
                                   rng.integers(m, n, size=(m, 1))], axis=1), axis=1)
    w = rng.random((m, per_row)) + 0.01
    units = np.floor(w / w.sum(axis=1, keepdims=True) * 1e10).astype(np.int64)
    units[:, 0] += 10 ** 10 - units.sum(axis=1)
    with open(path, "w") as fh:
        fh.write("// Exported by storm\n// Original model type: DTMC\n@type: DTMC\n@value_type: double\n"
                 f"@parameters\n\n@reward_models\n\n@nr_states\n{n}\n@nr_choices\n{n}\n@model\n")
        chunk = 100_000
        for lo in range(0, m, chunk):
            hi = min(m, lo + chunk)
            c, u = cols[lo:hi].tolist(), units[lo:hi].tolist()
            fh.write("".join(f"state {lo + i}{' init' if lo + i == 0 else ''}\n\taction 0\n"
                             + "".join(f"\t\t{t} : 0.{x:010d}\n" for t, x in zip(c[i], u[i], strict=True))
                             for i in range(hi - lo)))
        fh.write("".join(f"state {s} {'goal' if s % 2 else 'fail'}\n\taction 0\n\t\t{s} : 1\n"
                         for s in range(m, n)))
    return m * per_row + absorbing


#: Storm in a process of its own: build_model_from_drn, then P=? [F "label"] with the default settings and
#: (unless the third argument is 0) with sound ones (precision 1e-6, relative), each timed; one JSON line out.
STORM = """
import json, sys, time
import stormpy
path, label = sys.argv[1], sys.argv[2]
t = time.perf_counter()
model = stormpy.build_model_from_drn(path)
out = {"read": time.perf_counter() - t, "states": model.nr_states, "transitions": model.nr_transitions}
prop = stormpy.parse_properties(f'P=? [F "{label}"]')[0]
s0 = model.initial_states[0]
t = time.perf_counter()
res = stormpy.model_checking(model, prop, only_initial_states=True)
out.update(check=time.perf_counter() - t, value=res.get_value(s0))
if len(sys.argv) > 3 and sys.argv[3] == "0":
    print(json.dumps(out))
    sys.exit(0)
env = stormpy.environments.sound()
native = env.solver().native()
native.precision = stormpy.Rational("1/1000000")
native.relative_termination_criterion = True
t = time.perf_counter()
res = stormpy.model_checking(model, prop, only_initial_states=True, environment=env)
out.update(sound=time.perf_counter() - t, sound_value=res.get_value(s0),
           sound_bounds=[res.get_lower_bound(s0), res.get_upper_bound(s0)] if res.has_lower_bounds() else None)
print(json.dumps(out))
"""


#: The checkout whose ``markov_oca`` the side-by-side runs time (``--tree``; by default this one).
TREE = Path(__file__).resolve().parents[1]


def timed_run(cmd: list[str]) -> tuple[str, float, float, float]:
    """Run ``cmd`` under ``/usr/bin/time -v``: (stdout, wall seconds, CPU seconds, peak MB)."""
    import re
    import subprocess

    got = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, cwd=TREE)
    err = got.stderr
    h, m, sec = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", err).groups()
    wall = int(h or 0) * 3600 + int(m) * 60 + float(sec)
    cpu = sum(float(x) for x in re.findall(r"(?:User|System) time \(seconds\): ([\d.]+)", err))
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1)) / 1024
    if got.returncode != 0:
        lines = [x for x in err.splitlines() if x.strip() and not x.startswith("\t")]
        said = [x for x in lines if "error" in x.lower() and not x.startswith("Command exited")]
        why = (said or lines or [str(got.returncode)])[-1]
        raise RuntimeError(f"{' '.join(cmd[:4])}... failed after {wall:.2f} s wall, {cpu:.2f} s CPU, peak "
                           f"{peak:,.0f} MB: {why}")
    return got.stdout, wall, cpu, peak


def _worst_relative(d: dict) -> tuple[int, float]:
    """How many figures the analysis printed with a bound, and the largest bound relative to its figure."""
    pairs = [(x, d["outcomes_bound"][k]) for k, x in d["outcomes"].items()]
    pairs += [(x, d["hitting_bound"][k]) for k, x in d["hitting"].items()]
    for e in d["expected"].values():
        pairs.append((e["total"], e["bound"]))
        pairs += [(x, e["given_bound"][k]) for k, x in e["given"].items()]
    for m in d["moments"].values():
        pairs += [(m["mean"], m["mean_bound"]), (m["second_moment"], m["second_moment_bound"])]
    worst = max((b / abs(x) for x, b in pairs if x), default=0.0)
    return len(pairs), worst


def case_drn(n: int, keep: str | None = None, label: str = "goal") -> None:
    """A random Storm-style DRN of ``n`` states (written into ``keep``, or a temporary folder), side by side
    (:func:`side_by_side`)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(keep or d) / f"random-{n}.drn"
        path.parent.mkdir(parents=True, exist_ok=True)
        made = 0.0
        if not path.exists():
            t = time.perf_counter()
            write_storm_drn(path, n)
            made = time.perf_counter() - t
        side_by_side(path, label, note=f"written in {made:.0f} s")


def _load() -> str:
    """The load averages (1, 5, 15 minutes) now."""
    try:
        return "load " + " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "load unknown"


def side_by_side(path: Path, label: str, note: str = "", reference: float | None = None, sound: bool = True,
                 ours: bool = True, storm: bool = True) -> None:
    """One DRN file, side by side, each in a process of its own timed from outside: Storm (read, then
    ``P=? [F "label"]`` with the default and, with ``sound``, with sound settings) against ``markov-oca analyse
    FILE --float --hit label`` (every figure with its bound) and ``markov-oca analyse FILE --float --only
    hit:label``; ``reference`` is the figure's known value (say, from QVBS), printed beside each answer."""
    import json

    size = path.stat().st_size / 2 ** 20
    py = sys.executable
    ref = f"; reference {reference:.12f}" if reference is not None else ""
    head = f"{path.name}, {size:,.0f} MB{', ' + note if note else ''}"
    try:
        import stormpy  # noqa: F401
    except ImportError:
        storm = False
        line(f"Storm, {head}", "stormpy absent")
    if storm:
        out, wall, cpu, peak = timed_run([py, "-c", STORM, str(path), label, "1" if sound else "0"])
        st = json.loads(out)
        lo_hi = st.get("sound_bounds")
        snd = (f", sound check {st['sound']:.2f} s (P in [{lo_hi[0]:.10f}, {lo_hi[1]:.10f}])"
               if lo_hi else "")
        line(f"Storm, {head}", f"{st['states']:,}",
             f"build_model_from_drn {st['read']:.2f} s, check {st['check']:.2f} s (P = {st['value']:.12f}{ref})"
             f"{snd}", f"process {wall:.2f} s wall, {cpu:.2f} s CPU, peak {peak:,.0f} MB, {_load()}")
    if not ours:
        return
    cli = [py, "-m", "markov_oca.launch", "analyse", str(path), "--float", "--format", "json", "--no-pmf"]
    for what, extra in (("analyse, every figure", ["--hit", label]), (f"analyse --only hit:{label}",
                                                                      ["--only", f"hit:{label}"])):
        try:
            out, wall, cpu, peak = timed_run(cli + extra)
        except RuntimeError as exc:  # an older tree without the option, or a figure it cannot bound
            line(f"markov-oca {what}", path.name, str(exc).splitlines()[-1][:400])
            continue
        d_ = json.loads(out)
        figures, worst = _worst_relative(d_)
        stages = ", ".join(f"{k} {v:.2f}" for k, v in d_["timings"].items())
        line(f"markov-oca {what}", f"{d_['chain']['states']:,}",
             f"{stages}; P = {d_['hitting'][label]:.12f} ± {d_['hitting_bound'][label]:.1e}{ref}; {figures} "
             f"figures with bounds, the largest {worst:.1e} of its figure",
             f"process {wall:.2f} s wall, {cpu:.2f} s CPU, peak {peak:,.0f} MB, {_load()}")


#: A PRISM model to DRN by Storm in a process of its own: the model, its constants, a label to add (name and
#: expression, so that the DRN carries it), the output file; Storm's default DRN export (ten digits).
EXPORT = """
import json, os, sys, tempfile, time
import stormpy
src, consts, label, expr, out = sys.argv[1:6]
with tempfile.NamedTemporaryFile("w", suffix=".prism", delete=False) as fh:
    fh.write(open(src).read() + f'\\nlabel "{label}" = {expr};\\n')
try:
    prog = stormpy.parse_prism_program(fh.name)
finally:
    os.unlink(fh.name)
prog = stormpy.instantiate_constants(prog, consts)[0]
props = stormpy.parse_properties(f'P=? [F "{label}"]', prog)
t = time.perf_counter()
model = stormpy.build_model(prog, props)
built = time.perf_counter() - t
stormpy.io.export_to_drn(model, out)
print(json.dumps({"states": model.nr_states, "transitions": model.nr_transitions, "built": built,
                  "labels": sorted(model.labeling.get_labels())}))
"""


def export_prism(prism: str, consts: str, label: str, expr: str, out: Path) -> None:
    """Build a PRISM model with Storm (its constants ``consts``, the label ``label`` = ``expr`` added) and write
    it as DRN to ``out`` (skipped when ``out`` exists)."""
    import json

    if out.exists():
        line(f"{out.name}", "exists, kept")
        return
    got, wall, cpu, peak = timed_run([sys.executable, "-c", EXPORT, prism, consts, label, expr, str(out)])
    d = json.loads(got)
    line(f"{out.name} from {Path(prism).name} ({consts})", f"{d['states']:,}",
         f"{d['transitions']:,} transitions, labels {', '.join(d['labels'])}",
         f"built in {d['built']:.1f} s, process {wall:.1f} s, peak {peak:,.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", action="append", default=None)
    ap.add_argument("--pydtmc-limit", type=int, default=2_000)
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--keep", default=None, help="the folder to write the DRN cases into and read them from again")
    ap.add_argument("--drn", action="append", default=[], metavar="FILE:LABEL[:REFERENCE]",
                    help="a DRN file of your own, side by side with Storm on P=? [F \"LABEL\"] (repeatable)")
    ap.add_argument("--no-sound", action="store_true", help="Storm's default check only (no sound check)")
    ap.add_argument("--storm-only", action="store_true", help="with --drn: Storm's side alone")
    ap.add_argument("--no-storm", action="store_true", help="with --drn: our side alone")
    ap.add_argument("--export-prism", nargs=5, action="append", default=[],
                    metavar=("MODEL", "CONSTANTS", "LABEL", "EXPRESSION", "OUT"),
                    help="build a PRISM model with Storm, the label LABEL = EXPRESSION added, and write it as DRN")
    ap.add_argument("--tree", default=None, help="with --drn: time the markov_oca of this checkout (say, the "
                    "commit before a change) instead of this one")
    args = ap.parse_args()
    if args.tree:
        global TREE
        TREE = Path(args.tree).resolve()
    if args.export_prism or args.drn:
        for prism, consts, label, expr, out in args.export_prism:
            export_prism(str(Path(prism).resolve()), consts, label, expr, Path(out).resolve())
        for spec in args.drn:
            path, label, *ref = spec.split(":")
            side_by_side(Path(path).resolve(), label, reference=float(ref[0]) if ref else None, sound=not args.no_sound,
                         ours=not args.storm_only, storm=not args.no_storm)
        return
    limit = args.pydtmc_limit
    cases = {f"ruin-{k}": (lambda k=k: case_ruin(k, limit)) for k in (10, 100, 1_000)}
    cases.update({f"random-{k}": (lambda k=k: case_random(k, limit)) for k in (200, 2_000, 100_000, 1_000_000)})
    cases.update({f"game-{p}": (lambda p=p: case_game(p, 10_000 if args.big else limit)) for p in (1, 2)})
    cases["retransmission-5000"] = lambda: case_retransmission(120)
    cases.update({f"drn-{k}": (lambda k=k: case_drn(k, args.keep)) for k in (100_000, 1_000_000, 2_500_000)})
    chosen = args.case or [k for k in cases if not k.startswith("drn-")]
    # warm the jit caches so the first case is not charged for compiling
    analyse(from_matrix(np.array([[0.5, 0.5], [0, 1]]), init=0), hit={"a": [1]})
    line("case", "states", "markov_oca (time, agreement)", "PyDTMC")
    for name in chosen:
        cases[name]()
    print(f"peak memory of this process: {peak_mb():,.0f} MB (ru_maxrss)")


if __name__ == "__main__":
    main()
