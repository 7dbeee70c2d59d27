"""A real Slurm for the end-to-end tests: munged, slurmctld and slurmd
(Debian 12's slurm-wlm 22.05 and munge) started as root in a temporary
folder with a private slurm.conf, one node with fake GPUs, torn down at the
end even when a test fails.

    with SlurmCluster(gpus=8, prolog=..., epilog=..., script_env={...}) as slurm:
        job = slurm.sbatch("--wrap", "true")
        slurm.wait_job(job, "COMPLETED")
        slurm.scontrol("update", f"nodename={slurm.node}", "state=drain", "reason=x")

Isolation: slurmctld and slurmd have no listen-address option in 22.05; with
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny they bind the address
the host name resolves to instead of every address, and the fixture checks
that this is loopback (it is where /etc/hosts maps the host name to
127.0.0.1, as Debian's installer and containers do) and fails otherwise.
A network namespace would isolate them further but Slurm's getaddrinfo
(AI_ADDRCONFIG) finds no usable address in one that has only loopback.

A daemon that cannot start fails the test with its log: a missing Slurm is a
missing prerequisite, never a reason to skip.
"""
import os
import re
import shutil
import socket
import stat
import subprocess
import tempfile
import time

SLURMCTLD = shutil.which("slurmctld", path="/usr/sbin:/usr/bin:" + os.environ.get("PATH", ""))
SLURMD = shutil.which("slurmd", path="/usr/sbin:/usr/bin:" + os.environ.get("PATH", ""))
MUNGED = shutil.which("munged", path="/usr/sbin:/usr/bin:" + os.environ.get("PATH", ""))
SCONTROL = shutil.which("scontrol") or "/usr/bin/scontrol"
SBATCH = shutil.which("sbatch") or "/usr/bin/sbatch"
SCANCEL = shutil.which("scancel") or "/usr/bin/scancel"



class SlurmError(AssertionError):
    """A daemon did not start or a Slurm command failed (fails the test)."""


def listening_sockets():
    """{port: set of local addresses} of the TCP sockets listening on this
    host (/proc/net/tcp and tcp6; addresses as hex text)."""
    found = {}
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) < 4 or cols[3] != "0A":  # TCP_LISTEN
                continue
            addr, port = cols[1].split(":")
            found.setdefault(int(port, 16), set()).add(addr)
    return found


LOOPBACK_HEX = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1, ::1


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(path, lines=60):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"({path}: {e})"


def parse_node(line):
    """One line of `scontrol show node -o` / `show job -o`: {key: value}.
    Values hold no spaces except Reason's (free text, with '=' in it too),
    which scontrol writes last: it runs to the end of the line."""
    line = line.strip()
    fields = {}
    reason = None
    m = re.search(r"(?:^| )Reason=", line)
    if m and line.startswith("NodeName="):
        reason = line[m.end():]
        line = line[:m.start()]
    for part in line.split(" "):
        k, sep, v = part.partition("=")
        if sep:
            fields[k] = v
    if reason is not None:
        fields["Reason"] = reason
    return fields


def node_reason(fields):
    """The drain reason without scontrol's ` [user@time]` suffix."""
    return re.sub(r" \[[^\]]*@[^\]]*\]$", "", fields.get("Reason", ""))


