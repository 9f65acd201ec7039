"""Build and solve a points board: the whole chain, independent paths or layer by layer.

>>> r = solve_punti("gioco-oca-punti", 2, bet="never")
>>> round(sum(s.win_share for s in r.seats), 9)
1.0
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..analysis.bounds import PRECISION
from ..core.errors import RulesError, SolverError, TooLargeError
from ..core.progress import progress_bar
from .analysis import analyse, missed
from .independent import applies, independent_results, solve_independent
from .model import MODE_DECIDE, MODES, PuntiChain, check_bet, punti_model
from .results import PuntiResults
from .rules import PuntiRules, load_punti

#: How :func:`solve_punti` may solve a board (``auto`` picks one).
METHODS = ("auto", "chain", "independent", "layered")


def build_punti_chain(rules: PuntiRules | str | Path, players: int | None = None, *, bet: str = "never",
                      options: Mapping[str, Any] | None = None, progress: bool = False) -> PuntiChain:
    """The chain of a points board under a bet policy (``never``, ``always`` or ``optimal``)."""
    if not isinstance(rules, PuntiRules):
        rules = load_punti(rules, options)
    check_bet(bet)
    m = punti_model(rules, players)
    if bet == "optimal":
        from .optimal import optimal_chain

        return optimal_chain(m, progress=progress)[0]
    return m.build(MODES[bet], progress=progress)


def solve_punti(rules: PuntiRules | str | Path, players: int | None = None, *, bet: str = "never",
                options: Mapping[str, Any] | None = None, progress: bool = False, tail: float = 1e-10,
                postcards: int = 0, seed: int = 1, method: str = "auto",
                precision: float = PRECISION) -> PuntiResults:
    """Build and solve a points board: per seat the chance to win, to tie, to go bankrupt, the final points.

    Parameters
    ----------
    rules:
        A shipped name (``"gioco-oca-punti"``), a path to a TOML file, or loaded rules.
    players:
        2 or more (the board's default when None); the exact chain is refused with
        :class:`~markov_oca.errors.TooLargeError` when it cannot fit in memory.
    bet:
        ``never``, ``always`` or ``optimal`` (see :mod:`markov_oca.punti.optimal`).
    precision:
        The relative precision every figure's certified bound must meet (every method).
    method:
        ``chain`` builds the whole chain (needed for exports, reports and optimal bets);
        ``independent`` sums over independent paths, exact when no balance can change a move
        (:mod:`markov_oca.punti.independent`: seconds for three players on the shipped board);
        ``layered`` solves the chain layer by layer without holding it
        (:mod:`markov_oca.punti.layered`: any board, but hours for hundreds of millions of
        states, so only on request); ``auto`` (default) takes the chain when its estimated size
        fits in memory, else independent paths where they apply, else refuses with the estimate.
    postcards:
        When positive, also simulate that many games with and without the postcards
        (:mod:`markov_oca.punti.simulate`) and report their effect on the winning shares.
    """
    if not isinstance(rules, PuntiRules):
        rules = load_punti(rules, options)
    check_bet(bet)
    if method not in METHODS:
        raise RulesError(f"--method is one of {', '.join(METHODS)}, not {method!r}")
    m = punti_model(rules, players)
    timer: dict[str, float] = {}
    t0 = time.perf_counter()
    policy_info = None
    policy = None
    res = None
    mode = MODES.get(bet, MODE_DECIDE)
    if method == "auto":
        method = "chain" if m.fits_chain() else ("independent" if applies(m, mode)[0] else "chain")
    if method != "chain" and bet == "optimal":
        raise RulesError(f"{rules.name} with {m.players} players: optimal bets need the whole decision process "
                         f"(--method chain), which the {method} solve does not build")
    if method == "independent":
        res = _independent(m, mode, bet, timer, precision)
    elif method == "layered":
        res = _layered(m, mode, bet, tail, timer, precision, progress)
    elif bet == "optimal":
        from .optimal import optimal_chain

        pc, policy_info, policy = optimal_chain(m, progress=progress)
    else:
        try:
            pc = m.build(mode, progress=progress)  # refused up front when it cannot fit
        except TooLargeError as exc:
            raise TooLargeError(f"{exc}; --method layered solves it without holding the chain (about 100,000 "
                                "states a second: hours for hundreds of millions)") from None
    if res is None:
        timer["build"] = time.perf_counter() - t0
        with progress_bar(progress) as bar:
            bar.add_task(f"solving {pc.chain.n:,} states", total=None)
            res = analyse(pc, bet=bet, tail=tail, timer=timer, policy=policy_info, precision=precision)
    if postcards > 0:
        from .simulate import postcard_effect

        t1 = time.perf_counter()
        res.postcards = postcard_effect(rules, m.players, bet, postcards, seed=seed, policy=policy)
        timer["postcards"] = time.perf_counter() - t1
    return res


def _independent(m, mode: int, bet: str, timer: dict[str, float], precision: float) -> PuntiResults:
    """Independent paths with every figure's bound within ``precision``: the paths followed longer while the
    games left out are what misses it, else one line refuses."""
    eps = 1e-18
    while True:
        out = solve_independent(m, mode, eps=eps)
        res = independent_results(m, out, bet=bet, timer=timer, precision=precision)
        failed = missed(res, res.bounds, precision)
        if not failed:
            return res
        # a rounding of the sums above the precision misses for every figure: following the paths longer
        # cannot help; below it, the games left out are what misses
        if out["rounding"] >= precision or eps < 1e-200:
            raise SolverError(f"independent paths: no bound under {precision:g} (relative) for "
                              f"{', '.join(failed[:3])} (their sums' rounding up to {out['rounding']:.2g} relative): "
                              "--method chain certifies its own, or ask a looser --precision")
        eps *= 1e-20


def _layered(m, mode: int, bet: str, tail: float, timer: dict[str, float], precision: float,
             progress: bool) -> PuntiResults:
    """Layer by layer with every figure's bound within ``precision``: the cycles swept once more to a tighter
    tolerance when their residuals are most of the bound, else one line refuses."""
    from .layered import layered_results, solve_layered

    ls = solve_layered(m, mode, progress=progress)
    res = layered_results(m, ls, bet=bet, tail=tail, timer=timer, precision=precision)
    failed = missed(res, res.bounds, precision)
    if failed and ls.residual_sweeps > ls.residual_l1 / 2:
        try:
            ls = solve_layered(m, mode, progress=progress, tol=1e-17, max_sweeps=4 * ls.sweeps + 100)
        except SolverError:  # the sweeps cannot get closer in double precision
            pass
        else:
            res = layered_results(m, ls, bet=bet, tail=tail, timer=timer, precision=precision)
            failed = missed(res, res.bounds, precision)
    if failed:
        raise SolverError(f"layered solve: no bound under {precision:g} (relative) for {', '.join(failed[:3])} (the "
                          f"visits' true residual up to {ls.residual_l1:.2g} in 1-norm): --method chain certifies "
                          "small chances on its own (where the chain fits), or ask a looser --precision")
    return res
