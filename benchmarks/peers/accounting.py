"""The epsilon each accountant proves for the same charges, and its time per charge (issue 17).

Accountants: privet's ledger; Google's ``dp_accounting`` (PLD and RDP);
OpenDP's compositors (basic composition of pure-DP measurements, and zCDP
composition converted to (epsilon, delta)); diffprivlib 0.6.6's
``BudgetAccountant`` (run in its own venv: it does not import with
scikit-learn >= 1.6). Run::

    python benchmarks/peers/accounting.py --diffprivlib-python /tmp/peers/dpl/bin/python

Writes ``benchmarks/results/peers/accounting.{csv,md}``.

Charge sequences (every accountant gets the same one; delta target 1e-5):

* ``tree``: a depth-5 DP tree exactly as ``DPID3Classifier(epsilon=1,
  max_depth=5)`` plans it on Adult's schema: 5 exponential-mechanism splits and
  a Laplace leaf at epsilon/6 each along every root-to-leaf path, the nodes of
  a level a partition. privet charges the path as nested partitions (and, in
  a second row, the learner itself fits on Adult and charges every node); the peers,
  which have no partitions, compose the path (parallel composition makes the
  tree cost its path for every accountant).
* ``forest``: ``DPRandomForestClassifier(n_estimators=100, sampling="poisson",
  epsilon=1)``'s plan: 100 trees, each on a Poisson subsample at rate 1/100,
  each tree a depth-3 path (3 exponential splits, a Laplace leaf; 1-DP).
* ``gaussian``: 1,000 Gaussian releases, L2 sensitivity 1, sigma 100.
* ``dpsgd``: 1,000 Poisson-subsampled Gaussian steps, rate 0.01, sigma 1
  (the DP-SGD shape; not in the issue's list, added because it is where
  accountants differ most).

How each peer sees the steps: dp_accounting has no exponential-mechanism
event, so an epsilon-DP split is its dominating pair, binary randomised
response with ``noise_parameter = 2 / (1 + e^eps)`` (exactly epsilon-DP, and
the worst case of any epsilon-DP mechanism); Laplace and Gaussian are their own
events. OpenDP: each step is a real OpenDP measurement (a Laplace count for
splits and leaves, which has the same epsilon; Gaussian under zCDP), composed
with ``make_basic_composition``; Poisson sampling is modelled by
``make_population_amplification`` (sampling without replacement, same bound).
diffprivlib's accountant takes (epsilon, delta) pairs: amplified and Gaussian
steps are handed over as the (epsilon, delta) that the PLD accountant gives for
one step, so it measures composition only.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from peer_report import command_block

RESULTS = Path(__file__).resolve().parent.parent / "results" / "peers"
DELTA = 1e-5
GAUSS_SIGMA, GAUSS_STEPS = 100.0, 1000
SGD_SIGMA, SGD_RATE, SGD_STEPS = 1.0, 0.01, 1000


# ----------------------------------------------------------------------------- sequences
def plans():
    """The privet plans of the tree and the forest (from the learners themselves)."""
    from privet.data import load_schema
    from privet.learners import DPID3Classifier, DPRandomForestClassifier

    warnings.simplefilter("ignore")
    schema = load_schema("adult")
    tree = DPID3Classifier(epsilon=1.0, max_depth=5, schema=schema).privacy_plan()
    forest = DPRandomForestClassifier(
        epsilon=1.0, n_estimators=100, sampling="poisson", schema=schema
    ).privacy_plan()
    return tree, forest


def path_of(node):
    """The entries along the first root-to-leaf path of a plan node (all paths are alike)."""
    out = [c.entry for c in node.charges]
    if node.groups:
        out += path_of(node.groups[0][0])
    return out


def steps(name, tree, forest):
    """Generic step list: ("pure", eps, kind) | ("laplace", scale) | ("gauss", sigma) |
    ("sampled", rate, [inner steps])."""
    from privet.ledger import Exponential, Laplace

    def conv(entries):
        out = []
        for e in entries:
            if isinstance(e, Laplace):
                out.append(("laplace", e.scale / e.sensitivity))
            elif isinstance(e, Exponential):
                out.append(("pure", e.epsilon))
            else:
                raise TypeError(e)
        return out

    if name == "tree":
        return conv(path_of(tree))
    if name == "forest":
        return [("sampled", rate, conv(path_of(child))) for child, rate, _ in forest.subsamples]
    if name == "gaussian":
        return [("gauss", GAUSS_SIGMA)] * GAUSS_STEPS
    if name == "dpsgd":
        return [("sampled", SGD_RATE, [("gauss", SGD_SIGMA)])] * SGD_STEPS
    raise KeyError(name)


def pure_eps(step) -> float:
    kind = step[0]
    if kind == "pure":
        return step[1]
    if kind == "laplace":
        return 1.0 / step[1]
    raise ValueError(step)


# ----------------------------------------------------------------------------- privet
def privet_run(name, tree, forest):
    from privet.ledger import (
        BudgetExceededError,
        Exponential,
        Gaussian,
        Guarantee,
        Laplace,
        Ledger,
    )

    ledger = Ledger(budget=Guarantee(1e6, DELTA), dataset=f"peers-{name}")
    n = 0
    t0 = time.perf_counter()

    def entry(step):
        kind = step[0]
        if kind == "pure":
            return Exponential(epsilon=step[1], sensitivity=1.0), "exponential"
        if kind == "laplace":
            return Laplace(scale=step[1], sensitivity=1.0), "laplace"
        if kind == "gauss":
            return Gaussian(sigma=step[1], sensitivity=1.0), "gaussian"
        raise ValueError(step)

    refused = ""
    try:
        if name == "tree":  # one path, as nested partitions
            scope = ledger.root
            for s in steps(name, tree, forest):
                e, mech = entry(s)
                scope.charge(e, mechanism=mech)
                n += 1
                scope = scope.partition(2)[0]
        else:
            for s in steps(name, tree, forest):
                if s[0] == "sampled":
                    scope = ledger.root.subsample(s[1], "poisson")
                    for i, inner in enumerate(s[2]):
                        e, mech = entry(inner)
                        scope.charge(e, mechanism=mech)
                        n += 1
                        if i < len(s[2]) - 1 and name == "forest":
                            scope = scope.partition(2)[0]
                else:
                    e, mech = entry(s)
                    ledger.root.charge(e, mechanism=mech)
                    n += 1
    except BudgetExceededError as exc:  # the ledger cannot prove the sequence within its delta
        refused = f"refused at charge {n + 1} of {len(steps(name, tree, forest))}: {str(exc)[:150]}"
    charge_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    bound = ledger.spent_bound()
    query_s = time.perf_counter() - t0
    g = bound.guarantee
    how = getattr(bound, "accountant", None) or getattr(bound, "method", None) or ""
    if refused:
        return dict(
            epsilon=np.nan,
            delta=DELTA,
            n_charges=n,
            charge_us=1e6 * charge_s / n,
            query_ms=np.nan,
            note=refused,
        )
    return dict(
        epsilon=g.epsilon,
        delta=g.delta,
        n_charges=n,
        charge_us=1e6 * charge_s / n,
        query_ms=1e3 * query_s,
        note=f"ledger's best accountant: {how}" if how else "",
    )


def privet_fit(name):
    """The learner itself on Adult: every node's charge, in the ledger it builds; the time per
    charge here includes the learning (an upper bound on the ledger's share)."""
    from privet.data import load_dataset
    from privet.learners import DPID3Classifier, DPRandomForestClassifier
    from privet.ledger import Guarantee, Ledger

    ds = load_dataset("adult")
    ledger = Ledger(budget=Guarantee(1e6, DELTA), dataset=f"peers-fit-{name}")
    if name == "tree":
        model = DPID3Classifier(epsilon=1.0, max_depth=5, schema=ds.schema, ledger=ledger)
    else:
        model = DPRandomForestClassifier(
            epsilon=1.0, n_estimators=100, sampling="poisson", schema=ds.schema, ledger=ledger
        )
    t0 = time.perf_counter()
    model.fit(ds.X, ds.y)
    fit_s = time.perf_counter() - t0
    n = len(ledger.charges)
    g = ledger.spent()
    return dict(
        epsilon=g.epsilon,
        delta=g.delta,
        n_charges=n,
        charge_us=1e6 * fit_s / n,
        query_ms=np.nan,
        note=f"fit {fit_s:.2f} s for {n} charges (learning included)",
    )


# ----------------------------------------------------------------------------- dp_accounting
def dpa_event(step):
    import dp_accounting as dpa

    kind = step[0]
    if kind == "pure":
        return dpa.RandomizedResponseDpEvent(
            noise_parameter=2 / (1 + math.exp(step[1])), num_buckets=2
        )
    if kind == "laplace":
        return dpa.LaplaceDpEvent(noise_multiplier=step[1])
    if kind == "gauss":
        return dpa.GaussianDpEvent(noise_multiplier=step[1])
    if kind == "sampled":
        inner = [dpa_event(s) for s in step[2]]
        return dpa.PoissonSampledDpEvent(
            step[1], inner[0] if len(inner) == 1 else dpa.ComposedDpEvent(inner)
        )
    raise ValueError(step)


def pld_of(step, pld_mod):
    """dp_accounting's PLD of one step (add/remove), built with its PLD library."""
    from dp_accounting.pld import common

    p = pld_mod.privacy_loss_distribution
    kind = step[0]
    if kind == "pure":
        return p.from_privacy_parameters(common.DifferentialPrivacyParameters(step[1], 0.0))
    if kind == "laplace":
        return p.from_laplace_mechanism(step[1], sensitivity=1.0)
    if kind == "sampled" and all(s[0] in ("pure", "laplace") for s in step[2]):
        # no PLD for a subsampled composition: the tree's amplified pure guarantee
        e = math.log1p(step[1] * math.expm1(sum(pure_eps(s) for s in step[2])))
        return p.from_privacy_parameters(common.DifferentialPrivacyParameters(e, 0.0))
    raise ValueError(step)


def dpa_run(kind, seq):
    from dp_accounting import pld, rdp

    if kind == "PLD" and any(
        s[0] == "pure" or (s[0] == "sampled" and s[2][0][0] != "gauss") for s in seq
    ):
        # pure-DP steps: dp_accounting's PLD library (its accountant has no pure-DP event
        # under add/remove); identical runs self-composed
        t0 = time.perf_counter()
        total, i = None, 0
        while i < len(seq):
            j = i
            while j < len(seq) and seq[j] == seq[i]:
                j += 1
            d = pld_of(seq[i], pld)
            d = d.self_compose(j - i) if j - i > 1 else d
            total = d if total is None else total.compose(d)
            i = j
        charge_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        eps = total.get_epsilon_for_delta(DELTA)
        query_s = time.perf_counter() - t0
        note = (
            "PLD library; forest trees as their amplified pure guarantee"
            if seq[0][0] == "sampled"
            else "PLD library"
        )
        return dict(
            epsilon=eps,
            delta=DELTA,
            n_charges=len(seq),
            charge_us=1e6 * charge_s / len(seq),
            query_ms=1e3 * query_s,
            note=note,
        )

    acc = pld.PLDAccountant() if kind == "PLD" else rdp.RdpAccountant()
    events = [dpa_event(s) for s in seq]
    unsupported = [e for e in events if not acc.supports(e)]
    if unsupported:
        return dict(
            epsilon=np.nan,
            delta=DELTA,
            n_charges=len(seq),
            note=f"refused: {type(unsupported[0]).__name__} "
            + (
                f"of {type(unsupported[0].event).__name__}"
                if hasattr(unsupported[0], "event")
                else ""
            ),
        )
    # runs of identical steps go in as one SelfComposedDpEvent, as dp_accounting is meant to be
    # used (one PLD convolution per step would take minutes for 1,000 steps)
    import dp_accounting as dpa

    t0 = time.perf_counter()
    i = 0
    while i < len(seq):
        j = i
        while j < len(seq) and seq[j] == seq[i]:
            j += 1
        ev = events[i] if j - i == 1 else dpa.SelfComposedDpEvent(events[i], j - i)
        acc.compose(ev)
        i = j
    charge_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    eps = acc.get_epsilon(DELTA)
    query_s = time.perf_counter() - t0
    return dict(
        epsilon=eps,
        delta=DELTA,
        n_charges=len(seq),
        charge_us=1e6 * charge_s / len(seq),
        query_ms=1e3 * query_s,
        note="",
    )


# ----------------------------------------------------------------------------- OpenDP
def opendp_run(route, seq):
    """route "pure": basic composition in max divergence; "zcdp": every step in zCDP, then
    converted to (epsilon, delta)."""
    import opendp.prelude as dp

    dp.enable_features("contrib", "honest-but-curious")
    pop = 100_000
    t0 = time.perf_counter()

    def meas(step, sized=None):
        kind = step[0]
        dom = dp.vector_domain(dp.atom_domain(T=int), size=sized)
        cnt = dp.t.make_count(dom, dp.symmetric_distance())
        if kind in ("pure", "laplace"):
            eps = pure_eps(step)
            m = cnt >> dp.m.then_laplace(1.0 / eps)
            return dp.c.make_pureDP_to_zCDP(m) if route == "zcdp" else m
        if kind == "gauss":
            m = cnt >> dp.m.then_gaussian(step[1])
            if route == "pure" and sized is None:  # approximate DP at a fixed share of delta
                return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(m), DELTA / len(seq))
            return m
        if kind == "sampled":
            if route == "zcdp":
                raise ValueError("OpenDP amplifies pure or approximate DP, not zCDP")
            n = max(1, round(step[1] * pop))
            inner = [meas(s, sized=n) for s in step[2]]
            if any(s[0] == "gauss" for s in step[2]):
                inner = [
                    dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(m), DELTA / len(seq) / step[1])
                    for m in inner
                ]
            m = inner[0] if len(inner) == 1 else dp.c.make_basic_composition(inner)
            return dp.c.make_population_amplification(m, population_size=pop)
        raise ValueError(step)

    try:
        ms = [meas(s) for s in seq]
        comp = dp.c.make_basic_composition(ms)
    except Exception as exc:
        return dict(
            epsilon=np.nan, delta=DELTA, n_charges=len(seq), note=f"refused: {str(exc)[:160]}"
        )
    charge_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    if route == "zcdp":
        eps = dp.c.make_zCDP_to_approxDP(comp).map(1).epsilon(DELTA)
        delta = DELTA
    else:
        out = comp.map(1)
        eps, delta = out if isinstance(out, tuple) else (out, 0.0)
    query_s = time.perf_counter() - t0
    return dict(
        epsilon=float(eps),
        delta=float(delta),
        n_charges=len(seq),
        charge_us=1e6 * charge_s / len(seq),
        query_ms=1e3 * query_s,
        note="",
    )


