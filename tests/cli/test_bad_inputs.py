"""Bad input across every command and flag, paths, files and sizes included: exit 2, exactly one
line on stderr that names the flag, no traceback, nothing on stdout, nothing written (the working
folder and the fixture folder are compared before and after), and torch never imported.

The cases run through ``workbench.cli.main`` in one child process that has not imported torch
(a fresh one after any case that imports it, so each case is judged alone), with the working
folder, ``$HOME`` and ``$XDG_DATA_HOME`` in a temporary folder; a few run through the console
script as a user would. Nothing here is timed (``benchmarks/cli_latency.py`` times bad input).
"""

from __future__ import annotations

import importlib.util
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.bad_input_contract import problems, run_cases
from workbench.commands._declared import has_entry_points
from workbench.commands._paths import nvidia_driver_present
from workbench.testing import edited, plant, replaced

TRAIN = ["train", "--d", "8", "--N", "2", "--rank", "1", "--heads", "2", "--steps", "1"]
LONG = "1" * 50_000


def _train(**over: str) -> list[str]:
    """``TRAIN`` with some flags' values replaced (``heads="0"``) or added."""
    args = list(TRAIN)
    for k, v in over.items():
        flag = "--" + k.replace("_", "-")
        if flag in args:
            args[args.index(flag) + 1] = v
        else:
            args += [flag, v]
    return args


def _sandwich(*extra: str) -> list[str]:
    return ["bounds", "sandwich", "--d", "6", "--rank", "1", "--heads", "1", *extra]


def _lower(*extra: str) -> list[str]:
    return ["bounds", "lower", "--d", "8", "--rank", "1", "--heads", "2", *extra]


