"""What both clients share (no third-party imports): the control address rule and gather."""
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
