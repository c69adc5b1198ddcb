"""Faults a user meets on a shared machine or a cluster, beside the bad-input suite: files given
through links, FIFOs and full disks; signals to a command with workers; a damaged native-kernel
cache (docs/sweeps.md, "Files the workbench writes" and "Signals"; README, "Native CPU
kernels"; plug-ins that fail: ``test_plugin_faults.py``). Each is
exit 2 with one stderr line naming the flag (signals: 130 or 143), no traceback, no file outside
the folder touched and no partial file left; a signal leaves no worker behind."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.core import safe_files
from workbench.testing import plant, replaced

OUTSIDE = b"a file outside the folder the command was given\n"
FAST_CLAIM = "setting.sphere_law"
TRAIN = ["train", "--d", "4", "--N", "2", "--rank", "1", "--heads", "1", "--steps", "2",
         "--batch", "8", "--eval-samples", "100", "--device", "cpu", "--json"]


def _one_line(capsys: pytest.CaptureFixture[str], flag: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    assert f"{flag} must" in err, err
    return err


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# ---- files: links, FIFOs, full disks -------------------------------------------------------

@pytest.fixture
def outside(tmp_path: Path) -> Path:
    p = tmp_path / "outside"
    p.write_bytes(OUTSIDE)
    return p


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "given"
    d.mkdir()
    return d


def test_graph_replaces_a_link_it_is_given_and_leaves_its_target(
        folder: Path, outside: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = folder / "g.json"
    out.symlink_to(outside)
    assert main(["graph", "--out", str(out)]) == 0
    assert outside.read_bytes() == OUTSIDE
    assert not out.is_symlink() and out.read_text().startswith("{")
    assert _listing(folder) == ["g.json"]  # no temporary file left


def _follows_links(path: object, write: object, name: str = "path") -> Path:
    """A writer without the safe one's care: it opens the destination, link and all."""
    with open(os.fspath(path), "wb") as fh:  # type: ignore[arg-type]
        write(fh)  # type: ignore[operator]
    return Path(os.fspath(path))  # type: ignore[arg-type]


