#!/usr/bin/env python3
# Runs beside FRR (in the FRR sidecar of the speaker's DaemonSet, sharing a directory with the speaker): applies
# the configuration the speaker writes, with FRR's own frr-reload.py (which changes only what differs from the
# running configuration, so unrelated sessions are never reset), and writes what FRR reports about its sessions
# for the speaker to read. The speaker never talks to FRR's daemons itself, so its image needs no FRR tools.
#
#   <dir>/frr.conf     written by the speaker (atomically); its first line names its generation
#   <dir>/status.json  written here (atomically): the generation applied, the last reload's outcome, and
#                      `show bgp neighbors json` / `show bfd peers json`
#
# frr-reload.py takes seconds even for a small change (it reads and parses the whole running configuration).
# When the only differences from the configuration applied last are `network` statements and prefix-list
# entries (Services coming and going), they are sent to FRR directly with vtysh instead, in milliseconds; any
# other change, and any refusal, goes through frr-reload.py, which also sets right whatever drifted.
#
# Settings from the environment: PORTICO_FRR_DIR (default /etc/portico-frr), FRR_VTY_SOCKET (the daemons' vty
# socket directory, default /var/run/frr), FRR_RELOAD (default /usr/lib/frr/frr-reload.py), VTYSH (default
# vtysh), PORTICO_FRR_POLL_MS (how often the configuration is looked at, default 100), PORTICO_FRR_STATUS_MS
# (how often the sessions are read, default 1000).
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

DIR = os.environ.get("PORTICO_FRR_DIR", "/etc/portico-frr")
VTY = os.environ.get("FRR_VTY_SOCKET", "/var/run/frr")
RELOAD = os.environ.get("FRR_RELOAD", "/usr/lib/frr/frr-reload.py")
VTYSH = os.environ.get("VTYSH", "vtysh")
POLL = int(os.environ.get("PORTICO_FRR_POLL_MS", "100")) / 1000
STATUS_EVERY = int(os.environ.get("PORTICO_FRR_STATUS_MS", "1000")) / 1000
# A reload that failed (FRR still starting, say) is tried again this often until it succeeds.
RETRY_AFTER = 2.0
# After direct changes, the whole configuration is applied again this often with frr-reload.py, which puts
# back anything FRR lost (a restarted daemon starts empty) and is a no-op otherwise.
FULL_RELOAD_EVERY = 300.0
MARK = "! portico generation "


def vtysh(command):
    done = subprocess.run(
        [VTYSH, "--vty_socket", VTY, "-c", command], capture_output=True, text=True, timeout=20
    )
    if done.returncode != 0:
        raise RuntimeError((done.stderr or done.stdout).strip() or f"vtysh exited {done.returncode}")
    return json.loads(done.stdout or "null")


def write_json(path, value):
    tmp = f"{path}.tmp"
    with open(tmp, "w") as out:
        json.dump(value, out)
    os.replace(tmp, path)


def generation_of(text):
    for line in text.splitlines():
        if line.startswith(MARK):
            return int(line[len(MARK):].strip() or "0")
    return None


def reload(text):
    # frr-reload.py saves the running configuration into its confdir when done (vtysh's "write"): give it a
    # directory of its own, so it never overwrites the speaker's file.
    scratch = os.path.join(DIR, "reload")
    os.makedirs(scratch, exist_ok=True)
    staged = os.path.join(scratch, "applying.conf")
    with open(staged, "w") as out:
        out.write(text)
    # frr-reload.py runs <bindir>/vtysh.
    vtysh_dir = os.path.dirname(os.path.realpath(shutil.which(VTYSH) or "/usr/bin/vtysh"))
    done = subprocess.run(
        [sys.executable, RELOAD, "--reload", "--stdout", "--vty_socket", VTY, "--bindir", vtysh_dir,
         "--confdir", scratch, "--rundir", scratch, staged],
        capture_output=True, text=True, timeout=120,
    )
    output = (done.stdout + done.stderr)[-4000:]
    return done.returncode == 0, output


def statements(text):
    """The configuration's statements, each with the blocks it sits in: ("router bgp 1", " address-family
    ipv4 unicast") for a network line. Comments, "!" and block ends carry nothing of their own."""
    result = []
    stack = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("!"):
            continue
        depth = len(line) - len(line.lstrip(" "))
        stack = [b for b in stack if len(b) - len(b.lstrip(" ")) < depth]
        if line.strip() in ("exit", "exit-address-family"):
            continue
        result.append((tuple(stack), line))
        if line.startswith(("router ", "route-map ", "bfd")) or line.strip().startswith(("address-family", "profile ")):
            stack = stack + [line]
    return result


