"""The command line: parse, call the API, print. Nothing else lives here.

Each command takes the settings that some family declares for it (``--players``,
``--pieces``, ``--bet``, ...), each flag declared once from the families'
:class:`~markov_oca.family.Setting` list; a flag the rule set's family does not
take exits with code 2, whatever the family and the command. Bad input (a rule
file, an option, a player count) prints one line naming the file, key or value at
fault and exits with code 2; a chain too large for the memory at hand is refused
up front the same way. Ctrl-C prints one line and exits with code 130 at once (:func:`markov_oca.interrupt.run_cli`),
leaving no file half-written (:mod:`markov_oca.atomic`). ``--max-memory`` sets the budget every
up-front size check compares with (default: 80% of the memory at hand, cgroup limits included).
"""

from __future__ import annotations

if __name__ == "__main__":  # python -m markov_oca.cli: the loading-time handler before the heavy imports
    from markov_oca.core.loading import install_loading_handler

    install_loading_handler()

import inspect
import json
import sys
from collections.abc import Callable
from typing import Any

import typer

from . import api
from .core.errors import MarkovOcaError, RulesError, SolverError, TooLargeError
from .core.memory import parse_memory, set_max_memory
from .engine.clikit import App, Format, fail
from .engine.family import Setting, all_families, settings_for

app = App(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
          help="Race board games solved exactly as Markov chains: the Game of the Goose, snakes and ladders, "
          "the Italian points game, the Royal Game of Ur, your own boards, and any absorbing chain from a file. "
          "Start with 'variants' to list the rule sets, then 'solve NAME'.")


def _options(pairs: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise RulesError(f"--option takes KEY=VALUE, got {pair!r}")
        k, v = pair.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def _guarded(body: Callable[[], Any]) -> Any:
    """Run a command's work: bad input and refusals exit 2, a failed solve 1, an unwritable file 2."""
    try:
        return body()
    except (RulesError, TooLargeError) as exc:
        fail(str(exc), 2)
    except SolverError as exc:
        fail(str(exc), 1)
    except OSError as exc:
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        fail(f"{where}cannot write: {exc.strerror or exc}", 2)
    except MemoryError as exc:  # an allocation no estimate foresaw: one line, not a traceback
        fail(f"out of memory: {exc or 'an allocation failed'} (--max-memory sets the budget the size checks use)", 2)


def _print(result: Any, fmt: Format, **to_dict: Any) -> None:
    if fmt is Format.json:
        typer.echo(json.dumps(result.to_dict(**to_dict), indent=1, ensure_ascii=False))
    else:
        typer.echo(result.text())


# ----------------------------------------------------------------------------- declaring commands

_RULES = ("rules", typer.Argument(..., help="a shipped rule set's name (see 'variants') or the path of a TOML "
                                              "rule file"), str)


def _opt(name: str, default: Any, *flags: str, help: str, kind: Any = None,
         metavar: str | None = None) -> tuple[str, Any, Any]:
    return name, typer.Option(default, *flags, help=help, metavar=metavar), kind if kind is not None else type(default)


_OPTION_HELP = ("set one of the rule set's options, e.g. -o second_bridge=true ('explain' lists them with their "
                "values); repeatable")
_FORMAT_HELP = "how to print the result: text to read, or json for programs"


def _option_flag(what: str = _OPTION_HELP) -> tuple[str, Any, Any]:
    return _opt("option", None, "--option", "-o", help=what, kind=list[str] | None, metavar="KEY=VALUE")


def _format_flag(help: str = _FORMAT_HELP) -> tuple[str, Any, Any]:
    return _opt("fmt", Format.text, "--format", help=help, kind=Format)


def _setting_param(s: Setting, command: str) -> inspect.Parameter:
    by_help: dict[str, list[str]] = {}  # each family's own wording, with the families that share it
    for f in all_families():
        if (t := f.setting(s.name)) is not None and command in t.commands:
            default = t.default_for(command)
            shown = f" (default: {default})" if default is not None and t.kind is not bool and "default" not in t.help \
                else ""
            by_help.setdefault(t.help + shown, []).append(f.name)
    if len(by_help) == 1:
        ((words, takers),) = by_help.items()
        text = f"{words}; for {' and '.join(takers)} rule sets"
    else:
        text = "; ".join(f"{' and '.join(takers)} rule sets: {words}" for words, takers in by_help.items())
    if s.kind is bool and s.negatable:
        default, kind = typer.Option(None, f"{s.flag}/--no-{s.flag[2:]}", help=text), bool | None
    elif s.kind is bool:
        default, kind = typer.Option(False, s.flag, help=text), bool
    else:
        flags = [s.flag, *([s.short] if s.short else [])]
        default, kind = typer.Option(None, *flags, help=text), s.kind | None
    return inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)


