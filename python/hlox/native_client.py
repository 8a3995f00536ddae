"""hlox.Client: the compiled agent client (C++ agent::Client, through the extension) with the
API of the pure-Python client (hlox.client.Client): the same constructor arguments, method names
and units (seconds), so code moves between the two by changing one import.

    c = hlox.Client("tcp://10.0.0.5:5555", curve_key="agent.key", broker_key="broker.pub")
    job = c.submit(module, "default", {"fusion#0": [1, 0, 1]})
    result = c.next(timeout=30.0)        # {"job_id", "attempts", "cached", "record"} or None

The native client keeps its own I/O thread (heartbeats and resubmission after a broker restart
happen without calls into it); the pure-Python one makes progress inside next/gather.
"""
import json

from . import _hlox
from ._client_common import TIMING_KEYS, control_address_for, gather, paired as paired_job, paired_spec, sites


class Client:
    """Agent client of an hlox broker; see the module docstring."""

    def __init__(self, address, identity=None, control_address=None, curve_key=None, broker_key=None):
        self.address = address
        self.control = control_address or control_address_for(address)
        self._keys = (curve_key or "", broker_key or "")
        self._native = _hlox.NativeClient(address, identity or "", *self._keys)
        self._held = []  # results sites() took from the native client for other jobs

    def submit(self, module, pipeline="default", decisions=None, campaign="", job_id=None, cache=True,
               hardware_class="", run_timeout=0.0, queue_timeout=0.0, kind="evaluate", paired=None):
        """Queues one job; returns its id. module: a Module or HLO text; run_timeout /
        queue_timeout: seconds, 0 = the broker's default; kind: "evaluate", "sites" or "paired"
        (`paired`: its keys, as hlox.client.Client.paired takes them)."""
        if not isinstance(module, _hlox.Module):
            module = _hlox.parse_module(str(module))
        if paired and kind != "paired":
            raise ValueError("paired keys given for a %r job" % kind)
        spec = paired_spec(paired)
        timing = {k: float(spec[k]) for k in TIMING_KEYS if k in spec}  # the rest: the C++ defaults
        return self._native.submit(module, pipeline, decisions or {}, campaign, job_id or "", bool(cache),
                                   int(round(run_timeout * 1000)), hardware_class, int(round(queue_timeout * 1000)),
                                   kind, spec.get("baseline_pipeline", ""), spec.get("baseline_decisions") or {},
                                   int(spec.get("seed", 0)),
                                   timing)

    def sites(self, module, pipeline="default", decisions=None, timeout=60.0):
        """The decision points of `module` under `pipeline` given `decisions`, asked of the
        fleet as a "sites" job (hlox.client.Client.sites describes the result and errors)."""
        return sites(self, module, pipeline, decisions, timeout)

    def paired(self, module, pipeline="default", decisions=None, paired=None, campaign="",
               hardware_class="", timeout=300.0):
        """A paired measurement on the fleet (hlox.client.Client.paired describes it)."""
        return paired_job(self, module, pipeline, decisions, paired, campaign, hardware_class,
                      timeout)

    def next(self, timeout=1.0):
        """The next result dict, or None when none arrived within `timeout` seconds."""
        if self._held:
            return self._held.pop(0)
        return self._native.next(max(0, int(round(timeout * 1000))))

    def poll(self):
        """Every result available now (never waits)."""
        out, self._held = self._held + self._native.poll(), []
        return out

    def gather(self, ids, timeout=120.0):
        """Waits for every id in `ids`; returns {id: result} (ids that timed out are absent)."""
        return gather(self, ids, timeout)

    @property
    def unfinished(self):
        """Jobs submitted whose result has not been handed out."""
        return self._native.unfinished + len(self._held)

    def control_op(self, op, target="", timeout=3.0):
        """CONTROL (status, drain, cancel, shutdown) on the control socket; the reply text."""
        return _hlox.control(self.control, op, target, int(round(timeout * 1000)), *self._keys)

    def status(self, timeout=3.0):
        """The broker's status JSON as a dict (workers, queues, totals, latency)."""
        return json.loads(self.control_op("status", timeout=timeout))

    def close(self):
        self._native = None

    def _requeue(self, results):
        """Puts results taken by next() back in front, in order (sites() skips them)."""
        self._held[0:0] = results
