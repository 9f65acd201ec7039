"""The command line: parse, call the API, print. Nothing else lives here.

Bad input (a rule file, an option, a player count) prints one line naming
the file, key or value at fault and exits with code 2; a chain too large for
the memory at hand is refused up front the same way.
"""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import Any

import typer

from . import api
from .errors import MarkovOcaError, RulesError, SolverError, TooLargeError
from .report import crosscheck_text, explain_dict, explain_text, solve_text, ur_text

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Race board games solved exactly as Markov chains.")


class Format(StrEnum):
    text = "text"
    json = "json"


def _options(pairs: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise RulesError(f"--option takes KEY=VALUE, got {pair!r}")
        k, v = pair.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _check_family(rules: str, *, pieces: int | None = None, policies: bool = False, bet: str = "never") -> str:
    """The rule set's family, refusing options that belong to another game (they would do nothing)."""
    fam = api.family(rules)
    if pieces is not None and fam != "ur":
        raise RulesError(f"--pieces applies to Ur rule sets, not to the {fam} family")
    if policies and fam != "ur":
        raise RulesError(f"--light and --dark apply to Ur rule sets, not to the {fam} family")
    if bet != "never" and fam != "punti":
        raise RulesError(f"--bet applies to the points game (punti family), not to the {fam} family")
    return fam


# The options several commands share (a fresh typer.Option for each command).
def _option_opt(what: str = "") -> Any:
    return typer.Option(None, "--option", "-o", help=f"KEY=VALUE{what}, repeatable")


def _pieces_opt() -> Any:
    return typer.Option(None, "--pieces", help="Ur: pieces per side (1..7)")


def _side_opt(side: str, default: str) -> Any:
    return typer.Option(default, f"--{side}", help=f"Ur: {side}'s policy (random, greedy, optimal)")


def _bet_opt() -> Any:
    return typer.Option("never", "--bet", help="points game: Pulcinella bets never, always or optimal")


def _fail(message: str, code: int) -> None:
    typer.echo(f"markov-oca: error: {message}", err=True)
    raise typer.Exit(code)


@app.command()
def variants(fmt: Format = typer.Option(Format.text, "--format", help="text or json")) -> None:
    """List the shipped rule sets, each with a one-line summary and its seed text."""
    rows = api.variants()
    if fmt is Format.json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for r in rows:
        typer.echo(f"{r['name']:18s} {r['family']:6s} seed {r['seed'] or '-':4s} {r['summary']}")


@app.command()
def solve(
    rules: str = typer.Argument(..., help="a shipped rule set (see 'variants') or a path to a TOML file"),
    players: int | None = typer.Option(None, "--players", "-n", help="number of players (default: the rule set's)"),
    option: list[str] | None = _option_opt(),
    exact: bool = typer.Option(False, "--exact", help="exact fractions (chains of up to a few thousand states)"),
    fmt: Format = typer.Option(Format.text, "--format", help="text or json"),
    landings: bool | None = typer.Option(None, "--landings/--no-landings",
                                            help="landing chances per square (default: on for small chains)"),
    tail: float = typer.Option(1e-10, "--tail", help="carry the length distribution until this mass is left"),
    pmf: bool = typer.Option(True, "--pmf/--no-pmf", help="include the length pmf in JSON output"),
    pieces: int | None = _pieces_opt(),
    light: str = _side_opt("light", "optimal"),
    dark: str = _side_opt("dark", "optimal"),
    bet: str = _bet_opt(),
    postcards: int = typer.Option(0, "--postcards",
                                  help="points game: also simulate this many games with and without postcards"),
    method: str = typer.Option("auto", "--method",
                               help="points game: auto, chain, independent (paths) or layered; see docs/punti.md"),
) -> None:
    """Solve a rule set exactly: chance to win per seat, deadlock, expected turns, length, landings."""
    try:
        if not 0 < tail < 1:
            raise RulesError(f"--tail must be between 0 and 1, got {tail}")
        _check_family(rules, pieces=pieces, policies=(light, dark) != ("optimal", "optimal"), bet=bet)
        if method != "auto" and api.family(rules) != "punti":
            raise RulesError(f"--method applies to the points game (punti family), not to the {api.family(rules)} "
                             "family")
        if api.family(rules) == "punti":
            from .punti import punti_text, solve_punti

            pr = solve_punti(rules, players, bet=bet, options=_options(option), progress=True, tail=tail,
                             postcards=postcards, method=method)
            typer.echo(json.dumps(pr.to_dict(with_pmf=pmf), indent=1) if fmt is Format.json else punti_text(pr))
            return
        if api.family(rules) == "ur":
            opts = _options(option)
            if pieces is not None:
                opts["pieces"] = pieces
            ur = api.solve_ur(rules, light, dark, options=opts, tail=tail, progress=True)
            typer.echo(json.dumps(ur.to_dict(with_pmf=pmf), indent=1) if fmt is Format.json else ur_text(ur))
            return
        r = api.load(rules, _options(option))
        res = api.solve(r, players, exact=exact, landings=landings, tail=tail, progress=True)
    except (RulesError, TooLargeError) as exc:
        _fail(str(exc), 2)
    except SolverError as exc:
        _fail(str(exc), 1)
    if fmt is Format.json:
        typer.echo(json.dumps(res.to_dict(with_pmf=pmf), indent=1, ensure_ascii=False))
    else:
        typer.echo(solve_text(res))


@app.command()
def explain(
    rules: str = typer.Argument(..., help="a shipped rule set or a path to a TOML file"),
    option: list[str] | None = _option_opt(),
    fmt: Format = typer.Option(Format.text, "--format", help="text or json"),
) -> None:
    """Show the board as the engine reads it, square by square, with the options in force."""
    try:
        if api.family(rules) == "ur":
            from .report import ur_explain_dict, ur_explain_text
            from .ur.rules import load_ur

            u = load_ur(rules, _options(option))
            typer.echo(json.dumps(ur_explain_dict(u), indent=1, ensure_ascii=False) if fmt is Format.json
                       else ur_explain_text(u))
            return
        if api.family(rules) == "punti":
            from .punti import load_punti
            from .punti.report import punti_explain_dict, punti_explain_text

            p = load_punti(rules, _options(option))
            typer.echo(json.dumps(punti_explain_dict(p), indent=1, ensure_ascii=False) if fmt is Format.json
                       else punti_explain_text(p))
            return
        r = api.load(rules, _options(option))
    except RulesError as exc:
        _fail(str(exc), 2)
    typer.echo(json.dumps(explain_dict(r), indent=1, ensure_ascii=False) if fmt is Format.json else explain_text(r))


@app.command()
def simulate(
    rules: str = typer.Argument(..., help="a shipped rule set or a path to a TOML file"),
    players: int | None = typer.Option(None, "--players", "-n", help="number of players (default: the rule set's)"),
    games: int = typer.Option(100_000, "--games", help="games to play"),
    seed: int = typer.Option(0, "--seed", help="random seed: the same seed plays the same games"),
    turn_limit: int | None = typer.Option(None, "--turn-limit", help="cut games off unfinished after this many turns"),
    option: list[str] | None = _option_opt(),
    out: str | None = typer.Option(None, "--out", help="write every game to this CSV (or .jsonl) file"),
    pieces: int | None = _pieces_opt(),
    light: str = _side_opt("light", "random"),
    dark: str = _side_opt("dark", "random"),
    bet: str = _bet_opt(),
    fmt: Format = typer.Option(Format.text, "--format", help="text or json"),
) -> None:
    """Play games by sampling the rules move by move; count outcomes and lengths (and write them)."""
    try:
        _check_family(rules, pieces=pieces, policies=(light, dark) != ("random", "random"), bet=bet)
        s = api.simulate(rules, players, games, seed=seed, turn_limit=turn_limit, options=_options(option),
                         pieces=pieces, light=light, dark=dark, bet=bet, out=out, progress=True)
    except (RulesError, TooLargeError) as exc:
        _fail(str(exc), 2)
    d = s.to_dict()
    if fmt is Format.json:
        typer.echo(json.dumps({"schema": "markov_oca.simulate/1", **d}, indent=1))
        return
    typer.echo(f"{s.games:,} simulated games of {s.rules} (seed {s.seed}, cut at {s.turn_limit} turns), "
               f"{d['games_per_second'] or 0:,.0f} games/s")
    width = max(len(n) for n in [*d["outcomes"], "unfinished"])
    for name, k in d["outcomes"].items():
        typer.echo(f"  {name:{width}s} {k:>10,}  {k / s.games:.6f}")
    typer.echo(f"  {'unfinished':{width}s} {s.unfinished:>10,}  {s.unfinished / s.games:.6f}")
    throws = f", mean throws {d['mean_throws']:.4f}" if s.throws_sum else ""
    typer.echo(f"mean turns {d['mean_turns']:.4f}{throws} (finished games)")
    if out:
        typer.echo(f"games written to {out}")


@app.command()
def crosscheck(
    rules: str = typer.Argument(..., help="a shipped rule set or a path to a TOML file"),
    players: int | None = typer.Option(None, "--players", "-n", help="number of players (default: the rule set's)"),
    games: int = typer.Option(1_000_000, "--games", help="games to simulate"),
    seed: int = typer.Option(0, "--seed", help="random seed of the simulation"),
    results: str | None = typer.Option(None, "--results",
                                       help="test these games instead (CSV winner,turns[,throws] or JSON lines)"),
    turn_limit: int | None = typer.Option(None, "--turn-limit",
                                          help="games not over after this many turns count as unfinished"),
    option: list[str] | None = _option_opt(" for both sides"),
    simulate_option: list[str] | None = typer.Option(None, "--simulate-option",
                                                     help="KEY=VALUE for the simulated games only, repeatable"),
    alpha: float = typer.Option(0.01, "--alpha", help="family-wise error rate of the verdict (Holm)"),
    pieces: int | None = _pieces_opt(),
    light: str = _side_opt("light", "random"),
    dark: str = _side_opt("dark", "random"),
    bet: str = _bet_opt(),
    fmt: Format = typer.Option(Format.text, "--format", help="text or json"),
) -> None:
    """Test simulated games (ours, or a results file) against the exact chain; exit 1 on failure."""
    from .crosscheck import crosscheck as run

    try:
        _check_family(rules, pieces=pieces, policies=(light, dark) != ("random", "random"), bet=bet)
        r = run(rules, players, games=games, seed=seed, results=results, turn_limit=turn_limit,
                options=_options(option), simulate_options=_options(simulate_option), pieces=pieces,
                light=light, dark=dark, bet=bet, alpha=alpha, progress=True)
    except (RulesError, TooLargeError) as exc:
        _fail(str(exc), 2)
    except SolverError as exc:
        _fail(str(exc), 1)
    typer.echo(json.dumps(r.to_dict(), indent=1) if fmt is Format.json else crosscheck_text(r))
    if not r.passed:
        raise typer.Exit(1)


@app.command()
def export(
    rules: str = typer.Argument(..., help="a shipped rule set or a path to a TOML file"),
    out: str = typer.Option(..., "--out", help="the file to write (prism/storm: the stem of the files)"),
    fmt: str = typer.Option("graphml", "--format", help="graphml, gexf, dot, json, prism or storm"),
    players: int | None = typer.Option(None, "--players", "-n", help="number of players (default: the rule set's)"),
    option: list[str] | None = _option_opt(),
    pieces: int | None = _pieces_opt(),
    light: str = _side_opt("light", "optimal"),
    dark: str = _side_opt("dark", "optimal"),
    bet: str = _bet_opt(),
) -> None:
    """Write the chain as a graph (GraphML, GEXF, DOT, node-link JSON) or as PRISM / Storm explicit files."""
    from .export import export as write

    opts = _options(option)
    if pieces is not None:
        opts["pieces"] = pieces
    try:
        _check_family(rules, pieces=pieces, policies=(light, dark) != ("optimal", "optimal"), bet=bet)
        paths = write(rules, players, fmt, out, options=opts, light=light, dark=dark, bet=bet, progress=True)
    except (RulesError, TooLargeError) as exc:
        _fail(str(exc), 2)
    except OSError as exc:
        _fail(f"{out}: cannot write: {exc.strerror or exc}", 2)
    for p in paths:
        typer.echo(str(p))


@app.command()
def report(
    rules: str = typer.Argument(..., help="a shipped rule set or a path to a TOML file"),
    out: str = typer.Option(..., "--out", help="the directory to write index.html, report.md and the plots into"),
    players: int | None = typer.Option(None, "--players", "-n", help="number of players (default: the rule set's)"),
    option: list[str] | None = _option_opt(),
    pieces: int | None = _pieces_opt(),
    light: str = _side_opt("light", "optimal"),
    dark: str = _side_opt("dark", "optimal"),
    bet: str = _bet_opt(),
    landings: bool | None = typer.Option(None, "--landings/--no-landings",
                                            help="colour the board by landing chance (default: on for small chains)"),
    fmt: Format = typer.Option(Format.text, "--format", help="text (the files written) or json"),
) -> None:
    """Write a self-contained HTML page and its markdown twin: rules, chances, length plot, the board."""
    from pathlib import Path

    from .report_page import write_report

    try:
        paths = write_report(rules, Path(out), players=players, options=_options(option), pieces=pieces,
                             light=light, dark=dark, bet=bet, landings=landings, progress=True)
    except (RulesError, TooLargeError) as exc:
        _fail(str(exc), 2)
    except SolverError as exc:
        _fail(str(exc), 1)
    except OSError as exc:
        _fail(f"{out}: cannot write: {exc.strerror or exc}", 2)
    if fmt is Format.json:
        typer.echo(json.dumps({"schema": "markov_oca.report/1", "files": [str(p) for p in paths]}, indent=1))
    else:
        for p in paths:
            typer.echo(str(p))


from .ur.commands import app as ur_app  # noqa: E402  (a family's own commands)

app.add_typer(ur_app, name="ur")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("markov-oca: interrupted", err=True)
        sys.exit(130)
    except MarkovOcaError as exc:  # anything not caught by a command
        typer.echo(f"markov-oca: error: {exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