def test_the_link_case_fails_with_a_writer_that_follows_links(
        folder: Path, outside: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = folder / "g.json"
    out.symlink_to(outside)
    with plant("workbench.core.safe_files:write_file", replaced(_follows_links)):
        assert main(["graph", "--out", str(out)]) == 0
    assert outside.read_bytes() != OUTSIDE  # what the test above rules out


def test_report_replaces_a_linked_report_md(folder: Path, outside: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.sqlite"
    assert main(["check", "--only", FAST_CLAIM, "--db", str(db), "--json"]) == 0
    (folder / "report.md").symlink_to(outside)
    assert main(["report", "--db", str(db), "--out", str(folder), "--json"]) == 0
    assert outside.read_bytes() == OUTSIDE
    assert not (folder / "report.md").is_symlink()
    assert not [n for n in _listing(folder) if n.startswith(".")]


def test_sweep_export_ignores_links_at_the_file_and_an_old_temporary_name(
        folder: Path, outside: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (folder / "e.csv.tmp").symlink_to(outside)
    (folder / "e.csv").symlink_to(outside)
    argv = ["sweep", "tiny", "--dry-run", "--db", str(tmp_path / "none.sqlite"),
            "--export", str(folder / "e.csv"), "--json"]
    assert main(argv) == 0
    assert outside.read_bytes() == OUTSIDE
    assert (folder / "e.csv").read_text().startswith("key,preset")


@pytest.mark.parametrize("argv, flag", [
    (["graph", "--out", "{fifo}"], "--out"),
    (["sweep", "tiny", "--dry-run", "--db", "{tmp}/s.sqlite", "--export", "{fifo}.csv"],
     "--export"),
    ([*TRAIN, "--checkpoint", "{fifo}"], "--checkpoint"),
    (["check", "--only", FAST_CLAIM, "--db", "{fifo}"], "--db"),
    (["sweep", "tiny", "--db", "{fifo}"], "--db"),
    (["bounds", "sandwich", "--d", "4", "--rank", "1", "--heads", "1", "--db", "{fifo}"],
     "--db"),
])
def test_a_fifo_is_refused_before_any_work(tmp_path: Path, argv: list[str], flag: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    os.mkfifo(f"{fifo}.csv")
    before = _listing(tmp_path)
    assert main([a.format(fifo=fifo, tmp=tmp_path) for a in argv]) == 2
    err = _one_line(capsys, flag)
    assert "FIFO" in err
    assert _listing(tmp_path) == before


def _no_space(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_while_writing_leaves_the_old_file_and_no_temporary(
        folder: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = folder / "g.dot"
    out.write_text("the old graph\n")
    monkeypatch.setattr(safe_files.os, "fsync", _no_space)
    assert main(["graph", "--format", "dot", "--out", str(out)]) == 2
    assert "the disk is full" in _one_line(capsys, "--out")
    assert out.read_text() == "the old graph\n" and _listing(folder) == ["g.dot"]


def test_a_full_disk_under_a_checkpoint_is_one_line(folder: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(safe_files.os, "fsync", _no_space)
    assert main([*TRAIN, "--checkpoint", str(folder / "ck.pt")]) == 2
    assert "the disk is full" in _one_line(capsys, "--checkpoint")
    assert _listing(folder) == []


def test_the_store_is_not_created_where_it_cannot_be_written(
        folder: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(safe_files.os, "fsync", _no_space)
    assert main(["sweep", "tiny", "--db", str(folder / "s.sqlite")]) == 2
    _one_line(capsys, "--db")
    assert _listing(folder) == []


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 256 KiB tmpfs filled to the last byte (root only; else skipped)."""
    where = tmp_path / "full"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(where)],
            capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    try:
        with contextlib.suppress(OSError), open(where / "filler", "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
        os.sync()
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.parametrize("argv, flag", [
    (["check", "--only", FAST_CLAIM, "--db", "{full}/s.sqlite"], "--db"),
    (["sweep", "tiny", "--db", "{full}/s.sqlite"], "--db"),
    (["graph", "--out", "{full}/g.json"], "--out"),
    (["report", "--db", "{store}", "--out", "{full}/report"], "--out"),
    ([*TRAIN, "--checkpoint", "{full}/ck.pt"], "--checkpoint"),
    (["sweep", "tiny", "--dry-run", "--db", "{full}/none.sqlite", "--export", "{full}/e.csv"],
     "--export"),
])
def test_a_really_full_disk_is_one_line_and_leaves_nothing(
        full_disk: Path, tmp_path: Path, argv: list[str], flag: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    store = tmp_path / "s.sqlite"
    if "{store}" in argv:
        assert main(["check", "--only", FAST_CLAIM, "--db", str(store), "--json"]) == 0
        capsys.readouterr()
    assert main([a.format(full=full_disk, store=store) for a in argv]) == 2
    assert "the disk is full" in _one_line(capsys, flag)
    assert _listing(full_disk) == ["filler"]


# ---- signals: the workers end with their parent --------------------------------------------

def _children(pid: int) -> set[int]:
    """The live (not zombie) processes whose parent is ``pid``."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid and fields[0] != "Z":
                    out.add(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended; only its entry waits to be reaped


def _answered_signals() -> None:
    """In the child before it starts: SIGINT and SIGHUP not ignored, whatever this process
    inherited (a signal a program starts ignoring, it keeps ignoring, as under ``nohup``)."""
    for s in (signal.SIGINT, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def _signal_with_workers(cmd: list[str], sig: signal.Signals,
                         cwd: Path) -> tuple[int, str, set[int]]:
    """Run ``cmd``, wait until it has two workers, send it ``sig``: its exit status, its
    stderr and the workers' pids."""
    log = cwd / "stderr.txt"  # a file, not a pipe: a surviving worker would hold a pipe open
    with open(log, "w") as stderr:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=stderr, cwd=cwd,
                                preexec_fn=_answered_signals)
    try:
        workers: set[int] = set()
        deadline = time.monotonic() + 300  # a bound on a slow machine, not a measurement
        while len(workers) < 2 and proc.poll() is None and time.monotonic() < deadline:
            workers |= _children(proc.pid)
            time.sleep(0.05)
        assert len(workers) >= 2 and proc.poll() is None, log.read_text()
        proc.send_signal(sig)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, log.read_text(), workers


def _gone(workers: set[int], wait: float = 60) -> bool:
    deadline = time.monotonic() + wait
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(map(_alive, workers))


SWEEP_JOBS = ["sweep", "tiny", "--scale", "full", "--jobs", "2", "--db", "{tmp}/s.sqlite"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_without_the_parent_death_signal_the_workers_outlive_a_killed_parent(
        tmp_path: Path) -> None:
    planted = ("import sys; from workbench.testing import plant_for_process, replaced; "
               "plant_for_process('workbench.verifiers.processes:die_with_parent', "
               "replaced(lambda parent: None)); from workbench.cli import main; "
               "sys.exit(main())")
    cmd = [sys.executable, "-c", planted, *(a.format(tmp=tmp_path) for a in SWEEP_JOBS)]
    _, _, workers = _signal_with_workers(cmd, signal.SIGKILL, tmp_path)
    try:
        assert not _gone(workers, wait=2)  # what the test below rules out
    finally:
        for w in workers:
            with contextlib.suppress(OSError):
                os.kill(w, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("argv, sig, stored", [
    (SWEEP_JOBS, signal.SIGTERM, "runs of this sweep are stored in"),
    (SWEEP_JOBS, signal.SIGINT, "runs of this sweep are stored in"),
    (SWEEP_JOBS, signal.SIGHUP, "runs of this sweep are stored in"),
    (SWEEP_JOBS, signal.SIGKILL, None),
    (["check", "--jobs", "2", "--db", "{tmp}/s.sqlite"], signal.SIGTERM,
     "nothing was recorded in"),
    (["check", "--jobs", "2"], signal.SIGKILL, None),
])
def test_a_signal_to_the_parent_ends_every_worker(tmp_path: Path, argv: list[str],
                                                  sig: signal.Signals, stored: str | None) -> None:
    cmd = [sys.executable, "-m", "workbench.cli", *(a.format(tmp=tmp_path) for a in argv)]
    rc, err, workers = _signal_with_workers(cmd, sig, tmp_path)
    assert rc == (-sig if sig == signal.SIGKILL else 128 + sig)
    if stored is not None:
        assert err.count("\n") == 1 and "Traceback" not in err, err
        assert err.startswith(f"error: interrupted by {sig.name}: ") and stored in err, err
    assert _gone(workers)
    if argv[0] == "check":  # its store (--db, else the default one) was made whole, then
        # nothing: a check is recorded in one transaction when it finishes
        from workbench.verifiers.store import Store, default_path, last_check

        path = tmp_path / "s.sqlite" if "--db" in argv else default_path()
        with Store(path, readonly=True) as st:
            assert st.integrity() == "ok"
        assert last_check(path) is None


# ---- the native kernel cache checks itself ------------------------------------------------

@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    """A cache with the kernel library built by the real compiler, and the library's bytes."""
    from workbench.native import build

    if build.platform.system() != "Linux" or build.shutil.which("cc") is None:
        pytest.skip("the native kernels are built on Linux with a C compiler")
    cache = tmp_path_factory.mktemp("kernels")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WORKBENCH_CACHE", str(cache))
        mp.delenv("CC", raising=False)
        mp.delenv("WORKBENCH_FUSED", raising=False)
        mp.setattr(build, "_state", {})
        assert build.available(), build.unavailable_reason()
    (lib,) = cache.glob("native-*.so")
    return lib, lib.read_bytes()


@pytest.fixture
def kernels(built: tuple[Path, bytes], tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, list[bytes], list[int]]]:
    """A copy of the built cache, a fresh build state, a compiler that writes the good library
    (counted) and a record of the bytes of every file ``ctypes.CDLL`` opens."""
    from workbench.native import build

    lib, good = built
    cache = tmp_path / "cache"
    cache.mkdir()
    for f in lib.parent.iterdir():
        (cache / f.name).write_bytes(f.read_bytes())
    monkeypatch.setenv("WORKBENCH_CACHE", str(cache))
    monkeypatch.delenv("CC", raising=False)
    monkeypatch.delenv("WORKBENCH_FUSED", raising=False)
    monkeypatch.setattr(build, "_state", {})
    opened: list[bytes] = []
    compiles: list[int] = []
    real_cdll = build.ctypes.CDLL

    def cdll(name: str, *a: object, **k: object) -> object:
        opened.append(Path(name).read_bytes())
        return real_cdll(name, *a, **k)

    def compile_good(cc: str, extra: list[str], out: str) -> None:
        compiles.append(1)
        Path(out).write_bytes(good)

    monkeypatch.setattr(build.ctypes, "CDLL", cdll)
    monkeypatch.setattr(build, "_compile", compile_good)
    yield cache / lib.name, opened, compiles


def _kept(cache: Path) -> list[str]:
    """The cache's files but its (empty) lock files."""
    return sorted(p.name for p in cache.iterdir() if p.suffix != ".lock")


def _libm() -> bytes:
    import ctypes.util

    name = ctypes.util.find_library("m") or "libm.so.6"
    for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64",
              "/lib", "/usr/lib"):
        if (Path(d) / name).is_file():
            return (Path(d) / name).read_bytes()
    pytest.skip("no libm file to plant")


@pytest.mark.parametrize("damage", ["truncated", "emptied", "another library", "no checksum",
                                    "checksum of another file"])
def test_a_damaged_cached_kernel_is_rebuilt_and_never_loaded(
        kernels: tuple[Path, list[bytes], list[int]], built: tuple[Path, bytes], damage: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.native import build

    lib, opened, compiles = kernels
    good = built[1]
    if damage == "truncated":
        lib.write_bytes(good[:1000])
    elif damage == "emptied":
        lib.write_bytes(b"")
    elif damage == "another library":
        lib.write_bytes(_libm())
    elif damage == "no checksum":
        lib.with_suffix(".sha256").unlink()
    else:
        lib.with_suffix(".sha256").write_text("0" * 64 + "\n")
    assert build.available() and build.lib() is not None
    assert compiles == [1] and opened == [good]  # rebuilt once; only the sound file loaded
    assert lib.read_bytes() == good and capsys.readouterr().err == ""
    assert _kept(lib.parent) == sorted([lib.name, f"{lib.stem}.sha256"])


def test_a_sound_cached_kernel_is_loaded_without_a_compile(
        kernels: tuple[Path, list[bytes], list[int]], built: tuple[Path, bytes]) -> None:
    from workbench.native import build

    _, opened, compiles = kernels
    assert build.available() and compiles == [] and opened == [built[1]]


def test_a_failed_compile_leaves_nothing_and_says_why_once(
        kernels: tuple[Path, list[bytes], list[int]], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.native import build

    lib, opened, _ = kernels
    lib.write_bytes(b"damaged")

    def fails(cc: str, extra: list[str], out: str) -> None:
        Path(out).write_bytes(b"half an object file")
        raise subprocess.CalledProcessError(1, [cc], stderr=b"cc: error: no space left\n")

    monkeypatch.setattr(build, "_compile", fails)
    assert not build.available() and build.lib() is None
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "native CPU kernels off" in err, err
    assert "failed: cc: error: no space left" in err and "plain torch" in err
    assert opened == []  # the damaged file was never opened
    assert _kept(lib.parent) == []  # the damaged file, its checksum, the half build


@pytest.mark.parametrize("where", ["a file", "a missing compiler", "a read-only folder"])
def test_a_cache_that_cannot_be_used_is_one_notice(
        kernels: tuple[Path, list[bytes], list[int]], tmp_path: Path, where: str,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.native import build

    if where == "a file":
        (tmp_path / "cache-file").write_text("not a folder")
        monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache-file"))
        why = "is not a folder"
    elif where == "a missing compiler":
        monkeypatch.setattr(build.shutil, "which", lambda name: None)
        why = "no C compiler found"
    else:  # as a user other than root meets it: no file can be made there
        lib, _, _ = kernels
        lib.unlink()

        def denied(*args: object, **kwargs: object) -> None:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))

        monkeypatch.setattr(build.tempfile, "mkstemp", denied)
        why = "cannot be used: Permission denied; set WORKBENCH_CACHE to a writable folder"
    assert not build.available()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and why in err, err


def test_an_interrupted_training_says_where_its_checkpoint_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import importlib

    trainer = importlib.import_module("workbench.verifiers.train")
    step = trainer._Group.step

    def interrupted_at_step_1(self: object, t: int, task: object, cfg: object) -> None:
        if t == 1:
            raise KeyboardInterrupt  # what SIGINT raises in the main thread
        step(self, t, task, cfg)

    monkeypatch.setattr(trainer._Group, "step", interrupted_at_step_1)
    ck = tmp_path / "ck.pt"
    assert main([*TRAIN, "--checkpoint", str(ck)]) == 130
    err = capsys.readouterr().err
    assert err == (f"error: interrupted by SIGINT: the checkpoint {ck} holds the last step saved "
                   "(run again to resume)\n")
    assert ck.is_file() and [p.name for p in tmp_path.iterdir()] == ["ck.pt"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals to a child")
def test_a_signal_ignored_at_start_stays_ignored(tmp_path: Path) -> None:
    code = ("import signal, sys; from workbench.commands import _interrupts; "
            "_interrupts.install(); "
            "print(signal.getsignal(signal.SIGHUP) is signal.SIG_IGN, "
            "signal.getsignal(signal.SIGTERM) is _interrupts._stop)")

    def ignore_hup() -> None:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as nohup starts a program

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         preexec_fn=ignore_hup, check=True).stdout
    assert out.split() == ["True", "True"]