# (argv, the flag the one stderr line must name); {F} is the fixture folder (a workbench store,
# a foreign SQLite file, a text file, a folder), {W} the case's empty working folder
CASES: list[tuple[list[str], str]] = [
    (["nope"], "COMMAND"),
    (["--nope"], "--nope"),
    (["bounds", "nope"], "COMMAND"),
    (["harmonics", "nope"], "COMMAND"),
    # check
    *[(["check", "--scale", v], "--scale") for v in ("nope", "FULL", "", "paper")],
    *[(["check", "--seed", v], "--seed") for v in ("-1", "abc", "1.5", "１", "٣", "1e3")],
    *[(["check", "--only", v], "--only") for v in ("nope", "thm9", "thm2.nope", "", "fact1x")],
    (["check", "--only", "fact1", "--only", "nope"], "--only"),
    (["check", "--device", "nope"], "--device"),
    (["check", "--device", "CPU"], "--device"),
    *[(["check", "--db", v], "--db") for v in ("/proc/x.sqlite", "{F}/dir", "{F}/foreign.sqlite",
                                              "{F}/text.txt", "/nonexistent/x.sqlite")],
    (["check", "--db", "/proc/x.sqlite", "--only", "fact1"], "--db"),
    (["check", "--nope"], "--nope"),
    (["check", "--verbose=3"], "--verbose"),
    (["check", "--only", LONG], "--only"),
    (["check", "--seed"], "--seed"),
    # graph
    (["graph", "--format", "png"], "--out"),
    (["graph", "--format", "png", "--json"], "--out"),
    *[(["graph", "--format", v], "--format") for v in ("nope", "svg", "PNG")],
    *[(["graph", "--out", v], "--out") for v in ("/proc/g.json", "{F}/dir", "/nonexistent/g")],
    (["graph", "--format", "png", "--out", "/proc/g.png"], "--out"),
    *[(["graph", "--db", v], "--db") for v in ("{W}/missing.sqlite", "{F}/foreign.sqlite",
                                              "{F}/text.txt", "{F}/dir")],
    (["graph", "--seed", "1"], "--seed"),
    # report
    (["report"], "--out"),
    *[(["report", "--db", v, "--out", "{W}/r"], "--db")
      for v in ("{W}/missing.sqlite", "{F}/foreign.sqlite", "{F}/text.txt", "{F}/dir")],
    (["report", "--out", "{W}/r"], "--db"),  # the default store does not exist yet
    *[(["report", "--db", "{F}/store.sqlite", "--out", v], "--out")
      for v in ("/proc/r", "{F}/text.txt", "/nonexistent/a/b")],
    (["report", "--db", "{F}/store.sqlite", "--out", "{W}/r", "--seed", "1"], "--seed"),
    # bounds lower / heads-needed / list
    *[(["bounds", "lower", "--d", v, "--rank", "1", "--heads", "2"], "--d")
      for v in ("1", "x", "1.5", "１６", "٣", "3000", LONG)],
    *[(_lower()[:4] + ["--rank", v, "--heads", "2"], "--rank") for v in ("0", "99", "-1")],
    *[(_lower()[:6] + ["--heads", v], "--heads") for v in ("0", "-1", "2.5")],
    (_lower("--bound", "nope"), "--bound"),
    (_lower("--bound", "x" * 300), "--bound"),
    (_lower("--N", "0"), "--N"),
    (_lower("--r", "2"), "--rank"),
    (["bounds", "lower", "--rank", "1", "--heads", "2"], "--d"),
    (["bounds", "lower", "--d", "8", "--heads", "2"], "--rank"),
    (_lower("--seed", "1"), "--seed"),
    *[(["bounds", "heads-needed", "--d", "8", "--rank", "1", "--eps", v], "--eps")
      for v in ("0", "2", "nan", "x", "-0.5", "inf")],
    (["bounds", "heads-needed", "--d", "1", "--rank", "1", "--eps", "0.1"], "--d"),
    (["bounds", "heads-needed", "--d", "8", "--rank", "0", "--eps", "0.1"], "--rank"),
    (["bounds", "heads-needed", "--d", "8", "--rank", "1", "--r", "1", "--eps", "0.1"], "--rank"),
    (["bounds", "heads-needed", "--d", "8", "--rank", "1", "--eps", "0.1", "--max-degree", "-1"],
     "--max-degree"),
    (["bounds", "list", "--nope"], "--nope"),
    # bounds sandwich
    (["bounds", "sandwich", "--d", "300", "--rank", "1", "--heads", "1"], "--d"),
    (["bounds", "sandwich", "--d", "6", "--rank", "1", "--heads", "5000"], "--heads"),
    (["bounds", "sandwich", "--d", "6", "--rank", "0", "--heads", "1"], "--rank"),
    (["bounds", "sandwich", "--d", "6", "--rank", "7", "--heads", "1"], "--rank"),
    (_sandwich("--scale", "nope"), "--scale"),
    (_sandwich("--budget", "nope"), "--scale"),
    (_sandwich("--scale", "quick", "--budget", "full"), "--scale"),
    (_sandwich("--r", "2"), "--rank"),
    *[(_sandwich("--witness-dir", v), "--witness-dir") for v in ("/proc/w", "{F}/text.txt",
                                                                 "/nonexistent/a/b")],
    (_sandwich("--bound", "nope"), "--bound"),
    (_sandwich("--witness", "nope"), "--witness"),
    (_sandwich("--seed", "-1"), "--seed"),
    # falsify
    *[(["falsify", "--budget", v], "--budget") for v in ("0", "1001", "x", "-3")],
    *[(["falsify", "--d", v], "--d") for v in ("1", "4:2", "a:b", "4:8:16", "", "１:８")],
    (["falsify", "--rank", "0"], "--rank"),
    (["falsify", "--rank", "20:30", "--d", "4:8"], "--rank"),
    (["falsify", "--heads", "0:3"], "--heads"),
    (["falsify", "--N", "0"], "--N"),
    (["falsify", "--N", "3"], "--N"),
    *[(["falsify", "--bound", v], "--bound") for v in ("nope", "constant:2", "constant:x",
                                                       "constant:0")],
    (["falsify", "--steps", "0"], "--steps"),
    *[(["falsify", "--lr", v], "--lr") for v in ("0", "-1", "nan", "x")],
    (["falsify", "--eval-samples", "10"], "--eval-samples"),
    *[(["falsify", "--alpha", v], "--alpha") for v in ("0", "1", "2")],
    (["falsify", "--attack", "nope"], "--attack"),
    *[(["falsify", "--replay", v], "--replay") for v in ("nope", "d=8", "d=x,r=1")],
    *[(["falsify", "--replay", "d=8,r=1,H=1,N=2,attack=train,steps=1,lr=0.1,batch=8,"
        f"eval_samples=100,level=0.9,{v}"], "--replay")
      for v in (f"seed={10**30},eval_seed=0", "seed=0,eval_seed=-1", "seed=1.5,eval_seed=0")],
    (["falsify", "--seed", "-1"], "--seed"),
    # harmonics, kernel
    (["harmonics", "sign", "--d", "1", "--max-degree", "3"], "--d"),
    (["harmonics", "sign", "--d", "5", "--max-degree", "-1"], "--max-degree"),
    (["harmonics", "sign", "--d", "x", "--max-degree", "3"], "--d"),
    (["harmonics", "sign", "--d", "١٦", "--max-degree", "3"], "--d"),
    (["harmonics", "sign", "--d", "5"], "--max-degree"),
    (["harmonics", "sign", "--d", "5", "--max-degree", "3", "--seed", "1"], "--seed"),
    (["harmonics", "sign", "--d", "5", "--max-degree", "3", "--distribution", "iid"],
     "--distribution"),
    (["kernel", "head-vs-target", "--d", "4", "--theta", "1", "--r", "1"], "--r"),
    (["harmonics", "dim", "--d", "0", "--degree", "1"], "--d"),
    (["harmonics", "dim", "--d", "5", "--degree", "-1"], "--degree"),
    (["harmonics", "dim", "--d", "5", "--degree", "1.5"], "--degree"),
    *[(["kernel", "head-vs-target", "--d", "4", "--theta", v], "--theta")
      for v in ("9", "nan", "x", "-1")],
    (["kernel", "head-vs-target", "--d", "1", "--theta", "1"], "--d"),
    (["kernel", "head-vs-target", "--theta", "1"], "--d"),
    # construct
    (["construct", "nope"], "NAME"),
    *[(["construct", "full-rank", "--eps", v], "--eps") for v in ("3", "0", "-1", "nan")],
    (["construct", "full-rank", "--beta", "-1"], "--beta"),
    (["construct", "full-rank", "--d", "1"], "--d"),
    (["construct", "full-rank", "--N", "0"], "--N"),
    (["construct", "full-rank", "--N", "9"], "--N"),
    (["construct", "full-rank", "--points", "nope"], "--points"),
    (["construct", "full-rank", "--distribution", "iid", "--points", "iid"], "--points"),
    (["construct", "full-rank", "--eval-samples", "1"], "--eval-samples"),
    (["construct", "full-rank", "--eval-samples", "x"], "--eval-samples"),
    (["construct", "full-rank", "--seeds", "0"], "--seeds"),
    (["construct", "full-rank", "--resolution", "0"], "--resolution"),
    (["construct", "full-rank", "--seed", "-1"], "--seed"),
    *[(["construct", "random-features", "--heads", v], "--heads")
      for v in ("0", "x", "1000000000", "１０")],
    (["construct", "random-features", "--d", "1"], "--d"),
    (["construct", "random-features", "--d", "100000"], "--d"),
    (["construct", "random-features", "--law", "nope"], "--law"),
    (["construct", "random-features", "--solver", "nope"], "--solver"),
    (["construct", "majority-vote", "--heads", "0"], "--heads"),
    (["construct", "majority-vote", "--heads", "1000000000"], "--heads"),
    (["construct", "full-rank", "--d", "1000000"], "--d"),
    (["construct", "majority-vote", "--seeds", "1"], "--seeds"),
    (["construct", "majority-vote", "--copy-style", "nope"], "--copy-style"),
    (["construct", "majority-vote", "--N", "0"], "--N"),
    *[(["construct", "biased", "--d", v], "--d") for v in ("1", "100000", "3000")],
    (["construct", "biased", "--beta", "-1"], "--beta"),
    (["construct", "biased", "--spacing", "0"], "--spacing"),
    (["construct", "biased", "--normalizer", "nope"], "--normalizer"),
    (["construct", "biased", "--coefficients", "nope"], "--coefficients"),
    (["construct", "hardmax-rank1", "--param", "nope=1"], "--param"),
    (["construct", "hardmax-rank1", "--param", "x"], "--param"),
    (["construct", "hardmax-rank1", "--rank", "0"], "--rank"),
    (["construct", "hardmax-rank1", "--rank", "99"], "--rank"),
    (["construct", "hardmax-rank1", "--heads", "0"], "--heads"),
    (["construct", "hardmax-rank1", "--rank", "1", "--r", "2"], "--rank"),
    (["construct", "bayes-heads", "--rank", "0"], "--rank"),
    # sizes of every built-in construction, refused from its memory estimate (or not an option)
    *[(["construct", name, "--heads", "1000000000"], "--heads")
      for name in ("full-rank", "biased", "hardmax-rank1", "bayes-heads",
                   *(f"workbench.plugins.builtin:{c}" for c in (
                       "HARDMAX_RANK1", "BAYES_HEADS", "RANDOM_FEATURES", "MAJORITY_VOTE")))],
    *[(["construct", f"workbench.plugins.builtin:{c}", "--d", "1000000"], "--d")
      for c in ("FULL_RANK", "BIASED")],
    *[(["construct", name, "--d", "100000"], "--d") for name in ("hardmax-rank1", "bayes-heads")],
    (["construct", "bayes-heads", "--param", "n_fit=100000000000"], "--param n_fit"),
    (["construct", "hardmax-rank1", "--heads", "1000000", "--rank", "1"], "--heads"),
    # train
    *[(_train(d=v), "--d") for v in ("1", "x", "1.5", "１６", "٣", "1000000", LONG)],
    *[(_train(N=v), "--N") for v in ("0", "-2")],
    *[(_train(rank=v), "--rank") for v in ("0", "9")],
    *[(_train(heads=v), "--heads") for v in ("0", "1000000000")],
    *[(_train(seeds=v), "--seeds") for v in ("0", "10000000")],
    (_train(steps="0"), "--steps"),
    (_train(steps="１０"), "--steps"),
    (_train(layers="0"), "--layers"),
    (_train(lr="0"), "--lr"),
    (_train(batch="0"), "--batch"),
    (_train(eval_samples="10"), "--eval-samples"),
    (_train(seed="-1"), "--seed"),
    (_train(task="nope"), "--task"),
    (_train(arch="nope"), "--arch"),
    (_train(points="nope"), "--points"),
    (_train(score="mlp"), "--score"),
    (_train(arch="generalized", layers="2"), "--arch"),
    (_train(points="orthonormal", N="9"), "--N"),
    (_train(r="1"), "--rank"),
    (_train(distribution="iid", points="iid"), "--points"),
    *[(_train(checkpoint=v), "--checkpoint") for v in ("/proc/x.pt", "{F}/dir",
                                                       "/nonexistent/x.pt")],
    (_train(device="nope"), "--device"),
    (TRAIN[:-2], "--steps"),
    (_train(nope="1"), "--nope"),
    # sweep
    (["sweep"], "PRESET"),
    (["sweep", "nope"], "PRESET"),
    (["sweep", "nosuchmodule_xyz:attr"], "PRESET"),
    (["sweep", "tiny", "--scale", "nope"], "--scale"),
    (["sweep", "tiny", "--backend", "nope"], "--backend"),
    *[(["sweep", "tiny", "--db", v], "--db") for v in ("/proc/x.sqlite", "{F}/dir",
                                                      "{F}/foreign.sqlite", "{F}/text.txt",
                                                      "/nonexistent/x.sqlite")],
    (["sweep", "tiny", "--db", "/proc/x.sqlite", "--dry-run"], "--db"),
    *[(["sweep", "tiny", "--export", v], "--export") for v in ("/proc/x.csv", "{W}/x.txt",
                                                              "{F}/dir", "/nonexistent/x.csv")],
    (["sweep", "tiny", "--db", "{W}/s.sqlite", "--export", "/proc/x.csv"], "--export"),
    *[(["sweep", "tiny", "--threads", v], "--threads") for v in ("0", "x", "-1")],
    (["sweep", "tiny", "--cpus-per-task", "0"], "--cpus-per-task"),
    (["sweep", "tiny", "--gpus-per-task", "-1"], "--gpus-per-task"),
    (["sweep", "tiny", "--seed", "-1"], "--seed"),
    (["sweep", "tiny", "--address", "h:1"], "--address"),
    (["sweep", "tiny", "--device", "nope"], "--device"),
    (["sweep", "nope", "--db", "{W}/s.sqlite", "--dry-run"], "PRESET"),
    (["sweep", "tiny", "--scale", "full", "--threads", "0"], "--threads"),
    # --target and --target-param on the six commands that take them
    *[(cmd + ["--target", v], "--target") for v in ("nope", "numpy:cos", "numpy:nope", "math:pi")
      for cmd in (_lower(), ["bounds", "heads-needed", "--d", "8", "--rank", "1", "--eps", "0.1"],
                  _sandwich(), TRAIN, ["falsify", "--budget", "1"],
                  ["construct", "random-features", "--d", "6", "--heads", "4"])],
    *[(_lower("--target", "soft-nearest", "--target-param", v), "--target-param")
      for v in ("beta", "beta=hot", "temp=1", "beta=-1", "=4")],
    (_lower("--target", "theorem3-biased"), "--target"),
    (_lower("--target", "numpy:cbrt", "--points", "iid"), "--points"),
    (_lower("--target", "soft-nearest", "--bound", "fiber"), "--target"),
    (_lower("--target", "soft-nearest", "--N", "3"), "--N"),
    (_sandwich("--target", "soft-nearest", "--bound", "fiber"), "--bound"),
    (["falsify", "--target", "soft-nearest", "--N", "3"], "--N"),
    (["falsify", "--target", "farthest"], "--target"),
    (["train", "--d", "8", "--N", "3", "--rank", "1", "--heads", "2", "--steps", "1",
      "--target", "numpy:tanh"], "--N"),
    # witness
    (["witness", "nope"], "COMMAND"),
    (["witness", "verify"], "FILE|POINT"),
    *[(["witness", "verify", v], "FILE|POINT") for v in ("3,1", "{W}/missing.npz", "{F}/dir")],
    *[(["witness", "verify", v], "POINT") for v in ("300,1,1", "3,4,1", "3,0,1", "3,1,0")],
    (["witness", "verify", "3,1,4", "--eval-samples", "10"], "--eval-samples"),
    (["witness", "verify", "3,1,4", "--seed", "-1"], "--seed"),
    *[(["witness", v, *(["3,1,4"] if v == "verify" else []), "--db", "{F}/foreign.sqlite"],
       "--db") for v in ("list", "verify")],
    (["witness", "add"], "FILE"),
    (["witness", "add", "{W}/missing.pt"], "FILE"),
    (["witness", "add", "{F}/text.txt", "--arch", "nope"], "--arch"),
    (["witness", "add", "{F}/text.txt", "--d", "1"], "--d"),
    (["witness", "add", "{F}/text.txt", "--d", "4", "--rank", "5"], "--rank"),
    (["witness", "add", "{F}/text.txt", "--heads", "0"], "--heads"),
    (["witness", "add", "{F}/text.txt", "--claim", "-1"], "--claim"),
    (["witness", "add", "{F}/text.txt", "--eval-samples", "5"], "--eval-samples"),
    *[(["witness", "add", "{F}/text.txt", "--db", v], "--db")
      for v in ("/proc/x.sqlite", "{F}/dir", "{F}/foreign.sqlite")],
]
# issue 47: damaged stores, empty and over-long paths, repeated flags, one --d range
CASES += [
    *[(argv, "--db") for store in ("{F}/badutf8.sqlite", "{F}/quickcheck.sqlite")
      for argv in (["report", "--db", store, "--out", "{W}/r"],
                   ["graph", "--db", store, "--format", "json"],
                   ["graph", "--db", store, "--format", "json", "--json"],
                   ["check", "--only", "setting.sphere_law", "--db", store],
                   ["sweep", "tiny", "--db", store, "--dry-run"],
                   ["witness", "list", "--db", store])],
    (["report", "--db", "{F}/store.sqlite", "--out", ""], "--out"),
    (["report", "--db", "{F}/store.sqlite", "--out", "", "--json"], "--out"),
    (["report", "--db", "{F}/store.sqlite", "--out", "{W}/" + "r" * 300], "--out"),
    (["graph", "--format", "png", "--out", ""], "--out"),
    (["graph", "--format", "png", "--out", "{W}/" + "g" * 300 + ".png"], "--out"),
    (["check", "--db", "", "--only", "fact1"], "--db"),
    (["check", "--db", "{W}/" + "s" * 300 + ".sqlite", "--only", "fact1"], "--db"),
    (["sweep", "tiny", "--db", "", "--dry-run"], "--db"),
    (["sweep", "tiny", "--export", ""], "--export"),
    (["witness", "list", "--db", ""], "--db"),
    (_train(checkpoint=""), "--checkpoint"),
    (_sandwich("--db", ""), "--db"),
    (["bounds", "lower", "--d", "1000000", "--rank", "1", "--heads", "8", "--N", "4"], "--d"),
    (["bounds", "lower", "--d", "3000", "--rank", "1", "--heads", "8", "--N", "4",
      "--bound", "n-keys"], "--d"),
    (["bounds", "heads-needed", "--d", "1000000", "--rank", "1", "--eps", "0.1", "--N", "4"],
     "--d"),
    (["falsify", "--d", "4:3000"], "--d"),
    (_lower("--bound", "constant:nan"), "--bound"),
    (_lower("--bound", "constant:0.5"), "--bound"),
    (_sandwich("--bound", "constant:0.5"), "--bound"),
    (["witness", "verify", "6,1"], "FILE|POINT"),
    (["witness", "verify", "6,1,x"], "FILE|POINT"),
    (["bounds", "lower", "--d", "16", "--d", "8", "--rank", "1", "--heads", "2"], "--d"),
    (["bounds", "lower", "--d", "16", "--rank", "1", "--heads", "2", "--heads=3"], "--heads"),
    (["bounds", "lower", "--d", "16", "--rank", "1", "--heads", "2", "--N", "3", "--N", "4",
      "--json"], "--N"),
    (["bounds", "heads-needed", "--d", "8", "--rank", "1", "--eps", "0.1", "--eps", "0.2"],
     "--eps"),
    (_sandwich("--scale", "quick", "--scale", "full"), "--scale"),
    (_train(steps="1", seeds="1") + ["--seeds", "2"], "--seeds"),
    (["falsify", "--budget", "1", "--budget", "2"], "--budget"),
    (["harmonics", "dim", "--d", "5", "--d", "6", "--degree", "1"], "--d"),
    (["harmonics", "sign", "--d", "5", "--max-degree", "3", "--max-degree", "5"],
     "--max-degree"),
    (["kernel", "head-vs-target", "--d", "4", "--theta", "1", "--theta", "2"], "--theta"),
    (["check", "--seed", "1", "--seed", "2", "--only", "fact1"], "--seed"),
    (["check", "--scale", "quick", "--scale", "full", "--json"], "--scale"),
    (["construct", "full-rank", "--d", "4", "--d", "5"], "--d"),
    (["sweep", "tiny", "--scale", "quick", "--scale", "full", "--dry-run"], "--scale"),
    (["report", "--out", "{W}/a", "--out", "{W}/b"], "--out"),
    (["graph", "--format", "json", "--format", "dot"], "--format"),
    (["witness", "verify", "3,1,4", "--seed", "1", "--seed", "2"], "--seed"),
    (_lower("--target", "soft-nearest", "--target", "farthest"), "--target"),
]
if not nvidia_driver_present():  # a machine with a GPU accepts these
    CASES += [(["check", "--device", "cuda"], "--device"), (_train(device="cuda"), "--device"),
              (["sweep", "tiny", "--device", "cuda", "--dry-run"], "--device")]
