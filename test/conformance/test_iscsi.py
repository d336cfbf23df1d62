"""The iscsi group (v1alpha1, v1alpha2) through a real gRPC client, against
the native build's simulated initiator (winapi/iscsi_sim.c) seeded from
test/fixtures/storage.yaml: a portal the fixture does not list does not
answer; portal A of this file serves iqn.2026-01.local.sim:A-disks (two
LUNs, any authentication) and iqn.2026-01.local.sim:A-chap (one LUN, CHAP
user "sim-user", secret "sim-secret-12"); a login's LUNs are new disks of
the storage simulator. Every RPC of both versions, every refusal; no CHAP
secret in any error text. The end-to-end driver flow: test_iscsi_flow.py."""
import grpc
import pytest

OK = grpc.StatusCode.OK
INVALID = grpc.StatusCode.INVALID_ARGUMENT
VERSIONS = ["v1alpha1", "v1alpha2"]
PREFIX = "iqn.2026-01.local.sim:"
SECRET = "Wr0ng-S3cret-99"
PORTAL_RPCS = ["AddTargetPortal", "DiscoverTargetPortal", "RemoveTargetPortal",
               "ConnectTarget", "DisconnectTarget", "GetTargetDisks"]
TARGET_RPCS = ["ConnectTarget", "DisconnectTarget", "GetTargetDisks"]


@pytest.fixture
def rpc(call, pb):
    def run(v, method, address=None, port=0, **fields):
        if address is not None:
            fields["target_portal"] = pb("iscsi", v).TargetPortal(target_address=address,
                                                                  target_port=port)
        return call("iscsi", v, method, **fields)
    return run


def portals(rpc, v):
    resp, code, msg = rpc(v, "ListTargetPortals")
    assert code == OK, msg
    return [(p.target_address, p.target_port) for p in resp.target_portals]


@pytest.mark.parametrize("v", VERSIONS)
def test_driver_flow(rpc, v):
    a = f"flow-{v}.example.com"
    disks, chap = f"{PREFIX}{a}-disks", f"{PREFIX}{a}-chap"
    # AddTargetPortal: port 0 is 3260; twice is a no-op
    for _ in range(2):
        _, code, msg = rpc(v, "AddTargetPortal", a)
        assert code == OK, msg
    assert portals(rpc, v).count((a, 3260)) == 1
    resp, code, msg = rpc(v, "DiscoverTargetPortal", a, 3260)
    assert code == OK, msg
    assert list(resp.iqns) == [disks, chap]
    # not connected: an empty list
    resp, code, msg = rpc(v, "GetTargetDisks", a, iqn=disks)
    assert code == OK and list(resp.diskIDs) == [], msg
    for _ in range(2):  # ConnectTarget is idempotent
        _, code, msg = rpc(v, "ConnectTarget", a, iqn=disks, auth_type=0)
        assert code == OK, msg
    resp, code, msg = rpc(v, "GetTargetDisks", a, iqn=disks)
    assert code == OK, msg
    ids = list(resp.diskIDs)
    assert len(ids) == 2 and len(set(ids)) == 2
    assert all(i.isdigit() and int(i) >= 10 and str(int(i)) == i for i in ids)  # decimal strings
    for _ in range(2):  # DisconnectTarget of a target not connected succeeds
        _, code, msg = rpc(v, "DisconnectTarget", a, iqn=disks)
        assert code == OK, msg
    resp, code, msg = rpc(v, "GetTargetDisks", a, iqn=disks)
    assert code == OK and list(resp.diskIDs) == [], msg
    _, code, msg = rpc(v, "RemoveTargetPortal", a)
    assert code == OK, msg
    assert (a, 3260) not in portals(rpc, v)


@pytest.mark.parametrize("v", VERSIONS)
def test_portal_not_registered(rpc, v):
    a = f"never-{v}.example.com"
    for method in ("RemoveTargetPortal", "DiscoverTargetPortal"):
        _, code, msg = rpc(v, method, a, 3261)
        assert code == grpc.StatusCode.NOT_FOUND, msg
        assert msg == f"target portal {a}:3261 is not registered"
    _, code, msg = rpc(v, "ConnectTarget", a, iqn=f"{PREFIX}{a}-disks")
    assert code == grpc.StatusCode.NOT_FOUND and a in msg, msg


@pytest.mark.parametrize("v", VERSIONS)
def test_unreachable_portal(rpc, v):
    _, code, msg = rpc(v, "AddTargetPortal", f"unreachable-{v}.example.com")
    assert code == grpc.StatusCode.UNAVAILABLE
    assert msg == f"target portal unreachable-{v}.example.com:3260 does not answer"


@pytest.mark.parametrize("v", VERSIONS)
@pytest.mark.parametrize("method", PORTAL_RPCS)
def test_portal_refusals(rpc, v, method):
    kw = {"iqn": "iqn.a:b"} if method in TARGET_RPCS else {}
    # upstream dereferences the missing portal and the whole service exits
    _, code, msg = rpc(v, method, **kw)
    assert code == INVALID and msg == "target_portal is required"
    _, code, msg = rpc(v, method, "", **kw)
    assert code == INVALID and msg == "target_portal.target_address is empty"
    _, code, msg = rpc(v, method, "bad host;x", **kw)
    assert code == INVALID and "is not a host name or address" in msg
    _, code, msg = rpc(v, method, "10.0.0.5", 65536, **kw)
    assert code == INVALID and "65536" in msg
    assert ("bad host;x", 3260) not in portals(rpc, v)


