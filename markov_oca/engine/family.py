"""What a game family is, and the registry that finds one by name.

A family (the goose race boards, the Royal Game of Ur, the Italian points game, or
one of a user's own) is a package that declares itself once with a :class:`Family`
object: its name, the settings a user may give (with defaults, choices and help),
and what it does with them: load rules, build a chain, solve, simulate, give the
exact side of a cross-check, explain the board and lay out its report page. The
shared modules (command line, API, cross-check, export, report) call these methods
and never ask which game they serve, the way OpenSpiel's algorithms are written
against one game interface and python-chess reads a variant's attributes.

The family of a rule file is read once, from its ``[game].family`` (``goose`` when
unsaid). Built-in families are imported on first use; another one is added with
:func:`register`.

Examples
--------
>>> from markov_oca.engine.family import family_named
>>> fam = family_named("ur")
>>> [s.name for s in fam.settings]
['pieces', 'light', 'dark', 'exact', 'precision']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import RulesError
from ..core.progress import progress_bar
from ..core.rulefile import family_of, read_toml, resolve_source

if TYPE_CHECKING:
    from ..analysis.chain import Chain
    from ..analysis.crosscheck import ExactAnswer
    from ..analysis.sampling import SimSummary
    from .page import Block

#: The commands a setting can belong to.
COMMANDS = ("solve", "simulate", "crosscheck", "export", "report")


@dataclass(frozen=True)
class Setting:
    """One thing a user may set for a family's play, beside the rule options.

    ``None`` is never a given value: it means "not set".

    Parameters
    ----------
    name : str
        The keyword of the Python API and, with dashes, the command-line flag (``--name``).
    help : str
        The flag's help text.
    kind : type
        ``int``, ``str``, ``bool`` (an on/off flag) or ``float``.
    default : object
        What an unset setting takes.
    choices : tuple, optional
        The values allowed (any of ``kind`` when None).
    commands : tuple of str
        The commands that take it (of ``solve``, ``simulate``, ``crosscheck``, ``export``, ``report``).
    defaults : mapping
        A default per command, overriding ``default`` (Ur's policies are ``optimal`` when solving,
        ``random`` when simulating).
    short : str, optional
        A one-letter flag too (``-n``).
    option : bool
        A rule option too (Ur's ``pieces``): given, it goes to the loader with the other options.
    negatable : bool
        A bool setting with an off form too (``--landings/--no-landings``); else a plain flag.

    Examples
    --------
    >>> s = Setting("light", "light's policy", choices=("random", "optimal"), default="optimal",
    ...             defaults={"simulate": "random"})
    >>> s.flag, s.default_for("solve"), s.default_for("simulate")
    ('--light', 'optimal', 'random')
    >>> s.check("greedy")
    Traceback (most recent call last):
    ...
    markov_oca.core.errors.RulesError: --light is one of random, optimal, not 'greedy'
    """

    name: str
    help: str
    kind: type = str
    default: Any = None
    choices: tuple[Any, ...] | None = None
    commands: tuple[str, ...] = COMMANDS
    defaults: Mapping[str, Any] = field(default_factory=dict)
    short: str | None = None
    #: A rule option too (Ur's ``pieces``): given, it goes to the loader with the other options.
    option: bool = False
    #: A bool setting with an off form too (``--landings/--no-landings``); else a plain flag.
    negatable: bool = False

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def default_for(self, command: str) -> Any:
        return self.defaults.get(command, self.default)

    def check(self, value: Any) -> Any:
        """``value`` converted to ``kind`` and checked against ``choices``; a RulesError names the flag."""
        if value is None:
            return None
        if self.kind is bool:
            if not isinstance(value, bool):
                raise RulesError(f"{self.flag} is true or false, not {value!r}")
        elif self.kind is int:
            if isinstance(value, bool) or not isinstance(value, int):
                try:
                    value = int(value)
                except (TypeError, ValueError):
                    raise RulesError(f"{self.flag} takes a whole number, not {value!r}") from None
        elif self.kind is float:
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise RulesError(f"{self.flag} takes a number, not {value!r}") from None
        elif not isinstance(value, str):
            raise RulesError(f"{self.flag} takes a word, not {value!r}")
        if self.choices is not None and value not in self.choices:
            raise RulesError(f"{self.flag} is one of {', '.join(map(str, self.choices))}, not {value!r}")
        return value


@dataclass
class Play:
    """Loaded rules with a family's settings in force, for one command.

    ``settings`` holds every setting the family declares for ``command``, given or
    defaulted. Families keep what they compute once and reuse in ``cache`` (Ur's
    optimal values serve both the solve and the page).
    """

    family: Family
    rules: Any
    command: str
    settings: dict[str, Any]
    cache: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, name: str) -> Any:
        return self.settings[name]


@dataclass(frozen=True)
class RuleSource:
    """A rule file read once: its display name, parsed TOML and family."""

    name: str
    raw: dict[str, Any]
    family: str


class Family:
    """The interface every game family implements (see the module docstring).

    A subclass sets the attributes below and implements the methods: ``load`` (a rule file
    into the family's rules), ``chain``, ``solve``, ``simulate``, ``exact_answer`` and
    ``page_blocks``. The attributes may also be given as class keywords
    (``class CoinFamily(Family, name="coin", boards="coin boards", rules_type=CoinRules)``).
    :class:`~markov_oca.engine.chainfamily.ChainFamily` implements all but
    ``load`` and ``chain`` from the chain alone.

    Attributes
    ----------
    name : str
        The family's name, as rule files give it in ``[game].family``.
    boards : str
        How messages name its rule sets (``goose boards``).
    rules_type : type
        The class of its loaded rules.
    settings : tuple of Setting
        What a user may set beside the rule options.
    sides : int, optional
        The turns of the length's unit in reports and cross-checks, when not one player's turn.

    Examples
    --------
    >>> from markov_oca.engine.family import family_named
    >>> ur = family_named("ur")
    >>> isinstance(ur, Family), ur.boards, [s.name for s in ur.settings]
    (True, 'Ur rule sets', ['pieces', 'light', 'dark', 'exact', 'precision'])
    """

    def __init_subclass__(cls, **record: Any) -> None:
        super().__init_subclass__()
        for key, value in record.items():
            if key not in ("name", "boards", "rules_type", "settings", "sides", "explainer"):
                raise TypeError(f"{cls.__name__}: a family declares no {key!r}")
            setattr(cls, key, value)

    name: str = ""
    boards: str = ""
    rules_type: type = object
    settings: tuple[Setting, ...] = ()
    #: The turns of the report's and crosscheck's "unit" for length ("turns", "both sides' turns").
    sides: int | None = None

    # --------------------------------------------------------------- settings

    def setting(self, name: str) -> Setting | None:
        return next((s for s in self.settings if s.name == name), None)

    def play(self, rules: Any, command: str = "solve", **given: Any) -> Play:
        """``rules`` with the given settings in force for ``command``; a setting this family does not
        take for that command is a RulesError naming its flag (it would otherwise do nothing)."""
        settings: dict[str, Any] = {}
        for key, value in given.items():
            s = self.setting(key)
            if value is not None and (s is None or command not in s.commands):
                raise RulesError(not_taken(key, self, command))
        for s in self.settings:
            if command in s.commands:
                value = s.check(given.get(s.name))
                settings[s.name] = s.default_for(command) if value is None else value
        play = Play(self, rules, command, settings)
        self.check_play(play)
        return play

    def check_play(self, play: Play) -> None:
        """Checks of a whole play beyond each setting's own (a family may add them)."""

    def describe_play(self, play: Play) -> str:
        """The play in a few words, for cross-check verdicts: ``2 players``."""
        return ""

    # --------------------------------------------------------------- rules

    def load(self, source: RuleSource, options: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    #: Where the family's explanation lives: (module beside the family's, its dict function, its text
    #: function), imported on first use; or override :meth:`explain` and :meth:`explain_text`.
    explainer: tuple[str, str, str] | None = None

    def _explainer(self, which: int) -> Callable[[Any], Any]:
        if self.explainer is None:
            raise NotImplementedError(f"{self.name}: no explanation")
        package = type(self).__module__.rsplit(".", 1)[0]
        return getattr(importlib.import_module(self.explainer[0], package), self.explainer[which])

    def explain(self, rules: Any) -> dict:
        """The board as the engine reads it, as JSON-able data."""
        return self._explainer(1)(rules)

    def explain_text(self, rules: Any) -> str:
        """The board as the engine reads it, for reading in a terminal."""
        return self._explainer(2)(rules)

    # --------------------------------------------------------------- answers

    def chain(self, play: Play, progress: bool = False) -> Chain:
        """The play's Markov chain (refused up front when it cannot fit)."""
        raise NotImplementedError

    def solve(self, play: Play, *, tail: float = 1e-10, progress: bool = False) -> Any:
        """The play's results: an object with ``to_dict(with_pmf=...)`` and ``text()``."""
        raise NotImplementedError

    def simulate(self, play: Play, games: int, *, seed: int = 0, turn_limit: int | None = None,
                 on_batch: Callable | None = None, progress: bool = False, **extra: Any) -> SimSummary:
        raise NotImplementedError

    def outcome_labels(self, play: Play) -> list[str] | None:
        """What a results file writes for each outcome (``None``: the seat's number)."""
        return None

    def counts_throws(self, play: Play) -> bool:
        """Whether the simulator counts throws (a results file then has a ``throws`` column)."""
        return True

    def exact_answer(self, play: Play, *, tail: float = 1e-10, progress: bool = False) -> ExactAnswer:
        """What a sample of this play is tested against."""
        raise NotImplementedError

    def page(self, play: Play, progress: bool = False) -> tuple[str, list[Block]]:
        """The report page, its title and blocks (:mod:`markov_oca.engine.page`): the play solved, then laid out."""
        res = self.solve(play, progress=progress)
        with progress_bar(progress) as bar:
            bar.add_task("drawing the report", total=None)
            return self.page_blocks(play.rules, res)

    def page_blocks(self, rules: Any, results: Any) -> tuple[str, list[Block]]:
        """The report page of solved results: its title and blocks."""
        raise NotImplementedError(f"{self.name}: no report page")

    # --------------------------------------------------------------- extras

    def commands(self) -> Any:
        """A typer app of the family's own commands (``markov-oca <family> ...``), or None."""
        return None

    def __repr__(self) -> str:
        return f"<family {self.name}>"


# ----------------------------------------------------------------------------- the registry

_BUILTIN = {"goose": "markov_oca.goose.family", "ur": "markov_oca.ur.family", "punti": "markov_oca.punti.family"}
_REGISTRY: dict[str, Family] = {}


def register(family: Family) -> Family:
    """Add (or replace) a family; rule files name it in ``[game].family``.

    Parameters
    ----------
    family : Family
        The family, with its ``name`` set.

    Returns
    -------
    Family
        ``family`` itself, so that ``register`` can close a definition.

    Raises
    ------
    ValueError
        A family without a name.

    Examples
    --------
    >>> class Coin(Family):
    ...     name = "coin"
    >>> register(Coin()).name in known_families()
    True
    >>> unregister("coin")
    """
    if not family.name:
        raise ValueError("a family needs a name")
    _REGISTRY[family.name] = family
    return family


def unregister(name: str) -> None:
    """Remove a family added with :func:`register` (built-in ones come back on next use)."""
    _REGISTRY.pop(name, None)


def known_families() -> list[str]:
    """The names of every family: the built-in ones and those registered."""
    return sorted({*_BUILTIN, *_REGISTRY})


def family_named(name: str, source: str | None = None) -> Family:
    """The family called ``name``; an unknown one is a RulesError naming ``game.family``."""
    if name not in _REGISTRY and name in _BUILTIN:
        module = importlib.import_module(_BUILTIN[name])
        register(module.FAMILY)
    if name not in _REGISTRY:
        raise RulesError(f"unknown family {name!r} (known: {', '.join(known_families())})", source=source,
                         key="game.family")
    return _REGISTRY[name]


def all_families() -> list[Family]:
    """Every family, built-in ones imported."""
    return [family_named(n) for n in known_families()]


def read_rules(rules: str | Path) -> RuleSource:
    """Find and parse a shipped rule set or a TOML file, and read its family (once)."""
    name, path = resolve_source(rules)
    raw = read_toml(name, path)
    fam = family_of(raw)
    if not isinstance(fam, str):
        raise RulesError(f"expected a family name, got {fam!r}", source=name, key="game.family")
    return RuleSource(name, raw, fam)


def family_of_rules(rules: Any) -> Family:
    """The family of loaded rules (by their type) or of a rule set's name or path."""
    if isinstance(rules, (str, Path)):
        src = read_rules(rules)
        return family_named(src.family, src.name)
    for fam in (*_REGISTRY.values(), *(family_named(n) for n in _BUILTIN)):
        if isinstance(rules, fam.rules_type) and fam.rules_type is not object:
            return fam
    raise TypeError(f"not a rule set: {rules!r}")


def prepare(rules: Any, command: str, options: Mapping[str, Any] | None = None, **given: Any) -> Play:
    """Load ``rules`` (a name, a path or loaded rules) and put the given settings in force for ``command``.

    Settings that are rule options too (Ur's ``pieces``) go to the loader. ``None``
    means a setting is not given. A setting the family does not take is a RulesError.

    Examples
    --------
    >>> play = prepare("ur", "solve", pieces=2, dark="random")
    >>> play.rules.pieces, play["light"], play["dark"]
    (2, 'optimal', 'random')
    """
    given = {k: v for k, v in given.items() if v is not None}
    if isinstance(rules, (str, Path)):
        src = read_rules(rules)
        fam = family_named(src.family, src.name)
        opts = dict(options or {})
        for s in fam.settings:
            if s.option and s.name in given and command in s.commands:
                opts[s.name] = s.check(given.pop(s.name))
        return fam.play(fam.load(src, opts), command, **given)
    fam = family_of_rules(rules)
    if options:
        raise RulesError("options are given when loading rules; pass a rule set's name or path instead")
    for s in fam.settings:
        if s.option and s.name in given:
            if s.check(given.pop(s.name)) != rules.options.get(s.name):
                raise RulesError(f"{s.flag} is a rule option: it is given when loading the rules")
    return fam.play(rules, command, **given)


def not_taken(name: str, family: Family, command: str) -> str:
    """Why a setting is refused: which families take it, and that this one does not."""
    flag = "--" + name.replace("_", "-")
    owners = [f for f in all_families() if f.setting(name) is not None and command in f.setting(name).commands]
    if not owners:
        return f"{flag} is not a setting of {command} for the '{family.name}' family"
    who = " or ".join(f"{f.boards} (the {f.name} family)" for f in owners if f is not family)
    if not who:
        return f"{flag} is not taken by {command} for the '{family.name}' family"
    return f"{flag} applies to {who}, not to the '{family.name}' family"


def settings_for(command: str) -> list[Setting]:
    """Every setting some family takes for ``command``, once each (the first family's declaration)."""
    seen: dict[str, Setting] = {}
    for fam in all_families():
        for s in fam.settings:
            if command in s.commands and s.name not in seen:
                seen[s.name] = s
    return list(seen.values())


__all__ = ["COMMANDS", "Family", "Play", "RuleSource", "Setting", "all_families", "family_named",
           "family_of_rules", "known_families", "not_taken", "prepare", "read_rules", "register",
           "settings_for", "unregister"]