if importlib.util.find_spec("ray") is None:
    CASES += [(["sweep", "tiny", "--backend", "ray"], "--backend")]

_RUNNER = r"""
import contextlib, io, json, os, sys
from pathlib import Path
from workbench.cli import main

fixtures, work, cases = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.stdin.read())
def listing(root):
    return sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in root.rglob("*"))
before = listing(fixtures)
for i, args in cases:
    w = work / f"case{i}"
    w.mkdir()
    os.chdir(w)
    args = [a.replace("{F}", str(fixtures)).replace("{W}", str(w)) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(args)
        except BaseException as e:  # the contract says main never raises
            rc = f"raised {type(e).__name__}: {e}"
    torch = "torch" in sys.modules
    print(json.dumps({"i": i, "rc": rc, "out": out.getvalue(), "err": err.getvalue(),
                      "torch": torch, "written": [p[0] for p in listing(w)],
                      "fixtures_changed": listing(fixtures) != before}), flush=True)
    if torch:
        break
"""


def _make_fixtures(root: Path) -> None:
    from workbench.verifiers.store import Store

    (root / "dir").mkdir()
    (root / "data").mkdir()  # $XDG_DATA_HOME: no default store
    (root / "home").mkdir()
    (root / "text.txt").write_text("not a database\n")
    damaged_stores(root)
    con = sqlite3.connect(root / "foreign.sqlite")
    con.execute("CREATE TABLE other (x INTEGER)")
    con.commit()
    con.close()
    with Store(root / "store.sqlite"):
        pass