_MAX_MEMORY_HELP = ("the most memory to use, e.g. 8G, 500M, or 50% of the memory available; a chain that would "
                    "need more is refused before any work (default: 80%)")


def _command(name: str, doc: str, common: list[tuple[str, Any, Any]],
             run: Callable[[dict[str, Any], dict[str, Any]], None]) -> None:
    """Declare ``markov-oca NAME``: its own flags, then every family setting taken by ``NAME``.

    ``run(args, settings)`` gets the command's own arguments and the settings given
    (a flag left unset is not passed, so the family's default applies).
    """
    declared = settings_for(name)
    common = [*common, _opt("max_memory", None, "--max-memory", help=_MAX_MEMORY_HELP, kind=str | None,
                            metavar="SIZE")]

    def command(**kw: Any) -> None:
        limit = kw.pop("max_memory")
        settings = {}
        for s in declared:
            value = kw.pop(s.name)
            if value is not None and not (s.kind is bool and not s.negatable and value is False):
                settings[s.name] = value

        def body() -> None:
            if limit is not None:
                set_max_memory(parse_memory(limit))
            run(kw, settings)

        _guarded(body)

    params = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=k) for n, d, k in common]
    params += [_setting_param(s, name) for s in declared]
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__doc__ = doc
    command.__name__ = name
    app.command(name)(command)


@app.command()
def variants(fmt: Format = typer.Option(Format.text, "--format", help=_FORMAT_HELP)) -> None:
    """List the shipped rule sets: name, family, what is played, and the tradition and text each follows."""
    rows = api.variants()
    if fmt is Format.json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    for r in rows:  # the summary, then the tradition and text the rule set follows
        typer.echo(f"{r['name']:18s} {r['family']:6s} {r['summary']}")
        if r["seed"]:
            typer.echo(f"{'':25s} follows {r['seed']}")


def _solve(a: dict[str, Any], settings: dict[str, Any]) -> None:
    res = api.solve(a["rules"], options=_options(a["option"]), tail=a["tail"], progress=True, **settings)
    _print(res, a["fmt"], with_pmf=a["pmf"])


_command("solve", "Solve a rule set exactly: each seat's chance to win, the chance that nobody can move again "
         "(deadlock), the expected number of turns, the distribution of the game's length and how often each "
         "square is landed on.", [
    _RULES, _option_flag(), _format_flag(),
    _opt("tail", api.DEFAULT_TAIL, "--tail", help="carry the game-length distribution on until the chance that the "
         "game is still going falls below this"),
    _opt("pmf", True, "--pmf/--no-pmf", help="include the game-length distribution (the chance of each length) "
         "in JSON output"),
], _solve)


@app.command()
def explain(
    rules: str = typer.Argument(..., help=_RULES[1].help),
    option: list[str] | None = typer.Option(None, "--option", "-o", help=_OPTION_HELP, metavar="KEY=VALUE"),
    fmt: Format = typer.Option(Format.text, "--format", help=_FORMAT_HELP),
) -> None:
    """Show a rule set as the program reads it: the board square by square, and every option with its value."""
    _guarded(lambda: _print(api.explain(rules, _options(option)), fmt))


def _simulate(a: dict[str, Any], settings: dict[str, Any]) -> None:
    s = api.simulate(a["rules"], games=a["games"], seed=a["seed"], turn_limit=a["turn_limit"],
                     options=_options(a["option"]), out=a["out"], progress=True, **settings)
    d = s.to_dict()
    if a["fmt"] is Format.json:
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
    if a["out"]:
        typer.echo(f"games written to {a['out']}")


