"""``workbench falsify``: the CLI front of ``workbench.verifiers.falsify`` (search for
counterexamples to a lower bound on the error; docs/paper.md, Theorem 2's certified bound).

``--bound NAME`` attacks any registered bound (``workbench bounds list``; default ``certified``,
the larger of the harmonic count and the fiber bound for Eq. 2 models, N = 2 on D_2;
``certified-n``, the default when every ``--N`` is at least 3: the largest sequence-length bound
covering each point of 3 <= N <= d on D_N, where the generalized attack's scores see all N keys)
or a
``module:function`` following ``f(d, rank, heads, N)`` (docs/extending.md); ``--bound constant:C``
plants a constant bound C (a wrong one, such as 0.9, shows the search at work). The default attacks
train generalized attention (Eq. 2: full value maps, learned MLP scores), the class the bounds
cover, then standard attention. hypothesis draws ``(d, rank, heads, N)`` from the given ranges
(``8`` or ``4:16``) within ``--budget`` trials; a trial is a counterexample only when its whole
held-out CI (Bonferroni over the budget) lies below the bound. A counterexample is printed with the
exact command that replays it (``--replay``), which names the same bound, so a plug-in's bound is
re-imported. Exit 1 when one is found. Arguments are validated before torch is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click
from click.core import ParameterSource

from workbench.commands._arguments import SEED, IntIn, IntSpan, cut
from workbench.commands._bound_labels import LABEL_KEYS, label_fields, labels_text
from workbench.commands._bounds_common import MAX_D
from workbench.commands._common import (
    CheckFailed,
    common_options,
    emit,
    plugin_errors,
    plural,
    progress_bar,
)
from workbench.commands._error_meaning import error_meaning
from workbench.commands._target import (
    ChosenTarget,
    choose_target,
    require_profile,
    target_options,
)
from workbench.core.validation import check_float, check_int
from workbench.verifiers.attacks import ATTACKS, DEFAULT_ATTACKS  # the falsifier's, torch-free

REPLAY_FIELDS = ("d", "r", "H", "N", "attack", "seed", "steps", "lr", "batch", "eval_samples",
                 "level", "eval_seed")
MAX_BUDGET = 1000
REPLAY_INTS = {"d": IntIn(2), "r": IntIn(1), "H": IntIn(1), "N": IntIn(1), "seed": SEED,
               "steps": IntIn(1), "batch": IntIn(1), "eval_samples": IntIn(100),
               "eval_seed": SEED}


def parse_range(flag: str, text: str, lo: int) -> tuple[int, int]:
    """``8`` -> (8, 8); ``4:16`` -> (4, 16); errors name the flag."""
    parts = text.split(":")
    try:
        vals = [int(p) for p in parts]
    except ValueError:
        vals = []
    if len(vals) not in (1, 2) or min(vals) < lo or vals[0] > vals[-1]:
        raise ValueError(f"{flag} must be an integer >= {lo} or a range LO:HI with "
                         f"{lo} <= LO <= HI (got {text!r})")
    return vals[0], vals[-1]


def parse_bound(text: str) -> Any:
    """``constant:C`` (C in (0, 1]), else a registered bound or ``module:function``
    (``workbench.plugins.get_bound``), as a ``Bound``."""
    from workbench.plugins import Bound, get_bound

    name, _, val = text.partition(":")
    if name == "constant":
        try:
            c = float(val)
        except ValueError:
            c = float("nan")
        if not 0 < c <= 1:
            raise ValueError(f"--bound constant:C needs C in (0, 1] (got {text!r})")
        return Bound(f"constant-{c:g}", lambda d, r, H, N: c, status="conjectured", law="any",
                     value_class="any", N=None, spec=text, description="a planted constant")
    try:
        return get_bound(text)
    except ValueError as e:
        raise ValueError(f"--bound: {e}") from None


def parse_replay(text: str) -> dict[str, Any]:
    """``d=8,r=1,...`` (the fields of ``workbench.verifiers.falsify.Attempt``) -> keyword
    arguments."""
    out: dict[str, Any] = {}
    for item in text.split(","):
        k, eq, v = item.partition("=")
        k = k.strip()
        if not eq or k not in REPLAY_FIELDS:
            raise ValueError(f"--replay must be comma-separated key=value pairs with keys in "
                             f"{', '.join(REPLAY_FIELDS)} (got {item!r})")
        if k in REPLAY_INTS:  # the declared range of the flag the field stands for
            out[k] = REPLAY_INTS[k].value_of(v)
            if out[k] is None:
                raise ValueError(f"--replay must give {k} as {REPLAY_INTS[k].words} "
                                 f"(got {cut(v)!r})")
            continue
        try:
            out[k] = v if k == "attack" else float(v)
        except ValueError:
            raise ValueError(f"--replay must give a number for {k} (got {cut(v)!r})") from None
    missing = [k for k in REPLAY_FIELDS if k not in out]
    if missing:
        raise ValueError(f"--replay must give every field: missing {', '.join(missing)}")
    if out["attack"] not in ATTACKS:
        raise ValueError(f"--replay must give attack in {', '.join(ATTACKS)} "
                         f"(got {out['attack']!r})")
    return out


def replay_command(bound: str, attempt: dict[str, Any], target: str = "") -> str:
    fields = ",".join(f"{k}={attempt[k]!r}" if isinstance(attempt[k], float) else
                      f"{k}={attempt[k]}" for k in REPLAY_FIELDS)
    return f"workbench falsify --bound {bound}{target} --replay {fields}"


def _target_bound(chosen: ChosenTarget, bound: str, N: str) -> tuple[Any, Any]:
    """For a non-hardmax --target: the harmonic count of its profile as the bound (N = 2 on
    D_2), and the task factory the attacks train and score on."""
    from workbench.core.bounds.value import HARMONIC_COUNT, BoundValue, PartKind
    from workbench.plugins import Bound

    if bound != "certified":
        raise ValueError(f"--target {chosen.spec} applies to --bound certified, which becomes the "
                         f"harmonic count of its profile (got --bound {bound})")
    if N != "2":
        raise ValueError(f"--N must be 2 with --target {chosen.spec} (got {N})")
    profile = require_profile(chosen, "falsify (the harmonic count)")

    def evaluate(d: int, r: int, H: int, N: int) -> BoundValue:
        from workbench.core.bounds.profiles.profile_harmonic import profile_bound

        return profile_bound(profile, d, r, H).bound_value

    # its energies are arb enclosures where the profile has an exact form, else quadrature
    kind = PartKind(HARMONIC_COUNT.name, rigorous=profile.has_exact_form)
    b = Bound(f"harmonic-{chosen.spec.replace(':', '-')}",
              lambda d, r, H, N: evaluate(d, r, H, N).value, target=chosen.spec,
              parts=(kind,), evaluator=evaluate,
              description=f"the harmonic count of {profile.label}", spec="certified")
    fn, params = chosen.map(), tuple(sorted(chosen.params.items()))

    def task_for(a: Any) -> Any:
        from workbench.verifiers.tasks import TargetTask

        return TargetTask("nearest", d=a.d, N=a.N, points="orthonormal", target=chosen.spec,
                          target_params=params, fn=fn)

    return b, task_for


def _bound_target(b: Any, bound: str, chosen: ChosenTarget, target: str) -> tuple[Any, Any]:
    """A bound stated for a target of its own (``theorem3-lower``: Theorem 3's biased target):
    that target and the task factory the attacks train and score on, so the search attacks the
    bound on its own target; ``--target`` may name only that one. Else ``chosen`` and None."""
    own = getattr(b, "target", None)
    if own in (None, "nearest"):
        return chosen, None
    if target not in ("nearest", own):
        raise ValueError(f"--target must be {own} for --bound {bound}, the target it is stated "
                         f"for (got {target})")
    mine = choose_target(own, ()) if target == "nearest" else chosen
    fn, params = mine.map(), tuple(sorted(mine.params.items()))
    queries = getattr(mine.target, "queries", "uniform")

    def task_for(a: Any) -> Any:
        from workbench.verifiers.tasks import TargetTask

        return TargetTask("nearest", d=a.d, N=a.N, points="orthonormal", queries=queries,
                          target=own, target_params=params, fn=fn)

    return mine, task_for


@click.command(name="falsify")
@click.option("--bound", "bound", default="certified", show_default=True,
              help="A registered bound (workbench bounds list), module:function, or "
              "'constant:C'.")
@click.option("--d", "d", type=IntSpan(2, MAX_D), default="4:16", show_default=True,
              help=f"Dimension d or range LO:HI, in 2..{MAX_D}.")
@click.option("--rank", "rank", type=IntSpan(1), default="1:4", show_default=True,
              help="Key rank r or range.")
@click.option("--heads", "heads", type=IntSpan(1), default="1:16", show_default=True,
              help="Heads H or range.")
@click.option("--N", "N", type=IntSpan(1), default="2", show_default=True,
              help="Keys N or range (certified: 2; certified-n, the default when every N >= 3: "
              "3 <= N <= d where a bound covers).")
@click.option("--budget", type=IntIn(1, MAX_BUDGET), default=5, show_default=True,
              help=f"Trials drawn by hypothesis (1..{MAX_BUDGET}).")
@click.option("--attack", "attacks", multiple=True, type=click.Choice(ATTACKS),
              help="Attacks per trial (repeatable; default: generalized, then train).")
@click.option("--steps", type=IntIn(1), default=200, show_default=True, help="Training steps.")
@click.option("--lr", type=float, default=0.03, show_default=True)
@click.option("--eval-samples", type=IntIn(100), default=20_000, show_default=True)
@click.option("--alpha", type=float, default=0.05, show_default=True,
              help="Chance of a false counterexample against a true bound (whole search).")
@click.option("--replay", "replay", default=None, metavar="FIELDS",
              help="Replay one attempt (printed with every counterexample).")
@target_options
@common_options
def cli(
    bound: str, d: str, rank: str, heads: str, N: str, budget: int, attacks: tuple[str, ...],
    steps: int, lr: float, eval_samples: int, alpha: float, replay: str | None, target: str,
    target_params: tuple[str, ...], as_json: bool, seed: int,
) -> None:
    """Search (d, rank, heads, N) for a model whose error CI lies below a lower bound; with
    --target, models trained on that target against its profile's harmonic count."""
    chosen = choose_target(target, target_params)
    task_for = None
    if chosen.is_hardmax and target != "nearest":
        raise ValueError(f"--target {target} has hardmax's numbers: falsify it as --target "
                         "nearest (the same bound, the same models up to y -> -y)")
    dr, rr, hr, nr = (parse_range("--d", d, 2), parse_range("--rank", rank, 1),
                      parse_range("--heads", heads, 1), parse_range("--N", N, 1))
    own = parse_bound(bound) if not chosen.is_hardmax and bound != "certified" else None
    if own is not None and getattr(own, "target", None) == target:  # --target its own
        b = own
        chosen, task_for = _bound_target(b, bound, chosen, target)
    elif not chosen.is_hardmax:
        b, task_for = _target_bound(chosen, bound, N)
    else:
        b = parse_bound(_default_bound(bound, nr))
        chosen, task_for = _bound_target(b, bound, chosen, target)
    check_int("--budget", budget, lo=1, hi=MAX_BUDGET)
    check_int("--steps", steps, lo=1)
    check_float("--lr", lr, lo=0.0, lo_open=True)
    check_int("--eval-samples", eval_samples, lo=100)
    check_float("--alpha", alpha, 0.0, 1.0, lo_open=True, hi_open=True)
    if rr[0] > dr[1]:
        raise ValueError(f"--rank must not exceed --d (got --rank {rank}, --d {d})")
    if b.N is not None and not set(range(nr[0], nr[1] + 1)) <= set(b.N):
        raise ValueError(f"--N must lie in {list(b.N)} for --bound {bound} (the N it covers; "
                         f"got {N})")
    if b.N is None and b.domain is not None:
        _check_box(b, bound, dr, rr, hr, nr)
    rep = parse_replay(replay) if replay is not None else None
    spec = b.spec or b.name
    again = "" if target == "nearest" else f" --target {target}" + "".join(
        f" --target-param {k}" for k in target_params)
    with plugin_errors({"bound": "--bound"}):
        first = (dr[0], max(rr[0], 1), hr[0], nr[0])
        if b.outside(*first) is None:  # a user's bound is called once before any search
            b(*first)
        _search(b, spec, dr, rr, hr, nr, budget, attacks, steps, lr, eval_samples, alpha, rep,
                as_json, seed, _TargetRun(chosen, target, task_for, again))


def _default_bound(bound: str, nr: tuple[int, int]) -> str:
    """``--bound`` as given; left out with every ``--N`` at least 3, the certified bound at
    N >= 3 (``certified-n``: the largest sequence-length bound covering each point)."""
    if nr[0] >= 3 and click.get_current_context().get_parameter_source(
            "bound") is not ParameterSource.COMMANDLINE:
        from workbench.core.bounds.sequence_length.certified_n import NAME

        return NAME
    return bound


def _check_box(b: Any, name: str, dr: tuple[int, int], rr: tuple[int, int],
               hr: tuple[int, int], nr: tuple[int, int]) -> None:
    """Every corner of the search box (rank capped at d) must be a point ``b`` covers (its
    ``domain``, such as 3 <= N <= d - 2 for ``n-keys``); else bad input naming --d and --N."""
    for d in dr:
        for N in nr:
            for r in rr:
                for H in hr:
                    why = b.outside(d, min(r, d), H, N)
                    if why is not None:
                        raise ValueError(f"--d and --N must keep every point where --bound {name} "
                                         f"applies (at d = {d}, N = {N}: {why})")


@dataclass(frozen=True)
class _TargetRun:
    """What the search needs of ``--target``: the chosen target, its name as given, the task
    the attacks train on (None: hardmax) and the flags its replay command repeats."""

    chosen: Any
    name: str
    task_for: Any
    again: str


def _search(b: Any, spec: str, dr: tuple[int, int], rr: tuple[int, int], hr: tuple[int, int],
            nr: tuple[int, int], budget: int, attacks: tuple[str, ...], steps: int, lr: float,
            eval_samples: int, alpha: float, rep: dict[str, Any] | None, as_json: bool,
            seed: int, tr: _TargetRun) -> None:
    """The search (or the replay of ``rep``) once the arguments are checked."""
    chosen, target, task_for, again = tr.chosen, tr.name, tr.task_for, tr.again

    from workbench.verifiers.falsify import Attempt, Domain, Trial, bound_value, falsify
    from workbench.verifiers.falsify import replay as replay_attempt

    if rep is not None:
        att = Attempt(**rep)
        est = replay_attempt(att, task_for)
        trial = Trial(att, est, bound_value(b, att.d, att.r, att.H, att.N))
        payload: dict[str, Any] = {"bound": spec, "bound_info": b.describe(),
                                   "replayed": _labelled(b, trial.to_dict()),
                                   "replay": replay_command(spec, trial.to_dict()["attempt"],
                                                            again),
                                   "error_meaning": error_meaning(
                                       "nearest", att.N,
                                       "orthonormal" if att.N <= att.d else "iid", target),
                                   "target": chosen.describe()}
        emit(payload, as_json, _human_replay)
        if trial.violated:
            raise CheckFailed("the replayed attempt lies below the bound beyond its CI")
        return
    domain = Domain(d=dr, r=rr, H=hr, N=nr)
    with progress_bar(as_json, "trials") as bar:
        attacks = attacks or DEFAULT_ATTACKS
        job = bar.add_task(f"falsify {spec}", total=budget * len(attacks))
        report = falsify(b, domain, budget=budget, attacks=attacks,
                         steps=steps, lr=lr, eval_samples=eval_samples, alpha=alpha, seed=seed,
                         on_trial=lambda t: bar.advance(job), task_for=task_for)
    payload = report.to_dict()
    payload["trials"] = [_labelled(b, t) for t in payload["trials"]]
    if payload["counterexample"] is not None:
        payload["counterexample"] = _labelled(b, payload["counterexample"])
    payload.update(bound=spec, bound_info=b.describe(), attacks=list(attacks),
                   level=1 - alpha / budget, target=chosen.describe(),
                   error_meaning=error_meaning(  # one N: its keys (Attempt.task), else mixed
                       "nearest", nr[0] if nr[0] == nr[1] else None,
                       "orthonormal" if nr[1] <= dr[0] else None, target),
                   domain={"d": dr, "rank": rr, "heads": hr, "N": nr})
    cx = payload["counterexample"]
    payload["replay"] = None if cx is None else replay_command(spec, cx["attempt"], again)
    emit(payload, as_json, _human)
    if cx is not None:
        raise CheckFailed(f"counterexample to --bound {spec}: replay with {payload['replay']}")


def _labelled(b: Any, t: dict[str, Any]) -> dict[str, Any]:
    """A trial with the labels of the bound at its point (its BoundValue)."""
    a = t["attempt"]
    fields = label_fields(b.evaluate(a["d"], a["r"], a["H"], a["N"]))
    return {**t, "labels": {k: fields[k] for k in LABEL_KEYS}}


def _trial_line(t: dict[str, Any]) -> str:
    a, e = t["attempt"], t["estimate"]
    where = "BELOW the bound" if t["violated"] else "above or at the bound"
    return (f"d={a['d']} rank={a['r']} heads={a['H']} N={a['N']} {a['attack']}: error "
            f"{e['mean']:.4f} [{e['lo']:.4f}, {e['hi']:.4f}] ({e['level']:.4g} CI) vs bound "
            f"{t['bound']:.4f}: {where}; {labels_text(t['labels'])}")


def _human(p: dict[str, Any]) -> str:
    lines = [f"falsify --bound {p['bound']}: {plural(len(p['trials']), 'trial')} in "
             f"{p['seconds']:.1f}s, "
             f"each CI at level {p['level']:.4g} (Bonferroni over the budget)",
             *([f"target {p['target']['name']} ({p['target']['profile']}): the bound is its "
                "profile's harmonic count"] if p["target"]["name"] != "nearest" else []),
             p["error_meaning"]]
    lines += ["  " + _trial_line(t) for t in p["trials"]]
    if p["counterexample"] is None:
        lines.append("no counterexample found (evidence for the bound, not a proof)")
    else:
        lines.append("COUNTEREXAMPLE: " + _trial_line(p["counterexample"]))
        lines.append(f"replay: {p['replay']}")
    return "\n".join(lines)


def _human_replay(p: dict[str, Any]) -> str:
    t = p["replayed"]
    return "\n".join([("COUNTEREXAMPLE: " if t["violated"] else "replayed: ") + _trial_line(t),
                      p["error_meaning"], f"replay: {p['replay']}"])
