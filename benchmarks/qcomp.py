"""`markov-oca analyse` against the QComp benchmark set's DTMCs (QVBS), as Storm exports them.

Usage::

    python benchmarks/qcomp.py QVBS_CHECKOUT OUT_DIR [--max-states 350000] [--only FAMILY[:INSTANCE]]...
                               [--no-exact] [--timeout SECONDS]

For every DTMC instance of the QVBS checkout (``benchmarks/dtmc/*/index.json``) with at most
``--max-states`` states, this builds the model with stormpy from its PRISM source (the JANI file
where there is none: coupon), keeping the labels and reward models its properties need, exports
it with Storm's DRN exporter (``value_type: double``, as a reviewer would; and ``rational`` from
the exact build for the exact runs), runs ``markov-oca analyse`` on the file in a process of its
own (``--float --format json``, then ``--exact --format json``), and prints one row per instance,
property and mode: the reference value of the index (its exact ``num/den`` where it has one), ours,
our certified bound, the error and whether the reference is within the bound; beside it Storm's
own answer with its default settings and its time.

How each property is asked:

- ``P=? [F phi]``: ``--hit LABEL``, where LABEL is the label Storm builds for ``phi`` (an atomic
  label by its name, an expression by its text, such as ``(s = 5)``); ours is ``hitting[LABEL]``.
  ``P>=1 [F phi]`` (leader_sync) is asked the same way and compared with 1.
- ``R{"r"}=? [F phi]`` and ``T=? [F phi]``: our expected reward totals count what is earned until
  the chain is absorbed (in an absorbing state or a closed class). Storm counts until ``phi`` is
  first reached, and the value is infinite when ``phi`` is not reached almost surely. Where the
  ``phi`` states are not already a union of closed classes, the DRN is rewritten with every
  ``phi`` state absorbing (its transitions replaced by a self-loop: nothing after ``phi`` counts
  in Storm's figure either), and that file is analysed. Ours is ``expected[r]["total"]``
  (``expected["steps"]`` for ``T``); ``--hit`` on ``phi`` tells whether it is infinite.
- ``filter(max, ..., "init")`` over several initial states: the largest of our figures from each. Where
  there are more than 16 (herman: every state), the float run is ``--only expected`` (the totals from
  every state by one forward solve) and the exact runs start (``--init``) from the state with the
  largest float figure.
- Bounded properties (``F<=k``, reward-bounded) are not asked: the table says so.

Each tool runs in its own process; nothing here is needed by the tests (stormpy and the QVBS
checkout are optional).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.set_int_max_str_digits(1_000_000)

#: stormpy's builder, exporter and checker for one instance, in a process of its own (argv: a JSON job).
_STORM = r'''
import json, sys, time
sys.set_int_max_str_digits(1_000_000)
import stormpy
job = json.loads(sys.argv[1])
t0 = time.perf_counter()
if job["prism"]:
    prog = stormpy.parse_prism_program(job["prism"])
    props = stormpy.parse_properties(open(job["props"]).read(), prog)
else:
    prog, props = stormpy.parse_jani_model(job["jani"])
if job["constants"]:
    prog, props = stormpy.instantiate_constants(prog, job["constants"], props)
def name(p):
    return p.name if hasattr(p, "name") else p.get_name()
def formula(p):
    return str(p.raw_formula if hasattr(p, "raw_formula") else p.get_raw_formula())
props = [p for p in props if name(p) in job["names"]]
model = stormpy.build_model(prog, props)
t_build = time.perf_counter() - t0
if job["out"]:
    stormpy.io.export_to_drn(model, job["out"])
out = {"states": model.nr_states, "transitions": model.nr_transitions, "build": t_build, "props": [],
       "initial": [int(s) for s in model.initial_states]}
for p in props:
    if not job["check"]:
        out["props"].append({"name": name(p), "formula": formula(p), "storm": [], "storm_time": None, "error": None})
        continue
    t = time.perf_counter()
    try:
        r = stormpy.model_checking(model, p)
        vals = [r.get_value(s) for s in model.initial_states]
        vals = [v if isinstance(v, bool) else float(v) for v in vals]
        err = None
    except Exception as e:  # a property Storm cannot check on this build
        vals, err = [], str(e)
    out["props"].append({"name": name(p), "formula": formula(p),
                         "storm": vals, "storm_time": time.perf_counter() - t, "error": err})
if job["exact"]:
    t = time.perf_counter()
    exact = stormpy.build_model[stormpy.Rational](prog, props)
    stormpy.io.export_to_drn(exact, job["exact"])
    out["exact_build"] = time.perf_counter() - t
print(json.dumps(out))
'''


#: The runs: ``--float`` and ``--exact`` on Storm's DRN of doubles (what a reviewer exports), and ``--exact`` on the
#: DRN of Storm's exact build (``value_type: rational``).
MODES = ("float", "exact", "exact-r")
#: Beyond this many initial states, reward properties are asked with ``--only expected`` (see run_instance).
MANY_INITIAL = 16
#: Storm's exact build (the DRN of rationals) for instances up to this many states: our exact mode's limit.
EXACT_BUILD_LIMIT = 100_000


def _reference(value):
    """(exact Fraction or None, float or None, text) of an index's reference value."""
    if isinstance(value, bool):
        return Fraction(int(value)), float(value), str(value).lower()
    if isinstance(value, int):
        return Fraction(value), float(value), str(value)
    if isinstance(value, float):
        return Fraction(repr(value)), value, repr(value)
    if isinstance(value, str):
        return None, float("inf") if value in ("∞", "inf", "infinity") else None, value
    if isinstance(value, dict):
        if "num" in value and "den" in value:
            f = Fraction(int(value["num"]), int(value["den"]))
            short = len(str(value["den"])) < 12
            return f, float(f), f"{value['num']}/{value['den']}" if short else f"{float(f):.16g} (exact)"
        if "approx" in value:
            return None, float(value["approx"]), f"~{value['approx']}"
    return None, None, str(value)


