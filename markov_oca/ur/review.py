"""The review of a played Ur game: each move against the best one under optimal play.

:func:`review_game` replays a :class:`~.notation.GameRecord` against the rules from the start (all
pieces in hand, light to move), refusing an illegal action with its move number and the reason, and
for each action gives the throw, the move played, the best move, and the winning chance lost: the
value of the best move minus the value of the move played, from the mover's view, both sides playing
optimally afterwards. Ties count as agreeing with the best move.

Per player: ``decisions`` (all its actions), ``choices`` (the actions with at least two legal moves:
the only ones that count), ``agreed`` (choices where the move played is worth as much as the best),
``accuracy`` (agreed / choices; None without a choice), ``lost_total`` and ``lost_mean`` (the chance
lost over the choices; a forced move or a pass loses nothing). ``light_chance`` is light's winning
chance at the start and after each action.

The values of the positions come from the optimal table (:func:`game_values`: a table file, the
table ``markov-oca ur solve`` saved for these rules, or a solve on the spot) and the legal moves and
their values from :func:`.bestmove.best_moves`, through :func:`legal_moves` alone.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..core.errors import RulesError
from .bestmove import MoveValue, best_moves
from .notation import Action, GameRecord, format_move
from .rules import UrRules

__all__ = ["MoveReview", "PlayerSummary", "Review", "RguValues", "game_values", "legal_moves", "review_file",
           "review_game"]

SCHEMA = "markov_oca.ur-review/1"
#: Two values this close are one value (the table's tolerance is far below it).
TIE = 1e-9


# ----------------------------------------------------------------------------- the engine, in one place


def game_values(rules: UrRules, table: str | Path | None = None, *, notice: bool = True) -> np.ndarray | RguValues:
    """The optimal values (the mover's chance to win in each ranked position) for ``rules``.

    Parameters
    ----------
    rules : UrRules
        The rule set in force, with its pieces.
    table : str or Path, optional
        A table written by ``markov-oca ur solve`` (``.npy``, with or without its ``.json``) or by
        ``markov-oca ur export-table`` (``.rgu``: its values are read as the replay meets their
        positions, to the file's precision). Without it: the table saved for these rules, or a solve now
        (said on stderr when ``notice``).
    notice : bool
        Whether to say on stderr that the values are being solved.
    """
    from .optimal import solve_optimal
    from .table import saved_values

    if table is not None and Path(table).suffix.lower() == ".rgu":
        if not Path(table).exists():
            raise RulesError("no such table file", source=str(table))
        try:
            return RguValues.read(rules, Path(table))
        except ValueError as exc:
            raise RulesError(str(exc)) from None
    found = saved_values(rules, table)
    if found is not None:
        return found
    if notice and rules.pieces >= 4:
        print(f"no saved table for {rules.name} with {rules.pieces} pieces: solving it now (`markov-oca ur solve "
              f"--pieces {rules.pieces} --rules {rules.name}` keeps one)", file=sys.stderr)
    return solve_optimal(rules).values


@dataclass
class RguValues:
    """The optimal values of a RoyalUr ``.rgu`` table (light to move, percent), filled into a table of the
    ranked positions as the replay meets them: the position to move and its successors."""

    path: Path
    keys: np.ndarray
    percent: np.ndarray
    values: np.ndarray  # zeros until filled (pages never touched cost no memory)
    known: set[int]

    @classmethod
    def read(cls, rules: UrRules, path: Path) -> RguValues:
        from .state import space_of
        from .table import game_settings, read_rgu

        try:
            rgu = read_rgu(path)
        except (ValueError, IndexError) as exc:
            raise RulesError(f"not a readable .rgu table ({exc})", source=str(path)) from None
        settings = rgu.header.get("game_settings", {})
        pieces = settings.get("start_pieces")
        if pieces is not None and pieces != rules.pieces:
            raise RulesError(f"a table of {pieces} pieces, the game has {rules.pieces}", source=str(path))
        ours = game_settings(rules)
        for key in ("board_shape", "paths"):
            if settings.get(key, ours[key]) != ours[key]:
                raise RulesError(f"a table of the {key.replace('_', ' ')} {settings[key]!r}, the game "
                                 f"({rules.name}) is played on {ours[key]!r}", source=str(path))
        return cls(path, rgu.keys, rgu.values, np.zeros(space_of(rules.pieces, rules.code).size), set())

    def around(self, rules: UrRules, mine: list[int], theirs: list[int]) -> np.ndarray:
        """The table, with the values of the position (``mine`` to move) and of its successors filled in."""
        from .kernel import GAME_OVER, moves
        from .state import encode, space_of
        from .table import rgu_keys

        space = space_of(rules.pieces, rules.code)
        idx = space.rank(*encode(mine, theirs, rules.code))
        mv = moves(space, [idx], rules)
        live = (np.arange(mv.succ.shape[2]) < mv.n_moves[0][:, None]) & (mv.events[0] & GAME_OVER == 0)
        new = sorted({idx, *(int(i) for i in mv.succ[0][live])} - self.known)
        if new:
            p = space.unrank_many(np.array(new, np.int64))
            keys = rgu_keys(rules, p.lane, p.mine_mask, p.mine_hand, p.their_mask, p.their_hand).astype(np.uint64)
            at = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
            if (self.keys[at] != keys).any():
                raise RulesError("no value for a position of the game: a table of other rules?",
                                 source=str(self.path))
            self.values[new] = self.percent[at] / 100.0
            self.known.update(new)
        return self.values


def legal_moves(rules: UrRules, values: np.ndarray | RguValues, light: list[int], dark: list[int],
                side: str) -> tuple[float, list[MoveValue]]:
    """(the side to move's chance to win, every legal move for every throw with its value).

    Parameters
    ----------
    rules : UrRules
        The rule set in force.
    values : ndarray or RguValues
        Its optimal values (:func:`game_values`).
    light, dark : list of int
        Each side's pieces as path squares (0 the hand, 15 off).
    side : str
        ``"light"`` or ``"dark"``, the side to move.
    """
    if isinstance(values, RguValues):
        values = values.around(rules, *((light, dark) if side == "light" else (dark, light)))
    return best_moves(rules, light, dark, side, values)


# ----------------------------------------------------------------------------- results


@dataclass
class MoveReview:
    """One action of the game, reviewed (values are chances to win, the mover's unless named light's)."""

    number: int
    side: str
    turn: int | None
    line: int
    text: str
    throw: int
    played: str
    source: int | None
    target: int | None
    events: list[str]
    best: str
    best_source: int | None
    best_target: int | None
    best_events: list[str]
    value_played: float
    value_best: float
    lost: float
    legal: int
    choice: bool
    agrees: bool
    light_before: float
    light_after: float
    after: dict[str, list[int]] = field(default_factory=dict)  # each side's path squares after the action


@dataclass
class PlayerSummary:
    side: str
    decisions: int
    choices: int
    agreed: int
    accuracy: float | None
    lost_total: float
    lost_mean: float | None


@dataclass
class Review:
    rules: str
    title: str
    pieces: int
    source: str
    form: str
    tags: dict[str, str]
    result: str | None
    moves: list[MoveReview]
    players: dict[str, PlayerSummary]
    light_start: float
    over: bool
    winner: str | None
    notes: list[str] = field(default_factory=list)

    @property
    def light_chance(self) -> list[float]:
        """Light's chance to win at the start and after each action."""
        return [self.light_start] + [m.light_after for m in self.moves]

    def to_dict(self) -> dict:
        d = asdict(self)
        return {"schema": SCHEMA, **d, "light_chance": self.light_chance}


# ----------------------------------------------------------------------------- the replay


def _other(side: str) -> str:
    return "dark" if side == "light" else "light"


def _why_illegal(rules: UrRules, a: Action, mine: list[int], theirs: list[int]) -> str:
    """Why a move the rules do not offer is illegal, in words."""
    assert a.source is not None and a.target is not None
    if a.throw == 0:
        return "a throw of 0 moves no piece (write a pass)"
    if a.source not in mine:
        return f"no {a.side} piece {'in hand' if a.source == 0 else f'on square {a.source}'}"
    off = rules.off_square
    if a.target > off:
        return f"overshoots: {a.source} + {a.throw} is past the end, and a piece leaves with the exact throw"
    if a.target < off and a.target in mine:
        return f"blocked by {a.side}'s own piece on square {a.target}"
    held = _their_square(rules, a.target)
    if rules.safe_rosettes and a.target in rules.rosettes and held is not None and held in theirs:
        return (f"the rosette on square {a.target} is held by {_other(a.side)} (a piece on it is safe)"
                if held == a.target else f"the rosette on square {a.target} is held by {_other(a.side)} (its "
                f"square {held}; a piece on it is safe)")
    return "not a legal move"


def _their_square(rules: UrRules, square: int) -> int | None:
    """The other side's path square of the mover's shared ``square`` (the same tile), None off the shared
    squares: equal on Bell's path and Aseb's board, not at the end of Masters' path (the mover's 12 is the
    other's 16)."""
    code = rules.code
    return code.theirs[code.shared.index(square)] if square in code.shared else None


def _check_claims(a: Action, row: MoveValue) -> None:
    """The capture and rosette marks the text gives must match the move."""
    for claim, event, mark in ((a.capture, "capture", "x"), (a.rosette, "rosette", "*")):
        if claim is not None and claim != (event in row.events):
            raise RulesError(f"{a.where}: marked '{mark}' but the move is no {event}")


def _choose(rules: UrRules, a: Action, rows: list[MoveValue], mine: list[int], theirs: list[int],
            last: bool) -> MoveValue | None:
    """The row of the move played, or an error saying why it is illegal; None to leave a trailing throw out."""
    throws = [int(v) for v in rules.throw_values]
    if a.throw not in throws:
        raise RulesError(f"{a.where}: wrong throw: {a.throw} is not a throw of {rules.describe_throw()}")
    options = [r for r in rows if r.throw == a.throw]
    moving = [r for r in options if r.source >= 0]
    if a.is_pass:
        if moving:
            if last:
                return None
            listed = ", ".join(format_move(r.source, r.target, rules.off_square) for r in moving)
            raise RulesError(f"{a.where}: passes on a throw of {a.throw}, but {a.side} has a legal move ({listed})")
        return options[0]
    row = next((r for r in moving if r.source == a.source), None)
    if row is None:
        raise RulesError(f"{a.where}: illegal move {format_move(a.source, a.target, rules.off_square)} on a throw "
                         f"of {a.throw}: "
                         f"{_why_illegal(rules, a, mine, theirs)}")
    _check_claims(a, row)
    return row


def _apply(rules: UrRules, row: MoveValue, mine: list[int], theirs: list[int]) -> None:
    """Move the piece of ``row`` in ``mine``; a captured piece of ``theirs`` goes back to the hand."""
    if row.source < 0:
        return
    mine[mine.index(row.source)] = row.target
    if "capture" in row.events:
        theirs[theirs.index(_their_square(rules, row.target))] = 0


def _summaries(moves: list[MoveReview]) -> dict[str, PlayerSummary]:
    out = {}
    for side in ("light", "dark"):
        mine = [m for m in moves if m.side == side]
        choices = [m for m in mine if m.choice]
        agreed = sum(m.agrees for m in choices)
        lost = float(sum(m.lost for m in choices))
        out[side] = PlayerSummary(side, len(mine), len(choices), agreed,
                                  agreed / len(choices) if choices else None, lost,
                                  lost / len(choices) if choices else None)
    return out


def review_game(rec: GameRecord, rules: UrRules, values: np.ndarray | RguValues) -> Review:
    """Replay a game against ``rules`` and review each action against optimal play.

    Parameters
    ----------
    rec : GameRecord
        The game as read (:func:`.notation.parse_game`).
    rules : UrRules
        The rule set it was played under, with its pieces.
    values : ndarray or RguValues
        The optimal values of ``rules`` (:func:`game_values`).

    Examples
    --------
    >>> from markov_oca.ur.notation import parse_game
    >>> from markov_oca.ur.rules import load_ur
    >>> r = load_ur("ur", {"pieces": 1})
    >>> rev = review_game(parse_game("light 4 hand"), r, game_values(r))
    >>> rev.moves[0].played, rev.moves[0].best, rev.moves[0].lost
    ('hand-4', 'hand-4', 0.0)
    """
    light, dark = [0] * rules.pieces, [0] * rules.pieces
    start, _ = legal_moves(rules, values, light, dark, "light")
    moves: list[MoveReview] = []
    notes: list[str] = []
    try:
        over, winner = _replay(rec, rules, values, light, dark, moves, notes)
    except RulesError as exc:  # name the game's file
        raise (exc if exc.source else RulesError(str(exc), source=rec.source)) from None
    _check_result(rec, over, winner)
    return Review(rules.name, rules.title, rules.pieces, rec.source, rec.form, dict(rec.tags), rec.result, moves,
                  _summaries(moves), float(start), over, winner, notes)


def _replay(rec: GameRecord, rules: UrRules, values: np.ndarray | RguValues, light: list[int], dark: list[int],
            moves: list[MoveReview], notes: list[str]) -> tuple[bool, str | None]:
    """Play the actions from the start, appending each one's review to ``moves``: (over, winner)."""
    side = "light"
    over = False
    winner = None
    off = rules.off_square
    for k, a in enumerate(rec.actions):
        if over:
            raise RulesError(f"{a.where}: the game is already over ({winner} won)")
        if a.side != side:
            raise RulesError(f"{a.where}: it is {side}'s turn, not {a.side}'s")
        mine, theirs = (light, dark) if side == "light" else (dark, light)
        value, rows = legal_moves(rules, values, light, dark, side)
        row = _choose(rules, a, rows, mine, theirs, last=k == len(rec.actions) - 1)
        if row is None:
            notes.append(f"the last throw ({a.throw}, {a.side}) has no move yet: left out")
            break
        options = [r for r in rows if r.throw == a.throw]
        best = next(r for r in options if r.best)
        n_legal = sum(r.source >= 0 for r in options)
        lost = max(0.0, best.value - row.value)
        light_before = value if side == "light" else 1.0 - value
        light_after = row.value if side == "light" else 1.0 - row.value
        moves.append(MoveReview(
            a.number, side, a.turn, a.line, a.text, a.throw, format_move(a.source, a.target, off), a.source,
            a.target, list(row.events),
            format_move(*((best.source, best.target) if best.source >= 0 else (None, None)), off),
            best.source if best.source >= 0 else None, best.target if best.source >= 0 else None,
            list(best.events),
            row.value, best.value, lost, n_legal, n_legal >= 2, lost <= TIE, light_before, light_after))
        _apply(rules, row, mine, theirs)
        moves[-1].after = {"light": sorted(light), "dark": sorted(dark)}
        if "game over" in row.events:
            over = True
            winner = side if row.value > 0.5 else _other(side)
        elif a.ends:
            raise RulesError(f"{a.where}: marked '#' (the game ends) but the game goes on")
        if "throws again" not in row.events:
            side = _other(side)
    return over, winner


def _check_result(rec: GameRecord, over: bool, winner: str | None) -> None:
    """A result the text claims must not contradict a game that ended on the board."""
    claimed = {"1-0": "light", "0-1": "dark"}.get(rec.result or "")
    if over and claimed is not None and claimed != winner:
        raise RulesError(f"the result {rec.result!r} says {claimed} won, but {winner} won on the board",
                         source=rec.source)


# ----------------------------------------------------------------------------- from a file


def review_file(game: str | Path, rules: str | None = None, pieces: int | None = None,
                table: str | Path | None = None) -> Review:
    """Read a game file (``-``: standard input), load its rules and their values, and review it.

    Parameters
    ----------
    game : str or Path
        The game's file, in RGN, the plain list or JSON (:mod:`.notation`).
    rules : str, optional
        The rule set, instead of the game's ``Rules`` tag (``ur`` without either).
    pieces : int, optional
        Pieces per side, instead of the game's tags (the rule file's count without either).
    table : str or Path, optional
        A saved table of the optimal values (:func:`game_values`).
    """
    from .notation import game_tags, parse_game, rules_choice
    from .rules import load_ur

    source = "<stdin>" if str(game) == "-" else str(game)
    try:
        text = sys.stdin.read() if str(game) == "-" else Path(game).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RulesError("no such game file", source=source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesError(f"cannot be read ({exc})", source=source) from None
    tags = game_tags(text, source)
    name, count = rules_choice(tags, rules, pieces)
    try:
        r = load_ur(name, {"pieces": count} if count is not None else {})
    except RulesError as exc:
        if rules is not None or "Rules" not in tags.tags:
            raise
        raise RulesError(f"line {tags.tag_lines.get('Rules', 1)}: unknown rule set {tags.tags['Rules']!r} in the "
                         "[Rules] tag (RoyalUr's Finkel, Finkel with Two Pieces, Blitz, Masters or Aseb, or an Ur "
                         f"rule set of `markov-oca variants`; {exc})", source=source) from None
    rec = parse_game(text, source, r.board)
    rev = review_game(rec, r, game_values(r, table))
    own = load_ur(name).pieces
    if r.pieces != own:
        rev.notes.insert(0, f"{r.name} is played with {own} pieces a side; this game has {r.pieces}")
    return rev
