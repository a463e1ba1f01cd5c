"""Write src/lensbench/tools/data/pins.json: the sha256 of every file `lensbench data download` takes
from a pinned release (see lensbench.tools.data.pins).

For each pinned GitHub source of lensbench.tools.data.layouts (an archive's data folder, single
files at a pinned commit) the bytes come from a git copy of the repository (--git OWNER/NAME=GITDIR,
read with `git cat-file` at the pinned commit: git checks every object's hash, so these are the
release's bytes) or, without one, from ../shared/data (SOURCES.md: files copied verbatim at the
same commits). Both are compared where both exist. Hugging Face sources cannot be hashed offline:
they are written under "unknown" with the reason.

    python devtools/data_pins.py --git huhanwj/RGB-Th-Benchmark=/path/repo.git ... [--shared ../shared/data]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from lensbench.tools.data.layouts import all_layouts  # noqa: E402
from lensbench.tools.data.pins import source_key  # noqa: E402

#: repository -> its folder in ../shared/data (SOURCES.md)
SHARED_FOLDER = {"huhanwj/RGB-Th-Benchmark": "RGB-Th-Bench", "casiatao/IF-Bench": "IF-Bench",
                 "multimodal-art-projection/IV-Bench": "IV-Bench", "Amber0614/GOBench": "GOBench"}
OUT = ROOT / "src" / "lensbench" / "tools" / "data" / "pins.json"


def git_files(gitdir: Path, commit: str, prefix: str) -> dict[str, bytes]:
    """{repo path: bytes} of the blobs under ``prefix`` (a file or folder) at ``commit``."""
    names = subprocess.run(["git", "-C", str(gitdir), "ls-tree", "-r", "-z", "--name-only", commit, "--", prefix],
                           check=True, capture_output=True).stdout.decode().split("\0")
    return {n: subprocess.run(["git", "-C", str(gitdir), "cat-file", "blob", f"{commit}:{n}"], check=True,
                              capture_output=True).stdout for n in names if n}


def shared_files(shared: Path, repo: str, prefix: str) -> dict[str, bytes]:
    base = shared / SHARED_FOLDER.get(repo, "-")
    p = base / prefix
    if p.is_file():
        return {prefix: p.read_bytes()}
    return {f.relative_to(base).as_posix(): f.read_bytes() for f in sorted(p.rglob("*")) if f.is_file()} \
        if p.is_dir() else {}


def entry(blobs: dict[str, bytes]) -> dict[str, dict]:
    return {k: {"size": len(v), "sha256": hashlib.sha256(v).hexdigest()} for k, v in sorted(blobs.items())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--git", action="append", default=[], metavar="OWNER/NAME=GITDIR")
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    a = ap.parse_args()
    gits = dict(x.split("=", 1) for x in a.git)
    sources: dict[str, dict] = {}
    unknown: dict[str, str] = {}
    provenance: list[str] = []

    def pin(repo: str, commit: str, prefix: str, complete: bool) -> None:
        from_git = git_files(Path(gits[repo]), commit, prefix) if repo in gits else {}
        from_shared = shared_files(a.shared, repo, prefix)
        for k in sorted(set(from_git) & set(from_shared)):
            if from_git[k] != from_shared[k]:
                raise SystemExit(f"{repo}@{commit}:{k}: git and ../shared/data differ")
        if complete and not from_git:
            raise SystemExit(f"{repo}: a complete listing of {prefix} needs --git {repo}=GITDIR")
        blobs = {**from_shared, **from_git}
        if not blobs:
            raise SystemExit(f"{repo}@{commit}:{prefix}: no copy to hash (--git or --shared)")
        key = source_key("github", repo, commit)
        doc = sources.setdefault(key, {"files": {}})
        doc["files"].update(entry(blobs))
        if complete:
            doc["complete_under"] = prefix.rstrip("/") + "/"
        both = len(set(from_git) & set(from_shared))
        provenance.append(f"{key}:{prefix}: {len(blobs)} files ({both} identical in git and ../shared/data, "
                          f"{len(set(from_git) - set(from_shared))} from git only, "
                          f"{len(set(from_shared) - set(from_git))} from ../shared/data only)")

    for bench, layout in all_layouts().items():
        src = layout.source
        if src.kind == "github":
            pin(src.repo, src.revision, src.subdir, complete=True)
        else:
            why = ("revision 'main' is resolved at download time: no fixed set of files to pin" if not src.pinned else
                   "pinned revision, but Hugging Face could not be reached to hash its files: verified when an entry "
                   "for it is added")
            unknown[source_key("hf", src.repo, src.revision) if src.pinned else f"hf:{src.repo}"] = why
        for gf in src.git_files:
            pin(gf.repo, gf.commit, gf.path, complete=False)
    doc = {"about": "sha256 of every file lensbench data download takes from a pinned release; written by "
                    "devtools/data_pins.py (see lensbench.tools.data.pins)",
           "provenance": provenance, "sources": sources, "unknown": unknown}
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for line in provenance:
        print(line)
    print(f"unknown: {', '.join(unknown)}")
    print(f"wrote {OUT} ({sum(len(s['files']) for s in sources.values())} pinned files)")


if __name__ == "__main__":
    main()