def damaged_stores(root: Path) -> None:
    """Two stores whose SQLite structure readers would not notice: ``badutf8.sqlite``, a
    recorded check whose ``claim_results.payload`` holds bytes that are not UTF-8, and
    ``quickcheck.sqlite``, a page of an unread table whose cell count overruns it (fails
    ``PRAGMA quick_check``; the tables read by report and check are whole)."""
    from workbench.verifiers.store import Store

    for name in ("badutf8.sqlite", "quickcheck.sqlite"):
        with Store(root / name) as st:
            st.record_check(0.0, {"scale": "quick", "seed": 0, "device": "cpu"}, {"holds": 1},
                            [{"id": "fact1", "verdict": "holds", "seconds": 0.1,
                              "kind": "fact", "depends_on": [], "evidence": []}])
    con = sqlite3.connect(root / "badutf8.sqlite")
    con.execute("UPDATE claim_results SET payload = CAST(x'7b22ff22fe7d' AS TEXT)")
    con.commit()
    con.close()
    path = root / "quickcheck.sqlite"
    con = sqlite3.connect(path)
    page = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'sandwich_points'"
                       ).fetchone()[0]
    size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    data = bytearray(path.read_bytes())
    at = (page - 1) * size
    data[at + 3:at + 5] = (40).to_bytes(2, "big")  # 40 cells on an empty leaf page
    path.write_bytes(bytes(data))


