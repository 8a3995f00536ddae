"""The processes of a chaos soak (tests/chaos/chaos_soak.py): one broker on a SQLite store, workers
on the broker's host and, where network namespaces are permitted, workers on two other "hosts"
(network namespaces joined to the broker's by veth pairs on a bridge) whose links can be cut.

Everything this module starts it ends by pid; the namespaces it creates it deletes (which removes
their veths and bridge). Nothing is added to the machine's own network namespace: with namespaces
the harness process itself moves into the broker's namespace (setns) before it starts any thread,
so its agents, the broker and the local workers share that namespace's addresses.
"""
import ctypes
import os
import shutil
import signal
import socket
import subprocess

CLONE_NEWNET = 0x40000000
SUBNET = "10.79.0"
BROKER_IP = SUBNET + ".1"


class NetnsUnavailable(Exception):
    """Network namespaces are not permitted here (not root, no iproute2, a sandbox)."""


def _ip(*args):
    r = subprocess.run(["ip"] + list(args), capture_output=True, text=True)
    if r.returncode != 0:
        raise NetnsUnavailable("'ip %s': %s" % (" ".join(args), (r.stderr or r.stdout).strip()))


class Hosts:
    """The broker host plus `remote` worker hosts as network namespaces on one bridge."""

    def __init__(self, tag, remote):
        self.ns_broker = tag + "-b"
        self.ns_workers = ["%s-w%d" % (tag, i + 1) for i in range(remote)]
        self.created = []

    def setup(self):
        """Creates the namespaces and links and moves this process into the broker's namespace.
        Raises NetnsUnavailable (after removing what it made) when any step is refused."""
        try:
            for ns in [self.ns_broker] + self.ns_workers:
                _ip("netns", "add", ns)
                self.created.append(ns)
                _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", self.ns_broker, "link", "add", "br0", "type", "bridge")
            _ip("-n", self.ns_broker, "addr", "add", BROKER_IP + "/24", "dev", "br0")
            _ip("-n", self.ns_broker, "link", "set", "br0", "up")
            for i, ns in enumerate(self.ns_workers, start=1):
                _ip("-n", self.ns_broker, "link", "add", "vb%d" % i, "type", "veth", "peer", "name",
                    "vw%d" % i, "netns", ns)
                _ip("-n", self.ns_broker, "link", "set", "vb%d" % i, "master", "br0")
                _ip("-n", self.ns_broker, "link", "set", "vb%d" % i, "up")
                _ip("-n", ns, "addr", "add", "%s.%d/24" % (SUBNET, i + 1), "dev", "vw%d" % i)
                _ip("-n", ns, "link", "set", "vw%d" % i, "up")
            fd = os.open("/var/run/netns/" + self.ns_broker, os.O_RDONLY)
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise NetnsUnavailable("setns: " + os.strerror(ctypes.get_errno()))
            finally:
                os.close(fd)
        except (NetnsUnavailable, OSError) as e:
            self.cleanup()
            raise NetnsUnavailable(str(e))

    def set_link(self, index, up):
        """Cuts (up=False) or restores the link of remote host `index` (0-based)."""
        _ip("-n", self.ns_workers[index], "link", "set", "vw%d" % (index + 1), "up" if up else "down")

    def cleanup(self):
        for ns in self.created:
            r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
            for pid in r.stdout.split():
                if pid == str(os.getpid()):
                    continue  # this harness lives in the broker's namespace
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (OSError, ValueError):
                    pass
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self.created = []


def _die_with_parent(argv):
    """argv run under `setpriv --pdeathsig KILL` (util-linux) when it is there: the process gets
    SIGKILL when the harness dies, even by kill -9 (a CTest timeout), so no broker or worker
    outlives the soak. (Not preexec_fn: forking Python code is unsafe with the agent threads.)"""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL"] + argv if setpriv else argv


def free_tcp_port():
    """A loopback TCP port p with p+1 also free (the broker's control socket)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port >= 65535:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 1))
                return port
            except OSError:
                continue
    raise RuntimeError("no two consecutive free loopback ports")


class Proc:
    """One started process (broker or worker) and what it takes to start it again."""

    def __init__(self, name, argv, log_path, env=None):
        self.name, self.argv, self.log_path, self.env = name, argv, log_path, env
        self.popen = None
        self.stopped = False  # SIGSTOPped by the schedule and not yet continued
        self.starts = 0

    def start(self, env=None):
        env = env if env is not None else self.env
        log = open(self.log_path, "ab")
        log.write(b"==== start %d ====\n" % (self.starts + 1))
        log.flush()
        self.popen = subprocess.Popen(_die_with_parent(self.argv), stdout=log, stderr=subprocess.STDOUT,
                                      env=dict(os.environ, HLOX_LOG=os.environ.get("HLOX_CHAOS_LOG", "info"), **(env or {})))
        log.close()
        self.stopped = False
        self.starts += 1

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

    def signal(self, sig):
        if self.alive():
            try:
                self.popen.send_signal(sig)
            except ProcessLookupError:
                pass

    def kill9(self):
        """kill -9 and reap."""
        if self.popen is None:
            return
        self.signal(signal.SIGKILL)
        self.popen.wait()
        self.stopped = False

    def terminate(self, grace=5.0):
        """SIGCONT (a stopped process cannot exit), SIGTERM, then SIGKILL after `grace` s."""
        if not self.alive():
            return
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGTERM)
        try:
            self.popen.wait(grace)
        except subprocess.TimeoutExpired:
            self.kill9()
        self.stopped = False

    def tail(self, lines=15):
        try:
            with open(self.log_path, "rb") as f:
                return b"\n".join(f.read().splitlines()[-lines:]).decode(errors="replace")
        except OSError:
            return ""


class Fleet:
    """The broker and workers of one soak."""

    def __init__(self, hlox, work, address, local_workers, hosts=None):
        self.hlox, self.work, self.address, self.hosts = hlox, work, address, hosts
        self.db = os.path.join(work, "store.sqlite")
        argv = [hlox, "broker", "--bind", address, "--db", self.db]
        if not address.startswith("tcp://127."):
            argv.append("--insecure")  # a private bridge in our own namespaces, no keys
        self.broker = Proc("broker", argv, os.path.join(work, "broker.log"))
        self.workers = []
        for i in range(local_workers):
            self._add_worker("chaos-l%d" % (i + 1), [])
        for i, ns in enumerate(hosts.ns_workers if hosts else []):
            self._add_worker("chaos-n%d" % (i + 1), ["ip", "netns", "exec", ns])
        self.remote = [w for w in self.workers if w.name.startswith("chaos-n")]

    def _add_worker(self, wid, prefix):
        argv = prefix + [self.hlox, "worker", "--broker", self.address, "--id", wid]
        self.workers.append(Proc(wid, argv, os.path.join(self.work, wid + ".log")))

    def start(self):
        self.broker.start()
        for w in self.workers:
            w.start()

    def restart_broker(self):
        """kill -9 and start again on the same store and address."""
        self.broker.kill9()
        self.broker.start()

    def stop_all(self):
        for w in self.workers:
            w.terminate()
        self.broker.terminate()