def fast_changes(before, after):
    """The commands that turn `before` into `after` when only `network` statements and prefix-list entries
    differ (what Services coming and going change); None for anything else, which frr-reload.py applies."""
    old, new = statements(before), statements(after)
    old_set, new_set = set(old), set(new)
    removed = [s for s in old if s not in new_set]
    added = [s for s in new if s not in old_set]
    def simple(statement):
        context, line = statement
        if not context:
            return line.startswith(("ip prefix-list ", "ipv6 prefix-list "))
        return (len(context) == 2 and context[0].startswith("router bgp ")
                and context[1].strip().startswith("address-family") and line.strip().startswith("network "))
    if not all(simple(s) for s in removed + added):
        return None
    commands = []
    for context, line in removed:
        commands.append((context, "no " + line.strip()))
    for context, line in added:
        commands.append((context, line.strip()))
    lines = []
    for context, command in commands:
        lines += [c.strip() for c in context] + [command] + (["exit-address-family", "exit"] if context else [])
    return "\n".join(lines) + "\n" if lines else ""


def apply_fast(commands):
    """Runs the commands through vtysh (tens of milliseconds, against seconds for frr-reload.py)."""
    scratch = os.path.join(DIR, "reload")
    os.makedirs(scratch, exist_ok=True)
    staged = os.path.join(scratch, "changes.conf")
    with open(staged, "w") as out:
        out.write(commands)
    done = subprocess.run([VTYSH, "--vty_socket", VTY, "-f", staged], capture_output=True, text=True, timeout=60)
    output = (done.stdout + done.stderr)[-4000:]
    # vtysh says "% ..." for a command it refused; then the full reload sets things right.
    return done.returncode == 0 and "%" not in output, output


def main():
    os.makedirs(DIR, exist_ok=True)
    applied_digest = None
    applied_text = None
    full_at = 0.0
    last = {"generation": None, "ok": None, "output": "", "at": None}
    failed_at = 0.0
    status_at = 0.0
    while True:
        now = time.time()
        path = os.path.join(DIR, "frr.conf")
        changed = False
        try:
            with open(path) as f:
                text = f.read()
        except FileNotFoundError:
            text = None
        if text is not None and applied_text is not None and now - full_at >= FULL_RELOAD_EVERY:
            applied_digest, applied_text = None, None
        if text is not None:
            digest = hashlib.sha256(text.encode()).hexdigest()
            if digest != applied_digest and (last["ok"] is not False or now - failed_at >= RETRY_AFTER
                                             or generation_of(text) != last["generation"]):
                began = time.time()
                changes = fast_changes(applied_text, text) if applied_text is not None else None
                ok, output = apply_fast(changes) if changes is not None else (False, "")
                if not ok:
                    ok, output = reload(text)
                    full_at = time.time()
                last = {"generation": generation_of(text), "ok": ok, "output": output, "at": time.time(),
                        "seconds": round(time.time() - began, 3)}
                if ok:
                    applied_digest = digest
                    applied_text = text
                    print(f"portico-frr-agent: generation {last['generation']} applied in {last['seconds']} s",
                          flush=True)
                else:
                    failed_at = now
                    print(f"portico-frr-agent: reload of generation {last['generation']} failed:\n{output}",
                          file=sys.stderr, flush=True)
                changed = True
        if changed or now - status_at >= STATUS_EVERY:
            status_at = now
            status = {"time": time.time(), "reload": last}
            try:
                status["neighbors"] = vtysh("show bgp neighbors json")
                status["bfd"] = vtysh("show bfd peers json")
                # A daemon that restarted starts from its empty startup configuration: FRR knows no neighbour
                # the applied configuration has, so the whole configuration is applied again.
                if applied_text and " remote-as " in applied_text and not status["neighbors"]:
                    applied_digest, applied_text = None, None
            except Exception as err:  # FRR not up yet, or restarting: said, and read again next time
                status["error"] = str(err)
                # Whatever FRR comes back with, the whole configuration is applied again.
                applied_digest, applied_text = None, None
            write_json(os.path.join(DIR, "status.json"), status)
        time.sleep(POLL)


if __name__ == "__main__":
    main()
