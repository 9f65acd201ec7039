"""The properties that go with an exported chain: each outcome's probability and each reward's expectation,
in Storm's or PRISM's property language."""

from __future__ import annotations

from dataclasses import dataclass

from ..analysis.chain import Chain
from .edges import _identifier, label_names


@dataclass(frozen=True)
class Property:
    """A query that reproduces one of our numbers in PRISM or Storm.

    ``name`` is our name for the number (an outcome's name, ``"deadlock"``, a reward's
    name, or ``"<reward> given end"``); ``key`` the same as an identifier (the property's
    name in the ``.props`` file). A reward query needs its reward file loaded
    (``reward_file``; one reward file per load: Storm adds the state and transition
    rewards it is given into one reward model). ``finite`` is False where PRISM and
    Storm answer infinity (a deadlock is possible, so the game may never reach
    ``done``). ``storm_only`` marks Storm's conditional reward operator ``||``, which
    PRISM lacks.
    """

    name: str
    key: str
    formula: str
    reward: str | None = None
    reward_file: str | None = None
    finite: bool = True
    storm_only: bool = False


def _reward_suffix(chain: Chain, name: str) -> str:
    if name == "turns":
        return ".srew"
    return f".{name}.srew" if name in chain.state_rewards else f".{name}.trew"


def _reward_names(chain: Chain) -> list[str]:
    names = ["turns"]
    names += [k for k in chain.state_rewards if k != "turns"]
    names += [k for k in chain.branch_rewards if k not in names]
    return names


def properties(chain: Chain, stem: str = "chain", flavour: str = "storm") -> list[Property]:
    """The PCTL queries whose answers are our numbers, with the reward file each needs.

    Parameters
    ----------
    chain : Chain
    stem : str
        The stem the explicit files were written with (for ``reward_file``).
    flavour : str
        ``"storm"`` or ``"prism"``: PRISM has no conditional rewards, and its built-in
        label ``"deadlock"`` (states without transitions) would shadow ours, so its
        deadlock query is ``P=? [G !"done"]``.

    Returns
    -------
    list of Property
        ``P=? [F "<outcome>"]`` for each outcome (:meth:`Chain.outcome_probabilities`),
        ``P=? [F "deadlock"]``, then for each reward (turns first) ``R=? [F "done"]``, the
        expected total, and, when a deadlock is possible (the total is then infinite),
        Storm's ``R=? [F "done" || F "done"]``: the expected total given that the game
        ends (our ``given_end``).

    Examples
    --------
    >>> from markov_oca import build
    >>> [p.formula for p in properties(build("examples/snakes_and_ladders.toml", players=1))][:3]
    ['P=? [F "seat_1_wins"]', 'P=? [F "deadlock"]', 'R=? [F "done"]']
    """
    prism = flavour == "prism"
    labels = label_names(chain)
    out = [Property(name, f"P_{lab}", f'P=? [F "{lab}"]') for name, lab in labels.items()]
    out.append(Property("deadlock", "P_deadlock", 'P=? [G !"done"]' if prism else 'P=? [F "deadlock"]'))
    finite = not bool(chain.structure.deadlock.any())
    for r in _reward_names(chain):
        file = stem + _reward_suffix(chain, r)
        key = f"R_{_identifier(r)}"
        out.append(Property(r, key, 'R=? [F "done"]', r, file, finite=finite))
        if not finite and not prism:
            out.append(Property(f"{r} given end", f"{key}_given_end", 'R=? [F "done" || F "done"]', r, file,
                                storm_only=True))
    return out


def _props_text(chain: Chain, stem: str, prism: bool, transitions: int) -> str:
    """The ``.props`` file: the queries on the turns (``<stem>.srew``), the others as comments."""
    end = "" if prism else ";"
    lines = [f"// {stem}: {chain.n} states, {transitions} transitions (markov_oca export, "
             f"{'prism' if prism else 'storm'} files).",
             "// The R queries are the expected turns, with the state rewards of " + stem + ".srew."]
    others = []
    for q in properties(chain, stem, "prism" if prism else "storm"):
        what = q.name + ("" if q.finite else " (infinite: a deadlock is possible)")
        if q.reward in (None, "turns"):
            lines += [f"// {what}", f'"{q.key}": {q.formula}{end}']
        else:
            others.append(f"//   {what}: {q.formula}  with {q.reward_file}")
    if others:
        lines.append("// Other rewards: load that reward file instead of " + stem + ".srew and ask")
        lines += others
    return "\n".join(lines) + "\n"
