#!/usr/bin/env python3
"""export_check.py -- checks a launch configuration paraplan exported against the flag lists of
the programs it drives (tests/data/flags/, each read from the program's source at a stated
version): every flag, key or field it writes exists there, every argument the program requires is
present, and the shell or Python it writes parses.

usage: export_check.py KIND FILE FLAGS_DIR
  KIND: megatron (also torchrun with Megatron), slurm, deepspeed, torchtitan, nemo, vllm, sglang, trtllm
Prints nothing and exits 0 when the file passes; else one line per problem and exits 1.
"""
import ast
import re
import shlex
import subprocess
import sys
import tomllib

problems = []


def flags(path):
    out = set()
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            out.add(line)
    return out


def bad(msg):
    problems.append(msg)


def shell_ok(text):
    r = subprocess.run(["bash", "-n"], input=text, text=True, capture_output=True)
    if r.returncode != 0:
        bad("the script does not parse: " + r.stderr.strip())


def commands(text):
    """Shell commands of a script, continued lines joined, comments, heredoc bodies dropped."""
    out, cur, heredoc = [], "", None
    for line in text.split("\n"):
        if heredoc is not None:
            if line == heredoc:
                heredoc = None
            continue
        m = re.search(r"<<'(\w+)'", line)
        if m:
            heredoc = m.group(1)
        if not cur and line.lstrip().startswith("#"):
            continue
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        cur += line
        if cur.strip():
            out.append(cur.strip())
        cur = ""
    return out


def heredocs(text):
    return dict(re.findall(r"cat > \"[^\"]*?/?([\w.]+)\" <<'EOF'\n(.*?)\nEOF\n", text, re.S))


def opts(tokens):
    return [t.split("=", 1)[0] for t in tokens if t.startswith("-") and not re.fullmatch(r"-?[0-9.e-]+", t)]


def split_launch(cmd, prog_markers):
    """The launcher's tokens before the program, and the program's after it."""
    toks = shlex.split(cmd)
    for i, t in enumerate(toks):
        if any(t.endswith(mk) for mk in prog_markers):
            return toks[:i], toks[i + 1:]
    return toks, []


def check_list(what, names, allowed):
    for n in names:
        if n not in allowed:
            bad("%s: %s is not an option of the stated version" % (what, n))


def check_required(names, required_path):
    present = set(names)
    for line in open(required_path):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if not any(alt in present for alt in line.split("|")):
            bad("a required argument is missing: " + line)


def megatron_payload(cmd, d):
    launch, prog = split_launch(cmd, ("pretrain_gpt.py",))
    names = opts(prog)
    check_list("Megatron-LM", names, flags(d + "/megatron-lm-0.15.txt"))
    check_required(names, d + "/megatron-lm-0.15-required.txt")
    return launch


def deepspeed_payload(cmd, d):
    launch, prog = split_launch(cmd, ("pretrain_gpt.py",))
    names = opts(prog)
    check_list("Megatron-DeepSpeed", names, flags(d + "/megatron-deepspeed.txt") | flags(d + "/deepspeed-0.19.5-script.txt"))
    for need in ("--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--zero-stage", "--deepspeed",
                 "--deepspeed_config", "--num-layers", "--hidden-size", "--num-attention-heads", "--seq-length",
                 "--max-position-embeddings", "--train-iters", "--lr", "--data-path"):
        if need not in names:
            bad("Megatron-DeepSpeed: %s is missing" % need)
    return launch


def deepspeed_json(text, d):
    import json
    allowed = flags(d + "/deepspeed-0.19.5-config.txt")
    doc = json.loads(text)
    for k, v in doc.items():
        if k not in allowed:
            bad("DeepSpeed config: %s is not a key of 0.19.5" % k)
        if isinstance(v, dict):
            for kk in v:
                if "%s.%s" % (k, kk) not in allowed and kk not in allowed:
                    bad("DeepSpeed config: %s.%s is not a key of 0.19.5" % (k, kk))