def instances(qvbs: Path, max_states: int, only: list[str]) -> list[dict]:
    """Every DTMC instance of the checkout with at most ``max_states`` states (by the index's count)."""
    out = []
    for index in sorted((qvbs / "benchmarks" / "dtmc").glob("*/index.json")):
        meta = json.loads(index.read_text())
        fam = meta["short"]
        folder = index.parent
        props = {p["name"]: p["type"] for p in meta["properties"]}
        for f in meta["files"]:
            originals = f.get("original-file", [])
            if isinstance(originals, str):
                originals = [originals]
            prism = next((folder / o for o in originals if o.endswith((".prism", ".pm"))), None)
            prop_file = next((folder / o for o in originals if o.endswith((".props", ".prctl"))), None)
            for inst in f["open-parameter-values"]:
                opened = {v["name"]: v["value"] for v in inst["values"]}
                states = max((s["number"] for s in inst.get("states", [])), default=0)
                stem = f["file"].removesuffix(".jani").removeprefix(fam).lstrip(".")
                name = stem or "-".join(str(v) for v in opened.values()) or "-"
                key = f"{fam}:{name}"
                if only and not any(key == o or fam == o for o in only):
                    continue
                if states > max_states:
                    continue
                refs = {r["property"]: r["value"] for r in inst.get("results", [])}
                source = prism if prism is not None and prism.exists() else None
                jani = folder / f["file"]
                out.append({
                    "family": fam, "instance": name, "states": states, "types": props, "refs": refs,
                    "prism": str(source) if source else None, "props": str(prop_file) if source else None,
                    "jani": str(jani) if jani.exists() else None,
                    # the open parameters (a file's own are fixed in it)
                    "constants": ",".join(f"{k}={v}" for k, v in opened.items()),
                })
    return out