_command("simulate", "Play random games move by move and count who wins and how long games last; optionally "
         "write every game to a file.", [
    _RULES,
    _opt("games", 100_000, "--games", help="how many games to play"),
    _opt("seed", 0, "--seed", help="seed of the random numbers: the same seed plays the same games"),
    _opt("turn_limit", None, "--turn-limit", help="stop a game after this many turns and count it as unfinished "
         "(default: 10,000)", kind=int | None),
    _option_flag(),
    _opt("out", None, "--out", help="write every game (winner, turns, throws) to this file: CSV, or JSON lines "
         "for a name ending in .jsonl", kind=str | None, metavar="PATH"),
    _format_flag(),
], _simulate)


def _crosscheck(a: dict[str, Any], settings: dict[str, Any]) -> None:
    from .api import crosscheck

    r = crosscheck(a["rules"], games=a["games"], seed=a["seed"], results=a["results"], turn_limit=a["turn_limit"],
                   options=_options(a["option"]), simulate_options=_options(a["simulate_option"]),
                   alpha=a["alpha"], progress=True, **settings)
    _print(r, a["fmt"])
    if not r.passed:
        raise typer.Exit(1)


_command("crosscheck", "Check games played by a simulator (this program's, or yours from a results file) against "
         "the exact answers; exit code 1 if they disagree.", [
    _RULES,
    _opt("games", 1_000_000, "--games", help="how many games to simulate (not used with --results)"),
    _opt("seed", 0, "--seed", help="seed of the random numbers of the simulation"),
    _opt("results", None, "--results", help="check the games in this file instead of simulating: CSV rows "
         "winner,turns[,throws] or JSON lines, as 'simulate --out' writes them", kind=str | None, metavar="PATH"),
    _opt("turn_limit", None, "--turn-limit", help="games not over after this many turns count as unfinished "
         "(default when simulating: 10,000)", kind=int | None),
    _option_flag("set a rule option for both the exact answers and the simulated games; repeatable"),
    _opt("simulate_option", None, "--simulate-option", help="set a rule option for the simulated games only, "
         "e.g. to see the check fail a simulator that plays a rule wrongly; repeatable", kind=list[str] | None,
         metavar="KEY=VALUE"),
    _opt("alpha", 0.01, "--alpha", help="the chance of a false alarm: the verdict fails a correct simulator at most "
         "this often, over all its tests together"),
    _format_flag(),
], _crosscheck)


def _export(a: dict[str, Any], settings: dict[str, Any]) -> None:
    from .api import export

    players = settings.pop("players", None)
    for p in export(a["rules"], players, a["fmt"], a["out"], options=_options(a["option"]), progress=True,
                    **settings):
        typer.echo(str(p))


_command("export", "Write the game's Markov chain to a file: a graph (GraphML, GEXF, DOT, node-link JSON) or a "
         "model checker's input (PRISM or Storm explicit files, DRN).", [
             _RULES,
             _opt("out", ..., "--out", help="the file to write (prism, storm: the name without extension, "
                  "one file per part)", kind=str, metavar="PATH"),
             _opt("fmt", "graphml", "--format", help="the file format: graphml, gexf, dot, json, prism, storm or drn"),
             _option_flag(),
         ], _export)


def _report(a: dict[str, Any], settings: dict[str, Any]) -> None:
    from .api import write_report

    paths = write_report(a["rules"], a["out"], options=_options(a["option"]), progress=True, **settings)
    if a["fmt"] is Format.json:
        typer.echo(json.dumps({"schema": "markov_oca.report/1", "files": [str(p) for p in paths]}, indent=1))
    else:
        for p in paths:
            typer.echo(str(p))


_command("report", "Write a report on a rule set: a self-contained HTML page and the same in Markdown, with "
         "the rules, the chances to win, a plot of the game's length and the board.", [
    _RULES,
    _opt("out", ..., "--out", help="the folder to write index.html, report.md and the plots into", kind=str,
         metavar="PATH"),
    _option_flag(),
    _format_flag("how to list the files written: text, or json for programs"),
], _report)

_INIT_HELP = ("start from this state (a number) or the states with this label, or 'uniform' over the initial "
              "states (default: each initial state in turn)")
_INIT_DIST_HELP = ("start from this distribution: a line 'STATE WEIGHT' per state, weights as decimals or fractions "
                   "summing to 1")


