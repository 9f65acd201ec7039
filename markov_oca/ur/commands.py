"""The Ur family's own commands (``markov-oca ur ...``): queries of the optimal values."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import typer

from ..core.errors import RulesError, SolverError, TooLargeError
from ..engine.clikit import App, Format, fail

_UR_RULES = ("the Ur rule set: ur, ur-simplificado, ur-7-rescatados, ur-blitz, ur-masters, ur-aseb, or a rule "
             "file")
_PIECES = "pieces each side plays with, 1 to 7 (default: the rule set's)"
_FORMAT_HELP = "how to print the result: text to read, or json for programs"

app = App(no_args_is_help=True, help="The Royal Game of Ur under optimal play: solve it once, then ask for the best "
          "move of any position or export the table.")


@app.command("best-move")
def best_move(
    position: str = typer.Argument(..., help="where each side's pieces are, e.g. 'light:0,0,5,15 dark:0,3,8,14': "
                                   "one number per piece, 0 in the hand, 1-14 on the path, 15 off the board (on a "
                                   "path of 16 squares, 1-16 and 17 off)"),
    to_move: str = typer.Option("light", "--to-move", help="whose turn it is: light or dark"),
    rules: str = typer.Option("ur", "--rules", help=_UR_RULES),
    fmt: Format = typer.Option(Format.text, "--format", help=_FORMAT_HELP),
) -> None:
    """For each throw, every legal move of a position and its chance to win under optimal play."""
    from .bestmove import best_moves, parse_position
    from .rules import load_ur

    try:
        if to_move not in ("light", "dark"):
            raise RulesError(f"--to-move is light or dark, not {to_move!r}")
        light, dark = parse_position(position)
        r = load_ur(rules, {"pieces": len(light)})
        value, rows = best_moves(r, light, dark, to_move)
    except (RulesError, TooLargeError) as exc:
        fail(str(exc), 2)
    if fmt is Format.json:
        typer.echo(json.dumps({"schema": "markov_oca.ur-best-move/1", "to_move": to_move, "value": value,
                               "moves": [vars(m) for m in rows]}, indent=1))
        return
    typer.echo(f"{to_move} to move wins with {value:.6f} under optimal play ({r.name}, {r.pieces} pieces)")
    for m in rows:
        src = "hand" if m.source == 0 else m.source
        move = "pass" if m.source < 0 else f"{src} -> {'off' if m.target == r.off_square else m.target}"
        mark = "  <- best" if m.best else ""
        extra = f" ({', '.join(e for e in m.events if e != 'pass')})" if m.source >= 0 and m.events else ""
        typer.echo(f"  throw {m.throw} (p {m.probability:.4f}): {move}{extra}: wins {m.value:.6f}{mark}")


@app.command("review")
def review(
    game: str = typer.Argument(..., help="the game: RoyalUr's RGN, a plain list ('light 3 hand' a line) or JSON; "
                               "- reads standard input"),
    rules: str | None = typer.Option(None, "--rules", help="the rule set (default: the game's [Rules] tag, else ur)"),
    pieces: int | None = typer.Option(None, "--pieces", help="pieces per side (default: the game's tags, else "
                                      "the rule set's)"),
    table: str | None = typer.Option(None, "--table", help="a table saved by `ur solve` (.npy) or written by `ur "
                                     "export-table` (.rgu); default: the one saved for these rules, else a solve "
                                     "now"),
    page: str | None = typer.Option(None, "--page", help="also write the report page (index.html, report.md, "
                                    "the plot of light's chance) into this directory"),
    fmt: Format = typer.Option(Format.text, "--format", help="text or json"),
) -> None:
    """Review a played game: each move against the best under optimal play, each player's accuracy.

    JSON (schema markov_oca.ur-review/1): rules, title, pieces, source, form (rgn, plain, json), tags, result,
    over, winner, light_start (light's chance at the start), light_chance (at the start and after each move),
    notes; players.light / players.dark: decisions, choices (moves with two legal options or more: the only
    ones counted), agreed, accuracy (agreed / choices), lost_total, lost_mean (per choice); moves[]: number,
    side, turn, line, text, throw, played, source, target (path squares, 0 hand, 15 off; 17 on the 16-square
    paths of Masters and Aseb), events, best, best_source, best_target, best_events, value_played, value_best
    (the mover's chance to win after each), lost (their difference), legal, choice, agrees, light_before,
    light_after, after (each side's path squares after the move). Chances are between 0 and 1. The [Rules]
    tag may name RoyalUr's Finkel, Finkel with Two Pieces, Blitz, Masters or Aseb.
    """
    from .review import review_file
    from .reviewpage import review_text, write_review_page

    try:
        rev = review_file(game, rules, pieces, table)
        written = write_review_page(rev, page) if page else []
    except (RulesError, TooLargeError, OSError) as exc:
        fail(str(exc), 2)
    typer.echo(json.dumps(rev.to_dict(), indent=1) if fmt is Format.json else review_text(rev).rstrip())
    for p in written:
        typer.echo(str(p), err=True)


@app.command("solve")
def solve(
    pieces: int | None = typer.Option(None, "--pieces", help=_PIECES),
    rules: str = typer.Option("ur", "--rules", help=_UR_RULES),
    table: str | None = typer.Option(None, "--table", metavar="PATH",
                                     help="where to save the table of values (.npy) (default: the table folder, "
                                     "$MARKOV_OCA_TABLES or ~/.cache/markov_oca/ur, where the other commands look)"),
    checkpoint: str | None = typer.Option(None, "--checkpoint", metavar="PATH",
                                          help="folder where each finished part of the solve is kept, so that an "
                                          "interrupted solve resumes from it (default: beside the table)"),
    tol: float = typer.Option(1e-13, "--tol", help="stop improving the values when no chance to win changes by more "
                              "than this in a pass"),
    method: str = typer.Option("pairs", "--method", help="the iteration: pairs (Gauss-Seidel on each position "
                               "together with its mirror image), gs (Gauss-Seidel) or jacobi"),
    order: str = typer.Option("progress", "--order", help="the order positions are updated in: progress, rank or "
                              "reverse"),
    residual: bool = typer.Option(True, "--residual/--no-residual", help="end with one more pass over every "
                                  "position, to measure how far the values are from exact"),
    bound: bool = typer.Option(True, "--bound/--no-bound", help="with 6 or 7 pieces, also compute a bound on the "
                               "number of throws left under optimal play and keep it beside the table, so that "
                               "'markov-oca solve ur' need not compute it (not for a table saved with --table)"),
    fmt: Format = typer.Option(Format.text, "--format", help=_FORMAT_HELP),
) -> None:
    """Solve the whole game under optimal play for both sides and save the table of values (once: it takes long)."""
    import shutil

    from .layered import METHODS, ORDERS, solve_layered
    from .rules import load_ur
    from .state import space_of
    from .table import table_path, write_table

    try:
        if method not in METHODS:
            raise RulesError(f"--method is one of {', '.join(METHODS)}, not {method!r}")
        if order not in ORDERS:
            raise RulesError(f"--order is one of {', '.join(ORDERS)}, not {order!r}")
        if not 0 < tol < 1e-6:
            raise RulesError(f"--tol must be between 0 and 1e-6, got {tol}")
        r = load_ur(rules, {"pieces": pieces} if pieces is not None else {})
        out = Path(table) if table else table_path(r)
        ck = Path(checkpoint) if checkpoint else out.with_suffix(".layers")
        sol = solve_layered(r, tol=tol, method=method, order=order, checkpoint=ck, residual=residual,
                            progress=True)
    except (RulesError, TooLargeError) as exc:
        fail(str(exc), 2)
    except ValueError as exc:
        fail(str(exc), 2)
    start = space_of(r.pieces, r.code).rank(0, 0, r.pieces, 0, 0, r.pieces, 0)
    first = float(sol.values[start])
    write_table(r, sol.values, out, residual=sol.residual, tol=tol, method=method, order=order,
                seconds=sol.seconds, first_player=first)
    shutil.rmtree(ck, ignore_errors=True)  # the table is whole: the layers are no longer needed
    d = {"schema": "markov_oca.ur-solve/1", "rules": r.name, "pieces": r.pieces,
         "positions": space_of(r.pieces, r.code).size,
         "first_player": first, "residual": sol.residual, "seconds": sol.seconds, "sweeps": sol.sweeps,
         "table": str(out), "layers": [s.to_dict() for s in sol.layers]}
    seconds, n_layers, sweeps, final = sol.seconds, len(sol.layers), sol.sweeps, sol.residual
    del sol  # the values are read back from the table, memory-mapped, if the bound needs them
    if bound:
        try:
            d["throws_bound"] = _keep_bound(r, out)
        except (RulesError, TooLargeError, ValueError, OSError) as exc:  # the table is saved: say so, go on
            d["throws_bound"] = None
            typer.echo(f"the bound on the throws to come was not kept ({exc}); `solve ur` will sweep it", err=True)
    if fmt is Format.json:
        typer.echo(json.dumps(d, indent=1))
        return
    typer.echo(f"{r.name} with {r.pieces} pieces: {d['positions']:,} positions solved in {seconds:.1f} s "
               f"({n_layers} layers, {sweeps} sweeps)")
    if final is not None:
        typer.echo(f"final full Bellman pass: residual {final:.2e}")
    typer.echo(f"light (moves first) wins with {first:.12f} under optimal play")
    typer.echo(f"table: {out}")
    if d.get("throws_bound"):
        b = d["throws_bound"]
        typer.echo(f"bound on the throws to come (optimal against optimal): {b['bound']:.3f}, {b['sweeps']} sweeps "
                   f"in {b['seconds']:.0f} s, kept beside the table")


def _keep_bound(r, out: Path) -> dict | None:
    """From THROWS_BOUND_PIECES pieces, the bound on the throws to come under optimal play by both, swept on
    the table just written and kept beside it (:func:`.table.save_bound`), so that ``solve ur`` optimal against
    optimal does not sweep it; None below that, or for a table saved away from the table folder."""
    from .bound import throws_bound
    from .solve import THROWS_BOUND_PIECES, THROWS_BOUND_TOL
    from .table import find_table, save_bound, table_path

    if r.pieces < THROWS_BOUND_PIECES or out.resolve() != table_path(r).resolve():
        return None
    found = find_table(r)
    if found is None:
        return None
    b = throws_bound(r, "optimal", "optimal", found[0], tol=THROWS_BOUND_TOL, progress=True)
    kept = save_bound(r, "optimal", "optimal", THROWS_BOUND_TOL, b)
    return {**asdict(b), "kept": kept}


@app.command("stats")
def stats(
    rules: str = typer.Option("ur", "--rules", help=_UR_RULES),
    policies: str = typer.Option("random,greedy", "--policies", help="the weaker policies measured against "
                                 "optimal play, comma-separated: random, greedy"),
    pieces: int | None = typer.Option(None, "--pieces", help=_PIECES),
    table: str | None = typer.Option(None, "--table", metavar="PATH",
                                     help="the solved table (.npy) (default: the one 'markov-oca ur solve' saved "
                                     "for these rules, else a solve now, up to five pieces)"),
    tail: float = typer.Option(1e-4, "--tail", help="carry the optimal pair's length distribution until this "
                               "much probability is left (at most 1e-2: the 99th percentile)"),
    precision: float = typer.Option(1e-9, "--precision", help="relative error every pair evaluation's figures "
                                    "are proved to be within (as solve's)"),
    fmt: Format = typer.Option(Format.text, "--format", help=_FORMAT_HELP),
) -> None:
    """What optimal play means: length, the shortest game, what weaker play loses, the regret of every decision.

    JSON (schema markov_oca.ur-stats/1): optimal (light_wins, dark_wins, turns, throws, length: median, p90, p99,
    each null when --tail leaves it open, with more_than: the turn it lies beyond; tail, pmf by turn from 0);
    shortest (turns, throws: the fewest possible); chances ("light random": each side's
    chance when light plays random against an optimal dark, ...); losses (random, greedy: light, dark: the chance
    lost against optimal play); regrets (decisions, moves, tied; regret and gap: count, mean, largest, quantiles,
    edges, histogram; clear: the share of decisions whose best move beats the second by at least 0.001, 0.01,
    0.1). docs/ur.md says what each figure means.
    """
    from .rules import load_ur
    from .stats import ur_stats

    try:
        if not 0 < tail <= 1e-2:
            raise RulesError(f"--tail must be above 0 and at most 1e-2, got {tail}")
        pols = tuple(p.strip() for p in policies.split(",") if p.strip())
        r = load_ur(rules, {"pieces": pieces} if pieces is not None else {})
        if not 0 < precision < 1:
            raise RulesError(f"--precision must be between 0 and 1, got {precision}")
        st = ur_stats(r, table=table, policies=pols, tail=tail, progress=fmt is Format.text, precision=precision)
    except (RulesError, TooLargeError, OSError) as exc:
        fail(str(exc), 2)
    except SolverError as exc:  # a pair whose figures cannot be certified to --precision
        fail(str(exc), 1)
    typer.echo(json.dumps(st.to_dict(), indent=1) if fmt is Format.json else st.text())


@app.command("export-table")
def export_table(
    out: str = typer.Argument(..., help="the .rgu file to write"),
    pieces: int | None = typer.Option(None, "--pieces", help=_PIECES),
    rules: str = typer.Option("ur", "--rules", help=_UR_RULES),
    table: str | None = typer.Option(None, "--table", metavar="PATH",
                                     help="the solved table (.npy) (default: the one 'markov-oca ur solve' saved "
                                     "for these rules)"),
    values: str = typer.Option("percent16", "--values", help="how each value is stored: percent16 (what "
                               "RoyalUr-Python reads), float32 or float64"),
) -> None:
    """Write the solved table as a RoyalUr .rgu lookup table (chances for light to move, in percent), with
    RoyalUr's keys for the rule set's board (several maps once they pass 32 bits)."""
    from .rules import load_ur
    from .table import VALUE_TYPES, find_table, table_path, write_rgu

    try:
        if values not in VALUE_TYPES:
            raise RulesError(f"--values is one of {', '.join(VALUE_TYPES)}, not {values!r}")
        r = load_ur(rules, {"pieces": pieces} if pieces is not None else {})
        path = Path(table) if table else table_path(r)
        if table and path.exists() and not path.with_suffix(".json").exists():
            from .store import load_table

            found = (load_table(path, r), None)
        else:
            found = find_table(r, path) if path.exists() else None
        if found is None:
            raise RulesError(f"no solved table for {r.name} with {r.pieces} pieces at {path}: run "
                             f"`markov-oca ur solve --pieces {r.pieces} --rules {r.name}` first")
        n = write_rgu(r, found[0], out, values)
    except (RulesError, TooLargeError, ValueError, OSError) as exc:
        fail(str(exc), 2)
    typer.echo(f"{out}: {n:,} positions (light to move; those light has won at 100%), values {values}, "
               f"RoyalUr's keys for the {r.board_name}")