def _storm(inst: dict, out: Path | None, exact: bool, timeout: float, check: bool = False) -> dict:
    """Build (and export to ``out``, or check with Storm's defaults when ``check``) in a process of its own."""
    names = [p for p in inst["types"]]
    job = {"prism": inst["prism"], "props": inst["props"], "jani": inst["jani"], "constants": inst["constants"],
           "names": names, "out": str(out / "model.drn") if out else None, "check": check,
           "exact": str(out / "exact.drn") if exact and out else None}
    run = subprocess.run([sys.executable, "-c", _STORM, json.dumps(job)], capture_output=True, text=True,
                         timeout=timeout)
    if run.returncode:
        lines = [ln for ln in run.stderr.strip().splitlines() if "WARN" not in ln]
        raise RuntimeError(lines[-1] if lines else "stormpy failed")
    return json.loads(run.stdout.strip().splitlines()[-1])


_PROP = re.compile(r'^(?:filter\((?P<filter>\w+), )?(?P<op>P|R|T)(?:min|max)?(?:\[exp\])?(?:\{"(?P<rew>[^"]*)"\})?'
                   r'(?:min|max)?(?P<cmp>=\?|>=1) \[F (?P<target>.*)\]')


def translate(formula: str) -> dict | None:
    """Our question for one of Storm's formulas: op, reward, target label, filter; None if we cannot ask it."""
    m = _PROP.match(formula.strip())
    if not m or "F<" in formula or "F[" in formula or "F^" in formula:
        return None
    target = m["target"]
    if target.endswith(', "init")'):
        target = target[: -len(', "init")')]
    target = target.strip()
    if target.endswith("]"):
        target = target[:-1].rstrip()
    if target.startswith('"') and target.endswith('"') and target.count('"') == 2:
        target = target[1:-1]
    return {"op": m["op"], "reward": m["rew"], "target": target, "filter": m["filter"], "qualitative": m["cmp"] != "=?"}


def _drn_states(path: Path):
    """State blocks of a DRN file: yields (header lines, [(state, labels, lines)])."""
    head, block, blocks = [], None, []
    lab = re.compile(r'"([^"]*)"|([^\s"\[\]]+)')
    with open(path) as fh:
        in_model = False
        for line in fh:
            if not in_model:
                head.append(line)
                in_model = line.startswith("@model")
                continue
            s = line.strip()
            if s.startswith("state "):
                rest = s[6:]
                num, _, rest = rest.partition(" ")
                rest = re.sub(r"\[[^\]]*\]", " ", rest)
                labels = {a or b for a, b in lab.findall(rest)}
                block = (int(num), labels, [line])
                blocks.append(block)
            elif block is not None:
                block[2].append(line)
    return head, blocks


def absorbing_targets(path: Path, target: str, out: Path) -> bool:
    """Write ``out``: the DRN with every ``target`` state absorbing, unless they are a union of closed classes
    already (then nothing is written and False returned)."""
    import numpy as np
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    head, blocks = _drn_states(path)
    n = len(blocks)
    is_t = np.zeros(n, bool)
    src, dst = [], []
    for s, labels, lines in blocks:
        if target in labels:
            is_t[s] = True
        for ln in lines[1:]:
            if ":" in ln and not ln.strip().startswith("action"):
                src.append(s)
                dst.append(int(ln.split(":")[0]))
    src, dst = np.array(src), np.array(dst)
    closed = bool(is_t[dst[is_t[src]]].all())
    if closed:  # each target state in a strongly connected component closed in the chain
        g = sp.csr_array((np.ones(src.size), (src, dst)), shape=(n, n))
        _, comp = connected_components(g, directed=True, connection="strong")
        leaves = np.ones(comp.max() + 1, bool)
        leaves[comp[src[comp[src] != comp[dst]]]] = False
        if leaves[comp[is_t]].all():
            return False
    with open(out, "w") as fh:
        fh.writelines(head)
        for s, _labels, lines in blocks:
            if not is_t[s]:
                fh.writelines(lines)
                continue
            fh.write(lines[0])
            action = next(ln for ln in lines[1:] if ln.strip().startswith("action"))
            fh.write(re.sub(r"\[[^\]]*\]", lambda m: "[" + ", ".join("0" for _ in m[0].split(",")) + "]", action))
            fh.write(f"\t\t{s} : 1\n")
    return True


