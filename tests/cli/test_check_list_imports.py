"""``workbench check --list`` loads every claim module but none of the heavy libraries: the claim
modules import torch, sympy, mpmath and scipy inside the checks that need them (issue 46). The
workbench's own claims only (``--builtin``): an installed plug-in's imports are its own."""

from __future__ import annotations

import json
import subprocess
import sys

_PROBE = (
    "import contextlib, io, json, sys; from workbench.cli import main\n"
    "buf = io.StringIO()\n"
    "with contextlib.redirect_stdout(buf): rc = main(['check', '--list', '--json', '--builtin'])\n"
    "listing = json.loads(buf.getvalue())\n"
    "print(json.dumps({'rc': rc, 'ids': [c['id'] for c in listing['claims']],\n"
    "                  'load_errors': listing['load_errors'],\n"
    "                  'heavy': sorted(m for m in ('torch', 'sympy', 'mpmath', 'scipy')\n"
    "                                  if m in sys.modules)}))\n"
)


def test_check_list_imports_neither_torch_nor_sympy() -> None:
    proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["rc"] == 0 and res["load_errors"] == [], res["load_errors"]
    # every claim module was loaded (claims from the torch, sympy and training modules listed)
    for cid in ("setting.sphere_law", "harmonics.dimension", "section7.low_rank_grows_with_n",
                "thm2.odd_reduction", "witnesses.nkeys_one_head", "thm5.majority_vote"):
        assert cid in res["ids"], cid
    assert res["heavy"] == [], f"check --list imported {res['heavy']}"