@pytest.mark.parametrize("v", VERSIONS)
@pytest.mark.parametrize("method", TARGET_RPCS)
def test_iqn_refusals(rpc, v, method):
    _, code, msg = rpc(v, method, "10.0.0.5")
    assert code == INVALID and msg == "iqn is empty"
    _, code, msg = rpc(v, method, "10.0.0.5", iqn="iqn.x y")
    assert code == INVALID and "is not an iSCSI name" in msg


@pytest.mark.parametrize("v", VERSIONS)
def test_invalid_auth_type(rpc, v):
    _, code, msg = rpc(v, "ConnectTarget", "10.0.0.5", iqn="iqn.a:b", auth_type=3,
                       chap_secret=SECRET)
    assert code == INVALID and msg == "invalid authentication type authType=3"


@pytest.mark.parametrize("v", VERSIONS)
def test_chap_and_secrets(rpc, v):
    a = f"chap-{v}.example.com"
    chap = f"{PREFIX}{a}-chap"
    assert rpc(v, "AddTargetPortal", a)[1] == OK
    cases = [
        (0, "", "", grpc.StatusCode.PERMISSION_DENIED),
        (1, "sim-user", SECRET, grpc.StatusCode.PERMISSION_DENIED),
        (1, "sim-user", "short-S3cr", INVALID),  # Windows: 12 to 16 bytes
    ]
    for auth, user, secret, want in cases:
        _, code, msg = rpc(v, "ConnectTarget", a, iqn=chap, auth_type=auth, chap_username=user,
                           chap_secret=secret)
        assert code == want, msg
        assert chap in msg and (secret == "" or secret not in msg)
    _, code, msg = rpc(v, "ConnectTarget", a, iqn=chap, auth_type=1, chap_username="sim-user",
                       chap_secret="sim-secret-12")
    assert code == OK, msg
    resp, code, msg = rpc(v, "GetTargetDisks", a, iqn=chap)
    assert code == OK and len(resp.diskIDs) == 1, msg
    assert rpc(v, "DisconnectTarget", a, iqn=chap)[1] == OK
    assert rpc(v, "RemoveTargetPortal", a)[1] == OK


def test_set_mutual_chap_secret(rpc):
    v = "v1alpha2"
    a = "mutual.example.com"
    chap = f"{PREFIX}{a}-chap"
    assert rpc(v, "AddTargetPortal", a)[1] == OK
    _, code, msg = rpc(v, "SetMutualChapSecret", MutualChapSecret="tiny-S3cret")
    assert code == INVALID and "12 to 16 bytes" in msg and "tiny-S3cret" not in msg
    # clearing it: mutual CHAP logins then need it again
    assert rpc(v, "SetMutualChapSecret", MutualChapSecret="")[1] == OK
    _, code, msg = rpc(v, "ConnectTarget", a, iqn=chap, auth_type=2, chap_username="sim-user",
                       chap_secret="sim-secret-12")
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "SetMutualChapSecret" in msg
    _, code, msg = rpc(v, "SetMutualChapSecret", MutualChapSecret="Mutual-S3cret-16")
    assert code == OK, msg
    _, code, msg = rpc(v, "ConnectTarget", a, iqn=chap, auth_type=2, chap_username="sim-user",
                       chap_secret="sim-secret-12")
    assert code == OK, msg
    assert rpc(v, "DisconnectTarget", a, iqn=chap)[1] == OK
    assert rpc(v, "RemoveTargetPortal", a)[1] == OK


def test_v1alpha1_has_no_set_mutual_chap_secret(call):
    _, code, msg = call.raw("iscsi", "v1alpha1", "/v1alpha1.Iscsi/SetMutualChapSecret", b"")
    assert code == grpc.StatusCode.UNIMPLEMENTED
    assert msg == "unknown method SetMutualChapSecret for service v1alpha1.Iscsi"


@pytest.mark.parametrize("v", VERSIONS)
@pytest.mark.parametrize("method", ["AddTargetPortal", "DiscoverTargetPortal", "ConnectTarget"])
def test_portal_destination_rule(rpc, v, method):
    """The calls that make the initiator connect refuse loopback, link-local
    and unspecified portals (any spelling), naming the portal and the rule;
    none reaches the initiator. Beyond upstream, which hands them over."""
    kw = {"iqn": "iqn.a:b"} if method in TARGET_RPCS else {}
    for address, port, rule in [("127.0.0.1", 0, "loopback"), ("2130706433", 3260, "loopback"),
                                ("localhost", 3260, "loopback"), ("[::1]", 3260, "loopback"),
                                ("169.254.169.254", 80, "link-local"),
                                ("fe80::1", 3260, "link-local"), ("0.0.0.0", 3260, "unspecified")]:
        _, code, msg = rpc(v, method, address, port, **kw)
        shown = port or 3260
        assert code == INVALID, (address, code, msg)
        assert msg.startswith(f"target portal {address}:{shown}: {address} is a"), msg
        assert rule in msg and "groups.iscsi.allowedPortals" in msg, msg
    assert not [p for p in portals(rpc, v) if p[0] in ("127.0.0.1", "169.254.169.254")]
    # an ordinary portal on any port is not refused by the rule (the
    # simulated initiator then answers that it does not answer)
    _, code, msg = rpc(v, "AddTargetPortal", "10.0.0.1", 22)
    assert code == grpc.StatusCode.UNAVAILABLE and "does not answer" in msg, msg