def analyse(drn: Path, hits: list[str], exact: bool, timeout: float,
            extra: tuple[str, ...] = ()) -> tuple[dict | None, str, float]:
    cmd = [sys.executable, "-c", "from markov_oca.launch import main; main()", "analyse", str(drn),
           "--format", "json", "--no-pmf", "--exact" if exact else "--float", *extra]
    for h in hits:
        cmd += ["--hit", h]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t = time.perf_counter()
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {timeout:.0f} s", time.perf_counter() - t
    took = time.perf_counter() - t
    if run.returncode:
        lines = run.stderr.strip().splitlines()
        return None, (lines[-1] if lines else f"exit {run.returncode}")[:160], took
    return json.loads(run.stdout), "", took


def _per_initial(res: dict) -> list[dict]:
    return res["initial"] if "initial" in res else [res]


def _value(one: dict, q: dict, exact: bool):
    """(value, bound) of our figure for question ``q`` from one initial state's JSON."""
    def num(x):
        if isinstance(x, dict):  # exact mode: {"fraction": "p/q", "value": float}
            return Fraction(x["fraction"]) if exact else float(x["value"])
        return Fraction(x) if exact else float(x)
    if q["op"] == "P":
        v = num(one["hitting"][q["target"]])
        return v, 0.0 if exact else one["hitting_bound"][q["target"]]
    if q["op"] == "T":
        e = one["expected"]["steps"]
    else:
        rew = one["expected"]
        # our name for Storm's reward model: an unnamed one is "default", one called "steps" is "steps (reward)"
        # ("steps" is the expected number of steps); R=? without a name asks the model's only one
        names = [k for k in rew if k != "steps"]
        want = {"": "default", "steps": "steps (reward)"}.get(q["reward"] or "", q["reward"])
        e = rew[want] if want in rew else rew[names[0]]
    return num(e["total"]), 0.0 if exact else e["bound"]


def ours(res: dict, q: dict, exact: bool):
    """Our figure for the question, with its bound (filter max over the initial states)."""
    got = []
    for one in _per_initial(res):
        v, b = _value(one, q, exact)
        if q["op"] != "P" and q["target"] in one["hitting"]:
            h, _ = _value(one, {**q, "op": "P"}, exact)
            hb = 0.0 if exact else one["hitting_bound"][q["target"]]
            if h + hb < 1:  # the target is missed with positive chance: Storm's value is infinite
                v, b = float("inf"), 0.0
        got.append((v, b))
    if q["filter"] == "min":
        return min(got, key=lambda x: x[0])
    return max(got, key=lambda x: x[0])


