# health-probe.exe: a stock gRPC health client for the wine suite, in the
# manner of grpc-health-probe: grpc-go's generated health client from Debian
# (golang-google-grpc-dev, grpc/health/grpc_health_v1) over a named pipe,
# built as bench-goclient.exe is (GOPATH mode, offline; mk/bench.mk), with
# that client's pipe dialer copied next to it.
HEALTH_PROBE_DIR := $(B)/go/src/healthprobe
$(WIN)/health-probe.exe: test/wine/healthprobe/main.go test/bench/goclient/pipe_windows.go | $(TOOLS_STAMP)
	@mkdir -p $(HEALTH_PROBE_DIR) $(dir $@)
	cp test/wine/healthprobe/main.go test/bench/goclient/pipe_windows.go $(HEALTH_PROBE_DIR)/
	cd $(HEALTH_PROBE_DIR) && $(GO_BENCH_ENV) go build -trimpath -ldflags=-s -o $(CURDIR)/$@ .
everything: $(WIN)/health-probe.exe