class SlurmCluster:
    """One node (`node`, default "gdnode") with `gpus` fake GPUs as gres,
    controller and node daemon on free loopback ports. `prolog`/`epilog`:
    scripts slurmd runs around each job, with `script_env` added to their
    environment. slurmd builds a prolog's environment from scratch (the
    SLURM_* variables, SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES, SLURM_CONF;
    nothing of slurmd's own environment, no PATH: sh's default one), so they
    run through a wrapper that exports it: GPUDOCTOR, LD_LIBRARY_PATH,
    FAKE_NVML_SCENARIO, ... `extra_conf`: more slurm.conf lines.
    `proctrack`: "linuxproc" (no cgroups: works everywhere) or "cgroup"
    (proctrack/cgroup, cgroup.conf's CgroupPlugin=autodetect: each job step
    gets its cgroup, e.g. freezer:/slurm_gdnode/uid_0/job_1/step_batch on
    this cgroup v1 machine; v1 names the tree slurm_<node> when the node
    name is not the host name)."""

    def __init__(self, gpus=8, node="gdnode", prolog=None, epilog=None, script_env=None,
                 extra_conf=(), start_timeout=60, proctrack="linuxproc"):
        self.gpus = gpus
        self.node = node
        self.prolog = prolog
        self.epilog = epilog
        self.script_env = dict(script_env or {})
        self.extra_conf = list(extra_conf)
        self.start_timeout = start_timeout
        if proctrack not in ("linuxproc", "cgroup"):
            raise ValueError(f"proctrack {proctrack!r}: linuxproc or cgroup")
        self.proctrack = proctrack
        self.dir = None
        self.procs = {}  # name -> (Popen, log path)

    # --- lifecycle -------------------------------------------------------
    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        for name, path in (("slurmctld", SLURMCTLD), ("slurmd", SLURMD), ("munged", MUNGED)):
            if not path:
                raise SlurmError(f"{name} not found: install slurm-wlm and munge "
                                 "(scripts/install-deps.sh --test)")
        if os.geteuid() != 0:
            raise SlurmError("the Slurm tests run munged, slurmctld and slurmd as root")
        self.dir = tempfile.mkdtemp(prefix="gd_slurm_")
        os.chmod(self.dir, 0o700)
        for d in ("etc", "munge", "ctld", "spool", "log", "dev"):
            os.makedirs(os.path.join(self.dir, d), mode=0o700)
        self._start_munged()
        self._write_conf()
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self._spawn("slurmctld", [SLURMCTLD, "-D", "-c", "-f", self.conf],
                    os.path.join(self.dir, "log", "slurmctld.log"))
        self._spawn("slurmd", [SLURMD, "-D", "-f", self.conf, "-N", self.node],
                    os.path.join(self.dir, "log", "slurmd.log"))
        self.wait_node(lambda f: f.get("State", "").split("+")[0] == "IDLE",
                       "idle", timeout=self.start_timeout)
        self._check_loopback_only()

    def _check_loopback_only(self):
        """The daemons' ports are bound to loopback only (slurm.conf's
        CommunicationParameters below): a test cluster nobody else reaches."""
        listening = listening_sockets()
        for port in (self.ctld_port, self.slurmd_port):
            addrs = listening.get(port, set())
            if not addrs or not addrs <= LOOPBACK_HEX:
                raise SlurmError(f"port {port} listens on {sorted(addrs) or 'nothing'}, not "
                                 f"loopback only: the host name {socket.gethostname()!r} must "
                                 "resolve to 127.0.0.1 or ::1 (e.g. in /etc/hosts)")

    def stop(self):
        for name in ("slurmd", "slurmctld", "munged"):
            proc, _ = self.procs.pop(name, (None, None))
            if proc is None:
                continue
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        if self.proctrack == "cgroup":
            self._remove_cgroups()

    def _remove_cgroups(self):
        """The node's cgroup trees slurmd leaves (empty once its jobs
        ended): removed deepest first; a busy one stays."""
        root = "/sys/fs/cgroup"
        tops = [os.path.join(root, c, f"slurm_{self.node}") for c in os.listdir(root)]
        for top in tops + [os.path.join(root, f"slurm_{self.node}")]:
            if not os.path.isdir(top):
                continue
            for d, _, _ in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
                try:
                    os.rmdir(d)
                except OSError:
                    pass

    # --- daemons ---------------------------------------------------------
    def _spawn(self, name, cmd, log):
        out = open(log + ".out", "w")
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=self.env,
                                start_new_session=True)
        out.close()
        self.procs[name] = (proc, log)

    def daemon_logs(self):
        text = []
        for name, (proc, log) in self.procs.items():
            state = "running" if proc.poll() is None else f"exited {proc.returncode}"
            text.append(f"--- {name} ({state}) {log}:\n{_tail(log)}\n"
                        f"--- {name} stdout/stderr:\n{_tail(log + '.out', 20)}")
        return "\n".join(text)

    def _check_alive(self):
        for name, (proc, _) in self.procs.items():
            if proc.poll() is not None:
                raise SlurmError(f"{name} exited {proc.returncode}\n{self.daemon_logs()}")

    def _start_munged(self):
        m = os.path.join(self.dir, "munge")
        key = os.path.join(m, "munge.key")
        with open(key, "wb") as f:
            os.fchmod(f.fileno(), 0o400)
            f.write(os.urandom(1024))
        self.munge_socket = os.path.join(m, "munge.socket")
        log = os.path.join(self.dir, "log", "munged.log")
        self.env = dict(os.environ)
        self._spawn("munged", [MUNGED, "--foreground", "--force", "-S", self.munge_socket,
                               "--key-file", key, "--log-file", log,
                               "--pid-file", os.path.join(m, "munged.pid"),
                               "--seed-file", os.path.join(m, "munged.seed")], log)
        deadline = time.time() + self.start_timeout
        while not os.path.exists(self.munge_socket):
            self._check_alive()
            if time.time() > deadline:
                raise SlurmError(f"munged made no socket in {self.start_timeout} s\n"
                                 + self.daemon_logs())
            time.sleep(0.05)

    def _wrapper(self, name, script):
        """A script that exports script_env and runs `script`."""
        path = os.path.join(self.dir, "etc", name + ".sh")
        with open(path, "w") as f:
            f.write("#!/bin/sh\n")
            for k, v in self.script_env.items():
                f.write(f"export {k}='{v}'\n")
            f.write(f"exec '{script}' \"$@\"\n")
        os.chmod(path, 0o755)
        return path

    def _write_conf(self):
        etc = os.path.join(self.dir, "etc")
        self.conf = os.path.join(etc, "slurm.conf")
        self.ctld_port, self.slurmd_port = free_port(), free_port()
        while self.slurmd_port == self.ctld_port:
            self.slurmd_port = free_port()
        host = socket.gethostname().split(".")[0]
        logdir = os.path.join(self.dir, "log")
        lines = [
            "ClusterName=gdtest",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={self.ctld_port}",
            f"SlurmdPort={self.slurmd_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={self.dir}/ctld",
            f"SlurmdSpoolDir={self.dir}/spool",
            f"SlurmctldPidFile={self.dir}/slurmctld.pid",
            f"SlurmdPidFile={self.dir}/slurmd.pid",
            f"SlurmctldLogFile={logdir}/slurmctld.log",
            f"SlurmdLogFile={logdir}/slurmd.log",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            f"ProctrackType=proctrack/{self.proctrack}",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "SchedulerType=sched/builtin",
            "MpiDefault=none",
            "SwitchType=switch/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "ReturnToService=2",
            "SlurmdParameters=config_overrides",
            "MinJobAge=300",
            # Bind the daemons to the address the host name resolves to, not
            # to every address (the node and controller are both this host).
            "CommunicationParameters=NoInAddrAny,NoCtldInAddrAny",
            "KillWait=5",
            "GresTypes=gpu",
        ]
        if self.prolog:
            # As docs/slurm.md says: the prolog runs when the job is
            # allocated (so SLURM_JOB_GPUS is there before any step), and a
            # job whose prolog failed is requeued, not held, so it runs on
            # another node.
            lines.append(f"Prolog={self._wrapper('prolog', self.prolog)}")
            lines.append("PrologFlags=Alloc")
            lines.append("SchedulerParameters=nohold_on_prolog_fail")
        if self.epilog:
            lines.append(f"Epilog={self._wrapper('epilog', self.epilog)}")
        lines += self.extra_conf
        cpus = os.cpu_count() or 1
        gres = f" Gres=gpu:{self.gpus}" if self.gpus else ""
        lines.append(f"NodeName={self.node} NodeHostname={host} NodeAddr=127.0.0.1 "
                     f"CPUs={cpus} RealMemory=1000{gres} State=UNKNOWN")
        lines.append(f"PartitionName=gpu Nodes={self.node} Default=YES MaxTime=INFINITE "
                     "State=UP")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(etc, "gres.conf"), "w") as f:
            f.write("AutoDetect=off\n")
            if self.gpus:
                # Device files of the fake GPUs: character devices with the
                # driver's numbers (195, N) that no driver backs; task/none
                # constrains nothing, Slurm only counts and numbers them (SLURM_JOB_GPUS, CUDA_VISIBLE_DEVICES).
                for i in range(self.gpus):
                    os.mknod(os.path.join(self.dir, "dev", f"nvidia{i}"),
                             0o600 | stat.S_IFCHR, os.makedev(195, i))
                last = self.gpus - 1
                f.write(f"NodeName={self.node} Name=gpu File={self.dir}/dev/nvidia[0-{last}]\n")
        # cgroup.conf is read by slurmd even with proctrack/linuxproc.
        with open(os.path.join(etc, "cgroup.conf"), "w") as f:
            f.write("CgroupPlugin=autodetect\nConstrainDevices=no\n")

    # --- commands --------------------------------------------------------
    def run(self, cmd, timeout=30, check=True):
        p = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise SlurmError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}\n"
                             + self.daemon_logs())
        return p

    def scontrol(self, *args, check=True):
        return self.run([SCONTROL] + list(args), check=check)

    def sbatch(self, *args, env=None):
        """Submits a job; returns its id."""
        cmd = [SBATCH, "--parsable", "-o", os.path.join(self.dir, "log", "job-%j.out")]
        cmd += list(args)
        p = self.run(cmd)
        return p.stdout.strip().split(";")[0]

    def job_output(self, job):
        try:
            with open(os.path.join(self.dir, "log", f"job-{job}.out"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def show_node(self):
        return parse_node(self.scontrol("show", "node", "-o", self.node).stdout)

    def show_job(self, job):
        p = self.scontrol("show", "job", "-o", str(job), check=False)
        return parse_node(p.stdout) if p.returncode == 0 else {}

    def wait_node(self, predicate, what, timeout=60):
        deadline = time.time() + timeout
        fields = {}
        while time.time() < deadline:
            self._check_alive()
            p = self.scontrol("show", "node", "-o", self.node, check=False)
            if p.returncode == 0:
                fields = parse_node(p.stdout)
                if predicate(fields):
                    return fields
            time.sleep(0.1)
        raise SlurmError(f"node {self.node} not {what} within {timeout} s: "
                         f"State={fields.get('State')} Reason={fields.get('Reason')}\n"
                         + self.daemon_logs())

    def wait_job(self, job, states=("COMPLETED",), timeout=60):
        """Waits until the job's state is one of `states` (or any final
        state, which fails the test if not wanted); returns its fields."""
        if isinstance(states, str):
            states = (states,)
        final = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "BOOT_FAIL",
                 "OUT_OF_MEMORY", "DEADLINE", "PREEMPTED"}
        deadline = time.time() + timeout
        fields = {}
        while time.time() < deadline:
            self._check_alive()
            fields = self.show_job(job)
            state = fields.get("JobState", "")
            if state in states:
                return fields
            if state in final:
                raise SlurmError(f"job {job} ended {state}, not {'/'.join(states)}: "
                                 f"Reason={fields.get('Reason')}\n{self.job_output(job)}\n"
                                 + self.daemon_logs())
            time.sleep(0.1)
        raise SlurmError(f"job {job} not {'/'.join(states)} within {timeout} s: "
                         f"JobState={fields.get('JobState')} Reason={fields.get('Reason')}\n"
                         + self.daemon_logs())
