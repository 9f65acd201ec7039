"""A goose rule set flattened into the arrays the simulator reads, and the one move rule both players share.

:func:`flatten_goose` turns a :class:`~markov_oca.goose.rules.GooseRules` into
small integer tables (per square its effects and dice, the first-throw table,
the options as codes); :func:`move_to` places a piece moved past either end of
the board by the overshoot rule, in plain Python for :func:`play_goose_python`
and compiled (:data:`move_to_jit`) for the kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from .rules import GooseRules

#: Turns after which a game counts as unfinished. Games of the shipped boards for
#: 1 and 2 players are over within 1,200 turns but for a chance below 1e-12, so
#: only boards that may never end reach it (deadlocks stop at once).
DEFAULT_TURN_LIMIT = 10_000

UNFINISHED = -1  # outcome of a game not over after the turn limit, or deadlocked
_LOOPED = -2  # a chain of effects longer than the board allows: an unvalidated rule set

# Option codes.
UNTIL_FIRST, UNTIL_LAST = 0, 1
OVER_BOUNCE, OVER_STAY, OVER_FINISH = 0, 1, 2
OCC_NONE, OCC_OCCUPANT, OCC_MOVER = 0, 1, 2
GOOSE_NONE, GOOSE_REPEAT, GOOSE_NEXT = 0, 1, 2
_UNTIL = {"first": UNTIL_FIRST, "last": UNTIL_LAST}
_OVERSHOOT = {"bounce": OVER_BOUNCE, "stay": OVER_STAY, "finish": OVER_FINISH}
_OCCUPANCY = {"none": OCC_NONE, "occupant-returns": OCC_OCCUPANT, "mover-returns": OCC_MOVER}
_GOOSE = {None: GOOSE_NONE, "repeat": GOOSE_REPEAT, "next": GOOSE_NEXT}

# Columns of FlatGoose.squares, one row per square 0..G.
SQUARE_COLUMNS = ("jump", "goose", "next_goose", "again", "miss", "wait", "stake", "dice_count", "dice_faces")
JUMP, GOOSE, NEXT_GOOSE, AGAIN, MISS, WAIT, STAKE, DICE_COUNT, DICE_FACES = range(len(SQUARE_COLUMNS))
# Entries of FlatGoose.options.
O_GOAL, O_UNTIL, O_OVERSHOOT, O_OCCUPANCY, O_BACKWARD, O_FT_EFFECT, O_KEEPS = range(7)


@dataclass(frozen=True)
class FlatGoose:
    """A goose rule set as the arrays the simulator reads.

    ``squares[q]`` is square ``q``'s row: ``JUMP`` target (-1 for none),
    ``GOOSE`` kind (``GOOSE_NONE``/``REPEAT``/``NEXT``), ``NEXT_GOOSE`` (the
    next goose after ``q``, or G), ``AGAIN``, ``MISS`` turns, ``WAIT``,
    ``STAKE``, and the dice thrown from ``q`` (``DICE_COUNT`` of
    ``DICE_FACES`` faces). ``ft_faces[i]`` (faces high to low) from square 0
    goes to ``ft_target[i]``. ``options`` holds the codes at ``O_*``.
    """

    name: str
    goal: int
    squares: np.ndarray  # (G + 1, 9) int64
    ft_faces: np.ndarray  # (n, dice count at 0) int64
    ft_target: np.ndarray  # (n,) int64
    options: np.ndarray  # (7,) int64


def flatten_goose(rules: GooseRules) -> FlatGoose:
    """Flatten a rule set's squares, dice, first-throw table and options into arrays.

    ``waiting = "turns:K"`` needs nothing here: the loader already turned the
    waiting squares into squares that miss K turns.

    Parameters
    ----------
    rules:
        A loaded goose rule set.

    Returns
    -------
    FlatGoose

    Examples
    --------
    >>> from markov_oca import api
    >>> flat = flatten_goose(api.load("oca-moderna"))
    >>> int(flat.squares[6, JUMP]), int(flat.squares[9, GOOSE]) == GOOSE_REPEAT
    (12, True)
    """
    goal = rules.goal
    sq = np.zeros((goal + 1, 9), np.int64)
    sq[:, JUMP] = -1
    geese = rules.goose_squares()
    for q in range(goal + 1):
        s = rules.square(q)
        if s.jump is not None:
            sq[q, JUMP] = s.jump
        sq[q, GOOSE] = _GOOSE[s.goose]
        sq[q, NEXT_GOOSE] = next((g for g in geese if g > q), goal)
        sq[q, AGAIN] = s.again
        sq[q, MISS] = s.miss
        sq[q, WAIT] = s.wait
        sq[q, STAKE] = s.stake
        # Nobody throws from G; its row repeats G - 1's dice to keep the table rectangular.
        d = rules.dice_at(min(q, goal - 1))
        sq[q, DICE_COUNT] = d.count
        sq[q, DICE_FACES] = d.faces
    count0 = rules.dice_at(0).count
    ft_faces = np.zeros((len(rules.first_throw), count0), np.int64)
    ft_target = np.zeros(len(rules.first_throw), np.int64)
    for i, (faces, target) in enumerate(rules.first_throw):
        ft_faces[i] = sorted(faces, reverse=True)
        ft_target[i] = target
    keeps = bool(rules.options.get("bumped_keeps_turns", False))
    opts = np.array([goal, _UNTIL[rules.until], _OVERSHOOT[rules.overshoot], _OCCUPANCY[rules.occupancy],
                     rules.goose_after_bounce == "backward", bool(rules.first_throw_effect), keeps], np.int64)
    return FlatGoose(rules.name, goal, sq, ft_faces, ft_target, opts)


def outcome_names(rules: GooseRules, players: int) -> list[str]:
    """The outcome names of a goose game, in the chain's order (``GooseModel.outcome_names``)."""
    if rules.until == "first" or players == 1:
        return [f"seat {k + 1} wins" for k in range(players)]
    return [f"seat {k + 1} last" for k in range(players)]



def move_to(q, d, goal, overshoot, at):
    """Where a piece moved to ``q`` (travelling in direction ``d``) comes to rest by the overshoot rule:
    ``(square, direction, moved)``. Past the goal it bounces back (direction -1), finishes, or with
    ``overshoot = "stay"`` stays at ``at`` (moved False); before square 0 it bounces forward (direction 1).

    Examples
    --------
    >>> move_to(66, 1, 63, OVER_BOUNCE, 60), move_to(66, 1, 63, OVER_STAY, 60), move_to(-3, -1, 63, OVER_BOUNCE, 4)
    ((60, -1, True), (60, 1, False), (3, 1, True))
    """
    if q > goal:
        if overshoot == OVER_STAY:
            return at, d, False
        if overshoot == OVER_FINISH:
            return goal, d, True
        d = -1
    elif q < 0:
        d = 1
    else:
        return q, d, True
    while q > goal or q < 0:
        q = 2 * goal - q if q > goal else -q
    return q, d, True


move_to_jit = numba.njit(cache=True, inline="always")(move_to)