def torchtitan_toml(text, d):
    allowed = flags(d + "/torchtitan-0.2.1.txt")
    doc = tomllib.loads(text)

    def walk(o, prefix):
        for k, v in o.items():
            if isinstance(v, dict):
                walk(v, prefix + k + ".")
            elif prefix + k not in allowed:
                bad("torchtitan: %s%s is not a key of 0.2.1" % (prefix, k))
    walk(doc, "")
    m = doc.get("model", {})
    if "%s/%s" % (m.get("name"), m.get("flavor")) not in flags(d + "/torchtitan-0.2.1-models.txt"):
        bad("torchtitan: no model %s/%s in 0.2.1" % (m.get("name"), m.get("flavor")))
    return doc


def torchrun_launch(launch, d):
    if not launch or launch[0] != "torchrun":
        bad("the launch is not torchrun: %s" % " ".join(launch[:3]))
        return
    check_list("torchrun", opts(launch[1:]), flags(d + "/torchrun.txt"))


def nemo_script(text, d):
    allowed = flags(d + "/megatron-bridge-0.2.0.txt")
    classes = {a.split(".")[0] for a in allowed}
    tree = ast.parse(text)
    seen = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in classes:
            seen += 1
            for kw in node.keywords:
                if "%s.%s" % (node.func.id, kw.arg) not in allowed:
                    bad("Megatron-Bridge: %s has no field %s in 0.2.0" % (node.func.id, kw.arg))
    if seen < 8:
        bad("Megatron-Bridge: only %d config objects built" % seen)


def main():
    kind, path, d = sys.argv[1], sys.argv[2], sys.argv[3]
    text = open(path).read()
    if kind == "torchtitan":
        torchtitan_toml(text, d)
    elif kind == "nemo":
        nemo_script(text, d)
    else:
        shell_ok(text)
        cmds = commands(text)
        docs = heredocs(text)
        if kind in ("megatron", "torchrun", "slurm"):
            run = [c for c in cmds if "torchrun " in c]
            if len(run) != 1:
                bad("expected one torchrun command, found %d" % len(run))
            for c in run:
                if "plan.toml" in c:
                    launch, _ = split_launch(c, ("torchtitan.train",))
                    torchtitan_toml(docs["plan.toml"], d)
                    launch = launch[:-1]  # -m
                elif "pretrain_plan.py" in c:
                    launch, _ = split_launch(c, ("pretrain_plan.py",))
                    nemo_script(docs["pretrain_plan.py"], d)
                elif "deepspeed" in c and "--deepspeed" in c:
                    launch = deepspeed_payload(c, d)
                    deepspeed_json(docs["ds_config.json"], d)
                else:
                    launch = megatron_payload(c, d)
                if kind == "slurm":
                    toks = shlex.split(c)
                    if toks[0] != "srun":
                        bad("the SLURM script does not start with srun")
                    i = toks.index("torchrun")
                    check_list("srun", opts(toks[1:i]), flags(d + "/slurm-25.11-srun.txt"))
                    launch = toks[i:toks.index(launch[-1]) + 1] if launch[-1] in toks else toks[i:]
                torchrun_launch(launch, d)
            if kind == "slurm":
                sb = re.findall(r"^#SBATCH (\S+)", text, re.M)
                check_list("sbatch", [s.split("=", 1)[0] for s in sb], flags(d + "/slurm-25.11-sbatch.txt"))
        elif kind == "deepspeed":
            run = [c for c in cmds if c.startswith("deepspeed ")]
            if len(run) != 1:
                bad("expected one deepspeed command, found %d" % len(run))
            for c in run:
                launch = deepspeed_payload(c, d)
                check_list("deepspeed launcher", opts(launch[1:]), flags(d + "/deepspeed-0.19.5-launcher.txt"))
            deepspeed_json(docs["ds_config.json"], d)
        elif kind in ("vllm", "sglang", "trtllm"):
            lists = {"vllm": "vllm.txt", "sglang": "sglang.txt", "trtllm": "trtllm.txt"}
            prog = {"vllm": "vllm serve", "sglang": "python3 -m sglang.launch_server", "trtllm": "trtllm-serve"}[kind]
            run = [c for c in cmds if c.startswith(prog)]
            if not run:
                bad("no %s command" % prog)
            for c in run:
                toks = shlex.split(c.rstrip("&"))[len(prog.split()):]
                check_list(kind, opts(toks), flags(d + "/" + lists[kind]))
        else:
            bad("unknown kind " + kind)
    for p in problems:
        print("%s: %s" % (path, p))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