def _run_all(tmp: Path, cases: list[tuple[int, list[str]]]) -> dict[int, dict[str, Any]]:
    """Each case's result, from as few fresh child processes as the cases allow."""
    fixtures, work = tmp / "fixtures", tmp / "work"
    fixtures.mkdir()
    work.mkdir()
    _make_fixtures(fixtures)
    return run_cases(_RUNNER, fixtures, work, cases)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Any]]:
    return _run_all(tmp_path_factory.mktemp("bad"), list(enumerate(a for a, _ in CASES)))


def test_the_suite_covers_every_command_with_at_least_150_inputs() -> None:
    assert len(CASES) >= 150
    from workbench.commands.registry import CONTRACT

    assert {name for name, _ in CONTRACT} <= {a[0] for a, _ in CASES}


@pytest.mark.parametrize("i", range(len(CASES)),
                         ids=[" ".join(a)[:70] for a, _ in CASES])
def test_bad_input_gets_one_line_naming_the_flag(i: int, results: dict[int, Any]) -> None:
    args, flag = CASES[i]
    found = problems(results[i], flag, "--json" in args)
    group = plugin_group_named(args, flag)
    if group is not None and has_entry_points(group):  # an installed plug-in could declare
        found = [p for p in found if p != "imported torch"]  # the name: it must be imported
    assert found == [], (args, results[i]["err"])