@app.command()
def analyse(
    file: str = typer.Argument(..., help="a Storm DRN file, or Storm/PRISM explicit files (the .tra file, or the "
                               "name they share without extension)"),
    fmt: Format = typer.Option(Format.text, "--format", help=_FORMAT_HELP),
    exact: bool | None = typer.Option(None, "--exact/--float",
                                      help="exact fractions or floating point (exact needs rational "
                                      "probabilities; default: exact when the chain is small)"),
    hit: list[str] | None = typer.Option(None, "--hit", metavar="LABEL",
                                         help="also give the chance of ever reaching a state with this label; "
                                         "repeatable"),
    tail: float = typer.Option(1e-10, "--tail", help="carry the distribution of the number of steps on until the "
                               "chance that the chain is still moving falls below this"),
    pmf: bool = typer.Option(True, "--pmf/--no-pmf", help="include the distribution of the number of steps (the "
                             "chance of each) in JSON output"),
    precision: float = typer.Option(1e-9, "--precision",
                                    help="relative error every floating-point figure is proved to be within"),
    only: list[str] | None = typer.Option(None, "--only", metavar="hit:LABEL|expected",
                                          help="give only the chance of ever reaching a state with this label "
                                          "(repeatable), or only the expected steps and rewards ('expected': one "
                                          "solve for every initial state), none of the other figures"),
    given: int = typer.Option(16, "--given", metavar="N", min=0,
                              help="give the expected steps and rewards given the class the chain ends in for "
                              "the N most likely classes"),
    init: str | None = typer.Option(None, "--init", metavar="STATE", help=_INIT_HELP),
    init_dist: str | None = typer.Option(None, "--init-dist", metavar="FILE", help=_INIT_DIST_HELP),
    max_memory: str | None = typer.Option(None, "--max-memory", metavar="SIZE", help=_MAX_MEMORY_HELP),
) -> None:
    """Analyse any absorbing Markov chain from a file: where it ends, how many steps it takes, visits per state."""
    from .io.chains import analyse_file

    def body() -> None:
        if max_memory is not None:
            set_max_memory(parse_memory(max_memory))
        asked = {}
        if only == ["expected"]:
            if hit:
                raise RulesError("--only expected gives the expected steps and rewards alone: no --hit beside it")
            asked = {"only": "expected"}
        elif only:
            bad = [x for x in only if not x.startswith("hit:") or not x[4:]]
            if bad:
                raise RulesError(f"--only {bad[0]!r}: the form is hit:LABEL, or expected alone (the figures given "
                                 "alone)")
            asked = {"only": "hit", "hit": [x[4:] for x in only] + list(hit or [])}
        _print(analyse_file(file, exact=exact, **{"hit": hit or None, **asked}, tail=tail, precision=precision,
                             init=init, init_dist=init_dist, conditional=given),
               fmt, with_pmf=pmf)

    _guarded(body)


# A family's own commands: ``markov-oca ur best-move ...``.
for _family in all_families():
    _sub = _family.commands()
    if _sub is not None:
        app.add_typer(_sub, name=_family.name)


def _usage_errors() -> tuple[type, type, type]:
    """The command-line parser's ``UsageError``, ``NoArgsIsHelpError`` and ``Abort``: typer vendors click
    from 0.2x on (``typer._click``), earlier versions use click itself."""
    try:
        from typer._click import exceptions as e
    except ImportError:
        from click import exceptions as e
    return e.UsageError, getattr(e, "NoArgsIsHelpError", ()), typer.Abort


def _main() -> None:
    usage_error, no_args, abort = _usage_errors()
    try:
        code = app(standalone_mode=False)
    except no_args as exc:  # the command's help, as asked for by giving nothing
        typer.echo(exc.ctx.get_help() if exc.ctx is not None else str(exc), err=True)
        sys.exit(2)
    except usage_error as exc:
        typer.echo(f"markov-oca: error: {exc.format_message()}", err=True)
        sys.exit(2)
    except abort:
        typer.echo("markov-oca: interrupted", err=True)
        sys.exit(130)
    except MarkovOcaError as exc:  # anything not caught by a command
        typer.echo(f"markov-oca: error: {exc}", err=True)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


def main() -> None:
    """The console script: the app, with Ctrl-C ending it at once in one line and exit code 130."""
    from .core.interrupt import run_cli

    run_cli(_main)


if __name__ == "__main__":
    main()