def run_instance(inst: dict, out_dir: Path, do_exact: bool, timeout: float, storm_timeout: float) -> list[dict]:
    d = out_dir / f"{inst['family']}.{inst['instance']}"
    d.mkdir(parents=True, exist_ok=True)
    rows = []
    # the runs; Storm's exact build only where our exact mode may answer (beyond, it refuses in one line)
    modes = ("float",) if not do_exact else MODES if inst["states"] <= EXACT_BUILD_LIMIT else MODES[:2]
    if inst["prism"] is None and inst["jani"] is None:  # the checkout holds neither file (large ones are absent)
        return [{**inst, "property": "-", "mode": "-", "status": "no source"}]
    try:
        storm = _storm(inst, d, "exact-r" in modes, timeout)
    except Exception as e:  # any failure of the build is reported in the table
        return [{**inst, "property": "-", "mode": "-", "status": f"stormpy: {e}"[:120]}]
    try:  # Storm's own answers (default settings: unsound value iteration), when they come within the time
        checked = _storm(inst, None, False, storm_timeout, check=True)["props"]
        for p, c in zip(storm["props"], checked, strict=True):
            p.update(storm=c["storm"], storm_time=c["storm_time"])
    except subprocess.TimeoutExpired:
        for p in storm["props"]:
            p.update(storm="timeout", storm_time=storm_timeout)
    except Exception:  # Storm's answer is only shown beside ours
        pass
    questions = []
    for p in storm["props"]:
        q = translate(p["formula"])
        questions.append((p, q))
    files = {}
    for p, q in questions:
        if q is None:
            continue
        base, exact = d / "model.drn", d / "exact.drn"
        if q["op"] in "RT":
            rew = d / f"model.{p['name']}.drn"
            if absorbing_targets(base, q["target"], rew):
                base = rew
                if "exact-r" in modes:
                    rex = d / f"exact.{p['name']}.drn"
                    absorbing_targets(exact, q["target"], rex)
                    exact = rex
        files.setdefault((base, exact), []).append((p, q))
    results = {}
    many = len(storm["initial"]) > MANY_INITIAL
    for (base, exact), group in files.items():
        hits = sorted({q["target"] for _, q in group})
        if many and all(q["op"] in "RT" for _, q in group):
            # every state initial (herman): the expected totals from all of them by one forward solve, then the
            # exact runs from the state with the largest float figure (the filter's max)
            results[(base, "float")] = got = analyse(base, [], False, timeout, ("--only", "expected"))
            top = None
            if got[0] is not None:
                q0 = group[0][1]
                top = max(_per_initial(got[0]), key=lambda one: _value(one, q0, False)[0])["chain"]["init"]
            for mode in modes[1:]:
                results[(base, mode)] = (None, "no float figure to start from", 0.0) if top is None else analyse(
                    exact if mode == "exact-r" else base, hits, True, timeout, ("--init", str(top)))
            continue
        for mode in modes:
            results[(base, mode)] = analyse(exact if mode == "exact-r" else base, hits, mode != "float", timeout)
    for p, q in questions:
        ref_exact, ref_float, ref_text = _reference(inst["refs"].get(p["name"], None)) if p["name"] in inst["refs"] \
            else (None, None, "-")
        storm_v = p["storm"] if isinstance(p["storm"], str) else max(p["storm"]) if p["storm"] and not isinstance(
            p["storm"][0], bool) else (p["storm"][0] if p["storm"] else None)
        row = {"family": inst["family"], "instance": inst["instance"], "states": storm["states"],
               "property": p["name"], "reference": ref_text, "storm": storm_v, "storm_time": p["storm_time"]}
        if q is None:
            rows.append({**row, "mode": "-", "status": "not asked (bounded)"})
            continue
        base = next(b for (b, _e), g in files.items() if any(pp is p for pp, _ in g))
        for mode in modes:
            res, err, took = results[(base, mode)]
            r = {**row, "mode": mode, "time": took, "file": base.name}
            if res is None:
                rows.append({**r, "status": "refused" if "error" in err else "failed", "message": err})
                continue
            v, b = ours(res, q, mode != "float")
            if q["qualitative"]:
                ref_exact, ref_float = Fraction(1), 1.0
            r.update(ours=v, bound=b)
            if ref_float is None:
                r["status"] = "no reference"
            elif ref_float == float("inf") or v == float("inf"):
                r["status"] = "pass" if v == ref_float else "FAIL"
            elif mode != "float":
                if ref_exact is not None:
                    r["error"] = abs(v - ref_exact)
                    r["status"] = "pass" if v == ref_exact else "FAIL"
                else:
                    r["error"] = abs(float(v) - ref_float)
                    r["status"] = "approx ref"
            else:
                err_v = abs(Fraction(v) - ref_exact) if ref_exact is not None else abs(v - ref_float)
                r["error"] = float(err_v)
                r["status"] = ("pass" if err_v <= Fraction(b) else "FAIL") if ref_exact is not None else (
                    "approx ref")
            rows.append(r)
    return rows


def _fmt(x) -> str:
    if x is None:
        return "-"
    if isinstance(x, Fraction):
        s = str(x)
        return s if len(s) <= 24 else f"{float(x):.16g} (fraction)"
    if isinstance(x, float):
        return f"{x:.16g}"
    return str(x)


