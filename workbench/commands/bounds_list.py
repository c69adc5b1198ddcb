"""``workbench bounds list``: every registered bound (built-ins and installed packages), where
each applies, and the targets with the bounds that cover them."""

from __future__ import annotations

from typing import Any

import click

from workbench.commands._common import emit, json_option
from workbench.core.profiles import sign_of

LIST_GROUP = "workbench.bounds:"  # the keys of workbench.plugins.LOAD_ERRORS for bounds
LIST_COLUMNS = (("name", "name"), ("side", "side"), ("status", "status"),
                ("rigorous", "rigorous"), ("target", "target"), ("law", "law"),
                ("class", "value_class"), ("N", "N_text"), ("source", "source"))



@click.command(name="list")
@json_option
def list_cmd(as_json: bool) -> None:
    """Every registered bound (built-ins and installed packages) and where it applies."""
    from workbench import plugins

    known = plugins.available("bound")
    rows = [{**b.describe(), "ref": b.ref, "has_enclosure": b.has_enclosure}
            for b in known.values()]
    errors = {k[len(LIST_GROUP):]: why for k, why in sorted(plugins.LOAD_ERRORS.items())
              if k.startswith(LIST_GROUP)}
    targets = [{**t.describe(), "bounds": _covering(t, known)}
               for t in plugins.available("target").values()]
    errors.update({k: why for k, why in sorted(plugins.LOAD_ERRORS.items())
                   if k.startswith("workbench.targets:")})
    emit({"bounds": rows, "targets": targets, "load_errors": errors}, as_json, _human_list)


def _covering(t: Any, bounds: dict[str, Any]) -> str:
    """What each bound says about target ``t``, in words."""
    own = [b.name for b in bounds.values() if b.target == t.name]
    if t.profile is None:
        return ", ".join(own) if own else "none"
    prof = t.profile_at()
    if sign_of(prof) is not None:
        return ("certified, certified-query-values, harmonic, fiber (hardmax energies)"
                + (f"; also {', '.join(own)}" if own and t.name != "nearest" else ""))
    return ("--bound certified / certified-query-values with --target: the harmonic count of "
            "its profile (bounds lower --target prints its labels); no fiber bound")


def _human_list(p: dict[str, Any]) -> str:
    cells = [[h for h, _ in LIST_COLUMNS]]
    cells += [[{True: "yes", False: "no"}.get(row[k], str(row[k])) if isinstance(row[k], bool)
               else str(row[k]) for _, k in LIST_COLUMNS] for row in p["bounds"]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(LIST_COLUMNS))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.append(f"{len(p['bounds'])} bounds; use one with `workbench bounds lower --bound NAME` "
                 "or `workbench falsify --bound NAME` (--json: descriptions and references)")
    lines.append("")
    for t in p["targets"]:
        params = ", ".join(f"{k}={v}" for k, v in t["params"].items())
        lines.append(f"target {t['name']}" + (f" ({params})" if params else "")
                     + f": profile {t['profile']}; N {t['N']}; {t['queries']} queries")
        lines.append(f"  bounds: {t['bounds']}")
    lines.append(f"{len(p['targets'])} targets; choose one with --target NAME|module:function "
                 "and --target-param K=V")
    for name, why in p["load_errors"].items():
        lines.append(f"not loaded: {name}: {why}")
    return "\n".join(lines)

