"""The memory guard reads the real limit: MemAvailable and the cgroup (v2 and v1), and --max-memory.

Each case builds a fake ``/proc`` and ``/sys/fs/cgroup`` under a temporary root and points
``markov_oca.memory`` at it, so the figures are known exactly.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from markov_oca.core import memory
from markov_oca.core.errors import RulesError, TooLargeError

MiB, GiB = 2**20, 2**30
NO_LIMIT_V1 = 9223372036854771712


def fake_root(tmp: Path, *, meminfo_kib: int | None, cgroup: str, mounts: list[str],
              files: dict[str, str | int]) -> Path:
    (tmp / "proc/self").mkdir(parents=True)
    if meminfo_kib is not None:
        (tmp / "proc/meminfo").write_text(f"MemTotal:       {2 * meminfo_kib} kB\nMemFree:  1 kB\n"
                                          f"MemAvailable:   {meminfo_kib} kB\n")
    (tmp / "proc/self/cgroup").write_text(cgroup)
    (tmp / "proc/self/mountinfo").write_text("".join(m + "\n" for m in mounts))
    for rel, value in files.items():
        p = tmp / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"{value}\n")
    return tmp


V2_MOUNT = "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw,nsdelegate"


@pytest.fixture
def at(monkeypatch, tmp_path):
    """Point the memory module at a fake tree built by ``fake_root`` (and clear any budget)."""
    def use(**kw) -> Path:
        root = fake_root(tmp_path, **kw)
        monkeypatch.setattr(memory, "_ROOT", root)
        return root
    monkeypatch.setattr(memory, "_max_memory", None)
    return use


def test_v2_container_limit_below_meminfo(at):
    # A container (cgroup namespace: the process sits at "/") limited to 1 GiB with 300 MiB used,
    # on a host showing 16 GiB available: 724 MiB are at hand, not 16 GiB.
    at(meminfo_kib=16 * 2**20, cgroup="0::/\n", mounts=[V2_MOUNT],
       files={"sys/fs/cgroup/memory.max": GiB, "sys/fs/cgroup/memory.current": 300 * MiB})
    assert memory.meminfo_available() == 16 * GiB
    assert memory.cgroup_headroom() == 724 * MiB
    assert memory.available_memory() == 724 * MiB
    assert memory.memory_budget() == int(724 * MiB * 0.8)


def test_v2_max_means_no_limit(at):
    at(meminfo_kib=2 * 2**20, cgroup="0::/\n", mounts=[V2_MOUNT],
       files={"sys/fs/cgroup/memory.max": "max", "sys/fs/cgroup/memory.current": 300 * MiB})
    assert memory.cgroup_headroom() is None
    assert memory.available_memory() == 2 * GiB


def test_v2_meminfo_below_cgroup(at):
    at(meminfo_kib=512 * 2**10, cgroup="0::/\n", mounts=[V2_MOUNT],
       files={"sys/fs/cgroup/memory.max": 8 * GiB, "sys/fs/cgroup/memory.current": GiB})
    assert memory.cgroup_headroom() == 7 * GiB
    assert memory.available_memory() == 512 * MiB


def test_v2_nested_tightest_level_wins(at):
    # No namespace: the process's path below the hierarchy root; the parent slice is the tighter limit.
    at(meminfo_kib=64 * 2**20, cgroup="0::/user.slice/app.scope\n", mounts=[V2_MOUNT],
       files={"sys/fs/cgroup/user.slice/app.scope/memory.max": 4 * GiB,
              "sys/fs/cgroup/user.slice/app.scope/memory.current": GiB,
              "sys/fs/cgroup/user.slice/memory.max": 2 * GiB,
              "sys/fs/cgroup/user.slice/memory.current": 1536 * MiB})
    assert memory.cgroup_headroom() == 512 * MiB
    assert memory.available_memory() == 512 * MiB


def test_v2_usage_over_limit_is_zero_room(at):
    at(meminfo_kib=64 * 2**20, cgroup="0::/\n", mounts=[V2_MOUNT],
       files={"sys/fs/cgroup/memory.max": GiB, "sys/fs/cgroup/memory.current": GiB + 4096})
    assert memory.available_memory() == 0


V1_MOUNTS = [
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
    "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory",
    "36 31 0:33 /docker/abc /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
]


def test_v1_docker_limit(at):
    # cgroup v1 as Docker mounts it: the mount's root is the container's own cgroup.
    at(meminfo_kib=32 * 2**20, cgroup="5:cpu:/docker/abc\n4:memory:/docker/abc\n0::/\n", mounts=V1_MOUNTS,
       files={"sys/fs/cgroup/memory/memory.limit_in_bytes": 2 * GiB,
              "sys/fs/cgroup/memory/memory.usage_in_bytes": 500 * MiB,
              "sys/fs/cgroup/cpu/memory.limit_in_bytes": 1})  # another controller's tree is not read
    assert memory.cgroup_headroom() == 1548 * MiB
    assert memory.available_memory() == 1548 * MiB


def test_v1_unlimited_is_meminfo(at):
    at(meminfo_kib=3 * 2**20, cgroup="4:memory:/docker/abc\n", mounts=V1_MOUNTS,
       files={"sys/fs/cgroup/memory/memory.limit_in_bytes": NO_LIMIT_V1,
              "sys/fs/cgroup/memory/memory.usage_in_bytes": 500 * MiB})
    assert memory.cgroup_headroom() is None
    assert memory.available_memory() == 3 * GiB


def test_v1_host_view_walks_up_to_the_mount(at):
    # No namespace, the whole hierarchy mounted: the limit set on a parent applies.
    mounts = ["35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory"]
    at(meminfo_kib=32 * 2**20, cgroup="4:memory:/jobs/42\n", mounts=mounts,
       files={"sys/fs/cgroup/memory/jobs/42/memory.limit_in_bytes": NO_LIMIT_V1,
              "sys/fs/cgroup/memory/jobs/42/memory.usage_in_bytes": 100 * MiB,
              "sys/fs/cgroup/memory/jobs/memory.limit_in_bytes": GiB,
              "sys/fs/cgroup/memory/jobs/memory.usage_in_bytes": 700 * MiB,
              "sys/fs/cgroup/memory/memory.limit_in_bytes": NO_LIMIT_V1,
              "sys/fs/cgroup/memory/memory.usage_in_bytes": 20 * GiB})
    assert memory.cgroup_headroom() == 324 * MiB


def test_no_cgroup_no_meminfo_still_answers(at):
    at(meminfo_kib=None, cgroup="", mounts=[], files={})
    assert memory.cgroup_headroom() is None
    assert memory.available_memory() > 0


def test_garbage_files_are_no_limit(at):
    at(meminfo_kib=GiB // 1024, cgroup="0::/\nnonsense\n", mounts=[V2_MOUNT, "broken line"],
       files={"sys/fs/cgroup/memory.max": "lots", "sys/fs/cgroup/memory.current": "?"})
    assert memory.cgroup_headroom() is None
    assert memory.available_memory() == GiB


def test_this_machine_never_above_meminfo():
    memory.set_max_memory(None)
    assert 0 < memory.system_available() <= memory.meminfo_available()
    assert memory.memory_budget() == int(memory.system_available() * 0.8)


@pytest.mark.parametrize(("text", "bytes_"), [
    ("123456", 123456), ("10M", 10 * MiB), ("500m", 500 * MiB), ("8G", 8 * GiB), ("8GiB", 8 * GiB),
    ("8 GB", 8 * GiB), ("1.5k", 1536), ("2T", 2 * 2**40), ("512B", 512),
])
def test_parse_memory_sizes(text, bytes_):
    assert memory.parse_memory(text) == bytes_


def test_parse_memory_share(at):
    at(meminfo_kib=10 * 2**20, cgroup="", mounts=[], files={})
    assert memory.parse_memory("80%") == 8 * GiB
    assert memory.parse_memory("12.5%") == 10 * GiB // 8


@pytest.mark.parametrize("text", ["", "G", "abc", "0", "0M", "-5G", "5X", "0%", "101%", "1e9", "8 G B"])
def test_parse_memory_refuses_one_line(text):
    with pytest.raises(RulesError) as e:
        memory.parse_memory(text)
    assert "--max-memory" in str(e.value) and "\n" not in str(e.value)


def test_max_memory_is_the_budget(at):
    at(meminfo_kib=16 * 2**20, cgroup="", mounts=[], files={})
    memory.set_max_memory("10M")
    assert memory.available_memory() == memory.memory_budget() == 10 * MiB
    memory.check_fits("small", 10 * MiB)
    with pytest.raises(TooLargeError, match=r"^big, about 11 MiB to build; 10 MiB budget \(--max-memory\)$"):
        memory.check_fits("big", 11 * MiB)
    memory.set_max_memory(None)
    assert memory.memory_budget() == int(16 * GiB * 0.8)
    with pytest.raises(TooLargeError, match=r"about 13.0 GiB to build; 12.8 GiB available$"):
        memory.check_fits("big", 13 * GiB)


def test_real_command_refused_under_container_limit(at):
    # oca-moderna for three players under a 64 MiB cgroup: refused up front, one line, its estimate.
    at(meminfo_kib=16 * 2**20, cgroup="0::/\n", mounts=[V2_MOUNT],
       files={"sys/fs/cgroup/memory.max": 96 * MiB, "sys/fs/cgroup/memory.current": 32 * MiB})
    from markov_oca.cli import app

    r = CliRunner().invoke(app, ["solve", "oca-moderna", "-n", "3"])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "oca-moderna" in lines[0]
    assert re.search(r"about [\d.]+ [GM]iB", lines[0]) and "available" in lines[0]


def _has_max_memory() -> bool:
    from markov_oca.cli import app

    return "--max-memory" in CliRunner().invoke(app, ["solve", "--help"]).output


def test_cli_max_memory_refuses_up_front():
    r = subprocess.run([sys.executable, "-m", "markov_oca.cli", "solve", "oca-moderna", "-n", "3",
                        "--max-memory", "10M"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr
    assert re.search(r"about [\d.]+ [GM]iB", lines[0]) and "10 MiB" in lines[0]


def test_one_wide_row_refused_up_front_with_its_size(tmp_path):
    """A chain whose rows are held padded to the widest (herman 15: one state reaches all 32,768) is refused before
    the padded rows are allocated, in one line naming the file, the widest row and the size; never a traceback."""
    n = 3000
    lines = ["@type: DTMC", "@parameters", "", "@reward_models", "", "@nr_states", str(n), "@nr_choices", str(n),
             "@model", "state 0 init", "\taction 0"]
    lines += [f"\t\t{j} : {1 / n!r}" for j in range(n)]
    for s in range(1, n):
        lines += [f"state {s}", "\taction 0", f"\t\t{s} : 1"]
    f = tmp_path / "wide.drn"
    f.write_text("\n".join(lines) + "\n")
    r = subprocess.run([sys.executable, "-m", "markov_oca.cli", "analyse", str(f), "--max-memory", "60M"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    out = r.stderr.strip().splitlines()
    assert len(out) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "wide.drn: 3,000 states whose widest row has 3,000 transitions (5,999 in all)" in out[0]
    assert re.search(r"about 0\.1 GiB to build; 60 MiB budget \(--max-memory\)$", out[0]), out[0]
    ok = subprocess.run([sys.executable, "-m", "markov_oca.cli", "analyse", str(f), "--float", "--format", "json"],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr  # with the memory at hand it is analysed