def plugin_group_named(args: list[str], flag: str) -> str | None:
    """The entry-point group whose installed packages could declare the name a case gets wrong
    (a claim for ``check --only``, a construction for ``construct NAME`` or ``--witness``, a
    bound for ``--bound``, a preset for ``sweep PRESET``; a new kind adds its flag here): to
    refuse the name, the workbench must import those packages, and they may import torch."""
    if flag == "--only" and args[:1] == ["check"]:
        return "workbench.claims"
    if flag == "--witness" or (flag == "NAME" and args[:1] == ["construct"]):
        return "workbench.constructions"
    if flag == "--bound":
        return "workbench.bounds"
    if flag == "PRESET" and args[:1] == ["sweep"]:
        return "workbench.presets"
    return None


def _in_process(capsys: pytest.CaptureFixture[str], args: list[str]) -> dict[str, Any]:
    from workbench.cli import main

    capsys.readouterr()
    rc = main(args)
    cap = capsys.readouterr()
    return {"rc": rc, "out": cap.out, "err": cap.err}


def test_the_checks_fail_without_the_argument_screen(capsys: pytest.CaptureFixture[str]) -> None:
    """A number flag that is not an integer (``float('１')`` reads it) is refused by the screen
    alone; an integer flag by its declared range too."""
    args = ["kernel", "head-vs-target", "--d", "4", "--theta", "１"]
    assert problems(_in_process(capsys, args), "--theta") == []
    with plant("workbench.commands._arguments:screen", replaced(list)):
        assert problems(_in_process(capsys, args), "--theta") != []
        ints = ["harmonics", "dim", "--d", "１６", "--degree", "1"]
        assert problems(_in_process(capsys, ints), "--d") == []


