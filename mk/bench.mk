# Benchmarks under Wine.
#   make bench       floor + PathExists over gRPC + memory/size/start-up + a
#                    10k->100k load check; table on stdout, build/bench.json
#   make load-wine   memory and handle count between 100,000 and 1,000,000 calls
#   make bench BASE=<commit>
#                    also builds <commit>'s csi-proxy.exe in a scratch worktree
#                    (build/bench-base/) and runs the real-client rows for both
#                    builds, alternating, with ours/base ratios
# The tools are test programs built with mingw; none is linked into the product.
# bench-goclient.exe is the real grpc-go client (test/bench/goclient): Debian's
# Go and grpc-go in GOPATH mode, cross-compiled offline, its messages generated
# by protoc-gen-go (golang-goprotobuf-dev) from api/filesystem/v1/api.proto.

BENCH_CFLAGS := -std=c11 -O2 $(WARN) -DUNICODE -D_UNICODE -D_WIN32_WINNT=0x0A00 \
                -D__USE_MINGW_ANSI_STDIO=1 -DNGHTTP2_STATICLIB -I. -I$(DEPS)/include
BENCH_TOOLS  := $(WIN)/bench-floor.exe $(WIN)/bench-grpc.exe $(WIN)/bench-mon.exe \
                $(WIN)/bench-sleep.exe $(WIN)/bench-hostops.exe $(WIN)/bench-goclient.exe \
                $(WIN)/bench-conns.exe

$(WIN)/bench/%.o: test/bench/%.c test/bench/bench_util.h test/bench/gbc.h $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(WINCC) $(BENCH_CFLAGS) -c $< -o $@

$(WIN)/bench-floor.exe: $(WIN)/bench/floor.o $(WIN)/bench/bench_util.o
	$(WINCC) -s -static -o $@ $^
$(WIN)/bench-grpc.exe: $(WIN)/bench/grpcbench.o $(WIN)/bench/gbc.o $(WIN)/bench/bench_util.o
	$(WINCC) -s -static -o $@ $^ -L$(DEPS)/lib -lnghttp2
$(WIN)/bench-mon.exe: $(WIN)/bench/mon.o $(WIN)/bench/bench_util.o
	$(WINCC) -s -static -o $@ $^ -lntdll
$(WIN)/bench-hostops.exe: $(WIN)/bench/hostops.o $(WIN)/bench/bench_util.o
	$(WINCC) -s -static -o $@ $^
# idle connections opened as go-winio opens them, and refused connects
# (test/wine/transport.sh)
$(WIN)/bench-conns.exe: $(WIN)/bench/conns.o $(WIN)/bench/gbc.o $(WIN)/bench/bench_util.o
	$(WINCC) -s -static -o $@ $^ -L$(DEPS)/lib -lnghttp2
$(WIN)/bench-sleep.exe: $(WIN)/bench/sleep.o
	$(WINCC) -s -static -o $@ $^

GO_BENCH_DIR := $(CURDIR)/$(B)/go
GO_BENCH_ENV := GOPATH=$(GO_BENCH_DIR):/usr/share/gocode GO111MODULE=off GOFLAGS= GOPROXY=off \
                GOOS=windows GOARCH=amd64 CGO_ENABLED=0 GOCACHE=$(GO_BENCH_DIR)/cache
$(B)/go/src/csibench/fsv1/api.pb.go: api/filesystem/v1/api.proto | $(TOOLS_STAMP)
	@mkdir -p $(dir $@)
	protoc -I api/filesystem/v1 --go_out=plugins=grpc:$(dir $@) $<
$(WIN)/bench-goclient.exe: $(wildcard test/bench/goclient/*.go) $(B)/go/src/csibench/fsv1/api.pb.go
	@mkdir -p $(dir $@)
	cd test/bench/goclient && $(GO_BENCH_ENV) go build -trimpath -ldflags=-s -o $(CURDIR)/$@ .

.PHONY: bench load-wine bench-tools
bench-tools: $(BENCH_TOOLS)

bench: everything $(BENCH_TOOLS)
	BASE='$(BASE)' bash scripts/bench.sh bench

load-wine: everything $(BENCH_TOOLS)
	bash scripts/bench.sh load
