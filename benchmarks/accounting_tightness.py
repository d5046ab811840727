"""How tight privet's ledger is: the epsilon it proves for a set of charges next to the
smallest epsilon a peer accountant proves for the same charges (issue 31).

Peers: Google's ``dp_accounting`` 0.6 (its privacy loss distribution library, with
``value_discretization_interval=1e-4`` and its pessimistic estimates, and its Rényi DP
accountant), the PRV accountant (``prv-accountant``, Gopi, Lee & Wutschitz 2021; its
upper bound ``eps_up`` with ``eps_error=0.01``), and OpenDP 0.16's compositors (basic
composition of pure-DP measurements; zCDP composition converted to (epsilon, delta);
population amplification of pure DP). Run::

    pip install -e ".[peers]"      # dp-accounting, prv-accountant
    python benchmarks/accounting_tightness.py

Writes ``benchmarks/results/accounting_tightness.{csv,md,png}``.

Every workload is described once (a small list of steps) and handed to every
accountant in the form it understands; where a peer has no model of a step it says
"n/a", never a number privet made up for it. Two readings favour the peers:

* partitions: no peer composes a partition, so the peers get the charges of one part
  only (the costliest root-to-leaf path of a tree, which a user would have to find by
  hand); privet composes the whole tree;
* a sample holding several releases (a forest's tree): the peers amplify single
  mechanisms only, so they get the sample's charges composed basically into one pure
  (epsilon, 0) release, amplified exactly (``ln(1 + q (e^eps - 1))``).

The learners' workloads are their own privacy plans (``privacy_plan()`` on Adult's
schema, epsilon 1), converted step by step.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

RESULTS = Path(__file__).resolve().parent / "results"
DELTAS = (1e-5, 1e-8)

# A step: ("gauss", sigma) Gaussian of L2 sensitivity 1; ("laplace", scale) continuous-ish
# scalar Laplace of sensitivity 1 (OpenDP's float lattice); ("dlaplace", scale, sens)
# discrete Laplace on integer counts; ("pure", eps) an eps-DP release known by eps only;
# ("em", eps) an exponential mechanism; ("approx", eps, delta); ("dgauss", sigma);
# ("zcdp", rho); ("sampled", rate, steps) a Poisson sample; ("wor", n, m, steps) m of n
# without replacement (replace-one); ("partition", parts, steps) parts alike in parallel.


# ------------------------------------------------------------------------ workloads
def _learner_plans() -> dict[str, tuple[object, str, str]]:
    """name -> (privacy plan, relation, description) of the learners at epsilon 1."""
    from privet.data import Categorical, Numeric, Schema, load_schema
    from privet.learners import (
        DPGradientBoostingClassifier,
        DPID3Classifier,
        DPRandomForestClassifier,
        FederatedDPTreeClassifier,
        LDPBoostingClassifier,
        MatrixRandomForestClassifier,
        ObliviousID3Classifier,
        PartialMPCID3Classifier,
        SecureSumID3Classifier,
    )

    warnings.simplefilter("ignore")
    adult = load_schema("adult")
    numeric = Schema([Numeric(f"f{i}", 0, 1) for i in range(10)], Categorical("y", [0, 1]))
    rows = {
        "DPID3 depth 5": (DPID3Classifier(epsilon=1.0, max_depth=5, schema=adult), "add_remove"),
        "forest, 100 Poisson trees": (
            DPRandomForestClassifier(
                epsilon=1.0, n_estimators=100, sampling="poisson", schema=adult
            ),
            "add_remove",
        ),
        "DPGBT subsample 0.5": (
            DPGradientBoostingClassifier(epsilon=1.0, subsample=0.5, schema=adult),
            "add_remove",
        ),
        "seed 000 CDP+PMPC": (PartialMPCID3Classifier(epsilon=1.0, schema=adult), "add_remove"),
        "seed 000 ODP+FMPC": (ObliviousID3Classifier(epsilon=1.0, schema=adult), "add_remove"),
        "seed 001 secure-sum ID3": (
            SecureSumID3Classifier(epsilon=1.0, schema=adult),
            "add_remove",
        ),
        "seed 002 matrix forest": (
            MatrixRandomForestClassifier(epsilon=1.0, schema=adult),
            "add_remove",
        ),
        "seed 003 federated CART": (
            FederatedDPTreeClassifier(epsilon=1.0, schema=numeric),
            "add_remove",
        ),
        "seed 004 LDP boosting": (
            LDPBoostingClassifier(epsilon=1.0, schema=numeric),
            "replace_one",
        ),
    }
    out = {}
    for name, (model, relation) in rows.items():
        plan = model.privacy_plan(model.schema)
        out[name] = (plan, relation, f"{type(model).__name__}'s plan: {plan.description}")
    return out


def plan_steps(node) -> list:
    """A plan as steps (entries mapped to the kinds above)."""
    from privet.ledger import (
        ZCDP,
        ApproxDP,
        DiscreteGaussian,
        DiscreteLaplaceCounts,
        Exponential,
        Gaussian,
        Laplace,
        LocalRandomiser,
        PureDP,
    )
    from privet.ledger.entries import LatticeLaplace
    from privet.mechanisms.entries import DistributedLaplace, NoisyMax

    out: list = []
    for c in node.charges:
        e = c.entry
        if isinstance(e, DiscreteGaussian):
            out.append(("dgauss", e.sigma / e.sensitivity))
        elif isinstance(e, Gaussian):
            out.append(("gauss", e.sigma / e.sensitivity))
        elif isinstance(e, LatticeLaplace):
            out.append(("laplace", e.scale / e.sensitivity))
        elif isinstance(e, DiscreteLaplaceCounts):  # k counts, each moving by at most 1
            out += [("dlaplace", e.scale, 1.0)] * e.sensitivity
        elif isinstance(e, Laplace):  # the learners' Laplace: discrete noise on counts
            out.append(("dlaplace", e.scale, e.sensitivity))
        elif isinstance(e, Exponential) or (isinstance(e, NoisyMax) and e.noise == "gumbel"):
            out.append(("em", e.epsilon))
        elif isinstance(e, DistributedLaplace) and e.discrete and not e.charge_colluders:
            out.append(("dlaplace", e.scale, e.sensitivity))
        elif isinstance(e, ZCDP):
            out.append(("zcdp", e.rho))
        elif isinstance(e, ApproxDP) and e.delta > 0:
            out.append(("approx", e.epsilon, e.delta))
        elif isinstance(e, PureDP | LocalRandomiser | NoisyMax | ApproxDP | DistributedLaplace):
            if e.delta > 0:
                out.append(("approx", e.epsilon, e.delta))
            elif e.epsilon > 0:
                out.append(("pure", e.epsilon))
        else:
            raise TypeError(f"no step for {e!r}")
    for child, count, _stable in node.groups:
        out.append(("partition", count, plan_steps(child)))
    for child, rate, method in node.subsamples:
        inner = plan_steps(child)
        if method == "poisson":
            out.append(("sampled", rate, inner))
        else:
            out.append(("wor", 10_000, round(rate * 10_000), inner))
    return out


def workloads() -> list[dict]:
    """The workloads: name, steps (or a plan), relation, description."""
    rows = [
        dict(name="1,000 Poisson Gaussians, q 0.01, sigma 1 (DP-SGD)",
             steps=[("sampled", 0.01, [("gauss", 1.0)])] * 1000),
        dict(name="10,000 Poisson Gaussians, q 0.004, sigma 0.8",
             steps=[("sampled", 0.004, [("gauss", 0.8)])] * 10_000),
        dict(name="100 Poisson Laplace, q 0.1, eps 1",
             steps=[("sampled", 0.1, [("laplace", 1.0)])] * 100),
        dict(name="1,000 Poisson Laplace, q 0.01, eps 0.5",
             steps=[("sampled", 0.01, [("laplace", 2.0)])] * 1000),
        dict(name="100 Laplace, eps 0.1", steps=[("laplace", 10.0)] * 100),
        dict(name="50 Laplace (0.1) and 50 Gaussians (sigma 10)",
             steps=[("laplace", 10.0)] * 50 + [("gauss", 10.0)] * 50),
        dict(name="100 counts, discrete Laplace eps 0.1", steps=[("dlaplace", 10.0, 1.0)] * 100),
        dict(name="100 fixed-size batches, 100 of 10,000, sigma 1 (replace-one)",
             steps=[("wor", 10_000, 100, [("gauss", 1.0)])] * 100, relation="replace_one"),
        dict(name="every kind dp_accounting models, 10 of each",
             steps=[("pure", 0.2), ("approx", 0.1, 1e-10), ("laplace", 5.0), ("dlaplace", 5.0, 1.0),
                    ("gauss", 3.0), ("dgauss", 3.0), ("em", 0.3),
                    ("sampled", 0.2, [("gauss", 2.0)]), ("sampled", 0.2, [("laplace", 2.0)])] * 10),
        dict(name="every entry kind, zCDP and a sample of three releases too",
             steps=[("pure", 0.2), ("approx", 0.1, 1e-10), ("laplace", 5.0), ("dlaplace", 5.0, 1.0),
                    ("gauss", 3.0), ("dgauss", 3.0), ("em", 0.3), ("zcdp", 0.02),
                    ("sampled", 0.2, [("gauss", 2.0), ("laplace", 2.0), ("em", 0.5)])] * 5),
    ]  # fmt: skip
    for name, (plan, relation, description) in _learner_plans().items():
        rows.append(dict(name=name, plan=plan, steps=plan_steps(plan), relation=relation,
                         description=description))  # fmt: skip
    for row in rows:
        row.setdefault("relation", "add_remove")
        row.setdefault("description", "")
    return rows


# --------------------------------------------------------------------------- privet
def privet_entry(step):
    from privet.ledger import (
        ZCDP,
        ApproxDP,
        DiscreteGaussian,
        Exponential,
        Gaussian,
        Laplace,
        PureDP,
    )
    from privet.ledger.entries import LatticeLaplace

    kind = step[0]
    if kind == "gauss":
        return Gaussian(sigma=step[1], sensitivity=1.0)
    if kind == "laplace":  # OpenDP's float Laplace on a scalar: the lattice 2^-30 below 1
        return LatticeLaplace(scale=step[1], sensitivity=1.0 + 2.0**-30, granularity=2.0**-30)
    if kind == "dlaplace":
        return Laplace(scale=step[1], sensitivity=step[2])
    if kind == "pure":
        return PureDP(epsilon=step[1])
    if kind == "em":
        return Exponential(epsilon=step[1], sensitivity=1.0)
    if kind == "approx":
        return ApproxDP(epsilon=step[1], delta=step[2])
    if kind == "dgauss":
        return DiscreteGaussian(sigma=step[1], sensitivity=1.0)
    if kind == "zcdp":
        return ZCDP(rho=step[1])
    raise ValueError(step)


def privet_eps(row, delta: float) -> tuple[float, str, float]:
    """(epsilon, accountant, seconds) privet proves for the workload at ``delta``."""
    from privet.ledger import Guarantee, Ledger

    led = Ledger(budget=Guarantee(1e9, delta), relation=row["relation"])
    t0 = time.perf_counter()
    if "plan" in row:
        bound = led._plan_bound(row["plan"], delta)
        return bound.guarantee.epsilon, bound.method, time.perf_counter() - t0

    def charge(scope, steps):
        for step in steps:
            if step[0] == "sampled":
                charge(scope.subsample(step[1], "poisson"), step[2])
            elif step[0] == "wor":
                charge(scope.subsample(step[2] / step[1], "without_replacement"), step[3])
            elif step[0] == "partition":
                for part in scope.partition(step[1]):
                    charge(part, step[2])
            else:
                scope.charge(privet_entry(step), mechanism=step[0])

    charge(led.root, row["steps"])
    bound = led._best("all", delta=delta, smallest=True)
    return bound.guarantee.epsilon, bound.method, time.perf_counter() - t0


# ---------------------------------------------------------------------------- peers
class NotModelled(Exception):
    """The peer has no model of a step."""


def _path(steps):
    """The steps of one part of every partition (the peers' reading of parallel parts)."""
    out = []
    for step in steps:
        if step[0] == "partition":
            out += _path(step[2])
        else:
            out.append(step)
    return out


def _basic_pure(steps) -> float:
    """Basic composition of pure steps (the peers' reading of a sample of several)."""
    total = 0.0
    for step in _path(steps):
        if step[0] in ("pure", "em"):
            total += step[1]
        elif step[0] == "laplace":
            total += 1.0 / step[1]
        elif step[0] == "dlaplace":
            total += step[2] / step[1]
        else:
            raise NotModelled(f"a sample holding {step[0]} with other releases")
    return total


def _runs(steps):
    """Consecutive identical steps as (step, count)."""
    out: list = []
    for step in steps:
        if out and out[-1][0] == step:
            out[-1][1] += 1
        else:
            out.append([step, 1])
    return out


def dpa_pld_eps(row, delta: float) -> float:
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as p

    vdi = 1e-4

    def one(step, q=1.0):
        kind = step[0]
        if kind == "gauss":
            return p.from_gaussian_mechanism(
                step[1], sampling_prob=q, value_discretization_interval=vdi
            )
        if kind == "laplace":
            return p.from_laplace_mechanism(
                step[1], sampling_prob=q, value_discretization_interval=vdi
            )
        if kind == "dlaplace":
            return p.from_discrete_laplace_mechanism(
                1.0 / step[1],
                sensitivity=round(step[2]),
                sampling_prob=q,
                value_discretization_interval=vdi,
            )
        if kind == "dgauss":
            return p.from_discrete_gaussian_mechanism(
                step[1], sampling_prob=q, value_discretization_interval=vdi
            )
        if q < 1.0:
            raise NotModelled(f"a sampled {kind}")
        if kind in ("pure", "em"):
            return p.from_privacy_parameters(
                common.DifferentialPrivacyParameters(step[1], 0.0), vdi
            )
        if kind == "approx":
            return p.from_privacy_parameters(
                common.DifferentialPrivacyParameters(step[1], step[2]), vdi
            )
        raise NotModelled(kind)

    total = None
    for step, count in _runs(_path(row["steps"])):
        if step[0] == "sampled":
            inner = _path(step[2])
            if len(inner) == 1:
                d = one(inner[0], step[1])
            else:  # the sample's releases as one pure release, amplified exactly
                e = math.log1p(step[1] * math.expm1(_basic_pure(inner)))
                d = p.from_privacy_parameters(common.DifferentialPrivacyParameters(e, 0.0), vdi)
        elif step[0] in ("wor", "zcdp"):
            raise NotModelled(step[0])
        else:
            d = one(step)
        d = d.self_compose(count) if count > 1 else d
        total = d if total is None else total.compose(d)
    return total.get_epsilon_for_delta(delta)


def dpa_rdp_eps(row, delta: float) -> float:
    import dp_accounting as dpa
    from dp_accounting import rdp

    relation = (
        dpa.NeighboringRelation.REPLACE_ONE
        if row["relation"] == "replace_one"
        else dpa.NeighboringRelation.ADD_OR_REMOVE_ONE
    )
    acc = rdp.RdpAccountant(neighboring_relation=relation)

    def event(step):
        kind = step[0]
        if kind == "gauss":
            return dpa.GaussianDpEvent(step[1])
        if kind == "laplace":
            return dpa.LaplaceDpEvent(step[1])
        if kind == "zcdp":
            return dpa.ZCDpEvent(step[1])
        if kind == "sampled" and len(_path(step[2])) == 1:
            return dpa.PoissonSampledDpEvent(step[1], event(_path(step[2])[0]))
        if kind == "wor" and len(_path(step[3])) == 1:
            return dpa.SampledWithoutReplacementDpEvent(step[1], step[2], event(_path(step[3])[0]))
        raise NotModelled(kind)

    for step, count in _runs(_path(row["steps"])):
        ev = event(step)
        if not acc.supports(ev):
            raise NotModelled(type(ev).__name__)
        acc.compose(dpa.SelfComposedDpEvent(ev, count) if count > 1 else ev)
    return acc.get_epsilon(delta)


def prv_eps(row, delta: float) -> float:
    from prv_accountant import PRVAccountant
    from prv_accountant import privacy_random_variables as prv

    prvs, counts = [], []
    for step, count in _runs(_path(row["steps"])):
        kind = step[0]
        if kind == "gauss":
            x = prv.GaussianMechanism(noise_multiplier=step[1])
        elif kind == "laplace":
            x = prv.LaplaceMechanism(mu=step[1])
        elif kind in ("pure", "em"):
            x = prv.PureDPMechanism(eps=step[1])
        elif kind == "approx":
            x = prv.ApproximateDPMechanism(epsilon=step[1], delta=step[2])
        elif kind == "sampled" and len(_path(step[2])) == 1 and _path(step[2])[0][0] == "gauss":
            x = prv.PoissonSubsampledGaussianMechanism(
                sampling_probability=step[1], noise_multiplier=_path(step[2])[0][1]
            )
        else:
            raise NotModelled(kind)
        prvs.append(x)
        counts.append(count)
    acc = PRVAccountant(
        prvs=prvs, max_self_compositions=counts, eps_error=0.01, delta_error=delta / 1000
    )
    _, _, eps_up = acc.compute_epsilon(delta=delta, num_self_compositions=counts)
    return eps_up


def opendp_eps(row, delta: float) -> float:
    """OpenDP's compositors: pure DP added up, or zCDP (pure steps at eps^2/2) converted."""
    import opendp.prelude as dp

    dp.enable_features("contrib", "honest-but-curious")
    steps = _path(row["steps"])
    dom = dp.vector_domain(dp.atom_domain(T=int))
    count = dp.t.make_count(dom, dp.symmetric_distance())
    best = math.inf
    pure_ok = all(s[0] in ("pure", "em", "laplace", "dlaplace") for s in steps)
    if pure_ok:  # basic composition of pure-DP measurements
        eps = [
            1.0 / s[1] if s[0] == "laplace" else s[2] / s[1] if s[0] == "dlaplace" else s[1]
            for s in steps
        ]
        ms = [count >> dp.m.then_laplace(1.0 / e) for e in eps]
        best = dp.c.make_basic_composition(ms).map(1)
    zok = all(s[0] in ("pure", "em", "laplace", "dlaplace", "gauss", "zcdp") for s in steps)
    if zok:
        ms = []
        for s in steps:
            if s[0] == "gauss":
                ms.append(count >> dp.m.then_gaussian(s[1]))
            elif s[0] == "zcdp":
                ms.append(count >> dp.m.then_gaussian(1.0 / math.sqrt(2 * s[1])))
            else:
                e = 1.0 / s[1] if s[0] == "laplace" else s[2] / s[1] if s[0] == "dlaplace" else s[1]
                ms.append(dp.c.make_pureDP_to_zCDP(count >> dp.m.then_laplace(1.0 / e)))
        curve = dp.c.make_zCDP_to_approxDP(dp.c.make_basic_composition(ms)).map(1)
        best = min(best, curve.epsilon(delta))
    if not (pure_ok or zok):
        raise NotModelled("a subsample or an approximate-DP step")
    return float(best)


PEERS = {
    "dp_accounting PLD": dpa_pld_eps,
    "dp_accounting RDP": dpa_rdp_eps,
    "PRV accountant": prv_eps,
    "OpenDP": opendp_eps,
}


# ------------------------------------------------------------------------------ run
def run(only: str | None = None) -> pd.DataFrame:
    records = []
    for row in workloads():
        if only and only not in row["name"]:
            continue
        for delta in DELTAS:
            eps, method, secs = privet_eps(row, delta)
            rec = dict(workload=row["name"], delta=delta, privet=eps, privet_accountant=method,
                       privet_seconds=secs, relation=row["relation"])  # fmt: skip
            for peer, fn in PEERS.items():
                t0 = time.perf_counter()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        value = float(fn(row, delta))
                    note = ""
                except NotModelled as exc:
                    value, note = math.nan, f"n/a: {exc}"
                except Exception as exc:  # a peer that fails says so in the table
                    value, note = math.nan, f"failed: {type(exc).__name__}: {str(exc)[:80]}"
                rec[peer] = value
                rec[f"{peer} note"] = note
                rec[f"{peer} seconds"] = time.perf_counter() - t0
            peers = [rec[p] for p in PEERS if np.isfinite(rec[p])]
            rec["best peer"] = min(peers) if peers else math.nan
            rec["ratio"] = eps / rec["best peer"] if peers else math.nan
            print(f"{row['name'][:55]:55s} delta={delta:g} privet={eps:.4f} ({method}) "
                  f"best peer={rec['best peer']:.4f} ratio={rec['ratio']:.4f}", flush=True)  # fmt: skip
            records.append(rec)
    return pd.DataFrame.from_records(records)


def write(df: pd.DataFrame, command: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    RESULTS.mkdir(parents=True, exist_ok=True)
    df.to_csv(RESULTS / "accounting_tightness.csv", index=False)
    lines = [
        "# Accounting tightness: privet's ledger next to the peers' accountants",
        "",
        f'Command: `{command}` (environment: `pip install -e ".[peers]"`).',
        "",
        "Epsilon proven for the same charges at each delta; **ratio** = privet / the smallest",
        "epsilon any peer proves (below 1: privet proves less). Peers: dp_accounting 0.6 (PLD",
        "library at value_discretization_interval 1e-4, pessimistic; RDP accountant), the PRV",
        "accountant (its upper bound, eps_error 0.01), OpenDP 0.16 (basic and zCDP composition).",
        "n/a: the peer has no model of a step. Partitions: the peers get one part's charges",
        "(parallel composition by hand); a sample of several releases: their basic pure",
        "epsilon amplified. See the module docstring of benchmarks/accounting_tightness.py.",
        "",
    ]
    for delta in DELTAS:
        sub = df[df["delta"] == delta]
        lines += [f"## delta = {delta:g}", "",
                  "| workload | privet | (accountant) | dp_accounting PLD | dp_accounting RDP | PRV | OpenDP | ratio |",
                  "|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for _, r in sub.iterrows():
            cells = [f"{r[p]:.4f}" if np.isfinite(r[p]) else "n/a" for p in PEERS]
            ratio = f"{r['ratio']:.4f}" if np.isfinite(r["ratio"]) else "-"
            lines.append(
                f"| {r['workload']} | {r['privet']:.4f} | {r['privet_accountant']} | "
                + " | ".join(cells)
                + f" | {ratio} |"
            )
        worst = sub["ratio"].max()
        lines += ["", f"Largest ratio at delta {delta:g}: {worst:.4f}.", ""]
    notes = sorted({(p, r[f"{p} note"]) for _, r in df.iterrows() for p in PEERS if r[f"{p} note"]})
    if notes:
        lines += ["## Why a peer says n/a", ""] + [f"- {p}: {n}" for p, n in notes] + [""]
    plans = [w for w in workloads() if w.get("description")]
    if plans:
        lines += ["## The learners' plans", ""] + [
            f"- {w['name']}: {w['description']}" for w in plans
        ]
    (RESULTS / "accounting_tightness.md").write_text("\n".join(lines) + "\n")

    fig, ax = plt.subplots(figsize=(9, 0.35 * len(df) / len(DELTAS) + 1.5))
    names = list(dict.fromkeys(df["workload"]))
    y = np.arange(len(names))
    for i, delta in enumerate(DELTAS):
        sub = df[df["delta"] == delta].set_index("workload").reindex(names)
        ax.barh(y + (i - 0.5) * 0.38, sub["ratio"], height=0.38, label=f"delta {delta:g}")
    ax.axvline(1.0, color="k", lw=0.8)
    ax.axvline(1.005, color="r", lw=0.8, ls="--", label="1.005")
    ax.set_yticks(y, [n[:48] for n in names], fontsize=7)
    ax.set_xlabel("privet epsilon / smallest peer epsilon")
    ax.invert_yaxis()
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(RESULTS / "accounting_tightness.png", dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="run the workloads whose name contains this text")
    args = parser.parse_args()
    df = run(args.only)
    if not args.only:
        write(df, "python benchmarks/accounting_tightness.py")


if __name__ == "__main__":
    main()
