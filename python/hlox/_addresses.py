"""Broker addresses shared by both clients (no third-party imports)."""


def control_address_for(address):
    """The broker's default control address: TCP port + 1, or the ipc path + ".ctl"."""
    if address.startswith("ipc://"):
        return address + ".ctl"
    host, _, port = address.rpartition(":")
    return "%s:%d" % (host, int(port) + 1)