def test_the_writability_probe_answers_first_and_the_writer_still_refuses(
        capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["graph", "--format", "dot", "--out", "/proc/claims.dot"]
    first = _in_process(capsys, args)
    assert problems(first, "--out") == [] and "existing, writable folder" in first["err"]
    # without the probe the graph is computed, then the one writer (core.safe_files) refuses
    with plant("workbench.commands._paths:_can_create_in", replaced(lambda folder: True)):
        later = _in_process(capsys, args)
    assert problems(later, "--out") == [] and "the workbench can write" in later["err"]
    with plant("workbench.commands._paths:_can_create_in", replaced(lambda folder: True)), \
            plant("workbench.core.safe_files:write_file", replaced(_opens_directly)):
        assert problems(_in_process(capsys, args), "--out") != []


def _opens_directly(path: str, write: Any, name: str = "path") -> Path:
    """A writer without the safe one's care: the destination opened as it is."""
    with open(path, "wb") as fh:
        write(fh)
    return Path(path)


def test_an_old_spelling_is_not_reported_as_the_flag_it_stands_for(
        capsys: pytest.CaptureFixture[str], results: dict[int, Any]) -> None:
    """``--distribution`` (rewritten to ``--points``) to a command with neither: the line says
    the command has neither, and names what the user typed."""
    args = ["harmonics", "sign", "--d", "5", "--max-degree", "3", "--distribution", "iid"]
    line = results[CASES.index((args, "--distribution"))]["err"]
    assert "neither --points nor its old spelling --distribution is an option of `workbench " \
        "harmonics sign`" in line
    with plant("workbench.commands._arguments:rephrase", edited("if olds:", "if False:")):
        assert problems(_in_process(capsys, args), "--distribution") != []


def test_a_long_value_is_echoed_cut(results: dict[int, Any]) -> None:
    i = next(i for i, (a, _) in enumerate(CASES) if a[-2:] == ["--bound", "x" * 300])
    line = results[i]["err"]
    assert "x" * 60 not in line and "…" in line and "300 characters" in line


@pytest.mark.parametrize("args,flag", [
    (["check", "--scale", "nope"], "--scale"),
    (["train", "--d", "１６", "--N", "2", "--rank", "1", "--heads", "1", "--steps", "1"], "--d"),
    (["sweep", "tiny", "--db", "/proc/x.sqlite", "--dry-run"], "--db"),
    (["bounds", "lower", "--d", "8", "--rank", "1", "--r", "2", "--heads", "2"], "--rank"),
    (["construct", "random-features", "--heads", "1000000000"], "--heads"),
])
def test_the_console_script_answers_bad_input(args: list[str], flag: str,
                                              tmp_path: Path) -> None:
    probe = ("import sys; from workbench.cli import main; rc = main(sys.argv[1:]); "
             "sys.stdout.write('torch' if 'torch' in sys.modules else ''); sys.exit(rc)")
    proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300)
    script = subprocess.run([sys.executable, "-m", "workbench.cli", *args], capture_output=True,
                            text=True, cwd=tmp_path, timeout=300)
    for p in (proc, script):
        r = {"rc": p.returncode, "out": p.stdout, "err": p.stderr,
             "written": [str(x) for x in tmp_path.iterdir()]}
        assert problems(r, flag) == [], (args, p.stderr)


@pytest.mark.parametrize("name", ["full-rank", "random-features", "majority-vote", "biased"])
def test_param_on_a_construction_with_flags_of_its_own_names_them(
        name: str, capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.commands.construct import SPECIALISED
    from workbench.plugins import builtin as builtin_plugins

    r = _in_process(capsys, ["construct", name, "--param", "foo=bar"])
    declared = getattr(builtin_plugins, SPECIALISED[name][0].upper()).params
    assert problems(r, "--param") == [] and "target-param" not in r["err"]
    assert all(f"--{k.replace('_', '-')}" in r["err"] for k in declared), r["err"]
