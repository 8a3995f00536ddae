"""What both clients share (no third-party imports): the control address rule, gather and
sites."""
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


def sites(client, module, pipeline, decisions, timeout):
    """Submits a "sites" job on `client` and waits for its answer (results of other jobs that
    arrive meanwhile stay queued for client.next): the list of decision points of the record's
    "sites" JSON. Raises ValueError for INVALID_DECISIONS, RuntimeError for another status,
    TimeoutError when no answer came within `timeout` seconds."""
    job_id = client.submit(module, pipeline, decisions, kind="sites")
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
            raise TimeoutError("no answer to sites job %s" % job_id)
    client._requeue(held)
    status = answer.get("status")
    if status == "INVALID_DECISIONS":
        raise ValueError(answer.get("message", ""))
    if status != "OK":
        raise RuntimeError("sites job %s: %s" % (status, answer.get("message", "")))
    return json.loads(answer.get("sites") or "[]")
