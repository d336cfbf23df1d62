"""The system group (v1alpha1) through a real gRPC client, against the native
build's simulated host (sim/system_sim.c): w32time (manual, stopped),
msiscsi (manual, stopped), lanmanserver (automatic, running) with browser
depending on it, remoteregistry (disabled). The native server has no
allowedServices policy (any service, as upstream); the policy is tested in
test/unit/test_system.c and under Wine with a config file."""
import grpc

OK = grpc.StatusCode.OK
V = "v1alpha1"


def get(call, name):
    r, code, msg = call("system", V, "GetService", name=name)
    assert code == OK, msg
    return r


def test_bios_serial(call, pb):
    r, code, msg = call("system", V, "GetBIOSSerialNumber")
    assert code == OK, msg
    assert r.serial_number == "SIM-BIOS-0001"


def test_get_service(call, pb):
    mod = pb("system", V)
    r = get(call, "W32Time")
    assert r.display_name == "Windows Time"
    assert r.start_type == mod.MANUAL
    assert r.status in (mod.STOPPED, mod.RUNNING)
    _, code, msg = call("system", V, "GetService", name="nosuchsvc")
    assert code == grpc.StatusCode.NOT_FOUND and "nosuchsvc" in msg


def test_start_then_stop(call, pb):
    mod = pb("system", V)
    for _ in range(2):  # starting a running service succeeds too
        _, code, msg = call("system", V, "StartService", name="msiscsi")
        assert code == OK, msg
        assert get(call, "msiscsi").status == mod.RUNNING
    for _ in range(2):
        _, code, msg = call("system", V, "StopService", name="msiscsi")
        assert code == OK, msg
        assert get(call, "msiscsi").status == mod.STOPPED


def test_stop_with_running_dependents(call, pb):
    mod = pb("system", V)
    _, code, msg = call("system", V, "StopService", name="lanmanserver")
    assert code == grpc.StatusCode.FAILED_PRECONDITION
    assert "browser" in msg and "force" in msg
    assert get(call, "lanmanserver").status == mod.RUNNING
    _, code, msg = call("system", V, "StopService", name="lanmanserver", force=True)
    assert code == OK, msg
    assert get(call, "browser").status == mod.STOPPED
    assert get(call, "lanmanserver").status == mod.STOPPED


def test_refusals(call):
    _, code, msg = call("system", V, "StartService", name="remoteregistry")
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "disabled" in msg
    _, code, msg = call("system", V, "StartService", name="")
    assert code == grpc.StatusCode.INVALID_ARGUMENT and msg == "StartService: service name empty"
    _, code, msg = call("system", V, "StopService", name="..\\x")
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "contains" in msg
    _, code, msg = call("system", V, "StartService", name="nosuchsvc")
    assert code == grpc.StatusCode.NOT_FOUND and "nosuchsvc" in msg
