#!/usr/bin/env python3
"""extract-flags.py -- how the flag lists in tests/data/flags/ were read from the programs'
sources (a git checkout of each, at the commit named in the list's header).  Only the names are
kept: the lists are facts about those programs, used by tests/cli_exports.sh to check that
every flag paraplan's exports write exists at the stated version.

usage: extract-flags.py KIND CHECKOUT COMMIT
  KIND: megatron, megatron-deepspeed, deepspeed-launcher, deepspeed-config, slurm-sbatch,
        slurm-srun, torchtitan, megatron-bridge, argparse FILE
"""
import ast
import re
import subprocess
import sys


def show(repo, commit, path):
    return subprocess.run(["git", "-C", repo, "show", "%s:%s" % (commit, path)], check=True,
                          capture_output=True, text=True).stdout


def argparse_flags(text):
    """Every '--name' string literal passed to add_argument (the first and alias names)."""
    out = set()
    for call in re.finditer(r"add_argument\(\s*((?:['\"][^'\"]+['\"]\s*,\s*)+)", text):
        for name in re.findall(r"['\"](-{1,2}[A-Za-z0-9_][A-Za-z0-9_-]*)['\"]", call.group(1)):
            out.add(name)
    return sorted(out)


def slurm_options(text, command):
    """Options of slurm_opt.c's table that `command` (sbatch, srun) accepts: those with a common
    set_func or one of its own."""
    out = set()
    for block in re.finditer(r"static slurm_cli_opt_t slurm_opt_\w+ = \{(.*?)\};", text, re.S):
        b = block.group(1)
        m = re.search(r'\.name = "([^"]+)"', b)
        if not m:
            continue
        if re.search(r"\.set_func\s*=", b) or re.search(r"\.set_func_%s\s*=" % command, b):
            out.add("--" + m.group(1))
    return sorted(out)


def dataclass_fields(source, cls):
    """Annotated fields of a class body (dataclass style), not inherited ones."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return [n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)], \
                   [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
    return None, None


def main():
    kind, repo, commit = sys.argv[1], sys.argv[2], sys.argv[3]
    if kind == "argparse":
        print("\n".join(argparse_flags(show(repo, commit, sys.argv[4]))))
    elif kind == "megatron":
        print("\n".join(argparse_flags(show(repo, commit, "megatron/training/arguments.py"))))
    elif kind == "megatron-deepspeed":
        print("\n".join(argparse_flags(show(repo, commit, "megatron/arguments.py"))))
    elif kind == "deepspeed-launcher":
        print("\n".join(argparse_flags(show(repo, commit, "deepspeed/launcher/runner.py"))))
    elif kind in ("slurm-sbatch", "slurm-srun"):
        print("\n".join(slurm_options(show(repo, commit, "src/common/slurm_opt.c"), kind.split("-")[1])))
    elif kind == "deepspeed-config":
        # JSON keys: the string constants of runtime/constants.py (top-level keys and the keys
        # of the fp16/bf16 objects, as DeepSpeed names them there), zero_optimization.* (the
        # DeepSpeedZeroConfig fields and their aliases), activation_checkpointing.* and
        # pipeline.* (the defaults get_pipeline_config merges into)
        out = set()
        for m in re.finditer(r"^[A-Z0-9_]+ = ['\"]([a-z0-9_]+)['\"]\s*(?:#.*)?$",
                             show(repo, commit, "deepspeed/runtime/constants.py"), re.M):
            out.add(m.group(1))
        out.add("zero_optimization")
        zsrc = show(repo, commit, "deepspeed/runtime/zero/config.py")
        for m in re.finditer(r"^    ([a-z0-9_]+): [^=\n]+(?:=\s*(.*))?$", zsrc, re.M):
            out.add("zero_optimization." + m.group(1))
            a = re.search(r"alias=['\"]([a-z0-9_]+)['\"]", m.group(2) or "")
            if a:
                out.add("zero_optimization." + a.group(1))
        for m in re.finditer(r"^ACT_CHKPT_[A-Z_]+ = ['\"]([a-z_]+)['\"]\s*$",
                             show(repo, commit, "deepspeed/runtime/activation_checkpointing/config.py"), re.M):
            out.add("activation_checkpointing." + m.group(1))
        out.add("activation_checkpointing")
        cfg = show(repo, commit, "deepspeed/runtime/config.py")
        pipe = re.search(r"default_pipeline = \{(.*?)\}", cfg, re.S).group(1)
        for k in re.findall(r"['\"]([a-z_]+)['\"]\s*:", pipe):
            out.add("pipeline." + k)
        out.add("pipeline")
        print("\n".join(sorted(out)))
    elif kind == "torchtitan":
        # TOML keys: [section] of each JobConfig field, and the fields of its dataclass
        src = show(repo, commit, "torchtitan/config/job_config.py")
        tree = ast.parse(src)
        classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        out = []
        def walk(cls, prefix):
            for g in classes[cls].body:
                if not (isinstance(g, ast.AnnAssign) and isinstance(g.target, ast.Name)):
                    continue
                sub = g.annotation.id if isinstance(g.annotation, ast.Name) else None
                if sub in classes:  # a nested table, [quantize.linear.float8]
                    walk(sub, prefix + g.target.id + ".")
                else:
                    out.append(prefix + g.target.id)
        walk("JobConfig", "")
        print("\n".join(sorted(out)))
    elif kind == "megatron-bridge":
        # Fields of the config classes an export builds, each with its inherited ones:
        # CLASS:FILE pairs after the commit; a base of another repository is given as
        # +CLASS:REPO:COMMIT:FILE.
        # (a base imported under another name is ALIAS=CLASS)
        bases = {}
        for spec in sys.argv[4:]:
            if spec.startswith("+"):
                cls, r2, c2, path = spec[1:].split(":", 3)
            else:
                (cls, path), r2, c2 = spec.split(":", 1), repo, commit
            alias, _, real = cls.partition("=")
            bases[alias] = (r2, c2, path, real or alias)
        def fields(cls, seen):
            if cls in seen or cls not in bases:
                return set()
            seen.add(cls)
            r2, c2, path, real = bases[cls]
            own, parents = dataclass_fields(show(r2, c2, path), real)
            if own is None:
                sys.exit("no class %s in %s" % (cls, path))
            out = set(own)
            for b in parents:
                out |= fields(b, seen)
            return out
        for spec in sys.argv[4:]:
            if spec.startswith("+"):
                continue
            cls = spec.split(":", 1)[0]
            for f in sorted(fields(cls, set())):
                print("%s.%s" % (cls, f))
    else:
        sys.exit("unknown kind " + kind)


if __name__ == "__main__":
    main()
