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


def main():
    os.makedirs(DIR, exist_ok=True)
    applied_digest = None
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
        if text is not None:
            digest = hashlib.sha256(text.encode()).hexdigest()
            if digest != applied_digest and (last["ok"] is not False or now - failed_at >= RETRY_AFTER
                                             or generation_of(text) != last["generation"]):
                ok, output = reload(text)
                last = {"generation": generation_of(text), "ok": ok, "output": output, "at": time.time()}
                if ok:
                    applied_digest = digest
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
            except Exception as err:  # FRR not up yet, or restarting: said, and read again next time
                status["error"] = str(err)
            write_json(os.path.join(DIR, "status.json"), status)
        time.sleep(POLL)


if __name__ == "__main__":
    main()
