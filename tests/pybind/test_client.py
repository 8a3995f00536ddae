"""The pure-Python protocol client (hlox.client) against real `hlox broker` and `hlox worker`
processes on loopback: results, INVALID_DECISIONS, a malformed module, the result cache,
status and cancel, and the hash agreeing with the C++ one."""
import os
import random
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import hlox_bin, run, test  # noqa: E402

from hlox import client as pyclient  # noqa: E402

MODULE = """HloModule chain

ENTRY main {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  c = f32[8] multiply(a, b)
  d = f32[8] add(c, a)
  ROOT e = f32[8] exponential(d)
}
"""
_STATE = {}


def free_port_pair():
    for _ in range(50):
        port = random.randint(20000, 32700)  # below the kernel's ephemeral range
        ok = True
        for p in (port, port + 1):
            s = socket.socket()
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                ok = False
            finally:
                s.close()
        if ok:
            return port
    raise RuntimeError("no free port pair")


def fleet():
    """Starts (once) one broker and one worker process; returns the broker address."""
    if "address" not in _STATE:
        binary = hlox_bin()
        address = "tcp://127.0.0.1:%d" % free_port_pair()
        broker = subprocess.Popen([binary, "broker", "--bind", address], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        _STATE["procs"] = [broker]
        time.sleep(0.3)
        worker = subprocess.Popen([binary, "worker", "--broker", address, "--id", "pytest-w1"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _STATE["procs"].append(worker)
        _STATE["address"] = address
    return _STATE["address"]


def stop_fleet():
    for p in reversed(_STATE.get("procs", [])):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@test
def hash_matches_native():
    texts = [MODULE, "", "x" * 7, "HloModule é\n" * 33]
    expected = {  # computed by the C++ HashText through the extension when available
    }
    try:
        import hlox
        expected = {t: hlox.hash_text(t) for t in texts}
    except (ImportError, AttributeError):
        pass
    for t in texts:
        h = pyclient.hash_text(t)
        assert len(h) == 32 and int(h, 16) >= 0
        if t in expected:
            assert h == expected[t], (t[:20], h, expected[t])
    assert pyclient.hash_text("a") != pyclient.hash_text("b")


@test
def encode_decisions_is_little_endian_int32():
    enc = pyclient.encode_decisions({"fusion#0": [1, 0, 258, -1]})
    assert enc == {"fusion#0": b"\x01\0\0\0\0\0\0\0\x02\x01\0\0\xff\xff\xff\xff"}
    assert pyclient.control_address_for("tcp://h:5555") == "tcp://h:5556"
    assert pyclient.control_address_for("ipc:///tmp/b") == "ipc:///tmp/b.ctl"


@test
def jobs_through_real_broker_and_worker():
    c = pyclient.Client(fleet())
    try:
        ok = c.submit(MODULE, "default", {}, campaign="pytest", cache=False)
        none_pipe = c.submit(MODULE, "none", {}, campaign="pytest")
        bad = c.submit(MODULE, "default", {"fusion#0": [9] * 50}, campaign="pytest")
        broken = c.submit("HloModule broken\nENTRY {", "default", {}, campaign="pytest")
        got = c.gather([ok, none_pipe, bad, broken], timeout=90)
        assert set(got) == {ok, none_pipe, bad, broken}, got.keys()
        rec = got[ok]["record"]
        assert rec["status"] == "OK", rec
        assert rec["cost"]["median"] > 0 and rec["provenance"]["worker_id"] == "pytest-w1"
        # Pipeline "none" keeps every op: multiply, add, exponential.
        assert got[none_pipe]["record"]["analytical"]["op_count"] == 3, got[none_pipe]["record"]
        assert got[bad]["record"]["status"] == "INVALID_DECISIONS", got[bad]["record"]
        assert got[broken]["record"]["status"] != "OK"
        # The same job again: answered from the result cache (attempts 0), module not resent.
        again = c.submit(MODULE, "none", {}, campaign="pytest")
        r = c.gather([again], timeout=30)[again]
        assert (r["cached"] or r["attempts"] == 0) and r["record"]["status"] == "OK", r
        status = c.status()
        assert any(w["id"] == "pytest-w1" for w in status["workers"]), status
        assert status["totals"]["completed"] >= 3
        reply = c.control_op("cancel", "pytest-cancelled")
        assert isinstance(reply, str), reply
        cancelled = c.submit(MODULE, "default", {}, campaign="pytest-cancelled", cache=False)
        r = c.gather([cancelled], timeout=30)[cancelled]
        assert r["record"]["status"] == "CANCELLED", r
        assert c.unfinished == 0
    finally:
        c.close()


@test
def sites_from_the_fleet_match_hlox_sites():
    """Client.sites (a sites job) lists the points `hlox sites` walks locally, keeps results of
    other jobs for next(), and raises ValueError for decisions that do not fit; the native
    client and `hlox sites --broker` see the same list."""
    import json as _json
    import tempfile
    c = pyclient.Client(fleet())
    try:
        other = c.submit(MODULE, "none", {}, campaign="pytest-sites", cache=False)
        points = c.sites(MODULE, "default", {})
        assert points and all(p["key"].startswith(p["pass"] + "#") for p in points), points
        first = points[0]
        with tempfile.NamedTemporaryFile("w", suffix=".hlo", delete=False) as f:
            f.write(MODULE)
        try:
            local = _json.loads(subprocess.check_output([hlox_bin(), "sites", f.name, "--json"]))
            assert local["key"] == first["key"] and local["sites"] == first["sites"], (local, first)
            fleet_cli = _json.loads(subprocess.check_output(
                [hlox_bin(), "sites", f.name, "--json", "--broker", fleet()]))
            assert fleet_cli["points"] == points, fleet_cli
        finally:
            os.unlink(f.name)
        decided = {first["key"]: [s["default"] for s in first["sites"]]}
        again = c.sites(MODULE, "default", decided)
        assert again[0]["decided"] and again[0]["key"] == first["key"], again[0]
        try:
            c.sites(MODULE, "default", {first["key"]: [0] * (len(first["sites"]) + 1)})
            raise AssertionError("a wrong-length vector was accepted")
        except ValueError as e:
            assert first["key"] in str(e), e
        got = c.gather([other], timeout=90)  # the evaluation's result was kept for next()
        assert got[other]["record"]["status"] == "OK", got
        try:
            import hlox
            native = hlox.Client(fleet())
        except (ImportError, AttributeError):
            return
        try:
            assert native.sites(MODULE, "default", {}) == points
        finally:
            native.close()
    finally:
        c.close()


@test
def paired_jobs_from_both_clients():
    """Client.paired (a "paired" job): a worker measures the candidate against a baseline and
    returns the ratio with its interval and who measured; both clients submit it alike, and bad
    requests fail clearly (an unknown key before anything is sent, wrong decisions, a
    baseline's wrong decisions)."""
    quick = {"baseline_pipeline": "none", "seed": 3, "max_rounds": 12, "min_rounds": 3,
             "time_cap_ms": 400, "instances": 2, "warmups": 1}
    clients = [pyclient.Client(fleet())]
    try:
        import hlox
        clients.append(hlox.Client(fleet()))
    except (ImportError, AttributeError):
        print("  (no native extension: only the pure client)")
    try:
        for c in clients:
            v = c.paired(MODULE, "default", {}, quick, campaign="pytest-paired")
            assert v["ci_low"] <= v["ratio"] <= v["ci_high"] and v["ratio"] > 0, v
            assert 1 <= v["rounds"] <= 12 and v["instance_count"] == 2, v
            assert v["provenance"]["worker_id"] == "pytest-w1", v["provenance"]
            assert v["baseline_median"] > 0 and v["candidate_median"] > 0, v
            for bad in ({"rounds": 3}, {"baseline": "none"}):
                try:
                    c.paired(MODULE, "default", {}, bad)
                    raise AssertionError("unknown paired key %s accepted" % bad)
                except ValueError as e:
                    assert "unknown paired keys" in str(e), e
            try:
                c.submit(MODULE, "default", {}, kind="sites", paired={"seed": 1})
                raise AssertionError("paired keys on a sites job accepted")
            except ValueError:
                pass
            points = c.sites(MODULE, "default", {})
            n = len(points[0]["sites"])
            try:
                c.paired(MODULE, "default", {points[0]["key"]: [0] * (n + 1)}, quick)
                raise AssertionError("wrong candidate decisions accepted")
            except ValueError as e:
                assert points[0]["key"] in str(e), e
            try:
                c.paired(MODULE, "default", {}, dict(quick, baseline_pipeline="default",
                                                     baseline_decisions={points[0]["key"]: [0] * (n + 1)}))
                raise AssertionError("wrong baseline decisions accepted")
            except ValueError as e:
                assert str(e).startswith("baseline: "), e
    finally:
        for c in clients:
            c.close()


@test
def both_clients_share_one_api():
    """hlox.Client (native) and hlox.client.Client (pure Python): the same public methods and
    properties, with the same parameter names and defaults (times in seconds in both)."""
    import inspect
    try:
        import hlox
        native = hlox.Client
    except (ImportError, AttributeError):
        print("  (no native extension: only the pure client checked)")
        return
    pure = pyclient.Client
    public = lambda cls: {n for n in dir(cls) if not n.startswith("_")}  # noqa: E731
    assert public(native) == public(pure), public(native) ^ public(pure)
    for name in sorted(public(pure)):
        a, b = getattr(native, name), getattr(pure, name)
        assert isinstance(a, property) == isinstance(b, property), name
        if callable(a) and not isinstance(a, property):
            pa = [(p.name, p.default) for p in inspect.signature(a).parameters.values()]
            pb = [(p.name, p.default) for p in inspect.signature(b).parameters.values()]
            assert pa == pb, (name, pa, pb)
    init_a = [p.name for p in inspect.signature(native.__init__).parameters.values()]
    init_b = [p.name for p in inspect.signature(pure.__init__).parameters.values()]
    assert init_a == init_b[:len(init_a)] and {"curve_key", "broker_key"} <= set(init_a), (init_a, init_b)


@test
def native_client_through_real_broker():
    """The native client with the shared API: seconds, unfinished as a property, status."""
    try:
        import hlox
        native = hlox.Client
    except (ImportError, AttributeError):
        print("  (no native extension)")
        return
    c = native(fleet())
    try:
        ids = [c.submit(MODULE, "default", {}, campaign="pytest-native", cache=False)]
        got = c.gather(ids, timeout=90)
        assert got and got[ids[0]]["record"]["status"] == "OK", got
        assert c.unfinished == 0 and c.next(0.05) is None and c.poll() == []
        assert any(w["id"] == "pytest-w1" for w in c.status()["workers"])
    finally:
        c.close()


if __name__ == "__main__":
    try:
        run()
    finally:
        stop_fleet()
