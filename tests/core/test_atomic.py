"""Files appear whole or not at all: an error, an interrupt or a full disk leaves the previous file."""

from __future__ import annotations

import errno
import os
import signal
import stat

import pytest

from markov_oca.core.atomic import AtomicFile, atomic_files, atomic_write


def names(d):
    return sorted(p.name for p in d.iterdir())


def test_write_then_rename(tmp_path):
    p = tmp_path / "out.csv"
    with atomic_write(p, encoding="utf-8") as fh:
        fh.write("winner,turns\n")
        assert not p.exists() and len(names(tmp_path)) == 1  # only the hidden temporary
        assert names(tmp_path)[0].startswith(".out.csv.") and names(tmp_path)[0].endswith(".part")
    assert p.read_text() == "winner,turns\n" and names(tmp_path) == ["out.csv"]


@pytest.mark.parametrize("error", [RuntimeError("crash"), KeyboardInterrupt(), OSError(errno.ENOSPC, "full")])
def test_error_midway_leaves_the_previous_file(tmp_path, error):
    p = tmp_path / "big.tra"
    p.write_text("previous\n")
    with pytest.raises(type(error)), atomic_write(p) as fh:
        fh.write("dtmc\n" * 1000)
        raise error
    assert p.read_text() == "previous\n" and names(tmp_path) == ["big.tra"]


def test_error_midway_leaves_nothing_when_there_was_nothing(tmp_path):
    with pytest.raises(ValueError), atomic_write(tmp_path / "x.json") as fh:
        fh.write("{")
        raise ValueError
    assert names(tmp_path) == []


def test_a_set_appears_together_or_not_at_all(tmp_path):
    stems = [tmp_path / f"m.{ext}" for ext in ("tra", "lab", "srew", "props")]
    for p in stems:
        p.write_text("old\n")
    with pytest.raises(KeyboardInterrupt), atomic_files(stems) as temps:
        temps[0].write_text("new tra\n")
        temps[1].write_text("new lab\n")
        raise KeyboardInterrupt  # before the rewards and props are written
    assert [p.read_text() for p in stems] == ["old\n"] * 4 and len(names(tmp_path)) == 4
    with atomic_files(stems) as temps:
        for t, p in zip(temps, stems, strict=True):
            t.write_text(f"new {p.suffix}\n")
    assert [p.read_text() for p in stems] == ["new .tra\n", "new .lab\n", "new .srew\n", "new .props\n"]
    assert len(names(tmp_path)) == 4


def test_sigint_during_the_renames_waits_until_the_set_is_whole(tmp_path, monkeypatch):
    stems = [tmp_path / "a", tmp_path / "b"]
    real_replace = os.replace
    sent = []

    def replace_and_interrupt(src, dst):
        real_replace(src, dst)
        if not sent:  # Ctrl-C right after the first rename
            sent.append(1)
            signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(os, "replace", replace_and_interrupt)
    # Python's own handler, whatever this process was started with (a background job ignores SIGINT).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt), atomic_files(stems) as (a, b):
            a.write_text("1")
            b.write_text("2")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert (tmp_path / "a").read_text() == "1" and (tmp_path / "b").read_text() == "2"
    assert names(tmp_path) == ["a", "b"]


def test_permissions_are_those_of_a_plain_open(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "new.txt") as fh:
            fh.write("x")
        assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644  # not mkstemp's 0o600
        kept = tmp_path / "kept.txt"
        kept.write_text("old")
        kept.chmod(0o640)
        with atomic_write(kept) as fh:
            fh.write("new")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and kept.read_text() == "new"
    finally:
        os.umask(old)


def test_binary_mode_and_numpy(tmp_path):
    import numpy as np

    p = tmp_path / "values.npy"
    with atomic_write(p, "wb") as fh:
        np.save(fh, np.arange(5))  # a file handle: np.save adds no second suffix
    assert np.load(p).tolist() == [0, 1, 2, 3, 4] and names(tmp_path) == ["values.npy"]


def test_streamed_file_commit_and_discard(tmp_path):
    p = tmp_path / "games.csv"
    p.write_text("previous\n")
    f = AtomicFile(p, "w", encoding="utf-8", newline="")
    f.file.write("winner,turns\n1,20\n")
    f.discard()
    assert p.read_text() == "previous\n" and names(tmp_path) == ["games.csv"]
    with AtomicFile(p, "w") as g:
        g.file.write("winner,turns\n")
    assert p.read_text() == "winner,turns\n"
    with pytest.raises(KeyboardInterrupt), AtomicFile(p, "w") as g:
        g.file.write("half")
        raise KeyboardInterrupt
    assert p.read_text() == "winner,turns\n" and names(tmp_path) == ["games.csv"]
    h = AtomicFile(p, "w")
    h.file.write("dropped")
    del h  # never committed: nothing under the final name changes, no temporary left
    assert p.read_text() == "winner,turns\n" and names(tmp_path) == ["games.csv"]


def test_missing_folder_is_an_oserror_and_leaves_nothing(tmp_path):
    with pytest.raises(FileNotFoundError), atomic_write(tmp_path / "nope" / "x.txt") as fh:
        fh.write("x")
    with pytest.raises(FileNotFoundError):
        AtomicFile(tmp_path / "nope" / "y.txt")
    assert names(tmp_path) == []


def test_remove_temporaries_before_an_immediate_exit(tmp_path):
    # What the command line's Ctrl-C handler calls before os._exit: no .part file survives.
    from markov_oca.core.atomic import remove_temporaries

    f = AtomicFile(tmp_path / "games.csv")
    f.file.write("half")
    f.file.flush()
    with atomic_files([tmp_path / "m.tra", tmp_path / "m.lab"]) as temps:
        assert len(names(tmp_path)) == 3
        remove_temporaries()
        assert names(tmp_path) == []
        for t in temps:
            t.write_text("rewritten after the cleanup")  # the block still ends normally
    f.discard()
    assert names(tmp_path) == ["m.lab", "m.tra"]
