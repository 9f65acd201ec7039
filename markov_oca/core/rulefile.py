"""Reading rule files, shared by every game family.

A rule set is a TOML file, shipped in ``markov_oca/rules/`` or given by path. This
module finds it, parses it, and holds the checks every family's loader uses on its
tables (unknown keys, whole numbers, strings, options), each raising a one-line
:class:`~markov_oca.errors.RulesError` that names the file and the key at fault.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .errors import RulesError
from .files import check_text, read_bytes

SHIPPED_DIR = Path(__file__).resolve().parent.parent / "rules"


def family_of(raw: Mapping[str, Any]) -> str:
    """The family a parsed rule file declares in ``[game].family`` (``goose`` when unsaid)."""
    game = raw.get("game")
    return game.get("family", "goose") if isinstance(game, dict) else "goose"


def resolve_source(rules: str | Path) -> tuple[str, Path]:
    """The display name and file of a shipped rule-set name or a path to a TOML file."""
    if isinstance(rules, Path) or "/" in str(rules) or str(rules).endswith(".toml"):
        path = Path(rules)
        if not path.is_file():
            raise RulesError("no such rule file", source=str(rules))
        return str(rules), path
    path = SHIPPED_DIR / f"{rules}.toml"
    if not path.is_file():
        known = ", ".join(shipped_names())
        raise RulesError(f"unknown rule set '{rules}' (shipped: {known}; or give a path to a .toml file)")
    return str(rules), path


def shipped_names() -> list[str]:
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.toml"))


def read_toml(source: str, path: Path) -> dict[str, Any]:
    """A rule file parsed, or one line naming it: unreadable, not UTF-8 text, a byte-order mark, bad TOML."""
    data = read_bytes(path)
    check_text(data, source)
    try:
        return tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"invalid TOML: {exc}", source=source) from None
    except RecursionError:  # tables nested without end
        raise RulesError("invalid TOML: nested too deeply", source=source) from None


def parse_option_value(source: str, key: str, value: Any, like: Any) -> Any:
    """Convert a user's option value (often a string from the CLI) to the type of ``like``."""
    if isinstance(like, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "yes", "1", "on"):
            return True
        if isinstance(value, str) and value.lower() in ("false", "no", "0", "off"):
            return False
        raise RulesError(f"expected true or false, got {value!r}", source=source, key=f"option {key}")
    if isinstance(like, int):
        if isinstance(value, bool):
            raise RulesError(f"expected a whole number, got {value!r}", source=source, key=f"option {key}")
        try:
            return int(value)
        except (TypeError, ValueError):
            raise RulesError(f"expected a whole number, got {value!r}", source=source, key=f"option {key}") from None
    if not isinstance(value, str):
        raise RulesError(f"expected a string, got {value!r}", source=source, key=f"option {key}")
    return value


def parse_options(source: str, options: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The options asked for, each converted to the type of its default; an unknown one is an error."""
    chosen: dict[str, Any] = {}
    for key, value in options.items():
        if key not in defaults:
            known = ", ".join(sorted(defaults))
            raise RulesError(f"unknown option '{key}' (options of this rule set: {known})", source=source)
        chosen[key] = parse_option_value(source, key, value, defaults[key])
    return chosen


def check_keys(source: str, where: str, table: Any, allowed: set[str]) -> None:
    if not isinstance(table, dict):
        raise RulesError("must be a table", source=source, key=where)
    for k in table:
        if k not in allowed:
            raise RulesError(
                f"unknown key '{k}' (allowed: {', '.join(sorted(allowed))})",
                source=source,
                key=f"{where}.{k}" if where else k,
            )


def int_value(source: str, key: str, value: Any, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RulesError(f"expected a whole number, got {value!r}", source=source, key=key)
    if lo is not None and value < lo:
        raise RulesError(f"must be at least {lo}, got {value}", source=source, key=key)
    if hi is not None and value > hi:
        raise RulesError(f"must be at most {hi}, got {value}", source=source, key=key)
    return value


def str_value(source: str, key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise RulesError(f"expected a string, got {value!r}", source=source, key=key)
    return value


def bool_value(source: str, key: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise RulesError(f"expected true or false, got {value!r}", source=source, key=key)
    return value


#: The ``[game]`` keys every family reads through :func:`game_texts`.
GAME_TEXT_KEYS = frozenset({"name", "family", "title", "tradition", "seed", "summary"})


def game_texts(source: str, game: Mapping[str, Any]) -> dict[str, str]:
    """The ``[game]`` table's name (the file's stem by default), title, tradition and summary, checked.

    ``tradition`` says in words which tradition and rule text the rule set follows. It is
    kept under the name ``seed``, the name the results' JSON gives it; a rule file may
    still use ``seed`` for it, as older files do, but not both.
    """
    name = str_value(source, "game.name", game.get("name", Path(source).stem))
    if "tradition" in game and "seed" in game:
        raise RulesError("give tradition only (seed is its older name)", source=source, key="game.seed")
    tradition = str(game["seed"]) if "seed" in game else game.get("tradition", "")  # seed was read as text
    return {
        "name": name,
        "title": str_value(source, "game.title", game.get("title", name)),
        "seed": str_value(source, "game.tradition", tradition),
        "summary": str_value(source, "game.summary", game.get("summary", "")),
    }


def game_table(source: str, raw: dict[str, Any], top_keys: set[str], game_keys: set[str],
               family: str) -> dict[str, Any]:
    """Check a rule file's top-level keys and its ``[game]`` table, which must be of ``family``.

    Every family's loader starts here; a file without ``game.family`` is a goose board.
    """
    check_keys(source, "", raw, top_keys)
    game = raw.get("game")
    if game is None:
        raise RulesError("missing table [game]", source=source, key="game")
    check_keys(source, "game", game, game_keys)
    found = game.get("family", "goose")
    if found != family:
        raise RulesError(f"this loader reads the {family} family, not {found!r}", source=source, key="game.family")
    return game


def square_entries(source: str, raw: dict[str, Any]) -> list[tuple[str, int, Any]]:
    """The ``[squares]`` table of a rule file as ``(key, square number, effect)``, keys checked."""
    sq_raw = raw.get("squares", {})
    if not isinstance(sq_raw, dict):
        raise RulesError("must be a table of square = { effect }", source=source, key="squares")
    out = []
    for key, eff in sq_raw.items():
        where = f"squares.{key}"
        try:
            out.append((where, int(key), eff))
        except ValueError:
            raise RulesError("a square is a whole number", source=source, key=where) from None
    return out