def table(rows: list[dict]) -> str:
    head = ["model", "instance", "states", "property", "mode", "reference", "ours", "bound", "|error|", "within?",
            "Storm (default)", "Storm s", "ours s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["family"], r["instance"], f"{r.get('states', 0):,}", r["property"], r.get("mode", "-"),
                 r.get("reference", "-"), _fmt(r.get("ours")),
                 f"{r['bound']:.2g}" if isinstance(r.get("bound"), float) else _fmt(r.get("bound")),
                 f"{float(r['error']):.2g}" if r.get("error") is not None else "-",
                 r.get("status", "-") + (f": {r['message']}" if r.get("message") else ""),
                 _fmt(r.get("storm")), f"{r['storm_time']:.2f}" if r.get("storm_time") is not None else "-",
                 f"{r['time']:.1f}" if r.get("time") is not None else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _short(text: str) -> str:
    """A long integer as its first and last digits and its length."""
    return text if len(text) <= 28 or not text.isdigit() else f"{text[:6]}...{text[-3:]} ({len(text)} digits)"


def summary(rows: list[dict]) -> str:
    """One line per instance and property: the float run (ours, bound, error, within?) and the two exact runs."""
    head = ["model", "instance", "states", "property", "reference", "float: ours", "bound", "|error|", "float",
            "exact (double DRN)", "exact (rational DRN)", "Storm default", "ours float s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    groups: dict[tuple, dict] = {}
    for r in rows:
        groups.setdefault((r["family"], r["instance"], r["property"]), {})[r.get("mode", "-")] = r
    for (fam, inst, prop), by in groups.items():
        f = by.get("float") or next(iter(by.values()))

        def verdict(r):
            if r is None:
                return "-"
            st = r.get("status", "-")
            return st if st in ("pass", "FAIL") else st.split(":")[0] + (
                f" ({r['message'][:70]})" if r.get("message") else "")
        err = f.get("error")
        lines.append("| " + " | ".join([
            fam, inst, f"{f.get('states', 0):,}", prop, _short(str(f.get("reference", "-"))), _fmt(f.get("ours")),
            f"{f['bound']:.2g}" if isinstance(f.get("bound"), float) else _fmt(f.get("bound")),
            f"{float(err):.2g}" if err is not None else "-", verdict(by.get("float") or f),
            verdict(by.get("exact")), verdict(by.get("exact-r")), _fmt(f.get("storm")),
            f"{f['time']:.1f}" if f.get("time") is not None else "-"]) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("qvbs", type=Path, help="a checkout of the QComp benchmark set (github.com/ahartmanns/qcomp)")
    ap.add_argument("out", type=Path, help="directory for the DRN files and results.json")
    ap.add_argument("--max-states", type=int, default=350_000)
    ap.add_argument("--only", action="append", default=[], help="FAMILY or FAMILY:INSTANCE (e.g. brp:16-2)")
    ap.add_argument("--min-states", type=int, default=0, help="leave out the instances with fewer states")
    ap.add_argument("--no-exact", action="store_true", help="float runs only")
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds for each build and each analysis")
    ap.add_argument("--storm-timeout", type=float, default=120.0, help="seconds for Storm's own check")
    ap.add_argument("--summary", nargs="*", type=Path, default=None,
                    help="print the one-line-per-property table of these results.json files, run nothing")
    a = ap.parse_args(argv)
    if a.summary is not None:
        print(summary([r for f in a.summary for r in json.loads(f.read_text())]))
        return 0
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for inst in instances(a.qvbs, a.max_states, a.only):
        if inst["states"] < a.min_states:
            continue
        got = run_instance(inst, a.out, not a.no_exact, a.timeout, a.storm_timeout)
        rows += got
        for r in got:
            print(table([r]).splitlines()[-1], flush=True)
        (a.out / "results.json").write_text(json.dumps(rows, default=str, indent=1))
    print(table(rows))
    return int(any(r.get("status") in ("FAIL", "failed") for r in rows))


if __name__ == "__main__":
    sys.exit(main())