# ----------------------------------------------------------------------------- diffprivlib
DPL_SCRIPT = r"""
import json, sys, time
from diffprivlib import BudgetAccountant
pairs, slack = json.loads(sys.argv[1]), float(sys.argv[2])
acc = BudgetAccountant(slack=slack)
t = time.perf_counter()
for e, d in pairs:
    acc.spend(e, d)
c = time.perf_counter() - t
t = time.perf_counter()
tot = acc.total()
print(json.dumps([tot[0], tot[1], c, time.perf_counter() - t]))
"""


def one_step_pair(step, n_steps):
    """The (epsilon, delta) of one step as handed to diffprivlib (PLD for non-pure steps)."""
    if step[0] in ("pure", "laplace"):
        return pure_eps(step), 0.0
    if step[0] == "sampled" and all(s[0] in ("pure", "laplace") for s in step[2]):
        e = sum(pure_eps(s) for s in step[2])
        return math.log1p(step[1] * math.expm1(e)), 0.0
    from dp_accounting import pld

    d = DELTA / (2 * n_steps)
    acc = pld.PLDAccountant()
    acc.compose(dpa_event(step))
    return acc.get_epsilon(d), d


def dpl_run(python, seq, slack):
    pairs = [one_step_pair(s, len(seq)) for s in seq]
    out = subprocess.run(
        [python, "-c", DPL_SCRIPT, json.dumps(pairs), str(slack)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if out.returncode != 0:
        return dict(epsilon=np.nan, n_charges=len(seq), note=f"failed: {out.stderr[-200:]}")
    eps, delta, c, q = json.loads(out.stdout.strip().splitlines()[-1])
    return dict(
        epsilon=eps,
        delta=delta,
        n_charges=len(seq),
        charge_us=1e6 * c / len(seq),
        query_ms=1e3 * q,
        note=f"slack={slack:g}",
    )


# ----------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--diffprivlib-python", default=None)
    ap.add_argument("--sequences", nargs="+", default=["tree", "forest", "gaussian", "dpsgd"])
    args = ap.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    load_start = Path("/proc/loadavg").read_text().strip()
    tree, forest = plans()
    rows = []
    for name in args.sequences:
        seq = steps(name, tree, forest)
        cands = [("privet ledger", partial(privet_run, name, tree, forest))]
        if name in ("tree", "forest"):
            cands.append(
                ("privet learner fit on Adult (all its charges)", partial(privet_fit, name))
            )
        cands += [
            ("dp_accounting PLD", partial(dpa_run, "PLD", seq)),
            ("dp_accounting RDP", partial(dpa_run, "RDP", seq)),
            ("OpenDP basic composition", partial(opendp_run, "pure", seq)),
            ("OpenDP zCDP composition", partial(opendp_run, "zcdp", seq)),
        ]
        if args.diffprivlib_python:
            cands += [
                (
                    "diffprivlib BudgetAccountant",
                    partial(dpl_run, args.diffprivlib_python, seq, 0.0),
                ),
                (
                    "diffprivlib BudgetAccountant (slack)",
                    partial(dpl_run, args.diffprivlib_python, seq, DELTA / 2),
                ),
            ]
        for label, fn in cands:
            try:
                r = fn()
            except Exception as exc:
                r = dict(epsilon=np.nan, note=f"error: {type(exc).__name__}: {str(exc)[:160]}")
            r.update(sequence=name, accountant=label)
            rows.append(r)
            print(f"{name:8s} {label:40s} eps={r.get('epsilon')} {r.get('note', '')}", flush=True)
    df = pd.DataFrame(rows)
    cols = [
        "sequence",
        "accountant",
        "epsilon",
        "delta",
        "n_charges",
        "charge_us",
        "query_ms",
        "note",
    ]
    df = df.reindex(columns=cols)
    df.to_csv(RESULTS / "accounting.csv", index=False)
    load_end = Path("/proc/loadavg").read_text().strip()
    write_md(df, load_start, load_end)
    print(f"wrote {RESULTS}/accounting.{{csv,md}}")


DESCR = {
    "tree": "depth-5 DP tree (DPID3, epsilon=1: 5 exponential splits + Laplace leaf at 1/6 each per path)",
    "forest": "100-tree forest, Poisson subsamples at rate 0.01, each tree 1-DP (depth-3 path)",
    "gaussian": f"{GAUSS_STEPS} Gaussian releases, sensitivity 1, sigma {GAUSS_SIGMA:g}",
    "dpsgd": f"{SGD_STEPS} Poisson-subsampled Gaussian steps, rate {SGD_RATE}, sigma {SGD_SIGMA:g}",
}


def write_md(df, load_start, load_end):
    lines = [
        "# Accounting: the epsilon each accountant proves for the same charges",
        "",
        *command_block("accounting.py"),
        f"Load average at start `{load_start}`, at end `{load_end}` (2 cores shared with three "
        "other agents: times are inflated and only comparable within this run). Target delta "
        f"{DELTA:g} wherever an accountant can use a delta. `charge µs` is the time to record one "
        "charge (compose one event, build one measurement, spend once); `query ms` the time "
        "to get the epsilon at the end. See the script's docstring for how each peer sees the steps.",
        "",
    ]
    for name, g in df.groupby("sequence", sort=False):
        priv = g[g.accountant == "privet ledger"].epsilon.iloc[0]
        lines += [
            f"## {DESCR[name]}",
            "",
            "| accountant | epsilon | delta | charges | charge µs | query ms | vs privet | note |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for _, r in g.iterrows():
            ratio = (
                ""
                if not np.isfinite(r.epsilon) or not np.isfinite(priv) or priv == 0
                else f"{r.epsilon / priv:.2f}x"
            )
            lines.append(
                f"| {r.accountant} | {r.epsilon:.4g} | {r.delta:.3g} | {r.n_charges:.0f} | "
                f"{r.charge_us:.1f} | {r.query_ms:.2f} | {ratio} | {r.note if isinstance(r.note, str) else ''} |"
            )
        better = g[(g.epsilon < priv * (1 - 1e-3)) & ~g.accountant.str.startswith("privet")]
        if not np.isfinite(priv):
            proven = g[np.isfinite(g.epsilon) & ~g.accountant.str.startswith("privet")]
            lines += [
                "",
                "**Gap:** privet's ledger proves no finite epsilon at delta "
                f"{DELTA:g} for this sequence (it refuses it); "
                + "; ".join(f"{r.accountant} proves {r.epsilon:.4g}" for _, r in proven.iterrows())
                + ".",
            ]
        elif len(better):
            lines += [
                "",
                "**Gap:** "
                + "; ".join(
                    f"{r.accountant} proves epsilon {r.epsilon:.4g} where privet's ledger proves {priv:.4g}"
                    for _, r in better.iterrows()
                )
                + ".",
            ]
        else:
            lines += ["", "No peer proves a smaller epsilon than privet's ledger here."]
        lines.append("")
    (RESULTS / "accounting.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
