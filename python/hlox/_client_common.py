"""What both clients share (no third-party imports): the control address rule, gather, sites
and paired."""
import json
import time


def control_address_for(address):
    """The broker's default control address: TCP port + 1, or the ipc path + ".ctl"."""
    if address.startswith("ipc://"):
        return address + ".ctl"
    host, _, port = address.rpartition(":")
    return "%s:%d" % (host, int(port) + 1)


def gather(client, ids, timeout):
    """Waits on client.next until every id in `ids` has a result or `timeout` seconds pass;
    returns {id: result} (ids that timed out are absent)."""
    want, got = set(ids), {}
    deadline = time.monotonic() + timeout
    while want - set(got) and time.monotonic() < deadline:
        r = client.next(min(1.0, max(deadline - time.monotonic(), 0.01)))
        if r is not None:
            got[r["job_id"]] = r
    return got


# The keys a paired job may carry besides the candidate's pipeline and decisions (docs/PROTOCOL.md,
# Job kinds); a key left out takes the protocol's default (the worker's TimingProtocol).
PAIRED_KEYS = ("baseline_pipeline", "baseline_decisions", "seed", "warmups", "min_rounds", "max_rounds",
               "target_rel_error", "time_cap_ms", "min_sample_us", "instances")
TIMING_KEYS = PAIRED_KEYS[3:]


def paired_spec(paired):
    """`paired` as a dict (None: {}); ValueError for a key the protocol does not have (a typo
    would otherwise measure with a default silently)."""
    spec = dict(paired or {})
    unknown = set(spec) - set(PAIRED_KEYS)
    if unknown:
        raise ValueError("unknown paired keys %s (known: %s)" % (sorted(unknown), ", ".join(PAIRED_KEYS)))
    return spec


def _await_record(client, job_id, timeout, what):
    """The record of `job_id`, waiting on client.next (results of other jobs that arrive
    meanwhile stay queued for client.next). Raises ValueError for INVALID_DECISIONS,
    RuntimeError for another status than OK, TimeoutError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    held, answer = [], None
    while answer is None:
        r = client.next(min(1.0, max(deadline - time.monotonic(), 0.01)))
        if r is not None and r["job_id"] == job_id:
            answer = r["record"]
        elif r is not None:
            held.append(r)
        elif time.monotonic() >= deadline:
            client._requeue(held)
            raise TimeoutError("no answer to %s job %s" % (what, job_id))
    client._requeue(held)
    status = answer.get("status")
    if status == "INVALID_DECISIONS":
        raise ValueError(answer.get("message", ""))
    if status != "OK":
        raise RuntimeError("%s job %s: %s" % (what, status, answer.get("message", "")))
    return answer


def sites(client, module, pipeline, decisions, timeout):
    """Submits a "sites" job on `client` and waits for its answer: the list of decision points
    of the record's "sites" JSON (errors as _await_record)."""
    job_id = client.submit(module, pipeline, decisions, kind="sites")
    return json.loads(_await_record(client, job_id, timeout, "sites").get("sites") or "[]")


def paired(client, module, pipeline, decisions, spec, campaign, hardware_class, timeout):
    """Submits a "paired" job on `client` (`spec`: a dict of PAIRED_KEYS) and waits for it: the record's
    "paired" figures, with the record's "provenance" (who measured) added under that key.
    Errors as _await_record (WRONG_OUTPUT, a failing baseline: RuntimeError)."""
    job_id = client.submit(module, pipeline, decisions, campaign=campaign, cache=False,
                           hardware_class=hardware_class, kind="paired", paired=spec)
    record = _await_record(client, job_id, timeout, "paired")
    out = dict(record["paired"])
    out["provenance"] = record.get("provenance", {})
    return out
