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
from .engine.clikit import Format, fail
from .engine.family import Setting, all_families, settings_for

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Race board games solved exactly as Markov chains.")


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


def _print(result: Any, fmt: Format, **to_dict: Any) -> None:
    if fmt is Format.json:
        typer.echo(json.dumps(result.to_dict(**to_dict), indent=1, ensure_ascii=False))
    else:
        typer.echo(result.text())


# ----------------------------------------------------------------------------- declaring commands

_RULES = ("rules", typer.Argument(..., help="a shipped rule set (see 'variants') or a path to a TOML file"), str)


def _opt(name: str, default: Any, *flags: str, help: str, kind: Any = None) -> tuple[str, Any, Any]:
    return name, typer.Option(default, *flags, help=help), kind if kind is not None else type(default)


def _option_flag(what: str = "") -> tuple[str, Any, Any]:
    return _opt("option", None, "--option", "-o", help=f"KEY=VALUE{what}, repeatable", kind=list[str] | None)


def _format_flag(help: str = "text or json") -> tuple[str, Any, Any]:
    return _opt("fmt", Format.text, "--format", help=help, kind=Format)


def _setting_param(s: Setting, command: str) -> inspect.Parameter:
    takers = [f.name for f in all_families() if (t := f.setting(s.name)) is not None and command in t.commands]
    text = f"{', '.join(takers)}: {s.help}"
    if s.kind is bool and s.negatable:
        default, kind = typer.Option(None, f"{s.flag}/--no-{s.flag[2:]}", help=text), bool | None
    elif s.kind is bool:
        default, kind = typer.Option(False, s.flag, help=text), bool
    else:
        flags = [s.flag, *([s.short] if s.short else [])]
        default, kind = typer.Option(None, *flags, help=text), s.kind | None
    return inspect.Parameter(s.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)


def _command(name: str, doc: str, common: list[tuple[str, Any, Any]],
             run: Callable[[dict[str, Any], dict[str, Any]], None]) -> None:
    """Declare ``markov-oca NAME``: its own flags, then every family setting taken by ``NAME``.

    ``run(args, settings)`` gets the command's own arguments and the settings given
    (a flag left unset is not passed, so the family's default applies).
    """
    declared = settings_for(name)
    common = [*common, _opt("max_memory", None, "--max-memory",
                            help="memory this may use, e.g. 8G, 500M or 80% (default: 80% of what is at hand)",
                            kind=str | None)]

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
def variants(fmt: Format = typer.Option(Format.text, "--format", help="text or json")) -> None:
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


_command("solve", "Solve a rule set exactly: chance to win per seat, deadlock, expected turns, length, landings.", [
    _RULES, _option_flag(), _format_flag(),
    _opt("tail", api.DEFAULT_TAIL, "--tail", help="carry the length distribution until this mass is left"),
    _opt("pmf", True, "--pmf/--no-pmf", help="include the length pmf in JSON output"),
], _solve)


@app.command()
def explain(
    rules: str = typer.Argument(..., help="a shipped rule set or a path to a TOML file"),
    option: list[str] | None = typer.Option(None, "--option", "-o", help="KEY=VALUE, repeatable"),
    fmt: Format = typer.Option(Format.text, "--format", help="text or json"),
) -> None:
    """Show the board as the engine reads it, square by square, with the options in force."""
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


_command("simulate", "Play games by sampling the rules move by move; count outcomes and lengths (and write them).", [
    _RULES,
    _opt("games", 100_000, "--games", help="games to play"),
    _opt("seed", 0, "--seed", help="random seed: the same seed plays the same games"),
    _opt("turn_limit", None, "--turn-limit", help="cut games off unfinished after this many turns", kind=int | None),
    _option_flag(),
    _opt("out", None, "--out", help="write every game to this CSV (or .jsonl) file", kind=str | None),
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


_command("crosscheck", "Test simulated games (ours, or a results file) against the exact chain; exit 1 on failure.", [
    _RULES,
    _opt("games", 1_000_000, "--games", help="games to simulate"),
    _opt("seed", 0, "--seed", help="random seed of the simulation"),
    _opt("results", None, "--results", help="test these games instead (CSV winner,turns[,throws] or JSON lines)",
         kind=str | None),
    _opt("turn_limit", None, "--turn-limit", help="games not over after this many turns count as unfinished",
         kind=int | None),
    _option_flag(" for both sides"),
    _opt("simulate_option", None, "--simulate-option", help="KEY=VALUE for the simulated games only, repeatable",
         kind=list[str] | None),
    _opt("alpha", 0.01, "--alpha", help="family-wise error rate of the verdict (Holm)"),
    _format_flag(),
], _crosscheck)


def _export(a: dict[str, Any], settings: dict[str, Any]) -> None:
    from .api import export

    players = settings.pop("players", None)
    for p in export(a["rules"], players, a["fmt"], a["out"], options=_options(a["option"]), progress=True,
                    **settings):
        typer.echo(str(p))


_command("export", "Write the chain as a graph (GraphML, GEXF, DOT, node-link JSON) or as PRISM / Storm explicit "
         "files.", [
             _RULES,
             _opt("out", ..., "--out", help="the file to write (prism/storm: the stem of the files)", kind=str),
             _opt("fmt", "graphml", "--format", help="graphml, gexf, dot, json, prism, storm or drn"),
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


_command("report", "Write a self-contained HTML page and its markdown twin: rules, chances, length plot, the board.", [
    _RULES,
    _opt("out", ..., "--out", help="the directory to write index.html, report.md and the plots into", kind=str),
    _option_flag(),
    _format_flag("text (the files written) or json"),
], _report)

@app.command()
def analyse(
    file: str = typer.Argument(..., help="a DRN file, or Storm/PRISM explicit files (.tra or their stem)"),
    fmt: Format = typer.Option(Format.text, "--format", help="text or json"),
    exact: bool | None = typer.Option(None, "--exact/--float",
                                      help="exact fractions (rational chains; default: when small)"),
    hit: list[str] | None = typer.Option(None, "--hit", help="a label whose hitting probability to give, repeatable"),
    tail: float = typer.Option(1e-10, "--tail", help="carry the absorption-time distribution until this mass is left"),
    pmf: bool = typer.Option(True, "--pmf/--no-pmf", help="include the absorption-time pmf in JSON output"),
    precision: float = typer.Option(1e-9, "--precision",
                                    help="relative precision every float figure is certified to (its bound)"),
) -> None:
    """Analyse any absorbing chain from a file: absorption into each closed class, steps, visits, length."""
    from .io.chains import analyse_file

    _guarded(lambda: _print(analyse_file(file, exact=exact, hit=hit or None, tail=tail, precision=precision), fmt,
                            with_pmf=pmf))


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
